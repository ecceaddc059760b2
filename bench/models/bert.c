/*
 * bert.c (bench/models) - BERT-Large samples/s through our session next to PyTorch in the
 * same run (issue 5 "Performance"; ../shared/reference/performance.md §2, §4, §9.4):
 *
 *   build/release/bench/models/bert [--quick] [--layers 24] [--threads N] [--batches 1,8]
 *       [--precisions fp32,bf16,int8,fp16,fp8] [--seq 384] [--reps 3] [--seconds 3] [--no-torch]
 *       [--peer-modes jit,fastpath,autocast,cast,fastpath-cast,dynamic] [--real N]
 *       [--quiet-wait S] [--python /usr/bin/python3] [--profile] [--backend cpu|cuda]
 *       [--half-chains] (cuda at fp16/bf16/int8/fp8: ib_session_options.half_chains, the 16-bit
 *       chains); fp16 and fp8 only with a device backend (the cpu has no kernels for them)
 *
 * Model: src/models/bert.c (the reference ONNX graph, seeded random weights; speed does not
 * depend on the values) at BERT-Large widths; --quick keeps every shape but builds 2 layers
 * (the per-layer work is 96 % of the FLOPs, so the ratio to PyTorch on the same 2 layers is
 * the figure that carries over; the "24-layer equiv." column scales by layers/24 and ignores
 * the embeddings and span head). Inputs: random token ids, mask all ones (no padding: every
 * one of the --seq tokens is real), segments 0 then 1.
 *
 * Per row: our samples/s (median of --reps runs), samples per CPU-second of this process
 * (bench_util.h; less sensitive to neighbours time-slicing the cores), GFLOP/s (2 x MACs of the MatMuls, incl.
 * the attention products: performance.md's 10.27 GFLOP per layer at 384), % of the peak of
 * that precision measured in this run on the same pinned threads (FMA / vdpbf16ps /
 * vpdpbusd chains, as bench/kernels), the PyTorch peer (bench/models/bert_peer.py, best of
 * its modes: jit+freeze+optimize_for_inference or the nn.TransformerEncoder fast path for
 * fp32; autocast or a .to(bfloat16) model for bf16; quantize_dynamic for int8;
 * OMP_WAIT_POLICY=PASSIVE, which performance.md §5 found PyTorch needs on 2 cores), the ratio,
 * and "contended" when other processes took > 5 % of the CPUs meanwhile. --peer-modes limits
 * the peer to the named modes (a precision with none named runs all of its modes).
 *
 * --real N: N synthetic SQuAD features (src/dataset/synth_squad.c through the real
 * tokenizer and windowing) run one at a time padded to --seq (what the harness feeds) and
 * cut to their real length (the mask says where the padding starts); prints both rates and
 * the largest |difference| of the real tokens' logits (the lengths are the synthetic set's:
 * paragraph 0 over 384 tokens, the others 30..120 words; not SQuAD dev's distribution).
 * Figures are printed, never asserted.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/thread.h"
#include "dataset/squad.h"
#include "dataset/wordpiece.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/bert.h"
#include "onnx/build.h"

#include "bench_util.h"

/* ---- peak of this machine (the loops of bench/kernels, 16 independent chains) --------- */

#define PK_ACC(T, z) T a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z, \
    a8 = z, a9 = z, a10 = z, a11 = z, a12 = z, a13 = z, a14 = z, a15 = z
#define PK_STEP(OP)                                                                         \
    OP(a0) OP(a1) OP(a2) OP(a3) OP(a4) OP(a5) OP(a6) OP(a7) OP(a8) OP(a9) OP(a10) OP(a11)    \
        OP(a12) OP(a13) OP(a14) OP(a15)                                                     \
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5),       \
                     "+v"(a6), "+v"(a7));                                                   \
    __asm__ volatile("" : "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11), "+v"(a12), "+v"(a13),   \
                     "+v"(a14), "+v"(a15))
#define PK_SUM(add) add(add(add(add(a0, a1), add(a2, a3)), add(add(a4, a5), add(a6, a7))), \
                        add(add(add(a8, a9), add(a10, a11)), add(add(a12, a13), add(a14, a15))))

__attribute__((target("avx512f"), noinline)) static double pk_fp32(long n)
{
    __m512 b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
    PK_ACC(__m512, _mm512_setzero_ps());
#define OP(x) x = _mm512_fmadd_ps(x, b, c);
    for (long k = 0; k < n; k++) {
        PK_STEP(OP);
    }
#undef OP
    return (double)_mm512_reduce_add_ps(PK_SUM(_mm512_add_ps));
}

__attribute__((target("avx512f,avx512bf16"), noinline)) static double pk_bf16(long n)
{
    __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3c00);
    PK_ACC(__m512, _mm512_setzero_ps());
#define OP(v) v = _mm512_dpbf16_ps(v, x, y);
    for (long k = 0; k < n; k++) {
        PK_STEP(OP);
    }
#undef OP
    return (double)_mm512_reduce_add_ps(PK_SUM(_mm512_add_ps));
}

__attribute__((target("avx512f,avx512vnni"), noinline)) static double pk_int8(long n)
{
    __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(1);
    PK_ACC(__m512i, _mm512_setzero_si512());
#define OP(v) v = _mm512_dpbusd_epi32(v, x, y);
    for (long k = 0; k < n; k++) {
        PK_STEP(OP);
    }
#undef OP
    return (double)_mm512_reduce_add_epi32(PK_SUM(_mm512_add_epi32));
}

typedef struct pk_job {
    int kind, cpu;
    long iters;
    double secs, sink;
    pthread_barrier_t *bar;
} pk_job;

static void *pk_thread(void *arg)
{
    pk_job *j = arg;
    ib_thread_pin_self(j->cpu);
    pthread_barrier_wait(j->bar);
    struct timespec c0, c1; /* thread CPU time: a neighbour time-slicing us cannot lower it */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    j->sink = j->kind == 0 ? pk_fp32(j->iters) : j->kind == 1 ? pk_bf16(j->iters)
                                                               : pk_int8(j->iters);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    j->secs = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    return NULL;
}

/* Best of 5 aggregate GFLOP/s (GOP/s for int8) of `threads` pinned threads, each thread's
 * work per CPU-second it received (as bench/kernels' "per CPU-s": neighbours time-slicing
 * the cores cannot lower it); 0 when the ISA lacks the instruction. kind: 0 fp32, 1 bf16,
 * 2 int8. */
static double peak_gflops(int kind, int threads)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") ||
        (kind == 1 && !__builtin_cpu_supports("avx512bf16")) ||
        (kind == 2 && !__builtin_cpu_supports("avx512vnni")))
        return 0;
    static const double per_iter[3] = {16 * 32.0, 16 * 64.0, 16 * 128.0};
    long iters = 10000000;
    double r[5];
    int nt = threads < 64 ? threads : 64;
    for (int rep = 0; rep < 5; rep++) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)nt);
        pk_job jobs[64];
        pthread_t th[64];
        for (int t = 0; t < nt; t++) {
            jobs[t] = (pk_job){kind, ib_cpu_nth(t % ib_cpu_count()), iters, 0, 0, &bar};
            pthread_create(&th[t], NULL, pk_thread, &jobs[t]);
        }
        r[rep] = 0;
        for (int t = 0; t < nt; t++) {
            pthread_join(th[t], NULL);
            r[rep] += (double)iters * per_iter[kind] / fmax(jobs[t].secs, 1e-9) * 1e-9;
        }
        pthread_barrier_destroy(&bar);
    }
    qsort(r, 5, sizeof r[0], bu_cmp_d);
    return r[4];
}

/* ---- the model and our session ------------------------------------------------------ */

/* 2 x MACs of one sample at sequence length S (performance.md §2's convention). */
static double bert_flops(const ib_bert_config *c, double S)
{
    double H = (double)c->hidden, Fd = (double)c->ffn;
    double layer = 2 * S * (4 * H * H + 2 * H * Fd) + 2 * 2 * S * S * H;
    return (double)c->layers * layer + 2 * S * H * 2;
}

/* The model, also left in `path` (mkstemp template) for the ONNX Runtime peer. */
static ib_model *build_model(const ib_bert_config *c, char *path)
{
    ib_err err;
    ib_build *b = NULL;
    int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, "bert: cannot create a temporary file\n");
        exit(1);
    }
    close(fd);
    if (ib_models_bert_with(c, 1, &b, &err) || ib_build_write_file(b, path, NULL, &err)) {
        fprintf(stderr, "bert: building the model: %s\n", err.msg);
        unlink(path);
        exit(1);
    }
    ib_build_destroy(b);
    ib_model *m = NULL;
    int rc = ib_model_load_file(path, NULL, &m, &err);
    if (rc) {
        unlink(path);
        fprintf(stderr, "bert: %s\n", err.msg);
        exit(1);
    }
    return m;
}

typedef struct bert_in {
    int64_t batch, seq;
    int64_t *ids, *mask, *seg;
    float *start, *end;
    ib_tensor_view in[3], out[2];
} bert_in;

/* Random ids, mask all ones, segments 0 for the first half then 1. */
static int bert_in_init(bert_in *x, int64_t batch, int64_t seq, uint64_t seed)
{
    memset(x, 0, sizeof *x);
    size_t n = (size_t)(batch * seq);
    x->batch = batch;
    x->seq = seq;
    x->ids = malloc(n * sizeof *x->ids);
    x->mask = malloc(n * sizeof *x->mask);
    x->seg = malloc(n * sizeof *x->seg);
    x->start = malloc(n * sizeof *x->start);
    x->end = malloc(n * sizeof *x->end);
    if (!x->ids || !x->mask || !x->seg || !x->start || !x->end)
        return -1;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x->ids[i] = (int64_t)((seed >> 33) % IB_BERT_VOCAB);
        x->mask[i] = 1;
        x->seg[i] = (int64_t)(i % (size_t)seq) >= seq / 2;
    }
    ib_tensor_desc d = {IB_DTYPE_INT64, 2, {batch, seq}};
    x->in[0] = (ib_tensor_view){.name = IB_BERT_INPUT_IDS, .desc = d, .data = x->ids};
    x->in[1] = (ib_tensor_view){.name = IB_BERT_INPUT_MASK, .desc = d, .data = x->mask};
    x->in[2] = (ib_tensor_view){.name = IB_BERT_SEGMENT_IDS, .desc = d, .data = x->seg};
    x->out[0] = (ib_tensor_view){.name = IB_BERT_START_LOGITS, .data = x->start,
                                 .capacity = n * sizeof(float)};
    x->out[1] = (ib_tensor_view){.name = IB_BERT_END_LOGITS, .data = x->end,
                                 .capacity = n * sizeof(float)};
    return 0;
}

static void bert_in_free(bert_in *x)
{
    free(x->ids);
    free(x->mask);
    free(x->seg);
    free(x->start);
    free(x->end);
}

/* --backend and --half-chains (a program's options, set once by main): NULL = cpu */
static const char *g_backend;
static bool g_half_chains;

static ib_session *make_session(const ib_model *m, enum ib_precision p, int threads,
                                int64_t batch, bert_in *calib)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    if (g_backend)
        so.backend = g_backend;
    so.half_chains = g_half_chains;
    so.threads = threads;
    so.first_cpu = 0;
    so.precision = p;
    so.max_batch = batch;
    if (ib_precision_calibrated(p)) { /* int8, fp8: one calibration batch of the same kind */
        so.calib_inputs = calib->in;
        so.calib_batches = 1;
        so.calib_input_count = 3;
    }
    ib_session *s = NULL;
    ib_err err;
    if (ib_session_create(m, &so, &s, &err)) {
        fprintf(stderr, "bert: session %s: %s\n", ib_precision_name(p), err.msg);
        return NULL;
    }
    return s;
}

typedef struct run_ctx {
    ib_session *s;
    bert_in *x;
} run_ctx;

static int run_fn(void *p)
{
    run_ctx *c = p;
    ib_err err;
    int rc = ib_session_run(c->s, c->x->in, 3, c->x->out, 2, &err);
    if (rc)
        fprintf(stderr, "bert: run: %s\n", err.msg);
    return rc;
}

/* ---- --real: synthetic SQuAD features at 384 vs at their real length ------------------ */

typedef struct real_set {
    ib_squad *squad;
    ib_wp_vocab *vocab;
    ib_squad_features f;
    size_t n;
} real_set;

static int real_open(real_set *r, size_t n_questions, ib_err *err)
{
    memset(r, 0, sizeof *r);
    char dir[] = "/tmp/ib-bench-squad-XXXXXX", path[256];
    if (!mkdtemp(dir))
        return ib_err_set(err, IB_EIO, "bert: cannot create a temporary folder");
    int rc = ib_squad_synthesize(dir, n_questions, 11, err);
    snprintf(path, sizeof path, "%s/dev-v1.1.json", dir);
    if (!rc)
        rc = ib_squad_load(path, &r->squad, err);
    unlink(path);
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if (!rc)
        rc = ib_wp_vocab_load(path, &r->vocab, err);
    unlink(path);
    rmdir(dir);
    ib_squad_window w = {IB_BERT_MAX_SEQ, 128, 64};
    if (!rc)
        rc = ib_squad_featurize(r->squad, r->vocab, &w, &r->f, err);
    r->n = r->f.n;
    return rc;
}

static void real_close(real_set *r)
{
    ib_squad_features_free(&r->f);
    ib_wp_vocab_free(r->vocab);
    ib_squad_free(r->squad);
}

/* Real length of feature i: one past its last mask 1. */
static size_t real_len(const real_set *r, size_t i)
{
    const int32_t *m = r->f.input_mask + i * r->f.seq_len;
    size_t n = r->f.seq_len;
    while (n > 1 && m[n - 1] == 0)
        n--;
    return n;
}

/* Every feature once at batch 1, padded to 384 (cut = 0) or cut to its real length rounded
 * up to 32 (what bench_bert.c's "unpadded" variant feeds); samples/s, and the logits of the
 * real tokens in start/end ([n][384]). */
static double real_pass(ib_session *s, const real_set *r, bool cut, float *start, float *end)
{
    bert_in x;
    size_t L = r->f.seq_len;
    if (bert_in_init(&x, 1, (int64_t)L, 1))
        return 0;
    double t0 = bu_now_s();
    for (size_t i = 0; i < r->n; i++) {
        size_t len = cut ? (real_len(r, i) + 31) / 32 * 32 : L;
        len = len < L ? len : L;
        for (size_t t = 0; t < len; t++) {
            x.ids[t] = r->f.input_ids[i * L + t];
            x.mask[t] = r->f.input_mask[i * L + t];
            x.seg[t] = r->f.segment_ids[i * L + t];
        }
        for (int k = 0; k < 3; k++)
            x.in[k].desc.dims[1] = (int64_t)len;
        ib_err err;
        if (ib_session_run(s, x.in, 3, x.out, 2, &err)) {
            fprintf(stderr, "bert: run: %s\n", err.msg);
            bert_in_free(&x);
            return 0;
        }
        memcpy(start + i * L, x.start, len * sizeof *start);
        memcpy(end + i * L, x.end, len * sizeof *end);
    }
    double dt = bu_now_s() - t0;
    bert_in_free(&x);
    return (double)r->n / dt;
}

int main(int argc, char **argv)
{
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), reps = 3, no_torch = 0, no_ort = 0, quick = 0,
        profile = 0;
    size_t real_q = 0;
    int64_t layers = 24, seq = IB_BERT_MAX_SEQ;
    double seconds = 3, quiet_wait = 10;
    const char *batches = "1,8", *precs = "fp32,bf16,int8", *peer_modes = "";
    const char *python = getenv("IB_PYTHON") ? getenv("IB_PYTHON") : "/usr/bin/python3";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick"))
            quick = 1;
        else if (!strcmp(a, "--layers") && v)
            layers = atoll(argv[++i]);
        else if (!strcmp(a, "--threads") && v)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--reps") && v)
            reps = atoi(argv[++i]);
        else if (!strcmp(a, "--seconds") && v)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--seq") && v)
            seq = atoll(argv[++i]);
        else if (!strcmp(a, "--batches") && v)
            batches = argv[++i];
        else if (!strcmp(a, "--precisions") && v)
            precs = argv[++i];
        else if (!strcmp(a, "--quiet-wait") && v)
            quiet_wait = atof(argv[++i]);
        else if (!strcmp(a, "--python") && v)
            python = argv[++i];
        else if (!strcmp(a, "--no-torch"))
            no_torch = 1;
        else if (!strcmp(a, "--profile"))
            profile = 1;
        else if (!strcmp(a, "--no-ort"))
            no_ort = 1;
        else if (!strcmp(a, "--backend") && v)
            g_backend = argv[++i];
        else if (!strcmp(a, "--half-chains"))
            g_half_chains = true;
        else if (!strcmp(a, "--peer-modes") && v)
            peer_modes = argv[++i];
        else if (!strcmp(a, "--real") && v)
            real_q = (size_t)atoll(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--quick] [--layers 24] [--threads N] [--batches 1,8] "
                            "[--precisions fp32,bf16,int8,fp16,fp8] [--seq 384] [--reps 3] "
                            "[--seconds 3] "
                            "[--no-torch] [--no-ort] [--peer-modes jit,cast,...] [--real N] [--quiet-wait S] [--profile] "
                            "[--backend cpu|cuda] [--half-chains] [--python PATH]\n",
                    argv[0]);
            return !strcmp(a, "--help") || !strcmp(a, "-h") ? 0 : 2;
        }
    }
    if (quick && layers == 24)
        layers = 2;
    bool host = !g_backend || !strcmp(g_backend, "cpu");
    if (!host) /* the peers and the FMA peak are the CPU's: our figures (and --profile) alone */
        no_torch = no_ort = 1;
    if (threads < 1 || reps < 1 || reps > BU_MAX_REPS || layers < 1 || seq < 2 ||
        seq > IB_BERT_MAX_SEQ) {
        fprintf(stderr, "bert: bad arguments (threads >= 1, reps 1..%d, layers >= 1, seq "
                        "2..%d)\n", BU_MAX_REPS, IB_BERT_MAX_SEQ);
        return 2;
    }
    char plist[8][16], blist[8][16];
    int np = 0, nb = 0;
    bu_parse_list(precs, plist, &np, 8);
    bu_parse_list(batches, blist, &nb, 8);
    const char *src = getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".";
    char script[4096];
    snprintf(script, sizeof script, "%s/bench/models/bert_peer.py", src);
    if (!no_torch && access(script, R_OK)) {
        fprintf(stderr, "bert: %s not found (run from the repository root or set IB_SRC_DIR; "
                        "--no-torch skips the peer)\n", script);
        return 2;
    }
    double peak[3]; /* before anything starts OpenMP workers that could still spin */
    bu_wait_quiet(quiet_wait);
    for (int k = 0; k < 3; k++)
        peak[k] = host ? peak_gflops(k, threads) : 0; /* 0: no % of peak column */
    ib_bert_config cfg;
    ib_models_bert_config(false, &cfg);
    cfg.layers = layers;
    char model_file[] = "/tmp/ib-bench-bert-XXXXXX";
    ib_model *m = build_model(&cfg, model_file);
    double fl = bert_flops(&cfg, (double)seq);
    printf("BERT-Large widths (hidden 1024, 16 heads, FFN 4096), %lld layer%s, seq %lld, random "
           "weights; %.1f GFLOP/sample; %d threads pinned; median of %d runs of ~%.0f s\n",
           (long long)layers, layers > 1 ? "s" : "", (long long)seq, fl * 1e-9, threads, reps,
           seconds);
    /* with AMX tiles the bf16 and int8 rows' % peak is left out rather than printed against
     * the wrong peak (bu_cpu_has_amx) */
    const bool amx = bu_cpu_has_amx();
    if (host)
        printf("measured peak on %d pinned threads: fp32 %.0f GFLOP/s, bf16 %.0f GFLOP/s, int8 "
               "%.0f GOP/s%s\n", threads, peak[0], peak[1], peak[2],
               amx ? " (vector units; this CPU has AMX tiles, which oneDNN's bf16/int8 "
                     "matmuls use: no % peak for those rows)"
                   : "");
    if (amx)
        peak[1] = peak[2] = 0;
    else
        printf("backend %s: no CPU peak, no CPU peers (no %% peak column values)\n", g_backend);
    printf("%-5s %5s %11s %9s %8s %7s %9s %11s %9s %7s %9s %7s %s\n", "prec", "batch",
           "ours smp/s", "24L-equiv", "GFLOP/s", "% peak", "smp/CPU-s", "torch smp/s",
           "torch mode", "ratio", "ort smp/s", "vs ort", "notes");
    for (int pi = 0; pi < np; pi++) {
        enum ib_precision p;
        if (ib_precision_parse(plist[pi], &p)) {
            fprintf(stderr, "bert: unknown precision %s (fp32, bf16, int8; fp16, fp8 on "
                            "--backend cuda)\n", plist[pi]);
            return 2;
        }
        /* fp16 and fp8 have no cpu kernels: on the cpu they would time the reference kernels
         * (tools/gpu-check.sh profiles BERT at fp16 on cuda) */
        if (host && (p == IB_PRECISION_FP16 || p == IB_PRECISION_FP8)) {
            fprintf(stderr, "bert: precision %s needs a device backend (--backend cuda)\n",
                    plist[pi]);
            return 2;
        }
        /* the peak and peer column of the precision's width (16 or 8 bits; none off the cpu) */
        int kind = p == IB_PRECISION_FP32                               ? 0
                   : p == IB_PRECISION_BF16 || p == IB_PRECISION_FP16 ? 1
                                                                        : 2;
        double trate[8] = {0}, tcpu[8] = {0};
        char tmode[8][32] = {{0}};
        double peer_other = -1; /* share of the CPUs others used while the peer ran */
        if (!no_torch) {
            struct rusage u0, u1;
            double jb0 = 0, jt0 = 0, jb1 = 0, jt1 = 0;
            getrusage(RUSAGE_CHILDREN, &u0);
            bu_wait_quiet(quiet_wait);
            bu_stat_jiffies(&jb0, &jt0);
            char cmd[8400];
            snprintf(cmd, sizeof cmd,
                     "OMP_WAIT_POLICY=PASSIVE '%s' '%s' --precision %s --batches %s --threads %d "
                     "--reps %d --seconds %g --layers %lld --seq %lld --modes '%s'",
                     python, script, plist[pi], batches, threads, reps, seconds,
                     (long long)layers, (long long)seq, peer_modes);
            FILE *pp = popen(cmd, "r");
            char line[4096];
            int k = 0;
            while (pp && k < nb && fgets(line, sizeof line, pp)) {
                const char *r = strstr(line, "\"images_per_sec\": ");
                const char *mo = strstr(line, "\"mode\": \"");
                if (!r)
                    continue;
                trate[k] = strtod(r + 18, NULL);
                if (mo)
                    snprintf(tmode[k], sizeof tmode[k], "%.*s", (int)strcspn(mo + 9, "\""),
                             mo + 9);
                k++;
            }
            if (pp && pclose(pp))
                fprintf(stderr, "bert: the PyTorch peer failed (run: %s)\n", cmd);
            (void)tcpu;
            getrusage(RUSAGE_CHILDREN, &u1);
            bu_stat_jiffies(&jb1, &jt1);
            double child = (double)(u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) +
                           (double)(u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) +
                           1e-6 * (double)(u1.ru_utime.tv_usec - u0.ru_utime.tv_usec +
                                           u1.ru_stime.tv_usec - u0.ru_stime.tv_usec);
            if (jt1 > jt0)
                peer_other = fmax(0, (jb1 - jb0 - child * (double)sysconf(_SC_CLK_TCK)) /
                                         (jt1 - jt0));
        }
        double orate[8] = {0}, ocpu[8] = {0};
        if (!no_ort && p == IB_PRECISION_FP32) { /* ORT runs the fp32 file as given */
            char extra[128];
            snprintf(extra, sizeof extra, "--dim seq_length=%lld --int input_ids=0,30521",
                     (long long)seq);
            bu_wait_quiet(quiet_wait);
            bu_run_ort(model_file, batches, threads, reps, seconds, extra, orate, ocpu, nb);
        }
        for (int bi = 0; bi < nb; bi++) {
            int64_t batch = atoll(blist[bi]);
            if (batch < 1) {
                fprintf(stderr, "bert: bad batch %s\n", blist[bi]);
                return 2;
            }
            bert_in x;
            if (bert_in_init(&x, batch, seq, 7)) {
                fprintf(stderr, "bert: out of memory\n");
                return 1;
            }
            ib_session *s = make_session(m, p, threads, batch, &x);
            if (!s)
                return 1;
            run_ctx c = {s, &x};
            bu_measure me;
            if (bu_measure_fn(run_fn, &c, (double)batch, reps, seconds, quiet_wait, &me))
                return 1;
            double gf = me.rate * fl * 1e-9;
            char notes[96] = "";
            if (me.other_load > 0.05)
                snprintf(notes, sizeof notes, "contended (others %.0f%%)",
                         100 * me.other_load);
            if (peer_other > 0.05) /* over the whole peer run (model build included) */
                snprintf(notes + strlen(notes), sizeof notes - strlen(notes),
                         "%storch contended (others %.0f%%)", notes[0] ? "; " : "",
                         100 * peer_other);
            char tr[32] = "-", ra[32] = "-";
            if (trate[bi] > 0) {
                snprintf(tr, sizeof tr, "%.3f", trate[bi]);
                snprintf(ra, sizeof ra, "%.2fx", me.rate / trate[bi]);
            }
            char orr[32] = "-", ora[32] = "-";
            if (orate[bi] > 0) {
                snprintf(orr, sizeof orr, "%.3f", orate[bi]);
                snprintf(ora, sizeof ora, "%.2fx", me.rate / orate[bi]);
            }
            char pp[32] = "-";
            if (peak[kind] > 0)
                snprintf(pp, sizeof pp, "%.1f%%", 100 * gf / peak[kind]);
            printf("%-5s %5lld %11.3f %9.3f %8.1f %7s %9.3f %11s %9s %7s %9s %7s %s\n",
                   plist[pi], (long long)batch, me.rate, me.rate * (double)layers / 24.0, gf,
                   pp, me.per_cpu_s, tr,
                   tmode[bi][0] ? tmode[bi] : "-", ra, orr, ora, notes);
            fflush(stdout);
            if (profile) {
                char title[64];
                snprintf(title, sizeof title, "%s batch %lld", plist[pi], (long long)batch);
                bu_profile(s, run_fn, &c, 3, 14, title);
            }
            ib_session_destroy(s);
            bert_in_free(&x);
        }
    }
    if (real_q > 0) {
        real_set r;
        ib_err err;
        if (real_open(&r, real_q, &err)) {
            fprintf(stderr, "bert: synthetic SQuAD: %s\n", err.msg);
            return 1;
        }
        double mean = 0;
        for (size_t i = 0; i < r.n; i++)
            mean += (double)real_len(&r, i) / (double)r.n;
        size_t L = r.f.seq_len;
        float *s0 = calloc(r.n * L, sizeof *s0), *e0 = calloc(r.n * L, sizeof *e0);
        float *s1 = calloc(r.n * L, sizeof *s1), *e1 = calloc(r.n * L, sizeof *e1);
        if (!s0 || !e0 || !s1 || !e1)
            return 1;
        printf("\nreal lengths: %zu synthetic SQuAD features (%zu questions; "
               "src/dataset/synth_squad.c), mean real length %.0f of %zu tokens, batch 1\n",
               r.n, real_q, mean, L);
        printf("%-5s %14s %14s %8s %s\n", "prec", "padded smp/s", "cut smp/s", "speedup",
               "max |logit diff| on real tokens");
        for (int pi = 0; pi < np; pi++) {
            enum ib_precision p = !strcmp(plist[pi], "fp32")   ? IB_PRECISION_FP32
                                  : !strcmp(plist[pi], "bf16") ? IB_PRECISION_BF16
                                                               : IB_PRECISION_INT8;
            bert_in calib;
            if (bert_in_init(&calib, 1, (int64_t)L, 7))
                return 1;
            ib_session *s = make_session(m, p, threads, 1, &calib);
            if (!s)
                return 1;
            real_pass(s, &r, false, s0, e0); /* warm-up: compiles every length once */
            real_pass(s, &r, true, s1, e1);
            bu_wait_quiet(quiet_wait);
            double pad = real_pass(s, &r, false, s0, e0);
            double cut = real_pass(s, &r, true, s1, e1);
            double md = 0;
            for (size_t i = 0; i < r.n; i++)
                for (size_t t = 0; t < real_len(&r, i); t++)
                    md = fmax(md, fmax(fabs((double)s0[i * L + t] - (double)s1[i * L + t]),
                                       fabs((double)e0[i * L + t] - (double)e1[i * L + t])));
            printf("%-5s %14.3f %14.3f %7.2fx %.3g\n", plist[pi], pad, cut,
                   pad > 0 ? cut / pad : 0.0, md);
            fflush(stdout);
            ib_session_destroy(s);
            bert_in_free(&calib);
        }
        free(s0);
        free(e0);
        free(s1);
        free(e1);
        real_close(&r);
    }
    ib_model_destroy(m);
    unlink(model_file);
    return 0;
}
