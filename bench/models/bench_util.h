/*
 * bench_util.h - what the bench/models programs share: clocks, the quiet-window wait, a
 * median-of-reps measurement of a callback, and running a PyTorch peer script that prints
 * one JSON line per configuration. Header-only (static functions): every bench/<area>/<name>.c
 * is its own program (Makefile BENCH_SRCS).
 *
 * Noise (performance.md §9.8): before each measurement the caller may wait (up to
 * quiet_wait seconds) for a window where other processes keep the CPUs below 5 % busy;
 * measurements report the median of the reps, the items per CPU-second of this process and
 * the share of the CPUs other processes used meanwhile ("contended" above 5 %). Figures are
 * printed, never asserted.
 */
#ifndef IB_BENCH_MODELS_BENCH_UTIL_H
#define IB_BENCH_MODELS_BENCH_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inferbench/runtime.h"
#include "onnx/build.h"

/* AMX tiles for bf16 and int8: oneDNN's matmuls and convolutions of those precisions run on
 * them, so the vector units' peaks (vdpbf16ps, vpdpbusd) do not bound them (400-500 %). */
static inline bool bu_cpu_has_amx(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("amx-bf16") && __builtin_cpu_supports("amx-int8");
}

static inline double bu_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline double bu_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline int bu_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Busy and total jiffies of all CPUs from /proc/stat. */
static inline int bu_stat_jiffies(double *busy, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 4)
        return -1;
    double t = 0;
    for (int i = 0; i < 8; i++)
        t += (double)v[i];
    *total = t;
    *busy = t - (double)v[3] - (double)v[4]; /* minus idle and iowait */
    return 0;
}

/* Wait until the machine is quiet (< 5 % busy over 0.5 s), at most max_s seconds; returns
 * the busy share of the last window. */
static inline double bu_wait_quiet(double max_s)
{
    double t_end = bu_now_s() + max_s, frac = 1;
    while (bu_now_s() < t_end) {
        double b0, t0, b1, t1;
        if (bu_stat_jiffies(&b0, &t0))
            return -1;
        struct timespec ts = {0, 500000000};
        nanosleep(&ts, NULL);
        if (bu_stat_jiffies(&b1, &t1))
            return -1;
        frac = t1 > t0 ? (b1 - b0) / (t1 - t0) : 0;
        if (frac < 0.05)
            return frac;
    }
    return frac;
}

#define BU_MAX_REPS 16

typedef struct bu_measure {
    double rate;       /* median items/s */
    double per_cpu_s;  /* items per CPU-second of this process */
    double other_load; /* share of all CPUs busy with other processes during the runs */
    double runs[BU_MAX_REPS];
    int nruns;
} bu_measure;

/* One call of the measured work: returns 0 on success. */
typedef int (*bu_fn)(void *ctx);

/* Two warm-up calls, one timed call to size the reps to ~seconds each, then reps timed
 * runs; items = what one call processes (images, samples). */
static inline int bu_measure_fn(bu_fn fn, void *ctx, double items, int reps, double seconds,
                                double quiet_wait, bu_measure *m)
{
    memset(m, 0, sizeof *m);
    if (fn(ctx) || fn(ctx))
        return -1;
    double t0 = bu_now_s();
    if (fn(ctx))
        return -1;
    double one = bu_now_s() - t0;
    int iters = (int)fmax(1, seconds / fmax(one, 1e-4));
    bu_wait_quiet(quiet_wait);
    double b0 = 0, tt0 = 0, b1 = 0, tt1 = 0, cpu0 = bu_cpu_s(), cpu = 0;
    bu_stat_jiffies(&b0, &tt0);
    for (int r = 0; r < reps && r < BU_MAX_REPS; r++) {
        double c = bu_cpu_s();
        t0 = bu_now_s();
        for (int i = 0; i < iters; i++)
            if (fn(ctx))
                return -1;
        double dt = bu_now_s() - t0;
        cpu += bu_cpu_s() - c;
        m->runs[m->nruns++] = items * iters / dt;
    }
    bu_stat_jiffies(&b1, &tt1);
    double mine = (bu_cpu_s() - cpu0) * (double)sysconf(_SC_CLK_TCK);
    m->other_load = tt1 > tt0 ? fmax(0, (b1 - b0 - mine) / (tt1 - tt0)) : 0;
    double sorted[BU_MAX_REPS];
    memcpy(sorted, m->runs, sizeof sorted);
    qsort(sorted, (size_t)m->nruns, sizeof sorted[0], bu_cmp_d);
    m->rate = sorted[m->nruns / 2];
    m->per_cpu_s = cpu > 0 ? items * iters * m->nruns / cpu : 0;
    return 0;
}

/* A/B of two configurations of the same work in one run: `rounds` alternations of ~seconds
 * of fa then ~seconds of fb (after two warm-up calls each), so a slow spell of a shared
 * machine hits both; *ra, *rb = the median items/s of each. Returns 0 on success. */
static inline int bu_ab(bu_fn fa, void *ca, bu_fn fb, void *cb, double items, int rounds,
                        double seconds, double *ra, double *rb)
{
    double a[BU_MAX_REPS], b[BU_MAX_REPS];
    if (rounds > BU_MAX_REPS)
        rounds = BU_MAX_REPS;
    if (fa(ca) || fa(ca) || fb(cb) || fb(cb))
        return -1;
    double t0 = bu_now_s();
    if (fa(ca))
        return -1;
    int iters = (int)fmax(1, seconds / fmax(bu_now_s() - t0, 1e-4));
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            bu_fn f = k ? fb : fa;
            void *c = k ? cb : ca;
            t0 = bu_now_s();
            for (int i = 0; i < iters; i++)
                if (f(c))
                    return -1;
            (k ? b : a)[r] = items * iters / (bu_now_s() - t0);
        }
    qsort(a, (size_t)rounds, sizeof a[0], bu_cmp_d);
    qsort(b, (size_t)rounds, sizeof b[0], bu_cmp_d);
    *ra = a[rounds / 2];
    *rb = b[rounds / 2];
    return 0;
}

/* --profile: run fn `runs` times with s's per-node profiling on and print where the time
 * goes (the top `top` nodes), headed by `title`. After the measurement, so it costs none. */
static inline void bu_profile(ib_session *s, bu_fn fn, void *ctx, int runs, int top,
                              const char *title)
{
    ib_session_set_profiling(s, true);
    for (int r = 0; r < runs; r++)
        if (fn(ctx)) {
            ib_session_set_profiling(s, false);
            return;
        }
    ib_profile pr;
    if (ib_session_profile(s, &pr, NULL) == IB_OK) {
        printf("-- profile: %s\n", title);
        ib_profile_write(&pr, top, stdout);
        ib_profile_free(&pr);
    }
    ib_session_set_profiling(s, false);
}

/* Run a peer command that prints one JSON line per configuration with "images_per_sec",
 * "cpu_seconds" and "images"; rates[i]/per_cpu[i] for line i (0 when missing). Returns the
 * number of lines read; a non-zero exit of the peer is reported on stderr. */
static inline int bu_run_peer(const char *cmd, double *rates, double *per_cpu, int n)
{
    for (int i = 0; i < n; i++)
        rates[i] = per_cpu[i] = 0;
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char line[4096];
    int i = 0;
    while (fgets(line, sizeof line, p) && i < n) {
        const char *r = strstr(line, "\"images_per_sec\": ");
        const char *c = strstr(line, "\"cpu_seconds\": ");
        const char *k = strstr(line, "\"images\": ");
        if (!r)
            continue;
        rates[i] = strtod(r + 18, NULL);
        if (c && k) {
            double cs = strtod(c + 15, NULL), im = strtod(k + 10, NULL);
            per_cpu[i] = cs > 0 ? im / cs : 0;
        }
        i++;
    }
    int st = pclose(p);
    if (st != 0)
        fprintf(stderr, "bench: the peer exited with status %d (run: %s)\n", st, cmd);
    return i;
}

/* The ONNX Runtime peer (bench/models/ort_peer.js, onnxruntime-node installed by
 * `sh tools/deps.sh bench`) on the same .onnx file: rates[i]/per_cpu[i] for batches[i]
 * ("1,32"); extra adds ort_peer.js options (--dim, --int, --per-sample). 0 when node or
 * the package is missing (said once on stderr). */
static inline int bu_run_ort(const char *model, const char *batches, int threads, int reps,
                             double seconds, const char *extra, double *rates, double *per_cpu,
                             int n)
{
    char script[4200], cmd[9000];
    snprintf(script, sizeof script, "%s/bench/models/ort_peer.js",
             getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".");
    if (access(script, R_OK) != 0) {
        fprintf(stderr, "bench: %s not found (run from the repository root or set IB_SRC_DIR)\n",
                script);
        for (int i = 0; i < n; i++)
            rates[i] = per_cpu[i] = 0;
        return 0;
    }
    snprintf(cmd, sizeof cmd,
             "node '%s' --model '%s' --batches %s --threads %d --reps %d --seconds %g %s",
             script, model, batches, threads, reps, seconds, extra ? extra : "");
    return bu_run_peer(cmd, rates, per_cpu, n);
}

/* Write a built model to path and load it, keeping the file (for the ONNX Runtime peer);
 * destroys b. NULL (after a message naming `what`) on failure. */
static inline ib_model *bu_load_built_keep(const char *what, ib_build *b, const char *path)
{
    ib_err err;
    ib_model *m = NULL;
    int rc = ib_build_error(b, &err);
    if (!rc)
        rc = ib_build_write_file(b, path, NULL, &err);
    ib_build_destroy(b);
    if (!rc)
        rc = ib_model_load_file(path, NULL, &m, &err);
    if (rc)
        fprintf(stderr, "%s: model: %s\n", what, err.msg);
    return rc ? NULL : m;
}

/* Write a built model to path, load it and remove the file; destroys b. NULL (after a
 * message naming `what`) on failure. */
static inline ib_model *bu_load_built(const char *what, ib_build *b, const char *path)
{
    ib_model *m = bu_load_built_keep(what, b, path);
    unlink(path);
    return m;
}

/* What a bench session differs in. calib: INT8 calibration batches of n_inputs views each. */
typedef struct bu_session_opts {
    enum ib_precision precision;
    int threads;
    int64_t max_batch;
    bool no_fusion;
    bool direct_conv; /* no Winograd convolutions (ib_session_options.direct_conv) */
    const char *backend; /* NULL = cpu */
    bool nhwc_fp16;      /* cuda at fp16 (ib_session_options.nhwc_fp16) */
    bool half_chains;    /* cuda at fp16/bf16 (ib_session_options.half_chains) */
    const ib_tensor_view *calib;
    size_t calib_batches, calib_inputs;
} bu_session_opts;

/* A session pinned from CPU 0; NULL (after a message naming `what`) on failure. */
static inline ib_session *bu_session(const char *what, const ib_model *m, const bu_session_opts *o)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.threads = o->threads;
    so.first_cpu = 0;
    so.precision = o->precision;
    so.max_batch = o->max_batch;
    so.disable_fusion = o->no_fusion;
    so.direct_conv = o->direct_conv;
    if (o->backend)
        so.backend = o->backend;
    so.nhwc_fp16 = o->nhwc_fp16;
    so.half_chains = o->half_chains;
    if (o->precision == IB_PRECISION_INT8) {
        so.calib_inputs = o->calib;
        so.calib_batches = o->calib_batches;
        so.calib_input_count = o->calib_inputs;
    }
    ib_session *s = NULL;
    ib_err err;
    if (ib_session_create(m, &so, &s, &err)) {
        fprintf(stderr, "%s: session %s: %s\n", what, ib_precision_name(o->precision), err.msg);
        return NULL;
    }
    return s;
}

/* A session with base's options, calibrated (INT8) on n images of [1, c, h, w] float32
 * stored back to back in calib, fed to the input `name`. */
static inline ib_session *bu_session_images(const char *what, const ib_model *m,
                                            const bu_session_opts *base, const char *name,
                                            int64_t c, int64_t h, int64_t w, float *calib,
                                            size_t n)
{
    ib_tensor_view *cv = calloc(n ? n : 1, sizeof *cv);
    if (!cv)
        return NULL;
    for (size_t i = 0; i < n; i++)
        cv[i] = (ib_tensor_view){.name = name,
                                 .desc = {IB_DTYPE_FLOAT32, 4, {1, c, h, w}},
                                 .data = calib + i * (size_t)(c * h * w)};
    bu_session_opts o = *base;
    o.calib = cv;
    o.calib_batches = n;
    o.calib_inputs = 1;
    ib_session *s = bu_session(what, m, &o);
    free(cv);
    return s;
}

/* The ours-vs-PyTorch image table of models and ssd: header, and one row with `digits`
 * decimals for the rates (flops per image for the GFLOP/s column). */
static inline void bu_table_header(void)
{
    printf("%-5s %5s %12s %10s %8s %12s %10s %7s %11s %7s %s\n", "prec", "batch", "ours img/s",
           "GFLOP/s", "img/cpus", "torch img/s", "torch/cpus", "ratio", "ort img/s", "vs ort",
           "notes");
}

/* ort: the ONNX Runtime rate (0: not measured, e.g. bf16/int8 rows: the peer runs the fp32
 * file as given). */
static inline void bu_table_row(const char *prec, const char *batch, const bu_measure *m,
                                double flops, double trate, double tcpu, double ort, int digits)
{
    char notes[64] = "";
    if (m->other_load > 0.05)
        snprintf(notes, sizeof notes, "contended (others %.0f%%)", 100 * m->other_load);
    printf("%-5s %5s %12.*f %10.1f %8.*f %12.*f %10.*f %7.2f %11.*f %7.2f %s\n", prec, batch,
           digits, m->rate, m->rate * flops / 1e9, digits, m->per_cpu_s, digits, trate, digits,
           tcpu, trate > 0 ? m->rate / trate : (double)NAN, digits, ort,
           ort > 0 ? m->rate / ort : (double)NAN, notes);
    fflush(stdout);
}

/* Split "a,b,c" into out[] (at most max items of 15 characters). */
static inline void bu_parse_list(const char *s, char out[][16], int *n, int max)
{
    *n = 0;
    while (*s && *n < max) {
        size_t l = strcspn(s, ",");
        snprintf(out[*n], 16, "%.*s", (int)l, s);
        (*n)++;
        s += l + (s[l] == ',');
    }
}

#endif
