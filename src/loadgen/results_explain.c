/*
 * results_explain.c - "INVALID explained": for every failed rule, one line
 * with the measured value against its bound, the official recommendation,
 * and a concrete suggestion computed from the run (the rate the SUT actually
 * sustained, the query count or duration that would satisfy the rule, the
 * expected latency that would make the loadgen generate enough queries).
 * The suggestions are estimates from one run and say so; FindPeak mode adds
 * the measured peak itself (engine.c).
 */
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loadgen/results.h"

static void add(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

static double ms_to_s(int64_t ms)
{
    return (double)ms / 1000.0;
}

static void explain_duration(const ib_lg_perf_params *p, const ib_lg_perf_data *d,
                             const ib_lg_perf_summary *s, char *r, size_t rn, char *g, size_t gn)
{
    double need = ms_to_s(p->min_duration_ms);
    switch (p->scenario) {
    case IB_LG_SCENARIO_OFFLINE: {
        add(r, rn, "min duration: the Offline query completed in %.3f s, below min_duration %.3f s\n",
            d->max_latency_s, need);
        /* spq = max(min_query_count, 1.1 * min_duration_s * expected_qps);
         * at the measured rate the query lasts spq / rate seconds. */
        double rate = s->samples_per_second;
        if (rate > 0 && isfinite(rate))
            add(g, gn,
                "set the Offline target_qps (expected QPS) to at least %.0f, the rate this run "
                "measured (%.0f samples/s): the single query then holds >= 1.1 x %.0f s of work\n",
                ceil(rate), rate, need);
        break;
    }
    case IB_LG_SCENARIO_SERVER:
        add(r, rn,
            "min duration: the last query was scheduled at %.3f s, below min_duration %.3f s\n",
            d->final_query_scheduled_s, need);
        if (p->max_query_count || p->max_duration_ms)
            add(g, gn, "the run was cut by max_query_count=%llu / max_duration=%lld ms: raise or "
                       "remove them\n",
                (unsigned long long)p->max_query_count, (long long)p->max_duration_ms);
        else
            add(g, gn,
                "the schedule holds only %llu queries: at target_qps %.6g, %.0f s needs about "
                "%.0f queries (raise min_query_count to at least that, or drop "
                "performance_issue_unique)\n",
                (unsigned long long)d->queries_issued, p->target_qps, need,
                ceil(p->target_qps * need));
        break;
    default: {
        add(r, rn, "min duration: the last query was issued at %.3f s, below min_duration %.3f s\n",
            d->final_query_issued_s, need);
        /* The loadgen generates 2 x min_duration x (1e9 / expected latency)
         * queries; it ran out, so the SUT is faster than announced. */
        if (d->queries_issued > 1 && d->final_query_issued_s > 0) {
            double ns_per_query = d->final_query_issued_s * 1e9 / (double)(d->queries_issued - 1);
            add(g, gn,
                "the SUT took %.0f ns per query, faster than the expected latency: set the "
                "expected latency (%s_expected_latency_ns) to at most %.0f ns so enough queries "
                "are generated\n",
                ns_per_query,
                p->scenario == IB_LG_SCENARIO_SINGLE_STREAM ? "single_stream" : "multi_stream",
                floor(ns_per_query));
        }
        break;
    }
    }
}

static void explain_queries(const ib_lg_perf_params *p, const ib_lg_perf_data *d,
                            const ib_lg_perf_summary *s, char *r, size_t rn, char *g, size_t gn)
{
    add(r, rn,
        "min queries: %llu queries and %zu samples issued; the rules need %llu queries and %llu "
        "samples\n",
        (unsigned long long)d->queries_issued, s->sample_count,
        (unsigned long long)p->min_query_count, (unsigned long long)p->min_sample_count);
    if (p->max_query_count && p->max_query_count < p->min_query_count)
        add(g, gn, "max_query_count=%llu is below min_query_count=%llu: raise it or set it to 0\n",
            (unsigned long long)p->max_query_count, (unsigned long long)p->min_query_count);
    else if (p->max_duration_ms)
        add(g, gn, "max_duration=%lld ms stopped the run early: raise it or set it to 0\n",
            (long long)p->max_duration_ms);
}

/* Server: the fastest sample of the run was already over the bound, so no target_qps can
 * bring the percentile under it. */
static bool bound_unreachable(const ib_lg_perf_params *p, const ib_lg_perf_summary *s)
{
    return p->scenario == IB_LG_SCENARIO_SERVER && p->target_latency_ns > 0 &&
           s->min_latency > p->target_latency_ns;
}

static void explain_latency(const ib_lg_perf_params *p, const ib_lg_perf_data *d,
                            const ib_lg_perf_summary *s, char *r, size_t rn, char *g, size_t gn)
{
    add(r, rn,
        "latency: the %.1fth percentile is %lld ns, above the bound %lld ns (%llu of %zu "
        "samples over it)\n",
        p->target_latency_percentile * 100, (long long)s->target_latency_value,
        (long long)p->target_latency_ns, (unsigned long long)s->overlatency_query_count,
        s->sample_count);
    double done = s->completed_samples_per_sec;
    if (bound_unreachable(p, s)) {
        /* no rate fixes this: the SUT is too slow for the bound even unloaded */
        add(g, gn,
            "the latency bound (%.3g ms) cannot be met with this model, batch and machine: even "
            "the fastest sample took %.3g ms. A lower target_qps or more queries will not change "
            "that; a faster machine, backend or precision, or a smaller batch, is needed\n",
            (double)p->target_latency_ns / 1e6, (double)s->min_latency / 1e6);
    } else if (done > 0 && isfinite(done) && done < 0.99 * p->target_qps) {
        add(g, gn,
            "the SUT completed only %.1f samples/s of the %.6g scheduled (saturated): try "
            "target_qps <= %.1f (95%% of what it sustained)\n",
            done, p->target_qps, floor(done * 0.95 * 10) / 10);
    } else if (s->target_latency_value > 0) {
        /* Not saturated: the tail, not the mean, breaks the bound. Scale the
         * rate by the bound/percentile ratio (at most -50%, at least -5%). */
        double f = (double)p->target_latency_ns / (double)s->target_latency_value;
        if (f < 0.5)
            f = 0.5;
        if (f > 0.95)
            f = 0.95;
        add(g, gn,
            "the SUT kept up with %.6g QPS on average but its tail exceeded the bound: try "
            "target_qps about %.1f (an estimate; FindPeakPerformance measures it)\n",
            p->target_qps, floor(p->target_qps * f * 10) / 10);
    }
    (void)d;
}

void ib_lg_perf_explain(const ib_lg_perf_params *p, const ib_lg_perf_data *d,
                        const ib_lg_perf_summary *s, char *r, size_t rn, char *g, size_t gn)
{
    if (rn)
        r[0] = '\0';
    if (gn)
        g[0] = '\0';
    if (s->valid)
        return;
    if (!s->min_duration_met)
        explain_duration(p, d, s, r, rn, g, gn);
    if (!s->min_queries_met)
        explain_queries(p, d, s, r, rn, g, gn);
    if (!s->perf_constraints_met) {
        if (p->v11 && p->scenario == IB_LG_SCENARIO_MULTI_STREAM) {
            add(r, rn,
                "intervals: the %.0fth percentile query spans %llu intervals of %.0f ns (must be "
                "< 2)\n",
                p->target_latency_percentile * 100, (unsigned long long)s->qi_target,
                1e9 / p->target_qps);
            if (s->q_target > 0)
                add(g, gn,
                    "the %.0fth percentile query latency is %lld ns for %llu samples: about "
                    "%.0f samples per query fit in one %.0f ns interval\n",
                    p->target_latency_percentile * 100, (long long)s->q_target,
                    (unsigned long long)p->samples_per_query,
                    floor((double)p->samples_per_query * (1e9 / p->target_qps) /
                          (double)s->q_target),
                    1e9 / p->target_qps);
        } else {
            explain_latency(p, d, s, r, rn, g, gn);
        }
    }
    if (!s->early_stopping_met) {
        add(r, rn, "early stopping: not met\n");
        if (p->scenario == IB_LG_SCENARIO_SERVER && s->es_more_queries > 0 &&
            !bound_unreachable(p, s)) /* more queries over the bound would not help */
            add(g, gn,
                "early stopping needs at least %lld more queries (if all under latency): set "
                "min_query_count >= %llu, or min_duration >= %.0f ms at this QPS\n",
                (long long)s->es_more_queries,
                (unsigned long long)(d->queries_issued + (uint64_t)s->es_more_queries),
                ceil((double)(d->queries_issued + (uint64_t)s->es_more_queries) / p->target_qps *
                     1000));
        else if (s->es_min_queries > 0)
            add(g, gn, "early stopping needs at least %lld queries: set min_query_count >= %lld\n",
                (long long)s->es_min_queries, (long long)s->es_min_queries);
    }
    if (s->interrupted)
        add(r, rn, "interrupted: the run was stopped before it ended\n");
    if (!s->sut_errors_ok) {
        add(r, rn, "SUT errors: %llu responses were lost, duplicated, unknown, late or failed\n",
            (unsigned long long)d->sut_errors);
        add(g, gn, "check that the SUT completes every issued sample exactly once, with the id it "
                   "received, before sut_timeout_ms\n");
    }
    /* official recommendations, as the summary lists them */
    if (!s->perf_constraints_met)
        add(r, rn, " * %s\n", s->perf_constraints_rec);
    if (!s->min_duration_met)
        add(r, rn, " * %s\n", s->min_duration_rec);
    if (!s->min_queries_met)
        add(r, rn, " * The test exited early, before enough queries were issued.\n");
}
