/*
 * summary.h - mlperf_log_summary.txt (loadgen.md §3.1; results.cc
 * LogSummary for the current rules, r1.1 loadgen.cc for v1.1).
 */
#ifndef IB_LOADGEN_SUMMARY_H
#define IB_LOADGEN_SUMMARY_H

#include <stdint.h>

#include "base/strbuf.h"
#include "loadgen/effective.h"
#include "loadgen/results.h"

/*
 * Append the results section of one performance series: banner, identity,
 * headline, validity lines, recommendations (plus inferbench's extra lines,
 * each a " * " bullet, when `extra` is non-empty), early stopping, the
 * additional stats and the "Test Parameters Used" block.
 */
int ib_lg_summary_results(ib_strbuf *b, const char *sut_name, const ib_lg_effective *e,
                          const ib_lg_perf_params *p, const ib_lg_perf_summary *s,
                          const char *extra);

/* The footer: warning and error counts in the official wording, then one
 * "Labels: a, b" line when labels are given. */
int ib_lg_summary_footer(ib_strbuf *b, uint64_t warnings, uint64_t errors,
                         const char *const *labels, size_t nlabels);

#endif
