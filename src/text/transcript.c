/*
 * transcript.c - the RNN-T reference's transcript normalisation (transcript.h):
 * pytorch/parts/manifest.py (normalize_string, its punctuation table) over
 * pytorch/parts/text/cleaners.py (english_cleaners). The dataset normalises its transcripts
 * with it; the metric compares against them.
 */
#include "text/transcript.h"

#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/strbuf.h"

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

char *ib_transcript_normalize(const char *s)
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
    while (i < n && ib_transcript_py_space((unsigned char)b.data[i]))
        i++;
    while (n > i && ib_transcript_py_space((unsigned char)b.data[n - 1]))
        n--;
    int in_space = 0;
    for (; i < n && !rc; i++) {
        unsigned char c = (unsigned char)b.data[i];
        if (ib_transcript_py_space(c)) {
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

