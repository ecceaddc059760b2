/*
 * unicode.c - look-ups over the generated Unicode tables (unicode_tables.c),
 * Python's str.lower() with its two special cases, the per-code-point NFD-minus-Mn used to
 * strip accents (Hangul algorithmically, Unicode §3.12), and strict UTF-8 conversion.
 * See unicode.h for which reference function each one reproduces.
 */
#include <string.h>

#include "base/common.h"
#include "text/unicode.h"

unsigned ib_uni_class(uint32_t cp)
{
    if (cp > IB_UNI_MAX)
        return 0;
    /* last range whose first code point is <= cp */
    size_t lo = 0, hi = ib_uni_class_ranges_len;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((ib_uni_class_ranges[mid] >> 8) <= cp)
            lo = mid;
        else
            hi = mid;
    }
    return ib_uni_class_ranges[lo] & 0xFFu;
}

bool ib_uni_is_cjk(uint32_t cp)
{
    /* tokenization.py _is_chinese_char: the CJK Unified Ideographs blocks (not Hangul,
     * Hiragana or Katakana, which are written with spaces or need no splitting) */
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

uint32_t ib_uni_lower_simple(uint32_t cp)
{
    size_t lo = 0, hi = ib_uni_lower_runs_len;
    while (lo < hi) { /* first run starting after cp */
        size_t mid = lo + (hi - lo) / 2;
        if (ib_uni_lower_runs[mid].start <= cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return cp;
    const ib_uni_lower_run *r = &ib_uni_lower_runs[lo - 1];
    uint32_t off = cp - r->start;
    if (off % r->step != 0 || off / r->step >= r->count)
        return cp;
    return (uint32_t)((int64_t)cp + r->delta);
}

/* Python's handle_capital_sigma (unicodeobject.c): final when a cased character precedes
 * (skipping case-ignorable ones) and no cased character follows (likewise). */
static bool final_sigma(const uint32_t *s, size_t n, size_t i)
{
    size_t j = i;
    unsigned c = 0;
    while (j > 0) {
        c = ib_uni_class(s[--j]);
        if (!(c & IB_UNI_CIGN))
            break;
        c = 0;
    }
    if (!(c & IB_UNI_CASED))
        return false;
    for (j = i + 1; j < n; j++) {
        c = ib_uni_class(s[j]);
        if (!(c & IB_UNI_CIGN))
            return !(c & IB_UNI_CASED);
    }
    return true;
}

size_t ib_uni_py_lower(const uint32_t *in, size_t n, uint32_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = in[i];
        if (c == 0x130) { /* SpecialCasing: LATIN CAPITAL LETTER I WITH DOT ABOVE */
            out[k++] = 0x69;
            out[k++] = 0x307;
        } else if (c == 0x3A3) {
            out[k++] = final_sigma(in, n, i) ? 0x3C2 : 0x3C3;
        } else {
            out[k++] = ib_uni_lower_simple(c);
        }
    }
    return k;
}

size_t ib_uni_strip_accents(uint32_t cp, uint32_t out[3])
{
    if (cp >= 0xAC00 && cp <= 0xD7A3) { /* Hangul syllable -> L V [T] jamo (none is Mn) */
        uint32_t s = cp - 0xAC00;
        out[0] = 0x1100 + s / 588;
        out[1] = 0x1161 + (s % 588) / 28;
        if (s % 28 == 0)
            return 2;
        out[2] = 0x11A7 + s % 28;
        return 3;
    }
    if (ib_uni_class(cp) & IB_UNI_MN)
        return 0;
    size_t lo = 0, hi = ib_uni_strip_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ib_uni_strip[mid].cp < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ib_uni_strip_len && ib_uni_strip[lo].cp == cp) {
        size_t k = 0;
        while (k < 3 && ib_uni_strip[lo].out[k])
            out[k] = ib_uni_strip[lo].out[k], k++;
        return k;
    }
    out[0] = cp;
    return 1;
}

/* ---- UTF-8 ---------------------------------------------------------------------------------- */

int ib_utf8_decode(const char *s, size_t n, uint32_t **out, size_t *len, size_t *bad_at)
{
    *out = NULL;
    *len = 0;
    uint32_t *cp = ib_malloc(sizeof *cp * (n ? n : 1));
    if (!cp)
        return IB_ENOMEM;
    const unsigned char *p = (const unsigned char *)s;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned b = p[i];
        uint32_t c;
        size_t need;
        if (b < 0x80) {
            cp[k++] = b;
            i++;
            continue;
        } else if (b >= 0xC2 && b <= 0xDF) {
            c = b & 0x1F, need = 1;
        } else if (b >= 0xE0 && b <= 0xEF) {
            c = b & 0x0F, need = 2;
        } else if (b >= 0xF0 && b <= 0xF4) {
            c = b & 0x07, need = 3;
        } else {
            goto bad;
        }
        if (n - i <= need)
            goto bad;
        for (size_t j = 1; j <= need; j++) {
            if ((p[i + j] & 0xC0) != 0x80)
                goto bad;
            c = (c << 6) | (p[i + j] & 0x3Fu);
        }
        if ((need == 2 && c < 0x800) || (need == 3 && (c < 0x10000 || c > IB_UNI_MAX)) ||
            (c >= 0xD800 && c <= 0xDFFF))
            goto bad;
        cp[k++] = c;
        i += need + 1;
        continue;
    bad:
        if (bad_at)
            *bad_at = i;
        ib_free(cp);
        return IB_EFORMAT;
    }
    *out = cp;
    *len = k;
    return IB_OK;
}

size_t ib_utf8_len(uint32_t cp)
{
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

size_t ib_utf8_put(uint32_t cp, char *p)
{
    unsigned char *u = (unsigned char *)p;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | (cp >> 6));
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | (cp >> 12));
        u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    u[0] = (unsigned char)(0xF0 | (cp >> 18));
    u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

char *ib_utf8_encode(const uint32_t *cp, size_t n)
{
    size_t bytes = 1;
    for (size_t i = 0; i < n; i++)
        bytes += ib_utf8_len(cp[i]);
    char *s = ib_malloc(bytes);
    if (!s)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ib_utf8_put(cp[i], s + k);
    s[k] = '\0';
    return s;
}
