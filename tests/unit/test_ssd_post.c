/*
 * test_ssd_post.c - SSD-ResNet34 post-processing on hand-made anchors and offsets: the
 * variance decode, softmax, the strict 0.05 threshold, per-class NMS at IoU 0.5 (exactly 0.5
 * suppresses), per-class top-k and overall max_out cuts, ascending output order, the
 * PostProcessCocoPt payload layout, bad parameters.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/ssd_post.h"
#include "test.h"

TEST(ssd_post_decode_and_softmax)
{
    /* one anchor (cx .5, cy .5, w .2, h .4), offsets (1, -1, .5, 0), logits (0, ln 3, 0) */
    const float anchors[4] = {0.5f, 0.5f, 0.2f, 0.4f};
    const float loc[4] = {1.0f, -1.0f, 0.5f, 0.0f};
    const float conf[3] = {0.0f, logf(3.0f), 0.0f};
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    ib_ssd_det d[200];
    size_t n = 99;
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, 1, 3, &p, d, &n, NULL));
    ASSERT_UINT_EQ(n, 2);
    /* cx = .5 + .1*1*.2 = .52, cy = .5 - .1*.4 = .46, w = exp(.1)*.2, h = .4 */
    double hw = 0.5 * exp(0.1) * 0.2;
    for (int i = 0; i < 2; i++) {
        ASSERT_NEAR(d[i].box[0], 0.52 - hw, 1e-6);
        ASSERT_NEAR(d[i].box[1], 0.26, 1e-6);
        ASSERT_NEAR(d[i].box[2], 0.52 + hw, 1e-6);
        ASSERT_NEAR(d[i].box[3], 0.66, 1e-6);
    }
    /* softmax 1/5, 3/5, 1/5; ascending score order */
    ASSERT_INT_EQ(d[0].label, 2);
    ASSERT_NEAR(d[0].score, 0.2, 1e-6);
    ASSERT_INT_EQ(d[1].label, 1);
    ASSERT_NEAR(d[1].score, 0.6, 1e-6);
}

TEST(ssd_post_score_threshold_is_strict)
{
    /* two classes: p(class 1) = 0.04 is dropped, 0.06 kept */
    const float anchors[8] = {0.5f, 0.5f, 0.2f, 0.2f, 0.2f, 0.2f, 0.1f, 0.1f};
    const float loc[8] = {0};
    float conf[4];
    conf[0] = 0.0f;                      /* anchor 0 background */
    conf[1] = 0.0f;                      /* anchor 1 background */
    conf[2] = logf(0.04f / 0.96f);       /* anchor 0 class 1 */
    conf[3] = logf(0.06f / 0.94f);       /* anchor 1 class 1 */
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    ib_ssd_det d[200];
    size_t n;
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, 2, 2, &p, d, &n, NULL));
    ASSERT_UINT_EQ(n, 1);
    ASSERT_NEAR(d[0].score, 0.06, 1e-6);
    ASSERT_NEAR(d[0].box[0], 0.15, 1e-6); /* anchor 1: cx .2 - w/2 */
}

/* class logits so that class c of anchor a gets roughly weight w (background logit 0) */
static void set_logit(float *conf, size_t n_anchor, size_t c, size_t a, float v)
{
    conf[c * n_anchor + a] = v;
}

TEST(ssd_post_nms_per_class)
{
    /* anchors with zero offsets decode to themselves:
     * A [0,0,.5,1], A2 [0,0,.5,.5] (IoU with A exactly .5 -> suppressed),
     * B [.25,0,.75,1] (IoU with A 1/3 -> kept), C = A again but in class 2 (kept) */
    enum { NA = 3, NC = 3 };
    const float anchors[NA * 4] = {0.25f, 0.5f, 0.5f, 1.0f, 0.25f, 0.25f, 0.5f, 0.5f,
                                   0.5f,  0.5f, 0.5f, 1.0f};
    const float loc[4 * NA] = {0};
    float conf[NC * NA] = {0};
    set_logit(conf, NA, 0, 0, -10); /* anchor 0: class 1 high, class 2 mid */
    set_logit(conf, NA, 1, 0, 3);
    set_logit(conf, NA, 2, 0, 2);
    set_logit(conf, NA, 0, 1, 0); /* anchor 1: class 1 at about .5 */
    set_logit(conf, NA, 1, 1, 0);
    set_logit(conf, NA, 2, 1, -10);
    set_logit(conf, NA, 0, 2, 0); /* anchor 2: class 1 at about .38 */
    set_logit(conf, NA, 1, 2, -0.5f);
    set_logit(conf, NA, 2, 2, -10);
    ASSERT_NEAR(ib_ssd_iou((const float[4]){0, 0, .5f, 1}, (const float[4]){0, 0, .5f, .5f}),
                0.5, 0);
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    ib_ssd_det d[200];
    size_t n;
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, NA, NC, &p, d, &n, NULL));
    ASSERT_UINT_EQ(n, 3);
    /* class 1: A (.73) picked, A2 (.5) suppressed by it, B (.38) kept; class 2: A (.27).
     * ascending overall: class-2 A, B, class-1 A */
    double z = exp(3.0) + exp(2.0) + exp(-10.0);
    double p_a1 = exp(3.0) / z, p_a2 = exp(2.0) / z;
    double p_b = exp(-0.5) / (1.0 + exp(-0.5) + exp(-10.0));
    ASSERT_INT_EQ(d[0].label, 2);
    ASSERT_NEAR(d[0].score, p_a2, 1e-6);
    ASSERT_NEAR(d[0].box[3], 1.0, 1e-7);
    ASSERT_INT_EQ(d[1].label, 1);
    ASSERT_NEAR(d[1].score, p_b, 1e-6);
    ASSERT_NEAR(d[1].box[0], 0.25, 1e-7);
    ASSERT_INT_EQ(d[2].label, 1);
    ASSERT_NEAR(d[2].score, p_a1, 1e-6);
    ASSERT_NEAR(d[2].box[0], 0.0, 1e-7);
    /* NMS threshold above .5: A2 survives too */
    p.nms_iou = 0.51f;
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, NA, NC, &p, d, &n, NULL));
    ASSERT_UINT_EQ(n, 4);
}

TEST(ssd_post_top_k_and_max_out)
{
    /* 5 disjoint anchors of class 1 with increasing logits */
    enum { NA = 5, NC = 2 };
    float anchors[NA * 4], loc[4 * NA] = {0}, conf[NC * NA] = {0};
    for (int a = 0; a < NA; a++) {
        anchors[4 * a + 0] = 0.1f + 0.2f * (float)a;
        anchors[4 * a + 1] = 0.5f;
        anchors[4 * a + 2] = 0.1f;
        anchors[4 * a + 3] = 0.1f;
        conf[NA + a] = (float)a; /* class 1 */
    }
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    ib_ssd_det d[200];
    size_t n;
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, NA, NC, &p, d, &n, NULL));
    ASSERT_UINT_EQ(n, 5);
    for (size_t i = 1; i < n; i++)
        ASSERT_TRUE(d[i - 1].score <= d[i].score);
    p.top_per_class = 3; /* the three best anchors (2, 3, 4) before NMS */
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, NA, NC, &p, d, &n, NULL));
    ASSERT_UINT_EQ(n, 3);
    ASSERT_NEAR(d[0].box[0], 0.5 - 0.05, 1e-6);
    p.max_out = 2; /* the best two overall, still ascending */
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, NA, NC, &p, d, &n, NULL));
    ASSERT_UINT_EQ(n, 2);
    ASSERT_NEAR(d[0].box[0], 0.7 - 0.05, 1e-6);
    ASSERT_NEAR(d[1].box[0], 0.9 - 0.05, 1e-6);
}

TEST(ssd_post_payload_layout)
{
    ib_ssd_det d[2] = {{{0.1f, 0.2f, 0.3f, 0.4f}, 0.5f, 7}, {{0.5f, 0.6f, 0.7f, 0.8f}, 0.9f, 80}};
    float out[14];
    ib_ssd_payload(42, d, 2, out);
    const float want[14] = {42, 0.2f, 0.1f, 0.4f, 0.3f, 0.5f, 7,
                            42, 0.6f, 0.5f, 0.8f, 0.7f, 0.9f, 80};
    ASSERT_MEM_EQ(out, want, sizeof want);
}

TEST(ssd_post_rejects_bad_params)
{
    const float anchors[4] = {0.5f, 0.5f, 0.2f, 0.2f}, loc[4] = {0}, conf[1] = {0};
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    ib_ssd_det d[200];
    size_t n;
    ib_err e;
    ASSERT_STATUS(ib_ssd_post(loc, conf, anchors, 1, 1, &p, d, &n, &e), IB_EINVAL);
    ASSERT_STR_CONTAINS(e.msg, "classes");
    p.max_out = 0;
    ASSERT_STATUS(ib_ssd_post(loc, conf, anchors, 1, 2, &p, d, &n, &e), IB_EINVAL);
}

TEST(ssd_post_r34_anchors)
{
    static float a[IB_SSD_R34_ANCHORS * 4];
    ib_ssd_r34_anchors(a);
    /* level 0 (50x50, step 24, scale 84): first box, then the sqrt(sk1 sk2) size at 2500 */
    ASSERT_NEAR(a[0], 0.01, 1e-7);
    ASSERT_NEAR(a[1], 0.01, 1e-7);
    ASSERT_NEAR(a[2], 84.0 / 1200, 1e-7);
    ASSERT_NEAR(a[4 * 1 + 0], 0.03, 1e-7); /* x moves first */
    ASSERT_NEAR(a[4 * 50 + 1], 0.03, 1e-7);
    ASSERT_NEAR(a[4 * 2500 + 2], sqrt(0.07 * 0.15), 1e-7);
    /* ratio 2 at level 0: (sk1 sqrt2, sk1 / sqrt2) then transposed */
    ASSERT_NEAR(a[4 * 5000 + 2], 0.07 * sqrt(2.0), 1e-7);
    ASSERT_NEAR(a[4 * 7500 + 3], 0.07 * sqrt(2.0), 1e-7);
    /* level 1 starts at 10000: 25x25, step 48, fk 25 */
    ASSERT_NEAR(a[4 * 10000 + 0], 0.5 / 25, 1e-7);
    /* level 2 (13x13, step 92 -> fk 13) starts at 13750 */
    ASSERT_NEAR(a[4 * 13750 + 0], 0.5 / 13, 1e-7);
    ASSERT_NEAR(a[4 * 13750 + 2], 396.0 / 1200, 1e-7);
    /* the last box: level 5, ratio-2 transposed, (2, 2): h = 0.87 sqrt2 clamped to 1 */
    const float *l = a + 4 * (IB_SSD_R34_ANCHORS - 1);
    ASSERT_NEAR(l[0], 2.5 / 3, 1e-7);
    ASSERT_NEAR(l[1], 2.5 / 3, 1e-7);
    ASSERT_NEAR(l[2], 0.87 / sqrt(2.0), 1e-7);
    ASSERT_NEAR(l[3], 1.0, 0);
    for (size_t i = 0; i < IB_SSD_R34_ANCHORS * 4; i++)
        ASSERT_TRUE(a[i] >= 0 && a[i] <= 1);
}

/* The softmax runs 256 anchors at a time with the anchors innermost; every score must still be
 * the bits of the per-anchor computation (max over the classes, expf, the sum in class order,
 * one division): each detection's score equals, bit for bit, that of an anchor of its class
 * whose decoded box it carries. 600 anchors (two chunks and a part), 7 classes, logits spread
 * so that many pass the threshold, also from classes that are not their anchor's maximum
 * (whose exp is not 1, so that a reciprocal-then-multiply would show). */
TEST(ssd_post_scores_bit_exact_in_chunks)
{
    enum { NA = 600, NC = 7 };
    static float anchors[NA * 4], loc[4 * NA], conf[NC * NA], prob[NC * NA];
    uint64_t s = 9;
    for (int i = 0; i < NC * NA; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        conf[i] = (float)((double)(s >> 40) / 16777216.0 - 0.5) * 3.0f;
    }
    for (int a = 0; a < NA; a++) {
        anchors[4 * a + 0] = (float)(a % 25) / 25.0f;
        anchors[4 * a + 1] = (float)(a / 25) / 24.0f;
        anchors[4 * a + 2] = anchors[4 * a + 3] = 0.03f;
        for (int c = 0; c < 4; c++)
            loc[c * NA + a] = 0.01f * (float)((a * 7 + c) % 11);
    }
    for (int a = 0; a < NA; a++) {
        float mx = conf[a], sum = 0;
        for (int c = 1; c < NC; c++)
            mx = fmaxf(mx, conf[c * NA + a]);
        for (int c = 0; c < NC; c++)
            sum += (prob[c * NA + a] = expf(conf[c * NA + a] - mx));
        for (int c = 0; c < NC; c++)
            prob[c * NA + a] /= sum;
    }
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    static ib_ssd_det d[200];
    size_t n = 0;
    ASSERT_OK(ib_ssd_post(loc, conf, anchors, NA, NC, &p, d, &n, NULL));
    ASSERT_UINT_GE(n, 100);
    int not_max = 0;
    for (size_t i = 0; i < n; i++) {
        not_max += d[i].score < 0.5f;
        int found = 0;
        for (int a = 0; a < NA && !found; a++) {
            float cx = p.scale_xy * loc[a] * anchors[4 * a + 2] + anchors[4 * a];
            float w = expf(p.scale_wh * loc[2 * NA + a]) * anchors[4 * a + 2];
            found = memcmp(&prob[d[i].label * NA + a], &d[i].score, sizeof(float)) == 0 &&
                    d[i].box[0] == cx - 0.5f * w;
        }
        ASSERT_TRUE(found);
    }
    ASSERT_INT_GE(not_max, 50);
}
