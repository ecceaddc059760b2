/*
 * run_bench.c - `inferbench run --benchmark ID`: maps the options onto the harness
 * (src/harness/harness.h), builds the settings with the shared procedure (rules file,
 * user.conf, audit.config, flags; the benchmark's mlperf.conf model name), prints stage
 * messages and the progress line on stderr, then the summary (or run.json with --json) on
 * stdout and where the files went, and maps the outcome to the exit code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "harness/harness.h"

static void on_stage(void *user, const char *msg)
{
    (void)user;
    ib_run_stage(msg);
}

/* $XDG_CACHE_HOME/inferbench, else ~/.cache/inferbench (XDG base directories); NULL without
 * either, and the harness then caches under the output folder. */
const char *ib_run_default_cache_dir(char *buf, size_t n)
{
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int k = -1;
    if (x && x[0] == '/')
        k = snprintf(buf, n, "%s/inferbench", x);
    else if (home && home[0] == '/')
        k = snprintf(buf, n, "%s/.cache/inferbench", home);
    return k > 0 && (size_t)k < n ? buf : NULL;
}

static void print_file(const char *dir, const char *name, FILE *to)
{
    char path[4096];
    if (ib_path_join(path, sizeof path, dir, name))
        return;
    char *text = NULL;
    size_t len = 0;
    if (ib_file_read_all(path, 0, &text, &len, NULL) == IB_OK) {
        fwrite(text, 1, len, to);
        ib_free(text);
    }
}

static void print_outcome(const ib_run_opts *o, const ib_harness_opts *h,
                          const ib_harness_result *r)
{
    if (o->json) {
        print_file(r->scenario_dir, "run.json", stdout);
        return;
    }
    if (r->ran_performance)
        print_file(r->perf_dir, "mlperf_log_summary.txt", stdout);
    /* the labels stay out of the official summary (LoadGen's format), so they are said here */
    if (r->n_labels)
        printf("\nLabels:\n");
    for (size_t i = 0; i < r->n_labels; i++)
        printf("  * %s\n", r->labels[i]);
    if (r->ran_accuracy) {
        printf("\nAccuracy (%s): %s\n", h->bench->id, r->accuracy_line);
        double target = ib_bench_accuracy_reference(h->bench, &h->cfg) *
                        h->bench->accuracy_target_fraction;
        if (r->synthetic_model)
            printf("  target %.5g: not applicable (random weights)\n", target);
        else
            printf("  target %.5g: %s\n", target, r->accuracy_met ? "met" : "NOT met");
    }
    printf("\nResults tree: %s\n", r->scenario_dir);
    if (r->ran_performance)
        printf("  performance/run_%u/  mlperf_log_summary.txt, mlperf_log_detail.txt, "
               "mlperf_log_accuracy.json, result.json\n",
               r->run_n);
    if (r->ran_accuracy)
        printf("  accuracy/           accuracy.txt, mlperf_log_summary.txt, mlperf_log_detail.txt, "
               "mlperf_log_accuracy.json\n");
    printf("  run.json            what ran and on what (model, data, threads, batching)\n");
    printf("Model: %s%s\nData:  %s%s\n", r->model_path,
           r->synthetic_model ? " (synthetic: random weights)" : "", r->data_dir,
           r->synthetic_data ? " (synthetic)" : "");
    if (h->quick || r->synthetic_model || r->synthetic_data)
        printf("Not submittable: %s%s%s\n", h->quick ? "--quick " : "",
               r->synthetic_model ? "synthetic model " : "", r->synthetic_data ? "synthetic data" : "");
}

int ib_run_benchmark(const ib_run_opts *o)
{
    const char *cmd = "run";
    ib_harness_opts h;
    ib_harness_opts_defaults(&h);
    h.bench = ib_benchmark_find(o->benchmark);
    if (!h.bench) {
        char ids[512];
        ib_benchmark_ids(ids, sizeof ids);
        return ib_cli_usage_error(cmd, "unknown benchmark '%s' (built in: %s)", o->benchmark,
                                  ids);
    }
    if (o->precision && ib_precision_parse(o->precision, &h.cfg.precision) != IB_OK)
        return ib_cli_usage_error(cmd, "--precision: '%s' is not fp32, fp16, bf16 or int8",
                                  o->precision);
    if (o->payload_dtype && ib_cli_parse_dtype(o->payload_dtype, &h.cfg.payload_dtype) != IB_OK)
        return ib_cli_usage_error(cmd, "--payload-dtype: unknown dtype '%s'", o->payload_dtype);
    if (o->backend) {
        const char *why = NULL;
        if (!ib_backend_available(o->backend, &why))
            return ib_cli_usage_error(cmd, "--backend %s: %s", o->backend,
                                      why ? why : "not available");
        h.backend = o->backend;
    }
    ib_run_opts so = *o;
    so.model = h.bench->model_name; /* the mlperf.conf/user.conf lookup name */
    ib_err err;
    ib_err_clear(&err);
    char cache[4096];
    ib_lg_settings_origin *origins = NULL;
    if (ib_lg_settings_origin_create(&origins) != IB_OK) {
        ib_cli_error(cmd, "out of memory");
        return IB_EXIT_RUNTIME;
    }
    const char *audit = NULL;
    int rc = ib_run_build_settings(&so, &h.settings, origins, &audit, &err);
    if (rc) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        ib_lg_settings_origin_destroy(origins);
        return IB_EXIT_USAGE;
    }
    h.origins = origins;
    h.rules_origin = o->mlperf_conf ? o->mlperf_conf
                     : o->rules == IB_LG_RULES_V1_1 ? "mlperf.conf (embedded v1.1)"
                                                    : "mlperf.conf (embedded v6.1)";
    h.audit_config_applied = audit;
    h.cfg.tiny = o->tiny;
    h.cfg.seed = o->seed;
    h.cfg.synth_samples = (size_t)o->synth_samples;
    h.cfg.variant = o->variant;
    h.devices = o->devices;
    h.scenario = o->scenario;
    h.mode = o->mode;
    h.model_path = o->model_file;
    h.data_dir = o->data_dir;
    h.threads = o->threads;
    h.workers = o->workers;
    h.batch = o->batch;
    h.max_wait_us = o->max_wait_us;
    h.pin = !o->no_pin;
    h.nhwc_fp16 = o->nhwc_fp16;
    h.half_chains = o->half_chains;
    h.quick = o->quick;
    h.quick_s = o->quick_s;
    h.force = o->force;
    h.cache_dir = o->cache_dir ? o->cache_dir : ib_run_default_cache_dir(cache, sizeof cache);
    h.stop_flag = ib_cli_stop_flag_install();
    h.system = o->system;
    h.output_dir = o->output_dir;
    h.trace = o->trace;
    h.sut_timeout_ms = o->sut_timeout_ms;
    h.endpoints = o->endpoints;
    h.n_endpoints = o->n_endpoints;
    h.model_name = o->model_name;
    h.concurrency = o->concurrency;
    h.request_timeout_ms = o->request_timeout_ms;
    h.json = o->json_tensors;
    bool talk = !o->quiet && !o->no_progress && !o->json && ib_cli_progress_enabled();
    if (!o->quiet) {
        h.stage = on_stage;
        if (talk)
            h.progress = ib_run_progress_print;
    }
    if (talk)
        ib_run_heartbeat_start();
    static ib_harness_result res; /* large (paths, labels): not on the stack */
    rc = ib_harness_run(&h, &res, &err);
    ib_run_heartbeat_stop();
    ib_lg_settings_origin_destroy(origins);
    if (rc == IB_ECANCELED || (rc == IB_OK && res.interrupted)) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : "interrupted");
        return IB_EXIT_INTERRUPTED;
    }
    if (rc != IB_OK) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        return ib_cli_exit_for_status(rc);
    }
    print_outcome(o, &h, &res);
    if (res.net_failed_requests) /* an error, said even with --quiet */
        fprintf(stderr, "inferbench run: %llu of %llu requests failed; first: %s\n",
                (unsigned long long)res.net_failed_requests,
                (unsigned long long)res.net_requests, res.net_first_failure);
    bool invalid = (res.ran_performance && !res.perf.valid) ||
                   (res.ran_accuracy && !res.acc.valid); /* e.g. failed network requests */
    bool acc_fail = res.ran_accuracy && !res.synthetic_model && !res.accuracy_met;
    if (invalid && !o->quiet && !o->json && res.perf.suggestion[0])
        fprintf(stderr, "inferbench run: INVALID; suggestion:\n%s", res.perf.suggestion);
    return invalid || acc_fail ? IB_EXIT_INVALID : IB_EXIT_OK;
}
