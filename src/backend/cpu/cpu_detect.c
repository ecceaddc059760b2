/*
 * cpu_detect.c - inferbench.SSDPostprocess on the cpu backend (ir/ops/detect.c): the images
 * of a batch in parallel, each through ir/ops/ssd_post.c's decode + NMS with a workspace
 * made at compile time (graph_run allocates nothing), so the cpu gives the reference
 * kernel's detections exactly.
 */
#include <omp.h>

#include "backend/cpu/cpu_internal.h"
#include "ir/ops/ssd_post.h"

typedef struct cpu_ssd_ctx {
    const float *loc, *conf, *anchors;
    float *rows;
    int64_t *count;        /* or NULL */
    int64_t N, C, A;
    ib_ssd_post_params p;
    int max_threads;
    size_t ws_bytes;       /* per thread: ib_ssd_post_rows_ws_bytes */
    char *ws;
} cpu_ssd_ctx;

static int ssd_run(void *kctx, int threads, ib_err *err)
{
    const cpu_ssd_ctx *k = kctx;
    int nt = threads < 1 ? 1 : threads > k->max_threads ? k->max_threads : threads;
    if (nt > k->N)
        nt = k->N > 0 ? (int)k->N : 1;
    int rc = IB_OK;
#pragma omp parallel num_threads(nt)
    {
        char *ws = k->ws + (size_t)omp_get_thread_num() * k->ws_bytes;
#pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < k->N; n++)
            /* parameters were checked at compile: this cannot fail */
            if (ib_ssd_post_rows(k->loc + n * 4 * k->A, k->conf + n * k->C * k->A, k->anchors,
                                 (size_t)k->A, (size_t)k->C, &k->p, ws,
                                 k->rows + n * k->p.max_out * 6, k->count ? k->count + n : NULL,
                                 NULL)) {
#pragma omp atomic write
                rc = IB_EINVAL;
            }
    }
    return rc ? ib_err_set(err, rc, "SSD post-processing failed") : IB_OK;
}

static bool ssd_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                         const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    ib_ssd_post_params pp;
    /* the graph's shape inference (ir/ops/detect.c) checked the shapes */
    return n->n_inputs == 3 && in[0] && in[1] && in[2] && in[0]->dtype == IB_DTYPE_FLOAT32 &&
           in[1]->dtype == IB_DTYPE_FLOAT32 && cpu_const_of(g, n, 2) && ib_ssd_params_of_node(n, &pp);
}

static int ssd_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *loc = cpu_in(e, n, 0), *conf = cpu_in(e, n, 1), *an = cpu_in(e, n, 2);
    cpu_val *rows = cpu_out(e, n, 0), *cnt = cpu_out(e, n, 1);
    cpu_ssd_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    ib_ssd_params_of_node(n, &k->p);
    k->N = loc->desc.dims[0];
    k->C = conf->desc.dims[1];
    k->A = an->desc.dims[0];
    k->anchors = an->cdata;
    k->max_threads = e->ctx->threads > 0 ? e->ctx->threads : 1;
    k->ws_bytes = ib_ssd_post_rows_ws_bytes((size_t)k->A, (size_t)k->C, &k->p);
    k->ws = cpu_alloc(e, (size_t)k->max_threads * k->ws_bytes);
    const void *lp, *cp;
    void *rp, *np = NULL;
    int rc = k->ws ? IB_OK : cpu_fail(e, err, IB_ENOMEM, "out of memory for the workspace");
    if (!rc && !(rc = cpu_use_plain(e, loc, dnnl_f32, &lp, err)) &&
        !(rc = cpu_use_plain(e, conf, dnnl_f32, &cp, err)) &&
        !(rc = cpu_def_plain(e, rows, &rp, err)) && (!cnt || !(rc = cpu_def_plain(e, cnt, &np, err)))) {
        k->loc = lp;
        k->conf = cp;
        k->rows = rp;
        k->count = np;
        return cpu_add_kernel(e, ssd_run, k, err);
    }
    ib_free(k);
    return rc;
}

const cpu_op cpu_ops_detect[] = {
    {"inferbench", "SSDPostprocess", ssd_supports, ssd_compile},
    {NULL, NULL, NULL, NULL},
};
