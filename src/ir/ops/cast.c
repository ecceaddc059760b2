/*
 * cast.c - type conversion and constants: Cast, CastLike (opset 15),
 * Constant (value / value_float(s) / value_int(s); sparse and string values
 * unsupported), ConstantOfShape.
 *
 * Cast semantics: float -> int truncates toward zero (saturating instead of
 * the undefined overflow), int -> int wraps like C/numpy, any -> bool is
 * "!= 0", float16/bfloat16 round to nearest even. Strings are unsupported.
 */
#include <string.h>

#include "ir/ops/ops_util.h"

static bool castable(enum ib_dtype t)
{
    return ib_dtype_is_float(t) || ib_dtype_is_int(t) || t == IB_DTYPE_BOOL;
}

static int cast_target(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *const *in,
                       uint32_t n_in, enum ib_dtype *to)
{
    int64_t v;
    if (strcmp(ctx && ctx->node ? ctx->node->op_type : "", "CastLike") == 0) {
        if (n_in < 2 || !in[1]) return IB_OP_BAD(ctx, err, "input target_type is required");
        v = in[1]->dtype;
    } else {
        if (!ib_op_has_attr(ctx, "to")) return IB_OP_BAD(ctx, err, "attribute 'to' is required");
        v = ib_op_attr_i(ctx, "to", 0);
    }
    if (v <= 0 || v > 16 || ib_dtype_size((enum ib_dtype)v) == 0 || !castable((enum ib_dtype)v))
        return IB_OP_UNSUP(ctx, err, "cast to %s (type %lld) is not supported",
                           ib_dtype_name((enum ib_dtype)v), (long long)v);
    *to = (enum ib_dtype)v;
    return IB_OK;
}

static int infer_cast(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    enum ib_dtype to = IB_DTYPE_UNDEFINED;
    int rc = cast_target(ctx, err, in, n_in, &to);
    if (rc) return rc;
    out[0] = *in[0];
    out[0].dtype = to;
    return IB_OK;
}

/* Convert n elements of x into y (types taken from the tensors). */
static void convert(const ib_tensor *x, ib_tensor *y, int64_t n)
{
    enum ib_dtype s = x->desc.dtype, d = y->desc.dtype;
    if (s == d) {
        memcpy(y->data, x->data, (size_t)n * ib_dtype_size(s));
    } else if ((ib_dtype_is_int(s) || s == IB_DTYPE_BOOL) &&
               (ib_dtype_is_int(d) || d == IB_DTYPE_BOOL)) {
        for (int64_t i = 0; i < n; i++)
            ib_op_sti(y->data, d, i, ib_op_ldi(x->data, s, i));
    } else if (s == IB_DTYPE_FLOAT32 && d == IB_DTYPE_FLOAT16) {
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)y->data)[i] = ib_f32_to_f16(((const float *)x->data)[i]);
    } else if (s == IB_DTYPE_INT64 && ib_dtype_is_float(d)) {
        for (int64_t i = 0; i < n; i++)
            ib_op_st(y->data, d, i, (double)((const int64_t *)x->data)[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            ib_op_st(y->data, d, i, ib_op_ld(x->data, s, i));
    }
}

static int k_cast(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    if (!castable(in[0]->desc.dtype))
        return IB_OP_UNSUP(ctx, err, "cast from %s is not supported",
                           ib_dtype_name(in[0]->desc.dtype));
    convert(in[0], out[0], ib_tensor_desc_numel(&in[0]->desc));
    return IB_OK;
}

/* ---- Constant ------------------------------------------------------------------------------ */

/* The constant's tensor or list attribute, as desc + source pointer. */
static int constant_value(const ib_op_ctx *ctx, ib_err *err, ib_tensor_desc *d, const void **src,
                          size_t *nbytes)
{
    static const char *const unsupported[] = {"sparse_value", "value_string", "value_strings"};
    for (size_t i = 0; i < IB_ARRAY_LEN(unsupported); i++)
        if (ib_op_has_attr(ctx, unsupported[i]))
            return IB_OP_UNSUP(ctx, err, "attribute '%s' is not supported", unsupported[i]);
    const ib_node *n = ctx ? ctx->node : NULL;
    const ib_attr *a = n ? ib_node_attr(n, "value") : NULL;
    memset(d, 0, sizeof *d);
    if (a && a->type == IB_ATTR_TENSOR && a->t) {
        *d = a->t->desc;
        *src = a->t->data;
        *nbytes = a->t->nbytes;
        if (!castable(d->dtype) || ib_tensor_desc_nbytes(d) > a->t->nbytes)
            return IB_OP_UNSUP(ctx, err, "value tensor of type %s is not supported",
                               ib_dtype_name(d->dtype));
        return IB_OK;
    }
    if (n && (a = ib_node_attr(n, "value_float")) && a->type == IB_ATTR_FLOAT) {
        d->dtype = IB_DTYPE_FLOAT32;
        *src = &a->f;
        *nbytes = sizeof(float);
        return IB_OK;
    }
    if (n && (a = ib_node_attr(n, "value_int")) && a->type == IB_ATTR_INT) {
        d->dtype = IB_DTYPE_INT64;
        *src = &a->i;
        *nbytes = sizeof(int64_t);
        return IB_OK;
    }
    if (n && (a = ib_node_attr(n, "value_floats")) && a->type == IB_ATTR_FLOATS) {
        d->dtype = IB_DTYPE_FLOAT32;
        d->ndim = 1;
        d->dims[0] = (int64_t)a->count;
        *src = a->floats;
        *nbytes = a->count * sizeof(float);
        return IB_OK;
    }
    if (n && (a = ib_node_attr(n, "value_ints")) && a->type == IB_ATTR_INTS) {
        d->dtype = IB_DTYPE_INT64;
        d->ndim = 1;
        d->dims[0] = (int64_t)a->count;
        *src = a->ints;
        *nbytes = a->count * sizeof(int64_t);
        return IB_OK;
    }
    return IB_OP_BAD(ctx, err, "no value attribute (value, value_float(s), value_int(s))");
}

static int infer_constant(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                          const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                          uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(in);
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    const void *src;
    size_t nb;
    return constant_value(ctx, err, &out[0], &src, &nb);
}

static int k_constant(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                      ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    ib_tensor_desc d;
    const void *src;
    size_t nb;
    int rc = constant_value(ctx, err, &d, &src, &nb);
    if (rc) return rc;
    size_t want = ib_tensor_desc_nbytes(&d);
    if (want > out[0]->nbytes || want > nb)
        return IB_OP_BAD(ctx, err, "value holds fewer bytes than its shape says");
    if (want) memcpy(out[0]->data, src, want);
    return IB_OK;
}

/* ---- ConstantOfShape ----------------------------------------------------------------------- */

static int cos_value(const ib_op_ctx *ctx, ib_err *err, enum ib_dtype *dt, const void **v)
{
    static const float zero = 0.0f;
    const ib_attr *a = ctx && ctx->node ? ib_node_attr(ctx->node, "value") : NULL;
    *dt = IB_DTYPE_FLOAT32;
    *v = &zero;
    if (!a) return IB_OK;
    if (a->type != IB_ATTR_TENSOR || !a->t || ib_tensor_desc_numel(&a->t->desc) != 1)
        return IB_OP_BAD(ctx, err, "attribute 'value' must be a one-element tensor");
    if (!castable(a->t->desc.dtype) || a->t->nbytes < ib_dtype_size(a->t->desc.dtype))
        return IB_OP_UNSUP(ctx, err, "value of type %s is not supported",
                           ib_dtype_name(a->t->desc.dtype));
    *dt = a->t->desc.dtype;
    *v = a->t->data;
    return IB_OK;
}

static int infer_cos(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    enum ib_dtype dt;
    const void *v;
    int rc = cos_value(ctx, err, &dt, &v);
    if (rc) return rc;
    if (in[0]->dtype != IB_DTYPE_INT64)
        return IB_OP_BAD(ctx, err, "input must be int64, not %s", ib_dtype_name(in[0]->dtype));
    const ib_tensor *st = ib_op_cin(const_in, n_in, 0);
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = dt;
    if (!st) {
        if (in[0]->ndim != 1 || in[0]->dims[0] < 0 || in[0]->dims[0] > IB_MAX_DIMS)
            return IB_OP_UNSUP(ctx, err, "output rank must be known and at most %d", IB_MAX_DIMS);
        out[0].ndim = (int32_t)in[0]->dims[0];
        for (int32_t i = 0; i < out[0].ndim; i++)
            out[0].dims[i] = IB_DIM_DYNAMIC;
        *dd = true;
        return IB_OK;
    }
    size_t n;
    if ((rc = ib_op_read_ints(ctx, err, st, "shape", out[0].dims, IB_MAX_DIMS, &n))) return rc;
    out[0].ndim = (int32_t)n;
    for (size_t i = 0; i < n; i++)
        if (out[0].dims[i] < 0)
            return IB_OP_BAD(ctx, err, "shape[%zu] = %lld is negative", i,
                             (long long)out[0].dims[i]);
    return IB_OK;
}

static int k_cos(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    enum ib_dtype dt;
    const void *v;
    int rc = cos_value(ctx, err, &dt, &v);
    if (rc) return rc;
    size_t es = ib_dtype_size(dt);
    int64_t n = ib_tensor_desc_numel(&out[0]->desc);
    for (int64_t i = 0; i < n; i++)
        memcpy((unsigned char *)out[0]->data + (size_t)i * es, v, es);
    return IB_OK;
}

#define CASTABLE (IB_DT_NUMS | IB_DT(BOOL))

static const ib_op_def defs[] = {
    {"", "Cast", 6, 0, infer_cast, k_cast, NULL, NULL, CASTABLE, 1, 1, 1, 1, 0, 0},
    {"", "CastLike", 15, 0, infer_cast, k_cast, NULL, NULL, CASTABLE, 2, 2, 1, 1, 0, 0},
    {"", "Constant", 1, 0, infer_constant, k_constant, NULL, NULL, 0, 0, 0, 1, 1, 0, 0},
    {"", "ConstantOfShape", 9, 0, infer_cos, k_cos, NULL, NULL, IB_DT(INT64), 1, 1, 1, 1, 0x1u, 0},
};

const ib_op_family ib_ops_cast = {"cast", defs, IB_ARRAY_LEN(defs)};
