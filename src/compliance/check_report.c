/*
 * check_report.c - the checker's report: problems and results in one arena, sorted for
 * stable output, and their JSON form (users.md §4.1: --json for a machine summary).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/json_writer.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "compliance/check_internal.h"

struct ib_check_report {
    ib_arena arena;
    const char *tree;
    enum ib_check_version version;
    IB_VEC(ib_check_problem) problems;
    IB_VEC(ib_check_result) results;
    size_t errors, warnings;
};

int ib_check_report_create(const char *tree, enum ib_check_version v, ib_check_report **out)
{
    ib_check_report *r = ib_calloc(1, sizeof *r);
    if (!r)
        return IB_ENOMEM;
    ib_arena_init(&r->arena, 0);
    r->version = v;
    r->tree = ib_arena_strdup(&r->arena, tree);
    if (!r->tree) {
        ib_check_report_destroy(r);
        return IB_ENOMEM;
    }
    *out = r;
    return IB_OK;
}

void ib_check_report_destroy(ib_check_report *r)
{
    if (!r)
        return;
    IB_VEC_FREE(&r->problems);
    IB_VEC_FREE(&r->results);
    ib_arena_deinit(&r->arena);
    ib_free(r);
}

int ib_check_addf(ib_check_ctx *ctx, enum ib_check_severity sev, const char *file,
                  const char *rule, const char *fix, const char *fmt, ...)
{
    ib_check_report *r = ctx->rep;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ib_check_problem p;
    p.severity = sev;
    p.file = ib_arena_strdup(&r->arena, file ? file : ".");
    p.rule = ib_arena_strdup(&r->arena, rule);
    p.message = ib_arena_strdup(&r->arena, msg);
    p.fix = ib_arena_strdup(&r->arena, fix ? fix : "");
    if (!p.file || !p.rule || !p.message || !p.fix || IB_VEC_PUSH(&r->problems, p)) {
        ctx->oom = 1;
        return IB_ENOMEM;
    }
    if (sev == IB_CHECK_ERROR)
        r->errors++;
    else
        r->warnings++;
    return IB_OK;
}

int ib_check_add_result(ib_check_ctx *ctx, const ib_check_scn *s, bool valid)
{
    ib_check_report *r = ctx->rep;
    ib_arena *a = &r->arena;
    ib_check_result x;
    memset(&x, 0, sizeof x);
    x.division = ib_arena_strdup(a, s->division);
    x.submitter = ib_arena_strdup(a, s->submitter);
    x.system = ib_arena_strdup(a, s->system);
    x.benchmark = ib_arena_strdup(a, s->bench);
    x.model = ib_arena_strdup(a, s->model_name ? s->model_name : s->bench);
    x.scenario = ib_arena_strdup(a, s->scenario);
    x.valid = valid;
    x.has_metric = s->has_metric;
    x.metric = s->metric;
    switch (s->scn_bit) {
    case IB_SCN_OFFLINE: x.unit = "Samples/s"; break;
    case IB_SCN_SERVER:
    case IB_SCN_INTERACTIVE: x.unit = "Queries/s"; break;
    case IB_SCN_MULTI: x.unit = ctx->rules->version == IB_CHECK_V1_1 ? "Streams" : "Latency (ms)";
        break;
    default: x.unit = "Latency (ms)"; break;
    }
    x.has_accuracy = s->has_accuracy;
    x.accuracy = s->accuracy;
    x.accuracy_metric = s->model ? ib_acc_metric_name(s->model->metric) : "none";
    x.compliance_ok = s->compliance_ok;
    if (!x.division || !x.submitter || !x.system || !x.benchmark || !x.model || !x.scenario ||
        IB_VEC_PUSH(&r->results, x)) {
        ctx->oom = 1;
        return IB_ENOMEM;
    }
    return IB_OK;
}

static int cmp_problem(const void *pa, const void *pb)
{
    const ib_check_problem *a = pa, *b = pb;
    int c = strcmp(a->file, b->file);
    if (c)
        return c;
    if (a->severity != b->severity)
        return (int)a->severity - (int)b->severity;
    c = strcmp(a->rule, b->rule);
    if (c)
        return c;
    return strcmp(a->message, b->message);
}

void ib_check_report_finish(ib_check_report *r)
{
    if (r->problems.len > 1)
        qsort(r->problems.data, r->problems.len, sizeof *r->problems.data, cmp_problem);
}

size_t ib_check_report_problem_count(const ib_check_report *r)
{
    return r->problems.len;
}

const ib_check_problem *ib_check_report_problem(const ib_check_report *r, size_t i)
{
    return i < r->problems.len ? &r->problems.data[i] : NULL;
}

size_t ib_check_report_error_count(const ib_check_report *r)
{
    return r->errors;
}

size_t ib_check_report_warning_count(const ib_check_report *r)
{
    return r->warnings;
}

size_t ib_check_report_result_count(const ib_check_report *r)
{
    return r->results.len;
}

const ib_check_result *ib_check_report_result(const ib_check_report *r, size_t i)
{
    return i < r->results.len ? &r->results.data[i] : NULL;
}

int ib_check_report_json(const ib_check_report *r, char **out, size_t *len)
{
    ib_strbuf sb;
    ib_jw jw;
    ib_strbuf_init(&sb);
    ib_jw_init(&jw, &sb, true);
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "tool");
    ib_jw_string(&jw, "inferbench check");
    ib_jw_key(&jw, "version");
    ib_jw_string(&jw, ib_check_version_name(r->version));
    ib_jw_key(&jw, "rules");
    ib_jw_string(&jw, ib_rules_get(r->version)->name);
    ib_jw_key(&jw, "tree");
    ib_jw_string(&jw, r->tree);
    size_t valid = 0;
    for (size_t i = 0; i < r->results.len; i++)
        valid += r->results.data[i].valid;
    ib_jw_key(&jw, "results_checked");
    ib_jw_uint(&jw, r->results.len);
    ib_jw_key(&jw, "results_valid");
    ib_jw_uint(&jw, valid);
    ib_jw_key(&jw, "errors");
    ib_jw_uint(&jw, r->errors);
    ib_jw_key(&jw, "warnings");
    ib_jw_uint(&jw, r->warnings);
    ib_jw_key(&jw, "clean");
    ib_jw_bool(&jw, r->errors == 0);
    ib_jw_key(&jw, "problems");
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < r->problems.len; i++) {
        const ib_check_problem *p = &r->problems.data[i];
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "severity");
        ib_jw_string(&jw, p->severity == IB_CHECK_ERROR ? "error" : "warning");
        ib_jw_key(&jw, "file");
        ib_jw_string(&jw, p->file);
        ib_jw_key(&jw, "rule");
        ib_jw_string(&jw, p->rule);
        ib_jw_key(&jw, "message");
        ib_jw_string(&jw, p->message);
        ib_jw_key(&jw, "fix");
        ib_jw_string(&jw, p->fix);
        ib_jw_object_end(&jw);
    }
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "results");
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < r->results.len; i++) {
        const ib_check_result *x = &r->results.data[i];
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "division");
        ib_jw_string(&jw, x->division);
        ib_jw_key(&jw, "submitter");
        ib_jw_string(&jw, x->submitter);
        ib_jw_key(&jw, "system");
        ib_jw_string(&jw, x->system);
        ib_jw_key(&jw, "benchmark");
        ib_jw_string(&jw, x->benchmark);
        ib_jw_key(&jw, "model");
        ib_jw_string(&jw, x->model);
        ib_jw_key(&jw, "scenario");
        ib_jw_string(&jw, x->scenario);
        ib_jw_key(&jw, "valid");
        ib_jw_bool(&jw, x->valid);
        ib_jw_key(&jw, "result");
        if (x->has_metric)
            ib_jw_double(&jw, x->metric);
        else
            ib_jw_null(&jw);
        ib_jw_key(&jw, "unit");
        ib_jw_string(&jw, x->unit);
        ib_jw_key(&jw, "accuracy");
        if (x->has_accuracy)
            ib_jw_double(&jw, x->accuracy);
        else
            ib_jw_null(&jw);
        ib_jw_key(&jw, "accuracy_metric");
        ib_jw_string(&jw, x->accuracy_metric);
        ib_jw_key(&jw, "compliance");
        ib_jw_bool(&jw, x->compliance_ok);
        ib_jw_object_end(&jw);
    }
    ib_jw_array_end(&jw);
    ib_jw_object_end(&jw);
    int rc = ib_jw_finish(&jw);
    if (rc == IB_OK)
        rc = ib_strbuf_putc(&sb, '\n');
    if (rc) {
        ib_strbuf_deinit(&sb);
        return rc;
    }
    if (len)
        *len = sb.len;
    *out = ib_strbuf_detach(&sb);
    return *out ? IB_OK : IB_ENOMEM;
}
