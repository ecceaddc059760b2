/*
 * wer.c - RNN-T transcript normalisation and word error rate (wer.h), following the
 * reference speech_recognition/rnnt: pytorch/parts/manifest.py (normalize_string, the
 * punctuation table), pytorch/parts/text/cleaners.py (english_cleaners), pytorch/helpers.py
 * (ids -> text), pytorch/metrics.py (__levenshtein, word_error_rate) and accuracy_eval.py
 * (the printed line).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/pyfmt.h"
#include "base/strbuf.h"
#include "metrics/wer.h"

/* Python's str whitespace in the ASCII range (str.split(), re's \s): \t\n\v\f\r, \x1c-\x1f
 * and the space. */
static int py_space(unsigned char c)
{
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
}

static int word_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* unidecode for the Latin-1 letters U+00C0..U+00FF (index c - 0xC0). */
static const char *const k_latin1[64] = {
    "A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I",  "I",
    "D", "N", "O", "O", "O", "O", "O",  "x", "O", "U", "U", "U", "U", "Y", "Th", "ss",
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",  "i",
    "d", "n", "o", "o", "o", "o", "o",  "/", "o", "u", "u", "u", "u", "y", "th", "y",
};

/* Decode one UTF-8 code point at s (advance *len); -1 when malformed. */
static long utf8_next(const unsigned char *s, size_t *len)
{
    unsigned c = s[0];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!n)
        return -1;
    long cp = n == 1 ? (long)c : (long)(c & (0x7f >> n));
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    *len = (size_t)n;
    return cp;
}

/* convert_to_ascii (unidecode, Latin-1 letters, spaces and quotes only) + lowercase. */
static int to_ascii_lower(const char *s, ib_strbuf *o)
{
    const unsigned char *p = (const unsigned char *)s;
    int rc = IB_OK;
    while (*p && !rc) {
        size_t len = 1;
        long cp = utf8_next(p, &len);
        const char *rep = NULL;
        char one[2] = {0, 0};
        if (cp < 0) {
            len = 1; /* a stray byte: dropped (not a label) */
        } else if (cp < 0x80) {
            one[0] = (char)cp;
            rep = one;
        } else if (cp >= 0xC0 && cp <= 0xFF) {
            rep = k_latin1[cp - 0xC0];
        } else if (cp == 0xA0 || cp == 0x2009 || cp == 0x202F) {
            rep = " ";
        } else if (cp == 0x2018 || cp == 0x2019) {
            rep = "'";
        } else if (cp == 0x201C || cp == 0x201D) {
            rep = "\"";
        } else if (cp == 0x2013 || cp == 0x2014) {
            rep = "-";
        }
        for (const char *r = rep; r && *r && !rc; r++) {
            char c = *r;
            if (c >= 'A' && c <= 'Z')
                c = (char)(c - 'A' + 'a');
            rc = ib_strbuf_putc(o, c);
        }
        p += len;
    }
    return rc;
}

/* cleaners.py _abbreviations, in list order: re.sub(r"\b<abbr>\.", expansion, IGNORECASE)
 * on the lowercased text. */
static const char *const k_abbr[][2] = {
    {"mrs", "misess"}, {"mr", "mister"},     {"dr", "doctor"},    {"st", "saint"},
    {"co", "company"}, {"jr", "junior"},     {"maj", "major"},    {"gen", "general"},
    {"drs", "doctors"}, {"rev", "reverend"}, {"lt", "lieutenant"}, {"hon", "honorable"},
    {"sgt", "sergeant"}, {"capt", "captain"}, {"esq", "esquire"}, {"ltd", "limited"},
    {"col", "colonel"}, {"ft", "fort"},
};

static int expand_abbreviations(ib_strbuf *io)
{
    ib_strbuf tmp;
    ib_strbuf_init(&tmp);
    int rc = IB_OK;
    for (size_t k = 0; k < IB_ARRAY_LEN(k_abbr) && !rc; k++) {
        const char *a = k_abbr[k][0];
        size_t al = strlen(a), n = io->len;
        const char *s = io->data ? io->data : "";
        ib_strbuf_reset(&tmp);
        for (size_t i = 0; i < n && !rc;) {
            if ((i == 0 || !word_char((unsigned char)s[i - 1])) && i + al < n &&
                memcmp(s + i, a, al) == 0 && s[i + al] == '.') {
                rc = ib_strbuf_puts(&tmp, k_abbr[k][1]);
                i += al + 1;
            } else {
                rc = ib_strbuf_putc(&tmp, s[i++]);
            }
        }
        if (!rc) {
            ib_strbuf_reset(io);
            rc = ib_strbuf_append(io, tmp.data ? tmp.data : "", tmp.len);
        }
    }
    ib_strbuf_deinit(&tmp);
    return rc;
}

/* manifest.py's table: string.punctuation minus '+', '&' and the labels (' ' and '\''),
 * each mapped to a space. */
static int is_table_punct(unsigned char c)
{
    return c != '+' && c != '&' && c != '\'' && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) &&
           c != '\0';
}

static int in_labels(unsigned char c)
{
    return c == ' ' || c == '\'' || (c >= 'a' && c <= 'z');
}

char *ib_wer_normalize(const char *s)
{
    ib_strbuf a, b;
    ib_strbuf_init(&a);
    ib_strbuf_init(&b);
    int rc = to_ascii_lower(s ? s : "", &a);
    /* expand_numbers: not applied (digits are dropped below; see wer.h) */
    if (!rc)
        rc = expand_abbreviations(&a);
    /* remove_punctuation: translate(table), then "&" -> " and ", "+" -> " plus " */
    for (size_t i = 0; i < a.len && !rc; i++) {
        unsigned char c = (unsigned char)a.data[i];
        if (is_table_punct(c))
            rc = ib_strbuf_putc(&b, ' ');
        else if (c == '&')
            rc = ib_strbuf_puts(&b, " and ");
        else if (c == '+')
            rc = ib_strbuf_puts(&b, " plus ");
        else
            rc = ib_strbuf_putc(&b, (char)c);
    }
    /* collapse_whitespace, strip, then keep only label characters (good_token) */
    ib_strbuf_reset(&a);
    size_t i = 0, n = b.len;
    while (i < n && py_space((unsigned char)b.data[i]))
        i++;
    while (n > i && py_space((unsigned char)b.data[n - 1]))
        n--;
    int in_space = 0;
    for (; i < n && !rc; i++) {
        unsigned char c = (unsigned char)b.data[i];
        if (py_space(c)) {
            if (!in_space)
                rc = ib_strbuf_putc(&a, ' ');
            in_space = 1;
            continue;
        }
        in_space = 0;
        if (in_labels(c))
            rc = ib_strbuf_putc(&a, (char)c);
    }
    char *out = NULL;
    if (!rc) {
        out = ib_malloc(a.len + 1);
        if (out) {
            if (a.len)
                memcpy(out, a.data, a.len);
            out[a.len] = '\0';
        }
    }
    ib_strbuf_deinit(&a);
    ib_strbuf_deinit(&b);
    return out;
}

int ib_wer_ids_to_text(const int64_t *ids, size_t n, char **out, ib_err *err)
{
    *out = ib_malloc(n + 1);
    if (!*out)
        return ib_err_set(err, IB_ENOMEM, "wer: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= IB_WER_N_LABELS) {
            ib_free(*out);
            *out = NULL;
            return ib_err_set(err, IB_EFORMAT,
                              "wer: token %zu is id %lld, not a label id 0..%d (the reference "
                              "labels_map has no such key)",
                              i, (long long)ids[i], IB_WER_N_LABELS - 1);
        }
        (*out)[i] = IB_WER_LABELS[ids[i]];
    }
    (*out)[n] = '\0';
    return IB_OK;
}

/* str.split(): word start offsets and lengths into a vector. */
typedef struct words {
    size_t n;
    const char **p;
    size_t *len;
} words;

static int split_words(const char *s, words *w)
{
    size_t cap = 0;
    for (const char *q = s; *q;) {
        while (*q && py_space((unsigned char)*q))
            q++;
        if (!*q)
            break;
        cap++;
        while (*q && !py_space((unsigned char)*q))
            q++;
    }
    w->n = 0;
    w->p = ib_malloc((cap ? cap : 1) * sizeof *w->p);
    w->len = ib_malloc((cap ? cap : 1) * sizeof *w->len);
    if (!w->p || !w->len)
        return IB_ENOMEM;
    for (const char *q = s; *q;) {
        while (*q && py_space((unsigned char)*q))
            q++;
        if (!*q)
            break;
        const char *st = q;
        while (*q && !py_space((unsigned char)*q))
            q++;
        w->p[w->n] = st;
        w->len[w->n++] = (size_t)(q - st);
    }
    return IB_OK;
}

static int word_eq(const words *a, size_t i, const words *b, size_t j)
{
    return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], a->len[i]) == 0;
}

int ib_wer_distance(const char *hyp, const char *ref, size_t *distance, size_t *ref_words)
{
    words h = {0}, r = {0};
    size_t *prev = NULL, *cur = NULL;
    int rc = split_words(hyp ? hyp : "", &h);
    if (!rc)
        rc = split_words(ref ? ref : "", &r);
    if (rc)
        goto done;
    *ref_words = r.n;
    /* __levenshtein(h, r): a is the shorter list, one row of len(a) + 1 */
    const words *a = &h, *b = &r;
    if (a->n > b->n) {
        a = &r;
        b = &h;
    }
    size_t n = a->n, m = b->n;
    prev = ib_malloc((n + 1) * sizeof *prev);
    cur = ib_malloc((n + 1) * sizeof *cur);
    if (!prev || !cur) {
        rc = IB_ENOMEM;
        goto done;
    }
    for (size_t j = 0; j <= n; j++)
        cur[j] = j;
    for (size_t i = 1; i <= m; i++) {
        size_t *t = prev;
        prev = cur;
        cur = t;
        cur[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t add = prev[j] + 1, del = cur[j - 1] + 1, change = prev[j - 1];
            if (!word_eq(a, j - 1, b, i - 1))
                change++;
            cur[j] = IB_MIN(IB_MIN(add, del), change);
        }
    }
    *distance = cur[n];
done:
    ib_free(prev);
    ib_free(cur);
    ib_free(h.p);
    ib_free(h.len);
    ib_free(r.p);
    ib_free(r.len);
    return rc;
}

int ib_wer_acc_add(ib_wer_acc *a, const char *hyp, const char *ref)
{
    size_t d = 0, w = 0;
    int rc = ib_wer_distance(hyp, ref, &d, &w);
    if (rc)
        return rc;
    a->scores += d;
    a->words += w;
    a->utterances++;
    return IB_OK;
}

double ib_wer_acc_value(const ib_wer_acc *a)
{
    /* metrics.py: wer = 1.0 * scores / words if words != 0 else float("inf") */
    return a->words ? (double)a->scores / (double)a->words : (double)INFINITY;
}

void ib_wer_line(double wer, char *out, size_t n)
{
    char a[40], b[40];
    ib_py_float_repr(wer * 100, a, sizeof a);
    ib_py_float_repr((1 - wer) * 100, b, sizeof b);
    snprintf(out, n, "Word Error Rate: %s%%, accuracy=%s%%\n", a, b);
}
