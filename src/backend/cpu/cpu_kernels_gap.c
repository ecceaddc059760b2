/*
 * cpu_kernels_gap.c - the global average pool: the mean of each (n, c) plane of a float32
 * [N, C, S...] tensor, held plain (planes contiguous) or as nChw16c (16 channels side by
 * side per spatial position, as the convolutions before it leave it: dnnl_conv.c), into a
 * plain [N, C]. ReduceMean over the spatial axes and GlobalAveragePool (ResNet50's head)
 * take it: oneDNN 2.6's reduction ran ResNet50's [32, 2048, 7, 7] in 9 ms plus a 4 ms
 * reorder; this reads the 12.8 MB once.
 */
#include "backend/cpu/cpu_kernels.h"

/* acc[0..15] = sum over s of x[s * 16 + l]. */
static CPU_CLONES void sum16(const float *x, int64_t S, float *acc)
{
    float a[16] = {0};
    for (int64_t s = 0; s < S; s++)
#pragma omp simd
        for (int l = 0; l < 16; l++)
            a[l] += x[s * 16 + l];
    for (int l = 0; l < 16; l++)
        acc[l] = a[l];
}

static CPU_CLONES float sum_plane(const float *x, int64_t S)
{
    float a = 0;
#pragma omp simd reduction(+ : a)
    for (int64_t s = 0; s < S; s++)
        a += x[s];
    return a;
}

int cpu_gap_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_gap_ctx *c = kctx;
    float inv = c->S > 0 ? 1.0f / (float)c->S : 0.0f;
    if (c->blocked) {
        int64_t cb = (c->C + 15) / 16, jobs = c->N * cb;
        int nt = jobs < threads ? (int)(jobs > 0 ? jobs : 1) : threads;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t j = 0; j < jobs; j++) {
            int64_t n = j / cb, b = j % cb;
            float acc[16];
            sum16(c->x + j * c->S * 16, c->S, acc);
            for (int64_t l = 0; l < 16 && b * 16 + l < c->C; l++)
                c->y[n * c->C + b * 16 + l] = acc[l] * inv;
        }
        return IB_OK;
    }
    int64_t jobs = c->N * c->C;
    int nt = jobs < threads ? (int)(jobs > 0 ? jobs : 1) : threads;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t j = 0; j < jobs; j++)
        c->y[j] = sum_plane(c->x + j * c->S, c->S) * inv;
    return IB_OK;
}

int cpu_gap_compile(cpu_exec *e, cpu_val *x, cpu_val *y, ib_err *err)
{
    const ib_tensor_desc *d = &x->desc;
    if (d->dtype != IB_DTYPE_FLOAT32 || d->ndim < 3 || x->qscale != 1.0f ||
        cpu_keep_dt(x) != dnnl_f32 ||
        ib_tensor_desc_numel(&y->desc) != d->dims[0] * d->dims[1])
        return IB_EUNSUPPORTED;
    cpu_gap_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    k->N = d->dims[0];
    k->C = d->dims[1];
    k->S = 1;
    for (int i = 2; i < d->ndim; i++)
        k->S *= d->dims[i];
    dnnl_memory_desc_t blk;
    k->blocked = x->ready && !x->cdata && d->ndim == 4 &&
                 !cpu_md_tag(&blk, 4, d->dims, dnnl_f32, dnnl_nChw16c) &&
                 dnnl_memory_desc_equal(&x->md, &blk);
    const void *xp = NULL;
    void *yp = NULL;
    int rc = IB_OK;
    if (k->blocked) {
        dnnl_memory_t m;
        void *p = NULL;
        if (!(rc = cpu_use(e, x, &blk, 1.0f, &m, err)))
            dnnl_memory_get_data_handle(m, &p);
        xp = p;
    } else {
        rc = cpu_use_plain(e, x, dnnl_f32, &xp, err);
    }
    if (!rc)
        rc = cpu_def_plain(e, y, &yp, err);
    if (rc) {
        ib_free(k);
        return rc;
    }
    k->x = xp;
    k->y = yp;
    return cpu_add_kernel(e, cpu_gap_run, k, err);
}
