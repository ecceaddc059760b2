/*
 * fused.c - the internal ops of domain "inferbench" that the compiler's
 * fusion passes create (attributes in docs/ops.md):
 *
 *   FusedConv    Y = act(Conv(X, W) + B + Z)      (BatchNorm already folded into W, B)
 *   FusedMatMul  Y = act(alpha * A' B' + bias)    (MatMul or Gemm, batch-broadcast)
 *   Attention    Y = softmax(scale * Q Kt + mask) V
 *
 * inferbench.LayerNorm lives in norm.c and inferbench.Gelu in unary.c. The
 * kernels reuse the Conv/GEMM cores and apply the epilogue in double.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/conv.h"
#include "ir/ops/gemm.h"

static int check_f32(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *const *in, uint32_t n_in)
{
    for (uint32_t i = 0; i < n_in; i++)
        if (in[i] && in[i]->desc.dtype != IB_DTYPE_FLOAT32)
            return IB_OP_UNSUP(ctx, err, "input %u dtype %s is not supported (float32 only)", i,
                               ib_dtype_name(in[i]->desc.dtype));
    return IB_OK;
}

/* ---- FusedConv: inputs X, W, B (optional), Z (optional, Y's shape) ----------------- */

#define CONV_ACTS ((1u << IB_EP_NONE) | (1u << IB_EP_RELU) | (1u << IB_EP_LEAKY) | (1u << IB_EP_CLIP))

static int infer_fconv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    ib_op_epilogue e;
    ib_conv_geom g;
    int rc = ib_op_read_epilogue(ctx, err, CONV_ACTS, &e);
    if (!rc) rc = ib_conv_geom_init(ctx, err, in[0], in[1], &g);
    if (rc) return rc;
    ib_tensor_desc y = {in[0]->dtype, in[0]->ndim, {g.N, g.M}};
    for (int32_t i = 0; i < g.w.nsp; i++)
        y.dims[i + 2] = g.w.out[i];
    const ib_tensor_desc *b = ib_op_in(in, n_in, 2), *z = ib_op_in(in, n_in, 3);
    if (b && (b->ndim != 1 || b->dims[0] != g.M))
        return IB_OP_BAD(ctx, err, "B must be 1-D with %lld values", (long long)g.M);
    if (z && z->ndim != y.ndim) return IB_OP_BAD(ctx, err, "Z must have Y's shape");
    for (int32_t i = 0; z && i < y.ndim; i++)
        if (z->dims[i] >= 0 && y.dims[i] >= 0 && z->dims[i] != y.dims[i])
            return IB_OP_BAD(ctx, err, "Z must have Y's shape (dim %d: %lld vs %lld)", i,
                             (long long)z->dims[i], (long long)y.dims[i]);
    out[0] = y;
    return IB_OK;
}

static size_t scratch_fconv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                            const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    ib_conv_geom g;
    return ib_conv_geom_init(ctx, NULL, in[0], in[1], &g) ? 0 : ib_conv_scratch(&g);
}

static double flops_fconv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                          const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    double per_out = 1;
    for (int32_t i = 1; i < in[1]->ndim; i++)
        per_out *= (double)in[1]->dims[i];
    return 2.0 * per_out * (double)ib_tensor_desc_numel(&out[0]);
}

static int k_fconv(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    ib_op_epilogue e;
    ib_conv_geom g;
    int rc = check_f32(ctx, err, in, n_in);
    if (!rc) rc = ib_op_read_epilogue(ctx, err, CONV_ACTS, &e);
    if (!rc) rc = ib_conv_geom_init(ctx, err, &in[0]->desc, &in[1]->desc, &g);
    if (rc) return rc;
    const ib_tensor *b = ib_op_cin(in, n_in, 2), *z = ib_op_cin(in, n_in, 3);
    float *y = out[0]->data;
    ib_conv_run(&g, in[0]->data, in[1]->data, b ? b->data : NULL, y, ctx->scratch);
    int64_t n = ib_tensor_desc_numel(&out[0]->desc);
    const float *zs = z ? z->data : NULL;
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)ib_op_ep_apply(&e, (double)y[i] + (zs ? (double)zs[i] : 0.0));
    return IB_OK;
}

/* ---- FusedMatMul: inputs A, B, bias (optional, broadcast to Y) ---------------------- */

#define MM_ACTS ((1u << IB_EP_NONE) | (1u << IB_EP_RELU) | (1u << IB_EP_GELU))

typedef struct fmm {
    int64_t M, N, K;
    bool ta, tb;
    ib_tensor_desc ab, bb, batch, y;
} fmm;

/* Like MatMul (rank >= 2 operands) with transA/transB on the last two dims. */
static int fmm_shape(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *a,
                     const ib_tensor_desc *b, fmm *f)
{
    memset(f, 0, sizeof *f);
    if (a->ndim < 2 || b->ndim < 2)
        return IB_OP_BAD(ctx, err, "A and B must have rank >= 2 (got %d and %d)", a->ndim, b->ndim);
    f->ta = ib_op_attr_i(ctx, "transA", 0) != 0;
    f->tb = ib_op_attr_i(ctx, "transB", 0) != 0;
    int64_t a0 = a->dims[a->ndim - 2], a1 = a->dims[a->ndim - 1];
    int64_t b0 = b->dims[b->ndim - 2], b1 = b->dims[b->ndim - 1];
    f->M = f->ta ? a1 : a0;
    f->K = f->ta ? a0 : a1;
    f->N = f->tb ? b0 : b1;
    int64_t kb = f->tb ? b1 : b0;
    if (f->K >= 0 && kb >= 0 && f->K != kb)
        return IB_OP_BAD(ctx, err, "inner dimensions differ: %lld vs %lld", (long long)f->K,
                         (long long)kb);
    f->ab.dtype = f->bb.dtype = a->dtype;
    f->ab.ndim = a->ndim - 2;
    f->bb.ndim = b->ndim - 2;
    memcpy(f->ab.dims, a->dims, sizeof(int64_t) * (size_t)f->ab.ndim);
    memcpy(f->bb.dims, b->dims, sizeof(int64_t) * (size_t)f->bb.ndim);
    int rc = ib_op_broadcast(ctx, err, &f->ab, &f->bb, &f->batch);
    if (rc) return rc;
    f->y = f->batch;
    f->y.dtype = a->dtype;
    f->y.dims[f->y.ndim++] = f->M;
    f->y.dims[f->y.ndim++] = f->N;
    return IB_OK;
}

static int infer_fmm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    ib_op_epilogue e;
    fmm f;
    int rc = ib_op_read_epilogue(ctx, err, MM_ACTS, &e);
    if (!rc) rc = fmm_shape(ctx, err, in[0], in[1], &f);
    if (rc) return rc;
    const ib_tensor_desc *bias = ib_op_in(in, n_in, 2);
    if (bias) {
        ib_tensor_desc t;
        if ((rc = ib_op_broadcast(ctx, err, &f.y, bias, &t))) return rc;
        if (!ib_tensor_desc_equal(&t, &f.y) && ib_op_known(&f.y))
            return IB_OP_BAD(ctx, err, "bias does not broadcast to the output");
    }
    out[0] = f.y;
    return IB_OK;
}

static size_t scratch_fmm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                          const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    fmm f;
    return fmm_shape(ctx, NULL, in[0], in[1], &f) ? 0 : ib_ref_gemm_scratch(f.K);
}

static double flops_fmm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                        const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    fmm f;
    if (fmm_shape(ctx, NULL, in[0], in[1], &f)) return 0;
    return 2.0 * (double)f.K * (double)ib_tensor_desc_numel(&out[0]);
}

static int k_fmm(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    ib_op_epilogue e;
    fmm f;
    int rc = check_f32(ctx, err, in, n_in);
    if (!rc) rc = ib_op_read_epilogue(ctx, err, MM_ACTS, &e);
    if (!rc) rc = fmm_shape(ctx, err, &in[0]->desc, &in[1]->desc, &f);
    if (rc) return rc;
    float alpha = ib_op_attr_f(ctx, "alpha", 1.0f);
    ib_tensor *y = out[0];
    const ib_tensor *bias = ib_op_cin(in, n_in, 2);
    if (bias) /* Y = broadcast(bias), then Y += alpha A'B' */
        ib_op_bcast_copy(bias, y);
    const ib_tensor_desc *ins[2] = {&f.ab, &f.bb};
    ib_bcast it;
    ib_bcast_init(&it, &f.batch, ins, 2);
    const float *A = in[0]->data, *B = in[1]->data;
    float *Y = y->data;
    int64_t sa = f.M * f.K, sb = f.K * f.N, sy = f.M * f.N;
    int64_t lda = f.ta ? f.M : f.K, ldb = f.tb ? f.K : f.N;
    for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it))
        for (int64_t i = 0; i < it.inner; i++) {
            const float *a = A + (it.off[1] + i * it.ist[1]) * sa;
            const float *b = B + (it.off[2] + i * it.ist[2]) * sb;
            float *c = Y + (it.off[0] + i * it.ist[0]) * sy;
            ib_ref_gemm(f.M, f.N, f.K, alpha, a, f.ta ? 1 : lda, f.ta ? lda : 1, b, f.tb ? 1 : ldb,
                        f.tb ? ldb : 1, bias ? 1.0f : 0.0f, c, f.N, ctx->scratch);
        }
    if (e.act != IB_EP_NONE) {
        int64_t n = ib_tensor_desc_numel(&y->desc);
        for (int64_t i = 0; i < n; i++)
            Y[i] = (float)ib_op_ep_apply(&e, (double)Y[i]);
    }
    return IB_OK;
}

/* ---- Attention: Q [..., Sq, D], Kt [..., D, Sk] (K already transposed, as
 * the MatMul(Q, Kt) of the pattern reads it), V [..., Sk, Dv], mask
 * (optional, additive, broadcast to [..., Sq, Sk]); scale (default 1).
 * Leading dims must match. ---- */

typedef struct attn {
    int64_t lead, Sq, Sk, D, Dv;
    ib_tensor_desc scores; /* [..., Sq, Sk] */
} attn;

static int attn_shape(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *const *in,
                      uint32_t n_in, attn *a, ib_tensor_desc *y)
{
    const ib_tensor_desc *q = in[0], *k = in[1], *v = in[2];
    int32_t r = q->ndim;
    if (r < 2 || k->ndim != r || v->ndim != r)
        return IB_OP_BAD(ctx, err, "Q, K and V must have the same rank >= 2");
    a->lead = 1;
    for (int32_t d = 0; d < r - 2; d++) {
        if (k->dims[d] != q->dims[d] || v->dims[d] != q->dims[d])
            return IB_OP_BAD(ctx, err, "Q, K and V leading dim %d differ", d);
        a->lead *= q->dims[d];
    }
    a->Sq = q->dims[r - 2];
    a->D = q->dims[r - 1];
    a->Sk = k->dims[r - 1];
    int64_t kd = k->dims[r - 2];
    a->Dv = v->dims[r - 1];
    if (kd != a->D || v->dims[r - 2] != a->Sk)
        return IB_OP_BAD(ctx, err, "Kt must be [..., %lld, Sk] and V [..., Sk, Dv]",
                         (long long)a->D);
    a->scores = *q;
    a->scores.dims[r - 1] = a->Sk;
    const ib_tensor_desc *m = ib_op_in(in, n_in, 3);
    if (m) {
        ib_tensor_desc t;
        char ms[128], ss[128];
        if (ib_op_broadcast(ctx, NULL, &a->scores, m, &t) ||
            (!ib_tensor_desc_equal(&t, &a->scores) && ib_op_known(&a->scores)))
            return IB_OP_BAD(ctx, err, "mask %s does not broadcast to the scores %s",
                             ib_tensor_desc_str(m, ms, sizeof ms),
                             ib_tensor_desc_str(&a->scores, ss, sizeof ss));
    }
    *y = *q;
    y->dims[r - 1] = a->Dv;
    return IB_OK;
}

static int infer_attn(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    attn a;
    return attn_shape(ctx, err, in, n_in, &a, &out[0]);
}

static size_t scratch_attn(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                           const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    attn a;
    ib_tensor_desc y;
    if (attn_shape(ctx, NULL, in, n_in, &a, &y)) return 0;
    size_t s = (size_t)(a.lead * a.Sq * a.Sk) * sizeof(float);
    return ((s + 63) & ~(size_t)63) + ib_ref_gemm_scratch(IB_MAX(a.D, a.Sk));
}

static int k_attn(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor_desc *ds[4] = {NULL, NULL, NULL, NULL};
    for (uint32_t i = 0; i < n_in && i < 4; i++)
        ds[i] = in[i] ? &in[i]->desc : NULL;
    attn a;
    ib_tensor_desc yd;
    int rc = check_f32(ctx, err, in, n_in);
    if (!rc) rc = attn_shape(ctx, err, ds, n_in, &a, &yd);
    if (rc) return rc;
    double scale = (double)ib_op_attr_f(ctx, "scale", 1.0f);
    float *S = ctx->scratch;
    size_t sb = (size_t)(a.lead * a.Sq * a.Sk) * sizeof(float);
    void *gs = (char *)ctx->scratch + ((sb + 63) & ~(size_t)63);
    const float *Q = in[0]->data, *K = in[1]->data, *V = in[2]->data;
    for (int64_t l = 0; l < a.lead; l++) { /* S = scale * Q K' */
        const float *q = Q + l * a.Sq * a.D, *k = K + l * a.Sk * a.D;
        ib_ref_gemm(a.Sq, a.Sk, a.D, (float)scale, q, a.D, 1, k, a.Sk, 1, 0.0f, S + l * a.Sq * a.Sk,
                    a.Sk, gs);
    }
    const ib_tensor *m = ib_op_cin(in, n_in, 3);
    if (m) { /* S += mask (broadcast) */
        ib_tensor st = {a.scores, S, sb, false};
        const ib_tensor_desc *ins[2] = {&a.scores, &m->desc};
        ib_bcast it;
        ib_bcast_init(&it, &st.desc, ins, 2);
        const float *mk = m->data;
        for (int64_t o = 0; o < it.outer; o++, ib_bcast_next(&it))
            for (int64_t i = 0; i < it.inner; i++)
                S[it.off[0] + i * it.ist[0]] += mk[it.off[2] + i * it.ist[2]];
    }
    int64_t rows = a.lead * a.Sq;
    for (int64_t r = 0; r < rows; r++) { /* row softmax in double */
        float *s = S + r * a.Sk;
        double mx = -IB_INF, sum = 0;
        for (int64_t j = 0; j < a.Sk; j++)
            mx = (double)s[j] > mx ? (double)s[j] : mx;
        for (int64_t j = 0; j < a.Sk; j++)
            sum += exp((double)s[j] - mx);
        for (int64_t j = 0; j < a.Sk; j++)
            s[j] = (float)(exp((double)s[j] - mx) / sum);
    }
    float *Y = out[0]->data;
    for (int64_t l = 0; l < a.lead; l++) /* Y = P V */
        ib_ref_gemm(a.Sq, a.Dv, a.Sk, 1.0f, S + l * a.Sq * a.Sk, a.Sk, 1, V + l * a.Sk * a.Dv, a.Dv,
                    1, 0.0f, Y + l * a.Sq * a.Dv, a.Dv, gs);
    return IB_OK;
}

static double flops_attn(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                         const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    attn a;
    ib_tensor_desc y;
    if (attn_shape(ctx, NULL, in, n_in, &a, &y)) return 0;
    return 2.0 * (double)a.lead * (double)a.Sq * (double)a.Sk * (double)(a.D + a.Dv);
}

#define IBD "inferbench"

static const ib_op_def defs[] = {
    {IBD, "FusedConv", 1, 0, infer_fconv, k_fconv, scratch_fconv, flops_fconv, IB_DT_F32, 2, 4, 1,
     1, 0, 0},
    {IBD, "FusedMatMul", 1, 0, infer_fmm, k_fmm, scratch_fmm, flops_fmm, IB_DT_F32, 2, 3, 1, 1, 0,
     0},
    {IBD, "Attention", 1, 0, infer_attn, k_attn, scratch_attn, flops_attn, IB_DT_F32, 3, 4, 1, 1, 0,
     0},
};

const ib_op_family ib_ops_fused = {"fused", defs, IB_ARRAY_LEN(defs)};
