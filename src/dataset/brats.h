/*
 * brats.h - the BraTS 2019 dataset of the v1.1 3D U-Net benchmark (benchmarks.md §1.6, §5)
 * and the reference's nnU-Net pre-processing, plus a synthetic generator.
 *
 * Layout read (the BraTS 2019 training download):
 *   DIR/{HGG,LGG}/<case>/<case>_{t1,t1ce,t2,flair,seg}.nii.gz   (.nii also accepted)
 * Case list: DIR/fold1_validation.txt when present (one nnU-Net name "HGG__<case>" per
 * line), else the reference's folds/fold1_validation.txt (67 cases, built in). Sample i =
 * line i: the list is sorted, and it is the order preprocess.py feeds nnU-Net.
 *
 * Pre-processing (nnU-Net preprocess_patient for Task043 3d_fullres, the reference's
 * preprocess.py): channels t1, t1ce, t2, flair (Task043's _0000.._0003); volumes as
 * SimpleITK arrays [z][y][x] (NIfTI order, x fastest; BraTS is 1 mm isotropic, so no
 * resampling and no transpose); non-zero mask = any channel != 0, holes filled
 * (scipy binary_fill_holes, 6-connectivity); crop to its bounding box; per channel
 * z-score over the mask voxels, (x - mean) / (std + 1e-8), population std, 0 outside the
 * mask; constant-0 padding to the patch (224x224x160) with (p - r) // 2 before. A crop
 * larger than the patch is an error (the reference would make a tensor the model cannot
 * take). Labels: seg remapped 4 -> 3, 2 -> 1, 1 -> 2 (Task043); other values are an error.
 *
 * Thread-safety: open/close on one thread; load/labels may run concurrently.
 */
#ifndef IB_DATASET_BRATS_H
#define IB_DATASET_BRATS_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

#define IB_BRATS_CHANNELS 4
#define IB_BRATS_LIST "fold1_validation.txt"

typedef struct ib_brats ib_brats;

/* Where a case sits in its patch: array shape, crop box [lo, hi), padding before. */
typedef struct ib_brats_geom {
    int64_t shape[3];  /* original array shape (z, y, x) */
    int64_t lo[3], hi[3];
    int64_t pad[3];    /* padding before, per axis, inside the patch */
} ib_brats_geom;

/* Open DIR with patch shape patch[3] (array axes; 224,224,160 for the v1.1 model). Errors:
 * a malformed list line, a case folder or modality file missing (named). */
int ib_brats_open(const char *dir, const int64_t patch[3], ib_brats **out, ib_err *err);
void ib_brats_close(ib_brats *b);
size_t ib_brats_count(const ib_brats *b);
const char *ib_brats_case(const ib_brats *b, size_t i); /* nnU-Net name, "HGG__BraTS19_..." */

/* Pre-process case i into out[4 * p0 * p1 * p2] (float32, NCDHW without N) and *g. */
int ib_brats_load(const ib_brats *b, size_t i, float *out, ib_brats_geom *g, ib_err *err);
/* Geometry only (reads the four modalities, no normalisation). */
int ib_brats_geometry(const ib_brats *b, size_t i, ib_brats_geom *g, ib_err *err);
/* Ground truth of case i in nnU-Net labels (0..3), whole volume, *n voxels; ib_free. */
int ib_brats_labels(const ib_brats *b, size_t i, uint8_t **labels, size_t *n, ib_err *err);

/*
 * The pre-processing on arrays already in memory, for tests: ch channels of
 * shape[0] x shape[1] x shape[2] -> out (patch-sized, per channel), *g.
 */
int ib_brats_preprocess(const float *const *chan, const int64_t shape[3], const int64_t patch[3],
                        float *out, ib_brats_geom *g, const char *name, ib_err *err);
/* binary_fill_holes with 6-connectivity on a [d0][d1][d2] mask, in place. */
int ib_brats_fill_holes(uint8_t *mask, const int64_t shape[3]);

/*
 * Synthetic BraTS: n cases "HGG__BraTS19_SYNTH_<k>_1" (every third an LGG) of
 * nx x ny x nz voxels (1 mm): a noisy ellipsoidal "brain" with an enclosed zero hole (so
 * the hole filling matters) in zero background, per-modality contrast, t1/t2 written as
 * int16 and t1ce/flair as float32 .nii.gz, and a seg with a blob-shaped tumour: necrosis
 * (1) inside enhancing (4) inside edema (2). Writes DIR/fold1_validation.txt.
 */
int ib_brats_synthesize(const char *dir, size_t n, int64_t nx, int64_t ny, int64_t nz,
                        uint64_t seed, ib_err *err);

#endif
