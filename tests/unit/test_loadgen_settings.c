/*
 * test_loadgen_settings.c - settings defaults (current and v1.1), names and
 * their parsers, pre-run validation, the settings-origin table (including
 * allocation failures), and the effective-settings derivation rules of
 * loadgen.md §2.2 / §2.9 that the golden cases do not reach (equal issue,
 * test05, token keys, rejected settings).
 */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "inferbench/base.h"
#include "inferbench/loadgen.h"
#include "loadgen/effective.h"
#include "test.h"

TEST(loadgen_settings_defaults)
{
    ib_lg_settings s;
    memset(&s, 0xa5, sizeof s);
    ib_lg_settings_defaults(&s);
    ASSERT_INT_EQ(s.scenario, IB_LG_SCENARIO_SINGLE_STREAM);
    ASSERT_INT_EQ(s.mode, IB_LG_MODE_PERFORMANCE);
    ASSERT_DBL_EQ(s.single_stream_expected_latency_ns, 1e6);
    ASSERT_DBL_EQ(s.single_stream_target_latency_percentile, 0.90);
    ASSERT_DBL_EQ(s.multi_stream_expected_latency_ns, 8e6);
    ASSERT_DBL_EQ(s.multi_stream_target_latency_percentile, 0.99);
    ASSERT_UINT_EQ(s.multi_stream_samples_per_query, 8);
    ASSERT_DBL_EQ(s.server_target_qps, 1.0);
    ASSERT_UINT_EQ(s.server_target_latency_ns, 100000000);
    ASSERT_DBL_EQ(s.server_target_latency_percentile, 0.99);
    ASSERT_INT_EQ(s.server_find_peak_qps_decimals_of_precision, 1);
    ASSERT_DBL_EQ(s.server_find_peak_qps_boundary_step_size, 1.0);
    ASSERT_DBL_EQ(s.offline_expected_qps, 1.0);
    ASSERT_UINT_EQ(s.min_duration_ms, 10000);
    ASSERT_UINT_EQ(s.min_query_count, 100);
    ASSERT_UINT_EQ(s.max_query_count, 0);
    ASSERT_UINT_EQ(s.qsl_rng_seed, 0);
    ASSERT_DBL_EQ(s.accuracy_log_probability, 0.0);
    ASSERT_UINT_EQ(s.server_ttft_latency, 100000000);
    ASSERT_UINT_EQ(s.server_tpot_latency, 100000000);
    ASSERT_FALSE(s.test05 || s.performance_issue_same || s.sample_concatenate_permutation);
    ASSERT_INT_EQ(s.rules, IB_LG_RULES_CURRENT);
    ASSERT_INT_EQ(s.rng_compat, IB_LG_RNG_LIBSTDCXX11);
    ASSERT_OK(ib_lg_settings_validate(&s, NULL));

    ib_lg_settings_defaults_rules(&s, IB_LG_RULES_V1_1);
    ASSERT_INT_EQ(s.rules, IB_LG_RULES_V1_1);
    ASSERT_UINT_EQ(s.multi_stream_samples_per_query, 4);
    ASSERT_DBL_EQ(s.multi_stream_target_latency_percentile, 0.90);
    ASSERT_DBL_EQ(s.multi_stream_target_qps, 10.0);
    ASSERT_UINT_EQ(s.multi_stream_max_async_queries, 1);
    ASSERT_UINT_EQ(s.multi_stream_target_latency_ns, 100000000);
    ASSERT_OK(ib_lg_settings_validate(&s, NULL));
}

TEST(loadgen_settings_names_and_parse)
{
    for (int i = 0; i <= IB_LG_SCENARIO_OFFLINE; i++) {
        enum ib_lg_scenario sc;
        ASSERT_OK(ib_lg_scenario_parse(ib_lg_scenario_name((enum ib_lg_scenario)i), &sc));
        ASSERT_INT_EQ(sc, i);
    }
    for (int i = 0; i <= IB_LG_MODE_FIND_PEAK; i++) {
        enum ib_lg_mode m;
        ASSERT_OK(ib_lg_mode_parse(ib_lg_mode_name((enum ib_lg_mode)i), &m));
        ASSERT_INT_EQ(m, i);
    }
    ASSERT_STR_EQ(ib_lg_scenario_name(IB_LG_SCENARIO_MULTI_STREAM), "MultiStream");
    ASSERT_STR_EQ(ib_lg_mode_name(IB_LG_MODE_FIND_PEAK), "FindPeakPerformance");
    ASSERT_STR_EQ(ib_lg_rules_name(IB_LG_RULES_V1_1), "v1.1");
    ASSERT_STR_EQ(ib_lg_rng_compat_name(IB_LG_RNG_LIBSTDCXX10), "libstdc++10");

    const struct {
        const char *text;
        int want;
    } scen[] = {{"SingleStream", 0},    {"singlestream", 0}, {"single-stream", 0},
                {"Single Stream", 0},   {"multi_stream", 1}, {"server", 2},
                {"OFFLINE", 3},         {"offlin", -1},      {"", -1},
                {"single-stream-x", -1}};
    for (size_t i = 0; i < sizeof scen / sizeof scen[0]; i++) {
        enum ib_lg_scenario sc;
        int rc = ib_lg_scenario_parse(scen[i].text, &sc);
        if (scen[i].want < 0) {
            ASSERT_STATUS(rc, IB_EINVAL);
        } else {
            ASSERT_OK(rc);
            ASSERT_INT_EQ(sc, scen[i].want);
        }
    }
    const struct {
        const char *text;
        int want;
    } modes[] = {{"PerformanceOnly", 2},
                 {"performance", 2},
                 {"AccuracyOnly", 1},
                 {"accuracy", 1},
                 {"SubmissionRun", 0},
                 {"submission", 0},
                 {"FindPeakPerformance", 3},
                 {"find-peak", 3},
                 {"find_peak", 3},
                 {"perf", -1},
                 {"accurate", -1}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        enum ib_lg_mode m;
        int rc = ib_lg_mode_parse(modes[i].text, &m);
        if (modes[i].want < 0) {
            ASSERT_STATUS(rc, IB_EINVAL);
        } else {
            ASSERT_OK(rc);
            ASSERT_INT_EQ(m, modes[i].want);
        }
    }
    enum ib_lg_rules r;
    ASSERT_OK(ib_lg_rules_parse("current", &r));
    ASSERT_INT_EQ(r, IB_LG_RULES_CURRENT);
    ASSERT_OK(ib_lg_rules_parse("v1.1", &r));
    ASSERT_INT_EQ(r, IB_LG_RULES_V1_1);
    ASSERT_STATUS(ib_lg_rules_parse("v1.0", &r), IB_EINVAL);
    enum ib_lg_rng_compat c;
    ASSERT_OK(ib_lg_rng_compat_parse("libstdc++10", &c));
    ASSERT_INT_EQ(c, IB_LG_RNG_LIBSTDCXX10);
    ASSERT_OK(ib_lg_rng_compat_parse("libstdc++11", &c));
    ASSERT_INT_EQ(c, IB_LG_RNG_LIBSTDCXX11);
    ASSERT_STATUS(ib_lg_rng_compat_parse("libc++", &c), IB_EINVAL);
    ASSERT_STATUS(ib_lg_scenario_parse(NULL, NULL), IB_EINVAL);
}

TEST(loadgen_settings_validate_rejects)
{
    ib_lg_settings s;
    ib_err err;
#define EXPECT_INVALID(mutate, text)                                                               \
    do {                                                                                           \
        ib_lg_settings_defaults(&s);                                                               \
        mutate;                                                                                    \
        ASSERT_STATUS(ib_lg_settings_validate(&s, &err), IB_EINVAL);                               \
        ASSERT_STR_CONTAINS(err.msg, text);                                                        \
    } while (0)
    EXPECT_INVALID(s.scenario = (enum ib_lg_scenario)7, "invalid scenario");
    EXPECT_INVALID(s.single_stream_target_latency_percentile = 1.0, "percentile");
    EXPECT_INVALID(s.single_stream_expected_latency_ns = 0, "single_stream_expected_latency_ns");
    EXPECT_INVALID((s.scenario = IB_LG_SCENARIO_SERVER, s.server_target_qps = -1),
                   "server_target_qps");
    EXPECT_INVALID((s.scenario = IB_LG_SCENARIO_SERVER, s.server_target_latency_percentile = 0),
                   "percentile");
    EXPECT_INVALID((s.scenario = IB_LG_SCENARIO_OFFLINE, s.offline_expected_qps = 0),
                   "offline_expected_qps");
    EXPECT_INVALID((s.scenario = IB_LG_SCENARIO_MULTI_STREAM, s.multi_stream_samples_per_query = 0),
                   "samples_per_query");
    EXPECT_INVALID(s.accuracy_log_probability = 1.5, "accuracy_log_probability");
    EXPECT_INVALID((s.performance_issue_same = true, s.performance_issue_unique = true),
                   "cannot both");
    EXPECT_INVALID(s.mode = IB_LG_MODE_FIND_PEAK, "only supported in the Server");
    EXPECT_INVALID((s.min_query_count = 0, s.min_duration_ms = 0), "no query");
    EXPECT_INVALID(s.min_duration_ms = UINT64_MAX, "min/max_duration_ms");
    EXPECT_INVALID((s.rules = IB_LG_RULES_V1_1, s.scenario = IB_LG_SCENARIO_MULTI_STREAM,
                    s.multi_stream_target_qps = 0),
                   "multi_stream_target_qps");
#undef EXPECT_INVALID
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.mode = IB_LG_MODE_FIND_PEAK;
    ASSERT_OK(ib_lg_settings_validate(&s, &err));
    ASSERT_STATUS(ib_lg_settings_validate(NULL, &err), IB_EINVAL);
}

TEST(loadgen_settings_origin_table)
{
    ib_lg_settings_origin *o;
    ASSERT_OK(ib_lg_settings_origin_create(&o));
    ASSERT_NULL(ib_lg_settings_origin_get(o, "server_target_qps"));
    for (int i = 0; i < 40; i++) {
        char k[32], w[32];
        snprintf(k, sizeof k, "key%d", i);
        snprintf(w, sizeof w, "user.conf:%d", i);
        ASSERT_OK(ib_lg_settings_origin_set(o, k, w));
    }
    ASSERT_OK(ib_lg_settings_origin_set(o, "key3", "audit.config:1"));
    ASSERT_UINT_EQ(ib_lg_settings_origin_count(o), 40);
    ASSERT_STR_EQ(ib_lg_settings_origin_get(o, "key3"), "audit.config:1");
    ASSERT_STR_EQ(ib_lg_settings_origin_get(o, "key39"), "user.conf:39");
    const char *k, *w;
    ASSERT_OK(ib_lg_settings_origin_at(o, 0, &k, &w));
    ASSERT_STR_EQ(k, "key0");
    ASSERT_STATUS(ib_lg_settings_origin_at(o, 40, &k, &w), IB_ENOTFOUND);
    ASSERT_STATUS(ib_lg_settings_origin_set(o, NULL, "x"), IB_EINVAL);
    ib_lg_settings_origin_destroy(o);
    ib_lg_settings_origin_destroy(NULL);
}

static int g_fail_in = -1;
static void *failing_alloc(void *user, void *ptr, size_t old, size_t n)
{
    (void)user;
    (void)old;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    if (g_fail_in == 0) return NULL;
    if (g_fail_in > 0) g_fail_in--;
    return realloc(ptr, n);
}

/* Fail allocation 1, 2, ... until the calls succeed: clean errors, no leak. */
TEST(loadgen_settings_origin_oom_loop)
{
    for (int n = 0; n < 64; n++) {
        ib_alloc_set(failing_alloc, NULL);
        g_fail_in = n;
        ib_lg_settings_origin *o = NULL;
        int rc = ib_lg_settings_origin_create(&o);
        for (int i = 0; rc == IB_OK && i < 20; i++) {
            char k[16];
            snprintf(k, sizeof k, "k%d", i);
            rc = ib_lg_settings_origin_set(o, k, "user.conf:1");
        }
        g_fail_in = -1;
        ib_alloc_set(NULL, NULL);
        if (rc == IB_OK) {
            ASSERT_UINT_EQ(ib_lg_settings_origin_count(o), 20);
            ib_lg_settings_origin_destroy(o);
            return;
        }
        ASSERT_STATUS(rc, IB_ENOMEM);
        ib_lg_settings_origin_destroy(o);
    }
    ib_test_fail(__FILE__, __LINE__, "origin table never succeeded");
}

static void derive_ok(const ib_lg_settings *s, uint64_t total, uint64_t perf, ib_lg_effective *e)
{
    ib_err err;
    ASSERT_OK_ERR(ib_lg_effective_derive(s, total, perf, e, &err), &err);
}

TEST(loadgen_effective_offline_and_equal_issue)
{
    ib_lg_settings s;
    ib_lg_effective e;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_OFFLINE;
    s.offline_expected_qps = 1000;
    s.min_duration_ms = 2000;
    derive_ok(&s, 5000, 1000, &e);
    ASSERT_UINT_EQ(e.samples_per_query, 2200); /* 1.1 * 2 s * 1000 */
    ASSERT_UINT_EQ(e.min_query_count, 1);
    ASSERT_INT_EQ(e.target_duration_ms, 0);
    ASSERT_UINT_EQ(e.min_sample_count, 2200);
    s.min_query_count = 5000;
    derive_ok(&s, 5000, 1000, &e);
    ASSERT_UINT_EQ(e.samples_per_query, 5000);
    s.performance_issue_unique = true;
    s.performance_sample_count_override = 777;
    derive_ok(&s, 5000, 1000, &e);
    ASSERT_UINT_EQ(e.samples_per_query, 777);

    /* Equal-issue SingleStream: max(min_q, 2 * s * qps), then past the next
     * multiple of the QSL-reported count, even when already a multiple. */
    ib_lg_settings_defaults(&s);
    s.sample_concatenate_permutation = true;
    s.min_duration_ms = 1000;
    s.single_stream_expected_latency_ns = 2e6; /* 500 qps -> 1000 queries */
    s.min_query_count = 100;
    derive_ok(&s, 3000, 250, &e);
    ASSERT_UINT_EQ(e.min_query_count, 1250);
    s.performance_sample_count_override = 999; /* the QSL count decides */
    derive_ok(&s, 3000, 250, &e);
    ASSERT_UINT_EQ(e.min_query_count, 1250);
    s.min_query_count = 3001;
    derive_ok(&s, 3000, 300, &e);
    ASSERT_UINT_EQ(e.min_query_count, 3300);
    ASSERT_TRUE(e.sample_concatenate_permutation);
    s.rules = IB_LG_RULES_V1_1; /* no equal issue in r1.1 */
    derive_ok(&s, 3000, 300, &e);
    ASSERT_UINT_EQ(e.min_query_count, 3001);
    ASSERT_FALSE(e.sample_concatenate_permutation);
}

TEST(loadgen_effective_test05_tokens_and_rejects)
{
    ib_lg_settings s;
    ib_lg_effective e;
    ib_err err;
    ib_lg_settings_defaults(&s);
    s.mode = IB_LG_MODE_ACCURACY;
    s.test05 = true;
    s.qsl_rng_seed = 1;
    s.test05_qsl_rng_seed = 11;
    s.test05_sample_index_rng_seed = 12;
    s.test05_schedule_rng_seed = 13;
    derive_ok(&s, 100, 10, &e);
    ASSERT_TRUE(e.test05_applied);
    ASSERT_INT_EQ(e.mode, IB_LG_MODE_PERFORMANCE);
    ASSERT_UINT_EQ(e.qsl_rng_seed, 11);
    ASSERT_UINT_EQ(e.requested.schedule_rng_seed, 13);

    /* Token latencies add requested keys and change the summary lines. */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.use_token_latencies = true;
    s.server_ttft_latency = 2000000000;
    derive_ok(&s, 100, 10, &e);
    ib_lg_kv kv[IB_LG_MAX_KVS];
    size_t n = ib_lg_requested_kvs(&e, kv, IB_LG_MAX_KVS);
    ASSERT_UINT_EQ(n, 30);
    ASSERT_STR_EQ(kv[27].key, "requested_use_token_latencies");
    ASSERT_STR_EQ(kv[28].key, "requested_server_ttft_latency");
    ASSERT_UINT_EQ(kv[28].u, 2000000000);
    /* cap smaller than the list: count still returned, nothing overrun */
    ib_lg_kv few[3];
    ASSERT_UINT_EQ(ib_lg_requested_kvs(&e, few, 3), 30);
    ASSERT_STR_EQ(few[2].key, "requested_server_target_qps");
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ASSERT_OK(ib_lg_test_parameters_text(&e, &sb));
    ASSERT_STR_CONTAINS(sb.data, "ttft_latency (ns): 2000000000\ntpot_latency (ns): 100000000\n");
    ib_strbuf_deinit(&sb);

    ib_lg_settings_defaults(&s);
    s.performance_issue_same = true;
    s.performance_issue_same_index = 10;
    ASSERT_STATUS(ib_lg_effective_derive(&s, 100, 10, &e, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "performance_issue_same_index");
    ib_lg_settings_defaults(&s);
    ASSERT_STATUS(ib_lg_effective_derive(&s, 100, 0, &e, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "performance sample count is 0");
    ASSERT_STATUS(ib_lg_effective_derive(&s, 0, 10, &e, &err), IB_EINVAL);
    s.scenario = IB_LG_SCENARIO_OFFLINE;
    s.offline_expected_qps = 1e300;
    ASSERT_STATUS(ib_lg_effective_derive(&s, 100, 10, &e, &err), IB_EINVAL);
}

TEST(loadgen_effective_double_format_and_kv_text)
{
    char b[64];
    const struct {
        double v;
        const char *want;
    } cases[] = {{2500, "2500"},
                 {0.99, "0.99"},
                 {1, "1"},
                 {2e6, "2e+06"},
                 {5952380.95, "5.95238e+06"},
                 {10065.7, "10065.7"},
                 {983.434291, "983.434"},
                 {0.0001, "0.0001"},
                 {1e-5, "1e-05"},
                 {123456, "123456"},
                 {1234567, "1.23457e+06"},
                 {-0.5, "-0.5"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ib_lg_format_double(cases[i].v, b, sizeof b);
        ASSERT_STR_EQ(b, cases[i].want);
    }
    ib_lg_kv kv = {"k", IB_LG_KV_UINT, NULL, 0, 16159082839903944936ull, 0, false};
    ib_lg_kv_format_value(&kv, b, sizeof b);
    ASSERT_STR_EQ(b, "16159082839903944936");
    kv.type = IB_LG_KV_BOOL;
    ib_lg_kv_format_value(&kv, b, sizeof b);
    ASSERT_STR_EQ(b, "false");
    kv.type = IB_LG_KV_INT;
    kv.i = -5;
    ib_lg_kv_format_value(&kv, b, sizeof b);
    ASSERT_STR_EQ(b, "-5");
}
