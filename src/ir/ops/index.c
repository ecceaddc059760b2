/*
 * index.c - indexing and masking ops outside the six MLPerf models' core
 * set, cheap to have exact: NonZero (data-dependent), CumSum (exclusive,
 * reverse), Trilu, EyeLike, OneHot, ScatterElements / Scatter (opset 9-10)
 * and ScatterND (reduction none/add/mul from 16), DepthToSpace (DCR/CRD)
 * and SpaceToDepth. Any element type unless noted.
 */
#include <string.h>

#include "ir/ops/ops_util.h"

/* ---- NonZero: int64 [rank, count] of the non-zero positions ----------------- */

static int infer_nonzero(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    int64_t n = ib_tensor_desc_numel(in[0]);
    ib_tensor_desc y = {IB_DTYPE_INT64, 2, {in[0]->ndim ? in[0]->ndim : 1, n}};
    out[0] = y;
    *dd = true; /* the bound: every element non-zero */
    return IB_OK;
}

static int k_nonzero(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    const ib_tensor *x = in[0];
    int32_t r = x->desc.ndim;
    int64_t n = ib_tensor_desc_numel(&x->desc), cap = out[0]->desc.dims[1], count = 0;
    size_t es = ib_dtype_size(x->desc.dtype);
    static const unsigned char zero[16] = {0};
    for (int64_t i = 0; i < n; i++) {
        bool nz;
        if (ib_dtype_is_float(x->desc.dtype))
            nz = ib_op_ld(x->data, x->desc.dtype, i) != 0.0; /* -0.0 is zero */
        else
            nz = memcmp((const unsigned char *)x->data + (size_t)i * es, zero, es) != 0;
        if (nz) count++;
    }
    int64_t *y = out[0]->data, rows = r ? r : 1;
    /* row d holds coordinate d of each hit, in row-major order */
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        bool nz = ib_dtype_is_float(x->desc.dtype)
                      ? ib_op_ld(x->data, x->desc.dtype, i) != 0.0
                      : memcmp((const unsigned char *)x->data + (size_t)i * es, zero, es) != 0;
        if (!nz) continue;
        int64_t rem = i;
        for (int32_t d = r - 1; d >= 0; d--) {
            y[d * count + k] = rem % x->desc.dims[d];
            rem /= x->desc.dims[d];
        }
        if (r == 0) y[k] = 0;
        k++;
    }
    IB_UNUSED(cap);
    out[0]->desc.dims[0] = rows;
    out[0]->desc.dims[1] = count;
    return IB_OK;
}

/* ---- CumSum(x, axis): exclusive, reverse ------------------------------------- */

static int k_cumsum(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0];
    int64_t a[1];
    size_t na;
    int32_t axis;
    int rc = ib_op_read_ints(ctx, err, in[1], "axis", a, 1, &na);
    if (!rc && na != 1) rc = IB_OP_BAD(ctx, err, "axis must hold one value");
    if (!rc) rc = ib_op_axis(ctx, err, a[0], x->desc.ndim, &axis);
    if (rc) return rc;
    bool excl = ib_op_attr_i(ctx, "exclusive", 0) != 0, rev = ib_op_attr_i(ctx, "reverse", 0) != 0;
    int64_t outer = 1, len = x->desc.dims[axis], inner = 1;
    for (int32_t d = 0; d < x->desc.ndim; d++)
        if (d < axis)
            outer *= x->desc.dims[d];
        else if (d > axis)
            inner *= x->desc.dims[d];
    enum ib_dtype dt = x->desc.dtype;
    bool ints = ib_dtype_is_int(dt);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double s = 0;
            uint64_t si = 0;
            for (int64_t k = 0; k < len; k++) {
                int64_t j = rev ? len - 1 - k : k, off = (o * len + j) * inner + i;
                if (ints) {
                    uint64_t v = (uint64_t)ib_op_ldi(x->data, dt, off);
                    if (!excl) si += v;
                    ib_op_sti(out[0]->data, dt, off, (int64_t)si);
                    if (excl) si += v;
                } else {
                    double v = ib_op_ld(x->data, dt, off);
                    if (!excl) s += v;
                    ib_op_st(out[0]->data, dt, off, s);
                    if (excl) s += v;
                }
            }
        }
    return IB_OK;
}

/* ---- Trilu(x, k): keep j - i >= k (upper) or <= k (lower) on the last two dims */

static int infer_trilu(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    if (in[0]->ndim < 2) return IB_OP_BAD(ctx, err, "input must have rank >= 2");
    return ib_op_infer_same(ctx, in, const_in, n_in, out, n_out, dd, err);
}

static int k_trilu(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *kt = ib_op_cin(in, n_in, 1);
    double kv = 0;
    int rc = kt ? ib_op_read_scalar(ctx, err, kt, "k", &kv) : IB_OK;
    if (rc) return rc;
    int64_t k = kt ? ib_op_ldi(kt->data, kt->desc.dtype, 0) : 0;
    bool upper = ib_op_attr_i(ctx, "upper", 1) != 0;
    int32_t r = x->desc.ndim;
    int64_t R = x->desc.dims[r - 2], C = x->desc.dims[r - 1];
    int64_t mats = R * C != 0 ? ib_tensor_desc_numel(&x->desc) / (R * C) : 0;
    size_t es = ib_dtype_size(x->desc.dtype);
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < R; i++)
            for (int64_t j = 0; j < C; j++) {
                size_t off = (size_t)((m * R + i) * C + j) * es;
                bool keep = upper ? j - i >= k : j - i <= k; /* j - i is small: no overflow */
                if (keep)
                    memcpy((unsigned char *)out[0]->data + off,
                           (const unsigned char *)x->data + off, es);
                else
                    memset((unsigned char *)out[0]->data + off, 0, es);
            }
    return IB_OK;
}

/* ---- EyeLike: ones on diagonal k, type `dtype` (default the input's) ------------ */

static int infer_eyelike(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    if (in[0]->ndim != 2) return IB_OP_BAD(ctx, err, "input must be 2-D, not rank %d", in[0]->ndim);
    out[0] = *in[0];
    if (ib_op_has_attr(ctx, "dtype")) {
        int64_t t = ib_op_attr_i(ctx, "dtype", 1);
        if (t <= 0 || t > 16 || ib_dtype_size((enum ib_dtype)t) == 0)
            return IB_OP_UNSUP(ctx, err, "dtype %lld is not supported", (long long)t);
        out[0].dtype = (enum ib_dtype)t;
    }
    return IB_OK;
}

static int k_eyelike(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    int64_t k = ib_op_attr_i(ctx, "k", 0), R = out[0]->desc.dims[0], C = out[0]->desc.dims[1];
    memset(out[0]->data, 0, out[0]->nbytes);
    for (int64_t i = 0; i < R; i++)
        if (k < C && k > -R && i + k >= 0 && i + k < C)
            ib_op_st(out[0]->data, out[0]->desc.dtype, i * C + i + k, 1.0);
    return IB_OK;
}

/* ---- OneHot(indices, depth, values[off, on]), axis --------------------------------- */

static int onehot_depth(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *d, int64_t *depth)
{
    double v;
    int rc = ib_op_read_scalar(ctx, err, d, "depth", &v);
    if (rc) return rc;
    if (!(v >= 1 && v < 1e9)) return IB_OP_BAD(ctx, err, "depth %g is invalid", v);
    *depth = (int64_t)v;
    return IB_OK;
}

static int infer_onehot(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    int32_t r = in[0]->ndim + 1, axis;
    if (r > IB_MAX_DIMS) return IB_OP_UNSUP(ctx, err, "output rank %d exceeds %d", r, IB_MAX_DIMS);
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", -1), r, &axis);
    if (rc) return rc;
    if (ib_tensor_desc_numel(in[2]) != 2) return IB_OP_BAD(ctx, err, "values must hold [off, on]");
    int64_t depth = IB_DIM_DYNAMIC;
    const ib_tensor *dt = ib_op_cin(const_in, n_in, 1);
    if (!dt)
        *dd = true;
    else if ((rc = onehot_depth(ctx, err, dt, &depth)))
        return rc;
    ib_tensor_desc y = {in[2]->dtype, r, {0}};
    for (int32_t d = 0, k = 0; d < r; d++)
        y.dims[d] = d == axis ? depth : in[0]->dims[k++];
    out[0] = y;
    return IB_OK;
}

static int k_onehot(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *ix = in[0], *vals = in[2];
    ib_tensor *y = out[0];
    int32_t axis;
    int64_t depth;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", -1), y->desc.ndim, &axis);
    if (!rc) rc = onehot_depth(ctx, err, in[1], &depth);
    if (rc) return rc;
    size_t es = ib_dtype_size(vals->desc.dtype);
    const unsigned char *off = vals->data, *on = off + es;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < ix->desc.ndim; d++)
        *(d < axis ? &outer : &inner) *= ix->desc.dims[d];
    unsigned char *dst = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t dpt = 0; dpt < depth; dpt++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t v = ib_op_ldi(ix->data, ix->desc.dtype, o * inner + i);
                if (v < 0) v += depth;
                memcpy(dst + (size_t)((o * depth + dpt) * inner + i) * es, v == dpt ? on : off, es);
            }
    return IB_OK;
}

/* ---- ScatterElements / Scatter / ScatterND ------------------------------------------ */

enum sc_red { SC_NONE, SC_ADD, SC_MUL };

static int sc_reduction(const ib_op_ctx *ctx, ib_err *err, enum sc_red *r)
{
    const char *s = ib_op_attr_s(ctx, "reduction", "none");
    *r = SC_NONE;
    if (strcmp(s, "add") == 0)
        *r = SC_ADD;
    else if (strcmp(s, "mul") == 0)
        *r = SC_MUL;
    else if (strcmp(s, "none") != 0)
        return IB_OP_UNSUP(ctx, err, "attribute reduction='%s' is not supported", s);
    return IB_OK;
}

/* dst[di] (op)= src[si], element type t. */
static void sc_apply(void *dst, int64_t di, const void *src, int64_t si, enum ib_dtype t,
                     enum sc_red r)
{
    size_t es = ib_dtype_size(t);
    if (r == SC_NONE) {
        memcpy((unsigned char *)dst + (size_t)di * es, (const unsigned char *)src + (size_t)si * es,
               es);
    } else if (ib_dtype_is_float(t)) {
        double a = ib_op_ld(dst, t, di), b = ib_op_ld(src, t, si);
        ib_op_st(dst, t, di, r == SC_ADD ? a + b : a * b);
    } else {
        uint64_t a = (uint64_t)ib_op_ldi(dst, t, di), b = (uint64_t)ib_op_ldi(src, t, si);
        ib_op_sti(dst, t, di, (int64_t)(r == SC_ADD ? a + b : a * b));
    }
}

static int infer_scatter(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    if (in[1]->dtype != IB_DTYPE_INT64 && in[1]->dtype != IB_DTYPE_INT32)
        return IB_OP_BAD(ctx, err, "indices must be int32 or int64");
    if (in[2]->dtype != in[0]->dtype)
        return IB_OP_BAD(ctx, err, "updates type %s differs from data type %s",
                         ib_dtype_name(in[2]->dtype), ib_dtype_name(in[0]->dtype));
    return ib_op_infer_same(ctx, in, const_in, n_in, out, n_out, dd, err);
}

static int k_scatter_el(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                        ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *ix = in[1], *up = in[2];
    int32_t axis, r = x->desc.ndim;
    enum sc_red red;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), r, &axis);
    if (!rc) rc = sc_reduction(ctx, err, &red);
    if (rc) return rc;
    if (ix->desc.ndim != r || up->desc.ndim != r)
        return IB_OP_BAD(ctx, err, "indices and updates must have the data's rank");
    for (int32_t d = 0; d < r; d++)
        if (ix->desc.dims[d] != up->desc.dims[d] ||
            (d != axis && ix->desc.dims[d] > x->desc.dims[d]))
            return IB_OP_BAD(ctx, err, "indices/updates shape does not fit the data");
    memcpy(out[0]->data, x->data, x->nbytes);
    int64_t xs[IB_MAX_DIMS], idx[IB_MAX_DIMS] = {0};
    ib_op_strides(&x->desc, xs);
    int64_t n = ib_tensor_desc_numel(&ix->desc), dim = x->desc.dims[axis];
    for (int64_t o = 0; o < n; o++) {
        int64_t v = ib_op_ldi(ix->data, ix->desc.dtype, o), w = v < 0 ? v + dim : v;
        if (w < 0 || w >= dim)
            return IB_OP_BAD(ctx, err, "index %lld is out of range for a dimension of %lld",
                             (long long)v, (long long)dim);
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++)
            off += (d == axis ? w : idx[d]) * xs[d];
        sc_apply(out[0]->data, off, up->data, o, x->desc.dtype, red);
        for (int32_t d = r - 1; d >= 0; d--) {
            if (++idx[d] < ix->desc.dims[d]) break;
            idx[d] = 0;
        }
    }
    return IB_OK;
}

static int k_scatter_nd(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                        ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *ix = in[1], *up = in[2];
    enum sc_red red;
    int rc = sc_reduction(ctx, err, &red);
    if (rc) return rc;
    int32_t q = ix->desc.ndim, r = x->desc.ndim;
    int64_t k = q ? ix->desc.dims[q - 1] : 0;
    if (q < 1 || k < 1 || k > r || up->desc.ndim != q - 1 + r - (int32_t)k)
        return IB_OP_BAD(ctx, err, "indices [..., %lld] and updates do not fit data of rank %d",
                         (long long)k, r);
    int64_t xs[IB_MAX_DIMS], slice = 1, nidx = 1;
    ib_op_strides(&x->desc, xs);
    for (int32_t d = (int32_t)k; d < r; d++)
        slice *= x->desc.dims[d];
    for (int32_t d = 0; d < q - 1; d++)
        nidx *= ix->desc.dims[d];
    if (ib_tensor_desc_numel(&up->desc) != nidx * slice)
        return IB_OP_BAD(ctx, err, "updates have %lld elements, expected %lld",
                         (long long)ib_tensor_desc_numel(&up->desc), (long long)(nidx * slice));
    memcpy(out[0]->data, x->data, x->nbytes);
    for (int64_t j = 0; j < nidx; j++) {
        int64_t off = 0;
        for (int64_t d = 0; d < k; d++) {
            int64_t dim = x->desc.dims[d], v = ib_op_ldi(ix->data, ix->desc.dtype, j * k + d);
            int64_t w = v < 0 ? v + dim : v;
            if (w < 0 || w >= dim)
                return IB_OP_BAD(ctx, err, "index %lld is out of range for a dimension of %lld",
                                 (long long)v, (long long)dim);
            off += w * xs[d];
        }
        for (int64_t e = 0; e < slice; e++)
            sc_apply(out[0]->data, off + e, up->data, j * slice + e, x->desc.dtype, red);
    }
    return IB_OK;
}

/* ---- DepthToSpace / SpaceToDepth (NCHW) ---------------------------------------------- */

static int d2s_block(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x, int64_t *b)
{
    *b = ib_op_attr_i(ctx, "blocksize", 0);
    if (x->ndim != 4)
        return IB_OP_BAD(ctx, err, "input must be 4-D (N, C, H, W), not rank %d", x->ndim);
    if (*b < 1 || *b > 65536)
        return IB_OP_BAD(ctx, err, "blocksize %lld is invalid", (long long)*b);
    return IB_OK;
}

static bool is_d2s(const ib_op_ctx *ctx)
{
    return ctx && ctx->node && strcmp(ctx->node->op_type, "DepthToSpace") == 0;
}

static int infer_d2s(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int64_t b;
    int rc = d2s_block(ctx, err, in[0], &b);
    if (rc) return rc;
    const char *mode = ib_op_attr_s(ctx, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return IB_OP_UNSUP(ctx, err, "attribute mode='%s' is not supported", mode);
    ib_tensor_desc y = *in[0];
    int64_t C = y.dims[1], H = y.dims[2], W = y.dims[3];
    if (is_d2s(ctx)) {
        if (C >= 0 && C % (b * b))
            return IB_OP_BAD(ctx, err, "channels %lld are not divisible by blocksize^2",
                             (long long)C);
        y.dims[1] = C < 0 ? C : C / (b * b);
        y.dims[2] = H < 0 ? H : H * b;
        y.dims[3] = W < 0 ? W : W * b;
    } else {
        if ((H >= 0 && H % b) || (W >= 0 && W % b))
            return IB_OP_BAD(ctx, err, "H and W must be divisible by blocksize");
        y.dims[1] = C < 0 ? C : C * b * b;
        y.dims[2] = H < 0 ? H : H / b;
        y.dims[3] = W < 0 ? W : W / b;
    }
    out[0] = y;
    return IB_OK;
}

/* Both directions: an element of the "space" tensor (n, c, h*b+i, w*b+j)
 * maps to depth channel (i*b + j)*C + c (DCR) or c*b*b + i*b + j (CRD). */
static int k_d2s(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    int64_t b;
    int rc = d2s_block(ctx, err, &in[0]->desc, &b);
    if (rc) return rc;
    bool d2s = is_d2s(ctx);
    bool crd = d2s && strcmp(ib_op_attr_s(ctx, "mode", "DCR"), "CRD") == 0;
    const ib_tensor *deep = d2s ? in[0] : out[0], *space = d2s ? out[0] : in[0];
    int64_t N = space->desc.dims[0], C = space->desc.dims[1], H = space->desc.dims[2] / b,
            W = space->desc.dims[3] / b, CD = deep->desc.dims[1];
    size_t es = ib_dtype_size(in[0]->desc.dtype);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H * b; h++)
                for (int64_t w = 0; w < W * b; w++) {
                    int64_t i = h % b, j = w % b;
                    int64_t cd = crd ? c * b * b + i * b + j : (i * b + j) * C + c;
                    size_t so = (size_t)(((n * C + c) * H * b + h) * W * b + w) * es;
                    size_t dof = (size_t)(((n * CD + cd) * H + h / b) * W + w / b) * es;
                    const unsigned char *src = d2s ? (const unsigned char *)in[0]->data + dof
                                                   : (const unsigned char *)in[0]->data + so;
                    unsigned char *dst = (unsigned char *)out[0]->data + (d2s ? so : dof);
                    memcpy(dst, src, es);
                }
    return IB_OK;
}

static const ib_op_def defs[] = {
    {"", "NonZero", 9, 0, infer_nonzero, k_nonzero, NULL, NULL, IB_DT_NUMS | IB_DT(BOOL), 1, 1, 1,
     1, 0, IB_OP_F_DATA_DEPENDENT},
    {"", "CumSum", 11, 0, ib_op_infer_same, k_cumsum, NULL, NULL, IB_DT_NUMS, 2, 2, 1, 1, 0, 0},
    {"", "Trilu", 14, 0, infer_trilu, k_trilu, NULL, NULL, 0, 1, 2, 1, 1, 0, 0},
    {"", "EyeLike", 9, 0, infer_eyelike, k_eyelike, NULL, NULL, 0, 1, 1, 1, 1, 0, 0},
    {"", "OneHot", 9, 0, infer_onehot, k_onehot, NULL, NULL, IB_DT_NUMS, 3, 3, 1, 1, 0x2u, 0},
    {"", "Scatter", 9, 10, infer_scatter, k_scatter_el, NULL, NULL, 0, 3, 3, 1, 1, 0, 0},
    {"", "ScatterElements", 11, 0, infer_scatter, k_scatter_el, NULL, NULL, 0, 3, 3, 1, 1, 0, 0},
    {"", "ScatterND", 11, 0, ib_op_infer_same, k_scatter_nd, NULL, NULL, 0, 3, 3, 1, 1, 0, 0},
    {"", "DepthToSpace", 1, 0, infer_d2s, k_d2s, NULL, NULL, 0, 1, 1, 1, 1, 0, 0},
    {"", "SpaceToDepth", 1, 0, infer_d2s, k_d2s, NULL, NULL, 0, 1, 1, 1, 1, 0, 0},
};

const ib_op_family ib_ops_index = {"index", defs, IB_ARRAY_LEN(defs)};
