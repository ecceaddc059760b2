/*
 * logwriter.c - :::MLLOG detail records with the official field order and
 * value types (loadgen.md §3.2, logging.h AsyncLog::LogDetail).
 *
 * Differences from the official writer, on purpose: strings are JSON-escaped
 * (the official pastes them verbatim, which can break the checker's JSON
 * parse), non-finite doubles are written as null instead of inf/nan, and the
 * time base is CLOCK_MONOTONIC. Records are formatted on the main thread into
 * a buffer and written between phases, so the issue path never waits on I/O.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/json_writer.h"
#include "base/thread.h"
#include "base/time.h"
#include "loadgen/logwriter.h"

void ib_lg_detail_init(ib_lg_detail *d, FILE *out, bool copy_stdout, int64_t origin_ns)
{
    memset(d, 0, sizeof *d);
    ib_strbuf_init(&d->buf);
    d->out = out;
    d->copy_stdout = copy_stdout;
    d->origin_ns = origin_ns;
    d->pid = (long)getpid();
}

void ib_lg_detail_deinit(ib_lg_detail *d)
{
    ib_strbuf_deinit(&d->buf);
}

int ib_lg_fmt_double(double v, char *buf, size_t n)
{
    if (!isfinite(v))
        return snprintf(buf, n, "%s", isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
    return snprintf(buf, n, "%.6g", v);
}

/* Everything before the value. */
static void begin(ib_lg_detail *d, const char *key)
{
    ib_strbuf *b = &d->buf;
    ib_strbuf_puts(b, ":::MLLOG {\"key\": \"");
    ib_json_escape(b, key, strlen(key));
    ib_strbuf_puts(b, "\", \"value\": ");
}

/* Everything after the value. */
static void end(ib_lg_detail *d, ib_lg_rec_kind k, int64_t time_ns, const char *file, int line)
{
    if (time_ns < 0)
        time_ns = ib_time_ns();
    int64_t rel = time_ns - d->origin_ns;
    if (rel < 0)
        rel = 0;
    ib_strbuf_printf(&d->buf,
                     ", \"time_ms\": %lld.%06lld, \"namespace\": \"mlperf::logging\", "
                     "\"event_type\": \"POINT_IN_TIME\", \"metadata\": {\"is_error\": %s, "
                     "\"is_warning\": %s, \"file\": \"",
                     (long long)(rel / 1000000), (long long)(rel % 1000000),
                     k == IB_LG_REC_ERROR ? "true" : "false",
                     k == IB_LG_REC_WARNING ? "true" : "false");
    ib_json_escape(&d->buf, file, strlen(file));
    ib_strbuf_printf(&d->buf, "\", \"line_no\": %d, \"pid\": %ld, \"tid\": %ld}}\n", line, d->pid,
                     ib_thread_os_id());
    if (k == IB_LG_REC_ERROR)
        d->errors++;
    else if (k == IB_LG_REC_WARNING)
        d->warnings++;
    d->records++;
    if (d->buf.oom)
        d->oom = IB_ENOMEM;
}

void ib_lg_detail_str(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, const char *value,
                      int64_t time_ns, const char *file, int line)
{
    begin(d, key);
    ib_strbuf_putc(&d->buf, '"');
    if (value)
        ib_json_escape(&d->buf, value, strlen(value));
    ib_strbuf_putc(&d->buf, '"');
    end(d, k, time_ns, file, line);
}

void ib_lg_detail_int(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, int64_t value,
                      int64_t time_ns, const char *file, int line)
{
    begin(d, key);
    ib_strbuf_printf(&d->buf, "%lld", (long long)value);
    end(d, k, time_ns, file, line);
}

void ib_lg_detail_uint(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, uint64_t value,
                       int64_t time_ns, const char *file, int line)
{
    begin(d, key);
    ib_strbuf_printf(&d->buf, "%llu", (unsigned long long)value);
    end(d, k, time_ns, file, line);
}

void ib_lg_detail_double(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, double value,
                         int64_t time_ns, const char *file, int line)
{
    begin(d, key);
    if (isfinite(value)) {
        char tmp[64];
        ib_lg_fmt_double(value, tmp, sizeof tmp);
        ib_strbuf_puts(&d->buf, tmp);
    } else {
        ib_strbuf_puts(&d->buf, "null");
    }
    end(d, k, time_ns, file, line);
}

void ib_lg_detail_bool(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, bool value,
                       int64_t time_ns, const char *file, int line)
{
    begin(d, key);
    ib_strbuf_puts(&d->buf, value ? "true" : "false");
    end(d, k, time_ns, file, line);
}

void ib_lg_detail_raw(ib_lg_detail *d, ib_lg_rec_kind k, const char *key, const char *json,
                      size_t json_len, int64_t time_ns, const char *file, int line)
{
    begin(d, key);
    ib_strbuf_append(&d->buf, json, json_len);
    end(d, k, time_ns, file, line);
}

void ib_lg_detail_index_list(ib_lg_detail *d, const char *key, const size_t *v, size_t n,
                             int64_t time_ns, const char *file, int line)
{
    begin(d, key);
    ib_strbuf_reserve(&d->buf, n * 8 + 2);
    ib_strbuf_putc(&d->buf, '[');
    char tmp[24];
    for (size_t i = 0; i < n; i++) {
        /* hand-rolled decimal: loaded sets can hold millions of entries */
        char *p = tmp + sizeof tmp;
        size_t x = v[i];
        do {
            *--p = (char)('0' + x % 10);
            x /= 10;
        } while (x);
        if (i)
            ib_strbuf_putc(&d->buf, ',');
        ib_strbuf_append(&d->buf, p, (size_t)(tmp + sizeof tmp - p));
    }
    ib_strbuf_putc(&d->buf, ']');
    end(d, IB_LG_REC_NORMAL, time_ns, file, line);
}

int ib_lg_detail_flush(ib_lg_detail *d)
{
    if (d->oom)
        return d->oom;
    if (d->io_error)
        return d->io_error;
    if (d->buf.len == 0)
        return IB_OK;
    if (d->out) {
        if (fwrite(d->buf.data, 1, d->buf.len, d->out) != d->buf.len || fflush(d->out) != 0)
            d->io_error = IB_EIO;
    }
    if (d->copy_stdout) {
        fwrite(d->buf.data, 1, d->buf.len, stdout);
        fflush(stdout);
    }
    ib_strbuf_reset(&d->buf);
    return d->io_error;
}
