/*
 * test_ops_elementwise.c - unary and binary elementwise reference kernels:
 * hand-computed values, numpy broadcasting (including empty tensors and
 * incompatible shapes named in the error), integer semantics, Clip's
 * attribute (opset 6) and input (opset 11) forms, Dropout in inference,
 * Where, variadic Min/Max/Sum/Mean and unsupported dtypes.
 */
#include "test_ops_util.h"

TEST(ops_unary_activations_values)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(5), -2.0f, -0.5f, 0.0f, 0.5f, 3.0f), *y;
    ASSERT_OK_ERR(op_run("Relu", 14, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0, 0, 0, 0.5f, 3.0f);
    ib_tensor_free(y);
    ib_attr al = A_FLOAT("alpha", 0.1f);
    ASSERT_OK_ERR(op_run("LeakyRelu", 6, &al, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-7, -0.2f, -0.05f, 0, 0.5f, 3.0f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Sigmoid", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-6, 0.11920292f, 0.37754067f, 0.5f, 0.62245933f, 0.95257413f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Tanh", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-6, -0.96402758f, -0.46211716f, 0, 0.46211716f, 0.99505475f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Erf", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-6, -0.99532227f, -0.52049988f, 0, 0.52049988f, 0.99997791f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Neg", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 2.0f, 0.5f, 0, -0.5f, -3.0f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Abs", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 2.0f, 0.5f, 0, 0.5f, 3.0f);
    ib_tensor_free(y);
    /* sigmoid of large magnitudes stays finite and exact at the ends */
    ib_tensor *big = T_F32(DIMS(2), -1000.0f, 1000.0f);
    ASSERT_OK_ERR(op_run("Sigmoid", 13, NULL, 0, &big, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0.0f, 1.0f);
    ib_tensor_free(y);
    ib_tensor_free(big);
    ib_tensor_free(x);
}

TEST(ops_unary_math_values)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(4), 0.25f, 1.0f, 4.0f, 2.5f), *y;
    ASSERT_OK_ERR(op_run("Sqrt", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-7, 0.5f, 1.0f, 2.0f, 1.58113883f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Log", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-6, -1.38629436f, 0, 1.38629436f, 0.91629073f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Exp", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-4, 1.28402542f, 2.71828183f, 54.59815003f, 12.18249396f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Reciprocal", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-7, 4.0f, 1.0f, 0.25f, 0.4f);
    ib_tensor_free(y);
    /* Round: half to even */
    ib_tensor *r = T_F32(DIMS(4), 0.5f, 1.5f, 2.5f, -2.5f);
    ASSERT_OK_ERR(op_run("Round", 11, NULL, 0, &r, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0.0f, 2.0f, 2.0f, -2.0f);
    ib_tensor_free(y);
    ib_tensor_free(r);
    ib_tensor_free(x);
}

TEST(ops_gelu_erf_and_tanh_forms)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(3), -1.0f, 0.5f, 2.0f), *y;
    ASSERT_OK_ERR(op_run_ex("inferbench", "Gelu", 1, NULL, 0, &x, 1, &y, 1, NULL, &err), &err);
    /* x * Phi(x) */
    ASSERT_F32S(y, 1e-6, -0.15865525f, 0.34573123f, 1.95449974f);
    ib_tensor_free(y);
    ib_attr t = A_STR("approximate", "tanh");
    ASSERT_OK_ERR(op_run_ex("inferbench", "Gelu", 1, &t, 1, &x, 1, &y, 1, NULL, &err), &err);
    ASSERT_F32S(y, 1e-6, -0.15880801f, 0.34571401f, 1.95459769f);
    ib_tensor_free(y);
    ib_attr bad = A_STR("approximate", "sigmoid");
    ASSERT_STATUS(op_run_ex("inferbench", "Gelu", 1, &bad, 1, &x, 1, &y, 1, NULL, &err),
                  IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "approximate='sigmoid'");
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    ib_tensor_free(x);
}

TEST(ops_clip_attribute_and_input_forms)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(4), -3.0f, -0.5f, 0.5f, 3.0f), *y;
    /* opset 6: attributes */
    ib_attr at[] = {A_FLOAT("min", -1.0f), A_FLOAT("max", 1.0f)};
    ASSERT_OK_ERR(op_run("Clip", 6, at, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, -1.0f, -0.5f, 0.5f, 1.0f);
    ib_tensor_free(y);
    /* opset 11: inputs; min only; the attributes no longer count */
    ib_tensor *mn = T_F32(SCALAR, 0.0f);
    ib_tensor *in[3] = {x, mn, NULL};
    ASSERT_OK_ERR(op_run("Clip", 11, at, 2, in, 3, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0.0f, 0.0f, 0.5f, 3.0f);
    ib_tensor_free(y);
    /* opset 12 int8 with both bounds */
    ib_tensor *xi = T_I8(DIMS(4), -100, -5, 5, 100), *lo = T_I8(SCALAR, -10),
              *hi = T_I8(SCALAR, 10);
    ib_tensor *ii[3] = {xi, lo, hi};
    ASSERT_OK_ERR(op_run("Clip", 13, NULL, 0, ii, 3, &y, 1, &err), &err);
    const int8_t *yi = y->data;
    ASSERT_INT_EQ(yi[0], -10);
    ASSERT_INT_EQ(yi[1], -5);
    ASSERT_INT_EQ(yi[3], 10);
    ib_tensor_free(y);
    /* a bound of another type is a clear error */
    ib_tensor *in2[3] = {xi, mn, NULL};
    ASSERT_STATUS(op_run("Clip", 13, NULL, 0, in2, 3, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "min");
    ib_tensor *q[] = {xi, lo, hi, mn};
    free_all(q, 4);
    ib_tensor_free(x);
}

TEST(ops_dropout_is_identity_in_inference)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(2, 2), 1, 2, 3, 4), *y[2];
    ASSERT_OK_ERR(op_run("Dropout", 13, NULL, 0, &x, 1, y, 2, &err), &err);
    ASSERT_F32S(y[0], 0, 1, 2, 3, 4);
    ASSERT_INT_EQ(y[1]->desc.dtype, IB_DTYPE_BOOL);
    for (int i = 0; i < 4; i++)
        ASSERT_INT_EQ(((const uint8_t *)y[1]->data)[i], 1);
    free_all(y, 2);
    /* training with a non-zero ratio is random: refused, naming the node */
    ib_tensor *ratio = T_F32(SCALAR, 0.5f), *tm = T_BOOL(SCALAR, 1);
    ib_tensor *in[3] = {x, ratio, tm};
    ASSERT_STATUS(op_run("Dropout", 13, NULL, 0, in, 3, y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "training_mode");
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    /* ... but ratio 0 in training is the identity */
    ((float *)ratio->data)[0] = 0.0f;
    ASSERT_OK_ERR(op_run("Dropout", 13, NULL, 0, in, 3, y, 1, &err), &err);
    ASSERT_F32S(y[0], 0, 1, 2, 3, 4);
    ib_tensor_free(y[0]);
    free_all(in, 3);
}

TEST(ops_binary_broadcast_shapes_and_values)
{
    ib_err err;
    ib_tensor *a = T_F32(DIMS(2, 1, 3), 1, 2, 3, 4, 5, 6), *b = T_F32(DIMS(4, 1), 10, 20, 30, 40);
    ib_tensor *in[2] = {a, b}, *y;
    ASSERT_OK_ERR(op_run("Add", 14, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 4, 3);
    /* y[i][j][k] = a[i][0][k] + b[j][0] */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++)
                ASSERT_NEAR(F32(y)[(i * 4 + j) * 3 + k], F32(a)[i * 3 + k] + F32(b)[j], 0);
    ib_tensor_free(y);
    /* scalar operand and each arithmetic op */
    ib_tensor *s = T_F32(SCALAR, 2.0f), *in2[2] = {a, s};
    ASSERT_OK_ERR(op_run("Sub", 14, NULL, 0, in2, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, -1, 0, 1, 2, 3, 4);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Div", 14, NULL, 0, in2, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0.5f, 1, 1.5f, 2, 2.5f, 3);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Pow", 15, NULL, 0, in2, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-5, 1, 4, 9, 16, 25, 36);
    ib_tensor_free(y);
    ib_tensor_free(s);
    /* incompatible shapes: an error naming the node and both shapes */
    ib_tensor *c = T_F32(DIMS(2), 1, 2), *in3[2] = {a, c};
    ASSERT_STATUS(op_run("Mul", 14, NULL, 0, in3, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    ASSERT_STR_CONTAINS(err.msg, "float32[2,1,3]");
    ASSERT_STR_CONTAINS(err.msg, "float32[2]");
    ib_tensor_free(c);
    free_all(in, 2);
}

TEST(ops_binary_empty_tensors)
{
    ib_err err;
    ib_tensor *a = t_make(IB_DTYPE_FLOAT32, DIMS(0, 3), NULL), *b = T_F32(DIMS(3), 1, 2, 3);
    ib_tensor *in[2] = {a, b}, *y;
    ASSERT_OK_ERR(op_run("Add", 14, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 0, 3);
    ASSERT_INT_EQ(ib_tensor_desc_numel(&y->desc), 0);
    ib_tensor_free(y);
    /* 0 broadcasts against 1, not against 3 */
    ib_tensor *c = t_make(IB_DTYPE_FLOAT32, DIMS(2, 1), NULL), *in2[2] = {a, c};
    ASSERT_STATUS(op_run("Add", 14, NULL, 0, in2, 2, &y, 1, &err), IB_EFORMAT);
    ib_tensor_free(c);
    free_all(in, 2);
}

TEST(ops_binary_integer_semantics)
{
    ib_err err;
    ib_tensor *a = T_I64(DIMS(4), 7, -7, 7, -7), *b = T_I64(DIMS(4), 2, 2, -2, -2);
    ib_tensor *in[2] = {a, b}, *y;
    ASSERT_OK_ERR(op_run("Div", 14, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_I64S(y, 3, -3, -3, 3); /* truncation toward zero */
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Mod", 13, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_I64S(y, 1, 1, -1, -1); /* fmod=0: sign of the divisor */
    ib_tensor_free(y);
    ib_attr fm = A_INT("fmod", 1);
    ASSERT_OK_ERR(op_run("Mod", 13, &fm, 1, in, 2, &y, 1, &err), &err);
    ASSERT_I64S(y, 1, -1, 1, -1); /* fmod=1: sign of the dividend */
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Pow", 15, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_I64S(y, 49, 49, 0, 0);
    ib_tensor_free(y);
    /* int64 beyond 2^53 stays exact */
    ib_tensor *big = T_I64(SCALAR, (int64_t)1 << 60), *one = T_I64(SCALAR, 1);
    ib_tensor *in2[2] = {big, one};
    ASSERT_OK_ERR(op_run("Add", 14, NULL, 0, in2, 2, &y, 1, &err), &err);
    ASSERT_INT_EQ(I64(y)[0], ((int64_t)1 << 60) + 1);
    ib_tensor_free(y);
    /* division by zero does not trap */
    ((int64_t *)one->data)[0] = 0;
    ASSERT_OK_ERR(op_run("Div", 14, NULL, 0, in2, 2, &y, 1, &err), &err);
    ib_tensor_free(y);
    /* mixed types are an error */
    ib_tensor *f = T_F32(SCALAR, 1.0f), *in3[2] = {a, f};
    ASSERT_STATUS(op_run("Add", 14, NULL, 0, in3, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "types differ");
    ib_tensor *q[] = {a, b, big, one, f};
    free_all(q, 5);
}

TEST(ops_compare_logic_where)
{
    ib_err err;
    ib_tensor *a = T_F32(DIMS(3), 1, 2, 3), *b = T_F32(DIMS(1), 2), *in[2] = {a, b}, *y;
    static const struct {
        const char *op;
        uint8_t want[3];
    } cases[] = {{"Equal", {0, 1, 0}},
                 {"Less", {1, 0, 0}},
                 {"Greater", {0, 0, 1}},
                 {"LessOrEqual", {1, 1, 0}},
                 {"GreaterOrEqual", {0, 1, 1}}};
    for (size_t c = 0; c < IB_ARRAY_LEN(cases); c++) {
        ASSERT_OK_ERR(op_run(cases[c].op, 16, NULL, 0, in, 2, &y, 1, &err), &err);
        ASSERT_INT_EQ(y->desc.dtype, IB_DTYPE_BOOL);
        for (int i = 0; i < 3; i++)
            ASSERT_INT_EQ(((const uint8_t *)y->data)[i], cases[c].want[i]);
        ib_tensor_free(y);
    }
    ib_tensor *p = T_BOOL(DIMS(2, 1), 1, 0), *q = T_BOOL(DIMS(2), 1, 0), *lin[2] = {p, q};
    ASSERT_OK_ERR(op_run("Xor", 7, NULL, 0, lin, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 2);
    const uint8_t *yb = y->data;
    ASSERT_INT_EQ(yb[0], 0);
    ASSERT_INT_EQ(yb[1], 1);
    ASSERT_INT_EQ(yb[2], 1);
    ASSERT_INT_EQ(yb[3], 0);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Not", 1, NULL, 0, &q, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(((const uint8_t *)y->data)[0], 0);
    ASSERT_INT_EQ(((const uint8_t *)y->data)[1], 1);
    ib_tensor_free(y);
    /* Where(cond [2,1], x [3], y scalar) -> [2,3] */
    ib_tensor *sc = T_F32(SCALAR, -1.0f), *win[3] = {p, a, sc};
    ASSERT_OK_ERR(op_run("Where", 16, NULL, 0, win, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3);
    ASSERT_F32S(y, 0, 1, 2, 3, -1, -1, -1);
    ib_tensor_free(y);
    /* And on floats is refused */
    ASSERT_STATUS(op_run("And", 7, NULL, 0, in, 2, &y, 1, &err), IB_EUNSUPPORTED);
    ib_tensor *all[] = {a, b, p, q, sc};
    free_all(all, 5);
}

TEST(ops_variadic_min_max_sum_mean)
{
    ib_err err;
    ib_tensor *a = T_F32(DIMS(3), 1, 5, NAN), *b = T_F32(DIMS(1), 3), *c = T_F32(DIMS(2, 1), 0, 10);
    ib_tensor *in[3] = {a, b, c}, *y;
    ASSERT_OK_ERR(op_run("Max", 13, NULL, 0, in, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3);
    ASSERT_NEAR(F32(y)[0], 3, 0);
    ASSERT_NEAR(F32(y)[1], 5, 0);
    ASSERT_TRUE(isnan(F32(y)[2])); /* NaN propagates like numpy.maximum */
    ASSERT_NEAR(F32(y)[3], 10, 0);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Min", 13, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_NEAR(F32(y)[0], 1, 0);
    ASSERT_NEAR(F32(y)[1], 3, 0);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Sum", 13, NULL, 0, in + 1, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 3, 13);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Mean", 13, NULL, 0, in + 1, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1.5f, 6.5f);
    ib_tensor_free(y);
    /* a single input is copied */
    ASSERT_OK_ERR(op_run("Max", 13, NULL, 0, &b, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 3);
    ib_tensor_free(y);
    free_all(in, 3);
}

TEST(ops_prelu_and_unsupported_dtype)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(2, 2), -1, 2, -3, 4), *s = T_F32(DIMS(2, 1), 0.5f, 0.25f);
    ib_tensor *in[2] = {x, s}, *y;
    ASSERT_OK_ERR(op_run("PRelu", 16, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, -0.5f, 2, -0.75f, 4);
    ib_tensor_free(y);
    /* Sigmoid has no int32 kernel: IB_EUNSUPPORTED naming op, node, opset and dtype */
    ib_tensor *xi = T_I32(DIMS(2), 1, 2);
    ASSERT_STATUS(op_run("Sigmoid", 13, NULL, 0, &xi, 1, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    ASSERT_STR_CONTAINS(err.msg, "Sigmoid");
    ASSERT_STR_CONTAINS(err.msg, "opset 13");
    ASSERT_STR_CONTAINS(err.msg, "int32");
    ib_tensor_free(xi);
    free_all(in, 2);
}

TEST(ops_isnan_isinf_sign)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(4), -INFINITY, NAN, 0.0f, INFINITY), *y;
    ASSERT_OK_ERR(op_run("IsNaN", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(((const uint8_t *)y->data)[1], 1);
    ASSERT_INT_EQ(((const uint8_t *)y->data)[0], 0);
    ib_tensor_free(y);
    ib_attr neg = A_INT("detect_positive", 0);
    ASSERT_OK_ERR(op_run("IsInf", 10, &neg, 1, &x, 1, &y, 1, &err), &err);
    const uint8_t *b = y->data;
    ASSERT_INT_EQ(b[0], 1);
    ASSERT_INT_EQ(b[3], 0);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Sign", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_NEAR(F32(y)[0], -1, 0);
    ASSERT_NEAR(F32(y)[2], 0, 0);
    ASSERT_NEAR(F32(y)[3], 1, 0);
    ib_tensor_free(y);
    ib_tensor_free(x);
}
