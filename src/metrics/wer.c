/*
 * wer.c - the RNN-T word error rate (wer.h), following the reference
 * speech_recognition/rnnt: pytorch/helpers.py (ids -> text), pytorch/metrics.py (__levenshtein,
 * word_error_rate) and accuracy_eval.py (the printed line). The transcripts it compares are
 * normalised by src/text/transcript.c (manifest.py), as the dataset loads them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/pyfmt.h"
#include "base/strbuf.h"
#include "metrics/wer.h"
#include "text/transcript.h"

int ib_wer_ids_to_text(const int64_t *ids, size_t n, char **out, ib_err *err)
{
    *out = ib_malloc(n + 1);
    if (!*out)
        return ib_err_set(err, IB_ENOMEM, "wer: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= IB_TRANSCRIPT_N_LABELS) {
            ib_free(*out);
            *out = NULL;
            return ib_err_set(err, IB_EFORMAT,
                              "wer: token %zu is id %lld, not a label id 0..%d (the reference "
                              "labels_map has no such key)",
                              i, (long long)ids[i], IB_TRANSCRIPT_N_LABELS - 1);
        }
        (*out)[i] = IB_TRANSCRIPT_LABELS[ids[i]];
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
        while (*q && ib_transcript_py_space((unsigned char)*q))
            q++;
        if (!*q)
            break;
        cap++;
        while (*q && !ib_transcript_py_space((unsigned char)*q))
            q++;
    }
    w->n = 0;
    w->p = ib_malloc((cap ? cap : 1) * sizeof *w->p);
    w->len = ib_malloc((cap ? cap : 1) * sizeof *w->len);
    if (!w->p || !w->len)
        return IB_ENOMEM;
    for (const char *q = s; *q;) {
        while (*q && ib_transcript_py_space((unsigned char)*q))
            q++;
        if (!*q)
            break;
        const char *st = q;
        while (*q && !ib_transcript_py_space((unsigned char)*q))
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
