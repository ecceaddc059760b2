/*
 * run.c - ib_harness_run (harness.h): model, dataset, QSL, SUT, settings, the loadgen tests
 * of the requested mode and the results tree. The accuracy computation and run.json are in
 * run_files.c; settings adjustments in settings.c.
 *
 * The synthetic paths take the real ones: a built model is written as an .onnx file and
 * loaded back through ib_model_load_file; synthetic data is written as real JPEGs and
 * val_map.txt and read through the real loader. Every output says what was synthetic.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/thread.h"
#include "base/time.h"
#include "harness/harness.h"
#include "harness/qsl.h"
#include "harness/run_internal.h"
#include "inferbench/version.h"
#include "harness/sut.h"
#include "harness/sysinfo.h"

void ib_harness_opts_defaults(ib_harness_opts *o)
{
    memset(o, 0, sizeof *o);
    ib_bench_config_defaults(&o->cfg);
    o->scenario = IB_LG_SCENARIO_OFFLINE;
    o->mode = IB_LG_MODE_PERFORMANCE;
    ib_lg_settings_defaults(&o->settings);
    o->backend = "cpu";
    o->max_wait_us = -1;
    o->sut_timeout_ms = -1;
    o->pin = true;
    o->quick_s = 60;
}

void ib_harness_stage(const ib_harness_opts *o, const char *fmt, ...)
{
    if (!o->stage)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->stage(o->stage_user, msg);
}

/* "<hostname>-<backend>" with characters outside [A-Za-z0-9._-] replaced by '_'. */
static void default_system(const char *backend, char *out, size_t n)
{
    char host[128] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(out, n, "%s-%s", host, backend);
    for (char *p = out; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            *p = '_';
}

static bool valid_name(const char *s)
{
    if (!s || !*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strlen(s) >= 128)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

int ib_harness_system_name(const char *given, const char *backend, char *out, size_t n,
                           ib_err *err)
{
    if (!given) {
        default_system(backend, out, n);
        return IB_OK;
    }
    if (!valid_name(given))
        return ib_err_set(err, IB_EINVAL,
                          "--system '%s': use letters, digits, '.', '_' and '-' (it names a "
                          "folder of the results tree)",
                          given);
    snprintf(out, n, "%s", given);
    return IB_OK;
}

/* ---- model --------------------------------------------------------------------------------- */

/* The cache key of what the entry generates: tiny stand-in, variant and seed (the
 * generator version is the cache folder, see cache_dir). */
static void gen_key(const ib_harness_opts *o, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s-seed%llu", o->cfg.tiny ? "tiny" : "full",
             o->cfg.variant ? "-" : "", o->cfg.variant ? o->cfg.variant : "",
             (unsigned long long)o->cfg.seed);
    for (char *p = out; *p; p++) /* a variant is a user string: keep it one path component */
        if (*p == '/' || *p == ' ')
            *p = '_';
}

/* A file or folder the entry generates: reused when the cache holds it; else built under a
 * temporary name and renamed into place only when complete, so an interrupted or failed
 * build never leaves a half-written entry that a later run would take. */
static int cached(const ib_harness_opts *o, const char *path, bool dir,
                  int (*make)(const ib_harness_opts *o, const char *tmp, size_t k, ib_err *err),
                  size_t k, ib_err *err)
{
    if (dir ? ib_path_is_dir(path) : ib_path_exists(path)) {
        ib_harness_stage(o, "reusing %s (cache)", path);
        return IB_OK;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    ib_remove_tree(tmp, NULL);
    int rc = make(o, tmp, k, err);
    if (rc == IB_OK)
        rc = ib_rename(tmp, path, err);
    if (rc) {
        ib_remove_tree(tmp, NULL);
        /* another run may have put it there first: theirs is as good as ours */
        if (dir ? ib_path_is_dir(path) : ib_path_exists(path))
            return IB_OK;
    }
    return rc;
}

static int make_model(const ib_harness_opts *o, const char *tmp, size_t k, ib_err *err)
{
    return o->bench->build_model(&o->cfg, k, tmp, err);
}

static int make_data(const ib_harness_opts *o, const char *tmp, size_t n, ib_err *err)
{
    ib_bench_config cfg = o->cfg;
    cfg.synth_samples = n;
    return o->bench->synthesize(&cfg, tmp, err);
}

/* The entry's models: the --model file, or built with seeded random weights into work_dir
 * (reused when there); each loaded and bound. *n counts the loaded ones (free them on
 * error too); path receives model 0's file. */
static int load_models(const ib_harness_opts *o, const char *work_dir, ib_model **models,
                       ib_bench_io *io, size_t *n_models, char *path0, size_t path0_n,
                       ib_err *err)
{
    const ib_benchmark *b = o->bench;
    const size_t nm = ib_bench_model_count(b, &o->cfg);
    if (nm != 1 && o->model_path && !b->helper_models)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "%s: --model takes one file, but this benchmark has %zu models",
                          b->id, nm);
    char key[192];
    gen_key(o, key, sizeof key);
    for (size_t k = 0; k < nm; k++) {
        char path[4096];
        if (o->model_path && k == 0) {
            snprintf(path, sizeof path, "%s", o->model_path);
        } else { /* built: with random weights, or an entry's helper graph (no weights) */
            char part[32] = "";
            if (nm > 1)
                snprintf(part, sizeof part, "-part%zu", k);
            int n = snprintf(path, sizeof path, "%s/model-%s%s.onnx", work_dir, key, part);
            if (n < 0 || (size_t)n >= sizeof path)
                return ib_err_set(err, IB_EINVAL, "%s: path too long", work_dir);
            bool have = ib_path_exists(path); /* else cached() says it reuses it */
            if (!have && k > 0 && b->helper_models)
                ib_harness_stage(o, "building the %s helper graph %zu (no weights) -> %s", b->id,
                                 k, path);
            else if (!have)
                ib_harness_stage(o, "building the %s%s model with seeded random weights (seed %llu) -> %s",
                      b->id, o->cfg.tiny ? " (tiny)" : "", (unsigned long long)o->cfg.seed,
                      path);
            int rc = cached(o, path, false, make_model, k, err);
            if (rc)
                return rc;
        }
        if (k == 0)
            snprintf(path0, path0_n, "%s", path);
        int rc = ib_model_load_file(path, NULL, &models[k], err);
        if (rc)
            return rc;
        *n_models = k + 1;
        rc = b->bind_model(&o->cfg, k, models[k], &io[k], err);
        if (rc)
            return rc;
    }
    return IB_OK;
}

static int prepare_model(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    int rc = load_models(o, c->work_dir, c->models, c->io, &c->n_models, c->res->model_path,
                         sizeof c->res->model_path, err);
    if (rc)
        return rc;
    snprintf(c->res->model_note, sizeof c->res->model_note, "%s", c->io[0].note);
    c->res->synthetic_model = o->model_path == NULL;
    return IB_OK;
}

/* ---- data ------------------------------------------------------------------------------------ */

static int prepare_data(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    const ib_benchmark *b = o->bench;
    char dir[4096];
    if (o->data_dir) {
        snprintf(dir, sizeof dir, "%s", o->data_dir);
    } else {
        size_t n_synth = o->cfg.synth_samples ? o->cfg.synth_samples : b->synth_default_samples;
        c->synth_samples = n_synth;
        char key[192];
        gen_key(o, key, sizeof key);
        int n = snprintf(dir, sizeof dir, "%s/data-%s-n%zu", c->work_dir, key, n_synth);
        if (n < 0 || (size_t)n >= sizeof dir)
            return ib_err_set(err, IB_EINVAL, "%s: path too long", c->work_dir);
        if (!ib_path_is_dir(dir))
            ib_harness_stage(o, "writing a synthetic %s dataset (%zu samples, seed %llu) -> %s", b->id,
                  n_synth, (unsigned long long)o->cfg.seed, dir);
        int rc = cached(o, dir, true, make_data, n_synth, err);
        if (rc)
            return rc;
    }
    snprintf(c->res->data_dir, sizeof c->res->data_dir, "%s", dir);
    c->res->synthetic_data = o->data_dir == NULL;
    int rc = b->open(&o->cfg, dir, c->io, &c->state, &c->total, err);
    if (rc)
        return rc;
    if (c->total == 0)
        return ib_err_set(err, IB_EFORMAT, "%s: the dataset has no samples", dir);
    ib_harness_stage(o, "dataset: %zu samples in %s", c->total, dir);
    return IB_OK;
}

/* ---- workers --------------------------------------------------------------------------------- */

static int plan_workers(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    ib_harness_result *res = c->res;
    int cpus = ib_cpu_count();
    int threads = o->threads > 0 ? o->threads : cpus;
    int workers = o->workers > 0 ? o->workers : IB_MAX(1, threads / 4);
    snprintf(res->workers_from, sizeof res->workers_from, "%s",
             o->workers > 0 ? "user" : "host: one per 4 threads");
    /* --devices: a device backend runs its workers round-robin on the listed GPUs,
     * two per GPU by default (one copies while the other computes); host threads are
     * not the limit there. */
    bool host = true;
    int rc = ib_devices_resolve(o->backend, o->devices, &c->devices, &host, err);
    if (rc)
        return rc;
    if (!host) {
        workers = o->workers > 0 ? o->workers : 2 * c->devices.n;
        threads = workers;
        if (o->workers <= 0)
            snprintf(res->workers_from, sizeof res->workers_from,
                     "device: 2 per device x %d (one copies while the other computes)",
                     c->devices.n);
    }
    if (workers > threads)
        return ib_err_set(err, IB_EINVAL, "--workers %d is more than --threads %d", workers,
                          threads);
    if (host && o->pin && threads > cpus)
        return ib_err_set(err, IB_EINVAL,
                          "--threads %d is more than the %d CPUs this process may use (pinned "
                          "threads need one CPU each; use --no-pin to oversubscribe)",
                          threads, cpus);
    c->workers = workers;
    c->tpw = threads / workers;
    int64_t batch;
    snprintf(res->batch_from, sizeof res->batch_from, "%s", o->batch > 0 ? "user" : "");
    switch (o->scenario) {
    case IB_LG_SCENARIO_SINGLE_STREAM:
        batch = 1;
        snprintf(res->batch_from, sizeof res->batch_from, "SingleStream: one sample a query");
        break;
    case IB_LG_SCENARIO_MULTI_STREAM:
        batch = o->batch > 0 ? o->batch : (int64_t)o->settings.multi_stream_samples_per_query;
        if (o->batch <= 0)
            snprintf(res->batch_from, sizeof res->batch_from,
                     "MultiStream: the samples of one query");
        break;
    case IB_LG_SCENARIO_SERVER: batch = o->batch > 0 ? o->batch : o->bench->batch_server; break;
    default: batch = o->batch > 0 ? o->batch : o->bench->batch_offline; break;
    }
    if (o->batch <= 0 && (o->scenario == IB_LG_SCENARIO_SERVER ||
                          o->scenario == IB_LG_SCENARIO_OFFLINE)) {
        /* issue 25: a device backend sizes the batch from the device (SMs, memory) */
        int64_t db = !host && c->devices.have_info
                         ? ib_bench_device_batch(o->bench, o->scenario, &c->devices.info,
                                                 res->batch_from, sizeof res->batch_from)
                         : 0;
        if (db > 0)
            batch = db;
        else
            snprintf(res->batch_from, sizeof res->batch_from, "%s: %s's default for %s",
                     host ? "host" : "device", o->bench->id, ib_lg_scenario_name(o->scenario));
    }
    if (batch < 1)
        batch = 1;
    for (size_t k = 0; k < c->n_models; k++) {
        int64_t mb = c->io[k].max_batch;
        if (mb == 1) {
            batch = 1;
            snprintf(res->batch_from, sizeof res->batch_from, "the model's fixed batch of 1");
        } else if (mb > 1)
            return ib_err_set(err, IB_EUNSUPPORTED,
                              "%s: model %zu has a fixed batch dimension of %lld; the harness "
                              "runs batches of varying size (export it with a dynamic batch "
                              "dimension, or with batch 1)",
                              o->bench->id, k, (long long)mb);
    }
    c->batch = batch;
    c->max_wait_ns = o->scenario == IB_LG_SCENARIO_SERVER
                         ? (o->max_wait_us >= 0 ? o->max_wait_us : o->bench->server_max_wait_us) *
                               1000
                         : 0;
    if (o->scenario == IB_LG_SCENARIO_SERVER)
        snprintf(res->max_wait_from, sizeof res->max_wait_from, "%s%s",
                 o->max_wait_us >= 0 ? "user" : o->bench->id,
                 o->max_wait_us >= 0 ? "" : "'s default");
    return IB_OK;
}

/* ---- one loadgen test ------------------------------------------------------------------------- */

/* The QSL as the loadgen sees it: unloading first waits for the workers, since after an
 * abort (a failed batch) the loadgen unloads while other batches may still be running. */
typedef struct qsl_guard {
    ib_hqsl *qsl;
    run_ctx *c;
    ib_lg_qsl inner;
} qsl_guard;

static int guard_load(void *user, const ib_lg_sample_index *idx, size_t n)
{
    qsl_guard *g = user;
    return g->inner.load_samples(g->inner.user, idx, n);
}

static int guard_unload(void *user, const ib_lg_sample_index *idx, size_t n)
{
    qsl_guard *g = user;
    ib_run_sut_quiesce(g->c);
    return g->inner.unload_samples(g->inner.user, idx, n);
}

/* Where the workers' time went in the test (issue 24): is a device starved by the host,
 * waiting on copies, or busy? */
static void stage_worker_time(const ib_harness_opts *o, const ib_harness_worker_time *t)
{
    double all = t->span_s * t->workers;
    if (all <= 0)
        return;
    ib_harness_stage(o, "worker time: compute %.1f %%, inputs in %.1f %%, outputs out %.1f %%, "
                        "host %.1f %%, responses %.1f %%, idle %.1f %% (%d worker%s x %.3g s)",
                     100 * t->compute_s / all, 100 * t->inputs_s / all, 100 * t->outputs_s / all,
                     100 * t->host_s / all, 100 * t->responses_s / all, 100 * t->idle_s / all,
                     t->workers, t->workers == 1 ? "" : "s", t->span_s);
}

static int run_test(const ib_harness_opts *o, run_ctx *c, enum ib_lg_mode mode, const char *dir,
                    ib_lg_result *res, ib_err *err)
{
    int rc = ib_mkdirs(dir, err);
    if (rc)
        return rc;
    ib_lg_settings s = c->settings;
    s.mode = mode;
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = dir;
    log.enable_trace = o->trace;
    ib_lg_options lo;
    ib_lg_options_defaults(&lo);
    lo.progress = o->progress;
    lo.progress_user = o->progress_user;
    lo.sut_timeout_ms = c->sut_timeout_ms; /* 0: wait forever, as the API means it */
    lo.stop_flag = o->stop_flag;
    lo.audit_config_applied = o->audit_config_applied;
    lo.origins = o->origins;
    lo.model_name = o->bench->model_name;
    lo.labels = c->label_ptrs;
    lo.label_count = c->res->n_labels;
    ib_lg_test *t = NULL;
    rc = ib_lg_test_create(&s, &log, &lo, &t, err);
    if (rc)
        return rc;
    ib_lg_sut sut = ib_run_sut_table(c);
    qsl_guard guard = {c->qsl, c, ib_hqsl_table(c->qsl)};
    ib_lg_qsl qsl = guard.inner;
    qsl.user = &guard;
    qsl.load_samples = guard_load;
    qsl.unload_samples = guard_unload;
    ib_harness_stage(o, "%s test (%s) -> %s", ib_lg_mode_name(mode), ib_lg_scenario_name(o->scenario), dir);
    memset(res, 0, sizeof *res);
    bool timed = c->sut && mode != IB_LG_MODE_ACCURACY;
    if (timed)
        ib_hsut_times_reset(c->sut);
    rc = ib_lg_test_run(t, &sut, &qsl, res, err);
    ib_err werr;
    ib_err_clear(&werr);
    int wrc = ib_run_sut_take_error(c, &werr); /* workers are done with t after this */
    if (timed && !wrc) {
        ib_hsut_times_get(c->sut, &c->res->worker_time);
        stage_worker_time(o, &c->res->worker_time);
    }
    if (c->nsut) {
        ib_nsut_stats st;
        ib_nsut_get_stats(c->nsut, &st);
        c->res->net_requests = st.requests;
        c->res->net_failed_requests = st.failed_requests;
        snprintf(c->res->net_first_failure, sizeof c->res->net_first_failure, "%s",
                 st.first_failure);
    }
    ib_lg_test_destroy(t);
    if (wrc) { /* the worker's failure is the cause; the loadgen only saw an abort */
        if (err)
            *err = werr;
        return wrc;
    }
    if (rc && ib_hqsl_error(c->qsl)[0])
        return ib_err_set(err, rc, "%s", ib_hqsl_error(c->qsl));
    return rc;
}

/* ---- the whole run ---------------------------------------------------------------------------- */

static void ctx_free(run_ctx *c)
{
    ib_run_sut_destroy(c);
    ib_hqsl_destroy(c->qsl);
    if (c->state && c->bench)
        c->bench->close(c->state);
    for (size_t k = 0; k < c->n_models; k++)
        ib_model_destroy(c->models[k]);
}

/* True once the caller's stop flag is set (SIGINT/SIGTERM in the CLI). */
static bool stop_requested(const ib_harness_opts *o)
{
    return o->stop_flag && atomic_load_explicit(o->stop_flag, memory_order_relaxed);
}

/* The checks that cost nothing, before anything expensive: a --model file that exists and
 * a --data folder the entry can open (its index read, no sample decoded). A wrong path
 * then fails in a second instead of after the model build. */
static int check_inputs(const ib_harness_opts *o, ib_err *err)
{
    const ib_benchmark *b = o->bench;
    if (o->model_path && !ib_path_exists(o->model_path))
        return ib_err_set(err, IB_ENOTFOUND, "--model %s: no such file", o->model_path);
    if (!o->data_dir)
        return IB_OK;
    if (!ib_path_is_dir(o->data_dir))
        return ib_err_set(err, IB_ENOTFOUND, "--data %s: no such folder (%s)", o->data_dir,
                          b->dataset_name);
    void *state = NULL;
    size_t total = 0;
    int rc = b->open(&o->cfg, o->data_dir, NULL, &state, &total, err);
    if (rc == IB_OK) {
        b->close(state);
        if (total == 0)
            rc = ib_err_set(err, IB_EFORMAT, "%s: the dataset has no samples", o->data_dir);
    }
    return rc;
}

/* The folder the generated models and data go in: <cache>/<benchmark>/gen<N>-<build>, so a
 * new generator (or a new build) never reads what an older one wrote. */
static int cache_dir(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    char gen[64];
    snprintf(gen, sizeof gen, "gen%d-%s", IB_GENERATOR_VERSION, ib_version_git());
    int n = o->cache_dir ? snprintf(c->work_dir, sizeof c->work_dir, "%s/%s/%s", o->cache_dir,
                                    o->bench->id, gen)
                         : snprintf(c->work_dir, sizeof c->work_dir, "%s/.inferbench/%s/%s",
                                    o->output_dir, o->bench->id, gen);
    if (n < 0 || (size_t)n >= sizeof c->work_dir)
        return ib_err_set(err, IB_EINVAL, "%s: path too long",
                          o->cache_dir ? o->cache_dir : o->output_dir);
    return ib_mkdirs(c->work_dir, err);
}

int ib_harness_load_models(const ib_harness_opts *o, ib_harness_models *m, ib_err *err)
{
    memset(m, 0, sizeof *m);
    run_ctx c;
    memset(&c, 0, sizeof c);
    int rc = cache_dir(o, &c, err);
    if (!rc)
        rc = load_models(o, c.work_dir, m->models, m->io, &m->n, m->path, sizeof m->path, err);
    if (rc)
        ib_harness_models_free(m);
    return rc;
}

void ib_harness_models_free(ib_harness_models *m)
{
    for (size_t k = 0; k < m->n; k++)
        ib_model_destroy(m->models[k]);
    m->n = 0;
}

/* The run's tests, each into the staging folder. */
static int run_tests(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    ib_harness_result *res = c->res;
    bool want_acc = o->mode == IB_LG_MODE_ACCURACY || o->mode == IB_LG_MODE_SUBMISSION;
    bool want_perf = o->mode != IB_LG_MODE_ACCURACY;
    int rc;
    if (want_acc) {
        if ((rc = run_test(o, c, IB_LG_MODE_ACCURACY, res->acc_dir, &res->acc, err)))
            return rc;
        res->ran_accuracy = true;
        if (res->acc.interrupted) {
            res->interrupted = true;
            return IB_OK; /* no accuracy.txt from a partial log, and no performance test */
        }
        if ((rc = ib_run_accuracy(o, c, err)))
            return rc;
    }
    if (want_perf && !stop_requested(o)) {
        enum ib_lg_mode m =
            o->mode == IB_LG_MODE_FIND_PEAK ? IB_LG_MODE_FIND_PEAK : IB_LG_MODE_PERFORMANCE;
        if ((rc = run_test(o, c, m, res->perf_dir, &res->perf, err)))
            return rc;
        /* at most three more tries: a rate measured on a short query can still be low */
        for (int t = 0; t < 3 && m == IB_LG_MODE_PERFORMANCE && !res->perf.interrupted &&
                        !stop_requested(o) && ib_run_retry_offline(o, c, &res->perf);
             t++) {
            ib_harness_stage(o, "the query ran out before min_duration (the rate was under-estimated): "
                     "again with expected QPS %.4g",
                  c->settings.offline_expected_qps);
            if ((rc = run_test(o, c, m, res->perf_dir, &res->perf, err)))
                return rc;
        }
        res->ran_performance = true;
        res->interrupted |= res->perf.interrupted;
    }
    res->interrupted |= stop_requested(o);
    return IB_OK;
}

/* <out>/systems/<system>.json, the MLPerf system description of this machine, when the tree
 * has none yet: reports then show the run's chips, host and a readable name. A user's own
 * file (submitter, status...) is never replaced. Failure here costs the run nothing. */
static void write_system_json(const ib_harness_opts *o, const ib_harness_result *res)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof dir, "%s/systems", o->output_dir);
    snprintf(path, sizeof path, "%s/%s.json", dir, res->system);
    if (ib_path_exists(path) || ib_mkdirs(dir, NULL))
        return;
    char host[128] = "localhost", name[256];
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(name, sizeof name, "%s (%s, %s backend, inferbench)", res->system, host,
             o->backend);
    ib_sysinfo_opts so = {.nvidia_smi = strcmp(o->backend, "cuda") ? "" : NULL,
                          .system_name = name,
                          .system_type = "datacenter"};
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    if (ib_sysinfo_json(&so, &sb, NULL, NULL) == IB_OK && !sb.oom)
        ib_file_write_all(path, ib_strbuf_cstr(&sb), sb.len, NULL);
    ib_strbuf_deinit(&sb);
}

/* After the tests: run.json, then the move into the results tree (or, interrupted, the
 * staging folder kept where it is, with run.json saying so). */
static int finish_run(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    ib_harness_result *res = c->res;
    int rc;
    ib_run_label_machine_load(c);
    if (!res->interrupted) { /* run.json names where the files will be */
        if ((rc = ib_rundir_reserve(&c->rd, err)))
            return rc;
        snprintf(res->perf_dir, sizeof res->perf_dir, "%s", c->rd.final_perf);
        snprintf(res->acc_dir, sizeof res->acc_dir, "%s", c->rd.final_acc);
    }
    rc = ib_run_write_json(o, c, err);
    if (rc)
        return rc;
    if (res->interrupted) {
        snprintf(res->kept_dir, sizeof res->kept_dir, "%s", c->rd.stage);
        ib_rundir_abandon(&c->rd, true);
        return ib_err_set(err, IB_ECANCELED, "interrupted: nothing earlier in %s was touched; "
                                             "this run's partial logs are in %s",
                          res->scenario_dir, res->kept_dir);
    }
    res->run_n = c->rd.run_n;
    if ((rc = ib_rundir_commit(&c->rd, err)))
        return rc;
    write_system_json(o, res);
    return IB_OK;
}

int ib_harness_run(const ib_harness_opts *o, ib_harness_result *res, ib_err *err)
{
    memset(res, 0, sizeof *res);
    if (!o->bench || !o->output_dir)
        return ib_err_set(err, IB_EINVAL, "harness: a benchmark and an output folder are needed");
    const ib_benchmark *b = o->bench;
    if (!ib_benchmark_has_scenario(b, o->scenario))
        return ib_err_set(err, IB_EINVAL, "%s: the %s scenario is not defined for this benchmark",
                          b->id, ib_lg_scenario_name(o->scenario));
    enum ib_dtype pd = ib_benchmark_payload_dtype(b, &o->cfg);
    if (!ib_benchmark_accepts_payload(b, pd))
        return ib_err_set(err, IB_EINVAL, "%s: payload dtype %s is not one its accuracy script "
                                          "reads",
                          b->id, ib_dtype_name(pd));
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.t0_ns = ib_time_ns();
    c.bench = b;
    c.res = res;
    c.settings = o->settings;
    int rc = ib_harness_system_name(o->system, o->n_endpoints ? "kserve" : o->backend, res->system,
                                    sizeof res->system, err);
    if (rc)
        return rc;
    int n1 = snprintf(res->scenario_dir, sizeof res->scenario_dir, "%s/%s/%s/%s", o->output_dir,
                      res->system, b->id, ib_lg_scenario_name(o->scenario));
    if (n1 < 0 || (size_t)n1 >= sizeof res->scenario_dir)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", o->output_dir);
    bool want_acc = o->mode == IB_LG_MODE_ACCURACY || o->mode == IB_LG_MODE_SUBMISSION;
    bool want_perf = o->mode != IB_LG_MODE_ACCURACY;
    rc = check_inputs(o, err);
    if (rc || (rc = ib_rundir_open(&c.rd, res->scenario_dir, want_perf, want_acc, o->force, err)))
        return rc;
    snprintf(res->perf_dir, sizeof res->perf_dir, "%s", c.rd.perf);
    snprintf(res->acc_dir, sizeof res->acc_dir, "%s", c.rd.acc);
    if ((rc = cache_dir(o, &c, err)) || (rc = prepare_model(o, &c, err)) ||
        (rc = prepare_data(o, &c, err)) || (rc = plan_workers(o, &c, err)))
        goto done;
    res->workers = c.workers;
    res->threads_per_worker = c.tpw;
    res->batch = c.batch;
    size_t psc = ib_run_performance_count(o, &c);
    if ((rc = ib_hqsl_create(b, c.state, c.total, psc, 0, &c.qsl, err)))
        goto done;
    if (stop_requested(o)) {
        rc = ib_err_set(err, IB_ECANCELED, "interrupted before the test started");
        goto done;
    }
    if ((rc = ib_run_sut_create(o, &c, err)))
        goto done;
    if (c.sut) { /* issue 25: say where the nodes run, so a fallback is never hidden */
        ib_session_placement pl;
        ib_hsut_placement(c.sut, &pl, res->fallback_ops, sizeof res->fallback_ops);
        res->nodes = pl.nodes;
        res->fallback_nodes = pl.fallback_nodes;
        snprintf(res->fallback_backend, sizeof res->fallback_backend, "%s", pl.fallback);
        res->n_model_precisions = c.n_models;
        for (size_t m = 0; m < c.n_models; m++)
            res->model_precisions[m] = ib_hsut_model_precision(c.sut, m);
        ib_harness_stage(o, "nodes: %u on %s, %u on the %s kernels%s%s%s",
                         pl.nodes - pl.fallback_nodes, pl.backend, pl.fallback_nodes,
                         pl.fallback[0] ? pl.fallback : "reference", pl.fallback_nodes ? " (" : "",
                         res->fallback_ops, pl.fallback_nodes ? ")" : "");
    }
    res->warmup_samples_per_sec = ib_run_sut_warmup_rate(&c);
    if (c.sut) { /* issue 24: a refused CUDA Graph capture costs a launch a step; say so */
        ib_session_replay rp;
        ib_hsut_replay(c.sut, &rp);
        res->replay_subgraphs = rp.subgraphs;
        res->replay_on = rp.replayed;
        res->replay_refused = rp.refused;
        snprintf(res->replay_why, sizeof res->replay_why, "%s", rp.why);
        if (rp.refused)
            ib_harness_stage(o, "graph replay: %u of %u compiled subgraphs replay as one "
                                "launch, %u refused (first: %s)",
                             rp.replayed, rp.subgraphs, rp.refused, rp.why);
        else if (rp.subgraphs)
            ib_harness_stage(o, "graph replay: %u of %u compiled subgraphs replay as one launch",
                             rp.replayed, rp.subgraphs);
    }
    if (c.sut) { /* a product left wider than the run's precision is said (issue 24) */
        ib_session_precision_use pu;
        ib_hsut_precision_use(c.sut, &pu, res->products_others, sizeof res->products_others);
        res->products = pu.products;
        res->products_at_precision = pu.at_precision;
        if (pu.at_precision < pu.products || o->cfg.precision != IB_PRECISION_FP32)
            ib_harness_stage(o, "products: %u of %u at their model's precision%s%s%s",
                             pu.at_precision, pu.products, pu.others[0] ? " (others: " : "",
                             pu.others, pu.others[0] ? ")" : "");
    }
    ib_harness_stage(o, "warm-up: %.4g samples/s at batch %lld, %.2f ms at batch 1",
          res->warmup_samples_per_sec, (long long)c.batch,
          (double)ib_run_sut_warmup_latency_ns(&c) / 1e6);
    int64_t b1 = ib_run_sut_warmup_latency_ns(&c), bound = (int64_t)o->settings.server_target_latency_ns;
    if (o->scenario == IB_LG_SCENARIO_SERVER && c.sut && c.devices.n > 0 && o->max_wait_us < 0) {
        /* issue 24: a GPU's Server batches fill only if the window is sized from the
         * latency bound and the device's batch time, not from the CPU entry's window */
        int64_t w = ib_run_server_device_wait_ns(bound, c.batch, c.workers,
                                                 res->warmup_samples_per_sec);
        if (w >= 0) {
            ib_run_sut_set_max_wait(&c, w);
            snprintf(res->max_wait_from, sizeof res->max_wait_from,
                     "device: half the %.3g ms latency bound less a full batch's %.3g ms",
                     (double)bound / 1e6,
                     ib_run_full_batch_s(c.batch, c.workers, res->warmup_samples_per_sec) * 1e3);
            ib_harness_stage(o, "Server batching window: %.3g ms (%s)", (double)w / 1e6,
                             res->max_wait_from);
        }
    }
    if (o->scenario == IB_LG_SCENARIO_SERVER && bound > 0 && b1 > bound)
        ib_harness_stage(o, "warning: one sample alone takes %.3g ms here, over the %.3g ms latency bound: "
                 "no target_qps makes this Server run VALID with this model, batch and machine",
              (double)b1 / 1e6, (double)bound / 1e6);
    /* The loadgen ends a test when the SUT answers nothing for sut_timeout_ms (60 s by
     * default). A full 3D U-Net volume takes about a minute on 2 cores, so unless the user
     * set it, allow ten times the longest gap the warm-up suggests: every worker's batch
     * queued behind one another (workers x batch / rate), at least the default. */
    c.sut_timeout_ms = o->sut_timeout_ms >= 0 ? (uint64_t)o->sut_timeout_ms
                                              : IB_LG_DEFAULT_SUT_TIMEOUT_MS;
    if (o->sut_timeout_ms < 0 && res->warmup_samples_per_sec > 0) {
        double gap_s = ib_run_full_batch_s(c.batch, c.workers, res->warmup_samples_per_sec);
        double b1_s = (double)ib_run_sut_warmup_latency_ns(&c) / 1e9;
        double ms = 10e3 * (gap_s > b1_s ? gap_s : b1_s);
        if (ms > (double)c.sut_timeout_ms)
            c.sut_timeout_ms = ms < 86400e3 ? (uint64_t)ms : 86400000u;
    }
    if (stop_requested(o)) {
        rc = ib_err_set(err, IB_ECANCELED, "interrupted before the test started");
        goto done;
    }
    if ((rc = ib_run_adjust_settings(o, &c, err)) || (rc = ib_run_make_labels(o, &c, err)) ||
        (rc = run_tests(o, &c, err)))
        goto done;
    rc = finish_run(o, &c, err);
done:
    if (rc && rc != IB_ECANCELED)
        ib_rundir_abandon(&c.rd, false);
    else if (rc == IB_ECANCELED && !res->kept_dir[0])
        ib_rundir_abandon(&c.rd, false); /* stopped before any test: nothing worth keeping */
    ctx_free(&c);
    return rc;
}
