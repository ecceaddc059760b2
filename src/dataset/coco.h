/*
 * coco.h - the COCO 2017 validation set as the SSD-ResNet34 reference reads it (benchmarks.md
 * §1.2, §5; ref r1.1 python/coco.py, tools/accuracy-coco.py): <dir>/val2017/<file_name> and
 * <dir>/annotations/instances_val2017.json. Sample i (the qsl_idx) is images[i] of the JSON,
 * the index the accuracy script resolves the payload's image_idx with; label l (1..80) is
 * categories[l - 1] (the loader's label_map, the script's inv_map = [0] + getCatIds()).
 * Also the reference pre-processing (pre_process_coco_resnet34) and a synthetic generator.
 *
 * Thread-safety: read-only after open; loads of different samples may run concurrently.
 */
#ifndef IB_DATASET_COCO_H
#define IB_DATASET_COCO_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/dataset.h"
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

typedef struct ib_coco ib_coco;

typedef struct ib_coco_image {
    int64_t id;
    const char *file_name; /* relative to val2017/ */
    int32_t width, height;
} ib_coco_image;

/*
 * ib_coco_open - parse the annotations (NULL: <dir>/annotations/instances_val2017.json) with
 * jansson and check that every image exists under <dir>/val2017 (the reference skips missing
 * images, which would shift every later qsl_idx against the accuracy script; here it is an
 * error naming the file). Errors name the file, line:column for JSON syntax, and the field:
 * "images[3].width: expected a positive integer". IB_ENOTFOUND for missing files.
 */
int ib_coco_open(const char *dir, const char *annotations, ib_coco **out, ib_err *err);
void ib_coco_close(ib_coco *d);
size_t ib_coco_count(const ib_coco *d);
const ib_coco_image *ib_coco_image_at(const ib_coco *d, size_t i);
/* Categories in file order: label l (1..n) is category id ib_coco_category(d, l - 1). */
size_t ib_coco_category_count(const ib_coco *d);
int64_t ib_coco_category(const ib_coco *d, size_t i);
/* Every annotation, in file order (bbox x, y, w, h; area; iscrowd). */
const ib_coco_gt *ib_coco_annotations(const ib_coco *d, size_t *n);

/*
 * ib_preprocess_coco - pre_process_coco_resnet34: to float32, cv2.resize to width x height
 * with INTER_LINEAR (float, half-pixel centres, edge replicated), /255, minus mean
 * (0.485, 0.456, 0.406), divided by std (0.229, 0.224, 0.225), RGB, in `layout`.
 */
int ib_preprocess_coco(const ib_image *rgb, int32_t width, int32_t height, enum ib_layout layout,
                       float *out, ib_err *err);

/* Decode sample i and pre-process it to size x size (1200 for SSD-ResNet34). */
int ib_coco_load(const ib_coco *d, size_t i, int32_t size, enum ib_layout layout, float *out,
                 ib_err *err);

/*
 * ib_coco_synthesize - write `count` random JPEGs val2017/%012u.jpg of varied sizes (one in
 * five grayscale) and annotations/instances_val2017.json with the 80 real (non-contiguous)
 * COCO category ids and 1..3 boxes per image. Synthetic: labelled as such by the callers.
 */
int ib_coco_synthesize(const char *dir, size_t count, uint64_t seed, ib_err *err);

#endif
