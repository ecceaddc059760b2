/*
 * check_system.c - the system description (systems/<system>.json, benchmarks.md §2.5;
 * check_system_desc_id of the r1.1 checker, system_check.py of the modular one) and the
 * measurements folder (check_measurement_dir: mlperf.conf/user.conf/README.md, the
 * implementation JSON with its five fields, and the matching code/ folder).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "compliance/check_internal.h"

static bool in_list(const char *const *list, const char *name)
{
    for (; list && *list; list++)
        if (!strcmp(*list, name))
            return true;
    return false;
}

/* Python truthiness of a JSON value (`not value` in the modular checker). */
static bool truthy(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: return json_string_length(v) > 0;
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0;
    case JSON_TRUE: return true;
    case JSON_ARRAY: return json_array_size(v) > 0;
    case JSON_OBJECT: return json_object_size(v) > 0;
    default: return false;
    }
}

static json_t *load_json(ib_check_ctx *ctx, const char *rel, const char *rule, const char *what)
{
    char p[IB_CHECK_PATH_MAX];
    json_error_t je;
    json_t *j = json_load_file(ib_check_abs(ctx, rel, p), 0, &je);
    if (!j) {
        IB_CHECK_ERR(ctx, rel, rule, "fix the JSON syntax (a JSON linter shows the spot)",
                     "%s is not valid JSON: %s (line %d, column %d)", what, je.text, je.line,
                     je.column);
        return NULL;
    }
    if (!json_is_object(j)) {
        IB_CHECK_ERR(ctx, rel, rule, "the file must hold one JSON object of \"field\": value",
                     "%s is not a JSON object", what);
        json_decref(j);
        return NULL;
    }
    return j;
}

static void check_fields(ib_check_ctx *ctx, const char *rel, json_t *j)
{
    const ib_rules *r = ctx->rules;
    for (const char *const *k = r->sys_required; *k; k++) {
        json_t *v = json_object_get(j, *k);
        if (!v)
            IB_CHECK_ERR(ctx, rel, "system.field-missing",
                         "add the field (an empty string is allowed where nothing applies)",
                         "required field \"%s\" is missing", *k);
        else if (in_list(r->sys_meaningful, *k) && !truthy(v))
            IB_CHECK_ERR(ctx, rel, "system.field-empty", "describe the system in this field",
                         "field \"%s\" requires a meaningful value but is empty", *k);
    }
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v)
    {
        if (!in_list(r->sys_required, key) && !in_list(r->sys_known_extra, key))
            IB_CHECK_WARN(ctx, rel, "system.field-unknown",
                          "remove the field or check its spelling against the rules' list",
                          "field \"%s\" is not a field of the %s system description", key,
                          r->name);
    }
}

void ib_check_system_json(ib_check_ctx *ctx, const char *division, const char *submitter,
                          const char *system, unsigned *type_bits)
{
    char rel[IB_CHECK_PATH_MAX], name[IB_CHECK_PATH_MAX];
    *type_bits = 0;
    ib_check_fmt(name, "%s.json", system);
    ib_check_fmt(rel, "%s/%s/systems/%s", division, submitter, name);
    if (!ib_check_is_file(ctx, rel)) {
        IB_CHECK_ERR(ctx, rel, "system.missing",
                     "write the system description (inferbench sysinfo writes one) under "
                     "systems/, named after the results folder",
                     "no system description for results/%s", system);
        return;
    }
    json_t *j = load_json(ctx, rel, "system.json", "the system description");
    if (!j)
        return;
    check_fields(ctx, rel, j);
    json_t *st = json_object_get(j, "status");
    const char *status = json_string_value(st);
    if (st && !status) {
        IB_CHECK_ERR(ctx, rel, "system.status", "set \"status\": \"available\" (or preview, rdi)",
                     "field \"status\" must be a string");
    } else if (status && strcasecmp(status, "available") && strcasecmp(status, "preview") &&
               strcasecmp(status, "rdi")) {
        IB_CHECK_ERR(ctx, rel, "system.status", "use available, preview or rdi",
                     "invalid status \"%s\"", status);
    }
    json_t *ty = json_object_get(j, "system_type");
    const char *type = json_string_value(ty);
    if (type && !strcmp(type, "datacenter"))
        *type_bits = 1;
    else if (type && !strcmp(type, "edge"))
        *type_bits = 2;
    else if (type && (!strcmp(type, "datacenter,edge") || !strcmp(type, "edge,datacenter")))
        *type_bits = 3;
    else if (ty)
        IB_CHECK_ERR(ctx, rel, "system.type", "use datacenter, edge or datacenter,edge",
                     "invalid system_type %s%s%s", type ? "\"" : "", type ? type : "(not a string)",
                     type ? "\"" : "");
    const char *sub = json_string_value(json_object_get(j, "submitter"));
    if (json_object_get(j, "submitter") && (!sub || strcasecmp(sub, submitter)))
        IB_CHECK_ERR(ctx, rel, "system.submitter",
                     "make \"submitter\" equal the submitter folder name",
                     "submitter is \"%s\" but the folder is \"%s\"", sub ? sub : "(not a string)",
                     submitter);
    const char *div = json_string_value(json_object_get(j, "division"));
    bool cur = ctx->rules->version == IB_CHECK_CURRENT;
    if (json_object_get(j, "division") &&
        (!div || (cur ? strcasecmp(div, division) : strcmp(div, division))))
        IB_CHECK_ERR(ctx, rel, "system.division", "make \"division\" equal the division folder",
                     "division is \"%s\" but the tree puts it under %s/",
                     div ? div : "(not a string)", division);
    if (cur) {
        json_t *nw = json_object_get(j, "is_network");
        bool is_net = json_is_true(nw) ||
                      (json_is_string(nw) && !strcasecmp(json_string_value(nw), "true"));
        if ((!strcmp(division, "network")) != is_net && strcmp(division, "open"))
            IB_CHECK_ERR(ctx, rel, "system.network",
                         "set is_network to \"true\" only for the network division",
                         "is_network is %s for the %s division", is_net ? "true" : "false",
                         division);
    }
    json_decref(j);
}

/* The implementation JSON of a measurements folder and the code folder it names. */
static void check_impl_json(ib_check_ctx *ctx, ib_check_scn *s, const char *rel_meas,
                            const ib_dirlist *l)
{
    static const char *const fields[] = {"input_data_types", "retraining",
                                         "starting_weights_filename", "weight_data_types",
                                         "weight_transformations", NULL};
    char suffix[IB_CHECK_PATH_MAX], rel[IB_CHECK_PATH_MAX];
    ib_check_fmt(suffix, "_%s.json", s->scenario);
    size_t sl = strlen(s->system), sfx = strlen(suffix);
    const char *file = NULL;
    size_t end = 0;
    for (size_t i = 0; i < l->n && !file; i++) {
        const char *n = l->names[i];
        size_t nl = strlen(n);
        if (l->is_dir[i] || strncmp(n, s->system, sl))
            continue;
        if (nl >= sl + sfx && !strcmp(n + nl - sfx, suffix)) {
            file = n;
            end = sfx;
        }
    }
    for (size_t i = 0; i < l->n && !file; i++) {
        const char *n = l->names[i];
        size_t nl = strlen(n);
        if (!l->is_dir[i] && !strncmp(n, s->system, sl) && nl >= 5 && !strcmp(n + nl - 5, ".json")) {
            file = n;
            end = 5;
        }
    }
    if (!file) {
        IB_CHECK_ERR(ctx, rel_meas, "measure.impl-json",
                     "add <system>_<implementation>_<scenario>.json with input_data_types, "
                     "retraining, starting_weights_filename, weight_data_types, "
                     "weight_transformations",
                     "no %s*.json implementation description", s->system);
        return;
    }
    ib_check_rel(rel, rel_meas, file);
    json_t *j = load_json(ctx, rel, "measure.impl-json", "the implementation description");
    if (j) {
        for (const char *const *k = fields; *k; k++)
            if (!json_object_get(j, *k))
                IB_CHECK_ERR(ctx, rel, "measure.impl-field", "add the field",
                             "required field \"%s\" is missing", *k);
        json_decref(j);
    }
    /* impl = file name between "<system>_" and the suffix; the code lives in
     * code/<benchmark>/<impl>, or code/<benchmark> holds it or names the folder */
    char impl[256] = "";
    size_t nl = strlen(file);
    if (nl > sl + 1 + end)
        snprintf(impl, sizeof impl, "%.*s", (int)(nl - end - sl - 1), file + sl + 1);
    char code[IB_CHECK_PATH_MAX], code_model[IB_CHECK_PATH_MAX];
    ib_check_fmt(code_model, "%s/%s/code/%s", s->division, s->submitter, s->bench);
    if (ib_check_is_file(ctx, code_model))
        return; /* a text file naming the code folder: accepted as the checker does */
    ib_check_fmt(code, "%s/%s", code_model, impl);
    if (!ib_check_is_dir(ctx, code) && !ib_check_is_dir(ctx, code_model))
        IB_CHECK_ERR(ctx, rel_meas, "measure.code-dir",
                     "add the implementation's source (or a README) under code/<benchmark>/",
                     "no code folder %s for this implementation", code_model);
}

void ib_check_measurements(ib_check_ctx *ctx, ib_check_scn *s)
{
    char rel[IB_CHECK_PATH_MAX];
    ib_check_fmt(rel, "%s/%s/measurements/%s/%s/%s", s->division, s->submitter, s->system,
             s->bench, s->scenario);
    if (!ib_check_is_dir(ctx, rel)) {
        IB_CHECK_ERR(ctx, rel, "measure.missing-dir",
                     "add the folder with mlperf.conf, user.conf, README.md and the "
                     "implementation JSON used for the run",
                     "no measurements folder for this result");
        return;
    }
    ib_dirlist l;
    ib_err err;
    if (ib_dirlist_read(ctx, rel, &l, &err)) {
        IB_CHECK_ERR(ctx, rel, "tree.unreadable", "make the folder readable", "%s", err.msg);
        return;
    }
    for (const char *const *f = ctx->rules->measure_files; *f; f++)
        if (!ib_dirlist_has_file(&l, *f)) {
            char q[IB_CHECK_PATH_MAX];
            IB_CHECK_ERR(ctx, ib_check_rel(q, rel, *f), "measure.missing-file",
                         !strcmp(*f, "README.md")
                             ? "add a README.md with the steps that reproduce the run"
                             : "copy the config file the run used into the folder",
                         "required file %s is missing", *f);
        }
    check_impl_json(ctx, s, rel, &l);
    ib_dirlist_free(&l);
}
