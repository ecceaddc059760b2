/*
 * cuda_attn.c - inferbench.MultiHeadAttention on cuda (issue 24: BERT's attention).
 *
 * The compiler makes this op of BERT's head split -> Attention -> head merge for backends
 * declaring IB_BACKEND_CAP_MHA (runtime/compile_fuse_attn.c); the op's semantics are in
 * src/ir/ops/fused_mha.c. Q [N, S, h*D], K [N, Sk, h*D], V [N, Sk, h*Dv], the mask
 * broadcast to [N, h, S, Sk], Y [N, S, h*Dv], all float32 in device memory.
 *
 * fp16 / bf16: three pack kernels write Q, K and V as 16-bit [N*h, L, D] padded to
 * multiples of 16, then one kernel on the tensor cores (kernels/ib_attn.cu) computes
 * scores, softmax and P V per 16 queries in shared memory and writes Y with the heads
 * packed: the score matrix (BERT-Large: 9.4 MB a sample at fp32) never reaches device
 * memory, and the four head transposes of the unfused graph are gone.
 * fp32 (and shapes whose scores do not fit in shared memory): the heads are split by strided
 * copies, then the unfused path's two cuBLASLt products and masked softmax, then the merge,
 * the same arithmetic as the 4-D Attention op (exact fp32 compute, no TF32).
 *
 * Not yet run on a GPU (written 2026-12-05); the backend suite's MultiHeadAttention cases
 * (cuda_ops_matmul) check both paths on a device.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

typedef struct mha_dims {
    int64_t N, h, S, Sk, D, Dv;
    int64_t ms[4]; /* mask strides over [N, h, S, Sk], 0 where broadcast */
} mha_dims;

static void dims_of(const cu_val *q, const cu_val *k, const cu_val *v, const cu_val *m, int64_t h,
                    mha_dims *d)
{
    memset(d, 0, sizeof *d);
    d->N = q->desc.dims[0];
    d->h = h;
    d->S = q->desc.dims[1];
    d->Sk = k->desc.dims[1];
    d->D = q->desc.dims[2] / h;
    d->Dv = v->desc.dims[2] / h;
    if (m)
        ib_tensor_desc_bcast_strides(&m->desc, 4, d->ms);
}

static int64_t up16(int64_t x)
{
    return (x + 15) / 16 * 16;
}

/* ---- fp16 / bf16: pack, then the fused kernel --------------------------------------- */

typedef struct pack_k {
    const void *x;
    void *y;
    int64_t N, L, h, D, Lp, Dp;
    int bf16, xt;
} pack_k;

static int run_pack(cu_exec *e, void *p, ib_err *err)
{
    pack_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_mha_pack(e->ctx->stream, k->bf16, k->x, k->xt, k->y, k->N,
                                                 k->L, k->h, k->D, k->Lp, k->Dp),
                       "attention pack kernel");
}

typedef struct fused_k {
    const void *q, *k, *v;
    const float *mask;
    void *y;
    ibk_mha a;
    int bf16, warps, yt;
    size_t smem;
} fused_k;

static int run_fused(cu_exec *e, void *p, ib_err *err)
{
    fused_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_mha_run(e->ctx->stream, k->bf16, k->q, k->k, k->v,
                                                k->mask, k->y, k->yt, &k->a, k->warps, k->smem),
                       "fused attention kernel");
}

static int add_pack(cu_exec *e, const cu_val *x, void *y, int64_t N, int64_t L, int64_t h,
                    int64_t D, int bf16, ib_err *err)
{
    pack_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (pack_k){.x = x->dev, .y = y, .N = N, .L = L, .h = h, .D = D, .Lp = up16(L),
                  .Dp = up16(D), .bf16 = bf16, .xt = cu_dtype_of(e, x)};
    return cu_add_step(e, run_pack, k, NULL, err);
}

/* The fused kernel's shared memory per warp (kernels/ib_attn.cu warp_bytes) within 96 KB, which
 * every device of compute capability 8.x / 9.0 gives a block: then a 16-bit chain may feed it
 * (cuda_half.c), since the fused path is certain to take the node. */
bool cu_mha_fused_fits(int64_t Sk, int64_t Dv)
{
    return Sk > 0 && Dv > 0 && (size_t)16 * (size_t)up16(Sk) * 6 + (size_t)16 * (size_t)up16(Dv) * 4 +
                                      64 <=
                                  (size_t)96 << 10;
}

/* IB_EUNSUPPORTED (nothing added) when the shapes do not fit the kernel's shared memory. */
static int comp_fused(cu_exec *e, const cu_val *q, const cu_val *k, const cu_val *v,
                      const cu_val *m, cu_val *y, const mha_dims *d, float scale, ib_err *err)
{
    const int bf16 = e->precision == IB_PRECISION_BF16;
    ibk_mha a = {.N = d->N, .h = d->h, .S = d->S, .Sk = d->Sk, .D = d->D, .Dv = d->Dv,
                 .Sp = up16(d->S), .Skp = up16(d->Sk), .Dp = up16(d->D), .Dvp = up16(d->Dv),
                 .scale = scale};
    memcpy(a.ms, d->ms, sizeof a.ms);
    int warps = 0;
    size_t smem = 0;
    int rc = cu_check_rt(e, err, (cudaError_t)ibk_mha_prepare(&a, bf16, &warps, &smem),
                         "fused attention setup");
    if (rc)
        return rc;
    if (warps < 1)
        return IB_EUNSUPPORTED;
    size_t nq = (size_t)(a.N * a.h * a.Sp * a.Dp), nk = (size_t)(a.N * a.h * a.Skp * a.Dp);
    size_t nv = (size_t)(a.N * a.h * a.Skp * a.Dvp);
    char *blk;
    if ((rc = cu_att_block(e, (nq + nk + nv) * 2, (void **)&blk, err)))
        return rc;
    void *q16 = blk, *k16 = blk + nq * 2, *v16 = blk + (nq + nk) * 2;
    if ((rc = add_pack(e, q, q16, d->N, d->S, d->h, d->D, bf16, err)) ||
        (rc = add_pack(e, k, k16, d->N, d->Sk, d->h, d->D, bf16, err)) ||
        (rc = add_pack(e, v, v16, d->N, d->Sk, d->h, d->Dv, bf16, err)))
        return rc;
    fused_k *f = ib_calloc(1, sizeof *f);
    if (!f)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *f = (fused_k){.q = q16, .k = k16, .v = v16, .mask = m ? m->dev : NULL, .y = y->dev, .a = a,
                   .bf16 = bf16, .warps = warps, .smem = smem, .yt = cu_dtype_of(e, y)};
    if ((rc = cu_add_step(e, run_fused, f, NULL, err)))
        return rc;
    cu_step_kind(e, "attn-fused");
    return IB_OK;
}

/* ---- fp32: split heads, the two products and the softmax, merge ---------------------- */

/* y [d0, d1, d2, d3] (dense) = x read with strides st */
static int add_copy4(cu_exec *e, const float *x, float *y, const int64_t *dims, const int64_t *st,
                     ib_err *err)
{
    ibk_view v;
    memset(&v, 0, sizeof v);
    v.ndim = 4;
    for (int i = 0; i < 4; i++) {
        v.dims[i] = dims[i];
        v.sa[i] = st[i];
    }
    return cu_add_strided_copy(e, x, y, &v, 4, err);
}

static int comp_split(cu_exec *e, const cu_val *q, const cu_val *k, const cu_val *v,
                      const cu_val *m, cu_val *y, const mha_dims *d, float scale, ib_err *err)
{
    const int64_t N = d->N, h = d->h, S = d->S, Sk = d->Sk, D = d->D, Dv = d->Dv;
    const int64_t H = h * D, Hv = h * Dv, B = N * h;
    size_t nq = (size_t)(B * S * D), nk = (size_t)(B * Sk * D), nv = (size_t)(B * Sk * Dv);
    size_t ns = (size_t)(B * S * Sk), ny = (size_t)(B * S * Dv);
    float *blk;
    int rc;
    if ((rc = cu_att_block(e, (nq + nk + nv + ns + ny) * sizeof(float), (void **)&blk, err)))
        return rc;
    float *qs = blk, *ks = qs + nq, *vs = ks + nk, *sc = vs + nv, *ys = sc + ns;
    /* [N, h, L, D] from [N, L, h*D] */
    const int64_t qd[4] = {N, h, S, D}, qst[4] = {S * H, D, H, 1};
    const int64_t kd[4] = {N, h, Sk, D}, kst[4] = {Sk * H, D, H, 1};
    const int64_t vd[4] = {N, h, Sk, Dv}, vst[4] = {Sk * Hv, Dv, Hv, 1};
    if ((rc = add_copy4(e, q->dev, qs, qd, qst, err)) ||
        (rc = add_copy4(e, k->dev, ks, kd, kst, err)) ||
        (rc = add_copy4(e, v->dev, vs, vd, vst, err)))
        return rc;
    cu_attn_geom a = {.q = qs, .k = ks, .v = vs, .y = ys, .scores = sc, .k_rows = true,
                      .batch = B, .sq = S, .sk = Sk, .dd = D, .dv = Dv, .scale = scale,
                      .mask = m ? m->dev : NULL, .mcs = d->ms[3]};
    a.mv.ndim = 3; /* the row dims [N, h, S] */
    a.mv.dims[0] = N;
    a.mv.dims[1] = h;
    a.mv.dims[2] = S;
    for (int i = 0; i < 3; i++)
        a.mv.sa[i] = d->ms[i];
    if ((rc = cu_add_attention(e, &a, err)))
        return rc;
    /* y [N, S, h, Dv] from ys [N, h, S, Dv] */
    const int64_t yd[4] = {N, S, h, Dv}, yst[4] = {h * S * Dv, Dv, S * Dv, 1};
    return add_copy4(e, ys, y->dev, yd, yst, err);
}

/* ---- the op ------------------------------------------------------------------------- */

static bool sup_mha(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                    const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    /* the graph's shape inference (ir/ops/fused_mha.c) checked the shapes */
    if (n->n_inputs < 3 || n->n_inputs > 4 || !in[0] || !in[1] || !in[2] || !cu_all_f32(n, in) ||
        ib_node_attr_int(n, "heads", 0) < 1)
        return false;
    return in[0]->ndim == 3 && in[1]->ndim == 3 && in[2]->ndim == 3 &&
           (n->n_inputs < 4 || !in[3] || in[3]->ndim <= 4);
}

static int comp_mha(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *q = cu_in(e, n, 0), *k = cu_in(e, n, 1), *v = cu_in(e, n, 2), *m = cu_in(e, n, 3);
    cu_val *y = cu_out(e, n, 0);
    mha_dims d;
    dims_of(q, k, v, m, ib_node_attr_int(n, "heads", 1), &d);
    float scale = ib_node_attr_float(n, "scale", 1.0f);
    if (e->precision == IB_PRECISION_FP16 || e->precision == IB_PRECISION_BF16) {
        int rc = comp_fused(e, q, k, v, m, y, &d, scale, err);
        if (rc != IB_EUNSUPPORTED)
            return rc;
    }
    if (q->h16 || k->h16 || v->h16 || y->h16) /* cuda_half.c marks only what the kernel takes */
        return cu_fail(e, err, IB_EUNSUPPORTED,
                       "the fused attention kernel refused a 16-bit chain's shapes");
    return comp_split(e, q, k, v, m, y, &d, scale, err);
}

const cu_op cu_ops_attn[] = {
    {"inferbench", "MultiHeadAttention", sup_mha, comp_mha},
    {NULL, NULL, NULL, NULL},
};
