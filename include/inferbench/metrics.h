/*
 * metrics.h - accuracy metrics of the MLPerf benchmarks, computed exactly as the official
 * accuracy scripts do from the records of mlperf_log_accuracy.json (qsl_idx + payload
 * bytes), and formatted as the scripts print them (the lines of accuracy.txt).
 *
 * Metrics are pure functions of the records and the labels: no I/O, no global state.
 * Thread-safety: reentrant.
 */
#ifndef INFERBENCH_METRICS_H
#define INFERBENCH_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "dtype.h"
#include "status.h"

IB_EXTERN_C_BEGIN

/* One record of the accuracy log, hex decoded, in file order. */
typedef struct ib_metric_record {
    uint64_t qsl_idx;
    const uint8_t *data;
    size_t size;
} ib_metric_record;

/* ---- top-1 classification (topk.c) ---------------------------------------------------------- */

typedef struct ib_metric_top1 {
    uint64_t good;       /* records whose class equals the label */
    uint64_t total;      /* distinct qsl_idx seen (the script's len(seen)) */
    uint64_t duplicates; /* records skipped because their qsl_idx was seen before */
    double accuracy_pct; /* 100 * good / total (0 when total is 0) */
} ib_metric_top1;

/*
 * ib_metric_top1_compute - tools/accuracy-imagenet.py: for each record in order, skip a
 * qsl_idx seen before, decode the payload as `dtype` (float32, int32 or int64 as logged:
 * --dtype), take int(first element) (float truncates toward zero) and compare it with
 * labels[qsl_idx]. The offset of 1001-class models (argmax - 1) is applied by the SUT when it
 * writes the payload, as the reference's PostProcessCommon(offset=-1) does, not here.
 * Errors (IB_EFORMAT, naming the record and qsl_idx): a qsl_idx beyond the label list, an
 * empty payload or one whose size is not a multiple of the dtype size, a non-finite float.
 * IB_EINVAL for a dtype other than float32/int32/int64.
 */
IB_API int ib_metric_top1_compute(const ib_metric_record *records, size_t n,
                                  const int32_t *labels, size_t n_labels, enum ib_dtype dtype,
                                  ib_metric_top1 *out, ib_err *err);

/* The script's line: "accuracy=76.456%, good=38228, total=50000" (3 decimals, no newline).
 * Returns the length written (snprintf semantics). */
IB_API int ib_metric_top1_format(const ib_metric_top1 *r, char *buf, size_t n);

/* Index of the largest of n scores (the first one on ties, as numpy.argmax); -1 if n == 0. */
IB_API int64_t ib_metric_argmax_f32(const float *scores, size_t n);

IB_EXTERN_C_END

#endif
