/*
 * rnn.c - LSTM per the ONNX spec (opsets 7 and 14): directions forward,
 * reverse and bidirectional; gates in i, o, f, c order; optional bias,
 * sequence_lens, initial_h/initial_c and peepholes (i, o, f); clip;
 * input_forget; layout (opset 14); the activations list with
 * activation_alpha/beta (defaults Sigmoid, Tanh, Tanh). float32.
 *
 *   i = f(X Wi' + H Ri' + Pi.C + Wbi + Rbi)   f = f(X Wf' + H Rf' + Pf.C + Wbf + Rbf)
 *   c~ = g(X Wc' + H Rc' + Wbc + Rbc)          C' = f.C + i.c~
 *   o = f(X Wo' + H Ro' + Po.C' + Wbo + Rbo)   H' = o.h(C')
 *
 * Steps at or beyond a batch entry's sequence length leave its state
 * unchanged and write zeros to Y, as ONNX Runtime does.
 */
#include <math.h>
#include <string.h>

#include "ir/ops/gemm.h"
#include "ir/ops/ops_util.h"

enum act_kind {
    ACT_SIGMOID,
    ACT_TANH,
    ACT_RELU,
    ACT_AFFINE,
    ACT_LEAKY,
    ACT_THRELU,
    ACT_STANH,
    ACT_HSIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS,
};

typedef struct act {
    enum act_kind k;
    double a, b;
} act;

static double act_apply(const act *f, double x)
{
    switch (f->k) {
    case ACT_SIGMOID:
        return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case ACT_TANH:
        return tanh(x);
    case ACT_RELU:
        return x > 0 ? x : 0;
    case ACT_AFFINE:
        return f->a * x + f->b;
    case ACT_LEAKY:
        return x >= 0 ? x : f->a * x;
    case ACT_THRELU:
        return x > f->a ? x : 0;
    case ACT_STANH:
        return f->a * tanh(f->b * x);
    case ACT_HSIGMOID:
        return fmax(0.0, fmin(1.0, f->a * x + f->b));
    case ACT_ELU:
        return x >= 0 ? x : f->a * (exp(x) - 1);
    case ACT_SOFTSIGN:
        return x / (1 + fabs(x));
    case ACT_SOFTPLUS:
        return log1p(exp(x));
    }
    return x;
}

typedef struct lstm_plan {
    int64_t seq, batch, input, hidden;
    int ndir;
    bool reverse_only;
    bool layout1;
    bool input_forget;
    double clip; /* 0 = none */
    act f[2], g[2], h[2];
} lstm_plan;

static int parse_acts(const ib_op_ctx *ctx, ib_err *err, lstm_plan *p)
{
    static const struct {
        const char *name;
        enum act_kind k;
        int na, nb;
        double da, db;
    } table[] = {
        {"Sigmoid", ACT_SIGMOID, 0, 0, 0, 0},
        {"Tanh", ACT_TANH, 0, 0, 0, 0},
        {"Relu", ACT_RELU, 0, 0, 0, 0},
        {"Affine", ACT_AFFINE, 1, 1, 1.0, 0.0},
        {"LeakyRelu", ACT_LEAKY, 1, 0, 0.01, 0},
        {"ThresholdedRelu", ACT_THRELU, 1, 0, 1.0, 0},
        {"ScaledTanh", ACT_STANH, 1, 1, 1.0, 1.0},
        {"HardSigmoid", ACT_HSIGMOID, 1, 1, 0.2, 0.5},
        {"Elu", ACT_ELU, 1, 0, 1.0, 0},
        {"Softsign", ACT_SOFTSIGN, 0, 0, 0, 0},
        {"Softplus", ACT_SOFTPLUS, 0, 0, 0, 0},
    };
    const ib_attr *acts = ctx && ctx->node ? ib_node_attr(ctx->node, "activations") : NULL;
    const ib_attr *al = ctx && ctx->node ? ib_node_attr(ctx->node, "activation_alpha") : NULL;
    const ib_attr *be = ctx && ctx->node ? ib_node_attr(ctx->node, "activation_beta") : NULL;
    size_t need = 3 * (size_t)p->ndir, ia = 0, ibeta = 0;
    act list[6];
    for (size_t i = 0; i < need; i++) {
        list[i].k = i % 3 == 0 ? ACT_SIGMOID : ACT_TANH;
        list[i].a = list[i].b = 0;
    }
    if (acts && acts->type == IB_ATTR_STRINGS) {
        if (acts->count != need)
            return IB_OP_BAD(ctx, err, "activations has %zu entries, expected %zu", acts->count,
                             need);
        for (size_t i = 0; i < need; i++) {
            size_t t = 0;
            while (t < IB_ARRAY_LEN(table) && strcmp(table[t].name, acts->strings[i]) != 0)
                t++;
            if (t == IB_ARRAY_LEN(table))
                return IB_OP_UNSUP(ctx, err, "activation '%s' is not supported", acts->strings[i]);
            list[i].k = table[t].k;
            list[i].a = table[t].da;
            list[i].b = table[t].db;
            if (table[t].na && al && al->type == IB_ATTR_FLOATS && ia < al->count)
                list[i].a = (double)al->floats[ia++];
            if (table[t].nb && be && be->type == IB_ATTR_FLOATS && ibeta < be->count)
                list[i].b = (double)be->floats[ibeta++];
        }
    }
    for (int d = 0; d < p->ndir; d++) {
        p->f[d] = list[3 * d];
        p->g[d] = list[3 * d + 1];
        p->h[d] = list[3 * d + 2];
    }
    return IB_OK;
}

static int lstm_plan_init(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *const *in,
                          uint32_t n_in, lstm_plan *p)
{
    memset(p, 0, sizeof *p);
    const char *dir = ib_op_attr_s(ctx, "direction", "forward");
    if (strcmp(dir, "forward") == 0)
        p->ndir = 1;
    else if (strcmp(dir, "reverse") == 0) {
        p->ndir = 1;
        p->reverse_only = true;
    } else if (strcmp(dir, "bidirectional") == 0)
        p->ndir = 2;
    else
        return IB_OP_UNSUP(ctx, err, "attribute direction='%s' is not supported", dir);
    p->layout1 = ib_op_opset(ctx) >= 14 && ib_op_attr_i(ctx, "layout", 0) == 1;
    p->input_forget = ib_op_attr_i(ctx, "input_forget", 0) != 0;
    p->clip = (double)ib_op_attr_f(ctx, "clip", 0.0f);
    if (p->clip < 0) return IB_OP_BAD(ctx, err, "clip = %g must be > 0", p->clip);
    const ib_tensor_desc *x = in[0], *w = in[1], *r = in[2];
    if (x->ndim != 3 || w->ndim != 3 || r->ndim != 3)
        return IB_OP_BAD(ctx, err, "X, W and R must be 3-D (got rank %d, %d, %d)", x->ndim, w->ndim,
                         r->ndim);
    p->seq = x->dims[p->layout1 ? 1 : 0];
    p->batch = x->dims[p->layout1 ? 0 : 1];
    p->input = x->dims[2];
    p->hidden = ib_op_attr_i(ctx, "hidden_size", r->dims[2]);
    int64_t H = p->hidden;
    if (H <= 0 || H > ((int64_t)1 << 30))
        return IB_OP_BAD(ctx, err, "hidden_size %lld is invalid", (long long)H);
    if (w->dims[0] != p->ndir || w->dims[1] != 4 * H || (p->input >= 0 && w->dims[2] != p->input))
        return IB_OP_BAD(ctx, err, "W must be [%d, %lld, %lld]", p->ndir, (long long)(4 * H),
                         (long long)p->input);
    if (r->dims[0] != p->ndir || r->dims[1] != 4 * H || r->dims[2] != H)
        return IB_OP_BAD(ctx, err, "R must be [%d, %lld, %lld]", p->ndir, (long long)(4 * H),
                         (long long)H);
    const ib_tensor_desc *b = ib_op_in(in, n_in, 3), *pp = ib_op_in(in, n_in, 7);
    if (b && (b->ndim != 2 || b->dims[0] != p->ndir || b->dims[1] != 8 * H))
        return IB_OP_BAD(ctx, err, "B must be [%d, %lld]", p->ndir, (long long)(8 * H));
    if (pp && (pp->ndim != 2 || pp->dims[0] != p->ndir || pp->dims[1] != 3 * H))
        return IB_OP_BAD(ctx, err, "P must be [%d, %lld]", p->ndir, (long long)(3 * H));
    for (uint32_t i = 5; i <= 6; i++) {
        const ib_tensor_desc *s = ib_op_in(in, n_in, i);
        int64_t b0 = p->layout1 ? p->batch : p->ndir, b1 = p->layout1 ? p->ndir : p->batch;
        if (s && (s->ndim != 3 || s->dims[0] != b0 || s->dims[1] != b1 || s->dims[2] != H))
            return IB_OP_BAD(ctx, err, "initial_%c must be [%lld, %lld, %lld]", i == 5 ? 'h' : 'c',
                             (long long)b0, (long long)b1, (long long)H);
    }
    const ib_tensor_desc *sl = ib_op_in(in, n_in, 4);
    if (sl && (sl->dtype != IB_DTYPE_INT32 || sl->ndim != 1 ||
               (p->batch >= 0 && sl->dims[0] != p->batch)))
        return IB_OP_BAD(ctx, err, "sequence_lens must be int32 [batch]");
    return parse_acts(ctx, err, p);
}

static int infer_lstm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                      const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                      uint32_t n_out, bool *dd, ib_err *err)
{
    IB_UNUSED(const_in);
    IB_UNUSED(dd);
    lstm_plan p;
    int rc = lstm_plan_init(ctx, err, in, n_in, &p);
    if (rc) return rc;
    enum ib_dtype dt = in[0]->dtype;
    ib_tensor_desc y = {dt, 4, {p.seq, p.ndir, p.batch, p.hidden}};
    ib_tensor_desc s = {dt, 3, {p.ndir, p.batch, p.hidden}};
    if (p.layout1) {
        ib_tensor_desc y1 = {dt, 4, {p.batch, p.seq, p.ndir, p.hidden}};
        ib_tensor_desc s1 = {dt, 3, {p.batch, p.ndir, p.hidden}};
        y = y1;
        s = s1;
    }
    for (uint32_t i = 0; i < n_out; i++)
        out[i] = i == 0 ? y : s;
    return IB_OK;
}

static size_t scratch_lstm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                           const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    lstm_plan p;
    if (lstm_plan_init(ctx, NULL, in, n_in, &p)) return 0;
    size_t g = (size_t)(p.seq * p.batch * 4 * p.hidden) + (size_t)(p.batch * 4 * p.hidden);
    size_t xs = (size_t)(p.seq * p.batch * p.input); /* time-major copy of X for layout 1 */
    size_t st = (size_t)(2 * p.batch * p.hidden);
    return (g + xs + st) * sizeof(float) + ib_ref_gemm_scratch(IB_MAX(p.input, p.hidden)) + 256;
}

static double clipv(double v, double c)
{
    return c > 0 ? (v < -c ? -c : v > c ? c : v) : v;
}

/* One direction over the whole sequence. Y/Yh/Yc are written through the
 * index helpers so both layouts share the loop. */
static void lstm_dir(const lstm_plan *p, int d, bool reverse, const float *X, const float *W,
                     const float *R, const float *B, const int32_t *seq_lens, const float *h0,
                     const float *c0, const float *P, float *Y, float *Yh, float *Yc, float *xg,
                     float *hg, float *Hs, float *Cs, void *gs)
{
    int64_t T = p->seq, N = p->batch, I = p->input, H = p->hidden, G = 4 * H;
    const float *Wd = W + d * G * I, *Rd = R + d * G * H;
    /* xg[t][n][g] = X[t][n] . W[g] for every step at once */
    ib_ref_gemm(T * N, G, I, 1.0f, X, I, 1, Wd, 1, I, 0.0f, xg, G, gs);
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < H; k++) {
            int64_t si = p->layout1 ? (n * p->ndir + d) * H + k : (d * N + n) * H + k;
            Hs[n * H + k] = h0 ? h0[si] : 0.0f;
            Cs[n * H + k] = c0 ? c0[si] : 0.0f;
        }
    const float *Pi = P ? P + d * 3 * H : NULL, *Po = Pi ? Pi + H : NULL,
                *Pf = Pi ? Pi + 2 * H : NULL;
    const float *Wb = B ? B + d * 8 * H : NULL, *Rb = Wb ? Wb + G : NULL;
    for (int64_t step = 0; step < T; step++) {
        /* hg[n][g] = H[n] . R[g] */
        ib_ref_gemm(N, G, H, 1.0f, Hs, H, 1, Rd, 1, H, 0.0f, hg, G, gs);
        for (int64_t n = 0; n < N; n++) {
            int64_t len = seq_lens ? seq_lens[n] : T;
            int64_t t = reverse ? len - 1 - step : step;
            float *yrow = NULL;
            if (step >= len) { /* rows len..T-1 of Y are zero, in either direction */
                if (Y) {
                    yrow = p->layout1 ? Y + ((n * T + step) * p->ndir + d) * H
                                      : Y + ((step * p->ndir + d) * N + n) * H;
                    memset(yrow, 0, sizeof(float) * (size_t)H);
                }
                continue;
            }
            const float *xr = xg + (t * N + n) * G, *hr = hg + n * G;
            if (Y)
                yrow = p->layout1 ? Y + ((n * T + t) * p->ndir + d) * H
                                  : Y + ((t * p->ndir + d) * N + n) * H;
            for (int64_t k = 0; k < H; k++) {
                double gate[4];
                for (int q = 0; q < 4; q++) {
                    int64_t gi = q * H + k;
                    gate[q] = (double)xr[gi] + (double)hr[gi] +
                              (Wb ? (double)Wb[gi] + (double)Rb[gi] : 0.0);
                }
                double c_prev = (double)Cs[n * H + k];
                double ig = act_apply(&p->f[d],
                                      clipv(gate[0] + (Pi ? (double)Pi[k] * c_prev : 0), p->clip));
                double fg;
                if (p->input_forget)
                    fg = 1.0 - ig;
                else
                    fg = act_apply(&p->f[d],
                                   clipv(gate[2] + (Pf ? (double)Pf[k] * c_prev : 0), p->clip));
                double cg = act_apply(&p->g[d], clipv(gate[3], p->clip));
                double c = fg * c_prev + ig * cg;
                double og =
                    act_apply(&p->f[d], clipv(gate[1] + (Po ? (double)Po[k] * c : 0), p->clip));
                double h = og * act_apply(&p->h[d], c);
                /* the next step's H.R' was not computed yet, so H updates in place */
                Cs[n * H + k] = (float)c;
                Hs[n * H + k] = (float)h;
                if (yrow) yrow[k] = (float)h;
            }
        }
    }
    for (int64_t n = 0; n < N; n++) {
        int64_t si = p->layout1 ? (n * p->ndir + d) * H : (d * N + n) * H;
        if (Yh) memcpy(Yh + si, Hs + n * H, sizeof(float) * (size_t)H);
        if (Yc) memcpy(Yc + si, Cs + n * H, sizeof(float) * (size_t)H);
    }
}

static int k_lstm(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                  ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    const ib_tensor_desc *ds[8] = {NULL};
    for (uint32_t i = 0; i < n_in && i < 8; i++) {
        ds[i] = in[i] ? &in[i]->desc : NULL;
        if (in[i] && i != 4 && in[i]->desc.dtype != IB_DTYPE_FLOAT32)
            return IB_OP_UNSUP(ctx, err, "input %u dtype %s is not supported (float32 only)", i,
                               ib_dtype_name(in[i]->desc.dtype));
    }
    lstm_plan p;
    int rc = lstm_plan_init(ctx, err, ds, n_in, &p);
    if (rc) return rc;
    int64_t T = p.seq, N = p.batch, I = p.input, H = p.hidden;
    const ib_tensor *sl = ib_op_cin(in, n_in, 4);
    const int32_t *lens = sl ? sl->data : NULL;
    for (int64_t n = 0; lens && n < N; n++)
        if (lens[n] < 0 || lens[n] > T)
            return IB_OP_BAD(ctx, err, "sequence_lens[%lld] = %d is outside 0..%lld", (long long)n,
                             lens[n], (long long)T);
    float *xg = ctx->scratch;
    float *hg = xg + T * N * 4 * H;
    float *xt = hg + N * 4 * H;
    float *Hs = xt + T * N * I, *Cs = Hs + N * H;
    void *gs = (void *)(((uintptr_t)(Cs + N * H) + 63) & ~(uintptr_t)63);
    const float *X = in[0]->data;
    if (p.layout1) { /* [N, T, I] -> [T, N, I] */
        for (int64_t t = 0; t < T; t++)
            for (int64_t n = 0; n < N; n++)
                memcpy(xt + (t * N + n) * I, X + (n * T + t) * I, sizeof(float) * (size_t)I);
        X = xt;
    }
    const ib_tensor *b = ib_op_cin(in, n_in, 3), *h0 = ib_op_cin(in, n_in, 5),
                    *c0 = ib_op_cin(in, n_in, 6), *pp = ib_op_cin(in, n_in, 7);
    float *Y = n_out > 0 && out[0] ? out[0]->data : NULL;
    float *Yh = n_out > 1 && out[1] ? out[1]->data : NULL;
    float *Yc = n_out > 2 && out[2] ? out[2]->data : NULL;
    for (int d = 0; d < p.ndir; d++)
        lstm_dir(&p, d, p.reverse_only || d == 1, X, in[1]->data, in[2]->data, b ? b->data : NULL,
                 lens, h0 ? h0->data : NULL, c0 ? c0->data : NULL, pp ? pp->data : NULL, Y, Yh, Yc,
                 xg, hg, Hs, Cs, gs);
    return IB_OK;
}

static double flops_lstm(const ib_op_ctx *ctx, const ib_tensor_desc *const *in, uint32_t n_in,
                         const ib_tensor_desc *out, uint32_t n_out)
{
    IB_UNUSED(out);
    IB_UNUSED(n_out);
    lstm_plan p;
    if (lstm_plan_init(ctx, NULL, in, n_in, &p)) return 0;
    return 2.0 * (double)p.ndir * (double)p.seq * (double)p.batch * 4.0 * (double)p.hidden *
           (double)(p.input + p.hidden);
}

static const ib_op_def defs[] = {
    {"", "LSTM", 7, 0, infer_lstm, k_lstm, scratch_lstm, flops_lstm, IB_DT_F32, 3, 8, 0, 3, 0, 0},
};

const ib_op_family ib_ops_rnn = {"rnn", defs, IB_ARRAY_LEN(defs)};
