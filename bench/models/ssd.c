/*
 * ssd.c (bench/models) - SSD-ResNet34 (1200x1200, benchmarks.md §1.2) images/s through our
 * session at batch 1 for fp32, bf16 and int8, each next to the PyTorch peer
 * (bench/models/ssd_peer.py under Debian's python3-torch, the same topology and threads) in
 * the same run, with the ratio (issue 4 "Performance"); then the time of the timed
 * post-processing (decode + NMS, ssd_post.c) per image on the model's outputs.
 *
 * Inputs are synthetic COCO images through the real decode + resize + normalise path;
 * weights are random (speed does not depend on them). int8 is calibrated on those images.
 * Noise handling as bench_util.h. Prints figures; asserts nothing about them.
 *
 *   build/release/bench/models/ssd [--threads N] [--batches 1] [--precisions fp32,bf16,int8]
 *       [--reps 3] [--seconds 3] [--calib 4] [--no-torch] [--quiet-wait S] [--python PATH]
 *       [--profile]
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset/coco.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "ir/ops/ssd_post.h"
#include "models/models.h"
#include "models/ssd_resnet34.h"
#include "onnx/build.h"

#include "bench_util.h"

#define PIX ((size_t)3 * 1200 * 1200)
#define N_LOC ((size_t)4 * IB_SSD_R34_ANCHORS)
#define N_CONF ((size_t)IB_SSD_R34_CLASSES * IB_SSD_R34_ANCHORS)

static void die(const char *what, const ib_err *err)
{
    fprintf(stderr, "ssd: %s: %s\n", what, err ? err->msg : "out of memory");
    exit(1);
}

static ib_model *build_model(const char *path)
{
    ib_err err;
    ib_build *b = NULL;
    ib_models_opts o = {.seed = 1, .tiny = false};
    if (ib_models_ssd_resnet34(&o, &b, &err))
        die("building SSD-ResNet34", &err);
    ib_model *m = bu_load_built_keep("ssd", b, path);
    if (!m)
        exit(1);
    return m;
}

/* n synthetic COCO images through ib_coco_load (decode, resize to 1200, normalise, NCHW). */
static float *images(size_t n, const char *dir)
{
    ib_err err;
    if (ib_coco_synthesize(dir, n, 42, &err))
        die("synthesizing COCO", &err);
    ib_coco *d = NULL;
    if (ib_coco_open(dir, NULL, &d, &err))
        die(dir, &err);
    float *x = malloc(n * PIX * sizeof *x);
    if (!x)
        die("images", NULL);
    for (size_t i = 0; i < n; i++)
        if (ib_coco_load(d, i, 1200, IB_LAYOUT_NCHW, x + i * PIX, &err))
            die("loading an image", &err);
    ib_coco_close(d);
    return x;
}

static ib_session *session(const ib_model *m, enum ib_precision p, int threads, int64_t batch,
                           float *calib, size_t n_calib)
{
    bu_session_opts o = {.precision = p, .threads = threads, .max_batch = batch};
    return bu_session_images("ssd", m, &o, IB_SSD_R34_INPUT, 3, 1200, 1200, calib,
                             n_calib);
}

typedef struct run_ctx {
    ib_session *s;
    float *x;
    int64_t batch;
    float *loc, *conf;
} run_ctx;

static int run_once(void *p)
{
    run_ctx *c = p;
    ib_tensor_view in = {.name = IB_SSD_R34_INPUT,
                         .desc = {IB_DTYPE_FLOAT32, 4, {c->batch, 3, 1200, 1200}},
                         .data = c->x};
    ib_tensor_view out[2] = {
        {.name = IB_SSD_R34_LOCS, .data = c->loc, .capacity = (size_t)c->batch * N_LOC * 4},
        {.name = IB_SSD_R34_CONFS, .data = c->conf, .capacity = (size_t)c->batch * N_CONF * 4}};
    ib_err err;
    int rc = ib_session_run(c->s, &in, 1, out, 2, &err);
    if (rc)
        fprintf(stderr, "ssd: run: %s\n", err.msg);
    return rc;
}

/* Milliseconds per image of decode + NMS on the last outputs (median of 5). */
static double post_ms(const float *loc, const float *conf, size_t *n_det)
{
    float *anchors = malloc((size_t)IB_SSD_R34_ANCHORS * 4 * sizeof *anchors);
    ib_ssd_post_params pp;
    ib_ssd_post_params_default(&pp);
    ib_ssd_det *dets = malloc((size_t)pp.max_out * sizeof *dets);
    double t[5];
    if (!anchors || !dets) {
        free(anchors);
        free(dets);
        return NAN;
    }
    ib_ssd_r34_anchors(anchors);
    for (int r = 0; r < 5; r++) {
        ib_err err;
        double t0 = bu_now_s();
        if (ib_ssd_post(loc, conf, anchors, IB_SSD_R34_ANCHORS, IB_SSD_R34_CLASSES, &pp, dets,
                        n_det, &err)) {
            fprintf(stderr, "ssd: post-processing: %s\n", err.msg);
            t[r] = NAN;
            continue;
        }
        t[r] = (bu_now_s() - t0) * 1e3;
    }
    qsort(t, 5, sizeof t[0], bu_cmp_d);
    free(anchors);
    free(dets);
    return t[2];
}

int main(int argc, char **argv)
{
    int threads = 0, reps = 3, no_torch = 0, no_ort = 0, n_calib = 4,
        profile = 0;
    double seconds = 3, quiet_wait = 20;
    const char *batches = "1", *precs = "fp32,bf16,int8";
    const char *python = getenv("IB_PYTHON") ? getenv("IB_PYTHON") : "/usr/bin/python3";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
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
        else if (!strcmp(a, "--calib") && v)
            n_calib = atoi(argv[++i]);
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
        else {
            fprintf(stderr, "usage: %s [--threads N] [--batches 1] [--precisions fp32,bf16,int8] "
                            "[--reps 3] [--seconds 3] [--calib 4] [--no-torch] [--no-ort] [--quiet-wait S] "
                            "[--python PATH] [--profile]\n",
                    argv[0]);
            return !strcmp(a, "--help") ? 0 : 2;
        }
    }
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (reps < 1)
        reps = 1;
    if (n_calib < 1)
        n_calib = 1;
    char dir[] = "/tmp/ib-bench-ssd-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[4096], data[4096], script[4096];
    snprintf(path, sizeof path, "%s/ssd_resnet34.onnx", dir);
    snprintf(data, sizeof data, "%s/coco", dir);
    snprintf(script, sizeof script, "%s/bench/models/ssd_peer.py",
             getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".");
    if (!no_torch && access(script, R_OK) != 0) {
        fprintf(stderr, "ssd: %s not found (run from the repository root or set IB_SRC_DIR); "
                        "continuing with --no-torch\n", script);
        no_torch = 1;
    }
    ib_model *m = build_model(path);
    ib_model_stats st;
    ib_model_get_stats(m, &st);
    char blist[8][16], plist[4][16];
    int nb = 0, np = 0;
    bu_parse_list(batches, blist, &nb, 8);
    bu_parse_list(precs, plist, &np, 4);
    int64_t bmax = 1;
    for (int i = 0; i < nb; i++)
        bmax = atoll(blist[i]) > bmax ? atoll(blist[i]) : bmax;
    size_t n_img = (size_t)(bmax > n_calib ? bmax : n_calib);
    float *x = images(n_img, data);
    float *loc = malloc((size_t)bmax * N_LOC * sizeof *loc);
    float *conf = malloc((size_t)bmax * N_CONF * sizeof *conf);
    if (!loc || !conf)
        die("outputs", NULL);
    printf("SSD-ResNet34 1200x1200 (built, random weights; synthetic COCO images): %llu "
           "parameters, %.1f GFLOP/image; %d threads pinned; median of %d runs of ~%.0f s\n",
           (unsigned long long)st.param_count, st.flops / 1e9, threads, reps, seconds);
    bu_table_header();
    for (int pi = 0; pi < np; pi++) {
        enum ib_precision p;
        if (ib_precision_parse(plist[pi], &p)) {
            fprintf(stderr, "ssd: unknown precision %s\n", plist[pi]);
            continue;
        }
        bu_measure ours[8];
        for (int bi = 0; bi < nb; bi++) {
            int64_t b = atoll(blist[bi]);
            memset(&ours[bi], 0, sizeof ours[bi]);
            ib_session *s = b > 0 ? session(m, p, threads, b, x, (size_t)n_calib) : NULL;
            run_ctx c = {s, x, b, loc, conf};
            if (s)
                bu_measure_fn(run_once, &c, (double)b, reps, seconds, quiet_wait, &ours[bi]);
            if (s && profile) {
                char title[96];
                snprintf(title, sizeof title, "%s batch %lld", plist[pi], (long long)b);
                bu_profile(s, run_once, &c, 2, 14, title);
            }
            ib_session_destroy(s);
        }
        double trates[8] = {0}, tcpu[8] = {0};
        if (!no_torch) {
            bu_wait_quiet(quiet_wait);
            char cmd[8400];
            snprintf(cmd, sizeof cmd,
                     "'%s' '%s' --precision %s --batches %s --threads %d --reps %d --seconds %g",
                     python, script, plist[pi], batches, threads, reps, seconds);
            bu_run_peer(cmd, trates, tcpu, nb);
        }
        double orates[8] = {0}, ocpu[8] = {0};
        if (!no_ort && p == IB_PRECISION_FP32) { /* ORT runs the fp32 file as given */
            bu_wait_quiet(quiet_wait);
            bu_run_ort(path, batches, threads, reps, seconds, NULL, orates, ocpu, nb);
        }
        for (int bi = 0; bi < nb; bi++)
            bu_table_row(plist[pi], blist[bi], &ours[bi], st.flops, trates[bi], tcpu[bi],
                         orates[bi], 3);
    }
    size_t n_det = 0;
    double pms = post_ms(loc, conf, &n_det);
    printf("post-processing (decode + per-class NMS, 1 thread): %.1f ms/image on the last "
           "outputs (%zu detections; random weights)\n", pms, n_det);
    ib_model_destroy(m);
    free(x);
    free(loc);
    free(conf);
    char rm[4200];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0)
        fprintf(stderr, "ssd: could not remove %s\n", dir);
    return 0;
}
