/*
 * progress.c - live progress for long runs (issue 2, users.md §4.1): a
 * loadgen thread wakes every progress_interval_ms, reads the issue and
 * completion counters, folds newly completed slots of the running series
 * into a histogram for the running target-percentile latency, and calls the
 * options' progress callback. It never touches the issue path: it only
 * reads atomics, and it never writes a slot; the latencies are copied out
 * of the slots, not compacted in place, so a scan can never read garbage.
 */
#include <string.h>

#include "base/common.h"
#include "base/thread.h"
#include "base/time.h"
#include "loadgen/engine_internal.h"

struct ib_lg_progress_thread {
    ib_lg_test *t;
    ib_thread th;
    ib_mutex mu;
    ib_cond cv;
    bool stop;
};

typedef struct scan_state {
    const ib_lg_srt *series;
    uint64_t cursor;
    ib_lg_hist hist;
    uint64_t last_completed;
    int64_t last_ns;
} scan_state;

/* Fold completed slots from the cursor on (stops at the first pending one).
 * Only atomic reads: slots of a closed series read as LOST or zero. */
static void scan(ib_lg_srt *s, scan_state *st)
{
    uint64_t budget = 4u << 20; /* bounded work per tick */
    while (st->cursor < s->n && budget--) {
        if (atomic_load_explicit(&s->closed, memory_order_relaxed))
            return;
        int64_t v = atomic_load_explicit(&s->slot[st->cursor], memory_order_relaxed);
        if (v >= 0 || v == IB_LG_SLOT_LOST)
            break;
        ib_lg_hist_add(&st->hist, -(v + 1));
        st->cursor++;
    }
}

static void tick(ib_lg_progress_thread *p, scan_state *st)
{
    ib_lg_test *t = p->t;
    ib_lg_srt *s = atomic_load_explicit(&t->head, memory_order_acquire);
    if (!s)
        return;
    if (s != st->series) {
        memset(st, 0, sizeof *st);
        st->series = s;
        st->last_ns = atomic_load(&t->prog_start_ns);
    }
    scan(s, st);
    ib_lg_clock_refresh(&t->clock);
    int64_t now = ib_lg_clock_now(&t->clock);
    uint64_t completed = atomic_load_explicit(&s->completed, memory_order_relaxed);
    ib_lg_progress pr;
    memset(&pr, 0, sizeof pr);
    int64_t start = atomic_load(&t->prog_start_ns);
    pr.elapsed_ns = start ? now - start : 0;
    pr.expected_total_ns = atomic_load(&t->prog_expected_ns);
    pr.issued_queries = atomic_load(&t->prog_issued_queries);
    pr.completed_samples = completed;
    pr.expected_samples = atomic_load(&t->prog_expected_samples);
    int64_t dt = now - st->last_ns;
    if (dt > 0)
        pr.current_qps = (double)(completed - st->last_completed) * 1e9 / (double)dt;
    st->last_completed = completed;
    st->last_ns = now;
    pr.running_percentile_ns = ib_lg_hist_quantile(&st->hist, t->eff.target_latency_percentile);
    pr.latency_bound_ns = t->eff.scenario == IB_LG_SCENARIO_SERVER ? t->eff.target_latency_ns : 0;
    char phase[sizeof t->phase];
    ib_mutex_lock(&t->phase_mu);
    memcpy(phase, t->phase, sizeof phase);
    ib_mutex_unlock(&t->phase_mu);
    phase[sizeof phase - 1] = '\0';
    pr.phase = phase;
    t->opts.progress(t->opts.progress_user, &pr);
}

static void *run(void *arg)
{
    ib_lg_progress_thread *p = arg;
    scan_state *st = ib_calloc(1, sizeof *st);
    if (!st)
        return NULL;
    int64_t interval = (int64_t)p->t->opts.progress_interval_ms * 1000000;
    ib_mutex_lock(&p->mu);
    while (!p->stop) {
        int64_t deadline = ib_time_ns() + interval;
        while (!p->stop && ib_cond_wait_until(&p->cv, &p->mu, deadline) == IB_OK) {
        }
        if (p->stop)
            break;
        ib_mutex_unlock(&p->mu);
        tick(p, st);
        ib_mutex_lock(&p->mu);
    }
    ib_mutex_unlock(&p->mu);
    ib_free(st);
    return NULL;
}

int ib_lg_progress_start(ib_lg_test *t, ib_lg_progress_thread **out)
{
    *out = NULL;
    ib_lg_progress_thread *p = ib_calloc(1, sizeof *p);
    if (!p)
        return IB_ENOMEM;
    p->t = t;
    if (ib_mutex_init(&p->mu)) {
        ib_free(p);
        return IB_ENOMEM;
    }
    if (ib_cond_init(&p->cv)) {
        ib_mutex_destroy(&p->mu);
        ib_free(p);
        return IB_ENOMEM;
    }
    if (ib_thread_create(&p->th, run, p)) {
        ib_cond_destroy(&p->cv);
        ib_mutex_destroy(&p->mu);
        ib_free(p);
        return IB_ENOMEM;
    }
    *out = p;
    return IB_OK;
}

void ib_lg_progress_stop(ib_lg_progress_thread *p)
{
    if (!p)
        return;
    ib_mutex_lock(&p->mu);
    p->stop = true;
    ib_cond_broadcast(&p->cv);
    ib_mutex_unlock(&p->mu);
    ib_thread_join(&p->th);
    ib_cond_destroy(&p->cv);
    ib_mutex_destroy(&p->mu);
    ib_free(p);
}
