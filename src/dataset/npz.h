/*
 * npz.h - read one integer array from a NumPy .npz file (a zip archive of .npy files, as
 * np.savez / np.savez_compressed write them), and write one (stored, uncompressed) for the
 * synthetic generators and tests. Enough of both formats for the DLRM pipeline's
 * `day_fea_dict_<j>.npz` ("unique", int32) and `day_fea_count.npz` ("counts") files
 * (facebookresearch/dlrm data_utils.py getCriteoAdData).
 *
 * Zip: local file headers are walked from the start (no central directory needed); entries
 * stored (method 0) or deflated (method 8, zlib raw inflate); the CRC-32 is checked; zip64
 * and encrypted entries are refused. .npy: format 1.0/2.0/3.0, dict header with 'descr'
 * one of '<i4' '<i8' '<u4' '|i1' '|u1' '<i2' (values are returned as int64), 'fortran_order'
 * False, a 1-D 'shape' (or 0-D). Errors name the file, the entry and the field.
 *
 * Pure functions of their inputs and files; no global state. Thread-safety: reentrant.
 */
#ifndef IB_DATASET_NPZ_H
#define IB_DATASET_NPZ_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

/* Read array `key` (the entry `key`.npy) of the .npz at path; *out (ib_malloc'd, free with
 * ib_free) receives *n values. IB_ENOTFOUND when the file or the entry is missing,
 * IB_EFORMAT for anything malformed, IB_ENOMEM. */
int ib_npz_read_ints(const char *path, const char *key, int64_t **out, size_t *n, ib_err *err);

/* The same from an archive held in memory (`name` is used in messages): the fuzz target. */
int ib_npz_parse_ints(const char *name, const uint8_t *data, size_t size, const char *key,
                      int64_t **out, size_t *n, ib_err *err);

/* Write path as a .npz with one stored entry `key`.npy: a 1-D '<i4' array of n values
 * (each must fit int32: IB_EINVAL otherwise). */
int ib_npz_write_i32(const char *path, const char *key, const int32_t *v, size_t n,
                     ib_err *err);

#endif
