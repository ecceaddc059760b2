/*
 * detect.c - inferbench.SSDPostprocess (docs/ops.md): SSD-ResNet34's decode + NMS inside the
 * graph, so a device backend runs it where the network's outputs are (issue 24: at 1,600
 * images/s the 4.9 ms an image it takes on one host core would need eight cores):
 *
 *   loc [N, 4, A] (dx, dy, dw, dh per anchor), conf [N, C, A] (class logits, 0 background),
 *   anchors [A, 4] (cx, cy, w, h; constant)
 *   -> detections [N, max_output, 6] float32 (xmin, ymin, xmax, ymax, score, label) in
 *      ib_ssd_post's order (ascending score), rows past the count zero; count [N] int64.
 *
 * Attributes: scale_xy (0.1), scale_wh (0.2), score_threshold (0.05), iou_threshold (0.5),
 * top_per_class (200), max_output (200), as ssd_r34.py's Encoder.decode_batch
 * (benchmarks.md §1.2). The reference kernel is ir/ops/ssd_post.c itself, image by image: the
 * harness's host path and this op give the same detections by construction.
 */
#include <string.h>

#include "ir/ops/ops_util.h"
#include "ir/ops/ssd_post.h"

bool ib_ssd_params_of_node(const ib_node *n, ib_ssd_post_params *p)
{
    ib_ssd_post_params_default(p);
    if (!n)
        return true;
    p->scale_xy = ib_node_attr_float(n, "scale_xy", p->scale_xy);
    p->scale_wh = ib_node_attr_float(n, "scale_wh", p->scale_wh);
    p->score_thr = ib_node_attr_float(n, "score_threshold", p->score_thr);
    p->nms_iou = ib_node_attr_float(n, "iou_threshold", p->nms_iou);
    int64_t top = ib_node_attr_int(n, "top_per_class", p->top_per_class);
    int64_t mo = ib_node_attr_int(n, "max_output", p->max_out);
    if (top < 1 || top > IB_SSD_MAX_K || mo < 1 || mo > IB_SSD_MAX_K)
        return false;
    p->top_per_class = (int)top;
    p->max_out = (int)mo;
    return true;
}

static int ssd_params(const ib_op_ctx *ctx, ib_err *err, ib_ssd_post_params *p)
{
    if (!ib_ssd_params_of_node(ctx->node, p))
        return IB_OP_BAD(ctx, err, "top_per_class and max_output must be in [1, %d]",
                         IB_SSD_MAX_K);
    return IB_OK;
}

static int infer_ssd(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(dd);
    const ib_tensor_desc *loc = in[0], *conf = in[1], *an = in[2];
    ib_ssd_post_params p;
    int rc = ssd_params(ctx, err, &p);
    if (rc)
        return rc;
    if (loc->ndim != 3 || conf->ndim != 3 || an->ndim != 2 || loc->dims[1] != 4 ||
        an->dims[1] != 4 || conf->dims[1] < 2)
        return IB_OP_BAD(ctx, err, "expected loc [N, 4, A], conf [N, C >= 2, A] and anchors "
                                   "[A, 4]");
    int64_t A = an->dims[0];
    if (A < 0 || (loc->dims[2] >= 0 && loc->dims[2] != A) ||
        (conf->dims[2] >= 0 && conf->dims[2] != A) ||
        (loc->dims[0] >= 0 && conf->dims[0] >= 0 && loc->dims[0] != conf->dims[0]))
        return IB_OP_BAD(ctx, err, "loc, conf and anchors disagree on N or on the %lld anchors",
                         (long long)A);
    if (conf->dtype != IB_DTYPE_FLOAT32 || an->dtype != IB_DTYPE_FLOAT32)
        return IB_OP_BAD(ctx, err, "loc, conf and anchors must be float32");
    out[0] = (ib_tensor_desc){IB_DTYPE_FLOAT32, 3, {loc->dims[0], p.max_out, 6}};
    if (n_out > 1)
        out[1] = (ib_tensor_desc){IB_DTYPE_INT64, 1, {loc->dims[0]}};
    return IB_OK;
}

static size_t scratch_ssd(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                          const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    ib_ssd_post_params p;
    if (ssd_params(ctx, NULL, &p) || in[2]->ndim != 2 || in[1]->ndim != 3 || in[1]->dims[1] < 2)
        return 0;
    return ib_ssd_post_rows_ws_bytes((size_t)in[2]->dims[0], (size_t)in[1]->dims[1], &p);
}

static int k_ssd(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    ib_ssd_post_params p;
    int rc = ssd_params(ctx, err, &p);
    if (rc)
        return rc;
    const int64_t N = in[0]->desc.dims[0], C = in[1]->desc.dims[1], A = in[2]->desc.dims[0];
    void *ws = ctx->scratch; /* 64-byte aligned (ir/op.h) */
    const float *loc = in[0]->data, *conf = in[1]->data, *an = in[2]->data;
    float *rows = out[0]->data;
    int64_t *cnt = n_out > 1 && out[1] ? out[1]->data : NULL;
    for (int64_t n = 0; n < N; n++)
        if ((rc = ib_ssd_post_rows(loc + n * 4 * A, conf + n * C * A, an, (size_t)A, (size_t)C,
                                   &p, ws, rows + n * p.max_out * 6, cnt ? cnt + n : NULL, err)))
            return rc;
    return IB_OK;
}

static double flops_ssd(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                        const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    /* the softmax and decode; the sorts and NMS depend on the data */
    return 4.0 * (double)ib_tensor_desc_numel(in[1]);
}

static const ib_op_def defs[] = {
    {"inferbench", "SSDPostprocess", 1, 0, infer_ssd, k_ssd, scratch_ssd, flops_ssd, IB_DT_F32, 3,
     3, 1, 2, 0, 0},
};

const ib_op_family ib_ops_detect = {"detect", defs, IB_ARRAY_LEN(defs)};
