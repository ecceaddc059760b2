/*
 * test_runtime_helpers.c - graph construction, data, counting allocator
 * and the "testdev" backend shared by the runtime tests (see the header).
 * No TEST() here: this file only provides helpers.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/time.h"
#include "onnx/build.h"
#include "ir/op.h"
#include "ir/ref_exec.h"
#include "test.h"
#include "test_runtime_helpers.h"

ib_tensor_desc th_desc(enum ib_dtype t, int32_t ndim, ...)
{
    ib_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    va_list ap;
    va_start(ap, ndim);
    for (int32_t i = 0; i < ndim; i++)
        d.dims[i] = va_arg(ap, int64_t);
    va_end(ap);
    return d;
}

ib_value_id th_input(ib_graph *g, const char *name, ib_tensor_desc d)
{
    ib_value_id v = ib_graph_add_value(g, name, &d);
    if (v == IB_VALUE_NONE) ib_test_fail(__FILE__, __LINE__, "add_value %s", name);
    g->values.data[v].flags |= IB_VALUE_INPUT;
    if (IB_VEC_PUSH(&g->inputs, v)) ib_test_fail(__FILE__, __LINE__, "oom");
    return v;
}

ib_value_id th_value(ib_graph *g, const char *name)
{
    ib_value_id v = ib_graph_add_value(g, name, NULL);
    if (v == IB_VALUE_NONE) ib_test_fail(__FILE__, __LINE__, "add_value %s", name);
    return v;
}

uint64_t th_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

float th_randf(uint64_t *s)
{
    return (float)((double)(th_rand(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

void th_fill(float *x, size_t n, uint64_t *seed, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = scale * th_randf(seed);
}

ib_value_id th_const_f32(ib_graph *g, const char *name, ib_tensor_desc d, const float *data,
                         float scale, uint64_t *seed)
{
    ib_tensor *t;
    d.dtype = IB_DTYPE_FLOAT32;
    if (ib_tensor_alloc(&d, &t)) ib_test_fail(__FILE__, __LINE__, "tensor_alloc %s", name);
    size_t n = (size_t)ib_tensor_desc_numel(&d);
    if (data)
        memcpy(t->data, data, n * sizeof(float));
    else
        th_fill(t->data, n, seed, scale);
    ib_value_id v = ib_graph_add_value(g, name, &d);
    if (v == IB_VALUE_NONE || ib_graph_set_constant(g, v, t))
        ib_test_fail(__FILE__, __LINE__, "constant %s", name);
    return v;
}

ib_value_id th_const_scalar(ib_graph *g, const char *name, float v)
{
    ib_tensor_desc d = th_desc(IB_DTYPE_FLOAT32, 0);
    return th_const_f32(g, name, d, &v, 0, NULL);
}

ib_value_id th_const_i64(ib_graph *g, const char *name, int32_t n, const int64_t *vals)
{
    ib_tensor_desc d = th_desc(IB_DTYPE_INT64, 1, (int64_t)n);
    ib_tensor *t;
    if (ib_tensor_alloc(&d, &t)) ib_test_fail(__FILE__, __LINE__, "tensor_alloc %s", name);
    memcpy(t->data, vals, (size_t)n * sizeof(int64_t));
    ib_value_id v = ib_graph_add_value(g, name, &d);
    if (v == IB_VALUE_NONE || ib_graph_set_constant(g, v, t))
        ib_test_fail(__FILE__, __LINE__, "constant %s", name);
    return v;
}

ib_node_id th_node(ib_graph *g, const char *op, const char *name, const ib_value_id *in,
                   uint32_t n_in, const ib_value_id *out, uint32_t n_out, const ib_attr *attrs,
                   uint32_t n_attrs)
{
    ib_node_id id = ib_graph_add_node(g, op, "", name, in, n_in, out, n_out, attrs, n_attrs);
    if (id == IB_NODE_NONE) ib_test_fail(__FILE__, __LINE__, "add_node %s", name);
    return id;
}

ib_value_id th_unary(ib_graph *g, const char *op, ib_value_id x, const char *out)
{
    ib_value_id y = th_value(g, out);
    th_node(g, op, out, &x, 1, &y, 1, NULL, 0);
    return y;
}

ib_value_id th_binary(ib_graph *g, const char *op, ib_value_id a, ib_value_id b, const char *out)
{
    ib_value_id y = th_value(g, out);
    ib_value_id in[2] = {a, b};
    th_node(g, op, out, in, 2, &y, 1, NULL, 0);
    return y;
}

void th_output(ib_graph *g, ib_value_id v)
{
    g->values.data[v].flags |= IB_VALUE_OUTPUT;
    if (IB_VEC_PUSH(&g->outputs, v)) ib_test_fail(__FILE__, __LINE__, "oom");
}

ib_attr th_attr_i(const char *name, int64_t v)
{
    ib_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = IB_ATTR_INT;
    a.i = v;
    return a;
}

ib_attr th_attr_f(const char *name, float v)
{
    ib_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = IB_ATTR_FLOAT;
    a.f = v;
    return a;
}

ib_attr th_attr_s(const char *name, const char *v)
{
    ib_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = IB_ATTR_STRING;
    a.s = v;
    a.s_len = strlen(v);
    return a;
}

ib_attr th_attr_ints(const char *name, const int64_t *v, size_t n)
{
    ib_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = IB_ATTR_INTS;
    a.ints = v;
    a.count = n;
    return a;
}

double th_max_rel_err(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)b[i]));
        if (!(e <= m)) /* NaN counts as an error */
            m = isnan(e) ? (double)INFINITY : e;
    }
    return m;
}

int th_count_op(const ib_graph *g, const char *op)
{
    int n = 0;
    for (size_t i = 0; i < g->nodes.len; i++)
        n += !g->nodes.data[i].dead && strcmp(g->nodes.data[i].op_type, op) == 0;
    return n;
}

/* ---- counting allocator --------------------------------------------------------- */

static uint64_t g_allocs;
static bool g_counting;

static void *counting_alloc(void *user, void *ptr, size_t old_size, size_t new_size)
{
    IB_UNUSED(user);
    IB_UNUSED(old_size);
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    if (g_counting) __atomic_add_fetch(&g_allocs, 1, __ATOMIC_RELAXED);
    return realloc(ptr, new_size);
}

void th_count_allocs_begin(void)
{
    ib_alloc_set(counting_alloc, NULL);
    g_allocs = 0;
    g_counting = true;
}

uint64_t th_count_allocs_end(void)
{
    g_counting = false;
    ib_alloc_set(NULL, NULL);
    return g_allocs;
}

/* ---- failing allocator ------------------------------------------------------------ */

static int64_t g_budget = -1, g_live, g_snapshot;
static bool g_hit, g_installed;

/* A header before each block remembers that it was counted. */
#define TH_HDR 64
static void *failing_alloc(void *user, void *ptr, size_t old_size, size_t new_size)
{
    IB_UNUSED(user);
    IB_UNUSED(old_size);
    unsigned char *raw = ptr ? (unsigned char *)ptr - TH_HDR : NULL;
    if (new_size == 0) {
        if (raw) {
            __atomic_sub_fetch(&g_live, 1, __ATOMIC_RELAXED);
            free(raw);
        }
        return NULL;
    }
    if (g_budget >= 0 && __atomic_sub_fetch(&g_budget, 1, __ATOMIC_RELAXED) < 0) {
        g_hit = true;
        return NULL;
    }
    unsigned char *p = realloc(raw, new_size + TH_HDR);
    if (!p) return NULL;
    if (!raw) __atomic_add_fetch(&g_live, 1, __ATOMIC_RELAXED);
    return p + TH_HDR;
}

void th_fail_after_begin(int64_t n)
{
    if (!g_installed) { /* once, and before anything the test frees later */
        ib_alloc_set(failing_alloc, NULL);
        g_installed = true;
    }
    g_snapshot = g_live;
    g_hit = false;
    g_budget = n;
}

void th_fail_budget(int64_t n)
{
    g_hit = false;
    g_budget = n;
}

int64_t th_fail_after_end(void)
{
    g_budget = -1; /* stays installed: its blocks must be freed through it */
    return g_live - g_snapshot;
}

bool th_fail_after_hit(void)
{
    return g_hit;
}

/* ---- the testdev backend ---------------------------------------------------------- */

th_testdev_state th_testdev;

typedef struct td_buf {
    unsigned char *mem;
    size_t size;
} td_buf;

static int td_create(const ib_backend_config *cfg, void **ctx, ib_err *err)
{
    IB_UNUSED(err);
    th_testdev.cfg = *cfg;
    th_testdev.creates++;
    *ctx = &th_testdev;
    return IB_OK;
}

static void td_destroy(void *ctx)
{
    IB_UNUSED(ctx);
}

static bool td_supports(void *ctx, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(ctx);
    IB_UNUSED(g);
    IB_UNUSED(in);
    for (int i = 0; i < 8 && th_testdev.refuse[i]; i++)
        if (!strcmp(n->op_type, th_testdev.refuse[i])) return false;
    IB_UNUSED(p);
    return ib_op_find(n->domain, n->op_type, n->opset) != NULL;
}

static int td_alloc(void *ctx, size_t nbytes, void **impl, void **host, ib_err *err)
{
    IB_UNUSED(ctx);
    td_buf *b = calloc(1, sizeof *b);
    if (!b || !(b->mem = aligned_alloc(64, (nbytes + 63) & ~(size_t)63))) {
        free(b);
        return ib_err_set(err, IB_ENOMEM, "testdev: oom");
    }
    b->size = nbytes;
    *impl = b;
    *host = th_testdev.hide_host ? NULL : b->mem;
    return IB_OK;
}

static void td_free(void *ctx, void *impl)
{
    IB_UNUSED(ctx);
    td_buf *b = impl;
    if (b) free(b->mem);
    free(b);
}

static int td_set(void *ctx, void *impl, size_t off, const void *src, size_t n, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(err);
    th_testdev.sets++;
    if (th_testdev.set_sleep_ns > 0) ib_sleep_ns(th_testdev.set_sleep_ns);
    memcpy(((td_buf *)impl)->mem + off, src, n);
    return IB_OK;
}

static int td_get(void *ctx, void *impl, size_t off, void *dst, size_t n, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(err);
    th_testdev.gets++;
    if (th_testdev.get_sleep_ns > 0) ib_sleep_ns(th_testdev.get_sleep_ns);
    memcpy(dst, ((td_buf *)impl)->mem + off, n);
    return IB_OK;
}

static int td_compile(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(err);
    th_testdev.compiles++;
    for (uint32_t i = 0; i < sg->n_bindings; i++) {
        th_testdev.bindings_seen++;
        th_testdev.ranged_bindings += sg->bindings[i].range_max > sg->bindings[i].range_min;
    }
    *out = (ib_backend_exec *)(uintptr_t)sg; /* the wrapper keeps sg valid */
    return IB_OK;
}

static void td_graph_free(void *ctx, ib_backend_exec *e)
{
    IB_UNUSED(ctx);
    IB_UNUSED(e);
}

/* Interpret the subgraph with the reference kernels on our own memory. */
static int td_run(void *ctx, ib_backend_exec *e, const ib_backend_subgraph *sg, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(e);
    th_testdev.runs++;
    if (th_testdev.run_sleep_ns > 0) ib_sleep_ns(th_testdev.run_sleep_ns);
    ib_tensor tin[16], tout[8];
    const ib_tensor *pin[16];
    ib_tensor *pout[8];
    for (uint32_t k = 0; k < sg->n_nodes; k++) {
        const ib_node *n = &sg->graph->nodes.data[sg->nodes[k]];
        if (n->n_inputs > 16 || n->n_outputs > 8)
            return ib_err_set(err, IB_EUNSUPPORTED, "testdev: too many inputs");
        for (uint32_t t = 0; t < n->n_inputs + n->n_outputs; t++) {
            bool is_in = t < n->n_inputs;
            ib_value_id v = is_in ? n->inputs[t] : n->outputs[t - n->n_inputs];
            if (v == IB_VALUE_NONE) {
                if (is_in)
                    pin[t] = NULL;
                else
                    pout[t - n->n_inputs] = NULL;
                continue;
            }
            const ib_backend_binding *b = NULL;
            for (uint32_t j = 0; j < sg->n_bindings && !b; j++)
                if (sg->bindings[j].value == v) b = &sg->bindings[j];
            if (!b) return ib_err_set(err, IB_EINVAL, "testdev: value %d not bound", (int)v);
            ib_tensor *tt = is_in ? &tin[t] : &tout[t - n->n_inputs];
            tt->desc = b->desc;
            tt->nbytes = b->nbytes;
            tt->owns_data = false;
            tt->data =
                b->constant ? b->constant->data : ((td_buf *)b->buffer->impl)->mem + b->offset;
            if (is_in)
                pin[t] = tt;
            else
                pout[t - n->n_inputs] = tt;
        }
        int rc = ib_op_run_reference(sg->graph, n, pin, n->n_inputs, pout, n->n_outputs, err);
        if (rc) return rc;
    }
    return IB_OK;
}

const struct ib_backend_ops th_testdev_ops = {
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "testdev",
    .create = td_create,
    .destroy = td_destroy,
    .supports_op = td_supports,
    .buffer_alloc = td_alloc,
    .buffer_free = td_free,
    .tensor_set = td_set,
    .tensor_get = td_get,
    .graph_compile = td_compile,
    .graph_free = td_graph_free,
    .graph_run = td_run,
};

/* ---- reference runs and inputs ------------------------------------------------------- */

void th_ref_run(const ib_graph *g, ib_tensor *const *in, ib_tensor **out)
{
    ib_err err;
    int rc = ib_ref_exec_run(g, (const ib_tensor *const *)in, g->inputs.len, out, g->outputs.len,
                             NULL, &err);
    if (rc) ib_test_fail(__FILE__, __LINE__, "ib_ref_exec_run: %s", err.msg);
}

void th_random_inputs(const ib_graph *g, const ib_tensor_desc *shapes, uint64_t seed,
                      ib_tensor **in)
{
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_value *v = &g->values.data[g->inputs.data[i]];
        if (ib_tensor_alloc(&shapes[i], &in[i]))
            ib_test_fail(__FILE__, __LINE__, "alloc input %s", v->name);
        size_t n = (size_t)ib_tensor_desc_numel(&shapes[i]);
        if (shapes[i].dtype == IB_DTYPE_FLOAT32) {
            th_fill(in[i]->data, n, &seed, 1.0f);
        } else if (shapes[i].dtype == IB_DTYPE_INT64) {
            int64_t *p = in[i]->data;
            int64_t row = shapes[i].ndim ? shapes[i].dims[shapes[i].ndim - 1] : 1;
            for (size_t k = 0; k < n; k++)
                p[k] = strstr(v->name, "mask") ? ((int64_t)k % row < row - 1 || row == 1)
                                               : (int64_t)(th_rand(&seed) % 50);
        } else {
            ib_test_fail(__FILE__, __LINE__, "no random data for %s",
                         ib_dtype_name(shapes[i].dtype));
        }
    }
}

ib_graph *th_finish(struct ib_build *b)
{
    ib_graph *g = NULL;
    ib_err err;
    int rc = ib_build_finish(b, &g, &err);
    ib_build_destroy(b);
    if (rc) ib_test_fail(__FILE__, __LINE__, "ib_build_finish: %s", err.msg);
    return g;
}

/* ---- the tiny ResNet ------------------------------------------------------------------- */

static ib_value_id conv_bn(ib_build *b, ib_value_id x, int64_t cin, int64_t cout, int64_t k,
                           int64_t stride, int64_t pad, bool relu)
{
    ib_value_id y = ib_build_conv2d(b, x, cin, cout, k, stride, pad, 1, false);
    y = ib_build_batchnorm(b, y, cout, 1e-5);
    return relu ? IB_BUILD_OP(b, "Relu", "", y) : y;
}

ib_build *th_build_tiny_resnet(uint64_t seed)
{
    ib_build *b;
    if (ib_build_create(seed, 17, &b)) ib_test_fail(__FILE__, __LINE__, "ib_build_create");
    ib_value_id x = ib_build_input(b, "image", IB_DTYPE_FLOAT32, "batch,3,16,16");
    ib_value_id y = conv_bn(b, x, 3, 8, 3, 1, 1, true);
    y = IB_BUILD_OP(b, "MaxPool", "kernel_shape=[2,2] strides=[2,2]", y);
    /* basic block, identity shortcut */
    ib_value_id t = conv_bn(b, y, 8, 8, 3, 1, 1, true);
    t = conv_bn(b, t, 8, 8, 3, 1, 1, false);
    y = IB_BUILD_OP(b, "Relu", "", IB_BUILD_OP(b, "Add", "", t, y));
    /* basic block, strided projection shortcut */
    t = conv_bn(b, y, 8, 16, 3, 2, 1, true);
    t = conv_bn(b, t, 16, 16, 3, 1, 1, false);
    ib_value_id p = conv_bn(b, y, 8, 16, 1, 2, 0, false);
    y = IB_BUILD_OP(b, "Relu", "", IB_BUILD_OP(b, "Add", "", t, p));
    y = IB_BUILD_OP(b, "GlobalAveragePool", "", y);
    y = IB_BUILD_OP(b, "Flatten", "axis=1", y);
    ib_value_id w = ib_build_weight(b, "fc.weight", IB_DTYPE_FLOAT32, "10,16", ib_fill_xavier());
    ib_value_id c =
        ib_build_weight(b, "fc.bias", IB_DTYPE_FLOAT32, "10", ib_fill_uniform(-0.1, 0.1));
    y = IB_BUILD_OP(b, "Gemm", "transB=1", y, w, c);
    ib_build_output(b, y, "logits", IB_DTYPE_FLOAT32, "batch,10");
    return b;
}

/* ---- the tiny BERT encoder layer ----------------------------------------------------------- */

static ib_value_id scalar(ib_build *b, float v)
{
    return ib_build_floats(b, NULL, &v, 1, "");
}

static ib_value_id linear(ib_build *b, ib_value_id x, const char *name, int64_t in, int64_t out)
{
    char wn[96], bn[96], shape[64];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    snprintf(shape, sizeof shape, "%lld,%lld", (long long)in, (long long)out);
    ib_value_id w = ib_build_weight(b, wn, IB_DTYPE_FLOAT32, shape, ib_fill_xavier());
    snprintf(shape, sizeof shape, "%lld", (long long)out);
    ib_value_id c = ib_build_weight(b, bn, IB_DTYPE_FLOAT32, shape, ib_fill_uniform(-0.2, 0.2));
    return IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "MatMul", "", x, w), c);
}

/* ReduceMean-Sub-Pow-ReduceMean-Add-Sqrt-Div-Mul-Add, as exporters write it. */
static ib_value_id layernorm(ib_build *b, ib_value_id x, const char *name, int64_t c)
{
    char gn[96], bn[96], shape[32];
    snprintf(gn, sizeof gn, "%s.gamma", name);
    snprintf(bn, sizeof bn, "%s.beta", name);
    snprintf(shape, sizeof shape, "%lld", (long long)c);
    ib_value_id mean = IB_BUILD_OP(b, "ReduceMean", "axes=[-1]", x);
    ib_value_id d = IB_BUILD_OP(b, "Sub", "", x, mean);
    ib_value_id var =
        IB_BUILD_OP(b, "ReduceMean", "axes=[-1]", IB_BUILD_OP(b, "Pow", "", d, scalar(b, 2.0f)));
    ib_value_id sd = IB_BUILD_OP(b, "Sqrt", "", IB_BUILD_OP(b, "Add", "", var, scalar(b, 1e-12f)));
    ib_value_id n = IB_BUILD_OP(b, "Div", "", d, sd);
    n = IB_BUILD_OP(b, "Mul", "", n,
                    ib_build_weight(b, gn, IB_DTYPE_FLOAT32, shape, ib_fill_uniform(0.8, 1.2)));
    return IB_BUILD_OP(b, "Add", "", n,
                       ib_build_weight(b, bn, IB_DTYPE_FLOAT32, shape, ib_fill_uniform(-0.1, 0.1)));
}

/* x * (1 + erf(x / sqrt 2)) * 0.5 */
static ib_value_id gelu_erf(ib_build *b, ib_value_id x)
{
    ib_value_id e = IB_BUILD_OP(b, "Erf", "", IB_BUILD_OP(b, "Div", "", x, scalar(b, 1.4142135f)));
    ib_value_id a = IB_BUILD_OP(b, "Add", "", e, scalar(b, 1.0f));
    return IB_BUILD_OP(b, "Mul", "", IB_BUILD_OP(b, "Mul", "", x, a), scalar(b, 0.5f));
}

/* [b, s, rest...] from Shape(ref) as Concat(b, s, tail) (the exporters' way). */
static ib_value_id dyn_shape(ib_build *b, ib_value_id ref, const int64_t *tail, size_t n_tail)
{
    ib_value_id shp = IB_BUILD_OP(b, "Shape", "", ref);
    int64_t zero = 0, one = 1;
    ib_value_id ax = ib_build_ints(b, NULL, &zero, 1, NULL);
    ib_value_id bd = IB_BUILD_OP(b, "Gather", "axis=0", shp, ib_build_ints(b, NULL, &zero, 1, ""));
    ib_value_id sd = IB_BUILD_OP(b, "Gather", "axis=0", shp, ib_build_ints(b, NULL, &one, 1, ""));
    bd = IB_BUILD_OP(b, "Unsqueeze", "", bd, ax);
    sd = IB_BUILD_OP(b, "Unsqueeze", "", sd, ax);
    return IB_BUILD_OP(b, "Concat", "axis=0", bd, sd, ib_build_ints(b, NULL, tail, n_tail, NULL));
}

static ib_value_id heads(ib_build *b, ib_value_id x, ib_value_id ref, const char *perm)
{
    static const int64_t split[2] = {2, 8};
    ib_value_id r = IB_BUILD_OP(b, "Reshape", "", x, dyn_shape(b, ref, split, 2));
    return IB_BUILD_OP(b, "Transpose", perm, r);
}

ib_build *th_build_tiny_bert(uint64_t seed)
{
    ib_build *b;
    if (ib_build_create(seed, 17, &b)) ib_test_fail(__FILE__, __LINE__, "ib_build_create");
    ib_value_id ids = ib_build_input(b, "input_ids", IB_DTYPE_INT64, "batch,seq");
    ib_value_id mask = ib_build_input(b, "input_mask", IB_DTYPE_INT64, "batch,seq");
    ib_value_id emb =
        ib_build_weight(b, "word_embeddings", IB_DTYPE_FLOAT32, "50,16", ib_fill_normal(0, 0.5));
    ib_value_id e = IB_BUILD_OP(b, "Gather", "axis=0", emb, ids);
    e = IB_BUILD_OP(b, "Add", "", e,
                    ib_build_weight(b, "emb.bias", IB_DTYPE_FLOAT32, "16", ib_fill_normal(0, 0.1)));
    ib_value_id h = layernorm(b, e, "emb.ln", 16);
    ib_value_id q = heads(b, linear(b, h, "q", 16, 16), h, "perm=[0,2,1,3]");
    ib_value_id kt = heads(b, linear(b, h, "k", 16, 16), h, "perm=[0,2,3,1]");
    ib_value_id v = heads(b, linear(b, h, "v", 16, 16), h, "perm=[0,2,1,3]");
    ib_value_id s =
        IB_BUILD_OP(b, "Div", "", IB_BUILD_OP(b, "MatMul", "", q, kt), scalar(b, 2.8284271f));
    ib_value_id mf = IB_BUILD_OP(b, "Cast", "to=1", mask);
    mf = IB_BUILD_OP(b, "Mul", "", IB_BUILD_OP(b, "Sub", "", scalar(b, 1.0f), mf),
                     scalar(b, -10000.0f));
    static const int64_t axes[2] = {1, 2};
    mf = IB_BUILD_OP(b, "Unsqueeze", "", mf, ib_build_ints(b, NULL, axes, 2, NULL));
    ib_value_id p = IB_BUILD_OP(b, "Softmax", "axis=-1", IB_BUILD_OP(b, "Add", "", s, mf));
    ib_value_id c = IB_BUILD_OP(b, "MatMul", "", p, v);
    c = IB_BUILD_OP(b, "Transpose", "perm=[0,2,1,3]", c);
    static const int64_t hidden[1] = {16};
    c = IB_BUILD_OP(b, "Reshape", "", c, dyn_shape(b, h, hidden, 1));
    ib_value_id o = IB_BUILD_OP(b, "Add", "", linear(b, c, "attn.out", 16, 16), h);
    ib_value_id h2 = layernorm(b, o, "attn.ln", 16);
    ib_value_id f = gelu_erf(b, linear(b, h2, "ffn.in", 16, 32));
    f = IB_BUILD_OP(b, "Add", "", linear(b, f, "ffn.out", 32, 16), h2);
    ib_value_id out = layernorm(b, f, "ffn.ln", 16);
    ib_build_output(b, out, "hidden", IB_DTYPE_FLOAT32, "batch,seq,16");
    return b;
}
