/*
 * dice.h - the 3D U-Net accuracy metrics (benchmarks.md §1.6, §4.2), computed as the
 * reference scripts do:
 *
 *   BraTS 2019 (accuracy-brats.py -> nnU-Net evaluate_regions, medpy metric.dc): labels in
 *   nnU-Net numbering (0 background, 1 edema, 2 necrosis/non-enhancing, 3 enhancing;
 *   Task043 maps BraTS 2 -> 1, 1 -> 2, 4 -> 3). Regions whole tumour {1,2,3}, tumour core
 *   {2,3}, enhancing tumour {3}. Per case DICE = 2|P∩G| / (|P| + |G|), NaN when both are
 *   empty, 0 when only one is. The summary row is np.nanmean over cases written with
 *   "%02.4f" into summary.csv, and the script's headline is the mean of those three
 *   *rounded* values: "Accuracy: mean = %.5f, whole tumor = %.4f, tumor core = %.4f,
 *   enhancing tumor = %.4f".
 *
 *   KiTS19 (accuracy_kits.py get_dice_score): one-hot classes 1 (kidney) and 2 (tumour),
 *   DICE = (2|P∩G| + 1e-6) / (|P| + |G| + 1e-6) per case, composite = their mean; the
 *   summary is the plain mean over cases (NaN counted as 0, which smoothing never yields):
 *   "Accuracy: mean = %.5f, kidney = %.4f, tumor = %.4f".
 *
 * Pure functions of label volumes; no state.
 */
#ifndef IB_METRICS_DICE_H
#define IB_METRICS_DICE_H

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "inferbench/status.h"

enum { IB_DICE_BRATS_WT = 0, IB_DICE_BRATS_TC = 1, IB_DICE_BRATS_ET = 2 };

/* Per-case region DICE of a prediction against the ground truth (n voxels each, nnU-Net
 * labels 0..3). out[3] = WT, TC, ET; NaN where both masks are empty. */
void ib_dice_brats_case(const uint8_t *pred, const uint8_t *gt, size_t n, double out[3]);

typedef struct ib_dice_brats_summary {
    double region[3]; /* nanmean over cases, rounded to 4 decimals as summary.csv holds them */
    double mean;      /* (WT + TC + ET) / 3 of the rounded values: the headline */
    size_t cases;
} ib_dice_brats_summary;

/* Summarise per-case results (cases[i][3]) as evaluate_regions + accuracy-brats.py. */
void ib_dice_brats_summarize(const double (*cases)[3], size_t n, ib_dice_brats_summary *out);
/* Append accuracy-brats.py's "Accuracy: mean = ..." line (with '\n'). */
int ib_dice_brats_format(const ib_dice_brats_summary *s, ib_strbuf *text);

/* Per-case KiTS DICE: out[0] kidney (class 1), out[1] tumour (class 2). Voxels of other
 * labels count for neither class (the reference's np.eye(3) would raise on them). */
void ib_dice_kits_case(const uint8_t *pred, const uint8_t *gt, size_t n, double out[2]);

typedef struct ib_dice_kits_summary {
    double kidney, tumor, composite; /* means over cases */
    size_t cases;
} ib_dice_kits_summary;

void ib_dice_kits_summarize(const double (*cases)[2], size_t n, ib_dice_kits_summary *out);
int ib_dice_kits_format(const ib_dice_kits_summary *s, ib_strbuf *text);

#endif
