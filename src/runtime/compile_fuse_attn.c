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

/* ---- head split/merge -> inferbench.MultiHeadAttention (docs/ops.md) ---------------------
 *
 * BERT's heads (bert.c, the reference export) around an Attention:
 *   q  = Transpose[0,2,1,3](Reshape(xq [N,S,H] -> [N,S,h,D]))        (v alike)
 *   kt = Transpose[0,1,3,2](Transpose[0,2,1,3](Reshape(xk)))  or  Transpose[0,2,3,1](Reshape(xk))
 *   y  = Reshape(Transpose[0,2,1,3](Attention(q, kt, v, mask)) -> [N,S,h*Dv])
 * becomes MultiHeadAttention(xq, xk, xv, mask; heads = h, scale), so the four transposes and
 * the two reshape copies per layer disappear. Only for backends that implement the op
 * (ib_compile_options.fuse_mha); every intermediate must have one reader. */

static const int64_t k_perm_bshd[4] = {0, 2, 1, 3};

static ib_node *single_op(ib_graph *g, ib_value_id v, const char *op, ib_node_id *id)
{
    ib_node *n = ib_value_producer_op(g, v, op);
    if (!n || ib_value_single_user(g, v) == IB_NODE_NONE || ib_value_is_output(g, v)) return NULL;
    *id = (ib_node_id)(n - g->nodes.data);
    return n;
}

static bool perm_is(const ib_node *n, const int64_t *want)
{
    const int64_t *p = NULL;
    if (ib_node_attr_ints(n, "perm", &p) != 4) return false;
    for (int i = 0; i < 4; i++)
        if (p[i] != want[i]) return false;
    return true;
}

/* x [N,S,H] reshaped to r [N,S,h,D] by node rs: *x, and h (0 when not). */
static int64_t split_of(ib_graph *g, const ib_node *rs, ib_value_id *x)
{
    const ib_tensor_desc *in = &g->values.data[rs->inputs[0]].desc,
                         *out = &g->values.data[rs->outputs[0]].desc;
    if (in->ndim != 3 || out->ndim != 4 || in->dtype != IB_DTYPE_FLOAT32 ||
        out->dims[0] != in->dims[0] || out->dims[1] != in->dims[1] || out->dims[2] < 1 ||
        out->dims[2] * out->dims[3] != in->dims[2])
        return 0;
    *x = rs->inputs[0];
    return out->dims[2];
}

typedef struct mha_match {
    ib_node_id parts[12];
    size_t n;
    ib_value_id x[3], y;
    int64_t heads;
} mha_match;

/* q or v: Transpose[0,2,1,3](Reshape(x)). */
static bool match_qv(ib_graph *g, ib_value_id v, mha_match *m, int slot)
{
    ib_node_id a, b;
    ib_node *t = single_op(g, v, "Transpose", &a);
    if (!t || !perm_is(t, k_perm_bshd)) return false;
    ib_node *rs = single_op(g, t->inputs[0], "Reshape", &b);
    int64_t h = rs ? split_of(g, rs, &m->x[slot]) : 0;
    if (!h || (m->heads && h != m->heads)) return false;
    m->heads = h;
    m->parts[m->n++] = a;
    m->parts[m->n++] = b;
    return true;
}

static bool match_kt(ib_graph *g, ib_value_id v, mha_match *m)
{
    static const int64_t swap_last[4] = {0, 1, 3, 2}, direct[4] = {0, 2, 3, 1};
    ib_node_id a, b, c;
    ib_node *t = single_op(g, v, "Transpose", &a);
    if (!t) return false;
    if (perm_is(t, swap_last)) {
        ib_node *t2 = single_op(g, t->inputs[0], "Transpose", &b);
        if (!t2 || !perm_is(t2, k_perm_bshd)) return false;
        ib_node *rs = single_op(g, t2->inputs[0], "Reshape", &c);
        int64_t h = rs ? split_of(g, rs, &m->x[1]) : 0;
        if (!h || h != m->heads) return false;
        m->parts[m->n++] = a;
        m->parts[m->n++] = b;
        m->parts[m->n++] = c;
        return true;
    }
    if (!perm_is(t, direct)) return false;
    ib_node *rs = single_op(g, t->inputs[0], "Reshape", &b);
    int64_t h = rs ? split_of(g, rs, &m->x[1]) : 0;
    if (!h || h != m->heads) return false;
    m->parts[m->n++] = a;
    m->parts[m->n++] = b;
    return true;
}

/* y: Reshape(Transpose[0,2,1,3](out) -> [N,S,h*Dv]). */
static bool match_merge(ib_graph *g, ib_value_id out, mha_match *m)
{
    if (ib_value_is_output(g, out)) return false;
    ib_node_id a = ib_value_single_user(g, out);
    if (a == IB_NODE_NONE) return false;
    ib_node *t = live_op(g, a, "Transpose");
    if (!t || !perm_is(t, k_perm_bshd) || ib_value_is_output(g, t->outputs[0])) return false;
    ib_node_id b = ib_value_single_user(g, t->outputs[0]);
    ib_node *rs = b == IB_NODE_NONE ? NULL : live_op(g, b, "Reshape");
    if (!rs || rs->inputs[0] != t->outputs[0]) return false;
    const ib_tensor_desc *td = &g->values.data[t->outputs[0]].desc,
                         *rd = &g->values.data[rs->outputs[0]].desc;
    if (td->ndim != 4 || rd->ndim != 3 || rd->dims[0] != td->dims[0] ||
        rd->dims[1] != td->dims[1] || rd->dims[2] != td->dims[2] * td->dims[3] ||
        td->dims[2] != m->heads)
        return false;
    m->parts[m->n++] = a;
    m->parts[m->n++] = b;
    m->y = rs->outputs[0];
    return true;
}

int ib_pass_fuse_mha(ib_pass_ctx *c)
{
    if (!c->opts->fuse_mha) return IB_OK;
    ib_graph *g = c->g;
    size_t n = g->nodes.len;
    for (size_t i = 0; i < n; i++) {
        ib_node *at = &g->nodes.data[i];
        if (at->dead || strcmp(at->domain, IB_DOMAIN_INTERNAL) || strcmp(at->op_type, "Attention") ||
            at->n_inputs < 3)
            continue;
        mha_match m;
        memset(&m, 0, sizeof m);
        m.parts[m.n++] = (ib_node_id)i;
        ib_value_id mask = at->n_inputs > 3 ? at->inputs[3] : IB_VALUE_NONE;
        float scale = ib_node_attr_float(at, "scale", 1.0f);
        if (!match_qv(g, at->inputs[0], &m, 0) || !match_kt(g, at->inputs[1], &m) ||
            !match_qv(g, at->inputs[2], &m, 2) || !match_merge(g, at->outputs[0], &m))
            continue;
        /* same batch and K/V lengths; mask [.., S, Sk] broadcasting to [N, h, S, Sk] is what
         * the Attention already checked against its 4-D scores */
        const ib_tensor_desc *q = &g->values.data[m.x[0]].desc, *k = &g->values.data[m.x[1]].desc,
                             *v = &g->values.data[m.x[2]].desc;
        if (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] || k->dims[1] != v->dims[1] ||
            k->dims[2] != q->dims[2])
            continue;
        char name[512];
        snprintf(name, sizeof name, "%s", at->name);
        ib_attr a[2];
        memset(a, 0, sizeof a);
        a[0].name = "scale";
        a[0].type = IB_ATTR_FLOAT;
        a[0].f = scale;
        a[1].name = "heads";
        a[1].type = IB_ATTR_INT;
        a[1].i = m.heads;
        ib_value_id in[4] = {m.x[0], m.x[1], m.x[2], mask};
        if (ib_graph_replace_nodes(g, m.parts, m.n, "MultiHeadAttention", IB_DOMAIN_INTERNAL, name,
                                   in, mask != IB_VALUE_NONE ? 4 : 3, &m.y, 1, a, 2,
                                   1) == IB_NODE_NONE)
            return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing heads at '%s'", name);
        c->stats->attention_heads++;
    }
    return IB_OK;
}
