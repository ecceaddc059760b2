/*
 * config_keys.c - what TestSettings::FromConfig reads (loadgen.md §1.7): the
 * lookups of the current LoadGen and of r1.1 in their official order, with
 * the fixed scenario some of them use, their unit conversions and the
 * conf-type rule (seeds and accuracy_log_probability only from the rules
 * file under the current rules); the strict classification of value tokens;
 * and the assignment of a looked-up value to its ib_lg_settings field.
 */
#include "loadgen/config_keys.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/textdist.h"

static const lg_cfg_lookup k_current[] = {
    {"mode", NULL, K_MODE, 1, 1, R_NONE, 0, "mode"},
    {"qsl_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "qsl_rng_seed"},
    {"sample_index_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "sample_index_rng_seed"},
    {"schedule_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "schedule_rng_seed"},
    {"accuracy_log_probability", NULL, K_DBL, 1, 0.01, R_PROB, F_RULES_ONLY,
     "accuracy_log_probability"},
    {"test05", NULL, K_BOOL1, 1, 1, R_NONE, F_RULES_ONLY, "test05"},
    {"test05_qsl_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "test05_qsl_rng_seed"},
    {"test05_sample_index_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY,
     "test05_sample_index_rng_seed"},
    {"test05_schedule_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY,
     "test05_schedule_rng_seed"},
    {"use_token_latencies", NULL, K_BOOL1, 1, 1, R_NONE, 0, "use_token_latencies"},
    {"ttft_latency", "Server", K_U64, 1000000, 1, R_NONE, F_TOKEN_GATE, "server_ttft_latency"},
    {"tpot_latency", "Server", K_U64, 1000000, 1, R_NONE, F_TOKEN_GATE, "server_tpot_latency"},
    {"infer_token_latencies", NULL, K_BOOL1, 1, 1, R_NONE, 0, "infer_token_latencies"},
    {"token_latency_scaling_factor", NULL, K_U64, 1, 1, R_NONE, F_INFER_GATE,
     "token_latency_scaling_factor"},
    {"target_latency_percentile", "SingleStream", K_DBL, 1, 0.01, R_PCT, 0,
     "single_stream_target_latency_percentile"},
    {"target_latency_percentile", "MultiStream", K_DBL, 1, 0.01, R_PCT, 0,
     "multi_stream_target_latency_percentile"},
    {"samples_per_query", "MultiStream", K_U64, 1, 1, R_NONE, 0, "multi_stream_samples_per_query"},
    {"target_latency_percentile", "Server", K_DBL, 1, 0.01, R_PCT, 0,
     "server_target_latency_percentile"},
    {"target_latency", "Server", K_U64, 1000000, 1, R_NONE, 0, "server_target_latency_ns"},
    {"performance_issue_unique", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_unique"},
    {"performance_issue_same", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_same"},
    {"performance_issue_same_index", NULL, K_U64, 1, 1, R_NONE, 0, "performance_issue_same_index"},
    {"sample_concatenate_permutation", NULL, K_BOOL1, 1, 1, R_NONE, 0,
     "sample_concatenate_permutation"},
    {"coalesce_queries", "Server", K_BOOLNZ, 1, 1, R_NONE, 0, "server_coalesce_queries"},
    {"max_async_queries", "Server", K_I32, 1, 1, R_NONE, 0, "server_max_async_queries"},
    {"min_duration", NULL, K_U64, 1, 1, R_NONE, 0, "min_duration_ms"},
    {"max_duration", NULL, K_U64, 1, 1, R_NONE, 0, "max_duration_ms"},
    {"min_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "min_query_count"},
    {"max_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "max_query_count"},
    {"performance_sample_count_override", NULL, K_U64, 1, 1, R_NONE, 0,
     "performance_sample_count_override"},
    {"accuracy_sample_count_override", NULL, K_U64, 1, 1, R_NONE, 0,
     "accuracy_sample_count_override"},
    {"target_latency", "SingleStream", K_DBL, 1, 1000000.0, R_POS, 0,
     "single_stream_expected_latency_ns"},
    {"target_latency", "MultiStream", K_DBL, 1, 1000000.0, R_POS, 0,
     "multi_stream_expected_latency_ns"},
    {"target_qps", "Server", K_DBL, 1, 1, R_POS, 0, "server_target_qps"},
    {"target_qps", "Offline", K_DBL, 1, 1, R_POS, 0, "offline_expected_qps"},
    {"print_timestamps", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "print_timestamps"},
    {"accuracy_log_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "accuracy_log_rng_seed"},
    {"accuracy_log_sampling_target", NULL, K_U64, 1, 1, R_NONE, 0, "accuracy_log_sampling_target"},
};

/* r1.1 FromConfig (every key honoured from every file), in its order. */
static const lg_cfg_lookup k_v11[] = {
    {"mode", NULL, K_MODE, 1, 1, R_NONE, 0, "mode"},
    {"min_duration", NULL, K_U64, 1, 1, R_NONE, 0, "min_duration_ms"},
    {"max_duration", NULL, K_U64, 1, 1, R_NONE, 0, "max_duration_ms"},
    {"min_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "min_query_count"},
    {"max_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "max_query_count"},
    {"qsl_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "qsl_rng_seed"},
    {"sample_index_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "sample_index_rng_seed"},
    {"schedule_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "schedule_rng_seed"},
    {"accuracy_log_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "accuracy_log_rng_seed"},
    {"accuracy_log_probability", NULL, K_DBL, 1, 0.01, R_PROB, 0, "accuracy_log_probability"},
    {"accuracy_log_sampling_target", NULL, K_U64, 1, 1, R_NONE, 0, "accuracy_log_sampling_target"},
    {"print_timestamps", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "print_timestamps"},
    {"performance_issue_unique", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_unique"},
    {"performance_issue_same", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_same"},
    {"performance_issue_same_index", NULL, K_U64, 1, 1, R_NONE, 0, "performance_issue_same_index"},
    {"performance_sample_count_override", NULL, K_U64, 1, 1, R_NONE, 0,
     "performance_sample_count_override"},
    {"target_latency_percentile", "SingleStream", K_DBL, 1, 0.01, R_PCT, 0,
     "single_stream_target_latency_percentile"},
    {"target_latency", "SingleStream", K_U64, 1000000, 1, R_NONE, 0,
     "single_stream_expected_latency_ns"},
    {"target_latency_percentile", "MultiStream", K_DBL, 1, 0.01, R_PCT, 0,
     "multi_stream_target_latency_percentile"},
    {"target_qps", "MultiStream", K_DBL, 1, 1, R_POS, 0, "multi_stream_target_qps"},
    {"samples_per_query", "MultiStream", K_I32, 1, 1, R_NONE, 0, "multi_stream_samples_per_query"},
    {"max_async_queries", "MultiStream", K_I32, 1, 1, R_NONE, 0, "multi_stream_max_async_queries"},
    {"target_latency_percentile", "Server", K_DBL, 1, 0.01, R_PCT, 0,
     "server_target_latency_percentile"},
    {"target_latency", "Server", K_U64, 1000000, 1, R_NONE, 0, "server_target_latency_ns"},
    {"target_qps", "Server", K_DBL, 1, 1, R_POS, 0, "server_target_qps"},
    {"coalesce_queries", "Server", K_BOOLNZ, 1, 1, R_NONE, 0, "server_coalesce_queries"},
    {"max_async_queries", "Server", K_I32, 1, 1, R_NONE, 0, "server_max_async_queries"},
    {"target_qps", "Offline", K_DBL, 1, 1, R_POS, 0, "offline_expected_qps"},
};

/* Setting names the official files contain but no lookup reads. */
static const char *const k_unread[] = {"target_duration"};

static const char *const k_scenarios[] = {"SingleStream", "MultiStream", "Server", "Offline"};

lg_cfg_table lg_cfg_table_for(enum ib_lg_rules rules)
{
    lg_cfg_table t;
    if (rules == IB_LG_RULES_V1_1) {
        t.lk = k_v11;
        t.n = IB_ARRAY_LEN(k_v11);
    } else {
        t.lk = k_current;
        t.n = IB_ARRAY_LEN(k_current);
    }
    return t;
}

/*
 * Classify a value token. An integer is [+](0 | [1-9][0-9]* | 0x[hex]+),
 * optionally followed by ".0..." (read identically by strtoull). Leading
 * zeros (octal for strtoull), exponents and fractions are reported through
 * int_why because strtoull would read them differently from strtod.
 */
void lg_cfg_parse_value(const char *t, lg_cfg_value *v)
{
    memset(v, 0, sizeof *v);
    const char *p = t;
    if (*p == '+') p++;
    if (*p == '-') {
        v->int_why = "a negative value (strtoull would wrap it around)";
    } else if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        const char *h = p + 2;
        uint64_t u = 0;
        bool over = false, any = false;
        for (; *h; h++) {
            int dv;
            if (*h >= '0' && *h <= '9')
                dv = *h - '0';
            else if (*h >= 'a' && *h <= 'f')
                dv = *h - 'a' + 10;
            else if (*h >= 'A' && *h <= 'F')
                dv = *h - 'A' + 10;
            else
                break;
            any = true;
            if (u > (UINT64_MAX >> 4)) over = true;
            u = (u << 4) | (uint64_t)dv;
        }
        if (any && !*h && !over) {
            v->int_ok = true;
            v->u = u;
        } else {
            v->int_why = over ? "an integer above 2^64-1" : "not an integer";
        }
    } else if (*p >= '0' && *p <= '9') {
        const char *q = p;
        uint64_t u = 0;
        bool over = false;
        for (; *q >= '0' && *q <= '9'; q++) {
            uint64_t dv = (uint64_t)(*q - '0');
            if (u > (UINT64_MAX - dv) / 10) over = true;
            u = u * 10 + dv;
        }
        bool zero_frac = false;
        if (*q == '.') {
            const char *f = q + 1;
            while (*f == '0')
                f++;
            if (!*f) /* "1." and "1.00": strtoull reads 1 too */
                zero_frac = true;
        }
        if (q - p > 1 && p[0] == '0')
            v->int_why = "an octal-looking number with a leading 0 (strtoull reads 010 as 8)";
        else if (over)
            v->int_why = "an integer above 2^64-1";
        else if (!*q || zero_frac) {
            v->int_ok = true;
            v->u = u;
        } else if (strpbrk(q, "eE"))
            v->int_why = "a number with an exponent where an integer is read (strtoull reads "
                         "1e3 as 1)";
        else if (*q == '.')
            v->int_why = "a fraction where an integer is read (strtoull drops it)";
        else
            v->int_why = "not a number";
    } else {
        v->int_why = "not a number";
    }
    errno = 0;
    char *end = NULL;
    double d = strtod(t, &end);
    if (end && end != t && !*end && isfinite(d)) {
        v->dbl_ok = true;
        v->d = d;
    }
}

bool lg_cfg_known_scenario(const char *s, enum ib_lg_rules rules)
{
    if (strcmp(s, "*") == 0) return true;
    for (size_t i = 0; i < IB_ARRAY_LEN(k_scenarios); i++)
        if (strcmp(s, k_scenarios[i]) == 0) return true;
    /* r1.1 had an unofficial MultiStreamFree scenario; its keys are legal. */
    return rules == IB_LG_RULES_V1_1 && strcmp(s, "MultiStreamFree") == 0;
}

bool lg_cfg_known_name(const char *name, lg_cfg_table t)
{
    for (size_t i = 0; i < t.n; i++)
        if (strcmp(t.lk[i].name, name) == 0) return true;
    for (size_t i = 0; i < IB_ARRAY_LEN(k_unread); i++)
        if (strcmp(k_unread[i], name) == 0) return true;
    return false;
}

const char *lg_cfg_closest_name(const char *name, lg_cfg_table t)
{
    const char *best = NULL;
    size_t bd = 4;
    for (size_t i = 0; i < t.n; i++) {
        size_t d = ib_edit_distance(name, t.lk[i].name);
        if (d < bd) {
            bd = d;
            best = t.lk[i].name;
        }
    }
    return best;
}

/* Could lookup `l` ever read an entry with scenario `scen`? */
bool lg_cfg_reads_scenario(const lg_cfg_lookup *l, const char *scen)
{
    if (strcmp(scen, "*") == 0) return true;
    if (l->scen) return strcmp(l->scen, scen) == 0;
    return true; /* the run's scenario: any scenario can be the run's */
}

bool lg_cfg_field_set(ib_lg_settings *s, const char *field, const lg_cfg_lookup *l,
                      const lg_cfg_value *v)
{
    uint64_t u = v->int_ok ? v->u * l->umult : 0;
    double d = v->d * l->dmult;
#define U64F(f)                                                                                    \
    if (strcmp(field, #f) == 0) {                                                                  \
        s->f = u;                                                                                  \
        return true;                                                                               \
    }
#define DBLF(f)                                                                                    \
    if (strcmp(field, #f) == 0) {                                                                  \
        s->f = (l->kind == K_DBL) ? d : (double)u;                                                 \
        return true;                                                                               \
    }
#define BOOLF(f)                                                                                   \
    if (strcmp(field, #f) == 0) {                                                                  \
        s->f = (l->kind == K_BOOL1) ? (v->u == 1) : (v->u != 0);                                   \
        return true;                                                                               \
    }
    if (strcmp(field, "mode") == 0) {
        s->mode = (enum ib_lg_mode)v->u;
        return true;
    }
    U64F(qsl_rng_seed)
    U64F(sample_index_rng_seed)
    U64F(schedule_rng_seed)
    U64F(test05_qsl_rng_seed)
    U64F(test05_sample_index_rng_seed)
    U64F(test05_schedule_rng_seed)
    U64F(server_ttft_latency)
    U64F(server_tpot_latency)
    U64F(token_latency_scaling_factor)
    U64F(multi_stream_samples_per_query)
    U64F(server_target_latency_ns)
    U64F(performance_issue_same_index)
    U64F(server_max_async_queries)
    U64F(multi_stream_max_async_queries)
    U64F(min_duration_ms)
    U64F(max_duration_ms)
    U64F(min_query_count)
    U64F(max_query_count)
    U64F(performance_sample_count_override)
    U64F(accuracy_sample_count_override)
    U64F(accuracy_log_rng_seed)
    U64F(accuracy_log_sampling_target)
    DBLF(accuracy_log_probability)
    DBLF(single_stream_target_latency_percentile)
    DBLF(multi_stream_target_latency_percentile)
    DBLF(server_target_latency_percentile)
    DBLF(single_stream_expected_latency_ns)
    DBLF(multi_stream_expected_latency_ns)
    DBLF(server_target_qps)
    DBLF(offline_expected_qps)
    DBLF(multi_stream_target_qps)
    BOOLF(test05)
    BOOLF(use_token_latencies)
    BOOLF(infer_token_latencies)
    BOOLF(performance_issue_unique)
    BOOLF(performance_issue_same)
    BOOLF(sample_concatenate_permutation)
    BOOLF(server_coalesce_queries)
    BOOLF(print_timestamps)
#undef U64F
#undef DBLF
#undef BOOLF
    return false;
}

/* Embedded rules files (tools/embed-file.sh, src/loadgen/embed/). */
extern const unsigned char ib_embed_loadgen_mlperf_v6_1_conf[];
extern const size_t ib_embed_loadgen_mlperf_v6_1_conf_len;
extern const unsigned char ib_embed_loadgen_mlperf_v1_1_conf[];
extern const size_t ib_embed_loadgen_mlperf_v1_1_conf_len;

const char *ib_lg_mlperf_conf_embedded(enum ib_lg_rules rules, size_t *len)
{
    if (rules == IB_LG_RULES_V1_1) {
        if (len) *len = ib_embed_loadgen_mlperf_v1_1_conf_len;
        return (const char *)ib_embed_loadgen_mlperf_v1_1_conf;
    }
    if (len) *len = ib_embed_loadgen_mlperf_v6_1_conf_len;
    return (const char *)ib_embed_loadgen_mlperf_v6_1_conf;
}
