/*
 * summary.c - the text of mlperf_log_summary.txt, line for line as the
 * official LogSummary writes it (current rules: results.cc; v1.1: the r1.1
 * loadgen.cc). Doubles follow the official formatting: DoubleToString
 * (fixed, 2 decimals) where the official uses it, the C++ stream default
 * (%g, 6 digits) where it streams a double.
 */
#include <stdio.h>
#include <string.h>

#include "inferbench/loadgen.h"
#include "loadgen/logwriter.h"
#include "loadgen/summary.h"

#define BANNER "================================================\n"

static const char *yes_no(bool b)
{
    return b ? "Yes" : "NO";
}

static void sample_stats(ib_strbuf *b, const ib_lg_perf_summary *s)
{
    char label[16];
    ib_strbuf_printf(b, "Min latency (ns)                : %lld\n", (long long)s->min_latency);
    ib_strbuf_printf(b, "Max latency (ns)                : %lld\n", (long long)s->max_latency);
    ib_strbuf_printf(b, "Mean latency (ns)               : %lld\n", (long long)s->mean_latency);
    for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++) {
        ib_lg_percentile_label(ib_lg_percentiles[i], label, sizeof label);
        ib_strbuf_printf(b, "%s percentile latency (ns)   : %lld\n", label,
                         (long long)s->percentile_latency[i]);
    }
}

static void headline(ib_strbuf *b, const ib_lg_perf_params *p, const ib_lg_perf_summary *s)
{
    char g[64];
    switch (p->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        ib_strbuf_printf(b, p->v11 ? "%.0fth percentile latency (ns) : %lld\n"
                                   : "%.1fth percentile latency (ns) : %lld\n",
                         p->target_latency_percentile * 100, (long long)s->target_latency_value);
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        if (p->v11)
            ib_strbuf_printf(b, "Samples per query : %llu\n",
                             (unsigned long long)p->samples_per_query);
        else
            ib_strbuf_printf(b, "%.1fth percentile latency (ns) : %lld\n",
                             p->target_latency_percentile * 100, (long long)s->q_target);
        break;
    case IB_LG_SCENARIO_SERVER:
        if (p->v11)
            ib_strbuf_printf(b, "Scheduled samples per second : %.2f\n",
                             s->scheduled_samples_per_sec);
        else
            ib_strbuf_printf(b, "Completed samples per second    : %.2f\n",
                             s->completed_samples_per_sec);
        break;
    case IB_LG_SCENARIO_OFFLINE:
        ib_lg_fmt_double(s->samples_per_second, g, sizeof g);
        ib_strbuf_printf(b, "Samples per second: %s\n", g);
        break;
    }
}

static void additional_v11(ib_strbuf *b, const ib_lg_perf_params *p,
                           const ib_lg_perf_summary *s)
{
    char label[16], g1[64], g2[64];
    switch (p->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        ib_strbuf_printf(b, "QPS w/ loadgen overhead         : %.2f\n",
                         s->qps_with_loadgen_overhead);
        ib_strbuf_printf(b, "QPS w/o loadgen overhead        : %.2f\n\n",
                         s->qps_without_loadgen_overhead);
        break;
    case IB_LG_SCENARIO_SERVER:
        ib_strbuf_printf(b, "Completed samples per second    : %.2f\n\n",
                         s->completed_samples_per_sec);
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        ib_lg_fmt_double(p->target_qps, g1, sizeof g1);
        ib_lg_fmt_double(1000.0 / p->target_qps, g2, sizeof g2);
        ib_strbuf_printf(b, "Intervals between each IssueQuery:  \"qps\" : %s, \"ms\" : %s\n", g1,
                         g2);
        for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++) {
            ib_lg_percentile_label(ib_lg_percentiles[i], label, sizeof label);
            ib_strbuf_printf(b, "%s percentile : %llu\n", label,
                             (unsigned long long)s->qi_percentile[i]);
        }
        ib_lg_fmt_double((double)p->target_latency_ns * 1000.0 / 1e9, g1, sizeof g1);
        ib_strbuf_printf(b, "\nPer-query latency:  \"target_ns\" : %lld, \"target_ms\" : %s\n",
                         (long long)p->target_latency_ns, g1);
        for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++) {
            ib_lg_percentile_label(ib_lg_percentiles[i], label, sizeof label);
            ib_strbuf_printf(b, "%s percentile latency (ns)   : %lld\n", label,
                             (long long)s->q_percentile[i]);
        }
        ib_strbuf_puts(b, "\nPer-sample latency:\n");
        break;
    case IB_LG_SCENARIO_OFFLINE: break;
    }
    sample_stats(b, s);
}

static void additional_current(ib_strbuf *b, const ib_lg_perf_params *p,
                               const ib_lg_perf_summary *s)
{
    char label[16];
    switch (p->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        ib_strbuf_printf(b, "QPS w/ loadgen overhead         : %.2f\n",
                         s->qps_with_loadgen_overhead);
        ib_strbuf_printf(b, "QPS w/o loadgen overhead        : %.2f\n\n",
                         s->qps_without_loadgen_overhead);
        break;
    case IB_LG_SCENARIO_SERVER:
        ib_strbuf_printf(b, "Scheduled samples per second : %.2f\n", s->scheduled_samples_per_sec);
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        ib_strbuf_puts(b, "Per-query latency:  \n");
        ib_strbuf_printf(b, "Min latency (ns)                : %lld\n", (long long)s->q_min);
        ib_strbuf_printf(b, "Max latency (ns)                : %lld\n", (long long)s->q_max);
        ib_strbuf_printf(b, "Mean latency (ns)               : %lld\n", (long long)s->q_mean);
        for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++) {
            ib_lg_percentile_label(ib_lg_percentiles[i], label, sizeof label);
            ib_strbuf_printf(b, "%s percentile latency (ns)   : %lld\n", label,
                             (long long)s->q_percentile[i]);
        }
        return;
    case IB_LG_SCENARIO_OFFLINE: break;
    }
    sample_stats(b, s);
}

int ib_lg_summary_results(ib_strbuf *b, const char *sut_name, const ib_lg_effective *e,
                          const ib_lg_perf_params *p, const ib_lg_perf_summary *s)
{
    ib_strbuf_puts(b, BANNER "MLPerf Results Summary\n" BANNER);
    ib_strbuf_printf(b, "SUT name : %s\n", sut_name ? sut_name : "");
    ib_strbuf_printf(b, "Scenario : %s\n", ib_lg_scenario_name(e->scenario));
    ib_strbuf_printf(b, "Mode     : %s\n", ib_lg_mode_name(e->mode));
    headline(b, p, s);
    ib_strbuf_printf(b, "Result is : %s\n", s->valid ? "VALID" : "INVALID");
    if (s->has_perf_constraints)
        ib_strbuf_printf(b, "  Performance constraints satisfied : %s\n",
                         yes_no(s->perf_constraints_met));
    ib_strbuf_printf(b, "  Min duration satisfied : %s\n", yes_no(s->min_duration_met));
    ib_strbuf_printf(b, "  Min queries satisfied : %s\n", yes_no(s->min_queries_met));
    if (!p->v11)
        ib_strbuf_printf(b, "  Early stopping satisfied: %s\n", yes_no(s->early_stopping_met));
    if (!s->valid) {
        ib_strbuf_puts(b, "Recommendations:\n");
        if (!s->perf_constraints_met)
            ib_strbuf_printf(b, " * %s\n", s->perf_constraints_rec);
        if (!s->min_duration_met)
            ib_strbuf_printf(b, " * %s\n", s->min_duration_rec);
        if (!s->min_queries_met)
            ib_strbuf_puts(b, " * The test exited early, before enough queries were issued.\n"
                              "   See the detailed log for why this may have occurred.\n");
        if (!s->sut_errors_ok)
            ib_strbuf_puts(b, " * The SUT lost, duplicated or misaddressed responses; see the "
                              "error records in the detailed log.\n");
        if (s->interrupted)
            ib_strbuf_puts(b, " * The test was interrupted before it ended; run it again.\n");
    }
    if (!p->v11 && p->scenario != IB_LG_SCENARIO_OFFLINE)
        ib_strbuf_printf(b, "Early Stopping Result:\n%s\n", s->early_stopping_rec);
    ib_strbuf_puts(b, "\n" BANNER "Additional Stats\n" BANNER);
    if (p->v11)
        additional_v11(b, p, s);
    else
        additional_current(b, p, s);
    ib_strbuf_puts(b, "\n" BANNER "Test Parameters Used\n" BANNER);
    int rc = ib_lg_test_parameters_text(e, b);
    if (rc)
        return rc;
    return b->oom ? IB_ENOMEM : IB_OK;
}

int ib_lg_summary_footer(ib_strbuf *b, uint64_t warnings, uint64_t errors)
{
    if (warnings == 0)
        ib_strbuf_puts(b, "\nNo warnings encountered during test.\n");
    else if (warnings == 1)
        ib_strbuf_puts(b, "\n1 warning encountered. See detailed log.\n");
    else
        ib_strbuf_printf(b, "\n%llu warnings encountered. See detailed log.\n",
                         (unsigned long long)warnings);
    if (errors == 0)
        ib_strbuf_puts(b, "\nNo errors encountered during test.\n");
    else if (errors == 1)
        ib_strbuf_puts(b, "\n1 ERROR encountered. See detailed log.\n");
    else
        ib_strbuf_printf(b, "\n%llu ERRORS encountered. See detailed log.\n",
                         (unsigned long long)errors);
    return b->oom ? IB_ENOMEM : IB_OK;
}
