/*
 * unet3d.c (bench/models) - 3D U-Net volumes/s through our session next to PyTorch in the same
 * run (issue 11's bench):
 *
 *   build/release/bench/models/unet3d [--dataset kits19|brats19] [--tiny] [--threads N]
 *                                     [--precisions fp32,bf16] [--reps 3] [--seconds 5]
 *                                     [--direct] [--no-torch] [--no-ort] [--python PATH]
 *
 * Model: src/models/unet3d.c with random weights, batch 1, each precision next to PyTorch at
 * the same precision (bf16: autocast): kits19 (default) is one
 * 1x128^3 sliding-window sub-volume of the KiTS model (0.97 TFLOP), brats19 one whole
 * 4x224x224x160 BraTS volume (3.70 TFLOP). The peer, bench/models/unet3d_peer.py, builds the
 * same graph from torch.nn modules (Conv3d, InstanceNorm3d(affine), LeakyReLU/ReLU,
 * ConvTranspose3d, cat) in Debian's PyTorch, eval + no_grad, same threads. Prints the rates,
 * the achieved GFLOP/s, the ratio and a "contended" flag; asserts nothing about them.
 * GFLOP/s counts the direct convolutions' operations; the 3x3x3 convolutions our CPU backend
 * runs by Winograd (cpu_kernels_wino.c) do fewer, so that column is an effective rate.
 * --direct adds, per precision, a row for our session with those convolutions on oneDNN's
 * direct kernels (ib_session_options.direct_conv): the A/B of the two algorithms in the same
 * run.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/unet3d.h"
#include "onnx/build.h"

#include "bench_util.h"

typedef struct run_ctx {
    ib_session *s;
    ib_tensor_view in, out;
} run_ctx;

static int run_once(void *p)
{
    run_ctx *c = p;
    ib_err err;
    int rc = ib_session_run(c->s, &c->in, 1, &c->out, 1, &err);
    if (rc)
        fprintf(stderr, "unet3d: run: %s\n", err.msg);
    return rc;
}

/* One precision: our rate next to the peer's at the same precision; one row. */
static int bench_precision(ib_model *m, const ib_unet3d_cfg *c, enum ib_precision prec,
                           const char *pname, const float *x, float *y, const char *dataset,
                           bool tiny, int threads, int reps, double seconds, bool no_torch,
                           bool direct, const char *python, const char *ort_model)
{
    bu_session_opts so = {.precision = prec, .threads = threads, .max_batch = 1,
                          .direct_conv = direct};
    ib_session *s = bu_session("unet3d", m, &so);
    if (!s)
        return 1;
    size_t vox = (size_t)(c->patch[0] * c->patch[1] * c->patch[2]);
    size_t nin = (size_t)c->in_channels * vox, nout = (size_t)c->classes * vox;
    run_ctx rc = {s,
                  {.name = IB_UNET3D_INPUT,
                   .desc = {IB_DTYPE_FLOAT32, 5,
                            {1, c->in_channels, c->patch[0], c->patch[1], c->patch[2]}},
                   .data = (void *)(uintptr_t)x,
                   .capacity = nin * 4},
                  {.name = IB_UNET3D_OUTPUT, .data = y, .capacity = nout * 4}};
    bu_measure mm;
    int bad = bu_measure_fn(run_once, &rc, 1.0, reps, seconds, 2.0, &mm);
    ib_session_destroy(s);
    if (bad) {
        fprintf(stderr, "unet3d: measuring failed\n");
        return 1;
    }
    double flop = 2.0 * ib_unet3d_macs(c), peer = 0, peer_cpu = 0;
    if (direct) {
        printf("%-5s %-10s %12.4f %8.1f %10.4f%s\n", pname, "direct", mm.rate,
               mm.rate * flop / 1e9, mm.per_cpu_s, mm.other_load > 0.05 ? " contended" : "");
        fflush(stdout);
        return 0;
    }
    if (!no_torch) {
        const char *src = getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".";
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "%s %s/bench/models/unet3d_peer.py --dataset %s%s --threads %d --reps %d "
                 "--seconds %g --precision %s",
                 python, src, dataset, tiny ? " --tiny" : "", threads, reps, seconds, pname);
        bu_run_peer(cmd, &peer, &peer_cpu, 1);
    }
    printf("%-5s %-10s %12.4f %8.1f %10.4f%s\n", pname, "inferbench", mm.rate,
           mm.rate * flop / 1e9, mm.per_cpu_s, mm.other_load > 0.05 ? " contended" : "");
    if (peer > 0)
        printf("%-5s %-10s %12.4f %8.1f %10.4f   ratio %.2fx (per CPU-second %.2fx)\n", pname,
               "PyTorch", peer, peer * flop / 1e9, peer_cpu, mm.rate / peer,
               peer_cpu > 0 ? mm.per_cpu_s / peer_cpu : 0.0);
    else
        printf("%-5s %-10s %12s\n", pname, "PyTorch", no_torch ? "skipped" : "unavailable");
    /* ONNX Runtime on the same .onnx file (fp32 rows: it runs the file as given) */
    double ort = 0, ort_cpu = 0;
    if (ort_model && prec == IB_PRECISION_FP32)
        bu_run_ort(ort_model, "1", threads, reps, seconds, NULL, &ort, &ort_cpu, 1);
    if (ort > 0)
        printf("%-5s %-10s %12.4f %8.1f %10.4f   vs ort %.2fx (per CPU-second %.2fx)\n", pname,
               "ORT", ort, ort * flop / 1e9, ort_cpu, mm.rate / ort,
               ort_cpu > 0 ? mm.per_cpu_s / ort_cpu : 0.0);
    fflush(stdout);
    return 0;
}

/* Two runs' outputs on the same input (Winograd's rounding against the direct kernels',
 * bf16 against fp32): the NMSE of the logits [classes, vox] against b's and the share of
 * voxels whose argmax class agrees. */
static void compare_outputs(const char *what, const float *a, const float *b, int64_t classes,
                            size_t vox)
{
    double num = 0, den = 0;
    size_t agree = 0;
    for (size_t v = 0; v < vox; v++) {
        int64_t ka = 0, kb = 0;
        for (int64_t k = 0; k < classes; k++) {
            double d = (double)a[(size_t)k * vox + v] - (double)b[(size_t)k * vox + v];
            num += d * d;
            den += (double)b[(size_t)k * vox + v] * (double)b[(size_t)k * vox + v];
            if (a[(size_t)k * vox + v] > a[(size_t)ka * vox + v])
                ka = k;
            if (b[(size_t)k * vox + v] > b[(size_t)kb * vox + v])
                kb = k;
        }
        agree += ka == kb;
    }
    printf("%s: logits nmse %.2e, argmax agrees on %.4f %% of voxels\n", what,
           den > 0 ? num / den : 0.0, 100.0 * (double)agree / (double)vox);
}

int main(int argc, char **argv)
{
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), reps = 3, no_torch = 0, no_ort = 0, tiny = 0,
        direct = 0;
    double seconds = 5;
    const char *python = "/usr/bin/python3", *dataset = "kits19", *precs = "fp32,bf16";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--threads") && v)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--reps") && v)
            reps = atoi(argv[++i]);
        else if (!strcmp(a, "--seconds") && v)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--python") && v)
            python = argv[++i];
        else if (!strcmp(a, "--dataset") && v)
            dataset = argv[++i];
        else if (!strcmp(a, "--precisions") && v)
            precs = argv[++i];
        else if (!strcmp(a, "--tiny"))
            tiny = 1;
        else if (!strcmp(a, "--no-torch"))
            no_torch = 1;
        else if (!strcmp(a, "--no-ort"))
            no_ort = 1;
        else if (!strcmp(a, "--direct"))
            direct = 1;
        else {
            fprintf(stderr, "usage: %s [--dataset kits19|brats19] [--tiny] [--threads N] "
                            "[--precisions fp32,bf16] [--reps 3] [--seconds 5] [--direct] "
                            "[--no-torch] [--no-ort] [--python PATH]\n", argv[0]);
            return !strcmp(a, "--help") || !strcmp(a, "-h") ? 0 : 2;
        }
    }
    bool kits = !strcmp(dataset, "kits19");
    if ((!kits && strcmp(dataset, "brats19")) || threads < 1 || reps < 1 || reps > 16) {
        fprintf(stderr, "unet3d: bad arguments\n");
        return 2;
    }
    ib_unet3d_cfg c;
    if (kits)
        ib_unet3d_cfg_kits(tiny, &c);
    else
        ib_unet3d_cfg_brats(tiny, &c);
    ib_err err;
    ib_build *b = NULL;
    const char *path = "/tmp/ib-bench-unet3d.onnx";
    if (ib_models_unet3d(&c, 1, &b, &err)) {
        fprintf(stderr, "unet3d: building the model: %s\n", err.msg);
        return 1;
    }
    ib_model *m = bu_load_built_keep("unet3d", b, path);
    if (!m)
        return 1;
    size_t vox = (size_t)(c.patch[0] * c.patch[1] * c.patch[2]);
    size_t nin = (size_t)c.in_channels * vox, nout = (size_t)c.classes * vox;
    float *x = malloc(nin * sizeof *x), *y = malloc(nout * sizeof *y),
          *yd = malloc(nout * sizeof *yd), *yf = malloc(nout * sizeof *yf);
    if (!x || !y || !yd || !yf)
        return 1;
    bool have_fp32 = false;
    uint64_t r = 7;
    for (size_t i = 0; i < nin; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(r >> 40) / 16777216.0 * 2.0 - 1.0);
    }
    printf("3D U-Net %s (%s, random weights), input %lldx%lldx%lldx%lld, %.3f TFLOP each, "
           "%d threads; PyTorch channels_last_3d, bf16 under autocast\n",
           dataset, tiny ? "tiny" : "full", (long long)c.in_channels, (long long)c.patch[0],
           (long long)c.patch[1], (long long)c.patch[2], 2.0 * ib_unet3d_macs(&c) / 1e12, threads);
    printf("%-5s %-10s %12s %8s %10s\n", "prec", "", kits ? "sub-vol/s" : "volumes/s", "GFLOP/s",
           "per CPU-s");
    printf("(GFLOP/s: the direct convolutions' operations per second; Winograd does fewer)\n");
    int rc = 0;
    static const char *const names[] = {"fp32", "bf16"};
    static const enum ib_precision ps[] = {IB_PRECISION_FP32, IB_PRECISION_BF16};
    for (int k = 0; k < 2 && !rc; k++) {
        if (!strstr(precs, names[k]))
            continue;
        rc = bench_precision(m, &c, ps[k], names[k], x, y, dataset, tiny, threads, reps, seconds,
                             no_torch, false, python, no_ort ? NULL : path);
        if (rc)
            break;
        if (ps[k] == IB_PRECISION_FP32) {
            memcpy(yf, y, nout * sizeof *y);
            have_fp32 = true;
        } else if (have_fp32) {
            compare_outputs("bf16  inferbench vs fp32", y, yf, c.classes, vox);
        }
        if (!direct)
            continue;
        rc = bench_precision(m, &c, ps[k], names[k], x, yd, dataset, tiny, threads, reps,
                             seconds, no_torch, true, python, NULL);
        if (!rc && ps[k] == IB_PRECISION_FP32) {
            compare_outputs("fp32  inferbench vs direct", y, yd, c.classes, vox);
        } else if (!rc) {
            compare_outputs("bf16  inferbench vs direct", y, yd, c.classes, vox);
            if (have_fp32)
                compare_outputs("bf16  direct vs fp32", yd, yf, c.classes, vox);
        }
    }
    ib_model_destroy(m);
    unlink(path);
    free(x);
    free(y);
    free(yd);
    free(yf);
    return rc;
}
