/*
 * wordpiece.c - BERT's FullTokenizer (uncased) on code points: vocab.txt loading,
 * BasicTokenizer and WordpieceTokenizer as google-research/bert tokenization.py defines
 * them (benchmarks.md §1.3; the reference's create_squad_data.py featurizes with it).
 */
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/strmap.h"
#include "dataset/wordpiece.h"
#include "dataset/wordpiece_internal.h"
#include "text/unicode.h"

struct ib_wp_vocab {
    char *text;  /* the file, lines NUL-terminated in place */
    char **tok;  /* tok[id] */
    size_t n;
    ib_strmap map; /* token -> id */
    int32_t unk;
};

/* ---- code point buffer ---------------------------------------------------------------------- */

int ib_cpbuf_append(ib_cpbuf *b, const uint32_t *cp, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n)
            cap *= 2;
        uint32_t *p = ib_realloc(b->cp, sizeof *p * cap);
        if (!p)
            return IB_ENOMEM;
        b->cp = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->cp + b->len, cp, sizeof *cp * n);
    b->len += n;
    return IB_OK;
}

void ib_cpbuf_free(ib_cpbuf *b)
{
    ib_free(b->cp);
    b->cp = NULL;
    b->len = b->cap = 0;
}

int ib_wp_ids_push(ib_wp_ids *ids, int32_t id)
{
    if (ids->len == ids->cap) {
        size_t cap = ids->cap ? 2 * ids->cap : 64;
        int32_t *p = ib_realloc(ids->id, sizeof *p * cap);
        if (!p)
            return IB_ENOMEM;
        ids->id = p;
        ids->cap = cap;
    }
    ids->id[ids->len++] = id;
    return IB_OK;
}

void ib_wp_ids_free(ib_wp_ids *ids)
{
    ib_free(ids->id);
    ids->id = NULL;
    ids->len = ids->cap = 0;
}

/* ---- vocabulary ----------------------------------------------------------------------------- */

static int is_ascii_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

int ib_wp_vocab_parse(const char *name, const char *text, size_t len, ib_wp_vocab **out,
                      ib_err *err)
{
    *out = NULL;
    ib_wp_vocab *v = ib_calloc(1, sizeof *v);
    if (!v)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
    ib_strmap_init(&v->map);
    v->unk = -1;
    int rc = IB_ENOMEM;
    v->text = ib_malloc(len + 1);
    if (!v->text)
        goto fail;
    memcpy(v->text, text, len);
    v->text[len] = '\0';
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    v->tok = ib_malloc(sizeof *v->tok * lines);
    if (!v->tok)
        goto fail;
    char *p = v->text, *end = v->text + len;
    for (size_t line = 1; p < end; line++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        char *s = p;
        p = nl ? nl + 1 : end;
        while (s < e && is_ascii_space(*s))
            s++;
        while (e > s && is_ascii_space(e[-1]))
            e--;
        *e = '\0';
        if (s == e) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:%zu: empty line (vocab.txt holds one token per line; an empty "
                            "line would shift every later id)",
                            name, line);
            goto fail_set;
        }
        uint32_t *cp;
        size_t ncp, bad = 0;
        int urc = ib_utf8_decode(s, (size_t)(e - s), &cp, &ncp, &bad);
        if (urc == IB_ENOMEM)
            goto fail;
        if (urc) {
            rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: invalid UTF-8 at byte %zu of the token",
                            name, line, bad + 1);
            goto fail_set;
        }
        ib_free(cp);
        int64_t prev;
        if (ib_strmap_get(&v->map, s, &prev)) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:%zu: token \"%s\" already listed on line %lld (each token "
                            "once)",
                            name, line, s, (long long)prev + 1);
            goto fail_set;
        }
        if (v->n >= INT32_MAX) {
            rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: more than %d tokens", name, line,
                            INT32_MAX);
            goto fail_set;
        }
        if (ib_strmap_put(&v->map, s, (int64_t)v->n))
            goto fail;
        v->tok[v->n++] = s;
    }
    if (v->n == 0) {
        rc = ib_err_set(err, IB_EFORMAT, "%s: empty vocabulary (expected vocab.txt, one token "
                                         "per line)",
                        name);
        goto fail_set;
    }
    v->unk = ib_wp_vocab_id(v, "[UNK]");
    if (v->unk < 0) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: no \"[UNK]\" token (WordpieceTokenizer needs it for unknown "
                        "words; use BERT's vocab.txt)",
                        name);
        goto fail_set;
    }
    *out = v;
    return IB_OK;
fail:
    ib_err_set(err, rc, "%s: out of memory", name);
fail_set:
    ib_wp_vocab_free(v);
    return rc;
}

int ib_wp_vocab_load(const char *path, ib_wp_vocab **out, ib_err *err)
{
    *out = NULL;
    char *text;
    size_t len;
    int rc = ib_file_read_all(path, 0, &text, &len, err);
    if (rc)
        return rc;
    rc = ib_wp_vocab_parse(path, text, len, out, err);
    ib_free(text);
    return rc;
}

void ib_wp_vocab_free(ib_wp_vocab *v)
{
    if (!v)
        return;
    ib_strmap_deinit(&v->map);
    ib_free(v->tok);
    ib_free(v->text);
    ib_free(v);
}

size_t ib_wp_vocab_size(const ib_wp_vocab *v)
{
    return v->n;
}

int32_t ib_wp_vocab_id(const ib_wp_vocab *v, const char *token)
{
    int64_t id;
    return ib_strmap_get(&v->map, token, &id) ? (int32_t)id : -1;
}

const char *ib_wp_vocab_token(const ib_wp_vocab *v, int32_t id)
{
    return id >= 0 && (size_t)id < v->n ? v->tok[id] : NULL;
}

int32_t ib_wp_vocab_unk(const ib_wp_vocab *v)
{
    return v->unk;
}

/* ---- BasicTokenizer ------------------------------------------------------------------------- */

/* Append one token, a space first unless it is the first of this call. */
static int emit(ib_cpbuf *out, size_t *count, const uint32_t *cp, size_t n)
{
    static const uint32_t space = 0x20;
    if (n == 0)
        return IB_OK;
    if ((*count)++ && ib_cpbuf_append(out, &space, 1))
        return IB_ENOMEM;
    return ib_cpbuf_append(out, cp, n);
}

int ib_bert_basic_tokenize_join(const uint32_t *text, size_t n, ib_cpbuf *out)
{
    int rc = IB_ENOMEM;
    uint32_t *a = ib_malloc(sizeof *a * (3 * n + 1));
    uint32_t *low = ib_malloc(sizeof *low * (2 * n + 1));
    uint32_t *str = ib_malloc(sizeof *str * (6 * n + 1));
    if (!a || !low || !str)
        goto done;
    /* _clean_text, then _tokenize_chinese_chars */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = text[i];
        unsigned k = ib_uni_class(c);
        if (c == 0 || c == 0xFFFD || (k & IB_UNI_CTRL))
            continue;
        if (k & IB_UNI_WS) {
            a[m++] = 0x20;
        } else if (ib_uni_is_cjk(c)) {
            a[m++] = 0x20;
            a[m++] = c;
            a[m++] = 0x20;
        } else {
            a[m++] = c;
        }
    }
    size_t count = 0;
    for (size_t i = 0; i < m;) {
        /* whitespace_tokenize: str.split() on Python whitespace */
        if (ib_uni_class(a[i]) & IB_UNI_PYSPACE) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < m && !(ib_uni_class(a[i]) & IB_UNI_PYSPACE))
            i++;
        /* token.lower(), then _run_strip_accents */
        size_t nl = ib_uni_py_lower(a + s, i - s, low);
        size_t ns = 0;
        for (size_t j = 0; j < nl; j++)
            ns += ib_uni_strip_accents(low[j], str + ns);
        /* _run_split_on_punc; the final whitespace_tokenize(" ".join(...)) also splits on
         * any whitespace the two steps above produced and drops empty tokens */
        size_t w = 0;
        for (size_t j = 0; j < ns; j++) {
            unsigned k = ib_uni_class(str[j]);
            if (k & (IB_UNI_PUNCT | IB_UNI_PYSPACE)) {
                if (emit(out, &count, str + w, j - w))
                    goto done;
                if ((k & IB_UNI_PUNCT) && emit(out, &count, str + j, 1))
                    goto done;
                w = j + 1;
            }
        }
        if (emit(out, &count, str + w, ns - w))
            goto done;
    }
    rc = IB_OK;
done:
    ib_free(a);
    ib_free(low);
    ib_free(str);
    return rc;
}

static int decode(const char *text, size_t n, uint32_t **cp, size_t *ncp, ib_err *err)
{
    size_t bad = 0;
    int rc = ib_utf8_decode(text, n, cp, ncp, &bad);
    if (rc == IB_EFORMAT)
        return ib_err_set(err, rc, "text: invalid UTF-8 at byte offset %zu", bad);
    if (rc)
        return ib_err_set(err, rc, "text: out of memory");
    return IB_OK;
}

int ib_wp_basic_tokenize(const char *text, size_t n, char **out, ib_err *err)
{
    *out = NULL;
    uint32_t *cp;
    size_t ncp;
    int rc = decode(text, n, &cp, &ncp, err);
    if (rc)
        return rc;
    ib_cpbuf b = {0};
    rc = ib_bert_basic_tokenize_join(cp, ncp, &b);
    if (!rc) {
        *out = ib_utf8_encode(b.cp, b.len);
        if (!*out)
            rc = IB_ENOMEM;
    }
    if (rc)
        ib_err_set(err, rc, "text: out of memory");
    ib_cpbuf_free(&b);
    ib_free(cp);
    return rc;
}

/* ---- WordpieceTokenizer --------------------------------------------------------------------- */

/* One basic token w[0..n): greedy longest-match-first pieces, "##" on all but the first; the
 * whole word is [UNK] when it is too long or some position has no piece. */
static int wordpiece(const ib_wp_vocab *v, const uint32_t *w, size_t n, ib_wp_ids *out)
{
    if (n > IB_WP_MAX_CHARS_PER_WORD)
        return ib_wp_ids_push(out, v->unk);
    char bytes[4 * IB_WP_MAX_CHARS_PER_WORD + 1];
    size_t off[IB_WP_MAX_CHARS_PER_WORD + 1];
    off[0] = 0;
    for (size_t k = 0; k < n; k++)
        off[k + 1] = off[k] + ib_utf8_put(w[k], bytes + off[k]);
    char key[4 * IB_WP_MAX_CHARS_PER_WORD + 3];
    size_t first = out->len;
    for (size_t start = 0; start < n;) {
        int32_t id = -1;
        size_t end = n;
        for (; end > start; end--) {
            size_t p = 0;
            if (start > 0)
                key[p++] = '#', key[p++] = '#';
            memcpy(key + p, bytes + off[start], off[end] - off[start]);
            key[p + off[end] - off[start]] = '\0';
            id = ib_wp_vocab_id(v, key);
            if (id >= 0)
                break;
        }
        if (id < 0) {
            out->len = first; /* is_bad: the pieces found so far are dropped */
            return ib_wp_ids_push(out, v->unk);
        }
        if (ib_wp_ids_push(out, id))
            return IB_ENOMEM;
        start = end;
    }
    return IB_OK;
}

int ib_wp_tokenize(const ib_wp_vocab *v, const char *text, size_t n, ib_wp_ids *out,
                   ib_err *err)
{
    uint32_t *cp;
    size_t ncp;
    int rc = decode(text, n, &cp, &ncp, err);
    if (rc)
        return rc;
    ib_cpbuf b = {0};
    rc = ib_bert_basic_tokenize_join(cp, ncp, &b);
    for (size_t i = 0; !rc && i < b.len;) {
        size_t s = i;
        while (i < b.len && b.cp[i] != 0x20)
            i++;
        rc = wordpiece(v, b.cp + s, i - s, out);
        i++;
    }
    if (rc)
        ib_err_set(err, rc, "text: out of memory");
    ib_cpbuf_free(&b);
    ib_free(cp);
    return rc;
}
