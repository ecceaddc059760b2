/*
 * issue.c - issuing one series to the SUT, per scenario (loadgen.md §2.5):
 *  - SingleStream / MultiStream: the next query when the previous one has
 *    completed; scheduled = issued = now;
 *  - v1.1 MultiStream: fixed-rate ticks, at most max_async outstanding, late
 *    queries skip ticks (intervals spanned are recorded);
 *  - Server: the whole Poisson timeline, each query at start + scheduled
 *    delta (absolute clock_nanosleep, then a short spin; timer slack lowered
 *    for the issuing thread), optional coalescing of overdue queries; latency
 *    counts from the scheduled time;
 *  - Offline: one query at the start.
 * Stop conditions and their messages are the official ones
 * (issue_query_controller.cc). Queries come from the lazy plan: nothing is
 * pre-generated and nothing is allocated per query.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/time.h"
#include "loadgen/os.h"
#include "loadgen/issue_internal.h"
#include "loadgen/engine_internal.h"

/* Returns the time at or after abs (one clock read when already late). The
 * engine clock tracks CLOCK_MONOTONIC, which clock_nanosleep sleeps on. */
int64_t ib_lg_issue_wait_until(ib_lg_clock *clk, ib_lg_sleeper *sl, int64_t abs)
{
    int64_t now = ib_lg_clock_now(clk);
    if (now >= abs)
        return now;
    if (abs - now > sl->margin + IB_LG_SPIN_MIN_NS) {
        int64_t wake = abs - sl->margin;
        ib_sleep_until_ns(wake);
        ib_lg_clock_refresh(clk);
        now = ib_lg_clock_now(clk);
        int64_t late = now - wake;
        if (now > abs)
            sl->margin = IB_MIN(2 * sl->margin, (int64_t)IB_LG_SPIN_MAX_NS);
        else
            sl->margin = IB_MAX(sl->margin - (sl->margin - 2 * late) / 16,
                                (int64_t)IB_LG_SPIN_MIN_NS);
    }
    while ((now = ib_lg_clock_now(clk)) < abs)
        ib_lg_cpu_relax();
    return now;
}

/* Mark the samples of q issued (pending, scheduled at sched_rel) and append
 * them to the call buffer at position `at`. */
size_t ib_lg_issue_prepare(ib_lg_issue_ctx *c, const ib_lg_query *q, int64_t sched_rel, size_t at)
{
    ib_lg_srt *s = c->s;
    int64_t pending = sched_rel + 1;
    for (size_t j = 0; j < q->n_samples; j++) {
        uint64_t seq = q->first_seq_id + j;
        uint64_t rel = seq - s->first_seq;
        ib_lg_sample_index qsl = q->qsl_idx[j];
        bool lg = c->log_all || (c->may_log && ib_lg_plan_sample_logged(c->t->plan, seq));
        if (lg) {
            s->logged[s->nlogged].seq = seq;
            s->logged[s->nlogged].qsl_idx = qsl;
            s->nlogged++;
        }
        if (c->trace) {
            s->trace_qsl[rel] = qsl;
            s->trace_sched[rel] = sched_rel;
        }
        atomic_store_explicit(&s->slot[rel], lg ? (pending | IB_LG_SLOT_LOG_BIT) : pending,
                              memory_order_release);
        c->buf[at + j].id = (ib_lg_response_id)(seq + 1);
        c->buf[at + j].index = qsl;
    }
    return q->n_samples;
}

static void trace_issue(ib_lg_issue_ctx *c, size_t from, size_t n, int64_t issue_rel)
{
    if (!c->trace)
        return;
    for (size_t j = from; j < from + n; j++)
        c->s->trace_issue[(uint64_t)c->buf[j].id - 1 - c->s->first_seq] = issue_rel;
}

static void issue_call(ib_lg_issue_ctx *c, size_t n)
{
    const ib_lg_sut *sut = c->t->sut;
    sut->issue_query(sut->user, c->t, c->buf, n);
}

void ib_lg_issue_log_error(ib_lg_test *t, const char *msg)
{
    ib_lg_detail_str(&t->detail, IB_LG_REC_ERROR, "error_runtime", msg, -1, __FILE__, __LINE__);
}

void ib_lg_issue_publish(ib_lg_test *t, const ib_lg_issue_out *o)
{
    if ((o->queries_issued & 4095) == 0)
        ib_lg_clock_refresh(&t->clock); /* keep the TSC anchor fresh */
    atomic_store_explicit(&t->prog_issued_queries, o->queries_issued, memory_order_relaxed);
    atomic_store_explicit(&t->prog_issued_samples, o->samples_issued, memory_order_relaxed);
}

/* The max_query_count / max_duration checks shared by every scenario.
 * Returns true when issuing must stop. */
static bool check_max(ib_lg_test *t, const ib_lg_issue_out *o, int64_t duration_ns)
{
    const ib_lg_effective *e = &t->eff;
    char msg[160];
    if (e->max_query_count != 0 && o->queries_issued >= e->max_query_count) {
        snprintf(msg, sizeof msg,
                 "IssueQueryThread 0 Ending early: Max query count reached. query_count %llu",
                 (unsigned long long)o->queries_issued);
        ib_lg_issue_log_error(t, msg);
        return true;
    }
    if (e->max_duration_ms != 0 && duration_ns > e->max_duration_ms * 1000000) {
        snprintf(msg, sizeof msg,
                 "IssueQueryThread 0 Ending early: Max test duration reached. duration_ns %lld",
                 (long long)duration_ns);
        ib_lg_issue_log_error(t, msg);
        return true;
    }
    return false;
}

static void note_last(ib_lg_issue_out *o, const ib_lg_query *q, int64_t sched_rel,
                      int64_t issue_rel)
{
    o->last_sched_rel = sched_rel;
    o->last_issue_rel = issue_rel;
    o->last_first_seq = q->first_seq_id;
    o->last_n = q->n_samples;
}

/* Copy of the fields of a query kept across ib_lg_series_next calls. */
typedef struct qcopy {
    int64_t scheduled_ns;
    uint64_t first_seq_id;
    size_t n_samples;
} qcopy;

static int issue_server(ib_lg_issue_ctx *c, double target_qps, bool bound_abort, ib_lg_issue_out *o)
{
    ib_lg_test *t = c->t;
    const ib_lg_effective *e = &t->eff;
    ib_lg_srt *s = c->s;
    bool coalesce = e->requested.server_coalesce_queries;
    /* FindPeak probes: the bound is lost for good once more samples are over
     * it than the percentile allows (exact, the whole timeline is issued). */
    uint64_t allowed_over = s->n - (uint64_t)((double)s->n * e->target_latency_percentile);
    (void)target_qps;
    ib_lg_query q;
    bool have = ib_lg_series_next(c->series, &q);
    int64_t start = o->start_ns;
    while (have) {
        if (ib_lg_issue_stop(t, o))
            break;
        int64_t sched_abs = start + q.scheduled_ns;
        int64_t now = ib_lg_issue_wait_until(&c->t->clock, &c->sl, sched_abs);
        size_t n = ib_lg_issue_prepare(c, &q, q.scheduled_ns, 0);
        uint64_t nq = 1;
        ib_lg_hist_add(&o->delay, now - sched_abs);
        qcopy last = {q.scheduled_ns, q.first_seq_id, q.n_samples};
        have = ib_lg_series_next(c->series, &q);
        /* server_coalesce_queries: append every query already due */
        while (coalesce && have && start + q.scheduled_ns <= now && n + q.n_samples <= c->buf_cap) {
            n += ib_lg_issue_prepare(c, &q, q.scheduled_ns, n);
            ib_lg_hist_add(&o->delay, now - (start + q.scheduled_ns));
            last = (qcopy){q.scheduled_ns, q.first_seq_id, q.n_samples};
            nq++;
            have = ib_lg_series_next(c->series, &q);
        }
        trace_issue(c, 0, n, now - start);
        issue_call(c, n);
        o->queries_issued += nq;
        o->samples_issued += n;
        o->last_sched_rel = last.scheduled_ns;
        o->last_issue_rel = now - start;
        o->last_first_seq = last.first_seq_id;
        o->last_n = last.n_samples;
        ib_lg_issue_publish(t, o);
        if (c->accuracy)
            continue;
        if (e->max_async_queries != 0) {
            uint64_t done = atomic_load_explicit(&s->completed, memory_order_relaxed);
            uint64_t outstanding = o->queries_issued - done;
            if (outstanding > e->max_async_queries) {
                char msg[160];
                snprintf(msg, sizeof msg,
                         "IssueQueryThread 0 Ending early: Too many outstanding queries. issued "
                         "%llu outstanding %llu",
                         (unsigned long long)o->queries_issued, (unsigned long long)outstanding);
                ib_lg_issue_log_error(t, msg);
                break;
            }
        }
        if (check_max(t, o, now - start))
            break;
        if (bound_abort &&
            atomic_load_explicit(&s->over_latency, memory_order_relaxed) > allowed_over) {
            o->probe_failed_early = true;
            break;
        }
    }
    return IB_OK;
}

/* Offline: each query is built before the clock starts (the official
 * pre-generates it), then issued at the start; scheduled = start. */
static int issue_offline(ib_lg_issue_ctx *c, ib_lg_issue_out *o)
{
    ib_lg_test *t = c->t;
    const ib_lg_effective *e = &t->eff;
    ib_lg_query q;
    bool have = ib_lg_series_next(c->series, &q);
    o->ran_out = true;
    bool first = true;
    while (have) {
        if (ib_lg_issue_stop(t, o))
            break;
        if (q.n_samples > c->buf_cap) {
            o->status = IB_EINVAL;
            break;
        }
        size_t n = ib_lg_issue_prepare(c, &q, 0, 0);
        if (first) {
            ib_lg_clock_refresh(&t->clock);
            o->start_wall_ns = ib_wall_ns();
            o->start_ns = ib_lg_clock_now(&t->clock);
            c->s->start_ns = o->start_ns;
            atomic_store(&t->prog_start_ns, o->start_ns);
            first = false;
        }
        int64_t now = ib_lg_clock_now(&t->clock);
        trace_issue(c, 0, n, now - o->start_ns);
        ib_lg_hist_add(&o->delay, now - o->start_ns);
        note_last(o, &q, 0, now - o->start_ns);
        issue_call(c, n);
        o->queries_issued++;
        o->samples_issued += n;
        ib_lg_issue_publish(t, o);
        have = ib_lg_series_next(c->series, &q);
        if (c->accuracy)
            continue;
        int64_t duration = now - o->start_ns;
        if (o->queries_issued >= e->min_query_count && duration >= 0) {
            ib_lg_log_message(t, "Ending naturally: Minimum query count and test duration met.");
            o->ran_out = false;
            break;
        }
        if (check_max(t, o, duration)) {
            o->ran_out = false;
            break;
        }
    }
    return IB_OK;
}

/* SingleStream and MultiStream (current rules): back to back. */
static int issue_stream(ib_lg_issue_ctx *c, ib_lg_issue_out *o)
{
    ib_lg_test *t = c->t;
    const ib_lg_effective *e = &t->eff;
    int64_t start = o->start_ns;
    int64_t target_ns = e->target_duration_ms * 1000000;
    ib_lg_query q;
    bool have = ib_lg_series_next(c->series, &q);
    o->ran_out = true;
    int64_t last_issue_abs = start;
    while (have) {
        if (ib_lg_issue_stop(t, o))
            break;
        if (o->queries_issued > 0) {
            int rc = ib_lg_wait_completed(t, c->s, o->samples_issued, last_issue_abs);
            if (rc != IB_OK) {
                o->status = rc;
                o->ran_out = false;
                break;
            }
        }
        int64_t now = ib_lg_clock_now(&t->clock);
        int64_t sched_rel = now - start;
        if (q.n_samples > c->buf_cap) {
            o->status = IB_EINVAL;
            break;
        }
        size_t n = ib_lg_issue_prepare(c, &q, sched_rel, 0);
        trace_issue(c, 0, n, sched_rel);
        ib_lg_hist_add(&o->delay, 0);
        note_last(o, &q, sched_rel, sched_rel);
        last_issue_abs = now;
        issue_call(c, n);
        o->queries_issued++;
        o->samples_issued += n;
        ib_lg_issue_publish(t, o);
        have = ib_lg_series_next(c->series, &q);
        if (c->accuracy)
            continue;
        int64_t duration = now - start;
        if (o->queries_issued >= e->min_query_count && duration >= target_ns) {
            ib_lg_log_message(t, "Ending naturally: Minimum query count and test duration met.");
            o->ran_out = false;
            break;
        }
        if (check_max(t, o, duration)) {
            o->ran_out = false;
            break;
        }
    }
    return IB_OK;
}

/* v1.1 MultiStream: fixed-rate ticks (r1.1 issue_query_controller.cc). */
static int issue_multistream_v11(ib_lg_issue_ctx *c, ib_lg_issue_out *o)
{
    ib_lg_test *t = c->t;
    const ib_lg_effective *e = &t->eff;
    int64_t start = o->start_ns;
    int64_t target_ns = e->target_duration_ms * 1000000;
    double qps = e->target_qps;
    uint64_t m = e->max_async_queries ? e->max_async_queries : 1;
    uint64_t spq = e->samples_per_query;
    uint64_t i_period = 0;
    uint64_t cap = ib_lg_series_query_count(c->series);
    ib_lg_query q;
    bool have = ib_lg_series_next(c->series, &q);
    o->ran_out = true;
    int64_t last_issue_abs = start;
    while (have) {
        if (ib_lg_issue_stop(t, o))
            break;
        uint64_t k = o->queries_issued;
        if (k >= m) {
            uint64_t rel = (k - m) * spq;
            int rc = ib_lg_wait_slots(t, c->s, rel, (size_t)spq, last_issue_abs);
            if (rc != IB_OK) {
                o->status = rc;
                o->ran_out = false;
                break;
            }
        }
        int64_t now = ib_lg_clock_now(&t->clock);
        uint64_t old = i_period;
        int64_t tick;
        do {
            i_period++;
            tick = start + (int64_t)((double)i_period / qps * 1e9);
        } while (tick < now);
        if (o->intervals && k < cap)
            o->intervals[k] = i_period - old;
        now = ib_lg_issue_wait_until(&c->t->clock, &c->sl, tick);
        int64_t sched_rel = tick - start;
        size_t n = ib_lg_issue_prepare(c, &q, sched_rel, 0);
        trace_issue(c, 0, n, now - start);
        ib_lg_hist_add(&o->delay, now - tick);
        note_last(o, &q, sched_rel, now - start);
        last_issue_abs = now;
        issue_call(c, n);
        o->queries_issued++;
        o->samples_issued += n;
        ib_lg_issue_publish(t, o);
        have = ib_lg_series_next(c->series, &q);
        if (c->accuracy)
            continue;
        int64_t duration = now - start;
        if (o->queries_issued >= e->min_query_count && duration >= target_ns) {
            ib_lg_log_message(t, "Ending naturally: Minimum query count and test duration met.");
            o->ran_out = false;
            break;
        }
        if (check_max(t, o, duration)) {
            o->ran_out = false;
            break;
        }
    }
    return IB_OK;
}

int ib_lg_issue_series(ib_lg_test *t, ib_lg_series *series, ib_lg_srt *s, bool accuracy,
                       double target_qps, bool bound_abort, ib_lg_issue_out *o)
{
    const ib_lg_effective *e = &t->eff;
    ib_lg_issue_ctx c = {0};
    c.t = t;
    c.series = series;
    c.s = s;
    c.accuracy = accuracy;
    c.log_all = accuracy;
    c.may_log = !accuracy && ib_lg_series_log_probability(series) > 0;
    c.trace = s->trace_issue != NULL;
    c.sl.margin = 100000;
    if ((c.log_all || c.may_log) && !s->logged)
        return IB_EINVAL;
    /* One call holds one query, or every overdue query when coalescing. */
    uint64_t spq = ib_lg_series_samples_per_query(series);
    uint64_t cap = ib_lg_series_sample_count(series); /* Offline: the whole query */
    if (e->scenario == IB_LG_SCENARIO_SERVER)
        cap = e->requested.server_coalesce_queries ? IB_LG_COALESCE_MAX : spq;
    else if (e->scenario != IB_LG_SCENARIO_OFFLINE)
        cap = spq;
    if (cap == 0)
        cap = 1;
    c.buf_cap = (size_t)cap;
    c.buf = ib_malloc(c.buf_cap * sizeof *c.buf);
    if (!c.buf)
        return IB_ENOMEM;
    bool v11_ms = e->rules == IB_LG_RULES_V1_1 && e->scenario == IB_LG_SCENARIO_MULTI_STREAM;
    if (v11_ms) {
        uint64_t nq = ib_lg_series_query_count(series);
        o->intervals = ib_calloc((size_t)(nq ? nq : 1), sizeof *o->intervals);
        if (!o->intervals) {
            ib_free(c.buf);
            return IB_ENOMEM;
        }
    }
    bool timed = e->scenario == IB_LG_SCENARIO_SERVER || v11_ms;
    long old_slack = timed ? ib_lg_timerslack_get() : -1;
    if (timed)
        ib_lg_timerslack_set(IB_LG_TIMER_SLACK_NS);

    ib_lg_clock_refresh(&t->clock);
    o->start_wall_ns = ib_wall_ns();
    o->start_ns = ib_lg_clock_now(&t->clock);
    s->start_ns = o->start_ns;
    atomic_store(&t->prog_start_ns, o->start_ns);
    int rc;
    if (e->scenario == IB_LG_SCENARIO_SERVER && e->requested.server_num_issue_query_threads > 0)
        rc = ib_lg_issue_server_threads(&c, bound_abort, o);
    else if (e->scenario == IB_LG_SCENARIO_SERVER)
        rc = issue_server(&c, target_qps, bound_abort, o);
    else if (v11_ms)
        rc = issue_multistream_v11(&c, o);
    else if (e->scenario == IB_LG_SCENARIO_OFFLINE)
        rc = issue_offline(&c, o);
    else
        rc = issue_stream(&c, o);

    if (timed && old_slack > 0)
        ib_lg_timerslack_set(old_slack);
    ib_free(c.buf);
    return rc;
}
