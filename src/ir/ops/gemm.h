/*
 * gemm.h - the reference single-precision matrix product used by MatMul,
 * Gemm, Conv (after im2col), ConvTranspose, LSTM and the fused ops.
 *
 *   C[i,j] = alpha * sum_k A(i,k) * B(k,j) + beta * C[i,j]
 *
 * A(i,k) = A[i*rsa + k*csa] and B(k,j) = B[k*rsb + j*csb] (any strides, so
 * transposed operands need no copy); C is row-major with leading dimension
 * ldc. Products are accumulated in double and rounded once. When beta == 0,
 * C is not read (it may hold garbage or NaN).
 */
#ifndef IB_RUNTIME_OPS_GEMM_H
#define IB_RUNTIME_OPS_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Scratch bytes ib_ref_gemm needs for inner dimension K. */
size_t ib_ref_gemm_scratch(int64_t K);

void ib_ref_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa,
                 int64_t csa, const float *B, int64_t rsb, int64_t csb, float beta, float *C,
                 int64_t ldc, void *scratch);

#endif
