/*
 * compile_fuse_matmul.c - MatMul/Gemm + bias Add (+ Relu / Gelu) ->
 * inferbench.FusedMatMul (docs/ops.md): Y = act(alpha * A x B' + bias), B
 * a constant 2-D matrix ([K, N], or [N, K] with transB), bias a constant
 * with N elements broadcast over the rows.
 *
 * MatMul needs the following Add with a constant bias. Gemm (transA=0)
 * brings its own C when C has N elements (beta folded into a copy of it);
 * its alpha and transB stay attributes of the fused node, so the weights
 * are not copied.
 * An activation (Relu, or an inferbench Gelu made by compile_fuse_gelu.c)
 * that is the only reader of the sum is absorbed as activation="Relu" or
 * "Gelu" (with the Gelu's `approximate`).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"

typedef struct mm_match {
    ib_node_id parts[4];
    size_t n;
    ib_value_id a, b, bias, y;
    const char *act;    /* NULL, "Relu", "Gelu" */
    const char *approx; /* Gelu's approximate */
    float alpha, beta;
    int64_t trans_b;
} mm_match;

static ib_node *live(ib_graph *g, ib_node_id id, const char *domain, const char *op)
{
    if (id == IB_NODE_NONE) return NULL;
    ib_node *n = &g->nodes.data[id];
    return !n->dead && !strcmp(n->domain, domain) && !strcmp(n->op_type, op) ? n : NULL;
}

static const ib_tensor *const_f32(const ib_graph *g, ib_value_id v)
{
    const ib_tensor *t = v == IB_VALUE_NONE ? NULL : g->values.data[v].constant;
    return t && t->data && t->desc.dtype == IB_DTYPE_FLOAT32 ? t : NULL;
}

/* A constant with N elements that broadcasts along the last axis only. */
static bool row_bias(const ib_graph *g, ib_value_id v, int64_t n, int32_t out_rank)
{
    const ib_tensor *t = const_f32(g, v);
    if (!t || t->desc.ndim < 1 || t->desc.ndim > out_rank || t->desc.dims[t->desc.ndim - 1] != n)
        return false;
    return ib_tensor_desc_numel(&t->desc) == n;
}

static void match_bias_add(ib_graph *g, mm_match *m, int64_t n)
{
    ib_node_id id = ib_value_single_user(g, m->y);
    ib_node *add = live(g, id, "", "Add");
    if (!add || add->n_inputs != 2) return;
    ib_value_id o = add->inputs[0] == m->y ? add->inputs[1] : add->inputs[0];
    if (o == m->y || !row_bias(g, o, n, g->values.data[m->y].desc.ndim)) return;
    m->bias = o;
    m->parts[m->n++] = id;
    m->y = add->outputs[0];
}

static void match_act(ib_graph *g, mm_match *m)
{
    ib_node_id id = ib_value_single_user(g, m->y);
    ib_node *n;
    if ((n = live(g, id, "", "Relu"))) {
        m->act = "Relu";
    } else if ((n = live(g, id, IB_DOMAIN_INTERNAL, "Gelu"))) {
        m->act = "Gelu";
        m->approx = ib_node_attr_string(n, "approximate", "none");
    } else {
        return;
    }
    m->parts[m->n++] = id;
    m->y = n->outputs[0];
}

static bool match_mm(ib_graph *g, ib_node_id id, mm_match *m)
{
    memset(m, 0, sizeof *m);
    m->bias = IB_VALUE_NONE;
    m->alpha = m->beta = 1.0f;
    ib_node *n = &g->nodes.data[id];
    bool gemm = live(g, id, "", "Gemm") != NULL;
    if (!gemm && !live(g, id, "", "MatMul")) return false;
    if (n->n_inputs < 2 || n->n_outputs != 1) return false;
    const ib_tensor *b = const_f32(g, n->inputs[1]);
    const ib_tensor_desc *ad = &g->values.data[n->inputs[0]].desc;
    if (!b || b->desc.ndim != 2 || ad->dtype != IB_DTYPE_FLOAT32 || ad->ndim < 2) return false;
    m->a = n->inputs[0];
    m->b = n->inputs[1];
    m->y = n->outputs[0];
    m->parts[m->n++] = id;
    int64_t cols = b->desc.dims[1];
    if (gemm) {
        if (ib_node_attr_int(n, "transA", 0) != 0) return false;
        m->trans_b = ib_node_attr_int(n, "transB", 0);
        m->alpha = ib_node_attr_float(n, "alpha", 1.0f);
        m->beta = ib_node_attr_float(n, "beta", 1.0f);
        cols = m->trans_b ? b->desc.dims[0] : b->desc.dims[1];
        if (n->n_inputs > 2 && n->inputs[2] != IB_VALUE_NONE) {
            if (!row_bias(g, n->inputs[2], cols, 2))
                return false; /* a full [M, N] C is not a bias */
            m->bias = n->inputs[2];
        }
    }
    if (m->bias == IB_VALUE_NONE) match_bias_add(g, m, cols);
    match_act(g, m);
    /* plain MatMul without bias or activation gains nothing */
    return m->bias != IB_VALUE_NONE || m->act || (gemm && m->n > 1);
}

/* beta * C when beta != 1 (small: never cached). */
static ib_value_id scale_bias(ib_graph *g, ib_value_id c, float beta, const char *name)
{
    const ib_tensor *src = g->values.data[c].constant;
    ib_tensor *t;
    if (ib_tensor_alloc(&src->desc, &t)) return IB_VALUE_NONE;
    int64_t n = ib_tensor_desc_numel(&src->desc);
    for (int64_t i = 0; i < n; i++)
        ((float *)t->data)[i] = beta * ((const float *)src->data)[i];
    return ib_graph_new_const(g, name, "/bias", t);
}

static int apply(ib_pass_ctx *c, mm_match *m)
{
    ib_graph *g = c->g;
    char name[512];
    snprintf(name, sizeof name, "%s", g->nodes.data[m->parts[0]].name);
    bool gemm = !strcmp(g->nodes.data[m->parts[0]].op_type, "Gemm");
    if (gemm && m->beta != 1.0f && m->bias != IB_VALUE_NONE &&
        m->bias == g->nodes.data[m->parts[0]].inputs[2] &&
        (m->bias = scale_bias(g, m->bias, m->beta, name)) == IB_VALUE_NONE)
        return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing '%s'", name);
    ib_attr a[4];
    uint32_t na = 0;
    memset(a, 0, sizeof a);
    if (m->trans_b) {
        a[na].name = "transB";
        a[na].type = IB_ATTR_INT;
        a[na++].i = 1;
    }
    if (m->alpha != 1.0f) {
        a[na].name = "alpha";
        a[na].type = IB_ATTR_FLOAT;
        a[na++].f = m->alpha;
    }
    if (m->act) {
        a[na].name = "activation";
        a[na].type = IB_ATTR_STRING;
        a[na].s = m->act;
        a[na].s_len = strlen(m->act);
        na++;
        if (m->approx) {
            a[na].name = "approximate";
            a[na].type = IB_ATTR_STRING;
            a[na].s = m->approx;
            a[na].s_len = strlen(m->approx);
            na++;
        }
    }
    ib_value_id in[3] = {m->a, m->b, m->bias};
    if (ib_graph_replace_nodes(g, m->parts, m->n, "FusedMatMul", IB_DOMAIN_INTERNAL, name, in,
                               m->bias != IB_VALUE_NONE ? 3 : 2, &m->y, 1, a, na,
                               1) == IB_NODE_NONE)
        return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing '%s'", name);
    c->stats->fused_matmul++;
    return IB_OK;
}

int ib_pass_fuse_matmul(ib_pass_ctx *c)
{
    size_t n = c->g->nodes.len;
    for (size_t i = 0; i < n; i++) {
        mm_match m;
        if (!match_mm(c->g, (ib_node_id)i, &m)) continue;
        int rc = apply(c, &m);
        if (rc) return rc;
    }
    return IB_OK;
}
