/*
 * accuracy.h - the accuracy line of an accuracy.txt, in each benchmark's official
 * format (submission checker ACC_PATTERN). Internal to src/report.
 */
#ifndef IB_REPORT_ACCURACY_H
#define IB_REPORT_ACCURACY_H

#include <stdbool.h>
#include <stddef.h>

#include "inferbench/status.h"

typedef struct ib_rpt_accuracy {
    const char *metric; /* static: "acc", "mAP", "F1", "AUC", "WER-accuracy", "DICE", ... */
    const char *unit;   /* static: "%", "" */
    double value;
    bool has_hash; /* a "hash=<sha256>" line (truncated accuracy log) is present */
} ib_rpt_accuracy;

/*
 * Find the benchmark's metric line in text. benchmark may be NULL or unknown: then
 * the first recognised metric wins. IB_ENOTFOUND when no line matches.
 */
int ib_rpt_accuracy_parse(const char *text, size_t len, const char *benchmark, const char *name,
                          ib_rpt_accuracy *out, ib_err *err);

/* Read <scenario_dir>/accuracy/accuracy.txt. IB_ENOTFOUND when missing or unmatched. */
int ib_rpt_accuracy_load(const char *scenario_dir, const char *benchmark, ib_rpt_accuracy *out,
                         ib_err *err);

#endif
