/*
 * cuda_matmul.c - MatMul, Gemm, inferbench.FusedMatMul and
 * inferbench.Attention on cuBLASLt (float32 tensors in plain row-major
 * layout).
 *
 * Row-major Y[M,N] = op(A) op(B) is computed as the column-major product
 * Y^T[N,M] = op(B)^T op(A)^T, so Lt's "A" is our B and its "B" is our A,
 * with no copies. Batched products use Lt's strided batches (stride 0 for a
 * broadcast operand); a MatMul whose B has no batch folds A's batch into M.
 *
 * Precision: fp32 computes in CUBLAS_COMPUTE_32F (no TF32). At fp16 and bf16 a
 * product whose B is a constant (the layers' weights) takes 16-bit operands: B
 * converted once per device store (cu_weight_get_16), A by a conversion step into a
 * block the matmuls share (the same value converted once when the next matmul reads
 * it too, as BERT's Q, K and V projections do), Y float32, CUBLAS_COMPUTE_32F. Float32
 * operands with CUBLAS_COMPUTE_32F_FAST_16F / _FAST_16BF (Lt rounds them inside) are
 * the other products' form, and the fallback when Lt has no algorithm for 16-bit
 * inputs. Issue 24: Hopper's fastest tensor-core kernels read 16-bit operands; what
 * float32 operands cost there is bench/cuda/lt_gemm's question. Written 2026-12-05
 * without a GPU, not yet run (profile kind "cublaslt-16in"). In an int8 session such a
 * product runs on int8 operands when A has a calibrated range (cuda_matmul_q8.c), and as
 * at fp16 otherwise. Epilogues: the bias (N values) and Relu are fused into the Lt call; so
 * is Gelu at fp16 / bf16 (and in an int8 or fp8 session's 16-bit products; issue 24 asks for
 * the Lt epilogues, bias and GELU). Lt's GELU is the tanh form, within 4.8e-4 of the erf form
 * ONNX's Gelu and BERT use (|difference| at most 4.73e-4, at x = -2.70), under a float16's
 * rounding of any value above 0.5, as TensorRT's BERT does (PyTorch's decomposition of its
 * _addmm_activation, which runs on this epilogue, is gelu(approximate='tanh') on CUDA); at fp32 the exact kernel runs after
 * the product, and so it does when Lt has no algorithm with the GELU epilogue. A bias of
 * another shape, Gemm's C and attention's mask/softmax are separate steps. The GELU epilogue
 * was written in the thirteenth session without a GPU, not yet run.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"


/* One planned Lt call. */
typedef struct cu_lt {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    float alpha, beta;
    const void *A, *B; /* Lt's operands (our B and A) */
    void *D;
    bool in16;         /* A and B are 16-bit (g->b16, g->a16) */
} lt_k;

void cu_lt_destroy(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                   cublasLtMatrixLayout_t lc)
{
    if (op)
        (void)cublasLtMatmulDescDestroy(op);
    if (la)
        (void)cublasLtMatrixLayoutDestroy(la);
    if (lb)
        (void)cublasLtMatrixLayoutDestroy(lb);
    if (lc)
        (void)cublasLtMatrixLayoutDestroy(lc);
}

static void lt_free(void *p)
{
    lt_k *k = p;
    if (!k)
        return;
    cu_lt_destroy(k->op, k->la, k->lb, k->lc);
    ib_free(k);
}

static int run_lt(cu_exec *e, void *p, ib_err *err)
{
    lt_k *k = p;
    cu_ctx *c = e->ctx;
    return cu_check_lt(e, err,
                       cublasLtMatmul(c->lt, k->op, &k->alpha, k->A, k->la, k->B, k->lb, &k->beta,
                                      k->D, k->lc, k->D, k->lc, &k->algo, c->lt_ws,
                                      CU_LT_WORKSPACE, c->stream),
                       "matmul");
}

typedef cu_mm_geom mm_geom;

static uint32_t align_of(const void *p, int64_t stride_bytes)
{
    uintptr_t v = (uintptr_t)p | (uintptr_t)stride_bytes | 256u;
    return (uint32_t)(v & (~v + 1));
}

int cu_lt_layout(cu_exec *e, cublasLtMatrixLayout_t *l, cudaDataType_t t, uint64_t rows,
                 uint64_t cols, int64_t ld, int64_t batch, int64_t stride, ib_err *err)
{
    int rc = cu_check_lt(e, err, cublasLtMatrixLayoutCreate(l, t, rows, cols, ld),
                         "layout create");
    if (rc || batch <= 1)
        return rc;
    int32_t bc = (int32_t)batch;
    rc = cu_check_lt(e, err,
                     cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc,
                                                      sizeof bc),
                     "layout batch count");
    if (rc)
        return rc;
    return cu_check_lt(e, err,
                       cublasLtMatrixLayoutSetAttribute(
                           *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                       "layout batch stride");
}

int cu_lt_heuristic(cu_exec *e, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
                    cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc, const uint32_t *align,
                    int want, cublasLtMatmulHeuristicResult_t *res, int *found, cublasStatus_t *st,
                    ib_err *err)
{
    cublasLtMatmulPreference_t pref = NULL;
    int rc = cu_check_lt(e, err, cublasLtMatmulPreferenceCreate(&pref), "preference create");
    if (rc)
        return rc;
    uint64_t ws = CU_LT_WORKSPACE;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof ws);
    if (align) {
        const cublasLtMatmulPreferenceAttributes_t at[4] = {
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
        for (int i = 0; i < 4; i++)
            cublasLtMatmulPreferenceSetAttribute(pref, at[i], &align[i < 3 ? i : 2],
                                                 sizeof align[0]);
    }
    *found = 0;
    memset(res, 0, (size_t)want * sizeof *res);
    *st = cublasLtMatmulAlgoGetHeuristic(e->ctx->lt, op, la, lb, lc, lc, pref, want, res, found);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    return IB_OK;
}

static cublasComputeType_t compute_type(enum ib_precision p)
{
    return p == IB_PRECISION_FP16   ? CUBLAS_COMPUTE_32F_FAST_16F
           : p == IB_PRECISION_BF16 ? CUBLAS_COMPUTE_32F_FAST_16BF
                                    : CUBLAS_COMPUTE_32F;
}

/* Issue 24: a matmul of at least LT_TIME_FLOP times the heuristic's first LT_CANDIDATES
 * algorithms once (one warm-up call, then LT_TIME_REPS timed between CUDA events on the
 * context's stream, at compile, on the planned pointers: no step has run, so whatever they
 * hold is overwritten later) and keeps the fastest, cached per context by its description;
 * smaller ones take the heuristic's first, as before. The convolutions do the same through
 * cudnnFindConvolutionForwardAlgorithm (cuda_conv.c). Not yet run on a GPU (2026-12-05). */
#define LT_CANDIDATES 8
#define LT_TIME_FLOP 2.5e8
#define LT_TIME_REPS 3

static void lt_key(const mm_geom *g, bool use_epi, cublasComputeType_t ct, const lt_k *k,
                   int64_t *key)
{
    memset(key, 0, 16 * sizeof *key);
    int64_t es = k->in16 ? 2 : 4, ed = k->in16 && g->y16 ? 2 : 4;
    int64_t v[] = {g->M, g->N, g->K, g->batch, g->ta, g->tb, g->sa, g->sb, g->sy,
                   use_epi && g->bias, use_epi && g->relu, (int64_t)ct,
                   (int64_t)align_of(k->A, g->sb * es), (int64_t)align_of(k->B, g->sa * es),
                   (int64_t)align_of(k->D, g->sy * ed),
                   (g->beta != 0.0f) | (k->in16 ? 2 : 0) | (k->in16 && g->bf16 ? 4 : 0) |
                       (k->in16 && g->y16 ? 8 : 0) | (use_epi && g->gelu ? 16 : 0)};
    memcpy(key, v, sizeof v);
}

static int lt_timed(cu_exec *e, const mm_geom *g, bool use_epi, cublasComputeType_t ct, lt_k *k,
                    const cublasLtMatmulHeuristicResult_t *res, int found, ib_err *err)
{
    cu_ctx *c = e->ctx;
    int64_t key[16];
    lt_key(g, use_epi, ct, k, key);
    for (size_t i = 0; i < c->lt_algos.len; i++)
        if (!memcmp(c->lt_algos.data[i].key, key, sizeof key)) {
            k->algo = c->lt_algos.data[i].algo;
            return IB_OK;
        }
    cudaEvent_t ev[2];
    if (cudaEventCreate(&ev[0]) != cudaSuccess)
        return IB_OK; /* keep the heuristic's first */
    if (cudaEventCreate(&ev[1]) != cudaSuccess) {
        (void)cudaEventDestroy(ev[0]);
        return IB_OK;
    }
    float best = -1.0f;
    int won = 0;
    for (int i = 0; i < found; i++) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        k->algo = res[i].algo;
        bool ok = run_lt(e, k, NULL) == IB_OK && cudaEventRecord(ev[0], c->stream) == cudaSuccess;
        for (int r = 0; ok && r < LT_TIME_REPS; r++)
            ok = run_lt(e, k, NULL) == IB_OK;
        float ms = 0.0f;
        ok = ok && cudaEventRecord(ev[1], c->stream) == cudaSuccess &&
             cudaEventSynchronize(ev[1]) == cudaSuccess &&
             cudaEventElapsedTime(&ms, ev[0], ev[1]) == cudaSuccess;
        if (!ok) {
            (void)cudaGetLastError(); /* a candidate that fails is skipped */
            continue;
        }
        if (best < 0 || ms < best) {
            best = ms;
            won = i;
        }
    }
    (void)cudaEventDestroy(ev[0]);
    (void)cudaEventDestroy(ev[1]);
    k->algo = res[won].algo;
    cu_lt_algo a;
    memcpy(a.key, key, sizeof key);
    a.algo = res[won].algo;
    if (IB_VEC_PUSH(&c->lt_algos, a))
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    return IB_OK;
}

/* Plan one Lt call for g with this epilogue and compute type, with 16-bit operands when in16,
 * into *out. IB_EUNSUPPORTED (err untouched) when Lt offers no algorithm for it. */
static int plan_lt(cu_exec *e, const mm_geom *g, bool use_epi, cublasComputeType_t ct, bool in16,
                   lt_k **out, ib_err *err)
{
    lt_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    cu_ctx *c = e->ctx;
    int rc;
    k->alpha = g->alpha;
    k->beta = g->beta;
    k->in16 = in16;
    k->A = in16 ? g->b16 : g->b;
    k->B = in16 ? g->a16 : g->a;
    k->D = g->y;
    const cudaDataType_t tin = !in16 ? CUDA_R_32F : g->bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const cudaDataType_t tout = in16 && g->y16 ? tin : CUDA_R_32F; /* a 16-bit chain's Y */
    const int64_t es = in16 ? 2 : 4, ed = in16 && g->y16 ? 2 : 4;
    cublasOperation_t opa = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N; /* on our B */
    cublasOperation_t opb = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N; /* on our A */
    if ((rc = cu_check_lt(e, err, cublasLtMatmulDescCreate(&k->op, ct, CUDA_R_32F),
                          "matmul desc create")))
        goto fail;
    cublasLtMatmulDescSetAttribute(k->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa);
    cublasLtMatmulDescSetAttribute(k->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb);
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    if (use_epi && g->gelu)
        epi = g->bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    else if (use_epi)
        epi = g->bias ? (g->relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                      : (g->relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    cublasLtMatmulDescSetAttribute(k->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (use_epi && g->bias)
        cublasLtMatmulDescSetAttribute(k->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g->bias,
                                       sizeof g->bias);
    /* Lt A = our B: stored [K,N] (ld N) or, transposed, [N,K] (ld K). */
    if ((rc = cu_lt_layout(e, &k->la, tin, (uint64_t)(g->tb ? g->K : g->N),
                     (uint64_t)(g->tb ? g->N : g->K), g->tb ? g->K : g->N, g->batch, g->sb, err)) ||
        (rc = cu_lt_layout(e, &k->lb, tin, (uint64_t)(g->ta ? g->M : g->K),
                     (uint64_t)(g->ta ? g->K : g->M), g->ta ? g->M : g->K, g->batch, g->sa, err)) ||
        (rc = cu_lt_layout(e, &k->lc, tout, (uint64_t)g->N, (uint64_t)g->M, g->N, g->batch, g->sy,
                     err)))
        goto fail;
    const uint32_t align[3] = {align_of(k->A, g->sb * es), align_of(k->B, g->sa * es),
                               align_of(k->D, g->sy * ed)};
    cublasLtMatmulHeuristicResult_t res[LT_CANDIDATES];
    int found = 0;
    const bool big = 2.0 * (double)g->M * (double)g->N * (double)g->K * (double)g->batch >=
                     LT_TIME_FLOP;
    cublasStatus_t st;
    if ((rc = cu_lt_heuristic(e, k->op, k->la, k->lb, k->lc, align, big ? LT_CANDIDATES : 1, res,
                              &found, &st, err)))
        goto fail;
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found < 1)) {
        rc = IB_EUNSUPPORTED; /* the caller tries a simpler form */
        goto fail;
    }
    if ((rc = cu_check_lt(e, err, st, "algorithm heuristic")))
        goto fail;
    k->algo = res[0].algo;
    if (found > 1 && (rc = lt_timed(e, g, use_epi, ct, k, res, found, err)))
        goto fail;
    /* the 16-bit operand forms are new here (2026-12-05, not yet run on a GPU): one call on
     * the planned pointers before they are taken, so a form Lt lists but does not run falls
     * back to the float32 operands instead of failing the session's runs */
    if (in16 && (run_lt(e, k, NULL) != IB_OK ||
                 cudaStreamSynchronize(c->stream) != cudaSuccess)) {
        (void)cudaGetLastError();
        rc = IB_EUNSUPPORTED;
        goto fail;
    }
    /* backend ABI 10: 16-bit operands, or float32 ones Lt rounds to 16 bits inside */
    enum ib_precision p16 = e->precision == IB_PRECISION_BF16 ? IB_PRECISION_BF16
                                                              : IB_PRECISION_FP16;
    ib_prec_notes_set(&e->precs, in16                                 ? p16
                                 : ct == CUBLAS_COMPUTE_32F_FAST_16F  ? IB_PRECISION_FP16
                                 : ct == CUBLAS_COMPUTE_32F_FAST_16BF ? IB_PRECISION_BF16
                                                                      : IB_PRECISION_FP32);
    *out = k;
    return IB_OK;
fail:
    lt_free(k);
    return rc;
}

/* Plan g in the first form Lt has an algorithm for: with 16-bit operands (when g has them),
 * with then without the bias/Relu in Lt's epilogue; then float32 operands with the epilogue at
 * the session precision's compute type (when epi), without the epilogue at that type, then
 * without it in plain CUBLAS_COMPUTE_32F. Any refusal but OOM moves on to the next, simpler
 * form (an unsupported compute type may also come back as an invalid value). With g->gelu the
 * two epilogue forms are first tried with the Gelu in the epilogue too. *fused: the epilogue
 * runs inside Lt; *gelu_fused: the Gelu with it. */
static int plan_first(cu_exec *e, const mm_geom *g, bool epi, lt_k **out, bool *fused,
                      bool *gelu_fused, ib_err *err)
{
    *fused = *gelu_fused = false;
    if (g->M > INT32_MAX || g->N > INT32_MAX || g->K > INT32_MAX || g->batch > INT32_MAX)
        return cu_fail(e, err, IB_EUNSUPPORTED, "matmul dims exceed cuBLASLt's 32-bit range");
    cublasComputeType_t want = compute_type(e->precision);
    const struct {
        bool epi, in16;
        cublasComputeType_t ct;
    } tries[] = {{true, true, CUBLAS_COMPUTE_32F},
                 {false, true, CUBLAS_COMPUTE_32F},
                 {true, false, want},
                 {false, false, want},
                 {false, false, CUBLAS_COMPUTE_32F}};
    int rc = IB_EUNSUPPORTED;
    mm_geom h = *g;
    for (int pass = g->gelu ? 0 : 1; pass < 2 && rc != IB_OK && rc != IB_ENOMEM; pass++) {
        h.gelu = pass == 0 ? g->gelu : 0; /* pass 0: the epilogue forms with the Gelu */
        for (size_t t = 0; t < IB_ARRAY_LEN(tries) && rc != IB_OK && rc != IB_ENOMEM; t++) {
            if ((tries[t].epi && !epi && !h.gelu) || (!tries[t].epi && h.gelu) ||
                (tries[t].in16 && !(g->a16 && g->b16)))
                continue;
            /* a 16-bit chain's A or Y: only the 16-bit forms, and a 16-bit Y only with the bias
             * and Relu inside Lt (the bias + Relu kernel after it reads float32) */
            if (g->must16 && (!tries[t].in16 || (g->y16 && epi && !tries[t].epi)))
                continue;
            rc = plan_lt(e, &h, tries[t].epi, tries[t].ct, tries[t].in16, out, err);
            *fused = rc == IB_OK && tries[t].epi;
            *gelu_fused = *fused && h.gelu;
        }
    }
    if (rc == IB_EUNSUPPORTED)
        return cu_fail(e, err, IB_EUNSUPPORTED,
                       "cuBLASLt has no algorithm for M=%lld N=%lld K=%lld batch=%lld%s",
                       (long long)g->M, (long long)g->N, (long long)g->K, (long long)g->batch,
                       g->must16 ? " with 16-bit operands (a 16-bit chain's; run without "
                                   "--half-chains)"
                                 : "");
    return rc;
}

int cu_lt_plan(cu_exec *e, const cu_mm_geom *g, cu_lt **out, ib_err *err)
{
    bool fused, gelu_fused;
    mm_geom f = *g;
    f.gelu = 0; /* no epilogue */
    return plan_first(e, &f, false, out, &fused, &gelu_fused, err);
}

int cu_lt_run(cu_exec *e, cu_lt *k, const float *a, const float *b, float *y, ib_err *err)
{
    k->A = b;
    k->B = a;
    k->D = y;
    return run_lt(e, k, err);
}

void cu_lt_free(void *k)
{
    lt_free(k);
}

typedef struct ep_k {
    float *y;
    const float *bias;
    int64_t rows, cols;
    int act;
} ep_k;

static int run_ep(cu_exec *e, void *p, ib_err *err)
{
    ep_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_bias_act(e->ctx->stream, k->y, k->bias, NULL, k->rows,
                                                 k->cols, 1, k->act, 0.f, 0.f),
                       "matmul epilogue kernel");
}

typedef struct cvt_k {
    const void *x;
    void *y;
    int64_t n, c, hw;
    int fmt, xt;
    float scale;
} cvt_k;

static int run_cvt(cu_exec *e, void *p, ib_err *err)
{
    cvt_k *k = p;
    cudaStream_t s = e->ctx->stream;
    int st = k->fmt == CU_CVT_S8        ? ibk_to_s8(s, k->x, k->xt, k->y, k->scale, k->n)
             : k->fmt == CU_CVT_E4M3    ? ibk_to_e4m3(s, k->x, k->xt, k->y, k->scale, k->n)
             : k->fmt == CU_CVT_S8_NHWC ? ibk_nchw_to_nhwc_s8(s, k->x, k->y, k->scale,
                                                              k->n / (k->c * k->hw), k->c, k->hw)
             : k->fmt == CU_CVT_E4M3_NHWC
                 ? ibk_nchw_to_nhwc_e4m3(s, k->x, k->y, k->scale, k->n / (k->c * k->hw), k->c,
                                         k->hw)
                 : ibk_f32_to_16(s, k->fmt == CU_CVT_BF16, k->x, k->y, k->n);
    return cu_check_rt(e, err, (cudaError_t)st, "operand conversion");
}

int cu_cvt_prepare(cu_exec *e, const cu_val *a, int fmt, float scale, cu_cvt *c, ib_err *err)
{
    *c = (cu_cvt){.src = a->dev, .src_t = cu_dtype_of(e, a), .n = ib_tensor_desc_numel(&a->desc),
                  .val = a->id, .fmt = fmt, .scale = scale};
    const bool nhwc = fmt == CU_CVT_S8_NHWC || fmt == CU_CVT_E4M3_NHWC;
    bool one_byte = fmt == CU_CVT_S8 || fmt == CU_CVT_E4M3 || nhwc;
    if (c->src_t != IBK_T_F32 && fmt != CU_CVT_S8 && fmt != CU_CVT_E4M3)
        /* the 16-bit forms read it as it is */
        return cu_fail(e, err, IB_EUNSUPPORTED,
                       "conversion of a 16-bit value other than to int8 or fp8");
    if (nhwc) {
        if (a->desc.ndim < 3 || a->desc.dims[0] < 1 || a->desc.dims[1] < 1)
            return cu_fail(e, err, IB_EUNSUPPORTED, "NHWC conversion of a tensor of rank < 3");
        c->c = a->desc.dims[1];
        c->hw = c->n / (a->desc.dims[0] * c->c);
    }
    if (e->cvt_at && e->cvt_val == (int64_t)a->id && e->cvt_fmt == fmt && e->cvt_scale == scale) {
        c->cached = true;
        c->dst = e->cvt_at;
        return IB_OK;
    }
    size_t bytes = (size_t)c->n * (one_byte ? 1 : 2);
    return cu_shared_block(e, &e->cvt, &e->cvt_bytes, bytes, &c->dst, err);
}

int cu_cvt_add(cu_exec *e, const cu_cvt *c, ib_err *err)
{
    if (c->cached)
        return IB_OK;
    cvt_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (cvt_k){.x = c->src, .y = c->dst, .n = c->n, .c = c->c, .hw = c->hw, .fmt = c->fmt,
                 .xt = c->src_t, .scale = c->scale};
    int rc = cu_add_step(e, run_cvt, k, NULL, err);
    if (rc)
        return rc;
    cu_step_kind(e, c->fmt == CU_CVT_E4M3 || c->fmt == CU_CVT_E4M3_NHWC ? "quant-f8"
                    : c->fmt == CU_CVT_S8 || c->fmt == CU_CVT_S8_NHWC     ? "quant8"
                                                                          : "cvt16");
    e->cvt_val = c->val;
    e->cvt_fmt = c->fmt;
    e->cvt_scale = c->scale;
    e->cvt_at = c->dst;
    return IB_OK;
}

/* Plan Y = alpha op(A) op(B) [+ beta Y] [+ bias] [relu | gelu] (plan_first) and append it,
 * after A's conversion step when the plan took 16-bit operands (rq, for g->a16); when the
 * epilogue did not fit in Lt a bias + Relu kernel follows. *gelu_done (may be NULL when
 * g->gelu is 0): g's Gelu ran in Lt's epilogue, else the caller appends its kernel. The
 * CUBLAS_COMPUTE_32F form with float32 operands is a precision fallback: the result is then
 * fp32-exact, which the conformance test reports. */
static int add_gemm(cu_exec *e, const mm_geom *g, const cu_cvt *rq, bool *gelu_done,
                    ib_err *err)
{
    bool has_epi = g->bias || g->relu, fused = false, gelu_fused = false;
    lt_k *k = NULL;
    /* without bias, Relu or Gelu the epilogue form is the plain one: start there */
    int rc = plan_first(e, g, has_epi, &k, &fused, &gelu_fused, err);
    if (rc)
        return rc;
    if (gelu_done)
        *gelu_done = gelu_fused;
    if (k->in16 && rq && (rc = cu_cvt_add(e, rq, err))) {
        lt_free(k);
        return rc;
    }
    bool in16 = k->in16;
    if ((rc = cu_add_step(e, run_lt, k, lt_free, err)))
        return rc;
    cu_step_kind(e, in16 ? "cublaslt-16in" : "cublaslt");
    if (fused || !has_epi)
        return IB_OK;
    ep_k *ek = ib_calloc(1, sizeof *ek);
    if (!ek)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *ek = (ep_k){.y = g->y, .bias = g->bias, .rows = g->batch * g->M, .cols = g->N,
                 .act = g->relu ? IBK_RELU : IBK_COPY};
    return cu_add_step(e, run_ep, ek, NULL, err);
}

int cu_add_gemm(cu_exec *e, const mm_geom *g, ib_err *err)
{
    mm_geom f = *g; /* callers' products have float32 operands and no Gelu */
    f.a16 = f.b16 = NULL;
    f.gelu = 0;
    return add_gemm(e, &f, NULL, NULL, err);
}

/* At fp16 / bf16, a product whose B is a constant not batched (a layer's weights) takes 16-bit
 * operands: B's 16-bit copy from the device store, A's (g->a16) written by a conversion step,
 * or A itself when a 16-bit chain holds it; a 16-bit chain's Y makes Lt write 16 bits, with
 * the bias (a constant vector, cuda_half.c) in 16 bits too. *rq is what add_gemm needs for the
 * conversion step; g is left with float32 operands only when the precision is fp32 or B is not
 * such a constant. */
static int use_16bit(cu_exec *e, const cu_val *a, const cu_val *b, const cu_val *bias,
                     const cu_val *y, mm_geom *g, cu_cvt *rq, ib_err *err)
{
    if ((e->precision != IB_PRECISION_FP16 && e->precision != IB_PRECISION_BF16) || !b->host ||
        g->sb != 0)
        return IB_OK;
    bool bf16 = e->precision == IB_PRECISION_BF16;
    int fmt = bf16 ? CU_W_BF16 : CU_W_F16;
    void *b16 = NULL;
    int rc = cu_weight_get_16(e->ctx, b->host, ib_tensor_desc_numel(&b->desc), bf16, &b16, err);
    if (rc || (rc = cu_exec_hold_weight(e, b->host, fmt, err)))
        return rc;
    if (a->h16) { /* a 16-bit chain's: read as it is */
        *rq = (cu_cvt){.cached = true, .dst = a->dev};
    } else if ((rc = cu_cvt_prepare(e, a, bf16 ? CU_CVT_BF16 : CU_CVT_F16, 1.0f, rq, err))) {
        return rc;
    }
    g->a16 = rq->dst;
    g->b16 = b16;
    g->bf16 = bf16;
    g->must16 = a->h16 || y->h16;
    if (!y->h16)
        return IB_OK;
    g->y16 = true;
    if (g->bias) { /* the Lt epilogue's bias takes Y's type */
        void *bias16 = NULL;
        if ((rc = cu_weight_get_16(e->ctx, bias->host, g->N, bf16, &bias16, err)) ||
            (rc = cu_exec_hold_weight(e, bias->host, fmt, err)))
            return rc;
        g->bias = bias16;
    }
    return IB_OK;
}

/* Batch strides of A [..., r, c] and B against the output batch dims; false
 * when an operand's batch is neither broadcast (1) nor the output's. */
static bool batch_strides(const ib_tensor_desc *a, const ib_tensor_desc *b,
                          const ib_tensor_desc *y, int64_t *batch, int64_t *sa, int64_t *sb)
{
    int64_t ba = 1, bb = 1, by = 1;
    for (int32_t d = 0; d < a->ndim - 2; d++)
        ba *= a->dims[d];
    for (int32_t d = 0; d < b->ndim - 2; d++)
        bb *= b->dims[d];
    for (int32_t d = 0; d < y->ndim - 2; d++)
        by *= y->dims[d];
    *batch = by;
    *sa = ba == 1 ? 0 : a->dims[a->ndim - 2] * a->dims[a->ndim - 1];
    *sb = bb == 1 ? 0 : b->dims[b->ndim - 2] * b->dims[b->ndim - 1];
    /* a non-broadcast operand must carry the output's batch dims exactly */
    for (int k = 0; k < 2; k++) {
        const ib_tensor_desc *t = k ? b : a;
        if ((k ? bb : ba) == 1)
            continue;
        int32_t off = (y->ndim - 2) - (t->ndim - 2);
        if (off < 0)
            return false;
        for (int32_t d = 0; d < y->ndim - 2; d++) {
            int64_t td = d - off >= 0 ? t->dims[d - off] : 1;
            if (td != y->dims[d])
                return false;
        }
    }
    return true;
}

/* ---- MatMul / FusedMatMul ----------------------------------------------------- */

typedef struct un_k2 {
    int op;
    float *y;
    int64_t n;
} un_k2;

static int run_gelu(cu_exec *e, void *p, ib_err *err)
{
    un_k2 *k = p;
    return cu_check_rt(e, err, (cudaError_t)ibk_unary(e->ctx->stream, k->op, k->y, k->y, k->n, 0, 0),
                       "gelu kernel");
}

/* Y = broadcast(c) (the C / bias term before a beta = 1 product). */
static int add_fill(cu_exec *e, const cu_val *cterm, cu_val *y, ib_err *err)
{
    ibk_view v;
    cu_bcast_view(&cterm->desc, NULL, &y->desc, &v);
    return cu_add_strided_copy(e, cterm->dev, y->dev, &v, 4, err);
}

static bool is_fused(const ib_node *n)
{
    return strcmp(n->op_type, "FusedMatMul") == 0;
}

static bool sup_matmul(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                       const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (!in[0] || !in[1] || !cu_all_f32(n, in) || in[0]->ndim < 2 || in[1]->ndim < 2)
        return false;
    const ib_tensor_desc *y = cu_out_desc(g, n, 0);
    if (y->ndim < 2)
        return false;
    if (is_fused(n)) {
        const char *act = ib_node_attr_string(n, "activation", "");
        if (act[0] && strcmp(act, "Relu") && strcmp(act, "Gelu"))
            return false;
        if (n->n_inputs > 2 && in[2] && in[2]->ndim > y->ndim)
            return false;
    }
    int64_t b, sa, sb;
    return batch_strides(in[0], in[1], y, &b, &sa, &sb);
}

static int comp_matmul(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *a = cu_in(e, n, 0), *b = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    cu_val *bias = is_fused(n) ? cu_in(e, n, 2) : NULL;
    mm_geom g;
    memset(&g, 0, sizeof g);
    g.ta = is_fused(n) && ib_node_attr_int(n, "transA", 0) != 0;
    g.tb = is_fused(n) && ib_node_attr_int(n, "transB", 0) != 0;
    g.alpha = is_fused(n) ? ib_node_attr_float(n, "alpha", 1.0f) : 1.0f;
    const ib_tensor_desc *ad = &a->desc, *bd = &b->desc;
    g.M = ad->dims[ad->ndim - (g.ta ? 1 : 2)];
    g.K = ad->dims[ad->ndim - (g.ta ? 2 : 1)];
    g.N = bd->dims[bd->ndim - (g.tb ? 2 : 1)];
    batch_strides(ad, bd, &y->desc, &g.batch, &g.sa, &g.sb);
    g.sy = g.M * g.N;
    if (g.sb == 0 && !g.ta && g.batch > 1 && g.sa != 0) { /* fold A's batch into M */
        g.M *= g.batch;
        g.batch = 1;
        g.sa = g.sy = 0;
    }
    g.a = a->dev;
    g.b = b->dev;
    g.y = y->dev;
    const char *act = is_fused(n) ? ib_node_attr_string(n, "activation", "") : "";
    bool gelu = strcmp(act, "Gelu") == 0;
    g.relu = strcmp(act, "Relu") == 0;
    int rc;
    if (bias) {
        int64_t bn = ib_tensor_desc_numel(&bias->desc);
        bool vec = bn == g.N && bias->desc.ndim >= 1 && bias->desc.dims[bias->desc.ndim - 1] == g.N;
        if (vec) {
            g.bias = bias->dev;
        } else { /* another broadcast: Y = bias first, then Y += alpha A B */
            if ((rc = add_fill(e, bias, y, err)))
                return rc;
            g.beta = 1.0f;
        }
    }
    bool tanh_form = strcmp(ib_node_attr_string(n, "approximate", "none"), "tanh") == 0;
    if (e->int8 || e->fp8) {
        bool done = false;
        int ea = gelu ? (tanh_form ? IBK_GELU_TANH : IBK_GELU_ERF) : g.relu ? IBK_RELU : IBK_COPY;
        if ((rc = cu_add_gemm_q8(e, &g, a, b, y, ea, &done, err)) || done)
            return rc;
    }
    if (gelu && (e->precision == IB_PRECISION_FP16 || e->precision == IB_PRECISION_BF16))
        g.gelu = tanh_form ? IBK_GELU_TANH : IBK_GELU_ERF; /* Lt's epilogue may take it */
    cu_cvt rq = {0};
    bool gelu_done = false;
    if ((rc = use_16bit(e, a, b, g.bias ? bias : NULL, y, &g, &rq, err)) ||
        (rc = add_gemm(e, &g, &rq, &gelu_done, err)))
        return rc;
    if (!gelu || gelu_done)
        return IB_OK;
    if (y->h16)
        return cu_add_act16(e, y, tanh_form ? IBK_GELU_TANH : IBK_GELU_ERF, err);
    un_k2 *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (un_k2){.op = tanh_form ? IBK_GELU_TANH : IBK_GELU_ERF, .y = y->dev,
                 .n = ib_tensor_desc_numel(&y->desc)};
    if ((rc = cu_add_step(e, run_gelu, k, NULL, err)))
        return rc;
    cu_step_kind(e, "gelu"); /* the profile tells it from Lt's epilogue */
    return IB_OK;
}

/* ---- Gemm -------------------------------------------------------------------------- */

static bool sup_gemm(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                     const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    return in[0] && in[1] && cu_all_f32(n, in) && in[0]->ndim == 2 && in[1]->ndim == 2 &&
           (n->n_inputs < 3 || !in[2] || in[2]->ndim <= 2);
}

static int comp_gemm(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *a = cu_in(e, n, 0), *b = cu_in(e, n, 1), *cc = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    mm_geom g;
    memset(&g, 0, sizeof g);
    g.ta = ib_node_attr_int(n, "transA", 0) != 0;
    g.tb = ib_node_attr_int(n, "transB", 0) != 0;
    g.alpha = ib_node_attr_float(n, "alpha", 1.0f);
    float beta = ib_node_attr_float(n, "beta", 1.0f);
    g.M = a->desc.dims[g.ta ? 1 : 0];
    g.K = a->desc.dims[g.ta ? 0 : 1];
    g.N = b->desc.dims[g.tb ? 0 : 1];
    g.batch = 1;
    g.a = a->dev;
    g.b = b->dev;
    g.y = y->dev;
    int rc;
    if (cc && beta != 0.0f) {
        if (beta == 1.0f && ib_tensor_desc_numel(&cc->desc) == g.N &&
            cc->desc.dims[cc->desc.ndim - 1] == g.N) {
            g.bias = cc->dev;
        } else {
            if ((rc = add_fill(e, cc, y, err)))
                return rc;
            g.beta = beta;
        }
    }
    if (e->int8 || e->fp8) {
        bool done = false;
        if ((rc = cu_add_gemm_q8(e, &g, a, b, y, IBK_COPY, &done, err)) || done)
            return rc;
    }
    cu_cvt rq = {0};
    if ((rc = use_16bit(e, a, b, g.bias ? cc : NULL, y, &g, &rq, err)))
        return rc;
    return add_gemm(e, &g, &rq, NULL, err);
}

/* ---- Attention: Y = softmax(scale Q Kt + mask) V ------------------------------------- */

typedef struct att_k {
    float *s;
    const float *mask;
    int64_t rows, cols;
    float scale;
    ibk_view mv; /* mask strides over the row dims */
    int64_t mcs;
} att_k;

static int run_att_softmax(cu_exec *e, void *p, ib_err *err)
{
    att_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_softmax(e->ctx->stream, k->s, k->s, k->rows, k->cols,
                                                k->scale, k->mask, &k->mv, k->mcs, 0),
                       "attention softmax kernel");
}

static bool sup_attn(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                     const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    if (!in[0] || !in[1] || !in[2] || !cu_all_f32(n, in))
        return false;
    int32_t r = in[0]->ndim;
    if (r < 3 || in[1]->ndim != r || in[2]->ndim != r)
        return false;
    for (int32_t d = 0; d < r - 2; d++)
        if (in[1]->dims[d] != in[0]->dims[d] || in[2]->dims[d] != in[0]->dims[d])
            return false;
    return n->n_inputs < 4 || !in[3] || in[3]->ndim <= r;
}

int cu_add_attention(cu_exec *e, const cu_attn_geom *a, ib_err *err)
{
    mm_geom g1 = {.M = a->sq, .N = a->sk, .K = a->dd, .batch = a->batch, .tb = a->k_rows,
                  .sa = a->sq * a->dd, .sb = a->dd * a->sk, .sy = a->sq * a->sk, .a = a->q,
                  .b = a->k, .y = a->scores, .alpha = 1.0f};
    int rc = cu_add_gemm(e, &g1, err);
    if (rc)
        return rc;
    att_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (att_k){.s = a->scores, .mask = a->mask, .rows = a->batch * a->sq, .cols = a->sk,
                 .scale = a->scale, .mv = a->mv, .mcs = a->mcs};
    if ((rc = cu_add_step(e, run_att_softmax, k, NULL, err)))
        return rc;
    mm_geom g2 = {.M = a->sq, .N = a->dv, .K = a->sk, .batch = a->batch, .sa = a->sq * a->sk,
                  .sb = a->sk * a->dv, .sy = a->sq * a->dv, .a = a->scores, .b = a->v,
                  .y = a->y, .alpha = 1.0f};
    return cu_add_gemm(e, &g2, err);
}

static int comp_attn(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *q = cu_in(e, n, 0), *kt = cu_in(e, n, 1), *v = cu_in(e, n, 2), *m = cu_in(e, n, 3);
    cu_val *y = cu_out(e, n, 0);
    int32_t r = q->desc.ndim;
    cu_attn_geom a = {.q = q->dev, .k = kt->dev, .v = v->dev, .y = y->dev, .batch = 1,
                      .sq = q->desc.dims[r - 2], .sk = kt->desc.dims[r - 1],
                      .dd = q->desc.dims[r - 1], .dv = v->desc.dims[r - 1],
                      .scale = ib_node_attr_float(n, "scale", 1.0f)};
    for (int32_t d = 0; d < r - 2; d++)
        a.batch *= q->desc.dims[d];
    /* The score block: the Attention nodes of a subgraph run one after another on
     * one stream, so they share one block (the largest asked for). */
    int rc = cu_att_block(e, (size_t)(a.batch * a.sq * a.sk) * sizeof(float),
                          (void **)&a.scores, err);
    if (rc)
        return rc;
    if (m) {
        ib_tensor_desc sd = q->desc;
        sd.dims[r - 1] = a.sk;
        cu_bcast_view(&m->desc, NULL, &sd, &a.mv);
        a.mask = m->dev;
        a.mcs = a.mv.sa[r - 1];
        a.mv.ndim = r - 1; /* row dims */
    }
    return cu_add_attention(e, &a, err);
}

const cu_op cu_ops_matmul[] = {
    {"", "MatMul", sup_matmul, comp_matmul},
    {"inferbench", "FusedMatMul", sup_matmul, comp_matmul},
    {"", "Gemm", sup_gemm, comp_gemm},
    {"inferbench", "Attention", sup_attn, comp_attn},
    {NULL, NULL, NULL, NULL},
};
