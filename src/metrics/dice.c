/*
 * dice.c - BraTS region DICE and KiTS class DICE as the MLPerf accuracy scripts compute
 * them (see dice.h for the rules and their sources). Counts are exact integers; the
 * divisions are done in double as numpy does them in float64. The BraTS headline rounds
 * each region mean through "%.4f" text first, because accuracy-brats.py reads the
 * summary.csv that nnU-Net wrote with "%02.4f" and averages those numbers.
 */
#include "metrics/dice.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* medpy.metric.dc on the region masks, with evaluate_case's NaN for two empty masks */
static double region_dc(size_t inter, size_t p, size_t g)
{
    if (p == 0 && g == 0)
        return NAN;
    return 2.0 * (double)inter / (double)(p + g);
}

void ib_dice_brats_case(const uint8_t *pred, const uint8_t *gt, size_t n, double out[3])
{
    /* region r holds label l when l >= r + 1 (WT 1..3, TC 2..3, ET 3) */
    size_t inter[3] = {0}, np[3] = {0}, ng[3] = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned a = pred[i], b = gt[i];
        for (unsigned r = 0; r < 3; r++) {
            bool pa = a >= r + 1 && a <= 3, gb = b >= r + 1 && b <= 3;
            np[r] += pa;
            ng[r] += gb;
            inter[r] += pa && gb;
        }
    }
    for (int r = 0; r < 3; r++)
        out[r] = region_dc(inter[r], np[r], ng[r]);
}

/* float("%02.4f" % x): Python and glibc both round the exact binary value */
static double round4(double x)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%02.4f", x);
    return strtod(buf, NULL);
}

void ib_dice_brats_summarize(const double (*cases)[3], size_t n, ib_dice_brats_summary *out)
{
    out->cases = n;
    for (int r = 0; r < 3; r++) {
        double sum = 0;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!isnan(cases[i][r])) {
                sum += cases[i][r];
                k++;
            }
        out->region[r] = round4(k ? sum / (double)k : (double)NAN); /* np.nanmean: NaN if none */
    }
    out->mean = (out->region[0] + out->region[1] + out->region[2]) / 3;
}

int ib_dice_brats_format(const ib_dice_brats_summary *s, ib_strbuf *text)
{
    return ib_strbuf_printf(text,
                            "Accuracy: mean = %.5f, whole tumor = %.4f, tumor core = %.4f, "
                            "enhancing tumor = %.4f\n",
                            s->mean, s->region[0], s->region[1], s->region[2]);
}

void ib_dice_kits_case(const uint8_t *pred, const uint8_t *gt, size_t n, double out[2])
{
    size_t inter[2] = {0}, np[2] = {0}, ng[2] = {0};
    for (size_t i = 0; i < n; i++)
        for (unsigned c = 0; c < 2; c++) {
            bool a = pred[i] == c + 1, b = gt[i] == c + 1;
            np[c] += a;
            ng[c] += b;
            inter[c] += a && b;
        }
    /* smooth_nr = smooth_dr = 1e-6 */
    for (int c = 0; c < 2; c++)
        out[c] = (2.0 * (double)inter[c] + 1e-6) / ((double)ng[c] + (double)np[c] + 1e-6);
}

void ib_dice_kits_summarize(const double (*cases)[2], size_t n, ib_dice_kits_summary *out)
{
    double k = 0, t = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        /* df.fillna(0).mean() */
        double a = isnan(cases[i][0]) ? 0 : cases[i][0], b = isnan(cases[i][1]) ? 0 : cases[i][1];
        double comp = (cases[i][0] + cases[i][1]) / 2; /* np.mean(arr) per case */
        k += a;
        t += b;
        c += isnan(comp) ? 0 : comp;
    }
    out->cases = n;
    out->kidney = n ? k / (double)n : (double)NAN;
    out->tumor = n ? t / (double)n : (double)NAN;
    out->composite = n ? c / (double)n : (double)NAN;
}

int ib_dice_kits_format(const ib_dice_kits_summary *s, ib_strbuf *text)
{
    return ib_strbuf_printf(text, "Accuracy: mean = %.5f, kidney = %.4f, tumor = %.4f\n",
                            s->composite, s->kidney, s->tumor);
}
