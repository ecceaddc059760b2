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
    int64_t t_in = ib_time_ns();
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_input_slot *in = &v->ins[i];
        if (!in_views[i])
            continue; /* fed from the previous run's output (ib_session_run_fed) */
        for (uint32_t f = 0; f < in->n_feeds; f++)
            if (in->nbytes &&
                (rc = ib_backend_tensor_set(s->arena[in->feeds[f].backend], in->feeds[f].offset,
                                            in_views[i]->data, in->nbytes, err)))
                return rc;
    }
    int64_t t_compute = ib_time_ns();
    s->times.inputs_ns += t_compute - t_in;
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
    s->times.compute_ns += ib_time_ns() - t_compute;
    s->times.runs++;
    return IB_OK;
}

ib_tensor_desc ib_session_output_desc(const ib_output_slot *o)
{
    ib_tensor_desc d = o->desc;
    if (o->kind == IB_OUT_ARENA && o->producer)
        ib_backend_graph_value_desc(o->producer, o->value, &d); /* data-dependent dims */
    /* a backend reporting more than it reserved: the bound shape */
    return ib_tensor_desc_nbytes(&d) > o->nbytes ? o->desc : d;
}

int ib_session_fed_staging(ib_session *s, size_t n, const char *what, ib_err *err)
{
    if (n <= s->fed_staging_cap)
        return IB_OK;
    unsigned char *p = ib_realloc(s->fed_staging, n);
    if (!p)
        return ib_err_set(err, IB_ENOMEM, "out of memory for %zu bytes of %s", n, what);
    s->fed_staging = p;
    s->fed_staging_cap = n;
    return IB_OK;
}

/* Check one input view against the declared input. */
int ib_session_check_input(const ib_session *s, const ib_value *decl, const ib_tensor_view *view,
                           ib_err *err)
{
    int rc = ib_session_check_desc(s, decl, &view->desc, err);
    if (!rc && !view->data && ib_tensor_desc_nbytes(&view->desc) > 0)
        return ib_err_set(err, IB_EINVAL, "input '%s': data is NULL", decl->name);
    return rc;
}

int ib_session_check_desc(const ib_session *s, const ib_value *decl, const ib_tensor_desc *d,
                          ib_err *err)
{
    char a[160], b[160];
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
    return IB_OK;
}

size_t ib_session_index_of(const ib_graph *g, const ib_value_id *ids, size_t n,
                           const char *name)
{
    size_t i = 0;
    while (i < n && (!name || strcmp(g->values.data[ids[i]].name, name) != 0))
        i++;
    return i;
}

/* s->in_views[i] = the caller's view of input i, NULL for those not given. */
int ib_session_place_views(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                           ib_err *err)
{
    const ib_graph *g = ib_model_graph(s->model);
    for (size_t i = 0; i < g->inputs.len; i++)
        s->in_views[i] = NULL;
    for (size_t j = 0; j < n_inputs; j++) {
        const char *name = inputs[j].name;
        size_t i = ib_session_index_of(g, g->inputs.data, g->inputs.len, name);
        if (i == g->inputs.len)
            return ib_err_set(err, IB_ENOTFOUND,
                              "unknown input '%s' (the model has %zu inputs; "
                              "see ib_model_input)",
                              name ? name : "(null)", g->inputs.len);
        if (s->in_views[i]) return ib_err_set(err, IB_EINVAL, "input '%s' given twice", name);
        s->in_views[i] = &inputs[j];
    }
    return IB_OK;
}

int ib_session_key_given(ib_session *s, const bool *skip, const char *missing_note,
                         ib_err *err)
{
    const ib_graph *g = ib_model_graph(s->model);
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_value *decl = &g->values.data[g->inputs.data[i]];
        if (skip && skip[i])
            continue;
        if (!s->in_views[i])
            return ib_err_set(err, IB_EINVAL, "missing input '%s' (%s)%s", decl->name,
                              ib_dtype_name(decl->desc.dtype), missing_note);
        int rc = ib_session_check_input(s, decl, s->in_views[i], err);
        if (rc) return rc;
        s->key[i] = s->in_views[i]->desc;
    }
    return IB_OK;
}

int ib_session_match_inputs(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                            ib_err *err)
{
    int prc = ib_session_place_views(s, inputs, n_inputs, err);
    if (prc) return prc;
    return ib_session_key_given(s, NULL, "", err);
}

static int fetch_output(ib_session *s, ib_variant *v, ib_tensor_view *view, ib_err *err)
{
    const ib_graph *g = v->g;
    size_t i = ib_session_index_of(g, g->outputs.data, g->outputs.len, view->name);
    if (i == g->outputs.len)
        return ib_err_set(err, IB_ENOTFOUND, "unknown output '%s'",
                          view->name ? view->name : "(null)");
    const ib_output_slot *o = &v->outs[i];
    ib_tensor_desc d = ib_session_output_desc(o);
    size_t n = ib_tensor_desc_nbytes(&d);
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
        if (!s->in_views[o->input_index]) { /* a fed input: its bytes are in its slot */
            const ib_feed *f = &v->ins[o->input_index].feeds[0];
            if (!v->ins[o->input_index].n_feeds)
                return ib_err_set(err, IB_EUNSUPPORTED, "output '%s': a fed input with no slot",
                                  view->name);
            return ib_backend_tensor_get(s->arena[f->backend], f->offset, view->data, n, err);
        }
        memcpy(view->data, s->in_views[o->input_index]->data, n);
        return IB_OK;
    default:
        return ib_backend_tensor_get(s->arena[o->backend], o->offset, view->data, n, err);
    }
}

/* Run variant v (inputs already matched into s->in_views; fed ones NULL and already in
 * place) and fetch the outputs; the last successful run's variant is remembered for
 * ib_session_run_fed. */
int ib_session_run_and_fetch(ib_session *s, ib_variant *v, ib_tensor_view *outputs,
                             size_t n_outputs, ib_err *err)
{
    s->last_run = NULL;
    int64_t t0 = s->profiling ? ib_time_ns() : 0;
    int rc = ib_session_run_variant(s, v, s->in_views, err);
    if (rc) return rc;
    int64_t t_out = ib_time_ns();
    for (size_t j = 0; j < n_outputs; j++)
        if ((rc = fetch_output(s, v, &outputs[j], err))) return rc;
    s->times.outputs_ns += ib_time_ns() - t_out;
    if (s->profiling) {
        s->prof_run_ns += ib_time_ns() - t0;
        s->prof_runs++;
    }
    s->last_run = v;
    return IB_OK;
}

int ib_session_run(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                   ib_tensor_view *outputs, size_t n_outputs, ib_err *err)
{
    if (!s || (n_inputs && !inputs) || (n_outputs && !outputs))
        return ib_err_set(err, IB_EINVAL, "ib_session_run: NULL argument");
    s->last_run = NULL; /* a build below may evict it or move the arenas */
    int rc = ib_session_match_inputs(s, inputs, n_inputs, err);
    if (rc) return rc;
    ib_variant *v;
    if ((rc = ib_session_variant_for(s, s->key, &v, err))) return rc;
    return ib_session_run_and_fetch(s, v, outputs, n_outputs, err);
}

/* ---- ib_session_run_fed ---------------------------------------------------------- */

/* One fed input: where its bytes come from (the previous run's output slot) and go (the
 * input's slot in each backend that reads it). */
typedef struct fed_copy {
    const ib_output_slot *src;
    const ib_input_slot *dst;
} fed_copy;

static bool regions_overlap(uint32_t b1, size_t o1, uint32_t b2, size_t o2, size_t n)
{
    return b1 == b2 && o1 < o2 + n && o2 < o1 + n;
}

/* Put the previous run's outputs into the fed inputs' slots: device copies inside each
 * backend's arena when no destination overlaps any source still to be read; else every
 * source through the host first, then every destination. */
static int move_fed(ib_session *s, const fed_copy *fc, size_t n, ib_err *err)
{
    bool via_host = false;
    size_t total = 0;
    for (size_t a = 0; a < n; a++) {
        total += fc[a].src->nbytes;
        for (uint32_t f = 0; f < fc[a].dst->n_feeds; f++) {
            const ib_feed *d = &fc[a].dst->feeds[f];
            via_host |= d->backend != fc[a].src->backend;
            for (size_t b = 0; b < n; b++) {
                const ib_output_slot *o = fc[b].src;
                bool same = a == b && d->backend == o->backend && d->offset == o->offset;
                if (!same && regions_overlap(d->backend, d->offset, o->backend, o->offset,
                                             IB_MAX(o->nbytes, fc[a].dst->nbytes)))
                    via_host = true;
            }
        }
    }
    int rc = IB_OK;
    if (!via_host) {
        for (size_t a = 0; a < n && !rc; a++)
            for (uint32_t f = 0; f < fc[a].dst->n_feeds && !rc; f++) {
                const ib_feed *d = &fc[a].dst->feeds[f];
                rc = ib_backend_buffer_copy(s->arena[d->backend], d->offset,
                                            s->arena[fc[a].src->backend], fc[a].src->offset,
                                            fc[a].dst->nbytes, err);
                if (rc == IB_EUNSUPPORTED) { /* no device copy: through the host */
                    via_host = true;
                    rc = IB_OK;
                    break;
                }
            }
        if (rc || !via_host)
            return rc;
    }
    if ((rc = ib_session_fed_staging(s, total, "state", err)))
        return rc;
    size_t at = 0;
    for (size_t a = 0; a < n && !rc; a++) {
        rc = ib_backend_tensor_get(s->arena[fc[a].src->backend], fc[a].src->offset,
                                   s->fed_staging + at, fc[a].src->nbytes, err);
        at += fc[a].src->nbytes;
    }
    at = 0;
    for (size_t a = 0; a < n && !rc; a++) {
        for (uint32_t f = 0; f < fc[a].dst->n_feeds && !rc; f++)
            rc = ib_backend_tensor_set(s->arena[fc[a].dst->feeds[f].backend],
                                       fc[a].dst->feeds[f].offset, s->fed_staging + at,
                                       fc[a].dst->nbytes, err);
        at += fc[a].src->nbytes;
    }
    return rc;
}

int ib_session_run_fed(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                       const ib_session_feed *fb, size_t n_fb, ib_tensor_view *outputs,
                       size_t n_outputs, ib_err *err)
{
    if (!s || (n_inputs && !inputs) || (n_fb && !fb) || (n_outputs && !outputs))
        return ib_err_set(err, IB_EINVAL, "ib_session_run_fed: NULL argument");
    ib_variant *v = s->last_run;
    if (!v)
        return ib_err_set(err, IB_ESTATE,
                          "ib_session_run_fed: no previous successful run to take state from "
                          "(run the first step with ib_session_run)");
    const ib_graph *g = ib_model_graph(s->model);
    if (n_fb > g->inputs.len)
        return ib_err_set(err, IB_EINVAL, "%zu feeds for a model of %zu inputs", n_fb,
                          g->inputs.len);
    /* the caller's views first (fed inputs absent), then each fed input takes its output's
     * previous shape */
    int prc = ib_session_place_views(s, inputs, n_inputs, err);
    if (prc) return prc;
    fed_copy fc[64];
    size_t n_fc = 0;
    ib_link_src ls[64]; /* feeds from other sessions, copied after this session's own */
    size_t n_ls = 0;
    if (n_fb > IB_ARRAY_LEN(fc))
        return ib_err_set(err, IB_EINVAL, "more than %zu feeds", IB_ARRAY_LEN(fc));
    bool fed[256] = {false};
    if (g->inputs.len > IB_ARRAY_LEN(fed))
        return ib_err_set(err, IB_EUNSUPPORTED, "feeds on a model of over 256 inputs");
    for (size_t k = 0; k < n_fb; k++) {
        size_t i = ib_session_index_of(g, g->inputs.data, g->inputs.len, fb[k].input);
        if (i == g->inputs.len)
            return ib_err_set(err, IB_ENOTFOUND, "feed: unknown input '%s'",
                              fb[k].input ? fb[k].input : "(null)");
        if (s->in_views[i] || fed[i])
            return ib_err_set(err, IB_EINVAL, "input '%s' is both fed and given (or fed twice)",
                              fb[k].input);
        fed[i] = true;
        if (fb[k].from && fb[k].from != s) { /* another session's output, linked */
            const ib_session_link l = {fb[k].input, fb[k].from, fb[k].output, v->ins[i].desc};
            const ib_output_slot *los = NULL;
            ib_tensor_desc d;
            int lrc = ib_session_link_source(&l, fb[k].input, &los, &d, err);
            if (lrc)
                return lrc;
            ls[n_ls++] = (ib_link_src){i, fb[k].from, los, v->ins[i].nbytes};
            continue;
        }
        if (!fb[k].output) { /* kept: its slot still holds the previous run's bytes */
            if (!s->opts.keep_inputs)
                return ib_err_set(err, IB_EINVAL,
                                  "feed: input '%s' kept (output NULL), but the session was not "
                                  "created with keep_inputs, so a run may reuse its bytes",
                                  fb[k].input);
            continue;
        }
        size_t o = ib_session_index_of(g, g->outputs.data, g->outputs.len, fb[k].output);
        if (o == g->outputs.len)
            return ib_err_set(err, IB_ENOTFOUND, "feed: unknown output '%s'", fb[k].output);
        const ib_output_slot *os = &v->outs[o];
        const ib_value *decl = &g->values.data[g->inputs.data[i]];
        char a[160], b[160];
        if (os->kind != IB_OUT_ARENA)
            return ib_err_set(err, IB_EUNSUPPORTED,
                              "feed: output '%s' is a constant or a graph input passed through, "
                              "not a computed value; pass input '%s' as a view instead",
                              fb[k].output, fb[k].input);
        if (!ib_tensor_desc_equal(&os->desc, &v->ins[i].desc))
            return ib_err_set(err, IB_EINVAL,
                              "feed: output '%s' was %s in the previous run, input '%s' is %s "
                              "there (a feed keeps the previous run's shapes)",
                              fb[k].output, ib_tensor_desc_str(&os->desc, a, sizeof a),
                              fb[k].input, ib_tensor_desc_str(&v->ins[i].desc, b, sizeof b));
        if (os->desc.dtype != decl->desc.dtype)
            return ib_err_set(err, IB_EINVAL, "feed: output '%s' is %s, input '%s' is %s",
                              fb[k].output, ib_dtype_name(os->desc.dtype), fb[k].input,
                              ib_dtype_name(decl->desc.dtype));
        fc[n_fc++] = (fed_copy){os, &v->ins[i]};
    }
    /* the given inputs: checked as by ib_session_run, and the previous run's shapes */
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_value *decl = &g->values.data[g->inputs.data[i]];
        if (fed[i])
            continue;
        if (!s->in_views[i])
            return ib_err_set(err, IB_EINVAL, "missing input '%s' (%s): neither given nor fed",
                              decl->name, ib_dtype_name(decl->desc.dtype));
        int rc = ib_session_check_input(s, decl, s->in_views[i], err);
        if (rc) return rc;
        if (!ib_tensor_desc_equal(&s->in_views[i]->desc, &v->ins[i].desc)) {
            char a[160], b[160];
            return ib_err_set(err, IB_EINVAL,
                              "input '%s' is %s; the previous run's was %s (a fed run keeps "
                              "the previous run's shapes)",
                              decl->name, ib_tensor_desc_str(&s->in_views[i]->desc, a, sizeof a),
                              ib_tensor_desc_str(&v->ins[i].desc, b, sizeof b));
        }
    }
    int64_t t_in = ib_time_ns();
    int rc = move_fed(s, fc, n_fc, err);
    for (size_t k = 0; k < n_ls && !rc; k++)
        rc = ib_session_link_copy(s, &v->ins[ls[k].input], &ls[k], err);
    s->times.inputs_ns += ib_time_ns() - t_in; /* fed and linked values are inputs too */
    if (rc) {
        s->last_run = NULL; /* the state may be half moved */
        return rc;
    }
    v->last_used = ++s->clock;
    return ib_session_run_and_fetch(s, v, outputs, n_outputs, err);
}

void ib_session_times_get(const ib_session *s, ib_session_times *out)
{
    if (s)
        *out = s->times;
    else
        memset(out, 0, sizeof *out);
}
