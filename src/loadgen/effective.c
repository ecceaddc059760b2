/*
 * effective.c - TestSettingsInternal of the official LoadGen (loadgen.md §2.2;
 * the r1.1 constructor for the v1.1 rule set, §2.9) and the ordered, typed
 * requested_* / effective_* records and "Test Parameters Used" lines that
 * LogRequestedTestSettings, LogEffectiveSettings and LogSummary print.
 *
 * Floating-point expressions keep the official evaluation order (e.g.
 * 1.1 * seconds * qps, then truncation) so the derived counts are identical.
 * Does not: format log lines (the writers do) or build the plan (plan.c).
 */
#include "loadgen/effective.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"

/* A double that must become a uint64 count: reject what C cannot convert. */
static bool to_u64(double v, uint64_t *out)
{
    if (!(v >= 0.0) || !(v < 18446744073709551616.0)) return false;
    *out = (uint64_t)v;
    return true;
}

/* DurationToSeconds(milliseconds): count / 1000 in double. */
static double ms_to_s(int64_t ms)
{
    return (double)ms / 1000.0;
}

static int derive_targets(ib_lg_effective *e, const ib_lg_settings *r, ib_err *err)
{
    bool v11 = e->rules == IB_LG_RULES_V1_1;
    switch (r->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        e->target_qps = 1e9 / r->single_stream_expected_latency_ns;
        e->max_async_queries = 1;
        e->target_latency_percentile = r->single_stream_target_latency_percentile;
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        if (v11) {
            /* r1.1: fixed-rate MultiStream; latency bound = async / qps. */
            e->max_async_queries = r->multi_stream_max_async_queries;
            e->target_qps = r->multi_stream_target_qps;
            double lat_s = (double)e->max_async_queries / r->multi_stream_target_qps;
            double ns = lat_s * 1e9;
            if (!(ns >= 0.0 && ns < 9.2e18))
                return ib_err_set(err, IB_EINVAL, "settings: MultiStream latency bound overflows");
            e->target_latency_ns = (int64_t)ns;
        } else {
            e->target_qps = 1e9 / r->multi_stream_expected_latency_ns;
            e->max_async_queries = 1;
        }
        e->target_latency_percentile = r->multi_stream_target_latency_percentile;
        break;
    case IB_LG_SCENARIO_SERVER:
        if (!(r->server_target_qps >= 0.0))
            return ib_err_set(err, IB_EINVAL, "settings: server_target_qps %g is negative",
                              r->server_target_qps);
        e->target_qps = r->server_target_qps;
        e->target_latency_ns = (int64_t)r->server_target_latency_ns;
        e->target_latency_percentile = r->server_target_latency_percentile;
        e->max_async_queries = r->server_max_async_queries;
        break;
    case IB_LG_SCENARIO_OFFLINE:
        e->target_latency_percentile = 0.99; /* unused, as upstream */
        if (!(r->offline_expected_qps >= 0.0))
            return ib_err_set(err, IB_EINVAL, "settings: offline_expected_qps %g is negative",
                              r->offline_expected_qps);
        e->target_qps = r->offline_expected_qps;
        e->max_async_queries = 1;
        break;
    }
    if (!isfinite(e->target_qps) || !(e->target_qps > 0.0))
        return ib_err_set(err, IB_EINVAL, "settings: the target QPS (%g) must be finite and > 0",
                          e->target_qps);
    return IB_OK;
}

int ib_lg_effective_derive(const ib_lg_settings *s, uint64_t qsl_total, uint64_t qsl_perf,
                           ib_lg_effective *out, ib_err *err)
{
    int rc = ib_lg_settings_validate(s, err);
    if (rc) return rc;
    ib_lg_effective e;
    memset(&e, 0, sizeof e);
    e.requested = *s;
    ib_lg_settings *r = &e.requested;
    /* StartTest: test05 forces PerformanceOnly and the test05 seeds. */
    if (r->test05) {
        e.test05_applied = true;
        r->mode = IB_LG_MODE_PERFORMANCE;
        r->qsl_rng_seed = r->test05_qsl_rng_seed;
        r->sample_index_rng_seed = r->test05_sample_index_rng_seed;
        r->schedule_rng_seed = r->test05_schedule_rng_seed;
    }
    e.qsl_total_count = qsl_total;
    e.qsl_performance_count = qsl_perf;
    e.scenario = r->scenario;
    e.mode = r->mode;
    e.rules = r->rules;
    e.rng_compat = r->rng_compat;
    bool v11 = e.rules == IB_LG_RULES_V1_1;
    if (qsl_total == 0) return ib_err_set(err, IB_EINVAL, "QSL: total sample count is 0");

    e.samples_per_query = 1;
    e.target_qps = 1;
    e.target_duration_ms = (int64_t)r->min_duration_ms;
    e.min_duration_ms = (int64_t)r->min_duration_ms;
    e.max_duration_ms = (int64_t)r->max_duration_ms;
    e.min_query_count = r->min_query_count;
    e.max_query_count = r->max_query_count;
    e.qsl_rng_seed = r->qsl_rng_seed;
    e.sample_index_rng_seed = r->sample_index_rng_seed;
    e.schedule_rng_seed = r->schedule_rng_seed;
    e.accuracy_log_rng_seed = r->accuracy_log_rng_seed;
    e.accuracy_log_probability = r->accuracy_log_probability;
    e.accuracy_log_sampling_target = r->accuracy_log_sampling_target;
    e.print_timestamps = r->print_timestamps;
    e.performance_issue_unique = r->performance_issue_unique;
    e.performance_issue_same = r->performance_issue_same;
    e.performance_issue_same_index = r->performance_issue_same_index;
    if (!v11) {
        e.use_token_latencies = r->use_token_latencies;
        e.server_ttft_latency = r->server_ttft_latency;
        e.server_tpot_latency = r->server_tpot_latency;
        e.infer_token_latencies = r->infer_token_latencies;
        e.token_latency_scaling_factor = r->token_latency_scaling_factor;
    }
    rc = derive_targets(&e, r, err);
    if (rc) return rc;

    e.performance_sample_count =
        r->performance_sample_count_override == 0 ? qsl_perf : r->performance_sample_count_override;
    if (e.performance_sample_count == 0)
        return ib_err_set(err, IB_EINVAL,
                          "settings: the performance sample count is 0 (QSL reports 0 and no "
                          "performance_sample_count_override)");
    e.accuracy_sample_count = (v11 || r->accuracy_sample_count_override == 0)
                                  ? qsl_total
                                  : r->accuracy_sample_count_override;
    e.sample_concatenate_permutation = !v11 && r->sample_concatenate_permutation;
    if (r->scenario == IB_LG_SCENARIO_MULTI_STREAM)
        e.samples_per_query = r->multi_stream_samples_per_query;

    if (r->scenario == IB_LG_SCENARIO_OFFLINE) {
        /* kSlack 1.1: enough samples to outlast min_duration (§2.2). */
        uint64_t target_sample_count;
        if (!to_u64(1.1 * ms_to_s(e.target_duration_ms) * e.target_qps, &target_sample_count))
            return ib_err_set(err, IB_EINVAL,
                              "settings: Offline target_qps x min_duration is too large");
        bool whole_set = r->performance_issue_unique || (v11 && r->performance_issue_same);
        e.samples_per_query =
            whole_set ? e.performance_sample_count : IB_MAX(e.min_query_count, target_sample_count);
        e.min_query_count = 1;
        e.target_duration_ms = 0;
    }
    if (e.sample_concatenate_permutation && r->scenario == IB_LG_SCENARIO_SINGLE_STREAM) {
        /* Equal issue: 2x slack, then rounded up past the next multiple of
         * the QSL-reported performance count (a full set is added even on a
         * multiple; loadgen.md §2.2, #1630). */
        uint64_t expected;
        if (!to_u64(2.0 * ms_to_s(e.target_duration_ms) * e.target_qps, &expected))
            return ib_err_set(err, IB_EINVAL, "settings: SingleStream query count too large");
        if (qsl_perf == 0)
            return ib_err_set(err, IB_EINVAL,
                              "settings: equal issue needs a non-zero QSL performance count");
        e.min_query_count = IB_MAX(e.min_query_count, expected);
        e.min_query_count += qsl_perf - (e.min_query_count % qsl_perf);
    }
    if (e.samples_per_query != 0 && e.min_query_count > UINT64_MAX / e.samples_per_query)
        return ib_err_set(err, IB_EINVAL,
                          "settings: min_query_count x samples_per_query overflows");
    e.min_sample_count = e.min_query_count * e.samples_per_query;

    if (r->performance_issue_same && r->performance_issue_same_index >= e.performance_sample_count)
        return ib_err_set(err, IB_EINVAL,
                          "settings: performance_issue_same_index %" PRIu64
                          " must be below the performance sample count %" PRIu64,
                          r->performance_issue_same_index, e.performance_sample_count);
    *out = e;
    return IB_OK;
}

/* ---- key/value lists ------------------------------------------------------------- */

typedef struct kvl {
    ib_lg_kv *out;
    size_t cap, n;
} kvl;

/* The next slot, or NULL once cap is reached (the count still grows). */
static ib_lg_kv *kv_next(kvl *l, const char *key, ib_lg_kv_type t)
{
    ib_lg_kv *kv = l->n < l->cap ? &l->out[l->n] : NULL;
    l->n++;
    if (kv) {
        memset(kv, 0, sizeof *kv);
        kv->key = key;
        kv->type = t;
    }
    return kv;
}

static void kv_s(kvl *l, const char *k, const char *v)
{
    ib_lg_kv *kv = kv_next(l, k, IB_LG_KV_STRING);
    if (kv) kv->s = v;
}
static void kv_i(kvl *l, const char *k, int64_t v)
{
    ib_lg_kv *kv = kv_next(l, k, IB_LG_KV_INT);
    if (kv) kv->i = v;
}
static void kv_u(kvl *l, const char *k, uint64_t v)
{
    ib_lg_kv *kv = kv_next(l, k, IB_LG_KV_UINT);
    if (kv) kv->u = v;
}
static void kv_d(kvl *l, const char *k, double v)
{
    ib_lg_kv *kv = kv_next(l, k, IB_LG_KV_DOUBLE);
    if (kv) kv->d = v;
}
static void kv_b(kvl *l, const char *k, bool v)
{
    ib_lg_kv *kv = kv_next(l, k, IB_LG_KV_BOOL);
    if (kv) kv->b = v;
}

/* LogRequestedTestSettings (current and r1.1). */
size_t ib_lg_requested_kvs(const ib_lg_effective *e, ib_lg_kv *out, size_t cap)
{
    kvl l = {out, cap, 0};
    const ib_lg_settings *s = &e->requested;
    bool v11 = e->rules == IB_LG_RULES_V1_1;
    kv_s(&l, "requested_scenario", ib_lg_scenario_name(s->scenario));
    kv_s(&l, "requested_test_mode", ib_lg_mode_name(s->mode));
    switch (s->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        if (v11) /* uint64_t in r1.1 */
            kv_u(&l, "requested_single_stream_expected_latency_ns",
                 (uint64_t)s->single_stream_expected_latency_ns);
        else
            kv_d(&l, "requested_single_stream_expected_latency_ns",
                 s->single_stream_expected_latency_ns);
        kv_d(&l, "requested_single_stream_target_latency_percentile",
             s->single_stream_target_latency_percentile);
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        if (v11) {
            kv_d(&l, "requested_multi_stream_target_qps", s->multi_stream_target_qps);
            kv_u(&l, "requested_multi_stream_target_latency_ns", s->multi_stream_target_latency_ns);
            kv_d(&l, "requested_multi_stream_target_latency_percentile",
                 s->multi_stream_target_latency_percentile);
            kv_i(&l, "requested_multi_stream_samples_per_query",
                 (int64_t)s->multi_stream_samples_per_query);
            kv_i(&l, "requested_multi_stream_max_async_queries",
                 (int64_t)s->multi_stream_max_async_queries);
        } else {
            kv_d(&l, "requested_multi_stream_expected_latency_ns",
                 s->multi_stream_expected_latency_ns);
            kv_d(&l, "requested_multi_stream_target_latency_percentile",
                 s->multi_stream_target_latency_percentile);
            kv_u(&l, "requested_multi_stream_samples_per_query", s->multi_stream_samples_per_query);
        }
        break;
    case IB_LG_SCENARIO_SERVER:
        kv_d(&l, "requested_server_target_qps", s->server_target_qps);
        kv_u(&l, "requested_server_target_latency_ns", s->server_target_latency_ns);
        kv_d(&l, "requested_server_target_latency_percentile", s->server_target_latency_percentile);
        kv_b(&l, "requested_server_coalesce_queries", s->server_coalesce_queries);
        kv_i(&l, "requested_server_find_peak_qps_decimals_of_precision",
             s->server_find_peak_qps_decimals_of_precision);
        kv_d(&l, "requested_server_find_peak_qps_boundary_step_size",
             s->server_find_peak_qps_boundary_step_size);
        kv_u(&l, "requested_server_max_async_queries", s->server_max_async_queries);
        kv_u(&l, "requested_server_num_issue_query_threads", s->server_num_issue_query_threads);
        break;
    case IB_LG_SCENARIO_OFFLINE:
        kv_d(&l, "requested_offline_expected_qps", s->offline_expected_qps);
        break;
    }
    kv_u(&l, "requested_min_duration_ms", s->min_duration_ms);
    kv_u(&l, "requested_max_duration_ms", s->max_duration_ms);
    kv_u(&l, "requested_min_query_count", s->min_query_count);
    kv_u(&l, "requested_max_query_count", s->max_query_count);
    kv_u(&l, "requested_qsl_rng_seed", s->qsl_rng_seed);
    kv_u(&l, "requested_sample_index_rng_seed", s->sample_index_rng_seed);
    kv_u(&l, "requested_schedule_rng_seed", s->schedule_rng_seed);
    kv_u(&l, "requested_accuracy_log_rng_seed", s->accuracy_log_rng_seed);
    kv_d(&l, "requested_accuracy_log_probability", s->accuracy_log_probability);
    kv_u(&l, "requested_accuracy_log_sampling_target", s->accuracy_log_sampling_target);
    kv_b(&l, "requested_print_timestamps", s->print_timestamps);
    kv_b(&l, "requested_performance_issue_unique", s->performance_issue_unique);
    kv_b(&l, "requested_performance_issue_same", s->performance_issue_same);
    kv_u(&l, "requested_performance_issue_same_index", s->performance_issue_same_index);
    kv_u(&l, "requested_performance_sample_count_override", s->performance_sample_count_override);
    if (!v11) {
        kv_u(&l, "requested_accuracy_sample_count_override", s->accuracy_sample_count_override);
        kv_b(&l, "requested_sample_concatenate_permutation", s->sample_concatenate_permutation);
        if (s->use_token_latencies) {
            kv_b(&l, "requested_use_token_latencies", s->use_token_latencies);
            if (s->scenario != IB_LG_SCENARIO_OFFLINE) {
                kv_u(&l, "requested_server_ttft_latency", s->server_ttft_latency);
                kv_u(&l, "requested_server_tpot_latency", s->server_tpot_latency);
            }
        }
    }
    return l.n;
}

/* LogEffectiveSettings (current and r1.1). */
size_t ib_lg_effective_kvs(const ib_lg_effective *e, ib_lg_kv *out, size_t cap)
{
    kvl l = {out, cap, 0};
    kv_s(&l, "effective_scenario", ib_lg_scenario_name(e->scenario));
    kv_s(&l, "effective_test_mode", ib_lg_mode_name(e->mode));
    kv_u(&l, "effective_samples_per_query", e->samples_per_query);
    kv_d(&l, "effective_target_qps", e->target_qps);
    kv_i(&l, "effective_target_latency_ns", e->target_latency_ns);
    kv_d(&l, "effective_target_latency_percentile", e->target_latency_percentile);
    kv_u(&l, "effective_max_async_queries", e->max_async_queries);
    kv_i(&l, "effective_target_duration_ms", e->target_duration_ms);
    kv_i(&l, "effective_min_duration_ms", e->min_duration_ms);
    kv_i(&l, "effective_max_duration_ms", e->max_duration_ms);
    kv_u(&l, "effective_min_query_count", e->min_query_count);
    kv_u(&l, "effective_max_query_count", e->max_query_count);
    kv_u(&l, "effective_min_sample_count", e->min_sample_count);
    kv_u(&l, "effective_qsl_rng_seed", e->qsl_rng_seed);
    kv_u(&l, "effective_sample_index_rng_seed", e->sample_index_rng_seed);
    kv_u(&l, "effective_schedule_rng_seed", e->schedule_rng_seed);
    kv_u(&l, "effective_accuracy_log_rng_seed", e->accuracy_log_rng_seed);
    kv_d(&l, "effective_accuracy_log_probability", e->accuracy_log_probability);
    kv_u(&l, "effective_accuracy_log_sampling_target", e->accuracy_log_sampling_target);
    kv_b(&l, "effective_print_timestamps", e->print_timestamps);
    kv_b(&l, "effective_performance_issue_unique", e->performance_issue_unique);
    kv_b(&l, "effective_performance_issue_same", e->performance_issue_same);
    kv_u(&l, "effective_performance_issue_same_index", e->performance_issue_same_index);
    kv_u(&l, "effective_performance_sample_count", e->performance_sample_count);
    if (e->rules != IB_LG_RULES_V1_1) {
        kv_u(&l, "effective_accuracy_sample_count", e->accuracy_sample_count);
        kv_b(&l, "effective_sample_concatenate_permutation", e->sample_concatenate_permutation);
    }
    return l.n;
}

int ib_lg_format_double(double v, char *buf, size_t n)
{
    return snprintf(buf, n, "%g", v); /* C++ ostream default: %g, precision 6 */
}

int ib_lg_kv_format_value(const ib_lg_kv *kv, char *buf, size_t n)
{
    switch (kv->type) {
    case IB_LG_KV_STRING:
        return snprintf(buf, n, "%s", kv->s ? kv->s : "");
    case IB_LG_KV_INT:
        return snprintf(buf, n, "%" PRId64, kv->i);
    case IB_LG_KV_UINT:
        return snprintf(buf, n, "%" PRIu64, kv->u);
    case IB_LG_KV_DOUBLE:
        return ib_lg_format_double(kv->d, buf, n);
    case IB_LG_KV_BOOL:
        return snprintf(buf, n, "%s", kv->b ? "true" : "false");
    }
    return snprintf(buf, n, "?");
}

/* TestSettingsInternal::LogSummary: ostream formatting, bools as 0/1. */
int ib_lg_test_parameters_text(const ib_lg_effective *e, ib_strbuf *out)
{
    char d[64];
    bool v11 = e->rules == IB_LG_RULES_V1_1;
    ib_strbuf_printf(out, "samples_per_query : %" PRIu64 "\n", e->samples_per_query);
    ib_lg_format_double(e->target_qps, d, sizeof d);
    ib_strbuf_printf(out, "target_qps : %s\n", d);
    if (!e->use_token_latencies) {
        ib_strbuf_printf(out, "target_latency (ns): %" PRId64 "\n", e->target_latency_ns);
    } else {
        ib_strbuf_printf(out, "ttft_latency (ns): %" PRIu64 "\n", e->server_ttft_latency);
        ib_strbuf_printf(out, "tpot_latency (ns): %" PRIu64 "\n", e->server_tpot_latency);
    }
    ib_strbuf_printf(out, "max_async_queries : %" PRIu64 "\n", e->max_async_queries);
    ib_strbuf_printf(out, "min_duration (ms): %" PRId64 "\n", e->min_duration_ms);
    ib_strbuf_printf(out, "max_duration (ms): %" PRId64 "\n", e->max_duration_ms);
    ib_strbuf_printf(out, "min_query_count : %" PRIu64 "\n", e->min_query_count);
    ib_strbuf_printf(out, "max_query_count : %" PRIu64 "\n", e->max_query_count);
    ib_strbuf_printf(out, "qsl_rng_seed : %" PRIu64 "\n", e->qsl_rng_seed);
    ib_strbuf_printf(out, "sample_index_rng_seed : %" PRIu64 "\n", e->sample_index_rng_seed);
    ib_strbuf_printf(out, "schedule_rng_seed : %" PRIu64 "\n", e->schedule_rng_seed);
    ib_strbuf_printf(out, "accuracy_log_rng_seed : %" PRIu64 "\n", e->accuracy_log_rng_seed);
    ib_lg_format_double(e->accuracy_log_probability, d, sizeof d);
    ib_strbuf_printf(out, "accuracy_log_probability : %s\n", d);
    ib_strbuf_printf(out, "accuracy_log_sampling_target : %" PRIu64 "\n",
                     e->accuracy_log_sampling_target);
    ib_strbuf_printf(out, "print_timestamps : %d\n", e->print_timestamps ? 1 : 0);
    ib_strbuf_printf(out, "performance_issue_unique : %d\n", e->performance_issue_unique ? 1 : 0);
    ib_strbuf_printf(out, "performance_issue_same : %d\n", e->performance_issue_same ? 1 : 0);
    ib_strbuf_printf(out, "performance_issue_same_index : %" PRIu64 "\n",
                     e->performance_issue_same_index);
    ib_strbuf_printf(out, "performance_sample_count : %" PRIu64 "\n", e->performance_sample_count);
    if (!v11) {
        ib_strbuf_printf(out, "accuracy_sample_count : %" PRIu64 "\n", e->accuracy_sample_count);
        if (e->sample_concatenate_permutation)
            ib_strbuf_puts(out, "WARNING: sample_concatenate_permutation was set to true. \n"
                                "Generated samples per query might be different as the one in "
                                "the setting.\n"
                                "Check the generated_samples_per_query line in the detailed log "
                                "for the real\n"
                                "samples_per_query value\n");
    }
    return out->oom ? IB_ENOMEM : IB_OK;
}
