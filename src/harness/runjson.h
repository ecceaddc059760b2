/*
 * runjson.h - run.json, what a run was and what it gave, for every kind of run (a benchmark
 * through the harness, the null SUT): one schema, "inferbench-run/2" (docs/benchmarks.md
 * "run.json"). The common head and the performance object are written here; the harness
 * adds model, data and batching, the null SUT its QSL sizes.
 */
#ifndef IB_HARNESS_RUNJSON_H
#define IB_HARNESS_RUNJSON_H

#include <stdbool.h>
#include <stddef.h>

#include "base/json_writer.h"
#include "inferbench/loadgen.h"

/* 2: "performance" holds result.json's metrics object; "status", "run" and "sut". */
#define IB_RUN_JSON_FORMAT "inferbench-run/2"

typedef struct ib_runjson_head {
    const char *sut;        /* "runtime" (a benchmark through the harness) or "null" */
    const char *benchmark;  /* the benchmark id; NULL for the null SUT */
    const char *model_name; /* the mlperf.conf lookup name */
    enum ib_lg_scenario scenario;
    enum ib_lg_mode mode;
    enum ib_lg_rules rules;
    const char *system;
    bool interrupted;       /* status INTERRUPTED: nothing was moved into the tree */
    unsigned run_n;         /* performance/run_N (0: none) */
    bool submittable;
    const char *const *labels;
    size_t n_labels;
} ib_runjson_head;

/* Open the object and write the head's keys (format, versions, sut, benchmark, ... labels). */
void ib_runjson_begin(ib_jw *jw, const ib_runjson_head *h);

/* "performance": {dir, result, valid, reasons, metrics} (metrics as in result.json). */
void ib_runjson_performance(ib_jw *jw, const ib_lg_result *r, const char *dir, bool v11);

/* Close the object and write the text to path (atomically). */
int ib_runjson_finish(ib_jw *jw, ib_strbuf *sb, const char *path, ib_err *err);

#endif
