/*
 * norm.c - normalisations: BatchNormalization (inference), InstanceNormalization
 * (and inferbench.InstanceNorm, the same followed by a fused Relu or LeakyRelu),
 * LayerNormalization (opset 17) and its internal twin inferbench.LayerNorm.
 *
 * BatchNormalization always normalises with the given running mean/var: the
 * optional training outputs of opsets 7-13 receive those running statistics
 * (the values ONNX defines for inference); training_mode=1 (opset 14+) and
 * spatial=0 (opsets 7-8) are not supported. Statistics accumulate in double.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

/* ---- BatchNormalization ------------------------------------------------------ */

static int bn_check(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *const *in)
{
    if (in[0]->ndim < 2)
        return IB_OP_BAD(ctx, err, "X must have rank >= 2 (N, C, ...), not %d", in[0]->ndim);
    int64_t C = in[0]->dims[1];
    static const char *const names[] = {"", "scale", "B", "mean", "var"};
    for (int i = 1; i <= 4; i++) {
        const ib_tensor_desc *d = in[i];
        if (d->ndim != 1 || (C >= 0 && d->dims[0] >= 0 && d->dims[0] != C))
            return IB_OP_BAD(ctx, err, "%s must be 1-D with C = %lld values", names[i],
                             (long long)C);
    }
    if (ib_op_opset(ctx) < 9 && ib_op_attr_i(ctx, "spatial", 1) != 1)
        return IB_OP_UNSUP(ctx, err, "attribute spatial=0 is not supported");
    if (ib_op_opset(ctx) >= 14 && ib_op_attr_i(ctx, "training_mode", 0) != 0)
        return IB_OP_UNSUP(ctx, err, "attribute training_mode=1 is not supported (inference only)");
    return IB_OK;
}

static int infer_bn(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                    const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                    uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(dd);
    int rc = bn_check(ctx, err, in);
    if (rc) return rc;
    out[0] = *in[0];
    for (uint32_t i = 1; i < n_out; i++)
        out[i] = *in[i < 3 ? i + 2 : i];
    return IB_OK;
}

static int k_bn(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    const ib_tensor_desc *d[5];
    for (int i = 0; i < 5; i++)
        d[i] = &in[i]->desc;
    int rc = bn_check(ctx, err, d);
    if (rc) return rc;
    double eps = (double)ib_op_attr_f(ctx, "epsilon", 1e-5f);
    const ib_tensor *x = in[0];
    int64_t N = x->desc.dims[0], C = x->desc.dims[1], sp = 1;
    for (int32_t i = 2; i < x->desc.ndim; i++)
        sp *= x->desc.dims[i];
    enum ib_dtype dt = x->desc.dtype;
    for (int64_t c = 0; c < C; c++) {
        double sc = ib_op_ld(in[1]->data, in[1]->desc.dtype, c);
        double b = ib_op_ld(in[2]->data, in[2]->desc.dtype, c);
        double mu = ib_op_ld(in[3]->data, in[3]->desc.dtype, c);
        double var = ib_op_ld(in[4]->data, in[4]->desc.dtype, c);
        double mul = sc / sqrt(var + eps), add = b - mu * mul;
        for (int64_t n = 0; n < N; n++) {
            int64_t base = (n * C + c) * sp;
            if (dt == IB_DTYPE_FLOAT32) {
                const float *xs = (const float *)x->data + base;
                float *ys = (float *)out[0]->data + base;
                for (int64_t i = 0; i < sp; i++)
                    ys[i] = (float)((double)xs[i] * mul + add);
            } else {
                for (int64_t i = 0; i < sp; i++)
                    ib_op_st(out[0]->data, dt, base + i,
                             ib_op_ld(x->data, dt, base + i) * mul + add);
            }
        }
    }
    /* opsets 7-13: optional mean/var (and saved stats) outputs = running stats */
    for (uint32_t o = 1; o < n_out; o++)
        if (out[o]) {
            const ib_tensor *src = in[(o - 1) % 2 + 3];
            memcpy(out[o]->data, src->data, IB_MIN(src->nbytes, out[o]->nbytes));
        }
    return IB_OK;
}

/* ---- InstanceNormalization ------------------------------------------------------ */

static int infer_in(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                    const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                    uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    if (in[0]->ndim < 3)
        return IB_OP_BAD(ctx, err, "X must have rank >= 3 (N, C, spatial...), not %d", in[0]->ndim);
    int64_t C = in[0]->dims[1];
    for (int i = 1; i <= 2; i++)
        if (in[i]->ndim != 1 || (C >= 0 && in[i]->dims[0] >= 0 && in[i]->dims[0] != C))
            return IB_OP_BAD(ctx, err, "%s must be 1-D with C = %lld values",
                             i == 1 ? "scale" : "B", (long long)C);
    out[0] = *in[0];
    return IB_OK;
}

/* InstanceNormalization, then act (inferbench.InstanceNorm's epilogue; none for the ONNX op) */
static int in_run(const ib_op_ctx *ctx, const ib_tensor *const *in, ib_tensor *const *out,
                  const ib_op_epilogue *act)
{
    double eps = (double)ib_op_attr_f(ctx, "epsilon", 1e-5f);
    const ib_tensor *x = in[0];
    enum ib_dtype dt = x->desc.dtype;
    int64_t N = x->desc.dims[0], C = x->desc.dims[1], sp = 1;
    for (int32_t i = 2; i < x->desc.ndim; i++)
        sp *= x->desc.dims[i];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (n * C + c) * sp;
            double s = 0, s2 = 0;
            for (int64_t i = 0; i < sp; i++)
                s += ib_op_ld(x->data, dt, base + i);
            double mu = sp ? s / (double)sp : 0;
            for (int64_t i = 0; i < sp; i++) {
                double v = ib_op_ld(x->data, dt, base + i) - mu;
                s2 += v * v;
            }
            double inv = 1.0 / sqrt((sp ? s2 / (double)sp : 0) + eps);
            double sc = ib_op_ld(in[1]->data, in[1]->desc.dtype, c) * inv;
            double b = ib_op_ld(in[2]->data, in[2]->desc.dtype, c);
            for (int64_t i = 0; i < sp; i++)
                ib_op_st(out[0]->data, dt, base + i,
                         ib_op_ep_apply(act, (ib_op_ld(x->data, dt, base + i) - mu) * sc + b));
        }
    return IB_OK;
}

static int k_in(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    const ib_op_epilogue none = {IB_EP_NONE, 0, 0, 0};
    return in_run(ctx, in, out, &none);
}

/* inferbench.InstanceNorm: InstanceNormalization + Relu | LeakyRelu (compile_fuse_inorm.c) */
#define IN_ACTS (IB_EP_MASK(IB_EP_NONE) | IB_EP_MASK(IB_EP_RELU) | IB_EP_MASK(IB_EP_LEAKY))

static int infer_in_act(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    ib_op_epilogue act;
    int rc = ib_op_read_epilogue(ctx, err, IN_ACTS, &act);
    return rc ? rc : infer_in(ctx, in, const_in, n_in, out, n_out, dd, err);
}

static int k_in_act(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    ib_op_epilogue act;
    int rc = ib_op_read_epilogue(ctx, err, IN_ACTS, &act);
    return rc ? rc : in_run(ctx, in, out, &act);
}

/* ---- LayerNormalization / inferbench.LayerNorm ------------------------------------ */

/* Normalise over axes [axis, rank). Scale and B broadcast to X. Mean and
 * InvStdDev outputs (optional) have X's shape with dims [axis, rank) = 1. */
static int infer_ln(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                    const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                    uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(dd);
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", -1), in[0]->ndim, &axis);
    if (rc) return rc;
    for (uint32_t i = 1; i < n_in && i < 3; i++) {
        if (!in[i]) continue;
        ib_tensor_desc t;
        if ((rc = ib_op_broadcast(ctx, err, in[0], in[i], &t))) return rc;
        if (!ib_tensor_desc_equal(&t, in[0]) && ib_op_known(in[0]))
            return IB_OP_BAD(ctx, err, "%s does not broadcast to X", i == 1 ? "Scale" : "B");
    }
    out[0] = *in[0];
    for (uint32_t i = 1; i < n_out; i++) {
        out[i] = *in[0];
        for (int32_t d = axis; d < in[0]->ndim; d++)
            out[i].dims[d] = 1;
        int64_t stash = ib_op_attr_i(ctx, "stash_type", 1);
        out[i].dtype = stash == 1 ? IB_DTYPE_FLOAT32 : in[0]->dtype;
    }
    return IB_OK;
}

/* y *= s (or y += s) with s broadcast to y (same dtype). */
static void apply_bcast(ib_tensor *y, const ib_tensor *s, bool add)
{
    const ib_tensor_desc *ins[2] = {&y->desc, &s->desc};
    ib_bcast it;
    ib_bcast_init(&it, &y->desc, ins, 2);
    enum ib_dtype dt = y->desc.dtype, st = s->desc.dtype;
    for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it))
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t iy = it.off[0] + i * it.ist[0], is = it.off[2] + i * it.ist[2];
            double a = ib_op_ld(y->data, dt, iy), b = ib_op_ld(s->data, st, is);
            ib_op_st(y->data, dt, iy, add ? a + b : a * b);
        }
}

static int k_ln(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    const ib_tensor *x = in[0];
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", -1), x->desc.ndim, &axis);
    if (rc) return rc;
    double eps = (double)ib_op_attr_f(ctx, "epsilon", 1e-5f);
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < x->desc.ndim; d++)
        *(d < axis ? &outer : &inner) *= x->desc.dims[d];
    enum ib_dtype dt = x->desc.dtype;
    ib_tensor *y = out[0];
    ib_tensor *mean = n_out > 1 ? out[1] : NULL, *istd = n_out > 2 ? out[2] : NULL;
    for (int64_t o = 0; o < outer; o++) {
        int64_t base = o * inner;
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < inner; i++)
            s += ib_op_ld(x->data, dt, base + i);
        double mu = inner ? s / (double)inner : 0;
        for (int64_t i = 0; i < inner; i++) {
            double v = ib_op_ld(x->data, dt, base + i) - mu;
            s2 += v * v;
        }
        double inv = 1.0 / sqrt((inner ? s2 / (double)inner : 0) + eps);
        for (int64_t i = 0; i < inner; i++)
            ib_op_st(y->data, dt, base + i, (ib_op_ld(x->data, dt, base + i) - mu) * inv);
        if (mean) ib_op_st(mean->data, mean->desc.dtype, o, mu);
        if (istd) ib_op_st(istd->data, istd->desc.dtype, o, inv);
    }
    /* scale and bias: rounding y once more to float first matches how
     * every framework applies them (normalise, then affine) */
    const ib_tensor *sc = ib_op_cin(in, n_in, 1), *b = ib_op_cin(in, n_in, 2);
    if (sc) apply_bcast(y, sc, false);
    if (b) apply_bcast(y, b, true);
    return IB_OK;
}

#define F IB_DT_FLOATS

static const ib_op_def defs[] = {
    {"", "BatchNormalization", 7, 0, infer_bn, k_bn, NULL, NULL, F, 5, 5, 1, 5, 0, 0},
    {"", "InstanceNormalization", 6, 0, infer_in, k_in, NULL, NULL, F, 3, 3, 1, 1, 0, 0},
    {"inferbench", "InstanceNorm", 1, 0, infer_in_act, k_in_act, NULL, NULL, F, 3, 3, 1, 1, 0, 0},
    {"", "LayerNormalization", 17, 0, infer_ln, k_ln, NULL, NULL, F, 2, 3, 1, 3, 0, 0},
    {"inferbench", "LayerNorm", 1, 0, infer_ln, k_ln, NULL, NULL, F, 2, 3, 1, 3, 0, 0},
};

const ib_op_family ib_ops_norm = {"norm", defs, IB_ARRAY_LEN(defs)};
