/*
 * unet3d.c (bench/models) - 3D U-Net volumes/s through our session next to PyTorch in the same
 * run (issue 11's bench):
 *
 *   build/release/bench/models/unet3d [--dataset kits19|brats19] [--tiny] [--threads N]
 *                                     [--reps 3] [--seconds 5] [--no-torch] [--python PATH]
 *
 * Model: src/models/unet3d.c with random weights, fp32, batch 1: kits19 (default) is one
 * 1x128^3 sliding-window sub-volume of the KiTS model (0.97 TFLOP), brats19 one whole
 * 4x224x224x160 BraTS volume (3.70 TFLOP). The peer, bench/models/unet3d_peer.py, builds the
 * same graph from torch.nn modules (Conv3d, InstanceNorm3d(affine), LeakyReLU/ReLU,
 * ConvTranspose3d, cat) in Debian's PyTorch, eval + no_grad, same threads. Prints the rates,
 * the achieved GFLOP/s, the ratio and a "contended" flag; asserts nothing about them.
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

int main(int argc, char **argv)
{
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), reps = 3, no_torch = 0, tiny = 0;
    double seconds = 5;
    const char *python = "/usr/bin/python3", *dataset = "kits19";
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
        else if (!strcmp(a, "--tiny"))
            tiny = 1;
        else if (!strcmp(a, "--no-torch"))
            no_torch = 1;
        else {
            fprintf(stderr, "usage: %s [--dataset kits19|brats19] [--tiny] [--threads N] "
                            "[--reps 3] [--seconds 5] [--no-torch] [--python PATH]\n", argv[0]);
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
    ib_model *m = bu_load_built("unet3d", b, path);
    bu_session_opts so = {.precision = IB_PRECISION_FP32, .threads = threads, .max_batch = 1};
    ib_session *s = m ? bu_session("unet3d", m, &so) : NULL;
    if (!s)
        return 1;
    size_t vox = (size_t)(c.patch[0] * c.patch[1] * c.patch[2]);
    size_t nin = (size_t)c.in_channels * vox, nout = (size_t)c.classes * vox;
    float *x = malloc(nin * sizeof *x), *y = malloc(nout * sizeof *y);
    if (!x || !y)
        return 1;
    uint64_t r = 7;
    for (size_t i = 0; i < nin; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(r >> 40) / 16777216.0 * 2.0 - 1.0);
    }
    run_ctx rc = {s,
                  {.name = IB_UNET3D_INPUT,
                   .desc = {IB_DTYPE_FLOAT32, 5, {1, c.in_channels, c.patch[0], c.patch[1], c.patch[2]}},
                   .data = x,
                   .capacity = nin * 4},
                  {.name = IB_UNET3D_OUTPUT, .data = y, .capacity = nout * 4}};
    bu_measure mm;
    if (bu_measure_fn(run_once, &rc, 1.0, reps, seconds, 2.0, &mm)) {
        fprintf(stderr, "unet3d: measuring failed\n");
        return 1;
    }
    double flop = 2.0 * ib_unet3d_macs(&c), peer = 0, peer_cpu = 0;
    if (!no_torch) {
        const char *src = getenv("IB_SRC_DIR") ? getenv("IB_SRC_DIR") : ".";
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "%s %s/bench/models/unet3d_peer.py --dataset %s%s --threads %d --reps %d "
                 "--seconds %g",
                 python, src, dataset, tiny ? " --tiny" : "", threads, reps, seconds);
        bu_run_peer(cmd, &peer, &peer_cpu, 1);
    }
    const char *unit = kits ? "sub-volumes/s" : "volumes/s";
    printf("3D U-Net %s (%s, random weights), fp32, input %lldx%lldx%lldx%lld, %.3f TFLOP each, "
           "%d threads\n", dataset, tiny ? "tiny" : "full", (long long)c.in_channels,
           (long long)c.patch[0], (long long)c.patch[1], (long long)c.patch[2], flop / 1e12,
           threads);
    printf("%-20s %14s %10s %16s\n", "", unit, "GFLOP/s", "per CPU-second");
    printf("%-20s %14.4f %10.1f %16.4f%s\n", "inferbench (cpu)", mm.rate, mm.rate * flop / 1e9,
           mm.per_cpu_s, mm.other_load > 0.05 ? " contended" : "");
    if (peer > 0)
        printf("%-20s %14.4f %10.1f %16.4f\n", "PyTorch (eager)", peer, peer * flop / 1e9, peer_cpu);
    else
        printf("%-20s %14s\n", "PyTorch (eager)", no_torch ? "skipped" : "unavailable");
    if (peer > 0)
        printf("ratio inferbench / PyTorch: %.2fx\n", mm.rate / peer);
    ib_session_destroy(s);
    ib_model_destroy(m);
    free(x);
    free(y);
    return 0;
}
