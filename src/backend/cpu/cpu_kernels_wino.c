/*
 * cpu_kernels_wino.c - 3x3x3 convolution, stride 1, one voxel of zero padding, of a
 * channels-last float32 volume by Winograd's minimal filtering F(2x2x2, 3x3x3)
 * (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016).
 *
 * Every 2x2x2 block of outputs ("tile") is computed from the 4x4x4 block of inputs
 * around it: V = B^T d B (per input channel, along the three axes), then for each of
 * the 64 positions p a product over the channels, M_p = V_p U_p, with
 * U = G g G^T the filters transformed once at compile time, and finally
 * y = A^T M A + bias. That is 64 multiply-adds per (tile, input, output channel)
 * instead of 8 * 27 = 216: 3.4x fewer, paid for by the two transforms, which are
 * additions only and cost per channel, not per channel pair.
 *
 * Work is done in blocks of WINO_TB tiles along one output row: the transformed
 * inputs of a block (64 x TB x C floats) and its products (64 x TB x M) stay in the
 * thread's cache, and each U_p (C x M) is read once per 8 tiles. The products run on
 * an AVX-512 micro-kernel (8 tiles x 32 output channels in 16 registers) or, on
 * machines without it, on a portable C one; both are tested against the direct sum.
 *
 * bfloat16 (BF16 precision, on a CPU with AVX512-BF16): x, y, U and the transformed inputs
 * are bfloat16, the transforms run in float32, and the products accumulate in float32 with
 * vdpbf16ps (pairs of input channels per instruction: twice the float32 rate); U is packed
 * as [64][C / 2][M][2] so that one 64-byte load holds both channels of a pair for 16 outputs.
 *
 * Transforms (correlation, as ONNX Conv computes it):
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
 *   A^T = [1 1 1 0; 0 1 -1 -1]
 */
#include <omp.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WINO_X86 1
#endif

#define VL 16 /* channels per transform vector */
/* Floats per tile in the block buffers: its 64 positions x channels, plus one cache line so
 * that the rows the micro-kernel reads together (one per tile) do not share an L1 set. */
#define VT(ch) (64 * (ch) + VL)
/* The same in elements of the transformed inputs (bfloat16: a 64-byte line is 32). */
#define VTE(ch, bf16) ((bf16) ? 64 * (ch) + 2 * VL : VT(ch))

size_t cpu_wino_scratch_floats(int64_t C, int64_t M)
{
    return (size_t)WINO_TB * (size_t)(VT(C) + VT(M)); /* bfloat16 V takes less */
}

bool cpu_avx512f(void)
{
#ifdef WINO_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

bool cpu_wino_avx512(void)
{
    return cpu_avx512f();
}

bool cpu_wino_avx512_bf16(void)
{
#ifdef WINO_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
#else
    return false;
#endif
}

/* t[p], p = 16 i + 4 j + l: G g G^T of one 3x3x3 filter g, in double. */
static void filter_transform(const float *g, double t[64])
{
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    double gd[27], t1[4][3][3], t2[4][4][3];
    for (int q = 0; q < 27; q++)
        gd[q] = (double)g[q];
    for (int i = 0; i < 4; i++) /* along d */
        for (int b = 0; b < 3; b++)
            for (int e = 0; e < 3; e++)
                t1[i][b][e] = G[i][0] * gd[b * 3 + e] + G[i][1] * gd[9 + b * 3 + e] +
                              G[i][2] * gd[18 + b * 3 + e];
    for (int i = 0; i < 4; i++) /* along h */
        for (int j = 0; j < 4; j++)
            for (int e = 0; e < 3; e++)
                t2[i][j][e] = G[j][0] * t1[i][0][e] + G[j][1] * t1[i][1][e] + G[j][2] * t1[i][2][e];
    for (int i = 0; i < 4; i++) /* along w */
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 4; l++)
                t[i * 16 + j * 4 + l] =
                    G[l][0] * t2[i][j][0] + G[l][1] * t2[i][j][1] + G[l][2] * t2[i][j][2];
}

/* u[p][c][m] of w[m][c] (ONNX [M, C, 3, 3, 3]). */
void cpu_wino_weights(const float *w, int64_t M, int64_t C, float *u)
{
    double t[64];
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < C; c++) {
            filter_transform(w + (m * C + c) * 27, t);
            for (int p = 0; p < 64; p++)
                u[((int64_t)p * C + c) * M + m] = (float)t[p];
        }
}

/* u[p][c / 2][m][c % 2] in bfloat16 (C even). */
void cpu_wino_weights_bf16(const float *w, int64_t M, int64_t C, uint16_t *u)
{
    double t[64];
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < C; c++) {
            filter_transform(w + (m * C + c) * 27, t);
            for (int p = 0; p < 64; p++)
                u[((((int64_t)p * C + c) / 2 * 2) * M) + m * 2 + c % 2] = ib_f32_to_bf16((float)t[p]);
        }
}

#define INLINE static inline __attribute__((always_inline))

/* Element q of a float32 or (bf16) bfloat16 row; storing element at of one. */
INLINE float ld(const void *p, int q, bool bf16)
{
    return bf16 ? ib_bf16_to_f32(((const uint16_t *)p)[q]) : ((const float *)p)[q];
}

INLINE void st(void *p, int64_t at, float x, bool bf16)
{
    if (bf16)
        ((uint16_t *)p)[at] = ib_f32_to_bf16(x);
    else
        ((float *)p)[at] = x;
}

/* The input transform of nb tiles along a row, channels c0 .. c0 + VL: the tiles' 4x4x4
 * inputs start at (z0, y0, x0 + 2 t), zero outside the volume. Adjacent tiles share two
 * of their four columns (fixed w), so each column of 4x4 inputs is transformed along d
 * and h once, into a ring of the last four columns; a tile then needs the w step only.
 * V[t * VTE(C) + p * C + c0 + q] gets B^T d B at position p = 16 i + 4 j + l. xn and v
 * are float32, or bfloat16 when bf16 (a constant once inlined: two specialised copies). */
INLINE void in_block(const cpu_wino_ctx *k, const void *xn, int64_t z0, int64_t y0, int64_t x0,
                     int64_t nb, int64_t c0, void *v, bool bf16)
{
    const int64_t D = k->D, H = k->H, W = k->W, C = k->C, tst = VTE(C, bf16);
    const size_t es = bf16 ? 2 : 4;
    float ring[4][16 * VL];
    static const float zero[VL];
    const char *src[4][4]; /* (i, j) -> the input row at (z0 + i, y0 + j), NULL outside */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int64_t z = z0 + i, y = y0 + j;
            src[i][j] = z < 0 || z >= D || y < 0 || y >= H
                            ? NULL
                            : (const char *)xn + (size_t)(((z * H + y) * W) * C + c0) * es;
        }
    for (int64_t col = 0; col < 2 * nb + 2; col++) {
        int64_t xx = x0 + col;
        float *f = ring[col & 3];
        bool in = xx >= 0 && xx < W;
        for (int j = 0; j < 4; j++) { /* along d, for each h */
            const void *s[4];
            for (int i = 0; i < 4; i++)
                s[i] = in && src[i][j] ? src[i][j] + (size_t)(xx * C) * es : (const void *)zero;
            /* named pointers, not s[i] and f[i * 4 ...] in the loop: GCC vectorises this */
            const void *s0 = s[0], *s1 = s[1], *s2 = s[2], *s3 = s[3];
            float *restrict f0 = f + (0 * 4 + j) * VL, *restrict f1 = f + (1 * 4 + j) * VL,
                            *restrict f2 = f + (2 * 4 + j) * VL, *restrict f3 = f + (3 * 4 + j) * VL;
#pragma omp simd
            for (int q = 0; q < VL; q++) {
                float d0 = ld(s0, q, bf16), d1 = ld(s1, q, bf16), d2 = ld(s2, q, bf16),
                      d3 = ld(s3, q, bf16);
                f0[q] = d0 - d2;
                f1[q] = d1 + d2;
                f2[q] = d2 - d1;
                f3[q] = d1 - d3;
            }
        }
        for (int i = 0; i < 4; i++) /* along h, in place */
#pragma omp simd
            for (int q = 0; q < VL; q++) {
                float *r = f + i * 4 * VL + q;
                float e0 = r[0], e1 = r[VL], e2 = r[2 * VL], e3 = r[3 * VL];
                r[0] = e0 - e2;
                r[VL] = e1 + e2;
                r[2 * VL] = e2 - e1;
                r[3 * VL] = e1 - e3;
            }
        if (col < 3 || (col & 1) == 0)
            continue;
        /* columns col - 3 .. col complete tile t: the step along w */
        int64_t t = (col - 3) / 2;
        const float *g0 = ring[(col - 3) & 3], *g1 = ring[(col - 2) & 3],
                    *g2 = ring[(col - 1) & 3], *g3 = ring[col & 3];
        int64_t base = t * tst + c0;
        for (int r = 0; r < 16; r++) {
            const float *restrict h0 = g0 + r * VL, *restrict h1 = g1 + r * VL,
                                  *restrict h2 = g2 + r * VL, *restrict h3 = g3 + r * VL;
            int64_t at = base + r * 4 * C;
#pragma omp simd
            for (int q = 0; q < VL; q++) {
                float a0 = h0[q], a1 = h1[q], a2 = h2[q], a3 = h3[q];
                st(v, at + q, a0 - a2, bf16);
                st(v, at + C + q, a1 + a2, bf16);
                st(v, at + 2 * C + q, a2 - a1, bf16);
                st(v, at + 3 * C + q, a1 - a3, bf16);
            }
        }
    }
}

static CPU_CLONES void in_block_f32(const cpu_wino_ctx *k, const void *xn, int64_t z0, int64_t y0,
                                    int64_t x0, int64_t nb, int64_t c0, void *v)
{
    in_block(k, xn, z0, y0, x0, nb, c0, v, false);
}

static CPU_CLONES void in_block_bf16(const cpu_wino_ctx *k, const void *xn, int64_t z0,
                                     int64_t y0, int64_t x0, int64_t nb, int64_t c0, void *v)
{
    in_block(k, xn, z0, y0, x0, nb, c0, v, true);
}

/* y[2x2x2 at (z0, y0, x0), channels m0 .. + VL] = A^T M A + bias, from o[p * M] (the
 * tile's products at the 64 positions); outputs outside the volume are dropped. */
INLINE void out_tile(const cpu_wino_ctx *k, void *yn, int64_t z0, int64_t y0, int64_t x0,
                     int64_t m0, const float *o, bool bf16)
{
    static const float zero[VL];
    const int64_t D = k->D, H = k->H, W = k->W, M = k->M;
    const float *restrict bias = k->bias ? k->bias + m0 : zero;
    float r8[8 * VL];
    /* one lane per channel, the whole A^T M A in registers: for each i (along d) the 16
     * (j, l) products go to 4 (oh, ow) values, added into the 8 outputs with A^T's column
     * i; one loop of full-width vectors (staged arrays of mixed widths stalled on store
     * forwarding) */
#pragma omp simd
    for (int q = 0; q < VL; q++) {
        float acc[8];
#pragma GCC unroll 8
        for (int e = 0; e < 8; e++)
            acc[e] = bias[q];
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            float w0[4], w1[4]; /* along w, for each j */
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const float *s = o + (int64_t)((i * 4 + j) * 4) * M + q;
                float v0 = s[0], v1 = s[M], v2 = s[2 * M], v3 = s[3 * M];
                w0[j] = v0 + v1 + v2;
                w1[j] = v1 - v2 - v3;
            }
            float h[4] = {w0[0] + w0[1] + w0[2], w1[0] + w1[1] + w1[2], /* oh 0: ow 0, 1 */
                          w0[1] - w0[2] - w0[3], w1[1] - w1[2] - w1[3]}; /* oh 1 */
            /* A^T = [1 1 1 0; 0 1 -1 -1]: od 0 takes i 0..2, od 1 takes +i1 -i2 -i3 */
#pragma GCC unroll 4
            for (int e = 0; e < 4; e++) {
                if (i < 3)
                    acc[e] += h[e];
                if (i == 1)
                    acc[4 + e] += h[e];
                else if (i > 1)
                    acc[4 + e] -= h[e];
            }
        }
#pragma GCC unroll 8
        for (int e = 0; e < 8; e++)
            r8[e * VL + q] = acc[e];
    }
    for (int od = 0; od < 2; od++)
        for (int oh = 0; oh < 2; oh++)
            for (int ow = 0; ow < 2; ow++) {
                int64_t z = z0 + od, y = y0 + oh, xx = x0 + ow;
                if (z >= D || y >= H || xx >= W)
                    continue;
                int64_t at = ((z * H + y) * W + xx) * M + m0;
                const float *r = r8 + (od * 4 + oh * 2 + ow) * VL;
                if (bf16) {
                    uint16_t *dst = (uint16_t *)yn + at;
#pragma omp simd
                    for (int q = 0; q < VL; q++)
                        dst[q] = ib_f32_to_bf16(r[q]);
                } else {
                    memcpy((float *)yn + at, r, VL * sizeof *r);
                }
            }
}

static CPU_CLONES void out_tile_f32(const cpu_wino_ctx *k, void *yn, int64_t z0, int64_t y0,
                                    int64_t x0, int64_t m0, const float *o)
{
    out_tile(k, yn, z0, y0, x0, m0, o, false);
}

static CPU_CLONES void out_tile_bf16(const cpu_wino_ctx *k, void *yn, int64_t z0, int64_t y0,
                                     int64_t x0, int64_t m0, const float *o)
{
    out_tile(k, yn, z0, y0, x0, m0, o, true);
}

/* c[8, nr] = a[8, K] (row stride lda) x b[K, nr] (row stride ldb), nr = 16 or 32. */
static void mk_generic(const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                       int64_t ldc, int64_t K, int nr)
{
    for (int r = 0; r < 8; r++) {
        float acc[32] = {0};
        for (int64_t kk = 0; kk < K; kk++) {
            float av = a[r * lda + kk];
            const float *br = b + kk * ldb;
            for (int j = 0; j < nr; j++)
                acc[j] += av * br[j];
        }
        memcpy(c + r * ldc, acc, (size_t)nr * sizeof *acc);
    }
}

#ifdef WINO_X86
__attribute__((target("avx512f"))) static void mk_avx512_32(const float *a, int64_t lda,
                                                            const float *b, int64_t ldb,
                                                            float *c, int64_t ldc, int64_t K)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
           c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00,
           c61 = c00, c70 = c00, c71 = c00;
    for (int64_t kk = 0; kk < K; kk++) {
        __m512 b0 = _mm512_loadu_ps(b + kk * ldb), b1 = _mm512_loadu_ps(b + kk * ldb + 16);
        const float *ak = a + kk;
        __m512 t;
#define ROW(r, x0, x1)                                                                       \
    t = _mm512_set1_ps(ak[(r) * lda]);                                                       \
    x0 = _mm512_fmadd_ps(t, b0, x0);                                                         \
    x1 = _mm512_fmadd_ps(t, b1, x1)
        ROW(0, c00, c01);
        ROW(1, c10, c11);
        ROW(2, c20, c21);
        ROW(3, c30, c31);
        ROW(4, c40, c41);
        ROW(5, c50, c51);
        ROW(6, c60, c61);
        ROW(7, c70, c71);
#undef ROW
    }
    _mm512_storeu_ps(c + 0 * ldc, c00), _mm512_storeu_ps(c + 0 * ldc + 16, c01);
    _mm512_storeu_ps(c + 1 * ldc, c10), _mm512_storeu_ps(c + 1 * ldc + 16, c11);
    _mm512_storeu_ps(c + 2 * ldc, c20), _mm512_storeu_ps(c + 2 * ldc + 16, c21);
    _mm512_storeu_ps(c + 3 * ldc, c30), _mm512_storeu_ps(c + 3 * ldc + 16, c31);
    _mm512_storeu_ps(c + 4 * ldc, c40), _mm512_storeu_ps(c + 4 * ldc + 16, c41);
    _mm512_storeu_ps(c + 5 * ldc, c50), _mm512_storeu_ps(c + 5 * ldc + 16, c51);
    _mm512_storeu_ps(c + 6 * ldc, c60), _mm512_storeu_ps(c + 6 * ldc + 16, c61);
    _mm512_storeu_ps(c + 7 * ldc, c70), _mm512_storeu_ps(c + 7 * ldc + 16, c71);
}

__attribute__((target("avx512f"))) static void mk_avx512_16(const float *a, int64_t lda,
                                                            const float *b, int64_t ldb,
                                                            float *c, int64_t ldc, int64_t K)
{
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
           c7 = c0;
    for (int64_t kk = 0; kk < K; kk++) {
        __m512 b0 = _mm512_loadu_ps(b + kk * ldb);
        const float *ak = a + kk;
        c0 = _mm512_fmadd_ps(_mm512_set1_ps(ak[0 * lda]), b0, c0);
        c1 = _mm512_fmadd_ps(_mm512_set1_ps(ak[1 * lda]), b0, c1);
        c2 = _mm512_fmadd_ps(_mm512_set1_ps(ak[2 * lda]), b0, c2);
        c3 = _mm512_fmadd_ps(_mm512_set1_ps(ak[3 * lda]), b0, c3);
        c4 = _mm512_fmadd_ps(_mm512_set1_ps(ak[4 * lda]), b0, c4);
        c5 = _mm512_fmadd_ps(_mm512_set1_ps(ak[5 * lda]), b0, c5);
        c6 = _mm512_fmadd_ps(_mm512_set1_ps(ak[6 * lda]), b0, c6);
        c7 = _mm512_fmadd_ps(_mm512_set1_ps(ak[7 * lda]), b0, c7);
    }
    _mm512_storeu_ps(c + 0 * ldc, c0), _mm512_storeu_ps(c + 1 * ldc, c1);
    _mm512_storeu_ps(c + 2 * ldc, c2), _mm512_storeu_ps(c + 3 * ldc, c3);
    _mm512_storeu_ps(c + 4 * ldc, c4), _mm512_storeu_ps(c + 5 * ldc, c5);
    _mm512_storeu_ps(c + 6 * ldc, c6), _mm512_storeu_ps(c + 7 * ldc, c7);
}
#endif

/* bfloat16: c[8, nr] (float32) = a[8, K] x b[K / 2][nr][2], both bfloat16. */
static void mk_generic_bf16(const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
                            float *c, int64_t ldc, int64_t K, int nr)
{
    for (int r = 0; r < 8; r++) {
        float acc[32] = {0};
        for (int64_t kk = 0; kk < K; kk++) {
            float av = ib_bf16_to_f32(a[r * lda + kk]);
            const uint16_t *br = b + kk / 2 * ldb * 2 + kk % 2;
            for (int j = 0; j < nr; j++)
                acc[j] += av * ib_bf16_to_f32(br[2 * j]);
        }
        memcpy(c + r * ldc, acc, (size_t)nr * sizeof *acc);
    }
}

#ifdef WINO_X86
/* One pair of channels (kk) of row r of a, in all 16 lanes. */
__attribute__((target("avx512f,avx512bf16"))) static inline __m512bh
pair_bf16(const uint16_t *a, int64_t lda, int r, int64_t kk)
{
    int32_t w;
    memcpy(&w, a + r * lda + 2 * kk, 4);
    return (__m512bh)_mm512_set1_epi32(w);
}
#define PAIR(a, lda, r, kk) pair_bf16(a, lda, r, kk)

__attribute__((target("avx512f,avx512bf16"))) static void
mk_bf16_32(const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb, float *c, int64_t ldc,
           int64_t K)
{
    __m512 acc[8][2];
    for (int r = 0; r < 8; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t kk = 0; kk < K / 2; kk++) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + kk * ldb * 2),
                 b1 = (__m512bh)_mm512_loadu_si512(b + kk * ldb * 2 + 32);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {
            __m512bh t = PAIR(a, lda, r, kk);
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], t, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], t, b1);
        }
    }
    for (int r = 0; r < 8; r++) {
        _mm512_storeu_ps(c + r * ldc, acc[r][0]);
        _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
    }
}

__attribute__((target("avx512f,avx512bf16"))) static void
mk_bf16_16(const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb, float *c, int64_t ldc,
           int64_t K)
{
    __m512 acc[8];
    for (int r = 0; r < 8; r++)
        acc[r] = _mm512_setzero_ps();
    for (int64_t kk = 0; kk < K / 2; kk++) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + kk * ldb * 2);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            acc[r] = _mm512_dpbf16_ps(acc[r], PAIR(a, lda, r, kk), b0);
    }
    for (int r = 0; r < 8; r++)
        _mm512_storeu_ps(c + r * ldc, acc[r]);
}
#undef PAIR
#endif

/* O_p [TB, M] = V_p [TB, C] x U_p [C, M] for the 64 positions (bfloat16 V and U when
 * k->bf16; O is float32 either way). */
static void products(const cpu_wino_ctx *k, const void *V, float *O)
{
    const int64_t C = k->C, M = k->M, vt = VTE(C, k->bf16);
    for (int p = 0; p < 64; p++)
        for (int r0 = 0; r0 < WINO_TB; r0 += 8)
            for (int64_t m0 = 0; m0 < M; m0 += 32) {
                int nr = M - m0 >= 32 ? 32 : 16;
                int64_t ao = r0 * vt + (int64_t)p * C, bo = (int64_t)p * C * M;
                float *c = O + r0 * VT(M) + (int64_t)p * M + m0;
                if (k->bf16) {
                    const uint16_t *a = (const uint16_t *)V + ao,
                                   *b = (const uint16_t *)k->u + bo + m0 * 2;
#ifdef WINO_X86
                    if (!k->generic) {
                        if (nr == 32)
                            mk_bf16_32(a, vt, b, M, c, VT(M), C);
                        else
                            mk_bf16_16(a, vt, b, M, c, VT(M), C);
                        continue;
                    }
#endif
                    mk_generic_bf16(a, vt, b, M, c, VT(M), C, nr);
                    continue;
                }
                const float *a = (const float *)V + ao, *b = (const float *)k->u + bo + m0;
#ifdef WINO_X86
                if (!k->generic) {
                    if (nr == 32)
                        mk_avx512_32(a, vt, b, M, c, VT(M), C);
                    else
                        mk_avx512_16(a, vt, b, M, c, VT(M), C);
                    continue;
                }
#endif
                mk_generic(a, vt, b, M, c, VT(M), C, nr);
            }
}

int cpu_wino_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_wino_ctx *k = kctx;
    const int64_t D = k->D, H = k->H, W = k->W, C = k->C, M = k->M;
    const int64_t td = (D + 1) / 2, th = (H + 1) / 2, tw = (W + 1) / 2;
    const int64_t chunks = (tw + WINO_TB - 1) / WINO_TB, rows = k->N * td * th;
    const int64_t blocks = rows * chunks;
    const size_t per = cpu_wino_scratch_floats(C, M), es = k->bf16 ? 2 : 4;
    int nt = threads < 1 ? 1 : threads > k->max_threads ? k->max_threads : threads;
#pragma omp parallel num_threads(nt)
    {
        float *V = k->scratch + (size_t)omp_get_thread_num() * per;
        float *O = V + (size_t)WINO_TB * VT(C);
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; blk++) {
            int64_t row = blk / chunks, t0 = (blk % chunks) * WINO_TB;
            int64_t n = row / (td * th), a = row / th % td, b = row % th;
            int64_t nb = tw - t0 < WINO_TB ? tw - t0 : WINO_TB;
            const char *xn = (const char *)k->x + (size_t)(n * D * H * W * C) * es;
            char *yn = (char *)k->y + (size_t)(n * D * H * W * M) * es;
            for (int64_t c0 = 0; c0 < C; c0 += VL)
                if (k->bf16)
                    in_block_bf16(k, xn, 2 * a - 1, 2 * b - 1, 2 * t0 - 1, nb, c0, V);
                else
                    in_block_f32(k, xn, 2 * a - 1, 2 * b - 1, 2 * t0 - 1, nb, c0, V);
            products(k, V, O);
            for (int64_t t = 0; t < nb; t++)
                for (int64_t m0 = 0; m0 < M; m0 += VL)
                    if (k->bf16)
                        out_tile_bf16(k, yn, 2 * a, 2 * b, 2 * (t0 + t), m0, O + t * VT(M) + m0);
                    else
                        out_tile_f32(k, yn, 2 * a, 2 * b, 2 * (t0 + t), m0, O + t * VT(M) + m0);
        }
    }
    return IB_OK;
}
