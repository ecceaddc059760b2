/*
 * test_ssd_model.c - the SSD-ResNet34 builder: inputs/outputs and op counts of the tiny
 * variant after a write + load round trip, then one real CPU inference at 1200x1200 whose
 * outputs have the 15,130-anchor layout and go through the post-processing. Random weights:
 * nothing here measures accuracy.
 */
#include <math.h>
#include <string.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "ir/ops/ssd_post.h"
#include "models/ssd_resnet34.h"
#include "onnx/build.h"
#include "test.h"
#include "test_op_hist.h"

static ib_model *tiny(void)
{
    ib_models_opts o = {.seed = 7, .tiny = true};
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_ssd_resnet34(&o, &b, &err), &err);
    ASSERT_OK_ERR(ib_build_write_file(b, "ssd.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("ssd.onnx", NULL, &m, &err), &err);
    return m;
}

TEST(ssd_model_tiny_topology)
{
    ib_model *m = tiny();
    const char *name;
    ib_tensor_desc d;
    ASSERT_UINT_EQ(ib_model_input_count(m), 1);
    ASSERT_OK(ib_model_input(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_SSD_R34_INPUT);
    ASSERT_INT_EQ(d.dims[2], 1200);
    ASSERT_INT_EQ(d.dims[3], 1200);
    ASSERT_UINT_EQ(ib_model_output_count(m), 2);
    ASSERT_OK(ib_model_output(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_SSD_R34_LOCS);
    ASSERT_INT_EQ(d.dims[2], IB_SSD_R34_ANCHORS);
    hist h = {0};
    ib_model_op_histogram(m, on_op, &h);
    /* trunk 1 + 2 x 13 blocks + 2 projections (layer2, layer3) = 29, extras 10, heads 12 */
    ASSERT_UINT_EQ(count_of(&h, "Conv"), 51);
    ASSERT_UINT_EQ(count_of(&h, "BatchNormalization"), 29);
    ASSERT_UINT_EQ(count_of(&h, "Add"), 13);
    ASSERT_UINT_EQ(count_of(&h, "Reshape"), 12);
    ASSERT_UINT_EQ(count_of(&h, "Concat"), 2);
    ASSERT_UINT_EQ(count_of(&h, "MaxPool"), 1);
    ib_model_destroy(m);
}

TEST_TIMEOUT(ssd_model_tiny_inference_and_post, 300)
{
    ib_model *m = tiny();
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = "cpu";
    so.max_batch = 1;
    so.threads = 2;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    size_t per = 3 * 1200 * 1200;
    float *in = ib_malloc(per * sizeof *in);
    for (size_t i = 0; i < per; i++)
        in[i] = (float)((i * 2654435761u >> 9) % 256) / 128.0f - 1.0f;
    float *loc = ib_malloc(4 * IB_SSD_R34_ANCHORS * sizeof *loc);
    float *conf = ib_malloc(81 * IB_SSD_R34_ANCHORS * sizeof *conf);
    ib_tensor_view iv = {.name = IB_SSD_R34_INPUT,
                         .desc = {IB_DTYPE_FLOAT32, 4, {1, 3, 1200, 1200}},
                         .data = in};
    ib_tensor_view ov[2] = {
        {.name = IB_SSD_R34_LOCS, .data = loc, .capacity = 4 * IB_SSD_R34_ANCHORS * 4},
        {.name = IB_SSD_R34_CONFS, .data = conf, .capacity = 81 * IB_SSD_R34_ANCHORS * 4}};
    ASSERT_OK_ERR(ib_session_run(s, &iv, 1, ov, 2, &err), &err);
    ASSERT_INT_EQ(ov[0].desc.ndim, 3);
    ASSERT_INT_EQ(ov[0].desc.dims[1], 4);
    ASSERT_INT_EQ(ov[0].desc.dims[2], IB_SSD_R34_ANCHORS);
    ASSERT_INT_EQ(ov[1].desc.dims[1], 81);
    ASSERT_INT_EQ(ov[1].desc.dims[2], IB_SSD_R34_ANCHORS);
    for (size_t i = 0; i < 4 * IB_SSD_R34_ANCHORS; i += 101)
        ASSERT_TRUE(isfinite(loc[i]));
    float *anchors = ib_malloc(4 * IB_SSD_R34_ANCHORS * sizeof *anchors);
    ib_ssd_r34_anchors(anchors);
    ib_ssd_post_params p;
    ib_ssd_post_params_default(&p);
    ib_ssd_det det[200];
    size_t n = 0;
    ASSERT_OK_ERR(ib_ssd_post(loc, conf, anchors, IB_SSD_R34_ANCHORS, 81, &p, det, &n, &err),
                  &err);
    ASSERT_UINT_LE(n, 200);
    for (size_t i = 0; i < n; i++) {
        ASSERT_TRUE(det[i].score > 0.05f && det[i].label >= 1 && det[i].label <= 80);
        if (i)
            ASSERT_TRUE(det[i - 1].score <= det[i].score);
    }
    ib_free(anchors);
    ib_free(in);
    ib_free(loc);
    ib_free(conf);
    ib_session_destroy(s);
    ib_model_destroy(m);
}

TEST_TIMEOUT(ssd_model_full_matches_published_size, 120)
{
    /* benchmarks.md §1.2: ~20 M parameters (from the r1.1 model definition) and 433 GFLOP
     * per 1200x1200 image (the MLPerf Inference paper's 433 GOPs) */
    ib_models_opts o = {.seed = 1, .tiny = false};
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_ssd_resnet34(&o, &b, &err), &err);
    ASSERT_OK_ERR(ib_build_write_file(b, "full.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("full.onnx", NULL, &m, &err), &err);
    ib_model_stats st;
    ASSERT_OK(ib_model_get_stats(m, &st));
    ASSERT_NEAR((double)st.param_count / 1e6, 20.0, 0.1);
    ASSERT_NEAR(st.flops / 1e9, 433.0, 1.0);
    ib_model_destroy(m);
}
