/*
 * test_coco.c - the COCO loader (sample order = images[] order, categories in file order,
 * annotations), pre_process_coco_resnet34 on hand-computed pixels (OpenCV INTER_LINEAR taps,
 * mean/std), the synthetic generator through the real loader, and clear errors for bad JSON,
 * bad fields, missing files and folders.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/coco.h"
#include "test.h"

static void put(const char *path, const char *text)
{
    ASSERT_OK(ib_file_write_all(path, text, strlen(text), NULL));
}

/* d/val2017/{a,b}.jpg and d/annotations/instances_val2017.json = json */
static void tree(const char *json)
{
    ASSERT_OK(ib_mkdirs("d/val2017", NULL));
    ASSERT_OK(ib_mkdirs("d/annotations", NULL));
    ib_image img;
    ASSERT_OK(ib_image_alloc(&img, 8, 6, 3));
    ASSERT_OK(ib_image_encode_jpeg_file("d/val2017/a.jpg", &img, 90, NULL));
    ASSERT_OK(ib_image_encode_jpeg_file("d/val2017/b.jpg", &img, 90, NULL));
    ib_image_release(&img);
    put("d/annotations/instances_val2017.json", json);
}

static const char *k_good =
    "{\"images\": [{\"id\": 90, \"file_name\": \"b.jpg\", \"width\": 8, \"height\": 6},"
    "              {\"id\": 7, \"file_name\": \"a.jpg\", \"width\": 8, \"height\": 6}],"
    " \"categories\": [{\"id\": 1}, {\"id\": 3}, {\"id\": 90}],"
    " \"annotations\": [{\"image_id\": 7, \"category_id\": 3, \"bbox\": [1, 2, 3.5, 4],"
    "                    \"area\": 12.5, \"iscrowd\": 1},"
    "                   {\"image_id\": 90, \"category_id\": 90, \"bbox\": [0, 0, 2, 2],"
    "                    \"area\": 4}]}";

TEST(coco_loader_order_categories_annotations)
{
    tree(k_good);
    ib_coco *d;
    ASSERT_OK(ib_coco_open("d", NULL, &d, NULL));
    ASSERT_UINT_EQ(ib_coco_count(d), 2);
    /* qsl_idx = position in images[], not sorted by id */
    ASSERT_INT_EQ(ib_coco_image_at(d, 0)->id, 90);
    ASSERT_STR_EQ(ib_coco_image_at(d, 0)->file_name, "b.jpg");
    ASSERT_INT_EQ(ib_coco_image_at(d, 1)->id, 7);
    ASSERT_INT_EQ(ib_coco_image_at(d, 1)->width, 8);
    ASSERT_INT_EQ(ib_coco_image_at(d, 1)->height, 6);
    ASSERT_NULL(ib_coco_image_at(d, 2));
    ASSERT_UINT_EQ(ib_coco_category_count(d), 3);
    ASSERT_INT_EQ(ib_coco_category(d, 2), 90); /* label 3 -> category 90 */
    size_t n;
    const ib_coco_gt *g = ib_coco_annotations(d, &n);
    ASSERT_UINT_EQ(n, 2);
    ASSERT_INT_EQ(g[0].image_id, 7);
    ASSERT_INT_EQ(g[0].category_id, 3);
    ASSERT_DBL_EQ(g[0].bbox[2], 3.5);
    ASSERT_DBL_EQ(g[0].area, 12.5);
    ASSERT_INT_EQ(g[0].iscrowd, 1);
    ASSERT_INT_EQ(g[1].iscrowd, 0); /* absent -> 0 */
    static float t[3 * 1200 * 1200];
    ASSERT_OK(ib_coco_load(d, 1, 1200, IB_LAYOUT_NCHW, t, NULL));
    /* a black image: (0 - mean) / std everywhere */
    ASSERT_NEAR(t[0], -0.485 / 0.229, 0.05);
    ASSERT_NEAR(t[2 * 1200 * 1200 + 5], -0.406 / 0.225, 0.05);
    ASSERT_STATUS(ib_coco_load(d, 2, 1200, IB_LAYOUT_NCHW, t, NULL), IB_EINVAL);
    ib_coco_close(d);
}

TEST(coco_preprocess_bilinear_and_normalise)
{
    /* 2x1 -> 4x1: OpenCV taps p0, .75p0+.25p1, .25p0+.75p1, p1 (edges replicated) */
    ib_image img;
    ASSERT_OK(ib_image_alloc(&img, 2, 1, 3));
    const uint8_t px[6] = {0, 100, 255, 255, 20, 0};
    memcpy(img.data, px, sizeof px);
    float out[12];
    ASSERT_OK(ib_preprocess_coco(&img, 4, 1, IB_LAYOUT_NCHW, out, NULL));
    const double mean[3] = {0.485, 0.456, 0.406}, sd[3] = {0.229, 0.224, 0.225};
    for (int c = 0; c < 3; c++) {
        double a = px[c], b = px[3 + c];
        double want[4] = {a, 0.75 * a + 0.25 * b, 0.25 * a + 0.75 * b, b};
        for (int x = 0; x < 4; x++)
            ASSERT_NEAR(out[c * 4 + x], (want[x] / 255.0 - mean[c]) / sd[c], 1e-5);
    }
    /* NHWC holds the same values interleaved */
    float nhwc[12];
    ASSERT_OK(ib_preprocess_coco(&img, 4, 1, IB_LAYOUT_NHWC, nhwc, NULL));
    for (int c = 0; c < 3; c++)
        for (int x = 0; x < 4; x++)
            ASSERT_DBL_EQ(nhwc[x * 3 + c], out[c * 4 + x]);
    /* same size: identity resize */
    ASSERT_OK(ib_preprocess_coco(&img, 2, 1, IB_LAYOUT_NCHW, out, NULL));
    ASSERT_NEAR(out[1], (255.0 / 255.0 - 0.485) / 0.229, 1e-5);
    ib_image_release(&img);
    ib_image gray = {4, 4, 1, NULL};
    ASSERT_STATUS(ib_preprocess_coco(&gray, 4, 4, IB_LAYOUT_NCHW, out, NULL), IB_EINVAL);
}

TEST(coco_synthetic_through_loader)
{
    ASSERT_OK(ib_coco_synthesize("syn", 3, 42, NULL));
    ib_coco *d;
    ASSERT_OK(ib_coco_open("syn", NULL, &d, NULL));
    ASSERT_UINT_EQ(ib_coco_count(d), 3);
    ASSERT_UINT_EQ(ib_coco_category_count(d), 80);
    ASSERT_INT_EQ(ib_coco_category(d, 0), 1);
    ASSERT_INT_EQ(ib_coco_category(d, 11), 13); /* 12 is not a COCO id */
    ASSERT_INT_EQ(ib_coco_category(d, 79), 90);
    size_t n;
    const ib_coco_gt *g = ib_coco_annotations(d, &n);
    ASSERT_UINT_GE(n, 3);
    for (size_t i = 0; i < n; i++) {
        ASSERT_DBL_EQ(g[i].area, g[i].bbox[2] * g[i].bbox[3]);
        ASSERT_TRUE(g[i].category_id >= 1 && g[i].category_id <= 90);
    }
    static float t[3 * 1200 * 1200];
    for (size_t i = 0; i < 3; i++) {
        ASSERT_OK(ib_coco_load(d, i, 1200, IB_LAYOUT_NCHW, t, NULL));
        for (size_t k = 0; k < 3 * 1200 * 1200; k += 9973)
            ASSERT_TRUE(isfinite(t[k]) && t[k] >= -2.2f && t[k] <= 2.7f);
    }
    ib_coco_close(d);
    /* same seed, same annotations */
    ASSERT_OK(ib_coco_synthesize("syn2", 3, 42, NULL));
    char *a, *b;
    size_t la, lb;
    ASSERT_OK(ib_file_read_all("syn/annotations/instances_val2017.json", 0, &a, &la, NULL));
    ASSERT_OK(ib_file_read_all("syn2/annotations/instances_val2017.json", 0, &b, &lb, NULL));
    ASSERT_UINT_EQ(la, lb);
    ASSERT_MEM_EQ(a, b, la);
    ib_free(a);
    ib_free(b);
}

TEST(coco_loader_errors)
{
    ib_coco *d = NULL;
    ib_err e;
    ASSERT_STATUS(ib_coco_open("nowhere", NULL, &d, &e), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(e.msg, "val2017");
    tree("{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 8,, }]}");
    ASSERT_STATUS(ib_coco_open("d", NULL, &d, &e), IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "instances_val2017.json:1:");
    ASSERT_STR_CONTAINS(e.msg, "not valid JSON");
    put("d/annotations/instances_val2017.json", "[1, 2]");
    ASSERT_STATUS(ib_coco_open("d", NULL, &d, &e), IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "\"images\"");
    put("d/annotations/instances_val2017.json",
        "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": \"8\", \"height\": 6}],"
        " \"categories\": [{\"id\": 1}], \"annotations\": []}");
    ASSERT_STATUS(ib_coco_open("d", NULL, &d, &e), IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "images[0].width");
    put("d/annotations/instances_val2017.json",
        "{\"images\": [{\"id\": 1, \"file_name\": \"../a.jpg\", \"width\": 8, \"height\": 6}],"
        " \"categories\": [{\"id\": 1}], \"annotations\": []}");
    ASSERT_STATUS(ib_coco_open("d", NULL, &d, &e), IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "images[0].file_name");
    put("d/annotations/instances_val2017.json",
        "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 8, \"height\": 6}],"
        " \"categories\": [{\"id\": 1}], \"annotations\": [{\"image_id\": 1, \"category_id\":"
        " 1, \"bbox\": [1, 2, 3], \"area\": 1}]}");
    ASSERT_STATUS(ib_coco_open("d", NULL, &d, &e), IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "annotations[0].bbox");
    put("d/annotations/instances_val2017.json",
        "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 8, \"height\": 6}],"
        " \"categories\": [{\"id\": 1}], \"annotations\": [{\"image_id\": 1, \"category_id\":"
        " 1, \"bbox\": [1, 2, 3, 4]}]}");
    ASSERT_STATUS(ib_coco_open("d", NULL, &d, &e), IB_EFORMAT);
    ASSERT_STR_CONTAINS(e.msg, "annotations[0].area");
    put("d/annotations/instances_val2017.json",
        "{\"images\": [{\"id\": 1, \"file_name\": \"zz.jpg\", \"width\": 8, \"height\": 6}],"
        " \"categories\": [{\"id\": 1}], \"annotations\": []}");
    ASSERT_STATUS(ib_coco_open("d", NULL, &d, &e), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(e.msg, "zz.jpg: missing (images[0]");
    ASSERT_STATUS(ib_coco_open("d", "d/annotations/none.json", &d, &e), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(e.msg, "none.json: missing");
    ASSERT_NULL(d);
}
