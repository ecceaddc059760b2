/*
 * cuda_exec.c - compiling a subgraph into steps (one or a few library calls
 * or kernel launches per node, all enqueued on the context's stream) and
 * running them: value table, constant upload through the weight cache,
 * private device blocks, the shared cuDNN workspace, and graph_run, which
 * launches the steps directly the first time, captures them into a CUDA
 * Graph the second time and replays it from then on (launching the steps one
 * by one when capture is refused).
 *
 * Every value lives in plain row-major layout in its binding (planned by the
 * session in this backend's arena), so boundary values need no write-back.
 * graph_run allocates nothing and does not synchronise (synchronize does).
 */
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"

cu_val *cu_in(cu_exec *e, const ib_node *n, uint32_t i)
{
    if (i >= n->n_inputs || n->inputs[i] == IB_VALUE_NONE)
        return NULL;
    int32_t k = e->val_of[n->inputs[i]];
    return k < 0 ? NULL : &e->vals[k];
}

cu_val *cu_out(cu_exec *e, const ib_node *n, uint32_t i)
{
    if (i >= n->n_outputs || n->outputs[i] == IB_VALUE_NONE)
        return NULL;
    int32_t k = e->val_of[n->outputs[i]];
    return k < 0 ? NULL : &e->vals[k];
}

int cu_alloc(cu_exec *e, size_t bytes, void **out, ib_err *err)
{
    void *p = NULL;
    int rc = cu_check_rt(e, err, cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc (scratch)");
    if (rc)
        return rc;
    if (IB_VEC_PUSH(&e->blocks, p)) {
        (void)cudaFree(p);
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    *out = p;
    return IB_OK;
}

int cu_shared_block(cu_exec *e, void **blk, size_t *have, size_t bytes, void **out, ib_err *err)
{
    if (bytes > *have) { /* steps planned before keep the smaller block they were given */
        int rc = cu_alloc(e, bytes, blk, err);
        if (rc)
            return rc;
        *have = bytes;
    }
    *out = *blk;
    return IB_OK;
}

int cu_att_block(cu_exec *e, size_t bytes, void **out, ib_err *err)
{
    return cu_shared_block(e, &e->att, &e->att_bytes, bytes, out, err);
}

int cu_add_step(cu_exec *e, cu_step_fn fn, void *kctx, void (*kfree)(void *), ib_err *err)
{
    cu_step st = {.fn = fn, .kctx = kctx, .kfree = kfree, .node = e->cur};
    if (IB_VEC_PUSH(&e->steps, st)) {
        if (kfree)
            kfree(kctx);
        else
            ib_free(kctx);
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    return IB_OK;
}

void cu_step_kind(cu_exec *e, const char *kind)
{
    if (e->steps.len)
        e->steps.data[e->steps.len - 1].kind = kind;
}

void cu_need_ws(cu_exec *e, size_t bytes)
{
    if (bytes > e->ws_need)
        e->ws_need = bytes;
}

void cu_strides(const ib_tensor_desc *d, int64_t *st)
{
    int64_t s = 1;
    for (int32_t i = d->ndim - 1; i >= 0; i--) {
        st[i] = s;
        s *= d->dims[i];
    }
}

void cu_graph_free(void *ctx, ib_backend_exec *e)
{
    cu_ctx *c = ctx;
    if (!e)
        return;
    (void)cudaSetDevice(c->device);
    (void)cudaStreamSynchronize(c->stream);
    if (e->gexec)
        (void)cudaGraphExecDestroy(e->gexec);
    for (size_t i = 0; e->ev && i <= e->steps.len; i++)
        if (e->ev[i])
            (void)cudaEventDestroy(e->ev[i]);
    ib_free(e->ev);
    ib_free(e->prof_ns);
    for (size_t i = 0; i < e->steps.len; i++) {
        cu_step *s = &e->steps.data[i];
        if (s->kfree)
            s->kfree(s->kctx);
        else
            ib_free(s->kctx);
    }
    IB_VEC_FREE(&e->steps);
    ib_prec_notes_free(&e->precs);
    for (size_t i = 0; i < e->blocks.len; i++)
        (void)cudaFree(e->blocks.data[i]);
    IB_VEC_FREE(&e->blocks);
    for (size_t i = 0; i < e->wrefs.len; i++)
        cu_weight_put(c, e->wrefs.data[i].host, e->wrefs.data[i].fmt);
    IB_VEC_FREE(&e->wrefs);
    if (e->ws)
        (void)cudaFree(e->ws);
    (void)cudaGetLastError();
    ib_free(e->vals);
    ib_free(e->val_of);
    ib_free(e);
}

static int bind_values(cu_exec *e, const ib_backend_subgraph *sg, ib_err *err)
{
    const ib_graph *g = sg->graph;
    e->val_of = ib_malloc((g->values.len ? g->values.len : 1) * sizeof *e->val_of);
    e->vals = ib_calloc(sg->n_bindings ? sg->n_bindings : 1, sizeof *e->vals);
    if (!e->val_of || !e->vals)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->values.len; i++)
        e->val_of[i] = -1;
    e->n_vals = sg->n_bindings;
    for (uint32_t i = 0; i < sg->n_bindings; i++) {
        const ib_backend_binding *bd = &sg->bindings[i];
        cu_val *v = &e->vals[i];
        v->id = bd->value;
        v->desc = bd->desc;
        v->has_range = bd->range_max > bd->range_min;
        v->rmin = bd->range_min;
        v->rmax = bd->range_max;
        e->val_of[bd->value] = (int32_t)i;
        if (bd->constant) {
            size_t n = ib_tensor_desc_nbytes(&bd->desc);
            v->host = bd->constant->data;
            cu_wref r = {v->host, CU_W_PLAIN};
            if (IB_VEC_PUSH(&e->wrefs, r))
                return cu_fail(e, err, IB_ENOMEM, "out of memory");
            int rc = cu_weight_get(e->ctx, v->host, n, &v->dev, err);
            if (rc) {
                e->wrefs.len--;
                return rc;
            }
        } else {
            v->dev = (char *)bd->buffer->impl + bd->offset;
        }
    }
    return IB_OK;
}

int cu_exec_hold_weight(cu_exec *e, const void *host, int fmt, ib_err *err)
{
    cu_wref r = {host, fmt};
    if (!IB_VEC_PUSH(&e->wrefs, r))
        return IB_OK;
    cu_weight_put(e->ctx, host, fmt); /* the reference the caller's get took */
    return cu_fail(e, err, IB_ENOMEM, "out of memory");
}

void cu_exec_release_weight(cu_exec *e, const void *host, int fmt)
{
    for (size_t i = 0; i < e->wrefs.len; i++)
        if (e->wrefs.data[i].host == host && e->wrefs.data[i].fmt == fmt) {
            e->wrefs.data[i] = e->wrefs.data[--e->wrefs.len];
            cu_weight_put(e->ctx, host, fmt);
            return;
        }
}

void cu_precision_read(void *ctx, const ib_backend_exec *e, ib_backend_prec_fn fn, void *user)
{
    IB_UNUSED(ctx);
    ib_prec_notes_read(&e->precs, fn, user);
}

void cu_exec_set_precision(cu_exec *e, enum ib_precision p)
{
    /* int8 and fp8 (cuda_matmul_q8.c): every op as at fp16, the products with constant
     * weights on 8-bit operands where their input has a calibrated range */
    e->int8 = p == IB_PRECISION_INT8;
    e->fp8 = p == IB_PRECISION_FP8;
    e->precision = e->int8 || e->fp8 ? IB_PRECISION_FP16 : p;
}

int cu_graph_compile(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out,
                     ib_err *err)
{
    cu_ctx *c = ctx;
    int rc = cu_enter(c, err);
    if (rc)
        return rc;
    cu_exec *e = ib_calloc(1, sizeof *e);
    if (!e)
        return ib_err_set(err, IB_ENOMEM, "cuda backend: out of memory");
    e->ctx = c;
    e->graph = sg->graph;
    cu_exec_set_precision(e, sg->precision);
    e->cvt_val = -1;
    if ((rc = bind_values(e, sg, err)))
        goto fail;
    cu_conv_mark_islands(e, sg);
    cu_conv_mark_q8(e, sg);
    cu_mark_half_chains(e, sg);
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        const ib_node *n = &sg->graph->nodes.data[sg->nodes[i]];
        e->cur = n;
        ib_prec_notes_begin(&e->precs);
        const cu_op *op = cu_op_find(n);
        if (!op) {
            rc = cu_fail(e, err, IB_EUNSUPPORTED, "no CUDA implementation (supports_op refuses it)");
            goto fail;
        }
        if ((rc = op->compile(e, n, err)))
            goto fail;
        if (ib_prec_notes_end(&e->precs, n)) {
            rc = ib_err_set(err, IB_ENOMEM, "cuda backend: out of memory");
            goto fail;
        }
    }
    e->cur = NULL;
    if (e->ws_need && (rc = cu_check_rt(e, err, cudaMalloc(&e->ws, e->ws_need),
                                        "cudaMalloc (cuDNN workspace)")))
        goto fail;
    *out = e;
    return IB_OK;
fail:
    cu_graph_free(c, e);
    return rc;
}

static int run_steps(cu_exec *e, ib_err *err)
{
    for (size_t i = 0; i < e->steps.len; i++) {
        cu_step *s = &e->steps.data[i];
        e->cur = s->node;
        int rc = s->fn(e, s->kctx, err);
        if (rc)
            return rc;
    }
    e->cur = NULL;
    return IB_OK;
}

/* Capture the steps into a CUDA Graph (once). False when capture is not
 * possible, with the reason in e->graph_why (cu_replay_status); the steps are then launched
 * directly from now on. */
static bool capture(cu_exec *e)
{
    cudaStream_t s = e->ctx->stream;
    cudaError_t st = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    if (st != cudaSuccess) {
        snprintf(e->graph_why, sizeof e->graph_why, "cudaStreamBeginCapture: %s",
                 cudaGetErrorString(st));
        (void)cudaGetLastError();
        return false;
    }
    ib_err scratch;
    ib_err_clear(&scratch);
    int rc = run_steps(e, &scratch);
    const ib_node *at = e->cur; /* the step that failed inside the capture, if one did */
    cudaGraph_t gr = NULL;
    st = cudaStreamEndCapture(s, &gr);
    cudaError_t inst = cudaSuccess;
    if (rc == IB_OK && st == cudaSuccess && gr)
        inst = cudaGraphInstantiate(&e->gexec, gr, 0);
    bool ok = rc == IB_OK && st == cudaSuccess && gr && inst == cudaSuccess;
    if (gr)
        (void)cudaGraphDestroy(gr);
    if (!ok) {
        e->gexec = NULL;
        if (rc != IB_OK && at)
            snprintf(e->graph_why, sizeof e->graph_why, "node %.60s (%.30s): %.150s",
                     at->name ? at->name : "?", at->op_type, scratch.msg);
        else if (rc != IB_OK)
            snprintf(e->graph_why, sizeof e->graph_why, "a step of the backend's own: %.200s",
                     scratch.msg);
        else if (st != cudaSuccess || !gr)
            snprintf(e->graph_why, sizeof e->graph_why, "cudaStreamEndCapture: %s",
                     cudaGetErrorString(st));
        else
            snprintf(e->graph_why, sizeof e->graph_why, "cudaGraphInstantiate: %s",
                     cudaGetErrorString(inst));
        (void)cudaGetLastError();
    }
    e->cur = NULL;
    return ok;
}

enum ib_backend_replay cu_replay_status(void *ctx, const ib_backend_exec *e, const char **why)
{
    IB_UNUSED(ctx);
    *why = e->graph_failed ? e->graph_why : "";
    return e->gexec         ? IB_BACKEND_REPLAY_ON
           : e->graph_failed ? IB_BACKEND_REPLAY_REFUSED
                             : IB_BACKEND_REPLAY_NOT_YET;
}

/* Profiling: the steps launched one by one between events, waited for, and each step's
 * device time added (the caller's run is synchronous while profiling anyway). */
static int run_profiled(cu_exec *e, ib_err *err)
{
    cudaStream_t s = e->ctx->stream;
    int rc = cu_check_rt(NULL, err, cudaEventRecord(e->ev[0], s), "profiling event");
    for (size_t i = 0; !rc && i < e->steps.len; i++) {
        cu_step *st = &e->steps.data[i];
        e->cur = st->node;
        if (!(rc = st->fn(e, st->kctx, err)))
            rc = cu_check_rt(NULL, err, cudaEventRecord(e->ev[i + 1], s), "profiling event");
    }
    e->cur = NULL;
    if (!rc)
        rc = cu_check_rt(NULL, err, cudaEventSynchronize(e->ev[e->steps.len]), "profiling event");
    for (size_t i = 0; !rc && i < e->steps.len; i++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, e->ev[i], e->ev[i + 1]) == cudaSuccess)
            e->prof_ns[i] += (int64_t)((double)ms * 1e6);
    }
    if (!rc)
        e->prof_runs++;
    (void)cudaGetLastError();
    return rc;
}

void cu_set_profiling(void *ctx, ib_backend_exec *e, bool on)
{
    cu_ctx *c = ctx;
    ib_free(e->prof_ns);
    e->prof_ns = NULL;
    e->prof_runs = 0;
    if (!on || !e->steps.len || cudaSetDevice(c->device) != cudaSuccess)
        return;
    if (!e->ev) {
        cudaEvent_t *ev = ib_calloc(e->steps.len + 1, sizeof *ev);
        for (size_t i = 0; ev && i <= e->steps.len; i++)
            if (cudaEventCreate(&ev[i]) != cudaSuccess) {
                (void)cudaGetLastError();
                for (size_t j = 0; j < i; j++)
                    (void)cudaEventDestroy(ev[j]);
                ib_free(ev);
                return; /* stays off: prof_ns NULL */
            }
        e->ev = ev;
    }
    if (e->ev)
        e->prof_ns = ib_calloc(e->steps.len, sizeof *e->prof_ns); /* NULL: stays off */
}

void cu_profile_read(void *ctx, const ib_backend_exec *e, ib_backend_prof_fn fn, void *user)
{
    IB_UNUSED(ctx);
    for (size_t i = 0; e->prof_ns && i < e->steps.len; i++) {
        const cu_step *st = &e->steps.data[i];
        fn(user, st->node, st->kind ? st->kind : "kernel", e->prof_ns[i], e->prof_runs);
    }
}

int cu_graph_run(void *ctx, ib_backend_exec *e, const ib_backend_subgraph *sg, ib_err *err)
{
    IB_UNUSED(sg);
    cu_ctx *c = ctx;
    int rc = cu_enter(c, err);
    if (rc)
        return rc;
    if (e->prof_ns) {
        e->runs++;
        return run_profiled(e, err);
    }
    /* The first run launches the steps directly (libraries and lazily loaded
     * kernel modules initialise outside a capture); the second captures them. */
    if (e->runs++ > 0 && !e->gexec && !e->graph_failed && !capture(e))
        e->graph_failed = true;
    if (e->gexec)
        return cu_check_rt(NULL, err, cudaGraphLaunch(e->gexec, c->stream), "cudaGraphLaunch");
    return run_steps(e, err);
}
