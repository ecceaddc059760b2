/*
 * compile_dce.c - dead-node removal.
 *
 * First, Identity and inference-mode Dropout (mask output unused) are
 * bypassed: their readers read the input directly. One whose output is a
 * graph output stays, so output names survive. Then, walking the nodes in
 * reverse topological order, a node none of whose outputs is read (by a live
 * node or as a graph output) is marked dead, which may make its producers
 * dead in turn. Requires topological order (the caller toposorts first).
 */
#include <string.h>

#include "runtime/compile.h"

static bool is_passthrough(const ib_graph *g, const ib_node *n)
{
    if (n->domain[0] || n->n_inputs < 1 || n->inputs[0] == IB_VALUE_NONE || n->n_outputs < 1 ||
        n->outputs[0] == IB_VALUE_NONE)
        return false;
    if (!strcmp(n->op_type, "Identity")) return n->n_outputs == 1;
    if (!strcmp(n->op_type, "Dropout")) {
        /* opset 12+: input 2 is training_mode; a constant false (or absent) is inference */
        if (n->n_inputs >= 3 && n->inputs[2] != IB_VALUE_NONE) {
            const ib_tensor *t = g->values.data[n->inputs[2]].constant;
            if (!t || !t->data || t->nbytes < 1 || ((const unsigned char *)t->data)[0])
                return false;
        }
        if (n->n_outputs >= 2 && n->outputs[1] != IB_VALUE_NONE &&
            ib_value_uses(g, n->outputs[1]) > 0)
            return false;
        return true;
    }
    return false;
}

static void bypass_passthrough(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    for (size_t i = 0; i < g->nodes.len; i++) {
        ib_node *n = &g->nodes.data[i];
        if (n->dead || !is_passthrough(g, n) || ib_value_is_output(g, n->outputs[0])) continue;
        ib_value_id in = n->inputs[0], out = n->outputs[0];
        n->dead = true; /* first, so the rewrite below does not touch its own input */
        ib_value_replace_uses(g, out, in);
        g->values.data[out].producer = IB_NODE_NONE;
        if (c->stats) c->stats->removed++;
    }
}

int ib_pass_dce(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    bypass_passthrough(c);
    uint32_t *uses = ib_calloc(g->values.len + 1, sizeof *uses);
    if (!uses) return ib_err_set(c->err, IB_ENOMEM, "out of memory removing dead nodes");
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] != IB_VALUE_NONE) uses[n->inputs[k]]++;
    }
    for (size_t i = 0; i < g->outputs.len; i++)
        uses[g->outputs.data[i]]++;
    for (size_t i = g->nodes.len; i-- > 0;) {
        ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        bool used = false;
        for (uint32_t k = 0; k < n->n_outputs && !used; k++)
            used = n->outputs[k] != IB_VALUE_NONE && uses[n->outputs[k]] > 0;
        if (used) continue;
        n->dead = true;
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] != IB_VALUE_NONE)
                g->values.data[n->outputs[k]].producer = IB_NODE_NONE;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] != IB_VALUE_NONE) uses[n->inputs[k]]--;
        if (c->stats) c->stats->removed++;
    }
    ib_free(uses);
    return IB_OK;
}
