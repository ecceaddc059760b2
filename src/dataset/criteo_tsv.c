/*
 * criteo_tsv.c - Criteo day file -> the 40 x int32 binary layout (see criteo_tsv.h;
 * facebookresearch/dlrm data_utils.py getCriteoAdData: blank -> "0", int(x, 16) %
 * max_ind_range; processCriteoAdData: convertDicts[j][x], X_int[X_int < 0] = 0).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/rng.h"
#include "dataset/criteo.h"
#include "dataset/criteo_tsv.h"
#include "dataset/npz.h"
#include "inferbench/base.h"

#define N_FIELDS (1 + IB_CRITEO_DENSE + IB_CRITEO_SPARSE)

/* One feature's dictionary: (value, id) sorted by value. */
typedef struct dict_pair {
    int64_t value;
    int64_t id;
} dict_pair;

typedef struct dict {
    dict_pair *p;
    size_t n;
} dict;

static int cmp_pair(const void *a, const void *b)
{
    int64_t x = ((const dict_pair *)a)->value, y = ((const dict_pair *)b)->value;
    return (x > y) - (x < y);
}

static int load_dict(const char *dir, int j, dict *d, ib_err *err)
{
    char name[64], path[4096];
    snprintf(name, sizeof name, IB_CRITEO_DICT_FMT, j);
    if (ib_path_join(path, sizeof path, dir, name))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    int64_t *u = NULL;
    size_t n = 0;
    int rc = ib_npz_read_ints(path, "unique", &u, &n, err);
    if (rc == IB_ENOTFOUND && !ib_path_exists(path))
        return ib_err_set(err, IB_ENOTFOUND, "%s: missing (the dictionaries of the DLRM "
                          "preprocessing, day_fea_dict_0..25.npz; or convert without them)",
                          path);
    if (rc)
        return rc;
    d->p = ib_malloc((n ? n : 1) * sizeof *d->p);
    if (!d->p) {
        ib_free(u);
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory for %zu entries", path, n);
    }
    for (size_t i = 0; i < n; i++)
        d->p[i] = (dict_pair){u[i], (int64_t)i};
    ib_free(u);
    d->n = n;
    qsort(d->p, n, sizeof *d->p, cmp_pair);
    for (size_t i = 1; i < n; i++)
        if (d->p[i].value == d->p[i - 1].value)
            return ib_err_set(err, IB_EFORMAT, "%s: value %" PRId64 " appears twice (ids %" PRId64
                              " and %" PRId64 "): not a dictionary", path, d->p[i].value,
                              d->p[i - 1].id, d->p[i].id);
    return IB_OK;
}

static int64_t dict_find(const dict *d, int64_t v)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->p[mid].value < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->n && d->p[lo].value == v ? d->p[lo].id : -1;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* Field f of a line: [s, e). Returns the decoded int32 row values into row[f]. */
static int parse_field(const char *tsv, uint64_t line, int f, const char *s, const char *e,
                       const ib_criteo_tsv_opts *o, const dict *dicts, int32_t *out, ib_err *err)
{
    size_t len = (size_t)(e - s);
    if (len == 0) { /* the reference: "" -> "0" */
        s = "0";
        len = 1;
    }
    char buf[40];
    if (len >= sizeof buf)
        return ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": field %d is %zu characters long", tsv,
                          line, f + 1, len);
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end = NULL;
    errno = 0;
    if (f <= IB_CRITEO_DENSE) {
        long long v = strtoll(buf, &end, 10);
        if (errno || *end || v < INT32_MIN || v > INT32_MAX || buf[0] == ' ' || buf[0] == '+')
            return ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": %s '%s' is not a decimal int32",
                              tsv, line, f == 0 ? "label" : "count", buf);
        if (f == 0 && v != 0 && v != 1)
            return ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": label '%s' is not 0 or 1", tsv,
                              line, buf);
        *out = v < 0 ? 0 : (int32_t)v; /* processCriteoAdData: X_int[X_int < 0] = 0 */
        return IB_OK;
    }
    int j = f - 1 - IB_CRITEO_DENSE;
    bool hex = len <= 8;
    for (size_t k = 0; k < len; k++)
        hex &= (buf[k] >= '0' && buf[k] <= '9') || (buf[k] >= 'a' && buf[k] <= 'f') ||
               (buf[k] >= 'A' && buf[k] <= 'F');
    if (!hex)
        return ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": categorical C%d '%s' is not 1-8 "
                              "hex digits", tsv, line, j + 1, buf);
    uint64_t v = strtoull(buf, NULL, 16);
    if (o->max_ind_range)
        v %= o->max_ind_range;
    int64_t id = (int64_t)v;
    if (dicts) {
        id = dict_find(&dicts[j], (int64_t)v);
        if (id < 0)
            return ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": categorical C%d '%s' (%" PRIu64
                              " after %% max_ind_range) is not in " IB_CRITEO_DICT_FMT
                              " (dictionaries from another preprocessing?)", tsv, line, j + 1,
                              buf, v, j);
    }
    if (id > INT32_MAX)
        return ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": categorical C%d '%s' = %" PRId64
                          " does not fit int32 (set max_ind_range)", tsv, line, j + 1, buf, id);
    *out = (int32_t)id;
    return IB_OK;
}

static int convert_lines(FILE *in, FILE *out, const ib_criteo_tsv_opts *o, const dict *dicts,
                         uint64_t total, uint64_t *rows, ib_err *err)
{
    char *ln = NULL;
    size_t cap = 0;
    ssize_t got;
    uint64_t line = 0, bytes = 0;
    int rc = IB_OK;
    uint8_t row[IB_CRITEO_ROW_INTS * 4];
    while (!rc && (!o->max_rows || *rows < o->max_rows) && (got = getline(&ln, &cap, in)) >= 0) {
        line++;
        bytes += (uint64_t)got;
        size_t n = (size_t)got;
        while (n && (ln[n - 1] == '\n' || ln[n - 1] == '\r'))
            n--;
        if (n == 0 && feof(in))
            break; /* a trailing empty line */
        const char *s = ln, *end = ln + n;
        int f = 0;
        for (; f < N_FIELDS && !rc; f++) {
            const char *tab = memchr(s, '\t', (size_t)(end - s));
            const char *fe = tab ? tab : end;
            if (!tab && f < N_FIELDS - 1) {
                rc = ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": %d fields, a Criteo line has "
                                "40 (label, I1-I13, C1-C26)", o->tsv, line, f + 1);
                break;
            }
            int32_t v = 0;
            rc = parse_field(o->tsv, line, f, s, fe, o, dicts, &v, err);
            put32(row + 4 * f, (uint32_t)v);
            s = tab ? tab + 1 : end;
            if (f == N_FIELDS - 1 && tab)
                rc = rc ? rc : ib_err_set(err, IB_EFORMAT, "%s:%" PRIu64 ": more than 40 fields",
                                          o->tsv, line);
        }
        if (rc)
            break;
        if (fwrite(row, sizeof row, 1, out) != 1)
            rc = ib_err_set(err, IB_EIO, "%s: write failed: %s", o->out_bin, strerror(errno));
        (*rows)++;
        if (o->progress && (*rows & ((1u << 20) - 1)) == 0)
            o->progress(o->progress_user, *rows, bytes, total);
    }
    if (!rc && ferror(in))
        rc = ib_err_set(err, IB_EIO, "%s: read error: %s", o->tsv, strerror(errno));
    free(ln);
    if (!rc && o->progress)
        o->progress(o->progress_user, *rows, bytes, total);
    return rc;
}

int ib_criteo_tsv_convert(const ib_criteo_tsv_opts *o, uint64_t *rows_out, ib_err *err)
{
    *rows_out = 0;
    if (!o || !o->tsv || !o->out_bin)
        return ib_err_set(err, IB_EINVAL, "criteo tsv: input and output paths are required");
    FILE *in = fopen(o->tsv, "r");
    if (!in)
        return ib_err_set(err, errno == ENOENT ? IB_ENOTFOUND : IB_EIO, "%s: %s", o->tsv,
                          strerror(errno));
    struct stat st;
    uint64_t total = fstat(fileno(in), &st) == 0 ? (uint64_t)st.st_size : 0;
    dict *dicts = NULL;
    int rc = IB_OK;
    if (o->dict_dir) {
        dicts = ib_calloc(IB_CRITEO_SPARSE, sizeof *dicts);
        if (!dicts)
            rc = ib_err_set(err, IB_ENOMEM, "criteo tsv: out of memory");
        for (int j = 0; !rc && j < IB_CRITEO_SPARSE; j++)
            rc = load_dict(o->dict_dir, j, &dicts[j], err);
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->out_bin);
    FILE *out = rc ? NULL : fopen(tmp, "wb");
    if (!rc && !out)
        rc = ib_err_set(err, IB_EIO, "%s: %s", tmp, strerror(errno));
    if (!rc)
        rc = convert_lines(in, out, o, dicts, total, rows_out, err);
    if (out && fclose(out) != 0 && !rc)
        rc = ib_err_set(err, IB_EIO, "%s: %s", tmp, strerror(errno));
    if (!rc && *rows_out == 0)
        rc = ib_err_set(err, IB_EFORMAT, "%s: no rows", o->tsv);
    if (!rc && rename(tmp, o->out_bin) != 0)
        rc = ib_err_set(err, IB_EIO, "%s: %s", o->out_bin, strerror(errno));
    if (rc)
        remove(tmp);
    fclose(in);
    for (int j = 0; dicts && j < IB_CRITEO_SPARSE; j++)
        ib_free(dicts[j].p);
    ib_free(dicts);
    return rc;
}

/* ---- synthetic ------------------------------------------------------------------------ */

/* Dictionary value of id i in table j: distinct per i (7919 is prime to 40,000,000), 0 for
 * id 0 so that blank fields (value 0) map to id 0. */
static uint32_t dict_value_of(uint64_t i, int j)
{
    return i == 0 ? 0 : (uint32_t)((i * 7919u + (uint64_t)j * 104729u) % IB_CRITEO_MAX_IND_RANGE);
}

static int synth_files(const char *dir, uint64_t rows, const uint64_t *table_rows,
                       uint64_t seed, FILE *tsv, FILE *bin, ib_err *err)
{
    uint64_t x = seed ^ 0x7e57c0debeefull;
    uint64_t dsize[IB_CRITEO_SPARSE];
    for (int j = 0; j < IB_CRITEO_SPARSE; j++)
        dsize[j] = table_rows[j] < 997 ? (table_rows[j] ? table_rows[j] : 1) : 997;
    uint8_t row[IB_CRITEO_ROW_INTS * 4];
    for (uint64_t r = 0; r < rows; r++) {
        int32_t label = ib_splitmix64(&x) % 4 == 0;
        fprintf(tsv, "%d", label);
        put32(row, (uint32_t)label);
        for (int f = 1; f <= IB_CRITEO_DENSE; f++) {
            uint64_t k = ib_splitmix64(&x) % 16;
            int32_t v = (int32_t)(ib_splitmix64(&x) % 1000);
            if (k == 0) /* blank */
                fputc('\t', tsv), v = 0;
            else if (k == 1) /* negative: clipped to 0 */
                fprintf(tsv, "\t-%d", v + 1), v = 0;
            else
                fprintf(tsv, "\t%d", v);
            put32(row + 4 * f, (uint32_t)v);
        }
        for (int j = 0; j < IB_CRITEO_SPARSE; j++) {
            uint64_t id = ib_splitmix64(&x) % dsize[j];
            uint64_t k = ib_splitmix64(&x) % 12;
            if (k == 0) {
                id = 0; /* blank -> value 0 -> id 0 */
                fputc('\t', tsv);
            } else {
                /* a raw hash whose value % 40 M is the dictionary value (some above 40 M) */
                uint64_t raw = dict_value_of(id, j) +
                               (uint64_t)IB_CRITEO_MAX_IND_RANGE * (ib_splitmix64(&x) % 107);
                fprintf(tsv, k == 1 ? "\t%08" PRIX64 : "\t%08" PRIx64, raw);
            }
            put32(row + 4 * (1 + IB_CRITEO_DENSE + j), (uint32_t)id);
        }
        fputc('\n', tsv);
        if (fwrite(row, sizeof row, 1, bin) != 1)
            return ib_err_set(err, IB_EIO, "%s: write failed", dir);
    }
    for (int j = 0; j < IB_CRITEO_SPARSE; j++) {
        int32_t *u = ib_malloc(dsize[j] * sizeof *u);
        if (!u)
            return ib_err_set(err, IB_ENOMEM, "out of memory");
        for (uint64_t i = 0; i < dsize[j]; i++)
            u[i] = (int32_t)dict_value_of(i, j);
        char name[64], path[4096];
        snprintf(name, sizeof name, IB_CRITEO_DICT_FMT, j);
        int rc = ib_path_join(path, sizeof path, dir, name);
        rc = rc ? ib_err_set(err, IB_EINVAL, "%s: path too long", dir)
                : ib_npz_write_i32(path, "unique", u, dsize[j], err);
        ib_free(u);
        if (rc)
            return rc;
    }
    return IB_OK;
}

int ib_criteo_tsv_synthesize(const char *dir, uint64_t rows, const uint64_t *table_rows,
                             uint64_t seed, ib_err *err)
{
    if (!rows || !table_rows)
        return ib_err_set(err, IB_EINVAL, "criteo tsv synthesize: rows and table sizes needed");
    int rc = ib_mkdirs(dir, err);
    if (rc)
        return rc;
    char p_tsv[4096], p_bin[4096], p_trace[4096];
    if (ib_path_join(p_tsv, sizeof p_tsv, dir, IB_CRITEO_TSV_DAY) ||
        ib_path_join(p_bin, sizeof p_bin, dir, "expected.bin") ||
        ib_path_join(p_trace, sizeof p_trace, dir, IB_CRITEO_TRACE))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    FILE *tsv = fopen(p_tsv, "w"), *bin = fopen(p_bin, "wb"), *tr = fopen(p_trace, "w");
    if (!tsv || !bin || !tr)
        rc = ib_err_set(err, IB_EIO, "%s: cannot create the synthetic files: %s", dir,
                        strerror(errno));
    if (!rc)
        rc = synth_files(dir, rows, table_rows, seed, tsv, bin, err);
    /* the trace: consecutive samples of 1..7 pairs ("start, end, count") */
    uint64_t x = seed, start = 0;
    while (!rc && start < rows) {
        uint64_t c = 1 + ib_splitmix64(&x) % 7;
        c = c < rows - start ? c : rows - start;
        fprintf(tr, "%" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n", start, start + c, c);
        start += c;
    }
    int c1 = tsv ? fclose(tsv) : 0, c2 = bin ? fclose(bin) : 0, c3 = tr ? fclose(tr) : 0;
    if (!rc && (c1 || c2 || c3))
        rc = ib_err_set(err, IB_EIO, "%s: write failed", dir);
    return rc;
}
