/*
 * graph.c - construction, lookup and topological ordering of the graph IR.
 * It does no shape inference and no rewriting (see compile*.c) and knows no
 * file format (see src/onnx/).
 */
#include <string.h>

#include "ir/graph.h"

int ib_graph_create(ib_graph **out)
{
    ib_graph *g = ib_calloc(1, sizeof *g);
    if (!g)
        return IB_ENOMEM;
    ib_arena_init(&g->arena, 0);
    ib_strmap_init(&g->value_index);
    g->opset = 17;
    g->ir_version = 8;
    *out = g;
    return IB_OK;
}

void ib_graph_destroy(ib_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->tensors.len; i++)
        ib_tensor_free(g->tensors.data[i]);
    IB_VEC_FREE(&g->tensors);
    for (size_t i = 0; i < g->subgraphs.len; i++)
        ib_graph_destroy(g->subgraphs.data[i]);
    IB_VEC_FREE(&g->subgraphs);
    IB_VEC_FREE(&g->values);
    IB_VEC_FREE(&g->nodes);
    IB_VEC_FREE(&g->inputs);
    IB_VEC_FREE(&g->outputs);
    ib_strmap_deinit(&g->value_index);
    ib_arena_deinit(&g->arena);
    ib_free(g);
}

ib_value_id ib_graph_add_value(ib_graph *g, const char *name, const ib_tensor_desc *desc)
{
    ib_value v;
    memset(&v, 0, sizeof v);
    v.name = ib_arena_strdup(&g->arena, name ? name : "");
    if (!v.name)
        return IB_VALUE_NONE;
    if (desc) {
        v.desc = *desc;
        v.shape_known = desc->dtype != IB_DTYPE_UNDEFINED;
    }
    v.producer = IB_NODE_NONE;
    if (g->values.len >= (size_t)INT32_MAX || IB_VEC_PUSH(&g->values, v))
        return IB_VALUE_NONE;
    ib_value_id id = (ib_value_id)(g->values.len - 1);
    if (v.name[0] && ib_strmap_put(&g->value_index, v.name, id))
        return IB_VALUE_NONE;
    return id;
}

ib_value_id ib_graph_find_value(const ib_graph *g, const char *name)
{
    int64_t id;
    if (name && ib_strmap_get(&g->value_index, name, &id))
        return (ib_value_id)id;
    return IB_VALUE_NONE;
}

int ib_graph_set_constant(ib_graph *g, ib_value_id v, ib_tensor *t)
{
    if (v < 0 || (size_t)v >= g->values.len || !t)
        return IB_EINVAL;
    if (IB_VEC_PUSH(&g->tensors, t))
        return IB_ENOMEM;
    ib_value *val = &g->values.data[v];
    val->constant = t;
    val->flags |= IB_VALUE_CONST;
    val->desc = t->desc;
    val->shape_known = true;
    return IB_OK;
}

static int copy_attrs(ib_graph *g, ib_node *n, const ib_attr *attrs, uint32_t count)
{
    if (!count)
        return IB_OK;
    n->attrs = ib_arena_alloc(&g->arena, count * sizeof *attrs);
    if (!n->attrs)
        return IB_ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        ib_attr a = attrs[i];
        a.name = ib_arena_strdup(&g->arena, attrs[i].name);
        if (!a.name)
            return IB_ENOMEM;
        if (attrs[i].s) {
            a.s = ib_arena_strndup(&g->arena, attrs[i].s, attrs[i].s_len);
            if (!a.s)
                return IB_ENOMEM;
        }
        if (attrs[i].ints && attrs[i].count) {
            a.ints = ib_arena_memdup(&g->arena, attrs[i].ints, attrs[i].count * sizeof(int64_t));
            if (!a.ints)
                return IB_ENOMEM;
        }
        if (attrs[i].floats && attrs[i].count) {
            a.floats = ib_arena_memdup(&g->arena, attrs[i].floats, attrs[i].count * sizeof(float));
            if (!a.floats)
                return IB_ENOMEM;
        }
        if (attrs[i].strings && attrs[i].count) {
            char **ss = ib_arena_alloc(&g->arena, attrs[i].count * sizeof(char *));
            if (!ss)
                return IB_ENOMEM;
            for (size_t k = 0; k < attrs[i].count; k++)
                if (!(ss[k] = ib_arena_strdup(&g->arena, attrs[i].strings[k])))
                    return IB_ENOMEM;
            a.strings = (const char *const *)ss;
        }
        n->attrs[i] = a;
    }
    n->n_attrs = count;
    return IB_OK;
}

ib_node_id ib_graph_add_node(ib_graph *g, const char *op_type, const char *domain,
                             const char *name, const ib_value_id *inputs, uint32_t n_inputs,
                             const ib_value_id *outputs, uint32_t n_outputs, const ib_attr *attrs,
                             uint32_t n_attrs)
{
    ib_node n;
    memset(&n, 0, sizeof n);
    n.op_type = ib_arena_strdup(&g->arena, op_type);
    n.domain = ib_arena_strdup(&g->arena, domain ? domain : "");
    n.name = ib_arena_strdup(&g->arena, name ? name : "");
    n.opset = g->opset;
    if (!n.op_type || !n.domain || !n.name)
        return IB_NODE_NONE;
    if (n_inputs) {
        n.inputs = ib_arena_memdup(&g->arena, inputs, n_inputs * sizeof *inputs);
        if (!n.inputs)
            return IB_NODE_NONE;
    }
    if (n_outputs) {
        n.outputs = ib_arena_memdup(&g->arena, outputs, n_outputs * sizeof *outputs);
        if (!n.outputs)
            return IB_NODE_NONE;
    }
    n.n_inputs = n_inputs;
    n.n_outputs = n_outputs;
    if (copy_attrs(g, &n, attrs, n_attrs))
        return IB_NODE_NONE;
    if (g->nodes.len >= (size_t)INT32_MAX || IB_VEC_PUSH(&g->nodes, n))
        return IB_NODE_NONE;
    return (ib_node_id)(g->nodes.len - 1);
}

/* Kahn's algorithm over live nodes; dead nodes keep their slots at the end. */
int ib_graph_toposort(ib_graph *g, ib_err *err)
{
    size_t nv = g->values.len, nn = g->nodes.len;
    int rc = IB_ENOMEM;
    uint32_t *pending = ib_calloc(nn ? nn : 1, sizeof *pending);
    ib_node_id *order = ib_calloc(nn ? nn : 1, sizeof *order);
    ib_node *sorted = ib_calloc(nn ? nn : 1, sizeof *sorted);
    uint32_t *cons_start = ib_calloc(nv + 1, sizeof *cons_start);
    ib_node_id *cons = NULL;
    if (!pending || !order || !sorted || !cons_start)
        goto fail;
    for (size_t v = 0; v < nv; v++) {
        g->values.data[v].producer = IB_NODE_NONE;
        g->values.data[v].consumers = 0;
    }
    size_t edges = 0;
    for (size_t i = 0; i < nn; i++) {
        ib_node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            ib_value_id o = n->outputs[k];
            if (o == IB_VALUE_NONE)
                continue;
            if (o < 0 || (size_t)o >= nv) {
                rc = ib_err_set(err, IB_EFORMAT, "node '%s' (%s): output id out of range",
                                n->name, n->op_type);
                goto fail;
            }
            ib_value *val = &g->values.data[o];
            if (val->producer != IB_NODE_NONE || (val->flags & IB_VALUE_CONST)) {
                rc = ib_err_set(err, IB_EFORMAT,
                                "node '%s' (%s): value '%s' is produced more than once", n->name,
                                n->op_type, val->name);
                goto fail;
            }
            val->producer = (ib_node_id)i;
        }
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            ib_value_id in = n->inputs[k];
            if (in == IB_VALUE_NONE)
                continue;
            if (in < 0 || (size_t)in >= nv) {
                rc = ib_err_set(err, IB_EFORMAT, "node '%s' (%s): input id out of range",
                                n->name, n->op_type);
                goto fail;
            }
            g->values.data[in].consumers++;
            cons_start[in]++;
            edges++;
        }
    }
    for (size_t i = 0; i < g->outputs.len; i++)
        if (g->outputs.data[i] >= 0 && (size_t)g->outputs.data[i] < nv)
            g->values.data[g->outputs.data[i]].consumers++;
    /* consumer lists (CSR) */
    cons = ib_calloc(edges ? edges : 1, sizeof *cons);
    if (!cons)
        goto fail;
    for (size_t v = 0, acc = 0; v <= nv; v++) {
        uint32_t c = v < nv ? cons_start[v] : 0;
        cons_start[v] = (uint32_t)acc;
        acc += c;
    }
    uint32_t *fill = ib_calloc(nv + 1, sizeof *fill);
    if (!fill)
        goto fail;
    for (size_t i = 0; i < nn; i++) {
        ib_node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            ib_value_id in = n->inputs[k];
            if (in == IB_VALUE_NONE)
                continue;
            cons[cons_start[in] + fill[in]++] = (ib_node_id)i;
            if (g->values.data[in].producer != IB_NODE_NONE)
                pending[i]++;
        }
    }
    ib_free(fill);
    size_t head = 0, tail = 0, live = 0;
    for (size_t i = 0; i < nn; i++) {
        if (g->nodes.data[i].dead)
            continue;
        live++;
        if (pending[i] == 0)
            order[tail++] = (ib_node_id)i;
    }
    while (head < tail) {
        ib_node *n = &g->nodes.data[order[head++]];
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            ib_value_id o = n->outputs[k];
            if (o == IB_VALUE_NONE)
                continue;
            for (uint32_t c = cons_start[o]; c < cons_start[o + 1]; c++)
                if (--pending[cons[c]] == 0)
                    order[tail++] = cons[c];
        }
    }
    if (tail != live) {
        for (size_t i = 0; i < nn; i++)
            if (!g->nodes.data[i].dead && pending[i]) {
                rc = ib_err_set(err, IB_EFORMAT,
                                "graph has a cycle (or reads a value never produced) at node "
                                "'%s' (%s)",
                                g->nodes.data[i].name, g->nodes.data[i].op_type);
                goto fail;
            }
    }
    size_t k = 0;
    for (size_t i = 0; i < tail; i++)
        sorted[k++] = g->nodes.data[order[i]];
    for (size_t i = 0; i < nn; i++)
        if (g->nodes.data[i].dead)
            sorted[k++] = g->nodes.data[i];
    if (nn) /* nodes.data is NULL in a graph without nodes */
        memcpy(g->nodes.data, sorted, nn * sizeof *sorted);
    for (size_t i = 0; i < nn; i++) {
        ib_node *n = &g->nodes.data[i];
        if (n->dead)
            continue;
        for (uint32_t o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] != IB_VALUE_NONE)
                g->values.data[n->outputs[o]].producer = (ib_node_id)i;
    }
    rc = IB_OK;
fail:
    if (rc == IB_ENOMEM)
        ib_err_set(err, rc, "out of memory sorting the graph");
    ib_free(pending);
    ib_free(order);
    ib_free(sorted);
    ib_free(cons_start);
    ib_free(cons);
    return rc;
}

const ib_attr *ib_node_attr(const ib_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t ib_node_attr_int(const ib_node *n, const char *name, int64_t dflt)
{
    const ib_attr *a = ib_node_attr(n, name);
    return a && a->type == IB_ATTR_INT ? a->i : dflt;
}

float ib_node_attr_float(const ib_node *n, const char *name, float dflt)
{
    const ib_attr *a = ib_node_attr(n, name);
    return a && a->type == IB_ATTR_FLOAT ? a->f : dflt;
}

const char *ib_node_attr_string(const ib_node *n, const char *name, const char *dflt)
{
    const ib_attr *a = ib_node_attr(n, name);
    return a && a->type == IB_ATTR_STRING ? a->s : dflt;
}

size_t ib_node_attr_ints(const ib_node *n, const char *name, const int64_t **out)
{
    const ib_attr *a = ib_node_attr(n, name);
    if (!a || a->type != IB_ATTR_INTS) {
        *out = NULL;
        return 0;
    }
    *out = a->ints;
    return a->count;
}

const ib_value *ib_node_input(const ib_graph *g, const ib_node *n, uint32_t i)
{
    if (i >= n->n_inputs || n->inputs[i] == IB_VALUE_NONE)
        return NULL;
    return &g->values.data[n->inputs[i]];
}

const ib_value *ib_node_output(const ib_graph *g, const ib_node *n, uint32_t i)
{
    if (i >= n->n_outputs || n->outputs[i] == IB_VALUE_NONE)
        return NULL;
    return &g->values.data[n->outputs[i]];
}
