/*
 * window.c - sliding-window geometry for Conv, ConvTranspose and pooling:
 * attribute parsing and validation (every error names the node and the
 * attribute), auto_pad resolution and output sizes. See window.h for the
 * formulas.
 */
#include <string.h>

#include "ir/ops/window.h"

/* Every size, stride, dilation and pad is bounded so that the window
 * arithmetic below (products of two, sums of a few) stays within int64. */
#define WIN_LIMIT ((int64_t)1 << 30)

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* strides/dilations: INTS of nsp positive values, default 1. */
static int read_pos_ints(const ib_op_ctx *ctx, ib_err *err, const char *name, int32_t nsp,
                         int64_t *out)
{
    for (int32_t i = 0; i < nsp; i++)
        out[i] = 1;
    const int64_t *v;
    size_t c = ib_op_attr_ints(ctx, name, &v);
    if (!v) return IB_OK;
    if (c != (size_t)nsp)
        return IB_OP_BAD(ctx, err, "attribute '%s' has %zu values, expected %d", name, c, nsp);
    for (int32_t i = 0; i < nsp; i++) {
        if (v[i] < 1)
            return IB_OP_BAD(ctx, err, "attribute '%s'[%d] = %lld must be >= 1", name, i,
                             (long long)v[i]);
        if (v[i] > WIN_LIMIT)
            return IB_OP_UNSUP(ctx, err, "attribute '%s'[%d] = %lld is too large", name, i,
                               (long long)v[i]);
        out[i] = v[i];
    }
    return IB_OK;
}

static int read_common(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                       const int64_t *kernel, bool allow_dil, ib_window *w, int *mode)
{
    memset(w, 0, sizeof *w);
    if (x->ndim < 3 || x->ndim > IB_MAX_DIMS)
        return IB_OP_BAD(ctx, err, "input must have rank 3..%d (N, C, spatial...), not %d",
                         IB_MAX_DIMS, x->ndim);
    w->nsp = x->ndim - 2;
    for (int32_t i = 0; i < w->nsp; i++) {
        w->in[i] = x->dims[i + 2];
        if (kernel[i] < 1)
            return IB_OP_BAD(ctx, err, "kernel size %lld along spatial axis %d must be >= 1",
                             (long long)kernel[i], i);
        if (kernel[i] > WIN_LIMIT || w->in[i] > WIN_LIMIT)
            return IB_OP_UNSUP(ctx, err, "spatial axis %d is too large (input %lld, kernel %lld)",
                               i, (long long)w->in[i], (long long)kernel[i]);
        w->k[i] = kernel[i];
    }
    int rc = read_pos_ints(ctx, err, "strides", w->nsp, w->stride);
    if (!rc) rc = read_pos_ints(ctx, err, "dilations", w->nsp, w->dil);
    if (rc) return rc;
    if (!allow_dil)
        for (int32_t i = 0; i < w->nsp; i++)
            if (w->dil[i] != 1)
                return IB_OP_UNSUP(ctx, err, "attribute 'dilations' is not supported here");
    const char *ap = ib_op_attr_s(ctx, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0)
        *mode = 0;
    else if (strcmp(ap, "SAME_UPPER") == 0)
        *mode = 1;
    else if (strcmp(ap, "SAME_LOWER") == 0)
        *mode = 2;
    else if (strcmp(ap, "VALID") == 0)
        *mode = 3;
    else
        return IB_OP_UNSUP(ctx, err, "attribute auto_pad='%s' is not supported", ap);
    const int64_t *p;
    size_t c = ib_op_attr_ints(ctx, "pads", &p);
    if (p && *mode == 0) {
        if (c != 2 * (size_t)w->nsp)
            return IB_OP_BAD(ctx, err, "attribute 'pads' has %zu values, expected %d", c,
                             2 * w->nsp);
        for (int32_t i = 0; i < w->nsp; i++) {
            if (p[i] < 0 || p[i + w->nsp] < 0)
                return IB_OP_BAD(ctx, err, "attribute 'pads' must be >= 0");
            if (p[i] > WIN_LIMIT || p[i + w->nsp] > WIN_LIMIT)
                return IB_OP_UNSUP(ctx, err, "attribute 'pads' is too large");
            w->pad_b[i] = p[i];
            w->pad_e[i] = p[i + w->nsp];
        }
    }
    return IB_OK;
}

/* a * b, or -1 when either is unknown or the product overflows. */
static int64_t mul_or_unknown(int64_t a, int64_t b)
{
    if (a < 0 || b < 0 || (a && b > INT64_MAX / a)) return -1;
    return a * b;
}

static void products(ib_window *w)
{
    w->in_size = w->out_size = w->k_size = 1;
    for (int32_t i = 0; i < w->nsp; i++) {
        w->in_size = mul_or_unknown(w->in_size, w->in[i]);
        w->out_size = mul_or_unknown(w->out_size, w->out[i]);
        w->k_size = mul_or_unknown(w->k_size, w->k[i]);
    }
}

int ib_window_forward(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                      const int64_t *kernel, bool allow_dil, bool allow_ceil, ib_window *w)
{
    int mode = 0;
    int rc = read_common(ctx, err, x, kernel, allow_dil, w, &mode);
    if (rc) return rc;
    bool ceil_mode = allow_ceil && ib_op_attr_i(ctx, "ceil_mode", 0) != 0;
    for (int32_t i = 0; i < w->nsp; i++) {
        int64_t in = w->in[i], s = w->stride[i];
        int64_t dk = (w->k[i] - 1) * w->dil[i] + 1;
        if (in < 0) { /* dynamic spatial size: output dynamic too */
            w->out[i] = IB_DIM_DYNAMIC;
            continue;
        }
        if (mode == 1 || mode == 2) {
            int64_t out = ceil_div(in, s);
            int64_t total = (out - 1) * s + dk - in;
            if (total < 0) total = 0;
            w->pad_b[i] = mode == 1 ? total / 2 : total - total / 2;
            w->pad_e[i] = total - w->pad_b[i];
            w->out[i] = out;
            continue;
        }
        int64_t span = in + w->pad_b[i] + w->pad_e[i] - dk;
        if (span < 0)
            return IB_OP_BAD(ctx, err,
                             "window %lld (kernel %lld, dilation %lld) is larger than the padded "
                             "input %lld along spatial axis %d",
                             (long long)dk, (long long)w->k[i], (long long)w->dil[i],
                             (long long)(in + w->pad_b[i] + w->pad_e[i]), i);
        int64_t out = (ceil_mode ? ceil_div(span, s) : span / s) + 1;
        if (ceil_mode && (out - 1) * s >= in + w->pad_b[i]) out--;
        w->out[i] = out;
    }
    products(w);
    return IB_OK;
}

int ib_window_transpose(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                        const int64_t *kernel, ib_window *w)
{
    int mode = 0;
    int rc = read_common(ctx, err, x, kernel, true, w, &mode);
    if (rc) return rc;
    int64_t opad[IB_WIN_MAX] = {0}, oshape[IB_WIN_MAX];
    const int64_t *v;
    size_t c = ib_op_attr_ints(ctx, "output_padding", &v);
    if (v) {
        if (c != (size_t)w->nsp)
            return IB_OP_BAD(ctx, err, "attribute 'output_padding' has %zu values, expected %d", c,
                             w->nsp);
        for (int32_t i = 0; i < w->nsp; i++) {
            if (v[i] < 0 || (v[i] >= w->stride[i] && v[i] >= w->dil[i]))
                return IB_OP_BAD(ctx, err,
                                 "output_padding[%d] = %lld must be smaller than the stride or "
                                 "the dilation",
                                 i, (long long)v[i]);
            opad[i] = v[i];
        }
    }
    c = ib_op_attr_ints(ctx, "output_shape", &v);
    bool have_shape = v != NULL;
    if (have_shape) {
        /* output_shape may list only the spatial dims or the full shape */
        if (c == (size_t)w->nsp + 2)
            v += 2;
        else if (c != (size_t)w->nsp)
            return IB_OP_BAD(ctx, err, "attribute 'output_shape' has %zu values, expected %d", c,
                             w->nsp);
        for (int32_t i = 0; i < w->nsp; i++) {
            if (v[i] > WIN_LIMIT)
                return IB_OP_UNSUP(ctx, err, "output_shape[%d] = %lld is too large", i,
                                   (long long)v[i]);
            oshape[i] = v[i];
        }
    }
    for (int32_t i = 0; i < w->nsp; i++) {
        int64_t in = w->in[i], s = w->stride[i];
        int64_t dk = (w->k[i] - 1) * w->dil[i] + 1;
        if (in < 0) {
            w->out[i] = have_shape ? oshape[i] : IB_DIM_DYNAMIC;
            continue;
        }
        int64_t full = s * (in - 1) + opad[i] + dk;
        if (have_shape || mode == 1 || mode == 2) {
            int64_t out = have_shape ? oshape[i] : in * s;
            if (out < 1)
                return IB_OP_BAD(ctx, err, "output_shape[%d] = %lld must be >= 1", i,
                                 (long long)out);
            /* an output larger than the reachable size keeps zeros (plus
             * bias) at the end, as ONNX Runtime and the ONNX tests do */
            int64_t total = full > out ? full - out : 0;
            if (mode == 1) {
                w->pad_b[i] = total / 2;
                w->pad_e[i] = total - total / 2;
            } else {
                w->pad_b[i] = total - total / 2;
                w->pad_e[i] = total / 2;
            }
            w->out[i] = out;
        } else {
            if (mode == 3) w->pad_b[i] = w->pad_e[i] = 0;
            w->out[i] = full - w->pad_b[i] - w->pad_e[i];
            if (w->out[i] < 1)
                return IB_OP_BAD(ctx, err, "pads leave an empty output along spatial axis %d", i);
        }
    }
    products(w);
    return IB_OK;
}
