/*
 * test_resnet.c - the ResNet50-v1.5 builder and the resnet50 benchmark entry's model binding:
 * the graph's names, shapes and op counts (the MLPerf ONNX layout), parameter and FLOP counts
 * against a hand count of the v1.5 topology (run on the tiny width, the same code as the
 * full one), seeded determinism, inference consistency (ArgMax equals the argmax of the
 * softmax; cpu agrees with the reference interpreter), and bind on NCHW/NHWC, class-id or
 * score outputs, and wrong models.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/benchmark.h"
#include "inferbench/base.h"
#include "inferbench/dataset.h"
#include "inferbench/metrics.h"
#include "inferbench/runtime.h"
#include "models/models.h"
#include "onnx/build.h"
#include "test.h"
#include "test_op_hist.h"

static ib_model *load_built(ib_build *b, const char *path)
{
    ib_err err;
    ASSERT_OK_ERR(ib_build_write_file(b, path, NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file(path, NULL, &m, &err), &err);
    return m;
}

static ib_model *tiny_model(uint64_t seed)
{
    ib_models_opts o = {.seed = seed, .tiny = true};
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_resnet50(&o, &b, &err), &err);
    return load_built(b, "tiny.onnx");
}

/* Hand count of ResNet50-v1.5 at width 64/div: conv weights, BN channels, MACs. */
static void hand_count(int div, double *params, double *macs)
{
    double p = 0, m = 0, bn = 0;
    int w = 64 / div, hw = 112;
    p += (double)w * 3 * 49; /* stem 7x7/2 */
    m += (double)w * 3 * 49 * hw * hw;
    bn += w;
    hw = 56; /* max pool */
    int cin = w;
    static const int blocks[4] = {3, 4, 6, 3};
    for (int s = 0; s < 4; s++) {
        int mid = (64 << s) / div, cout = 4 * mid;
        for (int i = 0; i < blocks[s]; i++) {
            int stride = (i == 0 && s > 0) ? 2 : 1;
            int out_hw = hw / stride;
            p += (double)mid * cin; /* 1x1 at the input resolution (v1.5) */
            m += (double)mid * cin * hw * hw;
            p += (double)mid * mid * 9; /* 3x3 carries the stride */
            m += (double)mid * mid * 9 * out_hw * out_hw;
            p += (double)cout * mid;
            m += (double)cout * mid * out_hw * out_hw;
            bn += mid + mid + cout;
            if (i == 0) {
                p += (double)cout * cin;
                m += (double)cout * cin * out_hw * out_hw;
                bn += cout;
            }
            cin = cout;
            hw = out_hw;
        }
    }
    p += 4 * bn;                 /* gamma, beta, moving mean, moving variance */
    p += (double)cin * 1001 + 1001 + 2; /* dense kernel, bias, squeeze axes */
    m += (double)cin * 1001;
    *params = p;
    *macs = m;
}

TEST(resnet_tiny_topology_names_and_counts)
{
    ib_model *m = tiny_model(1);
    ASSERT_UINT_EQ(ib_model_input_count(m), 1);
    const char *name = NULL;
    ib_tensor_desc d;
    ASSERT_OK(ib_model_input(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_RESNET50_INPUT);
    ASSERT_STR_EQ(name, "input_tensor:0");
    ASSERT_INT_EQ(d.dtype, IB_DTYPE_FLOAT32);
    ASSERT_INT_EQ(d.ndim, 4);
    ASSERT_INT_EQ(d.dims[0], IB_DIM_DYNAMIC);
    ASSERT_INT_EQ(d.dims[1], 3);
    ASSERT_INT_EQ(d.dims[2], 224);
    ASSERT_INT_EQ(d.dims[3], 224);
    ASSERT_UINT_EQ(ib_model_output_count(m), 2);
    ASSERT_OK(ib_model_output(m, 0, &name, &d));
    ASSERT_STR_EQ(name, "ArgMax:0");
    ASSERT_INT_EQ(d.dtype, IB_DTYPE_INT64);
    ASSERT_INT_EQ(d.ndim, 1);
    ASSERT_OK(ib_model_output(m, 1, &name, &d));
    ASSERT_STR_EQ(name, "softmax_tensor:0");
    ASSERT_INT_EQ(d.dims[1], 1001);
    hist h = {0};
    ib_model_op_histogram(m, on_op, &h);
    ASSERT_UINT_EQ(count_of(&h, "Conv"), 53); /* 1 + 16 x 3 + 4 projections */
    ASSERT_UINT_EQ(count_of(&h, "BatchNormalization"), 53);
    ASSERT_UINT_EQ(count_of(&h, "Relu"), 49);
    ASSERT_UINT_EQ(count_of(&h, "Add"), 17); /* 16 residuals + the dense bias */
    ASSERT_UINT_EQ(count_of(&h, "MaxPool"), 1);
    ASSERT_UINT_EQ(count_of(&h, "ReduceMean"), 1);
    ASSERT_UINT_EQ(count_of(&h, "Squeeze"), 1);
    ASSERT_UINT_EQ(count_of(&h, "MatMul"), 1);
    ASSERT_UINT_EQ(count_of(&h, "Softmax"), 1);
    ASSERT_UINT_EQ(count_of(&h, "ArgMax"), 1);
    ib_model_stats st;
    ASSERT_OK(ib_model_get_stats(m, &st));
    double params, macs;
    hand_count(8, &params, &macs);
    ASSERT_DBL_EQ((double)st.param_count, params);
    ASSERT_NEAR(st.flops, 2 * macs, 2 * macs * 1e-9);
    /* the same hand count at full width gives the published figures (25.6 M weights incl.
     * BN statistics, 8.18 GFLOP), which bench/models prints for the built full model */
    hand_count(1, &params, &macs);
    ASSERT_NEAR(params, 25612203, 0.5);
    ASSERT_NEAR(2 * macs / 1e9, 8.18, 0.005);
    ib_model_destroy(m);
}

TEST(resnet_seeded_weights)
{
    ib_models_opts o = {.seed = 5, .tiny = true};
    ib_build *a = NULL, *b = NULL, *c = NULL;
    ASSERT_OK(ib_models_resnet50(&o, &a, NULL));
    ASSERT_OK(ib_models_resnet50(&o, &b, NULL));
    o.seed = 6;
    ASSERT_OK(ib_models_resnet50(&o, &c, NULL));
    void *pa = NULL, *pb = NULL, *pc = NULL;
    size_t la = 0, lb = 0, lc = 0;
    ASSERT_OK(ib_build_write(a, NULL, &pa, &la, NULL));
    ASSERT_OK(ib_build_write(b, NULL, &pb, &lb, NULL));
    ASSERT_OK(ib_build_write(c, NULL, &pc, &lc, NULL));
    ASSERT_UINT_EQ(la, lb);
    ASSERT_MEM_EQ(pa, pb, la);
    ASSERT_UINT_EQ(la, lc); /* same graph, other weights */
    ASSERT_TRUE(memcmp(pa, pc, la) != 0);
    ib_free(pa);
    ib_free(pb);
    ib_free(pc);
    ib_build_destroy(a);
    ib_build_destroy(b);
    ib_build_destroy(c);
}

static void run_model_dt(ib_model *m, const char *backend, const void *in, enum ib_dtype dt,
                         int64_t n, int64_t *cls, float *prob)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = backend;
    so.max_batch = n;
    so.threads = 2;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    ib_tensor_view iv = {.name = "input_tensor:0",
                         .desc = {dt, 4, {n, 3, 224, 224}},
                         .data = (void *)(uintptr_t)in};
    ib_tensor_view ov[2] = {
        {.name = "ArgMax:0", .data = cls, .capacity = (size_t)n * 8},
        {.name = "softmax_tensor:0", .data = prob, .capacity = (size_t)n * 1001 * 4}};
    ASSERT_OK_ERR(ib_session_run(s, &iv, 1, ov, 2, &err), &err);
    ASSERT_INT_EQ(ov[0].desc.dims[0], n);
    ib_session_destroy(s);
}

static void run_model(ib_model *m, const char *backend, const float *in, int64_t n,
                      int64_t *cls, float *prob)
{
    run_model_dt(m, backend, in, IB_DTYPE_FLOAT32, n, cls, prob);
}

/* issue 24: --variant u8-input. The loader's uint8 pixels less the means are exactly its
 * float32 values, and the model taking the pixels (Cast, Sub in the graph) gives the float
 * model's probabilities, on the cpu and the reference kernels, while a sample is a quarter
 * of the bytes. */
TEST_TIMEOUT(resnet_u8_input_same_values, 120)
{
    ib_err err;
    ASSERT_OK_ERR(ib_imagenet_synthesize("imgs", 3, 7, &err), &err);
    ib_imagenet *d = NULL;
    ASSERT_OK_ERR(ib_imagenet_open("imgs", NULL, &d, &err), &err);
    size_t per = 3 * 224 * 224;
    float *f = ib_malloc(3 * per * sizeof *f);
    uint8_t *u = ib_malloc(3 * per);
    static const float mean[3] = {IB_IMAGENET_MEAN_R, IB_IMAGENET_MEAN_G, IB_IMAGENET_MEAN_B};
    for (size_t i = 0; i < 3; i++) {
        ASSERT_OK_ERR(ib_imagenet_load(d, i, 224, IB_LAYOUT_NCHW, f + i * per, &err), &err);
        ASSERT_OK_ERR(ib_imagenet_load_u8(d, i, 224, IB_LAYOUT_NCHW, u + i * per, &err), &err);
        for (size_t k = 0; k < per; k++)
            ASSERT_TRUE((float)u[i * per + k] - mean[k / (224 * 224)] == f[i * per + k]);
    }
    ib_imagenet_close(d);
    ib_models_opts o = {.seed = 5, .tiny = true, .u8_input = true};
    ib_build *b = NULL;
    ASSERT_OK_ERR(ib_models_resnet50(&o, &b, &err), &err);
    ib_model *mu = load_built(b, "tiny-u8.onnx"), *mf = tiny_model(5);
    static const char *const backends[2] = {"cpu", "reference"};
    for (int k = 0; k < 2; k++) {
        int64_t n = k ? 1 : 3, cf[3], cu[3];
        float *pf = ib_malloc(3 * 1001 * sizeof *pf), *pu = ib_malloc(3 * 1001 * sizeof *pu);
        run_model_dt(mf, backends[k], f, IB_DTYPE_FLOAT32, n, cf, pf);
        run_model_dt(mu, backends[k], u, IB_DTYPE_UINT8, n, cu, pu);
        double worst = 0;
        for (size_t j = 0; j < (size_t)n * 1001; j++)
            worst = fmax(worst, fabs((double)pf[j] - (double)pu[j]) / (fabs((double)pf[j]) + 1e-12));
        printf("# %s: worst relative difference of the probabilities %.3g\n", backends[k], worst);
        ASSERT_TRUE(worst <= 1e-5);
        ASSERT_MEM_EQ(cf, cu, (size_t)n * sizeof cf[0]);
        ib_free(pf);
        ib_free(pu);
    }
    ib_model_destroy(mu);
    ib_model_destroy(mf);
    ib_free(f);
    ib_free(u);
}

TEST_TIMEOUT(resnet_tiny_inference_consistent, 120)
{
    ib_model *m = tiny_model(3);
    size_t per = 3 * 224 * 224;
    float *in = ib_malloc(2 * per * sizeof *in);
    for (size_t i = 0; i < 2 * per; i++)
        in[i] = (float)((i * 2654435761u >> 7) % 256) - 120.0f;
    int64_t cls[2], cls_ref[1];
    float *prob = ib_malloc(2 * 1001 * sizeof *prob), *prob_ref = ib_malloc(1001 * sizeof *prob);
    run_model(m, "cpu", in, 2, cls, prob);
    for (int k = 0; k < 2; k++) {
        double sum = 0;
        for (int j = 0; j < 1001; j++)
            sum += (double)prob[k * 1001 + j];
        ASSERT_NEAR(sum, 1.0, 1e-4);
        ASSERT_INT_EQ(cls[k], ib_metric_argmax_f32(prob + k * 1001, 1001));
    }
    run_model(m, "reference", in, 1, cls_ref, prob_ref);
    double maxd = 0;
    for (int j = 0; j < 1001; j++)
        maxd = fmax(maxd, fabs((double)prob[j] - (double)prob_ref[j]));
    ASSERT_TRUE(maxd < 1e-3);
    ib_free(in);
    ib_free(prob);
    ib_free(prob_ref);
    ib_model_destroy(m);
}

/* A small model with an NHWC image input and 1000-class scores only (a torchvision-style
 * export after a layout change). */
static ib_model *nhwc_scores_model(const char *in_shape, const char *out_shape, int64_t classes)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id x = ib_build_input(b, "images", IB_DTYPE_FLOAT32, in_shape);
    x = IB_BUILD_OP(b, "ReduceMean", "axes=[1,2] keepdims=0", x);
    char shape[32];
    snprintf(shape, sizeof shape, "3,%lld", (long long)classes);
    ib_value_id w = ib_build_weight(b, "w", IB_DTYPE_FLOAT32, shape, ib_fill_xavier());
    x = IB_BUILD_OP(b, "MatMul", "", x, w);
    ib_build_output(b, x, "scores", IB_DTYPE_FLOAT32, out_shape);
    return load_built(b, "small.onnx");
}

TEST(resnet_bind_layouts_and_wrong_models)
{
    const ib_benchmark *e = ib_benchmark_find("resnet50");
    ASSERT_NOT_NULL(e);
    ib_bench_config cfg;
    ib_bench_config_defaults(&cfg);
    ib_bench_io io;
    ib_err err;
    ib_model *m = tiny_model(1);
    ASSERT_OK_ERR(e->bind_model(&cfg, 0, m, &io, &err), &err);
    ASSERT_UINT_EQ(io.n_inputs, 1);
    ASSERT_STR_EQ(io.inputs[0].name, "input_tensor:0");
    ASSERT_TRUE(io.inputs[0].batched);
    ASSERT_INT_EQ(io.max_batch, 0);
    ASSERT_UINT_EQ(io.n_outputs, 1);
    ASSERT_STR_EQ(io.outputs[0].name, "ArgMax:0"); /* the class id, not the 1001 scores */
    ASSERT_UINT_EQ(io.outputs[0].max_bytes_per_sample, 8);
    ASSERT_INT_EQ(io.params[0], 1001);
    ASSERT_STR_CONTAINS(io.note, "payload = class - 1");
    ib_model_destroy(m);

    m = nhwc_scores_model("N,224,224,3", "N,1000", 1000);
    ASSERT_OK_ERR(e->bind_model(&cfg, 0, m, &io, &err), &err);
    ASSERT_STR_EQ(io.outputs[0].name, "scores");
    ASSERT_UINT_EQ(io.outputs[0].max_bytes_per_sample, 4000);
    ASSERT_INT_EQ(io.params[0], 1000);
    ASSERT_STR_CONTAINS(io.note, "NHWC");
    ASSERT_STR_CONTAINS(io.note, "argmax in the SUT");
    ib_model_destroy(m);

    m = nhwc_scores_model("1,224,224,3", "1,1000", 1000); /* fixed batch 1 */
    ASSERT_OK_ERR(e->bind_model(&cfg, 0, m, &io, &err), &err);
    ASSERT_INT_EQ(io.max_batch, 1);
    ib_model_destroy(m);

    m = nhwc_scores_model("N,32,32,3", "N,1000", 1000);
    ASSERT_STATUS(e->bind_model(&cfg, 0, m, &io, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "[N,3,224,224]");
    ASSERT_STR_CONTAINS(err.msg, "images");
    ib_model_destroy(m);

    m = nhwc_scores_model("N,224,224,3", "N,10", 10);
    ASSERT_STATUS(e->bind_model(&cfg, 0, m, &io, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "no class output");
    ib_model_destroy(m);
}
