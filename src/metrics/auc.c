/*
 * auc.c - ROC AUC and click accuracy of the DLRM accuracy script (benchmarks.md §1.4,
 * recommendation/dlrm/pytorch/tools/accuracy-dlrm.py); see auc.h.
 *
 * AUC: pairs sorted by prediction, descending; for each group of equal predictions the ROC
 * curve moves from (fp, tp) to (fp + dfp, tp + dtp), and the trapezoid under that step is
 * dfp * (2 tp + dtp) / 2. Twice the area is summed exactly in uint64 (at most 2 P N, below
 * 2^63 for any Criteo day) and divided by 2 P N once, so the result does not depend on the
 * order of the log or of equal predictions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "inferbench/base.h"
#include "metrics/auc.h"

typedef struct auc_pair {
    float pred;
    uint8_t label;
} auc_pair;

static int cmp_desc(const void *a, const void *b)
{
    float x = ((const auc_pair *)a)->pred, y = ((const auc_pair *)b)->pred;
    return (x < y) - (x > y);
}

static float f32_at(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                 (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* numpy.round(x) == label for x in float32: round half to even. */
static int rounds_to(float x, uint8_t label)
{
    return nearbyint((double)x) == (double)label; /* default FE_TONEAREST: half to even */
}

static int label_of(float f, uint8_t *out, size_t rec, uint64_t idx, ib_err *err)
{
    if (f == 0.0f || f == 1.0f) {
        *out = f == 1.0f;
        return IB_OK;
    }
    return ib_err_set(err, IB_EFORMAT,
                      "accuracy log record %zu (qsl_idx %llu): label %g is not 0 or 1", rec,
                      (unsigned long long)idx, (double)f);
}

/* Decode one record's pairs into dst (room for the sample's pair count). */
static int decode(const ib_metric_record *r, size_t rec, enum ib_auc_layout layout,
                  const ib_auc_samples *s, auc_pair *dst, size_t *count, ib_err *err)
{
    unsigned long long idx = (unsigned long long)r->qsl_idx;
    size_t per = layout == IB_AUC_PAIRS ? 8 : 4;
    if (r->size == 0 || r->size % per)
        return ib_err_set(err, IB_EFORMAT,
                          "accuracy log record %zu (qsl_idx %llu): %zu payload bytes are not "
                          "whole float32 %s",
                          rec, idx, r->size,
                          layout == IB_AUC_PAIRS ? "(prediction, label) pairs" : "predictions");
    size_t m = r->size / per;
    uint64_t want = s->start[r->qsl_idx + 1] - s->start[r->qsl_idx];
    if (m != want)
        return ib_err_set(err, IB_EFORMAT,
                          "accuracy log record %zu (qsl_idx %llu): %zu predictions, but the "
                          "sample has %llu user-item pairs",
                          rec, idx, m, (unsigned long long)want);
    for (size_t k = 0; k < m; k++) {
        float pred = f32_at(r->data + k * per);
        if (isnan(pred))
            return ib_err_set(err, IB_EFORMAT,
                              "accuracy log record %zu (qsl_idx %llu): prediction %zu is NaN",
                              rec, idx, k);
        float lab = layout == IB_AUC_PAIRS ? f32_at(r->data + k * per + 4)
                                           : s->labels[s->start[r->qsl_idx] + k];
        dst[k].pred = pred;
        int rc = label_of(lab, &dst[k].label, rec, r->qsl_idx, err);
        if (rc)
            return rc;
    }
    *count = m;
    return IB_OK;
}

static void auc_of(auc_pair *p, size_t n, ib_metric_auc *out, uint64_t *pos, uint64_t *neg)
{
    qsort(p, n, sizeof *p, cmp_desc);
    uint64_t tp = 0, fp = 0, twice = 0;
    for (size_t i = 0; i < n;) {
        uint64_t dtp = 0, dfp = 0;
        size_t j = i;
        for (; j < n && p[j].pred == p[i].pred; j++) {
            dtp += p[j].label;
            dfp += !p[j].label;
        }
        twice += dfp * (2 * tp + dtp);
        tp += dtp;
        fp += dfp;
        i = j;
    }
    *pos = tp;
    *neg = fp;
    out->auc = tp && fp ? (double)twice / (2.0 * (double)tp * (double)fp) : 0.0;
}

int ib_metric_auc_compute(const ib_metric_record *records, size_t n, enum ib_auc_layout layout,
                          const ib_auc_samples *s, ib_metric_auc *out, ib_err *err)
{
    if (!out || !s || !s->start || (n && !records) ||
        (layout == IB_AUC_PREDICTIONS && !s->labels) ||
        (layout != IB_AUC_PAIRS && layout != IB_AUC_PREDICTIONS))
        return ib_err_set(err, IB_EINVAL, "auc: bad arguments");
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < s->n_samples; i++)
        if (s->start[i + 1] < s->start[i] || s->start[0] != 0)
            return ib_err_set(err, IB_EINVAL, "auc: sample %zu has a negative pair count", i);
    uint8_t *seen = ib_calloc(s->n_samples ? s->n_samples : 1, 1);
    auc_pair *pairs = ib_calloc(s->start[s->n_samples] ? s->start[s->n_samples] : 1,
                                sizeof *pairs);
    int rc = IB_OK;
    if (!seen || !pairs) {
        rc = ib_err_set(err, IB_ENOMEM, "auc: out of memory for %llu pairs",
                        (unsigned long long)s->start[s->n_samples]);
        goto done;
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const ib_metric_record *r = &records[i];
        if (r->qsl_idx >= s->n_samples) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "accuracy log record %zu: qsl_idx %llu is beyond the dataset's %zu "
                            "samples (wrong dataset or trace?)",
                            i, (unsigned long long)r->qsl_idx, s->n_samples);
            goto done;
        }
        if (seen[r->qsl_idx]) {
            out->duplicates++;
            continue;
        }
        seen[r->qsl_idx] = 1;
        size_t m = 0;
        rc = decode(r, i, layout, s, pairs + used, &m, err);
        if (rc)
            goto done;
        for (size_t k = 0; k < m; k++)
            out->good += (uint64_t)rounds_to(pairs[used + k].pred, pairs[used + k].label);
        used += m;
        out->queries++;
    }
    out->total = used;
    uint64_t pos = 0, neg = 0;
    auc_of(pairs, used, out, &pos, &neg);
    if (!pos || !neg)
        rc = ib_err_set(err, IB_EFORMAT,
                        "auc: only one class present in the labels (%llu positive, %llu "
                        "negative pairs): ROC AUC is not defined (roc_auc_score raises too)",
                        (unsigned long long)pos, (unsigned long long)neg);
done:
    ib_free(seen);
    ib_free(pairs);
    return rc;
}

int ib_metric_auc_format(const ib_metric_auc *r, char *buf, size_t n)
{
    double acc = r->total ? 100.0 * (double)r->good / (double)r->total : 0.0;
    return snprintf(buf, n, "AUC=%.3f%%, accuracy=%.3f%%, good=%llu, total=%llu, queries=%llu",
                    100.0 * r->auc, acc, (unsigned long long)r->good,
                    (unsigned long long)r->total, (unsigned long long)r->queries);
}
