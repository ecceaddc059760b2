/*
 * test_ops_conv.c - Conv, ConvTranspose, MatMul and Gemm reference kernels
 * against hand-computed cases and against naive direct loops written here
 * (the kernels use im2col + blocked GEMM, so the two share no code):
 * padding, strides, auto_pad SAME_UPPER/SAME_LOWER/VALID, dilations,
 * groups, 1-D and 3-D, output_padding/output_shape, batch broadcasting,
 * transposes, and shape errors naming the node.
 */
#include "test_ops_util.h"

/* Naive N-d convolution: x [N, C, s...], w [M, C/g, k...], y [N, M, o...]. */
static void naive_conv(const ib_tensor *x, const ib_tensor *w, const float *b, int64_t group,
                       const int64_t *stride, const int64_t *dil, const int64_t *pad_b,
                       ib_tensor *y)
{
    int32_t ns = x->desc.ndim - 2;
    int64_t N = x->desc.dims[0], C = x->desc.dims[1], M = w->desc.dims[0];
    int64_t Cg = C / group, Mg = M / group;
    int64_t osz = 1, ksz = 1, isz = 1;
    for (int32_t d = 0; d < ns; d++) {
        osz *= y->desc.dims[d + 2];
        ksz *= w->desc.dims[d + 2];
        isz *= x->desc.dims[d + 2];
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t o = 0; o < osz; o++) {
                int64_t oi[6], rem = o;
                for (int32_t d = ns - 1; d >= 0; d--) {
                    oi[d] = rem % y->desc.dims[d + 2];
                    rem /= y->desc.dims[d + 2];
                }
                double acc = b ? (double)b[m] : 0;
                int64_t gr = m / Mg;
                for (int64_t c = 0; c < Cg; c++)
                    for (int64_t k = 0; k < ksz; k++) {
                        int64_t ki[6], r2 = k, off = 0;
                        bool in = true;
                        for (int32_t d = ns - 1; d >= 0; d--) {
                            ki[d] = r2 % w->desc.dims[d + 2];
                            r2 /= w->desc.dims[d + 2];
                        }
                        for (int32_t d = 0; d < ns; d++) {
                            int64_t p = oi[d] * stride[d] - pad_b[d] + ki[d] * dil[d];
                            if (p < 0 || p >= x->desc.dims[d + 2]) in = false;
                            off = off * x->desc.dims[d + 2] + p;
                        }
                        if (in)
                            acc += (double)F32(x)[(n * C + gr * Cg + c) * isz + off] *
                                   (double)F32(w)[(m * Cg + c) * ksz + k];
                    }
                ((float *)y->data)[(n * M + m) * osz + o] = (float)acc;
            }
}

static void assert_close(const ib_tensor *a, const ib_tensor *b, double tol)
{
    ASSERT_TRUE(ib_tensor_desc_equal(&a->desc, &b->desc));
    int64_t n = ib_tensor_desc_numel(&a->desc);
    for (int64_t i = 0; i < n; i++)
        ASSERT_NEAR(F32(a)[i], F32(b)[i], tol);
}

TEST(ops_conv_hand_computed)
{
    ib_err err;
    /* 3x3 input 1..9, 2x2 kernel of ones */
    ib_tensor *x = T_F32(DIMS(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9);
    ib_tensor *w = T_F32(DIMS(1, 1, 2, 2), 1, 1, 1, 1), *b = T_F32(DIMS(1), 0.5f);
    ib_tensor *in[3] = {x, w, b}, *y;
    ASSERT_OK_ERR(op_run("Conv", 11, NULL, 0, in, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 2, 2);
    ASSERT_F32S(y, 0, 12.5f, 16.5f, 24.5f, 28.5f);
    ib_tensor_free(y);
    /* pads 1 and stride 2: windows at -1, 1 */
    ib_attr at[] = {A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", 2, 2)};
    ASSERT_OK_ERR(op_run("Conv", 11, at, 2, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 2, 2);
    ASSERT_F32S(y, 0, 1, 5, 11, 28);
    ib_tensor_free(y);
    free_all(in, 3);
}

TEST(ops_conv_auto_pad_same_upper_lower_valid)
{
    ib_err err;
    ib_tensor *x = T_F32(DIMS(1, 1, 1, 5), 1, 2, 3, 4, 5);
    ib_tensor *w = T_F32(DIMS(1, 1, 1, 2), 1, 10), *in[2] = {x, w}, *y;
    /* in 5, k 2, s 2: out 3, total pad 1 -> UPPER pads the end, LOWER the start */
    ib_attr up[] = {A_STR("auto_pad", "SAME_UPPER"), A_INTS("strides", 1, 2)};
    ASSERT_OK_ERR(op_run("Conv", 11, up, 2, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 1, 3);
    ASSERT_F32S(y, 0, 21, 43, 5); /* [1,2] [3,4] [5,pad] */
    ib_tensor_free(y);
    ib_attr lo[] = {A_STR("auto_pad", "SAME_LOWER"), A_INTS("strides", 1, 2)};
    ASSERT_OK_ERR(op_run("Conv", 11, lo, 2, in, 2, &y, 1, &err), &err);
    ASSERT_F32S(y, 0, 10, 32, 54); /* [pad,1] [2,3] [4,5] */
    ib_tensor_free(y);
    ib_attr va[] = {A_STR("auto_pad", "VALID"), A_INTS("strides", 1, 2)};
    ASSERT_OK_ERR(op_run("Conv", 11, va, 2, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 1, 1, 2);
    ASSERT_F32S(y, 0, 21, 43);
    ib_tensor_free(y);
    ib_attr bad = A_STR("auto_pad", "SAME");
    ASSERT_STATUS(op_run("Conv", 11, &bad, 1, in, 2, &y, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "auto_pad='SAME'");
    free_all(in, 2);
}

TEST(ops_conv_grouped_dilated_strided_vs_naive)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(2, 6, 9, 8), 1), *w = t_rand(DIMS(4, 3, 3, 2), 2);
    ib_tensor *b = t_rand(DIMS(4), 3), *in[3] = {x, w, b}, *y;
    ib_attr at[] = {A_INT("group", 2), A_INTS("dilations", 2, 1), A_INTS("strides", 1, 2),
                    A_INTS("pads", 1, 0, 2, 1)};
    ASSERT_OK_ERR(op_run("Conv", 11, at, 4, in, 3, &y, 1, &err), &err);
    /* H: (9 + 3 - 5) / 1 + 1 = 8; W: (8 + 1 - 2) / 2 + 1 = 4 */
    ASSERT_DIMS(y, 2, 4, 8, 4);
    ib_tensor *ref = t_make(IB_DTYPE_FLOAT32, DIMS(2, 4, 8, 4), NULL);
    naive_conv(x, w, F32(b), 2, (const int64_t[]){1, 2}, (const int64_t[]){2, 1},
               (const int64_t[]){1, 0}, ref);
    assert_close(y, ref, 1e-5);
    ib_tensor_free(ref);
    ib_tensor_free(y);
    /* depthwise (group = channels), as in MobileNet-style blocks */
    ib_tensor *wd = t_rand(DIMS(6, 1, 3, 3), 4), *in2[2] = {x, wd};
    ib_attr dw[] = {A_INT("group", 6), A_INTS("pads", 1, 1, 1, 1)};
    ASSERT_OK_ERR(op_run("Conv", 11, dw, 2, in2, 2, &y, 1, &err), &err);
    ref = t_make(IB_DTYPE_FLOAT32, DIMS(2, 6, 9, 8), NULL);
    naive_conv(x, wd, NULL, 6, (const int64_t[]){1, 1}, (const int64_t[]){1, 1},
               (const int64_t[]){1, 1}, ref);
    assert_close(y, ref, 1e-5);
    ib_tensor_free(ref);
    ib_tensor_free(y);
    ib_tensor_free(wd);
    free_all(in, 3);
}

TEST(ops_conv_1d_3d_and_pointwise_vs_naive)
{
    ib_err err;
    ib_tensor *x1 = t_rand(DIMS(1, 3, 17), 5), *w1 = t_rand(DIMS(5, 3, 4), 6), *in1[2] = {x1, w1},
              *y;
    ib_attr s3 = A_INTS("strides", 3);
    ASSERT_OK_ERR(op_run("Conv", 11, &s3, 1, in1, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 5, 5);
    ib_tensor *ref = t_make(IB_DTYPE_FLOAT32, DIMS(1, 5, 5), NULL);
    naive_conv(x1, w1, NULL, 1, (const int64_t[]){3}, (const int64_t[]){1}, (const int64_t[]){0},
               ref);
    assert_close(y, ref, 1e-5);
    free_all((ib_tensor *[]){y, ref, x1, w1}, 4);

    ib_tensor *x3 = t_rand(DIMS(1, 2, 5, 6, 4), 7), *w3 = t_rand(DIMS(3, 2, 3, 3, 3), 8);
    ib_tensor *in3[2] = {x3, w3};
    ib_attr p3 = A_INTS("pads", 1, 1, 1, 1, 1, 1);
    ASSERT_OK_ERR(op_run("Conv", 11, &p3, 1, in3, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 3, 5, 6, 4);
    ref = t_make(IB_DTYPE_FLOAT32, DIMS(1, 3, 5, 6, 4), NULL);
    naive_conv(x3, w3, NULL, 1, (const int64_t[]){1, 1, 1}, (const int64_t[]){1, 1, 1},
               (const int64_t[]){1, 1, 1}, ref);
    assert_close(y, ref, 1e-5);
    free_all((ib_tensor *[]){y, ref, x3, w3}, 4);

    /* 1x1 stride 1 takes the no-im2col path */
    ib_tensor *xp = t_rand(DIMS(2, 8, 5, 5), 9), *wp = t_rand(DIMS(4, 8, 1, 1), 10);
    ib_tensor *inp[2] = {xp, wp};
    ASSERT_OK_ERR(op_run("Conv", 11, NULL, 0, inp, 2, &y, 1, &err), &err);
    ref = t_make(IB_DTYPE_FLOAT32, DIMS(2, 4, 5, 5), NULL);
    naive_conv(xp, wp, NULL, 1, (const int64_t[]){1, 1}, (const int64_t[]){1, 1},
               (const int64_t[]){0, 0}, ref);
    assert_close(y, ref, 1e-5);
    free_all((ib_tensor *[]){y, ref, xp, wp}, 4);
}

TEST(ops_conv_bad_shapes_name_the_node)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(1, 3, 5, 5), 1), *w = t_rand(DIMS(2, 4, 3, 3), 2), *y;
    ib_tensor *in[2] = {x, w};
    ASSERT_STATUS(op_run("Conv", 11, NULL, 0, in, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "the_node");
    ASSERT_STR_CONTAINS(err.msg, "channels");
    ib_tensor_free(w);
    /* a kernel larger than the padded input */
    w = t_rand(DIMS(2, 3, 7, 7), 3);
    in[1] = w;
    ASSERT_STATUS(op_run("Conv", 11, NULL, 0, in, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "larger than the padded input");
    /* wrong number of pads */
    ib_attr p = A_INTS("pads", 1, 1);
    ASSERT_STATUS(op_run("Conv", 11, &p, 1, in, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "pads");
    /* a missing required input */
    ASSERT_STATUS(op_run("Conv", 11, NULL, 0, in, 1, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "expects 2..3 inputs");
    free_all(in, 2);
}

/* Naive ConvTranspose: every input element scatters x * w into the output. */
static void naive_tconv(const ib_tensor *x, const ib_tensor *w, int64_t group, int64_t sh,
                        int64_t sw, int64_t ph, int64_t pw, ib_tensor *y)
{
    int64_t N = x->desc.dims[0], C = x->desc.dims[1], H = x->desc.dims[2], W = x->desc.dims[3];
    int64_t Mg = w->desc.dims[1], KH = w->desc.dims[2], KW = w->desc.dims[3];
    int64_t M = Mg * group, OH = y->desc.dims[2], OW = y->desc.dims[3], Cg = C / group;
    memset(y->data, 0, y->nbytes);
    float *o = y->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < H; i++)
                for (int64_t j = 0; j < W; j++)
                    for (int64_t m = 0; m < Mg; m++)
                        for (int64_t a = 0; a < KH; a++)
                            for (int64_t b = 0; b < KW; b++) {
                                int64_t oh = i * sh - ph + a, ow = j * sw - pw + b;
                                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                                int64_t om = (c / Cg) * Mg + m;
                                o[((n * M + om) * OH + oh) * OW + ow] +=
                                    F32(x)[((n * C + c) * H + i) * W + j] *
                                    F32(w)[((c * Mg + m) * KH + a) * KW + b];
                            }
}

TEST(ops_convtranspose_vs_naive)
{
    ib_err err;
    ib_tensor *x = t_rand(DIMS(1, 4, 3, 4), 11), *w = t_rand(DIMS(4, 3, 3, 2), 12);
    ib_tensor *in[2] = {x, w}, *y;
    ib_attr at[] = {A_INT("group", 2), A_INTS("strides", 2, 3), A_INTS("pads", 1, 0, 1, 0),
                    A_INTS("output_padding", 1, 0)};
    ASSERT_OK_ERR(op_run("ConvTranspose", 11, at, 4, in, 2, &y, 1, &err), &err);
    /* H: 2*2 + 1 + 3 - 2 = 6; W: 3*3 + 0 + 2 = 11 */
    ASSERT_DIMS(y, 1, 6, 6, 11);
    ib_tensor *ref = t_make(IB_DTYPE_FLOAT32, DIMS(1, 6, 6, 11), NULL);
    naive_tconv(x, w, 2, 2, 3, 1, 0, ref);
    assert_close(y, ref, 1e-5);
    free_all((ib_tensor *[]){y, ref}, 2);
    /* output_shape: pads derived; larger than reachable leaves zeros at the end */
    ib_attr os[] = {A_INT("group", 2), A_INTS("strides", 2, 3), A_INTS("output_shape", 8, 12)};
    ASSERT_OK_ERR(op_run("ConvTranspose", 11, os, 3, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 1, 6, 8, 12);
    ref = t_make(IB_DTYPE_FLOAT32, DIMS(1, 6, 8, 12), NULL);
    naive_tconv(x, w, 2, 2, 3, 0, 0, ref);
    assert_close(y, ref, 1e-5);
    for (int64_t c = 0; c < 6; c++)
        for (int64_t j = 0; j < 12; j++)
            ASSERT_NEAR(F32(y)[(c * 8 + 7) * 12 + j], 0, 0); /* row 7 is unreachable */
    free_all((ib_tensor *[]){y, ref}, 2);
    free_all(in, 2);
}

TEST(ops_matmul_batch_broadcast_and_1d)
{
    ib_err err;
    ib_tensor *a = t_rand(DIMS(2, 1, 3, 4), 21), *b = t_rand(DIMS(3, 4, 5), 22), *y;
    ib_tensor *in[2] = {a, b};
    ASSERT_OK_ERR(op_run("MatMul", 13, NULL, 0, in, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 3, 3, 5);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int m = 0; m < 3; m++)
                for (int n = 0; n < 5; n++) {
                    double acc = 0;
                    for (int k = 0; k < 4; k++)
                        acc += (double)F32(a)[(i * 3 + m) * 4 + k] *
                               (double)F32(b)[(j * 4 + k) * 5 + n];
                    ASSERT_NEAR(F32(y)[((i * 3 + j) * 3 + m) * 5 + n], acc, 1e-6);
                }
    ib_tensor_free(y);
    /* 1-D x 2-D and 2-D x 1-D drop the promoted dim */
    ib_tensor *v = T_F32(DIMS(4), 1, 2, 3, 4), *m = t_rand(DIMS(4, 2), 23);
    ib_tensor *in2[2] = {v, m};
    ASSERT_OK_ERR(op_run("MatMul", 13, NULL, 0, in2, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2);
    for (int n = 0; n < 2; n++) {
        double acc = 0;
        for (int k = 0; k < 4; k++)
            acc += (double)F32(v)[k] * (double)F32(m)[k * 2 + n];
        ASSERT_NEAR(F32(y)[n], acc, 1e-6);
    }
    ib_tensor_free(y);
    ib_tensor *in3[2] = {a, v};
    ASSERT_OK_ERR(op_run("MatMul", 13, NULL, 0, in3, 2, &y, 1, &err), &err);
    ASSERT_DIMS(y, 2, 1, 3);
    ib_tensor_free(y);
    /* inner dims must agree */
    ib_tensor *v3 = T_F32(DIMS(3), 1, 2, 3), *in4[2] = {a, v3};
    ASSERT_STATUS(op_run("MatMul", 13, NULL, 0, in4, 2, &y, 1, &err), IB_EFORMAT);
    ib_tensor_free(v3);
    ib_tensor *in5[2] = {m, a};
    ASSERT_STATUS(op_run("MatMul", 13, NULL, 0, in5, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "inner dimensions");
    free_all((ib_tensor *[]){a, b, v, m}, 4);
}

TEST(ops_matmul_large_k_accumulates_in_double)
{
    /* 1 + 4096 * 1e-4 summed in float drifts; double accumulation does not */
    ib_err err;
    ib_tensor *a = t_make(IB_DTYPE_FLOAT32, DIMS(1, 4097), NULL);
    ib_tensor *b = t_make(IB_DTYPE_FLOAT32, DIMS(4097, 1), NULL), *in[2] = {a, b}, *y;
    float *pa = a->data, *pb = b->data;
    pa[0] = 1.0f;
    pb[0] = 1.0f;
    for (int i = 1; i < 4097; i++) {
        pa[i] = 1e-4f;
        pb[i] = 1.0f;
    }
    ASSERT_OK_ERR(op_run("MatMul", 13, NULL, 0, in, 2, &y, 1, &err), &err);
    double want = 1.0 + 4096.0 * (double)1e-4f;
    ASSERT_NEAR(F32(y)[0], want, 1e-6);
    free_all((ib_tensor *[]){a, b, y}, 3);
}

TEST(ops_gemm_transposes_alpha_beta_broadcast)
{
    ib_err err;
    ib_tensor *a = t_rand(DIMS(4, 3), 31), *b = t_rand(DIMS(5, 4), 32),
              *c = T_F32(DIMS(5), 1, 2, 3, 4, 5);
    ib_tensor *in[3] = {a, b, c}, *y;
    /* Y = 0.5 * A' B' + 2 * C, A' [3,4], B' [4,5] */
    ib_attr at[] = {A_INT("transA", 1), A_INT("transB", 1), A_FLOAT("alpha", 0.5f),
                    A_FLOAT("beta", 2.0f)};
    ASSERT_OK_ERR(op_run("Gemm", 13, at, 4, in, 3, &y, 1, &err), &err);
    ASSERT_DIMS(y, 3, 5);
    for (int m = 0; m < 3; m++)
        for (int n = 0; n < 5; n++) {
            double acc = 0;
            for (int k = 0; k < 4; k++)
                acc += (double)F32(a)[k * 3 + m] * (double)F32(b)[n * 4 + k];
            ASSERT_NEAR(F32(y)[m * 5 + n], 0.5 * acc + 2.0 * (double)F32(c)[n], 1e-6);
        }
    ib_tensor_free(y);
    /* no C (allowed from opset 11) */
    ASSERT_OK_ERR(op_run("Gemm", 13, at, 4, in, 2, &y, 1, &err), &err);
    ib_tensor_free(y);
    /* before opset 11 C is required */
    ASSERT_STATUS(op_run("Gemm", 9, at, 4, in, 2, &y, 1, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "opset 11");
    /* C that does not broadcast to [M, N] */
    ib_tensor *cbad = T_F32(DIMS(3, 2), 1, 2, 3, 4, 5, 6), *inb[3] = {a, b, cbad};
    ASSERT_STATUS(op_run("Gemm", 13, at, 4, inb, 3, &y, 1, &err), IB_EFORMAT);
    free_all((ib_tensor *[]){a, b, c, cbad}, 4);
}
