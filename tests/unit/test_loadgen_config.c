/*
 * test_loadgen_config.c - the config parser (loadgen.md §1.7): lookup order
 * and per-file precedence, units, per-conf-type key rules (current and
 * v1.1), the embedded rules files, origins and warnings, and every quirk the
 * official parser ignores or misreads, each rejected with origin:line and
 * nothing applied. Also truncated, huge and binary inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/base.h"
#include "inferbench/loadgen.h"
#include "test.h"

static int apply(ib_lg_settings *s, const char *text, const char *model, const char *scen,
                 enum ib_lg_conf_type type, char *warn, size_t wsize, ib_err *err)
{
    return ib_lg_settings_apply_conf(s, text, strlen(text), "user.conf", model, scen, type, NULL,
                                     warn, wsize, err);
}

static void apply_ok(ib_lg_settings *s, const char *text, const char *model, const char *scen,
                     enum ib_lg_conf_type type)
{
    ib_err err;
    ASSERT_OK_ERR(apply(s, text, model, scen, type, NULL, 0, &err), &err);
}

/* The rejected text leaves the settings untouched and names line `line`. */
static void expect_reject(const char *text, int line, const char *needle)
{
    ib_lg_settings s, before;
    ib_lg_settings_defaults(&s);
    memcpy(&before, &s, sizeof s);
    ib_err err;
    int rc = apply(&s, text, "resnet50", "Server", IB_LG_CONF_USER, NULL, 0, &err);
    if (rc != IB_EFORMAT) ib_test_fail(__FILE__, __LINE__, "accepted: \"%s\" (rc %d)", text, rc);
    char where[32];
    snprintf(where, sizeof where, "user.conf:%d: ", line);
    ASSERT_STR_CONTAINS(err.msg, where);
    ASSERT_STR_CONTAINS(err.msg, needle);
    ASSERT_MEM_EQ(&s, &before, sizeof s);
}

TEST(loadgen_config_lookup_order_and_precedence)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    /* Scenario wildcard beats model wildcard; the user file wins over the
     * rules file whenever it matches at all (quirk table, §1.7). */
    apply_ok(&s, "*.Offline.target_qps = 1.0\n*.Server.target_qps = 1.0\n", "resnet50", "Server",
             IB_LG_CONF_RULES);
    apply_ok(&s, "*.Server.target_qps = 1234\nresnet50.*.target_qps = 99\n", "resnet50", "Server",
             IB_LG_CONF_USER);
    ASSERT_DBL_EQ(s.server_target_qps, 1234);
    ASSERT_DBL_EQ(s.offline_expected_qps, 99);
    /* exact beats everything, *.* is the last resort */
    ib_lg_settings_defaults(&s);
    apply_ok(&s,
             "*.*.min_query_count = 1\nresnet50.*.min_query_count = 2\n"
             "*.Server.min_query_count = 3\nresnet50.Server.min_query_count = 4\n",
             "resnet50", "Server", IB_LG_CONF_USER);
    ASSERT_UINT_EQ(s.min_query_count, 4);
    apply_ok(&s, "*.*.min_query_count = 1\nresnet50.*.min_query_count = 2\n", "resnet50", "Server",
             IB_LG_CONF_USER);
    ASSERT_UINT_EQ(s.min_query_count, 2);
    /* other models and scenarios do not match: bert keys do not apply to bert-99 */
    ib_lg_settings_defaults(&s);
    apply_ok(&s, "bert.*.min_query_count = 7\nbert-99.Offline.min_query_count = 8\n", "bert-99",
             "Server", IB_LG_CONF_USER);
    ASSERT_UINT_EQ(s.min_query_count, 100);
    /* a model name with dots (bert-99.9) */
    apply_ok(&s, "bert-99.9.Server.min_query_count = 9\n", "bert-99.9", "Server", IB_LG_CONF_USER);
    ASSERT_UINT_EQ(s.min_query_count, 9);
    /* fixed-scenario keys apply whatever the run's scenario (as upstream) */
    ib_lg_settings_defaults(&s);
    apply_ok(&s, "*.Server.target_latency = 15\n", "resnet50", "Offline", IB_LG_CONF_USER);
    ASSERT_UINT_EQ(s.server_target_latency_ns, 15000000);
}

TEST(loadgen_config_units_and_values)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    apply_ok(&s,
             "# comment\n"
             "   \n"
             "#lone_word\n"
             "#*.*.min_query_count = 7\n"
             "# a comment # with more hashes\n"
             "*.SingleStream.target_latency = 0.5\r\n"
             "*.SingleStream.target_latency_percentile = 90\n"
             "*.MultiStream.target_latency = 2\n"
             "*.MultiStream.samples_per_query = 6\n"
             "*.Server.target_latency = 0x10\n"
             "*.Server.target_latency_percentile = 99.9\n"
             "*.Server.coalesce_queries = 1\n"
             "*.Server.max_async_queries = 3\n"
             "*.Server.target_qps = 1e3\n"
             "*.Offline.target_qps = 12.5\n"
             "*.*.min_duration = 600000\n"
             "*.*.max_duration = 700000\n"
             "*.*.min_query_count = 100.0\n"
             "*.*.performance_issue_same_index = 3.\n"
             "*.*.max_query_count = +5\n"
             "*.*.mode = 1\n"
             "*.*.performance_sample_count_override = 1024\n"
             "*.*.accuracy_sample_count_override = 333\n"
             "*.*.performance_issue_same = 1\n"
             "*.*.sample_concatenate_permutation = 1\n"
             "*.*.print_timestamps = 1\n"
             "*.*.accuracy_log_rng_seed = 720381539243781796\n"
             "*.*.accuracy_log_sampling_target = 4096\n"
             "*.*.qsl_rng_seed = 18446744073709551615\n"
             "*.*.accuracy_log_probability = 10\n",
             "resnet50", "Server", IB_LG_CONF_RULES);
    ASSERT_DBL_EQ(s.single_stream_expected_latency_ns, 500000.0);
    ASSERT_DBL_EQ(s.single_stream_target_latency_percentile, 90 * 0.01);
    ASSERT_DBL_EQ(s.multi_stream_expected_latency_ns, 2e6);
    ASSERT_UINT_EQ(s.multi_stream_samples_per_query, 6);
    ASSERT_UINT_EQ(s.server_target_latency_ns, 16000000); /* hex ms, as strtoull base 0 */
    ASSERT_DBL_EQ(s.server_target_latency_percentile, 99.9 * 0.01);
    ASSERT_TRUE(s.server_coalesce_queries);
    ASSERT_UINT_EQ(s.server_max_async_queries, 3);
    ASSERT_DBL_EQ(s.server_target_qps, 1000);
    ASSERT_DBL_EQ(s.offline_expected_qps, 12.5);
    ASSERT_UINT_EQ(s.min_duration_ms, 600000);
    ASSERT_UINT_EQ(s.max_duration_ms, 700000);
    ASSERT_UINT_EQ(s.min_query_count, 100);
    ASSERT_UINT_EQ(s.max_query_count, 5);
    ASSERT_INT_EQ(s.mode, IB_LG_MODE_ACCURACY);
    ASSERT_UINT_EQ(s.performance_sample_count_override, 1024);
    ASSERT_UINT_EQ(s.accuracy_sample_count_override, 333);
    ASSERT_TRUE(s.performance_issue_same);
    ASSERT_UINT_EQ(s.performance_issue_same_index, 3);
    ASSERT_TRUE(s.sample_concatenate_permutation);
    ASSERT_TRUE(s.print_timestamps);
    ASSERT_UINT_EQ(s.accuracy_log_rng_seed, 720381539243781796ull);
    ASSERT_UINT_EQ(s.accuracy_log_sampling_target, 4096);
    ASSERT_UINT_EQ(s.qsl_rng_seed, UINT64_MAX);
    ASSERT_DBL_EQ(s.accuracy_log_probability, 10 * 0.01);
}

TEST(loadgen_config_token_keys_are_gated)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    apply_ok(&s, "llama.Server.ttft_latency = 2000\n", "llama", "Server", IB_LG_CONF_USER);
    ASSERT_UINT_EQ(s.server_ttft_latency, 100000000); /* not token mode: ignored */
    apply_ok(&s,
             "llama.*.use_token_latencies = 1\nllama.Server.ttft_latency = 2000\n"
             "llama.Server.tpot_latency = 200\nllama.*.infer_token_latencies = 1\n"
             "llama.*.token_latency_scaling_factor = 69\n",
             "llama", "Server", IB_LG_CONF_RULES);
    ASSERT_TRUE(s.use_token_latencies);
    ASSERT_UINT_EQ(s.server_ttft_latency, 2000000000ull);
    ASSERT_UINT_EQ(s.server_tpot_latency, 200000000ull);
    ASSERT_UINT_EQ(s.token_latency_scaling_factor, 69);
}

TEST(loadgen_config_seeds_only_from_rules_file)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    char warn[1024];
    ib_err err;
    ASSERT_OK(apply(&s,
                    "*.*.qsl_rng_seed = 5\n*.*.accuracy_log_probability = 100\n"
                    "*.Server.target_duration = 0\nbert.*.qsl_rng_seed = 9\n",
                    "resnet50", "Server", IB_LG_CONF_USER, warn, sizeof warn, &err));
    ASSERT_UINT_EQ(s.qsl_rng_seed, 0);
    ASSERT_DBL_EQ(s.accuracy_log_probability, 0.0);
    ASSERT_STR_CONTAINS(warn, "user.conf:1: *.*.qsl_rng_seed is ignored");
    ASSERT_STR_CONTAINS(warn, "user.conf:2: *.*.accuracy_log_probability is ignored");
    ASSERT_STR_CONTAINS(warn, "user.conf:3: *.Server.target_duration is ignored");
    ASSERT_TRUE(strstr(warn, "user.conf:4") == NULL); /* another model: silent */
    /* audit.config: applied with model "*", seeds ignored too */
    ASSERT_OK(apply(&s, "*.*.schedule_rng_seed = 5\n*.*.accuracy_log_rng_seed = 6\n", "*", "Server",
                    IB_LG_CONF_AUDIT, warn, sizeof warn, &err));
    ASSERT_UINT_EQ(s.schedule_rng_seed, 0);
    ASSERT_UINT_EQ(s.accuracy_log_rng_seed, 6);
    ASSERT_STR_CONTAINS(warn, "schedule_rng_seed is ignored");
    /* v1.1 rules: every key from every file, the later file wins */
    ib_lg_settings_defaults_rules(&s, IB_LG_RULES_V1_1);
    apply_ok(&s, "*.*.qsl_rng_seed = 1\n*.*.sample_index_rng_seed = 2\n", "m", "SingleStream",
             IB_LG_CONF_RULES);
    apply_ok(&s, "*.SingleStream.sample_index_rng_seed = 7\n*.*.accuracy_log_probability = 50\n",
             "m", "SingleStream", IB_LG_CONF_USER);
    ASSERT_UINT_EQ(s.qsl_rng_seed, 1);
    ASSERT_UINT_EQ(s.sample_index_rng_seed, 7);
    ASSERT_DBL_EQ(s.accuracy_log_probability, 0.5);
    /* v1.1 MultiStream keys and integer SingleStream target_latency */
    apply_ok(&s,
             "*.MultiStream.target_qps = 20\n*.MultiStream.max_async_queries = 1\n"
             "*.MultiStream.samples_per_query = 4\n*.SingleStream.target_latency = 10\n",
             "m", "MultiStream", IB_LG_CONF_USER);
    ASSERT_DBL_EQ(s.multi_stream_target_qps, 20);
    ASSERT_DBL_EQ(s.single_stream_expected_latency_ns, 1e7);
    ib_err e2;
    ASSERT_STATUS(apply(&s, "*.SingleStream.target_latency = 0.5\n", "m", "SingleStream",
                        IB_LG_CONF_USER, NULL, 0, &e2),
                  IB_EFORMAT); /* an integer in r1.1 */
    ASSERT_STATUS(
        apply(&s, "*.*.use_token_latencies = 1\n", "m", "Server", IB_LG_CONF_USER, NULL, 0, &e2),
        IB_EFORMAT); /* unknown to r1.1 */
    ASSERT_STR_CONTAINS(e2.msg, "v1.1");
}

TEST(loadgen_config_rejects_quirks_with_line)
{
    expect_reject("# ok\nresnet50.Server.target_qps=1234\n", 2, "spaces around '='");
    expect_reject("resnet50.Server.target_qps= 1234\n", 1, "spaces on both sides");
    expect_reject("resnet50.Server.target_qps =1234\n", 1, "spaces on both sides");
    expect_reject("resnet50.Server.target_qps = 1234 # comment\n", 1, "comment after the value");
    expect_reject("resnet50.Server.target_qps = 1234 5678\n", 1, "extra text");
    expect_reject("*.*.min_query_count = 010\n", 1, "octal");
    expect_reject("*.*.min_duration = 1e3\n", 1, "exponent");
    expect_reject("*.*.min_duration = 1.5\n", 1, "fraction");
    expect_reject("*.*.min_query_count = -1\n", 1, "negative");
    expect_reject("*.*.min_query_count = 18446744073709551616\n", 1, "above 2^64");
    expect_reject("*.*.min_query_count = 0x\n", 1, "integer");
    expect_reject("*.Server.target_latency = 18446744073709551\n", 1, "overflows");
    expect_reject("*.*.min_query_count = abc\n", 1, "integer");
    expect_reject("*.Server.target_qps = fast\n", 1, "not a finite number");
    expect_reject("*.Server.target_qps = inf\n", 1, "not a finite number");
    expect_reject("*.Server.target_qps = nan\n", 1, "not a finite number");
    expect_reject("*.Server.target_qps = -5\n", 1, "must be > 0");
    expect_reject("*.Server.target_latency_percentile = 0\n", 1, "(0, 100]");
    expect_reject("*.Server.target_latency_percentile = 101\n", 1, "(0, 100]");
    expect_reject("*.*.accuracy_log_probability = 200\n", 1, "[0, 100]");
    expect_reject("\n\n*.Server.target_qsp = 10\n", 3, "did you mean 'target_qps'");
    expect_reject("*.*.frobnicate = 1\n", 1, "unknown setting 'frobnicate'");
    expect_reject("resnet50.Server.target.qps = 1\n", 1, "unknown scenario");
    expect_reject("resnet50.server.target_qps = 1\n", 1, "unknown scenario 'server'");
    expect_reject("Server.target_qps = 1\n", 1, "model.scenario.setting");
    expect_reject("target_qps = 1\n", 1, "model.scenario.setting");
    expect_reject("resnet50..target_qps = 1\n", 1, "empty part");
    expect_reject(".Server.target_qps = 1\n", 1, "empty part");
    expect_reject("*.*.min_query_count = 5\n*.*.min_query_count = 6\n", 2, "line 1");
    expect_reject("*.Server.coalesce_queries = 2\n", 1, "0 or 1");
    expect_reject("*.*.mode = 4\n", 1, "PerformanceOnly");
    expect_reject("*.Server.max_async_queries = 4294967296\n", 1, "at most");
    expect_reject("*.*.min_query_count\n", 1, "no '= value'");
    expect_reject("*.*.min_query_count =\n", 1, "has no value");
    expect_reject("*.*.min_query_count # = 5\n", 1, "followed by a comment");
    expect_reject("*.*.min_query_count : 5\n", 1, "expected '='");
    /* the official rejects these comment forms: so do we */
    expect_reject("#a comment without a space\n", 1, "write '# '");
    expect_reject("#*.*.min_query_count = five\n", 1, "non-numeric");
}

TEST(loadgen_config_nul_and_binary_input)
{
    const char text[] = "*.*.min_query_count = 5\n\0garbage\n";
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    ib_err err;
    ASSERT_STATUS(ib_lg_settings_apply_conf(&s, text, sizeof text - 1, "bin.conf", "m", "Server",
                                            IB_LG_CONF_USER, NULL, NULL, 0, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "bin.conf:2: NUL byte");
    ASSERT_UINT_EQ(s.min_query_count, 100);
    /* truncated in the middle of a key: no '= value' */
    ASSERT_STATUS(ib_lg_settings_apply_conf(&s, "*.*.min_query_count = 5\n*.*.max_q", 33, "t.conf",
                                            "m", "Server", IB_LG_CONF_USER, NULL, NULL, 0, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "t.conf:2:");
    /* empty text applies nothing */
    ASSERT_OK(ib_lg_settings_apply_conf(&s, "", 0, "e.conf", "m", "Server", IB_LG_CONF_USER, NULL,
                                        NULL, 0, &err));
    /* bad arguments */
    ASSERT_STATUS(ib_lg_settings_apply_conf(&s, "", 0, "e", "m", "server", IB_LG_CONF_USER, NULL,
                                            NULL, 0, &err),
                  IB_EINVAL);
    ASSERT_STATUS(
        ib_lg_settings_apply_conf(&s, "", 0, "e", "m", "*", IB_LG_CONF_USER, NULL, NULL, 0, &err),
        IB_EINVAL);
    ASSERT_STATUS(ib_lg_settings_apply_conf(NULL, "", 0, "e", "m", "Server", IB_LG_CONF_USER, NULL,
                                            NULL, 0, &err),
                  IB_EINVAL);
}

TEST(loadgen_config_huge_file)
{
    /* 200k distinct keys: linear time, nothing crashes; the last line fails. */
    size_t n = 200000;
    char *text = malloc(n * 48 + 64);
    ASSERT_NOT_NULL(text);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "model%zu.Server.target_qps = %zu\n", i, i + 1);
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    ib_err err;
    ASSERT_OK_ERR(ib_lg_settings_apply_conf(&s, text, len, "big.conf", "model777", "Server",
                                            IB_LG_CONF_USER, NULL, NULL, 0, &err),
                  &err);
    ASSERT_DBL_EQ(s.server_target_qps, 778);
    len += (size_t)sprintf(text + len, "model7.Server.target_qps = 1\n");
    ASSERT_STATUS(ib_lg_settings_apply_conf(&s, text, len, "big.conf", "m", "Server",
                                            IB_LG_CONF_USER, NULL, NULL, 0, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "big.conf:200001:");
    free(text);
}

TEST(loadgen_config_origins_and_warnings_buffer)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    ib_lg_settings_origin *o;
    ASSERT_OK(ib_lg_settings_origin_create(&o));
    ib_err err;
    const char *t1 = "*.Server.target_qps = 5\n*.*.min_duration = 1000\n";
    ASSERT_OK(ib_lg_settings_apply_conf(&s, t1, strlen(t1), "mlperf.conf", "m", "Server",
                                        IB_LG_CONF_RULES, o, NULL, 0, &err));
    const char *t2 = "# user\nm.Server.target_qps = 7\n";
    char warn[8];
    ASSERT_OK(ib_lg_settings_apply_conf(&s, t2, strlen(t2), "user.conf", "m", "Server",
                                        IB_LG_CONF_USER, o, warn, sizeof warn, &err));
    ASSERT_STR_EQ(ib_lg_settings_origin_get(o, "server_target_qps"), "user.conf:2");
    ASSERT_STR_EQ(ib_lg_settings_origin_get(o, "min_duration_ms"), "mlperf.conf:2");
    ASSERT_NULL(ib_lg_settings_origin_get(o, "min_query_count"));
    /* a tiny warnings buffer truncates whole lines, stays NUL-terminated */
    const char *t3 = "*.*.qsl_rng_seed = 1\n";
    ASSERT_OK(ib_lg_settings_apply_conf(&s, t3, strlen(t3), "user.conf", "m", "Server",
                                        IB_LG_CONF_USER, o, warn, sizeof warn, &err));
    ASSERT_STR_EQ(warn, "");
    ib_lg_settings_origin_destroy(o);
}

TEST(loadgen_config_embedded_rules_files)
{
    size_t len = 0;
    const char *v61 = ib_lg_mlperf_conf_embedded(IB_LG_RULES_CURRENT, &len);
    ASSERT_NOT_NULL(v61);
    ASSERT_UINT_EQ(strlen(v61), len);
    ASSERT_STR_CONTAINS(v61, "*.*.qsl_rng_seed = 2085463073848966840");
    const char *v11 = ib_lg_mlperf_conf_embedded(IB_LG_RULES_V1_1, &len);
    ASSERT_STR_CONTAINS(v11, "*.*.qsl_rng_seed = 1624344308455410291");
    /* byte-identical to the official files kept in ../shared */
    char path[4096], *text;
    size_t flen;
    ib_err err;
    snprintf(path, sizeof path, "%s/golden/rules/mlperf_v6.1_official.conf", ib_test_shared_dir());
    if (ib_file_read_all(path, 0, &text, &flen, &err) == IB_OK) {
        ASSERT_STR_EQ(text, v61);
        ib_free(text);
    }
    /* The official files parse for every scenario and model. */
    const char *models[] = {"resnet50", "bert-99", "llama2-70b", "gptj", "3d-unet", "dlrm-v2", "*"};
    const char *scen[] = {"SingleStream", "MultiStream", "Server", "Offline"};
    for (int r = 0; r < 2; r++)
        for (size_t m = 0; m < sizeof models / sizeof *models; m++)
            for (size_t c = 0; c < 4; c++) {
                ib_lg_settings s;
                ib_lg_settings_defaults_rules(&s, (enum ib_lg_rules)r);
                const char *t = ib_lg_mlperf_conf_embedded((enum ib_lg_rules)r, &len);
                ASSERT_OK_ERR(ib_lg_settings_apply_conf(&s, t, len, "mlperf.conf", models[m],
                                                        scen[c], IB_LG_CONF_RULES, NULL, NULL, 0,
                                                        &err),
                              &err);
            }
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    const char *t = ib_lg_mlperf_conf_embedded(IB_LG_RULES_CURRENT, &len);
    ASSERT_OK(ib_lg_settings_apply_conf(&s, t, len, "mlperf.conf", "resnet50", "Server",
                                        IB_LG_CONF_RULES, NULL, NULL, 0, &err));
    ASSERT_UINT_EQ(s.qsl_rng_seed, 2085463073848966840ull);
    ASSERT_UINT_EQ(s.schedule_rng_seed, 16159082839903944936ull);
    ASSERT_UINT_EQ(s.performance_sample_count_override, 1024);
    ASSERT_UINT_EQ(s.server_target_latency_ns, 15000000);
    ASSERT_UINT_EQ(s.min_duration_ms, 600000);
    ib_lg_settings_defaults(&s);
    ASSERT_OK(ib_lg_settings_apply_conf(&s, t, len, "mlperf.conf", "llama2-70b", "Server",
                                        IB_LG_CONF_RULES, NULL, NULL, 0, &err));
    ASSERT_TRUE(s.use_token_latencies);
    ASSERT_TRUE(s.sample_concatenate_permutation);
    ASSERT_UINT_EQ(s.server_ttft_latency, 2000000000ull);
    ASSERT_UINT_EQ(s.server_target_latency_ns, 0);
}

TEST(loadgen_config_file_api)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    ib_err err;
    ASSERT_STATUS(ib_lg_settings_apply_conf_file(&s, "no-such.conf", "m", "Server", IB_LG_CONF_USER,
                                                 NULL, NULL, 0, &err),
                  IB_ENOTFOUND);
    ASSERT_OK(ib_file_write_all("u.conf", "*.Server.target_qps = 42\nx\n", 27, &err));
    ASSERT_STATUS(ib_lg_settings_apply_conf_file(&s, "u.conf", "m", "Server", IB_LG_CONF_USER, NULL,
                                                 NULL, 0, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "u.conf:2:");
    ASSERT_OK(ib_file_write_all("u.conf", "*.Server.target_qps = 42\n", 25, &err));
    ASSERT_OK(ib_lg_settings_apply_conf_file(&s, "u.conf", "m", "Server", IB_LG_CONF_USER, NULL,
                                             NULL, 0, &err));
    ASSERT_DBL_EQ(s.server_target_qps, 42);
}
