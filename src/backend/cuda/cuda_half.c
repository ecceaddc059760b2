/*
 * cuda_half.c - 16-bit chains (ib_backend_config.half_chains, `run --half-chains`; issue 24's
 * "activations held in fp16/bf16 on the device, converted only at the subgraph edges"), written
 * 2026-12-05 without a GPU, not yet run.
 *
 * At fp16 (bf16), a value is held as row-major float16 (bfloat16) in its binding, half its
 * planned bytes, when a chain op makes it, every reader is a chain op that takes it at that
 * input, and it does not cross the subgraph's edge. Chain ops, with the inputs they take 16-bit:
 *
 *   MatMul / inferbench.FusedMatMul / Gemm with a constant B, not batched, A not transposed,
 *       no C term but a constant bias vector, activation none / Relu / Gelu: A (input 0);
 *       the product reads its 16-bit A as is and Lt writes its 16-bit Y (D in 16F, the bias as
 *       16F in the epilogue, Gelu in it too, or by a 16-bit kernel after when Lt has no
 *       algorithm with its GELU epilogue: cuda_matmul.c);
 *   LayerNormalization / inferbench.LayerNorm over the last axis: X;
 *   Add of two tensors of the output's shape: both;
 *   inferbench.MultiHeadAttention on its fused kernel: Q, K and V (the pack reads them 16-bit;
 *       the kernel writes Y 16-bit).
 *
 * BERT then keeps everything from the embeddings' LayerNorm to the last layer's in 16 bits:
 * no conversion steps before the products, half the bytes in LayerNorm, Add, Gelu and the
 * attention packs. Every other op still sees float32 (it never reads a 16-bit value: that is
 * the marking's rule), and so does the caller (boundary values stay float32).
 *
 * An int8 session (its ops at fp16) has the same chains in float16 (since the seventh session,
 * 2026-12-05, not yet run): its int8 products quantise a 16-bit A ("quant8" reads either
 * width) and write a 16-bit Y from their dequant epilogue, bias and activation included, so
 * BERT at int8 moves no float32 activation between its layers' ops either. An fp8 session
 * (eighth session, not yet run) is the same with "quant-f8" for "quant8".
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

int cu_dtype_of(const cu_exec *e, const cu_val *v)
{
    if (!v || !v->h16)
        return IBK_T_F32;
    return e->precision == IB_PRECISION_BF16 ? IBK_T_BF16 : IBK_T_F16;
}

static bool f32(const cu_val *v)
{
    return v && v->desc.dtype == IB_DTYPE_FLOAT32 && !v->half;
}

/* a constant of n float32 values whose last dim is n (a bias vector) */
static bool const_vec(const cu_val *v, int64_t n)
{
    return v && v->host && f32(v) && v->desc.ndim >= 1 && v->desc.dims[v->desc.ndim - 1] == n &&
           ib_tensor_desc_numel(&v->desc) == n;
}

bool cu_half_matmul(cu_exec *e, const ib_node *n)
{
    bool fused = cu_node_is(n, "inferbench", "FusedMatMul"), gemm = cu_node_is(n, "", "Gemm");
    if (!fused && !gemm && !cu_node_is(n, "", "MatMul"))
        return false;
    cu_val *a = cu_in(e, n, 0), *b = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    if (!f32(a) || !f32(b) || !f32(y) || !b->host || a->desc.ndim < 2 || b->desc.ndim < 2)
        return false;
    for (int32_t d = 0; d < b->desc.ndim - 2; d++)
        if (b->desc.dims[d] != 1)
            return false; /* a batched B: Lt's strided batches, not this path */
    if ((fused || gemm) && ib_node_attr_int(n, "transA", 0) != 0)
        return false;
    bool tb = (fused || gemm) && ib_node_attr_int(n, "transB", 0) != 0;
    int64_t N = b->desc.dims[b->desc.ndim - (tb ? 2 : 1)];
    cu_val *c = (fused || gemm) ? cu_in(e, n, 2) : NULL;
    if (c && !const_vec(c, N))
        return false;
    if (gemm && c && ib_node_attr_float(n, "beta", 1.0f) != 1.0f)
        return false;
    if (fused) {
        const char *act = ib_node_attr_string(n, "activation", "");
        if (act[0] && strcmp(act, "Relu") && strcmp(act, "Gelu"))
            return false;
    }
    return true;
}

static bool half_ln(cu_exec *e, const ib_node *n)
{
    if (!cu_node_is(n, "", "LayerNormalization") && !cu_node_is(n, "inferbench", "LayerNorm"))
        return false;
    cu_val *x = cu_in(e, n, 0), *s = cu_in(e, n, 1), *b = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    if (!f32(x) || !f32(y) || x->desc.ndim < 1)
        return false;
    int64_t axis = ib_node_attr_int(n, "axis", -1), cols = x->desc.dims[x->desc.ndim - 1];
    if (axis != -1 && axis != x->desc.ndim - 1)
        return false;
    for (uint32_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] != IB_VALUE_NONE)
            return false;
    return const_vec(s, cols) && (!b || const_vec(b, cols));
}

static bool half_add(cu_exec *e, const ib_node *n)
{
    if (!cu_node_is(n, "", "Add") || n->n_inputs != 2)
        return false;
    cu_val *a = cu_in(e, n, 0), *b = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    return f32(a) && f32(b) && f32(y) && !a->host && !b->host &&
           ib_tensor_desc_equal(&a->desc, &y->desc) && ib_tensor_desc_equal(&b->desc, &y->desc);
}

/* the fused kernel's shared memory per warp (kernels/ib_attn.cu warp_bytes) within 96 KB, which
 * every device of compute capability 8.x / 9.0 gives a block (cu_mha_fused_fits) */
static bool half_mha(cu_exec *e, const ib_node *n)
{
    if (!cu_node_is(n, "inferbench", "MultiHeadAttention"))
        return false;
    cu_val *q = cu_in(e, n, 0), *k = cu_in(e, n, 1), *v = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    int64_t h = ib_node_attr_int(n, "heads", 0);
    if (!f32(q) || !f32(k) || !f32(v) || !f32(y) || h < 1 || k->desc.ndim != 3 ||
        v->desc.ndim != 3)
        return false;
    return cu_mha_fused_fits(k->desc.dims[1], v->desc.dims[2] / h);
}

/* Whether node n takes input k 16-bit, and whether it writes its output 16-bit. */
static bool reads16(cu_exec *e, const ib_node *n, uint32_t k)
{
    return (k == 0 && (cu_half_matmul(e, n) || half_ln(e, n))) || (k < 2 && half_add(e, n)) ||
           (k < 3 && half_mha(e, n));
}

static bool writes16(cu_exec *e, const ib_node *n)
{
    return cu_half_matmul(e, n) || half_ln(e, n) || half_add(e, n) || half_mha(e, n);
}

void cu_mark_half_chains(cu_exec *e, const ib_backend_subgraph *sg)
{
    if (!e->ctx->half_chains ||
        (e->precision != IB_PRECISION_FP16 && e->precision != IB_PRECISION_BF16))
        return;
    uint8_t *st = ib_calloc(e->n_vals ? e->n_vals : 1, 1); /* 1 made by a chain op, 2 blocked */
    if (!st)
        return; /* no chains: every value stays float32 */
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        const ib_node *n = &e->graph->nodes.data[sg->nodes[i]];
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            cu_val *v = cu_in(e, n, k);
            if (v && !reads16(e, n, k))
                st[v - e->vals] |= 2;
        }
        cu_val *y = writes16(e, n) ? cu_out(e, n, 0) : NULL;
        if (y)
            st[y - e->vals] |= 1;
    }
    for (uint32_t i = 0; i < e->n_vals; i++)
        e->vals[i].h16 = st[i] == 1 && !sg->bindings[i].boundary && !sg->bindings[i].constant &&
                         f32(&e->vals[i]);
    ib_free(st);
}

/* ---- the chain ops' steps ------------------------------------------------------------ */

typedef struct ln16_k {
    const void *x;
    void *y;
    const float *g, *b;
    int xt, yt;
    int64_t rows, cols;
    float eps;
} ln16_k;

static int run_ln16(cu_exec *e, void *p, ib_err *err)
{
    ln16_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_layernorm_t(e->ctx->stream, k->x, k->xt, k->g, k->b, k->y,
                                                    k->yt, k->rows, k->cols, k->eps),
                       "layernorm kernel (16-bit chain)");
}

int cu_add_ln16(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *s = cu_in(e, n, 1), *b = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    ln16_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    int64_t cols = x->desc.dims[x->desc.ndim - 1];
    *k = (ln16_k){.x = x->dev, .y = y->dev, .g = s->dev, .b = b ? b->dev : NULL,
                  .xt = cu_dtype_of(e, x), .yt = cu_dtype_of(e, y), .cols = cols,
                  .rows = cols ? ib_tensor_desc_numel(&x->desc) / cols : 0,
                  .eps = ib_node_attr_float(n, "epsilon", 1e-5f)};
    int rc = cu_add_step(e, run_ln16, k, NULL, err);
    if (!rc)
        cu_step_kind(e, "half");
    return rc;
}

typedef struct add16_k {
    const void *a, *b;
    void *y, *tmp; /* tmp: y's private copy when y shares an input's storage (below) */
    int at, bt, yt;
    int64_t n;
    size_t bytes;
} add16_k;

static int run_add16(cu_exec *e, void *p, ib_err *err)
{
    add16_k *k = p;
    cudaStream_t s = e->ctx->stream;
    int rc = cu_check_rt(e, err,
                         (cudaError_t)ibk_add_t(s, k->a, k->at, k->b, k->bt, k->tmp ? k->tmp : k->y,
                                                k->yt, k->n),
                         "add kernel (16-bit chain)");
    if (rc || !k->tmp)
        return rc;
    return cu_check_rt(e, err, cudaMemcpyAsync(k->y, k->tmp, k->bytes, cudaMemcpyDeviceToDevice, s),
                       "add (16-bit chain) copy");
}

int cu_add_add16(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *a = cu_in(e, n, 0), *b = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    add16_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (add16_k){.a = a->dev, .b = b->dev, .y = y->dev, .at = cu_dtype_of(e, a),
                   .bt = cu_dtype_of(e, b), .yt = cu_dtype_of(e, y),
                   .n = ib_tensor_desc_numel(&y->desc)};
    /* The planner may give y an input's storage (Add is in place elementwise, session_build.c).
     * Of the same type that is safe, element i read before it is written; of another width a
     * thread's write lands on elements others still read: y goes to a private block first. */
    k->bytes = (size_t)k->n * (k->yt == IBK_T_F32 ? 4 : 2);
    int rc = IB_OK;
    if (((y->dev == a->dev && k->at != k->yt) || (y->dev == b->dev && k->bt != k->yt)) &&
        (rc = cu_alloc(e, k->bytes, &k->tmp, err))) {
        ib_free(k);
        return rc;
    }
    rc = cu_add_step(e, run_add16, k, NULL, err);
    if (!rc)
        cu_step_kind(e, "half");
    return rc;
}

typedef struct act16_k {
    void *y;
    int op, t;
    int64_t n;
} act16_k;

static int run_act16(cu_exec *e, void *p, ib_err *err)
{
    act16_k *k = p;
    return cu_check_rt(e, err, (cudaError_t)ibk_act_t(e->ctx->stream, k->op, k->y, k->t, k->n),
                       "activation kernel (16-bit chain)");
}

int cu_add_act16(cu_exec *e, const cu_val *y, int op, ib_err *err)
{
    act16_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (act16_k){.y = y->dev, .op = op, .t = cu_dtype_of(e, y),
                   .n = ib_tensor_desc_numel(&y->desc)};
    int rc = cu_add_step(e, run_act16, k, NULL, err);
    if (!rc)
        cu_step_kind(e, "half");
    return rc;
}
