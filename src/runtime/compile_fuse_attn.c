/*
 * compile_fuse_attn.c - scaled dot-product attention ->
 * inferbench.Attention (docs/ops.md):
 *
 *   s = MatMul(q, kt)            q [..., S, D], kt [..., D, Sk]
 *   s = Div(s, c) | Mul(s, c)    optional, c a constant scalar -> scale
 *   s = Add(s, mask)             optional, mask broadcastable to s
 *   p = Softmax(s) over the last axis
 *   o = MatMul(p, v)             v [..., Sk, Dv]
 *
 * q, kt and v must have the same rank (>= 3) and agree on the leading
 * (batch/head) dims; each intermediate value must have one reader. The
 * fused node reads (q, kt, v[, mask]) and keeps the scale as an attribute.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"

typedef struct attn_match {
    ib_node_id parts[5];
    size_t n;
    ib_value_id q, kt, v, mask, y;
    float scale;
} attn_match;

static ib_node *live_op(ib_graph *g, ib_node_id id, const char *op)
{
    if (id == IB_NODE_NONE) return NULL;
    ib_node *n = &g->nodes.data[id];
    return !n->dead && !n->domain[0] && !strcmp(n->op_type, op) ? n : NULL;
}

/* mask broadcasts to s (numpy rules, right-aligned). */
static bool broadcasts_to(const ib_tensor_desc *m, const ib_tensor_desc *s)
{
    if (m->ndim > s->ndim) return false;
    for (int32_t i = 0; i < m->ndim; i++) {
        int64_t md = m->dims[m->ndim - 1 - i], sd = s->dims[s->ndim - 1 - i];
        if (md != 1 && md != sd) return false;
    }
    return true;
}

static bool shapes_ok(const ib_graph *g, const attn_match *m)
{
    const ib_tensor_desc *q = &g->values.data[m->q].desc, *k = &g->values.data[m->kt].desc,
                         *v = &g->values.data[m->v].desc;
    int32_t r = q->ndim;
    if (r < 3 || k->ndim != r || v->ndim != r || q->dtype != IB_DTYPE_FLOAT32 ||
        k->dtype != IB_DTYPE_FLOAT32 || v->dtype != IB_DTYPE_FLOAT32)
        return false;
    for (int32_t i = 0; i < r - 2; i++)
        if (q->dims[i] != k->dims[i] || q->dims[i] != v->dims[i]) return false;
    /* q [.., S, D] x kt [.., D, Sk]; p [.., S, Sk] x v [.., Sk, Dv] */
    return q->dims[r - 1] == k->dims[r - 2] && k->dims[r - 1] == v->dims[r - 2];
}

static bool match_attn(ib_graph *g, ib_node_id id, attn_match *m)
{
    ib_node *mm1 = live_op(g, id, "MatMul");
    if (!mm1 || mm1->n_inputs != 2 || mm1->n_outputs != 1) return false;
    memset(m, 0, sizeof *m);
    m->q = mm1->inputs[0];
    m->kt = mm1->inputs[1];
    m->mask = IB_VALUE_NONE;
    m->scale = 1.0f;
    m->parts[m->n++] = id;
    ib_value_id s = mm1->outputs[0];
    if (g->values.data[m->q].constant || g->values.data[m->kt].constant)
        return false; /* a projection by a weight, not attention */
    ib_node_id nid = ib_value_single_user(g, s);
    ib_node *n = &g->nodes.data[nid == IB_NODE_NONE ? 0 : nid];
    float c;
    if (nid != IB_NODE_NONE && (live_op(g, nid, "Div") || live_op(g, nid, "Mul")) &&
        n->n_inputs == 2 && n->inputs[0] == s && ib_value_const_scalar(g, n->inputs[1], &c) &&
        c != 0.0f) {
        m->scale = strcmp(n->op_type, "Div") ? c : 1.0f / c;
        m->parts[m->n++] = nid;
        s = n->outputs[0];
        nid = ib_value_single_user(g, s);
    }
    if ((n = live_op(g, nid, "Add")) && n->n_inputs == 2) {
        ib_value_id mask = n->inputs[0] == s ? n->inputs[1] : n->inputs[0];
        if (mask == s || !broadcasts_to(&g->values.data[mask].desc, &g->values.data[s].desc) ||
            g->values.data[mask].desc.dtype != IB_DTYPE_FLOAT32)
            return false;
        m->mask = mask;
        m->parts[m->n++] = nid;
        s = n->outputs[0];
        nid = ib_value_single_user(g, s);
    }
    if (!(n = live_op(g, nid, "Softmax"))) return false;
    int32_t rank = g->values.data[s].desc.ndim;
    int64_t axis = ib_node_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != rank - 1) return false;
    m->parts[m->n++] = nid;
    ib_value_id p = n->outputs[0];
    nid = ib_value_single_user(g, p);
    if (!(n = live_op(g, nid, "MatMul")) || n->inputs[0] != p) return false;
    m->v = n->inputs[1];
    m->parts[m->n++] = nid;
    m->y = n->outputs[0];
    return !g->values.data[m->v].constant && shapes_ok(g, m);
}

int ib_pass_fuse_attention(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    size_t n = g->nodes.len;
    for (size_t i = 0; i < n; i++) {
        attn_match m;
        if (!match_attn(g, (ib_node_id)i, &m)) continue;
        char name[512];
        snprintf(name, sizeof name, "%s", g->nodes.data[i].name);
        ib_attr a;
        memset(&a, 0, sizeof a);
        a.name = "scale";
        a.type = IB_ATTR_FLOAT;
        a.f = m.scale;
        ib_value_id in[4] = {m.q, m.kt, m.v, m.mask};
        if (ib_graph_replace_nodes(g, m.parts, m.n, "Attention", IB_DOMAIN_INTERNAL, name, in,
                                   m.mask != IB_VALUE_NONE ? 4 : 3, &m.y, 1, &a, 1,
                                   1) == IB_NODE_NONE)
            return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing attention at '%s'", name);
        c->stats->attention++;
    }
    return IB_OK;
}
