/*
 * test_kits.c - the KiTS19 loader and reference pre-processing (src/dataset/kits.c,
 * synth_kits.c): scipy.ndimage.zoom output sizes (round half to even) and trilinear /
 * nearest values, clip + normalisation, edge padding to the ROI, the sliding-window crop and
 * -2.2 padding, the Gaussian importance map by hand, a synthetic dataset read back, and the
 * bad-input errors.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/kits.h"
#include "dataset/nifti.h"
#include "inferbench/base.h"
#include "test.h"

TEST(kits_shapes_zoom_round_half_even_and_window_adjust)
{
    int64_t o[3];
    /* factors 2.0/1.6 = 1.25 and 0.6/1.2 = 0.5 (both exact in double): 2 -> 2.5 -> 2,
     * 6 -> 7.5 -> 8, 5 -> 2.5 -> 2, 3 -> 1.5 -> 2 (Python round: half to even) */
    const double sp[3] = {2.0, 0.6, 0.9};
    ib_kits_zoom_shape((const int64_t[3]){2, 5, 40}, sp, o);
    ASSERT_INT_EQ(o[0], 2);
    ASSERT_INT_EQ(o[1], 2);
    ASSERT_INT_EQ(o[2], 30);
    ib_kits_zoom_shape((const int64_t[3]){6, 3, 40}, sp, o);
    ASSERT_INT_EQ(o[0], 8);
    ASSERT_INT_EQ(o[1], 2);
    const int64_t roi[3] = {32, 32, 32};
    /* 3.0 / 1.6: 20 -> 37.5 -> 38; 38 % 16 = 6 < 8: cropped to 32; 30 -> min 32 */
    const double sp3[3] = {3.0, 0.9, 0.9};
    ib_kits_final_shape((const int64_t[3]){20, 40, 40}, sp3, roi, o);
    ASSERT_INT_EQ(o[0], 32);
    ASSERT_INT_EQ(o[1], 32);
    /* 25 -> 46.875 -> 47; 47 % 16 = 15 >= 8: padded to 48 */
    ib_kits_final_shape((const int64_t[3]){25, 40, 40}, sp3, roi, o);
    ASSERT_INT_EQ(o[0], 48);
    /* 128 ROI, 64 stride: 300 % 64 = 44 -> padded to 320; 200 % 64 = 8 -> cropped to 192 */
    const int64_t big[3] = {128, 128, 128};
    const double same[3] = {1.6, 1.2, 1.2};
    ib_kits_final_shape((const int64_t[3]){300, 200, 100}, same, big, o);
    ASSERT_INT_EQ(o[0], 320);
    ASSERT_INT_EQ(o[1], 192);
    ASSERT_INT_EQ(o[2], 128);
}

TEST(kits_preprocess_hand_computed)
{
    ib_err err;
    const int64_t roi[3] = {4, 4, 4};
    const double same[3] = {1.6, 1.2, 1.2};
    /* 2x2x2, no resampling: edge-padded to 4x4x4 (1 before, 1 after each axis) */
    const float img[8] = {-100, 0, 101, 400, 50, 50, 50, 50};
    const uint8_t lab[8] = {0, 1, 2, 0, 0, 0, 1, 1};
    float *fo = NULL;
    uint8_t *lo = NULL;
    int64_t o[3];
    ASSERT_OK_ERR(ib_kits_preprocess(img, lab, (const int64_t[3]){2, 2, 2}, same, roi, &fo, &lo,
                                     o, &err),
                  &err);
    ASSERT_INT_EQ(o[0], 4);
    ASSERT_INT_EQ(o[2], 4);
    /* out (1,1,1) = in (0,0,0) = clip(-100) = -79 -> (-79 - 101) / 76.9 */
    ASSERT_DBL_EQ(fo[(1 * 4 + 1) * 4 + 1], (-79.0f - 101.0f) / 76.9f);
    ASSERT_DBL_EQ(fo[0], (-79.0f - 101.0f) / 76.9f); /* edge: the corner repeats in (0,0,0) */
    /* out (1,1,3) = in (0,0,1) (edge) = 0 */
    ASSERT_DBL_EQ(fo[(1 * 4 + 1) * 4 + 3], (0.0f - 101.0f) / 76.9f);
    /* out (1,2,2) = in (0,1,1) = 400 -> 304 */
    ASSERT_DBL_EQ(fo[(1 * 4 + 2) * 4 + 2], (304.0f - 101.0f) / 76.9f);
    ASSERT_INT_EQ(lo[(1 * 4 + 1) * 4 + 2], 1);
    ASSERT_INT_EQ(lo[(3 * 4 + 3) * 4 + 3], 1); /* in (1,1,1) by edge */
    ib_free(fo);
    ib_free(lo);
    /* 5x4x4 with ROI 4 (stride 2): 5 % 2 = 1 is not < 1, so padded to 6 with -2.2 after */
    float im5[80];
    for (int i = 0; i < 80; i++)
        im5[i] = 101.0f;
    ASSERT_OK_ERR(ib_kits_preprocess(im5, NULL, (const int64_t[3]){5, 4, 4}, same, roi, &fo, NULL,
                                     o, &err),
                  &err);
    ASSERT_INT_EQ(o[0], 6);
    ASSERT_DBL_EQ(fo[0], 0.0);
    ASSERT_DBL_EQ(fo[5 * 16], (double)-2.2f);
    ib_free(fo);
    /* 9x8x8 with ROI 8 (stride 4): 9 % 4 = 1 < 2: cropped (0 before, 1 after) to 8 */
    float im9[9 * 64];
    for (int i = 0; i < 9 * 64; i++)
        im9[i] = (float)(i / 64); /* value = index along axis 0 */
    ASSERT_OK_ERR(ib_kits_preprocess(im9, NULL, (const int64_t[3]){9, 8, 8}, same,
                                     (const int64_t[3]){8, 8, 8}, &fo, NULL, o, &err),
                  &err);
    ASSERT_INT_EQ(o[0], 8);
    ASSERT_DBL_EQ(fo[7 * 64], (7.0f - 101.0f) / 76.9f); /* the last slice (8) was cut */
    ib_free(fo);
    /* resampling axis 0 by 2 (3.2 mm -> 1.6): 2 -> 4 at positions 0, 1/3, 2/3, 1 */
    const float two[8] = {0, 0, 0, 0, 90, 90, 90, 90};
    const uint8_t tl[8] = {0, 0, 0, 0, 2, 2, 2, 2};
    ASSERT_OK_ERR(ib_kits_preprocess(two, tl, (const int64_t[3]){2, 2, 2},
                                     (const double[3]){3.2, 1.2, 1.2}, (const int64_t[3]){4, 2, 2},
                                     &fo, &lo, o, &err),
                  &err);
    ASSERT_INT_EQ(o[0], 4);
    ASSERT_INT_EQ(o[1], 2);
    ASSERT_DBL_EQ(fo[1 * 4], ((float)(90.0 / 3) - 101.0f) / 76.9f);
    ASSERT_DBL_EQ(fo[2 * 4], ((float)(90.0 * 2 / 3) - 101.0f) / 76.9f);
    /* nearest: floor(1/3 + 0.5) = 0, floor(2/3 + 0.5) = 1 */
    ASSERT_INT_EQ(lo[1 * 4], 0);
    ASSERT_INT_EQ(lo[2 * 4], 2);
    ib_free(fo);
    ib_free(lo);
}

/* scipy.ndimage.zoom(mode='constant', grid_mode=False): the last position of 8 -> 26 voxels
 * is 25 * (7 / 25) = 7.000000000000001, past the last voxel, so scipy returns cval there:
 * image.min() for the image, label.min() for the label (preprocess.py). Clamping to the last
 * slice (what this loader did) gives the last voxel's value instead. */
TEST(kits_resample_constant_mode_past_the_last_voxel)
{
    float img[2 * 2 * 8];
    uint8_t lab[2 * 2 * 8];
    for (int v = 0; v < 32; v++) {
        img[v] = 50.0f;
        lab[v] = 1;
    }
    img[0] = -10.0f; /* the minimum, away from the last slice */
    lab[0] = 0;
    float *fo = NULL;
    uint8_t *lo = NULL;
    int64_t o[3];
    ib_err err;
    /* 8 * 3.9 / 1.2 = 26.000000000000004 -> 26 voxels on axis 2; axes 0 and 1 keep 2 */
    ASSERT_OK_ERR(ib_kits_preprocess(img, lab, (const int64_t[3]){2, 2, 8},
                                     (const double[3]){1.6, 1.2, 3.9}, (const int64_t[3]){2, 2, 26},
                                     &fo, &lo, o, &err),
                  &err);
    ASSERT_INT_EQ(o[0], 2);
    ASSERT_INT_EQ(o[1], 2);
    ASSERT_INT_EQ(o[2], 26);
    const float inside = (50.0f - 101.0f) / 76.9f, cval = (-10.0f - 101.0f) / 76.9f;
    for (int r = 0; r < 4; r++) {
        ASSERT_DBL_EQ(fo[r * 26 + 24], inside); /* 6.72: between two 50s */
        ASSERT_DBL_EQ(fo[r * 26 + 25], cval);   /* past the end: image.min() */
        ASSERT_INT_EQ(lo[r * 26 + 25], 0);      /* label.min() */
        ASSERT_INT_EQ(lo[r * 26 + 24], 1);      /* floor(6.72 + 0.5) = 7 */
    }
    ib_free(fo);
    ib_free(lo);
}

TEST(kits_gaussian_importance_map_by_hand)
{
    /* n = 4, std 0.5: g = e^-4.5, e^-0.5, e^-0.5, e^-4.5; map = cbrt(g_i g_j g_k) / e^-0.5 */
    float m[64];
    ib_kits_gaussian(4, m);
    ASSERT_DBL_EQ(m[(1 * 4 + 1) * 4 + 1], 1.0);
    ASSERT_NEAR(m[0], exp(-4.0), 1e-7);
    ASSERT_NEAR(m[(0 * 4 + 1) * 4 + 1], exp(-4.0 / 3.0), 1e-7);
    ASSERT_DBL_EQ(m[(2 * 4 + 2) * 4 + 2], 1.0);
    float big[32 * 32 * 32];
    ib_kits_gaussian(32, big);
    ASSERT_DBL_EQ(big[(15 * 32 + 15) * 32 + 16], big[(16 * 32 + 16) * 32 + 15]); /* symmetric */
    ASSERT_TRUE(big[0] > 0.0f && big[0] < 1e-3f);
}

TEST(kits_synthetic_reads_back)
{
    ib_err err;
    ASSERT_OK_ERR(ib_kits_synthesize("k", 2, 1, 3, &err), &err);
    const int64_t roi[3] = {32, 32, 32};
    ib_kits *k = NULL;
    ASSERT_OK_ERR(ib_kits_open("k", roi, &k, &err), &err);
    ASSERT_UINT_EQ(ib_kits_count(k), 2);
    ASSERT_STR_EQ(ib_kits_case(k, 1), "case_00003");
    for (size_t c = 0; c < 2; c++) {
        int64_t s[3];
        ib_kits_shape(k, c, s);
        for (int a = 0; a < 3; a++) {
            ASSERT_INT_GE(s[a], 32);
            ASSERT_INT_EQ(s[a] % 16, 0);
        }
        float *img = NULL;
        uint8_t *lab = NULL;
        ASSERT_OK_ERR(ib_kits_load(k, c, &img, &lab, &err), &err);
        size_t n = (size_t)(s[0] * s[1] * s[2]), cnt[3] = {0};
        for (size_t i = 0; i < n; i++) {
            ASSERT_TRUE(img[i] >= (-79.0f - 101.0f) / 76.9f - 1e-6f || img[i] == -2.2f);
            ASSERT_TRUE(img[i] <= (304.0f - 101.0f) / 76.9f + 1e-6f);
            ASSERT_INT_LE(lab[i], 2);
            cnt[lab[i]]++;
        }
        ASSERT_INT_GT(cnt[1], 0);
        ASSERT_INT_GT(cnt[2], 0);
        ib_free(img);
        ib_free(lab);
    }
    ib_kits_close(k);
}

TEST(kits_rejects_bad_input)
{
    ib_err err;
    const int64_t roi[3] = {32, 32, 32};
    ib_kits *k = NULL;
    ASSERT_OK_ERR(ib_kits_synthesize("k", 1, 1, 3, &err), &err);
    ASSERT_OK(ib_file_write_all("k/inference_cases.json", "{\"a\": 1}", 8, &err));
    ASSERT_STATUS(ib_kits_open("k", roi, &k, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "JSON array");
    ASSERT_OK(ib_file_write_all("k/inference_cases.json", "[\"case_00000\", 7]", 17, &err));
    ASSERT_STATUS(ib_kits_open("k", roi, &k, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "element 1");
    ASSERT_OK(ib_file_write_all("k/inference_cases.json", "[\"case_00009\"]", 14, &err));
    ASSERT_STATUS(ib_kits_open("k", roi, &k, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "case_00009/imaging.nii");
    /* a segmentation of another size */
    ASSERT_OK(ib_file_write_all("k/inference_cases.json", "[\"case_00000\"]", 14, &err));
    ib_nifti s;
    ib_nifti_init3d(&s, 4, 4, 4, 1, 1, 1);
    s.data = ib_calloc(64, sizeof(float));
    s.data[3] = 5.0f;
    ASSERT_OK(ib_nifti_write("k/case_00000/segmentation.nii.gz", &s, IB_NIFTI_UINT8, &err));
    ASSERT_STATUS(ib_kits_open("k", roi, &k, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "segmentation.nii.gz");
    /* the same size but a label 5 */
    ib_nifti h;
    ASSERT_OK(ib_nifti_read_header("k/case_00000/imaging.nii.gz", &h, &err));
    ib_nifti_deinit(&s);
    ib_nifti_init3d(&s, h.dims[0], h.dims[1], h.dims[2], h.pixdim[1], h.pixdim[2], h.pixdim[3]);
    s.data = ib_calloc(s.nvox, sizeof(float));
    s.data[10] = 5.0f;
    ASSERT_OK(ib_nifti_write("k/case_00000/segmentation.nii.gz", &s, IB_NIFTI_UINT8, &err));
    ib_nifti_deinit(&s);
    ASSERT_OK_ERR(ib_kits_open("k", roi, &k, &err), &err);
    float *img = NULL;
    uint8_t *lab = NULL;
    ASSERT_STATUS(ib_kits_load(k, 0, &img, &lab, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "label 5");
    ASSERT_NULL(img);
    ib_kits_close(k);
    /* a zero spacing */
    ib_nifti_init3d(&s, 4, 4, 4, 0.0f, 1, 1);
    s.data = ib_calloc(64, sizeof(float));
    ASSERT_OK(ib_nifti_write("k/case_00000/imaging.nii.gz", &s, IB_NIFTI_INT16, &err));
    ib_nifti_deinit(&s);
    ASSERT_STATUS(ib_kits_open("k", roi, &k, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "pixdim[1]");
}
