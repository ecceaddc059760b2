/*
 * test_metrics_auc.c - the DLRM ROC AUC / click accuracy (src/metrics/auc.c) against
 * hand-computed values, a brute-force Mann-Whitney count with ties, both payload layouts,
 * de-duplication, the script's output line, and bad records.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "metrics/auc.h"
#include "test.h"

static void put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(u >> (8 * k));
}

/* Two samples of two pairs each: sklearn's doc example roc_auc_score([0,0,1,1],
 * [0.1,0.4,0.35,0.8]) = 0.75. */
static const float k_pred[4] = {0.1f, 0.4f, 0.35f, 0.8f};
static const float k_label[4] = {0, 0, 1, 1};
static const uint64_t k_start[3] = {0, 2, 4};

TEST(metrics_auc_pairs_layout_sklearn_example)
{
    uint8_t buf[2][16];
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 2; k++) {
            put_f32(buf[s] + 8 * k, k_pred[2 * s + k]);
            put_f32(buf[s] + 8 * k + 4, k_label[2 * s + k]);
        }
    /* log order 1, 0, 1 (a duplicate, ignored even though its bytes differ) */
    uint8_t dup[16];
    memset(dup, 0, sizeof dup);
    put_f32(dup + 4, 1.0f);
    put_f32(dup + 12, 1.0f);
    ib_metric_record r[3] = {{1, buf[1], 16}, {0, buf[0], 16}, {1, dup, 16}};
    ib_auc_samples s = {2, k_start, NULL};
    ib_metric_auc out;
    ib_err err;
    ASSERT_OK_ERR(ib_metric_auc_compute(r, 3, IB_AUC_PAIRS, &s, &out, &err), &err);
    ASSERT_NEAR(out.auc, 0.75, 1e-15);
    ASSERT_UINT_EQ(out.total, 4);
    ASSERT_UINT_EQ(out.queries, 2);
    ASSERT_UINT_EQ(out.duplicates, 1);
    ASSERT_UINT_EQ(out.good, 3); /* 0.1->0 ok, 0.4->0 ok, 0.35->0 vs 1 wrong, 0.8->1 ok */
    char line[160];
    ib_metric_auc_format(&out, line, sizeof line);
    ASSERT_STR_EQ(line, "AUC=75.000%, accuracy=75.000%, good=3, total=4, queries=2");
}

TEST(metrics_auc_predictions_layout_ties_and_half)
{
    /* preds 0.5, 0.5 | 0.5, 0.9 with labels 0, 1 | 0, 1: positive 0.9 beats both negatives
     * (2), positive 0.5 ties both (2 x 1/2): AUC = 3/4. numpy.round(0.5) = 0 (half to
     * even): good for label 0, wrong for label 1. */
    const float pred[4] = {0.5f, 0.5f, 0.5f, 0.9f};
    const float lab[4] = {0, 1, 0, 1};
    uint8_t buf[2][8];
    for (int i = 0; i < 4; i++)
        put_f32(buf[i / 2] + 4 * (i % 2), pred[i]);
    ib_metric_record r[2] = {{0, buf[0], 8}, {1, buf[1], 8}};
    ib_auc_samples s = {2, k_start, lab};
    ib_metric_auc out;
    ib_err err;
    ASSERT_OK_ERR(ib_metric_auc_compute(r, 2, IB_AUC_PREDICTIONS, &s, &out, &err), &err);
    ASSERT_NEAR(out.auc, 0.75, 1e-15);
    ASSERT_UINT_EQ(out.good, 3);
    /* 1.5 rounds to 2 (even), never equal to a label */
    put_f32(buf[1] + 4, 1.5f);
    ASSERT_OK_ERR(ib_metric_auc_compute(r, 2, IB_AUC_PREDICTIONS, &s, &out, &err), &err);
    ASSERT_UINT_EQ(out.good, 2);
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

TEST(metrics_auc_matches_brute_force_mann_whitney)
{
    enum { NS = 50, PER = 7, NP = NS * PER };
    static float pred[NP], lab[NP];
    static uint8_t buf[NS][PER * 4];
    uint64_t start[NS + 1], x = 42;
    for (int i = 0; i < NP; i++) {
        pred[i] = (float)(lcg(&x) % 17) / 16.0f; /* 17 values: many ties, 0.5 included */
        lab[i] = (float)(lcg(&x) % 3 == 0);
    }
    for (int s = 0; s <= NS; s++)
        start[s] = (uint64_t)s * PER;
    ib_metric_record r[NS];
    for (int s = 0; s < NS; s++) {
        for (int k = 0; k < PER; k++)
            put_f32(buf[s] + 4 * k, pred[s * PER + k]);
        r[s] = (ib_metric_record){(uint64_t)(NS - 1 - s), buf[NS - 1 - s], PER * 4};
    }
    double wins = 0, np_ = 0, nn = 0;
    uint64_t good = 0;
    for (int i = 0; i < NP; i++) {
        np_ += lab[i] == 1;
        nn += lab[i] == 0;
        good += nearbyint(pred[i]) == lab[i];
        if (lab[i] != 1)
            continue;
        for (int j = 0; j < NP; j++)
            if (lab[j] == 0)
                wins += pred[i] > pred[j] ? 1.0 : pred[i] == pred[j] ? 0.5 : 0.0;
    }
    ib_auc_samples s = {NS, start, lab};
    ib_metric_auc out;
    ib_err err;
    ASSERT_OK_ERR(ib_metric_auc_compute(r, NS, IB_AUC_PREDICTIONS, &s, &out, &err), &err);
    ASSERT_NEAR(out.auc, wins / (np_ * nn), 1e-12);
    ASSERT_UINT_EQ(out.good, good);
    ASSERT_UINT_EQ(out.total, NP);
    ASSERT_TRUE(out.auc > 0.3 && out.auc < 0.7); /* random predictions */
}

TEST(metrics_auc_bad_records)
{
    uint8_t b[16];
    for (int k = 0; k < 2; k++) {
        put_f32(b + 8 * k, 0.25f);
        put_f32(b + 8 * k + 4, (float)k);
    }
    ib_auc_samples s = {2, k_start, NULL};
    ib_metric_auc out;
    ib_err err;
    ib_metric_record beyond = {2, b, 16};
    ASSERT_STATUS(ib_metric_auc_compute(&beyond, 1, IB_AUC_PAIRS, &s, &out, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "qsl_idx 2 is beyond");
    ib_metric_record odd = {0, b, 12};
    ASSERT_STATUS(ib_metric_auc_compute(&odd, 1, IB_AUC_PAIRS, &s, &out, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "not whole float32");
    ib_metric_record shortrec = {0, b, 8};
    ASSERT_STATUS(ib_metric_auc_compute(&shortrec, 1, IB_AUC_PAIRS, &s, &out, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "sample has 2 user-item pairs");
    ib_metric_record one = {0, b, 16};
    ASSERT_OK(ib_metric_auc_compute(&one, 1, IB_AUC_PAIRS, &s, &out, &err));
    put_f32(b + 4, 0.5f);
    ASSERT_STATUS(ib_metric_auc_compute(&one, 1, IB_AUC_PAIRS, &s, &out, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "label 0.5 is not 0 or 1");
    put_f32(b + 4, 1.0f); /* both labels 1: one class */
    ASSERT_STATUS(ib_metric_auc_compute(&one, 1, IB_AUC_PAIRS, &s, &out, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "only one class");
    put_f32(b + 4, 0.0f);
    put_f32(b, NAN);
    ASSERT_STATUS(ib_metric_auc_compute(&one, 1, IB_AUC_PAIRS, &s, &out, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "is NaN");
    ib_auc_samples nolabels = {2, k_start, NULL};
    ASSERT_STATUS(ib_metric_auc_compute(&one, 1, IB_AUC_PREDICTIONS, &nolabels, &out, &err),
                  IB_EINVAL);
    const uint64_t bad_start[3] = {0, 3, 2};
    ib_auc_samples bs = {2, bad_start, NULL};
    ASSERT_STATUS(ib_metric_auc_compute(&one, 1, IB_AUC_PAIRS, &bs, &out, &err), IB_EINVAL);
}
