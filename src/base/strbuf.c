/*
 * strbuf.c - growable string buffer with geometric growth.
 */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"

void ib_strbuf_init(ib_strbuf *sb)
{
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->oom = 0;
}

void ib_strbuf_deinit(ib_strbuf *sb)
{
    ib_free(sb->data);
    ib_strbuf_init(sb);
}

void ib_strbuf_reset(ib_strbuf *sb)
{
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
}

int ib_strbuf_reserve(ib_strbuf *sb, size_t extra)
{
    if (sb->oom)
        return IB_ENOMEM;
    if (extra > SIZE_MAX - sb->len - 1) {
        sb->oom = 1;
        return IB_ENOMEM;
    }
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return IB_OK;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = ib_realloc(sb->data, cap);
    if (!p) {
        sb->oom = 1;
        return IB_ENOMEM;
    }
    sb->data = p;
    sb->cap = cap;
    return IB_OK;
}

int ib_strbuf_append(ib_strbuf *sb, const void *data, size_t len)
{
    if (ib_strbuf_reserve(sb, len))
        return IB_ENOMEM;
    if (len)
        memcpy(sb->data + sb->len, data, len);
    sb->len += len;
    sb->data[sb->len] = '\0';
    return IB_OK;
}

int ib_strbuf_puts(ib_strbuf *sb, const char *s)
{
    return ib_strbuf_append(sb, s, strlen(s));
}

int ib_strbuf_putc(ib_strbuf *sb, char c)
{
    return ib_strbuf_append(sb, &c, 1);
}

int ib_strbuf_vprintf(ib_strbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return IB_EINVAL;
    if (ib_strbuf_reserve(sb, (size_t)n))
        return IB_ENOMEM;
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
    return IB_OK;
}

int ib_strbuf_printf(ib_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ib_strbuf_vprintf(sb, fmt, ap);
    va_end(ap);
    return rc;
}

const char *ib_strbuf_cstr(const ib_strbuf *sb)
{
    return sb->data ? sb->data : "";
}

char *ib_strbuf_detach(ib_strbuf *sb)
{
    char *p = sb->data;
    if (!p)
        p = ib_strdup("");
    ib_strbuf_init(sb);
    return p;
}

void ib_cbuf_join(char *buf, size_t cap, size_t *used, const char *item)
{
    if (!cap || *used >= cap)
        return;
    int n = snprintf(buf + *used, cap - *used, "%s%s", *used ? ", " : "", item);
    *used = n < 0 ? *used : IB_MIN(cap - 1, *used + (size_t)n);
}
