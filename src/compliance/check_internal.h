/*
 * check_internal.h - what the check_*.c files share: the walk context, the report builder
 * and directory helpers. Paths are kept relative to the tree root for messages ("rel") and
 * joined with the root only to touch the file system.
 */
#ifndef IB_COMPLIANCE_CHECK_INTERNAL_H
#define IB_COMPLIANCE_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/common.h"
#include "compliance/rules.h"
#include "inferbench/compliance.h"

#define IB_CHECK_PATH_MAX 4096

typedef struct ib_check_ctx {
    const ib_rules *rules;
    ib_check_options opts;
    const char *root;      /* the tree root as given */
    ib_check_report *rep;
    int oom;               /* set when the report could not grow; the walk stops */
} ib_check_ctx;

/* The result being checked (one results/<system>/<benchmark>/<scenario> folder). */
typedef struct ib_check_scn {
    const char *division, *submitter, *system, *bench, *scenario; /* directory names */
    const ib_rules_model *model;
    const char *model_name;  /* official class */
    unsigned scn_bit;
    bool closed;
    size_t errors_at_start;  /* report error count when the scenario's check began */
    /* filled while checking */
    bool perf_ok, acc_ok, compliance_ok;
    bool has_metric, has_accuracy;
    double metric, accuracy;
} ib_check_scn;

/* ---- report (check_report.c) --------------------------------------------------------- */

int ib_check_report_create(const char *tree, enum ib_check_version v, ib_check_report **out);
/* Add a problem; message is printf-formatted. Returns IB_OK or IB_ENOMEM (also latched in
 * ctx->oom). */
int ib_check_addf(ib_check_ctx *ctx, enum ib_check_severity sev, const char *file,
                  const char *rule, const char *fix, const char *fmt, ...) IB_PRINTF(6, 7);
#define IB_CHECK_ERR(ctx, file, rule, fix, ...)                                                    \
    ib_check_addf((ctx), IB_CHECK_ERROR, (file), (rule), (fix), __VA_ARGS__)
#define IB_CHECK_WARN(ctx, file, rule, fix, ...)                                                   \
    ib_check_addf((ctx), IB_CHECK_WARNING, (file), (rule), (fix), __VA_ARGS__)
int ib_check_add_result(ib_check_ctx *ctx, const ib_check_scn *s, bool valid);
/* Sort problems by file, severity and rule (called once at the end). */
void ib_check_report_finish(ib_check_report *r);

/* ---- paths and folders (check.c) ------------------------------------------------------- */

/* rel = a/b/c joined with '/', into buf (size IB_CHECK_PATH_MAX). */
const char *ib_check_rel(char *buf, const char *a, const char *b);
/* printf into a path buffer of IB_CHECK_PATH_MAX bytes (cut, never overflowing). */
const char *ib_check_fmt(char *buf, const char *fmt, ...) IB_PRINTF(2, 3);
/* root/rel into buf. */
const char *ib_check_abs(const ib_check_ctx *ctx, const char *rel, char *buf);
bool ib_check_is_dir(const ib_check_ctx *ctx, const char *rel);
bool ib_check_is_file(const ib_check_ctx *ctx, const char *rel);

typedef struct ib_dirlist {
    char **names;
    bool *is_dir;
    size_t n;
} ib_dirlist;

/* Sorted entries of root/rel (without "." and ".."); IB_EIO with err when unreadable. */
int ib_dirlist_read(const ib_check_ctx *ctx, const char *rel, ib_dirlist *out, ib_err *err);
void ib_dirlist_free(ib_dirlist *l);
bool ib_dirlist_has_file(const ib_dirlist *l, const char *name);

/* ---- the parts of a result (check_system.c, check_results.c, check_compliance.c) --------- */

/* systems/<system>.json; *type_bits gets 1 datacenter, 2 edge, 3 both (0 when unusable). */
void ib_check_system_json(ib_check_ctx *ctx, const char *division, const char *submitter,
                          const char *system, unsigned *type_bits);
void ib_check_measurements(ib_check_ctx *ctx, ib_check_scn *s);
void ib_check_accuracy_dir(ib_check_ctx *ctx, ib_check_scn *s);
void ib_check_performance_dir(ib_check_ctx *ctx, ib_check_scn *s);
void ib_check_compliance_dir(ib_check_ctx *ctx, ib_check_scn *s);

/* A file-list comparison like the checker's files_diff, but reporting both missing and extra
 * files. required/optional are NULL-terminated. Missing files are errors; extra ones use
 * extra_sev. Returns the number of missing required files. */
size_t ib_check_file_list(ib_check_ctx *ctx, const char *rel_dir, const char *const *required,
                          const char *const *optional, enum ib_check_severity extra_sev,
                          const char *rule);

#endif
