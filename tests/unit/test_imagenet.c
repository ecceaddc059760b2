/*
 * test_imagenet.c - the ImageNet path: JPEG decoding (RGB, grayscale, CMYK as OpenCV converts
 * it, corrupt/truncated/not-JPEG/huge-header files, missing files), the INTER_AREA resize on
 * hand-computed pixels (integer ratio, fractional ratio, enlarging), the ResNet50
 * pre-processing (crop offsets, mean subtraction, layouts) and the val_map.txt loader with
 * every kind of bad line, plus the synthetic generator read back through the loader.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/base.h"
#include "inferbench/dataset.h"
#include "test.h"

static void solid(ib_image *img, int w, int h, int ch, const uint8_t *px)
{
    ASSERT_OK(ib_image_alloc(img, w, h, ch));
    for (int i = 0; i < w * h; i++)
        memcpy(img->data + (size_t)i * (size_t)ch, px, (size_t)ch);
}

static void write_file(const char *path, const void *data, size_t n)
{
    ASSERT_OK(ib_file_write_all(path, data, n, NULL));
}

/* ---- decoding ------------------------------------------------------------------------------- */

TEST(imagenet_jpeg_rgb_roundtrip)
{
    ib_image img, back;
    static const uint8_t px[3] = {200, 30, 90};
    solid(&img, 40, 24, 3, px);
    ib_err err;
    ASSERT_OK_ERR(ib_image_encode_jpeg_file("rgb.jpg", &img, 100, &err), &err);
    ASSERT_OK_ERR(ib_image_decode_jpeg_file("rgb.jpg", &back, &err), &err);
    ASSERT_INT_EQ(back.width, 40);
    ASSERT_INT_EQ(back.height, 24);
    ASSERT_INT_EQ(back.channels, 3);
    /* YCbCr at quality 100: a flat colour comes back within a couple of levels */
    for (int i = 0; i < 40 * 24; i++)
        for (int c = 0; c < 3; c++)
            ASSERT_NEAR(back.data[i * 3 + c], px[c], 3);
    ib_image_release(&img);
    ib_image_release(&back);
}

TEST(imagenet_jpeg_grayscale_to_rgb)
{
    ib_image img, back;
    ASSERT_OK(ib_image_alloc(&img, 16, 16, 1));
    for (int i = 0; i < 256; i++)
        img.data[i] = (uint8_t)(i < 128 ? 60 : 180);
    ib_err err;
    ASSERT_OK_ERR(ib_image_encode_jpeg_file("gray.jpg", &img, 95, &err), &err);
    ASSERT_OK_ERR(ib_image_decode_jpeg_file("gray.jpg", &back, &err), &err);
    ASSERT_INT_EQ(back.channels, 3);
    /* replicated: R == G == B everywhere, and close to the source */
    for (int i = 0; i < 256; i++) {
        ASSERT_INT_EQ(back.data[3 * i], back.data[3 * i + 1]);
        ASSERT_INT_EQ(back.data[3 * i], back.data[3 * i + 2]);
        ASSERT_NEAR(back.data[3 * i], img.data[i], 12);
    }
    ib_image_release(&img);
    ib_image_release(&back);
}

TEST(imagenet_jpeg_cmyk_opencv_formula)
{
    /* A flat CMYK image at quality 100 decodes exactly (each channel coded on its own, DC
     * step 1), so the RGB values are exactly OpenCV's K - ((255 - C) * K >> 8). */
    ib_image img, back;
    static const uint8_t px[4] = {40, 128, 230, 200};
    solid(&img, 16, 8, 4, px);
    ib_err err;
    ASSERT_OK_ERR(ib_image_encode_jpeg_file("cmyk.jpg", &img, 100, &err), &err);
    ASSERT_OK_ERR(ib_image_decode_jpeg_file("cmyk.jpg", &back, &err), &err);
    ASSERT_INT_EQ(back.channels, 3);
    int k = px[3];
    int want[3] = {k - ((255 - px[0]) * k >> 8), k - ((255 - px[1]) * k >> 8),
                   k - ((255 - px[2]) * k >> 8)};
    ASSERT_INT_EQ(want[0], 33); /* 200 - (215 * 200 >> 8) = 200 - 167 */
    for (int i = 0; i < 16 * 8; i++)
        for (int c = 0; c < 3; c++)
            ASSERT_INT_EQ(back.data[3 * i + c], want[c]);
    ib_image_release(&img);
    ib_image_release(&back);
}

TEST(imagenet_jpeg_corrupt_truncated_missing)
{
    ib_image img, back;
    ASSERT_OK(ib_image_alloc(&img, 256, 128, 3));
    for (size_t i = 0; i < 256 * 128 * 3; i++)
        img.data[i] = (uint8_t)((i * 2654435761u) >> 13); /* noise: mostly entropy-coded data */
    ASSERT_OK(ib_image_encode_jpeg_file("ok.jpg", &img, 90, NULL));
    ib_image_release(&img);
    char *bytes = NULL;
    size_t len = 0;
    ASSERT_OK(ib_file_read_all("ok.jpg", 0, &bytes, &len, NULL));
    ib_err err;
    /* truncated in the entropy-coded data: an error, not a grey-filled image */
    write_file("trunc.jpg", bytes, len * 2 / 3);
    ASSERT_STATUS(ib_image_decode_jpeg_file("trunc.jpg", &back, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "trunc.jpg");
    ASSERT_STR_CONTAINS(err.msg, "truncated");
    ASSERT_NULL(back.data);
    /* cut inside the header */
    write_file("head.jpg", bytes, 40);
    ASSERT_STATUS(ib_image_decode_jpeg_file("head.jpg", &back, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "head.jpg");
    /* a PNG with a .JPEG name (ImageNet has one such file in train) */
    static const uint8_t png[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13};
    write_file("png.JPEG", png, sizeof png);
    ASSERT_STATUS(ib_image_decode_jpeg_file("png.JPEG", &back, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "png.JPEG");
    ASSERT_STR_CONTAINS(err.msg, "JPEG");
    /* empty and tiny files */
    write_file("empty.jpg", "", 0);
    ASSERT_STATUS(ib_image_decode_jpeg_file("empty.jpg", &back, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "empty.jpg");
    /* garbage after a valid SOI */
    uint8_t junk[300];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    junk[0] = 0xff;
    junk[1] = 0xd8;
    write_file("junk.jpg", junk, sizeof junk);
    ASSERT_STATUS(ib_image_decode_jpeg_file("junk.jpg", &back, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "junk.jpg");
    /* missing */
    ASSERT_STATUS(ib_image_decode_jpeg_file("nope.jpg", &back, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "nope.jpg");
    /* a header claiming 65500 x 65500 pixels is refused before allocating */
    for (size_t i = 0; i + 8 < len; i++) {
        uint8_t *p = (uint8_t *)bytes + i;
        if (p[0] == 0xff && p[1] == 0xc0) { /* SOF0: len(2) precision(1) height(2) width(2) */
            p[5] = 0xff;
            p[6] = 0xdc;
            p[7] = 0xff;
            p[8] = 0xdc;
            break;
        }
    }
    write_file("huge.jpg", bytes, len);
    ASSERT_STATUS(ib_image_decode_jpeg_file("huge.jpg", &back, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "65500x65500");
    ib_free(bytes);
}

/* ---- resize (hand-computed pixels) ---------------------------------------------------------- */

TEST(imagenet_resize_area_integer_ratio)
{
    /* 4x2 -> 2x1: 2x2 blocks, OpenCV rounds (s + 2) >> 2 */
    ib_image s, d;
    ASSERT_OK(ib_image_alloc(&s, 4, 2, 1));
    static const uint8_t v[8] = {10, 11, 100, 101, 12, 13, 102, 104};
    memcpy(s.data, v, 8);
    ASSERT_OK(ib_image_resize_area(&s, 2, 1, &d, NULL));
    ASSERT_INT_EQ(d.data[0], (10 + 11 + 12 + 13 + 2) >> 2); /* 46 / 4 = 11.5 -> 12 */
    ASSERT_INT_EQ(d.data[0], 12);
    ASSERT_INT_EQ(d.data[1], 102); /* 407 / 4 = 101.75 */
    ib_image_release(&d);
    /* 3x1 -> 1x1 (ratio 3): sum * (1/3) rounded to even */
    ib_image s3;
    ASSERT_OK(ib_image_alloc(&s3, 3, 1, 1));
    s3.data[0] = 1;
    s3.data[1] = 2;
    s3.data[2] = 4; /* 7 / 3 = 2.33 */
    ASSERT_OK(ib_image_resize_area(&s3, 1, 1, &d, NULL));
    ASSERT_INT_EQ(d.data[0], 2);
    ib_image_release(&d);
    ib_image_release(&s3);
    ib_image_release(&s);
}

TEST(imagenet_resize_area_fractional_ratio)
{
    /* 3x1 -> 2x1, scale 1.5: out0 = (p0 + 0.5 p1) / 1.5, out1 = (0.5 p1 + p2) / 1.5 */
    ib_image s, d;
    ASSERT_OK(ib_image_alloc(&s, 3, 1, 3));
    static const uint8_t v[9] = {30, 0, 255, 60, 100, 255, 90, 200, 0};
    memcpy(s.data, v, 9);
    ASSERT_OK(ib_image_resize_area(&s, 2, 1, &d, NULL));
    /* channel 0: (30 + 30) / 1.5 = 40; (30 + 90) / 1.5 = 80 */
    ASSERT_INT_EQ(d.data[0], 40);
    ASSERT_INT_EQ(d.data[3], 80);
    /* channel 1: (0 + 50) / 1.5 = 33.3 -> 33; (50 + 200) / 1.5 = 166.7 -> 167 */
    ASSERT_INT_EQ(d.data[1], 33);
    ASSERT_INT_EQ(d.data[4], 167);
    /* channel 2: 255 (saturation stays 255); (127.5 + 0) / 1.5 = 85 */
    ASSERT_INT_EQ(d.data[2], 255);
    ASSERT_INT_EQ(d.data[5], 85);
    ib_image_release(&d);
    ib_image_release(&s);
}

TEST(imagenet_resize_area_enlarge)
{
    /* 2x1 -> 3x1 (INTER_AREA enlarging: sx = floor(dx * 2/3), fx = (dx + 1) - (sx + 1) * 1.5
     * wrapped to [0, 1)): [p0, (p0 + p1) / 2 rounded half up, p1]; 2x1 -> 4x1 is [p0 p0 p1
     * p1] (nearest-like, as OpenCV documents for INTER_AREA zoom). */
    ib_image s, d;
    ASSERT_OK(ib_image_alloc(&s, 2, 1, 1));
    s.data[0] = 10;
    s.data[1] = 21;
    ASSERT_OK(ib_image_resize_area(&s, 3, 1, &d, NULL));
    ASSERT_INT_EQ(d.data[0], 10);
    ASSERT_INT_EQ(d.data[1], 16); /* 15.5 -> 16 in 11-bit fixed point */
    ASSERT_INT_EQ(d.data[2], 21);
    ib_image_release(&d);
    ASSERT_OK(ib_image_resize_area(&s, 4, 1, &d, NULL));
    ASSERT_INT_EQ(d.data[0], 10);
    ASSERT_INT_EQ(d.data[1], 10);
    ASSERT_INT_EQ(d.data[2], 21);
    ASSERT_INT_EQ(d.data[3], 21);
    ib_image_release(&d);
    ib_image_release(&s);
}

/* ---- the ResNet50 pre-processing -------------------------------------------------------------- */

static uint8_t pat(int x, int y, int c)
{
    return (uint8_t)((x * 7 + y * 13 + c * 50) & 0xff);
}

TEST(imagenet_preprocess_crop_and_means)
{
    /* 300x256 landscape: short side already 256, long side int(256 * 300 / 256) = 300, so
     * the resize is the identity; the crop starts at x = int(76 / 2) = 38, y = 16. */
    ib_image img;
    ASSERT_OK(ib_image_alloc(&img, 300, 256, 3));
    for (int y = 0; y < 256; y++)
        for (int x = 0; x < 300; x++)
            for (int c = 0; c < 3; c++)
                img.data[((size_t)y * 300 + (size_t)x) * 3 + (size_t)c] = pat(x, y, c);
    static float chw[3 * 224 * 224], hwc[3 * 224 * 224];
    ASSERT_OK(ib_preprocess_imagenet(&img, 224, IB_LAYOUT_NCHW, chw, NULL));
    ASSERT_OK(ib_preprocess_imagenet(&img, 224, IB_LAYOUT_NHWC, hwc, NULL));
    static const float mean[3] = {123.68f, 116.78f, 103.94f};
    int checks[4][2] = {{0, 0}, {223, 0}, {0, 223}, {101, 57}};
    for (int k = 0; k < 4; k++) {
        int x = checks[k][0], y = checks[k][1];
        for (int c = 0; c < 3; c++) {
            float want = (float)pat(x + 38, y + 16, c) - mean[c];
            ASSERT_DBL_EQ(chw[(size_t)c * 224 * 224 + (size_t)y * 224 + (size_t)x], want);
            ASSERT_DBL_EQ(hwc[((size_t)y * 224 + (size_t)x) * 3 + (size_t)c], want);
        }
    }
    ib_image_release(&img);
    /* 256x301 portrait: crop at x = 16, y = int(77 / 2) = 38 */
    ASSERT_OK(ib_image_alloc(&img, 256, 301, 3));
    for (int y = 0; y < 301; y++)
        for (int x = 0; x < 256; x++)
            for (int c = 0; c < 3; c++)
                img.data[((size_t)y * 256 + (size_t)x) * 3 + (size_t)c] = pat(x, y, c);
    ASSERT_OK(ib_preprocess_imagenet(&img, 224, IB_LAYOUT_NCHW, chw, NULL));
    ASSERT_DBL_EQ(chw[0], (float)pat(16, 38, 0) - mean[0]);
    ASSERT_DBL_EQ(chw[2 * 224 * 224 + 223 * 224 + 223], (float)pat(16 + 223, 38 + 223, 2) - mean[2]);
    ib_image_release(&img);
}

TEST(imagenet_preprocess_resizes_short_side)
{
    /* 512x512 -> 256x256 by 2x2 block averages, crop at 16: output pixel (0,0) is the mean
     * of source pixels (32..33, 32..33) */
    ib_image img;
    ASSERT_OK(ib_image_alloc(&img, 512, 512, 3));
    for (int y = 0; y < 512; y++)
        for (int x = 0; x < 512; x++)
            for (int c = 0; c < 3; c++)
                img.data[((size_t)y * 512 + (size_t)x) * 3 + (size_t)c] = pat(x, y, c);
    static float out[3 * 224 * 224];
    ASSERT_OK(ib_preprocess_imagenet(&img, 224, IB_LAYOUT_NCHW, out, NULL));
    for (int c = 0; c < 3; c++) {
        int s = pat(32, 32, c) + pat(33, 32, c) + pat(32, 33, c) + pat(33, 33, c);
        float want = (float)((s + 2) >> 2) - (c == 0 ? 123.68f : c == 1 ? 116.78f : 103.94f);
        ASSERT_DBL_EQ(out[(size_t)c * 224 * 224], want);
    }
    ib_image_release(&img);
    /* 1-channel input is refused (the loader always converts to RGB first) */
    ib_image g;
    ASSERT_OK(ib_image_alloc(&g, 300, 300, 1));
    ib_err err;
    ASSERT_STATUS(ib_preprocess_imagenet(&g, 224, IB_LAYOUT_NCHW, out, &err), IB_EINVAL);
    ib_image_release(&g);
}

/* ---- val_map.txt --------------------------------------------------------------------------------- */

static void make_images(int n)
{
    ib_image img;
    static const uint8_t px[3] = {1, 2, 3};
    solid(&img, 32, 32, 3, px);
    char name[64];
    ASSERT_OK(ib_mkdirs("d", NULL));
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "d/img%d.JPEG", i);
        ASSERT_OK(ib_image_encode_jpeg_file(name, &img, 80, NULL));
    }
    ib_image_release(&img);
}

static void expect_bad_map(const char *text, const char *want1, const char *want2)
{
    write_file("d/val_map.txt", text, strlen(text));
    ib_imagenet *d = NULL;
    ib_err err;
    int rc = ib_imagenet_open("d", NULL, &d, &err);
    ASSERT_TRUE(rc == IB_EFORMAT || rc == IB_ENOTFOUND);
    ASSERT_NULL(d);
    ASSERT_STR_CONTAINS(err.msg, want1);
    ASSERT_STR_CONTAINS(err.msg, want2);
}

TEST(imagenet_valmap_bad_lines)
{
    make_images(2);
    expect_bad_map("img0.JPEG 3\n\nimg1.JPEG 4\n", "val_map.txt:2", "blank line");
    expect_bad_map("img0.JPEG 3\nimg1.JPEG\n", "val_map.txt:2", "no label");
    expect_bad_map("img0.JPEG 1000\n", "val_map.txt:1", "0..999");
    expect_bad_map("img0.JPEG -1\n", "val_map.txt:1", "0..999");
    expect_bad_map("img0.JPEG 12a\n", "val_map.txt:1", "not an integer");
    expect_bad_map("img0.JPEG 99999999999999999999\n", "val_map.txt:1", "0..999");
    expect_bad_map("img0.JPEG 3 7\n", "val_map.txt:1", "more than two fields");
    expect_bad_map("../img0.JPEG 3\n", "val_map.txt:1", "outside");
    expect_bad_map("/etc/passwd 3\n", "val_map.txt:1", "outside");
    expect_bad_map("", "val_map.txt", "no samples");
    expect_bad_map("img0.JPEG 3\nimg7.JPEG 4\n", "img7.JPEG: missing", "val_map.txt:2");
    write_file("d/val_map.txt", "img0.JPEG 3\0\n", 12);
    ib_imagenet *d = NULL;
    ib_err err;
    ASSERT_STATUS(ib_imagenet_open("d", NULL, &d, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "NUL");
    /* no val_map at all, and a folder that does not exist */
    remove("d/val_map.txt");
    ASSERT_STATUS(ib_imagenet_open("d", NULL, &d, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "val_map.txt");
    ASSERT_STATUS(ib_imagenet_open("nowhere", NULL, &d, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "nowhere");
}

TEST(imagenet_valmap_order_and_whitespace)
{
    make_images(3);
    /* CRLF endings, tabs and a missing final newline are what real files contain */
    const char *text = "img2.JPEG 7\r\n  img0.JPEG\t0\nimg1.JPEG 999";
    write_file("d/val_map.txt", text, strlen(text));
    ib_imagenet *d = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_imagenet_open("d", NULL, &d, &err), &err);
    ASSERT_UINT_EQ(ib_imagenet_count(d), 3);
    /* qsl_idx = line order */
    ASSERT_STR_EQ(ib_imagenet_file(d, 0), "img2.JPEG");
    ASSERT_INT_EQ(ib_imagenet_label(d, 0), 7);
    ASSERT_STR_EQ(ib_imagenet_file(d, 1), "img0.JPEG");
    ASSERT_INT_EQ(ib_imagenet_label(d, 1), 0);
    ASSERT_INT_EQ(ib_imagenet_label(d, 2), 999);
    ASSERT_NULL(ib_imagenet_file(d, 3));
    static float out[3 * 224 * 224];
    ASSERT_OK_ERR(ib_imagenet_load(d, 0, 224, IB_LAYOUT_NCHW, out, &err), &err);
    ASSERT_STATUS(ib_imagenet_load(d, 3, 224, IB_LAYOUT_NCHW, out, &err), IB_EINVAL);
    /* a listed file that turned corrupt after open: the error names it */
    write_file("d/img1.JPEG", "not a jpeg at all", 17);
    ASSERT_STATUS(ib_imagenet_load(d, 2, 224, IB_LAYOUT_NCHW, out, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "img1.JPEG");
    ib_imagenet_close(d);
}

TEST_TIMEOUT(imagenet_synthetic_through_loader, 120)
{
    ib_err err;
    ASSERT_OK_ERR(ib_imagenet_synthesize("syn", 15, 7, &err), &err);
    ib_imagenet *d = NULL;
    ASSERT_OK_ERR(ib_imagenet_open("syn", NULL, &d, &err), &err);
    ASSERT_UINT_EQ(ib_imagenet_count(d), 15);
    ASSERT_STR_EQ(ib_imagenet_file(d, 0), "ILSVRC2012_val_00000001.JPEG");
    int gray = 0, small = 0, portrait = 0;
    static float out[3 * 224 * 224];
    for (size_t i = 0; i < 15; i++) {
        ASSERT_TRUE(ib_imagenet_label(d, i) >= 0 && ib_imagenet_label(d, i) <= 999);
        char path[128];
        snprintf(path, sizeof path, "syn/%s", ib_imagenet_file(d, i));
        char *bytes = NULL;
        size_t len = 0;
        ASSERT_OK(ib_file_read_all(path, 0, &bytes, &len, NULL));
        ASSERT_TRUE(len > 4 && (uint8_t)bytes[0] == 0xff && (uint8_t)bytes[1] == 0xd8);
        ib_free(bytes);
        ib_image img;
        ASSERT_OK_ERR(ib_image_decode_jpeg_file(path, &img, &err), &err);
        bool g = true;
        for (int k = 0; k < img.width * img.height && g; k++)
            g = img.data[3 * k] == img.data[3 * k + 1] && img.data[3 * k] == img.data[3 * k + 2];
        gray += g;
        small += IB_MIN(img.width, img.height) < 256;
        portrait += img.height > img.width;
        ib_image_release(&img);
        ASSERT_OK_ERR(ib_imagenet_load(d, i, 224, IB_LAYOUT_NCHW, out, &err), &err);
        for (size_t k = 0; k < 3 * 224 * 224; k += 997)
            ASSERT_TRUE(out[k] >= -124 && out[k] <= 152);
    }
    ASSERT_INT_GE(gray, 2);     /* every seventh one */
    ASSERT_INT_GE(small, 1);    /* the enlarging resize path runs */
    ASSERT_INT_GE(15 - small, 1);
    ASSERT_INT_GE(portrait, 1);
    ASSERT_INT_GE(15 - portrait, 1);
    ib_imagenet_close(d);
    /* same seed, same bytes */
    ASSERT_OK(ib_imagenet_synthesize("syn2", 3, 7, NULL));
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    ASSERT_OK(ib_file_read_all("syn/ILSVRC2012_val_00000002.JPEG", 0, &a, &la, NULL));
    ASSERT_OK(ib_file_read_all("syn2/ILSVRC2012_val_00000002.JPEG", 0, &b, &lb, NULL));
    ASSERT_UINT_EQ(la, lb);
    ASSERT_MEM_EQ(a, b, la);
    ib_free(a);
    ib_free(b);
}
