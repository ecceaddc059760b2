/*
 * check_results.c - a result's accuracy/ and performance/run_1/ folders (benchmarks.md §2.4;
 * check_accuracy_dir and check_performance_dir of the r1.1 checker; accuracy_check.py and
 * performance_check.py of the modular one; loadgen.md §6 for the detail-log keys).
 *
 * Accuracy: the four files, the metric line of accuracy.txt against the target, the hash
 * line (and, for an untruncated log, that it is the log's SHA-256), the 10 KiB limit, no
 * LoadGen errors, the whole dataset covered. Performance: VALID, no LoadGen errors, the
 * round's seeds, the performance sample count, latency bound, minimum queries, Offline
 * samples per query, minimum duration (and early stopping, equal issue for current).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "compliance/acclog.h"
#include "compliance/acctxt.h"
#include "compliance/check_internal.h"
#include "compliance/mllog.h"
#include "compliance/sha256.h"

static const char *const g_acc_files[] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt",
                                          "accuracy.txt", "mlperf_log_accuracy.json", NULL};
static const char *const g_perf_files[] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt",
                                           NULL};
static const char *const g_perf_optional[] = {"mlperf_log_accuracy.json", NULL};

#define FIX_RESTORE_LOG "copy the LoadGen's mlperf_log_detail.txt of the run again, unmodified"

/* Load a detail log, reporting why it cannot be used. */
static ib_mllog *load_detail(ib_check_ctx *ctx, const char *rel, const char *rule)
{
    char p[IB_CHECK_PATH_MAX];
    ib_mllog *log = NULL;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_mllog_load(ib_check_abs(ctx, rel, p), &log, &err);
    if (rc == IB_ENOTFOUND) {
        IB_CHECK_ERR(ctx, rel, rule, FIX_RESTORE_LOG, "the detail log is missing");
        return NULL;
    }
    if (rc) {
        /* err names the absolute path; report it relative to the tree */
        const char *m = err.msg;
        size_t rl = strlen(ctx->root);
        if (!strncmp(m, ctx->root, rl) && m[rl] == '/')
            m += rl + 1;
        IB_CHECK_ERR(ctx, rel, rule, FIX_RESTORE_LOG, "cannot use the detail log: %s", m);
        return NULL;
    }
    return log;
}

/* Records with metadata.is_error (loadgen.md §6: meant to fail the run). */
static void report_log_errors(ib_check_ctx *ctx, const ib_mllog *log, const char *rel,
                              const char *rule)
{
    size_t n = ib_mllog_num_errors(log);
    if (!n)
        return;
    char list[700] = "";
    size_t shown = 0, len = 0;
    for (size_t i = 0; i < ib_mllog_count(log) && shown < 3; i++) {
        const ib_mllog_rec *r = ib_mllog_at(log, i);
        if (!r->is_error)
            continue;
        char v[240];
        ib_mllog_value_text(r, v, sizeof v);
        int w = snprintf(list + len, sizeof list - len, "%sline %zu %s: %s", shown ? "; " : "",
                         r->line, r->key, v);
        if (w > 0 && (size_t)w < sizeof list - len)
            len += (size_t)w;
        shown++;
    }
    IB_CHECK_ERR(ctx, rel, rule,
                 "fix the cause the LoadGen names and rerun; errors are not allowed in a "
                 "submitted log",
                 "the LoadGen logged %zu error%s: %s%s", n, n == 1 ? "" : "s", list,
                 n > shown ? "; ..." : "");
}

static void loadgen_version_check(ib_check_ctx *ctx, const ib_mllog *log, const char *rel)
{
    const char *v = ib_mllog_get_str(log, "loadgen_version");
    if (!v)
        return;
    bool v11 = ctx->rules->version == IB_CHECK_V1_1;
    int major = 0, minor = 0;
    sscanf(v, "%d.%d", &major, &minor);
    if (v11 ? (major != 1 || minor != 1) : major < 4)
        IB_CHECK_WARN(ctx, rel, "perf.loadgen-version",
                      v11 ? "run with the LoadGen of the round (1.1), or check with --version "
                            "current"
                          : "run with a current LoadGen, or check with --version v1.1",
                      "the log was written by LoadGen \"%s\", not one of the %s round", v,
                      ctx->rules->name);
}

/* ---- accuracy ------------------------------------------------------------------------- */

static void check_acc_log(ib_check_ctx *ctx, const char *rel_dir, const ib_acctxt *t)
{
    char rel[IB_CHECK_PATH_MAX], p[IB_CHECK_PATH_MAX];
    ib_check_rel(rel, rel_dir, "mlperf_log_accuracy.json");
    struct stat st;
    if (stat(ib_check_abs(ctx, rel, p), &st) != 0 || !S_ISREG(st.st_mode))
        return; /* reported by the file list */
    if ((size_t)st.st_size > IB_ACCLOG_MAX_SUBMITTED)
        IB_CHECK_ERR(ctx, rel, "acc.log-size",
                     "truncate it with truncate_accuracy_log.py (or inferbench package), which "
                     "keeps 4 KiB from each end and appends the SHA-256 to accuracy.txt",
                     "the accuracy log is %lld bytes, more than the %d-byte limit: it is not "
                     "truncated",
                     (long long)st.st_size, IB_ACCLOG_MAX_SUBMITTED);
    ib_acclog *log;
    ib_err err;
    if (ib_acclog_load(p, &log, &err)) {
        const char *m = strstr(err.msg, rel) ? strstr(err.msg, rel) : err.msg;
        IB_CHECK_ERR(ctx, rel, "acc.log-format",
                     "restore the LoadGen's accuracy log (then truncate it with the official "
                     "tool)",
                     "%s", m);
        return;
    }
    bool truncated = ib_acclog_truncated(log);
    ib_acclog_destroy(log);
    if (!truncated && t->has_hash) {
        char hex[65];
        if (ib_sha256_file_hex(p, hex, &err) == IB_OK && strcmp(hex, t->hash))
            IB_CHECK_ERR(ctx, rel, "acc.hash-mismatch",
                         "recompute: the hash line must be the SHA-256 of the full accuracy log "
                         "(truncate_accuracy_log.py writes it before truncating)",
                         "the log is not truncated and its SHA-256 is %s, but accuracy.txt says "
                         "hash=%s",
                         hex, t->hash);
    }
}

void ib_check_accuracy_dir(ib_check_ctx *ctx, ib_check_scn *s)
{
    const ib_rules_model *m = s->model;
    char dir[IB_CHECK_PATH_MAX], rel[IB_CHECK_PATH_MAX], p[IB_CHECK_PATH_MAX];
    ib_check_fmt(dir, "%s/%s/results/%s/%s/%s/accuracy", s->division, s->submitter,
             s->system, s->bench, s->scenario);
    size_t e0 = ib_check_report_error_count(ctx->rep);
    if (!ib_check_is_dir(ctx, dir)) {
        IB_CHECK_ERR(ctx, dir, "acc.missing-dir",
                     "run the scenario in accuracy mode and put its logs and accuracy.txt here",
                     "no accuracy folder");
        return;
    }
    ib_check_file_list(ctx, dir, g_acc_files, NULL, IB_CHECK_ERROR, "acc.files");
    ib_check_rel(rel, dir, "accuracy.txt");
    ib_acctxt t;
    ib_err err;
    memset(&t, 0, sizeof t);
    if (ib_check_is_file(ctx, rel)) {
        if (ib_acctxt_load(ib_check_abs(ctx, rel, p), ctx->rules, m->metric, &t, &err)) {
            IB_CHECK_ERR(ctx, rel, "acc.metric", "make accuracy.txt a readable text file",
                         "cannot read accuracy.txt: %s", err.msg);
        } else {
            if (!t.has_value)
                IB_CHECK_ERR(ctx, rel, "acc.metric",
                             "save the complete output of the benchmark's accuracy script "
                             "(e.g. accuracy-imagenet.py) as accuracy.txt",
                             "no line with the %s result (pattern %s of the %s checker)",
                             ib_acc_metric_name(m->metric),
                             ib_acc_metric_pattern(ctx->rules, m->metric, &(int){0}),
                             ctx->rules->name);
            else if (t.bad_number)
                IB_CHECK_ERR(ctx, rel, "acc.metric", "write the value as a plain number",
                             "line %zu: the %s value \"%s\" is not a number", t.value_line,
                             ib_acc_metric_name(m->metric), t.value_text);
            else if (s->closed && !(t.value >= m->acc_target))
                IB_CHECK_ERR(ctx, rel, "acc.target",
                             "the result does not qualify for the closed division: fix the "
                             "model's accuracy (calibration, precision) or submit it to open",
                             "line %zu: %s = %s is below the target %.6g (%s)", t.value_line,
                             ib_acc_metric_name(m->metric), t.value_text, m->acc_target,
                             m->acc_target_expr);
            if (t.has_value && !t.bad_number) {
                s->has_accuracy = true;
                s->accuracy = t.value;
            }
            if (!t.has_hash)
                IB_CHECK_ERR(ctx, rel, "acc.hash",
                             "truncate the accuracy log with truncate_accuracy_log.py, which "
                             "appends hash=<sha256> to accuracy.txt",
                             "no \"hash=\" line for mlperf_log_accuracy.json");
        }
    } else {
        IB_CHECK_ERR(ctx, rel, "acc.missing-txt",
                     "run the benchmark's accuracy script on mlperf_log_accuracy.json "
                     "(accuracy-imagenet.py, accuracy-coco.py, ...) and save its output here",
                     "accuracy.txt is missing");
    }
    check_acc_log(ctx, dir, &t);
    ib_check_rel(rel, dir, "mlperf_log_detail.txt");
    ib_mllog *log = ib_check_is_file(ctx, rel) ? load_detail(ctx, rel, "acc.detail") : NULL;
    if (log) {
        report_log_errors(ctx, log, rel, "acc.detail-errors");
        const char *mode = ib_mllog_get_str(log, "effective_test_mode");
        if (mode && strcmp(mode, "AccuracyOnly"))
            IB_CHECK_WARN(ctx, rel, "acc.mode", "put the accuracy-mode run's logs here",
                          "effective_test_mode is \"%s\", not AccuracyOnly", mode);
        uint64_t total = 0;
        bool have = ib_mllog_get_u64(log, "effective_accuracy_sample_count", &total) ||
                    ib_mllog_get_u64(log, "qsl_reported_total_count", &total);
        if (m->dataset_size && have && total != m->dataset_size)
            IB_CHECK_ERR(ctx, rel, "acc.dataset",
                         "run accuracy mode over the whole dataset (do not shrink the QSL or "
                         "set accuracy_sample_count_override)",
                         "the accuracy run covered %llu samples; %s's dataset has %llu",
                         (unsigned long long)total, m->name,
                         (unsigned long long)m->dataset_size);
        ib_mllog_destroy(log);
    }
    s->acc_ok = ib_check_report_error_count(ctx->rep) == e0;
}

/* ---- performance ---------------------------------------------------------------------- */

static bool need_u64(ib_check_ctx *ctx, const ib_mllog *log, const char *rel, const char *key,
                     uint64_t *v)
{
    if (ib_mllog_get_u64(log, key, v))
        return true;
    char t[240];
    ib_mllog_value_text(ib_mllog_find(log, key), t, sizeof t);
    IB_CHECK_ERR(ctx, rel, "perf.key-missing", FIX_RESTORE_LOG,
                 "%s is missing or not a non-negative integer (found %s)", key, t);
    return false;
}

static const char *metric_key(const ib_check_ctx *ctx, const char *scenario)
{
    bool v11 = ctx->rules->version == IB_CHECK_V1_1;
    if (!strcmp(scenario, "Offline"))
        return "result_samples_per_second";
    if (!strcmp(scenario, "SingleStream"))
        return v11 ? "result_90.00_percentile_latency_ns" : "early_stopping_latency_ss";
    if (!strcmp(scenario, "MultiStream"))
        return v11 ? "effective_samples_per_query" : "early_stopping_latency_ms";
    if (!strcmp(scenario, "Server"))
        return v11 ? "result_scheduled_samples_per_sec" : "result_completed_samples_per_sec";
    if (!strcmp(scenario, "Interactive"))
        return "result_completed_samples_per_sec";
    return NULL;
}

/* Why LoadGen said INVALID, from the *_met flags, with a fix per reason. */
static void report_invalid(ib_check_ctx *ctx, const ib_mllog *log, const char *rel,
                           const char *validity, const char *scenario)
{
    static const struct {
        const char *key, *what, *fix;
    } flags[] = {
        {"result_perf_constraints_met", "the latency bound was missed",
         "lower the Server target_qps in user.conf until the latency percentile is within the "
         "bound, then rerun"},
        {"result_min_duration_met", "the run was shorter than min_duration",
         "raise the expected throughput (Offline/Server target_qps) so the LoadGen generates "
         "enough queries for 600 s, then rerun"},
        {"result_min_queries_met", "fewer queries than min_query_count were issued",
         "run longer or raise target_qps so min_query_count queries are issued, then rerun"},
        {"early_stopping_met", "the early-stopping criterion was not met",
         "run more queries (longer min_duration or higher QPS) so early stopping can conclude"},
    };
    char why[600] = "";
    const char *fix = "rerun after fixing what the summary's Recommendations list";
    size_t len = 0;
    for (size_t i = 0; i < IB_ARRAY_LEN(flags); i++) {
        bool b;
        if (ib_mllog_get_bool(log, flags[i].key, &b) && !b) {
            int w = snprintf(why + len, sizeof why - len, "%s%s (%s false)", len ? "; " : "",
                             flags[i].what, flags[i].key);
            if (w > 0 && (size_t)w < sizeof why - len)
                len += (size_t)w;
            fix = flags[i].fix;
        }
    }
    const char *reason = ib_mllog_get_str(log, "result_invalid_reason");
    IB_CHECK_ERR(ctx, rel, "perf.invalid", fix,
                 "result_validity is %s%s%s%s%s for the %s run%s%s", validity ? "\"" : "",
                 validity ? validity : "missing", validity ? "\"" : "", len ? ": " : "", why,
                 scenario, reason ? "; LoadGen says: " : "", reason ? reason : "");
}

static void check_seeds(ib_check_ctx *ctx, const ib_mllog *log, const char *rel,
                        const uint64_t want[3], const char *rule, const char *fix)
{
    static const char *const keys[3] = {"effective_qsl_rng_seed", "effective_sample_index_rng_seed",
                                        "effective_schedule_rng_seed"};
    uint64_t got[3];
    bool have = true;
    for (int i = 0; i < 3; i++)
        have &= need_u64(ctx, log, rel, keys[i], &got[i]);
    if (!have)
        return;
    const char *round = ib_rules_seed_round(got[0], got[1], got[2]);
    for (int i = 0; i < 3; i++)
        if (got[i] != want[i])
            IB_CHECK_ERR(ctx, rel, rule, fix, "%s is %llu, expected %llu%s%s%s", keys[i],
                         (unsigned long long)got[i], (unsigned long long)want[i],
                         round ? " (the three seeds are those of " : "", round ? round : "",
                         round ? ")" : "");
}

static void check_latency_and_counts(ib_check_ctx *ctx, const ib_mllog *log, const char *rel,
                                     const ib_check_scn *s, const char *scenario, unsigned bit)
{
    const ib_rules_model *m = s->model;
    const ib_rules *r = ctx->rules;
    bool es = r->early_stopping && (bit & (IB_SCN_SERVER | IB_SCN_SINGLE | IB_SCN_MULTI));
    uint64_t bound = bit == IB_SCN_SERVER ? m->server_latency_ns
                     : bit == IB_SCN_MULTI ? m->multi_latency_ns
                                           : 0;
    if (es) {
        bool met = false;
        if (!ib_mllog_get_bool(log, "early_stopping_met", &met) || !met) {
            const char *why = ib_mllog_get_str(log, "early_stopping_result");
            IB_CHECK_ERR(ctx, rel, "perf.early-stopping",
                         "run more queries (longer min_duration or higher QPS) so early stopping "
                         "can conclude",
                         "early_stopping_met is not true%s%s", why ? ": " : "", why ? why : "");
        }
        uint64_t lat;
        if (bound && need_u64(ctx, log, rel, "effective_target_latency_ns", &lat) && lat > bound)
            IB_CHECK_ERR(ctx, rel, "perf.latency",
                         "set the Server target_latency to the benchmark's bound (do not raise "
                         "it in user.conf)",
                         "effective_target_latency_ns %llu exceeds %s's bound of %llu ns",
                         (unsigned long long)lat, m->name, (unsigned long long)bound);
    } else if (bound) {
        const char *key = bit == IB_SCN_MULTI ? "result_99.00_percentile_per_query_latency_ns"
                                              : "result_99.00_percentile_latency_ns";
        uint64_t p99;
        if (need_u64(ctx, log, rel, key, &p99) && p99 > bound)
            IB_CHECK_ERR(ctx, rel, "perf.latency",
                         "lower target_qps in user.conf until the 99th percentile is within "
                         "the bound, then rerun",
                         "%s is %llu ns, above %s's %s bound of %llu ns", key,
                         (unsigned long long)p99, m->name, scenario, (unsigned long long)bound);
    }
    uint64_t minq_req = bit == IB_SCN_SINGLE    ? m->minq_single
                        : bit == IB_SCN_MULTI   ? m->minq_multi
                        : bit == IB_SCN_SERVER  ? m->minq_server
                        : bit == IB_SCN_OFFLINE ? m->minq_offline
                                                : 0;
    uint64_t v;
    if (!es && minq_req && need_u64(ctx, log, rel, "effective_min_query_count", &v) &&
        v < minq_req)
        IB_CHECK_ERR(ctx, rel, "perf.min-queries",
                     "remove the min_query_count override from user.conf (the rules file sets "
                     "it)",
                     "effective_min_query_count is %llu, %s %s needs at least %llu",
                     (unsigned long long)v, m->name, scenario, (unsigned long long)minq_req);
    uint64_t spq_req = r->version == IB_CHECK_V1_1 ? 24576 : (s->closed ? m->offline_min_spq : 0);
    if (bit == IB_SCN_OFFLINE && spq_req &&
        need_u64(ctx, log, rel, "effective_samples_per_query", &v) && v < spq_req)
        IB_CHECK_ERR(ctx, rel, "perf.offline-spq",
                     "raise Offline target_qps (samples per query = 1.1 x 600 s x target_qps, at "
                     "least the minimum) and do not override samples_per_query",
                     "effective_samples_per_query is %llu, the minimum is %llu",
                     (unsigned long long)v, (unsigned long long)spq_req);
    if (need_u64(ctx, log, rel, "effective_min_duration_ms", &v) && v < r->min_duration_ms)
        IB_CHECK_ERR(ctx, rel, "perf.min-duration",
                     "remove the min_duration override from user.conf (the rules require 600 s)",
                     "effective_min_duration_ms is %llu, the rules require %llu",
                     (unsigned long long)v, (unsigned long long)r->min_duration_ms);
}

/* The metric the result reports (RESULT_FIELD_NEW), scaled like the checker (ns -> ms). */
static void read_metric(ib_check_ctx *ctx, const ib_mllog *log, const char *rel, ib_check_scn *s,
                        const char *log_scn)
{
    const char *key = metric_key(ctx, log_scn);
    double v;
    if (!key)
        return;
    /* inferred Offline result from SingleStream: the QPS without LoadGen overhead */
    if (s->scn_bit == IB_SCN_OFFLINE && !strcmp(log_scn, "SingleStream"))
        key = "result_qps_without_loadgen_overhead";
    if (!ib_mllog_get_double(log, key, &v) || !isfinite(v)) {
        IB_CHECK_ERR(ctx, rel, "perf.key-missing", FIX_RESTORE_LOG,
                     "the result key %s is missing or not a number", key);
        return;
    }
    if (!strcmp(log_scn, "SingleStream") && s->scn_bit != IB_SCN_OFFLINE)
        v /= 1e6;
    else if (!strcmp(log_scn, "MultiStream") && ctx->rules->version != IB_CHECK_V1_1)
        v /= 1e6;
    s->has_metric = true;
    s->metric = v;
}

/* Scenario the log ran vs the folder it sits in; inferred results as the checkers allow. */
static bool scenario_ok(ib_check_ctx *ctx, const char *rel, const ib_check_scn *s,
                        const char *log_scn, const char *dir_scn)
{
    if (!strcmp(log_scn, dir_scn))
        return true;
    bool cur = ctx->rules->version == IB_CHECK_CURRENT;
    bool inferred = (!strcmp(log_scn, "SingleStream") && !strcmp(dir_scn, "Offline")) ||
                    (cur && !strcmp(log_scn, "SingleStream") && !strcmp(dir_scn, "MultiStream")) ||
                    (cur && !strcmp(log_scn, "MultiStream") && !strcmp(dir_scn, "Offline"));
    if (inferred) {
        IB_CHECK_WARN(ctx, rel, "perf.inferred", "none needed if this is intended (edge only)",
                      "the %s result is inferred from a %s run", dir_scn, log_scn);
        return true;
    }
    IB_CHECK_ERR(ctx, rel, "perf.scenario", "put the run under the folder of its scenario",
                 "the run is a %s run (effective_scenario) but sits in %s/%s", log_scn, s->bench,
                 dir_scn);
    return false;
}

void ib_check_performance_dir(ib_check_ctx *ctx, ib_check_scn *s)
{
    const ib_rules_model *m = s->model;
    const ib_rules *r = ctx->rules;
    char dir[IB_CHECK_PATH_MAX], rel[IB_CHECK_PATH_MAX];
    ib_check_fmt(dir, "%s/%s/results/%s/%s/%s/performance/run_1", s->division,
             s->submitter, s->system, s->bench, s->scenario);
    size_t e0 = ib_check_report_error_count(ctx->rep);
    if (!ib_check_is_dir(ctx, dir)) {
        IB_CHECK_ERR(ctx, dir, "perf.missing-run",
                     "put the performance run's logs in performance/run_1/",
                     "no performance/run_1 folder");
        return;
    }
    ib_check_file_list(ctx, dir, g_perf_files, g_perf_optional, IB_CHECK_ERROR, "perf.files");
    ib_check_rel(rel, dir, "mlperf_log_detail.txt");
    ib_mllog *log = ib_check_is_file(ctx, rel) ? load_detail(ctx, rel, "perf.detail") : NULL;
    if (!log) {
        s->perf_ok = false;
        return;
    }
    const char *scenario = ib_check_is_file(ctx, rel) ? ib_mllog_get_str(log, "effective_scenario")
                                                      : NULL;
    const char *canon;
    unsigned bit = scenario ? ib_rules_scenario_bit(scenario, &canon) : 0;
    if (!scenario || !bit) {
        IB_CHECK_ERR(ctx, rel, "perf.key-missing", FIX_RESTORE_LOG,
                     "effective_scenario is missing or unknown");
        ib_mllog_destroy(log);
        return;
    }
    const char *validity = ib_mllog_get_str(log, "result_validity");
    if (!validity || strcmp(validity, "VALID"))
        report_invalid(ctx, log, rel, validity, scenario);
    report_log_errors(ctx, log, rel, "perf.detail-errors");
    loadgen_version_check(ctx, log, rel);
    const char *mode = ib_mllog_get_str(log, "effective_test_mode");
    if (mode && strcmp(mode, "PerformanceOnly") && strcmp(mode, "SubmissionRun"))
        IB_CHECK_ERR(ctx, rel, "perf.mode", "put the performance-mode run's logs here",
                     "effective_test_mode is \"%s\"; a performance run is required", mode);
    scenario_ok(ctx, rel, s, canon, s->scenario);
    uint64_t psc;
    if (need_u64(ctx, log, rel, "effective_performance_sample_count", &psc) &&
        psc < m->perf_sample_count)
        IB_CHECK_ERR(ctx, rel, "perf.sample-count",
                     "use the benchmark's performance sample count or more (do not lower "
                     "performance_sample_count_override)",
                     "effective_performance_sample_count is %llu, %s needs at least %llu",
                     (unsigned long long)psc, m->name, (unsigned long long)m->perf_sample_count);
    char fix[300];
    snprintf(fix, sizeof fix,
             "rerun with the official %s mlperf.conf and no seed keys in user.conf", r->name);
    check_seeds(ctx, log, rel, r->seeds, "perf.seeds", fix);
    check_latency_and_counts(ctx, log, rel, s, canon, bit);
    bool eq;
    if (r->version == IB_CHECK_CURRENT && s->closed && m->equal_issue &&
        (!ib_mllog_get_bool(log, "effective_sample_concatenate_permutation", &eq) || !eq))
        IB_CHECK_ERR(ctx, rel, "perf.equal-issue",
                     "set sample_concatenate_permutation = 1 for this benchmark (the rules file "
                     "does) and rerun",
                     "%s requires equal-issue mode: effective_sample_concatenate_permutation is "
                     "not true",
                     m->name);
    read_metric(ctx, log, rel, s, canon);
    ib_mllog_destroy(log);
    s->perf_ok = ib_check_report_error_count(ctx->rep) == e0;
}
