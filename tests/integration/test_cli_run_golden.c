/*
 * test_cli_run_golden.c - every ../shared/golden case through the CLI
 * (`inferbench run --sut null ... --record-issued`), compared with
 * expected.json by the same checker as the library tests
 * (tests/unit/test_loadgen_logs_golden.c), plus the exit code.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/loadgen.h"
#include "test.h"

int golden_compare(const char *case_dir, const char *out_dir);
int golden_case_dir(const char *name, char *buf, size_t n);

/* Reads model/scenario/mode/QSL counts/rules from case.json with sed-free
 * string search (the file is flat for those keys). */
static void field(const char *json, const char *key, char *out, size_t n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    out[0] = '\0';
    if (!p)
        return;
    p += strlen(pat);
    size_t k = 0;
    if (*p == '"')
        for (p++; *p && *p != '"' && k + 1 < n; p++)
            out[k++] = *p;
    else
        for (; *p && *p != ',' && *p != '\n' && *p != '}' && k + 1 < n; p++)
            out[k++] = *p;
    out[k] = '\0';
}

static void run_golden_cli(const char *name, int want_exit_valid)
{
    char dir[4096];
    if (golden_case_dir(name, dir, sizeof dir) != IB_OK)
        TEST_SKIP("../shared/golden is not available");
    char path[8192], *cj = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/case.json", dir);
    ASSERT_OK(ib_file_read_all(path, 0, &cj, &len, NULL));
    char model[64], scen[64], mode[64], tot[32], perf[32], rules[16];
    field(cj, "model", model, sizeof model);
    field(cj, "scenario", scen, sizeof scen);
    field(cj, "mode", mode, sizeof mode);
    field(cj, "total_sample_count", tot, sizeof tot);
    field(cj, "performance_sample_count", perf, sizeof perf);
    field(cj, "rules", rules, sizeof rules);
    ib_free(cj);
    char audit[8300] = "";
    snprintf(path, sizeof path, "%s/audit.config", dir);
    if (ib_path_exists(path))
        snprintf(audit, sizeof audit, "--audit-conf %s", path);
    int rc = ib_test_system("%s/inferbench run --sut null --model %s --scenario %s --mode %s "
                            "--mlperf-conf %s/mlperf.conf --user-conf %s/user.conf %s "
                            "--total-samples %s --performance-samples %s --rules %s "
                            "--system g --output-dir out --record-issued --quiet > stdout.txt",
                            ib_test_bin_dir(), model, scen, mode, dir, dir, audit, tot, perf,
                            rules[0] ? rules : "current");
    /* VALID/INVALID is a timing fact for most cases; config errors (2) and
     * runtime errors (1) are never acceptable */
    ASSERT_TRUE(rc == 0 || rc == 3);
    if (want_exit_valid >= 0)
        ASSERT_INT_EQ(rc, want_exit_valid);
    /* the results-tree layout: accuracy/ for an accuracy run, else performance/run_1/ */
    enum ib_lg_mode m = IB_LG_MODE_PERFORMANCE;
    enum ib_lg_scenario sc = IB_LG_SCENARIO_SERVER;
    ASSERT_OK(ib_lg_mode_parse(mode, &m));
    ASSERT_OK(ib_lg_scenario_parse(scen, &sc));
    char logs[512];
    snprintf(logs, sizeof logs, "out/g/%s/%s/%s", model, ib_lg_scenario_name(sc),
             m == IB_LG_MODE_ACCURACY ? "accuracy" : "performance/run_1");
    ASSERT_INT_EQ(golden_compare(dir, logs), 0);
    /* the summary went to stdout */
    char *out = NULL;
    ASSERT_OK(ib_file_read_all("stdout.txt", 0, &out, &len, NULL));
    ASSERT_STR_CONTAINS(out, "No errors encountered during test.");
    ib_free(out);
    snprintf(path, sizeof path, "%s/result.json", logs);
    ASSERT_TRUE(ib_path_exists(path));
}

TEST(cli_run_golden_01_offline_perf_p1000)
{
    run_golden_cli("01_offline_perf_p1000", 3); /* min duration cannot be met */
}
TEST(cli_run_golden_02_offline_accuracy_p999)
{
    run_golden_cli("02_offline_accuracy_p999", 0);
}
TEST(cli_run_golden_03_server_resnet50_v61)
{
    run_golden_cli("03_server_resnet50_v61", -1);
}
TEST(cli_run_golden_04_server_v11seeds_p777)
{
    run_golden_cli("04_server_v11seeds_p777", -1);
}
TEST(cli_run_golden_05_singlestream_minq2500_p1000)
{
    run_golden_cli("05_singlestream_minq2500_p1000", -1);
}
TEST(cli_run_golden_06_multistream_spq8)
{
    run_golden_cli("06_multistream_spq8", -1);
}
TEST(cli_run_golden_07_server_fisher_yates_p70000)
{
    run_golden_cli("07_server_fisher_yates_p70000", -1);
}
TEST(cli_run_golden_08_server_test01_sampling)
{
    run_golden_cli("08_server_test01_sampling", -1);
}
TEST(cli_run_golden_09_singlestream_test04_same)
{
    run_golden_cli("09_singlestream_test04_same", -1);
}
TEST(cli_run_golden_10_server_issue_unique)
{
    run_golden_cli("10_server_issue_unique", 3); /* INVALID by design */
}
TEST(cli_run_golden_11_server_bert99_model_keys)
{
    run_golden_cli("11_server_bert99_model_keys", -1);
}
TEST(cli_run_golden_v11_01_offline_perf_p1000)
{
    run_golden_cli("v11_01_offline_perf_p1000", 3);
}
TEST(cli_run_golden_v11_02_offline_accuracy_p875)
{
    run_golden_cli("v11_02_offline_accuracy_p875", 0);
}
TEST(cli_run_golden_v11_03_server_resnet50_v11_official)
{
    run_golden_cli("v11_03_server_resnet50_v11_official", -1);
}
TEST(cli_run_golden_v11_04_singlestream_minq1500_p1001)
{
    run_golden_cli("v11_04_singlestream_minq1500_p1001", -1);
}
TEST(cli_run_golden_v11_05_multistream_v11seeds_spq6)
{
    run_golden_cli("v11_05_multistream_v11seeds_spq6", -1);
}
