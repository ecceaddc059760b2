/*
 * cuda_ops_shape.c - data movement and reductions: the reshape family
 * (Reshape, Flatten, Squeeze, Unsqueeze: one device copy, none when the
 * planner gave input and output the same bytes), Transpose and Expand
 * (strided-copy kernel, any dtype of 1/2/4/8 bytes), Concat (2-D device
 * copies), Gather (row-gather kernel, int32/int64 indices; the embedding
 * lookup) and ReduceSum/Mean/Max/Min/SumSquare/L1/L2 plus GlobalAverage/
 * MaxPool over one contiguous block of axes (reduction kernel, float32),
 * ArgMax/ArgMin (int64 indices, select_last_index), Cast (float32/64,
 * int64/32/8, uint8, bool) and Split (2-D device copies).
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

int cu_compile_copy(cu_exec *e, const ib_node *n, ib_err *err); /* cuda_ops_ew.c */

static bool esize_ok(const ib_tensor_desc *d)
{
    size_t s = ib_dtype_size(d->dtype);
    return s == 1 || s == 2 || s == 4 || s == 8;
}

/* ---- reshape family ------------------------------------------------------- */

static bool sup_reshape(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_tensor_desc *o = cu_out_desc(g, n, 0);
    return in[0] && o && ib_tensor_desc_nbytes(o) == ib_tensor_desc_nbytes(in[0]);
}

static int comp_reshape(cu_exec *e, const ib_node *n, ib_err *err)
{
    return cu_compile_copy(e, n, err);
}

/* ---- strided copies (Transpose, Expand) ----------------------------------- */

typedef struct sc_k {
    const void *x;
    void *y;
    ibk_view v;
    int esize;
} sc_k;

static int run_strided(cu_exec *e, void *k, ib_err *err)
{
    sc_k *s = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_strided_copy(e->ctx->stream, s->x, s->y, &s->v, s->esize),
                       "strided copy kernel");
}

int cu_add_strided_copy(cu_exec *e, const void *x, void *y, const ibk_view *v, int esize,
                        ib_err *err)
{
    sc_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (sc_k){.x = x, .y = y, .v = *v, .esize = esize};
    return cu_add_step(e, run_strided, k, NULL, err);
}

static bool sup_transpose(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                          const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    const int64_t *perm;
    size_t np = ib_node_attr_ints(n, "perm", &perm);
    return in[0] && esize_ok(in[0]) && (np == 0 || np == (size_t)in[0]->ndim);
}

static int comp_transpose(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    const int64_t *perm;
    size_t np = ib_node_attr_ints(n, "perm", &perm);
    int64_t st[IB_MAX_DIMS];
    cu_strides(&x->desc, st);
    int32_t r = x->desc.ndim;
    ibk_view v;
    memset(&v, 0, sizeof v);
    v.ndim = r ? r : 1;
    v.dims[0] = 1;
    for (int32_t d = 0; d < r; d++) {
        int64_t s = np ? perm[d] : r - 1 - d;
        if (s < 0)
            s += r;
        v.dims[d] = x->desc.dims[s];
        v.sa[d] = st[s];
    }
    return cu_add_strided_copy(e, x->dev, y->dev, &v, (int)ib_dtype_size(x->desc.dtype), err);
}


static bool sup_expand(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                       const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_tensor_desc *o = cu_out_desc(g, n, 0);
    return in[0] && o && esize_ok(in[0]) && o->ndim >= in[0]->ndim;
}

static int comp_expand(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    ibk_view v;
    cu_bcast_view(&x->desc, NULL, &y->desc, &v);
    return cu_add_strided_copy(e, x->dev, y->dev, &v, (int)ib_dtype_size(x->desc.dtype), err);
}

/* ---- Concat --------------------------------------------------------------- */

typedef struct cat_part {
    const void *src;
    size_t width; /* bytes per outer row of this input */
} cat_part;

typedef struct cat_k {
    void *y;
    size_t rows, pitch; /* outer rows; output bytes per row */
    uint32_t n;
    cat_part parts[];
} cat_k;

static int run_concat(cu_exec *e, void *k, ib_err *err)
{
    cat_k *c = k;
    size_t off = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const cat_part *p = &c->parts[i];
        if (p->width && c->rows) {
            int rc = cu_check_rt(e, err,
                                 cudaMemcpy2DAsync((char *)c->y + off, c->pitch, p->src, p->width,
                                                   p->width, c->rows, cudaMemcpyDeviceToDevice,
                                                   e->ctx->stream),
                                 "cudaMemcpy2DAsync (Concat)");
            if (rc)
                return rc;
        }
        off += p->width;
    }
    return IB_OK;
}

static bool sup_concat(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                       const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (!in[i] || in[i]->dtype != in[0]->dtype)
            return false;
    return n->n_inputs >= 1 && in[0]->ndim >= 1;
}

static int comp_concat(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *y = cu_out(e, n, 0);
    int64_t r = y->desc.ndim, axis = ib_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    cat_k *k = ib_calloc(1, sizeof *k + n->n_inputs * sizeof(cat_part));
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    size_t es = ib_dtype_size(y->desc.dtype), rows = 1, inner = es;
    for (int64_t d = 0; d < r; d++) {
        if (d < axis)
            rows *= (size_t)y->desc.dims[d];
        else if (d > axis)
            inner *= (size_t)y->desc.dims[d];
    }
    k->y = y->dev;
    k->rows = rows;
    k->pitch = inner * (size_t)y->desc.dims[axis];
    k->n = n->n_inputs;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        cu_val *x = cu_in(e, n, i);
        k->parts[i].src = x->dev;
        k->parts[i].width = inner * (size_t)x->desc.dims[axis];
    }
    return cu_add_step(e, run_concat, k, NULL, err);
}

/* ---- Gather ---------------------------------------------------------------- */

typedef struct ga_k {
    const void *data, *idx;
    void *y;
    int idx64;
    bool f16; /* data is the float16 copy of a float32 [axis_n, inner] table */
    bool q8;  /* data is its row-wise 8-bit copy [axis_n, inner / 4 + 8] (int8) */
    int64_t outer, axis_n, n_idx, inner_bytes;
} ga_k;

/* At fp16, fp8 and int8 an embedding table (a float32 constant [rows, dim], gathered on axis
 * 0) of at least this size is held on the device as float16 (issue 25: DLRM's tables, half
 * the memory and half the bytes a lookup moves). At int8, a table whose lookup only a Concat
 * reads (DLRM's, the ones the cpu fuses into GatherConcat and holds at 8 bits) is held as
 * row-wise 8-bit rows instead: a quarter of the bytes plus 8 a row, the bytes ib_q8_row makes
 * and the cpu holds. BERT's word embeddings (read by an Add) stay float16. Smaller tables,
 * fp32 and bf16 keep float32, so the exact data movement the conformance cases check is
 * unchanged. */
#define CU_GATHER_F16_MIN ((size_t)1 << 20)

/* Whether value v's one reader is a Concat (the GatherConcat pattern of
 * compile_fuse_embed.c). */
static bool only_concat_reads(const ib_graph *g, ib_value_id v)
{
    if (g->values.data[v].consumers != 1)
        return false;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        for (uint32_t k = 0; k < n->n_inputs && !n->dead; k++)
            if (n->inputs[k] == v)
                return !n->domain[0] && !strcmp(n->op_type, "Concat");
    }
    return false;
}

static int run_gather(cu_exec *e, void *k, ib_err *err)
{
    ga_k *g = k;
    if (g->q8)
        return cu_check_rt(e, err,
                           (cudaError_t)ibk_gather_q8_rows(e->ctx->stream, g->data, g->idx,
                                                           g->idx64, g->y, g->axis_n, g->n_idx,
                                                           g->inner_bytes / 4),
                           "gather kernel (row-wise 8-bit table)");
    if (g->f16)
        return cu_check_rt(e, err,
                           (cudaError_t)ibk_gather_f16_rows(e->ctx->stream, g->data, g->idx,
                                                            g->idx64, g->y, g->axis_n, g->n_idx,
                                                            g->inner_bytes / 4),
                           "gather kernel (float16 table)");
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_gather(e->ctx->stream, g->data, g->idx, g->idx64, g->y,
                                               g->outer, g->axis_n, g->n_idx, g->inner_bytes),
                       "gather kernel");
}

static bool sup_gather(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                       const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    IB_UNUSED(n);
    return in[0] && in[1] && in[0]->ndim >= 1 && ib_dtype_size(in[0]->dtype) > 0 &&
           (in[1]->dtype == IB_DTYPE_INT64 || in[1]->dtype == IB_DTYPE_INT32);
}

static int comp_gather(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *ix = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    ga_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    int64_t r = x->desc.ndim, axis = ib_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    k->outer = 1;
    k->inner_bytes = (int64_t)ib_dtype_size(x->desc.dtype);
    for (int64_t d = 0; d < r; d++) {
        if (d < axis)
            k->outer *= x->desc.dims[d];
        else if (d > axis)
            k->inner_bytes *= x->desc.dims[d];
    }
    k->axis_n = x->desc.dims[axis];
    k->n_idx = ib_tensor_desc_numel(&ix->desc);
    k->idx64 = ix->desc.dtype == IB_DTYPE_INT64;
    k->data = x->dev;
    k->idx = ix->dev;
    k->y = y->dev;
    enum ib_precision p = e->precision;
    if ((p == IB_PRECISION_FP16 || p == IB_PRECISION_FP8 || p == IB_PRECISION_INT8) &&
        x->host && x->desc.dtype == IB_DTYPE_FLOAT32 && r == 2 && axis == 0 &&
        ib_tensor_desc_nbytes(&x->desc) >= CU_GATHER_F16_MIN) {
        bool q8 = p == IB_PRECISION_INT8 && only_concat_reads(e->graph, y->id);
        int fmt = q8 ? CU_W_U8_ROWWISE : CU_W_F16;
        void *t = NULL;
        int rc = q8 ? cu_weight_get_q8_rows(e->ctx, x->host, x->desc.dims[0], x->desc.dims[1],
                                            &t, err)
                    : cu_weight_get_f16(e->ctx, x->host, x->desc.dims[0], x->desc.dims[1], &t,
                                        err);
        if (!rc)
            rc = cu_exec_hold_weight(e, x->host, fmt, err);
        if (rc) {
            ib_free(k);
            return rc;
        }
        k->data = t;
        k->f16 = !q8;
        k->q8 = q8;
        /* the table's only reader: let its float32 copy go (the store frees it unless
         * another subgraph holds it), so the device keeps only the 16- or 8-bit form */
        if (e->graph->values.data[x->id].consumers == 1) {
            cu_exec_release_weight(e, x->host, CU_W_PLAIN);
            x->dev = NULL;
        }
    }
    return cu_add_step(e, run_gather, k, NULL, err);
}

/* ---- reductions ---------------------------------------------------------------- */

typedef struct red_k {
    int op;
    const float *x;
    float *y;
    int64_t outer, red, inner;
} red_k;

static int run_reduce(cu_exec *e, void *k, ib_err *err)
{
    red_k *r = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_reduce(e->ctx->stream, r->op, r->x, r->y, r->outer,
                                               r->red, r->inner),
                       "reduce kernel");
}

static int reduce_kop(const ib_node *n)
{
    static const struct {
        const char *name;
        int op;
    } t[] = {{"ReduceSum", IBK_RSUM},       {"ReduceMean", IBK_RMEAN},
             {"ReduceMax", IBK_RMAX},       {"ReduceMin", IBK_RMIN},
             {"ReduceSumSquare", IBK_RSUMSQ}, {"ReduceL2", IBK_RL2},
             {"ReduceL1", IBK_RL1},         {"GlobalAveragePool", IBK_RMEAN},
             {"GlobalMaxPool", IBK_RMAX}};
    for (size_t i = 0; i < IB_ARRAY_LEN(t); i++)
        if (strcmp(t[i].name, n->op_type) == 0)
            return t[i].op;
    return -1;
}

/* The reduction as [outer, red, inner]; false when the reduced axes are not
 * one contiguous block (size-1 dims ignored) or the axes are not constant. */
static bool reduce_shape(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x,
                         int64_t *outer, int64_t *red, int64_t *inner)
{
    bool mask[IB_MAX_DIMS] = {false};
    int32_t r = x->ndim;
    if (strncmp(n->op_type, "Global", 6) == 0) {
        for (int32_t d = 2; d < r; d++)
            mask[d] = true;
    } else {
        const int64_t *axes = NULL;
        size_t na = 0;
        bool from_input = strcmp(n->op_type, "ReduceSum") == 0 ? n->opset >= 13 : n->opset >= 18;
        if (from_input) {
            if (n->n_inputs > 1 && n->inputs[1] != IB_VALUE_NONE) {
                if (!cu_is_const(g, n, 1))
                    return false;
                const ib_tensor *t = ib_node_input(g, n, 1)->constant;
                if (t->desc.dtype != IB_DTYPE_INT64)
                    return false;
                axes = t->data;
                na = (size_t)ib_tensor_desc_numel(&t->desc);
            }
            if (na == 0 && ib_node_attr_int(n, "noop_with_empty_axes", 0))
                return false; /* identity: rare, left to the reference */
        } else {
            na = ib_node_attr_ints(n, "axes", &axes);
        }
        for (size_t i = 0; i < na; i++) {
            int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
            if (a < 0 || a >= r)
                return false;
            mask[a] = true;
        }
        if (na == 0)
            for (int32_t d = 0; d < r; d++)
                mask[d] = true;
    }
    int32_t first = -1, last = -1;
    for (int32_t d = 0; d < r; d++)
        if (mask[d] && x->dims[d] != 1) {
            if (first < 0)
                first = d;
            last = d;
        }
    *outer = *red = *inner = 1;
    for (int32_t d = 0; d < r; d++) {
        if (first < 0 || d < first)
            *outer *= x->dims[d];
        else if (d > last)
            *inner *= x->dims[d];
        else if (!mask[d] && x->dims[d] != 1)
            return false; /* a kept dim inside the reduced block */
        else
            *red *= x->dims[d];
    }
    return true;
}

static bool sup_reduce(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                       const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int64_t o, r, i;
    if (reduce_kop(n) < 0 || !in[0] || in[0]->dtype != IB_DTYPE_FLOAT32 ||
        ib_tensor_desc_numel(in[0]) == 0)
        return false;
    if (strncmp(n->op_type, "Global", 6) == 0 && in[0]->ndim < 3)
        return false;
    return reduce_shape(g, n, in[0], &o, &r, &i);
}

static int comp_reduce(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    red_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    reduce_shape(e->graph, n, &x->desc, &k->outer, &k->red, &k->inner);
    k->op = reduce_kop(n);
    k->x = x->dev;
    k->y = y->dev;
    return cu_add_step(e, run_reduce, k, NULL, err);
}

/* ---- ArgMax / ArgMin ------------------------------------------------------------ */

typedef struct am_k {
    const float *x;
    int64_t *y;
    int64_t outer, red, inner;
    int last, is_min;
} am_k;

static int run_argmax(cu_exec *e, void *k, ib_err *err)
{
    am_k *a = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_argmax(e->ctx->stream, a->x, a->y, a->outer, a->red,
                                               a->inner, a->last, a->is_min),
                       "argmax kernel");
}

static bool sup_argmax(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                       const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_tensor_desc *o = cu_out_desc(g, n, 0);
    if (!in[0] || in[0]->dtype != IB_DTYPE_FLOAT32 || !o || o->dtype != IB_DTYPE_INT64 ||
        in[0]->ndim < 1)
        return false;
    int64_t axis = ib_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += in[0]->ndim;
    return axis >= 0 && axis < in[0]->ndim && in[0]->dims[axis] > 0;
}

static int comp_argmax(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    am_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    int64_t r = x->desc.ndim, axis = ib_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    k->outer = k->inner = 1;
    for (int64_t d = 0; d < r; d++) {
        if (d < axis)
            k->outer *= x->desc.dims[d];
        else if (d > axis)
            k->inner *= x->desc.dims[d];
    }
    k->red = x->desc.dims[axis];
    k->last = ib_node_attr_int(n, "select_last_index", 0) != 0;
    k->is_min = strcmp(n->op_type, "ArgMin") == 0;
    k->x = x->dev;
    k->y = y->dev;
    return cu_add_step(e, run_argmax, k, NULL, err);
}

/* ---- Cast ------------------------------------------------------------------------ */

static int kdt(enum ib_dtype t)
{
    switch (t) {
    case IB_DTYPE_FLOAT32: return IBK_F32;
    case IB_DTYPE_FLOAT64: return IBK_F64;
    case IB_DTYPE_INT64: return IBK_I64;
    case IB_DTYPE_INT32: return IBK_I32;
    case IB_DTYPE_INT8: return IBK_I8;
    case IB_DTYPE_UINT8: return IBK_U8;
    case IB_DTYPE_BOOL: return IBK_BOOL;
    default: return -1;
    }
}

typedef struct cast_k {
    const void *x;
    void *y;
    int xt, yt;
    int64_t n;
} cast_k;

static int run_cast(cu_exec *e, void *k, ib_err *err)
{
    cast_k *c = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_cast(e->ctx->stream, c->x, c->xt, c->y, c->yt, c->n),
                       "cast kernel");
}

static bool sup_cast(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                     const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_tensor_desc *o = cu_out_desc(g, n, 0);
    return in[0] && o && kdt(in[0]->dtype) >= 0 && kdt(o->dtype) >= 0;
}

static int comp_cast(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    cast_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (cast_k){.x = x->dev, .y = y->dev, .xt = kdt(x->desc.dtype), .yt = kdt(y->desc.dtype),
                  .n = ib_tensor_desc_numel(&y->desc)};
    return cu_add_step(e, run_cast, k, NULL, err);
}

/* ---- Split (the sizes come from the bound output shapes) --------------------------- */

typedef struct split_k {
    const void *x;
    size_t rows, pitch; /* outer rows; input bytes per row */
    uint32_t n;
    cat_part parts[];   /* src = the output, width = its bytes per row */
} split_k;

static int run_split(cu_exec *e, void *k, ib_err *err)
{
    split_k *c = k;
    size_t off = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const cat_part *p = &c->parts[i];
        if (p->src && p->width && c->rows) {
            int rc = cu_check_rt(e, err,
                                 cudaMemcpy2DAsync((void *)(uintptr_t)p->src, p->width,
                                                   (const char *)c->x + off, c->pitch, p->width,
                                                   c->rows, cudaMemcpyDeviceToDevice,
                                                   e->ctx->stream),
                                 "cudaMemcpy2DAsync (Split)");
            if (rc)
                return rc;
        }
        off += p->width;
    }
    return IB_OK;
}

static bool sup_split(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                      const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (!in[0] || in[0]->ndim < 1 || n->n_outputs < 1)
        return false;
    int64_t r = in[0]->ndim, axis = ib_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis >= r)
        return false;
    int64_t sum = 0;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        const ib_tensor_desc *o = cu_out_desc(g, n, i);
        if (!o || o->ndim != r)
            return false;
        sum += o->dims[axis];
    }
    return sum == in[0]->dims[axis];
}

static int comp_split(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0);
    int64_t r = x->desc.ndim, axis = ib_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    split_k *k = ib_calloc(1, sizeof *k + n->n_outputs * sizeof(cat_part));
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    size_t rows = 1, inner = ib_dtype_size(x->desc.dtype);
    for (int64_t d = 0; d < r; d++) {
        if (d < axis)
            rows *= (size_t)x->desc.dims[d];
        else if (d > axis)
            inner *= (size_t)x->desc.dims[d];
    }
    k->x = x->dev;
    k->rows = rows;
    k->pitch = inner * (size_t)x->desc.dims[axis];
    k->n = n->n_outputs;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        const ib_tensor_desc *o = cu_out_desc(e->graph, n, i);
        cu_val *y = cu_out(e, n, i);
        k->parts[i].src = y ? y->dev : NULL; /* an unbound (unused) output is skipped */
        k->parts[i].width = inner * (size_t)o->dims[axis];
    }
    return cu_add_step(e, run_split, k, NULL, err);
}

const cu_op cu_ops_shape[] = {
    {"", "Cast", sup_cast, comp_cast},
    {"", "Split", sup_split, comp_split},
    {"", "ArgMax", sup_argmax, comp_argmax},
    {"", "ArgMin", sup_argmax, comp_argmax},
    {"", "Reshape", sup_reshape, comp_reshape},
    {"", "Flatten", sup_reshape, comp_reshape},
    {"", "Squeeze", sup_reshape, comp_reshape},
    {"", "Unsqueeze", sup_reshape, comp_reshape},
    {"", "Transpose", sup_transpose, comp_transpose},
    {"", "Expand", sup_expand, comp_expand},
    {"", "Concat", sup_concat, comp_concat},
    {"", "Gather", sup_gather, comp_gather},
    {"", "ReduceSum", sup_reduce, comp_reduce},
    {"", "ReduceMean", sup_reduce, comp_reduce},
    {"", "ReduceMax", sup_reduce, comp_reduce},
    {"", "ReduceMin", sup_reduce, comp_reduce},
    {"", "ReduceSumSquare", sup_reduce, comp_reduce},
    {"", "ReduceL1", sup_reduce, comp_reduce},
    {"", "ReduceL2", sup_reduce, comp_reduce},
    {"", "GlobalAveragePool", sup_reduce, comp_reduce},
    {"", "GlobalMaxPool", sup_reduce, comp_reduce},
    {NULL, NULL, NULL, NULL},
};
