/*
 * preprocess.c - image pre-processing of the vision references: OpenCV's INTER_AREA resize
 * on 8-bit images and the ImageNet "vgg" pipeline of ResNet50 (benchmarks.md §1.1,
 * reference python/dataset.py pre_process_vgg: resize_with_aspectratio + center_crop +
 * mean subtraction).
 *
 * cv::resize(INTER_AREA) takes one of three paths, reproduced here:
 *   - both scales integers (>= 1): block averages ("area fast"); 2x2 blocks round half up
 *     ((s + 2) >> 2, OpenCV's SIMD path), other blocks sum * (1/area) rounded to even;
 *   - both scales >= 1 otherwise: fractional pixel-area weights (computeResizeAreaTab),
 *     accumulated in float per source row, rounded to nearest even;
 *   - any axis enlarged: bilinear with INTER_AREA's coefficient rule, 11-bit fixed point
 *     (INTER_RESIZE_COEF_BITS), rounding as OpenCV's FixedPtCast.
 * Rounding of exact ties in float may differ from OpenCV builds that contract a*b+c into
 * FMA; such pixels differ by at most 1.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/common.h"
#include "inferbench/dataset.h"

static uint8_t sat_u8_round(float v)
{
    /* cvRound: nearest, ties to even (lrintf under the default rounding mode) */
    long r = lrintf(v);
    return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

/* ---- area, integer ratio ------------------------------------------------------------------- */

static void resize_area_fast(const ib_image *s, ib_image *d, int sx, int sy)
{
    int cn = s->channels;
    size_t sstride = (size_t)s->width * (size_t)cn, dstride = (size_t)d->width * (size_t)cn;
    float scale = 1.f / (float)(sx * sy);
    for (int y = 0; y < d->height; y++) {
        uint8_t *D = d->data + (size_t)y * dstride;
        for (int x = 0; x < d->width; x++) {
            for (int c = 0; c < cn; c++) {
                int sum = 0;
                for (int j = 0; j < sy; j++) {
                    const uint8_t *S = s->data + (size_t)(y * sy + j) * sstride;
                    for (int i = 0; i < sx; i++)
                        sum += S[(size_t)(x * sx + i) * (size_t)cn + (size_t)c];
                }
                D[(size_t)x * (size_t)cn + (size_t)c] =
                    (sx == 2 && sy == 2) ? (uint8_t)((sum + 2) >> 2)
                                         : sat_u8_round((float)sum * scale);
            }
        }
    }
}

/* ---- area, fractional ratio ------------------------------------------------------------------ */

typedef struct area_tab {
    int di, si;
    float alpha;
} area_tab;

/* computeResizeAreaTab: for each destination pixel the source pixels it covers and the
 * share of each (edges partly covered). Returns the number of entries. */
static int area_tab_build(int ssize, int dsize, int cn, double scale, area_tab *tab)
{
    int k = 0;
    for (int dx = 0; dx < dsize; dx++) {
        double fsx1 = dx * scale;
        double fsx2 = fsx1 + scale;
        double cell = IB_MIN(scale, ssize - fsx1);
        int sx1 = (int)ceil(fsx1), sx2 = (int)floor(fsx2);
        sx2 = IB_MIN(sx2, ssize - 1);
        sx1 = IB_MIN(sx1, sx2);
        if (sx1 - fsx1 > 1e-3)
            tab[k++] = (area_tab){dx * cn, (sx1 - 1) * cn, (float)((sx1 - fsx1) / cell)};
        for (int sx = sx1; sx < sx2; sx++)
            tab[k++] = (area_tab){dx * cn, sx * cn, (float)(1.0 / cell)};
        if (fsx2 - sx2 > 1e-3)
            tab[k++] = (area_tab){dx * cn, sx2 * cn,
                                  (float)(IB_MIN(IB_MIN(fsx2 - sx2, 1.), cell) / cell)};
    }
    return k;
}

static int resize_area_frac(const ib_image *s, ib_image *d, double scale_x, double scale_y)
{
    int cn = s->channels;
    size_t dw = (size_t)d->width * (size_t)cn;
    area_tab *xtab = ib_malloc(sizeof *xtab * (size_t)s->width * 2);
    area_tab *ytab = ib_malloc(sizeof *ytab * (size_t)s->height * 2);
    float *buf = ib_malloc(sizeof *buf * dw * 2);
    int rc = IB_ENOMEM;
    if (!xtab || !ytab || !buf)
        goto done;
    int nx = area_tab_build(s->width, d->width, cn, scale_x, xtab);
    int ny = area_tab_build(s->height, d->height, 1, scale_y, ytab);
    float *sum = buf + dw;
    memset(sum, 0, sizeof *sum * dw);
    int prev_dy = ytab[0].di;
    size_t sstride = (size_t)s->width * (size_t)cn;
    for (int j = 0; j < ny; j++) {
        float beta = ytab[j].alpha;
        int dy = ytab[j].di, sy = ytab[j].si;
        const uint8_t *S = s->data + (size_t)sy * sstride;
        memset(buf, 0, sizeof *buf * dw);
        for (int k = 0; k < nx; k++) {
            int dxn = xtab[k].di, sxn = xtab[k].si;
            float a = xtab[k].alpha;
            for (int c = 0; c < cn; c++)
                buf[dxn + c] = buf[dxn + c] + (float)S[sxn + c] * a;
        }
        if (dy != prev_dy) {
            uint8_t *D = d->data + (size_t)prev_dy * dw;
            for (size_t x = 0; x < dw; x++) {
                D[x] = sat_u8_round(sum[x]);
                sum[x] = beta * buf[x];
            }
            prev_dy = dy;
        } else {
            for (size_t x = 0; x < dw; x++)
                sum[x] = sum[x] + beta * buf[x];
        }
    }
    uint8_t *D = d->data + (size_t)prev_dy * dw;
    for (size_t x = 0; x < dw; x++)
        D[x] = sat_u8_round(sum[x]);
    rc = IB_OK;
done:
    ib_free(xtab);
    ib_free(ytab);
    ib_free(buf);
    return rc;
}

/* ---- enlarging: INTER_AREA's bilinear ------------------------------------------------------- */

#define COEF_BITS 11
#define COEF_SCALE (1 << COEF_BITS)

static short sat_short_round(float v)
{
    long r = lrintf(v);
    return (short)(r < -32768 ? -32768 : r > 32767 ? 32767 : r);
}

/* For each output position: the first source index and the two fixed-point weights. */
static void linear_coefs(int ssize, int dsize, double scale, double inv_scale, int *ofs,
                         short *w)
{
    for (int dx = 0; dx < dsize; dx++) {
        int sx = (int)floor(dx * scale);
        float fx = (float)((dx + 1) - (sx + 1) * inv_scale);
        fx = fx <= 0 ? 0.f : fx - floorf(fx);
        if (sx < 0)
            fx = 0, sx = 0;
        if (sx >= ssize - 1)
            fx = 0, sx = ssize - 1;
        ofs[dx] = sx;
        w[2 * dx] = sat_short_round((1.f - fx) * COEF_SCALE);
        w[2 * dx + 1] = sat_short_round(fx * COEF_SCALE);
    }
}

static int resize_area_up(const ib_image *s, ib_image *d, double sx_, double isx, double sy_,
                          double isy)
{
    int cn = s->channels, sw = s->width, sh = s->height;
    size_t dw = (size_t)d->width * (size_t)cn;
    int *xofs = ib_malloc(sizeof *xofs * (size_t)d->width);
    short *xw = ib_malloc(sizeof *xw * 2 * (size_t)d->width);
    int *yofs = ib_malloc(sizeof *yofs * (size_t)d->height);
    short *yw = ib_malloc(sizeof *yw * 2 * (size_t)d->height);
    int *rows = ib_malloc(sizeof *rows * dw * 2);
    int rc = IB_ENOMEM;
    if (!xofs || !xw || !yofs || !yw || !rows)
        goto done;
    linear_coefs(sw, d->width, sx_, isx, xofs, xw);
    linear_coefs(sh, d->height, sy_, isy, yofs, yw);
    size_t sstride = (size_t)sw * (size_t)cn;
    for (int y = 0; y < d->height; y++) {
        /* horizontal pass of the two source rows (clamped), then the vertical blend */
        for (int r = 0; r < 2; r++) {
            int sy = IB_MIN(yofs[y] + r, sh - 1);
            const uint8_t *S = s->data + (size_t)sy * sstride;
            int *R = rows + (size_t)r * dw;
            for (int x = 0; x < d->width; x++) {
                int sx = xofs[x];
                int sx1 = IB_MIN(sx + 1, sw - 1);
                for (int c = 0; c < cn; c++)
                    R[x * cn + c] = S[sx * cn + c] * xw[2 * x] + S[sx1 * cn + c] * xw[2 * x + 1];
            }
        }
        uint8_t *D = d->data + (size_t)y * dw;
        int b0 = yw[2 * y], b1 = yw[2 * y + 1];
        for (size_t x = 0; x < dw; x++) {
            int v = (b0 * rows[x] + b1 * rows[dw + x] + (1 << (2 * COEF_BITS - 1))) >>
                    (2 * COEF_BITS);
            D[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    rc = IB_OK;
done:
    ib_free(xofs);
    ib_free(xw);
    ib_free(yofs);
    ib_free(yw);
    ib_free(rows);
    return rc;
}

int ib_image_resize_area(const ib_image *src, int32_t width, int32_t height, ib_image *dst,
                         ib_err *err)
{
    memset(dst, 0, sizeof *dst);
    if (!src || !src->data || src->width <= 0 || src->height <= 0 || src->channels < 1 ||
        src->channels > 4)
        return ib_err_set(err, IB_EINVAL, "resize: empty source image");
    int rc = ib_image_alloc(dst, width, height, src->channels);
    if (rc)
        return ib_err_set(err, rc, "resize: cannot allocate a %dx%d image", width, height);
    if (width == src->width && height == src->height) {
        memcpy(dst->data, src->data, (size_t)width * (size_t)height * (size_t)src->channels);
        return IB_OK;
    }
    /* cv::resize: inv_scale = dsize / ssize, scale = 1 / inv_scale (doubles) */
    double isx = (double)width / src->width, isy = (double)height / src->height;
    double sx = 1. / isx, sy = 1. / isy;
    if (sx >= 1 && sy >= 1) {
        int ix = (int)lrint(sx), iy = (int)lrint(sy);
        if (fabs(sx - ix) < DBL_EPSILON && fabs(sy - iy) < DBL_EPSILON)
            resize_area_fast(src, dst, ix, iy);
        else
            rc = resize_area_frac(src, dst, sx, sy);
    } else {
        rc = resize_area_up(src, dst, sx, isx, sy, isy);
    }
    if (rc) {
        ib_image_release(dst);
        return ib_err_set(err, rc, "resize: out of memory");
    }
    return IB_OK;
}

/* ---- the ImageNet pipeline --------------------------------------------------------------------- */

/* The pipeline up to the crop: r (release it) holds the resized image, w its width, and the
 * crop starts at (left, top). */
static int resize_and_place(const ib_image *rgb, int32_t size, ib_image *r, int32_t *w,
                            int32_t *left, int32_t *top, ib_err *err)
{
    if (!rgb || !rgb->data || rgb->channels != 3)
        return ib_err_set(err, IB_EINVAL, "preprocess: need a 3-channel RGB image");
    if (size <= 0 || size > 4096)
        return ib_err_set(err, IB_EINVAL, "preprocess: output size %d outside 1..4096", size);
    /* resize_with_aspectratio(scale=87.5): int(100 * size / 87.5), long side truncated */
    int32_t nh = (int32_t)(100. * size / 87.5), nw = nh;
    int32_t h;
    if (rgb->height > rgb->width) {
        *w = nw;
        h = (int32_t)((double)nh * rgb->height / rgb->width);
    } else {
        h = nh;
        *w = (int32_t)((double)nw * rgb->width / rgb->height);
    }
    int rc = ib_image_resize_area(rgb, *w, h, r, err);
    if (rc)
        return rc;
    /* center_crop: int((W - out) / 2) .. int((W + out) / 2) */
    *left = (int32_t)((*w - size) / 2.0);
    *top = (int32_t)((h - size) / 2.0);
    if (*left < 0 || *top < 0 || *left + size > *w || *top + size > h) {
        ib_image_release(r);
        return ib_err_set(err, IB_EINVAL, "preprocess: %dx%d image too small to crop %d", *w,
                          h, size);
    }
    return IB_OK;
}

/* Write the crop as float32 less the means (f32) or as the pixels (u8), in layout. */
static int preprocess(const ib_image *rgb, int32_t size, enum ib_layout layout, float *f32,
                      uint8_t *u8, ib_err *err)
{
    ib_image r;
    int32_t w = 0, left = 0, top = 0;
    int rc = resize_and_place(rgb, size, &r, &w, &left, &top, err);
    if (rc)
        return rc;
    static const float mean[3] = {IB_IMAGENET_MEAN_R, IB_IMAGENET_MEAN_G, IB_IMAGENET_MEAN_B};
    size_t plane = (size_t)size * (size_t)size;
    for (int32_t y = 0; y < size; y++) {
        const uint8_t *S = r.data + ((size_t)(top + y) * (size_t)w + (size_t)left) * 3;
        for (int32_t x = 0; x < size; x++) {
            for (int c = 0; c < 3; c++) {
                size_t at = layout == IB_LAYOUT_NCHW
                                ? (size_t)c * plane + (size_t)y * (size_t)size + (size_t)x
                                : ((size_t)y * (size_t)size + (size_t)x) * 3 + (size_t)c;
                if (u8)
                    u8[at] = S[3 * x + c];
                else
                    f32[at] = (float)S[3 * x + c] - mean[c];
            }
        }
    }
    ib_image_release(&r);
    return IB_OK;
}

int ib_preprocess_imagenet(const ib_image *rgb, int32_t size, enum ib_layout layout, float *out,
                           ib_err *err)
{
    return preprocess(rgb, size, layout, out, NULL, err);
}

int ib_preprocess_imagenet_u8(const ib_image *rgb, int32_t size, enum ib_layout layout,
                              uint8_t *out, ib_err *err)
{
    return preprocess(rgb, size, layout, NULL, out, err);
}
