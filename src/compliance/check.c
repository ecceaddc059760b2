/*
 * check.c - `inferbench check`'s walk over a results tree (benchmarks.md §2.3, §2.4;
 * check_results_dir of the r1.1 submission-checker.py): division -> submitter -> results/
 * <system>/<benchmark>/<scenario>, checking the system description, the model and its
 * required scenarios, then each scenario's measurements, accuracy, performance and
 * compliance folders (check_system.c, check_results.c, check_compliance.c).
 *
 * Unlike the official checker, which stops at the first exception of a result, every check
 * runs and every problem is reported, each with the file, a rule id and a fix.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "compliance/check_internal.h"

void ib_check_options_defaults(ib_check_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = IB_CHECK_V1_1;
    o->submitter = NULL;
    o->skip_compliance = false;
    o->recheck_compliance = true;
}

const char *ib_check_fmt(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, IB_CHECK_PATH_MAX, fmt, ap);
    va_end(ap);
    return buf;
}

const char *ib_check_rel(char *buf, const char *a, const char *b)
{
    if (!a || !*a)
        return ib_check_fmt(buf, "%s", b);
    return ib_check_fmt(buf, "%s/%s", a, b);
}

const char *ib_check_abs(const ib_check_ctx *ctx, const char *rel, char *buf)
{
    return ib_check_fmt(buf, "%s/%s", ctx->root, rel);
}

bool ib_check_is_dir(const ib_check_ctx *ctx, const char *rel)
{
    char p[IB_CHECK_PATH_MAX];
    return ib_path_is_dir(ib_check_abs(ctx, rel, p));
}

bool ib_check_is_file(const ib_check_ctx *ctx, const char *rel)
{
    char p[IB_CHECK_PATH_MAX];
    struct stat st;
    return stat(ib_check_abs(ctx, rel, p), &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ib_dirlist_read(const ib_check_ctx *ctx, const char *rel, ib_dirlist *out, ib_err *err)
{
    char p[IB_CHECK_PATH_MAX];
    memset(out, 0, sizeof *out);
    const char *path = rel ? ib_check_abs(ctx, rel, p) : ctx->root;
    DIR *d = opendir(path);
    if (!d)
        return ib_err_set(err, errno == ENOENT ? IB_ENOTFOUND : IB_EIO, "%s: cannot list: %s",
                          rel ? rel : path, strerror(errno));
    size_t cap = 0;
    struct dirent *e;
    int rc = IB_OK;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (out->n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **nn = ib_realloc(out->names, nc * sizeof *nn);
            if (!nn) {
                rc = IB_ENOMEM;
                break;
            }
            out->names = nn;
            cap = nc;
        }
        if (!(out->names[out->n] = ib_strdup(e->d_name))) {
            rc = IB_ENOMEM;
            break;
        }
        out->n++;
    }
    closedir(d);
    if (rc == IB_OK && out->n)
        qsort(out->names, out->n, sizeof *out->names, cmp_names);
    if (rc == IB_OK && !(out->is_dir = ib_calloc(out->n ? out->n : 1, sizeof *out->is_dir)))
        rc = IB_ENOMEM;
    for (size_t i = 0; rc == IB_OK && i < out->n; i++) {
        char q[IB_CHECK_PATH_MAX];
        ib_check_fmt(q, "%s/%s", path, out->names[i]);
        out->is_dir[i] = ib_path_is_dir(q); /* follows symlinks, like os.path.isdir */
    }
    if (rc) {
        ib_dirlist_free(out);
        return ib_err_set(err, rc, "out of memory");
    }
    return IB_OK;
}

void ib_dirlist_free(ib_dirlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        ib_free(l->names[i]);
    ib_free(l->names);
    ib_free(l->is_dir);
    memset(l, 0, sizeof *l);
}

bool ib_dirlist_has_file(const ib_dirlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->is_dir[i] && !strcmp(l->names[i], name))
            return true;
    return false;
}

static bool in_list(const char *const *list, const char *name)
{
    for (; list && *list; list++)
        if (!strcmp(*list, name))
            return true;
    return false;
}

size_t ib_check_file_list(ib_check_ctx *ctx, const char *rel_dir, const char *const *required,
                          const char *const *optional, enum ib_check_severity extra_sev,
                          const char *rule)
{
    /* files_diff always drops these before comparing */
    static const char *const ignored[] = {"mlperf_log_trace.json", "results.json", NULL};
    ib_dirlist l;
    ib_err err;
    char rel[IB_CHECK_PATH_MAX];
    if (ib_dirlist_read(ctx, rel_dir, &l, &err)) {
        IB_CHECK_ERR(ctx, rel_dir, rule, "make it a readable folder", "%s", err.msg);
        return 1;
    }
    size_t missing = 0;
    for (const char *const *q = required; q && *q; q++)
        if (!ib_dirlist_has_file(&l, *q)) {
            missing++;
            IB_CHECK_ERR(ctx, ib_check_rel(rel, rel_dir, *q), rule,
                         "copy the file from the run's output folder (the LoadGen or the "
                         "accuracy script writes it)",
                         "required file %s is missing", *q);
        }
    for (size_t i = 0; i < l.n; i++) {
        const char *n = l.names[i];
        if (in_list(required, n) || in_list(optional, n) || in_list(ignored, n))
            continue;
        ib_check_addf(ctx, extra_sev, ib_check_rel(rel, rel_dir, n), rule,
                      "remove it: only the listed files belong here",
                      "unexpected %s %s (this folder holds only %s)",
                      l.is_dir[i] ? "folder" : "file", n,
                      required && required[0] ? "the LoadGen/accuracy outputs" : "nothing else");
    }
    ib_dirlist_free(&l);
    return missing;
}

/* ---- the walk ------------------------------------------------------------------------- */

static void check_scenario(ib_check_ctx *ctx, ib_check_scn *s)
{
    s->errors_at_start = ib_check_report_error_count(ctx->rep);
    ib_check_measurements(ctx, s);
    ib_check_accuracy_dir(ctx, s);
    ib_check_performance_dir(ctx, s);
    if (s->closed && !ctx->opts.skip_compliance)
        ib_check_compliance_dir(ctx, s);
    else
        s->compliance_ok = !s->closed;
    bool valid = ib_check_report_error_count(ctx->rep) == s->errors_at_start;
    ib_check_add_result(ctx, s, valid);
}

static unsigned required_bits(const ib_rules_model *m, unsigned type_bits, unsigned *optional)
{
    switch (type_bits) {
    case 1: *optional = m->opt_dc; return m->req_dc;
    case 2: *optional = m->opt_edge; return m->req_edge;
    case 3: *optional = m->opt_both; return m->req_both;
    default: *optional = 0; return 0;
    }
}

static void check_model(ib_check_ctx *ctx, ib_check_scn *base, const char *rel_model,
                        unsigned type_bits)
{
    const char *official;
    const ib_rules_model *m = ib_rules_model_find(ctx->rules, base->bench, &official);
    if (!m) {
        IB_CHECK_ERR(ctx, rel_model, "model.unknown",
                     base->closed ? "rename the folder to the round's benchmark name "
                                    "(resnet50, ssd-resnet34, bert-99, bert-99.9, dlrm-99, "
                                    "dlrm-99.9, rnnt, 3d-unet-99, 3d-unet-99.9 for v1.1)"
                                  : "name the folder after the benchmark the model stands in for",
                     "\"%s\" is not a benchmark of the %s rules (model class \"%s\")", base->bench,
                     ctx->rules->name, official);
        return;
    }
    if (!m->supported) {
        IB_CHECK_ERR(ctx, rel_model, "model.unsupported",
                     "check this benchmark with the official submission checker",
                     "%s is a %s benchmark whose rules (token latencies, several accuracy "
                     "metrics) inferbench check does not implement; it was not checked",
                     m->name, ctx->rules->name);
        return;
    }
    unsigned opt;
    unsigned req = required_bits(m, type_bits, &opt);
    if (type_bits && !(req | opt)) {
        IB_CHECK_ERR(ctx, rel_model, "model.system-type",
                     "remove the benchmark or fix system_type in the system description",
                     "%s is not a benchmark for system_type %s in the %s rules", m->name,
                     type_bits == 1 ? "datacenter" : type_bits == 2 ? "edge" : "datacenter,edge",
                     ctx->rules->name);
        return;
    }
    ib_dirlist l;
    ib_err err;
    if (ib_dirlist_read(ctx, rel_model, &l, &err)) {
        IB_CHECK_ERR(ctx, rel_model, "tree.unreadable", "make the folder readable", "%s",
                     err.msg);
        return;
    }
    unsigned valid_bits = 0, seen_bits = 0;
    for (size_t i = 0; i < l.n && !ctx->oom; i++) {
        char rel[IB_CHECK_PATH_MAX];
        ib_check_rel(rel, rel_model, l.names[i]);
        if (!l.is_dir[i]) {
            IB_CHECK_WARN(ctx, rel, "tree.unexpected", "remove it",
                          "unexpected file in a benchmark folder (only scenario folders belong "
                          "here; the official checker ignores it)");
            continue;
        }
        ib_check_scn s = *base;
        s.model = m;
        s.model_name = m->name;
        s.scn_bit = ib_rules_scenario_bit(l.names[i], NULL);
        s.scenario = l.names[i];
        if (!s.scn_bit || (s.closed && type_bits && !((req | opt) & s.scn_bit))) {
            IB_CHECK_WARN(ctx, rel, "scenario.ignored",
                          "remove the folder, or name it after a scenario of this benchmark",
                          "scenario \"%s\" is neither required nor optional for %s; the "
                          "official checker ignores it",
                          l.names[i], m->name);
            continue;
        }
        seen_bits |= s.scn_bit;
        check_scenario(ctx, &s);
        if (s.perf_ok)
            valid_bits |= s.scn_bit;
    }
    ib_dirlist_free(&l);
    unsigned missing = req & ~valid_bits;
    for (unsigned b = 1; b <= IB_SCN_INTERACTIVE && missing; b <<= 1)
        if (missing & b)
            ib_check_addf(ctx, base->closed ? IB_CHECK_ERROR : IB_CHECK_WARNING, rel_model,
                          "scenario.missing",
                          seen_bits & b ? "fix the problems of that scenario's performance run"
                                        : "run the scenario and add its results folder",
                          "required scenario %s %s", ib_rules_scenario_name(b),
                          seen_bits & b ? "has no valid performance result" : "is missing");
}

static void check_system(ib_check_ctx *ctx, const char *division, const char *submitter,
                         const char *system, const char *rel_sys)
{
    unsigned type_bits = 0;
    ib_check_system_json(ctx, division, submitter, system, &type_bits);
    ib_dirlist l;
    ib_err err;
    if (ib_dirlist_read(ctx, rel_sys, &l, &err)) {
        IB_CHECK_ERR(ctx, rel_sys, "tree.unreadable", "make the folder readable", "%s", err.msg);
        return;
    }
    for (size_t i = 0; i < l.n && !ctx->oom; i++) {
        char rel[IB_CHECK_PATH_MAX];
        ib_check_rel(rel, rel_sys, l.names[i]);
        if (!l.is_dir[i]) {
            IB_CHECK_WARN(ctx, rel, "tree.unexpected", "remove it",
                          "unexpected file in a system's results folder (only benchmark folders "
                          "belong here)");
            continue;
        }
        ib_check_scn base;
        memset(&base, 0, sizeof base);
        base.division = division;
        base.submitter = submitter;
        base.system = system;
        base.bench = l.names[i];
        base.closed = !strcmp(division, "closed");
        check_model(ctx, &base, rel, type_bits);
    }
    ib_dirlist_free(&l);
}

static void check_submitter(ib_check_ctx *ctx, const char *division, const char *submitter)
{
    static const char *const known[] = {"results", "systems", "measurements", "code",
                                        "compliance", "documentation", NULL};
    char rel_sub[IB_CHECK_PATH_MAX], rel_res[IB_CHECK_PATH_MAX], rel[IB_CHECK_PATH_MAX];
    ib_check_rel(rel_sub, division, submitter);
    ib_check_rel(rel_res, rel_sub, "results");
    ib_dirlist l;
    ib_err err;
    if (ib_dirlist_read(ctx, rel_sub, &l, &err)) {
        IB_CHECK_ERR(ctx, rel_sub, "tree.unreadable", "make the folder readable", "%s", err.msg);
        return;
    }
    for (size_t i = 0; i < l.n; i++)
        if (!in_list(known, l.names[i]) && l.is_dir[i])
            IB_CHECK_WARN(ctx, ib_check_rel(rel, rel_sub, l.names[i]), "tree.unexpected",
                          "remove it, or move it under documentation/",
                          "unexpected folder in a submitter folder (results, systems, "
                          "measurements, code and compliance are the layout)");
    ib_dirlist_free(&l);
    if (!ib_check_is_dir(ctx, rel_res)) {
        IB_CHECK_ERR(ctx, rel_res, "tree.layout",
                     "put the results under <division>/<submitter>/results/<system>/...",
                     "the submitter folder has no results/ folder");
        return;
    }
    if (ib_dirlist_read(ctx, rel_res, &l, &err)) {
        IB_CHECK_ERR(ctx, rel_res, "tree.unreadable", "make the folder readable", "%s", err.msg);
        return;
    }
    static const char *const logs[] = {"submission_checker_log.txt", "compliance_checker_log.txt",
                                       NULL};
    for (size_t i = 0; i < l.n && !ctx->oom; i++) {
        ib_check_rel(rel, rel_res, l.names[i]);
        if (l.is_dir[i])
            check_system(ctx, division, submitter, l.names[i], rel);
        else if (!in_list(logs, l.names[i]))
            IB_CHECK_WARN(ctx, rel, "tree.unexpected", "remove it",
                          "unexpected file in results/ (only system folders and the checker log "
                          "belong here)");
    }
    ib_dirlist_free(&l);
}

static bool is_division(const ib_check_ctx *ctx, const char *name)
{
    return !strcmp(name, "closed") || !strcmp(name, "open") ||
           (ctx->rules->network_division && !strcmp(name, "network"));
}

static int walk(ib_check_ctx *ctx, ib_err *err)
{
    ib_dirlist top;
    int rc = ib_dirlist_read(ctx, NULL, &top, err);
    if (rc)
        return rc;
    size_t ndiv = 0;
    for (size_t i = 0; i < top.n; i++)
        ndiv += top.is_dir[i] && is_division(ctx, top.names[i]);
    if (ndiv == 0) {
        ib_dirlist_free(&top);
        return ib_err_set(err, IB_EINVAL,
                          "%s holds no closed/ or open/ folder; fix: pass the folder that "
                          "contains the division folders (e.g. .../mlperf-inference-v1.1, not "
                          ".../closed/Dell)",
                          ctx->root);
    }
    for (size_t i = 0; i < top.n && !ctx->oom; i++) {
        const char *name = top.names[i];
        if (!top.is_dir[i]) {
            IB_CHECK_WARN(ctx, name, "tree.unexpected", "remove it or move it elsewhere",
                          "unexpected file at the top of the tree (the checker reads only "
                          "division folders)");
            continue;
        }
        if (!is_division(ctx, name)) {
            if (strcmp(name, ".git") && strcmp(name, ".github"))
                IB_CHECK_ERR(ctx, name, "tree.division",
                             "rename it to closed or open, or move it out of the tree",
                             "invalid division folder \"%s\"", name);
            continue;
        }
        ib_dirlist subs;
        if (ib_dirlist_read(ctx, name, &subs, err)) {
            IB_CHECK_ERR(ctx, name, "tree.unreadable", "make the folder readable", "%s",
                         err->msg);
            continue;
        }
        size_t nsub = 0;
        for (size_t k = 0; k < subs.n && !ctx->oom; k++) {
            char rel[IB_CHECK_PATH_MAX];
            ib_check_rel(rel, name, subs.names[k]);
            if (!subs.is_dir[k]) {
                IB_CHECK_WARN(ctx, rel, "tree.unexpected", "remove it",
                              "unexpected file in a division folder (only submitter folders "
                              "belong here)");
                continue;
            }
            if (ctx->opts.submitter && strcmp(ctx->opts.submitter, subs.names[k]))
                continue;
            nsub++;
            check_submitter(ctx, name, subs.names[k]);
        }
        if (ctx->opts.submitter && nsub == 0)
            IB_CHECK_ERR(ctx, name, "tree.submitter", "check the --submitter spelling",
                          "no submitter folder named \"%s\"", ctx->opts.submitter);
        ib_dirlist_free(&subs);
    }
    ib_dirlist_free(&top);
    return ctx->oom ? ib_err_set(err, IB_ENOMEM, "out of memory") : IB_OK;
}

int ib_check_tree(const char *tree, const ib_check_options *opts, ib_check_report **out,
                  ib_err *err)
{
    *out = NULL;
    ib_check_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    if (opts)
        ctx.opts = *opts;
    else
        ib_check_options_defaults(&ctx.opts);
    ctx.rules = ib_rules_get(ctx.opts.version);
    ctx.root = tree;
    if (!ib_path_exists(tree))
        return ib_err_set(err, IB_ENOTFOUND, "%s: no such folder", tree);
    if (!ib_path_is_dir(tree))
        return ib_err_set(err, IB_EINVAL,
                          "%s is a file; fix: pass the folder that holds closed/ or open/", tree);
    if (ib_check_report_create(tree, ctx.opts.version, &ctx.rep))
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    int rc = walk(&ctx, err);
    if (rc) {
        ib_check_report_destroy(ctx.rep);
        return rc;
    }
    ib_check_report_finish(ctx.rep);
    *out = ctx.rep;
    return IB_OK;
}
