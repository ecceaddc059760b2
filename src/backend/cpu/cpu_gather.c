/*
 * cpu_gather.c - Gather (any data dtype, int32/int64 indices, negative
 * indices, any axis) on our row-copy kernel, and the reductions:
 * ReduceSum/Mean/Max/Min/Prod/L1/L2 on the oneDNN reduction primitive (f32
 * or bf16), ArgMax/ArgMin on our own kernel.
 *
 * Gather with axis 0 over a [rows, dim] table is the embedding lookup of
 * DLRM and BERT: one memcpy of a row per index, split over the team. An
 * out-of-range index fails the run with the node name and the index.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

static int64_t axis_of(const ib_node *n, int ndim, int64_t dflt)
{
    int64_t ax = ib_node_attr_int(n, "axis", dflt);
    return ax < 0 ? ax + ndim : ax;
}

/* ---- Gather ----------------------------------------------------------------- */

static bool gather_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_value *y = ib_node_output(g, n, 0);
    if (n->n_inputs != 2 || !in[0] || !in[1] || !y || !ib_dtype_size(in[0]->dtype) ||
        (in[1]->dtype != IB_DTYPE_INT64 && in[1]->dtype != IB_DTYPE_INT32) ||
        y->desc.dtype != in[0]->dtype)
        return false;
    int64_t ax = axis_of(n, in[0]->ndim, 0);
    if (ax < 0 || ax >= in[0]->ndim || y->desc.ndim != in[0]->ndim - 1 + in[1]->ndim)
        return false;
    int k = 0;
    for (int i = 0; i < in[0]->ndim; i++) {
        if (i == ax) {
            for (int j = 0; j < in[1]->ndim; j++)
                if (y->desc.dims[k++] != in[1]->dims[j])
                    return false;
        } else if (y->desc.dims[k++] != in[0]->dims[i]) {
            return false;
        }
    }
    return in[0]->dims[ax] > 0 || ib_tensor_desc_numel(in[1]) == 0;
}

static int gather_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *idx = cpu_in(e, n, 1), *y = cpu_out(e, n, 0);
    cpu_gather_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    int64_t ax = axis_of(n, x->desc.ndim, 0);
    k->outer = 1;
    k->inner = 1;
    for (int i = 0; i < x->desc.ndim; i++) {
        if (i < ax)
            k->outer *= x->desc.dims[i];
        else if (i > ax)
            k->inner *= x->desc.dims[i];
    }
    k->axis_len = x->desc.dims[ax];
    k->n_idx = ib_tensor_desc_numel(&idx->desc);
    k->idx64 = idx->desc.dtype == IB_DTYPE_INT64;
    k->esize = ib_dtype_size(x->desc.dtype);
    k->node = n->name;
    int rc;
    if ((rc = cpu_use_plain(e, x, dnnl_data_type_undef, &k->data, err)) ||
        (rc = cpu_use_plain(e, idx, dnnl_data_type_undef, &k->idx, err)) ||
        (rc = cpu_def_plain(e, y, &k->out, err))) {
        ib_free(k);
        return rc;
    }
    return cpu_add_kernel(e, cpu_gather_run, k, err);
}

/* ---- inferbench.GatherConcat (compile_fuse_embed.c) ------------------------------------ */

static bool gc_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const int64_t *kinds = NULL;
    size_t np = ib_node_attr_ints(n, "parts", &kinds);
    const ib_value *y = ib_node_output(g, n, 0);
    if (!y || y->desc.ndim != 2 || !ib_dtype_size(y->desc.dtype) || np == 0)
        return false;
    uint32_t k = 0;
    int64_t cols = 0;
    for (size_t i = 0; i < np; i++) {
        uint32_t need = kinds[i] == 1 ? 2 : 1;
        if ((kinds[i] != 0 && kinds[i] != 1) || k + need > n->n_inputs || !in[k] ||
            in[k]->ndim != 2 || in[k]->dtype != y->desc.dtype)
            return false;
        if (need == 2 && (!in[k + 1] || in[k + 1]->ndim != 1 ||
                          in[k + 1]->dims[0] != y->desc.dims[0] ||
                          (in[k + 1]->dtype != IB_DTYPE_INT64 && in[k + 1]->dtype != IB_DTYPE_INT32)))
            return false;
        if (need == 1 && in[k]->dims[0] != y->desc.dims[0])
            return false;
        cols += in[k]->dims[1];
        k += need;
    }
    return k == n->n_inputs && cols == y->desc.dims[1];
}

/* A bf16 copy of the float32 constant table x [R, d] (oneDNN reorder, round to nearest even). */
static int gc_bf16_table(cpu_exec *e, cpu_val *x, const void **out, ib_err *err)
{
    dnnl_dims_t dims = {x->desc.dims[0], x->desc.dims[1]};
    dnnl_memory_desc_t src, want;
    dnnl_memory_t mem = NULL;
    void *h = NULL;
    int rc = cpu_check(e, err, dnnl_memory_desc_init_by_tag(&src, 2, dims, dnnl_f32, dnnl_ab),
                       "memory_desc_init");
    if (!rc)
        rc = cpu_check(e, err, dnnl_memory_desc_init_by_tag(&want, 2, dims, dnnl_bf16, dnnl_ab),
                       "memory_desc_init");
    if (!rc)
        rc = cpu_const_reorder_shared(e, &src, x->cdata, &want, &mem, err);
    if (!rc)
        rc = cpu_check(e, err, dnnl_memory_get_data_handle(mem, &h), "get_data_handle");
    *out = h;
    return rc;
}

typedef struct gc_q8_src {
    const float *x;
    int64_t rows, width;
} gc_q8_src;

/* Row r -> q[width] (uint8), scale, bias: ib_q8_row (backend.h), the bytes the cuda Gather
 * holds too. */
static int gc_q8_fill(void *user, void *dst, ib_err *err)
{
    const gc_q8_src *s = user;
    size_t stride = (size_t)s->width + IB_Q8_ROW_EXTRA;
    int64_t bad = -1;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < s->rows; r++) {
        if (!ib_q8_row(s->x + (size_t)r * (size_t)s->width, s->width,
                       (uint8_t *)dst + (size_t)r * stride)) {
#pragma omp atomic write
            bad = r;
        }
    }
    if (bad >= 0)
        return ib_err_set(err, IB_EINVAL, "cpu backend: GatherConcat: table row %lld is not "
                          "finite; INT8 row-wise tables need finite weights", (long long)bad);
    return IB_OK;
}

/* The row-wise 8-bit copy of the float32 constant table x [R, d], shared per context; its
 * identity is (source bytes, f32 [R, d]) -> u8 [R, d + 8], a pair no reorder produces. */
static int gc_q8_table(cpu_exec *e, cpu_val *x, const void **out, ib_err *err)
{
    dnnl_dims_t sd = {x->desc.dims[0], x->desc.dims[1]}, wd = {x->desc.dims[0], x->desc.dims[1] + 8};
    dnnl_memory_desc_t src, want;
    int rc = cpu_check(e, err, dnnl_memory_desc_init_by_tag(&src, 2, sd, dnnl_f32, dnnl_ab),
                       "memory_desc_init");
    if (!rc)
        rc = cpu_check(e, err, dnnl_memory_desc_init_by_tag(&want, 2, wd, dnnl_u8, dnnl_ab),
                       "memory_desc_init");
    gc_q8_src s = {x->cdata, sd[0], sd[1]};
    void *data = NULL;
    if (!rc)
        rc = cpu_const_derived_shared(e, &src, x->cdata, &want, gc_q8_fill, &s, &data, err);
    *out = data;
    return rc;
}

static int gc_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    const int64_t *kinds = NULL;
    size_t np = ib_node_attr_ints(n, "parts", &kinds);
    cpu_val *y = cpu_out(e, n, 0);
    cpu_gc_ctx *k = ib_calloc(1, sizeof *k + np * sizeof k->part[0]);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    size_t es = ib_dtype_size(y->desc.dtype), off = 0;
    k->rows = y->desc.dims[0];
    k->row_bytes = (size_t)y->desc.dims[1] * es;
    k->node = n->name;
    k->n_parts = (uint32_t)np;
    uint32_t in = 0;
    int rc = IB_OK;
    for (size_t i = 0; i < np && !rc; i++) {
        cpu_gc_part *q = &k->part[i];
        cpu_val *x = cpu_in(e, n, in++);
        q->bytes = (size_t)x->desc.dims[1] * es;
        q->offset = off;
        q->table_rows = x->desc.dims[0];
        off += q->bytes;
        q->src_bytes = q->bytes;
        if (kinds[i] == 1 && e->precision == IB_PRECISION_BF16 && x->cdata &&
            x->desc.dtype == IB_DTYPE_FLOAT32) {
            /* BF16: a constant table is held (once per backend context, shared by every
             * variant) as bf16, halving its memory and the gather traffic */
            rc = gc_bf16_table(e, x, &q->src, err);
            q->bf16 = true;
            q->src_bytes = (size_t)x->desc.dims[1] * 2;
        } else if (kinds[i] == 1 && e->precision == IB_PRECISION_INT8 && x->cdata &&
                   x->desc.dtype == IB_DTYPE_FLOAT32) {
            /* INT8: row-wise 8-bit table (a quarter of the fp32 bytes + 8 per row) */
            rc = gc_q8_table(e, x, &q->src, err);
            q->q8 = true;
            q->src_bytes = (size_t)x->desc.dims[1] + 8;
        } else {
            rc = cpu_use_plain(e, x, dnnl_data_type_undef, &q->src, err);
        }
        if (!rc && kinds[i] == 1) {
            cpu_val *ix = cpu_in(e, n, in++);
            q->idx64 = ix->desc.dtype == IB_DTYPE_INT64;
            rc = cpu_use_plain(e, ix, dnnl_data_type_undef, &q->idx, err);
        }
    }
    if (!rc)
        rc = cpu_def_plain(e, y, &k->out, err);
    if (rc) {
        ib_free(k);
        return rc;
    }
    return cpu_add_kernel(e, cpu_gather_concat_run, k, err);
}

/* ---- inferbench.DotInteraction (compile_fuse_embed.c) ---------------------------------- */

/* The constant indices as feature pairs (a, b) = (p / F, p % F); false when one is out of
 * [-F*F, F*F) or not constant. a, b may be NULL (check only). */
static bool di_pairs(const ib_graph *g, const ib_node *n, int64_t F, int32_t *a, int32_t *b)
{
    const ib_tensor *t = cpu_const_of(g, n, 1);
    if (!t || t->desc.ndim != 1 ||
        (t->desc.dtype != IB_DTYPE_INT64 && t->desc.dtype != IB_DTYPE_INT32))
        return false;
    for (int64_t k = 0; k < t->desc.dims[0]; k++) {
        int64_t p = t->desc.dtype == IB_DTYPE_INT64 ? ((const int64_t *)t->data)[k]
                                                     : ((const int32_t *)t->data)[k];
        if (p < 0)
            p += F * F;
        if (p < 0 || p >= F * F)
            return false;
        if (a) {
            a[k] = (int32_t)(p / F);
            b[k] = (int32_t)(p % F);
        }
    }
    return true;
}

static bool di_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int64_t F = ib_node_attr_int(n, "features", 0);
    const ib_value *y = ib_node_output(g, n, 0);
    if (n->n_inputs != 2 || !in[0] || !in[1] || in[0]->dtype != IB_DTYPE_FLOAT32 ||
        in[0]->ndim < 2 || F < 1 || F > 65536 || !y || y->desc.dtype != IB_DTYPE_FLOAT32)
        return false;
    int64_t row = in[0]->dims[0] > 0 ? ib_tensor_desc_numel(in[0]) / in[0]->dims[0] : 0;
    return row > 0 && row % F == 0 && di_pairs(g, n, F, NULL, NULL);
}

static int di_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *ix = cpu_in(e, n, 1), *y = cpu_out(e, n, 0);
    int64_t K = ix->desc.dims[0];
    cpu_dot_ctx *k = ib_calloc(1, sizeof *k + 2 * (size_t)(K + 1) * sizeof(int32_t));
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    k->F = ib_node_attr_int(n, "features", 0);
    k->N = x->desc.dims[0];
    k->D = ib_tensor_desc_numel(&x->desc) / k->N / k->F;
    k->K = K;
    k->a = (int32_t *)(k + 1);
    k->b = k->a + K + 1;
    di_pairs(e->graph, n, k->F, k->a, k->b);
    const void *xp;
    void *yp;
    int rc;
    if ((rc = cpu_use_plain(e, x, dnnl_f32, &xp, err)) || (rc = cpu_def_plain(e, y, &yp, err))) {
        ib_free(k);
        return rc;
    }
    k->x = xp;
    k->y = yp;
    return cpu_add_kernel(e, cpu_dot_interaction_run, k, err);
}

/* ---- reductions ----------------------------------------------------------- */

static const struct {
    const char *name;
    dnnl_alg_kind_t alg;
    float p;
} g_red[] = {
    {"ReduceSum", dnnl_reduction_sum, 0},   {"ReduceMean", dnnl_reduction_mean, 0},
    {"ReduceMax", dnnl_reduction_max, 0},   {"ReduceMin", dnnl_reduction_min, 0},
    {"ReduceProd", dnnl_reduction_mul, 0},  {"ReduceL1", dnnl_reduction_norm_lp_sum, 1},
    {"ReduceL2", dnnl_reduction_norm_lp_sum, 2},
    {"ReduceSumSquare", dnnl_reduction_norm_lp_power_p_sum, 2},
};

/* Which dims are reduced: axes from the attribute (old opsets) or the
 * constant second input; *identity when nothing is reduced. */
static bool reduce_axes(const ib_graph *g, const ib_node *n, int ndim, bool *red, bool *identity)
{
    const int64_t *a = NULL;
    int64_t buf[IB_MAX_DIMS];
    int64_t cnt = 0;
    bool from_input = n->n_inputs > 1 && n->inputs[1] != IB_VALUE_NONE;
    if (from_input) {
        const ib_tensor *t = cpu_const_of(g, n, 1);
        if (!t || t->desc.dtype != IB_DTYPE_INT64 || ib_tensor_desc_numel(&t->desc) > IB_MAX_DIMS)
            return false;
        cnt = ib_tensor_desc_numel(&t->desc);
        memcpy(buf, t->data, (size_t)cnt * sizeof *buf);
        a = buf;
    } else {
        cnt = (int64_t)ib_node_attr_ints(n, "axes", &a);
    }
    *identity = false;
    for (int i = 0; i < ndim; i++)
        red[i] = cnt == 0;
    if (cnt == 0 && ib_node_attr_int(n, "noop_with_empty_axes", 0)) {
        *identity = true;
        for (int i = 0; i < ndim; i++)
            red[i] = false;
        return true;
    }
    for (int64_t i = 0; i < cnt; i++) {
        int64_t ax = a[i] < 0 ? a[i] + ndim : a[i];
        if (ax < 0 || ax >= ndim)
            return false;
        red[ax] = true;
    }
    return true;
}

static int red_index(const ib_node *n)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(g_red); i++)
        if (strcmp(g_red[i].name, n->op_type) == 0)
            return (int)i;
    return -1;
}

static bool reduce_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_value *y = ib_node_output(g, n, 0);
    bool red[IB_MAX_DIMS], id;
    if (red_index(n) < 0 || !in[0] || in[0]->dtype != IB_DTYPE_FLOAT32 || !y ||
        y->desc.dtype != IB_DTYPE_FLOAT32 || in[0]->ndim < 1 ||
        !reduce_axes(g, n, in[0]->ndim, red, &id))
        return false;
    int64_t numel = 1;
    for (int i = 0; i < in[0]->ndim; i++)
        numel *= red[i] ? 1 : in[0]->dims[i];
    for (int i = 0; i < in[0]->ndim; i++)
        if (red[i] && in[0]->dims[i] == 0)
            return false; /* empty reductions: identity values, leave to the reference */
    return ib_tensor_desc_numel(&y->desc) == numel;
}

static int reduce_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    int ri = red_index(n), nd = x->desc.ndim;
    bool red[IB_MAX_DIMS], id, any = false;
    if (ri < 0 || !reduce_axes(e->graph, n, nd, red, &id))
        return cpu_fail(e, err, IB_EFORMAT, "bad axes");
    int64_t yd[IB_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        yd[i] = red[i] ? 1 : x->desc.dims[i];
        any |= red[i] && x->desc.dims[i] != 1;
    }
    bool spatial = nd >= 3 && !red[0] && !red[1];
    for (int i = 2; i < nd; i++)
        spatial &= red[i];
    if (ri == 1 && spatial) { /* ReduceMean over the spatial axes: the global average pool */
        int rc = cpu_gap_compile(e, x, y, err);
        if (rc != IB_EUNSUPPORTED)
            return rc;
    }
    dnnl_data_type_t dt = cpu_keep_dt(x);
    dnnl_memory_desc_t smd, dmd, yplain;
    if (cpu_md_plain(&smd, nd, x->desc.dims, dt) || cpu_md_plain(&dmd, nd, yd, dt) ||
        cpu_md_plain(&yplain, y->desc.ndim, y->desc.dims, dt))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    int rc;
    if (!any && ri != 6 && ri != 5) { /* nothing to reduce: a copy (L1/L2 still take |x|) */
        if ((rc = cpu_def(e, y, &yplain, NULL, err)))
            return rc;
        return cpu_copy_into(e, x, &smd, y->data, err);
    }
    dnnl_reduction_desc_t rd;
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_reduction_desc_init(&rd, g_red[ri].alg, &smd, &dmd, g_red[ri].p, 0.0f);
    if (!st)
        st = cpu_pd_create(e, &pd, &rd, NULL);
    if ((rc = cpu_check(e, err, st, "reduction")))
        return rc;
    dnnl_memory_t ms, md;
    if ((rc = cpu_use(e, x, &smd, 1.0f, &ms, err)) || (rc = cpu_def(e, y, &yplain, NULL, err)) ||
        (rc = cpu_mem(e, &dmd, y->data, &md, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_DST, md}};
    return cpu_add_prim(e, pd, args, 2, err);
}

static bool arg_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                         const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_value *y = ib_node_output(g, n, 0);
    if (n->n_inputs != 1 || !in[0] || in[0]->dtype != IB_DTYPE_FLOAT32 || in[0]->ndim < 1 || !y ||
        y->desc.dtype != IB_DTYPE_INT64)
        return false;
    int64_t ax = axis_of(n, in[0]->ndim, 0);
    return ax >= 0 && ax < in[0]->ndim && in[0]->dims[ax] > 0 &&
           ib_tensor_desc_numel(&y->desc) == ib_tensor_desc_numel(in[0]) / in[0]->dims[ax];
}

static int arg_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    cpu_arg_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    int64_t ax = axis_of(n, x->desc.ndim, 0);
    k->outer = k->inner = 1;
    for (int i = 0; i < x->desc.ndim; i++) {
        if (i < ax)
            k->outer *= x->desc.dims[i];
        else if (i > ax)
            k->inner *= x->desc.dims[i];
    }
    k->len = x->desc.dims[ax];
    k->is_max = strcmp(n->op_type, "ArgMax") == 0;
    k->last = ib_node_attr_int(n, "select_last_index", 0) != 0;
    const void *xp;
    void *out;
    int rc;
    if ((rc = cpu_use_plain(e, x, dnnl_f32, &xp, err)) || (rc = cpu_def_plain(e, y, &out, err))) {
        ib_free(k);
        return rc;
    }
    k->x = xp;
    k->out = out;
    return cpu_add_kernel(e, cpu_arg_run, k, err);
}

const cpu_op cpu_ops_gather[] = {
    {"", "Gather", gather_supports, gather_compile},
    {"inferbench", "GatherConcat", gc_supports, gc_compile},
    {"inferbench", "DotInteraction", di_supports, di_compile},
    {"", "ArgMax", arg_supports, arg_compile},
    {"", "ArgMin", arg_supports, arg_compile},
    {NULL, NULL, NULL, NULL},
};

const cpu_op cpu_ops_reduce[] = {
    {"", "ReduceSum", reduce_supports, reduce_compile},
    {"", "ReduceMean", reduce_supports, reduce_compile},
    {"", "ReduceMax", reduce_supports, reduce_compile},
    {"", "ReduceMin", reduce_supports, reduce_compile},
    {"", "ReduceProd", reduce_supports, reduce_compile},
    {"", "ReduceL1", reduce_supports, reduce_compile},
    {"", "ReduceSumSquare", reduce_supports, reduce_compile},
    {"", "ReduceL2", reduce_supports, reduce_compile},
    {NULL, NULL, NULL, NULL},
};
