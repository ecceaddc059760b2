/*
 * models.c - end-to-end model throughput through our session next to PyTorch, in one run
 * (issue 4 "Performance"; ../shared/reference/performance.md): ResNet50-v1.5 images/s at
 * batch 1 and 32 for fp32, bf16 and int8, each followed by the PyTorch peer
 * (bench/models/torch_peer.py under Debian's python3-torch: jit + optimize_for_inference
 * for fp32, autocast bf16, PTQ int8) with the same thread count, and the ratio; then the
 * int8 top-1 agreement with fp32 on synthetic ImageNet images through the real
 * pre-processing.
 *
 * fp32 rows also run the same .onnx file through ONNX Runtime (bench/models/ort_peer.js,
 * onnxruntime-node; --no-ort skips it) with the same threads: its column and our ratio.
 *
 * Noise: see bench_util.h (quiet-window wait up to --quiet-wait s, median of --reps runs,
 * images per CPU-second, "contended" when other load exceeded 5 %). SSD-ResNet34 has its own
 * program, bench/models/ssd.c. Figures are printed, never asserted.
 *
 *   build/release/bench/models/models [--threads N] [--batches 1,32] [--precisions
 *       fp32,bf16,int8] [--reps 3] [--seconds 3] [--no-torch] [--no-ort] [--profile[=N]] [--ab-direct]
 *       [--backend cpu|cuda] [--nhwc-fp16] (cuda: our figures alone, with --profile per step)
 *       [--model FILE.onnx]
 *       [--agree N] [--quiet-wait S] [--python /usr/bin/python3]
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inferbench/base.h"
#include "inferbench/dataset.h"
#include "inferbench/metrics.h"
#include "inferbench/runtime.h"
#include "models/models.h"
#include "onnx/build.h"

#include "bench_util.h"

static ib_model *build_model(const char *path)
{
    ib_err err;
    ib_build *b = NULL;
    ib_models_opts o = {.seed = 1, .tiny = false};
    if (ib_models_resnet50(&o, &b, &err)) {
        fprintf(stderr, "models: building ResNet50: %s\n", err.msg);
        exit(1);
    }
    ib_model *m = bu_load_built_keep("models", b, path);
    if (!m)
        exit(1);
    return m;
}

/* Pre-processed synthetic ImageNet images (the real decode + resize + crop path). */
static float *images(size_t n, const char *dir)
{
    ib_err err;
    if (ib_imagenet_synthesize(dir, n, 42, &err)) {
        fprintf(stderr, "models: %s\n", err.msg);
        exit(1);
    }
    ib_imagenet *d = NULL;
    if (ib_imagenet_open(dir, NULL, &d, &err)) {
        fprintf(stderr, "models: %s\n", err.msg);
        exit(1);
    }
    size_t per = 3 * 224 * 224;
    float *x = malloc(n * per * sizeof *x);
    for (size_t i = 0; i < n; i++)
        if (!x || ib_imagenet_load(d, i, 224, IB_LAYOUT_NCHW, x + i * per, &err)) {
            fprintf(stderr, "models: %s\n", x ? err.msg : "out of memory");
            exit(1);
        }
    ib_imagenet_close(d);
    return x;
}

/* --backend and --nhwc-fp16 (a program's options, set once by main) */
static const char *g_backend;
static bool g_nhwc;

static ib_session *session(const ib_model *m, enum ib_precision p, int threads, int64_t batch,
                           float *calib, size_t n_calib)
{
    bu_session_opts o = {.precision = p, .threads = threads, .max_batch = batch,
                         .backend = g_backend, .nhwc_fp16 = g_nhwc};
    return bu_session_images("models", m, &o, IB_RESNET50_INPUT, 3, 224, 224, calib, n_calib);
}

static int run_once(ib_session *s, float *x, int64_t batch, int64_t *cls, float *prob)
{
    ib_tensor_view in = {.name = IB_RESNET50_INPUT,
                         .desc = {IB_DTYPE_FLOAT32, 4, {batch, 3, 224, 224}},
                         .data = x};
    ib_tensor_view out[2] = {
        {.name = IB_RESNET50_ARGMAX, .data = cls, .capacity = (size_t)batch * 8},
        {.name = IB_RESNET50_SOFTMAX, .data = prob, .capacity = (size_t)batch * 1001 * 4}};
    ib_err err;
    int rc = ib_session_run(s, &in, 1, out, prob ? 2 : 1, &err);
    if (rc)
        fprintf(stderr, "models: run: %s\n", err.msg);
    return rc;
}

typedef struct run_ctx {
    ib_session *s;
    float *x;
    int64_t batch;
    int64_t *cls;
} run_ctx;

static int run_ctx_fn(void *p)
{
    run_ctx *c = p;
    return run_once(c->s, c->x, c->batch, c->cls, NULL);
}

static int measure_ours(ib_session *s, float *x, int64_t batch, int reps, double seconds,
                        double quiet_wait, bu_measure *m)
{
    int64_t *cls = malloc((size_t)batch * sizeof *cls);
    run_ctx c = {s, x, batch, cls};
    int rc = cls ? bu_measure_fn(run_ctx_fn, &c, (double)batch, reps, seconds, quiet_wait, m) : -1;
    free(cls);
    return rc;
}

/* One python run for a precision, all batch sizes; rates[i] for batches[i] (0 on failure). */
static void measure_torch(const char *python, const char *script, const char *prec,
                          const char *batches, int threads, int reps, double quiet_wait,
                          double *rates, double *per_cpu, int nb)
{
    bu_wait_quiet(quiet_wait);
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' '%s' --precision %s --batches %s --threads %d --reps %d",
             python, script, prec, batches, threads, reps);
    bu_run_peer(cmd, rates, per_cpu, nb);
}

int main(int argc, char **argv)
{
    int threads = 0, reps = 3, agree_n = 64, no_torch = 0, no_ort = 0, profile = 0,
        ab_direct = 0;
    double seconds = 3, quiet_wait = 20;
    const char *batches = "1,32", *precs = "fp32,bf16,int8", *model_path = NULL;
    const char *python = getenv("IB_PYTHON") ? getenv("IB_PYTHON") : "/usr/bin/python3";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--threads") && v)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--reps") && v)
            reps = atoi(argv[++i]);
        else if (!strcmp(a, "--seconds") && v)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--batches") && v)
            batches = argv[++i];
        else if (!strcmp(a, "--precisions") && v)
            precs = argv[++i];
        else if (!strcmp(a, "--model") && v)
            model_path = argv[++i];
        else if (!strcmp(a, "--agree") && v)
            agree_n = atoi(argv[++i]);
        else if (!strcmp(a, "--quiet-wait") && v)
            quiet_wait = atof(argv[++i]);
        else if (!strcmp(a, "--python") && v)
            python = argv[++i];
        else if (!strcmp(a, "--no-torch"))
            no_torch = 1;
        else if (!strcmp(a, "--no-ort"))
            no_ort = 1;
        else if (!strcmp(a, "--ab-direct"))
            ab_direct = 1;
        else if (!strcmp(a, "--backend") && v)
            g_backend = argv[++i];
        else if (!strcmp(a, "--nhwc-fp16"))
            g_nhwc = true;
        else if (!strcmp(a, "--profile"))
            profile = 12;
        else if (!strncmp(a, "--profile=", 10) && atoi(a + 10) > 0)
            profile = atoi(a + 10); /* how many of the slowest steps to list */
        else {
            fprintf(stderr, "usage: %s [--threads N] [--batches 1,32] [--precisions "
                            "fp32,bf16,int8] [--reps 3] [--seconds 3] [--no-torch] [--no-ort] "
                            "[--profile[=N]] [--ab-direct] [--backend cpu|cuda] [--nhwc-fp16] "
                            "[--model FILE] [--agree N] [--quiet-wait S] [--python PATH]\n",
                    argv[0]);
            return 2;
        }
    }
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (g_backend && strcmp(g_backend, "cpu") != 0) /* the peers run on the CPU: no ratio */
        no_torch = no_ort = 1;
    if (reps < 1)
        reps = 1;
    char dir[] = "/tmp/ib-bench-models-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[4096], data[4096], script[4096];
    snprintf(path, sizeof path, "%s/resnet50.onnx", dir);
    snprintf(data, sizeof data, "%s/images", dir);
    /* the peer script lives next to this source file */
    snprintf(script, sizeof script, "%s/bench/models/torch_peer.py",
             getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".");
    if (!no_torch && access(script, R_OK) != 0) {
        fprintf(stderr, "models: %s not found (run from the repository root or set "
                        "IB_SRC_DIR); continuing with --no-torch\n",
                script);
        no_torch = 1;
    }
    ib_model *m = NULL;
    if (model_path) {
        ib_err err;
        if (ib_model_load_file(model_path, NULL, &m, &err)) {
            fprintf(stderr, "models: %s\n", err.msg);
            return 1;
        }
    } else {
        m = build_model(path);
    }
    ib_model_stats st;
    ib_model_get_stats(m, &st);
    size_t n_img = (size_t)(agree_n > 32 ? agree_n : 32);
    float *x = images(n_img, data);
    printf("ResNet50-v1.5 (%s): %llu parameters, %.3f GFLOP/image; %d threads pinned; median of "
           "%d runs of ~%.0f s\n",
           model_path ? model_path : "built, random weights", (unsigned long long)st.param_count,
           st.flops / 1e9, threads, reps, seconds);
    bu_table_header();
    char plist[4][16], blist[8][16];
    int np = 0, nb = 0;
    bu_parse_list(precs, plist, &np, 4);
    bu_parse_list(batches, blist, &nb, 8);
    for (int pi = 0; pi < np; pi++) {
        enum ib_precision p;
        if (ib_precision_parse(plist[pi], &p)) {
            fprintf(stderr, "models: unknown precision %s\n", plist[pi]);
            continue;
        }
        double trates[8] = {0}, tcpu[8] = {0};
        bu_measure ours[8];
        for (int bi = 0; bi < nb; bi++) {
            int64_t b = atoll(blist[bi]);
            float *xb = malloc((size_t)b * 3 * 224 * 224 * sizeof *xb);
            for (int64_t k = 0; k < b; k++)
                memcpy(xb + (size_t)k * 3 * 224 * 224, x + (size_t)(k % 32) * 3 * 224 * 224,
                       3 * 224 * 224 * sizeof *xb);
            ib_session *s = session(m, p, threads, b, x, 32);
            memset(&ours[bi], 0, sizeof ours[bi]);
            if (s)
                measure_ours(s, xb, b, reps, seconds, quiet_wait, &ours[bi]);
            if (s && ab_direct) { /* the same batch on oneDNN's direct kernels, alternating */
                bu_session_opts bo = {.precision = p, .threads = threads, .max_batch = b,
                                      .direct_conv = true};
                ib_session *d = p == IB_PRECISION_FP32 ? bu_session("models", m, &bo) : NULL;
                int64_t *cls = malloc((size_t)b * sizeof *cls);
                run_ctx ca = {s, xb, b, cls}, cb = {d, xb, b, cls};
                int64_t *cls2 = malloc((size_t)b * sizeof *cls2);
                double ra = 0, rb = 0;
                if (d && cls && cls2 && !bu_ab(run_ctx_fn, &ca, run_ctx_fn, &cb, (double)b,
                                               reps * 2, seconds / 2, &ra, &rb) &&
                    !run_once(s, xb, b, cls, NULL) && !run_once(d, xb, b, cls2, NULL)) {
                    int same = 0;
                    for (int64_t k = 0; k < b; k++)
                        same += cls[k] == cls2[k];
                    printf("-- A/B %s batch %lld: default %.2f img/s, direct convolutions %.2f "
                           "img/s: %.3fx (%d alternating rounds); top-1 equal on %d of %lld\n",
                           plist[pi], (long long)b, ra, rb, ra / rb, reps * 2, same,
                           (long long)b);
                }
                free(cls);
                free(cls2);
                ib_session_destroy(d);
            }
            if (s && profile) { /* where the time of this row goes (after its measurement) */
                int64_t *cls = malloc((size_t)b * sizeof *cls);
                ib_session_set_profiling(s, true);
                for (int r = 0; r < 5 && cls; r++)
                    run_once(s, xb, b, cls, NULL);
                ib_profile pr;
                if (cls && ib_session_profile(s, &pr, NULL) == IB_OK) {
                    printf("-- %s batch %lld:\n", plist[pi], (long long)b);
                    ib_profile_write(&pr, profile, stdout);
                    ib_profile_free(&pr);
                }
                free(cls);
            }
            ib_session_destroy(s);
            free(xb);
        }
        if (!no_torch)
            measure_torch(python, script, plist[pi], batches, threads, reps, quiet_wait, trates,
                          tcpu, nb);
        double orates[8] = {0}, ocpu[8] = {0};
        if (!no_ort && p == IB_PRECISION_FP32) { /* ORT runs the fp32 file as given */
            bu_wait_quiet(quiet_wait);
            bu_run_ort(model_path ? model_path : path, batches, threads, reps, seconds, NULL,
                       orates, ocpu, nb);
        }
        for (int bi = 0; bi < nb; bi++)
            bu_table_row(plist[pi], blist[bi], &ours[bi], st.flops, trates[bi], tcpu[bi],
                         orates[bi], 2);
    }
    /* int8 top-1 agreement with fp32 on the synthetic images */
    ib_session *f = session(m, IB_PRECISION_FP32, threads, 1, x, 32);
    ib_session *q = session(m, IB_PRECISION_INT8, threads, 1, x, 32);
    if (f && q && agree_n > 0) {
        int same = 0, distinct = 0;
        int64_t seen[1024];
        for (int i = 0; i < agree_n; i++) {
            int64_t a = -1, b = -1;
            run_once(f, x + (size_t)i * 3 * 224 * 224, 1, &a, NULL);
            run_once(q, x + (size_t)i * 3 * 224 * 224, 1, &b, NULL);
            same += a == b;
            bool dup = false;
            for (int k = 0; k < distinct; k++)
                dup |= seen[k] == a;
            if (!dup && distinct < 1024)
                seen[distinct++] = a;
        }
        printf("int8 vs fp32 top-1 agreement: %d / %d = %.1f %% (%d distinct fp32 classes; "
               "random weights, calibrated on the first 32 images)\n",
               same, agree_n, 100.0 * same / agree_n, distinct);
    }
    ib_session_destroy(f);
    ib_session_destroy(q);
    ib_model_destroy(m);
    free(x);
    char rm[4200];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0)
        fprintf(stderr, "models: could not remove %s\n", dir);
    return 0;
}
