/*
 * ref_exec.c - the reference graph interpreter (see ref_exec.h): binds the
 * inputs, walks the nodes in order, infers each node's output shapes from
 * its actual input tensors, allocates one tensor per output, runs the
 * reference kernel and frees every value after its last consumer.
 *
 * No planning and no aliasing: the point is to be obviously right.
 */
#include <string.h>

#include "ir/ref_exec.h"

void ib_ref_exec_options_defaults(ib_ref_exec_options *o)
{
    memset(o, 0, sizeof *o);
}

#define NOREAD (SIZE_MAX - 1) /* r.last[] of a value no node reads */

typedef struct rx {
    const ib_graph *g;
    ib_tensor **vals; /* runtime tensor per value id (owned or borrowed) */
    bool *owned;
    size_t *last; /* index of the last node reading the value (SIZE_MAX: keep) */
    size_t live, peak, allocs;
} rx;

static void rx_release(rx *r, size_t v)
{
    if (r->owned[v] && r->vals[v]) {
        r->live -= r->vals[v]->nbytes;
        ib_tensor_free(r->vals[v]);
    }
    r->vals[v] = NULL;
    r->owned[v] = false;
}

static int check_input(const ib_value *v, const ib_tensor *t, ib_err *err)
{
    char a[160], b[160];
    if (!t) return ib_err_set(err, IB_EINVAL, "graph input '%s' is missing", v->name);
    if (t->desc.ndim < 0 || t->desc.ndim > IB_MAX_DIMS || ib_tensor_desc_numel(&t->desc) < 0)
        return ib_err_set(err, IB_EINVAL, "graph input '%s' has an invalid shape", v->name);
    if (ib_tensor_desc_nbytes(&t->desc) > t->nbytes)
        return ib_err_set(err, IB_EINVAL, "graph input '%s': %zu bytes given, %s needs %zu",
                          v->name, t->nbytes, ib_tensor_desc_str(&t->desc, a, sizeof a),
                          ib_tensor_desc_nbytes(&t->desc));
    if (!v->shape_known) return IB_OK;
    bool ok = v->desc.dtype == t->desc.dtype && v->desc.ndim == t->desc.ndim;
    for (int32_t i = 0; ok && i < v->desc.ndim; i++)
        if (v->desc.dims[i] >= 0 && v->desc.dims[i] != t->desc.dims[i]) ok = false;
    if (!ok)
        return ib_err_set(err, IB_EINVAL, "graph input '%s' is declared %s but %s was given",
                          v->name, ib_tensor_desc_str(&v->desc, a, sizeof a),
                          ib_tensor_desc_str(&t->desc, b, sizeof b));
    return IB_OK;
}

/* Run one node: gather inputs, infer, allocate outputs, run the kernel. */
static int run_node(rx *r, size_t ni, const ib_ref_exec_options *opts, ib_err *err)
{
    const ib_graph *g = r->g;
    const ib_node *n = &g->nodes.data[ni];
    enum { MAXIO = 64 };
    const ib_tensor *in[MAXIO];
    ib_tensor *out[MAXIO];
    ib_tensor_desc od[MAXIO];
    if (n->n_inputs > MAXIO || n->n_outputs > MAXIO)
        return ib_err_set(err, IB_EUNSUPPORTED, "node '%s' (%s): more than %d inputs or outputs",
                          n->name, n->op_type, MAXIO);
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        ib_value_id v = n->inputs[i];
        in[i] = NULL;
        if (v == IB_VALUE_NONE) continue;
        if (v < 0 || (size_t)v >= g->values.len || !r->vals[v])
            return ib_err_set(err, IB_EFORMAT,
                              "node '%s' (%s): input %u ('%s') is not available (graph not in "
                              "topological order, or a value nobody produces)",
                              n->name, n->op_type, i,
                              v >= 0 && (size_t)v < g->values.len ? g->values.data[v].name : "?");
        in[i] = r->vals[v];
    }
    bool dd = false;
    int rc = ib_op_infer_tensors(g, n, in, n->n_inputs, od, n->n_outputs, &dd, err);
    if (rc) return rc;
    for (uint32_t o = 0; o < n->n_outputs; o++) {
        out[o] = NULL;
        ib_value_id v = n->outputs[o];
        if (v == IB_VALUE_NONE) continue;
        if (v < 0 || (size_t)v >= g->values.len || r->vals[v])
            return ib_err_set(err, IB_EFORMAT,
                              "node '%s' (%s): output %u is invalid or produced twice", n->name,
                              n->op_type, o);
        if (ib_tensor_desc_numel(&od[o]) < 0) {
            char s[160];
            return ib_err_set(err, IB_EUNSUPPORTED,
                              "node '%s' (%s): output %u shape %s is unknown at run time", n->name,
                              n->op_type, o, ib_tensor_desc_str(&od[o], s, sizeof s));
        }
        if ((rc = ib_tensor_alloc(&od[o], &out[o]))) {
            char s[160];
            return ib_err_set(err, rc, "node '%s' (%s): cannot allocate output %u %s", n->name,
                              n->op_type, o, ib_tensor_desc_str(&od[o], s, sizeof s));
        }
        r->vals[v] = out[o];
        r->owned[v] = true;
        r->live += out[o]->nbytes;
        r->allocs++;
        if (r->live > r->peak) r->peak = r->live;
    }
    rc = ib_op_run_reference(g, n, in, n->n_inputs, out, n->n_outputs, err);
    if (rc) return rc;
    for (uint32_t o = 0; dd && o < n->n_outputs; o++)
        if (out[o] && ib_tensor_desc_nbytes(&out[o]->desc) <= out[o]->nbytes) {
            r->live -= out[o]->nbytes - ib_tensor_desc_nbytes(&out[o]->desc);
            out[o]->nbytes = ib_tensor_desc_nbytes(&out[o]->desc);
        }
    if (opts && opts->on_node &&
        opts->on_node(opts->user, g, n, (const ib_tensor *const *)out, n->n_outputs))
        return ib_err_set(err, IB_ECANCELED, "run stopped by the callback after node '%s'",
                          n->name);
    return IB_OK;
}

/* A graph output: move the tensor out, or copy it when it is borrowed or
 * listed twice. */
static int take_output(rx *r, ib_value_id v, ib_tensor **dst, ib_err *err)
{
    const ib_graph *g = r->g;
    if (v < 0 || (size_t)v >= g->values.len || !r->vals[v])
        return ib_err_set(err, IB_EFORMAT, "graph output '%s' was never produced",
                          v >= 0 && (size_t)v < g->values.len ? g->values.data[v].name : "?");
    ib_tensor *t = r->vals[v];
    if (r->owned[v]) {
        *dst = t;
        r->owned[v] = false; /* a second listing copies */
        return IB_OK;
    }
    int rc = ib_tensor_alloc(&t->desc, dst);
    if (rc) return ib_err_set(err, rc, "out of memory copying output '%s'", g->values.data[v].name);
    if (t->nbytes && (*dst)->nbytes)
        memcpy((*dst)->data, t->data, IB_MIN(t->nbytes, (*dst)->nbytes));
    return IB_OK;
}

int ib_ref_exec_run(const ib_graph *g, const ib_tensor *const *inputs, size_t n_inputs,
                    ib_tensor **outputs, size_t n_outputs, const ib_ref_exec_options *opts,
                    ib_err *err)
{
    for (size_t i = 0; i < n_outputs; i++)
        outputs[i] = NULL;
    if (n_inputs != g->inputs.len)
        return ib_err_set(err, IB_EINVAL, "the graph has %zu inputs, %zu given", g->inputs.len,
                          n_inputs);
    if (n_outputs != g->outputs.len)
        return ib_err_set(err, IB_EINVAL, "the graph has %zu outputs, %zu requested",
                          g->outputs.len, n_outputs);
    size_t nv = g->values.len, nn = g->nodes.len;
    rx r = {g, NULL, NULL, NULL, 0, 0, 0};
    int rc = IB_ENOMEM;
    r.vals = ib_calloc(nv ? nv : 1, sizeof *r.vals);
    r.owned = ib_calloc(nv ? nv : 1, sizeof *r.owned);
    r.last = ib_calloc(nv ? nv : 1, sizeof *r.last);
    if (!r.vals || !r.owned || !r.last) {
        ib_err_set(err, rc, "out of memory starting the run");
        goto fail;
    }
    for (size_t v = 0; v < nv; v++)
        r.last[v] = NOREAD;
    for (size_t i = 0; i < nn; i++) {
        const ib_node *n = &g->nodes.data[i];
        for (uint32_t k = 0; !n->dead && k < n->n_inputs; k++)
            if (n->inputs[k] >= 0 && (size_t)n->inputs[k] < nv) r.last[n->inputs[k]] = i;
    }
    for (size_t i = 0; i < g->outputs.len; i++)
        if (g->outputs.data[i] >= 0 && (size_t)g->outputs.data[i] < nv)
            r.last[g->outputs.data[i]] = SIZE_MAX;
    for (size_t v = 0; v < nv; v++)
        if (g->values.data[v].constant) r.vals[v] = g->values.data[v].constant;
    for (size_t i = 0; i < n_inputs; i++) {
        ib_value_id v = g->inputs.data[i];
        if (v < 0 || (size_t)v >= nv) {
            rc = ib_err_set(err, IB_EFORMAT, "graph input %zu has an invalid value id", i);
            goto fail;
        }
        if ((rc = check_input(&g->values.data[v], inputs[i], err))) goto fail;
        r.vals[v] = (ib_tensor *)(uintptr_t)inputs[i]; /* borrowed, never written */
    }
    size_t ran = 0;
    for (size_t i = 0; i < nn; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        if ((rc = run_node(&r, i, opts, err))) goto fail;
        ran++;
        for (uint32_t k = 0; k < n->n_inputs; k++) /* liveness: drop dead values */
            if (n->inputs[k] >= 0 && r.last[n->inputs[k]] == i)
                rx_release(&r, (size_t)n->inputs[k]);
        for (uint32_t k = 0; k < n->n_outputs; k++) /* outputs nobody reads */
            if (n->outputs[k] >= 0 && r.last[n->outputs[k]] == NOREAD)
                rx_release(&r, (size_t)n->outputs[k]);
    }
    for (size_t i = 0; i < n_outputs; i++)
        if ((rc = take_output(&r, g->outputs.data[i], &outputs[i], err))) goto fail;
    if (opts && opts->stats) {
        opts->stats->peak_bytes = r.peak;
        opts->stats->allocations = r.allocs;
        opts->stats->nodes_run = ran;
    }
    rc = IB_OK;
fail:
    if (rc)
        for (size_t i = 0; i < n_outputs; i++) {
            ib_tensor_free(outputs[i]);
            outputs[i] = NULL;
        }
    for (size_t v = 0; r.vals && v < nv; v++)
        rx_release(&r, v);
    ib_free(r.vals);
    ib_free(r.owned);
    ib_free(r.last);
    return rc;
}
