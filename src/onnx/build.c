/*
 * build.c - the graph builder of build.h: inputs, seeded initializers,
 * nodes from compact calls with generated names, outputs, layer helpers
 * (conv, batch norm, linear), and the hand-over to the writer. Errors are
 * sticky (first one wins, later calls are no-ops), so model code can check
 * once. It does no shape inference: outputs get the type the caller gives.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "onnx/build_impl.h"

struct ib_build {
    ib_graph *g;
    uint64_t seed;
    int rc;
    ib_err err;
    char *prefix;     /* ib_malloc'd, "" when none */
    uint64_t counter; /* generated names */
    ib_strmap nodes;  /* node names in use (keys in the graph arena) */
    ib_arena tmp;     /* attribute parsing scratch */
};

static int fail(ib_build *b, int code, const char *fmt, ...) IB_PRINTF(3, 4);

static int fail(ib_build *b, int code, const char *fmt, ...)
{
    if (b->rc == IB_OK) {
        char msg[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        b->rc = code;
        ib_err_set(&b->err, code, "builder: %s", msg);
    }
    return code;
}

static bool live(const ib_build *b)
{
    return b->rc == IB_OK && b->g;
}

/* ONNX IR version that goes with an ai.onnx opset (onnx/docs/Versioning.md). */
static int64_t ir_for_opset(int64_t opset)
{
    if (opset <= 8) return 3;
    if (opset <= 11) return opset - 5; /* 9 -> 4, 10 -> 5, 11 -> 6 */
    if (opset <= 14) return 7;
    return 8;
}

int ib_build_create(uint64_t seed, int64_t opset, ib_build **out)
{
    *out = NULL;
    if (opset < 7 || opset > 17) return IB_EINVAL;
    ib_build *b = ib_calloc(1, sizeof *b);
    if (!b) return IB_ENOMEM;
    if (ib_graph_create(&b->g) || !(b->prefix = ib_strdup(""))) {
        ib_graph_destroy(b->g);
        ib_free(b);
        return IB_ENOMEM;
    }
    b->seed = seed;
    b->g->opset = opset;
    b->g->ir_version = ir_for_opset(opset);
    b->g->producer_name = "inferbench";
    b->g->graph_name = "main";
    ib_strmap_init(&b->nodes);
    ib_arena_init(&b->tmp, 0);
    *out = b;
    return IB_OK;
}

void ib_build_destroy(ib_build *b)
{
    if (!b) return;
    ib_graph_destroy(b->g);
    ib_strmap_deinit(&b->nodes);
    ib_arena_deinit(&b->tmp);
    ib_free(b->prefix);
    ib_free(b);
}

int ib_build_error(const ib_build *b, ib_err *err)
{
    if (b->rc && err) *err = b->err;
    return b->rc;
}

ib_graph *ib_build_graph(ib_build *b)
{
    return b->g;
}

void ib_build_set_prefix(ib_build *b, const char *prefix)
{
    char *p = ib_strdup(prefix ? prefix : "");
    if (!p) {
        fail(b, IB_ENOMEM, "out of memory");
        return;
    }
    ib_free(b->prefix);
    b->prefix = p;
}

/* prefix + name (or prefix + stem + "_<k>" when name is NULL), in the graph arena. */
static const char *make_name(ib_build *b, const char *name, const char *stem)
{
    char buf[512];
    if (name)
        snprintf(buf, sizeof buf, "%s%s", b->prefix, name);
    else
        snprintf(buf, sizeof buf, "%s%s_%llu", b->prefix, stem, (unsigned long long)b->counter++);
    char *s = ib_arena_strdup(&b->g->arena, buf);
    if (!s) fail(b, IB_ENOMEM, "out of memory");
    return s;
}

static ib_value_id new_value(ib_build *b, const char *name, const ib_tensor_desc *d)
{
    if (!name) {
        fail(b, IB_ENOMEM, "out of memory");
        return IB_VALUE_NONE;
    }
    if (!name[0] || ib_graph_find_value(b->g, name) != IB_VALUE_NONE) {
        fail(b, IB_EINVAL, "value name '%s' is %s", name, name[0] ? "already used" : "empty");
        return IB_VALUE_NONE;
    }
    ib_value_id id = ib_graph_add_value(b->g, name, d);
    if (id == IB_VALUE_NONE) fail(b, IB_ENOMEM, "out of memory");
    return id;
}

static int parse_shape(ib_build *b, const char *shape, ib_tensor_desc *d, const char **params)
{
    char msg[600];
    int rc = ib_build_parse_shape(shape, d, params, &b->g->arena, msg, sizeof msg);
    return rc ? fail(b, rc, "%s", msg) : IB_OK;
}

ib_value_id ib_build_input(ib_build *b, const char *name, enum ib_dtype dtype, const char *shape)
{
    if (!live(b)) return IB_VALUE_NONE;
    ib_tensor_desc d = {dtype, 0, {0}};
    const char *params[IB_MAX_DIMS];
    if (parse_shape(b, shape, &d, params)) return IB_VALUE_NONE;
    ib_value_id id = new_value(b, make_name(b, name, "input"), &d);
    if (id == IB_VALUE_NONE) return id;
    ib_value *v = &b->g->values.data[id];
    memcpy(v->dim_param, params, sizeof params);
    v->flags |= IB_VALUE_INPUT;
    if (IB_VEC_PUSH(&b->g->inputs, id)) {
        fail(b, IB_ENOMEM, "out of memory");
        return IB_VALUE_NONE;
    }
    return id;
}

/* Attach t as the constant of a new value. */
static ib_value_id add_const(ib_build *b, const char *name, ib_tensor *t)
{
    ib_value_id id = new_value(b, name, &t->desc);
    if (id == IB_VALUE_NONE || ib_graph_set_constant(b->g, id, t)) {
        ib_tensor_free(t);
        if (id != IB_VALUE_NONE) fail(b, IB_ENOMEM, "out of memory");
        return IB_VALUE_NONE;
    }
    return id;
}

static ib_tensor *new_tensor(ib_build *b, const char *name, enum ib_dtype dtype, const char *shape)
{
    ib_tensor_desc d = {dtype, 0, {0}};
    const char *params[IB_MAX_DIMS];
    if (parse_shape(b, shape, &d, params)) return NULL;
    char buf[160];
    if (ib_tensor_desc_numel(&d) < 0 || ib_dtype_size(dtype) == 0) {
        fail(b, IB_EINVAL, "weight '%s' %s: needs a numeric dtype and fixed dims", name,
             ib_tensor_desc_str(&d, buf, sizeof buf));
        return NULL;
    }
    ib_tensor *t;
    int rc = ib_tensor_alloc(&d, &t);
    if (rc) {
        fail(b, rc, "weight '%s' %s: cannot allocate", name,
             ib_tensor_desc_str(&d, buf, sizeof buf));
        return NULL;
    }
    return t;
}

ib_value_id ib_build_weight(ib_build *b, const char *name, enum ib_dtype dtype, const char *shape,
                            ib_fill fill)
{
    if (!live(b)) return IB_VALUE_NONE;
    const char *full = make_name(b, name, "W");
    ib_tensor *t = full ? new_tensor(b, full, dtype, shape) : NULL;
    if (!t) return IB_VALUE_NONE;
    char msg[600];
    int rc = ib_build_fill_tensor(t, &fill, b->seed, full, msg, sizeof msg);
    if (rc) {
        ib_tensor_free(t);
        fail(b, rc, "%s", msg);
        return IB_VALUE_NONE;
    }
    return add_const(b, full, t);
}

static ib_value_id literal(ib_build *b, const char *name, enum ib_dtype dt, const void *v, size_t n,
                           const char *shape)
{
    if (!live(b)) return IB_VALUE_NONE;
    const char *full = make_name(b, name, "C");
    char sh[32];
    if (!shape) {
        snprintf(sh, sizeof sh, "%zu", n);
        shape = sh;
    }
    ib_tensor *t = full ? new_tensor(b, full, dt, shape) : NULL;
    if (!t) return IB_VALUE_NONE;
    if ((size_t)ib_tensor_desc_numel(&t->desc) != n) {
        ib_tensor_free(t);
        fail(b, IB_EINVAL, "constant '%s': shape '%s' does not hold %zu values", full, shape, n);
        return IB_VALUE_NONE;
    }
    if (n) memcpy(t->data, v, t->nbytes);
    return add_const(b, full, t);
}

ib_value_id ib_build_ints(ib_build *b, const char *name, const int64_t *v, size_t n,
                          const char *shape)
{
    return literal(b, name, IB_DTYPE_INT64, v, n, shape);
}

ib_value_id ib_build_floats(ib_build *b, const char *name, const float *v, size_t n,
                            const char *shape)
{
    return literal(b, name, IB_DTYPE_FLOAT32, v, n, shape);
}

ib_node_id ib_build_node(ib_build *b, const char *op, const char *domain, const char *name,
                         const ib_value_id *in, uint32_t n_in, ib_value_id *out, uint32_t n_out,
                         const ib_attr *attrs, uint32_t n_attrs, const char *attr_str)
{
    for (uint32_t k = 0; out && k < n_out; k++)
        out[k] = IB_VALUE_NONE;
    if (!live(b)) return IB_NODE_NONE;
    for (uint32_t k = 0; k < n_in; k++)
        if (in[k] != IB_VALUE_NONE && (in[k] < 0 || (size_t)in[k] >= b->g->values.len)) {
            fail(b, IB_EINVAL, "%s: input %u is not a value of this graph", op, k);
            return IB_NODE_NONE;
        }
    const char *nn = make_name(b, name, op);
    if (!nn) return IB_NODE_NONE;
    if (ib_strmap_get(&b->nodes, nn, NULL)) {
        fail(b, IB_EINVAL, "node name '%s' is already used", nn);
        return IB_NODE_NONE;
    }
    ib_attr *parsed = NULL;
    uint32_t n_parsed = 0;
    char msg[600];
    int rc = ib_build_parse_attrs(attr_str, &b->tmp, &parsed, &n_parsed, msg, sizeof msg);
    if (rc) {
        fail(b, rc, "node '%s' (%s): %s", nn, op, msg);
        return IB_NODE_NONE;
    }
    uint32_t na = n_parsed + n_attrs;
    ib_attr *all = ib_arena_alloc(&b->tmp, (na ? na : 1) * sizeof *all);
    ib_value_id *outs = ib_arena_alloc(&b->tmp, (n_out ? n_out : 1) * sizeof *outs);
    if (!all || !outs) {
        fail(b, IB_ENOMEM, "out of memory");
        return IB_NODE_NONE;
    }
    if (n_parsed) memcpy(all, parsed, n_parsed * sizeof *all);
    if (n_attrs) memcpy(all + n_parsed, attrs, n_attrs * sizeof *all);
    for (uint32_t k = 0; k < n_out; k++) {
        char on[600];
        if (n_out == 1)
            snprintf(on, sizeof on, "%s_out", nn);
        else
            snprintf(on, sizeof on, "%s_out%u", nn, k);
        const char *s = ib_arena_strdup(&b->g->arena, on);
        if ((outs[k] = new_value(b, s, NULL)) == IB_VALUE_NONE) return IB_NODE_NONE;
    }
    ib_node_id id = ib_graph_add_node(b->g, op, domain, nn, in, n_in, outs, n_out, all, na);
    if (id == IB_NODE_NONE || ib_strmap_put(&b->nodes, nn, id)) {
        fail(b, IB_ENOMEM, "out of memory");
        return IB_NODE_NONE;
    }
    if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0) b->g->nodes.data[id].opset = 1;
    for (uint32_t k = 0; out && k < n_out; k++)
        out[k] = outs[k];
    return id;
}

static ib_node_id vnode(ib_build *b, const char *op, const ib_value_id *in, uint32_t n_in,
                        ib_value_id *out, uint32_t n_out, const char *attrs, va_list ap)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    if (attrs) ib_strbuf_vprintf(&sb, attrs, ap);
    if (sb.oom) {
        ib_strbuf_deinit(&sb);
        fail(b, IB_ENOMEM, "out of memory");
        return IB_NODE_NONE;
    }
    ib_node_id id =
        ib_build_node(b, op, NULL, NULL, in, n_in, out, n_out, NULL, 0, ib_strbuf_cstr(&sb));
    ib_strbuf_deinit(&sb);
    return id;
}

ib_value_id ib_build_op(ib_build *b, const char *op, const ib_value_id *in, uint32_t n_in,
                        const char *attrs, ...)
{
    ib_value_id out = IB_VALUE_NONE;
    va_list ap;
    va_start(ap, attrs);
    vnode(b, op, in, n_in, &out, 1, attrs, ap);
    va_end(ap);
    return out;
}

int ib_build_op_multi(ib_build *b, const char *op, const ib_value_id *in, uint32_t n_in,
                      ib_value_id *out, uint32_t n_out, const char *attrs, ...)
{
    va_list ap;
    va_start(ap, attrs);
    vnode(b, op, in, n_in, out, n_out, attrs, ap);
    va_end(ap);
    return b->rc;
}

int ib_build_adopt_tensor(ib_build *b, ib_tensor *t)
{
    if (!live(b) || IB_VEC_PUSH(&b->g->tensors, t)) {
        ib_tensor_free(t);
        return live(b) ? fail(b, IB_ENOMEM, "out of memory") : b->rc;
    }
    return IB_OK;
}

int ib_build_adopt_graph(ib_build *b, ib_graph *sub)
{
    if (!live(b) || IB_VEC_PUSH(&b->g->subgraphs, sub)) {
        ib_graph_destroy(sub);
        return live(b) ? fail(b, IB_ENOMEM, "out of memory") : b->rc;
    }
    return IB_OK;
}

int ib_build_rename(ib_build *b, ib_value_id v, const char *name)
{
    if (!live(b)) return b->rc;
    if (v < 0 || (size_t)v >= b->g->values.len) return fail(b, IB_EINVAL, "rename: no such value");
    const char *full = make_name(b, name, "value");
    if (!full) return b->rc;
    if (strcmp(b->g->values.data[v].name, full) == 0) return IB_OK;
    if (!full[0] || ib_graph_find_value(b->g, full) != IB_VALUE_NONE)
        return fail(b, IB_EINVAL, "value name '%s' is already used", full);
    b->g->values.data[v].name = full;
    /* the index maps names to ids; rebuild it without the old name */
    ib_strmap_deinit(&b->g->value_index);
    ib_strmap_init(&b->g->value_index);
    for (size_t i = 0; i < b->g->values.len; i++)
        if (b->g->values.data[i].name[0] &&
            ib_strmap_put(&b->g->value_index, b->g->values.data[i].name, (int64_t)i))
            return fail(b, IB_ENOMEM, "out of memory");
    return IB_OK;
}

int ib_build_output(ib_build *b, ib_value_id v, const char *name, enum ib_dtype dtype,
                    const char *shape)
{
    if (!live(b)) return b->rc;
    if (v < 0 || (size_t)v >= b->g->values.len)
        return fail(b, IB_EINVAL, "output '%s': no such value", name ? name : "");
    if (b->g->values.data[v].flags & IB_VALUE_OUTPUT)
        return fail(b, IB_EINVAL, "value '%s' is already an output", b->g->values.data[v].name);
    if (name && ib_build_rename(b, v, name)) return b->rc;
    if (dtype != IB_DTYPE_UNDEFINED) {
        ib_tensor_desc d = {dtype, 0, {0}};
        const char *params[IB_MAX_DIMS];
        if (parse_shape(b, shape, &d, params)) return b->rc;
        ib_value *val = &b->g->values.data[v];
        val->desc = d;
        memcpy(val->dim_param, params, sizeof params);
        val->shape_known = shape != NULL;
    }
    b->g->values.data[v].flags |= IB_VALUE_OUTPUT;
    if (IB_VEC_PUSH(&b->g->outputs, v)) return fail(b, IB_ENOMEM, "out of memory");
    return IB_OK;
}

/* ---- layer helpers ----------------------------------------------------------- */

/* A node name reserved ahead, so its weights can be named after it. */
static const char *reserve(ib_build *b, const char *op, char *buf, size_t n)
{
    snprintf(buf, n, "%s_%llu", op, (unsigned long long)b->counter++);
    return buf;
}

ib_value_id ib_build_conv2d(ib_build *b, ib_value_id x, int64_t c_in, int64_t c_out, int64_t k,
                            int64_t stride, int64_t pad, int64_t group, bool bias)
{
    if (!live(b)) return IB_VALUE_NONE;
    if (group < 1 || c_in % group || c_out % group)
        return fail(b, IB_EINVAL, "conv2d: %lld groups do not divide %lld -> %lld channels",
                    (long long)group, (long long)c_in, (long long)c_out),
               IB_VALUE_NONE;
    char nn[64], wn[96], bn[96], shape[96];
    reserve(b, "Conv", nn, sizeof nn);
    snprintf(wn, sizeof wn, "%s.weight", nn);
    snprintf(bn, sizeof bn, "%s.bias", nn);
    snprintf(shape, sizeof shape, "%lld,%lld,%lld,%lld", (long long)c_out,
             (long long)(c_in / group), (long long)k, (long long)k);
    ib_value_id in[3] = {x, ib_build_weight(b, wn, IB_DTYPE_FLOAT32, shape, ib_fill_he()),
                         IB_VALUE_NONE};
    if (bias) {
        snprintf(shape, sizeof shape, "%lld", (long long)c_out);
        in[2] = ib_build_weight(b, bn, IB_DTYPE_FLOAT32, shape, ib_fill_zeros());
    }
    char attrs[200];
    snprintf(attrs, sizeof attrs,
             "kernel_shape=[%lld,%lld] strides=[%lld,%lld] pads=[%lld,%lld,%lld,%lld] group=%lld",
             (long long)k, (long long)k, (long long)stride, (long long)stride, (long long)pad,
             (long long)pad, (long long)pad, (long long)pad, (long long)group);
    ib_value_id y;
    ib_build_node(b, "Conv", NULL, nn, in, bias ? 3 : 2, &y, 1, NULL, 0, attrs);
    return y;
}

ib_value_id ib_build_batchnorm(ib_build *b, ib_value_id x, int64_t c, double eps)
{
    if (!live(b)) return IB_VALUE_NONE;
    char nn[64], n[4][96], shape[32];
    reserve(b, "BatchNormalization", nn, sizeof nn);
    static const char *const part[4] = {"scale", "bias", "mean", "var"};
    ib_fill fills[4] = {ib_fill_uniform(0.5, 1.5), ib_fill_normal(0, 0.1), ib_fill_normal(0, 0.1),
                        ib_fill_uniform(0.5, 1.5)};
    snprintf(shape, sizeof shape, "%lld", (long long)c);
    ib_value_id in[5] = {x};
    for (int i = 0; i < 4; i++) {
        snprintf(n[i], sizeof n[i], "%s.%s", nn, part[i]);
        in[i + 1] = ib_build_weight(b, n[i], IB_DTYPE_FLOAT32, shape, fills[i]);
    }
    char attrs[64];
    snprintf(attrs, sizeof attrs, "epsilon=%.9e", eps);
    ib_value_id y;
    ib_build_node(b, "BatchNormalization", NULL, nn, in, 5, &y, 1, NULL, 0, attrs);
    return y;
}

ib_value_id ib_build_linear(ib_build *b, ib_value_id x, int64_t in, int64_t out, bool bias)
{
    if (!live(b)) return IB_VALUE_NONE;
    char nn[64], wn[96], bn[96], shape[64];
    reserve(b, "MatMul", nn, sizeof nn);
    snprintf(wn, sizeof wn, "%s.weight", nn);
    snprintf(shape, sizeof shape, "%lld,%lld", (long long)in, (long long)out);
    ib_value_id mm[2] = {x, ib_build_weight(b, wn, IB_DTYPE_FLOAT32, shape, ib_fill_xavier())};
    ib_value_id y;
    ib_build_node(b, "MatMul", NULL, nn, mm, 2, &y, 1, NULL, 0, NULL);
    if (!bias) return y;
    snprintf(bn, sizeof bn, "%s.bias", nn);
    snprintf(shape, sizeof shape, "%lld", (long long)out);
    ib_value_id add[2] = {y, ib_build_weight(b, bn, IB_DTYPE_FLOAT32, shape, ib_fill_zeros())};
    return ib_build_op(b, "Add", add, 2, NULL);
}

/* ---- results ------------------------------------------------------------------- */

static int sort(ib_build *b)
{
    if (!live(b)) return b->g ? b->rc : fail(b, IB_ESTATE, "the graph was already handed over");
    if (b->g->outputs.len == 0)
        return fail(b, IB_EINVAL, "the graph has no outputs (ib_build_output)");
    ib_err e;
    int rc = ib_graph_toposort(b->g, &e);
    return rc ? fail(b, rc, "%s", e.msg) : IB_OK;
}

int ib_build_finish(ib_build *b, ib_graph **out, ib_err *err)
{
    *out = NULL;
    if (sort(b)) return ib_build_error(b, err);
    *out = b->g;
    b->g = NULL;
    return IB_OK;
}

int ib_build_write(ib_build *b, const ib_onnx_write_opts *opts, void **out, size_t *out_len,
                   ib_err *err)
{
    *out = NULL;
    *out_len = 0;
    if (sort(b)) return ib_build_error(b, err);
    return ib_onnx_write_graph(b->g, opts, out, out_len, err);
}

int ib_build_write_file(ib_build *b, const char *path, const ib_onnx_write_opts *opts, ib_err *err)
{
    if (sort(b)) return ib_build_error(b, err);
    return ib_onnx_write_graph_file(b->g, path, opts, err);
}
