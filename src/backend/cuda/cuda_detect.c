/*
 * cuda_detect.c - inferbench.SSDPostprocess on cuda (ir/ops/detect.c; kernels/ib_ssd.cu):
 * SSD-ResNet34's decode + NMS on the device, so `ssd-resnet34 --variant graph-post` copies
 * back 200 rows and a count an image instead of 4.9 MB of heads for the host's 4.9 ms of
 * decoding (issue 24). Anchors up to 16,384 and (classes - 1) x top_per_class up to 16,384
 * (the two sorts run in one block's shared memory); larger graphs are refused, so they run
 * on the reference kernels with the fallback label. Not yet run on a GPU (2026-12-05).
 */
#include "backend/cuda/cuda_internal.h"
#include "ir/ops/ssd_post.h"

#define SSD_MAX_SORT 16384

typedef struct ssd_k {
    const float *loc, *conf, *anchors;
    float *rows;
    int64_t *count;
    void *scratch;
    ibk_ssd a;
} ssd_k;

static int run_ssd(cu_exec *e, void *p, ib_err *err)
{
    ssd_k *k = p;
    return cu_check_rt(e, err,
                       (cudaError_t)ibk_ssd_run(e->ctx->stream, k->loc, k->conf, k->anchors,
                                                k->rows, k->count, k->scratch, &k->a),
                       "SSD post-processing kernels");
}

static bool params_of(const ib_node *n, ibk_ssd *a)
{
    ib_ssd_post_params p;
    bool ok = ib_ssd_params_of_node(n, &p);
    a->scale_xy = p.scale_xy;
    a->scale_wh = p.scale_wh;
    a->score_thr = p.score_thr;
    a->nms_iou = p.nms_iou;
    a->top = p.top_per_class;
    a->max_out = p.max_out;
    return ok;
}

static bool sup_ssd(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                    const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (n->n_inputs != 3 || !in[0] || !in[1] || !in[2] || !cu_all_f32(n, in) ||
        !cu_is_const(g, n, 2) || in[1]->ndim != 3 || in[2]->ndim != 2)
        return false;
    ibk_ssd a;
    /* the graph's shape inference checked the rest (ir/ops/detect.c) */
    return params_of(n, &a) && in[2]->dims[0] <= SSD_MAX_SORT &&
           (in[1]->dims[1] - 1) * a.top <= SSD_MAX_SORT;
}

static int comp_ssd(cu_exec *e, const ib_node *n, ib_err *err)
{
    cu_val *loc = cu_in(e, n, 0), *conf = cu_in(e, n, 1), *an = cu_in(e, n, 2);
    cu_val *rows = cu_out(e, n, 0), *cnt = cu_out(e, n, 1);
    ssd_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    params_of(n, &k->a);
    k->a.N = loc->desc.dims[0];
    k->a.C = conf->desc.dims[1];
    k->a.A = an->desc.dims[0];
    int fits = 0;
    int rc = cu_check_rt(e, err, (cudaError_t)ibk_ssd_prepare(&k->a, &fits),
                         "SSD post-processing setup");
    if (!rc && !fits)
        rc = cu_fail(e, err, IB_EUNSUPPORTED,
                     "SSD post-processing: %lld anchors and %lld x %lld kept candidates do not "
                     "fit this device's shared memory",
                     (long long)k->a.A, (long long)(k->a.C - 1), (long long)k->a.top);
    /* the count output is optional in the graph: a private block then */
    if (!rc && !cnt)
        rc = cu_alloc(e, (size_t)(k->a.N > 0 ? k->a.N : 1) * sizeof(int64_t),
                      (void **)&k->count, err);
    if (!rc)
        rc = cu_alloc(e, ibk_ssd_scratch_bytes(&k->a), &k->scratch, err);
    if (rc) {
        ib_free(k);
        return rc;
    }
    k->loc = loc->dev;
    k->conf = conf->dev;
    k->anchors = an->dev;
    k->rows = rows->dev;
    if (cnt)
        k->count = cnt->dev;
    if ((rc = cu_add_step(e, run_ssd, k, NULL, err)))
        return rc;
    cu_step_kind(e, "ssd-post");
    return IB_OK;
}

const cu_op cu_ops_detect[] = {
    {"inferbench", "SSDPostprocess", sup_ssd, comp_ssd},
    {NULL, NULL, NULL, NULL},
};
