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

#include "inferbench/metrics.h"
#include "inferbench/status.h"

/* One ground-truth annotation as instances_val2017.json holds it (bbox is x, y, w, h in
 * pixels; area is the annotation's "area" field, the segment area used for the area ranges). */
typedef struct ib_coco_gt {
    int64_t image_id;
    int64_t category_id;
    double bbox[4];
    double area;
    int iscrowd;
} ib_coco_gt;

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

#endif
