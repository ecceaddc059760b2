/*
 * cuda_accum.c - inferbench.WindowAccumulate on cuda (ir/ops/accum.c; the kernel in
 * kernels/ib_kernels.cu): 3D U-Net KiTS19's sliding-window sums kept on the device, so a
 * window's 25 MB of logits (3 x 128^3) are added where the network wrote them instead of
 * being read back and summed on one host core (issue 25). One device copy of acc into y (a
 * fed run then copies y back into acc: both at device bandwidth) and one kernel over the
 * window's elements. The window's start is read on the device, so the step is captured in
 * the CUDA Graph like any other. Written without a GPU: not yet run (the conformance suite's
 * `shape` family has its case, which cuda_ops_shape runs on a device).
 */
#include "backend/cuda/cuda_internal.h"
#include "ir/ops/accum.h"

/* the op's description (ir/ops/accum.h) over device pointers */
static int run_acc(cu_exec *e, void *p, ib_err *err)
{
    const ib_window_acc *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_window_acc(e->ctx->stream, k->acc, k->win, k->g, k->at,
                                                   k->y, k->C, k->S, k->r),
                       "window accumulate kernel");
}

static bool sup_acc(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                    const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(g);
    IB_UNUSED(p);
    /* the graph's shape inference (ir/ops/accum.c) checked the shapes and dtypes */
    return n->n_inputs == 4 && in[0] && in[1] && in[2] && in[3] &&
           in[0]->dtype == IB_DTYPE_FLOAT32 && in[2]->dtype == IB_DTYPE_INT64;
}

static int comp_acc(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *acc = cu_in(e, n, 0), *win = cu_in(e, n, 1), *at = cu_in(e, n, 2);
    cu_val *g = cu_in(e, n, 3), *y = cu_out(e, n, 0);
    ib_window_acc *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    k->acc = acc->dev;
    k->win = win->dev;
    k->at = at->dev;
    k->g = g->dev;
    k->y = y->dev;
    ib_window_acc_shape(&acc->desc, &win->desc, &g->desc, k);
    return cu_add_step(e, run_acc, k, NULL, err);
}

const cu_op cu_ops_accum[] = {
    {"inferbench", "WindowAccumulate", sup_acc, comp_acc},
    {NULL, NULL, NULL, NULL},
};
