/*
 * test_ops_rnn_nms.c - LSTM (a hand-computed step, and forward / reverse /
 * bidirectional runs with bias, peepholes, initial states, clip and
 * sequence_lens against a naive per-step implementation written here from
 * the ONNX equations), NonMaxSuppression (the ONNX examples: IoU and score
 * thresholds, center_point_box, flipped corners, classes, the output bound)
 * and QuantizeLinear/DequantizeLinear.
 */
#include "ir/ops/ssd_post.h"
#include "test_ops_util.h"

static double sig(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

TEST(ops_lstm_hand_computed_step)
{
    ib_err err;
    /* zero weights: every gate is sigmoid(0) = 0.5, the candidate tanh(0) = 0 */
    ib_tensor *x = T_F32(DIMS(2, 1, 1), 3, -2), *w = t_make(IB_DTYPE_FLOAT32, DIMS(1, 4, 1), NULL);
    ib_tensor *r = t_make(IB_DTYPE_FLOAT32, DIMS(1, 4, 1), NULL);
    ib_tensor *c0 = T_F32(DIMS(1, 1, 1), 1.0f);
    ib_tensor *in[7] = {x, w, r, NULL, NULL, NULL, c0}, *y[3];
    ib_attr hs = A_INT("hidden_size", 1);
    ASSERT_OK_ERR(op_run("LSTM", 14, &hs, 1, in, 7, y, 3, &err), &err);
    ASSERT_DIMS(y[0], 2, 1, 1, 1);
    /* C1 = 0.5, H1 = 0.5 tanh(0.5); C2 = 0.25, H2 = 0.5 tanh(0.25) */
    ASSERT_F32S(y[0], 1e-6, (float)(0.5 * tanh(0.5)), (float)(0.5 * tanh(0.25)));
    ASSERT_F32S(y[1], 1e-6, (float)(0.5 * tanh(0.25)));
    ASSERT_F32S(y[2], 1e-6, 0.25f);
    free_all(y, 3);
    free_all((ib_tensor *[]){x, w, r, c0}, 4);
}

/* The ONNX LSTM equations for one direction, step by step. */
static void naive_lstm_dir(int64_t T, int64_t N, int64_t I, int64_t H, int d, int ndir,
                           bool reverse, const float *X, const float *W, const float *R,
                           const float *B, const float *P, const float *h0, const float *c0,
                           const int32_t *lens, double clip, float *Y, float *Yh, float *Yc)
{
    const float *Wd = W + d * 4 * H * I, *Rd = R + d * 4 * H * H;
    for (int64_t n = 0; n < N; n++) {
        double h[16], c[16], hn[16];
        for (int64_t k = 0; k < H; k++) {
            h[k] = h0 ? (double)h0[(d * N + n) * H + k] : 0;
            c[k] = c0 ? (double)c0[(d * N + n) * H + k] : 0;
        }
        int64_t len = lens ? lens[n] : T;
        for (int64_t s = 0; s < len; s++) {
            int64_t t = reverse ? len - 1 - s : s;
            for (int64_t k = 0; k < H; k++) {
                double g[4];
                for (int q = 0; q < 4; q++) {
                    double a = 0;
                    for (int64_t i = 0; i < I; i++)
                        a += (double)X[(t * N + n) * I + i] * (double)Wd[(q * H + k) * I + i];
                    for (int64_t j = 0; j < H; j++)
                        a += h[j] * (double)Rd[(q * H + k) * H + j];
                    if (B)
                        a += (double)B[d * 8 * H + q * H + k] +
                             (double)B[d * 8 * H + 4 * H + q * H + k];
                    g[q] = a;
                }
                const float *Pd = P ? P + d * 3 * H : NULL;
                double gi = g[0] + (Pd ? (double)Pd[k] * c[k] : 0);
                double gf = g[2] + (Pd ? (double)Pd[2 * H + k] * c[k] : 0);
                if (clip > 0) {
                    gi = fmax(-clip, fmin(clip, gi));
                    gf = fmax(-clip, fmin(clip, gf));
                    g[3] = fmax(-clip, fmin(clip, g[3]));
                }
                double cn = sig(gf) * c[k] + sig(gi) * tanh(g[3]);
                double go = g[1] + (Pd ? (double)Pd[H + k] * cn : 0);
                if (clip > 0) go = fmax(-clip, fmin(clip, go));
                hn[k] = sig(go) * tanh(cn);
                c[k] = cn;
            }
            for (int64_t k = 0; k < H; k++) {
                h[k] = hn[k];
                Y[((t * ndir + d) * N + n) * H + k] = (float)h[k];
            }
        }
        for (int64_t t = len; t < T; t++)
            for (int64_t k = 0; k < H; k++)
                Y[((t * ndir + d) * N + n) * H + k] = 0;
        for (int64_t k = 0; k < H; k++) {
            Yh[(d * N + n) * H + k] = (float)h[k];
            Yc[(d * N + n) * H + k] = (float)c[k];
        }
    }
}

static void check_lstm(const char *dir, bool with_lens, double clip)
{
    ib_err err;
    int64_t T = 4, N = 3, I = 5, H = 3;
    int ndir = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    ib_tensor *x = t_rand(DIMS(T, N, I), 41), *w = t_rand(DIMS(ndir, 4 * H, I), 42);
    ib_tensor *r = t_rand(DIMS(ndir, 4 * H, H), 43), *b = t_rand(DIMS(ndir, 8 * H), 44);
    ib_tensor *h0 = t_rand(DIMS(ndir, N, H), 45), *c0 = t_rand(DIMS(ndir, N, H), 46);
    ib_tensor *p = t_rand(DIMS(ndir, 3 * H), 47);
    ib_tensor *lens = with_lens ? T_I32(DIMS(3), 4, 2, 0) : NULL;
    ib_tensor *in[8] = {x, w, r, b, lens, h0, c0, p}, *y[3];
    ib_attr at[] = {A_INT("hidden_size", H), A_STR("direction", dir), A_FLOAT("clip", (float)clip)};
    ASSERT_OK_ERR(op_run("LSTM", 14, at, clip > 0 ? 3 : 2, in, 8, y, 3, &err), &err);
    ASSERT_DIMS(y[0], T, ndir, N, H);
    ASSERT_DIMS(y[1], ndir, N, H);
    float Y[4 * 2 * 3 * 3], Yh[2 * 3 * 3], Yc[2 * 3 * 3];
    for (int d = 0; d < ndir; d++)
        naive_lstm_dir(T, N, I, H, d, ndir, strcmp(dir, "reverse") == 0 || d == 1, F32(x), F32(w),
                       F32(r), F32(b), F32(p), F32(h0), F32(c0),
                       lens ? (const int32_t *)lens->data : NULL, clip, Y, Yh, Yc);
    for (int64_t i = 0; i < T * ndir * N * H; i++)
        ASSERT_NEAR(F32(y[0])[i], Y[i], 1e-5);
    for (int64_t i = 0; i < ndir * N * H; i++) {
        ASSERT_NEAR(F32(y[1])[i], Yh[i], 1e-5);
        ASSERT_NEAR(F32(y[2])[i], Yc[i], 1e-5);
    }
    free_all(y, 3);
    free_all(in, 8);
}

TEST(ops_lstm_directions_vs_naive)
{
    check_lstm("forward", false, 0);
    check_lstm("reverse", false, 0);
    check_lstm("bidirectional", false, 0);
    check_lstm("forward", false, 0.3);
}

TEST(ops_lstm_sequence_lens_vs_naive)
{
    check_lstm("forward", true, 0);
    check_lstm("bidirectional", true, 0);
}

TEST(ops_lstm_bad_shapes_and_attributes)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(2, 1, 3), 1), *w = t_rand(DIMS(1, 8, 3), 2);
    ib_tensor *r = t_rand(DIMS(1, 8, 2), 3), *in[3] = {x, w, r}, *y[1];
    ib_attr bad = A_STR("direction", "sideways");
    ASSERT_STATUS(op_run("LSTM", 14, &bad, 1, in, 3, y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "direction='sideways'");
    ib_attr hs = A_INT("hidden_size", 3); /* W says 2 */
    ASSERT_STATUS(op_run("LSTM", 14, &hs, 1, in, 3, y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    ib_attr act = {.name = "activations",
                   .type = IB_ATTR_STRINGS,
                   .strings = (const char *const[]){"Sigmoid", "Gauss", "Tanh"},
                   .count = 3};
    ASSERT_STATUS(op_run("LSTM", 14, &act, 1, in, 3, y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "Gauss");
    free_all(in, 3);
}

/* ---- NonMaxSuppression -------------------------------------------------------------- */

static ib_tensor *nms_boxes(void)
{
    return T_F32(DIMS(1, 6, 4), 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0,
                 10.1f, 1, 11.1f, 0, 100, 1, 101);
}

TEST(ops_nms_iou_score_threshold_and_bound)
{
    ib_err err;
    ib_tensor *b = nms_boxes();
    ib_tensor *s = T_F32(DIMS(1, 1, 6), 0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f);
    ib_tensor *mx = T_I64(DIMS(1), 3), *iou = T_F32(DIMS(1), 0.5f), *st = T_F32(DIMS(1), 0.0f);
    ib_tensor *in[5] = {b, s, mx, iou, st}, *y;
    ASSERT_OK_ERR(op_run("NonMaxSuppression", 11, NULL, 0, in, 5, &y, 1, &err), &err);
    ASSERT_DIMS(y, 3, 3);
    ASSERT_I64S(y, 0, 0, 3, 0, 0, 0, 0, 0, 5);
    ib_tensor_free(y);
    /* score threshold 0.4 drops box 5; the output shrinks below the bound */
    ((float *)st->data)[0] = 0.4f;
    ASSERT_OK_ERR(op_run("NonMaxSuppression", 11, NULL, 0, in, 5, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3);
    ASSERT_I64S(y, 0, 0, 3, 0, 0, 0);
    ib_tensor_free(y);
    /* the inferred shape is a bound, flagged data-dependent */
    ib_tensor_desc d[5], od;
    ib_tensor_desc *dp[5];
    for (int i = 0; i < 5; i++) {
        d[i] = in[i]->desc;
        dp[i] = &d[i];
    }
    bool dd = false;
    ASSERT_OK_ERR(op_infer("", "NonMaxSuppression", 11, NULL, 0, dp, (const ib_tensor *const *)in,
                           5, &od, 1, &dd, &err),
                  &err);
    ASSERT_TRUE(dd);
    ASSERT_INT_EQ(od.dims[0], 3);
    ASSERT_INT_EQ(ib_op_find("", "NonMaxSuppression", 11)->flags & IB_OP_F_DATA_DEPENDENT,
                  IB_OP_F_DATA_DEPENDENT);
    /* no max_output_boxes_per_class: nothing selected */
    ASSERT_OK_ERR(op_run("NonMaxSuppression", 11, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 0, 3);
    ib_tensor_free(y);
    free_all(in, 5);
}

TEST(ops_nms_center_format_flipped_and_classes)
{
    ib_err err;
    ib_tensor *b = T_F32(DIMS(1, 6, 4), 0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 0.5f, 0.4f, 1, 1, 0.5f,
                         10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1);
    ib_tensor *s = T_F32(DIMS(1, 2, 6), 0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.9f, 0.75f, 0.6f,
                         0.95f, 0.5f, 0.3f);
    ib_tensor *mx = T_I64(DIMS(1), 2), *iou = T_F32(DIMS(1), 0.5f);
    ib_tensor *in[4] = {b, s, mx, iou}, *y;
    ib_attr cpb = A_INT("center_point_box", 1);
    ASSERT_OK_ERR(op_run("NonMaxSuppression", 11, &cpb, 1, in, 4, &y, 1, &err), &err);
    ASSERT_DIMS(y, 4, 3);
    ASSERT_I64S(y, 0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0);
    ib_tensor_free(y);
    /* corners given as (y2, x2, y1, x1) select the same boxes */
    ib_tensor *f = nms_boxes();
    float *fb = f->data;
    for (int i = 0; i < 6; i++) {
        float t0 = fb[4 * i], t1 = fb[4 * i + 1];
        fb[4 * i] = fb[4 * i + 2];
        fb[4 * i + 1] = fb[4 * i + 3];
        fb[4 * i + 2] = t0;
        fb[4 * i + 3] = t1;
    }
    in[0] = f;
    ASSERT_OK_ERR(op_run("NonMaxSuppression", 11, NULL, 0, in, 4, &y, 1, &err), &err);
    ASSERT_I64S(y, 0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0);
    ib_tensor_free(y);
    in[0] = b;
    ib_tensor_free(f);
    free_all(in, 4);
}

TEST(ops_quantize_dequantize)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(6), 0, 2, 3, 1000, -254, -1000), *sc = T_F32(SCALAR, 2);
    ib_tensor *zp = T_U8(SCALAR, 128), *in[3] = {x, sc, zp}, *y;
    ASSERT_OK_ERR(op_run("QuantizeLinear", 13, NULL, 0, in, 3, &y, 1, &err), &err);
    ASSERT_INT_EQ(y->desc.dtype, IB_DTYPE_UINT8);
    const uint8_t *q = y->data;
    static const uint8_t want[6] = {128, 129, 130, 255, 1, 0}; /* 1.5 rounds to 2 */
    ASSERT_MEM_EQ(q, want, 6);
    ib_tensor_free(y);
    /* int8 per-axis */
    ib_tensor *x2 = T_F32(DIMS(1, 2, 2), 1, -3, 10, 300), *s2 = T_F32(DIMS(2), 1, 2);
    ib_tensor *z2 = T_I8(DIMS(2), 0, -1), *in2[3] = {x2, s2, z2};
    ib_attr ax = A_INT("axis", 1);
    ASSERT_OK_ERR(op_run("QuantizeLinear", 13, &ax, 1, in2, 3, &y, 1, &err), &err);
    const int8_t *qi = y->data;
    ASSERT_INT_EQ(qi[0], 1);
    ASSERT_INT_EQ(qi[1], -3);
    ASSERT_INT_EQ(qi[2], 4);   /* 10 / 2 = 5, -1 */
    ASSERT_INT_EQ(qi[3], 127); /* saturated */
    /* and back */
    ib_tensor *din[3] = {y, s2, z2}, *back;
    ASSERT_OK_ERR(op_run("DequantizeLinear", 13, &ax, 1, din, 3, &back, 1, &err), &err);
    ASSERT_F32S(back, 0, 1, -3, 10, 256);
    free_all((ib_tensor *[]){y, back}, 2);
    /* per-axis needs opset 13 */
    ASSERT_STATUS(op_run("QuantizeLinear", 10, &ax, 1, in2, 3, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "opset 13");
    ib_tensor *u = T_U8(DIMS(4), 0, 3, 128, 255), *dq[3] = {u, sc, zp};
    ASSERT_OK_ERR(op_run("DequantizeLinear", 13, NULL, 0, dq, 3, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, -256, -250, 0, 254);
    ib_tensor_free(y);
    free_all((ib_tensor *[]){x, sc, zp, x2, s2, z2, u}, 7);
}

/* ---- inferbench.SSDPostprocess (ir/ops/detect.c) -------------------------------------- */

/* The reference kernel is ir/ops/ssd_post.c image by image: its rows and counts equal
 * ib_ssd_post's detections; bad shapes and attributes are refused naming the problem. */
TEST(ops_ssd_postprocess_rows_and_bad_input)
{
    ib_err err;
    enum { N = 2, C = 3, A = 40 };
    ib_tensor *loc = t_rand(DIMS(N, 4, A), 11), *conf = t_rand(DIMS(N, C, A), 12);
    ib_tensor *an = t_rand(DIMS(A, 4), 13);
    float *ap = an->data;
    for (int i = 0; i < A * 4; i++)
        ap[i] = 0.3f + 0.25f * ap[i]; /* centres and sizes in (0.05, 0.55) */
    ib_tensor *in[3] = {loc, conf, an}, *y[2] = {NULL, NULL};
    ib_attr at[] = {A_INT("max_output", 30), A_INT("top_per_class", 20)};
    ASSERT_OK_ERR(op_run_ex("inferbench", "SSDPostprocess", 1, at, 2, in, 3, y, 2, NULL, &err), &err);
    ASSERT_INT_EQ(y[0]->desc.dims[1], 30);
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    p.max_out = 30;
    p.top_per_class = 20;
    for (int n = 0; n < N; n++) {
        ib_ssd_det d[30];
        size_t k = 0;
        ASSERT_OK(ib_ssd_post((const float *)loc->data + n * 4 * A,
                              (const float *)conf->data + n * C * A, an->data, A, C, &p, d, &k,
                              NULL));
        ASSERT_TRUE(k > 0);
        ASSERT_INT_EQ(((const int64_t *)y[1]->data)[n], (int64_t)k);
        float rows[30 * 6];
        ib_ssd_rows(d, k, 30, rows);
        ASSERT_MEM_EQ((const float *)y[0]->data + n * 30 * 6, rows, sizeof rows);
    }
    ib_tensor_free(y[0]);
    ib_tensor_free(y[1]);
    ib_attr zero = A_INT("top_per_class", 0);
    ASSERT_STATUS(op_run_ex("inferbench", "SSDPostprocess", 1, &zero, 1, in, 3, y, 2, NULL, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "top_per_class");
    ib_tensor *an2 = t_rand(DIMS(A + 1, 4), 14), *in2[3] = {loc, conf, an2};
    ASSERT_STATUS(op_run_ex("inferbench", "SSDPostprocess", 1, NULL, 0, in2, 3, y, 2, NULL, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "anchors");
    ib_tensor_free(an2);
    free_all(in, 3);
}
