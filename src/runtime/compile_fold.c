/*
 * compile_fold.c - constant folding, one node at a time (called by the infer
 * pass right after a node's shapes are known).
 *
 * A node folds when every present input is constant (or, for Shape and Size,
 * when its input's dims are all known), its op has a reference kernel and
 * its outputs are not too large: the reference kernel runs now and the
 * outputs become constants. Results that depend only on the model's own
 * weights (a Transpose of an initializer) are kept in the session's
 * derived-constant cache under "fold:<output name>", so every batch size
 * compiled later borrows the same tensor. Results that depend on bound dims
 * (Shape chains) belong to the compiled graph.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"
#include "ir/op.h"

#define FOLD_DEFAULT_MAX ((size_t)256 << 20)
#define FOLD_CACHE_MIN   4096 /* smaller results are cheap to recompute */

static bool is_pure(const ib_pass_ctx *c, ib_value_id v)
{
    return v >= 0 && (size_t)v < c->pure.len && c->pure.data[v];
}

static int set_pure(ib_pass_ctx *c, ib_value_id v, bool p)
{
    while (c->pure.len <= (size_t)v)
        if (IB_VEC_PUSH(&c->pure, false)) return IB_ENOMEM;
    c->pure.data[v] = p;
    return IB_OK;
}

static bool concrete(const ib_tensor_desc *d)
{
    for (int32_t k = 0; k < d->ndim; k++)
        if (d->dims[k] < 0) return false;
    return true;
}

static void kill_node(ib_pass_ctx *c, ib_node *n)
{
    n->dead = true;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] != IB_VALUE_NONE)
            c->g->values.data[n->outputs[k]].producer = IB_NODE_NONE;
    if (c->stats) c->stats->folded++;
}

/* Shape (with opset-15 start/end) and Size need only the input's dims. */
static int fold_shape(ib_pass_ctx *c, ib_node *n, bool *folded)
{
    ib_graph *g = c->g;
    if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] == IB_VALUE_NONE ||
        n->outputs[0] == IB_VALUE_NONE)
        return IB_OK;
    const ib_tensor_desc *in = &g->values.data[n->inputs[0]].desc;
    if (!g->values.data[n->inputs[0]].shape_known || !concrete(in)) return IB_OK;
    bool size = strcmp(n->op_type, "Size") == 0;
    int64_t start = 0, end = in->ndim;
    if (!size) {
        start = ib_node_attr_int(n, "start", 0);
        end = ib_node_attr_int(n, "end", in->ndim);
        if (start < 0) start += in->ndim;
        if (end < 0) end += in->ndim;
        start = start < 0 ? 0 : (start > in->ndim ? in->ndim : start);
        end = end < start ? start : (end > in->ndim ? in->ndim : end);
    }
    ib_tensor_desc d = {IB_DTYPE_INT64, size ? 0 : 1, {end - start}};
    ib_tensor *t;
    if (ib_tensor_alloc(&d, &t))
        return ib_err_set(c->err, IB_ENOMEM, "out of memory folding node '%s'", n->name);
    int64_t *p = t->data;
    if (size)
        p[0] = ib_tensor_desc_numel(in);
    else
        for (int64_t k = start; k < end; k++)
            p[k - start] = in->dims[k];
    ib_value_id out = n->outputs[0];
    if (ib_graph_set_constant(g, out, t)) {
        ib_tensor_free(t);
        return ib_err_set(c->err, IB_ENOMEM, "out of memory folding node '%s'", n->name);
    }
    /* the dims of a constant are the model's own; of a runtime value, bound ones */
    if (set_pure(c, out, is_pure(c, n->inputs[0])))
        return ib_err_set(c->err, IB_ENOMEM, "out of memory folding node '%s'", n->name);
    kill_node(c, n);
    *folded = true;
    return IB_OK;
}

/* Borrow every output from the cache when all are there. */
static bool fold_from_cache(ib_pass_ctx *c, ib_node *n, bool *folded, int *rc)
{
    char key[600];
    const ib_tensor *hit[16];
    if (n->n_outputs > 16) return false;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        hit[k] = NULL;
        if (n->outputs[k] == IB_VALUE_NONE) continue;
        snprintf(key, sizeof key, "fold:%s", c->g->values.data[n->outputs[k]].name);
        if (!(hit[k] = ib_compile_cache_get(c->opts->cache, key))) return false;
    }
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        if (!hit[k]) continue;
        if ((*rc = ib_graph_set_borrowed_constant(c->g, n->outputs[k], hit[k])) ||
            (*rc = set_pure(c, n->outputs[k], true))) {
            ib_err_set(c->err, *rc, "out of memory folding node '%s'", n->name);
            return true;
        }
    }
    kill_node(c, n);
    *folded = true;
    return true;
}

/* Can node n fold, and how many output bytes would it make? */
static bool foldable(ib_pass_ctx *c, const ib_node *n, const ib_op_def **def, size_t *bytes,
                     bool *pure)
{
    const ib_graph *g = c->g;
    if (n->n_inputs == 0 && strcmp(n->op_type, "Constant") != 0)
        return false; /* random generators and the like are not constants */
    *pure = true;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        if (n->inputs[k] == IB_VALUE_NONE) continue;
        const ib_value *v = &g->values.data[n->inputs[k]];
        if (!v->constant || !v->constant->data ||
            (v->constant->nbytes && v->desc.dtype == IB_DTYPE_STRING))
            return false;
        *pure = *pure && is_pure(c, n->inputs[k]);
    }
    *def = ib_op_find(n->domain, n->op_type, n->opset);
    if (!*def || !(*def)->kernel) return false;
    size_t max = c->opts->fold_max_bytes ? c->opts->fold_max_bytes : FOLD_DEFAULT_MAX;
    *bytes = 0;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        if (n->outputs[k] == IB_VALUE_NONE) continue;
        const ib_tensor_desc *d = &g->values.data[n->outputs[k]].desc;
        if (!concrete(d) || d->dtype == IB_DTYPE_STRING || d->dtype == IB_DTYPE_UNDEFINED)
            return false;
        size_t b = ib_tensor_desc_nbytes(d);
        if (b > max || *bytes > max - b) return false;
        *bytes += b;
    }
    return true;
}

static int run_fold(ib_pass_ctx *c, ib_node_id id, bool pure, size_t bytes, bool *folded)
{
    ib_graph *g = c->g;
    ib_node *n = &g->nodes.data[id];
    uint32_t ni = n->n_inputs, no = n->n_outputs;
    const ib_tensor **in = ib_calloc(ni + 1u, sizeof *in);
    ib_tensor **out = ib_calloc(no + 1u, sizeof *out);
    int rc = IB_ENOMEM;
    if (!in || !out) goto done;
    for (uint32_t k = 0; k < ni; k++)
        in[k] = n->inputs[k] == IB_VALUE_NONE ? NULL : g->values.data[n->inputs[k]].constant;
    for (uint32_t k = 0; k < no; k++)
        if (n->outputs[k] != IB_VALUE_NONE &&
            ib_tensor_alloc(&g->values.data[n->outputs[k]].desc, &out[k]))
            goto done;
    ib_err kerr;
    rc = ib_op_run_reference(g, n, in, ni, out, no, &kerr);
    if (rc == IB_EUNSUPPORTED) {
        rc = IB_OK; /* the reference kernel lacks this dtype: leave it to the backend */
        goto done;
    }
    if (rc) {
        rc = ib_err_set(c->err, rc, "folding constant node '%s' (%s): %s", n->name, n->op_type,
                        kerr.msg);
        goto done;
    }
    bool cache = pure && c->opts->cache && bytes >= FOLD_CACHE_MIN;
    for (uint32_t k = 0; k < no; k++) {
        if (!out[k]) continue;
        ib_value_id v = n->outputs[k];
        out[k]->nbytes = ib_tensor_desc_nbytes(&out[k]->desc); /* data-dependent dims */
        if (cache) {
            char key[600];
            const ib_tensor *stored;
            snprintf(key, sizeof key, "fold:%s", g->values.data[v].name);
            if ((rc = ib_compile_cache_put(c->opts->cache, key, out[k], &stored))) goto done;
            out[k] = NULL; /* the cache owns it now */
            rc = ib_graph_set_borrowed_constant(g, v, stored);
        } else {
            rc = ib_graph_set_constant(g, v, out[k]);
            if (!rc) out[k] = NULL;
        }
        if (rc || (rc = set_pure(c, v, pure))) goto done;
    }
    kill_node(c, &g->nodes.data[id]);
    *folded = true;
done:
    if (rc == IB_ENOMEM)
        ib_err_set(c->err, rc, "out of memory folding node '%s'", g->nodes.data[id].name);
    for (uint32_t k = 0; out && k < no; k++)
        ib_tensor_free(out[k]);
    ib_free(in);
    ib_free(out);
    return rc;
}

int ib_fold_node(ib_pass_ctx *c, ib_node_id id, bool *folded)
{
    *folded = false;
    ib_node *n = &c->g->nodes.data[id];
    if (c->opts->no_fold || n->dead || n->domain[0]) return IB_OK;
    if (!strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size"))
        return fold_shape(c, n, folded);
    const ib_op_def *def;
    size_t bytes;
    bool pure;
    if (!foldable(c, n, &def, &bytes, &pure)) return IB_OK;
    if (pure && c->opts->cache && bytes >= FOLD_CACHE_MIN) {
        int rc = IB_OK;
        if (fold_from_cache(c, n, folded, &rc)) return rc;
    }
    return run_fold(c, id, pure, bytes, folded);
}
