/*
 * test_criteo_tsv.c - the Criteo day-file conversion (src/dataset/criteo_tsv.c): the
 * synthetic day file and its dictionaries convert to exactly the binary the generator wrote
 * from the same draws (blank fields, negative counts, raw hashes above 40 M, upper-case hex);
 * the converted folder opens and loads through the DLRM loader; a hand-written line without
 * dictionaries; --rows; bad input: short and long lines, labels, counts, non-hex and
 * over-long categoricals, a value missing from its dictionary, missing files; a failed run
 * leaves no binary behind.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/criteo.h"
#include "dataset/criteo_tsv.h"
#include "inferbench/base.h"
#include "test.h"

static const uint64_t rows26[26] = {39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63,
                                    38532951, 2953546, 403346, 10, 2208, 11938, 155, 4, 976,
                                    14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36};

static int convert(const char *tsv, const char *dicts, uint64_t max_rows, uint64_t *rows,
                   ib_err *err)
{
    ib_criteo_tsv_opts o = {.tsv = tsv, .dict_dir = dicts,
                            .max_ind_range = IB_CRITEO_MAX_IND_RANGE, .max_rows = max_rows,
                            .out_bin = "out/" IB_CRITEO_BIN};
    return ib_criteo_tsv_convert(&o, rows, err);
}

TEST(criteo_tsv_converts_to_the_reference_binary)
{
    ib_err err;
    ASSERT_OK_ERR(ib_criteo_tsv_synthesize("syn", 600, rows26, 5, &err), &err);
    ASSERT_OK_ERR(ib_mkdirs("out", &err), &err);
    uint64_t rows = 0;
    ASSERT_OK_ERR(convert("syn/" IB_CRITEO_TSV_DAY, "syn", 0, &rows, &err), &err);
    ASSERT_UINT_EQ(rows, 600);
    size_t a = 0, b = 0;
    char *got = ib_test_slurp_n("out/" IB_CRITEO_BIN, &a), *want = ib_test_slurp_n("syn/expected.bin", &b);
    ASSERT_UINT_EQ(a, 600 * 160);
    ASSERT_UINT_EQ(a, b);
    ASSERT_TRUE(memcmp(got, want, a) == 0);
    /* the generator exercised what it claims: blanks, negatives, hashes above 40 M */
    size_t tl = 0;
    char *t = ib_test_slurp_n("syn/" IB_CRITEO_TSV_DAY, &tl);
    ASSERT_TRUE(strstr(t, "\t\t") != NULL);
    ASSERT_TRUE(strstr(t, "\t-") != NULL);
    int above = 0;
    for (char *p = t; (p = strchr(p, '\t')) != NULL; p++) {
        unsigned long long h = 0;
        if (sscanf(p + 1, "%8llx", &h) == 1 && strlen(p + 1) >= 8 && p[9] == '\t' &&
            h > IB_CRITEO_MAX_IND_RANGE)
            above++;
    }
    ASSERT_INT_GT(above, 100);
    ib_free(t);
    ib_free(got);
    ib_free(want);
    /* the converted folder is a DLRM dataset: binary + the generator's trace */
    char *tr = ib_test_slurp_n("syn/" IB_CRITEO_TRACE, &tl);
    ASSERT_OK(ib_file_write_all("out/" IB_CRITEO_TRACE, tr, tl, &err));
    ib_free(tr);
    ib_criteo *c = NULL;
    ASSERT_OK_ERR(ib_criteo_open("out", 1000, &c, &err), &err);
    ASSERT_UINT_EQ(ib_criteo_rows(c), 600);
    float dense[7 * 13], labels[7];
    int64_t sparse[7 * 26];
    ASSERT_OK_ERR(ib_criteo_load(c, 0, dense, sparse, labels, &err), &err);
    ib_criteo_close(c);
    /* --rows: the first N pairs only */
    ASSERT_OK_ERR(convert("syn/" IB_CRITEO_TSV_DAY, "syn", 250, &rows, &err), &err);
    ASSERT_UINT_EQ(rows, 250);
}

TEST(criteo_tsv_without_dictionaries_keeps_hash_mod_range)
{
    ib_err err;
    ASSERT_OK_ERR(ib_mkdirs("out", &err), &err);
    /* label, 13 counts (one blank, one negative), 26 categoricals (one blank, one above 40 M) */
    char line[1024] = "1\t5\t\t-3\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10";
    strcat(line, "\tFFFFFFFF\t\t0000000a");
    for (int j = 3; j < 26; j++)
        strcat(line, "\t68fd1e64");
    strcat(line, "\r\n");
    ASSERT_OK(ib_file_write_all("day", line, strlen(line), &err));
    uint64_t rows = 0;
    ASSERT_OK_ERR(convert("day", NULL, 0, &rows, &err), &err);
    ASSERT_UINT_EQ(rows, 1);
    size_t n = 0;
    unsigned char *b = (unsigned char *)ib_test_slurp_n("out/" IB_CRITEO_BIN, &n);
    ASSERT_UINT_EQ(n, 160);
    int32_t v[40];
    for (int i = 0; i < 40; i++)
        v[i] = (int32_t)(b[4 * i] | b[4 * i + 1] << 8 | b[4 * i + 2] << 16 |
                         (uint32_t)b[4 * i + 3] << 24);
    ASSERT_INT_EQ(v[0], 1);
    ASSERT_INT_EQ(v[1], 5);
    ASSERT_INT_EQ(v[2], 0); /* blank */
    ASSERT_INT_EQ(v[3], 0); /* -3 clipped */
    ASSERT_INT_EQ(v[13], 10);
    ASSERT_INT_EQ(v[14], (int32_t)(0xFFFFFFFFull % 40000000));
    ASSERT_INT_EQ(v[15], 0);
    ASSERT_INT_EQ(v[16], 10);
    ASSERT_INT_EQ(v[39], (int32_t)(0x68fd1e64ull % 40000000));
    ib_free(b);
}

static void expect_error(const char *body, const char *dicts, const char *want)
{
    ib_err err;
    ASSERT_OK(ib_file_write_all("bad_day", body, strlen(body), &err));
    remove("out/" IB_CRITEO_BIN);
    uint64_t rows = 0;
    int rc = convert("bad_day", dicts, 0, &rows, &err);
    if (rc == IB_OK || !strstr(err.msg, want))
        printf("# want '%s', got rc %d: %s\n", want, rc, err.msg);
    ASSERT_INT_NE(rc, IB_OK);
    ASSERT_STR_CONTAINS(err.msg, want);
    ASSERT_FALSE(ib_path_exists("out/" IB_CRITEO_BIN));
    ASSERT_FALSE(ib_path_exists("out/" IB_CRITEO_BIN ".tmp"));
}

TEST(criteo_tsv_bad_input_errors)
{
    ib_err err;
    ASSERT_OK_ERR(ib_criteo_tsv_synthesize("syn", 3, rows26, 1, &err), &err);
    ASSERT_OK_ERR(ib_mkdirs("out", &err), &err);
    size_t n = 0;
    char *good = ib_test_slurp_n("syn/" IB_CRITEO_TSV_DAY, &n);
    int l1 = (int)(strchr(good, '\n') - good); /* line 1 without its newline */
    char buf[4096];
    /* line 2 = line 1 without its last field: 39 fields */
    int cut = l1;
    while (cut > 0 && good[cut] != '\t')
        cut--;
    snprintf(buf, sizeof buf, "%.*s\n%.*s\n", l1, good, cut, good);
    expect_error(buf, "syn", "bad_day:2: 39 fields");
    snprintf(buf, sizeof buf, "%.*s\t0\n", (int)(strchr(good, '\n') - good), good);
    expect_error(buf, "syn", "bad_day:1: more than 40 fields");
    snprintf(buf, sizeof buf, "2%s", strchr(good, '\t'));
    expect_error(buf, "syn", "bad_day:1: label '2' is not 0 or 1");
    snprintf(buf, sizeof buf, "0\t1.5%s", strchr(strchr(good, '\t') + 1, '\t'));
    expect_error(buf, "syn", "count '1.5' is not a decimal int32");
    /* the first categorical (field 15) replaced */
    const char *p = good;
    for (int t = 0; t < 14; t++)
        p = strchr(p, '\t') + 1;
    const char *after = strchr(p, '\t');
    snprintf(buf, sizeof buf, "%.*szz12%s", (int)(p - good), good, after);
    expect_error(buf, "syn", "categorical C1 'zz12' is not 1-8 hex digits");
    snprintf(buf, sizeof buf, "%.*s123456789%s", (int)(p - good), good, after);
    expect_error(buf, "syn", "categorical C1 '123456789' is not 1-8 hex digits");
    snprintf(buf, sizeof buf, "%.*s00000001%s", (int)(p - good), good, after);
    expect_error(buf, "syn", "is not in day_fea_dict_0.npz");
    /* missing dictionary folder entries; missing day file */
    ASSERT_OK_ERR(ib_mkdirs("nodicts", &err), &err);
    expect_error(good, "nodicts", "day_fea_dict_0.npz: missing");
    uint64_t rows = 0;
    ib_criteo_tsv_opts o = {.tsv = "nothere", .out_bin = "out/x.bin"};
    ASSERT_STATUS(ib_criteo_tsv_convert(&o, &rows, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "nothere");
    /* an empty file */
    expect_error("", NULL, "no rows");
    ib_free(good);
}
