/*
 * mllog.c - the detail-log reader (loadgen.md §3.2, §6 "parsers/loadgen_parser.py").
 *
 * Lines are split on '\n' and right-stripped like Python's str.rstrip(); the first line must
 * start with ":::MLLOG" and every marker line must hold one valid JSON object (jansson).
 * jansson stores integers as long long, so before parsing we rewrite integer literals above
 * INT64_MAX into a private string form and turn them back into exact uint64 values; this is
 * what keeps v1.1's schedule seed 10051496985653635065 exact. Records keep only scalar
 * values (arrays and objects are summarised by their size): the checks never need more.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "compliance/mllog.h"

#define MLLOG_MARKER ":::MLLOG"
#define MLLOG_MARKER_LEN 8
/* The private string form of a big unsigned integer: a NUL (impossible in accepted text, see
 * rewrite_bigints) followed by "u64:" and the digits. */
#define BIGINT_TAG "\\u0000u64:"
#define BIGINT_TAG_DECODED_LEN 5

struct ib_mllog {
    ib_arena arena;
    IB_VEC(ib_mllog_rec) recs;
    ib_strmap first; /* key -> index of its first record */
    size_t nerr, nwarn, skipped;
};

/* Compare a digit string (no sign, no leading zeros) with a decimal limit of equal length. */
static bool digits_le(const char *d, size_t n, const char *limit)
{
    size_t ln = strlen(limit);
    if (n != ln)
        return n < ln;
    return memcmp(d, limit, n) <= 0;
}

/*
 * Copy json text into out, rewriting integer literals that do not fit int64: those that fit
 * uint64 become the tagged string, the rest get ".0" appended (a real, as Python's int would
 * overflow nowhere but the checks only compare such values). *changed tells whether anything
 * was rewritten; *nul_escape whether a \u0000 escape occurs in a string (then a rewrite would
 * be ambiguous and the caller rejects the line).
 */
static int rewrite_bigints(const char *s, size_t n, ib_strbuf *out, bool *changed, bool *nul_escape)
{
    *changed = false;
    *nul_escape = false;
    size_t i = 0, copied = 0;
    bool in_str = false;
    while (i < n) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') {
                if (i + 5 < n && s[i + 1] == 'u' && !memcmp(s + i + 2, "0000", 4))
                    *nul_escape = true;
                i += 2;
                continue;
            }
            if (c == '"')
                in_str = false;
            i++;
            continue;
        }
        if (c == '"') {
            in_str = true;
            i++;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9')) {
            i++;
            continue;
        }
        size_t start = i;
        bool neg = c == '-';
        if (neg)
            i++;
        size_t dstart = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        size_t nd = i - dstart;
        bool is_int = !(i < n && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'));
        if (!is_int) {
            while (i < n && (s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+' ||
                             s[i] == '-' || (s[i] >= '0' && s[i] <= '9')))
                i++;
            continue;
        }
        /* leading zeros or a bare '-' are invalid JSON: leave them to jansson */
        if (nd == 0 || (nd > 1 && s[dstart] == '0'))
            continue;
        if (digits_le(s + dstart, nd, neg ? "9223372036854775808" : "9223372036854775807"))
            continue;
        ib_strbuf_append(out, s + copied, start - copied);
        if (!neg && digits_le(s + dstart, nd, "18446744073709551615")) {
            ib_strbuf_puts(out, "\"" BIGINT_TAG);
            ib_strbuf_append(out, s + dstart, nd);
            ib_strbuf_putc(out, '"');
        } else {
            ib_strbuf_append(out, s + start, i - start);
            ib_strbuf_puts(out, ".0");
        }
        copied = i;
        *changed = true;
    }
    if (*changed)
        ib_strbuf_append(out, s + copied, n - copied);
    return out->oom ? IB_ENOMEM : IB_OK;
}

/* Length of a valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || n > left || (c == 0xC0 || c == 0xC1) || c > 0xF4)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((p[k] & 0xC0) != 0x80)
            return 0;
    return n;
}

static bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(p + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

/* Convert a jansson value into the record's scalar fields. */
static int set_value(ib_mllog *log, ib_mllog_rec *r, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL: r->kind = IB_MLV_NULL; break;
    case JSON_TRUE:
    case JSON_FALSE:
        r->kind = IB_MLV_BOOL;
        r->b = json_is_true(v);
        break;
    case JSON_INTEGER:
        r->kind = IB_MLV_INT;
        r->i = (int64_t)json_integer_value(v);
        r->d = (double)r->i;
        break;
    case JSON_REAL:
        r->kind = IB_MLV_REAL;
        r->d = json_real_value(v);
        break;
    case JSON_STRING: {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        if (n > BIGINT_TAG_DECODED_LEN && s[0] == '\0' && !memcmp(s + 1, "u64:", 4)) {
            r->kind = IB_MLV_UINT;
            r->u = 0;
            for (size_t k = BIGINT_TAG_DECODED_LEN; k < n; k++)
                r->u = r->u * 10u + (uint64_t)(s[k] - '0');
            r->d = (double)r->u;
            break;
        }
        r->kind = IB_MLV_STRING;
        r->s = ib_arena_strndup(&log->arena, s, n);
        r->n = n;
        if (!r->s)
            return IB_ENOMEM;
        break;
    }
    case JSON_ARRAY:
        r->kind = IB_MLV_ARRAY;
        r->n = json_array_size(v);
        break;
    case JSON_OBJECT:
        r->kind = IB_MLV_OBJECT;
        r->n = json_object_size(v);
        break;
    }
    return IB_OK;
}

/* Parse one marker line's JSON text into a record. */
static int parse_record(ib_mllog *log, const char *json, size_t n, const char *origin,
                        size_t lineno, ib_strbuf *tmp, ib_err *err)
{
    bool changed, nul_escape;
    ib_strbuf_reset(tmp);
    if (rewrite_bigints(json, n, tmp, &changed, &nul_escape))
        return ib_err_set(err, IB_ENOMEM, "%s:%zu: out of memory", origin, lineno);
    if (changed && nul_escape)
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%zu: a \\u0000 escape and an integer above 2^63 on one line are "
                          "not supported; fix: regenerate the log with the LoadGen",
                          origin, lineno);
    json_error_t jerr;
    json_t *root = changed ? json_loadb(tmp->data, tmp->len, JSON_ALLOW_NUL, &jerr)
                           : json_loadb(json, n, 0, &jerr);
    if (!root)
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%zu: invalid JSON after " MLLOG_MARKER " (%s, column %d); fix: the "
                          "line is damaged or cut off - restore the file from the original run",
                          origin, lineno, jerr.text, jerr.column + MLLOG_MARKER_LEN);
    int rc = IB_EFORMAT;
    json_t *key = json_object_get(root, "key");
    json_t *val = json_object_get(root, "value");
    json_t *md = json_object_get(root, "metadata");
    json_t *ise = md ? json_object_get(md, "is_error") : NULL;
    json_t *isw = md ? json_object_get(md, "is_warning") : NULL;
    if (!json_is_object(root)) {
        ib_err_set(err, rc, "%s:%zu: the record is not a JSON object", origin, lineno);
    } else if (!json_is_string(key) || strlen(json_string_value(key)) != json_string_length(key)) {
        ib_err_set(err, rc, "%s:%zu: the record has no string \"key\"", origin, lineno);
    } else if (!val) {
        ib_err_set(err, rc, "%s:%zu: record \"%s\" has no \"value\"", origin, lineno,
                   json_string_value(key));
    } else if (!json_is_object(md) || !json_is_boolean(ise) || !json_is_boolean(isw)) {
        ib_err_set(err, rc,
                   "%s:%zu: record \"%s\" lacks metadata.is_error/is_warning booleans", origin,
                   lineno, json_string_value(key));
    } else {
        ib_mllog_rec r = {0};
        r.line = lineno;
        r.is_error = json_is_true(ise);
        r.is_warning = json_is_true(isw);
        r.key = ib_arena_strdup(&log->arena, json_string_value(key));
        rc = r.key ? set_value(log, &r, val) : IB_ENOMEM;
        if (rc == IB_OK && IB_VEC_PUSH(&log->recs, r))
            rc = IB_ENOMEM;
        if (rc == IB_OK) {
            int64_t idx;
            if (!ib_strmap_get(&log->first, r.key, &idx) &&
                ib_strmap_put(&log->first, r.key, (int64_t)(log->recs.len - 1)))
                rc = IB_ENOMEM;
            log->nerr += r.is_error;
            log->nwarn += r.is_warning;
        }
        if (rc == IB_ENOMEM)
            ib_err_set(err, rc, "%s:%zu: out of memory", origin, lineno);
    }
    json_decref(root);
    return rc;
}

int ib_mllog_parse(const char *text, size_t len, const char *origin, ib_mllog **out, ib_err *err)
{
    *out = NULL;
    if (!origin)
        origin = "mlperf_log_detail.txt";
    ib_mllog *log = ib_calloc(1, sizeof *log);
    if (!log)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
    ib_arena_init(&log->arena, 0);
    ib_strmap_init(&log->first);
    ib_strbuf tmp;
    ib_strbuf_init(&tmp);
    int rc = IB_OK;
    size_t lineno = 0, pos = 0;
    if (len == 0) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: the detail log is empty; fix: copy mlperf_log_detail.txt from the "
                        "run again",
                        origin);
        goto done;
    }
    while (pos < len && rc == IB_OK) {
        const char *ls = text + pos;
        const char *nl = memchr(ls, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - ls) : len - pos;
        pos += ll + (nl ? 1 : 0);
        lineno++;
        if (!utf8_valid(ls, ll)) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:%zu: the line is not valid UTF-8; fix: the file is damaged, "
                            "restore it from the original run",
                            origin, lineno);
            break;
        }
        while (ll > 0 && (ls[ll - 1] == ' ' || ls[ll - 1] == '\t' || ls[ll - 1] == '\r' ||
                          ls[ll - 1] == '\v' || ls[ll - 1] == '\f'))
            ll--;
        bool marked = ll >= MLLOG_MARKER_LEN && !memcmp(ls, MLLOG_MARKER, MLLOG_MARKER_LEN);
        if (lineno == 1 && !marked) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:1: the first line does not start with \"" MLLOG_MARKER
                            "\"; fix: this is not a LoadGen v1.0+ detail log (pass the "
                            "mlperf_log_detail.txt the LoadGen wrote)",
                            origin);
            break;
        }
        if (!marked) {
            log->skipped++;
            continue;
        }
        rc = parse_record(log, ls + MLLOG_MARKER_LEN, ll - MLLOG_MARKER_LEN, origin, lineno, &tmp,
                          err);
    }
done:
    ib_strbuf_deinit(&tmp);
    if (rc != IB_OK) {
        ib_mllog_destroy(log);
        return rc;
    }
    *out = log;
    return IB_OK;
}

int ib_mllog_load(const char *path, ib_mllog **out, ib_err *err)
{
    char *buf;
    size_t n;
    *out = NULL;
    int rc = ib_file_read_all(path, (size_t)1 << 30, &buf, &n, err);
    if (rc)
        return rc;
    rc = ib_mllog_parse(buf, n, path, out, err);
    ib_free(buf);
    return rc;
}

void ib_mllog_destroy(ib_mllog *log)
{
    if (!log)
        return;
    IB_VEC_FREE(&log->recs);
    ib_strmap_deinit(&log->first);
    ib_arena_deinit(&log->arena);
    ib_free(log);
}

size_t ib_mllog_count(const ib_mllog *log)
{
    return log->recs.len;
}

const ib_mllog_rec *ib_mllog_at(const ib_mllog *log, size_t i)
{
    return i < log->recs.len ? &log->recs.data[i] : NULL;
}

const ib_mllog_rec *ib_mllog_find(const ib_mllog *log, const char *key)
{
    int64_t idx;
    if (!ib_strmap_get(&log->first, key, &idx))
        return NULL;
    return &log->recs.data[idx];
}

size_t ib_mllog_num_errors(const ib_mllog *log)
{
    return log->nerr;
}

size_t ib_mllog_num_warnings(const ib_mllog *log)
{
    return log->nwarn;
}

size_t ib_mllog_skipped_lines(const ib_mllog *log)
{
    return log->skipped;
}

bool ib_mllog_get_u64(const ib_mllog *log, const char *key, uint64_t *out)
{
    const ib_mllog_rec *r = ib_mllog_find(log, key);
    if (!r)
        return false;
    if (r->kind == IB_MLV_UINT) {
        *out = r->u;
        return true;
    }
    if (r->kind == IB_MLV_INT && r->i >= 0) {
        *out = (uint64_t)r->i;
        return true;
    }
    return false;
}

bool ib_mllog_get_i64(const ib_mllog *log, const char *key, int64_t *out)
{
    const ib_mllog_rec *r = ib_mllog_find(log, key);
    if (!r || r->kind != IB_MLV_INT)
        return false;
    *out = r->i;
    return true;
}

bool ib_mllog_get_double(const ib_mllog *log, const char *key, double *out)
{
    const ib_mllog_rec *r = ib_mllog_find(log, key);
    if (!r || (r->kind != IB_MLV_INT && r->kind != IB_MLV_UINT && r->kind != IB_MLV_REAL))
        return false;
    *out = r->d;
    return true;
}

bool ib_mllog_get_bool(const ib_mllog *log, const char *key, bool *out)
{
    const ib_mllog_rec *r = ib_mllog_find(log, key);
    if (!r || r->kind != IB_MLV_BOOL)
        return false;
    *out = r->b;
    return true;
}

const char *ib_mllog_get_str(const ib_mllog *log, const char *key)
{
    const ib_mllog_rec *r = ib_mllog_find(log, key);
    return r && r->kind == IB_MLV_STRING ? r->s : NULL;
}

void ib_mllog_value_text(const ib_mllog_rec *r, char *buf, size_t n)
{
    if (!r) {
        snprintf(buf, n, "(absent)");
        return;
    }
    switch (r->kind) {
    case IB_MLV_NULL: snprintf(buf, n, "null"); break;
    case IB_MLV_BOOL: snprintf(buf, n, "%s", r->b ? "true" : "false"); break;
    case IB_MLV_INT: snprintf(buf, n, "%lld", (long long)r->i); break;
    case IB_MLV_UINT: snprintf(buf, n, "%llu", (unsigned long long)r->u); break;
    case IB_MLV_REAL: snprintf(buf, n, "%.9g", r->d); break;
    case IB_MLV_STRING: snprintf(buf, n, "\"%.200s\"", r->s); break;
    case IB_MLV_ARRAY: snprintf(buf, n, "a list of %zu values", r->n); break;
    case IB_MLV_OBJECT: snprintf(buf, n, "an object of %zu fields", r->n); break;
    }
}
