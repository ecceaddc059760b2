/*
 * criteo.c - Criteo Terabyte binary rows + aggregation trace (see criteo.h;
 * benchmarks.md §1.4: 89,137,319 pairs = 330,067 samples of up to 700 pairs).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/rng.h"
#include "dataset/criteo.h"
#include "inferbench/base.h"

#define ROW_BYTES (IB_CRITEO_ROW_INTS * 4)
#define MAX_PAIRS 700 /* the rules: a sample is up to 700 user-item pairs */
#define TRACE_MAX (64u << 20)

struct ib_criteo {
    int fd;
    uint64_t rows, cap;
    size_t n;
    uint64_t *start; /* n + 1 */
    uint64_t *first_row; /* n: the trace's start row of sample i */
    char bin[4096];
};

static int parse_trace(ib_criteo *c, const char *path, const char *text, size_t len,
                       ib_err *err)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    lines++;
    c->start = ib_calloc(lines + 1, sizeof *c->start);
    c->first_row = ib_calloc(lines, sizeof *c->first_row);
    if (!c->start || !c->first_row)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory for %zu samples", path, lines);
    const char *p = text, *end = text + len;
    size_t line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        line++;
        char buf[128];
        int blank = 1;
        for (size_t k = 0; k < l; k++)
            blank &= p[k] == ' ' || p[k] == '\r' || p[k] == '\t';
        if (!blank) {
            if (l >= sizeof buf)
                return ib_err_set(err, IB_EFORMAT, "%s:%zu: line too long for \"start, end, "
                                  "count\"", path, line);
            memcpy(buf, p, l);
            buf[l] = 0;
            unsigned long long a, b, cnt;
            int used = 0;
            if (sscanf(buf, " %llu , %llu , %llu %n", &a, &b, &cnt, &used) != 3 ||
                buf[used] != 0 || strchr(buf, '-'))
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%zu: expected \"start, end, count\" (three non-negative "
                                  "integers), got \"%s\"", path, line, buf);
            if (b <= a || cnt != b - a)
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%zu: count %llu does not equal end - start (%llu - %llu)",
                                  path, line, cnt, b, a);
            if (cnt > MAX_PAIRS)
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%zu: %llu pairs in one sample; the rules allow up to %d",
                                  path, line, cnt, MAX_PAIRS);
            if (b > c->rows)
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%zu: sample ends at row %llu but %s has %llu rows (wrong "
                                  "or truncated binary file?)", path, line, b, c->bin,
                                  (unsigned long long)c->rows);
            c->first_row[c->n] = a;
            c->start[c->n + 1] = c->start[c->n] + cnt;
            c->n++;
        }
        p += l + 1;
    }
    if (!c->n)
        return ib_err_set(err, IB_EFORMAT, "%s: no samples (empty trace)", path);
    return IB_OK;
}

int ib_criteo_open(const char *dir, uint64_t row_cap, ib_criteo **out, ib_err *err)
{
    *out = NULL;
    ib_criteo *c = ib_calloc(1, sizeof *c);
    if (!c)
        return ib_err_set(err, IB_ENOMEM, "criteo: out of memory");
    c->fd = -1;
    c->cap = row_cap;
    char trace[4096];
    int rc = IB_OK;
    if (ib_path_join(c->bin, sizeof c->bin, dir, IB_CRITEO_BIN) ||
        ib_path_join(trace, sizeof trace, dir, IB_CRITEO_TRACE)) {
        rc = ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
        goto fail;
    }
    c->fd = open(c->bin, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (c->fd < 0 || fstat(c->fd, &st)) {
        rc = ib_err_set(err, errno == ENOENT ? IB_ENOTFOUND : IB_EIO,
                        "%s: %s (the DLRM dataset folder holds %s and %s)", c->bin,
                        strerror(errno), IB_CRITEO_BIN, IB_CRITEO_TRACE);
        goto fail;
    }
    if (st.st_size % ROW_BYTES || st.st_size == 0) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: %lld bytes is not a whole number of %d-byte rows (40 int32: "
                        "label, 13 dense, 26 categorical); the file is truncated or not the "
                        "preprocessed binary layout", c->bin, (long long)st.st_size, ROW_BYTES);
        goto fail;
    }
    c->rows = (uint64_t)st.st_size / ROW_BYTES;
    char *text = NULL;
    size_t len = 0;
    rc = ib_file_read_all(trace, TRACE_MAX, &text, &len, err);
    if (rc)
        goto fail;
    rc = parse_trace(c, trace, text, len, err);
    ib_free(text);
    if (rc)
        goto fail;
    *out = c;
    return IB_OK;
fail:
    ib_criteo_close(c);
    return rc;
}

int ib_criteo_trace_check(const char *name, const char *text, size_t len, uint64_t rows,
                          size_t *n_samples, ib_err *err)
{
    ib_criteo c;
    memset(&c, 0, sizeof c);
    c.rows = rows;
    snprintf(c.bin, sizeof c.bin, "the binary file");
    int rc = parse_trace(&c, name, text, len, err);
    *n_samples = rc ? 0 : c.n;
    ib_free(c.start);
    ib_free(c.first_row);
    return rc;
}

void ib_criteo_close(ib_criteo *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    ib_free(c->start);
    ib_free(c->first_row);
    ib_free(c);
}

size_t ib_criteo_samples(const ib_criteo *c) { return c->n; }
const uint64_t *ib_criteo_pair_starts(const ib_criteo *c) { return c->start; }
uint64_t ib_criteo_rows(const ib_criteo *c) { return c->rows; }

static int32_t le32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

int ib_criteo_load(const ib_criteo *c, size_t i, float *dense, int64_t *sparse, float *labels,
                   ib_err *err)
{
    if (i >= c->n)
        return ib_err_set(err, IB_EINVAL, "criteo: sample %zu of %zu", i, c->n);
    size_t m = (size_t)(c->start[i + 1] - c->start[i]);
    uint8_t buf[MAX_PAIRS * ROW_BYTES];
    off_t off = (off_t)(c->first_row[i] * ROW_BYTES);
    size_t want = m * ROW_BYTES, got = 0;
    while (got < want) {
        ssize_t r = pread(c->fd, buf + got, want - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return ib_err_set(err, IB_EIO, "%s: reading sample %zu (rows %llu..): %s", c->bin,
                              i, (unsigned long long)c->first_row[i],
                              r < 0 ? strerror(errno) : "file shrank while open");
        got += (size_t)r;
    }
    for (size_t k = 0; k < m; k++) {
        const uint8_t *row = buf + k * ROW_BYTES;
        unsigned long long rowno = (unsigned long long)(c->first_row[i] + k);
        int32_t lab = le32(row);
        if (lab != 0 && lab != 1)
            return ib_err_set(err, IB_EFORMAT, "%s: row %llu: label %d is not 0 or 1", c->bin,
                              rowno, lab);
        if (labels)
            labels[k] = (float)lab;
        for (int d = 0; d < IB_CRITEO_DENSE; d++) {
            int32_t x = le32(row + 4 * (1 + d));
            if (x < 0)
                return ib_err_set(err, IB_EFORMAT,
                                  "%s: row %llu: dense feature %d is %d (the preprocessed file "
                                  "clips counts at 0)", c->bin, rowno, d, x);
            dense[k * IB_CRITEO_DENSE + (size_t)d] = (float)log((double)x + 1.0);
        }
        for (int s = 0; s < IB_CRITEO_SPARSE; s++) {
            int32_t x = le32(row + 4 * (1 + IB_CRITEO_DENSE + s));
            if (x < 0)
                return ib_err_set(err, IB_EFORMAT,
                                  "%s: row %llu: categorical feature %d has id %d (ids are "
                                  "non-negative)", c->bin, rowno, s, x);
            sparse[k * IB_CRITEO_SPARSE + (size_t)s] =
                c->cap ? (int64_t)((uint64_t)x % c->cap) : (int64_t)x;
        }
    }
    return IB_OK;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

int ib_criteo_synthesize(const char *dir, size_t n_samples, unsigned min_pairs,
                         unsigned max_pairs, const uint64_t *table_rows, uint64_t seed,
                         ib_err *err)
{
    int ok = n_samples && min_pairs && min_pairs <= max_pairs && max_pairs <= MAX_PAIRS &&
             table_rows;
    for (int s = 0; ok && s < IB_CRITEO_SPARSE; s++)
        ok = table_rows[s] && table_rows[s] <= INT32_MAX;
    if (!ok)
        return ib_err_set(err, IB_EINVAL, "criteo synth: bad sizes");
    int rc = ib_mkdirs(dir, err);
    if (rc)
        return rc;
    char bin[4096], trace[4096];
    if (ib_path_join(bin, sizeof bin, dir, IB_CRITEO_BIN) ||
        ib_path_join(trace, sizeof trace, dir, IB_CRITEO_TRACE))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    FILE *fb = fopen(bin, "wb"), *ft = fopen(trace, "w");
    uint64_t x = seed, row = 0;
    uint8_t r[ROW_BYTES];
    for (size_t i = 0; fb && ft && i < n_samples; i++) {
        unsigned m = min_pairs + (unsigned)(ib_splitmix64(&x) % (max_pairs - min_pairs + 1));
        fprintf(ft, "%llu, %llu, %u\n", (unsigned long long)row,
                (unsigned long long)(row + m), m);
        for (unsigned k = 0; k < m; k++, row++) {
            put32(r, ib_splitmix64(&x) % 4 == 0);
            for (int d = 0; d < IB_CRITEO_DENSE; d++)
                put32(r + 4 * (1 + d), (uint32_t)(ib_splitmix64(&x) % 1001));
            for (int s = 0; s < IB_CRITEO_SPARSE; s++)
                put32(r + 4 * (1 + IB_CRITEO_DENSE + s), (uint32_t)(ib_splitmix64(&x) % table_rows[s]));
            fwrite(r, 1, sizeof r, fb);
        }
    }
    int bad = !fb || !ft;
    if (fb)
        bad |= fclose(fb) != 0;
    if (ft)
        bad |= fclose(ft) != 0;
    if (bad)
        return ib_err_set(err, IB_EIO, "%s: writing the synthetic Criteo files: %s", dir,
                          strerror(errno));
    return IB_OK;
}
