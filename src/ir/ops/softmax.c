/*
 * softmax.c - Softmax, LogSoftmax and Hardmax.
 *
 * Opset 13+: along one axis (default -1). Before 13: the input is coerced
 * to 2-D [prod(dims[:axis]), prod(dims[axis:])] (default axis 1) and the op
 * runs over the second dim. Max-subtracted, accumulated in double.
 */
#include <math.h>

#include "ir/ops/ops_util.h"

enum sm_kind { SM_SOFTMAX, SM_LOG, SM_HARD };

/* outer x len x inner decomposition of the input for this node's opset. */
static int sm_layout(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x, int64_t *outer,
                     int64_t *len, int64_t *inner)
{
    bool legacy = ib_op_opset(ctx) < 13;
    int32_t axis;
    int32_t rank = x->ndim;
    if (rank == 0) return IB_OP_BAD(ctx, err, "input must have rank >= 1");
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", legacy ? 1 : -1), rank, &axis);
    if (rc) return rc;
    *outer = *len = *inner = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (d < axis)
            *outer *= x->dims[d];
        else if (d == axis || legacy)
            *len *= x->dims[d];
        else
            *inner *= x->dims[d];
    }
    return IB_OK;
}

static int infer_sm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                    const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                    uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int64_t a, b, c;
    int rc = sm_layout(ctx, err, in[0], &a, &b, &c);
    out[0] = *in[0];
    return rc;
}

static int sm_run(const ib_op_ctx *ctx, const ib_tensor *x, ib_tensor *y, enum sm_kind kind,
                  ib_err *err)
{
    int64_t outer, len, inner;
    int rc = sm_layout(ctx, err, &x->desc, &outer, &len, &inner);
    if (rc) return rc;
    enum ib_dtype dt = x->desc.dtype;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            double mx = -IB_INF;
            int64_t arg = 0;
            for (int64_t i = 0; i < len; i++) {
                double v = ib_op_ld(x->data, dt, base + i * inner);
                if (v > mx) {
                    mx = v;
                    arg = i;
                }
            }
            if (kind == SM_HARD) {
                for (int64_t i = 0; i < len; i++)
                    ib_op_st(y->data, dt, base + i * inner, i == arg ? 1.0 : 0.0);
                continue;
            }
            double s = 0;
            for (int64_t i = 0; i < len; i++)
                s += exp(ib_op_ld(x->data, dt, base + i * inner) - mx);
            double ls = log(s);
            for (int64_t i = 0; i < len; i++) {
                double v = ib_op_ld(x->data, dt, base + i * inner) - mx;
                ib_op_st(y->data, dt, base + i * inner, kind == SM_LOG ? v - ls : exp(v) / s);
            }
        }
    return IB_OK;
}

static int k_softmax(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    return sm_run(ctx, in[0], out[0], SM_SOFTMAX, err);
}

static int k_logsoftmax(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                        ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    return sm_run(ctx, in[0], out[0], SM_LOG, err);
}

static int k_hardmax(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    return sm_run(ctx, in[0], out[0], SM_HARD, err);
}

static const ib_op_def defs[] = {
    {"", "Softmax", 1, 0, infer_sm, k_softmax, NULL, NULL, IB_DT_FLOATS, 1, 1, 1, 1, 0, 0},
    {"", "LogSoftmax", 1, 0, infer_sm, k_logsoftmax, NULL, NULL, IB_DT_FLOATS, 1, 1, 1, 1, 0, 0},
    {"", "Hardmax", 1, 0, infer_sm, k_hardmax, NULL, NULL, IB_DT_FLOATS, 1, 1, 1, 1, 0, 0},
};

const ib_op_family ib_ops_softmax = {"softmax", defs, IB_ARRAY_LEN(defs)};
