/*
 * ib_half.cu - the kernels of the 16-bit chains (cuda_half.c, ib_backend_config.half_chains):
 * LayerNorm, the dense Add and a unary op whose inputs and outputs may each be float32, float16
 * or bfloat16 (ibk_float_t), arithmetic in float32. Written 2026-12-05 without a GPU, not yet
 * run.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "ibk_float.cuh"
#include "ibk_grid.cuh"

__device__ static float warp_sum_h(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* the sum of v over the block (blockDim.x a multiple of 32, at most 1024) */
__device__ static float block_sum_h(float v, float *sh)
{
    int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    v = warp_sum_h(v);
    __syncthreads(); /* sh may still be read by a previous call */
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    int nw = (int)(blockDim.x / 32);
    v = threadIdx.x < nw ? sh[threadIdx.x] : 0.f;
    if (w == 0)
        v = warp_sum_h(v);
    if (threadIdx.x == 0)
        sh[0] = v;
    __syncthreads();
    return sh[0];
}

/* a block per row: y = (x - mean) / sqrt(var + eps) * g + b, the statistics in float32 */
__global__ static void k_layernorm_t(const void *x, int xt, const float *g, const float *b,
                                     void *y, int yt, int64_t cols, float eps)
{
    __shared__ float sh[32];
    const int64_t base = (int64_t)blockIdx.x * cols;
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        s += ldt(x, xt, base + j);
    float mean = block_sum_h(s, sh) / (float)cols;
    float q = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float d = ldt(x, xt, base + j) - mean;
        q += d * d;
    }
    float rstd = rsqrtf(block_sum_h(q, sh) / (float)cols + eps);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        stt(y, yt, base + j, (ldt(x, xt, base + j) - mean) * rstd * g[j] + (b ? b[j] : 0.f));
}

extern "C" int ibk_layernorm_t(ibk_stream s, const void *x, int xt, const float *gamma,
                               const float *beta, void *y, int yt, int64_t rows, int64_t cols,
                               float eps)
{
    if (rows <= 0 || cols <= 0)
        return 0;
    if (rows > 0x7fffffffLL)
        return (int)cudaErrorInvalidValue;
    k_layernorm_t<<<(unsigned)rows, IBK_THREADS, 0, s>>>(x, xt, gamma, beta, y, yt, cols, eps);
    return (int)cudaGetLastError();
}

__global__ static void k_add_t(const void *a, int at, const void *b, int bt, void *y, int yt,
                               int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        stt(y, yt, i, ldt(a, at, i) + ldt(b, bt, i));
}

extern "C" int ibk_add_t(ibk_stream s, const void *a, int at, const void *b, int bt, void *y,
                         int yt, int64_t n)
{
    if (n <= 0)
        return 0;
    k_add_t<<<grid_for(n), IBK_THREADS, 0, s>>>(a, at, b, bt, y, yt, n);
    return (int)cudaGetLastError();
}

/* the 16-bit chains' activations after a product: Relu and the two Gelu forms */
__global__ static void k_act_t(int op, void *y, int t, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float x = ldt(y, t, i), v;
        if (op == IBK_GELU_ERF)
            v = 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
        else if (op == IBK_GELU_TANH)
            v = 0.5f * x * (1.f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
        else
            v = x > 0.f ? x : 0.f;
        stt(y, t, i, v);
    }
}

extern "C" int ibk_act_t(ibk_stream s, int op, void *y, int t, int64_t n)
{
    if (n <= 0)
        return 0;
    if (op != IBK_RELU && op != IBK_GELU_ERF && op != IBK_GELU_TANH)
        return (int)cudaErrorInvalidValue;
    k_act_t<<<grid_for(n), IBK_THREADS, 0, s>>>(op, y, t, n);
    return (int)cudaGetLastError();
}
