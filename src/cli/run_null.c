/*
 * run_null.c - `inferbench run --sut null`: the golden harness contract of
 * ../shared/golden/README.md. The null QSL reports the requested counts and
 * loads nothing; the null SUT completes every query inside issue_query with
 * one ib_lg_samples_complete call carrying one response per sample, whose
 * payload is the sample's QSL index as a little-endian uint32, and can
 * record what it received as sut_issued.txt (one line per call). The logs go
 * into the results-tree layout like a benchmark's:
 * <out>/<system>/<model>/<Scenario>/performance/run_N/ (accuracy mode:
 * accuracy/), with run.json beside them (harness/rundir.h, runjson.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/common.h"
#include "base/fileio.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "harness/harness.h"
#include "harness/nsut.h"
#include "harness/rundir.h"
#include "harness/runjson.h"

typedef struct null_sut {
    ib_lg_response *resp;
    uint8_t *payload;
    size_t cap;
    FILE *issued; /* sut_issued.txt, or NULL */
    int oom;
} null_sut;

static void null_issue(void *user, ib_lg_test *test, const ib_lg_sample *samples, size_t count)
{
    null_sut *n = user;
    if (count > n->cap) {
        size_t cap = count > 2 * n->cap ? count : 2 * n->cap;
        ib_lg_response *r = realloc(n->resp, cap * sizeof *r);
        if (r)
            n->resp = r;
        uint8_t *p = realloc(n->payload, cap * 4);
        if (p)
            n->payload = p;
        if (!r || !p) {
            n->oom = 1; /* the samples stay incomplete: the test times out */
            return;
        }
        n->cap = cap;
    }
    for (size_t i = 0; i < count; i++) {
        uint32_t v = (uint32_t)samples[i].index;
        uint8_t *p = n->payload + 4 * i;
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
        n->resp[i].id = samples[i].id;
        n->resp[i].data = p;
        n->resp[i].size = 4;
        n->resp[i].n_tokens = 0;
    }
    if (n->issued) {
        for (size_t i = 0; i < count; i++)
            fprintf(n->issued, i ? " %zu" : "%zu", samples[i].index);
        fputc('\n', n->issued);
    }
    ib_lg_samples_complete(test, n->resp, count);
}

static int null_load(void *user, const ib_lg_sample_index *idx, size_t count)
{
    (void)user;
    (void)idx;
    (void)count;
    return IB_OK;
}

static void print_file(const char *dir, const char *name)
{
    char path[4096];
    if (ib_path_join(path, sizeof path, dir, name))
        return;
    char *text = NULL;
    size_t len = 0;
    if (ib_file_read_all(path, 0, &text, &len, NULL) == IB_OK) {
        fwrite(text, 1, len, stdout);
        ib_free(text);
    }
}

static const char *const k_labels[] = {"null SUT (synthetic: no inference, instant answers)"};
static const char *const k_labels_net[] = {
    "null SUT over the network (synthetic: no inference; KServe v2 requests to an echo model, "
    "so the figures are the network's and the protocol's)"};

/* run.json of a null-SUT run: the shared head and performance object, plus the QSL sizes. */
static int write_run_json(const ib_run_opts *o, const ib_lg_settings *s, const ib_rundir *rd,
                          const char *system, const ib_lg_result *res, bool perf,
                          uint64_t total, uint64_t psc, ib_err *err)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_jw jw;
    ib_jw_init(&jw, &sb, true);
    const ib_runjson_head head = {
        .sut = o->n_endpoints ? "null-kserve" : "null",
        .benchmark = NULL,
        .model_name = o->model,
        .scenario = o->scenario,
        .mode = o->mode,
        .rules = s->rules,
        .system = system,
        .interrupted = res->interrupted,
        .run_n = rd->run_n,
        .submittable = false,
        .labels = o->n_endpoints ? k_labels_net : k_labels,
        .n_labels = 1,
    };
    ib_runjson_begin(&jw, &head);
    ib_jw_key(&jw, "qsl_total_samples");
    ib_jw_uint(&jw, total);
    ib_jw_key(&jw, "qsl_performance_samples");
    ib_jw_uint(&jw, psc);
    if (perf)
        ib_runjson_performance(&jw, res, res->interrupted ? rd->perf : rd->final_perf,
                               s->rules == IB_LG_RULES_V1_1);
    else {
        ib_jw_key(&jw, "accuracy");
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "dir");
        ib_jw_string(&jw, res->interrupted ? rd->acc : rd->final_acc);
        ib_jw_key(&jw, "entries");
        ib_jw_uint(&jw, res->accuracy_log_entries);
        ib_jw_object_end(&jw);
    }
    int rc = ib_runjson_finish(&jw, &sb, rd->run_json, err);
    ib_strbuf_deinit(&sb);
    return rc;
}

int ib_run_null(const ib_run_opts *o)
{
    const char *cmd = "run";
    ib_err err;
    ib_err_clear(&err);
    char system[128], scen_dir[4096];
    int rc = ib_harness_system_name(o->system, "null", system, sizeof system, &err);
    if (rc)
        return ib_cli_usage_error(cmd, "%s", err.msg);
    int k = snprintf(scen_dir, sizeof scen_dir, "%s/%s/%s/%s", o->output_dir, system, o->model,
                     ib_lg_scenario_name(o->scenario));
    if (k < 0 || (size_t)k >= sizeof scen_dir)
        return ib_cli_usage_error(cmd, "--output-dir: path too long");
    ib_lg_settings_origin *origins = NULL;
    if (ib_lg_settings_origin_create(&origins) != IB_OK) {
        ib_cli_error(cmd, "out of memory");
        return IB_EXIT_RUNTIME;
    }
    ib_lg_settings s;
    const char *audit = NULL;
    rc = ib_run_build_settings(o, &s, origins, &audit, &err);
    if (rc) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        ib_lg_settings_origin_destroy(origins);
        return IB_EXIT_USAGE;
    }
    /* one loadgen test: accuracy mode into accuracy/, every other mode (submission too:
     * one log set, as LoadGen writes it) into performance/run_N */
    bool perf = o->mode != IB_LG_MODE_ACCURACY;
    ib_rundir rd;
    if ((rc = ib_rundir_open(&rd, scen_dir, perf, !perf, o->force, &err))) {
        ib_cli_error(cmd, "%s", err.msg);
        ib_lg_settings_origin_destroy(origins);
        return ib_cli_exit_for_status(rc);
    }
    const char *logdir = perf ? rd.perf : rd.acc;
    if ((rc = ib_mkdirs(logdir, &err))) {
        ib_cli_error(cmd, "%s", err.msg);
        ib_rundir_abandon(&rd, false);
        ib_lg_settings_origin_destroy(origins);
        return ib_cli_exit_for_status(rc);
    }
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = logdir;
    log.enable_trace = o->trace;
    ib_lg_options opts;
    ib_lg_options_defaults(&opts);
    if (o->sut_timeout_ms >= 0)
        opts.sut_timeout_ms = (uint64_t)o->sut_timeout_ms;
    opts.audit_config_applied = audit;
    opts.origins = origins;
    opts.model_name = o->model;
    opts.labels = k_labels;
    opts.label_count = 1;
    opts.stop_flag = ib_cli_stop_flag_install();
    if (!o->quiet && !o->no_progress && !o->json && ib_cli_progress_enabled())
        opts.progress = ib_run_progress_print;

    uint64_t total = o->total_samples ? o->total_samples : 1024;
    uint64_t psc = o->performance_samples ? o->performance_samples : total;
    null_sut sut_state;
    memset(&sut_state, 0, sizeof sut_state);
    if (o->record_issued) {
        char path[4200];
        snprintf(path, sizeof path, "%s/sut_issued.txt", logdir);
        sut_state.issued = fopen(path, "w");
        if (!sut_state.issued) {
            ib_cli_error(cmd, "%s: cannot create it", path);
            ib_rundir_abandon(&rd, false);
            ib_lg_settings_origin_destroy(origins);
            return IB_EXIT_RUNTIME;
        }
    }
    ib_lg_sut sut = {&sut_state, "NullSUT", null_issue, NULL};
    ib_lg_qsl qsl = {NULL, "NullQSL", (size_t)total, (size_t)psc, null_load, null_load};
    ib_nsut *net = NULL;
    if (o->n_endpoints) {
        /* the same contract over KServe v2: indices out, echoed indices back as payloads */
        int64_t mb = o->batch ? o->batch
                     : o->scenario == IB_LG_SCENARIO_OFFLINE ? 1024
                     : o->scenario == IB_LG_SCENARIO_MULTI_STREAM
                         ? (int64_t)s.multi_stream_samples_per_query
                         : 16;
        ib_nsut_opts no = {.endpoints = o->endpoints,
                           .n_endpoints = o->n_endpoints,
                           .model_name = o->model_name,
                           .concurrency = o->concurrency ? o->concurrency
                                                         : 2 * (int)o->n_endpoints,
                           .max_batch = mb < 1 ? 1 : mb,
                           .request_timeout_ms = o->request_timeout_ms,
                           .json = o->json_tensors,
                           .stop_flag = opts.stop_flag};
        if ((rc = ib_nsut_create(&no, &net, &err))) {
            ib_cli_error(cmd, "%s", err.msg);
            if (sut_state.issued)
                fclose(sut_state.issued);
            ib_rundir_abandon(&rd, false);
            ib_lg_settings_origin_destroy(origins);
            return ib_cli_exit_for_status(rc);
        }
        sut = ib_nsut_table(net);
        opts.labels = k_labels_net;
    }

    ib_lg_test *test = NULL;
    rc = ib_lg_test_create(&s, &log, &opts, &test, &err);
    static ib_lg_result res;
    memset(&res, 0, sizeof res);
    if (rc == IB_OK)
        rc = ib_lg_test_run(test, &sut, &qsl, &res, &err);
    if (net) {
        ib_err nerr;
        ib_err_clear(&nerr);
        int nrc = ib_nsut_take_error(net, &nerr); /* no request touches the test after this */
        if (nrc && rc == IB_OK) {
            rc = nrc;
            err = nerr;
        }
        ib_nsut_stats st;
        ib_nsut_get_stats(net, &st);
        if (st.failed_requests) /* an error, said even with --quiet */
            fprintf(stderr, "inferbench run: %llu of %llu requests failed; first: %s\n",
                    (unsigned long long)st.failed_requests, (unsigned long long)st.requests,
                    st.first_failure);
        ib_nsut_destroy(net);
    }
    ib_run_progress_done();
    if (sut_state.issued)
        fclose(sut_state.issued);
    free(sut_state.resp);
    free(sut_state.payload);
    ib_lg_test_destroy(test);
    ib_lg_settings_origin_destroy(origins);
    if (rc != IB_OK && rc != IB_ETIMEOUT) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        ib_rundir_abandon(&rd, false);
        return ib_run_exit_code(rc, &res);
    }
    /* a SUT timeout still wrote every log: committed, INVALID, with the error said */
    int wrc = res.interrupted ? IB_OK : ib_rundir_reserve(&rd, &err);
    if (wrc == IB_OK)
        wrc = write_run_json(o, &s, &rd, system, &res, perf, total, psc, &err);
    if (wrc == IB_OK && !res.interrupted)
        wrc = ib_rundir_commit(&rd, &err);
    if (wrc) {
        ib_cli_error(cmd, "%s", err.msg);
        ib_rundir_abandon(&rd, false);
        return IB_EXIT_RUNTIME;
    }
    if (res.interrupted) {
        ib_rundir_abandon(&rd, true);
        ib_cli_error(cmd, "interrupted: nothing earlier in %s was touched; this run's partial "
                          "logs are in %s",
                     scen_dir, rd.stage);
        return IB_EXIT_INTERRUPTED;
    }
    const char *dir = perf ? rd.final_perf : rd.final_acc;
    if (o->json) {
        print_file(scen_dir, "run.json");
    } else {
        print_file(dir, "mlperf_log_summary.txt");
        printf("\nLabels:\n  * %s\n\nLogs: %s\n", o->n_endpoints ? k_labels_net[0] : k_labels[0],
               dir);
    }
    if (rc == IB_ETIMEOUT)
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : "the SUT stopped answering");
    if (!o->quiet && !o->json && !res.valid && res.suggestion[0])
        fprintf(stderr, "inferbench run: INVALID; suggestion:\n%s", res.suggestion);
    return ib_run_exit_code(rc, &res);
}
