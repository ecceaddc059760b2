/*
 * trace.h - the optional Chrome trace-event file mlperf_log_trace.json
 * (loadgen.md §3.4), opt-in (LogSettings.enable_trace). Events are written
 * after each series from per-sample arrays kept only when tracing, so the
 * trace never slows the issue or completion path: one async begin/end pair
 * per sample (scheduled -> completed) and, in Server, a "Latency" counter
 * with issue_delay and issue_to_done.
 */
#ifndef IB_LOADGEN_TRACE_H
#define IB_LOADGEN_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "inferbench/loadgen.h"

struct ib_lg_srt;

int ib_lg_trace_begin(FILE *f);
/* Events of one closed series; origin_ns = the test start (ts 0). */
int ib_lg_trace_series(FILE *f, const struct ib_lg_srt *s, enum ib_lg_scenario scenario,
                       int64_t origin_ns);
/* The LastTrace sentinel and the footer (origin wall time in us). */
int ib_lg_trace_end(FILE *f, int64_t origin_wall_ns);

#endif
