/*
 * pad.c - Pad: modes constant, reflect and edge; pads (and the constant
 * value) are attributes before opset 11 and inputs from 11. Negative pads
 * crop. Any dtype (element bytes are copied; the constant is converted).
 */
#include <string.h>

#include "ir/ops/ops_util.h"

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE };

#define PAD_LIMIT ((int64_t)1 << 60) /* |pads| and dims: sums stay in int64 */

typedef struct pad_plan {
    enum pad_mode mode;
    int64_t pb[IB_MAX_DIMS], pe[IB_MAX_DIMS];
    double value;
} pad_plan;

/* Returns 1 when the pads input is not constant. */
static int pad_plan_init(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                         const ib_tensor_desc *const *in, const ib_tensor *const *c, uint32_t n_in,
                         pad_plan *p)
{
    memset(p, 0, sizeof *p);
    const char *m = ib_op_attr_s(ctx, "mode", "constant");
    if (strcmp(m, "constant") == 0)
        p->mode = PAD_CONSTANT;
    else if (strcmp(m, "reflect") == 0)
        p->mode = PAD_REFLECT;
    else if (strcmp(m, "edge") == 0)
        p->mode = PAD_EDGE;
    else
        return IB_OP_UNSUP(ctx, err, "attribute mode='%s' is not supported", m);
    int64_t pads[2 * IB_MAX_DIMS];
    size_t n = 0;
    int rc;
    if (ib_op_opset(ctx) < 11) {
        const char *name = ib_op_opset(ctx) < 2 ? "paddings" : "pads";
        if (!ib_op_has_attr(ctx, name))
            return IB_OP_BAD(ctx, err, "attribute '%s' is required", name);
        if ((rc = ib_op_attr_ints_copy(ctx, err, name, pads, IB_ARRAY_LEN(pads), &n))) return rc;
        p->value = (double)ib_op_attr_f(ctx, "value", 0.0f);
    } else {
        if (n_in > 3 && in[3])
            return IB_OP_UNSUP(ctx, err, "input 'axes' (opset 18) is not supported");
        if (!c || !c[1] || (n_in > 2 && in[2] && !c[2])) return 1;
        if ((rc = ib_op_read_ints(ctx, err, c[1], "pads", pads, IB_ARRAY_LEN(pads), &n))) return rc;
        if (n_in > 2 && c[2] && ib_tensor_desc_numel(&c[2]->desc) > 0 &&
            (rc = ib_op_read_scalar(ctx, err, c[2], "constant_value", &p->value)))
            return rc;
    }
    if (n != 2 * (size_t)x->ndim)
        return IB_OP_BAD(ctx, err, "pads has %zu values, expected 2 x rank = %d", n, 2 * x->ndim);
    for (int32_t d = 0; d < x->ndim; d++) {
        p->pb[d] = pads[d];
        p->pe[d] = pads[d + x->ndim];
        if (p->pb[d] > PAD_LIMIT || p->pb[d] < -PAD_LIMIT || p->pe[d] > PAD_LIMIT ||
            p->pe[d] < -PAD_LIMIT || x->dims[d] > PAD_LIMIT)
            return IB_OP_UNSUP(ctx, err, "pads %lld/%lld on axis %d are too large",
                               (long long)p->pb[d], (long long)p->pe[d], d);
        int64_t dim = x->dims[d];
        if (dim >= 0 && dim + p->pb[d] + p->pe[d] < 0)
            return IB_OP_BAD(ctx, err, "pads crop axis %d below zero", d);
        if (dim == 0 && p->mode != PAD_CONSTANT && (p->pb[d] > 0 || p->pe[d] > 0))
            return IB_OP_BAD(ctx, err, "cannot %s-pad the empty axis %d", m, d);
        if (p->mode == PAD_REFLECT && dim > 0 && (p->pb[d] >= dim || p->pe[d] >= dim) && dim > 1)
            return IB_OP_UNSUP(ctx, err, "reflect pads of %lld/%lld exceed axis %d of size %lld",
                               (long long)p->pb[d], (long long)p->pe[d], d, (long long)dim);
    }
    return IB_OK;
}

static int infer_pad(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    pad_plan p;
    int rc = pad_plan_init(ctx, err, in[0], in, const_in, n_in, &p);
    if (rc < 0) return rc;
    out[0] = *in[0];
    for (int32_t d = 0; d < in[0]->ndim; d++)
        out[0].dims[d] =
            rc == 1 || in[0]->dims[d] < 0 ? IB_DIM_DYNAMIC : in[0]->dims[d] + p.pb[d] + p.pe[d];
    /* (pads are bounded in pad_plan_init, so the sum cannot overflow) */
    if (rc == 1) *dd = true;
    return IB_OK;
}

/* Source index along one axis for output index o, or -1 for the constant. */
static int64_t pad_src(const pad_plan *p, int32_t d, int64_t o, int64_t dim)
{
    int64_t i = o - p->pb[d];
    if (i >= 0 && i < dim) return i;
    if (p->mode == PAD_CONSTANT || dim == 0) return -1;
    if (p->mode == PAD_EDGE || dim == 1) return i < 0 ? 0 : dim - 1;
    return i < 0 ? -i : 2 * (dim - 1) - i; /* reflect, excluding the edge */
}

static int k_pad(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0];
    ib_tensor *y = out[0];
    const ib_tensor_desc *d[4] = {NULL, NULL, NULL, NULL};
    for (uint32_t i = 0; i < n_in && i < 4; i++)
        d[i] = in[i] ? &in[i]->desc : NULL;
    pad_plan p;
    int rc = pad_plan_init(ctx, err, &x->desc, d, in, n_in, &p);
    if (rc) return rc < 0 ? rc : IB_OP_BAD(ctx, err, "pads are missing");
    int32_t r = x->desc.ndim;
    enum ib_dtype dt = x->desc.dtype;
    size_t es = ib_dtype_size(dt);
    unsigned char cval[16] = {0};
    if (es <= sizeof cval && ib_dtype_size(dt)) ib_op_st(cval, dt, 0, p.value);
    int64_t xs[IB_MAX_DIMS], idx[IB_MAX_DIMS] = {0};
    ib_op_strides(&x->desc, xs);
    int64_t n = ib_tensor_desc_numel(&y->desc);
    const unsigned char *src = x->data;
    unsigned char *dst = y->data;
    for (int64_t o = 0; o < n; o++) {
        int64_t off = 0;
        bool inside = true;
        for (int32_t k = 0; k < r; k++) {
            int64_t s = pad_src(&p, k, idx[k], x->desc.dims[k]);
            if (s < 0) {
                inside = false;
                break;
            }
            off += s * xs[k];
        }
        memcpy(dst + (size_t)o * es, inside ? src + (size_t)off * es : cval, es);
        for (int32_t k = r - 1; k >= 0; k--) {
            if (++idx[k] < y->desc.dims[k]) break;
            idx[k] = 0;
        }
    }
    return IB_OK;
}

static const ib_op_def defs[] = {
    {"", "Pad", 1, 0, infer_pad, k_pad, NULL, NULL, IB_DT_NUMS | IB_DT(BOOL), 1, 4, 1, 1, 0x6u, 0},
};

const ib_op_family ib_ops_pad = {"pad", defs, IB_ARRAY_LEN(defs)};
