/*
 * cuda_quant.c - the host side of the cuda backend's 8-bit paths (cuda_matmul_q8.c,
 * cuda_conv_i8.c): symmetric int8 and fp8 e4m3 scales and the per-channel quantisation of
 * constant weights, done once per device store before upload. No device code: tested without
 * a GPU (cuda_int8_weights_per_column, cuda_int8_filters_per_channel, cuda_fp8_*).
 *
 * q = clamp(rint(v * s), -127, 127) with s = 127 / max|v| over a tensor (activations, from
 * the calibrated range) or over one output channel (weights), as the cpu backend's s8 weights;
 * a zero or non-finite maximum gives s = 1. A NaN becomes -127 (fmaxf picks the number), so no
 * float-to-int conversion is undefined.
 *
 * fp8 (an fp8 session's products, cuda_matmul_q8.c): OCP FP8 E4M3 ("e4m3fn": 1 sign, 4 exponent
 * bits of bias 7, 3 mantissa bits, no infinities, S.1111.111 the only NaN; largest finite 448
 * = 0.1111.110, smallest subnormal 2^-9), the format cuBLASLt's CUDA_R_8F_E4M3 and cuda_fp8.h
 * use. Conversion rounds to nearest even and saturates finite and infinite values to +-448 as
 * __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) does on the device; NaN stays NaN (0x7F
 * with the sign). The scales map the amax to 448: s = 448 / amax (1 for a zero or non-finite
 * amax), per tensor for activations, per output column for weights.
 */
#include <math.h>

#include "backend/cuda/cuda_internal.h"

float cu_s8_scale(float amax)
{
    return amax > 0.0f && isfinite(amax) ? 127.0f / amax : 1.0f;
}

float cu_range_amax(const cu_val *v)
{
    return fmaxf(fabsf(v->rmin), fabsf(v->rmax));
}

float cu_s8_range_scale(const cu_val *v)
{
    return cu_s8_scale(cu_range_amax(v));
}

size_t cu_s8_offset(int64_t channels)
{
    return ((size_t)channels * sizeof(float) + 255) / 256 * 256;
}

static int8_t q8(float v, float s)
{
    return (int8_t)fminf(fmaxf(rintf(v * s), -127.0f), 127.0f);
}

void cu_quant_cols_s8(const float *b, int64_t K, int64_t N, bool tb, int8_t *q, float *inv_s)
{
    const int64_t sn = tb ? K : 1, sk = tb ? 1 : N; /* B's (k, n) at b[n sn + k sk] */
    for (int64_t n = 0; n < N; n++) {
        float amax = 0.0f;
        for (int64_t k = 0; k < K; k++)
            amax = fmaxf(amax, fabsf(b[n * sn + k * sk]));
        float s = cu_s8_scale(amax);
        inv_s[n] = 1.0f / s;
        for (int64_t k = 0; k < K; k++)
            q[n * K + k] = q8(b[n * sn + k * sk], s);
    }
}

void cu_quant_filter_s8(const float *w, int64_t K, int64_t C, int64_t RS, int8_t *q, float *inv_s)
{
    for (int64_t k = 0; k < K; k++) {
        const float *wk = w + k * C * RS;
        float amax = 0.0f;
        for (int64_t i = 0; i < C * RS; i++)
            amax = fmaxf(amax, fabsf(wk[i]));
        float s = cu_s8_scale(amax);
        inv_s[k] = 1.0f / s;
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < RS; p++)
                q[(k * RS + p) * C + c] = q8(wk[c * RS + p], s);
    }
}

float cu_e4m3_scale(float amax)
{
    return amax > 0.0f && isfinite(amax) ? CU_E4M3_MAX / amax : 1.0f;
}

uint8_t cu_e4m3_from_f32(float v)
{
    uint8_t sign = signbit(v) ? 0x80 : 0x00;
    float a = fabsf(v);
    if (isnan(v))
        return (uint8_t)(sign | 0x7F);
    if (a >= CU_E4M3_MAX) /* satfinite: 448 and beyond, infinities too */
        return (uint8_t)(sign | 0x7E);
    if (a < 0x1p-6f) /* subnormal: steps of 2^-9, code = the step count (8 is 2^-6, code 0x08) */
        return (uint8_t)(sign | (uint8_t)rintf(a * 0x1p9f));
    int x;
    float f = frexpf(a, &x); /* a = f 2^x, f in [0.5, 1): a = (2 f) 2^(x - 1) */
    int e = x - 1;
    float q = rintf((2.0f * f - 1.0f) * 8.0f); /* exact product; rintf rounds to nearest even */
    if (q == 8.0f) {
        q = 0.0f;
        e++;
    }
    unsigned code = (unsigned)(e + 7) << 3 | (unsigned)q; /* a < 448: at most 0x7E */
    return (uint8_t)(sign | code);
}

float cu_e4m3_to_f32(uint8_t c)
{
    int ex = (c >> 3) & 15, m = c & 7;
    float v = ex == 15 && m == 7 ? NAN
              : ex == 0          ? ldexpf((float)m, -9)
                                 : ldexpf(1.0f + (float)m / 8.0f, ex - 7);
    return c & 0x80 ? -v : v;
}

void cu_quant_cols_e4m3(const float *b, int64_t K, int64_t N, bool tb, uint8_t *q, float *inv_s)
{
    const int64_t sn = tb ? K : 1, sk = tb ? 1 : N; /* B's (k, n) at b[n sn + k sk] */
    for (int64_t n = 0; n < N; n++) {
        float amax = 0.0f;
        for (int64_t k = 0; k < K; k++)
            amax = fmaxf(amax, fabsf(b[n * sn + k * sk]));
        float s = cu_e4m3_scale(amax);
        inv_s[n] = 1.0f / s;
        for (int64_t k = 0; k < K; k++)
            q[n * K + k] = cu_e4m3_from_f32(b[n * sn + k * sk] * s);
    }
}

void cu_quant_filter_e4m3(const float *w, int64_t K, int64_t C, int64_t RS, uint8_t *q,
                          float *inv_s)
{
    for (int64_t k = 0; k < K; k++) {
        const float *wk = w + k * C * RS;
        float amax = 0.0f;
        for (int64_t i = 0; i < C * RS; i++)
            amax = fmaxf(amax, fabsf(wk[i]));
        float s = cu_e4m3_scale(amax);
        inv_s[k] = 1.0f / s;
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < RS; p++)
                q[(k * RS + p) * C + c] = cu_e4m3_from_f32(wk[c * RS + p] * s);
    }
}
