/*
 * test_brats.c - the BraTS 2019 loader and nnU-Net pre-processing (src/dataset/brats.c,
 * synth_brats.c): hole filling, crop box, masked z-score and centred padding on
 * hand-computed arrays; a synthetic dataset read back (labels remapped 4->3, 2->1, 1->2,
 * unit statistics inside the mask); every bad-input error.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/brats.h"
#include "dataset/nifti.h"
#include "inferbench/base.h"
#include "test.h"

TEST(brats_fill_holes_six_connected)
{
    /* 5x5x5: a closed 3x3x3 shell around (2,2,2) -> the centre is a hole */
    int64_t s[3] = {5, 5, 5};
    uint8_t m[125];
    memset(m, 0, sizeof m);
    for (int z = 1; z <= 3; z++)
        for (int y = 1; y <= 3; y++)
            for (int x = 1; x <= 3; x++)
                m[(z * 5 + y) * 5 + x] = !(z == 2 && y == 2 && x == 2);
    ASSERT_OK(ib_brats_fill_holes(m, s));
    ASSERT_INT_EQ(m[(2 * 5 + 2) * 5 + 2], 1);
    ASSERT_INT_EQ(m[0], 0);
    /* open the face voxel (1,2,2): it touches the border background (0,2,2) and the
     * centre, so the centre is connected to the outside and stays 0 */
    memset(m, 0, sizeof m);
    for (int z = 1; z <= 3; z++)
        for (int y = 1; y <= 3; y++)
            for (int x = 1; x <= 3; x++)
                m[(z * 5 + y) * 5 + x] = !(z == 2 && y == 2 && x == 2) && !(z == 1 && y == 2 && x == 2);
    ASSERT_OK(ib_brats_fill_holes(m, s));
    ASSERT_INT_EQ(m[(2 * 5 + 2) * 5 + 2], 0);
    ASSERT_INT_EQ(m[(1 * 5 + 2) * 5 + 2], 0);
    /* a diagonal-only opening does not connect under 6-connectivity: hole filled */
    memset(m, 0, sizeof m);
    for (int z = 1; z <= 3; z++)
        for (int y = 1; y <= 3; y++)
            for (int x = 1; x <= 3; x++)
                m[(z * 5 + y) * 5 + x] = !(z == 2 && y == 2 && x == 2) && !(z == 1 && y == 1 && x == 1);
    ASSERT_OK(ib_brats_fill_holes(m, s));
    ASSERT_INT_EQ(m[(2 * 5 + 2) * 5 + 2], 1);
}

TEST(brats_preprocess_hand_computed)
{
    /* shape (z,y,x) = (1,3,4); non-zero voxels (0,1,1), (0,1,2), (0,2,1) in channel 0 only */
    int64_t s[3] = {1, 3, 4}, patch[3] = {2, 4, 5};
    float c0[12] = {0}, c1[12] = {0}, c2[12] = {0}, c3[12] = {0};
    c0[1 * 4 + 1] = 1.0f;
    c0[1 * 4 + 2] = 2.0f;
    c0[2 * 4 + 1] = 3.0f;
    c1[1 * 4 + 1] = 5.0f; /* channel 1: 5, 0, 0 inside the mask */
    c1[0] = 0.0f;
    const float *ch[4] = {c0, c1, c2, c3};
    float out[4 * 40];
    ib_brats_geom g;
    ib_err err;
    ASSERT_OK_ERR(ib_brats_preprocess(ch, s, patch, out, &g, "hand", &err), &err);
    /* bbox z [0,1), y [1,3), x [1,3): crop 1x2x2; pads (2-1)//2=0, (4-2)//2=1, (5-2)//2=1 */
    ASSERT_INT_EQ(g.lo[1], 1);
    ASSERT_INT_EQ(g.hi[1], 3);
    ASSERT_INT_EQ(g.lo[2], 1);
    ASSERT_INT_EQ(g.hi[2], 3);
    ASSERT_INT_EQ(g.pad[0], 0);
    ASSERT_INT_EQ(g.pad[1], 1);
    ASSERT_INT_EQ(g.pad[2], 1);
    /* channel 0 over the mask {1,2,3}: mean 2, std sqrt(2/3) */
    double sd = sqrt(2.0 / 3.0) + 1e-8;
    /* crop voxel (0,0,0) = array (0,1,1) -> patch (0,1,1) */
    ASSERT_DBL_EQ(out[(0 * 4 + 1) * 5 + 1], (float)((1.0 - 2.0) / sd));
    ASSERT_DBL_EQ(out[(0 * 4 + 1) * 5 + 2], (float)((2.0 - 2.0) / sd));
    ASSERT_DBL_EQ(out[(0 * 4 + 2) * 5 + 1], (float)((3.0 - 2.0) / sd));
    /* array (0,2,2) is outside the mask (all zero, not a hole): 0 */
    ASSERT_DBL_EQ(out[(0 * 4 + 2) * 5 + 2], 0.0);
    /* padding stays 0 */
    ASSERT_DBL_EQ(out[0], 0.0);
    ASSERT_DBL_EQ(out[(1 * 4 + 1) * 5 + 1], 0.0);
    /* channel 1 over the mask {5,0,0}: mean 5/3, std sqrt(50/9) */
    double m1 = 5.0 / 3.0, sd1 = sqrt(((5 - m1) * (5 - m1) + 2 * m1 * m1) / 3) + 1e-8;
    ASSERT_DBL_EQ(out[40 + (0 * 4 + 1) * 5 + 1], (float)((5.0 - m1) / sd1));
    ASSERT_DBL_EQ(out[40 + (0 * 4 + 1) * 5 + 2], (float)((0.0 - m1) / sd1));
    /* the same crop in a patch narrower than it is an error naming the case */
    int64_t small[3] = {1, 1, 5};
    ASSERT_STATUS(ib_brats_preprocess(ch, s, small, out, &g, "hand", &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "hand");
    ASSERT_STR_CONTAINS(err.msg, "patch");
    /* an all-zero case has no brain */
    const float *zeros[4] = {c2, c2, c2, c2};
    ASSERT_STATUS(ib_brats_preprocess(zeros, s, patch, out, &g, "empty", &err), IB_EFORMAT);
}

TEST(brats_synthetic_reads_back)
{
    ib_err err;
    ASSERT_OK_ERR(ib_brats_synthesize("d", 3, 30, 40, 36, 7, &err), &err);
    int64_t patch[3] = {48, 48, 32};
    ib_brats *b = NULL;
    ASSERT_OK_ERR(ib_brats_open("d", patch, &b, &err), &err);
    ASSERT_UINT_EQ(ib_brats_count(b), 3);
    ASSERT_STR_EQ(ib_brats_case(b, 0), "HGG__BraTS19_SYNTH_000_1");
    ASSERT_STR_EQ(ib_brats_case(b, 2), "LGG__BraTS19_SYNTH_002_1");
    size_t pv = 48 * 48 * 32;
    float *x = ib_malloc(4 * pv * sizeof *x);
    ib_brats_geom g, g2;
    ASSERT_OK_ERR(ib_brats_load(b, 1, x, &g, &err), &err);
    ASSERT_OK_ERR(ib_brats_geometry(b, 1, &g2, &err), &err);
    ASSERT_MEM_EQ(&g, &g2, sizeof g);
    ASSERT_INT_EQ(g.shape[0], 36); /* z */
    ASSERT_INT_EQ(g.shape[2], 30); /* x */
    for (int a = 0; a < 3; a++) {
        ASSERT_INT_GT(g.lo[a], 0); /* the brain does not touch the border */
        ASSERT_INT_EQ(g.pad[a], (patch[a] - (g.hi[a] - g.lo[a])) / 2);
    }
    /* inside the mask each channel has mean ~0 and std ~1 (the hole counts, filled) */
    for (int c = 0; c < 4; c++) {
        double s1 = 0, s2 = 0;
        size_t k = 0;
        for (size_t i = 0; i < pv; i++)
            if (x[c * pv + i] != 0.0f) {
                s1 += (double)x[c * pv + i];
                s2 += (double)x[c * pv + i] * (double)x[c * pv + i];
                k++;
            }
        ASSERT_INT_GT(k, 1000);
        double mean = s1 / (double)k, var = s2 / (double)k - mean * mean;
        /* hole voxels are exactly (0 - mean)/sd, non-zero, so they are counted too */
        ASSERT_NEAR(mean, 0.0, 1e-3);
        ASSERT_NEAR(var, 1.0, 1e-3);
    }
    uint8_t *lab = NULL;
    size_t n = 0;
    ASSERT_OK_ERR(ib_brats_labels(b, 1, &lab, &n, &err), &err);
    ASSERT_UINT_EQ(n, 30 * 40 * 36);
    size_t count[4] = {0};
    for (size_t i = 0; i < n; i++) {
        ASSERT_INT_LE(lab[i], 3);
        count[lab[i]]++;
    }
    ASSERT_INT_GT(count[1], 0);
    ASSERT_INT_GT(count[2], 0);
    ASSERT_INT_GT(count[3], 0);
    ib_free(lab);
    ib_free(x);
    ib_brats_close(b);
}

TEST(brats_rejects_bad_input)
{
    ib_err err;
    int64_t patch[3] = {64, 64, 64};
    ib_brats *b = NULL;
    ASSERT_OK_ERR(ib_brats_synthesize("d", 1, 20, 20, 20, 1, &err), &err);
    /* a list line that is not an nnU-Net name */
    ASSERT_OK(ib_file_write_all("d/fold1_validation.txt", "HGG__BraTS19_SYNTH_000_1\nfoo\n", 29,
                                &err));
    ASSERT_STATUS(ib_brats_open("d", patch, &b, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "fold1_validation.txt:2");
    /* a listed case without files */
    ASSERT_OK(ib_file_write_all("d/fold1_validation.txt", "LGG__BraTS19_NONE_1\n", 20, &err));
    ASSERT_STATUS(ib_brats_open("d", patch, &b, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "BraTS19_NONE_1_t1.nii");
    /* no list file: the built-in 67-case fold 1, whose files are absent here */
    ASSERT_OK(ib_mkdirs("e", &err));
    ASSERT_STATUS(ib_brats_open("e", patch, &b, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "HGG__BraTS19_2013_13_1");
    /* a seg with label 3 (not a BraTS label) */
    ASSERT_OK(ib_file_write_all("d/fold1_validation.txt", "HGG__BraTS19_SYNTH_000_1\n", 25, &err));
    ib_nifti seg;
    ib_nifti_init3d(&seg, 20, 20, 20, 1, 1, 1);
    seg.data = ib_calloc(seg.nvox, sizeof(float));
    seg.data[77] = 3.0f;
    ASSERT_OK(ib_nifti_write("d/HGG/BraTS19_SYNTH_000_1/BraTS19_SYNTH_000_1_seg.nii.gz", &seg,
                             IB_NIFTI_UINT8, &err));
    ib_nifti_deinit(&seg);
    ASSERT_OK_ERR(ib_brats_open("d", patch, &b, &err), &err);
    uint8_t *lab = NULL;
    size_t n = 0;
    ASSERT_STATUS(ib_brats_labels(b, 0, &lab, &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "label 3");
    /* a modality of another size */
    ib_nifti t2;
    ib_nifti_init3d(&t2, 20, 20, 19, 1, 1, 1);
    t2.data = ib_calloc(t2.nvox, sizeof(float));
    ASSERT_OK(ib_nifti_write("d/HGG/BraTS19_SYNTH_000_1/BraTS19_SYNTH_000_1_t2.nii.gz", &t2,
                             IB_NIFTI_INT16, &err));
    ib_nifti_deinit(&t2);
    float *x = ib_malloc(4 * 64 * 64 * 64 * sizeof *x);
    ib_brats_geom g;
    ASSERT_STATUS(ib_brats_load(b, 0, x, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "_t2.nii.gz");
    ib_free(x);
    ib_brats_close(b);
}
