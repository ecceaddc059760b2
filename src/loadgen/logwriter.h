/*
 * logwriter.h - mlperf_log_detail.txt records (loadgen.md §3.2).
 *
 * One record per line: ":::MLLOG " and a JSON object with key, value,
 * time_ms (ms since the test start, ns resolution), namespace, event_type
 * and metadata {is_error, is_warning, file, line_no, pid, tid}, in that order,
 * with the official value types (doubles as a C++ stream prints them).
 * Records accumulate in memory and are written by ib_lg_detail_flush, which
 * the engine calls between phases (never on the issue path). Error and
 * warning records are counted for num_errors and the summary footer.
 *
 * Thread-safety: one writer thread (the loadgen's main thread).
 */
#ifndef IB_LOADGEN_LOGWRITER_H
#define IB_LOADGEN_LOGWRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/strbuf.h"

typedef enum ib_lg_rec_kind {
    IB_LG_REC_NORMAL = 0,
    IB_LG_REC_ERROR = 1,
    IB_LG_REC_WARNING = 2,
} ib_lg_rec_kind;

typedef struct ib_lg_detail {
    ib_strbuf buf;      /* records not yet flushed */
    FILE *out;          /* NULL: records are kept in buf only */
    bool copy_stdout;   /* LogOutputSettings.copy_detail_to_stdout */
    int64_t origin_ns;  /* monotonic time of the test start (time_ms = 0) */
    long pid;
    uint64_t errors, warnings;
    uint64_t records;
    int io_error;       /* first IB_EIO from a write, latched */
    int oom;
} ib_lg_detail;

/* Start a writer. out may be NULL (memory only). */
void ib_lg_detail_init(ib_lg_detail *d, FILE *out, bool copy_stdout, int64_t origin_ns);
/* Free the buffer (does not close out). */
void ib_lg_detail_deinit(ib_lg_detail *d);

/* Record writers. file/line name the call site (logged as metadata).
 * time_ns < 0 means "now". */
void ib_lg_detail_str(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, const char *value,
                      int64_t time_ns, const char *file, int line);
void ib_lg_detail_int(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, int64_t value,
                      int64_t time_ns, const char *file, int line);
void ib_lg_detail_uint(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, uint64_t value,
                       int64_t time_ns, const char *file, int line);
void ib_lg_detail_double(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, double value,
                         int64_t time_ns, const char *file, int line);
void ib_lg_detail_bool(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, bool value,
                       int64_t time_ns, const char *file, int line);
/* value is pre-formatted JSON (a list or an object). */
void ib_lg_detail_raw(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, const char *json,
                      size_t json_len, int64_t time_ns, const char *file, int line);
/* A list of sample indices, as loaded_qsl_set: "[1,2,3]". */
void ib_lg_detail_index_list(ib_lg_detail *d, const char *key, const size_t *v, size_t n,
                             int64_t time_ns, const char *file, int line);

/* Append buffered records to the file (and stdout when copying). Returns
 * IB_OK, IB_EIO or IB_ENOMEM (latched: later calls return it too). */
int ib_lg_detail_flush(ib_lg_detail *d);

/* "%g" with 6 significant digits, as a C++ ostream prints a double. */
int ib_lg_fmt_double(double v, char *buf, size_t n);

/* Convenience macros naming the call site. */
#define IB_LG_LOG_STR(d, key, v) ib_lg_detail_str((d), IB_LG_REC_NORMAL, (key), (v), -1, __FILE__, __LINE__)
#define IB_LG_LOG_INT(d, key, v) ib_lg_detail_int((d), IB_LG_REC_NORMAL, (key), (v), -1, __FILE__, __LINE__)
#define IB_LG_LOG_UINT(d, key, v) ib_lg_detail_uint((d), IB_LG_REC_NORMAL, (key), (v), -1, __FILE__, __LINE__)
#define IB_LG_LOG_DBL(d, key, v) ib_lg_detail_double((d), IB_LG_REC_NORMAL, (key), (v), -1, __FILE__, __LINE__)
#define IB_LG_LOG_BOOL(d, key, v) ib_lg_detail_bool((d), IB_LG_REC_NORMAL, (key), (v), -1, __FILE__, __LINE__)
#define IB_LG_LOG_ERROR(d, key, v) ib_lg_detail_str((d), IB_LG_REC_ERROR, (key), (v), -1, __FILE__, __LINE__)
#define IB_LG_LOG_WARNING(d, key, v) ib_lg_detail_str((d), IB_LG_REC_WARNING, (key), (v), -1, __FILE__, __LINE__)

#endif
