/*
 * json_writer.c - streaming JSON emission with comma/nesting bookkeeping.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/json_writer.h"
#include "base/pyfmt.h"

void ib_jw_init(ib_jw *jw, ib_strbuf *out, bool pretty)
{
    memset(jw, 0, sizeof *jw);
    jw->out = out;
    jw->pretty = pretty;
}

static void put(ib_jw *jw, const char *s, size_t n)
{
    if (ib_strbuf_append(jw->out, s, n))
        jw->err = IB_ENOMEM;
}

static void newline(ib_jw *jw)
{
    if (!jw->pretty)
        return;
    put(jw, "\n", 1);
    for (int i = 0; i < jw->depth; i++)
        put(jw, "  ", 2);
}

/* Called before every value or key: emits the comma and indentation. */
static void before_item(ib_jw *jw, bool is_key)
{
    if (jw->after_key) {
        if (is_key)
            jw->err = IB_EINVAL;
        jw->after_key = false;
        return;
    }
    if (jw->depth > 0) {
        if (jw->in_object[jw->depth] && !is_key)
            jw->err = IB_EINVAL; /* value without key inside an object */
        if (jw->need_comma[jw->depth])
            put(jw, ",", 1);
        jw->need_comma[jw->depth] = true;
        newline(jw);
    }
}

static void open(ib_jw *jw, char c, bool obj)
{
    before_item(jw, false);
    put(jw, &c, 1);
    if (jw->depth + 1 >= IB_JW_MAX_DEPTH) {
        jw->err = IB_EINVAL;
        return;
    }
    jw->depth++;
    jw->need_comma[jw->depth] = false;
    jw->in_object[jw->depth] = obj;
}

static void close_(ib_jw *jw, char c, bool obj)
{
    if (jw->depth == 0 || jw->in_object[jw->depth] != obj || jw->after_key) {
        jw->err = IB_EINVAL;
        return;
    }
    bool had = jw->need_comma[jw->depth];
    jw->depth--;
    if (had)
        newline(jw);
    put(jw, &c, 1);
}

void ib_jw_object_begin(ib_jw *jw)
{
    open(jw, '{', true);
}
void ib_jw_object_end(ib_jw *jw)
{
    close_(jw, '}', true);
}
void ib_jw_array_begin(ib_jw *jw)
{
    open(jw, '[', false);
}
void ib_jw_array_end(ib_jw *jw)
{
    close_(jw, ']', false);
}

int ib_json_escape(ib_strbuf *sb, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[7];
        const char *e = NULL;
        size_t el = 2;
        switch (c) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        default:
            if (c < 0x20) {
                esc[0] = '\\', esc[1] = 'u', esc[2] = '0', esc[3] = '0';
                esc[4] = hex[c >> 4], esc[5] = hex[c & 15], esc[6] = 0;
                e = esc;
                el = 6;
            }
        }
        int rc = e ? ib_strbuf_append(sb, e, el) : ib_strbuf_putc(sb, (char)c);
        if (rc)
            return rc;
    }
    return IB_OK;
}

void ib_jw_key(ib_jw *jw, const char *key)
{
    if (jw->depth == 0 || !jw->in_object[jw->depth]) {
        jw->err = IB_EINVAL;
        return;
    }
    before_item(jw, true);
    put(jw, "\"", 1);
    if (ib_json_escape(jw->out, key, strlen(key)))
        jw->err = IB_ENOMEM;
    put(jw, jw->pretty ? "\": " : "\":", jw->pretty ? 3 : 2);
    jw->after_key = true;
}

void ib_jw_string_n(ib_jw *jw, const char *s, size_t n)
{
    before_item(jw, false);
    put(jw, "\"", 1);
    if (ib_json_escape(jw->out, s, n))
        jw->err = IB_ENOMEM;
    put(jw, "\"", 1);
}

void ib_jw_string(ib_jw *jw, const char *s)
{
    if (!s) {
        ib_jw_null(jw);
        return;
    }
    ib_jw_string_n(jw, s, strlen(s));
}

static void put_fmt(ib_jw *jw, const char *buf)
{
    before_item(jw, false);
    put(jw, buf, strlen(buf));
}

void ib_jw_int(ib_jw *jw, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    put_fmt(jw, buf);
}

void ib_jw_uint(ib_jw *jw, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    put_fmt(jw, buf);
}

void ib_jw_double_g(ib_jw *jw, double v, int precision)
{
    char buf[64];
    if (!isfinite(v)) {
        put_fmt(jw, "null");
        return;
    }
    snprintf(buf, sizeof buf, "%.*g", precision, v);
    put_fmt(jw, buf);
}

void ib_jw_double(ib_jw *jw, double v)
{
    /* the shortest text that reads back to v (Python's repr, as json.dumps writes it):
     * 76.46, not %.17g's 76.459999999999994 */
    char buf[40];
    if (!isfinite(v)) {
        put_fmt(jw, "null");
        return;
    }
    ib_py_float_repr(v, buf, sizeof buf);
    put_fmt(jw, buf);
}

void ib_jw_bool(ib_jw *jw, bool v)
{
    put_fmt(jw, v ? "true" : "false");
}

void ib_jw_null(ib_jw *jw)
{
    put_fmt(jw, "null");
}

void ib_jw_raw(ib_jw *jw, const char *json)
{
    put_fmt(jw, json);
}

int ib_jw_finish(ib_jw *jw)
{
    if (jw->err)
        return jw->err;
    if (jw->depth != 0 || jw->after_key)
        return IB_EINVAL;
    if (jw->out->oom)
        return IB_ENOMEM;
    return IB_OK;
}
