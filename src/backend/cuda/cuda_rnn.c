/*
 * cuda_rnn.c - ONNX LSTM on the GPU, the subset RNN-T's encoder and prediction network use
 * (the cpu backend's, dnnl_rnn.c): one direction, forward; ONNX's default activations; no
 * peepholes, clip or input_forget; sequence_lens absent or all equal to T; W, R and B
 * constant; initial_h / initial_c optional.
 *
 *   G = X W^T + (Wb + Rb)    all T steps at once: one cuBLASLt GEMM, the bias in its epilogue
 *   per step t:  r = h_{t-1} R^T          cuBLASLt, planned once for [B, H] x [H, 4H]
 *                c_t, h_t = cell(G[t] + r, c_{t-1})   one kernel (ibk_lstm_cell), h_t into Y[t]
 *
 * One step function runs the whole recurrence, so the exec's CUDA Graph captures all of its
 * launches. Written without a GPU (issue 25): it has not run on a device yet; the shared
 * conformance cases (cuda_ops_rnn) check it against the reference kernels there.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

static bool sup_lstm(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                     const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int64_t H = ib_node_attr_int(n, "hidden_size", 0);
    if (strcmp(ib_node_attr_string(n, "direction", "forward"), "forward") != 0 || H <= 0 ||
        n->n_inputs < 3 || !in[0] || in[0]->ndim != 3 || in[0]->dtype != IB_DTYPE_FLOAT32 ||
        ib_node_attr_int(n, "layout", 0) != 0 || ib_node_attr_int(n, "input_forget", 0) != 0 ||
        ib_node_attr(n, "clip") || ib_node_attr(n, "activations"))
        return false;
    int64_t T = in[0]->dims[0], B = in[0]->dims[1], I = in[0]->dims[2];
    if (!ib_tensor_desc_is_f32(in[1], 3, 1, 4 * H, I) ||
        !ib_tensor_desc_is_f32(in[2], 3, 1, 4 * H, H) || !cu_is_const(g, n, 1) ||
        !cu_is_const(g, n, 2) || T * B > 0x7fffffffLL)
        return false;
    if (n->n_inputs > 3 && in[3] &&
        (!ib_tensor_desc_is_f32(in[3], 2, 1, 8 * H, 0) || !cu_is_const(g, n, 3)))
        return false;
    if (n->n_inputs > 4 && in[4]) { /* sequence_lens: only when every entry is T */
        const ib_value *v = ib_node_input(g, n, 4);
        if (!cu_is_const(g, n, 4) || v->constant->desc.dtype != IB_DTYPE_INT32 ||
            ib_tensor_desc_numel(&v->constant->desc) != B)
            return false;
        for (int64_t i = 0; i < B; i++)
            if (((const int32_t *)v->constant->data)[i] != T)
                return false;
    }
    for (uint32_t k = 5; k < 7; k++)
        if (n->n_inputs > k && in[k] && !ib_tensor_desc_is_f32(in[k], 3, 1, B, H))
            return false;
    if ((n->n_inputs > 7 && in[7]) || n->n_outputs > 3) /* peepholes */
        return false;
    const ib_tensor_desc *y = cu_out_desc(g, n, 0), *yh = cu_out_desc(g, n, 1),
                         *yc = cu_out_desc(g, n, 2);
    if (y && (y->ndim != 4 || y->dims[0] != T || y->dims[1] != 1 || y->dims[2] != B ||
              y->dims[3] != H || y->dtype != IB_DTYPE_FLOAT32))
        return false;
    return (!yh || ib_tensor_desc_is_f32(yh, 3, 1, B, H)) &&
           (!yc || ib_tensor_desc_is_f32(yc, 3, 1, B, H));
}

typedef struct lstm_k {
    cu_lt *rec;           /* h_prev [B, H] x R^T -> r [B, 4H] */
    const float *G, *R;   /* G [T, B, 4H] (private), R [4H, H] */
    float *r, *h[2], *c;  /* private: [B, 4H], ping-pong [B, H], [B, H] */
    const float *h0, *c0; /* initial states or NULL (zeros) */
    float *y, *yh, *yc;   /* outputs or NULL */
    int64_t T, B, H;
} lstm_k;

static void lstm_free(void *p)
{
    lstm_k *k = p;
    if (!k)
        return;
    cu_lt_free(k->rec);
    ib_free(k);
}

static int run_lstm(cu_exec *e, void *p, ib_err *err)
{
    lstm_k *k = p;
    cudaStream_t s = e->ctx->stream;
    size_t bh = (size_t)(k->B * k->H) * sizeof(float);
    int rc = cu_check_rt(e, err,
                         k->h0 ? cudaMemcpyAsync(k->h[0], k->h0, bh, cudaMemcpyDeviceToDevice, s)
                               : cudaMemsetAsync(k->h[0], 0, bh, s),
                         "LSTM initial h");
    if (!rc)
        rc = cu_check_rt(e, err,
                         k->c0 ? cudaMemcpyAsync(k->c, k->c0, bh, cudaMemcpyDeviceToDevice, s)
                               : cudaMemsetAsync(k->c, 0, bh, s),
                         "LSTM initial c");
    for (int64_t t = 0; !rc && t < k->T; t++) {
        float *hn = k->h[(t + 1) & 1];
        rc = cu_lt_run(e, k->rec, k->h[t & 1], k->R, k->r, err);
        if (!rc)
            rc = cu_check_rt(e, err,
                             (cudaError_t)ibk_lstm_cell(s, k->G + t * k->B * 4 * k->H, k->r, k->c,
                                                        k->c, hn, k->y ? k->y + t * k->B * k->H
                                                                       : NULL,
                                                        k->B, k->H),
                             "LSTM cell kernel");
    }
    if (!rc && k->yh)
        rc = cu_check_rt(e, err,
                         cudaMemcpyAsync(k->yh, k->h[k->T & 1], bh, cudaMemcpyDeviceToDevice, s),
                         "LSTM Y_h");
    if (!rc && k->yc)
        rc = cu_check_rt(e, err, cudaMemcpyAsync(k->yc, k->c, bh, cudaMemcpyDeviceToDevice, s),
                         "LSTM Y_c");
    return rc;
}

/* Wb + Rb (the first and second 4H of B) as a device block, or NULL without B. */
static int lstm_bias(cu_exec *e, const ib_node *n, int64_t H, const float **out, ib_err *err)
{
    *out = NULL;
    const ib_value *v = n->n_inputs > 3 ? ib_node_input(e->graph, n, 3) : NULL;
    if (!v || !v->constant)
        return IB_OK;
    const float *b = v->constant->data;
    float *sum = ib_calloc((size_t)(4 * H), sizeof *sum);
    if (!sum)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    for (int64_t i = 0; i < 4 * H; i++)
        sum[i] = b[i] + b[4 * H + i];
    void *dev = NULL;
    size_t bytes = (size_t)(4 * H) * sizeof *sum;
    int rc = cu_alloc(e, bytes, &dev, err);
    if (!rc)
        rc = cu_check_rt(e, err, cudaMemcpy(dev, sum, bytes, cudaMemcpyHostToDevice), "LSTM bias");
    ib_free(sum);
    *out = dev;
    return rc;
}

static int comp_lstm(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *r = cu_in(e, n, 2);
    cu_val *h0 = cu_in(e, n, 5), *c0 = cu_in(e, n, 6);
    cu_val *y = cu_out(e, n, 0), *yh = cu_out(e, n, 1), *yc = cu_out(e, n, 2);
    int64_t T = x->desc.dims[0], B = x->desc.dims[1], I = x->desc.dims[2];
    int64_t H = ib_node_attr_int(n, "hidden_size", 0);
    lstm_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (lstm_k){.R = r->dev, .h0 = h0 ? h0->dev : NULL, .c0 = c0 ? c0->dev : NULL,
                  .y = y ? y->dev : NULL, .yh = yh ? yh->dev : NULL, .yc = yc ? yc->dev : NULL,
                  .T = T, .B = B, .H = H};
    const float *bias = NULL;
    void *G = NULL, *rr = NULL, *h[2] = {NULL, NULL}, *c = NULL;
    size_t bh = (size_t)(B * H) * sizeof(float);
    int rc = lstm_bias(e, n, H, &bias, err);
    if (!rc)
        rc = cu_alloc(e, (size_t)(T * B * 4 * H) * sizeof(float), &G, err);
    if (!rc)
        rc = cu_alloc(e, 4 * bh, &rr, err);
    if (!rc)
        rc = cu_alloc(e, bh, &h[0], err);
    if (!rc)
        rc = cu_alloc(e, bh, &h[1], err);
    if (!rc)
        rc = cu_alloc(e, bh, &c, err);
    if (rc) {
        lstm_free(k);
        return rc;
    }
    k->G = G;
    k->r = rr;
    k->h[0] = h[0];
    k->h[1] = h[1];
    k->c = c;
    /* the input projection of every step (its own step, before the recurrence) */
    cu_mm_geom gx = {.M = T * B, .N = 4 * H, .K = I, .batch = 1, .tb = true, .a = x->dev,
                     .b = w->dev, .bias = bias, .y = G, .alpha = 1.f};
    if (T * B > 0 && (rc = cu_add_gemm(e, &gx, err))) {
        lstm_free(k);
        return rc;
    }
    cu_mm_geom gr = {.M = B, .N = 4 * H, .K = H, .batch = 1, .tb = true, .a = k->h[0],
                     .b = k->R, .y = k->r, .alpha = 1.f};
    if ((rc = cu_lt_plan(e, &gr, &k->rec, err))) {
        lstm_free(k);
        return rc;
    }
    if ((rc = cu_add_step(e, run_lstm, k, lstm_free, err)))
        return rc;
    cu_step_kind(e, "lstm");
    return IB_OK;
}

const cu_op cu_ops_rnn[] = {
    {"", "LSTM", sup_lstm, comp_lstm},
    {NULL, NULL, NULL, NULL},
};
