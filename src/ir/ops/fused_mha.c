/*
 * fused_mha.c - inferbench.MultiHeadAttention (docs/ops.md): scaled dot-product attention
 * over heads packed in the last dim, what the compiler makes of BERT's head split
 * (Reshape [N,S,h,D] + Transpose) -> Attention -> head merge (Transpose + Reshape [N,S,H]):
 *
 *   Q [N, S, h*D], K [N, Sk, h*D] (not transposed), V [N, Sk, h*Dv],
 *   mask (optional, additive, broadcast to [N, h, S, Sk]); attributes heads (h), scale (1)
 *   Y[n, i, c*Dv + e] = sum_j softmax_j(scale * sum_d Q[n,i,c*D+d] K[n,j,c*D+d]
 *                                       + mask[n,c,i,j]) * V[n, j, c*Dv + e]
 *
 * The reference kernel computes the scores and the softmax in double.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

typedef struct mha {
    int64_t N, S, Sk, h, D, Dv;
} mha;

static int mha_shape(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *const *in,
                     uint32_t n_in, mha *a, ib_tensor_desc *y)
{
    const ib_tensor_desc *q = in[0], *k = in[1], *v = in[2], *m = ib_op_in(in, n_in, 3);
    a->h = ib_op_attr_i(ctx, "heads", 0);
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3)
        return IB_OP_BAD(ctx, err, "Q, K and V must be rank 3 [N, S, heads * D]");
    if (a->h < 1 || q->dims[2] % a->h || v->dims[2] % a->h)
        return IB_OP_BAD(ctx, err, "heads=%lld must be >= 1 and divide the last dims of Q (%lld) "
                                   "and V (%lld)",
                         (long long)a->h, (long long)q->dims[2], (long long)v->dims[2]);
    a->N = q->dims[0];
    a->S = q->dims[1];
    a->Sk = k->dims[1];
    a->D = q->dims[2] / a->h;
    a->Dv = v->dims[2] / a->h;
    if (k->dims[0] != a->N || v->dims[0] != a->N || k->dims[2] != q->dims[2] ||
        v->dims[1] != a->Sk)
        return IB_OP_BAD(ctx, err, "K must be [N, Sk, %lld] and V [N, Sk, heads * Dv] for Q "
                                   "[N, S, %lld]",
                         (long long)q->dims[2], (long long)q->dims[2]);
    if (m) {
        const int64_t want[4] = {a->N, a->h, a->S, a->Sk};
        if (m->ndim > 4)
            return IB_OP_BAD(ctx, err, "mask rank %d > 4", m->ndim);
        for (int i = 0; i < m->ndim; i++) {
            int j = i + 4 - m->ndim;
            if (m->dims[i] != 1 && m->dims[i] != want[j] && want[j] >= 0 && m->dims[i] >= 0)
                return IB_OP_BAD(ctx, err, "mask dim %d (%lld) does not broadcast to %lld", i,
                                 (long long)m->dims[i], (long long)want[j]);
        }
    }
    *y = *q;
    y->dims[2] = a->h * a->Dv;
    return IB_OK;
}

static int infer_mha(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    mha a;
    return mha_shape(ctx, err, in, n_in, &a, &out[0]);
}

static size_t scratch_mha(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                          const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    mha a;
    ib_tensor_desc y;
    if (mha_shape(ctx, NULL, in, n_in, &a, &y)) return 0;
    return (size_t)a.Sk * sizeof(double);
}

static int k_mha(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor_desc *ds[4] = {NULL, NULL, NULL, NULL};
    for (uint32_t i = 0; i < n_in && i < 4; i++) {
        ds[i] = in[i] ? &in[i]->desc : NULL;
        if (in[i] && in[i]->desc.dtype != IB_DTYPE_FLOAT32)
            return IB_OP_UNSUP(ctx, err, "input %u dtype %s is not supported (float32 only)", i,
                               ib_dtype_name(in[i]->desc.dtype));
    }
    mha a;
    ib_tensor_desc yd;
    int rc = mha_shape(ctx, err, ds, n_in, &a, &yd);
    if (rc) return rc;
    double scale = (double)ib_op_attr_f(ctx, "scale", 1.0f), *p = ctx->scratch;
    const float *Q = in[0]->data, *K = in[1]->data, *V = in[2]->data;
    const ib_tensor *mt = ib_op_cin(in, n_in, 3);
    const float *M = mt ? mt->data : NULL;
    float *Y = out[0]->data;
    int64_t H = a.h * a.D, Hv = a.h * a.Dv;
    /* mask strides of [N, h, S, Sk] (0 on broadcast dims) */
    int64_t ms[4] = {0, 0, 0, 0};
    if (mt)
        ib_tensor_desc_bcast_strides(&mt->desc, 4, ms);
    for (int64_t n = 0; n < a.N; n++)
        for (int64_t c = 0; c < a.h; c++)
            for (int64_t i = 0; i < a.S; i++) {
                const float *q = Q + (n * a.S + i) * H + c * a.D;
                double mx = -IB_INF, sum = 0;
                for (int64_t j = 0; j < a.Sk; j++) {
                    const float *k = K + (n * a.Sk + j) * H + c * a.D;
                    double s = 0;
                    for (int64_t d = 0; d < a.D; d++)
                        s += (double)q[d] * (double)k[d];
                    s *= scale;
                    if (M)
                        s += (double)M[n * ms[0] + c * ms[1] + i * ms[2] + j * ms[3]];
                    p[j] = s;
                    mx = s > mx ? s : mx;
                }
                for (int64_t j = 0; j < a.Sk; j++) {
                    p[j] = exp(p[j] - mx);
                    sum += p[j];
                }
                float *y = Y + (n * a.S + i) * Hv + c * a.Dv;
                for (int64_t e = 0; e < a.Dv; e++) {
                    double t = 0;
                    for (int64_t j = 0; j < a.Sk; j++)
                        t += p[j] * (double)V[(n * a.Sk + j) * Hv + c * a.Dv + e];
                    y[e] = (float)(t / sum);
                }
            }
    return IB_OK;
}

static double flops_mha(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                        const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    mha a;
    ib_tensor_desc y;
    if (mha_shape(ctx, NULL, in, n_in, &a, &y)) return 0;
    return 2.0 * (double)(a.N * a.h) * (double)a.S * (double)a.Sk * (double)(a.D + a.Dv);
}

static const ib_op_def defs[] = {
    {"inferbench", "MultiHeadAttention", 1, 0, infer_mha, k_mha, scratch_mha, flops_mha,
     IB_DT_F32, 3, 4, 1, 1, 0, 0},
};

const ib_op_family ib_ops_mha = {"mha", defs, IB_ARRAY_LEN(defs)};
