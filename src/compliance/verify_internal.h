/*
 * verify_internal.h - helpers shared by the verify_*.c files: outcome text building, the
 * Python float formatting the current scripts print, and locating a run's log files.
 */
#ifndef IB_COMPLIANCE_VERIFY_INTERNAL_H
#define IB_COMPLIANCE_VERIFY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/common.h"
#include "base/pyfmt.h"
#include "base/strbuf.h"
#include "inferbench/compliance.h"

/* Replace out->text with the contents of sb (sb is emptied). */
int ib_verify_take_text(ib_verify_outcome *out, ib_strbuf *sb);

/* Set verdict FAIL/INCONCLUSIVE with a printf reason (keeps the first reason). */
void ib_verify_set_reason(ib_verify_outcome *out, enum ib_verify_verdict v, const char *fmt, ...)
    IB_PRINTF(3, 4);

/*
 * Find `name` for a run folder: dir/<sub>/<name> when that exists (compliance/results
 * layout, sub = "performance/run_1" or "accuracy"), else dir/<name> (a flat LoadGen output
 * folder). Writes the path to out; returns IB_ENOTFOUND (with err) when neither exists.
 */
int ib_verify_find_log(const char *dir, const char *sub, const char *name, char *out, size_t n,
                       ib_err *err);

#endif
