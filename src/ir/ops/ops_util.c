/*
 * ops_util.c - shared helpers of the op families: node-naming errors,
 * attribute access with defaults, axis checks, numpy broadcasting and its
 * collapsing iterator, dtype-generic element loads/stores, constant list
 * readers. No state; every function is pure or writes only its arguments.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/ops/ops_util.h"

int ib_op_fail(const ib_op_ctx *ctx, ib_err *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    const ib_node *n = ctx ? ctx->node : NULL;
    int w;
    if (n)
        w = snprintf(err->msg, sizeof err->msg, "node '%s' (%s%s%s, opset %lld): ", n->name,
                     n->domain && n->domain[0] ? n->domain : "",
                     n->domain && n->domain[0] ? "." : "", n->op_type, (long long)n->opset);
    else
        w = snprintf(err->msg, sizeof err->msg, "op: ");
    size_t off = w > 0 && (size_t)w < sizeof err->msg ? (size_t)w : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + off, sizeof err->msg - off, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int64_t ib_op_opset(const ib_op_ctx *ctx)
{
    return ctx && ctx->node ? ctx->node->opset : 17;
}

int64_t ib_op_attr_i(const ib_op_ctx *ctx, const char *name, int64_t dflt)
{
    return ctx && ctx->node ? ib_node_attr_int(ctx->node, name, dflt) : dflt;
}

float ib_op_attr_f(const ib_op_ctx *ctx, const char *name, float dflt)
{
    return ctx && ctx->node ? ib_node_attr_float(ctx->node, name, dflt) : dflt;
}

const char *ib_op_attr_s(const ib_op_ctx *ctx, const char *name, const char *dflt)
{
    return ctx && ctx->node ? ib_node_attr_string(ctx->node, name, dflt) : dflt;
}

size_t ib_op_attr_ints(const ib_op_ctx *ctx, const char *name, const int64_t **out)
{
    if (!ctx || !ctx->node) {
        *out = NULL;
        return 0;
    }
    return ib_node_attr_ints(ctx->node, name, out);
}

bool ib_op_has_attr(const ib_op_ctx *ctx, const char *name)
{
    return ctx && ctx->node && ib_node_attr(ctx->node, name) != NULL;
}

int ib_op_attr_ints_copy(const ib_op_ctx *ctx, ib_err *err, const char *name, int64_t *out,
                         size_t cap, size_t *n)
{
    const int64_t *v;
    size_t c = ib_op_attr_ints(ctx, name, &v);
    if (c > cap)
        return IB_OP_BAD(ctx, err, "attribute '%s' has %zu values, at most %zu allowed", name, c,
                         cap);
    for (size_t i = 0; i < c; i++)
        out[i] = v[i];
    *n = c;
    return IB_OK;
}

int ib_op_axis(const ib_op_ctx *ctx, ib_err *err, int64_t axis, int32_t rank, int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= (int64_t)rank || (rank == 0 && axis != 0))
        return IB_OP_BAD(ctx, err, "axis %lld is out of range for rank %d", (long long)axis, rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return IB_OK;
}

bool ib_op_known(const ib_tensor_desc *d)
{
    for (int32_t i = 0; i < d->ndim; i++)
        if (d->dims[i] < 0) return false;
    return true;
}

int ib_op_dim_mul(const ib_op_ctx *ctx, ib_err *err, int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0) {
        *out = IB_DIM_DYNAMIC;
        return IB_OK;
    }
    if (a && b > INT64_MAX / a)
        return IB_OP_UNSUP(ctx, err, "shape too large: %lld x %lld overflows", (long long)a,
                           (long long)b);
    *out = a * b;
    return IB_OK;
}

int ib_op_dim_add(const ib_op_ctx *ctx, ib_err *err, int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0) {
        *out = IB_DIM_DYNAMIC;
        return IB_OK;
    }
    if (b > INT64_MAX - a)
        return IB_OP_UNSUP(ctx, err, "shape too large: %lld + %lld overflows", (long long)a,
                           (long long)b);
    *out = a + b;
    return IB_OK;
}

int ib_op_check_desc(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *d, const char *what)
{
    if (d->ndim < 0 || d->ndim > IB_MAX_DIMS)
        return IB_OP_BAD(ctx, err, "%s has rank %d (at most %d supported)", what, d->ndim,
                         IB_MAX_DIMS);
    for (int32_t i = 0; i < d->ndim; i++)
        if (d->dims[i] < 0 && d->dims[i] != IB_DIM_DYNAMIC)
            return IB_OP_BAD(ctx, err, "%s has a negative dimension %lld", what,
                             (long long)d->dims[i]);
    return IB_OK;
}

int ib_op_broadcast(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *a,
                    const ib_tensor_desc *b, ib_tensor_desc *out)
{
    int32_t nd = IB_MAX(a->ndim, b->ndim);
    ib_tensor_desc r;
    memset(&r, 0, sizeof r);
    r.dtype = a->dtype;
    r.ndim = nd;
    for (int32_t i = 0; i < nd; i++) {
        int32_t ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        int64_t d;
        if (da == db)
            d = da;
        else if (da == 1)
            d = db;
        else if (db == 1)
            d = da;
        else if (da < 0)
            d = db; /* dynamic vs N: must be N */
        else if (db < 0)
            d = da;
        else {
            char sa[128], sb[128];
            return IB_OP_BAD(ctx, err,
                             "shapes %s and %s cannot be broadcast (dim %d: %lld vs %lld)",
                             ib_tensor_desc_str(a, sa, sizeof sa),
                             ib_tensor_desc_str(b, sb, sizeof sb), i, (long long)da, (long long)db);
        }
        r.dims[i] = d;
    }
    *out = r;
    return IB_OK;
}

void ib_op_strides(const ib_tensor_desc *d, int64_t *st)
{
    int64_t s = 1;
    for (int32_t i = d->ndim - 1; i >= 0; i--) {
        st[i] = s;
        s *= d->dims[i];
    }
}

/* Strides of `in` seen through the output shape (right-aligned, 0 where the
 * input dim is 1 and the output dim is not). */
static void bcast_strides(const ib_tensor_desc *in, const ib_tensor_desc *out, int64_t *st)
{
    int64_t own[IB_MAX_DIMS];
    ib_op_strides(in, own);
    for (int32_t i = 0; i < out->ndim; i++) {
        int32_t k = i - (out->ndim - in->ndim);
        st[i] = (k < 0 || in->dims[k] == 1) ? 0 : own[k];
    }
}

void ib_bcast_init(ib_bcast *it, const ib_tensor_desc *out, const ib_tensor_desc *const *ins,
                   int n_in)
{
    int64_t st[4][IB_MAX_DIMS];
    memset(it, 0, sizeof *it);
    it->nops = n_in + 1;
    bcast_strides(out, out, st[0]);
    for (int k = 0; k < n_in; k++)
        bcast_strides(ins[k], out, st[k + 1]);
    /* drop size-1 dims, then merge dim i into the previous kept one when
     * every operand is contiguous across the pair */
    int32_t nd = 0;
    for (int32_t i = 0; i < out->ndim; i++) {
        if (out->dims[i] == 1) continue;
        if (nd > 0) {
            bool merge = true;
            for (int k = 0; k < it->nops; k++)
                if (it->st[k][nd - 1] != st[k][i] * out->dims[i]) merge = false;
            if (merge) {
                it->dims[nd - 1] *= out->dims[i];
                for (int k = 0; k < it->nops; k++)
                    it->st[k][nd - 1] = st[k][i];
                continue;
            }
        }
        it->dims[nd] = out->dims[i];
        for (int k = 0; k < it->nops; k++)
            it->st[k][nd] = st[k][i];
        nd++;
    }
    if (nd == 0) {
        it->dims[0] = 1;
        nd = 1;
    }
    it->nd = nd;
    it->inner = it->dims[nd - 1];
    it->outer = 1;
    for (int32_t i = 0; i < nd - 1; i++)
        it->outer *= it->dims[i];
    for (int k = 0; k < it->nops; k++)
        it->ist[k] = it->st[k][nd - 1];
    if (ib_tensor_desc_numel(out) == 0) it->outer = 0;
}

void ib_bcast_next(ib_bcast *it)
{
    for (int32_t d = it->nd - 2; d >= 0; d--) {
        it->idx[d]++;
        for (int k = 0; k < it->nops; k++)
            it->off[k] += it->st[k][d];
        if (it->idx[d] < it->dims[d]) return;
        for (int k = 0; k < it->nops; k++)
            it->off[k] -= it->st[k][d] * it->dims[d];
        it->idx[d] = 0;
    }
}

void ib_op_bcast_copy(const ib_tensor *x, ib_tensor *y)
{
    size_t es = ib_dtype_size(x->desc.dtype);
    const ib_tensor_desc *ins[1] = {&x->desc};
    ib_bcast it;
    ib_bcast_init(&it, &y->desc, ins, 1);
    const unsigned char *src = x->data;
    unsigned char *dst = y->data;
    for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it)) {
        if (it.ist[1] == 1 && it.ist[0] == 1) {
            memcpy(dst + (size_t)it.off[0] * es, src + (size_t)it.off[1] * es,
                   (size_t)it.inner * es);
            continue;
        }
        for (int64_t i = 0; i < it.inner; i++)
            memcpy(dst + (size_t)(it.off[0] + i * it.ist[0]) * es,
                   src + (size_t)(it.off[1] + i * it.ist[1]) * es, es);
    }
}

bool ib_dtype_is_float(enum ib_dtype t)
{
    return t == IB_DTYPE_FLOAT32 || t == IB_DTYPE_FLOAT64 || t == IB_DTYPE_FLOAT16 ||
           t == IB_DTYPE_BFLOAT16;
}

bool ib_dtype_is_unsigned(enum ib_dtype t)
{
    return t == IB_DTYPE_UINT8 || t == IB_DTYPE_UINT16 || t == IB_DTYPE_UINT32 ||
           t == IB_DTYPE_UINT64;
}

bool ib_dtype_is_int(enum ib_dtype t)
{
    return ib_dtype_is_unsigned(t) || t == IB_DTYPE_INT8 || t == IB_DTYPE_INT16 ||
           t == IB_DTYPE_INT32 || t == IB_DTYPE_INT64;
}

int64_t ib_op_f2i(double v)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

double ib_op_ld(const void *p, enum ib_dtype t, int64_t i)
{
    switch (t) {
    case IB_DTYPE_FLOAT32:
        return (double)((const float *)p)[i];
    case IB_DTYPE_FLOAT64:
        return ((const double *)p)[i];
    case IB_DTYPE_FLOAT16:
        return (double)ib_f16_to_f32(((const uint16_t *)p)[i]);
    case IB_DTYPE_BFLOAT16:
        return (double)ib_bf16_to_f32(((const uint16_t *)p)[i]);
    case IB_DTYPE_INT8:
        return ((const int8_t *)p)[i];
    case IB_DTYPE_UINT8:
        return ((const uint8_t *)p)[i];
    case IB_DTYPE_INT16:
        return ((const int16_t *)p)[i];
    case IB_DTYPE_UINT16:
        return ((const uint16_t *)p)[i];
    case IB_DTYPE_INT32:
        return ((const int32_t *)p)[i];
    case IB_DTYPE_UINT32:
        return ((const uint32_t *)p)[i];
    case IB_DTYPE_INT64:
        return (double)((const int64_t *)p)[i];
    case IB_DTYPE_UINT64:
        return (double)((const uint64_t *)p)[i];
    case IB_DTYPE_BOOL:
        return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    default:
        return 0.0;
    }
}

int64_t ib_op_ldi(const void *p, enum ib_dtype t, int64_t i)
{
    switch (t) {
    case IB_DTYPE_INT8:
        return ((const int8_t *)p)[i];
    case IB_DTYPE_UINT8:
        return ((const uint8_t *)p)[i];
    case IB_DTYPE_INT16:
        return ((const int16_t *)p)[i];
    case IB_DTYPE_UINT16:
        return ((const uint16_t *)p)[i];
    case IB_DTYPE_INT32:
        return ((const int32_t *)p)[i];
    case IB_DTYPE_UINT32:
        return ((const uint32_t *)p)[i];
    case IB_DTYPE_INT64:
        return ((const int64_t *)p)[i];
    case IB_DTYPE_UINT64:
        return (int64_t)((const uint64_t *)p)[i];
    case IB_DTYPE_BOOL:
        return ((const uint8_t *)p)[i] ? 1 : 0;
    default:
        return ib_op_f2i(ib_op_ld(p, t, i));
    }
}

void ib_op_sti(void *p, enum ib_dtype t, int64_t i, int64_t v)
{
    switch (t) {
    case IB_DTYPE_INT8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case IB_DTYPE_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)v;
        break;
    case IB_DTYPE_INT16:
        ((int16_t *)p)[i] = (int16_t)v;
        break;
    case IB_DTYPE_UINT16:
        ((uint16_t *)p)[i] = (uint16_t)v;
        break;
    case IB_DTYPE_INT32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case IB_DTYPE_UINT32:
        ((uint32_t *)p)[i] = (uint32_t)v;
        break;
    case IB_DTYPE_INT64:
        ((int64_t *)p)[i] = v;
        break;
    case IB_DTYPE_UINT64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    case IB_DTYPE_BOOL:
        ((uint8_t *)p)[i] = v != 0;
        break;
    default:
        ib_op_st(p, t, i, (double)v);
        break;
    }
}

void ib_op_st(void *p, enum ib_dtype t, int64_t i, double v)
{
    switch (t) {
    case IB_DTYPE_FLOAT32:
        ((float *)p)[i] = (float)v;
        break;
    case IB_DTYPE_FLOAT64:
        ((double *)p)[i] = v;
        break;
    case IB_DTYPE_FLOAT16:
        ((uint16_t *)p)[i] = ib_f32_to_f16((float)v);
        break;
    case IB_DTYPE_BFLOAT16:
        ((uint16_t *)p)[i] = ib_f32_to_bf16((float)v);
        break;
    case IB_DTYPE_BOOL:
        ((uint8_t *)p)[i] = v != 0.0;
        break;
    case IB_DTYPE_UINT64:
        /* values above INT64_MAX survive when they are exact in double */
        ((uint64_t *)p)[i] = v >= 9223372036854775808.0
                                 ? (v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v)
                                 : (uint64_t)ib_op_f2i(v);
        break;
    default:
        ib_op_sti(p, t, i, ib_op_f2i(v));
        break;
    }
}

int ib_op_read_ints(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *t, const char *what,
                    int64_t *out, size_t cap, size_t *n)
{
    if (t->desc.dtype != IB_DTYPE_INT64 && t->desc.dtype != IB_DTYPE_INT32)
        return IB_OP_BAD(ctx, err, "%s must be int64 or int32, not %s", what,
                         ib_dtype_name(t->desc.dtype));
    if (t->desc.ndim > 1)
        return IB_OP_BAD(ctx, err, "%s must be a 1-D tensor (rank %d given)", what, t->desc.ndim);
    int64_t c = ib_tensor_desc_numel(&t->desc);
    if (c < 0 || (uint64_t)c > cap)
        return IB_OP_BAD(ctx, err, "%s has %lld values, at most %zu allowed", what, (long long)c,
                         cap);
    if ((size_t)c * ib_dtype_size(t->desc.dtype) > t->nbytes)
        return IB_OP_BAD(ctx, err, "%s holds fewer bytes than its shape says", what);
    for (int64_t i = 0; i < c; i++)
        out[i] = ib_op_ldi(t->data, t->desc.dtype, i);
    *n = (size_t)c;
    return IB_OK;
}

int ib_op_read_floats(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *t, const char *what,
                      double *out, size_t cap, size_t *n)
{
    if (!ib_dtype_is_float(t->desc.dtype))
        return IB_OP_BAD(ctx, err, "%s must be a float tensor, not %s", what,
                         ib_dtype_name(t->desc.dtype));
    if (t->desc.ndim > 1)
        return IB_OP_BAD(ctx, err, "%s must be a 1-D tensor (rank %d given)", what, t->desc.ndim);
    int64_t c = ib_tensor_desc_numel(&t->desc);
    if (c < 0 || (uint64_t)c > cap)
        return IB_OP_BAD(ctx, err, "%s has %lld values, at most %zu allowed", what, (long long)c,
                         cap);
    if ((size_t)c * ib_dtype_size(t->desc.dtype) > t->nbytes)
        return IB_OP_BAD(ctx, err, "%s holds fewer bytes than its shape says", what);
    for (int64_t i = 0; i < c; i++)
        out[i] = ib_op_ld(t->data, t->desc.dtype, i);
    *n = (size_t)c;
    return IB_OK;
}

int ib_op_read_scalar(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *t, const char *what,
                      double *out)
{
    if (ib_tensor_desc_numel(&t->desc) != 1 || t->nbytes < ib_dtype_size(t->desc.dtype) ||
        ib_dtype_size(t->desc.dtype) == 0)
        return IB_OP_BAD(ctx, err, "%s must hold exactly one value", what);
    *out = ib_op_ld(t->data, t->desc.dtype, 0);
    return IB_OK;
}

int ib_op_infer_same(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *data_dependent, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(data_dependent);
    IB_UNUSED(err);
    for (uint32_t i = 0; i < n_out; i++)
        out[i] = *in[0];
    return IB_OK;
}

/* ---- fused activations -------------------------------------------------------- */

int ib_op_read_epilogue(const ib_op_ctx *ctx, ib_err *err, unsigned allowed, ib_op_epilogue *e)
{
    static const char *const names[] = {"", "Relu", "LeakyRelu", "Clip", "Gelu"};
    const char *a = ib_op_attr_s(ctx, "activation", "");
    e->act = IB_EP_NONE;
    size_t i = 0;
    while (i < IB_ARRAY_LEN(names) && strcmp(a, names[i]) != 0)
        i++;
    if (i == IB_ARRAY_LEN(names) || !(allowed & (1u << i)))
        return IB_OP_UNSUP(ctx, err, "attribute activation='%s' is not supported", a);
    e->act = (enum ib_op_act)i;
    if (e->act == IB_EP_GELU) {
        const char *ap = ib_op_attr_s(ctx, "approximate", "none");
        if (strcmp(ap, "tanh") == 0)
            e->act = IB_EP_GELU_TANH;
        else if (strcmp(ap, "none") != 0)
            return IB_OP_UNSUP(ctx, err, "attribute approximate='%s' is not supported", ap);
    }
    e->alpha = (double)ib_op_attr_f(ctx, "activation_alpha", 0.01f);
    e->lo = (double)ib_op_attr_f(ctx, "clip_min", -(float)IB_INF);
    e->hi = (double)ib_op_attr_f(ctx, "clip_max", (float)IB_INF);
    return IB_OK;
}

double ib_op_ep_apply(const ib_op_epilogue *e, double x)
{
    switch (e->act) {
    case IB_EP_RELU:
        return x > 0 ? x : 0;
    case IB_EP_LEAKY:
        return x >= 0 ? x : e->alpha * x;
    case IB_EP_CLIP:
        return x < e->lo ? e->lo : x > e->hi ? e->hi : x;
    case IB_EP_GELU:
        return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
    case IB_EP_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    case IB_EP_NONE:
        break;
    }
    return x;
}
