/*
 * accuracy_log.c - the accuracy JSON writer, with the official spacing and
 * hex encoding (logging.cc LogAccuracy, LogBinaryAsHexString). The official
 * writes entries in completion order; here a series' entries are written
 * after it ends, sorted by seq_id (consumers key on seq_id/qsl_idx, and the
 * TEST01 unix-mode verifier only needs one entry per line).
 */
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "loadgen/accuracy_log.h"
#include "loadgen/engine_internal.h"

static void put(ib_lg_acc_writer *w, const char *s, size_t n)
{
    if (!w->f || w->io_error)
        return;
    if (fwrite(s, 1, n, w->f) != n)
        w->io_error = IB_EIO;
}

int ib_lg_acc_begin(ib_lg_acc_writer *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    put(w, "[", 1);
    return w->io_error;
}

int ib_lg_acc_entry(ib_lg_acc_writer *w, uint64_t seq, uint64_t qsl_idx, const uint8_t *data,
                    size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    char head[96];
    int n = snprintf(head, sizeof head, "%s{ \"seq_id\" : %llu, \"qsl_idx\" : %llu, \"data\" : \"",
                     w->need_comma ? ",\n" : "\n", (unsigned long long)seq,
                     (unsigned long long)qsl_idx);
    put(w, head, (size_t)n);
    char chunk[512];
    size_t k = 0;
    for (size_t i = 0; i < size; i++) {
        chunk[k++] = hex[data[i] >> 4];
        chunk[k++] = hex[data[i] & 15];
        if (k == sizeof chunk) {
            put(w, chunk, k);
            k = 0;
        }
    }
    put(w, chunk, k);
    put(w, "\" }", 3);
    w->need_comma = true;
    w->entries++;
    return w->io_error;
}

static int cmp_rec(const void *a, const void *b)
{
    uint64_t x = ((const ib_lg_acc_rec *)a)->seq, y = ((const ib_lg_acc_rec *)b)->seq;
    return x < y ? -1 : x > y;
}

/* QSL index of a logged sequence id (the issuer's list is in seq order). */
static bool find_qsl(const ib_lg_srt *s, uint64_t seq, uint64_t *qsl)
{
    size_t lo = 0, hi = (size_t)s->nlogged;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->logged[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->nlogged && s->logged[lo].seq == seq) {
        *qsl = s->logged[lo].qsl_idx;
        return true;
    }
    return false;
}

int ib_lg_acc_write_series(ib_lg_acc_writer *w, ib_lg_srt *s)
{
    if (!s->recs)
        return w->io_error;
    uint64_t n = atomic_load(&s->nrecs);
    if (n > s->rec_cap)
        n = s->rec_cap;
    qsort(s->recs, (size_t)n, sizeof *s->recs, cmp_rec);
    for (uint64_t i = 0; i < n; i++) {
        const ib_lg_acc_rec *r = &s->recs[i];
        uint64_t qsl = 0;
        if (!find_qsl(s, r->seq, &qsl))
            continue; /* cannot happen: only logged samples get records */
        if (r->off == UINT64_MAX) {
            w->dropped++;
            ib_lg_acc_entry(w, r->seq, qsl, NULL, 0);
            continue;
        }
        ib_lg_acc_entry(w, r->seq, qsl, s->arena + r->off, (size_t)r->size);
    }
    return w->io_error;
}

int ib_lg_acc_end(ib_lg_acc_writer *w)
{
    put(w, "\n]\n", 3);
    if (w->f && fflush(w->f) != 0 && !w->io_error)
        w->io_error = IB_EIO;
    return w->io_error;
}
