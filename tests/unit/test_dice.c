/*
 * test_dice.c - BraTS region DICE and KiTS class DICE (src/metrics/dice.c) on hand-counted
 * label volumes: region membership in nnU-Net labels, the NaN/0 empty-region conventions,
 * nanmean + "%02.4f" rounding before the headline mean, and the KiTS 1e-6 smoothing.
 */
#include <math.h>
#include <string.h>

#include "metrics/dice.h"
#include "test.h"

TEST(dice_brats_regions_hand_counted)
{
    /* 10 voxels. pred/gt in nnU-Net labels (1 edema, 2 necrosis, 3 enhancing). */
    static const uint8_t pred[10] = {0, 1, 1, 2, 3, 3, 0, 2, 1, 0};
    static const uint8_t gt[10] = {0, 1, 2, 2, 3, 0, 1, 3, 0, 0};
    double d[3];
    ib_dice_brats_case(pred, gt, 10, d);
    /* WT: pred {1,2,3,4,5,7,8} (7), gt {1,2,3,4,6,7} (6), inter {1,2,3,4,7} = 5 -> 10/13 */
    ASSERT_DBL_EQ(d[IB_DICE_BRATS_WT], 10.0 / 13.0);
    /* TC: pred {3,4,5,7} (4), gt {2,3,4,7} (4), inter {3,4,7} = 3 -> 6/8 */
    ASSERT_DBL_EQ(d[IB_DICE_BRATS_TC], 0.75);
    /* ET: pred {4,5} (2), gt {4,7} (2), inter {4} -> 2/4 */
    ASSERT_DBL_EQ(d[IB_DICE_BRATS_ET], 0.5);
}

TEST(dice_brats_empty_region_conventions)
{
    static const uint8_t zeros[4] = {0, 0, 0, 0};
    static const uint8_t edema[4] = {0, 1, 1, 0};
    double d[3];
    /* both empty: NaN for every region */
    ib_dice_brats_case(zeros, zeros, 4, d);
    ASSERT_TRUE(isnan(d[0]) && isnan(d[1]) && isnan(d[2]));
    /* WT predicted where gt has none: 0; TC/ET both empty: NaN */
    ib_dice_brats_case(edema, zeros, 4, d);
    ASSERT_DBL_EQ(d[0], 0.0);
    ASSERT_TRUE(isnan(d[1]) && isnan(d[2]));
    /* gt only: 0 as well (medpy) */
    ib_dice_brats_case(zeros, edema, 4, d);
    ASSERT_DBL_EQ(d[0], 0.0);
}

TEST(dice_brats_summary_nanmean_and_rounding)
{
    /* WT: 0.91234, 0.8 -> 0.85617 -> 0.8562; TC: NaN, 0.66666 -> 0.6667 (nanmean);
     * ET: 0.66665 twice -> "%.4f" of the double nearest 0.66665 (0.666649999...) -> 0.6666,
     * where rounding the decimal text half-up would give 0.6667 */
    const double cases[2][3] = {{0.91234, (double)NAN, 0.66665}, {0.8, 0.66666, 0.66665}};
    ib_dice_brats_summary s;
    ib_dice_brats_summarize(cases, 2, &s);
    ASSERT_DBL_EQ(s.region[0], 0.8562);
    ASSERT_DBL_EQ(s.region[1], 0.6667);
    ASSERT_DBL_EQ(s.region[2], 0.6666);
    ASSERT_DBL_EQ(s.mean, (0.8562 + 0.6667 + 0.6666) / 3);
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ASSERT_OK(ib_dice_brats_format(&s, &sb));
    ASSERT_STR_EQ(sb.data, "Accuracy: mean = 0.72983, whole tumor = 0.8562, tumor core = 0.6667, "
                           "enhancing tumor = 0.6666\n");
    ib_strbuf_deinit(&sb);
    /* a region empty in every case stays NaN, and so does the headline */
    const double none[1][3] = {{0.5, (double)NAN, (double)NAN}};
    ib_dice_brats_summarize(none, 1, &s);
    ASSERT_DBL_EQ(s.region[0], 0.5);
    ASSERT_TRUE(isnan(s.region[1]) && isnan(s.mean));
}

TEST(dice_kits_smoothed_classes)
{
    /* 8 voxels: 0 background, 1 kidney, 2 tumour */
    static const uint8_t pred[8] = {0, 1, 1, 1, 2, 0, 0, 0};
    static const uint8_t gt[8] = {0, 1, 1, 0, 2, 2, 0, 0};
    double d[2];
    ib_dice_kits_case(pred, gt, 8, d);
    /* kidney: P 3, G 2, I 2 -> (4 + 1e-6) / (5 + 1e-6); tumour: P 1, G 2, I 1 */
    ASSERT_DBL_EQ(d[0], (4.0 + 1e-6) / (5.0 + 1e-6));
    ASSERT_DBL_EQ(d[1], (2.0 + 1e-6) / (3.0 + 1e-6));
    /* both empty: smoothing gives exactly 1 (not NaN) */
    static const uint8_t z[3] = {0, 0, 0};
    ib_dice_kits_case(z, z, 3, d);
    ASSERT_DBL_EQ(d[0], 1.0);
    ASSERT_DBL_EQ(d[1], 1.0);
    /* tumour predicted, none in gt: 1e-6 / (1 + 1e-6) */
    static const uint8_t t[3] = {0, 2, 0};
    ib_dice_kits_case(t, z, 3, d);
    ASSERT_DBL_EQ(d[1], 1e-6 / (1.0 + 1e-6));
}

TEST(dice_kits_summary_means)
{
    const double cases[2][2] = {{0.9, 0.5}, {0.8, 0.3}};
    ib_dice_kits_summary s;
    ib_dice_kits_summarize(cases, 2, &s);
    ASSERT_NEAR(s.kidney, 0.85, 1e-15);
    ASSERT_NEAR(s.tumor, 0.4, 1e-15);
    ASSERT_NEAR(s.composite, 0.625, 1e-15);
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ASSERT_OK(ib_dice_kits_format(&s, &sb));
    ASSERT_STR_EQ(sb.data, "Accuracy: mean = 0.62500, kidney = 0.8500, tumor = 0.4000\n");
    ib_strbuf_deinit(&sb);
}
