/*
 * session.c - ib_session create/destroy/describe. Create instantiates the
 * requested backend (and the reference backend as the fallback), checks
 * that every op of the model exists, collects INT8 ranges when asked, and
 * builds the variant for max_batch when the model's other dims are static
 * (otherwise the first run's shapes decide, see session_build.c).
 *
 * A session borrows its model: the model must outlive it. Sessions are
 * independent of each other; one session runs one inference at a time.
 */
#include <string.h>

#include "base/strbuf.h"
#include "ir/op.h"
#include "runtime/session_impl.h"

void ib_session_options_defaults(ib_session_options *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "cpu";
    o->threads = 0;
    o->first_cpu = -1;
    o->precision = IB_PRECISION_FP32;
    o->max_batch = 1;
    o->device = 0;
}

static int check_ops(const ib_graph *g, ib_err *err)
{
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead || ib_op_find(n->domain, n->op_type, n->opset)) continue;
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "op %s%s%s (opset %lld) of node '%s' is not supported by inferbench",
                          n->domain, n->domain[0] ? "." : "", n->op_type, (long long)n->opset,
                          n->name);
    }
    return IB_OK;
}

static bool has_qdq(const ib_graph *g)
{
    for (size_t i = 0; i < g->nodes.len; i++)
        if (!g->nodes.data[i].dead && !strcmp(g->nodes.data[i].op_type, "QuantizeLinear"))
            return true;
    return false;
}

static int create_backends(ib_session *s, const struct ib_backend_ops *ops, ib_err *err)
{
    ib_backend_config cfg;
    ib_backend_config_defaults(&cfg);
    cfg.threads = s->opts.threads;
    cfg.first_cpu = s->opts.first_cpu;
    cfg.precision = s->opts.precision;
    cfg.device = s->opts.device;
    cfg.direct_conv = s->opts.direct_conv;
    cfg.nhwc_fp16 = s->opts.nhwc_fp16;
    cfg.half_chains = s->opts.half_chains;
    const ib_session *peer = s->opts.share_with;
    s->opts.share_with = NULL; /* read here only: the peer may go first */
    if (peer && peer->n_backends > 0 && peer->opts.device == s->opts.device &&
        peer->backend_name && s->backend_name && !strcmp(peer->backend_name, s->backend_name))
        cfg.peer = peer->backends[0];
    int rc = ops ? ib_backend_create_from_ops(ops, &cfg, &s->backends[0], err)
                 : ib_backend_create(s->backend_name, &cfg, &s->backends[0], err);
    if (rc) return rc;
    if (ops) { /* the name the backend gives itself */
        ib_free(s->backend_name);
        if (!(s->backend_name = ib_strdup(ib_backend_get_name(s->backends[0]))))
            return ib_err_set(err, IB_ENOMEM, "out of memory");
        s->opts.backend = s->backend_name;
    }
    s->prec[0] = s->opts.precision;
    s->n_backends = 1;
    if (strcmp(s->backend_name, "reference") != 0) {
        /* the fallback computes in fp32 whatever the session's precision */
        cfg.precision = IB_PRECISION_FP32;
        if ((rc = ib_backend_create("reference", &cfg, &s->backends[1], err))) return rc;
        s->prec[1] = IB_PRECISION_FP32;
        s->n_backends = 2;
    }
    return IB_OK;
}

/* Shapes at max_batch, or false when another dim is symbolic. */
static bool primary_shapes(ib_session *s)
{
    const ib_graph *g = ib_model_graph(s->model);
    for (size_t i = 0; i < g->inputs.len; i++) {
        ib_tensor_desc d = g->values.data[g->inputs.data[i]].desc;
        for (int32_t k = 0; k < d.ndim; k++) {
            if (d.dims[k] >= 0) continue;
            if (k != 0) return false;
            d.dims[0] = s->opts.max_batch;
        }
        s->key[i] = d;
    }
    return true;
}

int ib_session_update_describe(ib_session *s, const ib_variant *v)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    char buf[200];
    ib_strbuf_printf(&sb, "backend: %s", s->backend_name);
    if (s->n_backends > 1)
        ib_strbuf_printf(&sb, " (fallback: %s)", ib_backend_get_name(s->backends[1]));
    ib_strbuf_printf(&sb, "\nprecision: %s\nmax_batch: %lld\nthreads: %d\nfusion: %s\n",
                     ib_precision_name(s->opts.precision), (long long)s->opts.max_batch,
                     s->opts.threads, s->opts.disable_fusion ? "off" : "on");
    if (!v) {
        ib_strbuf_puts(&sb, "compiled: on the first run (the inputs have symbolic dims other "
                            "than the batch)\n");
    } else {
        const ib_graph *g = v->g;
        ib_strbuf_puts(&sb, "compiled for:");
        for (size_t i = 0; i < g->inputs.len; i++)
            ib_strbuf_printf(&sb, " %s=%s", g->values.data[g->inputs.data[i]].name,
                             ib_tensor_desc_str(&v->shapes[i], buf, sizeof buf));
        const ib_compile_stats *c = &v->cstats;
        ib_strbuf_printf(&sb,
                         "\nnodes: %u (folded %u, removed %u)\nfused: FusedConv %u (BatchNorm "
                         "folded %u), FusedMatMul %u, LayerNorm %u, Gelu %u, Attention %u "
                         "(MultiHeadAttention %u), GatherConcat %u, DotInteraction %u, InstanceNorm %u\n",
                         v->n_nodes, c->folded, c->removed, c->fused_conv, c->fused_bn,
                         c->fused_matmul, c->layernorm, c->gelu, c->attention,
                         c->attention_heads, c->gather_concat, c->dot_interaction, c->instance_norm);
        ib_strbuf_printf(&sb, "segments: %u\nnodes per backend: %s %u", v->n_segs,
                         s->backend_name, v->n_nodes - v->n_fallback);
        if (s->n_backends > 1)
            ib_strbuf_printf(&sb, ", %s %u%s%s%s", ib_backend_get_name(s->backends[1]),
                             v->n_fallback, v->n_fallback ? " (" : "",
                             ib_strbuf_cstr(&v->fallback_ops), v->n_fallback ? ")" : "");
        ib_strbuf_printf(&sb, "\nproducts at %s: %u of %u%s%s%s", ib_precision_name(s->prec[0]),
                         v->n_at_precision, v->n_products, v->prec_others.len ? " (" : "",
                         ib_strbuf_cstr(&v->prec_others), v->prec_others.len ? ")" : "");
        ib_strbuf_printf(&sb, "\nfallbacks: %u\n", v->n_fallback);
        ib_strbuf_puts(&sb, ib_strbuf_cstr(&v->fallbacks));
        size_t total = 0;
        for (uint32_t b = 0; b < s->n_backends; b++) {
            ib_strbuf_printf(&sb, "arena %s: %zu bytes (%zu without reuse, %zu in place)\n",
                             ib_backend_get_name(s->backends[b]), v->plan[b].res.total_bytes,
                             v->plan[b].res.sum_bytes, v->plan[b].res.n_inplace);
            total += v->plan[b].res.total_bytes;
        }
        ib_strbuf_printf(&sb, "peak activation bytes: %zu\n", total);
    }
    if (s->ranges.len) ib_strbuf_printf(&sb, "int8 calibrated values: %zu\n", s->ranges.len / 2);
    if (sb.oom) {
        ib_strbuf_deinit(&sb);
        return IB_ENOMEM;
    }
    if (s->describe && IB_VEC_PUSH(&s->old_describe, s->describe)) {
        ib_strbuf_deinit(&sb);
        return IB_ENOMEM;
    }
    s->describe = ib_strbuf_detach(&sb);
    return IB_OK;
}

static int session_init(ib_session *s, const ib_model *m, const ib_session_options *opts,
                        const struct ib_backend_ops *ops, ib_err *err)
{
    s->model = m;
    s->opts = *opts;
    ib_arena_init(&s->names, 0);
    ib_strmap_init(&s->range_index);
    s->backend_name = ib_strdup(opts->backend && opts->backend[0] ? opts->backend : "cpu");
    s->opts.backend = s->backend_name;
    const ib_graph *g = ib_model_graph(m);
    s->key = ib_calloc(g->inputs.len + 1, sizeof *s->key);
    s->in_views = ib_calloc(g->inputs.len + 1, sizeof *s->in_views);
    s->cache = ib_model_cache(m); /* borrowed: folded weights are per model */
    if (!s->backend_name || !s->key || !s->in_views)
        return ib_err_set(err, IB_ENOMEM, "out of memory creating the session");
    int rc = check_ops(g, err);
    if (!rc) rc = create_backends(s, ops, err);
    return rc;
}

int ib_session_create_with_ops(const ib_model *m, const ib_session_options *opts,
                               const struct ib_backend_ops *ops, ib_session **out, ib_err *err)
{
    ib_session_options dflt;
    if (!out || !m) return ib_err_set(err, IB_EINVAL, "ib_session_create: NULL model or output");
    *out = NULL;
    if (!opts) {
        ib_session_options_defaults(&dflt);
        opts = &dflt;
    }
    if (opts->max_batch < 1)
        return ib_err_set(err, IB_EINVAL, "max_batch must be >= 1 (got %lld)",
                          (long long)opts->max_batch);
    if (opts->precision < IB_PRECISION_FP32 || opts->precision > IB_PRECISION_FP8)
        return ib_err_set(err, IB_EINVAL, "unknown precision %d", (int)opts->precision);
    if (opts->calib_batches && (!opts->calib_inputs || !opts->calib_input_count))
        return ib_err_set(err, IB_EINVAL, "calib_batches set without calib_inputs");
    ib_session *s = ib_calloc(1, sizeof *s);
    if (!s) return ib_err_set(err, IB_ENOMEM, "out of memory creating the session");
    int rc = session_init(s, m, opts, ops, err);
    if (rc) goto fail;
    if (ib_precision_calibrated(opts->precision)) {
        if (opts->calib_batches)
            rc = ib_session_calibrate(s, err);
        else if (opts->precision == IB_PRECISION_FP8)
            rc = ib_err_set(err, IB_EINVAL,
                            "precision fp8 needs calibration inputs (calib_inputs): its "
                            "activation scales come from their ranges");
        else if (!has_qdq(ib_model_graph(m)))
            rc = ib_err_set(err, IB_EINVAL,
                            "precision int8 needs calibration inputs (calib_inputs) or a model "
                            "with QuantizeLinear/DequantizeLinear");
        if (rc) goto fail;
    }
    ib_variant *v;
    if (primary_shapes(s)) {
        if ((rc = ib_session_variant_for(s, s->key, &v, err))) /* sets s->primary */
            goto fail;
    } else if ((rc = ib_session_update_describe(s, NULL))) {
        ib_err_set(err, rc, "out of memory");
        goto fail;
    }
    *out = s;
    return IB_OK;
fail:
    ib_session_destroy(s);
    return rc;
}

int ib_session_create(const ib_model *m, const ib_session_options *opts, ib_session **out,
                      ib_err *err)
{
    return ib_session_create_with_ops(m, opts, NULL, out, err);
}

void *ib_session_host_alloc(ib_session *s, size_t nbytes, ib_err *err)
{
    if (!s)
        return ib_err_set(err, IB_EINVAL, "ib_session_host_alloc: NULL session"), NULL;
    void *p = NULL;
    return ib_backend_host_alloc(s->backends[0], nbytes, &p, err) ? NULL : p;
}

void ib_session_host_free(ib_session *s, void *p)
{
    if (s)
        ib_backend_host_free(s->backends[0], p);
}

size_t ib_session_peak_activation_bytes(const ib_session *s)
{
    return s ? s->peak : 0;
}

const char *ib_session_describe(const ib_session *s)
{
    return s && s->describe ? s->describe : "";
}

void ib_session_placement_get(const ib_session *s, ib_session_placement *out)
{
    memset(out, 0, sizeof *out);
    out->backend = out->fallback = out->fallback_ops = "";
    if (!s) return;
    out->backend = s->backend_name;
    if (s->n_backends > 1) out->fallback = ib_backend_get_name(s->backends[1]);
    const ib_variant *worst = s->primary;
    for (size_t i = 0; i < s->variants.len; i++)
        if (!worst || s->variants.data[i]->n_fallback > worst->n_fallback)
            worst = s->variants.data[i];
    if (!worst) return;
    out->nodes = worst->n_nodes;
    out->fallback_nodes = worst->n_fallback;
    out->fallback_ops = ib_strbuf_cstr(&worst->fallback_ops);
}

void ib_session_replay_get(const ib_session *s, ib_session_replay *out)
{
    memset(out, 0, sizeof *out);
    out->why = "";
    for (size_t i = 0; s && i < s->variants.len; i++) {
        const ib_variant *v = s->variants.data[i];
        for (uint32_t k = 0; k < v->n_segs; k++) {
            const char *why = "";
            enum ib_backend_replay r = ib_backend_graph_replay(v->segs[k].exec, &why);
            if (r == IB_BACKEND_REPLAY_NONE)
                continue;
            out->subgraphs++;
            out->replayed += r == IB_BACKEND_REPLAY_ON;
            if (r == IB_BACKEND_REPLAY_REFUSED && !out->refused++)
                out->why = why;
        }
    }
}

void ib_session_destroy(ib_session *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->variants.len; i++)
        ib_variant_free(s, s->variants.data[i]);
    IB_VEC_FREE(&s->variants);
    for (uint32_t b = 0; b < IB_SESSION_MAX_BACKENDS; b++) {
        ib_backend_buffer_free(s->arena[b]);
        ib_backend_destroy(s->backends[b]);
    }
    ib_free(s->staging);
    ib_free(s->fed_staging);
    ib_free(s->key);
    ib_free(s->in_views);
    ib_free(s->backend_name);
    ib_free(s->describe);
    for (size_t i = 0; i < s->old_describe.len; i++)
        ib_free(s->old_describe.data[i]);
    IB_VEC_FREE(&s->old_describe);
    ib_strmap_deinit(&s->range_index);
    IB_VEC_FREE(&s->ranges);
    ib_arena_deinit(&s->names);
    ib_free(s);
}
