/*
 * power.h - average system power from an MLPerf power log (PTDaemon spl.txt) over
 * the LoadGen power_begin/power_end window, as the submission checker computes it.
 * This is the only power source inferbench uses for perf/W (users.md §3.3: never
 * TDP, rated or PSU power). Internal to src/report.
 */
#ifndef IB_REPORT_POWER_H
#define IB_REPORT_POWER_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

typedef struct ib_rpt_power {
    double avg_w;      /* mean of the samples inside the window */
    size_t samples;    /* how many samples were averaged */
    double duration_s; /* power_end - power_begin */
} ib_rpt_power;

/* "MM-DD-YYYY HH:MM:SS.mmm" (UTC) -> milliseconds since the epoch; -1 when malformed. */
int64_t ib_rpt_power_time_ms(const char *s);

/*
 * Average the "Time,<timestamp>,Watts,<W>,..." lines of spl.txt strictly inside
 * (begin, end), skipping non-positive readings. IB_EFORMAT with the file name when
 * the window is malformed or holds no sample.
 */
int ib_rpt_power_parse(const char *text, size_t len, const char *name, const char *begin,
                       const char *end, ib_rpt_power *out, ib_err *err);

#endif
