/*
 * json_writer.h - a small streaming JSON writer into an ib_strbuf.
 *
 * It tracks nesting and commas, escapes strings, and writes non-finite
 * doubles as null so the output is always valid JSON. Pretty printing uses a
 * two-space indent when `pretty` is set. Errors (OOM, misuse) latch into
 * `jw->err` and are reported by ib_jw_finish.
 */
#ifndef IB_BASE_JSON_WRITER_H
#define IB_BASE_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"

#define IB_JW_MAX_DEPTH 32

typedef struct ib_jw {
    ib_strbuf *out;
    int depth;
    bool pretty;
    bool need_comma[IB_JW_MAX_DEPTH];
    bool in_object[IB_JW_MAX_DEPTH];
    bool after_key;
    int err;
} ib_jw;

void ib_jw_init(ib_jw *jw, ib_strbuf *out, bool pretty);
void ib_jw_object_begin(ib_jw *jw);
void ib_jw_object_end(ib_jw *jw);
void ib_jw_array_begin(ib_jw *jw);
void ib_jw_array_end(ib_jw *jw);
void ib_jw_key(ib_jw *jw, const char *key);
void ib_jw_string(ib_jw *jw, const char *s);
void ib_jw_string_n(ib_jw *jw, const char *s, size_t n);
void ib_jw_int(ib_jw *jw, int64_t v);
void ib_jw_uint(ib_jw *jw, uint64_t v);
/* %.17g (round-trip exact); non-finite -> null. */
void ib_jw_double(ib_jw *jw, double v);
/* Like ib_jw_double but with the given printf precision for %g. */
void ib_jw_double_g(ib_jw *jw, double v, int precision);
void ib_jw_bool(ib_jw *jw, bool v);
void ib_jw_null(ib_jw *jw);
/* Insert pre-formatted JSON text as one value. */
void ib_jw_raw(ib_jw *jw, const char *json);
/* Returns IB_OK if everything was balanced and no allocation failed. */
int ib_jw_finish(ib_jw *jw);

/* Append `s` JSON-escaped (without quotes) to sb. */
int ib_json_escape(ib_strbuf *sb, const char *s, size_t n);

#endif
