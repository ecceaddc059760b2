/*
 * nifti.c - NIfTI-1 reader and writer (see nifti.h). The header is the 348-byte nifti_1_header
 * of nifti1.h, read field by field at fixed offsets in the file's byte order (sizeof_hdr
 * decides it, as nifti1_io does), so no struct packing is assumed. Voxels are converted to
 * float32 and scaled by scl_slope/scl_inter when the slope is finite and non-zero (nibabel's
 * rule; the BraTS and KiTS files carry slope 1 or 0). gzip goes through zlib's inflate with
 * automatic header detection; the writer deflates at level 1 (synthetic data is
 * compressible and speed matters more than size there).
 */
#include "dataset/nifti.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "base/common.h"
#include "base/fileio.h"
#include "inferbench/base.h"

/* ---- byte helpers -------------------------------------------------------------------- */

static uint64_t rd(const uint8_t *p, size_t n, bool be)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
    return v;
}

static int16_t rd16(const uint8_t *p, bool be)
{
    return (int16_t)(uint16_t)rd(p, 2, be);
}

static int32_t rd32(const uint8_t *p, bool be)
{
    return (int32_t)(uint32_t)rd(p, 4, be);
}

static float rdf(const uint8_t *p, bool be)
{
    uint32_t w = (uint32_t)rd(p, 4, be);
    float f;
    memcpy(&f, &w, 4);
    return f;
}

static void wr(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wrf(uint8_t *p, float f)
{
    uint32_t w;
    memcpy(&w, &f, 4);
    wr(p, w, 4);
}

/* bytes per voxel of a supported datatype, 0 otherwise */
static size_t dt_bytes(int16_t dt)
{
    switch (dt) {
    case IB_NIFTI_UINT8:
    case IB_NIFTI_INT8:
        return 1;
    case IB_NIFTI_INT16:
    case IB_NIFTI_UINT16:
        return 2;
    case IB_NIFTI_INT32:
    case IB_NIFTI_FLOAT32:
        return 4;
    case IB_NIFTI_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

static double voxel(const uint8_t *p, int16_t dt, bool be)
{
    switch (dt) {
    case IB_NIFTI_UINT8:
        return p[0];
    case IB_NIFTI_INT8:
        return (int8_t)p[0];
    case IB_NIFTI_INT16:
        return rd16(p, be);
    case IB_NIFTI_UINT16:
        return (uint16_t)rd(p, 2, be);
    case IB_NIFTI_INT32:
        return rd32(p, be);
    case IB_NIFTI_FLOAT32:
        return rdf(p, be);
    default: {
        uint64_t w = rd(p, 8, be);
        double d;
        memcpy(&d, &w, 8);
        return d;
    }
    }
}

/* ---- header ---------------------------------------------------------------------------- */

void ib_nifti_init3d(ib_nifti *n, int64_t nx, int64_t ny, int64_t nz, float sx, float sy, float sz)
{
    memset(n, 0, sizeof *n);
    n->ndim = 3;
    for (int i = 0; i < 7; i++)
        n->dims[i] = 1;
    n->dims[0] = nx;
    n->dims[1] = ny;
    n->dims[2] = nz;
    n->pixdim[0] = 1.0f;
    n->pixdim[1] = sx;
    n->pixdim[2] = sy;
    n->pixdim[3] = sz;
    n->datatype = IB_NIFTI_FLOAT32;
    n->qform_code = 1;
    n->sform_code = 1;
    n->srow[0][0] = sx;
    n->srow[1][1] = sy;
    n->srow[2][2] = sz;
    n->xyzt_units = 2; /* NIFTI_UNITS_MM */
    n->nvox = (size_t)(nx * ny * nz);
}

static int parse_header(const uint8_t *h, size_t len, const char *name, ib_nifti *o, ib_err *err)
{
    if (len < IB_NIFTI_HDR_SIZE)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: %zu bytes, shorter than the 348-byte NIfTI-1 header (truncated)",
                          name, len);
    bool be;
    if (rd32(h, false) == IB_NIFTI_HDR_SIZE)
        be = false;
    else if (rd32(h, true) == IB_NIFTI_HDR_SIZE)
        be = true;
    else
        return ib_err_set(err, IB_EFORMAT,
                          "%s: sizeof_hdr is %d, not 348 in either byte order (not NIfTI-1; "
                          "NIfTI-2 is not read)",
                          name, (int)rd32(h, false));
    if (!memcmp(h + 344, "ni1\0", 4))
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "%s: magic \"ni1\": a .hdr/.img pair; convert it to a single .nii file",
                          name);
    if (memcmp(h + 344, "n+1\0", 4))
        return ib_err_set(err, IB_EFORMAT, "%s: magic at offset 344 is not \"n+1\\0\" (not NIfTI-1)",
                          name);
    memset(o, 0, sizeof *o);
    o->big_endian = be;
    int nd = rd16(h + 40, be);
    if (nd < 1 || nd > 7)
        return ib_err_set(err, IB_EFORMAT, "%s: dim[0] = %d, outside 1..7", name, nd);
    o->ndim = nd;
    size_t nvox = 1;
    for (int i = 0; i < 7; i++) {
        o->dims[i] = 1;
        if (i < nd) {
            int d = rd16(h + 42 + 2 * i, be);
            if (d < 1)
                return ib_err_set(err, IB_EFORMAT, "%s: dim[%d] = %d, must be >= 1", name, i + 1,
                                  d);
            o->dims[i] = d;
            if (nvox > IB_NIFTI_MAX_VOXELS / (size_t)d)
                return ib_err_set(err, IB_EFORMAT, "%s: more than %zu voxels", name,
                                  IB_NIFTI_MAX_VOXELS);
            nvox *= (size_t)d;
        }
    }
    o->nvox = nvox;
    o->datatype = rd16(h + 70, be);
    int bitpix = rd16(h + 72, be);
    size_t bpv = dt_bytes(o->datatype);
    if (!bpv)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "%s: datatype %d not supported (uint8 2, int16 4, int32 8, float32 16, "
                          "float64 64, int8 256, uint16 512)",
                          name, o->datatype);
    if ((size_t)bitpix != 8 * bpv)
        return ib_err_set(err, IB_EFORMAT, "%s: bitpix %d does not match datatype %d (%zu bits)",
                          name, bitpix, o->datatype, 8 * bpv);
    for (int i = 0; i < 8; i++)
        o->pixdim[i] = rdf(h + 76 + 4 * i, be);
    o->scl_slope = rdf(h + 112, be);
    o->scl_inter = rdf(h + 116, be);
    o->xyzt_units = h[123];
    memcpy(o->descrip, h + 148, 80);
    o->descrip[80] = 0;
    o->qform_code = rd16(h + 252, be);
    o->sform_code = rd16(h + 254, be);
    for (int i = 0; i < 3; i++) {
        o->quatern[i] = rdf(h + 256 + 4 * i, be);
        o->qoffset[i] = rdf(h + 268 + 4 * i, be);
        for (int k = 0; k < 4; k++)
            o->srow[i][k] = rdf(h + 280 + 16 * i + 4 * k, be);
    }
    return IB_OK;
}

int ib_nifti_parse(const uint8_t *buf, size_t len, const char *name, ib_nifti *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    ib_nifti n;
    int rc = parse_header(buf, len, name, &n, err);
    if (rc)
        return rc;
    float off = rdf(buf + 108, n.big_endian);
    /* vox_offset: >= 352 for single files (header + 4 extension-flag bytes) */
    if (!(off >= 352.0f) || off > (float)len || off != floorf(off))
        return ib_err_set(err, IB_EFORMAT,
                          "%s: vox_offset %g invalid (must be a whole number >= 352 within the "
                          "file)",
                          name, (double)off);
    size_t start = (size_t)off, bpv = dt_bytes(n.datatype);
    if ((len - start) / bpv < n.nvox)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: truncated: %zu voxels of %zu bytes need %zu bytes after offset "
                          "%zu, the file has %zu",
                          name, n.nvox, bpv, n.nvox * bpv, start, len - start);
    n.data = ib_malloc(n.nvox * sizeof(float));
    if (!n.data)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory for %zu voxels", name, n.nvox);
    /* nibabel: scaling applies when slope is finite and non-zero */
    bool scale = isfinite(n.scl_slope) && n.scl_slope != 0.0f;
    double slope = scale ? (double)n.scl_slope : 1.0;
    double inter = scale && isfinite(n.scl_inter) ? (double)n.scl_inter : 0.0;
    const uint8_t *p = buf + start;
    for (size_t i = 0; i < n.nvox; i++, p += bpv) {
        double v = voxel(p, n.datatype, n.big_endian);
        n.data[i] = (float)(scale ? v * slope + inter : v);
    }
    *out = n;
    return IB_OK;
}

int ib_nifti_gunzip(const uint8_t *in, size_t len, size_t max_bytes, const char *name,
                    uint8_t **out, size_t *out_len, ib_err *err)
{
    *out = NULL;
    *out_len = 0;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, 15 + 32) != Z_OK)
        return ib_err_set(err, IB_ENOMEM, "%s: zlib inflateInit2 failed", name);
    size_t cap = len * 4 + 4096, used = 0;
    if (cap > max_bytes)
        cap = max_bytes;
    uint8_t *buf = ib_malloc(cap ? cap : 1);
    int rc = IB_OK;
    if (!buf) {
        rc = ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
        goto done;
    }
    s.next_in = (Bytef *)(uintptr_t)in;
    size_t in_left = len;
    for (;;) {
        if (used == cap) {
            if (cap >= max_bytes) {
                rc = ib_err_set(err, IB_EFORMAT, "%s: decompresses to more than %zu bytes", name,
                                max_bytes);
                goto done;
            }
            size_t nc = cap * 2 > max_bytes ? max_bytes : cap * 2;
            uint8_t *nb = ib_realloc(buf, nc);
            if (!nb) {
                rc = ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
                goto done;
            }
            buf = nb;
            cap = nc;
        }
        uInt chunk_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        size_t room = cap - used;
        s.avail_in = chunk_in;
        s.next_out = buf + used;
        s.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        uInt out_before = s.avail_out;
        int zr = inflate(&s, Z_NO_FLUSH);
        in_left -= chunk_in - s.avail_in;
        used += out_before - s.avail_out;
        if (zr == Z_STREAM_END)
            break;
        if (zr == Z_BUF_ERROR && in_left == 0 && s.avail_in == 0) {
            rc = ib_err_set(err, IB_EFORMAT, "%s: gzip stream truncated after %zu bytes", name,
                            used);
            goto done;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = ib_err_set(err, IB_EFORMAT, "%s: corrupt gzip stream (%s)", name,
                            s.msg ? s.msg : "zlib error");
            goto done;
        }
        if (zr == Z_OK && in_left == 0 && s.avail_in == 0 && s.avail_out > 0) {
            rc = ib_err_set(err, IB_EFORMAT, "%s: gzip stream truncated after %zu bytes", name,
                            used);
            goto done;
        }
    }
    *out = buf;
    *out_len = used;
    buf = NULL;
done:
    inflateEnd(&s);
    ib_free(buf);
    return rc;
}

int ib_nifti_read(const char *path, ib_nifti *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    char *raw = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, (size_t)1 << 34, &raw, &len, err);
    if (rc)
        return rc;
    const uint8_t *u = (const uint8_t *)raw;
    if (len >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
        uint8_t *plain = NULL;
        size_t plen = 0;
        rc = ib_nifti_gunzip(u, len, (size_t)1 << 34, path, &plain, &plen, err);
        ib_free(raw);
        if (rc)
            return rc;
        rc = ib_nifti_parse(plain, plen, path, out, err);
        ib_free(plain);
        return rc;
    }
    rc = ib_nifti_parse(u, len, path, out, err);
    ib_free(raw);
    return rc;
}

int ib_nifti_read_header(const char *path, ib_nifti *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    gzFile f = gzopen(path, "rb"); /* reads plain files as they are */
    if (!f)
        return ib_err_set(err, errno == ENOENT ? IB_ENOTFOUND : IB_EIO, "%s: cannot open: %s",
                          path, strerror(errno));
    uint8_t h[352];
    int got = gzread(f, h, sizeof h);
    gzclose(f);
    if (got < 0)
        return ib_err_set(err, IB_EFORMAT, "%s: corrupt gzip stream", path);
    int rc = parse_header(h, (size_t)got, path, out, err);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ---- writer -------------------------------------------------------------------------------- */

static void store(uint8_t *p, int16_t dt, double v)
{
    double lo = 0, hi = 0;
    switch (dt) {
    case IB_NIFTI_FLOAT32:
        wrf(p, (float)v);
        return;
    case IB_NIFTI_FLOAT64: {
        uint64_t w;
        memcpy(&w, &v, 8);
        wr(p, w, 8);
        return;
    }
    case IB_NIFTI_UINT8:
        lo = 0, hi = 255;
        break;
    case IB_NIFTI_INT16:
        lo = -32768, hi = 32767;
        break;
    default:
        lo = -2147483648.0, hi = 2147483647.0;
        break;
    }
    v = isnan(v) ? 0 : nearbyint(v);
    v = v < lo ? lo : v > hi ? hi : v;
    int64_t iv = (int64_t)v;
    wr(p, (uint64_t)iv, dt_bytes(dt));
}

int ib_nifti_encode(const ib_nifti *n, int16_t dt, uint8_t **out, size_t *out_len, ib_err *err)
{
    *out = NULL;
    *out_len = 0;
    size_t bpv = dt_bytes(dt);
    if (!bpv || dt == IB_NIFTI_INT8 || dt == IB_NIFTI_UINT16)
        return ib_err_set(err, IB_EINVAL, "nifti write: datatype %d not written", dt);
    if (n->ndim < 1 || n->ndim > 7 || !n->data)
        return ib_err_set(err, IB_EINVAL, "nifti write: bad image (ndim %d)", n->ndim);
    size_t nvox = 1;
    for (int i = 0; i < n->ndim; i++) {
        if (n->dims[i] < 1 || n->dims[i] > 32767)
            return ib_err_set(err, IB_EINVAL, "nifti write: dim[%d] = %lld outside 1..32767",
                              i + 1, (long long)n->dims[i]);
        nvox *= (size_t)n->dims[i];
    }
    if (nvox != n->nvox)
        return ib_err_set(err, IB_EINVAL, "nifti write: nvox %zu != product of dims %zu",
                          n->nvox, nvox);
    size_t total = 352 + nvox * bpv;
    uint8_t *b = ib_calloc(1, total);
    if (!b)
        return ib_err_set(err, IB_ENOMEM, "nifti write: out of memory");
    wr(b, IB_NIFTI_HDR_SIZE, 4);
    b[39] = 0; /* dim_info */
    wr(b + 40, (uint64_t)n->ndim, 2);
    for (int i = 0; i < 7; i++)
        wr(b + 42 + 2 * i, (uint64_t)(i < n->ndim ? n->dims[i] : 1), 2);
    wr(b + 70, (uint64_t)(uint16_t)dt, 2);
    wr(b + 72, 8 * bpv, 2);
    for (int i = 0; i < 8; i++)
        wrf(b + 76 + 4 * i, n->pixdim[i]);
    wrf(b + 108, 352.0f);
    wrf(b + 112, n->scl_slope);
    wrf(b + 116, n->scl_inter);
    b[123] = n->xyzt_units;
    memcpy(b + 148, n->descrip, strnlen(n->descrip, 80));
    wr(b + 252, (uint64_t)(uint16_t)n->qform_code, 2);
    wr(b + 254, (uint64_t)(uint16_t)n->sform_code, 2);
    for (int i = 0; i < 3; i++) {
        wrf(b + 256 + 4 * i, n->quatern[i]);
        wrf(b + 268 + 4 * i, n->qoffset[i]);
        for (int k = 0; k < 4; k++)
            wrf(b + 280 + 16 * i + 4 * k, n->srow[i][k]);
    }
    memcpy(b + 344, "n+1\0", 4);
    bool scale = isfinite(n->scl_slope) && n->scl_slope != 0.0f;
    for (size_t i = 0; i < nvox; i++) {
        double v = n->data[i];
        if (scale)
            v = (v - (double)n->scl_inter) / (double)n->scl_slope;
        store(b + 352 + i * bpv, dt, v);
    }
    *out = b;
    *out_len = total;
    return IB_OK;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

int ib_nifti_write(const char *path, const ib_nifti *n, int16_t dt, ib_err *err)
{
    uint8_t *raw = NULL;
    size_t len = 0;
    int rc = ib_nifti_encode(n, dt, &raw, &len, err);
    if (rc)
        return rc;
    if (!ends_with(path, ".gz")) {
        rc = ib_file_write_all(path, raw, len, err);
        ib_free(raw);
        return rc;
    }
    gzFile f = gzopen(path, "wb1");
    if (!f) {
        ib_free(raw);
        return ib_err_set(err, IB_EIO, "%s: cannot create: %s", path, strerror(errno));
    }
    size_t off = 0;
    while (off < len) {
        unsigned chunk = len - off > (1u << 30) ? (1u << 30) : (unsigned)(len - off);
        int wrote = gzwrite(f, raw + off, chunk);
        if (wrote <= 0) {
            gzclose(f);
            ib_free(raw);
            return ib_err_set(err, IB_EIO, "%s: write failed", path);
        }
        off += (size_t)wrote;
    }
    ib_free(raw);
    if (gzclose(f) != Z_OK)
        return ib_err_set(err, IB_EIO, "%s: close failed", path);
    return IB_OK;
}

void ib_nifti_deinit(ib_nifti *n)
{
    if (!n)
        return;
    ib_free(n->data);
    n->data = NULL;
}
