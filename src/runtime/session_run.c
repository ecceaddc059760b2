/*
 * session_run.c - ib_session_run: match the caller's named inputs to the
 * graph inputs and check their types and shapes, pick (or on first use
 * build) the variant for those shapes, feed the inputs, run the segments in
 * order with their boundary copies, and copy the requested outputs out.
 *
 * After the first run at a given set of shapes nothing here allocates: the
 * variant, its bindings, copies and the staging buffer were all prepared
 * when it was built (tests check this with a counting allocator).
 */
#include <string.h>

#include "base/time.h"
#include "runtime/session_impl.h"

int ib_session_read_slot(ib_session *s, uint32_t backend, size_t offset, void *dst, size_t n,
                         ib_err *err)
{
    return ib_backend_tensor_get(s->arena[backend], offset, dst, n, err);
}

static int do_copy(ib_session *s, const ib_copy *c, ib_err *err)
{
    unsigned char *sp = ib_backend_buffer_host_ptr(s->arena[c->src_b]);
    unsigned char *dp = ib_backend_buffer_host_ptr(s->arena[c->dst_b]);
    if (sp && dp) {
        memcpy(dp + c->dst_off, sp + c->src_off, c->nbytes);
        return IB_OK;
    }
    if (sp)
        return ib_backend_tensor_set(s->arena[c->dst_b], c->dst_off, sp + c->src_off, c->nbytes,
                                     err);
    if (dp)
        return ib_backend_tensor_get(s->arena[c->src_b], c->src_off, dp + c->dst_off, c->nbytes,
                                     err);
    int rc = ib_backend_tensor_get(s->arena[c->src_b], c->src_off, s->staging, c->nbytes, err);
    if (!rc) rc = ib_backend_tensor_set(s->arena[c->dst_b], c->dst_off, s->staging, c->nbytes, err);
    return rc;
}

int ib_session_run_variant(ib_session *s, ib_variant *v, const ib_tensor_view *const *in_views,
                           ib_err *err)
{
    const ib_graph *g = v->g;
    int rc;
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_input_slot *in = &v->ins[i];
        for (uint32_t f = 0; f < in->n_feeds; f++)
            if (in->nbytes &&
                (rc = ib_backend_tensor_set(s->arena[in->feeds[f].backend], in->feeds[f].offset,
                                            in_views[i]->data, in->nbytes, err)))
                return rc;
    }
    bool dirty[IB_SESSION_MAX_BACKENDS] = {false};
    for (uint32_t k = 0; k < v->n_segs; k++) {
        ib_seg_exec *se = &v->segs[k];
        int64_t t0 = 0;
        if (s->profiling) {
            ib_session_prof_seg(se);
            t0 = ib_time_ns();
        }
        for (uint32_t c = 0; c < se->n_copies; c++) {
            uint32_t sb = se->copies[c].src_b;
            /* the producer may still be running (asynchronous backends) */
            if (dirty[sb]) {
                if ((rc = ib_backend_synchronize(s->backends[sb], err))) return rc;
                dirty[sb] = false;
            }
            if ((rc = do_copy(s, &se->copies[c], err))) return rc;
        }
        int64_t t1 = s->profiling ? ib_time_ns() : 0;
        if ((rc = ib_backend_graph_run(se->exec, err))) return rc;
        dirty[se->backend] = true;
        if (s->profiling) { /* the segment's whole time: wait for it */
            if ((rc = ib_backend_synchronize(s->backends[se->backend], err))) return rc;
            dirty[se->backend] = false;
            int64_t t2 = ib_time_ns();
            se->prof_copy_ns += t1 - t0;
            se->prof_ns += t2 - t1;
            se->prof_runs++;
        }
    }
    for (uint32_t b = 0; b < s->n_backends; b++)
        if (dirty[b] && (rc = ib_backend_synchronize(s->backends[b], err))) return rc;
    return IB_OK;
}

/* Check one input view against the declared input. */
static int check_input(const ib_session *s, const ib_value *decl, const ib_tensor_view *view,
                       ib_err *err)
{
    char a[160], b[160];
    const ib_tensor_desc *d = &view->desc;
    if (d->dtype != decl->desc.dtype)
        return ib_err_set(err, IB_EINVAL, "input '%s': expected %s, got %s", decl->name,
                          ib_dtype_name(decl->desc.dtype), ib_dtype_name(d->dtype));
    bool ok = d->ndim == decl->desc.ndim;
    int32_t bad = -1;
    for (int32_t k = 0; ok && k < d->ndim; k++)
        if (d->dims[k] < 0 || (decl->desc.dims[k] >= 0 && decl->desc.dims[k] != d->dims[k]))
            ok = false, bad = k;
    if (!ok) {
        if (bad >= 0)
            return ib_err_set(err, IB_EINVAL, "input '%s': expected shape %s, got %s (dim %d)",
                              decl->name, ib_tensor_desc_str(&decl->desc, a, sizeof a),
                              ib_tensor_desc_str(d, b, sizeof b), (int)bad);
        return ib_err_set(err, IB_EINVAL, "input '%s': expected shape %s (rank %d), got %s",
                          decl->name, ib_tensor_desc_str(&decl->desc, a, sizeof a),
                          (int)decl->desc.ndim, ib_tensor_desc_str(d, b, sizeof b));
    }
    if (d->ndim > 0 && decl->desc.dims[0] < 0 && d->dims[0] > s->opts.max_batch)
        return ib_err_set(err, IB_EINVAL,
                          "input '%s': batch %lld exceeds the session's max_batch %lld", decl->name,
                          (long long)d->dims[0], (long long)s->opts.max_batch);
    if (!view->data && ib_tensor_desc_nbytes(d) > 0)
        return ib_err_set(err, IB_EINVAL, "input '%s': data is NULL", decl->name);
    return IB_OK;
}

int ib_session_match_inputs(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                            ib_err *err)
{
    const ib_graph *g = ib_model_graph(s->model);
    for (size_t i = 0; i < g->inputs.len; i++)
        s->in_views[i] = NULL;
    for (size_t j = 0; j < n_inputs; j++) {
        const char *name = inputs[j].name;
        size_t i = 0;
        while (i < g->inputs.len &&
               (!name || strcmp(g->values.data[g->inputs.data[i]].name, name) != 0))
            i++;
        if (i == g->inputs.len)
            return ib_err_set(err, IB_ENOTFOUND,
                              "unknown input '%s' (the model has %zu inputs; "
                              "see ib_model_input)",
                              name ? name : "(null)", g->inputs.len);
        if (s->in_views[i]) return ib_err_set(err, IB_EINVAL, "input '%s' given twice", name);
        s->in_views[i] = &inputs[j];
    }
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_value *decl = &g->values.data[g->inputs.data[i]];
        if (!s->in_views[i])
            return ib_err_set(err, IB_EINVAL, "missing input '%s' (%s)", decl->name,
                              ib_dtype_name(decl->desc.dtype));
        int rc = check_input(s, decl, s->in_views[i], err);
        if (rc) return rc;
        s->key[i] = s->in_views[i]->desc;
    }
    return IB_OK;
}

static int fetch_output(ib_session *s, ib_variant *v, ib_tensor_view *view, ib_err *err)
{
    const ib_graph *g = v->g;
    size_t i = 0;
    while (i < g->outputs.len &&
           (!view->name || strcmp(g->values.data[g->outputs.data[i]].name, view->name) != 0))
        i++;
    if (i == g->outputs.len)
        return ib_err_set(err, IB_ENOTFOUND, "unknown output '%s'",
                          view->name ? view->name : "(null)");
    const ib_output_slot *o = &v->outs[i];
    ib_tensor_desc d = o->desc;
    if (o->kind == IB_OUT_ARENA && o->producer)
        ib_backend_graph_value_desc(o->producer, o->value, &d); /* data-dependent dims */
    size_t n = ib_tensor_desc_nbytes(&d);
    if (n > o->nbytes) n = o->nbytes, d = o->desc; /* a backend reporting more than it reserved */
    if (n > view->capacity || (n && !view->data)) {
        char a[160];
        return ib_err_set(err, IB_EINVAL, "output '%s' (%s) needs %zu bytes, capacity is %zu",
                          view->name, ib_tensor_desc_str(&d, a, sizeof a), n, view->capacity);
    }
    view->desc = d;
    if (!n) return IB_OK;
    switch (o->kind) {
    case IB_OUT_CONST:
        memcpy(view->data, o->const_data, n);
        return IB_OK;
    case IB_OUT_INPUT:
        memcpy(view->data, s->in_views[o->input_index]->data, n);
        return IB_OK;
    default:
        return ib_backend_tensor_get(s->arena[o->backend], o->offset, view->data, n, err);
    }
}

int ib_session_run(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                   ib_tensor_view *outputs, size_t n_outputs, ib_err *err)
{
    if (!s || (n_inputs && !inputs) || (n_outputs && !outputs))
        return ib_err_set(err, IB_EINVAL, "ib_session_run: NULL argument");
    int rc = ib_session_match_inputs(s, inputs, n_inputs, err);
    if (rc) return rc;
    ib_variant *v;
    if ((rc = ib_session_variant_for(s, s->key, &v, err))) return rc;
    int64_t t0 = s->profiling ? ib_time_ns() : 0;
    if ((rc = ib_session_run_variant(s, v, s->in_views, err))) return rc;
    for (size_t j = 0; j < n_outputs; j++)
        if ((rc = fetch_output(s, v, &outputs[j], err))) return rc;
    if (s->profiling) {
        s->prof_run_ns += ib_time_ns() - t0;
        s->prof_runs++;
    }
    return IB_OK;
}
