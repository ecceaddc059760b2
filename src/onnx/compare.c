/*
 * compare.c - structural equality of two graphs, as an ONNX round trip must
 * keep them (load(write(g)) == g): values by name (type, dims, dim_params,
 * flags, constant bytes), inputs and outputs in order, live nodes in order
 * with inputs/outputs by name and attributes by value (tensors bit-exact,
 * subgraphs recursively). The first difference is described in err. Values
 * that nothing references and that carry no type are ignored: the writer
 * has no place to put them.
 */
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

#define DIFF(...) ib_err_set(err, IB_EFORMAT, __VA_ARGS__)

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static int cmp_tensor(const ib_tensor *a, const ib_tensor *b, const char *what, ib_err *err)
{
    char da[160], db[160];
    if (!a || !b) return a == b ? IB_OK : DIFF("%s: tensor present on one side only", what);
    if (!ib_tensor_desc_equal(&a->desc, &b->desc))
        return DIFF("%s: %s vs %s", what, ib_tensor_desc_str(&a->desc, da, sizeof da),
                    ib_tensor_desc_str(&b->desc, db, sizeof db));
    if (a->desc.dtype == IB_DTYPE_STRING) {
        int64_t n = ib_tensor_desc_numel(&a->desc);
        const char *const *sa = a->data, *const *sb = b->data;
        for (int64_t i = 0; i < n; i++)
            if (strcmp(sa[i], sb[i]) != 0)
                return DIFF("%s: string %lld differs ('%s' vs '%s')", what, (long long)i, sa[i],
                            sb[i]);
        return IB_OK;
    }
    size_t n = ib_tensor_desc_nbytes(&a->desc);
    if (a->nbytes < n || b->nbytes < n) return DIFF("%s: data shorter than its shape", what);
    const unsigned char *pa = a->data, *pb = b->data;
    for (size_t i = 0; i < n; i++)
        if (pa[i] != pb[i])
            return DIFF("%s: byte %zu of %zu differs (0x%02x vs 0x%02x)", what, i, n, pa[i], pb[i]);
    return IB_OK;
}

static int cmp_value(const ib_value *a, const ib_value *b, const char *where, ib_err *err)
{
    const uint32_t mask = IB_VALUE_INPUT | IB_VALUE_OUTPUT | IB_VALUE_CONST;
    char da[160], db[160];
    if ((a->flags & mask) != (b->flags & mask))
        return DIFF("%svalue '%s': flags %u vs %u", where, a->name, a->flags & mask,
                    b->flags & mask);
    if (a->desc.dtype != b->desc.dtype || a->shape_known != b->shape_known ||
        (a->shape_known && !ib_tensor_desc_equal(&a->desc, &b->desc)))
        return DIFF(
            "%svalue '%s': %s%s vs %s%s", where, a->name,
            ib_tensor_desc_str(&a->desc, da, sizeof da), a->shape_known ? "" : " (no shape)",
            ib_tensor_desc_str(&b->desc, db, sizeof db), b->shape_known ? "" : " (no shape)");
    for (int32_t i = 0; a->shape_known && i < a->desc.ndim && i < IB_MAX_DIMS; i++)
        if (!str_eq(a->dim_param[i], b->dim_param[i]))
            return DIFF("%svalue '%s': dim %d is '%s' vs '%s'", where, a->name, i,
                        a->dim_param[i] ? a->dim_param[i] : "",
                        b->dim_param[i] ? b->dim_param[i] : "");
    if (a->flags & IB_VALUE_CONST) {
        char what[600];
        snprintf(what, sizeof what, "%sconstant '%s'", where, a->name);
        return cmp_tensor(a->constant, b->constant, what, err);
    }
    return IB_OK;
}

static const char *vname(const ib_graph *g, ib_value_id id)
{
    return id == IB_VALUE_NONE || id < 0 || (size_t)id >= g->values.len ? NULL
                                                                        : g->values.data[id].name;
}

static int cmp_graph(const ib_graph *a, const ib_graph *b, const char *where, ib_err *err);

static int cmp_attr(const ib_attr *x, const ib_attr *y, const char *where, ib_err *err)
{
    if (strcmp(x->name, y->name) != 0 || x->type != y->type)
        return DIFF("%sattribute '%s' (type %d) vs '%s' (type %d)", where, x->name, (int)x->type,
                    y->name, (int)y->type);
    char w[700];
    snprintf(w, sizeof w, "%.600sattribute '%s'", where, x->name);
    switch (x->type) {
    case IB_ATTR_FLOAT:
        return memcmp(&x->f, &y->f, sizeof x->f)
                   ? DIFF("%s: %g vs %g", w, (double)x->f, (double)y->f)
                   : IB_OK;
    case IB_ATTR_INT:
        return x->i != y->i ? DIFF("%s: %lld vs %lld", w, (long long)x->i, (long long)y->i) : IB_OK;
    case IB_ATTR_STRING:
        if (x->s_len != y->s_len || (x->s_len && memcmp(x->s, y->s, x->s_len)))
            return DIFF("%s: strings differ", w);
        return IB_OK;
    case IB_ATTR_FLOATS:
    case IB_ATTR_INTS:
    case IB_ATTR_STRINGS: {
        size_t cx = x->count, cy = y->count;
        if (cx != cy) return DIFF("%s: %zu vs %zu elements", w, cx, cy);
        for (size_t i = 0; i < cx; i++) {
            bool same = x->type == IB_ATTR_FLOATS ? memcmp(&x->floats[i], &y->floats[i], 4) == 0
                        : x->type == IB_ATTR_INTS ? x->ints[i] == y->ints[i]
                                                  : strcmp(x->strings[i], y->strings[i]) == 0;
            if (!same) return DIFF("%s: element %zu differs", w, i);
        }
        return IB_OK;
    }
    case IB_ATTR_TENSOR:
        return cmp_tensor(x->t, y->t, w, err);
    case IB_ATTR_GRAPH: {
        if (!x->g || !y->g) return x->g == y->g ? IB_OK : DIFF("%s: graph on one side only", w);
        char w2[800];
        snprintf(w2, sizeof w2, "%.700s: ", w);
        return cmp_graph(x->g, y->g, w2, err);
    }
    default:
        return IB_OK;
    }
}

static int cmp_node(const ib_graph *a, const ib_node *x, const ib_graph *b, const ib_node *y,
                    const char *where, ib_err *err)
{
    if (strcmp(x->op_type, y->op_type) != 0 || strcmp(x->domain, y->domain) != 0 ||
        strcmp(x->name, y->name) != 0 || x->opset != y->opset)
        return DIFF("%snode '%s' (%s, '%s' opset %lld) vs '%s' (%s, '%s' opset %lld)", where,
                    x->name, x->op_type, x->domain, (long long)x->opset, y->name, y->op_type,
                    y->domain, (long long)y->opset);
    if (x->n_inputs != y->n_inputs || x->n_outputs != y->n_outputs || x->n_attrs != y->n_attrs)
        return DIFF("%snode '%s': %u/%u/%u vs %u/%u/%u inputs/outputs/attributes", where, x->name,
                    x->n_inputs, x->n_outputs, x->n_attrs, y->n_inputs, y->n_outputs, y->n_attrs);
    for (uint32_t i = 0; i < x->n_inputs; i++)
        if (!str_eq(vname(a, x->inputs[i]), vname(b, y->inputs[i])))
            return DIFF("%snode '%s': input %u is '%s' vs '%s'", where, x->name, i,
                        str_or_empty(vname(a, x->inputs[i])), str_or_empty(vname(b, y->inputs[i])));
    for (uint32_t i = 0; i < x->n_outputs; i++)
        if (!str_eq(vname(a, x->outputs[i]), vname(b, y->outputs[i])))
            return DIFF("%snode '%s': output %u differs", where, x->name, i);
    char w[700];
    snprintf(w, sizeof w, "%.600snode '%s' ", where, x->name);
    for (uint32_t i = 0; i < x->n_attrs; i++) {
        int rc = cmp_attr(&x->attrs[i], &y->attrs[i], w, err);
        if (rc) return rc;
    }
    return IB_OK;
}

/* Values a round trip must keep: flagged, typed, or used by a live node. */
static bool *observable(const ib_graph *g)
{
    bool *obs = ib_calloc(g->values.len ? g->values.len : 1, sizeof *obs);
    if (!obs) return NULL;
    for (size_t i = 0; i < g->values.len; i++)
        obs[i] = g->values.data[i].flags || g->values.data[i].desc.dtype != IB_DTYPE_UNDEFINED;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        for (uint32_t k = 0; !n->dead && k < n->n_inputs + n->n_outputs; k++) {
            ib_value_id id = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
            if (id >= 0 && (size_t)id < g->values.len) obs[id] = true;
        }
    }
    return obs;
}

/* Every observable value of x exists in y with the same properties. */
static int cmp_values(const ib_graph *x, const ib_graph *y, const char *where, bool forward,
                      ib_err *err)
{
    bool *obs = observable(x);
    if (!obs) return ib_err_set(err, IB_ENOMEM, "out of memory comparing graphs");
    int rc = IB_OK;
    for (size_t i = 0; i < x->values.len && rc == IB_OK; i++) {
        if (!obs[i]) continue;
        const ib_value *v = &x->values.data[i];
        ib_value_id j = ib_graph_find_value(y, v->name);
        if (j == IB_VALUE_NONE)
            rc = DIFF("%svalue '%s' exists only in the %s graph", where, v->name,
                      forward ? "first" : "second");
        else if (forward)
            rc = cmp_value(v, &y->values.data[j], where, err);
    }
    ib_free(obs);
    return rc;
}

static size_t live_nodes(const ib_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nodes.len; i++)
        n += !g->nodes.data[i].dead;
    return n;
}

static int cmp_graph(const ib_graph *a, const ib_graph *b, const char *where, ib_err *err)
{
    if (a->inputs.len != b->inputs.len || a->outputs.len != b->outputs.len)
        return DIFF("%s%zu inputs and %zu outputs vs %zu and %zu", where, a->inputs.len,
                    a->outputs.len, b->inputs.len, b->outputs.len);
    for (size_t i = 0; i < a->inputs.len; i++)
        if (!str_eq(vname(a, a->inputs.data[i]), vname(b, b->inputs.data[i])))
            return DIFF("%sinput %zu is '%s' vs '%s'", where, i,
                        str_or_empty(vname(a, a->inputs.data[i])),
                        str_or_empty(vname(b, b->inputs.data[i])));
    for (size_t i = 0; i < a->outputs.len; i++)
        if (!str_eq(vname(a, a->outputs.data[i]), vname(b, b->outputs.data[i])))
            return DIFF("%soutput %zu is '%s' vs '%s'", where, i,
                        str_or_empty(vname(a, a->outputs.data[i])),
                        str_or_empty(vname(b, b->outputs.data[i])));
    int rc;
    if ((rc = cmp_values(a, b, where, true, err)) || (rc = cmp_values(b, a, where, false, err)))
        return rc;
    if (live_nodes(a) != live_nodes(b))
        return DIFF("%s%zu nodes vs %zu", where, live_nodes(a), live_nodes(b));
    for (size_t i = 0, j = 0; i < a->nodes.len; i++, j++) {
        while (i < a->nodes.len && a->nodes.data[i].dead)
            i++;
        while (j < b->nodes.len && b->nodes.data[j].dead)
            j++;
        if (i >= a->nodes.len || j >= b->nodes.len) break;
        if ((rc = cmp_node(a, &a->nodes.data[i], b, &b->nodes.data[j], where, err))) return rc;
    }
    return IB_OK;
}

int ib_onnx_graph_compare(const ib_graph *a, const ib_graph *b, ib_err *err)
{
    if (a->opset != b->opset || a->ir_version != b->ir_version)
        return DIFF("opset %lld / IR %lld vs opset %lld / IR %lld", (long long)a->opset,
                    (long long)a->ir_version, (long long)b->opset, (long long)b->ir_version);
    return cmp_graph(a, b, "", err);
}
