/*
 * nsut.c - the network SUT (nsut.h): request slots, the driving thread, answers, faults,
 * and the checks and warm-up before a test.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/thread.h"
#include "base/time.h"
#include "harness/nsut.h"
#include "harness/scratch.h"
#include "harness/squeue.h"
#include "net/http_client.h"
#include "net/kserve.h"

typedef struct slot {
    struct ib_nsut *s;
    bool busy;
    size_t n;
    ib_lg_test *test; /* NULL during warm-up */
    ib_lg_sample *taken;
    const ib_bench_sample **samples;
    ib_lg_sample_index *indices;
    ib_lg_response_id *ids;
    ib_lg_response *resp;
    ib_bench_payload *payloads;
    uint8_t *payload_mem;
    uint32_t *index_mem; /* null SUT: the indices sent */
    ib_bench_scratch scratch;
    ib_strbuf body;
    void *out_mem[IB_BENCH_MAX_TENSORS];
    ib_tensor_view outs[IB_BENCH_MAX_TENSORS];
} slot;

struct ib_nsut {
    ib_nsut_opts o;
    char name[IB_KS_NAME_MAX];
    char path[IB_KS_NAME_MAX + 32]; /* /v2/models/{name}/infer */
    char describe[512];
    ib_hc *hc;
    size_t payload_cap;
    /* shared with issue_query and the caller's thread */
    ib_mutex mu;
    ib_cond idle_cv;
    ib_squeue q; /* issued samples not yet in a request */
    ib_lg_test *test;
    bool stop, failed;
    int busy; /* slots in flight */
    int rc;
    ib_err err;
    ib_thread th;
    bool started;
    /* owned by the driving thread */
    slot *slots;
    int n_slots;
    uint64_t warm_done; /* warm-up: requests answered */
    double warm_rate;
    int64_t warm_lat_ns;
    /* stats (driving thread writes, readers take mu) */
    ib_nsut_stats st;
};

static void set_error(struct ib_nsut *s, int rc, const char *fmt, ...) IB_PRINTF(3, 4);

/* A local failure: the first is kept and the test aborted. */
static void set_error(struct ib_nsut *s, int rc, const char *fmt, ...)
{
    ib_mutex_lock(&s->mu);
    bool first = !s->failed;
    if (first) {
        s->failed = true;
        s->rc = rc;
        va_list ap;
        va_start(ap, fmt);
        char msg[sizeof s->err.msg];
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        ib_err_set(&s->err, rc, "%s", msg);
    }
    ib_lg_test *t = s->test;
    ib_mutex_unlock(&s->mu);
    if (first && t) ib_lg_test_abort(t);
}

/* ---- answers ------------------------------------------------------------------------------- */

static void slot_release(slot *sl)
{
    struct ib_nsut *s = sl->s;
    sl->busy = false;
    ib_mutex_lock(&s->mu);
    if (--s->busy == 0) ib_cond_broadcast(&s->idle_cv);
    ib_mutex_unlock(&s->mu);
}

/* The request failed: its samples complete as failed (the test goes on, INVALID). */
static void slot_fail(slot *sl, int endpoint, const char *fmt, ...) IB_PRINTF(3, 4);

static void slot_fail(slot *sl, int endpoint, const char *fmt, ...)
{
    struct ib_nsut *s = sl->s;
    char why[400], reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(reason, sizeof reason, "endpoint %s: %s",
             endpoint >= 0 ? ib_hc_endpoint(s->hc, (size_t)endpoint) : "(none)", why);
    ib_mutex_lock(&s->mu);
    s->st.failed_requests++;
    s->st.failed_samples += sl->n;
    if (!s->st.first_failure[0])
        snprintf(s->st.first_failure, sizeof s->st.first_failure, "%s", reason);
    ib_mutex_unlock(&s->mu);
    if (sl->test) {
        for (size_t i = 0; i < sl->n; i++)
            sl->ids[i] = sl->taken[i].id;
        ib_lg_samples_fail(sl->test, sl->ids, sl->n, reason);
    }
    s->warm_done++;
    slot_release(sl);
}

static void slot_complete(slot *sl)
{
    if (sl->test) {
        for (size_t i = 0; i < sl->n; i++)
            sl->resp[i] =
                (ib_lg_response){sl->taken[i].id, sl->payloads[i].data, sl->payloads[i].size, 0};
        ib_lg_samples_complete(sl->test, sl->resp, sl->n);
    }
    sl->s->warm_done++;
    slot_release(sl);
}

/* The echoed indices of the null SUT: each must be the one sent. */
static int null_answer(slot *sl, const ib_ks_msg *m, char *why, size_t n)
{
    const ib_ks_tensor *t = ib_ks_find(m, "INDEX");
    if (!t || t->desc.dtype != IB_DTYPE_UINT32 || t->nbytes != sl->n * 4) {
        snprintf(why, n, "the answer has no UINT32 output INDEX of %zu values", sl->n);
        return -1;
    }
    for (size_t i = 0; i < sl->n; i++) {
        uint32_t v;
        memcpy(&v, (const uint8_t *)t->data + 4 * i, 4);
        if (v != sl->index_mem[i]) {
            snprintf(why, n, "INDEX[%zu] came back as %u, %u was sent", i, v, sl->index_mem[i]);
            return -1;
        }
        uint8_t *p = sl->payload_mem + 4 * i;
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
        sl->payloads[i] = (ib_bench_payload){p, 4, 4};
    }
    return 0;
}

/* A benchmark's outputs: copied into aligned slot memory, then the entry's postprocess. */
static int bench_answer(slot *sl, const ib_ks_msg *m, char *why, size_t n, int *local)
{
    struct ib_nsut *s = sl->s;
    const ib_bench_io *io = s->o.io;
    ib_bench_batch b;
    memset(&b, 0, sizeof b);
    b.count = sl->n;
    b.samples = sl->samples;
    b.indices = sl->indices;
    b.scratch = &sl->scratch;
    b.n_outputs = io->n_outputs;
    for (size_t k = 0; k < io->n_outputs; k++) {
        const ib_bench_output *want = &io->outputs[k];
        const ib_ks_tensor *t = ib_ks_find(m, want->name);
        if (!t) {
            snprintf(why, n, "the answer has no output '%s'", want->name);
            return -1;
        }
        if (t->desc.dtype != want->dtype) {
            snprintf(why, n, "output '%s' is %s, %s was expected", want->name,
                     ib_ks_datatype(t->desc.dtype), ib_ks_datatype(want->dtype));
            return -1;
        }
        size_t cap = want->max_bytes_per_sample * sl->n;
        if (t->nbytes > cap) {
            snprintf(why, n, "output '%s' has %zu bytes, more than %zu samples can have (%zu)",
                     want->name, t->nbytes, sl->n, cap);
            return -1;
        }
        if (t->desc.ndim < 1 || t->desc.dims[0] < 1) {
            snprintf(why, n, "output '%s' has no batch dimension", want->name);
            return -1;
        }
        memcpy(sl->out_mem[k], t->data, t->nbytes);
        b.outputs[k] = (ib_tensor_view){want->name, t->desc, sl->out_mem[k], cap};
    }
    for (size_t i = 0; i < sl->n; i++)
        sl->payloads[i] =
            (ib_bench_payload){sl->payload_mem + i * s->payload_cap, s->payload_cap, 0};
    ib_err err;
    ib_err_clear(&err);
    int rc = s->o.bench->postprocess(s->o.state, s->o.cfg, &b, sl->payloads, &err);
    if (rc) {
        *local = rc;
        snprintf(why, n, "postprocess: %.250s", err.msg);
        return -1;
    }
    return 0;
}

static void on_done(void *user, const ib_hc_result *r)
{
    slot *sl = user;
    struct ib_nsut *s = sl->s;
    ib_mutex_lock(&s->mu);
    s->st.bytes_received += r->len;
    ib_mutex_unlock(&s->mu);
    if (r->error) {
        slot_fail(sl, r->endpoint, "%s", r->error);
        return;
    }
    if (r->status != 200) {
        char msg[300];
        ib_ks_error_message(r->body, r->len, msg, sizeof msg);
        {
            slot_fail(sl, r->endpoint, "HTTP %ld: %s", r->status, msg);
            return;
        }
    }
    ib_ks_msg m;
    ib_err err;
    ib_err_clear(&err);
    if (ib_ks_decode(r->body, r->len, r->has_json_len ? r->json_len : 0, false, &m, &err)) {
        slot_fail(sl, r->endpoint, "malformed answer: %s", err.msg);
        return;
    }
    char why[300];
    int local = 0;
    int bad = s->o.bench ? bench_answer(sl, &m, why, sizeof why, &local)
                         : null_answer(sl, &m, why, sizeof why);
    ib_ks_msg_free(&m);
    if (bad && local) {
        set_error(s, local, "%s", why);
        {
            slot_fail(sl, r->endpoint, "%s", why);
            return;
        }
    }
    if (bad) {
        slot_fail(sl, r->endpoint, "%s", why);
        return;
    }
    slot_complete(sl);
}

/* ---- requests ------------------------------------------------------------------------------ */

/* Encode the slot's samples as one infer request and send it. */
static void slot_send(slot *sl)
{
    struct ib_nsut *s = sl->s;
    ib_ks_msg m;
    memset(&m, 0, sizeof m);
    ib_err err;
    ib_err_clear(&err);
    int rc = IB_OK;
    if (!s->o.bench) {
        for (size_t i = 0; i < sl->n; i++)
            sl->index_mem[i] = (uint32_t)sl->taken[i].index;
        m.n_tensors = 1;
        snprintf(m.t[0].name, sizeof m.t[0].name, "INDEX");
        m.t[0].desc = (ib_tensor_desc){IB_DTYPE_UINT32, 1, {(int64_t)sl->n}};
        m.t[0].data = sl->index_mem;
        m.t[0].nbytes = sl->n * 4;
        m.n_outputs = 1;
        snprintf(m.outputs[0], sizeof m.outputs[0], "INDEX");
    } else {
        const ib_bench_io *io = s->o.io;
        ib_bench_batch b;
        memset(&b, 0, sizeof b);
        b.count = sl->n;
        b.samples = sl->samples;
        b.indices = sl->indices;
        b.scratch = &sl->scratch;
        for (size_t i = 0; i < sl->n; i++) {
            sl->indices[i] = sl->taken[i].index;
            sl->samples[i] = ib_hqsl_sample(s->o.qsl, sl->taken[i].index);
            if (!sl->samples[i]) {
                set_error(s, IB_ESTATE, "SUT: sample %zu was issued but is not loaded in the QSL",
                          (size_t)sl->taken[i].index);
                {
                    slot_fail(sl, -1, "sample not loaded");
                    return;
                }
            }
        }
        rc = s->o.bench->collate ? s->o.bench->collate(s->o.state, &b, &err)
                                 : ib_bench_collate_default(s->o.bench, io, &b, &err);
        if (rc) {
            set_error(s, rc, "collate: %s", err.msg);
            {
                slot_fail(sl, -1, "collate failed");
                return;
            }
        }
        m.n_tensors = b.n_inputs;
        for (size_t k = 0; k < b.n_inputs; k++) {
            snprintf(m.t[k].name, sizeof m.t[k].name, "%s", b.inputs[k].name);
            m.t[k].desc = b.inputs[k].desc;
            m.t[k].data = b.inputs[k].data;
            int64_t numel = ib_tensor_desc_numel(&b.inputs[k].desc);
            m.t[k].nbytes = numel < 0 ? 0 : (size_t)numel * ib_dtype_size(b.inputs[k].desc.dtype);
        }
        m.n_outputs = io->n_outputs;
        for (size_t k = 0; k < io->n_outputs; k++)
            snprintf(m.outputs[k], sizeof m.outputs[k], "%s", io->outputs[k].name);
    }
    m.binary_outputs = !s->o.json;
    ib_strbuf_reset(&sl->body);
    size_t json_len = 0;
    rc = ib_ks_encode(&m, true, !s->o.json, &sl->body, &json_len, &err);
    if (rc) {
        set_error(s, rc, "encoding a request: %s", err.msg);
        {
            slot_fail(sl, -1, "encoding failed");
            return;
        }
    }
    rc = ib_hc_post(s->hc, s->path, sl->body.data, sl->body.len, json_len, on_done, sl, &err);
    if (rc) {
        set_error(s, rc, "%s", err.msg);
        {
            slot_fail(sl, -1, "%s", err.msg);
            return;
        }
    }
    ib_mutex_lock(&s->mu);
    s->st.requests++;
    s->st.bytes_sent += sl->body.len;
    ib_mutex_unlock(&s->mu);
}

static slot *free_slot(struct ib_nsut *s)
{
    for (int i = 0; i < s->n_slots; i++)
        if (!s->slots[i].busy) return &s->slots[i];
    return NULL;
}

/* The driving thread: batches from the queue into free slots, then libcurl's loop. */
static void *drive(void *arg)
{
    struct ib_nsut *s = arg;
    size_t mb = (size_t)s->o.max_batch;
    for (;;) {
        int timeout_ms = 100;
        ib_mutex_lock(&s->mu);
        if (s->stop) {
            ib_mutex_unlock(&s->mu);
            break;
        }
        slot *sl;
        while (s->q.count > 0 && (sl = free_slot(s)) != NULL) {
            size_t n = IB_MIN(s->q.count, mb);
            if (n < mb && s->o.max_wait_ns > 0 && !s->failed) {
                int64_t wait = ib_squeue_oldest_ns(&s->q) + s->o.max_wait_ns - ib_time_ns();
                if (wait > 0) {
                    timeout_ms = (int)IB_MIN((wait + 999999) / 1000000, 100);
                    break;
                }
            }
            ib_squeue_take(&s->q, sl->taken, n);
            sl->n = n;
            sl->busy = true;
            sl->test = s->test;
            s->busy++;
            bool drop = s->failed || (s->o.stop_flag &&
                                      atomic_load_explicit(s->o.stop_flag, memory_order_relaxed));
            ib_mutex_unlock(&s->mu);
            if (drop) { /* aborted or interrupted: answer at once, nothing sent */
                for (size_t i = 0; i < n; i++)
                    sl->payloads[i].size = 0, sl->payloads[i].data = NULL;
                slot_complete(sl);
            } else {
                slot_send(sl);
            }
            ib_mutex_lock(&s->mu);
        }
        ib_mutex_unlock(&s->mu);
        ib_err err;
        ib_err_clear(&err);
        if (ib_hc_poll(s->hc, timeout_ms, &err)) set_error(s, IB_EIO, "%s", err.msg);
    }
    return NULL;
}

static void sut_issue(void *user, ib_lg_test *test, const ib_lg_sample *samples, size_t count)
{
    struct ib_nsut *s = user;
    int64_t now = ib_time_ns();
    ib_mutex_lock(&s->mu);
    s->test = test;
    if (ib_squeue_push(&s->q, samples, count, now)) {
        ib_mutex_unlock(&s->mu);
        set_error(s, IB_ENOMEM, "SUT: out of memory queueing %zu samples", count);
        return;
    }
    ib_mutex_unlock(&s->mu);
    ib_hc_wakeup(s->hc);
}

ib_lg_sut ib_nsut_table(ib_nsut *s)
{
    ib_lg_sut t = {s, "InferbenchKServeSUT", sut_issue, NULL};
    return t;
}

void ib_nsut_quiesce(ib_nsut *s)
{
    ib_mutex_lock(&s->mu);
    if (s->failed) s->q.count = 0;
    while (s->busy > 0)
        ib_cond_wait(&s->idle_cv, &s->mu);
    ib_mutex_unlock(&s->mu);
}

int ib_nsut_take_error(ib_nsut *s, ib_err *err)
{
    ib_nsut_quiesce(s);
    ib_mutex_lock(&s->mu);
    int rc = s->rc;
    if (rc && err) *err = s->err;
    s->rc = IB_OK;
    s->failed = false;
    s->test = NULL;
    ib_mutex_unlock(&s->mu);
    return rc;
}

/* ---- before the test ----------------------------------------------------------------------- */

/* The entry of a metadata "inputs"/"outputs" array with this "name" (NULL when none). */
static const json_t *named(const json_t *list, const char *name)
{
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        const json_t *nm = json_object_get(v, "name");
        if (json_is_string(nm) && strcmp(json_string_value(nm), name) == 0)
            return v;
    }
    return NULL;
}

/* The server's model metadata against the bound io: every input with its datatype and
 * per-sample shape, every output with its datatype. */
static int check_metadata(const struct ib_nsut *s, size_t e, const char *body, size_t len,
                          ib_err *err)
{
    const char *ep = ib_hc_endpoint(s->hc, e);
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!root)
        return ib_err_set(err, IB_EFORMAT, "%s: the model metadata is not JSON (%s)", ep, je.text);
    int rc = IB_OK;
    const json_t *ins = json_object_get(root, "inputs"), *outs = json_object_get(root, "outputs");
    size_t n_in = s->o.bench ? s->o.io->n_inputs : 1;
    for (size_t k = 0; k < n_in && !rc; k++) {
        const char *name = s->o.bench ? s->o.io->inputs[k].name : "INDEX";
        ib_tensor_desc want =
            s->o.bench ? s->o.io->inputs[k].desc : (ib_tensor_desc){IB_DTYPE_UINT32, 1, {-1}};
        bool batched = s->o.bench ? s->o.io->inputs[k].batched : true;
        const json_t *t = named(ins, name);
        if (!t) {
            rc = ib_err_set(err, IB_EINVAL, "%s: model '%s' has no input '%s' (is it serving %s?)",
                            ep, s->name, name, s->o.bench ? s->o.bench->id : "the null model");
            break;
        }
        const char *dt = json_string_value(json_object_get(t, "datatype"));
        if (!dt || strcmp(dt, ib_ks_datatype(want.dtype)) != 0) {
            rc = ib_err_set(err, IB_EINVAL, "%s: input '%s' is %s on the server, %s here", ep, name,
                            dt ? dt : "(none)", ib_ks_datatype(want.dtype));
            break;
        }
        const json_t *shape = json_object_get(t, "shape");
        bool ok = json_is_array(shape) && (int32_t)json_array_size(shape) == want.ndim;
        for (int32_t d = batched ? 1 : 0; ok && d < want.ndim; d++) {
            json_int_t x = json_integer_value(json_array_get(shape, (size_t)d));
            ok = x == -1 || want.dims[d] == IB_DIM_DYNAMIC || x == want.dims[d];
        }
        if (!ok)
            rc = ib_err_set(err, IB_EINVAL,
                            "%s: input '%s' has another shape on the server than this model's "
                            "(a different model, or another layout)",
                            ep, name);
    }
    size_t n_out = s->o.bench ? s->o.io->n_outputs : 1;
    for (size_t k = 0; k < n_out && !rc; k++) {
        const char *name = s->o.bench ? s->o.io->outputs[k].name : "INDEX";
        enum ib_dtype want = s->o.bench ? s->o.io->outputs[k].dtype : IB_DTYPE_UINT32;
        const json_t *t = named(outs, name);
        const char *dt = t ? json_string_value(json_object_get(t, "datatype")) : NULL;
        if (!t)
            rc = ib_err_set(err, IB_EINVAL, "%s: model '%s' has no output '%s'", ep, s->name, name);
        else if (!dt || strcmp(dt, ib_ks_datatype(want)) != 0)
            rc = ib_err_set(err, IB_EINVAL, "%s: output '%s' is %s on the server, %s here", ep,
                            name, dt ? dt : "(none)", ib_ks_datatype(want));
    }
    json_decref(root);
    return rc;
}

static int check_endpoints(struct ib_nsut *s, ib_err *err)
{
    ib_strbuf body;
    ib_strbuf_init(&body);
    int rc = IB_OK;
    for (size_t e = 0; e < ib_hc_endpoint_count(s->hc) && !rc; e++) {
        const char *ep = ib_hc_endpoint(s->hc, e);
        long status = 0;
        ib_strbuf_reset(&body);
        ib_err ge;
        ib_err_clear(&ge);
        rc = ib_hc_get(s->hc, e, "/v2/health/ready", &body, &status, &ge);
        if (rc) {
            rc = ib_err_set(err, rc,
                            "%s (is `inferbench serve` or another KServe v2 server running "
                            "there?)",
                            ge.msg);
            break;
        }
        if (status != 200) {
            rc = ib_err_set(err, IB_ESTATE, "%s/v2/health/ready answers HTTP %ld: not ready", ep,
                            status);
            break;
        }
        char path[IB_KS_NAME_MAX + 16];
        snprintf(path, sizeof path, "/v2/models/%s", s->name);
        ib_strbuf_reset(&body);
        rc = ib_hc_get(s->hc, e, path, &body, &status, err);
        if (!rc && status != 200) {
            char msg[300];
            ib_ks_error_message((const uint8_t *)body.data, body.len, msg, sizeof msg);
            rc = ib_err_set(err, IB_ENOTFOUND, "%s%s: HTTP %ld: %s (--model-name)", ep, path,
                            status, msg);
        }
        if (!rc) rc = check_metadata(s, e, body.data ? body.data : "", body.len, err);
    }
    ib_strbuf_deinit(&body);
    return rc;
}

/* Send `rounds` rounds of `conc` requests of n samples (indices 0..) and wait; the
 * elapsed time of the best round. */
static int warm_round(struct ib_nsut *s, size_t n, int conc, int rounds, int64_t *best, ib_err *err)
{
    size_t avail = s->o.bench ? IB_MIN(s->o.total, (size_t)s->o.max_batch) : n;
    *best = INT64_MAX;
    for (int r = 0; r < rounds; r++) {
        uint64_t target = s->warm_done + (uint64_t)conc;
        int64_t t0 = ib_time_ns();
        for (int c = 0; c < conc; c++) {
            slot *sl = &s->slots[c];
            sl->n = n;
            sl->busy = true;
            sl->test = NULL;
            for (size_t i = 0; i < n; i++)
                sl->taken[i] = (ib_lg_sample){0, (ib_lg_sample_index)(i % avail)};
            ib_mutex_lock(&s->mu);
            s->busy++;
            ib_mutex_unlock(&s->mu);
            slot_send(sl);
        }
        while (s->warm_done < target) {
            int rc = ib_hc_poll(s->hc, 100, err);
            if (rc) return rc;
            if (s->o.stop_flag && atomic_load(s->o.stop_flag)) {
                while (s->warm_done < target) /* the requests end by their timeout */
                    if ((rc = ib_hc_poll(s->hc, 100, err))) return rc;
                return ib_err_set(err, IB_ECANCELED, "interrupted during the warm-up");
            }
        }
        int64_t dt = ib_time_ns() - t0;
        *best = dt < *best ? dt : *best;
        ib_mutex_lock(&s->mu);
        bool bad = s->failed || s->st.failed_requests;
        ib_mutex_unlock(&s->mu);
        if (bad)
            return ib_err_set(err, IB_EIO, "warm-up request failed: %s",
                              s->st.first_failure[0] ? s->st.first_failure : s->err.msg);
    }
    return IB_OK;
}

static int warmup(struct ib_nsut *s, ib_err *err)
{
    /* the first samples, loaded for the warm-up only (as the in-process SUT does) */
    size_t warm = s->o.bench ? IB_MIN(s->o.total, (size_t)s->o.max_batch) : 0;
    ib_lg_sample_index *idx = NULL;
    if (warm) {
        if (!(idx = ib_malloc(sizeof *idx * warm)))
            return ib_err_set(err, IB_ENOMEM, "out of memory");
        for (size_t i = 0; i < warm; i++)
            idx[i] = i;
        int rc = ib_hqsl_load(s->o.qsl, idx, warm, err);
        if (rc) {
            ib_free(idx);
            return rc;
        }
    }
    int64_t t_batch = 0, t_one = 0;
    int rc = warm_round(s, (size_t)s->o.max_batch, s->n_slots, 2, &t_batch, err);
    if (!rc)
        rc = warm_round(s, 1, 1, 3, &t_one, err);
    if (warm) {
        ib_hqsl_unload(s->o.qsl, idx, warm);
        ib_free(idx);
    }
    if (rc)
        return rc;
    s->warm_rate = (double)s->o.max_batch * s->n_slots * 1e9 / (double)(t_batch ? t_batch : 1);
    s->warm_lat_ns = t_one;
    memset(&s->st, 0, sizeof s->st); /* the test's counters start here */
    return IB_OK;
}

/* ---- life cycle ---------------------------------------------------------------------------- */

static int slots_alloc(struct ib_nsut *s)
{
    size_t mb = (size_t)s->o.max_batch;
    s->slots = calloc((size_t)s->n_slots, sizeof *s->slots);
    if (!s->slots) return IB_ENOMEM;
    for (int i = 0; i < s->n_slots; i++) {
        slot *sl = &s->slots[i];
        sl->s = s;
        ib_strbuf_init(&sl->body);
        sl->taken = calloc(mb, sizeof *sl->taken);
        sl->samples = calloc(mb, sizeof *sl->samples);
        sl->indices = calloc(mb, sizeof *sl->indices);
        sl->ids = calloc(mb, sizeof *sl->ids);
        sl->resp = calloc(mb, sizeof *sl->resp);
        sl->payloads = calloc(mb, sizeof *sl->payloads);
        sl->payload_mem = calloc(mb, s->payload_cap ? s->payload_cap : 4);
        sl->index_mem = calloc(mb, sizeof *sl->index_mem);
        if (!sl->taken || !sl->samples || !sl->indices || !sl->ids || !sl->resp || !sl->payloads ||
            !sl->payload_mem || !sl->index_mem)
            return IB_ENOMEM;
        for (size_t k = 0; s->o.bench && k < s->o.io->n_outputs; k++) {
            size_t cap = s->o.io->outputs[k].max_bytes_per_sample * mb;
            sl->out_mem[k] = ib_malloc(cap ? cap : 1);
            if (!sl->out_mem[k]) return IB_ENOMEM;
        }
    }
    return IB_OK;
}

int ib_nsut_create(const ib_nsut_opts *o, ib_nsut **out, ib_err *err)
{
    *out = NULL;
    if (o->concurrency < 1 || o->max_batch < 1)
        return ib_err_set(err, IB_EINVAL, "network SUT: --concurrency and the batch must be >= 1");
    if (o->bench && (o->bench->infer || o->bench->n_models != 1))
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "%s runs its own inference loop over several model runs (RNN-T "
                          "decoding, the 3D U-Net sliding window), which one infer request per "
                          "batch cannot carry; --sut kserve takes resnet50, ssd-resnet34, "
                          "bert-99, bert-99.9, dlrm-99 and dlrm-99.9",
                          o->bench->id);
    struct ib_nsut *s = calloc(1, sizeof *s);
    if (!s) return ib_err_set(err, IB_ENOMEM, "out of memory");
    s->o = *o;
    ib_mutex_init(&s->mu);
    ib_cond_init(&s->idle_cv);
    snprintf(s->name, sizeof s->name, "%s",
             o->model_name ? o->model_name
             : o->bench    ? o->bench->id
                           : "null");
    snprintf(s->path, sizeof s->path, "/v2/models/%s/infer", s->name);
    s->payload_cap = o->bench ? o->bench->payload_max_bytes(o->state, o->cfg) : 4;
    s->n_slots = o->concurrency;
    ib_hc_opts ho = {o->endpoints, o->n_endpoints, o->request_timeout_ms, 0};
    int rc = ib_hc_create(&ho, &s->hc, err);
    if (!rc && slots_alloc(s))
        rc = ib_err_set(err, IB_ENOMEM, "out of memory for %d request slots", s->n_slots);
    if (!rc) rc = check_endpoints(s, err);
    if (!rc) rc = warmup(s, err);
    if (!rc && ib_thread_create(&s->th, drive, s))
        rc = ib_err_set(err, IB_ENOMEM, "cannot start the network SUT thread");
    if (rc) {
        ib_nsut_destroy(s);
        return rc;
    }
    s->started = true;
    snprintf(s->describe, sizeof s->describe,
             "KServe v2 over HTTP (%s): %zu endpoint(s) starting %s, model '%s', %d request(s) "
             "in flight, up to %lld samples per request",
             o->json ? "JSON" : "binary tensors", o->n_endpoints, ib_hc_endpoint(s->hc, 0), s->name,
             s->n_slots, (long long)o->max_batch);
    *out = s;
    return IB_OK;
}

void ib_nsut_destroy(ib_nsut *s)
{
    if (!s) return;
    if (s->started) {
        ib_mutex_lock(&s->mu);
        s->stop = true;
        ib_mutex_unlock(&s->mu);
        ib_hc_wakeup(s->hc);
        ib_thread_join(&s->th);
    }
    ib_hc_destroy(s->hc); /* abandons requests still in flight */
    for (int i = 0; s->slots && i < s->n_slots; i++) {
        slot *sl = &s->slots[i];
        free(sl->taken);
        free(sl->samples);
        free(sl->indices);
        free(sl->ids);
        free(sl->resp);
        free(sl->payloads);
        free(sl->payload_mem);
        free(sl->index_mem);
        ib_strbuf_deinit(&sl->body);
        ib_bench_scratch_free(&sl->scratch);
        for (size_t k = 0; k < IB_BENCH_MAX_TENSORS; k++)
            ib_free(sl->out_mem[k]);
    }
    free(s->slots);
    ib_squeue_free(&s->q);
    ib_cond_destroy(&s->idle_cv);
    ib_mutex_destroy(&s->mu);
    free(s);
}

double ib_nsut_warmup_rate(const ib_nsut *s)
{
    return s->warm_rate;
}

int64_t ib_nsut_warmup_latency_ns(const ib_nsut *s)
{
    return s->warm_lat_ns;
}

const char *ib_nsut_describe(const ib_nsut *s)
{
    return s->describe;
}

void ib_nsut_get_stats(ib_nsut *s, ib_nsut_stats *st)
{
    ib_mutex_lock(&s->mu);
    *st = s->st;
    ib_mutex_unlock(&s->mu);
}
