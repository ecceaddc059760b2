/*
 * mllog.h - reader for the LoadGen detail log (mlperf_log_detail.txt, v1.0+ format).
 *
 * Each line that starts with ":::MLLOG" carries one JSON object (key, value, time_ms,
 * namespace, event_type, metadata{is_error, is_warning, ...}); lines without the marker
 * are skipped, as the official log_parser.py does. Stricter than the official reader in
 * one documented way: the object must have a string "key", a "value" and a metadata
 * object with boolean is_error/is_warning (the official parser raises on these later).
 * Integers above INT64_MAX (seeds such as 10051496985653635065) keep their exact value.
 */
#ifndef IB_COMPLIANCE_MLLOG_H
#define IB_COMPLIANCE_MLLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/common.h"

enum ib_mlv_kind {
    IB_MLV_NULL = 0,
    IB_MLV_BOOL,
    IB_MLV_INT,    /* fits int64 */
    IB_MLV_UINT,   /* above INT64_MAX, fits uint64 */
    IB_MLV_REAL,
    IB_MLV_STRING,
    IB_MLV_ARRAY,  /* kept only as an element count */
    IB_MLV_OBJECT, /* kept only as a member count */
};

typedef struct ib_mllog_rec {
    const char *key;
    enum ib_mlv_kind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    const char *s; /* NUL-terminated (strings with NUL are rejected) */
    size_t n;      /* string length, or element/member count */
    bool is_error;
    bool is_warning;
    size_t line; /* 1-based line number in the file */
} ib_mllog_rec;

typedef struct ib_mllog ib_mllog;

/*
 * Parse a detail log held in memory. origin names the file in messages ("path:line: ...").
 * Fails with IB_EFORMAT on: an empty file, a first line without the marker, a marker line
 * whose JSON is invalid or incomplete (e.g. a truncated last line), a record without the
 * required fields. Ownership: *out is freed with ib_mllog_destroy.
 */
int ib_mllog_parse(const char *text, size_t len, const char *origin, ib_mllog **out, ib_err *err);
/* Read and parse a file (at most 1 GiB). IB_ENOTFOUND when it does not exist. */
int ib_mllog_load(const char *path, ib_mllog **out, ib_err *err);
void ib_mllog_destroy(ib_mllog *log);

size_t ib_mllog_count(const ib_mllog *log);
const ib_mllog_rec *ib_mllog_at(const ib_mllog *log, size_t i);
/* First record with this key (the official "first one is used"), or NULL. */
const ib_mllog_rec *ib_mllog_find(const ib_mllog *log, const char *key);
size_t ib_mllog_num_errors(const ib_mllog *log);
size_t ib_mllog_num_warnings(const ib_mllog *log);
/* Lines that did not start with the marker (ignored, as officially). */
size_t ib_mllog_skipped_lines(const ib_mllog *log);

/* Typed getters on the first record of `key`; false when absent or of another type.
 * get_u64 accepts non-negative integers; get_i64 integers that fit int64; get_double any
 * number; get_str strings only. */
bool ib_mllog_get_u64(const ib_mllog *log, const char *key, uint64_t *out);
bool ib_mllog_get_i64(const ib_mllog *log, const char *key, int64_t *out);
bool ib_mllog_get_double(const ib_mllog *log, const char *key, double *out);
bool ib_mllog_get_bool(const ib_mllog *log, const char *key, bool *out);
const char *ib_mllog_get_str(const ib_mllog *log, const char *key);

/* A short description of a record's value for messages ("\"INVALID\"", "12", "true"). */
void ib_mllog_value_text(const ib_mllog_rec *r, char *buf, size_t n);

#endif
