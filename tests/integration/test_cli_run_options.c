/*
 * test_cli_run_options.c - `inferbench run` options and exit codes: --help,
 * usage errors (2), config errors (2), INVALID (3), VALID (0), lower-case
 * scenario/mode names, --json, --trace, ./audit.config picked up from the
 * working directory with a warning (and --no-audit), and every scenario
 * writing all official files.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "test.h"

#define CLI "%s/inferbench run --sut null --system n "
/* where a null-SUT run's logs go: the results-tree layout, as a benchmark's */
#define PERF(dir, scen) dir "/n/nullmodel/" scen "/performance/run_1/"

TEST(cli_run_help_and_usage_errors)
{
    const char *b = ib_test_bin_dir();
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --help > help.txt", b), 0);
    char *h = ib_test_read("help.txt");
    ASSERT_STR_CONTAINS(h, "--sut null");
    ASSERT_STR_CONTAINS(h, "--rules current|v1.1");
    ib_free(h);
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Nope --output-dir o 2> e.txt", b), 2);
    char *e = ib_test_read("e.txt");
    ASSERT_STR_CONTAINS(e, "unknown scenario 'Nope'");
    ib_free(e);
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Server 2> /dev/null", b), 2); /* no --output-dir */
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Server --output-dir o --total-samples x 2>/dev/null", b), 2);
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Server --output-dir o --bogus 2>/dev/null", b), 2);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --sut gpu --scenario Server --output-dir o "
                                 "2>/dev/null", b),
                  2);
    /* did you mean: options and commands */
    ASSERT_INT_EQ(ib_test_system(CLI "--scenaro Server --output-dir o 2> e.txt", b), 2);
    e = ib_test_read("e.txt");
    ASSERT_STR_CONTAINS(e, "unknown option '--scenaro' (did you mean '--scenario'?)");
    ib_free(e);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench rnu --help 2> e.txt", b), 2);
    e = ib_test_read("e.txt");
    ASSERT_STR_CONTAINS(e, "'rnu' is not a command; did you mean 'run'?");
    ib_free(e);
    /* an output folder that is a file: a usage error (2) naming it */
    ASSERT_OK(ib_file_write_all("afile", "x", 1, NULL));
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Server --output-dir afile 2> e.txt", b), 2);
    e = ib_test_read("e.txt");
    ASSERT_STR_CONTAINS(e, "afile: exists and is not a directory");
    ib_free(e);
    /* a folder that cannot be written: the reason is said (root writes anywhere: skip) */
    ASSERT_OK(ib_mkdirs("ro", NULL));
    if (ib_test_system("chmod 555 ro && test ! -w ro") == 0) {
        ASSERT_INT_EQ(ib_test_system(CLI "--scenario Server --output-dir ro/x 2> e.txt", b), 2);
        e = ib_test_read("e.txt");
        ASSERT_STR_CONTAINS(e, "ro/x: cannot create directory: Permission denied");
        ib_free(e);
    }
}

TEST(cli_run_config_error_is_exit_2)
{
    /* key=value without spaces: the official ignores it silently, we refuse */
    FILE *f = fopen("user.conf", "w");
    fputs("*.Server.target_qps=1234\n", f);
    fclose(f);
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Server --user-conf user.conf --output-dir o "
                                     "2> e.txt",
                                 ib_test_bin_dir()),
                  2);
    char *e = ib_test_read("e.txt");
    ASSERT_STR_CONTAINS(e, "user.conf:1");
    ib_free(e);
}

TEST_TIMEOUT(cli_run_every_scenario_lower_case, 120)
{
    static const char *const scen[4] = {"singlestream", "multistream", "server", "offline"};
    for (int i = 0; i < 4; i++) {
        char dir[64];
        snprintf(dir, sizeof dir, "out_%s", scen[i]);
        int rc = ib_test_system(CLI "--scenario %s --mode performance --min-duration-ms 200 "
                                    "--min-query-count 700 --target-qps 2000 --quiet --output-dir "
                                    "%s > %s.txt",
                                ib_test_bin_dir(), scen[i], dir, dir);
        ASSERT_TRUE(rc == 0 || rc == 3); /* validity is a timing fact */
        static const char *const files[4] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt",
                                             "mlperf_log_accuracy.json", "result.json"};
        static const char *const sname[4] = {"SingleStream", "MultiStream", "Server",
                                             "Offline"};
        for (int k = 0; k < 4; k++) {
            char path[200];
            snprintf(path, sizeof path, "%s/n/nullmodel/%s/performance/run_1/%s", dir, sname[i],
                     files[k]);
            ASSERT_TRUE(ib_path_exists(path));
        }
        char path[160];
        snprintf(path, sizeof path, "%s.txt", dir);
        char *out = ib_test_read(path);
        ASSERT_STR_CONTAINS(out, "MLPerf Results Summary");
        ASSERT_STR_CONTAINS(out, i == 2 ? "Completed samples per second" : "Result is :");
        ib_free(out);
    }
}

TEST_TIMEOUT(cli_run_exit_codes_valid_and_invalid, 120)
{
    const char *b = ib_test_bin_dir();
    /* Offline with a null SUT cannot last min_duration: INVALID -> 3 */
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Offline --min-duration-ms 1000 --quiet "
                                     "--output-dir inv > inv.txt 2> inv.err",
                                 b),
                  3);
    char *e = ib_test_read("inv.txt");
    ASSERT_STR_CONTAINS(e, "Result is : INVALID");
    ASSERT_STR_CONTAINS(e, "Min duration satisfied : NO");
    ib_free(e);
    /* accuracy mode has no verdict beyond errors: 0 */
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Offline --mode AccuracyOnly --quiet --output-dir acc "
                                     "> acc.txt",
                                 b),
                  0);
    char *acc = ib_test_read("acc/n/nullmodel/Offline/accuracy/mlperf_log_accuracy.json");
    ASSERT_STR_CONTAINS(acc, "{ \"seq_id\" : 1023, ");
    ib_free(acc);
}

TEST_TIMEOUT(cli_run_json_trace_and_audit_config, 120)
{
    const char *b = ib_test_bin_dir();
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Offline --min-duration-ms 0 --json --trace "
                                     "--output-dir js > js.json",
                                 b),
                  0);
    /* --json prints run.json, the schema benchmark runs print too */
    char *j = ib_test_read("js.json");
    ASSERT_STR_CONTAINS(j, "\"format\": \"inferbench-run/2\"");
    ASSERT_STR_CONTAINS(j, "\"sut\": \"null\"");
    ASSERT_STR_CONTAINS(j, "\"result\": \"VALID\"");
    ASSERT_STR_CONTAINS(j, "null SUT (synthetic");
    ASSERT_STR_CONTAINS(j, "\"run\": \"performance/run_1\"");
    ib_free(j);
    j = ib_test_read(PERF("js", "Offline") "result.json");
    ASSERT_STR_CONTAINS(j, "\"format\": \"inferbench-result/2\"");
    ASSERT_STR_CONTAINS(j, "\"origin\": \"cli --min-duration-ms\"");
    ib_free(j);
    ASSERT_TRUE(ib_path_exists(PERF("js", "Offline") "mlperf_log_trace.json"));
    /* ./audit.config is applied (model "*"), with a warning on stderr and in the log */
    FILE *f = fopen("audit.config", "w");
    fputs("*.Offline.min_query_count = 777\n", f);
    fclose(f);
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Offline --min-duration-ms 0 --quiet --output-dir "
                                     "aud > /dev/null 2> aud.err",
                                 b),
                  0);
    char *err = ib_test_read("aud.err");
    ASSERT_STR_CONTAINS(err, "using ./audit.config");
    ib_free(err);
    char *d = ib_test_read(PERF("aud", "Offline") "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "Found Audit Config file (audit.config).");
    ASSERT_STR_CONTAINS(d, "\"requested_min_query_count\", \"value\": 777");
    ib_free(d);
    ASSERT_INT_EQ(ib_test_system(CLI "--scenario Offline --min-duration-ms 0 --quiet --no-audit "
                                     "--output-dir noaud > /dev/null 2> /dev/null",
                                 b),
                  0);
    d = ib_test_read(PERF("noaud", "Offline") "mlperf_log_detail.txt");
    ASSERT_TRUE(strstr(d, "Found Audit Config") == NULL);
    ib_free(d);
}
