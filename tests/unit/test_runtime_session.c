/*
 * test_runtime_session.c - sessions end to end: builder-made tiny ResNet
 * and BERT models written as ONNX, loaded, run on the reference and CPU
 * backends and compared with the reference interpreter on the original
 * graph; batch and sequence-length variants; several sessions on one
 * model; no allocation in ib_session_run after the first run at a shape;
 * the errors a caller can make (each names what is wrong).
 */
#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "base/thread.h"
#include "onnx/build.h"
#include "runtime/model.h"
#include "runtime/session_impl.h"
#include "test.h"
#include "test_runtime_helpers.h"

/* Write b's graph as ONNX, load it back as a model; *graph gets the
 * builder's graph for the reference interpreter. */
static ib_model *write_and_load(ib_build *b, const char *file, ib_graph **graph)
{
    ib_err err;
    ASSERT_OK_ERR(ib_build_write_file(b, file, NULL, &err), &err);
    *graph = th_finish(b);
    ib_model *m;
    ASSERT_OK_ERR(ib_model_load_file(file, NULL, &m, &err), &err);
    return m;
}

static bool backend_usable(const char *name)
{
    const char *why = NULL;
    return ib_backend_available(name, &why);
}

/* Run s on random inputs of these shapes and compare every output with the
 * reference interpreter on g. */
static void check_run(ib_session *s, const ib_graph *g, const ib_tensor_desc *shapes, uint64_t seed,
                      double tol)
{
    ib_tensor *in[4] = {NULL}, *ref[4] = {NULL};
    th_random_inputs(g, shapes, seed, in);
    th_ref_run(g, in, ref);
    ib_tensor_view iv[4], ov[4];
    for (size_t i = 0; i < g->inputs.len; i++) {
        iv[i].name = g->values.data[g->inputs.data[i]].name;
        iv[i].desc = in[i]->desc;
        iv[i].data = in[i]->data;
        iv[i].capacity = in[i]->nbytes;
    }
    for (size_t i = 0; i < g->outputs.len; i++) {
        ov[i].name = g->values.data[g->outputs.data[i]].name;
        ov[i].capacity = ref[i]->nbytes;
        ov[i].data = calloc(1, ref[i]->nbytes + 1);
    }
    ib_err err;
    ASSERT_OK_ERR(ib_session_run(s, iv, g->inputs.len, ov, g->outputs.len, &err), &err);
    for (size_t i = 0; i < g->outputs.len; i++) {
        ASSERT_TRUE(ib_tensor_desc_equal(&ov[i].desc, &ref[i]->desc));
        double e = th_max_rel_err(ov[i].data, ref[i]->data, ref[i]->nbytes / sizeof(float));
        if (!(e <= tol))
            ib_test_fail(__FILE__, __LINE__, "output '%s': max rel err %g > %g", ov[i].name, e,
                         tol);
        free(ov[i].data);
        ib_tensor_free(ref[i]);
    }
    for (size_t i = 0; i < g->inputs.len; i++)
        ib_tensor_free(in[i]);
}

static ib_session *open_session(const ib_model *m, const char *backend, int64_t max_batch,
                                bool no_fusion)
{
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = backend;
    o.max_batch = max_batch;
    o.threads = 1;
    o.disable_fusion = no_fusion;
    ib_session *s;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &o, &s, &err), &err);
    return s;
}

static void resnet_on(const char *backend, double tol)
{
    if (!backend_usable(backend)) TEST_SKIP("backend not available here");
    ib_graph *g;
    ib_model *m = write_and_load(th_build_tiny_resnet(7), "resnet.onnx", &g);
    for (int fusion = 0; fusion < 2; fusion++) {
        ib_session *s = open_session(m, backend, 4, !fusion);
        ASSERT_TRUE(ib_session_peak_activation_bytes(s) > 0);
        ASSERT_STR_CONTAINS(ib_session_describe(s), "backend: ");
        ib_tensor_desc d =
            th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)4, (int64_t)3, (int64_t)16, (int64_t)16);
        check_run(s, g, &d, 1, tol);
        d.dims[0] = 1; /* a smaller batch: a second variant */
        check_run(s, g, &d, 2, tol);
        d.dims[0] = 4; /* and back */
        check_run(s, g, &d, 3, tol);
        if (fusion) ASSERT_STR_CONTAINS(ib_session_describe(s), "FusedConv 6");
        /* both blocks' residuals give their storage to the FusedConv output on the CPU
         * backend (residual_in_place); the reference kernel adds Z after writing Y */
        if (fusion && !strcmp(backend, "cpu"))
            ASSERT_STR_CONTAINS(ib_session_describe(s), "2 in place)");
        if (fusion && !strcmp(backend, "reference"))
            ASSERT_STR_CONTAINS(ib_session_describe(s), "0 in place)");
        ib_session_destroy(s);
    }
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_session_tiny_resnet_reference_backend)
{
    resnet_on("reference", 1e-4);
}

TEST(runtime_session_tiny_resnet_cpu_backend)
{
    resnet_on("cpu", 1e-3);
}

static void bert_on(const char *backend, double tol)
{
    if (!backend_usable(backend)) TEST_SKIP("backend not available here");
    ib_graph *g;
    ib_model *m = write_and_load(th_build_tiny_bert(11), "bert.onnx", &g);
    for (int fusion = 0; fusion < 2; fusion++) {
        ib_session *s = open_session(m, backend, 3, !fusion);
        /* seq is symbolic: nothing is compiled until the first run */
        ASSERT_STR_CONTAINS(ib_session_describe(s), "first run");
        ib_tensor_desc d[2] = {th_desc(IB_DTYPE_INT64, 2, (int64_t)3, (int64_t)6),
                               th_desc(IB_DTYPE_INT64, 2, (int64_t)3, (int64_t)6)};
        check_run(s, g, d, 1, tol);
        ASSERT_TRUE(ib_session_peak_activation_bytes(s) > 0);
        if (fusion) ASSERT_STR_CONTAINS(ib_session_describe(s), "Attention 1");
        d[0].dims[1] = d[1].dims[1] = 11; /* another sequence length */
        check_run(s, g, d, 2, tol);
        d[0].dims[0] = d[1].dims[0] = 1;
        check_run(s, g, d, 3, tol);
        ib_session_destroy(s);
    }
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_session_tiny_bert_reference_backend)
{
    bert_on("reference", 1e-4);
}

TEST(runtime_session_tiny_bert_cpu_backend)
{
    bert_on("cpu", 1e-3);
}

TEST(runtime_session_sessions_share_a_model)
{
    ib_graph *g;
    ib_model *m = write_and_load(th_build_tiny_resnet(5), "resnet.onnx", &g);
    ib_session *a = open_session(m, "reference", 2, false);
    ib_session *b = open_session(m, "reference", 1, true);
    ib_tensor_desc d =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)1, (int64_t)3, (int64_t)16, (int64_t)16);
    for (int i = 0; i < 3; i++) {
        check_run(a, g, &d, 10 + (uint64_t)i, 1e-4);
        check_run(b, g, &d, 20 + (uint64_t)i, 1e-4);
    }
    ib_session_destroy(a);
    check_run(b, g, &d, 30, 1e-4); /* b does not depend on a */
    /* two fused sessions share the model's BN-folded weights (one copy) */
    a = open_session(m, "reference", 2, false);
    ib_session *c = open_session(m, "reference", 1, false);
    const ib_graph *ga = a->primary->g, *gc = c->primary->g;
    int shared = 0;
    for (size_t i = 0; i < ga->nodes.len; i++) {
        if (ga->nodes.data[i].dead || strcmp(ga->nodes.data[i].op_type, "FusedConv")) continue;
        const char *wname = ga->values.data[ga->nodes.data[i].inputs[1]].name;
        ib_value_id wc = ib_graph_find_value(gc, wname);
        ASSERT_INT_NE(wc, IB_VALUE_NONE);
        ASSERT_PTR_EQ(ga->values.data[ga->nodes.data[i].inputs[1]].constant->data,
                      gc->values.data[wc].constant->data);
        shared++;
    }
    ASSERT_INT_EQ(shared, 6);
    check_run(c, g, &d, 31, 1e-4);
    ib_session_destroy(a);
    ib_session_destroy(c);
    ib_session_destroy(b);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

static void zero_alloc_on(const char *backend)
{
    if (!backend_usable(backend)) TEST_SKIP("backend not available here");
    ib_graph *g;
    ib_model *m = write_and_load(th_build_tiny_bert(4), "bert.onnx", &g);
    ib_session *s = open_session(m, backend, 2, false);
    ib_tensor_desc d[2] = {th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)5),
                           th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)5)};
    ib_tensor *in[2];
    th_random_inputs(g, d, 5, in);
    ib_tensor_view iv[2] = {{"input_ids", d[0], in[0]->data, in[0]->nbytes},
                            {"input_mask", d[1], in[1]->data, in[1]->nbytes}};
    static float out[2 * 5 * 16];
    ib_tensor_view ov = {"hidden", {0}, out, sizeof out};
    ib_err err;
    ASSERT_OK_ERR(ib_session_run(s, iv, 2, &ov, 1, &err), &err); /* builds the variant */
    th_count_allocs_begin();
    int rc = IB_OK;
    for (int i = 0; i < 5 && !rc; i++)
        rc = ib_session_run(s, iv, 2, &ov, 1, &err);
    uint64_t n = th_count_allocs_end();
    ASSERT_OK_ERR(rc, &err);
    ASSERT_UINT_EQ(n, 0);
    /* a new shape may allocate (it compiles), then it is steady again */
    iv[0].desc.dims[0] = iv[1].desc.dims[0] = 1;
    th_count_allocs_begin();
    rc = ib_session_run(s, iv, 2, &ov, 1, &err);
    ASSERT_TRUE(th_count_allocs_end() > 0);
    ASSERT_OK_ERR(rc, &err);
    th_count_allocs_begin();
    rc = ib_session_run(s, iv, 2, &ov, 1, &err);
    ASSERT_UINT_EQ(th_count_allocs_end(), 0);
    ASSERT_OK_ERR(rc, &err);
    ib_session_destroy(s);
    ib_tensor_free(in[0]);
    ib_tensor_free(in[1]);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_session_run_does_not_allocate_reference)
{
    zero_alloc_on("reference");
}

TEST(runtime_session_run_does_not_allocate_cpu)
{
    zero_alloc_on("cpu");
}

TEST(runtime_session_input_and_output_errors)
{
    ib_graph *g;
    ib_model *m = write_and_load(th_build_tiny_resnet(5), "resnet.onnx", &g);
    ib_session *s = open_session(m, "reference", 2, false);
    static float img[3 * 3 * 16 * 16], logits[3 * 10];
    ib_tensor_view in = {
        "image", th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)1, (int64_t)3, (int64_t)16, (int64_t)16),
        img, sizeof img};
    ib_tensor_view out = {"logits", {0}, logits, sizeof logits};
    ib_err err;
    /* missing input */
    ASSERT_STATUS(ib_session_run(s, NULL, 0, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "missing input 'image'");
    /* unknown input */
    ib_tensor_view bad = in;
    bad.name = "picture";
    ASSERT_STATUS(ib_session_run(s, &bad, 1, &out, 1, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "unknown input 'picture'");
    /* wrong dtype */
    bad = in;
    bad.desc.dtype = IB_DTYPE_FLOAT16;
    ASSERT_STATUS(ib_session_run(s, &bad, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "expected float32, got float16");
    /* wrong static dim: names the input, both shapes and the dim */
    bad = in;
    bad.desc.dims[2] = 17;
    ASSERT_STATUS(ib_session_run(s, &bad, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'image'");
    ASSERT_STR_CONTAINS(err.msg, "float32[1,3,17,16]");
    ASSERT_STR_CONTAINS(err.msg, "dim 2");
    /* wrong rank */
    bad = in;
    bad.desc.ndim = 3;
    ASSERT_STATUS(ib_session_run(s, &bad, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "rank 4");
    /* batch above max_batch */
    bad = in;
    bad.desc.dims[0] = 3;
    ASSERT_STATUS(ib_session_run(s, &bad, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "max_batch 2");
    /* the same input twice */
    ib_tensor_view two[2] = {in, in};
    ASSERT_STATUS(ib_session_run(s, two, 2, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "twice");
    /* unknown output, too small an output buffer */
    ib_tensor_view o2 = out;
    o2.name = "probabilities";
    ASSERT_STATUS(ib_session_run(s, &in, 1, &o2, 1, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "unknown output 'probabilities'");
    o2 = out;
    o2.capacity = 39;
    ASSERT_STATUS(ib_session_run(s, &in, 1, &o2, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "needs 40 bytes");
    /* and a correct call still works afterwards */
    ASSERT_OK_ERR(ib_session_run(s, &in, 1, &out, 1, &err), &err);
    ASSERT_INT_EQ(out.desc.ndim, 2);
    ASSERT_INT_EQ(out.desc.dims[1], 10);
    /* no outputs requested is fine too */
    ASSERT_OK_ERR(ib_session_run(s, &in, 1, NULL, 0, &err), &err);
    ib_session_destroy(s);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_session_create_errors)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "batch,3");
    ib_value_id y;
    ib_build_node(b, "FrobnicateTensor", NULL, "frob_7", &x, 1, &y, 1, NULL, 0, "");
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "batch,3");
    ib_graph *g;
    ib_model *m = write_and_load(b, "frob.onnx", &g);
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = "reference";
    ib_session *s = NULL;
    ib_err err;
    ASSERT_STATUS(ib_session_create(m, &o, &s, &err), IB_EUNSUPPORTED);
    ASSERT_NULL(s);
    ASSERT_STR_CONTAINS(err.msg, "FrobnicateTensor");
    ASSERT_STR_CONTAINS(err.msg, "frob_7");
    ASSERT_STR_CONTAINS(err.msg, "opset 13");
    ib_model_destroy(m);
    ib_graph_destroy(g);

    m = write_and_load(th_build_tiny_resnet(1), "resnet.onnx", &g);
    o.max_batch = 0;
    ASSERT_STATUS(ib_session_create(m, &o, &s, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "max_batch");
    o.max_batch = 1;
    o.backend = "no-such-backend";
    ASSERT_STATUS(ib_session_create(m, &o, &s, &err), IB_ENOTFOUND);
    o.backend = "reference";
    o.precision = IB_PRECISION_INT8; /* no calibration data, no Q/DQ nodes */
    ASSERT_STATUS(ib_session_create(m, &o, &s, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "calib");
    o.precision = IB_PRECISION_FP8; /* its activation scales need ranges too */
    ASSERT_STATUS(ib_session_create(m, &o, &s, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "precision fp8 needs calibration inputs");
    ASSERT_TRUE(ib_precision_calibrated(IB_PRECISION_FP8));
    ASSERT_TRUE(ib_precision_calibrated(IB_PRECISION_INT8));
    ASSERT_FALSE(ib_precision_calibrated(IB_PRECISION_FP16));
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

/* ||a - b|| / ||b|| over n floats */
static double rel_l2(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Low-precision sessions on the CPU backend: calibrated (int8) or bf16;
 * results close to fp32 in relative L2 on a batch other than the
 * calibration one. */
static void low_precision(enum ib_precision p, double tol)
{
    if (!backend_usable("cpu")) TEST_SKIP("cpu backend not available");
    ib_graph *g;
    ib_model *m = write_and_load(th_build_tiny_resnet(7), "resnet.onnx", &g);
    ib_tensor_desc d =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)4, (int64_t)3, (int64_t)16, (int64_t)16);
    ib_tensor *cal, *in, *ref;
    th_random_inputs(g, &d, 100, &cal);
    th_random_inputs(g, &d, 200, &in);
    th_ref_run(g, &in, &ref);
    ib_tensor_view cv = {"image", d, cal->data, cal->nbytes};
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = "cpu";
    o.max_batch = 4;
    o.threads = 1;
    o.precision = p;
    o.calib_inputs = &cv;
    o.calib_batches = p == IB_PRECISION_INT8 ? 1 : 0;
    o.calib_input_count = p == IB_PRECISION_INT8 ? 1 : 0;
    ib_session *s;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &o, &s, &err), &err);
    ASSERT_STR_CONTAINS(ib_session_describe(s), ib_precision_name(p));
    static float out[4 * 10];
    ib_tensor_view iv = {"image", d, in->data, in->nbytes};
    ib_tensor_view ov = {"logits", {0}, out, sizeof out};
    ASSERT_OK_ERR(ib_session_run(s, &iv, 1, &ov, 1, &err), &err);
    double e = rel_l2(out, ref->data, 40);
    printf("%s: relative L2 error vs fp32 reference %g\n%s", ib_precision_name(p), e,
           ib_session_describe(s));
    if (!(e <= tol))
        ib_test_fail(__FILE__, __LINE__, "%s logits: relative L2 error %g > %g",
                     ib_precision_name(p), e, tol);
    ib_session_destroy(s);
    ib_tensor_free(cal);
    ib_tensor_free(in);
    ib_tensor_free(ref);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_session_int8_cpu_calibrated)
{
    low_precision(IB_PRECISION_INT8, 0.15);
}

TEST(runtime_session_bf16_cpu)
{
    low_precision(IB_PRECISION_BF16, 0.05);
}

typedef struct worker {
    const ib_model *m;
    const ib_graph *g;
    const char *backend;
    int failures;
} worker;

/* One session per thread on a shared model: outputs equal the reference
 * interpreter's on every iteration. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = w->backend;
    o.max_batch = 2;
    o.threads = 1;
    ib_session *s;
    ib_err err;
    if (ib_session_create(w->m, &o, &s, &err)) {
        w->failures++;
        return NULL;
    }
    ib_tensor_desc d =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16, (int64_t)16);
    for (int it = 0; it < 10; it++) {
        ib_tensor *in, *ref;
        th_random_inputs(w->g, &d, 1000 + (uint64_t)it, &in);
        th_ref_run(w->g, &in, &ref);
        float out[20];
        ib_tensor_view iv = {"image", d, in->data, in->nbytes};
        ib_tensor_view ov = {"logits", {0}, out, sizeof out};
        if (ib_session_run(s, &iv, 1, &ov, 1, &err) || th_max_rel_err(out, ref->data, 20) > 1e-3)
            w->failures++;
        ib_tensor_free(in);
        ib_tensor_free(ref);
    }
    ib_session_destroy(s);
    return NULL;
}

static void threads_on(const char *backend)
{
    if (!backend_usable(backend)) TEST_SKIP("backend not available here");
    ib_graph *g;
    ib_model *m = write_and_load(th_build_tiny_resnet(5), "resnet.onnx", &g);
    worker w[4];
    ib_thread t[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){m, g, backend, 0};
        ASSERT_OK(ib_thread_create(&t[i], worker_main, &w[i]));
    }
    for (int i = 0; i < 4; i++) {
        ib_thread_join(&t[i]);
        ASSERT_INT_EQ(w[i].failures, 0);
    }
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_session_threads_share_one_model_reference)
{
    threads_on("reference");
}

TEST(runtime_session_threads_share_one_model_cpu)
{
    threads_on("cpu");
}

TEST(runtime_session_variant_cache_is_bounded)
{
    ib_graph *g;
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "batch,4");
    ib_value_id y = IB_BUILD_OP(b, "Relu", "", ib_build_linear(b, x, 4, 3, true));
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "batch,3");
    ib_model *m = write_and_load(b, "m.onnx", &g);
    ib_session *s = open_session(m, "reference", 80, false);
    ib_variant *first = s->primary;
    for (int64_t bt = 1; bt <= 80; bt++) {
        ib_tensor_desc d = th_desc(IB_DTYPE_FLOAT32, 2, bt, (int64_t)4);
        check_run(s, g, &d, (uint64_t)bt, 1e-5);
        ASSERT_UINT_LE(s->variants.len, IB_SESSION_MAX_VARIANTS);
    }
    ASSERT_PTR_EQ(s->primary, first); /* the max_batch variant is never evicted */
    ib_tensor_desc d = th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)1, (int64_t)4);
    check_run(s, g, &d, 7, 1e-5); /* evicted earlier: rebuilt */
    ib_session_destroy(s);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_session_outputs_that_are_inputs_or_constants)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "batch,3");
    ib_build_output(b, IB_BUILD_OP(b, "Relu", "", x), "y", IB_DTYPE_FLOAT32, "batch,3");
    ib_build_output(b, x, NULL, IB_DTYPE_FLOAT32, "batch,3"); /* passthrough */
    ib_build_output(b, IB_BUILD_OP(b, "Shape", "", x), "shape", IB_DTYPE_INT64, "2"); /* folds */
    ib_graph *g;
    ib_model *m = write_and_load(b, "m.onnx", &g);
    ib_session *s = open_session(m, "reference", 4, false);
    float xin[6] = {-1, 2, -3, 4, -5, 6}, y[6], xo[6];
    int64_t shp[2] = {0, 0};
    ib_tensor_view iv = {"x", th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)2, (int64_t)3), xin,
                         sizeof xin};
    ib_tensor_view ov[3] = {
        {"shape", {0}, shp, sizeof shp}, {"x", {0}, xo, sizeof xo}, {"y", {0}, y, sizeof y}};
    ib_err err;
    ASSERT_OK_ERR(ib_session_run(s, &iv, 1, ov, 3, &err), &err);
    ASSERT_INT_EQ(shp[0], 2);
    ASSERT_INT_EQ(shp[1], 3);
    ASSERT_INT_EQ(ov[0].desc.dtype, IB_DTYPE_INT64);
    ASSERT_MEM_EQ(xo, xin, sizeof xin);
    ASSERT_DBL_EQ(y[0], 0.0);
    ASSERT_DBL_EQ(y[5], 6.0);
    ib_session_destroy(s);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}
