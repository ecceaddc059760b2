/*
 * coco_map.h - the COCO detection evaluation (pycocotools COCOeval, iouType "bbox") that the
 * SSD-ResNet34 accuracy script tools/accuracy-coco.py runs (benchmarks.md §1.2): IoU
 * thresholds .50:.05:.95, 101 recall points, area ranges all/small/medium/large, maxDets
 * 1/10/100, crowd ground truths matched without penalty. Also the script's decoding of the
 * accuracy-log payload (7 float32 per detection) into COCO detections.
 *
 * Pure functions of their inputs: no I/O, no global state. Thread-safety: reentrant.
 */
#ifndef IB_METRICS_COCO_MAP_H
#define IB_METRICS_COCO_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "dataset/coco.h" /* ib_coco_gt: the ground truth the dataset loads */
#include "inferbench/metrics.h"
#include "inferbench/status.h"

/* One detection as loadRes takes it (bbox x, y, w, h in pixels). */
typedef struct ib_coco_det {
    int64_t image_id;
    int64_t category_id;
    double bbox[4];
    double score;
} ib_coco_det;

/* COCOeval.stats, in its order: AP, AP50, AP75, AP small/medium/large (maxDets 100), AR at
 * maxDets 1/10/100, AR small/medium/large (maxDets 100). -1 where nothing was evaluable. */
enum { IB_COCO_NSTATS = 12 };

/*
 * ib_coco_eval - COCOeval(gt, dt, "bbox") with params.imgIds = img_ids (sorted and
 * de-duplicated, as the Params setter's np.unique does) and params.catIds = cat_ids, then
 * evaluate(), accumulate(), summarize(); the twelve figures go to stats. Ground truths and
 * detections outside img_ids/cat_ids are not evaluated. IB_EINVAL for a detection with a
 * non-finite score or box; IB_ENOMEM.
 */
int ib_coco_eval(const ib_coco_gt *gts, size_t n_gt, const ib_coco_det *dts, size_t n_dt,
                 const int64_t *img_ids, size_t n_img, const int64_t *cat_ids, size_t n_cat,
                 double stats[IB_COCO_NSTATS], ib_err *err);

/* What the accuracy script needs of images[i] of the annotations: id and size. */
typedef struct ib_coco_image_info {
    int64_t id;
    int32_t width, height;
} ib_coco_image_info;

typedef struct ib_coco_accuracy {
    double stats[IB_COCO_NSTATS]; /* COCOeval.stats; stats[0] is the mAP */
    size_t records;               /* distinct qsl_idx evaluated */
    size_t duplicates;            /* records skipped: qsl_idx seen before */
    size_t detections;            /* detections decoded */
    size_t idx_mismatches;        /* payload image_idx != qsl_idx (the script prints ERROR) */
    size_t nonfinite;             /* detections with a NaN/inf value, dropped (see below) */
    size_t no_detections;         /* records with no detections (their images still count) */
} ib_coco_accuracy;

/*
 * ib_coco_accuracy_compute - tools/accuracy-coco.py: records in log order, a qsl_idx seen
 * before skipped; each payload is float32 groups of 7 (image_idx, ymin, xmin, ymax, xmax,
 * score, label), a payload of fewer than 7 floats means "no detections"; the box is scaled
 * by images[image_idx]'s height/width in float32 and becomes [xmin, ymin, xmax - xmin,
 * ymax - ymin]; the label is int(label), mapped through inv_map = [0] + cat_ids when
 * use_inv_map (--use-inv-map, the 81-label models); COCOeval then runs, with all categories
 * of cat_ids, over every image the log names: those with detections (the payload's
 * image_idx, used as the script does even when it differs from qsl_idx; such records are
 * counted) and those without (images[qsl_idx], which the script adds to image_ids so that
 * their ground-truth boxes count as missed).
 * A detection with a NaN/inf value (an overflowed box decode) is dropped and counted in
 * nonfinite: it cannot match a ground truth, where the script would pass inf/NaN to COCOeval.
 * Its image stays evaluated.
 * IB_EFORMAT (naming the record) for a payload that is not a whole number of 7-float groups,
 * an image_idx outside images[], a label outside inv_map; IB_ENOMEM.
 */
int ib_coco_accuracy_compute(const ib_metric_record *records, size_t n,
                             const ib_coco_image_info *images, size_t n_images,
                             const ib_coco_gt *gts, size_t n_gt, const int64_t *cat_ids,
                             size_t n_cat, int use_inv_map, ib_coco_accuracy *out, ib_err *err);

/* The script's line: "mAP=20.004%" (100 * stats[0], 3 decimals, no newline). */
int ib_coco_accuracy_format(const ib_coco_accuracy *r, char *buf, size_t n);

#endif
