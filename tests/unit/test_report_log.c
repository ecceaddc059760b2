/*
 * test_report_log.c - src/report run-log parsing: the official metric per scenario
 * and rules version from detail logs (Dell v1.1, golden v1.1 and 6.0.17 vectors),
 * the summary fallback, INVALID runs, and the bad-input cases (truncated logs,
 * invalid JSON lines, missing files, accuracy-mode logs, huge values), each with a
 * message naming the file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "inferbench/report.h"
#include "report/accuracy.h"
#include "test.h"

#define DELL "data/mlperf-inference-v1.1/closed/Dell/results"

static char *slurp(const char *rel, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ib_test_shared_dir(), rel);
    char *text = NULL;
    ib_err err;
    if (ib_file_read_all(path, 0, &text, len, &err) != IB_OK)
        TEST_SKIP("shared data not found (../shared)");
    return text;
}

static int parse_file(const char *rel, bool detail, const char *bench, const char *version,
                      ib_report_run *run, ib_err *err)
{
    size_t len = 0;
    char *text = slurp(rel, &len);
    int rc = detail ? ib_report_run_parse_detail(text, len, rel, bench, version, run, err)
                    : ib_report_run_parse_summary(text, len, rel, bench, version, run, err);
    ib_free(text);
    return rc;
}

TEST(report_log_v11_offline_detail)
{
    ib_report_run run;
    ib_err err;
    ASSERT_OK_ERR(parse_file(DELL "/R7525_A30x3_TRT/resnet50/Offline/performance/run_1/"
                                  "mlperf_log_detail.txt",
                             true, "resnet50", NULL, &run, &err),
                  &err);
    ASSERT_INT_EQ(run.source, IB_REPORT_SOURCE_DETAIL);
    ASSERT_INT_EQ(run.scenario, IB_REPORT_SCENARIO_OFFLINE);
    ASSERT_INT_EQ(run.validity, IB_REPORT_VALIDITY_VALID);
    ASSERT_STR_EQ(run.version, "v1.1");
    ASSERT_INT_EQ(run.era, IB_REPORT_ERA_V1);
    ASSERT_DBL_EQ(run.metric, 53928.1);
    ASSERT_STR_EQ(run.unit, "samples/s");
    ASSERT_STR_EQ(run.metric_key, "result_samples_per_second");
    ASSERT_TRUE(run.higher_is_better);
    ASSERT_DBL_EQ(run.latency_pct_ns[4], 661641503089.0); /* p99 */
    ASSERT_STR_EQ(run.power_begin, "08-16-2021 17:11:08.699");
}

TEST(report_log_v11_server_uses_scheduled)
{
    ib_report_run run;
    ib_err err;
    ASSERT_OK_ERR(parse_file(DELL "/R7525_A100-PCIE-40GBx3_TRT/resnet50/Server/performance/run_1/"
                                  "mlperf_log_detail.txt",
                             true, "resnet50", NULL, &run, &err),
                  &err);
    /* v1.1: scheduled samples/s (91264.2), not completed (91262.7) */
    ASSERT_DBL_EQ(run.metric, 91264.2);
    ASSERT_DBL_EQ(run.server_completed_per_sec, 91262.7);
    ASSERT_STR_EQ(run.metric_key, "result_scheduled_samples_per_sec");
    ASSERT_STR_EQ(run.unit, "queries/s");
    ASSERT_DBL_EQ(run.target_latency_ns, 15000000.0);
}

TEST(report_log_v11_singlestream_p90)
{
    ib_report_run run;
    ib_err err;
    ASSERT_OK_ERR(parse_file("golden/v11_04_singlestream_minq1500_p1001/mlperf_log_detail.txt",
                             true, NULL, NULL, &run, &err),
                  &err);
    ASSERT_INT_EQ(run.scenario, IB_REPORT_SCENARIO_SINGLE_STREAM);
    ASSERT_STR_EQ(run.metric_key, "result_90.00_percentile_latency_ns");
    ASSERT_NEAR(run.metric, 151e-6, 1e-12); /* 151 ns in ms */
    ASSERT_STR_EQ(run.unit, "ms");
    ASSERT_FALSE(run.higher_is_better);
}

TEST(report_log_v11_multistream_samples_per_query)
{
    ib_report_run run;
    ib_err err;
    ASSERT_OK_ERR(parse_file("golden/v11_05_multistream_v11seeds_spq6/mlperf_log_detail.txt", true,
                             NULL, NULL, &run, &err),
                  &err);
    ASSERT_INT_EQ(run.scenario, IB_REPORT_SCENARIO_MULTI_STREAM);
    ASSERT_DBL_EQ(run.metric, 6.0);
    ASSERT_STR_EQ(run.unit, "samples/query");
    ASSERT_TRUE(run.higher_is_better);
    ASSERT_DBL_EQ(run.latency_pct_ns[4], 122717.0); /* per-query p99 */
}

TEST(report_log_current_server_uses_completed)
{
    ib_report_run run;
    ib_err err;
    ASSERT_OK_ERR(parse_file("golden/03_server_resnet50_v61/mlperf_log_detail.txt", true,
                             "resnet50", NULL, &run, &err),
                  &err);
    ASSERT_STR_EQ(run.version, "v6.0");
    ASSERT_INT_EQ(run.era, IB_REPORT_ERA_CURRENT);
    ASSERT_DBL_EQ(run.metric, 2514.24);
    ASSERT_STR_EQ(run.metric_key, "result_completed_samples_per_sec");
    /* the same log read under v4.0 rules reports the scheduled rate */
    ASSERT_OK_ERR(parse_file("golden/03_server_resnet50_v61/mlperf_log_detail.txt", true,
                             "resnet50", "v4.0", &run, &err),
                  &err);
    ASSERT_INT_EQ(run.era, IB_REPORT_ERA_ES);
    ASSERT_DBL_EQ(run.metric, 2514.37);
    ASSERT_STR_EQ(run.version, "v4.0");
}

TEST(report_log_current_early_stopping_latencies)
{
    ib_report_run run;
    ib_err err;
    ASSERT_OK_ERR(parse_file("golden/05_singlestream_minq2500_p1000/mlperf_log_detail.txt", true,
                             NULL, NULL, &run, &err),
                  &err);
    ASSERT_STR_EQ(run.metric_key, "early_stopping_latency_ss");
    ASSERT_NEAR(run.metric, 130e-6, 1e-12);
    ASSERT_OK_ERR(parse_file("golden/06_multistream_spq8/mlperf_log_detail.txt", true, NULL, NULL,
                             &run, &err),
                  &err);
    ASSERT_STR_EQ(run.metric_key, "early_stopping_latency_ms");
    ASSERT_NEAR(run.metric, 13229e-6, 1e-12);
    ASSERT_STR_EQ(run.unit, "ms");
    ASSERT_DBL_EQ(run.latency_pct_ns[4], 2914.0); /* per-query percentiles win */
}

TEST(report_log_invalid_runs)
{
    ib_report_run run;
    ib_err err;
    ASSERT_OK_ERR(parse_file("golden/01_offline_perf_p1000/mlperf_log_detail.txt", true, NULL, NULL,
                             &run, &err),
                  &err);
    ASSERT_INT_EQ(run.validity, IB_REPORT_VALIDITY_INVALID);
    ASSERT_STR_CONTAINS(run.invalid_reason, "Increase expected QPS");
    ASSERT_OK_ERR(parse_file("golden/10_server_issue_unique/mlperf_log_summary.txt", false, NULL,
                             NULL, &run, &err),
                  &err);
    ASSERT_INT_EQ(run.validity, IB_REPORT_VALIDITY_INVALID);
    ASSERT_STR_CONTAINS(run.invalid_reason, "Increase the target QPS");
    ASSERT_DBL_EQ(run.metric, 983.30); /* current era: completed headline */
}

TEST(report_log_summary_fallback_matches_detail)
{
    static const struct {
        const char *dir;
        double tol;
    } cases[] = {
        {DELL "/R7525_A100-PCIE-40GBx3_TRT/resnet50/Server/performance/run_1", 0.05},
        {DELL "/R7525_A30x3_TRT/bert-99/Offline/performance/run_1", 0.05},
        {"golden/03_server_resnet50_v61", 0.005},
        {"golden/05_singlestream_minq2500_p1000", 1e-12},
        {"golden/06_multistream_spq8", 1e-12},
        {"golden/v11_04_singlestream_minq1500_p1001", 1e-12},
        {"golden/v11_05_multistream_v11seeds_spq6", 1e-12},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char d[512], s[512];
        snprintf(d, sizeof d, "%s/mlperf_log_detail.txt", cases[i].dir);
        snprintf(s, sizeof s, "%s/mlperf_log_summary.txt", cases[i].dir);
        ib_report_run a, b;
        ib_err err;
        ASSERT_OK_ERR(parse_file(d, true, NULL, NULL, &a, &err), &err);
        ASSERT_OK_ERR(parse_file(s, false, NULL, NULL, &b, &err), &err);
        ASSERT_INT_EQ(b.source, IB_REPORT_SOURCE_SUMMARY);
        ASSERT_INT_EQ(a.scenario, b.scenario);
        /* a summary tells ES from CURRENT only through the Server headline */
        if (a.scenario == IB_REPORT_SCENARIO_SERVER || a.era == IB_REPORT_ERA_V1)
            ASSERT_INT_EQ(a.era, b.era);
        ASSERT_STR_EQ(a.unit, b.unit);
        ASSERT_INT_EQ(a.validity, b.validity);
        /* summaries print 2 decimals, detail logs 6 significant digits */
        ASSERT_NEAR(a.metric, b.metric, cases[i].tol * fmax(1.0, a.metric / 1000));
    }
}

TEST(report_log_accuracy_log_refused)
{
    ib_report_run run;
    ib_err err;
    ASSERT_STATUS(parse_file("golden/02_offline_accuracy_p999/mlperf_log_detail.txt", true, NULL,
                             NULL, &run, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "AccuracyOnly");
    ASSERT_STR_CONTAINS(err.msg, "02_offline_accuracy_p999/mlperf_log_detail.txt");
}

TEST(report_log_truncated_mid_record)
{
    size_t len = 0;
    char *text =
        slurp(DELL "/R7525_A30x3_TRT/rnnt/Server/performance/run_1/mlperf_log_detail.txt", &len);
    /* cut in the middle of the last line: the record is incomplete */
    ib_report_run run;
    ib_err err;
    ASSERT_STATUS(ib_report_run_parse_detail(text, len - 40, "x/mlperf_log_detail.txt", NULL, NULL,
                                             &run, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "x/mlperf_log_detail.txt:");
    ASSERT_STR_CONTAINS(err.msg, "truncated");
    /* cut at a line boundary before the results: no result_validity */
    char *cut = strstr(text, ":::MLLOG {\"key\": \"result_validity\"");
    ASSERT_NOT_NULL(cut);
    ASSERT_STATUS(
        ib_report_run_parse_detail(text, (size_t)(cut - text), "y.txt", NULL, NULL, &run, &err),
        IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "y.txt: no result_validity");
    ib_free(text);
}

TEST(report_log_invalid_json_line_named)
{
    size_t len = 0;
    char *text =
        slurp(DELL "/R7525_A30x3_TRT/rnnt/Server/performance/run_1/mlperf_log_detail.txt", &len);
    /* break line 5: replace its first '{' after the prefix */
    char *p = text;
    for (int i = 1; i < 5; i++)
        p = strchr(p, '\n') + 1;
    p[9] = '[';
    ib_report_run run;
    ib_err err;
    ASSERT_STATUS(ib_report_run_parse_detail(text, len, "d.txt", NULL, NULL, &run, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "d.txt:5: invalid JSON line 5");
    ib_free(text);
}

TEST(report_log_garbage_and_edge_values)
{
    ib_report_run run;
    ib_err err;
    const char *g = "hello world\n";
    ASSERT_STATUS(ib_report_run_parse_detail(g, strlen(g), "g.txt", NULL, NULL, &run, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "g.txt:1: not a LoadGen detail log");
    ASSERT_STATUS(ib_report_run_parse_detail("", 0, "e.txt", NULL, NULL, &run, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "e.txt: empty file");
    /* a 64-bit unsigned seed (> INT64_MAX) is fine; a double overflow is an error */
    const char *ok =
        ":::MLLOG {\"key\": \"effective_scenario\", \"value\": \"Offline\"}\n"
        ":::MLLOG {\"key\": \"effective_schedule_rng_seed\", \"value\": 10051496985653635065}\n"
        ":::MLLOG {\"key\": \"result_validity\", \"value\": \"VALID\"}\n"
        ":::MLLOG {\"key\": \"result_samples_per_second\", \"value\": 12.5}\n";
    ASSERT_OK_ERR(ib_report_run_parse_detail(ok, strlen(ok), "ok.txt", NULL, "v1.1", &run, &err),
                  &err);
    ASSERT_DBL_EQ(run.metric, 12.5);
    const char *huge = ":::MLLOG {\"key\": \"effective_scenario\", \"value\": \"Offline\"}\n"
                       ":::MLLOG {\"key\": \"result_validity\", \"value\": \"VALID\"}\n"
                       ":::MLLOG {\"key\": \"result_samples_per_second\", \"value\": 1e999}\n";
    ASSERT_STATUS(ib_report_run_parse_detail(huge, strlen(huge), "h.txt", NULL, NULL, &run, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "h.txt:3");
    const char *neg = ":::MLLOG {\"key\": \"effective_scenario\", \"value\": \"Offline\"}\n"
                      ":::MLLOG {\"key\": \"result_validity\", \"value\": \"VALID\"}\n"
                      ":::MLLOG {\"key\": \"result_samples_per_second\", \"value\": -5}\n";
    ASSERT_STATUS(ib_report_run_parse_detail(neg, strlen(neg), "n.txt", NULL, NULL, &run, &err),
                  IB_EFORMAT);
    const char *nometric = ":::MLLOG {\"key\": \"effective_scenario\", \"value\": \"Server\"}\n"
                           ":::MLLOG {\"key\": \"result_validity\", \"value\": \"VALID\"}\n";
    ASSERT_STATUS(
        ib_report_run_parse_detail(nometric, strlen(nometric), "m.txt", NULL, "v1.1", &run, &err),
        IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "result_scheduled_samples_per_sec");
}

TEST(report_log_summary_bad_inputs)
{
    ib_report_run run;
    ib_err err;
    size_t len = 0;
    char *text = slurp(DELL "/R7525_A30x3_TRT/resnet50/Server/performance/run_1/"
                            "mlperf_log_summary.txt",
                       &len);
    char *cut = strstr(text, "Result is");
    ASSERT_NOT_NULL(cut);
    ASSERT_STATUS(
        ib_report_run_parse_summary(text, (size_t)(cut - text), "s.txt", NULL, NULL, &run, &err),
        IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "s.txt: no 'Result is :' line");
    text[10] = '\0';
    ASSERT_STATUS(ib_report_run_parse_summary(text, len, "b.txt", NULL, NULL, &run, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "NUL");
    ib_free(text);
}

TEST(report_log_run_folder_missing_files)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run_1", ib_test_tmpdir());
    ASSERT_INT_EQ(mkdir(dir, 0755), 0);
    ib_report_run run;
    ib_err err;
    ASSERT_STATUS(ib_report_run_load(dir, NULL, NULL, &run, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, dir);
    ASSERT_STR_CONTAINS(err.msg, "mlperf_log_detail.txt");
    /* a summary alone is used as the fallback */
    size_t len = 0;
    char *text = slurp("golden/v11_03_server_resnet50_v11_official/mlperf_log_summary.txt", &len);
    char path[4200];
    snprintf(path, sizeof path, "%s/mlperf_log_summary.txt", dir);
    ASSERT_OK(ib_file_write_all(path, text, len, &err));
    ib_free(text);
    ASSERT_OK_ERR(ib_report_run_load(dir, "resnet50", NULL, &run, &err), &err);
    ASSERT_INT_EQ(run.source, IB_REPORT_SOURCE_SUMMARY);
    ASSERT_DBL_EQ(run.metric, 2568.42);
    ASSERT_INT_EQ(run.era, IB_REPORT_ERA_V1);
}

TEST(report_log_accuracy_formats)
{
    static const struct {
        const char *bench, *text, *metric;
        double value;
    } cases[] = {
        {"resnet50", "accuracy=76.040%, good=38020, total=50000\nhash=ab\n", "acc", 76.040},
        {"ssd-resnet34", " Average Precision (AP) = 0.201\nmAP=20.117%\n", "mAP", 20.117},
        {"retinanet", "{'Total': 37.57, 'x': 1}\n", "mAP", 37.57},
        {"bert-99", "{\"exact_match\": 83.65, \"f1\": 90.86087496792462}\n", "F1",
         90.86087496792462},
        {"dlrm-99.9", "AUC=80.185%, accuracy=96.608%, good=86114148\n", "AUC", 80.185},
        {"rnnt", "Word Error Rate: 7.44548%, accuracy=92.5545108119687%\n", "WER-accuracy",
         92.5545108119687},
        {"3d-unet-99", "Accuracy: mean = 0.85407, whole tumor = 0.9142\n", "DICE", 0.85407},
        {"gptj-99", "{'rouge1': 42.9865, 'rouge2': 20.1}\n", "ROUGE1", 42.9865},
        {"stable-diffusion-xl", "{'FID_SCORE': 23.1, 'CLIP_SCORE': 31.75}\n", "CLIP_SCORE", 31.75},
        {NULL, "noise\nAUC=79.5%\n", "AUC", 79.5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ib_rpt_accuracy acc;
        ib_err err;
        ASSERT_OK_ERR(ib_rpt_accuracy_parse(cases[i].text, strlen(cases[i].text), cases[i].bench,
                                            "accuracy.txt", &acc, &err),
                      &err);
        ASSERT_STR_EQ(acc.metric, cases[i].metric);
        ASSERT_DBL_EQ(acc.value, cases[i].value);
    }
    ib_rpt_accuracy acc;
    ib_err err;
    /* the benchmark's own metric only: a resnet50 file with an AUC line has no accuracy */
    ASSERT_STATUS(ib_rpt_accuracy_parse("AUC=80%\n", 8, "resnet50", "a.txt", &acc, &err),
                  IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "a.txt: no acc accuracy line");
    /* the real 3D U-Net file: the DICE line after hundreds of progress lines */
    size_t len = 0;
    char *text = slurp(DELL "/R7525_A30x3_TRT/3d-unet-99/Offline/accuracy/accuracy.txt", &len);
    ASSERT_OK(ib_rpt_accuracy_parse(text, len, "3d-unet-99", "x", &acc, &err));
    ASSERT_DBL_EQ(acc.value, 0.85407);
    ASSERT_TRUE(acc.has_hash);
    ib_free(text);
}
