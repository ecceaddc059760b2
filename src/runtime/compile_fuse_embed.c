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
 * least two parts are Gathers whose output only this Concat reads, for backends
 * with IB_BACKEND_CAP_GATHER_CONCAT (cpu, reference; cuda runs Gather and Concat).
 *
 * DLRM's dot interaction -> inferbench.DotInteraction (for backends with
 * IB_BACKEND_CAP_DOT_INTERACTION):
 *
 *   T  = Reshape(X [N, F*D]) [N, F, D]    (or any 3-D T: then T is the input)
 *   Z  = MatMul(T, Transpose(T, perm [0, 2, 1])) [N, F, F]
 *   Zf = Flatten(Z, axis 1) or Reshape(Z) [N, F*F]
 *   Y  = Gather(Zf, I, axis 1)            I constant, 1-D
 *
 * Unfused, the Reshape and the Transpose each copy X (the CPU's Reshape of a
 * Concat output and its reorder for the MatMul: 28 MB each at DLRM's batch of
 * 2048), the MatMul computes all F*F products and the Gather keeps 351 of
 * the 729; fused, each kept product is one dot of two rows of X.
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
    if (!c->opts->fuse_gather_concat) return IB_OK;
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

/* Z's MatMul when it is T x Transpose(T, [0, 2, 1]) with T 3-D, every link single-use. */
static ib_node *interaction_matmul(ib_graph *g, ib_value_id z, ib_value_id *t_out)
{
    ib_node *mm = ib_value_producer_op(g, z, "MatMul");
    if (!mm || mm->n_inputs != 2 || mm->n_outputs != 1) return NULL;
    ib_node *tr = ib_value_producer_op(g, mm->inputs[1], "Transpose");
    if (!tr || tr->n_inputs != 1 || tr->inputs[0] != mm->inputs[0] ||
        ib_value_single_user(g, mm->inputs[1]) != (ib_node_id)(mm - g->nodes.data))
        return NULL;
    const int64_t *perm = NULL;
    size_t np = ib_node_attr_ints(tr, "perm", &perm);
    const ib_tensor_desc *t = &g->values.data[mm->inputs[0]].desc;
    if (np != 3 || perm[0] != 0 || perm[1] != 2 || perm[2] != 1 || t->ndim != 3 ||
        t->dtype != IB_DTYPE_FLOAT32)
        return NULL;
    *t_out = mm->inputs[0];
    return mm;
}

int ib_pass_fuse_dot_interaction(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    if (!c->opts->fuse_dot_interaction) return IB_OK;
    size_t n = g->nodes.len;
    for (size_t i = 0; i < n; i++) {
        ib_node *ga = &g->nodes.data[i];
        if (ga->dead || ga->domain[0] || strcmp(ga->op_type, "Gather") || ga->n_inputs != 2 ||
            ga->n_outputs != 1)
            continue;
        const ib_value *ix = &g->values.data[ga->inputs[1]];
        const ib_tensor_desc *zf = &g->values.data[ga->inputs[0]].desc;
        int64_t ax = ib_node_attr_int(ga, "axis", 0);
        if (!ix->constant || ix->desc.ndim != 1 || zf->ndim != 2 || (ax != 1 && ax != -1) ||
            (ix->desc.dtype != IB_DTYPE_INT64 && ix->desc.dtype != IB_DTYPE_INT32))
            continue;
        ib_node_id gid = (ib_node_id)i;
        ib_node *fl = ib_value_producer_op(g, ga->inputs[0], "Flatten");
        if (!fl) fl = ib_value_producer_op(g, ga->inputs[0], "Reshape");
        if (!fl || ib_value_single_user(g, ga->inputs[0]) != gid ||
            (!strcmp(fl->op_type, "Flatten") && ib_node_attr_int(fl, "axis", 1) != 1))
            continue;
        ib_node_id flid = (ib_node_id)(fl - g->nodes.data);
        ib_value_id z = fl->inputs[0], t = IB_VALUE_NONE;
        ib_node *mm = interaction_matmul(g, z, &t);
        if (!mm || ib_value_single_user(g, z) != flid) continue;
        const ib_tensor_desc *td = &g->values.data[t].desc;
        int64_t F = td->dims[1];
        if (zf->dims[1] != F * F || td->dims[0] != zf->dims[0]) continue;
        ib_node_id mmid = (ib_node_id)(mm - g->nodes.data);
        ib_node_id trid = g->values.data[mm->inputs[1]].producer;
        ib_node_id dead[5] = {gid, flid, mmid, trid, IB_NODE_NONE};
        size_t n_dead = 4;
        /* T = Reshape(X [N, F*D]) read only by the MatMul and the Transpose: take X */
        ib_value_id in[2] = {t, ga->inputs[1]};
        ib_node *rs = ib_value_producer_op(g, t, "Reshape");
        if (rs && !ib_value_is_output(g, t) && ib_value_uses(g, t) == 2) {
            const ib_tensor_desc *xd = &g->values.data[rs->inputs[0]].desc;
            if (xd->ndim == 2 && xd->dims[0] == td->dims[0] && xd->dims[1] == F * td->dims[2]) {
                in[0] = rs->inputs[0];
                dead[n_dead++] = (ib_node_id)(rs - g->nodes.data);
            }
        }
        char name[512];
        snprintf(name, sizeof name, "%s", mm->name);
        ib_value_id y = ga->outputs[0];
        ib_attr a;
        memset(&a, 0, sizeof a);
        a.name = "features";
        a.type = IB_ATTR_INT;
        a.i = F;
        if (ib_graph_replace_nodes(g, dead, n_dead, "DotInteraction", IB_DOMAIN_INTERNAL, name,
                                   in, 2, &y, 1, &a, 1, 1) == IB_NODE_NONE)
            return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing the interaction at '%s'",
                              name);
        c->stats->dot_interaction++;
    }
    return IB_OK;
}
