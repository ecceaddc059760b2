/*
 * test_audit.c - `inferbench audit`: usage errors (2); TEST01, TEST04 (current and v1.1
 * TEST04-A/B) and TEST05 against the null SUT in the official compliance layout, with the
 * audit.config the LoadGen read; a TEST01 against a tampered accuracy run fails (3); and
 * TEST01 against resnet50 --tiny --quick.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "test.h"

#define AUDIT "%s/inferbench audit "
/* long enough for the current rules' early stopping, short enough for a test */
#define NULL_RUN "--sut null --system nullsut --scenario Server --min-duration-ms 300 " \
                 "--min-query-count 1000 --target-qps 3000 --quiet"

static void assert_contains_file(const char *path, const char *needle)
{
    char *t = ib_test_read(path);
    ASSERT_NOT_NULL(t);
    ASSERT_STR_CONTAINS(t, needle);
    ib_free(t);
}

/* 0, or 3 because a run came out INVALID (a timing fact on a loaded 2-core machine: the null
 * SUT's Server latencies), which the audit reports on stderr in err_file. */
static int timing_ok(int rc, const char *err_file)
{
    if (rc == 0)
        return 1;
    char *t = ib_test_read(err_file);
    int ok = rc == 3 && t && strstr(t, " is INVALID; the verdict compares it anyway");
    ib_free(t);
    return ok;
}

TEST(audit_usage_errors)
{
    const char *b = ib_test_bin_dir();
    ASSERT_INT_EQ(ib_test_system(AUDIT "--help > h.txt", b), 0);
    assert_contains_file("h.txt", "TEST01|TEST04|TEST05");
    ASSERT_INT_EQ(ib_test_system(AUDIT "2> e.txt", b), 2);
    assert_contains_file("e.txt", "which test");
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST99 --sut null --scenario Server --output-dir o "
                                       "2> e.txt", b), 2);
    assert_contains_file("e.txt", "unknown test 'TEST99'");
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST01 --sut null --scenario Server 2> e.txt", b), 2);
    assert_contains_file("e.txt", "--output-dir is required");
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST01 --sut null --scenario Server --mode accuracy "
                                       "--output-dir o 2> e.txt", b), 2);
    assert_contains_file("e.txt", "the audit sets the mode");
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST05 --sut null --scenario Server --rules current "
                                       "--output-dir o 2> e.txt", b), 2);
    assert_contains_file("e.txt", "only in the v1.1 rules");
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST01 --sut null --output-dir o 2> e.txt", b), 2);
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST01 --sut null --scenario Nope --output-dir o "
                                       "2> e.txt", b), 2);
    /* a bad run option is the run's usage error */
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST01 --sut null --scenario Server --bogus "
                                       "--output-dir o 2> e.txt", b), 2);
    assert_contains_file("e.txt", "unknown option '--bogus'");
}

TEST_TIMEOUT(audit_null_test01_pass_official_layout, 60)
{
    int rc = ib_test_system(AUDIT "TEST01 " NULL_RUN " --output-dir D > o.txt 2> e.txt",
                            ib_test_bin_dir());
    ASSERT_TRUE(timing_ok(rc, "e.txt"));
    const char *t = "D/nullsut/nullmodel/Server/TEST01";
    char p[256];
    snprintf(p, sizeof p, "%s/verify_accuracy.txt", t);
    assert_contains_file(p, "num_perf_log_data_mismatch = 0");
    assert_contains_file(p, "TEST PASS");
    snprintf(p, sizeof p, "%s/verify_performance.txt", t);
    assert_contains_file(p, rc == 0 ? "TEST PASS" : "TEST FAIL");
    snprintf(p, sizeof p, "%s/accuracy/mlperf_log_accuracy.json", t);
    assert_contains_file(p, "\"qsl_idx\"");
    snprintf(p, sizeof p, "%s/accuracy/accuracy.txt", t);
    assert_contains_file(p, "byte comparison with the accuracy run: TEST PASS");
    /* the loadgen read the official overrides */
    snprintf(p, sizeof p, "%s/performance/run_1/mlperf_log_detail.txt", t);
    assert_contains_file(p, "Found Audit Config file");
    assert_contains_file(p, "\"effective_accuracy_log_rng_seed\", \"value\": 720381539243781796");
    ASSERT_TRUE(ib_path_exists("D/nullsut/nullmodel/Server/TEST01/performance/run_1/"
                               "mlperf_log_summary.txt"));
    assert_contains_file("D/.audit/TEST01/audit.config", "*.*.accuracy_log_sampling_target = 4096");
    assert_contains_file("o.txt", "verify_accuracy.txt:    TEST PASS");
}

/* Corrupt every response of the accuracy run: TEST01 must find the mismatches. */
TEST_TIMEOUT(audit_null_test01_detects_mismatch, 60)
{
    const char *b = ib_test_bin_dir();
    ASSERT_TRUE(timing_ok(ib_test_system(AUDIT "TEST01 " NULL_RUN " --output-dir D > o.txt "
                                               "2> e.txt", b),
                          "e.txt"));
    const char *acc = "D/.audit/ref/nullsut/nullmodel/Server/accuracy/mlperf_log_accuracy.json";
    char *t = ib_test_read(acc);
    ASSERT_NOT_NULL(t);
    int changed = 0;
    for (char *q = t; (q = strstr(q, "\"data\" : \"")); q += 10) {
        q[10] = q[10] == 'F' ? 'E' : 'F';
        changed++;
    }
    ASSERT_INT_GT(changed, 100);
    ASSERT_OK(ib_file_write_all(acc, t, strlen(t), NULL));
    ib_free(t);
    ASSERT_INT_EQ(ib_test_system(AUDIT "TEST01 " NULL_RUN " --results D/.audit/ref "
                                       "--output-dir D2 > o2.txt 2> e2.txt", b),
                  3);
    assert_contains_file("D2/nullsut/nullmodel/Server/TEST01/verify_accuracy.txt", "TEST FAIL");
    assert_contains_file("o2.txt", "verify_accuracy.txt:    TEST FAIL");
    /* the reference run was reused, not redone */
    ASSERT_FALSE(ib_path_exists("D2/.audit/ref"));
}

TEST_TIMEOUT(audit_null_test04_and_test05, 90)
{
    const char *b = ib_test_bin_dir();
    ASSERT_TRUE(timing_ok(ib_test_system(AUDIT "TEST04 " NULL_RUN " --output-dir C > o.txt "
                                               "2>e.txt", b),
                          "e.txt"));
    assert_contains_file("C/nullsut/nullmodel/Server/TEST04/verify_performance.txt",
                         "Verifying performance.");
    assert_contains_file("C/nullsut/nullmodel/Server/TEST04/performance/run_1/mlperf_log_detail.txt",
                         "\"effective_performance_issue_same\", \"value\": true");
    ASSERT_FALSE(ib_path_exists("C/nullsut/nullmodel/Server/TEST04/verify_accuracy.txt"));

    ASSERT_TRUE(timing_ok(ib_test_system(AUDIT "TEST04 " NULL_RUN " --rules v1.1 --system box "
                                               "--output-dir V > o.txt 2>e.txt", b),
                          "e.txt"));
    assert_contains_file("V/box/nullmodel/Server/TEST04-A/verify_performance.txt",
                         "TEST04-B score");
    assert_contains_file("V/box/nullmodel/Server/TEST04-A/performance/run_1/mlperf_log_detail.txt",
                         "\"effective_performance_issue_unique\", \"value\": true");
    ASSERT_TRUE(ib_path_exists("V/box/nullmodel/Server/TEST04-B/performance/run_1/"
                               "mlperf_log_summary.txt"));
    ASSERT_FALSE(ib_path_exists("V/box/nullmodel/Server/TEST04-B/verify_performance.txt"));

    ASSERT_TRUE(timing_ok(ib_test_system(AUDIT "TEST05 " NULL_RUN " --output-dir F > o.txt "
                                               "2>e.txt", b),
                          "e.txt"));
    assert_contains_file("F/nullsut/nullmodel/Server/TEST05/verify_performance.txt",
                         "Verifying performance.");
    assert_contains_file("F/nullsut/nullmodel/Server/TEST05/performance/run_1/mlperf_log_detail.txt",
                         "\"effective_qsl_rng_seed\", \"value\": 313588358309856706");
}

TEST_TIMEOUT(audit_resnet50_tiny_quick_test01, 240)
{
    int rc = ib_test_system(AUDIT "TEST01 --benchmark resnet50 --tiny --quick --quiet --system sys "
                                  "--output-dir R > o.txt 2> e.txt",
                            ib_test_bin_dir());
    /* the byte comparison is deterministic; the +-10 % performance delta of two 1-s runs on a
     * shared machine is a timing fact */
    ASSERT_TRUE(rc == 0 || rc == 3);
    const char *t = "R/sys/resnet50/Offline/TEST01";
    char p[256];
    snprintf(p, sizeof p, "%s/verify_accuracy.txt", t);
    assert_contains_file(p, "TEST PASS");
    snprintf(p, sizeof p, "%s/verify_performance.txt", t);
    assert_contains_file(p, "Verifying performance.");
    snprintf(p, sizeof p, "%s/accuracy/mlperf_log_accuracy.json", t);
    ASSERT_TRUE(ib_path_exists(p));
    snprintf(p, sizeof p, "%s/performance/run_1/mlperf_log_detail.txt", t);
    assert_contains_file(p, "Found Audit Config file");
}
