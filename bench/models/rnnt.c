/*
 * rnnt.c (bench/models) - RNN-T utterances/s through the rnnt entry's timed path (features,
 * encoder, batched greedy decoding; src/harness/bench_rnnt.c) next to the reference pipeline
 * in PyTorch (bench/models/rnnt_peer.py, Debian python3-torch, eager, same threads) in the
 * same run, on the same random weights and the same synthetic audio, with the ratio and the
 * token agreement (both sides should decode the same symbols):
 *
 *   build/<variant>/bench/models/rnnt [--threads N] [--seconds-audio 7.2] [--n 16]
 *                                     [--single 4] [--decoder-threads N] [--tiny]
 *                                     [--precision fp32|bf16] [--no-torch] [--no-ort] [--profile]
 *                                     [--fed-decoder] (the device decoder path on the cpu)
 *                                     [--python PATH]
 *
 * --precision bf16 runs our three sessions in bf16 and the peer's LSTMs, joint and embedding
 * in torch.bfloat16 (PyTorch's oneDNN bf16 LSTM), so the ratio stays like for like. The
 * encoder's recurrent weights (16.8 MB per layer in f32) do not stay in this VM's share of
 * the L3 at f32 and do at bf16: a 1x1024 LSTM layer over 256 steps took 166-279 ms f32 vs
 * 44-54 ms bf16 with distinct weights per layer as in the model (oneDNN 2.6, 2 threads).
 *
 * Batch 1 runs --single utterances one at a time; batch --n encodes n utterances together.
 * The encoder alone is timed too (features excluded), so the decoder's share shows. The
 * prediction and joint sessions run on --decoder-threads (default: --threads, as the harness
 * does): a [1, 320] LSTM step is ~1 ms of work; on a quiet 2-core machine 2 threads help
 * (1.01 vs 0.64 utt/s at batch 1), but with other processes on the cores two OpenMP threads
 * made a step 20x slower (0.9 ms -> 19 ms measured), where 1 thread is the better choice. Prints figures; asserts nothing about them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset/librispeech.h"
#include "dataset/mel.h"
#include "harness/benchmark.h"
#include "harness/scratch.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/rnnt.h"
#include "onnx/build.h"
#include "ir/graph.h"

#include "bench_util.h"

#define MAXN 64

/* Every float32 initializer of a built part: [u32 name len][name][u32 ndim][i64 dims][f32]. */
static int dump_weights(ib_build *b, FILE *f)
{
    ib_graph *g = ib_build_graph(b);
    for (size_t v = 0; g && v < g->values.len; v++) {
        const ib_value *val = &g->values.data[v];
        const ib_tensor *t = val->constant;
        if (!t || t->desc.dtype != IB_DTYPE_FLOAT32 || !val->name)
            continue;
        uint32_t nl = (uint32_t)strlen(val->name), nd = (uint32_t)t->desc.ndim;
        fwrite(&nl, 4, 1, f);
        fwrite(val->name, 1, nl, f);
        fwrite(&nd, 4, 1, f);
        fwrite(t->desc.dims, 8, nd, f);
        fwrite(t->data, 1, t->nbytes, f);
    }
    return ferror(f) ? -1 : 0;
}

typedef struct ctx {
    ib_bench_config cfg;
    void *state;
    ib_session *s[4];
    ib_bench_sample smp[MAXN];
    size_t total;
    ib_bench_scratch scr;
    uint8_t *pay;
    size_t cap;
    size_t sizes[MAXN];
} ctx;

static int infer(ctx *c, size_t first, size_t n)
{
    const ib_bench_sample *sp[MAXN];
    ib_lg_sample_index li[MAXN];
    ib_bench_payload out[MAXN];
    for (size_t i = 0; i < n; i++) {
        sp[i] = &c->smp[first + i];
        li[i] = first + i;
        out[i] = (ib_bench_payload){c->pay + (first + i) * c->cap, c->cap, 0};
    }
    ib_bench_batch b;
    memset(&b, 0, sizeof b);
    b.count = n;
    b.samples = sp;
    b.indices = li;
    b.scratch = &c->scr;
    ib_err err;
    int rc = ib_bench_rnnt.infer(c->state, &c->cfg, c->s, &b, out, &err);
    if (rc)
        fprintf(stderr, "rnnt: infer: %s\n", err.msg);
    for (size_t i = 0; i < n; i++)
        c->sizes[first + i] = out[i].size;
    return rc;
}

typedef struct enc_run {
    ib_session *s;
    ib_tensor_view *in, *out;
} enc_run;

static int enc_run_once(void *p)
{
    enc_run *r = p;
    ib_err err;
    return ib_session_run(r->s, r->in, 2, r->out, 1, &err);
}

/* The encoder alone on utterances [first, first + n) (features computed before the clock);
 * with profile, then where its time goes (bu_profile). */
static double encoder_seconds(ctx *c, size_t first, size_t n, int64_t He, bool profile)
{
    ib_mel *mel = NULL;
    ib_err err;
    if (ib_mel_create(&mel, &err))
        return 0;
    size_t T = 0, maxs = 0;
    for (size_t i = 0; i < n; i++) {
        T = IB_MAX(T, ib_mel_frames((size_t)c->smp[first + i].aux));
        maxs = IB_MAX(maxs, (size_t)c->smp[first + i].aux);
    }
    T = (T + 31) / 32 * 32;
    float *feat = calloc(n * T * IB_MEL_DIM, 4), *mask = calloc(n * T, 4);
    float *scr = malloc(ib_mel_scratch_floats(maxs) * 4), *enc = malloc(n * T / 2 * (size_t)He * 4);
    for (size_t i = 0; i < n; i++) {
        size_t ns = (size_t)c->smp[first + i].aux, fr = ib_mel_frames(ns);
        ib_mel_compute(mel, c->smp[first + i].t[0].data, ns, feat + i * T * IB_MEL_DIM,
                       IB_MEL_DIM, scr, &err);
        for (size_t t = 0; t < fr; t++)
            mask[i * T + t] = 1;
    }
    ib_tensor_view in[2] = {
        {IB_RNNT_ENC_INPUT, {IB_DTYPE_FLOAT32, 3, {(int64_t)n, (int64_t)T, IB_MEL_DIM}}, feat, 0},
        {IB_RNNT_ENC_MASK, {IB_DTYPE_FLOAT32, 3, {(int64_t)n, (int64_t)T, 1}}, mask, 0}};
    ib_tensor_view o = {IB_RNNT_ENC_OUTPUT, {0}, enc, n * T / 2 * (size_t)He * 4};
    ib_session_run(c->s[0], in, 2, &o, 1, &err); /* warm (compiled already by infer) */
    double t0 = bu_now_s();
    ib_session_run(c->s[0], in, 2, &o, 1, &err);
    double dt = bu_now_s() - t0;
    if (profile) {
        enc_run r = {c->s[0], in, &o};
        char title[64];
        snprintf(title, sizeof title, "the encoder at batch %zu", n);
        bu_profile(c->s[0], enc_run_once, &r, 2, 12, title);
    }
    free(feat);
    free(mask);
    free(scr);
    free(enc);
    ib_mel_destroy(mel);
    return dt;
}

typedef struct peer_row {
    double rate;
    char *tokens; /* the JSON "tokens" array text */
} peer_row;

static void run_peer(const char *python, int threads, const char *prec, size_t n, size_t single,
                     peer_row *r1, peer_row *rn)
{
    const char *src = getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".";
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s %s/bench/models/rnnt_peer.py --weights /tmp/ib-bench-rnnt-w.bin --audio "
             "/tmp/ib-bench-rnnt-a.f32 --threads %d --batches 1,%zu --single %zu --precision %s",
             python, src, threads, n, single, prec);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    static char line[1 << 22];
    while (fgets(line, sizeof line, p)) {
        const char *k = strstr(line, "\"utt_per_sec\":"), *b = strstr(line, "\"batch\":");
        const char *t = strstr(line, "\"tokens\":");
        if (!k || !b || !t)
            continue;
        peer_row *r = atoi(b + 8) == 1 ? r1 : rn;
        r->rate = atof(k + 14);
        r->tokens = strdup(t + 9);
    }
    pclose(p);
}

/* Utterances whose tokens in the peer's JSON array equal ours (payload int64). */
static size_t agree(const ctx *c, const char *json, size_t first, size_t n)
{
    size_t same = 0;
    const char *p = json ? strchr(json, '[') : NULL;
    for (size_t i = 0; p && i < n; i++) {
        p = strchr(p + 1, '[');
        if (!p)
            break;
        const int64_t *ids = (const int64_t *)(const void *)(c->pay + (first + i) * c->cap);
        size_t m = c->sizes[first + i] / 8, k = 0;
        int ok = 1;
        const char *q = p + 1;
        while (*q && *q != ']') {
            char *end;
            long v = strtol(q, &end, 10);
            if (end == q)
                break;
            if (k >= m || ids[k] != v)
                ok = 0;
            k++;
            q = end;
            while (*q == ',' || *q == ' ')
                q++;
        }
        same += (size_t)(ok && k == m);
        p = strchr(p, ']');
    }
    return same;
}

int main(int argc, char **argv)
{
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), no_torch = 0, no_ort = 0, profile = 0, fed = 0, tiny = 0, dec_threads = 0, pin = 1;
    double secs = 7.2;
    size_t n = 16, single = 4;
    const char *python = "/usr/bin/python3", *prec = "fp32";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--threads") && v)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--seconds-audio") && v)
            secs = atof(argv[++i]);
        else if (!strcmp(a, "--n") && v)
            n = (size_t)atoi(argv[++i]);
        else if (!strcmp(a, "--single") && v)
            single = (size_t)atoi(argv[++i]);
        else if (!strcmp(a, "--decoder-threads") && v)
            dec_threads = atoi(argv[++i]);
        else if (!strcmp(a, "--python") && v)
            python = argv[++i];
        else if (!strcmp(a, "--precision") && v)
            prec = argv[++i];
        else if (!strcmp(a, "--tiny"))
            tiny = 1;
        else if (!strcmp(a, "--no-pin"))
            pin = 0;
        else if (!strcmp(a, "--no-torch"))
            no_torch = 1;
        else if (!strcmp(a, "--no-ort"))
            no_ort = 1;
        else if (!strcmp(a, "--fed-decoder"))
            fed = 1; /* the device path (decoder step, state fed back) on this backend */
        else if (!strcmp(a, "--profile"))
            profile = 1;
        else {
            fprintf(stderr, "usage: %s [--threads N] [--seconds-audio 7.2] [--n 16] [--single 4] "
                            "[--decoder-threads N] [--precision fp32|bf16] [--no-pin] [--tiny] "
                            "[--no-torch] [--no-ort] [--profile] [--fed-decoder] [--python PATH]\n",
                    argv[0]);
            return !strcmp(a, "--help") || !strcmp(a, "-h") ? 0 : 2;
        }
    }
    bool bf16 = !strcmp(prec, "bf16");
    if (threads < 1 || n < 1 || n > MAXN || single < 1 || single > n || secs < 0.1 || secs > 15 ||
        (!bf16 && strcmp(prec, "fp32"))) {
        fprintf(stderr, "rnnt: bad arguments\n");
        return 2;
    }
    static ctx c;
    ib_bench_config_defaults(&c.cfg);
    c.cfg.tiny = tiny;
    c.cfg.variant = fed ? "device-decoder" : NULL;
    ib_err err;
    ib_model *m[4];
    ib_bench_io io[4];
    FILE *wf = fopen("/tmp/ib-bench-rnnt-w.bin", "wb");
    for (int k = 0; k < 4; k++) {
        ib_models_opts o = {.seed = 1, .tiny = tiny != 0};
        ib_build *b = NULL;
        char path[64];
        snprintf(path, sizeof path, "/tmp/ib-bench-rnnt-%d.onnx", k);
        if (ib_models_rnnt(&o, (enum ib_rnnt_part)k, &b, &err) ||
            ib_build_write_file(b, path, NULL, &err) || !wf ||
            (k != IB_RNNT_STEP && dump_weights(b, wf)) || /* the peer's: parts 0-2 */
            ib_model_load_file(path, NULL, &m[k], &err) ||
            ib_bench_rnnt.bind_model(&c.cfg, (size_t)k, m[k], &io[k], &err)) {
            fprintf(stderr, "rnnt: model %d: %s\n", k, err.msg);
            return 1;
        }
        ib_build_destroy(b);
        if (k != IB_RNNT_ENCODER) /* the encoder's file stays for the ONNX Runtime peer */
            unlink(path);
    }
    fclose(wf);
    const char *dir = "/tmp/ib-bench-rnnt-data";
    if (ib_librispeech_synthesize(dir, n, secs, secs, 1, &err) ||
        ib_bench_rnnt.open(&c.cfg, dir, io, &c.state, &c.total, &err)) {
        fprintf(stderr, "rnnt: data: %s\n", err.msg);
        return 1;
    }
    FILE *af = fopen("/tmp/ib-bench-rnnt-a.f32", "wb");
    uint32_t cnt = (uint32_t)n;
    fwrite(&cnt, 4, 1, af);
    for (size_t i = 0; i < n; i++) {
        if (ib_bench_rnnt.load_sample(c.state, i, &c.smp[i], &err)) {
            fprintf(stderr, "rnnt: %s\n", err.msg);
            return 1;
        }
        uint32_t len = (uint32_t)c.smp[i].aux;
        fwrite(&len, 4, 1, af);
        fwrite(c.smp[i].t[0].data, 4, len, af);
    }
    fclose(af);
    for (int k = 0; k < 4; k++) {
        ib_session_options so;
        ib_session_options_defaults(&so);
        so.threads = k == IB_RNNT_ENCODER || dec_threads < 1 ? threads : IB_MIN(dec_threads, threads);
        so.first_cpu = pin ? 0 : -1;
        so.max_batch = (int64_t)n;
        so.precision = bf16 ? IB_PRECISION_BF16 : IB_PRECISION_FP32;
        so.keep_inputs = io[k].keep_inputs;
        if (ib_session_create(m[k], &so, &c.s[k], &err)) {
            fprintf(stderr, "rnnt: session %d: %s\n", k, err.msg);
            return 1;
        }
    }
    c.cap = ib_bench_rnnt.payload_max_bytes(c.state, &c.cfg);
    c.pay = malloc(n * c.cap);
    printf("RNN-T %s, random weights (seed 1), %s (PyTorch too), %zu synthetic utterances of "
           "%.1f s, %d threads (prediction/joint sessions: %d)\n",
           tiny ? "tiny" : "full (45.3 M)", prec, n, secs, threads,
           dec_threads < 1 ? threads : IB_MIN(dec_threads, threads));
    /* warm-up: compile the shapes once (batch 1 and n) */
    if (infer(&c, 0, 1) || infer(&c, 0, n))
        return 1;
    double t0 = bu_now_s();
    for (size_t i = 0; i < single; i++)
        if (infer(&c, i, 1))
            return 1;
    double t1 = bu_now_s() - t0, enc1 = encoder_seconds(&c, 0, 1, io[0].params[0], profile);
    size_t tok1 = 0;
    for (size_t i = 0; i < single; i++)
        tok1 += c.sizes[i] / 8;
    t0 = bu_now_s();
    if (infer(&c, 0, n))
        return 1;
    double tn = bu_now_s() - t0, encn = encoder_seconds(&c, 0, n, io[0].params[0], profile);
    size_t tokn = 0;
    for (size_t i = 0; i < n; i++)
        tokn += c.sizes[i] / 8;
    double r1 = (double)single / t1, rn = (double)n / tn;
    peer_row p1 = {0, NULL}, pn = {0, NULL};
    if (!no_torch)
        run_peer(python, threads, prec, n, single, &p1, &pn);
    printf("%-6s %12s %12s %8s %10s %12s %10s\n", "batch", "ours utt/s", "torch utt/s", "ratio",
           "symbols", "encoder %", "same tokens");
    printf("%-6d %12.3f %12.3f %8.2f %10zu %11.0f%% %6zu/%zu\n", 1, r1, p1.rate,
           p1.rate > 0 ? r1 / p1.rate : 0, tok1, 100 * enc1 * (double)single / t1,
           agree(&c, p1.tokens, 0, single), single);
    printf("%-6zu %12.3f %12.3f %8.2f %10zu %11.0f%% %6zu/%zu\n", n, rn, pn.rate,
           pn.rate > 0 ? rn / pn.rate : 0, tokn, 100 * encn / tn, agree(&c, pn.tokens, 0, n), n);
    printf("(batch 1: %.3f s per %.1f s utterance; the machine is shared: compare ratios)\n",
           t1 / (double)single, secs);
    /* The encoder alone (most of the time) through ONNX Runtime on the same file, same padded
     * frame count: the greedy decoder is a loop of three model runs per symbol, which the
     * peer would have to re-implement in JavaScript; the encoder is one graph. */
    if (!no_ort) {
        size_t T = (ib_mel_frames((size_t)c.smp[0].aux) + 31) / 32 * 32;
        char bs[64], extra[64];
        snprintf(bs, sizeof bs, "1,%zu", n);
        snprintf(extra, sizeof extra, "--dim T=%zu", T);
        double orate[2] = {0}, ocpu[2] = {0};
        bu_run_ort("/tmp/ib-bench-rnnt-0.onnx", bs, threads, 1, 2, extra, orate, ocpu, 2);
        printf("encoder alone (%zu frames, features excluded):\n%-6s %12s %12s %8s\n", T,
               "batch", "ours utt/s", "ort utt/s", "vs ort");
        double ours[2] = {enc1 > 0 ? 1 / enc1 : 0, encn > 0 ? (double)n / encn : 0};
        size_t bb[2] = {1, n};
        for (int i = 0; i < 2; i++)
            printf("%-6zu %12.3f %12.3f %8.2f\n", bb[i], ours[i], orate[i],
                   orate[i] > 0 ? ours[i] / orate[i] : 0);
    }
    unlink("/tmp/ib-bench-rnnt-0.onnx");
    return 0;
}
