/*
 * cpu_kernels_copy.c - data-movement kernels: strided copies (Transpose of
 * dtypes oneDNN has not, Slice, Expand, Split, Reshape of any dtype), Gather
 * along an axis (also the row gather of embedding tables), ArgMax/ArgMin.
 *
 * Shapes: the destination is dense row-major; the source is addressed by
 * per-dim element strides (0 = broadcast, negative = reversed slice).
 * Rows of the collapsed innermost dim are shared by the OpenMP team; a
 * contiguous innermost dim is a memcpy.
 */
#include <omp.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

void cpu_copy_collapse(cpu_copy_ctx *c)
{
    int m = 0;
    int64_t dims[IB_MAX_DIMS], st[IB_MAX_DIMS];
    for (int i = 0; i < c->nd; i++) {
        if (c->dims[i] == 1 && c->nd > 1)
            continue;
        if (m > 0 && st[m - 1] == c->st[i] * c->dims[i]) {
            dims[m - 1] *= c->dims[i];
            st[m - 1] = c->st[i];
        } else {
            dims[m] = c->dims[i];
            st[m++] = c->st[i];
        }
    }
    if (m == 0) {
        dims[0] = 1;
        st[0] = 1;
        m = 1;
    }
    c->nd = m;
    memcpy(c->dims, dims, sizeof dims);
    memcpy(c->st, st, sizeof st);
}

int cpu_copy_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_copy_ctx *c = kctx;
    int64_t inner = c->dims[c->nd - 1], rows = 1;
    for (int i = 0; i < c->nd - 1; i++)
        rows *= c->dims[i];
    if (inner == 0 || rows == 0)
        return IB_OK;
    size_t es = c->esize;
    int64_t sin = c->st[c->nd - 1];
    int nt = rows < threads ? (int)rows : threads;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0, q = r;
        for (int d = c->nd - 2; d >= 0; d--) {
            off += (q % c->dims[d]) * c->st[d];
            q /= c->dims[d];
        }
        const char *s = (const char *)c->src + off * (int64_t)es;
        char *o = (char *)c->dst + (size_t)(r * inner) * es;
        if (sin == 1) {
            memcpy(o, s, (size_t)inner * es);
        } else if (es == 4) {
            for (int64_t j = 0; j < inner; j++)
                ((uint32_t *)o)[j] = *(const uint32_t *)(s + j * sin * 4);
        } else if (es == 8) {
            for (int64_t j = 0; j < inner; j++)
                ((uint64_t *)o)[j] = *(const uint64_t *)(s + j * sin * 8);
        } else {
            for (int64_t j = 0; j < inner; j++)
                memcpy(o + (size_t)j * es, s + j * sin * (int64_t)es, es);
        }
    }
    return IB_OK;
}

int cpu_gather_run(void *kctx, int threads, ib_err *err)
{
    const cpu_gather_ctx *c = kctx;
    int64_t rows = c->outer * c->n_idx, bad = -1;
    size_t row_bytes = (size_t)c->inner * c->esize;
    int nt = rows < threads ? (int)(rows > 0 ? rows : 1) : threads;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t o = r / c->n_idx, j = r % c->n_idx;
        int64_t k = c->idx64 ? ((const int64_t *)c->idx)[j] : ((const int32_t *)c->idx)[j];
        if (k < 0)
            k += c->axis_len;
        char *dst = (char *)c->out + (size_t)r * row_bytes;
        if (k < 0 || k >= c->axis_len) {
            memset(dst, 0, row_bytes);
#pragma omp atomic write
            bad = j;
            continue;
        }
        memcpy(dst, (const char *)c->data + (size_t)(o * c->axis_len + k) * row_bytes, row_bytes);
    }
    if (bad >= 0) {
        int64_t k = c->idx64 ? ((const int64_t *)c->idx)[bad] : ((const int32_t *)c->idx)[bad];
        return ib_err_set(err, IB_EINVAL,
                          "cpu backend: node '%s' (Gather): index %lld at position %lld is out of "
                          "range [-%lld, %lld)",
                          c->node, (long long)k, (long long)bad, (long long)c->axis_len,
                          (long long)c->axis_len);
    }
    return IB_OK;
}

/* Index r of an int32/int64 index array, wrapped when negative; -1 when out of range. */
static int64_t gc_index(const cpu_gc_part *p, int64_t r)
{
    int64_t k = p->idx64 ? ((const int64_t *)p->idx)[r] : ((const int32_t *)p->idx)[r];
    k += k < 0 ? p->table_rows : 0;
    return k >= 0 && k < p->table_rows ? k : -1;
}

#define CPU_GC_AHEAD 4 /* output rows between a row's prefetch and its copy */

int cpu_gather_concat_run(void *kctx, int threads, ib_err *err)
{
    const cpu_gc_ctx *c = kctx;
    int64_t bad_row = -1;
    uint32_t bad_part = 0;
    int nt = c->rows < threads ? (int)(c->rows > 0 ? c->rows : 1) : threads;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int64_t lo = c->rows * t / n, hi = c->rows * (t + 1) / n;
        for (int64_t r = lo; r < hi; r++) {
            /* the table rows of a later output row are random reads: ask for them now, so
             * every part's miss is in flight at once (hardware prefetchers do not follow
             * data-dependent addresses) */
            if (r + CPU_GC_AHEAD < hi)
                for (uint32_t p = 0; p < c->n_parts; p++) {
                    const cpu_gc_part *q = &c->part[p];
                    int64_t k = q->idx ? gc_index(q, r + CPU_GC_AHEAD) : -1;
                    if (k < 0)
                        continue;
                    const char *s = (const char *)q->src + (size_t)k * q->src_bytes;
                    for (size_t b = 0; b < q->src_bytes; b += 64)
                        __builtin_prefetch(s + b, 0, 0);
                }
            char *dst = (char *)c->out + (size_t)r * c->row_bytes;
            for (uint32_t p = 0; p < c->n_parts; p++) {
                const cpu_gc_part *q = &c->part[p];
                int64_t k = q->idx ? gc_index(q, r) : r;
                if (k < 0) {
                    memset(dst + q->offset, 0, q->bytes);
#pragma omp critical(cpu_gc_bad)
                    {
                        bad_row = r;
                        bad_part = p;
                    }
                    continue;
                }
                const char *src = (const char *)q->src + (size_t)k * q->src_bytes;
                if (q->q8) {
                    size_t width = q->bytes / 4;
                    const uint8_t *u = (const uint8_t *)src;
                    float sc, bi, *o = (float *)(void *)(dst + q->offset);
                    memcpy(&sc, u + width, 4);
                    memcpy(&bi, u + width + 4, 4);
#pragma omp simd
                    for (size_t w = 0; w < width; w++)
                        o[w] = (float)u[w] * sc + bi;
                } else if (q->bf16) { /* bf16 -> float32: the high half of the float's bits */
                    const uint16_t *h = (const uint16_t *)(const void *)src;
                    uint32_t *o = (uint32_t *)(void *)(dst + q->offset);
                    size_t width = q->bytes / 4;
#pragma omp simd
                    for (size_t w = 0; w < width; w++)
                        o[w] = (uint32_t)h[w] << 16;
                } else {
                    memcpy(dst + q->offset, src, q->bytes);
                }
            }
        }
    }
    if (bad_row >= 0) {
        const cpu_gc_part *q = &c->part[bad_part];
        int64_t k = q->idx64 ? ((const int64_t *)q->idx)[bad_row]
                             : ((const int32_t *)q->idx)[bad_row];
        return ib_err_set(err, IB_EINVAL,
                          "cpu backend: node '%s' (GatherConcat): part %u index %lld at row %lld "
                          "is out of range [-%lld, %lld)",
                          c->node, bad_part, (long long)k, (long long)bad_row,
                          (long long)q->table_rows, (long long)q->table_rows);
    }
    return IB_OK;
}

int cpu_arg_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_arg_ctx *c = kctx;
    int64_t cells = c->outer * c->inner;
    int nt = cells < threads ? (int)(cells > 0 ? cells : 1) : threads;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t q = 0; q < cells; q++) {
        int64_t o = q / c->inner, i = q % c->inner;
        const float *x = c->x + o * c->len * c->inner + i;
        int64_t best = 0;
        float bv = x[0];
        for (int64_t k = 1; k < c->len; k++) {
            float v = x[k * c->inner];
            bool better = c->is_max ? (v > bv || (c->last && v == bv))
                                    : (v < bv || (c->last && v == bv));
            if (better) {
                bv = v;
                best = k;
            }
        }
        c->out[q] = best;
    }
    return IB_OK;
}
