/*
 * build_fill.c - deterministic weights for generated models: xoshiro256**
 * (Blackman & Vigna) seeded through splitmix64 from the builder seed and an
 * FNV-1a hash of the tensor name, and the fills of build.h (constant,
 * uniform, normal, He, Xavier, arange) for every numeric dtype. Only IEEE
 * basic operations are used (normal = Irwin-Hall sum of four 16-bit
 * uniforms), so results are bit-identical on every machine and libm.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/rng.h"
#include "ir/ops/ops_util.h"
#include "onnx/build_impl.h"

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void rng_seed(rng *r, uint64_t seed, const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    uint64_t x = seed ^ h;
    for (int i = 0; i < 4; i++)
        r->s[i] = ib_splitmix64(&x);
}

/* [0, 1) with 53 random bits */
static double uniform01(rng *r)
{
    return (double)(next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Standard normal, approximately: Irwin-Hall with n = 4 scaled to unit variance. */
static double normal01(rng *r)
{
    uint64_t x = next(r);
    double sum = 0;
    for (int i = 0; i < 4; i++)
        sum += ((double)((x >> (16 * i)) & 0xffffu) + 0.5) * (1.0 / 65536.0);
    return (sum - 2.0) * 1.7320508075688772; /* var(sum) = 4/12 */
}

static void fans(const ib_tensor_desc *d, const ib_fill *f, double *fan_in, double *fan_out)
{
    double in = 1, out = 1;
    if (d->ndim == 1) {
        in = out = (double)d->dims[0];
    } else if (d->ndim == 2) {
        in = (double)d->dims[0];
        out = (double)d->dims[1];
    } else if (d->ndim >= 3) {
        double rf = 1;
        for (int32_t i = 2; i < d->ndim; i++)
            rf *= (double)d->dims[i];
        in = (double)d->dims[1] * rf;
        out = (double)d->dims[0] * rf;
    }
    *fan_in = f->fan_in > 0 ? (double)f->fan_in : IB_MAX(in, 1.0);
    *fan_out = f->fan_out > 0 ? (double)f->fan_out : IB_MAX(out, 1.0);
}

static bool is_float(enum ib_dtype t)
{
    return t == IB_DTYPE_FLOAT32 || t == IB_DTYPE_FLOAT64 || t == IB_DTYPE_FLOAT16 ||
           t == IB_DTYPE_BFLOAT16;
}

/* The range of an integer dtype; false for the others (floats, bool). */
static bool int_range(enum ib_dtype t, double *lo, double *hi)
{
    switch (t) {
    case IB_DTYPE_INT8: *lo = INT8_MIN, *hi = INT8_MAX; return true;
    case IB_DTYPE_UINT8: *lo = 0, *hi = UINT8_MAX; return true;
    case IB_DTYPE_INT16: *lo = INT16_MIN, *hi = INT16_MAX; return true;
    case IB_DTYPE_UINT16: *lo = 0, *hi = UINT16_MAX; return true;
    case IB_DTYPE_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    case IB_DTYPE_UINT32: *lo = 0, *hi = UINT32_MAX; return true;
    case IB_DTYPE_INT64: *lo = -9223372036854775808.0, *hi = 9223372036854774784.0; return true;
    case IB_DTYPE_UINT64: *lo = 0, *hi = 18446744073709549568.0; return true;
    default: return false;
    }
}

/* Store v as element i of t (integers rounded half up and clamped to the dtype's range; the
 * store itself is the ops' dtype-generic one). The caller has checked the dtype has a size. */
static void store(ib_tensor *t, size_t i, double v)
{
    double lo, hi;
    if (int_range(t->desc.dtype, &lo, &hi)) {
        v = floor(v + 0.5);
        v = v != v ? 0 : IB_MIN(IB_MAX(v, lo), hi);
    }
    ib_op_st(t->data, t->desc.dtype, (int64_t)i, v);
}

int ib_build_fill_tensor(ib_tensor *t, const ib_fill *f, uint64_t seed, const char *name, char *msg,
                         size_t msg_size)
{
    int64_t n64 = ib_tensor_desc_numel(&t->desc);
    enum ib_dtype dt = t->desc.dtype;
    if (n64 < 0 || ib_dtype_size(dt) == 0) {
        snprintf(msg, msg_size, "weight '%s': cannot fill a %s tensor", name, ib_dtype_name(dt));
        return IB_EINVAL;
    }
    size_t n = (size_t)n64;
    if ((f->kind == IB_FILL_HE || f->kind == IB_FILL_XAVIER || f->kind == IB_FILL_NORMAL) &&
        !is_float(dt)) {
        snprintf(msg, msg_size, "weight '%s': a %s fill needs a floating-point dtype, not %s", name,
                 f->kind == IB_FILL_HE       ? "He"
                 : f->kind == IB_FILL_XAVIER ? "Xavier"
                                             : "normal",
                 ib_dtype_name(dt));
        return IB_EINVAL;
    }
    rng r;
    rng_seed(&r, seed, name);
    double fi, fo;
    fans(&t->desc, f, &fi, &fo);
    switch (f->kind) {
    case IB_FILL_ZEROS:
        memset(t->data, 0, t->nbytes);
        return IB_OK;
    case IB_FILL_CONST:
        for (size_t i = 0; i < n; i++)
            store(t, i, f->a);
        return IB_OK;
    case IB_FILL_ARANGE:
        for (size_t i = 0; i < n; i++)
            store(t, i, f->a + f->b * (double)i);
        return IB_OK;
    case IB_FILL_UNIFORM:
        if (!(f->b >= f->a)) {
            snprintf(msg, msg_size, "weight '%s': uniform range [%g, %g) is empty", name, f->a,
                     f->b);
            return IB_EINVAL;
        }
        if (is_float(dt)) {
            for (size_t i = 0; i < n; i++)
                store(t, i, f->a + (f->b - f->a) * uniform01(&r));
        } else { /* integers: a..b inclusive */
            double lo = ceil(f->a), span = floor(f->b) - lo + 1;
            for (size_t i = 0; i < n; i++)
                store(t, i, lo + floor(uniform01(&r) * span));
        }
        return IB_OK;
    case IB_FILL_NORMAL:
        for (size_t i = 0; i < n; i++)
            store(t, i, f->a + f->b * normal01(&r));
        return IB_OK;
    case IB_FILL_HE: {
        double std = sqrt(2.0 / fi);
        for (size_t i = 0; i < n; i++)
            store(t, i, std * normal01(&r));
        return IB_OK;
    }
    case IB_FILL_XAVIER: {
        double lim = sqrt(6.0 / (fi + fo));
        for (size_t i = 0; i < n; i++)
            store(t, i, -lim + 2.0 * lim * uniform01(&r));
        return IB_OK;
    }
    }
    snprintf(msg, msg_size, "weight '%s': unknown fill kind %d", name, (int)f->kind);
    return IB_EINVAL;
}

ib_fill ib_fill_zeros(void)
{
    ib_fill f = {IB_FILL_ZEROS, 0, 0, 0, 0};
    return f;
}

ib_fill ib_fill_const(double v)
{
    ib_fill f = {IB_FILL_CONST, v, 0, 0, 0};
    return f;
}

ib_fill ib_fill_uniform(double lo, double hi)
{
    ib_fill f = {IB_FILL_UNIFORM, lo, hi, 0, 0};
    return f;
}

ib_fill ib_fill_normal(double mean, double std)
{
    ib_fill f = {IB_FILL_NORMAL, mean, std, 0, 0};
    return f;
}

ib_fill ib_fill_he(void)
{
    ib_fill f = {IB_FILL_HE, 0, 0, 0, 0};
    return f;
}

ib_fill ib_fill_xavier(void)
{
    ib_fill f = {IB_FILL_XAVIER, 0, 0, 0, 0};
    return f;
}

ib_fill ib_fill_arange(double start, double step)
{
    ib_fill f = {IB_FILL_ARANGE, start, step, 0, 0};
    return f;
}
