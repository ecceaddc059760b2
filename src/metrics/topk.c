/*
 * topk.c - top-1 accuracy exactly as the reference tools/accuracy-imagenet.py computes it
 * (benchmarks.md §1.1): records in log order, de-duplicated by qsl_idx (first one wins),
 * payload decoded as the logged dtype, int() of the first element compared with the label
 * from val_map.txt; accuracy over the distinct qsl_idx seen. Also the argmax helper the
 * SUTs and the bench use (numpy.argmax semantics: first maximum wins).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "inferbench/metrics.h"

int64_t ib_metric_argmax_f32(const float *scores, size_t n)
{
    if (n == 0)
        return -1;
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (scores[i] > scores[best] || (isnan(scores[i]) && !isnan(scores[best])))
            best = i; /* numpy: NaN is the maximum; the first NaN wins */
    return (int64_t)best;
}

/* Little-endian element 0 of the payload as the script's int(data[0]). */
static int first_class(const ib_metric_record *r, enum ib_dtype dtype, int64_t *out, size_t i,
                       ib_err *err)
{
    size_t es = dtype == IB_DTYPE_INT64 ? 8 : 4;
    if (r->size == 0 || r->size % es)
        return ib_err_set(err, IB_EFORMAT,
                          "accuracy log record %zu (qsl_idx %llu): %zu payload bytes cannot be "
                          "read as %s (check --payload-dtype / the logged dtype)",
                          i, (unsigned long long)r->qsl_idx, r->size, ib_dtype_name(dtype));
    const uint8_t *p = r->data;
    uint64_t u = 0;
    for (size_t k = 0; k < es; k++)
        u |= (uint64_t)p[k] << (8 * k);
    if (dtype == IB_DTYPE_INT64) {
        *out = (int64_t)u;
    } else if (dtype == IB_DTYPE_INT32) {
        *out = (int64_t)(int32_t)(uint32_t)u;
    } else {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, 4);
        if (!isfinite(f) || fabsf(f) >= 9.2e18f)
            return ib_err_set(err, IB_EFORMAT,
                              "accuracy log record %zu (qsl_idx %llu): class %g is not a finite "
                              "number",
                              i, (unsigned long long)r->qsl_idx, (double)f);
        *out = (int64_t)f; /* truncation toward zero, as int(np.float32) */
    }
    return IB_OK;
}

int ib_metric_top1_compute(const ib_metric_record *records, size_t n, const int32_t *labels,
                           size_t n_labels, enum ib_dtype dtype, ib_metric_top1 *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    if (dtype != IB_DTYPE_FLOAT32 && dtype != IB_DTYPE_INT32 && dtype != IB_DTYPE_INT64)
        return ib_err_set(err, IB_EINVAL,
                          "top-1: payload dtype %s is not one the accuracy script reads "
                          "(float32, int32, int64)",
                          ib_dtype_name(dtype));
    uint8_t *seen = n_labels ? ib_calloc(n_labels, 1) : NULL;
    if (n_labels && !seen)
        return ib_err_set(err, IB_ENOMEM, "top-1: out of memory");
    int rc = IB_OK;
    for (size_t i = 0; i < n; i++) {
        const ib_metric_record *r = &records[i];
        if (r->qsl_idx >= n_labels) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "accuracy log record %zu: qsl_idx %llu is beyond the %zu labels of "
                            "the dataset (wrong val_map.txt?)",
                            i, (unsigned long long)r->qsl_idx, n_labels);
            break;
        }
        if (seen[r->qsl_idx]) {
            out->duplicates++;
            continue;
        }
        seen[r->qsl_idx] = 1;
        int64_t cls = 0;
        if ((rc = first_class(r, dtype, &cls, i, err)))
            break;
        out->total++;
        if (cls == labels[r->qsl_idx])
            out->good++;
    }
    ib_free(seen);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->accuracy_pct = out->total ? 100.0 * (double)out->good / (double)out->total : 0.0;
    return IB_OK;
}

int ib_metric_top1_format(const ib_metric_top1 *r, char *buf, size_t n)
{
    return snprintf(buf, n, "accuracy=%.3f%%, good=%llu, total=%llu", r->accuracy_pct,
                    (unsigned long long)r->good, (unsigned long long)r->total);
}
