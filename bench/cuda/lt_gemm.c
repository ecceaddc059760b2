/*
 * lt_gemm.c - what 16-bit storage would buy on the GPU, measured before it is built
 * (issue 24): cuBLASLt GEMMs at BERT-Large's and ResNet50's shapes in the storage/compute
 * forms inferbench has or could have:
 *
 *   fp32-io fast16   float32 A, B, D with CUBLAS_COMPUTE_32F_FAST_16F: what the cuda backend
 *                    runs at --precision fp16 today (activations stay float32)
 *   fp16-io          float16 A, B, D, float32 accumulation: fp16 storage
 *   fp16-in fp32-out float16 A, B, float32 D: 16-bit inputs, float32 between ops
 *   fp32 tf32        float32 with TF32 tensor cores (PyTorch's fp32 default)
 *   fp32             plain float32 (no tensor cores)
 *   int8 i32-out     int8 A, B (A transposed: cuBLAS's "TN" int8 form), int32 D,
 *                    CUBLAS_COMPUTE_32I: what --precision int8 runs on cuda (cuda_matmul_q8.c)
 *   fp8 fp32-out     e4m3 A, B ("TN"), float32 D: a possible --precision fp8 on Hopper
 *   fp8 bf16-out     the same with a bfloat16 D
 *
 * Per shape and form: the heuristic's first algorithm, a warm-up call, then --reps calls
 * between CUDA events; TFLOP/s (TOP/s for int8) = 2 M N K / time. Column-major C [M, N] = A [M, K] B [K, N].
 * Operands are filled with byte 0x3c (float16 1.06, float32 0.0115). Prints figures, asserts
 * nothing (STYLE.md §11). The three 8-bit forms print "no algorithm" where this GPU or
 * cuBLASLt has none (fp8 needs compute capability 8.9 or 9.0). Without a GPU (or built without CUDA) it says so and exits 0.
 *
 * Usage: lt_gemm [--device N] [--reps N] [--shapes bert|resnet|all]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef IB_WITH_CUDA
#include "backend/cuda/cuda_sys.h"

typedef struct shape {
    const char *what;
    int64_t M, N, K;
    bool bert;
} shape;

/* BERT-Large at batch 64 x 384 tokens; ResNet50's 1x1 convolutions at batch 256 (pixels as M) */
static const shape g_shapes[] = {
    {"bert qkv/out 24576x1024x1024", 24576, 1024, 1024, true},
    {"bert ffn1 24576x4096x1024", 24576, 4096, 1024, true},
    {"bert ffn2 24576x1024x4096", 24576, 1024, 4096, true},
    {"resnet l1 1x1 802816x64x256", 802816, 64, 256, false},
    {"resnet l1 1x1 802816x256x64", 802816, 256, 64, false},
    {"resnet l3 1x1 50176x256x1024", 50176, 256, 1024, false},
    {"resnet l4 1x1 12544x2048x512", 12544, 2048, 512, false},
};

typedef struct form {
    const char *name;
    cudaDataType_t ab, d;
    cublasComputeType_t ct;
    cudaDataType_t scale;
    bool tn; /* A stored [K, M] and transposed (the int8 and fp8 kernels' only form) */
} form;

static const form g_forms[] = {
    {"fp32-io fast16", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16F, CUDA_R_32F, false},
    {"fp16-io", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, false},
    {"fp16-in fp32-out", CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, false},
    {"fp32 tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, false},
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, false},
    {"int8 i32-out", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, true},
    {"fp8 fp32-out", CUDA_R_8F_E4M3, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, true},
    {"fp8 bf16-out", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, true},
};

/* TFLOP/s of one GEMM form, or a negative value with *why set. */
static double time_gemm(cublasLtHandle_t lt, cudaStream_t st, void *ws, size_t wsb, const shape *s,
                        const form *f, void *A, void *B, void *D, int reps, const char **why)
{
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    double tf = -1.0;
    *why = "layout";
    cublasOperation_t ta = f->tn ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (cublasLtMatmulDescCreate(&op, f->ct, f->scale) ||
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
        (f->tn ? cublasLtMatrixLayoutCreate(&la, f->ab, (uint64_t)s->K, (uint64_t)s->M, s->K)
               : cublasLtMatrixLayoutCreate(&la, f->ab, (uint64_t)s->M, (uint64_t)s->K, s->M)) ||
        cublasLtMatrixLayoutCreate(&lb, f->ab, (uint64_t)s->K, (uint64_t)s->N, s->K) ||
        cublasLtMatrixLayoutCreate(&ld, f->d, (uint64_t)s->M, (uint64_t)s->N, s->M) ||
        cublasLtMatmulPreferenceCreate(&pref))
        goto out;
    uint64_t w = wsb;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &w,
                                         sizeof w);
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    *why = "no algorithm";
    if (cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &res, &found) ||
        found < 1)
        goto out;
    float alpha_f = 1.0f, beta_f = 0.0f;
    int32_t alpha_i = 1, beta_i = 0;
    const void *alpha = f->scale == CUDA_R_32I ? (const void *)&alpha_i : (const void *)&alpha_f;
    const void *beta = f->scale == CUDA_R_32I ? (const void *)&beta_i : (const void *)&beta_f;
    cudaEvent_t e0, e1;
    *why = "events";
    if (cudaEventCreate(&e0) || cudaEventCreate(&e1))
        goto out;
    *why = "matmul failed";
    bool ok = cublasLtMatmul(lt, op, alpha, A, la, B, lb, beta, D, ld, D, ld, &res.algo, ws,
                             wsb, st) == CUBLAS_STATUS_SUCCESS &&
              cudaEventRecord(e0, st) == cudaSuccess;
    for (int r = 0; ok && r < reps; r++)
        ok = cublasLtMatmul(lt, op, alpha, A, la, B, lb, beta, D, ld, D, ld, &res.algo, ws, wsb,
                            st) == CUBLAS_STATUS_SUCCESS;
    float ms = 0;
    ok = ok && cudaEventRecord(e1, st) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
         cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms > 0;
    if (ok)
        tf = 2.0 * (double)s->M * (double)s->N * (double)s->K * reps / ((double)ms * 1e-3) / 1e12;
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
out:
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    if (la)
        cublasLtMatrixLayoutDestroy(la);
    if (lb)
        cublasLtMatrixLayoutDestroy(lb);
    if (ld)
        cublasLtMatrixLayoutDestroy(ld);
    if (op)
        cublasLtMatmulDescDestroy(op);
    return tf;
}

int main(int argc, char **argv)
{
    int dev = 0, reps = 10;
    const char *which = "all";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc)
            dev = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
            which = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--device N] [--reps N] [--shapes bert|resnet|all]\n",
                    argv[0]);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= dev) {
        printf("lt_gemm: no CUDA device %d here; nothing measured\n", dev);
        return 0;
    }
    struct cudaDeviceProp prop;
    cudaSetDevice(dev);
    cudaGetDeviceProperties(&prop, dev);
    size_t maxb = 0;
    for (size_t i = 0; i < sizeof g_shapes / sizeof g_shapes[0]; i++) {
        const shape *s = &g_shapes[i];
        size_t b = (size_t)(s->M * s->K > s->M * s->N ? s->M * s->K : s->M * s->N);
        b = b > (size_t)(s->K * s->N) ? b : (size_t)(s->K * s->N);
        maxb = b * 4 > maxb ? b * 4 : maxb;
    }
    void *A = NULL, *B = NULL, *D = NULL, *ws = NULL;
    size_t wsb = 64u << 20;
    cudaStream_t st;
    cublasLtHandle_t lt;
    if (cudaMalloc(&A, maxb) || cudaMalloc(&B, maxb) || cudaMalloc(&D, maxb) ||
        cudaMalloc(&ws, wsb) || cudaStreamCreate(&st) || cublasLtCreate(&lt)) {
        printf("lt_gemm: cannot allocate %zu MB x 3 on device %d\n", maxb >> 20, dev);
        return 1;
    }
    cudaMemset(A, 0x3c, maxb);
    cudaMemset(B, 0x3c, maxb);
    printf("lt_gemm on %s (device %d, %d SMs), %d reps, TFLOP/s\n", prop.name, dev,
           prop.multiProcessorCount, reps);
    printf("%-32s", "shape (M x N x K)");
    for (size_t f = 0; f < sizeof g_forms / sizeof g_forms[0]; f++)
        printf(" %17s", g_forms[f].name);
    printf("\n");
    for (size_t i = 0; i < sizeof g_shapes / sizeof g_shapes[0]; i++) {
        const shape *s = &g_shapes[i];
        if ((!strcmp(which, "bert") && !s->bert) || (!strcmp(which, "resnet") && s->bert))
            continue;
        printf("%-32s", s->what);
        for (size_t f = 0; f < sizeof g_forms / sizeof g_forms[0]; f++) {
            const char *why = "";
            double tf = time_gemm(lt, st, ws, wsb, s, &g_forms[f], A, B, D, reps, &why);
            if (tf < 0)
                printf(" %17s", why);
            else
                printf(" %17.1f", tf);
        }
        printf("\n");
    }
    cublasLtDestroy(lt);
    cudaFree(A);
    cudaFree(B);
    cudaFree(D);
    cudaFree(ws);
    return 0;
}
#else
int main(void)
{
    printf("lt_gemm: built without CUDA (make CUDA=1); nothing measured\n");
    return 0;
}
#endif
