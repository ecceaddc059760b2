/*
 * cuda_conv_i8.c - the int8 convolutions of an int8 session on cuda (issue 24: INT8 through
 * the existing calibration, cuDNN int8 convolutions), written 2026-12-05 without a GPU, not yet
 * run.
 *
 * A 2-D convolution with one group whose X has a calibrated range and whose filter is a
 * constant, with channels in and out multiples of 4 (cuDNN's int8 kernels read 4 channels at a
 * time; a 3-channel stem stays as at fp16), runs as:
 *
 *   1. X quantised symmetrically, clamp(rint(x * sx), -127, 127), sx = 127 / max|range|, and
 *      moved from NCHW to NHWC in the same pass (cu_cvt CU_CVT_S8_NHWC, step kind "quant8";
 *      the same value read by two convolutions, as a ResNet block's input by its first conv
 *      and its downsample, is converted once when they are consecutive);
 *   2. cudnnConvolutionForward in cuDNN's INT8_EXT_CONFIG: x and w int8 NHWC, int32
 *      accumulation, y float NHWC into a block the int8 convolutions share; the only algorithm
 *      for it, IMPLICIT_PRECOMP_GEMM ("cudnn-i8");
 *   3. one epilogue (ibk_epi_i8conv): y NCHW float32 = act(acc / (sx * sw[k]) + bias[k] + z).
 *
 * The filter is quantised once per device store on the host, per output channel
 * (cuda_quant.c: KCRS float32 -> KRSC int8, the cpu backend's per-channel weight scales).
 * A probe call at compile on the planned buffers decides: when cuDNN refuses the configuration
 * the convolution keeps the fp16 path.
 *
 * int8 chains (eighth session, 2026-12-05, not yet run): a value made by such a convolution,
 * with a calibrated range, read only by such convolutions (as X or as the residual Z) and not
 * crossing the subgraph's edge is held as int8 NHWC at its own range's scale (cu_val.q8,
 * cu_conv_mark_q8), in the first quarter of its float32 slot. Its producer's epilogue writes it
 * so (step 3 quantises instead of writing float32 NCHW), its readers skip step 1 (X) or read
 * it in the epilogue (Z), so between ResNet50's convolutions nothing moves float32 but the
 * convolution's own float result (cuDNN's int8 output with per-channel scales needs float y):
 * 4 + 1 + 1 bytes an element instead of 4 + 4 + 4 + 4 + 1. A convolution that cuDNN refuses at
 * int8 after all (the probe below) still compiles on the fp16 path: cu_conv_q8_unwrap gives it
 * float32 NCHW stand-ins for its q8 values (a "dequant8" step each) and cu_conv_q8_rewrap
 * quantises its result into the int8 value ("quant8").
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

/* The store's 8-bit form of a filter: inv_s [K] floats, then q [K][R][S][C] at 256 bytes,
 * int8 or e4m3. */
typedef struct qf_src {
    const float *w;
    int64_t K, C, RS;
    bool fp8;
} qf_src;

static void qf_fill(void *user, void *dst)
{
    const qf_src *s = user;
    void *q = (uint8_t *)dst + cu_s8_offset(s->K);
    if (s->fp8)
        cu_quant_filter_e4m3(s->w, s->K, s->C, s->RS, q, dst);
    else
        cu_quant_filter_s8(s->w, s->K, s->C, s->RS, q, dst);
}

int cu_conv8_prepare(cu_exec *e, const ib_node *n, const cu_conv2d *g, bool fp8, cu_conv8 *c,
                     ib_err *err)
{
    memset(c, 0, sizeof *c);
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *bias = cu_in(e, n, 2), *z = cu_in(e, n, 3);
    cu_val *y = cu_out(e, n, 0);
    if (!cu_fused_act(n, &c->act, &c->a, &c->b))
        return cu_fail(e, err, IB_EUNSUPPORTED, "activation not supported");
    const int wfmt = fp8 ? CU_W_E4M3_KRSC : CU_W_S8_KRSC;
    float sx = fp8 ? cu_e4m3_scale(cu_range_amax(x)) : cu_s8_range_scale(x);
    int64_t RS = (int64_t)g->R * g->S;
    qf_src src = {w->host, g->K, g->C, RS, fp8};
    size_t nbytes = cu_s8_offset(g->K) + (size_t)((int64_t)g->K * g->C * RS);
    void *wq = NULL;
    int rc;
    if ((rc = cu_weight_get_derived(e->ctx, w->host, wfmt, nbytes, qf_fill, &src, &wq, err)) ||
        (rc = cu_exec_hold_weight(e, w->host, wfmt, err)))
        return rc;
    if (x->q8) /* an int8 chain's X is already int8 NHWC */
        c->cv = (cu_cvt){.cached = true, .dst = x->dev};
    else if ((rc = cu_cvt_prepare(e, x, fp8 ? CU_CVT_E4M3_NHWC : CU_CVT_S8_NHWC, sx, &c->cv,
                                  err)))
        return rc;
    void *acc = NULL;
    if ((rc = cu_shared_block(e, &e->f32, &e->f32_bytes,
                              (size_t)g->N * g->K * g->P * g->Q * sizeof(float), &acc, err)))
        return rc;
    c->x8 = c->cv.dst;
    c->w8 = (const uint8_t *)wq + cu_s8_offset(g->K);
    c->acc = acc;
    c->y = y->dev;
    c->y_q8 = y->q8;
    c->sy = y->q8 ? cu_s8_range_scale(y) : 0.0f;
    c->inv_sw = wq;
    c->inv_sx = 1.0f / sx;
    c->bias = bias ? bias->dev : NULL;
    c->z = z ? z->dev : NULL;
    c->z_q8 = z && z->q8;
    c->inv_sz = c->z_q8 ? 1.0f / cu_s8_range_scale(z) : 0.0f;
    c->N = g->N;
    c->K = g->K;
    c->PQ = (int64_t)g->P * g->Q;
    return IB_OK;
}

int cu_conv8_epilogue(cu_exec *e, const cu_conv8 *c, ib_err *err)
{
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_epi_i8conv(e->ctx->stream, c->acc, c->y, c->y_q8, c->sy,
                                                   c->inv_sw, c->inv_sx, c->bias, c->z, c->z_q8,
                                                   c->inv_sz, c->N, c->K, c->PQ, c->act, c->a,
                                                   c->b),
                       "8-bit convolution epilogue");
}

typedef struct conv8_k {
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    size_t ws;
    cu_conv8 c;
} conv8_k;

static void conv8_free(void *p)
{
    conv8_k *k = p;
    if (!k)
        return;
    cu_dnn_destroy_fwd(k->xd, k->yd, k->wd, k->cd);
    ib_free(k);
}

static cudnnStatus_t conv8_call(cu_exec *e, const void *p, void *ws)
{
    const conv8_k *k = p;
    const float one = 1.f, zero = 0.f;
    return cudnnConvolutionForward(e->ctx->dnn, &one, k->xd, k->c.x8, k->wd, k->c.w8, k->cd,
                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws, k->ws,
                                   &zero, k->yd, k->c.acc);
}

static int run_conv8(cu_exec *e, void *p, ib_err *err)
{
    conv8_k *k = p;
    int rc = cu_check_dnn(e, err, conv8_call(e, k, e->ws), "int8 convolution forward");
    return rc ? rc : cu_conv8_epilogue(e, &k->c, err);
}

/* The descriptors; IB_EUNSUPPORTED (err untouched) when cuDNN refuses the configuration. */
static int describe(conv8_k *k, const cu_conv2d *g)
{
    if (cudnnCreateTensorDescriptor(&k->xd) || cudnnCreateTensorDescriptor(&k->yd) ||
        cudnnCreateFilterDescriptor(&k->wd) || cudnnCreateConvolutionDescriptor(&k->cd) ||
        cudnnSetTensor4dDescriptor(k->xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_INT8, g->N, g->C, g->H,
                                   g->W) ||
        cudnnSetTensor4dDescriptor(k->yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, g->N, g->K, g->P,
                                   g->Q) ||
        cudnnSetFilter4dDescriptor(k->wd, CUDNN_DATA_INT8, CUDNN_TENSOR_NHWC, g->K, g->C, g->R,
                                   g->S) ||
        cudnnSetConvolution2dDescriptor(k->cd, g->pad[0], g->pad[1], g->stride[0], g->stride[1],
                                        g->dil[0], g->dil[1], CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_INT32))
        return IB_EUNSUPPORTED;
    int n = 0, c = 0, h = 0, w = 0;
    if (cudnnGetConvolution2dForwardOutputDim(k->cd, k->xd, k->wd, &n, &c, &h, &w) ||
        n != g->N || c != g->K || h != g->P || w != g->Q)
        return IB_EUNSUPPORTED;
    return IB_OK;
}

int cu_add_conv_i8(cu_exec *e, const ib_node *n, const cu_conv2d *g, bool *done, ib_err *err)
{
    *done = false;
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *z = cu_in(e, n, 3);
    cu_val *y = cu_out(e, n, 0);
    int act;
    float aa, ab;
    if (!e->int8 || !x->has_range || !w->host || x->half || y->half || (z && z->half) ||
        g->C % 4 || g->K % 4 || !cu_fused_act(n, &act, &aa, &ab))
        return IB_OK;
    conv8_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    int rc = describe(k, g);
    if (!rc && cudnnGetConvolutionForwardWorkspaceSize(
                   e->ctx->dnn, k->xd, k->wd, k->cd, k->yd,
                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &k->ws) != CUDNN_STATUS_SUCCESS)
        rc = IB_EUNSUPPORTED;
    if (!rc && k->ws > CU_CONV_WS_MAX)
        rc = IB_EUNSUPPORTED;
    if (rc) {
        conv8_free(k);
        return IB_OK; /* the fp16 path */
    }
    if ((rc = cu_conv8_prepare(e, n, g, false, &k->c, err))) {
        conv8_free(k);
        return rc;
    }
    if (!cu_dnn_probe(e, k->ws, conv8_call, k)) {
        conv8_free(k);
        return IB_OK; /* cuDNN does not run it here: the fp16 path */
    }
    cu_need_ws(e, k->ws);
    if ((rc = cu_cvt_add(e, &k->c.cv, err))) {
        conv8_free(k);
        return rc;
    }
    if ((rc = cu_add_step(e, run_conv8, k, conv8_free, err)))
        return rc;
    cu_step_kind(e, "cudnn-i8");
    ib_prec_notes_set(&e->precs, IB_PRECISION_INT8); /* backend ABI 10 */
    *done = true;
    return IB_OK;
}

/* ---- int8 chains -------------------------------------------------------------------- */

/* A node cu_add_conv_i8 takes by its shapes (cuDNN may still refuse it at compile): a 2-D
 * Conv or FusedConv with one group over float32, a constant filter, channels in and out
 * multiples of 4, an X with a range and an activation the epilogue has. */
static bool q8_conv(cu_exec *e, const ib_node *n)
{
    if (!cu_is_conv_node(n) || n->n_inputs < 2)
        return false;
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    int act;
    float a, b;
    return x && w && y && w->host && x->has_range && x->desc.ndim == 4 && w->desc.ndim == 4 &&
           x->desc.dtype == IB_DTYPE_FLOAT32 && ib_node_attr_int(n, "group", 1) == 1 &&
           x->desc.dims[1] % 4 == 0 && w->desc.dims[0] % 4 == 0 &&
           cu_fused_act(n, &act, &a, &b);
}

void cu_conv_mark_q8(cu_exec *e, const ib_backend_subgraph *sg)
{
    if (!e->int8)
        return;
    uint8_t *in = cu_conv_chain_values(e, sg, q8_conv);
    if (!in)
        return; /* no chains: every value stays float32 NCHW */
    for (uint32_t i = 0; i < e->n_vals; i++)
        e->vals[i].q8 = in[i] && e->vals[i].has_range; /* its own scale comes from its range */
    ib_free(in);
}

typedef struct q8x_k {
    const void *src;
    void *dst;
    float scale;
    bool to_f32;
    int64_t N, C, HW;
} q8x_k;

static int run_q8x(cu_exec *e, void *p, ib_err *err)
{
    q8x_k *k = p;
    cudaStream_t s = e->ctx->stream;
    int st = k->to_f32 ? ibk_nhwc_s8_to_nchw(s, k->src, k->scale, k->dst, k->N, k->C, k->HW)
                       : ibk_nchw_to_nhwc_s8(s, k->src, k->dst, k->scale, k->N, k->C, k->HW);
    return cu_check_rt(e, err, (cudaError_t)st, "int8 chain conversion");
}

/* A step converting v between its int8 NHWC storage q and a float32 NCHW f. */
static int add_q8x(cu_exec *e, const cu_val *v, const void *q, void *f, bool to_f32, ib_err *err)
{
    q8x_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    float s = cu_s8_range_scale(v);
    const int64_t *d = v->desc.dims;
    *k = (q8x_k){.src = to_f32 ? q : f, .dst = to_f32 ? f : (void *)(uintptr_t)q,
                 .scale = to_f32 ? 1.0f / s : s, .to_f32 = to_f32, .N = d[0], .C = d[1],
                 .HW = d[2] * d[3]};
    int rc = cu_add_step(e, run_q8x, k, NULL, err);
    if (!rc)
        cu_step_kind(e, to_f32 ? "dequant8" : "quant8");
    return rc;
}

int cu_conv_q8_unwrap(cu_exec *e, const ib_node *n, cu_q8_saved *s, ib_err *err)
{
    memset(s, 0, sizeof *s);
    cu_val *v[3] = {cu_in(e, n, 0), n->n_inputs > 3 ? cu_in(e, n, 3) : NULL, cu_out(e, n, 0)};
    for (int i = 0; i < 3; i++) {
        if (!v[i] || !v[i]->q8)
            continue;
        void *f = NULL;
        size_t bytes = (size_t)ib_tensor_desc_numel(&v[i]->desc) * sizeof(float);
        int rc = cu_alloc(e, bytes, &f, err);
        if (!rc && i < 2)
            rc = add_q8x(e, v[i], v[i]->dev, f, true, err);
        if (rc) {
            cu_conv_q8_rewrap(e, s, NULL);
            return rc;
        }
        s->v[i] = v[i];
        s->dev[i] = v[i]->dev;
        v[i]->dev = f;
        v[i]->q8 = false;
    }
    return IB_OK;
}

int cu_conv_q8_rewrap(cu_exec *e, cu_q8_saved *s, ib_err *err)
{
    int rc = IB_OK;
    for (int i = 0; i < 3; i++) {
        cu_val *v = s->v[i];
        if (!v)
            continue;
        void *f = v->dev;
        v->dev = s->dev[i];
        v->q8 = true;
        if (i == 2 && err && !rc) /* y: its float32 result into the int8 value */
            rc = add_q8x(e, v, v->dev, f, false, err);
        s->v[i] = NULL;
    }
    return rc;
}
