/*
 * compile_fuse_embed.c - embedding lookups and their concatenation ->
 * inferbench.GatherConcat (docs/ops.md):
 *
 *   e_i = Gather(T_i, I_i, axis 0)    T_i [R_i, d_i], I_i [N] (int32/int64)
 *   y   = Concat(x_0, e_1, ..., axis 1) every part 2-D [N, *], one dtype
 *
 * DLRM's 26 table lookups (src/models/dlrm.c) are this shape: unfused, each
 * Gather writes its rows to a temporary and Concat copies them again; fused,
 * the rows go straight to y and the CPU kernel prefetches the next rows of
 * every table (random rows of large tables miss every cache). Taken when at
 * least two parts are Gathers whose output only this Concat reads.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"

#define MAX_PARTS 120 /* inputs <= 2 per part, below the op's variadic limit (255) */

/* The Gather feeding a Concat part, when it can be folded into the fused node. */
static ib_node *lookup_of(ib_graph *g, ib_value_id v, const ib_node *concat)
{
    ib_node *n = ib_value_producer_op(g, v, "Gather");
    if (!n || n->n_inputs != 2 || n->n_outputs != 1 ||
        ib_value_single_user(g, v) != (ib_node_id)(concat - g->nodes.data))
        return NULL;
    const ib_tensor_desc *t = &g->values.data[n->inputs[0]].desc,
                         *ix = &g->values.data[n->inputs[1]].desc;
    int64_t ax = ib_node_attr_int(n, "axis", 0);
    if (t->ndim != 2 || (ax != 0 && ax != -2) || ix->ndim != 1 ||
        (ix->dtype != IB_DTYPE_INT64 && ix->dtype != IB_DTYPE_INT32))
        return NULL;
    return n;
}

/* The Concat's parts are all 2-D of one dtype, joined on axis 1. */
static bool concat_ok(const ib_graph *g, const ib_node *c)
{
    if (c->n_inputs < 2 || c->n_inputs > MAX_PARTS || c->n_outputs != 1)
        return false;
    const ib_tensor_desc *y = &g->values.data[c->outputs[0]].desc;
    int64_t ax = ib_node_attr_int(c, "axis", 0);
    if (y->ndim != 2 || (ax != 1 && ax != -1))
        return false;
    for (uint32_t i = 0; i < c->n_inputs; i++) {
        if (c->inputs[i] == IB_VALUE_NONE)
            return false;
        const ib_tensor_desc *d = &g->values.data[c->inputs[i]].desc;
        if (d->ndim != 2 || d->dtype != y->dtype || d->dims[0] != y->dims[0])
            return false;
    }
    return true;
}

int ib_pass_fuse_gather_concat(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    size_t n = g->nodes.len;
    for (size_t i = 0; i < n; i++) {
        ib_node *cat = &g->nodes.data[i];
        if (cat->dead || cat->domain[0] || strcmp(cat->op_type, "Concat") || !concat_ok(g, cat))
            continue;
        ib_node_id dead[MAX_PARTS + 1];
        ib_value_id in[2 * MAX_PARTS];
        int64_t kinds[MAX_PARTS];
        size_t n_dead = 0, n_gather = 0;
        uint32_t n_in = 0;
        for (uint32_t k = 0; k < cat->n_inputs; k++) {
            ib_node *gn = lookup_of(g, cat->inputs[k], cat);
            /* the same Gather output twice in one Concat has two uses: not fused */
            if (gn) {
                dead[n_dead++] = (ib_node_id)(gn - g->nodes.data);
                in[n_in++] = gn->inputs[0];
                in[n_in++] = gn->inputs[1];
                kinds[k] = 1;
                n_gather++;
            } else {
                in[n_in++] = cat->inputs[k];
                kinds[k] = 0;
            }
        }
        if (n_gather < 2)
            continue;
        dead[n_dead++] = (ib_node_id)i;
        char name[512];
        snprintf(name, sizeof name, "%s", cat->name);
        ib_value_id y = cat->outputs[0];
        ib_attr a;
        memset(&a, 0, sizeof a);
        a.name = "parts";
        a.type = IB_ATTR_INTS;
        a.ints = kinds;
        a.count = cat->n_inputs;
        if (ib_graph_replace_nodes(g, dead, n_dead, "GatherConcat", IB_DOMAIN_INTERNAL, name, in,
                                   n_in, &y, 1, &a, 1, 1) == IB_NODE_NONE)
            return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing embeddings at '%s'", name);
        c->stats->gather_concat++;
    }
    return IB_OK;
}
