/*
 * imagenet.c - the ImageNet 2012 validation set as the ResNet50 reference reads it
 * (benchmarks.md §1.1, §5; reference python/imagenet.py and tools/accuracy-imagenet.py):
 * a folder of JPEGs and val_map.txt with "<file> <label>" per line. Sample i, the qsl_idx,
 * is line i, which is also how the accuracy script maps qsl_idx back to a label, so every
 * line must name an existing file (the reference loader would silently skip a missing one
 * and shift every later qsl_idx; here that is an error naming the file and the line).
 * Loading decodes and pre-processes one sample; the handle is read-only after open, so
 * loads may run on several threads.
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/vec.h"
#include "inferbench/dataset.h"

typedef struct imagenet_item {
    char *file; /* as listed */
    int32_t label;
} imagenet_item;

struct ib_imagenet {
    char *dir;
    char *text; /* val_map contents; items point into it */
    IB_VEC(imagenet_item) items;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A listed name must stay inside the folder: relative, no ".." component. */
static bool safe_name(const char *s)
{
    if (s[0] == '/')
        return false;
    for (const char *p = s; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return false;
        if (!e)
            break;
        p = e + 1;
    }
    return true;
}

static int parse_line(ib_imagenet *d, char *line, const char *map, size_t lineno, ib_err *err)
{
    char *p = line;
    while (is_space(*p))
        p++;
    char *end = p + strlen(p);
    while (end > p && is_space(end[-1]))
        *--end = '\0';
    if (!*p)
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%zu: blank line (expected \"<file> <label>\"; the reference "
                          "loader fails on it too)",
                          map, lineno);
    char *name = p;
    while (*p && !is_space(*p))
        p++;
    if (!*p)
        return ib_err_set(err, IB_EFORMAT, "%s:%zu: \"%s\" has no label (expected \"<file> "
                                           "<label>\")",
                          map, lineno, name);
    *p++ = '\0';
    while (is_space(*p))
        p++;
    char *lab = p;
    while (*p && !is_space(*p))
        p++;
    if (*p)
        return ib_err_set(err, IB_EFORMAT, "%s:%zu: more than two fields (expected \"<file> "
                                           "<label>\")",
                          map, lineno);
    long v = 0;
    bool ok = *lab != '\0' && strlen(lab) <= 4;
    for (char *q = lab; ok && *q; q++) {
        if (*q < '0' || *q > '9')
            ok = false;
        else
            v = v * 10 + (*q - '0');
    }
    if (!ok || v > 999)
        return ib_err_set(err, IB_EFORMAT, "%s:%zu: label \"%s\" is not an integer in 0..999",
                          map, lineno, lab);
    if (!safe_name(name))
        return ib_err_set(err, IB_EFORMAT, "%s:%zu: \"%s\" points outside the image folder",
                          map, lineno, name);
    imagenet_item it = {name, (int32_t)v};
    if (IB_VEC_PUSH(&d->items, it))
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", map);
    return IB_OK;
}

int ib_imagenet_open(const char *dir, const char *val_map, ib_imagenet **out, ib_err *err)
{
    *out = NULL;
    char mapbuf[4096];
    if (!val_map) {
        if (ib_path_join(mapbuf, sizeof mapbuf, dir, "val_map.txt"))
            return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
        val_map = mapbuf;
    }
    if (!ib_path_is_dir(dir))
        return ib_err_set(err, IB_ENOTFOUND, "%s: not a folder (expected the ImageNet "
                                             "validation JPEGs and val_map.txt)",
                          dir);
    ib_imagenet *d = ib_calloc(1, sizeof *d);
    if (!d || !(d->dir = ib_strdup(dir))) {
        ib_free(d);
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", dir);
    }
    size_t len = 0;
    int rc = ib_file_read_all(val_map, 0, &d->text, &len, err);
    if (rc)
        goto fail;
    if (memchr(d->text, '\0', len)) {
        rc = ib_err_set(err, IB_EFORMAT, "%s: contains a NUL byte (not a text file)", val_map);
        goto fail;
    }
    size_t lineno = 0;
    for (char *p = d->text; *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        if ((rc = parse_line(d, p, val_map, lineno, err)))
            goto fail;
        if (!nl)
            break;
        p = nl + 1;
    }
    if (d->items.len == 0) {
        rc = ib_err_set(err, IB_EFORMAT, "%s: no samples listed", val_map);
        goto fail;
    }
    char path[4096];
    for (size_t i = 0; i < d->items.len; i++) {
        if (ib_path_join(path, sizeof path, dir, d->items.data[i].file)) {
            rc = ib_err_set(err, IB_EINVAL, "%s:%zu: path too long", val_map, i + 1);
            goto fail;
        }
        if (!ib_path_exists(path)) {
            rc = ib_err_set(err, IB_ENOTFOUND, "%s: missing (listed at %s:%zu)", path, val_map,
                            i + 1);
            goto fail;
        }
    }
    *out = d;
    return IB_OK;
fail:
    ib_imagenet_close(d);
    return rc;
}

void ib_imagenet_close(ib_imagenet *d)
{
    if (!d)
        return;
    IB_VEC_FREE(&d->items);
    ib_free(d->text);
    ib_free(d->dir);
    ib_free(d);
}

size_t ib_imagenet_count(const ib_imagenet *d)
{
    return d->items.len;
}

const char *ib_imagenet_file(const ib_imagenet *d, size_t i)
{
    return i < d->items.len ? d->items.data[i].file : NULL;
}

int32_t ib_imagenet_label(const ib_imagenet *d, size_t i)
{
    return i < d->items.len ? d->items.data[i].label : -1;
}

/* Decode sample i and pre-process it into f32 or u8. */
static int load(const ib_imagenet *d, size_t i, int32_t size, enum ib_layout layout, float *f32,
                uint8_t *u8, ib_err *err)
{
    if (i >= d->items.len)
        return ib_err_set(err, IB_EINVAL, "imagenet: sample %zu of %zu", i, d->items.len);
    char path[4096];
    if (ib_path_join(path, sizeof path, d->dir, d->items.data[i].file))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", d->items.data[i].file);
    ib_image img;
    int rc = ib_image_decode_jpeg_file(path, &img, err);
    if (rc)
        return rc;
    rc = u8 ? ib_preprocess_imagenet_u8(&img, size, layout, u8, err)
            : ib_preprocess_imagenet(&img, size, layout, f32, err);
    ib_image_release(&img);
    return rc;
}

int ib_imagenet_load(const ib_imagenet *d, size_t i, int32_t size, enum ib_layout layout,
                     float *out, ib_err *err)
{
    return load(d, i, size, layout, out, NULL, err);
}

int ib_imagenet_load_u8(const ib_imagenet *d, size_t i, int32_t size, enum ib_layout layout,
                        uint8_t *out, ib_err *err)
{
    return load(d, i, size, layout, NULL, out, err);
}
