/*
 * auc.h - the DLRM metric (benchmarks.md §1.4): ROC AUC over every user-item pair of the
 * distinct samples in mlperf_log_accuracy.json, and the click "accuracy" beside it, as
 * recommendation/dlrm/pytorch/tools/accuracy-dlrm.py computes and prints them:
 *   AUC=80.172%, accuracy=96.608%, good=86114132, total=89137319, queries=330067
 *
 * Two payload layouts are in use: the reference SUT logs (prediction, label) float32 pairs;
 * NVIDIA's (and Dell's, v1.1) log predictions only and the script takes the labels from
 * day_23 through the aggregation trace ("Assuming loadgen accuracy log does not contain
 * ground truth labels."). Both are read here.
 *
 * Pure function of its inputs; reentrant.
 */
#ifndef IB_METRICS_AUC_H
#define IB_METRICS_AUC_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/metrics.h"

enum ib_auc_layout {
    IB_AUC_PAIRS,       /* float32 (prediction, label) per pair: the reference SUT */
    IB_AUC_PREDICTIONS, /* float32 prediction per pair; labels from the dataset */
};

/* The dataset side: sample s covers pairs [start[s], start[s+1]) of labels[]. */
typedef struct ib_auc_samples {
    size_t n_samples;
    const uint64_t *start; /* n_samples + 1 offsets */
    const float *labels;   /* start[n_samples] labels, 0 or 1; NULL for IB_AUC_PAIRS */
} ib_auc_samples;

typedef struct ib_metric_auc {
    double auc;        /* sklearn.metrics.roc_auc_score(labels, predictions), 0..1 */
    uint64_t good;     /* pairs with round(prediction) == label (numpy round: half to even) */
    uint64_t total;    /* pairs of the distinct samples */
    uint64_t queries;  /* distinct qsl_idx (the script's len(seen)) */
    uint64_t duplicates;
} ib_metric_auc;

/*
 * ib_metric_auc_compute - records in log order, the first record of a qsl_idx wins (the
 * script's `seen` set). The AUC is the area under the ROC curve with one point per distinct
 * prediction value (ties between a positive and a negative count one half), which is what
 * roc_auc_score's roc_curve + trapezoid gives. Errors (IB_EFORMAT, naming the record): a
 * qsl_idx beyond the dataset, a payload that is not whole float32 values (pairs for
 * IB_AUC_PAIRS), a pair count different from the sample's, a label other than 0 or 1, a
 * NaN prediction, and (as roc_auc_score raises) labels of only one class. IB_ENOMEM.
 */
int ib_metric_auc_compute(const ib_metric_record *records, size_t n, enum ib_auc_layout layout,
                          const ib_auc_samples *samples, ib_metric_auc *out, ib_err *err);

/* The script's line (no newline): "AUC=80.172%, accuracy=96.608%, good=86114132,
 * total=89137319, queries=330067". Returns the length (snprintf semantics). */
int ib_metric_auc_format(const ib_metric_auc *r, char *buf, size_t n);

#endif
