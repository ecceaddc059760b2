/*
 * synth_kits.c - synthetic KiTS19 cases in the kits19/data layout (kits.h): CT-like volumes
 * in Hounsfield units (air -1000 outside an elliptic body of ~40 HU with noise, two kidneys
 * of ~180 HU, a lumpy tumour of ~90 HU inside one kidney) with a segmentation of 0
 * background, 1 kidney, 2 tumour. Shapes and spacings vary per case, so the resampling,
 * the edge padding and the sliding-window crop/pad all run. Deterministic for a seed;
 * synthetic data makes no accuracy claim.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/rng.h"
#include "base/strbuf.h"
#include "dataset/kits.h"
#include "dataset/nifti.h"
#include "inferbench/base.h"

static double unif(uint64_t *s)
{
    return (double)(ib_splitmix64(s) >> 11) / 9007199254740992.0;
}

/* squared normalised distance of p from an ellipsoid (centre c, radii r) */
static double ell(const double p[3], const double c[3], const double r[3])
{
    double d = 0;
    for (int a = 0; a < 3; a++)
        d += ((p[a] - c[a]) / r[a]) * ((p[a] - c[a]) / r[a]);
    return d;
}

static int write_case(const char *dir, const char *name, int tiny, uint64_t *rng, ib_err *err)
{
    /* nibabel axes: dim1 = slices (KiTS19 stores [slice, row, col]) */
    int64_t n1 = tiny ? 16 + (int64_t)(ib_splitmix64(rng) % 8) : 60 + (int64_t)(ib_splitmix64(rng) % 40);
    int64_t n2 = tiny ? 36 + (int64_t)(ib_splitmix64(rng) % 10) : 160 + (int64_t)(ib_splitmix64(rng) % 60);
    int64_t n3 = tiny ? 36 + (int64_t)(ib_splitmix64(rng) % 10) : 160 + (int64_t)(ib_splitmix64(rng) % 60);
    float s1 = (float)(2.5 + unif(rng)), s2 = (float)(0.7 + 0.2 * unif(rng));
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = ib_mkdirs(path, err);
    if (rc)
        return rc;
    ib_nifti img, seg;
    ib_nifti_init3d(&img, n1, n2, n3, s1, s2, s2);
    ib_nifti_init3d(&seg, n1, n2, n3, s1, s2, s2);
    snprintf(img.descrip, sizeof img.descrip, "inferbench synthetic KiTS19");
    img.data = ib_malloc(img.nvox * sizeof(float));
    seg.data = ib_malloc(seg.nvox * sizeof(float));
    if (!img.data || !seg.data) {
        ib_nifti_deinit(&img);
        ib_nifti_deinit(&seg);
        return ib_err_set(err, IB_ENOMEM, "synthetic kits: out of memory");
    }
    const double ext[3] = {(double)n1, (double)n2, (double)n3};
    double body_c[3], body_r[3], kc[2][3], kr[3], tc[3], tr[3];
    for (int a = 0; a < 3; a++) {
        body_c[a] = ext[a] / 2;
        body_r[a] = ext[a] * (a == 0 ? 0.7 : 0.42);
        kr[a] = ext[a] * (a == 0 ? 0.3 : 0.09) * (0.9 + 0.2 * unif(rng));
    }
    for (int side = 0; side < 2; side++) {
        kc[side][0] = ext[0] * (0.45 + 0.1 * unif(rng));
        kc[side][1] = ext[1] * (0.6 + 0.05 * unif(rng));
        kc[side][2] = ext[2] * (side ? 0.68 : 0.32);
    }
    int tk = (int)(ib_splitmix64(rng) & 1);
    for (int a = 0; a < 3; a++) {
        tr[a] = kr[a] * (0.45 + 0.2 * unif(rng));
        tc[a] = kc[tk][a] + (kr[a] - tr[a]) * (unif(rng) - 0.5);
    }
    for (int64_t k = 0; k < n3; k++)
        for (int64_t j = 0; j < n2; j++)
            for (int64_t i = 0; i < n1; i++) {
                double p[3] = {(double)i, (double)j, (double)k};
                double hu = -1000, l = 0;
                if (ell(p, body_c, body_r) <= 1.0)
                    hu = 40 + 30 * (unif(rng) - 0.5);
                for (int side = 0; side < 2; side++)
                    if (ell(p, kc[side], kr) <= 1.0) {
                        hu = 180 + 40 * (unif(rng) - 0.5);
                        l = 1;
                    }
                double dt = ell(p, tc, tr) * (1.0 + 0.3 * sin(0.9 * (double)j) * cos(0.7 * (double)k));
                if (dt <= 1.0) {
                    hu = 90 + 40 * (unif(rng) - 0.5);
                    l = 2;
                }
                size_t v = (size_t)((k * n2 + j) * n1 + i); /* NIfTI order: dim1 fastest */
                img.data[v] = (float)hu;
                seg.data[v] = (float)l;
            }
    snprintf(path, sizeof path, "%s/%s/imaging.nii.gz", dir, name);
    rc = ib_nifti_write(path, &img, IB_NIFTI_INT16, err);
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s/segmentation.nii.gz", dir, name);
        rc = ib_nifti_write(path, &seg, IB_NIFTI_UINT8, err);
    }
    ib_nifti_deinit(&img);
    ib_nifti_deinit(&seg);
    return rc;
}

int ib_kits_synthesize(const char *dir, size_t n, int tiny, uint64_t seed, ib_err *err)
{
    if (n == 0)
        return ib_err_set(err, IB_EINVAL, "synthetic kits: need at least one case");
    int rc = ib_mkdirs(dir, err);
    if (rc)
        return rc;
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 19;
    ib_strbuf list;
    ib_strbuf_init(&list);
    rc = ib_strbuf_puts(&list, "[\n");
    for (size_t c = 0; c < n && !rc; c++) {
        char name[32];
        snprintf(name, sizeof name, "case_%05zu", c * 3);
        rc = write_case(dir, name, tiny, &rng, err);
        if (!rc && ib_strbuf_printf(&list, "    \"%s\"%s\n", name, c + 1 < n ? "," : ""))
            rc = ib_err_set(err, IB_ENOMEM, "synthetic kits: out of memory");
    }
    if (!rc && ib_strbuf_puts(&list, "]\n"))
        rc = ib_err_set(err, IB_ENOMEM, "synthetic kits: out of memory");
    if (!rc) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, IB_KITS_LIST);
        rc = ib_file_write_all(path, list.data, list.len, err);
    }
    ib_strbuf_deinit(&list);
    return rc;
}
