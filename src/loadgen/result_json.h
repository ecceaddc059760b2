/*
 * result_json.h - <outdir>/result.json, inferbench's machine-readable
 * result: every metric, the verdict with each failed rule and its reason,
 * the computed suggestion, faults, the requested and effective settings with
 * the file each setting came from, labels and the names of the log files.
 */
#ifndef IB_LOADGEN_RESULT_JSON_H
#define IB_LOADGEN_RESULT_JSON_H

#include <stdbool.h>

#include "base/json_writer.h"
#include "base/strbuf.h"
#include "inferbench/loadgen.h"

struct ib_lg_test;

/* The schema of result.json (docs/loadgen.md "result.json"). 2: the metrics object holds
 * the scenario's own figures only, named after the summary's lines. */
#define IB_LG_RESULT_FORMAT "inferbench-result/2"

/*
 * ib_lg_result_metrics_json - the "metrics" object: query and sample counts, the
 * summary's headline {line, value, unit}, the figures the scenario's summary prints (and
 * no others), latency statistics, find-peak QPS in find-peak mode and the issue delay.
 * v11: the test ran under the v1.1 rules (their headlines). Shared with run.json.
 */
void ib_lg_result_metrics_json(ib_jw *jw, const ib_lg_result *r, bool v11);

/* Build the JSON text (pretty-printed) into out. */
int ib_lg_result_json_build(const struct ib_lg_test *t, const ib_lg_result *res, ib_strbuf *out);
/* Build and write <outdir>/result.json (atomically). IB_EIO on failure. */
int ib_lg_result_json_write(const struct ib_lg_test *t, const ib_lg_result *res);

/* Public name of a rule bit ("min_duration", "early_stopping", ...). */
const char *ib_lg_rule_name(enum ib_lg_rule r);

#endif
