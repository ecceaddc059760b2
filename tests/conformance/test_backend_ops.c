/*
 * test_backend_ops.c - cross-backend op conformance (ggml test-backend-ops
 * style): every op each registered backend supports (cpu_ops_*: fp32, bf16
 * and int8 where this CPU has them; cuda_ops_*: fp32, fp16 and bf16, skipped
 * without a GPU), on random inputs over several shapes, against the
 * reference backend (the plain-C kernels of src/ir/ops). One harness and one
 * set of cases for every backend: a backend that refuses a node at a
 * precision fails on the cpu (it takes every case) and is reported and
 * skipped elsewhere.
 *
 * Each value gets its own slot in one backend buffer with 64 guard bytes
 * (0xA5) on both sides; outputs start as NaN bytes (0xFF) so unwritten
 * elements fail. A case runs twice and both runs must agree (no state, no
 * clobbered inputs). Tolerances (NMSE): fp32 1e-7 (data movement exact),
 * bf16 1e-3, int8 from the quantisation steps of the case's own data; bf16
 * and int8 cases must also differ measurably from fp32, proving the
 * low-precision path ran. Cases live in test_backend_ops_cases.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/cpu_internal.h"
#include "ir/op.h"
#include "test.h"
#include "test_backend_ops.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* The runner leaves with _exit(), which skips LeakSanitizer: check here. */
#define BO_LEAK_CHECK() __lsan_do_leak_check()
#else
#define BO_LEAK_CHECK() ((void)0)
#endif

#define GUARD 64
#define GUARD_BYTE 0xA5
#define FILL_BYTE 0xFF

/* ---- building cases ---------------------------------------------------------- */

static uint64_t rnd(bo *b)
{
    b->rng ^= b->rng >> 12;
    b->rng ^= b->rng << 25;
    b->rng ^= b->rng >> 27;
    return b->rng * 2685821657736338717ull;
}

static double urand(bo *b)
{
    return (double)(rnd(b) >> 11) * (1.0 / 9007199254740992.0);
}

static void fill_data(bo *b, void *data, const ib_tensor_desc *d, double lo, double hi)
{
    int64_t n = ib_tensor_desc_numel(d);
    for (int64_t i = 0; i < n; i++) {
        double u = lo + (hi - lo) * urand(b);
        int64_t k = (int64_t)floor(lo + (hi - lo + 1) * urand(b));
        switch (d->dtype) {
        case IB_DTYPE_FLOAT32: ((float *)data)[i] = (float)u; break;
        case IB_DTYPE_INT64: ((int64_t *)data)[i] = k; break;
        case IB_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)k; break;
        case IB_DTYPE_BOOL: ((uint8_t *)data)[i] = (uint8_t)(rnd(b) >> 63); break;
        case IB_DTYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)k; break;
        case IB_DTYPE_INT8: ((int8_t *)data)[i] = (int8_t)k; break;
        default: memset((char *)data + (size_t)i * ib_dtype_size(d->dtype), 0, ib_dtype_size(d->dtype));
        }
    }
}

static ib_tensor_desc mkdesc(enum ib_dtype dt, int ndim, const int64_t *dims)
{
    ib_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        d.dims[i] = dims[i];
    return d;
}

static void new_graph(bo *b)
{
    if (b->g)
        ib_graph_destroy(b->g);
    ASSERT_OK(ib_graph_create(&b->g));
    memset(b->fill, 0, sizeof b->fill);
    b->check_q8 = false;
    b->n_q8_held = 0;
    b->n_cl = 0;
    b->min_kernel_steps = 0;
    b->kernel_steps_not_bf16 = false;
    b->kernel_steps_not_int8 = false;
    b->max_kernel_steps = -1;
    b->direct_conv = false;
    b->min_repeat_steps = 0;
}

ib_value_id bo_input(bo *b, enum ib_dtype dt, int ndim, const int64_t *dims, double lo, double hi)
{
    if (!b->g)
        new_graph(b);
    char name[32];
    snprintf(name, sizeof name, "x%zu", b->g->values.len);
    ib_tensor_desc d = mkdesc(dt, ndim, dims);
    ib_value_id v = ib_graph_add_value(b->g, name, &d);
    ASSERT_TRUE(v >= 0 && v < BO_MAX_VALUES);
    b->fill[v] = (bo_fill){true, lo, hi};
    return v;
}

static ib_value_id add_const(bo *b, ib_tensor *t)
{
    if (!b->g)
        new_graph(b);
    char name[32];
    snprintf(name, sizeof name, "c%zu", b->g->values.len);
    ib_value_id v = ib_graph_add_value(b->g, name, &t->desc);
    ASSERT_TRUE(v >= 0 && v < BO_MAX_VALUES);
    ASSERT_OK(ib_graph_set_constant(b->g, v, t));
    return v;
}

ib_value_id bo_const(bo *b, enum ib_dtype dt, int ndim, const int64_t *dims, double lo, double hi)
{
    ib_tensor_desc d = mkdesc(dt, ndim, dims);
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    fill_data(b, t->data, &d, lo, hi);
    return add_const(b, t);
}

ib_value_id bo_const_i64(bo *b, int ndim, const int64_t *dims, const int64_t *vals)
{
    ib_tensor_desc d = mkdesc(IB_DTYPE_INT64, ndim, dims);
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    memcpy(t->data, vals, t->nbytes);
    return add_const(b, t);
}

ib_value_id bo_const_f32(bo *b, int ndim, const int64_t *dims, const float *vals)
{
    ib_tensor_desc d = mkdesc(IB_DTYPE_FLOAT32, ndim, dims);
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    memcpy(t->data, vals, t->nbytes);
    return add_const(b, t);
}

ib_attr bo_ai(const char *name, int64_t v)
{
    ib_attr a = {.name = name, .type = IB_ATTR_INT, .i = v};
    return a;
}

ib_attr bo_af(const char *name, float v)
{
    ib_attr a = {.name = name, .type = IB_ATTR_FLOAT, .f = v};
    return a;
}

ib_attr bo_as(const char *name, const char *s)
{
    ib_attr a = {.name = name, .type = IB_ATTR_STRING, .s = s, .s_len = strlen(s)};
    return a;
}

ib_attr bo_aints(const char *name, size_t n, const int64_t *v)
{
    ib_attr a = {.name = name, .type = IB_ATTR_INTS, .ints = v, .count = n};
    return a;
}

ib_value_id bo_node(bo *b, const char *op, const char *domain, const ib_value_id *in,
                    uint32_t n_in, const ib_attr *at, uint32_t n_at, uint32_t n_out,
                    ib_value_id *outs)
{
    if (!b->g)
        new_graph(b);
    ib_graph *g = b->g;
    ib_value_id o[BO_MAX_OUTS];
    ASSERT_TRUE(n_out >= 1 && n_out <= BO_MAX_OUTS && n_in <= 16);
    for (uint32_t i = 0; i < n_out; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%zu", g->values.len);
        o[i] = ib_graph_add_value(g, name, NULL);
        ASSERT_TRUE(o[i] >= 0 && o[i] < BO_MAX_VALUES);
    }
    char nname[48];
    snprintf(nname, sizeof nname, "%s_%zu", op, g->nodes.len);
    ib_node_id id = ib_graph_add_node(g, op, domain, nname, in, n_in, o, n_out, at, n_at);
    ASSERT_TRUE(id >= 0);
    if (b->opset)
        g->nodes.data[id].opset = b->opset;
    const ib_tensor_desc *descs[16];
    const ib_tensor *cin[16];
    for (uint32_t i = 0; i < n_in; i++) {
        descs[i] = in[i] == IB_VALUE_NONE ? NULL : &g->values.data[in[i]].desc;
        cin[i] = in[i] == IB_VALUE_NONE ? NULL : g->values.data[in[i]].constant;
    }
    ib_tensor_desc od[BO_MAX_OUTS];
    memset(od, 0, sizeof od);
    bool dd = false;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_op_infer(g, &g->nodes.data[id], descs, cin, n_in, od, n_out, &dd, &err);
    if (rc)
        ib_test_fail(__FILE__, __LINE__, "[%s] bad case: shape inference of %s: %s", b->family,
                     op, err.msg);
    for (uint32_t i = 0; i < n_out; i++) {
        g->values.data[o[i]].desc = od[i];
        g->values.data[o[i]].shape_known = true;
        if (outs)
            outs[i] = o[i];
    }
    if (b->list_only) {
        bool seen = false;
        for (int i = 0; i < b->n_ops; i++)
            seen |= strcmp(b->ops[i], op) == 0;
        if (!seen && b->n_ops < (int)IB_ARRAY_LEN(b->ops))
            snprintf(b->ops[b->n_ops++], sizeof b->ops[0], "%s", op);
    }
    return o[0];
}

/* ---- running a case on one backend -------------------------------------------- */

typedef struct bo_res {
    void *data[BO_MAX_VALUES]; /* host copy of each value read back (NULL = not read) */
    size_t nbytes[BO_MAX_VALUES];
} bo_res;

static void res_free(bo_res *r)
{
    for (int i = 0; i < BO_MAX_VALUES; i++)
        free(r->data[i]);
    memset(r, 0, sizeof *r);
}

static bool is_graph_io(const ib_graph *g, ib_value_id v)
{
    for (size_t i = 0; i < g->inputs.len; i++)
        if (g->inputs.data[i] == v)
            return true;
    for (size_t i = 0; i < g->outputs.len; i++)
        if (g->outputs.data[i] == v)
            return true;
    return false;
}

static void value_range(const void *data, const ib_tensor_desc *d, float *lo, float *hi)
{
    int64_t n = ib_tensor_desc_numel(d);
    *lo = *hi = 0;
    if (d->dtype != IB_DTYPE_FLOAT32 || n <= 0)
        return;
    const float *x = data;
    *lo = *hi = x[0];
    for (int64_t i = 1; i < n; i++) {
        *lo = fminf(*lo, x[i]);
        *hi = fmaxf(*hi, x[i]);
    }
}

/* The values the compiled CPU exec holds int8 are exactly b->q8_held. */
static int check_q8_held(const bo *b, const cpu_exec *e, char *why, size_t why_n)
{
    uint32_t held = 0;
    for (uint32_t i = 0; i < e->n_vals; i++) {
        const cpu_val *v = &e->vals[i];
        if (!cpu_held_q8(v))
            continue;
        held++;
        bool expected = false;
        for (uint32_t k = 0; k < b->n_q8_held; k++)
            expected |= b->q8_held[k] == v->id;
        if (!expected) {
            snprintf(why, why_n, "value %s is held int8, but not only int8 convolutions read it",
                     b->g->values.data[v->id].name);
            return IB_EBACKEND;
        }
    }
    if (held != b->n_q8_held) {
        snprintf(why, why_n, "%u of the %u values only int8 convolutions read are held int8",
                 (unsigned)held, (unsigned)b->n_q8_held);
        return IB_EBACKEND;
    }
    return IB_OK;
}

static const cpu_val *exec_val(const cpu_exec *e, ib_value_id id)
{
    for (uint32_t i = 0; i < e->n_vals; i++)
        if (e->vals[i].id == id)
            return &e->vals[i];
    return NULL;
}

/* Channels-last propagates along b->cl_from -> b->cl_to; *applied counts the pairs
 * whose source was channels-last (the others say nothing on this ISA). */
static int check_cl(const bo *b, const cpu_exec *e, int *applied, char *why, size_t why_n)
{
    for (uint32_t k = 0; k < b->n_cl; k++) {
        const cpu_val *f = exec_val(e, b->cl_from[k]), *t = exec_val(e, b->cl_to[k]);
        if (!f || !t || !cpu_md_channels_last(&f->md, f->desc.ndim, f->desc.dims))
            continue;
        ++*applied;
        if (!cpu_md_channels_last(&t->md, t->desc.ndim, t->desc.dims)) {
            snprintf(why, why_n, "%s is channels-last but %s is not",
                     b->g->values.data[f->id].name, b->g->values.data[t->id].name);
            return IB_EBACKEND;
        }
    }
    return IB_OK;
}

/* The case's checks of the CPU backend's compiled form (test_backend_ops.h). */
static int check_cpu_exec(const bo *b, enum ib_precision p, const cpu_exec *e, char *why,
                          size_t why_n)
{
    int rc;
    if (b->check_q8 && p == IB_PRECISION_INT8 && (rc = check_q8_held(b, e, why, why_n)))
        return rc;
    if ((b->min_kernel_steps || b->max_kernel_steps >= 0) &&
        !(b->kernel_steps_not_bf16 && p == IB_PRECISION_BF16) &&
        !(b->kernel_steps_not_int8 && p == IB_PRECISION_INT8)) {
        int kernels = 0;
        for (size_t i = 0; i < e->steps.len; i++)
            kernels += e->steps.data[i].prim == NULL;
        if (kernels < b->min_kernel_steps ||
            (b->max_kernel_steps >= 0 && kernels > b->max_kernel_steps)) {
            snprintf(why, why_n, "%d C kernel steps, expected %d to %d", kernels,
                     b->min_kernel_steps, b->max_kernel_steps);
            return IB_EBACKEND;
        }
    }
    if (b->min_repeat_steps) {
        int reps = 0;
        for (size_t i = 0; i < e->steps.len; i++)
            reps += e->steps.data[i].prim && e->steps.data[i].reps > 1;
        if (reps < b->min_repeat_steps) {
            snprintf(why, why_n, "%d repeated primitive steps, expected at least %d", reps,
                     b->min_repeat_steps);
            return IB_EBACKEND;
        }
    }
    if (b->n_cl) {
        int applied = 0;
        if ((rc = check_cl(b, e, &applied, why, why_n)))
            return rc;
        printf("# %s: %d of %u channels-last checks applied\n", ib_precision_name(p), applied,
               (unsigned)b->n_cl);
    }
    return IB_OK;
}

/* The backend under test: its name, the precisions it is tested at, and how
 * its refusals and tolerances are judged. */
typedef struct bo_dut {
    const char *name;
    enum ib_precision precs[5];
    bool refusal_fails; /* every case's node must be taken (the cpu backend) */
    bool reuse;         /* one instance per precision for all cases (device set-up is slow) */
    bool cpu_checks;    /* the compiled cpu_exec's layout/int8/kernel checks */
    bool nhwc_fp16;     /* cuda: the NHWC float16 conv islands (ib_backend_config.nhwc_fp16) */
} bo_dut;

/* -1 ends a list */
static const bo_dut DUT_CPU = {"cpu",
                               {IB_PRECISION_FP32, IB_PRECISION_BF16, IB_PRECISION_INT8,
                                (enum ib_precision)-1, (enum ib_precision)-1},
                               true, false, true, false};
/* cuda's int8 and fp8: the products with constant weights on int8 / e4m3 operands, every other
 * op as at fp16 (cuda_matmul_q8.c); not yet run on a GPU (int8 2026-12-05, fp8 eighth session) */
static const bo_dut DUT_CUDA = {"cuda",
                                {IB_PRECISION_FP32, IB_PRECISION_FP16, IB_PRECISION_BF16,
                                 IB_PRECISION_INT8, IB_PRECISION_FP8},
                                false, true, false, false};
/* the islands exist at fp16 only */
static const bo_dut DUT_CUDA_NHWC = {"cuda",
                                     {IB_PRECISION_FP16, (enum ib_precision)-1,
                                      (enum ib_precision)-1, (enum ib_precision)-1,
                                      (enum ib_precision)-1},
                                     false, true, false, true};

/* Run b->g on `backend`; every value read back when all_boundary, else the
 * graph outputs. ranges (reference results) fill the int8 calibration.
 * Buffers need not be host-visible (device memory): the whole arena image
 * (guards, inputs, NaN-filled outputs) goes in with one tensor_set and comes
 * back with one tensor_get. IB_EUNSUPPORTED: a node refused at p (why says
 * which). */
static int exec_on(bo *b, const char *backend, enum ib_precision p, bool all_boundary,
                   const bo_res *ranges, const void *const *inputs, bo_res *out, char *why,
                   size_t why_n)
{
    ib_graph *g = b->g;
    ib_backend_config cfg;
    ib_backend_config_defaults(&cfg);
    cfg.threads = 2;
    cfg.precision = p;
    cfg.direct_conv = b->direct_conv;
    cfg.nhwc_fp16 = b->dut && b->dut->nhwc_fp16 && strcmp(backend, b->dut->name) == 0;
    bool reuse = b->dut && b->dut->reuse && strcmp(backend, b->dut->name) == 0 && (int)p >= 0 &&
                 (size_t)p < IB_ARRAY_LEN(b->cached);
    ib_backend *be = reuse ? b->cached[p] : NULL;
    ib_err err;
    ib_err_clear(&err);
    int rc;
    if (!be && (rc = ib_backend_create(backend, &cfg, &be, &err))) {
        snprintf(why, why_n, "create %s: %.1500s", backend, err.msg);
        return rc;
    }
    if (reuse)
        b->cached[p] = be;
    ib_backend_binding bind[BO_MAX_VALUES];
    ib_node_id nodes[BO_MAX_VALUES];
    uint32_t nn = 0, nb = 0;
    bool used[BO_MAX_VALUES] = {false};
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        nodes[nn++] = (ib_node_id)i;
        for (uint32_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
            ib_value_id v = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
            if (v != IB_VALUE_NONE)
                used[v] = true;
        }
        const ib_tensor_desc *in[16];
        for (uint32_t k = 0; k < n->n_inputs && k < 16; k++)
            in[k] = n->inputs[k] == IB_VALUE_NONE ? NULL : &g->values.data[n->inputs[k]].desc;
        if (!ib_backend_supports_op(be, g, n, in, p)) {
            snprintf(why, why_n, "%s refuses node %s at %s", backend, n->name,
                     ib_precision_name(p));
            if (!reuse)
                ib_backend_destroy(be);
            return IB_EUNSUPPORTED;
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
        bd->boundary = all_boundary || is_graph_io(g, (ib_value_id)v);
        size_t plain = ib_tensor_desc_nbytes(&val->desc);
        bd->nbytes = bd->boundary ? plain : ib_backend_plan_bytes(be, &val->desc);
        bd->offset = off;
        off = (off + bd->nbytes + GUARD + IB_BACKEND_ALIGN - 1) & ~(size_t)(IB_BACKEND_ALIGN - 1);
        if (ranges && ranges->data[v])
            value_range(ranges->data[v], &val->desc, &bd->range_min, &bd->range_max);
    }
    ib_backend_buffer *buf = NULL;
    ib_backend_graph *gr = NULL;
    size_t total = off + GUARD;
    unsigned char *img = malloc(total), *back = malloc(total);
    ASSERT_NOT_NULL(img);
    ASSERT_NOT_NULL(back);
    memset(img, GUARD_BYTE, total);
    if ((rc = ib_backend_buffer_alloc(be, total, &buf, &err))) {
        snprintf(why, why_n, "buffer: %.1500s", err.msg);
        goto done;
    }
    for (uint32_t i = 0; i < nb; i++) {
        ib_backend_binding *bd = &bind[i];
        if (bd->constant)
            continue;
        memset(img + bd->offset, FILL_BYTE, bd->nbytes);
        if (b->fill[bd->value].set)
            memcpy(img + bd->offset, inputs[bd->value], ib_tensor_desc_nbytes(&bd->desc));
        bd->buffer = buf;
    }
    ib_backend_subgraph sg = {.graph = g, .nodes = nodes, .n_nodes = nn, .bindings = bind,
                              .n_bindings = nb, .precision = p};
    if ((rc = ib_backend_tensor_set(buf, 0, img, total, &err)) ||
        (rc = ib_backend_graph_compile(be, &sg, &gr, &err))) {
        snprintf(why, why_n, "compile on %s/%s: %.1500s", backend, ib_precision_name(p), err.msg);
        goto done;
    }
    if (b->dut && b->dut->cpu_checks && strcmp(backend, b->dut->name) == 0 &&
        (rc = check_cpu_exec(b, p, (const cpu_exec *)ib_backend_graph_exec(gr), why, why_n)))
        goto done;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        if ((rc = ib_backend_graph_run(gr, &err)) || (rc = ib_backend_synchronize(be, &err)) ||
            (rc = ib_backend_tensor_get(buf, 0, back, total, &err))) {
            snprintf(why, why_n, "run on %s/%s: %.1500s", backend, ib_precision_name(p), err.msg);
            break;
        }
        /* guards: every byte outside the reserved slots is untouched */
        size_t lo = 0;
        for (uint32_t i = 0; i <= nb; i++) {
            size_t hi = total;
            if (i < nb && bind[i].constant)
                continue;
            if (i < nb)
                hi = bind[i].offset;
            for (size_t k = lo; k < hi; k++)
                if (back[k] != GUARD_BYTE) {
                    snprintf(why, why_n, "%s/%s wrote guard byte %zu (after slot ending %zu)",
                             backend, ib_precision_name(p), k, lo);
                    rc = IB_EBACKEND;
                    goto done;
                }
            if (i < nb)
                lo = bind[i].offset + bind[i].nbytes;
        }
        for (uint32_t i = 0; i < nb; i++) {
            const ib_backend_binding *bd = &bind[i];
            if (bd->constant || !bd->boundary || b->fill[bd->value].set)
                continue;
            size_t n = ib_tensor_desc_nbytes(&bd->desc);
            if (pass == 0) {
                out->data[bd->value] = malloc(n ? n : 1);
                ASSERT_NOT_NULL(out->data[bd->value]);
                memcpy(out->data[bd->value], back + bd->offset, n);
                out->nbytes[bd->value] = n;
            } else if (memcmp(back + bd->offset, out->data[bd->value], n) != 0) {
                snprintf(why, why_n, "%s/%s: value %s differs between two runs", backend,
                         ib_precision_name(p), g->values.data[bd->value].name);
                rc = IB_EBACKEND;
                goto done;
            }
        }
    }
done:
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    if (!reuse)
        ib_backend_destroy(be);
    free(img);
    free(back);
    return rc;
}

/* ---- comparing ---------------------------------------------------------------- */

static double nmse(const float *a, const float *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)ref[i];
        num += d * d;
        den += (double)ref[i] * (double)ref[i];
    }
    if (num != num)
        return INFINITY;
    return den > 1e-30 ? num / den : num;
}

/* Quantisation noise of x (per-tensor u8/s8 over its range) relative to its power. */
static double qnoise_act(const float *x, int64_t n)
{
    float lo = x[0], hi = x[0];
    double p = 0;
    for (int64_t i = 0; i < n; i++) {
        lo = fminf(lo, x[i]);
        hi = fmaxf(hi, x[i]);
        p += (double)x[i] * (double)x[i];
    }
    double step = lo >= 0 ? (double)hi / 255.0 : fmax(fabs((double)lo), fabs((double)hi)) / 127.0;
    return p > 0 ? step * step / 12.0 / (p / (double)n) : 0;
}

/* The same for weights quantised per channel: `ch` channels of `per` values
 * strided by cs (channel stride) and es (element stride). */
static double qnoise_w(const float *w, int64_t ch, int64_t per, int64_t cs, int64_t es)
{
    double noise = 0, p = 0;
    for (int64_t c = 0; c < ch; c++) {
        float m = 0;
        for (int64_t i = 0; i < per; i++) {
            float v = w[c * cs + i * es];
            m = fmaxf(m, fabsf(v));
            p += (double)v * (double)v;
        }
        double q = (double)m / 127.0;
        noise += (double)per * q * q / 12.0;
    }
    return p > 0 ? noise / p : 0;
}

/* Summed quantisation noise of the int8 nodes of the graph (reference values). */
static double int8_bound(const bo *b, const bo_res *ref)
{
    const ib_graph *g = b->g;
    double q = 0;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        const char *op = n->op_type;
        bool conv = !strcmp(op, "Conv") || !strcmp(op, "FusedConv");
        bool mm = !strcmp(op, "MatMul") || !strcmp(op, "Gemm") || !strcmp(op, "FusedMatMul");
        if ((!conv && !mm) || n->n_inputs < 2)
            continue;
        const ib_value *x = ib_node_input(g, n, 0), *w = ib_node_input(g, n, 1);
        if (!w->constant || !ref->data[n->inputs[0]])
            continue;
        q += qnoise_act(ref->data[n->inputs[0]], ib_tensor_desc_numel(&x->desc));
        const float *wd = w->constant->data;
        int64_t numel = ib_tensor_desc_numel(&w->desc);
        if (conv) {
            int64_t M = w->desc.dims[0];
            q += qnoise_w(wd, M, numel / M, numel / M, 1);
        } else {
            bool tb = ib_node_attr_int(n, "transB", 0) != 0;
            int64_t r = w->desc.dims[w->desc.ndim - 2], c = w->desc.dims[w->desc.ndim - 1];
            int64_t N = tb ? r : c;
            /* batches of B are folded into the per-column statistics */
            q += tb ? qnoise_w(wd, N, numel / N, c, 1) : qnoise_w(wd, N, numel / N, 1, c);
        }
    }
    return q;
}

/* Whether this machine has precision p for the dut: the CPU backend's rule
 * (cpu_backend.c) is bf16 from AVX-512 core, int8 with VNNI; a GPU backend
 * says itself, by refusing nodes. */
static bool precision_here(const bo_dut *dut, enum ib_precision p)
{
    if (!dut->cpu_checks)
        return true;
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    if (p == IB_PRECISION_BF16)
        return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    if (p == IB_PRECISION_INT8)
        return (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
               (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
    return true;
}

/* NMSE tolerance of a case at precision p. fp32: 1e-7. A compute op
 * (BO_BF16) at bf16: 1e-3 on the cpu (its bf16 paths accumulate in fp32
 * over short reductions), 2e-2 elsewhere (8 mantissa bits through tensor
 * cores); at fp16: 1e-3. int8: from the quantisation steps of the case's own
 * data; the other compute ops of an int8 line keep the fp32 bound on the cpu and get the fp16
 * one on cuda (where they run as at fp16). fp8 (cuda only): e4m3 rounds each operand to a
 * relative half step of 2^-4, an rms relative error of about 0.024 a factor, so a product's
 * NMSE is about 2 x 0.024^2 = 1.2e-3 whatever the data's scale: 1e-2 (2e-2 through a chain),
 * a margin of 8 as int8's; set from arithmetic, not yet from a device run. Other ops run in
 * fp32 at every precision and keep the fp32 bound. */
static double tolerance(const bo *b, const bo_res *ref, enum ib_precision p, unsigned flags)
{
    if (p == IB_PRECISION_INT8 && (flags & BO_INT8))
        return ((flags & BO_CHAIN) ? 16.0 : 8.0) * int8_bound(b, ref) + 1e-6;
    if (p == IB_PRECISION_FP8 && (flags & BO_INT8)) /* e4m3 operands: see the comment above */
        return (flags & BO_CHAIN) ? 2e-2 : 1e-2;
    if (p == IB_PRECISION_INT8 || p == IB_PRECISION_FP8)
        /* the cpu runs the others in fp32; cuda as at fp16 */
        return !b->dut->cpu_checks && (flags & BO_BF16) ? 1e-3 : 1e-7;
    if (p == IB_PRECISION_BF16)
        return b->dut->cpu_checks ? 1e-3 : (flags & BO_BF16) ? 2e-2 : 1e-7;
    if (p == IB_PRECISION_FP16)
        return (flags & BO_BF16) ? 1e-3 : 1e-7;
    return 1e-7;
}

/* Compare the outputs of one precision line against the reference. */
static void compare(bo *b, const char *label, unsigned flags, enum ib_precision p,
                    const bo_res *got, const bo_res *ref, const ib_value_id *outs, uint32_t n_out)
{
    const ib_graph *g = b->g;
    double tol = tolerance(b, ref, p, flags);
    bool low = ((p == IB_PRECISION_BF16 || p == IB_PRECISION_FP16) && (flags & BO_BF16)) ||
               ((p == IB_PRECISION_INT8 || p == IB_PRECISION_FP8) && (flags & BO_INT8));
    for (uint32_t i = 0; i < n_out; i++) {
        ib_value_id v = outs[i];
        const ib_tensor_desc *d = &g->values.data[v].desc;
        int64_t n = ib_tensor_desc_numel(d);
        bool bad, silent = false;
        double e = 0;
        if (d->dtype == IB_DTYPE_FLOAT32 && !((flags & BO_EXACT) && p == IB_PRECISION_FP32)) {
            e = nmse(got->data[v], ref->data[v], n);
            if (getenv("IB_BO_DEBUG")) {
                const float *gf = got->data[v], *rf = ref->data[v];
                for (int64_t k = 0; k < n && k < 4; k++)
                    printf("#   [%lld] got %g ref %g\n", (long long)k, (double)gf[k], (double)rf[k]);
            }
            silent = low && n > 16 && e < 1e-11;
            /* on the cpu a low-precision line that changes nothing is a failure (its
             * bf16/int8 paths are known); elsewhere a note until the device says more */
            bad = !(e <= tol) || (silent && b->dut->cpu_checks);
        } else {
            bad = memcmp(got->data[v], ref->data[v], ref->nbytes[v]) != 0;
        }
        printf("# %s%s [%s] out %u %s: nmse %.3g (tol %.3g)%s\n", bad ? "FAIL " : "", label,
               ib_precision_name(p), (unsigned)i, ib_dtype_name(d->dtype), e, tol,
               silent ? " - the low-precision path did not run" : "");
        b->failed += bad;
    }
}

void bo_run(bo *b, const char *label, unsigned flags, const ib_value_id *outs, uint32_t n_out)
{
    if (b->list_only) {
        new_graph(b);
        return;
    }
    ib_graph *g = b->g;
    b->cases++;
    for (uint32_t i = 0; i < n_out; i++)
        ASSERT_OK(IB_VEC_PUSH(&g->outputs, outs[i]));
    for (size_t v = 0; v < g->values.len; v++)
        if (b->fill[v].set)
            ASSERT_OK(IB_VEC_PUSH(&g->inputs, (ib_value_id)v));
    ib_err err;
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    /* input data */
    void *inputs[BO_MAX_VALUES] = {NULL};
    for (size_t v = 0; v < g->values.len; v++) {
        if (!b->fill[v].set)
            continue;
        size_t n = ib_tensor_desc_nbytes(&g->values.data[v].desc);
        inputs[v] = malloc(n ? n : 1);
        ASSERT_NOT_NULL(inputs[v]);
        fill_data(b, inputs[v], &g->values.data[v].desc, b->fill[v].lo, b->fill[v].hi);
    }
    char why[2048];
    bo_res ref;
    memset(&ref, 0, sizeof ref);
    if (exec_on(b, "reference", IB_PRECISION_FP32, true, NULL, (const void *const *)inputs, &ref,
                why, sizeof why))
        ib_test_fail(__FILE__, __LINE__, "[%s] %s: reference: %s", b->family, label, why);
    for (size_t v = 0; v < g->values.len; v++)
        if (inputs[v] && !ref.data[v]) { /* ranges of the inputs too */
            ref.nbytes[v] = ib_tensor_desc_nbytes(&g->values.data[v].desc);
            ref.data[v] = malloc(ref.nbytes[v] ? ref.nbytes[v] : 1);
            ASSERT_NOT_NULL(ref.data[v]);
            memcpy(ref.data[v], inputs[v], ref.nbytes[v]);
        }
    for (size_t pi = 0; pi < IB_ARRAY_LEN(b->dut->precs); pi++) {
        enum ib_precision p = b->dut->precs[pi];
        if ((int)p < 0)
            break;
        if (!precision_here(b->dut, p)) {
            printf("# %s [%s]: skipped: this CPU lacks the ISA\n", label, ib_precision_name(p));
            continue;
        }
        bo_res got;
        memset(&got, 0, sizeof got);
        int rc = exec_on(b, b->dut->name, p, false, &ref, (const void *const *)inputs, &got, why,
                         sizeof why);
        if (rc == IB_EUNSUPPORTED && !b->dut->refusal_fails) {
            printf("# %s [%s]: skipped: %s\n", label, ib_precision_name(p), why);
            b->skipped++;
        } else if (rc) {
            printf("# FAIL %s [%s]: %s\n", label, ib_precision_name(p), why);
            b->failed++;
        } else {
            compare(b, label, flags, p, &got, &ref, outs, n_out);
        }
        res_free(&got);
    }
    res_free(&ref);
    for (size_t v = 0; v < g->values.len; v++)
        free(inputs[v]);
    new_graph(b);
}

/* ---- tests -------------------------------------------------------------------- */

typedef void (*bo_family_fn)(bo *);

static const struct {
    const char *name;
    bo_family_fn build;
} FAMILIES[] = {{"conv", bo_cases_conv},     {"matmul", bo_cases_matmul},
                {"pool_norm", bo_cases_pool_norm}, {"eltwise", bo_cases_eltwise},
                {"binary", bo_cases_binary}, {"shape", bo_cases_shape},
                {"rnn", bo_cases_rnn},       {"chains", bo_cases_chains}};

static bo_family_fn family_fn(const char *family)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(FAMILIES); i++)
        if (strcmp(FAMILIES[i].name, family) == 0)
            return FAMILIES[i].build;
    return NULL;
}

/* Run one family of cases on the dut; returns the counts through *out. */
static void run_family_on(const bo_dut *dut, const char *family, bo *out)
{
    bo b;
    memset(&b, 0, sizeof b);
    b.dut = dut;
    b.rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)strlen(family);
    b.family = family;
    bo_family_fn build = family_fn(family);
    ASSERT_NOT_NULL(build);
    build(&b);
    if (b.g)
        ib_graph_destroy(b.g);
    for (size_t i = 0; i < IB_ARRAY_LEN(b.cached); i++)
        ib_backend_destroy(b.cached[i]);
    printf("# %s on %s: %d cases, %d failed comparisons, %d precision lines refused\n", family,
           dut->name, b.cases, b.failed, b.skipped);
    *out = b;
}

static void run_family(const bo_dut *dut, const char *family)
{
    const char *reason = NULL;
    if (!ib_backend_find(dut->name))
        TEST_SKIP("backend not compiled in (built without CUDA?)");
    if (!ib_backend_available(dut->name, &reason))
        TEST_SKIP(reason);
    bo b;
    run_family_on(dut, family, &b);
    ASSERT_INT_GT(b.cases, 0);
    ASSERT_INT_EQ(b.failed, 0);
    /* a GPU backend that refuses everything passes nothing */
    int n_precs = 0;
    for (size_t i = 0; i < IB_ARRAY_LEN(dut->precs); i++)
        n_precs += (int)dut->precs[i] >= 0;
    ASSERT_INT_LT(b.skipped, b.cases * n_precs);
    BO_LEAK_CHECK();
}

/* One test per family and backend (tools/gen-test-list.sh lists TEST lines, so they are
 * written out); the cuda ones skip without a GPU or without CUDA. */
TEST_TIMEOUT(cpu_ops_conv, 300)
{
    run_family(&DUT_CPU, "conv");
}

TEST_TIMEOUT(cpu_ops_matmul, 300)
{
    run_family(&DUT_CPU, "matmul");
}

TEST_TIMEOUT(cpu_ops_pool_norm, 300)
{
    run_family(&DUT_CPU, "pool_norm");
}

TEST_TIMEOUT(cpu_ops_eltwise, 300)
{
    run_family(&DUT_CPU, "eltwise");
}

TEST_TIMEOUT(cpu_ops_binary, 300)
{
    run_family(&DUT_CPU, "binary");
}

TEST_TIMEOUT(cpu_ops_shape, 300)
{
    run_family(&DUT_CPU, "shape");
}

TEST_TIMEOUT(cpu_ops_rnn, 300)
{
    run_family(&DUT_CPU, "rnn");
}

TEST_TIMEOUT(cpu_ops_chains, 300)
{
    run_family(&DUT_CPU, "chains");
}

TEST_TIMEOUT(cuda_ops_conv, 300)
{
    run_family(&DUT_CUDA, "conv");
}

TEST_TIMEOUT(cuda_ops_matmul, 300)
{
    run_family(&DUT_CUDA, "matmul");
}

TEST_TIMEOUT(cuda_ops_pool_norm, 300)
{
    run_family(&DUT_CUDA, "pool_norm");
}

TEST_TIMEOUT(cuda_ops_eltwise, 300)
{
    run_family(&DUT_CUDA, "eltwise");
}

TEST_TIMEOUT(cuda_ops_binary, 300)
{
    run_family(&DUT_CUDA, "binary");
}

TEST_TIMEOUT(cuda_ops_shape, 300)
{
    run_family(&DUT_CUDA, "shape");
}

TEST_TIMEOUT(cuda_ops_rnn, 300)
{
    run_family(&DUT_CUDA, "rnn");
}

TEST_TIMEOUT(cuda_ops_chains, 300)
{
    run_family(&DUT_CUDA, "chains");
}

/* issue 24: the same cases with the NHWC float16 conv islands (the chains hold island values
 * between convolutions: entries from float32, residuals in either format, exits to float32);
 * written without a GPU on 2026-12-05, not yet run */
TEST_TIMEOUT(cuda_ops_conv_nhwc_fp16, 300)
{
    run_family(&DUT_CUDA_NHWC, "conv");
}

TEST_TIMEOUT(cuda_ops_chains_nhwc_fp16, 300)
{
    run_family(&DUT_CUDA_NHWC, "chains");
}


/* The harness's rules for a GPU-like dut, checked without a GPU: the
 * reference backend stands in for the cuda backend's rules (reused
 * instances, fp16/bf16 lines, refusals skipped), so the cuda tests'
 * harness is not first run on the lent device. The reference kernels
 * compute in fp32 at every precision: lines match at the fp32 bound. */
TEST_TIMEOUT(backend_ops_harness_gpu_rules, 300)
{
    static const bo_dut ref_as_gpu = {"reference",
                                      {IB_PRECISION_FP32, IB_PRECISION_FP16, IB_PRECISION_BF16,
                                       IB_PRECISION_INT8, IB_PRECISION_FP8},
                                      false, true, false, false};
    const char *fams[] = {"eltwise", "shape", "matmul"};
    for (size_t i = 0; i < IB_ARRAY_LEN(fams); i++) {
        bo b;
        run_family_on(&ref_as_gpu, fams[i], &b);
        ASSERT_INT_GT(b.cases, 0);
        ASSERT_INT_EQ(b.failed, 0);
    }
}

/* The op types the case builders use (no backend runs). */
static void listed_ops(bo *b)
{
    memset(b, 0, sizeof *b);
    b->list_only = true;
    b->family = "coverage";
    for (size_t i = 0; i < IB_ARRAY_LEN(FAMILIES); i++)
        FAMILIES[i].build(b);
    if (b->g)
        ib_graph_destroy(b->g);
    b->g = NULL;
}

/* The registered ops of a backend without a case; their count through *total. */
static int missing_ops(const bo *b, const char *(*op_at)(size_t), int *total)
{
    int missing = 0;
    *total = 0;
    for (size_t i = 0; op_at(i); i++, ++*total) {
        const char *op = op_at(i);
        bool seen = false;
        for (int k = 0; k < b->n_ops; k++)
            seen |= strcmp(b->ops[k], op) == 0;
        if (!seen) {
            printf("# op %s has no case\n", op);
            missing++;
        }
    }
    printf("# %d registered ops, %d without a case\n", *total, missing);
    return missing;
}

static const char *cpu_op_name(size_t i)
{
    return cpu_op_at(i) ? cpu_op_at(i)->op_type : NULL;
}

/* Every op type the CPU backend registers appears in at least one case. */
TEST(cpu_ops_coverage)
{
    bo b;
    listed_ops(&b);
    int total;
    ASSERT_INT_EQ(missing_ops(&b, cpu_op_name, &total), 0);
    ASSERT_INT_GT(total, 40);
}

/* Every op type the cuda backend registers appears in a case (runs without
 * a GPU: only the case builders run). */
TEST(cuda_ops_coverage)
{
#ifndef IB_WITH_CUDA
    TEST_SKIP("built without CUDA");
#else
    bo b;
    listed_ops(&b);
    int total;
    ASSERT_INT_EQ(missing_ops(&b, bo_cuda_op_name, &total), 0);
    ASSERT_INT_GT(total, 40);
#endif
}
