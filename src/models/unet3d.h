/*
 * unet3d.h - the 3D U-Net builders of the MLPerf medical-imaging benchmarks, with seeded
 * random weights (benchmarks.md §1.6, §4.2):
 *
 *   BraTS 2019 (v1.1): nnU-Net Generic_UNet "3d_fullres" of Task043 (nnUNetPlansv2.mlperf.1),
 *   6 levels of 32, 64, 128, 256, 320, 320 filters, input [N,4,224,224,160], 4 classes;
 *   each level two conv 3x3x3 (pad 1, bias) + InstanceNormalization (affine, eps 1e-5) +
 *   LeakyReLU(0.01) blocks, the first with stride 2 below level 0 (nnU-Net v2 trainers
 *   down-sample by strided convolution); decoder ConvTranspose 2x2x2 / 2 (no bias),
 *   Concat(upsampled, skip), two blocks; final conv 1x1x1 (no bias) -> logits. ONNX names
 *   "input" / "output" and opset 11, as unet_pytorch_to_onnx.py exports them.
 *
 *   KiTS19 (v2.0+): the same 6-level encoder/decoder shape (32, 64, 128, 256, 320, 320) on
 *   a [N,1,128,128,128] ROI with ReLU and 3 classes, opset 12 (the training reference's
 *   unet3d.py as remembered here; not checked against the official ONNX file).
 *
 * tiny: the same graph with every width / 4 (8, 16, 32, 64, 80, 80) on a small input
 * (BraTS 64x64x32, KiTS 32^3), for tests. Random weights make no accuracy claim.
 */
#ifndef IB_MODELS_UNET3D_H
#define IB_MODELS_UNET3D_H

#include <stdbool.h>
#include <stdint.h>

#include "inferbench/status.h"

struct ib_build;

#define IB_UNET3D_INPUT "input"
#define IB_UNET3D_OUTPUT "output"
#define IB_UNET3D_LEVELS 6

typedef struct ib_unet3d_cfg {
    int64_t in_channels;
    int64_t classes;
    int64_t patch[3]; /* spatial input shape, divisible by 2^(levels-1) */
    int64_t filters[IB_UNET3D_LEVELS];
    bool leaky; /* LeakyReLU(0.01) (nnU-Net) or ReLU */
    int64_t opset;
} ib_unet3d_cfg;

void ib_unet3d_cfg_brats(bool tiny, ib_unet3d_cfg *c);
void ib_unet3d_cfg_kits(bool tiny, ib_unet3d_cfg *c);

/* Multiply-accumulates of one volume (convolutions and transposed convolutions). */
double ib_unet3d_macs(const ib_unet3d_cfg *c);
/* Parameters (conv/convT weights and biases, norm scales and shifts). */
int64_t ib_unet3d_params(const ib_unet3d_cfg *c);

/* Build the graph: input "input" float32 [N,in,p0,p1,p2] -> output "output" float32
 * [N,classes,p0,p1,p2]. Ownership: *out is the caller's (ib_build_destroy). */
int ib_models_unet3d(const ib_unet3d_cfg *c, uint64_t seed, struct ib_build **out, ib_err *err);

#endif
