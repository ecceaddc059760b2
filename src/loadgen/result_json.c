/*
 * result_json.c - result.json: what the summary says, machine-readable, plus
 * what the official files cannot carry (the reason for every failed rule,
 * the computed suggestion, fault counts, issue delay, where each setting
 * came from, labels such as "synthetic"). Written after the run.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json_writer.h"
#include "inferbench/version.h"
#include "loadgen/result_json.h"
#include "loadgen/results.h"
#include "loadgen/engine_internal.h"

bool ib_lg_busy_label(const ib_lg_result *r, char *buf, size_t n)
{
    if (!(r->others_cpu_pct > IB_LG_BUSY_PCT))
        return false;
    snprintf(buf, n, "machine busy: %.0f %% of the CPUs used by other processes during the test "
                     "(its figures may be low)",
             r->others_cpu_pct);
    return true;
}

const char *ib_lg_rule_name(enum ib_lg_rule r)
{
    switch (r) {
    case IB_LG_RULE_MIN_DURATION: return "min_duration";
    case IB_LG_RULE_MIN_QUERIES: return "min_queries";
    case IB_LG_RULE_PERF_CONSTRAINTS: return "performance_constraints";
    case IB_LG_RULE_EARLY_STOPPING: return "early_stopping";
    case IB_LG_RULE_TTFT: return "ttft";
    case IB_LG_RULE_TPOT: return "tpot";
    case IB_LG_RULE_INTERVALS: return "intervals";
    case IB_LG_RULE_SUT_ERRORS: return "sut_errors";
    case IB_LG_RULE_INTERRUPTED: return "interrupted";
    }
    return "unknown";
}

/* The reason line the explanation wrote for a rule (by its prefix). */
static void reason_for(const char *reasons, const char *prefix, char *out, size_t n)
{
    out[0] = '\0';
    size_t pl = strlen(prefix);
    for (const char *l = reasons; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        if (len >= pl && strncmp(l, prefix, pl) == 0) {
            snprintf(out, n, "%.*s", (int)len, l);
            return;
        }
        l = nl ? nl + 1 : NULL;
    }
}

static const char *rule_prefix(enum ib_lg_rule r)
{
    switch (r) {
    case IB_LG_RULE_MIN_DURATION: return "min duration:";
    case IB_LG_RULE_MIN_QUERIES: return "min queries:";
    case IB_LG_RULE_PERF_CONSTRAINTS: return "latency:";
    case IB_LG_RULE_EARLY_STOPPING: return "early stopping:";
    case IB_LG_RULE_INTERVALS: return "intervals:";
    case IB_LG_RULE_SUT_ERRORS: return "SUT";
    case IB_LG_RULE_INTERRUPTED: return "interrupted:";
    default: return "";
    }
}

static void kv_value(ib_jw *jw, const ib_lg_kv *kv)
{
    switch (kv->type) {
    case IB_LG_KV_STRING: ib_jw_string(jw, kv->s ? kv->s : ""); break;
    case IB_LG_KV_INT: ib_jw_int(jw, kv->i); break;
    case IB_LG_KV_UINT: ib_jw_uint(jw, kv->u); break;
    case IB_LG_KV_DOUBLE: ib_jw_double(jw, kv->d); break;
    case IB_LG_KV_BOOL: ib_jw_bool(jw, kv->b); break;
    }
}

static void settings_block(ib_jw *jw, const ib_lg_test *t)
{
    const ib_lg_settings_origin *o = t->opts.origins;
    ib_lg_kv kv[IB_LG_MAX_KVS];
    ib_jw_key(jw, "settings");
    ib_jw_object_begin(jw);
    if (t->plan) {
        size_t n = IB_MIN(ib_lg_requested_kvs(&t->eff, kv, IB_LG_MAX_KVS), (size_t)IB_LG_MAX_KVS);
        ib_jw_key(jw, "requested");
        ib_jw_object_begin(jw);
        for (size_t i = 0; i < n; i++) {
            /* key "requested_<field>": the origin is recorded by field name */
            const char *field = kv[i].key + strlen("requested_");
            const char *where = o ? ib_lg_settings_origin_get(o, field) : NULL;
            ib_jw_key(jw, field);
            ib_jw_object_begin(jw);
            ib_jw_key(jw, "value");
            kv_value(jw, &kv[i]);
            ib_jw_key(jw, "origin");
            ib_jw_string(jw, where ? where : "default");
            ib_jw_object_end(jw);
        }
        ib_jw_object_end(jw);
        n = IB_MIN(ib_lg_effective_kvs(&t->eff, kv, IB_LG_MAX_KVS), (size_t)IB_LG_MAX_KVS);
        ib_jw_key(jw, "effective");
        ib_jw_object_begin(jw);
        for (size_t i = 0; i < n; i++) {
            ib_jw_key(jw, kv[i].key + strlen("effective_"));
            kv_value(jw, &kv[i]);
        }
        ib_jw_object_end(jw);
    }
    ib_jw_key(jw, "origins");
    ib_jw_object_begin(jw);
    size_t no = o ? ib_lg_settings_origin_count(o) : 0;
    for (size_t i = 0; i < no; i++) {
        const char *k = NULL, *w = NULL;
        if (ib_lg_settings_origin_at(o, i, &k, &w) == IB_OK && k) {
            ib_jw_key(jw, k);
            ib_jw_string(jw, w ? w : "");
        }
    }
    ib_jw_object_end(jw);
    ib_jw_object_end(jw);
}

/* The latency statistics of the summary's "Additional Stats" (per query for MultiStream,
 * as its summary prints them). */
static void latency_stats(ib_jw *jw, const ib_lg_result *r)
{
    char label[16];
    ib_jw_key(jw, "min_latency_ns");
    ib_jw_int(jw, r->min_latency_ns);
    ib_jw_key(jw, "max_latency_ns");
    ib_jw_int(jw, r->max_latency_ns);
    ib_jw_key(jw, "mean_latency_ns");
    ib_jw_int(jw, r->mean_latency_ns);
    ib_jw_key(jw, "percentile_latency_ns");
    ib_jw_object_begin(jw);
    for (size_t i = 0; i < IB_LG_NUM_PERCENTILES; i++) {
        ib_lg_percentile_label(ib_lg_percentiles[i], label, sizeof label);
        ib_jw_key(jw, label);
        ib_jw_int(jw, r->percentile_latency_ns[i]);
    }
    ib_jw_object_end(jw);
}

void ib_lg_result_metrics_json(ib_jw *jw, const ib_lg_result *r, bool v11)
{
    enum ib_lg_scenario sc = r->scenario;
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "query_count");
    ib_jw_uint(jw, r->query_count);
    ib_jw_key(jw, "sample_count");
    ib_jw_uint(jw, r->sample_count);
    /* the headline line of the summary: its words, its value, its unit */
    ib_jw_key(jw, "headline");
    ib_jw_object_begin(jw);
    char line[64];
    double value = 0;
    const char *unit = "ns";
    switch (sc) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
    case IB_LG_SCENARIO_MULTI_STREAM:
        if (sc == IB_LG_SCENARIO_MULTI_STREAM && v11) {
            snprintf(line, sizeof line, "Samples per query");
            value = r->samples_per_query;
            unit = "samples";
        } else {
            snprintf(line, sizeof line, v11 ? "%.0fth percentile latency (ns)"
                                            : "%.1fth percentile latency (ns)",
                     r->target_latency_percentile * 100);
            value = (double)r->target_percentile_latency_ns;
        }
        break;
    case IB_LG_SCENARIO_SERVER:
        snprintf(line, sizeof line, v11 ? "Scheduled samples per second"
                                        : "Completed samples per second");
        value = v11 ? r->scheduled_samples_per_sec : r->completed_samples_per_sec;
        unit = "samples/s";
        break;
    case IB_LG_SCENARIO_OFFLINE:
        snprintf(line, sizeof line, "Samples per second");
        value = r->samples_per_second;
        unit = "samples/s";
        break;
    }
    ib_jw_key(jw, "line");
    ib_jw_string(jw, line);
    ib_jw_key(jw, "value");
    ib_jw_double(jw, value);
    ib_jw_key(jw, "unit");
    ib_jw_string(jw, unit);
    ib_jw_object_end(jw);
    /* what the scenario's summary prints besides, named after its lines */
    switch (sc) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        ib_jw_key(jw, "qps_with_loadgen_overhead");
        ib_jw_double(jw, r->qps_with_loadgen_overhead);
        ib_jw_key(jw, "qps_without_loadgen_overhead");
        ib_jw_double(jw, r->qps_without_loadgen_overhead);
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        ib_jw_key(jw, "samples_per_query");
        ib_jw_double(jw, r->samples_per_query);
        break;
    case IB_LG_SCENARIO_SERVER:
        ib_jw_key(jw, "completed_samples_per_second");
        ib_jw_double(jw, r->completed_samples_per_sec);
        ib_jw_key(jw, "scheduled_samples_per_second");
        ib_jw_double(jw, r->scheduled_samples_per_sec);
        ib_jw_key(jw, "overlatency_query_count");
        ib_jw_uint(jw, r->overlatency_query_count);
        break;
    case IB_LG_SCENARIO_OFFLINE:
        ib_jw_key(jw, "samples_per_second");
        ib_jw_double(jw, r->samples_per_second);
        break;
    }
    if (sc != IB_LG_SCENARIO_OFFLINE) {
        ib_jw_key(jw, "target_latency_percentile");
        ib_jw_double(jw, r->target_latency_percentile);
        ib_jw_key(jw, "target_percentile_latency_ns");
        ib_jw_int(jw, r->target_percentile_latency_ns);
    }
    if (!v11 && (sc == IB_LG_SCENARIO_SINGLE_STREAM || sc == IB_LG_SCENARIO_MULTI_STREAM)) {
        ib_jw_key(jw, "early_stopping_latency_ns");
        ib_jw_int(jw, r->early_stopping_latency_ns);
    }
    if (!v11) {
        ib_jw_key(jw, "early_stopping_met");
        ib_jw_bool(jw, r->early_stopping_met);
    }
    latency_stats(jw, r);
    if (r->mode == IB_LG_MODE_FIND_PEAK) {
        ib_jw_key(jw, "find_peak_qps");
        ib_jw_double(jw, r->find_peak_qps);
    }
    /* inferbench's own measurement: scheduled -> issued */
    ib_jw_key(jw, "issue_delay_p50_ns");
    ib_jw_int(jw, r->issue_delay_p50_ns);
    ib_jw_key(jw, "issue_delay_p99_ns");
    ib_jw_int(jw, r->issue_delay_p99_ns);
    ib_jw_object_end(jw);
}

static void faults_block(ib_jw *jw, const ib_lg_result *r)
{
    ib_jw_key(jw, "faults");
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "lost_responses");
    ib_jw_uint(jw, r->lost_responses);
    ib_jw_key(jw, "duplicate_responses");
    ib_jw_uint(jw, r->duplicate_responses);
    ib_jw_key(jw, "unknown_responses");
    ib_jw_uint(jw, r->unknown_responses);
    ib_jw_key(jw, "late_responses");
    ib_jw_uint(jw, r->late_responses);
    ib_jw_key(jw, "failed_responses");
    ib_jw_uint(jw, r->failed_responses);
    if (r->failed_reason[0]) {
        ib_jw_key(jw, "failed_reason");
        ib_jw_string(jw, r->failed_reason);
    }
    ib_jw_key(jw, "num_errors");
    ib_jw_uint(jw, r->num_errors);
    ib_jw_key(jw, "num_warnings");
    ib_jw_uint(jw, r->num_warnings);
    ib_jw_object_end(jw);
}

int ib_lg_result_json_build(const ib_lg_test *t, const ib_lg_result *r, ib_strbuf *out)
{
    ib_jw jw;
    ib_jw_init(&jw, out, true);
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "format");
    ib_jw_string(&jw, IB_LG_RESULT_FORMAT);
    ib_jw_key(&jw, "inferbench_version");
    ib_jw_string(&jw, ib_version_string());
    ib_jw_key(&jw, "git");
    ib_jw_string(&jw, ib_version_git());
    ib_jw_key(&jw, "loadgen_compatible");
    ib_jw_string(&jw, t->settings.rules == IB_LG_RULES_V1_1 ? "1.1" : IB_LOADGEN_COMPAT_VERSION);
    ib_jw_key(&jw, "rules");
    ib_jw_string(&jw, ib_lg_rules_name(t->settings.rules));
    ib_jw_key(&jw, "rng_compat");
    ib_jw_string(&jw, ib_lg_rng_compat_name(t->settings.rng_compat));
    ib_jw_key(&jw, "model");
    if (t->model_name)
        ib_jw_string(&jw, t->model_name);
    else
        ib_jw_null(&jw);
    ib_jw_key(&jw, "sut_name");
    ib_jw_string(&jw, t->sut && t->sut->name ? t->sut->name : "");
    ib_jw_key(&jw, "qsl_name");
    ib_jw_string(&jw, t->qsl && t->qsl->name ? t->qsl->name : "");
    ib_jw_key(&jw, "scenario");
    ib_jw_string(&jw, ib_lg_scenario_name(r->scenario));
    ib_jw_key(&jw, "mode");
    ib_jw_string(&jw, ib_lg_mode_name(r->mode));
    ib_jw_key(&jw, "status");
    ib_jw_string(&jw, ib_err_name(t->status));
    ib_jw_key(&jw, "has_performance");
    ib_jw_bool(&jw, r->has_performance);
    ib_jw_key(&jw, "result");
    ib_jw_string(&jw, r->interrupted ? "INTERRUPTED" : r->valid ? "VALID" : "INVALID");
    ib_jw_key(&jw, "interrupted");
    ib_jw_bool(&jw, r->interrupted);
    ib_jw_key(&jw, "valid");
    ib_jw_bool(&jw, r->valid);
    ib_jw_key(&jw, "failed_rules");
    ib_jw_array_begin(&jw);
    for (uint32_t bit = 1; bit && bit <= IB_LG_RULE_INTERRUPTED; bit <<= 1) {
        if (!(r->failed_rules & bit))
            continue;
        char why[512];
        reason_for(r->reasons, rule_prefix((enum ib_lg_rule)bit), why, sizeof why);
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "rule");
        ib_jw_string(&jw, ib_lg_rule_name((enum ib_lg_rule)bit));
        ib_jw_key(&jw, "reason");
        ib_jw_string(&jw, why);
        ib_jw_object_end(&jw);
    }
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "reasons");
    ib_jw_string(&jw, r->reasons);
    ib_jw_key(&jw, "suggestion");
    ib_jw_string(&jw, r->suggestion);
    ib_jw_key(&jw, "metrics");
    if (r->has_performance)
        ib_lg_result_metrics_json(&jw, r, t->settings.rules == IB_LG_RULES_V1_1);
    else
        ib_jw_null(&jw);
    faults_block(&jw, r);
    ib_jw_key(&jw, "accuracy_log_entries");
    ib_jw_uint(&jw, r->accuracy_log_entries);
    settings_block(&jw, t);
    ib_jw_key(&jw, "machine_load"); /* the rest of the machine during the test */
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "others_cpu_pct");
    if (r->others_cpu_pct >= 0)
        ib_jw_double_g(&jw, r->others_cpu_pct, 3);
    else
        ib_jw_null(&jw);
    ib_jw_key(&jw, "busy");
    ib_jw_bool(&jw, r->others_cpu_pct > IB_LG_BUSY_PCT);
    ib_jw_object_end(&jw);
    ib_jw_key(&jw, "labels");
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < t->label_count; i++)
        ib_jw_string(&jw, t->labels[i]);
    char busy[160];
    if (ib_lg_busy_label(r, busy, sizeof busy))
        ib_jw_string(&jw, busy);
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "log_prefix");
    ib_jw_string(&jw, t->prefix);
    ib_jw_key(&jw, "log_suffix");
    ib_jw_string(&jw, t->suffix);
    ib_jw_object_end(&jw);
    int rc = ib_jw_finish(&jw);
    if (rc == IB_OK)
        rc = ib_strbuf_putc(out, '\n');
    return rc;
}

int ib_lg_result_json_write(const ib_lg_test *t, const ib_lg_result *res)
{
    ib_strbuf b;
    ib_strbuf_init(&b);
    int rc = ib_lg_result_json_build(t, res, &b);
    char path[2048];
    if (rc == IB_OK && ib_path_join(path, sizeof path, t->outdir, "result.json"))
        rc = IB_EINVAL;
    if (rc == IB_OK)
        rc = ib_file_write_all(path, b.data, b.len, NULL);
    ib_strbuf_deinit(&b);
    return rc;
}
