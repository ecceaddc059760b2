/*
 * test_ops_resize.c - Resize and Upsample: nearest modes, linear with
 * half_pixel / align_corners, cubic against the Keys kernel computed here,
 * sizes vs scales, tf_crop_and_resize with extrapolation, Resize-10 and
 * Upsample-9 (asymmetric, floor) and the opset range of Upsample.
 */
#include "test_ops_util.h"

static ib_tensor *row4(void)
{
    return T_F32(DIMS(1, 1, 1, 4), 1, 2, 3, 4);
}

TEST(ops_resize_nearest_modes)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(1, 1, 2, 2), 1, 2, 3, 4), *sc = T_F32(DIMS(4), 1, 1, 2, 2), *y;
    ib_tensor *in[3] = {x, NULL, sc};
    ib_attr at[] = {A_STR("coordinate_transformation_mode", "asymmetric"),
                    A_STR("nearest_mode", "floor")};
    ASSERT_OK_ERR(op_run("Resize", 13, at, 2, in, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 4, 4);
    ASSERT_F32S(y, 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4);
    ib_tensor_free(y);
    /* sizes [1,1,1,3] on [1,2,3,4]: half_pixel coordinates 0.17, 1.5, 2.83 */
    ib_tensor *r = row4(), *sz = T_I64(DIMS(4), 1, 1, 1, 3), *in2[4] = {r, NULL, NULL, sz};
    ASSERT_OK_ERR(op_run("Resize", 13, NULL, 0, in2, 4, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1, 2, 4); /* round_prefer_floor: 1.5 -> 1 */
    ib_tensor_free(y);
    ib_attr ceil_ = A_STR("nearest_mode", "round_prefer_ceil");
    ASSERT_OK_ERR(op_run("Resize", 13, &ceil_, 1, in2, 4, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1, 3, 4);
    ib_tensor_free(y);
    /* both scales and sizes is an error */
    ib_tensor *sc4 = T_F32(DIMS(4), 1, 1, 1, 2), *in3[4] = {r, NULL, sc4, sz};
    ASSERT_STATUS(op_run("Resize", 13, NULL, 0, in3, 4, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "only one of scales and sizes");
    ib_attr bad = A_STR("mode", "area");
    ASSERT_STATUS(op_run("Resize", 13, &bad, 1, in2, 4, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "mode='area'");
    free_all((ib_tensor *[]){x, sc, r, sz, sc4}, 5);
}

TEST(ops_resize_linear_half_pixel_align_corners)
{
    ib_err err;
    ib_tensor *r = row4(), *sc = T_F32(DIMS(4), 1, 1, 1, 2), *in[3] = {r, NULL, sc}, *y;
    ib_attr lin = A_STR("mode", "linear");
    ASSERT_OK_ERR(op_run("Resize", 13, &lin, 1, in, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 1, 8);
    ASSERT_F32S(y, 1e-6, 1, 1.25f, 1.75f, 2.25f, 2.75f, 3.25f, 3.75f, 4);
    ib_tensor_free(y);
    ib_attr ac[] = {lin, A_STR("coordinate_transformation_mode", "align_corners")};
    ASSERT_OK_ERR(op_run("Resize", 13, ac, 2, in, 3, &y, 1, &err), &err);
    for (int i = 0; i < 8; i++)
        ASSERT_NEAR(F32(y)[i], 1 + 3.0 * i / 7, 1e-6);
    ib_tensor_free(y);
    /* tf_crop_and_resize: roi [.., 0.5] to [.., 1.5] over 3 outputs; the
     * last coordinate (4.5) is outside and takes extrapolation_value */
    ib_tensor *roi = T_F32(DIMS(8), 0, 0, 0, 0.5f, 1, 1, 1, 1.5f);
    ib_tensor *sz = T_I64(DIMS(4), 1, 1, 1, 3), *in2[4] = {r, roi, NULL, sz};
    ib_attr tf[] = {lin, A_STR("coordinate_transformation_mode", "tf_crop_and_resize"),
                    A_FLOAT("extrapolation_value", 10.0f)};
    ASSERT_OK_ERR(op_run("Resize", 13, tf, 3, in2, 4, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-6, 2.5f, 4, 10);
    ib_tensor_free(y);
    free_all((ib_tensor *[]){r, sc, roi, sz}, 4);
}

/* Keys cubic convolution kernel with parameter a. */
static double keys(double d, double a)
{
    d = fabs(d);
    if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
    if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
    return 0;
}

TEST(ops_resize_cubic_matches_keys_kernel)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(1, 1, 1, 6), 0.5f, -1, 2, 4, 3, -2), *y;
    ib_tensor *sc = T_F32(DIMS(4), 1, 1, 1, 2), *in[3] = {x, NULL, sc};
    ib_attr at[] = {A_STR("mode", "cubic"), A_FLOAT("cubic_coeff_a", -0.5f)};
    ASSERT_OK_ERR(op_run("Resize", 13, at, 2, in, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 1, 12);
    /* interior outputs (all four taps inside): x_orig = (i + 0.5) / 2 - 0.5 */
    for (int i = 3; i <= 8; i++) {
        double xo = (i + 0.5) / 2 - 0.5, want = 0;
        int base = (int)floor(xo);
        for (int k = base - 1; k <= base + 2; k++)
            want += keys(xo - k, -0.5) * (double)F32(x)[k];
        ASSERT_NEAR(F32(y)[i], want, 1e-5);
    }
    ib_tensor_free(y);
    /* at the border: taps outside are clamped to the edge, or with
     * exclude_outside dropped and the rest renormalised */
    ib_tensor *c = T_F32(DIMS(1, 1, 1, 3), 1, 2, 4), *cin[3] = {c, NULL, sc};
    for (int ex = 0; ex <= 1; ex++) {
        ib_attr at2[] = {A_STR("mode", "cubic"), A_INT("exclude_outside", ex)};
        ASSERT_OK_ERR(op_run("Resize", 13, at2, 2, cin, 3, &y, 1, &err), &err);
        for (int i = 0; i < 6; i++) {
            double xo = (i + 0.5) / 2 - 0.5, sw = 0, swx = 0;
            int base = (int)floor(xo);
            for (int k = base - 1; k <= base + 2; k++) {
                if (ex && (k < 0 || k > 2)) continue;
                double wk = keys(xo - k, -0.75);
                sw += wk;
                swx += wk * (double)F32(c)[k < 0 ? 0 : k > 2 ? 2 : k];
            }
            ASSERT_NEAR(F32(y)[i], ex ? swx / sw : swx, 1e-5);
        }
        ib_tensor_free(y);
    }
    free_all((ib_tensor *[]){x, sc, c}, 3);
}

TEST(ops_upsample_and_resize10_legacy)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(1, 1, 2, 2), 1, 2, 3, 4), *sc = T_F32(DIMS(4), 1, 1, 2, 1.5f);
    ib_tensor *in[2] = {x, sc}, *y;
    ASSERT_OK_ERR(op_run("Upsample", 9, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 4, 3);
    /* asymmetric + floor: columns 0, 0.67, 1.33 -> 0, 0, 1 */
    ASSERT_F32S(y, 0, 1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Resize", 10, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4);
    ib_tensor_free(y);
    /* Upsample-7: scales attribute */
    ib_attr s7 = A_FLOATS("scales", 1, 1, 1, 2);
    ASSERT_OK_ERR(op_run("Upsample", 7, &s7, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 2, 4);
    ASSERT_F32S(y, 0, 1, 1, 2, 2, 3, 3, 4, 4);
    ib_tensor_free(y);
    /* Upsample is deprecated at opset 10: no definition */
    ASSERT_STATUS(op_run("Upsample", 10, NULL, 0, in, 2, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "opsets 7..9");
    free_all(in, 2);
}
