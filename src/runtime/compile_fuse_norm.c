/*
 * compile_fuse_norm.c - LayerNorm from its decomposed ONNX pattern ->
 * inferbench.LayerNorm (docs/ops.md):
 *
 *   mean = ReduceMean(x, axes=[-1]); d = Sub(x, mean)
 *   var  = ReduceMean(Pow(d, 2), axes=[-1])      (or Mul(d, d))
 *   y    = d / Sqrt(var + eps) [* gamma] [+ beta]
 *
 * Both reductions must be over the last axis only with keepdims=1 (axes as
 * an attribute, or as a constant input from opset 18), d must be read by
 * exactly the Pow and the Div, every other intermediate by one node, and
 * gamma/beta must be constants with one value per element of the last axis.
 * Missing gamma/beta become constant ones/zeros.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"

#define LN_PARTS 9

static ib_node *live_op(ib_graph *g, ib_node_id id, const char *op)
{
    if (id == IB_NODE_NONE) return NULL;
    ib_node *n = &g->nodes.data[id];
    return !n->dead && !n->domain[0] && !strcmp(n->op_type, op) ? n : NULL;
}

static ib_node *user_op(ib_graph *g, ib_value_id v, const char *op, ib_node_id *id)
{
    *id = ib_value_single_user(g, v);
    return live_op(g, *id, op);
}

static ib_value_id other(const ib_node *n, ib_value_id v)
{
    if (n->n_inputs != 2) return IB_VALUE_NONE;
    if (n->inputs[0] == v) return n->inputs[1];
    return n->inputs[1] == v ? n->inputs[0] : IB_VALUE_NONE;
}

/* ReduceMean over the last axis only, keepdims=1. */
static bool reduce_last(const ib_graph *g, const ib_node *n)
{
    if (n->n_inputs < 1 || n->n_outputs != 1 || ib_node_attr_int(n, "keepdims", 1) != 1)
        return false;
    int32_t rank = g->values.data[n->inputs[0]].desc.ndim;
    const int64_t *axes = NULL;
    size_t na = ib_node_attr_ints(n, "axes", &axes);
    if (!na && n->n_inputs >= 2 && n->inputs[1] != IB_VALUE_NONE) {
        const ib_tensor *t = g->values.data[n->inputs[1]].constant;
        if (!t || t->desc.dtype != IB_DTYPE_INT64) return false;
        axes = t->data;
        na = (size_t)ib_tensor_desc_numel(&t->desc);
    }
    return na == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

/* A float32 constant with exactly `n` elements (broadcast over the last axis). */
static bool per_channel(const ib_graph *g, ib_value_id v, int64_t n)
{
    const ib_tensor *t = v == IB_VALUE_NONE ? NULL : g->values.data[v].constant;
    return t && t->data && t->desc.dtype == IB_DTYPE_FLOAT32 && ib_tensor_desc_numel(&t->desc) == n;
}

typedef struct ln_match {
    ib_node_id parts[LN_PARTS];
    size_t n;
    ib_value_id x, gamma, beta, y;
    float eps;
} ln_match;

/* d = Sub(x, mean): the variance branch and the normalisation. */
static bool match_body(ib_graph *g, ib_value_id d, ib_node_id sub_id, ln_match *m)
{
    /* d has two readers: Pow (or Mul(d,d)) and Div */
    ib_node_id sq_id = IB_NODE_NONE, div_id = IB_NODE_NONE;
    if (ib_value_is_output(g, d)) return false;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead || n->n_inputs < 1 ||
            (n->inputs[0] != d && (n->n_inputs < 2 || n->inputs[1] != d)))
            continue;
        if (!strcmp(n->op_type, "Div") && n->inputs[0] == d && !n->domain[0])
            div_id = (ib_node_id)i;
        else if (!n->domain[0] && ((!strcmp(n->op_type, "Pow") && n->inputs[0] == d) ||
                                   (!strcmp(n->op_type, "Mul") && n->n_inputs == 2 &&
                                    n->inputs[0] == d && n->inputs[1] == d)))
            sq_id = (ib_node_id)i;
    }
    if (sq_id == IB_NODE_NONE || div_id == IB_NODE_NONE || sq_id == sub_id) return false;
    const ib_node *sq = &g->nodes.data[sq_id];
    /* no third reader: Mul(d, d) reads d twice */
    if (ib_value_uses(g, d) != (strcmp(sq->op_type, "Mul") ? 2u : 3u)) return false;
    float f;
    if (!strcmp(sq->op_type, "Pow") && !(ib_value_const_scalar(g, sq->inputs[1], &f) && f == 2.0f))
        return false;
    ib_node_id rid, aid, qid;
    ib_node *rm = user_op(g, sq->outputs[0], "ReduceMean", &rid);
    if (!rm || !reduce_last(g, rm)) return false;
    ib_node *add = user_op(g, rm->outputs[0], "Add", &aid);
    if (!add || !ib_value_const_scalar(g, other(add, rm->outputs[0]), &m->eps) || m->eps < 0)
        return false;
    ib_node *sqrt_n = user_op(g, add->outputs[0], "Sqrt", &qid);
    const ib_node *div = &g->nodes.data[div_id];
    if (!sqrt_n || div->n_inputs != 2 || div->inputs[1] != sqrt_n->outputs[0] ||
        ib_value_single_user(g, sqrt_n->outputs[0]) != div_id)
        return false;
    const ib_node_id more[5] = {sq_id, rid, aid, qid, div_id};
    for (int k = 0; k < 5; k++)
        m->parts[m->n++] = more[k];
    m->y = div->outputs[0];
    return true;
}

/* Optional "* gamma" then "+ beta" after the Div. */
static void match_affine(ib_graph *g, int64_t c, ln_match *m)
{
    ib_node_id id;
    ib_node *mul = user_op(g, m->y, "Mul", &id);
    if (mul && per_channel(g, other(mul, m->y), c)) {
        m->gamma = other(mul, m->y);
        m->parts[m->n++] = id;
        m->y = mul->outputs[0];
    }
    ib_node *add = user_op(g, m->y, "Add", &id);
    if (add && per_channel(g, other(add, m->y), c)) {
        m->beta = other(add, m->y);
        m->parts[m->n++] = id;
        m->y = add->outputs[0];
    }
}

static bool match_ln(ib_graph *g, ib_node_id id, ln_match *m)
{
    ib_node *rm = live_op(g, id, "ReduceMean");
    if (!rm || !reduce_last(g, rm)) return false;
    ib_value_id x = rm->inputs[0], mean = rm->outputs[0];
    const ib_tensor_desc *xd = &g->values.data[x].desc;
    if (xd->dtype != IB_DTYPE_FLOAT32 || xd->ndim < 1 || xd->dims[xd->ndim - 1] < 1) return false;
    ib_node_id sid;
    ib_node *sub = user_op(g, mean, "Sub", &sid);
    if (!sub || sub->n_inputs != 2 || sub->inputs[0] != x || sub->inputs[1] != mean) return false;
    memset(m, 0, sizeof *m);
    m->x = x;
    m->gamma = m->beta = IB_VALUE_NONE;
    m->parts[m->n++] = id;
    m->parts[m->n++] = sid;
    if (!match_body(g, sub->outputs[0], sid, m)) return false;
    match_affine(g, xd->dims[xd->ndim - 1], m);
    return true;
}

/* A constant [c] filled with v, for a missing gamma (1) or beta (0). */
static ib_value_id fill_const(ib_graph *g, const char *base, const char *suffix, int64_t c, float v)
{
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 1, {c}};
    ib_tensor *t;
    if (ib_tensor_alloc(&d, &t)) return IB_VALUE_NONE;
    for (int64_t i = 0; i < c; i++)
        ((float *)t->data)[i] = v;
    return ib_graph_new_const(g, base, suffix, t);
}

int ib_pass_fuse_layernorm(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    size_t n = g->nodes.len;
    for (size_t i = 0; i < n; i++) {
        ln_match m;
        if (!match_ln(g, (ib_node_id)i, &m)) continue;
        char name[512];
        snprintf(name, sizeof name, "%s", g->nodes.data[i].name);
        const ib_tensor_desc *xd = &g->values.data[m.x].desc;
        int64_t ch = xd->dims[xd->ndim - 1];
        if (m.gamma == IB_VALUE_NONE) m.gamma = fill_const(g, name, "/ones", ch, 1.0f);
        if (m.beta == IB_VALUE_NONE) m.beta = fill_const(g, name, "/zeros", ch, 0.0f);
        if (m.gamma == IB_VALUE_NONE || m.beta == IB_VALUE_NONE)
            return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing LayerNorm at '%s'", name);
        ib_attr a[2];
        memset(a, 0, sizeof a);
        a[0].name = "axis";
        a[0].type = IB_ATTR_INT;
        a[0].i = -1;
        a[1].name = "epsilon";
        a[1].type = IB_ATTR_FLOAT;
        a[1].f = m.eps;
        ib_value_id in[3] = {m.x, m.gamma, m.beta};
        if (ib_graph_replace_nodes(g, m.parts, m.n, "LayerNorm", IB_DOMAIN_INTERNAL, name, in, 3,
                                   &m.y, 1, a, 2, 1) == IB_NODE_NONE)
            return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing LayerNorm at '%s'", name);
        c->stats->layernorm++;
    }
    return IB_OK;
}
