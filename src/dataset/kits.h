/*
 * kits.h - the KiTS19 dataset of the v2.0+ 3D U-Net benchmark (benchmarks.md §4.2, §5) and
 * the reference's pre-processing (vision/medical_imaging/3d-unet-kits19/preprocess.py,
 * global_vars.py), plus a synthetic generator.
 *
 * Layout read: DIR/case_XXXXX/{imaging,segmentation}.nii.gz. Case list: DIR/
 * inference_cases.json (a JSON array of names, the reference's meta/ file; sample i =
 * entry i, the reference's file_list order) when present, else every case_* folder in
 * sorted order.
 *
 * Pre-processing, in the reference's order: volumes as nibabel arrays [dim1][dim2][dim3]
 * (C order, so the NIfTI data is transposed: dim3 varies fastest here); spacing =
 * pixdim[1..3]; unless equal to (1.6, 1.2, 1.2) mm, scipy.ndimage.zoom with factor
 * spacing / target, grid_mode=False (output size round(n * f), half to even; sample
 * positions x * (n_in - 1) / (n_out - 1)): order 1 (trilinear) for the image, order 0
 * (nearest, floor(x + 0.5)) for the labels; clip to [-79, 304] and (x - 101) / 76.9 in
 * float32; edge-pad every axis below the 128 ROI to it (half before); then, for sliding
 * windows of stride 64, crop an axis whose length % 64 is below 32 (half before) and pad
 * the rest with -2.2 (labels 0) to a multiple of 64 that is >= 128. The labels go through
 * the same steps and are the ground truth the accuracy script compares with.
 *
 * Thread-safety: open/close on one thread; load may run concurrently.
 */
#ifndef IB_DATASET_KITS_H
#define IB_DATASET_KITS_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

#define IB_KITS_LIST "inference_cases.json"

typedef struct ib_kits ib_kits;

/* Open DIR for windows of roi[3] voxels (128^3 for the benchmark). Reads every case's two
 * headers to know the pre-processed shapes. Errors: a malformed list, a case folder or file
 * missing, image and segmentation of different sizes, a non-positive spacing. */
int ib_kits_open(const char *dir, const int64_t roi[3], ib_kits **out, ib_err *err);
void ib_kits_close(ib_kits *k);
size_t ib_kits_count(const ib_kits *k);
const char *ib_kits_case(const ib_kits *k, size_t i);
/* The pre-processed shape of case i (known from the headers). */
void ib_kits_shape(const ib_kits *k, size_t i, int64_t shape[3]);

/* Pre-process case i: *image (float32) and, when label is not NULL, *label (uint8), both
 * of ib_kits_shape(i); the caller frees them with ib_free. */
int ib_kits_load(const ib_kits *k, size_t i, float **image, uint8_t **label, ib_err *err);

/* ---- the pipeline on arrays, for tests ------------------------------------------------- */

/* The shape scipy.ndimage.zoom gives and the shape after the whole pipeline. */
void ib_kits_zoom_shape(const int64_t in[3], const double spacing[3], int64_t out[3]);
void ib_kits_final_shape(const int64_t in[3], const double spacing[3], const int64_t roi[3],
                         int64_t out[3]);
/* The pipeline on C-order arrays [in0][in1][in2] (label may be NULL). */
int ib_kits_preprocess(const float *img, const uint8_t *lab, const int64_t in[3],
                       const double spacing[3], const int64_t roi[3], float **img_out,
                       uint8_t **lab_out, int64_t out[3], ib_err *err);

/* The reference's Gaussian importance map for an n^3 ROI: cbrt of the outer product of
 * scipy.signal.gaussian(n, 0.125 n), divided by its maximum, as float32. */
void ib_kits_gaussian(int64_t n, float *out);

/*
 * Synthetic KiTS19: n cases "case_%05d" of CT-like volumes (air -1000 HU outside a body
 * ellipse of ~40 HU, two kidneys ~180 HU, a blob tumour ~90 HU inside one kidney; labels
 * 0/1/2) with varying shapes and spacings (slices 2.5-3.5 mm, in-plane 0.7-0.9 mm), imaging
 * int16 and segmentation uint8 .nii.gz; writes DIR/inference_cases.json. tiny: volumes
 * that resample to ~30-40 voxels a side (for a 32^3 ROI).
 */
int ib_kits_synthesize(const char *dir, size_t n, int tiny, uint64_t seed, ib_err *err);

#endif
