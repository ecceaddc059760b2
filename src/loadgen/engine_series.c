/*
 * engine_series.c - one series of a test (official IssueQueries plus the
 * loading around it, loadgen.md §2.1, §2.3-2.5): log and load the set,
 * create the lazy series and log generated_*, open the completion state,
 * issue, flush, wait for every sample (or time out), log faults, the
 * logger_* counters and power_begin/power_end, write the accuracy-log and
 * trace entries, and turn the slots into the result arrays. Also the
 * performance report (LogSummary + LogDetail of RunPerformanceMode).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/common.h"
#include "base/time.h"
#include "loadgen/summary.h"
#include "loadgen/engine_internal.h"
#include "loadgen/trace.h"

static void log_error(ib_lg_test *t, const char *key, const char *msg)
{
    ib_lg_detail_str(&t->detail, IB_LG_REC_ERROR, key, msg, -1, __FILE__, __LINE__);
}

static void note_reason(ib_lg_test *t, const char *msg)
{
    ib_strbuf_printf(&t->reasons_extra, "%s%s", t->reasons_extra.len ? "\n" : "", msg);
}

/* "MM-DD-YYYY HH:MM:SS.mmm" in UTC (DateTimeStringForPower). */
static void power_time(int64_t wall_ns, char *buf, size_t n)
{
    time_t s = (time_t)(wall_ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char d[32];
    strftime(d, sizeof d, "%m-%d-%Y %H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03lld", d, (long long)((wall_ns / 1000000) % 1000));
}

/* Error records for faults seen since the last call. */
static uint64_t log_faults(ib_lg_test *t)
{
    static const char *const what[IB_LG_FAULT_COUNT] = {
        "Received a response with an unknown id (never issued in this test).",
        "Attempted to complete a sample twice.",
        "Received completion for an old sample (its series had already ended).",
        "Accuracy log payload could not be stored (the storage reserved at start is full).",
        "The SUT reported samples as failed.",
    };
    uint64_t sut_errors = 0;
    for (int f = 0; f < IB_LG_FAULT_COUNT; f++) {
        uint64_t n = atomic_load(&t->fault[f]);
        uint64_t seen = atomic_load(&t->fault_seen[f]);
        if (n == seen)
            continue;
        atomic_store(&t->fault_seen[f], n);
        if (f != IB_LG_FAULT_DROPPED)
            sut_errors += n - seen;
        char msg[512];
        int len = snprintf(msg, sizeof msg, "%s count: %llu; first response ids:", what[f],
                           (unsigned long long)(n - seen));
        for (uint64_t i = 0; i < IB_LG_FAULT_KEEP && i < n && len > 0 && (size_t)len < 400; i++)
            len += snprintf(msg + len, sizeof msg - (size_t)len, " %llu",
                            (unsigned long long)(atomic_load(&t->fault_ids[f][i]) + 1));
        if (f == IB_LG_FAULT_FAILED &&
            atomic_load_explicit(&t->fail_reason_state, memory_order_acquire) == 2) {
            snprintf(msg + len, sizeof msg - (size_t)len, "; first reason: %s", t->fail_reason);
            char note[400];
            snprintf(note, sizeof note, "SUT errors: %llu samples failed: %s",
                     (unsigned long long)(n - seen), t->fail_reason);
            note_reason(t, note);
        }
        log_error(t, "error_runtime", msg);
    }
    return sut_errors;
}

void ib_lg_collect_faults(ib_lg_test *t, ib_lg_result *res)
{
    res->unknown_responses = atomic_load(&t->fault[IB_LG_FAULT_UNKNOWN]);
    res->duplicate_responses = atomic_load(&t->fault[IB_LG_FAULT_DUPLICATE]);
    res->late_responses = atomic_load(&t->fault[IB_LG_FAULT_LATE]);
    res->lost_responses = atomic_load(&t->lost);
    res->failed_responses = atomic_load(&t->fault[IB_LG_FAULT_FAILED]);
    if (atomic_load_explicit(&t->fail_reason_state, memory_order_acquire) == 2)
        snprintf(res->failed_reason, sizeof res->failed_reason, "%s", t->fail_reason);
}

static void log_logger_counters(ib_lg_test *t)
{
    ib_lg_detail *d = &t->detail;
    /* The official IO thread's contention counters. This engine has no
     * request slots to swap; CAS retries on completion slots are real. */
    IB_LG_LOG_UINT(d, "logger_swap_request_slots_retry_count", 0);
    IB_LG_LOG_UINT(d, "logger_swap_request_slots_retry_retry_count", 0);
    IB_LG_LOG_UINT(d, "logger_swap_request_slots_retry_reencounter_count", 0);
    IB_LG_LOG_UINT(d, "logger_start_reading_entries_retry_count", 0);
    IB_LG_LOG_UINT(d, "logger_tls_total_log_cas_fail_count", atomic_load(&t->cas_retries));
    IB_LG_LOG_UINT(d, "logger_tls_total_swap_buffers_slot_retry_count", 0);
}

/* The latency in a completed slot, -1 for not issued / pending / LOST. */
static int64_t slot_latency(int64_t v)
{
    return v < 0 && v != IB_LG_SLOT_LOST ? -(v + 1) : -1;
}

/* MultiStream per-query latencies (time until the query's last sample) and
 * the v1.1 intervals spanned (r1.1 IssueQueries), from the closed slots. */
static int query_arrays(ib_lg_test *t, ib_lg_series_result *r)
{
    const ib_lg_effective *e = &t->eff;
    ib_lg_srt *s = r->srt;
    uint64_t nq = r->issue.queries_issued, spq = e->samples_per_query;
    r->qlat_buf = ib_malloc((size_t)(nq ? nq : 1) * sizeof *r->qlat_buf);
    if (!r->qlat_buf)
        return IB_ENOMEM;
    for (uint64_t i = 0; i < nq; i++) {
        int64_t mx = 0;
        for (uint64_t j = 0; j < spq && i * spq + j < s->n; j++) {
            int64_t l = slot_latency(atomic_load_explicit(&s->slot[i * spq + j],
                                                          memory_order_relaxed));
            if (l > mx)
                mx = l;
        }
        r->qlat_buf[i] = mx;
    }
    r->data.query_latencies = r->qlat_buf;
    uint64_t *iv = r->issue.intervals;
    if (iv && e->rules == IB_LG_RULES_V1_1) {
        uint64_t m = e->max_async_queries;
        for (uint64_t i = 0; i < nq; i++) {
            if (nq > m && i < nq - m)
                iv[i] = iv[i + m];
            else
                iv[i] = (uint64_t)ceil(e->target_qps * ((double)r->qlat_buf[i] / 1e9));
        }
        r->data.query_intervals = iv;
    }
    return IB_OK;
}

/* Copy the latencies of the completed slots out of the closed series (the
 * slots stay valid for late completers, which only ever see LOST or
 * completed values there). */
static int copy_latencies(ib_lg_series_result *r)
{
    ib_lg_srt *s = r->srt;
    r->lat_buf = ib_malloc((size_t)(s->done_slots ? s->done_slots : 1) * sizeof *r->lat_buf);
    if (!r->lat_buf)
        return IB_ENOMEM;
    size_t k = 0;
    int64_t mx = 0;
    for (uint64_t i = 0; i < s->n && k < s->done_slots; i++) {
        int64_t v = atomic_load_explicit(&s->slot[i], memory_order_relaxed);
        if (v >= 0 || v == IB_LG_SLOT_LOST)
            continue;
        int64_t lat = -(v + 1);
        r->lat_buf[k++] = lat;
        if (lat > mx)
            mx = lat;
    }
    r->data.sample_latencies = r->lat_buf;
    r->data.sample_count = k;
    r->data.max_latency_s = (double)mx / 1e9; /* GetMaxLatencySoFar */
    return IB_OK;
}

static int run_series(ib_lg_test *t, size_t set_index, bool accuracy, double qps,
                      bool bound_abort, ib_lg_series_result *r)
{
    const ib_lg_effective *e = &t->eff;
    ib_lg_detail *d = &t->detail;
    size_t len = 0, dist_end = 0;
    const ib_lg_sample_index *set = ib_lg_plan_set(t->plan, set_index, &len, &dist_end);
    if (!set)
        return IB_EINVAL;
    ib_lg_detail_index_list(d, "loaded_qsl_set", set, len, -1, __FILE__, __LINE__);
    ib_lg_detail_flush(d);
    if (t->qsl->load_samples) {
        int rc = t->qsl->load_samples(t->qsl->user, set, len);
        if (rc) {
            char msg[256];
            snprintf(msg, sizeof msg, "QSL load_samples failed (%s); the test was ended.",
                     ib_strerror(rc));
            log_error(t, "error_runtime", msg);
            note_reason(t, msg);
            t->status = rc;
            return rc;
        }
    }
    ib_lg_series *series = NULL;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_lg_series_create(t->plan, set_index, accuracy, qps, &series, &err);
    if (rc) {
        log_error(t, "error_invalid_test_settings", err.msg);
        note_reason(t, err.msg);
        t->status = rc;
        goto unload;
    }
    IB_LG_LOG_UINT(d, "generated_query_count", ib_lg_series_query_count(series));
    IB_LG_LOG_UINT(d, "generated_samples_per_query", ib_lg_series_samples_per_query(series));
    IB_LG_LOG_INT(d, "generated_query_duration", ib_lg_series_duration_ns(series));

    uint64_t n = ib_lg_series_sample_count(series);
    bool logging = accuracy || ib_lg_series_log_probability(series) > 0;
    ib_lg_srt *s = NULL;
    rc = ib_lg_srt_open(t, ib_lg_series_first_seq_id(series), n, logging, t->trace_f != NULL, &s);
    if (rc) {
        log_error(t, "error_runtime", "out of memory reserving the per-sample state");
        t->status = rc;
        goto destroy;
    }
    r->srt = s;
    if (!accuracy && e->scenario == IB_LG_SCENARIO_SERVER)
        s->latency_bound_ns = e->target_latency_ns;
    atomic_store(&t->prog_expected_samples, e->scenario == IB_LG_SCENARIO_SERVER ||
                                                    e->scenario == IB_LG_SCENARIO_OFFLINE || accuracy
                                                ? n
                                                : 0);
    atomic_store(&t->prog_expected_ns, e->scenario == IB_LG_SCENARIO_SERVER
                                           ? ib_lg_series_last_scheduled_ns(series)
                                           : e->target_duration_ms * 1000000);
    ib_lg_detail_flush(d);

    ib_lg_issue_out *o = &r->issue;
    rc = ib_lg_issue_series(t, series, s, accuracy, qps, bound_abort, o);
    if (t->sut->flush_queries)
        t->sut->flush_queries(t->sut->user, t);
    if (rc && t->status == IB_OK)
        t->status = rc;
    if (!accuracy && o->ran_out)
        log_error(t, "error_runtime",
                  "Ending early: Ran out of generated queries to issue before the minimum query "
                  "count and test duration were reached. Please update the relevant expected "
                  "latency or target qps in the TestSettings so they are more accurate.");

    /* wait for the tail (GetLatenciesBlocking), bounded by sut_timeout_ms */
    int64_t since = o->start_ns + o->last_issue_rel;
    int wrc = o->status ? o->status : ib_lg_wait_completed(t, s, o->samples_issued, since);
    ib_lg_srt_close(t, s);
    uint64_t lost = s->lost;
    r->lost = lost;
    atomic_fetch_add(&t->lost, lost);
    if (wrc == IB_ETIMEOUT || lost) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "SUT timeout: %llu of %llu issued samples were never completed (no completion "
                 "for sut_timeout_ms = %llu ms); the test was ended.",
                 (unsigned long long)lost, (unsigned long long)o->samples_issued,
                 (unsigned long long)t->opts.sut_timeout_ms);
        log_error(t, "error_runtime", msg);
        note_reason(t, msg);
        if (t->status == IB_OK)
            t->status = IB_ETIMEOUT;
    } else if (wrc == IB_ECANCELED) {
        log_error(t, "error_runtime", "The test was aborted (ib_lg_test_abort).");
        note_reason(t, "the test was aborted");
        if (t->status == IB_OK)
            t->status = IB_ECANCELED;
    }
    /* a stop that came while the issued samples were awaited counts too: a SUT may have
     * answered the rest without running them (the harness does) */
    if (ib_lg_issue_should_stop(t) == 1)
        o->interrupted = true;
    if (o->interrupted && !t->interrupted) {
        t->interrupted = true;
        log_error(t, "error_runtime",
                  "The test was interrupted (stop requested, e.g. SIGINT/SIGTERM): issuing "
                  "stopped early; what was issued was awaited and logged.");
        note_reason(t, "interrupted: the run was stopped before it ended (SIGINT/SIGTERM)");
    }
    r->faults = log_faults(t) + lost;
    log_logger_counters(t);
    char pb[64], pe[64];
    int64_t active = s->close_ns > s->start_ns ? s->close_ns - s->start_ns : 0;
    power_time(o->start_wall_ns, pb, sizeof pb);
    power_time(o->start_wall_ns + active, pe, sizeof pe);
    IB_LG_LOG_STR(d, "power_begin", pb);
    IB_LG_LOG_STR(d, "power_end", pe);

    ib_lg_acc_write_series(&t->acc, s);
    if (t->trace_f)
        ib_lg_trace_series(t->trace_f, s, e->scenario, t->origin_ns);
    for (int i = 0; i < IB_LG_HIST_BUCKETS; i++)
        t->delay.b[i] += o->delay.b[i];
    t->delay.count += o->delay.count;

    if (!accuracy) {
        /* the performance result (PerformanceResult of IssueQueries) */
        int64_t done_rel = o->last_sched_rel;
        for (size_t j = 0; j < o->last_n; j++) {
            uint64_t rel = o->last_first_seq + j - s->first_seq;
            int64_t l = rel < s->n ? slot_latency(atomic_load(&s->slot[rel])) : -1;
            if (l >= 0 && o->last_sched_rel + l > done_rel)
                done_rel = o->last_sched_rel + l;
        }
        r->data.queries_issued = o->queries_issued;
        r->data.final_query_scheduled_s = (double)o->last_sched_rel / 1e9;
        r->data.final_query_issued_s = (double)o->last_issue_rel / 1e9;
        r->data.final_query_all_samples_done_s = (double)done_rel / 1e9;
        r->data.sut_errors = r->faults;
        r->data.interrupted = o->interrupted;
        if (e->scenario == IB_LG_SCENARIO_MULTI_STREAM) {
            rc = query_arrays(t, r);
            if (rc)
                t->status = rc;
        }
        rc = copy_latencies(r);
        if (rc)
            t->status = rc;
    }
    ib_lg_srt_discard(s); /* physical memory back; late completers still safe */
destroy:
    ib_lg_series_destroy(series);
unload:
    if (t->qsl->unload_samples) {
        int urc = t->qsl->unload_samples(t->qsl->user, set, len);
        if (urc && t->status == IB_OK) {
            log_error(t, "error_runtime", "QSL unload_samples failed.");
            t->status = urc;
        }
    }
    ib_lg_detail_flush(d);
    return t->status;
}

int ib_lg_run_accuracy_series(ib_lg_test *t, size_t set_index)
{
    ib_lg_series_result r;
    memset(&r, 0, sizeof r);
    int rc = run_series(t, set_index, true, 0, false, &r);
    ib_lg_series_result_free(&r);
    return rc;
}

static void fill_params(const ib_lg_effective *e, double qps, ib_lg_perf_params *p)
{
    memset(p, 0, sizeof *p);
    p->scenario = e->scenario;
    p->v11 = e->rules == IB_LG_RULES_V1_1;
    p->target_latency_percentile = e->target_latency_percentile;
    p->target_latency_ns = e->target_latency_ns;
    p->min_duration_ms = e->min_duration_ms;
    p->min_query_count = e->min_query_count;
    p->min_sample_count = e->min_sample_count;
    p->samples_per_query = e->samples_per_query;
    p->target_qps = qps > 0 ? qps : e->target_qps;
    p->max_async_queries = e->max_async_queries;
    p->max_query_count = e->max_query_count;
    p->max_duration_ms = e->max_duration_ms;
}

int ib_lg_run_perf_series(ib_lg_test *t, double target_qps, bool bound_abort,
                          ib_lg_series_result *r)
{
    memset(r, 0, sizeof *r);
    r->target_qps = target_qps > 0 ? target_qps : t->eff.target_qps;
    fill_params(&t->eff, target_qps, &r->params);
    size_t set = ib_lg_plan_performance_set_index(t->plan);
    int rc = run_series(t, set, false, target_qps, bound_abort, r);
    if (r->srt && r->data.sample_latencies) {
        ib_lg_perf_summarize(&r->params, &r->data, &r->summary);
        r->summarized = true;
    }
    return r->summarized ? IB_OK : (rc ? rc : IB_EINVAL);
}

void ib_lg_series_result_free(ib_lg_series_result *r)
{
    ib_free(r->lat_buf);
    ib_free(r->qlat_buf);
    ib_free(r->issue.intervals);
    memset(r, 0, sizeof *r);
}
