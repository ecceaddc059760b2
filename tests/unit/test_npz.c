/*
 * test_npz.c - the .npz integer-array reader (src/dataset/npz.c): our stored writer round
 * trip, files written by NumPy itself (np.savez and np.savez_compressed, several dtypes;
 * skipped without python3-numpy), and bad input: not a zip, truncated, CRC mismatch,
 * corrupt deflate, missing key, float dtype, 2-D shape, Fortran order.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/npz.h"
#include "inferbench/base.h"
#include "test.h"

TEST(npz_round_trip_of_our_writer)
{
    int32_t v[5] = {0, -1, 7, INT32_MAX, INT32_MIN};
    ib_err err;
    ASSERT_OK_ERR(ib_npz_write_i32("a.npz", "unique", v, 5, &err), &err);
    int64_t *got = NULL;
    size_t n = 0;
    ASSERT_OK_ERR(ib_npz_read_ints("a.npz", "unique", &got, &n, &err), &err);
    ASSERT_UINT_EQ(n, 5);
    for (int i = 0; i < 5; i++)
        ASSERT_INT_EQ(got[i], v[i]);
    ib_free(got);
    /* an empty array */
    ASSERT_OK_ERR(ib_npz_write_i32("e.npz", "unique", NULL, 0, &err), &err);
    ASSERT_OK_ERR(ib_npz_read_ints("e.npz", "unique", &got, &n, &err), &err);
    ASSERT_UINT_EQ(n, 0);
    ib_free(got);
    /* another key is not found, with the entry count */
    ASSERT_STATUS(ib_npz_read_ints("a.npz", "counts", &got, &n, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "no array 'counts'");
    ASSERT_NULL(got);
}

TEST(npz_reads_files_numpy_wrote)
{
    if (ib_test_system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0)
        TEST_SKIP("python3-numpy not installed");
    ASSERT_INT_EQ(ib_test_system(
                      "/usr/bin/python3 -c \"import numpy as np\n"
                      "np.savez_compressed('c.npz', unique=np.array([5, 3, -9, 1 << 30], "
                      "dtype=np.int32), other=np.arange(3))\n"
                      "np.savez('s.npz', counts=np.arange(26, dtype=np.int64) * 1000003)\n"
                      "np.savez_compressed('u8.npz', x=np.array([255, 0, 7], dtype=np.uint8))\n"
                      "np.savez_compressed('big.npz', "
                      "unique=(np.arange(200000, dtype=np.int64) * 7919 %% 40000000)"
                      ".astype(np.int32))\n"
                      "np.savez('f.npz', x=np.zeros(3, dtype=np.float32), "
                      "m=np.zeros((2, 2), dtype=np.int32), "
                      "fo=np.asfortranarray(np.zeros((2, 3), dtype=np.int32)))\""),
                  0);
    int64_t *v = NULL;
    size_t n = 0;
    ib_err err;
    ASSERT_OK_ERR(ib_npz_read_ints("c.npz", "unique", &v, &n, &err), &err);
    ASSERT_UINT_EQ(n, 4);
    ASSERT_INT_EQ(v[0], 5);
    ASSERT_INT_EQ(v[2], -9);
    ASSERT_INT_EQ(v[3], 1 << 30);
    ib_free(v);
    ASSERT_OK_ERR(ib_npz_read_ints("c.npz", "other", &v, &n, &err), &err); /* second entry */
    ASSERT_UINT_EQ(n, 3);
    ASSERT_INT_EQ(v[2], 2);
    ib_free(v);
    ASSERT_OK_ERR(ib_npz_read_ints("s.npz", "counts", &v, &n, &err), &err);
    ASSERT_UINT_EQ(n, 26);
    ASSERT_INT_EQ(v[25], 25 * 1000003LL);
    ib_free(v);
    ASSERT_OK_ERR(ib_npz_read_ints("u8.npz", "x", &v, &n, &err), &err);
    ASSERT_INT_EQ(v[0], 255);
    ib_free(v);
    ASSERT_OK_ERR(ib_npz_read_ints("big.npz", "unique", &v, &n, &err), &err);
    ASSERT_UINT_EQ(n, 200000);
    ASSERT_INT_EQ(v[199999], 199999LL * 7919 % 40000000);
    ib_free(v);
    ASSERT_STATUS(ib_npz_read_ints("f.npz", "x", &v, &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "dtype '<f4'");
    ASSERT_STATUS(ib_npz_read_ints("f.npz", "m", &v, &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "not one-dimensional");
    ASSERT_STATUS(ib_npz_read_ints("f.npz", "fo", &v, &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "fortran_order");
    /* a deflated entry with a flipped byte in its data: corrupt deflate or CRC */
    size_t len = 0;
    char *c = ib_test_slurp_n("big.npz", &len);
    c[len / 2] ^= 0x55;
    ASSERT_OK(ib_file_write_all("bad.npz", c, len, &err));
    ASSERT_STATUS(ib_npz_read_ints("bad.npz", "unique", &v, &n, &err), IB_EFORMAT);
    ASSERT_TRUE(strstr(err.msg, "CRC-32") || strstr(err.msg, "deflate"));
    /* truncated in the middle of the entry */
    ASSERT_OK(ib_file_write_all("trunc.npz", c, len / 3, &err));
    ASSERT_STATUS(ib_npz_read_ints("trunc.npz", "unique", &v, &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "truncated");
    ib_free(c);
}

TEST(npz_bad_input_errors)
{
    int32_t v[3] = {1, 2, 3};
    ib_err err;
    ASSERT_OK_ERR(ib_npz_write_i32("a.npz", "unique", v, 3, &err), &err);
    size_t len = 0;
    char *a = ib_test_slurp_n("a.npz", &len);
    int64_t *out = NULL;
    size_t n = 0;
    /* not a zip */
    ASSERT_STATUS(ib_npz_parse_ints("x", (const uint8_t *)"hello world", 11, "unique", &out, &n,
                                    &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "not a .npz");
    /* a flipped value byte: CRC mismatch (stored entry) */
    char *b = ib_malloc(len);
    memcpy(b, a, len);
    b[30 + 10 + 128 + 1] ^= 1; /* inside the first value, after the 128-byte .npy header */
    ASSERT_STATUS(ib_npz_parse_ints("b", (const uint8_t *)b, len, "unique", &out, &n, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "CRC-32");
    /* truncated anywhere: an error, never a crash */
    for (size_t cut = 1; cut < len; cut += 7) {
        int rc = ib_npz_parse_ints("t", (const uint8_t *)a, cut, "unique", &out, &n, &err);
        if (cut < 30 + 10 + 128 + 12) /* the whole entry is needed */
            ASSERT_INT_NE(rc, IB_OK);
        ASSERT_TRUE(rc == IB_OK || err.msg[0]);
        if (rc == IB_OK)
            ib_free(out);
    }
    /* a missing file: IB_ENOTFOUND naming it */
    ASSERT_STATUS(ib_npz_read_ints("missing.npz", "unique", &out, &n, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "missing.npz");
    ib_free(a);
    ib_free(b);
}
