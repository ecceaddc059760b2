/*
 * cuda_ops_logic.c - comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual over
 * float32, int64 or int32), logic over bool (And, Or, Xor, Not) and Where (any element of
 * 1, 2, 4 or 8 bytes), all with numpy broadcasting, on our kernels. Before 2026-12-05 these
 * went to the reference kernels on the host; a decoder whose masked state update is a Where
 * (RNN-T's greedy step on the device) needs them on the GPU. Written without a GPU: not yet
 * run (the `binary` conformance family has their cases).
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

static bool onnx_domain(const ib_node *n)
{
    return !n->domain[0] || strcmp(n->domain, "ai.onnx") == 0;
}

static int index_of(const char *const *names, int n, const char *op)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], op))
            return i;
    return -1;
}

static const char *const CMP[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
static const char *const LOGIC[] = {"And", "Or", "Xor", "Not"};

static int cmp_dtype(enum ib_dtype t)
{
    return t == IB_DTYPE_FLOAT32 ? 0 : t == IB_DTYPE_INT64 ? 1 : t == IB_DTYPE_INT32 ? 2 : -1;
}

/* ---- comparisons and logic --------------------------------------------------------- */

typedef struct lg_k {
    bool cmp;
    int op, dtype;
    const void *a, *b;
    uint8_t *y;
    ibk_view v;
} lg_k;

static int run_logic(cu_exec *e, void *p, ib_err *err)
{
    lg_k *k = p;
    cudaStream_t s = e->ctx->stream;
    int st = k->cmp ? ibk_compare(s, k->op, k->dtype, k->a, k->b, k->y, &k->v)
                    : ibk_logic(s, k->op, k->a, k->b, k->y, &k->v);
    return cu_check_rt(e, err, (cudaError_t)st, k->cmp ? "comparison kernel" : "logic kernel");
}

static bool sup_logic(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                      const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (!onnx_domain(n))
        return false;
    bool cmp = index_of(CMP, 5, n->op_type) >= 0;
    int lop = index_of(LOGIC, 4, n->op_type);
    uint32_t want = lop == IBK_LOGIC_NOT ? 1 : 2;
    if ((!cmp && lop < 0) || n->n_inputs != want || !in[0] || (want == 2 && !in[1]))
        return false;
    const ib_tensor_desc *o = cu_out_desc(g, n, 0);
    if (!o || o->dtype != IB_DTYPE_BOOL || o->ndim > IBK_MAX_DIMS)
        return false;
    if (cmp)
        return cmp_dtype(in[0]->dtype) >= 0 && in[1]->dtype == in[0]->dtype;
    return in[0]->dtype == IB_DTYPE_BOOL && (want == 1 || in[1]->dtype == IB_DTYPE_BOOL);
}

static int comp_logic(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *a = cu_in(e, n, 0), *b = cu_in(e, n, 1), *y = cu_out(e, n, 0);
    lg_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    int ci = index_of(CMP, 5, n->op_type);
    k->cmp = ci >= 0;
    k->op = k->cmp ? ci : index_of(LOGIC, 4, n->op_type);
    k->dtype = cmp_dtype(a->desc.dtype);
    k->a = a->dev;
    k->b = b ? b->dev : a->dev; /* Not: b unused */
    k->y = y->dev;
    cu_bcast_view(&a->desc, b ? &b->desc : NULL, &y->desc, &k->v);
    return cu_add_step(e, run_logic, k, NULL, err);
}

/* ---- Where ------------------------------------------------------------------------- */

typedef struct wh_k {
    const uint8_t *c;
    int64_t sc[IBK_MAX_DIMS];
    const void *x, *z;
    void *y;
    int esize;
    ibk_view v;
} wh_k;

static int run_where(cu_exec *e, void *p, ib_err *err)
{
    wh_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_where(e->ctx->stream, k->c, k->sc, k->x, k->z, k->y,
                                              k->esize, &k->v),
                       "where kernel");
}

static bool sup_where(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                      const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (!onnx_domain(n) || n->n_inputs != 3 || !in[0] || !in[1] || !in[2])
        return false;
    const ib_tensor_desc *o = cu_out_desc(g, n, 0);
    size_t es = ib_dtype_size(in[1]->dtype);
    return in[0]->dtype == IB_DTYPE_BOOL && in[2]->dtype == in[1]->dtype && o &&
           o->dtype == in[1]->dtype && o->ndim <= IBK_MAX_DIMS &&
           (es == 1 || es == 2 || es == 4 || es == 8);
}

static int comp_where(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *c = cu_in(e, n, 0), *x = cu_in(e, n, 1), *z = cu_in(e, n, 2), *y = cu_out(e, n, 0);
    wh_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    /* x and z through the view's two sources, the condition through a third set of strides
     * (its broadcast against the output, taken from a view of c against itself) */
    cu_bcast_view(&x->desc, &z->desc, &y->desc, &k->v);
    ibk_view cv;
    cu_bcast_view(&c->desc, NULL, &y->desc, &cv);
    memcpy(k->sc, cv.sa, sizeof k->sc);
    k->c = c->dev;
    k->x = x->dev;
    k->z = z->dev;
    k->y = y->dev;
    k->esize = (int)ib_dtype_size(x->desc.dtype);
    return cu_add_step(e, run_where, k, NULL, err);
}

const cu_op cu_ops_logic[] = {
    {"", "Equal", sup_logic, comp_logic},
    {"", "Less", sup_logic, comp_logic},
    {"", "Greater", sup_logic, comp_logic},
    {"", "LessOrEqual", sup_logic, comp_logic},
    {"", "GreaterOrEqual", sup_logic, comp_logic},
    {"", "And", sup_logic, comp_logic},
    {"", "Or", sup_logic, comp_logic},
    {"", "Xor", sup_logic, comp_logic},
    {"", "Not", sup_logic, comp_logic},
    {"", "Where", sup_where, comp_where},
    {NULL, NULL, NULL, NULL},
};
