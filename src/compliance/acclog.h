/*
 * acclog.h - reader for mlperf_log_accuracy.json (loadgen.md §3.3).
 *
 * The file is a JSON array of objects with "qsl_idx" (non-negative integer), "data" (hex
 * payload) and usually "seq_id"; other members (token_count, token_data) are skipped. A log
 * cut by the official truncate_accuracy_log.py (first and last 4096 bytes joined by
 * "\n\n...\n\n") is recognised: the complete entry lines of both parts are recovered and the
 * log is flagged truncated, because comparisons on it can only be partial.
 */
#ifndef IB_COMPLIANCE_ACCLOG_H
#define IB_COMPLIANCE_ACCLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/common.h"

/* What truncate_accuracy_log.py writes between the kept head and tail. */
#define IB_ACCLOG_TRUNC_MARK "\n\n...\n\n"
/* Size limit of a submitted accuracy log (checker MAX_ACCURACY_LOG_SIZE). */
#define IB_ACCLOG_MAX_SUBMITTED 10240
/* Bytes kept from each end by the truncation tool (VIEWABLE_SIZE). */
#define IB_ACCLOG_VIEWABLE 4096

typedef struct ib_acclog_entry {
    uint64_t seq_id;
    uint64_t qsl_idx;
    bool has_seq_id;
    const char *data; /* hex digits, not NUL-terminated; points into the log's buffer */
    size_t data_len;  /* number of hex digits (even) */
    size_t line;      /* 1-based line of the entry's '{' */
} ib_acclog_entry;

typedef struct ib_acclog ib_acclog;

/* Parse from memory (the text is copied). origin names the file in messages.
 * IB_EFORMAT with "origin:line: ..." when the text is neither a valid log nor a truncated one. */
int ib_acclog_parse(const char *text, size_t len, const char *origin, ib_acclog **out, ib_err *err);
/* Read and parse a file (no size limit beyond memory). */
int ib_acclog_load(const char *path, ib_acclog **out, ib_err *err);
void ib_acclog_destroy(ib_acclog *log);

size_t ib_acclog_count(const ib_acclog *log);
const ib_acclog_entry *ib_acclog_at(const ib_acclog *log, size_t i);
/* True when the log was cut by the truncation tool (entries are then a partial view). */
bool ib_acclog_truncated(const ib_acclog *log);
/* Size in bytes of the parsed text. */
size_t ib_acclog_size(const ib_acclog *log);

/* True when text looks like the output of the truncation tool (size and marker). */
bool ib_acclog_text_is_truncated(const char *text, size_t len);

/* Value of one hex digit, or -1. */
int ib_hexval(char c);

#endif
