/*
 * acctxt.h - reads the metric and the hash line of accuracy.txt (and of TEST01's
 * baseline_accuracy.txt / compliance_accuracy.txt), with the per-metric patterns of the
 * official checker (rules.h ib_acc_metric_pattern) and its line loop: the value is taken from
 * matching lines until both a value and a "hash=" line have been seen.
 */
#ifndef IB_COMPLIANCE_ACCTXT_H
#define IB_COMPLIANCE_ACCTXT_H

#include <stdbool.h>
#include <stddef.h>

#include "compliance/rules.h"

typedef struct ib_acctxt {
    bool has_value;
    bool bad_number;     /* the matched text is not a number (e.g. "1.2.3") */
    double value;
    char value_text[64]; /* as written in the file */
    size_t value_line;
    bool has_hash;
    char hash[80];       /* the hash= value (truncated to 79 characters) */
    size_t hash_line;
} ib_acctxt;

int ib_acctxt_parse(const char *text, size_t len, const ib_rules *r, enum ib_acc_metric m,
                    ib_acctxt *out, ib_err *err);
/* Reads at most 64 MiB. */
int ib_acctxt_load(const char *path, const ib_rules *r, enum ib_acc_metric m, ib_acctxt *out,
                   ib_err *err);

#endif
