/*
 * test_nifti.c - the NIfTI-1 reader/writer (src/dataset/nifti.c): headers written byte by
 * byte here (not by the writer) in both byte orders with hand-computed voxel values and
 * scaling, the writer round trip through .nii and .nii.gz, and every bad-input error.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/nifti.h"
#include "inferbench/base.h"
#include "test.h"

static void put(uint8_t *p, uint64_t v, size_t n, bool be)
{
    for (size_t i = 0; i < n; i++)
        p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void putf(uint8_t *p, float f, bool be)
{
    uint32_t w;
    memcpy(&w, &f, 4);
    put(p, w, 4, be);
}

/* A 2x3x1 image header by hand: datatype/bitpix as given, pixdim 1.5, 2, 3, vox_offset 352. */
static size_t hand_header(uint8_t *b, bool be, int16_t dt, int16_t bitpix, float slope,
                          float inter)
{
    memset(b, 0, 352);
    put(b, 348, 4, be);
    put(b + 40, 3, 2, be);
    put(b + 42, 2, 2, be);
    put(b + 44, 3, 2, be);
    put(b + 46, 1, 2, be);
    put(b + 70, (uint16_t)dt, 2, be);
    put(b + 72, (uint16_t)bitpix, 2, be);
    putf(b + 76, -1.0f, be); /* qfac */
    putf(b + 80, 1.5f, be);
    putf(b + 84, 2.0f, be);
    putf(b + 88, 3.0f, be);
    putf(b + 108, 352.0f, be);
    putf(b + 112, slope, be);
    putf(b + 116, inter, be);
    put(b + 252, 1, 2, be); /* qform_code */
    put(b + 254, 2, 2, be); /* sform_code */
    putf(b + 256, 0.5f, be);  /* quatern_b */
    putf(b + 268, -90.0f, be); /* qoffset_x */
    putf(b + 280, -1.5f, be);  /* srow_x[0] */
    putf(b + 324, 7.0f, be);   /* srow_z[3] */
    memcpy(b + 148, "hand made", 9);
    memcpy(b + 344, "n+1\0", 4);
    return 352;
}

static void check_int16(bool be)
{
    uint8_t b[352 + 12];
    hand_header(b, be, IB_NIFTI_INT16, 16, 2.0f, -1.0f);
    static const int16_t raw[6] = {0, 1, -1, 100, -32768, 32767};
    for (int i = 0; i < 6; i++)
        put(b + 352 + 2 * i, (uint16_t)raw[i], 2, be);
    ib_nifti n;
    ib_err err;
    ASSERT_OK_ERR(ib_nifti_parse(b, sizeof b, "t.nii", &n, &err), &err);
    ASSERT_INT_EQ(n.big_endian, be);
    ASSERT_INT_EQ(n.ndim, 3);
    ASSERT_INT_EQ(n.dims[0], 2);
    ASSERT_INT_EQ(n.dims[1], 3);
    ASSERT_INT_EQ(n.dims[2], 1);
    ASSERT_UINT_EQ(n.nvox, 6);
    /* value = 2 * raw - 1 */
    static const float want[6] = {-1, 1, -3, 199, -65537, 65533};
    for (int i = 0; i < 6; i++)
        ASSERT_DBL_EQ(n.data[i], want[i]);
    ASSERT_DBL_EQ(n.pixdim[0], -1.0);
    ASSERT_DBL_EQ(n.pixdim[1], 1.5);
    ASSERT_DBL_EQ(n.pixdim[3], 3.0);
    ASSERT_INT_EQ(n.qform_code, 1);
    ASSERT_INT_EQ(n.sform_code, 2);
    ASSERT_DBL_EQ(n.quatern[0], 0.5);
    ASSERT_DBL_EQ(n.qoffset[0], -90.0);
    ASSERT_DBL_EQ(n.srow[0][0], -1.5);
    ASSERT_DBL_EQ(n.srow[2][3], 7.0);
    ASSERT_STR_EQ(n.descrip, "hand made");
    ib_nifti_deinit(&n);
}

TEST(nifti_int16_scaled_little_endian)
{
    check_int16(false);
}

TEST(nifti_int16_scaled_big_endian)
{
    check_int16(true);
}

TEST(nifti_uint8_float32_float64_unscaled)
{
    ib_err err;
    ib_nifti n;
    uint8_t b[352 + 48];
    /* uint8, slope 0 = no scaling (nibabel) */
    hand_header(b, false, IB_NIFTI_UINT8, 8, 0.0f, 5.0f);
    for (int i = 0; i < 6; i++)
        b[352 + i] = (uint8_t)(250 + i);
    ASSERT_OK_ERR(ib_nifti_parse(b, 358, "u8.nii", &n, &err), &err);
    ASSERT_DBL_EQ(n.data[0], 250.0);
    ASSERT_DBL_EQ(n.data[5], 255.0);
    ib_nifti_deinit(&n);
    /* float32, slope NaN = no scaling */
    hand_header(b, false, IB_NIFTI_FLOAT32, 32, NAN, 3.0f);
    for (int i = 0; i < 6; i++)
        putf(b + 352 + 4 * i, 0.25f * (float)i - 1.0f, false);
    ASSERT_OK_ERR(ib_nifti_parse(b, 352 + 24, "f32.nii", &n, &err), &err);
    ASSERT_DBL_EQ(n.data[0], -1.0);
    ASSERT_DBL_EQ(n.data[5], 0.25);
    ib_nifti_deinit(&n);
    /* float64 big endian with slope 0.5 */
    hand_header(b, true, IB_NIFTI_FLOAT64, 64, 0.5f, 0.0f);
    for (int i = 0; i < 6; i++) {
        double d = 1000.0 * i + 0.5;
        uint64_t w;
        memcpy(&w, &d, 8);
        put(b + 352 + 8 * i, w, 8, true);
    }
    ASSERT_OK_ERR(ib_nifti_parse(b, sizeof b, "f64.nii", &n, &err), &err);
    ASSERT_DBL_EQ(n.data[1], 500.25);
    ASSERT_DBL_EQ(n.data[5], 2500.25);
    ib_nifti_deinit(&n);
}

TEST(nifti_write_read_round_trip_plain_and_gz)
{
    ib_err err;
    ib_nifti n;
    ib_nifti_init3d(&n, 5, 4, 3, 1.6f, 1.2f, 0.8f);
    n.data = ib_malloc(n.nvox * sizeof(float));
    for (size_t i = 0; i < n.nvox; i++)
        n.data[i] = (float)((int)i * 37 % 501) - 250.0f;
    snprintf(n.descrip, sizeof n.descrip, "synthetic");
    static const char *const paths[2] = {"a.nii", "a.nii.gz"};
    static const int16_t dts[3] = {IB_NIFTI_INT16, IB_NIFTI_FLOAT32, IB_NIFTI_FLOAT64};
    for (int p = 0; p < 2; p++)
        for (int d = 0; d < 3; d++) {
            ASSERT_OK_ERR(ib_nifti_write(paths[p], &n, dts[d], &err), &err);
            ib_nifti r;
            ASSERT_OK_ERR(ib_nifti_read(paths[p], &r, &err), &err);
            ASSERT_INT_EQ(r.datatype, dts[d]);
            ASSERT_INT_EQ(r.dims[0], 5);
            ASSERT_INT_EQ(r.dims[2], 3);
            ASSERT_DBL_EQ(r.pixdim[1], (double)1.6f);
            ASSERT_DBL_EQ(r.pixdim[3], (double)0.8f);
            ASSERT_STR_EQ(r.descrip, "synthetic");
            ASSERT_MEM_EQ(r.data, n.data, n.nvox * sizeof(float));
            ib_nifti_deinit(&r);
        }
    /* uint8 clamps and rounds */
    n.data[0] = -3.0f;
    n.data[1] = 300.0f;
    n.data[2] = 2.6f;
    ASSERT_OK_ERR(ib_nifti_write("u.nii.gz", &n, IB_NIFTI_UINT8, &err), &err);
    ib_nifti r;
    ASSERT_OK_ERR(ib_nifti_read("u.nii.gz", &r, &err), &err);
    ASSERT_DBL_EQ(r.data[0], 0.0);
    ASSERT_DBL_EQ(r.data[1], 255.0);
    ASSERT_DBL_EQ(r.data[2], 3.0);
    ib_nifti_deinit(&r);
    ib_nifti_deinit(&n);
}

static void expect_parse_error(const uint8_t *b, size_t len, int code, const char *needle)
{
    ib_nifti n;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_STATUS(ib_nifti_parse(b, len, "bad.nii", &n, &err), code);
    ASSERT_NULL(n.data);
    ASSERT_STR_CONTAINS(err.msg, "bad.nii");
    ASSERT_STR_CONTAINS(err.msg, needle);
}

TEST(nifti_rejects_bad_headers_and_truncation)
{
    uint8_t b[352 + 12], c[sizeof b];
    hand_header(b, false, IB_NIFTI_INT16, 16, 1.0f, 0.0f);
    expect_parse_error(b, 100, IB_EFORMAT, "348-byte");
    memcpy(c, b, sizeof b);
    put(c, 540, 4, false); /* NIfTI-2 size */
    expect_parse_error(c, sizeof c, IB_EFORMAT, "sizeof_hdr");
    memcpy(c, b, sizeof b);
    memcpy(c + 344, "n+2\0", 4);
    expect_parse_error(c, sizeof c, IB_EFORMAT, "magic");
    memcpy(c + 344, "ni1\0", 4);
    expect_parse_error(c, sizeof c, IB_EUNSUPPORTED, ".hdr/.img");
    memcpy(c, b, sizeof b);
    put(c + 40, 0, 2, false);
    expect_parse_error(c, sizeof c, IB_EFORMAT, "dim[0]");
    memcpy(c, b, sizeof b);
    put(c + 44, 0, 2, false);
    expect_parse_error(c, sizeof c, IB_EFORMAT, "dim[2] = 0");
    memcpy(c, b, sizeof b);
    put(c + 70, 32, 2, false); /* complex64 */
    expect_parse_error(c, sizeof c, IB_EUNSUPPORTED, "datatype 32");
    memcpy(c, b, sizeof b);
    put(c + 72, 8, 2, false);
    expect_parse_error(c, sizeof c, IB_EFORMAT, "bitpix 8");
    memcpy(c, b, sizeof b);
    putf(c + 108, 348.0f, false);
    expect_parse_error(c, sizeof c, IB_EFORMAT, "vox_offset");
    memcpy(c, b, sizeof b);
    putf(c + 108, 352.5f, false);
    expect_parse_error(c, sizeof c, IB_EFORMAT, "vox_offset");
    /* 6 int16 voxels need 12 bytes; give 11 */
    expect_parse_error(b, sizeof b - 1, IB_EFORMAT, "truncated");
    ib_nifti n;
    ib_err err;
    ASSERT_OK_ERR(ib_nifti_parse(b, sizeof b, "ok.nii", &n, &err), &err);
    ib_nifti_deinit(&n);
}

TEST(nifti_rejects_truncated_and_corrupt_gzip)
{
    ib_err err;
    ib_nifti n;
    ib_nifti_init3d(&n, 8, 8, 8, 1, 1, 1);
    n.data = ib_calloc(n.nvox, sizeof(float));
    for (size_t i = 0; i < n.nvox; i++)
        n.data[i] = (float)(i % 97);
    ASSERT_OK_ERR(ib_nifti_write("v.nii.gz", &n, IB_NIFTI_INT16, &err), &err);
    ib_nifti_deinit(&n);
    char *gz = NULL;
    size_t len = 0;
    ASSERT_OK(ib_file_read_all("v.nii.gz", 1 << 20, &gz, &len, &err));
    ASSERT_OK(ib_file_write_all("cut.nii.gz", gz, len / 2, &err));
    ASSERT_STATUS(ib_nifti_read("cut.nii.gz", &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "cut.nii.gz");
    ASSERT_STR_CONTAINS(err.msg, "truncated");
    gz[len / 2] ^= 0x55; /* flip bits in the deflate data */
    gz[len / 2 + 1] ^= 0xff;
    ASSERT_OK(ib_file_write_all("bad.nii.gz", gz, len, &err));
    int rc = ib_nifti_read("bad.nii.gz", &n, &err);
    ASSERT_INT_NE(rc, IB_OK);
    ASSERT_STR_CONTAINS(err.msg, "bad.nii.gz");
    ib_free(gz);
    ASSERT_STATUS(ib_nifti_read("missing.nii.gz", &n, &err), IB_ENOTFOUND);
}
