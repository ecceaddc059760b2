/*
 * test_check_dell.c - inferbench's checker and verifiers on the published Dell MLPerf v1.1
 * results (../shared/data/mlperf-inference-v1.1/closed/Dell).
 *
 * 1. Replaying the verification of every compliance folder (32 TEST01, 32 TEST05, 12
 *    TEST04) on Dell's logs reproduces Dell's verdicts; verify_performance.txt is reproduced
 *    byte for byte except for six files whose "reference score" is not the score of the
 *    submission run now in the tree (Dell redid three A30 Server runs after the compliance
 *    runs) - those differences are checked to be exactly that. The accuracy logs are
 *    truncated, so the TEST01 byte comparison can only be partial (INCONCLUSIVE, never a
 *    mismatch), and the five TEST FAIL folders pass through their fallback files
 *    (benchmarks.md §2.2).
 * 2. `inferbench check` on the tree: no errors, and exactly the 11 justified warnings.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/compliance.h"
#include "test.h"

/* printf into a 4096-byte path buffer */
static char *pathf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *pathf(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, 4096, fmt, ap);
    va_end(ap);
    return buf;
}

static const char *dell_root(void)
{
    static char root[4096];
    pathf(root, "%s/data/mlperf-inference-v1.1/closed/Dell", ib_test_shared_dir());
    if (!ib_path_is_dir(root))
        TEST_SKIP("../shared/data/mlperf-inference-v1.1 is absent");
    return root;
}

/* The value after "<label> = " on its line, or "". */
static void line_value(const char *text, const char *label, char *out, size_t n)
{
    out[0] = '\0';
    const char *p = strstr(text, label);
    if (!p)
        return;
    p += strlen(label);
    const char *e = strchr(p, '\n');
    snprintf(out, n, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
}

/* The score of a v1.1 summary's metric line ("Samples per second: X", ...). */
static void summary_score(const char *path, char *out, size_t n)
{
    char *t = ib_test_slurp(path);
    const char *labels[] = {"Scheduled samples per second : ", "Samples per second: ", NULL};
    out[0] = '\0';
    for (int i = 0; labels[i] && !out[0]; i++)
        line_value(t, labels[i], out, n);
    ib_free(t);
}

static const char *const g_systems[] = {"R7525_A100-PCIE-40GBx3_TRT", "R7525_A30x3_TRT", NULL};
static const char *const g_benches[] = {"3d-unet-99",   "3d-unet-99.9", "bert-99", "bert-99.9",
                                        "dlrm-99",      "dlrm-99.9",    "resnet50", "rnnt",
                                        "ssd-resnet34", NULL};
static const char *const g_scen[] = {"Offline", "Server", NULL};

/* Compare our verify_performance text with Dell's; returns 1 when only a stale reference
 * score differs (checked against the submission summary), 0 when identical. */
static int compare_perf(const char *ours, const char *dell_file, const char *ref_summary)
{
    char *theirs = ib_test_slurp(dell_file);
    int stale = 0;
    if (strcmp(ours, theirs)) {
        /* the verdict and the test score must agree; the reference score must be the one of
         * the submission summary in the tree (ours) while Dell's is another one */
        char a[64], b[64], sc[64];
        line_value(ours, "test score = ", a, sizeof a);
        line_value(theirs, "test score = ", b, sizeof b);
        ASSERT_STR_EQ(a, b);
        ASSERT_STR_CONTAINS(theirs, "TEST PASS");
        ASSERT_STR_CONTAINS(ours, "TEST PASS");
        line_value(ours, "reference score = ", a, sizeof a);
        line_value(theirs, "reference score = ", b, sizeof b);
        summary_score(ref_summary, sc, sizeof sc);
        ASSERT_STR_EQ(a, sc);
        ASSERT_TRUE(strcmp(a, b) != 0);
        stale = 1;
    }
    ib_free(theirs);
    return stale;
}

TEST_TIMEOUT(check_dell_verification_replay, 300)
{
    const char *root = dell_root();
    int n01 = 0, n05 = 0, n04 = 0, stale = 0, fail01 = 0, fallback_pass = 0;
    for (int si = 0; g_systems[si]; si++)
        for (int bi = 0; g_benches[bi]; bi++)
            for (int ci = 0; g_scen[ci]; ci++) {
                char res[4096], comp[4096], t[4096], out[4096], dell[4096], ref[4096];
                pathf(res, "%s/results/%s/%s/%s", root, g_systems[si],
                         g_benches[bi], g_scen[ci]);
                pathf(comp, "%s/compliance/%s/%s/%s", root, g_systems[si],
                         g_benches[bi], g_scen[ci]);
                if (!ib_path_is_dir(res))
                    continue;
                pathf(ref, "%s/performance/run_1/mlperf_log_summary.txt", res);
                ib_verify_options o;
                ib_verify_options_defaults(&o);
                o.benchmark = g_benches[bi];
                ib_verify_outcome acc, perf;
                ib_verify_outcome_init(&acc);
                ib_verify_outcome_init(&perf);
                ib_err err;
                /* TEST01 */
                pathf(t, "%s/TEST01", comp);
                pathf(out, "out/%s/%s/%s/TEST01", g_systems[si], g_benches[bi],
                         g_scen[ci]);
                ASSERT_OK_ERR(ib_verify_test01_dir(res, t, out, &o, &acc, &perf, &err), &err);
                n01++;
                pathf(dell, "%s/verify_performance.txt", t);
                stale += compare_perf(perf.text, dell, ref);
                pathf(dell, "%s/verify_accuracy.txt", t);
                char *dv = ib_test_slurp(dell);
                bool dell_pass = strstr(dv, "TEST PASS") != NULL;
                ib_free(dv);
                ASSERT_UINT_EQ(acc.counts.perf_log_data_mismatch, 0);
                ASSERT_TRUE(acc.counts.acc_truncated && acc.counts.perf_truncated);
                if (!dell_pass) {
                    fail01++;
                    ASSERT_TRUE(acc.fallback_used);
                    ASSERT_INT_EQ(acc.verdict, IB_VERIFY_PASS);
                    fallback_pass++;
                } else {
                    ASSERT_TRUE(acc.verdict != IB_VERIFY_FAIL);
                }
                /* what was written is what was returned */
                pathf(dell, "%s/verify_performance.txt", out);
                char *w = ib_test_slurp(dell);
                ASSERT_STR_EQ(w, perf.text);
                ib_free(w);
                /* TEST05 */
                pathf(t, "%s/TEST05", comp);
                ASSERT_OK_ERR(ib_verify_test05_dir(res, t, NULL, &o, &perf, &err), &err);
                ASSERT_INT_EQ(perf.verdict, IB_VERIFY_PASS);
                n05++;
                pathf(dell, "%s/verify_performance.txt", t);
                stale += compare_perf(perf.text, dell, ref);
                /* TEST04-A/B: byte-identical (no reference run involved) */
                char a[4096], b[4096];
                pathf(a, "%s/TEST04-A", comp);
                pathf(b, "%s/TEST04-B", comp);
                if (ib_path_is_dir(a)) {
                    ASSERT_OK_ERR(ib_verify_test04_dir(NULL, a, b, NULL, &o, &perf, &err), &err);
                    pathf(dell, "%s/verify_performance.txt", a);
                    char *theirs = ib_test_slurp(dell);
                    ASSERT_STR_EQ(perf.text, theirs);
                    ib_free(theirs);
                    ASSERT_INT_EQ(perf.verdict, IB_VERIFY_PASS);
                    n04++;
                }
                ib_verify_outcome_deinit(&acc);
                ib_verify_outcome_deinit(&perf);
            }
    ASSERT_INT_EQ(n01, 32);
    ASSERT_INT_EQ(n05, 32);
    ASSERT_INT_EQ(n04, 12);
    ASSERT_INT_EQ(stale, 6);
    ASSERT_INT_EQ(fail01, 5);
    ASSERT_INT_EQ(fallback_pass, 5);
}

TEST_TIMEOUT(check_dell_tree_clean, 300)
{
    const char *root = dell_root();
    char tree[4096];
    pathf(tree, "%s/../..", root);
    ib_check_report *r;
    ib_err err;
    ASSERT_OK_ERR(ib_check_tree(tree, NULL, &r, &err), &err);
    size_t fallback = 0, stale = 0;
    for (size_t i = 0; i < ib_check_report_problem_count(r); i++) {
        const ib_check_problem *p = ib_check_report_problem(r, i);
        if (p->severity == IB_CHECK_ERROR)
            ib_test_fail(__FILE__, __LINE__, "false error: %s: %s: %s", p->file, p->rule,
                         p->message);
        fallback += !strcmp(p->rule, "comp.acc-fallback");
        stale += !strcmp(p->rule, "comp.recheck-stale");
    }
    ASSERT_UINT_EQ(ib_check_report_error_count(r), 0);
    ASSERT_UINT_EQ(fallback, 5);
    ASSERT_UINT_EQ(stale, 6);
    ASSERT_UINT_EQ(ib_check_report_warning_count(r), 11);
    ASSERT_UINT_EQ(ib_check_report_result_count(r), 32);
    bool seen = false;
    for (size_t i = 0; i < ib_check_report_result_count(r); i++) {
        const ib_check_result *x = ib_check_report_result(r, i);
        ASSERT_TRUE(x->valid && x->compliance_ok && x->has_metric && x->has_accuracy);
        if (!strcmp(x->system, "R7525_A100-PCIE-40GBx3_TRT") && !strcmp(x->benchmark, "resnet50") &&
            !strcmp(x->scenario, "Server")) {
            ASSERT_DBL_EQ(x->metric, 91264.2); /* result_scheduled_samples_per_sec */
            ASSERT_DBL_EQ(x->accuracy, 76.044);
            ASSERT_STR_EQ(x->unit, "Queries/s");
            seen = true;
        }
    }
    ASSERT_TRUE(seen);
    ib_check_report_destroy(r);
}

TEST_TIMEOUT(check_dell_cli_text_and_json, 300)
{
    const char *root = dell_root();
    int rc = ib_test_system("%s/inferbench check %s/../.. > out.txt 2> err.txt", ib_test_bin_dir(),
                            root);
    ASSERT_INT_EQ(rc, 0);
    char *t = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(t, "inferbench check: 32 results checked, 32 without errors; 0 errors, "
                           "11 warnings\nSUMMARY: submission looks OK\n");
    /* the format of a warning line: file: rule (warning): message; fix: ... */
    ASSERT_STR_CONTAINS(t, "closed/Dell/compliance/R7525_A30x3_TRT/rnnt/Server/TEST05/"
                           "verify_performance.txt: comp.recheck-stale (warning): the file "
                           "reports \"reference score = 11001.55 | test score = 10886.87\"");
    ASSERT_STR_CONTAINS(t, "; fix: regenerate verify_performance.txt");
    ib_free(t);
    rc = ib_test_system("%s/inferbench check --json %s/../.. > out.json", ib_test_bin_dir(), root);
    ASSERT_INT_EQ(rc, 0);
    json_error_t je;
    json_t *j = json_load_file("out.json", 0, &je);
    ASSERT_NOT_NULL(j);
    ASSERT_INT_EQ(json_integer_value(json_object_get(j, "errors")), 0);
    ASSERT_INT_EQ(json_integer_value(json_object_get(j, "warnings")), 11);
    ASSERT_INT_EQ(json_integer_value(json_object_get(j, "results_checked")), 32);
    ASSERT_TRUE(json_is_true(json_object_get(j, "clean")));
    ASSERT_UINT_EQ(json_array_size(json_object_get(j, "results")), 32);
    json_t *p0 = json_array_get(json_object_get(j, "problems"), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(p0, "severity")), "warning");
    json_decref(j);
    /* the same tree under the current rules: v1.1 seeds and models are flagged */
    rc = ib_test_system("%s/inferbench check --version current %s/../.. > cur.txt",
                        ib_test_bin_dir(), root);
    ASSERT_INT_EQ(rc, 3);
    t = ib_test_slurp("cur.txt");
    ASSERT_STR_CONTAINS(t, "perf.seeds: effective_qsl_rng_seed is 1624344308455410291, expected "
                           "2085463073848966840 (the three seeds are those of v1.1)");
    ASSERT_STR_CONTAINS(t, "model.unknown");
    ASSERT_STR_CONTAINS(t, "SUMMARY: submission has errors");
    ib_free(t);
}
