/*
 * cmd_package.c - `inferbench package RESULTS_DIR --output-dir SUB`: lays out benchmark runs
 * (RESULTS_DIR/<system>/<benchmark>/<Scenario>/ as `inferbench run --benchmark` writes them,
 * with the TEST0x folders `inferbench audit --output-dir RESULTS_DIR` adds) as a submission
 * tree in the layout of benchmarks.md §2.3:
 *   <division>/<submitter>/systems/<system>.json            (sysinfo, as `inferbench sysinfo`)
 *   <division>/<submitter>/code/<benchmark>/inferbench/README.md
 *   <division>/<submitter>/measurements/<system>/<benchmark>/<Scenario>/
 *       mlperf.conf user.conf README.md <system>_inferbench_<Scenario>.json
 *   <division>/<submitter>/results/<system>/<benchmark>/<Scenario>/{performance/run_1,accuracy}
 *   <division>/<submitter>/compliance/<system>/<benchmark>/<Scenario>/TEST0x/
 * Accuracy logs are truncated as the official truncate_accuracy_log.py does (benchmarks.md
 * §2.4): the SHA-256 of the whole log is appended to accuracy.txt as "hash=<hex>", and a log
 * over 10,240 bytes keeps its first and last 4,096 bytes around "\n\n...\n\n".
 * Runs whose run.json says synthetic model or data, --quick or otherwise not submittable are
 * refused (exit 3) before anything is written.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "compliance/sha256.h"
#include "harness/sysinfo.h"
#include "inferbench/loadgen.h"
#include "inferbench/version.h"

#define CMD "package"
#define MAX_RUNS 256
#define VIEWABLE_SIZE 4096          /* truncate_accuracy_log.py VIEWABLE_SIZE */
#define MAX_ACCURACY_LOG_SIZE 10240 /* truncate_accuracy_log.py MAX_ACCURACY_LOG_SIZE */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inferbench package RESULTS_DIR --output-dir SUB [--division closed|open]\n"
            "                          [--submitter NAME] [--status S] [--system-type T]\n\n"
            "Lay out benchmark runs as an MLPerf submission tree:\n"
            "  SUB/<division>/<submitter>/{systems,code,measurements,results,compliance}\n"
            "RESULTS_DIR holds <system>/<benchmark>/<Scenario>/ folders as `inferbench run\n"
            "--benchmark` writes them (and TEST0x folders from `inferbench audit`). Accuracy\n"
            "logs are truncated with the SHA-256 line in accuracy.txt, as the official\n"
            "truncate_accuracy_log.py does. Runs on synthetic data, random weights or with\n"
            "--quick are refused.\n\n"
            "  --division D     closed (default) or open\n"
            "  --submitter S    submitter folder and system JSON field (default inferbench)\n"
            "  --status S       available (default), preview, rdi\n"
            "  --system-type T  datacenter (default), edge, datacenter,edge\n\n"
            "Exit status: 0 packaged, 3 a run was refused, 2 usage, 1 runtime error.\n"
            "Then check it: inferbench check SUB\n");
}

static void pathf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

typedef struct run_dir {
    char system[128], bench[128], scenario[64];
    char dir[4096];
} run_dir;

typedef struct pkg {
    const char *results, *out, *division, *submitter, *status, *system_type;
    run_dir runs[MAX_RUNS];
    int nruns;
} pkg;

/* Visible sub-folders of dir, sorted (so the output does not depend on readdir order). */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dirs(const char *dir, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return IB_ENOTFOUND;
    struct dirent *e;
    int cap = 0;
    char path[4096];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        pathf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!ib_path_is_dir(path))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            char **g = realloc(*out, (size_t)cap * sizeof *g);
            if (!g)
                break;
            *out = g;
        }
        if (!((*out)[*n] = strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(*out, (size_t)*n, sizeof **out, cmp_names);
    return IB_OK;
}

static void free_list(char **l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

static bool is_scenario(const char *s)
{
    enum ib_lg_scenario sc;
    return ib_lg_scenario_parse(s, &sc) == IB_OK;
}

/* Find RESULTS_DIR/<system>/<benchmark>/<Scenario>. */
static int collect(pkg *p)
{
    char **sys = NULL, **ben = NULL, **sc = NULL;
    int ns = 0, nb = 0, nc = 0;
    char d1[4096], d2[4096];
    if (list_dirs(p->results, &sys, &ns)) {
        ib_cli_error(CMD, "%s: cannot read the folder", p->results);
        return IB_EXIT_USAGE;
    }
    for (int i = 0; i < ns; i++) {
        pathf(d1, sizeof d1, "%s/%s", p->results, sys[i]);
        list_dirs(d1, &ben, &nb);
        for (int j = 0; j < nb; j++) {
            pathf(d2, sizeof d2, "%s/%s", d1, ben[j]);
            list_dirs(d2, &sc, &nc);
            for (int k = 0; k < nc; k++) {
                if (!is_scenario(sc[k]) || p->nruns == MAX_RUNS)
                    continue;
                run_dir *r = &p->runs[p->nruns++];
                pathf(r->system, sizeof r->system, "%s", sys[i]);
                pathf(r->bench, sizeof r->bench, "%s", ben[j]);
                pathf(r->scenario, sizeof r->scenario, "%s", sc[k]);
                pathf(r->dir, sizeof r->dir, "%s/%s", d2, sc[k]);
            }
            free_list(sc, nc);
        }
        free_list(ben, nb);
    }
    free_list(sys, ns);
    if (!p->nruns) {
        ib_cli_error(CMD, "%s: no <system>/<benchmark>/<Scenario> folder (run `inferbench run "
                          "--benchmark ID --output-dir %s` first)", p->results, p->results);
        return IB_EXIT_USAGE;
    }
    return IB_EXIT_OK;
}

static char *slurp(const char *path, size_t *len)
{
    char *t = NULL;
    size_t l = 0;
    if (ib_file_read_all(path, 0, &t, &l, NULL) != IB_OK)
        return NULL;
    if (len)
        *len = l;
    return t;
}

/* The JSON string value after "key": in text, into out ("" when absent). run.json is
 * inferbench's own output (src/harness/report.c); only simple string values are read. */
static void json_str(const char *text, const char *key, char *out, size_t n)
{
    char pat[128];
    out[0] = '\0';
    pathf(pat, sizeof pat, "\"%s\": \"", key);
    const char *s = strstr(text, pat);
    if (!s)
        return;
    s += strlen(pat);
    size_t i = 0;
    while (*s && *s != '"' && i + 1 < n)
        out[i++] = *s++;
    out[i] = '\0';
}

/* Why a run may not be submitted (nothing appended = it may): run.json's submittable flag and
 * labels, and the files the layout needs. */
static void refusal(const run_dir *r, ib_strbuf *why)
{
    char path[4096];
    pathf(path, sizeof path, "%s/run.json", r->dir);
    char *t = slurp(path, NULL);
    if (!t) {
        ib_strbuf_printf(why, "%s: no readable run.json, so nothing tells how the run was made "
                              "(re-run it with `inferbench run --benchmark`)\n", path);
        return;
    }
    bool synth = strstr(t, "\"synthetic\": true") != NULL;
    bool quick = strstr(t, "--quick") != NULL;
    bool unsub = strstr(t, "\"submittable\": false") != NULL;
    if (synth || quick || unsub) {
        ib_strbuf_printf(why, "%s: not submittable:", path);
        /* the labels say why, in the run's own words */
        const char *l = strstr(t, "\"labels\": [");
        const char *end = l ? strchr(l, ']') : NULL;
        int any = 0;
        for (const char *q = l ? strchr(l, '[') + 1 : NULL; q && end && q < end;) {
            const char *a = strchr(q, '"');
            if (!a || a >= end)
                break;
            const char *b = strchr(a + 1, '"');
            if (!b || b > end)
                break;
            ib_strbuf_printf(why, "%s %.*s", any++ ? ";" : "", (int)(b - a - 1), a + 1);
            q = b + 1;
        }
        if (!any)
            ib_strbuf_printf(why, "%s%s%s", synth ? " synthetic model or data" : "",
                             quick ? " --quick" : "", unsub ? " submittable=false" : "");
        ib_strbuf_puts(why, "\n  fix: run it on the real dataset (--data DIR) with the real "
                            "model (--model FILE.onnx), without --quick\n");
    }
    ib_free(t);
    /* the files the layout needs (benchmarks.md §2.3), so nothing half-written is left */
    static const char *const need[] = {
        "performance/run_1/mlperf_log_summary.txt", "performance/run_1/mlperf_log_detail.txt",
        "accuracy/mlperf_log_summary.txt",          "accuracy/mlperf_log_detail.txt",
        "accuracy/accuracy.txt",                    "accuracy/mlperf_log_accuracy.json",
    };
    char sub[4096];
    pathf(sub, sizeof sub, "%s/performance", r->dir);
    bool perf = ib_path_is_dir(sub);
    pathf(sub, sizeof sub, "%s/accuracy", r->dir);
    bool acc = ib_path_is_dir(sub);
    if (!perf && !acc)
        ib_strbuf_printf(why, "%s: neither performance/ nor accuracy/ is there\n", r->dir);
    for (size_t i = 0; i < IB_ARRAY_LEN(need); i++) {
        if ((i < 2 && !perf) || (i >= 2 && !acc))
            continue;
        pathf(sub, sizeof sub, "%s/%s", r->dir, need[i]);
        if (!ib_path_exists(sub))
            ib_strbuf_printf(why, "%s: missing; fix: rerun that mode (the run is incomplete)\n",
                             sub);
    }
}

static int mk(const char *dir)
{
    ib_err err;
    if (ib_mkdirs(dir, &err) != IB_OK) {
        ib_cli_error(CMD, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    return IB_EXIT_OK;
}

static int put(const char *path, const char *text, size_t len)
{
    ib_err err;
    if (ib_file_write_all(path, text, len, &err) != IB_OK) {
        ib_cli_error(CMD, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    return IB_EXIT_OK;
}

static int copy(const char *from, const char *to)
{
    size_t len = 0;
    char *t = slurp(from, &len);
    if (!t) {
        ib_cli_error(CMD, "%s: cannot read it (the run's folder is incomplete)", from);
        return IB_EXIT_RUNTIME;
    }
    int rc = put(to, t, len);
    ib_free(t);
    return rc;
}

/* truncate_accuracy_log.py: hash of the whole log into accuracy.txt, then keep the head and the
 * tail of a log over the size limit. */
static int truncate_into(const char *log_from, const char *log_to, const char *acc_from,
                         const char *acc_to)
{
    size_t len = 0, alen = 0;
    char *log = slurp(log_from, &len);
    if (!log) {
        ib_cli_error(CMD, "%s: cannot read it", log_from);
        return IB_EXIT_RUNTIME;
    }
    char hex[65];
    ib_sha256_hex(log, len, hex);
    int rc;
    if (len > MAX_ACCURACY_LOG_SIZE) {
        ib_strbuf sb;
        ib_strbuf_init(&sb);
        ib_strbuf_append(&sb, log, VIEWABLE_SIZE);
        ib_strbuf_puts(&sb, "\n\n...\n\n");
        ib_strbuf_append(&sb, log + len - VIEWABLE_SIZE, VIEWABLE_SIZE);
        rc = put(log_to, ib_strbuf_cstr(&sb), sb.len);
        ib_strbuf_deinit(&sb);
    } else {
        rc = put(log_to, log, len);
    }
    ib_free(log);
    if (rc)
        return rc;
    char *acc = acc_from ? slurp(acc_from, &alen) : NULL;
    if (acc_from && !acc) {
        ib_cli_error(CMD, "%s: cannot read it", acc_from);
        return IB_EXIT_RUNTIME;
    }
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    /* an earlier hash= line (the harness writes one) is replaced, not repeated */
    for (size_t i = 0; acc && i < alen;) {
        const char *nl = memchr(acc + i, '\n', alen - i);
        size_t n = nl ? (size_t)(nl - (acc + i)) : alen - i;
        if (!(n >= 5 && !memcmp(acc + i, "hash=", 5))) {
            ib_strbuf_append(&sb, acc + i, n);
            ib_strbuf_putc(&sb, '\n');
        }
        i += n + 1;
    }
    ib_strbuf_printf(&sb, "hash=%s\n", hex);
    rc = put(acc_to, ib_strbuf_cstr(&sb), sb.len);
    ib_strbuf_deinit(&sb);
    ib_free(acc);
    return rc;
}

static int copy_logs(const char *from_dir, const char *to_dir, bool detail_summary)
{
    static const char *const names[2] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt"};
    char a[4096], b[4096];
    int rc = mk(to_dir);
    for (int i = 0; !rc && detail_summary && i < 2; i++) {
        pathf(a, sizeof a, "%s/%s", from_dir, names[i]);
        pathf(b, sizeof b, "%s/%s", to_dir, names[i]);
        rc = copy(a, b);
    }
    return rc;
}

/* measurements/<system>/<benchmark>/<Scenario>/ (benchmarks.md §2.3). */
static int write_measurements(const pkg *p, const run_dir *r, const char *runjson)
{
    char d[4096], f[4096], rules_name[32], model[128], precision[32], mpath[1024];
    json_str(runjson, "rules", rules_name, sizeof rules_name);
    json_str(runjson, "model_name", model, sizeof model);
    json_str(runjson, "precision", precision, sizeof precision);
    json_str(runjson, "path", mpath, sizeof mpath); /* the first "path" is the model's */
    pathf(d, sizeof d, "%s/%s/%s/measurements/%s/%s/%s", p->out, p->division, p->submitter,
          r->system, r->bench, r->scenario);
    int rc = mk(d);
    if (rc)
        return rc;
    enum ib_lg_rules rules = IB_LG_RULES_CURRENT;
    if (ib_lg_rules_parse(rules_name, &rules) != IB_OK)
        rules = IB_LG_RULES_CURRENT;
    size_t len = 0;
    const char *conf = ib_lg_mlperf_conf_embedded(rules, &len);
    pathf(f, sizeof f, "%s/mlperf.conf", d);
    if ((rc = put(f, conf, len)))
        return rc;
    /* user.conf: the run's own user.conf if it kept one, else the settings inferbench changed
     * (run.json settings_changed "key=value (why)") in user.conf syntax */
    char src[4096];
    pathf(src, sizeof src, "%s/user.conf", r->dir);
    pathf(f, sizeof f, "%s/user.conf", d);
    if (ib_path_exists(src)) {
        rc = copy(src, f);
    } else {
        ib_strbuf sb;
        ib_strbuf_init(&sb);
        ib_strbuf_printf(&sb, "# user.conf of %s %s: the settings the run changed (run.json "
                              "settings_changed), written by inferbench package\n",
                         r->bench, r->scenario);
        const char *s = strstr(runjson, "\"settings_changed\": [");
        const char *end = s ? strchr(s, ']') : NULL;
        for (const char *q = s ? s + 21 : NULL; q && end && q < end;) {
            const char *a = strchr(q, '"');
            if (!a || a >= end)
                break;
            const char *b = strchr(a + 1, '"');
            if (!b || b > end)
                break;
            const char *eq = memchr(a + 1, '=', (size_t)(b - a - 1));
            const char *sp = eq ? memchr(eq, ' ', (size_t)(b - eq)) : NULL;
            if (eq && sp)
                ib_strbuf_printf(&sb, "%s.%s.%.*s = %.*s\n", model[0] ? model : r->bench,
                                 r->scenario, (int)(eq - a - 1), a + 1, (int)(sp - eq - 1),
                                 eq + 1);
            q = b + 1;
        }
        rc = put(f, ib_strbuf_cstr(&sb), sb.len);
        ib_strbuf_deinit(&sb);
    }
    if (rc)
        return rc;
    char text[2048];
    pathf(text, sizeof text,
          "# %s %s on %s\n\nMeasured with inferbench (`inferbench run --benchmark %s "
          "--scenario %s`); run.json of the run records the model, data, threads and "
          "batching. Packaged by `inferbench package`.\n",
          r->bench, r->scenario, r->system, r->bench, r->scenario);
    pathf(f, sizeof f, "%s/README.md", d);
    if ((rc = put(f, text, strlen(text))))
        return rc;
    const char *base = strrchr(mpath, '/');
    pathf(text, sizeof text,
          "{\n  \"input_data_types\": \"%s\",\n  \"retraining\": \"No\",\n"
          "  \"starting_weights_filename\": \"%s\",\n  \"weight_data_types\": \"%s\",\n"
          "  \"weight_transformations\": \"%s\"\n}\n",
          precision[0] ? precision : "fp32", base ? base + 1 : mpath,
          precision[0] ? precision : "fp32",
          precision[0] && strcmp(precision, "fp32") ? "quantized by inferbench" : "none");
    pathf(f, sizeof f, "%s/%s_inferbench_%s.json", d, r->system, r->scenario);
    return put(f, text, strlen(text));
}

static int write_run(const pkg *p, const run_dir *r)
{
    char a[4096], b[4096], c[4096], e[4096], res[4096];
    pathf(a, sizeof a, "%s/run.json", r->dir);
    char *runjson = slurp(a, NULL);
    if (!runjson) {
        ib_cli_error(CMD, "%s: cannot read it", a);
        return IB_EXIT_RUNTIME;
    }
    int rc = write_measurements(p, r, runjson);
    ib_free(runjson);
    if (rc)
        return rc;
    pathf(res, sizeof res, "%s/%s/%s/results/%s/%s/%s", p->out, p->division, p->submitter,
          r->system, r->bench, r->scenario);
    /* performance/run_1: summary and detail (the accuracy JSON is optional and can be big) */
    pathf(a, sizeof a, "%s/performance/run_1", r->dir);
    if (ib_path_is_dir(a)) {
        pathf(b, sizeof b, "%s/performance/run_1", res);
        if ((rc = copy_logs(a, b, true)))
            return rc;
    }
    pathf(a, sizeof a, "%s/accuracy", r->dir);
    if (ib_path_is_dir(a)) {
        pathf(b, sizeof b, "%s/accuracy", res);
        if ((rc = copy_logs(a, b, true)))
            return rc;
        pathf(c, sizeof c, "%s/mlperf_log_accuracy.json", a);
        pathf(e, sizeof e, "%s/mlperf_log_accuracy.json", b);
        char acc_from[4096], acc_to[4096];
        pathf(acc_from, sizeof acc_from, "%s/accuracy.txt", a);
        pathf(acc_to, sizeof acc_to, "%s/accuracy.txt", b);
        if ((rc = truncate_into(c, e, acc_from, acc_to)))
            return rc;
    }
    /* compliance: the TEST0x folders of `inferbench audit` */
    char **tests = NULL;
    int nt = 0;
    list_dirs(r->dir, &tests, &nt);
    for (int i = 0; !rc && i < nt; i++) {
        if (strncmp(tests[i], "TEST", 4))
            continue;
        char t[4096], o[4096];
        pathf(t, sizeof t, "%s/%s", r->dir, tests[i]);
        pathf(o, sizeof o, "%s/%s/%s/compliance/%s/%s/%s/%s", p->out, p->division, p->submitter,
              r->system, r->bench, r->scenario, tests[i]);
        if ((rc = mk(o)))
            break;
        static const char *const verify[2] = {"verify_performance.txt", "verify_accuracy.txt"};
        for (int k = 0; !rc && k < 2; k++) {
            pathf(a, sizeof a, "%s/%s", t, verify[k]);
            pathf(b, sizeof b, "%s/%s", o, verify[k]);
            if (ib_path_exists(a))
                rc = copy(a, b);
        }
        pathf(a, sizeof a, "%s/performance/run_1", t);
        pathf(b, sizeof b, "%s/performance/run_1", o);
        if (!rc && ib_path_is_dir(a))
            rc = copy_logs(a, b, true);
        pathf(a, sizeof a, "%s/accuracy", t);
        pathf(b, sizeof b, "%s/accuracy", o);
        if (!rc && ib_path_is_dir(a)) {
            char acc_from[4096], acc_to[4096];
            pathf(c, sizeof c, "%s/mlperf_log_accuracy.json", a);
            pathf(e, sizeof e, "%s/mlperf_log_accuracy.json", b);
            pathf(acc_from, sizeof acc_from, "%s/accuracy.txt", a);
            pathf(acc_to, sizeof acc_to, "%s/accuracy.txt", b);
            rc = mk(b);
            if (!rc)
                rc = truncate_into(c, e, ib_path_exists(acc_from) ? acc_from : NULL, acc_to);
        }
    }
    free_list(tests, nt);
    return rc;
}

static int write_shared(const pkg *p)
{
    char d[4096], f[4096];
    int rc = IB_EXIT_OK;
    for (int i = 0; !rc && i < p->nruns; i++) {
        const run_dir *r = &p->runs[i];
        pathf(d, sizeof d, "%s/%s/%s/systems", p->out, p->division, p->submitter);
        pathf(f, sizeof f, "%s/%s.json", d, r->system);
        if ((rc = mk(d)))
            break;
        if (!ib_path_exists(f)) {
            ib_sysinfo_opts so;
            memset(&so, 0, sizeof so);
            so.system_name = r->system;
            so.submitter = p->submitter;
            so.division = p->division;
            so.status = p->status;
            so.system_type = p->system_type;
            ib_strbuf js, missing;
            ib_strbuf_init(&js);
            ib_strbuf_init(&missing);
            ib_err err;
            ib_err_clear(&err);
            int r2 = ib_sysinfo_json(&so, &js, &missing, &err);
            if (r2 == IB_OK)
                rc = put(f, ib_strbuf_cstr(&js), js.len);
            else {
                ib_cli_error(CMD, "system description: %s", err.msg[0] ? err.msg
                                                                       : ib_strerror(r2));
                rc = IB_EXIT_RUNTIME;
            }
            if (!rc && missing.len)
                fprintf(stderr, "inferbench package: %s: fill in by hand: %s\n", f,
                        ib_strbuf_cstr(&missing));
            ib_strbuf_deinit(&js);
            ib_strbuf_deinit(&missing);
        }
        pathf(d, sizeof d, "%s/%s/%s/code/%s/inferbench", p->out, p->division, p->submitter,
              r->bench);
        pathf(f, sizeof f, "%s/README.md", d);
        if (!rc && !(rc = mk(d)) && !ib_path_exists(f)) {
            char text[512];
            pathf(text, sizeof text,
                  "# %s with inferbench\n\nThe implementation is inferbench %s (git %s): "
                  "`inferbench run --benchmark %s`.\n",
                  r->bench, ib_version_string(), ib_version_git(), r->bench);
            rc = put(f, text, strlen(text));
        }
    }
    return rc;
}

int ib_cmd_package(int argc, char **argv)
{
    pkg *p = calloc(1, sizeof *p);
    if (!p) {
        ib_cli_error(CMD, "out of memory");
        return IB_EXIT_RUNTIME;
    }
    p->division = "closed";
    p->submitter = "inferbench";
    p->status = "available";
    p->system_type = "datacenter";
    int rc = IB_EXIT_OK;
    for (int i = 1; i < argc && !rc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            usage(stdout);
            free(p);
            return IB_EXIT_OK;
        }
        if (!strcmp(s, "--output-dir"))
            dst = &p->out;
        else if (!strcmp(s, "--division"))
            dst = &p->division;
        else if (!strcmp(s, "--submitter"))
            dst = &p->submitter;
        else if (!strcmp(s, "--status"))
            dst = &p->status;
        else if (!strcmp(s, "--system-type"))
            dst = &p->system_type;
        else if (s[0] == '-')
            rc = ib_cli_usage_error(CMD, "unknown option '%s'", s);
        else if (p->results)
            rc = ib_cli_usage_error(CMD, "unexpected argument '%s'", s);
        else
            p->results = s;
        if (dst) {
            if (i + 1 >= argc)
                rc = ib_cli_usage_error(CMD, "option '%s' needs a value", s);
            else
                *dst = argv[++i];
        }
    }
    if (!rc && !p->results)
        rc = ib_cli_usage_error(CMD, "RESULTS_DIR is required");
    if (!rc && !p->out)
        rc = ib_cli_usage_error(CMD, "--output-dir is required");
    if (!rc && strcmp(p->division, "closed") && strcmp(p->division, "open"))
        rc = ib_cli_usage_error(CMD, "--division: '%s' is not closed or open", p->division);
    if (!rc && (!p->submitter[0] || strchr(p->submitter, '/') || p->submitter[0] == '.'))
        rc = ib_cli_usage_error(CMD, "--submitter: '%s' is not a folder name", p->submitter);
    if (!rc)
        rc = collect(p);
    if (rc) {
        free(p);
        return rc;
    }
    /* refuse before writing anything */
    ib_strbuf why;
    ib_strbuf_init(&why);
    for (int i = 0; i < p->nruns; i++)
        refusal(&p->runs[i], &why);
    if (why.len) {
        fprintf(stderr, "inferbench package: refused, nothing was written:\n%s",
                ib_strbuf_cstr(&why));
        ib_strbuf_deinit(&why);
        free(p);
        return IB_EXIT_INVALID;
    }
    ib_strbuf_deinit(&why);
    rc = write_shared(p);
    for (int i = 0; !rc && i < p->nruns; i++)
        rc = write_run(p, &p->runs[i]);
    if (!rc) {
        printf("Packaged %d run%s into %s/%s/%s\n", p->nruns, p->nruns == 1 ? "" : "s", p->out,
               p->division, p->submitter);
        for (int i = 0; i < p->nruns; i++)
            printf("  %s/%s/%s\n", p->runs[i].system, p->runs[i].bench, p->runs[i].scenario);
        printf("Check it: inferbench check %s\n", p->out);
    }
    free(p);
    return rc;
}
