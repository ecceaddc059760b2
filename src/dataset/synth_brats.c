/*
 * synth_brats.c - synthetic BraTS 2019 cases in the download layout (brats.h): per case a
 * noisy ellipsoidal "brain" in zero background with an enclosed zero-valued hole (a
 * "ventricle" that binary_fill_holes must fill), four modalities with their own contrast
 * (t1/t2 stored int16, t1ce/flair float32, so both voxel paths of the reader run), and a
 * segmentation with a blob-shaped tumour: necrosis (1) inside enhancing tumour (4) inside
 * edema (2), the BraTS label convention. Deterministic for a seed. Synthetic data: no
 * accuracy claim is made on it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/rng.h"
#include "base/strbuf.h"
#include "dataset/brats.h"
#include "dataset/nifti.h"
#include "inferbench/base.h"

static double unif(uint64_t *s)
{
    return (double)(ib_splitmix64(s) >> 11) / 9007199254740992.0;
}

static const char *const mod_name[IB_BRATS_CHANNELS] = {"t1", "t1ce", "t2", "flair"};
static const int16_t mod_type[IB_BRATS_CHANNELS] = {IB_NIFTI_INT16, IB_NIFTI_FLOAT32,
                                                     IB_NIFTI_INT16, IB_NIFTI_FLOAT32};
/* mean intensity of brain, edema, necrosis, enhancing per modality (made up) */
static const double contrast[IB_BRATS_CHANNELS][4] = {
    {400, 350, 250, 420}, {500, 480, 300, 900}, {600, 900, 1000, 700}, {300, 700, 450, 600}};

static int write_case(const char *dir, const char *grade, const char *cas, int64_t nx, int64_t ny,
                      int64_t nz, uint64_t *rng, ib_err *err)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s/%s", dir, grade, cas);
    int rc = ib_mkdirs(path, err);
    if (rc)
        return rc;
    ib_nifti img;
    ib_nifti_init3d(&img, nx, ny, nz, 1.0f, 1.0f, 1.0f);
    snprintf(img.descrip, sizeof img.descrip, "inferbench synthetic BraTS");
    size_t n = img.nvox;
    uint8_t *lab = ib_malloc(n);
    img.data = ib_malloc(n * sizeof(float));
    if (!lab || !img.data) {
        ib_free(lab);
        ib_nifti_deinit(&img);
        return ib_err_set(err, IB_ENOMEM, "synthetic brats: out of memory");
    }
    /* brain ellipsoid around a jittered centre; radii as fractions of each extent sized
     * like a real BraTS brain in 240x240x155 (about 140 x 175 x 140 voxels), so the crop
     * fits the 224x224x160 patch (axes z, y, x) */
    static const double rlo[3] = {0.27, 0.34, 0.42}, rhi[3] = {0.30, 0.38, 0.46};
    double c[3], r[3], tc[3], tr[3], hc[3], hr[3];
    const int64_t ext[3] = {nx, ny, nz};
    for (int a = 0; a < 3; a++) {
        c[a] = ext[a] * (0.5 + 0.04 * (unif(rng) - 0.5));
        r[a] = ext[a] * (rlo[a] + (rhi[a] - rlo[a]) * unif(rng));
        tr[a] = r[a] * (0.25 + 0.15 * unif(rng));              /* tumour radius */
        tc[a] = c[a] + (r[a] - tr[a]) * 0.8 * (unif(rng) - 0.5); /* inside the brain */
        hr[a] = r[a] * 0.08 + 1.0;                              /* hole radius */
        hc[a] = c[a] - r[a] * 0.35;                              /* away from the tumour */
    }
    /* labels: 0 outside the brain or background tissue, blob layers by distance */
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                double p[3] = {(double)x, (double)y, (double)z}, d = 0, dt = 0, dh = 0;
                for (int a = 0; a < 3; a++) {
                    d += ((p[a] - c[a]) / r[a]) * ((p[a] - c[a]) / r[a]);
                    dt += ((p[a] - tc[a]) / tr[a]) * ((p[a] - tc[a]) / tr[a]);
                    dh += ((p[a] - hc[a]) / hr[a]) * ((p[a] - hc[a]) / hr[a]);
                }
                /* lumpy blob: perturb the tumour distance with a low-frequency wave */
                dt *= 1.0 + 0.25 * sin(0.7 * x + 0.3 * y) * cos(0.5 * z);
                size_t i = (size_t)((z * ny + y) * nx + x);
                uint8_t l = 0xff; /* 0xff: outside the brain */
                if (d <= 1.0) {
                    l = 0;
                    if (dt < 0.15)
                        l = 1;
                    else if (dt < 0.35)
                        l = 4;
                    else if (dt < 1.0)
                        l = 2;
                    if (dh < 1.0 && l == 0)
                        l = 0xfe; /* the hole: brain tissue with zero intensity */
                }
                lab[i] = l;
            }
    for (int m = 0; m < IB_BRATS_CHANNELS && !rc; m++) {
        for (size_t i = 0; i < n; i++) {
            uint8_t l = lab[i];
            if (l >= 0xfe) {
                img.data[i] = 0.0f;
                continue;
            }
            int k = l == 0 ? 0 : l == 2 ? 1 : l == 1 ? 2 : 3;
            double v = contrast[m][k] * (1.0 + 0.1 * (unif(rng) - 0.5));
            img.data[i] = (float)(v < 1.0 ? 1.0 : v); /* brain voxels stay non-zero */
        }
        snprintf(path, sizeof path, "%s/%s/%s/%s_%s.nii.gz", dir, grade, cas, cas, mod_name[m]);
        rc = ib_nifti_write(path, &img, mod_type[m], err);
    }
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            img.data[i] = lab[i] >= 0xfe ? 0.0f : (float)lab[i];
        snprintf(path, sizeof path, "%s/%s/%s/%s_seg.nii.gz", dir, grade, cas, cas);
        rc = ib_nifti_write(path, &img, IB_NIFTI_UINT8, err);
    }
    ib_free(lab);
    ib_nifti_deinit(&img);
    return rc;
}

int ib_brats_synthesize(const char *dir, size_t n, int64_t nx, int64_t ny, int64_t nz,
                        uint64_t seed, ib_err *err)
{
    if (n == 0 || nx < 8 || ny < 8 || nz < 8)
        return ib_err_set(err, IB_EINVAL, "synthetic brats: need >= 1 case of >= 8^3 voxels");
    int rc = ib_mkdirs(dir, err);
    if (rc)
        return rc;
    uint64_t rng = seed * 0x2545f4914f6cdd1dull + 11;
    ib_strbuf list;
    ib_strbuf_init(&list);
    for (size_t k = 0; k < n && !rc; k++) {
        const char *grade = k % 3 == 2 ? "LGG" : "HGG";
        char cas[64];
        snprintf(cas, sizeof cas, "BraTS19_SYNTH_%03zu_1", k);
        rc = write_case(dir, grade, cas, nx, ny, nz, &rng, err);
        if (!rc && ib_strbuf_printf(&list, "%s__%s\n", grade, cas))
            rc = ib_err_set(err, IB_ENOMEM, "synthetic brats: out of memory");
    }
    if (!rc) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, IB_BRATS_LIST);
        rc = ib_file_write_all(path, list.data, list.len, err);
    }
    ib_strbuf_deinit(&list);
    return rc;
}
