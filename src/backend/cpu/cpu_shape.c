/*
 * cpu_shape.c - shape and data-movement ops: Reshape, Flatten, Squeeze,
 * Unsqueeze (copies into the output's plain storage, straight from a
 * blocked producer layout when there is one), Transpose (a oneDNN reorder
 * over permuted axes, or our strided copy for other dtypes), Slice, Expand
 * and Split (strided copies), for every dtype.
 *
 * Shape-defining inputs (Reshape's shape, Slice's starts...) are not read:
 * the bound output desc already carries the result of shape inference.
 * Slice and Split need their parameters as constants (attributes or
 * constant inputs); the compiler folds them in practice.
 */
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

static bool out_of(const ib_graph *g, const ib_node *n, uint32_t i, ib_tensor_desc *d)
{
    const ib_value *v = ib_node_output(g, n, i);
    if (!v || ib_tensor_desc_numel(&v->desc) < 0)
        return false;
    *d = v->desc;
    return true;
}

/* ---- Reshape family ----------------------------------------------------- */

static bool reshape_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                             const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    ib_tensor_desc y;
    return n->n_inputs >= 1 && in[0] && n->n_outputs == 1 && out_of(g, n, 0, &y) &&
           y.dtype == in[0]->dtype && ib_tensor_desc_numel(&y) == ib_tensor_desc_numel(in[0]) &&
           ib_dtype_size(y.dtype) > 0;
}

static int reshape_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    void *out;
    int rc = cpu_def_plain(e, y, &out, err);
    if (rc)
        return rc;
    if (cpu_dt(x->desc.dtype) != dnnl_data_type_undef) {
        /* plain bytes of x are y's bytes: one reorder from x's layout */
        dnnl_memory_desc_t plain;
        if (cpu_md_plain(&plain, x->desc.ndim, x->desc.dims, cpu_dt(x->desc.dtype)))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
        return cpu_copy_into(e, x, &plain, out, err);
    }
    cpu_copy_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    const void *src;
    if ((rc = cpu_use_plain(e, x, dnnl_data_type_undef, &src, err))) {
        ib_free(k);
        return rc;
    }
    k->nd = 1;
    k->dims[0] = ib_tensor_desc_numel(&x->desc);
    k->st[0] = 1;
    k->esize = ib_dtype_size(x->desc.dtype);
    k->src = src;
    k->dst = out;
    return cpu_add_kernel(e, cpu_copy_run, k, err);
}

/* ---- Transpose ----------------------------------------------------------- */

static bool perm_of(const ib_node *n, int nd, int *perm)
{
    const int64_t *p;
    size_t np = ib_node_attr_ints(n, "perm", &p);
    if (np && np != (size_t)nd)
        return false;
    bool seen[IB_MAX_DIMS] = {false};
    for (int i = 0; i < nd; i++) {
        int64_t v = np ? p[i] : nd - 1 - i;
        if (v < 0 || v >= nd || seen[v])
            return false;
        seen[v] = true;
        perm[i] = (int)v;
    }
    return true;
}

static bool transpose_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                               const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    ib_tensor_desc y;
    int perm[IB_MAX_DIMS];
    if (n->n_inputs != 1 || !in[0] || !out_of(g, n, 0, &y) || y.ndim != in[0]->ndim ||
        y.dtype != in[0]->dtype || !perm_of(n, in[0]->ndim, perm) || !ib_dtype_size(y.dtype))
        return false;
    for (int i = 0; i < y.ndim; i++)
        if (y.dims[i] != in[0]->dims[perm[i]])
            return false;
    return true;
}

static int transpose_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    int perm[IB_MAX_DIMS], nd = x->desc.ndim, rc;
    if (!perm_of(n, nd, perm))
        return cpu_fail(e, err, IB_EFORMAT, "bad perm");
    void *out;
    if ((rc = cpu_def_plain(e, y, &out, err)))
        return rc;
    if (cpu_dt(x->desc.dtype) != dnnl_data_type_undef && nd >= 1 && !x->cdata) {
        /* x's axis perm[k] becomes y's axis k: reorder the permuted view */
        int q[DNNL_MAX_NDIMS];
        for (int k = 0; k < nd; k++)
            q[perm[k]] = k;
        dnnl_memory_desc_t src, dst;
        if (dnnl_memory_desc_permute_axes(&src, &x->md, q) == dnnl_success &&
            !cpu_md_plain(&dst, nd, y->desc.dims, x->md.data_type) &&
            x->md.data_type == cpu_dt(y->desc.dtype)) {
            cpu_val view = *x; /* same storage, described in y's axis order */
            view.md = src;
            view.views.data = NULL;
            view.views.len = view.views.cap = 0;
            return cpu_copy_into(e, &view, &dst, out, err);
        }
    }
    const void *src;
    if ((rc = cpu_use_plain(e, x, dnnl_data_type_undef, &src, err)))
        return rc;
    cpu_copy_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    int64_t xst[IB_MAX_DIMS], s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        xst[i] = s;
        s *= x->desc.dims[i];
    }
    k->nd = nd > 0 ? nd : 1;
    for (int i = 0; i < nd; i++) {
        k->dims[i] = y->desc.dims[i];
        k->st[i] = xst[perm[i]];
    }
    if (nd == 0) {
        k->dims[0] = 1;
        k->st[0] = 1;
    }
    k->esize = ib_dtype_size(x->desc.dtype);
    k->src = src;
    k->dst = out;
    cpu_copy_collapse(k);
    return cpu_add_kernel(e, cpu_copy_run, k, err);
}

/* ---- Slice / Split / Expand: strided views ------------------------------- */

/* Integer values of a constant input or an INTS attribute (max 8). */
static int ints_of(const ib_graph *g, const ib_node *n, int input, const char *attr, int64_t *out)
{
    if (input >= 0 && (uint32_t)input < n->n_inputs && n->inputs[input] != IB_VALUE_NONE) {
        const ib_tensor *t = cpu_const_of(g, n, (uint32_t)input);
        int64_t cnt = t ? ib_tensor_desc_numel(&t->desc) : -1;
        if (!t || cnt > IB_MAX_DIMS || t->desc.ndim > 1)
            return -1;
        for (int64_t i = 0; i < cnt; i++)
            out[i] = t->desc.dtype == IB_DTYPE_INT64   ? ((const int64_t *)t->data)[i]
                     : t->desc.dtype == IB_DTYPE_INT32 ? ((const int32_t *)t->data)[i]
                                                       : INT64_MIN;
        for (int64_t i = 0; i < cnt; i++)
            if (out[i] == INT64_MIN)
                return -1;
        return (int)cnt;
    }
    if (!attr)
        return -2; /* absent */
    const int64_t *v;
    size_t cnt = ib_node_attr_ints(n, attr, &v);
    if (!v)
        return -2;
    if (cnt > IB_MAX_DIMS)
        return -1;
    memcpy(out, v, cnt * sizeof *v);
    return (int)cnt;
}

/* Source offset and strides of Slice for input x. */
static bool slice_view(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x,
                       const ib_tensor_desc *y, int64_t *off, int64_t *st)
{
    bool v10 = n->opset >= 10;
    int64_t starts[IB_MAX_DIMS], ends[IB_MAX_DIMS], axes[IB_MAX_DIMS], steps[IB_MAX_DIMS];
    int ns = ints_of(g, n, v10 ? 1 : -1, v10 ? NULL : "starts", starts);
    int ne = ints_of(g, n, v10 ? 2 : -1, v10 ? NULL : "ends", ends);
    int na = ints_of(g, n, v10 ? 3 : -1, v10 ? NULL : "axes", axes);
    int nst = ints_of(g, n, v10 ? 4 : -1, NULL, steps);
    if (ns < 0 || ne != ns || na == -1 || nst == -1 || (na >= 0 && na != ns) ||
        (nst >= 0 && nst != ns) || y->ndim != x->ndim)
        return false;
    int64_t xst[IB_MAX_DIMS], s = 1, b[IB_MAX_DIMS], stp[IB_MAX_DIMS];
    for (int i = x->ndim - 1; i >= 0; i--) {
        xst[i] = s;
        s *= x->dims[i];
        b[i] = 0;
        stp[i] = 1;
    }
    for (int i = 0; i < ns; i++) {
        int64_t ax = na >= 0 ? axes[i] : i, step = nst >= 0 ? steps[i] : 1;
        if (ax < 0)
            ax += x->ndim;
        if (ax < 0 || ax >= x->ndim || step == 0)
            return false;
        int64_t d = x->dims[ax], st0 = starts[i];
        if (st0 < 0)
            st0 += d;
        if (step > 0)
            st0 = st0 < 0 ? 0 : st0 > d ? d : st0;
        else
            st0 = st0 < 0 ? 0 : st0 > d - 1 ? d - 1 : st0;
        b[ax] = st0;
        stp[ax] = step;
    }
    *off = 0;
    for (int i = 0; i < x->ndim; i++) {
        /* every selected index must lie inside the input */
        if (y->dims[i] > 0 && (b[i] + (y->dims[i] - 1) * stp[i] < 0 ||
                               b[i] + (y->dims[i] - 1) * stp[i] >= x->dims[i]))
            return false;
        *off += b[i] * xst[i];
        st[i] = xst[i] * stp[i];
    }
    return true;
}

/* Expand: strides 0 on broadcast dims (rank-aligned on the right). */
static bool expand_view(const ib_tensor_desc *x, const ib_tensor_desc *y, int64_t *st)
{
    if (x->ndim > y->ndim)
        return false;
    int64_t s = 1;
    for (int i = y->ndim - 1; i >= 0; i--) {
        int j = i - (y->ndim - x->ndim);
        int64_t d = j >= 0 ? x->dims[j] : 1;
        if (d != y->dims[i] && d != 1)
            return false;
        st[i] = d == 1 ? 0 : s;
        s *= d;
    }
    return true;
}

/* Split: the offset of output k along the axis. */
static bool split_sizes(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x, int64_t *ax,
                        int64_t *sizes)
{
    *ax = ib_node_attr_int(n, "axis", 0);
    if (*ax < 0)
        *ax += x->ndim;
    if (*ax < 0 || *ax >= x->ndim || n->n_outputs > IB_MAX_DIMS)
        return false;
    int64_t sum = 0;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        const ib_value *v = ib_node_output(g, n, k);
        if (!v || v->desc.ndim != x->ndim)
            return false;
        sizes[k] = v->desc.dims[*ax];
        sum += sizes[k];
    }
    return sum == x->dims[*ax];
}

static bool view_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                          const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    ib_tensor_desc y;
    if (n->n_inputs < 1 || !in[0] || !out_of(g, n, 0, &y) || y.dtype != in[0]->dtype ||
        !ib_dtype_size(y.dtype))
        return false;
    int64_t off, st[IB_MAX_DIMS], sizes[IB_MAX_DIMS], ax;
    if (strcmp(n->op_type, "Slice") == 0)
        return slice_view(g, n, in[0], &y, &off, st);
    if (strcmp(n->op_type, "Expand") == 0)
        return expand_view(in[0], &y, st);
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (!ib_node_output(g, n, k))
            return false;
    return split_sizes(g, n, in[0], &ax, sizes);
}

/* Append a strided copy of x (offset, strides over its plain layout) into y. */
static int add_view_copy(cpu_exec *e, cpu_val *x, cpu_val *y, int64_t off, const int64_t *st,
                         ib_err *err)
{
    const void *src;
    void *out;
    int rc;
    if ((rc = cpu_use_plain(e, x, dnnl_data_type_undef, &src, err)) ||
        (rc = cpu_def_plain(e, y, &out, err)))
        return rc;
    cpu_copy_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    k->esize = ib_dtype_size(x->desc.dtype);
    k->nd = y->desc.ndim > 0 ? y->desc.ndim : 1;
    for (int i = 0; i < y->desc.ndim; i++) {
        k->dims[i] = y->desc.dims[i];
        k->st[i] = st[i];
    }
    if (y->desc.ndim == 0) {
        k->dims[0] = 1;
        k->st[0] = 1;
    }
    k->src = (const char *)src + off * (int64_t)k->esize;
    k->dst = out;
    cpu_copy_collapse(k);
    return cpu_add_kernel(e, cpu_copy_run, k, err);
}

static int view_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0);
    int64_t off = 0, st[IB_MAX_DIMS], sizes[IB_MAX_DIMS], ax;
    if (strcmp(n->op_type, "Slice") == 0) {
        cpu_val *y = cpu_out(e, n, 0);
        if (!slice_view(e->graph, n, &x->desc, &y->desc, &off, st))
            return cpu_fail(e, err, IB_EFORMAT, "bad slice parameters");
        return add_view_copy(e, x, y, off, st, err);
    }
    if (strcmp(n->op_type, "Expand") == 0) {
        cpu_val *y = cpu_out(e, n, 0);
        if (!expand_view(&x->desc, &y->desc, st))
            return cpu_fail(e, err, IB_EFORMAT, "shapes do not broadcast");
        return add_view_copy(e, x, y, 0, st, err);
    }
    if (!split_sizes(e->graph, n, &x->desc, &ax, sizes))
        return cpu_fail(e, err, IB_EFORMAT, "split sizes do not add up");
    int64_t xst[IB_MAX_DIMS], s = 1;
    for (int i = x->desc.ndim - 1; i >= 0; i--) {
        xst[i] = s;
        s *= x->desc.dims[i];
    }
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        int rc = add_view_copy(e, x, cpu_out(e, n, k), off * xst[ax], xst, err);
        if (rc)
            return rc;
        off += sizes[k];
    }
    return IB_OK;
}

const cpu_op cpu_ops_shape[] = {
    {"", "Reshape", reshape_supports, reshape_compile},
    {"", "Flatten", reshape_supports, reshape_compile},
    {"", "Squeeze", reshape_supports, reshape_compile},
    {"", "Unsqueeze", reshape_supports, reshape_compile},
    {"", "Transpose", transpose_supports, transpose_compile},
    {"", "Slice", view_supports, view_compile},
    {"", "Expand", view_supports, view_compile},
    {"", "Split", view_supports, view_compile},
    {NULL, NULL, NULL, NULL},
};
