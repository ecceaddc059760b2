/*
 * csv.h - a small RFC 4180 CSV reader for the report's input files (prices,
 * published results): quoted fields with "" escapes, CRLF or LF, blank lines and
 * lines starting with '#' skipped. Fields live in the caller's arena.
 */
#ifndef IB_REPORT_CSV_H
#define IB_REPORT_CSV_H

#include <stddef.h>

#include "base/arena.h"
#include "base/vec.h"
#include "inferbench/status.h"

typedef struct ib_rpt_csv_row {
    size_t line; /* 1-based line where the record starts */
    size_t nfield;
    char **field; /* arena strings, trimmed when unquoted */
} ib_rpt_csv_row;

typedef struct ib_rpt_csv {
    IB_VEC(ib_rpt_csv_row) rows;
} ib_rpt_csv;

int ib_rpt_csv_parse(const char *text, size_t len, const char *name, ib_arena *arena,
                     ib_rpt_csv *out, ib_err *err);
void ib_rpt_csv_deinit(ib_rpt_csv *csv);
/* Column index of a header name (case-insensitive) in row 0, or -1. */
int ib_rpt_csv_column(const ib_rpt_csv *csv, const char *name);

#endif
