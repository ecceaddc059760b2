/*
 * gemm.c - reference SGEMM with double accumulation: a blocked triple loop,
 * simple enough to be obviously right and fast enough for whole models
 * (a ResNet-50 forward in seconds, not minutes).
 *
 * Blocking: columns of B in panels of GEMM_NB, packed once per panel as
 * doubles (K x GEMM_NB, contiguous); rows of A four at a time, so each
 * loaded B element feeds four accumulators. No threads, no intrinsics.
 */
#include <string.h>

#include "ir/ops/gemm.h"

#define GEMM_NB 64
#define GEMM_MR 4

size_t ib_ref_gemm_scratch(int64_t K)
{
    if (K < 1) K = 1;
    return ((size_t)K * GEMM_NB + (size_t)GEMM_MR * GEMM_NB) * sizeof(double);
}

void ib_ref_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa,
                 int64_t csa, const float *B, int64_t rsb, int64_t csb, float beta, float *C,
                 int64_t ldc, void *scratch)
{
    double *bp = scratch;                                 /* [K][nb] packed panel of B */
    double *acc = bp + (size_t)(K > 0 ? K : 1) * GEMM_NB; /* [GEMM_MR][GEMM_NB] */
    for (int64_t j0 = 0; j0 < N; j0 += GEMM_NB) {
        int64_t nb = N - j0 < GEMM_NB ? N - j0 : GEMM_NB;
        for (int64_t k = 0; k < K; k++) {
            const float *brow = B + k * rsb + j0 * csb;
            double *dst = bp + k * nb;
            for (int64_t j = 0; j < nb; j++)
                dst[j] = (double)brow[j * csb];
        }
        for (int64_t i0 = 0; i0 < M; i0 += GEMM_MR) {
            int64_t mr = M - i0 < GEMM_MR ? M - i0 : GEMM_MR;
            double *a0 = acc, *a1 = acc + GEMM_NB, *a2 = acc + 2 * GEMM_NB, *a3 = acc + 3 * GEMM_NB;
            memset(acc, 0, sizeof(double) * GEMM_MR * GEMM_NB);
            const float *r0 = A + i0 * rsa;
            const float *r1 = mr > 1 ? r0 + rsa : r0, *r2 = mr > 2 ? r0 + 2 * rsa : r0,
                        *r3 = mr > 3 ? r0 + 3 * rsa : r0;
            for (int64_t k = 0; k < K; k++) {
                double x0 = (double)r0[k * csa], x1 = (double)r1[k * csa], x2 = (double)r2[k * csa],
                       x3 = (double)r3[k * csa];
                const double *b = bp + k * nb;
                for (int64_t j = 0; j < nb; j++) {
                    double bj = b[j];
                    a0[j] += x0 * bj;
                    a1[j] += x1 * bj;
                    a2[j] += x2 * bj;
                    a3[j] += x3 * bj;
                }
            }
            for (int64_t r = 0; r < mr; r++) {
                float *c = C + (i0 + r) * ldc + j0;
                const double *a = acc + r * GEMM_NB;
                if (beta == 0.0f)
                    for (int64_t j = 0; j < nb; j++)
                        c[j] = (float)((double)alpha * a[j]);
                else
                    for (int64_t j = 0; j < nb; j++)
                        c[j] = (float)((double)alpha * a[j] + (double)beta * (double)c[j]);
            }
        }
    }
}
