/*
 * cuda_quant.c - the host side of the cuda backend's int8 paths (cuda_matmul_i8.c,
 * cuda_conv_i8.c): symmetric int8 scales and the per-channel quantisation of constant
 * weights, done once per device store before upload. No device code: tested without a GPU
 * (cuda_int8_weights_per_column, cuda_int8_filters_per_channel).
 *
 * q = clamp(rint(v * s), -127, 127) with s = 127 / max|v| over a tensor (activations, from
 * the calibrated range) or over one output channel (weights), as the cpu backend's s8 weights;
 * a zero or non-finite maximum gives s = 1. A NaN becomes -127 (fmaxf picks the number), so no
 * float-to-int conversion is undefined.
 */
#include <math.h>

#include "backend/cuda/cuda_internal.h"

float cu_s8_scale(float amax)
{
    return amax > 0.0f && isfinite(amax) ? 127.0f / amax : 1.0f;
}

float cu_s8_range_scale(const cu_val *v)
{
    return cu_s8_scale(fmaxf(fabsf(v->rmin), fabsf(v->rmax)));
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
