/*
 * test_coco_acc.c - tools/accuracy-coco.py's decoding: the PostProcessCocoPt payload written
 * by ib_ssd_payload, scaled by the image size, labels through inv_map, de-duplication,
 * empty payloads (their images are evaluated: their ground truth counts as missed, as
 * accuracy-coco.py adds them to image_ids), the mAP line, and malformed payloads.
 */
#include <math.h>
#include <string.h>

#include "metrics/coco_map.h"
#include "ir/ops/ssd_post.h"
#include "test.h"

static const ib_coco_image_info k_imgs[2] = {{42, 200, 100}, {7, 50, 50}};
static const int64_t k_cats[2] = {1, 3};

TEST(coco_acc_payload_to_map)
{
    /* gt on image 42 (200 x 100): category 3 at x 20, y 10, w 40, h 30; one on image 7 */
    ib_coco_gt g[2] = {{42, 3, {20, 10, 40, 30}, 1200, 0}, {7, 1, {0, 0, 10, 10}, 100, 0}};
    /* the detection as the SUT logs it: normalised ltrb, label 2 = categories[1] = 3 */
    ib_ssd_det d = {{0.1f, 0.1f, 0.3f, 0.4f}, 0.9f, 2};
    float p0[7], junk[7] = {0, 0, 0, 1, 1, 0.99f, 1};
    ib_ssd_payload(0, &d, 1, p0);
    ib_metric_record r[3] = {{0, (const uint8_t *)p0, sizeof p0},
                             {1, NULL, 0}, /* image 7: no detections, still evaluated */
                             {0, (const uint8_t *)junk, sizeof junk}}; /* duplicate: skipped */
    ib_coco_accuracy a;
    /* image 42 alone: its one box is found */
    ASSERT_OK(ib_coco_accuracy_compute(r, 1, k_imgs, 2, g, 2, k_cats, 2, 1, &a, NULL));
    ASSERT_NEAR(a.stats[0], 1.0, 1e-9);
    char line[64];
    ib_coco_accuracy_format(&a, line, sizeof line);
    ASSERT_STR_EQ(line, "mAP=100.000%");
    /* with image 7 in the log (no detections), its category-1 box is a miss: AP 1 for
     * category 3, AP 0 for category 1, mAP 0.5 (pycocotools with imgIds = both images) */
    ASSERT_OK(ib_coco_accuracy_compute(r, 3, k_imgs, 2, g, 2, k_cats, 2, 1, &a, NULL));
    ASSERT_UINT_EQ(a.records, 2);
    ASSERT_UINT_EQ(a.duplicates, 1);
    ASSERT_UINT_EQ(a.detections, 1);
    ASSERT_UINT_EQ(a.no_detections, 1);
    ASSERT_UINT_EQ(a.idx_mismatches, 0);
    ASSERT_NEAR(a.stats[0], 0.5, 1e-9);
    ib_coco_accuracy_format(&a, line, sizeof line);
    ASSERT_STR_EQ(line, "mAP=50.000%");
    /* image 7 with only an overflowed box counts the same way */
    float inf7[7] = {1, 0, 0, INFINITY, 1, 0.5f, 1};
    ib_metric_record r2[2] = {r[0], {1, (const uint8_t *)inf7, sizeof inf7}};
    ASSERT_OK(ib_coco_accuracy_compute(r2, 2, k_imgs, 2, g, 2, k_cats, 2, 1, &a, NULL));
    ASSERT_UINT_EQ(a.nonfinite, 1);
    ASSERT_NEAR(a.stats[0], 0.5, 1e-9);
    /* without --use-inv-map the label is taken as category 2, which has no gt -> AP 0 for 3 */
    ASSERT_OK(ib_coco_accuracy_compute(r, 3, k_imgs, 2, g, 2, k_cats, 2, 0, &a, NULL));
    ASSERT_NEAR(a.stats[0], 0.0, 1e-12);
    ib_coco_accuracy_format(&a, line, sizeof line);
    ASSERT_STR_EQ(line, "mAP=0.000%");
    /* a box 10 % too wide on each side: IoU 40*30 / 48*30 = .833 -> 7 of 10 thresholds */
    d.box[0] = 0.08f;
    d.box[2] = 0.32f;
    ib_ssd_payload(0, &d, 1, p0);
    ASSERT_OK(ib_coco_accuracy_compute(r, 3, k_imgs, 2, g, 2, k_cats, 2, 1, &a, NULL));
    ASSERT_NEAR(a.stats[0], 0.35, 1e-9);
}

TEST(coco_acc_bad_payloads)
{
    ib_coco_gt g[1] = {{42, 3, {20, 10, 40, 30}, 1200, 0}};
    float p[8] = {0, 0.1f, 0.1f, 0.4f, 0.3f, 0.9f, 2, 0};
    ib_metric_record r = {0, (const uint8_t *)p, sizeof p}; /* 8 floats */
    ib_coco_accuracy a;
    ib_err e;
    ASSERT_STATUS(ib_coco_accuracy_compute(&r, 1, k_imgs, 2, g, 1, k_cats, 2, 1, &a, &e),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "groups of 7");
    r.size = 28;
    p[6] = 5; /* label beyond inv_map */
    ASSERT_STATUS(ib_coco_accuracy_compute(&r, 1, k_imgs, 2, g, 1, k_cats, 2, 1, &a, &e),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "inv_map");
    p[6] = 2;
    p[0] = 9; /* image_idx beyond images[] */
    ASSERT_STATUS(ib_coco_accuracy_compute(&r, 1, k_imgs, 2, g, 1, k_cats, 2, 1, &a, &e),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "image_idx");
    p[0] = 1; /* another image than qsl_idx: used, as the script does, and counted */
    ASSERT_OK(ib_coco_accuracy_compute(&r, 1, k_imgs, 2, g, 1, k_cats, 2, 1, &a, &e));
    ASSERT_UINT_EQ(a.idx_mismatches, 1);
    p[3] = INFINITY; /* an overflowed box: dropped and counted, not an error */
    ASSERT_OK(ib_coco_accuracy_compute(&r, 1, k_imgs, 2, g, 1, k_cats, 2, 1, &a, &e));
    ASSERT_UINT_EQ(a.nonfinite, 1);
    ASSERT_UINT_EQ(a.detections, 0);
    r.qsl_idx = 5;
    ASSERT_STATUS(ib_coco_accuracy_compute(&r, 1, k_imgs, 2, g, 1, k_cats, 2, 1, &a, &e),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "qsl_idx 5");
}
