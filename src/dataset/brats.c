/*
 * brats.c - BraTS 2019 loader and the reference's nnU-Net pre-processing (see brats.h for
 * the rules and their sources: preprocess.py, nnU-Net cropping.py create_nonzero_mask /
 * get_bbox_from_mask / crop_to_nonzero, preprocessing.py resample_and_normalize,
 * batchgenerators pad_nd_image, Task043_BraTS_2019.py). Means and standard deviations are
 * accumulated in double (numpy sums float32 pairwise), so a normalised voxel may differ
 * from the reference's by a few float32 ulps.
 */
#include "dataset/brats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "dataset/nifti.h"
#include "inferbench/base.h"

/* the reference's folds/fold1_validation.txt (67 cases, sorted) */
#include "dataset/brats_fold1.inc"

#define NAME_MAX_ 96

static const char *const modality[IB_BRATS_CHANNELS] = {"t1", "t1ce", "t2", "flair"};

struct ib_brats {
    char dir[1024];
    int64_t patch[3];
    size_t n;
    char (*names)[NAME_MAX_]; /* nnU-Net names */
};

/* "HGG__BraTS19_2013_13_1" -> grade "HGG", case "BraTS19_2013_13_1" */
static int split_name(const char *nn, char *grade, size_t gn, const char **cas)
{
    const char *sep = strstr(nn, "__");
    if (!sep || (size_t)(sep - nn) >= gn || sep == nn || !sep[2])
        return -1;
    memcpy(grade, nn, (size_t)(sep - nn));
    grade[sep - nn] = 0;
    *cas = sep + 2;
    return 0;
}

static int file_path(const ib_brats *b, size_t i, const char *what, char *out, size_t n)
{
    char grade[16];
    const char *cas = NULL;
    if (split_name(b->names[i], grade, sizeof grade, &cas))
        return -1;
    int k = snprintf(out, n, "%s/%s/%s/%s_%s.nii.gz", b->dir, grade, cas, cas, what);
    if (k < 0 || (size_t)k >= n)
        return -1;
    if (!ib_path_exists(out))
        out[strlen(out) - 3] = 0; /* fall back to .nii */
    return 0;
}

static int add_name(ib_brats *b, const char *s, size_t len, size_t *cap, const char *src,
                    size_t line, ib_err *err)
{
    char grade[16];
    const char *cas;
    char tmp[NAME_MAX_];
    if (len == 0 || len >= NAME_MAX_)
        return ib_err_set(err, IB_EFORMAT, "%s:%zu: case name empty or longer than %d bytes", src,
                          line, NAME_MAX_ - 1);
    memcpy(tmp, s, len);
    tmp[len] = 0;
    if (split_name(tmp, grade, sizeof grade, &cas) || (strcmp(grade, "HGG") && strcmp(grade, "LGG")))
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%zu: '%s' is not an nnU-Net BraTS name (HGG__<case> or LGG__<case>)",
                          src, line, tmp);
    if (b->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        void *p = ib_realloc(b->names, nc * sizeof *b->names);
        if (!p)
            return ib_err_set(err, IB_ENOMEM, "brats: out of memory");
        b->names = p;
        *cap = nc;
    }
    memcpy(b->names[b->n++], tmp, len + 1);
    return IB_OK;
}

static int read_list(ib_brats *b, const char *path, ib_err *err)
{
    size_t cap = 0;
    if (!ib_path_exists(path)) {
        for (size_t i = 0; i < sizeof fold1 / sizeof fold1[0]; i++) {
            int rc = add_name(b, fold1[i], strlen(fold1[i]), &cap, "built-in fold 1", i + 1, err);
            if (rc)
                return rc;
        }
        return IB_OK;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, 1 << 20, &text, &len, err);
    if (rc)
        return rc;
    size_t line = 0;
    for (size_t p = 0; p < len && !rc;) {
        size_t e = p;
        while (e < len && text[e] != '\n')
            e++;
        line++;
        size_t l = e - p;
        while (l && (text[p + l - 1] == '\r' || text[p + l - 1] == ' ' || text[p + l - 1] == '\t'))
            l--; /* line.rstrip() */
        if (l)
            rc = add_name(b, text + p, l, &cap, path, line, err);
        p = e + 1;
    }
    ib_free(text);
    if (!rc && b->n == 0)
        rc = ib_err_set(err, IB_EFORMAT, "%s: no cases listed", path);
    return rc;
}

int ib_brats_open(const char *dir, const int64_t patch[3], ib_brats **out, ib_err *err)
{
    *out = NULL;
    ib_brats *b = ib_calloc(1, sizeof *b);
    if (!b)
        return ib_err_set(err, IB_ENOMEM, "brats: out of memory");
    snprintf(b->dir, sizeof b->dir, "%s", dir);
    memcpy(b->patch, patch, sizeof b->patch);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, IB_BRATS_LIST);
    int rc = read_list(b, path, err);
    for (size_t i = 0; !rc && i < b->n; i++)
        for (int m = 0; m <= IB_BRATS_CHANNELS && !rc; m++) {
            char f[1400];
            file_path(b, i, m < IB_BRATS_CHANNELS ? modality[m] : "seg", f, sizeof f);
            if (!ib_path_exists(f))
                rc = ib_err_set(err, IB_ENOTFOUND,
                                "brats: %s.gz (or .nii) missing for case %s (layout "
                                "DIR/{HGG,LGG}/<case>/<case>_{t1,t1ce,t2,flair,seg}.nii.gz)",
                                f, b->names[i]);
        }
    if (rc) {
        ib_brats_close(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}

void ib_brats_close(ib_brats *b)
{
    if (!b)
        return;
    ib_free(b->names);
    ib_free(b);
}

size_t ib_brats_count(const ib_brats *b)
{
    return b->n;
}

const char *ib_brats_case(const ib_brats *b, size_t i)
{
    return i < b->n ? b->names[i] : NULL;
}

/* ---- pre-processing ------------------------------------------------------------------------ */

int ib_brats_fill_holes(uint8_t *mask, const int64_t s[3])
{
    /* background reachable from the border (6-connected) stays background; the rest of the
     * background is a hole and becomes foreground (scipy binary_fill_holes) */
    size_t n = (size_t)(s[0] * s[1] * s[2]);
    uint32_t *queue = ib_malloc((n ? n : 1) * sizeof *queue);
    if (!queue)
        return IB_ENOMEM;
    size_t head = 0, tail = 0;
    /* 0 = background not yet reached, 1 = foreground, 2 = reached background */
    for (int64_t z = 0; z < s[0]; z++)
        for (int64_t y = 0; y < s[1]; y++)
            for (int64_t x = 0; x < s[2]; x++) {
                bool border = z == 0 || y == 0 || x == 0 || z == s[0] - 1 || y == s[1] - 1 ||
                              x == s[2] - 1;
                size_t i = (size_t)((z * s[1] + y) * s[2] + x);
                if (border && mask[i] == 0) {
                    mask[i] = 2;
                    queue[tail++] = (uint32_t)i;
                }
            }
    const int64_t st[3] = {s[1] * s[2], s[2], 1};
    while (head < tail) {
        size_t i = queue[head++];
        int64_t c[3] = {(int64_t)i / st[0], ((int64_t)i / st[1]) % s[1], (int64_t)i % s[2]};
        for (int a = 0; a < 3; a++)
            for (int d = -1; d <= 1; d += 2) {
                int64_t v = c[a] + d;
                if (v < 0 || v >= s[a])
                    continue;
                size_t j = (size_t)((int64_t)i + d * st[a]);
                if (mask[j] == 0) {
                    mask[j] = 2;
                    queue[tail++] = (uint32_t)j;
                }
            }
    }
    for (size_t i = 0; i < n; i++)
        mask[i] = mask[i] != 2;
    ib_free(queue);
    return IB_OK;
}

/* create_nonzero_mask + get_bbox_from_mask; *mask is ib_malloc'ed */
static int nonzero_bbox(const float *const *chan, const int64_t s[3], uint8_t **mask_out,
                        ib_brats_geom *g, const char *name, ib_err *err)
{
    size_t n = (size_t)(s[0] * s[1] * s[2]);
    uint8_t *mask = ib_malloc(n ? n : 1);
    if (!mask)
        return ib_err_set(err, IB_ENOMEM, "brats: out of memory");
    for (size_t i = 0; i < n; i++) {
        uint8_t m = 0;
        for (int c = 0; c < IB_BRATS_CHANNELS; c++)
            m |= chan[c][i] != 0.0f;
        mask[i] = m;
    }
    if (ib_brats_fill_holes(mask, s)) {
        ib_free(mask);
        return ib_err_set(err, IB_ENOMEM, "brats: out of memory");
    }
    for (int a = 0; a < 3; a++) {
        g->shape[a] = s[a];
        g->lo[a] = s[a];
        g->hi[a] = 0;
    }
    for (int64_t z = 0; z < s[0]; z++)
        for (int64_t y = 0; y < s[1]; y++)
            for (int64_t x = 0; x < s[2]; x++)
                if (mask[(z * s[1] + y) * s[2] + x]) {
                    int64_t c[3] = {z, y, x};
                    for (int a = 0; a < 3; a++) {
                        g->lo[a] = c[a] < g->lo[a] ? c[a] : g->lo[a];
                        g->hi[a] = c[a] + 1 > g->hi[a] ? c[a] + 1 : g->hi[a];
                    }
                }
    if (g->hi[0] == 0) {
        ib_free(mask);
        return ib_err_set(err, IB_EFORMAT, "%s: every voxel of every modality is 0 (no brain)",
                          name);
    }
    *mask_out = mask;
    return IB_OK;
}

static int pad_geometry(ib_brats_geom *g, const int64_t patch[3], const char *name, ib_err *err)
{
    for (int a = 0; a < 3; a++) {
        int64_t r = g->hi[a] - g->lo[a];
        if (r > patch[a])
            return ib_err_set(err, IB_EFORMAT,
                              "%s: the non-zero crop is %lld voxels along axis %d, larger than the "
                              "model's patch (%lld): the reference pads only",
                              name, (long long)r, a, (long long)patch[a]);
        g->pad[a] = (patch[a] - r) / 2; /* pad_nd_image: difference // 2 before */
    }
    return IB_OK;
}

int ib_brats_preprocess(const float *const *chan, const int64_t s[3], const int64_t patch[3],
                        float *out, ib_brats_geom *g, const char *name, ib_err *err)
{
    uint8_t *mask = NULL;
    int rc = nonzero_bbox(chan, s, &mask, g, name, err);
    if (rc)
        return rc;
    if ((rc = pad_geometry(g, patch, name, err))) {
        ib_free(mask);
        return rc;
    }
    size_t pv = (size_t)(patch[0] * patch[1] * patch[2]);
    memset(out, 0, IB_BRATS_CHANNELS * pv * sizeof *out);
    for (int c = 0; c < IB_BRATS_CHANNELS; c++) {
        /* z-score over the (filled) non-zero mask: seg[-1] >= 0 in nnU-Net */
        double sum = 0, sq = 0;
        size_t k = 0;
        for (int64_t z = g->lo[0]; z < g->hi[0]; z++)
            for (int64_t y = g->lo[1]; y < g->hi[1]; y++)
                for (int64_t x = g->lo[2]; x < g->hi[2]; x++) {
                    size_t i = (size_t)((z * s[1] + y) * s[2] + x);
                    if (mask[i]) {
                        double v = chan[c][i];
                        sum += v;
                        k++;
                    }
                }
        double mean = sum / (double)k;
        for (int64_t z = g->lo[0]; z < g->hi[0]; z++)
            for (int64_t y = g->lo[1]; y < g->hi[1]; y++)
                for (int64_t x = g->lo[2]; x < g->hi[2]; x++) {
                    size_t i = (size_t)((z * s[1] + y) * s[2] + x);
                    if (mask[i]) {
                        double d = (double)chan[c][i] - mean;
                        sq += d * d;
                    }
                }
        double sd = sqrt(sq / (double)k) + 1e-8;
        float *o = out + (size_t)c * pv;
        for (int64_t z = g->lo[0]; z < g->hi[0]; z++)
            for (int64_t y = g->lo[1]; y < g->hi[1]; y++)
                for (int64_t x = g->lo[2]; x < g->hi[2]; x++) {
                    size_t i = (size_t)((z * s[1] + y) * s[2] + x);
                    int64_t pz = z - g->lo[0] + g->pad[0], py = y - g->lo[1] + g->pad[1],
                            px = x - g->lo[2] + g->pad[2];
                    size_t j = (size_t)((pz * patch[1] + py) * patch[2] + px);
                    o[j] = mask[i] ? (float)(((double)chan[c][i] - mean) / sd) : 0.0f;
                }
    }
    ib_free(mask);
    return IB_OK;
}

/* read the four modalities of case i; shapes must agree */
static int read_case(const ib_brats *b, size_t i, ib_nifti img[IB_BRATS_CHANNELS], int64_t s[3],
                     ib_err *err)
{
    memset(img, 0, IB_BRATS_CHANNELS * sizeof *img);
    int rc = IB_OK;
    for (int m = 0; m < IB_BRATS_CHANNELS && !rc; m++) {
        char f[1400];
        file_path(b, i, modality[m], f, sizeof f);
        rc = ib_nifti_read(f, &img[m], err);
        if (rc)
            break;
        if (img[m].ndim != 3 && !(img[m].ndim == 4 && img[m].dims[3] == 1)) {
            rc = ib_err_set(err, IB_EFORMAT, "%s: %d-D image, expected 3-D", f, img[m].ndim);
            break;
        }
        int64_t sh[3] = {img[m].dims[2], img[m].dims[1], img[m].dims[0]}; /* [z][y][x] */
        if (m == 0)
            memcpy(s, sh, sizeof sh);
        else if (memcmp(s, sh, sizeof sh))
            rc = ib_err_set(err, IB_EFORMAT, "%s: %lldx%lldx%lld voxels, t1 has %lldx%lldx%lld", f,
                            (long long)sh[2], (long long)sh[1], (long long)sh[0], (long long)s[2],
                            (long long)s[1], (long long)s[0]);
    }
    if (rc)
        for (int m = 0; m < IB_BRATS_CHANNELS; m++)
            ib_nifti_deinit(&img[m]);
    return rc;
}

int ib_brats_load(const ib_brats *b, size_t i, float *out, ib_brats_geom *g, ib_err *err)
{
    if (i >= b->n)
        return ib_err_set(err, IB_EINVAL, "brats: sample %zu of %zu", i, b->n);
    ib_nifti img[IB_BRATS_CHANNELS];
    int64_t s[3];
    int rc = read_case(b, i, img, s, err);
    if (rc)
        return rc;
    const float *chan[IB_BRATS_CHANNELS];
    for (int m = 0; m < IB_BRATS_CHANNELS; m++)
        chan[m] = img[m].data;
    rc = ib_brats_preprocess(chan, s, b->patch, out, g, b->names[i], err);
    for (int m = 0; m < IB_BRATS_CHANNELS; m++)
        ib_nifti_deinit(&img[m]);
    return rc;
}

int ib_brats_geometry(const ib_brats *b, size_t i, ib_brats_geom *g, ib_err *err)
{
    if (i >= b->n)
        return ib_err_set(err, IB_EINVAL, "brats: sample %zu of %zu", i, b->n);
    ib_nifti img[IB_BRATS_CHANNELS];
    int64_t s[3];
    int rc = read_case(b, i, img, s, err);
    if (rc)
        return rc;
    const float *chan[IB_BRATS_CHANNELS];
    for (int m = 0; m < IB_BRATS_CHANNELS; m++)
        chan[m] = img[m].data;
    uint8_t *mask = NULL;
    rc = nonzero_bbox(chan, s, &mask, g, b->names[i], err);
    ib_free(mask);
    if (!rc)
        rc = pad_geometry(g, b->patch, b->names[i], err);
    for (int m = 0; m < IB_BRATS_CHANNELS; m++)
        ib_nifti_deinit(&img[m]);
    return rc;
}

int ib_brats_labels(const ib_brats *b, size_t i, uint8_t **labels, size_t *n, ib_err *err)
{
    *labels = NULL;
    *n = 0;
    if (i >= b->n)
        return ib_err_set(err, IB_EINVAL, "brats: sample %zu of %zu", i, b->n);
    char f[1400];
    file_path(b, i, "seg", f, sizeof f);
    ib_nifti seg;
    int rc = ib_nifti_read(f, &seg, err);
    if (rc)
        return rc;
    uint8_t *l = ib_malloc(seg.nvox ? seg.nvox : 1);
    if (!l) {
        ib_nifti_deinit(&seg);
        return ib_err_set(err, IB_ENOMEM, "brats: out of memory");
    }
    for (size_t k = 0; k < seg.nvox; k++) {
        float v = seg.data[k];
        /* copy_BraTS_segmentation_and_convert_labels: 4 -> 3, 2 -> 1, 1 -> 2 */
        if (v == 0.0f)
            l[k] = 0;
        else if (v == 1.0f)
            l[k] = 2;
        else if (v == 2.0f)
            l[k] = 1;
        else if (v == 4.0f)
            l[k] = 3;
        else {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s: voxel %zu has label %g; BraTS labels are 0, 1, 2, 4", f, k,
                            (double)v);
            break;
        }
    }
    size_t nv = seg.nvox;
    ib_nifti_deinit(&seg);
    if (rc) {
        ib_free(l);
        return rc;
    }
    *labels = l;
    *n = nv;
    return IB_OK;
}
