/*
 * cuda_ops_ew.c - elementwise and row ops on our kernels (kernels/ib_kernels.cu):
 * unary activations (Relu ... Gelu, Clip, Pow with a constant scalar
 * exponent), numpy-broadcast binary ops, Softmax/LogSoftmax and LayerNorm.
 * float32 only; they run in fp32 at every precision the backend takes.
 */
#include <math.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"

/* ---- unary ---------------------------------------------------------------- */

typedef struct un_k {
    int op;
    float a, b;
    const float *x;
    float *y;
    int64_t n;
} un_k;

static int run_unary(cu_exec *e, void *k, ib_err *err)
{
    un_k *u = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_unary(e->ctx->stream, u->op, u->x, u->y, u->n, u->a, u->b),
                       "unary kernel");
}

static const struct {
    const char *domain, *op;
    int kop;
} g_unary[] = {
    {"", "Relu", IBK_RELU},          {"", "LeakyRelu", IBK_LEAKY_RELU},
    {"", "Sigmoid", IBK_SIGMOID},    {"", "Tanh", IBK_TANH},
    {"", "Exp", IBK_EXP},            {"", "Log", IBK_LOG},
    {"", "Sqrt", IBK_SQRT},          {"", "Abs", IBK_ABS},
    {"", "Neg", IBK_NEG},            {"", "Reciprocal", IBK_RECIP},
    {"", "Erf", IBK_ERF},            {"inferbench", "Gelu", IBK_GELU_ERF},
    {"", "Clip", IBK_CLIP},          {"", "Identity", IBK_COPY},
    {"", "Dropout", IBK_COPY},       {"", "Floor", IBK_FLOOR},
    {"", "Ceil", IBK_CEIL},          {"", "Elu", IBK_ELU},
    {"", "Softplus", IBK_SOFTPLUS},  {"", "HardSigmoid", IBK_HARD_SIGMOID},
    {"", "HardSwish", IBK_HARD_SWISH}, {"", "Pow", IBK_POW_SCALAR},
};

static int unary_kop(const ib_node *n)
{
    bool ib = strcmp(n->domain, "inferbench") == 0;
    for (size_t i = 0; i < IB_ARRAY_LEN(g_unary); i++)
        if (strcmp(g_unary[i].op, n->op_type) == 0 && (g_unary[i].domain[0] != 0) == ib)
            return g_unary[i].kop;
    return -1;
}

/* A constant float scalar input i (Clip min/max, Pow exponent). */
static bool const_scalar(const ib_graph *g, const ib_node *n, uint32_t i, float *out)
{
    if (!cu_is_const(g, n, i))
        return false;
    const ib_tensor *t = ib_node_input(g, n, i)->constant;
    if (ib_tensor_desc_numel(&t->desc) != 1 || t->desc.dtype != IB_DTYPE_FLOAT32)
        return false;
    memcpy(out, t->data, sizeof *out);
    return true;
}

/* The kernel op and its parameters; false when this node's form is not taken. */
static bool unary_params(const ib_graph *g, const ib_node *n, int *kop, float *a, float *b)
{
    *kop = unary_kop(n);
    *a = 0.f;
    *b = 0.f;
    switch (*kop) {
    case -1: return false;
    case IBK_LEAKY_RELU: *a = ib_node_attr_float(n, "alpha", 0.01f); break;
    case IBK_ELU: *a = ib_node_attr_float(n, "alpha", 1.0f); break;
    case IBK_HARD_SIGMOID:
        *a = ib_node_attr_float(n, "alpha", 0.2f);
        *b = ib_node_attr_float(n, "beta", 0.5f);
        break;
    case IBK_GELU_ERF:
        if (strcmp(ib_node_attr_string(n, "approximate", "none"), "tanh") == 0)
            *kop = IBK_GELU_TANH;
        break;
    case IBK_CLIP:
        *a = -INFINITY;
        *b = INFINITY;
        if (n->opset < 11) {
            *a = ib_node_attr_float(n, "min", -INFINITY);
            *b = ib_node_attr_float(n, "max", INFINITY);
        } else {
            if (n->n_inputs > 1 && n->inputs[1] != IB_VALUE_NONE && !const_scalar(g, n, 1, a))
                return false;
            if (n->n_inputs > 2 && n->inputs[2] != IB_VALUE_NONE && !const_scalar(g, n, 2, b))
                return false;
        }
        break;
    case IBK_POW_SCALAR:
        if (!const_scalar(g, n, 1, a))
            return false;
        break;
    case IBK_COPY: /* Dropout: inference only, no mask output */
        if (n->n_outputs > 1 && n->outputs[1] != IB_VALUE_NONE)
            return false;
        break;
    default: break;
    }
    return true;
}

static bool sup_unary(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                      const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int kop;
    float a, b;
    if (!in[0] || !unary_params(g, n, &kop, &a, &b))
        return false;
    if (kop == IBK_COPY) /* Identity/Dropout move any dtype */
        return true;
    return in[0]->dtype == IB_DTYPE_FLOAT32 && cu_out_desc(g, n, 0)->dtype == IB_DTYPE_FLOAT32;
}

typedef struct copy_k {
    const void *x;
    void *y;
    size_t n;
} copy_k;

static int run_copy(cu_exec *e, void *k, ib_err *err)
{
    copy_k *c = k;
    if (c->x == c->y || !c->n)
        return IB_OK;
    return cu_check_rt(e, err,
                       cudaMemcpyAsync(c->y, c->x, c->n, cudaMemcpyDeviceToDevice, e->ctx->stream),
                       "cudaMemcpyAsync");
}

/* y = x as bytes (the reshape family shares it, cuda_ops_shape.c). */
int cu_compile_copy(cu_exec *e, const ib_node *n, ib_err *err);
int cu_compile_copy(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    copy_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    k->x = x->dev;
    k->y = y->dev;
    k->n = ib_tensor_desc_nbytes(&y->desc);
    return cu_add_step(e, run_copy, k, NULL, err);
}

static int comp_unary(cu_exec *e, const ib_node *n, ib_err *err)
{
    int kop;
    float a, b;
    if (!unary_params(e->graph, n, &kop, &a, &b))
        return cu_fail(e, err, IB_EUNSUPPORTED, "unsupported form");
    if (kop == IBK_COPY)
        return cu_compile_copy(e, n, err);
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    un_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    *k = (un_k){.op = kop, .a = a, .b = b, .x = x->dev, .y = y->dev,
                .n = ib_tensor_desc_numel(&y->desc)};
    return cu_add_step(e, run_unary, k, NULL, err);
}

/* ---- binary ---------------------------------------------------------------- */

typedef struct bin_k {
    int op;
    const float *a, *b;
    float *y;
    ibk_view v;
} bin_k;

static int run_binary(cu_exec *e, void *k, ib_err *err)
{
    bin_k *b = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_binary(e->ctx->stream, b->op, b->a, b->b, b->y, &b->v),
                       "binary kernel");
}

static int binary_kop(const ib_node *n)
{
    static const char *const names[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        return -1;
    for (int i = 0; i < (int)IB_ARRAY_LEN(names); i++)
        if (strcmp(names[i], n->op_type) == 0)
            return i; /* same order as enum ibk_binary_op */
    return -1;
}

/* Broadcast strides of `in` against the output dims (numpy rules). */

void cu_bcast_view(const ib_tensor_desc *a, const ib_tensor_desc *b, const ib_tensor_desc *out,
                   ibk_view *v)
{
    memset(v, 0, sizeof *v);
    v->ndim = out->ndim;
    for (int32_t d = 0; d < out->ndim; d++)
        v->dims[d] = out->dims[d];
    ib_tensor_desc_bcast_strides(a, out->ndim, v->sa);
    if (b)
        ib_tensor_desc_bcast_strides(b, out->ndim, v->sb);
    if (v->ndim == 0) { /* scalars: one element */
        v->ndim = 1;
        v->dims[0] = 1;
    }
}

static bool sup_binary(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                       const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int op = binary_kop(n);
    if (op < 0 || n->n_inputs != 2 || !in[0] || !in[1] || !cu_all_f32(n, in))
        return false;
    const ib_tensor_desc *o = cu_out_desc(g, n, 0);
    return o->dtype == IB_DTYPE_FLOAT32 && o->ndim <= IBK_MAX_DIMS;
}

static int comp_binary(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *a = cu_in(e, n, 0), *b = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    if (a->h16 || b->h16 || y->h16) /* a 16-bit chain's Add (cuda_half.c) */
        return cu_add_add16(e, n, err);
    bin_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    k->op = binary_kop(n);
    k->a = a->dev;
    k->b = b->dev;
    k->y = y->dev;
    cu_bcast_view(&a->desc, &b->desc, &y->desc, &k->v);
    return cu_add_step(e, run_binary, k, NULL, err);
}

/* ---- softmax ---------------------------------------------------------------- */

typedef struct sm_k {
    const float *x;
    float *y;
    int64_t rows, cols;
    int logsm;
} sm_k;

static int run_softmax(cu_exec *e, void *k, ib_err *err)
{
    sm_k *s = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_softmax(e->ctx->stream, s->x, s->y, s->rows, s->cols, 1.f,
                                                NULL, NULL, 0, s->logsm),
                       "softmax kernel");
}

/* rows x cols of the softmax, or false when the axis is not the last one
 * (opset >= 13) / not reducible to a row layout. */
static bool softmax_shape(const ib_node *n, const ib_tensor_desc *x, int64_t *rows, int64_t *cols)
{
    int64_t r = x->ndim;
    int64_t axis = ib_node_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);
    if (axis < 0)
        axis += r;
    if (r == 0 || axis < 0 || axis >= r)
        return false;
    if (n->opset >= 13 && axis != r - 1)
        return false;
    *rows = 1;
    *cols = 1;
    for (int64_t d = 0; d < r; d++)
        *(d < axis ? rows : cols) *= x->dims[d];
    return *cols > 0;
}

static bool sup_softmax(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    int64_t r, k;
    return in[0] && cu_all_f32(n, in) && softmax_shape(n, in[0], &r, &k) && r <= 0x7fffffffLL;
}

static int comp_softmax(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *y = cu_out(e, n, 0);
    sm_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    softmax_shape(n, &x->desc, &k->rows, &k->cols);
    k->x = x->dev;
    k->y = y->dev;
    k->logsm = strcmp(n->op_type, "LogSoftmax") == 0;
    return cu_add_step(e, run_softmax, k, NULL, err);
}

/* ---- LayerNorm ---------------------------------------------------------------- */

typedef struct ln_k {
    const float *x, *g, *b;
    float *y;
    int64_t rows, cols;
    float eps;
} ln_k;

static int run_ln(cu_exec *e, void *k, ib_err *err)
{
    ln_k *l = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_layernorm(e->ctx->stream, l->x, l->g, l->b, l->y, l->rows,
                                                  l->cols, l->eps),
                       "layernorm kernel");
}

static bool sup_ln(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                   const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (!in[0] || !in[1] || !cu_all_f32(n, in) || in[0]->ndim < 1)
        return false;
    for (uint32_t i = 1; i < n->n_outputs; i++) /* Mean / InvStdDev outputs */
        if (n->outputs[i] != IB_VALUE_NONE)
            return false;
    int64_t axis = ib_node_attr_int(n, "axis", -1);
    if (axis != -1 && axis != in[0]->ndim - 1)
        return false;
    int64_t cols = in[0]->dims[in[0]->ndim - 1];
    IB_UNUSED(g);
    if (ib_tensor_desc_numel(in[1]) != cols)
        return false;
    return n->n_inputs < 3 || !in[2] || ib_tensor_desc_numel(in[2]) == cols;
}

static int comp_ln(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *s = cu_in(e, n, 1), *b = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    if (x->h16 || y->h16) /* a 16-bit chain's (cuda_half.c) */
        return cu_add_ln16(e, n, err);
    ln_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    k->cols = x->desc.dims[x->desc.ndim - 1];
    k->rows = k->cols ? ib_tensor_desc_numel(&x->desc) / k->cols : 0;
    k->x = x->dev;
    k->g = s->dev;
    k->b = b ? b->dev : NULL;
    k->y = y->dev;
    k->eps = ib_node_attr_float(n, "epsilon", 1e-5f);
    return cu_add_step(e, run_ln, k, NULL, err);
}

/* ---- InstanceNormalization, inferbench.InstanceNorm (+ Relu / LeakyRelu) ----------- */

typedef struct in_k {
    const float *x, *scale, *bias;
    float *y;
    double *stats; /* 2 x planes, private block */
    int64_t planes, C, S;
    float eps, alpha;
    int act;
} in_k;

static int run_inorm(cu_exec *e, void *k, ib_err *err)
{
    in_k *q = k;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_instance_norm(e->ctx->stream, q->x, q->scale, q->bias, q->y,
                                                      q->stats, q->planes, q->C, q->S, q->eps,
                                                      q->act, q->alpha),
                       "instance norm kernel");
}

/* The fused op's activation as an ibk_unary_op (cu_fused_act) and its slope; -1 for one the
 * kernel lacks (it takes none, Relu and LeakyRelu, not Clip). */
static int inorm_act(const ib_node *n, float *alpha)
{
    int act;
    float b;
    if (!cu_fused_act(n, &act, alpha, &b) || act == IBK_CLIP)
        return -1;
    return act;
}

static bool sup_inorm(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                      const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    float alpha;
    if (n->n_inputs != 3 || !in[0] || !in[1] || !in[2] || !cu_all_f32(n, in) || in[0]->ndim < 3 ||
        inorm_act(n, &alpha) < 0)
        return false;
    int64_t C = in[0]->dims[1];
    return ib_tensor_desc_numel(in[1]) == C && ib_tensor_desc_numel(in[2]) == C &&
           in[0]->dims[0] * C <= 0x7fffffffLL;
}

static int comp_inorm(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *x = cu_in(e, n, 0), *sc = cu_in(e, n, 1), *b = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    in_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    k->C = x->desc.dims[1];
    k->planes = x->desc.dims[0] * k->C;
    k->S = k->planes ? ib_tensor_desc_numel(&x->desc) / k->planes : 0;
    k->x = x->dev;
    k->scale = sc->dev;
    k->bias = b->dev;
    k->y = y->dev;
    k->eps = ib_node_attr_float(n, "epsilon", 1e-5f);
    k->act = inorm_act(n, &k->alpha);
    void *stats = NULL;
    int rc = cu_alloc(e, (size_t)(k->planes > 0 ? k->planes : 1) * 2 * sizeof(double), &stats, err);
    if (rc) {
        ib_free(k);
        return rc;
    }
    k->stats = stats;
    return cu_add_step(e, run_inorm, k, NULL, err);
}

const cu_op cu_ops_ew[] = {
    {"", "Relu", sup_unary, comp_unary},
    {"", "LeakyRelu", sup_unary, comp_unary},
    {"", "Sigmoid", sup_unary, comp_unary},
    {"", "Tanh", sup_unary, comp_unary},
    {"", "Exp", sup_unary, comp_unary},
    {"", "Log", sup_unary, comp_unary},
    {"", "Sqrt", sup_unary, comp_unary},
    {"", "Abs", sup_unary, comp_unary},
    {"", "Neg", sup_unary, comp_unary},
    {"", "Reciprocal", sup_unary, comp_unary},
    {"", "Erf", sup_unary, comp_unary},
    {"inferbench", "Gelu", sup_unary, comp_unary},
    {"", "Clip", sup_unary, comp_unary},
    {"", "Identity", sup_unary, comp_unary},
    {"", "Dropout", sup_unary, comp_unary},
    {"", "Floor", sup_unary, comp_unary},
    {"", "Ceil", sup_unary, comp_unary},
    {"", "Elu", sup_unary, comp_unary},
    {"", "Softplus", sup_unary, comp_unary},
    {"", "HardSigmoid", sup_unary, comp_unary},
    {"", "HardSwish", sup_unary, comp_unary},
    {"", "Pow", sup_unary, comp_unary}, /* constant scalar exponent only */
    {"", "Add", sup_binary, comp_binary},
    {"", "Sub", sup_binary, comp_binary},
    {"", "Mul", sup_binary, comp_binary},
    {"", "Div", sup_binary, comp_binary},
    {"", "Max", sup_binary, comp_binary},
    {"", "Min", sup_binary, comp_binary},
    {"", "Softmax", sup_softmax, comp_softmax},
    {"", "LogSoftmax", sup_softmax, comp_softmax},
    {"", "LayerNormalization", sup_ln, comp_ln},
    {"inferbench", "LayerNorm", sup_ln, comp_ln},
    {"", "InstanceNormalization", sup_inorm, comp_inorm},
    {"inferbench", "InstanceNorm", sup_inorm, comp_inorm},
    {NULL, NULL, NULL, NULL},
};
