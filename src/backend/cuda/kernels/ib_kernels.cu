/*
 * ib_kernels.cu - the CUDA kernels of the cuda backend behind the extern "C"
 * launchers of cuda_kernels.h: elementwise unary and broadcast binary ops,
 * strided copies (Transpose/Expand/Slice), masked scaled softmax, LayerNorm (also with
 * 16-bit input or output, and the 16-bit chains' Add and activations: cuda_half.c),
 * reductions and row gathers. One file, so nvcc runs once per build (sm_80
 * and sm_90 only, see the Makefile). Accumulations (softmax, LayerNorm,
 * reductions) are in float with block-wide tree reductions.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "ibk_float.cuh"
#include "ibk_grid.cuh"

static int launch_status(void)
{
    return (int)cudaGetLastError();
}

/* ---- unary --------------------------------------------------------------- */

__device__ static float unary_op(int op, float x, float a, float b)
{
    switch (op) {
    case IBK_RELU: return x > 0.f ? x : 0.f;
    case IBK_LEAKY_RELU: return x >= 0.f ? x : a * x;
    case IBK_SIGMOID: return 1.f / (1.f + expf(-x));
    case IBK_TANH: return tanhf(x);
    case IBK_EXP: return expf(x);
    case IBK_LOG: return logf(x);
    case IBK_SQRT: return sqrtf(x);
    case IBK_ABS: return fabsf(x);
    case IBK_NEG: return -x;
    case IBK_RECIP: return 1.f / x;
    case IBK_ERF: return erff(x);
    case IBK_GELU_ERF: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case IBK_GELU_TANH: {
        float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.f + tanhf(u));
    }
    case IBK_CLIP: return fminf(fmaxf(x, a), b);
    case IBK_COPY: return x;
    case IBK_FLOOR: return floorf(x);
    case IBK_CEIL: return ceilf(x);
    case IBK_ELU: return x >= 0.f ? x : a * (expf(x) - 1.f);
    case IBK_SOFTPLUS: return x > 20.f ? x : log1pf(expf(x));
    case IBK_HARD_SIGMOID: return fminf(fmaxf(a * x + b, 0.f), 1.f);
    case IBK_HARD_SWISH: return x * fminf(fmaxf(x / 6.f + 0.5f, 0.f), 1.f);
    case IBK_POW_SCALAR: return powf(x, a);
    default: return x;
    }
}

__global__ static void k_unary(int op, const float *x, float *y, int64_t n, float a, float b)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = unary_op(op, x[i], a, b);
}

extern "C" int ibk_unary(ibk_stream s, int op, const float *x, float *y, int64_t n, float a,
                         float b)
{
    if (n <= 0)
        return 0;
    k_unary<<<grid_for(n), IBK_THREADS, 0, s>>>(op, x, y, n, a, b);
    return launch_status();
}

/* ---- binary with broadcasting -------------------------------------------- */

__device__ static float binary_op(int op, float a, float b)
{
    switch (op) {
    case IBK_ADD: return a + b;
    case IBK_SUB: return a - b;
    case IBK_MUL: return a * b;
    case IBK_DIV: return a / b;
    case IBK_MAX: return fmaxf(a, b);
    case IBK_MIN: return fminf(a, b);
    case IBK_POW: return powf(a, b);
    default: return a;
    }
}

__global__ static void k_binary_same(int op, const float *a, const float *b, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = binary_op(op, a[i], b[i]);
}

/* offsets of element i of the output in sources a and b (and c when sc) */
__device__ static void bcast_offsets(const ibk_view &v, const int64_t *sc, int64_t i, int64_t *oa,
                                     int64_t *ob, int64_t *oc)
{
    int64_t r = i;
    *oa = *ob = *oc = 0;
    for (int d = v.ndim - 1; d >= 0; d--) {
        int64_t c = r % v.dims[d];
        r /= v.dims[d];
        *oa += c * v.sa[d];
        *ob += c * v.sb[d];
        if (sc)
            *oc += c * sc[d];
    }
}

__global__ static void k_binary(int op, const float *a, const float *b, float *y, ibk_view v,
                                int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t oa, ob, oc;
        bcast_offsets(v, NULL, i, &oa, &ob, &oc);
        y[i] = binary_op(op, a[oa], b[ob]);
    }
}

static int64_t view_numel(const ibk_view *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= v->dims[d];
    return n;
}

/* Strides of a dense row-major tensor of v's dims? */
static bool dense(const ibk_view *v, const int64_t *st)
{
    int64_t e = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->dims[d] != 1 && st[d] != e)
            return false;
        e *= v->dims[d];
    }
    return true;
}

extern "C" int ibk_binary(ibk_stream s, int op, const float *a, const float *b, float *y,
                          const ibk_view *v)
{
    int64_t n = view_numel(v);
    if (n <= 0)
        return 0;
    if (dense(v, v->sa) && dense(v, v->sb))
        k_binary_same<<<grid_for(n), IBK_THREADS, 0, s>>>(op, a, b, y, n);
    else
        k_binary<<<grid_for(n), IBK_THREADS, 0, s>>>(op, a, b, y, *v, n);
    return launch_status();
}

/* ---- strided copy -------------------------------------------------------- */

template <typename T>
__global__ static void k_strided(const T *x, T *y, ibk_view v, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i, o = 0;
        for (int d = v.ndim - 1; d >= 0; d--) {
            o += (r % v.dims[d]) * v.sa[d];
            r /= v.dims[d];
        }
        y[i] = x[o];
    }
}

extern "C" int ibk_strided_copy(ibk_stream s, const void *x, void *y, const ibk_view *v, int esize)
{
    int64_t n = view_numel(v);
    if (n <= 0)
        return 0;
    unsigned g = grid_for(n);
    switch (esize) {
    case 1: k_strided<uint8_t><<<g, IBK_THREADS, 0, s>>>((const uint8_t *)x, (uint8_t *)y, *v, n); break;
    case 2: k_strided<uint16_t><<<g, IBK_THREADS, 0, s>>>((const uint16_t *)x, (uint16_t *)y, *v, n); break;
    case 4: k_strided<uint32_t><<<g, IBK_THREADS, 0, s>>>((const uint32_t *)x, (uint32_t *)y, *v, n); break;
    case 8: k_strided<uint64_t><<<g, IBK_THREADS, 0, s>>>((const uint64_t *)x, (uint64_t *)y, *v, n); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return launch_status();
}

/* ---- block reductions ---------------------------------------------------- */

__device__ static float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ static float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Sum (or max) over the block; every thread gets the result. sh: 32 floats. */
__device__ static float block_reduce(float v, bool is_max, float *sh)
{
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = is_max ? warp_max(v) : warp_sum(v);
    __syncthreads(); /* sh may still be read by a previous call */
    if (lane == 0)
        sh[wid] = v;
    __syncthreads();
    int nw = (blockDim.x + 31) >> 5;
    float r = lane < nw ? sh[lane] : (is_max ? -INFINITY : 0.f);
    return is_max ? warp_max(r) : warp_sum(r);
}

/* ---- softmax -------------------------------------------------------------- */

__global__ static void k_softmax(const float *x, float *y, int64_t cols, float scale,
                                 const float *mask, ibk_view v, int64_t mcs, int logsm)
{
    __shared__ float sh[32];
    int64_t row = blockIdx.x;
    const float *xr = x + row * cols;
    float *yr = y + row * cols;
    const float *mr = NULL;
    if (mask) {
        int64_t r = row, o = 0;
        for (int d = v.ndim - 1; d >= 0; d--) {
            o += (r % v.dims[d]) * v.sa[d];
            r /= v.dims[d];
        }
        mr = mask + o;
    }
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float t = scale * xr[j] + (mr ? mr[j * mcs] : 0.f);
        mx = fmaxf(mx, t);
    }
    mx = block_reduce(mx, true, sh);
    float sum = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float t = scale * xr[j] + (mr ? mr[j * mcs] : 0.f);
        sum += expf(t - mx);
    }
    sum = block_reduce(sum, false, sh);
    float inv = 1.f / sum, lse = logf(sum);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float t = scale * xr[j] + (mr ? mr[j * mcs] : 0.f) - mx;
        yr[j] = logsm ? t - lse : expf(t) * inv;
    }
}

extern "C" int ibk_softmax(ibk_stream s, const float *x, float *y, int64_t rows, int64_t cols,
                           float scale, const float *mask, const ibk_view *v,
                           int64_t mask_col_stride, int logsm)
{
    if (rows <= 0 || cols <= 0)
        return 0;
    if (rows > 0x7fffffffLL)
        return (int)cudaErrorInvalidValue;
    ibk_view none;
    none.ndim = 0;
    k_softmax<<<(unsigned)rows, IBK_THREADS, 0, s>>>(x, y, cols, scale, mask, v ? *v : none,
                                                     mask_col_stride, logsm);
    return launch_status();
}

/* ---- LayerNorm ------------------------------------------------------------ */

/* a block per row; x and y float32, or 16-bit in the 16-bit chains (ibk_float_t xt, yt) */
__global__ static void k_layernorm(const void *x, int xt, const float *g, const float *b, void *y,
                                   int yt, int64_t cols, float eps)
{
    __shared__ float sh[32];
    const int64_t base = (int64_t)blockIdx.x * cols;
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        s += ldt(x, xt, base + j);
    float mean = block_reduce(s, false, sh) / (float)cols;
    float q = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float d = ldt(x, xt, base + j) - mean;
        q += d * d;
    }
    float rstd = rsqrtf(block_reduce(q, false, sh) / (float)cols + eps);
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
    k_layernorm<<<(unsigned)rows, IBK_THREADS, 0, s>>>(x, xt, gamma, beta, y, yt, cols, eps);
    return launch_status();
}

extern "C" int ibk_layernorm(ibk_stream s, const float *x, const float *gamma, const float *beta,
                             float *y, int64_t rows, int64_t cols, float eps)
{
    return ibk_layernorm_t(s, x, IBK_T_F32, gamma, beta, y, IBK_T_F32, rows, cols, eps);
}

/* ---- the 16-bit chains' Add and activations (cuda_half.c) -------------------------- */

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
    return launch_status();
}

__global__ static void k_act_t(int op, void *y, int t, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        stt(y, t, i, unary_op(op, ldt(y, t, i), 0.f, 0.f));
}

extern "C" int ibk_act_t(ibk_stream s, int op, void *y, int t, int64_t n)
{
    if (n <= 0)
        return 0;
    if (op != IBK_RELU && op != IBK_GELU_ERF && op != IBK_GELU_TANH)
        return (int)cudaErrorInvalidValue;
    k_act_t<<<grid_for(n), IBK_THREADS, 0, s>>>(op, y, t, n);
    return launch_status();
}

/* ---- reductions ----------------------------------------------------------- */

/* One thread per (outer, inner) output: a strided walk over red. Good for
 * inner > 1; for inner == 1 rows use one block each (k_reduce_rows). */
__global__ static void k_reduce_cols(int op, const float *x, float *y, int64_t outer, int64_t red,
                                     int64_t inner)
{
    int64_t n = outer * inner;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t o = i / inner, in = i % inner;
        const float *p = x + o * red * inner + in;
        bool mx = op == IBK_RMAX, mn = op == IBK_RMIN;
        float acc = mx ? -INFINITY : mn ? INFINITY : 0.f;
        for (int64_t r = 0; r < red; r++) {
            float v = p[r * inner];
            acc = mx ? fmaxf(acc, v) : mn ? fminf(acc, v)
                  : op == IBK_RSUMSQ || op == IBK_RL2 ? acc + v * v
                  : op == IBK_RL1 ? acc + fabsf(v) : acc + v;
        }
        if (op == IBK_RMEAN)
            acc /= (float)red;
        else if (op == IBK_RL2)
            acc = sqrtf(acc);
        y[i] = acc;
    }
}

__global__ static void k_reduce_rows(int op, const float *x, float *y, int64_t red)
{
    __shared__ float sh[32];
    const float *p = x + blockIdx.x * red;
    bool mx = op == IBK_RMAX, mn = op == IBK_RMIN;
    float acc = mx ? -INFINITY : mn ? INFINITY : 0.f;
    for (int64_t r = threadIdx.x; r < red; r += blockDim.x) {
        float v = p[r];
        acc = mx ? fmaxf(acc, v) : mn ? fminf(acc, v)
              : op == IBK_RSUMSQ || op == IBK_RL2 ? acc + v * v
              : op == IBK_RL1 ? acc + fabsf(v) : acc + v;
    }
    if (mn)
        acc = -block_reduce(-acc, true, sh);
    else
        acc = block_reduce(acc, mx, sh);
    if (threadIdx.x == 0) {
        if (op == IBK_RMEAN)
            acc /= (float)red;
        else if (op == IBK_RL2)
            acc = sqrtf(acc);
        y[blockIdx.x] = acc;
    }
}

extern "C" int ibk_reduce(ibk_stream s, int op, const float *x, float *y, int64_t outer,
                          int64_t red, int64_t inner)
{
    if (outer <= 0 || inner <= 0 || red <= 0)
        return 0;
    if (inner == 1 && red >= 64 && outer <= 0x7fffffffLL)
        k_reduce_rows<<<(unsigned)outer, IBK_THREADS, 0, s>>>(op, x, y, red);
    else
        k_reduce_cols<<<grid_for(outer * inner), IBK_THREADS, 0, s>>>(op, x, y, outer, red, inner);
    return launch_status();
}

/* ---- gather ---------------------------------------------------------------- */

/* The row index j of a Gather's indices selects (int64 or int32; negative from the end), or
 * -1 when it is out of [0, rows): the lookup then yields zeros (a kernel cannot fail). */
__device__ static int64_t gather_row(const void *idx, int idx64, int64_t j, int64_t rows)
{
    int64_t k = idx64 ? ((const int64_t *)idx)[j] : (int64_t)((const int32_t *)idx)[j];
    if (k < 0)
        k += rows;
    return k >= 0 && k < rows ? k : -1;
}

template <typename T>
__global__ static void k_gather(const T *data, const void *idx, int idx64, T *y, int64_t outer,
                                int64_t axis_n, int64_t n_idx, int64_t inner)
{
    int64_t n = outer * n_idx * inner;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t in = i % inner, t = i / inner;
        int64_t j = t % n_idx, o = t / n_idx;
        int64_t k = gather_row(idx, idx64, j, axis_n);
        y[i] = k >= 0 ? data[(o * axis_n + k) * inner + in] : (T)0;
    }
}

extern "C" int ibk_gather(ibk_stream s, const void *data, const void *idx, int idx_is_64, void *y,
                          int64_t outer, int64_t axis_n, int64_t n_idx, int64_t inner_bytes)
{
    if (outer <= 0 || n_idx <= 0 || inner_bytes <= 0)
        return 0;
    if (inner_bytes % 4 == 0) {
        int64_t inner = inner_bytes / 4;
        k_gather<uint32_t><<<grid_for(outer * n_idx * inner), IBK_THREADS, 0, s>>>(
            (const uint32_t *)data, idx, idx_is_64, (uint32_t *)y, outer, axis_n, n_idx, inner);
    } else {
        k_gather<uint8_t><<<grid_for(outer * n_idx * inner_bytes), IBK_THREADS, 0, s>>>(
            (const uint8_t *)data, idx, idx_is_64, (uint8_t *)y, outer, axis_n, n_idx,
            inner_bytes);
    }
    return launch_status();
}

/* ---- convolution epilogue --------------------------------------------------- */

__global__ static void k_bias_act(float *y, const float *bias, const float *z, int64_t n, int64_t C,
                                  int64_t inner, int act, float a, float b)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float v = y[i];
        if (bias)
            v += bias[(i / inner) % C];
        if (z)
            v += z[i];
        y[i] = unary_op(act, v, a, b);
    }
}

extern "C" int ibk_bias_act(ibk_stream s, float *y, const float *bias, const float *z, int64_t N,
                            int64_t C, int64_t inner, int act, float a, float b)
{
    int64_t n = N * C * inner;
    if (n <= 0)
        return 0;
    k_bias_act<<<grid_for(n), IBK_THREADS, 0, s>>>(y, bias, z, n, C, inner, act, a, b);
    return launch_status();
}

/* ---- 8-bit products (cuda_matmul_q8.c) ------------------------------------------------ */

/* y8[i] = clamp(rint(x[i] * scale), -127, 127): symmetric int8, as the cpu backend's s8 */
__global__ static void k_to_s8(const void *x, int xt, int8_t *y, float scale, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float q = rintf(ldt(x, xt, i) * scale);
        y[i] = (int8_t)fminf(fmaxf(q, -127.0f), 127.0f);
    }
}

extern "C" int ibk_to_s8(ibk_stream s, const void *x, int xt, void *y8, float scale, int64_t n)
{
    if (n <= 0)
        return 0;
    k_to_s8<<<grid_for(n), IBK_THREADS, 0, s>>>(x, xt, (int8_t *)y8, scale, n);
    return launch_status();
}

/* y8[i] = e4m3(x[i] * scale), round to nearest even, finite values saturated to +-448 and NaN
 * kept (cuda_fp8.h's satfinite conversion, the host's cu_e4m3_from_f32 in cuda_quant.c) */
__global__ static void k_to_e4m3(const void *x, int xt, __nv_fp8_storage_t *y, float scale,
                                 int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = __nv_cvt_float_to_fp8(ldt(x, xt, i) * scale, __NV_SATFINITE, __NV_E4M3);
}

extern "C" int ibk_to_e4m3(ibk_stream s, const void *x, int xt, void *y8, float scale, int64_t n)
{
    if (n <= 0)
        return 0;
    k_to_e4m3<<<grid_for(n), IBK_THREADS, 0, s>>>(x, xt, (__nv_fp8_storage_t *)y8, scale, n);
    return launch_status();
}

/* y8[n, p, c] = clamp(rint(x[n, c, p] * scale), -127, 127): an int8 convolution's input */
__global__ static void k_nchw_to_nhwc_s8(const float *x, int8_t *y, float scale, int64_t C,
                                         int64_t HW, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % C, p = (i / C) % HW, b = i / (C * HW);
        float q = rintf(x[(b * C + c) * HW + p] * scale);
        y[i] = (int8_t)fminf(fmaxf(q, -127.0f), 127.0f);
    }
}

extern "C" int ibk_nchw_to_nhwc_s8(ibk_stream s, const float *x, void *y8, float scale, int64_t N,
                                   int64_t C, int64_t HW)
{
    int64_t n = N * C * HW;
    if (n <= 0)
        return 0;
    k_nchw_to_nhwc_s8<<<grid_for(n), IBK_THREADS, 0, s>>>(x, (int8_t *)y8, scale, C, HW, n);
    return launch_status();
}

/* y8[n, p, c] = e4m3(x[n, c, p] * scale), satfinite: an fp8 convolution's input */
__global__ static void k_nchw_to_nhwc_e4m3(const float *x, __nv_fp8_storage_t *y, float scale,
                                           int64_t C, int64_t HW, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % C, p = (i / C) % HW, b = i / (C * HW);
        y[i] = __nv_cvt_float_to_fp8(x[(b * C + c) * HW + p] * scale, __NV_SATFINITE, __NV_E4M3);
    }
}

extern "C" int ibk_nchw_to_nhwc_e4m3(ibk_stream s, const float *x, void *y8, float scale,
                                     int64_t N, int64_t C, int64_t HW)
{
    int64_t n = N * C * HW;
    if (n <= 0)
        return 0;
    k_nchw_to_nhwc_e4m3<<<grid_for(n), IBK_THREADS, 0, s>>>(x, (__nv_fp8_storage_t *)y8, scale,
                                                            C, HW, n);
    return launch_status();
}

/* v = act(acc[n, p, c] * inv_sx * inv_sw[c] + bias[c] + z) (inv_sw NULL: 1, when the
 * convolution has applied it already), z float32 z[n, c, p] or int8
 * z8[n, p, c] * inv_sz; y float32 y[n, c, p] = v, or (y_q8) int8 y8[n, p, c] =
 * clamp(rint(v * sy), -127, 127). i walks y's own order, so its writes are coalesced. */
__global__ static void k_epi_i8conv(const float *acc, void *y, int y_q8, float sy,
                                    const float *inv_sw, float inv_sx, const float *bias,
                                    const void *z, int z_q8, float inv_sz, int64_t C, int64_t HW,
                                    int act, float a, float b, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t p, c, bn;
        if (y_q8) {
            c = i % C;
            p = (i / C) % HW;
        } else {
            p = i % HW;
            c = (i / HW) % C;
        }
        bn = i / (C * HW);
        int64_t nhwc = (bn * HW + p) * C + c, nchw = (bn * C + c) * HW + p;
        float v = acc[nhwc] * (inv_sw ? inv_sx * inv_sw[c] : inv_sx);
        if (bias)
            v += bias[c];
        if (z)
            v += z_q8 ? (float)((const int8_t *)z)[nhwc] * inv_sz : ((const float *)z)[nchw];
        v = unary_op(act, v, a, b);
        if (y_q8)
            ((int8_t *)y)[i] = (int8_t)fminf(fmaxf(rintf(v * sy), -127.0f), 127.0f);
        else
            ((float *)y)[i] = v;
    }
}

extern "C" int ibk_epi_i8conv(ibk_stream s, const float *acc, void *y, int y_q8, float sy,
                              const float *inv_sw, float inv_sx, const float *bias,
                              const void *z, int z_q8, float inv_sz, int64_t N, int64_t C,
                              int64_t HW, int act, float a, float b)
{
    int64_t n = N * C * HW;
    if (n <= 0)
        return 0;
    k_epi_i8conv<<<grid_for(n), IBK_THREADS, 0, s>>>(acc, y, y_q8, sy, inv_sw, inv_sx, bias, z,
                                                     z_q8, inv_sz, C, HW, act, a, b, n);
    return launch_status();
}

/* y[n, c, p] = x8[n, p, c] * inv_s: an int8 NHWC value read by a step that takes float32 */
__global__ static void k_nhwc_s8_to_nchw(const int8_t *x, float inv_s, float *y, int64_t C,
                                         int64_t HW, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = i % HW, c = (i / HW) % C, bn = i / (C * HW);
        y[i] = (float)x[(bn * HW + p) * C + c] * inv_s;
    }
}

extern "C" int ibk_nhwc_s8_to_nchw(ibk_stream s, const void *x8, float inv_s, float *y, int64_t N,
                                   int64_t C, int64_t HW)
{
    int64_t n = N * C * HW;
    if (n <= 0)
        return 0;
    k_nhwc_s8_to_nchw<<<grid_for(n), IBK_THREADS, 0, s>>>((const int8_t *)x8, inv_s, y, C, HW,
                                                          n);
    return launch_status();
}

template <typename A>
__global__ static void k_dequant(const A *acc, void *y, int yt, const float *inv_sw, float inv_sx,
                                 const float *bias, int64_t n, int64_t cols, int act)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % cols;
        float v = (float)acc[i] * (inv_sx * inv_sw[c]);
        if (bias)
            v += bias[c];
        stt(y, yt, i, unary_op(act, v, 0.0f, 0.0f));
    }
}

extern "C" int ibk_dequant_bias_act(ibk_stream s, const void *acc, int acc_f32, void *y, int yt,
                                    const float *inv_sw, float inv_sx, const float *bias,
                                    int64_t rows, int64_t cols, int act)
{
    int64_t n = rows * cols;
    if (n <= 0)
        return 0;
    if (acc_f32)
        k_dequant<<<grid_for(n), IBK_THREADS, 0, s>>>((const float *)acc, y, yt, inv_sw, inv_sx,
                                                      bias, n, cols, act);
    else
        k_dequant<<<grid_for(n), IBK_THREADS, 0, s>>>((const int32_t *)acc, y, yt, inv_sw,
                                                      inv_sx, bias, n, cols, act);
    return launch_status();
}

/* ---- comparisons, logic, Where ------------------------------------------------------- */

template <typename T>
__global__ static void k_compare(int op, const T *a, const T *b, uint8_t *y, ibk_view v, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t oa, ob, oc;
        bcast_offsets(v, NULL, i, &oa, &ob, &oc);
        T x = a[oa], z = b[ob];
        bool r = op == IBK_CMP_EQ   ? x == z
                 : op == IBK_CMP_LT ? x < z
                 : op == IBK_CMP_GT ? x > z
                 : op == IBK_CMP_LE ? x <= z
                                    : x >= z;
        y[i] = r ? 1 : 0;
    }
}

extern "C" int ibk_compare(ibk_stream s, int op, int dtype, const void *a, const void *b,
                           uint8_t *y, const ibk_view *v)
{
    int64_t n = view_numel(v);
    if (n <= 0)
        return 0;
    unsigned g = grid_for(n);
    if (dtype == 0)
        k_compare<float><<<g, IBK_THREADS, 0, s>>>(op, (const float *)a, (const float *)b, y, *v, n);
    else if (dtype == 1)
        k_compare<int64_t><<<g, IBK_THREADS, 0, s>>>(op, (const int64_t *)a, (const int64_t *)b, y,
                                                     *v, n);
    else
        k_compare<int32_t><<<g, IBK_THREADS, 0, s>>>(op, (const int32_t *)a, (const int32_t *)b, y,
                                                     *v, n);
    return launch_status();
}

__global__ static void k_logic(int op, const uint8_t *a, const uint8_t *b, uint8_t *y, ibk_view v,
                               int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t oa, ob, oc;
        bcast_offsets(v, NULL, i, &oa, &ob, &oc);
        bool x = a[oa] != 0, z = op == IBK_LOGIC_NOT ? false : b[ob] != 0;
        bool r = op == IBK_LOGIC_AND ? (x && z) : op == IBK_LOGIC_OR ? (x || z)
                 : op == IBK_LOGIC_XOR ? (x != z) : !x;
        y[i] = r ? 1 : 0;
    }
}

extern "C" int ibk_logic(ibk_stream s, int op, const uint8_t *a, const uint8_t *b, uint8_t *y,
                         const ibk_view *v)
{
    int64_t n = view_numel(v);
    if (n <= 0)
        return 0;
    k_logic<<<grid_for(n), IBK_THREADS, 0, s>>>(op, a, b, y, *v, n);
    return launch_status();
}

struct ibk_strides {
    int64_t s[IBK_MAX_DIMS];
};

template <typename T>
__global__ static void k_where(const uint8_t *c, ibk_strides sc, const T *x, const T *z, T *y,
                               ibk_view v, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t oa, ob, oc;
        bcast_offsets(v, sc.s, i, &oa, &ob, &oc);
        y[i] = c[oc] ? x[oa] : z[ob];
    }
}

extern "C" int ibk_where(ibk_stream s, const uint8_t *c, const int64_t *sc, const void *x,
                         const void *z, void *y, int esize, const ibk_view *v)
{
    int64_t n = view_numel(v);
    if (n <= 0)
        return 0;
    ibk_strides st;
    for (int d = 0; d < IBK_MAX_DIMS; d++)
        st.s[d] = d < v->ndim ? sc[d] : 0;
    unsigned g = grid_for(n);
    switch (esize) {
    case 1: k_where<uint8_t><<<g, IBK_THREADS, 0, s>>>(c, st, (const uint8_t *)x, (const uint8_t *)z, (uint8_t *)y, *v, n); break;
    case 2: k_where<uint16_t><<<g, IBK_THREADS, 0, s>>>(c, st, (const uint16_t *)x, (const uint16_t *)z, (uint16_t *)y, *v, n); break;
    case 4: k_where<uint32_t><<<g, IBK_THREADS, 0, s>>>(c, st, (const uint32_t *)x, (const uint32_t *)z, (uint32_t *)y, *v, n); break;
    case 8: k_where<uint64_t><<<g, IBK_THREADS, 0, s>>>(c, st, (const uint64_t *)x, (const uint64_t *)z, (uint64_t *)y, *v, n); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return launch_status();
}

/* ---- inferbench.WindowAccumulate (3D U-Net's sliding window) ------------------------ */

/* one thread per window element, all C + 1 planes; __fmul_rn / __fadd_rn keep the host's two
 * roundings (nvcc would contract a * b + c into one FMA) */
__global__ static void k_window_acc(const float *win, const float *g, const int64_t *at,
                                    float *y, int64_t C, int64_t S0, int64_t S1, int64_t S2,
                                    int64_t r0, int64_t r1, int64_t r2)
{
    const int64_t a0 = at[0], a1 = at[1], a2 = at[2], n = r0 * r1 * r2;
    if (a0 < 0 || a1 < 0 || a2 < 0 || a0 > S0 - r0 || a1 > S1 - r1 || a2 > S2 - r2)
        return;
    const int64_t plane = S0 * S1 * S2;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t x = i % r2, v = (i / r2) % r1, z = i / (r1 * r2);
        int64_t o = ((a0 + z) * S1 + a1 + v) * S2 + a2 + x;
        float gw = g[i];
        for (int64_t c = 0; c < C; c++)
            y[c * plane + o] = __fadd_rn(y[c * plane + o], __fmul_rn(win[c * n + i], gw));
        y[C * plane + o] = __fadd_rn(y[C * plane + o], gw);
    }
}

extern "C" int ibk_window_acc(ibk_stream s, const float *acc, const float *win, const float *g,
                              const int64_t *at, float *y, int64_t C, const int64_t *S,
                              const int64_t *r)
{
    if (y != acc) {
        size_t bytes = (size_t)((C + 1) * S[0] * S[1] * S[2]) * sizeof(float);
        cudaError_t e = cudaMemcpyAsync(y, acc, bytes, cudaMemcpyDeviceToDevice, s);
        if (e != cudaSuccess)
            return (int)e;
    }
    int64_t n = r[0] * r[1] * r[2];
    if (n <= 0)
        return 0;
    k_window_acc<<<grid_for(n), IBK_THREADS, 0, s>>>(win, g, at, y, C, S[0], S[1], S[2], r[0],
                                                      r[1], r[2]);
    return launch_status();
}

/* ---- NHWC float16 conv islands ----------------------------------------------------- */

/* one thread per output element, in NHWC order: the writes coalesce */
__global__ static void k_nchw_to_nhwc_f16(const float *x, __half *y, int64_t C, int64_t HW,
                                          int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % C, p = (i / C) % HW, b = i / (C * HW);
        y[i] = __float2half_rn(x[(b * C + c) * HW + p]);
    }
}

extern "C" int ibk_nchw_to_nhwc_f16(ibk_stream s, const float *x, void *y16, int64_t N, int64_t C,
                                    int64_t HW)
{
    int64_t n = N * C * HW;
    if (n <= 0)
        return 0;
    k_nchw_to_nhwc_f16<<<grid_for(n), IBK_THREADS, 0, s>>>(x, (__half *)y16, C, HW, n);
    return launch_status();
}

/* y16[i] = x[i] rounded to nearest even, as float16 or bfloat16 (a matmul's 16-bit operand) */
__global__ static void k_f32_to_16(const float *x, void *y16, int bf16, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (bf16)
            ((__nv_bfloat16 *)y16)[i] = __float2bfloat16_rn(x[i]);
        else
            ((__half *)y16)[i] = __float2half_rn(x[i]);
    }
}

extern "C" int ibk_f32_to_16(ibk_stream s, int bf16, const float *x, void *y16, int64_t n)
{
    if (n <= 0)
        return 0;
    k_f32_to_16<<<grid_for(n), IBK_THREADS, 0, s>>>(x, y16, bf16, n);
    return launch_status();
}

__global__ static void k_gather_f16_rows(const __half *t, const void *idx, int idx64, float *y,
                                         int64_t rows, int64_t n_idx, int64_t dim)
{
    int64_t n = n_idx * dim;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = i / dim, d = i % dim;
        int64_t k = gather_row(idx, idx64, j, rows);
        y[i] = k >= 0 ? __half2float(t[k * dim + d]) : 0.0f;
    }
}

extern "C" int ibk_gather_f16_rows(ibk_stream s, const void *table16, const void *idx,
                                   int idx_is_64, float *y, int64_t rows, int64_t n_idx,
                                   int64_t dim)
{
    if (n_idx <= 0 || dim <= 0)
        return 0;
    k_gather_f16_rows<<<grid_for(n_idx * dim), IBK_THREADS, 0, s>>>(
        (const __half *)table16, idx, idx_is_64, y, rows, n_idx, dim);
    return launch_status();
}

/* ib_q8_row on the device, a warp a row: min and max over the lanes (exact, in any order),
 * then each step of the host's arithmetic as one correctly rounded operation. */
__global__ static void k_table_q8_rows(const float *x, unsigned char *out, int64_t rows,
                                       int64_t width, unsigned long long *bad)
{
    int64_t warps = ((int64_t)gridDim.x * blockDim.x) / 32;
    int lane = threadIdx.x & 31;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < rows;
         r += warps) {
        const float *xr = x + r * width;
        unsigned char *o = out + r * (width + 8);
        float lo = width > 0 ? xr[0] : 0.0f, hi = lo;
        int finite = 1;
        for (int64_t w = lane; w < width; w += 32) {
            lo = fminf(lo, xr[w]);
            hi = fmaxf(hi, xr[w]);
            finite &= isfinite(xr[w]) ? 1 : 0;
        }
        for (int m = 16; m > 0; m >>= 1) {
            lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, m));
            hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, m));
            finite &= __shfl_xor_sync(0xffffffffu, finite, m);
        }
        if (!finite) {
            if (lane == 0)
                atomicMin(bad, (unsigned long long)r + 1);
            continue;
        }
        float scale = __fdiv_rn(__fsub_rn(hi, lo), 255.0f);
        float inv = scale > 0 ? __fdiv_rn(1.0f, scale) : 0.0f;
        for (int64_t w = lane; w < width; w += 32) {
            float q = __fadd_rn(__fmul_rn(__fsub_rn(xr[w], lo), inv), 0.5f);
            o[w] = (unsigned char)__float2uint_rz(q < 0 ? 0.0f : q > 255 ? 255.0f : q);
        }
        if (lane < 8) { /* scale then bias, byte by byte: the row's end is not aligned */
            unsigned int bits = __float_as_uint(lane < 4 ? scale : lo);
            o[width + lane] = (unsigned char)(bits >> (8 * (lane & 3)));
        }
    }
}

__global__ static void k_bad_init(unsigned long long *bad)
{
    *bad = ~0ull;
}

__global__ static void k_bad_final(unsigned long long *bad)
{
    if (*bad == ~0ull)
        *bad = 0;
}

extern "C" int ibk_table_q8_rows(ibk_stream s, const float *x, void *out, int64_t rows,
                                 int64_t width, long long *bad)
{
    unsigned long long *b = (unsigned long long *)bad;
    k_bad_init<<<1, 1, 0, s>>>(b);
    if (rows > 0) {
        int64_t blocks = (rows + 7) / 8; /* 8 warps a block */
        k_table_q8_rows<<<(unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, s>>>(
            x, (unsigned char *)out, rows, width, b);
    }
    k_bad_final<<<1, 1, 0, s>>>(b);
    return launch_status();
}

__global__ static void k_gather_q8_rows(const unsigned char *t, const void *idx, int idx64,
                                        float *y, int64_t rows, int64_t n_idx, int64_t dim)
{
    int64_t n = n_idx * dim;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = i / dim, d = i % dim;
        int64_t k = gather_row(idx, idx64, j, rows);
        if (k < 0) {
            y[i] = 0.0f;
            continue;
        }
        const unsigned char *row = t + k * (dim + 8);
        unsigned int sb = 0, bb = 0;
        for (int b = 0; b < 4; b++) {
            sb |= (unsigned int)row[dim + b] << (8 * b);
            bb |= (unsigned int)row[dim + 4 + b] << (8 * b);
        }
        y[i] = __fadd_rn(__fmul_rn((float)row[d], __uint_as_float(sb)), __uint_as_float(bb));
    }
}

extern "C" int ibk_gather_q8_rows(ibk_stream s, const void *table, const void *idx,
                                  int idx_is_64, float *y, int64_t rows, int64_t n_idx,
                                  int64_t dim)
{
    if (n_idx <= 0 || dim <= 0)
        return 0;
    k_gather_q8_rows<<<grid_for(n_idx * dim), IBK_THREADS, 0, s>>>(
        (const unsigned char *)table, idx, idx_is_64, y, rows, n_idx, dim);
    return launch_status();
}

__global__ static void k_epi_nhwc(const __half *acc, void *out, int out_f32, const float *bias,
                                  const void *z, int z_kind, int64_t C, int64_t HW, int64_t n,
                                  int act, float a, float b)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % C, p = (i / C) % HW, bn = i / (C * HW);
        int64_t nchw = (bn * C + c) * HW + p;
        float v = __half2float(acc[i]);
        if (bias)
            v += bias[c];
        if (z_kind == 1)
            v += __half2float(((const __half *)z)[i]);
        else if (z_kind == 2)
            v += ((const float *)z)[nchw];
        v = unary_op(act, v, a, b);
        if (out_f32)
            ((float *)out)[nchw] = v;
        else
            ((__half *)out)[i] = __float2half_rn(v);
    }
}

extern "C" int ibk_epi_nhwc(ibk_stream s, const void *acc, void *out, int out_f32,
                            const float *bias, const void *z, int z_kind, int64_t N, int64_t C,
                            int64_t HW, int act, float a, float b)
{
    int64_t n = N * C * HW;
    if (n <= 0)
        return 0;
    k_epi_nhwc<<<grid_for(n), IBK_THREADS, 0, s>>>((const __half *)acc, out, out_f32, bias, z,
                                                   z_kind, C, HW, n, act, a, b);
    return launch_status();
}

/* ---- ArgMax / ArgMin -------------------------------------------------------------- */

__global__ static void k_argmax(const float *x, int64_t *y, int64_t outer, int64_t red,
                                int64_t inner, int last, int is_min)
{
    int64_t n = outer * inner;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float *p = x + (i / inner) * red * inner + i % inner;
        float best = p[0];
        int64_t bi = 0;
        for (int64_t r = 1; r < red; r++) {
            float v = p[r * inner];
            bool better = is_min ? (last ? v <= best : v < best) : (last ? v >= best : v > best);
            if (better) {
                best = v;
                bi = r;
            }
        }
        y[i] = bi;
    }
}

extern "C" int ibk_argmax(ibk_stream s, const float *x, int64_t *y, int64_t outer, int64_t red,
                          int64_t inner, int select_last, int is_min)
{
    if (outer <= 0 || inner <= 0 || red <= 0)
        return 0;
    k_argmax<<<grid_for(outer * inner), IBK_THREADS, 0, s>>>(x, y, outer, red, inner, select_last,
                                                             is_min);
    return launch_status();
}

/* ---- 2-D pooling -------------------------------------------------------------------- */

__global__ static void k_pool2d(const float *x, float *y, ibk_pool p, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t ox = i % p.ow, t = i / p.ow;
        int64_t oy = t % p.oh, c = t / p.oh;
        const float *xp = x + c * p.h * p.w;
        float acc = p.is_max ? -INFINITY : 0.f;
        int cnt = 0;
        int64_t y0 = oy * p.sh - p.pt, x0 = ox * p.sw - p.pl;
        int64_t ye = y0 + p.kh < p.h + p.pb ? y0 + p.kh : p.h + p.pb;
        int64_t xe = x0 + p.kw < p.w + p.pr ? x0 + p.kw : p.w + p.pr;
        int64_t cnt_pad = (ye - y0) * (xe - x0);
        for (int ky = 0; ky < p.kh; ky++) {
            int64_t iy = oy * p.sh - p.pt + (int64_t)ky * p.dh;
            for (int kx = 0; kx < p.kw; kx++) {
                int64_t ix = ox * p.sw - p.pl + (int64_t)kx * p.dw;
                bool inside = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
                if (!inside)
                    continue;
                float v = xp[iy * p.w + ix];
                acc = p.is_max ? fmaxf(acc, v) : acc + v;
                cnt++;
            }
        }
        if (!p.is_max)
            acc /= (float)(p.count_pad ? (cnt_pad > 0 ? cnt_pad : 1) : (cnt ? cnt : 1));
        y[i] = acc;
    }
}

extern "C" int ibk_pool2d(ibk_stream s, const float *x, float *y, const ibk_pool *p)
{
    int64_t n = p->nc * p->oh * p->ow;
    if (n <= 0)
        return 0;
    k_pool2d<<<grid_for(n), IBK_THREADS, 0, s>>>(x, y, *p, n);
    return launch_status();
}

/* ---- Cast ------------------------------------------------------------------------------ */

__device__ static bool is_float_t(int t)
{
    return t == IBK_F32 || t == IBK_F64;
}

__device__ static double ldf(const void *p, int t, int64_t i)
{
    return t == IBK_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

__device__ static int64_t ldi(const void *p, int t, int64_t i)
{
    switch (t) {
    case IBK_I64: return ((const int64_t *)p)[i];
    case IBK_I32: return ((const int32_t *)p)[i];
    case IBK_I8: return ((const int8_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

/* double -> int64: truncate, saturate, NaN -> 0 (ib_op_f2i). */
__device__ static int64_t f2i(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

/* The reference's rules (ops/cast.c): int -> int wraps, float -> int goes
 * through a saturated int64 and then wraps, anything -> bool is != 0. */
__global__ static void k_cast(const void *x, int xt, void *y, int yt, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        bool xf = is_float_t(xt);
        double v = xf ? ldf(x, xt, i) : 0.0;
        int64_t k = xf ? 0 : ldi(x, xt, i);
        if (is_float_t(yt)) {
            double d = xf ? v : (double)k;
            if (yt == IBK_F32)
                ((float *)y)[i] = (float)d;
            else
                ((double *)y)[i] = d;
            continue;
        }
        if (yt == IBK_BOOL) {
            ((uint8_t *)y)[i] = xf ? v != 0.0 : k != 0;
            continue;
        }
        if (xf)
            k = f2i(v);
        switch (yt) {
        case IBK_I64: ((int64_t *)y)[i] = k; break;
        case IBK_I32: ((int32_t *)y)[i] = (int32_t)(uint32_t)(uint64_t)k; break;
        case IBK_I8: ((int8_t *)y)[i] = (int8_t)(uint8_t)(uint64_t)k; break;
        default: ((uint8_t *)y)[i] = (uint8_t)(uint64_t)k; break;
        }
    }
}
extern "C" int ibk_cast(ibk_stream s, const void *x, int xdt, void *y, int ydt, int64_t n)
{
    if (n <= 0)
        return 0;
    k_cast<<<grid_for(n), IBK_THREADS, 0, s>>>(x, xdt, y, ydt, n);
    return launch_status();
}

/* ---- InstanceNormalization (+ Relu / LeakyRelu) ----------------------------- */

/* Sum of v over the block, in thread 0 (sh: 32 doubles). */
__device__ static double block_sum_d(double v, double *sh)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? sh[lane] : 0.0;
    if (w == 0)
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
    __syncthreads(); /* sh is reused by the next call */
    return v;
}

/* stats[2p], stats[2p + 1] += the sum and the sum of squares (double) of the part
 * [blockIdx.y * per, +per) of plane p = blockIdx.x; several blocks share a plane, so a
 * 128^3 plane keeps every SM busy. */
__global__ static void k_inorm_stats(const float *x, double *stats, int64_t S, int64_t per)
{
    __shared__ double sh[32];
    int64_t p = blockIdx.x, lo = (int64_t)blockIdx.y * per, hi = lo + per < S ? lo + per : S;
    const float *xp = x + p * S;
    double s = 0.0, q = 0.0;
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        double v = (double)xp[i];
        s += v;
        q += v * v;
    }
    s = block_sum_d(s, sh);
    q = block_sum_d(q, sh);
    if (threadIdx.x == 0) {
        atomicAdd(&stats[2 * p], s);
        atomicAdd(&stats[2 * p + 1], q);
    }
}

__global__ static void k_inorm_apply(const float *x, const double *stats, const float *scale,
                                     const float *bias, float *y, int64_t C, int64_t S, int64_t n,
                                     float eps, int act, float alpha)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = i / S, c = p % C;
        double mean = stats[2 * p] / (double)S;
        double var = stats[2 * p + 1] / (double)S - mean * mean;
        float r = (float)(1.0 / sqrt((var > 0.0 ? var : 0.0) + (double)eps));
        float v = (x[i] - (float)mean) * r * scale[c] + bias[c];
        y[i] = unary_op(act, v, alpha, 0.f);
    }
}

extern "C" int ibk_instance_norm(ibk_stream s, const float *x, const float *scale,
                                 const float *bias, float *y, double *stats, int64_t planes,
                                 int64_t C, int64_t S, float eps, int act, float alpha)
{
    if (planes <= 0 || S <= 0)
        return 0;
    if (planes > 0x7fffffffLL || C <= 0)
        return (int)cudaErrorInvalidValue;
    cudaError_t st = cudaMemsetAsync(stats, 0, (size_t)planes * 2 * sizeof(double), s);
    if (st != cudaSuccess)
        return (int)st;
    int64_t per = (S + 1023) / 1024;
    if (per < 8 * IBK_THREADS)
        per = 8 * IBK_THREADS;
    int64_t chunks = (S + per - 1) / per;
    dim3 grid((unsigned)planes, (unsigned)chunks);
    k_inorm_stats<<<grid, IBK_THREADS, 0, s>>>(x, stats, S, per);
    if ((st = cudaGetLastError()) != cudaSuccess)
        return (int)st;
    k_inorm_apply<<<grid_for(planes * S), IBK_THREADS, 0, s>>>(x, stats, scale, bias, y, C, S,
                                                                planes * S, eps, act, alpha);
    return launch_status();
}

/* ---- LSTM cell ------------------------------------------------------------------ */

__device__ static float sigmoidf_(float x)
{
    return 1.f / (1.f + expf(-x));
}

/* One step of B rows: gates = g + r (ONNX order i, o, f, c; 4H per row), then
 * c = f * c_prev + i * tanh(gc), h = o * tanh(c). c_prev == c_next allowed. */
__global__ static void k_lstm_cell(const float *g, const float *r, const float *c_prev,
                                   float *c_next, float *h_next, float *y, int64_t B, int64_t H)
{
    int64_t n = B * H;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = i / H, j = i % H, o = b * 4 * H + j;
        float gi = g[o] + r[o], go = g[o + H] + r[o + H], gf = g[o + 2 * H] + r[o + 2 * H],
              gc = g[o + 3 * H] + r[o + 3 * H];
        float c = sigmoidf_(gf) * (c_prev ? c_prev[i] : 0.f) + sigmoidf_(gi) * tanhf(gc);
        float h = sigmoidf_(go) * tanhf(c);
        c_next[i] = c;
        h_next[i] = h;
        if (y)
            y[i] = h;
    }
}

extern "C" int ibk_lstm_cell(ibk_stream s, const float *g, const float *r, const float *c_prev,
                             float *c_next, float *h_next, float *y, int64_t B, int64_t H)
{
    if (B <= 0 || H <= 0)
        return 0;
    k_lstm_cell<<<grid_for(B * H), IBK_THREADS, 0, s>>>(g, r, c_prev, c_next, h_next, y, B, H);
    return launch_status();
}
