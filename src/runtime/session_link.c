/*
 * session_link.c - ib_session_run_linked (runtime.h): inputs that take another session's
 * output where both live, so an encoder's output reaches its decoder's session without a
 * round trip through the host (RNN-T on cuda: 262 MB each way a batch of 256, issue 25).
 *
 * The source's output slot and its shape are read from its last successful run (as
 * ib_session_run fetches them), the input takes that shape or the link's reshape of it, the
 * variant is chosen from all the inputs' shapes, and the bytes are copied into each of the
 * input's slots: a backend copy between the two instances (memcpy for host-visible arenas,
 * device to device on cuda on one device), else through this session's host staging.
 */
#include <string.h>

#include "base/time.h"
#include "runtime/session_impl.h"

#define MAX_LINKS 16

int ib_session_link_source(const ib_session_link *l, const char *input,
                           const ib_output_slot **os, ib_tensor_desc *d, ib_err *err)
{
    const ib_variant *v = l->from->last_run;
    const char *out = l->output ? l->output : "(null)";
    if (!v)
        return ib_err_set(err, IB_ESTATE,
                          "link: input '%s' takes output '%s' of a session with no successful "
                          "run (run the source first)",
                          input, out);
    const ib_graph *g = v->g;
    size_t o = ib_session_index_of(g, g->outputs.data, g->outputs.len, l->output);
    if (o == g->outputs.len)
        return ib_err_set(err, IB_ENOTFOUND, "link: the source session has no output '%s'", out);
    *os = &v->outs[o];
    if ((*os)->kind != IB_OUT_ARENA)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "link: output '%s' is a constant or a graph input passed through, not "
                          "a computed value; pass input '%s' as a view instead",
                          out, input);
    ib_tensor_desc have = ib_session_output_desc(*os); /* as ib_session_run fetches it */
    if (l->desc.ndim == 0) {
        *d = have;
        return IB_OK;
    }
    *d = l->desc;
    if (d->dtype != have.dtype || d->ndim > IB_MAX_DIMS || d->ndim < 0 ||
        ib_tensor_desc_nbytes(d) != ib_tensor_desc_nbytes(&have)) {
        char a[160], b[160];
        return ib_err_set(err, IB_EINVAL,
                          "link: input '%s' as %s is not output '%s' (%s) reshaped (the same "
                          "dtype and bytes)",
                          input, ib_tensor_desc_str(d, a, sizeof a), out,
                          ib_tensor_desc_str(&have, b, sizeof b));
    }
    return IB_OK;
}

int ib_session_link_copy(ib_session *s, const ib_input_slot *in, const ib_link_src *ls,
                         ib_err *err)
{
    ib_backend_buffer *src = ls->from->arena[ls->os->backend];
    for (uint32_t f = 0; f < in->n_feeds; f++) {
        ib_backend_buffer *dst = s->arena[in->feeds[f].backend];
        int rc = ib_backend_buffer_copy(dst, in->feeds[f].offset, src, ls->os->offset,
                                        ls->nbytes, err);
        if (!rc)
            continue;
        if (rc != IB_EUNSUPPORTED)
            return rc;
        /* no copy between the two: through the host */
        if ((rc = ib_session_fed_staging(s, ls->nbytes, "a link", err)) ||
            (rc = ib_backend_tensor_get(src, ls->os->offset, s->fed_staging, ls->nbytes, err)) ||
            (rc = ib_backend_tensor_set(dst, in->feeds[f].offset, s->fed_staging, ls->nbytes,
                                        err)))
            return rc;
    }
    return IB_OK;
}

int ib_session_run_linked(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                          const ib_session_link *links, size_t n_links, ib_tensor_view *outputs,
                          size_t n_outputs, ib_err *err)
{
    if (!s || (n_inputs && !inputs) || (n_links && !links) || (n_outputs && !outputs))
        return ib_err_set(err, IB_EINVAL, "ib_session_run_linked: NULL argument");
    s->last_run = NULL; /* a build below may evict it or move the arenas */
    const ib_graph *g = ib_model_graph(s->model);
    bool linked[256] = {false};
    if (g->inputs.len > IB_ARRAY_LEN(linked))
        return ib_err_set(err, IB_EUNSUPPORTED, "links on a model of over 256 inputs");
    if (n_links > MAX_LINKS)
        return ib_err_set(err, IB_EINVAL, "%zu links: at most %d", n_links, MAX_LINKS);
    int rc = ib_session_place_views(s, inputs, n_inputs, err);
    if (rc)
        return rc;
    ib_link_src ls[MAX_LINKS];
    for (size_t k = 0; k < n_links; k++) {
        const char *name = links[k].input ? links[k].input : "(null)";
        size_t i = ib_session_index_of(g, g->inputs.data, g->inputs.len, links[k].input);
        if (i == g->inputs.len)
            return ib_err_set(err, IB_ENOTFOUND, "link: unknown input '%s'", name);
        if (s->in_views[i] || linked[i])
            return ib_err_set(err, IB_EINVAL, "input '%s' is both linked and given (or linked "
                              "twice)", name);
        if (!links[k].from || links[k].from == s)
            return ib_err_set(err, IB_EINVAL,
                              "link: input '%s' needs another session to take from (a "
                              "session's own outputs are fed with ib_session_run_fed)",
                              name);
        linked[i] = true;
        ib_tensor_desc d;
        const ib_output_slot *os = NULL;
        if ((rc = ib_session_link_source(&links[k], name, &os, &d, err)) ||
            (rc = ib_session_check_desc(s, &g->values.data[g->inputs.data[i]], &d, err)))
            return rc;
        s->key[i] = d;
        ls[k] = (ib_link_src){i, links[k].from, os, ib_tensor_desc_nbytes(&d)};
    }
    if ((rc = ib_session_key_given(s, linked, ": neither given nor linked", err)))
        return rc;
    ib_variant *v;
    if ((rc = ib_session_variant_for(s, s->key, &v, err)))
        return rc;
    int64_t t_in = ib_time_ns();
    for (size_t k = 0; k < n_links; k++) {
        const ib_input_slot *in = &v->ins[ls[k].input];
        if (in->nbytes != ls[k].nbytes) /* the variant is bound to the linked shape */
            return ib_err_set(err, IB_EBACKEND, "link: an input slot of %zu bytes for %zu",
                              in->nbytes, ls[k].nbytes);
        if ((rc = ib_session_link_copy(s, in, &ls[k], err)))
            return rc;
    }
    s->times.inputs_ns += ib_time_ns() - t_in; /* linked values are inputs too */
    return ib_session_run_and_fetch(s, v, outputs, n_outputs, err);
}
