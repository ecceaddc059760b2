/*
 * cpu_kernels_norm.c - InstanceNormalization (+ Relu / LeakyRelu) over a plain
 * [N, C, S] or channels-last [N, S, C] volume, float32 or bfloat16.
 *
 * Two passes over the data instead of oneDNN's three (mean, variance,
 * normalise) plus a separate activation: pass 1 accumulates per channel
 * the sums of x - k and (x - k)^2, k being the channel's first voxel (a
 * shift that keeps E[d^2] - E[d]^2 from cancelling when the mean is large
 * next to the spread), in float32 over blocks of 64 rows or 1024 voxels
 * and in double across blocks and threads; pass 2 writes
 * act((x - mean) * scale / sqrt(var + eps) + bias). Variance is the biased
 * one, as ONNX defines it.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

#define ROW_BLOCK  64   /* channels-last rows per float32 partial sum */
#define PLAIN_TILE 1024 /* plain voxels per float32 partial sum (and bf16 staging) */

/* bfloat16 <-> float32 over a row (graph.h's conversions, vectorised here). */
static CPU_CLONES void bf16_to_f32(const uint16_t *h, float *f, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        f[i] = ib_bf16_to_f32(h[i]);
}

static CPU_CLONES void f32_to_bf16(const float *f, uint16_t *h, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        h[i] = ib_f32_to_bf16(f[i]);
}

/* n elements of x from element off as float32: in place, or staged in tmp. */
static const float *load(const cpu_inorm_ctx *k, int64_t off, int64_t n, float *tmp)
{
    if (!k->bf16) return (const float *)k->x + off;
    bf16_to_f32((const uint16_t *)k->x + off, tmp, n);
    return tmp;
}

/* Where to compute n outputs at element off (y itself for float32). */
static float *out_of(const cpu_inorm_ctx *k, int64_t off, float *tmp)
{
    return k->bf16 ? tmp : (float *)k->y + off;
}

static void store(const cpu_inorm_ctx *k, int64_t off, int64_t n, const float *v)
{
    if (k->bf16) f32_to_bf16(v, (uint16_t *)k->y + off, n);
}

/* f1, f2 = per channel sums of d and d^2 over rows x [rows, C], d = x - shift. */
static CPU_CLONES void acc_rows(const float *x, int64_t rows, int64_t C, const float *shift,
                            float *f1, float *f2)
{
    int64_t c0 = 0;
    for (; c0 + 16 <= C; c0 += 16) { /* 16 channels in registers across the rows */
        float a1[16] = {0}, a2[16] = {0};
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = x + r * C + c0;
#pragma omp simd
            for (int j = 0; j < 16; j++) {
                float d = xr[j] - shift[c0 + j];
                a1[j] += d;
                a2[j] += d * d;
            }
        }
        memcpy(f1 + c0, a1, sizeof a1);
        memcpy(f2 + c0, a2, sizeof a2);
    }
    for (int64_t c = c0; c < C; c++) {
        float a1 = 0, a2 = 0;
        for (int64_t r = 0; r < rows; r++) {
            float d = x[r * C + c] - shift[c];
            a1 += d;
            a2 += d * d;
        }
        f1[c] = a1;
        f2[c] = a2;
    }
}

/* s1, s2 += sums of d and d^2 over x[0..n), d = x - shift. */
static CPU_CLONES void acc_flat(const float *x, int64_t n, float shift, double *s1, double *s2)
{
    float a1[16] = {0}, a2[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
#pragma omp simd
        for (int j = 0; j < 16; j++) {
            float d = x[i + j] - shift;
            a1[j] += d;
            a2[j] += d * d;
        }
    for (; i < n; i++) {
        float d = x[i] - shift;
        a1[0] += d;
        a2[0] += d * d;
    }
    for (int j = 0; j < 16; j++) {
        *s1 += (double)a1[j];
        *s2 += (double)a2[j];
    }
}

static inline float act1(int act, float alpha, float v)
{
    if (act == CPU_INORM_RELU) return v > 0.0f ? v : 0.0f;
    if (act == CPU_INORM_LEAKY) return v >= 0.0f ? v : v * alpha;
    return v;
}

/* y[r, c] = act((x[r, c] - mu[c]) * a[c] + b[c]) over [rows, C]. */
static CPU_CLONES void apply_rows(const float *x, float *y, int64_t rows, int64_t C,
                              const float *mu, const float *a, const float *b, int act,
                              float alpha)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
#pragma omp simd
        for (int64_t c = 0; c < C; c++)
            yr[c] = act1(act, alpha, (xr[c] - mu[c]) * a[c] + b[c]);
    }
}

/* y[i] = act((x[i] - mu) * a + b) over [0, n). */
static CPU_CLONES void apply_flat(const float *x, float *y, int64_t n, float mu, float a, float b,
                              int act, float alpha)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        y[i] = act1(act, alpha, (x[i] - mu) * a + b);
}

/* mean and scale / sqrt(var + eps) of one channel from the shifted sums. */
static void finish(const cpu_inorm_ctx *k, int64_t c, float shift, double s1, double s2,
                   float *mu, float *a)
{
    double S = (double)k->S, m = s1 / S, var = s2 / S - m * m;
    if (var < 0) var = 0;
    *mu = (float)((double)shift + m);
    *a = (float)((double)k->scale[c] / sqrt(var + (double)k->eps));
}

/* ---- channels-last [N, S, C]: blocks of ROW_BLOCK rows ---------------------------- */

static void cl_stats(const cpu_inorm_ctx *k, int64_t n, int nt)
{
    int64_t C = k->C, S = k->S, base = n * S * C;
    float *shift = k->mu + n * C; /* the first row, replaced by the mean below */
    const float *r0 = load(k, base, C, k->tmp);
    memmove(shift, r0, (size_t)C * sizeof *shift);
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        double *d1 = k->part + (size_t)t * 2 * (size_t)C, *d2 = d1 + C;
        float *f1 = k->fpart + (size_t)t * 2 * (size_t)C, *f2 = f1 + C,
              *tmp = k->tmp + (size_t)t * (size_t)k->tmp_per_thread;
        memset(d1, 0, 2 * (size_t)C * sizeof *d1);
        int64_t lo = S * t / T, hi = S * (t + 1) / T;
        for (int64_t b = lo; b < hi; b += ROW_BLOCK) {
            int64_t rows = hi - b < ROW_BLOCK ? hi - b : ROW_BLOCK;
            acc_rows(load(k, base + b * C, rows * C, tmp), rows, C, shift, f1, f2);
            for (int64_t c = 0; c < C; c++) {
                d1[c] += (double)f1[c];
                d2[c] += (double)f2[c];
            }
        }
    }
    for (int64_t c = 0; c < C; c++) {
        double s1 = 0, s2 = 0;
        for (int t = 0; t < nt; t++) {
            s1 += k->part[(size_t)t * 2 * (size_t)C + (size_t)c];
            s2 += k->part[(size_t)t * 2 * (size_t)C + (size_t)(C + c)];
        }
        finish(k, c, shift[c], s1, s2, &k->mu[n * C + c], &k->a[n * C + c]);
    }
}

static void cl_apply(const cpu_inorm_ctx *k, int64_t n, int nt)
{
    int64_t C = k->C, S = k->S, base = n * S * C, blocks = (S + ROW_BLOCK - 1) / ROW_BLOCK;
    const float *mu = k->mu + n * C, *a = k->a + n * C;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        float *tx = k->tmp + (size_t)t * (size_t)k->tmp_per_thread, *ty = tx + ROW_BLOCK * C;
#pragma omp for schedule(static)
        for (int64_t bl = 0; bl < blocks; bl++) {
            int64_t r0 = bl * ROW_BLOCK, rows = S - r0 < ROW_BLOCK ? S - r0 : ROW_BLOCK;
            int64_t off = base + r0 * C;
            float *y = out_of(k, off, ty);
            apply_rows(load(k, off, rows * C, tx), y, rows, C, mu, a, k->bias, k->act,
                       k->alpha);
            store(k, off, rows * C, y);
        }
    }
}

/* ---- plain [N, C, S]: one (n, c) row per iteration -------------------------------- */

static void plain_row(const cpu_inorm_ctx *k, int64_t row, float *tx, float *ty)
{
    int64_t S = k->S, c = row % k->C, base = row * S;
    float shift = load(k, base, 1, tx)[0];
    double s1 = 0, s2 = 0;
    for (int64_t b = 0; b < S; b += PLAIN_TILE) {
        int64_t n = S - b < PLAIN_TILE ? S - b : PLAIN_TILE;
        acc_flat(load(k, base + b, n, tx), n, shift, &s1, &s2);
    }
    float mu, a;
    finish(k, c, shift, s1, s2, &mu, &a);
    for (int64_t b = 0; b < S; b += PLAIN_TILE) {
        int64_t n = S - b < PLAIN_TILE ? S - b : PLAIN_TILE;
        float *y = out_of(k, base + b, ty);
        apply_flat(load(k, base + b, n, tx), y, n, mu, a, k->bias[c], k->act, k->alpha);
        store(k, base + b, n, y);
    }
}

int cpu_inorm_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_inorm_ctx *k = kctx;
    if (k->S <= 0 || k->N * k->C <= 0) return IB_OK;
    int nt = threads < k->max_threads ? threads : k->max_threads;
    if (nt < 1) nt = 1;
    if (k->cl) {
        for (int64_t n = 0; n < k->N; n++) {
            cl_stats(k, n, nt);
            cl_apply(k, n, nt);
        }
        return IB_OK;
    }
    int64_t rows = k->N * k->C;
    if (rows < nt) nt = (int)rows;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        float *tx = k->tmp + (size_t)t * (size_t)k->tmp_per_thread, *ty = tx + PLAIN_TILE;
#pragma omp for schedule(dynamic, 1)
        for (int64_t r = 0; r < rows; r++)
            plain_row(k, r, tx, ty);
    }
    return IB_OK;
}

size_t cpu_inorm_scratch_floats(bool cl, int64_t C)
{
    return cl ? 2 * ROW_BLOCK * (size_t)C : 2 * (size_t)PLAIN_TILE;
}
