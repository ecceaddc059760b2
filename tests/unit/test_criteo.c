/*
 * test_criteo.c - the Criteo binary + aggregation trace loader (src/dataset/criteo.c):
 * a synthetic dataset read back with the reference pre-processing (log(x+1), id % cap),
 * hand-written rows, and every bad-input error.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/criteo.h"
#include "inferbench/base.h"
#include "test.h"

static void put32(uint8_t *p, int32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)((uint32_t)v >> (8 * k));
}

/* 3 rows: label r%2, dense[d] = r*10+d, sparse[s] = 1000*r + s. */
static void write_rows(const char *dir, size_t rows, size_t extra_bytes)
{
    ib_err err;
    ASSERT_OK(ib_mkdirs(dir, &err));
    uint8_t buf[3 * 160 + 16];
    memset(buf, 0, sizeof buf);
    for (size_t r = 0; r < rows; r++) {
        uint8_t *row = buf + r * 160;
        put32(row, (int32_t)(r % 2));
        for (int d = 0; d < 13; d++)
            put32(row + 4 * (1 + d), (int32_t)(r * 10 + (size_t)d));
        for (int s = 0; s < 26; s++)
            put32(row + 4 * (14 + s), (int32_t)(1000 * r + (size_t)s));
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, IB_CRITEO_BIN);
    ASSERT_OK(ib_file_write_all(path, buf, rows * 160 + extra_bytes, &err));
}

static void write_trace(const char *dir, const char *text)
{
    char path[512];
    ib_err err;
    snprintf(path, sizeof path, "%s/%s", dir, IB_CRITEO_TRACE);
    ASSERT_OK(ib_file_write_all(path, text, strlen(text), &err));
}

TEST(criteo_reads_rows_with_reference_preprocessing)
{
    write_rows("d", 3, 0);
    write_trace("d", "0, 1, 1\n1, 3, 2\n");
    ib_criteo *c;
    ib_err err;
    ASSERT_OK_ERR(ib_criteo_open("d", 1500, &c, &err), &err);
    ASSERT_UINT_EQ(ib_criteo_samples(c), 2);
    ASSERT_UINT_EQ(ib_criteo_rows(c), 3);
    ASSERT_UINT_EQ(ib_criteo_pair_starts(c)[2], 3);
    float dense[2 * 13], lab[2];
    int64_t sparse[2 * 26];
    ASSERT_OK_ERR(ib_criteo_load(c, 1, dense, sparse, lab, &err), &err);
    ASSERT_DBL_EQ(lab[0], 1.0);
    ASSERT_DBL_EQ(lab[1], 0.0);
    ASSERT_DBL_EQ(dense[0], (float)log(11.0));          /* row 1, dense 0 = 10 */
    ASSERT_DBL_EQ(dense[13 + 12], (float)log(33.0));    /* row 2, dense 12 = 32 */
    ASSERT_INT_EQ(sparse[5], 1005);                      /* below the cap */
    ASSERT_INT_EQ(sparse[26 + 7], (2000 + 7) % 1500);    /* row 2: modulo the cap */
    ASSERT_STATUS(ib_criteo_load(c, 2, dense, sparse, lab, &err), IB_EINVAL);
    ib_criteo_close(c);
}

TEST(criteo_synthetic_dataset_round_trips)
{
    ib_err err;
    uint64_t rows[26];
    for (int t = 0; t < 26; t++)
        rows[t] = t == 5 ? 3 : 100000u + (uint64_t)t;
    ASSERT_OK_ERR(ib_criteo_synthesize("syn", 20, 100, 700, rows, 7, &err), &err);
    ib_criteo *c;
    ASSERT_OK_ERR(ib_criteo_open("syn", 1000, &c, &err), &err);
    ASSERT_UINT_EQ(ib_criteo_samples(c), 20);
    const uint64_t *st = ib_criteo_pair_starts(c);
    ASSERT_UINT_EQ(ib_criteo_rows(c), st[20]);
    static float dense[700 * 13], lab[700];
    static int64_t sparse[700 * 26];
    unsigned pos = 0, all = 0;
    for (size_t i = 0; i < 20; i++) {
        uint64_t m = st[i + 1] - st[i];
        ASSERT_TRUE(m >= 100 && m <= 700);
        ASSERT_OK_ERR(ib_criteo_load(c, i, dense, sparse, lab, &err), &err);
        for (uint64_t k = 0; k < m; k++) {
            ASSERT_TRUE(sparse[k * 26] >= 0 && sparse[k * 26] < 1000); /* % cap */
            ASSERT_TRUE(sparse[k * 26 + 5] >= 0 && sparse[k * 26 + 5] < 3); /* own table */
            ASSERT_TRUE(dense[k * 13] >= 0 && dense[k * 13] <= (float)log(1001.0));
            pos += lab[k] == 1.0f;
            all++;
        }
    }
    ASSERT_TRUE(pos > all / 8 && pos < all / 2); /* ~25 % clicks */
    rows[3] = 0;
    ASSERT_STATUS(ib_criteo_synthesize("syn2", 1, 1, 1, rows, 7, &err), IB_EINVAL);
    ib_criteo_close(c);
}

TEST(criteo_bad_input_errors)
{
    ib_criteo *c;
    ib_err err;
    ASSERT_STATUS(ib_criteo_open("missing", 0, &c, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, IB_CRITEO_BIN);
    write_rows("t", 3, 7); /* truncated: 3 rows + 7 bytes */
    write_trace("t", "0, 3, 3\n");
    ASSERT_STATUS(ib_criteo_open("t", 0, &c, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "not a whole number of 160-byte rows");
    write_rows("d", 3, 0);
    static const struct { const char *trace, *msg; } bad[] = {
        {"0, 1, 1\n1, x, 2\n", ":2: expected \"start, end, count\""},
        {"0, 2, 1\n", "count 1 does not equal end - start"},
        {"0, 4, 4\n", "ends at row 4 but"},
        {"-1, 1, 2\n", "three non-negative integers"},
        {"0, 800, 800\n", "up to 700"},
        {"\n\n", "no samples"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_trace("d", bad[i].trace);
        ASSERT_STATUS(ib_criteo_open("d", 0, &c, &err), IB_EFORMAT);
        ASSERT_STR_CONTAINS(err.msg, bad[i].msg);
    }
    /* negative dense count / bad label in a row */
    write_trace("d", "0, 3, 3\n");
    char path[512];
    snprintf(path, sizeof path, "d/%s", IB_CRITEO_BIN);
    char *data;
    size_t len;
    ASSERT_OK(ib_file_read_all(path, 1 << 20, &data, &len, &err));
    put32((uint8_t *)data + 160 + 4 * 3, -5);
    ASSERT_OK(ib_file_write_all(path, data, len, &err));
    ASSERT_OK_ERR(ib_criteo_open("d", 0, &c, &err), &err);
    float dense[3 * 13];
    int64_t sparse[3 * 26];
    ASSERT_STATUS(ib_criteo_load(c, 0, dense, sparse, NULL, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "row 1: dense feature 2 is -5");
    ib_criteo_close(c);
    put32((uint8_t *)data + 160 + 4 * 3, 5);
    put32((uint8_t *)data + 320, 3);
    ASSERT_OK(ib_file_write_all(path, data, len, &err));
    ASSERT_OK_ERR(ib_criteo_open("d", 0, &c, &err), &err);
    ASSERT_STATUS(ib_criteo_load(c, 0, dense, sparse, NULL, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "row 2: label 3 is not 0 or 1");
    ib_criteo_close(c);
    ib_free(data);
}
