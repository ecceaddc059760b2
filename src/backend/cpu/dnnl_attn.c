/*
 * dnnl_attn.c - inferbench.Attention (docs/ops.md), scaled dot-product
 * attention made by the compiler from MatMul-[Div|Mul]-[Add mask]-Softmax-
 * MatMul: y = softmax(q @ kt * scale + mask) @ v over the last axis.
 *
 * Three oneDNN primitives on plain row-major tensors: a batched matmul
 * writing the f32 scores with the scale as output scale and the mask as a
 * binary-add post-op (or a separate binary primitive when oneDNN cannot
 * broadcast the mask as a post-op), a softmax over the last axis, and the
 * second batched matmul. Shapes: q [.., S, D], kt [.., D, Sk],
 * v [.., Sk, Dv], mask broadcastable to [.., S, Sk], y [.., S, Dv]. The
 * scores live in a private block of the exec (S x Sk per batch and head).
 */
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/cpu_kernels.h"

static bool attn_shapes(const ib_tensor_desc *q, const ib_tensor_desc *kt, const ib_tensor_desc *v,
                        const ib_tensor_desc *mask, const ib_tensor_desc *y)
{
    int r = q->ndim;
    if (r < 3 || r > 6 || kt->ndim != r || v->ndim != r || y->ndim != r)
        return false;
    for (int i = 0; i < r - 2; i++)
        if (kt->dims[i] != q->dims[i] || v->dims[i] != q->dims[i] || y->dims[i] != q->dims[i])
            return false;
    int64_t S = q->dims[r - 2], D = q->dims[r - 1], Sk = kt->dims[r - 1];
    if (kt->dims[r - 2] != D || v->dims[r - 2] != Sk || y->dims[r - 2] != S ||
        y->dims[r - 1] != v->dims[r - 1])
        return false;
    if (mask) {
        if (mask->ndim > r || mask->dtype != IB_DTYPE_FLOAT32)
            return false;
        for (int i = 0; i < mask->ndim; i++) {
            int j = i + r - mask->ndim;
            int64_t s = j == r - 1 ? Sk : j == r - 2 ? S : q->dims[j];
            if (mask->dims[i] != 1 && mask->dims[i] != s)
                return false;
        }
    }
    return true;
}

static bool attn_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                          const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_value *y = ib_node_output(g, n, 0);
    if (n->n_inputs < 3 || n->n_inputs > 4 || !in[0] || !in[1] || !in[2] || !y ||
        y->desc.dtype != IB_DTYPE_FLOAT32 || in[0]->dtype != IB_DTYPE_FLOAT32 ||
        in[1]->dtype != IB_DTYPE_FLOAT32 || in[2]->dtype != IB_DTYPE_FLOAT32)
        return false;
    return attn_shapes(in[0], in[1], in[2], n->n_inputs > 3 ? in[3] : NULL, &y->desc);
}

/* A plain input as a memory object in dtype dt. */
static int plain_mem(cpu_exec *e, cpu_val *v, dnnl_data_type_t dt, const dnnl_memory_desc_t *md,
                     dnnl_memory_t *m, ib_err *err)
{
    const void *p;
    int rc = cpu_use_plain(e, v, dt, &p, err);
    return rc ? rc : cpu_mem(e, md, (void *)(uintptr_t)p, m, err);
}

static int matmul_pd(cpu_exec *e, const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b,
                     const dnnl_memory_desc_t *c, const_dnnl_primitive_attr_t attr,
                     dnnl_primitive_desc_t *pd)
{
    dnnl_matmul_desc_t md;
    dnnl_status_t st = dnnl_matmul_desc_init(&md, a, b, NULL, c);
    return st ? (int)st : (int)cpu_pd_create(e, pd, &md, attr);
}

static int attn_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *q = cpu_in(e, n, 0), *kt = cpu_in(e, n, 1), *v = cpu_in(e, n, 2);
    cpu_val *mask = cpu_in(e, n, 3), *y = cpu_out(e, n, 0);
    int r = q->desc.ndim, rc;
    float scale = ib_node_attr_float(n, "scale", 1.0f);
    dnnl_data_type_t dt = cpu_act_dt(e);
    int64_t sd[IB_MAX_DIMS], md_dims[IB_MAX_DIMS];
    memcpy(sd, q->desc.dims, sizeof sd);
    sd[r - 1] = kt->desc.dims[r - 1];
    dnnl_memory_desc_t qmd, kmd, vmd, smd, pmd, ymd, mmd;
    if (cpu_md_plain(&qmd, r, q->desc.dims, dt) || cpu_md_plain(&kmd, r, kt->desc.dims, dt) ||
        cpu_md_plain(&vmd, r, v->desc.dims, dt) || cpu_md_plain(&smd, r, sd, dnnl_f32) ||
        cpu_md_plain(&pmd, r, sd, dt) || cpu_md_plain(&ymd, r, y->desc.dims, dt))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    if (mask) {
        for (int i = 0; i < r; i++) {
            int k = i - (r - mask->desc.ndim);
            md_dims[i] = k < 0 ? 1 : mask->desc.dims[k];
        }
        if (cpu_md_plain(&mmd, r, md_dims, dnnl_f32))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the mask");
    }
    float *scores = cpu_alloc(e, dnnl_memory_desc_get_size(&smd));
    void *probs = dt == dnnl_f32 ? (void *)scores : cpu_alloc(e, dnnl_memory_desc_get_size(&pmd));
    if (!scores || !probs)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for the attention scores");
    /* 1. scores = q @ kt * scale (+ mask as a post-op when oneDNN can) */
    dnnl_primitive_attr_t attr;
    if ((rc = cpu_attr(e, &attr, err)))
        return rc;
    if (scale != 1.0f)
        dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale);
    dnnl_primitive_desc_t pd = NULL;
    bool post_mask = false;
    if (mask) {
        dnnl_post_ops_t po;
        dnnl_post_ops_create(&po);
        dnnl_post_ops_append_binary(po, dnnl_binary_add, &mmd);
        dnnl_primitive_attr_t pattr;
        dnnl_primitive_attr_clone(&pattr, attr);
        dnnl_primitive_attr_set_post_ops(pattr, po);
        dnnl_post_ops_destroy(po);
        post_mask = matmul_pd(e, &qmd, &kmd, &smd, pattr, &pd) == dnnl_success;
        dnnl_primitive_attr_destroy(pattr);
    }
    if (!post_mask && (rc = cpu_check(e, err, matmul_pd(e, &qmd, &kmd, &smd, attr, &pd),
                                      "attention scores matmul"))) {
        dnnl_primitive_attr_destroy(attr);
        return rc;
    }
    dnnl_primitive_attr_destroy(attr);
    dnnl_memory_t mq, mk, ms, mm = NULL, mv, mp, my;
    if ((rc = plain_mem(e, q, dt, &qmd, &mq, err)) || (rc = plain_mem(e, kt, dt, &kmd, &mk, err)) ||
        (rc = cpu_mem(e, &smd, scores, &ms, err)) ||
        (mask && (rc = plain_mem(e, mask, dnnl_f32, &mmd, &mm, err)))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, mq}, {DNNL_ARG_WEIGHTS, mk}, {DNNL_ARG_DST, ms}};
    int na = 3;
    if (post_mask)
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, mm};
    if ((rc = cpu_add_prim(e, pd, args, na, err)))
        return rc;
    if (mask && !post_mask) { /* scores += mask, in place */
        dnnl_binary_desc_t bd;
        dnnl_status_t st = dnnl_binary_desc_init(&bd, dnnl_binary_add, &smd, &mmd, &smd);
        if (!st)
            st = cpu_pd_create(e, &pd, &bd, NULL);
        if ((rc = cpu_check(e, err, st, "attention mask")))
            return rc;
        dnnl_exec_arg_t b[3] = {{DNNL_ARG_SRC_0, ms}, {DNNL_ARG_SRC_1, mm}, {DNNL_ARG_DST, ms}};
        if ((rc = cpu_add_prim(e, pd, b, 3, err)))
            return rc;
    }
    /* 2. probabilities = softmax(scores) over the last axis */
    dnnl_softmax_v2_desc_t sdsc;
    dnnl_status_t st = dnnl_softmax_v2_forward_desc_init(&sdsc, dnnl_forward_inference,
                                                         dnnl_softmax_accurate, &smd, &pmd, r - 1);
    if (!st)
        st = cpu_pd_create(e, &pd, &sdsc, NULL);
    if ((rc = cpu_check(e, err, st, "attention softmax")))
        return rc;
    if ((rc = cpu_mem(e, &pmd, probs, &mp, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t sa[2] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_DST, mp}};
    if ((rc = cpu_add_prim(e, pd, sa, 2, err)))
        return rc;
    /* 3. y = probabilities @ v */
    if ((rc = cpu_check(e, err, matmul_pd(e, &pmd, &vmd, &ymd, NULL, &pd), "attention matmul")))
        return rc;
    if ((rc = plain_mem(e, v, dt, &vmd, &mv, err)) || (rc = cpu_def(e, y, &ymd, &my, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t ma[3] = {{DNNL_ARG_SRC, mp}, {DNNL_ARG_WEIGHTS, mv}, {DNNL_ARG_DST, my}};
    return cpu_add_prim(e, pd, ma, 3, err);
}

/* ---- inferbench.MultiHeadAttention: heads packed in the last dim ----------------------
 *
 * Q [N,S,h*D], K [N,Sk,h*D], V [N,Sk,h*Dv], mask broadcast to [N,h,S,Sk], y [N,S,h*Dv].
 * The same three primitives as Attention on 4-D strided views of the packed tensors
 * ([N,h,S,D] with strides [S*h*D, D, h*D, 1]; K read transposed through its strides; y
 * written the same way), so no head split/merge copy is made. oneDNN 2.6 runs 4-D strided
 * matmuls on brgemm (a 2-D per-head view with a row stride falls back to gemm:jit, 3x
 * slower here), hence one batched call rather than a loop over heads. */

static bool mha_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                         const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_value *y = ib_node_output(g, n, 0);
    int64_t h = ib_node_attr_int(n, "heads", 0);
    if (n->n_inputs < 3 || n->n_inputs > 4 || !in[0] || !in[1] || !in[2] || !y || h < 1)
        return false;
    for (int i = 0; i < 3; i++)
        if (in[i]->dtype != IB_DTYPE_FLOAT32 || in[i]->ndim != 3 || in[i]->dims[0] != in[0]->dims[0])
            return false;
    const ib_tensor_desc *q = in[0], *k = in[1], *v = in[2], *m = n->n_inputs > 3 ? in[3] : NULL;
    if (q->dims[2] % h || v->dims[2] % h || k->dims[2] != q->dims[2] || v->dims[1] != k->dims[1] ||
        y->desc.dtype != IB_DTYPE_FLOAT32)
        return false;
    if (m) {
        const int64_t want[4] = {q->dims[0], h, q->dims[1], k->dims[1]};
        if (m->ndim > 4 || m->dtype != IB_DTYPE_FLOAT32)
            return false;
        for (int i = 0; i < m->ndim; i++)
            if (m->dims[i] != 1 && m->dims[i] != want[i + 4 - m->ndim])
                return false;
    }
    return true;
}

static int md_4d(dnnl_memory_desc_t *md, const int64_t *dims, const int64_t *strides,
                 dnnl_data_type_t dt)
{
    dnnl_dims_t d, st;
    for (int i = 0; i < 4; i++) {
        d[i] = dims[i];
        st[i] = strides[i];
    }
    return dnnl_memory_desc_init_by_strides(md, 4, d, dt, st) != dnnl_success;
}

/* float32 on an AVX-512 CPU: one fused kernel (cpu_kernels_attn.c) instead of the three
 * primitives. qd = {N, h, S, D}. */
static int mha_fused(cpu_exec *e, const void *qp, const void *kp, const void *vp,
                     const void *mp, const ib_tensor_desc *md, void *yp, const int64_t *qd,
                     int64_t Sk, int64_t Dv, float scale, ib_err *err)
{
    cpu_mha_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (cpu_mha_ctx){.q = qp, .k = kp, .v = vp, .mask = mp, .y = yp, .N = qd[0],
                       .h = qd[1], .S = qd[2], .Sk = Sk, .D = qd[3], .Dv = Dv, .scale = scale};
    if (md)
        ib_tensor_desc_bcast_strides(md, 4, k->mst);
    k->max_threads = e->ctx->threads > 0 ? e->ctx->threads : 1;
    k->scratch = cpu_alloc(e, (size_t)k->max_threads * cpu_mha_scratch_floats(k->D, Dv, Sk) *
                                  sizeof(float));
    if (!k->scratch) {
        ib_free(k);
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for the attention scratch");
    }
    return cpu_add_kernel(e, cpu_mha_run, k, err);
}

static int mha_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *q = cpu_in(e, n, 0), *k = cpu_in(e, n, 1), *v = cpu_in(e, n, 2);
    cpu_val *mask = cpu_in(e, n, 3), *y = cpu_out(e, n, 0);
    int64_t h = ib_node_attr_int(n, "heads", 1), N = q->desc.dims[0], S = q->desc.dims[1];
    int64_t Sk = k->desc.dims[1], H = q->desc.dims[2], Hv = v->desc.dims[2];
    int64_t D = H / h, Dv = Hv / h;
    float scale = ib_node_attr_float(n, "scale", 1.0f);
    dnnl_data_type_t dt = cpu_act_dt(e);
    int64_t mdim[4] = {1, 1, 1, 1};
    if (mask)
        for (int i = 0; i < mask->desc.ndim; i++)
            mdim[i + 4 - mask->desc.ndim] = mask->desc.dims[i];
    dnnl_memory_desc_t qmd, kmd, smd, pmd, vmd, ymd, mmd, yfull;
    const int64_t qd[4] = {N, h, S, D}, qs[4] = {S * H, D, H, 1};
    const int64_t kd[4] = {N, h, D, Sk}, ks[4] = {Sk * H, D, 1, H};
    const int64_t vd[4] = {N, h, Sk, Dv}, vs[4] = {Sk * Hv, Dv, Hv, 1};
    const int64_t yd[4] = {N, h, S, Dv}, ys[4] = {S * Hv, Dv, Hv, 1};
    const int64_t sd[4] = {N, h, S, Sk};
    int64_t y3[3] = {N, S, Hv};
    if (md_4d(&qmd, qd, qs, dt) || md_4d(&kmd, kd, ks, dt) || md_4d(&vmd, vd, vs, dt) ||
        md_4d(&ymd, yd, ys, dt) || cpu_md_plain(&smd, 4, sd, dnnl_f32) ||
        cpu_md_plain(&pmd, 4, sd, dt) || cpu_md_plain(&mmd, 4, mdim, dnnl_f32) ||
        cpu_md_plain(&yfull, 3, y3, dt))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    const void *qp, *kp, *vp, *mp = NULL;
    dnnl_memory_t my;
    int rc;
    if ((rc = cpu_use_plain(e, q, dt, &qp, err)) || (rc = cpu_use_plain(e, k, dt, &kp, err)) ||
        (rc = cpu_use_plain(e, v, dt, &vp, err)) ||
        (mask && (rc = cpu_use_plain(e, mask, dnnl_f32, &mp, err))) ||
        (rc = cpu_def(e, y, &yfull, &my, err)))
        return rc;
    void *yp = NULL;
    dnnl_memory_get_data_handle(my, &yp);
    if (dt == dnnl_f32 && cpu_mha_fused_ok(H))
        return mha_fused(e, qp, kp, vp, mp, mask ? &mask->desc : NULL, yp, qd, Sk, Dv, scale, err);
    float *scores = cpu_alloc(e, dnnl_memory_desc_get_size(&smd));
    void *probs = dt == dnnl_f32 ? (void *)scores : cpu_alloc(e, dnnl_memory_desc_get_size(&pmd));
    if (!scores || !probs)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for the attention scores");
    /* 1. scores = q @ kt * scale (+ mask as a binary post-op) */
    dnnl_primitive_attr_t attr;
    if ((rc = cpu_attr(e, &attr, err)))
        return rc;
    if (scale != 1.0f)
        dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale);
    if (mask) {
        dnnl_post_ops_t po;
        dnnl_post_ops_create(&po);
        dnnl_post_ops_append_binary(po, dnnl_binary_add, &mmd);
        dnnl_primitive_attr_set_post_ops(attr, po);
        dnnl_post_ops_destroy(po);
    }
    dnnl_primitive_desc_t pd = NULL;
    rc = cpu_check(e, err, (dnnl_status_t)matmul_pd(e, &qmd, &kmd, &smd, attr, &pd),
                   "multi-head attention scores");
    dnnl_primitive_attr_destroy(attr);
    if (rc)
        return rc;
    dnnl_memory_t mq, mk, ms, mm = NULL, mv, mpr, mo;
    if ((rc = cpu_mem(e, &qmd, (void *)(uintptr_t)qp, &mq, err)) ||
        (rc = cpu_mem(e, &kmd, (void *)(uintptr_t)kp, &mk, err)) ||
        (rc = cpu_mem(e, &smd, scores, &ms, err)) ||
        (mask && (rc = cpu_mem(e, &mmd, (void *)(uintptr_t)mp, &mm, err)))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t a0[4] = {{DNNL_ARG_SRC, mq}, {DNNL_ARG_WEIGHTS, mk}, {DNNL_ARG_DST, ms},
                             {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, mm}};
    if ((rc = cpu_add_prim(e, pd, a0, mask ? 4 : 3, err)))
        return rc;
    /* 2. probabilities = softmax(scores) over the last axis */
    dnnl_softmax_v2_desc_t sdsc;
    dnnl_status_t st = dnnl_softmax_v2_forward_desc_init(&sdsc, dnnl_forward_inference,
                                                         dnnl_softmax_accurate, &smd, &pmd, 3);
    if (!st)
        st = cpu_pd_create(e, &pd, &sdsc, NULL);
    if ((rc = cpu_check(e, err, st, "multi-head attention softmax")))
        return rc;
    if ((rc = cpu_mem(e, &pmd, probs, &mpr, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t a1[2] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_DST, mpr}};
    if ((rc = cpu_add_prim(e, pd, a1, 2, err)))
        return rc;
    /* 3. y (strided into [N, S, h*Dv]) = probabilities @ v */
    if ((rc = cpu_check(e, err, (dnnl_status_t)matmul_pd(e, &pmd, &vmd, &ymd, NULL, &pd),
                        "multi-head attention matmul")))
        return rc;
    if ((rc = cpu_mem(e, &vmd, (void *)(uintptr_t)vp, &mv, err)) ||
        (rc = cpu_mem(e, &ymd, yp, &mo, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t a2[3] = {{DNNL_ARG_SRC, mpr}, {DNNL_ARG_WEIGHTS, mv}, {DNNL_ARG_DST, mo}};
    return cpu_add_prim(e, pd, a2, 3, err);
}

const cpu_op cpu_ops_attn[] = {
    {"inferbench", "Attention", attn_supports, attn_compile},
    {"inferbench", "MultiHeadAttention", mha_supports, mha_compile},
    {NULL, NULL, NULL, NULL},
};
