/*
 * dnnl_norm.c - BatchNormalization (inference), InstanceNormalization and
 * LayerNormalization / inferbench.LayerNorm on oneDNN normalisation
 * primitives.
 *
 * BatchNormalization keeps the producer's layout (use_global_stats with
 * scale and shift). InstanceNormalization and inferbench.InstanceNorm (the same
 * + Relu | LeakyRelu) run on our two-pass kernel (cpu_kernels_norm.c).
 * LayerNormalization normalises dims[axis:] of a plain [rows, cols] view.
 */
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

static bool vec_of(const ib_tensor_desc *d, int64_t n)
{
    return d && d->dtype == IB_DTYPE_FLOAT32 && ib_tensor_desc_numel(d) == n;
}

static bool out_f32(const ib_graph *g, const ib_node *n, const ib_tensor_desc *x)
{
    const ib_value *y = ib_node_output(g, n, 0);
    for (uint32_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] != IB_VALUE_NONE) /* training / statistics outputs */
            return false;
    return y && ib_tensor_desc_equal(&y->desc, x) && x->dtype == IB_DTYPE_FLOAT32;
}

static bool bn_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (n->n_inputs != 5 || !in[0] || in[0]->ndim < 2 || in[0]->ndim > 5 ||
        !out_f32(g, n, in[0]) || ib_node_attr_int(n, "training_mode", 0) != 0 ||
        ib_node_attr_int(n, "spatial", 1) != 1)
        return false;
    for (uint32_t i = 1; i < 5; i++)
        if (!vec_of(in[i], in[0]->dims[1]))
            return false;
    return true;
}

static bool in_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (n->domain[0]) { /* inferbench.InstanceNorm */
        const char *act = ib_node_attr_string(n, "activation", "");
        if (strcmp(act, "") && strcmp(act, "Relu") && strcmp(act, "LeakyRelu"))
            return false;
    }
    return n->n_inputs == 3 && in[0] && in[0]->ndim >= 3 && in[0]->ndim <= 5 &&
           out_f32(g, n, in[0]) && vec_of(in[1], in[0]->dims[1]) &&
           vec_of(in[2], in[0]->dims[1]) && cpu_is_const(g, n, 1) && cpu_is_const(g, n, 2);
}

static int64_t ln_axis(const ib_node *n, int ndim)
{
    int64_t axis = ib_node_attr_int(n, "axis", -1);
    return axis < 0 ? axis + ndim : axis;
}

static bool ln_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (n->n_inputs < 2 || n->n_inputs > 3 || !in[0] || !out_f32(g, n, in[0]) || in[0]->ndim < 1)
        return false;
    int64_t axis = ln_axis(n, in[0]->ndim);
    if (axis < 0 || axis >= in[0]->ndim)
        return false;
    int64_t cols = 1;
    for (int i = (int)axis; i < in[0]->ndim; i++)
        cols *= in[0]->dims[i];
    return vec_of(in[1], cols) && (n->n_inputs < 3 || !in[2] || vec_of(in[2], cols));
}

/* Statistics memories a primitive wants (none in inference with computed stats). */
static int maybe_arg(cpu_exec *e, dnnl_primitive_desc_t pd, int arg, dnnl_exec_arg_t *args,
                     int *na, ib_err *err)
{
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    if (!md || md->ndims == 0)
        return IB_OK;
    void *p = cpu_alloc(e, dnnl_memory_desc_get_size(md));
    if (!p)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    dnnl_memory_t m;
    int rc = cpu_mem(e, md, p, &m, err);
    if (!rc)
        args[(*na)++] = (dnnl_exec_arg_t){arg, m};
    return rc;
}

/* A plain f32 vector input as a memory object (converted once if constant). */
static int vec_mem(cpu_exec *e, cpu_val *v, int64_t n, dnnl_memory_t *m, ib_err *err)
{
    const void *p;
    dnnl_memory_desc_t md;
    int rc = cpu_use_plain(e, v, dnnl_f32, &p, err);
    if (rc)
        return rc;
    if (cpu_md_plain(&md, 1, &n, dnnl_f32))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "bad vector");
    return cpu_mem(e, &md, (void *)(uintptr_t)p, m, err);
}

static int bn_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    int64_t C = x->desc.dims[1];
    float eps = ib_node_attr_float(n, "epsilon", 1e-5f);
    dnnl_memory_desc_t smd = x->md;
    if (x->cdata || smd.data_type != cpu_keep_dt(x))
        if (cpu_md_plain(&smd, x->desc.ndim, x->desc.dims, cpu_keep_dt(x)))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    dnnl_batch_normalization_desc_t bd;
    dnnl_primitive_desc_t pd;
    int rc;
    dnnl_status_t st = dnnl_batch_normalization_forward_desc_init(
        &bd, dnnl_forward_inference, &smd, eps,
        dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift);
    if (!st)
        st = cpu_pd_create(e, &pd, &bd, NULL);
    if ((rc = cpu_check(e, err, st, "batch_normalization")))
        return rc;
    dnnl_memory_desc_t dmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_t ms, md, msc, msh, mmean, mvar;
    if ((rc = cpu_use(e, x, &smd, 1.0f, &ms, err)) ||
        (rc = vec_mem(e, cpu_in(e, n, 1), C, &msc, err)) ||
        (rc = vec_mem(e, cpu_in(e, n, 2), C, &msh, err)) ||
        (rc = vec_mem(e, cpu_in(e, n, 3), C, &mmean, err)) ||
        (rc = vec_mem(e, cpu_in(e, n, 4), C, &mvar, err)) || (rc = cpu_def(e, y, &dmd, &md, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, ms},    {DNNL_ARG_DST, md},
                               {DNNL_ARG_SCALE, msc}, {DNNL_ARG_SHIFT, msh},
                               {DNNL_ARG_MEAN, mmean}, {DNNL_ARG_VARIANCE, mvar}};
    return cpu_add_prim(e, pd, args, 6, err);
}

/* InstanceNormalization and inferbench.InstanceNorm (+ Relu | LeakyRelu) on our kernel
 * (cpu_kernels_norm.c), in the layout and dtype the producer left x in when that is
 * channels-last, else plain. */
static int in_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    int nd = x->desc.ndim;
    dnnl_data_type_t dt = cpu_keep_dt(x);
    bool cl = !x->cdata && x->md.data_type == dt && cpu_md_channels_last(&x->md, nd, x->desc.dims);
    dnnl_memory_desc_t want;
    int rc = cl ? cpu_md_tag(&want, nd, x->desc.dims, dt, cpu_channels_last_tag(nd))
                : cpu_md_plain(&want, nd, x->desc.dims, dt);
    if (rc)
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    cpu_inorm_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    k->bf16 = dt == dnnl_bf16;
    k->cl = cl;
    k->N = x->desc.dims[0];
    k->C = x->desc.dims[1];
    k->S = 1;
    for (int i = 2; i < nd; i++)
        k->S *= x->desc.dims[i];
    k->scale = cpu_in(e, n, 1)->cdata;
    k->bias = cpu_in(e, n, 2)->cdata;
    k->eps = ib_node_attr_float(n, "epsilon", 1e-5f);
    const char *act = ib_node_attr_string(n, "activation", "");
    k->act = !strcmp(act, "Relu") ? CPU_INORM_RELU
             : !strcmp(act, "LeakyRelu") ? CPU_INORM_LEAKY : CPU_INORM_NONE;
    k->alpha = ib_node_attr_float(n, "activation_alpha", 0.01f);
    k->max_threads = e->ctx->threads > 0 ? e->ctx->threads : 1;
    size_t T = (size_t)k->max_threads, C = (size_t)k->C, NC = (size_t)(k->N * k->C);
    k->tmp_per_thread = (int64_t)cpu_inorm_scratch_floats(cl, k->C);
    if (cl) { /* the channels-last statistics pass: per-thread sums, then mean and scale */
        k->part = cpu_alloc(e, T * 2 * C * sizeof(double));
        k->fpart = cpu_alloc(e, T * 2 * C * sizeof(float));
        k->mu = cpu_alloc(e, NC * sizeof(float));
        k->a = cpu_alloc(e, NC * sizeof(float));
    }
    k->tmp = cpu_alloc(e, T * (size_t)k->tmp_per_thread * sizeof(float));
    dnnl_memory_t mx, my;
    void *xp = NULL;
    if ((cl && (!k->part || !k->fpart || !k->mu || !k->a)) || !k->tmp)
        rc = cpu_fail(e, err, IB_ENOMEM, "out of memory");
    if (!rc && !(rc = cpu_use(e, x, &want, 1.0f, &mx, err)))
        rc = cpu_check(e, err, dnnl_memory_get_data_handle(mx, &xp), "get_data_handle");
    if (!rc)
        rc = cpu_def(e, y, &want, &my, err);
    if (rc) {
        ib_free(k);
        return rc;
    }
    k->x = xp;
    k->y = y->data;
    return cpu_add_kernel(e, cpu_inorm_run, k, err);
}

static int ln_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0), *b = cpu_in(e, n, 2);
    int64_t axis = ln_axis(n, x->desc.ndim), rc2[2] = {1, 1};
    for (int i = 0; i < x->desc.ndim; i++)
        rc2[i >= axis] *= x->desc.dims[i];
    float eps = ib_node_attr_float(n, "epsilon", 1e-5f);
    dnnl_data_type_t dt = cpu_keep_dt(x);
    dnnl_memory_desc_t xmd, vmd;
    if (cpu_md_plain(&xmd, 2, rc2, dt))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    unsigned flags = dnnl_use_scale | (b ? dnnl_use_shift : 0u);
    dnnl_layer_normalization_desc_t ld;
    dnnl_primitive_desc_t pd;
    int rc;
    dnnl_status_t st =
        dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_inference, &xmd, NULL, eps,
                                                   flags);
    if (!st)
        st = cpu_pd_create(e, &pd, &ld, NULL);
    if ((rc = cpu_check(e, err, st, "layer_normalization")))
        return rc;
    const void *xp;
    dnnl_memory_t ms, md, msc, msh = NULL;
    dnnl_memory_desc_t yplain;
    dnnl_exec_arg_t args[8];
    int na = 0;
    if ((rc = cpu_use_plain(e, x, dt, &xp, err)))
        goto fail;
    if (cpu_md_plain(&yplain, y->desc.ndim, y->desc.dims, dt) || cpu_md_plain(&vmd, 1, &rc2[1], dnnl_f32)) {
        rc = cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the output");
        goto fail;
    }
    if ((rc = cpu_def(e, y, &yplain, NULL, err)) ||
        (rc = cpu_mem(e, &xmd, (void *)(uintptr_t)xp, &ms, err)) ||
        (rc = cpu_mem(e, &xmd, y->data, &md, err)))
        goto fail;
    const void *sp, *bp;
    if ((rc = cpu_use_plain(e, cpu_in(e, n, 1), dnnl_f32, &sp, err)) ||
        (rc = cpu_mem(e, &vmd, (void *)(uintptr_t)sp, &msc, err)))
        goto fail;
    if (b && ((rc = cpu_use_plain(e, b, dnnl_f32, &bp, err)) ||
              (rc = cpu_mem(e, &vmd, (void *)(uintptr_t)bp, &msh, err))))
        goto fail;
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, ms};
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, md};
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCALE, msc};
    if (msh)
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SHIFT, msh};
    if ((rc = maybe_arg(e, pd, DNNL_ARG_MEAN, args, &na, err)) ||
        (rc = maybe_arg(e, pd, DNNL_ARG_VARIANCE, args, &na, err)))
        goto fail;
    return cpu_add_prim(e, pd, args, na, err);
fail:
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

const cpu_op cpu_ops_norm[] = {
    {"", "BatchNormalization", bn_supports, bn_compile},
    {"", "InstanceNormalization", in_supports, in_compile},
    {"inferbench", "InstanceNorm", in_supports, in_compile},
    {"", "LayerNormalization", ln_supports, ln_compile},
    {"inferbench", "LayerNorm", ln_supports, ln_compile},
    {NULL, NULL, NULL, NULL},
};
