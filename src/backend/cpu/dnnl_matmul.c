/*
 * dnnl_matmul.c - MatMul (numpy batching and broadcasting, 1-D operands),
 * Gemm (transA/transB, alpha, beta, C as bias or broadcast addend) and
 * inferbench.FusedMatMul on the oneDNN matmul primitive.
 *
 * Activations are plain row-major (transposes are strides); constant B
 * operands are the weights and are reordered once at compile time into
 * oneDNN's blocked format. Precisions: fp32, bf16 (bf16 src/weights/dst,
 * f32 bias), int8 when B is constant and A calibrated (u8 or s8 src, s8
 * weights with one scale per output column, f32 dst).
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/cpu_post.h"

typedef struct mm_spec {
    cpu_val *a, *b, *y;
    cpu_val *bias;  /* [N] or [1,N]: oneDNN bias (scaled by bias_scale) */
    cpu_val *add;   /* broadcastable to y: binary add post-op (scaled by add_scale) */
    bool ta, tb;    /* transpose the last two dims of A / B */
    float alpha, bias_scale, add_scale;
    cpu_post post;
} mm_spec;

/* dims of an operand padded to nd with leading ones (1-D: [1,K] for A, [K,1] for B). */
static void pad_dims(const ib_tensor_desc *d, int nd, bool is_b, int64_t *out)
{
    int64_t tmp[IB_MAX_DIMS + 2];
    int r = d->ndim;
    for (int i = 0; i < r; i++)
        tmp[i] = d->dims[i];
    if (r == 1) {
        if (is_b) {
            tmp[1] = 1;
        } else {
            tmp[1] = tmp[0];
            tmp[0] = 1;
        }
        r = 2;
    }
    for (int i = 0; i < nd; i++)
        out[i] = i < nd - r ? 1 : tmp[i - (nd - r)];
}

/* Row-major md of dims with the last two swapped in memory when trans. */
static int md_strided(dnnl_memory_desc_t *md, int nd, const int64_t *dims, bool trans,
                      dnnl_data_type_t dt)
{
    dnnl_dims_t d, s;
    for (int i = 0; i < nd; i++)
        d[i] = dims[i];
    /* memory order: ..., rows, cols when plain; ..., cols, rows when trans */
    int64_t acc = 1;
    int order[DNNL_MAX_NDIMS];
    for (int i = 0; i < nd; i++)
        order[i] = i;
    if (trans) {
        order[nd - 1] = nd - 2;
        order[nd - 2] = nd - 1;
    }
    for (int i = nd - 1; i >= 0; i--) {
        s[order[i]] = acc;
        acc *= d[order[i]];
    }
    return dnnl_memory_desc_init_by_strides(md, nd, d, dt, s) ? IB_EUNSUPPORTED : IB_OK;
}

/* Shapes: A [..., M, K], B [..., K, N] broadcast over batch -> [..., M, N]. */
static bool mm_dims(const ib_tensor_desc *a, const ib_tensor_desc *b, bool ta, bool tb,
                    const ib_tensor_desc *y, int *ndo, int64_t *ad, int64_t *bd, int64_t *yd)
{
    int ra = a->ndim < 2 ? 2 : a->ndim, rb = b->ndim < 2 ? 2 : b->ndim;
    int nd = ra > rb ? ra : rb;
    if (a->ndim < 1 || b->ndim < 1 || nd > 6)
        return false;
    pad_dims(a, nd, false, ad);
    pad_dims(b, nd, true, bd);
    /* from stored to logical dims: A [.., M, K], B [.., K, N] */
    if (ta) {
        int64_t t = ad[nd - 1];
        ad[nd - 1] = ad[nd - 2];
        ad[nd - 2] = t;
    }
    if (tb) {
        int64_t t = bd[nd - 1];
        bd[nd - 1] = bd[nd - 2];
        bd[nd - 2] = t;
    }
    int64_t M = ad[nd - 2], K = ad[nd - 1], K2 = bd[nd - 2], N = bd[nd - 1];
    if (K != K2)
        return false;
    int64_t numel = M * N;
    for (int i = 0; i < nd - 2; i++) {
        if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1)
            return false;
        yd[i] = ad[i] > bd[i] ? ad[i] : bd[i];
        numel *= yd[i];
    }
    yd[nd - 2] = M;
    yd[nd - 1] = N;
    *ndo = nd;
    return ib_tensor_desc_numel(y) == numel;
}

static bool f32_io(const ib_graph *g, const ib_node *n, const ib_tensor_desc *const *in)
{
    const ib_value *y = ib_node_output(g, n, 0);
    return y && y->desc.dtype == IB_DTYPE_FLOAT32 && cpu_all_dtype(n, in, IB_DTYPE_FLOAT32) &&
           in[0] && in[1];
}

static bool matmul_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    int nd;
    int64_t ad[8], bd[8], yd[8];
    return n->n_inputs == 2 && f32_io(g, n, in) &&
           mm_dims(in[0], in[1], false, false, &ib_node_output(g, n, 0)->desc, &nd, ad, bd, yd);
}

/* C of Gemm / the addend: broadcastable to [M, N] (unidirectional). */
static bool addend_ok(const ib_tensor_desc *c, int64_t M, int64_t N)
{
    if (c->ndim > 2)
        return false;
    int64_t r = c->ndim == 2 ? c->dims[0] : 1, k = c->ndim >= 1 ? c->dims[c->ndim - 1] : 1;
    return (r == 1 || r == M) && (k == 1 || k == N);
}

static bool gemm_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                          const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (n->n_inputs < 2 || n->n_inputs > 3 || !f32_io(g, n, in) || in[0]->ndim != 2 ||
        in[1]->ndim != 2)
        return false;
    bool ta = ib_node_attr_int(n, "transA", 0), tb = ib_node_attr_int(n, "transB", 0);
    int nd;
    int64_t ad[8], bd[8], yd[8];
    if (!mm_dims(in[0], in[1], ta, tb, &ib_node_output(g, n, 0)->desc, &nd, ad, bd, yd))
        return false;
    float alpha = ib_node_attr_float(n, "alpha", 1.0f), beta = ib_node_attr_float(n, "beta", 1.0f);
    if (n->n_inputs == 3 && in[2]) {
        if (!addend_ok(in[2], yd[0], yd[1]))
            return false;
        /* a non-constant C cannot be pre-scaled */
        if (!cpu_is_const(g, n, 2) && (beta != 1.0f || alpha != 1.0f))
            return false;
    }
    return alpha != 0.0f;
}

/* The bias of a FusedMatMul as oneDNN's bias: a constant with N values
 * along the last dim only ([N], [1, N], ...). */
static bool is_row_bias(const ib_tensor_desc *c, int64_t N)
{
    if (ib_tensor_desc_numel(c) != N || c->ndim < 1 || c->dims[c->ndim - 1] != N)
        return false;
    return true;
}

static bool fmm_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                         const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    cpu_post post;
    if (n->n_inputs < 2 || n->n_inputs > 3 || !f32_io(g, n, in) || !cpu_post_parse(n, &post) ||
        in[0]->ndim < 2 || in[1]->ndim < 2)
        return false;
    bool ta = ib_node_attr_int(n, "transA", 0), tb = ib_node_attr_int(n, "transB", 0);
    int nd;
    int64_t ad[8], bd[8], yd[8];
    const ib_tensor_desc *y = &ib_node_output(g, n, 0)->desc;
    if (!mm_dims(in[0], in[1], ta, tb, y, &nd, ad, bd, yd))
        return false;
    if (n->n_inputs > 2 && in[2]) { /* broadcast to Y */
        if (in[2]->ndim > nd)
            return false;
        for (int i = 0; i < in[2]->ndim; i++) {
            int64_t d = in[2]->dims[i], want = yd[nd - in[2]->ndim + i];
            if (d != 1 && d != want)
                return false;
        }
    }
    return true;
}

/* int8 scales of a constant B, logical dims bd [.., K, N] (stored [.., N, K]
 * when tb): 127 / max|B[:, :, n]| per output column n. */
static void col_scales(const float *b, const int64_t *bd, int nd, bool tb, float *sw)
{
    int64_t K = bd[nd - 2], N = bd[nd - 1], batch = 1;
    for (int i = 0; i < nd - 2; i++)
        batch *= bd[i];
    for (int64_t j = 0; j < N; j++)
        sw[j] = 0;
    for (int64_t t = 0; t < batch; t++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++) {
                float v = fabsf(b[tb ? (t * N + j) * K + k : (t * K + k) * N + j]);
                sw[j] = v > sw[j] ? v : sw[j];
            }
    for (int64_t j = 0; j < N; j++)
        sw[j] = sw[j] > 0 ? 127.0f / sw[j] : 1.0f;
}

/* q = round(b * sw[column]) saturated to [-127, 127], in B's stored layout. */
static void quantise_cols(const float *b, const int64_t *bd, int nd, bool tb, const float *sw,
                          int8_t *q)
{
    int64_t K = bd[nd - 2], N = bd[nd - 1], batch = 1;
    for (int i = 0; i < nd - 2; i++)
        batch *= bd[i];
    for (int64_t t = 0; t < batch; t++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++) {
                int64_t at = tb ? (t * N + j) * K + k : (t * K + k) * N + j;
                float v = nearbyintf(b[at] * sw[j]);
                q[at] = (int8_t)(v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v);
            }
}

static int mm_build(cpu_exec *e, const mm_spec *s, ib_err *err)
{
    int nd;
    int64_t ad[8], bd[8], yd[8];
    if (!mm_dims(&s->a->desc, &s->b->desc, s->ta, s->tb, &s->y->desc, &nd, ad, bd, yd))
        return cpu_fail(e, err, IB_EFORMAT, "operand shapes do not multiply");
    int64_t N = yd[nd - 1];
    bool bconst = s->b->cdata != NULL;
    /* A [.., M, K] times one constant B [K, N] (broadcast batch dims all 1): the same bytes
     * as a 2-D [batch*M, K] x [K, N] product, which oneDNN runs as one large GEMM with its
     * blocked weight layout (for a 3-D B it keeps plain weights and loops over the batch) */
    bool flat = bconst && !s->ta && !s->add && nd > 2;
    for (int i = 0; flat && i < nd - 2; i++)
        flat = bd[i] == 1;
    if (flat) {
        int64_t rows = 1;
        for (int i = 0; i < nd - 1; i++)
            rows *= ad[i];
        int64_t K = ad[nd - 1], Kb = bd[nd - 2], Nb = bd[nd - 1];
        ad[0] = rows;
        ad[1] = K;
        bd[0] = Kb;
        bd[1] = Nb;
        yd[0] = rows;
        yd[1] = N;
        nd = 2;
    }
    bool q8 = e->precision == IB_PRECISION_INT8 && bconst && s->a->has_range;
    dnnl_data_type_t adt = cpu_act_dt(e);
    dnnl_data_type_t sdt = adt;
    float sx = q8 ? cpu_q8_scale(s->a, &sdt) : 1.0f;
    dnnl_data_type_t wdt = q8 ? dnnl_s8 : adt, ddt = q8 ? dnnl_f32 : adt;
    ib_prec_notes_set(&e->precs, cpu_prec_of(wdt)); /* backend ABI 10 */
    dnnl_memory_desc_t amd, bmd, ymd, biasmd, addmd, bplain;
    int64_t one_n[8];
    for (int i = 0; i < nd; i++)
        one_n[i] = i == nd - 1 ? N : 1;
    if (md_strided(&amd, nd, ad, s->ta, sdt) || md_strided(&bplain, nd, bd, s->tb, dnnl_f32) ||
        md_strided(&ymd, nd, yd, false, ddt) || cpu_md_plain(&biasmd, nd, one_n, dnnl_f32))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the operands");
    dnnl_dims_t bl;
    for (int i = 0; i < nd; i++)
        bl[i] = bd[i];
    if (bconst) {
        if (dnnl_memory_desc_init_by_tag(&bmd, nd, bl, wdt, dnnl_format_tag_any))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the weights");
    } else if (md_strided(&bmd, nd, bd, s->tb, wdt)) {
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe B");
    }
    float *sw = NULL, *osc = NULL, *bq = NULL;
    if (q8) {
        sw = cpu_alloc(e, (size_t)N * sizeof *sw);
        osc = cpu_alloc(e, (size_t)N * sizeof *osc);
        if (!sw || !osc)
            return cpu_fail(e, err, IB_ENOMEM, "out of memory");
        col_scales(s->b->cdata, bd, nd, s->tb, sw);
        for (int64_t j = 0; j < N; j++)
            osc[j] = s->alpha / (sx * sw[j]);
    }
    /* bias' such that oscale * (acc + bias') = alpha*acc + bias_scale*bias */
    if (s->bias) {
        if (!(bq = cpu_alloc(e, (size_t)N * sizeof *bq)))
            return cpu_fail(e, err, IB_ENOMEM, "out of memory");
        const float *bv = s->bias->cdata;
        for (int64_t j = 0; j < N; j++)
            bq[j] = bv[j] * s->bias_scale / s->alpha * (q8 ? sx * sw[j] : 1.0f);
    }
    dnnl_primitive_attr_t attr;
    int rc = cpu_attr(e, &attr, err);
    if (rc)
        return rc;
    if (q8)
        dnnl_primitive_attr_set_output_scales(attr, N, 1 << (nd - 1), osc);
    else if (s->alpha != 1.0f)
        dnnl_primitive_attr_set_output_scales(attr, 1, 0, &s->alpha);
    /* post-ops: binary add (addend), then the activation */
    const void *addp = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st = dnnl_success;
    if (s->add || s->post.has_act)
        st = dnnl_post_ops_create(&po);
    if (!st && s->add) {
        int64_t cd[8];
        /* the addend is a plain f32 tensor broadcast like numpy */
        for (int i = 0; i < nd; i++) {
            int k = i - (nd - s->add->desc.ndim);
            cd[i] = k < 0 ? 1 : s->add->desc.dims[k];
        }
        if (cpu_md_plain(&addmd, nd, cd, dnnl_f32))
            st = dnnl_unimplemented;
        else
            st = dnnl_post_ops_append_binary(po, dnnl_binary_add, &addmd);
    }
    if (!st && s->post.has_act)
        st = dnnl_post_ops_append_eltwise(po, 1.0f, s->post.alg, s->post.alpha, s->post.beta);
    if (!st && po)
        st = dnnl_primitive_attr_set_post_ops(attr, po);
    if (po)
        dnnl_post_ops_destroy(po);
    dnnl_matmul_desc_t md;
    dnnl_primitive_desc_t pd = NULL;
    if (!st)
        st = dnnl_matmul_desc_init(&md, &amd, &bmd, s->bias ? &biasmd : NULL, &ymd);
    if (!st)
        st = cpu_pd_create(e, &pd, &md, attr);
    dnnl_primitive_attr_destroy(attr);
    if ((rc = cpu_check(e, err, st, "matmul")))
        return rc;
    bmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_t ma, mb, mbias = NULL, madd = NULL, my;
    const void *ap = NULL, *bp = NULL;
    dnnl_memory_desc_t aplain;
    /* A: plain (its own dims) in sdt, quantised for int8, then viewed with nd dims */
    rc = cpu_md_plain(&aplain, s->a->desc.ndim, s->a->desc.dims, sdt) ? IB_EUNSUPPORTED : IB_OK;
    if (!rc) {
        dnnl_memory_t tmp;
        rc = cpu_use(e, s->a, &aplain, sx, &tmp, err);
        if (!rc) {
            void *p;
            dnnl_memory_get_data_handle(tmp, &p);
            ap = p;
            rc = cpu_mem(e, &amd, (void *)(uintptr_t)ap, &ma, err);
        }
    }
    if (!rc && bconst && !q8) {
        rc = cpu_const_reorder_shared(e, &bplain, s->b->cdata, &bmd, &mb, err);
    } else if (!rc && bconst) {
        /* quantise per column here (oneDNN 2.6 lacks scaled f32->s8 reorders into
         * every matmul weights format), then let the reorder add its compensation */
        dnnl_memory_desc_t bq8 = bplain;
        bq8.data_type = dnnl_s8;
        /* a temporary unless the primitive reads the plain s8 bytes themselves */
        bool keep = dnnl_memory_desc_equal(&bq8, &bmd);
        size_t qn = (size_t)ib_tensor_desc_numel(&s->b->desc);
        int8_t *q = keep ? cpu_alloc(e, qn) : ib_malloc(qn ? qn : 1);
        if (!q)
            return cpu_fail(e, err, IB_ENOMEM, "out of memory");
        quantise_cols(s->b->cdata, bd, nd, s->tb, sw, q);
        rc = cpu_const_reorder_shared(e, &bq8, q, &bmd, &mb, err);
        if (!keep)
            ib_free(q);
    } else if (!rc) {
        rc = cpu_use_plain(e, s->b, wdt, &bp, err);
        if (!rc)
            rc = cpu_mem(e, &bmd, (void *)(uintptr_t)bp, &mb, err);
    }
    if (!rc && s->bias)
        rc = cpu_mem(e, &biasmd, bq, &mbias, err);
    if (!rc && s->add) {
        if (s->add->cdata && s->add_scale != 1.0f) {
            size_t cnt = ib_tensor_desc_nbytes(&s->add->desc) / 4;
            float *c = cpu_alloc(e, cnt * sizeof *c);
            if (!c)
                rc = cpu_fail(e, err, IB_ENOMEM, "out of memory");
            for (size_t i = 0; c && i < cnt; i++)
                c[i] = ((const float *)s->add->cdata)[i] * s->add_scale;
            addp = c;
        } else {
            rc = cpu_use_plain(e, s->add, dnnl_f32, &addp, err);
        }
        if (!rc)
            rc = cpu_mem(e, &addmd, (void *)(uintptr_t)addp, &madd, err);
    }
    /* Y: plain in its own dims, viewed with nd dims by the primitive */
    dnnl_memory_desc_t yplain;
    if (!rc)
        rc = cpu_md_plain(&yplain, s->y->desc.ndim, s->y->desc.dims, ddt) ? IB_EUNSUPPORTED : IB_OK;
    if (!rc)
        rc = cpu_def(e, s->y, &yplain, NULL, err);
    if (!rc)
        rc = cpu_mem(e, &ymd, s->y->data, &my, err);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, my}};
    int na = 3;
    if (mbias)
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, mbias};
    if (madd)
        args[na++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, madd};
    return cpu_add_prim(e, pd, args, na, err);
}

static int matmul_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    mm_spec s = {.a = cpu_in(e, n, 0), .b = cpu_in(e, n, 1), .y = cpu_out(e, n, 0), .alpha = 1};
    return mm_build(e, &s, err);
}

static int gemm_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    mm_spec s = {.a = cpu_in(e, n, 0), .b = cpu_in(e, n, 1), .y = cpu_out(e, n, 0)};
    s.ta = ib_node_attr_int(n, "transA", 0) != 0;
    s.tb = ib_node_attr_int(n, "transB", 0) != 0;
    s.alpha = ib_node_attr_float(n, "alpha", 1.0f);
    float beta = ib_node_attr_float(n, "beta", 1.0f);
    cpu_val *c = cpu_in(e, n, 2);
    int64_t N = s.y->desc.dims[1];
    if (c && c->cdata && ib_tensor_desc_numel(&c->desc) == N &&
        (c->desc.ndim == 1 || (c->desc.ndim == 2 && c->desc.dims[0] == 1))) {
        s.bias = c;
        s.bias_scale = beta;
    } else if (c) {
        s.add = c;
        s.add_scale = beta;
    }
    return mm_build(e, &s, err);
}

static int fmm_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    mm_spec s = {.a = cpu_in(e, n, 0), .b = cpu_in(e, n, 1), .y = cpu_out(e, n, 0)};
    s.ta = ib_node_attr_int(n, "transA", 0) != 0;
    s.tb = ib_node_attr_int(n, "transB", 0) != 0;
    s.alpha = ib_node_attr_float(n, "alpha", 1.0f);
    cpu_val *bias = cpu_in(e, n, 2);
    int64_t N = s.y->desc.dims[s.y->desc.ndim - 1];
    if (bias && bias->cdata && is_row_bias(&bias->desc, N) && s.alpha != 0.0f)
        s.bias = bias;
    else
        s.add = bias;
    s.bias_scale = 1.0f;
    s.add_scale = 1.0f;
    if (!cpu_post_parse(n, &s.post))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "unsupported fused activation");
    return mm_build(e, &s, err);
}

const cpu_op cpu_ops_matmul[] = {
    {"", "MatMul", matmul_supports, matmul_compile},
    {"", "Gemm", gemm_supports, gemm_compile},
    {"inferbench", "FusedMatMul", fmm_supports, fmm_compile},
    {NULL, NULL, NULL, NULL},
};
