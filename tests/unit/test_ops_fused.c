/*
 * test_ops_fused.c - the internal "inferbench" ops against the chains of
 * ONNX ops they replace, each run through its own reference kernel:
 * FusedConv = Conv (+ Add Z) (+ Relu / LeakyRelu / Clip), FusedMatMul =
 * MatMul (+ Add bias) (+ Relu / Gelu), Attention = MatMul - Mul(scale) -
 * Add(mask) - Softmax - MatMul; plus their attribute and shape errors.
 */
#include "test_ops_util.h"

static void assert_same(const ib_tensor *a, const ib_tensor *b, double tol)
{
    ASSERT_TRUE(ib_tensor_desc_equal(&a->desc, &b->desc));
    int64_t n = ib_tensor_desc_numel(&a->desc);
    for (int64_t i = 0; i < n; i++)
        ASSERT_NEAR(F32(a)[i], F32(b)[i], tol);
}

/* y = op(a[, b]) through the ONNX reference kernels. */
static ib_tensor *run1(const char *op, const ib_attr *at, uint32_t na, ib_tensor *a, ib_tensor *b)
{
    ib_err err;
    ib_tensor *in[2] = {a, b}, *y;
    ASSERT_OK_ERR(op_run(op, 13, at, na, in, b ? 2 : 1, &y, 1, &err), &err);
    return y;
}

TEST(ops_fused_conv_matches_conv_add_relu)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(2, 4, 7, 7), 1), *w = t_rand(DIMS(6, 2, 3, 3), 2);
    ib_tensor *b = t_rand(DIMS(6), 3), *z = t_rand(DIMS(2, 6, 4, 4), 4);
    ib_attr conv_at[] = {A_INT("group", 2), A_INTS("strides", 2, 2), A_INTS("pads", 1, 1, 1, 1)};
    ib_tensor *cin[3] = {x, w, b}, *c;
    ASSERT_OK_ERR(op_run("Conv", 13, conv_at, 3, cin, 3, &c, 1, &err), &err);
    ib_tensor *s = run1("Add", NULL, 0, c, z), *r = run1("Relu", NULL, 0, s, NULL);
    ib_attr fat[] = {conv_at[0], conv_at[1], conv_at[2], A_STR("activation", "Relu")};
    ib_tensor *fin[4] = {x, w, b, z}, *y;
    ASSERT_OK_ERR(op_run_ex("inferbench", "FusedConv", 1, fat, 4, fin, 4, &y, 1, NULL, &err), &err);
    assert_same(y, r, 1e-5);
    ib_tensor_free(y);
    /* residual without bias (input 2 absent), LeakyRelu */
    ib_tensor *cin2[2] = {x, w}, *c2;
    ASSERT_OK_ERR(op_run("Conv", 13, conv_at, 3, cin2, 2, &c2, 1, &err), &err);
    ib_attr la = A_FLOAT("alpha", 0.2f);
    ib_tensor *s2 = run1("Add", NULL, 0, c2, z), *l2 = run1("LeakyRelu", &la, 1, s2, NULL);
    ib_attr fat2[] = {conv_at[0], conv_at[1], conv_at[2], A_STR("activation", "LeakyRelu"),
                      A_FLOAT("activation_alpha", 0.2f)};
    ib_tensor *fin2[4] = {x, w, NULL, z};
    ASSERT_OK_ERR(op_run_ex("inferbench", "FusedConv", 1, fat2, 5, fin2, 4, &y, 1, NULL, &err),
                  &err);
    assert_same(y, l2, 1e-5);
    ib_tensor_free(y);
    /* Clip (ReLU6) without residual */
    ib_attr fat3[] = {conv_at[0],
                      conv_at[1],
                      conv_at[2],
                      A_STR("activation", "Clip"),
                      A_FLOAT("clip_min", 0.0f),
                      A_FLOAT("clip_max", 0.5f)};
    ASSERT_OK_ERR(op_run_ex("inferbench", "FusedConv", 1, fat3, 6, cin, 3, &y, 1, NULL, &err),
                  &err);
    int64_t n = ib_tensor_desc_numel(&y->desc);
    for (int64_t i = 0; i < n; i++)
        ASSERT_NEAR(F32(y)[i], fmin(0.5, fmax(0.0, (double)F32(c)[i])), 1e-6);
    ib_tensor_free(y);
    /* Gelu is not a conv activation; a Z of the wrong shape is an error */
    ib_attr gel = A_STR("activation", "Gelu");
    ASSERT_STATUS(op_run_ex("inferbench", "FusedConv", 1, &gel, 1, cin, 3, &y, 1, NULL, &err),
                  IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "activation='Gelu'");
    ib_tensor *zb = t_rand(DIMS(2, 6, 3, 3), 5), *fin3[4] = {x, w, b, zb};
    ASSERT_STATUS(op_run_ex("inferbench", "FusedConv", 1, conv_at, 3, fin3, 4, &y, 1, NULL, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "Z");
    free_all((ib_tensor *[]){x, w, b, z, c, s, r, c2, s2, l2, zb}, 11);
}

TEST(ops_fused_matmul_matches_matmul_add_gelu)
{
    ib_err err;
    ib_tensor *a = t_rand(DIMS(2, 5, 8), 11), *b = t_rand(DIMS(8, 6), 12),
              *bias = t_rand(DIMS(6), 13);
    ib_tensor *m = run1("MatMul", NULL, 0, a, b), *s = run1("Add", NULL, 0, m, bias);
    ib_tensor *fin[3] = {a, b, bias}, *y;
    ib_attr g[] = {A_STR("activation", "Gelu"), A_STR("approximate", "tanh")};
    ASSERT_OK_ERR(op_run_ex("inferbench", "FusedMatMul", 1, g, 2, fin, 3, &y, 1, NULL, &err), &err);
    ib_tensor *gr;
    ib_attr ga = A_STR("approximate", "tanh");
    ASSERT_OK_ERR(op_run_ex("inferbench", "Gelu", 1, &ga, 1, &s, 1, &gr, 1, NULL, &err), &err);
    assert_same(y, gr, 1e-5);
    free_all((ib_tensor *[]){y, gr}, 2);
    /* Relu, no bias */
    ib_attr re = A_STR("activation", "Relu");
    ASSERT_OK_ERR(op_run_ex("inferbench", "FusedMatMul", 1, &re, 1, fin, 2, &y, 1, NULL, &err),
                  &err);
    ib_tensor *rr = run1("Relu", NULL, 0, m, NULL);
    assert_same(y, rr, 1e-5);
    free_all((ib_tensor *[]){y, rr}, 2);
    /* transB (the Gemm form) with alpha */
    ib_tensor *bt = run1("Transpose", NULL, 0, b, NULL), *tin[3] = {a, bt, bias};
    ib_attr tb[] = {A_INT("transB", 1), A_FLOAT("alpha", 1.0f)};
    ASSERT_OK_ERR(op_run_ex("inferbench", "FusedMatMul", 1, tb, 2, tin, 3, &y, 1, NULL, &err),
                  &err);
    assert_same(y, s, 1e-5);
    ib_tensor_free(y);
    ib_attr bad = A_STR("activation", "Swish");
    ASSERT_STATUS(op_run_ex("inferbench", "FusedMatMul", 1, &bad, 1, fin, 3, &y, 1, NULL, &err),
                  IB_EUNSUPPORTED);
    free_all((ib_tensor *[]){a, b, bias, m, s, bt}, 6);
}

TEST(ops_attention_matches_decomposed_pattern)
{
    ib_err err;
    /* BERT-like: [batch 2, heads 3, seq 5, head dim 4] */
    ib_tensor *q = t_rand(DIMS(2, 3, 5, 4), 21), *kt = t_rand(DIMS(2, 3, 4, 5), 22);
    ib_tensor *v = t_rand(DIMS(2, 3, 5, 4), 23), *mask = t_rand(DIMS(2, 1, 1, 5), 24);
    float scale = 0.5f;
    ib_tensor *sc = T_F32(SCALAR, scale);
    ib_tensor *s = run1("MatMul", NULL, 0, q, kt), *s2 = run1("Mul", NULL, 0, s, sc);
    ib_tensor *s3 = run1("Add", NULL, 0, s2, mask);
    ib_attr ax = A_INT("axis", -1);
    ib_tensor *p = run1("Softmax", &ax, 1, s3, NULL), *o = run1("MatMul", NULL, 0, p, v);
    ib_attr sa = A_FLOAT("scale", scale);
    ib_tensor *in[4] = {q, kt, v, mask}, *y;
    ASSERT_OK_ERR(op_run_ex("inferbench", "Attention", 1, &sa, 1, in, 4, &y, 1, NULL, &err), &err);
    assert_same(y, o, 1e-5);
    ib_tensor_free(y);
    /* no mask, default scale 1 */
    ib_tensor *p1 = run1("Softmax", &ax, 1, s, NULL), *o1 = run1("MatMul", NULL, 0, p1, v);
    ASSERT_OK_ERR(op_run_ex("inferbench", "Attention", 1, NULL, 0, in, 3, &y, 1, NULL, &err), &err);
    assert_same(y, o1, 1e-5);
    ib_tensor_free(y);
    /* Kt with the wrong head dim; a mask that does not broadcast */
    ib_tensor *bad = t_rand(DIMS(2, 3, 5, 5), 25), *bin[3] = {q, bad, v};
    ASSERT_STATUS(op_run_ex("inferbench", "Attention", 1, NULL, 0, bin, 3, &y, 1, NULL, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "Kt");
    ib_tensor *bm = t_rand(DIMS(2, 3, 5, 4), 26), *min[4] = {q, kt, v, bm};
    ASSERT_STATUS(op_run_ex("inferbench", "Attention", 1, NULL, 0, min, 4, &y, 1, NULL, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "mask");
    free_all((ib_tensor *[]){q, kt, v, mask, sc, s, s2, s3, p, o, p1, o1, bad, bm}, 14);
}
