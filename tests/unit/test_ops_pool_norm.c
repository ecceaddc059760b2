/*
 * test_ops_pool_norm.c - pooling (MaxPool with Indices, dilations and
 * ceil_mode; AveragePool with and without count_include_pad; global pools),
 * normalisations (BatchNormalization, InstanceNormalization,
 * LayerNormalization with its optional outputs) and Softmax/LogSoftmax/
 * Hardmax in both their pre-13 (coerced to 2-D) and 13+ (one axis) forms.
 */
#include "test_ops_util.h"

static ib_tensor *iota4x4(void)
{
    return T_F32(DIMS(1, 1, 4, 4), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
}

TEST(ops_maxpool_ceil_mode_and_indices)
{
    ib_err err;
    ib_tensor *x = iota4x4(), *y[2];
    ib_attr at[] = {A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2), A_INT("ceil_mode", 1)};
    ASSERT_OK_ERR(op_run("MaxPool", 12, at, 3, &x, 1, y, 2, &err), &err);
    ASSERT_DIMS(y[0], 1, 1, 2, 2);
    ASSERT_F32S(y[0], 0, 11, 12, 15, 16);
    ASSERT_INT_EQ(y[1]->desc.dtype, IB_DTYPE_INT64);
    ASSERT_I64S(y[1], 10, 11, 14, 15);
    free_all(y, 2);
    /* floor mode: one window */
    ASSERT_OK_ERR(op_run("MaxPool", 12, at, 2, &x, 1, y, 1, &err), &err);
    ASSERT_DIMS(y[0], 1, 1, 1, 1);
    ASSERT_F32S(y[0], 0, 11);
    ib_tensor_free(y[0]);
    /* ceil_mode drops a last window that would start inside the end padding
     * (in 4, k 2, s 2, pad_end 1: 3 windows by the formula, 2 kept) */
    ib_attr cp[] = {A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2),
                    A_INTS("pads", 0, 0, 1, 1), A_INT("ceil_mode", 1)};
    ASSERT_OK_ERR(op_run("MaxPool", 12, cp, 4, &x, 1, y, 1, &err), &err);
    ASSERT_DIMS(y[0], 1, 1, 2, 2);
    ASSERT_F32S(y[0], 0, 6, 8, 14, 16);
    ib_tensor_free(y[0]);
    /* storage_order 1: column-major indices */
    ib_attr so[] = {A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2),
                    A_INT("storage_order", 1)};
    ASSERT_OK_ERR(op_run("MaxPool", 12, so, 3, &x, 1, y, 2, &err), &err);
    ASSERT_I64S(y[1], 5, 13, 7, 15); /* value 6 at (h1,w1): 1*4+1 = 5; 8 at (1,3): 3*4+1 */
    free_all(y, 2);
    ib_tensor_free(x);
}

TEST(ops_maxpool_dilations_same_upper_uint8)
{
    ib_err err;
    ib_tensor *x = iota4x4(), *y;
    ib_attr at[] = {A_INTS("kernel_shape", 2, 2), A_INTS("dilations", 2, 2)};
    ASSERT_OK_ERR(op_run("MaxPool", 12, at, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 2, 2);
    ASSERT_F32S(y, 0, 11, 12, 15, 16);
    ib_tensor_free(y);
    /* dilations are refused before opset 10 */
    ASSERT_STATUS(op_run("MaxPool", 8, at, 2, &x, 1, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "dilations");
    ib_attr su[] = {A_INTS("kernel_shape", 3, 3), A_STR("auto_pad", "SAME_UPPER")};
    ASSERT_OK_ERR(op_run("MaxPool", 12, su, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 4, 4);
    ASSERT_NEAR(F32(y)[0], 6, 0);
    ASSERT_NEAR(F32(y)[15], 16, 0);
    ib_tensor_free(y);
    ib_tensor *u = T_U8(DIMS(1, 1, 2, 2), 3, 250, 7, 1);
    ib_attr k2 = A_INTS("kernel_shape", 2, 2);
    ASSERT_OK_ERR(op_run("MaxPool", 12, &k2, 1, &u, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(((const uint8_t *)y->data)[0], 250);
    ib_tensor_free(y);
    ib_tensor_free(u);
    /* kernel_shape is required */
    ASSERT_STATUS(op_run("MaxPool", 12, NULL, 0, &x, 1, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "kernel_shape");
    ib_tensor_free(x);
}

TEST(ops_averagepool_count_include_pad)
{
    ib_err err;
    ib_tensor *x = iota4x4(), *y;
    ib_attr at[] = {A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2),
                    A_INTS("pads", 1, 1, 1, 1)};
    /* windows at -1 and 1 (and 3): corner window holds 1 value */
    ASSERT_OK_ERR(op_run("AveragePool", 11, at, 3, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 3, 3);
    ASSERT_NEAR(F32(y)[0], 1, 1e-6);                       /* only x[0][0] */
    ASSERT_NEAR(F32(y)[1], (2 + 3) / 2.0, 1e-6);           /* row 0, cols 1-2 */
    ASSERT_NEAR(F32(y)[4], (6 + 7 + 10 + 11) / 4.0, 1e-6); /* centre */
    ib_tensor_free(y);
    ib_attr ip[] = {at[0], at[1], at[2], A_INT("count_include_pad", 1)};
    ASSERT_OK_ERR(op_run("AveragePool", 11, ip, 4, &x, 1, &y, 1, &err), &err);
    ASSERT_NEAR(F32(y)[0], 1 / 4.0, 1e-6);
    ASSERT_NEAR(F32(y)[1], (2 + 3) / 4.0, 1e-6);
    ASSERT_NEAR(F32(y)[4], (6 + 7 + 10 + 11) / 4.0, 1e-6);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("GlobalAveragePool", 1, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 1, 1);
    ASSERT_F32S(y, 1e-6, 8.5f);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("GlobalMaxPool", 1, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 16);
    ib_tensor_free(y);
    ib_tensor_free(x);
}

TEST(ops_batchnorm_inference_and_old_outputs)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(1, 2, 1, 2), 1, 2, 3, 4);
    ib_tensor *sc = T_F32(DIMS(2), 2, 1), *b = T_F32(DIMS(2), 0, 10);
    ib_tensor *mu = T_F32(DIMS(2), 1, 3), *var = T_F32(DIMS(2), 4, 1);
    ib_tensor *in[5] = {x, sc, b, mu, var}, *y[3];
    ib_attr eps = A_FLOAT("epsilon", 0.0f);
    ASSERT_OK_ERR(op_run("BatchNormalization", 15, &eps, 1, in, 5, y, 1, &err), &err);
    /* c0: 2 * (x - 1) / 2 + 0; c1: (x - 3) / 1 + 10 */
    ASSERT_F32S(y[0], 1e-6, 0, 1, 10, 11);
    ib_tensor_free(y[0]);
    /* opset 9: optional mean/var outputs receive the running statistics */
    ASSERT_OK_ERR(op_run("BatchNormalization", 9, &eps, 1, in, 5, y, 3, &err), &err);
    ASSERT_F32S(y[1], 0, 1, 3);
    ASSERT_F32S(y[2], 0, 4, 1);
    free_all(y, 3);
    ib_attr tm = A_INT("training_mode", 1);
    ASSERT_STATUS(op_run("BatchNormalization", 15, &tm, 1, in, 5, y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "training_mode");
    ib_attr sp = A_INT("spatial", 0);
    ASSERT_STATUS(op_run("BatchNormalization", 7, &sp, 1, in, 5, y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "spatial");
    ib_tensor *bad = T_F32(DIMS(3), 1, 1, 1);
    in[1] = bad;
    ASSERT_STATUS(op_run("BatchNormalization", 15, NULL, 0, in, 5, y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "scale");
    in[1] = sc;
    free_all(in, 5);
    ib_tensor_free(bad);
}

TEST(ops_instancenorm_layernorm)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(1, 2, 2), 1, 3, 10, 20);
    ib_tensor *sc = T_F32(DIMS(2), 1, 2), *b = T_F32(DIMS(2), 0, 1), *in[3] = {x, sc, b}, *y[3];
    ib_attr eps = A_FLOAT("epsilon", 0.0f);
    ASSERT_OK_ERR(op_run("InstanceNormalization", 6, &eps, 1, in, 3, y, 1, &err), &err);
    ASSERT_F32S(y[0], 1e-6, -1, 1, -1, 3); /* c1: 2 * (+-1) + 1 */
    ib_tensor_free(y[0]);
    /* LayerNormalization over the last axis with Mean and InvStdDev */
    ib_tensor *g = T_F32(DIMS(2), 1, 2), *in2[3] = {x, g, b};
    ASSERT_OK_ERR(op_run("LayerNormalization", 17, &eps, 1, in2, 3, y, 3, &err), &err);
    ASSERT_F32S(y[0], 1e-6, -1, 3, -1, 3);
    ASSERT_DIMS(y[1], 1, 2, 1);
    ASSERT_F32S(y[1], 1e-6, 2, 15);
    ASSERT_F32S(y[2], 1e-6, 1, 0.2f);
    free_all(y, 3);
    /* axis 1 normalises over the last two dims; Scale broadcasts */
    ib_attr a1[] = {A_INT("axis", 1), eps};
    ib_tensor *s1 = T_F32(SCALAR, 1.0f), *in3[2] = {x, s1};
    ASSERT_OK_ERR(op_run("LayerNormalization", 17, a1, 2, in3, 2, y, 1, &err), &err);
    double mean = 8.5, sd = sqrt(((1 - mean) * (1 - mean) + (3 - mean) * (3 - mean) +
                                  (10 - mean) * (10 - mean) + (20 - mean) * (20 - mean)) /
                                 4);
    ASSERT_NEAR(F32(y[0])[0], (1 - mean) / sd, 1e-6);
    ASSERT_NEAR(F32(y[0])[3], (20 - mean) / sd, 1e-6);
    ib_tensor_free(y[0]);
    /* the inferbench LayerNorm twin gives the same result */
    ASSERT_OK_ERR(op_run_ex("inferbench", "LayerNorm", 1, a1, 2, in3, 2, y, 1, NULL, &err), &err);
    ASSERT_NEAR(F32(y[0])[0], (1 - mean) / sd, 1e-6);
    ib_tensor_free(y[0]);
    /* an axis out of range names the node */
    ib_attr a5 = A_INT("axis", 5);
    ASSERT_STATUS(op_run("LayerNormalization", 17, &a5, 1, in3, 2, y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "axis 5");
    free_all((ib_tensor *[]){x, sc, b, g, s1}, 5);
}

TEST(ops_softmax_legacy_vs_axis_semantics)
{
    ib_err err;
    /* [1, 2, 2]: opset 11 axis=1 normalises over the flattened 2x2 block;
     * opset 13 axis=1 only over dim 1 */
    ib_tensor *x = T_F32(DIMS(1, 2, 2), 0, 1, 2, 3), *y;
    ib_attr ax = A_INT("axis", 1);
    ASSERT_OK_ERR(op_run("Softmax", 11, &ax, 1, &x, 1, &y, 1, &err), &err);
    double s = 1 + exp(1.0) + exp(2.0) + exp(3.0);
    ASSERT_F32S(y, 1e-6, (float)(1 / s), (float)(exp(1.0) / s), (float)(exp(2.0) / s),
                (float)(exp(3.0) / s));
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Softmax", 13, &ax, 1, &x, 1, &y, 1, &err), &err);
    double t = 1 + exp(2.0);
    ASSERT_F32S(y, 1e-6, (float)(1 / t), (float)(1 / t), (float)(exp(2.0) / t),
                (float)(exp(2.0) / t));
    ib_tensor_free(y);
    /* default axes: 1 before 13, -1 from 13 */
    ASSERT_OK_ERR(op_run("Softmax", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_NEAR(F32(y)[0] + F32(y)[1], 1, 1e-6);
    ib_tensor_free(y);
    /* large values stay finite (max subtraction); LogSoftmax likewise */
    ib_tensor *big = T_F32(DIMS(3), 10000, 10001, 10002);
    ASSERT_OK_ERR(op_run("LogSoftmax", 13, NULL, 0, &big, 1, &y, 1, &err), &err);
    double l = log(exp(-2.0) + exp(-1.0) + 1);
    ASSERT_F32S(y, 1e-5, (float)(-2 - l), (float)(-1 - l), (float)(-l));
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Hardmax", 13, NULL, 0, &big, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0, 0, 1);
    ib_tensor_free(y);
    ib_tensor_free(big);
    ib_tensor_free(x);
}
