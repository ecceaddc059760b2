/*
 * jpeg.c - JPEG decode and encode through libjpeg-turbo (Debian libjpeg62-turbo), shaped like
 * the reference's cv2.imread(path) / IMREAD_COLOR: default DCT and fancy upsampling, output
 * always RGB; grayscale replicated by libjpeg; 4-component (CMYK/YCCK) files decoded to CMYK
 * and converted with OpenCV's icvCvt_CMYK2BGR_8u_C4C3R formula. libjpeg reports fatal
 * errors through error_exit, which here longjmps back to the caller of one decode (the only
 * recovery libjpeg offers); the jmp_buf lives on that call's stack, so decodes on different
 * threads never share state. Warnings are collected: "premature end of data" fails the
 * decode (a truncated file must not become a partly grey image), others are tolerated.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "base/common.h"
#include "base/fileio.h"
#include "inferbench/dataset.h"

typedef struct jerr_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
    int eof_warning; /* JWRN_JPEG_EOF seen */
} jerr_mgr;

static void on_error_exit(j_common_ptr cinfo)
{
    jerr_mgr *e = (jerr_mgr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

static void on_emit_message(j_common_ptr cinfo, int level)
{
    jerr_mgr *e = (jerr_mgr *)cinfo->err;
    if (level < 0) { /* a warning: keep the first one */
        if (cinfo->err->msg_code == JWRN_JPEG_EOF && !e->eof_warning) {
            e->eof_warning = 1;
            (*cinfo->err->format_message)(cinfo, e->msg);
        }
        cinfo->err->num_warnings++;
    }
}

static void on_output_message(j_common_ptr cinfo)
{
    (void)cinfo; /* libraries do not print */
}

int ib_image_alloc(ib_image *img, int32_t width, int32_t height, int32_t channels)
{
    memset(img, 0, sizeof *img);
    if (width <= 0 || height <= 0 || channels <= 0 || channels > 4 ||
        (int64_t)width * height > IB_IMAGE_MAX_PIXELS)
        return IB_EINVAL;
    img->data = ib_calloc((size_t)width * (size_t)height, (size_t)channels);
    if (!img->data)
        return IB_ENOMEM;
    img->width = width;
    img->height = height;
    img->channels = channels;
    return IB_OK;
}

void ib_image_release(ib_image *img)
{
    if (!img)
        return;
    ib_free(img->data);
    memset(img, 0, sizeof *img);
}

/* OpenCV's CMYK -> BGR (grfmt_jpeg.cpp / utils.cpp), written here as CMYK -> RGB. */
static void cmyk_to_rgb(const uint8_t *cmyk, uint8_t *rgb, size_t n)
{
    for (size_t i = 0; i < n; i++, cmyk += 4, rgb += 3) {
        int c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
        rgb[0] = (uint8_t)(k - ((255 - c) * k >> 8));
        rgb[1] = (uint8_t)(k - ((255 - m) * k >> 8));
        rgb[2] = (uint8_t)(k - ((255 - y) * k >> 8));
    }
}

typedef struct dec_state {
    struct jpeg_decompress_struct cinfo;
    jerr_mgr jerr;
    ib_image img;
    uint8_t *row; /* one CMYK row */
    const char *origin;
    const void *data;
    size_t len;
} dec_state;

/* The setjmp frame: every value it needs after a longjmp lives in *st. */
static int decode(dec_state *st, ib_err *err)
{
    int rc = IB_OK;
    st->cinfo.err = jpeg_std_error(&st->jerr.pub);
    st->jerr.pub.error_exit = on_error_exit;
    st->jerr.pub.emit_message = on_emit_message;
    st->jerr.pub.output_message = on_output_message;
    if (setjmp(st->jerr.jump))
        return ib_err_set(err, IB_EFORMAT, "%s: %s", st->origin, st->jerr.msg);
    jpeg_create_decompress(&st->cinfo);
    j_decompress_ptr ci = &st->cinfo;
    jpeg_mem_src(ci, (const unsigned char *)st->data, (unsigned long)st->len);
    jpeg_read_header(ci, TRUE);
    int64_t pixels = (int64_t)ci->image_width * (int64_t)ci->image_height;
    if (ci->image_width == 0 || ci->image_height == 0 || pixels > IB_IMAGE_MAX_PIXELS)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: image of %ux%u pixels is outside the accepted 1..%lld pixels",
                          st->origin, ci->image_width, ci->image_height,
                          (long long)IB_IMAGE_MAX_PIXELS);
    bool cmyk = ci->num_components == 4;
    ci->out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(ci);
    if ((int)ci->output_components != (cmyk ? 4 : 3))
        return ib_err_set(err, IB_EFORMAT, "%s: libjpeg produced %d components (expected %d)",
                          st->origin, ci->output_components, cmyk ? 4 : 3);
    rc = ib_image_alloc(&st->img, (int32_t)ci->output_width, (int32_t)ci->output_height, 3);
    if (rc)
        return ib_err_set(err, rc, "%s: cannot allocate %ux%u pixels", st->origin,
                          ci->output_width, ci->output_height);
    if (cmyk && !(st->row = ib_malloc((size_t)ci->output_width * 4)))
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", st->origin);
    size_t stride = (size_t)ci->output_width * 3;
    while (ci->output_scanline < ci->output_height) {
        uint8_t *dst = st->img.data + (size_t)ci->output_scanline * stride;
        JSAMPROW row = cmyk ? st->row : dst;
        if (jpeg_read_scanlines(ci, &row, 1) != 1)
            break;
        if (cmyk)
            cmyk_to_rgb(st->row, dst, ci->output_width);
        if (st->jerr.eof_warning)
            break;
    }
    if (st->jerr.eof_warning || ci->output_scanline < ci->output_height)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: truncated or corrupt JPEG data (%s at row %u of %u)", st->origin,
                          st->jerr.msg[0] ? st->jerr.msg : "no more scanlines",
                          ci->output_scanline, ci->output_height);
    jpeg_finish_decompress(ci);
    return IB_OK;
}

int ib_image_decode_jpeg_memory(const void *data, size_t len, const char *origin, ib_image *out,
                                ib_err *err)
{
    memset(out, 0, sizeof *out);
    if (!origin)
        origin = "(memory)";
    if (!data || len < 4)
        return ib_err_set(err, IB_EFORMAT, "%s: not a JPEG file (%zu bytes)", origin, len);
    if (len > (size_t)0x7fffffff)
        return ib_err_set(err, IB_EFORMAT, "%s: file too large for libjpeg (%zu bytes)", origin,
                          len);
    dec_state *st = ib_calloc(1, sizeof *st);
    if (!st)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
    st->origin = origin;
    st->data = data;
    st->len = len;
    int rc = decode(st, err);
    jpeg_destroy_decompress(&st->cinfo);
    ib_free(st->row);
    if (rc == IB_OK)
        *out = st->img;
    else
        ib_image_release(&st->img);
    ib_free(st);
    return rc;
}

int ib_image_decode_jpeg_file(const char *path, ib_image *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    char *bytes = NULL;
    size_t len = 0;
    /* 256 MiB is far beyond any real photograph and bounds what a bad path can cost */
    int rc = ib_file_read_all(path, (size_t)256 << 20, &bytes, &len, err);
    if (rc)
        return rc;
    rc = ib_image_decode_jpeg_memory(bytes, len, path, out, err);
    ib_free(bytes);
    return rc;
}

/* ---- encoding -------------------------------------------------------------------------------- */

typedef struct enc_state {
    struct jpeg_compress_struct cinfo;
    jerr_mgr jerr;
    unsigned char *buf;
    unsigned long size;
} enc_state;

int ib_image_encode_jpeg_file(const char *path, const ib_image *img, int quality, ib_err *err)
{
    if (!img || !img->data || img->width <= 0 || img->height <= 0 ||
        (img->channels != 1 && img->channels != 3 && img->channels != 4) || quality < 1 ||
        quality > 100)
        return ib_err_set(err, IB_EINVAL, "%s: cannot encode: need 1, 3 or 4 channels, a "
                                          "non-empty image and quality 1..100",
                          path);
    enc_state *st = ib_calloc(1, sizeof *st);
    if (!st)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", path);
    int rc = IB_OK;
    st->cinfo.err = jpeg_std_error(&st->jerr.pub);
    st->jerr.pub.error_exit = on_error_exit;
    st->jerr.pub.emit_message = on_emit_message;
    st->jerr.pub.output_message = on_output_message;
    if (setjmp(st->jerr.jump)) {
        rc = ib_err_set(err, IB_EINVAL, "%s: libjpeg: %s", path, st->jerr.msg);
        goto done;
    }
    jpeg_create_compress(&st->cinfo);
    jpeg_mem_dest(&st->cinfo, &st->buf, &st->size);
    st->cinfo.image_width = (JDIMENSION)img->width;
    st->cinfo.image_height = (JDIMENSION)img->height;
    st->cinfo.input_components = img->channels;
    st->cinfo.in_color_space = img->channels == 1 ? JCS_GRAYSCALE
                               : img->channels == 3 ? JCS_RGB
                                                    : JCS_CMYK;
    jpeg_set_defaults(&st->cinfo); /* CMYK input: CMYK file with an Adobe marker */
    jpeg_set_quality(&st->cinfo, quality, TRUE);
    jpeg_start_compress(&st->cinfo, TRUE);
    size_t stride = (size_t)img->width * (size_t)img->channels;
    while (st->cinfo.next_scanline < st->cinfo.image_height) {
        JSAMPROW row = img->data + (size_t)st->cinfo.next_scanline * stride;
        jpeg_write_scanlines(&st->cinfo, &row, 1);
    }
    jpeg_finish_compress(&st->cinfo);
    rc = ib_file_write_all(path, st->buf, (size_t)st->size, err);
done:
    jpeg_destroy_compress(&st->cinfo);
    free(st->buf); /* jpeg_mem_dest allocates with malloc */
    ib_free(st);
    return rc;
}
