/*
 * synth_coco.c - a synthetic COCO 2017 val in the real on-disk layout (benchmarks.md §5:
 * "2-3 random images + a minimal instances_val2017.json with the real non-contiguous 80 COCO
 * ids and a few annotations"), so quick runs and tests take the real loader path. Random
 * content: no accuracy figure on it means anything.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/rng.h"
#include "dataset/coco.h"

/* The 80 category ids of COCO 2017 (1..90 with gaps). */
static const int k_coco_ids[80] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 13, 14, 15,
                                   16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27, 28, 31, 32,
                                   33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47,
                                   48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                                   62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79,
                                   80, 81, 82, 84, 85, 86, 87, 88, 89, 90};

static int32_t pick(uint64_t *s, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(ib_splitmix64(s) % (uint64_t)(hi - lo + 1));
}

/* A gradient with one bright rectangle per box, so boxes are at least visible. */
static void paint(ib_image *img, uint64_t *rng)
{
    int b0 = pick(rng, 30, 200), gx = pick(rng, -60, 60), gy = pick(rng, -60, 60);
    for (int32_t y = 0; y < img->height; y++)
        for (int32_t x = 0; x < img->width; x++)
            for (int c = 0; c < img->channels; c++) {
                int v = b0 + gx * x / img->width + gy * y / img->height + 20 * c;
                img->data[((size_t)y * (size_t)img->width + (size_t)x) * (size_t)img->channels +
                          (size_t)c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
}

static int add(json_t *arr, json_t *o)
{
    return o ? json_array_append_new(arr, o) : -1;
}

int ib_coco_synthesize(const char *dir, size_t count, uint64_t seed, ib_err *err)
{
    if (count == 0 || count > 1000000)
        return ib_err_set(err, IB_EINVAL, "synthetic coco: %zu images (1..1e6)", count);
    char path[4096], sub[4096];
    if (snprintf(sub, sizeof sub, "%s/val2017", dir) >= (int)sizeof sub)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    int rc = ib_mkdirs(sub, err);
    if (rc)
        return rc;
    if (snprintf(path, sizeof path, "%s/annotations", dir) >= (int)sizeof path ||
        (rc = ib_mkdirs(path, err)))
        return rc ? rc : ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    json_t *root = json_object(), *imgs = json_array(), *anns = json_array(),
           *cats = json_array();
    if (!root || !imgs || !anns || !cats || json_object_set_new(root, "images", imgs) ||
        json_object_set_new(root, "annotations", anns) ||
        json_object_set_new(root, "categories", cats)) {
        json_decref(root);
        return ib_err_set(err, IB_ENOMEM, "synthetic coco: out of memory");
    }
    for (int i = 0; i < 80 && rc == IB_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "synthetic_%d", k_coco_ids[i]);
        if (add(cats, json_pack("{s:i, s:s, s:s}", "id", k_coco_ids[i], "name", name,
                                "supercategory", "synthetic")))
            rc = ib_err_set(err, IB_ENOMEM, "synthetic coco: out of memory");
    }
    uint64_t rng = seed ^ 0x636f636f32303137ull; /* "coco2017" */
    int64_t ann_id = 1;
    for (size_t i = 0; i < count && rc == IB_OK; i++) {
        int32_t w = pick(&rng, 160, 640), h = pick(&rng, 160, 640);
        int64_t id = 139 + 1000 * (int64_t)i + pick(&rng, 0, 999); /* sparse ids like COCO */
        ib_image img;
        if ((rc = ib_image_alloc(&img, w, h, i % 5 == 2 ? 1 : 3))) {
            rc = ib_err_set(err, rc, "synthetic coco: out of memory");
            break;
        }
        paint(&img, &rng);
        char name[32];
        snprintf(name, sizeof name, "%012lld.jpg", (long long)id);
        if (snprintf(path, sizeof path, "%s/%s", sub, name) >= (int)sizeof path)
            rc = ib_err_set(err, IB_EINVAL, "%s: path too long", sub);
        else
            rc = ib_image_encode_jpeg_file(path, &img, 90, err);
        ib_image_release(&img);
        if (rc)
            break;
        if (add(imgs, json_pack("{s:I, s:s, s:i, s:i}", "id", (json_int_t)id, "file_name", name,
                                "width", w, "height", h))) {
            rc = ib_err_set(err, IB_ENOMEM, "synthetic coco: out of memory");
            break;
        }
        int nb = pick(&rng, 1, 3);
        for (int b = 0; b < nb; b++) {
            double bw = pick(&rng, 8, w / 2), bh = pick(&rng, 8, h / 2);
            double bx = pick(&rng, 0, w - (int32_t)bw), by = pick(&rng, 0, h - (int32_t)bh);
            int cat = k_coco_ids[pick(&rng, 0, 79)];
            if (add(anns, json_pack("{s:I, s:I, s:i, s:[f,f,f,f], s:f, s:i}", "id",
                                    (json_int_t)ann_id++, "image_id", (json_int_t)id,
                                    "category_id", cat, "bbox", bx, by, bw, bh, "area", bw * bh,
                                    "iscrowd", 0))) {
                rc = ib_err_set(err, IB_ENOMEM, "synthetic coco: out of memory");
                break;
            }
        }
    }
    if (rc == IB_OK) {
        snprintf(path, sizeof path, "%s/annotations/instances_val2017.json", dir);
        char *text = json_dumps(root, JSON_COMPACT);
        if (!text)
            rc = ib_err_set(err, IB_ENOMEM, "synthetic coco: out of memory");
        else
            rc = ib_file_write_all(path, text, strlen(text), err);
        free(text);
    }
    json_decref(root);
    return rc;
}
