/*
 * test_ops_registry.c - the operator registry: every op of issue 3 is
 * covered at every opset 7..17 where ONNX defines it, version ranges do not
 * overlap, definitions are complete, lookups treat "" and "ai.onnx" as one
 * domain, and unsupported ops, opsets, arities and dtypes fail with
 * messages naming op, node and opset.
 */
#include "test_ops_util.h"

TEST(ops_registry_covers_issue3_ops_at_every_opset)
{
    /* the op list of issue 3, with the first opset ONNX defines each at */
    static const struct {
        const char *op;
        int64_t first, last;
    } ops[] = {
        {"Conv", 7, 17},
        {"ConvTranspose", 7, 17},
        {"BatchNormalization", 7, 17},
        {"InstanceNormalization", 7, 17},
        {"LayerNormalization", 17, 17},
        {"Relu", 7, 17},
        {"LeakyRelu", 7, 17},
        {"Sigmoid", 7, 17},
        {"Tanh", 7, 17},
        {"Erf", 9, 17},
        {"Add", 7, 17},
        {"Sub", 7, 17},
        {"Mul", 7, 17},
        {"Div", 7, 17},
        {"Pow", 7, 17},
        {"Sqrt", 7, 17},
        {"Exp", 7, 17},
        {"Log", 7, 17},
        {"MatMul", 7, 17},
        {"Gemm", 7, 17},
        {"MaxPool", 7, 17},
        {"AveragePool", 7, 17},
        {"GlobalAveragePool", 7, 17},
        {"Flatten", 7, 17},
        {"Reshape", 7, 17},
        {"Transpose", 7, 17},
        {"Concat", 7, 17},
        {"Split", 7, 17},
        {"Slice", 7, 17},
        {"Gather", 7, 17},
        {"GatherElements", 11, 17},
        {"Squeeze", 7, 17},
        {"Unsqueeze", 7, 17},
        {"Shape", 7, 17},
        {"Cast", 7, 17},
        {"Constant", 7, 17},
        {"ConstantOfShape", 9, 17},
        {"Expand", 8, 17},
        {"Where", 9, 17},
        {"Equal", 7, 17},
        {"Less", 7, 17},
        {"Greater", 7, 17},
        {"Not", 7, 17},
        {"ReduceMean", 7, 17},
        {"ReduceSum", 7, 17},
        {"ReduceMax", 7, 17},
        {"ArgMax", 7, 17},
        {"TopK", 7, 17},
        {"Softmax", 7, 17},
        {"LogSoftmax", 7, 17},
        {"Pad", 7, 17},
        {"Resize", 10, 17},
        {"Upsample", 7, 9},
        {"Tile", 7, 17},
        {"Identity", 7, 17},
        {"LSTM", 7, 17},
        {"NonMaxSuppression", 10, 17},
        {"Clip", 7, 17},
        {"Min", 8, 17},
        {"Max", 8, 17},
        {"Neg", 7, 17},
        {"Abs", 7, 17},
        {"Dropout", 7, 17},
        {"QuantizeLinear", 10, 17},
        {"DequantizeLinear", 10, 17},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(ops); i++)
        for (int64_t o = ops[i].first; o <= ops[i].last; o++)
            if (!ib_op_find("", ops[i].op, o))
                ib_test_fail(__FILE__, __LINE__, "%s has no definition at opset %lld", ops[i].op,
                             (long long)o);
    static const char *const fused[] = {"FusedConv", "FusedMatMul", "LayerNorm", "Gelu",
                                        "Attention"};
    for (size_t i = 0; i < IB_ARRAY_LEN(fused); i++)
        ASSERT_NOT_NULL(ib_op_find("inferbench", fused[i], 1));
    /* "ai.onnx" is the default domain; an unknown domain finds nothing */
    ASSERT_PTR_EQ(ib_op_find("ai.onnx", "Conv", 13), ib_op_find("", "Conv", 13));
    ASSERT_NULL(ib_op_find("com.example", "Conv", 13));
    ASSERT_NULL(ib_op_find("", "Upsample", 10));
    ASSERT_NULL(ib_op_find("", "NoSuchOp", 13));
}

TEST(ops_registry_definitions_are_complete_and_disjoint)
{
    size_t n = 0;
    for (const ib_op_def *d; (d = ib_op_at(n)); n++) {
        ASSERT_NOT_NULL(d->infer);
        ASSERT_NOT_NULL(d->kernel);
        ASSERT_NOT_NULL(d->op_type);
        ASSERT_TRUE(d->min_inputs <= d->max_inputs);
        ASSERT_TRUE(d->min_outputs <= d->max_outputs);
        ASSERT_TRUE(d->until_opset == 0 || d->until_opset >= d->since_opset);
        for (size_t k = 0; k < n; k++) {
            const ib_op_def *e = ib_op_at(k);
            if (strcmp(d->op_type, e->op_type) || strcmp(d->domain, e->domain)) continue;
            int64_t dhi = d->until_opset ? d->until_opset : INT64_MAX;
            int64_t ehi = e->until_opset ? e->until_opset : INT64_MAX;
            if (d->since_opset <= ehi && e->since_opset <= dhi)
                ib_test_fail(__FILE__, __LINE__, "%s: overlapping opset ranges", d->op_type);
        }
    }
    ASSERT_INT_GT(n, 100);
    ASSERT_NULL(ib_op_at(n));
}

static ib_node *one_node(ib_graph **g, const char *op, int64_t opset, uint32_t n_in)
{
    ASSERT_OK(ib_graph_create(g));
    (*g)->opset = opset;
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 1, {4}};
    ib_value_id in[4], out = ib_graph_add_value(*g, "y", NULL);
    for (uint32_t i = 0; i < n_in; i++)
        in[i] = ib_graph_add_value(*g, i ? "b" : "a", &d);
    ib_node_id id = ib_graph_add_node(*g, op, "", "node_7", in, n_in, &out, 1, NULL, 0);
    return &(*g)->nodes.data[id];
}

TEST(ops_registry_errors_name_op_node_opset)
{
    ib_err err;
    ib_graph *g;
    ib_tensor *x = T_F32(DIMS(4), 1, 2, 3, 4), *y = t_make(IB_DTYPE_FLOAT32, DIMS(4), NULL);
    const ib_tensor *in[3] = {x, x, x};
    ib_node *n = one_node(&g, "Frobnicate", 13, 1);
    ASSERT_STATUS(ib_op_run_reference(g, n, in, 1, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "Frobnicate");
    ASSERT_STR_CONTAINS(err.msg, "node_7");
    ASSERT_STR_CONTAINS(err.msg, "opset 13");
    ib_graph_destroy(g);
    /* known op at an opset outside its range */
    n = one_node(&g, "Resize", 9, 1);
    ib_tensor_desc od;
    const ib_tensor_desc *dd[1] = {&x->desc};
    ASSERT_STATUS(ib_op_infer(g, n, dd, NULL, 1, &od, 1, NULL, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "not supported at opset 9");
    ASSERT_STR_CONTAINS(err.msg, "from opset 10");
    ib_graph_destroy(g);
    /* wrong arity */
    n = one_node(&g, "Add", 13, 3);
    ASSERT_STATUS(ib_op_run_reference(g, n, in, 3, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "expects 2..2 inputs, got 3");
    ASSERT_STR_CONTAINS(err.msg, "node_7");
    ib_graph_destroy(g);
    /* a required input absent */
    n = one_node(&g, "Add", 13, 2);
    const ib_tensor *holes[2] = {NULL, x};
    ASSERT_STATUS(ib_op_run_reference(g, n, holes, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "required input 0 is missing");
    ib_graph_destroy(g);
    /* a dtype the kernel does not take */
    ib_tensor *xi = T_I64(DIMS(4), 1, 2, 3, 4);
    const ib_tensor *ii[2] = {xi, xi};
    n = one_node(&g, "MatMul", 13, 2);
    ASSERT_STATUS(ib_op_run_reference(g, n, ii, 2, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "int64");
    ASSERT_STR_CONTAINS(err.msg, "MatMul");
    ib_graph_destroy(g);
    free_all((ib_tensor *[]){x, y, xi}, 3);
}

TEST(ops_registry_flops_and_const_inputs)
{
    const ib_op_def *conv = ib_op_find("", "Conv", 13);
    ib_tensor_desc x = {IB_DTYPE_FLOAT32, 4, {1, 3, 8, 8}},
                   w = {IB_DTYPE_FLOAT32, 4, {16, 3, 3, 3}};
    ib_tensor_desc y = {IB_DTYPE_FLOAT32, 4, {1, 16, 6, 6}};
    const ib_tensor_desc *in[2] = {&x, &w};
    ib_op_ctx ctx = {NULL, NULL, NULL, 0};
    /* 2 x (16 x 6 x 6 outputs) x (3 x 3 x 3 MACs each) */
    ASSERT_DBL_EQ(conv->flops(&ctx, in, 2, &y, 1), 2.0 * 16 * 36 * 27);
    ASSERT_INT_EQ(ib_op_find("", "Reshape", 14)->const_inputs, 0x2);
    ASSERT_INT_EQ(ib_op_find("", "Slice", 13)->const_inputs, 0x1e);
    ASSERT_INT_EQ(ib_op_find("", "Add", 14)->const_inputs, 0);
}

TEST(ops_run_reference_checks_buffers)
{
    ib_err err;
    ib_graph *g;
    ib_node *n = one_node(&g, "Add", 13, 2);
    ib_tensor *x = T_F32(DIMS(4), 1, 2, 3, 4), *small = t_make(IB_DTYPE_FLOAT32, DIMS(3), NULL);
    ib_tensor *wrong = t_make(IB_DTYPE_INT64, DIMS(4), NULL);
    const ib_tensor *in[2] = {x, x};
    ASSERT_STATUS(ib_op_run_reference(g, n, in, 2, &small, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "output 0 buffer is float32[3]");
    ASSERT_STATUS(ib_op_run_reference(g, n, in, 2, &wrong, 1, &err), IB_EINVAL);
    /* an input whose bytes do not cover its shape */
    ib_tensor lie = *x;
    lie.nbytes = 8;
    const ib_tensor *in2[2] = {&lie, x};
    ib_tensor *y = t_make(IB_DTYPE_FLOAT32, DIMS(4), NULL);
    ASSERT_STATUS(ib_op_run_reference(g, n, in2, 2, &y, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "input 0 holds 8 bytes");
    ASSERT_OK_ERR(ib_op_run_reference(g, n, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 2, 4, 6, 8);
    free_all((ib_tensor *[]){x, small, wrong, y}, 4);
    ib_graph_destroy(g);
}

/* Shape inference on absurd shapes and attributes: errors, never overflow
 * (the ubsan build traps signed overflow) or crashes. */
TEST(ops_infer_huge_values_fail_cleanly)
{
    ib_err err;
    bool dd;
    ib_tensor_desc od[2];
    ib_tensor_desc big = {IB_DTYPE_FLOAT32, 2, {(int64_t)1 << 40, (int64_t)1 << 40}};
    ib_tensor_desc *in1[1] = {&big};
    ib_attr a0 = A_INT("axis", 0);
    ASSERT_STATUS(op_infer("", "Flatten", 13, &a0, 1, in1, NULL, 1, od, 1, &dd, &err),
                  IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "too large");
    /* Tile by huge repeats */
    ib_tensor_desc x = {IB_DTYPE_FLOAT32, 1, {1000}}, rd = {IB_DTYPE_INT64, 1, {1}};
    ib_tensor *rep = T_I64(DIMS(1), INT64_MAX);
    ib_tensor_desc *in2[2] = {&x, &rd};
    const ib_tensor *c2[2] = {NULL, rep};
    ASSERT_STATUS(op_infer("", "Tile", 13, NULL, 0, in2, c2, 2, od, 1, &dd, &err), IB_EUNSUPPORTED);
    /* Slice with extreme steps and bounds */
    ib_tensor *st = T_I64(DIMS(1), INT64_MIN), *en = T_I64(DIMS(1), INT64_MAX);
    ib_tensor *ax = T_I64(DIMS(1), 0), *sp = T_I64(DIMS(1), INT64_MAX);
    ib_tensor_desc sd = st->desc;
    ib_tensor_desc *in3[5] = {&x, &sd, &sd, &sd, &sd};
    const ib_tensor *c3[5] = {NULL, st, en, ax, sp};
    ASSERT_OK_ERR(op_infer("", "Slice", 13, NULL, 0, in3, c3, 5, od, 1, &dd, &err), &err);
    ASSERT_INT_EQ(od[0].dims[0], 1);
    ((int64_t *)sp->data)[0] = INT64_MIN;
    const ib_tensor *c4[5] = {NULL, en, st, ax, sp};
    ASSERT_OK_ERR(op_infer("", "Slice", 13, NULL, 0, in3, c4, 5, od, 1, &dd, &err), &err);
    ASSERT_INT_EQ(od[0].dims[0], 1);
    /* Pad, Conv and Resize with huge values */
    ib_tensor *pads = T_I64(DIMS(2), INT64_MAX, INT64_MAX);
    ib_tensor_desc pd = pads->desc;
    ib_tensor_desc *in5[2] = {&x, &pd};
    const ib_tensor *c5[2] = {NULL, pads};
    ASSERT_STATUS(op_infer("", "Pad", 13, NULL, 0, in5, c5, 2, od, 1, &dd, &err), IB_EUNSUPPORTED);
    ib_tensor_desc cx = {IB_DTYPE_FLOAT32, 4, {1, 1, 8, 8}},
                   cw = {IB_DTYPE_FLOAT32, 4, {1, 1, 3, 3}};
    ib_tensor_desc *in6[2] = {&cx, &cw};
    ib_attr s = A_INTS("strides", INT64_MAX, 1);
    ASSERT_STATUS(op_infer("", "Conv", 13, &s, 1, in6, NULL, 2, od, 1, &dd, &err), IB_EUNSUPPORTED);
    ib_attr d = A_INTS("dilations", 1, (int64_t)1 << 62);
    ASSERT_STATUS(op_infer("", "ConvTranspose", 13, &d, 1, in6, NULL, 2, od, 1, &dd, &err),
                  IB_EUNSUPPORTED);
    ib_tensor *sc = T_F32(DIMS(4), 1, 1, 1e30f, 1);
    ib_tensor_desc scd = sc->desc;
    ib_tensor_desc *in7[3] = {&cx, NULL, &scd};
    const ib_tensor *c7[3] = {NULL, NULL, sc};
    ASSERT_STATUS(op_infer("", "Resize", 13, NULL, 0, in7, c7, 3, od, 1, &dd, &err),
                  IB_EUNSUPPORTED);
    free_all((ib_tensor *[]){rep, st, en, ax, sp, pads, sc}, 7);
}

TEST(ops_integer_overflow_wraps_without_ub)
{
    ib_err err;
    ib_tensor *x = T_I64(DIMS(3), INT64_MAX, INT64_MAX, INT64_MIN), *y;
    ASSERT_OK_ERR(op_run("ReduceSum", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(I64(y)[0], INT64_MAX - 1); /* MAX + MAX + MIN, modulo 2^64 */
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("ReduceProd", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Neg", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(I64(y)[2], INT64_MIN);
    ib_tensor_free(y);
    ib_tensor *in[2] = {x, x};
    ASSERT_OK_ERR(op_run("Mul", 14, NULL, 0, in, 2, &y, 1, &err), &err);
    ib_tensor_free(y);
    ib_tensor *m1 = T_I64(DIMS(3), -1, -1, -1), *din[2] = {x, m1};
    ASSERT_OK_ERR(op_run("Div", 14, NULL, 0, din, 2, &y, 1, &err), &err);
    ASSERT_INT_EQ(I64(y)[2], INT64_MIN);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Mod", 13, NULL, 0, din, 2, &y, 1, &err), &err);
    ASSERT_INT_EQ(I64(y)[2], 0);
    ib_tensor_free(y);
    free_all((ib_tensor *[]){x, m1}, 2);
}
