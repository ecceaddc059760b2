/*
 * test_coco_map.c - COCOeval (bbox) on hand-computed fixtures: exact matches, the IoU
 * threshold sweep, 101-point interpolated precision, crowd ground truths, area ranges,
 * maxDets, duplicates, categories without ground truth, images outside imgIds, bad input.
 */
#include <math.h>
#include <string.h>

#include "metrics/coco_map.h"
#include "test.h"

#define GT(img, cat, x, y, w, h, crowd) {img, cat, {x, y, w, h}, (double)(w) * (h), crowd}
#define DT(img, cat, x, y, w, h, s) {img, cat, {x, y, w, h}, s}

static const int64_t k_img1[] = {1};
static const int64_t k_cat1[] = {1};

TEST(coco_map_exact_match_small_box)
{
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0)};
    ib_coco_det d[] = {DT(1, 1, 0, 0, 10, 10, 0.9)};
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 1, d, 1, k_img1, 1, k_cat1, 1, s, NULL));
    /* area 100 is "small": medium/large have no gt (-1) */
    const double want[IB_COCO_NSTATS] = {1, 1, 1, 1, -1, -1, 1, 1, 1, 1, -1, -1};
    for (int i = 0; i < IB_COCO_NSTATS; i++)
        ASSERT_NEAR(s[i], want[i], 1e-12);
}

TEST(coco_map_iou_threshold_sweep)
{
    /* IoU 72/100 = 0.72: a match at .50 .55 .60 .65 .70, a miss at .75 ... .95 */
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0)};
    ib_coco_det d[] = {DT(1, 1, 0, 0, 10, 7.2, 0.9)};
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 1, d, 1, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[0], 0.5, 1e-12); /* 5 of 10 thresholds at AP 1 */
    ASSERT_NEAR(s[1], 1.0, 1e-12);
    ASSERT_NEAR(s[2], 0.0, 1e-12);
    ASSERT_NEAR(s[8], 0.5, 1e-12); /* AR@100 */
}

TEST(coco_map_interpolated_precision_101_points)
{
    /* gts A, B; dets: A (0.9), a false positive (0.8), B (0.7).
     * recall .5 .5 1, precision 1 .5 2/3 -> monotone 1 2/3 2/3.
     * recall points 0.00..0.50 (51) take 1, 0.51..1.00 (50) take 2/3. */
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0), GT(1, 1, 20, 0, 10, 10, 0)};
    ib_coco_det d[] = {DT(1, 1, 50, 50, 10, 10, 0.8), DT(1, 1, 20, 0, 10, 10, 0.7),
                       DT(1, 1, 0, 0, 10, 10, 0.9)};
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 2, d, 3, k_img1, 1, k_cat1, 1, s, NULL));
    double ap = (51.0 + 50.0 * (2.0 / 3.0)) / 101.0;
    ASSERT_NEAR(s[0], ap, 1e-12);
    ASSERT_NEAR(s[1], ap, 1e-12);
    ASSERT_NEAR(s[6], 0.5, 1e-12); /* AR@1: only the 0.9 detection */
    ASSERT_NEAR(s[7], 1.0, 1e-12); /* AR@10 */
}

TEST(coco_map_duplicate_detection_is_false_positive)
{
    /* two detections on A: the second finds A taken -> FP; B never found.
     * recall .5 .5, precision 1 .5 -> monotone 1 .5; points 0..0.5 -> 1, above -> 0 */
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0), GT(1, 1, 20, 0, 10, 10, 0)};
    ib_coco_det d[] = {DT(1, 1, 0, 0, 10, 10, 0.9), DT(1, 1, 0, 0, 10, 10, 0.8)};
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 2, d, 2, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[0], 51.0 / 101.0, 1e-12);
    ASSERT_NEAR(s[8], 0.5, 1e-12);
}

TEST(coco_map_crowd_absorbs_detections)
{
    /* crowd C (40x40): two detections inside it (IoU = inter / det area = 1) match the crowd
     * and are ignored, not false positives; the crowd is not a gt to find. */
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0), GT(1, 1, 20, 0, 40, 40, 1)};
    ib_coco_det d[] = {DT(1, 1, 0, 0, 10, 10, 0.5), DT(1, 1, 20, 0, 10, 10, 0.9),
                       DT(1, 1, 30, 0, 10, 10, 0.8)};
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 2, d, 3, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[0], 1.0, 1e-12);
    /* the same boxes without the crowd flag: C is a normal gt (IoU 100/1600 < .5), so the two
     * detections are false positives ranked first: precision 0 0 1/3, recall 0 0 .5 */
    g[1].iscrowd = 0;
    ASSERT_OK(ib_coco_eval(g, 2, d, 3, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[0], 51.0 / 101.0 / 3.0, 1e-12);
}

TEST(coco_map_area_ranges)
{
    /* small gt (area 100) and large gt (area 10000), both found exactly; a medium-sized false
     * positive (area 2500) ranked first. all: precision 0 .5 2/3 -> monotone 2/3, recall 0 .5 1
     * -> AP 2/3. small/large: the other boxes are ignored -> AP 1. medium: no gt -> -1. */
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0), GT(1, 1, 300, 300, 100, 100, 0)};
    ib_coco_det d[] = {DT(1, 1, 0, 0, 10, 10, 0.9), DT(1, 1, 300, 300, 100, 100, 0.8),
                       DT(1, 1, 150, 150, 50, 50, 0.95)};
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 2, d, 3, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[0], 2.0 / 3.0, 1e-12);
    ASSERT_NEAR(s[3], 1.0, 1e-12);
    ASSERT_NEAR(s[4], -1.0, 1e-12);
    ASSERT_NEAR(s[5], 1.0, 1e-12);
    ASSERT_NEAR(s[9], 1.0, 1e-12);
    ASSERT_NEAR(s[10], -1.0, 1e-12);
    /* the area range uses the annotation's "area" field, not the box: call the large one
     * medium and it moves */
    g[1].area = 50.0 * 50.0;
    ASSERT_OK(ib_coco_eval(g, 2, d, 3, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[5], -1.0, 1e-12);
    ASSERT_TRUE(s[4] > -1.0);
}

TEST(coco_map_categories_and_images)
{
    /* cat 1 found (AP 1), cat 2 missed (AP 0), cat 3 has no gt (-1, left out of the mean);
     * a cat-1 false positive on image 99 is outside imgIds and not evaluated. */
    static const int64_t imgs[] = {2, 1, 2}; /* unsorted, duplicated: np.unique */
    static const int64_t cats[] = {3, 1, 2};
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0), GT(2, 2, 0, 0, 10, 10, 0),
                      GT(99, 1, 0, 0, 10, 10, 0)};
    ib_coco_det d[] = {DT(1, 1, 0, 0, 10, 10, 0.9), DT(2, 3, 0, 0, 10, 10, 0.9),
                       DT(99, 1, 40, 40, 10, 10, 0.99), DT(1, 7, 0, 0, 10, 10, 0.9)};
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 3, d, 4, imgs, 3, cats, 3, s, NULL));
    ASSERT_NEAR(s[0], 0.5, 1e-12);
    ASSERT_NEAR(s[8], 0.5, 1e-12);
}

TEST(coco_map_maxdets_cut_per_image)
{
    /* 100 false positives scored above the one true detection: it is the 101st of the image
     * and cut by maxDets 100 -> AP 0; with 99 false positives it is kept: precision 1/100 */
    enum { N = 101 };
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0)};
    ib_coco_det d[N];
    for (int i = 0; i < N - 1; i++)
        d[i] = (ib_coco_det)DT(1, 1, 100.0 + 20 * i, 0, 10, 10, 0.9);
    d[N - 1] = (ib_coco_det)DT(1, 1, 0, 0, 10, 10, 0.5);
    double s[IB_COCO_NSTATS];
    ASSERT_OK(ib_coco_eval(g, 1, d, N, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[0], 0.0, 1e-12);
    ASSERT_OK(ib_coco_eval(g, 1, d + 1, N - 1, k_img1, 1, k_cat1, 1, s, NULL));
    ASSERT_NEAR(s[0], 0.01, 1e-12);
    ASSERT_NEAR(s[8], 1.0, 1e-12);
}

TEST(coco_map_rejects_non_finite)
{
    ib_coco_gt g[] = {GT(1, 1, 0, 0, 10, 10, 0)};
    ib_coco_det d[] = {DT(1, 1, 0, 0, 10, 10, NAN)};
    double s[IB_COCO_NSTATS];
    ib_err e;
    ASSERT_STATUS(ib_coco_eval(g, 1, d, 1, k_img1, 1, k_cat1, 1, s, &e), IB_EINVAL);
    ASSERT_STR_CONTAINS(e.msg, "non-finite");
}
