/*
 * dataset.h - datasets of the MLPerf benchmarks: image decoding and the reference
 * pre-processing, and one loader per dataset in its real on-disk format (with a synthetic
 * generator writing that same format, so tests and quick runs take the real loader path).
 *
 * Images are decoded with libjpeg-turbo the way the reference's OpenCV imread does it
 * (default IDCT and upsampling; grayscale replicated to RGB; CMYK/YCCK converted with
 * OpenCV's formula), so pre-processed tensors match the reference's.
 *
 * Nothing here prints or exits; every error names the file (and line) and what is wrong.
 * Thread-safety: functions are reentrant; a dataset handle may be read from several
 * threads at once (load calls for different samples), but is opened and closed on one.
 */
#ifndef INFERBENCH_DATASET_H
#define INFERBENCH_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "status.h"

IB_EXTERN_C_BEGIN

/* ---- images (jpeg.c) --------------------------------------------------------------------- */

/* An 8-bit image, rows top to bottom, channels interleaved (RGB for 3, CMYK for 4). */
typedef struct ib_image {
    int32_t width, height, channels;
    uint8_t *data; /* width * height * channels bytes, owned (ib_image_release) */
} ib_image;

/* Largest image the decoder accepts (width * height); larger files fail with IB_EFORMAT
 * instead of allocating gigabytes for a crafted header. */
#define IB_IMAGE_MAX_PIXELS ((int64_t)1 << 27)

/*
 * ib_image_decode_jpeg_file / _memory - decode a JPEG to 3-channel RGB.
 *   origin  the name used in messages (the path for _file)
 * Grayscale is replicated to RGB (libjpeg's conversion, as OpenCV's IMREAD_COLOR); CMYK and
 * YCCK are converted with OpenCV's icvCvt_CMYK2BGR formula (R = K - ((255 - C) * K >> 8)).
 * EXIF orientation is ignored. A truncated file ("premature end of data") is an error, not a
 * partly grey image; other libjpeg warnings are tolerated.
 * Returns IB_OK; IB_ENOTFOUND/IB_EIO for the file; IB_EFORMAT for a file that is not a JPEG
 * or is corrupt (message: "<origin>: not a JPEG file: starts with 0x89 0x50" etc.);
 * IB_ENOMEM. On failure *out is zeroed.
 */
IB_API int ib_image_decode_jpeg_file(const char *path, ib_image *out, ib_err *err);
IB_API int ib_image_decode_jpeg_memory(const void *data, size_t len, const char *origin,
                                       ib_image *out, ib_err *err);

/* Encode an image with 1 (grayscale), 3 (RGB) or 4 (CMYK, Adobe marker) channels at quality
 * 1..100 to a file (written atomically). */
IB_API int ib_image_encode_jpeg_file(const char *path, const ib_image *img, int quality,
                                     ib_err *err);

/* Allocate a zeroed image (IB_EINVAL for sizes <= 0 or over IB_IMAGE_MAX_PIXELS). */
IB_API int ib_image_alloc(ib_image *img, int32_t width, int32_t height, int32_t channels);
/* Free the pixels and zero the struct (NULL allowed). */
IB_API void ib_image_release(ib_image *img);

/* ---- pre-processing (preprocess.c) ---------------------------------------------------------- */

/*
 * ib_image_resize_area - resize like OpenCV's cv::resize(..., INTER_AREA) on 8-bit images:
 * when shrinking on both axes, pixel-area averaging (exact integer-ratio fast path, else
 * fractional-area weights in float, rounded to nearest even); when enlarging on any axis,
 * OpenCV's INTER_AREA bilinear coefficients in 11-bit fixed point. dst is allocated.
 */
IB_API int ib_image_resize_area(const ib_image *src, int32_t width, int32_t height, ib_image *dst,
                                ib_err *err);

/* Layout of a pre-processed float tensor. */
enum ib_layout {
    IB_LAYOUT_NCHW = 0, /* planes: [3][h][w] (ONNX) */
    IB_LAYOUT_NHWC = 1, /* interleaved: [h][w][3] (TF) */
};

/*
 * ib_preprocess_imagenet - the ResNet50 reference pre-processing (pre_process_vgg):
 * aspect-preserving resize so the short side becomes out/0.875 (256 for 224; the long side
 * int(256 * long / short)) with INTER_AREA, centre crop out x out at int((w - out) / 2),
 * float32, subtract the means 123.68, 116.78, 103.94 (R, G, B), no scaling. `out` receives
 * 3 * size * size floats in `layout`. rgb must have 3 channels.
 */
IB_API int ib_preprocess_imagenet(const ib_image *rgb, int32_t size, enum ib_layout layout,
                                  float *out, ib_err *err);
/* The reference's per-channel means (R, G, B), subtracted by ib_preprocess_imagenet. */
#define IB_IMAGENET_MEAN_R 123.68f
#define IB_IMAGENET_MEAN_G 116.78f
#define IB_IMAGENET_MEAN_B 103.94f
/* The same pipeline stopped before the float conversion: the resized, cropped pixels as the
 * reference holds them (uint8), 3 * size * size bytes in `layout`. (float)out[k] - mean[c]
 * is exactly ib_preprocess_imagenet's value: a model taking these bytes (resnet50
 * --variant u8-input) subtracts the means itself, and a batch moves a quarter of the bytes. */
IB_API int ib_preprocess_imagenet_u8(const ib_image *rgb, int32_t size, enum ib_layout layout,
                                     uint8_t *out, ib_err *err);

/* ---- ImageNet 2012 validation (imagenet.c, synth_imagenet.c) ----------------------------- */

typedef struct ib_imagenet ib_imagenet;

/*
 * ib_imagenet_open - a folder of JPEGs plus a label file ("<file> <label>" per line, labels
 * 0..999, as the reference's val_map.txt). val_map NULL means "<dir>/val_map.txt". Sample
 * i (the qsl_idx) is line i of the file, blank lines skipped as the reference's loader does
 * not produce them (a blank line is an error naming it). Every listed file must exist (the
 * reference skips missing files; inferbench refuses, since skipping renumbers qsl_idx).
 * Errors: "<val_map>:<line>: ..." for a bad line (missing label, label out of 0..999, extra
 * fields, path outside the folder), "<dir>/<file>: missing (listed at <val_map>:<line>)".
 */
IB_API int ib_imagenet_open(const char *dir, const char *val_map, ib_imagenet **out, ib_err *err);
IB_API void ib_imagenet_close(ib_imagenet *d);
IB_API size_t ib_imagenet_count(const ib_imagenet *d);
/* File name as listed (borrowed) and label of sample i (i < count). */
IB_API const char *ib_imagenet_file(const ib_imagenet *d, size_t i);
IB_API int32_t ib_imagenet_label(const ib_imagenet *d, size_t i);
/* Decode and pre-process sample i (ib_preprocess_imagenet at `size`) into out. */
IB_API int ib_imagenet_load(const ib_imagenet *d, size_t i, int32_t size, enum ib_layout layout,
                            float *out, ib_err *err);
/* The same with ib_preprocess_imagenet_u8: the pixels before the float conversion. */
IB_API int ib_imagenet_load_u8(const ib_imagenet *d, size_t i, int32_t size,
                               enum ib_layout layout, uint8_t *out, ib_err *err);

/*
 * ib_imagenet_synthesize - write `count` JPEGs "ILSVRC2012_val_%08u.JPEG" (1-based) of varied
 * sizes and aspect ratios (smaller and larger than 256, portrait and landscape), every
 * seventh one grayscale, with smooth random content, plus val_map.txt with random labels in
 * 0..999, into dir (created). Same seed, same files.
 */
IB_API int ib_imagenet_synthesize(const char *dir, size_t count, uint64_t seed, ib_err *err);

IB_EXTERN_C_END

#endif
