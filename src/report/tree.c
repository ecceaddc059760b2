/*
 * tree.c - find the performance runs of a results tree and load each one with its
 * accuracy, power log and system description.
 *
 * Recognised layouts (users.md §4.3, benchmarks.md §2.3):
 *   official   <division>/<submitter>/results/<system>/<benchmark>/<Scenario>/performance/run_1
 *              with <division>/<submitter>/systems/<system>.json
 *   inferbench <out>/<system>/<benchmark>/<Scenario>/performance/run_N, with the system
 *              description in <out>/systems/<system>.json or <out>/<system>/system.json
 * The walk starts at any level, visits folders in sorted order (stable reports) and
 * skips compliance runs (TEST0x), ranging runs and hidden folders (a run in progress is
 * staged in a hidden .partial-* folder). Of a scenario's performance/run_N folders the
 * newest finished one is the result; an unfinished one (no summary or detail log, a log
 * cut short, result.json saying INTERRUPTED: a run killed hard, or written by another tool
 * that stopped) is skipped with a warning, or refused when the report is strict.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/common.h"
#include "base/fileio.h"
#include "report/accuracy.h"
#include "report/power.h"
#include "report/report_impl.h"
#include "report/rutil.h"

#define TREE_MAX_DEPTH      12
#define TREE_MAX_COMPONENTS 64

/* Split a path into components in place (no strtok: reentrant). Returns the count. */
static size_t split_path(char *buf, const char **comp, size_t max)
{
    size_t n = 0;
    char *p = buf;
    while (*p && n < max) {
        while (*p == '/')
            *p++ = '\0';
        if (!*p) break;
        comp[n++] = p;
        while (*p && *p != '/')
            p++;
    }
    return n;
}

/* A string field of the description, "" when absent or not a string. */
static const char *json_str_field(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* accelerators_per_node etc. are integers in v1.1 JSONs, strings in some others. */
static int json_int_field(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v)) return (int)json_integer_value(v);
    if (json_is_real(v)) return (int)json_real_value(v);
    if (json_is_string(v)) return atoi(json_string_value(v));
    return 0;
}

/* Load a system description; IB_ENOTFOUND when the file does not exist. */
static int load_sysdesc(const char *path, json_t **out, char **text, ib_err *err)
{
    *out = NULL;
    *text = NULL;
    if (!ib_path_exists(path)) return IB_ENOTFOUND;
    size_t len = 0;
    int rc = ib_file_read_all(path, (size_t)16 << 20, text, &len, err);
    if (rc) return rc;
    json_error_t je;
    json_t *root = json_loadb(*text, len, 0, &je);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        ib_free(*text);
        *text = NULL;
        return ib_err_set(err, IB_EFORMAT, "%s:%d: invalid system description JSON: %s", path,
                          je.line, root ? "not an object" : je.text);
    }
    *out = root;
    return IB_OK;
}

/*
 * The fields the report shows and the chip count (accelerators x nodes; the host CPUs
 * for CPU-only systems, whose accelerators_per_node is 0).
 */
static void fill_system_from_json(ib_report *rep, ib_report_system *s, const json_t *j)
{
    ib_arena *a = &rep->arena;
    const char *name = json_str_field(j, "system_name");
    if (name[0]) s->name = ib_arena_strdup(a, name);
    if (!s->submitter[0]) s->submitter = ib_arena_strdup(a, json_str_field(j, "submitter"));
    if (!s->division[0]) s->division = ib_arena_strdup(a, json_str_field(j, "division"));
    s->status = ib_arena_strdup(a, json_str_field(j, "status"));
    s->accelerator = ib_arena_strdup(a, json_str_field(j, "accelerator_model_name"));
    s->host_cpu = ib_arena_strdup(a, json_str_field(j, "host_processor_model_name"));
    s->accelerators_per_node = json_int_field(j, "accelerators_per_node");
    s->nodes = json_int_field(j, "number_of_nodes");
    if (s->nodes <= 0) s->nodes = 1;
    if (s->accelerators_per_node > 0) {
        s->chips = s->accelerators_per_node * s->nodes;
        s->chip_kind = s->accelerator;
    } else {
        /* CPU-only system: the chips are the host processors */
        s->chips = json_int_field(j, "host_processors_per_node") * s->nodes;
        s->chip_kind = s->host_cpu;
    }
}

/* Find or create the system; loads its description on creation. */
static int get_system(ib_report *rep, const char *id, const char *submitter, const char *division,
                      const char *const *desc_paths, size_t ndesc, bool official, size_t *idx,
                      ib_err *err)
{
    size_t i = ib_rpt_find_system(rep, id);
    if (i != IB_RPT_NONE) {
        *idx = i;
        return IB_OK;
    }
    ib_arena *a = &rep->arena;
    ib_report_system s;
    memset(&s, 0, sizeof s);
    s.id = ib_arena_strdup(a, id);
    s.name = s.id;
    s.submitter = ib_arena_strdup(a, submitter ? submitter : "");
    s.division = ib_arena_strdup(a, division ? division : "");
    s.status = s.accelerator = s.host_cpu = s.chip_kind = "";
    s.result_id = s.retrieved = s.source = s.currency = s.price_date = s.price_source = "";
    s.desc_json = "";
    s.official_layout = official;
    s.nodes = 1;
    json_t *desc = NULL;
    for (size_t k = 0; k < ndesc && !desc; k++) {
        char *text = NULL;
        int rc = load_sysdesc(desc_paths[k], &desc, &text, err);
        if (rc == IB_ENOTFOUND) continue;
        if (rc) return rc;
        ib_free(text);
        /* keep a compact re-serialisation: summary.json embeds it verbatim */
        char *compact = desc ? json_dumps(desc, JSON_COMPACT) : NULL;
        s.desc_json = compact ? ib_arena_strdup(a, compact) : "";
        free(compact);
    }
    if (!s.id || !s.submitter || !s.division || !s.desc_json) {
        json_decref(desc);
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    if (desc) fill_system_from_json(rep, &s, desc);
    if (IB_VEC_PUSH(&rep->systems, s) || IB_VEC_PUSH(&rep->sysdesc, desc)) {
        json_decref(desc);
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    *idx = rep->systems.len - 1;
    return IB_OK;
}

/* result.json of one of our runs: its labels (synthetic model or data, --quick, ...), one per
 * line, and that it is an inferbench run, not an MLPerf submission's log. */
static int load_labels(ib_report *rep, const char *run_dir, ib_report_result *r, ib_err *err)
{
    r->labels = "";
    char path[4200];
    snprintf(path, sizeof path, "%s/result.json", run_dir);
    if (!ib_path_exists(path)) return IB_OK;
    json_error_t je;
    json_t *j = json_load_file(path, JSON_DECODE_INT_AS_REAL, &je);
    if (!j) return IB_OK; /* not ours to judge: the logs are what the report reads */
    const char *fmt = json_str_field(j, "format");
    r->own_run = ib_rpt_starts_with(fmt, "inferbench-result/");
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    json_t *labels = json_object_get(j, "labels"), *v;
    size_t i;
    json_array_foreach(labels, i, v)
    {
        if (json_is_string(v))
            ib_strbuf_printf(&sb, "%s%s", sb.len ? "\n" : "", json_string_value(v));
    }
    json_decref(j);
    r->labels = ib_arena_strdup(&rep->arena, ib_strbuf_cstr(&sb));
    ib_strbuf_deinit(&sb);
    return r->labels ? IB_OK : ib_err_set(err, IB_ENOMEM, "out of memory");
}

/* Why a run folder is not a finished run ("" when it is): its logs are missing or cut
 * short, or its result.json says it was interrupted. */
static void unfinished_reason(const char *run_dir, char *why, size_t n)
{
    char p[4300];
    why[0] = '\0';
    snprintf(p, sizeof p, "%s/mlperf_log_summary.txt", run_dir);
    char *text = NULL;
    size_t len = 0;
    if (ib_file_read_all(p, (size_t)16 << 20, &text, &len, NULL) != IB_OK) {
        snprintf(p, sizeof p, "%s/mlperf_log_detail.txt", run_dir);
        if (!ib_path_exists(p))
            snprintf(why, n, "no mlperf_log_summary.txt or mlperf_log_detail.txt");
        return; /* a detail log alone is read as it is (the parser judges it) */
    }
    /* LoadGen's summary ends with the errors line: without it the writer was stopped */
    if (!strstr(text, "encountered during test."))
        snprintf(why, n, "mlperf_log_summary.txt is cut short (no footer)");
    ib_free(text);
    if (why[0]) return;
    snprintf(p, sizeof p, "%s/result.json", run_dir);
    json_error_t je;
    json_t *j = ib_path_exists(p) ? json_load_file(p, JSON_DECODE_INT_AS_REAL, &je) : NULL;
    if (j && !strcmp(json_str_field(j, "result"), "INTERRUPTED"))
        snprintf(why, n, "result.json says the run was INTERRUPTED");
    json_decref(j);
}

static int warn(ib_report *rep, ib_err *err, const char *fmt, ...) IB_PRINTF(3, 4);

static int warn(ib_report *rep, ib_err *err, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rep->opts.strict)
        return ib_err_set(err, IB_EFORMAT, "%s (--strict: remove it or run again)", msg);
    char skipped[1100];
    snprintf(skipped, sizeof skipped, "%s; skipped", msg);
    const char *s = ib_arena_strdup(&rep->arena, skipped);
    if (!s || IB_VEC_PUSH(&rep->warnings, s)) return ib_err_set(err, IB_ENOMEM, "out of memory");
    return IB_OK;
}

/* Add one run folder (…/<system>/<benchmark>/<Scenario>/performance/run_N). */
static int add_run(ib_report *rep, const char *run_dir, size_t *added, ib_err *err)
{
    char buf[4096];
    const char *c[TREE_MAX_COMPONENTS];
    ib_rpt_strlcpy(buf, sizeof buf, run_dir, (size_t)-1);
    bool absolute = run_dir[0] == '/';
    size_t n = split_path(buf, c, TREE_MAX_COMPONENTS);
    if (n < 5 || strncmp(c[n - 1], "run_", 4) || strcmp(c[n - 2], "performance")) return IB_OK;
    int scenario = ib_report_scenario_parse(c[n - 3]);
    if (scenario == IB_REPORT_SCENARIO_UNKNOWN)
        return IB_OK; /* e.g. compliance/<…>/<Scenario>/TEST01/performance/run_1 */
    const char *bench = c[n - 4], *sys = c[n - 5];
    bool official = n >= 8 && !strcmp(c[n - 6], "results");
    /* prefix = the folder above <system> (results/ or <out>/) */
    char prefix[4096] = "";
    size_t plen = 0;
    if (absolute) prefix[plen++] = '/';
    for (size_t k = 0; k + 5 < n; k++)
        plen += (size_t)snprintf(prefix + plen, sizeof prefix - plen, "%s%s", k ? "/" : "", c[k]);
    if (plen == 0) snprintf(prefix, sizeof prefix, ".");
    char p1[4200], p2[4200], p3[4200];
    const char *desc[3];
    size_t ndesc;
    if (official) {
        /* <submitter>/systems/<system>.json, next to results/ */
        snprintf(p1, sizeof p1, "%s/../systems/%s.json", prefix, sys);
        desc[0] = p1;
        ndesc = 1;
    } else {
        snprintf(p1, sizeof p1, "%s/systems/%s.json", prefix, sys);
        snprintf(p2, sizeof p2, "%s/%s/system.json", prefix, sys);
        snprintf(p3, sizeof p3, "%s/%s/%s.json", prefix, sys, sys);
        desc[0] = p1, desc[1] = p2, desc[2] = p3;
        ndesc = 3;
    }
    size_t si = 0;
    int rc = get_system(rep, sys, official ? c[n - 7] : NULL, official ? c[n - 8] : NULL, desc,
                        ndesc, official, &si, err);
    if (rc) return rc;
    const ib_report_result *dup = ib_rpt_find_result(rep, si, bench, scenario);
    if (dup)
        return ib_err_set(err, IB_EINVAL,
                          "%s: duplicate result for %s/%s/%s (also in %s); give "
                          "each results tree once",
                          run_dir, sys, bench, ib_report_scenario_name(scenario), dup->run_dir);
    ib_report_result r;
    memset(&r, 0, sizeof r);
    r.system = si;
    r.benchmark = ib_arena_strdup(&rep->arena, bench);
    r.scenario = scenario;
    r.run_dir = ib_arena_strdup(&rep->arena, run_dir);
    r.accuracy_metric = "";
    r.accuracy = r.relative_performance = r.relative_perf_per_cost = IB_RPT_NAN;
    r.cost_per_million = r.avg_power_w = r.perf_per_watt = r.energy_mj_per_query = IB_RPT_NAN;
    if (!r.benchmark || !r.run_dir) return ib_err_set(err, IB_ENOMEM, "out of memory");
    rc = ib_report_run_load(run_dir, bench, rep->opts.rules_version, &r.run, err);
    if (rc) return rc;
    if ((rc = load_labels(rep, run_dir, &r, err))) return rc;
    /* the scenario folder holds accuracy/ next to performance/ */
    char scen_dir[4200];
    snprintf(scen_dir, sizeof scen_dir, "%s/../..", run_dir);
    ib_rpt_accuracy acc;
    ib_err aerr;
    if (ib_rpt_accuracy_load(scen_dir, bench, &acc, &aerr) == IB_OK) {
        r.accuracy_metric = acc.metric;
        r.accuracy = acc.value;
    }
    /* MLPerf power: performance/run_1/spl.txt within the power_begin/power_end window */
    char spl[4200];
    snprintf(spl, sizeof spl, "%s/spl.txt", run_dir);
    if (ib_path_exists(spl)) {
        char *text = NULL;
        size_t len = 0;
        rc = ib_file_read_all(spl, (size_t)256 << 20, &text, &len, err);
        if (rc) return rc;
        ib_rpt_power pw;
        rc = ib_rpt_power_parse(text, len, spl, r.run.power_begin, r.run.power_end, &pw, err);
        ib_free(text);
        if (rc) return rc;
        r.avg_power_w = pw.avg_w;
        if (r.run.scenario == IB_REPORT_SCENARIO_OFFLINE ||
            r.run.scenario == IB_REPORT_SCENARIO_SERVER)
            r.perf_per_watt = r.run.metric / pw.avg_w;
        else if (r.run.query_count > 0)
            r.energy_mj_per_query = pw.avg_w * pw.duration_s * 1000.0 / (double)r.run.query_count;
    }
    if (IB_VEC_PUSH(&rep->results, r)) return ib_err_set(err, IB_ENOMEM, "out of memory");
    rep->computed = false;
    (*added)++;
    return IB_OK;
}

/* qsort comparator: folders are walked in name order for stable reports. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Folders that never hold the performance runs of a result. */
static bool skip_dir(const char *name)
{
    return name[0] == '.' || !strcmp(name, "code") || !strcmp(name, "measurements") ||
           !strcmp(name, "compliance") || !strcmp(name, "ranging") || !strcmp(name, "power") ||
           !strcmp(name, "accuracy") || !strcmp(name, "systems") ||
           ib_rpt_starts_with(name, "TEST0");
}

/* A scenario's performance/ folder: the newest finished run_N is its result; unfinished
 * newer ones are skipped with a warning, older finished ones are earlier runs. */
static int performance_dir(ib_report *rep, const char *dir, size_t *added, ib_err *err)
{
    unsigned runs[256];
    size_t n = 0;
    DIR *d = opendir(dir);
    if (!d) return IB_OK;
    struct dirent *e;
    while ((e = readdir(d)) && n < IB_ARRAY_LEN(runs)) {
        char *end = NULL;
        if (strncmp(e->d_name, "run_", 4)) continue;
        unsigned long k = strtoul(e->d_name + 4, &end, 10);
        if (*end || k == 0 || k > 1000000) continue;
        runs[n++] = (unsigned)k;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) /* newest first */
        for (size_t j = i; j > 0 && runs[j] > runs[j - 1]; j--) {
            unsigned t = runs[j];
            runs[j] = runs[j - 1];
            runs[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char run[4200], why[160];
        snprintf(run, sizeof run, "%s/run_%u", dir, runs[i]);
        unfinished_reason(run, why, sizeof why);
        if (!why[0]) return add_run(rep, run, added, err);
        int rc = warn(rep, err, "%s: an unfinished run (%s)", run, why);
        if (rc) return rc;
    }
    return IB_OK;
}

/* Depth-limited recursive walk (symlink loops end at TREE_MAX_DEPTH). */
static int walk(ib_report *rep, const char *dir, int depth, size_t *added, ib_err *err)
{
    if (depth > TREE_MAX_DEPTH) return IB_OK;
    size_t dl = strlen(dir);
    if (dl >= 12 && !strcmp(dir + dl - 12, "/performance"))
        return performance_dir(rep, dir, added, err);
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    if (!strncmp(base, "run_", 4) && dl > 12 + strlen(base) &&
        !strncmp(dir + dl - strlen(base) - 12, "performance/", 12)) /* a run folder given */
        return add_run(rep, dir, added, err);
    DIR *d = opendir(dir);
    if (!d) return depth == 0 ? ib_err_set(err, IB_EIO, "%s: cannot open folder", dir) : IB_OK;
    IB_VEC(char *) names = {0};
    struct dirent *e;
    int rc = IB_OK;
    while ((e = readdir(d))) {
        if (skip_dir(e->d_name)) continue;
        char *s = ib_strdup(e->d_name);
        if (!s || IB_VEC_PUSH(&names, s)) {
            ib_free(s);
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
            break;
        }
    }
    closedir(d);
    if (names.len) qsort(names.data, names.len, sizeof(char *), cmp_str);
    for (size_t i = 0; i < names.len && rc == IB_OK; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, names.data[i]) >= (int)sizeof path) continue;
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        rc = walk(rep, path, depth + 1, added, err);
    }
    for (size_t i = 0; i < names.len; i++)
        ib_free(names.data[i]);
    IB_VEC_FREE(&names);
    return rc;
}

int ib_report_add_tree(ib_report *rep, const char *path, ib_err *err)
{
    IB_ASSERT(rep && path);
    if (!ib_path_is_dir(path))
        return ib_err_set(err, IB_ENOTFOUND, "%s: no such folder (expected a results tree)", path);
    /* strip trailing slashes so the component logic sees clean names */
    char clean[4096];
    ib_rpt_strlcpy(clean, sizeof clean, path, (size_t)-1);
    size_t n = strlen(clean);
    while (n > 1 && clean[n - 1] == '/')
        clean[--n] = '\0';
    const char *t = ib_arena_strdup(&rep->arena, clean);
    if (!t || IB_VEC_PUSH(&rep->trees, t)) return ib_err_set(err, IB_ENOMEM, "out of memory");
    size_t added = 0;
    int rc = walk(rep, clean, 0, &added, err);
    if (rc) return rc;
    if (!added)
        return ib_err_set(err, IB_ENOTFOUND,
                          "%s: no finished performance run found (looked for <system>/"
                          "<benchmark>/<Scenario>/performance/run_N folders)",
                          path);
    return IB_OK;
}
