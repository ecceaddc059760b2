/*
 * fuzz_imagenet_jpeg.c - libFuzzer target for the JPEG decoder (libjpeg-turbo behind
 * ib_image_decode_jpeg_memory) and the ResNet50 pre-processing on whatever decodes. Any input
 * must decode to a consistent RGB image or fail with a message; nothing may crash, leak or
 * read out of bounds. `make check` replays tests/fuzz/corpus/imagenet_jpeg/ with gcc.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "inferbench/base.h"
#include "inferbench/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_imagenet_jpeg: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_image img;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_image_decode_jpeg_memory(data, size, "fuzz", &img, &err);
    if (rc != IB_OK) {
        check(img.data == NULL && err.msg[0] && err.code == rc, "failure without a message");
        return 0;
    }
    check(img.data && img.channels == 3 && img.width > 0 && img.height > 0, "bad image");
    /* small images only: the pre-processing cost grows with the pixel count */
    if ((int64_t)img.width * img.height <= (1 << 20)) {
        static float out[3 * 224 * 224];
        rc = ib_preprocess_imagenet(&img, 224, IB_LAYOUT_NCHW, out, &err);
        check(rc == IB_OK, err.msg);
        for (size_t i = 0; i < 3 * 224 * 224; i++)
            check(out[i] >= -124.0f && out[i] <= 152.0f, "pre-processed value out of range");
    }
    ib_image_release(&img);
    return 0;
}
