/*
 * quant.c - QuantizeLinear and DequantizeLinear (opsets 10-17): per-tensor
 * scale/zero point, and per-axis (1-D scale along `axis`, opset 13+).
 * Quantize: y = saturate(round_half_even(x / scale) + zero_point) into
 * uint8 (default) or int8, the type of the zero point. Dequantize:
 * y = (x - zero_point) * scale for int8, uint8 and int32 (zero point 0).
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

/* Validate scale/zero-point shapes; *axis = -1 for per-tensor. */
static int q_axis(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                  const ib_tensor_desc *s, const ib_tensor_desc *zp, int32_t *axis)
{
    *axis = -1;
    int64_t ns = ib_tensor_desc_numel(s);
    if (s->ndim == 0 || (s->ndim == 1 && ns == 1 && ib_op_opset(ctx) < 13)) {
        if (ns != 1) return IB_OP_BAD(ctx, err, "scale must be a scalar");
    } else {
        if (ib_op_opset(ctx) < 13) return IB_OP_BAD(ctx, err, "per-axis scale needs opset 13");
        if (s->ndim != 1) return IB_OP_BAD(ctx, err, "scale must be a scalar or 1-D");
        int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 1), x->ndim, axis);
        if (rc) return rc;
        if (ns == 1 && (x->dims[*axis] != 1))
            *axis = -1; /* a one-element scale applies to every element */
        else if (x->dims[*axis] >= 0 && ns != x->dims[*axis])
            return IB_OP_BAD(ctx, err, "scale has %lld values, axis %d has %lld", (long long)ns,
                             *axis, (long long)x->dims[*axis]);
    }
    if (zp && ib_tensor_desc_numel(zp) != ns)
        return IB_OP_BAD(ctx, err, "zero point has %lld values, scale %lld",
                         (long long)ib_tensor_desc_numel(zp), (long long)ns);
    return IB_OK;
}

static int infer_q(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                   const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                   uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    const ib_tensor_desc *zp = ib_op_in(in, n_in, 2);
    int32_t axis;
    int rc = q_axis(ctx, err, in[0], in[1], zp, &axis);
    if (rc) return rc;
    enum ib_dtype t = zp ? zp->dtype : IB_DTYPE_UINT8;
    if (t != IB_DTYPE_UINT8 && t != IB_DTYPE_INT8)
        return IB_OP_UNSUP(ctx, err, "quantizing to %s is not supported (uint8, int8)",
                           ib_dtype_name(t));
    out[0] = *in[0];
    out[0].dtype = t;
    return IB_OK;
}

static int infer_dq(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                    const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                    uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    const ib_tensor_desc *zp = ib_op_in(in, n_in, 2);
    int32_t axis;
    int rc = q_axis(ctx, err, in[0], in[1], zp, &axis);
    if (rc) return rc;
    if (zp && zp->dtype != in[0]->dtype)
        return IB_OP_BAD(ctx, err, "zero point type %s differs from input type %s",
                         ib_dtype_name(zp->dtype), ib_dtype_name(in[0]->dtype));
    out[0] = *in[0];
    out[0].dtype = in[1]->dtype;
    return IB_OK;
}

/* Channel of flat element i for a per-axis op (0 for per-tensor). */
static int64_t chan(const ib_tensor_desc *x, int32_t axis, int64_t i)
{
    if (axis < 0) return 0;
    int64_t inner = 1;
    for (int32_t d = axis + 1; d < x->ndim; d++)
        inner *= x->dims[d];
    return (i / inner) % x->dims[axis];
}

static int k_q(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
               ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *s = in[1], *zp = ib_op_cin(in, n_in, 2);
    int32_t axis;
    int rc = q_axis(ctx, err, &x->desc, &s->desc, zp ? &zp->desc : NULL, &axis);
    if (rc) return rc;
    enum ib_dtype t = out[0]->desc.dtype;
    double lo = t == IB_DTYPE_INT8 ? -128 : 0, hi = t == IB_DTYPE_INT8 ? 127 : 255;
    int64_t n = ib_tensor_desc_numel(&x->desc);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = chan(&x->desc, axis, i);
        float sc = (float)ib_op_ld(s->data, s->desc.dtype, c);
        if (!(sc != 0)) return IB_OP_BAD(ctx, err, "scale must not be zero");
        /* float division, as the ONNX reference computes x / y_scale in float32 */
        float q = (float)ib_op_ld(x->data, x->desc.dtype, i) / sc;
        double v = nearbyint((double)q) + (zp ? ib_op_ld(zp->data, zp->desc.dtype, c) : 0);
        v = v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
        ib_op_sti(out[0]->data, t, i, (int64_t)v);
    }
    return IB_OK;
}

static int k_dq(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *s = in[1], *zp = ib_op_cin(in, n_in, 2);
    int32_t axis;
    int rc = q_axis(ctx, err, &x->desc, &s->desc, zp ? &zp->desc : NULL, &axis);
    if (rc) return rc;
    int64_t n = ib_tensor_desc_numel(&x->desc);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = chan(&x->desc, axis, i);
        int64_t q = ib_op_ldi(x->data, x->desc.dtype, i) -
                    (zp ? ib_op_ldi(zp->data, zp->desc.dtype, c) : 0);
        /* float32 product, as the reference: (x - zp).astype(float32) * scale */
        float v = (float)q * (float)ib_op_ld(s->data, s->desc.dtype, c);
        ib_op_st(out[0]->data, out[0]->desc.dtype, i, (double)v);
    }
    return IB_OK;
}

static const ib_op_def defs[] = {
    {"", "QuantizeLinear", 10, 0, infer_q, k_q, NULL, NULL, IB_DT_F32 | IB_DT(INT32), 2, 3, 1, 1, 0,
     0},
    {"", "DequantizeLinear", 10, 0, infer_dq, k_dq, NULL, NULL,
     IB_DT(INT8) | IB_DT(UINT8) | IB_DT(INT32), 2, 3, 1, 1, 0, 0},
};

const ib_op_family ib_ops_quant = {"quant", defs, IB_ARRAY_LEN(defs)};
