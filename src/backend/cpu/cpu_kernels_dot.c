/*
 * cpu_kernels_dot.c - inferbench.DotInteraction: DLRM's pairwise dot products
 * of the F feature vectors of each row (compile_fuse_embed.c, docs/ops.md).
 *
 * A row of x (27 x 128 floats at DLRM's sizes: 13.8 KB) stays in L1 while its
 * K products are taken, four at a time so four independent FMA chains hide
 * the FMA latency; rows are split over the team. Built for AVX-512, AVX2 and
 * the baseline (CPU_CLONES), which vectorise the d loops.
 */
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

int cpu_dot_interaction_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_dot_ctx *c = kctx;
    int nt = c->N < threads ? (int)(c->N > 0 ? c->N : 1) : threads;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t n = 0; n < c->N; n++)
        dot_row(c->x + n * c->F * c->D, c->D, c->a, c->b, c->K, c->y + n * c->K);
    return IB_OK;
}
