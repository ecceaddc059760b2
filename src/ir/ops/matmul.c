/*
 * matmul.c - MatMul (numpy matmul: 1-D operands promoted, batch dims
 * broadcast) and Gemm (Y = alpha * A' B' + beta * C, transA/transB, C
 * unidirectionally broadcast, optional from opset 11). float32, through the
 * double-accumulating reference GEMM (gemm.c).
 */
#include <string.h>

#include "ir/ops/gemm.h"
#include "ir/ops/ops_util.h"

/* MatMul shapes: a [..., M, K] x b [..., K, N] -> [..., M, N] (with 1-D
 * promotion: a 1-D a is [1, K] with M dropped, a 1-D b [K, 1] with N dropped). */
typedef struct mm_shape {
    int64_t M, N, K;
    ib_tensor_desc batch; /* broadcast batch dims */
    ib_tensor_desc abatch, bbatch;
} mm_shape;

static int mm_shapes(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *a,
                     const ib_tensor_desc *b, mm_shape *s, ib_tensor_desc *out)
{
    if (a->ndim < 1 || b->ndim < 1)
        return IB_OP_BAD(ctx, err, "inputs must have rank >= 1 (got %d and %d)", a->ndim, b->ndim);
    memset(s, 0, sizeof *s);
    s->M = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1;
    s->K = a->dims[a->ndim - 1];
    int64_t kb = b->ndim >= 2 ? b->dims[b->ndim - 2] : b->dims[0];
    s->N = b->ndim >= 2 ? b->dims[b->ndim - 1] : 1;
    if (s->K >= 0 && kb >= 0 && s->K != kb) {
        char sa[128], sb[128];
        return IB_OP_BAD(ctx, err, "inner dimensions differ: %s x %s",
                         ib_tensor_desc_str(a, sa, sizeof sa),
                         ib_tensor_desc_str(b, sb, sizeof sb));
    }
    if (s->K < 0) s->K = kb;
    s->abatch.dtype = s->bbatch.dtype = a->dtype;
    s->abatch.ndim = a->ndim > 2 ? a->ndim - 2 : 0;
    s->bbatch.ndim = b->ndim > 2 ? b->ndim - 2 : 0;
    memcpy(s->abatch.dims, a->dims, sizeof(int64_t) * (size_t)s->abatch.ndim);
    memcpy(s->bbatch.dims, b->dims, sizeof(int64_t) * (size_t)s->bbatch.ndim);
    int rc = ib_op_broadcast(ctx, err, &s->abatch, &s->bbatch, &s->batch);
    if (rc) return rc;
    ib_tensor_desc o = s->batch;
    o.dtype = a->dtype;
    if (a->ndim >= 2) o.dims[o.ndim++] = s->M;
    if (b->ndim >= 2) o.dims[o.ndim++] = s->N;
    if (o.ndim > IB_MAX_DIMS)
        return IB_OP_BAD(ctx, err, "output rank %d exceeds %d", o.ndim, IB_MAX_DIMS);
    *out = o;
    return IB_OK;
}

static int infer_matmul(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    if (in[0]->dtype != in[1]->dtype)
        return IB_OP_BAD(ctx, err, "input types differ: %s and %s", ib_dtype_name(in[0]->dtype),
                         ib_dtype_name(in[1]->dtype));
    mm_shape s;
    return mm_shapes(ctx, err, in[0], in[1], &s, &out[0]);
}

static size_t scratch_matmul(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                             const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    return ib_ref_gemm_scratch(in[0]->dims[in[0]->ndim - 1]);
}

static double flops_matmul(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                           const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    double k = (double)in[0]->dims[in[0]->ndim - 1];
    return 2.0 * k * (double)ib_tensor_desc_numel(&out[0]);
}

static int k_matmul(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    mm_shape s;
    ib_tensor_desc od;
    int rc = mm_shapes(ctx, err, &in[0]->desc, &in[1]->desc, &s, &od);
    if (rc) return rc;
    if (in[0]->desc.dtype != IB_DTYPE_FLOAT32 || in[1]->desc.dtype != IB_DTYPE_FLOAT32)
        return IB_OP_UNSUP(ctx, err, "only float32 inputs are supported");
    /* iterate over the broadcast batch with a 3-operand iterator on the batch dims */
    const ib_tensor_desc *ins[2] = {&s.abatch, &s.bbatch};
    ib_bcast it;
    ib_tensor_desc bd = s.batch;
    ib_bcast_init(&it, &bd, ins, 2);
    const float *A = in[0]->data, *B = in[1]->data;
    float *Y = out[0]->data;
    int64_t sa = s.M * s.K, sb = s.K * s.N, sy = s.M * s.N;
    for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it))
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t ia = it.off[1] + i * it.ist[1], ibb = it.off[2] + i * it.ist[2],
                    iy = it.off[0] + i * it.ist[0];
            ib_ref_gemm(s.M, s.N, s.K, 1.0f, A + ia * sa, s.K, 1, B + ibb * sb, s.N, 1, 0.0f,
                        Y + iy * sy, s.N, ctx->scratch);
        }
    return IB_OK;
}

/* ---- Gemm ----------------------------------------------------------------- */

static int gemm_shape(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *a,
                      const ib_tensor_desc *b, int64_t *M, int64_t *N, int64_t *K)
{
    if (a->ndim != 2 || b->ndim != 2)
        return IB_OP_BAD(ctx, err, "A and B must be 2-D (got rank %d and %d)", a->ndim, b->ndim);
    bool ta = ib_op_attr_i(ctx, "transA", 0) != 0, tb = ib_op_attr_i(ctx, "transB", 0) != 0;
    *M = ta ? a->dims[1] : a->dims[0];
    *K = ta ? a->dims[0] : a->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0];
    *N = tb ? b->dims[0] : b->dims[1];
    if (*K >= 0 && kb >= 0 && *K != kb)
        return IB_OP_BAD(ctx, err, "inner dimensions differ: K = %lld (A) vs %lld (B)",
                         (long long)*K, (long long)kb);
    return IB_OK;
}

static int infer_gemm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int64_t M, N, K;
    int rc = gemm_shape(ctx, err, in[0], in[1], &M, &N, &K);
    if (rc) return rc;
    ib_tensor_desc y = {in[0]->dtype, 2, {M, N}};
    const ib_tensor_desc *c = ib_op_in(in, n_in, 2);
    if (c) {
        ib_tensor_desc t;
        if ((rc = ib_op_broadcast(ctx, err, &y, c, &t))) return rc;
        if (!ib_tensor_desc_equal(&t, &y) && ib_op_known(&y))
            return IB_OP_BAD(ctx, err, "C does not broadcast to [M, N] = [%lld, %lld]",
                             (long long)M, (long long)N);
    } else if (ib_op_opset(ctx) < 11) {
        return IB_OP_BAD(ctx, err, "input C is required before opset 11");
    }
    out[0] = y;
    return IB_OK;
}

static size_t scratch_gemm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                           const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    bool ta = ib_op_attr_i(ctx, "transA", 0) != 0;
    return ib_ref_gemm_scratch(ta ? in[0]->dims[0] : in[0]->dims[1]);
}

static double flops_gemm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                         const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    bool ta = ib_op_attr_i(ctx, "transA", 0) != 0;
    double k = (double)(ta ? in[0]->dims[0] : in[0]->dims[1]);
    return 2.0 * k * (double)ib_tensor_desc_numel(&out[0]);
}

static int k_gemm(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    int64_t M, N, K;
    int rc = gemm_shape(ctx, err, &in[0]->desc, &in[1]->desc, &M, &N, &K);
    if (rc) return rc;
    for (uint32_t i = 0; i < n_in && i < 3; i++)
        if (in[i] && in[i]->desc.dtype != IB_DTYPE_FLOAT32)
            return IB_OP_UNSUP(ctx, err, "only float32 inputs are supported");
    bool ta = ib_op_attr_i(ctx, "transA", 0) != 0, tb = ib_op_attr_i(ctx, "transB", 0) != 0;
    float alpha = ib_op_attr_f(ctx, "alpha", 1.0f), beta = ib_op_attr_f(ctx, "beta", 1.0f);
    float *Y = out[0]->data;
    const ib_tensor *c = ib_op_cin(in, n_in, 2);
    bool use_c = c && beta != 0.0f;
    if (use_c) {
        /* Y = beta * broadcast(C), then Y += alpha * A'B' */
        const ib_tensor_desc *ins[1] = {&c->desc};
        ib_bcast it;
        ib_bcast_init(&it, &out[0]->desc, ins, 1);
        const float *pc = c->data;
        for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it))
            for (int64_t i = 0; i < it.inner; i++)
                Y[it.off[0] + i * it.ist[0]] =
                    (float)((double)beta * (double)pc[it.off[1] + i * it.ist[1]]);
    }
    const float *A = in[0]->data, *B = in[1]->data;
    int64_t lda = in[0]->desc.dims[1], ldb = in[1]->desc.dims[1];
    ib_ref_gemm(M, N, K, alpha, A, ta ? 1 : lda, ta ? lda : 1, B, tb ? 1 : ldb, tb ? ldb : 1,
                use_c ? 1.0f : 0.0f, Y, N, ctx->scratch);
    return IB_OK;
}

static const ib_op_def defs[] = {
    {"", "MatMul", 1, 0, infer_matmul, k_matmul, scratch_matmul, flops_matmul, IB_DT_F32, 2, 2, 1,
     1, 0, 0},
    {"", "Gemm", 7, 0, infer_gemm, k_gemm, scratch_gemm, flops_gemm, IB_DT_F32, 2, 3, 1, 1, 0, 0},
};

const ib_op_family ib_ops_matmul = {"matmul", defs, IB_ARRAY_LEN(defs)};
