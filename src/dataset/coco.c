/*
 * coco.c - COCO 2017 val loader (ref r1.1 python/coco.py and tools/accuracy-coco.py,
 * benchmarks.md §1.2 and §5) and pre_process_coco_resnet34 (python/dataset.py).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "dataset/coco.h"

struct ib_coco {
    char *dir;
    ib_coco_image *images;
    char **names;
    size_t n_images;
    int64_t *cats;
    size_t n_cats;
    ib_coco_gt *anns;
    size_t n_anns;
};

static int bad(ib_err *err, const char *file, const char *what, size_t i, const char *field,
               const char *expect)
{
    return ib_err_set(err, IB_EFORMAT, "%s: %s[%zu].%s: expected %s", file, what, i, field,
                      expect);
}

static int get_int(json_t *o, const char *k, int64_t *v)
{
    json_t *x = json_object_get(o, k);
    if (!json_is_integer(x))
        return -1;
    *v = (int64_t)json_integer_value(x);
    return 0;
}

static int parse_images(ib_coco *d, json_t *arr, const char *file, ib_err *err)
{
    d->n_images = json_array_size(arr);
    if (!d->n_images)
        return ib_err_set(err, IB_EFORMAT, "%s: \"images\" is empty (no samples)", file);
    d->images = ib_calloc(d->n_images, sizeof *d->images);
    d->names = ib_calloc(d->n_images, sizeof *d->names);
    if (!d->images || !d->names)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < d->n_images; i++) {
        json_t *o = json_array_get(arr, i);
        if (!json_is_object(o))
            return ib_err_set(err, IB_EFORMAT, "%s: images[%zu]: expected an object", file, i);
        int64_t id, w, h;
        if (get_int(o, "id", &id))
            return bad(err, file, "images", i, "id", "an integer");
        if (get_int(o, "width", &w) || w <= 0 || w > 65535)
            return bad(err, file, "images", i, "width", "a positive integer");
        if (get_int(o, "height", &h) || h <= 0 || h > 65535)
            return bad(err, file, "images", i, "height", "a positive integer");
        const char *fn = json_string_value(json_object_get(o, "file_name"));
        if (!fn || !*fn || fn[0] == '/' || strstr(fn, ".."))
            return bad(err, file, "images", i, "file_name",
                       "a file name inside val2017/ (a non-empty string without \"..\")");
        if (!(d->names[i] = ib_strdup(fn)))
            return ib_err_set(err, IB_ENOMEM, "%s: out of memory", file);
        d->images[i] = (ib_coco_image){id, d->names[i], (int32_t)w, (int32_t)h};
    }
    return IB_OK;
}

static int parse_cats(ib_coco *d, json_t *arr, const char *file, ib_err *err)
{
    d->n_cats = json_array_size(arr);
    if (!d->n_cats)
        return ib_err_set(err, IB_EFORMAT, "%s: \"categories\" is empty", file);
    if (!(d->cats = ib_calloc(d->n_cats, sizeof *d->cats)))
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < d->n_cats; i++)
        if (get_int(json_array_get(arr, i), "id", &d->cats[i]))
            return bad(err, file, "categories", i, "id", "an integer");
    return IB_OK;
}

static int parse_anns(ib_coco *d, json_t *arr, const char *file, ib_err *err)
{
    d->n_anns = json_array_size(arr);
    if (d->n_anns && !(d->anns = ib_calloc(d->n_anns, sizeof *d->anns)))
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < d->n_anns; i++) {
        json_t *o = json_array_get(arr, i);
        ib_coco_gt *g = &d->anns[i];
        if (!json_is_object(o))
            return ib_err_set(err, IB_EFORMAT, "%s: annotations[%zu]: expected an object", file,
                              i);
        if (get_int(o, "image_id", &g->image_id))
            return bad(err, file, "annotations", i, "image_id", "an integer");
        if (get_int(o, "category_id", &g->category_id))
            return bad(err, file, "annotations", i, "category_id", "an integer");
        json_t *bb = json_object_get(o, "bbox");
        if (json_array_size(bb) != 4)
            return bad(err, file, "annotations", i, "bbox", "[x, y, width, height]");
        for (size_t k = 0; k < 4; k++) {
            json_t *v = json_array_get(bb, k);
            if (!json_is_number(v))
                return bad(err, file, "annotations", i, "bbox", "four numbers");
            g->bbox[k] = json_number_value(v);
        }
        json_t *ar = json_object_get(o, "area");
        if (!json_is_number(ar)) /* COCOeval reads g["area"] for the area ranges */
            return bad(err, file, "annotations", i, "area", "a number");
        g->area = json_number_value(ar);
        json_t *cr = json_object_get(o, "iscrowd");
        if (cr && !json_is_integer(cr) && !json_is_boolean(cr))
            return bad(err, file, "annotations", i, "iscrowd", "0 or 1");
        g->iscrowd = cr ? (json_is_boolean(cr) ? json_is_true(cr)
                                               : json_integer_value(cr) != 0)
                        : 0;
    }
    return IB_OK;
}

int ib_coco_open(const char *dir, const char *annotations, ib_coco **out, ib_err *err)
{
    *out = NULL;
    char ann[4096], path[4096], img_dir[4096];
    if (ib_path_join(img_dir, sizeof img_dir, dir, "val2017"))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    if (!annotations) {
        if (snprintf(ann, sizeof ann, "%s/annotations/instances_val2017.json", dir) >=
            (int)sizeof ann)
            return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
        annotations = ann;
    }
    if (!ib_path_is_dir(img_dir))
        return ib_err_set(err, IB_ENOTFOUND,
                          "%s: not a folder (expected COCO's val2017/*.jpg under %s)", img_dir,
                          dir);
    if (!ib_path_exists(annotations))
        return ib_err_set(err, IB_ENOTFOUND,
                          "%s: missing (expected COCO's annotations/instances_val2017.json)",
                          annotations);
    json_error_t je;
    json_t *root = json_load_file(annotations, 0, &je);
    if (!root)
        return ib_err_set(err, IB_EFORMAT, "%s:%d:%d: not valid JSON: %s", annotations, je.line,
                          je.column, je.text);
    ib_coco *d = ib_calloc(1, sizeof *d);
    int rc = IB_OK;
    if (!d || !(d->dir = ib_strdup(dir))) {
        rc = ib_err_set(err, IB_ENOMEM, "%s: out of memory", annotations);
        goto fail;
    }
    json_t *imgs = json_object_get(root, "images"), *cats = json_object_get(root, "categories");
    json_t *anns = json_object_get(root, "annotations");
    if (!json_is_object(root) || !json_is_array(imgs) || !json_is_array(cats) ||
        (anns && !json_is_array(anns))) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: expected an object with arrays \"images\", \"categories\" and "
                        "\"annotations\" (COCO instances format)",
                        annotations);
        goto fail;
    }
    if ((rc = parse_images(d, imgs, annotations, err)) ||
        (rc = parse_cats(d, cats, annotations, err)) ||
        (anns && (rc = parse_anns(d, anns, annotations, err))))
        goto fail;
    for (size_t i = 0; i < d->n_images; i++) {
        if (ib_path_join(path, sizeof path, img_dir, d->images[i].file_name)) {
            rc = ib_err_set(err, IB_EINVAL, "%s: images[%zu]: path too long", annotations, i);
            goto fail;
        }
        if (!ib_path_exists(path)) {
            rc = ib_err_set(err, IB_ENOTFOUND, "%s: missing (images[%zu] of %s)", path, i,
                            annotations);
            goto fail;
        }
    }
    json_decref(root);
    *out = d;
    return IB_OK;
fail:
    json_decref(root);
    ib_coco_close(d);
    return rc;
}

void ib_coco_close(ib_coco *d)
{
    if (!d)
        return;
    for (size_t i = 0; d->names && i < d->n_images; i++)
        ib_free(d->names[i]);
    ib_free(d->names);
    ib_free(d->images);
    ib_free(d->cats);
    ib_free(d->anns);
    ib_free(d->dir);
    ib_free(d);
}

size_t ib_coco_count(const ib_coco *d)
{
    return d->n_images;
}

const ib_coco_image *ib_coco_image_at(const ib_coco *d, size_t i)
{
    return i < d->n_images ? &d->images[i] : NULL;
}

size_t ib_coco_category_count(const ib_coco *d)
{
    return d->n_cats;
}

int64_t ib_coco_category(const ib_coco *d, size_t i)
{
    return i < d->n_cats ? d->cats[i] : -1;
}

const ib_coco_gt *ib_coco_annotations(const ib_coco *d, size_t *n)
{
    *n = d->n_anns;
    return d->anns;
}

/* OpenCV resize INTER_LINEAR taps: f = (d + .5) * scale - .5, floor, clamped at the edges. */
static void taps(int32_t dst, int32_t src, int32_t *i0, int32_t *i1, float *w1)
{
    double scale = (double)src / dst;
    for (int32_t x = 0; x < dst; x++) {
        float f = (float)((x + 0.5) * scale - 0.5);
        int32_t s = (int32_t)floorf(f);
        f -= (float)s;
        if (s < 0) {
            s = 0;
            f = 0;
        }
        if (s >= src - 1) {
            s = src - 1;
            f = 0;
        }
        i0[x] = s;
        i1[x] = IB_MIN(s + 1, src - 1);
        w1[x] = f;
    }
}

int ib_preprocess_coco(const ib_image *rgb, int32_t width, int32_t height, enum ib_layout layout,
                       float *out, ib_err *err)
{
    if (rgb->channels != 3 || width <= 0 || height <= 0)
        return ib_err_set(err, IB_EINVAL, "coco pre-processing: %d channels to %dx%d (need RGB "
                                          "and a positive size)",
                          rgb->channels, width, height);
    int32_t *x0 = ib_malloc((size_t)width * sizeof *x0), *x1 = ib_malloc((size_t)width * 4);
    int32_t *y0 = ib_malloc((size_t)height * sizeof *y0), *y1 = ib_malloc((size_t)height * 4);
    float *wx = ib_malloc((size_t)width * sizeof *wx), *wy = ib_malloc((size_t)height * 4);
    float *row0 = ib_malloc((size_t)width * 3 * sizeof *row0);
    float *row1 = ib_malloc((size_t)width * 3 * sizeof *row1);
    int rc = IB_OK;
    if (!x0 || !x1 || !y0 || !y1 || !wx || !wy || !row0 || !row1) {
        rc = ib_err_set(err, IB_ENOMEM, "coco pre-processing: out of memory");
        goto out;
    }
    taps(width, rgb->width, x0, x1, wx);
    taps(height, rgb->height, y0, y1, wy);
    static const float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
    size_t plane = (size_t)width * (size_t)height;
    for (int32_t y = 0; y < height; y++) {
        /* horizontal pass on the two source rows, then the vertical blend (resizeGeneric) */
        const uint8_t *r0 = rgb->data + (size_t)y0[y] * (size_t)rgb->width * 3;
        const uint8_t *r1 = rgb->data + (size_t)y1[y] * (size_t)rgb->width * 3;
        for (int32_t x = 0; x < width; x++)
            for (int c = 0; c < 3; c++) {
                float a = r0[(size_t)x0[x] * 3 + (size_t)c], b = r0[(size_t)x1[x] * 3 + (size_t)c];
                row0[(size_t)x * 3 + (size_t)c] = a * (1.0f - wx[x]) + b * wx[x];
                a = r1[(size_t)x0[x] * 3 + (size_t)c];
                b = r1[(size_t)x1[x] * 3 + (size_t)c];
                row1[(size_t)x * 3 + (size_t)c] = a * (1.0f - wx[x]) + b * wx[x];
            }
        for (int32_t x = 0; x < width; x++)
            for (int c = 0; c < 3; c++) {
                size_t k = (size_t)x * 3 + (size_t)c;
                float v = row0[k] * (1.0f - wy[y]) + row1[k] * wy[y];
                v = (v / 255.0f - mean[c]) / sd[c]; /* img / 255. - mean, / std */
                size_t o = layout == IB_LAYOUT_NCHW
                               ? (size_t)c * plane + (size_t)y * (size_t)width + (size_t)x
                               : ((size_t)y * (size_t)width + (size_t)x) * 3 + (size_t)c;
                out[o] = v;
            }
    }
out:
    ib_free(x0);
    ib_free(x1);
    ib_free(y0);
    ib_free(y1);
    ib_free(wx);
    ib_free(wy);
    ib_free(row0);
    ib_free(row1);
    return rc;
}

int ib_coco_load(const ib_coco *d, size_t i, int32_t size, enum ib_layout layout, float *out,
                 ib_err *err)
{
    if (i >= d->n_images)
        return ib_err_set(err, IB_EINVAL, "coco: sample %zu of %zu", i, d->n_images);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/val2017/%s", d->dir, d->images[i].file_name) >=
        (int)sizeof path)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", d->images[i].file_name);
    ib_image img;
    int rc = ib_image_decode_jpeg_file(path, &img, err);
    if (rc)
        return rc;
    rc = ib_preprocess_coco(&img, size, size, layout, out, err);
    ib_image_release(&img);
    return rc;
}
