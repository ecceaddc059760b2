/*
 * dlrm.c (bench/models) - DLRM pairs/s through our session next to PyTorch in the same run,
 * and the embedding traffic against the machine's DRAM triad bandwidth (issue 9's bench):
 *
 *   build/release/bench/models/dlrm [--cap 100000] [--batch 2048] [--threads N] [--reps 3]
 *                                   [--seconds 3] [--no-torch] [--no-ort] [--profile]
 *                                   [--python /usr/bin/python3]
 *
 * Model: src/models/dlrm.c (MLPerf v1.1 DLRM, tables of min(official rows, cap) x 128, fp32,
 * random weights); inputs: random ids uniform over each table (the worst case for caches),
 * dense log(x+1) of counts 0..999. The peer is bench/models/dlrm_peer.py (the reference's
 * nn.EmbeddingBag + bmm formulation, eager, same threads). Embedding GB/s counts the 26 x 128
 * x 4 bytes every pair gathers; the triad is a[i] = b[i] + s * c[i] over 3 x 128 MB on the
 * same threads (24 bytes per element, no write-allocate correction). Prints figures; asserts
 * nothing about them.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/dlrm.h"
#include "onnx/build.h"

#include "bench_util.h"

typedef struct triad_arg {
    double *a, *b, *c;
    size_t lo, hi;
    int reps;
} triad_arg;

static void *triad_part(void *p)
{
    triad_arg *t = p;
    for (int r = 0; r < t->reps; r++)
        for (size_t i = t->lo; i < t->hi; i++)
            t->a[i] = t->b[i] + 3.0 * t->c[i];
    return NULL;
}

/* Best-of-reps DRAM triad GB/s on `threads` threads. */
static double triad_gbs(int threads)
{
    size_t n = (128u << 20) / sizeof(double);
    double *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8);
    if (!a || !b || !c)
        return 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = 0;
        b[i] = (double)i;
        c[i] = 1.0;
    }
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        pthread_t th[64];
        triad_arg arg[64];
        int nt = threads < 64 ? threads : 64;
        double t0 = bu_now_s();
        for (int k = 0; k < nt; k++) {
            arg[k] = (triad_arg){a, b, c, n * (size_t)k / (size_t)nt,
                                 n * (size_t)(k + 1) / (size_t)nt, 1};
            pthread_create(&th[k], NULL, triad_part, &arg[k]);
        }
        for (int k = 0; k < nt; k++)
            pthread_join(th[k], NULL);
        double gbs = 24.0 * (double)n / (bu_now_s() - t0) / 1e9;
        best = fmax(best, gbs);
    }
    volatile double sink = a[n / 2];
    (void)sink;
    free(a);
    free(b);
    free(c);
    return best;
}

static double torch_rate(const char *python, uint64_t cap, int64_t batch, int threads,
                         int reps, double seconds)
{
    const char *src = getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".";
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s %s/bench/models/dlrm_peer.py --cap %llu --batch %lld --threads %d --reps %d "
             "--seconds %g",
             python, src, (unsigned long long)cap, (long long)batch, threads, reps, seconds);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char line[4096];
    double rate = 0;
    while (fgets(line, sizeof line, p)) {
        const char *k = strstr(line, "\"pairs_per_sec\":");
        if (k)
            rate = atof(k + 16);
    }
    pclose(p);
    return rate;
}

/* The embedding stage of the model alone: 26 x (Gather column, Gather table rows) + Concat
 * -> [N, 26*128], the same tables as the model at this cap. */
static ib_session *embedding_session(uint64_t cap, int64_t batch, int threads, bool fuse,
                                     enum ib_precision prec, ib_model **m)
{
    ib_build *b = NULL;
    const char *path = "/tmp/ib-bench-dlrm-emb.onnx";
    if (ib_build_create(1, 13, &b))
        return NULL;
    ib_value_id sx = ib_build_input(b, IB_DLRM_SPARSE_INPUT, IB_DTYPE_INT64, "N,26");
    ib_value_id cat[IB_DLRM_TABLES];
    for (size_t t = 0; t < IB_DLRM_TABLES; t++) {
        char name[64], shape[48];
        snprintf(name, sizeof name, "emb_l.%zu.weight", t);
        snprintf(shape, sizeof shape, "%llu,%d",
                 (unsigned long long)ib_dlrm_rows(t, cap, 0), IB_DLRM_EMBED_DIM);
        ib_value_id tab = ib_build_weight(b, name, IB_DTYPE_FLOAT32, shape,
                                          ib_fill_uniform(-0.01, 0.01));
        int64_t ti = (int64_t)t;
        snprintf(name, sizeof name, "sparse_col.%zu", t);
        ib_value_id col = ib_build_ints(b, name, &ti, 1, "");
        ib_value_id ids = IB_BUILD_OP(b, "Gather", "axis=1", sx, col);
        cat[t] = IB_BUILD_OP(b, "Gather", "axis=0", tab, ids);
    }
    ib_value_id all = ib_build_op(b, "Concat", cat, IB_DLRM_TABLES, "axis=1");
    ib_build_output(b, all, "emb", IB_DTYPE_FLOAT32, "N,3328");
    *m = bu_load_built("dlrm (embedding stage)", b, path);
    bu_session_opts so = {.precision = prec, .threads = threads, .max_batch = batch,
                          .no_fusion = !fuse};
    return *m ? bu_session("dlrm (embedding stage)", *m, &so) : NULL;
}

typedef struct emb_ctx {
    ib_session *s;
    ib_tensor_view in, out;
} emb_ctx; /* one run of an embedding session */

static int emb_run(void *p)
{
    emb_ctx *c = p;
    ib_err err;
    return ib_session_run(c->s, &c->in, 1, &c->out, 1, &err);
}

typedef struct dl_run_ctx {
    ib_session *s;
    ib_tensor_view *in, *out;
} dl_run_ctx; /* one run of the whole model */

static int dl_run(void *p)
{
    dl_run_ctx *c = p;
    ib_err err;
    return ib_session_run(c->s, c->in, 2, c->out, 1, &err);
}

int main(int argc, char **argv)
{
    uint64_t cap = 100000;
    int64_t batch = 2048;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), reps = 3, no_torch = 0, no_ort = 0,
        profile = 0;
    double seconds = 3;
    const char *python = "/usr/bin/python3";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cap") && v)
            cap = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--batch") && v)
            batch = atoll(argv[++i]);
        else if (!strcmp(a, "--threads") && v)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--reps") && v)
            reps = atoi(argv[++i]);
        else if (!strcmp(a, "--seconds") && v)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--python") && v)
            python = argv[++i];
        else if (!strcmp(a, "--no-torch"))
            no_torch = 1;
        else if (!strcmp(a, "--no-ort"))
            no_ort = 1;
        else if (!strcmp(a, "--profile"))
            profile = 1;
        else {
            fprintf(stderr, "usage: %s [--cap 100000] [--batch 2048] [--threads N] [--reps 3] "
                            "[--seconds 3] [--no-torch] [--no-ort] [--profile] "
                            "[--python PATH]\n", argv[0]);
            return !strcmp(a, "--help") || !strcmp(a, "-h") ? 0 : 2;
        }
    }
    if (batch < 1 || threads < 1 || reps < 1 || reps > 16 || cap < 1) {
        fprintf(stderr, "dlrm: bad arguments\n");
        return 2;
    }
    ib_err err;
    ib_build *b = NULL;
    ib_models_opts o = {.seed = 1, .tiny = false};
    const char *path = "/tmp/ib-bench-dlrm.onnx";
    if (ib_models_dlrm(&o, cap, &b, &err)) {
        fprintf(stderr, "dlrm: building the model: %s\n", err.msg);
        return 1;
    }
    ib_model *m = bu_load_built_keep("dlrm", b, path);
    bu_session_opts so = {.precision = IB_PRECISION_FP32, .threads = threads, .max_batch = batch};
    ib_session *s = m ? bu_session("dlrm", m, &so) : NULL;
    if (!s)
        return 1;
    float *dense = malloc((size_t)batch * 13 * sizeof *dense), *out = malloc((size_t)batch * 4);
    int64_t *ids = malloc((size_t)batch * 26 * sizeof *ids);
    uint64_t x = 12345;
    for (int64_t i = 0; dense && ids && i < batch; i++) {
        for (int d = 0; d < 13; d++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            dense[i * 13 + d] = (float)log1p((double)((x >> 33) % 1000));
        }
        for (int t = 0; t < 26; t++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            ids[i * 26 + t] = (int64_t)((x >> 20) % ib_dlrm_rows((size_t)t, cap, 0));
        }
    }
    ib_tensor_view in[2] = {
        {.name = IB_DLRM_DENSE_INPUT, .desc = {IB_DTYPE_FLOAT32, 2, {batch, 13}}, .data = dense},
        {.name = IB_DLRM_SPARSE_INPUT, .desc = {IB_DTYPE_INT64, 2, {batch, 26}}, .data = ids}};
    ib_tensor_view ov = {.name = IB_DLRM_OUTPUT, .data = out, .capacity = (size_t)batch * 4};
    for (int w = 0; w < 2; w++)
        if (ib_session_run(s, in, 2, &ov, 1, &err)) {
            fprintf(stderr, "dlrm: run: %s\n", err.msg);
            return 1;
        }
    double t0 = bu_now_s();
    ib_session_run(s, in, 2, &ov, 1, &err);
    int iters = (int)fmax(1, seconds / fmax(bu_now_s() - t0, 1e-4));
    double runs[16];
    for (int r = 0; r < reps; r++) {
        t0 = bu_now_s();
        for (int i = 0; i < iters; i++)
            ib_session_run(s, in, 2, &ov, 1, &err);
        runs[r] = (double)batch * iters / (bu_now_s() - t0);
    }
    qsort(runs, (size_t)reps, sizeof runs[0], bu_cmp_d);
    double ours = runs[reps / 2];
    double emb_bytes = 26.0 * 128 * 4;
    double triad = triad_gbs(threads);
    double peer = no_torch ? 0 : torch_rate(python, cap, batch, threads, reps, seconds);
    /* ONNX Runtime on the same file and the same inputs (ids matter: they decide the gathers) */
    double ort = 0, ort_cpu = 0;
    if (!no_ort) {
        const char *fd = "/tmp/ib-bench-dlrm-dense.bin", *fi = "/tmp/ib-bench-dlrm-ids.bin";
        FILE *f1 = fopen(fd, "wb"), *f2 = fopen(fi, "wb");
        bool ok = f1 && f2 && fwrite(dense, sizeof *dense, (size_t)batch * 13, f1) ==
                                  (size_t)batch * 13 &&
                  fwrite(ids, sizeof *ids, (size_t)batch * 26, f2) == (size_t)batch * 26;
        if (f1)
            fclose(f1);
        if (f2)
            fclose(f2);
        char bs[32], extra[512];
        snprintf(bs, sizeof bs, "%lld", (long long)batch);
        snprintf(extra, sizeof extra, "--raw %s=%s --raw %s=%s", IB_DLRM_DENSE_INPUT, fd,
                 IB_DLRM_SPARSE_INPUT, fi);
        if (ok)
            bu_run_ort(path, bs, threads, reps, seconds, extra, &ort, &ort_cpu, 1);
        unlink(fd);
        unlink(fi);
    }
    printf("DLRM (MLPerf v1.1 architecture, random weights), table row cap %llu, fp32, batch "
           "%lld pairs, %d threads\n", (unsigned long long)cap, (long long)batch, threads);
    printf("%-22s %14s %14s\n", "", "pairs/s", "embedding GB/s");
    printf("%-22s %14.0f %14.2f\n", "inferbench (cpu)", ours, ours * emb_bytes / 1e9);
    if (peer > 0)
        printf("%-22s %14.0f %14.2f\n", "PyTorch (eager)", peer, peer * emb_bytes / 1e9);
    else
        printf("%-22s %14s\n", "PyTorch (eager)", no_torch ? "skipped" : "unavailable");
    if (ort > 0)
        printf("%-22s %14.0f %14.2f\n", "ONNX Runtime (cpu)", ort, ort * emb_bytes / 1e9);
    else
        printf("%-22s %14s\n", "ONNX Runtime (cpu)", no_ort ? "skipped" : "unavailable");
    printf("DRAM triad: %.2f GB/s (%d threads); inferbench embedding traffic = %.1f %% of it\n",
           triad, threads, triad > 0 ? 100.0 * ours * emb_bytes / 1e9 / triad : 0.0);
    if (peer > 0)
        printf("ratio inferbench / PyTorch: %.2fx\n", ours / peer);
    if (ort > 0)
        printf("ratio inferbench / ONNX Runtime: %.2fx\n", ours / ort);
    if (profile) {
        dl_run_ctx rc = {s, in, &ov};
        bu_profile(s, dl_run, &rc, 20, 12, "fp32");
    }
    /* the embedding stage alone (26 lookups + concat), same ids: fused (inferbench.GatherConcat,
     * one pass with prefetching) and unfused (Gather x 26 + Concat), run alternately and the
     * best time of each kept (the least disturbed run on a shared machine) */
    float *eout = malloc((size_t)batch * 3328 * sizeof *eout);
    /* [0] unfused fp32, [1] fused fp32, [2] fused with bf16 tables (BF16 precision) */
    static const char *const label[3] = {"unfused:", "fused:", "bf16:"};
    ib_model *em[3] = {NULL, NULL, NULL};
    ib_session *es[3];
    for (int f = 0; f < 3; f++)
        es[f] = embedding_session(cap, batch, threads, f > 0,
                                  f == 2 ? IB_PRECISION_BF16 : IB_PRECISION_FP32, &em[f]);
    double best[3] = {1e30, 1e30, 1e30};
    for (int round = 0; eout && round < 10 * reps; round++)
        for (int f = 0; f < 3; f++) {
            emb_ctx ec = {es[f], in[1],
                          {.name = "emb", .data = eout, .capacity = (size_t)batch * 3328 * 4}};
            double t1 = bu_now_s();
            if (es[f] && emb_run(&ec) == 0)
                best[f] = fmin(best[f], bu_now_s() - t1);
        }
    for (int f = 0; f < 3; f++)
        if (best[f] < 1e30)
            printf("embedding stage alone, %-8s %9.0f pairs/s = %6.2f GB/s of fp32 rows "
                   "(%4.1f %% of the triad; best of %d; includes the session's copy of the "
                   "output)\n",
                   label[f], batch / best[f],
                   batch / best[f] * emb_bytes / 1e9,
                   triad > 0 ? 100.0 * batch / best[f] * emb_bytes / 1e9 / triad : 0.0,
                   10 * reps);
    for (int f = 0; f < 3; f++) {
        ib_session_destroy(es[f]);
        ib_model_destroy(em[f]);
    }
    free(eout);
    ib_session_destroy(s);
    ib_model_destroy(m);
    unlink(path);
    free(dense);
    free(ids);
    free(out);
    return 0;
}
