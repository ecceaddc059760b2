/*
 * nms.c - NonMaxSuppression (opsets 10-17): per batch and class, greedy
 * selection by descending score (ties: lower box index first), dropping
 * boxes with score <= score_threshold and boxes whose IoU with a selected
 * box exceeds iou_threshold, up to max_output_boxes_per_class.
 * center_point_box 0: [y1, x1, y2, x2] with either corner order; 1:
 * [x_center, y_center, width, height].
 *
 * The output [num_selected, 3] (batch, class, box) is data-dependent: infer
 * returns the bound batches x classes x min(max_output, boxes) and the
 * kernel writes the actual count into out[0]->desc.
 */
#include <string.h>

#include "ir/ops/ops_util.h"

typedef struct nms_args {
    int64_t max_out;
    double iou, score;
    bool has_score;
    int64_t batches, classes, boxes;
} nms_args;

static int nms_shapes(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *b,
                      const ib_tensor_desc *s, nms_args *a)
{
    if (b->ndim != 3 || b->dims[2] != 4)
        return IB_OP_BAD(ctx, err, "boxes must be [batches, boxes, 4]");
    if (s->ndim != 3 || (b->dims[0] >= 0 && s->dims[0] >= 0 && s->dims[0] != b->dims[0]) ||
        (b->dims[1] >= 0 && s->dims[2] >= 0 && s->dims[2] != b->dims[1]))
        return IB_OP_BAD(ctx, err, "scores must be [batches, classes, boxes] matching boxes");
    int64_t cpb = ib_op_attr_i(ctx, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return IB_OP_BAD(ctx, err, "center_point_box = %lld must be 0 or 1", (long long)cpb);
    a->batches = b->dims[0];
    a->classes = s->dims[1];
    a->boxes = b->dims[1];
    return IB_OK;
}

static int nms_scalars(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *const *in, uint32_t n_in,
                       nms_args *a)
{
    const ib_tensor *m = ib_op_cin(in, n_in, 2), *iou = ib_op_cin(in, n_in, 3),
                    *sc = ib_op_cin(in, n_in, 4);
    double v;
    int rc;
    a->max_out = 0;
    a->iou = 0;
    a->has_score = false;
    if (m && ib_tensor_desc_numel(&m->desc) > 0) {
        if (m->desc.dtype != IB_DTYPE_INT64)
            return IB_OP_BAD(ctx, err, "max_output_boxes_per_class must be int64");
        a->max_out = ((const int64_t *)m->data)[0];
    }
    if (iou && ib_tensor_desc_numel(&iou->desc) > 0) {
        if ((rc = ib_op_read_scalar(ctx, err, iou, "iou_threshold", &v))) return rc;
        a->iou = v;
    }
    if (sc && ib_tensor_desc_numel(&sc->desc) > 0) {
        if ((rc = ib_op_read_scalar(ctx, err, sc, "score_threshold", &v))) return rc;
        a->score = v;
        a->has_score = true;
    }
    if (a->max_out < 0) a->max_out = 0;
    return IB_OK;
}

static int infer_nms(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    nms_args a;
    int rc = nms_shapes(ctx, err, in[0], in[1], &a);
    if (rc) return rc;
    int64_t per = a.boxes;
    const ib_tensor *m = ib_op_cin(const_in, n_in, 2);
    if (n_in > 2 && in[2] && m) {
        nms_args s;
        if ((rc = nms_scalars(ctx, err, const_in, n_in, &s))) return rc;
        per = per < 0 || s.max_out < per ? s.max_out : per;
    } else if (!(n_in > 2 && in[2])) {
        per = 0; /* no max_output_boxes_per_class: nothing is selected */
    }
    ib_tensor_desc y = {IB_DTYPE_INT64, 2, {IB_DIM_DYNAMIC, 3}};
    if ((rc = ib_op_dim_mul(ctx, err, a.batches, a.classes, &y.dims[0])) ||
        (rc = ib_op_dim_mul(ctx, err, y.dims[0], per, &y.dims[0])))
        return rc;
    out[0] = y;
    *dd = true;
    return IB_OK;
}

static size_t scratch_nms(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                          const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    int64_t n = in[0]->dims[1] > 0 ? in[0]->dims[1] : 1;
    return (size_t)n * (3 * sizeof(int64_t) + sizeof(double) + 4 * sizeof(double));
}

/* Stable merge sort of idx by descending key. */
static void sort_desc(int64_t *idx, int64_t *tmp, int64_t n, const double *key)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = IB_MIN(lo + w, n), hi = IB_MIN(lo + 2 * w, n);
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = key[idx[b]] > key[idx[a]] ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[o++] = idx[a++];
            while (b < hi)
                tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

static double iou_of(const double *a, const double *b)
{
    /* a, b: normalised [ymin, xmin, ymax, xmax] */
    double ih = IB_MIN(a[2], b[2]) - IB_MAX(a[0], b[0]);
    double iw = IB_MIN(a[3], b[3]) - IB_MAX(a[1], b[1]);
    if (ih <= 0 || iw <= 0) return 0;
    double inter = ih * iw;
    double ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return ua > 0 ? inter / ua : 0;
}

static int k_nms(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    nms_args a;
    int rc = nms_shapes(ctx, err, &in[0]->desc, &in[1]->desc, &a);
    if (!rc) rc = nms_scalars(ctx, err, in, n_in, &a);
    if (rc) return rc;
    for (int i = 0; i < 2; i++)
        if (!ib_dtype_is_float(in[i]->desc.dtype))
            return IB_OP_UNSUP(ctx, err, "%s must be float", i ? "scores" : "boxes");
    bool center = ib_op_attr_i(ctx, "center_point_box", 0) == 1;
    int64_t nb = a.boxes;
    int64_t *idx = ctx->scratch, *tmp = idx + nb, *sel = tmp + nb;
    double *key = (double *)(void *)(sel + nb), *norm = key + nb;
    int64_t cap = out[0]->desc.dims[0], count = 0;
    int64_t *y = out[0]->data;
    enum ib_dtype bt = in[0]->desc.dtype, st = in[1]->desc.dtype;
    for (int64_t b = 0; b < a.batches; b++) {
        for (int64_t i = 0; i < nb; i++) { /* normalised corners of every box */
            double v[4];
            for (int k = 0; k < 4; k++)
                v[k] = ib_op_ld(in[0]->data, bt, (b * nb + i) * 4 + k);
            double *o = norm + 4 * i;
            if (center) { /* [xc, yc, w, h] */
                o[0] = v[1] - v[3] / 2;
                o[1] = v[0] - v[2] / 2;
                o[2] = v[1] + v[3] / 2;
                o[3] = v[0] + v[2] / 2;
            } else {
                o[0] = IB_MIN(v[0], v[2]);
                o[1] = IB_MIN(v[1], v[3]);
                o[2] = IB_MAX(v[0], v[2]);
                o[3] = IB_MAX(v[1], v[3]);
            }
        }
        for (int64_t c = 0; c < a.classes; c++) {
            int64_t n = 0;
            for (int64_t i = 0; i < nb; i++) {
                double s = ib_op_ld(in[1]->data, st, (b * a.classes + c) * nb + i);
                if (a.has_score && !(s > a.score)) continue;
                key[i] = s;
                idx[n++] = i;
            }
            sort_desc(idx, tmp, n, key);
            int64_t ns = 0;
            for (int64_t k = 0; k < n && ns < a.max_out; k++) {
                int64_t cand = idx[k];
                bool keep = true;
                for (int64_t j = 0; j < ns && keep; j++)
                    if (iou_of(norm + 4 * cand, norm + 4 * sel[j]) > a.iou) keep = false;
                if (!keep) continue;
                sel[ns++] = cand;
                if (count >= cap)
                    return IB_OP_BAD(ctx, err, "more selections than the output bound %lld",
                                     (long long)cap);
                y[3 * count] = b;
                y[3 * count + 1] = c;
                y[3 * count + 2] = cand;
                count++;
            }
        }
    }
    out[0]->desc.dims[0] = count;
    return IB_OK;
}

static const ib_op_def defs[] = {
    {"", "NonMaxSuppression", 10, 0, infer_nms, k_nms, scratch_nms, NULL, IB_DT_FLOATS, 2, 5, 1, 1,
     0x4u, IB_OP_F_DATA_DEPENDENT},
};

const ib_op_family ib_ops_nms = {"nms", defs, IB_ARRAY_LEN(defs)};
