/*
 * settings.c - TestSettings defaults for each rule set (loadgen.md §1.5, the
 * r1.1 test_settings.h for v1.1), the names of scenarios, modes, rule sets
 * and RNG compatibility modes with their parsers, pre-run validation, and
 * the settings-origin (provenance) table.
 *
 * Does not: parse config files (config.c) or derive effective settings
 * (effective.c).
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "base/common.h"
#include "inferbench/loadgen.h"

void ib_lg_settings_defaults_rules(ib_lg_settings *s, enum ib_lg_rules rules)
{
    memset(s, 0, sizeof *s);
    s->scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s->mode = IB_LG_MODE_PERFORMANCE;
    s->single_stream_expected_latency_ns = 1000000.0;
    s->single_stream_target_latency_percentile = 0.90;
    s->multi_stream_expected_latency_ns = 8000000.0;
    s->multi_stream_target_latency_percentile = 0.99;
    s->multi_stream_samples_per_query = 8;
    s->server_target_qps = 1.0;
    s->server_target_latency_ns = 100000000;
    s->server_target_latency_percentile = 0.99;
    s->server_coalesce_queries = false;
    s->server_find_peak_qps_decimals_of_precision = 1;
    s->server_find_peak_qps_boundary_step_size = 1.0;
    s->server_max_async_queries = 0;
    s->server_num_issue_query_threads = 0;
    s->offline_expected_qps = 1.0;
    s->min_duration_ms = 10000;
    s->max_duration_ms = 0;
    s->min_query_count = 100;
    s->max_query_count = 0;
    s->accuracy_log_probability = 0.0;
    s->server_ttft_latency = 100000000;
    s->server_tpot_latency = 100000000;
    s->token_latency_scaling_factor = 0; /* uninitialised upstream */
    s->rules = rules;
    s->rng_compat = IB_LG_RNG_LIBSTDCXX11;
    s->multi_stream_target_qps = 10.0;
    s->multi_stream_max_async_queries = 1;
    s->multi_stream_target_latency_ns = 100000000;
    if (rules == IB_LG_RULES_V1_1) {
        /* r1.1 test_settings.h: MultiStream is the fixed-rate scenario. */
        s->multi_stream_samples_per_query = 4;
        s->multi_stream_target_latency_percentile = 0.90;
    }
}

void ib_lg_settings_defaults(ib_lg_settings *s)
{
    ib_lg_settings_defaults_rules(s, IB_LG_RULES_CURRENT);
}

/* ---- names ----------------------------------------------------------------- */

const char *ib_lg_scenario_name(enum ib_lg_scenario s)
{
    switch (s) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        return "SingleStream";
    case IB_LG_SCENARIO_MULTI_STREAM:
        return "MultiStream";
    case IB_LG_SCENARIO_SERVER:
        return "Server";
    case IB_LG_SCENARIO_OFFLINE:
        return "Offline";
    }
    return "InvalidScenario";
}

const char *ib_lg_mode_name(enum ib_lg_mode m)
{
    switch (m) {
    case IB_LG_MODE_SUBMISSION:
        return "SubmissionRun";
    case IB_LG_MODE_ACCURACY:
        return "AccuracyOnly";
    case IB_LG_MODE_PERFORMANCE:
        return "PerformanceOnly";
    case IB_LG_MODE_FIND_PEAK:
        return "FindPeakPerformance";
    }
    return "InvalidMode";
}

const char *ib_lg_rules_name(enum ib_lg_rules r)
{
    switch (r) {
    case IB_LG_RULES_CURRENT:
        return "current";
    case IB_LG_RULES_V1_1:
        return "v1.1";
    }
    return "invalid";
}

const char *ib_lg_rng_compat_name(enum ib_lg_rng_compat c)
{
    switch (c) {
    case IB_LG_RNG_LIBSTDCXX11:
        return "libstdc++11";
    case IB_LG_RNG_LIBSTDCXX10:
        return "libstdc++10";
    }
    return "invalid";
}

/*
 * Compare `text` with `want` ignoring case and the separators '-', '_' and
 * ' ', so "single-stream", "Single Stream", "SINGLE_STREAM" and
 * "SingleStream" all match "singlestream".
 */
static bool name_eq(const char *text, const char *want)
{
    for (;;) {
        while (*text == '-' || *text == '_' || *text == ' ')
            text++;
        if (!*text || !*want) return !*text && !*want;
        if (tolower((unsigned char)*text) != *want) return false;
        text++;
        want++;
    }
}

int ib_lg_scenario_parse(const char *text, enum ib_lg_scenario *out)
{
    static const struct {
        const char *name;
        enum ib_lg_scenario v;
    } names[] = {
        {"singlestream", IB_LG_SCENARIO_SINGLE_STREAM},
        {"multistream", IB_LG_SCENARIO_MULTI_STREAM},
        {"server", IB_LG_SCENARIO_SERVER},
        {"offline", IB_LG_SCENARIO_OFFLINE},
    };
    if (!text || !out) return IB_EINVAL;
    for (size_t i = 0; i < IB_ARRAY_LEN(names); i++)
        if (name_eq(text, names[i].name)) {
            *out = names[i].v;
            return IB_OK;
        }
    return IB_EINVAL;
}

int ib_lg_mode_parse(const char *text, enum ib_lg_mode *out)
{
    static const struct {
        const char *name;
        enum ib_lg_mode v;
    } names[] = {
        {"submissionrun", IB_LG_MODE_SUBMISSION},      {"submission", IB_LG_MODE_SUBMISSION},
        {"accuracyonly", IB_LG_MODE_ACCURACY},         {"accuracy", IB_LG_MODE_ACCURACY},
        {"performanceonly", IB_LG_MODE_PERFORMANCE},   {"performance", IB_LG_MODE_PERFORMANCE},
        {"findpeakperformance", IB_LG_MODE_FIND_PEAK}, {"findpeak", IB_LG_MODE_FIND_PEAK},
    };
    if (!text || !out) return IB_EINVAL;
    for (size_t i = 0; i < IB_ARRAY_LEN(names); i++)
        if (name_eq(text, names[i].name)) {
            *out = names[i].v;
            return IB_OK;
        }
    return IB_EINVAL;
}

int ib_lg_rules_parse(const char *text, enum ib_lg_rules *out)
{
    if (!text || !out) return IB_EINVAL;
    if (name_eq(text, "current")) {
        *out = IB_LG_RULES_CURRENT;
        return IB_OK;
    }
    if (strcmp(text, "v1.1") == 0 || strcmp(text, "1.1") == 0 || strcmp(text, "V1.1") == 0) {
        *out = IB_LG_RULES_V1_1;
        return IB_OK;
    }
    return IB_EINVAL;
}

int ib_lg_rng_compat_parse(const char *text, enum ib_lg_rng_compat *out)
{
    if (!text || !out) return IB_EINVAL;
    if (name_eq(text, "libstdc++11")) {
        *out = IB_LG_RNG_LIBSTDCXX11;
        return IB_OK;
    }
    if (name_eq(text, "libstdc++10")) {
        *out = IB_LG_RNG_LIBSTDCXX10;
        return IB_OK;
    }
    return IB_EINVAL;
}

/* ---- validation -------------------------------------------------------------- */

/* Largest millisecond value whose doubled nanosecond count fits in int64. */
#define MAX_MS ((uint64_t)(INT64_MAX / 2000000)) /* 2x generation window in ns */

static bool pct_ok(double p)
{
    return isfinite(p) && p > 0.0 && p < 1.0;
}

int ib_lg_settings_validate(const ib_lg_settings *s, ib_err *err)
{
    if (!s) return ib_err_set(err, IB_EINVAL, "settings: NULL");
    if ((unsigned)s->scenario > IB_LG_SCENARIO_OFFLINE)
        return ib_err_set(err, IB_EINVAL, "settings: invalid scenario %d", (int)s->scenario);
    if ((unsigned)s->mode > IB_LG_MODE_FIND_PEAK)
        return ib_err_set(err, IB_EINVAL, "settings: invalid mode %d", (int)s->mode);
    if ((unsigned)s->rules > IB_LG_RULES_V1_1)
        return ib_err_set(err, IB_EINVAL, "settings: invalid rule set %d", (int)s->rules);
    if ((unsigned)s->rng_compat > IB_LG_RNG_LIBSTDCXX10)
        return ib_err_set(err, IB_EINVAL, "settings: invalid rng_compat %d", (int)s->rng_compat);
    bool v11 = s->rules == IB_LG_RULES_V1_1;
    switch (s->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        if (!isfinite(s->single_stream_expected_latency_ns) ||
            !(s->single_stream_expected_latency_ns >= 1.0))
            return ib_err_set(err, IB_EINVAL,
                              "settings: single_stream_expected_latency_ns must be >= 1 ns "
                              "(SingleStream target_latency in ms in user.conf)");
        if (!pct_ok(s->single_stream_target_latency_percentile))
            return ib_err_set(err, IB_EINVAL,
                              "settings: single_stream_target_latency_percentile %g is not in "
                              "(0, 1) (config files give it in percent)",
                              s->single_stream_target_latency_percentile);
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        if (v11) {
            if (!isfinite(s->multi_stream_target_qps) || !(s->multi_stream_target_qps > 0.0))
                return ib_err_set(err, IB_EINVAL,
                                  "settings: multi_stream_target_qps must be > 0 (v1.1 "
                                  "MultiStream target_qps)");
            if (s->multi_stream_max_async_queries < 1)
                return ib_err_set(err, IB_EINVAL,
                                  "settings: multi_stream_max_async_queries must be >= 1");
        } else if (!isfinite(s->multi_stream_expected_latency_ns) ||
                   !(s->multi_stream_expected_latency_ns >= 1.0)) {
            return ib_err_set(err, IB_EINVAL,
                              "settings: multi_stream_expected_latency_ns must be >= 1 ns "
                              "(MultiStream target_latency in ms in user.conf)");
        }
        if (!pct_ok(s->multi_stream_target_latency_percentile))
            return ib_err_set(err, IB_EINVAL,
                              "settings: multi_stream_target_latency_percentile %g is not in "
                              "(0, 1)",
                              s->multi_stream_target_latency_percentile);
        if (s->multi_stream_samples_per_query < 1 ||
            s->multi_stream_samples_per_query > 0x7fffffffu)
            return ib_err_set(err, IB_EINVAL,
                              "settings: multi_stream_samples_per_query must be in [1, 2^31-1]");
        break;
    case IB_LG_SCENARIO_SERVER:
        if (!isfinite(s->server_target_qps) || !(s->server_target_qps > 0.0))
            return ib_err_set(err, IB_EINVAL,
                              "settings: server_target_qps %g must be > 0 (Server target_qps)",
                              s->server_target_qps);
        if (!pct_ok(s->server_target_latency_percentile))
            return ib_err_set(err, IB_EINVAL,
                              "settings: server_target_latency_percentile %g is not in (0, 1)",
                              s->server_target_latency_percentile);
        if (s->server_target_latency_ns > (uint64_t)INT64_MAX)
            return ib_err_set(err, IB_EINVAL, "settings: server_target_latency_ns too large");
        break;
    case IB_LG_SCENARIO_OFFLINE:
        if (!isfinite(s->offline_expected_qps) || !(s->offline_expected_qps > 0.0))
            return ib_err_set(err, IB_EINVAL,
                              "settings: offline_expected_qps %g must be > 0 (Offline "
                              "target_qps)",
                              s->offline_expected_qps);
        break;
    }
    if (s->mode == IB_LG_MODE_FIND_PEAK) {
        if (s->scenario != IB_LG_SCENARIO_SERVER)
            return ib_err_set(err, IB_EINVAL,
                              "settings: FindPeakPerformance is only supported in the Server "
                              "scenario");
        if (s->server_find_peak_qps_decimals_of_precision < 0 ||
            s->server_find_peak_qps_decimals_of_precision > 9)
            return ib_err_set(err, IB_EINVAL,
                              "settings: server_find_peak_qps_decimals_of_precision must be in "
                              "[0, 9]");
        if (!isfinite(s->server_find_peak_qps_boundary_step_size) ||
            !(s->server_find_peak_qps_boundary_step_size > 0.0))
            return ib_err_set(err, IB_EINVAL,
                              "settings: server_find_peak_qps_boundary_step_size must be > 0");
    }
    if (s->min_duration_ms > MAX_MS || s->max_duration_ms > MAX_MS)
        return ib_err_set(err, IB_EINVAL, "settings: min/max_duration_ms above %llu ms",
                          (unsigned long long)MAX_MS);
    if (!isfinite(s->accuracy_log_probability) || s->accuracy_log_probability < 0.0 ||
        s->accuracy_log_probability > 1.0)
        return ib_err_set(err, IB_EINVAL,
                          "settings: accuracy_log_probability %g is not in [0, 1] (config files "
                          "give it in percent)",
                          s->accuracy_log_probability);
    if (s->performance_issue_unique && s->performance_issue_same)
        return ib_err_set(err, IB_EINVAL,
                          "settings: performance_issue_unique and performance_issue_same cannot "
                          "both be set");
    if (s->mode != IB_LG_MODE_ACCURACY && s->scenario != IB_LG_SCENARIO_OFFLINE &&
        s->min_query_count == 0 && s->min_duration_ms == 0 && !s->performance_issue_unique &&
        !(v11 && s->performance_issue_same))
        return ib_err_set(err, IB_EINVAL,
                          "settings: min_query_count and min_duration_ms are both 0: the test "
                          "would generate no query; set min_query_count >= 1");
    if (s->use_token_latencies && !v11 &&
        (s->server_ttft_latency > (uint64_t)INT64_MAX ||
         s->server_tpot_latency > (uint64_t)INT64_MAX))
        return ib_err_set(err, IB_EINVAL, "settings: server_ttft/tpot_latency too large");
    return IB_OK;
}

/* ---- origins -------------------------------------------------------------- */

struct ib_lg_settings_origin {
    size_t len, cap;
    char **keys;
    char **wheres;
};

int ib_lg_settings_origin_create(ib_lg_settings_origin **out)
{
    if (!out) return IB_EINVAL;
    *out = ib_calloc(1, sizeof **out);
    return *out ? IB_OK : IB_ENOMEM;
}

void ib_lg_settings_origin_destroy(ib_lg_settings_origin *o)
{
    if (!o) return;
    for (size_t i = 0; i < o->len; i++) {
        ib_free(o->keys[i]);
        ib_free(o->wheres[i]);
    }
    ib_free(o->keys);
    ib_free(o->wheres);
    ib_free(o);
}

int ib_lg_settings_origin_set(ib_lg_settings_origin *o, const char *key, const char *where)
{
    if (!o || !key || !where) return IB_EINVAL;
    char *w = ib_strdup(where);
    if (!w) return IB_ENOMEM;
    for (size_t i = 0; i < o->len; i++)
        if (strcmp(o->keys[i], key) == 0) {
            ib_free(o->wheres[i]);
            o->wheres[i] = w;
            return IB_OK;
        }
    if (o->len == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        char **k = ib_realloc(o->keys, cap * sizeof *k);
        if (!k) goto fail;
        o->keys = k;
        char **ws = ib_realloc(o->wheres, cap * sizeof *ws);
        if (!ws) goto fail;
        o->wheres = ws;
        o->cap = cap;
    }
    char *k = ib_strdup(key);
    if (!k) goto fail;
    o->keys[o->len] = k;
    o->wheres[o->len] = w;
    o->len++;
    return IB_OK;
fail:
    ib_free(w);
    return IB_ENOMEM;
}

const char *ib_lg_settings_origin_get(const ib_lg_settings_origin *o, const char *key)
{
    if (!o || !key) return NULL;
    for (size_t i = 0; i < o->len; i++)
        if (strcmp(o->keys[i], key) == 0) return o->wheres[i];
    return NULL;
}

size_t ib_lg_settings_origin_count(const ib_lg_settings_origin *o)
{
    return o ? o->len : 0;
}

int ib_lg_settings_origin_at(const ib_lg_settings_origin *o, size_t i, const char **key,
                             const char **where)
{
    if (!o || i >= o->len) return IB_ENOTFOUND;
    if (key) *key = o->keys[i];
    if (where) *where = o->wheres[i];
    return IB_OK;
}
