/*
 * npz.c - one integer array out of a NumPy .npz (zip of .npy); see npz.h.
 * Formats: PKWARE APPNOTE 4.3.7 (local file header, zip64 extended information extra field
 * 0x0001), NumPy NEP 1 / numpy.lib.format (.npy magic "\x93NUMPY", versions 1-3).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/fileio.h"
#include "dataset/npz.h"
#include "inferbench/base.h"

#define NPZ_MAX_FILE ((size_t)1 << 34) /* 16 GB: a 40 M-entry dictionary is 160 MB */

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Inflate raw deflate data of at most `avail` bytes into exactly `want` bytes. */
static int inflate_raw(const char *name, const char *entry, const uint8_t *src, size_t avail,
                       size_t want, uint8_t *dst, ib_err *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return ib_err_set(err, IB_ENOMEM, "%s: %s: cannot start zlib", name, entry);
    int zr;
    for (;;) {
        /* feed in chunks of at most UINT_MAX (zlib counts in uInt); total_* are uLong */
        if (z.avail_in == 0) {
            size_t k = avail - z.total_in;
            z.next_in = (Bytef *)(uintptr_t)(src + z.total_in);
            z.avail_in = (uInt)(k > UINT_MAX ? UINT_MAX : k);
        }
        if (z.avail_out == 0) {
            size_t k = want - z.total_out;
            z.next_out = dst + z.total_out;
            z.avail_out = (uInt)(k > UINT_MAX ? UINT_MAX : k);
        }
        zr = inflate(&z, Z_NO_FLUSH);
        if (zr != Z_OK) /* Z_STREAM_END, or an error (Z_BUF_ERROR: input or output ran out) */
            break;
    }
    size_t got = z.total_out;
    const char *msg = z.msg;
    inflateEnd(&z);
    if (zr != Z_STREAM_END)
        return ib_err_set(err, IB_EFORMAT, "%s: %s: corrupt or truncated deflate data (%s)", name,
                          entry, msg ? msg : got == want ? "more data than the header says"
                                                         : "input ended early");
    if (got != want)
        return ib_err_set(err, IB_EFORMAT, "%s: %s: inflated to %zu bytes, the header says %zu",
                          name, entry, got, want);
    return IB_OK;
}

/* The value of 'key': in a .npy header dict, copied into val (without quotes). */
static int dict_value(const char *hdr, const char *key, char *val, size_t cap)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s':", key);
    const char *p = strstr(hdr, pat);
    if (!p)
        return -1;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    size_t n = 0;
    if (*p == '\'') {
        p++;
        while (p[n] && p[n] != '\'')
            n++;
    } else if (*p == '(') {
        while (p[n] && p[n] != ')')
            n++;
        if (p[n] == ')')
            n++;
    } else {
        while (p[n] && p[n] != ',' && p[n] != '}')
            n++;
    }
    if (n + 1 > cap)
        return -1;
    memcpy(val, p, n);
    val[n] = 0;
    return 0;
}

/* Decode a whole .npy held in memory. */
static int parse_npy(const char *name, const char *entry, const uint8_t *d, size_t size,
                     int64_t **out, size_t *n_out, ib_err *err)
{
    if (size < 10 || memcmp(d, "\x93NUMPY", 6) != 0)
        return ib_err_set(err, IB_EFORMAT, "%s: %s: not a .npy array (no \\x93NUMPY magic)", name,
                          entry);
    unsigned major = d[6];
    size_t hlen, off;
    if (major == 1) {
        hlen = rd16(d + 8);
        off = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12)
            return ib_err_set(err, IB_EFORMAT, "%s: %s: truncated .npy header", name, entry);
        hlen = rd32(d + 8);
        off = 12;
    } else {
        return ib_err_set(err, IB_EFORMAT, "%s: %s: .npy format version %u.%u is not supported "
                          "(1.0-3.0)", name, entry, major, d[7]);
    }
    if (hlen > size - off || hlen > 65536)
        return ib_err_set(err, IB_EFORMAT, "%s: %s: .npy header of %zu bytes runs past the "
                          "entry (%zu bytes)", name, entry, hlen, size);
    char hdr[65537], descr[16], fortran[16], shape[128];
    memcpy(hdr, d + off, hlen);
    hdr[hlen] = 0;
    if (dict_value(hdr, "descr", descr, sizeof descr) ||
        dict_value(hdr, "fortran_order", fortran, sizeof fortran) ||
        dict_value(hdr, "shape", shape, sizeof shape))
        return ib_err_set(err, IB_EFORMAT, "%s: %s: .npy header lacks 'descr', 'fortran_order' "
                          "or 'shape': %.80s", name, entry, hdr);
    size_t es = 0;
    bool is_signed = true;
    if (!strcmp(descr, "<i4"))
        es = 4;
    else if (!strcmp(descr, "<i8"))
        es = 8;
    else if (!strcmp(descr, "<u4"))
        es = 4, is_signed = false;
    else if (!strcmp(descr, "<i2"))
        es = 2;
    else if (!strcmp(descr, "|i1"))
        es = 1;
    else if (!strcmp(descr, "|u1"))
        es = 1, is_signed = false;
    else
        return ib_err_set(err, IB_EFORMAT, "%s: %s: dtype '%s' is not a little-endian integer "
                          "type this reader takes (<i4, <i8, <u4, <i2, |i1, |u1)", name, entry,
                          descr);
    if (strcmp(fortran, "False") != 0)
        return ib_err_set(err, IB_EFORMAT, "%s: %s: fortran_order %s is not supported", name, entry,
                          fortran);
    /* shape: "()" (a scalar) or "(N,)" */
    unsigned long long count = 1;
    char tail[8] = "";
    if (strcmp(shape, "()") != 0 &&
        (sscanf(shape, "(%llu%7[,)]", &count, tail) != 2 || (strcmp(tail, ",)") && strcmp(tail, ")"))))
        return ib_err_set(err, IB_EFORMAT, "%s: %s: shape %s is not one-dimensional", name, entry,
                          shape);
    size_t data_off = off + hlen;
    if (count > (size - data_off) / es || (size - data_off) != count * es)
        return ib_err_set(err, IB_EFORMAT, "%s: %s: %llu values of %zu bytes need %llu bytes, the "
                          "entry has %zu after its header", name, entry, count, es,
                          count * (unsigned long long)es, size - data_off);
    int64_t *v = ib_malloc((count ? count : 1) * sizeof *v);
    if (!v)
        return ib_err_set(err, IB_ENOMEM, "%s: %s: out of memory for %llu values", name, entry,
                          count);
    const uint8_t *p = d + data_off;
    for (size_t i = 0; i < count; i++, p += es) {
        uint64_t u = es == 1 ? p[0] : es == 2 ? rd16(p) : es == 4 ? rd32(p) : rd64(p);
        if (is_signed && es < 8 && (u >> (es * 8 - 1)) & 1)
            u |= ~(uint64_t)0 << (es * 8); /* sign-extend */
        v[i] = (int64_t)u;
    }
    *out = v;
    *n_out = (size_t)count;
    return IB_OK;
}

int ib_npz_parse_ints(const char *name, const uint8_t *d, size_t size, const char *key,
                      int64_t **out, size_t *n, ib_err *err)
{
    *out = NULL;
    *n = 0;
    char want[256];
    if (snprintf(want, sizeof want, "%s.npy", key) >= (int)sizeof want)
        return ib_err_set(err, IB_EINVAL, "%s: key '%.40s...' too long", name, key);
    size_t pos = 0;
    int entries = 0;
    while (pos + 4 <= size && rd32(d + pos) == 0x04034b50u) {
        if (size - pos < 30)
            return ib_err_set(err, IB_EFORMAT, "%s: truncated zip local header at byte %zu", name,
                              pos);
        const uint8_t *h = d + pos;
        uint32_t flags = rd16(h + 6), method = rd16(h + 8), crc = rd32(h + 14);
        uint64_t csize = rd32(h + 18), usize = rd32(h + 22);
        size_t nlen = rd16(h + 26), xlen = rd16(h + 28);
        if (size - pos - 30 < nlen + xlen)
            return ib_err_set(err, IB_EFORMAT, "%s: zip entry name/extra runs past the file at "
                              "byte %zu", name, pos);
        char ename[256];
        snprintf(ename, sizeof ename, "%.*s", (int)(nlen < 255 ? nlen : 255), (const char *)h + 30);
        /* zip64 extended information: the 8-byte sizes replace 0xFFFFFFFF fields (APPNOTE
         * 4.5.3: uncompressed first, then compressed) */
        const uint8_t *x = h + 30 + nlen, *xend = x + xlen;
        while (xend - x >= 4) {
            uint32_t id = rd16(x), sz = rd16(x + 2);
            if ((size_t)(xend - x - 4) < sz)
                break;
            if (id == 0x0001) {
                const uint8_t *q = x + 4;
                if (usize == 0xFFFFFFFFu && sz >= 8)
                    usize = rd64(q), q += 8;
                if (csize == 0xFFFFFFFFu && (size_t)(q - x - 4) + 8 <= sz)
                    csize = rd64(q);
            }
            x += 4 + sz;
        }
        if (flags & 1)
            return ib_err_set(err, IB_EFORMAT, "%s: %s: encrypted zip entries are not supported",
                              name, ename);
        if (method != 0 && method != 8)
            return ib_err_set(err, IB_EFORMAT, "%s: %s: zip method %u is not stored (0) or deflate "
                              "(8)", name, ename, method);
        if ((flags & 8) && (csize == 0 || usize == 0))
            return ib_err_set(err, IB_EFORMAT, "%s: %s: sizes only in a data descriptor (streamed "
                              "zip) are not supported; re-save with numpy.savez", name, ename);
        size_t data = pos + 30 + nlen + xlen;
        if (csize > size - data)
            return ib_err_set(err, IB_EFORMAT, "%s: %s: %llu compressed bytes run past the end of "
                              "the file (truncated?)", name, ename, (unsigned long long)csize);
        if (method == 0 && csize != usize)
            return ib_err_set(err, IB_EFORMAT, "%s: %s: stored entry with different sizes", name,
                              ename);
        entries++;
        if (strlen(ename) == nlen && strcmp(ename, want) == 0) {
            if (usize > NPZ_MAX_FILE)
                return ib_err_set(err, IB_EFORMAT, "%s: %s: %llu bytes uncompressed is over the "
                                  "16 GB limit", name, ename, (unsigned long long)usize);
            /* deflate expands at most 1032:1 (RFC 1951 blocks): a larger claim is corrupt, and
             * must not make us allocate it */
            if (method == 8 && usize / 1032 > csize + 1)
                return ib_err_set(err, IB_EFORMAT, "%s: %s: %llu bytes cannot inflate from %llu "
                                  "compressed bytes (corrupt sizes)", name, ename,
                                  (unsigned long long)usize, (unsigned long long)csize);
            uint8_t *buf = ib_malloc(usize ? (size_t)usize : 1);
            if (!buf)
                return ib_err_set(err, IB_ENOMEM, "%s: %s: out of memory", name, ename);
            int rc = IB_OK;
            if (method == 0) {
                memcpy(buf, d + data, (size_t)usize);
            } else {
                rc = inflate_raw(name, ename, d + data, (size_t)csize, (size_t)usize, buf, err);
            }
            if (!rc) {
                uLong c = crc32(0L, Z_NULL, 0);
                for (size_t off = 0; off < usize;) {
                    size_t k = usize - off > UINT_MAX ? UINT_MAX : (size_t)usize - off;
                    c = crc32(c, buf + off, (uInt)k);
                    off += k;
                }
                if ((uint32_t)c != crc)
                    rc = ib_err_set(err, IB_EFORMAT, "%s: %s: CRC-32 mismatch (corrupt file)", name,
                                    ename);
            }
            if (!rc)
                rc = parse_npy(name, ename, buf, (size_t)usize, out, n, err);
            ib_free(buf);
            return rc;
        }
        pos = data + (size_t)csize;
    }
    if (entries == 0)
        return ib_err_set(err, IB_EFORMAT, "%s: not a .npz (zip) file", name);
    return ib_err_set(err, IB_ENOTFOUND, "%s: no array '%s' in the archive (%d entries)", name, key,
                      entries);
}

int ib_npz_read_ints(const char *path, const char *key, int64_t **out, size_t *n, ib_err *err)
{
    *out = NULL;
    *n = 0;
    char *buf = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, NPZ_MAX_FILE, &buf, &len, err);
    if (rc)
        return rc;
    rc = ib_npz_parse_ints(path, (const uint8_t *)buf, len, key, out, n, err);
    ib_free(buf);
    return rc;
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v & 0xFFFF);
    put16(p + 2, v >> 16);
}

int ib_npz_write_i32(const char *path, const char *key, const int32_t *v, size_t n, ib_err *err)
{
    char hdr[256];
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '<i4', 'fortran_order': False, 'shape': (%zu,), }",
                      n);
    size_t pad = 64 - (10 + (size_t)hl + 1) % 64; /* header + '\n' to a multiple of 64 */
    size_t npy_hdr = 10 + (size_t)hl + pad + 1;
    size_t npy = npy_hdr + n * 4;
    char name[256];
    int nl = snprintf(name, sizeof name, "%s.npy", key);
    if (nl >= (int)sizeof name || npy > 0xFFFFFFF0u)
        return ib_err_set(err, IB_EINVAL, "%s: key too long or array too large for a plain zip",
                          path);
    size_t total = 30 + (size_t)nl + npy + 46 + (size_t)nl + 22;
    uint8_t *z = ib_calloc(total, 1);
    if (!z)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", path);
    uint8_t *a = z + 30 + nl; /* the .npy bytes */
    memcpy(a, "\x93NUMPY\x01\x00", 8);
    put16(a + 8, (uint32_t)(hl + pad + 1));
    memcpy(a + 10, hdr, (size_t)hl);
    memset(a + 10 + hl, ' ', pad);
    a[npy_hdr - 1] = '\n';
    for (size_t i = 0; i < n; i++)
        put32(a + npy_hdr + 4 * i, (uint32_t)v[i]);
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), a, (uInt)npy);
    /* local file header */
    put32(z, 0x04034b50u);
    put16(z + 4, 20);
    put32(z + 14, crc);
    put32(z + 18, (uint32_t)npy);
    put32(z + 22, (uint32_t)npy);
    put16(z + 26, (uint32_t)nl);
    memcpy(z + 30, name, (size_t)nl);
    /* central directory entry + end of central directory */
    uint8_t *c = a + npy;
    put32(c, 0x02014b50u);
    put16(c + 4, 20);
    put16(c + 6, 20);
    put32(c + 16, crc);
    put32(c + 20, (uint32_t)npy);
    put32(c + 24, (uint32_t)npy);
    put16(c + 28, (uint32_t)nl);
    memcpy(c + 46, name, (size_t)nl);
    uint8_t *e = c + 46 + nl;
    put32(e, 0x06054b50u);
    put16(e + 8, 1);
    put16(e + 10, 1);
    put32(e + 12, (uint32_t)(46 + nl));
    put32(e + 16, (uint32_t)(c - z));
    int rc = ib_file_write_all(path, z, total, err);
    ib_free(z);
    return rc;
}
