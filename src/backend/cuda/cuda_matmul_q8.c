/*
 * cuda_matmul_q8.c - the 8-bit products of an int8 or fp8 session on cuda (issue 24: INT8 through
 * the existing calibration on cuBLASLt IMMA, written 2026-12-05; FP8 e4m3 on Hopper through
 * cuBLASLt, written 2026-12-05 in the eighth session). Neither has run on a GPU yet.
 *
 * An int8 or fp8 session on cuda runs every op as at fp16 (e->precision FP16, e->int8 or
 * e->fp8) but for the products whose B is a constant [K, N] (or [N, K], transB) not batched and
 * whose A has a calibrated range (the bindings' range_min/max from ib_session_calibrate), when
 * A is not transposed and K and N are multiples of 4 (int8) or 16 (fp8: Lt's 8-bit float
 * operands need 16-byte leading dimensions):
 *
 *   1. A quantised per tensor into the block the products share (cu_cvt; consecutive readers
 *      of one value convert it once): int8 q = clamp(rint(x * sx), -127, 127), sx = 127 /
 *      max|range| (step kind "quant8"); fp8 q = e4m3(x * sx), sx = 448 / max|range|, saturated
 *      to +-448 ("quant-f8");
 *   2. Lt: acc [M, N] = q_A q_B^T in cuBLAS's one order for 8-bit operands of plain layouts
 *      ("TN": Lt's A transposed, its B not, so B is held as [N][K] whatever its ONNX layout),
 *      into an accumulator block the 8-bit products share: int8 with CUBLAS_COMPUTE_32I into
 *      int32 ("cublaslt-i8"); fp8 CUDA_R_8F_E4M3 with CUBLAS_COMPUTE_32F into float32
 *      ("cublaslt-f8"; Lt's default accumulation, not CUBLASLT_MATMUL_DESC_FAST_ACCUM);
 *   3. y = act(acc * alpha / (sx * sw[n]) + bias[n]) ("dequant"): the bias, Relu or Gelu of
 *      the node in the same pass.
 *
 * B is quantised once per device store on the host (cuda_quant.c), per output column: int8
 * sw[n] = 127 / max|B[:, n]| (the cpu backend's per-channel weight scales), fp8 sw[n] = 448 /
 * max|B[:, n]|. Per-column scales are why Lt's own scale pointers are not used: on Hopper they
 * are per tensor, so the dequant pass applies them. The int8 activations' scheme differs from
 * the cpu's in one way: a non-negative range is still quantised to [-127, 127] (s8 for both
 * operands, which IMMA takes), so such a value has 7 bits, not 8. Anything else (no range, a
 * runtime B, batched B, a C term) keeps the fp16 path, as do the products Lt has no algorithm
 * for, and every fp8 product on a device before sm_89 (no e4m3 matmul there). With half_chains
 * (cuda_half.c) A and Y may be a 16-bit chain's float16: step 1 reads it as such and step 3
 * writes it so.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

/* The store's 8-bit form of B: inv_s [N] floats, then q [N][K] (int8 or e4m3 bytes) at a
 * 256-byte boundary. */
typedef struct qb_src {
    const float *b;
    int64_t K, N;
    bool tb, fp8;
} qb_src;

static void qb_fill(void *user, void *dst)
{
    const qb_src *s = user;
    uint8_t *q = (uint8_t *)dst + cu_s8_offset(s->N);
    if (s->fp8)
        cu_quant_cols_e4m3(s->b, s->K, s->N, s->tb, q, dst);
    else
        cu_quant_cols_s8(s->b, s->K, s->N, s->tb, (int8_t *)q, dst);
}

typedef struct i8_k {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    const void *qa, *qb; /* Lt's A (our B, [N][K]) and B (our A, [M][K]) */
    void *acc;           /* int32, or float32 when fp8 */
    bool fp8;
} i8_k;

static void i8_free(void *p)
{
    i8_k *k = p;
    if (!k)
        return;
    cu_lt_destroy(k->op, k->la, k->lb, k->lc);
    ib_free(k);
}

static int run_i8(cu_exec *e, void *p, ib_err *err)
{
    i8_k *k = p;
    cu_ctx *c = e->ctx;
    const int32_t one = 1, zero = 0;
    const float onef = 1.0f, zerof = 0.0f; /* the scale type: CUDA_R_32I, or 32F for fp8 */
    const void *alpha = k->fp8 ? (const void *)&onef : (const void *)&one;
    const void *beta = k->fp8 ? (const void *)&zerof : (const void *)&zero;
    return cu_check_lt(e, err,
                       cublasLtMatmul(c->lt, k->op, alpha, k->qa, k->la, k->qb, k->lb, beta,
                                      k->acc, k->lc, k->acc, k->lc, &k->algo, c->lt_ws,
                                      CU_LT_WORKSPACE, c->stream),
                       k->fp8 ? "fp8 matmul" : "int8 matmul");
}

typedef struct dq_k {
    const void *acc;
    void *y;
    const float *inv_sw, *bias;
    float inv_sx;
    int64_t rows, cols;
    int act, yt;
    bool acc_f32;
} dq_k;

static int run_dq(cu_exec *e, void *p, ib_err *err)
{
    dq_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_dequant_bias_act(e->ctx->stream, k->acc, k->acc_f32, k->y,
                                                         k->yt, k->inv_sw, k->inv_sx, k->bias,
                                                         k->rows, k->cols, k->act),
                       "8-bit matmul epilogue kernel");
}

/* Plan Lt's 8-bit call into k (k->qa, qb, acc, fp8 set): IB_EUNSUPPORTED (err untouched)
 * when Lt has no algorithm for it. */
static int plan_i8(cu_exec *e, const cu_mm_geom *g, i8_k *k, ib_err *err)
{
    cu_ctx *c = e->ctx;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cudaDataType_t qt = k->fp8 ? CUDA_R_8F_E4M3 : CUDA_R_8I;
    cudaDataType_t at = k->fp8 ? CUDA_R_32F : CUDA_R_32I;
    int rc = cu_check_lt(e, err,
                         cublasLtMatmulDescCreate(&k->op,
                                                  k->fp8 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32I,
                                                  at),
                         "8-bit matmul desc create");
    if (rc)
        return rc;
    cublasLtMatmulDescSetAttribute(k->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(k->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    /* column-major: Lt A = q_B as [K, N] (ld K, transposed to N x K), Lt B = q_A as [K, M]
     * (ld K), D = acc as [N, M] (ld N), i.e. row-major [M, N] */
    if ((rc = cu_lt_layout(e, &k->la, qt, (uint64_t)g->K, (uint64_t)g->N, g->K, 1, 0, err)) ||
        (rc = cu_lt_layout(e, &k->lb, qt, (uint64_t)g->K, (uint64_t)g->M, g->K, 1, 0, err)) ||
        (rc = cu_lt_layout(e, &k->lc, at, (uint64_t)g->N, (uint64_t)g->M, g->N, 1, 0, err)))
        return rc;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    cublasStatus_t st;
    if ((rc = cu_lt_heuristic(e, k->op, k->la, k->lb, k->lc, NULL, 1, &res, &found, &st, err)))
        return rc;
    if (st != CUBLAS_STATUS_SUCCESS || found < 1)
        return IB_EUNSUPPORTED; /* the fp16 path takes it */
    k->algo = res.algo;
    /* one call on the planned pointers: an algorithm Lt lists but does not run here leaves the
     * product to the fp16 path instead of failing the session's runs */
    if (run_i8(e, k, NULL) != IB_OK || cudaStreamSynchronize(c->stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return IB_EUNSUPPORTED;
    }
    return IB_OK;
}

static bool i8_shape(const cu_exec *e, const cu_mm_geom *g, const cu_val *a, const cu_val *b)
{
    int64_t mult = e->fp8 ? 16 : 4;
    /* fp8 matmuls exist from sm_89 on: before, no e4m3 copy of the weights is made at all */
    bool fp8_here = e->ctx->sm_major * 10 + e->ctx->sm_minor >= 89;
    return (e->int8 || (e->fp8 && fp8_here)) && b->host && a->has_range && g->sb == 0 &&
           g->batch == 1 && !g->ta && g->beta == 0.0f && g->K % mult == 0 &&
           g->N % mult == 0 && g->M <= INT32_MAX && g->N <= INT32_MAX && g->K <= INT32_MAX &&
           ib_tensor_desc_numel(&b->desc) == g->K * g->N;
}

int cu_add_gemm_q8(cu_exec *e, const cu_mm_geom *g, const cu_val *a, const cu_val *b,
                   const cu_val *y, int act, bool *done, ib_err *err)
{
    *done = false;
    if (!i8_shape(e, g, a, b))
        return IB_OK;
    bool fp8 = e->fp8;
    float amax = cu_range_amax(a);
    float sx = fp8 ? cu_e4m3_scale(amax) : cu_s8_scale(amax);
    int fmt = fp8 ? (g->tb ? CU_W_E4M3_ROWS : CU_W_E4M3_COLS)
                  : (g->tb ? CU_W_S8_ROWS : CU_W_S8_COLS);
    qb_src src = {b->host, g->K, g->N, g->tb, fp8};
    size_t nbytes = cu_s8_offset(g->N) + (size_t)(g->K * g->N);
    void *wq = NULL;
    int rc = cu_weight_get_derived(e->ctx, b->host, fmt, nbytes, qb_fill, &src, &wq, err);
    if (rc || (rc = cu_exec_hold_weight(e, b->host, fmt, err)))
        return rc;
    cu_cvt cv;
    if ((rc = cu_cvt_prepare(e, a, fp8 ? CU_CVT_E4M3 : CU_CVT_S8, sx, &cv, err)))
        return rc;
    void *acc = NULL;
    /* int32 or float32: 4 bytes an element either way */
    if ((rc = cu_shared_block(e, &e->i32, &e->i32_bytes, (size_t)(g->M * g->N) * sizeof(int32_t),
                              &acc, err)))
        return rc;
    i8_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    k->qa = (const uint8_t *)wq + cu_s8_offset(g->N);
    k->qb = cv.dst;
    k->acc = acc;
    k->fp8 = fp8;
    if ((rc = plan_i8(e, g, k, err))) {
        i8_free(k);
        return rc == IB_EUNSUPPORTED ? IB_OK : rc; /* no 8-bit algorithm: the fp16 path */
    }
    dq_k *d = ib_calloc(1, sizeof *d);
    if (!d) {
        i8_free(k);
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    *d = (dq_k){.acc = k->acc, .y = g->y, .inv_sw = wq, .bias = g->bias,
                .inv_sx = g->alpha / sx, .rows = g->M, .cols = g->N, .act = act,
                .yt = cu_dtype_of(e, y), .acc_f32 = fp8};
    if ((rc = cu_cvt_add(e, &cv, err))) {
        i8_free(k);
        ib_free(d);
        return rc;
    }
    if ((rc = cu_add_step(e, run_i8, k, i8_free, err))) {
        ib_free(d);
        return rc;
    }
    cu_step_kind(e, fp8 ? "cublaslt-f8" : "cublaslt-i8");
    if ((rc = cu_add_step(e, run_dq, d, NULL, err)))
        return rc;
    cu_step_kind(e, "dequant");
    ib_prec_notes_set(&e->precs, fp8 ? IB_PRECISION_FP8 : IB_PRECISION_INT8); /* backend ABI 10 */
    *done = true;
    return IB_OK;
}
