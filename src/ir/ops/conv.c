/*
 * conv.c - Conv and ConvTranspose (1-D, 2-D, 3-D and beyond; groups,
 * strides, dilations, explicit or auto pads; ConvTranspose output_padding
 * and output_shape), float32.
 *
 * Conv: per batch image and group, im2col of a chunk of output positions
 * (rows = input channel x kernel offset) then one GEMM with the group's
 * filters; 1x1/stride-1/unpadded convolutions use the input directly.
 * ConvTranspose: GEMM of the transposed filters with the input, then col2im
 * scatter-add into the output. Chunking keeps scratch below ~16 MB.
 */
#include <string.h>

#include "ir/ops/conv.h"
#include "ir/ops/gemm.h"

#define COL_BUDGET_FLOATS ((int64_t)4 << 20) /* 16 MB of im2col columns */

int ib_conv_geom_init(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                      const ib_tensor_desc *w, ib_conv_geom *g)
{
    memset(g, 0, sizeof *g);
    if (x->ndim < 3)
        return IB_OP_BAD(ctx, err, "X must have rank >= 3 (N, C, spatial...), not %d", x->ndim);
    if (w->ndim != x->ndim)
        return IB_OP_BAD(ctx, err, "W has rank %d, X rank %d", w->ndim, x->ndim);
    g->group = ib_op_attr_i(ctx, "group", 1);
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->M = w->dims[0];
    if (g->group < 1) return IB_OP_BAD(ctx, err, "group = %lld must be >= 1", (long long)g->group);
    if (w->dims[1] > ((int64_t)1 << 30) || g->group > ((int64_t)1 << 30))
        return IB_OP_UNSUP(ctx, err, "group %lld x %lld channels is too large", (long long)g->group,
                           (long long)w->dims[1]);
    if (g->M % g->group)
        return IB_OP_BAD(ctx, err, "output channels %lld are not divisible by group %lld",
                         (long long)g->M, (long long)g->group);
    if (g->C >= 0 && g->C != w->dims[1] * g->group)
        return IB_OP_BAD(ctx, err, "X has %lld channels but W expects %lld x group %lld = %lld",
                         (long long)g->C, (long long)w->dims[1], (long long)g->group,
                         (long long)(w->dims[1] * g->group));
    const int64_t *ks;
    size_t nk = ib_op_attr_ints(ctx, "kernel_shape", &ks);
    for (size_t i = 0; ks && i < nk && i + 2 < (size_t)w->ndim; i++)
        if (ks[i] != w->dims[i + 2])
            return IB_OP_BAD(ctx, err, "kernel_shape[%zu] = %lld differs from W's %lld", i,
                             (long long)ks[i], (long long)w->dims[i + 2]);
    if (ks && nk != (size_t)w->ndim - 2)
        return IB_OP_BAD(ctx, err, "kernel_shape has %zu values, expected %d", nk, w->ndim - 2);
    return ib_window_forward(ctx, err, x, w->dims + 2, true, false, &g->w);
}

static bool is_pointwise(const ib_window *w)
{
    for (int32_t i = 0; i < w->nsp; i++)
        if (w->k[i] != 1 || w->stride[i] != 1 || w->pad_b[i] || w->pad_e[i]) return false;
    return true;
}

static int64_t chunk_cols(int64_t rows, int64_t total)
{
    int64_t c = COL_BUDGET_FLOATS / (rows > 0 ? rows : 1);
    if (c < 64) c = 64;
    return c < total ? c : total;
}

size_t ib_conv_scratch(const ib_conv_geom *g)
{
    int64_t rows = (g->C / g->group) * g->w.k_size;
    size_t col =
        is_pointwise(&g->w) ? 0 : (size_t)(rows * chunk_cols(rows, g->w.out_size)) * sizeof(float);
    return ib_ref_gemm_scratch(rows) + col + 64;
}

/* Decompose a linear position into per-axis indices. */
static void unravel(int64_t p, const int64_t *dims, int32_t n, int64_t *idx)
{
    for (int32_t d = n - 1; d >= 0; d--) {
        idx[d] = p % dims[d];
        p /= dims[d];
    }
}

/*
 * im2col for one image x (Cg channels of in_size) and output positions
 * [p0, p0 + np): col[r][p - p0] with r = c * k_size + kernel offset.
 */
static void im2col(const ib_window *w, int64_t Cg, const float *x, int64_t p0, int64_t np,
                   float *col)
{
    int32_t ns = w->nsp;
    int64_t kidx[IB_WIN_MAX], oidx[IB_WIN_MAX];
    for (int64_t c = 0; c < Cg; c++)
        for (int64_t kk = 0; kk < w->k_size; kk++) {
            unravel(kk, w->k, ns, kidx);
            float *dst = col + (c * w->k_size + kk) * np;
            const float *xc = x + c * w->in_size;
            unravel(p0, w->out, ns, oidx);
            for (int64_t p = 0; p < np; p++) {
                int64_t off = 0;
                bool inside = true;
                for (int32_t d = 0; d < ns; d++) {
                    int64_t pos = oidx[d] * w->stride[d] - w->pad_b[d] + kidx[d] * w->dil[d];
                    if (pos < 0 || pos >= w->in[d]) {
                        inside = false;
                        break;
                    }
                    off = off * w->in[d] + pos;
                }
                dst[p] = inside ? xc[off] : 0.0f;
                for (int32_t d = ns - 1; d >= 0; d--) { /* next output position */
                    if (++oidx[d] < w->out[d]) break;
                    oidx[d] = 0;
                }
            }
        }
}

void ib_conv_run(const ib_conv_geom *g, const float *X, const float *W, const float *B, float *Y,
                 void *scratch)
{
    const ib_window *w = &g->w;
    int64_t Cg = g->C / g->group, Mg = g->M / g->group;
    int64_t rows = Cg * w->k_size, P = w->out_size;
    bool pw = is_pointwise(w);
    int64_t cols = pw ? P : chunk_cols(rows, P);
    char *gs = scratch;
    float *col = (float *)(void *)(gs + ((ib_ref_gemm_scratch(rows) + 63) & ~(size_t)63));
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t gr = 0; gr < g->group; gr++) {
            const float *xg = X + (n * g->C + gr * Cg) * w->in_size;
            const float *wg = W + gr * Mg * rows;
            float *yg = Y + (n * g->M + gr * Mg) * P;
            for (int64_t p0 = 0; p0 < P; p0 += cols) {
                int64_t np = P - p0 < cols ? P - p0 : cols;
                const float *b = xg + p0;
                int64_t ldb = w->in_size;
                if (!pw) {
                    im2col(w, Cg, xg, p0, np, col);
                    b = col;
                    ldb = np;
                }
                ib_ref_gemm(Mg, np, rows, 1.0f, wg, rows, 1, b, ldb, 1, 0.0f, yg + p0, P, gs);
            }
            if (B)
                for (int64_t m = 0; m < Mg; m++) {
                    float bias = B[gr * Mg + m];
                    float *ym = yg + m * P;
                    for (int64_t p = 0; p < P; p++)
                        ym[p] += bias;
                }
        }
}

static int check_bias(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *b, int64_t M)
{
    if (b && (b->ndim != 1 || (b->dims[0] >= 0 && M >= 0 && b->dims[0] != M)))
        return IB_OP_BAD(ctx, err, "B must be 1-D with %lld values", (long long)M);
    return IB_OK;
}

static int infer_conv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    ib_conv_geom g;
    int rc = ib_conv_geom_init(ctx, err, in[0], in[1], &g);
    if (!rc) rc = check_bias(ctx, err, ib_op_in(in, n_in, 2), g.M);
    if (rc) return rc;
    ib_tensor_desc y = {in[0]->dtype, in[0]->ndim, {g.N, g.M}};
    for (int32_t i = 0; i < g.w.nsp; i++)
        y.dims[i + 2] = g.w.out[i];
    out[0] = y;
    return IB_OK;
}

static size_t scratch_conv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                           const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    ib_conv_geom g;
    if (ib_conv_geom_init(ctx, NULL, in[0], in[1], &g)) return 0;
    return ib_conv_scratch(&g);
}

static double flops_conv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                         const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    double per_out = 1;
    for (int32_t i = 1; i < in[1]->ndim; i++)
        per_out *= (double)in[1]->dims[i];
    return 2.0 * per_out * (double)ib_tensor_desc_numel(&out[0]);
}

static int check_f32(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *const *in, uint32_t n_in)
{
    for (uint32_t i = 0; i < n_in; i++)
        if (in[i] && in[i]->desc.dtype != IB_DTYPE_FLOAT32)
            return IB_OP_UNSUP(ctx, err, "input %u dtype %s is not supported (float32 only)", i,
                               ib_dtype_name(in[i]->desc.dtype));
    return IB_OK;
}

static int k_conv(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    ib_conv_geom g;
    int rc = check_f32(ctx, err, in, n_in);
    if (!rc) rc = ib_conv_geom_init(ctx, err, &in[0]->desc, &in[1]->desc, &g);
    if (rc) return rc;
    const ib_tensor *b = ib_op_cin(in, n_in, 2);
    ib_conv_run(&g, in[0]->data, in[1]->data, b ? b->data : NULL, out[0]->data, ctx->scratch);
    return IB_OK;
}

/* ---- ConvTranspose ---------------------------------------------------------- */

/* W is (C, M/group, k...); Y is (N, M, out...). */
static int tconv_geom(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x,
                      const ib_tensor_desc *w, ib_conv_geom *g)
{
    memset(g, 0, sizeof *g);
    if (x->ndim < 3 || w->ndim != x->ndim)
        return IB_OP_BAD(ctx, err, "X (rank %d) and W (rank %d) must have the same rank >= 3",
                         x->ndim, w->ndim);
    g->group = ib_op_attr_i(ctx, "group", 1);
    if (g->group < 1) return IB_OP_BAD(ctx, err, "group = %lld must be >= 1", (long long)g->group);
    g->N = x->dims[0];
    g->C = x->dims[1];
    if (g->group > ((int64_t)1 << 30) || w->dims[1] > ((int64_t)1 << 30))
        return IB_OP_UNSUP(ctx, err, "group %lld x %lld output channels is too large",
                           (long long)g->group, (long long)w->dims[1]);
    g->M = w->dims[1] * g->group;
    if (g->C >= 0 && w->dims[0] != g->C)
        return IB_OP_BAD(ctx, err, "W has %lld input channels, X %lld", (long long)w->dims[0],
                         (long long)g->C);
    if (g->C % g->group)
        return IB_OP_BAD(ctx, err, "input channels %lld are not divisible by group %lld",
                         (long long)g->C, (long long)g->group);
    return ib_window_transpose(ctx, err, x, w->dims + 2, &g->w);
}

static int infer_tconv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                       const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                       uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    ib_conv_geom g;
    int rc = tconv_geom(ctx, err, in[0], in[1], &g);
    if (!rc) rc = check_bias(ctx, err, ib_op_in(in, n_in, 2), g.M);
    if (rc) return rc;
    ib_tensor_desc y = {in[0]->dtype, in[0]->ndim, {g.N, g.M}};
    for (int32_t i = 0; i < g.w.nsp; i++)
        y.dims[i + 2] = g.w.out[i];
    out[0] = y;
    return IB_OK;
}

static int64_t tconv_rows(const ib_conv_geom *g)
{
    return (g->M / g->group) * g->w.k_size;
}

static size_t scratch_tconv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                            const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    ib_conv_geom g;
    if (tconv_geom(ctx, NULL, in[0], in[1], &g)) return 0;
    int64_t rows = tconv_rows(&g);
    return ib_ref_gemm_scratch(g.C / g.group) + 64 +
           (size_t)(rows * chunk_cols(rows, g.w.in_size)) * sizeof(float);
}

/* col2im: y[m][out pos] += col[(m, kk)][p] for input positions [p0, p0+np). */
static void col2im(const ib_window *w, int64_t Mg, const float *col, int64_t p0, int64_t np,
                   float *y)
{
    int32_t ns = w->nsp;
    int64_t kidx[IB_WIN_MAX], iidx[IB_WIN_MAX];
    for (int64_t m = 0; m < Mg; m++)
        for (int64_t kk = 0; kk < w->k_size; kk++) {
            unravel(kk, w->k, ns, kidx);
            const float *src = col + (m * w->k_size + kk) * np;
            float *ym = y + m * w->out_size;
            unravel(p0, w->in, ns, iidx);
            for (int64_t p = 0; p < np; p++) {
                int64_t off = 0;
                bool inside = true;
                for (int32_t d = 0; d < ns; d++) {
                    int64_t pos = iidx[d] * w->stride[d] - w->pad_b[d] + kidx[d] * w->dil[d];
                    if (pos < 0 || pos >= w->out[d]) {
                        inside = false;
                        break;
                    }
                    off = off * w->out[d] + pos;
                }
                if (inside) ym[off] += src[p];
                for (int32_t d = ns - 1; d >= 0; d--) {
                    if (++iidx[d] < w->in[d]) break;
                    iidx[d] = 0;
                }
            }
        }
}

static int k_tconv(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                   ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_out);
    ib_conv_geom g;
    int rc = check_f32(ctx, err, in, n_in);
    if (!rc) rc = tconv_geom(ctx, err, &in[0]->desc, &in[1]->desc, &g);
    if (rc) return rc;
    const ib_window *w = &g.w;
    int64_t Cg = g.C / g.group, Mg = g.M / g.group, rows = tconv_rows(&g);
    int64_t cols = chunk_cols(rows, w->in_size);
    char *gs = ctx->scratch;
    float *col = (float *)(void *)(gs + ((ib_ref_gemm_scratch(Cg) + 63) & ~(size_t)63));
    const float *X = in[0]->data, *W = in[1]->data;
    const ib_tensor *bt = ib_op_cin(in, n_in, 2);
    float *Y = out[0]->data;
    memset(Y, 0, out[0]->nbytes);
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gr = 0; gr < g.group; gr++) {
            const float *xg = X + (n * g.C + gr * Cg) * w->in_size;
            /* A(i = (m, kk), c) = W[gr*Cg + c][m][kk] */
            const float *wg = W + gr * Cg * rows;
            float *yg = Y + (n * g.M + gr * Mg) * w->out_size;
            for (int64_t p0 = 0; p0 < w->in_size; p0 += cols) {
                int64_t np = w->in_size - p0 < cols ? w->in_size - p0 : cols;
                ib_ref_gemm(rows, np, Cg, 1.0f, wg, 1, rows, xg + p0, w->in_size, 1, 0.0f, col, np,
                            gs);
                col2im(w, Mg, col, p0, np, yg);
            }
            if (bt) {
                const float *bias = bt->data;
                for (int64_t m = 0; m < Mg; m++)
                    for (int64_t p = 0; p < w->out_size; p++)
                        yg[m * w->out_size + p] += bias[gr * Mg + m];
            }
        }
    return IB_OK;
}

/* 2 x (every input element x every filter tap it feeds). */
static double flops_tconv(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                          const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    double taps = 1;
    for (int32_t i = 1; i < in[1]->ndim; i++)
        taps *= (double)in[1]->dims[i];
    return 2.0 * taps * (double)ib_tensor_desc_numel(in[0]);
}

static const ib_op_def defs[] = {
    {"", "Conv", 1, 0, infer_conv, k_conv, scratch_conv, flops_conv, IB_DT_F32, 2, 3, 1, 1, 0, 0},
    {"", "ConvTranspose", 1, 0, infer_tconv, k_tconv, scratch_tconv, flops_tconv, IB_DT_F32, 2, 3,
     1, 1, 0, 0},
};

const ib_op_family ib_ops_conv = {"conv", defs, IB_ARRAY_LEN(defs)};
