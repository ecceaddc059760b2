/*
 * compile_util.c - what the compiler passes share: graph cloning (metadata
 * copied, weights borrowed), use queries and rewiring, small constant
 * readers, fresh value names, and the derived-constant cache that lets every
 * batch size compiled in one session share its folded weights.
 *
 * Use queries scan the live nodes (O(nodes)); passes call them only on
 * pattern candidates, which keeps compilation well under a second for
 * BERT-Large-sized graphs.
 */
#include <stdio.h>
#include <string.h>

#include "base/thread.h"
#include "runtime/compile.h"

/* ---- clone ------------------------------------------------------------------ */

static int clone_values(const ib_graph *src, ib_graph *dst)
{
    for (size_t i = 0; i < src->values.len; i++) {
        const ib_value *sv = &src->values.data[i];
        ib_value_id id = ib_graph_add_value(dst, sv->name, &sv->desc);
        if (id == IB_VALUE_NONE || (size_t)id != i) return IB_ENOMEM;
        ib_value *dv = &dst->values.data[id];
        dv->shape_known = sv->shape_known;
        dv->flags = sv->flags & ~IB_VALUE_CONST;
        dv->producer = sv->producer;
        dv->consumers = sv->consumers;
        for (int k = 0; k < IB_MAX_DIMS; k++)
            if (sv->dim_param[k] &&
                !(dv->dim_param[k] = ib_arena_strdup(&dst->arena, sv->dim_param[k])))
                return IB_ENOMEM;
        if (sv->constant) {
            int rc = ib_graph_set_borrowed_constant(dst, id, sv->constant);
            if (rc) return rc;
        }
    }
    return IB_OK;
}

int ib_graph_clone(const ib_graph *src, ib_graph **out)
{
    ib_graph *dst = NULL;
    int rc = ib_graph_create(&dst);
    if (rc) return rc;
    dst->opset = src->opset;
    dst->ir_version = src->ir_version;
    rc = IB_ENOMEM;
    if ((src->producer_name &&
         !(dst->producer_name = ib_arena_strdup(&dst->arena, src->producer_name))) ||
        (src->graph_name && !(dst->graph_name = ib_arena_strdup(&dst->arena, src->graph_name))) ||
        (src->doc && !(dst->doc = ib_arena_strdup(&dst->arena, src->doc))))
        goto fail;
    if ((rc = clone_values(src, dst))) goto fail;
    rc = IB_ENOMEM;
    for (size_t i = 0; i < src->nodes.len; i++) {
        const ib_node *n = &src->nodes.data[i];
        if (n->dead) continue;
        ib_node_id id =
            ib_graph_add_node(dst, n->op_type, n->domain, n->name, n->inputs, n->n_inputs,
                              n->outputs, n->n_outputs, n->attrs, n->n_attrs);
        if (id == IB_NODE_NONE) goto fail;
        dst->nodes.data[id].opset = n->opset;
    }
    for (size_t i = 0; i < src->inputs.len; i++)
        if (IB_VEC_PUSH(&dst->inputs, src->inputs.data[i])) goto fail;
    for (size_t i = 0; i < src->outputs.len; i++)
        if (IB_VEC_PUSH(&dst->outputs, src->outputs.data[i])) goto fail;
    *out = dst;
    return IB_OK;
fail:
    ib_graph_destroy(dst);
    return rc;
}

int ib_graph_set_borrowed_constant(ib_graph *g, ib_value_id v, const ib_tensor *t)
{
    ib_tensor *w;
    /* the data stays owned by its first owner (model graph or cache) */
    int rc = ib_tensor_wrap(&t->desc, t->data, t->nbytes, &w);
    if (rc) return rc;
    rc = ib_graph_set_constant(g, v, w);
    if (rc) ib_tensor_free(w);
    return rc;
}

/* ---- uses ------------------------------------------------------------------- */

bool ib_value_is_output(const ib_graph *g, ib_value_id v)
{
    for (size_t i = 0; i < g->outputs.len; i++)
        if (g->outputs.data[i] == v) return true;
    return false;
}

uint32_t ib_value_uses(const ib_graph *g, ib_value_id v)
{
    uint32_t n = 0;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *nd = &g->nodes.data[i];
        if (nd->dead) continue;
        for (uint32_t k = 0; k < nd->n_inputs; k++)
            n += nd->inputs[k] == v;
    }
    for (size_t i = 0; i < g->outputs.len; i++)
        n += g->outputs.data[i] == v;
    return n;
}

ib_node_id ib_value_single_user(const ib_graph *g, ib_value_id v)
{
    if (v == IB_VALUE_NONE || ib_value_is_output(g, v)) return IB_NODE_NONE;
    ib_node_id user = IB_NODE_NONE;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *nd = &g->nodes.data[i];
        if (nd->dead) continue;
        for (uint32_t k = 0; k < nd->n_inputs; k++) {
            if (nd->inputs[k] != v) continue;
            if (user != IB_NODE_NONE)
                return IB_NODE_NONE; /* a second reader (or the same node twice) */
            user = (ib_node_id)i;
        }
    }
    return user;
}

void ib_value_replace_uses(ib_graph *g, ib_value_id from, ib_value_id to)
{
    for (size_t i = 0; i < g->nodes.len; i++) {
        ib_node *nd = &g->nodes.data[i];
        if (nd->dead) continue;
        for (uint32_t k = 0; k < nd->n_inputs; k++)
            if (nd->inputs[k] == from) nd->inputs[k] = to;
    }
    for (size_t i = 0; i < g->outputs.len; i++)
        if (g->outputs.data[i] == from) g->outputs.data[i] = to;
}

ib_node *ib_value_producer_op(ib_graph *g, ib_value_id v, const char *op_type)
{
    if (v == IB_VALUE_NONE || (size_t)v >= g->values.len) return NULL;
    /* producers are recomputed by toposort; check the node really writes v */
    ib_node_id p = g->values.data[v].producer;
    if (p == IB_NODE_NONE || (size_t)p >= g->nodes.len) return NULL;
    ib_node *n = &g->nodes.data[p];
    if (n->dead || n->domain[0] || strcmp(n->op_type, op_type) != 0) return NULL;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] == v) return n;
    return NULL;
}

bool ib_value_const_scalar(const ib_graph *g, ib_value_id v, float *out)
{
    if (v == IB_VALUE_NONE || (size_t)v >= g->values.len) return false;
    const ib_tensor *t = g->values.data[v].constant;
    if (!t || !t->data) return false;
    int64_t n = ib_tensor_desc_numel(&t->desc);
    if (n < 1) return false;
    float first = 0;
    for (int64_t i = 0; i < n; i++) {
        float x;
        switch (t->desc.dtype) {
        case IB_DTYPE_FLOAT32:
            x = ((const float *)t->data)[i];
            break;
        case IB_DTYPE_FLOAT64:
            x = (float)((const double *)t->data)[i];
            break;
        case IB_DTYPE_FLOAT16:
            x = ib_f16_to_f32(((const uint16_t *)t->data)[i]);
            break;
        case IB_DTYPE_BFLOAT16:
            x = ib_bf16_to_f32(((const uint16_t *)t->data)[i]);
            break;
        default:
            return false;
        }
        if (i == 0)
            first = x;
        else if (x != first)
            return false;
    }
    *out = first;
    return true;
}

ib_value_id ib_graph_new_value(ib_graph *g, const char *base, const char *suffix,
                               const ib_tensor_desc *desc)
{
    char name[512];
    snprintf(name, sizeof name, "%s%s", base ? base : "v", suffix ? suffix : "");
    for (int k = 1; ib_graph_find_value(g, name) != IB_VALUE_NONE && k < 1000000; k++)
        snprintf(name, sizeof name, "%s%s_%d", base ? base : "v", suffix ? suffix : "", k);
    return ib_graph_add_value(g, name, desc);
}

ib_value_id ib_graph_new_const(ib_graph *g, const char *base, const char *suffix, ib_tensor *t)
{
    ib_value_id v = ib_graph_new_value(g, base, suffix, &t->desc);
    if (v == IB_VALUE_NONE || ib_graph_set_constant(g, v, t)) {
        ib_tensor_free(t);
        return IB_VALUE_NONE;
    }
    return v;
}

ib_node_id ib_graph_replace_nodes(ib_graph *g, const ib_node_id *dead, size_t n_dead,
                                  const char *op_type, const char *domain, const char *name,
                                  const ib_value_id *inputs, uint32_t n_inputs,
                                  const ib_value_id *outputs, uint32_t n_outputs,
                                  const ib_attr *attrs, uint32_t n_attrs, int64_t opset)
{
    ib_node_id id = ib_graph_add_node(g, op_type, domain, name, inputs, n_inputs, outputs,
                                      n_outputs, attrs, n_attrs);
    if (id == IB_NODE_NONE) return IB_NODE_NONE;
    for (size_t i = 0; i < n_dead; i++) {
        ib_node *d = &g->nodes.data[dead[i]];
        d->dead = true;
        for (uint32_t k = 0; k < d->n_outputs; k++)
            if (d->outputs[k] != IB_VALUE_NONE)
                g->values.data[d->outputs[k]].producer = IB_NODE_NONE;
    }
    ib_node *n = &g->nodes.data[id];
    n->opset = opset;
    for (uint32_t k = 0; k < n_outputs; k++)
        if (outputs[k] != IB_VALUE_NONE) g->values.data[outputs[k]].producer = id;
    return id;
}

/* ---- derived-constant cache -------------------------------------------------- */

struct ib_compile_cache {
    ib_mutex lock; /* sessions on several threads compile from one model */
    ib_arena keys;
    ib_strmap map;
    IB_VEC(ib_tensor *) tensors;
    size_t bytes;
};

int ib_compile_cache_create(ib_compile_cache **out)
{
    ib_compile_cache *c = ib_calloc(1, sizeof *c);
    if (!c) return IB_ENOMEM;
    int rc = ib_mutex_init(&c->lock);
    if (rc) {
        ib_free(c);
        return rc;
    }
    ib_arena_init(&c->keys, 0);
    ib_strmap_init(&c->map);
    *out = c;
    return IB_OK;
}

void ib_compile_cache_destroy(ib_compile_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->tensors.len; i++)
        ib_tensor_free(c->tensors.data[i]);
    IB_VEC_FREE(&c->tensors);
    ib_strmap_deinit(&c->map);
    ib_arena_deinit(&c->keys);
    ib_mutex_destroy(&c->lock);
    ib_free(c);
}

size_t ib_compile_cache_bytes(const ib_compile_cache *c)
{
    if (!c) return 0;
    ib_compile_cache *m = (ib_compile_cache *)(uintptr_t)c; /* the lock only */
    ib_mutex_lock(&m->lock);
    size_t b = c->bytes;
    ib_mutex_unlock(&m->lock);
    return b;
}

const ib_tensor *ib_compile_cache_get(ib_compile_cache *c, const char *key)
{
    int64_t i;
    const ib_tensor *t = NULL;
    if (!c) return NULL;
    ib_mutex_lock(&c->lock);
    if (ib_strmap_get(&c->map, key, &i)) t = c->tensors.data[i];
    ib_mutex_unlock(&c->lock);
    return t;
}

int ib_compile_cache_put(ib_compile_cache *c, const char *key, ib_tensor *t,
                         const ib_tensor **stored)
{
    int64_t i;
    int rc = IB_OK;
    ib_mutex_lock(&c->lock);
    if (ib_strmap_get(&c->map, key, &i)) {
        /* another session computed the same tensor meanwhile: keep that one */
        *stored = c->tensors.data[i];
        ib_tensor_free(t);
        goto out;
    }
    char *k = ib_arena_strdup(&c->keys, key);
    if (!k || IB_VEC_PUSH(&c->tensors, t)) {
        rc = IB_ENOMEM;
        goto out;
    }
    if (ib_strmap_put(&c->map, k, (int64_t)(c->tensors.len - 1))) {
        c->tensors.len--;
        rc = IB_ENOMEM;
        goto out;
    }
    c->bytes += t->nbytes;
    *stored = t;
out:
    ib_mutex_unlock(&c->lock);
    return rc;
}
