/*
 * test_ops_util.h - helpers for the ops unit tests (header only): tensors
 * from literals, attribute literals, running one node through the registry
 * (shape inference + reference kernel) and a seeded random fill.
 *
 *   ib_tensor *x = T_F32(DIMS(2, 3), 1, 2, 3, 4, 5, 6);
 *   ib_attr at[] = {A_INT("axis", 1)};
 *   ib_tensor *y;
 *   ASSERT_OK_ERR(op_run1("Softmax", 13, at, 1, &x, 1, &y, &err), &err);
 */
#ifndef IB_TEST_OPS_UTIL_H
#define IB_TEST_OPS_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ir/op.h"
#include "test.h"

#define DIMS(...)                                                                                  \
    ((const int64_t[]){__VA_ARGS__}),                                                              \
        ((int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define SCALAR NULL, 0

#define A_INT(n, v)   ((ib_attr){.name = (n), .type = IB_ATTR_INT, .i = (v)})
#define A_FLOAT(n, v) ((ib_attr){.name = (n), .type = IB_ATTR_FLOAT, .f = (v)})
#define A_STR(n, v)   ((ib_attr){.name = (n), .type = IB_ATTR_STRING, .s = (v), .s_len = strlen(v)})
#define A_INTS(n, ...)                                                                             \
    ((ib_attr){.name = (n),                                                                        \
               .type = IB_ATTR_INTS,                                                               \
               .ints = (const int64_t[]){__VA_ARGS__},                                             \
               .count = sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})
#define A_FLOATS(n, ...)                                                                           \
    ((ib_attr){.name = (n),                                                                        \
               .type = IB_ATTR_FLOATS,                                                             \
               .floats = (const float[]){__VA_ARGS__},                                             \
               .count = sizeof((const float[]){__VA_ARGS__}) / sizeof(float)})

/* A tensor of dtype t with the given dims, data copied from `data` (may be
 * NULL: zeros). Aborts the test on failure. */
static inline ib_tensor *t_make(enum ib_dtype t, const int64_t *dims, int nd, const void *data)
{
    ib_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = nd;
    for (int i = 0; i < nd; i++)
        d.dims[i] = dims[i];
    ib_tensor *x;
    if (ib_tensor_alloc(&d, &x) != IB_OK)
        ib_test_fail(__FILE__, __LINE__, "ib_tensor_alloc failed");
    if (data && x->nbytes) memcpy(x->data, data, x->nbytes);
    return x;
}

#define T_F32(dims, ...)  t_make(IB_DTYPE_FLOAT32, dims, (const float[]){__VA_ARGS__})
#define T_I64(dims, ...)  t_make(IB_DTYPE_INT64, dims, (const int64_t[]){__VA_ARGS__})
#define T_I32(dims, ...)  t_make(IB_DTYPE_INT32, dims, (const int32_t[]){__VA_ARGS__})
#define T_U8(dims, ...)   t_make(IB_DTYPE_UINT8, dims, (const uint8_t[]){__VA_ARGS__})
#define T_I8(dims, ...)   t_make(IB_DTYPE_INT8, dims, (const int8_t[]){__VA_ARGS__})
#define T_BOOL(dims, ...) t_make(IB_DTYPE_BOOL, dims, (const uint8_t[]){__VA_ARGS__})

/* Deterministic uniform [-1, 1) values (xorshift). */
static inline void fill_rand(float *p, int64_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

static inline ib_tensor *t_rand(const int64_t *dims, int nd, uint64_t seed)
{
    ib_tensor *t = t_make(IB_DTYPE_FLOAT32, dims, nd, NULL);
    fill_rand(t->data, ib_tensor_desc_numel(&t->desc), seed);
    return t;
}

/*
 * Run one node op(domain, opset) on inputs in[0..n_in) (NULL = absent) and
 * allocate outputs out[0..n_out) (want_out[i] false = leave that output
 * absent). Shape inference runs first with every input known. On failure
 * returns the code with err filled and every out[i] NULL.
 */
static inline int op_run_ex(const char *domain, const char *op, int64_t opset, const ib_attr *attrs,
                            uint32_t n_attrs, ib_tensor *const *in, uint32_t n_in, ib_tensor **out,
                            uint32_t n_out, const bool *want_out, ib_err *err)
{
    ib_graph *g;
    if (ib_graph_create(&g)) return IB_ENOMEM;
    g->opset = opset;
    ib_value_id iv[16], ov[16];
    char name[32];
    for (uint32_t i = 0; i < n_in; i++) {
        snprintf(name, sizeof name, "in%u", i);
        iv[i] = in[i] ? ib_graph_add_value(g, name, &in[i]->desc) : IB_VALUE_NONE;
    }
    for (uint32_t i = 0; i < n_out; i++) {
        snprintf(name, sizeof name, "out%u", i);
        ov[i] = want_out && !want_out[i] ? IB_VALUE_NONE : ib_graph_add_value(g, name, NULL);
        out[i] = NULL;
    }
    ib_node_id nid =
        ib_graph_add_node(g, op, domain, "the_node", iv, n_in, ov, n_out, attrs, n_attrs);
    const ib_node *n = &g->nodes.data[nid];
    ib_tensor_desc od[16];
    bool dd = false;
    int rc = ib_op_infer_tensors(g, n, (const ib_tensor *const *)in, n_in, od, n_out, &dd, err);
    for (uint32_t i = 0; !rc && i < n_out; i++)
        if (ov[i] != IB_VALUE_NONE) rc = ib_tensor_alloc(&od[i], &out[i]);
    if (!rc) rc = ib_op_run_reference(g, n, (const ib_tensor *const *)in, n_in, out, n_out, err);
    if (rc)
        for (uint32_t i = 0; i < n_out; i++) {
            ib_tensor_free(out[i]);
            out[i] = NULL;
        }
    ib_graph_destroy(g);
    return rc;
}

static inline int op_run(const char *op, int64_t opset, const ib_attr *attrs, uint32_t n_attrs,
                         ib_tensor *const *in, uint32_t n_in, ib_tensor **out, uint32_t n_out,
                         ib_err *err)
{
    return op_run_ex("", op, opset, attrs, n_attrs, in, n_in, out, n_out, NULL, err);
}

/* Only shape inference (descs; const_in = the tensors themselves, or NULL
 * for "not constant" when consts is false). */
static inline int op_infer(const char *domain, const char *op, int64_t opset, const ib_attr *attrs,
                           uint32_t n_attrs, ib_tensor_desc *const *in, const ib_tensor *const *cin,
                           uint32_t n_in, ib_tensor_desc *out, uint32_t n_out, bool *dd,
                           ib_err *err)
{
    ib_graph *g;
    if (ib_graph_create(&g)) return IB_ENOMEM;
    g->opset = opset;
    ib_value_id iv[16], ov[16];
    for (uint32_t i = 0; i < n_in; i++)
        iv[i] = in[i] ? ib_graph_add_value(g, "", in[i]) : IB_VALUE_NONE;
    for (uint32_t i = 0; i < n_out; i++)
        ov[i] = ib_graph_add_value(g, "", NULL);
    ib_node_id nid =
        ib_graph_add_node(g, op, domain, "the_node", iv, n_in, ov, n_out, attrs, n_attrs);
    int rc = ib_op_infer(g, &g->nodes.data[nid], (const ib_tensor_desc *const *)in, cin, n_in, out,
                         n_out, dd, err);
    ib_graph_destroy(g);
    return rc;
}

static inline void free_all(ib_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ib_tensor_free(t[i]);
}

#define F32(t) ((const float *)(t)->data)
#define I64(t) ((const int64_t *)(t)->data)

/* Assert a float tensor equals expected values within tol (and its numel). */
#define ASSERT_F32S(t, tol, ...)                                                                   \
    do {                                                                                           \
        const float ib__e[] = {__VA_ARGS__};                                                       \
        size_t ib__n = sizeof ib__e / sizeof ib__e[0];                                             \
        ASSERT_INT_EQ(ib_tensor_desc_numel(&(t)->desc), (int64_t)ib__n);                           \
        for (size_t ib__i = 0; ib__i < ib__n; ib__i++)                                             \
            ASSERT_NEAR(F32(t)[ib__i], ib__e[ib__i], tol);                                         \
    } while (0)
#define ASSERT_I64S(t, ...)                                                                        \
    do {                                                                                           \
        const int64_t ib__e[] = {__VA_ARGS__};                                                     \
        size_t ib__n = sizeof ib__e / sizeof ib__e[0];                                             \
        ASSERT_INT_EQ(ib_tensor_desc_numel(&(t)->desc), (int64_t)ib__n);                           \
        for (size_t ib__i = 0; ib__i < ib__n; ib__i++)                                             \
            ASSERT_INT_EQ(I64(t)[ib__i], ib__e[ib__i]);                                            \
    } while (0)
#define ASSERT_DIMS(t, ...)                                                                        \
    do {                                                                                           \
        const int64_t ib__d[] = {__VA_ARGS__};                                                     \
        int ib__nd = (int)(sizeof ib__d / sizeof ib__d[0]);                                        \
        ASSERT_INT_EQ((t)->desc.ndim, ib__nd);                                                     \
        for (int ib__i = 0; ib__i < ib__nd; ib__i++)                                               \
            ASSERT_INT_EQ((t)->desc.dims[ib__i], ib__d[ib__i]);                                    \
    } while (0)

#endif
