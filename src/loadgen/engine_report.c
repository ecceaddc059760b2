/*
 * engine_report.c - the performance report of a series: the summary results
 * section (results.cc LogSummary), the detail-log result records in the
 * official order and types (results.cc LogDetail; the r1.1 key set under the
 * v1.1 rules), and the public ib_lg_result with inferbench's INVALID
 * explanation.
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "loadgen/summary.h"
#include "loadgen/engine_internal.h"

#define D(t) (&(t)->detail)

/* "result_<label><suffix>" for the six percentiles. */
static void log_percentile_keys(ib_lg_test *t, const char *suffix, const int64_t *v)
{
    char label[16], key[96];
    for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++) {
        ib_lg_percentile_label(ib_lg_percentiles[i], label, sizeof label);
        snprintf(key, sizeof key, "result_%s%s", label, suffix);
        IB_LG_LOG_INT(D(t), key, v[i]);
    }
}

static void log_detail_results(ib_lg_test *t, const ib_lg_series_result *r)
{
    const ib_lg_perf_params *p = &r->params;
    const ib_lg_perf_summary *s = &r->summary;
    ib_lg_detail *d = D(t);
    char buf[1024], label[16], key[96];
    IB_LG_LOG_STR(d, "result_validity", s->valid ? "VALID" : "INVALID");
    if (s->has_perf_constraints)
        IB_LG_LOG_BOOL(d, "result_perf_constraints_met", s->perf_constraints_met);
    IB_LG_LOG_BOOL(d, "result_min_duration_met", s->min_duration_met);
    IB_LG_LOG_BOOL(d, "result_min_queries_met", s->min_queries_met);
    if (!p->v11)
        IB_LG_LOG_BOOL(d, "early_stopping_met", s->early_stopping_met);
    if (!s->valid) {
        ib_lg_perf_invalid_reason(s, buf, sizeof buf);
        IB_LG_LOG_STR(d, "result_invalid_reason", buf);
    }
    if (!p->v11) {
        snprintf(buf, sizeof buf, "%s", s->early_stopping_rec);
        for (char *c = buf; *c; c++)
            if (*c == '\n')
                *c = ' ';
        IB_LG_LOG_STR(d, "early_stopping_result", buf);
        IB_LG_LOG_UINT(d, "result_query_count", s->query_count);
        if (p->scenario == IB_LG_SCENARIO_SERVER)
            IB_LG_LOG_UINT(d, "result_overlatency_query_count", s->overlatency_query_count);
    }
    switch (p->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        IB_LG_LOG_DBL(d, "result_qps_with_loadgen_overhead", s->qps_with_loadgen_overhead);
        IB_LG_LOG_DBL(d, "result_qps_without_loadgen_overhead", s->qps_without_loadgen_overhead);
        if (!p->v11) {
            IB_LG_LOG_INT(d, "early_stopping_latency_ss", s->early_stopping_latency_ss);
            IB_LG_LOG_INT(d, "early_stopping_latency_ms", s->early_stopping_latency_ms);
        }
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        if (p->v11) {
            for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++) {
                ib_lg_percentile_label(ib_lg_percentiles[i], label, sizeof label);
                snprintf(key, sizeof key, "result_%s_percentile_num_intervals_between_queries",
                         label);
                IB_LG_LOG_UINT(d, key, s->qi_percentile[i]);
                snprintf(key, sizeof key, "result_%s_percentile_per_query_latency_ns", label);
                IB_LG_LOG_INT(d, key, s->q_percentile[i]);
            }
        } else {
            IB_LG_LOG_INT(d, "result_min_query_latency_ns", s->q_min);
            IB_LG_LOG_INT(d, "result_max_query_latency_ns", s->q_max);
            IB_LG_LOG_INT(d, "result_mean_query_latency_ns", s->q_mean);
            log_percentile_keys(t, "_percentile_per_query_latency_ns", s->q_percentile);
            IB_LG_LOG_INT(d, "early_stopping_latency_ms", s->early_stopping_latency_ms);
        }
        break;
    case IB_LG_SCENARIO_SERVER:
        IB_LG_LOG_DBL(d, "result_scheduled_samples_per_sec", s->scheduled_samples_per_sec);
        IB_LG_LOG_DBL(d, "result_completed_samples_per_sec", s->completed_samples_per_sec);
        break;
    case IB_LG_SCENARIO_OFFLINE:
        IB_LG_LOG_DBL(d, "result_samples_per_second", s->samples_per_second);
        break;
    }
    IB_LG_LOG_INT(d, "result_min_latency_ns", s->min_latency);
    IB_LG_LOG_INT(d, "result_max_latency_ns", s->max_latency);
    IB_LG_LOG_INT(d, "result_mean_latency_ns", s->mean_latency);
    log_percentile_keys(t, "_percentile_latency_ns", s->percentile_latency);
    if (!p->v11)
        IB_LG_LOG_UINT(d, "num_errors", d->errors);
}

static void fill_result(ib_lg_test *t, const ib_lg_series_result *r, ib_lg_result *res)
{
    const ib_lg_perf_summary *s = &r->summary;
    res->has_performance = true;
    res->valid = s->valid && t->status == IB_OK;
    res->failed_rules = s->failed_rules;
    if (t->status != IB_OK && !(res->failed_rules & IB_LG_RULE_SUT_ERRORS) && r->lost)
        res->failed_rules |= IB_LG_RULE_SUT_ERRORS;
    ib_lg_perf_explain(&r->params, &r->data, s, res->reasons, sizeof res->reasons,
                       res->suggestion, sizeof res->suggestion);
    if (t->reasons_extra.len) {
        size_t l = strlen(res->reasons);
        snprintf(res->reasons + l, sizeof res->reasons - l, "%s\n", t->reasons_extra.data);
    }
    res->query_count = s->query_count;
    res->sample_count = r->issue.samples_issued;
    /* Each rate is set only in the scenario whose summary prints it (loadgen.md §2.7,
     * §3.1); elsewhere its formula means nothing (SingleStream's N / max latency, Offline's
     * (N - 1) / issue time of a query issued at t = 0) and stays 0. */
    switch (r->params.scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        res->qps_with_loadgen_overhead = s->qps_with_loadgen_overhead;
        res->qps_without_loadgen_overhead = s->qps_without_loadgen_overhead;
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        res->samples_per_query = (double)r->params.samples_per_query;
        break;
    case IB_LG_SCENARIO_SERVER:
        res->scheduled_samples_per_sec = s->scheduled_samples_per_sec;
        res->completed_samples_per_sec = s->completed_samples_per_sec;
        break;
    case IB_LG_SCENARIO_OFFLINE: res->samples_per_second = s->samples_per_second; break;
    }
    bool ms = r->params.scenario == IB_LG_SCENARIO_MULTI_STREAM;
    res->min_latency_ns = ms ? s->q_min : s->min_latency;
    res->max_latency_ns = ms ? s->q_max : s->max_latency;
    res->mean_latency_ns = ms ? s->q_mean : s->mean_latency;
    for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++)
        res->percentile_latency_ns[i] = ms ? s->q_percentile[i] : s->percentile_latency[i];
    res->target_latency_percentile = r->params.target_latency_percentile;
    res->target_percentile_latency_ns = ms ? s->q_target : s->target_latency_value;
    res->early_stopping_met = s->early_stopping_met;
    res->early_stopping_latency_ns = r->params.scenario == IB_LG_SCENARIO_SINGLE_STREAM
                                         ? s->early_stopping_latency_ss
                                         : s->early_stopping_latency_ms;
    res->overlatency_query_count = s->overlatency_query_count;
    res->issue_delay_p50_ns = ib_lg_hist_quantile(&r->issue.delay, 0.50);
    res->issue_delay_p99_ns = ib_lg_hist_quantile(&r->issue.delay, 0.99);
}

void ib_lg_report_perf(ib_lg_test *t, ib_lg_series_result *r, ib_lg_result *res)
{
    if (!r->summarized)
        return;
    fill_result(t, r, res);
    /* the summary shows the settings of the series (FindPeak: its QPS) */
    ib_lg_effective e = t->eff;
    e.target_qps = r->params.target_qps;
    ib_lg_summary_results(&t->summary, t->sut->name, &e, &r->params, &r->summary);
    log_detail_results(t, r);
    ib_lg_detail_flush(D(t));
}
