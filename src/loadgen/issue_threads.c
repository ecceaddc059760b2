/*
 * issue_threads.c - Server with server_num_issue_query_threads = k > 0.
 *
 * The official LoadGen issues from k user threads registered with
 * RegisterIssueQueryThread, thread i taking queries i, i + k, ... on their
 * own schedules. This C API has no thread registration, so the engine
 * starts the k issue threads itself: the calling thread walks the lazy plan
 * in sequence order (marking slots pending and taking the accuracy-log
 * decisions, which need sequence order) and hands query i to thread i mod k
 * through a bounded single-producer/single-consumer ring; each thread
 * sleeps until its query's scheduled time and issues it (coalescing overdue
 * queries of its own ring when enabled). Stop conditions are checked on the
 * totals; the first thread that hits one stops every thread (the official
 * checks max_query_count per thread). Queries handed over but never issued
 * are returned to "not issued".
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/thread.h"
#include "base/time.h"
#include "loadgen/issue_internal.h"

#define RING 8192 /* entries per thread (power of two) */
#define MAX_THREADS 64

typedef struct entry {
    int64_t sched_rel;
    ib_lg_sample s;
} entry;

typedef struct worker {
    struct shared *sh;
    int idx;
    ib_thread th;
    entry *ring;
    _Atomic uint64_t head, tail; /* consumer, producer */
    ib_lg_sample buf[64];
    ib_lg_sleeper sl;
    ib_lg_hist delay;
    uint64_t issued;
    int64_t last_sched, last_issue;
    uint64_t last_seq;
} worker;

typedef struct shared {
    ib_lg_issue_ctx *c;
    bool bound_abort;
    uint64_t allowed_over;
    _Atomic int stop;
    _Atomic int done; /* the producer has handed over every query */
    _Atomic uint64_t issued_total;
    int64_t start;
    char stop_msg[200]; /* written by the thread that won `stop` */
    worker w[MAX_THREADS];
    int k;
} shared;

static void stop_with(shared *sh, const char *msg)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&sh->stop, &expected, 1) && msg)
        snprintf(sh->stop_msg, sizeof sh->stop_msg, "%s", msg); /* logged after the join */
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    ib_lg_test *t = sh->c->t;
    const ib_lg_effective *e = &t->eff;
    ib_lg_srt *s = sh->c->s;
    bool coalesce = e->requested.server_coalesce_queries;
    long old_slack = ib_lg_timerslack_get();
    ib_lg_timerslack_set(1000);
    for (;;) {
        if (atomic_load_explicit(&sh->stop, memory_order_relaxed) ||
            ib_lg_issue_should_stop(t))
            break;
        uint64_t h = atomic_load_explicit(&w->head, memory_order_relaxed);
        uint64_t tl = atomic_load_explicit(&w->tail, memory_order_acquire);
        if (h == tl) {
            if (atomic_load_explicit(&sh->done, memory_order_acquire) &&
                h == atomic_load_explicit(&w->tail, memory_order_acquire))
                break;
            sched_yield();
            continue;
        }
        entry *en = &w->ring[h & (RING - 1)];
        int64_t sched_abs = sh->start + en->sched_rel;
        int64_t now = ib_lg_issue_wait_until(&t->clock, &w->sl, sched_abs);
        size_t n = 0;
        do {
            en = &w->ring[h & (RING - 1)];
            w->buf[n++] = en->s;
            ib_lg_hist_add(&w->delay, now - (sh->start + en->sched_rel));
            w->last_sched = en->sched_rel;
            w->last_seq = (uint64_t)en->s.id - 1;
            h++;
            tl = atomic_load_explicit(&w->tail, memory_order_acquire);
        } while (coalesce && n < 64 && h != tl &&
                 sh->start + w->ring[h & (RING - 1)].sched_rel <= now);
        if (s->trace_issue)
            for (size_t i = 0; i < n; i++)
                s->trace_issue[(uint64_t)w->buf[i].id - 1 - s->first_seq] = now - sh->start;
        t->sut->issue_query(t->sut->user, t, w->buf, n);
        atomic_store_explicit(&w->head, h, memory_order_release);
        w->issued += n;
        w->last_issue = now - sh->start;
        uint64_t total = atomic_fetch_add(&sh->issued_total, n) + n;
        atomic_store_explicit(&t->prog_issued_queries, total, memory_order_relaxed);
        if (sh->c->accuracy)
            continue;
        char msg[200];
        if (e->max_async_queries != 0) {
            uint64_t out = total - atomic_load_explicit(&s->completed, memory_order_relaxed);
            if (out > e->max_async_queries) {
                snprintf(msg, sizeof msg,
                         "IssueQueryThread %d Ending early: Too many outstanding queries. issued "
                         "%llu outstanding %llu",
                         w->idx, (unsigned long long)total, (unsigned long long)out);
                stop_with(sh, msg);
                break;
            }
        }
        if (e->max_query_count != 0 && total >= e->max_query_count) {
            snprintf(msg, sizeof msg,
                     "IssueQueryThread %d Ending early: Max query count reached. query_count %llu",
                     w->idx, (unsigned long long)total);
            stop_with(sh, msg);
            break;
        }
        if (e->max_duration_ms != 0 && now - sh->start > e->max_duration_ms * 1000000) {
            snprintf(msg, sizeof msg,
                     "IssueQueryThread %d Ending early: Max test duration reached. duration_ns "
                     "%lld",
                     w->idx, (long long)(now - sh->start));
            stop_with(sh, msg);
            break;
        }
        if (sh->bound_abort &&
            atomic_load_explicit(&s->over_latency, memory_order_relaxed) > sh->allowed_over) {
            stop_with(sh, NULL);
            break;
        }
    }
    if (old_slack > 0)
        ib_lg_timerslack_set(old_slack);
    return NULL;
}

int ib_lg_issue_server_threads(ib_lg_issue_ctx *c, bool bound_abort, ib_lg_issue_out *o)
{
    ib_lg_test *t = c->t;
    ib_lg_srt *s = c->s;
    uint64_t k = t->eff.requested.server_num_issue_query_threads;
    if (k > MAX_THREADS)
        k = MAX_THREADS;
    shared *sh = ib_calloc(1, sizeof *sh);
    if (!sh)
        return IB_ENOMEM;
    sh->c = c;
    sh->k = (int)k;
    sh->bound_abort = bound_abort;
    sh->allowed_over = s->n - (uint64_t)((double)s->n * t->eff.target_latency_percentile);
    sh->start = o->start_ns;
    int rc = IB_OK, started = 0;
    for (int i = 0; i < sh->k; i++) {
        worker *w = &sh->w[i];
        w->sh = sh;
        w->idx = i;
        w->sl.margin = 100000;
        w->ring = ib_malloc(RING * sizeof *w->ring);
        if (!w->ring) {
            rc = IB_ENOMEM;
            break;
        }
    }
    for (int i = 0; rc == IB_OK && i < sh->k; i++) {
        if (ib_thread_create(&sh->w[i].th, worker_main, &sh->w[i]) != IB_OK)
            rc = IB_ENOMEM;
        else
            started++;
    }
    /* the producer: sequence order, slots marked pending before hand-over */
    ib_lg_sample one[1];
    ib_lg_sample *saved = c->buf;
    c->buf = one;
    ib_lg_query q;
    uint64_t qi = 0;
    while (rc == IB_OK && !atomic_load(&sh->stop) && !ib_lg_issue_should_stop(t) &&
           ib_lg_series_next(c->series, &q)) {
        worker *w = &sh->w[qi % k];
        while (atomic_load_explicit(&w->tail, memory_order_relaxed) -
                   atomic_load_explicit(&w->head, memory_order_acquire) >=
               RING) {
            if (atomic_load(&sh->stop) || ib_lg_issue_should_stop(t))
                break;
            sched_yield();
        }
        if (atomic_load(&sh->stop) || ib_lg_issue_should_stop(t))
            break;
        ib_lg_issue_prepare(c, &q, q.scheduled_ns, 0);
        uint64_t tl = atomic_load_explicit(&w->tail, memory_order_relaxed);
        w->ring[tl & (RING - 1)] = (entry){q.scheduled_ns, one[0]};
        atomic_store_explicit(&w->tail, tl + 1, memory_order_release);
        qi++;
    }
    c->buf = saved;
    atomic_store(&sh->done, 1);
    for (int i = 0; i < started; i++)
        ib_thread_join(&sh->w[i].th);
    ib_lg_issue_stop(t, o); /* abort -> ECANCELED, stop flag -> interrupted */
    if (sh->stop_msg[0])
        ib_lg_issue_log_error(t, sh->stop_msg);
    /* queries handed over but never issued go back to "not issued" */
    for (int i = 0; i < sh->k && sh->w[i].ring; i++) {
        worker *w = &sh->w[i];
        for (uint64_t h = atomic_load(&w->head); h != atomic_load(&w->tail); h++) {
            uint64_t rel = (uint64_t)w->ring[h & (RING - 1)].s.id - 1 - s->first_seq;
            atomic_store_explicit(&s->slot[rel], 0, memory_order_relaxed);
        }
    }
    uint64_t best_seq = 0;
    for (int i = 0; i < sh->k; i++) {
        worker *w = &sh->w[i];
        o->queries_issued += w->issued;
        o->samples_issued += w->issued;
        for (size_t b = 0; b < IB_LG_HIST_BUCKETS; b++)
            o->delay.b[b] += w->delay.b[b];
        o->delay.count += w->delay.count;
        if (w->issued && (o->last_n == 0 || w->last_seq >= best_seq)) {
            best_seq = w->last_seq;
            o->last_sched_rel = w->last_sched;
            o->last_issue_rel = w->last_issue;
            o->last_first_seq = w->last_seq;
            o->last_n = 1;
        }
        ib_free(w->ring);
    }
    if (bound_abort && atomic_load(&sh->stop) &&
        atomic_load(&s->over_latency) > sh->allowed_over)
        o->probe_failed_early = true;
    ib_lg_issue_publish(t, o);
    ib_free(sh);
    return rc;
}
