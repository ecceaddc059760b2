/*
 * compile_fuse_inorm.c - InstanceNormalization followed by Relu or LeakyRelu
 * -> inferbench.InstanceNorm with activation="Relu" | "LeakyRelu"
 * (activation_alpha = the LeakyRelu's alpha) (docs/ops.md).
 *
 * The 3D U-Nets (docs/3d_unet.md) apply one after every convolution; fused,
 * a backend normalises and activates in one pass over the volume instead of
 * two. The normalisation's output must have exactly that one reader and not
 * be a graph output, or nothing is fused (it would still be needed unfused).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"

static bool is_op(const ib_node *n, const char *op)
{
    return !n->dead && !n->domain[0] && strcmp(n->op_type, op) == 0;
}

static int fuse_one(ib_pass_ctx *c, ib_node_id id)
{
    ib_graph *g = c->g;
    const ib_node *in = &g->nodes.data[id];
    if (!is_op(in, "InstanceNormalization") || in->n_outputs != 1 || in->n_inputs != 3)
        return IB_OK;
    ib_node_id aid = ib_value_single_user(g, in->outputs[0]);
    if (aid == IB_NODE_NONE) return IB_OK;
    const ib_node *act = &g->nodes.data[aid];
    bool leaky = is_op(act, "LeakyRelu");
    if ((!leaky && !is_op(act, "Relu")) || act->n_inputs != 1 || act->n_outputs != 1)
        return IB_OK;
    ib_attr attrs[4];
    uint32_t na = 0;
    for (uint32_t k = 0; k < in->n_attrs && na < 2; k++)
        if (!strcmp(in->attrs[k].name, "epsilon")) attrs[na++] = in->attrs[k];
    memset(&attrs[na], 0, sizeof attrs[na]);
    attrs[na].name = "activation";
    attrs[na].type = IB_ATTR_STRING;
    attrs[na].s = leaky ? "LeakyRelu" : "Relu";
    attrs[na].s_len = strlen(attrs[na].s);
    na++;
    if (leaky) {
        memset(&attrs[na], 0, sizeof attrs[na]);
        attrs[na].name = "activation_alpha";
        attrs[na].type = IB_ATTR_FLOAT;
        attrs[na].f = ib_node_attr_float(act, "alpha", 0.01f);
        na++;
    }
    char name[512];
    snprintf(name, sizeof name, "%s", in->name);
    ib_value_id inputs[3] = {in->inputs[0], in->inputs[1], in->inputs[2]}, y = act->outputs[0];
    const ib_node_id dead[2] = {id, aid};
    if (ib_graph_replace_nodes(g, dead, 2, "InstanceNorm", IB_DOMAIN_INTERNAL, name, inputs, 3,
                               &y, 1, attrs, na, 1) == IB_NODE_NONE)
        return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing '%s'", name);
    c->stats->instance_norm++;
    return IB_OK;
}

int ib_pass_fuse_instance_norm(ib_pass_ctx *c)
{
    size_t n = c->g->nodes.len; /* nodes added by the pass are not revisited */
    for (size_t i = 0; i < n; i++) {
        int rc = fuse_one(c, (ib_node_id)i);
        if (rc) return rc;
    }
    return IB_OK;
}
