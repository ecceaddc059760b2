/*
 * strbuf.h - a growable NUL-terminated byte buffer (Redis sds in spirit, but a
 * plain struct in caller storage). Appends report IB_ENOMEM and leave the
 * buffer valid; a failed buffer stays failed (`oom` set) so callers may check
 * once at the end.
 */
#ifndef IB_BASE_STRBUF_H
#define IB_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/common.h"

typedef struct ib_strbuf {
    char *data; /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;
    int oom; /* nonzero after any failed allocation */
} ib_strbuf;

void ib_strbuf_init(ib_strbuf *sb);
void ib_strbuf_deinit(ib_strbuf *sb);
void ib_strbuf_reset(ib_strbuf *sb);
int ib_strbuf_reserve(ib_strbuf *sb, size_t extra);
int ib_strbuf_append(ib_strbuf *sb, const void *data, size_t len);
int ib_strbuf_puts(ib_strbuf *sb, const char *s);
int ib_strbuf_putc(ib_strbuf *sb, char c);
int ib_strbuf_printf(ib_strbuf *sb, const char *fmt, ...) IB_PRINTF(2, 3);
int ib_strbuf_vprintf(ib_strbuf *sb, const char *fmt, va_list ap);
/* The contents ("" if empty); valid until the next modification. */
const char *ib_strbuf_cstr(const ib_strbuf *sb);
/* Hand over the buffer (caller frees with ib_free); the strbuf becomes empty. */
char *ib_strbuf_detach(ib_strbuf *sb);

/* For a fixed buffer buf[cap] holding a list: append ", " (when *used > 0) and item,
 * truncated to fit; *used stays the string's length (at most cap - 1). */
void ib_cbuf_join(char *buf, size_t cap, size_t *used, const char *item);

#endif
