/*
 * test_check_verify.c - the compliance verifiers on hand-made logs whose expected counters,
 * verdicts and verify_*.txt text were worked out by hand from the official scripts
 * (TEST01 verify_accuracy.py + verify_performance.py, TEST04-A verify_test4_performance.py,
 * TEST05 verify_performance.py, verify_accuracy_baseline.py; current compliance/TEST01 and
 * TEST04). The Dell v1.1 folders are replayed in tests/integration/test_check_dell.c.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/compliance.h"
#include "test.h"

static void put(const char *path, const char *text)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        ASSERT_OK(ib_mkdirs(dir, NULL));
    }
    ib_err err;
    ASSERT_OK_ERR(ib_file_write_all(path, text, strlen(text), &err), &err);
}

/* An accuracy log from "qsl:hex" pairs. */
static void acclog(const char *path, const char *const *pairs)
{
    char buf[8192];
    size_t n = (size_t)snprintf(buf, sizeof buf, "[");
    for (int i = 0; pairs[i]; i++) {
        unsigned q;
        char hex[256];
        ASSERT_INT_EQ(sscanf(pairs[i], "%u:%255s", &q, hex) >= 1, 1);
        if (!strchr(pairs[i], ':') || pairs[i][strlen(pairs[i]) - 1] == ':')
            hex[0] = '\0';
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "%s\n{ \"seq_id\" : %d, \"qsl_idx\" : %u, \"data\" : \"%s\" }",
                              i ? "," : "", i, q, hex);
    }
    snprintf(buf + n, sizeof buf - n, "\n]\n");
    put(path, buf);
}

static ib_verify_outcome acc_verify(const char *const *acc, const char *const *perf,
                                    enum ib_check_version v, enum ib_verify_compare c)
{
    acclog("acc.json", acc);
    acclog("perf.json", perf);
    ib_verify_options o;
    ib_verify_options_defaults(&o);
    o.version = v;
    o.compare = c;
    ib_verify_outcome out;
    ib_verify_outcome_init(&out);
    ib_err err;
    ASSERT_OK_ERR(ib_verify_test01_accuracy("acc.json", "perf.json", &o, &out, &err), &err);
    return out;
}

TEST(check_verify_test01_counters_and_text)
{
    /* duplicates in the accuracy log (one with other data), a qsl_idx only in the
     * performance log (then compared with its own earlier entry, as upstream does) */
    static const char *const acc[] = {"1:01000000", "2:02000000", "2:02000000", "3:03000000",
                                      "3:FF000000", NULL};
    static const char *const perf[] = {"2:02000000", "3:03000000", "7:07000000", "7:07000000",
                                       "1:01000000", NULL};
    ib_verify_outcome o = acc_verify(acc, perf, IB_CHECK_V1_1, IB_VERIFY_BYTES);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ASSERT_STR_EQ(o.text, "Verifying accuracy. This might take a while...\n"
                          "Reading accuracy mode results...\n"
                          "Reading performance mode results...\n"
                          "num_acc_log_entries = 5\n"
                          "num_acc_log_duplicate_keys = 2\n"
                          "num_acc_log_data_mismatch = 1\n"
                          "num_perf_log_entries = 5\n"
                          "num_perf_log_qsl_idx_match = 4\n"
                          "num_perf_log_data_mismatch = 0\n"
                          "num_missing_qsl_idxs = 1\n"
                          "TEST PASS\n\n");
    ASSERT_UINT_EQ(o.text_len, strlen(o.text));
    ib_verify_outcome_deinit(&o);
}

TEST(check_verify_test01_compare_modes)
{
    /* the payloads differ only after the first byte; the second sampled copy is compared with
     * the first sampled copy (upstream stores perf data back into the map) */
    static const char *const acc[] = {"5:0A0B0C0D", NULL};
    static const char *const perf[] = {"5:0A0B0C0E", "5:0A0B0C0E", NULL};
    ib_verify_outcome o = acc_verify(acc, perf, IB_CHECK_V1_1, IB_VERIFY_BYTES);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_UINT_EQ(o.counts.perf_log_qsl_idx_match, 2);
    ASSERT_UINT_EQ(o.counts.perf_log_data_mismatch, 1);
    ASSERT_STR_CONTAINS(o.text, "num_perf_log_data_mismatch = 1\nnum_missing_qsl_idxs = 0\n"
                                "TEST FAIL\n\n");
    ib_verify_outcome_deinit(&o);
    o = acc_verify(acc, perf, IB_CHECK_V1_1, IB_VERIFY_FIRST_BYTE);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS); /* the official default sees only 0x0A */
    ib_verify_outcome_deinit(&o);
    o = acc_verify(acc, perf, IB_CHECK_V1_1, IB_VERIFY_FIRST_INT32);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    o = acc_verify(acc, perf, IB_CHECK_V1_1, IB_VERIFY_FIRST_FLOAT32);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    /* 4-byte payloads cannot be read as int64: an error naming the entry, not a crash */
    acclog("acc.json", acc);
    acclog("perf.json", perf);
    ib_verify_options opt;
    ib_verify_options_defaults(&opt);
    opt.compare = IB_VERIFY_FIRST_INT64;
    ib_err err;
    ASSERT_STATUS(ib_verify_test01_accuracy("acc.json", "perf.json", &opt, &o, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "perf.json:2: qsl_idx 5 has 4 payload bytes");
    ib_verify_outcome_deinit(&o);
    /* NaN differs from itself in the float32 comparison, not byte for byte */
    static const char *const nan_acc[] = {"1:0000C07F", NULL};
    o = acc_verify(nan_acc, nan_acc, IB_CHECK_V1_1, IB_VERIFY_FIRST_FLOAT32);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    o = acc_verify(nan_acc, nan_acc, IB_CHECK_V1_1, IB_VERIFY_BYTES);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ib_verify_outcome_deinit(&o);
    /* empty payloads: equal when both are empty */
    static const char *const e_acc[] = {"1:", NULL};
    static const char *const e_perf[] = {"1:", "1:00", NULL};
    o = acc_verify(e_acc, e_perf, IB_CHECK_V1_1, IB_VERIFY_FIRST_BYTE);
    ASSERT_UINT_EQ(o.counts.perf_log_data_mismatch, 1);
    ib_verify_outcome_deinit(&o);
    enum ib_verify_compare c;
    ASSERT_OK(ib_verify_compare_parse("int32", &c));
    ASSERT_INT_EQ(c, IB_VERIFY_FIRST_INT32);
    ASSERT_STATUS(ib_verify_compare_parse("int16", &c), IB_EINVAL);
}

TEST(check_verify_test01_versions_and_truncation)
{
    static const char *const acc[] = {"1:01", NULL};
    static const char *const perf[] = {"9:09", NULL};
    /* no common qsl_idx: v1.1 passes (mismatch count 0), current requires a match */
    ib_verify_outcome o = acc_verify(acc, perf, IB_CHECK_V1_1, IB_VERIFY_BYTES);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ib_verify_outcome_deinit(&o);
    o = acc_verify(acc, perf, IB_CHECK_CURRENT, IB_VERIFY_BYTES);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.reason, "no sampled qsl_idx");
    ib_verify_outcome_deinit(&o);
    /* a truncated performance log: no verdict beyond INCONCLUSIVE without a mismatch */
    char big[16000];
    size_t n = (size_t)snprintf(big, sizeof big, "[");
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "%s\n{ \"seq_id\" : %d, \"qsl_idx\" : %d, \"data\" : \"%02X\" }",
                              i ? "," : "", i, i % 2, i % 2);
    n += (size_t)snprintf(big + n, sizeof big - n, "\n]\n");
    ASSERT_UINT_GE(n, 8300);
    char t[8300];
    memcpy(t, big, 4096);
    memcpy(t + 4096, "\n\n...\n\n", 7);
    memcpy(t + 4103, big + n - 4096, 4096);
    t[8199] = '\0';
    put("perf.json", t);
    static const char *const acc2[] = {"0:00", "1:01", NULL};
    acclog("acc.json", acc2);
    ib_verify_options opt;
    ib_verify_options_defaults(&opt);
    ib_err err;
    ib_verify_outcome_init(&o);
    ASSERT_OK_ERR(ib_verify_test01_accuracy("acc.json", "perf.json", &opt, &o, &err), &err);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_INCONCLUSIVE);
    ASSERT_TRUE(o.counts.perf_truncated);
    ASSERT_STR_CONTAINS(o.text, "WARNING: perf.json is truncated");
    ASSERT_STR_CONTAINS(o.text, "TEST INCONCLUSIVE\n");
    ib_verify_outcome_deinit(&o);
    /* ...and a certain FAIL when the recovered entries already disagree */
    static const char *const acc3[] = {"0:00", "1:FF", NULL};
    acclog("acc.json", acc3);
    ASSERT_OK_ERR(ib_verify_test01_accuracy("acc.json", "perf.json", &opt, &o, &err), &err);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    /* unreadable inputs are errors */
    ASSERT_STATUS(ib_verify_test01_accuracy("acc.json", "missing.json", &opt, &o, &err),
                  IB_ENOTFOUND);
    put("bad.json", "[{ \"qsl_idx\" : 1 ");
    ASSERT_STATUS(ib_verify_test01_accuracy("acc.json", "bad.json", &opt, &o, &err), IB_EFORMAT);
}

static ib_verify_outcome fallback(enum ib_check_version v, const char *bench, const char *base,
                                  const char *comp)
{
    put("accuracy/baseline_accuracy.txt", base);
    put("accuracy/compliance_accuracy.txt", comp);
    ib_verify_options o;
    ib_verify_options_defaults(&o);
    o.version = v;
    o.benchmark = bench;
    ib_verify_outcome out;
    ib_verify_outcome_init(&out);
    out.verdict = IB_VERIFY_FAIL; /* as after a failed byte comparison */
    ib_err err;
    ASSERT_OK_ERR(ib_verify_accuracy_fallback("accuracy/baseline_accuracy.txt",
                                              "accuracy/compliance_accuracy.txt", &o, &out, &err),
                  &err);
    return out;
}

TEST(check_verify_accuracy_fallback)
{
    /* Dell A100 resnet50 Server: identical subsets */
    ib_verify_outcome o = fallback(IB_CHECK_V1_1, "resnet50",
                                   "accuracy=78.210%, good=1407, total=1799\n",
                                   "accuracy=78.210%, good=1407, total=1799\n");
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ASSERT_STR_EQ(o.text, "Verifying accuracy via baseline comparison...\n"
                          "baseline accuracy: 78.210 (100.00%)\n"
                          "compliance accuracy: 78.210 (100.00%)\n"
                          "threshold accuracy: 99.0%\n"
                          "TEST PASS\n");
    ib_verify_outcome_deinit(&o);
    /* bert-99.9: 99.9 % threshold; compliance 0.2 % lower fails */
    o = fallback(IB_CHECK_V1_1, "bert-99.9", "{\"exact_match\": 25.9, \"f1\": 28.0}\n",
                 "{\"exact_match\": 25.9, \"f1\": 27.944}\n");
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.text, "compliance accuracy: 27.944 (99.80%)\nthreshold accuracy: 99.9%\n"
                                "TEST FAIL\n");
    ib_verify_outcome_deinit(&o);
    /* v1.1 is one-sided (better compliance accuracy passes), current is two-sided */
    o = fallback(IB_CHECK_V1_1, "resnet50", "accuracy=78.0%\n", "accuracy=79.0%\n");
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ib_verify_outcome_deinit(&o);
    o = fallback(IB_CHECK_CURRENT, "resnet50", "accuracy=78.0%\n", "accuracy=79.0%\n");
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.text, "delta: 1.2658% (allowed: 1%)\nTEST FAIL\n");
    ib_verify_outcome_deinit(&o);
    o = fallback(IB_CHECK_V1_1, "resnet50", "accuracy=78.0%\n", "accuracy=77.0%\n");
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.text, "(98.72%)");
    ib_verify_outcome_deinit(&o);
    /* a missing metric line fails with the file named */
    o = fallback(IB_CHECK_V1_1, "resnet50", "nothing here\n", "accuracy=77.0%\n");
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.reason, "baseline_accuracy.txt");
    ib_verify_outcome_deinit(&o);
    ib_verify_options opt;
    ib_verify_options_defaults(&opt);
    ib_err err;
    ASSERT_STATUS(ib_verify_accuracy_fallback("a", "b", &opt, &o, &err), IB_EINVAL);
    opt.benchmark = "gptj-99";
    ASSERT_STATUS(ib_verify_accuracy_fallback("a", "b", &opt, &o, &err), IB_EINVAL);
}

/* A v1.1-style summary with the fields the scripts read. */
static void summary(const char *path, const char *scenario, const char *metric_line,
                    const char *validity, const char *extra)
{
    char t[2048];
    snprintf(t, sizeof t,
             "================================================\nMLPerf Results Summary\n"
             "================================================\nSUT name : S\nScenario : %s\n"
             "Mode     : PerformanceOnly\n%s\nResult is : %s\n  Min duration satisfied : Yes\n\n"
             "================================================\nTest Parameters Used\n"
             "================================================\n%s\n"
             "No warnings encountered during test.\n\nNo errors encountered during test.\n",
             scenario, metric_line, validity, extra ? extra : "");
    put(path, t);
}

static ib_verify_outcome perf(enum ib_verify_test test, enum ib_check_version v)
{
    ib_verify_options o;
    ib_verify_options_defaults(&o);
    o.version = v;
    ib_verify_outcome out;
    ib_verify_outcome_init(&out);
    ib_err err;
    ASSERT_OK_ERR(ib_verify_performance("ref.txt", "test.txt", test, &o, &out, &err), &err);
    return out;
}

TEST(check_verify_performance_v11)
{
    summary("ref.txt", "Server", "Scheduled samples per second : 91264.18", "VALID", NULL);
    summary("test.txt", "Server", "Scheduled samples per second : 91264.18", "VALID", NULL);
    ib_verify_outcome o = perf(IB_VERIFY_TEST01, IB_CHECK_V1_1);
    ASSERT_STR_EQ(o.text, "Verifying performance.\nreference score = 91264.18\n"
                          "test score = 91264.18\nTEST PASS\n");
    ib_verify_outcome_deinit(&o);
    /* Offline: 950 vs 1000 passes TEST01 (10 %) but fails TEST05 (5 %, strict bound) */
    summary("ref.txt", "Offline", "Samples per second: 1000", "VALID", NULL);
    summary("test.txt", "Offline", "Samples per second: 950", "VALID", NULL);
    o = perf(IB_VERIFY_TEST01, IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ib_verify_outcome_deinit(&o);
    o = perf(IB_VERIFY_TEST05, IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.text, "test score = 950\nTEST FAIL: Test score invalid\n");
    ib_verify_outcome_deinit(&o);
    /* SingleStream <= 200 us gets 20 % */
    summary("ref.txt", "SingleStream", "90th percentile latency (ns) : 150000", "VALID", NULL);
    summary("test.txt", "SingleStream", "90th percentile latency (ns) : 175000", "VALID", NULL);
    o = perf(IB_VERIFY_TEST01, IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ASSERT_DBL_EQ(o.threshold, 0.20);
    ib_verify_outcome_deinit(&o);
    summary("ref.txt", "SingleStream", "90th percentile latency (ns) : 300000", "VALID", NULL);
    summary("test.txt", "SingleStream", "90th percentile latency (ns) : 340000", "VALID", NULL);
    o = perf(IB_VERIFY_TEST01, IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    /* an invalid test run, errors in the reference, scenario mismatch */
    summary("ref.txt", "Offline", "Samples per second: 1000", "VALID",
            "\n3 ERRORS encountered. See detailed log.");
    summary("test.txt", "Offline", "Samples per second: 1000", "INVALID", NULL);
    o = perf(IB_VERIFY_TEST01, IB_CHECK_V1_1);
    ASSERT_STR_EQ(o.text, "Verifying performance.\nWARNING: 3 ERROR reported in reference "
                          "results\nTEST FAIL: Test results are invalid\n");
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    summary("test.txt", "Server", "Scheduled samples per second : 1000", "VALID", NULL);
    o = perf(IB_VERIFY_TEST01, IB_CHECK_V1_1);
    ASSERT_STR_CONTAINS(o.text, "TEST FAIL: Test and reference scenarios do not match!\n");
    ib_verify_outcome_deinit(&o);
    /* a summary without its score line: the script's 0 fails the band */
    summary("test.txt", "Offline", "", "VALID", NULL);
    o = perf(IB_VERIFY_TEST01, IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.text, "test score = 0\n");
    ib_verify_outcome_deinit(&o);
    ib_verify_options opt;
    ib_verify_options_defaults(&opt);
    ib_err err;
    ASSERT_STATUS(ib_verify_performance("ref.txt", "nope.txt", IB_VERIFY_TEST01, &opt, &o, &err),
                  IB_ENOTFOUND);
}

static ib_verify_outcome test04(enum ib_check_version v)
{
    ib_verify_options o;
    ib_verify_options_defaults(&o);
    o.version = v;
    ib_verify_outcome out;
    ib_verify_outcome_init(&out);
    ib_err err;
    ASSERT_OK_ERR(ib_verify_test04("a.txt", "b.txt", &o, &out, &err), &err);
    return out;
}

TEST(check_verify_test04)
{
    const char *ua = "performance_issue_unique : 1\nperformance_issue_same : 0";
    const char *sb = "performance_issue_unique : 0\nperformance_issue_same : 1";
    /* Dell A100 resnet50 Offline: B much slower -> PASS with the note */
    summary("a.txt", "Offline", "Samples per second: 36783.7", "INVALID", ua);
    summary("b.txt", "Offline", "Samples per second: 32722.7", "INVALID", sb);
    ib_verify_outcome o = test04(IB_CHECK_V1_1);
    ASSERT_STR_EQ(o.text, "Verifying performance.\nTEST04-A score = 36783.7\n"
                          "TEST04-B score = 32722.7\nTEST PASS\n"
                          "Note: TEST04-B is significantly slower than TEST04-A\n");
    ib_verify_outcome_deinit(&o);
    /* B 20 % faster than A: caching suspected */
    summary("b.txt", "Offline", "Samples per second: 44140.4", "INVALID", sb);
    o = test04(IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ASSERT_STR_CONTAINS(o.text, "TEST FAIL: Test score invalid\n");
    ASSERT_STR_CONTAINS(o.reason, "cached");
    ib_verify_outcome_deinit(&o);
    /* SingleStream latency: B 15 % faster is within the 20 % of short latencies */
    summary("a.txt", "SingleStream", "90th percentile latency (ns) : 100000", "VALID", ua);
    summary("b.txt", "SingleStream", "90th percentile latency (ns) : 85000", "VALID", sb);
    o = test04(IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_PASS);
    ib_verify_outcome_deinit(&o);
    summary("b.txt", "SingleStream", "90th percentile latency (ns) : 70000", "VALID", sb);
    o = test04(IB_CHECK_V1_1);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    /* TEST04-A made without its audit.config */
    summary("a.txt", "SingleStream", "90th percentile latency (ns) : 100000", "VALID",
            "performance_issue_unique : 0");
    o = test04(IB_CHECK_V1_1);
    ASSERT_STR_EQ(o.text, "Verifying performance.\nTEST FAIL: Invalid test settings in TEST04-A "
                          "summary.\n");
    ib_verify_outcome_deinit(&o);
    /* current: the submission vs TEST04; SingleStream compares 1e9 / early-stopping latency */
    summary("a.txt", "Offline", "Samples per second: 1000", "VALID", NULL);
    summary("b.txt", "Offline", "Samples per second: 1099", "VALID", NULL);
    o = test04(IB_CHECK_CURRENT);
    ASSERT_STR_EQ(o.text, "Verifying performance.\nreference score = 1000\ntest score = 1099\n"
                          "TEST PASS\n");
    ib_verify_outcome_deinit(&o);
    summary("b.txt", "Offline", "Samples per second: 1100", "VALID", NULL);
    o = test04(IB_CHECK_CURRENT);
    ASSERT_INT_EQ(o.verdict, IB_VERIFY_FAIL);
    ib_verify_outcome_deinit(&o);
    summary("a.txt", "SingleStream", " * Early stopping 90.0th percentile estimate: 400000",
            "VALID", NULL);
    summary("b.txt", "SingleStream", " * Early stopping 90.0th percentile estimate: 500000",
            "VALID", NULL);
    o = test04(IB_CHECK_CURRENT);
    ASSERT_STR_CONTAINS(o.text, "reference score = 2500.0\ntest score = 2000.0\nTEST PASS\n");
    ib_verify_outcome_deinit(&o);
}

#define DREC(key, val)                                                                             \
    ":::MLLOG {\"key\": \"" key "\", \"value\": " val ", \"time_ms\": 1.0, \"namespace\": "      \
    "\"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", \"metadata\": {\"is_error\": false, " \
    "\"is_warning\": false, \"file\": \"x\", \"line_no\": 1, \"pid\": 1, \"tid\": 1}}\n"

TEST(check_verify_performance_current)
{
    put("ref.txt", DREC("effective_scenario", "\"Offline\"") DREC("result_validity", "\"VALID\"")
                       DREC("result_samples_per_second", "1000"));
    put("test.txt", DREC("effective_scenario", "\"Offline\"") DREC("result_validity", "\"VALID\"")
                        DREC("result_samples_per_second", "900.0"));
    ib_verify_outcome o = perf(IB_VERIFY_TEST01, IB_CHECK_CURRENT);
    /* inclusive bound and Python float formatting */
    ASSERT_STR_EQ(o.text, "Verifying performance.\nReference score = 1000.0\n"
                          "Test score = 900.0\nTEST PASS\n");
    ib_verify_outcome_deinit(&o);
    put("ref.txt", DREC("effective_scenario", "\"Server\"") DREC("result_validity", "\"VALID\"")
                       DREC("result_completed_samples_per_sec", "500.5")
                           DREC("effective_target_latency_ns", "15000000"));
    put("test.txt", DREC("effective_scenario", "\"Server\"") DREC("result_validity", "\"VALID\"")
                        DREC("result_completed_samples_per_sec", "500.5")
                            DREC("effective_target_latency_ns", "100000000"));
    o = perf(IB_VERIFY_TEST01, IB_CHECK_CURRENT);
    ASSERT_STR_EQ(o.text, "Verifying performance.\nTEST FAIL: Server target latency mismatch\n");
    ib_verify_outcome_deinit(&o);
    put("test.txt", DREC("effective_scenario", "\"Server\"") DREC("result_validity", "\"INVALID\"")
                        DREC("result_completed_samples_per_sec", "500.5"));
    o = perf(IB_VERIFY_TEST01, IB_CHECK_CURRENT);
    ASSERT_STR_CONTAINS(o.text, "TEST FAIL: Invalid results in test.txt\n");
    ib_verify_outcome_deinit(&o);
    ib_verify_options opt;
    ib_verify_options_defaults(&opt);
    opt.version = IB_CHECK_CURRENT;
    ib_err err;
    ASSERT_STATUS(ib_verify_performance("ref.txt", "test.txt", IB_VERIFY_TEST05, &opt, &o, &err),
                  IB_EUNSUPPORTED);
}

TEST(check_verify_dirs_write_files)
{
    /* a results folder and a flat LoadGen output folder of a TEST01 run */
    static const char *const acc[] = {"1:01000000", "2:02000000", NULL};
    static const char *const smp[] = {"2:02000000", NULL};
    acclog("res/accuracy/mlperf_log_accuracy.json", acc);
    summary("res/performance/run_1/mlperf_log_summary.txt", "Offline", "Samples per second: 100",
            "VALID", NULL);
    acclog("run/mlperf_log_accuracy.json", smp);
    summary("run/mlperf_log_summary.txt", "Offline", "Samples per second: 101", "VALID", NULL);
    ib_verify_options o;
    ib_verify_options_defaults(&o);
    o.benchmark = "resnet50";
    ib_verify_outcome a, p;
    ib_verify_outcome_init(&a);
    ib_verify_outcome_init(&p);
    ib_err err;
    ASSERT_OK_ERR(ib_verify_test01_dir("res", "run", "out/TEST01", &o, &a, &p, &err), &err);
    ASSERT_INT_EQ(a.verdict, IB_VERIFY_PASS);
    ASSERT_INT_EQ(p.verdict, IB_VERIFY_PASS);
    char *t = ib_test_slurp("out/TEST01/verify_accuracy.txt");
    ASSERT_STR_EQ(t, a.text);
    ib_free(t);
    t = ib_test_slurp("out/TEST01/verify_performance.txt");
    ASSERT_STR_EQ(t, "Verifying performance.\nreference score = 100\ntest score = 101\nTEST PASS\n");
    ib_free(t);
    /* a failed byte comparison in the compliance layout picks up the fallback files */
    static const char *const bad[] = {"2:03000000", NULL};
    acclog("comp/accuracy/mlperf_log_accuracy.json", bad);
    summary("comp/performance/run_1/mlperf_log_summary.txt", "Offline", "Samples per second: 99",
            "VALID", NULL);
    put("comp/accuracy/baseline_accuracy.txt", "accuracy=50.000%\n");
    put("comp/accuracy/compliance_accuracy.txt", "accuracy=49.900%\n");
    ASSERT_OK_ERR(ib_verify_test01_dir("res", "comp", "comp", &o, &a, &p, &err), &err);
    ASSERT_TRUE(a.fallback_used);
    ASSERT_INT_EQ(a.verdict, IB_VERIFY_PASS);
    t = ib_test_slurp("comp/verify_accuracy.txt");
    ASSERT_STR_CONTAINS(t, "num_perf_log_data_mismatch = 1\nnum_missing_qsl_idxs = 0\nTEST FAIL\n\n"
                           "Verifying accuracy via baseline comparison...\n");
    ASSERT_STR_CONTAINS(t, "compliance accuracy: 49.900 (99.80%)\n");
    ib_free(t);
    ib_verify_outcome_deinit(&a);
    ib_verify_outcome_deinit(&p);
    /* TEST05 and TEST04 folders */
    summary("t05/mlperf_log_summary.txt", "Offline", "Samples per second: 97", "VALID", NULL);
    ASSERT_OK_ERR(ib_verify_test05_dir("res", "t05", "t05", &o, &p, &err), &err);
    ASSERT_INT_EQ(p.verdict, IB_VERIFY_PASS);
    ASSERT_TRUE(ib_path_exists("t05/verify_performance.txt"));
    summary("A/mlperf_log_summary.txt", "Offline", "Samples per second: 97", "VALID",
            "performance_issue_unique : 1");
    summary("B/mlperf_log_summary.txt", "Offline", "Samples per second: 96", "VALID",
            "performance_issue_same : 1");
    ASSERT_OK_ERR(ib_verify_test04_dir(NULL, "A", "B", "A", &o, &p, &err), &err);
    ASSERT_INT_EQ(p.verdict, IB_VERIFY_PASS);
    t = ib_test_slurp("A/verify_performance.txt");
    ASSERT_STR_EQ(t, "Verifying performance.\nTEST04-A score = 97\nTEST04-B score = 96\n"
                     "TEST PASS\n");
    ib_free(t);
    ib_verify_outcome_deinit(&p);
    ASSERT_STATUS(ib_verify_test05_dir("res", "nowhere", NULL, &o, &p, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "nowhere");
}
