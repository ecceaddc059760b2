/*
 * resize.c - Resize (opsets 10-17) and Upsample (opsets 7-9) over any
 * number of dims: modes nearest (round_prefer_floor, round_prefer_ceil,
 * floor, ceil), linear and cubic (cubic_coeff_a, exclude_outside); every
 * coordinate_transformation_mode of opset 13 (half_pixel, pytorch_half_pixel,
 * align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize with
 * roi and extrapolation_value).
 *
 * Interpolation is separable, as the ONNX reference defines it: per axis,
 * each output index gets up to four (source index, weight) taps; an output
 * element is the weighted sum over the product of its axes' taps. Source
 * indices outside the input are clamped (edge), matching the reference's
 * edge padding. Resize-10 and Upsample use asymmetric coordinates and floor
 * for nearest. Accumulation is in double.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

enum rz_mode { RZ_NEAREST, RZ_LINEAR, RZ_CUBIC };
enum rz_ct { CT_HALF, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_TF_CROP };
enum rz_nm { NM_RPF, NM_RPC, NM_FLOOR, NM_CEIL };

typedef struct rz_plan {
    enum rz_mode mode;
    enum rz_ct ct;
    enum rz_nm nm;
    double a;      /* cubic_coeff_a */
    bool exclude;  /* exclude_outside */
    double extrap; /* extrapolation_value */
    int32_t r;
    double scale[IB_MAX_DIMS];
    int64_t in[IB_MAX_DIMS], out[IB_MAX_DIMS];
    double roi_s[IB_MAX_DIMS], roi_e[IB_MAX_DIMS];
} rz_plan;

static int pick(const ib_op_ctx *ctx, ib_err *err, const char *attr, const char *dflt,
                const char *const *names, int count, int *out)
{
    const char *v = ib_op_attr_s(ctx, attr, dflt);
    for (int i = 0; i < count; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return IB_OK;
        }
    return IB_OP_UNSUP(ctx, err, "attribute %s='%s' is not supported", attr, v);
}

static int read_attrs(const ib_op_ctx *ctx, ib_err *err, rz_plan *p, bool legacy)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const cts[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int m = 0, c = CT_ASYM, n = NM_FLOOR;
    /* Resize-10 and Upsample know only nearest and linear ("bilinear" in Upsample-7) */
    int rc = pick(ctx, err, "mode", "nearest", modes, legacy ? 2 : 3, &m);
    if (rc && legacy && strcmp(ib_op_attr_s(ctx, "mode", ""), "bilinear") == 0) {
        m = RZ_LINEAR;
        rc = IB_OK;
    }
    if (!rc && !legacy)
        rc = pick(ctx, err, "coordinate_transformation_mode", "half_pixel", cts, 6, &c);
    if (!rc && !legacy) rc = pick(ctx, err, "nearest_mode", "round_prefer_floor", nms, 4, &n);
    if (rc) return rc;
    p->mode = (enum rz_mode)m;
    p->ct = (enum rz_ct)c;
    p->nm = (enum rz_nm)n;
    p->a = (double)ib_op_attr_f(ctx, "cubic_coeff_a", -0.75f);
    p->exclude = ib_op_attr_i(ctx, "exclude_outside", 0) != 0;
    p->extrap = (double)ib_op_attr_f(ctx, "extrapolation_value", 0.0f);
    return IB_OK;
}

/* Inputs by position: Upsample-7 (X) scales attr; Upsample-9/Resize-10 (X,
 * scales); Resize-11+ (X, roi, scales, sizes). Returns 1 when a needed
 * input is not constant. */
static int rz_plan_init(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                        const ib_tensor_desc *const *in, const ib_tensor *const *c, uint32_t n_in,
                        rz_plan *p)
{
    memset(p, 0, sizeof *p);
    bool upsample = strcmp(ctx && ctx->node ? ctx->node->op_type : "", "Upsample") == 0;
    int64_t opset = ib_op_opset(ctx);
    bool legacy = upsample || opset < 11;
    int rc = read_attrs(ctx, err, p, legacy);
    if (rc) return rc;
    p->r = x->ndim;
    double sc[IB_MAX_DIMS];
    int64_t sz[IB_MAX_DIMS];
    size_t nsc = 0, nsz = 0;
    uint32_t si = legacy ? 1 : 2, zi = 3;
    if (upsample && opset < 9) {
        const float *f;
        const ib_attr *a = ctx && ctx->node ? ib_node_attr(ctx->node, "scales") : NULL;
        if (!a || a->type != IB_ATTR_FLOATS)
            return IB_OP_BAD(ctx, err, "attribute 'scales' is required");
        f = a->floats;
        nsc = a->count;
        if (nsc > IB_MAX_DIMS) return IB_OP_BAD(ctx, err, "scales has %zu values", nsc);
        for (size_t i = 0; i < nsc; i++)
            sc[i] = (double)f[i];
    } else {
        const ib_tensor_desc *ds = ib_op_in(in, n_in, si),
                             *dz = legacy ? NULL : ib_op_in(in, n_in, zi);
        bool use_sizes = dz && ib_tensor_desc_numel(dz) != 0;
        if ((use_sizes && (!c || !c[zi])) || (!use_sizes && ds && (!c || !c[si]))) return 1;
        if (use_sizes) {
            if ((rc = ib_op_read_ints(ctx, err, c[zi], "sizes", sz, IB_MAX_DIMS, &nsz))) return rc;
            if (ds && ib_tensor_desc_numel(ds) > 0)
                return IB_OP_BAD(ctx, err, "only one of scales and sizes may be given");
        } else if (ds) {
            if ((rc = ib_op_read_floats(ctx, err, c[si], "scales", sc, IB_MAX_DIMS, &nsc)))
                return rc;
        }
        if (!use_sizes && nsc == 0)
            return IB_OP_BAD(ctx, err, "one of scales and sizes is required");
    }
    if ((nsc && nsc != (size_t)p->r) || (nsz && nsz != (size_t)p->r))
        return IB_OP_BAD(ctx, err, "scales/sizes have %zu values, input rank is %d",
                         nsc ? nsc : nsz, p->r);
    for (int32_t d = 0; d < p->r; d++) {
        p->in[d] = x->dims[d];
        if (nsz) {
            if (sz[d] < 0)
                return IB_OP_BAD(ctx, err, "sizes[%d] = %lld is negative", d, (long long)sz[d]);
            p->out[d] = sz[d];
            p->scale[d] = p->in[d] > 0 ? (double)sz[d] / (double)p->in[d] : 1.0;
        } else {
            if (!(sc[d] > 0)) return IB_OP_BAD(ctx, err, "scales[%d] = %g must be > 0", d, sc[d]);
            p->scale[d] = sc[d];
            double o = floor((double)p->in[d] * sc[d]);
            if (p->in[d] >= 0 && !(o < 4611686018427387904.0)) /* 2^62 */
                return IB_OP_UNSUP(ctx, err, "scales[%d] = %g gives a too large output", d, sc[d]);
            p->out[d] = p->in[d] < 0 ? IB_DIM_DYNAMIC : (int64_t)o;
        }
        p->roi_s[d] = 0;
        p->roi_e[d] = 1;
    }
    if (!legacy && p->ct == CT_TF_CROP) {
        const ib_tensor *roi = c ? ib_op_cin(c, n_in, 1) : NULL;
        if (!roi && ib_op_in(in, n_in, 1)) return 1;
        double rv[2 * IB_MAX_DIMS];
        size_t nr = 0;
        if (!roi || (rc = ib_op_read_floats(ctx, err, roi, "roi", rv, IB_ARRAY_LEN(rv), &nr)))
            return roi ? rc : IB_OP_BAD(ctx, err, "roi is required for tf_crop_and_resize");
        if (nr != 2 * (size_t)p->r)
            return IB_OP_BAD(ctx, err, "roi has %zu values, expected %d", nr, 2 * p->r);
        for (int32_t d = 0; d < p->r; d++) {
            p->roi_s[d] = rv[d];
            p->roi_e[d] = rv[d + p->r];
        }
    }
    return IB_OK;
}

static int infer_resize(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    rz_plan p;
    int rc = rz_plan_init(ctx, err, in[0], in, const_in, n_in, &p);
    if (rc < 0) return rc;
    out[0] = *in[0];
    for (int32_t d = 0; d < in[0]->ndim; d++)
        out[0].dims[d] = rc == 1 ? IB_DIM_DYNAMIC : p.out[d];
    if (rc == 1) *dd = true;
    return IB_OK;
}

/* Source coordinate of output index x along axis d; *outside for
 * tf_crop_and_resize coordinates beyond the input. */
static double src_coord(const rz_plan *p, int32_t d, int64_t x, bool *outside)
{
    double s = p->scale[d], in = (double)p->in[d];
    double len_out = s * in; /* the reference uses the unrounded output length */
    double xr = (double)x;
    *outside = false;
    switch (p->ct) {
    case CT_HALF:
        return (xr + 0.5) / s - 0.5;
    case CT_PYTORCH:
        return len_out > 1 ? (xr + 0.5) / s - 0.5 : 0.0;
    case CT_ALIGN:
        return len_out > 1 ? xr * (in - 1) / (len_out - 1) : 0.0;
    case CT_ASYM:
        return xr / s;
    case CT_TF_NN:
        return (xr + 0.5) / s;
    case CT_TF_CROP: {
        double st = p->roi_s[d], en = p->roi_e[d];
        double v = len_out > 1 ? st * (in - 1) + xr * (en - st) * (in - 1) / (len_out - 1)
                               : 0.5 * (st + en) * (in - 1);
        *outside = v < 0 || v > in - 1;
        return v;
    }
    }
    return xr;
}

static void cubic_coeffs(double t, double A, double *c)
{
    double t1 = t + 1, u = 1 - t, u1 = u + 1;
    c[0] = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    c[2] = ((A + 2) * u - (A + 3)) * u * u + 1;
    c[3] = ((A * u1 - 5 * A) * u1 + 8 * A) * u1 - 4 * A;
}

typedef struct rz_tap {
    int64_t idx[4];
    double w[4];
    int n;
    bool outside;
} rz_tap;

static void make_taps(const rz_plan *p, int32_t d, int64_t o, rz_tap *t)
{
    bool outside;
    double x = src_coord(p, d, o, &outside);
    int64_t in = p->in[d];
    t->outside = outside;
    t->n = 0;
    double fl = floor(x), frac = x - fl;
    int64_t i0 = (int64_t)fl;
    if (p->mode == RZ_NEAREST) {
        int64_t k;
        if (p->nm == NM_FLOOR)
            k = i0;
        else if (p->nm == NM_CEIL)
            k = (int64_t)ceil(x);
        else if (frac == 0.5)
            k = p->nm == NM_RPF ? i0 : i0 + 1;
        else
            k = frac < 0.5 ? i0 : i0 + 1;
        t->idx[0] = k < 0 ? 0 : k >= in ? in - 1 : k;
        t->w[0] = 1.0;
        t->n = 1;
        return;
    }
    double c[4];
    int64_t base;
    int nt;
    if (p->mode == RZ_LINEAR) {
        c[0] = 1 - frac;
        c[1] = frac;
        base = i0;
        nt = 2;
    } else {
        cubic_coeffs(frac, p->a, c);
        base = i0 - 1;
        nt = 4;
    }
    double sum = 0;
    for (int k = 0; k < nt; k++) {
        int64_t s = base + k;
        if (p->exclude && (s < 0 || s >= in)) c[k] = 0;
        sum += c[k];
    }
    for (int k = 0; k < nt; k++) {
        if (c[k] == 0) continue;
        int64_t s = base + k;
        t->idx[t->n] = s < 0 ? 0 : s >= in ? in - 1 : s;
        t->w[t->n++] = p->exclude && sum != 0 ? c[k] / sum : c[k];
    }
    if (t->n == 0) { /* all weights zero: keep the nearest tap with weight 0 */
        t->idx[0] = i0 < 0 ? 0 : i0 >= in ? in - 1 : i0;
        t->w[0] = 0;
        t->n = 1;
    }
}

static size_t scratch_resize(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                             const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    size_t n = 0;
    for (int32_t d = 0; d < out[0].ndim; d++)
        n += (size_t)(out[0].dims[d] > 0 ? out[0].dims[d] : 0);
    return (n + 1) * sizeof(rz_tap);
}

static int k_resize(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0];
    ib_tensor *y = out[0];
    const ib_tensor_desc *ds[4] = {NULL, NULL, NULL, NULL};
    for (uint32_t i = 0; i < n_in && i < 4; i++)
        ds[i] = in[i] ? &in[i]->desc : NULL;
    rz_plan p;
    int rc = rz_plan_init(ctx, err, &x->desc, ds, in, n_in, &p);
    if (rc) return rc < 0 ? rc : IB_OP_BAD(ctx, err, "scales or sizes are missing");
    int32_t r = p.r;
    for (int32_t d = 0; d < r; d++)
        if (p.in[d] == 0 && p.out[d] > 0)
            return IB_OP_BAD(ctx, err, "cannot resize the empty axis %d", d);
    /* taps per axis, laid out axis after axis */
    rz_tap *taps[IB_MAX_DIMS], *t = ctx->scratch;
    for (int32_t d = 0; d < r; d++) {
        taps[d] = t;
        for (int64_t o = 0; o < p.out[d]; o++)
            make_taps(&p, d, o, t++);
    }
    int64_t xs[IB_MAX_DIMS], idx[IB_MAX_DIMS] = {0};
    ib_op_strides(&x->desc, xs);
    enum ib_dtype dt = x->desc.dtype;
    int64_t n = ib_tensor_desc_numel(&y->desc);
    for (int64_t o = 0; o < n; o++) {
        const rz_tap *tp[IB_MAX_DIMS];
        bool outside = false;
        int64_t combos = 1;
        for (int32_t d = 0; d < r; d++) {
            tp[d] = &taps[d][idx[d]];
            outside |= tp[d]->outside;
            combos *= tp[d]->n;
        }
        double acc = 0;
        if (outside) {
            acc = p.extrap;
        } else {
            for (int64_t c = 0; c < combos; c++) {
                int64_t rem = c, off = 0;
                double w = 1;
                for (int32_t d = r - 1; d >= 0; d--) {
                    int k = (int)(rem % tp[d]->n);
                    rem /= tp[d]->n;
                    off += tp[d]->idx[k] * xs[d];
                    w *= tp[d]->w[k];
                }
                acc += w * ib_op_ld(x->data, dt, off);
            }
        }
        ib_op_st(y->data, y->desc.dtype, o, acc);
        for (int32_t d = r - 1; d >= 0; d--) {
            if (++idx[d] < p.out[d]) break;
            idx[d] = 0;
        }
    }
    return IB_OK;
}

#define RZ_TYPES (IB_DT_FLOATS | IB_DT(UINT8) | IB_DT(INT8) | IB_DT(INT32) | IB_DT(INT64))

static const ib_op_def defs[] = {
    {"", "Resize", 10, 0, infer_resize, k_resize, scratch_resize, NULL, RZ_TYPES, 1, 4, 1, 1, 0xeu,
     0},
    {"", "Upsample", 7, 9, infer_resize, k_resize, scratch_resize, NULL, RZ_TYPES, 1, 2, 1, 1, 0x2u,
     0},
};

const ib_op_family ib_ops_resize = {"resize", defs, IB_ARRAY_LEN(defs)};
