/*
 * compile_infer.c - the bind and infer passes.
 *
 * bind fixes the dynamic dims of the graph inputs: from explicit input
 * shapes, from named symbolic dims (dim_param), or the batch for dim 0.
 * infer walks the live nodes in topological order and sets every output's
 * type and shape through the op registry (ib_op_infer); with folding on it
 * folds each node whose inputs are constant right after inferring it, so
 * that later nodes see the constants (Reshape's shape computed by a
 * Shape->Gather->Unsqueeze->Concat chain).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/compile.h"
#include "ir/op.h"

static const char *dim_name(const ib_value *v, int k)
{
    return v->dim_param[k] ? v->dim_param[k] : "";
}

/* Check an explicit shape against the declared one and apply it. */
static int bind_explicit(ib_pass_ctx *c, ib_value *v, const ib_tensor_desc *want)
{
    char a[160], b[160];
    bool ok = want->ndim == v->desc.ndim &&
              (v->desc.dtype == IB_DTYPE_UNDEFINED || want->dtype == v->desc.dtype);
    for (int32_t k = 0; ok && k < want->ndim; k++)
        ok = want->dims[k] >= 0 && (v->desc.dims[k] < 0 || v->desc.dims[k] == want->dims[k]);
    if (!ok)
        return ib_err_set(c->err, IB_EINVAL, "input '%s': the model declares %s, got %s", v->name,
                          ib_tensor_desc_str(&v->desc, a, sizeof a),
                          ib_tensor_desc_str(want, b, sizeof b));
    v->desc = *want;
    v->shape_known = true;
    return IB_OK;
}

int ib_pass_bind(ib_pass_ctx *c)
{
    ib_graph *g = c->g;
    const ib_compile_options *o = c->opts;
    for (size_t i = 0; i < g->inputs.len; i++) {
        ib_value *v = &g->values.data[g->inputs.data[i]];
        if (o->input_shapes) {
            int rc = bind_explicit(c, v, &o->input_shapes[i]);
            if (rc) return rc;
            continue;
        }
        if (!v->shape_known || v->desc.dtype == IB_DTYPE_UNDEFINED)
            return ib_err_set(c->err, IB_EFORMAT, "input '%s' has no declared type", v->name);
        for (int32_t k = 0; k < v->desc.ndim; k++) {
            if (v->desc.dims[k] >= 0) continue;
            bool bound = false;
            for (size_t d = 0; d < o->n_dims && v->dim_param[k]; d++)
                if (o->dims[d].name && strcmp(o->dims[d].name, v->dim_param[k]) == 0) {
                    if (o->dims[d].value < 0)
                        return ib_err_set(c->err, IB_EINVAL, "dim '%s' bound to %lld",
                                          o->dims[d].name, (long long)o->dims[d].value);
                    v->desc.dims[k] = o->dims[d].value;
                    bound = true;
                    break;
                }
            if (!bound && k == 0 && o->batch > 0) {
                v->desc.dims[0] = o->batch;
                bound = true;
            }
            if (!bound && !o->allow_dynamic)
                return ib_err_set(c->err, IB_EINVAL,
                                  "input '%s' dim %d ('%s') is dynamic and was not bound: pass "
                                  "the input's shape or bind the dim by name",
                                  v->name, (int)k, dim_name(v, k));
        }
    }
    return IB_OK;
}

/* Scratch arrays for one node's inputs/outputs (nodes may have many inputs). */
typedef struct infer_bufs {
    IB_VEC(const ib_tensor_desc *) in;
    IB_VEC(const ib_tensor *) cin;
    IB_VEC(ib_tensor_desc) out;
} infer_bufs;

static int bufs_fit(infer_bufs *b, uint32_t n_in, uint32_t n_out)
{
    if (IB_VEC_RESERVE(&b->in, n_in + 1u) || IB_VEC_RESERVE(&b->cin, n_in + 1u) ||
        IB_VEC_RESERVE(&b->out, n_out + 1u))
        return IB_ENOMEM;
    return IB_OK;
}

static bool desc_concrete(const ib_tensor_desc *d)
{
    for (int32_t k = 0; k < d->ndim; k++)
        if (d->dims[k] < 0) return false;
    return true;
}

static int infer_node(ib_pass_ctx *c, ib_node_id id, infer_bufs *b, bool *complete)
{
    ib_graph *g = c->g;
    ib_node *n = &g->nodes.data[id];
    if (bufs_fit(b, n->n_inputs, n->n_outputs))
        return ib_err_set(c->err, IB_ENOMEM, "out of memory inferring node '%s'", n->name);
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        b->in.data[k] = NULL;
        b->cin.data[k] = NULL;
        if (n->inputs[k] == IB_VALUE_NONE) continue;
        const ib_value *v = &g->values.data[n->inputs[k]];
        if (!v->shape_known)
            return ib_err_set(c->err, IB_EFORMAT,
                              "node '%s' (%s): input %u '%s' has no known type (it is not a "
                              "graph input, an initializer or the output of an earlier node)",
                              n->name, n->op_type, k, v->name);
        b->in.data[k] = &v->desc;
        b->cin.data[k] = v->constant;
    }
    memset(b->out.data, 0, (n->n_outputs + 1u) * sizeof *b->out.data);
    bool dd = false;
    int rc = ib_op_infer(g, n, b->in.data, b->cin.data, n->n_inputs, b->out.data, n->n_outputs, &dd,
                         c->err);
    if (rc) return rc;
    n = &g->nodes.data[id];
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        if (n->outputs[k] == IB_VALUE_NONE) continue;
        ib_value *v = &g->values.data[n->outputs[k]];
        v->desc = b->out.data[k];
        v->shape_known = true;
        if (!desc_concrete(&v->desc)) *complete = false;
    }
    return IB_OK;
}

int ib_pass_infer(ib_pass_ctx *c, bool fold)
{
    ib_graph *g = c->g;
    infer_bufs b;
    memset(&b, 0, sizeof b);
    bool complete = true;
    int rc = IB_OK;
    for (size_t i = 0; i < g->inputs.len; i++)
        if (!desc_concrete(&g->values.data[g->inputs.data[i]].desc)) complete = false;
    for (size_t i = 0; i < g->nodes.len; i++) {
        if (g->nodes.data[i].dead) continue;
        rc = infer_node(c, (ib_node_id)i, &b, &complete);
        if (rc) break;
        if (fold) {
            bool folded = false;
            rc = ib_fold_node(c, (ib_node_id)i, &folded);
            if (rc) break;
        }
    }
    if (c->stats) c->stats->shapes_complete = complete;
    IB_VEC_FREE(&b.in);
    IB_VEC_FREE(&b.cin);
    IB_VEC_FREE(&b.out);
    return rc;
}
