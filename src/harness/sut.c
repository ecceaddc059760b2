/*
 * sut.c - the harness SUT (sut.h): the sample queue filled by issue_query, the worker
 * threads (sessions, warm-up, batching, the timed pipeline collate -> run -> postprocess or
 * the entry's infer), and completion of responses from the workers.
 *
 * The queue (squeue.h) is a ring of (sample, arrival time) under one mutex; issue_query
 * only appends and signals, so the loadgen's issue path never waits on inference. Per-worker memory
 * (responses, payloads, output buffers, scratch) is allocated before the test, so the
 * steady state allocates nothing (the ring grows only when a larger query than any before
 * arrives).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/strbuf.h"
#include "base/thread.h"
#include "base/time.h"
#include "harness/scratch.h"
#include "harness/squeue.h"
#include "harness/sut.h"

#define MAX_WORKERS 256

typedef struct worker {
    struct ib_hsut *sut;
    int id;
    ib_thread th;
    bool started;
    ib_session *sessions[IB_BENCH_MAX_MODELS];
    ib_bench_scratch scratch;
    ib_lg_sample *taken;            /* max_batch */
    const ib_bench_sample **samples; /* max_batch */
    ib_lg_sample_index *indices;    /* max_batch */
    ib_lg_response *resp;           /* max_batch */
    ib_bench_payload *payloads;     /* max_batch */
    uint8_t *payload_mem;
    void *out_mem[IB_BENCH_MAX_TENSORS];
    bool sessions_done;             /* worker_sessions returned (s->mu; ready_cv) */
    int64_t warm_t0, warm_t1;       /* span of the timed max_batch runs (ib_time_ns) */
    size_t warm_n;                  /* samples those runs took */
    int64_t warm_lat_ns;
    /* the test's time (ib_hsut_times_reset/get): batches processed, completing them, the
     * end of the last one, and the sessions' times at the reset */
    int64_t busy_ns, responses_ns, t_done;
    ib_session_times base[IB_BENCH_MAX_MODELS];
    int rc;
    ib_err err;
} worker;

struct ib_hsut {
    ib_hsut_opts o;
    size_t payload_cap;
    /* queue */
    ib_mutex mu;
    ib_cond cv;      /* workers wait for samples */
    ib_cond ready_cv; /* create() waits for the workers' start-up */
    /* warm-up barrier: the timed max_batch runs start together on every worker */
    int warm_arrived;
    bool warm_together; /* false: over half the --quick budget, the first runs stand */
    int64_t warm_release, t_create;
    ib_squeue q; /* issued samples not yet taken by a worker */
    int64_t t_first_issue; /* since ib_hsut_times_reset (0: nothing issued yet) */
    ib_lg_test *test;
    bool stop;
    int ready, started_ok;
    int busy;          /* workers inside process() (they may touch the test) */
    ib_cond idle_cv;   /* signalled when busy drops to 0 */
    /* errors */
    int rc;
    ib_err err;
    bool failed; /* stop processing until the error is taken */
    /* calibration views for model 0 (shared, read-only), and the memory of the entry's
     * calib_inputs hook they point into (one block a batch, or NULL) */
    ib_tensor_view *calib;
    void **calib_mem; /* calib_cap */
    size_t calib_batches, calib_cap;
    /* the precision each model's sessions run at (ib_hsut_model_precision) */
    enum ib_precision model_prec[IB_BENCH_MAX_MODELS];
    worker w[];
};

/* ---- helpers ------------------------------------------------------------------------------ */

/* The chunk a batch of `remaining` samples runs next: max_batch, else the largest power of
 * two below it that fits. */
static size_t next_chunk(size_t remaining, size_t max_batch)
{
    if (remaining >= max_batch)
        return max_batch;
    size_t c = 1;
    while (c * 2 <= remaining)
        c *= 2;
    return c;
}

/* The timed pipeline for one chunk; payloads in w->payloads[0..n-1]. */
static int run_chunk(worker *w, size_t n, ib_err *err)
{
    struct ib_hsut *s = w->sut;
    const ib_hsut_opts *o = &s->o;
    ib_bench_batch b;
    memset(&b, 0, sizeof b);
    b.count = n;
    b.samples = w->samples;
    b.indices = w->indices;
    b.scratch = &w->scratch;
    const ib_bench_io *io = &o->io[0];
    b.n_outputs = io->n_outputs;
    for (size_t k = 0; k < io->n_outputs; k++) {
        b.outputs[k].name = io->outputs[k].name;
        b.outputs[k].data = w->out_mem[k];
        b.outputs[k].capacity = n * io->outputs[k].max_bytes_per_sample;
    }
    for (size_t i = 0; i < n; i++) {
        w->payloads[i].cap = s->payload_cap;
        w->payloads[i].size = 0;
    }
    if (o->bench->infer)
        return o->bench->infer(o->state, o->cfg, w->sessions, &b, w->payloads, err);
    int rc = o->bench->collate ? o->bench->collate(o->state, &b, err)
                               : ib_bench_collate_default(o->bench, io, &b, err);
    if (rc)
        return rc;
    rc = ib_session_run(w->sessions[0], b.inputs, b.n_inputs, b.outputs, b.n_outputs, err);
    if (rc)
        return rc;
    return o->bench->postprocess(o->state, o->cfg, &b, w->payloads, err);
}

/* Process one taken batch as chunks and complete each chunk. */
static int process(worker *w, size_t n, ib_lg_test *test, ib_err *err)
{
    size_t mb = (size_t)w->sut->o.max_batch;
    const _Atomic int *stop = w->sut->o.stop_flag;
    for (size_t done = 0; done < n;) {
        if (stop && atomic_load_explicit(stop, memory_order_relaxed)) {
            /* interrupted: answer the rest without running it (the run is INVALID anyway,
             * and the loadgen waits for every issued sample before writing its logs) */
            size_t c = IB_MIN(n - done, mb);
            for (size_t i = 0; i < c; i++)
                w->resp[i] = (ib_lg_response){w->taken[done + i].id, NULL, 0, 0};
            int64_t t0 = ib_time_ns();
            ib_lg_samples_complete(test, w->resp, c);
            w->responses_ns += ib_time_ns() - t0;
            done += c;
            continue;
        }
        size_t c = next_chunk(n - done, mb);
        for (size_t i = 0; i < c; i++) {
            const ib_lg_sample *smp = &w->taken[done + i];
            w->indices[i] = smp->index;
            w->samples[i] = ib_hqsl_sample(w->sut->o.qsl, smp->index);
            if (!w->samples[i])
                return ib_err_set(err, IB_ESTATE,
                                  "SUT: sample %zu was issued but is not loaded in the QSL",
                                  (size_t)smp->index);
        }
        int rc = run_chunk(w, c, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < c; i++) {
            w->resp[i].id = w->taken[done + i].id;
            w->resp[i].data = w->payloads[i].data;
            w->resp[i].size = w->payloads[i].size;
            w->resp[i].n_tokens = 0;
        }
        int64_t t0 = ib_time_ns();
        ib_lg_samples_complete(test, w->resp, c);
        w->responses_ns += ib_time_ns() - t0;
        done += c;
    }
    return IB_OK;
}

/* ---- worker start-up --------------------------------------------------------------------- */

/* On a device backend, worker w shares the weights of the first worker on its GPU (devices
 * are dealt round-robin, so that is worker w % n_devices): it waits until that worker's
 * sessions exist (or failed), then creates its own with share_with, so a GPU holds one copy
 * of each model's weights whatever the workers per GPU (issue 24). NULL otherwise. */
static const worker *share_leader(worker *w)
{
    struct ib_hsut *s = w->sut;
    int lead = s->o.n_devices > 0 ? w->id % s->o.n_devices : w->id;
    if (lead == w->id)
        return NULL;
    const worker *l = &s->w[lead];
    ib_mutex_lock(&s->mu);
    while (!l->sessions_done && !s->stop)
        ib_cond_wait(&s->ready_cv, &s->mu);
    ib_mutex_unlock(&s->mu);
    return l;
}

static void mark_sessions_done(worker *w)
{
    struct ib_hsut *s = w->sut;
    ib_mutex_lock(&s->mu);
    w->sessions_done = true;
    ib_cond_broadcast(&s->ready_cv);
    ib_mutex_unlock(&s->mu);
}

/* The precision of model m's sessions. Only model 0 has calibration inputs, so at int8 or
 * fp8 the other models run at a float precision: an entry's helper graph (3d-unet's window
 * sums: float32 sums) at fp32; another network (RNN-T's prediction, joint and decoder step,
 * whose inputs are the encoder's outputs; NVIDIA's published RNN-T runs its encoder at int8
 * and the rest at fp16 too) at fp16 on a device backend and at fp32 on the host, judged by
 * model 0's session (`first`). */
static enum ib_precision model_precision(const ib_hsut_opts *o, size_t m, const ib_session *first)
{
    if (m == 0)
        return o->precision;
    if (o->bench->helper_models)
        return IB_PRECISION_FP32;
    if (!ib_precision_calibrated(o->precision))
        return o->precision;
    return first && ib_bench_session_on_device(first) ? IB_PRECISION_FP16 : IB_PRECISION_FP32;
}

static int worker_sessions(worker *w, ib_err *err)
{
    struct ib_hsut *s = w->sut;
    const ib_hsut_opts *o = &s->o;
    const worker *lead = share_leader(w);
    for (size_t m = 0; m < o->n_models; m++) {
        ib_session_options so;
        ib_session_options_defaults(&so);
        so.backend = o->backend;
        so.threads = o->threads_per_worker;
        so.first_cpu = o->pin ? w->id * o->threads_per_worker : -1;
        so.device = o->n_devices > 0 ? o->devices[w->id % o->n_devices] : 0;
        so.precision = model_precision(o, m, m ? w->sessions[0] : NULL);
        so.share_with = lead ? lead->sessions[m] : NULL;
        so.nhwc_fp16 = o->nhwc_fp16;
        so.half_chains = o->half_chains;
        so.keep_inputs = o->io[m].keep_inputs;
        so.max_batch = o->max_batch * (o->bench->rows_per_sample_max > 1
                                           ? o->bench->rows_per_sample_max
                                           : 1);
        if (m == 0 && s->calib_batches) {
            so.calib_inputs = s->calib;
            so.calib_batches = s->calib_batches;
            so.calib_input_count = o->io[0].n_inputs;
        }
        ib_err e;
        ib_err_clear(&e);
        int rc = ib_session_create(o->models[m], &so, &w->sessions[m], &e);
        if (rc)
            return ib_err_set(err, rc, "worker %d (device %d): model %zu: %s", w->id, so.device,
                              m, e.msg);
        if (w->id == 0)
            s->model_prec[m] = so.precision; /* every worker chooses the same */
    }
    return IB_OK;
}

static void *scratch_alloc(void *user, size_t n)
{
    ib_err e;
    return ib_session_host_alloc(user, n, &e);
}

static void scratch_release(void *user, void *p)
{
    ib_session_host_free(user, p);
}

/* The worker's batch buffers (collated inputs, outputs) in session 0's host memory: on cuda
 * page-locked, so each tensor goes to or from the device in one DMA. */
static int worker_buffers(worker *w, ib_err *err)
{
    struct ib_hsut *s = w->sut;
    w->scratch.alloc = scratch_alloc;
    w->scratch.release = scratch_release;
    w->scratch.user = w->sessions[0];
    size_t mb = (size_t)s->o.max_batch;
    const ib_bench_io *io = &s->o.io[0];
    for (size_t k = 0; k < io->n_outputs; k++) {
        size_t per = io->outputs[k].max_bytes_per_sample;
        if (per == 0 || per > SIZE_MAX / mb)
            return ib_err_set(err, IB_EINVAL, "worker %d: output '%s' of %zu bytes per sample",
                              w->id, io->outputs[k].name, per);
        ib_err e;
        if (!(w->out_mem[k] = ib_session_host_alloc(w->sessions[0], per * mb, &e)))
            return ib_err_set(err, e.code, "worker %d: output '%s': %s", w->id,
                              io->outputs[k].name, e.msg);
    }
    return IB_OK;
}

/* One run of chunk size n on the samples the QSL holds for warm-up (indices 0..k-1). */
static int warm_run(worker *w, size_t n, ib_err *err)
{
    struct ib_hsut *s = w->sut;
    size_t avail = IB_MIN(s->o.total, (size_t)s->o.max_batch);
    for (size_t i = 0; i < n; i++) {
        w->indices[i] = i % avail;
        w->samples[i] = ib_hqsl_sample(s->o.qsl, i % avail);
    }
    return run_chunk(w, n, err);
}

/* Warm-up, alone: run every chunk size once (max_batch first; its run's span is the rate's
 * fallback), then time batch 1: its first run pays one-time costs and is not timed, then the
 * best of up to three more runs is the latency (runs stop once one takes over a second). The
 * best run, not a typical one: a warm-up slowed by other load would size the test short.
 * --quick keeps to its budget by timing fewer repetitions. */
static int worker_warmup(worker *w, ib_err *err)
{
    struct ib_hsut *s = w->sut;
    size_t mb = (size_t)s->o.max_batch;
    size_t sizes[72], ns = 0;
    sizes[ns++] = mb;
    for (size_t c = 1; c < mb && ns < 70; c *= 2)
        sizes[ns++] = c;
    int64_t budget = s->o.warmup_budget_ns, t_start = ib_time_ns();
    for (size_t k = 0; k < ns; k++) {
        size_t n = sizes[k];
        bool timed = n == 1;
        if (budget && k > 0 && !timed && ib_time_ns() - t_start > budget)
            continue; /* over budget: the untimed sizes only warm caches */
        int64_t best = INT64_MAX;
        for (int r = 0; r < (timed ? 4 : 1); r++) {
            int64_t t0 = ib_time_ns();
            int rc = warm_run(w, n, err);
            if (rc)
                return rc;
            int64_t t1 = ib_time_ns(), dt = t1 - t0;
            if (k == 0) {
                w->warm_t0 = t0;
                w->warm_t1 = t1;
                w->warm_n = n;
            }
            if (r == 0 && budget && t1 - t_start > budget / 2) {
                best = dt; /* no time for a second run: the first one (a slight over-estimate
                            * of the latency) stands */
                break;
            }
            if (r == 0)
                continue;
            best = dt < best ? dt : best;
            if (dt > 1000000000 || (budget && ib_time_ns() - t_start > budget))
                break;
        }
        if (timed)
            w->warm_lat_ns = best < INT64_MAX ? best : 0;
    }
    return IB_OK;
}

/* The rate at max_batch, timed on every worker at once from one common start: workers
 * sharing a device (two per GPU) or memory bandwidth then share it as in the test. Timed
 * alone and summed, two workers of one GPU each measured the whole device: a rate up to
 * twice what the device gives (issue 24's "50-60 % of the warm-up rate"). Up to three runs,
 * fewer once one takes over a second or the --quick budget is spent. */
static int worker_rate(worker *w, int64_t t_release, ib_err *err)
{
    struct ib_hsut *s = w->sut;
    size_t mb = (size_t)s->o.max_batch, done = 0;
    int64_t budget = s->o.warmup_budget_ns, t1 = t_release;
    for (int r = 0; r < 3; r++) {
        int64_t t0 = ib_time_ns();
        int rc = warm_run(w, mb, err);
        if (rc)
            return rc;
        t1 = ib_time_ns();
        done += mb;
        if (t1 - t0 > 1000000000 || (budget && t1 - s->t_create > budget))
            break;
    }
    w->warm_t0 = t_release;
    w->warm_t1 = t1;
    w->warm_n = done;
    return IB_OK;
}

/* Every worker waits here after its warm-up (failed ones too) until all have arrived; the
 * last one decides whether the timed runs happen together and releases the others. */
static bool warm_barrier(struct ib_hsut *s, int64_t *t_release)
{
    ib_mutex_lock(&s->mu);
    if (++s->warm_arrived >= s->o.workers) {
        int64_t now = ib_time_ns();
        s->warm_together = !(s->o.warmup_budget_ns && now - s->t_create > s->o.warmup_budget_ns / 2);
        s->warm_release = now;
        ib_cond_broadcast(&s->ready_cv);
    }
    while (s->warm_arrived < s->o.workers)
        ib_cond_wait(&s->ready_cv, &s->mu);
    bool together = s->warm_together;
    *t_release = s->warm_release;
    ib_mutex_unlock(&s->mu);
    return together;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    struct ib_hsut *s = w->sut;
    ib_err_clear(&w->err);
    w->rc = worker_sessions(w, &w->err);
    mark_sessions_done(w);
    if (!w->rc)
        w->rc = worker_buffers(w, &w->err);
    if (!w->rc) {
        ib_err e;
        ib_err_clear(&e);
        w->rc = worker_warmup(w, &e);
        if (w->rc)
            ib_err_set(&w->err, w->rc, "worker %d: warm-up: %s", w->id, e.msg);
    }
    int64_t t_release;
    if (warm_barrier(s, &t_release) && !w->rc) {
        ib_err e;
        ib_err_clear(&e);
        w->rc = worker_rate(w, t_release, &e);
        if (w->rc)
            ib_err_set(&w->err, w->rc, "worker %d: warm-up: %s", w->id, e.msg);
    }
    ib_mutex_lock(&s->mu);
    s->ready++;
    if (!w->rc)
        s->started_ok++;
    ib_cond_broadcast(&s->ready_cv);
    if (w->rc) {
        ib_mutex_unlock(&s->mu);
        return NULL;
    }
    size_t mb = (size_t)s->o.max_batch;
    while (!s->stop) {
        if (s->q.count == 0 || s->failed) {
            ib_cond_wait(&s->cv, &s->mu);
            continue;
        }
        size_t n = IB_MIN(s->q.count, mb);
        if (n < mb && s->o.max_wait_ns > 0) {
            int64_t deadline = ib_squeue_oldest_ns(&s->q) + s->o.max_wait_ns;
            if (ib_time_ns() < deadline) {
                ib_cond_wait_until(&s->cv, &s->mu, deadline);
                continue;
            }
        }
        ib_squeue_take(&s->q, w->taken, n);
        ib_lg_test *test = s->test;
        s->busy++;
        if (s->q.count)
            ib_cond_signal(&s->cv);
        ib_mutex_unlock(&s->mu);
        ib_err e;
        ib_err_clear(&e);
        int64_t t0 = ib_time_ns();
        int rc = process(w, n, test, &e);
        w->t_done = ib_time_ns();
        w->busy_ns += w->t_done - t0;
        if (rc) {
            bool first;
            ib_mutex_lock(&s->mu);
            first = !s->failed;
            if (first) {
                s->failed = true;
                s->rc = rc;
                ib_err_set(&s->err, rc, "worker %d: %s", w->id, e.msg);
            }
            ib_mutex_unlock(&s->mu);
            if (first)
                ib_lg_test_abort(test); /* still busy: the test outlives this call */
        }
        ib_mutex_lock(&s->mu);
        if (--s->busy == 0)
            ib_cond_broadcast(&s->idle_cv);
    }
    ib_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- loadgen callbacks -------------------------------------------------------------------- */

static void sut_issue(void *user, ib_lg_test *test, const ib_lg_sample *samples, size_t count)
{
    struct ib_hsut *s = user;
    int64_t now = ib_time_ns();
    ib_mutex_lock(&s->mu);
    s->test = test;
    if (!s->t_first_issue)
        s->t_first_issue = now;
    if (ib_squeue_push(&s->q, samples, count, now)) {
        /* the samples stay incomplete; the test ends with a timeout naming it */
        if (!s->failed) {
            s->failed = true;
            s->rc = IB_ENOMEM;
            ib_err_set(&s->err, IB_ENOMEM, "SUT: out of memory queueing %zu samples", count);
        }
        ib_mutex_unlock(&s->mu);
        ib_lg_test_abort(test);
        return;
    }
    if (count > 1)
        ib_cond_broadcast(&s->cv);
    else
        ib_cond_signal(&s->cv);
    ib_mutex_unlock(&s->mu);
}

ib_lg_sut ib_hsut_table(ib_hsut *s)
{
    ib_lg_sut t = {s, "InferbenchSUT", sut_issue, NULL};
    return t;
}

void ib_hsut_set_max_wait(ib_hsut *s, int64_t ns)
{
    ib_mutex_lock(&s->mu);
    s->o.max_wait_ns = ns;
    ib_mutex_unlock(&s->mu);
}

void ib_hsut_quiesce(ib_hsut *s)
{
    ib_mutex_lock(&s->mu);
    if (s->failed)
        s->q.count = 0; /* an aborted test's samples are never processed */
    while (s->busy > 0)
        ib_cond_wait(&s->idle_cv, &s->mu);
    ib_mutex_unlock(&s->mu);
}

int ib_hsut_take_error(ib_hsut *s, ib_err *err)
{
    ib_mutex_lock(&s->mu);
    s->q.count = 0; /* whatever an aborted test left queued is dropped ... */
    while (s->busy > 0) /* ... and nobody touches the test once this returns */
        ib_cond_wait(&s->idle_cv, &s->mu);
    int rc = s->rc;
    if (rc && err)
        *err = s->err;
    s->rc = IB_OK;
    s->failed = false;
    s->test = NULL;
    ib_err_clear(&s->err);
    ib_mutex_unlock(&s->mu);
    return rc;
}

/* ---- the test's time -------------------------------------------------------------------- */

void ib_hsut_times_reset(ib_hsut *s)
{
    ib_mutex_lock(&s->mu); /* the workers' last writes happened before their unlock */
    s->t_first_issue = 0;
    for (int i = 0; i < s->o.workers; i++) {
        worker *w = &s->w[i];
        w->busy_ns = w->responses_ns = w->t_done = 0;
        for (size_t m = 0; m < s->o.n_models; m++)
            ib_session_times_get(w->sessions[m], &w->base[m]);
    }
    ib_mutex_unlock(&s->mu);
}

static double secs(int64_t ns)
{
    return ns > 0 ? (double)ns / 1e9 : 0.0;
}

void ib_hsut_times_get(const ib_hsut *s, ib_harness_worker_time *out)
{
    memset(out, 0, sizeof *out);
    out->workers = s->o.workers;
    int64_t t_end = 0, busy = 0, resp = 0, cmp = 0, in = 0, outp = 0;
    for (int i = 0; i < s->o.workers; i++) {
        const worker *w = &s->w[i];
        t_end = IB_MAX(t_end, w->t_done);
        busy += w->busy_ns;
        resp += w->responses_ns;
        for (size_t m = 0; m < s->o.n_models; m++) {
            ib_session_times t;
            ib_session_times_get(w->sessions[m], &t);
            out->runs += t.runs - w->base[m].runs;
            cmp += t.compute_ns - w->base[m].compute_ns;
            in += t.inputs_ns - w->base[m].inputs_ns;
            outp += t.outputs_ns - w->base[m].outputs_ns;
        }
    }
    if (!s->t_first_issue || t_end <= s->t_first_issue) { /* no sample ran */
        memset(out, 0, sizeof *out);
        out->workers = s->o.workers;
        return;
    }
    int64_t span = t_end - s->t_first_issue;
    out->span_s = secs(span);
    out->compute_s = secs(cmp);
    out->inputs_s = secs(in);
    out->outputs_s = secs(outp);
    out->responses_s = secs(resp);
    /* the rest of the batches' time was the host's; clocks read apart may overlap a little */
    out->host_s = secs(busy - cmp - in - outp - resp);
    out->idle_s = secs((int64_t)s->o.workers * span - busy);
}

/* ---- create / destroy ------------------------------------------------------------------- */

/* Calibration views for model 0: one batch of one sample each, the samples the QSL holds
 * (already loaded by create), or what the entry's calib_inputs makes of them. */
static int build_calib(struct ib_hsut *s, size_t n, ib_err *err)
{
    const ib_bench_io *io = &s->o.io[0];
    const ib_benchmark *b = s->o.bench;
    s->calib = ib_calloc(n * io->n_inputs, sizeof *s->calib);
    s->calib_mem = ib_calloc(n, sizeof *s->calib_mem);
    if (!s->calib || !s->calib_mem)
        return ib_err_set(err, IB_ENOMEM, "SUT: out of memory for calibration");
    s->calib_cap = n;
    for (size_t i = 0; i < n; i++) {
        size_t idx = b->calib_index ? b->calib_index(s->o.state, i) : i;
        const ib_bench_sample *smp = ib_hqsl_sample(s->o.qsl, idx);
        if (!smp)
            return ib_err_set(err, IB_EINVAL, "SUT: calibration sample %zu not loaded", idx);
        ib_tensor_view *v = s->calib + i * io->n_inputs;
        if (b->calib_inputs) {
            ib_err e;
            ib_err_clear(&e);
            int rc = b->calib_inputs(s->o.state, s->o.cfg, smp, v, &s->calib_mem[i], &e);
            if (rc)
                return ib_err_set(err, rc, "SUT: calibration sample %zu: %s", idx, e.msg);
            continue;
        }
        if (smp->n_tensors < io->n_inputs)
            return ib_err_set(err, IB_EINVAL,
                              "SUT: calibration sample %zu has %zu tensors; model 0 takes %zu "
                              "inputs (the entry needs a calib_inputs hook)",
                              idx, smp->n_tensors, io->n_inputs);
        for (size_t k = 0; k < io->n_inputs; k++)
            v[k] = smp->t[k];
    }
    s->calib_batches = n;
    return IB_OK;
}

static void free_calib(struct ib_hsut *s)
{
    for (size_t i = 0; s->calib_mem && i < s->calib_cap; i++)
        ib_free(s->calib_mem[i]);
    ib_free(s->calib_mem);
    ib_free(s->calib);
    s->calib_mem = NULL;
    s->calib = NULL;
    s->calib_batches = s->calib_cap = 0;
}

static int worker_alloc(struct ib_hsut *s, worker *w)
{
    size_t mb = (size_t)s->o.max_batch;
    w->taken = ib_calloc(mb, sizeof *w->taken);
    w->samples = ib_calloc(mb, sizeof *w->samples);
    w->indices = ib_calloc(mb, sizeof *w->indices);
    w->resp = ib_calloc(mb, sizeof *w->resp);
    w->payloads = ib_calloc(mb, sizeof *w->payloads);
    w->payload_mem = ib_calloc(mb, s->payload_cap ? s->payload_cap : 1);
    if (!w->taken || !w->samples || !w->indices || !w->resp || !w->payloads || !w->payload_mem)
        return IB_ENOMEM;
    for (size_t i = 0; i < mb; i++)
        w->payloads[i].data = w->payload_mem + i * s->payload_cap;
    return IB_OK;
}

static void worker_free(worker *w)
{
    /* host memory of session 0 first: it must go before the session */
    for (size_t k = 0; k < IB_BENCH_MAX_TENSORS; k++)
        ib_session_host_free(w->sessions[0], w->out_mem[k]);
    ib_bench_scratch_free(&w->scratch);
    for (size_t m = 0; m < IB_BENCH_MAX_MODELS; m++)
        ib_session_destroy(w->sessions[m]);
    ib_free(w->taken);
    ib_free(w->samples);
    ib_free(w->indices);
    ib_free(w->resp);
    ib_free(w->payloads);
    ib_free(w->payload_mem);
}

int ib_hsut_create(const ib_hsut_opts *o, ib_hsut **out, ib_err *err)
{
    *out = NULL;
    if (o->workers < 1 || o->workers > MAX_WORKERS || o->threads_per_worker < 1 ||
        o->max_batch < 1 || o->n_models < 1 || o->n_models > IB_BENCH_MAX_MODELS)
        return ib_err_set(err, IB_EINVAL,
                          "SUT: workers 1..%d, threads >= 1, batch >= 1 and 1..%d models needed",
                          MAX_WORKERS, IB_BENCH_MAX_MODELS);
    struct ib_hsut *s = ib_calloc(1, sizeof *s + (size_t)o->workers * sizeof(worker));
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "SUT: out of memory");
    s->o = *o;
    s->t_create = ib_time_ns();
    s->payload_cap = o->bench->payload_max_bytes(o->state, o->cfg);
    int rc = ib_mutex_init(&s->mu);
    if (rc) {
        ib_free(s);
        return ib_err_set(err, rc, "SUT: cannot create a mutex");
    }
    if (ib_cond_init(&s->cv) || ib_cond_init(&s->ready_cv) || ib_cond_init(&s->idle_cv)) {
        ib_mutex_destroy(&s->mu);
        ib_free(s);
        return ib_err_set(err, IB_ENOMEM, "SUT: cannot create a condition variable");
    }
    /* warm-up and calibration samples: the first ones of the dataset, loaded in the QSL
     * until the workers are ready (the loadgen has not started yet) */
    size_t warm = IB_MIN(o->total, (size_t)o->max_batch);
    size_t calib = 0;
    if (ib_precision_calibrated(o->precision)) {
        calib = o->calib_samples ? o->calib_samples : o->bench->calib_samples;
        calib = IB_MIN(IB_MAX(calib, (size_t)1), o->total);
    }
    size_t nload = IB_MAX(warm, calib);
    ib_lg_sample_index *idx = ib_malloc(sizeof *idx * (nload ? nload : 1));
    if (!idx) {
        ib_hsut_destroy(s);
        return ib_err_set(err, IB_ENOMEM, "SUT: out of memory");
    }
    for (size_t i = 0; i < nload; i++)
        idx[i] = (i < calib && o->bench->calib_index) ? o->bench->calib_index(o->state, i) : i;
    rc = ib_hqsl_load(o->qsl, idx, nload, err);
    if (!rc && calib)
        rc = build_calib(s, calib, err);
    for (int i = 0; !rc && i < o->workers; i++) {
        worker *w = &s->w[i];
        w->sut = s;
        w->id = i;
        if (worker_alloc(s, w))
            rc = ib_err_set(err, IB_ENOMEM, "SUT: out of memory for worker buffers");
    }
    int started = 0;
    for (int i = 0; !rc && i < o->workers; i++) {
        if (ib_thread_create(&s->w[i].th, worker_main, &s->w[i]) != IB_OK) {
            rc = ib_err_set(err, IB_ENOMEM, "SUT: cannot start worker thread %d", i);
            break;
        }
        s->w[i].started = true;
        started++;
    }
    ib_mutex_lock(&s->mu);
    s->warm_arrived += o->workers - started; /* workers that never started: past the barrier */
    for (int i = started; i < o->workers; i++)
        s->w[i].sessions_done = true; /* and nobody waits for their sessions */
    ib_cond_broadcast(&s->ready_cv);
    while (s->ready < started)
        ib_cond_wait(&s->ready_cv, &s->mu);
    ib_mutex_unlock(&s->mu);
    for (int i = 0; !rc && i < o->workers; i++)
        if (s->w[i].rc) {
            rc = s->w[i].rc;
            if (err)
                *err = s->w[i].err;
        }
    /* the calibration views point into these samples: sessions copied what they needed */
    ib_hqsl_unload(o->qsl, idx, nload);
    ib_free(idx);
    free_calib(s);
    if (rc) {
        ib_hsut_destroy(s);
        return rc;
    }
    *out = s;
    return IB_OK;
}

void ib_hsut_destroy(ib_hsut *s)
{
    if (!s)
        return;
    ib_mutex_lock(&s->mu);
    s->stop = true;
    ib_cond_broadcast(&s->cv);
    ib_mutex_unlock(&s->mu);
    for (int i = 0; i < s->o.workers; i++) {
        if (s->w[i].started)
            ib_thread_join(&s->w[i].th);
        worker_free(&s->w[i]);
    }
    ib_squeue_free(&s->q);
    free_calib(s);
    ib_cond_destroy(&s->cv);
    ib_cond_destroy(&s->ready_cv);
    ib_cond_destroy(&s->idle_cv);
    ib_mutex_destroy(&s->mu);
    ib_free(s);
}

double ib_hsut_warmup_rate(const ib_hsut *s)
{
    /* all workers' timed samples over the span from the first start to the last end: the
     * common start when they ran together, else their first max_batch runs (which overlap
     * when the workers started together; a span that does not overlap understates it) */
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    size_t n = 0;
    for (int i = 0; i < s->o.workers; i++) {
        const worker *w = &s->w[i];
        if (!w->warm_n)
            continue;
        n += w->warm_n;
        t0 = IB_MIN(t0, w->warm_t0);
        t1 = IB_MAX(t1, w->warm_t1);
    }
    return n && t1 > t0 ? (double)n * 1e9 / (double)(t1 - t0) : 0;
}

int64_t ib_hsut_warmup_latency_ns(const ib_hsut *s)
{
    int64_t best = 0;
    for (int i = 0; i < s->o.workers; i++)
        if (s->w[i].warm_lat_ns > best)
            best = s->w[i].warm_lat_ns;
    return best;
}

enum ib_precision ib_hsut_model_precision(const ib_hsut *s, size_t m)
{
    return m < s->o.n_models && s->w[0].sessions[m] ? s->model_prec[m] : s->o.precision;
}

const char *ib_hsut_describe(const ib_hsut *s)
{
    return s->w[0].sessions[0] ? ib_session_describe(s->w[0].sessions[0]) : "";
}

void ib_hsut_replay(const ib_hsut *s, ib_session_replay *out)
{
    memset(out, 0, sizeof *out);
    out->why = "";
    for (size_t m = 0; m < s->o.n_models && s->w[0].sessions[m]; m++) {
        ib_session_replay r;
        ib_session_replay_get(s->w[0].sessions[m], &r);
        if (r.refused && !out->refused)
            out->why = r.why;
        out->subgraphs += r.subgraphs;
        out->replayed += r.replayed;
        out->refused += r.refused;
    }
}

void ib_hsut_placement(const ib_hsut *s, ib_session_placement *out, char *ops, size_t ops_cap)
{
    memset(out, 0, sizeof *out);
    out->backend = out->fallback = "";
    size_t used = 0;
    if (ops_cap) ops[0] = '\0';
    for (size_t m = 0; m < s->o.n_models && s->w[0].sessions[m]; m++) {
        ib_session_placement p;
        ib_session_placement_get(s->w[0].sessions[m], &p);
        out->backend = p.backend;
        if (p.fallback[0]) out->fallback = p.fallback;
        out->nodes += p.nodes;
        out->fallback_nodes += p.fallback_nodes;
        if (p.fallback_ops[0])
            ib_cbuf_join(ops, ops_cap, &used, p.fallback_ops);
    }
    out->fallback_ops = ops_cap ? ops : "";
}

void ib_hsut_precision_use(const ib_hsut *s, ib_session_precision_use *out, char *others,
                           size_t others_cap)
{
    memset(out, 0, sizeof *out);
    size_t used = 0;
    if (others_cap)
        others[0] = '\0';
    for (size_t m = 0; m < s->o.n_models && s->w[0].sessions[m]; m++) {
        ib_session_precision_use u;
        ib_session_precision_use_get(s->w[0].sessions[m], &u);
        if (!m)
            out->precision = u.precision;
        out->products += u.products;
        out->at_precision += u.at_precision;
        if (u.others[0])
            ib_cbuf_join(others, others_cap, &used, u.others);
    }
    out->others = others_cap ? others : "";
}
