/*
 * check_compliance.c - a result's compliance/ folder (benchmarks.md §2.1-§2.3;
 * check_compliance_dir of the r1.1 checker, compliance_check.py of the modular one).
 *
 * Per required test: the folder, verify_performance.txt with "TEST PASS" (not for
 * TEST04-B), the run's logs and the audit.config settings they show; for TEST01 also
 * verify_accuracy.txt and accuracy/, with the baseline/compliance fallback evaluated when the
 * byte comparison failed. The official v1.1 checker only logs most of these (its result
 * stays valid); here they are errors. With recheck_compliance, the verdicts and scores of
 * verify_performance.txt are recomputed from the logs in the tree (verify_perf.c), which
 * catches verify files produced from other runs.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/acclog.h"
#include "compliance/check_internal.h"
#include "compliance/mllog.h"
#include "compliance/verify_internal.h"

static const char *const g_comp_perf_files[] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt",
                                                NULL};
static const char *const g_comp_perf_optional[] = {"mlperf_log_accuracy.json", NULL};

typedef struct test_desc {
    unsigned bit;
    const char *name;
} test_desc;

static const test_desc g_tests[] = {{IB_CT_TEST01, "TEST01"},
                                    {IB_CT_TEST04A, "TEST04-A"},
                                    {IB_CT_TEST04B, "TEST04-B"},
                                    {IB_CT_TEST04, "TEST04"},
                                    {IB_CT_TEST05, "TEST05"}};

#define FIX_RERUN_TEST                                                                             \
    "run the test again (inferbench audit, or the official run_verification.py) and copy its "  \
    "output folder here"

/* Read a small text file; NULL when it cannot be read. */
static char *read_small(ib_check_ctx *ctx, const char *rel, size_t *n)
{
    char p[IB_CHECK_PATH_MAX];
    char *buf = NULL;
    ib_err err;
    if (ib_file_read_all(ib_check_abs(ctx, rel, p), (size_t)16 << 20, &buf, n, &err))
        return NULL;
    return buf;
}

static bool has_line_with(const char *text, const char *needle)
{
    return text && strstr(text, needle) != NULL;
}

/* The first line containing needle, into out. */
static void line_with(const char *text, const char *needle, char *out, size_t n)
{
    out[0] = '\0';
    const char *p = text ? strstr(text, needle) : NULL;
    if (!p)
        return;
    while (p > text && p[-1] != '\n')
        p--;
    const char *e = strchr(p, '\n');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    snprintf(out, n, "%.*s", (int)(l < n ? l : n - 1), p);
}

static bool mem_has(const char *p, size_t l, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= l; i++)
        if (!memcmp(p + i, needle, n))
            return true;
    return false;
}

/* The "... score = X" lines of a verify_performance text, joined by " | ". */
static void score_lines(const char *text, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' '))
            l--;
        if (mem_has(p, l, "score = ")) {
            int w = snprintf(out + len, n - len, "%s%.*s", len ? " | " : "", (int)l, p);
            if (w > 0 && (size_t)w < n - len)
                len += (size_t)w;
        }
        p = e ? e + 1 : NULL;
    }
}

/* Settings the audit.config of each test puts into the compliance run's detail log. */
static void check_run_settings(ib_check_ctx *ctx, const ib_check_scn *s, const char *test,
                               const char *rel_detail)
{
    char p[IB_CHECK_PATH_MAX];
    ib_mllog *log;
    ib_err err;
    if (ib_mllog_load(ib_check_abs(ctx, rel_detail, p), &log, &err)) {
        const char *m = strstr(err.msg, rel_detail) ? strstr(err.msg, rel_detail) : err.msg;
        IB_CHECK_ERR(ctx, rel_detail, "comp.detail", FIX_RERUN_TEST,
                     "cannot use the compliance run's detail log: %s", m);
        return;
    }
    const ib_rules *r = ctx->rules;
    bool audit = false;
    for (size_t i = 0; i < ib_mllog_count(log) && !audit; i++) {
        const ib_mllog_rec *rec = ib_mllog_at(log, i);
        audit = rec->kind == IB_MLV_STRING && !strcmp(rec->key, "warning_generic_message") &&
                strstr(rec->s, "audit.config");
    }
    if (!audit)
        IB_CHECK_ERR(ctx, rel_detail, "comp.audit-config",
                     "copy the test's audit.config into the run's working folder and rerun",
                     "the LoadGen did not report reading audit.config, so this is not a %s run",
                     test);
    if (ib_mllog_num_errors(log))
        IB_CHECK_ERR(ctx, rel_detail, "comp.detail-errors",
                     "fix the cause the LoadGen names and rerun the test",
                     "the LoadGen logged %zu error(s) in the %s run", ib_mllog_num_errors(log),
                     test);
    const char *mode = ib_mllog_get_str(log, "effective_test_mode");
    if (mode && strcmp(mode, "PerformanceOnly"))
        IB_CHECK_ERR(ctx, rel_detail, "comp.settings", FIX_RERUN_TEST,
                     "%s must run in PerformanceOnly mode, the log says \"%s\"", test, mode);
    uint64_t seeds[3] = {0, 0, 0};
    static const char *const sk[3] = {"effective_qsl_rng_seed", "effective_sample_index_rng_seed",
                                      "effective_schedule_rng_seed"};
    bool have = true;
    for (int i = 0; i < 3; i++)
        have &= ib_mllog_get_u64(log, sk[i], &seeds[i]);
    const uint64_t *want = !strcmp(test, "TEST05") ? r->test05_seeds : r->seeds;
    if (have && (seeds[0] != want[0] || seeds[1] != want[1] || seeds[2] != want[2]))
        IB_CHECK_ERR(ctx, rel_detail, "comp.settings",
                     !strcmp(test, "TEST05") ? "use TEST05's audit.config, which sets the "
                                               "alternative seeds"
                                             : "run with the round's mlperf.conf seeds",
                     "%s ran with seeds %llu / %llu / %llu, expected %llu / %llu / %llu", test,
                     (unsigned long long)seeds[0], (unsigned long long)seeds[1],
                     (unsigned long long)seeds[2], (unsigned long long)want[0],
                     (unsigned long long)want[1], (unsigned long long)want[2]);
    uint64_t v;
    bool b;
    if (!strcmp(test, "TEST01")) {
        if (!ib_mllog_get_u64(log, "effective_accuracy_log_sampling_target", &v) || v == 0)
            IB_CHECK_ERR(ctx, rel_detail, "comp.settings",
                         "use TEST01's audit.config (accuracy_log_sampling_target)",
                         "TEST01 ran without accuracy-log sampling "
                         "(effective_accuracy_log_sampling_target is 0 or missing)");
        if (ib_mllog_get_u64(log, "effective_accuracy_log_rng_seed", &v) && v != r->test01_rng_seed)
            IB_CHECK_WARN(ctx, rel_detail, "comp.settings",
                          "use the accuracy_log_rng_seed of TEST01's audit.config",
                          "effective_accuracy_log_rng_seed is %llu, TEST01's audit.config sets "
                          "%llu",
                          (unsigned long long)v, (unsigned long long)r->test01_rng_seed);
    } else if (!strcmp(test, "TEST04-A")) {
        if (!ib_mllog_get_bool(log, "effective_performance_issue_unique", &b) || !b)
            IB_CHECK_ERR(ctx, rel_detail, "comp.settings", "use TEST04-A's audit.config",
                         "TEST04-A ran without performance_issue_unique");
    } else if (!strcmp(test, "TEST04-B") || !strcmp(test, "TEST04")) {
        if (!ib_mllog_get_bool(log, "effective_performance_issue_same", &b) || !b)
            IB_CHECK_ERR(ctx, rel_detail, "comp.settings", "use the test's audit.config",
                         "%s ran without performance_issue_same", test);
    }
    IB_UNUSED(s);
    ib_mllog_destroy(log);
}

/* Recompute verify_performance.txt from the logs in the tree and compare. */
static void recheck_perf(ib_check_ctx *ctx, const ib_check_scn *s, const char *test,
                         const char *rel_results, const char *rel_comp, const char *file_text,
                         const char *rel_verify)
{
    char res[IB_CHECK_PATH_MAX], t[IB_CHECK_PATH_MAX], a[IB_CHECK_PATH_MAX], b[IB_CHECK_PATH_MAX];
    ib_verify_options o;
    ib_verify_outcome out;
    ib_err err;
    ib_verify_options_defaults(&o);
    o.version = ctx->rules->version;
    o.benchmark = s->bench;
    ib_verify_outcome_init(&out);
    int rc;
    ib_check_abs(ctx, rel_results, res);
    if (!strcmp(test, "TEST04-A")) {
        char ra[IB_CHECK_PATH_MAX], rb[IB_CHECK_PATH_MAX];
        ib_check_fmt(ra, "%s/TEST04-A", rel_comp);
        ib_check_fmt(rb, "%s/TEST04-B", rel_comp);
        rc = ib_verify_test04_dir(NULL, ib_check_abs(ctx, ra, a), ib_check_abs(ctx, rb, b), NULL,
                                  &o, &out, &err);
    } else {
        char rt[IB_CHECK_PATH_MAX];
        ib_check_fmt(rt, "%s/%s", rel_comp, test);
        ib_check_abs(ctx, rt, t);
        if (!strcmp(test, "TEST04"))
            rc = ib_verify_test04_dir(res, t, NULL, NULL, &o, &out, &err);
        else if (!strcmp(test, "TEST05"))
            rc = ib_verify_test05_dir(res, t, NULL, &o, &out, &err);
        else {
            /* TEST01's performance half only */
            char ref[IB_CHECK_PATH_MAX], tl[IB_CHECK_PATH_MAX];
            const char *nm = o.version == IB_CHECK_V1_1 ? "mlperf_log_summary.txt"
                                                        : "mlperf_log_detail.txt";
            rc = ib_verify_find_log(res, "performance/run_1", nm, ref, sizeof ref, &err);
            if (!rc)
                rc = ib_verify_find_log(t, "performance/run_1", nm, tl, sizeof tl, &err);
            if (!rc)
                rc = ib_verify_performance(ref, tl, IB_VERIFY_TEST01, &o, &out, &err);
        }
    }
    if (rc) {
        /* missing inputs are reported by the file checks */
        ib_verify_outcome_deinit(&out);
        return;
    }
    bool file_pass = has_line_with(file_text, "TEST PASS");
    char mine[512], theirs[512];
    score_lines(out.text, mine, sizeof mine);
    score_lines(file_text, theirs, sizeof theirs);
    if (file_pass && out.verdict != IB_VERIFY_PASS)
        IB_CHECK_ERR(ctx, rel_verify, "comp.recheck",
                     "regenerate verify_performance.txt from the logs in the tree (inferbench "
                     "audit does), and fix the failing run",
                     "the file says TEST PASS, but the logs in the tree give a fail: %s",
                     out.reason);
    else if (strcmp(mine, theirs))
        /* the verify file was made against another run (e.g. the submission run was redone
         * afterwards); the test still passes on the logs that are submitted */
        IB_CHECK_WARN(ctx, rel_verify, "comp.recheck-stale",
                      "regenerate verify_performance.txt from the runs that are in the tree",
                      "the file reports \"%s\" but the logs in the tree give \"%s\" (%s with "
                      "these logs)",
                      theirs, mine, out.verdict == IB_VERIFY_PASS ? "the test still passes"
                                                                  : "the test fails");
    ib_verify_outcome_deinit(&out);
}

/*
 * A TEST01 "TEST PASS" is recomputed when both accuracy logs are complete (a fresh audit, not
 * a truncated submission). The official default comparison (first byte) is used, so a file
 * made with any --dtype that passed also passes here.
 */
static void recheck_test01_accuracy(ib_check_ctx *ctx, const ib_check_scn *s,
                                    const char *rel_test, const char *rel_verify)
{
    char ra[IB_CHECK_PATH_MAX], rt[IB_CHECK_PATH_MAX], pa[IB_CHECK_PATH_MAX],
        pt[IB_CHECK_PATH_MAX];
    ib_check_fmt(ra, "%s/%s/results/%s/%s/%s/accuracy/mlperf_log_accuracy.json", s->division,
                 s->submitter, s->system, s->bench, s->scenario);
    ib_check_fmt(rt, "%s/accuracy/mlperf_log_accuracy.json", rel_test);
    if (!ib_check_is_file(ctx, ra) || !ib_check_is_file(ctx, rt))
        return;
    ib_verify_options o;
    ib_verify_outcome out;
    ib_err err;
    ib_verify_options_defaults(&o);
    o.version = ctx->rules->version;
    o.compare = IB_VERIFY_FIRST_BYTE;
    ib_verify_outcome_init(&out);
    if (ib_verify_test01_accuracy(ib_check_abs(ctx, ra, pa), ib_check_abs(ctx, rt, pt), &o, &out,
                                  &err) == IB_OK &&
        out.verdict == IB_VERIFY_FAIL)
        IB_CHECK_ERR(ctx, rel_verify, "comp.recheck",
                     "regenerate verify_accuracy.txt from the logs in the tree and fix the SUT "
                     "so performance mode returns the accuracy-mode responses",
                     "the file says TEST PASS, but comparing the two accuracy logs in the tree "
                     "gives: %s",
                     out.reason);
    ib_verify_outcome_deinit(&out);
}

static void check_test01_accuracy(ib_check_ctx *ctx, const ib_check_scn *s, const char *rel_test)
{
    char rel[IB_CHECK_PATH_MAX], acc[IB_CHECK_PATH_MAX];
    ib_check_rel(rel, rel_test, "verify_accuracy.txt");
    size_t n;
    char *text = read_small(ctx, rel, &n);
    if (!text) {
        IB_CHECK_ERR(ctx, rel, "comp.verify-missing", FIX_RERUN_TEST,
                     "verify_accuracy.txt is missing or unreadable");
        return;
    }
    bool passed = has_line_with(text, "TEST PASS");
    ib_free(text);
    if (passed && ctx->opts.recheck_compliance)
        recheck_test01_accuracy(ctx, s, rel_test, rel);
    ib_check_rel(acc, rel_test, "accuracy");
    if (!ib_check_is_dir(ctx, acc)) {
        IB_CHECK_ERR(ctx, acc, "comp.acc-dir", FIX_RERUN_TEST,
                     "TEST01 has no accuracy/ folder (its sampled accuracy log belongs there)");
        return;
    }
    static const char *const req[] = {"mlperf_log_accuracy.json", "accuracy.txt", NULL};
    static const char *const fb[] = {"baseline_accuracy.txt", "compliance_accuracy.txt", NULL};
    ib_check_file_list(ctx, acc, req, fb, IB_CHECK_WARNING, "comp.files");
    char base[IB_CHECK_PATH_MAX], comp[IB_CHECK_PATH_MAX];
    ib_check_rel(base, acc, "baseline_accuracy.txt");
    ib_check_rel(comp, acc, "compliance_accuracy.txt");
    bool have_fb = ib_check_is_file(ctx, base) && ib_check_is_file(ctx, comp);
    if (passed)
        return;
    if (!have_fb) {
        IB_CHECK_ERR(ctx, rel, "comp.acc-fallback",
                     "if the difference is allowed non-determinism, run the reference accuracy "
                     "script on the common subset (create_accuracy_baseline.py) and add "
                     "baseline_accuracy.txt and compliance_accuracy.txt to accuracy/",
                     "the byte comparison of TEST01 failed and the fallback files are missing");
        return;
    }
    ib_verify_options o;
    ib_verify_outcome out;
    ib_err err;
    char pb[IB_CHECK_PATH_MAX], pc[IB_CHECK_PATH_MAX];
    ib_verify_options_defaults(&o);
    o.version = ctx->rules->version;
    o.benchmark = s->bench;
    ib_verify_outcome_init(&out);
    out.verdict = IB_VERIFY_FAIL;
    int rc = ib_verify_accuracy_fallback(ib_check_abs(ctx, base, pb), ib_check_abs(ctx, comp, pc),
                                         &o, &out, &err);
    if (rc)
        IB_CHECK_ERR(ctx, acc, "comp.acc-fallback", "make both files readable text",
                     "cannot evaluate the fallback: %s", err.msg);
    else if (out.fallback_verdict == IB_VERIFY_PASS)
        IB_CHECK_WARN(ctx, rel, "comp.acc-fallback",
                      "none: the accuracy delta is within the allowed tolerance",
                      "the byte comparison failed (allowed non-determinism); accepted because "
                      "the accuracy on the sampled subset agrees: baseline %.6g, compliance "
                      "%.6g (tolerance %g %%)",
                      out.fallback_baseline, out.fallback_compliance,
                      ib_rules_fallback_delta(s->model));
    else
        IB_CHECK_ERR(ctx, rel, "comp.acc-fallback",
                     "the responses in performance mode are not those of accuracy mode: fix "
                     "the SUT so both modes run the same computation",
                     "TEST01 fails: %s", out.reason);
    ib_verify_outcome_deinit(&out);
}

static void check_test(ib_check_ctx *ctx, ib_check_scn *s, const char *test, const char *rel_comp,
                       const char *rel_results)
{
    char rel_test[IB_CHECK_PATH_MAX], rel[IB_CHECK_PATH_MAX], run[IB_CHECK_PATH_MAX];
    ib_check_rel(rel_test, rel_comp, test);
    if (!ib_check_is_dir(ctx, rel_test)) {
        IB_CHECK_ERR(ctx, rel_test, "comp.missing-test", FIX_RERUN_TEST,
                     "%s is required for %s %s and is missing", test, s->model->name, s->scenario);
        return;
    }
    bool v11 = ctx->rules->version == IB_CHECK_V1_1;
    char *vtext = NULL;
    if (!(v11 && !strcmp(test, "TEST04-B"))) {
        size_t n;
        ib_check_rel(rel, rel_test, "verify_performance.txt");
        vtext = read_small(ctx, rel, &n);
        if (!vtext) {
            IB_CHECK_ERR(ctx, rel, "comp.verify-missing", FIX_RERUN_TEST,
                         "verify_performance.txt is missing or unreadable");
        } else if (!has_line_with(vtext, "TEST PASS")) {
            char why[300];
            line_with(vtext, "TEST FAIL", why, sizeof why);
            IB_CHECK_ERR(ctx, rel, "comp.verify-fail",
                         "fix the performance difference the test found and rerun it",
                         "%s did not pass: %s", test, why[0] ? why : "no TEST PASS line");
        }
    }
    ib_check_rel(run, rel_test, "performance/run_1");
    if (!ib_check_is_dir(ctx, run)) {
        IB_CHECK_ERR(ctx, run, "comp.run-missing", FIX_RERUN_TEST,
                     "%s has no performance/run_1 folder with the run's logs", test);
    } else {
        size_t missing = ib_check_file_list(ctx, run, g_comp_perf_files, g_comp_perf_optional,
                                            IB_CHECK_WARNING, "comp.files");
        ib_check_rel(rel, run, "mlperf_log_detail.txt");
        if (ib_check_is_file(ctx, rel))
            check_run_settings(ctx, s, test, rel);
        if (!missing && vtext && ctx->opts.recheck_compliance && strcmp(test, "TEST04-B")) {
            char rv[IB_CHECK_PATH_MAX];
            ib_check_rel(rv, rel_test, "verify_performance.txt");
            recheck_perf(ctx, s, test, rel_results, rel_comp, vtext, rv);
        }
    }
    ib_free(vtext);
    if (!strcmp(test, "TEST01"))
        check_test01_accuracy(ctx, s, rel_test);
}

void ib_check_compliance_dir(ib_check_ctx *ctx, ib_check_scn *s)
{
    char rel_comp[IB_CHECK_PATH_MAX], rel_results[IB_CHECK_PATH_MAX];
    ib_check_fmt(rel_comp, "%s/%s/compliance/%s/%s/%s", s->division, s->submitter,
             s->system, s->bench, s->scenario);
    ib_check_fmt(rel_results, "%s/%s/results/%s/%s/%s", s->division,
             s->submitter, s->system, s->bench, s->scenario);
    size_t e0 = ib_check_report_error_count(ctx->rep);
    unsigned tests = s->model->tests;
    /* v1.1 check_compliance_dir: no TEST04 for MultiStream */
    if (ctx->rules->version == IB_CHECK_V1_1 && s->scn_bit == IB_SCN_MULTI)
        tests &= ~(unsigned)(IB_CT_TEST04A | IB_CT_TEST04B);
    if (!ib_check_is_dir(ctx, rel_comp)) {
        IB_CHECK_ERR(ctx, rel_comp, "comp.missing-dir", FIX_RERUN_TEST,
                     "no compliance folder for this closed-division result");
        s->compliance_ok = false;
        return;
    }
    ib_dirlist l;
    ib_err err;
    if (ib_dirlist_read(ctx, rel_comp, &l, &err) == IB_OK) {
        for (size_t i = 0; i < l.n; i++) {
            bool known = false;
            for (size_t k = 0; k < IB_ARRAY_LEN(g_tests); k++)
                known |= (tests & g_tests[k].bit) && !strcmp(l.names[i], g_tests[k].name);
            if (!known) {
                char rel[IB_CHECK_PATH_MAX];
                IB_CHECK_WARN(ctx, ib_check_rel(rel, rel_comp, l.names[i]), "tree.unexpected",
                              "remove it", "%s is not a compliance test of %s %s in the %s rules",
                              l.names[i], s->model->name, s->scenario, ctx->rules->name);
            }
        }
        ib_dirlist_free(&l);
    }
    for (size_t k = 0; k < IB_ARRAY_LEN(g_tests) && !ctx->oom; k++)
        if (tests & g_tests[k].bit)
            check_test(ctx, s, g_tests[k].name, rel_comp, rel_results);
    s->compliance_ok = ib_check_report_error_count(ctx->rep) == e0;
}
