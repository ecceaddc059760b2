/*
 * test_runtime_compile.c - the graph compiler: binding and shape inference,
 * constant folding (Shape chains, Constant nodes, weight transposes),
 * dead-node removal, each fusion on its pattern and not on near misses, and
 * that every compiled graph gives the source graph's outputs on the
 * reference interpreter. Graphs come from the ONNX builder.
 */
#include <math.h>
#include <string.h>

#include "onnx/build.h"
#include "runtime/compile.h"
#include "ir/ref_exec.h"
#include "test.h"
#include "test_runtime_helpers.h"

/* Compile src for `shapes`, run source and compiled on the same random
 * inputs with the reference interpreter, and require matching outputs. */
static ib_graph *compile_and_compare(const ib_graph *src, const ib_tensor_desc *shapes, bool fuse,
                                     ib_compile_stats *st, double tol)
{
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.input_shapes = shapes;
    o.no_fuse = !fuse;
    ib_graph *g;
    ib_err err;
    ASSERT_OK_ERR(ib_compile(src, &o, &g, st, &err), &err);
    ib_tensor *in[8] = {NULL}, *a[8] = {NULL}, *b[8] = {NULL};
    th_random_inputs(src, shapes, 1234, in);
    th_ref_run(src, in, a);
    th_ref_run(g, in, b);
    for (size_t i = 0; i < src->outputs.len; i++) {
        ASSERT_TRUE(ib_tensor_desc_equal(&a[i]->desc, &b[i]->desc));
        size_t n = a[i]->nbytes / sizeof(float);
        double e = th_max_rel_err(b[i]->data, a[i]->data, n);
        if (!(e <= tol))
            ib_test_fail(__FILE__, __LINE__, "output %zu differs: max rel err %g > %g", i, e, tol);
        ib_tensor_free(a[i]);
        ib_tensor_free(b[i]);
    }
    for (size_t i = 0; i < src->inputs.len; i++)
        ib_tensor_free(in[i]);
    return g;
}

static int count(const ib_graph *g, const char *op)
{
    return th_count_op(g, op);
}

TEST(runtime_compile_tiny_resnet_fuses_and_matches)
{
    ib_graph *src = th_finish(th_build_tiny_resnet(7));
    ib_tensor_desc shape =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16, (int64_t)16);
    ib_compile_stats st;
    ib_graph *g = compile_and_compare(src, &shape, true, &st, 1e-4);
    /* 6 convs, all with their BN folded; two residual Adds and five Relus absorbed */
    ASSERT_INT_EQ(count(g, "FusedConv"), 6);
    ASSERT_INT_EQ(st.fused_bn, 6);
    ASSERT_INT_EQ(count(g, "BatchNormalization"), 0);
    ASSERT_INT_EQ(count(g, "Conv"), 0);
    ASSERT_INT_EQ(count(g, "Add"), 0);
    ASSERT_INT_EQ(count(g, "Relu"), 0);
    ASSERT_INT_EQ(count(g, "FusedMatMul"), 1); /* the Gemm with its bias */
    ASSERT_INT_EQ(count(g, "Gemm"), 0);
    ib_value_id out = g->outputs.data[0];
    ASSERT_INT_EQ(g->values.data[out].desc.dims[0], 2);
    ASSERT_INT_EQ(g->values.data[out].desc.dims[1], 10);
    ib_graph_destroy(g);
    /* without fusion: same results, standard ops only */
    g = compile_and_compare(src, &shape, false, &st, 1e-5);
    ASSERT_INT_EQ(count(g, "Conv"), 6);
    ASSERT_INT_EQ(count(g, "FusedConv"), 0);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}

TEST(runtime_compile_tiny_bert_fuses_and_matches)
{
    ib_graph *src = th_finish(th_build_tiny_bert(11));
    ib_tensor_desc shapes[2] = {th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)5),
                                th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)5)};
    ib_compile_stats st;
    ib_graph *g = compile_and_compare(src, shapes, true, &st, 1e-4);
    ASSERT_INT_EQ(count(g, "LayerNorm"), 3);
    ASSERT_INT_EQ(st.layernorm, 3);
    ASSERT_INT_EQ(st.gelu, 1);
    ASSERT_INT_EQ(count(g, "Gelu"), 0); /* absorbed by the ffn.in FusedMatMul */
    ASSERT_INT_EQ(count(g, "Attention"), 1);
    ASSERT_INT_EQ(count(g, "FusedMatMul"), 6); /* q, k, v, attn.out, ffn.in (+gelu), ffn.out */
    int gelu_act = 0;
    for (size_t i = 0; i < g->nodes.len; i++)
        gelu_act += !g->nodes.data[i].dead && !strcmp(g->nodes.data[i].op_type, "FusedMatMul") &&
                    !strcmp(ib_node_attr_string(&g->nodes.data[i], "activation", ""), "Gelu");
    ASSERT_INT_EQ(gelu_act, 1);
    ASSERT_INT_EQ(count(g, "Softmax"), 0);
    ASSERT_INT_EQ(count(g, "Erf"), 0);
    ASSERT_INT_EQ(count(g, "ReduceMean"), 0);
    /* the Shape chains were folded into Reshape constants */
    ASSERT_INT_EQ(count(g, "Shape"), 0);
    ASSERT_INT_EQ(count(g, "Concat"), 0);
    ASSERT_INT_EQ(count(g, "Unsqueeze"), 1); /* the mask's: it reads a runtime input */
    ASSERT_TRUE(st.folded >= 20);
    ib_graph_destroy(g);
    /* another sequence length binds and folds to other constants */
    shapes[0].dims[1] = shapes[1].dims[1] = 9;
    g = compile_and_compare(src, shapes, true, &st, 1e-4);
    ASSERT_INT_EQ(g->values.data[g->outputs.data[0]].desc.dims[1], 9);
    ib_graph_destroy(g);
    g = compile_and_compare(src, shapes, false, &st, 1e-5);
    ASSERT_INT_EQ(count(g, "Attention"), 0);
    ASSERT_INT_EQ(count(g, "Shape"), 0);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}

TEST(runtime_compile_binds_batch_and_named_dims)
{
    ib_graph *src = th_finish(th_build_tiny_bert(3));
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    ib_graph *g;
    ib_err err;
    /* seq is symbolic and unbound: the error names input, dim and dim name */
    o.batch = 4;
    ASSERT_STATUS(ib_compile(src, &o, &g, NULL, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "input_ids");
    ASSERT_STR_CONTAINS(err.msg, "'seq'");
    ib_dim_bind d = {"seq", 7};
    o.dims = &d;
    o.n_dims = 1;
    ASSERT_OK_ERR(ib_compile(src, &o, &g, NULL, &err), &err);
    const ib_tensor_desc *od = &g->values.data[g->outputs.data[0]].desc;
    ASSERT_INT_EQ(od->dims[0], 4);
    ASSERT_INT_EQ(od->dims[1], 7);
    ASSERT_INT_EQ(od->dims[2], 16);
    ib_graph_destroy(g);
    /* explicit shapes must agree with the static dims and dtype */
    ib_tensor_desc bad[2] = {th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)1, (int64_t)5),
                             th_desc(IB_DTYPE_INT64, 2, (int64_t)1, (int64_t)5)};
    o.input_shapes = bad;
    ASSERT_STATUS(ib_compile(src, &o, &g, NULL, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "input_ids");
    ib_graph_destroy(src);
}

TEST(runtime_compile_unknown_op_names_op_node_opset)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2,3");
    ib_value_id y;
    ib_build_node(b, "FrobnicateTensor", NULL, "frob_1", &x, 1, &y, 1, NULL, 0, "");
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "2,3");
    ib_graph *src = th_finish(b);
    ib_graph *g;
    ib_err err;
    ASSERT_STATUS(ib_compile(src, NULL, &g, NULL, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "FrobnicateTensor");
    ASSERT_STR_CONTAINS(err.msg, "frob_1");
    ASSERT_STR_CONTAINS(err.msg, "13");
    ib_graph_destroy(src);
}

TEST(runtime_compile_folds_constants_and_weight_transposes)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(5, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "batch,4");
    /* W stored transposed, as some exporters do: MatMul(x, Transpose(Wt)) */
    ib_value_id wt = ib_build_weight(b, "wt", IB_DTYPE_FLOAT32, "3,4", ib_fill_uniform(-1, 1));
    ib_value_id w = IB_BUILD_OP(b, "Transpose", "perm=[1,0]", wt);
    ib_value_id y = IB_BUILD_OP(b, "MatMul", "", x, w);
    /* a Constant node feeding an Add, through a Mul of two constants */
    ib_value_id c;
    float cv[3] = {1, 2, 3};
    ib_tensor_desc cd = th_desc(IB_DTYPE_FLOAT32, 1, (int64_t)3);
    ib_tensor *ct;
    ASSERT_OK(ib_tensor_alloc(&cd, &ct));
    memcpy(ct->data, cv, sizeof cv);
    ASSERT_OK(ib_build_adopt_tensor(b, ct));
    ib_attr va = {.name = "value", .type = IB_ATTR_TENSOR, .t = ct};
    ib_build_node(b, "Constant", NULL, "const_1", NULL, 0, &c, 1, &va, 1, "");
    c = IB_BUILD_OP(b, "Mul", "", c, ib_build_floats(b, NULL, cv, 3, NULL));
    y = IB_BUILD_OP(b, "Add", "", y, c);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "batch,3");
    ib_graph *src = th_finish(b);
    ib_tensor_desc shape = th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)3, (int64_t)4);
    ib_compile_stats st;
    ib_graph *g = compile_and_compare(src, &shape, false, &st, 1e-6);
    ASSERT_INT_EQ(count(g, "Transpose"), 0);
    ASSERT_INT_EQ(count(g, "Constant"), 0);
    ASSERT_INT_EQ(count(g, "Mul"), 0);
    ASSERT_INT_EQ(count(g, "MatMul"), 1);
    ASSERT_INT_EQ(st.folded, 3);
    ib_graph_destroy(g);
    /* with fusion the folded bias joins the MatMul */
    g = compile_and_compare(src, &shape, true, &st, 1e-5);
    ASSERT_INT_EQ(count(g, "FusedMatMul"), 1);
    ASSERT_INT_EQ(count(g, "Add"), 0);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}

TEST(runtime_compile_folding_uses_the_cache_across_compilations)
{
    ib_graph *src = th_finish(th_build_tiny_resnet(9));
    ib_compile_cache *cache;
    ASSERT_OK(ib_compile_cache_create(&cache));
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.cache = cache;
    o.batch = 1;
    ib_graph *g1, *g2;
    ib_err err;
    ASSERT_OK_ERR(ib_compile(src, &o, &g1, NULL, &err), &err);
    size_t bytes = ib_compile_cache_bytes(cache);
    ASSERT_TRUE(bytes > 0); /* the BN-folded conv weights */
    o.batch = 3;
    ASSERT_OK_ERR(ib_compile(src, &o, &g2, NULL, &err), &err);
    ASSERT_UINT_EQ(ib_compile_cache_bytes(cache), bytes); /* reused, not recomputed */
    /* both graphs point at the same folded weight data */
    const void *w1 = NULL, *w2 = NULL;
    for (size_t i = 0; i < g1->nodes.len && !w1; i++)
        if (!g1->nodes.data[i].dead && !strcmp(g1->nodes.data[i].op_type, "FusedConv"))
            w1 = g1->values.data[g1->nodes.data[i].inputs[1]].constant->data;
    for (size_t i = 0; i < g2->nodes.len && !w2; i++)
        if (!g2->nodes.data[i].dead && !strcmp(g2->nodes.data[i].op_type, "FusedConv"))
            w2 = g2->values.data[g2->nodes.data[i].inputs[1]].constant->data;
    ASSERT_NOT_NULL(w1);
    ASSERT_PTR_EQ(w1, w2);
    ib_graph_destroy(g1);
    ib_graph_destroy(g2);
    ib_compile_cache_destroy(cache);
    ib_graph_destroy(src);
}

TEST(runtime_compile_dce_drops_dead_and_identity)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(5, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2,3");
    ib_value_id a = IB_BUILD_OP(b, "Identity", "", IB_BUILD_OP(b, "Relu", "", x));
    ib_value_id dead = IB_BUILD_OP(b, "Exp", "", a); /* read by nobody */
    IB_UNUSED(dead);
    ib_value_id y = IB_BUILD_OP(b, "Neg", "", a);
    ib_value_id z = IB_BUILD_OP(b, "Identity", "", y); /* a graph output: kept */
    ib_build_output(b, z, "z", IB_DTYPE_FLOAT32, "2,3");
    ib_graph *src = th_finish(b);
    ib_tensor_desc shape = th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)2, (int64_t)3);
    ib_compile_stats st;
    ib_graph *g = compile_and_compare(src, &shape, true, &st, 0);
    ASSERT_INT_EQ(count(g, "Exp"), 0);
    ASSERT_INT_EQ(count(g, "Identity"), 1);
    ASSERT_INT_EQ(count(g, "Relu"), 1);
    ASSERT_INT_EQ(count(g, "Neg"), 1);
    ASSERT_STR_EQ(g->values.data[g->outputs.data[0]].name, "z");
    ASSERT_INT_EQ(st.removed, 2);
    ib_graph_destroy(g);
    ib_graph_destroy(src);
}
