/*
 * qsl.c - the harness QSL (qsl.h). The loadgen calls load_samples/unload_samples from its
 * main thread, untimed; loading fans out over a few threads that take indices from an
 * atomic counter and call the entry's load_sample, which must be reentrant (benchmark.h).
 * A failure keeps the first message and makes the callback return its code, which ends the
 * test (loadgen.h). Nothing is cached beyond the loaded set: unload frees the tensors.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/thread.h"
#include "harness/qsl.h"

struct ib_hqsl {
    const ib_benchmark *b;
    void *state;
    size_t total, perf;
    int threads;
    ib_bench_sample *samples;
    uint8_t *loaded;
    size_t n_loaded;
    ib_err err; /* last callback failure */
};

int ib_hqsl_create(const ib_benchmark *b, void *state, size_t total, size_t perf, int threads,
                   ib_hqsl **out, ib_err *err)
{
    *out = NULL;
    ib_hqsl *q = ib_calloc(1, sizeof *q);
    if (!q || !(q->samples = ib_calloc(total ? total : 1, sizeof *q->samples)) ||
        !(q->loaded = ib_calloc(total ? total : 1, 1))) {
        if (q)
            ib_free(q->samples);
        ib_free(q);
        return ib_err_set(err, IB_ENOMEM, "QSL: out of memory for %zu samples", total);
    }
    q->b = b;
    q->state = state;
    q->total = total;
    q->perf = perf;
    q->threads = threads > 0 ? threads : ib_cpu_count();
    ib_err_clear(&q->err);
    *out = q;
    return IB_OK;
}

static void free_one(ib_hqsl *q, size_t i)
{
    if (!q->loaded[i])
        return;
    if (q->b->free_sample)
        q->b->free_sample(q->state, &q->samples[i]);
    else
        ib_free(q->samples[i].mem);
    memset(&q->samples[i], 0, sizeof q->samples[i]);
    q->loaded[i] = 0;
    q->n_loaded--;
}

void ib_hqsl_destroy(ib_hqsl *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->total; i++)
        free_one(q, i);
    ib_free(q->samples);
    ib_free(q->loaded);
    ib_free(q);
}

typedef struct load_job {
    ib_hqsl *q;
    const size_t *todo;
    size_t n;
    atomic_size_t next;
    atomic_int failed;
    ib_mutex mu;
    int rc;
    ib_err err;
} load_job;

static void *load_worker(void *arg)
{
    load_job *j = arg;
    ib_err e;
    for (;;) {
        if (atomic_load(&j->failed))
            break;
        size_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n)
            break;
        size_t i = j->todo[k];
        ib_err_clear(&e);
        int rc = j->q->b->load_sample(j->q->state, i, &j->q->samples[i], &e);
        if (rc) {
            ib_mutex_lock(&j->mu);
            if (!j->rc) {
                j->rc = rc;
                j->err = e;
            }
            ib_mutex_unlock(&j->mu);
            atomic_store(&j->failed, 1);
            break;
        }
        j->q->loaded[i] = 2; /* loaded by this call; each index is in todo once */
    }
    return NULL;
}

int ib_hqsl_load(ib_hqsl *q, const ib_lg_sample_index *idx, size_t n, ib_err *err)
{
    size_t *todo = ib_malloc(sizeof *todo * (n ? n : 1));
    if (!todo)
        return ib_err_set(err, IB_ENOMEM, "QSL: out of memory");
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        if (i >= q->total) {
            ib_free(todo);
            return ib_err_set(err, IB_EINVAL, "QSL: sample index %zu beyond %zu samples", i,
                              q->total);
        }
        if (!q->loaded[i]) {
            q->loaded[i] = 1; /* claimed; becomes 2 once loaded */
            todo[m++] = i;
        }
    }
    load_job j;
    memset(&j, 0, sizeof j);
    j.q = q;
    j.todo = todo;
    j.n = m;
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    int rc = ib_mutex_init(&j.mu);
    if (rc) {
        for (size_t k = 0; k < m; k++)
            q->loaded[todo[k]] = 0;
        ib_free(todo);
        return ib_err_set(err, rc, "QSL: cannot create a mutex");
    }
    int nt = (int)IB_MIN((size_t)q->threads, m);
    ib_thread th[64];
    nt = IB_MIN(nt, 64);
    int started = 0;
    for (int t = 1; t < nt; t++) {
        if (ib_thread_create(&th[started], load_worker, &j) != IB_OK)
            break;
        started++;
    }
    load_worker(&j);
    for (int t = 0; t < started; t++)
        ib_thread_join(&th[t]);
    ib_mutex_destroy(&j.mu);
    for (size_t k = 0; k < m; k++) {
        size_t i = todo[k];
        if (q->loaded[i] == 2) {
            q->loaded[i] = 1;
            q->n_loaded++;
        } else {
            q->loaded[i] = 0; /* never loaded (a failure stopped the job) */
        }
    }
    ib_free(todo);
    if (j.rc) {
        if (err)
            *err = j.err;
        return j.rc;
    }
    return IB_OK;
}

void ib_hqsl_unload(ib_hqsl *q, const ib_lg_sample_index *idx, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (idx[k] < q->total)
            free_one(q, idx[k]);
}

static int cb_load(void *user, const ib_lg_sample_index *idx, size_t n)
{
    ib_hqsl *q = user;
    ib_err e;
    ib_err_clear(&e);
    int rc = ib_hqsl_load(q, idx, n, &e);
    if (rc)
        q->err = e;
    return rc;
}

static int cb_unload(void *user, const ib_lg_sample_index *idx, size_t n)
{
    ib_hqsl_unload(user, idx, n);
    return IB_OK;
}

ib_lg_qsl ib_hqsl_table(ib_hqsl *q)
{
    ib_lg_qsl t = {q, "InferbenchQSL", q->total, q->perf, cb_load, cb_unload};
    return t;
}

const ib_bench_sample *ib_hqsl_sample(const ib_hqsl *q, size_t index)
{
    return index < q->total && q->loaded[index] ? &q->samples[index] : NULL;
}

const char *ib_hqsl_error(const ib_hqsl *q)
{
    return q->err.msg;
}

size_t ib_hqsl_loaded(const ib_hqsl *q)
{
    return q->n_loaded;
}
