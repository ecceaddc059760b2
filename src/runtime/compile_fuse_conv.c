/*
 * compile_fuse_conv.c - Conv (+ BatchNormalization) (+ Add residual)
 * (+ Relu) -> inferbench.FusedConv (docs/ops.md).
 *
 * BatchNormalization in inference mode is an affine map per output channel,
 * so it folds into the convolution (s = scale / sqrt(var + eps);
 * W' = W * s[m]; B' = (B - mean) * s + bias), computed in double. The
 * folded weights depend only on the model's constants and go to the
 * derived-constant cache under "convbn.w:" / "convbn.b:" + the BN output
 * name. A following Add whose other operand has exactly the conv output's
 * shape becomes the residual input Z (added before the activation, as in
 * ResNet); a following Relu becomes activation="Relu".
 *
 * Every intermediate value must have exactly one reader and not be a graph
 * output, or nothing is fused (it would still be needed unfused).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"

typedef struct conv_match {
    ib_node_id conv, bn, add, relu;
    ib_value_id out;      /* the value the fused node produces */
    ib_value_id residual; /* Z, or IB_VALUE_NONE */
} conv_match;

static bool is_op(const ib_node *n, const char *op)
{
    return !n->dead && !n->domain[0] && strcmp(n->op_type, op) == 0;
}

static const ib_tensor *const_f32(const ib_graph *g, ib_value_id v)
{
    if (v == IB_VALUE_NONE) return NULL;
    const ib_tensor *t = g->values.data[v].constant;
    return t && t->data && t->desc.dtype == IB_DTYPE_FLOAT32 ? t : NULL;
}

/* The next node when `v` has exactly one reader and it is op `op`. */
static ib_node *next_op(ib_graph *g, ib_value_id v, const char *op, ib_node_id *id)
{
    ib_node_id u = ib_value_single_user(g, v);
    if (u == IB_NODE_NONE || !is_op(&g->nodes.data[u], op)) return NULL;
    *id = u;
    return &g->nodes.data[u];
}

static bool bn_usable(const ib_graph *g, const ib_node *bn, int64_t m)
{
    if (bn->n_inputs != 5 || ib_node_attr_int(bn, "training_mode", 0) != 0) return false;
    for (uint32_t k = 1; k < 5; k++) {
        const ib_tensor *t = const_f32(g, bn->inputs[k]);
        if (!t || ib_tensor_desc_numel(&t->desc) != m) return false;
    }
    for (uint32_t k = 1; k < bn->n_outputs; k++) /* pre-opset-9 running stats outputs */
        if (bn->outputs[k] != IB_VALUE_NONE && ib_value_uses(g, bn->outputs[k])) return false;
    return true;
}

static bool match_conv(ib_graph *g, ib_node_id id, conv_match *m)
{
    const ib_node *conv = &g->nodes.data[id];
    if (!is_op(conv, "Conv") || conv->n_inputs < 2 || conv->n_outputs != 1) return false;
    const ib_tensor *w = const_f32(g, conv->inputs[1]);
    if (!w || w->desc.ndim < 3 || g->values.data[conv->inputs[0]].desc.dtype != IB_DTYPE_FLOAT32)
        return false;
    if (conv->n_inputs > 2 && conv->inputs[2] != IB_VALUE_NONE && !const_f32(g, conv->inputs[2]))
        return false;
    m->conv = id;
    m->bn = m->add = m->relu = IB_NODE_NONE;
    m->residual = IB_VALUE_NONE;
    m->out = conv->outputs[0];
    ib_node_id nid;
    ib_node *n = next_op(g, m->out, "BatchNormalization", &nid);
    if (n && n->inputs[0] == m->out && bn_usable(g, n, w->desc.dims[0])) {
        m->bn = nid;
        m->out = n->outputs[0];
    }
    n = next_op(g, m->out, "Add", &nid);
    if (n && n->n_inputs == 2) {
        ib_value_id r = n->inputs[0] == m->out ? n->inputs[1] : n->inputs[0];
        const ib_value *rv = &g->values.data[r];
        if (r != m->out && !rv->constant &&
            ib_tensor_desc_equal(&rv->desc, &g->values.data[m->out].desc)) {
            m->add = nid;
            m->residual = r;
            m->out = n->outputs[0];
        }
    }
    n = next_op(g, m->out, "Relu", &nid);
    if (n) {
        m->relu = nid;
        m->out = n->outputs[0];
    }
    return m->bn != IB_NODE_NONE || m->add != IB_NODE_NONE || m->relu != IB_NODE_NONE;
}

/* W' and B' for a Conv followed by BatchNormalization (cached when pure). */
static int fold_bn(ib_pass_ctx *c, const conv_match *m, const ib_tensor **w_out,
                   const ib_tensor **b_out, ib_tensor **w_own, ib_tensor **b_own)
{
    ib_graph *g = c->g;
    const ib_node *conv = &g->nodes.data[m->conv], *bn = &g->nodes.data[m->bn];
    const ib_value *bnout = &g->values.data[bn->outputs[0]];
    char kw[600], kb[600];
    snprintf(kw, sizeof kw, "convbn.w:%s", bnout->name);
    snprintf(kb, sizeof kb, "convbn.b:%s", bnout->name);
    bool cacheable = c->opts->cache != NULL;
    for (uint32_t k = 1; k < 3 && k < conv->n_inputs; k++)
        cacheable =
            cacheable && (conv->inputs[k] == IB_VALUE_NONE ||
                          ((size_t)conv->inputs[k] < c->pure.len && c->pure.data[conv->inputs[k]]));
    for (uint32_t k = 1; k < 5; k++)
        cacheable = cacheable && (size_t)bn->inputs[k] < c->pure.len && c->pure.data[bn->inputs[k]];
    if (cacheable && (*w_out = ib_compile_cache_get(c->opts->cache, kw)) &&
        (*b_out = ib_compile_cache_get(c->opts->cache, kb)))
        return IB_OK;
    const ib_tensor *w = const_f32(g, conv->inputs[1]);
    const ib_tensor *b = conv->n_inputs > 2 ? const_f32(g, conv->inputs[2]) : NULL;
    const float *scale = const_f32(g, bn->inputs[1])->data,
                *bias = const_f32(g, bn->inputs[2])->data;
    const float *mean = const_f32(g, bn->inputs[3])->data, *var = const_f32(g, bn->inputs[4])->data;
    double eps = (double)ib_node_attr_float(bn, "epsilon", 1e-5f);
    int64_t oc = w->desc.dims[0], per = ib_tensor_desc_numel(&w->desc) / (oc ? oc : 1);
    ib_tensor_desc bd = {IB_DTYPE_FLOAT32, 1, {oc}};
    if (ib_tensor_alloc(&w->desc, w_own) || ib_tensor_alloc(&bd, b_own)) return IB_ENOMEM;
    float *wo = (*w_own)->data, *bo = (*b_own)->data;
    const float *wi = w->data;
    for (int64_t o = 0; o < oc; o++) {
        double s = (double)scale[o] / sqrt((double)var[o] + eps);
        for (int64_t k = 0; k < per; k++)
            wo[o * per + k] = (float)((double)wi[o * per + k] * s);
        double b0 = b ? (double)((const float *)b->data)[o] : 0.0;
        bo[o] = (float)((b0 - (double)mean[o]) * s + (double)bias[o]);
    }
    if (cacheable) {
        int rc = ib_compile_cache_put(c->opts->cache, kw, *w_own, w_out);
        if (rc) return rc;
        *w_own = NULL;
        if ((rc = ib_compile_cache_put(c->opts->cache, kb, *b_own, b_out))) return rc;
        *b_own = NULL;
        return IB_OK;
    }
    *w_out = *b_out = NULL; /* the caller takes *w_own / *b_own */
    return IB_OK;
}

/* A constant value for a folded tensor: owned when just computed (*own),
 * else borrowed from the cache. */
static ib_value_id add_folded(ib_graph *g, const char *base, const char *suffix,
                              const ib_tensor *cached, ib_tensor **own)
{
    if (*own) {
        ib_tensor *t = *own;
        *own = NULL; /* ib_graph_new_const owns it now, also on failure */
        return ib_graph_new_const(g, base, suffix, t);
    }
    ib_value_id v = ib_graph_new_value(g, base, suffix, &cached->desc);
    if (v == IB_VALUE_NONE || ib_graph_set_borrowed_constant(g, v, cached)) return IB_VALUE_NONE;
    return v;
}

static int apply(ib_pass_ctx *c, const conv_match *m)
{
    ib_graph *g = c->g;
    const ib_node *conv = &g->nodes.data[m->conv];
    ib_value_id in[4] = {conv->inputs[0], conv->inputs[1],
                         conv->n_inputs > 2 ? conv->inputs[2] : IB_VALUE_NONE, m->residual};
    char name[512];
    snprintf(name, sizeof name, "%s", conv->name);
    if (m->bn != IB_NODE_NONE) {
        const ib_tensor *w, *b;
        ib_tensor *wown = NULL, *bown = NULL;
        int rc = fold_bn(c, m, &w, &b, &wown, &bown);
        if (!rc) {
            in[1] = add_folded(g, name, "/W_bn", w, &wown);
            in[2] = add_folded(g, name, "/B_bn", b, &bown);
            if (in[1] == IB_VALUE_NONE || in[2] == IB_VALUE_NONE) rc = IB_ENOMEM;
        }
        ib_tensor_free(wown);
        ib_tensor_free(bown);
        if (rc)
            return ib_err_set(c->err, rc, "out of memory folding BatchNormalization into '%s'",
                              name);
    }
    conv = &g->nodes.data[m->conv];
    ib_attr attrs[32];
    uint32_t na = 0;
    for (uint32_t k = 0; k < conv->n_attrs && na < 31; k++)
        attrs[na++] = conv->attrs[k];
    if (m->relu != IB_NODE_NONE) {
        memset(&attrs[na], 0, sizeof attrs[na]);
        attrs[na].name = "activation";
        attrs[na].type = IB_ATTR_STRING;
        attrs[na].s = "Relu";
        attrs[na].s_len = 4;
        na++;
    }
    ib_node_id dead[4];
    size_t nd = 0;
    const ib_node_id parts[4] = {m->conv, m->bn, m->add, m->relu};
    for (int k = 0; k < 4; k++)
        if (parts[k] != IB_NODE_NONE) dead[nd++] = parts[k];
    uint32_t n_in = m->residual != IB_VALUE_NONE ? 4 : (in[2] != IB_VALUE_NONE ? 3 : 2);
    ib_node_id id = ib_graph_replace_nodes(g, dead, nd, "FusedConv", IB_DOMAIN_INTERNAL, name, in,
                                           n_in, &m->out, 1, attrs, na, 1);
    if (id == IB_NODE_NONE) return ib_err_set(c->err, IB_ENOMEM, "out of memory fusing '%s'", name);
    c->stats->fused_conv++;
    c->stats->fused_bn += m->bn != IB_NODE_NONE;
    return IB_OK;
}

int ib_pass_fuse_conv(ib_pass_ctx *c)
{
    size_t n = c->g->nodes.len; /* nodes added by the pass are not revisited */
    for (size_t i = 0; i < n; i++) {
        conv_match m;
        if (!match_conv(c->g, (ib_node_id)i, &m)) continue;
        int rc = apply(c, &m);
        if (rc) return rc;
    }
    return IB_OK;
}
