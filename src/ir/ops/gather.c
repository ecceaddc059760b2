/*
 * gather.c - indexing ops: Gather, GatherElements, GatherND (batch_dims)
 * and TopK (largest/smallest, K as attribute before opset 10 and as input
 * from 10; ties keep the lower index first, as the spec requires).
 *
 * Indices may be negative (counted from the end); an index out of range is
 * an IB_EFORMAT error naming the node and the index, never a wild read.
 */
#include <string.h>

#include "ir/ops/ops_util.h"

static int check_indices_type(const ib_op_ctx *ctx, ib_err *err, enum ib_dtype t)
{
    if (t != IB_DTYPE_INT64 && t != IB_DTYPE_INT32)
        return IB_OP_BAD(ctx, err, "indices must be int32 or int64, not %s", ib_dtype_name(t));
    return IB_OK;
}

/* Index i of an index tensor, normalised against dim (negative from the end). */
static int fetch_index(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *t, int64_t i,
                       int64_t dim, int64_t *out)
{
    int64_t v = ib_op_ldi(t->data, t->desc.dtype, i);
    int64_t w = v < 0 ? v + dim : v;
    if (w < 0 || w >= dim)
        return IB_OP_BAD(ctx, err, "index %lld is out of range for a dimension of %lld",
                         (long long)v, (long long)dim);
    *out = w;
    return IB_OK;
}

/* ---- Gather ------------------------------------------------------------------------ */

static int infer_gather(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    const ib_tensor_desc *x = in[0], *ix = in[1];
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), x->ndim, &axis);
    if (!rc) rc = check_indices_type(ctx, err, ix->dtype);
    if (rc) return rc;
    int32_t r = x->ndim - 1 + ix->ndim;
    if (r > IB_MAX_DIMS) return IB_OP_UNSUP(ctx, err, "output rank %d exceeds %d", r, IB_MAX_DIMS);
    ib_tensor_desc y = {x->dtype, 0, {0}};
    for (int32_t d = 0; d < axis; d++)
        y.dims[y.ndim++] = x->dims[d];
    for (int32_t d = 0; d < ix->ndim; d++)
        y.dims[y.ndim++] = ix->dims[d];
    for (int32_t d = axis + 1; d < x->ndim; d++)
        y.dims[y.ndim++] = x->dims[d];
    out[0] = y;
    return IB_OK;
}

static int k_gather(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                    ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *ix = in[1];
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), x->desc.ndim, &axis);
    if (!rc) rc = check_indices_type(ctx, err, ix->desc.dtype);
    if (rc) return rc;
    size_t es = ib_dtype_size(x->desc.dtype);
    int64_t outer = 1, inner = 1, dim = x->desc.dims[axis];
    for (int32_t d = 0; d < x->desc.ndim; d++)
        if (d < axis)
            outer *= x->desc.dims[d];
        else if (d > axis)
            inner *= x->desc.dims[d];
    int64_t ni = ib_tensor_desc_numel(&ix->desc);
    size_t chunk = (size_t)inner * es;
    const unsigned char *src = x->data;
    unsigned char *dst = out[0]->data;
    for (int64_t i = 0; i < ni; i++) {
        int64_t k;
        if ((rc = fetch_index(ctx, err, ix, i, dim, &k))) return rc;
        for (int64_t o = 0; o < outer; o++)
            memcpy(dst + ((size_t)o * (size_t)ni + (size_t)i) * chunk,
                   src + ((size_t)o * (size_t)dim + (size_t)k) * chunk, chunk);
    }
    return IB_OK;
}

/* ---- GatherElements --------------------------------------------------------------------- */

static int infer_gather_el(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                           const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                           uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), in[0]->ndim, &axis);
    if (!rc) rc = check_indices_type(ctx, err, in[1]->dtype);
    if (rc) return rc;
    if (in[1]->ndim != in[0]->ndim)
        return IB_OP_BAD(ctx, err, "indices have rank %d, data rank %d", in[1]->ndim, in[0]->ndim);
    out[0] = *in[1];
    out[0].dtype = in[0]->dtype;
    return IB_OK;
}

static int k_gather_el(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                       ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *ix = in[1];
    int32_t axis, r = x->desc.ndim;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", 0), r, &axis);
    if (rc) return rc;
    for (int32_t d = 0; d < r; d++)
        if (d != axis && ix->desc.dims[d] > x->desc.dims[d])
            return IB_OP_BAD(ctx, err, "indices dim %d (%lld) exceeds data's (%lld)", d,
                             (long long)ix->desc.dims[d], (long long)x->desc.dims[d]);
    int64_t xs[IB_MAX_DIMS], idx[IB_MAX_DIMS] = {0};
    ib_op_strides(&x->desc, xs);
    size_t es = ib_dtype_size(x->desc.dtype);
    int64_t n = ib_tensor_desc_numel(&ix->desc);
    for (int64_t o = 0; o < n; o++) {
        int64_t k;
        if ((rc = fetch_index(ctx, err, ix, o, x->desc.dims[axis], &k))) return rc;
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++)
            off += (d == axis ? k : idx[d]) * xs[d];
        memcpy((unsigned char *)out[0]->data + (size_t)o * es,
               (const unsigned char *)x->data + (size_t)off * es, es);
        for (int32_t d = r - 1; d >= 0; d--) {
            if (++idx[d] < ix->desc.dims[d]) break;
            idx[d] = 0;
        }
    }
    return IB_OK;
}

/* ---- GatherND -------------------------------------------------------------------------------- */

static int gnd_check(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                     const ib_tensor_desc *ix, int64_t *b, int64_t *k)
{
    *b = ib_op_attr_i(ctx, "batch_dims", 0);
    if (ix->dtype != IB_DTYPE_INT64)
        return IB_OP_BAD(ctx, err, "indices must be int64, not %s", ib_dtype_name(ix->dtype));
    if (ix->ndim < 1 || *b < 0 || *b >= ix->ndim || *b >= x->ndim)
        return IB_OP_BAD(ctx, err, "batch_dims %lld is invalid for ranks %d and %d", (long long)*b,
                         x->ndim, ix->ndim);
    *k = ix->dims[ix->ndim - 1];
    if (*k < 1 || *k > x->ndim - *b)
        return IB_OP_BAD(ctx, err, "indices' last dim %lld must be in 1..%lld", (long long)*k,
                         (long long)(x->ndim - *b));
    for (int64_t d = 0; d < *b; d++)
        if (x->dims[d] != ix->dims[d])
            return IB_OP_BAD(ctx, err, "batch dim %lld differs: %lld vs %lld", (long long)d,
                             (long long)x->dims[d], (long long)ix->dims[d]);
    return IB_OK;
}

static int infer_gather_nd(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                           const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                           uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int64_t b, k;
    int rc = gnd_check(ctx, err, in[0], in[1], &b, &k);
    if (rc) return rc;
    ib_tensor_desc y = {in[0]->dtype, 0, {0}};
    for (int32_t d = 0; d < in[1]->ndim - 1; d++)
        y.dims[y.ndim++] = in[1]->dims[d];
    for (int64_t d = b + k; d < in[0]->ndim; d++) {
        if (y.ndim >= IB_MAX_DIMS)
            return IB_OP_UNSUP(ctx, err, "output rank exceeds %d", IB_MAX_DIMS);
        y.dims[y.ndim++] = in[0]->dims[d];
    }
    out[0] = y;
    return IB_OK;
}

static int k_gather_nd(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                       ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    const ib_tensor *x = in[0], *ix = in[1];
    int64_t b, k;
    int rc = gnd_check(ctx, err, &x->desc, &ix->desc, &b, &k);
    if (rc) return rc;
    int64_t xs[IB_MAX_DIMS];
    ib_op_strides(&x->desc, xs);
    int64_t batch = 1, per_batch = 1, slice = 1;
    for (int64_t d = 0; d < b; d++)
        batch *= x->desc.dims[d];
    for (int32_t d = (int32_t)b; d < ix->desc.ndim - 1; d++)
        per_batch *= ix->desc.dims[d];
    for (int64_t d = b + k; d < x->desc.ndim; d++)
        slice *= x->desc.dims[d];
    size_t es = ib_dtype_size(x->desc.dtype), chunk = (size_t)slice * es;
    const int64_t *iv = ix->data;
    int64_t bstride = b > 0 ? xs[b - 1] : 0;
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t j = 0; j < per_batch; j++) {
            const int64_t *t = iv + (bi * per_batch + j) * k;
            int64_t off = bi * bstride;
            for (int64_t d = 0; d < k; d++) {
                int64_t dim = x->desc.dims[b + d], v = t[d] < 0 ? t[d] + dim : t[d];
                if (v < 0 || v >= dim)
                    return IB_OP_BAD(ctx, err, "index %lld is out of range for a dimension of %lld",
                                     (long long)t[d], (long long)dim);
                off += v * xs[b + d];
            }
            memcpy((unsigned char *)out[0]->data + (size_t)(bi * per_batch + j) * chunk,
                   (const unsigned char *)x->data + (size_t)off * es, chunk);
        }
    return IB_OK;
}

/* ---- TopK ------------------------------------------------------------------------------------ */

static int topk_k(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *kt, int64_t *k)
{
    if (ib_op_opset(ctx) < 10) {
        if (!ib_op_has_attr(ctx, "k"))
            return IB_OP_BAD(ctx, err, "attribute 'k' is required before opset 10");
        *k = ib_op_attr_i(ctx, "k", 0);
    } else {
        if (!kt) return 1;
        int64_t v[1];
        size_t n;
        int rc = ib_op_read_ints(ctx, err, kt, "K", v, 1, &n);
        if (rc) return rc;
        if (n != 1) return IB_OP_BAD(ctx, err, "K must hold one value");
        *k = v[0];
    }
    if (*k < 0) return IB_OP_BAD(ctx, err, "K = %lld must be >= 0", (long long)*k);
    return IB_OK;
}

static int infer_topk(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    int32_t axis;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", -1), in[0]->ndim, &axis);
    if (rc) return rc;
    int64_t k = IB_DIM_DYNAMIC;
    rc = topk_k(ctx, err, ib_op_cin(const_in, n_in, 1), &k);
    if (rc < 0) return rc;
    if (rc == 1) {
        *dd = true;
        k = IB_DIM_DYNAMIC;
    } else if (in[0]->dims[axis] >= 0 && k > in[0]->dims[axis]) {
        return IB_OP_BAD(ctx, err, "K = %lld exceeds the axis size %lld", (long long)k,
                         (long long)in[0]->dims[axis]);
    }
    for (uint32_t i = 0; i < n_out; i++) {
        out[i] = *in[0];
        out[i].dims[axis] = k;
    }
    if (n_out > 1) out[1].dtype = IB_DTYPE_INT64;
    return IB_OK;
}

static size_t scratch_topk(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                           const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    int32_t axis;
    if (ib_op_axis(ctx, NULL, ib_op_attr_i(ctx, "axis", -1), in[0]->ndim, &axis)) return 0;
    int64_t n = in[0]->dims[axis];
    return (size_t)(n > 0 ? n : 1) * (2 * sizeof(int64_t) + sizeof(double));
}

/* Stable merge sort of idx[0..n) by key (descending when largest). */
static void msort(int64_t *idx, int64_t *tmp, int64_t n, const double *key, bool largest)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = IB_MIN(lo + w, n), hi = IB_MIN(lo + 2 * w, n);
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) {
                double ka = key[idx[a]], kb = key[idx[b]];
                /* take b only when strictly better: equal keys keep order */
                bool take_b = largest ? kb > ka : kb < ka;
                tmp[o++] = take_b ? idx[b++] : idx[a++];
            }
            while (a < mid)
                tmp[o++] = idx[a++];
            while (b < hi)
                tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

static int k_topk(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    const ib_tensor *x = in[0];
    int32_t axis;
    int64_t k;
    int rc = ib_op_axis(ctx, err, ib_op_attr_i(ctx, "axis", -1), x->desc.ndim, &axis);
    if (!rc) rc = topk_k(ctx, err, ib_op_cin(in, n_in, 1), &k);
    if (rc) return rc < 0 ? rc : IB_OP_BAD(ctx, err, "K is missing");
    bool largest = ib_op_attr_i(ctx, "largest", 1) != 0;
    int64_t outer = 1, len = x->desc.dims[axis], inner = 1;
    if (k > len)
        return IB_OP_BAD(ctx, err, "K = %lld exceeds the axis size %lld", (long long)k,
                         (long long)len);
    for (int32_t d = 0; d < x->desc.ndim; d++)
        if (d < axis)
            outer *= x->desc.dims[d];
        else if (d > axis)
            inner *= x->desc.dims[d];
    int64_t *idx = ctx->scratch, *tmp = idx + len;
    double *key = (double *)(void *)(tmp + len);
    enum ib_dtype dt = x->desc.dtype;
    ib_tensor *vals = out[0], *inds = n_out > 1 ? out[1] : NULL;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in_ = 0; in_ < inner; in_++) {
            int64_t base = o * len * inner + in_;
            for (int64_t i = 0; i < len; i++) {
                idx[i] = i;
                key[i] = ib_op_ld(x->data, dt, base + i * inner);
            }
            msort(idx, tmp, len, key, largest);
            int64_t obase = o * k * inner + in_;
            for (int64_t i = 0; i < k; i++) {
                int64_t src = base + idx[i] * inner, dst = obase + i * inner;
                if (vals)
                    memcpy((unsigned char *)vals->data + (size_t)dst * ib_dtype_size(dt),
                           (const unsigned char *)x->data + (size_t)src * ib_dtype_size(dt),
                           ib_dtype_size(dt));
                if (inds) ((int64_t *)inds->data)[dst] = idx[i];
            }
        }
    return IB_OK;
}

#define NUM IB_DT_NUMS

/* ---- inferbench.GatherConcat ----------------------------------------------------------------
 * Concat(axis 1) of 2-D parts, each either a plain input X [N, d] (parts[i] = 0) or the rows
 * Gather(T, I, axis 0) of a table T [R, d] by indices I [N] (parts[i] = 1): the DLRM
 * embedding lookups + their Concat (compile_fuse_embed.c), written straight into Y. */

typedef struct gc_part {
    const ib_tensor_desc *x, *ix; /* ix NULL for a plain part */
    uint32_t first;               /* its first input */
} gc_part;

/* Walk the parts attribute against the inputs; *n_parts parts of at most IB_OP_VARIADIC. */
static int gc_parts(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *const *in,
                    uint32_t n_in, gc_part *p, uint32_t *n_parts, int64_t *cols)
{
    const int64_t *kinds = NULL;
    size_t n = ib_op_attr_ints(ctx, "parts", &kinds);
    if (n == 0 || n > IB_OP_VARIADIC)
        return IB_OP_BAD(ctx, err, "attribute parts must list 1..%d part kinds", IB_OP_VARIADIC);
    uint32_t k = 0;
    *cols = 0;
    for (size_t i = 0; i < n; i++) {
        if (kinds[i] != 0 && kinds[i] != 1)
            return IB_OP_BAD(ctx, err, "parts[%zu] = %lld is not 0 (plain) or 1 (gather)", i,
                             (long long)kinds[i]);
        uint32_t need = kinds[i] ? 2 : 1;
        if (k + need > n_in || !in[k] || (need == 2 && !in[k + 1]))
            return IB_OP_BAD(ctx, err, "parts needs %u inputs at part %zu, %u given", k + need, i,
                             n_in);
        p[i] = (gc_part){in[k], need == 2 ? in[k + 1] : NULL, k};
        const ib_tensor_desc *x = in[k];
        if (x->ndim != 2 || x->dtype != in[0]->dtype)
            return IB_OP_BAD(ctx, err, "part %zu must be 2-D %s", i, ib_dtype_name(in[0]->dtype));
        if (need == 2) {
            int rc = check_indices_type(ctx, err, in[k + 1]->dtype);
            if (rc) return rc;
            if (in[k + 1]->ndim != 1)
                return IB_OP_BAD(ctx, err, "part %zu: indices must be 1-D", i);
        }
        *cols += x->dims[1];
        k += need;
    }
    if (k != n_in)
        return IB_OP_BAD(ctx, err, "parts uses %u inputs, %u given", k, n_in);
    *n_parts = (uint32_t)n;
    return IB_OK;
}

static int64_t gc_rows(const gc_part *p) { return p->ix ? p->ix->dims[0] : p->x->dims[0]; }

static int infer_gc(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                    const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                    uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    gc_part p[IB_OP_VARIADIC];
    uint32_t np = 0;
    int64_t cols = 0;
    int rc = gc_parts(ctx, err, in, n_in, p, &np, &cols);
    if (rc) return rc;
    for (uint32_t i = 1; i < np; i++)
        if (gc_rows(&p[i]) != gc_rows(&p[0]))
            return IB_OP_BAD(ctx, err, "part %u has %lld rows, part 0 %lld", i,
                             (long long)gc_rows(&p[i]), (long long)gc_rows(&p[0]));
    out[0] = (ib_tensor_desc){in[0]->dtype, 2, {gc_rows(&p[0]), cols}};
    return IB_OK;
}

static int k_gc(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    const ib_tensor_desc *d[IB_OP_VARIADIC];
    for (uint32_t i = 0; i < n_in && i < IB_OP_VARIADIC; i++)
        d[i] = in[i] ? &in[i]->desc : NULL;
    gc_part p[IB_OP_VARIADIC];
    uint32_t np = 0;
    int64_t cols = 0;
    int rc = gc_parts(ctx, err, d, n_in, p, &np, &cols);
    if (rc) return rc;
    size_t es = ib_dtype_size(in[0]->desc.dtype), row = (size_t)cols * es, off = 0;
    unsigned char *y = out[0]->data;
    int64_t n = out[0]->desc.dims[0];
    for (uint32_t i = 0; i < np; i++) {
        size_t w = (size_t)p[i].x->dims[1] * es;
        const unsigned char *src = in[p[i].first]->data;
        for (int64_t r = 0; r < n; r++) {
            int64_t k = r;
            if (p[i].ix &&
                (rc = fetch_index(ctx, err, in[p[i].first + 1], r, p[i].x->dims[0], &k)))
                return rc;
            memcpy(y + (size_t)r * row + off, src + (size_t)k * w, w);
        }
        off += w;
    }
    return IB_OK;
}

/* ---- inferbench.DotInteraction -----------------------------------------------------------
 * DLRM's dot interaction (compile_fuse_embed.c): X [N, ...] holds per row F feature vectors
 * of D = (row size) / F values; I [K] (int32/int64) are flat indices p = i * F + j into the
 * F x F matrix of their dot products (negative ones count from F * F). Y [N, K]:
 *   Y[n, k] = sum_d X[n, i_k * D + d] * X[n, j_k * D + d]
 * which is Gather(Flatten(X' X'^T), I, axis 1) for X' = X viewed as [N, F, D]. */

static int di_shape(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                    const ib_tensor_desc *ix, int64_t *F, int64_t *D)
{
    *F = ib_op_attr_i(ctx, "features", 0);
    if (*F < 1) return IB_OP_BAD(ctx, err, "attribute features must be >= 1");
    if (x->ndim < 2) return IB_OP_BAD(ctx, err, "X must have rank >= 2");
    int64_t row = 1;
    for (int32_t d = 1; d < x->ndim; d++)
        row *= x->dims[d];
    if (row % *F) return IB_OP_BAD(ctx, err, "a row of %lld values is not %lld features", (long long)row, (long long)*F);
    *D = row / *F;
    int rc = check_indices_type(ctx, err, ix->dtype);
    if (rc) return rc;
    if (ix->ndim != 1) return IB_OP_BAD(ctx, err, "indices must be 1-D");
    return IB_OK;
}

static int infer_di(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                    const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                    uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    int64_t F, D;
    int rc = di_shape(ctx, err, in[0], in[1], &F, &D);
    if (rc) return rc;
    out[0] = (ib_tensor_desc){in[0]->dtype, 2, {in[0]->dims[0], in[1]->dims[0]}};
    return IB_OK;
}

static int k_di(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    int64_t F, D;
    int rc = di_shape(ctx, err, &in[0]->desc, &in[1]->desc, &F, &D);
    if (rc) return rc;
    int64_t N = in[0]->desc.dims[0], K = in[1]->desc.dims[0];
    const float *x = in[0]->data;
    float *y = out[0]->data;
    for (int64_t k = 0; k < K; k++) {
        int64_t p;
        if ((rc = fetch_index(ctx, err, in[1], k, F * F, &p))) return rc;
        const float *a = x + (p / F) * D, *b = x + (p % F) * D;
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t d = 0; d < D; d++)
                s += (double)a[n * F * D + d] * (double)b[n * F * D + d];
            y[n * K + k] = (float)s;
        }
    }
    return IB_OK;
}

static double flops_di(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                       const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    int64_t F, D;
    if (di_shape(ctx, NULL, in[0], in[1], &F, &D)) return 0;
    return 2.0 * (double)in[0]->dims[0] * (double)in[1]->dims[0] * (double)D;
}

static const ib_op_def defs[] = {
    {"", "Gather", 1, 0, infer_gather, k_gather, NULL, NULL, 0, 2, 2, 1, 1, 0, 0},
    {"", "GatherElements", 11, 0, infer_gather_el, k_gather_el, NULL, NULL, 0, 2, 2, 1, 1, 0, 0},
    {"", "GatherND", 11, 0, infer_gather_nd, k_gather_nd, NULL, NULL, 0, 2, 2, 1, 1, 0, 0},
    {"", "TopK", 1, 0, infer_topk, k_topk, scratch_topk, NULL, NUM, 1, 2, 2, 2, 0x2u, 0},
    {"inferbench", "GatherConcat", 1, 0, infer_gc, k_gc, NULL, NULL, 0, 1, IB_OP_VARIADIC, 1, 1,
     0, 0},
    {"inferbench", "DotInteraction", 1, 0, infer_di, k_di, NULL, flops_di, IB_DT_F32, 2, 2, 1, 1,
     0, 0},
};

const ib_op_family ib_ops_gather = {"gather", defs, IB_ARRAY_LEN(defs)};
