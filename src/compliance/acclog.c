/*
 * acclog.c - a streaming-free but allocation-light parser for mlperf_log_accuracy.json.
 *
 * Accuracy logs reach gigabytes (DLRM, loadgen.md §7 "Log size"), so instead of building a
 * jansson tree we scan the array with a small hand-written JSON cursor that records, per
 * entry, the qsl_idx, seq_id and a pointer to the hex payload inside the file buffer. Other
 * members are skipped with an iterative (depth-counted) skipper, so hostile nesting cannot
 * exhaust the stack. A truncated log (truncate_accuracy_log.py) is read line by line instead.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "base/vec.h"
#include "compliance/acclog.h"

struct ib_acclog {
    char *buf;
    size_t len;
    bool truncated;
    IB_VEC(ib_acclog_entry) entries;
};

typedef struct cursor {
    const char *s;
    size_t n, i;
    const char *origin;
    ib_err *err;
    size_t lpos, lline; /* line counting resumes from here (keeps line_of linear) */
} cursor;

int ib_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static size_t line_of(cursor *c, size_t pos)
{
    if (pos < c->lpos || c->lline == 0) {
        c->lpos = 0;
        c->lline = 1;
    }
    for (; c->lpos < pos && c->lpos < c->n; c->lpos++)
        c->lline += c->s[c->lpos] == '\n';
    return c->lline;
}

static int fail(cursor *c, const char *what)
{
    return ib_err_set(c->err, IB_EFORMAT,
                      "%s:%zu: %s; fix: the accuracy log is damaged - restore "
                      "mlperf_log_accuracy.json from the run",
                      c->origin, line_of(c, c->i), what);
}

static void skip_ws(cursor *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\n' || c->s[c->i] == '\r' ||
                           c->s[c->i] == '\t'))
        c->i++;
}

/* Scan a JSON string starting at '"'; sets [*b, *e) to its raw contents. */
static int scan_string(cursor *c, size_t *b, size_t *e, bool *escaped)
{
    if (c->i >= c->n || c->s[c->i] != '"')
        return fail(c, "expected a string");
    size_t k = ++c->i;
    *escaped = false;
    while (k < c->n && c->s[k] != '"') {
        unsigned char ch = (unsigned char)c->s[k];
        if (ch < 0x20) {
            c->i = k;
            return fail(c, "control character inside a string");
        }
        if (ch == '\\') {
            *escaped = true;
            k++;
        }
        k++;
    }
    if (k >= c->n) {
        c->i = c->n;
        return fail(c, "unterminated string (the file ends inside it)");
    }
    *b = c->i;
    *e = k;
    c->i = k + 1;
    return IB_OK;
}

/* Scan a JSON number; *is_uint and *u when it is a plain non-negative integer < 2^64. */
static int scan_number(cursor *c, bool *is_uint, uint64_t *u)
{
    size_t k = c->i;
    *is_uint = true;
    *u = 0;
    if (k < c->n && c->s[k] == '-') {
        *is_uint = false;
        k++;
    }
    size_t d0 = k;
    while (k < c->n && c->s[k] >= '0' && c->s[k] <= '9') {
        uint64_t digit = (uint64_t)(c->s[k] - '0');
        if (*u > (UINT64_MAX - digit) / 10)
            *is_uint = false;
        else
            *u = *u * 10 + digit;
        k++;
    }
    if (k == d0)
        return fail(c, "invalid number");
    if (k - d0 > 1 && c->s[d0] == '0')
        return fail(c, "number with a leading zero");
    if (k < c->n && (c->s[k] == '.' || c->s[k] == 'e' || c->s[k] == 'E')) {
        *is_uint = false;
        k++;
        while (k < c->n && ((c->s[k] >= '0' && c->s[k] <= '9') || c->s[k] == 'e' ||
                            c->s[k] == 'E' || c->s[k] == '+' || c->s[k] == '-'))
            k++;
    }
    c->i = k;
    return IB_OK;
}

static int expect_word(cursor *c, const char *w)
{
    size_t n = strlen(w);
    if (c->n - c->i < n || memcmp(c->s + c->i, w, n))
        return fail(c, "invalid literal");
    c->i += n;
    return IB_OK;
}

/* Skip one object member name and its ':' (at c->i, after whitespace). */
static int skip_member_name(cursor *c)
{
    size_t b, e;
    bool esc;
    skip_ws(c);
    int rc = scan_string(c, &b, &e, &esc);
    if (rc)
        return rc;
    skip_ws(c);
    if (c->i >= c->n || c->s[c->i] != ':')
        return fail(c, "expected ':' after a member name");
    c->i++;
    return IB_OK;
}

/* Skip any JSON value; open containers live on a small explicit stack, not the C stack. */
static int skip_value(cursor *c)
{
    char stack[256]; /* '{' or '[' per open container */
    size_t depth = 0;
    for (;;) {
        skip_ws(c);
        if (c->i >= c->n)
            return fail(c, "the file ends inside a value");
        char ch = c->s[c->i];
        int rc = IB_OK;
        size_t b, e;
        bool esc, isu;
        uint64_t u;
        if (ch == '{' || ch == '[') {
            if (depth == sizeof stack)
                return fail(c, "values nested more than 256 levels deep");
            stack[depth++] = ch;
            c->i++;
            skip_ws(c);
            if (c->i < c->n && c->s[c->i] == (ch == '{' ? '}' : ']')) {
                c->i++;
                depth--;
            } else {
                if (ch == '{' && (rc = skip_member_name(c)))
                    return rc;
                continue;
            }
        } else if (ch == '"') {
            rc = scan_string(c, &b, &e, &esc);
        } else if (ch == 't') {
            rc = expect_word(c, "true");
        } else if (ch == 'f') {
            rc = expect_word(c, "false");
        } else if (ch == 'n') {
            rc = expect_word(c, "null");
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            rc = scan_number(c, &isu, &u);
        } else {
            return fail(c, "unexpected character");
        }
        if (rc)
            return rc;
        /* after a value: close containers, or step to the next element */
        for (;;) {
            if (depth == 0)
                return IB_OK;
            skip_ws(c);
            if (c->i >= c->n)
                return fail(c, "the file ends inside a value");
            char t = c->s[c->i];
            char close = stack[depth - 1] == '{' ? '}' : ']';
            if (t == close) {
                c->i++;
                depth--;
                continue;
            }
            if (t != ',')
                return fail(c, "expected ',' or a closing bracket");
            c->i++;
            if (stack[depth - 1] == '{' && (rc = skip_member_name(c)))
                return rc;
            break;
        }
    }
}

/* Parse one entry object at c->i ('{'). */
static int parse_entry(cursor *c, ib_acclog_entry *out)
{
    memset(out, 0, sizeof *out);
    out->line = line_of(c, c->i);
    bool have_idx = false, have_data = false;
    c->i++;
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == '}') {
        c->i++;
        return fail(c, "an entry without \"qsl_idx\" and \"data\"");
    }
    for (;;) {
        size_t b, e;
        bool esc;
        skip_ws(c);
        int rc = scan_string(c, &b, &e, &esc);
        if (rc)
            return rc;
        skip_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':')
            return fail(c, "expected ':' after a member name");
        c->i++;
        skip_ws(c);
        size_t kl = e - b;
        const char *k = c->s + b;
        bool is_idx = !esc && kl == 7 && !memcmp(k, "qsl_idx", 7);
        bool is_seq = !esc && kl == 6 && !memcmp(k, "seq_id", 6);
        bool is_data = !esc && kl == 4 && !memcmp(k, "data", 4);
        if (is_idx || is_seq) {
            bool isu;
            uint64_t u;
            if (c->i >= c->n || (c->s[c->i] != '-' && (c->s[c->i] < '0' || c->s[c->i] > '9')))
                return fail(c, is_idx ? "\"qsl_idx\" is not a number" : "\"seq_id\" is not a number");
            if ((rc = scan_number(c, &isu, &u)))
                return rc;
            if (!isu)
                return fail(c, is_idx ? "\"qsl_idx\" is not a non-negative integer"
                                      : "\"seq_id\" is not a non-negative integer");
            if (is_idx) {
                out->qsl_idx = u;
                have_idx = true;
            } else {
                out->seq_id = u;
                out->has_seq_id = true;
            }
        } else if (is_data) {
            bool desc;
            if ((rc = scan_string(c, &b, &e, &desc)))
                return rc;
            if (desc)
                return fail(c, "\"data\" contains an escape; it must be plain hex digits");
            if ((e - b) % 2)
                return fail(c, "\"data\" has an odd number of hex digits");
            for (size_t q = b; q < e; q++)
                if (ib_hexval(c->s[q]) < 0) {
                    c->i = q;
                    return fail(c, "\"data\" contains a character that is not a hex digit");
                }
            out->data = c->s + b;
            out->data_len = e - b;
            have_data = true;
        } else if ((rc = skip_value(c))) {
            return rc;
        }
        skip_ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->s[c->i] == '}') {
            c->i++;
            break;
        }
        return fail(c, "expected ',' or '}' in an entry");
    }
    if (!have_idx || !have_data)
        return fail(c, have_idx ? "an entry without \"data\"" : "an entry without \"qsl_idx\"");
    return IB_OK;
}

static int parse_full(ib_acclog *log, cursor *c)
{
    skip_ws(c);
    if (c->i >= c->n || c->s[c->i] != '[')
        return fail(c, "the accuracy log does not start with '['");
    c->i++;
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == ']') {
        c->i++;
    } else {
        for (;;) {
            skip_ws(c);
            if (c->i >= c->n)
                return fail(c, "the file ends before the closing ']'");
            if (c->s[c->i] != '{')
                return fail(c, "expected an entry object '{'");
            ib_acclog_entry e;
            int rc = parse_entry(c, &e);
            if (rc)
                return rc;
            if (IB_VEC_PUSH(&log->entries, e))
                return ib_err_set(c->err, IB_ENOMEM, "%s: out of memory", c->origin);
            skip_ws(c);
            if (c->i < c->n && c->s[c->i] == ',') {
                c->i++;
                continue;
            }
            if (c->i < c->n && c->s[c->i] == ']') {
                c->i++;
                break;
            }
            return fail(c, c->i >= c->n ? "the file ends before the closing ']'"
                                        : "expected ',' or ']' after an entry");
        }
    }
    skip_ws(c);
    if (c->i != c->n)
        return fail(c, "extra data after the closing ']'");
    return IB_OK;
}

/* Recover the complete entry lines of a truncated log. */
static int parse_truncated(ib_acclog *log, cursor *c)
{
    size_t pos = 0, lineno = 1;
    for (; pos < c->n; lineno++) {
        const char *nl = memchr(c->s + pos, '\n', c->n - pos);
        size_t end = nl ? (size_t)(nl - c->s) : c->n;
        size_t b = pos, e = end;
        while (b < e && (c->s[b] == ' ' || c->s[b] == '\t' || c->s[b] == '\r'))
            b++;
        while (e > b && (c->s[e - 1] == ' ' || c->s[e - 1] == '\t' || c->s[e - 1] == '\r'))
            e--;
        if (e > b && c->s[e - 1] == ',')
            e--;
        if (e - b >= 2 && c->s[b] == '{' && c->s[e - 1] == '}') {
            cursor lc = *c;
            lc.n = e; /* the entry ends where its line ends */
            lc.i = b;
            lc.lpos = b; /* line counting starts at this line */
            lc.lline = lineno;
            ib_err ignored;
            lc.err = &ignored;
            ib_acclog_entry ent;
            if (parse_entry(&lc, &ent) == IB_OK && lc.i == e) {
                if (IB_VEC_PUSH(&log->entries, ent))
                    return ib_err_set(c->err, IB_ENOMEM, "%s: out of memory", c->origin);
            }
        }
        pos = end + 1;
    }
    return IB_OK;
}

bool ib_acclog_text_is_truncated(const char *text, size_t len)
{
    size_t ml = strlen(IB_ACCLOG_TRUNC_MARK);
    if (len > IB_ACCLOG_MAX_SUBMITTED || len < ml)
        return false;
    for (size_t k = 0; k + ml <= len; k++)
        if (text[k] == '\n' && !memcmp(text + k, IB_ACCLOG_TRUNC_MARK, ml))
            return true;
    return false;
}

/* Parse log->buf (owned by log); on failure log is destroyed. */
static int parse_owned(ib_acclog *log, const char *origin, ib_acclog **out, ib_err *err)
{
    cursor c = {log->buf, log->len, 0, origin, err, 0, 1};
    int rc = parse_full(log, &c);
    if (rc == IB_EFORMAT && ib_acclog_text_is_truncated(log->buf, log->len)) {
        log->entries.len = 0;
        log->truncated = true;
        ib_err_clear(err);
        cursor t = {log->buf, log->len, 0, origin, err, 0, 1};
        rc = parse_truncated(log, &t);
    }
    if (rc) {
        ib_acclog_destroy(log);
        return rc;
    }
    *out = log;
    return IB_OK;
}

int ib_acclog_parse(const char *text, size_t len, const char *origin, ib_acclog **out, ib_err *err)
{
    *out = NULL;
    if (!origin)
        origin = "mlperf_log_accuracy.json";
    ib_acclog *log = ib_calloc(1, sizeof *log);
    char *buf = ib_malloc(len + 1);
    if (!log || !buf) {
        ib_free(log);
        ib_free(buf);
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
    }
    if (len)
        memcpy(buf, text, len);
    buf[len] = '\0';
    log->buf = buf;
    log->len = len;
    return parse_owned(log, origin, out, err);
}

int ib_acclog_load(const char *path, ib_acclog **out, ib_err *err)
{
    char *buf;
    size_t n;
    *out = NULL;
    int rc = ib_file_read_all(path, 0, &buf, &n, err);
    if (rc)
        return rc;
    /* hand the buffer over instead of copying a possibly huge file */
    ib_acclog *log = ib_calloc(1, sizeof *log);
    if (!log) {
        ib_free(buf);
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", path);
    }
    log->buf = buf;
    log->len = n;
    return parse_owned(log, path, out, err);
}

void ib_acclog_destroy(ib_acclog *log)
{
    if (!log)
        return;
    IB_VEC_FREE(&log->entries);
    ib_free(log->buf);
    ib_free(log);
}

size_t ib_acclog_count(const ib_acclog *log)
{
    return log->entries.len;
}

const ib_acclog_entry *ib_acclog_at(const ib_acclog *log, size_t i)
{
    return i < log->entries.len ? &log->entries.data[i] : NULL;
}

bool ib_acclog_truncated(const ib_acclog *log)
{
    return log->truncated;
}

size_t ib_acclog_size(const ib_acclog *log)
{
    return log->len;
}
