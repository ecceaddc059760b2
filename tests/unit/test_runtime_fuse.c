/*
 * test_runtime_fuse.c - each fusion pass fires on its pattern (in the
 * variants exporters produce) and not on near misses (a non-constant
 * parameter, a second reader of an intermediate value, a different
 * constant or axis), and the fused graph computes what the source graph
 * computes (reference interpreter, same random inputs).
 */
#include <math.h>
#include <string.h>

#include "onnx/build.h"
#include "runtime/compile.h"
#include "test.h"
#include "test_runtime_helpers.h"

/* Compile (fusion on) at the input shapes declared by the graph, compare
 * with the source on the reference interpreter; returns the compiled graph. */
static ib_graph *fuse(const ib_graph *src, ib_compile_stats *st)
{
    ib_tensor_desc shapes[8];
    for (size_t i = 0; i < src->inputs.len; i++)
        shapes[i] = src->values.data[src->inputs.data[i]].desc;
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.input_shapes = shapes;
    ib_graph *g;
    ib_err err;
    ASSERT_OK_ERR(ib_compile(src, &o, &g, st, &err), &err);
    ib_tensor *in[8] = {NULL}, *a[8] = {NULL}, *b[8] = {NULL};
    th_random_inputs(src, shapes, 99, in);
    th_ref_run(src, in, a);
    th_ref_run(g, in, b);
    for (size_t i = 0; i < src->outputs.len; i++) {
        ASSERT_TRUE(ib_tensor_desc_equal(&a[i]->desc, &b[i]->desc));
        double e = th_max_rel_err(b[i]->data, a[i]->data, a[i]->nbytes / sizeof(float));
        if (!(e <= 2e-5))
            ib_test_fail(__FILE__, __LINE__, "output %zu differs after fusion: %g", i, e);
        ib_tensor_free(a[i]);
        ib_tensor_free(b[i]);
    }
    for (size_t i = 0; i < src->inputs.len; i++)
        ib_tensor_free(in[i]);
    return g;
}

static ib_value_id sc(ib_build *b, float v)
{
    return ib_build_floats(b, NULL, &v, 1, "");
}

static const ib_node *find_op(const ib_graph *g, const char *op)
{
    for (size_t i = 0; i < g->nodes.len; i++)
        if (!g->nodes.data[i].dead && !strcmp(g->nodes.data[i].op_type, op))
            return &g->nodes.data[i];
    return NULL;
}

/* ---- Conv ---------------------------------------------------------------------------- */

enum conv_variant { CV_BN_RELU, CV_BN_ADD_RELU, CV_MEAN_IS_INPUT, CV_TWO_READERS, CV_CONST_ADD };

static ib_graph *conv_graph(enum conv_variant v)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(21, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2,4,6,6");
    ib_value_id r = ib_build_input(b, "r", IB_DTYPE_FLOAT32, "2,8,6,6");
    ib_value_id y = ib_build_conv2d(b, x, 4, 8, 3, 1, 1, 1, true);
    ib_value_id c = y;
    if (v == CV_MEAN_IS_INPUT) {
        ib_value_id mean = ib_build_input(b, "mean", IB_DTYPE_FLOAT32, "8");
        ib_value_id p[5] = {y, ib_build_weight(b, "s", IB_DTYPE_FLOAT32, "8", ib_fill_const(1.5)),
                            ib_build_weight(b, "bb", IB_DTYPE_FLOAT32, "8", ib_fill_const(0.1)),
                            mean,
                            ib_build_weight(b, "var", IB_DTYPE_FLOAT32, "8", ib_fill_const(2))};
        y = ib_build_op(b, "BatchNormalization", p, 5, NULL);
    } else {
        y = ib_build_batchnorm(b, y, 8, 1e-5);
    }
    if (v == CV_BN_ADD_RELU)
        y = IB_BUILD_OP(b, "Add", "", r, y); /* the residual first: either order fuses */
    if (v == CV_CONST_ADD)
        y = IB_BUILD_OP(b, "Add", "", y,
                        ib_build_weight(b, "cb", IB_DTYPE_FLOAT32, "1,8,1,1", ib_fill_const(0.5)));
    y = IB_BUILD_OP(b, "Relu", "", y);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "2,8,6,6");
    if (v == CV_TWO_READERS)
        ib_build_output(b, c, "conv_out", IB_DTYPE_FLOAT32, "2,8,6,6");
    else
        ib_build_output(b, r, NULL, IB_DTYPE_FLOAT32, "2,8,6,6"); /* keeps r an input */
    return th_finish(b);
}

TEST(runtime_fuse_conv_bn_add_relu)
{
    ib_compile_stats st;
    ib_graph *src = conv_graph(CV_BN_RELU), *g = fuse(src, &st);
    const ib_node *n = find_op(g, "FusedConv");
    ASSERT_NOT_NULL(n);
    ASSERT_STR_EQ(ib_node_attr_string(n, "activation", ""), "Relu");
    ASSERT_INT_EQ(n->n_inputs, 3); /* X, W', B' */
    ASSERT_INT_EQ(st.fused_bn, 1);
    ASSERT_INT_EQ(th_count_op(g, "BatchNormalization") + th_count_op(g, "Relu"), 0);
    ib_graph_destroy(g);
    ib_graph_destroy(src);

    src = conv_graph(CV_BN_ADD_RELU);
    g = fuse(src, &st);
    n = find_op(g, "FusedConv");
    ASSERT_NOT_NULL(n);
    ASSERT_INT_EQ(n->n_inputs, 4); /* Z = the residual */
    ASSERT_STR_EQ(g->values.data[n->inputs[3]].name, "r");
    ASSERT_INT_EQ(th_count_op(g, "Add"), 0);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}

TEST(runtime_fuse_conv_near_misses)
{
    ib_compile_stats st;
    /* a BN whose mean is a runtime input cannot fold; nothing else can fuse then */
    ib_graph *src = conv_graph(CV_MEAN_IS_INPUT), *g = fuse(src, &st);
    ASSERT_INT_EQ(th_count_op(g, "FusedConv"), 0);
    ASSERT_INT_EQ(th_count_op(g, "BatchNormalization"), 1);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
    /* the conv output is also a graph output: it must stay */
    src = conv_graph(CV_TWO_READERS);
    g = fuse(src, &st);
    ASSERT_INT_EQ(th_count_op(g, "FusedConv"), 0);
    ASSERT_INT_EQ(th_count_op(g, "Conv"), 1);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
    /* a broadcast constant Add is not a residual: BN folds, the Add and Relu stay */
    src = conv_graph(CV_CONST_ADD);
    g = fuse(src, &st);
    const ib_node *n = find_op(g, "FusedConv");
    ASSERT_NOT_NULL(n);
    ASSERT_INT_EQ(n->n_inputs, 3);
    ASSERT_STR_EQ(ib_node_attr_string(n, "activation", ""), "");
    ASSERT_INT_EQ(th_count_op(g, "Add"), 1);
    ASSERT_INT_EQ(th_count_op(g, "Relu"), 1);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}

/* ---- MatMul / Gemm ---------------------------------------------------------------------- */

TEST(runtime_fuse_matmul_and_gemm)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "3,5,6");
    ib_value_id w = ib_build_weight(b, "w", IB_DTYPE_FLOAT32, "6,4", ib_fill_xavier());
    ib_value_id bias = ib_build_weight(b, "b", IB_DTYPE_FLOAT32, "4", ib_fill_uniform(-1, 1));
    ib_value_id y = IB_BUILD_OP(
        b, "Relu", "", IB_BUILD_OP(b, "Add", "", bias, IB_BUILD_OP(b, "MatMul", "", x, w)));
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "3,5,4");
    /* Gemm with transB, alpha and beta */
    ib_value_id a = ib_build_input(b, "a", IB_DTYPE_FLOAT32, "5,6");
    ib_value_id wt = ib_build_weight(b, "wt", IB_DTYPE_FLOAT32, "4,6", ib_fill_xavier());
    ib_value_id c = ib_build_weight(b, "c", IB_DTYPE_FLOAT32, "4", ib_fill_uniform(-1, 1));
    ib_value_id z = IB_BUILD_OP(b, "Gemm", "transB=1 alpha=0.5 beta=2.0", a, wt, c);
    ib_build_output(b, z, "z", IB_DTYPE_FLOAT32, "5,4");
    ib_graph *src = th_finish(b);
    ib_compile_stats st;
    ib_graph *g = fuse(src, &st);
    ASSERT_INT_EQ(th_count_op(g, "FusedMatMul"), 2);
    ASSERT_INT_EQ(th_count_op(g, "MatMul") + th_count_op(g, "Gemm") + th_count_op(g, "Add") +
                      th_count_op(g, "Relu"),
                  0);
    int relu = 0, transb = 0;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead || strcmp(n->op_type, "FusedMatMul")) continue;
        relu += !strcmp(ib_node_attr_string(n, "activation", ""), "Relu");
        transb +=
            ib_node_attr_int(n, "transB", 0) == 1 && ib_node_attr_float(n, "alpha", 1.0f) == 0.5f;
    }
    ASSERT_INT_EQ(relu, 1);
    ASSERT_INT_EQ(transb, 1);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}

TEST(runtime_fuse_matmul_near_misses)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 17, &b));
    /* B is a runtime input: not a linear layer */
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "5,6");
    ib_value_id w = ib_build_input(b, "w", IB_DTYPE_FLOAT32, "6,4");
    ib_value_id bias = ib_build_weight(b, "b", IB_DTYPE_FLOAT32, "4", ib_fill_uniform(-1, 1));
    ib_value_id y = IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "MatMul", "", x, w), bias);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "5,4");
    /* a full [M, N] addend is not a bias */
    ib_value_id wc = ib_build_weight(b, "wc", IB_DTYPE_FLOAT32, "6,4", ib_fill_xavier());
    ib_value_id full = ib_build_weight(b, "full", IB_DTYPE_FLOAT32, "5,4", ib_fill_uniform(-1, 1));
    ib_value_id z = IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "MatMul", "", x, wc), full);
    ib_build_output(b, z, "z", IB_DTYPE_FLOAT32, "5,4");
    ib_graph *src = th_finish(b);
    ib_compile_stats st;
    ib_graph *g = fuse(src, &st);
    ASSERT_INT_EQ(th_count_op(g, "FusedMatMul"), 0);
    ASSERT_INT_EQ(th_count_op(g, "MatMul"), 2);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}

/* ---- GELU --------------------------------------------------------------------------- */

enum gelu_variant { G_ERF_A, G_ERF_B, G_ERF_C, G_ERF_MUL, G_TANH, G_DIV2, G_TANH_05, G_ERF_OUT };

static ib_graph *gelu_graph(enum gelu_variant v)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "4,7");
    ib_value_id y, t;
    if (v == G_TANH || v == G_TANH_05) {
        ib_value_id cube = IB_BUILD_OP(b, "Pow", "", x, sc(b, 3.0f));
        ib_value_id in =
            IB_BUILD_OP(b, "Add", "", x,
                        IB_BUILD_OP(b, "Mul", "", cube, sc(b, v == G_TANH ? 0.044715f : 0.05f)));
        t = IB_BUILD_OP(b, "Tanh", "", IB_BUILD_OP(b, "Mul", "", in, sc(b, 0.7978845608f)));
    } else if (v == G_ERF_MUL) {
        t = IB_BUILD_OP(b, "Erf", "", IB_BUILD_OP(b, "Mul", "", x, sc(b, 0.70710678f)));
    } else {
        t = IB_BUILD_OP(b, "Erf", "",
                        IB_BUILD_OP(b, "Div", "", x, sc(b, v == G_DIV2 ? 2.0f : 1.4142135f)));
    }
    ib_value_id a = IB_BUILD_OP(b, "Add", "", sc(b, 1.0f), t);
    switch (v) {
    case G_ERF_B: /* (x * 0.5) * a */
        y = IB_BUILD_OP(b, "Mul", "", IB_BUILD_OP(b, "Mul", "", x, sc(b, 0.5f)), a);
        break;
    case G_ERF_C: /* x * (a * 0.5) */
        y = IB_BUILD_OP(b, "Mul", "", x, IB_BUILD_OP(b, "Mul", "", a, sc(b, 0.5f)));
        break;
    default: /* (x * a) * 0.5 */
        y = IB_BUILD_OP(b, "Mul", "", IB_BUILD_OP(b, "Mul", "", x, a), sc(b, 0.5f));
    }
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "4,7");
    if (v == G_ERF_OUT) ib_build_output(b, t, "erf", IB_DTYPE_FLOAT32, "4,7");
    return th_finish(b);
}

TEST(runtime_fuse_gelu_forms_and_near_misses)
{
    static const struct {
        enum gelu_variant v;
        int fused;
        const char *approx;
    } cases[] = {{G_ERF_A, 1, "none"},   {G_ERF_B, 1, "none"}, {G_ERF_C, 1, "none"},
                 {G_ERF_MUL, 1, "none"}, {G_TANH, 1, "tanh"},  {G_DIV2, 0, NULL},
                 {G_TANH_05, 0, NULL},   {G_ERF_OUT, 0, NULL}};
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        ib_compile_stats st;
        ib_graph *src = gelu_graph(cases[i].v), *g = fuse(src, &st);
        if ((int)st.gelu != cases[i].fused)
            ib_test_fail(__FILE__, __LINE__, "case %zu: %u Gelu, want %d", i, st.gelu,
                         cases[i].fused);
        const ib_node *n = find_op(g, "Gelu");
        if (cases[i].fused) {
            ASSERT_NOT_NULL(n);
            ASSERT_STR_EQ(n->domain, "inferbench");
            ASSERT_STR_EQ(ib_node_attr_string(n, "approximate", ""), cases[i].approx);
            ASSERT_INT_EQ(th_count_op(g, "Mul") + th_count_op(g, "Erf") + th_count_op(g, "Tanh"),
                          0);
        } else {
            ASSERT_NULL(n);
        }
        ib_graph_destroy(g);
        ib_graph_destroy(src);
    }
}

/* ---- LayerNorm ------------------------------------------------------------------------ */

enum ln_variant { LN_FULL, LN_NO_AFFINE, LN_MUL_SQUARE, LN_AXIS1, LN_THIRD_READER };

static ib_graph *ln_graph(enum ln_variant v)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2,3,8");
    const char *axes = v == LN_AXIS1 ? "axes=[1]" : "axes=[-1]";
    ib_value_id mean = IB_BUILD_OP(b, "ReduceMean", axes, x);
    ib_value_id d = IB_BUILD_OP(b, "Sub", "", x, mean);
    ib_value_id sq = v == LN_MUL_SQUARE ? IB_BUILD_OP(b, "Mul", "", d, d)
                                        : IB_BUILD_OP(b, "Pow", "", d, sc(b, 2.0f));
    ib_value_id var = IB_BUILD_OP(b, "ReduceMean", axes, sq);
    ib_value_id sd = IB_BUILD_OP(b, "Sqrt", "", IB_BUILD_OP(b, "Add", "", var, sc(b, 1e-5f)));
    ib_value_id y = IB_BUILD_OP(b, "Div", "", d, sd);
    if (v != LN_NO_AFFINE) {
        y = IB_BUILD_OP(b, "Mul", "", y,
                        ib_build_weight(b, "g", IB_DTYPE_FLOAT32, "8", ib_fill_uniform(0.5, 1.5)));
        y = IB_BUILD_OP(b, "Add", "", y,
                        ib_build_weight(b, "be", IB_DTYPE_FLOAT32, "8", ib_fill_uniform(-1, 1)));
    }
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, v == LN_AXIS1 ? "2,3,8" : "2,3,8");
    if (v == LN_THIRD_READER)
        ib_build_output(b, IB_BUILD_OP(b, "Abs", "", d), "d_abs", IB_DTYPE_FLOAT32, "2,3,8");
    return th_finish(b);
}

TEST(runtime_fuse_layernorm_and_near_misses)
{
    static const struct {
        enum ln_variant v;
        int fused;
        int rest; /* standard nodes left */
    } cases[] = {{LN_FULL, 1, 0},
                 {LN_NO_AFFINE, 1, 0},
                 {LN_MUL_SQUARE, 1, 0},
                 {LN_AXIS1, 0, 9},
                 {LN_THIRD_READER, 0, 10}};
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        ib_compile_stats st;
        ib_graph *src = ln_graph(cases[i].v), *g = fuse(src, &st);
        int live = 0;
        for (size_t k = 0; k < g->nodes.len; k++)
            live += !g->nodes.data[k].dead && !g->nodes.data[k].domain[0];
        if ((int)st.layernorm != cases[i].fused || live != cases[i].rest)
            ib_test_fail(__FILE__, __LINE__, "case %zu: %u LayerNorm and %d nodes, want %d/%d", i,
                         st.layernorm, live, cases[i].fused, cases[i].rest);
        if (cases[i].fused) {
            const ib_node *n = find_op(g, "LayerNorm");
            ASSERT_NOT_NULL(n);
            ASSERT_NEAR(ib_node_attr_float(n, "epsilon", 0), 1e-5, 1e-9);
        }
        ib_graph_destroy(g);
        ib_graph_destroy(src);
    }
}

/* ---- InstanceNorm + activation ---------------------------------------------------------- */

enum in_variant { IN_RELU, IN_LEAKY, IN_SECOND_READER, IN_OUTPUT, IN_SIGMOID };

static ib_graph *in_graph(enum in_variant v)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2,3,4,5");
    ib_value_id n = IB_BUILD_OP(b, "InstanceNormalization", "epsilon=0.001", x,
                                ib_build_weight(b, "s", IB_DTYPE_FLOAT32, "3",
                                                ib_fill_uniform(0.5, 1.5)),
                                ib_build_weight(b, "bi", IB_DTYPE_FLOAT32, "3",
                                                ib_fill_uniform(-1, 1)));
    ib_value_id y = v == IN_LEAKY     ? IB_BUILD_OP(b, "LeakyRelu", "alpha=0.2", n)
                    : v == IN_SIGMOID ? IB_BUILD_OP(b, "Sigmoid", "", n)
                                      : IB_BUILD_OP(b, "Relu", "", n);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "2,3,4,5");
    if (v == IN_SECOND_READER)
        ib_build_output(b, IB_BUILD_OP(b, "Abs", "", n), "n_abs", IB_DTYPE_FLOAT32, "2,3,4,5");
    if (v == IN_OUTPUT)
        ib_build_output(b, n, "n", IB_DTYPE_FLOAT32, "2,3,4,5");
    return th_finish(b);
}

TEST(runtime_fuse_instance_norm_and_near_misses)
{
    static const struct {
        enum in_variant v;
        int fused;
        const char *act;
    } cases[] = {{IN_RELU, 1, "Relu"},
                 {IN_LEAKY, 1, "LeakyRelu"},
                 {IN_SECOND_READER, 0, NULL},
                 {IN_OUTPUT, 0, NULL},
                 {IN_SIGMOID, 0, NULL}};
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        ib_compile_stats st;
        ib_graph *src = in_graph(cases[i].v), *g = fuse(src, &st);
        const ib_node *n = find_op(g, "InstanceNorm");
        if ((int)st.instance_norm != cases[i].fused || (n != NULL) != (cases[i].fused != 0) ||
            (find_op(g, "InstanceNormalization") != NULL) == (cases[i].fused != 0))
            ib_test_fail(__FILE__, __LINE__, "case %zu: %u InstanceNorm, want %d", i,
                         st.instance_norm, cases[i].fused);
        if (n) {
            ASSERT_STR_EQ(ib_node_attr_string(n, "activation", ""), cases[i].act);
            ASSERT_NEAR(ib_node_attr_float(n, "epsilon", 0), 1e-3, 1e-9);
            if (cases[i].v == IN_LEAKY)
                ASSERT_NEAR(ib_node_attr_float(n, "activation_alpha", 0), 0.2, 1e-7);
            ASSERT_TRUE(find_op(g, "Relu") == NULL && find_op(g, "LeakyRelu") == NULL);
        }
        ib_graph_destroy(g);
        ib_graph_destroy(src);
    }
}

/* ---- attention ------------------------------------------------------------------------ */

enum attn_variant { AT_FULL, AT_NO_MASK_MUL, AT_SOFTMAX_AXIS2, AT_SCALE_INPUT };

static ib_graph *attn_graph(enum attn_variant v)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 17, &b));
    ib_value_id q = ib_build_input(b, "q", IB_DTYPE_FLOAT32, "2,2,5,4");
    ib_value_id k = ib_build_input(b, "k", IB_DTYPE_FLOAT32, "2,2,5,4");
    ib_value_id val = ib_build_input(b, "v", IB_DTYPE_FLOAT32, "2,2,5,3");
    ib_value_id mask = ib_build_input(b, "mask", IB_DTYPE_FLOAT32, "2,1,1,5");
    ib_value_id kt = IB_BUILD_OP(b, "Transpose", "perm=[0,1,3,2]", k);
    ib_value_id s = IB_BUILD_OP(b, "MatMul", "", q, kt);
    if (v == AT_NO_MASK_MUL) {
        s = IB_BUILD_OP(b, "Mul", "", s, sc(b, 0.5f));
    } else {
        ib_value_id c =
            v == AT_SCALE_INPUT ? ib_build_input(b, "c", IB_DTYPE_FLOAT32, "") : sc(b, 2.0f);
        s = IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "Div", "", s, c), mask);
    }
    ib_value_id p = IB_BUILD_OP(b, "Softmax", v == AT_SOFTMAX_AXIS2 ? "axis=2" : "axis=-1", s);
    ib_value_id o = IB_BUILD_OP(b, "MatMul", "", p, val);
    ib_build_output(b, o, "o", IB_DTYPE_FLOAT32, "2,2,5,3");
    if (v == AT_NO_MASK_MUL) ib_build_output(b, mask, NULL, IB_DTYPE_FLOAT32, "2,1,1,5");
    return th_finish(b);
}

TEST(runtime_fuse_attention_and_near_misses)
{
    static const struct {
        enum attn_variant v;
        int fused;
        float scale;
        uint32_t inputs;
    } cases[] = {{AT_FULL, 1, 0.5f, 4},
                 {AT_NO_MASK_MUL, 1, 0.5f, 3},
                 {AT_SOFTMAX_AXIS2, 0, 0, 0},
                 {AT_SCALE_INPUT, 0, 0, 0}};
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        ib_compile_stats st;
        ib_graph *src = attn_graph(cases[i].v), *g = fuse(src, &st);
        if ((int)st.attention != cases[i].fused)
            ib_test_fail(__FILE__, __LINE__, "case %zu: %u Attention, want %d", i, st.attention,
                         cases[i].fused);
        const ib_node *n = find_op(g, "Attention");
        if (cases[i].fused) {
            ASSERT_NOT_NULL(n);
            ASSERT_NEAR(ib_node_attr_float(n, "scale", 0), cases[i].scale, 1e-7);
            ASSERT_UINT_EQ(n->n_inputs, cases[i].inputs);
            ASSERT_INT_EQ(th_count_op(g, "Softmax"), 0);
        } else {
            ASSERT_NULL(n);
            ASSERT_INT_EQ(th_count_op(g, "Softmax"), 1);
        }
        ib_graph_destroy(g);
        ib_graph_destroy(src);
    }
}
