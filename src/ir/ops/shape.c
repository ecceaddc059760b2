/*
 * shape.c - ops that change shapes but not values: Reshape (allowzero),
 * Flatten, Squeeze/Unsqueeze (axes attribute before opset 13, input from
 * 13), Shape (start/end from 15), Size, Expand, Tile, Range.
 *
 * When a shape-deciding input (Reshape's shape, Expand's shape, Tile's
 * repeats, Squeeze/Unsqueeze axes, Range's scalars) is not constant, infer
 * sets *data_dependent and returns what it knows (rank, or nothing).
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ops_util.h"

static int copy_data(const ib_tensor *x, ib_tensor *y)
{
    size_t n = IB_MIN(x->nbytes, y->nbytes);
    if (x->data != y->data && n) memcpy(y->data, x->data, n);
    return IB_OK;
}

static int k_copy(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    return copy_data(in[0], out[0]);
}

/* Unknown result of rank r (or unknown rank when r < 0: rank 0 placeholder). */
static void unknown(ib_tensor_desc *y, enum ib_dtype dt, int32_t r, bool *dd)
{
    memset(y, 0, sizeof *y);
    y->dtype = dt;
    y->ndim = r < 0 ? 0 : r;
    for (int32_t i = 0; i < y->ndim; i++)
        y->dims[i] = IB_DIM_DYNAMIC;
    *dd = true;
}

/* ---- Reshape ------------------------------------------------------------------ */

static int infer_reshape(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor_desc *x = in[0];
    const ib_tensor *st = ib_op_cin(const_in, n_in, 1);
    if (!st) {
        int32_t r = in[1]->ndim == 1 && in[1]->dims[0] >= 0 ? (int32_t)in[1]->dims[0] : -1;
        if (r > IB_MAX_DIMS)
            return IB_OP_UNSUP(ctx, err, "output rank %d exceeds %d", r, IB_MAX_DIMS);
        unknown(&out[0], x->dtype, r, dd);
        return IB_OK;
    }
    int64_t shape[IB_MAX_DIMS];
    size_t n;
    int rc = ib_op_read_ints(ctx, err, st, "shape", shape, IB_MAX_DIMS, &n);
    if (rc) return rc;
    bool allowzero = ib_op_opset(ctx) >= 14 && ib_op_attr_i(ctx, "allowzero", 0) != 0;
    ib_tensor_desc y = {x->dtype, (int32_t)n, {0}};
    int32_t infer_at = -1;
    int64_t known = 1;
    bool dyn = false;
    for (size_t i = 0; i < n; i++) {
        int64_t d = shape[i];
        if (d == 0 && !allowzero) {
            if (i >= (size_t)x->ndim)
                return IB_OP_BAD(ctx, err, "shape[%zu] = 0 copies a dim the input lacks", i);
            d = x->dims[i];
        } else if (d == -1) {
            if (infer_at >= 0) return IB_OP_BAD(ctx, err, "shape has more than one -1");
            infer_at = (int32_t)i;
            continue;
        } else if (d < -1) {
            return IB_OP_BAD(ctx, err, "shape[%zu] = %lld is invalid", i, (long long)d);
        }
        y.dims[i] = d;
        if (d < 0)
            dyn = true;
        else if ((rc = ib_op_dim_mul(ctx, err, known, d, &known)))
            return rc;
    }
    if (allowzero && infer_at >= 0 && known == 0)
        return IB_OP_BAD(ctx, err, "shape has both 0 (allowzero) and -1");
    int64_t total = ib_tensor_desc_numel(x);
    if (infer_at >= 0) {
        if (total < 0 || dyn)
            y.dims[infer_at] = IB_DIM_DYNAMIC;
        else if (known == 0 || total % known)
            return IB_OP_BAD(ctx, err, "cannot reshape %lld elements with a -1 and %lld known",
                             (long long)total, (long long)known);
        else
            y.dims[infer_at] = total / known;
    } else if (total >= 0 && !dyn && total != known) {
        char a[128], b[128];
        return IB_OP_BAD(ctx, err, "cannot reshape %s (%lld elements) to %s",
                         ib_tensor_desc_str(x, a, sizeof a), (long long)total,
                         ib_tensor_desc_str(&y, b, sizeof b));
    }
    out[0] = y;
    return IB_OK;
}

/* ---- Flatten -------------------------------------------------------------------- */

static int infer_flatten(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    const ib_tensor_desc *x = in[0];
    int64_t axis = ib_op_attr_i(ctx, "axis", 1);
    if (axis < 0) axis += x->ndim;
    if (axis < 0 || axis > x->ndim)
        return IB_OP_BAD(ctx, err, "axis %lld is out of range for rank %d",
                         (long long)ib_op_attr_i(ctx, "axis", 1), x->ndim);
    int64_t a = 1, b = 1;
    for (int32_t d = 0; d < x->ndim; d++) {
        int64_t *p = d < axis ? &a : &b;
        int rc = ib_op_dim_mul(ctx, err, *p, x->dims[d], p);
        if (rc) return rc;
    }
    ib_tensor_desc y = {x->dtype, 2, {a, b}};
    out[0] = y;
    return IB_OK;
}

/* ---- Squeeze / Unsqueeze -------------------------------------------------------------- */

/* The axes list: attribute before opset 13, optional input from 13. Returns
 * 1 when the axes are an input whose value is not known. */
static int read_axes(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, int64_t *axes, size_t *na)
{
    *na = 0;
    if (ib_op_opset(ctx) < 13) return ib_op_attr_ints_copy(ctx, err, "axes", axes, IB_MAX_DIMS, na);
    if (n_in < 2 || !in[1]) return IB_OK;
    const ib_tensor *t = ib_op_cin(const_in, n_in, 1);
    if (!t) return 1;
    return ib_op_read_ints(ctx, err, t, "axes", axes, IB_MAX_DIMS, na);
}

static int infer_squeeze(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor_desc *x = in[0];
    int64_t axes[IB_MAX_DIMS];
    size_t na;
    int rc = read_axes(ctx, err, in, const_in, n_in, axes, &na);
    if (rc == 1) {
        unknown(&out[0], x->dtype, -1, dd);
        return IB_OK;
    }
    if (rc) return rc;
    bool drop[IB_MAX_DIMS] = {false};
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if ((rc = ib_op_axis(ctx, err, axes[i], x->ndim, &a))) return rc;
        if (x->dims[a] != 1 && x->dims[a] >= 0)
            return IB_OP_BAD(ctx, err, "cannot squeeze axis %lld of size %lld", (long long)axes[i],
                             (long long)x->dims[a]);
        drop[a] = true;
    }
    if (na == 0)
        for (int32_t d = 0; d < x->ndim; d++) {
            if (x->dims[d] < 0) { /* a dynamic dim might be 1 */
                unknown(&out[0], x->dtype, -1, dd);
                return IB_OK;
            }
            drop[d] = x->dims[d] == 1;
        }
    ib_tensor_desc y = {x->dtype, 0, {0}};
    for (int32_t d = 0; d < x->ndim; d++)
        if (!drop[d]) y.dims[y.ndim++] = x->dims[d];
    out[0] = y;
    return IB_OK;
}

static int infer_unsqueeze(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                           const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                           uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor_desc *x = in[0];
    int64_t axes[IB_MAX_DIMS];
    size_t na;
    int rc = read_axes(ctx, err, in, const_in, n_in, axes, &na);
    if (rc == 1) {
        int32_t r =
            in[1]->ndim == 1 && in[1]->dims[0] >= 0 ? x->ndim + (int32_t)in[1]->dims[0] : -1;
        unknown(&out[0], x->dtype, r > IB_MAX_DIMS ? -1 : r, dd);
        return IB_OK;
    }
    if (rc) return rc;
    if (na == 0) return IB_OP_BAD(ctx, err, "axes are required");
    int32_t r = x->ndim + (int32_t)na;
    if (r > IB_MAX_DIMS) return IB_OP_UNSUP(ctx, err, "output rank %d exceeds %d", r, IB_MAX_DIMS);
    bool ins[IB_MAX_DIMS] = {false};
    for (size_t i = 0; i < na; i++) {
        int32_t a;
        if ((rc = ib_op_axis(ctx, err, axes[i], r, &a))) return rc;
        if (ins[a]) return IB_OP_BAD(ctx, err, "axis %lld is listed twice", (long long)axes[i]);
        ins[a] = true;
    }
    ib_tensor_desc y = {x->dtype, r, {0}};
    for (int32_t d = 0, k = 0; d < r; d++)
        y.dims[d] = ins[d] ? 1 : x->dims[k++];
    out[0] = y;
    return IB_OK;
}

/* ---- Shape / Size ------------------------------------------------------------------ */

static void shape_range(const ib_op_ctx *ctx, int32_t r, int64_t *s, int64_t *e)
{
    *s = 0;
    *e = r;
    if (ib_op_opset(ctx) >= 15) {
        *s = ib_op_attr_i(ctx, "start", 0);
        *e = ib_op_attr_i(ctx, "end", r);
    }
    if (*s < 0) *s += r;
    if (*e < 0) *e += r;
    *s = *s < 0 ? 0 : *s > r ? r : *s;
    *e = *e < 0 ? 0 : *e > r ? r : *e;
    if (*e < *s) *e = *s;
}

static int infer_shape(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    IB_UNUSED(err);
    int64_t s, e;
    shape_range(ctx, in[0]->ndim, &s, &e);
    ib_tensor_desc y = {IB_DTYPE_INT64, 1, {e - s}};
    out[0] = y;
    return IB_OK;
}

static int k_shape(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    int64_t s, e;
    shape_range(ctx, in[0]->desc.ndim, &s, &e);
    for (int64_t i = s; i < e; i++)
        ((int64_t *)out[0]->data)[i - s] = in[0]->desc.dims[i];
    return IB_OK;
}

static int infer_size(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(in);
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    IB_UNUSED(err);
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = IB_DTYPE_INT64;
    return IB_OK;
}

static int k_size(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    *(int64_t *)out[0]->data = ib_tensor_desc_numel(&in[0]->desc);
    return IB_OK;
}

/* ---- Expand / Tile ------------------------------------------------------------------- */

static int infer_expand(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *st = ib_op_cin(const_in, n_in, 1);
    if (!st) {
        int32_t r = in[1]->ndim == 1 && in[1]->dims[0] >= 0 ? (int32_t)in[1]->dims[0] : -1;
        unknown(&out[0], in[0]->dtype, r < in[0]->ndim ? in[0]->ndim : r, dd);
        return out[0].ndim > IB_MAX_DIMS ? IB_OP_UNSUP(ctx, err, "rank too large") : IB_OK;
    }
    ib_tensor_desc s = {in[0]->dtype, 0, {0}};
    size_t n;
    int rc = ib_op_read_ints(ctx, err, st, "shape", s.dims, IB_MAX_DIMS, &n);
    if (rc) return rc;
    s.ndim = (int32_t)n;
    for (size_t i = 0; i < n; i++)
        if (s.dims[i] < 0)
            return IB_OP_BAD(ctx, err, "shape[%zu] = %lld is negative", i, (long long)s.dims[i]);
    return ib_op_broadcast(ctx, err, in[0], &s, &out[0]);
}

static int k_expand(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    ib_op_bcast_copy(in[0], out[0]);
    return IB_OK;
}

static int infer_tile(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *rt = ib_op_cin(const_in, n_in, 1);
    if (!rt) {
        unknown(&out[0], in[0]->dtype, in[0]->ndim, dd);
        return IB_OK;
    }
    int64_t rep[IB_MAX_DIMS];
    size_t n;
    int rc = ib_op_read_ints(ctx, err, rt, "repeats", rep, IB_MAX_DIMS, &n);
    if (rc) return rc;
    if (n != (size_t)in[0]->ndim)
        return IB_OP_BAD(ctx, err, "repeats has %zu values, input rank is %d", n, in[0]->ndim);
    out[0] = *in[0];
    for (size_t i = 0; i < n; i++) {
        if (rep[i] < 0)
            return IB_OP_BAD(ctx, err, "repeats[%zu] = %lld is negative", i, (long long)rep[i]);
        if ((rc = ib_op_dim_mul(ctx, err, in[0]->dims[i], rep[i], &out[0].dims[i]))) return rc;
    }
    return IB_OK;
}

static int k_tile(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    const ib_tensor *x = in[0];
    ib_tensor *y = out[0];
    size_t es = ib_dtype_size(x->desc.dtype);
    int32_t r = x->desc.ndim;
    int64_t xs[IB_MAX_DIMS], idx[IB_MAX_DIMS] = {0};
    ib_op_strides(&x->desc, xs);
    int64_t n = ib_tensor_desc_numel(&y->desc);
    const unsigned char *src = x->data;
    unsigned char *dst = y->data;
    for (int64_t o = 0; o < n; o++) {
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++)
            off += (idx[d] % x->desc.dims[d]) * xs[d];
        memcpy(dst + (size_t)o * es, src + (size_t)off * es, es);
        for (int32_t d = r - 1; d >= 0; d--) {
            if (++idx[d] < y->desc.dims[d]) break;
            idx[d] = 0;
        }
    }
    return IB_OK;
}

/* ---- Range ----------------------------------------------------------------------------- */

static int range_len(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *const *in, double *s,
                     double *d, int64_t *n)
{
    double l;
    int rc = ib_op_read_scalar(ctx, err, in[0], "start", s);
    if (!rc) rc = ib_op_read_scalar(ctx, err, in[1], "limit", &l);
    if (!rc) rc = ib_op_read_scalar(ctx, err, in[2], "delta", d);
    if (rc) return rc;
    if (*d == 0) return IB_OP_BAD(ctx, err, "delta must not be 0");
    double c = ceil((l - *s) / *d);
    if (!(c < 1e12))
        return c > 0 ? IB_OP_BAD(ctx, err, "range of %g elements is too large", c) : (*n = 0, 0);
    *n = c > 0 ? (int64_t)c : 0;
    return IB_OK;
}

static int infer_range(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    for (uint32_t i = 0; i < 3; i++)
        if (in[i]->dtype != in[0]->dtype)
            return IB_OP_BAD(ctx, err, "start, limit and delta must have the same type");
    if (!ib_op_cin(const_in, n_in, 0) || !const_in[1] || !const_in[2]) {
        unknown(&out[0], in[0]->dtype, 1, dd);
        return IB_OK;
    }
    double s, d;
    int64_t n;
    int rc = range_len(ctx, err, const_in, &s, &d, &n);
    ib_tensor_desc y = {in[0]->dtype, 1, {n}};
    out[0] = y;
    return rc;
}

static int k_range(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    double s, d;
    int64_t n;
    int rc = range_len(ctx, err, in, &s, &d, &n);
    if (rc) return rc;
    enum ib_dtype dt = out[0]->desc.dtype;
    if (ib_dtype_is_int(dt)) {
        /* unsigned arithmetic: wraps like the integer type instead of UB */
        uint64_t is = (uint64_t)ib_op_ldi(in[0]->data, dt, 0),
                 id = (uint64_t)ib_op_ldi(in[2]->data, dt, 0);
        for (int64_t i = 0; i < n; i++)
            ib_op_sti(out[0]->data, dt, i, (int64_t)(is + (uint64_t)i * id));
    } else {
        /* ONNX defines Range as repeated addition (start, start+delta, ...) in T */
        double v = s;
        for (int64_t i = 0; i < n; i++) {
            ib_op_st(out[0]->data, dt, i, v);
            v = ib_op_ld(out[0]->data, dt, i) + d;
        }
    }
    return IB_OK;
}

#define A 0 /* any dtype */

static const ib_op_def defs[] = {
    {"", "Reshape", 5, 0, infer_reshape, k_copy, NULL, NULL, A, 2, 2, 1, 1, 0x2u, IB_OP_F_ALIAS},
    {"", "Flatten", 1, 0, infer_flatten, k_copy, NULL, NULL, A, 1, 1, 1, 1, 0, IB_OP_F_ALIAS},
    {"", "Squeeze", 1, 0, infer_squeeze, k_copy, NULL, NULL, A, 1, 2, 1, 1, 0x2u, IB_OP_F_ALIAS},
    {"", "Unsqueeze", 1, 0, infer_unsqueeze, k_copy, NULL, NULL, A, 1, 2, 1, 1, 0x2u,
     IB_OP_F_ALIAS},
    {"", "Shape", 1, 0, infer_shape, k_shape, NULL, NULL, A, 1, 1, 1, 1, 0, 0},
    {"", "Size", 1, 0, infer_size, k_size, NULL, NULL, A, 1, 1, 1, 1, 0, 0},
    {"", "Expand", 8, 0, infer_expand, k_expand, NULL, NULL, A, 2, 2, 1, 1, 0x2u, 0},
    {"", "Tile", 6, 0, infer_tile, k_tile, NULL, NULL, A, 2, 2, 1, 1, 0x2u, 0},
    {"", "Range", 11, 0, infer_range, k_range, NULL, NULL,
     IB_DT(FLOAT32) | IB_DT(FLOAT64) | IB_DT(INT16) | IB_DT(INT32) | IB_DT(INT64), 3, 3, 1, 1, 0x7u,
     0},
};

const ib_op_family ib_ops_shape = {"shape", defs, IB_ARRAY_LEN(defs)};
