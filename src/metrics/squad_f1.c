/*
 * squad_f1.c - the metric of the official SQuAD evaluate-v1.1.py (benchmarks.md §1.3):
 * normalize_answer = white_space_fix(remove_articles(remove_punc(lower(s)))) with Python's
 * str.lower, string.punctuation (ASCII only), re's Unicode \b around a|an|the, and
 * str.split() whitespace; f1_score over token multisets, exact_match_score on the
 * normalized strings, the max over ground truths, 100 * mean over all questions.
 */
#include <string.h>

#include "base/common.h"
#include "text/unicode.h"
#include "metrics/squad_f1.h"

typedef struct norm {
    uint32_t *cp;  /* normalized tokens, each 0-terminated */
    size_t *start; /* token starts */
    size_t n;
} norm;

static int is_ascii_punct(uint32_t c)
{
    /* string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ */
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
}

static int is_article(const uint32_t *w, size_t n)
{
    return (n == 1 && w[0] == 'a') || (n == 2 && w[0] == 'a' && w[1] == 'n') ||
           (n == 3 && w[0] == 't' && w[1] == 'h' && w[2] == 'e');
}

static int normalize(const char *s, norm *out)
{
    memset(out, 0, sizeof *out);
    uint32_t *in;
    size_t n;
    if (ib_utf8_decode(s, strlen(s), &in, &n, NULL))
        return IB_EFORMAT;
    uint32_t *low = ib_malloc(sizeof *low * (2 * n + 1));
    out->cp = ib_malloc(sizeof *out->cp * (4 * n + 2));
    out->start = ib_malloc(sizeof *out->start * (2 * n + 1));
    if (!low || !out->cp || !out->start) {
        ib_free(in);
        ib_free(low);
        return IB_ENOMEM;
    }
    /* lower, then remove_punc */
    size_t m = ib_uni_py_lower(in, n, low), k = 0;
    for (size_t i = 0; i < m; i++)
        if (!is_ascii_punct(low[i]))
            low[k++] = low[i];
    m = k;
    /* remove_articles: a maximal run of \w characters equal to a/an/the becomes ' ' */
    for (size_t i = 0; i < m;) {
        if (!(ib_uni_class(low[i]) & IB_UNI_ALNUM)) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < m && (ib_uni_class(low[i]) & IB_UNI_ALNUM))
            i++;
        if (is_article(low + b, i - b)) {
            low[b] = 0x20;
            for (size_t j = b + 1; j < i; j++)
                low[j] = 0x20;
        }
    }
    /* white_space_fix + the split() of f1_score: tokens between Python whitespace */
    k = 0;
    for (size_t i = 0; i < m;) {
        if (ib_uni_class(low[i]) & IB_UNI_PYSPACE) {
            i++;
            continue;
        }
        out->start[out->n++] = k;
        while (i < m && !(ib_uni_class(low[i]) & IB_UNI_PYSPACE))
            out->cp[k++] = low[i++];
        out->cp[k++] = 0;
    }
    ib_free(in);
    ib_free(low);
    return IB_OK;
}

static void norm_free(norm *x)
{
    ib_free(x->cp);
    ib_free(x->start);
}

static int tok_eq(const norm *a, size_t i, const norm *b, size_t j)
{
    const uint32_t *p = a->cp + a->start[i], *q = b->cp + b->start[j];
    while (*p && *p == *q)
        p++, q++;
    return *p == *q;
}

char *ib_squad_normalize(const char *s)
{
    norm x;
    if (normalize(s, &x)) {
        norm_free(&x);
        return NULL;
    }
    /* ' '.join(tokens) */
    size_t k = 0;
    for (size_t i = 0; i < x.n; i++) {
        uint32_t *t = x.cp + x.start[i];
        if (i)
            x.cp[k++] = 0x20;
        while (*t)
            x.cp[k++] = *t++;
    }
    char *r = ib_utf8_encode(x.cp, k);
    norm_free(&x);
    return r;
}

int ib_squad_exact(const char *prediction, const char *truth)
{
    norm a, b;
    int ra = normalize(prediction, &a), rb = normalize(truth, &b);
    int eq = !ra && !rb && a.n == b.n;
    for (size_t i = 0; eq && i < a.n; i++)
        eq = tok_eq(&a, i, &b, i);
    norm_free(&a);
    norm_free(&b);
    return eq;
}

double ib_squad_f1(const char *prediction, const char *truth)
{
    norm a, b;
    int ra = normalize(prediction, &a), rb = normalize(truth, &b);
    double f1 = 0;
    uint8_t *used = (!ra && !rb) ? ib_calloc(b.n ? b.n : 1, 1) : NULL;
    if (used) {
        /* sum(Counter(pred) & Counter(truth)).values(): multiset intersection */
        size_t same = 0;
        for (size_t i = 0; i < a.n; i++)
            for (size_t j = 0; j < b.n; j++)
                if (!used[j] && tok_eq(&a, i, &b, j)) {
                    used[j] = 1;
                    same++;
                    break;
                }
        if (same) {
            double p = (double)same / (double)a.n, r = (double)same / (double)b.n;
            f1 = 2 * p * r / (p + r);
        }
    }
    ib_free(used);
    norm_free(&a);
    norm_free(&b);
    return f1;
}

void ib_squad_evaluate(const ib_squad *s, const char *const *predictions, double *exact_match,
                       double *f1)
{
    double em = 0, f = 0;
    size_t total = ib_squad_questions(s);
    for (size_t i = 0; i < total; i++) {
        const ib_squad_question *q = ib_squad_question_at(s, i);
        if (!predictions[i])
            continue; /* "Unanswered question ... will receive score 0." */
        double best_em = 0, best_f = 0;
        for (size_t a = 0; a < q->n_answers; a++) {
            best_em = IB_MAX(best_em, (double)ib_squad_exact(predictions[i], q->answers[a]));
            best_f = IB_MAX(best_f, ib_squad_f1(predictions[i], q->answers[a]));
        }
        em += best_em;
        f += best_f;
    }
    *exact_match = total ? 100.0 * em / (double)total : 0;
    *f1 = total ? 100.0 * f / (double)total : 0;
}
