/*
 * run_null.c - `inferbench run --sut null`: the golden harness contract of
 * ../shared/golden/README.md. The null QSL reports the requested counts and
 * loads nothing; the null SUT completes every query inside issue_query with
 * one ib_lg_samples_complete call carrying one response per sample, whose
 * payload is the sample's QSL index as a little-endian uint32, and can
 * record what it received as sut_issued.txt (one line per call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/common.h"
#include "base/fileio.h"
#include "cli/cli.h"
#include "cli/run.h"

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

int ib_run_null(const ib_run_opts *o)
{
    const char *cmd = "run";
    ib_err err;
    ib_err_clear(&err);
    ib_lg_settings_origin *origins = NULL;
    if (ib_lg_settings_origin_create(&origins) != IB_OK) {
        ib_cli_error(cmd, "out of memory");
        return IB_EXIT_RUNTIME;
    }
    ib_lg_settings s;
    const char *audit = NULL;
    int rc = ib_run_build_settings(o, &s, origins, &audit, &err);
    if (rc) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        ib_lg_settings_origin_destroy(origins);
        return IB_EXIT_USAGE;
    }
    if (ib_mkdirs(o->output_dir, &err) != IB_OK) {
        ib_cli_error(cmd, "%s", err.msg);
        ib_lg_settings_origin_destroy(origins);
        return IB_EXIT_RUNTIME;
    }
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = o->output_dir;
    log.enable_trace = o->trace;
    ib_lg_options opts;
    ib_lg_options_defaults(&opts);
    if (o->sut_timeout_ms)
        opts.sut_timeout_ms = o->sut_timeout_ms;
    opts.audit_config_applied = audit;
    opts.origins = origins;
    opts.model_name = o->model;
    static const char *const labels[] = {"null SUT (synthetic: no inference, instant answers)"};
    opts.labels = labels;
    opts.label_count = 1;
    if (!o->quiet && !o->no_progress && !o->json && ib_cli_progress_enabled())
        opts.progress = ib_run_progress_print;

    uint64_t total = o->total_samples ? o->total_samples : 1024;
    uint64_t perf = o->performance_samples ? o->performance_samples : total;
    null_sut sut_state;
    memset(&sut_state, 0, sizeof sut_state);
    if (o->record_issued) {
        char path[4096];
        if (ib_path_join(path, sizeof path, o->output_dir, "sut_issued.txt") == IB_OK)
            sut_state.issued = fopen(path, "w");
        if (!sut_state.issued) {
            ib_cli_error(cmd, "%s/sut_issued.txt: cannot create it", o->output_dir);
            ib_lg_settings_origin_destroy(origins);
            return IB_EXIT_RUNTIME;
        }
    }
    ib_lg_sut sut = {&sut_state, "NullSUT", null_issue, NULL};
    ib_lg_qsl qsl = {NULL, "NullQSL", (size_t)total, (size_t)perf, null_load, null_load};

    ib_lg_test *test = NULL;
    rc = ib_lg_test_create(&s, &log, &opts, &test, &err);
    ib_lg_result res;
    memset(&res, 0, sizeof res);
    if (rc == IB_OK)
        rc = ib_lg_test_run(test, &sut, &qsl, &res, &err);
    ib_run_progress_done();
    if (sut_state.issued)
        fclose(sut_state.issued);
    free(sut_state.resp);
    free(sut_state.payload);
    ib_lg_test_destroy(test);
    ib_lg_settings_origin_destroy(origins);
    if (rc != IB_OK && rc != IB_ETIMEOUT)
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
    if (rc == IB_OK || rc == IB_ETIMEOUT) {
        if (o->json)
            print_file(o->output_dir, "result.json");
        else {
            print_file(o->output_dir, "mlperf_log_summary.txt");
            printf("\nLabels:\n  * %s\n", labels[0]);
        }
        if (rc == IB_ETIMEOUT)
            ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : "the SUT stopped answering");
        if (!o->quiet && !o->json && !res.valid && res.suggestion[0])
            fprintf(stderr, "inferbench run: INVALID; suggestion:\n%s", res.suggestion);
    }
    return ib_run_exit_code(rc, &res);
}
