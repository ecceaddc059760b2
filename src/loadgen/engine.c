/*
 * engine.c - ib_lg_test: create/run/destroy and the StartTest pipeline of the
 * official LoadGen (loadgen.md §2.1): open the log files, log the identity
 * and the requested/effective settings, build the plan, run the mode
 * (AccuracyOnly, PerformanceOnly, SubmissionRun = accuracy then performance
 * with continuing sequence ids, FindPeakPerformance), then write the summary
 * footer, close the accuracy JSON and write result.json.
 *
 * One series (load set, generate, issue, wait, measure, log) is in
 * engine_series.c; FindPeak in findpeak.c. Nothing here is on the issue path.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/time.h"
#include "inferbench/version.h"
#include "loadgen/accuracy_log.h"
#include "loadgen/result_json.h"
#include "loadgen/summary.h"
#include "loadgen/engine_internal.h"
#include "loadgen/trace.h"

void ib_lg_log_settings_defaults(ib_lg_log_settings *l)
{
    memset(l, 0, sizeof *l);
    l->outdir = ".";
    l->prefix = "mlperf_log_";
    l->suffix = "";
    l->write_result_json = true;
}

void ib_lg_options_defaults(ib_lg_options *o)
{
    memset(o, 0, sizeof *o);
    o->progress_interval_ms = 500;
    o->sut_timeout_ms = IB_LG_DEFAULT_SUT_TIMEOUT_MS;
}

static char *dup_or(const char *s, const char *fallback)
{
    return ib_strdup(s ? s : fallback);
}

int ib_lg_test_create(const ib_lg_settings *settings, const ib_lg_log_settings *log,
                      const ib_lg_options *opts, ib_lg_test **out, ib_err *err)
{
    ib_err_clear(err);
    if (!settings || !out)
        return ib_err_set(err, IB_EINVAL, "ib_lg_test_create: settings and out are required");
    *out = NULL;
    int rc = ib_lg_settings_validate(settings, err);
    if (rc)
        return rc;
    if (settings->use_token_latencies)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "settings: use_token_latencies (TTFT/TPOT token mode) is not "
                          "implemented by this load generator; run without it");
    ib_lg_test *t = ib_calloc(1, sizeof *t);
    if (!t)
        return ib_err_set(err, IB_ENOMEM, "ib_lg_test_create: out of memory");
    t->settings = *settings;
    if (log)
        t->log = *log;
    else
        ib_lg_log_settings_defaults(&t->log);
    if (opts)
        t->opts = *opts;
    else
        ib_lg_options_defaults(&t->opts);
    if (t->opts.progress_interval_ms == 0)
        t->opts.progress_interval_ms = 500;
    t->outdir = dup_or(t->log.outdir, ".");
    t->prefix = dup_or(t->log.prefix, "mlperf_log_");
    t->suffix = dup_or(t->log.suffix, "");
    t->audit_path = t->opts.audit_config_applied ? ib_strdup(t->opts.audit_config_applied) : NULL;
    t->model_name = t->opts.model_name ? ib_strdup(t->opts.model_name) : NULL;
    bool oom = !t->outdir || !t->prefix || !t->suffix ||
               (t->opts.audit_config_applied && !t->audit_path) ||
               (t->opts.model_name && !t->model_name);
    if (!oom && t->opts.label_count > 0) {
        t->labels = ib_calloc(t->opts.label_count, sizeof *t->labels);
        oom = !t->labels;
        for (size_t i = 0; !oom && i < t->opts.label_count; i++) {
            t->labels[i] = dup_or(t->opts.labels ? t->opts.labels[i] : NULL, "");
            oom = !t->labels[i];
        }
        t->label_count = t->opts.label_count;
    }
    /* the copies own the strings now */
    t->log.outdir = t->outdir;
    t->log.prefix = t->prefix;
    t->log.suffix = t->suffix;
    t->opts.audit_config_applied = t->audit_path;
    t->opts.model_name = t->model_name;
    t->opts.labels = (const char *const *)t->labels;
    if (oom) {
        ib_lg_test_destroy(t);
        return ib_err_set(err, IB_ENOMEM, "ib_lg_test_create: out of memory");
    }
    ib_strbuf_init(&t->summary);
    ib_strbuf_init(&t->reasons_extra);
    if (ib_mutex_init(&t->phase_mu)) {
        ib_lg_test_destroy(t);
        return ib_err_set(err, IB_ENOMEM, "ib_lg_test_create: cannot create a mutex");
    }
    t->phase_ok = true;
    *out = t;
    return IB_OK;
}

const ib_lg_settings *ib_lg_test_settings(const ib_lg_test *t)
{
    return t ? &t->settings : NULL;
}

void ib_lg_test_abort(ib_lg_test *t)
{
    if (t)
        atomic_store(&t->abort, 1);
}

void ib_lg_test_destroy(ib_lg_test *t)
{
    if (!t)
        return;
    ib_lg_srt_free_all(t);
    ib_lg_plan_destroy(t->plan);
    if (t->phase_ok)
        ib_mutex_destroy(&t->phase_mu);
    ib_lg_detail_deinit(&t->detail);
    ib_strbuf_deinit(&t->summary);
    ib_strbuf_deinit(&t->reasons_extra);
    if (t->summary_f)
        fclose(t->summary_f);
    if (t->accuracy_f)
        fclose(t->accuracy_f);
    if (t->trace_f)
        fclose(t->trace_f);
    ib_free(t->outdir);
    ib_free(t->prefix);
    ib_free(t->suffix);
    ib_free(t->audit_path);
    ib_free(t->model_name);
    for (size_t i = 0; t->labels && i < t->label_count; i++)
        ib_free(t->labels[i]);
    ib_free(t->labels);
    ib_free(t);
}

void ib_lg_set_phase(ib_lg_test *t, const char *fmt, ...)
{
    va_list ap;
    ib_mutex_lock(&t->phase_mu);
    va_start(ap, fmt);
    vsnprintf(t->phase, sizeof t->phase, fmt, ap);
    va_end(ap);
    ib_mutex_unlock(&t->phase_mu);
}

void ib_lg_log_message(ib_lg_test *t, const char *msg)
{
    ib_lg_detail_str(&t->detail, IB_LG_REC_NORMAL, "generic_message", msg, -1, __FILE__,
                     __LINE__);
}

/* ---- files ------------------------------------------------------------- */

static FILE *open_out(ib_lg_test *t, const char *stem, const char *ext, const char *dt,
                      ib_err *err)
{
    char name[1024], path[2048];
    snprintf(name, sizeof name, "%s%s%s%s%s.%s", t->prefix, dt ? dt : "", dt ? "_" : "", stem,
             t->suffix, ext);
    if (ib_path_join(path, sizeof path, t->outdir, name)) {
        ib_err_set(err, IB_EINVAL, "%s/%s: path too long", t->outdir, name);
        return NULL;
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        ib_err_set(err, IB_EIO, "%s: cannot create the log file", path);
    return f;
}

static int open_logs(ib_lg_test *t, FILE **detail_f, ib_err *err)
{
    int rc = ib_mkdirs(t->outdir, err);
    if (rc)
        return rc;
    char dt[32] = {0};
    if (t->log.prefix_with_datetime) {
        time_t now = (time_t)(t->origin_wall_ns / 1000000000);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(dt, sizeof dt, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    const char *d = t->log.prefix_with_datetime ? dt : NULL;
    t->summary_f = open_out(t, "summary", "txt", d, err);
    *detail_f = t->summary_f ? open_out(t, "detail", "txt", d, err) : NULL;
    t->accuracy_f = *detail_f ? open_out(t, "accuracy", "json", d, err) : NULL;
    if (t->accuracy_f && t->log.enable_trace)
        t->trace_f = open_out(t, "trace", "json", d, err);
    if (!t->summary_f || !*detail_f || !t->accuracy_f || (t->log.enable_trace && !t->trace_f)) {
        if (*detail_f)
            fclose(*detail_f);
        *detail_f = NULL;
        return IB_EIO;
    }
    return IB_OK;
}

/* ---- header records ---------------------------------------------------- */

static void build_date(char *local, size_t n)
{
    /* __DATE__ "Mmm dd yyyy", __TIME__ "hh:mm:ss" -> ISO 8601 */
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *d = __DATE__;
    char mon[4] = {d[0], d[1], d[2], 0};
    const char *m = strstr(months, mon);
    int mi = m ? (int)(m - months) / 3 + 1 : 1;
    int day = (d[4] == ' ' ? 0 : d[4] - '0') * 10 + (d[5] - '0');
    snprintf(local, n, "%.4s-%02d-%02dT%s", d + 7, mi, day, __TIME__);
}

static void log_header(ib_lg_test *t)
{
    ib_lg_detail *d = &t->detail;
    char v[256], bd[64];
    bool v11 = t->settings.rules == IB_LG_RULES_V1_1;
    snprintf(v, sizeof v, "inferbench %s (LoadGen %s compatible) @ %s", ib_version_string(),
             v11 ? "1.1" : IB_LOADGEN_COMPAT_VERSION, ib_version_git());
    IB_LG_LOG_STR(d, "loadgen_version", v);
    build_date(bd, sizeof bd);
    IB_LG_LOG_STR(d, "loadgen_build_date_local", bd);
    IB_LG_LOG_STR(d, "loadgen_build_date_utc", "NA");
    IB_LG_LOG_STR(d, "loadgen_git_commit_date", "NA");
    IB_LG_LOG_STR(d, "loadgen_git_log_message", "NA");
    IB_LG_LOG_STR(d, "loadgen_git_status_message", "NA");
    /* The sampling compatibility (issue 12) rides in our own file map: a new
     * key would not be in the official key set. */
    snprintf(v, sizeof v, "{\"inferbench\":\"%s\",\"rng_compat\":\"%s\"}", ib_version_git(),
             ib_lg_rng_compat_name(t->settings.rng_compat));
    ib_lg_detail_raw(d, IB_LG_REC_NORMAL, "loadgen_file_sha1", v, strlen(v), -1, __FILE__,
                     __LINE__);
    time_t now = (time_t)(t->origin_wall_ns / 1000000000);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(v, sizeof v, "%Y-%m-%dT%H:%M:%SZ", &tm);
    IB_LG_LOG_STR(d, "test_datetime", v);
    int64_t t0 = ib_time_ns();
    const char *sut_name = t->sut->name ? t->sut->name : "";
    int64_t t1 = ib_time_ns();
    IB_LG_LOG_STR(d, "sut_name", sut_name);
    if (!v11)
        IB_LG_LOG_INT(d, "get_sut_name_duration_ns", t1 - t0);
    IB_LG_LOG_STR(d, "qsl_name", t->qsl->name ? t->qsl->name : "");
    IB_LG_LOG_UINT(d, "qsl_reported_total_count", (uint64_t)t->qsl->total_sample_count);
    IB_LG_LOG_UINT(d, "qsl_reported_performance_count",
                   (uint64_t)t->qsl->performance_sample_count);
    if (t->audit_path)
        IB_LG_LOG_WARNING(d, "warning_generic_message",
                          "Found Audit Config file (audit.config). Overriding TestSettings from "
                          "audit.config file.");
    if (t->settings.test05)
        IB_LG_LOG_WARNING(d, "warning_generic_message",
                          "Test05 flag detected Overriding random seeds");
}

static void log_kvs(ib_lg_test *t, const ib_lg_kv *kv, size_t n)
{
    ib_lg_detail *d = &t->detail;
    for (size_t i = 0; i < n; i++) {
        switch (kv[i].type) {
        case IB_LG_KV_STRING: IB_LG_LOG_STR(d, kv[i].key, kv[i].s); break;
        case IB_LG_KV_INT: IB_LG_LOG_INT(d, kv[i].key, kv[i].i); break;
        case IB_LG_KV_UINT: IB_LG_LOG_UINT(d, kv[i].key, kv[i].u); break;
        case IB_LG_KV_DOUBLE: IB_LG_LOG_DBL(d, kv[i].key, kv[i].d); break;
        case IB_LG_KV_BOOL: IB_LG_LOG_BOOL(d, kv[i].key, kv[i].b); break;
        }
    }
}

static void log_settings(ib_lg_test *t)
{
    ib_lg_kv kv[IB_LG_MAX_KVS];
    size_t n = ib_lg_requested_kvs(&t->eff, kv, IB_LG_MAX_KVS);
    log_kvs(t, kv, IB_MIN(n, (size_t)IB_LG_MAX_KVS));
    n = ib_lg_effective_kvs(&t->eff, kv, IB_LG_MAX_KVS);
    log_kvs(t, kv, IB_MIN(n, (size_t)IB_LG_MAX_KVS));
}

/* ---- modes --------------------------------------------------------------- */

static void run_accuracy(ib_lg_test *t)
{
    ib_lg_log_message(t, "Starting accuracy mode");
    size_t n = ib_lg_plan_accuracy_set_count(t->plan);
    for (size_t i = 0; i < n && t->status == IB_OK && !t->interrupted; i++) {
        ib_lg_set_phase(t, "accuracy set %zu/%zu", i + 1, n);
        ib_lg_run_accuracy_series(t, i);
    }
}

static void run_performance(ib_lg_test *t, ib_lg_result *res)
{
    ib_lg_log_message(t, "Starting performance mode");
    ib_lg_set_phase(t, "performance");
    ib_lg_series_result r;
    int rc = ib_lg_run_perf_series(t, 0, false, &r);
    if (rc == IB_OK)
        ib_lg_report_perf(t, &r, res);
    ib_lg_series_result_free(&r);
}

static void finish(ib_lg_test *t, ib_lg_result *res)
{
    res->others_cpu_pct = t->load.ok ? ib_lg_sysload_others_pct(&t->load) : -1;
    if (t->interrupted) {
        res->interrupted = true;
        res->valid = false;
    }
    ib_lg_collect_faults(t, res);
    ib_lg_detail_flush(&t->detail);
    res->num_errors = t->detail.errors;
    res->num_warnings = t->detail.warnings;
    ib_lg_summary_footer(&t->summary, t->detail.warnings, t->detail.errors);
    if (t->summary_f) {
        if (fwrite(t->summary.data ? t->summary.data : "", 1, t->summary.len, t->summary_f) !=
                t->summary.len ||
            fclose(t->summary_f) != 0) {
            if (t->status == IB_OK)
                t->status = IB_EIO;
        }
        t->summary_f = NULL;
    }
    if (t->log.copy_summary_to_stdout && t->summary.len) {
        fwrite(t->summary.data, 1, t->summary.len, stdout);
        fflush(stdout);
    }
    if (t->detail.out) {
        if (fclose(t->detail.out) != 0 && t->status == IB_OK)
            t->status = IB_EIO;
        t->detail.out = NULL;
    }
    if (t->trace_f) {
        ib_lg_trace_end(t->trace_f, t->origin_wall_ns);
        fclose(t->trace_f);
        t->trace_f = NULL;
    }
    if (t->log.write_result_json) {
        int rc = ib_lg_result_json_write(t, res);
        if (rc && t->status == IB_OK)
            t->status = rc;
    }
}

int ib_lg_test_run(ib_lg_test *t, const ib_lg_sut *sut, const ib_lg_qsl *qsl,
                   ib_lg_result *res, ib_err *err)
{
    ib_err_clear(err);
    if (!t || !sut || !qsl || !res || !sut->issue_query)
        return ib_err_set(err, IB_EINVAL,
                          "ib_lg_test_run: test, sut (with issue_query), qsl and result are "
                          "required");
    if (t->ran)
        return ib_err_set(err, IB_ESTATE, "ib_lg_test_run: a test runs once; create a new one");
    t->ran = true;
    t->sut = sut;
    t->qsl = qsl;
    memset(res, 0, sizeof *res);
    res->scenario = t->settings.scenario;
    res->mode = t->settings.mode;
    ib_lg_clock_init(&t->clock, 1);
    t->origin_ns = ib_time_ns();
    t->origin_wall_ns = ib_wall_ns();

    FILE *detail_f = NULL;
    int rc = open_logs(t, &detail_f, err);
    if (rc) {
        t->status = rc;
        return rc;
    }
    ib_lg_detail_init(&t->detail, detail_f, t->log.copy_detail_to_stdout, t->origin_ns);
    ib_lg_acc_writer *aw = &t->acc;
    ib_lg_acc_begin(aw, t->accuracy_f);
    if (t->trace_f)
        ib_lg_trace_begin(t->trace_f);
    log_header(t);

    ib_err e2;
    ib_err_clear(&e2);
    rc = ib_lg_effective_derive(&t->settings, (uint64_t)qsl->total_sample_count,
                                (uint64_t)qsl->performance_sample_count, &t->eff, &e2);
    if (rc == IB_OK)
        log_settings(t);
    else
        ib_lg_detail_str(&t->detail, IB_LG_REC_ERROR, "error_invalid_test_settings", e2.msg, -1,
                         __FILE__, __LINE__);
    if (rc == IB_OK) {
        rc = ib_lg_plan_create(&t->eff, &t->plan, &e2);
        if (rc)
            ib_lg_detail_str(&t->detail, IB_LG_REC_ERROR, "error_invalid_test_settings", e2.msg,
                             -1, __FILE__, __LINE__);
    }
    if (rc) {
        ib_err_set(err, rc, "%s", e2.msg);
        t->status = rc;
    } else {
        res->scenario = t->eff.scenario;
        res->mode = t->eff.mode;
        ib_lg_progress_thread *prog = NULL;
        if (t->opts.progress)
            ib_lg_progress_start(t, &prog);
        ib_lg_sysload_begin(&t->load);
        switch (t->eff.mode) {
        case IB_LG_MODE_SUBMISSION:
            run_accuracy(t);
            if (t->status == IB_OK && !t->interrupted)
                run_performance(t, res);
            break;
        case IB_LG_MODE_ACCURACY: run_accuracy(t); break;
        case IB_LG_MODE_PERFORMANCE: run_performance(t, res); break;
        case IB_LG_MODE_FIND_PEAK: ib_lg_run_find_peak(t, res); break;
        }
        ib_lg_progress_stop(prog);
    }
    ib_lg_acc_end(aw);
    res->accuracy_log_entries = aw->entries;
    if (aw->io_error && t->status == IB_OK)
        t->status = aw->io_error;
    finish(t, res);
    if (!res->has_performance)
        res->valid = t->status == IB_OK && !t->interrupted &&
                     res->duplicate_responses + res->unknown_responses + res->late_responses +
                             res->lost_responses + res->failed_responses ==
                         0;
    if (t->status != IB_OK && err && err->code == IB_OK)
        ib_err_set(err, t->status, "%s",
                   t->reasons_extra.len ? t->reasons_extra.data : ib_strerror(t->status));
    return t->status;
}
