/*
 * test_ops_reduce.c - reductions (axes as attribute, and as ReduceSum's
 * input from opset 13 with noop_with_empty_axes; keepdims; negative and
 * duplicated axes), ArgMax/ArgMin (select_last_index) and TopK (largest,
 * smallest, ties in index order, K attribute before opset 10).
 */
#include "test_ops_util.h"

static ib_tensor *m23(void)
{
    return T_F32(DIMS(2, 3), 1, 5, 3, 4, 2, 6);
}

TEST(ops_reduce_axes_keepdims_values)
{
    ib_err err;
    ib_tensor *x = m23(), *y;
    ib_attr at[] = {A_INTS("axes", -1), A_INT("keepdims", 0)};
    ASSERT_OK_ERR(op_run("ReduceMean", 13, at, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2);
    ASSERT_F32S(y, 1e-6, 3, 4);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("ReduceMax", 13, at, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 1);
    ASSERT_F32S(y, 0, 5, 6);
    ib_tensor_free(y);
    ib_attr a0 = A_INTS("axes", 0);
    ASSERT_OK_ERR(op_run("ReduceMin", 13, &a0, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 3);
    ASSERT_F32S(y, 0, 1, 2, 3);
    ib_tensor_free(y);
    /* no axes: every axis */
    ASSERT_OK_ERR(op_run("ReduceProd", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1);
    ASSERT_F32S(y, 0, 720);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("ReduceL2", 13, at, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-5, (float)sqrt(35.0), (float)sqrt(56.0));
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("ReduceSumSquare", 13, at, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-5, 35, 56);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("ReduceLogSumExp", 13, at, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-5, (float)log(exp(1.0) + exp(5.0) + exp(3.0)),
                (float)log(exp(4.0) + exp(2.0) + exp(6.0)));
    ib_tensor_free(y);
    /* huge values do not overflow log-sum-exp */
    ib_tensor *big = T_F32(DIMS(2), 1000, 1000);
    ASSERT_OK_ERR(op_run("ReduceLogSumExp", 13, NULL, 0, &big, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 1e-3, (float)(1000 + log(2.0)));
    ib_tensor_free(y);
    ib_tensor_free(big);
    /* duplicated and out-of-range axes are errors naming the node */
    ib_attr dup = A_INTS("axes", 1, -1);
    ASSERT_STATUS(op_run("ReduceMax", 13, &dup, 1, &x, 1, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "twice");
    ib_attr oor = A_INTS("axes", 2);
    ASSERT_STATUS(op_run("ReduceMax", 13, &oor, 1, &x, 1, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    ib_tensor_free(x);
}

TEST(ops_reducesum_axes_attribute_vs_input)
{
    ib_err err;
    ib_tensor *x = m23(), *y;
    /* opset 11: attribute */
    ib_attr a1 = A_INTS("axes", 1);
    ASSERT_OK_ERR(op_run("ReduceSum", 11, &a1, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 9, 12);
    ib_tensor_free(y);
    /* opset 13: input; the attribute is no longer read */
    ib_tensor *ax = T_I64(DIMS(1), 0), *in[2] = {x, ax};
    ASSERT_OK_ERR(op_run("ReduceSum", 13, &a1, 1, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 3);
    ASSERT_F32S(y, 0, 5, 7, 9);
    ib_tensor_free(y);
    /* empty axes: all, or the identity with noop_with_empty_axes */
    ib_tensor *none = t_make(IB_DTYPE_INT64, DIMS(0), NULL), *in2[2] = {x, none};
    ASSERT_OK_ERR(op_run("ReduceSum", 13, NULL, 0, in2, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 21);
    ib_tensor_free(y);
    ib_attr noop = A_INT("noop_with_empty_axes", 1);
    ASSERT_OK_ERR(op_run("ReduceSum", 13, &noop, 1, in2, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3);
    ASSERT_F32S(y, 0, 1, 5, 3, 4, 2, 6);
    ib_tensor_free(y);
    /* int64 sums are exact */
    ib_tensor *xi = T_I64(DIMS(2), (int64_t)1 << 60, 1), *in3[2] = {xi, NULL};
    ASSERT_OK_ERR(op_run("ReduceSum", 13, NULL, 0, in3, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(I64(y)[0], ((int64_t)1 << 60) + 1);
    ib_tensor_free(y);
    /* axes not constant: the rank is known only with keepdims */
    ib_tensor_desc xd = x->desc, ad = ax->desc, od;
    ib_tensor_desc *ins[2] = {&xd, &ad};
    const ib_tensor *cin[2] = {NULL, NULL};
    bool dd = false;
    ASSERT_OK_ERR(op_infer("", "ReduceSum", 13, NULL, 0, ins, cin, 2, &od, 1, &dd, &err), &err);
    ASSERT_TRUE(dd);
    ASSERT_INT_EQ(od.ndim, 2);
    ASSERT_INT_EQ(od.dims[0], IB_DIM_DYNAMIC);
    free_all((ib_tensor *[]){x, ax, none, xi}, 4);
}

TEST(ops_argmax_argmin_select_last)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(2, 4), 1, 7, 7, 2, 3, 0, 0, 3), *y;
    ib_attr at[] = {A_INT("axis", -1), A_INT("keepdims", 0)};
    ASSERT_OK_ERR(op_run("ArgMax", 13, at, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2);
    ASSERT_I64S(y, 1, 0); /* first of the ties */
    ib_tensor_free(y);
    ib_attr last[] = {at[0], at[1], A_INT("select_last_index", 1)};
    ASSERT_OK_ERR(op_run("ArgMax", 13, last, 3, &x, 1, &y, 1, &err), &err);
    ASSERT_I64S(y, 2, 3);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("ArgMin", 13, last, 3, &x, 1, &y, 1, &err), &err);
    ASSERT_I64S(y, 0, 2);
    ib_tensor_free(y);
    /* default: axis 0, keepdims 1 */
    ASSERT_OK_ERR(op_run("ArgMax", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 4);
    ASSERT_I64S(y, 1, 0, 0, 1);
    ib_tensor_free(y);
    ib_tensor_free(x);
}

TEST(ops_topk_largest_smallest_ties)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(2, 5), 3, 1, 3, 5, 0, 2, 2, 2, 9, 1);
    ib_tensor *k = T_I64(DIMS(1), 3), *in[2] = {x, k}, *y[2];
    ASSERT_OK_ERR(op_run("TopK", 11, NULL, 0, in, 2, y, 2, &err), &err);
    ASSERT_DIMS(y[0], 2, 3);
    ASSERT_F32S(y[0], 0, 5, 3, 3, 9, 2, 2);
    ASSERT_I64S(y[1], 3, 0, 2, 3, 0, 1); /* equal values: lower index first */
    free_all(y, 2);
    ib_attr sm = A_INT("largest", 0);
    ASSERT_OK_ERR(op_run("TopK", 11, &sm, 1, in, 2, y, 2, &err), &err);
    ASSERT_F32S(y[0], 0, 0, 1, 3, 1, 2, 2);
    ASSERT_I64S(y[1], 4, 1, 0, 4, 0, 1);
    free_all(y, 2);
    /* axis 0, K as an attribute (opset 1..9) */
    ib_attr old[] = {A_INT("k", 1), A_INT("axis", 0)};
    ASSERT_OK_ERR(op_run("TopK", 9, old, 2, &x, 1, y, 2, &err), &err);
    ASSERT_DIMS(y[0], 1, 5);
    ASSERT_F32S(y[0], 0, 3, 2, 3, 9, 1);
    ASSERT_I64S(y[1], 0, 1, 0, 1, 1);
    free_all(y, 2);
    /* K larger than the axis */
    ((int64_t *)k->data)[0] = 6;
    ASSERT_STATUS(op_run("TopK", 11, NULL, 0, in, 2, y, 2, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "exceeds");
    free_all(in, 2);
}
