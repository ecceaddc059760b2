/*
 * results.c - percentiles, metrics and validity of one performance series,
 * exactly as the official results.cc (loadgen.md §2.7-2.8; v1.1 §2.9):
 * percentile p of N values is element floor(N*p) of the ascending order, the
 * mean is an integer mean, throughput metrics use the (N-1) numerators, and
 * VALID needs min duration, min queries (and samples), the Server latency
 * bound and early stopping (current rules) or the v1.1 interval rule.
 *
 * Differences on purpose: order statistics come from a multi-selection
 * instead of full sorts (same values), and a run with lost, duplicate,
 * unknown or late responses is INVALID (the official hangs or only logs).
 * The INVALID explanation (reasons + a computed suggestion) is ours.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loadgen/early_stopping.h"
#include "loadgen/results.h"
#include "loadgen/results_select.h"

const double ib_lg_percentiles[IB_LG_NUM_PERCENTILES] = {.50, .90, .95, .97, .99, .999};

void ib_lg_percentile_label(double p, char *buf, size_t n)
{
    snprintf(buf, n, "%.2f", p * 100);
}

/* Element floor(n * p), as pr.sample_latencies[sample_count * p]. */
static size_t pct_rank(size_t n, double p)
{
    return (size_t)((double)n * p);
}

/* Official order statistics over one latency vector: mean, min, max, target
 * and six percentiles, plus up to two extra ranks (early stopping). */
typedef struct stats {
    int64_t min, max, mean, target;
    int64_t pct[IB_LG_NUM_PERCENTILES];
    int64_t extra[2];
} stats;

static void compute_stats(int64_t *a, size_t n, double target_p, const size_t *extra_ranks,
                          size_t n_extra, stats *st)
{
    memset(st, 0, sizeof *st);
    if (n == 0 || !a)
        return;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += a[i];
    /* official: int64 accumulated / size_t count (non-negative, so exact) */
    st->mean = (int64_t)((uint64_t)sum / (uint64_t)n);
    size_t ranks[IB_LG_NUM_PERCENTILES + 5];
    size_t k = 0;
    ranks[k++] = 0;
    ranks[k++] = n - 1;
    ranks[k++] = pct_rank(n, target_p);
    for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++)
        ranks[k++] = pct_rank(n, ib_lg_percentiles[i]);
    for (size_t i = 0; i < n_extra && i < 2; i++)
        ranks[k++] = extra_ranks[i];
    ib_lg_select_ranks(a, n, ranks, k);
    st->min = a[0];
    st->max = a[n - 1];
    st->target = a[ranks[2]];
    for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++)
        st->pct[i] = a[ranks[3 + i]];
    for (size_t i = 0; i < n_extra && i < 2; i++)
        st->extra[i] = extra_ranks[i] < n ? a[extra_ranks[i]] : 0;
}

static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

/* results.cc EarlyStopping for SingleStream/MultiStream: the estimate text
 * for percentile p over n queries. Returns false when n < h(1) + 1. */
static bool es_stream_text(int64_t n, double p, const ib_lg_es_estimate *e, int64_t value,
                           char *buf, size_t bufn)
{
    if (!e->enough) {
        snprintf(buf, bufn,
                 " * Only processed %lld queries.\n * Need to process at least %lld queries for "
                 "early stopping.",
                 (long long)n, (long long)e->need);
        return false;
    }
    snprintf(buf, bufn,
             " * Processed at least %lld queries (%lld).\n * Would discard %lld highest latency "
             "queries.\n * Early stopping %.1fth percentile estimate: %lld",
             (long long)e->need, (long long)n, (long long)(e->t - 1), p * 100, (long long)value);
    return true;
}

static void min_duration_rec(const ib_lg_perf_params *pp, char *buf, size_t n)
{
    const char *t = "";
    switch (pp->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        t = "Decrease the expected latency so the loadgen pre-generates more queries.";
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        t = pp->v11 ? "MultiStream should always meet the minimum duration. Please file a bug."
                    : "Decrease the expected latency so the loadgen pre-generates more queries.";
        break;
    case IB_LG_SCENARIO_SERVER:
        t = "Increase the target QPS so the loadgen pre-generates more queries.";
        break;
    case IB_LG_SCENARIO_OFFLINE:
        t = "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query.";
        break;
    }
    snprintf(buf, n, "%s", t);
}

static void summarize_validity(const ib_lg_perf_params *pp, const ib_lg_perf_data *d,
                               ib_lg_perf_summary *s)
{
    double min_duration_s = (double)pp->min_duration_ms / 1000.0;
    switch (pp->scenario) {
    case IB_LG_SCENARIO_OFFLINE: s->min_duration_met = d->max_latency_s >= min_duration_s; break;
    case IB_LG_SCENARIO_SERVER:
        s->min_duration_met = d->final_query_scheduled_s >= min_duration_s;
        break;
    default: s->min_duration_met = d->final_query_issued_s >= min_duration_s; break;
    }
    if (!s->min_duration_met)
        min_duration_rec(pp, s->min_duration_rec, sizeof s->min_duration_rec);
    s->min_queries_met =
        d->queries_issued >= pp->min_query_count && s->sample_count >= pp->min_sample_count;

    s->has_perf_constraints = pp->scenario == IB_LG_SCENARIO_SERVER ||
                              (pp->v11 && pp->scenario == IB_LG_SCENARIO_MULTI_STREAM);
    s->perf_constraints_met = true;
    if (pp->scenario == IB_LG_SCENARIO_SERVER && s->target_latency_value > pp->target_latency_ns) {
        snprintf(s->perf_constraints_rec, sizeof s->perf_constraints_rec,
                 "Reduce target QPS to improve latency.");
        s->perf_constraints_met = false;
    }
    if (pp->v11 && pp->scenario == IB_LG_SCENARIO_MULTI_STREAM && s->qi_target >= 2) {
        snprintf(s->perf_constraints_rec, sizeof s->perf_constraints_rec,
                 "Reduce samples per query to improve latency.");
        s->perf_constraints_met = false;
    }
    s->sut_errors_ok = d->sut_errors == 0;
    bool official = s->min_duration_met && s->min_queries_met && s->perf_constraints_met &&
                    s->early_stopping_met;
    s->interrupted = d->interrupted;
    s->valid = official && s->sut_errors_ok && !s->interrupted;
    s->failed_rules = 0;
    if (!s->min_duration_met)
        s->failed_rules |= IB_LG_RULE_MIN_DURATION;
    if (!s->min_queries_met)
        s->failed_rules |= IB_LG_RULE_MIN_QUERIES;
    if (!s->perf_constraints_met)
        s->failed_rules |= (pp->v11 && pp->scenario == IB_LG_SCENARIO_MULTI_STREAM)
                               ? IB_LG_RULE_INTERVALS
                               : IB_LG_RULE_PERF_CONSTRAINTS;
    if (!s->early_stopping_met)
        s->failed_rules |= IB_LG_RULE_EARLY_STOPPING;
    if (!s->sut_errors_ok)
        s->failed_rules |= IB_LG_RULE_SUT_ERRORS;
    if (s->interrupted)
        s->failed_rules |= IB_LG_RULE_INTERRUPTED;
}

/* Early stopping (current rules only): ranks needed before the selection. */
static void summarize_early_stopping(const ib_lg_perf_params *pp, ib_lg_perf_data *d,
                                     ib_lg_perf_summary *s, const ib_lg_es_estimate *e,
                                     const ib_lg_es_estimate *e99, const stats *st,
                                     const stats *qst)
{
    int64_t n = (int64_t)d->queries_issued;
    s->early_stopping_met = true;
    s->early_stopping_rec[0] = '\0';
    if (pp->v11)
        return;
    switch (pp->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM: {
        s->es_min_queries = e->need;
        int64_t v = e->enough ? st->extra[0] : 0;
        s->early_stopping_met = es_stream_text(n, pp->target_latency_percentile, e, v,
                                               s->early_stopping_rec,
                                               sizeof s->early_stopping_rec);
        if (!s->early_stopping_met)
            break;
        s->early_stopping_latency_ss = v;
        if (!e99->enough) {
            append(s->early_stopping_rec, sizeof s->early_stopping_rec,
                   "\n * Not enough queries processed for %.1fth percentile\n early stopping "
                   "estimate (would need to process at\n least %lld total queries).",
                   0.99 * 100, (long long)e99->need);
        } else {
            append(s->early_stopping_rec, sizeof s->early_stopping_rec,
                   "\n * Early stopping %.1fth percentile estimate: %lld", 0.99 * 100,
                   (long long)st->extra[1]);
            s->early_stopping_latency_ms = st->extra[1];
        }
        break;
    }
    case IB_LG_SCENARIO_MULTI_STREAM: {
        s->es_min_queries = e->need;
        int64_t v = e->enough ? qst->extra[0] : 0;
        s->early_stopping_met = es_stream_text(n, pp->target_latency_percentile, e, v,
                                               s->early_stopping_rec,
                                               sizeof s->early_stopping_rec);
        if (s->early_stopping_met)
            s->early_stopping_latency_ms = v;
        break;
    }
    case IB_LG_SCENARIO_SERVER: {
        int64_t more = 0;
        s->early_stopping_met = ib_lg_es_server_ok(n, (int64_t)s->overlatency_query_count,
                                                   pp->target_latency_percentile, &more);
        s->es_more_queries = more;
        if (s->early_stopping_met)
            snprintf(s->early_stopping_rec, sizeof s->early_stopping_rec, " * Run successful.");
        else
            snprintf(s->early_stopping_rec, sizeof s->early_stopping_rec,
                     " * Run unsuccessful.\n * Processed %lld queries.\n * Would need to run at "
                     "least %lld more queries,\n with the run being successful if every "
                     "additional\n query were under latency.",
                     (long long)n, (long long)more);
        break;
    }
    case IB_LG_SCENARIO_OFFLINE: break;
    }
}

void ib_lg_perf_summarize(const ib_lg_perf_params *pp, ib_lg_perf_data *d, ib_lg_perf_summary *s)
{
    memset(s, 0, sizeof *s);
    size_t n = d->sample_count;
    s->sample_count = n;
    s->query_count = d->queries_issued;
    int64_t nq = (int64_t)d->queries_issued;

    /* The early-stopping t depends only on the query count, so its ranks
     * join the percentile selection (one pass instead of a sort). */
    ib_lg_es_estimate e = {false, 0, 1}, e99 = {false, 0, 1};
    bool stream = pp->scenario == IB_LG_SCENARIO_SINGLE_STREAM ||
                  pp->scenario == IB_LG_SCENARIO_MULTI_STREAM;
    size_t extra[2];
    size_t n_extra = 0;
    if (!pp->v11 && stream) {
        e = ib_lg_es_estimate_t(nq, pp->target_latency_percentile);
        extra[0] = e.enough ? (size_t)(nq - e.t) : 0;
        if (pp->scenario == IB_LG_SCENARIO_SINGLE_STREAM) {
            e99 = ib_lg_es_estimate_t(nq, 0.99);
            extra[1] = e99.enough ? (size_t)(nq - e99.t) : 0;
            n_extra = 2;
        }
    }

    if (pp->scenario == IB_LG_SCENARIO_SERVER)
        for (size_t i = 0; i < n; i++)
            s->overlatency_query_count += d->sample_latencies[i] > pp->target_latency_ns;

    stats st, qst;
    compute_stats(d->sample_latencies, n, pp->target_latency_percentile, extra,
                  pp->scenario == IB_LG_SCENARIO_SINGLE_STREAM ? n_extra : 0, &st);
    s->min_latency = st.min;
    s->max_latency = st.max;
    s->mean_latency = st.mean;
    s->target_latency_value = st.target;
    memcpy(s->percentile_latency, st.pct, sizeof st.pct);
    memset(&qst, 0, sizeof qst);
    if (pp->scenario == IB_LG_SCENARIO_MULTI_STREAM && n > 0) {
        compute_stats(d->query_latencies, (size_t)d->queries_issued, pp->target_latency_percentile,
                      extra, pp->v11 ? 0 : 1, &qst);
        s->q_min = qst.min;
        s->q_max = qst.max;
        s->q_mean = qst.mean;
        s->q_target = qst.target;
        memcpy(s->q_percentile, qst.pct, sizeof qst.pct);
        if (pp->v11 && d->query_intervals) {
            size_t nqq = (size_t)d->queries_issued, ranks[IB_LG_NUM_PERCENTILES + 1];
            ranks[0] = pct_rank(nqq, pp->target_latency_percentile);
            for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++)
                ranks[1 + i] = pct_rank(nqq, ib_lg_percentiles[i]);
            ib_lg_select_ranks_u64(d->query_intervals, nqq, ranks, IB_LG_NUM_PERCENTILES + 1);
            s->qi_target = nqq ? d->query_intervals[ranks[0]] : 0;
            for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++)
                s->qi_percentile[i] = nqq ? d->query_intervals[ranks[1 + i]] : 0;
        }
    }

    /* Metrics (results.cc LogDetail): (N - 1) over the last query's time. */
    double nm1 = n > 0 ? (double)(n - 1) : 0.0;
    s->qps_with_loadgen_overhead = nm1 / d->final_query_issued_s;
    s->qps_without_loadgen_overhead = 1 / ((double)s->mean_latency / 1e9);
    s->scheduled_samples_per_sec = nm1 / d->final_query_scheduled_s;
    s->completed_samples_per_sec = nm1 / d->final_query_all_samples_done_s;
    s->samples_per_second = (double)n / d->max_latency_s;

    summarize_early_stopping(pp, d, s, &e, &e99, &st, &qst);
    summarize_validity(pp, d, s);
}

void ib_lg_perf_invalid_reason(const ib_lg_perf_summary *s, char *buf, size_t n)
{
    if (n == 0)
        return;
    buf[0] = '\0';
    if (s->valid)
        return;
    if (!s->perf_constraints_met)
        append(buf, n, "%s ", s->perf_constraints_rec);
    if (!s->min_duration_met)
        append(buf, n, "%s ", s->min_duration_rec);
    if (!s->min_queries_met)
        append(buf, n, "The test exited early, before enough queries were issued.");
    if (!s->sut_errors_ok)
        append(buf, n, "%sThe SUT lost, duplicated or misaddressed responses (see the error "
                       "records).",
               buf[0] && buf[strlen(buf) - 1] != ' ' ? " " : "");
    for (char *c = buf; *c; c++)
        if (*c == '\n')
            *c = ' ';
}
