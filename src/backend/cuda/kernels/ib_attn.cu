/*
 * ib_attn.cu - inferbench.MultiHeadAttention at fp16 / bf16 on the tensor cores (WMMA),
 * behind the launchers ibk_mha_pack, ibk_mha_prepare and ibk_mha_run of cuda_kernels.h
 * (issue 24: BERT on the GPU without its 9.4 MB-a-sample score matrix in device memory).
 *
 * q, k and v arrive as float32 with the heads packed in the last dim ([N, L, h*D]);
 * ibk_mha_pack writes each as 16-bit [N*h, Lp, Dp] (L and D zero-padded to multiples of 16,
 * so every WMMA tile is whole and aligned). Then one warp takes 16 queries of one (n, head):
 *
 * 1. scores S[16][Skp] = Q K^T (fp32 accumulation) into the warp's shared memory;
 * 2. per query row: s * scale + mask, the max and the sum of exp(s - max) by warp
 *    shuffles, P = exp(s - max) rounded to 16 bits (keys past Sk are 0);
 * 3. O[16][Dvp] = P V (fp32 accumulation) into shared memory;
 * 4. y[n, i, h*Dv + e] = O[i][e] / sum, float32 (or 16-bit in a 16-bit chain), for the real
 *    queries and columns.
 *
 * Shared memory per warp: 16 Skp floats + 16 Skp halves + 16 Dvp floats + 16 floats
 * (40 KB at BERT's Sk = 384, Dv = 64); ibk_mha_prepare sizes it and says how many warps a
 * block can hold on this device. The scale is applied after the products and the mask
 * added after it, as the reference does. Not yet run on a GPU (written 2026-12-05).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <mma.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "ibk_float.cuh"
#include "ibk_grid.cuh"

using namespace nvcuda;

#define MHA_WARPS 4     /* warps of the attention kernel: 64 queries a block */

template <typename T> __device__ static T to16(float x);
template <> __device__ __half to16<__half>(float x)
{
    return __float2half_rn(x);
}
template <> __device__ __nv_bfloat16 to16<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

/* y[(n*h + hh), l, d] = x[n, l, hh*D + d], zero for l >= L or d >= D */
template <typename T>
__global__ static void k_mha_pack(const void *x, int xt, T *y, int64_t L, int64_t h, int64_t D,
                                  int64_t Lp, int64_t Dp, int64_t total)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t d = i % Dp, r = i / Dp, l = r % Lp, nh = r / Lp;
        int64_t hh = nh % h, n = nh / h;
        float v = (d < D && l < L) ? ldt(x, xt, (n * L + l) * h * D + hh * D + d) : 0.0f;
        y[i] = to16<T>(v);
    }
}

extern "C" int ibk_mha_pack(ibk_stream s, int bf16, const void *x, int xt, void *y, int64_t N,
                            int64_t L, int64_t h, int64_t D, int64_t Lp, int64_t Dp)
{
    int64_t total = N * h * Lp * Dp;
    unsigned grid = grid_for(total);
    if (bf16)
        k_mha_pack<__nv_bfloat16><<<grid, IBK_THREADS, 0, s>>>(x, xt, (__nv_bfloat16 *)y, L, h,
                                                                D, Lp, Dp, total);
    else
        k_mha_pack<__half><<<grid, IBK_THREADS, 0, s>>>(x, xt, (__half *)y, L, h, D, Lp, Dp,
                                                         total);
    return (int)cudaGetLastError();
}

/* S floats, P 16-bit, O floats, 1/sum floats: multiples of 32 bytes (WMMA's alignment) */
static size_t warp_bytes(const ibk_mha *a)
{
    return (size_t)16 * a->Skp * 6 + (size_t)16 * a->Dvp * 4 + 64;
}

/* One warp per 16 queries of one (n, head); blockIdx.x = n*h + head, blockIdx.y the block
 * of `warps` x 16 queries. */
template <typename T>
__global__ static void k_mha(const T *q, const T *k, const T *v, const float *mask, void *y,
                             int yt, ibk_mha a, int warps)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t nh = blockIdx.x, n = nh / a.h, hh = nh % a.h;
    const int64_t q0 = ((int64_t)blockIdx.y * warps + warp) * 16;
    if (q0 >= a.Sp)
        return; /* each warp works alone: no block-wide barrier below */
    const size_t wb = (size_t)16 * a.Skp * 6 + (size_t)16 * a.Dvp * 4 + 64; /* = warp_bytes */
    float *S = (float *)(smem + (size_t)warp * wb);
    T *P = (T *)(S + 16 * a.Skp);
    float *O = (float *)(P + 16 * a.Skp);
    float *inv = O + 16 * a.Dvp;
    const T *qb = q + (nh * a.Sp + q0) * a.Dp;
    const T *kb = k + nh * a.Skp * a.Dp;
    const T *vb = v + nh * a.Skp * a.Dvp;

    /* 1. S = Q K^T: K's rows are B's columns (col-major B with ldm Dp) */
    for (int64_t kt = 0; kt < a.Skp; kt += 16) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int64_t dc = 0; dc < a.Dp; dc += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
            wmma::load_matrix_sync(fa, qb + dc, (unsigned)a.Dp);
            wmma::load_matrix_sync(fb, kb + kt * a.Dp + dc, (unsigned)a.Dp);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        wmma::store_matrix_sync(S + kt, acc, (unsigned)a.Skp, wmma::mem_row_major);
    }
    __syncwarp();

    /* 2. softmax per query row */
    for (int r = 0; r < 16; r++) {
        const int64_t i = q0 + r;
        const float *mrow = (mask && i < a.S) ? mask + n * a.ms[0] + hh * a.ms[1] + i * a.ms[2]
                                              : nullptr;
        float *srow = S + (int64_t)r * a.Skp;
        float mx = -INFINITY;
        for (int64_t j = lane; j < a.Sk; j += 32) {
            float s = srow[j] * a.scale + (mrow ? mrow[j * a.ms[3]] : 0.0f);
            srow[j] = s;
            mx = fmaxf(mx, s);
        }
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float sum = 0.0f;
        T *prow = P + (int64_t)r * a.Skp;
        for (int64_t j = lane; j < a.Skp; j += 32) {
            float e = j < a.Sk ? expf(srow[j] - mx) : 0.0f;
            sum += e;
            prow[j] = to16<T>(e);
        }
        for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (lane == 0)
            inv[r] = 1.0f / sum;
    }
    __syncwarp();

    /* 3. O = P V */
    for (int64_t ec = 0; ec < a.Dvp; ec += 16) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int64_t kt = 0; kt < a.Skp; kt += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
            wmma::load_matrix_sync(fa, P + kt, (unsigned)a.Skp);
            wmma::load_matrix_sync(fb, vb + kt * a.Dvp + ec, (unsigned)a.Dvp);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        wmma::store_matrix_sync(O + ec, acc, (unsigned)a.Dvp, wmma::mem_row_major);
    }
    __syncwarp();

    /* 4. y rows of the real queries, heads packed in the last dim */
    for (int64_t t = lane; t < 16 * a.Dv; t += 32) {
        int64_t r = t / a.Dv, e = t % a.Dv, i = q0 + r;
        if (i < a.S)
            stt(y, yt, (n * a.S + i) * a.h * a.Dv + hh * a.Dv + e, O[r * a.Dvp + e] * inv[r]);
    }
}

extern "C" int ibk_mha_prepare(const ibk_mha *a, int bf16, int *warps, size_t *smem_bytes)
{
    int dev = 0, optin = 0;
    cudaError_t st = cudaGetDevice(&dev);
    if (st == cudaSuccess)
        st = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (st != cudaSuccess)
        return (int)st;
    size_t wb = warp_bytes(a);
    int w = (int)((size_t)optin / wb);
    w = w > MHA_WARPS ? MHA_WARPS : w;
    *warps = w;
    *smem_bytes = (size_t)w * wb;
    if (w < 1)
        return 0;
    st = bf16 ? cudaFuncSetAttribute(k_mha<__nv_bfloat16>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*smem_bytes)
              : cudaFuncSetAttribute(k_mha<__half>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)*smem_bytes);
    return (int)st;
}

extern "C" int ibk_mha_run(ibk_stream s, int bf16, const void *q, const void *k, const void *v,
                           const float *mask, void *y, int yt, const ibk_mha *a, int warps,
                           size_t smem_bytes)
{
    if (warps < 1 || a->N * a->h < 1 || a->N * a->h > 0x7fffffffLL)
        return (int)cudaErrorInvalidValue;
    int64_t qblocks = (a->Sp + 16LL * warps - 1) / (16LL * warps);
    if (qblocks > 65535)
        return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)(a->N * a->h), (unsigned)qblocks);
    if (bf16)
        k_mha<__nv_bfloat16><<<grid, 32 * warps, smem_bytes, s>>>(
            (const __nv_bfloat16 *)q, (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, mask,
            y, yt, *a, warps);
    else
        k_mha<__half><<<grid, 32 * warps, smem_bytes, s>>>((const __half *)q, (const __half *)k,
                                                          (const __half *)v, mask, y, yt, *a,
                                                          warps);
    return (int)cudaGetLastError();
}
