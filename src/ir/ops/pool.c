/*
 * pool.c - MaxPool (with the optional Indices output, storage_order,
 * dilations, ceil_mode), AveragePool (count_include_pad, ceil_mode),
 * GlobalAveragePool and GlobalMaxPool over any number of spatial dims.
 *
 * Window geometry comes from window.c. Sums accumulate in double. float32
 * has a direct path; other types (MaxPool on int8/uint8, float16, ...) go
 * through double loads/stores.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/window.h"

static int pool_window(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *x, bool is_max,
                       ib_window *w)
{
    const int64_t *ks;
    size_t nk = ib_op_attr_ints(ctx, "kernel_shape", &ks);
    if (!ks) return IB_OP_BAD(ctx, err, "attribute 'kernel_shape' is required");
    if (x->ndim < 3)
        return IB_OP_BAD(ctx, err, "X must have rank >= 3 (N, C, spatial...), not %d", x->ndim);
    if (nk != (size_t)x->ndim - 2)
        return IB_OP_BAD(ctx, err, "kernel_shape has %zu values, X has %d spatial dims", nk,
                         x->ndim - 2);
    int64_t opset = ib_op_opset(ctx);
    /* dilations: MaxPool from opset 10 (AveragePool only from 19);
     * ceil_mode from opset 10 */
    return ib_window_forward(ctx, err, x, ks, is_max && opset >= 10, opset >= 10, w);
}

static int infer_pool(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err, bool is_max)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(dd);
    ib_window w;
    int rc = pool_window(ctx, err, in[0], is_max, &w);
    if (rc) return rc;
    ib_tensor_desc y = *in[0];
    for (int32_t i = 0; i < w.nsp; i++)
        y.dims[i + 2] = w.out[i];
    out[0] = y;
    if (n_out > 1) {
        out[1] = y;
        out[1].dtype = IB_DTYPE_INT64;
    }
    return IB_OK;
}

static int infer_maxpool(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    return infer_pool(ctx, in, const_in, n_in, out, n_out, dd, err, true);
}

static int infer_avgpool(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                         const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                         uint32_t n_out, bool *dd, ib_err *err)
{
    return infer_pool(ctx, in, const_in, n_in, out, n_out, dd, err, false);
}

/* Run one pooling op over every (n, c) plane. */
static int pool_run(const ib_op_ctx *ctx, const ib_tensor *x, ib_tensor *y, ib_tensor *ind,
                    bool is_max, ib_err *err)
{
    ib_window w;
    int rc = pool_window(ctx, err, &x->desc, is_max, &w);
    if (rc) return rc;
    bool include_pad = ib_op_attr_i(ctx, "count_include_pad", 0) != 0;
    int64_t storage = ib_op_attr_i(ctx, "storage_order", 0);
    if (storage != 0 && storage != 1)
        return IB_OP_BAD(ctx, err, "storage_order = %lld must be 0 or 1", (long long)storage);
    int32_t ns = w.nsp;
    int64_t planes = x->desc.dims[0] * x->desc.dims[1];
    enum ib_dtype dt = x->desc.dtype;
    bool f32 = dt == IB_DTYPE_FLOAT32;
    const float *xf = x->data;
    float *yf = y->data;
    int64_t oidx[IB_WIN_MAX], kidx[IB_WIN_MAX];
    for (int64_t pl = 0; pl < planes; pl++) {
        int64_t xbase = pl * w.in_size, ybase = pl * w.out_size;
        memset(oidx, 0, sizeof oidx);
        for (int64_t p = 0; p < w.out_size; p++) {
            double acc = is_max ? -IB_INF : 0.0;
            int64_t count = 0, best = -1;
            int64_t padded = 1; /* window positions inside the padded extent */
            int64_t start[IB_WIN_MAX];
            for (int32_t d = 0; d < ns; d++) {
                start[d] = oidx[d] * w.stride[d] - w.pad_b[d];
                if (!is_max) { /* count for count_include_pad: clip to the padded input */
                    int64_t s = start[d], e = s + w.k[d];
                    if (e > w.in[d] + w.pad_e[d]) e = w.in[d] + w.pad_e[d];
                    padded *= e - s;
                }
            }
            memset(kidx, 0, sizeof kidx);
            for (int64_t kk = 0; kk < w.k_size; kk++) {
                int64_t off = 0, coff = 0, cmul = 1;
                bool inside = true;
                for (int32_t d = 0; d < ns; d++) {
                    int64_t pos = start[d] + kidx[d] * w.dil[d];
                    if (pos < 0 || pos >= w.in[d]) {
                        inside = false;
                        break;
                    }
                    off = off * w.in[d] + pos;
                    coff += pos * cmul; /* column-major offset for storage_order 1 */
                    cmul *= w.in[d];
                }
                if (inside) {
                    double v = f32 ? (double)xf[xbase + off] : ib_op_ld(x->data, dt, xbase + off);
                    if (is_max) {
                        if (v > acc || best < 0) {
                            acc = v;
                            best = storage ? coff : off;
                        }
                    } else {
                        acc += v;
                    }
                    count++;
                }
                for (int32_t d = ns - 1; d >= 0; d--) {
                    if (++kidx[d] < w.k[d]) break;
                    kidx[d] = 0;
                }
            }
            double r;
            if (is_max)
                r = count ? acc : -IB_INF;
            else
                r = acc / (double)(include_pad ? padded : (count ? count : 1));
            if (f32)
                yf[ybase + p] = (float)r;
            else
                ib_op_st(y->data, y->desc.dtype, ybase + p, r);
            if (ind) ((int64_t *)ind->data)[ybase + p] = best < 0 ? -1 : xbase + best;
            for (int32_t d = ns - 1; d >= 0; d--) {
                if (++oidx[d] < w.out[d]) break;
                oidx[d] = 0;
            }
        }
    }
    return IB_OK;
}

static int k_maxpool(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    return pool_run(ctx, in[0], out[0], n_out > 1 ? out[1] : NULL, true, err);
}

static int k_avgpool(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                     ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    return pool_run(ctx, in[0], out[0], NULL, false, err);
}

/* ---- global pools: reduce every spatial dim to 1 ---------------------------- */

static int infer_global(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                        const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                        uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    if (in[0]->ndim < 3)
        return IB_OP_BAD(ctx, err, "X must have rank >= 3 (N, C, spatial...), not %d", in[0]->ndim);
    out[0] = *in[0];
    for (int32_t i = 2; i < in[0]->ndim; i++)
        out[0].dims[i] = 1;
    return IB_OK;
}

static int global_run(const ib_tensor *x, ib_tensor *y, bool is_max)
{
    int64_t planes = x->desc.dims[0] * x->desc.dims[1];
    int64_t sp = 1;
    for (int32_t i = 2; i < x->desc.ndim; i++)
        sp *= x->desc.dims[i];
    enum ib_dtype dt = x->desc.dtype;
    for (int64_t pl = 0; pl < planes; pl++) {
        double acc = is_max ? -IB_INF : 0.0;
        for (int64_t i = 0; i < sp; i++) {
            double v = ib_op_ld(x->data, dt, pl * sp + i);
            if (is_max)
                acc = v > acc || v != v ? v : acc;
            else
                acc += v;
        }
        ib_op_st(y->data, y->desc.dtype, pl, is_max ? acc : acc / (double)(sp ? sp : 1));
    }
    return IB_OK;
}

static int k_gavg(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    return global_run(in[0], out[0], false);
}

static int k_gmax(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(err);
    return global_run(in[0], out[0], true);
}

#define MAXPOOL_TYPES (IB_DT_FLOATS | IB_DT(INT8) | IB_DT(UINT8))

static const ib_op_def defs[] = {
    {"", "MaxPool", 1, 0, infer_maxpool, k_maxpool, NULL, NULL, MAXPOOL_TYPES, 1, 1, 1, 2, 0, 0},
    {"", "AveragePool", 1, 0, infer_avgpool, k_avgpool, NULL, NULL, IB_DT_FLOATS, 1, 1, 1, 1, 0, 0},
    {"", "GlobalAveragePool", 1, 0, infer_global, k_gavg, NULL, NULL, IB_DT_FLOATS, 1, 1, 1, 1, 0,
     0},
    {"", "GlobalMaxPool", 1, 0, infer_global, k_gmax, NULL, NULL, IB_DT_FLOATS, 1, 1, 1, 1, 0, 0},
};

const ib_op_family ib_ops_pool = {"pool", defs, IB_ARRAY_LEN(defs)};
