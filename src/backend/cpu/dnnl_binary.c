/*
 * dnnl_binary.c - binary elementwise ops with numpy broadcasting: Add,
 * Sub, Mul, Div, Max, Min on the oneDNN binary primitive when one operand
 * has the output's shape (the other may broadcast); every other case, and
 * Pow, Mod, comparisons, logic, Where and Not, on our own broadcast kernels
 * (cpu_kernels_ew.c). Also Concat (oneDNN concat for f32, copies otherwise).
 *
 * oneDNN needs src0 at the full output shape: for Add/Mul/Max/Min the
 * operands are swapped when only the second is full, Sub becomes
 * -(b - a) with a linear post-op. The full operand keeps its layout (a
 * blocked activation stays blocked); a same-shape partner is converted to
 * that layout, a broadcast partner is plain.
 */
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

static const struct {
    const char *name;
    enum cpu_ew_op op;
    int n_in;
    dnnl_alg_kind_t alg; /* 0 = own kernel only */
} g_bin[] = {
    {"Add", CPU_EW_ADD, 2, dnnl_binary_add},
    {"Sub", CPU_EW_SUB, 2, dnnl_binary_sub},
    {"Mul", CPU_EW_MUL, 2, dnnl_binary_mul},
    {"Div", CPU_EW_DIV, 2, dnnl_binary_div},
    {"Max", CPU_EW_MAX, 2, dnnl_binary_max},
    {"Min", CPU_EW_MIN, 2, dnnl_binary_min},
    {"Pow", CPU_EW_POW, 2, 0},
    {"Mod", CPU_EW_MOD, 2, 0},
    {"Equal", CPU_EW_EQ, 2, 0},
    {"Less", CPU_EW_LT, 2, 0},
    {"Greater", CPU_EW_GT, 2, 0},
    {"LessOrEqual", CPU_EW_LE, 2, 0},
    {"GreaterOrEqual", CPU_EW_GE, 2, 0},
    {"And", CPU_EW_AND, 2, 0},
    {"Or", CPU_EW_OR, 2, 0},
    {"Xor", CPU_EW_XOR, 2, 0},
    {"Where", CPU_EW_WHERE, 3, 0},
    {"Not", CPU_EW_NOT, 1, 0},
    {"Erf", CPU_EW_ERF, 1, 0},
    {"Floor", CPU_EW_FLOOR, 1, 0},
    {"Ceil", CPU_EW_CEIL, 1, 0},
    {"Sign", CPU_EW_SIGN, 1, 0},
    {"HardSigmoid", CPU_EW_HARDSIGMOID, 1, 0},
    {"Cast", CPU_EW_CAST, 1, 0},
};

static int bin_index(const ib_node *n)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(g_bin); i++)
        if (strcmp(g_bin[i].name, n->op_type) == 0)
            return (int)i;
    return -1;
}

/* Same dims (dtype ignored). */
static bool same_dims(const ib_tensor_desc *a, const ib_tensor_desc *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/* The partner has y's shape except a 1 in the innermost dim (RNN-T's [N,T,1] frame mask
 * times [N,T,H]), not a scalar: oneDNN 2.6 has no jit kernel for that broadcast and its
 * reference one took 13 ms for 256x1024 floats; ours streams it. (Per-channel and row-vector
 * broadcasts stay on oneDNN's jit kernels.) */
static bool row_broadcast(const ib_tensor_desc *p, const ib_tensor_desc *y)
{
    int last = y->ndim - 1;
    if (p->ndim != y->ndim || last < 1 || y->dims[last] <= 1 || p->dims[last] != 1 ||
        ib_tensor_desc_numel(p) <= 1)
        return false;
    for (int i = 0; i < last; i++)
        if (p->dims[i] != y->dims[i])
            return false;
    return true;
}

/* Whether oneDNN can take the node: 0 no, 1 as is, 2 swapped. */
static int dnnl_form(int bi, const ib_tensor_desc *const *in, const ib_tensor_desc *y)
{
    if (!g_bin[bi].alg || !in[0] || !in[1] || in[0]->dtype != IB_DTYPE_FLOAT32 ||
        in[1]->dtype != IB_DTYPE_FLOAT32 || y->dtype != IB_DTYPE_FLOAT32 || y->ndim < 1)
        return 0;
    if (same_dims(in[0], y))
        return row_broadcast(in[1], y) ? 0 : 1;
    enum cpu_ew_op op = g_bin[bi].op;
    if (same_dims(in[1], y) && op != CPU_EW_DIV)
        return row_broadcast(in[0], y) ? 0 : 2;
    return 0;
}

static bool ew_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int bi = bin_index(n);
    const ib_value *y = ib_node_output(g, n, 0);
    if (bi < 0 || !y || n->n_inputs != (uint32_t)g_bin[bi].n_in || n->n_outputs != 1)
        return false;
    for (int k = 0; k < g_bin[bi].n_in; k++)
        if (!in[k])
            return false;
    if (dnnl_form(bi, in, &y->desc))
        return true;
    float expo;
    if (g_bin[bi].op == CPU_EW_POW && in[0]->dtype == IB_DTYPE_FLOAT32 &&
        y->desc.dtype == IB_DTYPE_FLOAT32 && ib_tensor_desc_equal(in[0], &y->desc) &&
        cpu_const_scalar(g, n, 1, &expo))
        return true;
    enum cpu_ew_op op = g_bin[bi].op;
    enum ib_dtype dt = op == CPU_EW_WHERE ? in[1]->dtype : in[0]->dtype;
    if (op == CPU_EW_WHERE && (in[0]->dtype != IB_DTYPE_BOOL || in[2]->dtype != dt))
        return false;
    if (op != CPU_EW_WHERE && op != CPU_EW_CAST && g_bin[bi].n_in == 2 && in[1]->dtype != dt)
        return false;
    if (op == CPU_EW_CAST && ib_node_attr_int(n, "to", 0) != (int64_t)y->desc.dtype)
        return false;
    cpu_bcast b;
    return cpu_ew_supported(op, dt, y->desc.dtype) &&
           cpu_bcast_init(&b, in, g_bin[bi].n_in, &y->desc);
}

static int own_compile(cpu_exec *e, const ib_node *n, int bi, ib_err *err)
{
    cpu_ew_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    cpu_val *y = cpu_out(e, n, 0);
    const ib_tensor_desc *descs[CPU_BCAST_MAX_IN];
    k->op = g_bin[bi].op;
    k->n_in = g_bin[bi].n_in;
    k->odt = y->desc.dtype;
    k->alpha = ib_node_attr_float(n, "alpha", 0.2f);
    k->beta = ib_node_attr_float(n, "beta", 0.5f);
    int rc = IB_OK;
    for (int i = 0; i < k->n_in && !rc; i++) {
        cpu_val *v = cpu_in(e, n, (uint32_t)i);
        descs[i] = &v->desc;
        rc = cpu_use_plain(e, v, dnnl_data_type_undef, &k->in[i], err);
    }
    k->dt = k->op == CPU_EW_WHERE ? descs[1]->dtype : descs[0]->dtype;
    if (!rc && !cpu_bcast_init(&k->b, descs, k->n_in, &y->desc))
        rc = cpu_fail(e, err, IB_EFORMAT, "shapes do not broadcast");
    if (!rc)
        rc = cpu_def_plain(e, y, &k->out, err);
    if (rc) {
        ib_free(k);
        return rc;
    }
    return cpu_add_kernel(e, cpu_ew_run, k, err);
}

/* The oneDNN binary primitive, src0 at full shape (see the header). */
static int dnnl_compile(cpu_exec *e, const ib_node *n, int bi, bool swap, ib_err *err)
{
    cpu_val *a = cpu_in(e, n, swap), *b = cpu_in(e, n, !swap), *y = cpu_out(e, n, 0);
    dnnl_data_type_t dt = cpu_keep_dt(a);
    dnnl_memory_desc_t m0 = a->md, m1, bplain;
    bool full = same_dims(&b->desc, &y->desc);
    if (a->cdata || (m0.data_type != dnnl_f32 && m0.data_type != dnnl_bf16))
        if (cpu_md_plain(&m0, a->desc.ndim, a->desc.dims, dt))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    int64_t bd[IB_MAX_DIMS];
    for (int i = 0; i < y->desc.ndim; i++) {
        int j = i - (y->desc.ndim - b->desc.ndim);
        bd[i] = j < 0 ? 1 : b->desc.dims[j];
    }
    if (cpu_md_plain(&bplain, y->desc.ndim, bd, m0.data_type))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    dnnl_primitive_attr_t attr = NULL;
    int rc;
    if (swap && g_bin[bi].op == CPU_EW_SUB) { /* a - b = -(b - a) */
        dnnl_post_ops_t po;
        if ((rc = cpu_attr(e, &attr, err)))
            return rc;
        dnnl_post_ops_create(&po);
        dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, -1.0f, 0.0f);
        dnnl_primitive_attr_set_post_ops(attr, po);
        dnnl_post_ops_destroy(po);
    }
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = dnnl_unimplemented;
    for (int attempt = 0; attempt < 2 && st != dnnl_success; attempt++) {
        if (attempt == 1) { /* blocked src0 with a broadcast src1: retry plain */
            if (cpu_md_is_plain(&m0))
                break;
            cpu_md_plain(&m0, a->desc.ndim, a->desc.dims, m0.data_type);
        }
        m1 = full ? m0 : bplain;
        dnnl_binary_desc_t bdsc;
        st = dnnl_binary_desc_init(&bdsc, g_bin[bi].alg, &m0, &m1, &m0);
        if (!st)
            st = cpu_pd_create(e, &pd, &bdsc, attr);
    }
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if ((rc = cpu_check(e, err, st, "binary")))
        return rc;
    dnnl_memory_t ms0, ms1, md;
    if ((rc = cpu_use(e, a, &m0, 1.0f, &ms0, err)))
        goto fail;
    if (full) {
        rc = cpu_use(e, b, &m1, 1.0f, &ms1, err);
    } else {
        const void *p;
        rc = cpu_use_plain(e, b, m0.data_type, &p, err);
        if (!rc)
            rc = cpu_mem(e, &m1, (void *)(uintptr_t)p, &ms1, err);
    }
    if (rc || (rc = cpu_def(e, y, &m0, &md, err)))
        goto fail;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, ms0}, {DNNL_ARG_SRC_1, ms1}, {DNNL_ARG_DST, md}};
    return cpu_add_prim(e, pd, args, 3, err);
fail:
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

static int ew_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    int bi = bin_index(n);
    if (bi < 0)
        return cpu_fail(e, err, IB_EUNSUPPORTED, "unknown op");
    const ib_tensor_desc *in[2] = {NULL, NULL};
    for (uint32_t i = 0; i < 2 && i < n->n_inputs; i++)
        in[i] = cpu_in(e, n, i) ? &cpu_in(e, n, i)->desc : NULL;
    float expo;
    if (g_bin[bi].op == CPU_EW_POW && cpu_in(e, n, 0)->desc.dtype == IB_DTYPE_FLOAT32 &&
        cpu_const_scalar(e->graph, n, 1, &expo))
        return cpu_eltwise_build(e, cpu_in(e, n, 0), cpu_out(e, n, 0), dnnl_eltwise_pow, 1.0f,
                                 expo, err);
    int form = g_bin[bi].n_in == 2 ? dnnl_form(bi, in, &cpu_out(e, n, 0)->desc) : 0;
    if (form)
        return dnnl_compile(e, n, bi, form == 2, err);
    return own_compile(e, n, bi, err);
}

/* ---- Concat --------------------------------------------------------------- */

static int64_t concat_axis(const ib_node *n, int ndim)
{
    int64_t ax = ib_node_attr_int(n, "axis", 0);
    return ax < 0 ? ax + ndim : ax;
}

static bool concat_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const ib_value *y = ib_node_output(g, n, 0);
    if (!y || n->n_inputs < 1 || y->desc.ndim < 1 || y->desc.dtype != IB_DTYPE_FLOAT32)
        return false;
    int64_t ax = concat_axis(n, y->desc.ndim), sum = 0;
    if (ax < 0 || ax >= y->desc.ndim)
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        if (!in[i] || in[i]->dtype != y->desc.dtype || in[i]->ndim != y->desc.ndim)
            return false;
        for (int d = 0; d < y->desc.ndim; d++)
            if (d != ax && in[i]->dims[d] != y->desc.dims[d])
                return false;
        sum += in[i]->dims[ax];
    }
    return sum == y->desc.dims[ax];
}

static int concat_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *y = cpu_out(e, n, 0);
    int ax = (int)concat_axis(n, y->desc.ndim), rc;
    dnnl_data_type_t dt = dnnl_bf16; /* bf16 only when every piece already is */
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (cpu_keep_dt(cpu_in(e, n, i)) != dnnl_bf16)
            dt = dnnl_f32;
    dnnl_memory_desc_t mds[64], ymd;
    cpu_val *srcs[64];
    int ns = 0;
    bool same_fmt = true;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        cpu_val *v = cpu_in(e, n, i);
        if (v->desc.dims[ax] == 0) /* empty pieces contribute nothing */
            continue;
        if (ns == (int)IB_ARRAY_LEN(mds))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "more than 64 inputs");
        srcs[ns] = v;
        mds[ns] = v->md;
        if (v->cdata || v->md.data_type != dt)
            same_fmt = false;
        else if (ns > 0 && (v->md.format_kind != mds[0].format_kind ||
                            v->md.format_desc.blocking.inner_nblks !=
                                mds[0].format_desc.blocking.inner_nblks))
            same_fmt = false;
        ns++;
    }
    if (ns == 0)
        return cpu_fail(e, err, IB_EUNSUPPORTED, "all inputs empty");
    /* mixed layouts: channels-last when a piece already is (a convolution's output, like
     * 3D U-Net's skip, which the next convolution reads channels-last too), else plain */
    dnnl_format_tag_t tag = dnnl_format_tag_undef;
    for (int i = 0; i < ns && !same_fmt && tag == dnnl_format_tag_undef; i++)
        if (cpu_md_channels_last(&srcs[i]->md, srcs[i]->desc.ndim, srcs[i]->desc.dims))
            tag = cpu_channels_last_tag(y->desc.ndim);
    for (int i = 0; i < ns && !same_fmt; i++)
        if (tag != dnnl_format_tag_undef
                ? cpu_md_tag(&mds[i], srcs[i]->desc.ndim, srcs[i]->desc.dims, dt, tag) != IB_OK
                : cpu_md_plain(&mds[i], srcs[i]->desc.ndim, srcs[i]->desc.dims, dt) != IB_OK)
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the inputs");
    if (tag != dnnl_format_tag_undef ? cpu_md_tag(&ymd, y->desc.ndim, y->desc.dims, dt, tag) != IB_OK
                                     : cpu_md_any(&ymd, y->desc.ndim, y->desc.dims, dt) != IB_OK)
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the output");
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    if ((rc = cpu_attr(e, &attr, err)))
        return rc;
    dnnl_status_t st = dnnl_concat_primitive_desc_create(&pd, &ymd, ns, ax, mds, attr, e->ctx->eng);
    dnnl_primitive_attr_destroy(attr);
    if ((rc = cpu_check(e, err, st, "concat")))
        return rc;
    ymd = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_exec_arg_t args[66];
    int na = 0;
    for (int i = 0; i < ns; i++) {
        dnnl_memory_t m;
        if ((rc = cpu_use(e, srcs[i], &mds[i], 1.0f, &m, err))) {
            dnnl_primitive_desc_destroy(pd);
            return rc;
        }
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + i, m};
    }
    dnnl_memory_t md;
    if ((rc = cpu_def(e, y, &ymd, &md, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, md};
    return cpu_add_prim(e, pd, args, na, err);
}

const cpu_op cpu_ops_binary[] = {
    {"", "Add", ew_supports, ew_compile},
    {"", "Sub", ew_supports, ew_compile},
    {"", "Mul", ew_supports, ew_compile},
    {"", "Div", ew_supports, ew_compile},
    {"", "Max", ew_supports, ew_compile},
    {"", "Min", ew_supports, ew_compile},
    {"", "Pow", ew_supports, ew_compile},
    {"", "Mod", ew_supports, ew_compile},
    {"", "Equal", ew_supports, ew_compile},
    {"", "Less", ew_supports, ew_compile},
    {"", "Greater", ew_supports, ew_compile},
    {"", "LessOrEqual", ew_supports, ew_compile},
    {"", "GreaterOrEqual", ew_supports, ew_compile},
    {"", "And", ew_supports, ew_compile},
    {"", "Or", ew_supports, ew_compile},
    {"", "Xor", ew_supports, ew_compile},
    {"", "Where", ew_supports, ew_compile},
    {"", "Not", ew_supports, ew_compile},
    {"", "Erf", ew_supports, ew_compile},
    {"", "Floor", ew_supports, ew_compile},
    {"", "Ceil", ew_supports, ew_compile},
    {"", "Sign", ew_supports, ew_compile},
    {"", "HardSigmoid", ew_supports, ew_compile},
    {"", "Cast", ew_supports, ew_compile},
    {"", "Concat", concat_supports, concat_compile},
    {NULL, NULL, NULL, NULL},
};
