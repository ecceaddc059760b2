/*
 * squad_predict.c - write_predictions / get_final_text of the reference (run_squad.py as
 * accuracy-squad.py uses it), benchmarks.md §1.3. See squad_predict.h.
 */
#include <string.h>

#include "base/common.h"
#include "base/strbuf.h"
#include "dataset/wordpiece_internal.h"
#include "text/unicode.h"
#include "dataset/squad_predict.h"

/* _get_best_indexes: the n highest logits, by value descending, equal values in index
 * order (Python's stable sort); returns how many (min(n, len)). */
static size_t best_indexes(const float *logit, size_t len, size_t n, size_t *out)
{
    size_t k = 0;
    for (; k < n && k < len; k++) {
        size_t best = len;
        for (size_t i = 0; i < len; i++) {
            int taken = 0;
            for (size_t j = 0; j < k && !taken; j++)
                taken = out[j] == i;
            if (!taken && (best == len || logit[i] > logit[best]))
                best = i;
        }
        out[k] = best;
    }
    return k;
}

/* _strip_spaces: drop U+0020, map[i] = index in text of the i-th kept character. */
static size_t strip_spaces(const uint32_t *t, size_t n, uint32_t *ns, size_t *map)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] != 0x20)
            ns[k] = t[i], map[k++] = i;
    return k;
}

char *ib_squad_final_text(const char *pred_text, const char *orig_text)
{
    uint32_t *pred = NULL, *orig = NULL, *ons = NULL, *tns = NULL;
    size_t np, no, *omap = NULL, *tmap = NULL;
    ib_cpbuf tok = {0};
    char *r = NULL;
    if (ib_utf8_decode(pred_text, strlen(pred_text), &pred, &np, NULL))
        return NULL;
    if (ib_utf8_decode(orig_text, strlen(orig_text), &orig, &no, NULL))
        goto done;
    if (ib_bert_basic_tokenize_join(orig, no, &tok))
        goto done;
    /* start_position = tok_text.find(pred_text) */
    size_t sp = SIZE_MAX;
    for (size_t i = 0; np <= tok.len && i + np <= tok.len && sp == SIZE_MAX; i++)
        if (memcmp(tok.cp + i, pred, np * sizeof *pred) == 0)
            sp = i;
    if (sp == SIZE_MAX || np == 0) { /* np == 0: end_position -1 has no mapping */
        r = ib_strdup(orig_text);
        goto done;
    }
    size_t ep = sp + np - 1;
    ons = ib_malloc(sizeof *ons * (no + 1));
    omap = ib_malloc(sizeof *omap * (no + 1));
    tns = ib_malloc(sizeof *tns * (tok.len + 1));
    tmap = ib_malloc(sizeof *tmap * (tok.len + 1));
    if (!ons || !omap || !tns || !tmap)
        goto done;
    size_t on = strip_spaces(orig, no, ons, omap), tn = strip_spaces(tok.cp, tok.len, tns, tmap);
    if (on != tn) { /* the tokenizer changed the characters: give up, as the reference */
        r = ib_strdup(orig_text);
        goto done;
    }
    /* tok_s_to_ns_map[tok index] = ns index; defined only for non-space characters */
    size_t ns_start = SIZE_MAX, ns_end = SIZE_MAX;
    for (size_t i = 0; i < tn; i++) {
        if (tmap[i] == sp)
            ns_start = i;
        if (tmap[i] == ep)
            ns_end = i;
    }
    if (ns_start == SIZE_MAX || ns_end == SIZE_MAX || ns_start >= on || ns_end >= on) {
        r = ib_strdup(orig_text);
        goto done;
    }
    size_t os = omap[ns_start], oe = omap[ns_end];
    r = oe >= os ? ib_utf8_encode(orig + os, oe - os + 1) : ib_strdup("");
done:
    ib_free(pred);
    ib_free(orig);
    ib_free(ons);
    ib_free(tns);
    ib_free(omap);
    ib_free(tmap);
    ib_cpbuf_free(&tok);
    return r;
}

/* read_squad_examples' doc token split (' ', \t, \r, \n, U+202F), as in squad.c. */
static size_t squad_ws(const char *p)
{
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        return 1;
    if ((unsigned char)p[0] == 0xE2 && (unsigned char)p[1] == 0x80 && (unsigned char)p[2] == 0xAF)
        return 3;
    return 0;
}

/* " ".join(doc_tokens[w0..w1]) of the context into sb. */
static void orig_words(ib_strbuf *sb, const char *ctx, size_t w0, size_t w1)
{
    size_t word = 0;
    const char *p = ctx;
    while (*p && word <= w1) {
        size_t k = squad_ws(p);
        if (k) {
            p += k;
            continue;
        }
        const char *b = p;
        while (*p && !squad_ws(p))
            p++;
        if (word >= w0) {
            if (word > w0)
                ib_strbuf_putc(sb, ' ');
            ib_strbuf_append(sb, b, (size_t)(p - b));
        }
        word++;
    }
}

/* tok_text: " ".join(tokens), " ##" and "##" removed, whitespace collapsed. */
static void tok_text(ib_strbuf *sb, const ib_wp_vocab *v, const int32_t *ids, size_t a, size_t b)
{
    ib_strbuf raw;
    ib_strbuf_init(&raw);
    for (size_t t = a; t <= b; t++) {
        if (t > a)
            ib_strbuf_putc(&raw, ' ');
        ib_strbuf_puts(&raw, ib_wp_vocab_token(v, ids[t]));
    }
    const char *s = raw.data ? raw.data : "";
    /* replace(" ##", "") then replace("##", "") */
    ib_strbuf one;
    ib_strbuf_init(&one);
    for (const char *p = s; *p;) {
        if (strncmp(p, " ##", 3) == 0)
            p += 3;
        else
            ib_strbuf_putc(&one, *p++);
    }
    s = one.data ? one.data : "";
    ib_strbuf two;
    ib_strbuf_init(&two);
    for (const char *p = s; *p;) {
        if (strncmp(p, "##", 2) == 0)
            p += 2;
        else
            ib_strbuf_putc(&two, *p++);
    }
    /* strip + " ".join(split()): vocabulary tokens hold no whitespace but ' ' */
    s = two.data ? two.data : "";
    int first = 1;
    for (const char *p = s; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        if (!first)
            ib_strbuf_putc(sb, ' ');
        first = 0;
        while (*p && *p != ' ')
            ib_strbuf_putc(sb, *p++);
    }
    ib_strbuf_deinit(&raw);
    ib_strbuf_deinit(&one);
    ib_strbuf_deinit(&two);
}

int ib_squad_predict(const ib_squad *s, const ib_wp_vocab *v, const ib_squad_features *f,
                     size_t first, size_t count, const uint8_t *present, const float *start,
                     const float *end, size_t n_best, size_t max_answer_len, char **answer,
                     ib_err *err)
{
    *answer = NULL;
    size_t L = f->seq_len;
    if (count == 0 || first + count > f->n || n_best == 0)
        return ib_err_set(err, IB_EINVAL, "squad predict: features %zu..%zu of %zu", first,
                          first + count, f->n);
    size_t q = f->question[first];
    for (size_t k = 1; k < count; k++)
        if (f->question[first + k] != q)
            return ib_err_set(err, IB_EINVAL,
                              "squad predict: feature %zu belongs to question %zu, not %zu",
                              first + k, f->question[first + k], q);
    size_t *si = ib_malloc(sizeof *si * n_best), *ei = ib_malloc(sizeof *ei * n_best);
    if (!si || !ei) {
        ib_free(si);
        ib_free(ei);
        return ib_err_set(err, IB_ENOMEM, "squad predict: out of memory");
    }
    double best = 0;
    size_t bf = SIZE_MAX, bs = 0, be = 0;
    for (size_t k = 0; k < count; k++) {
        size_t fi = first + k;
        if (present && !present[k])
            continue; /* "if feature.unique_id not in unique_id_to_result: continue" */
        const float *sl = start + k * L, *el = end + k * L;
        size_t ns = best_indexes(sl, L, n_best, si), ne = best_indexes(el, L, n_best, ei);
        const int32_t *orig = f->token_to_orig + fi * L;
        const uint8_t *mc = f->max_context + fi * L;
        for (size_t a = 0; a < ns; a++)
            for (size_t b = 0; b < ne; b++) {
                size_t x = si[a], y = ei[b];
                if (x >= f->n_tokens[fi] || y >= f->n_tokens[fi] || orig[x] < 0 || orig[y] < 0)
                    continue;
                if (!mc[x] || y < x || y - x + 1 > max_answer_len)
                    continue;
                double score = (double)sl[x] + (double)el[y];
                if (bf == SIZE_MAX || score > best)
                    best = score, bf = fi, bs = x, be = y;
            }
    }
    ib_free(si);
    ib_free(ei);
    if (bf == SIZE_MAX) {
        *answer = ib_strdup("empty");
        return *answer ? IB_OK : ib_err_set(err, IB_ENOMEM, "squad predict: out of memory");
    }
    ib_strbuf tt, ot;
    ib_strbuf_init(&tt);
    ib_strbuf_init(&ot);
    tok_text(&tt, v, f->input_ids + bf * L, bs, be);
    const int32_t *orig = f->token_to_orig + bf * L;
    orig_words(&ot, ib_squad_context(s, ib_squad_question_at(s, q)->paragraph),
               (size_t)orig[bs], (size_t)orig[be]);
    int rc = IB_OK;
    if (tt.oom || ot.oom)
        rc = IB_ENOMEM;
    else
        *answer = ib_squad_final_text(tt.data ? tt.data : "", ot.data ? ot.data : "");
    if (!rc && !*answer)
        rc = IB_ENOMEM;
    ib_strbuf_deinit(&tt);
    ib_strbuf_deinit(&ot);
    return rc ? ib_err_set(err, rc, "squad predict: out of memory") : IB_OK;
}
