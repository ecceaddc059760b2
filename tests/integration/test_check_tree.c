/*
 * test_check_tree.c - `inferbench check` finds what is planted in copies of the Dell v1.1
 * tree: each test copies one system's resnet50 and bert-99 results (with their measurements
 * and compliance folders) into its temporary folder, breaks one thing and expects the
 * matching rule on the matching file. A control test proves the copy itself is clean, so
 * every error below comes from the planted defect. Also: bad input (junk, unreadable and
 * cut logs, mixed versions) and the CLI's usage errors and exit codes.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/compliance.h"
#include "test.h"

#define SYS "R7525_A100-PCIE-40GBx3_TRT"
#define DELL "t/closed/Dell"
#define RES DELL "/results/" SYS
#define MEAS DELL "/measurements/" SYS
#define COMP DELL "/compliance/" SYS

static void fixture(void)
{
    char src[4096];
    snprintf(src, sizeof src, "%s/data/mlperf-inference-v1.1/closed/Dell", ib_test_shared_dir());
    if (!ib_path_is_dir(src))
        TEST_SKIP("../shared/data/mlperf-inference-v1.1 is absent");
    int rc = ib_test_system(
        "set -e; mkdir -p " RES " " MEAS " " COMP "; cp -r '%s/systems' '%s/code' " DELL "/; "
        "for b in resnet50 bert-99; do cp -r '%s/results/" SYS "/'$b " RES "/; "
        "cp -r '%s/measurements/" SYS "/'$b " MEAS "/; cp -r '%s/compliance/" SYS "/'$b " COMP
        "/; done; chmod -R u+w t",
        src, src, src, src, src);
    ASSERT_INT_EQ(rc, 0);
}

static ib_check_report *run_check(enum ib_check_version v)
{
    ib_check_options o;
    ib_check_options_defaults(&o);
    o.version = v;
    ib_check_report *r = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_check_tree("t", &o, &r, &err), &err);
    return r;
}

static void dump(const ib_check_report *r)
{
    for (size_t i = 0; i < ib_check_report_problem_count(r); i++) {
        const ib_check_problem *p = ib_check_report_problem(r, i);
        fprintf(stderr, "  %s: %s%s: %s\n", p->file, p->rule,
                p->severity == IB_CHECK_ERROR ? "" : " (warning)", p->message);
    }
}

/* Assert an error (or warning) with this rule on a file ending in `file`, whose message
 * contains `needle` (may be NULL). */
static void expect(const ib_check_report *r, enum ib_check_severity sev, const char *rule,
                   const char *file, const char *needle)
{
    for (size_t i = 0; i < ib_check_report_problem_count(r); i++) {
        const ib_check_problem *p = ib_check_report_problem(r, i);
        size_t fl = strlen(p->file), wl = strlen(file);
        if (p->severity == sev && !strcmp(p->rule, rule) && fl >= wl &&
            !strcmp(p->file + fl - wl, file) && (!needle || strstr(p->message, needle)) &&
            p->fix[0])
            return;
    }
    dump(r);
    ib_test_fail(__FILE__, __LINE__, "no %s %s on ...%s%s%s", sev ? "warning" : "error", rule,
                 file, needle ? " mentioning " : "", needle ? needle : "");
}

static void write_text(const char *path, const char *text)
{
    ib_err err;
    ASSERT_OK_ERR(ib_file_write_all(path, text, strlen(text), &err), &err);
}

static void edit(const char *sed_expr, const char *file)
{
    ASSERT_INT_EQ(ib_test_system("sed -i '%s' '%s' && true", sed_expr, file), 0);
}

TEST(check_tree_copy_is_clean)
{
    fixture();
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    if (ib_check_report_error_count(r))
        dump(r);
    ASSERT_UINT_EQ(ib_check_report_error_count(r), 0);
    ASSERT_UINT_EQ(ib_check_report_result_count(r), 4);
    /* the two TEST01 folders accepted through their fallback files */
    ASSERT_UINT_EQ(ib_check_report_warning_count(r), 2);
    expect(r, IB_CHECK_WARNING, "comp.acc-fallback", "bert-99/Offline/TEST01/verify_accuracy.txt",
           "baseline 28.2992");
    ib_check_report_destroy(r);
}

TEST(check_tree_missing_files)
{
    fixture();
    ASSERT_INT_EQ(ib_test_system("rm " MEAS "/resnet50/Offline/user.conf " RES
                                 "/bert-99/Server/performance/run_1/mlperf_log_summary.txt"),
                  0);
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "measure.missing-file", "resnet50/Offline/user.conf", "user.conf");
    expect(r, IB_CHECK_ERROR, "perf.files", "Server/performance/run_1/mlperf_log_summary.txt",
           "missing");
    ib_check_report_destroy(r);
    ASSERT_INT_EQ(ib_test_system("rm -r " MEAS "/bert-99/Offline " RES "/resnet50/Offline/accuracy"),
                  0);
    r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "measure.missing-dir", "measurements/" SYS "/bert-99/Offline", NULL);
    expect(r, IB_CHECK_ERROR, "acc.missing-dir", "resnet50/Offline/accuracy", NULL);
    ib_check_report_destroy(r);
}

TEST(check_tree_wrong_seed)
{
    fixture();
    edit("s/\"key\": \"effective_sample_index_rng_seed\", \"value\": 517984244576520566/"
         "\"key\": \"effective_sample_index_rng_seed\", \"value\": 12345/",
         RES "/resnet50/Offline/performance/run_1/mlperf_log_detail.txt");
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "perf.seeds", "resnet50/Offline/performance/run_1/mlperf_log_detail.txt",
           "effective_sample_index_rng_seed is 12345, expected 517984244576520566");
    ASSERT_UINT_EQ(ib_check_report_error_count(r), 2); /* + Offline no longer valid */
    expect(r, IB_CHECK_ERROR, "scenario.missing", "results/" SYS "/resnet50", "Offline");
    ib_check_report_destroy(r);
}

TEST(check_tree_invalid_run)
{
    fixture();
    edit("s/\"key\": \"result_validity\", \"value\": \"VALID\"/"
         "\"key\": \"result_validity\", \"value\": \"INVALID\"/;"
         "s/\"key\": \"result_min_duration_met\", \"value\": true/"
         "\"key\": \"result_min_duration_met\", \"value\": false/",
         RES "/bert-99/Server/performance/run_1/mlperf_log_detail.txt");
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "perf.invalid", "bert-99/Server/performance/run_1/mlperf_log_detail.txt",
           "shorter than min_duration");
    ib_check_report_destroy(r);
}

TEST(check_tree_accuracy_below_target)
{
    fixture();
    edit("s/^accuracy=76.040%/accuracy=75.694%/",
         RES "/resnet50/Offline/accuracy/accuracy.txt");
    edit("s/\"f1\": 90.3[0-9]*/\"f1\": 89.9/", RES "/bert-99/Server/accuracy/accuracy.txt");
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "acc.target", "resnet50/Offline/accuracy/accuracy.txt",
           "acc = 75.694 is below the target 75.6954 (76.46 * 0.99)");
    expect(r, IB_CHECK_ERROR, "acc.target", "bert-99/Server/accuracy/accuracy.txt", "F1 = 89.9");
    ib_check_report_destroy(r);
    /* the open division takes the result anyway */
    ASSERT_INT_EQ(ib_test_system("mv t/closed t/open && sed -i 's/\"closed\"/\"open\"/' "
                                 "t/open/Dell/systems/" SYS ".json"),
                  0);
    ib_check_options o;
    ib_check_options_defaults(&o);
    ib_check_report *ro;
    ib_err err;
    ASSERT_OK_ERR(ib_check_tree("t", &o, &ro, &err), &err);
    for (size_t i = 0; i < ib_check_report_problem_count(ro); i++)
        ASSERT_TRUE(strcmp(ib_check_report_problem(ro, i)->rule, "acc.target") != 0);
    ib_check_report_destroy(ro);
}

TEST(check_tree_oversize_accuracy_log_and_hash)
{
    fixture();
    /* an untruncated 20 KB log in place of the truncated one: too big, and its SHA-256 is
     * not the hash= line */
    FILE *f = fopen(RES "/resnet50/Server/accuracy/mlperf_log_accuracy.json", "w");
    ASSERT_NOT_NULL(f);
    fprintf(f, "[\n");
    for (int i = 0; i < 400; i++)
        fprintf(f, "%s{ \"seq_id\" : %d, \"qsl_idx\" : %d, \"data\" : \"01020304\" }",
                i ? ",\n" : "", i, i);
    fprintf(f, "\n]\n");
    fclose(f);
    edit("/^hash=/d", RES "/bert-99/Offline/accuracy/accuracy.txt");
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "acc.log-size", "resnet50/Server/accuracy/mlperf_log_accuracy.json",
           "not truncated");
    expect(r, IB_CHECK_ERROR, "acc.hash-mismatch",
           "resnet50/Server/accuracy/mlperf_log_accuracy.json", "SHA-256");
    expect(r, IB_CHECK_ERROR, "acc.hash", "bert-99/Offline/accuracy/accuracy.txt", "hash=");
    ib_check_report_destroy(r);
}

TEST(check_tree_compliance_defects)
{
    fixture();
    ASSERT_INT_EQ(ib_test_system("rm -r " COMP "/resnet50/Offline/TEST05 " COMP
                                 "/resnet50/Server/TEST04-B/performance"),
                  0);
    /* TEST01 byte comparison marked failed without the fallback files */
    edit("s/TEST PASS/TEST FAIL/", COMP "/resnet50/Offline/TEST01/verify_accuracy.txt");
    /* a verify file that says PASS although its scores do not (recheck) */
    edit("s/^test score = .*/test score = 12.5/", COMP "/bert-99/Offline/TEST05/verify_performance.txt");
    edit("s/TEST PASS/TEST FAIL: Test score invalid/", COMP "/bert-99/Server/TEST05/verify_performance.txt");
    /* a compliance run made without its audit.config */
    edit("/Found Audit Config file/d", COMP "/bert-99/Server/TEST01/performance/run_1/mlperf_log_detail.txt");
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "comp.missing-test", "resnet50/Offline/TEST05", "TEST05 is required");
    expect(r, IB_CHECK_ERROR, "comp.run-missing", "resnet50/Server/TEST04-B/performance/run_1", NULL);
    expect(r, IB_CHECK_ERROR, "comp.acc-fallback", "resnet50/Offline/TEST01/verify_accuracy.txt",
           "fallback files are missing");
    expect(r, IB_CHECK_WARNING, "comp.recheck-stale", "bert-99/Offline/TEST05/verify_performance.txt",
           "test score = 12.5");
    expect(r, IB_CHECK_ERROR, "comp.verify-fail", "bert-99/Server/TEST05/verify_performance.txt",
           "TEST FAIL: Test score invalid");
    expect(r, IB_CHECK_ERROR, "comp.audit-config",
           "bert-99/Server/TEST01/performance/run_1/mlperf_log_detail.txt", "audit.config");
    ib_check_report_destroy(r);
    /* the whole compliance folder of a result */
    ASSERT_INT_EQ(ib_test_system("rm -r " COMP "/bert-99/Offline"), 0);
    r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "comp.missing-dir", "compliance/" SYS "/bert-99/Offline", NULL);
    ib_check_report_destroy(r);
    /* --skip-compliance: nothing about compliance */
    ib_check_options o;
    ib_check_options_defaults(&o);
    o.skip_compliance = true;
    ib_err err;
    ASSERT_OK_ERR(ib_check_tree("t", &o, &r, &err), &err);
    ASSERT_UINT_EQ(ib_check_report_error_count(r), 0);
    ib_check_report_destroy(r);
}

TEST(check_tree_compliance_settings)
{
    fixture();
    /* TEST05 run with the official seeds instead of the alternative ones */
    edit("s/313588358309856706/1624344308455410291/",
         COMP "/resnet50/Offline/TEST05/performance/run_1/mlperf_log_detail.txt");
    /* a failing TEST01 whose fallback shows a real accuracy loss */
    edit("s/\"f1\": 28.298348630489436/\"f1\": 27.1/",
         COMP "/bert-99/Offline/TEST01/accuracy/compliance_accuracy.txt");
    /* TEST04-B run without performance_issue_same */
    edit("s/\"key\": \"effective_performance_issue_same\", \"value\": true/"
         "\"key\": \"effective_performance_issue_same\", \"value\": false/",
         COMP "/resnet50/Server/TEST04-B/performance/run_1/mlperf_log_detail.txt");
    /* complete (untruncated) accuracy logs are compared again: a "TEST PASS" that the logs
     * contradict is an error */
    write_text(RES "/resnet50/Server/accuracy/mlperf_log_accuracy.json",
               "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 1, \"data\" : \"01000000\" },\n"
               "{ \"seq_id\" : 1, \"qsl_idx\" : 2, \"data\" : \"02000000\" }\n]\n");
    write_text(COMP "/resnet50/Server/TEST01/accuracy/mlperf_log_accuracy.json",
               "[\n{ \"seq_id\" : 7, \"qsl_idx\" : 2, \"data\" : \"05000000\" }\n]\n");
    edit("s/TEST FAIL/TEST PASS/", COMP "/resnet50/Server/TEST01/verify_accuracy.txt");
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "comp.recheck", "resnet50/Server/TEST01/verify_accuracy.txt",
           "1 of 1 sampled responses differ");
    expect(r, IB_CHECK_ERROR, "comp.settings", "resnet50/Offline/TEST05/performance/run_1/mlperf_log_detail.txt",
           "expected 313588358309856706");
    expect(r, IB_CHECK_ERROR, "comp.acc-fallback", "bert-99/Offline/TEST01/verify_accuracy.txt",
           "differ by more than 1 %");
    expect(r, IB_CHECK_ERROR, "comp.settings", "TEST04-B/performance/run_1/mlperf_log_detail.txt",
           "performance_issue_same");
    ib_check_report_destroy(r);
}

TEST(check_tree_system_json)
{
    fixture();
    const char *sj = DELL "/systems/" SYS ".json";
    edit("s/\"status\": \"available\"/\"status\": \"sold out\"/;/\"host_processor_caches\"/d;"
         "s/\"submitter\": \"Dell\"/\"submitter\": \"DellEMC\"/;"
         "s/\"system_type\": \"datacenter\"/\"system_type\": \"server\"/",
         sj);
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "system.status", sj + 2, "sold out");
    expect(r, IB_CHECK_ERROR, "system.field-missing", sj + 2, "host_processor_caches");
    expect(r, IB_CHECK_ERROR, "system.submitter", sj + 2, "DellEMC");
    expect(r, IB_CHECK_ERROR, "system.type", sj + 2, "server");
    ib_check_report_destroy(r);
    /* not JSON at all; and no file */
    ASSERT_INT_EQ(ib_test_system("head -c 300 '%s' > x && mv x '%s'", sj, sj), 0);
    r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "system.json", sj + 2, "not valid JSON");
    ib_check_report_destroy(r);
    ASSERT_INT_EQ(ib_test_system("rm '%s'", sj), 0);
    r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "system.missing", sj + 2, NULL);
    ib_check_report_destroy(r);
}

TEST(check_tree_cut_junk_and_unreadable_logs)
{
    fixture();
    const char *cut = RES "/resnet50/Offline/performance/run_1/mlperf_log_detail.txt";
    ASSERT_INT_EQ(ib_test_system("head -c 20000 '%s' > x && mv x '%s'", cut, cut), 0);
    const char *junk = RES "/bert-99/Offline/accuracy/mlperf_log_detail.txt";
    ASSERT_INT_EQ(ib_test_system("head -c 3000 /dev/urandom > '%s'", junk), 0);
    const char *dir = RES "/bert-99/Server/performance/run_1/mlperf_log_detail.txt";
    ASSERT_INT_EQ(ib_test_system("rm '%s' && mkdir '%s'", dir, dir), 0);
    const char *acc = RES "/resnet50/Server/accuracy/mlperf_log_accuracy.json";
    ASSERT_INT_EQ(ib_test_system("printf '[\\n{ \"qsl_idx\" : 1, \"data\" : \"ZZ\" }\\n]\\n' > '%s'",
                                 acc),
                  0);
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "perf.detail", "resnet50/Offline/performance/run_1/mlperf_log_detail.txt",
           "invalid JSON after :::MLLOG");
    expect(r, IB_CHECK_ERROR, "acc.detail", "bert-99/Offline/accuracy/mlperf_log_detail.txt", NULL);
    expect(r, IB_CHECK_ERROR, "perf.files", "bert-99/Server/performance/run_1/mlperf_log_detail.txt",
           "missing");
    expect(r, IB_CHECK_ERROR, "acc.log-format", "resnet50/Server/accuracy/mlperf_log_accuracy.json",
           "not a hex digit");
    ib_check_report_destroy(r);
}

TEST(check_tree_unexpected_files_and_folders)
{
    fixture();
    ASSERT_INT_EQ(ib_test_system("echo x > " RES "/resnet50/Offline/accuracy/notes.txt && "
                                 "echo x > " RES "/bert-99/Server/performance/run_1/core && "
                                 "echo x > t/README && mkdir t/preview && mkdir " RES "/gptj-99 && "
                                 "mkdir " RES "/resnet50/MultiStream && echo x > " COMP
                                 "/resnet50/Offline/TEST01/performance/run_1/extra.log"),
                  0);
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "acc.files", "resnet50/Offline/accuracy/notes.txt", "unexpected file");
    expect(r, IB_CHECK_ERROR, "perf.files", "Server/performance/run_1/core", "unexpected file");
    expect(r, IB_CHECK_WARNING, "tree.unexpected", "README", NULL);
    expect(r, IB_CHECK_ERROR, "tree.division", "preview", "invalid division");
    expect(r, IB_CHECK_ERROR, "model.unknown", SYS "/gptj-99", "gptj-99");
    expect(r, IB_CHECK_WARNING, "scenario.ignored", "resnet50/MultiStream", NULL);
    expect(r, IB_CHECK_WARNING, "comp.files", "TEST01/performance/run_1/extra.log", NULL);
    ib_check_report_destroy(r);
}

TEST(check_tree_performance_limits)
{
    fixture();
    const char *srv = RES "/resnet50/Server/performance/run_1/mlperf_log_detail.txt";
    edit("s/\"result_99.00_percentile_latency_ns\", \"value\": [0-9]*/"
         "\"result_99.00_percentile_latency_ns\", \"value\": 15000001/;"
         "s/\"effective_min_query_count\", \"value\": 270336/\"effective_min_query_count\", \"value\": 1000/;"
         "s/\"effective_min_duration_ms\", \"value\": 600000/\"effective_min_duration_ms\", \"value\": 60000/",
         srv);
    const char *off = RES "/resnet50/Offline/performance/run_1/mlperf_log_detail.txt";
    edit("s/\"effective_samples_per_query\", \"value\": [0-9]*/\"effective_samples_per_query\", \"value\": 24575/;"
         "s/\"effective_performance_sample_count\", \"value\": [0-9]*/"
         "\"effective_performance_sample_count\", \"value\": 1023/;"
         "0,/\"is_error\": false/s/\"is_error\": false/\"is_error\": true/",
         off);
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    expect(r, IB_CHECK_ERROR, "perf.latency", srv + 2, "15000001 ns, above resnet's Server bound of 15000000");
    expect(r, IB_CHECK_ERROR, "perf.min-queries", srv + 2, "at least 270336");
    expect(r, IB_CHECK_ERROR, "perf.min-duration", srv + 2, "60000");
    expect(r, IB_CHECK_ERROR, "perf.offline-spq", off + 2, "24575");
    expect(r, IB_CHECK_ERROR, "perf.sample-count", off + 2, "1023");
    expect(r, IB_CHECK_ERROR, "perf.detail-errors", off + 2, "line 1 loadgen_version");
    ib_check_report_destroy(r);
}

TEST(check_tree_mixed_versions)
{
    fixture();
    char g[4096];
    snprintf(g, sizeof g, "%s/golden/03_server_resnet50_v61/mlperf_log_detail.txt",
             ib_test_shared_dir());
    if (!ib_path_exists(g))
        TEST_SKIP("../shared/golden is absent");
    ASSERT_INT_EQ(ib_test_system("cp '%s' " RES "/resnet50/Server/performance/run_1/", g), 0);
    ib_check_report *r = run_check(IB_CHECK_V1_1);
    const char *f = "resnet50/Server/performance/run_1/mlperf_log_detail.txt";
    expect(r, IB_CHECK_ERROR, "perf.seeds", f, "the three seeds are those of v6.1");
    expect(r, IB_CHECK_WARNING, "perf.loadgen-version", f, "6.0.17");
    ib_check_report_destroy(r);
}

TEST(check_tree_current_rules)
{
    fixture();
    ib_check_report *r = run_check(IB_CHECK_CURRENT);
    /* resnet and bert are edge-only benchmarks in v6.1; the system JSON lacks v5.0 fields */
    expect(r, IB_CHECK_ERROR, "model.system-type", SYS "/resnet50", "datacenter");
    expect(r, IB_CHECK_ERROR, "system.field-missing", SYS ".json", "host_network_card_count");
    expect(r, IB_CHECK_ERROR, "system.field-empty", SYS ".json", "cooling");
    ib_check_report_destroy(r);
}

static char *run_cli(const char *args, int *rc)
{
    *rc = ib_test_system("%s/inferbench check %s > out.txt 2>&1", ib_test_bin_dir(), args);
    char *b;
    size_t n;
    ASSERT_OK(ib_file_read_all("out.txt", 0, &b, &n, NULL));
    return b;
}

TEST(check_cli_usage_and_exit_codes)
{
    int rc;
    char *o = run_cli("", &rc);
    ASSERT_INT_EQ(rc, 2);
    ASSERT_STR_CONTAINS(o, "missing TREE");
    ib_free(o);
    o = run_cli("--version v0.5 .", &rc);
    ASSERT_INT_EQ(rc, 2);
    ASSERT_STR_CONTAINS(o, "unknown --version 'v0.5'");
    ib_free(o);
    o = run_cli("--bogus .", &rc);
    ASSERT_INT_EQ(rc, 2);
    ib_free(o);
    o = run_cli("--help", &rc);
    ASSERT_INT_EQ(rc, 0);
    ASSERT_STR_CONTAINS(o, "usage: inferbench check TREE");
    ib_free(o);
    ASSERT_INT_EQ(ib_test_system("mkdir -p empty/closed2"), 0);
    o = run_cli("empty", &rc);
    ASSERT_INT_EQ(rc, 2);
    ASSERT_STR_CONTAINS(o, "holds no closed/ or open/ folder; fix: pass the folder");
    ib_free(o);
    o = run_cli("does-not-exist", &rc);
    ASSERT_INT_EQ(rc, 2);
    ASSERT_STR_CONTAINS(o, "no such folder");
    ib_free(o);
    o = run_cli("a b", &rc);
    ASSERT_INT_EQ(rc, 2);
    ib_free(o);
}

TEST(check_cli_defective_tree)
{
    fixture();
    edit("s/^accuracy=76.040%/accuracy=70.000%/", RES "/resnet50/Offline/accuracy/accuracy.txt");
    int rc;
    char *o = run_cli("t", &rc);
    ASSERT_INT_EQ(rc, 3);
    ASSERT_STR_CONTAINS(o, "closed/Dell/results/" SYS "/resnet50/Offline/accuracy/accuracy.txt: "
                           "acc.target: line 1: acc = 70.000 is below the target 75.6954 (76.46 "
                           "* 0.99); fix: ");
    ASSERT_STR_CONTAINS(o, "; 1 error, 2 warnings\nSUMMARY: submission has errors\n");
    ib_free(o);
    o = run_cli("--quiet t", &rc);
    ASSERT_INT_EQ(rc, 3);
    ASSERT_TRUE(strstr(o, "(warning)") == NULL);
    ib_free(o);
    o = run_cli("--json t", &rc);
    ASSERT_INT_EQ(rc, 3);
    ASSERT_STR_CONTAINS(o, "\"errors\": 1,");
    ASSERT_STR_CONTAINS(o, "\"rule\": \"acc.target\"");
    ib_free(o);
    o = run_cli("--submitter Nobody t", &rc);
    ASSERT_INT_EQ(rc, 3);
    ASSERT_STR_CONTAINS(o, "tree.submitter");
    ib_free(o);
}
