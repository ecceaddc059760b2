/*
 * cuda_dnn_graph.c - one 2-D convolution through cuDNN's backend (graph) API, for the data
 * types the legacy API does not take: e4m3 fp8 X and W with a float Y (issue 24: "FP8 (e4m3)
 * on Hopper through cuBLASLt and cuDNN"; cuDNN runs fp8 convolutions only through this API).
 * Written in the tenth session (2026-12-05) without a GPU: not yet run.
 *
 * Two forms of the operation graph (cu_gconv_form), tried in this order by the caller:
 *  - CU_GCONV_PLAIN: the forward convolution alone, Y = conv(X, W);
 *  - CU_GCONV_SCALE_K (eleventh session): the convolution into a virtual float tensor, then a
 *    pointwise multiply by a per-output-channel float vector S [1, K, 1, 1] into Y. This is
 *    the shape of cudnn-frontend's fp8 convolution sample (conv, then pointwise scales): fp8
 *    may have engines only in the runtime fusion engines, which take a convolution with a
 *    pointwise tail and not a convolution alone. The tail does useful work: S is the filter's
 *    dequantisation scales, so the epilogue then leaves them out.
 * X [N, C, H, W] and W [K, C, R, S] are described in NCHW order with NHWC strides (cuDNN's
 * layout for 8-bit data), Y [N, K, P, Q] NHWC of y_t, compute comp_t. Heuristics mode A lists
 * engine configurations; the first whose execution plan finalizes with a workspace of at most
 * CU_CONV_WS_MAX is kept. cuDNN keeps copies of what a finalized descriptor was given, but
 * every descriptor stays alive until cu_gconv_free anyway, as cudnn-frontend keeps them. The
 * variant pack (the device pointers by unique id) is made for the workspace a call brings and
 * kept while it is the same one, so the probe at compile and the runs each have theirs and a
 * replayed CUDA Graph launches nothing of the host's.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

enum { UID_X = 'x', UID_W = 'w', UID_Y = 'y', UID_T = 't', UID_S = 's' };

static cudnnStatus_t set_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                              cudnnBackendAttributeType_t t, int64_t n, const void *v)
{
    return cudnnBackendSetAttribute(d, a, t, n, v);
}

/* A tensor [dims] in NCHW order with NHWC strides; virtual when it only links two ops. */
static cudnnStatus_t tensor(cudnnBackendDescriptor_t *d, int64_t uid, cudnnDataType_t t,
                            const int64_t *dims, bool is_virtual)
{
    const int64_t C = dims[1], H = dims[2], W = dims[3];
    const int64_t strides[4] = {C * H * W, 1, W * C, C}, align = 16;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, d);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (!st && is_virtual)
        st = set_attr(*d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    return st ? st : cudnnBackendFinalize(*d);
}

static cudnnStatus_t conv_desc(cudnnBackendDescriptor_t *d, const cu_conv2d *g,
                               cudnnDataType_t comp)
{
    const int64_t dims = 2, pad[2] = {g->pad[0], g->pad[1]},
                  stride[2] = {g->stride[0], g->stride[1]}, dil[2] = {g->dil[0], g->dil[1]};
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, d);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1,
                      &mode);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    if (!st)
        st = set_attr(*d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    return st ? st : cudnnBackendFinalize(*d);
}

/* The execution plan of the first engine configuration heuristics mode A lists that
 * finalizes with a workspace cuDNN may have. */
static cudnnStatus_t pick_plan(cudnnHandle_t h, cu_gconv *c)
{
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &c->heur);
    if (!st)
        st = set_attr(c->heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->graph);
    if (!st)
        st = set_attr(c->heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (!st)
        st = cudnnBackendFinalize(c->heur);
    int64_t n = 0;
    if (!st)
        st = cudnnBackendGetAttribute(c->heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL);
    if (st)
        return st;
    if (n <= 0)
        return CUDNN_STATUS_NOT_SUPPORTED;
    n = n > CU_GCONV_CFGS ? CU_GCONV_CFGS : n;
    for (int64_t i = 0; i < n; i++)
        if ((st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &c->cfg[i])))
            return st;
    c->n_cfg = (int)n;
    int64_t got = 0;
    if ((st = cudnnBackendGetAttribute(c->heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, c->cfg)))
        return st;
    for (int64_t i = 0; i < got && i < n; i++) {
        cudnnBackendDescriptor_t plan = NULL;
        int64_t ws = 0;
        st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
        if (!st)
            st = set_attr(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
        if (!st)
            st = set_attr(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->cfg[i]);
        if (!st)
            st = cudnnBackendFinalize(plan);
        int64_t one = 0;
        if (!st)
            st = cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                          CUDNN_TYPE_INT64, 1, &one, &ws);
        if (!st && ws >= 0 && (size_t)ws <= CU_CONV_WS_MAX) {
            c->plan = plan;
            c->ws = (size_t)ws;
            return CUDNN_STATUS_SUCCESS;
        }
        if (plan)
            (void)cudnnBackendDestroyDescriptor(plan);
    }
    return CUDNN_STATUS_NOT_SUPPORTED;
}

/* The pointwise multiply Y = T * S of the CU_GCONV_SCALE_K form, S broadcast over N, P, Q. */
static cudnnStatus_t scale_op(cu_gconv *c, cudnnDataType_t comp_t)
{
    const cudnnPointwiseMode_t mode = CUDNN_POINTWISE_MUL;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &c->pw);
    if (!st)
        st = set_attr(c->pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    if (!st)
        st = set_attr(c->pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &comp_t);
    if (!st)
        st = cudnnBackendFinalize(c->pw);
    if (!st)
        st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                                          &c->pwop);
    if (!st)
        st = set_attr(c->pwop, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->pw);
    if (!st)
        st = set_attr(c->pwop, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->t);
    if (!st)
        st = set_attr(c->pwop, CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->s);
    if (!st)
        st = set_attr(c->pwop, CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->y);
    return st ? st : cudnnBackendFinalize(c->pwop);
}

int cu_gconv_build(cudnnHandle_t h, const cu_conv2d *g, cudnnDataType_t xw_t, cudnnDataType_t y_t,
                   cudnnDataType_t comp_t, cu_gconv_form form, cu_gconv *c)
{
    memset(c, 0, sizeof *c);
    c->form = form;
    const bool scaled = form == CU_GCONV_SCALE_K;
    const int64_t xd[4] = {g->N, g->C, g->H, g->W}, wd[4] = {g->K, g->C, g->R, g->S},
                  yd[4] = {g->N, g->K, g->P, g->Q}, sd[4] = {1, g->K, 1, 1};
    const float alpha = 1.0f, beta = 0.0f;
    cudnnStatus_t st = tensor(&c->x, UID_X, xw_t, xd, false);
    if (!st)
        st = tensor(&c->w, UID_W, xw_t, wd, false);
    if (!st)
        st = tensor(&c->y, UID_Y, y_t, yd, false);
    if (!st && scaled)
        st = tensor(&c->t, UID_T, comp_t, yd, true);
    if (!st && scaled)
        st = tensor(&c->s, UID_S, CUDNN_DATA_FLOAT, sd, false);
    if (!st)
        st = conv_desc(&c->conv, g, comp_t);
    if (!st)
        st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                          &c->op);
    if (!st)
        st = set_attr(c->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->x);
    if (!st)
        st = set_attr(c->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->w);
    if (!st)
        st = set_attr(c->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, scaled ? &c->t : &c->y);
    if (!st)
        st = set_attr(c->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->conv);
    if (!st)
        st = set_attr(c->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1,
                      &alpha);
    if (!st)
        st = set_attr(c->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1,
                      &beta);
    if (!st)
        st = cudnnBackendFinalize(c->op);
    if (!st && scaled)
        st = scale_op(c, comp_t);
    cudnnBackendDescriptor_t ops[2] = {c->op, c->pwop};
    if (!st)
        st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &c->graph);
    if (!st)
        st = set_attr(c->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    if (!st)
        st = set_attr(c->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                      scaled ? 2 : 1, ops);
    if (!st)
        st = cudnnBackendFinalize(c->graph);
    if (!st)
        st = pick_plan(h, c);
    if (st) {
        cu_gconv_free(c);
        return IB_EUNSUPPORTED;
    }
    return IB_OK;
}

cudnnStatus_t cu_gconv_run(cudnnHandle_t h, cu_gconv *c, const void *x, const void *w,
                           const float *s, void *y, void *ws)
{
    if (!c->pack || c->pack_ws != ws || c->pack_x != x || c->pack_w != w || c->pack_y != y ||
        c->pack_s != s) {
        if (c->pack)
            (void)cudnnBackendDestroyDescriptor(c->pack);
        c->pack = NULL;
        const int64_t uids[4] = {UID_X, UID_W, UID_Y, UID_S};
        void *ptrs[4] = {(void *)(uintptr_t)x, (void *)(uintptr_t)w, y, (void *)(uintptr_t)s};
        const int64_t n = c->form == CU_GCONV_SCALE_K ? 4 : 3; /* the virtual T has none */
        cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
                                                        &c->pack);
        if (!st)
            st = set_attr(c->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
        if (!st)
            st = set_attr(c->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                          ptrs);
        if (!st)
            st = set_attr(c->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                          &ws);
        if (!st)
            st = cudnnBackendFinalize(c->pack);
        if (st) {
            if (c->pack)
                (void)cudnnBackendDestroyDescriptor(c->pack);
            c->pack = NULL;
            return st;
        }
        c->pack_ws = ws;
        c->pack_x = x;
        c->pack_w = w;
        c->pack_y = y;
        c->pack_s = s;
    }
    return cudnnBackendExecute(h, c->plan, c->pack);
}

void cu_gconv_free(cu_gconv *c)
{
    cudnnBackendDescriptor_t all[] = {c->pack, c->plan, c->heur, c->graph, c->pwop, c->pw,
                                      c->op,   c->conv, c->s,    c->t,     c->y,    c->w,
                                      c->x};
    for (size_t i = 0; i < IB_ARRAY_LEN(all); i++)
        if (all[i])
            (void)cudnnBackendDestroyDescriptor(all[i]);
    for (int i = 0; i < c->n_cfg; i++)
        if (c->cfg[i])
            (void)cudnnBackendDestroyDescriptor(c->cfg[i]);
    memset(c, 0, sizeof *c);
}
