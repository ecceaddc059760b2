/*
 * test_cuda_ops.c - cross-backend op conformance of the cuda backend (ggml
 * test-backend-ops style, like the cpu_ops_* tests): every op the cuda
 * backend registers, on random inputs over several shapes, at fp32, fp16 and
 * bf16, against the reference backend (src/ir/ops kernels).
 *
 * Device buffers are not host-visible, so the whole arena image (64 guard
 * bytes of 0xA5 around every slot, outputs pre-filled with NaN bytes 0xFF)
 * goes in with one tensor_set and comes back with one tensor_get; every byte
 * outside the slots must be untouched. Each case runs twice; both runs must
 * agree bit for bit. NMSE tolerances: fp32 1e-7 (data movement bit-exact),
 * fp16/bf16 1e-3 for matmul/conv cases (2e-2 for bf16, 8 mantissa bits),
 * other ops run in fp32 at every precision and keep the fp32 bound. A node
 * the backend refuses at a precision (Conv at bf16) is reported and skipped,
 * not failed. Without a GPU every case test skips with the reason; the
 * coverage and model-partition tests run anywhere (they only call
 * supports_op, which needs no device).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "ir/op.h"
#include "test.h"
#ifdef IB_WITH_CUDA
#include "backend/cuda/cuda_internal.h"
#endif

#define CX_MAXV 64
#define GUARD 64
#define F_LOWP 0x1u  /* a compute op: fp16/bf16 change its result */
#define F_EXACT 0x2u /* data movement: bit-exact at fp32 */

typedef struct cx {
    ib_graph *g;
    uint64_t rng;
    bool fill[CX_MAXV];
    double lo[CX_MAXV], hi[CX_MAXV];
    bool list_only;
    char ops[96][32];
    int n_ops;
    int cases, failed;
    const char *fam;
    const char *dut; /* backend under test: "cuda" (or "cpu" for the harness self-check) */
    ib_backend *cached[5]; /* dut instances by precision, reused across cases (a GPU
                            * context per case would cost most of the test's time) */
} cx;

static uint64_t rnd(cx *c)
{
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * 2685821657736338717ull;
}

static double urand(cx *c)
{
    return (double)(rnd(c) >> 11) * (1.0 / 9007199254740992.0);
}

static void fill(cx *c, void *data, const ib_tensor_desc *d, double lo, double hi)
{
    int64_t n = ib_tensor_desc_numel(d);
    for (int64_t i = 0; i < n; i++) {
        double u = lo + (hi - lo) * urand(c);
        int64_t k = (int64_t)floor(lo + (hi - lo + 1) * urand(c));
        switch (d->dtype) {
        case IB_DTYPE_FLOAT32: ((float *)data)[i] = (float)u; break;
        case IB_DTYPE_INT64: ((int64_t *)data)[i] = k; break;
        case IB_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)k; break;
        default: memset((char *)data + (size_t)i * ib_dtype_size(d->dtype), 0, ib_dtype_size(d->dtype));
        }
    }
}

static ib_tensor_desc mk(enum ib_dtype dt, int nd, const int64_t *dims)
{
    ib_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.ndim = nd;
    for (int i = 0; i < nd; i++)
        d.dims[i] = dims[i];
    return d;
}

static void fresh(cx *c)
{
    if (c->g)
        ib_graph_destroy(c->g);
    ASSERT_OK(ib_graph_create(&c->g));
    memset(c->fill, 0, sizeof c->fill);
}

static ib_value_id in_(cx *c, enum ib_dtype dt, int nd, const int64_t *dims, double lo, double hi)
{
    if (!c->g)
        fresh(c);
    char name[32];
    snprintf(name, sizeof name, "x%zu", c->g->values.len);
    ib_tensor_desc d = mk(dt, nd, dims);
    ib_value_id v = ib_graph_add_value(c->g, name, &d);
    ASSERT_TRUE(v >= 0 && v < CX_MAXV);
    c->fill[v] = true;
    c->lo[v] = lo;
    c->hi[v] = hi;
    return v;
}

static ib_value_id add_const(cx *c, ib_tensor *t)
{
    if (!c->g)
        fresh(c);
    char name[32];
    snprintf(name, sizeof name, "c%zu", c->g->values.len);
    ib_value_id v = ib_graph_add_value(c->g, name, &t->desc);
    ASSERT_TRUE(v >= 0 && v < CX_MAXV);
    ASSERT_OK(ib_graph_set_constant(c->g, v, t));
    return v;
}

static ib_value_id cst(cx *c, int nd, const int64_t *dims, double lo, double hi)
{
    ib_tensor_desc d = mk(IB_DTYPE_FLOAT32, nd, dims);
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    fill(c, t->data, &d, lo, hi);
    return add_const(c, t);
}

static ib_value_id cst_i64(cx *c, int nd, const int64_t *dims, const int64_t *vals)
{
    ib_tensor_desc d = mk(IB_DTYPE_INT64, nd, dims);
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    memcpy(t->data, vals, t->nbytes);
    return add_const(c, t);
}

static ib_value_id cst_f(cx *c, float v)
{
    ib_tensor_desc d = mk(IB_DTYPE_FLOAT32, 0, NULL);
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    memcpy(t->data, &v, sizeof v);
    return add_const(c, t);
}

static ib_attr ai(const char *n, int64_t v)
{
    return (ib_attr){.name = n, .type = IB_ATTR_INT, .i = v};
}
static ib_attr af(const char *n, float v)
{
    return (ib_attr){.name = n, .type = IB_ATTR_FLOAT, .f = v};
}
static ib_attr as(const char *n, const char *s)
{
    return (ib_attr){.name = n, .type = IB_ATTR_STRING, .s = s, .s_len = strlen(s)};
}
static ib_attr aints(const char *n, size_t k, const int64_t *v)
{
    return (ib_attr){.name = n, .type = IB_ATTR_INTS, .ints = v, .count = k};
}

static ib_value_id node(cx *c, const char *op, const char *dom, const ib_value_id *in, uint32_t n_in,
                        const ib_attr *at, uint32_t n_at)
{
    if (!c->g)
        fresh(c);
    ib_graph *g = c->g;
    char name[32];
    snprintf(name, sizeof name, "v%zu", g->values.len);
    ib_value_id o = ib_graph_add_value(g, name, NULL);
    ASSERT_TRUE(o >= 0 && o < CX_MAXV);
    char nn[48];
    snprintf(nn, sizeof nn, "%s_%zu", op, g->nodes.len);
    ib_node_id id = ib_graph_add_node(g, op, dom, nn, in, n_in, &o, 1, at, n_at);
    ASSERT_TRUE(id >= 0);
    if (dom[0])
        g->nodes.data[id].opset = 1;
    const ib_tensor_desc *descs[8];
    const ib_tensor *cin[8];
    ASSERT_TRUE(n_in <= 8);
    for (uint32_t i = 0; i < n_in; i++) {
        descs[i] = in[i] == IB_VALUE_NONE ? NULL : &g->values.data[in[i]].desc;
        cin[i] = in[i] == IB_VALUE_NONE ? NULL : g->values.data[in[i]].constant;
    }
    ib_tensor_desc od;
    memset(&od, 0, sizeof od);
    bool dd = false;
    ib_err err;
    ib_err_clear(&err);
    if (ib_op_infer(g, &g->nodes.data[id], descs, cin, n_in, &od, 1, &dd, &err))
        ib_test_fail(__FILE__, __LINE__, "[%s] bad case: shape inference of %s: %s", c->fam, op,
                     err.msg);
    g->values.data[o].desc = od;
    g->values.data[o].shape_known = true;
    if (c->list_only) {
        bool seen = false;
        for (int i = 0; i < c->n_ops; i++)
            seen |= strcmp(c->ops[i], op) == 0;
        if (!seen && c->n_ops < (int)IB_ARRAY_LEN(c->ops))
            snprintf(c->ops[c->n_ops++], sizeof c->ops[0], "%s", op);
    }
    return o;
}

/* ---- running one case on one backend ---------------------------------------------- */

typedef struct res {
    void *data[CX_MAXV];
} res;

static void res_free(res *r)
{
    for (int i = 0; i < CX_MAXV; i++)
        free(r->data[i]);
    memset(r, 0, sizeof *r);
}

/* 1 = ran, 0 = a node refused at this precision (why says which), <0 = failure. */
static int exec_on(cx *c, const char *backend, enum ib_precision p, void *const *inputs,
                   const ib_value_id *outs, uint32_t n_out, res *out, char *why, size_t nwhy)
{
    ib_graph *g = c->g;
    ib_backend_config cfg;
    ib_backend_config_defaults(&cfg);
    cfg.threads = 1;
    cfg.precision = p;
    bool reuse = strcmp(backend, c->dut ? c->dut : "") == 0 && (int)p >= 0 && (int)p < 5;
    ib_backend *be = reuse ? c->cached[p] : NULL;
    ib_err err;
    ib_err_clear(&err);
    if (!be && ib_backend_create(backend, &cfg, &be, &err)) {
        snprintf(why, nwhy, "create %s: %.700s", backend, err.msg);
        return -1;
    }
    if (reuse)
        c->cached[p] = be;
    ib_node_id nodes[CX_MAXV];
    ib_backend_binding bind[CX_MAXV];
    bool used[CX_MAXV] = {false};
    uint32_t nn = 0, nb = 0;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        nodes[nn++] = (ib_node_id)i;
        const ib_tensor_desc *in[8];
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            in[k] = n->inputs[k] == IB_VALUE_NONE ? NULL : &g->values.data[n->inputs[k]].desc;
            if (n->inputs[k] != IB_VALUE_NONE)
                used[n->inputs[k]] = true;
        }
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] != IB_VALUE_NONE)
                used[n->outputs[k]] = true;
        if (!ib_backend_supports_op(be, g, n, in, p)) {
            snprintf(why, nwhy, "%s refuses %s at %s", backend, n->name, ib_precision_name(p));
            if (!reuse)
                ib_backend_destroy(be);
            return 0;
        }
    }
    size_t off = GUARD;
    for (size_t v = 0; v < g->values.len; v++) {
        if (!used[v])
            continue;
        ib_backend_binding *bd = &bind[nb++];
        memset(bd, 0, sizeof *bd);
        const ib_value *val = &g->values.data[v];
        bd->value = (ib_value_id)v;
        bd->desc = val->desc;
        if (val->constant) {
            bd->constant = val->constant;
            bd->nbytes = val->constant->nbytes;
            continue;
        }
        bd->boundary = true; /* every value read back: plain layout */
        bd->nbytes = ib_tensor_desc_nbytes(&val->desc);
        bd->offset = off;
        off = (off + bd->nbytes + GUARD + IB_BACKEND_ALIGN - 1) & ~(size_t)(IB_BACKEND_ALIGN - 1);
    }
    size_t total = off + GUARD;
    unsigned char *img = malloc(total), *back = malloc(total);
    ASSERT_NOT_NULL(img);
    ASSERT_NOT_NULL(back);
    memset(img, 0xA5, total);
    ib_backend_buffer *buf = NULL;
    ib_backend_graph *gr = NULL;
    int rc = -1;
    if (ib_backend_buffer_alloc(be, total, &buf, &err)) {
        snprintf(why, nwhy, "buffer: %.700s", err.msg);
        goto done;
    }
    for (uint32_t i = 0; i < nb; i++) {
        ib_backend_binding *bd = &bind[i];
        if (bd->constant)
            continue;
        bd->buffer = buf;
        if (c->fill[bd->value])
            memcpy(img + bd->offset, inputs[bd->value], bd->nbytes);
        else
            memset(img + bd->offset, 0xFF, bd->nbytes);
    }
    ib_backend_subgraph sg = {.graph = g, .nodes = nodes, .n_nodes = nn, .bindings = bind,
                              .n_bindings = nb, .precision = p};
    if (ib_backend_tensor_set(buf, 0, img, total, &err) ||
        ib_backend_graph_compile(be, &sg, &gr, &err)) {
        snprintf(why, nwhy, "compile on %s/%s: %.700s", backend, ib_precision_name(p), err.msg);
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        if (ib_backend_graph_run(gr, &err) || ib_backend_synchronize(be, &err) ||
            ib_backend_tensor_get(buf, 0, back, total, &err)) {
            snprintf(why, nwhy, "run on %s/%s: %.700s", backend, ib_precision_name(p), err.msg);
            goto done;
        }
        size_t lo = 0;
        for (uint32_t i = 0; i <= nb; i++) {
            if (i < nb && bind[i].constant)
                continue;
            size_t hi = i < nb ? bind[i].offset : total;
            for (size_t k = lo; k < hi; k++)
                if (back[k] != 0xA5) {
                    snprintf(why, nwhy, "%s/%s wrote guard byte %zu", backend,
                             ib_precision_name(p), k);
                    goto done;
                }
            if (i < nb)
                lo = bind[i].offset + bind[i].nbytes;
        }
        for (uint32_t i = 0; i < n_out; i++) {
            const ib_backend_binding *bd = NULL;
            for (uint32_t k = 0; k < nb; k++)
                if (bind[k].value == outs[i])
                    bd = &bind[k];
            ASSERT_NOT_NULL(bd);
            if (pass == 0) {
                out->data[outs[i]] = malloc(bd->nbytes ? bd->nbytes : 1);
                memcpy(out->data[outs[i]], back + bd->offset, bd->nbytes);
            } else if (memcmp(out->data[outs[i]], back + bd->offset, bd->nbytes) != 0) {
                snprintf(why, nwhy, "%s/%s: output differs between two runs", backend,
                         ib_precision_name(p));
                goto done;
            }
        }
    }
    rc = 1;
done:
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    if (!reuse)
        ib_backend_destroy(be);
    free(img);
    free(back);
    return rc;
}

static double nmse(const float *a, const float *r, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)r[i];
        num += d * d;
        den += (double)r[i] * (double)r[i];
    }
    if (num != num)
        return (double)INFINITY;
    return den > 1e-30 ? num / den : num;
}

static void run_case(cx *c, const char *label, unsigned flags, ib_value_id out)
{
    if (c->list_only) {
        fresh(c);
        return;
    }
    ib_graph *g = c->g;
    c->cases++;
    ASSERT_OK(IB_VEC_PUSH(&g->outputs, out));
    for (size_t v = 0; v < g->values.len; v++)
        if (c->fill[v])
            ASSERT_OK(IB_VEC_PUSH(&g->inputs, (ib_value_id)v));
    ib_err err;
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    void *inputs[CX_MAXV] = {NULL};
    for (size_t v = 0; v < g->values.len; v++)
        if (c->fill[v]) {
            size_t n = ib_tensor_desc_nbytes(&g->values.data[v].desc);
            inputs[v] = malloc(n ? n : 1);
            fill(c, inputs[v], &g->values.data[v].desc, c->lo[v], c->hi[v]);
        }
    char why[1024];
    res ref;
    memset(&ref, 0, sizeof ref);
    if (exec_on(c, "reference", IB_PRECISION_FP32, inputs, &out, 1, &ref, why, sizeof why) != 1)
        ib_test_fail(__FILE__, __LINE__, "[%s] %s: reference: %s", c->fam, label, why);
    const enum ib_precision precs[3] = {IB_PRECISION_FP32, IB_PRECISION_FP16, IB_PRECISION_BF16};
    const ib_tensor_desc *d = &g->values.data[out].desc;
    int64_t n = ib_tensor_desc_numel(d);
    for (int pi = 0; pi < 3; pi++) {
        enum ib_precision p = precs[pi];
        res got;
        memset(&got, 0, sizeof got);
        int rc = exec_on(c, c->dut, p, inputs, &out, 1, &got, why, sizeof why);
        if (rc == 0) {
            printf("# %s [%s]: skipped: %s\n", label, ib_precision_name(p), why);
        } else if (rc < 0) {
            printf("# FAIL %s [%s]: %s\n", label, ib_precision_name(p), why);
            c->failed++;
        } else {
            double tol = p == IB_PRECISION_FP32 || !(flags & F_LOWP) ? 1e-7
                         : p == IB_PRECISION_FP16                   ? 1e-3
                                                                    : 2e-2;
            bool bad;
            double e = 0;
            if (d->dtype == IB_DTYPE_FLOAT32 && !((flags & F_EXACT) && p == IB_PRECISION_FP32)) {
                e = nmse(got.data[out], ref.data[out], n);
                bad = !(e <= tol);
            } else {
                bad = memcmp(got.data[out], ref.data[out], ib_tensor_desc_nbytes(d)) != 0;
            }
            printf("# %s%s [%s]: nmse %.3g (tol %.3g)%s\n", bad ? "FAIL " : "", label,
                   ib_precision_name(p), e, tol,
                   (flags & F_LOWP) && p != IB_PRECISION_FP32 && e < 1e-11 && n > 16
                       ? " (note: no low-precision rounding observed)"
                       : "");
            c->failed += bad;
        }
        res_free(&got);
    }
    res_free(&ref);
    for (size_t v = 0; v < g->values.len; v++)
        free(inputs[v]);
    fresh(c);
}

/* ---- cases ----------------------------------------------------------------------- */

static void cases_ew(cx *c)
{
    static const char *const un[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Abs",
                                     "Neg", "Erf", "Floor", "Ceil", "Elu", "Softplus",
                                     "HardSigmoid", "HardSwish", "Identity", "Dropout"};
    const int64_t s3[] = {2, 3, 17}, s1[] = {17}, s31[] = {3, 1}, s213[] = {2, 1, 17};
    for (size_t i = 0; i < IB_ARRAY_LEN(un); i++) {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, s3, -3, 3);
        run_case(c, un[i], F_EXACT * (i >= 14), node(c, un[i], "", &x, 1, NULL, 0));
    }
    static const char *const pos[] = {"Log", "Sqrt", "Reciprocal"};
    for (size_t i = 0; i < IB_ARRAY_LEN(pos); i++) {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, s3, 0.1, 4);
        run_case(c, pos[i], 0, node(c, pos[i], "", &x, 1, NULL, 0));
    }
    {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, s3, -3, 3);
        ib_value_id in[3] = {x, cst_f(c, -0.5f), cst_f(c, 1.25f)};
        run_case(c, "Clip", 0, node(c, "Clip", "", in, 3, NULL, 0));
    }
    {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, s3, 0.1, 3);
        ib_value_id in[2] = {x, cst_f(c, 2.5f)};
        run_case(c, "Pow scalar", 0, node(c, "Pow", "", in, 2, NULL, 0));
    }
    for (int t = 0; t < 2; t++) {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, s3, -4, 4);
        ib_attr a = as("approximate", t ? "tanh" : "none");
        run_case(c, t ? "Gelu tanh" : "Gelu", 0, node(c, "Gelu", "inferbench", &x, 1, &a, 1));
    }
    static const char *const bin[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    for (size_t i = 0; i < IB_ARRAY_LEN(bin); i++) {
        for (int form = 0; form < 3; form++) {
            ib_value_id a = in_(c, IB_DTYPE_FLOAT32, 3, s3, -2, 2);
            ib_value_id b = form == 0   ? in_(c, IB_DTYPE_FLOAT32, 3, s3, 0.5, 2)
                            : form == 1 ? cst(c, 1, s1, 0.5, 2)
                                        : in_(c, IB_DTYPE_FLOAT32, 2, s31, 0.5, 2);
            if (form == 2) /* [2,1,17] op [3,1] -> [2,3,17] */
                a = in_(c, IB_DTYPE_FLOAT32, 3, s213, -2, 2);
            ib_value_id in[2] = {a, b};
            char l[48];
            snprintf(l, sizeof l, "%s %s", bin[i], form == 0 ? "same" : form == 1 ? "[17]" : "bcast");
            run_case(c, l, 0, node(c, bin[i], "", in, 2, NULL, 0));
        }
    }
    const int64_t sm[] = {4, 5, 300};
    for (int lg = 0; lg < 2; lg++) {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, sm, -5, 5);
        const char *op = lg ? "LogSoftmax" : "Softmax";
        run_case(c, op, 0, node(c, op, "", &x, 1, NULL, 0));
    }
    const int64_t ln[] = {3, 7, 96}, g1[] = {96};
    for (int k = 0; k < 2; k++) {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, ln, -2, 3);
        ib_value_id in[3] = {x, cst(c, 1, g1, 0.5, 1.5), cst(c, 1, g1, -1, 1)};
        ib_attr a = af("epsilon", 1e-5f);
        run_case(c, k ? "LayerNorm" : "LayerNormalization", 0,
                 node(c, k ? "LayerNorm" : "LayerNormalization", k ? "inferbench" : "", in, 3,
                      &a, 1));
    }
}

static void cases_shape(cx *c)
{
    const int64_t s[] = {2, 3, 4, 5}, two[] = {2}, one[] = {1}, four[] = {4};
    {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, s, -1, 1);
        const int64_t shp[] = {6, 20};
        ib_value_id in[2] = {x, cst_i64(c, 1, two, shp)};
        run_case(c, "Reshape", F_EXACT, node(c, "Reshape", "", in, 2, NULL, 0));
    }
    {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, s, -1, 1);
        ib_attr a = ai("axis", 2);
        run_case(c, "Flatten", F_EXACT, node(c, "Flatten", "", &x, 1, &a, 1));
    }
    {
        const int64_t s1[] = {2, 1, 5};
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, s1, -1, 1);
        const int64_t ax[] = {1};
        ib_value_id in[2] = {x, cst_i64(c, 1, one, ax)};
        run_case(c, "Squeeze", F_EXACT, node(c, "Squeeze", "", in, 2, NULL, 0));
        x = in_(c, IB_DTYPE_FLOAT32, 3, s1, -1, 1);
        ib_value_id in2[2] = {x, cst_i64(c, 1, one, ax)};
        run_case(c, "Unsqueeze", F_EXACT, node(c, "Unsqueeze", "", in2, 2, NULL, 0));
    }
    {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, s, -1, 1);
        const int64_t perm[] = {0, 2, 3, 1};
        ib_attr a = aints("perm", 4, perm);
        run_case(c, "Transpose f32", F_EXACT, node(c, "Transpose", "", &x, 1, &a, 1));
        x = in_(c, IB_DTYPE_INT64, 4, s, -100, 100);
        const int64_t perm2[] = {3, 1, 0, 2};
        ib_attr a2 = aints("perm", 4, perm2);
        run_case(c, "Transpose i64", F_EXACT, node(c, "Transpose", "", &x, 1, &a2, 1));
    }
    {
        const int64_t s1[] = {3, 1};
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 2, s1, -1, 1);
        const int64_t shp[] = {2, 3, 6};
        const int64_t three[] = {3};
        ib_value_id in[2] = {x, cst_i64(c, 1, three, shp)};
        run_case(c, "Expand", F_EXACT, node(c, "Expand", "", in, 2, NULL, 0));
    }
    {
        const int64_t a1[] = {2, 3, 4}, a2[] = {2, 5, 4}, a3[] = {2, 1, 4};
        ib_value_id in[3] = {in_(c, IB_DTYPE_FLOAT32, 3, a1, -1, 1),
                             in_(c, IB_DTYPE_FLOAT32, 3, a2, -1, 1),
                             in_(c, IB_DTYPE_FLOAT32, 3, a3, -1, 1)};
        ib_attr a = ai("axis", 1);
        run_case(c, "Concat", F_EXACT, node(c, "Concat", "", in, 3, &a, 1));
    }
    {
        const int64_t tab[] = {50, 16}, idx[] = {3, 0, 49, 7}, ishape[] = {4};
        ib_value_id in[2] = {cst(c, 2, tab, -1, 1), cst_i64(c, 1, ishape, idx)};
        IB_UNUSED(four);
        /* embedding lookup: the table is a constant, the ids a runtime input */
        in[1] = in_(c, IB_DTYPE_INT64, 1, ishape, 0, 49);
        run_case(c, "Gather rows", F_EXACT, node(c, "Gather", "", in, 2, NULL, 0));
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, s, -1, 1);
        ib_value_id in2[2] = {x, cst_i64(c, 1, two, (const int64_t[]){-1, 2})};
        ib_attr a = ai("axis", 2);
        run_case(c, "Gather axis 2", F_EXACT, node(c, "Gather", "", in2, 2, &a, 1));
    }
    static const char *const red[] = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare",
                                      "ReduceL1", "ReduceL2"};
    for (size_t i = 0; i < IB_ARRAY_LEN(red); i++) {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, s, -1, 1);
        const int64_t ax[] = {-1};
        ib_attr a[2] = {aints("axes", 1, ax), ai("keepdims", 1)};
        c->g->opset = 13;
        run_case(c, red[i], 0, node(c, red[i], "", &x, 1, a, 2));
    }
    {
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, s, -1, 1);
        const int64_t ax[] = {1, 2};
        ib_value_id in[2] = {x, cst_i64(c, 1, two, ax)};
        ib_attr a = ai("keepdims", 0);
        run_case(c, "ReduceSum axes 1,2", 0, node(c, "ReduceSum", "", in, 2, &a, 1));
    }
    {
        const int64_t m[] = {2, 24};
        ib_value_id x = in_(c, IB_DTYPE_INT64, 2, m, -3, 3);
        ib_attr a = ai("to", IB_DTYPE_FLOAT32);
        run_case(c, "Cast i64->f32", F_EXACT, node(c, "Cast", "", &x, 1, &a, 1));
        x = in_(c, IB_DTYPE_FLOAT32, 2, m, -300, 300);
        ib_attr a2 = ai("to", IB_DTYPE_INT32);
        run_case(c, "Cast f32->i32", F_EXACT, node(c, "Cast", "", &x, 1, &a2, 1));
    }
    {
        /* BERT's span head: [B, S, 2] split into start/end logits */
        const int64_t m[] = {2, 24, 2}, sp[] = {1, 1};
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 3, m, -3, 3);
        ib_value_id in[2] = {x, cst_i64(c, 1, two, sp)};
        ib_attr a = ai("axis", -1);
        ib_value_id outs[2];
        for (int i = 0; i < 2; i++) {
            char name[16];
            snprintf(name, sizeof name, "s%d", i);
            outs[i] = ib_graph_add_value(c->g, name, NULL);
        }
        ib_node_id id = ib_graph_add_node(c->g, "Split", "", "split", in, 2, outs, 2, &a, 1);
        ASSERT_TRUE(id >= 0);
        const ib_tensor_desc *dd[2] = {&c->g->values.data[x].desc, &c->g->values.data[in[1]].desc};
        const ib_tensor *cin[2] = {NULL, c->g->values.data[in[1]].constant};
        ib_tensor_desc od[2];
        bool dyn = false;
        ib_err err;
        ASSERT_OK_ERR(ib_op_infer(c->g, &c->g->nodes.data[id], dd, cin, 2, od, 2, &dyn, &err),
                      &err);
        for (int i = 0; i < 2; i++) {
            c->g->values.data[outs[i]].desc = od[i];
            c->g->values.data[outs[i]].shape_known = true;
        }
        if (c->list_only)
            snprintf(c->ops[c->n_ops++], sizeof c->ops[0], "Split");
        /* the second output is the one compared; the first is bound too */
        ASSERT_OK(IB_VEC_PUSH(&c->g->outputs, outs[0]));
        run_case(c, "Split", F_EXACT, outs[1]);
    }
    for (int k = 0; k < 3; k++) {
        const int64_t sa[] = {3, 1001};
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 2, sa, -3, 3);
        ib_attr a[2] = {ai("axis", k == 2 ? 0 : 1), ai("keepdims", 0)};
        const char *op = k == 1 ? "ArgMin" : "ArgMax";
        run_case(c, k == 2 ? "ArgMax axis 0" : op, F_EXACT, node(c, op, "", &x, 1, a, 2));
    }
    for (int k = 0; k < 2; k++) {
        const int64_t im[] = {2, 8, 7, 7};
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, im, -1, 1);
        const char *op = k ? "GlobalMaxPool" : "GlobalAveragePool";
        run_case(c, op, 0, node(c, op, "", &x, 1, NULL, 0));
    }
}

static void cases_matmul(cx *c)
{
    {
        const int64_t a[] = {5, 7}, b[] = {7, 9};
        ib_value_id in[2] = {in_(c, IB_DTYPE_FLOAT32, 2, a, -1, 1), cst(c, 2, b, -1, 1)};
        run_case(c, "MatMul 2d", F_LOWP, node(c, "MatMul", "", in, 2, NULL, 0));
    }
    {
        const int64_t a[] = {2, 3, 33, 40}, b[] = {2, 3, 40, 24};
        ib_value_id in[2] = {in_(c, IB_DTYPE_FLOAT32, 4, a, -1, 1),
                             in_(c, IB_DTYPE_FLOAT32, 4, b, -1, 1)};
        run_case(c, "MatMul batched", F_LOWP, node(c, "MatMul", "", in, 2, NULL, 0));
    }
    {
        const int64_t a[] = {3, 17, 64}, b[] = {64, 48};
        ib_value_id in[2] = {in_(c, IB_DTYPE_FLOAT32, 3, a, -1, 1), cst(c, 2, b, -1, 1)};
        run_case(c, "MatMul folded batch", F_LOWP, node(c, "MatMul", "", in, 2, NULL, 0));
    }
    {
        const int64_t a[] = {16, 32}, b[] = {3, 32, 8};
        ib_value_id in[2] = {in_(c, IB_DTYPE_FLOAT32, 2, a, -1, 1),
                             in_(c, IB_DTYPE_FLOAT32, 3, b, -1, 1)};
        run_case(c, "MatMul broadcast A", F_LOWP, node(c, "MatMul", "", in, 2, NULL, 0));
    }
    for (int k = 0; k < 3; k++) {
        const int64_t a[] = {12, 40}, b[] = {24, 40}, cv[] = {24}, cm[] = {12, 24};
        ib_value_id in[3] = {in_(c, IB_DTYPE_FLOAT32, 2, a, -1, 1), cst(c, 2, b, -1, 1),
                             k == 1 ? cst(c, 2, cm, -1, 1) : cst(c, 1, cv, -1, 1)};
        ib_attr at[3] = {ai("transB", 1), af("alpha", k ? 0.75f : 1.0f),
                         af("beta", k == 1 ? 0.5f : 1.0f)};
        run_case(c, k == 0 ? "Gemm bias" : k == 1 ? "Gemm C[M,N] beta" : "Gemm alpha",
                 F_LOWP, node(c, "Gemm", "", in, 3, at, 3));
    }
    {
        const int64_t a[] = {24, 12}, b[] = {12, 20};
        ib_value_id in[2] = {in_(c, IB_DTYPE_FLOAT32, 2, a, -1, 1), cst(c, 2, b, -1, 1)};
        ib_attr at = ai("transA", 1);
        const int64_t a2[] = {12, 24};
        in[0] = in_(c, IB_DTYPE_FLOAT32, 2, a2, -1, 1);
        run_case(c, "Gemm transA", F_LOWP, node(c, "Gemm", "", in, 2, &at, 1));
    }
    static const char *const acts[] = {"", "Relu", "Gelu"};
    for (size_t k = 0; k < IB_ARRAY_LEN(acts); k++) {
        const int64_t a[] = {2, 9, 64}, b[] = {64, 40}, bs[] = {40};
        ib_value_id in[3] = {in_(c, IB_DTYPE_FLOAT32, 3, a, -1, 1), cst(c, 2, b, -0.3, 0.3),
                             cst(c, 1, bs, -1, 1)};
        ib_attr at = as("activation", acts[k]);
        char l[48];
        snprintf(l, sizeof l, "FusedMatMul %s", acts[k][0] ? acts[k] : "bias");
        run_case(c, l, F_LOWP, node(c, "FusedMatMul", "inferbench", in, 3, &at, 1));
    }
    {
        const int64_t q[] = {2, 4, 16, 32}, kt[] = {2, 4, 32, 16}, v[] = {2, 4, 16, 32},
                      m[] = {2, 1, 1, 16};
        ib_value_id in[4] = {in_(c, IB_DTYPE_FLOAT32, 4, q, -1, 1),
                             in_(c, IB_DTYPE_FLOAT32, 4, kt, -1, 1),
                             in_(c, IB_DTYPE_FLOAT32, 4, v, -1, 1),
                             in_(c, IB_DTYPE_FLOAT32, 4, m, -10000, 0)};
        ib_attr at = af("scale", 0.17677669f);
        run_case(c, "Attention mask", F_LOWP, node(c, "Attention", "inferbench", in, 4, &at, 1));
        ib_value_id in2[3] = {in_(c, IB_DTYPE_FLOAT32, 4, q, -1, 1),
                              in_(c, IB_DTYPE_FLOAT32, 4, kt, -1, 1),
                              in_(c, IB_DTYPE_FLOAT32, 4, v, -1, 1)};
        run_case(c, "Attention", F_LOWP, node(c, "Attention", "inferbench", in2, 3, &at, 1));
    }
}

static void cases_conv(cx *c)
{
    typedef struct {
        const char *label;
        int nsp;
        int64_t n, ci, co, hw, k, stride, pad, dil, group;
    } cc;
    static const cc conv[] = {
        {"Conv 3x3 p1", 2, 2, 8, 16, 9, 3, 1, 1, 1, 1},
        {"Conv 1x1 s2", 2, 1, 16, 8, 8, 1, 2, 0, 1, 1},
        {"Conv 3x3 dil2 groups2", 2, 1, 8, 8, 11, 3, 1, 2, 2, 2},
        {"Conv 7x7 s2 p3", 2, 1, 3, 8, 16, 7, 2, 3, 1, 1},
        {"Conv 1d", 1, 2, 4, 6, 20, 5, 1, 2, 1, 1},
        {"Conv 3d", 3, 1, 2, 4, 6, 3, 1, 1, 1, 1},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(conv); i++) {
        const cc *t = &conv[i];
        int64_t xd[5] = {t->n, t->ci}, wd[5] = {t->co, t->ci / t->group}, bd[1] = {t->co};
        int64_t st[3], pd[6], dl[3];
        for (int s = 0; s < t->nsp; s++) {
            xd[2 + s] = t->hw;
            wd[2 + s] = t->k;
            st[s] = t->stride;
            dl[s] = t->dil;
            pd[s] = pd[t->nsp + s] = t->pad;
        }
        ib_value_id in[3] = {in_(c, IB_DTYPE_FLOAT32, 2 + t->nsp, xd, -1, 1),
                             cst(c, 2 + t->nsp, wd, -0.5, 0.5), cst(c, 1, bd, -1, 1)};
        ib_attr at[4] = {aints("strides", (size_t)t->nsp, st), aints("pads", 2u * (size_t)t->nsp, pd),
                         aints("dilations", (size_t)t->nsp, dl), ai("group", t->group)};
        run_case(c, t->label, F_LOWP, node(c, "Conv", "", in, 3, at, 4));
    }
    static const char *const acts[] = {"Relu", "LeakyRelu", "Clip", ""};
    for (size_t k = 0; k < IB_ARRAY_LEN(acts); k++) {
        const int64_t xd[] = {2, 8, 10, 10}, wd[] = {8, 8, 3, 3}, bd[] = {8}, pd[] = {1, 1, 1, 1};
        ib_value_id in[4] = {in_(c, IB_DTYPE_FLOAT32, 4, xd, -1, 1), cst(c, 4, wd, -0.3, 0.3),
                             cst(c, 1, bd, -1, 1), in_(c, IB_DTYPE_FLOAT32, 4, xd, -1, 1)};
        ib_attr at[4] = {aints("pads", 4, pd), as("activation", acts[k]), af("clip_min", -0.2f),
                         af("clip_max", 0.6f)};
        char l[48];
        snprintf(l, sizeof l, "FusedConv +Z %s", acts[k]);
        run_case(c, l, F_LOWP, node(c, "FusedConv", "inferbench", in, 4, at, 4));
    }
    for (int k = 0; k < 3; k++) {
        const int64_t xd[] = {2, 4, 13, 13}, ks[] = {3, 3}, st[] = {2, 2}, pd[] = {1, 1, 1, 1};
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, xd, -1, 1);
        ib_attr at[4] = {aints("kernel_shape", 2, ks), aints("strides", 2, st),
                         aints("pads", 4, pd), ai("count_include_pad", k == 2)};
        const char *op = k ? "AveragePool" : "MaxPool";
        run_case(c, k == 0 ? "MaxPool" : k == 1 ? "AveragePool" : "AveragePool incl pad", 0,
                 node(c, op, "", &x, 1, at, k ? 4 : 3));
    }
    {
        /* TF-style asymmetric SAME pads (ResNet50's MaxPool), and ceil_mode */
        const int64_t xd[] = {2, 4, 12, 12}, ks[] = {3, 3}, st[] = {2, 2}, pd[] = {0, 0, 1, 1};
        ib_value_id x = in_(c, IB_DTYPE_FLOAT32, 4, xd, -1, 1);
        ib_attr at[3] = {aints("kernel_shape", 2, ks), aints("strides", 2, st),
                         aints("pads", 4, pd)};
        run_case(c, "MaxPool pads 0,0,1,1", 0, node(c, "MaxPool", "", &x, 1, at, 3));
        x = in_(c, IB_DTYPE_FLOAT32, 4, xd, -1, 1);
        ib_attr at2[4] = {aints("kernel_shape", 2, ks), aints("strides", 2, st),
                          ai("ceil_mode", 1), ai("count_include_pad", 1)};
        const int64_t xd2[] = {1, 3, 10, 10};
        x = in_(c, IB_DTYPE_FLOAT32, 4, xd2, -1, 1);
        run_case(c, "AveragePool ceil_mode", 0, node(c, "AveragePool", "", &x, 1, at2, 4));
        const int64_t x1[] = {2, 3, 20}, k1[] = {4}, s1[] = {3};
        x = in_(c, IB_DTYPE_FLOAT32, 3, x1, -1, 1);
        ib_attr at3[2] = {aints("kernel_shape", 1, k1), aints("strides", 1, s1)};
        run_case(c, "MaxPool 1d", 0, node(c, "MaxPool", "", &x, 1, at3, 2));
    }
}

/* ---- tests ------------------------------------------------------------------------ */

static void family(const char *fam, void (*build)(cx *), const char *dut)
{
    const char *why = NULL;
    if (!ib_backend_find(dut))
        TEST_SKIP(strcmp(dut, "cuda") == 0 ? "built without CUDA" : "backend not compiled in");
    if (!ib_backend_available(dut, &why))
        TEST_SKIP(why);
    cx c;
    memset(&c, 0, sizeof c);
    c.dut = dut;
    c.rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)strlen(fam);
    c.fam = fam;
    build(&c);
    if (c.g)
        ib_graph_destroy(c.g);
    for (int i = 0; i < 5; i++)
        ib_backend_destroy(c.cached[i]);
    printf("# %s: %d cases, %d failed comparisons\n", fam, c.cases, c.failed);
    ASSERT_INT_GT(c.cases, 0);
    ASSERT_INT_EQ(c.failed, 0);
}

TEST_TIMEOUT(cuda_ops_eltwise, 300)
{
    family("eltwise", cases_ew, "cuda");
}

TEST_TIMEOUT(cuda_ops_shape, 300)
{
    family("shape", cases_shape, "cuda");
}

TEST_TIMEOUT(cuda_ops_matmul, 300)
{
    family("matmul", cases_matmul, "cuda");
}

TEST_TIMEOUT(cuda_ops_conv, 300)
{
    family("conv", cases_conv, "cuda");
}

/* The harness and the cases themselves, checked here without a GPU: the
 * same cases on the cpu backend against the reference (fp16/bf16 lines
 * are skipped where the cpu backend refuses them). */
TEST_TIMEOUT(cuda_ops_harness_on_cpu, 300)
{
    family("eltwise", cases_ew, "cpu");
    family("shape", cases_shape, "cpu");
    family("matmul", cases_matmul, "cpu");
    family("conv", cases_conv, "cpu");
}

/* Every op type the cuda backend registers appears in a case (runs without
 * a GPU: only the case builders run). */
TEST(cuda_ops_coverage)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    cx c;
    memset(&c, 0, sizeof c);
    c.list_only = true;
    c.fam = "coverage";
    void (*const fams[])(cx *) = {cases_ew, cases_shape, cases_matmul, cases_conv};
    for (size_t i = 0; i < IB_ARRAY_LEN(fams); i++)
        fams[i](&c);
    if (c.g)
        ib_graph_destroy(c.g);
    int missing = 0, total = 0;
    for (size_t i = 0; cu_op_at(i); i++, total++) {
        bool seen = false;
        for (int k = 0; k < c.n_ops; k++)
            seen |= strcmp(c.ops[k], cu_op_at(i)->op_type) == 0;
        if (!seen) {
            printf("# op %s has no case\n", cu_op_at(i)->op_type);
            missing++;
        }
    }
    printf("# %d registered ops, %d without a case\n", total, missing);
    ASSERT_INT_GT(total, 40);
    ASSERT_INT_EQ(missing, 0);
#endif
}

#ifdef IB_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#include "models/bert.h"
#include "models/models.h"
#include "onnx/build.h"
#include "runtime/compile.h"

/* Compile a builder's graph with every dynamic dim bound (dim 0 = batch,
 * others = seq) and count the live nodes the cuda backend refuses at fp32;
 * the refused op types are written to `refused`. Only supports_op runs, so
 * this needs no device (the context argument is unused by the op checks). */
static int refused_nodes(ib_build *b, int64_t batch, int64_t seq, char *refused, size_t n)
{
    ib_err err;
    ib_err_clear(&err);
    ib_graph *src = NULL, *g = NULL;
    ASSERT_OK_ERR(ib_build_finish(b, &src, &err), &err);
    ib_tensor_desc shapes[8];
    ASSERT_TRUE(src->inputs.len <= 8);
    for (size_t i = 0; i < src->inputs.len; i++) {
        shapes[i] = src->values.data[src->inputs.data[i]].desc;
        for (int32_t d = 0; d < shapes[i].ndim; d++)
            if (shapes[i].dims[d] < 0)
                shapes[i].dims[d] = d == 0 ? batch : seq;
    }
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.input_shapes = shapes;
    ASSERT_OK_ERR(ib_compile(src, &o, &g, NULL, &err), &err);
    int bad = 0;
    refused[0] = 0;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *nd = &g->nodes.data[i];
        if (nd->dead)
            continue;
        const ib_tensor_desc *in[16];
        ASSERT_TRUE(nd->n_inputs <= 16);
        for (uint32_t k = 0; k < nd->n_inputs; k++)
            in[k] = nd->inputs[k] == IB_VALUE_NONE ? NULL : &g->values.data[nd->inputs[k]].desc;
        if (!ib_backend_cuda_ops.supports_op(NULL, g, nd, in, IB_PRECISION_FP32)) {
            bad++;
            if (!strstr(refused, nd->op_type) && strlen(refused) + strlen(nd->op_type) + 2 < n) {
                strcat(refused, nd->op_type);
                strcat(refused, " ");
            }
        }
    }
    printf("# %zu nodes, %d refused: %s\n", g->nodes.len, bad, refused);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
    return bad;
}
#endif

/* The fused tiny ResNet50 and BERT graphs run on the GPU whole, except the
 * ops named here (they fall back to the reference kernels). */
TEST_TIMEOUT(cuda_partition_models, 60)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    ib_models_opts mo = {1, true};
    ib_build *b = NULL;
    ib_err err;
    ib_err_clear(&err);
    char refused[256];
    ASSERT_OK_ERR(ib_models_resnet50(&mo, &b, &err), &err);
    int r = refused_nodes(b, 2, 0, refused, sizeof refused);
    ib_build_destroy(b);
    ASSERT_INT_EQ(r, 0);
    b = NULL;
    ASSERT_OK_ERR(ib_models_bert(&mo, &b, &err), &err);
    r = refused_nodes(b, 2, 32, refused, sizeof refused);
    ib_build_destroy(b);
    ASSERT_INT_EQ(r, 0);
#endif
}
