/*
 * ib_ssd.cu - inferbench.SSDPostprocess on the GPU (issue 24: SSD-ResNet34's decode + NMS
 * where the heads are, not on the host), behind ibk_ssd_prepare and ibk_ssd_run of
 * cuda_kernels.h. The semantics and the order of ties are ir/ops/ssd_post.c's:
 *
 * 1. k_decode (an anchor a thread): ltrb boxes from the variances and the anchors, and the
 *    softmax over the classes (max over classes, expf, the sum in class order, one division).
 * 2. k_class (a block per image and class): the anchors scoring above the threshold as 64-bit
 *    keys (score bits, then the complement of the anchor, so equal scores keep the lower
 *    anchor first), a bitonic sort in shared memory, the first top_per_class, then greedy NMS
 *    in pick order (a survivor removes every later box with IoU >= the threshold).
 * 3. k_merge (a block per image): the survivors of all classes as keys (score, then the
 *    complement of class * top + pick), sorted, the best max_output written in ascending order
 *    as rows (xmin, ymin, xmax, ymax, score, label) with the count.
 *
 * Products and sums that the host computes as separately rounded operations are written with
 * __fmul_rn / __fadd_rn / __fsub_rn so nvcc does not contract them into FMAs; expf itself
 * differs from glibc's by an ulp or two, so scores agree with the host's to float rounding,
 * not bit for bit. Not yet run on a GPU (written 2026-12-05).
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "ibk_grid.cuh"

#define SSD_BLOCK 1024

__host__ __device__ static int64_t pow2_at_least(int64_t x)
{
    int64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

__global__ static void k_decode(const float *loc, const float *conf, const float *an, float *box,
                                float *prob, ibk_ssd a)
{
    const int64_t total = a.N * a.A;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t n = t / a.A, i = t % a.A;
        const float *l = loc + n * 4 * a.A, *p = an + 4 * i;
        float cx = __fadd_rn(__fmul_rn(__fmul_rn(a.scale_xy, l[i]), p[2]), p[0]);
        float cy = __fadd_rn(__fmul_rn(__fmul_rn(a.scale_xy, l[a.A + i]), p[3]), p[1]);
        float w = __fmul_rn(expf(__fmul_rn(a.scale_wh, l[2 * a.A + i])), p[2]);
        float h = __fmul_rn(expf(__fmul_rn(a.scale_wh, l[3 * a.A + i])), p[3]);
        float *b = box + (n * a.A + i) * 4;
        b[0] = __fsub_rn(cx, __fmul_rn(0.5f, w));
        b[1] = __fsub_rn(cy, __fmul_rn(0.5f, h));
        b[2] = __fadd_rn(cx, __fmul_rn(0.5f, w));
        b[3] = __fadd_rn(cy, __fmul_rn(0.5f, h));
        const float *x = conf + n * a.C * a.A + i;
        float *pr = prob + n * a.C * a.A + i;
        float mx = x[0];
        for (int64_t c = 1; c < a.C; c++)
            mx = x[c * a.A] > mx ? x[c * a.A] : mx;
        float sum = 0.0f;
        for (int64_t c = 0; c < a.C; c++) {
            float e = expf(__fsub_rn(x[c * a.A], mx));
            pr[c * a.A] = e;
            sum = __fadd_rn(sum, e);
        }
        for (int64_t c = 0; c < a.C; c++)
            pr[c * a.A] = __fdiv_rn(pr[c * a.A], sum);
    }
}

/* Descending bitonic sort of keys[0, P) (P a power of two) by the whole block. */
__device__ static void sort_desc(unsigned long long *keys, int64_t P)
{
    for (int64_t k = 2; k <= P; k <<= 1)
        for (int64_t j = k >> 1; j > 0; j >>= 1) {
            for (int64_t i = threadIdx.x; i < P; i += blockDim.x) {
                int64_t ixj = i ^ j;
                if (ixj > i) {
                    unsigned long long u = keys[i], v = keys[ixj];
                    bool first_half = (i & k) == 0; /* this run sorts descending */
                    if (first_half ? u < v : u > v) {
                        keys[i] = v;
                        keys[ixj] = u;
                    }
                }
            }
            __syncthreads();
        }
}

/* ir/ops/ssd_post.c's ib_ssd_iou with the same roundings */
__device__ static float iou(const float *a, const float *b)
{
    float iw = __fsub_rn(fminf(a[2], b[2]), fmaxf(a[0], b[0]));
    float ih = __fsub_rn(fminf(a[3], b[3]), fmaxf(a[1], b[1]));
    if (iw < 0)
        iw = 0;
    if (ih < 0)
        ih = 0;
    float in = __fmul_rn(iw, ih);
    float aa = __fmul_rn(__fsub_rn(a[2], a[0]), __fsub_rn(a[3], a[1]));
    float ab = __fmul_rn(__fsub_rn(b[2], b[0]), __fsub_rn(b[3], b[1]));
    float u = __fsub_rn(__fadd_rn(aa, ab), in);
    return u > 0 ? __fdiv_rn(in, u) : 0.0f;
}

/* Block (class c = blockIdx.x + 1, image n = blockIdx.y): kept[n][c-1][k] = (score, anchor)
 * of the NMS survivors in pick order, nkept[n][c-1] their count. */
__global__ static void k_class(const float *box, const float *prob, float *kscore,
                               int32_t *kanchor, int32_t *nkept, ibk_ssd a)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const int64_t P = pow2_at_least(a.A) /* host-checked: <= 16384 */;
    unsigned long long *keys = (unsigned long long *)smem;
    float *kb = (float *)(keys + P);              /* [top][4] candidate boxes */
    int *alive = (int *)(kb + 4 * a.top);         /* [top] */
    const int64_t n = blockIdx.y, c = blockIdx.x + 1;
    const float *sc = prob + (n * a.C + c) * a.A;
    for (int64_t i = threadIdx.x; i < P; i += blockDim.x) {
        unsigned long long k = 0;
        if (i < a.A && sc[i] > a.score_thr)
            k = ((unsigned long long)__float_as_uint(sc[i]) << 32) |
                (unsigned long long)(0xffffffffu - (uint32_t)i);
        keys[i] = k;
    }
    __syncthreads();
    sort_desc(keys, P);
    /* the candidates are the non-zero keys, now first; the first top of them go on */
    __shared__ int cnt;
    if (threadIdx.x == 0) {
        int k = 0;
        while (k < a.top && k < P && keys[k])
            k++;
        cnt = k;
    }
    __syncthreads();
    const int m = cnt;
    for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
        uint32_t an = 0xffffffffu - (uint32_t)(keys[i] & 0xffffffffu);
        const float *b = box + (n * a.A + an) * 4;
        for (int q = 0; q < 4; q++)
            kb[4 * i + q] = b[q];
        alive[i] = 1;
    }
    __syncthreads();
    for (int i = 0; i < m; i++) {
        if (alive[i]) /* the same value for every thread: written before the last barrier */
            for (int64_t j = i + 1 + threadIdx.x; j < m; j += blockDim.x)
                if (alive[j] && !(iou(kb + 4 * j, kb + 4 * i) < a.nms_iou))
                    alive[j] = 0;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int k = 0;
        float *ks = kscore + (n * (a.C - 1) + (c - 1)) * a.top;
        int32_t *ka = kanchor + (n * (a.C - 1) + (c - 1)) * a.top;
        for (int i = 0; i < m; i++)
            if (alive[i]) {
                ks[k] = __uint_as_float((uint32_t)(keys[i] >> 32));
                ka[k] = (int32_t)(0xffffffffu - (uint32_t)(keys[i] & 0xffffffffu));
                k++;
            }
        nkept[n * (a.C - 1) + (c - 1)] = k;
    }
}

/* Block per image: the best max_out survivors as rows in ascending score order. */
__global__ static void k_merge(const float *box, const float *kscore, const int32_t *kanchor,
                               const int32_t *nkept, float *rows, int64_t *count, ibk_ssd a)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const int64_t total = (a.C - 1) * a.top, P = pow2_at_least(total);
    unsigned long long *keys = (unsigned long long *)smem;
    const int64_t n = blockIdx.x;
    for (int64_t i = threadIdx.x; i < P; i += blockDim.x) {
        unsigned long long k = 0;
        if (i < total) {
            int64_t ci = i / a.top, pick = i % a.top;
            if (pick < nkept[n * (a.C - 1) + ci]) {
                float s = kscore[n * total + i];
                /* ties: the lower class, then the earlier pick first (i ascending) */
                k = ((unsigned long long)__float_as_uint(s) << 32) |
                    (unsigned long long)(0xffffffffu - (uint32_t)i);
            }
        }
        keys[i] = k;
    }
    __syncthreads();
    sort_desc(keys, P);
    __shared__ int keep;
    if (threadIdx.x == 0) {
        int k = 0;
        while (k < a.max_out && k < P && keys[k])
            k++;
        keep = k;
        count[n] = k;
    }
    __syncthreads();
    float *out = rows + n * a.max_out * 6;
    for (int64_t r = threadIdx.x; r < a.max_out; r += blockDim.x) {
        float *o = out + 6 * r;
        if (r >= keep) {
            for (int q = 0; q < 6; q++)
                o[q] = 0.0f;
            continue;
        }
        unsigned long long k = keys[keep - 1 - r]; /* ascending */
        int64_t i = (int64_t)(0xffffffffu - (uint32_t)(k & 0xffffffffu));
        int64_t ci = i / a.top, an = kanchor[n * total + i];
        const float *b = box + (n * a.A + an) * 4;
        for (int q = 0; q < 4; q++)
            o[q] = b[q];
        o[4] = __uint_as_float((uint32_t)(k >> 32));
        o[5] = (float)(ci + 1);
    }
}

static size_t class_smem(const ibk_ssd *a)
{
    return (size_t)pow2_at_least(a->A) * 8 + (size_t)a->top * 16 + (size_t)a->top * 4;
}

static size_t merge_smem(const ibk_ssd *a)
{
    return (size_t)pow2_at_least((a->C - 1) * a->top) * 8;
}

extern "C" size_t ibk_ssd_scratch_bytes(const ibk_ssd *a)
{
    size_t f = (size_t)a->N * a->A * 4 + (size_t)a->N * a->C * a->A; /* box, prob */
    size_t k = (size_t)a->N * (a->C - 1) * a->top;                  /* kscore, kanchor */
    return (f + k) * 4 + k * 4 + (size_t)a->N * (a->C - 1) * 4 + 256;
}

extern "C" int ibk_ssd_prepare(const ibk_ssd *a, int *fits)
{
    int dev = 0, optin = 0;
    cudaError_t st = cudaGetDevice(&dev);
    if (st == cudaSuccess)
        st = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (st != cudaSuccess)
        return (int)st;
    size_t cs = class_smem(a), ms = merge_smem(a);
    *fits = cs <= (size_t)optin && ms <= (size_t)optin;
    if (!*fits)
        return 0;
    st = cudaFuncSetAttribute(k_class, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cs);
    if (st == cudaSuccess)
        st = cudaFuncSetAttribute(k_merge, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)ms);
    return (int)st;
}

extern "C" int ibk_ssd_run(ibk_stream s, const float *loc, const float *conf,
                           const float *anchors, float *rows, int64_t *count, void *scratch,
                           const ibk_ssd *a)
{
    if (a->N < 1)
        return 0;
    if (a->C < 2 || a->N > 65535 || a->C - 1 > 0x7fffffff)
        return (int)cudaErrorInvalidValue;
    char *p = (char *)scratch;
    float *box = (float *)p;
    float *prob = box + a->N * a->A * 4;
    float *kscore = prob + a->N * a->C * a->A;
    int32_t *kanchor = (int32_t *)(kscore + a->N * (a->C - 1) * a->top);
    int32_t *nkept = kanchor + a->N * (a->C - 1) * a->top;
    k_decode<<<grid_for(a->N * a->A), IBK_THREADS, 0, s>>>(loc, conf, anchors, box, prob, *a);
    dim3 cg((unsigned)(a->C - 1), (unsigned)a->N);
    k_class<<<cg, SSD_BLOCK, class_smem(a), s>>>(box, prob, kscore, kanchor, nkept, *a);
    k_merge<<<(unsigned)a->N, SSD_BLOCK, merge_smem(a), s>>>(box, kscore, kanchor, nkept, rows,
                                                             count, *a);
    return (int)cudaGetLastError();
}
