/*
 * window.h - sliding-window geometry shared by Conv, ConvTranspose and the
 * pooling ops: kernel size, strides, dilations, begin/end pads from `pads` or
 * `auto_pad` (NOTSET, SAME_UPPER, SAME_LOWER, VALID), ceil_mode, and the
 * output spatial sizes. Internal to src/ir/ops.
 */
#ifndef IB_RUNTIME_OPS_WINDOW_H
#define IB_RUNTIME_OPS_WINDOW_H

#include "ir/ops/ops_util.h"

#define IB_WIN_MAX (IB_MAX_DIMS - 2)

typedef struct ib_window {
    int32_t nsp;             /* spatial dims (input rank - 2) */
    int64_t in[IB_WIN_MAX];  /* input spatial sizes (IB_DIM_DYNAMIC allowed in infer) */
    int64_t out[IB_WIN_MAX]; /* output spatial sizes */
    int64_t k[IB_WIN_MAX];   /* kernel sizes */
    int64_t stride[IB_WIN_MAX];
    int64_t dil[IB_WIN_MAX];
    int64_t pad_b[IB_WIN_MAX];         /* padding before (top/left) */
    int64_t pad_e[IB_WIN_MAX];         /* padding after */
    int64_t in_size, out_size, k_size; /* products */
} ib_window;

/*
 * Forward window (Conv, pools). x: the N,C,spatial... input; kernel: nsp
 * kernel sizes (from W or kernel_shape). Reads strides, dilations (when
 * allow_dil), pads, auto_pad and ceil_mode (when allow_ceil) attributes.
 * Output size per ONNX: floor((in + pb + pe - ((k-1)*d+1)) / s) + 1, or ceil
 * with ceil_mode (then a last window starting in the end padding is dropped,
 * as in PyTorch and the ONNX opset-19 clarification); SAME_*: ceil(in / s).
 */
int ib_window_forward(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                      const int64_t *kernel, bool allow_dil, bool allow_ceil, ib_window *w);

/*
 * ConvTranspose window: out = s*(in-1) + output_padding + (k-1)*d + 1 - pb - pe,
 * or pads derived from output_shape / auto_pad SAME_* (output = in * s) with
 * the extra pad at the end for SAME_UPPER, at the start otherwise. An
 * output_shape beyond the reachable size leaves the excess at the end zero.
 */
int ib_window_transpose(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                        const int64_t *kernel, ib_window *w);

#endif
