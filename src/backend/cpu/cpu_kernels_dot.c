/*
 * cpu_kernels_dot.c - inferbench.DotInteraction: DLRM's pairwise dot products
 * of the F feature vectors of each row (compile_fuse_embed.c, docs/ops.md).
 *
 * A row of x (27 x 128 floats at DLRM's sizes: 13.8 KB) stays in L1 while its
 * K products are taken, four at a time so four independent FMA chains hide
 * the FMA latency; rows are split over the team. Built for AVX-512, AVX2 and
 * the baseline (CPU_CLONES), which vectorise the d loops.
 */
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

static CPU_CLONES void dot_row(const float *x, int64_t D, const int32_t *a, const int32_t *b,
                               int64_t K, float *y)
{
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        const float *a0 = x + a[k] * D, *b0 = x + b[k] * D, *a1 = x + a[k + 1] * D,
                    *b1 = x + b[k + 1] * D, *a2 = x + a[k + 2] * D, *b2 = x + b[k + 2] * D,
                    *a3 = x + a[k + 3] * D, *b3 = x + b[k + 3] * D;
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
        for (int64_t d = 0; d < D; d++) {
            s0 += a0[d] * b0[d];
            s1 += a1[d] * b1[d];
            s2 += a2[d] * b2[d];
            s3 += a3[d] * b3[d];
        }
        y[k] = s0;
        y[k + 1] = s1;
        y[k + 2] = s2;
        y[k + 3] = s3;
    }
    for (; k < K; k++) {
        const float *p = x + a[k] * D, *q = x + b[k] * D;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t d = 0; d < D; d++)
            s += p[d] * q[d];
        y[k] = s;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DOT512 1
#define T512 __attribute__((target("avx512f")))

/* v[l] -> one vector whose lane l is the sum of v[l]'s lanes: pairs within 128-bit chunks
 * (unpack ps, then pd), then the four chunks (shuffle_f32x4 twice). */
static T512 inline __attribute__((always_inline)) __m512 hsum16(const __m512 *v)
{
    __m512 w[8], x[4];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        w[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                             _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        __m512d a = _mm512_castps_pd(w[2 * i]), b = _mm512_castps_pd(w[2 * i + 1]);
        x[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                             _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
    }
    __m512 z0 = _mm512_add_ps(_mm512_shuffle_f32x4(x[0], x[1], 0x88),
                              _mm512_shuffle_f32x4(x[0], x[1], 0xDD));
    __m512 z1 = _mm512_add_ps(_mm512_shuffle_f32x4(x[2], x[3], 0x88),
                              _mm512_shuffle_f32x4(x[2], x[3], 0xDD));
    return _mm512_add_ps(_mm512_shuffle_f32x4(z0, z1, 0x88), _mm512_shuffle_f32x4(z0, z1, 0xDD));
}

/* The Gram matrix of one row's F features, lower block triangle only, in 4 x 4 blocks:
 * zb[(bi * 8 + bj) * 16 + r * 4 + c] = dot(x[4 bi + r], x[4 bj + c]) for bj <= bi. Per 16 d,
 * eight loads feed sixteen independent FMA chains; one hsum16 ends the block. Rows past F
 * read row F - 1 (their sums are never asked for). The dot-product form above ends every
 * product with its own horizontal sum and runs four chains. */
static T512 void gram_row(const float *x, int64_t F, int64_t D, float *zb)
{
    const int64_t nb = (F + 3) / 4, dm = D & ~(int64_t)15;
    const __mmask16 tail = (__mmask16)((1u << (D & 15)) - 1);
    for (int64_t bi = 0; bi < nb; bi++)
        for (int64_t bj = 0; bj <= bi; bj++) {
            const float *a[4], *b[4];
            for (int r = 0; r < 4; r++) {
                int64_t i = 4 * bi + r, j = 4 * bj + r;
                a[r] = x + (i < F ? i : F - 1) * D;
                b[r] = x + (j < F ? j : F - 1) * D;
            }
            __m512 acc[16];
#pragma GCC unroll 16
            for (int q = 0; q < 16; q++)
                acc[q] = _mm512_setzero_ps();
            for (int64_t d = 0; d < dm; d += 16) {
                __m512 av[4], bv[4];
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++) {
                    av[r] = _mm512_loadu_ps(a[r] + d);
                    bv[r] = _mm512_loadu_ps(b[r] + d);
                }
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++)
#pragma GCC unroll 4
                    for (int c = 0; c < 4; c++)
                        acc[r * 4 + c] = _mm512_fmadd_ps(av[r], bv[c], acc[r * 4 + c]);
            }
            if (tail) {
                __m512 av[4], bv[4];
                for (int r = 0; r < 4; r++) {
                    av[r] = _mm512_maskz_loadu_ps(tail, a[r] + dm);
                    bv[r] = _mm512_maskz_loadu_ps(tail, b[r] + dm);
                }
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++)
                        acc[r * 4 + c] = _mm512_fmadd_ps(av[r], bv[c], acc[r * 4 + c]);
            }
            _mm512_storeu_ps(zb + (bi * 8 + bj) * 16, hsum16(acc));
        }
}

static bool gram_ok(const cpu_dot_ctx *c)
{
    return c->F <= 32 && c->K <= 32 * 32 && cpu_avx512f();
}
#endif

int cpu_dot_interaction_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_dot_ctx *c = kctx;
    int nt = c->N < threads ? (int)(c->N > 0 ? c->N : 1) : threads;
#ifdef DOT512
    if (!c->generic && gram_ok(c)) {
#pragma omp parallel num_threads(nt)
        {
            float zb[8 * 8 * 16] __attribute__((aligned(64))); /* F <= 32: 8 x 8 blocks */
            int32_t at[32 * 32];                                 /* K <= F * F */
            for (int64_t k = 0; k < c->K; k++) { /* where product k sits in zb */
                int32_t i = c->a[k], j = c->b[k];
                if (i < j) { /* the mirror, in the lower triangle */
                    int32_t t = i;
                    i = j;
                    j = t;
                }
                at[k] = ((i >> 2) * 8 + (j >> 2)) * 16 + (i & 3) * 4 + (j & 3);
            }
#pragma omp for schedule(static)
            for (int64_t n = 0; n < c->N; n++) {
                gram_row(c->x + n * c->F * c->D, c->F, c->D, zb);
                float *y = c->y + n * c->K;
                for (int64_t k = 0; k < c->K; k++)
                    y[k] = zb[at[k]];
            }
        }
        return IB_OK;
    }
#endif
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t n = 0; n < c->N; n++)
        dot_row(c->x + n * c->F * c->D, c->D, c->a, c->b, c->K, c->y + n * c->K);
    return IB_OK;
}
