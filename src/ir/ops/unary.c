/*
 * unary.c - elementwise ops with one tensor input: activations (Relu,
 * LeakyRelu, Sigmoid, Tanh, Elu, Selu, HardSigmoid, HardSwish, Softplus,
 * Softsign, Celu, ThresholdedRelu, Shrink, inferbench.Gelu), math (Erf,
 * Sqrt, Exp, Log, Neg, Abs, Sign, Reciprocal, Ceil, Floor, Round, trig),
 * tests (IsNaN, IsInf, Not), Clip and the identities (Identity, Dropout).
 *
 * Floats are computed in double and rounded once to the output type; ints
 * (where the op allows them) use exact int64 arithmetic.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

enum un_op {
    U_RELU,
    U_LEAKY,
    U_SIGMOID,
    U_TANH,
    U_ERF,
    U_SQRT,
    U_EXP,
    U_LOG,
    U_NEG,
    U_ABS,
    U_SIGN,
    U_RECIP,
    U_CEIL,
    U_FLOOR,
    U_ROUND,
    U_SIN,
    U_COS,
    U_TAN,
    U_ASIN,
    U_ACOS,
    U_ATAN,
    U_SINH,
    U_COSH,
    U_ASINH,
    U_ACOSH,
    U_ATANH,
    U_ELU,
    U_SELU,
    U_HSIGMOID,
    U_HSWISH,
    U_SOFTPLUS,
    U_SOFTSIGN,
    U_CELU,
    U_THRELU,
    U_SHRINK,
    U_GELU,
    U_GELU_TANH,
    U_ISNAN,
    U_ISINF,
    U_NOT,
    U_CLIP,
    U_IDENTITY,
};

typedef struct uparam {
    double alpha, beta, gamma;
    double lo, hi;    /* Clip bounds */
    int64_t ilo, ihi; /* Clip bounds for integer inputs */
    bool neg, pos;    /* IsInf detect_negative / detect_positive */
} uparam;

/* The op on one value (x and result in double). */
static double uf(enum un_op op, double x, const uparam *p)
{
    switch (op) {
    case U_RELU:
        return x > 0 ? x : 0.0;
    case U_LEAKY:
        return x >= 0 ? x : p->alpha * x;
    case U_SIGMOID:
        return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case U_TANH:
        return tanh(x);
    case U_ERF:
        return erf(x);
    case U_SQRT:
        return sqrt(x);
    case U_EXP:
        return exp(x);
    case U_LOG:
        return log(x);
    case U_NEG:
        return -x;
    case U_ABS:
        return fabs(x);
    case U_SIGN:
        return x > 0 ? 1.0 : x < 0 ? -1.0 : x; /* keeps NaN and 0 */
    case U_RECIP:
        return 1.0 / x;
    case U_CEIL:
        return ceil(x);
    case U_FLOOR:
        return floor(x);
    case U_ROUND:
        return nearbyint(x); /* half to even (default rounding mode) */
    case U_SIN:
        return sin(x);
    case U_COS:
        return cos(x);
    case U_TAN:
        return tan(x);
    case U_ASIN:
        return asin(x);
    case U_ACOS:
        return acos(x);
    case U_ATAN:
        return atan(x);
    case U_SINH:
        return sinh(x);
    case U_COSH:
        return cosh(x);
    case U_ASINH:
        return asinh(x);
    case U_ACOSH:
        return acosh(x);
    case U_ATANH:
        return atanh(x);
    case U_ELU:
        return x >= 0 ? x : p->alpha * (exp(x) - 1.0);
    case U_SELU:
        return x > 0 ? p->gamma * x : p->gamma * (p->alpha * exp(x) - p->alpha);
    case U_HSIGMOID:
        return fmax(0.0, fmin(1.0, p->alpha * x + p->beta));
    case U_HSWISH:
        return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    case U_SOFTPLUS:
        return x > 30 ? x : log1p(exp(x));
    case U_SOFTSIGN:
        return x / (1.0 + fabs(x));
    case U_CELU:
        return fmax(0.0, x) + fmin(0.0, p->alpha * (exp(x / p->alpha) - 1.0));
    case U_THRELU:
        return x > p->alpha ? x : 0.0;
    case U_SHRINK:
        return x < -p->gamma ? x + p->beta : x > p->gamma ? x - p->beta : 0.0;
    /* Gelu: x * Phi(x) (erf form) or the tanh approximation */
    case U_GELU:
        return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
    case U_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    case U_ISNAN:
        return x != x;
    case U_ISINF:
        return (isinf(x) && ((x > 0 && p->pos) || (x < 0 && p->neg))) ? 1.0 : 0.0;
    case U_NOT:
        return x == 0.0;
    case U_CLIP:
        return x < p->lo ? p->lo : x > p->hi ? p->hi : x;
    case U_IDENTITY:
        return x;
    }
    return x;
}

/* The op on integers (only the ops that ONNX defines for integer types). */
static int64_t ui(enum un_op op, int64_t x, const uparam *p, bool is_unsigned)
{
    switch (op) {
    case U_RELU:
        return x > 0 ? x : 0;
    case U_NEG:
        return (int64_t)(0u - (uint64_t)x); /* wraps like C unsigned */
    case U_ABS:
        return is_unsigned || x >= 0 ? x : (int64_t)(0u - (uint64_t)x);
    case U_SIGN:
        return x > 0 ? 1 : x < 0 ? -1 : 0;
    case U_CLIP:
        return x < p->ilo ? p->ilo : x > p->ihi ? p->ihi : x;
    case U_NOT:
        return x == 0;
    default:
        return x;
    }
}

static bool int_ok(enum un_op op)
{
    return op == U_RELU || op == U_NEG || op == U_ABS || op == U_SIGN || op == U_CLIP ||
           op == U_IDENTITY || op == U_NOT;
}

static int params(const ib_op_ctx *ctx, enum un_op op, const ib_tensor *const *in, uint32_t n_in,
                  enum ib_dtype dt, uparam *p, ib_err *err)
{
    memset(p, 0, sizeof *p);
    switch (op) {
    case U_LEAKY:
        p->alpha = (double)ib_op_attr_f(ctx, "alpha", 0.01f);
        break;
    case U_ELU:
    case U_CELU:
    case U_THRELU:
        p->alpha = (double)ib_op_attr_f(ctx, "alpha", 1.0f);
        break;
    case U_SELU:
        p->alpha = (double)ib_op_attr_f(ctx, "alpha", 1.67326319217681884765625f);
        p->gamma = (double)ib_op_attr_f(ctx, "gamma", 1.05070102214813232421875f);
        break;
    case U_HSIGMOID:
        p->alpha = (double)ib_op_attr_f(ctx, "alpha", 0.2f);
        p->beta = (double)ib_op_attr_f(ctx, "beta", 0.5f);
        break;
    case U_SHRINK:
        p->beta = (double)ib_op_attr_f(ctx, "bias", 0.0f);
        p->gamma = (double)ib_op_attr_f(ctx, "lambd", 0.5f);
        break;
    case U_ISINF:
        p->neg = ib_op_attr_i(ctx, "detect_negative", 1) != 0;
        p->pos = ib_op_attr_i(ctx, "detect_positive", 1) != 0;
        break;
    case U_CLIP:
        p->lo = -IB_INF;
        p->hi = IB_INF;
        p->ilo = INT64_MIN;
        p->ihi = INT64_MAX;
        if (ib_op_opset(ctx) < 11) {
            /* Clip-6: bounds are attributes (defaults: the float range) */
            p->lo = (double)ib_op_attr_f(ctx, "min", -FLT_MAX);
            p->hi = (double)ib_op_attr_f(ctx, "max", FLT_MAX);
        } else {
            /* Clip-11+: optional scalar inputs min, max of the input's type */
            for (uint32_t k = 1; k <= 2; k++) {
                const ib_tensor *b = ib_op_cin(in, n_in, k);
                if (!b) continue;
                if (b->desc.dtype != dt)
                    return IB_OP_BAD(ctx, err, "input %s has type %s, input 0 %s",
                                     k == 1 ? "min" : "max", ib_dtype_name(b->desc.dtype),
                                     ib_dtype_name(dt));
                double v;
                int rc = ib_op_read_scalar(ctx, err, b, k == 1 ? "min" : "max", &v);
                if (rc) return rc;
                int64_t iv = ib_op_ldi(b->data, b->desc.dtype, 0);
                if (k == 1) {
                    p->lo = v;
                    p->ilo = iv;
                } else {
                    p->hi = v;
                    p->ihi = iv;
                }
            }
        }
        break;
    default:
        break;
    }
    return IB_OK;
}

/* y = op(x) over the whole tensor (x and y may alias). */
static int unary_run(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, enum un_op op, ib_err *err)
{
    const ib_tensor *x = in[0];
    ib_tensor *y = out[0];
    enum ib_dtype dt = x->desc.dtype, odt = y->desc.dtype;
    int64_t n = ib_tensor_desc_numel(&x->desc);
    uparam p;
    int rc = params(ctx, op, in, n_in, dt, &p, err);
    if (rc) return rc;
    if (op == U_IDENTITY) {
        if (y->data != x->data && n > 0) memcpy(y->data, x->data, (size_t)n * ib_dtype_size(dt));
        return IB_OK;
    }
    if (op == U_NOT && dt != IB_DTYPE_BOOL)
        return IB_OP_UNSUP(ctx, err, "input must be bool, not %s", ib_dtype_name(dt));
    if (dt == IB_DTYPE_FLOAT32 && odt == IB_DTYPE_FLOAT32) {
        const float *xs = x->data;
        float *ys = y->data;
        for (int64_t i = 0; i < n; i++)
            ys[i] = (float)uf(op, (double)xs[i], &p);
    } else if (ib_dtype_is_float(dt)) {
        for (int64_t i = 0; i < n; i++)
            ib_op_st(y->data, odt, i, uf(op, ib_op_ld(x->data, dt, i), &p));
    } else if (ib_dtype_is_int(dt) || dt == IB_DTYPE_BOOL) {
        if (!int_ok(op))
            return IB_OP_UNSUP(ctx, err, "input dtype %s is not supported (float types only)",
                               ib_dtype_name(dt));
        bool u = ib_dtype_is_unsigned(dt);
        if (u && dt == IB_DTYPE_UINT64 && op == U_CLIP)
            return IB_OP_UNSUP(ctx, err, "Clip on uint64 is not supported");
        for (int64_t i = 0; i < n; i++)
            ib_op_sti(y->data, odt, i, ui(op, ib_op_ldi(x->data, dt, i), &p, u));
    } else {
        return IB_OP_UNSUP(ctx, err, "input dtype %s is not supported", ib_dtype_name(dt));
    }
    return IB_OK;
}

#define UNARY_KERNEL(fn, code)                                                                     \
    static int fn(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,                 \
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)                              \
    {                                                                                              \
        IB_UNUSED(n_out);                                                                          \
        return unary_run(ctx, in, n_in, out, code, err);                                           \
    }

UNARY_KERNEL(k_relu, U_RELU)
UNARY_KERNEL(k_leaky, U_LEAKY)
UNARY_KERNEL(k_sigmoid, U_SIGMOID)
UNARY_KERNEL(k_tanh, U_TANH)
UNARY_KERNEL(k_erf, U_ERF)
UNARY_KERNEL(k_sqrt, U_SQRT)
UNARY_KERNEL(k_exp, U_EXP)
UNARY_KERNEL(k_log, U_LOG)
UNARY_KERNEL(k_neg, U_NEG)
UNARY_KERNEL(k_abs, U_ABS)
UNARY_KERNEL(k_sign, U_SIGN)
UNARY_KERNEL(k_recip, U_RECIP)
UNARY_KERNEL(k_ceil, U_CEIL)
UNARY_KERNEL(k_floor, U_FLOOR)
UNARY_KERNEL(k_round, U_ROUND)
UNARY_KERNEL(k_sin, U_SIN)
UNARY_KERNEL(k_cos, U_COS)
UNARY_KERNEL(k_tan, U_TAN)
UNARY_KERNEL(k_asin, U_ASIN)
UNARY_KERNEL(k_acos, U_ACOS)
UNARY_KERNEL(k_atan, U_ATAN)
UNARY_KERNEL(k_sinh, U_SINH)
UNARY_KERNEL(k_cosh, U_COSH)
UNARY_KERNEL(k_asinh, U_ASINH)
UNARY_KERNEL(k_acosh, U_ACOSH)
UNARY_KERNEL(k_atanh, U_ATANH)
UNARY_KERNEL(k_elu, U_ELU)
UNARY_KERNEL(k_selu, U_SELU)
UNARY_KERNEL(k_hsigmoid, U_HSIGMOID)
UNARY_KERNEL(k_hswish, U_HSWISH)
UNARY_KERNEL(k_softplus, U_SOFTPLUS)
UNARY_KERNEL(k_softsign, U_SOFTSIGN)
UNARY_KERNEL(k_celu, U_CELU)
UNARY_KERNEL(k_threlu, U_THRELU)
UNARY_KERNEL(k_shrink, U_SHRINK)
UNARY_KERNEL(k_isnan, U_ISNAN)
UNARY_KERNEL(k_isinf, U_ISINF)
UNARY_KERNEL(k_not, U_NOT)
UNARY_KERNEL(k_clip, U_CLIP)
UNARY_KERNEL(k_identity, U_IDENTITY)

/* inferbench.Gelu: attribute approximate = "none" (erf form, default) | "tanh". */
static int k_gelu(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const char *a = ib_op_attr_s(ctx, "approximate", "none");
    if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
        return IB_OP_UNSUP(ctx, err, "attribute approximate='%s' is not supported (none, tanh)", a);
    return unary_run(ctx, in, n_in, out, strcmp(a, "tanh") == 0 ? U_GELU_TANH : U_GELU, err);
}

static int infer_bool(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(dd);
    IB_UNUSED(err);
    out[0] = *in[0];
    out[0].dtype = IB_DTYPE_BOOL;
    IB_UNUSED(n_out);
    return IB_OK;
}

/* Dropout in inference: output = input; the optional mask is all ones
 * (bool from opset 10, the input type before). Training with a ratio > 0
 * is random and not supported. */
static int infer_dropout(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(dd);
    IB_UNUSED(err);
    out[0] = *in[0];
    if (n_out > 1) {
        out[1] = *in[0];
        if (ib_op_opset(ctx) >= 10) out[1].dtype = IB_DTYPE_BOOL;
    }
    return IB_OK;
}

static int k_dropout(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    double ratio = (double)ib_op_attr_f(ctx, "ratio", 0.5f);
    bool training = false;
    if (ib_op_opset(ctx) >= 12) {
        const ib_tensor *r = ib_op_cin(in, n_in, 1), *t = ib_op_cin(in, n_in, 2);
        ratio = 0.5;
        int rc;
        if (r && (rc = ib_op_read_scalar(ctx, err, r, "ratio", &ratio))) return rc;
        double tv = 0;
        if (t && (rc = ib_op_read_scalar(ctx, err, t, "training_mode", &tv))) return rc;
        training = tv != 0;
    }
    if (training && ratio != 0.0)
        return IB_OP_UNSUP(ctx, err,
                           "training_mode=1 with ratio %g is random (only inference or ratio 0 "
                           "is supported)",
                           ratio);
    int rc = unary_run(ctx, in, n_in, out, U_IDENTITY, err);
    if (rc) return rc;
    if (n_out > 1 && out[1]) {
        int64_t n = ib_tensor_desc_numel(&out[1]->desc);
        for (int64_t i = 0; i < n; i++)
            ib_op_st(out[1]->data, out[1]->desc.dtype, i, 1.0);
    }
    return IB_OK;
}

#define F  IB_DT_FLOATS
#define FI (IB_DT_FLOATS | IB_DT_SINTS)
#define FN IB_DT_NUMS
#define DEF(op, since, kern, mask)                                                                 \
    {                                                                                              \
        "", op, since, 0, ib_op_infer_same, kern, NULL, NULL, mask, 1, 1, 1, 1, 0, 0               \
    }
#define DEFB(op, since, kern, mask)                                                                \
    {                                                                                              \
        "", op, since, 0, infer_bool, kern, NULL, NULL, mask, 1, 1, 1, 1, 0, 0                     \
    }

static const ib_op_def defs[] = {
    DEF("Relu", 1, k_relu, FI),
    DEF("LeakyRelu", 1, k_leaky, F),
    DEF("Sigmoid", 1, k_sigmoid, F),
    DEF("Tanh", 1, k_tanh, F),
    DEF("Erf", 9, k_erf, F),
    DEF("Sqrt", 1, k_sqrt, F),
    DEF("Exp", 1, k_exp, F),
    DEF("Log", 1, k_log, F),
    DEF("Neg", 1, k_neg, FI),
    DEF("Abs", 1, k_abs, FN),
    DEF("Sign", 9, k_sign, FN),
    DEF("Reciprocal", 1, k_recip, F),
    DEF("Ceil", 1, k_ceil, F),
    DEF("Floor", 1, k_floor, F),
    DEF("Round", 11, k_round, F),
    DEF("Sin", 7, k_sin, F),
    DEF("Cos", 7, k_cos, F),
    DEF("Tan", 7, k_tan, F),
    DEF("Asin", 7, k_asin, F),
    DEF("Acos", 7, k_acos, F),
    DEF("Atan", 7, k_atan, F),
    DEF("Sinh", 9, k_sinh, F),
    DEF("Cosh", 9, k_cosh, F),
    DEF("Asinh", 9, k_asinh, F),
    DEF("Acosh", 9, k_acosh, F),
    DEF("Atanh", 9, k_atanh, F),
    DEF("Elu", 1, k_elu, F),
    DEF("Selu", 1, k_selu, F),
    DEF("HardSigmoid", 1, k_hsigmoid, F),
    DEF("HardSwish", 14, k_hswish, F),
    DEF("Softplus", 1, k_softplus, F),
    DEF("Softsign", 1, k_softsign, F),
    DEF("Celu", 12, k_celu, F),
    DEF("ThresholdedRelu", 10, k_threlu, F),
    DEF("Shrink", 9, k_shrink, F),
    DEFB("IsNaN", 9, k_isnan, F),
    DEFB("IsInf", 10, k_isinf, F),
    DEF("Not", 1, k_not, IB_DT(BOOL)),
    {"", "Clip", 1, 0, ib_op_infer_same, k_clip, NULL, NULL, FN, 1, 3, 1, 1, 0, 0},
    {"", "Identity", 1, 0, ib_op_infer_same, k_identity, NULL, NULL, 0, 1, 1, 1, 1, 0,
     IB_OP_F_ALIAS},
    {"", "Dropout", 1, 0, infer_dropout, k_dropout, NULL, NULL, F, 1, 3, 1, 2, 0, IB_OP_F_ALIAS},
    {"inferbench", "Gelu", 1, 0, ib_op_infer_same, k_gelu, NULL, NULL, F, 1, 1, 1, 1, 0, 0},
};

const ib_op_family ib_ops_unary = {"unary", defs, IB_ARRAY_LEN(defs)};
