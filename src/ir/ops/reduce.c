/*
 * reduce.c - reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 * ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
 * ReduceLogSumExp, and ArgMax/ArgMin (keepdims, select_last_index).
 *
 * Axes are an attribute up to opset 17 except ReduceSum, whose axes become
 * an optional input at opset 13 (with noop_with_empty_axes). Empty axes mean
 * every axis. Floats accumulate in double, integers in int64.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

enum red_op { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LOGSUM, R_LOGSUMEXP };

typedef struct red_plan {
    bool reduced[IB_MAX_DIMS];
    bool noop; /* noop_with_empty_axes with no axes: identity */
    bool keep;
} red_plan;

static bool axes_from_input(const ib_op_ctx *ctx)
{
    const char *op = ctx && ctx->node ? ctx->node->op_type : "";
    return strcmp(op, "ReduceSum") == 0 && ib_op_opset(ctx) >= 13;
}

static int red_plan_init(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                         const ib_tensor *axes_t, bool axes_input_given, red_plan *p, bool *dd)
{
    memset(p, 0, sizeof *p);
    p->keep = ib_op_attr_i(ctx, "keepdims", 1) != 0;
    int64_t axes[IB_MAX_DIMS * 2];
    size_t na = 0;
    int rc;
    if (axes_from_input(ctx)) {
        if (axes_input_given && !axes_t) { /* axes not constant: shape unknown */
            *dd = true;
            return IB_OK;
        }
        if (axes_t &&
            (rc = ib_op_read_ints(ctx, err, axes_t, "axes", axes, IB_ARRAY_LEN(axes), &na)))
            return rc;
        if (na == 0 && ib_op_attr_i(ctx, "noop_with_empty_axes", 0)) {
            p->noop = true;
            return IB_OK;
        }
    } else if ((rc = ib_op_attr_ints_copy(ctx, err, "axes", axes, IB_ARRAY_LEN(axes), &na))) {
        return rc;
    }
    if (na == 0)
        for (int32_t d = 0; d < x->ndim; d++)
            p->reduced[d] = true;
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if ((rc = ib_op_axis(ctx, err, axes[i], x->ndim, &a))) return rc;
        if (p->reduced[a])
            return IB_OP_BAD(ctx, err, "axis %lld is listed twice", (long long)axes[i]);
        p->reduced[a] = true;
    }
    return IB_OK;
}

static void red_out_desc(const ib_tensor_desc *x, const red_plan *p, ib_tensor_desc *y)
{
    *y = *x;
    if (p->noop) return;
    y->ndim = 0;
    for (int32_t d = 0; d < x->ndim; d++) {
        if (!p->reduced[d])
            y->dims[y->ndim++] = x->dims[d];
        else if (p->keep)
            y->dims[y->ndim++] = 1;
    }
}

static int infer_reduce(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    red_plan p;
    bool given = n_in > 1 && in[1];
    int rc = red_plan_init(ctx, err, in[0], ib_op_cin(const_in, n_in, 1), given, &p, dd);
    if (rc) return rc;
    if (*dd) { /* rank known only with keepdims */
        out[0] = *in[0];
        for (int32_t d = 0; d < in[0]->ndim; d++)
            out[0].dims[d] = IB_DIM_DYNAMIC;
        if (!p.keep) out[0].ndim = 0;
        return IB_OK;
    }
    red_out_desc(in[0], &p, &out[0]);
    return IB_OK;
}

static double red_init(enum red_op op)
{
    switch (op) {
    case R_MAX:
        return -IB_INF;
    case R_MIN:
        return IB_INF;
    case R_PROD:
        return 1.0;
    default:
        return 0.0;
    }
}

static int reduce_run(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in, ib_tensor *y,
                      enum red_op op, ib_err *err)
{
    const ib_tensor *x = in[0];
    red_plan p;
    bool dd = false;
    int rc = red_plan_init(ctx, err, &x->desc, ib_op_cin(in, n_in, 1), false, &p, &dd);
    if (rc) return rc;
    enum ib_dtype dt = x->desc.dtype;
    int64_t n = ib_tensor_desc_numel(&x->desc);
    if (p.noop) {
        memcpy(y->data, x->data, (size_t)n * ib_dtype_size(dt));
        return IB_OK;
    }
    /* kept dims (outer iteration) and reduced dims (inner), with input strides */
    int64_t st[IB_MAX_DIMS], kd[IB_MAX_DIMS], ks[IB_MAX_DIMS], rd[IB_MAX_DIMS], rs[IB_MAX_DIMS];
    int32_t nk = 0, nr = 0;
    ib_op_strides(&x->desc, st);
    int64_t rcount = 1, ocount = 1;
    for (int32_t d = 0; d < x->desc.ndim; d++) {
        if (p.reduced[d]) {
            rd[nr] = x->desc.dims[d];
            rs[nr++] = st[d];
            rcount *= x->desc.dims[d];
        } else {
            kd[nk] = x->desc.dims[d];
            ks[nk++] = st[d];
            ocount *= x->desc.dims[d];
        }
    }
    bool ints = ib_dtype_is_int(dt);
    int64_t kidx[IB_MAX_DIMS] = {0};
    for (int64_t o = 0; o < ocount; o++) {
        int64_t base = 0;
        for (int32_t k = 0; k < nk; k++)
            base += kidx[k] * ks[k];
        double acc = red_init(op);
        int64_t iacc = op == R_PROD ? 1 : 0;
        double m = -IB_INF; /* running max for the online log-sum-exp */
        bool first = true;
        int64_t ridx[IB_MAX_DIMS] = {0}, off = base;
        for (int64_t r = 0; r < rcount; r++) {
            if (ints) {
                int64_t v = ib_op_ldi(x->data, dt, off);
                /* sums and products wrap (unsigned) like the integer type */
                uint64_t u = (uint64_t)iacc, uv = (uint64_t)v;
                switch (op) {
                case R_MAX:
                    iacc = first || v > iacc ? v : iacc;
                    break;
                case R_MIN:
                    iacc = first || v < iacc ? v : iacc;
                    break;
                case R_PROD:
                    iacc = (int64_t)(u * uv);
                    break;
                case R_L1:
                    iacc = (int64_t)(u + (v < 0 ? 0u - uv : uv));
                    break;
                case R_SUMSQ:
                case R_L2:
                    iacc = (int64_t)(u + uv * uv);
                    break;
                default:
                    iacc = (int64_t)(u + uv);
                    break;
                }
                first = false;
            } else {
                double v = ib_op_ld(x->data, dt, off);
                switch (op) {
                case R_MAX:
                    acc = (v > acc || v != v) ? v : acc;
                    break;
                case R_MIN:
                    acc = (v < acc || v != v) ? v : acc;
                    break;
                case R_PROD:
                    acc *= v;
                    break;
                case R_L1:
                    acc += fabs(v);
                    break;
                case R_L2:
                case R_SUMSQ:
                    acc += v * v;
                    break;
                case R_LOGSUMEXP: /* acc = sum exp(v - m), rescaled when m grows */
                    if (v > m) {
                        acc = acc * exp(m - v) + 1.0;
                        m = v;
                    } else {
                        acc += exp(v - m);
                    }
                    break;
                default:
                    acc += v;
                    break;
                }
            }
            for (int32_t k = nr - 1; k >= 0; k--) {
                off += rs[k];
                if (++ridx[k] < rd[k]) break;
                off -= rs[k] * rd[k];
                ridx[k] = 0;
            }
        }
        if (ints) {
            if (op == R_MEAN)
                iacc = rcount ? iacc / rcount : 0;
            else if (op == R_L2)
                iacc = (int64_t)sqrt((double)iacc);
            ib_op_sti(y->data, y->desc.dtype, o, iacc);
        } else {
            if (op == R_MEAN)
                acc = rcount ? acc / (double)rcount : IB_NAN;
            else if (op == R_L2)
                acc = sqrt(acc);
            else if (op == R_LOGSUM)
                acc = log(acc);
            else if (op == R_LOGSUMEXP)
                acc = rcount ? log(acc) + m : -IB_INF;
            ib_op_st(y->data, y->desc.dtype, o, acc);
        }
        for (int32_t k = nk - 1; k >= 0; k--) {
            if (++kidx[k] < kd[k]) break;
            kidx[k] = 0;
        }
    }
    return IB_OK;
}

#define REDUCE_KERNEL(fn, code)                                                                    \
    static int fn(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,                 \
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)                              \
    {                                                                                              \
        IB_UNUSED(n_out);                                                                          \
        return reduce_run(ctx, in, n_in, out[0], code, err);                                       \
    }
REDUCE_KERNEL(k_sum, R_SUM)
REDUCE_KERNEL(k_mean, R_MEAN)
REDUCE_KERNEL(k_max, R_MAX)
REDUCE_KERNEL(k_min, R_MIN)
REDUCE_KERNEL(k_prod, R_PROD)
REDUCE_KERNEL(k_l1, R_L1)
REDUCE_KERNEL(k_l2, R_L2)
REDUCE_KERNEL(k_sumsq, R_SUMSQ)
REDUCE_KERNEL(k_logsum, R_LOGSUM)
REDUCE_KERNEL(k_logsumexp, R_LOGSUMEXP)

/* ---- ArgMax / ArgMin ---------------------------------------------------------- */

static int infer_arg(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), in[0]->ndim, &axis);
    if (rc) return rc;
    red_plan p;
    memset(&p, 0, sizeof p);
    p.keep = ib_op_attr_i(ctx, "keepdims", 1) != 0;
    p.reduced[axis] = true;
    red_out_desc(in[0], &p, &out[0]);
    out[0].dtype = IB_DTYPE_INT64;
    return IB_OK;
}

static int arg_run(const ib_op_ctx *ctx, const ib_tensor *x, ib_tensor *y, bool is_max, ib_err *err)
{
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), x->desc.ndim, &axis);
    if (rc) return rc;
    bool last = ib_op_attr_i(ctx, "select_last_index", 0) != 0;
    int64_t outer = 1, len = x->desc.dims[axis], inner = 1;
    for (int32_t d = 0; d < x->desc.ndim; d++)
        if (d < axis)
            outer *= x->desc.dims[d];
        else if (d > axis)
            inner *= x->desc.dims[d];
    if (len == 0 && outer * inner > 0)
        return IB_OP_BAD(ctx, err, "cannot take the arg%s of an empty axis",
                         is_max ? "max" : "min");
    enum ib_dtype dt = x->desc.dtype;
    bool ints = ib_dtype_is_int(dt);
    int64_t *yo = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in, best = 0;
            for (int64_t i = 1; i < len; i++) {
                int64_t a = base + i * inner, b = base + best * inner;
                int c;
                if (ints) {
                    int64_t va = ib_op_ldi(x->data, dt, a), vb = ib_op_ldi(x->data, dt, b);
                    c = va > vb ? 1 : va < vb ? -1 : 0;
                } else {
                    double va = ib_op_ld(x->data, dt, a), vb = ib_op_ld(x->data, dt, b);
                    c = va > vb ? 1 : va < vb ? -1 : 0;
                }
                if (!is_max) c = -c;
                if (c > 0 || (c == 0 && last)) best = i;
            }
            yo[o * inner + in] = best;
        }
    return IB_OK;
}

static int k_argmax(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    return arg_run(ctx, in[0], out[0], true, err);
}

static int k_argmin(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    return arg_run(ctx, in[0], out[0], false, err);
}

#define N                                                                                          \
    (IB_DT_FLOATS | IB_DT(INT32) | IB_DT(INT64) | IB_DT(UINT32) | IB_DT(UINT64) | IB_DT(INT8) |    \
     IB_DT(UINT8))
#define F IB_DT_FLOATS
#define DEFR(op, kern, mask)                                                                       \
    {                                                                                              \
        "", op, 1, 0, infer_reduce, kern, NULL, NULL, mask, 1, 1, 1, 1, 0, 0                       \
    }

static const ib_op_def defs[] = {
    {"", "ReduceSum", 1, 0, infer_reduce, k_sum, NULL, NULL, N, 1, 2, 1, 1, 0x2u, 0},
    DEFR("ReduceMean", k_mean, N),
    DEFR("ReduceMax", k_max, N),
    DEFR("ReduceMin", k_min, N),
    DEFR("ReduceProd", k_prod, N),
    DEFR("ReduceL1", k_l1, N),
    DEFR("ReduceL2", k_l2, N),
    DEFR("ReduceSumSquare", k_sumsq, N),
    DEFR("ReduceLogSum", k_logsum, F),
    DEFR("ReduceLogSumExp", k_logsumexp, F),
    {"", "ArgMax", 1, 0, infer_arg, k_argmax, NULL, NULL, N, 1, 1, 1, 1, 0, 0},
    {"", "ArgMin", 1, 0, infer_arg, k_argmin, NULL, NULL, N, 1, 1, 1, 1, 0, 0},
};

const ib_op_family ib_ops_reduce = {"reduce", defs, IB_ARRAY_LEN(defs)};
