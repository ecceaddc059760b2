/*
 * conv.h - the reference convolution core (im2col + GEMM) shared by Conv
 * and inferbench.FusedConv, and ConvTranspose's (GEMM + col2im). float32,
 * NCHW-style layout (N, C, spatial...). Internal to src/ir/ops.
 */
#ifndef IB_RUNTIME_OPS_CONV_H
#define IB_RUNTIME_OPS_CONV_H

#include "ir/ops/window.h"

typedef struct ib_conv_geom {
    ib_window w;
    int64_t N, C, M, group; /* batch, input channels, output channels, groups */
} ib_conv_geom;

/* Conv geometry from X, W descs and the node's attributes (group, kernel_shape,
 * strides, dilations, pads, auto_pad); errors name the node. */
int ib_conv_geom_init(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                      const ib_tensor_desc *w, ib_conv_geom *g);
/* Scratch bytes ib_conv_run needs. */
size_t ib_conv_scratch(const ib_conv_geom *g);
/* Y = conv(X, W) + B (B may be NULL); Y is (N, M, out...). */
void ib_conv_run(const ib_conv_geom *g, const float *X, const float *W, const float *B, float *Y,
                 void *scratch);

#endif
