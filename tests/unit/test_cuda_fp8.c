/*
 * test_cuda_fp8.c - the host side of the cuda backend's fp8 products (cuda_quant.c,
 * cuda_matmul_q8.c): the float <-> e4m3 conversion against the OCP FP8 E4M3 format's table
 * (1 sign, 4 exponent bits of bias 7, 3 mantissa bits, no infinities, S.1111.111 NaN, 448
 * the largest finite value), with round to nearest even and the satfinite saturation the
 * device conversion uses, and the per-column e4m3 weights. No GPU needed: these run in CI.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "test.h"

#ifdef IB_WITH_CUDA
#include "backend/cuda/cuda_internal.h"
#endif

/* Known codes of the format (OCP 8-bit floating point specification, E4M3 column). */
TEST(cuda_fp8_e4m3_known_codes)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    static const struct {
        uint8_t code;
        float v;
    } known[] = {
        {0x00, 0.0f},         {0x80, -0.0f},   {0x01, 0x1p-9f},  {0x07, 7.0f * 0x1p-9f},
        {0x08, 0x1p-6f},      {0x30, 0.5f},    {0x38, 1.0f},     {0x3C, 1.5f},
        {0x40, 2.0f},         {0x77, 240.0f},  {0x7D, 416.0f},   {0x7E, 448.0f},
        {0xB8, -1.0f},        {0xFE, -448.0f}, {0x39, 1.125f},   {0x4B, 5.5f},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        ASSERT_TRUE(cu_e4m3_to_f32(known[i].code) == known[i].v);
        ASSERT_TRUE(signbit(cu_e4m3_to_f32(known[i].code)) == signbit(known[i].v));
        ASSERT_INT_EQ(cu_e4m3_from_f32(known[i].v), known[i].code);
    }
    ASSERT_TRUE(isnan(cu_e4m3_to_f32(0x7F)));
    ASSERT_TRUE(isnan(cu_e4m3_to_f32(0xFF)));
#endif
}

/* Every code: decode then encode gives the code back (NaN as 0x7F / 0xFF); the codes of one
 * sign increase with their value; and every midpoint between neighbours rounds to the one
 * with the even mantissa, just above it to the upper and just below to the lower. */
TEST(cuda_fp8_e4m3_round_trip_and_ties)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    for (int c = 0; c < 256; c++) {
        float v = cu_e4m3_to_f32((uint8_t)c);
        ASSERT_INT_EQ(cu_e4m3_from_f32(v), c);
    }
    int ties = 0;
    for (int sign = 0; sign < 2; sign++)
        for (int c = 0; c < 0x7E; c++) {
            uint8_t lo = (uint8_t)(c | sign << 7), hi = (uint8_t)(lo + 1);
            float a = cu_e4m3_to_f32(lo), b = cu_e4m3_to_f32(hi);
            ASSERT_TRUE(sign ? b < a : b > a);
            float mid = (a + b) / 2.0f; /* exact: both have at most 4 significant bits */
            ASSERT_TRUE((mid - a) == (b - mid));
            uint8_t even = (lo & 1) == 0 ? lo : hi;
            ASSERT_INT_EQ(cu_e4m3_from_f32(mid), even);
            ASSERT_INT_EQ(cu_e4m3_from_f32(nextafterf(mid, a)), lo);
            ASSERT_INT_EQ(cu_e4m3_from_f32(nextafterf(mid, b)), hi);
            ties++;
        }
    ASSERT_INT_EQ(ties, 2 * 0x7E);
#endif
}

/* satfinite: beyond 448 (infinities too) saturates; NaN stays NaN; below half the smallest
 * subnormal is zero of the same sign. */
TEST(cuda_fp8_e4m3_saturation)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    ASSERT_INT_EQ(cu_e4m3_from_f32(464.0f), 0x7E); /* the tie with 480 (a NaN code) */
    ASSERT_INT_EQ(cu_e4m3_from_f32(1e6f), 0x7E);
    ASSERT_INT_EQ(cu_e4m3_from_f32(-1e6f), 0xFE);
    ASSERT_INT_EQ(cu_e4m3_from_f32(INFINITY), 0x7E);
    ASSERT_INT_EQ(cu_e4m3_from_f32(-INFINITY), 0xFE);
    ASSERT_INT_EQ(cu_e4m3_from_f32(NAN) & 0x7F, 0x7F);
    ASSERT_INT_EQ(cu_e4m3_from_f32(0x1p-10f), 0x00);  /* tie between 0 and 2^-9: even */
    ASSERT_INT_EQ(cu_e4m3_from_f32(-0x1p-11f), 0x80);
    ASSERT_INT_EQ(cu_e4m3_from_f32(0x1.8p-10f), 0x01); /* 0.75 of a step rounds up */
    ASSERT_TRUE(cu_e4m3_scale(0.0f) == 1.0f);
    ASSERT_TRUE(cu_e4m3_scale(INFINITY) == 1.0f);
    ASSERT_TRUE(cu_e4m3_scale(2.0f) == 224.0f);
#endif
}

/* The fp8 products' weights: per column of B its max |B| becomes 448 (code 0x7E or 0xFE),
 * every element is within half an e4m3 step of B (relative 2^-4 for normal codes), B and its
 * transpose give the same bytes, a zero column keeps scale 1. */
TEST(cuda_fp8_weights_per_column)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    enum { K = 32, N = 5 };
    float b[K * N], bt[N * K], inv[N], inv_t[N];
    uint8_t q[N * K], qt[N * K];
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) {
            float v = n == 3 ? 0.0f
                             : (float)((k * 7 + n * 3) % 23 - 11) * (float)(n + 1) * 0.013f;
            b[k * N + n] = v;
            bt[n * K + k] = v;
        }
    cu_quant_cols_e4m3(b, K, N, false, q, inv);
    cu_quant_cols_e4m3(bt, K, N, true, qt, inv_t);
    ASSERT_TRUE(memcmp(q, qt, sizeof q) == 0);
    for (int n = 0; n < N; n++) {
        ASSERT_TRUE(inv[n] == inv_t[n]);
        int at_max = 0;
        for (int k = 0; k < K; k++) {
            uint8_t c = q[n * K + k];
            at_max += (c & 0x7F) == 0x7E;
            double got = (double)cu_e4m3_to_f32(c) * (double)inv[n];
            double ref = (double)b[k * N + n];
            /* half a step: 2^-4 of the value for normal codes, 2^-10 x inv absolute below */
            double tol = fmax(fabs(ref) / 16.0, 0x1p-10 * (double)inv[n]) * (1.0 + 1e-6);
            ASSERT_TRUE(fabs(got - ref) <= tol);
        }
        if (n == 3) {
            ASSERT_TRUE(inv[n] == 1.0f);
            ASSERT_INT_EQ(at_max, 0);
        } else {
            ASSERT_INT_GT(at_max, 0);
        }
    }
#endif
}

/* The fp8 convolutions' filters (cuda_conv_f8.c): w [K, C, R, S] to e4m3 KRSC, each output
 * channel scaled so its largest |w| is 448 (code 0x7E), within half a step of w once scaled
 * back; a zero channel keeps scale 1 and all zero codes. */
TEST(cuda_fp8_filter_per_channel)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    enum { K = 4, C = 3, R = 2, S = 3, RS = R * S };
    float w[K * C * RS], inv[K];
    uint8_t q[K * RS * C];
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < RS; p++)
                w[(k * C + c) * RS + p] =
                    k == 2 ? 0.0f : (float)((c * 5 + p * 3 + k) % 13 - 6) * (float)(k + 1) * 0.07f;
    cu_quant_filter_e4m3(w, K, C, RS, q, inv);
    for (int k = 0; k < K; k++) {
        int at_max = 0, zeros = 0;
        for (int c = 0; c < C; c++)
            for (int p = 0; p < RS; p++) {
                uint8_t code = q[(k * RS + p) * C + c]; /* KRSC: channels innermost */
                double ref = (double)w[(k * C + c) * RS + p];
                double got = (double)cu_e4m3_to_f32(code) * (double)inv[k];
                double tol = fmax(fabs(ref) / 16.0, 0x1p-10 * (double)inv[k]) * (1.0 + 1e-6);
                ASSERT_TRUE(fabs(got - ref) <= tol);
                at_max += (code & 0x7F) == 0x7E;
                zeros += (code & 0x7F) == 0;
            }
        if (k == 2) {
            ASSERT_TRUE(inv[k] == 1.0f);
            ASSERT_INT_EQ(zeros, C * RS);
        } else {
            ASSERT_INT_GT(at_max, 0);
            ASSERT_TRUE(fabs((double)inv[k] * 448.0 - 6.0 * 0.07 * (k + 1)) < 1e-5);
        }
    }
#endif
}
