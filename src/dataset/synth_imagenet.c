/*
 * synth_imagenet.c - a synthetic ImageNet validation folder in the real on-disk format
 * (benchmarks.md §5, like the reference's tools/make_fake_imagenet.sh): JPEG files named as
 * the real ones, of varied sizes and aspect ratios (short sides below and above 256, so both
 * resize paths run), every seventh one grayscale, plus val_map.txt with random labels.
 * Pixel content is smooth (gradients and soft blobs) so JPEG compression behaves as on
 * photographs. Deterministic for a seed: same seed, same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/rng.h"
#include "base/strbuf.h"
#include "inferbench/dataset.h"

static double unit(uint64_t *s)
{
    return (double)(ib_splitmix64(s) >> 11) / 9007199254740992.0;
}

static int32_t range(uint64_t *s, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(ib_splitmix64(s) % (uint64_t)(hi - lo + 1));
}

/* Gradient plus three soft blobs per channel. */
static void paint(ib_image *img, uint64_t *rng)
{
    int cn = img->channels;
    double base[3], gx[3], gy[3], bx[3][3], by[3][3], br[3][3], ba[3][3];
    for (int c = 0; c < 3; c++) {
        base[c] = 40 + 170 * unit(rng);
        gx[c] = (unit(rng) - 0.5) * 120;
        gy[c] = (unit(rng) - 0.5) * 120;
        for (int k = 0; k < 3; k++) {
            bx[c][k] = unit(rng);
            by[c][k] = unit(rng);
            br[c][k] = 0.05 + 0.25 * unit(rng);
            ba[c][k] = (unit(rng) - 0.5) * 160;
        }
    }
    for (int32_t y = 0; y < img->height; y++) {
        double v = (double)y / img->height;
        for (int32_t x = 0; x < img->width; x++) {
            double u = (double)x / img->width;
            double px[3];
            for (int c = 0; c < 3; c++) {
                double p = base[c] + gx[c] * u + gy[c] * v;
                for (int k = 0; k < 3; k++) {
                    double dx = u - bx[c][k], dy = v - by[c][k];
                    p += ba[c][k] * exp(-(dx * dx + dy * dy) / (br[c][k] * br[c][k]));
                }
                px[c] = p < 0 ? 0 : p > 255 ? 255 : p;
            }
            uint8_t *o = img->data + ((size_t)y * (size_t)img->width + (size_t)x) * (size_t)cn;
            if (cn == 1)
                o[0] = (uint8_t)lrint(0.299 * px[0] + 0.587 * px[1] + 0.114 * px[2]);
            else
                for (int c = 0; c < 3; c++)
                    o[c] = (uint8_t)lrint(px[c]);
        }
    }
}

int ib_imagenet_synthesize(const char *dir, size_t count, uint64_t seed, ib_err *err)
{
    if (count == 0 || count > 100000000)
        return ib_err_set(err, IB_EINVAL, "synthetic imagenet: %zu images (1..1e8)", count);
    int rc = ib_mkdirs(dir, err);
    if (rc)
        return rc;
    uint64_t rng = seed ^ 0x696d6167656e6574ull; /* "imagenet" */
    ib_strbuf map;
    ib_strbuf_init(&map);
    char name[64], path[4096];
    for (size_t i = 0; i < count; i++) {
        /* short side 150..500, aspect 1..1.6, portrait or landscape */
        int32_t s = range(&rng, 150, 500);
        int32_t l = (int32_t)(s * (1.0 + 0.6 * unit(&rng)));
        bool portrait = ib_splitmix64(&rng) & 1;
        int32_t channels = (i % 7 == 3) ? 1 : 3;
        ib_image img;
        rc = ib_image_alloc(&img, portrait ? s : l, portrait ? l : s, channels);
        if (rc) {
            rc = ib_err_set(err, rc, "synthetic imagenet: out of memory");
            break;
        }
        paint(&img, &rng);
        snprintf(name, sizeof name, "ILSVRC2012_val_%08zu.JPEG", i + 1);
        if (ib_path_join(path, sizeof path, dir, name)) {
            ib_image_release(&img);
            rc = ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
            break;
        }
        rc = ib_image_encode_jpeg_file(path, &img, 90, err);
        ib_image_release(&img);
        if (rc)
            break;
        if (ib_strbuf_printf(&map, "%s %d\n", name, range(&rng, 0, 999))) {
            rc = ib_err_set(err, IB_ENOMEM, "synthetic imagenet: out of memory");
            break;
        }
    }
    if (rc == IB_OK) {
        if (ib_path_join(path, sizeof path, dir, "val_map.txt"))
            rc = ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
        else
            rc = ib_file_write_all(path, ib_strbuf_cstr(&map), map.len, err);
    }
    ib_strbuf_deinit(&map);
    return rc;
}
