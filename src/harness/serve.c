/*
 * serve.c - the KServe v2 model server (serve.h): routes, request checks, the batching
 * queue and its workers, metrics.
 *
 * A request lives on its connection's thread (libmicrohttpd, one thread per connection):
 * the handler decodes it (tensors point into the body, which the connection keeps), queues
 * a `job` and waits on the job's condition; a worker takes jobs, runs them as one batch and
 * writes each job's encoded response, then signals it. So the handler returns only with
 * its answer, and no memory is copied beyond the batch's concatenation.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/strbuf.h"
#include "base/thread.h"
#include "base/time.h"
#include "base/json_writer.h"
#include "harness/scratch.h"
#include "harness/serve.h"
#include "inferbench/version.h"
#include "net/http_server.h"
#include "net/kserve.h"

#define SV_MAX_WORKERS 64
/* Prometheus histogram bounds: request latency (seconds) */
static const double g_lat_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                      0.1,    0.25,  0.5,    1,     2.5,  5,     10};
#define SV_NLAT   (sizeof g_lat_bounds / sizeof g_lat_bounds[0])
#define SV_NBATCH 16 /* batch-size histogram: powers of two 1..2^15 */

typedef struct job {
    const ib_ks_msg *req;
    int64_t rows;
    int64_t t_ns;
    struct job *next;
    /* result, written by the worker */
    bool done;
    int status;
    ib_strbuf *out;  /* the response body */
    size_t json_len; /* binary response: the JSON header length */
    ib_cond cv;
} job;

typedef struct sv_worker {
    struct ib_serve *s;
    int id;
    ib_thread th;
    bool started;
    ib_session *session;
    job *batch[4096];
    /* batched inputs in slots 0..7, outputs in 8..15, kept between batches */
    ib_bench_scratch scratch;
} sv_worker;

struct ib_serve {
    ib_serve_opts o;
    ib_harness_models m;
    const ib_bench_io *io;
    char name[IB_KS_NAME_MAX];
    char describe[512];
    int64_t max_rows, max_delay_ns;
    size_t max_queue;
    ib_http_server *http;
    /* queue */
    ib_mutex mu;
    ib_cond cv;      /* workers wait for jobs */
    ib_cond idle_cv; /* drain waits for an empty queue */
    job *head, *tail;
    size_t queued;
    int busy;
    bool stop;
    _Atomic bool ready, draining;
    /* metrics */
    _Atomic uint64_t code_count[6]; /* 200, 400, 404/405, 413/429, 500, 503 */
    _Atomic uint64_t requests, rows, batches;
    _Atomic uint64_t batch_hist[SV_NBATCH];
    _Atomic uint64_t lat_hist[SV_NLAT + 1];
    _Atomic uint64_t lat_sum_us;
    int n_workers;
    sv_worker *w;
};

void ib_serve_opts_defaults(ib_serve_opts *o)
{
    memset(o, 0, sizeof *o);
    ib_harness_opts_defaults(&o->h);
    o->max_delay_us = -1;
}

static void stage(const ib_serve *s, const char *msg)
{
    if (s->o.h.stage) s->o.h.stage(s->o.h.stage_user, msg);
}

/* ---- responses ----------------------------------------------------------------------------- */

static int code_slot(int status)
{
    switch (status) {
    case 200:
        return 0;
    case 400:
        return 1;
    case 404:
    case 405:
        return 2;
    case 413:
    case 429:
        return 3;
    case 503:
        return 5;
    default:
        return 4;
    }
}

static void json_error(ib_http_response *r, int status, const char *fmt, ...) IB_PRINTF(3, 4);

/* body := {"error": msg} (the protocol's error answer). */
static void error_body(ib_strbuf *body, const char *msg)
{
    ib_strbuf_reset(body);
    ib_strbuf_puts(body, "{\"error\":\"");
    ib_json_escape(body, msg, strlen(msg));
    ib_strbuf_puts(body, "\"}");
}

static void json_error(ib_http_response *r, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->status = status;
    error_body(&r->body, msg);
}

/* A JSON string value: quoted and escaped. */
static void put_str(ib_strbuf *b, const char *s)
{
    ib_strbuf_putc(b, '"');
    ib_json_escape(b, s, strlen(s));
    ib_strbuf_putc(b, '"');
}

/* ---- model metadata ------------------------------------------------------------------------ */

static void put_dims(ib_strbuf *b, const ib_tensor_desc *d, bool batched)
{
    ib_strbuf_putc(b, '[');
    for (int32_t i = 0; i < d->ndim; i++)
        ib_strbuf_printf(b, "%s%lld", i ? "," : "",
                         (long long)(i == 0 && batched ? -1 : d->dims[i]));
    ib_strbuf_putc(b, ']');
}

static void model_metadata(const ib_serve *s, ib_strbuf *b)
{
    ib_strbuf_printf(b, "{\"name\":\"%s\",\"versions\":[\"1\"],\"platform\":\"inferbench_%s\",",
                     s->name, s->o.null_model ? "null" : s->o.h.backend);
    if (s->o.null_model) {
        ib_strbuf_puts(
            b, "\"inputs\":[{\"name\":\"INDEX\",\"datatype\":\"UINT32\",\"shape\":[-1]}],"
               "\"outputs\":[{\"name\":\"INDEX\",\"datatype\":\"UINT32\",\"shape\":[-1]}]}");
        return;
    }
    const ib_bench_io *io = s->io;
    ib_strbuf_puts(b, "\"inputs\":[");
    for (size_t i = 0; i < io->n_inputs; i++) {
        const ib_bench_input *in = &io->inputs[i];
        ib_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        put_str(b, in->name); /* a model's names are its author's: escaped */
        ib_strbuf_printf(b, ",\"datatype\":\"%s\",\"shape\":", ib_ks_datatype(in->desc.dtype));
        put_dims(b, &in->desc, in->batched);
        ib_strbuf_putc(b, '}');
    }
    ib_strbuf_puts(b, "],\"outputs\":[");
    for (size_t i = 0; i < io->n_outputs; i++) {
        ib_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        put_str(b, io->outputs[i].name);
        ib_strbuf_printf(b, ",\"datatype\":\"%s\",\"shape\":[-1]}",
                         ib_ks_datatype(io->outputs[i].dtype));
    }
    ib_strbuf_printf(b, "],\"parameters\":{\"max_batch_rows\":%lld,\"random_weights\":%s}}",
                     (long long)s->max_rows, s->o.h.model_path ? "false" : "true");
}

static void metrics_page(ib_serve *s, ib_strbuf *b)
{
    static const char *const codes[] = {"200", "400", "404", "4xx_limit", "500", "503"};
    ib_strbuf_puts(b, "# HELP inferbench_requests_total Inference requests by HTTP status.\n"
                      "# TYPE inferbench_requests_total counter\n");
    for (size_t i = 0; i < IB_ARRAY_LEN(codes); i++)
        ib_strbuf_printf(b, "inferbench_requests_total{model=\"%s\",code=\"%s\"} %llu\n", s->name,
                         codes[i], (unsigned long long)atomic_load(&s->code_count[i]));
    ib_mutex_lock(&s->mu);
    size_t q = s->queued;
    int busy = s->busy;
    ib_mutex_unlock(&s->mu);
    ib_strbuf_printf(b,
                     "# HELP inferbench_queue_depth Requests waiting for a worker.\n"
                     "# TYPE inferbench_queue_depth gauge\n"
                     "inferbench_queue_depth{model=\"%s\"} %zu\n"
                     "# HELP inferbench_busy_workers Workers running a batch.\n"
                     "# TYPE inferbench_busy_workers gauge\n"
                     "inferbench_busy_workers{model=\"%s\"} %d\n"
                     "# HELP inferbench_inference_rows_total Rows (samples) inferred.\n"
                     "# TYPE inferbench_inference_rows_total counter\n"
                     "inferbench_inference_rows_total{model=\"%s\"} %llu\n",
                     s->name, q, s->name, busy, s->name, (unsigned long long)atomic_load(&s->rows));
    ib_strbuf_puts(b, "# HELP inferbench_batch_size Rows per model execution.\n"
                      "# TYPE inferbench_batch_size histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < SV_NBATCH; i++) {
        cum += atomic_load(&s->batch_hist[i]);
        ib_strbuf_printf(b, "inferbench_batch_size_bucket{model=\"%s\",le=\"%d\"} %llu\n", s->name,
                         1 << i, (unsigned long long)cum);
    }
    ib_strbuf_printf(b,
                     "inferbench_batch_size_bucket{model=\"%s\",le=\"+Inf\"} %llu\n"
                     "inferbench_batch_size_sum{model=\"%s\"} %llu\n"
                     "inferbench_batch_size_count{model=\"%s\"} %llu\n",
                     s->name, (unsigned long long)cum, s->name,
                     (unsigned long long)atomic_load(&s->rows), s->name,
                     (unsigned long long)atomic_load(&s->batches));
    ib_strbuf_puts(b, "# HELP inferbench_request_duration_seconds Infer request latency on "
                      "the server (queue and compute).\n"
                      "# TYPE inferbench_request_duration_seconds histogram\n");
    cum = 0;
    for (size_t i = 0; i <= SV_NLAT; i++) {
        cum += atomic_load(&s->lat_hist[i]);
        if (i < SV_NLAT)
            ib_strbuf_printf(b,
                             "inferbench_request_duration_seconds_bucket{model=\"%s\",le=\"%g\"} "
                             "%llu\n",
                             s->name, g_lat_bounds[i], (unsigned long long)cum);
        else
            ib_strbuf_printf(b,
                             "inferbench_request_duration_seconds_bucket{model=\"%s\",le=\"+Inf\"} "
                             "%llu\n",
                             s->name, (unsigned long long)cum);
    }
    ib_strbuf_printf(b,
                     "inferbench_request_duration_seconds_sum{model=\"%s\"} %.6f\n"
                     "inferbench_request_duration_seconds_count{model=\"%s\"} %llu\n",
                     s->name, (double)atomic_load(&s->lat_sum_us) / 1e6, s->name,
                     (unsigned long long)cum);
}

/* ---- checking a request -------------------------------------------------------------------- */

/* The request's rows, or -1 with a 400 message: every bound input present once with its
 * datatype and per-sample shape, the same row count in all, nothing unknown. */
static int64_t check_request(const ib_serve *s, const ib_ks_msg *m, char *why, size_t n)
{
    const ib_bench_io *io = s->io;
    int64_t rows = -1;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const ib_ks_tensor *t = &m->t[i];
        const ib_bench_input *in = NULL;
        for (size_t k = 0; k < io->n_inputs; k++)
            if (strcmp(io->inputs[k].name, t->name) == 0) in = &io->inputs[k];
        if (!in) {
            snprintf(why, n, "input '%s' is not an input of model '%s'", t->name, s->name);
            return -1;
        }
        if (t->desc.dtype != in->desc.dtype) {
            snprintf(why, n, "input '%s' is %s; the model takes %s", t->name,
                     ib_ks_datatype(t->desc.dtype), ib_ks_datatype(in->desc.dtype));
            return -1;
        }
        bool ok = t->desc.ndim == in->desc.ndim;
        for (int32_t d = in->batched ? 1 : 0; ok && d < t->desc.ndim; d++)
            ok = in->desc.dims[d] == IB_DIM_DYNAMIC || in->desc.dims[d] == t->desc.dims[d];
        if (!ok || t->desc.ndim == 0 || t->desc.dims[0] < 1) {
            char want[128] = "";
            size_t k = 0;
            for (int32_t d = 0; d < in->desc.ndim && k + 24 < sizeof want; d++)
                k += (size_t)snprintf(want + k, sizeof want - k, "%s%lld", d ? "," : "",
                                      (long long)(d == 0 && in->batched ? -1 : in->desc.dims[d]));
            snprintf(why, n, "input '%s': shape does not fit [%s] (-1: any)", t->name, want);
            return -1;
        }
        if (rows >= 0 && t->desc.dims[0] != rows) {
            snprintf(why, n, "inputs disagree on the batch: %lld and %lld rows", (long long)rows,
                     (long long)t->desc.dims[0]);
            return -1;
        }
        rows = t->desc.dims[0];
    }
    for (size_t k = 0; k < io->n_inputs; k++)
        if (!ib_ks_find(m, io->inputs[k].name)) {
            snprintf(why, n, "input '%s' is missing", io->inputs[k].name);
            return -1;
        }
    if (rows > s->max_rows) {
        snprintf(why, n,
                 "%lld rows in one request; this server takes at most %lld (serve "
                 "--max-batch)",
                 (long long)rows, (long long)s->max_rows);
        return -1;
    }
    for (size_t i = 0; i < m->n_outputs; i++) {
        bool found = false;
        for (size_t k = 0; k < io->n_outputs; k++)
            found |= strcmp(io->outputs[k].name, m->outputs[i]) == 0;
        if (!found) {
            snprintf(why, n, "output '%s' is not an output of model '%s'", m->outputs[i], s->name);
            return -1;
        }
    }
    return rows;
}

/* Jobs batch together when every input has the same per-sample shape. */
static bool same_shapes(const ib_ks_msg *a, const ib_ks_msg *b)
{
    for (size_t i = 0; i < a->n_tensors; i++) {
        const ib_ks_tensor *t = ib_ks_find(b, a->t[i].name);
        if (!t || t->desc.ndim != a->t[i].desc.ndim) return false;
        for (int32_t d = 1; d < t->desc.ndim; d++)
            if (t->desc.dims[d] != a->t[i].desc.dims[d]) return false;
    }
    return true;
}

/* ---- workers ------------------------------------------------------------------------------- */

/* Encode one job's outputs (rows [r0, r0+rows) of the batch outputs). */
static void answer(const ib_serve *s, job *j, const ib_tensor_view *outs, size_t n_outs, int64_t r0,
                   int64_t total_rows)
{
    ib_ks_msg m;
    memset(&m, 0, sizeof m);
    snprintf(m.model_name, sizeof m.model_name, "%s", s->name);
    snprintf(m.id, sizeof m.id, "%s", j->req->id);
    for (size_t k = 0; k < n_outs; k++) {
        bool wanted = j->req->n_outputs == 0;
        for (size_t i = 0; i < j->req->n_outputs; i++)
            wanted |= strcmp(j->req->outputs[i], outs[k].name) == 0;
        if (!wanted) continue;
        const ib_tensor_desc *d = &outs[k].desc;
        if (d->ndim < 1 || d->dims[0] != total_rows) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "output '%s' has no batch dimension of %lld rows; serve it with "
                     "--max-batch 1",
                     outs[k].name, (long long)total_rows);
            j->status = 500;
            error_body(j->out, msg);
            return;
        }
        ib_ks_tensor *t = &m.t[m.n_tensors++];
        snprintf(t->name, sizeof t->name, "%s", outs[k].name);
        t->desc = *d;
        t->desc.dims[0] = j->rows;
        size_t row_bytes = (size_t)(ib_tensor_desc_numel(d) / (total_rows ? total_rows : 1)) *
                           ib_dtype_size(d->dtype);
        t->data = (const uint8_t *)outs[k].data + (size_t)r0 * row_bytes;
        t->nbytes = row_bytes * (size_t)j->rows;
    }
    ib_err err;
    ib_err_clear(&err);
    bool binary = j->req->binary_outputs;
    int rc = ib_ks_encode(&m, false, binary, j->out, &j->json_len, &err);
    if (rc) {
        char msg[sizeof err.msg + 32];
        snprintf(msg, sizeof msg, "encoding the response: %s", err.msg);
        j->json_len = 0;
        j->status = 500;
        error_body(j->out, msg);
        return;
    }
    j->status = 200;
}

static void fail_all(job **jobs, size_t n, int status, const char *msg)
{
    for (size_t i = 0; i < n; i++) {
        jobs[i]->json_len = 0;
        jobs[i]->status = status;
        error_body(jobs[i]->out, msg);
    }
}

/* Run jobs[0..n) as one batch and write their answers. */
static void run_batch(sv_worker *w, job **jobs, size_t n, int64_t rows)
{
    ib_serve *s = w->s;
    const ib_bench_io *io = s->io;
    ib_tensor_view in[IB_KS_MAX_TENSORS], out[IB_KS_MAX_TENSORS];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    for (size_t k = 0; k < io->n_inputs; k++) {
        const ib_ks_tensor *t0 = ib_ks_find(jobs[0]->req, io->inputs[k].name);
        in[k].name = io->inputs[k].name;
        in[k].desc = t0->desc;
        in[k].desc.dims[0] = rows;
        if (n == 1) {
            memcpy(&in[k].data, &t0->data, sizeof in[k].data); /* read-only input */
            continue;
        }
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += ib_ks_find(jobs[i]->req, io->inputs[k].name)->nbytes;
        uint8_t *buf = ib_bench_scratch_get(&w->scratch, (unsigned)k, total);
        if (!buf) {
            fail_all(jobs, n, 500, "out of memory batching the inputs");
            return;
        }
        size_t off = 0;
        for (size_t i = 0; i < n; i++) {
            const ib_ks_tensor *t = ib_ks_find(jobs[i]->req, io->inputs[k].name);
            memcpy(buf + off, t->data, t->nbytes);
            off += t->nbytes;
        }
        in[k].data = buf;
    }
    for (size_t k = 0; k < io->n_outputs; k++) {
        size_t cap = io->outputs[k].max_bytes_per_sample * (size_t)rows;
        out[k].name = io->outputs[k].name;
        out[k].data = ib_bench_scratch_get(&w->scratch, IB_KS_MAX_TENSORS + (unsigned)k,
                                           cap ? cap : 1);
        out[k].capacity = cap;
        if (!out[k].data) {
            fail_all(jobs, n, 500, "out of memory for the outputs");
            return;
        }
    }
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_session_run(w->session, in, io->n_inputs, out, io->n_outputs, &err);
    if (rc) {
        fail_all(jobs, n, 500, err.msg);
        return;
    }
    int64_t r0 = 0;
    for (size_t i = 0; i < n; i++) {
        answer(s, jobs[i], out, io->n_outputs, r0, rows);
        r0 += jobs[i]->rows;
    }
    atomic_fetch_add(&s->batches, 1);
    atomic_fetch_add(&s->rows, (uint64_t)rows);
    int b = 0;
    while (b + 1 < SV_NBATCH && ((int64_t)1 << b) < rows)
        b++;
    atomic_fetch_add(&s->batch_hist[b], 1);
}

static void *worker_main(void *arg)
{
    sv_worker *w = arg;
    ib_serve *s = w->s;
    ib_mutex_lock(&s->mu);
    while (!s->stop) {
        if (!s->head) {
            ib_cond_wait(&s->cv, &s->mu);
            continue;
        }
        /* gather: the oldest job and queued jobs of the same shapes, up to max_rows */
        int64_t rows = 0;
        for (job *j = s->head; j; j = j->next)
            if (same_shapes(s->head->req, j->req) && rows + j->rows <= s->max_rows) rows += j->rows;
        if (rows < s->max_rows && s->max_delay_ns > 0) {
            int64_t deadline = s->head->t_ns + s->max_delay_ns;
            if (ib_time_ns() < deadline) {
                ib_cond_wait_until(&s->cv, &s->mu, deadline);
                continue;
            }
        }
        size_t n = 0;
        rows = 0;
        job **pp = &s->head, *first = s->head;
        while (*pp && n < IB_ARRAY_LEN(w->batch)) {
            job *j = *pp;
            if (same_shapes(first->req, j->req) && rows + j->rows <= s->max_rows) {
                *pp = j->next;
                w->batch[n++] = j;
                rows += j->rows;
                s->queued--;
            } else {
                pp = &j->next;
            }
        }
        s->tail = NULL;
        for (job *j = s->head; j; j = j->next)
            s->tail = j;
        s->busy++;
        if (s->head) ib_cond_signal(&s->cv);
        ib_mutex_unlock(&s->mu);
        run_batch(w, w->batch, n, rows);
        ib_mutex_lock(&s->mu);
        for (size_t i = 0; i < n; i++) {
            w->batch[i]->done = true;
            ib_cond_signal(&w->batch[i]->cv);
        }
        s->busy--;
        if (!s->head && s->busy == 0) ib_cond_broadcast(&s->idle_cv);
    }
    ib_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- infer --------------------------------------------------------------------------------- */

static void null_infer(ib_serve *s, const ib_ks_msg *m, ib_http_response *r)
{
    ib_ks_msg out;
    memset(&out, 0, sizeof out);
    snprintf(out.model_name, sizeof out.model_name, "%s", s->name);
    snprintf(out.id, sizeof out.id, "%s", m->id);
    out.n_tensors = m->n_tensors;
    memcpy(out.t, m->t, sizeof m->t);
    size_t jl = 0;
    ib_err err;
    ib_err_clear(&err);
    if (ib_ks_encode(&out, false, m->binary_outputs, &r->body, &jl, &err)) {
        json_error(r, 500, "encoding the response: %s", err.msg);
        return;
    }
    if (m->binary_outputs) {
        snprintf(r->header_name, sizeof r->header_name, "%s", IB_KS_HEADER_LENGTH);
        snprintf(r->header_value, sizeof r->header_value, "%zu", jl);
        r->content_type = "application/octet-stream";
    }
    atomic_fetch_add(&s->rows, m->n_tensors ? (uint64_t)m->t[0].desc.dims[0] : 0);
}

static void infer(ib_serve *s, const ib_http_request *req, ib_http_response *r)
{
    if (atomic_load(&s->draining) || !atomic_load(&s->ready)) {
        json_error(r, 503, "the server is %s",
                   atomic_load(&s->draining) ? "draining (shutting down)" : "starting");
        return;
    }
    const char *hl = ib_http_request_header(req, IB_KS_HEADER_LENGTH);
    size_t json_len = 0;
    if (hl) {
        char *end = NULL;
        unsigned long long v = strtoull(hl, &end, 10);
        if (!*hl || *end || v > req->body_len) {
            json_error(r, 400, "%s: '%s' is not a length within the %zu-byte body",
                       IB_KS_HEADER_LENGTH, hl, req->body_len);
            return;
        }
        json_len = (size_t)v;
    }
    ib_ks_msg m;
    ib_err err;
    ib_err_clear(&err);
    if (ib_ks_decode(req->body, req->body_len, json_len, true, &m, &err)) {
        json_error(r, 400, "%s", err.msg);
        return;
    }
    if (s->o.null_model) {
        null_infer(s, &m, r);
        ib_ks_msg_free(&m);
        return;
    }
    char why[512];
    int64_t rows = check_request(s, &m, why, sizeof why);
    if (rows < 0) {
        ib_ks_msg_free(&m);
        {
            json_error(r, 400, "%s", why);
            return;
        }
    }
    job j;
    memset(&j, 0, sizeof j);
    j.req = &m;
    j.rows = rows;
    j.t_ns = ib_time_ns();
    j.out = &r->body;
    ib_cond_init(&j.cv);
    ib_mutex_lock(&s->mu);
    if (s->stop) {
        ib_mutex_unlock(&s->mu);
        ib_cond_destroy(&j.cv);
        ib_ks_msg_free(&m);
        json_error(r, 503, "the server is shutting down");
        return;
    }
    if (s->queued >= s->max_queue) {
        ib_mutex_unlock(&s->mu);
        ib_cond_destroy(&j.cv);
        ib_ks_msg_free(&m);
        {
            json_error(r, 429, "the queue holds %zu requests (serve --max-queue); retry later",
                       s->max_queue);
            return;
        }
    }
    if (s->tail)
        s->tail->next = &j;
    else
        s->head = &j;
    s->tail = &j;
    s->queued++;
    ib_cond_signal(&s->cv);
    while (!j.done)
        ib_cond_wait(&j.cv, &s->mu);
    ib_mutex_unlock(&s->mu);
    ib_cond_destroy(&j.cv);
    ib_ks_msg_free(&m);
    r->status = j.status;
    if (j.status == 200 && j.json_len) {
        snprintf(r->header_name, sizeof r->header_name, "%s", IB_KS_HEADER_LENGTH);
        snprintf(r->header_value, sizeof r->header_value, "%zu", j.json_len);
        r->content_type = "application/octet-stream";
    }
}

/* ---- routing ------------------------------------------------------------------------------- */

/* "/v2/models/{name}[/versions/1]{rest}": the rest after the model, or NULL when the
 * path names another model (404). */
static const char *model_path(const ib_serve *s, const char *url)
{
    const char *p = url + strlen("/v2/models/");
    size_t n = strlen(s->name);
    if (strncmp(p, s->name, n) != 0 || (p[n] && p[n] != '/')) return NULL;
    p += n;
    if (strncmp(p, "/versions/", 10) == 0) {
        p += 10;
        if (p[0] != '1' || (p[1] && p[1] != '/')) return NULL;
        p++;
    }
    return p;
}

static void handle(void *user, const ib_http_request *req, ib_http_response *r)
{
    ib_serve *s = user;
    int64_t t0 = ib_time_ns();
    bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
    const char *url = req->url;
    bool is_infer = false;
    if (strcmp(url, "/v2/health/live") == 0 && get) {
        ib_strbuf_puts(&r->body, "{\"live\":true}");
    } else if (strcmp(url, "/v2/health/ready") == 0 && get) {
        bool ok = atomic_load(&s->ready) && !atomic_load(&s->draining);
        r->status = ok ? 200 : 503;
        ib_strbuf_printf(&r->body, "{\"ready\":%s}", ok ? "true" : "false");
    } else if ((strcmp(url, "/v2") == 0 || strcmp(url, "/v2/") == 0) && get) {
        ib_strbuf_printf(&r->body,
                         "{\"name\":\"inferbench\",\"version\":\"%s\",\"extensions\":"
                         "[\"binary_tensor_data\"]}",
                         ib_version_string());
    } else if (strcmp(url, "/metrics") == 0 && get) {
        r->content_type = "text/plain; version=0.0.4";
        metrics_page(s, &r->body);
    } else if (strncmp(url, "/v2/models/", 11) == 0) {
        const char *rest = model_path(s, url);
        if (!rest)
            json_error(r, 404, "no model at %s; this server has '%s'", url, s->name);
        else if (!rest[0] && get)
            model_metadata(s, &r->body);
        else if (strcmp(rest, "/ready") == 0 && get) {
            bool ok = atomic_load(&s->ready) && !atomic_load(&s->draining);
            r->status = ok ? 200 : 503;
            ib_strbuf_printf(&r->body, "{\"name\":\"%s\",\"ready\":%s}", s->name,
                             ok ? "true" : "false");
        } else if (strcmp(rest, "/infer") == 0 && post) {
            is_infer = true;
            infer(s, req, r);
        } else if (!rest[0] || strcmp(rest, "/ready") == 0 || strcmp(rest, "/infer") == 0)
            json_error(r, 405, "%s does not take %s", url, req->method);
        else
            json_error(r, 404, "no endpoint %s", url);
    } else {
        json_error(r, 404, "no endpoint %s (KServe v2: /v2/models/%s/infer)", url, s->name);
    }
    if (!is_infer) return;
    atomic_fetch_add(&s->requests, 1);
    atomic_fetch_add(&s->code_count[code_slot(r->status)], 1);
    int64_t us = (ib_time_ns() - t0) / 1000;
    atomic_fetch_add(&s->lat_sum_us, (uint64_t)us);
    size_t b = 0;
    while (b < SV_NLAT && (double)us / 1e6 > g_lat_bounds[b])
        b++;
    atomic_fetch_add(&s->lat_hist[b], 1);
}

/* ---- life cycle ---------------------------------------------------------------------------- */

static int start_workers(ib_serve *s, ib_err *err)
{
    const ib_harness_opts *h = &s->o.h;
    int cpus = ib_cpu_count();
    int threads = h->threads > 0 ? h->threads : cpus;
    int workers = h->workers > 0 ? h->workers : IB_MAX(1, threads / 4);
    workers = IB_MIN(workers, SV_MAX_WORKERS);
    s->w = calloc((size_t)workers, sizeof *s->w);
    if (!s->w) return ib_err_set(err, IB_ENOMEM, "out of memory");
    for (int i = 0; i < workers; i++) {
        sv_worker *w = &s->w[i];
        w->s = s;
        w->id = i;
        ib_session_options so;
        ib_session_options_defaults(&so);
        so.backend = h->backend;
        so.threads = IB_MAX(1, threads / workers);
        so.precision = h->cfg.precision;
        so.max_batch = s->max_rows;
        so.device = 0;
        ib_err e;
        ib_err_clear(&e);
        int rc = ib_session_create(s->m.models[0], &so, &w->session, &e);
        if (rc) return ib_err_set(err, rc, "worker %d: %s", i, e.msg);
        s->n_workers = i + 1;
    }
    for (int i = 0; i < workers; i++) {
        if (ib_thread_create(&s->w[i].th, worker_main, &s->w[i]))
            return ib_err_set(err, IB_ENOMEM, "cannot start worker thread %d", i);
        s->w[i].started = true;
    }
    return IB_OK;
}

int ib_serve_start(const ib_serve_opts *o, ib_serve **out, ib_err *err)
{
    *out = NULL;
    ib_serve *s = calloc(1, sizeof *s);
    if (!s) return ib_err_set(err, IB_ENOMEM, "out of memory");
    s->o = *o;
    ib_mutex_init(&s->mu);
    ib_cond_init(&s->cv);
    ib_cond_init(&s->idle_cv);
    s->max_queue = o->max_queue ? o->max_queue : 1024;
    int rc = IB_OK;
    const ib_benchmark *b = o->h.bench;
    if (!o->null_model && !b) {
        rc = ib_err_set(err, IB_EINVAL, "serve: a benchmark (or the null model) is needed");
        goto fail;
    }
    snprintf(s->name, sizeof s->name, "%s",
             o->model_name   ? o->model_name
             : o->null_model ? "null"
                             : b->id);
    for (const char *p = s->name; *p; p++)
        if (*p == '/' || *p == '"' || *p == '\\' || *p <= ' ') {
            rc = ib_err_set(err, IB_EINVAL, "--model-name '%s': no '/', quotes or spaces", s->name);
            goto fail;
        }
    if (!o->null_model) {
        if (b->n_models != 1 || b->infer) {
            rc = ib_err_set(err, IB_EUNSUPPORTED,
                            "%s runs its own inference loop over %zu model(s) (RNN-T decoding, "
                            "3D U-Net sliding window); serve takes benchmarks with one model "
                            "run per batch: resnet50, ssd-resnet34, bert-99, bert-99.9, "
                            "dlrm-99, dlrm-99.9",
                            b->id, b->n_models);
            goto fail;
        }
        if ((rc = ib_harness_load_models(&o->h, &s->m, err))) goto fail;
        s->io = &s->m.io[0];
        s->max_rows = o->max_batch > 0 ? o->max_batch : b->batch_offline;
        if (b->rows_per_sample_max > 1) s->max_rows *= b->rows_per_sample_max;
        if (s->io->max_batch == 1) s->max_rows = 1;
        s->max_delay_ns = (o->max_delay_us >= 0 ? o->max_delay_us : b->server_max_wait_us) * 1000;
        stage(s, "starting the workers (compiling and warming up)");
        if ((rc = start_workers(s, err))) goto fail;
        snprintf(s->describe, sizeof s->describe,
                 "%s%s (%s) on %s %s, %d worker(s), up to %lld rows per run, batching window "
                 "%lld us",
                 b->id, o->h.cfg.tiny ? " tiny" : "",
                 o->h.model_path ? o->h.model_path : "random weights", o->h.backend,
                 ib_precision_name(o->h.cfg.precision), s->n_workers, (long long)s->max_rows,
                 (long long)(s->max_delay_ns / 1000));
    } else {
        s->max_rows = INT64_MAX;
        snprintf(s->describe, sizeof s->describe, "null model (echoes its inputs, no inference)");
    }
    ib_http_server_opts ho = {.host = o->host,
                              .port = o->port,
                              .max_body = o->max_body ? o->max_body : (size_t)256 << 20,
                              .handler = handle,
                              .user = s};
    if ((rc = ib_http_server_start(&ho, &s->http, err))) goto fail;
    atomic_store(&s->ready, true);
    *out = s;
    return IB_OK;
fail:
    ib_serve_stop(s);
    return rc;
}

int ib_serve_port(const ib_serve *s)
{
    return ib_http_server_port(s->http);
}

const char *ib_serve_describe(const ib_serve *s)
{
    return s->describe;
}

void ib_serve_drain(ib_serve *s, int64_t timeout_ms)
{
    atomic_store(&s->draining, true);
    int64_t deadline = timeout_ms > 0 ? ib_time_ns() + timeout_ms * 1000000 : 0;
    ib_mutex_lock(&s->mu);
    while (s->head || s->busy) {
        if (deadline) {
            if (ib_cond_wait_until(&s->idle_cv, &s->mu, deadline) && ib_time_ns() >= deadline)
                break;
        } else {
            ib_cond_wait(&s->idle_cv, &s->mu);
        }
    }
    ib_mutex_unlock(&s->mu);
}

void ib_serve_stop(ib_serve *s)
{
    if (!s) return;
    atomic_store(&s->draining, true);
    if (s->http) ib_http_server_quiesce(s->http);
    ib_mutex_lock(&s->mu);
    /* jobs still queued (a drain that timed out) are answered 503 */
    for (job *j = s->head; j; j = j->next) {
        j->status = 503;
        error_body(j->out, "the server stopped before running this request");
        j->done = true;
        ib_cond_signal(&j->cv);
    }
    s->head = s->tail = NULL;
    s->queued = 0;
    s->stop = true;
    ib_cond_broadcast(&s->cv);
    ib_mutex_unlock(&s->mu);
    for (int i = 0; s->w && i < s->n_workers; i++)
        if (s->w[i].started) ib_thread_join(&s->w[i].th);
    ib_http_server_stop(s->http); /* waits for the connection threads */
    for (int i = 0; s->w && i < s->n_workers; i++) {
        ib_session_destroy(s->w[i].session);
        ib_bench_scratch_free(&s->w[i].scratch);
    }
    free(s->w);
    ib_harness_models_free(&s->m);
    ib_cond_destroy(&s->cv);
    ib_cond_destroy(&s->idle_cv);
    ib_mutex_destroy(&s->mu);
    free(s);
}

void ib_serve_get_stats(const ib_serve *s, ib_serve_stats *st)
{
    ib_serve *m;
    memcpy(&m, &s, sizeof m); /* the counters are atomics: loads need a non-const object */
    st->requests = atomic_load(&m->requests);
    st->ok = atomic_load(&m->code_count[0]);
    st->rejected = atomic_load(&m->code_count[1]) + atomic_load(&m->code_count[2]) +
                   atomic_load(&m->code_count[3]) + atomic_load(&m->code_count[5]);
    st->failed = atomic_load(&m->code_count[4]);
    st->batches = atomic_load(&m->batches);
    st->rows = atomic_load(&m->rows);
}
