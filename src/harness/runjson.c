/*
 * runjson.c - the parts of run.json every kind of run shares (runjson.h).
 */
#include "harness/runjson.h"

#include <stdio.h>

#include "base/fileio.h"
#include "inferbench/version.h"
#include "loadgen/result_json.h"

void ib_runjson_begin(ib_jw *jw, const ib_runjson_head *h)
{
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "format");
    ib_jw_string(jw, IB_RUN_JSON_FORMAT);
    ib_jw_key(jw, "inferbench_version");
    ib_jw_string(jw, ib_version_string());
    ib_jw_key(jw, "git");
    ib_jw_string(jw, ib_version_git());
    ib_jw_key(jw, "sut");
    ib_jw_string(jw, h->sut);
    ib_jw_key(jw, "benchmark");
    if (h->benchmark)
        ib_jw_string(jw, h->benchmark);
    else
        ib_jw_null(jw);
    ib_jw_key(jw, "model_name");
    ib_jw_string(jw, h->model_name ? h->model_name : "");
    ib_jw_key(jw, "scenario");
    ib_jw_string(jw, ib_lg_scenario_name(h->scenario));
    ib_jw_key(jw, "mode");
    ib_jw_string(jw, ib_lg_mode_name(h->mode));
    ib_jw_key(jw, "rules");
    ib_jw_string(jw, ib_lg_rules_name(h->rules));
    ib_jw_key(jw, "system");
    ib_jw_string(jw, h->system ? h->system : "");
    /* COMPLETE, or INTERRUPTED (a stop request ended it: its files stay in the staging
     * folder the dirs below name, and nothing in the tree changed) */
    ib_jw_key(jw, "status");
    ib_jw_string(jw, h->interrupted ? "INTERRUPTED" : "COMPLETE");
    ib_jw_key(jw, "run");
    if (h->run_n && !h->interrupted) {
        char rn[32];
        snprintf(rn, sizeof rn, "performance/run_%u", h->run_n);
        ib_jw_string(jw, rn);
    } else {
        ib_jw_null(jw);
    }
    ib_jw_key(jw, "submittable");
    ib_jw_bool(jw, h->submittable && !h->interrupted);
    ib_jw_key(jw, "labels");
    ib_jw_array_begin(jw);
    for (size_t i = 0; i < h->n_labels; i++)
        ib_jw_string(jw, h->labels[i]);
    ib_jw_array_end(jw);
}

void ib_runjson_performance(ib_jw *jw, const ib_lg_result *r, const char *dir, bool v11)
{
    ib_jw_key(jw, "performance");
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "dir");
    ib_jw_string(jw, dir);
    ib_jw_key(jw, "result");
    ib_jw_string(jw, r->interrupted ? "INTERRUPTED" : r->valid ? "VALID" : "INVALID");
    ib_jw_key(jw, "valid");
    ib_jw_bool(jw, r->valid);
    ib_jw_key(jw, "reasons");
    ib_jw_string(jw, r->reasons);
    ib_jw_key(jw, "suggestion");
    ib_jw_string(jw, r->suggestion);
    ib_jw_key(jw, "metrics"); /* the same object as result.json's */
    ib_lg_result_metrics_json(jw, r, v11);
    ib_jw_object_end(jw);
}

int ib_runjson_finish(ib_jw *jw, ib_strbuf *sb, const char *path, ib_err *err)
{
    ib_jw_object_end(jw);
    int rc = ib_jw_finish(jw);
    if (rc == IB_OK)
        rc = ib_strbuf_putc(sb, '\n');
    if (rc)
        return ib_err_set(err, rc, "run.json: out of memory");
    return ib_file_write_all(path, ib_strbuf_cstr(sb), sb->len, err);
}
