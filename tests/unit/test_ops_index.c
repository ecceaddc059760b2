/*
 * test_ops_index.c - NonZero (data-dependent output), CumSum (exclusive,
 * reverse), Trilu, EyeLike, OneHot, ScatterElements/ScatterND with
 * reductions and bad indices, DepthToSpace/SpaceToDepth (DCR, CRD).
 */
#include "test_ops_util.h"

TEST(ops_nonzero_cumsum_trilu_eyelike)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(2, 3), 0, 2, 0, -0.0f, 5, 1), *y;
    ASSERT_OK_ERR(op_run("NonZero", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3); /* the kernel shrank the [2, 6] bound */
    ASSERT_I64S(y, 0, 1, 1, 1, 1, 2);
    ib_tensor_free(y);
    ib_tensor *ax = T_I32(SCALAR, 1), *in[2] = {x, ax};
    ib_attr ex[] = {A_INT("exclusive", 1), A_INT("reverse", 1)};
    ASSERT_OK_ERR(op_run("CumSum", 14, ex, 2, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 2, 0, 0, 6, 1, 0);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("CumSum", 14, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0, 2, 2, 0, 5, 6);
    ib_tensor_free(y);
    ib_tensor *m = T_F32(DIMS(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), *k = T_I64(SCALAR, -1);
    ib_tensor *tin[2] = {m, k};
    ib_attr lower = A_INT("upper", 0);
    ASSERT_OK_ERR(op_run("Trilu", 14, &lower, 1, tin, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 0, 0, 0, 4, 0, 0, 7, 8, 0);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Trilu", 14, NULL, 0, &m, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1, 2, 3, 0, 5, 6, 0, 0, 9);
    ib_tensor_free(y);
    ib_attr ek[] = {A_INT("k", 1), A_INT("dtype", IB_DTYPE_INT64)};
    ASSERT_OK_ERR(op_run("EyeLike", 13, ek, 2, &m, 1, &y, 1, &err), &err);
    ASSERT_I64S(y, 0, 1, 0, 0, 0, 1, 0, 0, 0);
    ib_tensor_free(y);
    free_all((ib_tensor *[]){x, ax, m, k}, 4);
}

TEST(ops_onehot_scatter)
{
    ib_err err;
    ib_tensor *ix = T_I64(DIMS(3), 0, -1, 5), *depth = T_F32(SCALAR, 3),
              *vals = T_F32(DIMS(2), 0, 9);
    ib_tensor *in[3] = {ix, depth, vals}, *y;
    ASSERT_OK_ERR(op_run("OneHot", 11, NULL, 0, in, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 3, 3);
    ASSERT_F32S(y, 0, 9, 0, 0, 0, 0, 9, 0, 0, 0); /* 5 is out of range: all off */
    ib_tensor_free(y);
    ib_tensor *data = T_F32(DIMS(2, 3), 1, 2, 3, 4, 5, 6), *si = T_I64(DIMS(1, 2), 2, -3);
    ib_tensor *up = T_F32(DIMS(1, 2), 10, 20), *sin[3] = {data, si, up};
    ib_attr a1 = A_INT("axis", 1);
    ASSERT_OK_ERR(op_run("ScatterElements", 13, &a1, 1, sin, 3, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 20, 2, 10, 4, 5, 6);
    ib_tensor_free(y);
    ib_attr add[] = {a1, A_STR("reduction", "add")};
    ASSERT_OK_ERR(op_run("ScatterElements", 16, add, 2, sin, 3, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 21, 2, 13, 4, 5, 6);
    ib_tensor_free(y);
    ((int64_t *)si->data)[0] = 3;
    ASSERT_STATUS(op_run("ScatterElements", 13, &a1, 1, sin, 3, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "index 3");
    ib_tensor *ni = T_I64(DIMS(1, 1), 1), *nu = T_F32(DIMS(1, 3), 7, 8, 9),
              *nin[3] = {data, ni, nu};
    ib_attr mul = A_STR("reduction", "mul");
    ASSERT_OK_ERR(op_run("ScatterND", 16, &mul, 1, nin, 3, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1, 2, 3, 28, 40, 54);
    ib_tensor_free(y);
    ib_attr bad = A_STR("reduction", "max");
    ASSERT_STATUS(op_run("ScatterND", 16, &bad, 1, nin, 3, &y, 1, &err), IB_EUNSUPPORTED);
    free_all((ib_tensor *[]){ix, depth, vals, data, si, up, ni, nu}, 8);
}

TEST(ops_depth_space_round_trip)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(1, 8, 2, 3), 5), *d, *back;
    ib_attr b2 = A_INT("blocksize", 2);
    ASSERT_OK_ERR(op_run("DepthToSpace", 13, &b2, 1, &x, 1, &d, 1, &err), &err);
    ASSERT_DIMS(d, 1, 2, 4, 6);
    /* DCR: y[0, c, h*2+i, w*2+j] = x[0, (i*2+j)*2 + c, h, w] */
    ASSERT_NEAR(F32(d)[(1 * 4 + 3) * 6 + 4], F32(x)[((1 * 2 + 0) * 2 + 1) * 6 + 1 * 3 + 2], 0);
    ASSERT_OK_ERR(op_run("SpaceToDepth", 13, &b2, 1, &d, 1, &back, 1, &err), &err);
    ASSERT_MEM_EQ(back->data, x->data, x->nbytes);
    free_all((ib_tensor *[]){d, back}, 2);
    ib_attr crd[] = {b2, A_STR("mode", "CRD")};
    ASSERT_OK_ERR(op_run("DepthToSpace", 13, crd, 2, &x, 1, &d, 1, &err), &err);
    /* CRD: channel c*4 + i*2 + j */
    ASSERT_NEAR(F32(d)[(1 * 4 + 3) * 6 + 4], F32(x)[(1 * 4 + 1 * 2 + 0) * 6 + 1 * 3 + 2], 0);
    ib_tensor_free(d);
    ib_attr b3 = A_INT("blocksize", 3);
    ASSERT_STATUS(op_run("DepthToSpace", 13, &b3, 1, &x, 1, &d, 1, &err), IB_EFORMAT);
    ib_tensor_free(x);
}
