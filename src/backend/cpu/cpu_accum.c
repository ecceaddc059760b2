/*
 * cpu_accum.c - inferbench.WindowAccumulate on the cpu backend (ir/ops/accum.c): the copy of
 * acc and the window's planes split over the threads, through the reference kernel's own
 * arithmetic (ir/ops/accum.h), so the cpu gives its sums bit for bit. The kits19 entry adds
 * its windows on the host on the cpu (no copy of the whole volume a window); the op runs here
 * when the window graph is asked for (`--dataset kits19-device`) and in the conformance
 * suite.
 */
#include <omp.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "ir/ops/accum.h"

typedef struct cpu_acc_ctx {
    ib_window_acc w;
    size_t bytes; /* of acc */
    int max_threads;
} cpu_acc_ctx;

static int acc_run(void *kctx, int threads, ib_err *err)
{
    const cpu_acc_ctx *k = kctx;
    const ib_window_acc *w = &k->w;
    if (!ib_window_acc_fits(w))
        return ib_window_acc_misfit(w, err);
    int nt = threads < 1 ? 1 : threads > k->max_threads ? k->max_threads : threads;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        if (w->y != w->acc) {
            size_t a = k->bytes * (size_t)t / (size_t)n, b = k->bytes * (size_t)(t + 1) / (size_t)n;
            memcpy((char *)w->y + a, (const char *)w->acc + a, b - a);
        }
#pragma omp barrier
        /* each plane z is its own rows of y: no two threads write one element */
        int64_t z0 = w->r[0] * t / n, z1 = w->r[0] * (t + 1) / n;
        ib_window_acc_rows(w, z0, z1);
    }
    return IB_OK;
}

static bool acc_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                         const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    /* the graph's shape inference (ir/ops/accum.c) checked the shapes and dtypes */
    return n->n_inputs == 4 && in[0] && in[1] && in[2] && in[3];
}

static int acc_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *acc = cpu_in(e, n, 0), *win = cpu_in(e, n, 1), *at = cpu_in(e, n, 2);
    cpu_val *g = cpu_in(e, n, 3), *y = cpu_out(e, n, 0);
    cpu_acc_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    ib_window_acc_shape(&acc->desc, &win->desc, &g->desc, &k->w);
    k->bytes = ib_tensor_desc_nbytes(&acc->desc);
    k->max_threads = e->ctx->threads > 0 ? e->ctx->threads : 1;
    const void *ap, *wp, *tp, *gp;
    void *yp;
    int rc;
    if ((rc = cpu_use_plain(e, acc, dnnl_f32, &ap, err)) ||
        (rc = cpu_use_plain(e, win, dnnl_f32, &wp, err)) ||
        (rc = cpu_use_plain(e, at, dnnl_data_type_undef, &tp, err)) ||
        (rc = cpu_use_plain(e, g, dnnl_f32, &gp, err)) || (rc = cpu_def_plain(e, y, &yp, err))) {
        ib_free(k);
        return rc;
    }
    k->w.acc = ap;
    k->w.win = wp;
    k->w.at = tp;
    k->w.g = gp;
    k->w.y = yp;
    return cpu_add_kernel(e, acc_run, k, err);
}

const cpu_op cpu_ops_accum[] = {
    {"inferbench", "WindowAccumulate", acc_supports, acc_compile},
    {NULL, NULL, NULL, NULL},
};
