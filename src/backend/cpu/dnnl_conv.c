/*
 * dnnl_conv.c - Conv (1D/2D/3D, groups, dilations, pads, strides, auto_pad),
 * ConvTranspose and the fused inferbench.FusedConv (conv + residual sum +
 * activation) on oneDNN convolution/deconvolution primitives.
 *
 * Layouts: src/dst use format_tag_any (oneDNN picks nChw16c-style blocked
 * formats); the weights are reordered once at compile time into the
 * primitive's format. Precisions: fp32; bf16 (src/weights/dst bf16, bias
 * f32); int8 for Conv (u8 when the calibrated input range is >= 0, else s8;
 * s8 weights with one scale per output channel; per-channel output scales;
 * bias pre-scaled into the accumulator domain; the dst is u8/s8 with its own
 * calibrated scale when only int8 convolutions read it, else f32).
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_post.h"

typedef struct conv_geom {
    int nsp;          /* spatial dims: 1..3 */
    int64_t group;
    dnnl_dims_t strides, dil, pl, pr; /* dil in oneDNN convention (0 = dense) */
} conv_geom;

/* Effective kernel extent. */
static int64_t keff(int64_t k, int64_t d)
{
    return (k - 1) * d + 1;
}

/* Read strides/dilations/pads/auto_pad of a Conv or ConvTranspose against the
 * bound shapes x [N,C,...], w, y [N,M,...]. Returns false when inconsistent. */
static bool conv_geometry(const ib_node *n, const ib_tensor_desc *x, const ib_tensor_desc *w,
                          const ib_tensor_desc *y, bool transpose, conv_geom *cg)
{
    memset(cg, 0, sizeof *cg);
    if (x->ndim < 3 || x->ndim > 5 || w->ndim != x->ndim || y->ndim != x->ndim)
        return false;
    cg->nsp = x->ndim - 2;
    cg->group = ib_node_attr_int(n, "group", 1);
    const int64_t *st, *dl, *pd, *ks;
    size_t nst = ib_node_attr_ints(n, "strides", &st);
    size_t ndl = ib_node_attr_ints(n, "dilations", &dl);
    size_t npd = ib_node_attr_ints(n, "pads", &pd);
    size_t nks = ib_node_attr_ints(n, "kernel_shape", &ks);
    const char *ap = ib_node_attr_string(n, "auto_pad", "NOTSET");
    if ((nst && nst != (size_t)cg->nsp) || (ndl && ndl != (size_t)cg->nsp) ||
        (npd && npd != 2u * (size_t)cg->nsp) || (nks && nks != (size_t)cg->nsp))
        return false;
    if (cg->group < 1)
        return false;
    for (int i = 0; i < cg->nsp; i++) {
        int64_t in = x->dims[2 + i], out = y->dims[2 + i], k = w->dims[2 + i];
        int64_t s = nst ? st[i] : 1, d = ndl ? dl[i] : 1;
        if (s < 1 || d < 1 || (nks && ks[i] != k))
            return false;
        int64_t l = npd ? pd[i] : 0, r = npd ? pd[cg->nsp + i] : 0;
        if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            int64_t total = transpose ? s * (in - 1) + keff(k, d) - out
                                      : (out - 1) * s + keff(k, d) - in;
            if (total < 0)
                total = 0;
            bool upper = strcmp(ap, "SAME_UPPER") == 0;
            /* ONNX: SAME_UPPER puts the extra pad at the end (Conv); for
             * ConvTranspose the spec puts it at the start */
            if (transpose)
                upper = !upper;
            l = upper ? total / 2 : total - total / 2;
            r = total - l;
        } else if (strcmp(ap, "VALID") == 0) {
            l = r = 0;
        } else if (strcmp(ap, "NOTSET") != 0) {
            return false;
        }
        if (l < 0 || r < 0)
            return false;
        if (transpose) {
            /* output_padding / output_shape: absorbed into the right pad */
            r = (in - 1) * s + keff(k, d) - l - out;
            if (r < 0 || out != (in - 1) * s + keff(k, d) - l - r)
                return false;
        } else if ((in + l + r - keff(k, d)) / s + 1 != out || in + l + r < keff(k, d)) {
            return false;
        }
        cg->strides[i] = s;
        cg->dil[i] = d - 1;
        cg->pl[i] = l;
        cg->pr[i] = r;
    }
    return true;
}

static bool conv_shapes_ok(const ib_graph *g, const ib_node *n, const ib_tensor_desc *const *in,
                           bool transpose)
{
    if (n->n_inputs < 2 || !in[0] || !in[1] || n->n_outputs < 1)
        return false;
    const ib_value *yv = ib_node_output(g, n, 0);
    if (!yv || yv->desc.dtype != IB_DTYPE_FLOAT32 || ib_tensor_desc_numel(&yv->desc) < 0)
        return false;
    if (in[0]->dtype != IB_DTYPE_FLOAT32 || !cpu_is_const(g, n, 1) ||
        in[1]->dtype != IB_DTYPE_FLOAT32)
        return false;
    if (n->n_inputs > 2 && in[2] &&
        (!cpu_is_const(g, n, 2) || in[2]->dtype != IB_DTYPE_FLOAT32 || in[2]->ndim != 1))
        return false;
    conv_geom cg;
    if (!conv_geometry(n, in[0], in[1], &yv->desc, transpose, &cg))
        return false;
    int64_t C = in[0]->dims[1], M = yv->desc.dims[1], gr = cg.group;
    if (transpose)
        return in[1]->dims[0] == C && C % gr == 0 && in[1]->dims[1] * gr == M &&
               (n->n_inputs < 3 || !in[2] || in[2]->dims[0] == M);
    return C % gr == 0 && M % gr == 0 && in[1]->dims[0] == M && in[1]->dims[1] * gr == C &&
           (n->n_inputs < 3 || !in[2] || in[2]->dims[0] == M);
}

static bool conv_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                          const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    return n->n_inputs <= 3 && conv_shapes_ok(g, n, in, false);
}

static bool deconv_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    const int64_t *op;
    size_t nop = ib_node_attr_ints(n, "output_padding", &op);
    for (size_t i = 0; i < nop; i++)
        if (op[i] < 0)
            return false;
    return n->n_inputs <= 3 && conv_shapes_ok(g, n, in, true);
}

static bool fused_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                           const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    cpu_post post;
    if (!cpu_post_parse(n, &post) || !conv_shapes_ok(g, n, in, false))
        return false;
    /* the residual (input 3) has the output's shape and dtype */
    if (n->n_inputs > 3 && in[3]) {
        const ib_value *yv = ib_node_output(g, n, 0);
        return ib_tensor_desc_equal(in[3], &yv->desc);
    }
    return n->n_inputs <= 4;
}

/* Per-output-channel int8 weight scales: 127 / max|w[oc]|. */
static void weight_scales(const float *w, int64_t M, int64_t per_oc, float *sw)
{
    for (int64_t o = 0; o < M; o++) {
        float m = 0;
        for (int64_t i = 0; i < per_oc; i++)
            m = fmaxf(m, fabsf(w[o * per_oc + i]));
        sw[o] = m > 0 ? 127.0f / m : 1.0f;
    }
}

/* The f32 weights in oneDNN's logical order (plain memory of the ONNX tensor). */
static int weights_plain_md(const conv_geom *cg, const ib_tensor_desc *w, bool transpose,
                            dnnl_memory_desc_t *md, dnnl_dims_t dims)
{
    int nd = 0;
    int64_t k = 1;
    for (int i = 0; i < cg->nsp; i++)
        k *= w->dims[2 + i];
    /* ONNX Conv W: [M, C/g, k...]; ConvTranspose W: [C, M/g, k...] */
    int64_t oc_g = transpose ? w->dims[1] : w->dims[0] / cg->group;
    int64_t ic_g = transpose ? w->dims[0] / cg->group : w->dims[1];
    dnnl_dims_t strides;
    if (cg->group > 1) {
        dims[nd] = cg->group;
        strides[nd++] = oc_g * ic_g * k;
    }
    dims[nd] = oc_g;
    strides[nd++] = transpose ? k : ic_g * k;
    dims[nd] = ic_g;
    strides[nd++] = transpose ? oc_g * k : k;
    int64_t s = k;
    for (int i = 0; i < cg->nsp; i++) {
        s /= w->dims[2 + i];
        dims[nd] = w->dims[2 + i];
        strides[nd++] = s;
    }
    return dnnl_memory_desc_init_by_strides(md, nd, dims, dnnl_f32, strides) ? IB_EUNSUPPORTED
                                                                              : IB_OK;
}

/* The (de)convolution primitive descriptor for these descriptors (bias may be NULL); with
 * wino2d, oneDNN's Winograd kernel when one takes the shapes, else the direct one. */
static dnnl_status_t conv_pd(cpu_exec *e, bool transpose, bool wino2d,
                             const dnnl_memory_desc_t *smd, const dnnl_memory_desc_t *wmd,
                             const dnnl_memory_desc_t *bmd, const dnnl_memory_desc_t *dmd,
                             const conv_geom *cg, const_dnnl_primitive_attr_t attr,
                             dnnl_primitive_desc_t *pd)
{
    dnnl_status_t st;
    if (transpose) {
        dnnl_deconvolution_desc_t dd;
        st = dnnl_dilated_deconvolution_forward_desc_init(
            &dd, dnnl_forward_inference, dnnl_deconvolution_direct, smd, wmd, bmd, dmd,
            cg->strides, cg->dil, cg->pl, cg->pr);
        return st ? st : cpu_pd_create(e, pd, &dd, attr);
    }
    dnnl_convolution_desc_t cd;
    if (wino2d && !dnnl_dilated_convolution_forward_desc_init(
                      &cd, dnnl_forward_inference, dnnl_convolution_winograd, smd, wmd, bmd, dmd,
                      cg->strides, cg->dil, cg->pl, cg->pr) &&
        !cpu_pd_create(e, pd, &cd, attr))
        return dnnl_success;
    st = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                    dnnl_convolution_direct, smd, wmd, bmd, dmd,
                                                    cg->strides, cg->dil, cg->pl, cg->pr);
    return st ? st : cpu_pd_create(e, pd, &cd, attr);
}

/* ---- ConvTranspose 2x2x2 / stride 2 on a channels-last volume as matmuls ------------ */

/* The 3D U-Nets' upsampling (kernel = stride = 2, no pads, dilation or groups): every output
 * voxel takes exactly one tap, so for each (kd, kh) and input slice (n, d) the outputs
 * y[n, 2d + kd, 2h + kh, 2w + kw, m] = sum_c x[n, d, h, w, c] W[c, m, kd, kh, kw] + b[m]
 * are one matmul [H, W, C] x [C, (kw, m)] into a strided view of y (rows 2 * W2 * M
 * apart). oneDNN's jit deconvolution ran this at 37 GFLOP/s for KiTS' 64 -> 32 channels
 * at 128^3 (234 ms); the matmuls run at ~150. */
static bool up2_shape(const conv_geom *cg, const ib_tensor_desc *w)
{
    if (cg->nsp != 3 || cg->group != 1)
        return false;
    for (int i = 0; i < 3; i++)
        if (cg->strides[i] != 2 || cg->dil[i] != 0 || cg->pl[i] || cg->pr[i] ||
            w->dims[2 + i] != 2)
            return false;
    return true;
}

static int up2_build(cpu_exec *e, const ib_node *n, dnnl_data_type_t dt, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *w = cpu_in(e, n, 1), *b = cpu_in(e, n, 2), *y = cpu_out(e, n, 0);
    int64_t N = x->desc.dims[0], C = x->desc.dims[1], D = x->desc.dims[2], H = x->desc.dims[3],
            W = x->desc.dims[4], M = y->desc.dims[1], H2 = 2 * H, W2 = 2 * W;
    size_t es = dt == dnnl_bf16 ? 2 : 4;
    dnnl_memory_desc_t xmd, ymd, smd, wmd, wplain, bmd, dmd;
    dnnl_dims_t sd = {H, W, C}, wd = {1, C, 2 * M}, bd = {1, 1, 2 * M}, dd = {H, W, 2 * M};
    dnnl_dims_t ds = {2 * W2 * M, 2 * M, 1};
    if (cpu_md_tag(&xmd, 5, x->desc.dims, dt, dnnl_ndhwc) ||
        cpu_md_tag(&ymd, 5, y->desc.dims, dt, dnnl_ndhwc) ||
        dnnl_memory_desc_init_by_tag(&smd, 3, sd, dt, dnnl_abc) ||
        dnnl_memory_desc_init_by_tag(&wmd, 3, wd, dt, dnnl_abc) ||
        dnnl_memory_desc_init_by_tag(&wplain, 3, wd, dnnl_f32, dnnl_abc) ||
        dnnl_memory_desc_init_by_tag(&bmd, 3, bd, dnnl_f32, dnnl_abc) ||
        dnnl_memory_desc_init_by_strides(&dmd, 3, dd, dt, ds))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    dnnl_primitive_desc_t pd;
    if (cpu_matmul_pd(e, &smd, &wmd, b ? &bmd : NULL, &dmd, NULL, &pd))
        return IB_EUNSUPPORTED; /* not an error: the deconvolution takes it */
    dnnl_primitive_desc_destroy(pd);
    /* W [C, M, 2, 2, 2] -> per (kd, kh): [C, (kw, m)]; b repeated for kw */
    float *wk = cpu_alloc(e, 4 * (size_t)C * 2 * (size_t)M * sizeof *wk);
    float *bk = b ? cpu_alloc(e, 2 * (size_t)M * sizeof *bk) : NULL;
    if (!wk || (b && !bk))
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    const float *w0 = w->cdata;
    for (int64_t kk = 0; kk < 4; kk++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t kw = 0; kw < 2; kw++)
                for (int64_t m = 0; m < M; m++)
                    wk[((kk * C + c) * 2 + kw) * M + m] = w0[((c * M + m) * 4 + kk) * 2 + kw];
    for (int64_t i = 0; b && i < 2 * M; i++)
        bk[i] = ((const float *)b->cdata)[i % M];
    dnnl_memory_t mx, my, mb = NULL;
    void *xp = NULL;
    int rc = cpu_use(e, x, &xmd, 1.0f, &mx, err);
    if (!rc)
        rc = cpu_check(e, err, dnnl_memory_get_data_handle(mx, &xp), "get_data_handle");
    if (!rc)
        rc = cpu_def(e, y, &ymd, &my, err);
    if (!rc && b)
        rc = cpu_mem(e, &bmd, bk, &mb, err);
    /* run r = n * D + d: x moves by one slice, y by two output slices */
    const int64_t strides[4] = {H * W * C * (int64_t)es, 0, 2 * H2 * W2 * M * (int64_t)es, 0};
    for (int64_t kk = 0; kk < 4 && !rc; kk++) {
        int64_t kd = kk / 2, kh = kk % 2;
        dnnl_memory_t ms, mw, mdst;
        char *yp = (char *)y->data + (size_t)((kd * H2 + kh) * W2 * M) * es;
        if ((rc = cpu_mem(e, &smd, xp, &ms, err)) ||
            (rc = cpu_const_reorder(e, &wplain, wk + kk * C * 2 * M, &wmd, NULL, &mw, err)) ||
            (rc = cpu_mem(e, &dmd, yp, &mdst, err)))
            break;
        if ((rc = cpu_check(e, err, cpu_matmul_pd(e, &smd, &wmd, b ? &bmd : NULL, &dmd, NULL, &pd),
                            "matmul")))
            break;
        dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mdst},
                                   {DNNL_ARG_BIAS, mb}};
        rc = cpu_add_prim_repeat(e, pd, args, b ? 4 : 3, N * D, strides, err);
    }
    return rc;
}

/* Winograd F(2x2x2, 3x3x3) on our kernel (cpu_kernels_wino.c): a 3x3x3 convolution, stride
 * 1, pads 1, channels in and out multiples of 16, on an AVX-512 machine, only where it beat
 * oneDNN's direct brgconv in the same run (2 threads, KiTS 3D U-Net shapes; docs/cpu_backend.md
 * has the table). Its products do 3.4x fewer operations, but its transforms cost per tile
 * in proportion to C + M, the products to C x M, so it wins more the more channels:
 * - float32 (Zen 5: 1.4x at 128^3 x 32 -> 32, 1.9x at 64^3 x 64, 2.7x at 32^3 x 128; Zen 4
 *   2.2x at 128^3 x 32): rows of at least WINO_TB tiles (W >= 32; at 16^3 x 256 it was
 *   0.93x, the products' rows half idle) and transformed filters of at most 8 MB.
 * - bfloat16, where oneDNN's direct kernel is twice as fast as at float32 (AVX512-BF16 dot
 *   products): only when C M / (C + M) >= 40 (0.6x at 128^3 x 32 -> 32, even at 64^3 x 64,
 *   1.2x at 64^3 x 128 -> 64, 1.6x at 32^3 x 128, 1.2x at 16^3 x 256 -> 256), W >= 16 and
 *   filters of at most 12 MB (16^3 x 512 -> 256, 16.8 MB: 0.9x). */
static bool wino_shape(const cpu_exec *e, const conv_geom *cg, const ib_tensor_desc *x,
                       const ib_tensor_desc *w, bool bf16)
{
    if (!e->ctx->wino_ok || cg->nsp != 3 || cg->group != 1)
        return false;
    for (int i = 0; i < 3; i++)
        if (cg->strides[i] != 1 || cg->dil[i] != 0 || cg->pl[i] != 1 || cg->pr[i] != 1 ||
            w->dims[2 + i] != 3)
            return false;
    int64_t C = x->dims[1], M = w->dims[0], W = x->dims[4];
    if (C % 16 || M % 16)
        return false;
    if (bf16)
        return C * M >= 40 * (C + M) && W >= WINO_TB && 64 * C * M * 2 <= ((int64_t)12 << 20);
    return W >= 2 * WINO_TB && 64 * C * M * 4 <= ((int64_t)8 << 20);
}

/* 2-D float32 convolutions on an AVX-512 machine unless direct_conv (wino_ok): oneDNN's
 * Winograd kernels (jit_wino_4x3, F(4x4, 3x3), or jit_fp32_wino_2x3) where they take a 3x3,
 * stride 1, undilated, ungrouped convolution, and every 2-D convolution with channels in
 * and out multiples of 16 held as nChw16c, the layout those kernels read and write; the
 * direct ones (brgconv) would otherwise choose nhwc and every Winograd convolution would
 * sit between two reorders. ResNet50 fp32, 2 threads, alternating with direct_conv in one
 * run (bench/models/models --ab-direct; docs/cpu_backend.md §5b): Winograd with nhwc
 * elsewhere +13 % at batch 32; with nChw16c everywhere +9.7 % at batch 1, +14.7 % at 8,
 * +21.2 % at 32; SSD-ResNet34 (its backbone is 3x3 basic blocks) 1.6-1.8x ONNX Runtime. */
static bool conv2d_blocked(const cpu_exec *e, const conv_geom *cg, bool transpose, bool q8,
                           dnnl_data_type_t sdt, int64_t C, int64_t M)
{
    return e->ctx->wino_ok && !transpose && !q8 && cg->nsp == 2 && sdt == dnnl_f32 &&
           C % 16 == 0 && M % 16 == 0;
}

/* ... and of those, the ones with at least 8 output tiles of 4x4 per thread: on 7x7 maps at
 * batch 1 (4 tiles) ResNet50's layer4 ran Winograd at 200-250 GFLOP/s against ~280 direct,
 * while 16 tiles (14x14 at batch 1; 7x7 at batch 4) already ran it 1.5-1.9x faster. */
static bool wino2d_shape(const cpu_exec *e, const conv_geom *cg, const ib_tensor_desc *w,
                         const ib_tensor_desc *y)
{
    if (cg->group != 1)
        return false;
    for (int i = 0; i < 2; i++)
        if (cg->strides[i] != 1 || cg->dil[i] != 0 || w->dims[2 + i] != 3)
            return false;
    int64_t tiles = y->dims[0] * ((y->dims[2] + 3) / 4) * ((y->dims[3] + 3) / 4);
    return tiles >= 8 * (int64_t)e->ctx->threads;
}

typedef struct wino_src {
    const float *w;
    int64_t M, C;
    bool bf16;
} wino_src;

static int wino_fill(void *user, void *dst, ib_err *err)
{
    IB_UNUSED(err);
    const wino_src *s = user;
    if (s->bf16)
        cpu_wino_weights_bf16(s->w, s->M, s->C, dst);
    else
        cpu_wino_weights(s->w, s->M, s->C, dst);
    return IB_OK;
}

/* bf16: bfloat16 activations and transformed filters, float32 sums (AVX512-BF16) */
static int wino_build(cpu_exec *e, const ib_node *n, bool bf16, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *w = cpu_in(e, n, 1), *b = cpu_in(e, n, 2), *y = cpu_out(e, n, 0);
    int64_t C = x->desc.dims[1], M = y->desc.dims[1];
    dnnl_data_type_t adt = bf16 ? dnnl_bf16 : dnnl_f32;
    /* the transformed filters, shared per context: (source bytes, f32 [M, C, 3, 3, 3]) ->
     * f32 [64, C, M] or bf16 [64, C / 2, M, 2], pairs no reorder produces */
    dnnl_dims_t ud = {64, C, M}, udb = {64, C / 2, M, 2};
    dnnl_memory_desc_t xmd, ymd, wsrc, umd;
    if (cpu_md_tag(&xmd, 5, x->desc.dims, adt, dnnl_ndhwc) ||
        cpu_md_tag(&ymd, 5, y->desc.dims, adt, dnnl_ndhwc) ||
        cpu_md_plain(&wsrc, 5, w->desc.dims, dnnl_f32) ||
        (bf16 ? dnnl_memory_desc_init_by_tag(&umd, 4, udb, dnnl_bf16, dnnl_abcd)
              : dnnl_memory_desc_init_by_tag(&umd, 3, ud, dnnl_f32, dnnl_abc)))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    cpu_wino_ctx *k = ib_calloc(1, sizeof *k);
    if (!k)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    k->bf16 = bf16;
    k->N = x->desc.dims[0];
    k->D = x->desc.dims[2];
    k->H = x->desc.dims[3];
    k->W = x->desc.dims[4];
    k->C = C;
    k->M = M;
    k->bias = b ? b->cdata : NULL;
    k->max_threads = e->ctx->threads > 0 ? e->ctx->threads : 1;
    k->scratch = cpu_alloc(e, (size_t)k->max_threads * cpu_wino_scratch_floats(C, M) * sizeof(float));
    wino_src src = {w->cdata, M, C, bf16};
    void *u = NULL, *xp = NULL;
    dnnl_memory_t mx, my;
    int rc = k->scratch ? IB_OK : cpu_fail(e, err, IB_ENOMEM, "out of memory");
    if (!rc)
        rc = cpu_const_derived_shared(e, &wsrc, w->cdata, &umd, wino_fill, &src, &u, err);
    if (!rc && !(rc = cpu_use(e, x, &xmd, 1.0f, &mx, err)))
        rc = cpu_check(e, err, dnnl_memory_get_data_handle(mx, &xp), "get_data_handle");
    if (!rc)
        rc = cpu_def(e, y, &ymd, &my, err);
    if (rc) {
        ib_free(k);
        return rc;
    }
    k->u = u;
    k->x = xp;
    k->y = y->data;
    return cpu_add_kernel(e, cpu_wino_run, k, err);
}

static int conv_build(cpu_exec *e, const ib_node *n, bool transpose, bool fused, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *w = cpu_in(e, n, 1), *b = cpu_in(e, n, 2), *y = cpu_out(e, n, 0);
    cpu_val *z = fused ? cpu_in(e, n, 3) : NULL;
    conv_geom cg;
    if (!conv_geometry(n, &x->desc, &w->desc, &y->desc, transpose, &cg))
        return cpu_fail(e, err, IB_EFORMAT, "inconsistent strides/pads/dilations for the shapes");
    cpu_post post = {0};
    if (fused && !cpu_post_parse(n, &post))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "unsupported fused activation");
    /* ConvTranspose 2x2x2 / 2 of a channels-last volume: matmuls (above) */
    if (transpose && up2_shape(&cg, &w->desc) &&
        cpu_md_channels_last(&x->md, x->desc.ndim, x->desc.dims)) {
        ib_prec_notes_set(&e->precs, cpu_prec_of(cpu_act_dt(e)));
        int rc = up2_build(e, n, cpu_act_dt(e), err);
        if (rc != IB_EUNSUPPORTED)
            return rc;
    }
    int64_t M = y->desc.dims[1];
    bool q8 = !transpose && e->precision == IB_PRECISION_INT8 && x->has_range;
    bool wino_bf16 = cpu_act_dt(e) == dnnl_bf16 && e->ctx->wino_bf16_ok;
    if (!transpose && !fused && !q8 && (cpu_act_dt(e) == dnnl_f32 || wino_bf16) &&
        wino_shape(e, &cg, &x->desc, &w->desc, wino_bf16)) {
        ib_prec_notes_set(&e->precs, wino_bf16 ? IB_PRECISION_BF16 : IB_PRECISION_FP32);
        return wino_build(e, n, wino_bf16, err);
    }
    dnnl_data_type_t adt = cpu_act_dt(e);
    dnnl_data_type_t sdt = adt, wdt = q8 ? dnnl_s8 : adt, ddt = q8 ? dnnl_f32 : adt;
    /* backend ABI 10: what the run says of its int8 */
    ib_prec_notes_set(&e->precs, cpu_prec_of(wdt));
    float sx = 1.0f, sy = 1.0f;
    if (q8)
        sx = cpu_q8_scale(x, &sdt);
    /* int8 output when only int8 convolutions read y (ResNet's blocks): they take it
     * as it is, instead of a f32 dst 4x the bytes and a reorder quantising it again */
    bool qdst = q8 && y->has_range && !y->boundary && y->uses > 0 && y->uses == y->q8_uses;
    if (qdst)
        sy = cpu_q8_scale(y, &ddt);
    /* an int8 residual is copied into dst in its own quantisation (u8 or s8, scale sz,
     * so neither its range nor y's clips it) and the sum post-op rescales it by sy / sz */
    dnnl_data_type_t zdt = ddt;
    float sz = sy;
    if (qdst && z && z->has_range)
        sz = cpu_q8_scale(z, &zdt);
    post.sum_scale = sy / sz;
    post.sum_dt = zdt != ddt ? zdt : dnnl_data_type_undef;
    dnnl_memory_desc_t smd, wmd, bmd, dmd, wplain;
    dnnl_dims_t wdims;
    int rc = weights_plain_md(&cg, &w->desc, transpose, &wplain, wdims);
    if (rc || cpu_md_any(&smd, x->desc.ndim, x->desc.dims, sdt) ||
        cpu_md_any(&dmd, y->desc.ndim, y->desc.dims, ddt) ||
        dnnl_memory_desc_init_by_tag(&wmd, wplain.ndims, wdims, wdt, dnnl_format_tag_any) ||
        cpu_md_plain(&bmd, 1, &M, dnnl_f32))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    /* ConvTranspose of a channels-last input (3D U-Net's decoder, after brgconv) stays
     * channels-last: oneDNN would pick nCdhw16c and two reorders around it; the jit
     * deconvolution takes ndhwc as well (KiTS: 571 vs 891 ms fp32 for 20 runs, bf16 equal) */
    bool cl = transpose && cpu_md_channels_last(&x->md, x->desc.ndim, x->desc.dims);
    bool blocked = conv2d_blocked(e, &cg, transpose, q8, sdt, x->desc.dims[1], M);
    bool wino2d = blocked && wino2d_shape(e, &cg, &w->desc, &y->desc);
    if (blocked && (cpu_md_tag(&smd, x->desc.ndim, x->desc.dims, sdt, dnnl_nChw16c) ||
                    cpu_md_tag(&dmd, y->desc.ndim, y->desc.dims, ddt, dnnl_nChw16c)))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    if (cl && (cpu_md_tag(&smd, x->desc.ndim, x->desc.dims, sdt,
                          cpu_channels_last_tag(x->desc.ndim)) ||
               cpu_md_tag(&dmd, y->desc.ndim, y->desc.dims, ddt,
                          cpu_channels_last_tag(y->desc.ndim))))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the tensors");
    /* int8 scales: x_q = x * sx, w_q[oc] = w * sw[oc], y_q = acc * sy / (sx * sw[oc])
     * (sy = 1: a f32 dst) */
    float *sw = NULL, *osc = NULL, *bias_q = NULL;
    if (q8) {
        sw = cpu_alloc(e, (size_t)M * sizeof *sw);
        osc = cpu_alloc(e, (size_t)M * sizeof *osc);
        if (!sw || !osc)
            return cpu_fail(e, err, IB_ENOMEM, "out of memory");
        weight_scales(w->cdata, M, (int64_t)(ib_tensor_desc_nbytes(&w->desc) / 4) / M, sw);
        for (int64_t o = 0; o < M; o++)
            osc[o] = sy / (sx * sw[o]);
        if (b) {
            if (!(bias_q = cpu_alloc(e, (size_t)M * sizeof *bias_q)))
                return cpu_fail(e, err, IB_ENOMEM, "out of memory");
            for (int64_t o = 0; o < M; o++)
                bias_q[o] = ((const float *)b->cdata)[o] * sx * sw[o];
        }
    }
    dnnl_primitive_attr_t attr;
    if ((rc = cpu_attr(e, &attr, err)))
        return rc;
    if (q8)
        dnnl_primitive_attr_set_output_scales(attr, M, 1 << 1, osc);
    if ((rc = cpu_post_apply(e, &post, z != NULL, attr, err))) {
        dnnl_primitive_attr_destroy(attr);
        return rc;
    }
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st =
        conv_pd(e, transpose, wino2d, &smd, &wmd, b ? &bmd : NULL, &dmd, &cg, attr, &pd);
    if (st && (cl || blocked) && !cpu_md_any(&smd, x->desc.ndim, x->desc.dims, sdt) &&
        !cpu_md_any(&dmd, y->desc.ndim, y->desc.dims, ddt)) /* no kernel for that layout: any */
        st = conv_pd(e, transpose, false, &smd, &wmd, b ? &bmd : NULL, &dmd, &cg, attr, &pd);
    dnnl_primitive_attr_destroy(attr);
    if ((rc = cpu_check(e, err, st, transpose ? "deconvolution" : "convolution")))
        return rc;
    smd = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_t ms, mw, mb = NULL, md;
    dnnl_primitive_attr_t wattr = NULL;
    if (q8 && !(rc = cpu_attr(e, &wattr, err)))
        dnnl_primitive_attr_set_output_scales(wattr, M, cg.group > 1 ? 3 : 1, sw);
    if (!rc)
        rc = cpu_use(e, x, &smd, sx, &ms, err);
    if (!rc)
        rc = cpu_const_reorder(e, &wplain, w->cdata, &wmd, wattr, &mw, err);
    if (wattr)
        dnnl_primitive_attr_destroy(wattr);
    if (!rc && b)
        rc = cpu_mem(e, &bmd, bias_q ? bias_q : (void *)(uintptr_t)b->cdata, &mb, err);
    dnnl_memory_desc_t zmd = dmd;
    zmd.data_type = zdt;
    if (!rc)
        rc = cpu_def(e, y, &dmd, &md, err);
    /* the planner may give y the residual's storage (backend_impl.h residual_in_place):
     * then dst already holds it when z is held as the sum reads it, else y moves out */
    bool in_place = !rc && z && y->data == z->data && z->qscale == sz &&
                    dnnl_memory_desc_equal(&z->md, &zmd);
    if (!rc && z && !in_place && y->data == z->data)
        rc = cpu_def_private(e, y, &dmd, &md, err);
    if (!rc && qdst)
        y->qscale = sy;
    if (!rc && z && !in_place) /* sum post-op: dst starts as the residual */
        rc = cpu_copy_into_scaled(e, z, &zmd, y->data, sz, err);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, md}};
    int nargs = 3;
    if (mb)
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, mb};
    return cpu_add_prim(e, pd, args, nargs, err);
}

static int conv_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    return conv_build(e, n, false, false, err);
}

static int deconv_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    return conv_build(e, n, true, false, err);
}

static int fused_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    return conv_build(e, n, false, true, err);
}

const cpu_op cpu_ops_conv[] = {
    {"", "Conv", conv_supports, conv_compile},
    {"", "ConvTranspose", deconv_supports, deconv_compile},
    {"inferbench", "FusedConv", fused_supports, fused_compile},
    {NULL, NULL, NULL, NULL},
};
