/*
 * compile_fuse_gelu.c - GELU from its decomposed ONNX patterns ->
 * inferbench.Gelu (docs/ops.md).
 *
 *   erf form:  y = x * 0.5 * (1 + erf(x / sqrt(2)))      approximate="none"
 *              (x / 1.41421 may also be x * 0.70711)
 *   tanh form: y = 0.5 * x * (1 + tanh(0.79788 * (x + 0.044715 * x^3)))
 *                                                          approximate="tanh"
 * The tail "x * 0.5 * (1 + t)" is matched in the three orders exporters
 * produce: (x * a) * 0.5, (x * 0.5) * a and x * (a * 0.5). Constants must
 * match to 1e-4 relative, so a different function (x / 2, a cube with 0.05)
 * is left alone. Every intermediate value must have exactly one reader.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"

#define MAX_PARTS 12 /* the tanh form has 8 nodes */
#define GELU_PI   3.14159265358979323846

typedef struct gelu_match {
    ib_node_id parts[MAX_PARTS];
    size_t n;
    bool overflow;
    ib_value_id x, y;
} gelu_match;

static bool near(float a, double want)
{
    return fabs((double)a - want) <= 1e-4 * fabs(want);
}

static ib_node *live_op(ib_graph *g, ib_node_id id, const char *op)
{
    if (id == IB_NODE_NONE) return NULL;
    ib_node *n = &g->nodes.data[id];
    return !n->dead && !n->domain[0] && !strcmp(n->op_type, op) ? n : NULL;
}

/* The only reader of v, when it is `op`. */
static ib_node *user_op(ib_graph *g, ib_value_id v, const char *op, ib_node_id *id)
{
    *id = ib_value_single_user(g, v);
    return live_op(g, *id, op);
}

/* For a binary node reading `v`, the other operand. */
static ib_value_id other(const ib_node *n, ib_value_id v)
{
    if (n->n_inputs != 2) return IB_VALUE_NONE;
    if (n->inputs[0] == v) return n->inputs[1];
    return n->inputs[1] == v ? n->inputs[0] : IB_VALUE_NONE;
}

static bool const_is(ib_graph *g, ib_value_id v, double want)
{
    float f;
    return ib_value_const_scalar(g, v, &f) && near(f, want);
}

static void add_part(gelu_match *m, ib_node_id id)
{
    if (m->n < MAX_PARTS)
        m->parts[m->n++] = id;
    else
        m->overflow = true;
}

/*
 * From a = (1 + t) (t = erf or tanh) match the tail "x * 0.5 * a" and set
 * m->y. p is the value read by the first Mul of the tail.
 */
static bool match_tail(ib_graph *g, ib_value_id a, ib_value_id x, gelu_match *m)
{
    ib_node_id id1, id2;
    ib_node *mul1 = user_op(g, a, "Mul", &id1);
    if (!mul1 || mul1->n_outputs != 1) return false;
    ib_value_id p = other(mul1, a);
    if (p == x) { /* (x * a) * 0.5 */
        ib_node *mul2 = user_op(g, mul1->outputs[0], "Mul", &id2);
        if (!mul2 || !const_is(g, other(mul2, mul1->outputs[0]), 0.5)) return false;
        add_part(m, id1);
        add_part(m, id2);
        m->y = mul2->outputs[0];
        return true;
    }
    if (const_is(g, p, 0.5)) { /* x * (a * 0.5) */
        ib_node *mul2 = user_op(g, mul1->outputs[0], "Mul", &id2);
        if (!mul2 || other(mul2, mul1->outputs[0]) != x) return false;
        add_part(m, id1);
        add_part(m, id2);
        m->y = mul2->outputs[0];
        return true;
    }
    /* (x * 0.5) * a: p = Mul(x, 0.5) read only here */
    ib_node *half = live_op(g, g->values.data[p].producer, "Mul");
    if (!half || other(half, x) == IB_VALUE_NONE || !const_is(g, other(half, x), 0.5) ||
        ib_value_single_user(g, p) != id1)
        return false;
    add_part(m, g->values.data[p].producer);
    add_part(m, id1);
    m->y = mul1->outputs[0];
    return true;
}

/* 1 + t, with t read only by the Add. */
static bool match_plus_one(ib_graph *g, ib_value_id t, ib_value_id *a, gelu_match *m)
{
    ib_node_id id;
    ib_node *add = user_op(g, t, "Add", &id);
    if (!add || !const_is(g, other(add, t), 1.0)) return false;
    add_part(m, id);
    *a = add->outputs[0];
    return true;
}

static bool match_erf(ib_graph *g, ib_node_id eid, gelu_match *m)
{
    ib_node *erf = live_op(g, eid, "Erf");
    if (!erf || erf->n_inputs != 1) return false;
    ib_value_id d = erf->inputs[0];
    ib_node_id sid = g->values.data[d].producer;
    ib_node *sc = live_op(g, sid, "Div");
    m->x = IB_VALUE_NONE;
    if (sc && sc->n_inputs == 2 && const_is(g, sc->inputs[1], sqrt(2.0)))
        m->x = sc->inputs[0];
    else if ((sc = live_op(g, sid, "Mul")) && sc->n_inputs == 2)
        m->x = const_is(g, sc->inputs[1], sqrt(0.5))   ? sc->inputs[0]
               : const_is(g, sc->inputs[0], sqrt(0.5)) ? sc->inputs[1]
                                                       : IB_VALUE_NONE;
    if (m->x == IB_VALUE_NONE || ib_value_single_user(g, d) != eid) return false;
    m->n = 0;
    add_part(m, sid);
    add_part(m, eid);
    ib_value_id a;
    return match_plus_one(g, erf->outputs[0], &a, m) && match_tail(g, a, m->x, m);
}

/* tanh(0.79788 * (x + 0.044715 * x^3)), from the Tanh node. */
static bool match_tanh(ib_graph *g, ib_node_id tid, gelu_match *m)
{
    ib_node *th = live_op(g, tid, "Tanh");
    if (!th || th->n_inputs != 1) return false;
    ib_value_id v = th->inputs[0];
    ib_node_id mid = g->values.data[v].producer;
    ib_node *mk = live_op(g, mid, "Mul");
    if (!mk || mk->n_inputs != 2 || ib_value_single_user(g, v) != tid) return false;
    double k = sqrt(2.0 / GELU_PI);
    ib_value_id s = const_is(g, mk->inputs[1], k)   ? mk->inputs[0]
                    : const_is(g, mk->inputs[0], k) ? mk->inputs[1]
                                                    : IB_VALUE_NONE;
    if (s == IB_VALUE_NONE || ib_value_single_user(g, s) != mid) return false;
    ib_node_id aid = g->values.data[s].producer;
    ib_node *add = live_op(g, aid, "Add");
    if (!add || add->n_inputs != 2) return false;
    for (int side = 0; side < 2; side++) {
        ib_value_id x = add->inputs[side], c3 = add->inputs[1 - side];
        ib_node_id c3id = g->values.data[c3].producer;
        ib_node *mc = live_op(g, c3id, "Mul");
        if (!mc || mc->n_inputs != 2 || ib_value_single_user(g, c3) != aid) continue;
        ib_value_id cube = const_is(g, mc->inputs[1], 0.044715)   ? mc->inputs[0]
                           : const_is(g, mc->inputs[0], 0.044715) ? mc->inputs[1]
                                                                  : IB_VALUE_NONE;
        if (cube == IB_VALUE_NONE || ib_value_single_user(g, cube) != c3id) continue;
        ib_node_id pid = g->values.data[cube].producer;
        ib_node *pw = live_op(g, pid, "Pow");
        if (!pw || pw->n_inputs != 2 || pw->inputs[0] != x || !const_is(g, pw->inputs[1], 3.0))
            continue;
        m->n = 0;
        m->x = x;
        add_part(m, pid);
        add_part(m, c3id);
        add_part(m, aid);
        add_part(m, mid);
        add_part(m, tid);
        ib_value_id a;
        return match_plus_one(g, th->outputs[0], &a, m) && match_tail(g, a, x, m);
    }
    return false;
}

int ib_pass_fuse_gelu(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    size_t n = g->nodes.len;
    for (size_t i = 0; i < n; i++) {
        gelu_match m;
        memset(&m, 0, sizeof m);
        bool erf = match_erf(g, (ib_node_id)i, &m);
        if (!erf && !match_tanh(g, (ib_node_id)i, &m)) continue;
        if (m.overflow || g->values.data[m.x].desc.dtype != IB_DTYPE_FLOAT32) continue;
        char name[512];
        snprintf(name, sizeof name, "%s", g->nodes.data[m.parts[0]].name);
        ib_attr a;
        memset(&a, 0, sizeof a);
        a.name = "approximate";
        a.type = IB_ATTR_STRING;
        a.s = erf ? "none" : "tanh";
        a.s_len = strlen(a.s);
        if (ib_graph_replace_nodes(g, m.parts, m.n, "Gelu", IB_DOMAIN_INTERNAL, name, &m.x, 1, &m.y,
                                   1, &a, 1, 1) == IB_NODE_NONE)
            return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing GELU at '%s'", name);
        c->stats->gelu++;
    }
    return IB_OK;
}
