/*
 * squad.c - SQuAD v1.1 examples and features as the reference's run_squad.py /
 * create_squad_data.py build them (read_squad_examples, convert_examples_to_features,
 * _check_is_max_context), benchmarks.md §1.3. The F1/EM metric is in metrics/squad_f1.c.
 */
#include <jansson.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/vec.h"
#include "dataset/squad.h"
#include "text/unicode.h"

struct ib_squad {
    json_t *root; /* owns every string below */
    const char **context;
    size_t n_paragraphs;
    ib_squad_question *q;
    size_t n;
};

static const char *str_field(const char *name, json_t *obj, const char *key, const char *where,
                             ib_err *err)
{
    json_t *x = json_object_get(obj, key);
    if (!json_is_string(x)) {
        ib_err_set(err, IB_EFORMAT, "%s: %s.%s: %s (expected a SQuAD v1.1 JSON string)", name,
                   where, key, x ? "not a string" : "missing");
        return NULL;
    }
    return json_string_value(x);
}

static int check_utf8(const char *name, const char *s, const char *where, ib_err *err)
{
    uint32_t *cp;
    size_t n, bad = 0;
    int rc = ib_utf8_decode(s, strlen(s), &cp, &n, &bad);
    if (rc == IB_EFORMAT)
        return ib_err_set(err, rc, "%s: %s: invalid UTF-8 at byte %zu", name, where, bad);
    if (rc)
        return ib_err_set(err, rc, "%s: out of memory", name);
    ib_free(cp);
    return IB_OK;
}

int ib_squad_parse(const char *name, const char *json, size_t len, ib_squad **out, ib_err *err)
{
    *out = NULL;
    ib_squad *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
    int rc = IB_EFORMAT;
    json_error_t je;
    s->root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!s->root) {
        rc = ib_err_set(err, IB_EFORMAT, "%s:%d:%d: malformed JSON: %s", name, je.line, je.column,
                        je.text);
        goto fail;
    }
    json_t *data = json_object_get(s->root, "data");
    if (!json_is_array(data)) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: top-level \"data\" %s (expected SQuAD v1.1: "
                        "{\"data\": [articles]})",
                        name, data ? "is not an array" : "is missing");
        goto fail;
    }
    /* count first, then fill */
    size_t np = 0, nq = 0;
    char where[128];
    for (int pass = 0; pass < 2; pass++) {
        size_t ip = 0, iq = 0, ia;
        json_t *art;
        json_array_foreach(data, ia, art)
        {
            json_t *paras = json_object_get(art, "paragraphs");
            if (!json_is_array(paras)) {
                rc = ib_err_set(err, IB_EFORMAT, "%s: data[%zu].paragraphs: %s", name, ia,
                                paras ? "not an array" : "missing");
                goto fail;
            }
            size_t jp;
            json_t *para;
            json_array_foreach(paras, jp, para)
            {
                snprintf(where, sizeof where, "data[%zu].paragraphs[%zu]", ia, jp);
                const char *ctx = str_field(name, para, "context", where, err);
                json_t *qas = json_object_get(para, "qas");
                if (!ctx)
                    goto fail;
                if (!json_is_array(qas)) {
                    rc = ib_err_set(err, IB_EFORMAT, "%s: %s.qas: %s", name, where,
                                    qas ? "not an array" : "missing");
                    goto fail;
                }
                if (pass == 1) {
                    if ((rc = check_utf8(name, ctx, where, err)))
                        goto fail;
                    s->context[ip] = ctx;
                }
                size_t kq;
                json_t *qa;
                json_array_foreach(qas, kq, qa)
                {
                    if (pass == 0) {
                        nq++;
                        continue;
                    }
                    snprintf(where, sizeof where, "data[%zu].paragraphs[%zu].qas[%zu]", ia, jp, kq);
                    ib_squad_question *q = &s->q[iq];
                    q->paragraph = ip;
                    rc = IB_EFORMAT;
                    if (!(q->id = str_field(name, qa, "id", where, err)) ||
                        !(q->question = str_field(name, qa, "question", where, err)))
                        goto fail;
                    if ((rc = check_utf8(name, q->question, where, err)))
                        goto fail;
                    json_t *ans = json_object_get(qa, "answers");
                    if (!json_is_array(ans)) {
                        rc = ib_err_set(err, IB_EFORMAT, "%s: %s.answers: %s", name, where,
                                        ans ? "not an array" : "missing");
                        goto fail;
                    }
                    size_t na = json_array_size(ans);
                    const char **t = ib_calloc(na ? na : 1, sizeof *t);
                    if (!t) {
                        rc = ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
                        goto fail;
                    }
                    q->answers = t;
                    q->n_answers = na;
                    for (size_t a = 0; a < na; a++) {
                        char w2[160];
                        snprintf(w2, sizeof w2, "%s.answers[%zu]", where, a);
                        if (!(t[a] = str_field(name, json_array_get(ans, a), "text", w2, err))) {
                            rc = IB_EFORMAT;
                            goto fail;
                        }
                    }
                    iq++;
                }
                ip++;
            }
        }
        if (pass == 0) {
            np = ip;
            s->context = ib_calloc(np ? np : 1, sizeof *s->context);
            s->q = ib_calloc(nq ? nq : 1, sizeof *s->q);
            if (!s->context || !s->q) {
                rc = ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
                goto fail;
            }
            s->n_paragraphs = np;
            s->n = nq;
        }
    }
    *out = s;
    return IB_OK;
fail:
    ib_squad_free(s);
    return rc;
}

int ib_squad_load(const char *path, ib_squad **out, ib_err *err)
{
    *out = NULL;
    char *text;
    size_t len;
    int rc = ib_file_read_all(path, 0, &text, &len, err);
    if (rc)
        return rc;
    rc = ib_squad_parse(path, text, len, out, err);
    ib_free(text);
    return rc;
}

void ib_squad_free(ib_squad *s)
{
    if (!s)
        return;
    if (s->q)
        for (size_t i = 0; i < s->n; i++)
            ib_free(s->q[i].answers);
    ib_free(s->q);
    ib_free(s->context);
    if (s->root)
        json_decref(s->root);
    ib_free(s);
}

size_t ib_squad_questions(const ib_squad *s)
{
    return s->n;
}

const ib_squad_question *ib_squad_question_at(const ib_squad *s, size_t i)
{
    return i < s->n ? &s->q[i] : NULL;
}

const char *ib_squad_context(const ib_squad *s, size_t paragraph)
{
    return paragraph < s->n_paragraphs ? s->context[paragraph] : NULL;
}

/* ---- features ------------------------------------------------------------------------------- */

/* read_squad_examples' is_whitespace: ' ', \t, \r, \n or U+202F; returns its byte length. */
static size_t squad_ws(const char *p)
{
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        return 1;
    if ((unsigned char)p[0] == 0xE2 && (unsigned char)p[1] == 0x80 && (unsigned char)p[2] == 0xAF)
        return 3;
    return 0;
}

typedef struct span {
    size_t start, length;
} span;

/* _check_is_max_context: the span where position has the most context (min of left and
 * right context + 0.01 * span length), the first on ties. */
static int is_max_context(const span *sp, size_t n, size_t cur, size_t pos)
{
    double best = -1;
    size_t best_i = 0;
    for (size_t i = 0; i < n; i++) {
        size_t end = sp[i].start + sp[i].length - 1;
        if (pos < sp[i].start || pos > end)
            continue;
        size_t l = pos - sp[i].start, r = end - pos;
        double score = (double)IB_MIN(l, r) + 0.01 * (double)sp[i].length;
        if (best < 0 || score > best)
            best = score, best_i = i;
    }
    return best_i == cur;
}

typedef IB_VEC(size_t) size_vec;

static int grow_features(ib_squad_features *f, size_t *cap)
{
    size_t c = *cap ? 2 * *cap : 64, L = f->seq_len;
    void *p[7] = {
        ib_realloc(f->input_ids, c * L * sizeof(int32_t)),
    };
    if (!p[0])
        return IB_ENOMEM;
    f->input_ids = p[0];
    if (!(p[1] = ib_realloc(f->input_mask, c * L * sizeof(int32_t))))
        return IB_ENOMEM;
    f->input_mask = p[1];
    if (!(p[2] = ib_realloc(f->segment_ids, c * L * sizeof(int32_t))))
        return IB_ENOMEM;
    f->segment_ids = p[2];
    if (!(p[3] = ib_realloc(f->token_to_orig, c * L * sizeof(int32_t))))
        return IB_ENOMEM;
    f->token_to_orig = p[3];
    if (!(p[4] = ib_realloc(f->max_context, c * L)))
        return IB_ENOMEM;
    f->max_context = p[4];
    if (!(p[5] = ib_realloc(f->question, c * sizeof(size_t))))
        return IB_ENOMEM;
    f->question = p[5];
    if (!(p[6] = ib_realloc(f->span, c * sizeof(size_t))))
        return IB_ENOMEM;
    f->span = p[6];
    void *nt = ib_realloc(f->n_tokens, c * sizeof(size_t));
    if (!nt)
        return IB_ENOMEM;
    f->n_tokens = nt;
    *cap = c;
    return IB_OK;
}

int ib_squad_featurize(const ib_squad *s, const ib_wp_vocab *v, const ib_squad_window *w,
                       ib_squad_features *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    int32_t cls = ib_wp_vocab_id(v, "[CLS]"), sep = ib_wp_vocab_id(v, "[SEP]");
    if (cls < 0 || sep < 0)
        return ib_err_set(err, IB_EFORMAT,
                          "vocabulary: no \"%s\" token (the SQuAD features need [CLS] and "
                          "[SEP]; use BERT's vocab.txt)",
                          cls < 0 ? "[CLS]" : "[SEP]");
    if (w->max_seq_len <= w->max_query_len + 3 || w->doc_stride == 0)
        return ib_err_set(err, IB_EINVAL,
                          "squad window: max_seq_len %zu must exceed max_query_len %zu + 3 and "
                          "doc_stride (%zu) must be > 0",
                          w->max_seq_len, w->max_query_len, w->doc_stride);
    out->seq_len = w->max_seq_len;
    size_t L = w->max_seq_len, cap = 0;
    ib_wp_ids query = {0}, doc = {0};
    size_vec tok_to_orig = {0};
    IB_VEC(span) spans = {0};
    int rc = IB_OK;
    for (size_t qi = 0; qi < s->n && !rc; qi++) {
        const ib_squad_question *q = &s->q[qi];
        query.len = doc.len = tok_to_orig.len = spans.len = 0;
        if ((rc = ib_wp_tokenize(v, q->question, strlen(q->question), &query, err)))
            break;
        if (query.len > w->max_query_len) /* query_tokens[0:max_query_length] */
            query.len = w->max_query_len;
        /* doc tokens: runs of non-whitespace characters; each WordPiece-tokenized */
        const char *p = s->context[q->paragraph];
        size_t word = 0;
        while (*p && !rc) {
            size_t k = squad_ws(p);
            if (k) {
                p += k;
                continue;
            }
            const char *b = p;
            while (*p && !squad_ws(p))
                p++;
            size_t before = doc.len;
            rc = ib_wp_tokenize(v, b, (size_t)(p - b), &doc, err);
            for (size_t t = before; !rc && t < doc.len; t++)
                rc = IB_VEC_PUSH(&tok_to_orig, word);
            word++;
        }
        if (rc)
            break;
        size_t max_doc = L - query.len - 3, start = 0;
        while (start < doc.len) {
            size_t len = IB_MIN(doc.len - start, max_doc);
            if ((rc = IB_VEC_PUSH(&spans, ((span){start, len}))))
                break;
            if (start + len == doc.len)
                break;
            start += IB_MIN(len, w->doc_stride);
        }
        for (size_t si = 0; si < spans.len && !rc; si++) {
            if (out->n == cap && (rc = grow_features(out, &cap)))
                break;
            size_t f = out->n;
            int32_t *ids = out->input_ids + f * L, *mask = out->input_mask + f * L;
            int32_t *seg = out->segment_ids + f * L, *orig = out->token_to_orig + f * L;
            uint8_t *mc = out->max_context + f * L;
            memset(ids, 0, L * sizeof *ids);
            memset(mask, 0, L * sizeof *mask);
            memset(seg, 0, L * sizeof *seg);
            memset(mc, 0, L);
            for (size_t t = 0; t < L; t++)
                orig[t] = -1;
            size_t n = 0;
            ids[n++] = cls;
            for (size_t t = 0; t < query.len; t++)
                ids[n++] = query.id[t];
            ids[n++] = sep;
            for (size_t t = 0; t < spans.data[si].length; t++) {
                size_t pos = spans.data[si].start + t;
                orig[n] = (int32_t)tok_to_orig.data[pos];
                mc[n] = (uint8_t)is_max_context(spans.data, spans.len, si, pos);
                seg[n] = 1;
                ids[n++] = doc.id[pos];
            }
            seg[n] = 1;
            ids[n++] = sep;
            for (size_t t = 0; t < n; t++)
                mask[t] = 1;
            out->question[f] = qi;
            out->span[f] = si;
            out->n_tokens[f] = n;
            out->n++;
        }
        if (rc == IB_ENOMEM)
            ib_err_set(err, rc, "squad features: out of memory");
    }
    ib_wp_ids_free(&query);
    ib_wp_ids_free(&doc);
    IB_VEC_FREE(&tok_to_orig);
    IB_VEC_FREE(&spans);
    if (rc)
        ib_squad_features_free(out);
    return rc;
}

void ib_squad_features_free(ib_squad_features *f)
{
    ib_free(f->input_ids);
    ib_free(f->input_mask);
    ib_free(f->segment_ids);
    ib_free(f->token_to_orig);
    ib_free(f->max_context);
    ib_free(f->question);
    ib_free(f->span);
    ib_free(f->n_tokens);
    memset(f, 0, sizeof *f);
}
