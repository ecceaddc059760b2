/*
 * nifti.h - NIfTI-1 single-file images (.nii, and .nii.gz through zlib): the format of the
 * BraTS 2019 and KiTS19 volumes (benchmarks.md §5). Reads uint8, int8, int16, uint16, int32,
 * float32 and float64 voxels in either byte order, applies scl_slope/scl_inter the way
 * nibabel's get_fdata does (slope 0 or non-finite = no scaling), keeps the orientation
 * metadata (qform/sform codes, quaternion, offsets, srow_*, pixdim with qfac) and returns
 * the voxels as float32 in file order (dim[1] fastest). A writer produces little-endian
 * single-file images for the synthetic generators and tests.
 *
 * Not read: the two-file .hdr/.img pair ("ni1"), NIfTI-2, complex/RGB voxel types, header
 * extensions (skipped, vox_offset decides where data starts).
 *
 * Thread-safety: every call works on its own image; no shared state.
 */
#ifndef IB_DATASET_NIFTI_H
#define IB_DATASET_NIFTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

/* NIfTI-1 datatype codes (nifti1.h) */
#define IB_NIFTI_UINT8 2
#define IB_NIFTI_INT16 4
#define IB_NIFTI_INT32 8
#define IB_NIFTI_FLOAT32 16
#define IB_NIFTI_FLOAT64 64
#define IB_NIFTI_INT8 256
#define IB_NIFTI_UINT16 512

#define IB_NIFTI_HDR_SIZE 348
#define IB_NIFTI_MAX_VOXELS ((size_t)1 << 31) /* refuse larger images (8 GB as float32) */

typedef struct ib_nifti {
    int ndim;          /* dim[0]: 1..7 */
    int64_t dims[7];   /* dim[1..ndim]; unused ones are 1 */
    float pixdim[8];   /* pixdim[0] = qfac, pixdim[1..3] = voxel spacing (mm) */
    int16_t datatype;  /* as stored in the file (IB_NIFTI_*) */
    float scl_slope, scl_inter;
    int16_t qform_code, sform_code;
    float quatern[3];  /* b, c, d */
    float qoffset[3];  /* x, y, z */
    float srow[3][4];  /* srow_x, srow_y, srow_z */
    uint8_t xyzt_units;
    char descrip[81];
    bool big_endian;   /* the file's byte order */
    size_t nvox;       /* product of dims */
    float *data;       /* nvox voxels, scaled, dim[1] fastest (ib_free) */
} ib_nifti;

/* Fill *n with a 3-D image header of nx x ny x nz voxels at spacing sx, sy, sz (mm), no
 * scaling, an sform/qform of diagonal spacing (codes 1), data NULL. */
void ib_nifti_init3d(ib_nifti *n, int64_t nx, int64_t ny, int64_t nz, float sx, float sy,
                     float sz);

/*
 * ib_nifti_parse - parse an uncompressed single-file image held in memory (`name` is the
 * file name used in messages). Errors (IB_EFORMAT, naming the file and field): sizeof_hdr
 * not 348 in either byte order, magic other than "n+1" (a "ni1" pair is IB_EUNSUPPORTED),
 * dim[0] outside 1..7, a dim < 1, too many voxels, an unsupported datatype or a bitpix that
 * does not match it, vox_offset below 352, data past the end of the file (truncated).
 * Ownership: out->data is the caller's (ib_nifti_deinit).
 */
int ib_nifti_parse(const uint8_t *buf, size_t len, const char *name, ib_nifti *out, ib_err *err);

/* ib_nifti_read - read `path` (.nii, or gzip-compressed: detected by its magic bytes, not
 * by the name) and parse it. A truncated or corrupt gzip stream is IB_EFORMAT. */
int ib_nifti_read(const char *path, ib_nifti *out, ib_err *err);

/* ib_nifti_read_header - the header of `path` only (plain or gzip; the first 352 bytes are
 * read and parsed with the checks of ib_nifti_parse except the data size). out->data is
 * NULL. For loaders that need shapes before reading whole volumes. */
int ib_nifti_read_header(const char *path, ib_nifti *out, ib_err *err);

/* Decompress a whole gzip stream into *out (ib_free), at most max_bytes. For tests/fuzz. */
int ib_nifti_gunzip(const uint8_t *in, size_t len, size_t max_bytes, const char *name,
                    uint8_t **out, size_t *out_len, ib_err *err);

/*
 * ib_nifti_write - write n (header fields + n->data) to `path` as a little-endian "n+1"
 * image with voxels stored as `datatype` (uint8, int16, int32, float32 or float64);
 * stored = (value - scl_inter) / scl_slope when scl_slope != 0, rounded to nearest and
 * clamped for integer types. gzip-compressed when the path ends in ".gz".
 */
int ib_nifti_write(const char *path, const ib_nifti *n, int16_t datatype, ib_err *err);

/* Serialise to memory (uncompressed) the same way; *out is the caller's (ib_free). */
int ib_nifti_encode(const ib_nifti *n, int16_t datatype, uint8_t **out, size_t *out_len,
                    ib_err *err);

void ib_nifti_deinit(ib_nifti *n);

#endif
