/*
 * fmt.h - number formatting for tables and charts: results with thousands
 * separators and about six significant digits (as LoadGen prints them), compact
 * chart labels ("99.8k"), ratios ("1.85x"). Internal to src/report.
 */
#ifndef IB_REPORT_FMT_H
#define IB_REPORT_FMT_H

#include <stddef.h>

/* 91264.2 -> "91,264.2"; 155.628 -> "155.628"; NaN -> "n/a". */
void ib_rpt_fmt_result(char *out, size_t cap, double v);
/* 3 significant digits with k/M/G suffixes: 99815.7 -> "99.8k", 155.6 -> "156". */
void ib_rpt_fmt_compact(char *out, size_t cap, double v);
/* A ratio with 3 significant digits: 1.85090 -> "1.85", 0.54 -> "0.540". */
void ib_rpt_fmt_ratio(char *out, size_t cap, double v);
/* Money-ish amounts with 4 significant digits. */
void ib_rpt_fmt_sig(char *out, size_t cap, double v, int digits);

#endif
