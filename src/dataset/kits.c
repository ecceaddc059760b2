/*
 * kits.c - KiTS19 loader and the v2.0+ reference pre-processing (see kits.h for the steps
 * and their source, preprocess.py Preprocessor.preprocess_case). Resampling follows
 * scipy.ndimage.zoom(grid_mode=False, mode='constant'): output size round(n * factor) (half
 * to even, as Python's round), input position x * ((n_in - 1) / (n_out - 1)) in double, as
 * NI_ZoomShift computes it. A position past the last voxel, even by a rounding error (the
 * last output position of some sizes lands 1 ulp beyond n_in - 1), is outside the input:
 * constant mode returns cval there, which preprocess.py sets to image.min() for the image
 * and label.min() for the label (0 wherever background is present). Interpolation runs in
 * double and stores float32, as scipy does for a float32 input.
 */
#include "dataset/kits.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "dataset/nifti.h"
#include "inferbench/base.h"

/* global_vars.py */
#define KITS_MEAN 101.0f
#define KITS_STD 76.9f
#define KITS_MIN (-79.0f)
#define KITS_MAX 304.0f
#define KITS_PAD (-2.2f)
static const double kits_target[3] = {1.6, 1.2, 1.2};

#define NAME_MAX_ 64

struct ib_kits {
    char dir[1024];
    int64_t roi[3];
    size_t n;
    char (*names)[NAME_MAX_];
    int64_t (*shape)[3]; /* pre-processed */
};

/* ---- shapes ---------------------------------------------------------------------------------- */

void ib_kits_zoom_shape(const int64_t in[3], const double sp[3], int64_t out[3])
{
    for (int a = 0; a < 3; a++)
        out[a] = (int64_t)nearbyint((double)in[a] * (sp[a] / kits_target[a])); /* round() */
}

static bool same_spacing(const double sp[3])
{
    /* image_spacings != self.target_spacing compares the float32 pixdims as doubles */
    return sp[0] == kits_target[0] && sp[1] == kits_target[1] && sp[2] == kits_target[2];
}

/* adjust_shape_for_sliding_window: crop of each axis (before, after) */
static void adjust_crop(const int64_t s[3], const int64_t roi[3], int64_t lo[3], int64_t hi[3])
{
    for (int a = 0; a < 3; a++) {
        int64_t stride = roi[a] / 2, b = s[a] % stride;
        b = b < stride / 2 ? b : 0;
        lo[a] = b / 2;
        hi[a] = s[a] - (b - b / 2);
    }
}

/* constant_pad_volume: padding before and after each axis */
static void adjust_pad(const int64_t s[3], const int64_t roi[3], int64_t before[3], int64_t after[3])
{
    for (int a = 0; a < 3; a++) {
        int64_t stride = roi[a] / 2, b = (stride - s[a] % stride) % stride;
        if (s[a] + b < roi[a])
            b += stride;
        before[a] = b / 2;
        after[a] = b - b / 2;
    }
}

void ib_kits_final_shape(const int64_t in[3], const double sp[3], const int64_t roi[3],
                         int64_t out[3])
{
    int64_t s[3], lo[3], hi[3], pb[3], pa[3];
    if (same_spacing(sp))
        memcpy(s, in, sizeof s);
    else
        ib_kits_zoom_shape(in, sp, s);
    for (int a = 0; a < 3; a++)
        s[a] = s[a] < roi[a] ? roi[a] : s[a]; /* pad_to_min_shape */
    adjust_crop(s, roi, lo, hi);
    for (int a = 0; a < 3; a++)
        s[a] = hi[a] - lo[a];
    adjust_pad(s, roi, pb, pa);
    for (int a = 0; a < 3; a++)
        out[a] = s[a] + pb[a] + pa[a];
}

/* ---- resampling -------------------------------------------------------------------------------- */

/* The input position of output index x (zoom's grid_mode=False mapping). */
static double pos(int64_t x, int64_t nin, int64_t nout)
{
    if (nout <= 1)
        return (double)x; /* zoom_div == 0: factor 1 */
    return (double)x * ((double)(nin - 1) / (double)(nout - 1));
}

/* Constant mode: a position outside [0, n - 1] reads cval, however close it is. */
static bool outside(double p, int64_t nin)
{
    return p < 0 || p > (double)(nin - 1);
}

static void zoom_linear(const float *in, const int64_t s[3], float *out, const int64_t o[3],
                        float cval)
{
    for (int64_t i = 0; i < o[0]; i++) {
        double pi = pos(i, s[0], o[0]);
        bool oi = outside(pi, s[0]);
        int64_t i0 = oi ? 0 : (int64_t)floor(pi), i1 = i0 + 1 < s[0] ? i0 + 1 : i0;
        double wi = pi - (double)i0;
        for (int64_t j = 0; j < o[1]; j++) {
            double pj = pos(j, s[1], o[1]);
            bool oj = oi || outside(pj, s[1]);
            int64_t j0 = oj ? 0 : (int64_t)floor(pj), j1 = j0 + 1 < s[1] ? j0 + 1 : j0;
            double wj = pj - (double)j0;
            for (int64_t k = 0; k < o[2]; k++) {
                double pk = pos(k, s[2], o[2]);
                if (oj || outside(pk, s[2])) {
                    out[(i * o[1] + j) * o[2] + k] = cval;
                    continue;
                }
                int64_t k0 = (int64_t)floor(pk), k1 = k0 + 1 < s[2] ? k0 + 1 : k0;
                double wk = pk - (double)k0;
#define AT(a, b, c) (double)in[((a)*s[1] + (b)) * s[2] + (c)]
                double v00 = AT(i0, j0, k0) * (1 - wk) + AT(i0, j0, k1) * wk;
                double v01 = AT(i0, j1, k0) * (1 - wk) + AT(i0, j1, k1) * wk;
                double v10 = AT(i1, j0, k0) * (1 - wk) + AT(i1, j0, k1) * wk;
                double v11 = AT(i1, j1, k0) * (1 - wk) + AT(i1, j1, k1) * wk;
#undef AT
                double v0 = v00 * (1 - wj) + v01 * wj, v1 = v10 * (1 - wj) + v11 * wj;
                out[(i * o[1] + j) * o[2] + k] = (float)(v0 * (1 - wi) + v1 * wi);
            }
        }
    }
}

/* Order 0: floor(p + 0.5) of a position inside the input, -1 outside (constant mode). */
static int64_t nearest(int64_t x, int64_t nin, int64_t nout)
{
    double p = pos(x, nin, nout);
    return outside(p, nin) ? -1 : (int64_t)floor(p + 0.5);
}

static void zoom_nearest(const uint8_t *in, const int64_t s[3], uint8_t *out, const int64_t o[3],
                         uint8_t cval)
{
    for (int64_t i = 0; i < o[0]; i++) {
        int64_t a = nearest(i, s[0], o[0]);
        for (int64_t j = 0; j < o[1]; j++) {
            int64_t b = nearest(j, s[1], o[1]);
            for (int64_t k = 0; k < o[2]; k++) {
                int64_t c = nearest(k, s[2], o[2]);
                out[(i * o[1] + j) * o[2] + k] =
                    a < 0 || b < 0 || c < 0 ? cval : in[(a * s[1] + b) * s[2] + c];
            }
        }
    }
}

/* ---- the pipeline ---------------------------------------------------------------------------- */

int ib_kits_preprocess(const float *img, const uint8_t *lab, const int64_t in[3],
                       const double sp[3], const int64_t roi[3], float **img_out,
                       uint8_t **lab_out, int64_t out[3], ib_err *err)
{
    *img_out = NULL;
    if (lab_out)
        *lab_out = NULL;
    int64_t z[3];
    bool resample = !same_spacing(sp);
    if (resample)
        ib_kits_zoom_shape(in, sp, z);
    else
        memcpy(z, in, sizeof z);
    for (int a = 0; a < 3; a++)
        if (z[a] < 1)
            return ib_err_set(err, IB_EFORMAT, "kits: resampling axis %d to %lld voxels", a,
                              (long long)z[a]);
    size_t nz = (size_t)(z[0] * z[1] * z[2]);
    float *ri = ib_malloc(nz * sizeof *ri);
    uint8_t *rl = lab ? ib_malloc(nz) : NULL;
    float *fo = NULL;
    uint8_t *lo_ = NULL;
    int rc = IB_OK;
    if (!ri || (lab && !rl)) {
        rc = ib_err_set(err, IB_ENOMEM, "kits: out of memory");
        goto done;
    }
    if (resample) {
        /* cval = image.min() and label.min() of the volumes being zoomed */
        size_t nin = (size_t)(in[0] * in[1] * in[2]);
        float imin = img[0];
        uint8_t lmin = lab ? lab[0] : 0;
        for (size_t i = 1; i < nin; i++) {
            imin = img[i] < imin ? img[i] : imin;
            if (lab)
                lmin = lab[i] < lmin ? lab[i] : lmin;
        }
        zoom_linear(img, in, ri, z, imin);
        if (lab)
            zoom_nearest(lab, in, rl, z, lmin);
    } else {
        memcpy(ri, img, nz * sizeof *ri);
        if (lab)
            memcpy(rl, lab, nz);
    }
    /* normalize_intensity: np.clip then (image - mean) / std, in float32 */
    for (size_t i = 0; i < nz; i++) {
        float v = ri[i] < KITS_MIN ? KITS_MIN : ri[i] > KITS_MAX ? KITS_MAX : ri[i];
        ri[i] = (v - KITS_MEAN) / KITS_STD;
    }
    /* pad_to_min_shape (edge), then the sliding-window crop, then the constant pad: one
     * index map per axis from the final volume back into the resampled one */
    int64_t m[3], mb[3], clo[3], chi[3], c[3], pb[3], pa[3];
    for (int a = 0; a < 3; a++) {
        int64_t b = roi[a] - z[a] > 0 ? roi[a] - z[a] : 0;
        mb[a] = b / 2;
        m[a] = z[a] + b;
    }
    adjust_crop(m, roi, clo, chi);
    for (int a = 0; a < 3; a++)
        c[a] = chi[a] - clo[a];
    adjust_pad(c, roi, pb, pa);
    for (int a = 0; a < 3; a++)
        out[a] = c[a] + pb[a] + pa[a];
    size_t no = (size_t)(out[0] * out[1] * out[2]);
    fo = ib_malloc(no * sizeof *fo);
    lo_ = lab ? ib_malloc(no) : NULL;
    if (!fo || (lab && !lo_)) {
        rc = ib_err_set(err, IB_ENOMEM, "kits: out of memory");
        goto done;
    }
    int64_t *map[3] = {NULL, NULL, NULL};
    for (int a = 0; a < 3 && !rc; a++) {
        map[a] = ib_malloc((size_t)out[a] * sizeof(int64_t));
        if (!map[a]) {
            rc = ib_err_set(err, IB_ENOMEM, "kits: out of memory");
            break;
        }
        for (int64_t x = 0; x < out[a]; x++) {
            int64_t cx = x - pb[a]; /* in the cropped volume */
            if (cx < 0 || cx >= c[a]) {
                map[a][x] = -1; /* constant padding */
                continue;
            }
            int64_t mx = cx + clo[a] - mb[a]; /* in the resampled volume, edge-clamped */
            map[a][x] = mx < 0 ? 0 : mx >= z[a] ? z[a] - 1 : mx;
        }
    }
    if (!rc)
        for (int64_t i = 0; i < out[0]; i++)
            for (int64_t j = 0; j < out[1]; j++)
                for (int64_t k = 0; k < out[2]; k++) {
                    size_t o = (size_t)((i * out[1] + j) * out[2] + k);
                    int64_t a = map[0][i], b = map[1][j], d = map[2][k];
                    bool pad = a < 0 || b < 0 || d < 0;
                    size_t s = pad ? 0 : (size_t)((a * z[1] + b) * z[2] + d);
                    fo[o] = pad ? KITS_PAD : ri[s];
                    if (lab)
                        lo_[o] = pad ? 0 : rl[s];
                }
    for (int a = 0; a < 3; a++)
        ib_free(map[a]);
    if (!rc) {
        *img_out = fo;
        fo = NULL;
        if (lab_out) {
            *lab_out = lo_;
            lo_ = NULL;
        }
    }
done:
    ib_free(ri);
    ib_free(rl);
    ib_free(fo);
    ib_free(lo_);
    return rc;
}

void ib_kits_gaussian(int64_t n, float *out)
{
    /* scipy.signal.gaussian(n, std): exp(-0.5 ((k - (n - 1) / 2) / std)^2) */
    double std = 0.125 * (double)n, g[1024], mx = 0;
    int64_t m = n < 1024 ? n : 1024;
    for (int64_t k = 0; k < m; k++) {
        double t = ((double)k - (double)(n - 1) / 2.0) / std;
        g[k] = exp(-0.5 * t * t);
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++)
            for (int64_t k = 0; k < m; k++) {
                double v = cbrt(g[i] * g[j] * g[k]);
                mx = v > mx ? v : mx;
            }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++)
            for (int64_t k = 0; k < m; k++)
                out[(i * m + j) * m + k] = (float)(cbrt(g[i] * g[j] * g[k]) / mx);
}

/* ---- the dataset ----------------------------------------------------------------------------- */

static int add_case(ib_kits *k, const char *name, size_t *cap, const char *src, ib_err *err)
{
    size_t len = strlen(name);
    if (len == 0 || len >= NAME_MAX_ || strchr(name, '/'))
        return ib_err_set(err, IB_EFORMAT, "%s: bad case name '%s'", src, name);
    if (k->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        void *p = ib_realloc(k->names, nc * sizeof *k->names);
        if (!p)
            return ib_err_set(err, IB_ENOMEM, "kits: out of memory");
        k->names = p;
        *cap = nc;
    }
    memcpy(k->names[k->n++], name, len + 1);
    return IB_OK;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

static int read_list(ib_kits *k, ib_err *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", k->dir, IB_KITS_LIST);
    size_t cap = 0;
    if (ib_path_exists(path)) {
        json_error_t je;
        json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!root)
            return ib_err_set(err, IB_EFORMAT, "%s:%d: %s", path, je.line, je.text);
        int rc = IB_OK;
        if (!json_is_array(root) || json_array_size(root) == 0)
            rc = ib_err_set(err, IB_EFORMAT, "%s: expected a non-empty JSON array of case names",
                            path);
        for (size_t i = 0; !rc && i < json_array_size(root); i++) {
            const char *s = json_string_value(json_array_get(root, i));
            if (!s)
                rc = ib_err_set(err, IB_EFORMAT, "%s: element %zu is not a string", path, i);
            else
                rc = add_case(k, s, &cap, path, err);
        }
        json_decref(root);
        return rc;
    }
    DIR *d = opendir(k->dir);
    if (!d)
        return ib_err_set(err, IB_ENOTFOUND, "%s: cannot open the KiTS19 folder", k->dir);
    int rc = IB_OK;
    struct dirent *de;
    while (!rc && (de = readdir(d)))
        if (!strncmp(de->d_name, "case_", 5))
            rc = add_case(k, de->d_name, &cap, k->dir, err);
    closedir(d);
    if (!rc && k->n == 0)
        rc = ib_err_set(err, IB_ENOTFOUND, "%s: no %s and no case_* folders", k->dir, IB_KITS_LIST);
    if (!rc)
        qsort(k->names, k->n, sizeof *k->names, cmp_name);
    return rc;
}

static void case_path(const ib_kits *k, size_t i, const char *what, char *out, size_t n)
{
    snprintf(out, n, "%s/%s/%s.nii.gz", k->dir, k->names[i], what);
    if (!ib_path_exists(out))
        out[strlen(out) - 3] = 0;
}

/* nibabel shape (dim1, dim2, dim3) and pixdim[1..3] */
static int header_geom(const ib_nifti *h, const char *path, int64_t s[3], double sp[3], ib_err *err)
{
    if (h->ndim != 3 && !(h->ndim == 4 && h->dims[3] == 1))
        return ib_err_set(err, IB_EFORMAT, "%s: %d-D image, expected 3-D", path, h->ndim);
    for (int a = 0; a < 3; a++) {
        s[a] = h->dims[a];
        sp[a] = (double)h->pixdim[a + 1];
        if (!(sp[a] > 0) || !isfinite(sp[a]))
            return ib_err_set(err, IB_EFORMAT, "%s: pixdim[%d] = %g is not a positive spacing",
                              path, a + 1, sp[a]);
    }
    return IB_OK;
}

int ib_kits_open(const char *dir, const int64_t roi[3], ib_kits **out, ib_err *err)
{
    *out = NULL;
    ib_kits *k = ib_calloc(1, sizeof *k);
    if (!k)
        return ib_err_set(err, IB_ENOMEM, "kits: out of memory");
    snprintf(k->dir, sizeof k->dir, "%s", dir);
    memcpy(k->roi, roi, sizeof k->roi);
    int rc = read_list(k, err);
    if (!rc && !(k->shape = ib_calloc(k->n, sizeof *k->shape)))
        rc = ib_err_set(err, IB_ENOMEM, "kits: out of memory");
    for (size_t i = 0; !rc && i < k->n; i++) {
        char pi[1200], pl[1200];
        case_path(k, i, "imaging", pi, sizeof pi);
        case_path(k, i, "segmentation", pl, sizeof pl);
        ib_nifti hi, hl;
        int64_t si[3], sl[3];
        double spi[3], spl[3];
        if ((rc = ib_nifti_read_header(pi, &hi, err)) || (rc = header_geom(&hi, pi, si, spi, err)))
            break;
        if ((rc = ib_nifti_read_header(pl, &hl, err)) || (rc = header_geom(&hl, pl, sl, spl, err)))
            break;
        if (memcmp(si, sl, sizeof si)) {
            rc = ib_err_set(err, IB_EFORMAT, "%s: %lldx%lldx%lld voxels, the imaging has %lldx%lldx%lld",
                            pl, (long long)sl[0], (long long)sl[1], (long long)sl[2],
                            (long long)si[0], (long long)si[1], (long long)si[2]);
            break;
        }
        ib_kits_final_shape(si, spi, roi, k->shape[i]);
    }
    if (rc) {
        ib_kits_close(k);
        return rc;
    }
    *out = k;
    return IB_OK;
}

void ib_kits_close(ib_kits *k)
{
    if (!k)
        return;
    ib_free(k->names);
    ib_free(k->shape);
    ib_free(k);
}

size_t ib_kits_count(const ib_kits *k)
{
    return k->n;
}

const char *ib_kits_case(const ib_kits *k, size_t i)
{
    return i < k->n ? k->names[i] : NULL;
}

void ib_kits_shape(const ib_kits *k, size_t i, int64_t shape[3])
{
    memcpy(shape, k->shape[i], 3 * sizeof *shape);
}

/* NIfTI order (dim1 fastest) -> C order [dim1][dim2][dim3] */
static void to_c_order(const float *src, const int64_t s[3], float *f, uint8_t *u)
{
    for (int64_t i = 0; i < s[0]; i++)
        for (int64_t j = 0; j < s[1]; j++)
            for (int64_t k = 0; k < s[2]; k++) {
                float v = src[(k * s[1] + j) * s[0] + i];
                size_t o = (size_t)((i * s[1] + j) * s[2] + k);
                if (f)
                    f[o] = v;
                else
                    u[o] = (uint8_t)v; /* get_fdata().astype(np.uint8) */
            }
}

int ib_kits_load(const ib_kits *k, size_t i, float **image, uint8_t **label, ib_err *err)
{
    *image = NULL;
    if (label)
        *label = NULL;
    if (i >= k->n)
        return ib_err_set(err, IB_EINVAL, "kits: sample %zu of %zu", i, k->n);
    char pi[1200], pl[1200];
    case_path(k, i, "imaging", pi, sizeof pi);
    case_path(k, i, "segmentation", pl, sizeof pl);
    ib_nifti ni, nl;
    memset(&nl, 0, sizeof nl);
    int64_t s[3];
    double sp[3];
    int rc = ib_nifti_read(pi, &ni, err);
    if (rc)
        return rc;
    float *img = NULL;
    uint8_t *lab = NULL;
    if ((rc = header_geom(&ni, pi, s, sp, err)))
        goto done;
    size_t n = ni.nvox;
    img = ib_malloc(n * sizeof *img);
    if (!img) {
        rc = ib_err_set(err, IB_ENOMEM, "kits: out of memory");
        goto done;
    }
    to_c_order(ni.data, s, img, NULL);
    if (label) {
        if ((rc = ib_nifti_read(pl, &nl, err)))
            goto done;
        if (nl.nvox != n) {
            rc = ib_err_set(err, IB_EFORMAT, "%s: %zu voxels, the imaging has %zu", pl, nl.nvox, n);
            goto done;
        }
        for (size_t v = 0; v < n; v++)
            if (nl.data[v] != 0.0f && nl.data[v] != 1.0f && nl.data[v] != 2.0f) {
                rc = ib_err_set(err, IB_EFORMAT,
                                "%s: voxel %zu has label %g; KiTS19 labels are 0, 1, 2", pl, v,
                                (double)nl.data[v]);
                goto done;
            }
        if (!(lab = ib_malloc(n))) {
            rc = ib_err_set(err, IB_ENOMEM, "kits: out of memory");
            goto done;
        }
        to_c_order(nl.data, s, NULL, lab);
    }
    int64_t o[3];
    rc = ib_kits_preprocess(img, lab, s, sp, k->roi, image, label, o, err);
    if (!rc && memcmp(o, k->shape[i], sizeof o))
        rc = ib_err_set(err, IB_ESTATE, "%s: shape changed since open", pi);
done:
    if (rc) {
        ib_free(*image);
        *image = NULL;
        if (label) {
            ib_free(*label);
            *label = NULL;
        }
    }
    ib_free(img);
    ib_free(lab);
    ib_nifti_deinit(&ni);
    ib_nifti_deinit(&nl);
    return rc;
}
