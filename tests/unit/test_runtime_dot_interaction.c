/*
 * test_runtime_dot_interaction.c - DLRM's interaction (Reshape, Transpose, MatMul, Flatten,
 * Gather of the kept products) -> inferbench.DotInteraction (compile_fuse_embed.c, the
 * reference kernel in ir/ops/gather.c, the CPU kernel in cpu_kernels_dot.c): the fused
 * sessions (cpu and reference) give the unfused session's values; a 3-D input without the
 * Reshape fuses too, keeping the Reshape when something else reads it; near misses are left
 * alone (the product also an output, indices not constant, a MatMul of two tensors, the
 * transposed product T^T T); the pass runs only for backends declaring the capability;
 * the DLRM builder's graph fuses its interaction.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/dlrm.h"
#include "models/models.h"
#include "onnx/build.h"
#include "runtime/compile.h"
#include "runtime/model.h"
#include "test.h"

enum { N = 13, F = 6, D = 20 };

enum variant {
    V_PLAIN,       /* x [N, F*D] -> Reshape -> ... (the DLRM builder's form) */
    V_3D,          /* t [N, F, D] is the input: no Reshape */
    V_T_SHARED,    /* the Reshape's output is also a graph output: kept, T is the input */
    V_Z_OUTPUT,    /* near miss: the product Z is also a graph output */
    V_IDX_INPUT,   /* near miss: the indices are an input, not a constant */
    V_TWO_TENSORS, /* near miss: MatMul(T, Transpose(U)) */
    V_LEFT_T,      /* near miss: MatMul(Transpose(T), T), the D x D products */
};

static const int64_t k_idx[] = {6, 12, 13, 18, 19, 20, -1, 24, 25, 26, 27, 30, 31};

static ib_model *graph(enum variant v)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(4, 13, &b));
    ib_value_id t;
    if (v == V_3D) {
        t = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N,6,20");
    } else {
        ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N,120");
        int64_t shape[3] = {-1, F, D};
        t = IB_BUILD_OP(b, "Reshape", "", x, ib_build_ints(b, "shape", shape, 3, NULL));
    }
    ib_value_id u = t;
    if (v == V_TWO_TENSORS) {
        ib_value_id x2 = ib_build_input(b, "x2", IB_DTYPE_FLOAT32, "N,6,20");
        u = x2;
    }
    ib_value_id tt = IB_BUILD_OP(b, "Transpose", "perm=[0,2,1]", u);
    ib_value_id z = v == V_LEFT_T ? IB_BUILD_OP(b, "MatMul", "", tt, t)
                                  : IB_BUILD_OP(b, "MatMul", "", t, tt);
    ib_value_id zf = IB_BUILD_OP(b, "Flatten", "axis=1", z);
    ib_value_id idx = v == V_IDX_INPUT ? ib_build_input(b, "idx", IB_DTYPE_INT64, "13")
                                       : ib_build_ints(b, "idx", k_idx, 13, NULL);
    ib_value_id y = IB_BUILD_OP(b, "Gather", "axis=1", zf, idx);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, NULL);
    if (v == V_Z_OUTPUT)
        ib_build_output(b, z, "z", IB_DTYPE_FLOAT32, NULL);
    if (v == V_T_SHARED)
        ib_build_output(b, t, "t", IB_DTYPE_FLOAT32, NULL);
    ib_err err;
    ASSERT_OK_ERR(ib_build_write_file(b, "g.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("g.onnx", NULL, &m, &err), &err);
    return m;
}

static ib_session *session(const ib_model *m, const char *backend, bool fuse)
{
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = backend;
    o.threads = 2;
    o.first_cpu = -1;
    o.max_batch = N;
    o.disable_fusion = !fuse;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &o, &s, &err), &err);
    return s;
}

static float g_x[N * F * D], g_x2[N * F * D];

static void run(ib_session *s, enum variant v, float *y)
{
    for (int i = 0; i < N * F * D; i++) {
        g_x[i] = (float)sin(0.37 * i) * 1.5f;
        g_x2[i] = (float)cos(0.11 * i);
    }
    int64_t idx[13];
    memcpy(idx, k_idx, sizeof idx);
    ib_tensor_view in[2] = {
        {.name = "x",
         .desc = v == V_3D ? (ib_tensor_desc){IB_DTYPE_FLOAT32, 3, {N, F, D}}
                           : (ib_tensor_desc){IB_DTYPE_FLOAT32, 2, {N, F * D}},
         .data = g_x},
        {.name = v == V_IDX_INPUT ? "idx" : "x2",
         .desc = v == V_IDX_INPUT ? (ib_tensor_desc){IB_DTYPE_INT64, 1, {13}}
                                  : (ib_tensor_desc){IB_DTYPE_FLOAT32, 3, {N, F, D}},
         .data = v == V_IDX_INPUT ? (void *)idx : (void *)g_x2}};
    size_t n_in = v == V_IDX_INPUT || v == V_TWO_TENSORS ? 2 : 1;
    ib_tensor_view out = {.name = "y", .data = y, .capacity = N * 13 * sizeof(float)};
    ib_err err;
    ASSERT_OK_ERR(ib_session_run(s, in, n_in, &out, 1, &err), &err);
    ASSERT_UINT_EQ(out.desc.dims[0], N);
    ASSERT_UINT_EQ(out.desc.dims[1], 13);
}

static double max_rel(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)a[i] - (double)b[i]) / fmax(1.0, fabs((double)a[i])));
    return m;
}

static void check_variant(enum variant v, unsigned want_fused)
{
    ib_model *m = graph(v);
    ib_session *un = session(m, "cpu", false), *fc = session(m, "cpu", true),
               *fr = session(m, "reference", true);
    char want[64];
    snprintf(want, sizeof want, "DotInteraction %u,", want_fused);
    ASSERT_STR_CONTAINS(ib_session_describe(fc), want);
    ASSERT_STR_CONTAINS(ib_session_describe(fr), want);
    float a[N * 13], b[N * 13], c[N * 13];
    run(un, v, a);
    memset(b, 0xff, sizeof b);
    run(fc, v, b);
    run(fr, v, c);
    ASSERT_TRUE(max_rel(a, b, N * 13) < 1e-5);
    ASSERT_TRUE(max_rel(a, c, N * 13) < 1e-5);
    if (want_fused) { /* two products by hand: row 2, indices -1 = (5, 5) and 13 = (2, 1) */
        const float *x = g_x + 2 * F * D;
        double s = 0, t = 0;
        for (int d = 0; d < D; d++) {
            s += (double)x[5 * D + d] * (double)x[5 * D + d];
            t += (double)x[2 * D + d] * (double)x[1 * D + d];
        }
        ASSERT_NEAR((double)b[2 * 13 + 6], s, 1e-4 * fmax(1.0, fabs(s)));
        ASSERT_NEAR((double)b[2 * 13 + 2], t, 1e-4 * fmax(1.0, fabs(t)));
    }
    ib_session_destroy(un);
    ib_session_destroy(fc);
    ib_session_destroy(fr);
    ib_model_destroy(m);
}

TEST(runtime_dot_interaction_fuses_and_matches)
{
    check_variant(V_PLAIN, 1);
    check_variant(V_3D, 1);
    check_variant(V_T_SHARED, 1);
}

TEST(runtime_dot_interaction_near_misses)
{
    check_variant(V_Z_OUTPUT, 0);
    check_variant(V_IDX_INPUT, 0);
    check_variant(V_TWO_TENSORS, 0);
    check_variant(V_LEFT_T, 0);
}

/* The pass runs only when asked (backends with IB_BACKEND_CAP_DOT_INTERACTION); with the
 * Reshape taken the fused node reads x itself. */
TEST(runtime_dot_interaction_only_for_capable_backends)
{
    ib_model *m = graph(V_PLAIN);
    ib_dim_bind dims[1] = {{"N", N}};
    for (int on = 0; on < 2; on++) {
        ib_compile_options o;
        ib_compile_options_defaults(&o);
        o.dims = dims;
        o.n_dims = 1;
        o.fuse_dot_interaction = on;
        ib_compile_stats st;
        ib_graph *g = NULL;
        ib_err err;
        ASSERT_OK_ERR(ib_compile(ib_model_graph(m), &o, &g, &st, &err), &err);
        ASSERT_UINT_EQ(st.dot_interaction, (unsigned)on);
        size_t live = 0, reshapes = 0;
        for (size_t i = 0; i < g->nodes.len; i++) {
            const ib_node *n = &g->nodes.data[i];
            if (n->dead)
                continue;
            live++;
            reshapes += !strcmp(n->op_type, "Reshape");
            if (!strcmp(n->op_type, "DotInteraction")) {
                ASSERT_STR_EQ(g->values.data[n->inputs[0]].name, "x");
                ASSERT_INT_EQ(ib_node_attr_int(n, "features", 0), F);
            }
        }
        ASSERT_UINT_EQ(live, on ? 1 : 5);
        ASSERT_UINT_EQ(reshapes, on ? 0 : 1);
        ib_graph_destroy(g);
    }
    ib_model_destroy(m);
}

TEST(runtime_dot_interaction_dlrm_fuses)
{
    ib_build *b = NULL;
    ib_models_opts o = {.seed = 1, .tiny = true};
    ib_err err;
    ASSERT_OK_ERR(ib_models_dlrm(&o, 1000, &b, &err), &err);
    ASSERT_OK_ERR(ib_build_write_file(b, "d.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("d.onnx", NULL, &m, &err), &err);
    ib_session *s = session(m, "cpu", true);
    const char *d = ib_session_describe(s);
    ASSERT_STR_CONTAINS(d, "GatherConcat 1,");
    ASSERT_STR_CONTAINS(d, "DotInteraction 1,");
    ib_session_destroy(s);
    ib_model_destroy(m);
}
