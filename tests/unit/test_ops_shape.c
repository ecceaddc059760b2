/*
 * test_ops_shape.c - shape and data-movement ops: Reshape (0, -1,
 * allowzero, non-constant shape -> data-dependent), Flatten, Squeeze/
 * Unsqueeze in their attribute and input forms, Shape (start/end), Expand,
 * Tile, Range, Transpose, Concat, Split (attribute/input/equal), Slice
 * (attributes before opset 10, negative steps, clamping), Gather,
 * GatherElements, Pad modes, Cast, Constant and ConstantOfShape.
 */
#include "test_ops_util.h"

TEST(ops_reshape_zero_minus_one_allowzero)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(2, 3, 4), 1), *s = T_I64(DIMS(3), 0, -1, 2), *in[2] = {x, s}, *y;
    ASSERT_OK_ERR(op_run("Reshape", 14, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 6, 2);
    ASSERT_MEM_EQ(y->data, x->data, x->nbytes);
    ib_tensor_free(y);
    /* allowzero=1: 0 is a real zero, so [0, -1] cannot hold 24 elements */
    ib_attr az = A_INT("allowzero", 1);
    ib_tensor *s2 = T_I64(DIMS(2), 0, -1), *in2[2] = {x, s2};
    ASSERT_STATUS(op_run("Reshape", 14, &az, 1, in2, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    /* element counts must agree */
    ib_tensor *s3 = T_I64(DIMS(2), 5, 5), *in3[2] = {x, s3};
    ASSERT_STATUS(op_run("Reshape", 14, NULL, 0, in3, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "24 elements");
    /* shape not constant: data-dependent, rank from the shape input */
    ib_tensor_desc xd = x->desc, sd = s->desc, od;
    ib_tensor_desc *ins[2] = {&xd, &sd};
    const ib_tensor *cin[2] = {NULL, NULL};
    bool dd = false;
    ASSERT_OK_ERR(op_infer("", "Reshape", 14, NULL, 0, ins, cin, 2, &od, 1, &dd, &err), &err);
    ASSERT_TRUE(dd);
    ASSERT_INT_EQ(od.ndim, 3);
    /* a dynamic batch flows through 0 */
    xd.dims[0] = IB_DIM_DYNAMIC;
    const ib_tensor *cin2[2] = {NULL, s};
    ASSERT_OK_ERR(op_infer("", "Reshape", 14, NULL, 0, ins, cin2, 2, &od, 1, &dd, &err), &err);
    ASSERT_INT_EQ(od.dims[0], IB_DIM_DYNAMIC);
    ASSERT_INT_EQ(od.dims[1], IB_DIM_DYNAMIC); /* -1 with an unknown total */
    ASSERT_INT_EQ(od.dims[2], 2);
    free_all((ib_tensor *[]){x, s, s2, s3}, 4);
}

TEST(ops_flatten_squeeze_unsqueeze_forms)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(2, 1, 3, 1), 2), *y;
    ib_attr a0 = A_INT("axis", 0), an = A_INT("axis", -1);
    ASSERT_OK_ERR(op_run("Flatten", 13, &a0, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 6);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Flatten", 13, &an, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 6, 1);
    ib_tensor_free(y);
    /* Squeeze: all size-1 dims, attribute (opset 11), input (opset 13) */
    ASSERT_OK_ERR(op_run("Squeeze", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3);
    ib_tensor_free(y);
    ib_attr ax = A_INTS("axes", -1);
    ASSERT_OK_ERR(op_run("Squeeze", 11, &ax, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 1, 3);
    ib_tensor_free(y);
    ib_tensor *axes = T_I64(DIMS(1), 1), *in[2] = {x, axes};
    ASSERT_OK_ERR(op_run("Squeeze", 13, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3, 1);
    ib_tensor_free(y);
    ib_attr bad = A_INTS("axes", 0);
    ASSERT_STATUS(op_run("Squeeze", 11, &bad, 1, &x, 1, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "size 2");
    /* Unsqueeze: axes refer to the output rank; unsorted and negative */
    ib_attr ua = A_INTS("axes", 4, 0);
    ASSERT_OK_ERR(op_run("Unsqueeze", 11, &ua, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 2, 1, 3, 1, 1);
    ib_tensor_free(y);
    ib_tensor *uax = T_I64(DIMS(2), -1, 1), *in2[2] = {x, uax};
    ASSERT_OK_ERR(op_run("Unsqueeze", 13, NULL, 0, in2, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 1, 1, 3, 1, 1);
    ib_tensor_free(y);
    ASSERT_STATUS(op_run("Unsqueeze", 13, NULL, 0, &x, 1, &y, 1, &err), IB_EFORMAT);
    free_all((ib_tensor *[]){x, axes, uax}, 3);
}

TEST(ops_shape_size_expand_tile_range)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(2, 3, 4), 3), *y;
    ASSERT_OK_ERR(op_run("Shape", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_I64S(y, 2, 3, 4);
    ib_tensor_free(y);
    ib_attr se[] = {A_INT("start", -2), A_INT("end", 10)};
    ASSERT_OK_ERR(op_run("Shape", 15, se, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_I64S(y, 3, 4);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("Size", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(y->desc.ndim, 0);
    ASSERT_I64S(y, 24);
    ib_tensor_free(y);
    ib_tensor *v = T_F32(DIMS(3, 1), 1, 2, 3), *s = T_I64(DIMS(3), 2, 1, 2), *in[2] = {v, s};
    ASSERT_OK_ERR(op_run("Expand", 13, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3, 2);
    ASSERT_F32S(y, 0, 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3);
    ib_tensor_free(y);
    ib_tensor *m = T_F32(DIMS(2, 2), 1, 2, 3, 4), *r = T_I64(DIMS(2), 1, 2), *tin[2] = {m, r};
    ASSERT_OK_ERR(op_run("Tile", 13, NULL, 0, tin, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 4);
    ASSERT_F32S(y, 0, 1, 2, 1, 2, 3, 4, 3, 4);
    ib_tensor_free(y);
    ib_tensor *st = T_I32(SCALAR, 10), *li = T_I32(SCALAR, 1), *de = T_I32(SCALAR, -3);
    ib_tensor *rin[3] = {st, li, de};
    ASSERT_OK_ERR(op_run("Range", 11, NULL, 0, rin, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 3);
    const int32_t *ri = y->data;
    ASSERT_INT_EQ(ri[0], 10);
    ASSERT_INT_EQ(ri[1], 7);
    ASSERT_INT_EQ(ri[2], 4);
    ib_tensor_free(y);
    ((int32_t *)de->data)[0] = 0;
    ASSERT_STATUS(op_run("Range", 11, NULL, 0, rin, 3, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "delta");
    free_all((ib_tensor *[]){x, v, s, m, r, st, li, de}, 8);
}

TEST(ops_transpose_concat_split)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(2, 3), 1, 2, 3, 4, 5, 6), *y, *ys[3];
    ASSERT_OK_ERR(op_run("Transpose", 13, NULL, 0, &x, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 3, 2);
    ASSERT_F32S(y, 0, 1, 4, 2, 5, 3, 6);
    ib_tensor_free(y);
    ib_tensor *t3 = t_rand(DIMS(2, 3, 4), 4);
    ib_attr p = A_INTS("perm", 1, 2, 0);
    ASSERT_OK_ERR(op_run("Transpose", 13, &p, 1, &t3, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 3, 4, 2);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++)
                ASSERT_NEAR(F32(y)[(b * 4 + c) * 2 + a], F32(t3)[(a * 3 + b) * 4 + c], 0);
    ib_tensor_free(y);
    ib_attr bp = A_INTS("perm", 0, 0, 1);
    ASSERT_STATUS(op_run("Transpose", 13, &bp, 1, &t3, 1, &y, 1, &err), IB_EFORMAT);
    ib_tensor *z = T_F32(DIMS(2, 1), 7, 8), *cin[2] = {x, z};
    ib_attr ax = A_INT("axis", -1);
    ASSERT_OK_ERR(op_run("Concat", 13, &ax, 1, cin, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 4);
    ASSERT_F32S(y, 0, 1, 2, 3, 7, 4, 5, 6, 8);
    ib_tensor_free(y);
    ib_attr a0 = A_INT("axis", 0);
    ASSERT_STATUS(op_run("Concat", 13, &a0, 1, cin, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STATUS(op_run("Concat", 13, NULL, 0, cin, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "axis");
    /* Split: equal parts, `split` attribute (opset 11), `split` input (opset 13) */
    ib_attr a1 = A_INT("axis", 1);
    ASSERT_OK_ERR(op_run("Split", 13, &a1, 1, &x, 1, ys, 3, &err), &err);
    ASSERT_F32S(ys[0], 0, 1, 4);
    ASSERT_F32S(ys[2], 0, 3, 6);
    free_all(ys, 3);
    ib_attr sa[] = {a1, A_INTS("split", 1, 2)};
    ASSERT_OK_ERR(op_run("Split", 11, sa, 2, &x, 1, ys, 2, &err), &err);
    ASSERT_DIMS(ys[1], 2, 2);
    ASSERT_F32S(ys[1], 0, 2, 3, 5, 6);
    free_all(ys, 2);
    ib_tensor *sp = T_I64(DIMS(2), 2, 1), *sin[2] = {x, sp};
    ASSERT_OK_ERR(op_run("Split", 13, &a1, 1, sin, 2, ys, 2, &err), &err);
    ASSERT_F32S(ys[0], 0, 1, 2, 4, 5);
    ASSERT_F32S(ys[1], 0, 3, 6);
    free_all(ys, 2);
    ASSERT_STATUS(op_run("Split", 13, &a1, 1, &x, 1, ys, 2, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "equal parts");
    free_all((ib_tensor *[]){x, t3, z, sp}, 4);
}

TEST(ops_slice_steps_clamping_and_old_attributes)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(2, 5), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), *y;
    ib_tensor *st = T_I64(DIMS(1), -1), *en = T_I64(DIMS(1), INT64_MIN), *ax = T_I64(DIMS(1), 1),
              *sp = T_I64(DIMS(1), -2);
    ib_tensor *in[5] = {x, st, en, ax, sp};
    ASSERT_OK_ERR(op_run("Slice", 13, NULL, 0, in, 5, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3);
    ASSERT_F32S(y, 0, 4, 2, 0, 9, 7, 5);
    ib_tensor_free(y);
    /* out-of-range starts/ends clamp; default axes are 0..n-1 */
    ib_tensor *st2 = T_I64(DIMS(2), 1, -100), *en2 = T_I64(DIMS(2), 100, 2);
    ib_tensor *in2[3] = {x, st2, en2};
    ASSERT_OK_ERR(op_run("Slice", 13, NULL, 0, in2, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 2);
    ASSERT_F32S(y, 0, 5, 6);
    ib_tensor_free(y);
    /* an empty result is fine */
    ((int64_t *)en2->data)[1] = -100;
    ASSERT_OK_ERR(op_run("Slice", 13, NULL, 0, in2, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 0);
    ib_tensor_free(y);
    /* opset 9: attributes */
    ib_attr at[] = {A_INTS("starts", 1), A_INTS("ends", 3), A_INTS("axes", 1)};
    ASSERT_OK_ERR(op_run("Slice", 9, at, 3, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1, 2, 6, 7);
    ib_tensor_free(y);
    ((int64_t *)sp->data)[0] = 0;
    ASSERT_STATUS(op_run("Slice", 13, NULL, 0, in, 5, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "steps");
    free_all((ib_tensor *[]){x, st, en, ax, sp, st2, en2}, 7);
}

TEST(ops_gather_and_gather_elements)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(3, 2), 1, 2, 3, 4, 5, 6), *idx = T_I64(DIMS(2, 2), 0, -1, 2, 1);
    ib_tensor *in[2] = {x, idx}, *y;
    ASSERT_OK_ERR(op_run("Gather", 13, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 2, 2);
    ASSERT_F32S(y, 0, 1, 2, 5, 6, 5, 6, 3, 4);
    ib_tensor_free(y);
    ib_attr a1 = A_INT("axis", 1);
    ib_tensor *i1 = T_I32(SCALAR, 1), *in1[2] = {x, i1};
    ASSERT_OK_ERR(op_run("Gather", 13, &a1, 1, in1, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 3);
    ASSERT_F32S(y, 0, 2, 4, 6);
    ib_tensor_free(y);
    ((int64_t *)idx->data)[3] = 3;
    ASSERT_STATUS(op_run("Gather", 13, NULL, 0, in, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "index 3 is out of range");
    ib_tensor *ge = T_I64(DIMS(2, 2), 1, 0, -1, 0), *gin[2] = {x, ge};
    ASSERT_OK_ERR(op_run("GatherElements", 13, &a1, 1, gin, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 2, 1, 4, 3);
    ib_tensor_free(y);
    free_all((ib_tensor *[]){x, idx, i1, ge}, 4);
}

TEST(ops_pad_modes_and_forms)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(1, 3), 1, 2, 3), *y;
    ib_tensor *p = T_I64(DIMS(4), 0, 2, 0, 1), *cv = T_F32(SCALAR, 9), *in[3] = {x, p, cv};
    ASSERT_OK_ERR(op_run("Pad", 13, NULL, 0, in, 3, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 9, 9, 1, 2, 3, 9);
    ib_tensor_free(y);
    ib_attr refl = A_STR("mode", "reflect");
    ASSERT_OK_ERR(op_run("Pad", 13, &refl, 1, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 3, 2, 1, 2, 3, 2);
    ib_tensor_free(y);
    ib_attr edge = A_STR("mode", "edge");
    ASSERT_OK_ERR(op_run("Pad", 13, &edge, 1, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 1, 1, 1, 2, 3, 3);
    ib_tensor_free(y);
    /* opset 2: pads and value attributes; negative pads crop */
    ib_attr old[] = {A_INTS("pads", 0, -1, 0, 1), A_FLOAT("value", -1.0f)};
    ASSERT_OK_ERR(op_run("Pad", 2, old, 2, &x, 1, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 2, 3, -1);
    ib_tensor_free(y);
    ib_attr wrap = A_STR("mode", "wrap");
    ASSERT_STATUS(op_run("Pad", 13, &wrap, 1, in, 2, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "mode='wrap'");
    free_all(in, 3);
}

TEST(ops_cast_constant_constantofshape)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(5), -1.7f, 0.0f, 2.9f, 65504.0f, 1e-8f), *y;
    ib_attr to = A_INT("to", IB_DTYPE_INT32);
    ASSERT_OK_ERR(op_run("Cast", 13, &to, 1, &x, 1, &y, 1, &err), &err);
    const int32_t *yi = y->data;
    ASSERT_INT_EQ(yi[0], -1); /* truncation toward zero */
    ASSERT_INT_EQ(yi[2], 2);
    ib_tensor_free(y);
    ib_attr h = A_INT("to", IB_DTYPE_FLOAT16);
    ASSERT_OK_ERR(op_run("Cast", 13, &h, 1, &x, 1, &y, 1, &err), &err);
    const uint16_t *hv = y->data;
    ASSERT_INT_EQ(hv[3], 0x7bff); /* 65504 = largest half */
    ASSERT_NEAR(ib_f16_to_f32(hv[2]), 2.900390625, 0);
    ib_tensor *back;
    ib_attr f = A_INT("to", IB_DTYPE_FLOAT32);
    ASSERT_OK_ERR(op_run("Cast", 13, &f, 1, &y, 1, &back, 1, &err), &err);
    ASSERT_NEAR(F32(back)[0], -1.7001953125, 0);
    free_all((ib_tensor *[]){y, back}, 2);
    ib_attr bf = A_INT("to", IB_DTYPE_BFLOAT16);
    ASSERT_OK_ERR(op_run("Cast", 13, &bf, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_NEAR(ib_bf16_to_f32(((const uint16_t *)y->data)[2]), 2.90625, 0);
    ib_tensor_free(y);
    ib_attr b = A_INT("to", IB_DTYPE_BOOL);
    ASSERT_OK_ERR(op_run("Cast", 13, &b, 1, &x, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(((const uint8_t *)y->data)[1], 0);
    ASSERT_INT_EQ(((const uint8_t *)y->data)[4], 1);
    ib_tensor_free(y);
    ib_attr s = A_INT("to", IB_DTYPE_STRING);
    ASSERT_STATUS(op_run("Cast", 13, &s, 1, &x, 1, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "string");
    /* Constant: value_ints; ConstantOfShape with an int64 value */
    ib_attr ci = A_INTS("value_ints", 4, 5, 6);
    ASSERT_OK_ERR(op_run("Constant", 13, &ci, 1, NULL, 0, &y, 1, &err), &err);
    ASSERT_I64S(y, 4, 5, 6);
    ib_tensor_free(y);
    ASSERT_STATUS(op_run("Constant", 13, NULL, 0, NULL, 0, &y, 1, &err), IB_EFORMAT);
    ib_tensor *val = T_I64(DIMS(1), 7), *shape = T_I64(DIMS(2), 2, 3);
    ib_attr vt = {.name = "value", .type = IB_ATTR_TENSOR, .t = val};
    ASSERT_OK_ERR(op_run("ConstantOfShape", 13, &vt, 1, &shape, 1, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3);
    ASSERT_I64S(y, 7, 7, 7, 7, 7, 7);
    ib_tensor_free(y);
    ASSERT_OK_ERR(op_run("ConstantOfShape", 13, NULL, 0, &shape, 1, &y, 1, &err), &err);
    ASSERT_INT_EQ(y->desc.dtype, IB_DTYPE_FLOAT32);
    ASSERT_F32S(y, 0, 0, 0, 0, 0, 0, 0);
    ib_tensor_free(y);
    free_all((ib_tensor *[]){x, val, shape}, 3);
}
