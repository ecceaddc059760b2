/*
 * cmd_audit.c - `inferbench audit TEST01|TEST04|TEST05`: the MLPerf compliance tests
 * (benchmarks.md §2.2, loadgen.md §6). For one test it
 *   1. runs (or takes with --results) the reference submission run,
 *   2. writes the test's official audit.config overrides,
 *   3. runs the test through `inferbench run` itself (ib_cmd_run: the same options, the same
 *      settings procedure; the loadgen applies audit.config as conf type 2, model "*"),
 *   4. copies the logs into the official compliance layout
 *      D/<system>/<benchmark>/<Scenario>/<TEST>/{performance/run_1,accuracy}/ and
 *   5. runs the verifier (ib_verify_*_dir) that writes verify_performance.txt and, for
 *      TEST01, verify_accuracy.txt there.
 * Raw runs live under D/.audit/. Exit 0 when every verdict is TEST PASS, 3 otherwise.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "cli/cli.h"
#include "inferbench/compliance.h"
#include "inferbench/loadgen.h"

#define CMD "audit"
#define MAX_ARGS 128

/* snprintf for paths and messages; a too-long result is cut (and reported by the file
 * operation that then fails to find it). */
static void pathf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inferbench audit TEST01|TEST04|TEST05 [--benchmark ID | --sut null]\n"
            "                        --scenario S --output-dir D [--results DIR]\n"
            "                        [--system NAME] [run options]\n\n"
            "Run an MLPerf compliance test and verify it. The test's official audit.config\n"
            "overrides are written, the test runs as `inferbench run` runs (every run option\n"
            "is accepted, e.g. --tiny --quick --min-duration-ms), the verifier compares it\n"
            "with the reference submission run, and the results go into the official layout\n"
            "  D/<system>/<benchmark>/<Scenario>/TEST0x/ verify_performance.txt,\n"
            "  [verify_accuracy.txt, accuracy/ (TEST01)], performance/run_1/\n\n"
            "  TEST01        accuracy-log sampling in performance mode: sampled responses must\n"
            "                equal the accuracy run's per qsl_idx; performance within 10 %%\n"
            "  TEST04        no result caching (current rules: same sample vs the submission;\n"
            "                --rules v1.1: TEST04-A unique vs TEST04-B same sample)\n"
            "  TEST05        other seeds, performance within 5 %% (v1.1 rules only; --rules\n"
            "                v1.1 is implied)\n"
            "  --results DIR an existing results/<system>/<benchmark>/<Scenario> folder to\n"
            "                compare with (default: a fresh submission run in D/.audit/ref)\n"
            "  --system NAME the system folder (null SUT: default nullsut)\n\n"
            "Not accepted (the audit sets them): --mode, --audit-conf, --no-audit, --json.\n"
            "Exit status: 0 every verdict TEST PASS, 3 a test failed, 2 usage, 1 runtime error.\n");
}

enum test_kind { T01, T04, T05 };

typedef struct audit {
    enum test_kind test;
    const char *out, *results, *system, *benchmark, *model, *sut, *rules, *scenario_arg;
    enum ib_lg_scenario scenario;
    bool v11, rules_given;
    const char *pass[MAX_ARGS]; /* run options passed through */
    int npass;
} audit;

/* benchmarks.md §2.2 / loadgen.md §6: accuracy_log_sampling_target per model. */
static int sampling_target(const char *bench)
{
    if (!bench)
        return 4096;
    if (!strncmp(bench, "ssd-resnet34", 12) || !strncmp(bench, "retinanet", 9))
        return 256;
    if (!strncmp(bench, "3d-unet", 7))
        return 64;
    return 4096; /* resnet50, bert, dlrm, rnnt (and the null SUT) */
}

static int write_text(const char *path, const char *text)
{
    ib_err err;
    if (ib_file_write_all(path, text, strlen(text), &err) != IB_OK) {
        ib_cli_error(CMD, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    return IB_EXIT_OK;
}

static const char AUDIT_HEADER[] =
    "# The format of this config file is 'key = value'.\n"
    "# The key has the format 'model.scenario.key'. Value is mostly int64_t.\n"
    "# Model maybe '*' as wildcard. In that case the value applies to all models.\n"
    "# All times are in milli seconds\n"
    "# mode dictionary (0 = submission, 1 = accuracy, 2 = performance, 3 = find peak perf)\n";

/* The official audit.config of each test (compliance/nvidia/TEST0x on r1.1, compliance/TEST0x
 * today; benchmarks.md §2.2). `variant` is 'A'/'B' for v1.1 TEST04. */
static int write_audit_config(const audit *a, char variant, const char *path)
{
    char buf[2048];
    pathf(buf, sizeof buf, "%s*.*.mode = 2\n", AUDIT_HEADER);
    size_t n = strlen(buf);
    switch (a->test) {
    case T01:
        pathf(buf + n, sizeof buf - n,
                 "*.*.accuracy_log_rng_seed = 720381539243781796\n"
                 "*.*.accuracy_log_sampling_target = %d\n",
                 sampling_target(a->benchmark));
        break;
    case T04:
        if (variant == 'A')
            pathf(buf + n, sizeof buf - n, "*.*.performance_issue_unique = 1\n");
        else
            pathf(buf + n, sizeof buf - n,
                     "*.*.performance_issue_same = 1\n*.*.performance_issue_same_index = 3\n");
        break;
    case T05:
        pathf(buf + n, sizeof buf - n,
                 "*.*.qsl_rng_seed = 313588358309856706\n"
                 "*.*.sample_index_rng_seed = 471397156132239067\n"
                 "*.*.schedule_rng_seed = 413914573387865862\n");
        break;
    }
    return write_text(path, buf);
}

/* One `inferbench run` with the passed-through options; 0 or 3 (INVALID) are results. */
static int run_one(const audit *a, const char *mode, const char *audit_conf, const char *outdir)
{
    const char *args[MAX_ARGS + 16];
    int n = 0;
    args[n++] = "run";
    for (int i = 0; i < a->npass; i++)
        args[n++] = a->pass[i];
    if (a->v11 && !a->rules_given) {
        args[n++] = "--rules";
        args[n++] = "v1.1";
    }
    args[n++] = "--mode";
    args[n++] = mode;
    if (audit_conf) {
        args[n++] = "--audit-conf";
        args[n++] = audit_conf;
    } else {
        args[n++] = "--no-audit";
    }
    args[n++] = "--output-dir";
    args[n++] = outdir;
    /* ib_cmd_run takes char ** (getopt): private copies */
    char *argv[MAX_ARGS + 17];
    for (int i = 0; i < n; i++)
        if (!(argv[i] = strdup(args[i]))) {
            for (int k = 0; k < i; k++)
                free(argv[k]);
            ib_cli_error(CMD, "out of memory");
            return IB_EXIT_RUNTIME;
        }
    argv[n] = NULL;
    fprintf(stderr, "inferbench audit: run --mode %s%s%s -> %s\n", mode,
            audit_conf ? " --audit-conf " : "", audit_conf ? audit_conf : "", outdir);
    fflush(stdout);
    int rc = ib_cmd_run(n, argv);
    fflush(stdout);
    for (int i = 0; i < n; i++)
        free(argv[i]);
    if (rc != IB_EXIT_OK && rc != IB_EXIT_INVALID)
        ib_cli_error(CMD, "the run into %s failed (exit %d); see the messages above", outdir, rc);
    else if (rc == IB_EXIT_INVALID)
        fprintf(stderr, "inferbench audit: warning: the run into %s is INVALID; the verdict "
                        "compares it anyway\n", outdir);
    return rc == IB_EXIT_INVALID ? IB_EXIT_OK : rc;
}

/* The only non-hidden sub-folder of dir (the harness writes <system>/<benchmark>/<Scenario>,
 * and the system descriptions in systems/, which is not a system). */
static int only_subdir(const char *dir, char *out, size_t n)
{
    DIR *d = opendir(dir);
    if (!d)
        return IB_ENOTFOUND;
    int found = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "systems"))
            continue;
        if (ib_path_join(path, sizeof path, dir, e->d_name) || !ib_path_is_dir(path))
            continue;
        if (found++ == 0)
            pathf(out, n, "%s", e->d_name);
    }
    closedir(d);
    return found == 1 ? IB_OK : IB_ENOTFOUND;
}

/* Where a run's scenario folder is: every run (null SUT or benchmark) writes the results-tree
 * layout <system>/<benchmark or model>/<Scenario>. */
static int scenario_dir(const char *outdir, char *sys, char *bench, char *out, size_t n)
{
    char p[4096], scen[128];
    if (only_subdir(outdir, sys, 128))
        return IB_ENOTFOUND;
    pathf(p, sizeof p, "%s/%s", outdir, sys);
    if (only_subdir(p, bench, 128))
        return IB_ENOTFOUND;
    pathf(p, sizeof p, "%s/%s/%s", outdir, sys, bench);
    if (only_subdir(p, scen, sizeof scen))
        return IB_ENOTFOUND;
    pathf(out, n, "%s/%s/%s/%s", outdir, sys, bench, scen);
    return IB_OK;
}

static int copy_file(const char *from, const char *to)
{
    ib_err err;
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(from, 0, &text, &len, &err);
    if (rc == IB_OK)
        rc = ib_file_write_all(to, text, len, &err);
    ib_free(text);
    if (rc) {
        ib_cli_error(CMD, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    return IB_EXIT_OK;
}

/* Copy the test run's logs (flat or under performance/run_1) into dest. */
static int place_logs(const char *run_dir, const char *dest, bool with_acc)
{
    char from[4096], to[4096], perf[4096];
    pathf(perf, sizeof perf, "%s/performance/run_1", run_dir);
    const char *src = ib_path_is_dir(perf) ? perf : run_dir;
    pathf(to, sizeof to, "%s/performance/run_1", dest);
    ib_err err;
    if (ib_mkdirs(to, &err)) {
        ib_cli_error(CMD, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    static const char *const names[2] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt"};
    for (int i = 0; i < 2; i++) {
        pathf(from, sizeof from, "%s/%s", src, names[i]);
        pathf(to, sizeof to, "%s/performance/run_1/%s", dest, names[i]);
        if (copy_file(from, to))
            return IB_EXIT_RUNTIME;
    }
    if (!with_acc)
        return IB_EXIT_OK;
    pathf(to, sizeof to, "%s/accuracy", dest);
    if (ib_mkdirs(to, &err)) {
        ib_cli_error(CMD, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    pathf(from, sizeof from, "%s/mlperf_log_accuracy.json", src);
    pathf(to, sizeof to, "%s/accuracy/mlperf_log_accuracy.json", dest);
    return copy_file(from, to);
}

static const char *verdict_name(enum ib_verify_verdict v)
{
    return v == IB_VERIFY_PASS ? "TEST PASS" : v == IB_VERIFY_FAIL ? "TEST FAIL" : "INCONCLUSIVE";
}

/* accuracy/accuracy.txt of TEST01: what the comparison saw. The accuracy metric itself is not
 * recomputed on the sampled subset (that needs the benchmark's accuracy script on its data). */
static int write_test01_accuracy_txt(const char *dest, const ib_verify_outcome *acc)
{
    char path[4096], buf[1024];
    pathf(path, sizeof path, "%s/accuracy/accuracy.txt", dest);
    pathf(buf, sizeof buf,
             "TEST01 compliance accuracy log (inferbench audit)\n"
             "sampled responses in the performance-mode log: %zu\n"
             "matched qsl_idx: %zu, data mismatches: %zu, missing: %zu\n"
             "byte comparison with the accuracy run: %s\n"
             "note: the accuracy metric was not recomputed on this subset\n",
             acc->counts.perf_log_entries, acc->counts.perf_log_qsl_idx_match,
             acc->counts.perf_log_data_mismatch, acc->counts.missing_qsl_idxs,
             verdict_name(acc->verdict));
    return write_text(path, buf);
}

static int parse_args(int argc, char **argv, audit *a)
{
    memset(a, 0, sizeof *a);
    if (argc < 2)
        return ib_cli_usage_error(CMD, "which test? TEST01, TEST04 or TEST05");
    const char *t = argv[1];
    if (!strcmp(t, "TEST01"))
        a->test = T01;
    else if (!strcmp(t, "TEST04") || !strcmp(t, "TEST04-A") || !strcmp(t, "TEST04-B"))
        a->test = T04;
    else if (!strcmp(t, "TEST05"))
        a->test = T05;
    else
        return ib_cli_usage_error(CMD, "unknown test '%s' (TEST01, TEST04, TEST05)", t);
    a->scenario = IB_LG_SCENARIO_OFFLINE;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = false;
        if (!strcmp(s, "--mode") || !strcmp(s, "--audit-conf") || !strcmp(s, "--no-audit") ||
            !strcmp(s, "--json") || !strncmp(s, "--mode=", 7) || !strncmp(s, "--audit-conf=", 13))
            return ib_cli_usage_error(CMD, "%s: the audit sets the mode and audit.config itself",
                                      s);
        if (!strncmp(s, "--", 2) && strchr(s, '='))
            return ib_cli_usage_error(CMD, "%s: write the value as a separate argument", s);
        if (!strcmp(s, "--output-dir") || !strcmp(s, "--results") ||
            (!strcmp(s, "--system")) || !strcmp(s, "--benchmark") || !strcmp(s, "--sut") ||
            !strcmp(s, "--model") || !strcmp(s, "--rules") || !strcmp(s, "--scenario"))
            takes = true;
        if (takes && !v)
            return ib_cli_usage_error(CMD, "option '%s' needs a value", s);
        if (!strcmp(s, "--output-dir")) { a->out = v; i++; continue; }
        if (!strcmp(s, "--results")) { a->results = v; i++; continue; }
        if (!strcmp(s, "--system")) a->system = v;
        if (!strcmp(s, "--benchmark")) a->benchmark = v;
        if (!strcmp(s, "--sut")) a->sut = v;
        if (!strcmp(s, "--model")) a->model = v;
        if (!strcmp(s, "--rules")) { a->rules = v; a->rules_given = true; }
        if (!strcmp(s, "--scenario")) {
            if (ib_lg_scenario_parse(v, &a->scenario) != IB_OK)
                return ib_cli_usage_error(CMD, "unknown scenario '%s' (SingleStream, "
                                               "MultiStream, Server, Offline)", v);
            a->scenario_arg = v;
        }
        if (a->npass + 2 >= MAX_ARGS)
            return ib_cli_usage_error(CMD, "too many arguments");
        a->pass[a->npass++] = s;
        if (takes)
            a->pass[a->npass++] = argv[++i];
    }
    if (!a->out)
        return ib_cli_usage_error(CMD, "--output-dir is required");
    if (a->sut && !a->scenario_arg)
        return ib_cli_usage_error(CMD, "--scenario is required with --sut");
    if (!a->sut && !a->benchmark)
        a->benchmark = "resnet50";
    if (a->rules) {
        enum ib_lg_rules r;
        if (ib_lg_rules_parse(a->rules, &r) != IB_OK)
            return ib_cli_usage_error(CMD, "unknown rule set '%s' (current, v1.1)", a->rules);
        a->v11 = r == IB_LG_RULES_V1_1;
    }
    if (a->test == T05) {
        if (a->rules_given && !a->v11)
            return ib_cli_usage_error(CMD, "TEST05 exists only in the v1.1 rules (removed in "
                                           "v5.0): use --rules v1.1");
        a->v11 = true; /* loadgen.md §6: v1.1 sets the TEST05 seeds in audit.config */
    }
    return IB_EXIT_OK;
}

int ib_cmd_audit(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return IB_EXIT_OK;
    }
    audit a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    ib_err err;
    char work[4096], ref[4096], refdir[4096], sys[128] = "", bench[128] = "";
    pathf(work, sizeof work, "%s/.audit", a.out);
    if (ib_mkdirs(work, &err)) {
        ib_cli_error(CMD, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    const char *testname = a.test == T01 ? "TEST01" : a.test == T05 ? "TEST05"
                           : a.v11 ? "TEST04-A" : "TEST04";
    /* 1. the reference submission run (TEST04 v1.1 compares A with B and needs none) */
    bool need_ref = !(a.test == T04 && a.v11);
    if (a.results) {
        /* a scenario folder, or a results tree holding one scenario below it */
        char perf_dir[4200];
        pathf(perf_dir, sizeof perf_dir, "%s/performance", a.results);
        if (ib_path_is_dir(perf_dir) || scenario_dir(a.results, sys, bench, refdir, sizeof refdir))
            pathf(refdir, sizeof refdir, "%s", a.results);
    } else if (need_ref) {
        pathf(ref, sizeof ref, "%s/ref", work);
        if (a.sut) { /* the null SUT's one test per run: accuracy, then performance */
            if (a.test == T01 && (rc = run_one(&a, "accuracy", NULL, ref)))
                return rc;
            if ((rc = run_one(&a, "performance", NULL, ref)))
                return rc;
        } else if ((rc = run_one(&a, a.test == T01 ? "submission" : "performance", NULL, ref))) {
            return rc;
        }
        if (scenario_dir(ref, sys, bench, refdir, sizeof refdir)) {
            ib_cli_error(CMD, "%s: cannot find the run's <system>/<benchmark>/<Scenario> folder",
                         ref);
            return IB_EXIT_RUNTIME;
        }
    }
    /* 2-4. the test run(s) with the audit.config overrides */
    char dest[4096], dest_b[4096] = "";
    int nruns = a.test == T04 && a.v11 ? 2 : 1;
    for (int k = 0; k < nruns; k++) {
        char variant = k == 0 ? (a.test == T04 && a.v11 ? 'A' : 'B') : 'B';
        const char *name = nruns == 2 ? (k == 0 ? "TEST04-A" : "TEST04-B") : testname;
        char tdir[4096], ac[4096], rdir[4096], s2[128] = "", b2[128] = "";
        pathf(tdir, sizeof tdir, "%s/%s", work, name);
        if (ib_mkdirs(tdir, &err)) {
            ib_cli_error(CMD, "%s", err.msg);
            return IB_EXIT_RUNTIME;
        }
        pathf(ac, sizeof ac, "%s/audit.config", tdir);
        if ((rc = write_audit_config(&a, variant, ac)))
            return rc;
        pathf(rdir, sizeof rdir, "%s/run", tdir);
        if ((rc = run_one(&a, "performance", ac, rdir)))
            return rc;
        char sdir[4096];
        if (scenario_dir(rdir, s2, b2, sdir, sizeof sdir)) {
            ib_cli_error(CMD, "%s: cannot find the run's <system>/<benchmark>/<Scenario> folder",
                         rdir);
            return IB_EXIT_RUNTIME;
        }
        if (!sys[0]) {
            pathf(sys, sizeof sys, "%s", s2);
            pathf(bench, sizeof bench, "%s", b2);
        }
        char *d = k == 0 ? dest : dest_b;
        pathf(d, 4096, "%s/%s/%s/%s/%s", a.out, sys, bench, ib_lg_scenario_name(a.scenario),
                 name);
        if ((rc = place_logs(sdir, d, a.test == T01)))
            return rc;
    }
    /* 5. verification (the ib_verify_* C versions of run_verification.py) */
    ib_verify_options vo;
    ib_verify_options_defaults(&vo);
    vo.version = a.v11 ? IB_CHECK_V1_1 : IB_CHECK_CURRENT;
    vo.benchmark = a.sut ? NULL : bench;
    ib_verify_outcome acc, perf;
    ib_verify_outcome_init(&acc);
    ib_verify_outcome_init(&perf);
    ib_err_clear(&err);
    if (a.test == T01)
        rc = ib_verify_test01_dir(refdir, dest, dest, &vo, &acc, &perf, &err);
    else if (a.test == T05)
        rc = ib_verify_test05_dir(refdir, dest, dest, &vo, &perf, &err);
    else if (a.v11)
        rc = ib_verify_test04_dir(NULL, dest, dest_b, dest, &vo, &perf, &err);
    else
        rc = ib_verify_test04_dir(refdir, dest, NULL, dest, &vo, &perf, &err);
    if (rc == IB_OK && a.test == T01)
        rc = write_test01_accuracy_txt(dest, &acc) ? IB_EIO : IB_OK;
    int exit = IB_EXIT_OK;
    if (rc != IB_OK) {
        ib_cli_error(CMD, "verification failed to run: %s", err.msg[0] ? err.msg : ib_strerror(rc));
        exit = IB_EXIT_RUNTIME;
    } else {
        printf("\n%s %s %s: compliance folder %s\n", testname, bench,
               ib_lg_scenario_name(a.scenario), dest);
        if (a.test == T01) {
            printf("  verify_accuracy.txt:    %s%s%s\n", verdict_name(acc.verdict),
                   acc.reason[0] ? ": " : "", acc.reason);
            if (acc.verdict != IB_VERIFY_PASS)
                exit = IB_EXIT_INVALID;
        }
        printf("  verify_performance.txt: %s", verdict_name(perf.verdict));
        if (perf.has_scores)
            printf(" (reference %.6g, test %.6g, threshold %.3g)", perf.ref_score,
                   perf.test_score, perf.threshold);
        printf("%s%s\n", perf.reason[0] ? ": " : "", perf.reason);
        if (perf.verdict != IB_VERIFY_PASS)
            exit = IB_EXIT_INVALID;
    }
    ib_verify_outcome_deinit(&acc);
    ib_verify_outcome_deinit(&perf);
    return exit;
}
