/*
 * test_rnnt.c - the RNN-T builder (src/models/rnnt.c) and entry (src/harness/bench_rnnt.c):
 * parameter counts against a hand count (encoder 42,967,040 = 5,185,536 + 8,396,800 +
 * 12,591,104 + 2 x 8,396,800, prediction 1,652,800, joint 703,517), the tiny graphs'
 * shapes, the entry's batched greedy decoding against a literal batch-1 port of
 * decoders.py _greedy_decode (no caching, prediction net every iteration), a batch of N
 * against N batches of 1, the payload widths and accuracy_eval.py's line, and bad input.
 */
#include <string.h>

#include "backend/backend.h"
#include "base/fileio.h"
#include "dataset/audio.h"
#include "dataset/librispeech.h"
#include "dataset/mel.h"
#include "harness/benchmark.h"
#include "harness/scratch.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "metrics/wer.h"
#include "models/rnnt.h"
#include "onnx/build.h"
#include "test.h"
#include "test_op_hist.h"

extern const ib_benchmark ib_bench_rnnt;

static ib_model *load_part(bool tiny, int part, uint64_t seed)
{
    ib_models_opts o = {.seed = seed, .tiny = tiny};
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_rnnt(&o, (enum ib_rnnt_part)part, &b, &err), &err);
    void *buf = NULL;
    size_t len = 0;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &buf, &len, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_memory(buf, len, NULL, &m, &err), &err);
    ib_free(buf);
    return m;
}

TEST_TIMEOUT(rnnt_model_parameter_count, 120)
{
    uint64_t want[3] = {42967040 + 3 /* StackTime's reshape shape */, 1652800, 703517};
    uint64_t lstm[3] = {5, 2, 0};
    for (int p = 0; p < 3; p++) {
        ib_model *m = load_part(false, p, 1);
        ib_model_stats st;
        ASSERT_OK(ib_model_get_stats(m, &st));
        ASSERT_UINT_EQ(st.param_count, want[p]);
        hist h = {0};
        ib_model_op_histogram(m, on_op, &h);
        ASSERT_UINT_EQ(count_of(&h, "LSTM"), lstm[p]);
        ib_model_destroy(m);
    }
    /* the reference's PyTorch count: ours minus the zero start row and the shape = 45.3 M
     * (benchmarks.md §1.5) */
    ASSERT_UINT_EQ(42967040 + (1652800 - 320) + 703517, 45323037);
    ib_err err;
    ib_build *b = NULL;
    ASSERT_STATUS(ib_models_rnnt(NULL, (enum ib_rnnt_part)4, &b, &err), IB_EINVAL);
}

/* ---- the entry on a tiny model and synthetic data --------------------------------------- */

typedef struct fixture {
    ib_model *m[4];
    ib_bench_io io[4];
    void *state;
    size_t total;
    ib_bench_sample *smp;
    ib_session *s[4];
    ib_bench_config cfg;
} fixture;

/* the backend of the fixture's sessions: cpu unless a test sets it before fixture_open */
static const char *g_backend = "cpu";

static void fixture_open(fixture *f, size_t n_utts, int64_t max_batch)
{
    memset(f, 0, sizeof *f);
    const ib_benchmark *e = &ib_bench_rnnt;
    ib_bench_config_defaults(&f->cfg);
    f->cfg.tiny = true;
    f->cfg.seed = 3;
    f->cfg.synth_samples = n_utts;
    ib_err err;
    for (size_t k = 0; k < 4; k++) {
        char path[64];
        snprintf(path, sizeof path, "part%zu.onnx", k);
        ASSERT_OK_ERR(e->build_model(&f->cfg, k, path, &err), &err);
        ASSERT_OK_ERR(ib_model_load_file(path, NULL, &f->m[k], &err), &err);
        ASSERT_OK_ERR(e->bind_model(&f->cfg, k, f->m[k], &f->io[k], &err), &err);
    }
    ASSERT_OK_ERR(e->synthesize(&f->cfg, "data", &err), &err);
    ASSERT_OK_ERR(e->open(&f->cfg, "data", f->io, &f->state, &f->total, &err), &err);
    ASSERT_UINT_EQ(f->total, n_utts);
    f->smp = ib_calloc(f->total, sizeof *f->smp);
    for (size_t i = 0; i < f->total; i++)
        ASSERT_OK_ERR(e->load_sample(f->state, i, &f->smp[i], &err), &err);
    for (size_t k = 0; k < 4; k++) {
        ib_session_options so;
        ib_session_options_defaults(&so);
        so.backend = g_backend;
        so.threads = 1;
        so.max_batch = max_batch;
        so.keep_inputs = f->io[k].keep_inputs; /* as the harness's workers do */
        ASSERT_OK_ERR(ib_session_create(f->m[k], &so, &f->s[k], &err), &err);
    }
}

static void fixture_close(fixture *f)
{
    for (size_t i = 0; i < f->total; i++)
        ib_free(f->smp[i].mem);
    ib_free(f->smp);
    ib_bench_rnnt.close(f->state);
    for (size_t k = 0; k < 4; k++) {
        ib_session_destroy(f->s[k]);
        ib_model_destroy(f->m[k]);
    }
}

/* Run the entry's infer on samples idx[0..n-1]; payload i into pay[i] (cap bytes each). */
static void run_infer(fixture *f, const size_t *idx, size_t n, uint8_t *pay, size_t cap,
                      size_t *sizes)
{
    const ib_bench_sample *sp[16];
    ib_lg_sample_index li[16];
    ib_bench_payload out[16];
    ib_bench_scratch scr;
    memset(&scr, 0, sizeof scr);
    for (size_t i = 0; i < n; i++) {
        sp[i] = &f->smp[idx[i]];
        li[i] = idx[i];
        out[i] = (ib_bench_payload){pay + i * cap, cap, 0};
    }
    ib_bench_batch b;
    memset(&b, 0, sizeof b);
    b.count = n;
    b.samples = sp;
    b.indices = li;
    b.scratch = &scr;
    ib_err err;
    ASSERT_OK_ERR(ib_bench_rnnt.infer(f->state, &f->cfg, f->s, &b, out, &err), &err);
    for (size_t i = 0; i < n; i++)
        sizes[i] = out[i].size;
    ib_bench_scratch_free(&scr);
}

/* decoders.py _greedy_decode for one utterance, literally: batch 1, the prediction net run
 * on every iteration, hidden = hidden_prime only on a non-blank symbol. */
static size_t naive_decode(fixture *f, const ib_bench_sample *smp, int64_t *tokens)
{
    ib_err err;
    size_t n = (size_t)smp->aux, fr = ib_mel_frames(n), T = (fr + 1) / 2 * 2;
    ib_mel *mel = NULL;
    ASSERT_OK(ib_mel_create(&mel, &err));
    float *feat = ib_calloc(T * IB_MEL_DIM, sizeof *feat), *mask = ib_calloc(T, sizeof *mask);
    float *scr = ib_malloc(ib_mel_scratch_floats(n) * sizeof *scr);
    ASSERT_OK(ib_mel_compute(mel, smp->t[0].data, n, feat, IB_MEL_DIM, scr, &err));
    for (size_t t = 0; t < fr; t++)
        mask[t] = 1;
    int64_t He = f->io[0].params[0], Hp = f->io[1].params[0], L = f->io[1].params[1];
    float *enc = ib_malloc((size_t)(T / 2 * He) * sizeof *enc);
    ib_tensor_view ein[2] = {
        {IB_RNNT_ENC_INPUT, {IB_DTYPE_FLOAT32, 3, {1, (int64_t)T, IB_MEL_DIM}}, feat, 0},
        {IB_RNNT_ENC_MASK, {IB_DTYPE_FLOAT32, 3, {1, (int64_t)T, 1}}, mask, 0}};
    ib_tensor_view eo = {IB_RNNT_ENC_OUTPUT, {0}, enc, (size_t)(T / 2 * He) * 4};
    ASSERT_OK_ERR(ib_session_run(f->s[0], ein, 2, &eo, 1, &err), &err);
    ASSERT_INT_EQ(eo.desc.dims[0], (int64_t)T / 2);
    size_t hsz = (size_t)(L * Hp);
    float *h = ib_calloc(hsz, 4), *c = ib_calloc(hsz, 4), *h2 = ib_malloc(hsz * 4),
          *c2 = ib_malloc(hsz * 4), *g = ib_malloc((size_t)Hp * 4), logit[IB_RNNT_CLASSES];
    size_t nt = 0;
    for (size_t t = 0; t < (fr + 1) / 2; t++) {
        int symbols = 0, not_blank = 1;
        while (not_blank && symbols < 30) {
            int64_t last = nt ? tokens[nt - 1] : IB_RNNT_SOS;
            ib_tensor_view pin[3] = {
                {IB_RNNT_PRED_TOKEN, {IB_DTYPE_INT64, 2, {1, 1}}, &last, 0},
                {IB_RNNT_PRED_H_IN, {IB_DTYPE_FLOAT32, 3, {1, L, Hp}}, h, 0},
                {IB_RNNT_PRED_C_IN, {IB_DTYPE_FLOAT32, 3, {1, L, Hp}}, c, 0}};
            ib_tensor_view po[3] = {{IB_RNNT_PRED_G, {0}, g, (size_t)Hp * 4},
                                    {IB_RNNT_PRED_H_OUT, {0}, h2, hsz * 4},
                                    {IB_RNNT_PRED_C_OUT, {0}, c2, hsz * 4}};
            ASSERT_OK_ERR(ib_session_run(f->s[1], pin, 3, po, 3, &err), &err);
            ib_tensor_view jin[2] = {
                {IB_RNNT_JOINT_F, {IB_DTYPE_FLOAT32, 2, {1, He}}, enc + t * (size_t)He, 0},
                {IB_RNNT_JOINT_G, {IB_DTYPE_FLOAT32, 2, {1, Hp}}, g, 0}};
            ib_tensor_view jo = {IB_RNNT_JOINT_LOGITS, {0}, logit, sizeof logit};
            ASSERT_OK_ERR(ib_session_run(f->s[2], jin, 2, &jo, 1, &err), &err);
            int k = 0;
            for (int j = 1; j < IB_RNNT_CLASSES; j++)
                if (logit[j] > logit[k])
                    k = j;
            if (k == IB_RNNT_BLANK) {
                not_blank = 0;
            } else {
                tokens[nt++] = k;
                memcpy(h, h2, hsz * 4);
                memcpy(c, c2, hsz * 4);
            }
            symbols++;
        }
    }
    ib_free(feat);
    ib_free(mask);
    ib_free(scr);
    ib_free(enc);
    ib_free(h);
    ib_free(c);
    ib_free(h2);
    ib_free(c2);
    ib_free(g);
    ib_mel_destroy(mel);
    return nt;
}

static int64_t id_at(const uint8_t *p, size_t k)
{
    int64_t v;
    memcpy(&v, p + 8 * k, 8);
    return v;
}

TEST_TIMEOUT(rnnt_batched_decoding_equals_single, 120)
{
    fixture f;
    fixture_open(&f, 5, 8);
    size_t cap = ib_bench_rnnt.payload_max_bytes(f.state, &f.cfg);
    ASSERT_UINT_EQ(cap, 30 * 250 * 8);
    uint8_t *batch = ib_malloc(5 * cap), *one = ib_malloc(cap);
    size_t bs[5], os[1], idx[5] = {0, 1, 2, 3, 4};
    run_infer(&f, idx, 5, batch, cap, bs);
    size_t total_tokens = 0, total_steps = 0;
    int64_t *ref = ib_malloc(cap);
    for (size_t i = 0; i < 5; i++) {
        /* batch of 1 gives the same bytes */
        run_infer(&f, &idx[i], 1, one, cap, os);
        ASSERT_UINT_EQ(os[0], bs[i]);
        ASSERT_TRUE(memcmp(one, batch + i * cap, bs[i]) == 0);
        /* and the literal decoders.py loop gives the same tokens */
        size_t nt = naive_decode(&f, &f.smp[i], ref);
        ASSERT_UINT_EQ(nt * 8, bs[i]);
        for (size_t k = 0; k < nt; k++)
            ASSERT_INT_EQ(id_at(batch + i * cap, k), ref[k]);
        size_t steps = (ib_mel_frames((size_t)f.smp[i].aux) + 1) / 2;
        ASSERT_TRUE(nt <= 30 * steps);
        for (size_t k = 0; k < nt; k++)
            ASSERT_TRUE(id_at(batch + i * cap, k) >= 0 && id_at(batch + i * cap, k) < 28);
        total_tokens += nt;
        total_steps += steps;
    }
    /* random weights with the blank bias and encoder gain: symbols are emitted */
    fprintf(stderr, "%zu symbols over %zu encoder steps\n", total_tokens, total_steps);
    ASSERT_TRUE(total_tokens > 0);
    ASSERT_TRUE(total_tokens <= 30 * total_steps);
    /* a different order and a batch of 3 (another padded length) */
    size_t idx2[3] = {4, 0, 2};
    run_infer(&f, idx2, 3, batch, cap, bs);
    for (size_t i = 0; i < 3; i++) {
        run_infer(&f, &idx2[i], 1, one, cap, os);
        ASSERT_UINT_EQ(os[0], bs[i]);
        ASSERT_TRUE(memcmp(one, batch + i * cap, bs[i]) == 0);
    }
    ib_free(ref);
    ib_free(batch);
    ib_free(one);
    fixture_close(&f);
}

/* issue 25: the decoder-step graph with the encoder output kept and its token, state and
 * frame fed back in the session (ib_session_run_fed, the path a GPU takes) gives the classic
 * loop's tokens, batch by batch (all rows every step, each at its own frame, inactive ones
 * masked, against active rows packed frame by frame). */
TEST_TIMEOUT(rnnt_fed_decoder_equals_classic, 120)
{
    fixture f;
    fixture_open(&f, 5, 8);
    size_t cap = ib_bench_rnnt.payload_max_bytes(f.state, &f.cfg);
    uint8_t *classic = ib_malloc(5 * cap), *fed = ib_malloc(5 * cap);
    size_t cs[5], fs[5], idx[5] = {0, 1, 2, 3, 4}, idx2[3] = {4, 0, 2};
    size_t total = 0, steps = 0;
    for (int pass = 0; pass < 2; pass++) {
        const size_t *ix = pass ? idx2 : idx;
        size_t n = pass ? 3 : 5;
        /* the step session counts its runs: none on the classic path, some on the fed one */
        ASSERT_OK(ib_session_set_profiling(f.s[IB_RNNT_STEP], true));
        f.cfg.variant = NULL;
        run_infer(&f, ix, n, classic, cap, cs);
        ib_profile pr;
        ASSERT_OK(ib_session_profile(f.s[IB_RNNT_STEP], &pr, NULL));
        ASSERT_UINT_EQ(pr.runs, 0);
        ib_profile_free(&pr);
        f.cfg.variant = "device-decoder";
        run_infer(&f, ix, n, fed, cap, fs);
        ASSERT_OK(ib_session_profile(f.s[IB_RNNT_STEP], &pr, NULL));
        /* rows never wait for each other: a row takes a step per symbol and per blank (at
         * most one a frame), the batch as many as its longest row, not a frame's most
         * symbols summed over the frames; a run takes K of them */
        size_t most = 0, least = 0, K = IB_RNNT_STEP_UNROLL;
        for (size_t i = 0; i < n; i++) {
            size_t frames = (ib_mel_frames((size_t)f.smp[ix[i]].aux) + 1) / 2;
            most = IB_MAX(most, frames + fs[i] / 8);
            least = IB_MAX(least, fs[i] / 8 + 1);
        }
        ASSERT_UINT_LE(pr.runs, (most + K - 1) / K);
        ASSERT_UINT_GE(pr.runs, (least + K - 1) / K);
        steps += pr.runs * K;
        ib_profile_free(&pr);
        ASSERT_OK(ib_session_set_profiling(f.s[IB_RNNT_STEP], false));
        for (size_t i = 0; i < n; i++) {
            ASSERT_UINT_EQ(fs[i], cs[i]);
            ASSERT_TRUE(memcmp(fed + i * cap, classic + i * cap, cs[i]) == 0);
            total += cs[i] / 8;
        }
    }
    fprintf(stderr, "%zu symbols, the same on both paths; %zu decoder steps\n", total, steps);
    ASSERT_TRUE(total > 0);
    f.cfg.variant = NULL;
    ib_free(classic);
    ib_free(fed);
    fixture_close(&f);
}

/* issue 25 on a GPU (named cuda_ so that tools/gpu-check.sh runs it): the entry's sessions on
 * cuda decode with the step graph (its default there) and give the tokens of the cpu's classic
 * loop. fp32 both sides, but cuda's products round differently: a random-weight model's
 * near-tied logits may flip a symbol, so one of the five utterances may differ, and none may
 * lose or gain more than a tenth of its symbols.
 * Not yet run on a GPU. */
TEST_TIMEOUT(cuda_rnnt_decoder_equals_cpu, 120)
{
    const char *why = NULL;
    if (!ib_backend_find("cuda"))
        TEST_SKIP("built without CUDA");
    if (!ib_backend_available("cuda", &why))
        TEST_SKIP(why);
    fixture cpu, gpu;
    fixture_open(&cpu, 5, 8);
    g_backend = "cuda";
    fixture_open(&gpu, 5, 8);
    g_backend = "cpu";
    size_t cap = ib_bench_rnnt.payload_max_bytes(cpu.state, &cpu.cfg);
    uint8_t *want = ib_malloc(5 * cap), *got = ib_malloc(5 * cap);
    size_t ws[5], gs[5], idx[5] = {0, 1, 2, 3, 4};
    run_infer(&cpu, idx, 5, want, cap, ws);
    ASSERT_OK(ib_session_set_profiling(gpu.s[IB_RNNT_STEP], true));
    run_infer(&gpu, idx, 5, got, cap, gs);
    ib_profile pr;
    ASSERT_OK(ib_session_profile(gpu.s[IB_RNNT_STEP], &pr, NULL));
    ASSERT_TRUE(pr.runs > 0); /* the step graph decoded */
    ib_profile_free(&pr);
    int same = 0;
    for (size_t i = 0; i < 5; i++) {
        same += gs[i] == ws[i] && memcmp(got + i * cap, want + i * cap, ws[i]) == 0;
        ASSERT_TRUE(gs[i] * 10 >= ws[i] * 9 && gs[i] * 10 <= ws[i] * 11);
    }
    printf("# cuda step decoder: %d of 5 utterances as the cpu's classic loop\n", same);
    ASSERT_INT_GE(same, 4);
    ib_free(want);
    ib_free(got);
    fixture_close(&cpu);
    fixture_close(&gpu);
}

/* --precision int8 (benchmark.h calib_inputs): a waveform is not what the encoder takes, so
 * the entry makes each calibration sample's features and mask, as the timed path makes them
 * for a batch of one; an int8 encoder calibrated on them runs and stays near fp32. */
TEST_TIMEOUT(rnnt_calibration_inputs_are_the_encoders, 120)
{
    fixture f;
    fixture_open(&f, 3, 4);
    ib_err err;
    ib_mel *mel = NULL;
    ASSERT_OK(ib_mel_create(&mel, &err));
    ib_tensor_view cal[3][2];
    void *mem[3];
    for (size_t i = 0; i < 3; i++) {
        ASSERT_NOT_NULL(ib_bench_rnnt.calib_inputs);
        ASSERT_OK_ERR(ib_bench_rnnt.calib_inputs(f.state, &f.cfg, &f.smp[i], cal[i], &mem[i],
                                                 &err),
                      &err);
        size_t n = (size_t)f.smp[i].aux, fr = ib_mel_frames(n);
        const ib_tensor_view *x = &cal[i][0], *m = &cal[i][1];
        ASSERT_STR_EQ(x->name, IB_RNNT_ENC_INPUT);
        ASSERT_STR_EQ(m->name, IB_RNNT_ENC_MASK);
        int64_t T = x->desc.dims[1];
        ASSERT_INT_EQ(x->desc.dims[0], 1);
        ASSERT_INT_EQ(x->desc.dims[2], IB_MEL_DIM);
        ASSERT_TRUE(T >= (int64_t)fr && T % 32 == 0); /* the timed path's buckets */
        ASSERT_INT_EQ(m->desc.dims[1], T);
        float *want = ib_calloc((size_t)T * IB_MEL_DIM, sizeof *want);
        float *scr = ib_malloc(ib_mel_scratch_floats(n) * sizeof *scr);
        ASSERT_OK(ib_mel_compute(mel, f.smp[i].t[0].data, n, want,
                                 IB_MEL_DIM, scr, &err));
        ASSERT_TRUE(memcmp(want, x->data, (size_t)T * IB_MEL_DIM * sizeof *want) == 0);
        const float *mk = m->data;
        for (int64_t t = 0; t < T; t++)
            ASSERT_DBL_EQ(mk[t], t < (int64_t)fr ? 1.0 : 0.0);
        ib_free(want);
        ib_free(scr);
    }
    /* the encoder at int8, calibrated on the three, against the fixture's at fp32 (the
     * encoder is LSTMs, which neither the cpu nor cuda quantise yet: today the same) */
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.threads = 1;
    so.precision = IB_PRECISION_INT8;
    ASSERT_STATUS(ib_session_create(f.m[IB_RNNT_ENCODER], &so, &(ib_session *){NULL}, &err),
                  IB_EINVAL); /* no calibration inputs */
    ib_tensor_view flat[6];
    for (size_t i = 0; i < 3; i++)
        memcpy(&flat[2 * i], cal[i], sizeof cal[i]);
    so.calib_inputs = flat;
    so.calib_batches = 3;
    so.calib_input_count = 2;
    ib_session *q = NULL;
    ASSERT_OK_ERR(ib_session_create(f.m[IB_RNNT_ENCODER], &so, &q, &err), &err);
    int64_t T = cal[0][0].desc.dims[1], He = f.io[0].params[0];
    size_t ne = (size_t)(T / 2 * He);
    float *y8 = ib_malloc(ne * 4), *y32 = ib_malloc(ne * 4);
    ib_tensor_view o8 = {IB_RNNT_ENC_OUTPUT, {0}, y8, ne * 4}, o32 = {IB_RNNT_ENC_OUTPUT, {0},
                                                                     y32, ne * 4};
    ASSERT_OK_ERR(ib_session_run(q, cal[0], 2, &o8, 1, &err), &err);
    ASSERT_OK_ERR(ib_session_run(f.s[IB_RNNT_ENCODER], cal[0], 2, &o32, 1, &err), &err);
    double num = 0, den = 0;
    for (size_t k = 0; k < ne; k++) {
        double d = (double)y8[k] - (double)y32[k];
        num += d * d;
        den += (double)y32[k] * (double)y32[k];
    }
    fprintf(stderr, "encoder int8 vs fp32: NMSE %.3g over %zu values\n", num / den, ne);
    ASSERT_TRUE(den > 0 && num / den < 0.05);
    /* and the session says so (backend ABI 10): its five LSTMs compute at fp32, none at int8 */
    ib_session_precision_use u;
    ib_session_precision_use_get(q, &u);
    ASSERT_INT_EQ(u.precision, IB_PRECISION_INT8);
    ASSERT_UINT_EQ(u.products, 5);
    ASSERT_UINT_EQ(u.at_precision, 0);
    ASSERT_STR_EQ(u.others, "LSTM x5 at fp32");
    ib_free(y8);
    ib_free(y32);
    ib_session_destroy(q);
    for (size_t i = 0; i < 3; i++)
        ib_free(mem[i]);
    ib_mel_destroy(mel);
    fixture_close(&f);
}

TEST_TIMEOUT(rnnt_payload_dtypes_and_accuracy_line, 60)
{
    fixture f;
    fixture_open(&f, 3, 2);
    ib_librispeech *ds = NULL;
    ib_err err;
    ASSERT_OK(ib_librispeech_open("data", 0, &ds, &err));
    /* payloads that spell the references exactly, in int64 and int8: WER 0 */
    enum ib_dtype dts[2] = {IB_DTYPE_INT64, IB_DTYPE_INT8};
    for (int d = 0; d < 2; d++) {
        f.cfg.payload_dtype = dts[d];
        size_t w = ib_dtype_size(dts[d]);
        uint8_t buf[3][512];
        ib_bench_acc_entry e[4];
        for (size_t i = 0; i < 3; i++) {
            const char *t = ds->utt[i].transcript;
            size_t n = strlen(t);
            memset(buf[i], 0, sizeof buf[i]);
            for (size_t k = 0; k < n; k++)
                buf[i][k * w] = (uint8_t)(strchr(IB_TRANSCRIPT_LABELS, t[k]) - IB_TRANSCRIPT_LABELS);
            e[i] = (ib_bench_acc_entry){i, buf[i], n * w};
        }
        ib_strbuf text;
        ib_strbuf_init(&text);
        double v = 0;
        ASSERT_OK_ERR(ib_bench_rnnt.accuracy(f.state, &f.cfg, e, 3, &text, &v, &err), &err);
        ASSERT_STR_EQ(text.data, "Word Error Rate: 0.0%, accuracy=100.0%\n");
        ASSERT_DBL_EQ(v, 100.0);
        /* a duplicate entry with an empty hypothesis counts again (no de-duplication):
         * errors = words of utterance 0 */
        e[3] = (ib_bench_acc_entry){0, buf[0], 0};
        size_t d0 = 0, w0 = 0, wall = 0;
        ASSERT_OK(ib_wer_distance("", ds->utt[0].transcript, &d0, &w0));
        for (size_t i = 0; i < 3; i++) {
            size_t dd, ww;
            ASSERT_OK(ib_wer_distance("", ds->utt[i].transcript, &dd, &ww));
            wall += ww;
        }
        ib_strbuf_reset(&text);
        ASSERT_OK(ib_bench_rnnt.accuracy(f.state, &f.cfg, e, 4, &text, &v, &err));
        char want[160];
        ib_wer_line((double)w0 / (double)(wall + w0), want, sizeof want);
        ASSERT_STR_EQ(text.data, want);
        /* bad entries: a partial id, an unknown qsl_idx, the blank id */
        if (w > 1) {
            ib_bench_acc_entry bad = {0, buf[0], w + 1};
            ASSERT_STATUS(ib_bench_rnnt.accuracy(f.state, &f.cfg, &bad, 1, &text, &v, &err),
                          IB_EFORMAT);
        }
        ib_bench_acc_entry far = {7, buf[0], w};
        ASSERT_STATUS(ib_bench_rnnt.accuracy(f.state, &f.cfg, &far, 1, &text, &v, &err),
                      IB_EFORMAT);
        uint8_t blank[8] = {28};
        ib_bench_acc_entry bl = {0, blank, w};
        ASSERT_STATUS(ib_bench_rnnt.accuracy(f.state, &f.cfg, &bl, 1, &text, &v, &err),
                      IB_EFORMAT);
        ASSERT_STR_CONTAINS(err.msg, "id 28");
        ib_strbuf_deinit(&text);
    }
    /* the real payload in int16: the same ids as int64, two bytes each */
    size_t cap = ib_bench_rnnt.payload_max_bytes(f.state, &f.cfg);
    uint8_t *p64 = ib_malloc(cap), *p16 = ib_malloc(cap);
    size_t s64, s16, idx = 1;
    f.cfg.payload_dtype = IB_DTYPE_INT64;
    run_infer(&f, &idx, 1, p64, cap, &s64);
    f.cfg.payload_dtype = IB_DTYPE_INT16;
    run_infer(&f, &idx, 1, p16, cap, &s16);
    ASSERT_UINT_EQ(s16 * 4, s64);
    for (size_t k = 0; k < s16 / 2; k++)
        ASSERT_INT_EQ(p16[2 * k] | (p16[2 * k + 1] << 8), id_at(p64, k));
    ib_free(p64);
    ib_free(p16);
    ib_librispeech_free(ds);
    fixture_close(&f);
}

TEST(rnnt_load_refuses_audio_longer_than_listed)
{
    /* a manifest that lists 1 s for a 16 s file: the filter keeps it, loading refuses it */
    ib_err err;
    ASSERT_OK(ib_mkdirs("m", &err));
    int16_t *pcm = ib_calloc(256000, sizeof *pcm);
    ASSERT_OK(ib_audio_write("m/long.wav", IB_AUDIO_WAV, 16000, pcm, 256000, &err));
    ASSERT_OK(ib_audio_write("m/short.wav", IB_AUDIO_WAV, 16000, pcm, 300, &err));
    ib_free(pcm);
    const char *json = "[{\"files\": [{\"fname\": \"long.wav\", \"speed\": 1}], "
                       "\"original_duration\": 1.0, \"transcript\": \"a\"}, {\"files\": "
                       "[{\"fname\": \"short.wav\", \"speed\": 1}], \"original_duration\": "
                       "0.02, \"transcript\": \"b\"}]";
    ASSERT_OK(ib_file_write_all("m/dev-clean-wav.json", json, strlen(json), &err));
    ib_model *m[3];
    ib_bench_io io[3];
    ib_bench_config cfg;
    ib_bench_config_defaults(&cfg);
    cfg.tiny = true;
    for (int k = 0; k < 3; k++) {
        m[k] = load_part(true, k, 1);
        ASSERT_OK(ib_bench_rnnt.bind_model(&cfg, (size_t)k, m[k], &io[k], &err));
    }
    void *st = NULL;
    size_t total = 0;
    ASSERT_OK_ERR(ib_bench_rnnt.open(&cfg, "m", io, &st, &total, &err), &err);
    ASSERT_UINT_EQ(total, 2);
    ib_bench_sample smp;
    ASSERT_STATUS(ib_bench_rnnt.load_sample(st, 0, &smp, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "longer than the 15 s");
    ASSERT_STATUS(ib_bench_rnnt.load_sample(st, 1, &smp, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "fewer than the 481");
    ib_bench_rnnt.close(st);
    for (int k = 0; k < 3; k++)
        ib_model_destroy(m[k]);
}

TEST(rnnt_bind_errors)
{
    ib_model *joint = load_part(true, 2, 1), *enc = load_part(true, 0, 1);
    ib_bench_io io;
    ib_bench_config cfg;
    ib_bench_config_defaults(&cfg);
    ib_err err;
    ASSERT_STATUS(ib_bench_rnnt.bind_model(&cfg, 0, joint, &io, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "rnnt encoder: expected");
    ASSERT_STATUS(ib_bench_rnnt.bind_model(&cfg, 1, enc, &io, &err), IB_EINVAL);
    ASSERT_STATUS(ib_bench_rnnt.bind_model(&cfg, 2, enc, &io, &err), IB_EINVAL);
    ASSERT_OK(ib_bench_rnnt.bind_model(&cfg, 0, enc, &io, &err));
    ASSERT_INT_EQ(io.params[0], 256);
    ASSERT_OK(ib_bench_rnnt.bind_model(&cfg, 2, joint, &io, &err));
    ASSERT_INT_EQ(io.params[0], 256);
    ASSERT_INT_EQ(io.params[1], 128);
    /* a joint whose widths do not match the encoder's is refused at open */
    ib_bench_io ios[3];
    ASSERT_OK(ib_bench_rnnt.bind_model(&cfg, 0, enc, &ios[0], &err));
    ios[1] = io;
    ios[1].params[0] = 64;
    ios[1].params[1] = 2;
    ios[2] = io;
    void *st = NULL;
    size_t total = 0;
    ASSERT_STATUS(ib_bench_rnnt.open(&cfg, ".", ios, &st, &total, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "the joint takes");
    ib_model_destroy(joint);
    ib_model_destroy(enc);
}
