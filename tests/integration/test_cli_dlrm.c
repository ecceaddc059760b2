/*
 * test_cli_dlrm.c - `inferbench run --benchmark dlrm-99|dlrm-99.9` end to end with the tiny
 * DLRM (tables capped at 1,000 rows) on a synthetic Criteo dataset: the submission tree with
 * accuracy.txt in accuracy-dlrm.py's format over every pair of every sample of the trace,
 * a Server run, the row cap stated in run.json, and a truncated dataset refused with exit
 * status 2 naming the file.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/criteo.h"
#include "test.h"

static int run(const char *args)
{
    return ib_test_system("%s/inferbench run --tiny --threads 1 --synth-samples 16 "
                          "--min-duration-ms 300 %s > out.txt 2> err.txt",
                          ib_test_bin_dir(), args);
}

TEST_TIMEOUT(cli_dlrm_submission_offline, 240)
{
    int rc = run("--benchmark dlrm-99 --quick --mode submission --system s --cache-dir c "
                 "--output-dir out");
    ASSERT_INT_EQ(rc, 0);
    char *acc = ib_test_slurp("out/s/dlrm-99/Offline/accuracy/accuracy.txt");
    /* every pair of the 16 synthetic samples, as the trace lists them */
    ASSERT_INT_EQ(ib_test_system("cp c/dlrm-99/gen*/data-tiny-seed1-n16/" IB_CRITEO_TRACE
                                 " trace.txt"),
                  0);
    char *trace = ib_test_slurp("trace.txt");
    unsigned long long a, b, c, pairs = 0;
    int lines = 0;
    for (char *p = trace; sscanf(p, "%llu, %llu, %llu", &a, &b, &c) == 3; lines++) {
        pairs += c;
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    ASSERT_INT_EQ(lines, 16);
    char want[96];
    snprintf(want, sizeof want, ", total=%llu, queries=16\nhash=", pairs);
    ASSERT_STR_CONTAINS(acc, "AUC=");
    ASSERT_STR_CONTAINS(acc, want);
    char *rj = ib_test_slurp("out/s/dlrm-99/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "embedding row cap 1000");
    ASSERT_STR_CONTAINS(rj, "\"submittable\": false");
    char *sum = ib_test_slurp("out/s/dlrm-99/Offline/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Scenario : Offline");
    ib_free(acc);
    ib_free(trace);
    ib_free(rj);
    ib_free(sum);
}

TEST_TIMEOUT(cli_dlrm_server_and_bad_data, 240)
{
    int rc = run("--benchmark dlrm-99.9 --quick --scenario Server --system s --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3); /* the 30 ms bound on a loaded 2-core machine */
    char *sum = ib_test_slurp("out/s/dlrm-99.9/Server/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Scenario : Server");
    ib_free(sum);
    /* a truncated binary: 7 bytes short of whole rows */
    ib_err err;
    ASSERT_OK_ERR(ib_mkdirs("bad", &err), &err);
    static const char row[160 * 2 - 7];
    ASSERT_OK(ib_file_write_all("bad/" IB_CRITEO_BIN, row, sizeof row, &err));
    ASSERT_OK(ib_file_write_all("bad/" IB_CRITEO_TRACE, "0, 1, 1\n", 8, &err));
    rc = run("--benchmark dlrm-99 --quick --data bad --output-dir out2");
    ASSERT_INT_EQ(rc, 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, IB_CRITEO_BIN);
    ASSERT_STR_CONTAINS(e, "not a whole number of 160-byte rows");
    ib_free(e);
}

/* --row-cap N reaches the entry (the table size and ids % N) and is stated in run.json;
 * a bad cap and a second entry-specific flag are usage errors (exit 2) naming the flag. */
TEST_TIMEOUT(cli_dlrm_row_cap_flag, 240)
{
    int rc = run("--benchmark dlrm-99 --quick --row-cap 777 --devices 0 --system s "
                 "--output-dir out");
    ASSERT_INT_EQ(rc, 0);
    char *rj = ib_test_slurp("out/s/dlrm-99/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "embedding row cap 777 ");
    ASSERT_STR_CONTAINS(rj, "\"devices_requested\": \"0\""); /* recorded; cpu ignores it */
    ASSERT_STR_CONTAINS(rj, "\"sut_timeout_ms\": 60000"); /* a fast model keeps the default */
    ASSERT_STR_CONTAINS(rj, "\"variant\": \"777\"");
    ib_free(rj);
    rc = run("--benchmark dlrm-99 --quick --sut-timeout-ms 123456 --system s --output-dir outt");
    ASSERT_INT_EQ(rc, 0);
    rj = ib_test_slurp("outt/s/dlrm-99/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "\"sut_timeout_ms\": 123456"); /* the user's value wins */
    ib_free(rj);
    rc = run("--benchmark dlrm-99 --quick --row-cap 12x --output-dir out2");
    ASSERT_INT_EQ(rc, 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "--row-cap '12x' is not a positive integer");
    ib_free(e);
    rc = run("--benchmark dlrm-99 --quick --row-cap 10 --variant 20 --output-dir out3");
    ASSERT_INT_EQ(rc, 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "--variant: already given as --row-cap 10");
    ib_free(e);
    rc = ib_test_system("%s/inferbench run --sut null --scenario Offline --devices 0 "
                        "--output-dir out4 > out.txt 2> err.txt", ib_test_bin_dir());
    ASSERT_INT_EQ(rc, 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "need --benchmark");
    ib_free(e);
}
