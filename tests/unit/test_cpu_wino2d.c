/*
 * test_cpu_wino2d.c - 2-D float32 convolutions on the cpu backend (dnnl_conv.c): on an
 * AVX-512 machine a 3x3 stride-1 convolution runs on oneDNN's Winograd kernel (the profile
 * says "onednn-wino") and the 1x1 and stride-2 ones beside it on the direct kernels, all
 * within float32 rounding of the reference backend; ib_session_options.direct_conv keeps
 * every convolution direct, with the same values. Elsewhere (no AVX-512) only the values
 * are checked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "onnx/build.h"
#include "test.h"

enum { N = 2, C = 64, H = 28 };

/* x -> Conv 3x3 p1 (bias) -> Relu -> Conv 1x1 64->128 -> Conv 3x3 s2 p1 128->128 -> y */
static ib_model *model(void)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(7, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N,64,28,28");
    ib_value_id w1 = ib_build_weight(b, "w1", IB_DTYPE_FLOAT32, "64,64,3,3",
                                     ib_fill_uniform(-0.06, 0.06));
    ib_value_id b1 = ib_build_weight(b, "b1", IB_DTYPE_FLOAT32, "64", ib_fill_uniform(-0.1, 0.1));
    ib_value_id w2 = ib_build_weight(b, "w2", IB_DTYPE_FLOAT32, "128,64,1,1",
                                     ib_fill_uniform(-0.1, 0.1));
    ib_value_id w3 = ib_build_weight(b, "w3", IB_DTYPE_FLOAT32, "128,128,3,3",
                                     ib_fill_uniform(-0.03, 0.03));
    ib_value_id y = IB_BUILD_OP(b, "Conv", "kernel_shape=[3,3] pads=[1,1,1,1]", x, w1, b1);
    y = IB_BUILD_OP(b, "Relu", "", y);
    y = IB_BUILD_OP(b, "Conv", "kernel_shape=[1,1]", y, w2);
    y = IB_BUILD_OP(b, "Conv", "kernel_shape=[3,3] pads=[1,1,1,1] strides=[2,2]", y, w3);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, NULL);
    void *bytes;
    size_t len;
    ib_err err;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &bytes, &len, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_memory(bytes, len, NULL, &m, &err), &err);
    ib_free(bytes);
    return m;
}

static ib_session *session(const ib_model *m, const char *backend, bool direct)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = backend;
    so.threads = 2;
    so.first_cpu = -1;
    so.max_batch = N;
    so.direct_conv = direct;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    return s;
}

static float g_x[N * C * H * H];
enum { OUT = N * 128 * 14 * 14 };

static void run(ib_session *s, float *y)
{
    ib_tensor_view in = {.name = "x", .desc = {IB_DTYPE_FLOAT32, 4, {N, C, H, H}}, .data = g_x};
    ib_tensor_view out = {.name = "y", .data = y, .capacity = OUT * sizeof(float)};
    ib_err err;
    ASSERT_OK_ERR(ib_session_run(s, &in, 1, &out, 1, &err), &err);
    ASSERT_UINT_EQ(ib_tensor_desc_numel(&out.desc), OUT);
}

static double nmse(const float *a, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)ref[i];
        num += d * d;
        den += (double)ref[i] * (double)ref[i];
    }
    return den > 0 ? num / den : num;
}

/* How many profiled steps ran as kind `kind`, and whether the first Conv is one of them. */
static size_t count_kind(ib_session *s, float *y, const char *kind, bool *first_conv)
{
    ASSERT_OK(ib_session_set_profiling(s, true));
    run(s, y);
    ib_profile p;
    ib_err err;
    ASSERT_OK_ERR(ib_session_profile(s, &p, &err), &err);
    size_t n = 0;
    *first_conv = false;
    for (size_t i = 0; i < p.n; i++)
        if (p.entries[i].kind && !strcmp(p.entries[i].kind, kind)) {
            n++;
            *first_conv |= p.entries[i].node && strstr(p.entries[i].node, "Conv_0") != NULL;
        }
    ib_profile_free(&p);
    ASSERT_OK(ib_session_set_profiling(s, false));
    return n;
}

TEST(cpu_wino2d_3x3_convs_take_winograd_and_match)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(g_x); i++)
        g_x[i] = (float)sin(0.013 * (double)i) + 0.25f * (float)cos(0.7 * (double)i);
    ib_model *m = model();
    ib_session *ref = session(m, "reference", false), *def = session(m, "cpu", false),
               *dir = session(m, "cpu", true);
    float *yr = malloc(OUT * sizeof *yr), *yd = malloc(OUT * sizeof *yd),
          *yx = malloc(OUT * sizeof *yx);
    ASSERT_TRUE(yr && yd && yx);
    run(ref, yr);
    run(def, yd);
    run(dir, yx);
    double e_def = nmse(yd, yr, OUT), e_dir = nmse(yx, yr, OUT);
    printf("# nmse vs reference: default %.3g, direct_conv %.3g\n", e_def, e_dir);
    ASSERT_TRUE(e_def < 1e-9);
    ASSERT_TRUE(e_dir < 1e-9);
    bool first = false;
    size_t wino = count_kind(def, yd, "onednn-wino", &first);
    if (cpu_wino_avx512()) { /* the 3x3 stride-1 conv only: not the 1x1, not the stride-2 */
        ASSERT_UINT_EQ(wino, 1);
        ASSERT_TRUE(first);
    } else {
        ASSERT_UINT_EQ(wino, 0);
    }
    ASSERT_UINT_EQ(count_kind(dir, yx, "onednn-wino", &first), 0);
    ASSERT_TRUE(nmse(yd, yr, OUT) < 1e-9); /* the profiled runs gave the same values */
    free(yr);
    free(yd);
    free(yx);
    ib_session_destroy(ref);
    ib_session_destroy(def);
    ib_session_destroy(dir);
    ib_model_destroy(m);
}
