/*
 * tensor.c - tensor descriptors, aligned tensor allocation, dtype and
 * precision names, and fp16 conversions (round to nearest even; the bf16 pair
 * is inline in graph.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ir/graph.h"

size_t ib_dtype_size(enum ib_dtype t)
{
    switch (t) {
    case IB_DTYPE_FLOAT32:
    case IB_DTYPE_INT32:
    case IB_DTYPE_UINT32: return 4;
    case IB_DTYPE_UINT8:
    case IB_DTYPE_INT8:
    case IB_DTYPE_BOOL: return 1;
    case IB_DTYPE_UINT16:
    case IB_DTYPE_INT16:
    case IB_DTYPE_FLOAT16:
    case IB_DTYPE_BFLOAT16: return 2;
    case IB_DTYPE_INT64:
    case IB_DTYPE_FLOAT64:
    case IB_DTYPE_UINT64: return 8;
    default: return 0;
    }
}

const char *ib_dtype_name(enum ib_dtype t)
{
    switch (t) {
    case IB_DTYPE_FLOAT32: return "float32";
    case IB_DTYPE_UINT8: return "uint8";
    case IB_DTYPE_INT8: return "int8";
    case IB_DTYPE_UINT16: return "uint16";
    case IB_DTYPE_INT16: return "int16";
    case IB_DTYPE_INT32: return "int32";
    case IB_DTYPE_INT64: return "int64";
    case IB_DTYPE_STRING: return "string";
    case IB_DTYPE_BOOL: return "bool";
    case IB_DTYPE_FLOAT16: return "float16";
    case IB_DTYPE_FLOAT64: return "float64";
    case IB_DTYPE_UINT32: return "uint32";
    case IB_DTYPE_UINT64: return "uint64";
    case IB_DTYPE_BFLOAT16: return "bfloat16";
    default: return "undefined";
    }
}

const char *ib_precision_name(enum ib_precision p)
{
    switch (p) {
    case IB_PRECISION_FP32: return "fp32";
    case IB_PRECISION_BF16: return "bf16";
    case IB_PRECISION_FP16: return "fp16";
    case IB_PRECISION_INT8: return "int8";
    case IB_PRECISION_FP8: return "fp8";
    default: return "?";
    }
}

bool ib_precision_calibrated(enum ib_precision p)
{
    return p == IB_PRECISION_INT8 || p == IB_PRECISION_FP8;
}

int ib_precision_parse(const char *text, enum ib_precision *out)
{
    static const struct {
        const char *name;
        enum ib_precision p;
    } names[] = {{"fp32", IB_PRECISION_FP32},     {"float32", IB_PRECISION_FP32},
                 {"bf16", IB_PRECISION_BF16},     {"bfloat16", IB_PRECISION_BF16},
                 {"fp16", IB_PRECISION_FP16},     {"float16", IB_PRECISION_FP16},
                 {"int8", IB_PRECISION_INT8},     {"fp8", IB_PRECISION_FP8}};
    for (size_t i = 0; text && i < IB_ARRAY_LEN(names); i++)
        if (strcasecmp(text, names[i].name) == 0) {
            *out = names[i].p;
            return IB_OK;
        }
    return IB_EINVAL;
}

int64_t ib_tensor_desc_numel(const ib_tensor_desc *d)
{
    int64_t n = 1;
    for (int32_t i = 0; i < d->ndim; i++) {
        if (d->dims[i] < 0)
            return -1;
        if (d->dims[i] && n > INT64_MAX / d->dims[i])
            return -1;
        n *= d->dims[i];
    }
    return n;
}

size_t ib_tensor_desc_nbytes(const ib_tensor_desc *d)
{
    int64_t n = ib_tensor_desc_numel(d);
    size_t es = ib_dtype_size(d->dtype);
    if (n < 0 || (es && (uint64_t)n > SIZE_MAX / es))
        return 0;
    return (size_t)n * es;
}

bool ib_tensor_desc_equal(const ib_tensor_desc *a, const ib_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

bool ib_tensor_desc_is_f32(const ib_tensor_desc *d, int nd, int64_t a, int64_t b, int64_t c)
{
    int64_t want[3] = {a, b, c};
    if (!d || nd < 0 || nd > 3 || d->ndim != nd || d->dtype != IB_DTYPE_FLOAT32)
        return false;
    for (int i = 0; i < nd; i++)
        if (d->dims[i] != want[i])
            return false;
    return true;
}

const char *ib_tensor_desc_str(const ib_tensor_desc *d, char *buf, size_t n)
{
    size_t off = 0;
    int w = snprintf(buf, n, "%s[", ib_dtype_name(d->dtype));
    off = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < d->ndim && off < n; i++) {
        if (d->dims[i] < 0)
            w = snprintf(buf + off, n - off, "%s?", i ? "," : "");
        else
            w = snprintf(buf + off, n - off, "%s%lld", i ? "," : "", (long long)d->dims[i]);
        off += w > 0 ? (size_t)w : 0;
    }
    if (off < n)
        snprintf(buf + off, n - off, "]");
    return buf;
}

/* One block: [ib_tensor][padding][data aligned to 64]. */
int ib_tensor_alloc(const ib_tensor_desc *desc, ib_tensor **out)
{
    if (ib_tensor_desc_numel(desc) < 0 || desc->ndim < 0 || desc->ndim > IB_MAX_DIMS)
        return IB_EINVAL;
    size_t nbytes = ib_tensor_desc_nbytes(desc);
    if (ib_tensor_desc_numel(desc) > 0 && nbytes == 0 && desc->dtype != IB_DTYPE_STRING)
        return IB_EINVAL;
    if (nbytes > SIZE_MAX - sizeof(ib_tensor) - 128)
        return IB_ENOMEM;
    unsigned char *block = ib_malloc(sizeof(ib_tensor) + 64 + nbytes);
    if (!block)
        return IB_ENOMEM;
    ib_tensor *t = (ib_tensor *)(void *)block;
    uintptr_t p = (uintptr_t)(block + sizeof(ib_tensor));
    p = (p + 63) & ~(uintptr_t)63;
    t->desc = *desc;
    t->data = (void *)p;
    t->nbytes = nbytes;
    t->owns_data = false; /* data is part of the block */
    memset(t->data, 0, nbytes);
    *out = t;
    return IB_OK;
}

int ib_tensor_wrap(const ib_tensor_desc *desc, void *data, size_t nbytes, ib_tensor **out)
{
    ib_tensor *t = ib_malloc(sizeof *t);
    if (!t)
        return IB_ENOMEM;
    t->desc = *desc;
    t->data = data;
    t->nbytes = nbytes;
    t->owns_data = false;
    *out = t;
    return IB_OK;
}

void ib_tensor_free(ib_tensor *t)
{
    if (!t)
        return;
    if (t->owns_data)
        ib_free(t->data);
    ib_free(t);
}


uint16_t ib_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t absu = u & 0x7fffffffu;
    if (absu > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u); /* NaN */
    if (absu >= 0x477ff000u)                /* rounds to >= 65520: inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absu < 0x38800000u) { /* subnormal or zero in half */
        float a;
        memcpy(&a, &absu, 4);
        /* scale so that one half-subnormal ulp (2^-24) becomes 1, round to even */
        float scaled = a * 16777216.0f;
        uint32_t m = (uint32_t)lrintf(scaled);
        return (uint16_t)(sign | m);
    }
    uint32_t exp = ((absu >> 23) - 127 + 15) & 0x1fu;
    uint32_t mant = absu & 0x7fffffu;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

float ib_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        float f = (float)mant * (1.0f / 16777216.0f);
        memcpy(&u, &f, 4);
        u |= sign;
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (mant << 13);
    } else {
        u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void ib_tensor_desc_bcast_strides(const ib_tensor_desc *d, int rank, int64_t *st)
{
    int64_t acc = 1;
    for (int i = 0; i < rank; i++)
        st[i] = 0;
    for (int i = d->ndim - 1; i >= 0; i--) {
        int j = i + rank - d->ndim;
        if (j >= 0)
            st[j] = d->dims[i] == 1 ? 0 : acc;
        acc *= d->dims[i];
    }
}
