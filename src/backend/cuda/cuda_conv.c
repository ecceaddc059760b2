/*
 * cuda_conv.c - Conv and inferbench.FusedConv (1D/2D/3D, groups, strides,
 * dilations, symmetric pads or auto_pad) on cuDNN's convolution forward,
 * followed by one epilogue kernel (bias + residual Z + Relu/LeakyRelu/Clip),
 * and 1-D/2-D MaxPool/AveragePool on our pooling kernel (asymmetric pads as
 * in TF-exported ResNet50, dilations, ceil_mode), and ConvTranspose on cuDNN's
 * backward-data convolution (3D U-Net's upsampling). Tensors are float32 NCHW
 * (the plain ONNX layout); 1-D ops run as 2-D with H = 1.
 *
 * Precision: fp32 pins CUDNN_FMA_MATH (no TF32, so results match the
 * reference at fp32 tolerance); fp16 allows tensor-op math with down-
 * conversion of the fp32 tensors (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
 * bf16 is refused (supports_op), as cuDNN's legacy API has no bf16 math mode
 * for fp32 tensors. The algorithm: from a batch of CU_CONV_FIND_BATCH up, the fastest that
 * cuDNN times (cudnnFindConvolutionForwardAlgorithm, once per geometry and context: issue 24's
 * "algorithm choice timed once per shape and cached"; not yet run on a GPU); below it, and
 * when timing fails, cuDNN's first heuristic choice (cudnnGetConvolutionForwardAlgorithm_v7);
 * either way one whose workspace fits 256 MiB and, at fp32, that is not tensor-op (TF32).
 */
#include <math.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "ir/op.h"
#include "ir/ops/window.h"

/* Smaller batches (the warm-up's tails, SingleStream) take the heuristic's choice: timing
 * every variant's every convolution would lengthen compile for little. */
#define CU_CONV_FIND_BATCH 8

/* Geometry from the ONNX attributes; false when cuDNN cannot express it
 * (asymmetric pads, rank, ceil_mode for pools). */
typedef struct cv_geom {
    int nd;                    /* tensor rank for cuDNN (4 or 5) */
    int x[5], w[5], y[5];      /* dims */
    int pad[3], stride[3], dil[3], k[3];
    int group;
} cv_geom;

static bool window_of(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x,
                      const int64_t *kernel, bool allow_dil, ib_window *w)
{
    ib_op_ctx oc = {.graph = g, .node = n, .scratch = NULL, .scratch_size = 0};
    ib_err err;
    ib_err_clear(&err);
    return ib_window_forward(&oc, &err, x, kernel, allow_dil, true, w) == IB_OK;
}

static bool fits_int(int64_t v)
{
    return v >= 0 && v <= INT32_MAX;
}

/* Fill the spatial part of cg from w; 1-D becomes 2-D with H = 1. */
static bool geom_from_window(const ib_window *w, cv_geom *cg)
{
    int nsp = w->nsp;
    if (nsp < 1 || nsp > 3)
        return false;
    int off = nsp == 1 ? 1 : 0;
    int sp = nsp == 1 ? 2 : nsp;
    cg->nd = sp + 2;
    for (int i = 0; i < sp; i++) {
        cg->pad[i] = 0;
        cg->stride[i] = 1;
        cg->dil[i] = 1;
        cg->k[i] = 1;
    }
    for (int i = 0; i < nsp; i++) {
        if (w->pad_b[i] != w->pad_e[i] || !fits_int(w->pad_b[i]) || !fits_int(w->stride[i]) ||
            !fits_int(w->dil[i]) || !fits_int(w->k[i]))
            return false;
        cg->pad[i + off] = (int)w->pad_b[i];
        cg->stride[i + off] = (int)w->stride[i];
        cg->dil[i + off] = (int)w->dil[i];
        cg->k[i + off] = (int)w->k[i];
    }
    return true;
}

static bool dims_of(const ib_tensor_desc *d, int nd, int *out)
{
    /* rank 3 -> [N, C, 1, L] */
    for (int i = 0; i < nd; i++)
        out[i] = 1;
    if (d->ndim == 3) {
        if (!fits_int(d->dims[0]) || !fits_int(d->dims[1]) || !fits_int(d->dims[2]))
            return false;
        out[0] = (int)d->dims[0];
        out[1] = (int)d->dims[1];
        out[3] = (int)d->dims[2];
        return true;
    }
    for (int i = 0; i < nd; i++) {
        if (!fits_int(d->dims[i]))
            return false;
        out[i] = (int)d->dims[i];
    }
    return true;
}

static bool conv_geom(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x,
                      const ib_tensor_desc *w, const ib_tensor_desc *y, cv_geom *cg)
{
    memset(cg, 0, sizeof *cg);
    if (x->ndim < 3 || x->ndim > 5 || w->ndim != x->ndim || !y || y->ndim != x->ndim)
        return false;
    ib_window win;
    if (!window_of(g, n, x, w->dims + 2, true, &win) || !geom_from_window(&win, cg))
        return false;
    int64_t grp = ib_node_attr_int(n, "group", 1);
    if (grp < 1 || !fits_int(grp))
        return false;
    cg->group = (int)grp;
    return dims_of(x, cg->nd, cg->x) && dims_of(w, cg->nd, cg->w) && dims_of(y, cg->nd, cg->y);
}

/* Epilogue of a FusedConv (or InstanceNorm): activation as an ibk_unary_op and its
 * parameters (cuda_internal.h). Plain Conv and InstanceNormalization have no such attribute. */
bool cu_fused_act(const ib_node *n, int *act, float *a, float *b)
{
    const char *s = ib_node_attr_string(n, "activation", "");
    *a = 0.f;
    *b = 0.f;
    if (!s[0]) {
        *act = IBK_COPY;
    } else if (strcmp(s, "Relu") == 0) {
        *act = IBK_RELU;
    } else if (strcmp(s, "LeakyRelu") == 0) {
        *act = IBK_LEAKY_RELU;
        *a = ib_node_attr_float(n, "activation_alpha", 0.01f);
    } else if (strcmp(s, "Clip") == 0) {
        *act = IBK_CLIP;
        *a = ib_node_attr_float(n, "clip_min", -INFINITY);
        *b = ib_node_attr_float(n, "clip_max", INFINITY);
    } else {
        return false;
    }
    return true;
}

static bool sup_conv(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                     const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    if (p == IB_PRECISION_BF16)
        return false;
    if (!in[0] || !in[1] || !cu_all_f32(n, in))
        return false;
    int act;
    float a, b;
    cv_geom cg;
    if (!cu_fused_act(n, &act, &a, &b) || !conv_geom(g, n, in[0], in[1], cu_out_desc(g, n, 0), &cg))
        return false;
    const ib_tensor_desc *y = cu_out_desc(g, n, 0);
    if (n->n_inputs > 2 && in[2] && ib_tensor_desc_numel(in[2]) != y->dims[1])
        return false;
    if (n->n_inputs > 3 && in[3] && !ib_tensor_desc_equal(in[3], y))
        return false;
    return true;
}

typedef struct conv_k {
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws;
    const void *x, *w;
    void *y;
    const float *bias, *z;
    int act;
    float a, b;
    int64_t N, C, inner;
} conv_k;

void cu_dnn_destroy_fwd(cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t yd,
                        cudnnFilterDescriptor_t wd, cudnnConvolutionDescriptor_t cd)
{
    if (xd)
        (void)cudnnDestroyTensorDescriptor(xd);
    if (yd)
        (void)cudnnDestroyTensorDescriptor(yd);
    if (wd)
        (void)cudnnDestroyFilterDescriptor(wd);
    if (cd)
        (void)cudnnDestroyConvolutionDescriptor(cd);
}

static void conv_free(void *p)
{
    conv_k *k = p;
    if (!k)
        return;
    cu_dnn_destroy_fwd(k->xd, k->yd, k->wd, k->cd);
    ib_free(k);
}

static int run_conv(cu_exec *e, void *p, ib_err *err)
{
    conv_k *k = p;
    const float one = 1.f, zero = 0.f;
    int rc = cu_check_dnn(e, err,
                          cudnnConvolutionForward(e->ctx->dnn, &one, k->xd, k->x, k->wd, k->w,
                                                  k->cd, k->algo, e->ws, k->ws, &zero, k->yd, k->y),
                          "convolution forward");
    if (rc || (!k->bias && !k->z && k->act == IBK_COPY))
        return rc;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_bias_act(e->ctx->stream, k->y, k->bias, k->z, k->N, k->C,
                                                 k->inner, k->act, k->a, k->b),
                       "conv epilogue kernel");
}

static int tensor_desc(cu_exec *e, cudnnTensorDescriptor_t *d, int nd, const int *dims,
                       ib_err *err)
{
    int st[5];
    st[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; i--)
        st[i] = st[i + 1] * dims[i + 1];
    int rc = cu_check_dnn(e, err, cudnnCreateTensorDescriptor(d), "tensor descriptor");
    if (rc)
        return rc;
    return cu_check_dnn(e, err, cudnnSetTensorNdDescriptor(*d, CUDNN_DATA_FLOAT, nd, dims, st),
                        "tensor descriptor");
}

/* The key of a forward convolution for the algorithm cache: geometry, math, precision and
 * storage (NCHW float32 or the islands' NHWC float16). */
static int algo_key(const cv_geom *cg, cudnnMathType_t math, enum ib_precision p, bool f16,
                    int *key)
{
    int n = 0;
    key[n++] = f16;
    key[n++] = cg->nd;
    for (int i = 0; i < cg->nd; i++) {
        key[n++] = cg->x[i];
        key[n++] = cg->w[i];
    }
    for (int i = 0; i < cg->nd - 2; i++) {
        key[n++] = cg->pad[i];
        key[n++] = cg->stride[i];
        key[n++] = cg->dil[i];
    }
    key[n++] = cg->group;
    key[n++] = (int)math;
    key[n++] = (int)p;
    return n; /* <= 2 + 10 + 9 + 3 = 24 */
}

/* First usable entry of perf[0..got): succeeded, workspace within the limit, and not
 * tensor-op math at fp32 (TF32 would round the operands). -1 when none. */
static int usable(const cudnnConvolutionFwdAlgoPerf_t *perf, int got, enum ib_precision p)
{
    for (int i = 0; i < got; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= CU_CONV_WS_MAX &&
            (p == IB_PRECISION_FP16 || perf[i].mathType != CUDNN_TENSOR_OP_MATH))
            return i;
    return -1;
}

typedef struct fwd_descs {
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
} fwd_descs;

/* The precision a float32 convolution's algorithm multiplies at (backend ABI 10): 16-bit when
 * it runs on the tensor cores with conversion (what fp16 asks for), else float32. */
static enum ib_precision fwd_prec(const cu_exec *e, int math)
{
    return e->precision == IB_PRECISION_FP16 && (math == CUDNN_TENSOR_OP_MATH ||
                                                 math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
               ? IB_PRECISION_FP16
               : IB_PRECISION_FP32;
}

/* *used: the math type the picked algorithm runs with (its perf entry's). */
static int pick_fwd_algo(cu_exec *e, const fwd_descs *k, const cv_geom *cg, cudnnMathType_t math,
                         bool f16, cudnnConvolutionFwdAlgo_t *out, int *used, ib_err *err)
{
    cu_ctx *c = e->ctx;
    cudnnHandle_t h = c->dnn;
    int key[40] = {0};
    algo_key(cg, math, e->precision, f16, key);
    bool timed = cg->x[0] >= CU_CONV_FIND_BATCH;
    for (size_t i = 0; timed && i < c->algos.len; i++)
        if (!memcmp(c->algos.data[i].key, key, sizeof key)) {
            *out = (cudnnConvolutionFwdAlgo_t)c->algos.data[i].algo;
            *used = c->algos.data[i].math;
            return IB_OK;
        }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0, pick = -1;
    if (timed) {
        /* runs every algorithm on buffers cuDNN allocates (synchronous, outside any capture;
         * at compile nothing of this context is in flight); a failure (e.g. no memory for
         * its buffers) falls back to the heuristic */
        if (cudnnFindConvolutionForwardAlgorithm(h, k->xd, k->wd, k->cd, k->yd,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                 perf) == CUDNN_STATUS_SUCCESS)
            pick = usable(perf, got, e->precision);
        (void)cudaGetLastError();
    }
    if (pick >= 0) {
        cu_algo a;
        memcpy(a.key, key, sizeof key);
        a.algo = (int)perf[pick].algo;
        a.math = (int)perf[pick].mathType;
        if (IB_VEC_PUSH(&c->algos, a))
            return cu_fail(e, err, IB_ENOMEM, "out of memory");
        *out = perf[pick].algo;
        *used = (int)perf[pick].mathType;
        return IB_OK;
    }
    int rc = cu_check_dnn(e, err,
                          cudnnGetConvolutionForwardAlgorithm_v7(
                              h, k->xd, k->wd, k->cd, k->yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                              &got, perf),
                          "algorithm heuristic");
    if (rc)
        return rc;
    if ((pick = usable(perf, got, e->precision)) < 0)
        return cu_fail(e, err, IB_EUNSUPPORTED, "cuDNN offers no forward algorithm (%d tried)",
                       got);
    *out = perf[pick].algo;
    *used = (int)perf[pick].mathType;
    return IB_OK;
}

/* ---- NHWC float16 islands (ib_backend_config.nhwc_fp16, at fp16) ----------------------- */

/* A node an island may hold: a 2-D Conv or FusedConv over float32 with a constant filter,
 * whose geometry and activation cuDNN and the epilogue express, with channels in and out
 * (per group) multiples of 8 (what the tensor-core NHWC kernels take; a 3-channel stem
 * stays float32 NCHW). */
static bool island_conv(cu_exec *e, const ib_node *n)
{
    if (!cu_is_conv_node(n))
        return false;
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    cv_geom cg;
    int act;
    float a, b;
    return x && w && y && w->host && x->desc.ndim == 4 &&
           x->desc.dtype == IB_DTYPE_FLOAT32 && cu_fused_act(n, &act, &a, &b) &&
           conv_geom(e->graph, n, &x->desc, &w->desc, &y->desc, &cg) && cg.w[1] % 8 == 0 &&
           (cg.w[0] / cg.group) % 8 == 0;
}

bool cu_is_conv_node(const ib_node *n)
{
    return (!strcmp(n->op_type, "FusedConv") && !strcmp(n->domain, "inferbench")) ||
           (!strcmp(n->op_type, "Conv") && (!n->domain[0] || !strcmp(n->domain, "ai.onnx")));
}

uint8_t *cu_conv_chain_values(cu_exec *e, const ib_backend_subgraph *sg,
                              bool (*takes)(cu_exec *e, const ib_node *n))
{
    uint8_t *st = ib_calloc(e->n_vals ? e->n_vals : 1, 1); /* 1 candidate, 2 blocked */
    if (!st)
        return NULL;
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        const ib_node *n = &e->graph->nodes.data[sg->nodes[i]];
        bool t = takes(e, n);
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            cu_val *v = cu_in(e, n, k);
            if (v && !(t && (k == 0 || k == 3)))
                st[v - e->vals] |= 2;
        }
        cu_val *y = t ? cu_out(e, n, 0) : NULL;
        if (y)
            st[y - e->vals] |= 1;
    }
    for (uint32_t i = 0; i < e->n_vals; i++)
        st[i] = st[i] == 1 && !sg->bindings[i].boundary && !sg->bindings[i].constant;
    return st;
}

void cu_conv_mark_islands(cu_exec *e, const ib_backend_subgraph *sg)
{
    if (!e->ctx->nhwc_fp16 || e->precision != IB_PRECISION_FP16 || e->int8)
        return; /* int8: the int8 chains instead (cu_conv_mark_q8) */
    uint8_t *in = cu_conv_chain_values(e, sg, island_conv);
    if (!in)
        return; /* no islands: every value stays float32 NCHW */
    for (uint32_t i = 0; i < e->n_vals; i++)
        e->vals[i].half = in[i];
    ib_free(in);
}

typedef struct conv16_k {
    fwd_descs d;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws;
    const float *x32;  /* X as float32 NCHW to convert first, or NULL */
    void *x16;         /* X as NHWC float16 */
    const void *w16;
    void *acc;         /* the convolution's NHWC float16 result (Y's own storage when half) */
    void *y;
    bool y_f32, epi;
    const float *bias;
    const void *z;
    int z_kind, act;
    float a, b;
    int64_t N, Cin, HWin, K, HWout;
    /* fused: one cudnnConvolutionBiasActivationForward writes Y (NHWC float16) */
    bool fused;
    cudnnTensorDescriptor_t bd;     /* the float16 bias [1, K, 1, 1] */
    cudnnActivationDescriptor_t ad; /* Relu */
    const void *bias16;             /* float16 bias, or K zeros */
} conv16_k;

static void conv16_free(void *p)
{
    conv16_k *k = p;
    if (!k)
        return;
    cu_dnn_destroy_fwd(k->d.xd, k->d.yd, k->d.wd, k->d.cd);
    if (k->bd)
        (void)cudnnDestroyTensorDescriptor(k->bd);
    if (k->ad)
        (void)cudnnDestroyActivationDescriptor(k->ad);
    ib_free(k);
}

/* The fused form's one call: y = relu(conv(x) + z + bias), z absent = alpha2 0 (cuDNN still
 * reads a z pointer: y's own). */
static cudnnStatus_t conv16_fused_call(cu_exec *e, const void *p, void *ws)
{
    const conv16_k *k = p;
    const float one = 1.f, alpha2 = k->z ? 1.f : 0.f;
    return cudnnConvolutionBiasActivationForward(
        e->ctx->dnn, &one, k->d.xd, k->x16, k->d.wd, k->w16, k->d.cd, k->algo, ws, k->ws,
        &alpha2, k->d.yd, k->z ? k->z : k->y, k->bd, k->bias16, k->ad, k->d.yd, k->y);
}

static int run_conv16(cu_exec *e, void *p, ib_err *err)
{
    conv16_k *k = p;
    cudaStream_t s = e->ctx->stream;
    int rc;
    if (k->x32 && (rc = cu_check_rt(e, err,
                                    (cudaError_t)ibk_nchw_to_nhwc_f16(s, k->x32, k->x16, k->N,
                                                                      k->Cin, k->HWin),
                                    "island entry (NCHW float32 to NHWC float16)")))
        return rc;
    if (k->fused)
        return cu_check_dnn(e, err, conv16_fused_call(e, k, e->ws),
                            "fused convolution + bias + Relu (NHWC float16)");
    const float one = 1.f, zero = 0.f;
    if ((rc = cu_check_dnn(e, err,
                           cudnnConvolutionForward(e->ctx->dnn, &one, k->d.xd, k->x16, k->d.wd,
                                                   k->w16, k->d.cd, k->algo, e->ws, k->ws, &zero,
                                                   k->d.yd, k->acc),
                           "convolution forward (NHWC float16)")))
        return rc;
    if (!k->epi)
        return IB_OK;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_epi_nhwc(s, k->acc, k->y, k->y_f32, k->bias, k->z,
                                                 k->z_kind, k->N, k->K, k->HWout, k->act, k->a,
                                                 k->b),
                       "conv epilogue (NHWC float16)");
}

/* Issue 24's fusion: an island conv whose Y and Z (if any) are NHWC float16 and whose
 * activation is Relu runs as one cudnnConvolutionBiasActivationForward (the legacy API, as
 * the rest of this file; the bias as float16, zeros when the node has none), so Y is written
 * once instead of by the convolution and again by the epilogue kernel. The call is tried once
 * here on the planned buffers (nothing has run yet, so it overwrites nothing that matters);
 * when cuDNN refuses it the epilogue path stays (k->fused false, no error). Identity is left to
 * that path: cuDNN takes it only with IMPLICIT_PRECOMP_GEMM. Not yet run on a GPU. */
static int try_fused16(cu_exec *e, conv16_k *k, const cu_val *bias, ib_err *err)
{
    if (k->y_f32 || (k->z && k->z_kind != 1) || k->act != IBK_RELU)
        return IB_OK;
    int rc;
    if ((rc = cu_check_dnn(e, err, cudnnCreateTensorDescriptor(&k->bd), "bias descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetTensor4dDescriptor(k->bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 1,
                                                      (int)k->K, 1, 1),
                           "bias descriptor")) ||
        (rc = cu_check_dnn(e, err, cudnnCreateActivationDescriptor(&k->ad),
                           "activation descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetActivationDescriptor(k->ad, CUDNN_ACTIVATION_RELU,
                                                        CUDNN_NOT_PROPAGATE_NAN, 0.0),
                           "activation descriptor")))
        return rc;
    void *b16 = NULL;
    if (bias && bias->host) {
        if ((rc = cu_weight_get_f16(e->ctx, bias->host, 1, k->K, &b16, err)) ||
            (rc = cu_exec_hold_weight(e, bias->host, CU_W_F16, err)))
            return rc;
    } else if (bias) {
        return IB_OK; /* a bias computed in the graph: the epilogue reads it as float32 */
    } else {
        if ((rc = cu_alloc(e, (size_t)k->K * 2, &b16, err)) ||
            (rc = cu_check_rt(e, err, cudaMemset(b16, 0, (size_t)k->K * 2), "zero bias")))
            return rc;
    }
    k->bias16 = b16;
    k->fused = cu_dnn_probe(e, k->ws, conv16_fused_call, k);
    return IB_OK;
}

bool cu_dnn_probe(cu_exec *e, size_t ws_bytes,
                  cudnnStatus_t (*call)(cu_exec *e, const void *k, void *ws), const void *k)
{
    /* the exec's workspace is allocated after compile: the probe has its own */
    void *ws = NULL;
    if (ws_bytes && cudaMalloc(&ws, ws_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    bool ok = call(e, k, ws) == CUDNN_STATUS_SUCCESS &&
              cudaStreamSynchronize(e->ctx->stream) == cudaSuccess;
    if (!ok)
        (void)cudaGetLastError();
    (void)cudaFree(ws);
    return ok;
}

/* A conv of an island: X, Y and Z may each be NHWC float16 (island values) or float32 NCHW
 * (where the island starts or ends); cuDNN runs NHWC float16 with float accumulation on the
 * tensor cores (CUDNN_TENSOR_OP_MATH); the epilogue adds bias and Z, applies the activation
 * and writes Y in its own storage format. Not yet run on a GPU. */
static int comp_conv16(cu_exec *e, const ib_node *n, const cv_geom *cg, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *bias = cu_in(e, n, 2), *z = cu_in(e, n, 3);
    cu_val *y = cu_out(e, n, 0);
    conv16_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    int rc;
    k->N = cg->x[0];
    k->Cin = cg->x[1];
    k->HWin = (int64_t)cg->x[2] * cg->x[3];
    k->K = cg->y[1];
    k->HWout = (int64_t)cg->y[2] * cg->y[3];
    if ((rc = cu_check_dnn(e, err, cudnnCreateTensorDescriptor(&k->d.xd), "tensor descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetTensor4dDescriptor(k->d.xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF,
                                                      cg->x[0], cg->x[1], cg->x[2], cg->x[3]),
                           "tensor descriptor (NHWC float16)")) ||
        (rc = cu_check_dnn(e, err, cudnnCreateTensorDescriptor(&k->d.yd), "tensor descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetTensor4dDescriptor(k->d.yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF,
                                                      cg->y[0], cg->y[1], cg->y[2], cg->y[3]),
                           "tensor descriptor (NHWC float16)")) ||
        (rc = cu_check_dnn(e, err, cudnnCreateFilterDescriptor(&k->d.wd), "filter descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetFilter4dDescriptor(k->d.wd, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC,
                                                      cg->w[0], cg->w[1], cg->w[2], cg->w[3]),
                           "filter descriptor (NHWC float16)")) ||
        (rc = cu_check_dnn(e, err, cudnnCreateConvolutionDescriptor(&k->d.cd),
                           "convolution descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetConvolution2dDescriptor(k->d.cd, cg->pad[0], cg->pad[1],
                                                           cg->stride[0], cg->stride[1],
                                                           cg->dil[0], cg->dil[1],
                                                           CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT),
                           "convolution descriptor")) ||
        (rc = cu_check_dnn(e, err, cudnnSetConvolutionGroupCount(k->d.cd, cg->group),
                           "group count")) ||
        (rc = cu_check_dnn(e, err, cudnnSetConvolutionMathType(k->d.cd, CUDNN_TENSOR_OP_MATH),
                           "math type")))
        goto fail;
    int used = 0;
    if ((rc = pick_fwd_algo(e, &k->d, cg, CUDNN_TENSOR_OP_MATH, true, &k->algo, &used, err)) ||
        (rc = cu_check_dnn(e, err,
                           cudnnGetConvolutionForwardWorkspaceSize(e->ctx->dnn, k->d.xd, k->d.wd,
                                                                   k->d.cd, k->d.yd, k->algo,
                                                                   &k->ws),
                           "workspace size")))
        goto fail;
    ib_prec_notes_set(&e->precs, IB_PRECISION_FP16); /* float16 operands (backend ABI 10) */
    cu_need_ws(e, k->ws);
    /* the filter as KRSC float16, held by this exec */
    void *w16 = NULL;
    if ((rc = cu_weight_get_f16_krsc(e->ctx, w->host, cg->w[0], cg->w[1],
                                     (int64_t)cg->w[2] * cg->w[3], &w16, err)) ||
        (rc = cu_exec_hold_weight(e, w->host, CU_W_F16_KRSC, err)))
        goto fail;
    k->w16 = w16;
    if (x->half) {
        k->x16 = x->dev;
    } else if ((rc = cu_alloc(e, (size_t)(k->N * k->Cin * k->HWin) * 2, &k->x16, err))) {
        goto fail;
    } else {
        k->x32 = x->dev;
    }
    k->y = y->dev;
    k->y_f32 = !y->half;
    if (y->half)
        k->acc = y->dev;
    else if ((rc = cu_alloc(e, (size_t)(k->N * k->K * k->HWout) * 2, &k->acc, err)))
        goto fail;
    k->bias = bias ? bias->dev : NULL;
    k->z = z ? z->dev : NULL;
    k->z_kind = !z ? 0 : z->half ? 1 : 2;
    cu_fused_act(n, &k->act, &k->a, &k->b);
    k->epi = k->y_f32 || k->bias || k->z || k->act != IBK_COPY;
    if (k->epi && (rc = try_fused16(e, k, bias, err)))
        goto fail;
    if ((rc = cu_add_step(e, run_conv16, k, conv16_free, err)))
        return rc;
    cu_step_kind(e, k->fused ? "cudnn-nhwc16-fused" : "cudnn-nhwc16");
    return IB_OK;
fail:
    conv16_free(k);
    return rc;
}

/* cg's float32 NCHW filter and cross-correlation descriptors, with its group count and the
 * session precision's math type (*math: tensor ops that may convert at fp16, plain FMA
 * otherwise): what a float32 Conv and a ConvTranspose (its backward data) both describe. The
 * caller destroys *wd and *cd, also after a failure. */
static int f32_conv_descs(cu_exec *e, const cv_geom *cg, cudnnFilterDescriptor_t *wd,
                          cudnnConvolutionDescriptor_t *cd, cudnnMathType_t *math, ib_err *err)
{
    int rc;
    *math = e->precision == IB_PRECISION_FP16 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                                              : CUDNN_FMA_MATH;
    if ((rc = cu_check_dnn(e, err, cudnnCreateFilterDescriptor(wd), "filter descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetFilterNdDescriptor(*wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                                      cg->nd, cg->w),
                           "filter descriptor")) ||
        (rc = cu_check_dnn(e, err, cudnnCreateConvolutionDescriptor(cd),
                           "convolution descriptor")) ||
        (rc = cu_check_dnn(e, err,
                           cudnnSetConvolutionNdDescriptor(*cd, cg->nd - 2, cg->pad, cg->stride,
                                                           cg->dil, CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT),
                           "convolution descriptor")) ||
        (rc = cu_check_dnn(e, err, cudnnSetConvolutionGroupCount(*cd, cg->group), "group count")))
        return rc;
    return cu_check_dnn(e, err, cudnnSetConvolutionMathType(*cd, *math), "math type");
}

/* The float32 NCHW path (cuDNN at the session's precision, then the epilogue kernel). */
static int comp_conv_f32(cu_exec *e, const ib_node *n, const cv_geom *cgp, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *bias = cu_in(e, n, 2), *z = cu_in(e, n, 3);
    cu_val *y = cu_out(e, n, 0);
    cv_geom cg = *cgp;
    int rc;
    conv_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    cudnnHandle_t h = e->ctx->dnn;
    cudnnMathType_t math;
    if ((rc = tensor_desc(e, &k->xd, cg.nd, cg.x, err)) ||
        (rc = tensor_desc(e, &k->yd, cg.nd, cg.y, err)) ||
        (rc = f32_conv_descs(e, &cg, &k->wd, &k->cd, &math, err)))
        goto fail;
    int od[5];
    if ((rc = cu_check_dnn(e, err,
                           cudnnGetConvolutionNdForwardOutputDim(k->cd, k->xd, k->wd, cg.nd, od),
                           "output dims")))
        goto fail;
    for (int i = 0; i < cg.nd; i++)
        if (od[i] != cg.y[i]) {
            rc = cu_fail(e, err, IB_EUNSUPPORTED,
                         "cuDNN computes output dim %d = %d, the graph says %d", i, od[i], cg.y[i]);
            goto fail;
        }
    fwd_descs fd = {k->xd, k->yd, k->wd, k->cd};
    int used = 0;
    if ((rc = pick_fwd_algo(e, &fd, &cg, math, false, &k->algo, &used, err)))
        goto fail;
    ib_prec_notes_set(&e->precs, fwd_prec(e, used)); /* backend ABI 10 */
    if ((rc = cu_check_dnn(e, err,
                           cudnnGetConvolutionForwardWorkspaceSize(h, k->xd, k->wd, k->cd, k->yd,
                                                                   k->algo, &k->ws),
                           "workspace size")))
        goto fail;
    cu_need_ws(e, k->ws);
    k->x = x->dev;
    k->w = w->dev;
    k->y = y->dev;
    k->bias = bias ? bias->dev : NULL;
    k->z = z ? z->dev : NULL;
    if (!cu_fused_act(n, &k->act, &k->a, &k->b)) {
        rc = cu_fail(e, err, IB_EUNSUPPORTED, "activation not supported");
        goto fail;
    }
    k->N = y->desc.dims[0];
    k->C = y->desc.dims[1];
    k->inner = k->N > 0 && k->C > 0 ? ib_tensor_desc_numel(&y->desc) / (k->N * k->C) : 0;
    if ((rc = cu_add_step(e, run_conv, k, conv_free, err)))
        return rc;
    cu_step_kind(e, "cudnn");
    return IB_OK;
fail:
    conv_free(k);
    return rc;
}

static int comp_conv(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *z = cu_in(e, n, 3);
    cu_val *y = cu_out(e, n, 0);
    cv_geom cg;
    if (!conv_geom(e->graph, n, &x->desc, &w->desc, &y->desc, &cg))
        return cu_fail(e, err, IB_EUNSUPPORTED, "geometry not expressible in cuDNN");
    if (x->half || y->half || (z && z->half))
        return comp_conv16(e, n, &cg, err);
    int rc;
    if ((e->int8 || e->fp8) && cg.nd == 4 && cg.group == 1) {
        /* cuda_conv_i8.c / cuda_conv_f8.c, else as at fp16 */
        cu_conv2d g2 = {.N = cg.x[0], .C = cg.x[1], .H = cg.x[2], .W = cg.x[3], .K = cg.w[0],
                        .R = cg.w[2], .S = cg.w[3], .P = cg.y[2], .Q = cg.y[3],
                        .pad = {cg.pad[0], cg.pad[1]}, .stride = {cg.stride[0], cg.stride[1]},
                        .dil = {cg.dil[0], cg.dil[1]}};
        bool done = false;
        rc = e->int8 ? cu_add_conv_i8(e, n, &g2, &done, err)
                     : cu_add_conv_f8(e, n, &g2, &done, err);
        if (rc || done)
            return rc;
    }
    /* an int8 chain's values around a convolution cuDNN would not run at int8 */
    cu_q8_saved sv;
    if ((rc = cu_conv_q8_unwrap(e, n, &sv, err)))
        return rc;
    rc = comp_conv_f32(e, n, &cg, err);
    int rc2 = cu_conv_q8_rewrap(e, &sv, rc ? NULL : err);
    return rc ? rc : rc2;
}

/* ---- ConvTranspose: cuDNN's backward-data convolution ------------------------------
 * ConvTranspose(X [N, C, in...], W [C, M/g, k...]) = Y [N, M, out...] is the gradient of
 * the forward convolution Y -> X with filter W (C outputs of M/g inputs each), so cuDNN's
 * cudnnConvolutionBackwardData computes it with X as dy and Y as dx; bias as the conv
 * epilogue. Taken when the pads are symmetric and that forward convolution maps out back
 * to in exactly (output_padding < stride, no output_shape beyond the reachable size). */

static bool convt_geom(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x,
                       const ib_tensor_desc *w, const ib_tensor_desc *y, cv_geom *cg)
{
    memset(cg, 0, sizeof *cg);
    if (x->ndim < 3 || x->ndim > 5 || w->ndim != x->ndim || !y || y->ndim != x->ndim)
        return false;
    ib_op_ctx oc = {.graph = g, .node = n, .scratch = NULL, .scratch_size = 0};
    ib_err err;
    ib_err_clear(&err);
    ib_window win;
    if (ib_window_transpose(&oc, &err, x, w->dims + 2, &win) || !geom_from_window(&win, cg))
        return false;
    for (int i = 0; i < win.nsp; i++) {
        int64_t span = win.out[i] + win.pad_b[i] + win.pad_e[i] - win.dil[i] * (win.k[i] - 1) - 1;
        if (win.out[i] != y->dims[2 + i] || span < 0 || span / win.stride[i] + 1 != win.in[i])
            return false;
    }
    int64_t grp = ib_node_attr_int(n, "group", 1);
    if (grp < 1 || !fits_int(grp) || w->dims[0] != x->dims[1] ||
        w->dims[1] * grp != y->dims[1])
        return false;
    cg->group = (int)grp;
    /* cuDNN's terms: the forward conv's x is our Y, its y our X, its filter W as it is */
    return dims_of(y, cg->nd, cg->x) && dims_of(w, cg->nd, cg->w) && dims_of(x, cg->nd, cg->y);
}

static bool sup_convt(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                      const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    if (p == IB_PRECISION_BF16 || !in[0] || !in[1] || !cu_all_f32(n, in))
        return false;
    const ib_tensor_desc *y = cu_out_desc(g, n, 0);
    cv_geom cg;
    if (!y || !convt_geom(g, n, in[0], in[1], y, &cg))
        return false;
    return n->n_inputs < 3 || !in[2] || ib_tensor_desc_numel(in[2]) == y->dims[1];
}

typedef struct convt_k {
    cudnnTensorDescriptor_t dyd, dxd; /* our X, our Y */
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionBwdDataAlgo_t algo;
    size_t ws;
    const void *x, *w;
    void *y;
    const float *bias;
    int64_t N, M, inner;
} convt_k;

static void convt_free(void *p)
{
    convt_k *k = p;
    if (!k)
        return;
    if (k->dyd)
        (void)cudnnDestroyTensorDescriptor(k->dyd);
    if (k->dxd)
        (void)cudnnDestroyTensorDescriptor(k->dxd);
    if (k->wd)
        (void)cudnnDestroyFilterDescriptor(k->wd);
    if (k->cd)
        (void)cudnnDestroyConvolutionDescriptor(k->cd);
    ib_free(k);
}

static int run_convt(cu_exec *e, void *p, ib_err *err)
{
    convt_k *k = p;
    const float one = 1.f, zero = 0.f;
    int rc = cu_check_dnn(e, err,
                          cudnnConvolutionBackwardData(e->ctx->dnn, &one, k->wd, k->w, k->dyd,
                                                       k->x, k->cd, k->algo, e->ws, k->ws, &zero,
                                                       k->dxd, k->y),
                          "transposed convolution (backward data)");
    if (rc || !k->bias)
        return rc;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_bias_act(e->ctx->stream, k->y, k->bias, NULL, k->N, k->M,
                                                 k->inner, IBK_COPY, 0.f, 0.f),
                       "transposed convolution bias kernel");
}

static int comp_convt(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *bias = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    cv_geom cg;
    if (!convt_geom(e->graph, n, &x->desc, &w->desc, &y->desc, &cg))
        return cu_fail(e, err, IB_EUNSUPPORTED, "geometry not expressible in cuDNN");
    convt_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    cudnnHandle_t h = e->ctx->dnn;
    cudnnMathType_t math;
    int rc;
    if ((rc = tensor_desc(e, &k->dxd, cg.nd, cg.x, err)) ||
        (rc = tensor_desc(e, &k->dyd, cg.nd, cg.y, err)) ||
        (rc = f32_conv_descs(e, &cg, &k->wd, &k->cd, &math, err)))
        goto fail;
    cudnnConvolutionBwdDataAlgoPerf_t perf[8];
    int got = 0;
    if ((rc = cu_check_dnn(e, err,
                           cudnnGetConvolutionBackwardDataAlgorithm_v7(h, k->wd, k->dyd, k->cd,
                                                                       k->dxd, 8, &got, perf),
                           "algorithm heuristic")))
        goto fail;
    int pick = -1;
    for (int i = 0; i < got && pick < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= CU_CONV_WS_MAX &&
            (e->precision == IB_PRECISION_FP16 || perf[i].mathType != CUDNN_TENSOR_OP_MATH))
            pick = i;
    if (pick < 0) {
        rc = cu_fail(e, err, IB_EUNSUPPORTED, "cuDNN offers no backward-data algorithm (%d tried)",
                     got);
        goto fail;
    }
    k->algo = perf[pick].algo;
    ib_prec_notes_set(&e->precs, fwd_prec(e, (int)perf[pick].mathType)); /* backend ABI 10 */
    if ((rc = cu_check_dnn(e, err,
                           cudnnGetConvolutionBackwardDataWorkspaceSize(h, k->wd, k->dyd, k->cd,
                                                                        k->dxd, k->algo, &k->ws),
                           "workspace size")))
        goto fail;
    cu_need_ws(e, k->ws);
    k->x = x->dev;
    k->w = w->dev;
    k->y = y->dev;
    k->bias = bias ? bias->dev : NULL;
    k->N = y->desc.dims[0];
    k->M = y->desc.dims[1];
    k->inner = k->N > 0 && k->M > 0 ? ib_tensor_desc_numel(&y->desc) / (k->N * k->M) : 0;
    if ((rc = cu_add_step(e, run_convt, k, convt_free, err)))
        return rc;
    cu_step_kind(e, "cudnn");
    return IB_OK;
fail:
    convt_free(k);
    return rc;
}

/* ---- pooling (our kernel: any pads, dilations, ceil_mode) ------------------------ */

typedef struct pool_k {
    const float *x;
    float *y;
    ibk_pool p;
} pool_k;

static int run_pool(cu_exec *e, void *p, ib_err *err)
{
    pool_k *k = p;
    return cu_check_rt(e, err, (cudaError_t)ibk_pool2d(e->ctx->stream, k->x, k->y, &k->p),
                       "pooling kernel");
}

/* The kernel's geometry from the ONNX window; 1-D pools run with H = 1. */
static bool pool_geom(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x,
                      const ib_tensor_desc *y, ibk_pool *pp)
{
    memset(pp, 0, sizeof *pp);
    if (x->ndim < 3 || x->ndim > 4 || !y || y->ndim != x->ndim)
        return false;
    const int64_t *ks;
    size_t nk = ib_node_attr_ints(n, "kernel_shape", &ks);
    if (nk != (size_t)(x->ndim - 2))
        return false;
    ib_window w;
    if (!window_of(g, n, x, ks, strcmp(n->op_type, "MaxPool") == 0, &w))
        return false;
    int o = x->ndim == 3 ? 0 : 1; /* index of the W dim in the window */
    for (int i = 0; i < w.nsp; i++)
        if (!fits_int(w.k[i]) || !fits_int(w.stride[i]) || !fits_int(w.dil[i]) ||
            !fits_int(w.pad_b[i]) || !fits_int(w.pad_e[i]))
            return false;
    pp->nc = x->dims[0] * x->dims[1];
    pp->w = x->dims[x->ndim - 1];
    pp->ow = y->dims[y->ndim - 1];
    pp->h = x->ndim == 4 ? x->dims[2] : 1;
    pp->oh = y->ndim == 4 ? y->dims[2] : 1;
    pp->kw = (int32_t)w.k[o];
    pp->sw = (int32_t)w.stride[o];
    pp->dw = (int32_t)w.dil[o];
    pp->pl = (int32_t)w.pad_b[o];
    pp->pr = (int32_t)w.pad_e[o];
    pp->kh = pp->sh = pp->dh = 1;
    if (x->ndim == 4) {
        pp->kh = (int32_t)w.k[0];
        pp->sh = (int32_t)w.stride[0];
        pp->dh = (int32_t)w.dil[0];
        pp->pt = (int32_t)w.pad_b[0];
        pp->pb = (int32_t)w.pad_e[0];
    }
    pp->is_max = strcmp(n->op_type, "MaxPool") == 0;
    pp->count_pad = ib_node_attr_int(n, "count_include_pad", 0) != 0;
    return true;
}

static bool sup_pool(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                     const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (!in[0] || !cu_all_f32(n, in))
        return false;
    if (n->n_outputs > 1 && n->outputs[1] != IB_VALUE_NONE) /* MaxPool Indices */
        return false;
    ibk_pool pp;
    return pool_geom(g, n, in[0], cu_out_desc(g, n, 0), &pp);
}

static int comp_pool(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    pool_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    if (!pool_geom(e->graph, n, &x->desc, &y->desc, &k->p)) {
        ib_free(k);
        return cu_fail(e, err, IB_EUNSUPPORTED, "pooling geometry not supported");
    }
    k->x = x->dev;
    k->y = y->dev;
    return cu_add_step(e, run_pool, k, NULL, err);
}

const cu_op cu_ops_conv[] = {
    {"", "Conv", sup_conv, comp_conv},
    {"inferbench", "FusedConv", sup_conv, comp_conv},
    {"", "ConvTranspose", sup_convt, comp_convt},
    {"", "MaxPool", sup_pool, comp_pool},
    {"", "AveragePool", sup_pool, comp_pool},
    {NULL, NULL, NULL, NULL},
};
