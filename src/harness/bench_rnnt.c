/*
 * bench_rnnt.c - the rnnt entry (benchmarks.md §1.5): RNN-T (encoder, prediction and joint
 * as three ONNX models, src/models/rnnt.c, plus the decoder step joining the last two for the
 * device path: decode_fed) with seeded random weights, LibriSpeech dev-clean
 * (manifest or layout, <= 15 s; src/dataset/librispeech.c) or a synthetic set, and the timed
 * path the rules ask for (§1.0: "RNN-T feature extraction is part of the timed model"):
 * features (src/dataset/mel.c), the encoder over the padded batch, then the reference's
 * greedy decoding (pytorch/decoders.py ScriptGreedyDecoder: at most 30 symbols per encoder
 * step) for every utterance of the batch at once. The payload is the token ids as int64
 * (pytorch_SUT.py array.array("q", transcript)) or a narrower int (accuracy_eval.py
 * --output_dtype), and accuracy.txt is accuracy_eval.py's line.
 *
 * Batching never changes a result: an utterance's features use its own samples only, the
 * encoder LSTMs run forward in time so padding frames after an utterance's end cannot reach
 * its outputs (and the mask zeroes them before StackTime, as the reference's own zero
 * padding), and every decoder row is computed from that utterance's own state. Only the
 * batch size of the GEMMs differs, which tests check gives the same tokens.
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "dataset/audio.h"
#include "dataset/librispeech.h"
#include "dataset/mel.h"
#include "harness/benchmark.h"
#include "metrics/wer.h"
#include "models/rnnt.h"
#include "onnx/build.h"

#define RT_MAX_SYMBOLS IB_RNNT_MAX_SYMBOLS /* decoders.py max_symbols_per_step */
/* the longest utterance the filter keeps (15 s): 500 frames -> 250 encoder steps */
#define RT_MAX_ENC_STEPS 250

typedef struct rt_state {
    ib_librispeech *ds;
    ib_mel *mel;
    int64_t enc_h, pred_h, pred_l;
} rt_state;

enum { SL_FEAT, SL_MASK, SL_MEL, SL_ENC, SL_TOK, SL_H, SL_C, SL_HO, SL_CO, SL_G, SL_GC, SL_LOG,
       SL_UTT, SL_OUTS, SL_ROWS, SL_CMP };

static int rt_build(const ib_bench_config *cfg, size_t k, const char *path, ib_err *err)
{
    ib_models_opts o = {.seed = cfg->seed, .tiny = cfg->tiny};
    ib_build *b = NULL;
    int rc = ib_models_rnnt(&o, (enum ib_rnnt_part)k, &b, err);
    return ib_bench_write_model(rc, b, path, err);
}

/* Find a graph input/output by name with a dtype and rank; its desc in *d. */
static bool find_io(const ib_model *m, bool input, const char *name, enum ib_dtype t, int rank,
                    ib_tensor_desc *d)
{
    size_t n = input ? ib_model_input_count(m) : ib_model_output_count(m);
    for (size_t i = 0; i < n; i++) {
        const char *nm = NULL;
        if ((input ? ib_model_input(m, i, &nm, d) : ib_model_output(m, i, &nm, d)) == IB_OK &&
            strcmp(nm, name) == 0)
            return d->dtype == t && d->ndim == rank;
    }
    return false;
}

static void add_in(ib_bench_io *io, const char *name, const ib_tensor_desc *d)
{
    ib_bench_input *in = &io->inputs[io->n_inputs++];
    snprintf(in->name, IB_BENCH_NAME_MAX, "%s", name);
    in->desc = *d;
    in->batched = false; /* the entry's infer feeds them */
}

static void add_out(ib_bench_io *io, const char *name, enum ib_dtype t, size_t bytes)
{
    ib_bench_output *o = &io->outputs[io->n_outputs++];
    snprintf(o->name, IB_BENCH_NAME_MAX, "%s", name);
    o->dtype = t;
    o->max_bytes_per_sample = bytes;
}

static int rt_bind(const ib_bench_config *cfg, size_t k, const ib_model *m, ib_bench_io *io,
                   ib_err *err)
{
    (void)cfg;
    memset(io, 0, sizeof *io);
    ib_tensor_desc a, b, c, o1, o2, o3;
    if (k == IB_RNNT_ENCODER) {
        if (!find_io(m, true, IB_RNNT_ENC_INPUT, IB_DTYPE_FLOAT32, 3, &a) ||
            a.dims[2] != IB_MEL_DIM || !find_io(m, true, IB_RNNT_ENC_MASK, IB_DTYPE_FLOAT32, 3, &b) ||
            !find_io(m, false, IB_RNNT_ENC_OUTPUT, IB_DTYPE_FLOAT32, 3, &o1) || o1.dims[2] <= 0)
            return ib_err_set(err, IB_EINVAL,
                              "rnnt encoder: expected inputs %s float32 [N,T,240], %s float32 "
                              "[N,T,1] and output %s float32 [T/2,N,H] with H fixed",
                              IB_RNNT_ENC_INPUT, IB_RNNT_ENC_MASK, IB_RNNT_ENC_OUTPUT);
        add_in(io, IB_RNNT_ENC_INPUT, &a);
        add_in(io, IB_RNNT_ENC_MASK, &b);
        add_out(io, IB_RNNT_ENC_OUTPUT, IB_DTYPE_FLOAT32,
                (size_t)o1.dims[2] * RT_MAX_ENC_STEPS * sizeof(float));
        io->params[0] = o1.dims[2];
        snprintf(io->note, sizeof io->note,
                 "RNN-T as 4 models: encoder %s/%s -> %s (H %lld), prediction, joint, decoder step",
                 IB_RNNT_ENC_INPUT, IB_RNNT_ENC_MASK, IB_RNNT_ENC_OUTPUT, (long long)o1.dims[2]);
    } else if (k == IB_RNNT_PREDICTION) {
        if (!find_io(m, true, IB_RNNT_PRED_TOKEN, IB_DTYPE_INT64, 2, &a) ||
            !find_io(m, true, IB_RNNT_PRED_H_IN, IB_DTYPE_FLOAT32, 3, &b) ||
            !find_io(m, true, IB_RNNT_PRED_C_IN, IB_DTYPE_FLOAT32, 3, &c) || b.dims[1] <= 0 ||
            b.dims[2] <= 0 || !find_io(m, false, IB_RNNT_PRED_G, IB_DTYPE_FLOAT32, 2, &o1) ||
            !find_io(m, false, IB_RNNT_PRED_H_OUT, IB_DTYPE_FLOAT32, 3, &o2) ||
            !find_io(m, false, IB_RNNT_PRED_C_OUT, IB_DTYPE_FLOAT32, 3, &o3))
            return ib_err_set(err, IB_EINVAL,
                              "rnnt prediction: expected inputs %s int64 [N,1], %s and %s "
                              "float32 [N,L,H] (L, H fixed) and outputs %s [N,H], %s, %s",
                              IB_RNNT_PRED_TOKEN, IB_RNNT_PRED_H_IN, IB_RNNT_PRED_C_IN,
                              IB_RNNT_PRED_G, IB_RNNT_PRED_H_OUT, IB_RNNT_PRED_C_OUT);
        add_in(io, IB_RNNT_PRED_TOKEN, &a);
        add_in(io, IB_RNNT_PRED_H_IN, &b);
        add_in(io, IB_RNNT_PRED_C_IN, &c);
        size_t hb = (size_t)b.dims[2] * sizeof(float);
        add_out(io, IB_RNNT_PRED_G, IB_DTYPE_FLOAT32, hb);
        add_out(io, IB_RNNT_PRED_H_OUT, IB_DTYPE_FLOAT32, hb * (size_t)b.dims[1]);
        add_out(io, IB_RNNT_PRED_C_OUT, IB_DTYPE_FLOAT32, hb * (size_t)b.dims[1]);
        io->params[0] = b.dims[2];
        io->params[1] = b.dims[1];
    } else if (k == IB_RNNT_JOINT) {
        if (!find_io(m, true, IB_RNNT_JOINT_F, IB_DTYPE_FLOAT32, 2, &a) || a.dims[1] <= 0 ||
            !find_io(m, true, IB_RNNT_JOINT_G, IB_DTYPE_FLOAT32, 2, &b) || b.dims[1] <= 0 ||
            !find_io(m, false, IB_RNNT_JOINT_LOGITS, IB_DTYPE_FLOAT32, 2, &o1) ||
            o1.dims[1] != IB_RNNT_CLASSES)
            return ib_err_set(err, IB_EINVAL,
                              "rnnt joint: expected inputs %s float32 [N,H_enc], %s float32 "
                              "[N,H_pred] and output %s float32 [N,29]",
                              IB_RNNT_JOINT_F, IB_RNNT_JOINT_G, IB_RNNT_JOINT_LOGITS);
        add_in(io, IB_RNNT_JOINT_F, &a);
        add_in(io, IB_RNNT_JOINT_G, &b);
        add_out(io, IB_RNNT_JOINT_LOGITS, IB_DTYPE_FLOAT32, IB_RNNT_CLASSES * sizeof(float));
        io->params[0] = a.dims[1];
        io->params[1] = b.dims[1];
    } else if (k == IB_RNNT_STEP) {
        static const char *const ins[] = {IB_RNNT_STEP_TOKEN, IB_RNNT_STEP_H,   IB_RNNT_STEP_C,
                                          IB_RNNT_STEP_ENC,   IB_RNNT_STEP_POS, IB_RNNT_STEP_END,
                                          IB_RNNT_STEP_COUNT};
        static const char *const outs[] = {IB_RNNT_STEP_SYMBOL,     IB_RNNT_STEP_EMIT,
                                           IB_RNNT_STEP_H_NEXT,     IB_RNNT_STEP_C_NEXT,
                                           IB_RNNT_STEP_TOKEN_NEXT, IB_RNNT_STEP_POS_NEXT,
                                           IB_RNNT_STEP_COUNT_NEXT};
        static const enum ib_dtype in_t[] = {IB_DTYPE_INT64,   IB_DTYPE_FLOAT32, IB_DTYPE_FLOAT32,
                                             IB_DTYPE_FLOAT32, IB_DTYPE_FLOAT32, IB_DTYPE_FLOAT32,
                                             IB_DTYPE_FLOAT32};
        static const enum ib_dtype out_t[] = {IB_DTYPE_INT64,   IB_DTYPE_BOOL,    IB_DTYPE_FLOAT32,
                                              IB_DTYPE_FLOAT32, IB_DTYPE_INT64,   IB_DTYPE_FLOAT32,
                                              IB_DTYPE_FLOAT32};
        static const int in_r[] = {2, 3, 3, 3, 2, 2, 2}, out_r[] = {2, 2, 3, 3, 2, 2, 2};
        ib_tensor_desc d[IB_ARRAY_LEN(ins)], od;
        bool ok = true;
        for (size_t i = 0; i < IB_ARRAY_LEN(ins); i++)
            ok = ok && find_io(m, true, ins[i], in_t[i], in_r[i], &d[i]);
        for (size_t i = 0; i < IB_ARRAY_LEN(outs); i++)
            ok = ok && find_io(m, false, outs[i], out_t[i], out_r[i], &od);
        if (!ok || d[1].dims[1] <= 0 || d[1].dims[2] <= 0 || d[3].dims[2] <= 0)
            return ib_err_set(err, IB_EINVAL,
                              "rnnt decoder step: expected inputs %s, %s, %s, %s, %s, %s, %s and "
                              "outputs %s, %s, %s, %s, %s, %s, %s (src/models/rnnt.h)",
                              ins[0], ins[1], ins[2], ins[3], ins[4], ins[5], ins[6], outs[0],
                              outs[1], outs[2], outs[3], outs[4], outs[5], outs[6]);
        for (size_t i = 0; i < IB_ARRAY_LEN(ins); i++)
            add_in(io, ins[i], &d[i]);
        size_t hb = (size_t)d[1].dims[2] * sizeof(float) * (size_t)d[1].dims[1];
        const size_t out_b[] = {8 * IB_RNNT_STEP_UNROLL, IB_RNNT_STEP_UNROLL, hb, hb, 8, 4, 4};
        for (size_t i = 0; i < IB_ARRAY_LEN(outs); i++)
            add_out(io, outs[i], out_t[i], out_b[i]);
        io->params[0] = d[3].dims[2];
        io->params[1] = d[1].dims[2];
        io->keep_inputs = true; /* the encoder output stays in the session for the batch */
    } else {
        return ib_err_set(err, IB_EINVAL, "rnnt: no model %zu", k);
    }
    return IB_OK;
}

static int rt_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    size_t n = cfg->synth_samples ? cfg->synth_samples : 8;
    /* benchmarks.md §5: 1-15 s (plus one > 15 s that the filter drops); tiny: short ones */
    return ib_librispeech_synthesize(dir, n, cfg->tiny ? 0.5 : 1.0, cfg->tiny ? 2.0 : 15.0,
                                     cfg->seed, err);
}

static void rt_close(void *state)
{
    rt_state *s = state;
    if (!s)
        return;
    ib_librispeech_free(s->ds);
    ib_mel_destroy(s->mel);
    ib_free(s);
}

static int rt_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                   void **state, size_t *total, ib_err *err)
{
    (void)cfg;
    *state = NULL;
    rt_state *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "rnnt: out of memory");
    int rc = IB_OK;
    if (io) { /* NULL: scoring only (benchmark.h), the transcripts are all it needs */
        s->enc_h = io[0].params[0];
        s->pred_h = io[1].params[0];
        s->pred_l = io[1].params[1];
    }
    if (io && (io[2].params[0] != s->enc_h || io[2].params[1] != s->pred_h))
        rc = ib_err_set(err, IB_EINVAL,
                        "rnnt: the joint takes f [N,%lld] and g [N,%lld] but the encoder gives "
                        "%lld and the prediction net %lld features",
                        (long long)io[2].params[0], (long long)io[2].params[1],
                        (long long)s->enc_h, (long long)s->pred_h);
    if (!rc)
        rc = ib_librispeech_open(dir, IB_LIBRI_MAX_DURATION, &s->ds, err);
    if (!rc)
        rc = ib_mel_create(&s->mel, err);
    if (rc) {
        rt_close(s);
        return rc;
    }
    *state = s;
    *total = s->ds->n;
    return IB_OK;
}

/* Untimed: the waveform as float32 (soundfile's scale); features are timed (infer). */
static int rt_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    rt_state *s = state;
    memset(out, 0, sizeof *out);
    float *x = NULL;
    size_t n = 0;
    int rc = ib_audio_read(s->ds->utt[index].path, IB_LIBRI_RATE, &x, &n, err);
    if (rc)
        return rc;
    if (n < IB_MEL_MIN_SAMPLES) {
        ib_free(x);
        return ib_err_set(err, IB_EFORMAT, "%s: %zu samples, fewer than the %d features need",
                          s->ds->utt[index].path, n, IB_MEL_MIN_SAMPLES);
    }
    /* the payload and decoder buffers are sized for the 15 s the filter keeps */
    if (n > (size_t)(IB_LIBRI_MAX_DURATION * IB_LIBRI_RATE)) {
        ib_free(x);
        return ib_err_set(err, IB_EFORMAT,
                          "%s: %zu samples (%.2f s), longer than the 15 s its listed duration "
                          "(%.2f s) passed the filter with",
                          s->ds->utt[index].path, n, (double)n / IB_LIBRI_RATE,
                          s->ds->utt[index].duration);
    }
    out->mem = x;
    out->n_tensors = 1;
    out->aux = n;
    out->t[0] = (ib_tensor_view){.name = "waveform",
                                 .desc = {IB_DTYPE_FLOAT32, 2, {1, (int64_t)n}},
                                 .data = x,
                                 .capacity = n * sizeof *x};
    return IB_OK;
}

static size_t rt_payload_max(void *state, const ib_bench_config *cfg)
{
    (void)state;
    (void)cfg;
    return (size_t)RT_MAX_SYMBOLS * RT_MAX_ENC_STEPS * sizeof(int64_t);
}

static enum ib_dtype rt_dtype(const ib_bench_config *cfg)
{
    return cfg->payload_dtype == IB_DTYPE_UNDEFINED ? IB_DTYPE_INT64 : cfg->payload_dtype;
}

/* One token id in the payload dtype, little-endian. */
static void put_id(uint8_t *p, size_t w, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (size_t k = 0; k < w; k++)
        p[k] = (uint8_t)(u >> (8 * k));
}

typedef struct utt_state {
    size_t enc_len; /* encoder steps: ceil(frames / 2) */
    size_t n_tok;
    int64_t last;   /* last label, IB_RNNT_SOS before the first */
    int dirty;      /* the cached g / h' / c' are not for (last, h, c) yet */
    int active;     /* still adding symbols at the current step */
    int symbols;    /* symbols tried at the current step */
    size_t frame;   /* decode_fed: the row's encoder step */
} utt_state;

/* ---- the timed path ------------------------------------------------------------------- */

/* Encoder frames padded up to 32-frame steps up to 128, 64 up to 256, then 128: at most 8
 * shapes for the <= 500 frames of 15 s, so with the chunk sizes a worker runs the encoder
 * session stays well inside its 64 cached variants (each new one compiles, ~1 s for the full
 * model). Padding frames cost compute but cannot change a result (forward LSTMs, masked). */
static size_t t_bucket(size_t t)
{
    size_t step = t <= 128 ? 32 : t <= 256 ? 64 : 128;
    return (t + step - 1) / step * step;
}

/* Greedy decoding with the decoder-step graph (src/models/rnnt.h), every row at its own
 * encoder frame, the encoder output given once and kept in the session, the token, state,
 * frame and count fed back inside it (ib_session_run_fed): on a GPU all of it stays in device
 * memory, and each run (K = IB_RNNT_STEP_UNROLL steps) reads back K symbols and K flags a
 * row, where the classic loop moves every active row's h, c, g and f through the host twice a
 * symbol (about 2.6 MB a step at batch 256). No row waits for the others at a frame, so a
 * batch takes max over rows of (frames + symbols) steps rather than the sum over frames of the
 * most symbols any row adds there (rounded up to K). The host mirrors the graph's bookkeeping
 * (decoders.py): a row is active while t < its length; each step tries one symbol; blank or
 * the 30th symbol of a frame moves it to the next frame. The same tokens as the classic loop
 * (a test checks them on the cpu). */
static int decode_fed(ib_session *st, size_t N, size_t T2, const ib_session *enc, size_t He,
                      size_t Hp, size_t L, utt_state *u, int64_t *outs, ib_bench_scratch *scr,
                      ib_err *err)
{
    int64_t *tok = ib_bench_scratch_get(scr, SL_TOK, N * sizeof(int64_t));
    float *h = ib_bench_scratch_get(scr, SL_H, L * N * Hp * sizeof(float));
    float *pos = ib_bench_scratch_get(scr, SL_C, 3 * N * sizeof(float));
    const size_t K = IB_RNNT_STEP_UNROLL; /* steps a run takes */
    int64_t *sym = ib_bench_scratch_get(scr, SL_G, N * K * (sizeof(int64_t) + 1));
    if (!tok || !h || !pos || !sym)
        return ib_err_set(err, IB_ENOMEM, "rnnt: out of memory for a batch of %zu", N);
    float *end = pos + N, *count = end + N;
    uint8_t *emit = (uint8_t *)(sym + N * K);
    memset(h, 0, L * N * Hp * sizeof(float)); /* h and c start at zero (state None) */
    size_t live = 0; /* rows with frames left */
    for (size_t i = 0; i < N; i++) {
        tok[i] = IB_RNNT_SOS;
        pos[i] = (float)i; /* frame 0 */
        end[i] = (float)(u[i].enc_len * N + i);
        count[i] = 0.0f;
        u[i].frame = 0;
        u[i].symbols = 0;
        live += u[i].enc_len > 0;
    }
    const int64_t n = (int64_t)N;
    const ib_tensor_desc col = {IB_DTYPE_FLOAT32, 2, {n, 1}};
    const ib_tensor_desc state = {IB_DTYPE_FLOAT32, 3, {n, (int64_t)L, (int64_t)Hp}};
    ib_tensor_view in[6] = {{IB_RNNT_STEP_TOKEN, {IB_DTYPE_INT64, 2, {n, 1}}, tok, 0},
                            {IB_RNNT_STEP_H, state, h, 0},
                            {IB_RNNT_STEP_C, state, h, 0},
                            {IB_RNNT_STEP_POS, col, pos, 0},
                            {IB_RNNT_STEP_END, col, end, 0},
                            {IB_RNNT_STEP_COUNT, col, count, 0}};
    /* the encoder's output [T/2, N, H] as the step's rows [1, T/2 * N, H], taken from the
     * encoder session where it lies (on a GPU: device to device, no host round trip) */
    const ib_session_link link = {IB_RNNT_STEP_ENC, enc, IB_RNNT_ENC_OUTPUT,
                                  {IB_DTYPE_FLOAT32, 3, {1, (int64_t)T2 * n, (int64_t)He}}};
    ib_tensor_view out[2] = {{IB_RNNT_STEP_SYMBOL, {0}, sym, N * K * sizeof(int64_t)},
                             {IB_RNNT_STEP_EMIT, {0}, emit, N * K}};
    static const ib_session_feed feeds[7] = {
        {IB_RNNT_STEP_ENC, NULL, NULL},
        {IB_RNNT_STEP_END, NULL, NULL},
        {IB_RNNT_STEP_TOKEN, IB_RNNT_STEP_TOKEN_NEXT, NULL},
        {IB_RNNT_STEP_H, IB_RNNT_STEP_H_NEXT, NULL},
        {IB_RNNT_STEP_C, IB_RNNT_STEP_C_NEXT, NULL},
        {IB_RNNT_STEP_POS, IB_RNNT_STEP_POS_NEXT, NULL},
        {IB_RNNT_STEP_COUNT, IB_RNNT_STEP_COUNT_NEXT, NULL}};
    for (bool first = true; live; first = false) {
        int rc = first ? ib_session_run_linked(st, in, 6, &link, 1, out, 2, err)
                       : ib_session_run_fed(st, NULL, 0, feeds, 7, out, 2, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < K; j++) { /* row i's K steps, in order */
                size_t at = i * K + j;
                if (u[i].frame >= u[i].enc_len) {
                    if (emit[at]) /* the graph's bookkeeping is not the host's: never a guess */
                        return ib_err_set(err, IB_EBACKEND,
                                          "rnnt: the decoder step emitted a symbol for row %zu "
                                          "after its last frame (%zu)",
                                          i, u[i].enc_len);
                    continue;
                }
                bool next = !emit[at];
                if (emit[at]) {
                    outs[i * RT_MAX_SYMBOLS * RT_MAX_ENC_STEPS + u[i].n_tok++] = sym[at];
                    next = ++u[i].symbols >= RT_MAX_SYMBOLS;
                }
                if (next) {
                    u[i].symbols = 0;
                    live -= ++u[i].frame == u[i].enc_len;
                }
            }
    }
    return IB_OK;
}

/* 4. payloads: the ids in the configured integer width */
static int write_payloads(const ib_bench_config *cfg, size_t N, const utt_state *u,
                          const int64_t *outs, ib_bench_payload *out, ib_err *err)
{
    size_t w = ib_dtype_size(rt_dtype(cfg));
    for (size_t i = 0; i < N; i++) {
        if (out[i].cap < u[i].n_tok * w)
            return ib_err_set(err, IB_EINVAL, "rnnt: payload buffer too small");
        for (size_t k = 0; k < u[i].n_tok; k++)
            put_id(out[i].data + k * w, w, outs[i * RT_MAX_SYMBOLS * RT_MAX_ENC_STEPS + k]);
        out[i].size = u[i].n_tok * w;
    }
    return IB_OK;
}

/* The decoder-step path runs on device backends, where the classic loop's host round trips
 * dominate, and on the cpu when the variant asks for it (tests, comparisons). */
static bool use_fed_decoder(const ib_bench_config *cfg, ib_session *const *sessions)
{
    if (cfg->variant && !strcmp(cfg->variant, "device-decoder"))
        return true;
    return ib_bench_session_on_device(sessions[IB_RNNT_STEP]);
}

/* One utterance's features into feat [T, 240] (zeroed by the caller; frames past its own
 * are padding) and its mask [T] (1 for its frames, 0 for the padding). */
static int utt_features(rt_state *s, const ib_bench_sample *smp, size_t T, float *feat,
                        float *mask, float *mscr, ib_err *err)
{
    size_t n = (size_t)smp->aux, fr = ib_mel_frames(n);
    int rc = ib_mel_compute(s->mel, smp->t[0].data, n, feat, IB_MEL_DIM, mscr, err);
    for (size_t t = 0; !rc && t < T; t++)
        mask[t] = t < fr ? 1.0f : 0.0f;
    return rc;
}

/* Calibration (benchmark.h calib_inputs): the encoder's features and mask of one utterance,
 * as the timed path makes them for a batch of one. Only the encoder is calibrated; the
 * prediction, joint and decoder-step models take the encoder's outputs and run at a float
 * precision (sut.c model_precision). */
static int rt_calib_inputs(void *state, const ib_bench_config *cfg, const ib_bench_sample *smp,
                           ib_tensor_view *views, void **mem, ib_err *err)
{
    (void)cfg;
    rt_state *s = state;
    size_t n = (size_t)smp->aux, T = t_bucket(ib_mel_frames(n));
    size_t nf = T * IB_MEL_DIM, nm = T, ns = ib_mel_scratch_floats(n);
    float *buf = ib_calloc(nf + nm + ns, sizeof(float));
    if (!buf)
        return ib_err_set(err, IB_ENOMEM, "rnnt: out of memory for calibration features");
    int rc = utt_features(s, smp, T, buf, buf + nf, buf + nf + nm, err);
    if (rc) {
        ib_free(buf);
        return rc;
    }
    views[0] = (ib_tensor_view){IB_RNNT_ENC_INPUT,
                                {IB_DTYPE_FLOAT32, 3, {1, (int64_t)T, IB_MEL_DIM}}, buf,
                                nf * sizeof(float)};
    views[1] = (ib_tensor_view){IB_RNNT_ENC_MASK, {IB_DTYPE_FLOAT32, 3, {1, (int64_t)T, 1}},
                                buf + nf, nm * sizeof(float)};
    *mem = buf;
    return IB_OK;
}

static int rt_infer(void *state, const ib_bench_config *cfg, ib_session *const *sessions,
                    ib_bench_batch *b, ib_bench_payload *out, ib_err *err)
{
    rt_state *s = state;
    const size_t N = b->count, He = (size_t)s->enc_h, Hp = (size_t)s->pred_h,
                 L = (size_t)s->pred_l;
    /* 1. features for each utterance into a [N, T, 240] batch (timed, §1.0) */
    size_t T = 0, max_n = 0;
    for (size_t i = 0; i < N; i++) {
        size_t n = (size_t)b->samples[i]->aux;
        T = IB_MAX(T, ib_mel_frames(n));
        max_n = IB_MAX(max_n, n);
    }
    T = t_bucket(T); /* even */
    const size_t T2 = T / 2;
    float *feat = ib_bench_scratch_get(b->scratch, SL_FEAT, T * N * IB_MEL_DIM * sizeof(float));
    float *mask = ib_bench_scratch_get(b->scratch, SL_MASK, T * N * sizeof(float));
    float *mscr = ib_bench_scratch_get(b->scratch, SL_MEL, ib_mel_scratch_floats(max_n) * 4);
    /* the fed decoder takes the encoder's output from its session, so the host needs no copy
     * (262 MB of page-locked memory at batch 256 on a GPU) */
    const bool fed = use_fed_decoder(cfg, sessions);
    float *enc = fed ? NULL : ib_bench_scratch_get(b->scratch, SL_ENC, T2 * N * He * sizeof(float));
    int64_t *tok = ib_bench_scratch_get(b->scratch, SL_TOK, N * sizeof(int64_t));
    float *h = ib_bench_scratch_get(b->scratch, SL_H, L * N * Hp * sizeof(float));
    float *c = ib_bench_scratch_get(b->scratch, SL_C, L * N * Hp * sizeof(float));
    float *ho = ib_bench_scratch_get(b->scratch, SL_HO, L * N * Hp * sizeof(float));
    float *co = ib_bench_scratch_get(b->scratch, SL_CO, L * N * Hp * sizeof(float));
    float *g = ib_bench_scratch_get(b->scratch, SL_G, N * Hp * sizeof(float));
    float *gc = ib_bench_scratch_get(b->scratch, SL_GC, 3 * L * N * Hp * sizeof(float) + N * Hp * 4);
    float *logit = ib_bench_scratch_get(b->scratch, SL_LOG, N * IB_RNNT_CLASSES * sizeof(float));
    utt_state *u = ib_bench_scratch_get(b->scratch, SL_UTT, N * sizeof *u);
    int64_t *outs = ib_bench_scratch_get(b->scratch, SL_OUTS,
                                         N * (size_t)RT_MAX_SYMBOLS * RT_MAX_ENC_STEPS * 8);
    if (!feat || !mask || !mscr || (!enc && !fed) || !tok || !h || !c || !ho || !co || !g || !gc ||
        !logit || !u || !outs)
        return ib_err_set(err, IB_ENOMEM, "rnnt: out of memory for a batch of %zu", N);
    memset(feat, 0, T * N * IB_MEL_DIM * sizeof(float));
    for (size_t i = 0; i < N; i++) {
        size_t n = (size_t)b->samples[i]->aux, fr = ib_mel_frames(n);
        int rc = utt_features(s, b->samples[i], T, feat + i * T * IB_MEL_DIM, mask + i * T, mscr,
                              err);
        if (rc)
            return rc;
        memset(&u[i], 0, sizeof u[i]);
        u[i].enc_len = (fr + 1) / 2; /* StackTime: ceil(len / 2) */
        u[i].last = IB_RNNT_SOS;
        u[i].dirty = 1;
    }
    /* 2. the encoder */
    ib_tensor_view ein[2] = {
        {IB_RNNT_ENC_INPUT, {IB_DTYPE_FLOAT32, 3, {(int64_t)N, (int64_t)T, IB_MEL_DIM}}, feat, 0},
        {IB_RNNT_ENC_MASK, {IB_DTYPE_FLOAT32, 3, {(int64_t)N, (int64_t)T, 1}}, mask, 0}};
    ib_tensor_view eout = {IB_RNNT_ENC_OUTPUT, {0}, enc, T2 * N * He * sizeof(float)};
    int rc = ib_session_run(sessions[IB_RNNT_ENCODER], ein, 2, &eout, fed ? 0 : 1, err);
    if (rc)
        return rc;
    /* 3. greedy decoding (decoders.py _greedy_decode), all utterances in step; the
     * hidden state starts at zero (torch.nn.LSTM with state None) */
    size_t max_len = 0;
    for (size_t i = 0; i < N; i++)
        max_len = IB_MAX(max_len, u[i].enc_len);
    if (fed) {
        /* the whole bucketed encoder output: its few shapes bound the step's compiled ones */
        if ((rc = decode_fed(sessions[IB_RNNT_STEP], N, T2, sessions[IB_RNNT_ENCODER], He, Hp, L,
                             u, outs, b->scratch, err)))
            return rc;
        return write_payloads(cfg, N, u, outs, out, err);
    }
    memset(h, 0, L * N * Hp * sizeof(float));
    memset(c, 0, L * N * Hp * sizeof(float));
    float *hp = gc, *cp = gc + L * N * Hp; /* h', c' of the cached step, [N, L, Hp] */
    ib_tensor_view pin[3] = {
        {IB_RNNT_PRED_TOKEN, {IB_DTYPE_INT64, 2, {(int64_t)N, 1}}, tok, 0},
        {IB_RNNT_PRED_H_IN, {IB_DTYPE_FLOAT32, 3, {(int64_t)N, (int64_t)L, (int64_t)Hp}}, h, 0},
        {IB_RNNT_PRED_C_IN, {IB_DTYPE_FLOAT32, 3, {(int64_t)N, (int64_t)L, (int64_t)Hp}}, c, 0}};
    float *gnew = gc + 2 * L * N * Hp;
    ib_tensor_view pout[3] = {{IB_RNNT_PRED_G, {0}, gnew, N * Hp * sizeof(float)},
                              {IB_RNNT_PRED_H_OUT, {0}, ho, L * N * Hp * sizeof(float)},
                              {IB_RNNT_PRED_C_OUT, {0}, co, L * N * Hp * sizeof(float)}};
    ib_tensor_view jin[2] = {
        {IB_RNNT_JOINT_F, {IB_DTYPE_FLOAT32, 2, {(int64_t)N, (int64_t)He}}, NULL, 0},
        {IB_RNNT_JOINT_G, {IB_DTYPE_FLOAT32, 2, {(int64_t)N, (int64_t)Hp}}, g, 0}};
    ib_tensor_view jout = {IB_RNNT_JOINT_LOGITS, {0}, logit,
                           N * IB_RNNT_CLASSES * sizeof(float)};
    /* rows still adding symbols are packed together for the prediction and joint runs (a
     * row's outputs depend on its own inputs only), so finished utterances cost nothing */
    size_t *rows = ib_bench_scratch_get(b->scratch, SL_ROWS, N * sizeof(size_t));
    float *hcm = ib_bench_scratch_get(b->scratch, SL_CMP,
                                      (2 * L * N * Hp + N * He + N * Hp) * sizeof(float));
    if (!rows || !hcm)
        return ib_err_set(err, IB_ENOMEM, "rnnt: out of memory for a batch of %zu", N);
    float *ccm = hcm + L * N * Hp, *fcm = ccm + L * N * Hp, *gcm = fcm + N * He;
    for (size_t t = 0; t < max_len; t++) {
        size_t n_active = 0;
        for (size_t i = 0; i < N; i++) {
            u[i].active = t < u[i].enc_len;
            u[i].symbols = 0;
            n_active += (size_t)u[i].active;
        }
        const float *ft = enc + t * N * He; /* encoder step t of every utterance: [N, He] */
        while (n_active) {
            /* _pred_step(last symbol, hidden) for the active rows whose state moved */
            size_t m = 0;
            for (size_t i = 0; i < N; i++)
                if (u[i].active && u[i].dirty)
                    rows[m++] = i;
            if (m) {
                for (size_t r = 0; r < m; r++) {
                    size_t i = rows[r];
                    tok[r] = u[i].last;
                    if (m < N) {
                        memcpy(hcm + r * L * Hp, h + i * L * Hp, L * Hp * sizeof(float));
                        memcpy(ccm + r * L * Hp, c + i * L * Hp, L * Hp * sizeof(float));
                    }
                }
                pin[1].data = m < N ? hcm : h;
                pin[2].data = m < N ? ccm : c;
                for (int k = 0; k < 3; k++)
                    pin[k].desc.dims[0] = (int64_t)m;
                if ((rc = ib_session_run(sessions[IB_RNNT_PREDICTION], pin, 3, pout, 3, err)))
                    return rc;
                for (size_t r = 0; r < m; r++) {
                    size_t i = rows[r];
                    memcpy(g + i * Hp, gnew + r * Hp, Hp * sizeof(float));
                    memcpy(hp + i * L * Hp, ho + r * L * Hp, L * Hp * sizeof(float));
                    memcpy(cp + i * L * Hp, co + r * L * Hp, L * Hp * sizeof(float));
                    u[i].dirty = 0;
                }
            }
            /* the joint for every active row */
            m = 0;
            for (size_t i = 0; i < N; i++)
                if (u[i].active)
                    rows[m++] = i;
            if (m < N)
                for (size_t r = 0; r < m; r++) {
                    memcpy(fcm + r * He, ft + rows[r] * He, He * sizeof(float));
                    memcpy(gcm + r * Hp, g + rows[r] * Hp, Hp * sizeof(float));
                }
            jin[0].data = m < N ? fcm : (float *)(uintptr_t)ft;
            jin[1].data = m < N ? gcm : g;
            jin[0].desc.dims[0] = jin[1].desc.dims[0] = (int64_t)m;
            if ((rc = ib_session_run(sessions[IB_RNNT_JOINT], jin, 2, &jout, 1, err)))
                return rc;
            for (size_t r = 0; r < m; r++) {
                size_t i = rows[r];
                const float *lg = logit + r * IB_RNNT_CLASSES;
                int k = 0; /* logp.max(0): the first maximum */
                for (int j = 1; j < IB_RNNT_CLASSES; j++)
                    if (lg[j] > lg[k])
                        k = j;
                u[i].symbols++;
                if (k == IB_RNNT_BLANK) {
                    u[i].active = 0;
                } else { /* label.append(k); hidden = hidden_prime */
                    outs[i * RT_MAX_SYMBOLS * RT_MAX_ENC_STEPS + u[i].n_tok++] = k;
                    u[i].last = k;
                    u[i].dirty = 1;
                    memcpy(h + i * L * Hp, hp + i * L * Hp, L * Hp * sizeof(float));
                    memcpy(c + i * L * Hp, cp + i * L * Hp, L * Hp * sizeof(float));
                    if (u[i].symbols >= RT_MAX_SYMBOLS)
                        u[i].active = 0;
                }
                n_active -= (size_t)!u[i].active;
            }
        }
    }
    return write_payloads(cfg, N, u, outs, out, err);
}

/* ---- accuracy (accuracy_eval.py) ------------------------------------------------------------ */

static int rt_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                       size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    rt_state *s = state;
    size_t w = ib_dtype_size(rt_dtype(cfg));
    ib_wer_acc acc = {0};
    int64_t *ids = NULL;
    size_t cap = 0;
    int rc = IB_OK;
    /* every log entry counts, in log order (the script does not de-duplicate) */
    for (size_t i = 0; i < n && !rc; i++) {
        if (e[i].qsl_idx >= s->ds->n || e[i].size % w) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "rnnt: accuracy log entry %zu: qsl_idx %llu of %zu, or %zu bytes "
                            "(not whole %zu-byte ids)",
                            i, (unsigned long long)e[i].qsl_idx, s->ds->n, e[i].size, w);
            break;
        }
        size_t m = e[i].size / w;
        if (m > cap) {
            int64_t *p = ib_realloc(ids, m * sizeof *ids);
            if (!p) {
                rc = ib_err_set(err, IB_ENOMEM, "rnnt: out of memory");
                break;
            }
            ids = p;
            cap = m;
        }
        for (size_t k = 0; k < m; k++) { /* array.array(dtype).tolist(): signed, LE */
            uint64_t v = 0;
            for (size_t j = 0; j < w; j++)
                v |= (uint64_t)e[i].data[k * w + j] << (8 * j);
            if (w < 8 && (v >> (8 * w - 1)) & 1)
                v |= ~0ull << (8 * w);
            ids[k] = (int64_t)v;
        }
        char *hyp = NULL;
        if ((rc = ib_wer_ids_to_text(ids, m, &hyp, err)))
            break;
        if (ib_wer_acc_add(&acc, hyp, s->ds->utt[e[i].qsl_idx].transcript))
            rc = ib_err_set(err, IB_ENOMEM, "rnnt: out of memory");
        ib_free(hyp);
    }
    ib_free(ids);
    if (rc)
        return rc;
    double wer = ib_wer_acc_value(&acc);
    char line[160];
    ib_wer_line(wer, line, sizeof line);
    if (ib_strbuf_puts(text, line))
        return ib_err_set(err, IB_ENOMEM, "rnnt: out of memory");
    *value = (1 - wer) * 100;
    return IB_OK;
}

const ib_benchmark ib_bench_rnnt = {
    .id = "rnnt",
    .model_name = "rnnt",
    .title = "RNN-T on LibriSpeech dev-clean (1 - WER)",
    .dataset_name = "LibriSpeech dev-clean (dev-clean-wav.json manifest or the FLAC layout)",
    .scenarios = (1u << IB_LG_SCENARIO_SERVER) | (1u << IB_LG_SCENARIO_OFFLINE),
    .performance_sample_count = 2513,
    .server_latency_ns = 1000000000,
    .accuracy_metric = "accuracy",
    .accuracy_reference = 92.548, /* 1 - 7.452253714852645 % WER */
    .accuracy_target_fraction = 0.99,
    .payload_dtypes = {IB_DTYPE_INT64, IB_DTYPE_INT32, IB_DTYPE_INT16, IB_DTYPE_INT8,
                       IB_DTYPE_UNDEFINED},
    .batch_offline = 16,
    .batch_server = 8,
    .server_max_wait_us = 20000,
    .device_batch_per_unit = {2, 1},
    .device_sample_bytes = 32u << 20,
    .calib_samples = 8,
    .synth_default_samples = 8,
    .n_models = 4, /* encoder, prediction, joint, and the decoder step the device path uses */
    .build_model = rt_build,
    .bind_model = rt_bind,
    .synthesize = rt_synthesize,
    .open = rt_open,
    .close = rt_close,
    .load_sample = rt_load,
    .calib_inputs = rt_calib_inputs,
    .payload_max_bytes = rt_payload_max,
    .infer = rt_infer,
    .accuracy = rt_accuracy,
};
