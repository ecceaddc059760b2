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
 * headline, validity lines, the official recommendations, early stopping, the
 * additional stats and the "Test Parameters Used" block. inferbench's own advice
 * (ib_lg_result.suggestion) is not written here: it goes to result.json and the
 * console, so the file stays LoadGen's. The one addition is the bullet naming lost or
 * duplicated responses, which only a faulty SUT produces (the official LoadGen hangs
 * or logs errors there instead).
 */
int ib_lg_summary_results(ib_strbuf *b, const char *sut_name, const ib_lg_effective *e,
                          const ib_lg_perf_params *p, const ib_lg_perf_summary *s);

/* The footer: warning and error counts in the official wording, which end the file
 * (loadgen.md §3.1 item 9). Nothing follows them: labels such as "synthetic" belong in
 * result.json, never in an official file another tool reads. */
int ib_lg_summary_footer(ib_strbuf *b, uint64_t warnings, uint64_t errors);

#endif
