/*
 * dnnl_eltwise.c - unary elementwise ops on the oneDNN eltwise primitive
 * (Relu, LeakyRelu, Elu, Sigmoid, Tanh, Exp, Log, Sqrt, Abs, Neg,
 * Reciprocal, Softplus, HardSwish, Round, Clip, Gelu, inferbench.Gelu,
 * Pow with a constant scalar exponent, Identity, Dropout in inference) and
 * Softmax / LogSoftmax (opset < 13: over the flattened trailing dims).
 *
 * Eltwise keeps its input's layout and type (blocked bf16 stays blocked
 * bf16) and works in place when the session shares input and output
 * storage. Softmax runs on a plain view.
 */
#include <float.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/cpu_post.h"

static bool same_shape_f32(const ib_graph *g, const ib_node *n, const ib_tensor_desc *const *in)
{
    const ib_value *y = ib_node_output(g, n, 0);
    for (uint32_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] != IB_VALUE_NONE) /* Dropout's mask */
            return false;
    return in[0] && in[0]->dtype == IB_DTYPE_FLOAT32 && y && ib_tensor_desc_equal(&y->desc, in[0]);
}

/* A constant scalar input as float (any numeric dtype). */
bool cpu_const_scalar(const ib_graph *g, const ib_node *n, uint32_t i, float *out)
{
    const ib_tensor *t = cpu_const_of(g, n, i);
    if (!t || ib_tensor_desc_numel(&t->desc) != 1)
        return false;
    switch (t->desc.dtype) {
    case IB_DTYPE_FLOAT32: *out = *(const float *)t->data; return true;
    case IB_DTYPE_INT32: *out = (float)*(const int32_t *)t->data; return true;
    case IB_DTYPE_INT64: *out = (float)*(const int64_t *)t->data; return true;
    case IB_DTYPE_FLOAT64: *out = (float)*(const double *)t->data; return true;
    default: return false;
    }
}

/* The oneDNN algorithm and parameters of a unary node; false when none. */
static bool eltwise_of(const ib_graph *g, const ib_node *n, dnnl_alg_kind_t *alg, float *a,
                       float *b)
{
    const char *op = n->op_type;
    if (strcmp(op, "LeakyRelu") == 0)
        return cpu_act_lookup(op, ib_node_attr_float(n, "alpha", 0.01f), 0, alg, a, b);
    if (strcmp(op, "Elu") == 0)
        return cpu_act_lookup(op, ib_node_attr_float(n, "alpha", 1.0f), 0, alg, a, b);
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Dropout") == 0) {
        if (strcmp(op, "Dropout") == 0 && n->n_inputs > 2 && n->inputs[2] != IB_VALUE_NONE) {
            float training;
            if (!cpu_const_scalar(g, n, 2, &training) || training != 0)
                return false;
        }
        return cpu_act_lookup("Identity", 0, 0, alg, a, b);
    }
    if (strcmp(op, "Clip") == 0) {
        float lo = -FLT_MAX, hi = FLT_MAX;
        if (n->opset < 11) {
            lo = ib_node_attr_float(n, "min", lo);
            hi = ib_node_attr_float(n, "max", hi);
        } else {
            if (n->n_inputs > 1 && n->inputs[1] != IB_VALUE_NONE && !cpu_const_scalar(g, n, 1, &lo))
                return false;
            if (n->n_inputs > 2 && n->inputs[2] != IB_VALUE_NONE && !cpu_const_scalar(g, n, 2, &hi))
                return false;
        }
        return cpu_act_lookup("Clip", lo, hi, alg, a, b);
    }
    if (strcmp(op, "Gelu") == 0) {
        const char *ap = ib_node_attr_string(n, "approximate", "none");
        return cpu_act_lookup(strcmp(ap, "tanh") == 0 ? "GeluTanh" : "Gelu", 0, 0, alg, a, b) &&
               (strcmp(ap, "tanh") == 0 || strcmp(ap, "none") == 0);
    }
    if (strcmp(op, "Pow") == 0) {
        float p;
        if (!cpu_const_scalar(g, n, 1, &p))
            return false;
        *alg = dnnl_eltwise_pow;
        *a = 1.0f;
        *b = p;
        return true;
    }
    if (strcmp(op, "Relu") == 0 || strcmp(op, "Sigmoid") == 0 || strcmp(op, "Tanh") == 0 ||
        strcmp(op, "Exp") == 0 || strcmp(op, "Log") == 0 || strcmp(op, "Sqrt") == 0 ||
        strcmp(op, "Abs") == 0 || strcmp(op, "Neg") == 0 || strcmp(op, "Reciprocal") == 0 ||
        strcmp(op, "Softplus") == 0 || strcmp(op, "HardSwish") == 0 || strcmp(op, "Round") == 0)
        return cpu_act_lookup(op, 0, 0, alg, a, b);
    return false;
}

static bool eltwise_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                             const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    dnnl_alg_kind_t alg;
    float a, b;
    return n->n_inputs >= 1 && same_shape_f32(g, n, in) && eltwise_of(g, n, &alg, &a, &b);
}

int cpu_eltwise_build(cpu_exec *e, cpu_val *x, cpu_val *y, dnnl_alg_kind_t alg, float a, float b,
                      ib_err *err)
{
    dnnl_memory_desc_t smd = x->md;
    if (x->cdata || (smd.data_type != dnnl_f32 && smd.data_type != dnnl_bf16))
        if (cpu_md_plain(&smd, x->desc.ndim, x->desc.dims, cpu_keep_dt(x)))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    dnnl_eltwise_desc_t ed;
    dnnl_primitive_desc_t pd;
    int rc;
    dnnl_status_t st = dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, alg, &smd, a, b);
    if (!st)
        st = cpu_pd_create(e, &pd, &ed, NULL);
    if ((rc = cpu_check(e, err, st, "eltwise")))
        return rc;
    dnnl_memory_t ms, md;
    if ((rc = cpu_use(e, x, &smd, 1.0f, &ms, err)) || (rc = cpu_def(e, y, &smd, &md, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_DST, md}};
    return cpu_add_prim(e, pd, args, 2, err);
}

static int eltwise_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    dnnl_alg_kind_t alg;
    float a, b;
    if (!eltwise_of(e->graph, n, &alg, &a, &b))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "unsupported parameters");
    return cpu_eltwise_build(e, cpu_in(e, n, 0), cpu_out(e, n, 0), alg, a, b, err);
}

/* Softmax axis and the dims it runs on (opset < 13 flattens to 2-D). */
static bool softmax_view(const ib_node *n, const ib_tensor_desc *x, int *nd, int64_t *dims,
                         int *axis)
{
    int64_t ax = ib_node_attr_int(n, "axis", n->opset < 13 ? 1 : -1);
    if (ax < 0)
        ax += x->ndim;
    if (x->ndim < 1 || ax < 0 || ax >= x->ndim)
        return false;
    if (n->opset >= 13) {
        *nd = x->ndim;
        memcpy(dims, x->dims, (size_t)x->ndim * sizeof *dims);
        *axis = (int)ax;
        return true;
    }
    dims[0] = dims[1] = 1;
    for (int i = 0; i < x->ndim; i++)
        dims[i >= ax] *= x->dims[i];
    *nd = 2;
    *axis = 1;
    return true;
}

static bool softmax_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                             const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int nd, axis;
    int64_t dims[IB_MAX_DIMS];
    return n->n_inputs == 1 && same_shape_f32(g, n, in) &&
           softmax_view(n, in[0], &nd, dims, &axis);
}

static int softmax_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    int nd, axis;
    int64_t dims[IB_MAX_DIMS];
    if (!softmax_view(n, &x->desc, &nd, dims, &axis))
        return cpu_fail(e, err, IB_EFORMAT, "bad axis");
    dnnl_data_type_t dt = cpu_keep_dt(x);
    dnnl_memory_desc_t vmd, yplain;
    if (cpu_md_plain(&vmd, nd, dims, dt) || cpu_md_plain(&yplain, y->desc.ndim, y->desc.dims, dt))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    dnnl_softmax_v2_desc_t sd;
    dnnl_primitive_desc_t pd;
    int rc;
    dnnl_alg_kind_t alg = strcmp(n->op_type, "LogSoftmax") == 0 ? dnnl_softmax_log
                                                                 : dnnl_softmax_accurate;
    dnnl_status_t st =
        dnnl_softmax_v2_forward_desc_init(&sd, dnnl_forward_inference, alg, &vmd, &vmd, axis);
    if (!st)
        st = cpu_pd_create(e, &pd, &sd, NULL);
    if ((rc = cpu_check(e, err, st, "softmax")))
        return rc;
    const void *xp;
    dnnl_memory_t ms, md;
    if ((rc = cpu_use_plain(e, x, dt, &xp, err)) || (rc = cpu_def(e, y, &yplain, NULL, err)) ||
        (rc = cpu_mem(e, &vmd, (void *)(uintptr_t)xp, &ms, err)) ||
        (rc = cpu_mem(e, &vmd, y->data, &md, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_DST, md}};
    return cpu_add_prim(e, pd, args, 2, err);
}

const cpu_op cpu_ops_eltwise[] = {
    {"", "Relu", eltwise_supports, eltwise_compile},
    {"", "LeakyRelu", eltwise_supports, eltwise_compile},
    {"", "Elu", eltwise_supports, eltwise_compile},
    {"", "Sigmoid", eltwise_supports, eltwise_compile},
    {"", "Tanh", eltwise_supports, eltwise_compile},
    {"", "Exp", eltwise_supports, eltwise_compile},
    {"", "Log", eltwise_supports, eltwise_compile},
    {"", "Sqrt", eltwise_supports, eltwise_compile},
    {"", "Abs", eltwise_supports, eltwise_compile},
    {"", "Neg", eltwise_supports, eltwise_compile},
    {"", "Reciprocal", eltwise_supports, eltwise_compile},
    {"", "Softplus", eltwise_supports, eltwise_compile},
    {"", "HardSwish", eltwise_supports, eltwise_compile},
    {"", "Round", eltwise_supports, eltwise_compile},
    {"", "Clip", eltwise_supports, eltwise_compile},
    {"", "Gelu", eltwise_supports, eltwise_compile},
    {"inferbench", "Gelu", eltwise_supports, eltwise_compile},
    {"", "Identity", eltwise_supports, eltwise_compile},
    {"", "Dropout", eltwise_supports, eltwise_compile},
    {"", "Softmax", softmax_supports, softmax_compile},
    {"", "LogSoftmax", softmax_supports, softmax_compile},
    {NULL, NULL, NULL, NULL},
};
