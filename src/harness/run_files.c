/*
 * run_files.c - the harness's own files of the results tree:
 *   accuracy/accuracy.txt   the entry's accuracy script output computed from the accuracy
 *                           run's mlperf_log_accuracy.json (accuracy.c, shared with
 *                           `inferbench accuracy`), then "hash=<sha256 of that log>";
 *   <Scenario>/run.json     what ran (benchmark, model, data, what was synthetic, backend,
 *                           threads, batching, settings changed and why), the results, and
 *                           whether the run could be submitted.
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/json_writer.h"
#include "harness/accuracy.h"
#include "harness/run_internal.h"
#include "harness/runjson.h"

int ib_run_accuracy(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    ib_harness_result *res = c->res;
    char path[4096];
    if (ib_path_join(path, sizeof path, res->acc_dir, "mlperf_log_accuracy.json"))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", res->acc_dir);
    ib_strbuf text;
    ib_strbuf_init(&text);
    double value = 0;
    size_t entries = 0;
    int rc = ib_bench_score_log(o->bench, &o->cfg, c->state, path, &text, &value, &entries, err);
    if (rc == IB_OK)
        rc = ib_accuracy_write_txt(res->acc_dir, ib_strbuf_cstr(&text), path, err);
    if (rc == IB_OK) {
        const char *t = ib_strbuf_cstr(&text);
        size_t l1 = strcspn(t, "\n");
        snprintf(res->accuracy_line, sizeof res->accuracy_line, "%.*s", (int)l1, t);
        res->accuracy = value;
        res->accuracy_valid = true;
        res->accuracy_met = value >= ib_bench_accuracy_reference(o->bench, &o->cfg) *
                                         o->bench->accuracy_target_fraction;
    }
    ib_strbuf_deinit(&text);
    return rc;
}

/* A path as an absolute one, so that run.json still leads to the files from another
 * working directory (`inferbench accuracy` reads data.path); as given when it cannot be
 * resolved. */
static void abs_path(ib_jw *jw, const char *p)
{
    char abs[4096];
    ib_jw_string(jw, ib_path_absolute(p, abs, sizeof abs) == IB_OK ? abs : p);
}

int ib_run_write_json(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    const ib_harness_result *res = c->res;
    const char *path = c->rd.run_json; /* staged: moved into <scenario>/ with the run */
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_jw jw;
    ib_jw_init(&jw, &sb, true);
    bool small = c->settings.performance_sample_count_override &&
                 c->settings.performance_sample_count_override <
                     ib_bench_performance_sample_count(o->bench, &o->cfg);
    const ib_runjson_head head = {
        .sut = o->n_endpoints ? "kserve" : "runtime",
        .benchmark = o->bench->id,
        .model_name = o->bench->model_name,
        .scenario = o->scenario,
        .mode = o->mode,
        .rules = c->settings.rules,
        .system = res->system,
        .interrupted = res->interrupted,
        .run_n = c->rd.run_n,
        .submittable = !o->quick && !res->synthetic_model && !res->synthetic_data && !small,
        .labels = c->label_ptrs,
        .n_labels = res->n_labels,
    };
    ib_runjson_begin(&jw, &head);
    ib_jw_key(&jw, "model");
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "path");
    abs_path(&jw, res->model_path);
    ib_jw_key(&jw, "synthetic");
    ib_jw_bool(&jw, res->synthetic_model);
    ib_jw_key(&jw, "tiny");
    ib_jw_bool(&jw, res->synthetic_model && o->cfg.tiny);
    ib_jw_key(&jw, "seed");
    ib_jw_uint(&jw, o->cfg.seed);
    ib_jw_key(&jw, "variant");
    if (o->cfg.variant)
        ib_jw_string(&jw, o->cfg.variant);
    else
        ib_jw_null(&jw);
    ib_jw_key(&jw, "binding");
    ib_jw_string(&jw, res->model_note);
    ib_jw_key(&jw, "session");
    ib_jw_string(&jw, ib_run_sut_describe(c));
    ib_jw_object_end(&jw);
    ib_jw_key(&jw, "data");
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "path");
    abs_path(&jw, res->data_dir);
    ib_jw_key(&jw, "synthetic");
    ib_jw_bool(&jw, res->synthetic_data);
    ib_jw_key(&jw, "samples");
    ib_jw_uint(&jw, c->total);
    ib_jw_object_end(&jw);
    if (o->n_endpoints) { /* the network SUT: where inference ran, and how it went */
        ib_jw_key(&jw, "network");
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "protocol");
        ib_jw_string(&jw, o->json ? "kserve-v2-json" : "kserve-v2-binary");
        ib_jw_key(&jw, "endpoints");
        ib_jw_array_begin(&jw);
        for (size_t i = 0; i < o->n_endpoints; i++)
            ib_jw_string(&jw, o->endpoints[i]);
        ib_jw_array_end(&jw);
        ib_jw_key(&jw, "requests");
        ib_jw_uint(&jw, res->net_requests);
        ib_jw_key(&jw, "failed_requests");
        ib_jw_uint(&jw, res->net_failed_requests);
        ib_jw_key(&jw, "first_failure");
        ib_jw_string(&jw, res->net_first_failure);
        ib_jw_object_end(&jw);
    }
    ib_jw_key(&jw, "backend");
    ib_jw_string(&jw, o->backend);
    ib_jw_key(&jw, "devices_requested"); /* --devices as given (NULL: all, or a host backend) */
    if (o->devices)
        ib_jw_string(&jw, o->devices);
    else
        ib_jw_null(&jw);
    ib_jw_key(&jw, "precision");
    ib_jw_string(&jw, ib_precision_name(o->cfg.precision));
    ib_jw_key(&jw, "model_precisions"); /* one a model; null: the network SUT's servers */
    if (res->n_model_precisions) {
        ib_jw_array_begin(&jw);
        for (size_t m = 0; m < res->n_model_precisions; m++)
            ib_jw_string(&jw, ib_precision_name(res->model_precisions[m]));
        ib_jw_array_end(&jw);
    } else {
        ib_jw_null(&jw);
    }
    ib_jw_key(&jw, "payload_dtype");
    ib_jw_string(&jw, ib_dtype_name(ib_benchmark_payload_dtype(o->bench, &o->cfg)));
    ib_jw_key(&jw, "workers");
    ib_jw_int(&jw, c->workers);
    ib_jw_key(&jw, "threads_per_worker");
    ib_jw_int(&jw, c->tpw);
    ib_jw_key(&jw, "nhwc_fp16");
    ib_jw_bool(&jw, o->nhwc_fp16);
    ib_jw_key(&jw, "half_chains");
    ib_jw_bool(&jw, o->half_chains);
    ib_jw_key(&jw, "pinned");
    ib_jw_bool(&jw, o->pin);
    ib_jw_key(&jw, "max_batch");
    ib_jw_int(&jw, c->batch);
    ib_jw_key(&jw, "max_wait_us");
    ib_jw_int(&jw, c->max_wait_ns / 1000);
    ib_jw_key(&jw, "max_wait_from"); /* "user", the entry's default, or the device rule */
    ib_jw_string(&jw, res->max_wait_from);
    ib_jw_key(&jw, "max_batch_from"); /* "user", or whose default and why (issue 25) */
    ib_jw_string(&jw, res->batch_from);
    ib_jw_key(&jw, "workers_from");
    ib_jw_string(&jw, res->workers_from);
    ib_jw_key(&jw, "placement"); /* where the nodes ran (null: the network SUT's servers) */
    if (o->n_endpoints) {
        ib_jw_null(&jw);
    } else {
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "nodes");
        ib_jw_uint(&jw, res->nodes);
        ib_jw_key(&jw, "backend_nodes");
        ib_jw_uint(&jw, res->nodes - res->fallback_nodes);
        ib_jw_key(&jw, "fallback_backend");
        ib_jw_string(&jw, res->fallback_backend);
        ib_jw_key(&jw, "fallback_nodes");
        ib_jw_uint(&jw, res->fallback_nodes);
        ib_jw_key(&jw, "fallback_ops");
        ib_jw_string(&jw, res->fallback_ops);
        ib_jw_object_end(&jw);
    }
    ib_jw_key(&jw, "precision_use"); /* products at their model's precision (null: the
                                       * network SUT's servers) */
    if (o->n_endpoints) {
        ib_jw_null(&jw);
    } else {
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "products");
        ib_jw_uint(&jw, res->products);
        ib_jw_key(&jw, "at_precision");
        ib_jw_uint(&jw, res->products_at_precision);
        ib_jw_key(&jw, "others");
        ib_jw_string(&jw, res->products_others);
        ib_jw_object_end(&jw);
    }
    ib_jw_key(&jw, "worker_time"); /* the performance test's (null: not measured, e.g. the
                                     * network SUT) */
    const ib_harness_worker_time *wt = &res->worker_time;
    if (wt->span_s <= 0) {
        ib_jw_null(&jw);
    } else {
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "workers");
        ib_jw_int(&jw, wt->workers);
        ib_jw_key(&jw, "runs");
        ib_jw_uint(&jw, wt->runs);
        ib_jw_key(&jw, "span_s");
        ib_jw_double(&jw, wt->span_s);
        const char *keys[] = {"compute_s", "inputs_s", "outputs_s", "host_s", "responses_s",
                              "idle_s"};
        const double vals[] = {wt->compute_s, wt->inputs_s,    wt->outputs_s,
                               wt->host_s,    wt->responses_s, wt->idle_s};
        for (size_t k = 0; k < IB_ARRAY_LEN(keys); k++) {
            ib_jw_key(&jw, keys[k]);
            ib_jw_double(&jw, vals[k]);
        }
        ib_jw_object_end(&jw);
    }
    ib_jw_key(&jw, "graph_replay"); /* issue 24: CUDA Graph replay after warm-up (null: the
                                      * network SUT's servers) */
    if (o->n_endpoints) {
        ib_jw_null(&jw);
    } else {
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "subgraphs"); /* of backends that record launches (0: none do) */
        ib_jw_uint(&jw, res->replay_subgraphs);
        ib_jw_key(&jw, "replayed");
        ib_jw_uint(&jw, res->replay_on);
        ib_jw_key(&jw, "refused");
        ib_jw_uint(&jw, res->replay_refused);
        ib_jw_key(&jw, "first_refusal");
        ib_jw_string(&jw, res->replay_why);
        ib_jw_object_end(&jw);
    }
    ib_jw_key(&jw, "warmup_samples_per_second");
    ib_jw_double(&jw, res->warmup_samples_per_sec);
    ib_jw_key(&jw, "sut_timeout_ms"); /* what the loadgen used; 0 = waited forever */
    ib_jw_uint(&jw, c->sut_timeout_ms);
    ib_jw_key(&jw, "warmup_batch1_latency_ns");
    ib_jw_int(&jw, ib_run_sut_warmup_latency_ns(c));
    ib_jw_key(&jw, "settings_changed");
    ib_jw_array_begin(&jw);
    for (const char *l = c->adjustments; *l;) {
        size_t n = strcspn(l, "\n");
        ib_jw_string_n(&jw, l, n);
        l += n + (l[n] == '\n');
    }
    ib_jw_array_end(&jw);
    if (res->ran_performance)
        ib_runjson_performance(&jw, &res->perf, res->perf_dir,
                               c->settings.rules == IB_LG_RULES_V1_1);
    if (res->ran_accuracy && res->accuracy_valid) {
        ib_jw_key(&jw, "accuracy");
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "dir");
        ib_jw_string(&jw, res->acc_dir);
        ib_jw_key(&jw, "metric");
        ib_jw_string(&jw, o->bench->accuracy_metric);
        ib_jw_key(&jw, "value");
        ib_jw_double(&jw, res->accuracy);
        ib_jw_key(&jw, "target");
        ib_jw_double(&jw, ib_bench_accuracy_reference(o->bench, &o->cfg) *
                              o->bench->accuracy_target_fraction);
        ib_jw_key(&jw, "met");
        ib_jw_bool(&jw, res->accuracy_met);
        ib_jw_key(&jw, "line");
        ib_jw_string(&jw, res->accuracy_line);
        ib_jw_object_end(&jw);
    }
    int rc = ib_runjson_finish(&jw, &sb, path, err);
    ib_strbuf_deinit(&sb);
    return rc;
}
