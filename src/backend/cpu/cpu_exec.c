/*
 * cpu_exec.c - compiling a subgraph into steps and running them: value
 * state, layout requests with cached conversions (views), output storage,
 * boundary write-backs, the shared oneDNN scratchpad, and graph_run. The
 * descriptor helpers are in cpu_desc.c, the constant (weights) conversions and
 * their cache shared between sessions in cpu_const.c.
 *
 * Layout rule (see cpu_internal.h): a producer picks the layout of its
 * output, consumers ask for theirs and get a reorder only when it differs;
 * boundary values are always written back plain. Constants are reordered at
 * compile time. graph_run executes the recorded steps and allocates nothing.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/cpu_kernels.h"
#include "base/time.h"

/* ---- small helpers ------------------------------------------------------- */

/* The cpu_val of graph value id, NULL when absent or not bound here. */
static cpu_val *val_of(cpu_exec *e, ib_value_id id)
{
    return id != IB_VALUE_NONE && e->val_of[id] >= 0 ? &e->vals[e->val_of[id]] : NULL;
}

cpu_val *cpu_in(cpu_exec *e, const ib_node *n, uint32_t i)
{
    return i < n->n_inputs ? val_of(e, n->inputs[i]) : NULL;
}

cpu_val *cpu_out(cpu_exec *e, const ib_node *n, uint32_t i)
{
    return i < n->n_outputs ? val_of(e, n->outputs[i]) : NULL;
}

void *cpu_alloc(cpu_exec *e, size_t bytes)
{
    if (bytes > SIZE_MAX - 2 * IB_BACKEND_ALIGN)
        return NULL;
    char *raw = ib_calloc(1, bytes + IB_BACKEND_ALIGN);
    if (!raw)
        return NULL;
    if (IB_VEC_PUSH(&e->blocks, (void *)raw)) {
        ib_free(raw);
        return NULL;
    }
    return (void *)(((uintptr_t)raw + IB_BACKEND_ALIGN - 1) & ~(uintptr_t)(IB_BACKEND_ALIGN - 1));
}

int cpu_mem(cpu_exec *e, const dnnl_memory_desc_t *md, void *data, dnnl_memory_t *out,
            ib_err *err)
{
    dnnl_memory_t m;
    int rc = cpu_check(e, err, dnnl_memory_create(&m, md, e->ctx->eng, data), "memory_create");
    if (rc)
        return rc;
    if (IB_VEC_PUSH(&e->mems, m)) {
        dnnl_memory_destroy(m);
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    *out = m;
    return IB_OK;
}

int cpu_attr(cpu_exec *e, dnnl_primitive_attr_t *attr, ib_err *err)
{
    int rc = cpu_check(e, err, dnnl_primitive_attr_create(attr), "primitive_attr_create");
    if (rc)
        return rc;
    dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
    return IB_OK;
}

dnnl_status_t cpu_pd_create(cpu_exec *e, dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t op,
                            const_dnnl_primitive_attr_t attr)
{
    dnnl_primitive_attr_t a = NULL;
    dnnl_status_t st;
    if (attr)
        st = dnnl_primitive_attr_clone(&a, attr);
    else
        st = dnnl_primitive_attr_create(&a);
    if (st)
        return st;
    dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_user);
    st = dnnl_primitive_desc_create(pd, op, a, e->ctx->eng, NULL);
    dnnl_primitive_attr_destroy(a);
    return st;
}

dnnl_status_t cpu_matmul_pd(cpu_exec *e, const dnnl_memory_desc_t *src,
                            const dnnl_memory_desc_t *wei, const dnnl_memory_desc_t *bias,
                            const dnnl_memory_desc_t *dst, const_dnnl_primitive_attr_t attr,
                            dnnl_primitive_desc_t *pd)
{
    dnnl_matmul_desc_t md;
    dnnl_status_t st = dnnl_matmul_desc_init(&md, src, wei, bias, dst);
    return st ? st : cpu_pd_create(e, pd, &md, attr);
}

int cpu_add_prim(cpu_exec *e, dnnl_primitive_desc_t pd, const dnnl_exec_arg_t *args, int nargs,
                 ib_err *err)
{
    if (IB_VEC_PUSH(&e->pds, pd)) {
        dnnl_primitive_desc_destroy(pd);
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    cpu_step st;
    memset(&st, 0, sizeof st);
    st.node = e->cur;
    int rc = cpu_check(e, err, dnnl_primitive_create(&st.prim, pd), "primitive_create");
    if (rc)
        return rc;
    /* one spare slot for the scratchpad argument added at the end of compile */
    st.args = ib_calloc((size_t)nargs + 1, sizeof *st.args);
    if (!st.args) {
        dnnl_primitive_destroy(st.prim);
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    memcpy(st.args, args, (size_t)nargs * sizeof *args);
    st.nargs = nargs;
    st.scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    st.scratch_bytes = st.scratch_md ? dnnl_memory_desc_get_size(st.scratch_md) : 0;
    if (IB_VEC_PUSH(&e->steps, st)) {
        dnnl_primitive_destroy(st.prim);
        ib_free(st.args);
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    return IB_OK;
}

int cpu_add_prim_repeat(cpu_exec *e, dnnl_primitive_desc_t pd, const dnnl_exec_arg_t *args,
                        int nargs, int64_t reps, const int64_t *stride_bytes, ib_err *err)
{
    int rc = cpu_add_prim(e, pd, args, nargs, err);
    if (rc)
        return rc;
    cpu_step *st = &e->steps.data[e->steps.len - 1];
    st->reps = reps;
    for (int i = 0; i < nargs && i < CPU_REP_ARGS; i++) {
        void *h = NULL;
        if (stride_bytes[i] && (rc = cpu_check(e, err, dnnl_memory_get_data_handle(args[i].memory, &h),
                                               "get_data_handle")))
            return rc;
        st->rep_stride[i] = stride_bytes[i];
        st->rep_base[i] = h;
    }
    return IB_OK;
}

/* Execute a primitive step (each of its repetitions). */
static dnnl_status_t run_prim(cpu_exec *e, const cpu_step *st)
{
    if (st->reps <= 1)
        return dnnl_primitive_execute(st->prim, e->stream, st->nargs, st->args);
    dnnl_status_t s = dnnl_success;
    for (int64_t r = 0; r < st->reps && s == dnnl_success; r++) {
        for (int i = 0; i < st->nargs && i < CPU_REP_ARGS && s == dnnl_success; i++)
            if (st->rep_stride[i])
                s = dnnl_memory_set_data_handle(st->args[i].memory,
                                                st->rep_base[i] + r * st->rep_stride[i]);
        if (s == dnnl_success)
            s = dnnl_primitive_execute(st->prim, e->stream, st->nargs, st->args);
    }
    return s;
}

int cpu_add_kernel(cpu_exec *e, cpu_kernel_fn fn, void *kctx, ib_err *err)
{
    cpu_step st;
    memset(&st, 0, sizeof st);
    st.node = e->cur;
    st.fn = fn;
    st.kctx = kctx;
    if (IB_VEC_PUSH(&e->steps, st)) {
        ib_free(kctx);
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    return IB_OK;
}

/* Reorder (src_md at src) -> (dst_md at dst) as a run-time step; scale != 1
 * multiplies (int8 quantisation, round to nearest and saturate). */
static int add_reorder(cpu_exec *e, const dnnl_memory_desc_t *src_md, void *src,
                       const dnnl_memory_desc_t *dst_md, void *dst, float scale, ib_err *err)
{
    if (scale == 1.0f && dnnl_memory_desc_equal(src_md, dst_md)) {
        if (src == dst)
            return IB_OK; /* already there */
        /* a plain copy (an int8 residual into its consumer's dst): memcpy in chunks the
         * team shares (oneDNN 2.6's reorder took ~0.16 ms for 800 KB of u8 here) */
        size_t bytes = dnnl_memory_desc_get_size(src_md), chunk = 65536;
        while (chunk > 1 && bytes % chunk)
            chunk /= 16;
        cpu_copy_ctx *k = ib_calloc(1, sizeof *k);
        if (!k)
            return cpu_fail(e, err, IB_ENOMEM, "out of memory");
        *k = (cpu_copy_ctx){.nd = 2,
                            .dims = {(int64_t)(bytes / chunk), (int64_t)chunk},
                            .st = {(int64_t)chunk, 1},
                            .esize = 1,
                            .src = src,
                            .dst = dst};
        return cpu_add_kernel(e, cpu_copy_run, k, err);
    }
    dnnl_primitive_attr_t attr;
    int rc = cpu_attr(e, &attr, err);
    if (rc)
        return rc;
    if (scale != 1.0f)
        dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale);
    dnnl_primitive_desc_t pd;
    rc = cpu_check(e, err,
                   dnnl_reorder_primitive_desc_create(&pd, src_md, e->ctx->eng, dst_md,
                                                      e->ctx->eng, attr),
                   "reorder");
    dnnl_primitive_attr_destroy(attr);
    if (rc)
        return rc;
    dnnl_memory_t ms, md;
    if ((rc = cpu_mem(e, src_md, src, &ms, err)) || (rc = cpu_mem(e, dst_md, dst, &md, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, ms}, {DNNL_ARG_TO, md}};
    return cpu_add_prim(e, pd, args, 2, err);
}

int cpu_use(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *want, float scale,
            dnnl_memory_t *mem, ib_err *err)
{
    if (!v->ready)
        return cpu_fail(e, err, IB_EBACKEND, "value '%s' read before it is produced",
                        e->graph->values.data[v->id].name);
    /* views are keyed by the scale relative to real values; a quantised v is
     * reordered by scale / qscale */
    if (scale == v->qscale && dnnl_memory_desc_equal(&v->md, want))
        return cpu_mem(e, want, v->data, mem, err);
    for (size_t i = 0; i < v->views.len; i++)
        if (v->views.data[i].scale == scale && dnnl_memory_desc_equal(&v->views.data[i].md, want))
            return cpu_mem(e, want, v->views.data[i].data, mem, err);
    cpu_view view;
    view.md = *want;
    view.scale = scale;
    int rc;
    if (v->cdata) {
        dnnl_primitive_attr_t attr = NULL;
        if (scale != 1.0f) {
            if ((rc = cpu_attr(e, &attr, err)))
                return rc;
            dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale);
        }
        rc = cpu_const_reorder(e, &v->md, v->cdata, want, attr, mem, err);
        if (attr)
            dnnl_primitive_attr_destroy(attr);
        if (rc)
            return rc;
        dnnl_memory_get_data_handle(*mem, &view.data);
    } else {
        view.data = cpu_alloc(e, dnnl_memory_desc_get_size(want));
        if (!view.data)
            return cpu_fail(e, err, IB_ENOMEM, "out of memory for a layout conversion");
        if ((rc = add_reorder(e, &v->md, v->data, want, view.data, scale / v->qscale, err)))
            return rc;
        if ((rc = cpu_mem(e, want, view.data, mem, err)))
            return rc;
    }
    if (IB_VEC_PUSH(&v->views, view))
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    return IB_OK;
}

int cpu_use_plain(cpu_exec *e, cpu_val *v, dnnl_data_type_t dt, const void **ptr, ib_err *err)
{
    dnnl_data_type_t gdt = cpu_dt(v->desc.dtype);
    if (gdt == dnnl_data_type_undef) {
        /* dtypes oneDNN lacks are only ever held plain */
        if (!v->ready)
            return cpu_fail(e, err, IB_EBACKEND, "value read before it is produced");
        *ptr = v->data;
        return IB_OK;
    }
    dnnl_memory_desc_t want;
    if (cpu_md_plain(&want, v->desc.ndim, v->desc.dims, dt ? dt : gdt))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "rank %d not supported", (int)v->desc.ndim);
    dnnl_memory_t m;
    int rc = cpu_use(e, v, &want, 1.0f, &m, err);
    if (rc)
        return rc;
    void *p;
    dnnl_memory_get_data_handle(m, &p);
    *ptr = p;
    return IB_OK;
}

int cpu_copy_into_scaled(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, void *data,
                         float scale, ib_err *err)
{
    if (!v->ready)
        return cpu_fail(e, err, IB_EBACKEND, "value read before it is produced");
    return add_reorder(e, &v->md, v->cdata ? (void *)(uintptr_t)v->cdata : v->data, md, data,
                       scale / v->qscale, err);
}

int cpu_copy_into(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, void *data, ib_err *err)
{
    return cpu_copy_into_scaled(e, v, md, data, 1.0f, err);
}

bool cpu_held_q8(const cpu_val *v)
{
    return v->ready && v->desc.dtype == IB_DTYPE_FLOAT32 &&
           (v->md.data_type == dnnl_u8 || v->md.data_type == dnnl_s8);
}

float cpu_q8_scale(const cpu_val *v, dnnl_data_type_t *dt)
{
    if (cpu_held_q8(v)) {
        *dt = v->md.data_type;
        return v->qscale;
    }
    if (v->rmin >= 0) {
        *dt = dnnl_u8;
        return 255.0f / (v->rmax > 0 ? v->rmax : 1.0f);
    }
    float amax = fmaxf(fabsf(v->rmin), fabsf(v->rmax));
    *dt = dnnl_s8;
    return 127.0f / (amax > 0 ? amax : 1.0f);
}

static int def_in(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, bool private,
                  dnnl_memory_t *mem, ib_err *err)
{
    size_t size = dnnl_memory_desc_get_size(md);
    bool plain = cpu_md_is_plain(md) && md->data_type == cpu_dt(v->desc.dtype);
    void *data;
    if (!private && v->store && size <= v->store_bytes && (!v->boundary || plain))
        data = v->store;
    else if (!(data = cpu_alloc(e, size)))
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for an activation");
    v->md = *md;
    v->data = data;
    v->ready = true;
    return mem ? cpu_mem(e, md, data, mem, err) : IB_OK;
}

int cpu_def(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, dnnl_memory_t *mem,
            ib_err *err)
{
    return def_in(e, v, md, false, mem, err);
}

int cpu_def_private(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, dnnl_memory_t *mem,
                    ib_err *err)
{
    return def_in(e, v, md, true, mem, err);
}

int cpu_def_plain(cpu_exec *e, cpu_val *v, void **ptr, ib_err *err)
{
    dnnl_data_type_t gdt = cpu_dt(v->desc.dtype);
    if (gdt != dnnl_data_type_undef) {
        dnnl_memory_desc_t md;
        if (cpu_md_plain(&md, v->desc.ndim, v->desc.dims, gdt))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "rank %d not supported", (int)v->desc.ndim);
        int rc = cpu_def(e, v, &md, NULL, err);
        *ptr = v->data;
        return rc;
    }
    size_t size = ib_tensor_desc_nbytes(&v->desc);
    if (v->store && size <= v->store_bytes)
        v->data = v->store;
    else if (!(v->data = cpu_alloc(e, size ? size : 1)))
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for an activation");
    v->ready = true;
    *ptr = v->data;
    return IB_OK;
}

/* ---- compile and run ----------------------------------------------------- */

static void exec_free(ib_backend_exec *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->steps.len; i++) {
        if (e->steps.data[i].prim)
            dnnl_primitive_destroy(e->steps.data[i].prim);
        ib_free(e->steps.data[i].args);
        ib_free(e->steps.data[i].kctx);
    }
    ib_free(e->prof_ns);
    for (size_t i = 0; i < e->mems.len; i++)
        dnnl_memory_destroy(e->mems.data[i]);
    for (size_t i = 0; i < e->pds.len; i++)
        dnnl_primitive_desc_destroy(e->pds.data[i]);
    for (size_t i = 0; i < e->blocks.len; i++)
        ib_free(e->blocks.data[i]);
    for (uint32_t i = 0; i < e->n_vals; i++)
        IB_VEC_FREE(&e->vals[i].views);
    IB_VEC_FREE(&e->steps);
    ib_prec_notes_free(&e->precs);
    IB_VEC_FREE(&e->mems);
    IB_VEC_FREE(&e->pds);
    IB_VEC_FREE(&e->blocks);
    if (e->stream)
        dnnl_stream_destroy(e->stream);
    ib_free(e->vals);
    ib_free(e->val_of);
    ib_free(e);
}

void cpu_graph_free(void *ctx, ib_backend_exec *e)
{
    IB_UNUSED(ctx);
    exec_free(e);
}

/* n is a Conv or FusedConv: at INT8 it quantises its src (input 0) and FusedConv's
 * residual (input 3, copied into its dst). */
static bool is_conv(const ib_node *n)
{
    const cpu_op *op = cpu_op_find(n); /* matched with the domain */
    return op && (strcmp(op->op_type, "Conv") == 0 || strcmp(op->op_type, "FusedConv") == 0);
}

static bool is_maxpool(const ib_node *n)
{
    const cpu_op *op = cpu_op_find(n);
    return op && strcmp(op->op_type, "MaxPool") == 0 &&
           (n->n_outputs == 1 || n->outputs[1] == IB_VALUE_NONE);
}

/* Count every value's reads in the subgraph, and those by int8 convolutions. A
 * MaxPool whose output only int8 convolutions read pools the int8 values as they are
 * (max commutes with a positive scale), so its read counts as one too. */
static void count_uses(cpu_exec *e, const ib_backend_subgraph *sg)
{
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        const ib_node *n = &sg->graph->nodes.data[sg->nodes[i]];
        bool q8 = sg->precision == IB_PRECISION_INT8 && is_conv(n);
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            cpu_val *v = val_of(e, n->inputs[k]);
            if (!v)
                continue;
            v->uses++;
            if (q8 && (k == 0 || k == 3))
                v->q8_uses++;
        }
    }
    if (sg->precision != IB_PRECISION_INT8)
        return;
    for (uint32_t i = sg->n_nodes; i-- > 0;) { /* consumers first: chains of pools */
        const ib_node *n = &sg->graph->nodes.data[sg->nodes[i]];
        cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
        if (x && y && is_maxpool(n) && !y->boundary && y->uses && y->uses == y->q8_uses)
            x->q8_uses++;
    }
}

/* Initialise the value table from the bindings; values nobody in the
 * subgraph produces (inputs, constants) are ready in plain layout. */
static int init_vals(cpu_exec *e, const ib_backend_subgraph *sg, ib_err *err)
{
    const ib_graph *g = sg->graph;
    e->vals = ib_calloc(sg->n_bindings ? sg->n_bindings : 1, sizeof *e->vals);
    e->val_of = ib_malloc((g->values.len ? g->values.len : 1) * sizeof *e->val_of);
    if (!e->vals || !e->val_of)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->values.len; i++)
        e->val_of[i] = -1;
    e->n_vals = sg->n_bindings;
    for (uint32_t i = 0; i < sg->n_bindings; i++) {
        const ib_backend_binding *bd = &sg->bindings[i];
        cpu_val *v = &e->vals[i];
        v->id = bd->value;
        v->desc = bd->desc;
        v->bd = bd;
        v->boundary = bd->boundary;
        if (bd->constant) {
            v->cdata = bd->constant->data;
        } else {
            v->store = (char *)bd->buffer->host_ptr + bd->offset;
            v->store_bytes = bd->nbytes;
        }
        v->has_range = bd->range_max > bd->range_min;
        v->rmin = bd->range_min;
        v->rmax = bd->range_max;
        v->qscale = 1.0f;
        e->val_of[bd->value] = (int32_t)i;
    }
    count_uses(e, sg);
    bool *produced = ib_calloc(sg->n_bindings ? sg->n_bindings : 1, sizeof *produced);
    if (!produced)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        const ib_node *n = &g->nodes.data[sg->nodes[i]];
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] != IB_VALUE_NONE && e->val_of[n->outputs[k]] >= 0)
                produced[e->val_of[n->outputs[k]]] = true;
    }
    int rc = IB_OK;
    for (uint32_t i = 0; i < e->n_vals && !rc; i++) {
        cpu_val *v = &e->vals[i];
        if (produced[i])
            continue;
        v->ready = true;
        v->data = v->cdata ? (void *)(uintptr_t)v->cdata : v->store;
        dnnl_data_type_t dt = cpu_dt(v->desc.dtype);
        if (dt != dnnl_data_type_undef && cpu_md_plain(&v->md, v->desc.ndim, v->desc.dims, dt))
            rc = cpu_fail(e, err, IB_EUNSUPPORTED, "value '%s' has rank %d",
                          g->values.data[v->id].name, (int)v->desc.ndim);
    }
    ib_free(produced);
    return rc;
}

/* After a node: write boundary outputs back in plain layout of their dtype. */
static int write_back(cpu_exec *e, const ib_node *n, ib_err *err)
{
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        cpu_val *v = cpu_out(e, n, k);
        if (!v)
            continue;
        if (!v->ready)
            return cpu_fail(e, err, IB_EBACKEND, "output %u was not produced", (unsigned)k);
        if (!v->boundary || v->data == v->store)
            continue;
        dnnl_memory_desc_t plain;
        if (cpu_md_plain(&plain, v->desc.ndim, v->desc.dims, cpu_dt(v->desc.dtype)))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "output rank %d", (int)v->desc.ndim);
        if (cpu_dt(v->desc.dtype) == dnnl_data_type_undef)
            return cpu_fail(e, err, IB_EBACKEND, "boundary output not in its binding");
        int rc = add_reorder(e, &v->md, v->data, &plain, v->store, 1.0f, err);
        if (rc)
            return rc;
    }
    return IB_OK;
}

/* One scratchpad for every primitive (they run one after the other). */
static int attach_scratchpad(cpu_exec *e, ib_err *err)
{
    size_t need = 0;
    for (size_t i = 0; i < e->steps.len; i++)
        need = IB_MAX(need, e->steps.data[i].scratch_bytes);
    if (!need)
        return IB_OK;
    if (!(e->scratch = cpu_alloc(e, need)))
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for the oneDNN scratchpad");
    e->scratch_bytes = need;
    for (size_t i = 0; i < e->steps.len; i++) {
        cpu_step *st = &e->steps.data[i];
        if (!st->scratch_bytes)
            continue;
        dnnl_memory_t m;
        int rc = cpu_mem(e, st->scratch_md, e->scratch, &m, err);
        if (rc)
            return rc;
        st->args[st->nargs].arg = DNNL_ARG_SCRATCHPAD;
        st->args[st->nargs].memory = m;
        st->nargs++;
    }
    return IB_OK;
}

int cpu_graph_compile(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out,
                      ib_err *err)
{
    cpu_ctx *c = ctx;
    if (!cpu_precision_ok(c, sg->precision))
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "cpu backend: precision %s is not supported on this CPU (oneDNN ISA "
                          "0x%x); use fp32",
                          ib_precision_name(sg->precision), (unsigned)c->isa);
    cpu_exec *e = ib_calloc(1, sizeof *e);
    if (!e)
        return ib_err_set(err, IB_ENOMEM, "cpu backend: out of memory");
    e->ctx = c;
    e->graph = sg->graph;
    e->precision = sg->precision;
    cpu_pin pin;
    cpu_threads_enter(c, &pin); /* primitives size their work for this team */
    int rc = cpu_check(e, err, dnnl_stream_create(&e->stream, c->eng, dnnl_stream_default_flags),
                       "stream_create");
    if (!rc)
        rc = init_vals(e, sg, err);
    for (uint32_t i = 0; i < sg->n_nodes && !rc; i++) {
        const ib_node *n = &sg->graph->nodes.data[sg->nodes[i]];
        e->cur = n;
        ib_prec_notes_begin(&e->precs);
        const cpu_op *op = cpu_op_find(n);
        if (!op)
            rc = cpu_fail(e, err, IB_EUNSUPPORTED, "op not supported by the cpu backend (opset %lld)",
                          (long long)n->opset);
        else if (!(rc = op->compile(e, n, err)))
            rc = write_back(e, n, err);
        if (!rc && ib_prec_notes_end(&e->precs, n))
            rc = ib_err_set(err, IB_ENOMEM, "cpu backend: out of memory");
    }
    e->cur = NULL;
    if (!rc)
        rc = attach_scratchpad(e, err);
    cpu_threads_leave(c, &pin);
    if (rc) {
        exec_free(e);
        return rc;
    }
    *out = e;
    return IB_OK;
}

int cpu_graph_run(void *ctx, ib_backend_exec *e, const ib_backend_subgraph *sg, ib_err *err)
{
    IB_UNUSED(sg);
    cpu_ctx *c = ctx;
    cpu_pin pin;
    cpu_threads_enter(c, &pin);
    int rc = IB_OK;
    int64_t *prof = e->prof_ns, t0 = prof ? ib_time_ns() : 0;
    for (size_t i = 0; i < e->steps.len && !rc; i++) {
        cpu_step *st = &e->steps.data[i];
        if (prof && i) {
            int64_t t = ib_time_ns();
            prof[i - 1] += t - t0;
            t0 = t;
        }
        if (st->prim) {
            dnnl_status_t s = run_prim(e, st);
            if (s != dnnl_success) {
                e->cur = st->node;
                rc = cpu_check(e, err, s, "execute");
                e->cur = NULL;
            }
        } else {
            rc = st->fn(st->kctx, c->threads, err);
        }
    }
    if (!rc && dnnl_stream_wait(e->stream) != dnnl_success)
        rc = ib_err_set(err, IB_EBACKEND, "cpu backend: stream_wait failed");
    if (prof && e->steps.len) { /* the last step, stream wait included */
        prof[e->steps.len - 1] += ib_time_ns() - t0;
        e->prof_runs++;
    }
    cpu_threads_leave(c, &pin);
    return rc;
}

void cpu_set_profiling(void *ctx, ib_backend_exec *e, bool on)
{
    IB_UNUSED(ctx);
    ib_free(e->prof_ns);
    e->prof_ns = NULL;
    e->prof_runs = 0;
    if (on && e->steps.len)
        e->prof_ns = ib_calloc(e->steps.len, sizeof *e->prof_ns); /* NULL: stays off */
}

enum ib_precision cpu_prec_of(dnnl_data_type_t wdt)
{
    return wdt == dnnl_s8 || wdt == dnnl_u8 ? IB_PRECISION_INT8
           : wdt == dnnl_bf16               ? IB_PRECISION_BF16
           : wdt == dnnl_f16                ? IB_PRECISION_FP16
                                            : IB_PRECISION_FP32;
}

void cpu_precision_read(void *ctx, const ib_backend_exec *e, ib_backend_prec_fn fn, void *user)
{
    IB_UNUSED(ctx);
    ib_prec_notes_read(&e->precs, fn, user);
}

void cpu_profile_read(void *ctx, const ib_backend_exec *e, ib_backend_prof_fn fn, void *user)
{
    IB_UNUSED(ctx);
    for (size_t i = 0; e->prof_ns && i < e->steps.len; i++) {
        const cpu_step *st = &e->steps.data[i];
        const char *kind = !st->node ? "copy" : st->prim ? "onednn" : "kernel";
        const_dnnl_primitive_desc_t pd = NULL;
        dnnl_primitive_kind_t pk = dnnl_undefined_primitive;
        const char *impl = NULL;
        if (st->prim && dnnl_primitive_get_primitive_desc(st->prim, &pd) == dnnl_success &&
            dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &pk) == dnnl_success) {
            if (pk == dnnl_reorder)
                kind = "reorder"; /* a layout conversion for the node, not the node itself */
            else if (pk == dnnl_convolution &&
                     dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
                         dnnl_success &&
                     impl && strstr(impl, "wino"))
                kind = "onednn-wino"; /* oneDNN's Winograd convolution (dnnl_conv.c) */
        }
        fn(user, st->node, kind, e->prof_ns[i], e->prof_runs);
    }
}
