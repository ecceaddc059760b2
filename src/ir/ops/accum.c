/*
 * accum.c - inferbench.WindowAccumulate (docs/ops.md): one step of a Gaussian-weighted
 * sliding-window pass, so a device backend keeps the whole volume's sums where the network's
 * logits are (issue 25: 3D U-Net KiTS19, whose windows' logits, 25 MB each at 128^3, were
 * read back and summed on one host core):
 *
 *   acc [1, C + 1, S0, S1, S2] float32 (the class sums, then the weight sum),
 *   window [1, C, r0, r1, r2] float32 (one window's logits), at [3] int64 (its start),
 *   weight [1, 1, r0, r1, r2] float32 (the Gaussian map)
 *   -> out [1, C + 1, S0, S1, S2]: acc, with out[c, at + p] = acc[c, at + p] +
 *      window[c, p] * weight[p] for c < C and out[C, at + p] = acc[C, at + p] + weight[p].
 *
 * Every tensor but `at` has a leading 1, so that a session does not take a volume's depth or
 * a window's side for a batch (the entry's window graph has symbolic sizes throughout).
 *
 * The product is rounded, then the sum (no fused multiply-add), as the reference's numpy
 * `result[...] += logits * gauss` (inference_utils.py; benchmarks.md §4.2), so the host loop
 * of the kits19 entry and this op give the same sums bit for bit. A window that does not lie
 * inside the volume is an error here; a device kernel, which cannot return one, adds nothing.
 */
#include <string.h>

#include "ir/ops/accum.h"
#include "ir/ops/ops_util.h"

static bool one(int64_t d)
{
    return d < 0 || d == 1;
}

static int infer_acc(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    IB_UNUSED(dd);
    const ib_tensor_desc *acc = in[0], *win = in[1], *at = in[2], *w = in[3];
    if (acc->ndim != 5 || win->ndim != 5 || at->ndim != 1 || w->ndim != 5)
        return IB_OP_BAD(ctx, err, "expected acc [1, C+1, S0, S1, S2], window [1, C, r0, r1, "
                                   "r2], at [3] and weight [1, 1, r0, r1, r2]");
    if (acc->dtype != IB_DTYPE_FLOAT32 || win->dtype != IB_DTYPE_FLOAT32 ||
        w->dtype != IB_DTYPE_FLOAT32 || at->dtype != IB_DTYPE_INT64)
        return IB_OP_BAD(ctx, err, "acc, window and weight must be float32, at int64");
    /* the leading 1s (a symbolic size is checked once bound) */
    bool ok = (at->dims[0] < 0 || at->dims[0] == 3) && one(acc->dims[0]) && one(win->dims[0]) &&
              one(w->dims[0]) && one(w->dims[1]);
    if (acc->dims[1] >= 0 && win->dims[1] >= 0 && acc->dims[1] != win->dims[1] + 1)
        ok = false;
    for (int a = 2; a < 5; a++) {
        int64_t r = w->dims[a], wr = win->dims[a], sz = acc->dims[a];
        if ((r >= 0 && wr >= 0 && r != wr) || (r >= 0 && sz >= 0 && r > sz))
            ok = false;
    }
    if (!ok)
        return IB_OP_BAD(ctx, err, "acc, window, at and weight disagree: acc has one channel "
                                   "more than the window's C, the window the weight's size, "
                                   "no larger than the volume, at 3 values");
    out[0] = *acc;
    return IB_OK;
}

bool ib_window_acc_fits(const ib_window_acc *w)
{
    for (int a = 0; a < 3; a++)
        if (w->at[a] < 0 || w->r[a] > w->S[a] || w->at[a] > w->S[a] - w->r[a])
            return false;
    return true;
}

void ib_window_acc_rows(const ib_window_acc *w, int64_t z0, int64_t z1)
{
    const int64_t *S = w->S, *r = w->r, *at = w->at;
    const size_t plane = (size_t)(S[0] * S[1] * S[2]), wv = (size_t)(r[0] * r[1] * r[2]);
    for (int64_t z = z0; z < z1; z++)
        for (int64_t v = 0; v < r[1]; v++) {
            size_t row = (size_t)(((at[0] + z) * S[1] + at[1] + v) * S[2] + at[2]);
            const float *gr = w->g + (z * r[1] + v) * r[2];
            for (int64_t c = 0; c < w->C; c++) {
                float *d = w->y + (size_t)c * plane + row;
                const float *s = w->win + (size_t)c * wv + (size_t)((z * r[1] + v) * r[2]);
                for (int64_t x = 0; x < r[2]; x++) {
                    float p = s[x] * gr[x]; /* rounded before the sum (see the top) */
                    d[x] += p;
                }
            }
            float *d = w->y + (size_t)w->C * plane + row;
            for (int64_t x = 0; x < r[2]; x++)
                d[x] += gr[x];
        }
}

void ib_window_acc_shape(const ib_tensor_desc *acc, const ib_tensor_desc *win,
                         const ib_tensor_desc *weight, ib_window_acc *w)
{
    w->C = win->dims[1];
    for (int a = 0; a < 3; a++) {
        w->S[a] = acc->dims[2 + a];
        w->r[a] = weight->dims[2 + a];
    }
}

void ib_window_acc_of(const ib_tensor *const *in, ib_tensor *y, ib_window_acc *w)
{
    w->acc = in[0]->data;
    w->win = in[1]->data;
    w->at = in[2]->data;
    w->g = in[3]->data;
    w->y = y->data;
    ib_window_acc_shape(&in[0]->desc, &in[1]->desc, &in[3]->desc, w);
}

int ib_window_acc_misfit(const ib_window_acc *w, ib_err *err)
{
    return ib_err_set(err, IB_EINVAL,
                      "WindowAccumulate: the window at (%lld, %lld, %lld) of %lldx%lldx%lld does "
                      "not lie in the %lldx%lldx%lld volume",
                      (long long)w->at[0], (long long)w->at[1], (long long)w->at[2],
                      (long long)w->r[0], (long long)w->r[1], (long long)w->r[2],
                      (long long)w->S[0], (long long)w->S[1], (long long)w->S[2]);
}

static int k_acc(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                 ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(n_out);
    ib_window_acc w;
    ib_window_acc_of(in, out[0], &w);
    if (!ib_window_acc_fits(&w))
        return ib_window_acc_misfit(&w, err);
    if (w.y != w.acc)
        memcpy(w.y, w.acc, ib_tensor_desc_nbytes(&in[0]->desc));
    ib_window_acc_rows(&w, 0, w.r[0]);
    return IB_OK;
}

static double flops_acc(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                        const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(ctx);
    IB_UNUSED(n_in);
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    return 2.0 * (double)ib_tensor_desc_numel(in[1]);
}

static const ib_op_def defs[] = {
    {"inferbench", "WindowAccumulate", 1, 0, infer_acc, k_acc, NULL, flops_acc, IB_DT_F32, 4, 4,
     1, 1, 0, 0},
};

const ib_op_family ib_ops_accum = {"accum", defs, IB_ARRAY_LEN(defs)};
