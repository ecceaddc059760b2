/*
 * cuda_conv_f8.c - the fp8 (e4m3) convolutions of an fp8 session on cuda (issue 24: "FP8
 * (e4m3) on Hopper through cuBLASLt and cuDNN"), written in the tenth session (2026-12-05)
 * without a GPU: not yet run.
 *
 * Until now an fp8 session ran its convolutions as at fp16 (only products with constant
 * weights were e4m3). A 2-D convolution with one group whose X has a calibrated range and
 * whose filter is a constant, with channels in and out multiples of 16 (what cuDNN's fp8
 * kernels read; ResNet50's 3-channel stem stays as at fp16), on a device of compute
 * capability 8.9 or later, now runs as the int8 convolutions do (cuda_conv_i8.c), with e4m3
 * in place of int8:
 *
 *   1. X scaled to its range (sx = 448 / max|range|) and converted to e4m3 NHWC in one pass
 *      (cu_cvt CU_CVT_E4M3_NHWC, step kind "quant-f8"; converted once for consecutive
 *      readers);
 *   2. the convolution through cuDNN's graph API (cuda_dnn_graph.c: cuDNN runs fp8 only
 *      there): x and w e4m3 NHWC, float compute, y float NHWC into the block the 8-bit
 *      convolutions share. The plain graph (the convolution alone, step kind "cudnn-f8") is
 *      tried first; when cuDNN has no engine for it, or its probe fails, the graph with a
 *      pointwise tail that multiplies by the filter's per-channel dequantisation scales
 *      ("cudnn-f8-scale", the form of cudnn-frontend's fp8 sample; eleventh session, also
 *      not yet run);
 *   3. the int8 path's epilogue (ibk_epi_i8conv): y NCHW float32 = act(acc / (sx * sw[k]) +
 *      bias[k] + z), without the / sw[k] after the scaled form.
 *
 * The filter is quantised once per device store on the host, per output channel to +-448
 * (cu_quant_filter_e4m3: KCRS float32 -> KRSC e4m3); steps 1 and 3 and the filter are the
 * int8 path's own (cu_conv8_prepare, cu_conv8_epilogue), with the e4m3 forms. cuDNN decides
 * at compile: when neither graph form builds a plan that passes the probe run on the planned
 * buffers, the convolution keeps the fp16 path. There are no fp8 chains between convolutions
 * (int8 has them): each fp8 convolution reads and writes float32 NCHW, so the gain is the
 * convolution's own math.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"

typedef struct conv_f8_k {
    cu_gconv gc;
    cu_conv8 c;
    const float *sw; /* the filter's dequantisation scales (the store's inv_sw) */
} conv_f8_k;

static void conv_f8_free(void *p)
{
    conv_f8_k *k = p;
    if (!k)
        return;
    cu_gconv_free(&k->gc);
    ib_free(k);
}

static cudnnStatus_t conv_f8_call(cu_exec *e, const void *p, void *ws)
{
    conv_f8_k *k = (conv_f8_k *)(uintptr_t)p; /* the variant pack is remade for a new ws */
    return cu_gconv_run(e->ctx->dnn, &k->gc, k->c.x8, k->c.w8, k->sw, k->c.acc, ws);
}

static int run_conv_f8(cu_exec *e, void *p, ib_err *err)
{
    conv_f8_k *k = p;
    int rc = cu_check_dnn(e, err, conv_f8_call(e, k, e->ws), "fp8 convolution forward");
    return rc ? rc : cu_conv8_epilogue(e, &k->c, err);
}

/* Whether the session and the node are what the fp8 path takes (cuDNN may still refuse). */
static bool takes(cu_exec *e, const ib_node *n, const cu_conv2d *g)
{
    const cu_val *x = cu_in(e, n, 0), *w = cu_in(e, n, 1), *z = cu_in(e, n, 3);
    const cu_val *y = cu_out(e, n, 0);
    int act;
    float a, b;
    return e->fp8 && e->ctx->sm_major * 10 + e->ctx->sm_minor >= 89 && x->has_range && w->host &&
           !x->half && !y->half && !(z && z->half) && !x->q8 && !y->q8 && !(z && z->q8) &&
           g->C % 16 == 0 && g->K % 16 == 0 && cu_fused_act(n, &act, &a, &b);
}

int cu_add_conv_f8(cu_exec *e, const ib_node *n, const cu_conv2d *g, bool *done, ib_err *err)
{
    *done = false;
    if (!takes(e, n, g))
        return IB_OK;
    conv_f8_k *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cu_fail(e, err, IB_ENOMEM, "out of memory");
    bool prepared = false, ok = false;
    int rc = IB_OK;
    static const cu_gconv_form forms[] = {CU_GCONV_PLAIN, CU_GCONV_SCALE_K};
    for (size_t f = 0; f < IB_ARRAY_LEN(forms) && !ok; f++) {
        if (cu_gconv_build(e->ctx->dnn, g, CUDNN_DATA_FP8_E4M3, CUDNN_DATA_FLOAT,
                           CUDNN_DATA_FLOAT, forms[f], &k->gc))
            continue; /* no engine for this form */
        if (!prepared && (rc = cu_conv8_prepare(e, n, g, true, &k->c, err)))
            break;
        prepared = true;
        k->sw = k->c.inv_sw;
        ok = cu_dnn_probe(e, k->gc.ws, conv_f8_call, k);
        if (!ok)
            cu_gconv_free(&k->gc); /* cuDNN does not run it here */
    }
    if (!ok) {
        conv_f8_free(k);
        return rc; /* IB_OK: the fp16 path */
    }
    if (k->gc.form == CU_GCONV_SCALE_K)
        k->c.inv_sw = NULL; /* the graph's tail applied them */
    cu_need_ws(e, k->gc.ws);
    if ((rc = cu_cvt_add(e, &k->c.cv, err))) {
        conv_f8_free(k);
        return rc;
    }
    const bool scaled = k->gc.form == CU_GCONV_SCALE_K;
    if ((rc = cu_add_step(e, run_conv_f8, k, conv_f8_free, err)))
        return rc;
    cu_step_kind(e, scaled ? "cudnn-f8-scale" : "cudnn-f8");
    ib_prec_notes_set(&e->precs, IB_PRECISION_FP8); /* backend ABI 10 */
    *done = true;
    return IB_OK;
}
