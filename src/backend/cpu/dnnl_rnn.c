/*
 * dnnl_rnn.c - ONNX LSTM on oneDNN's vanilla_lstm: forward, reverse and
 * bidirectional, optional initial_h/initial_c, outputs Y, Y_h, Y_c. One direction
 * at f32 runs instead as one matmul for the input projections of all steps and our
 * recurrence kernel: cpu_kernels_rnn.c over a batch of at most OWN_LSTM_MAX_BATCH,
 * cpu_kernels_rnn512.c above it (AVX-512, H a multiple of 16).
 *
 * Gate order: ONNX stores W/R/B gates as i, o, f, c; oneDNN wants i, f,
 * c~, o, so the weights are permuted while being rearranged into oneDNN's
 * ldigo order [layer, dir, input, gate, hidden] at compile time (then
 * reordered into the primitive's packed format); the bias is Wb + Rb.
 * Shapes: X [T, N, I] = oneDNN tnc; Y [T, D, N, H]: for D = 1 the memory of
 * dst_layer [T, N, H] itself, for D = 2 dst_layer [T, N, 2H] copied into
 * [T, 2, N, H]; Y_h/Y_c [D, N, H] = ldnc with L = 1.
 * Not taken (reference fallback): peepholes (P), clip, input_forget,
 * non-default activations, layout = 1, ragged sequence_lens.
 */
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

static int64_t lstm_dirs(const ib_node *n)
{
    const char *d = ib_node_attr_string(n, "direction", "forward");
    return strcmp(d, "bidirectional") == 0 ? 2 : (strcmp(d, "forward") == 0 || strcmp(d, "reverse") == 0) ? 1 : 0;
}

static bool lstm_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                          const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int64_t D = lstm_dirs(n), H = ib_node_attr_int(n, "hidden_size", 0);
    if (D == 0 || H <= 0 || n->n_inputs < 3 || !in[0] || in[0]->ndim != 3 ||
        ib_node_attr_int(n, "layout", 0) != 0 || ib_node_attr_int(n, "input_forget", 0) != 0 ||
        ib_node_attr(n, "clip") || ib_node_attr(n, "activations"))
        return false;
    int64_t T = in[0]->dims[0], N = in[0]->dims[1], I = in[0]->dims[2];
    if (in[0]->dtype != IB_DTYPE_FLOAT32 || !ib_tensor_desc_is_f32(in[1], 3, D, 4 * H, I) ||
        !ib_tensor_desc_is_f32(in[2], 3, D, 4 * H, H) || !cpu_is_const(g, n, 1) ||
        !cpu_is_const(g, n, 2))
        return false;
    if (n->n_inputs > 3 && in[3] &&
        (!ib_tensor_desc_is_f32(in[3], 2, D, 8 * H, 0) || !cpu_is_const(g, n, 3)))
        return false;
    if (n->n_inputs > 4 && in[4]) { /* sequence_lens: accepted only when all equal T */
        const ib_tensor *t = cpu_const_of(g, n, 4);
        if (!t || t->desc.dtype != IB_DTYPE_INT32 || ib_tensor_desc_numel(&t->desc) != N)
            return false;
        for (int64_t i = 0; i < N; i++)
            if (((const int32_t *)t->data)[i] != T)
                return false;
    }
    for (uint32_t k = 5; k < 7; k++)
        if (n->n_inputs > k && in[k] && !ib_tensor_desc_is_f32(in[k], 3, D, N, H))
            return false;
    if (n->n_inputs > 7 && in[7]) /* peepholes */
        return false;
    const ib_value *y = ib_node_output(g, n, 0), *yh = ib_node_output(g, n, 1),
                   *yc = ib_node_output(g, n, 2);
    if (y && (y->desc.ndim != 4 || y->desc.dims[0] != T || y->desc.dims[1] != D ||
              y->desc.dims[2] != N || y->desc.dims[3] != H || y->desc.dtype != IB_DTYPE_FLOAT32))
        return false;
    return (!yh || ib_tensor_desc_is_f32(&yh->desc, 3, D, N, H)) &&
           (!yc || ib_tensor_desc_is_f32(&yc->desc, 3, D, N, H)) && n->n_outputs <= 3;
}

/* ONNX gate index of oneDNN gate g (i, f, c~, o) in ONNX's (i, o, f, c). */
static const int g_onnx_gate[4] = {0, 2, 3, 1};

/* W [D, 4H, C] (ONNX) -> plain ldigo [1, D, C, 4, H] with gates permuted. */
static float *to_ldigo(cpu_exec *e, const float *w, int64_t D, int64_t H, int64_t C)
{
    float *o = cpu_alloc(e, (size_t)(D * C * 4 * H) * sizeof *o);
    if (!o)
        return NULL;
    for (int64_t d = 0; d < D; d++)
        for (int64_t g = 0; g < 4; g++)
            for (int64_t h = 0; h < H; h++) {
                const float *src = w + (d * 4 * H + g_onnx_gate[g] * H + h) * C;
                for (int64_t c = 0; c < C; c++)
                    o[((d * C + c) * 4 + g) * H + h] = src[c];
            }
    return o;
}

/* Sequences (T > 1) over batches up to this size run the recurrence on our kernel
 * (cpu_kernels_rnn.c) at FP32 and INT8 precision; larger batches, BF16 and single steps
 * on oneDNN's LSTM. RNN-T, 7.2 s utterance at batch 1: the encoder 0.80 -> 0.23 s; the
 * decoder's single steps (T = 1, H = 320) were slower on ours (0.51 -> 0.66 s per
 * utterance), so they stay on oneDNN. */
#define OWN_LSTM_MAX_BATCH 4
/* Larger batches run the recurrence as a packed AVX-512 GEMM with the cell in its epilogue
 * (cpu_kernels_rnn512.c) when H is a multiple of 16 and the CPU has AVX-512; else on
 * oneDNN's LSTM. */

static int pack_fill(void *user, void *dst, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_lstm_ctx *k = user;
    cpu_lstm_pack(k->R, k->H, dst);
    return IB_OK;
}

/* R packed for the batched kernel ([H/16][gate][k][16], cpu_lstm_pack), shared per context:
 * its identity is (R's bytes, f32 [4H, H]) -> f32 [H/16, 4, H, 16], a pair no reorder
 * produces. */
static int lstm_packed_r(cpu_exec *e, cpu_lstm_ctx *k, ib_err *err)
{
    dnnl_dims_t sd = {4 * k->H, k->H}, pd = {k->H / 16, 4, k->H, 16};
    dnnl_memory_desc_t src, want;
    int rc = cpu_check(e, err, dnnl_memory_desc_init_by_tag(&src, 2, sd, dnnl_f32, dnnl_ab),
                       "memory_desc_init");
    if (!rc)
        rc = cpu_check(e, err, dnnl_memory_desc_init_by_tag(&want, 4, pd, dnnl_f32, dnnl_abcd),
                       "memory_desc_init");
    void *data = NULL;
    if (!rc)
        rc = cpu_const_derived_shared(e, &src, k->R, &want, pack_fill, k, &data, err);
    k->Rp = data;
    return rc;
}

/* One direction at f32: G = X W^T + (Wb + Rb) for all steps as one oneDNN matmul, then
 * the recurrence on our kernel. */
static int lstm_own_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *w = cpu_in(e, n, 1), *r = cpu_in(e, n, 2), *b = cpu_in(e, n, 3);
    cpu_val *h0 = cpu_in(e, n, 5), *c0 = cpu_in(e, n, 6);
    cpu_val *y = cpu_out(e, n, 0), *yh = cpu_out(e, n, 1), *yc = cpu_out(e, n, 2);
    int64_t H = ib_node_attr_int(n, "hidden_size", 0);
    int64_t T = x->desc.dims[0], N = x->desc.dims[1], I = x->desc.dims[2], G4 = 4 * H;
    int64_t sd[2] = {T * N, I}, bd[2] = {1, G4}, dd[2] = {T * N, G4};
    dnnl_dims_t wd = {I, G4};
    dnnl_memory_desc_t smd, wplain, wmd, bmd, dmd;
    if (cpu_md_plain(&smd, 2, sd, dnnl_f32) ||
        dnnl_memory_desc_init_by_tag(&wplain, 2, wd, dnnl_f32, dnnl_ba) ||
        cpu_md_any(&wmd, 2, wd, dnnl_f32) || cpu_md_plain(&bmd, 2, bd, dnnl_f32) ||
        cpu_md_plain(&dmd, 2, dd, dnnl_f32))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    dnnl_primitive_desc_t pd;
    int rc = cpu_check(e, err, cpu_matmul_pd(e, &smd, &wmd, b ? &bmd : NULL, &dmd, NULL, &pd),
                       "matmul (LSTM input projection)");
    if (rc)
        return rc;
    wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    float *bias = b ? cpu_alloc(e, (size_t)G4 * sizeof *bias) : NULL;
    float *g = cpu_alloc(e, (size_t)(T * N * G4) * sizeof *g);
    cpu_lstm_ctx *k = ib_calloc(1, sizeof *k);
    dnnl_memory_t ms, mw, mb = NULL, mg;
    const void *xp = NULL;
    if (!g || (b && !bias) || !k) {
        rc = cpu_fail(e, err, IB_ENOMEM, "out of memory");
        goto fail;
    }
    for (int64_t i = 0; b && i < G4; i++) /* ONNX B = [Wb, Rb], gates i, o, f, c each */
        bias[i] = ((const float *)b->cdata)[i] + ((const float *)b->cdata)[G4 + i];
    if ((rc = cpu_use_plain(e, x, dnnl_f32, &xp, err)) ||
        (rc = cpu_mem(e, &smd, (void *)(uintptr_t)xp, &ms, err)) ||
        (rc = cpu_const_reorder_shared(e, &wplain, w->cdata, &wmd, &mw, err)) ||
        (b && (rc = cpu_mem(e, &bmd, bias, &mb, err))) || (rc = cpu_mem(e, &dmd, g, &mg, err)))
        goto fail;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mg},
                               {DNNL_ARG_BIAS, mb}};
    rc = cpu_add_prim(e, pd, args, b ? 4 : 3, err);
    pd = NULL; /* cpu_add_prim owns it */
    if (rc)
        goto fail;
    k->T = T;
    k->N = N;
    k->H = H;
    k->reverse = strcmp(ib_node_attr_string(n, "direction", "forward"), "reverse") == 0;
    k->G = g;
    k->R = r->cdata;
    if (N > OWN_LSTM_MAX_BATCH) {
        if ((rc = lstm_packed_r(e, k, err)))
            goto fail;
        if (!(k->ht = cpu_alloc(e, 2 * (size_t)((N + 15) / 16 * 16 * H) * sizeof *k->ht))) {
            rc = cpu_fail(e, err, IB_ENOMEM, "out of memory");
            goto fail;
        }
    }
    k->h = cpu_alloc(e, 2 * (size_t)(N * H) * sizeof *k->h);
    k->c = cpu_alloc(e, (size_t)(N * H) * sizeof *k->c);
    if (!k->h || !k->c) {
        rc = cpu_fail(e, err, IB_ENOMEM, "out of memory");
        goto fail;
    }
    const void *p;
    void *o;
    if (h0 && !(rc = cpu_use_plain(e, h0, dnnl_f32, &p, err)))
        k->h0 = p;
    if (!rc && c0 && !(rc = cpu_use_plain(e, c0, dnnl_f32, &p, err)))
        k->c0 = p;
    if (!rc && y && !(rc = cpu_def_plain(e, y, &o, err)))
        k->y = o;
    if (!rc && yh && !(rc = cpu_def_plain(e, yh, &o, err)))
        k->yh = o;
    if (!rc && yc && !(rc = cpu_def_plain(e, yc, &o, err)))
        k->yc = o;
    if (rc)
        goto fail;
    return cpu_add_kernel(e, cpu_lstm_run, k, err);
fail:
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    ib_free(k);
    return rc;
}

static int lstm_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *w = cpu_in(e, n, 1), *r = cpu_in(e, n, 2), *b = cpu_in(e, n, 3);
    cpu_val *h0 = cpu_in(e, n, 5), *c0 = cpu_in(e, n, 6);
    cpu_val *y = cpu_out(e, n, 0), *yh = cpu_out(e, n, 1), *yc = cpu_out(e, n, 2);
    int64_t D = lstm_dirs(n), H = ib_node_attr_int(n, "hidden_size", 0);
    int64_t T = x->desc.dims[0], N = x->desc.dims[1], I = x->desc.dims[2];
    /* backend ABI 10: the LSTMs multiply at fp32 or bf16 (no int8 LSTM here), which an int8
     * run reports (RNN-T's encoder) */
    ib_prec_notes_set(&e->precs, cpu_prec_of(cpu_act_dt(e)));
    if (D == 1 && cpu_act_dt(e) == dnnl_f32 && T > 1 &&
        (N <= OWN_LSTM_MAX_BATCH || cpu_lstm_packed_ok(H)))
        return lstm_own_compile(e, n, err);
    const char *dir = ib_node_attr_string(n, "direction", "forward");
    dnnl_rnn_direction_t rd = D == 2 ? dnnl_bidirectional_concat
                              : strcmp(dir, "reverse") == 0 ? dnnl_unidirectional_right2left
                                                            : dnnl_unidirectional_left2right;
    dnnl_data_type_t dt = cpu_act_dt(e);
    dnnl_memory_desc_t src, sit, sitc, wl, wi, bias, dst, dit, ditc, wl_plain, wi_plain, b_plain;
    int64_t tnc[3] = {T, N, I}, tnd[3] = {T, N, D * H}, ldnc[4] = {1, D, N, H};
    int64_t wld[5] = {1, D, I, 4, H}, wid[5] = {1, D, H, 4, H}, bd[4] = {1, D, 4, H};
    if (cpu_md_plain(&src, 3, tnc, dt) || cpu_md_plain(&sit, 4, ldnc, dt) ||
        cpu_md_plain(&sitc, 4, ldnc, dnnl_f32) || cpu_md_any(&wl, 5, wld, dt) ||
        cpu_md_any(&wi, 5, wid, dt) || cpu_md_plain(&bias, 4, bd, dnnl_f32) ||
        cpu_md_plain(&dst, 3, tnd, dt) || cpu_md_plain(&dit, 4, ldnc, dt) ||
        cpu_md_plain(&ditc, 4, ldnc, dnnl_f32) || cpu_md_plain(&wl_plain, 5, wld, dnnl_f32) ||
        cpu_md_plain(&wi_plain, 5, wid, dnnl_f32) || cpu_md_plain(&b_plain, 4, bd, dnnl_f32))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    dnnl_rnn_desc_t rdsc;
    dnnl_primitive_desc_t pd;
    int rc;
    dnnl_status_t st = dnnl_lstm_forward_desc_init(
        &rdsc, dnnl_forward_inference, rd, &src, h0 ? &sit : NULL, c0 ? &sitc : NULL, &wl, &wi,
        &bias, &dst, yh ? &dit : NULL, yc ? &ditc : NULL, 0);
    if (!st)
        st = cpu_pd_create(e, &pd, &rdsc, NULL);
    if ((rc = cpu_check(e, err, st, "lstm")))
        return rc;
    wl = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    wi = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
    dnnl_exec_arg_t args[12];
    int na = 0;
    dnnl_memory_t m;
    const void *p;
    float *wlp = to_ldigo(e, w->cdata, D, H, I), *wip = to_ldigo(e, r->cdata, D, H, H);
    float *bp = cpu_alloc(e, (size_t)(D * 4 * H) * sizeof *bp);
    if (!wlp || !wip || !bp) {
        rc = cpu_fail(e, err, IB_ENOMEM, "out of memory");
        goto fail;
    }
    for (int64_t d = 0; b && d < D; d++) {
        const float *bv = (const float *)b->cdata + d * 8 * H;
        for (int64_t g = 0; g < 4; g++)
            for (int64_t h = 0; h < H; h++)
                bp[(d * 4 + g) * H + h] =
                    bv[g_onnx_gate[g] * H + h] + bv[4 * H + g_onnx_gate[g] * H + h];
    }
#define ARG(a, mem) args[na++] = (dnnl_exec_arg_t){(a), (mem)}
    if ((rc = cpu_const_reorder(e, &wl_plain, wlp, &wl, NULL, &m, err)))
        goto fail;
    ARG(DNNL_ARG_WEIGHTS_LAYER, m);
    if ((rc = cpu_const_reorder(e, &wi_plain, wip, &wi, NULL, &m, err)))
        goto fail;
    ARG(DNNL_ARG_WEIGHTS_ITER, m);
    if ((rc = cpu_mem(e, &bias, bp, &m, err)))
        goto fail;
    ARG(DNNL_ARG_BIAS, m);
    if ((rc = cpu_use_plain(e, x, dt, &p, err)) ||
        (rc = cpu_mem(e, &src, (void *)(uintptr_t)p, &m, err)))
        goto fail;
    ARG(DNNL_ARG_SRC_LAYER, m);
    if (h0) {
        if ((rc = cpu_use_plain(e, h0, dt, &p, err)) ||
            (rc = cpu_mem(e, &sit, (void *)(uintptr_t)p, &m, err)))
            goto fail;
        ARG(DNNL_ARG_SRC_ITER, m);
    }
    if (c0) {
        if ((rc = cpu_use_plain(e, c0, dnnl_f32, &p, err)) ||
            (rc = cpu_mem(e, &sitc, (void *)(uintptr_t)p, &m, err)))
            goto fail;
        ARG(DNNL_ARG_SRC_ITER_C, m);
    }
    /* outputs: plain in their ONNX dims, viewed with oneDNN's dims */
    dnnl_memory_desc_t plain;
    void *dst_data = NULL;
    if (y) {
        if (cpu_md_plain(&plain, 4, y->desc.dims, dt)) {
            rc = cpu_fail(e, err, IB_EUNSUPPORTED, "bad Y");
            goto fail;
        }
        if ((rc = cpu_def(e, y, &plain, NULL, err)))
            goto fail;
        dst_data = D == 1 ? y->data : NULL;
    }
    if (!dst_data && !(dst_data = cpu_alloc(e, dnnl_memory_desc_get_size(&dst)))) {
        rc = cpu_fail(e, err, IB_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = cpu_mem(e, &dst, dst_data, &m, err)))
        goto fail;
    ARG(DNNL_ARG_DST_LAYER, m);
    cpu_val *outs[2] = {yh, yc};
    const dnnl_memory_desc_t *omd[2] = {&dit, &ditc};
    for (int k = 0; k < 2; k++) {
        if (!outs[k])
            continue;
        if (cpu_md_plain(&plain, 3, outs[k]->desc.dims, omd[k]->data_type) ||
            (rc = cpu_def(e, outs[k], &plain, NULL, err)) ||
            (rc = cpu_mem(e, omd[k], outs[k]->data, &m, err))) {
            rc = rc ? rc : cpu_fail(e, err, IB_EUNSUPPORTED, "bad Y_h/Y_c");
            goto fail;
        }
        ARG(k ? DNNL_ARG_DST_ITER_C : DNNL_ARG_DST_ITER, m);
    }
#undef ARG
    if ((rc = cpu_add_prim(e, pd, args, na, err)))
        return rc;
    if (y && D == 2) { /* [T, N, 2, H] -> [T, 2, N, H] */
        cpu_copy_ctx *k = ib_calloc(1, sizeof *k);
        if (!k)
            return cpu_fail(e, err, IB_ENOMEM, "out of memory");
        k->nd = 4;
        int64_t dims[4] = {T, 2, N, H}, strides[4] = {N * 2 * H, H, 2 * H, 1};
        memcpy(k->dims, dims, sizeof dims);
        memcpy(k->st, strides, sizeof strides);
        k->esize = dnnl_data_type_size(dt);
        k->src = dst_data;
        k->dst = y->data;
        cpu_copy_collapse(k);
        return cpu_add_kernel(e, cpu_copy_run, k, err);
    }
    return IB_OK;
fail:
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

const cpu_op cpu_ops_rnn[] = {
    {"", "LSTM", lstm_supports, lstm_compile},
    {NULL, NULL, NULL, NULL},
};
