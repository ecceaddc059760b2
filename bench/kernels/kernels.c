/*
 * kernels.c - kernel benchmark of the CPU backend (llm.c dev/ style):
 *
 *   1. the measured peak of this machine: fp32 FMA (zmm vfmadd231ps), bf16
 *      dot products (vdpbf16ps) and int8 dot products (vpdpbusd), as many
 *      independent chains as hide the latency, on 1 and on all pinned threads;
 *   2. GFLOP/s of large convolutions and GEMMs run through the CPU backend
 *      (the wrappers of src/backend/backend.h, not raw oneDNN) in fp32, bf16
 *      and int8, as % of the measured peak of the same precision and threads;
 *   3. threading: the cost of pinning per run, how long the pool spins after a
 *      run, and two concurrent sessions (partitioned, and fighting over CPUs).
 *
 * The machine is shared: every figure is the median of several timed
 * repetitions, printed with the best one and with the CPU time other
 * processes used meanwhile (from /proc/stat), so contended rows can be told
 * apart; --wait-quiet S waits up to S seconds for a quiet 0.5 s window
 * (< 5 % other load) before each row. FLOPs are 2 x MACs including padding
 * taps. Prints figures, asserts nothing (STYLE.md §11).
 * Usage: kernels [--quick] [--threads N] [--wait-quiet S]
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../models/bench_util.h"
#include "backend/backend.h"
#include "base/thread.h"
#include "base/time.h"

#define REPS 7

static bool g_quick;
static double g_wait_quiet; /* seconds to wait for a quiet window before each row (0 = no) */

/* ---- machine load ------------------------------------------------------------- */

typedef struct load_mark {
    unsigned long long busy, total; /* jiffies of all CPUs from /proc/stat */
    unsigned long long self;        /* this process's utime + stime */
} load_mark;

static void load_read(load_mark *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        unsigned long long v[10] = {0};
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) == 8) {
            m->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            m->total = m->busy + v[3] + v[4];
        }
        fclose(f);
    }
    f = fopen("/proc/self/stat", "r");
    if (f) {
        char buf[1024];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        unsigned long long ut = 0, st = 0;
        /* fields after the command: state ppid ... utime(14) stime(15) */
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
                        &st) == 2)
            m->self = ut + st;
        fclose(f);
    }
}

/* CPU seconds this process used so far (all threads). */
static double cpu_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Share of all CPUs used by other processes between a and b, in %. */
static double load_other(const load_mark *a, const load_mark *b)
{
    double total = (double)(b->total - a->total);
    if (total <= 0)
        return 0;
    double other = (double)(b->busy - a->busy) - (double)(b->self - a->self);
    return other < 0 ? 0 : 100.0 * other / total;
}

/* Wait (up to g_wait_quiet s) until other processes used < 5 % of the CPUs for 0.5 s. */
static void wait_quiet(void)
{
    int64_t deadline = ib_time_ns() + (int64_t)(g_wait_quiet * 1e9);
    while (g_wait_quiet > 0 && ib_time_ns() < deadline) {
        load_mark a, b;
        load_read(&a);
        ib_sleep_ns(500 * 1000000LL);
        load_read(&b);
        if (load_other(&a, &b) < 5.0)
            return;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- 1. peaks --------------------------------------------------------------------- */

#define CHAINS 16

/* 16 accumulators as named variables (an array would live in memory at -O2),
 * each updated once per iteration; the empty asm keeps them in registers. */
#define ACC_DECL(T, init) T a0 = init, a1 = init, a2 = init, a3 = init, a4 = init, a5 = init, \
    a6 = init, a7 = init, a8 = init, a9 = init, a10 = init, a11 = init, a12 = init, a13 = init, \
    a14 = init, a15 = init
#define ACC_STEP(OP)                                                                               \
    OP(a0) OP(a1) OP(a2) OP(a3) OP(a4) OP(a5) OP(a6) OP(a7) OP(a8) OP(a9) OP(a10) OP(a11)           \
        OP(a12) OP(a13) OP(a14) OP(a15)                                                            \
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6),     \
                     "+v"(a7));                                                                    \
    __asm__ volatile("" : "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11), "+v"(a12), "+v"(a13),          \
                     "+v"(a14), "+v"(a15))

__attribute__((target("avx512f"), noinline)) static double loop_fp32(long iters)
{
    __m512 b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
    ACC_DECL(__m512, _mm512_setzero_ps());
#define FMA(x) x = _mm512_fmadd_ps(x, b, c);
    for (long k = 0; k < iters; k++) {
        ACC_STEP(FMA);
    }
#undef FMA
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15)));
    return (double)_mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512bf16"), noinline)) static double loop_bf16(long iters)
{
    __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3c00);
    ACC_DECL(__m512, _mm512_setzero_ps());
#define DP(v) v = _mm512_dpbf16_ps(v, x, y);
    for (long k = 0; k < iters; k++) {
        ACC_STEP(DP);
    }
#undef DP
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15)));
    return (double)_mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512vnni"), noinline)) static double loop_int8(long iters)
{
    __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(1);
    ACC_DECL(__m512i, _mm512_setzero_si512());
#define DP(v) v = _mm512_dpbusd_epi32(v, x, y);
    for (long k = 0; k < iters; k++) {
        ACC_STEP(DP);
    }
#undef DP
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                                 _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
    s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)));
    s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(a12, a13), _mm512_add_epi32(a14, a15)));
    return (double)_mm512_reduce_add_epi32(s);
}

enum { P_FP32, P_BF16, P_INT8, P_COUNT };
static const char *const g_pname[P_COUNT] = {"fp32", "bf16", "int8"};
/* FLOPs (ops for int8) of one loop iteration: CHAINS instructions x lanes x 2 */
static const double g_iter_flops[P_COUNT] = {CHAINS * 32.0, CHAINS * 64.0, CHAINS * 128.0};

typedef struct peak_job {
    int kind, cpu;
    long iters;
    double secs, cpu_secs, sink;
    pthread_barrier_t *bar;
} peak_job;

static void *peak_thread(void *arg)
{
    peak_job *j = arg;
    if (j->cpu >= 0)
        ib_thread_pin_self(j->cpu);
    pthread_barrier_wait(j->bar);
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    int64_t t0 = ib_time_ns();
    j->sink = j->kind == P_FP32 ? loop_fp32(j->iters)
              : j->kind == P_BF16 ? loop_bf16(j->iters)
                                  : loop_int8(j->iters);
    j->secs = (double)(ib_time_ns() - t0) * 1e-9;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    j->cpu_secs = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    return NULL;
}

/* Aggregate GFLOP/s of `threads` pinned threads running the loop (median of REPS);
 * *per_cpu: the same per CPU-second actually received (sum over threads of
 * work / thread CPU time, median), which time slicing by neighbours cannot lower. */
static double peak_run(int kind, int threads, double *best, double *other, double *per_cpu)
{
    double rc[REPS];
    long iters = g_quick ? 2000000 : 20000000;
    double r[REPS];
    load_mark a, b;
    wait_quiet();
    load_read(&a);
    for (int rep = 0; rep < REPS; rep++) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)threads);
        peak_job jobs[64];
        pthread_t th[64];
        for (int t = 0; t < threads; t++) {
            jobs[t] = (peak_job){kind, ib_cpu_nth(t % ib_cpu_count()), iters, 0, 0, 0, &bar};
            pthread_create(&th[t], NULL, peak_thread, &jobs[t]);
        }
        double slowest = 0;
        rc[rep] = 0;
        for (int t = 0; t < threads; t++) {
            pthread_join(th[t], NULL);
            slowest = jobs[t].secs > slowest ? jobs[t].secs : slowest;
            rc[rep] += (double)iters * g_iter_flops[kind] / jobs[t].cpu_secs * 1e-9;
        }
        pthread_barrier_destroy(&bar);
        r[rep] = (double)threads * (double)iters * g_iter_flops[kind] / slowest * 1e-9;
    }
    load_read(&b);
    *other = load_other(&a, &b);
    qsort(r, REPS, sizeof r[0], cmp_double);
    qsort(rc, REPS, sizeof rc[0], cmp_double);
    *per_cpu = rc[REPS / 2];
    *best = r[REPS - 1];
    return r[REPS / 2];
}

static bool isa_has(int kind)
{
    __builtin_cpu_init();
    if (kind == P_BF16)
        return __builtin_cpu_supports("avx512bf16");
    if (kind == P_INT8)
        return __builtin_cpu_supports("avx512vnni");
    return __builtin_cpu_supports("avx512f");
}

/* ---- 2. kernels through the backend ----------------------------------------------- */

typedef struct job {
    ib_graph *g;
    ib_backend *b;
    ib_backend_buffer *buf;
    ib_backend_graph *gr;
    double flops;
} job;

static float frand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 40) / 16777216.0) * 2.0f - 1.0f;
}

static ib_value_id add_const(ib_graph *g, const char *name, ib_tensor_desc d, uint64_t *seed,
                             float scale)
{
    ib_tensor *t;
    if (ib_tensor_alloc(&d, &t))
        return IB_VALUE_NONE;
    float *p = t->data;
    for (int64_t i = 0; i < ib_tensor_desc_numel(&d); i++)
        p[i] = frand(seed) * scale;
    ib_value_id v = ib_graph_add_value(g, name, &d);
    ib_graph_set_constant(g, v, t);
    return v;
}

/* Bind x (input, uniform [-1, 1] or [0, 1]) and y, compile, fill x. */
static int job_compile(job *j, const char *backend, const ib_backend_config *cfg, ib_value_id x,
                       ib_value_id y, bool x_positive, ib_err *err)
{
    ib_graph *g = j->g;
    IB_VEC_PUSH(&g->inputs, x);
    IB_VEC_PUSH(&g->outputs, y);
    int rc = ib_graph_toposort(g, err);
    if (rc || (rc = ib_backend_create(backend, cfg, &j->b, err)))
        return rc;
    const ib_node *n = &g->nodes.data[0];
    ib_backend_binding bd[8];
    uint32_t nb = 0;
    size_t off = 0;
    for (uint32_t k = 0; k < n->n_inputs + 1; k++) {
        ib_value_id v = k < n->n_inputs ? n->inputs[k] : y;
        if (v == IB_VALUE_NONE)
            continue;
        const ib_value *val = &g->values.data[v];
        ib_backend_binding *b = &bd[nb++];
        memset(b, 0, sizeof *b);
        b->value = v;
        b->desc = val->desc;
        if (val->constant) {
            b->constant = val->constant;
            b->nbytes = val->constant->nbytes;
            continue;
        }
        b->boundary = true;
        b->nbytes = ib_tensor_desc_nbytes(&val->desc);
        b->offset = off;
        off = (off + b->nbytes + 4095) & ~(size_t)4095;
        if (v == x) { /* the calibrated range int8 needs */
            b->range_min = x_positive ? 0.0f : -1.0f;
            b->range_max = 1.0f;
        }
    }
    if ((rc = ib_backend_buffer_alloc(j->b, off, &j->buf, err)))
        return rc;
    for (uint32_t k = 0; k < nb; k++)
        if (!bd[k].constant)
            bd[k].buffer = j->buf;
    float *xp = (float *)((char *)ib_backend_buffer_host_ptr(j->buf) + bd[0].offset);
    uint64_t seed = 7;
    for (int64_t i = 0; i < ib_tensor_desc_numel(&bd[0].desc); i++)
        xp[i] = x_positive ? (frand(&seed) + 1.0f) * 0.5f : frand(&seed);
    ib_node_id nid = 0;
    ib_backend_subgraph sg = {.graph = g, .nodes = &nid, .n_nodes = 1, .bindings = bd,
                              .n_bindings = nb, .precision = cfg->precision};
    return ib_backend_graph_compile(j->b, &sg, &j->gr, err);
}

static void job_free(job *j)
{
    ib_backend_graph_free(j->gr);
    ib_backend_buffer_free(j->buf);
    ib_backend_destroy(j->b);
    ib_graph_destroy(j->g);
    memset(j, 0, sizeof *j);
}

/* Conv N x C x H x W, K filters k x k, stride 1, "same" padding. */
static int job_conv(job *j, const ib_backend_config *cfg, int64_t N, int64_t C, int64_t H,
                    int64_t K, int64_t k, ib_err *err)
{
    memset(j, 0, sizeof *j);
    if (ib_graph_create(&j->g))
        return IB_ENOMEM;
    uint64_t seed = 1;
    ib_tensor_desc xd = {IB_DTYPE_FLOAT32, 4, {N, C, H, H}}, wd = {IB_DTYPE_FLOAT32, 4, {K, C, k, k}},
                   bd = {IB_DTYPE_FLOAT32, 1, {K}}, yd = {IB_DTYPE_FLOAT32, 4, {N, K, H, H}};
    ib_value_id x = ib_graph_add_value(j->g, "x", &xd), y = ib_graph_add_value(j->g, "y", &yd);
    ib_value_id in[3] = {x, add_const(j->g, "w", wd, &seed, 0.05f),
                         add_const(j->g, "b", bd, &seed, 0.1f)};
    int64_t ks[2] = {k, k}, pads[4] = {k / 2, k / 2, k / 2, k / 2};
    ib_attr at[2] = {{.name = "kernel_shape", .type = IB_ATTR_INTS, .ints = ks, .count = 2},
                     {.name = "pads", .type = IB_ATTR_INTS, .ints = pads, .count = 4}};
    ib_graph_add_node(j->g, "Conv", "", "conv", in, 3, &y, 1, at, 2);
    j->flops = 2.0 * (double)(N * K * C * k * k * H * H);
    return job_compile(j, "cpu", cfg, x, y, true, err);
}

/* GEMM: A [M, K] (activations) x B [K, N] (constant weights). */
static int job_gemm(job *j, const ib_backend_config *cfg, int64_t M, int64_t K, int64_t N,
                    ib_err *err)
{
    memset(j, 0, sizeof *j);
    if (ib_graph_create(&j->g))
        return IB_ENOMEM;
    uint64_t seed = 2;
    ib_tensor_desc ad = {IB_DTYPE_FLOAT32, 2, {M, K}}, wd = {IB_DTYPE_FLOAT32, 2, {K, N}},
                   yd = {IB_DTYPE_FLOAT32, 2, {M, N}};
    ib_value_id a = ib_graph_add_value(j->g, "a", &ad), y = ib_graph_add_value(j->g, "y", &yd);
    ib_value_id in[2] = {a, add_const(j->g, "w", wd, &seed, 0.05f)};
    ib_graph_add_node(j->g, "MatMul", "", "gemm", in, 2, &y, 1, NULL, 0);
    j->flops = 2.0 * (double)M * (double)K * (double)N;
    return job_compile(j, "cpu", cfg, a, y, false, err);
}

/* Median GFLOP/s of REPS repetitions of ~0.25 s (0.05 s quick) of graph_run;
 * *per_cpu: work / (process CPU time / threads) over all repetitions, the
 * rate with each thread on its own CPU (spin-waits count as CPU time). */
static double job_time(job *j, int threads, double *best, double *other, double *per_cpu)
{
    ib_err err;
    ib_backend_graph_run(j->gr, &err); /* warm-up */
    int64_t t0 = ib_time_ns();
    ib_backend_graph_run(j->gr, &err);
    double one = (double)(ib_time_ns() - t0) * 1e-9;
    int iters = (int)((g_quick ? 0.05 : 0.25) / (one > 1e-6 ? one : 1e-6));
    iters = iters < 1 ? 1 : iters > 100000 ? 100000 : iters;
    double r[REPS];
    load_mark a, b;
    wait_quiet();
    load_read(&a);
    double c0 = cpu_secs();
    for (int rep = 0; rep < REPS; rep++) {
        t0 = ib_time_ns();
        for (int i = 0; i < iters; i++)
            ib_backend_graph_run(j->gr, &err);
        double s = (double)(ib_time_ns() - t0) * 1e-9 / iters;
        r[rep] = j->flops / s * 1e-9;
    }
    *per_cpu = j->flops * REPS * iters / ((cpu_secs() - c0) / threads) * 1e-9;
    load_read(&b);
    *other = load_other(&a, &b);
    qsort(r, REPS, sizeof r[0], cmp_double);
    *best = r[REPS - 1];
    return r[REPS / 2];
}

static void kernel_rows(double peak[P_COUNT][3], double peak_cpu[P_COUNT][3], int max_threads)
{
    static const struct {
        const char *name;
        int kind; /* 0 conv, 1 gemm */
        int64_t a, b, c, d, e;
        bool full; /* skipped with --quick */
    } rows[] = {
        {"conv 3x3 C=K=256 14x14 N=1", 0, 1, 256, 14, 256, 3, false},
        {"conv 3x3 C=K=256 14x14 N=8", 0, 8, 256, 14, 256, 3, true},
        {"conv 1x1 64->256 56x56 N=1", 0, 1, 64, 56, 256, 1, false},
        {"conv 1x1 64->256 56x56 N=8", 0, 8, 64, 56, 256, 1, true},
        {"gemm 384x1024x4096", 1, 384, 1024, 4096, 0, 0, false},
        {"gemm 4096x4096x4096", 1, 4096, 4096, 4096, 0, 0, true},
    };
    printf("\n## 2. Kernels through the CPU backend (median of %d; %% of the measured peak of the "
           "same precision and thread count)\n\n",
           REPS);
    int tlist[2] = {1, max_threads};
    const bool amx = bu_cpu_has_amx();
    if (amx)
        printf("This CPU has AMX tiles: oneDNN runs bf16 and int8 on them, so their %% of the "
               "vector peak reads \"AMX\".\n\n");
    printf("FLOPs are the direct convolution's: a 3x3 fp32 convolution the backend runs as "
           "Winograd (fewer multiplications; docs/cpu_backend.md §5b) can read above 100 %%.\n\n");
    printf("| kernel | prec | threads | GFLOP/s (GOP/s int8) median | best | %% of peak | per "
           "CPU-s | %% of peak per CPU-s | other load %% |\n|---|---|---|---|---|---|---|---|---|\n");
    for (size_t r = 0; r < IB_ARRAY_LEN(rows); r++) {
        if (g_quick && rows[r].full)
            continue;
        for (int p = 0; p < P_COUNT; p++)
            for (int ti = 0; ti < (max_threads > 1 ? 2 : 1); ti++) {
                if (peak[p][ti] <= 0)
                    continue;
                ib_backend_config cfg;
                ib_backend_config_defaults(&cfg);
                cfg.threads = tlist[ti];
                cfg.first_cpu = 0;
                cfg.precision = p == P_FP32 ? IB_PRECISION_FP32
                                : p == P_BF16 ? IB_PRECISION_BF16
                                              : IB_PRECISION_INT8;
                job j;
                ib_err err;
                ib_err_clear(&err);
                int rc = rows[r].kind == 0 ? job_conv(&j, &cfg, rows[r].a, rows[r].b, rows[r].c,
                                                      rows[r].d, rows[r].e, &err)
                                           : job_gemm(&j, &cfg, rows[r].a, rows[r].b, rows[r].c,
                                                      &err);
                if (rc) {
                    printf("| %s | %s | %d | failed: %s | | | | | |\n", rows[r].name, g_pname[p],
                           tlist[ti], err.msg);
                    job_free(&j);
                    continue;
                }
                double best, other, pc, med = job_time(&j, tlist[ti], &best, &other, &pc);
                /* bf16/int8 on AMX tiles: the vector peak does not bound them (400-500 %) */
                char pm[32] = "AMX", pp[32] = "AMX";
                if (!(amx && p != P_FP32)) {
                    snprintf(pm, sizeof pm, "%.0f %%", 100.0 * med / peak[p][ti]);
                    snprintf(pp, sizeof pp, "%.0f %%", 100.0 * pc / peak_cpu[p][ti]);
                }
                printf("| %s | %s | %d | %.1f | %.1f | %s | %.1f | %s | %.0f |\n",
                       rows[r].name, g_pname[p], tlist[ti], med, best, pm, pc, pp, other);
                fflush(stdout);
                job_free(&j);
            }
    }
}

/* ---- 3. threading --------------------------------------------------------------------- */

typedef struct conc {
    job *j;
    int runs;
    double secs;
    pthread_barrier_t *bar;
} conc;

static void *conc_thread(void *arg)
{
    conc *c = arg;
    ib_err err;
    ib_backend_graph_run(c->j->gr, &err);
    pthread_barrier_wait(c->bar);
    int64_t t0 = ib_time_ns();
    for (int i = 0; i < c->runs; i++)
        ib_backend_graph_run(c->j->gr, &err);
    c->secs = (double)(ib_time_ns() - t0) * 1e-9;
    return NULL;
}

/* Two sessions run the same GEMM concurrently from two threads. */
static void concurrent(const char *label, int threads, int first0, int first1)
{
    ib_backend_config c0, c1;
    ib_backend_config_defaults(&c0);
    c0.threads = threads;
    c0.first_cpu = first0;
    c1 = c0;
    c1.first_cpu = first1;
    job j[2];
    ib_err err;
    if (job_gemm(&j[0], &c0, 384, 1024, 4096, &err) || job_gemm(&j[1], &c1, 384, 1024, 4096, &err)) {
        printf("| %s | failed: %s |\n", label, err.msg);
        return;
    }
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    conc cs[2];
    pthread_t th[2];
    int runs = g_quick ? 5 : 30;
    load_mark a, b;
    wait_quiet();
    load_read(&a);
    for (int i = 0; i < 2; i++) {
        cs[i] = (conc){&j[i], runs, 0, &bar};
        pthread_create(&th[i], NULL, conc_thread, &cs[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    load_read(&b);
    double agg = j[0].flops * runs / cs[0].secs * 1e-9 + j[1].flops * runs / cs[1].secs * 1e-9;
    printf("| %s | %.1f | %.1f / %.1f | %.0f |\n", label, agg, j[0].flops * runs / cs[0].secs * 1e-9,
           j[1].flops * runs / cs[1].secs * 1e-9, load_other(&a, &b));
    pthread_barrier_destroy(&bar);
    job_free(&j[0]);
    job_free(&j[1]);
}

static void threading(int max_threads)
{
    printf("\n## 3. Threading (one libgomp pool shared by oneDNN and our kernels)\n\n");
    /* pinning cost: a tiny graph, with and without first_cpu */
    for (int pin = 0; pin < 2; pin++) {
        ib_backend_config cfg;
        ib_backend_config_defaults(&cfg);
        cfg.threads = max_threads;
        cfg.first_cpu = pin ? 0 : -1;
        job j;
        ib_err err;
        if (job_gemm(&j, &cfg, 1, 16, 16, &err)) {
            printf("tiny job failed: %s\n", err.msg);
            return;
        }
        ib_backend_graph_run(j.gr, &err);
        int n = g_quick ? 2000 : 20000;
        int64_t t0 = ib_time_ns();
        for (int i = 0; i < n; i++)
            ib_backend_graph_run(j.gr, &err);
        double us = (double)(ib_time_ns() - t0) * 1e-3 / n;
        /* spin after a run: CPU time burnt while the caller sleeps 50 ms */
        ib_backend_graph_run(j.gr, &err);
        double c0 = cpu_secs();
        ib_sleep_ns(50 * 1000000LL);
        double spin_ms = (cpu_secs() - c0) * 1e3;
        printf("- 1x16x16 matmul, %d threads, %s: %.2f us per graph_run; after a run the pool "
               "used %.2f ms of CPU in the next 50 ms\n",
               max_threads, pin ? "pinned (first_cpu=0)" : "unpinned", us, spin_ms);
        job_free(&j);
    }
    {
        ib_backend_config cfg;
        ib_backend_config_defaults(&cfg);
        cfg.threads = max_threads;
        cfg.first_cpu = 0;
        job j;
        ib_err err;
        if (!job_gemm(&j, &cfg, 384, 1024, 4096, &err)) {
            ib_backend_graph_run(j.gr, &err);
            double c0 = cpu_secs();
            int64_t t0 = ib_time_ns();
            ib_backend_graph_run(j.gr, &err);
            double run_cpu = cpu_secs() - c0, run_wall = (double)(ib_time_ns() - t0) * 1e-9;
            c0 = cpu_secs();
            ib_sleep_ns(50 * 1000000LL);
            printf("- gemm 384x1024x4096, %d pinned threads: one run %.2f ms wall, %.2f ms CPU; "
                   "the idle pool then spins %.2f ms of CPU (libgomp's bounded spin, then "
                   "futex sleep)\n",
                   max_threads, run_wall * 1e3, run_cpu * 1e3, (cpu_secs() - c0) * 1e3);
            job_free(&j);
        }
    }
    if (max_threads < 2)
        return;
    printf("\nTwo sessions running gemm 384x1024x4096 fp32 at the same time:\n\n| setup | "
           "aggregate GFLOP/s | session 0 / 1 | other load %% |\n|---|---|---|---|\n");
    concurrent("2 sessions x 1 thread, pinned to CPU 0 and CPU 1", 1, 0, 1);
    concurrent("2 sessions x 2 threads, both pinned from CPU 0 (oversubscribed)", 2, 0, 0);
    concurrent("2 sessions x 2 threads, unpinned (oversubscribed)", 2, -1, -1);
}

int main(int argc, char **argv)
{
    int max_threads = ib_cpu_count();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            g_quick = true;
        else if (strcmp(argv[i], "--wait-quiet") == 0 && i + 1 < argc)
            g_wait_quiet = atof(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            max_threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--quick] [--threads N] [--wait-quiet SECONDS]\n", argv[0]);
            return 2;
        }
    }
    if (max_threads < 1)
        max_threads = 1;
    const char *why;
    if (!ib_backend_available("cpu", &why)) {
        fprintf(stderr, "kernels: the cpu backend is not available: %s\n", why);
        return 1;
    }
    printf("# inferbench kernel benchmark: %d CPUs in the affinity mask, threads 1 and %d\n",
           ib_cpu_count(), max_threads);
    printf("\n## 1. Measured peak (%d independent chains per thread, threads pinned)\n\n| prec | "
           "instruction | threads | GFLOP/s (GOP/s int8) median | best | per CPU-s | other load "
           "%% |\n|---|---|---|---|---|---|---|\n",
           CHAINS);
    static const char *const insn[P_COUNT] = {"vfmadd231ps zmm", "vdpbf16ps zmm", "vpdpbusd zmm"};
    double peak[P_COUNT][3] = {{0}}, peak_cpu[P_COUNT][3] = {{0}};
    int tlist[2] = {1, max_threads};
    for (int p = 0; p < P_COUNT; p++) {
        if (!isa_has(p)) {
            printf("| %s | %s | - | not available on this CPU | | | |\n", g_pname[p], insn[p]);
            continue;
        }
        for (int ti = 0; ti < (max_threads > 1 ? 2 : 1); ti++) {
            double best, other;
            peak[p][ti] = peak_run(p, tlist[ti], &best, &other, &peak_cpu[p][ti]);
            printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.0f |\n", g_pname[p], insn[p],
                   tlist[ti], peak[p][ti], best, peak_cpu[p][ti], other);
            fflush(stdout);
        }
    }
    kernel_rows(peak, peak_cpu, max_threads);
    threading(max_threads);
    return 0;
}
