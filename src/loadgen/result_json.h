/*
 * result_json.h - <outdir>/result.json, inferbench's machine-readable
 * result: every metric, the verdict with each failed rule and its reason,
 * the computed suggestion, faults, the requested and effective settings with
 * the file each setting came from, labels and the names of the log files.
 */
#ifndef IB_LOADGEN_RESULT_JSON_H
#define IB_LOADGEN_RESULT_JSON_H

#include "base/strbuf.h"
#include "inferbench/loadgen.h"

struct ib_lg_test;

/* Build the JSON text (pretty-printed) into out. */
int ib_lg_result_json_build(const struct ib_lg_test *t, const ib_lg_result *res, ib_strbuf *out);
/* Build and write <outdir>/result.json (atomically). IB_EIO on failure. */
int ib_lg_result_json_write(const struct ib_lg_test *t, const ib_lg_result *res);

/* Public name of a rule bit ("min_duration", "early_stopping", ...). */
const char *ib_lg_rule_name(enum ib_lg_rule r);

#endif
