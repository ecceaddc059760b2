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
 * the convolution keeps the fp16 path. Activations stay float32 NCHW between ops, so each int8
 * convolution pays a quantisation pass and a float epilogue; int8 tensors chained from one
 * convolution to the next (INT8_CONFIG, int8 y) are the next step.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

/* The store's int8 form of a filter: inv_s [K] floats, then q [K][R][S][C] at 256 bytes. */
typedef struct qf_src {
    const float *w;
    int64_t K, C, RS;
} qf_src;

static void qf_fill(void *user, void *dst)
{
    const qf_src *s = user;
    cu_quant_filter_s8(s->w, s->K, s->C, s->RS, (int8_t *)dst + cu_s8_offset(s->K), dst);
}

typedef struct conv8_k {
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    size_t ws;
    const void *x8, *w8;
    float *acc, *y;
    const float *inv_sw, *bias, *z;
    float inv_sx, a, b;
    int act;
    int64_t N, K, PQ;
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
    return cudnnConvolutionForward(e->ctx->dnn, &one, k->xd, k->x8, k->wd, k->w8, k->cd,
                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws, k->ws,
                                   &zero, k->yd, k->acc);
}

static int run_conv8(cu_exec *e, void *p, ib_err *err)
{
    conv8_k *k = p;
    int rc = cu_check_dnn(e, err, conv8_call(e, k, e->ws), "int8 convolution forward");
    if (rc)
        return rc;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_epi_i8conv(e->ctx->stream, k->acc, k->y, k->inv_sw,
                                                   k->inv_sx, k->bias, k->z, k->N, k->K, k->PQ,
                                                   k->act, k->a, k->b),
                       "int8 convolution epilogue");
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
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *bias = cu_in(e, n, 2), *z = cu_in(e, n, 3);
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
    float sx = cu_s8_range_scale(x);
    int64_t RS = (int64_t)g->R * g->S;
    qf_src src = {w->host, g->K, g->C, RS};
    size_t nbytes = cu_s8_offset(g->K) + (size_t)((int64_t)g->K * g->C * RS);
    void *wq = NULL;
    if ((rc = cu_weight_get_derived(e->ctx, w->host, CU_W_S8_KRSC, nbytes, qf_fill, &src, &wq,
                                    err)) ||
        (rc = cu_exec_hold_weight(e, w->host, CU_W_S8_KRSC, err))) {
        conv8_free(k);
        return rc;
    }
    cu_cvt cv;
    if ((rc = cu_cvt_prepare(e, x, CU_CVT_S8_NHWC, sx, &cv, err))) {
        conv8_free(k);
        return rc;
    }
    void *acc = NULL;
    if ((rc = cu_shared_block(e, &e->f32, &e->f32_bytes,
                              (size_t)g->N * g->K * g->P * g->Q * sizeof(float), &acc, err))) {
        conv8_free(k);
        return rc;
    }
    k->x8 = cv.dst;
    k->w8 = (const int8_t *)wq + cu_s8_offset(g->K);
    k->acc = acc;
    k->y = y->dev;
    k->inv_sw = wq;
    k->inv_sx = 1.0f / sx;
    k->bias = bias ? bias->dev : NULL;
    k->z = z ? z->dev : NULL;
    k->act = act;
    k->a = aa;
    k->b = ab;
    k->N = g->N;
    k->K = g->K;
    k->PQ = (int64_t)g->P * g->Q;
    if (!cu_dnn_probe(e, k->ws, conv8_call, k)) {
        conv8_free(k);
        return IB_OK; /* cuDNN does not run it here: the fp16 path */
    }
    cu_need_ws(e, k->ws);
    if ((rc = cu_cvt_add(e, &cv, err))) {
        conv8_free(k);
        return rc;
    }
    if ((rc = cu_add_step(e, run_conv8, k, conv8_free, err)))
        return rc;
    cu_step_kind(e, "cudnn-i8");
    *done = true;
    return IB_OK;
}
