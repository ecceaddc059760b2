/*
 * binary.c - elementwise ops over numpy-broadcast inputs: arithmetic (Add,
 * Sub, Mul, Div, Pow, Mod, PRelu), comparisons (Equal, Less, Greater,
 * LessOrEqual, GreaterOrEqual -> bool), logic (And, Or, Xor on bool),
 * variadic folds (Min, Max, Sum, Mean) and Where.
 *
 * Opsets 7+ use multidirectional broadcasting, so the legacy `broadcast`/
 * `axis` attributes of opset <= 6 are not handled. Floats are computed in
 * double and rounded once; integers use int64 arithmetic with C truncating
 * division (x / 0 gives 0 rather than trapping).
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

enum bin_op {
    B_ADD,
    B_SUB,
    B_MUL,
    B_DIV,
    B_POW,
    B_MOD,
    B_FMOD,
    B_PRELU,
    B_MIN,
    B_MAX,
    B_EQ,
    B_LT,
    B_GT,
    B_LE,
    B_GE,
    B_AND,
    B_OR,
    B_XOR,
};

static double bf(enum bin_op op, double a, double b)
{
    switch (op) {
    case B_ADD:
        return a + b;
    case B_SUB:
        return a - b;
    case B_MUL:
        return a * b;
    case B_DIV:
        return a / b;
    case B_POW:
        return pow(a, b);
    case B_FMOD:
        return fmod(a, b);
    case B_MOD: {
        double r = fmod(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case B_PRELU:
        return a < 0 ? a * b : a;
    case B_MIN:
        return a != a ? a : b != b ? b : (a < b ? a : b);
    case B_MAX:
        return a != a ? a : b != b ? b : (a > b ? a : b);
    case B_EQ:
        return a == b;
    case B_LT:
        return a < b;
    case B_GT:
        return a > b;
    case B_LE:
        return a <= b;
    case B_GE:
        return a >= b;
    case B_AND:
        return (a != 0) && (b != 0);
    case B_OR:
        return (a != 0) || (b != 0);
    case B_XOR:
        return (a != 0) != (b != 0);
    }
    return 0;
}

/* Integer semantics; unsigned operands compare and divide as uint64. */
static int64_t bi(enum bin_op op, int64_t a, int64_t b, bool u)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case B_ADD:
        return (int64_t)(ua + ub);
    case B_SUB:
        return (int64_t)(ua - ub);
    case B_MUL:
        return (int64_t)(ua * ub);
    case B_DIV:
        if (b == 0) return 0;
        if (u) return (int64_t)(ua / ub);
        if (a == INT64_MIN && b == -1) return INT64_MIN;
        return a / b;
    case B_FMOD:
    case B_MOD: {
        if (b == 0) return 0;
        if (u) return (int64_t)(ua % ub);
        if (b == -1) return 0;
        int64_t r = a % b;
        if (op == B_MOD && r != 0 && ((r < 0) != (b < 0)))
            r += b; /* Python-style: the sign of the divisor */
        return r;
    }
    case B_POW: {
        if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
        uint64_t r = 1, base = ua;
        for (int64_t e = b; e > 0; e >>= 1) {
            if (e & 1) r *= base;
            base *= base;
        }
        return (int64_t)r;
    }
    case B_PRELU:
        return a < 0 ? (int64_t)(ua * ub) : a;
    case B_MIN:
        return u ? (ua < ub ? a : b) : (a < b ? a : b);
    case B_MAX:
        return u ? (ua > ub ? a : b) : (a > b ? a : b);
    case B_EQ:
        return a == b;
    case B_LT:
        return u ? ua < ub : a < b;
    case B_GT:
        return u ? ua > ub : a > b;
    case B_LE:
        return u ? ua <= ub : a <= b;
    case B_GE:
        return u ? ua >= ub : a >= b;
    case B_AND:
        return a && b;
    case B_OR:
        return a || b;
    case B_XOR:
        return (a != 0) != (b != 0);
    }
    return 0;
}

/* y = a op b with broadcasting; y may alias a or b when shapes equal y's. */
static int binary_apply(const ib_op_ctx *ctx, enum bin_op op, const ib_tensor *a,
                        const ib_tensor *b, ib_tensor *y, ib_err *err)
{
    enum ib_dtype ta = a->desc.dtype, tb = b->desc.dtype, ty = y->desc.dtype;
    if (ta != tb && op != B_POW && op != B_PRELU)
        return IB_OP_BAD(ctx, err, "input types differ: %s and %s", ib_dtype_name(ta),
                         ib_dtype_name(tb));
    if ((op == B_AND || op == B_OR || op == B_XOR) && ta != IB_DTYPE_BOOL)
        return IB_OP_UNSUP(ctx, err, "inputs must be bool, not %s", ib_dtype_name(ta));
    if (ta == IB_DTYPE_STRING || ta == IB_DTYPE_UNDEFINED || tb == IB_DTYPE_STRING)
        return IB_OP_UNSUP(ctx, err, "input dtype %s is not supported", ib_dtype_name(ta));
    const ib_tensor_desc *ins[2] = {&a->desc, &b->desc};
    ib_bcast it;
    ib_bcast_init(&it, &y->desc, ins, 2);
    bool int_path = (ib_dtype_is_int(ta) || ta == IB_DTYPE_BOOL) &&
                    (ib_dtype_is_int(tb) || tb == IB_DTYPE_BOOL);
    bool u = ib_dtype_is_unsigned(ta);
    if (ta == IB_DTYPE_FLOAT32 && tb == IB_DTYPE_FLOAT32 && ty == IB_DTYPE_FLOAT32 &&
        (op == B_ADD || op == B_SUB || op == B_MUL || op == B_DIV)) {
        const float *pa = a->data, *pb = b->data;
        float *py = y->data;
        for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it)) {
            const float *xa = pa + it.off[1], *xb = pb + it.off[2];
            float *xy = py + it.off[0];
            int64_t sa = it.ist[1], sb = it.ist[2], n = it.inner;
            switch (op) {
            case B_ADD:
                for (int64_t i = 0; i < n; i++)
                    xy[i] = xa[i * sa] + xb[i * sb];
                break;
            case B_SUB:
                for (int64_t i = 0; i < n; i++)
                    xy[i] = xa[i * sa] - xb[i * sb];
                break;
            case B_MUL:
                for (int64_t i = 0; i < n; i++)
                    xy[i] = xa[i * sa] * xb[i * sb];
                break;
            default:
                for (int64_t i = 0; i < n; i++)
                    xy[i] = xa[i * sa] / xb[i * sb];
                break;
            }
        }
        return IB_OK;
    }
    for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it)) {
        int64_t oa = it.off[1], ob = it.off[2], oy = it.off[0];
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t ia = oa + i * it.ist[1], ib = ob + i * it.ist[2], iy = oy + i * it.ist[0];
            if (int_path)
                ib_op_sti(y->data, ty, iy,
                          bi(op, ib_op_ldi(a->data, ta, ia), ib_op_ldi(b->data, tb, ib), u));
            else
                ib_op_st(y->data, ty, iy,
                         bf(op, ib_op_ld(a->data, ta, ia), ib_op_ld(b->data, tb, ib)));
        }
    }
    return IB_OK;
}

static int infer_binary(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int rc = ib_op_broadcast(ctx, err, in[0], in[1], &out[0]);
    (void)n_in;
    out[0].dtype = in[0]->dtype;
    return rc;
}

static int infer_cmp(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    int rc = infer_binary(ctx, in, const_in, n_in, out, n_out, dd, err);
    out[0].dtype = IB_DTYPE_BOOL;
    return rc;
}

/* PRelu: slope broadcasts to X (unidirectionally); Y has X's shape. */
static int infer_prelu(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    ib_tensor_desc b;
    int rc = infer_binary(ctx, in, const_in, n_in, &b, n_out, dd, err);
    if (rc) return rc;
    if (!ib_tensor_desc_equal(&b, in[0]) && ib_op_known(in[0]))
        return IB_OP_BAD(ctx, err, "slope does not broadcast to the shape of X");
    out[0] = *in[0];
    return IB_OK;
}

/* Min/Max/Sum/Mean: the broadcast of all inputs. */
static int infer_variadic(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                          const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                          uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    ib_tensor_desc acc = *in[0];
    for (uint32_t i = 1; i < n_in; i++) {
        if (!in[i]) return IB_OP_BAD(ctx, err, "input %u is missing", i);
        if (in[i]->dtype != in[0]->dtype)
            return IB_OP_BAD(ctx, err, "input types differ: %s and %s", ib_dtype_name(in[0]->dtype),
                             ib_dtype_name(in[i]->dtype));
        int rc = ib_op_broadcast(ctx, err, &acc, in[i], &acc);
        if (rc) return rc;
    }
    out[0] = acc;
    return IB_OK;
}

static int infer_where(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    if (in[0]->dtype != IB_DTYPE_BOOL)
        return IB_OP_BAD(ctx, err, "condition must be bool, not %s", ib_dtype_name(in[0]->dtype));
    if (in[1]->dtype != in[2]->dtype)
        return IB_OP_BAD(ctx, err, "X and Y types differ: %s and %s", ib_dtype_name(in[1]->dtype),
                         ib_dtype_name(in[2]->dtype));
    ib_tensor_desc t;
    int rc = ib_op_broadcast(ctx, err, in[0], in[1], &t);
    if (!rc) rc = ib_op_broadcast(ctx, err, &t, in[2], &out[0]);
    out[0].dtype = in[1]->dtype;
    return rc;
}

#define BINARY_KERNEL(fn, code)                                                                    \
    static int fn(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,                 \
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)                              \
    {                                                                                              \
        IB_UNUSED(n_in);                                                                           \
        IB_UNUSED(n_out);                                                                          \
        return binary_apply(ctx, code, in[0], in[1], out[0], err);                                 \
    }

BINARY_KERNEL(k_add, B_ADD)
BINARY_KERNEL(k_sub, B_SUB)
BINARY_KERNEL(k_mul, B_MUL)
BINARY_KERNEL(k_div, B_DIV)
BINARY_KERNEL(k_pow, B_POW)
BINARY_KERNEL(k_prelu, B_PRELU)
BINARY_KERNEL(k_eq, B_EQ)
BINARY_KERNEL(k_lt, B_LT)
BINARY_KERNEL(k_gt, B_GT)
BINARY_KERNEL(k_le, B_LE)
BINARY_KERNEL(k_ge, B_GE)
BINARY_KERNEL(k_and, B_AND)
BINARY_KERNEL(k_or, B_OR)
BINARY_KERNEL(k_xor, B_XOR)

static int k_mod(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    bool fm = ib_op_attr_i(ctx, "fmod", 0) != 0;
    if (!fm && ib_dtype_is_float(in[0]->desc.dtype))
        return IB_OP_BAD(ctx, err, "fmod must be 1 for floating-point inputs");
    return binary_apply(ctx, fm ? B_FMOD : B_MOD, in[0], in[1], out[0], err);
}

static int variadic(const ib_op_ctx *ctx, enum bin_op op, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *y, bool mean, ib_err *err)
{
    if (in[0]->desc.dtype != y->desc.dtype)
        return IB_OP_BAD(ctx, err, "output type differs from input type");
    ib_op_bcast_copy(in[0], y);
    for (uint32_t i = 1; i < n_in; i++) {
        int rc = binary_apply(ctx, op, y, in[i], y, err);
        if (rc) return rc;
    }
    if (mean && n_in > 1) {
        if (!ib_dtype_is_float(y->desc.dtype))
            return IB_OP_UNSUP(ctx, err, "Mean of %s is not supported",
                               ib_dtype_name(y->desc.dtype));
        int64_t n = ib_tensor_desc_numel(&y->desc);
        for (int64_t k = 0; k < n; k++)
            ib_op_st(y->data, y->desc.dtype, k, ib_op_ld(y->data, y->desc.dtype, k) / n_in);
    }
    return IB_OK;
}

#define VARIADIC_KERNEL(fn, code, mean)                                                            \
    static int fn(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,                 \
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)                              \
    {                                                                                              \
        IB_UNUSED(n_out);                                                                          \
        return variadic(ctx, code, in, n_in, out[0], mean, err);                                   \
    }
VARIADIC_KERNEL(k_min, B_MIN, false)
VARIADIC_KERNEL(k_max, B_MAX, false)
VARIADIC_KERNEL(k_sum, B_ADD, false)
VARIADIC_KERNEL(k_mean, B_ADD, true)

/* Where(cond, X, Y): element bytes copied from X or Y. */
static int k_where(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    ib_tensor *y = out[0];
    size_t es = ib_dtype_size(y->desc.dtype);
    const ib_tensor_desc *ins[3] = {&in[0]->desc, &in[1]->desc, &in[2]->desc};
    ib_bcast it;
    ib_bcast_init(&it, &y->desc, ins, 3);
    const uint8_t *c = in[0]->data;
    const unsigned char *px = in[1]->data, *py = in[2]->data;
    unsigned char *dst = y->data;
    for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it))
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t ic = it.off[1] + i * it.ist[1];
            const unsigned char *src = c[ic] ? px + (size_t)(it.off[2] + i * it.ist[2]) * es
                                             : py + (size_t)(it.off[3] + i * it.ist[3]) * es;
            memcpy(dst + (size_t)(it.off[0] + i * it.ist[0]) * es, src, es);
        }
    return IB_OK;
}

#define N IB_DT_NUMS
#define DEFB(op, since, inf, kern, mask)                                                           \
    {                                                                                              \
        "", op, since, 0, inf, kern, NULL, NULL, mask, 2, 2, 1, 1, 0, 0                            \
    }
#define DEFV(op, since, kern, mask)                                                                \
    {                                                                                              \
        "", op, since, 0, infer_variadic, kern, NULL, NULL, mask, 1, IB_OP_VARIADIC, 1, 1, 0, 0    \
    }

static const ib_op_def defs[] = {
    DEFB("Add", 7, infer_binary, k_add, N),
    DEFB("Sub", 7, infer_binary, k_sub, N),
    DEFB("Mul", 7, infer_binary, k_mul, N),
    DEFB("Div", 7, infer_binary, k_div, N),
    DEFB("Pow", 7, infer_binary, k_pow, N),
    DEFB("Mod", 10, infer_binary, k_mod, N),
    DEFB("PRelu", 7, infer_prelu, k_prelu, N),
    DEFB("Equal", 7, infer_cmp, k_eq, IB_DT_ALL),
    DEFB("Less", 7, infer_cmp, k_lt, N),
    DEFB("Greater", 7, infer_cmp, k_gt, N),
    DEFB("LessOrEqual", 12, infer_cmp, k_le, N),
    DEFB("GreaterOrEqual", 12, infer_cmp, k_ge, N),
    DEFB("And", 7, infer_cmp, k_and, IB_DT(BOOL)),
    DEFB("Or", 7, infer_cmp, k_or, IB_DT(BOOL)),
    DEFB("Xor", 7, infer_cmp, k_xor, IB_DT(BOOL)),
    DEFV("Min", 8, k_min, N),
    DEFV("Max", 8, k_max, N),
    DEFV("Sum", 8, k_sum, N),
    DEFV("Mean", 8, k_mean, IB_DT_FLOATS),
    {"", "Where", 9, 0, infer_where, k_where, NULL, NULL, IB_DT(BOOL), 3, 3, 1, 1, 0, 0},
};

const ib_op_family ib_ops_binary = {"binary", defs, IB_ARRAY_LEN(defs)};
