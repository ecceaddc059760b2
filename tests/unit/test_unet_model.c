/*
 * test_unet_model.c - the 3D U-Net builders (src/models/unet3d.c): op counts of the
 * 6-level nnU-Net topology, the parameter count against a hand count (31,195,904 for the
 * BraTS model: ~31 M as benchmarks.md §1.6 estimates), MACs per volume against the ~3.7 TFLOP
 * of the issue, and inference of the tiny model: CPU backend against the reference
 * interpreter, finite logits, a spatially varying output.
 */
#include <math.h>
#include <string.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/unet3d.h"
#include "onnx/build.h"
#include "test.h"
#include "test_op_hist.h"

static ib_model *build_load(const ib_unet3d_cfg *c, const char *path)
{
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_unet3d(c, 3, &b, &err), &err);
    ASSERT_OK_ERR(ib_build_write_file(b, path, NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file(path, NULL, &m, &err), &err);
    return m;
}

TEST(unet_model_topology_params_and_flops)
{
    ib_unet3d_cfg full, tiny, kits;
    ib_unet3d_cfg_brats(false, &full);
    ib_unet3d_cfg_brats(true, &tiny);
    ib_unet3d_cfg_kits(false, &kits);
    /* hand count per level l: encoder 27*cin*f + 27*f*f (+ bias + 2 norm params each conv),
     * decoder convT 8*f[l+1]*f + 27*2f*f + 27*f*f (+ 3f each conv), head 32*4 */
    ASSERT_INT_EQ(ib_unet3d_params(&full), 31195904);
    ASSERT_INT_EQ(ib_unet3d_params(&tiny), 1952576);
    ASSERT_INT_EQ(ib_unet3d_params(&kits), 31193280);
    /* 1.848 TMAC = 3.696 TFLOP per 224x224x160 volume (issue 11: ~3.7 TFLOP) */
    ASSERT_NEAR(ib_unet3d_macs(&full) / 1e12, 1.848225, 1e-6);
    ib_model *m = build_load(&tiny, "unet.onnx");
    const char *name;
    ib_tensor_desc d;
    ASSERT_OK(ib_model_input(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_UNET3D_INPUT);
    ASSERT_INT_EQ(d.ndim, 5);
    ASSERT_INT_EQ(d.dims[1], 4);
    ASSERT_INT_EQ(d.dims[2], 64);
    ASSERT_INT_EQ(d.dims[4], 32);
    ASSERT_OK(ib_model_output(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_UNET3D_OUTPUT);
    ASSERT_INT_EQ(d.dims[1], 4);
    ASSERT_INT_EQ(d.dims[3], 64);
    hist h = {0};
    ib_model_op_histogram(m, on_op, &h);
    ASSERT_UINT_EQ(count_of(&h, "Conv"), 2 * 6 + 2 * 5 + 1);
    ASSERT_UINT_EQ(count_of(&h, "ConvTranspose"), 5);
    ASSERT_UINT_EQ(count_of(&h, "InstanceNormalization"), 22);
    ASSERT_UINT_EQ(count_of(&h, "LeakyRelu"), 22);
    ASSERT_UINT_EQ(count_of(&h, "Concat"), 5);
    ib_model_stats st;
    ASSERT_OK(ib_model_get_stats(m, &st));
    ASSERT_UINT_EQ(st.param_count, 1952576);
    ib_model_destroy(m);
    /* a patch that 5 poolings cannot halve is refused */
    ib_unet3d_cfg bad = tiny;
    bad.patch[2] = 40;
    ib_build *b = NULL;
    ib_err err;
    ASSERT_STATUS(ib_models_unet3d(&bad, 1, &b, &err), IB_EINVAL);
    ASSERT_NULL(b);
}

static void run(ib_model *m, const char *backend, float *x, const int64_t *dims, float *y,
                size_t ycap)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = backend;
    so.max_batch = 1;
    so.threads = 2;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    ib_tensor_view in = {.name = IB_UNET3D_INPUT,
                         .desc = {IB_DTYPE_FLOAT32, 5, {1, dims[1], dims[2], dims[3], dims[4]}},
                         .data = x};
    ib_tensor_view ov = {.name = IB_UNET3D_OUTPUT, .data = y, .capacity = ycap};
    ASSERT_OK_ERR(ib_session_run(s, &in, 1, &ov, 1, &err), &err);
    ib_session_destroy(s);
}

TEST_TIMEOUT(unet_model_tiny_inference_cpu_matches_reference, 120)
{
    ib_unet3d_cfg c;
    ib_unet3d_cfg_kits(true, &c); /* 1 x 32^3, ReLU: the smaller of the two tiny graphs */
    ib_model *m = build_load(&c, "kits.onnx");
    const int64_t dims[5] = {1, 1, 32, 32, 32};
    size_t nin = 32 * 32 * 32, nout = 3 * nin;
    float *x = ib_malloc(nin * 4), *y = ib_malloc(nout * 4), *yr = ib_malloc(nout * 4);
    uint64_t r = 5;
    for (size_t i = 0; i < nin; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(r >> 40) / 16777216.0 * 2.0 - 1.0);
    }
    run(m, "cpu", x, dims, y, nout * 4);
    run(m, "reference", x, dims, yr, nout * 4);
    double maxdiff = 0, spread = 0;
    for (size_t i = 0; i < nout; i++) {
        ASSERT_TRUE(isfinite(y[i]));
        maxdiff = fmax(maxdiff, fabs((double)y[i] - (double)yr[i]));
        spread = fmax(spread, fabs((double)y[i] - (double)y[0]));
    }
    ASSERT_DBL_LT(maxdiff, 1e-2);
    ASSERT_DBL_GE(spread, 1e-3);
    ib_free(x);
    ib_free(y);
    ib_free(yr);
    ib_model_destroy(m);
}
