/*
 * layout.c - ops that move elements: Transpose, Concat, Split (`split`
 * attribute before opset 13, input from 13), Slice (starts/ends/axes
 * attributes before opset 10, inputs with steps from 10). Any dtype: data
 * moves as element bytes.
 */
#include <string.h>

#include "ir/ops/ops_util.h"

/* ---- Transpose ------------------------------------------------------------------------ */

static int read_perm(const ib_op_ctx *ctx, ib_err *err, int32_t r, int32_t *perm)
{
    const int64_t *p;
    size_t n = ib_op_attr_ints(ctx, "perm", &p);
    if (!p) {
        for (int32_t i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        return IB_OK;
    }
    if (n != (size_t)r) return IB_OP_BAD(ctx, err, "perm has %zu values, input rank is %d", n, r);
    bool seen[IB_MAX_DIMS] = {false};
    for (int32_t i = 0; i < r; i++) {
        if (p[i] < 0 || p[i] >= r || seen[p[i]])
            return IB_OP_BAD(ctx, err, "perm is not a permutation of 0..%d", r - 1);
        seen[p[i]] = true;
        perm[i] = (int32_t)p[i];
    }
    return IB_OK;
}

static int infer_transpose(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                           const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                           uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int32_t perm[IB_MAX_DIMS];
    int rc = read_perm(ctx, err, in[0]->ndim, perm);
    if (rc) return rc;
    out[0] = *in[0];
    for (int32_t i = 0; i < in[0]->ndim; i++)
        out[0].dims[i] = in[0]->dims[perm[i]];
    return IB_OK;
}

static int k_transpose(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                       ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0];
    ib_tensor *y = out[0];
    int32_t r = x->desc.ndim, perm[IB_MAX_DIMS];
    int rc = read_perm(ctx, err, r, perm);
    if (rc) return rc;
    int64_t xs[IB_MAX_DIMS], st[IB_MAX_DIMS], idx[IB_MAX_DIMS] = {0};
    ib_op_strides(&x->desc, xs);
    for (int32_t i = 0; i < r; i++)
        st[i] = xs[perm[i]]; /* input stride of output axis i */
    size_t es = ib_dtype_size(x->desc.dtype);
    int64_t n = ib_tensor_desc_numel(&y->desc);
    if (n == 0) return IB_OK;
    int64_t inner = r ? y->desc.dims[r - 1] : 1, ist = r ? st[r - 1] : 0;
    const unsigned char *src = x->data;
    unsigned char *dst = y->data;
    int64_t off = 0;
    for (int64_t o = 0; o < n; o += inner) {
        for (int64_t i = 0; i < inner; i++)
            memcpy(dst + (size_t)(o + i) * es, src + (size_t)(off + i * ist) * es, es);
        for (int32_t d = r - 2; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < y->desc.dims[d]) break;
            off -= st[d] * y->desc.dims[d];
            idx[d] = 0;
        }
    }
    return IB_OK;
}

/* ---- Concat ---------------------------------------------------------------------------- */

static int infer_concat(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    if (!ib_op_has_attr(ctx, "axis")) return IB_OP_BAD(ctx, err, "attribute 'axis' is required");
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), in[0]->ndim, &axis);
    if (rc) return rc;
    ib_tensor_desc y = *in[0];
    for (uint32_t i = 1; i < n_in; i++) {
        const ib_tensor_desc *d = in[i];
        if (!d) return IB_OP_BAD(ctx, err, "input %u is missing", i);
        if (d->ndim != y.ndim || d->dtype != y.dtype)
            return IB_OP_BAD(ctx, err, "input %u is %s of rank %d, input 0 %s of rank %d", i,
                             ib_dtype_name(d->dtype), d->ndim, ib_dtype_name(y.dtype), y.ndim);
        for (int32_t k = 0; k < y.ndim; k++) {
            if (k == axis) {
                if ((rc = ib_op_dim_add(ctx, err, y.dims[k], d->dims[k], &y.dims[k]))) return rc;
            } else if (d->dims[k] >= 0 && y.dims[k] >= 0 && d->dims[k] != y.dims[k]) {
                return IB_OP_BAD(ctx, err, "input %u has dim %d = %lld, input 0 has %lld", i, k,
                                 (long long)d->dims[k], (long long)y.dims[k]);
            } else if (y.dims[k] < 0) {
                y.dims[k] = d->dims[k];
            }
        }
    }
    out[0] = y;
    return IB_OK;
}

static int k_concat(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    ib_tensor *y = out[0];
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), y->desc.ndim, &axis);
    if (rc) return rc;
    size_t es = ib_dtype_size(y->desc.dtype);
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < y->desc.ndim; d++)
        if (d < axis)
            outer *= y->desc.dims[d];
        else if (d > axis)
            inner *= y->desc.dims[d];
    size_t yrow = (size_t)(y->desc.dims[axis] * inner) * es;
    size_t off = 0;
    for (uint32_t i = 0; i < n_in; i++) {
        size_t row = (size_t)(in[i]->desc.dims[axis] * inner) * es;
        for (int64_t o = 0; o < outer && row; o++)
            memcpy((unsigned char *)y->data + (size_t)o * yrow + off,
                   (const unsigned char *)in[i]->data + (size_t)o * row, row);
        off += row;
    }
    return IB_OK;
}

/* ---- Split ------------------------------------------------------------------------------- */

/* Sizes of the n_out parts along axis; returns 1 when they depend on a
 * non-constant `split` input. */
static int split_sizes(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                       const ib_tensor *split_t, bool split_given, uint32_t n_out, int32_t *axis,
                       int64_t *sizes)
{
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), x->ndim, axis);
    if (rc) return rc;
    if (n_out > 64) return IB_OP_UNSUP(ctx, err, "more than 64 outputs");
    int64_t v[64];
    size_t n = 0;
    if (ib_op_opset(ctx) < 13) {
        rc = ib_op_attr_ints_copy(ctx, err, "split", v, 64, &n);
    } else if (split_given) {
        if (!split_t) return 1;
        rc = ib_op_read_ints(ctx, err, split_t, "split", v, 64, &n);
    }
    if (rc) return rc;
    int64_t dim = x->dims[*axis];
    if (n) {
        if (n != n_out) return IB_OP_BAD(ctx, err, "split has %zu sizes for %u outputs", n, n_out);
        int64_t total = 0;
        for (size_t i = 0; i < n; i++) {
            if (v[i] < 0)
                return IB_OP_BAD(ctx, err, "split[%zu] = %lld is negative", i, (long long)v[i]);
            sizes[i] = v[i];
            if ((rc = ib_op_dim_add(ctx, err, total, v[i], &total))) return rc;
        }
        if (dim >= 0 && total != dim)
            return IB_OP_BAD(ctx, err, "split sizes sum to %lld, axis %d has %lld",
                             (long long)total, *axis, (long long)dim);
        return IB_OK;
    }
    if (dim < 0) {
        for (uint32_t i = 0; i < n_out; i++)
            sizes[i] = IB_DIM_DYNAMIC;
        return IB_OK;
    }
    if (n_out == 0 || dim % n_out)
        return IB_OP_BAD(ctx, err, "axis %d of size %lld does not split into %u equal parts", *axis,
                         (long long)dim, n_out);
    for (uint32_t i = 0; i < n_out; i++)
        sizes[i] = dim / n_out;
    return IB_OK;
}

static int infer_split(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    int32_t axis;
    int64_t sizes[64];
    int rc = split_sizes(ctx, err, in[0], ib_op_cin(const_in, n_in, 1), n_in > 1 && in[1], n_out,
                         &axis, sizes);
    if (rc < 0) return rc;
    for (uint32_t i = 0; i < n_out; i++) {
        out[i] = *in[0];
        out[i].dims[axis] = rc == 1 ? IB_DIM_DYNAMIC : sizes[i];
    }
    if (rc == 1) *dd = true;
    return IB_OK;
}

static int k_split(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    const ib_tensor *x = in[0];
    int32_t axis;
    int64_t sizes[64];
    const ib_tensor *st = ib_op_cin(in, n_in, 1);
    int rc = split_sizes(ctx, err, &x->desc, st, st != NULL, n_out, &axis, sizes);
    if (rc) return rc;
    size_t es = ib_dtype_size(x->desc.dtype);
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < x->desc.ndim; d++)
        if (d < axis)
            outer *= x->desc.dims[d];
        else if (d > axis)
            inner *= x->desc.dims[d];
    size_t xrow = (size_t)(x->desc.dims[axis] * inner) * es, off = 0;
    for (uint32_t i = 0; i < n_out; i++) {
        size_t row = (size_t)(sizes[i] * inner) * es;
        for (int64_t o = 0; out[i] && o < outer && row; o++)
            memcpy((unsigned char *)out[i]->data + (size_t)o * row,
                   (const unsigned char *)x->data + (size_t)o * xrow + off, row);
        off += row;
    }
    return IB_OK;
}

/* ---- Slice ---------------------------------------------------------------------------------- */

typedef struct slice_plan {
    int64_t start[IB_MAX_DIMS], step[IB_MAX_DIMS], len[IB_MAX_DIMS];
} slice_plan;

/* Resolve starts/ends/axes/steps against x (ONNX clamping rules). Returns 1
 * when an input they come from is not constant. */
static int slice_plan_init(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                           const ib_tensor *const *c, const ib_tensor_desc *const *in,
                           uint32_t n_in, slice_plan *p)
{
    int64_t starts[IB_MAX_DIMS], ends[IB_MAX_DIMS], axes[IB_MAX_DIMS], steps[IB_MAX_DIMS];
    size_t ns = 0, ne = 0, na = 0, nst = 0;
    int rc = IB_OK;
    if (ib_op_opset(ctx) < 10) {
        if (!ib_op_has_attr(ctx, "starts") || !ib_op_has_attr(ctx, "ends"))
            return IB_OP_BAD(ctx, err, "attributes 'starts' and 'ends' are required");
        if ((rc = ib_op_attr_ints_copy(ctx, err, "starts", starts, IB_MAX_DIMS, &ns)) ||
            (rc = ib_op_attr_ints_copy(ctx, err, "ends", ends, IB_MAX_DIMS, &ne)) ||
            (rc = ib_op_attr_ints_copy(ctx, err, "axes", axes, IB_MAX_DIMS, &na)))
            return rc;
    } else {
        if (n_in < 3) return IB_OP_BAD(ctx, err, "inputs starts and ends are required");
        for (uint32_t i = 1; i < n_in && i < 5; i++)
            if (in[i] && !c[i]) return 1;
        if ((rc = ib_op_read_ints(ctx, err, c[1], "starts", starts, IB_MAX_DIMS, &ns)) ||
            (rc = ib_op_read_ints(ctx, err, c[2], "ends", ends, IB_MAX_DIMS, &ne)) ||
            (n_in > 3 && c[3] &&
             (rc = ib_op_read_ints(ctx, err, c[3], "axes", axes, IB_MAX_DIMS, &na))) ||
            (n_in > 4 && c[4] &&
             (rc = ib_op_read_ints(ctx, err, c[4], "steps", steps, IB_MAX_DIMS, &nst))))
            return rc;
    }
    if (ne != ns || (na && na != ns) || (nst && nst != ns))
        return IB_OP_BAD(ctx, err, "starts, ends, axes and steps must have the same length");
    for (int32_t d = 0; d < x->ndim; d++) {
        p->start[d] = 0;
        p->step[d] = 1;
        p->len[d] = x->dims[d];
    }
    bool seen[IB_MAX_DIMS] = {false};
    for (size_t i = 0; i < ns; i++) {
        int32_t a;
        if ((rc = ib_op_axis(ctx, err, na ? axes[i] : (int64_t)i, x->ndim, &a))) return rc;
        if (seen[a]) return IB_OP_BAD(ctx, err, "axis %d is sliced twice", a);
        seen[a] = true;
        int64_t st = nst ? steps[i] : 1, dim = x->dims[a];
        if (st == 0) return IB_OP_BAD(ctx, err, "steps[%zu] must not be 0", i);
        p->step[a] = st;
        if (dim < 0) {
            p->len[a] = IB_DIM_DYNAMIC;
            continue;
        }
        int64_t s = starts[i], e = ends[i];
        if (s < 0) s = s < -dim ? 0 : s + dim; /* INT64_MIN safe */
        if (e < 0) e = e < -dim ? -1 : e + dim;
        /* lengths as 1 + (span - 1) / |step|: no overflow for huge steps */
        if (st > 0) {
            s = s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            p->len[a] = e > s ? 1 + (e - s - 1) / st : 0;
        } else {
            s = s > dim - 1 ? dim - 1 : s;
            e = e > dim - 1 ? dim - 1 : e;
            p->len[a] = s > e ? (st == INT64_MIN ? 1 : 1 + (s - e - 1) / -st) : 0;
        }
        p->start[a] = s;
    }
    return IB_OK;
}

static int infer_slice(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *none[5] = {NULL, NULL, NULL, NULL, NULL};
    const ib_tensor *const *c = const_in ? const_in : none;
    slice_plan p;
    int rc = slice_plan_init(ctx, err, in[0], c, in, n_in, &p);
    if (rc < 0) return rc;
    out[0] = *in[0];
    for (int32_t d = 0; d < in[0]->ndim; d++)
        out[0].dims[d] = rc == 1 ? IB_DIM_DYNAMIC : p.len[d];
    if (rc == 1) *dd = true;
    return IB_OK;
}

static int k_slice(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0];
    const ib_tensor_desc *descs[5] = {NULL, NULL, NULL, NULL, NULL};
    for (uint32_t i = 0; i < n_in && i < 5; i++)
        descs[i] = in[i] ? &in[i]->desc : NULL;
    slice_plan p;
    int rc = slice_plan_init(ctx, err, &x->desc, in, descs, n_in, &p);
    if (rc) return rc < 0 ? rc : IB_OP_BAD(ctx, err, "slice parameters missing");
    int32_t r = x->desc.ndim;
    int64_t xs[IB_MAX_DIMS], idx[IB_MAX_DIMS] = {0};
    ib_op_strides(&x->desc, xs);
    int64_t n = 1, base = 0;
    for (int32_t d = 0; d < r; d++) {
        n *= p.len[d];
        base += p.start[d] * xs[d];
    }
    size_t es = ib_dtype_size(x->desc.dtype);
    const unsigned char *src = x->data;
    unsigned char *dst = out[0]->data;
    int64_t off = base;
    for (int64_t o = 0; o < n; o++) {
        memcpy(dst + (size_t)o * es, src + (size_t)off * es, es);
        for (int32_t d = r - 1; d >= 0; d--) {
            off += p.step[d] * xs[d];
            if (++idx[d] < p.len[d]) break;
            off -= p.step[d] * xs[d] * p.len[d];
            idx[d] = 0;
        }
    }
    return IB_OK;
}

static const ib_op_def defs[] = {
    {"", "Transpose", 1, 0, infer_transpose, k_transpose, NULL, NULL, 0, 1, 1, 1, 1, 0, 0},
    {"", "Concat", 4, 0, infer_concat, k_concat, NULL, NULL, 0, 1, IB_OP_VARIADIC, 1, 1, 0, 0},
    {"", "Split", 2, 0, infer_split, k_split, NULL, NULL, 0, 1, 2, 1, 64, 0x2u, 0},
    {"", "Slice", 1, 0, infer_slice, k_slice, NULL, NULL, 0, 1, 5, 1, 1, 0x1eu, 0},
};

const ib_op_family ib_ops_layout = {"layout", defs, IB_ARRAY_LEN(defs)};
