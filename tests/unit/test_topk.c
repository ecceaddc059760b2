/*
 * test_topk.c - top-1 as tools/accuracy-imagenet.py computes it: de-duplication by qsl_idx
 * (first record wins), the payload dtypes the script reads (float32 truncated toward zero,
 * int32, int64), the accuracy line format, errors on bad records, and argmax semantics.
 */
#include <math.h>
#include <string.h>

#include "inferbench/metrics.h"
#include "test.h"

static void f32(uint8_t *p, float v)
{
    uint32_t w;
    memcpy(&w, &v, 4);
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(w >> (8 * i));
}

TEST(topk_top1_float32_dedupe_and_format)
{
    static const int32_t labels[5] = {3, 7, 0, 999, 5};
    uint8_t buf[6][4];
    f32(buf[0], 3.0f);   /* idx 0: good */
    f32(buf[1], 6.0f);   /* idx 1: bad */
    f32(buf[2], 3.0f);   /* idx 0 again, a duplicate: ignored */
    f32(buf[3], 999.9f); /* idx 3: int(999.9) = 999, good */
    f32(buf[4], -1.0f);  /* idx 2: "background" after the -1 offset, never a label */
    f32(buf[5], 7.0f);   /* idx 1 again: ignored even though it would be right */
    ib_metric_record r[6] = {{0, buf[0], 4}, {1, buf[1], 4}, {0, buf[2], 4},
                             {3, buf[3], 4}, {2, buf[4], 4}, {1, buf[5], 4}};
    ib_metric_top1 m;
    ASSERT_OK(ib_metric_top1_compute(r, 6, labels, 5, IB_DTYPE_FLOAT32, &m, NULL));
    ASSERT_UINT_EQ(m.good, 2);
    ASSERT_UINT_EQ(m.total, 4); /* distinct qsl_idx, not the dataset size */
    ASSERT_UINT_EQ(m.duplicates, 2);
    ASSERT_DBL_EQ(m.accuracy_pct, 50.0);
    char line[128];
    ib_metric_top1_format(&m, line, sizeof line);
    ASSERT_STR_EQ(line, "accuracy=50.000%, good=2, total=4");
    /* Python's "{:.3f}" and printf agree on rounding: 2/3 -> 66.667 */
    ib_metric_top1 t = {2, 3, 0, 200.0 / 3.0};
    ib_metric_top1_format(&t, line, sizeof line);
    ASSERT_STR_EQ(line, "accuracy=66.667%, good=2, total=3");
}

TEST(topk_top1_integer_dtypes)
{
    static const int32_t labels[2] = {500, 12};
    uint8_t i32[2][4] = {{0xf4, 0x01, 0, 0}, {12, 0, 0, 0}};              /* 500, 12 */
    uint8_t i64[2][8] = {{0xf4, 0x01, 0, 0, 0, 0, 0, 0}, {13, 0, 0, 0, 0, 0, 0, 0}};
    ib_metric_record a[2] = {{0, i32[0], 4}, {1, i32[1], 4}};
    ib_metric_record b[2] = {{0, i64[0], 8}, {1, i64[1], 8}};
    ib_metric_top1 m;
    ASSERT_OK(ib_metric_top1_compute(a, 2, labels, 2, IB_DTYPE_INT32, &m, NULL));
    ASSERT_UINT_EQ(m.good, 2);
    ASSERT_OK(ib_metric_top1_compute(b, 2, labels, 2, IB_DTYPE_INT64, &m, NULL));
    ASSERT_UINT_EQ(m.good, 1);
    /* the same int32 bytes read as float32 are a denormal: int() -> 0, not 500 */
    ASSERT_OK(ib_metric_top1_compute(a, 2, labels, 2, IB_DTYPE_FLOAT32, &m, NULL));
    ASSERT_UINT_EQ(m.good, 0);
    /* a payload of several elements: only data[0] counts */
    uint8_t two[8];
    f32(two, 500.0f);
    f32(two + 4, 1.0f);
    ib_metric_record c = {0, two, 8};
    ASSERT_OK(ib_metric_top1_compute(&c, 1, labels, 2, IB_DTYPE_FLOAT32, &m, NULL));
    ASSERT_UINT_EQ(m.good, 1);
    ASSERT_OK(ib_metric_top1_compute(NULL, 0, labels, 2, IB_DTYPE_FLOAT32, &m, NULL));
    ASSERT_UINT_EQ(m.total, 0);
}

TEST(topk_top1_bad_records)
{
    static const int32_t labels[2] = {1, 2};
    uint8_t p[8] = {0};
    ib_err err;
    ib_metric_top1 m;
    ib_metric_record beyond = {2, p, 4};
    ASSERT_STATUS(ib_metric_top1_compute(&beyond, 1, labels, 2, IB_DTYPE_FLOAT32, &m, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "qsl_idx 2");
    ib_metric_record empty = {0, p, 0};
    ASSERT_STATUS(ib_metric_top1_compute(&empty, 1, labels, 2, IB_DTYPE_FLOAT32, &m, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "0 payload bytes");
    ib_metric_record odd = {1, p, 6};
    ASSERT_STATUS(ib_metric_top1_compute(&odd, 1, labels, 2, IB_DTYPE_INT64, &m, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "int64");
    uint8_t nan[4];
    f32(nan, NAN);
    ib_metric_record n = {0, nan, 4};
    ASSERT_STATUS(ib_metric_top1_compute(&n, 1, labels, 2, IB_DTYPE_FLOAT32, &m, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "not a finite");
    ASSERT_UINT_EQ(m.total, 0); /* nothing half-computed comes back */
    ib_metric_record ok = {0, p, 4};
    ASSERT_STATUS(ib_metric_top1_compute(&ok, 1, labels, 2, IB_DTYPE_FLOAT16, &m, &err),
                  IB_EINVAL);
}

TEST(topk_argmax_numpy_semantics)
{
    static const float a[5] = {0.1f, 0.7f, 0.2f, 0.7f, -1.0f};
    ASSERT_INT_EQ(ib_metric_argmax_f32(a, 5), 1); /* first maximum */
    static const float b[3] = {-INFINITY, -5.0f, -5.0f};
    ASSERT_INT_EQ(ib_metric_argmax_f32(b, 3), 1);
    float c[3] = {1.0f, NAN, 3.0f};
    ASSERT_INT_EQ(ib_metric_argmax_f32(c, 3), 1); /* numpy: NaN wins */
    ASSERT_INT_EQ(ib_metric_argmax_f32(a, 0), -1);
}
