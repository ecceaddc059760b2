/*
 * test_runtime_partition.c - partitioning, boundary copies and planning in
 * real sessions, driven through "testdev" (a backend table from the test
 * helpers that refuses chosen ops and can hide its memory from the host):
 * fallbacks are listed, contiguous segments form, copies between backends
 * (direct and through the staging buffer) give correct results, the config
 * (threads) and INT8 ranges reach the backend, and on random graphs every
 * arena plan passes the no-overlap verifier while outputs match the
 * reference interpreter.
 */
#include <string.h>

#include "onnx/build.h"
#include "runtime/partition.h"
#include "runtime/session_impl.h"
#include "test.h"
#include "test_runtime_helpers.h"

static ib_model *model_of(ib_build *b, ib_graph **g)
{
    void *bytes;
    size_t len;
    ib_err err;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &bytes, &len, &err), &err);
    *g = th_finish(b);
    ib_model *m;
    ASSERT_OK_ERR(ib_model_load_memory(bytes, len, NULL, &m, &err), &err);
    ib_free(bytes);
    return m;
}

static ib_session *testdev_session(const ib_model *m, int64_t max_batch, int threads,
                                   enum ib_precision prec, const ib_tensor_view *calib,
                                   size_t n_calib)
{
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.max_batch = max_batch;
    o.threads = threads;
    o.precision = prec;
    if (calib) {
        o.calib_inputs = calib;
        o.calib_batches = 1;
        o.calib_input_count = n_calib;
    }
    ib_session *s;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create_with_ops(m, &o, &th_testdev_ops, &s, &err), &err);
    return s;
}

/* Run s and the reference interpreter on g with the same random inputs. */
static void check(ib_session *s, const ib_graph *g, const ib_tensor_desc *shapes, uint64_t seed)
{
    ib_tensor *in[8] = {NULL}, *ref[8] = {NULL};
    th_random_inputs(g, shapes, seed, in);
    th_ref_run(g, in, ref);
    ib_tensor_view iv[8], ov[8];
    for (size_t i = 0; i < g->inputs.len; i++)
        iv[i] = (ib_tensor_view){g->values.data[g->inputs.data[i]].name, in[i]->desc, in[i]->data,
                                 in[i]->nbytes};
    for (size_t i = 0; i < g->outputs.len; i++)
        ov[i] = (ib_tensor_view){g->values.data[g->outputs.data[i]].name,
                                 {0},
                                 calloc(1, ref[i]->nbytes + 1),
                                 ref[i]->nbytes};
    ib_err err;
    ASSERT_OK_ERR(ib_session_run(s, iv, g->inputs.len, ov, g->outputs.len, &err), &err);
    for (size_t i = 0; i < g->outputs.len; i++) {
        ASSERT_TRUE(ib_tensor_desc_equal(&ov[i].desc, &ref[i]->desc));
        double e = th_max_rel_err(ov[i].data, ref[i]->data, ref[i]->nbytes / sizeof(float));
        if (!(e <= 1e-5))
            ib_test_fail(__FILE__, __LINE__, "output '%s' differs: %g", ov[i].name, e);
        free(ov[i].data);
        ib_tensor_free(ref[i]);
    }
    for (size_t i = 0; i < g->inputs.len; i++)
        ib_tensor_free(in[i]);
}

/* Every arena plan of every variant passes the verifier. */
static void verify_plans(const ib_session *s)
{
    for (size_t i = 0; i < s->variants.len; i++)
        for (uint32_t b = 0; b < s->n_backends; b++) {
            const ib_arena_plan *ap = &s->variants.data[i]->plan[b];
            ib_err err;
            ASSERT_OK_ERR(
                ib_plan_verify(ap->pv, ap->n, IB_BACKEND_ALIGN, ap->res.total_bytes, &err), &err);
            ASSERT_UINT_LE(ap->res.total_bytes, s->arena_cap[b]);
        }
}

static void reset_testdev(void)
{
    memset(&th_testdev, 0, sizeof th_testdev);
}

TEST(runtime_partition_fallbacks_are_listed_and_correct)
{
    reset_testdev();
    th_testdev.refuse[0] = "MaxPool";
    th_testdev.refuse[1] = "GlobalAveragePool";
    ib_graph *g;
    ib_model *m = model_of(th_build_tiny_resnet(3), &g);
    ib_session *s = testdev_session(m, 2, 1, IB_PRECISION_FP32, NULL, 0);
    const char *d = ib_session_describe(s);
    ASSERT_STR_CONTAINS(d, "backend: testdev (fallback: reference)");
    ASSERT_STR_CONTAINS(d, "fallbacks: 2");
    ASSERT_STR_CONTAINS(d, "(MaxPool) -> reference");
    ASSERT_STR_CONTAINS(d, "(GlobalAveragePool) -> reference");
    ib_session_placement pl;
    ib_session_placement_get(s, &pl);
    ASSERT_STR_EQ(pl.backend, "testdev");
    ASSERT_STR_EQ(pl.fallback, "reference");
    ASSERT_UINT_EQ(pl.fallback_nodes, 2);
    ASSERT_UINT_EQ(pl.nodes, s->primary->n_nodes);
    ASSERT_TRUE(pl.nodes > 2);
    ASSERT_STR_EQ(pl.fallback_ops, "MaxPool x1, GlobalAveragePool x1");
    char want[96];
    snprintf(want, sizeof want, "nodes per backend: testdev %u, reference 2 (MaxPool x1, "
                                "GlobalAveragePool x1)", pl.nodes - 2);
    ASSERT_STR_CONTAINS(d, want);
    /* testdev | MaxPool | testdev | GAP | testdev */
    ASSERT_UINT_EQ(s->primary->n_segs, 5);
    ib_tensor_desc shape =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16, (int64_t)16);
    check(s, g, &shape, 1);
    shape.dims[0] = 1;
    check(s, g, &shape, 2);
    verify_plans(s);
    ib_session_destroy(s);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

/* ABI 9 replay_status for the test: testdev's exec is its subgraph; one holding the
 * classifier (Gemm, fused into a FusedMatMul) says its capture was refused, the others that
 * they replay. */
static enum ib_backend_replay td_replay(void *ctx, const ib_backend_exec *e, const char **why)
{
    IB_UNUSED(ctx);
    const ib_backend_subgraph *sg = (const ib_backend_subgraph *)(uintptr_t)e;
    for (uint32_t k = 0; k < sg->n_nodes; k++)
        if (!strcmp(sg->graph->nodes.data[sg->nodes[k]].op_type, "FusedMatMul")) {
            *why = "node fc (FusedMatMul): not capturable in this test";
            return IB_BACKEND_REPLAY_REFUSED;
        }
    *why = "ignored";
    return IB_BACKEND_REPLAY_ON;
}

/* ib_session_replay_get (issue 24: a refused CUDA Graph capture is said, not hidden): the
 * device backend's subgraphs of every compiled shape are counted, the reference kernels'
 * are not, the first refusal's reason is kept; a table from before ABI 9 reports none. */
TEST(runtime_partition_replay_status)
{
    reset_testdev();
    th_testdev.refuse[0] = "MaxPool";
    th_testdev.refuse[1] = "GlobalAveragePool";
    ib_graph *g;
    ib_model *m = model_of(th_build_tiny_resnet(3), &g);
    struct ib_backend_ops ops = th_testdev_ops;
    ops.replay_status = td_replay;
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.max_batch = 2;
    o.threads = 1;
    ib_session *s;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create_with_ops(m, &o, &ops, &s, &err), &err);
    ib_session_replay r;
    ib_session_replay_get(s, &r);
    /* testdev | MaxPool | testdev | GAP | testdev (Flatten, FusedMatMul) */
    ASSERT_UINT_EQ(r.subgraphs, 3);
    ASSERT_UINT_EQ(r.replayed, 2);
    ASSERT_UINT_EQ(r.refused, 1);
    ASSERT_STR_EQ(r.why, "node fc (FusedMatMul): not capturable in this test");
    ib_tensor_desc shape =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)1, (int64_t)3, (int64_t)16, (int64_t)16);
    check(s, g, &shape, 1); /* batch 1: a second variant, three more subgraphs */
    ib_session_replay_get(s, &r);
    ASSERT_UINT_EQ(r.subgraphs, 6);
    ASSERT_UINT_EQ(r.replayed, 4);
    ASSERT_UINT_EQ(r.refused, 2);
    ib_session_destroy(s);
    ops.abi_version = 8; /* the field did not exist yet: not read */
    ASSERT_OK_ERR(ib_session_create_with_ops(m, &o, &ops, &s, &err), &err);
    ib_session_replay_get(s, &r);
    ASSERT_UINT_EQ(r.subgraphs + r.replayed + r.refused, 0);
    ASSERT_STR_EQ(r.why, "");
    ib_session_destroy(s);
    ib_session_replay_get(NULL, &r);
    ASSERT_UINT_EQ(r.subgraphs, 0);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

/* ABI 10 precision_read for the test: every FusedConv of testdev's subgraph at fp16; the
 * graph's first FusedConv also at fp32 (a node's widest report counts), the last also at fp8
 * (narrower: ignored); a node of another graph is ignored. */
static void td_precisions(void *ctx, const ib_backend_exec *e, ib_backend_prec_fn fn, void *user)
{
    IB_UNUSED(ctx);
    const ib_backend_subgraph *sg = (const ib_backend_subgraph *)(uintptr_t)e;
    const ib_graph *g = sg->graph;
    size_t first = SIZE_MAX, last = 0;
    for (size_t i = 0; i < g->nodes.len; i++)
        if (!g->nodes.data[i].dead && !strcmp(g->nodes.data[i].op_type, "FusedConv")) {
            first = IB_MIN(first, i);
            last = i;
        }
    static const ib_node stranger = {.op_type = "FusedConv", .domain = "inferbench"};
    fn(user, &stranger, IB_PRECISION_FP32);
    for (uint32_t k = 0; k < sg->n_nodes; k++) {
        const ib_node *n = &g->nodes.data[sg->nodes[k]];
        if (strcmp(n->op_type, "FusedConv"))
            continue;
        fn(user, n, IB_PRECISION_FP16);
        if ((size_t)sg->nodes[k] == first)
            fn(user, n, IB_PRECISION_FP32);
        if ((size_t)sg->nodes[k] == last)
            fn(user, n, IB_PRECISION_FP8);
    }
}

/* ib_session_precision_use_get (issue 24: products left wider than the run's precision are
 * said): the tiny ResNet's 6 convolutions and its classifier are its products; at fp16 the
 * backend reports 5 convolutions at fp16 and the first at fp32 (its widest), and the
 * classifier, on the reference kernels (unreported), computes at fp32; a table from before
 * ABI 10 reports nothing, so every product is at fp32; describe says the same. */
TEST(runtime_partition_precision_use)
{
    reset_testdev();
    th_testdev.refuse[0] = "FusedMatMul";
    ib_graph *g;
    ib_model *m = model_of(th_build_tiny_resnet(3), &g);
    struct ib_backend_ops ops = th_testdev_ops;
    ops.precision_read = td_precisions;
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.max_batch = 2;
    o.threads = 1;
    o.precision = IB_PRECISION_FP16;
    ib_session *s;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create_with_ops(m, &o, &ops, &s, &err), &err);
    ib_session_precision_use u;
    ib_session_precision_use_get(s, &u);
    ASSERT_INT_EQ(u.precision, IB_PRECISION_FP16);
    ASSERT_UINT_EQ(u.products, 7);
    ASSERT_UINT_EQ(u.at_precision, 5);
    ASSERT_STR_EQ(u.others, "inferbench.FusedConv x1 at fp32, inferbench.FusedMatMul x1 at fp32");
    ASSERT_STR_CONTAINS(ib_session_describe(s), "products at fp16: 5 of 7 (inferbench.FusedConv");
    ib_session_destroy(s);
    ops.abi_version = 9; /* the field did not exist yet: not read */
    ASSERT_OK_ERR(ib_session_create_with_ops(m, &o, &ops, &s, &err), &err);
    ib_session_precision_use_get(s, &u);
    ASSERT_UINT_EQ(u.products, 7);
    ASSERT_UINT_EQ(u.at_precision, 0);
    ASSERT_STR_EQ(u.others, "inferbench.FusedConv x6 at fp32, inferbench.FusedMatMul x1 at fp32");
    ib_session_destroy(s);
    o.precision = IB_PRECISION_FP32; /* at fp32 every product is at the precision */
    ASSERT_OK_ERR(ib_session_create_with_ops(m, &o, &ops, &s, &err), &err);
    ib_session_precision_use_get(s, &u);
    ASSERT_UINT_EQ(u.at_precision, 7);
    ASSERT_STR_EQ(u.others, "");
    ib_session_destroy(s);
    ib_session_precision_use_get(NULL, &u);
    ASSERT_UINT_EQ(u.products, 0);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

/* issue 24: a run's time is split into putting the inputs in, computing and reading the
 * outputs back (ib_session_times). testdev sleeps 40 ms in one kind of call at a time; that
 * kind's share must hold its sleeps and the two others far less. */
TEST(runtime_partition_times_say_where_a_run_went)
{
    reset_testdev();
    th_testdev.hide_host = true; /* device memory: every input and output is a call */
    ib_graph *g;
    ib_model *m = model_of(th_build_tiny_resnet(5), &g);
    ib_session *s = testdev_session(m, 2, 1, IB_PRECISION_FP32, NULL, 0);
    ib_tensor_desc d[1] = {th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16,
                                   (int64_t)16)};
    check(s, g, d, 1); /* compiled and run once, untimed */
    const int64_t nap = 40000000;
    int64_t *knob[3] = {&th_testdev.set_sleep_ns, &th_testdev.run_sleep_ns,
                        &th_testdev.get_sleep_ns};
    for (int k = 0; k < 3; k++) {
        ib_session_times a, b;
        ib_session_times_get(s, &a);
        int sets = th_testdev.sets, runs = th_testdev.runs, gets = th_testdev.gets;
        *knob[k] = nap;
        check(s, g, d, 2);
        check(s, g, d, 3);
        *knob[k] = 0;
        ib_session_times_get(s, &b);
        int calls[3] = {th_testdev.sets - sets, th_testdev.runs - runs, th_testdev.gets - gets};
        int64_t got[3] = {b.inputs_ns - a.inputs_ns, b.compute_ns - a.compute_ns,
                          b.outputs_ns - a.outputs_ns};
        ASSERT_UINT_EQ(b.runs - a.runs, 2);
        ASSERT_INT_GE(calls[k], 2);
        printf("# sleeping in %s: inputs %.1f ms, compute %.1f ms, outputs %.1f ms\n",
               k == 0 ? "tensor_set" : k == 1 ? "graph_run" : "tensor_get", (double)got[0] / 1e6,
               (double)got[1] / 1e6, (double)got[2] / 1e6);
        ASSERT_INT_GE(got[k], calls[k] * nap);
        for (int j = 0; j < 3; j++)
            if (j != k)
                ASSERT_INT_LT(got[j], got[k] / 4);
    }
    ib_session_destroy(s);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_partition_device_memory_goes_through_staging)
{
    reset_testdev();
    th_testdev.refuse[0] = "Softmax";
    th_testdev.refuse[1] = "LayerNorm";
    th_testdev.hide_host = true; /* no host pointer: tensor_set/get only */
    ib_graph *g;
    ib_model *m = model_of(th_build_tiny_bert(5), &g);
    ib_session *s = testdev_session(m, 2, 1, IB_PRECISION_FP32, NULL, 0);
    ib_tensor_desc d[2] = {th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)7),
                           th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)7)};
    check(s, g, d, 3);
    ASSERT_NOT_NULL(s->primary);
    ASSERT_TRUE(s->primary->n_fallback >= 3); /* the three LayerNorms */
    ib_session_placement pl;
    ib_session_placement_get(s, &pl);
    ASSERT_UINT_EQ(pl.fallback_nodes, s->primary->n_fallback);
    ASSERT_STR_CONTAINS(pl.fallback_ops, "LayerNorm x3");
    ASSERT_TRUE(s->staging_cap > 0);
    ASSERT_NULL(ib_backend_buffer_host_ptr(s->arena[0]));
    verify_plans(s);
    ib_session_destroy(s);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_partition_config_reaches_backend)
{
    reset_testdev();
    ib_graph *g;
    ib_model *m = model_of(th_build_tiny_resnet(3), &g);
    ib_session *s = testdev_session(m, 1, 3, IB_PRECISION_FP32, NULL, 0);
    ASSERT_INT_EQ(th_testdev.cfg.threads, 3);
    ASSERT_INT_EQ(th_testdev.cfg.first_cpu, -1);
    ASSERT_INT_EQ(th_testdev.creates, 1);
    ASSERT_TRUE(th_testdev.compiles >= 1);
    ASSERT_INT_EQ(th_testdev.ranged_bindings, 0); /* fp32: no ranges */
    ib_session_destroy(s);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_partition_int8_ranges_reach_backend)
{
    reset_testdev();
    ib_graph *g;
    ib_model *m = model_of(th_build_tiny_resnet(3), &g);
    ib_tensor_desc d =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16, (int64_t)16);
    ib_tensor *in;
    th_random_inputs(g, &d, 8, &in);
    ib_tensor_view cv = {"image", d, in->data, in->nbytes};
    ib_session *s = testdev_session(m, 2, 1, IB_PRECISION_INT8, &cv, 1);
    ASSERT_INT_EQ(th_testdev.cfg.precision, IB_PRECISION_INT8);
    /* every float activation of the int8 variant got a calibrated range */
    ASSERT_TRUE(th_testdev.ranged_bindings > 0);
    float lo, hi;
    ASSERT_TRUE(ib_session_range(s, "image", &lo, &hi));
    ASSERT_TRUE(lo >= -1.0f && hi <= 1.0f && lo < hi);
    ASSERT_TRUE(ib_session_range(s, "logits", &lo, &hi));
    ASSERT_FALSE(ib_session_range(s, "no such value", &lo, &hi));
    ASSERT_STR_CONTAINS(ib_session_describe(s), "int8 calibrated values");
    /* the range of the input is its true min/max */
    float mn = 1e30f, mx = -1e30f;
    for (size_t i = 0; i < in->nbytes / 4; i++) {
        float x = ((float *)in->data)[i];
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    ASSERT_TRUE(ib_session_range(s, "image", &lo, &hi));
    ASSERT_DBL_EQ(lo, mn);
    ASSERT_DBL_EQ(hi, mx);
    /* testdev runs in fp32 whatever the precision: results still match */
    check(s, g, &d, 9);
    ib_session_destroy(s);
    ib_tensor_free(in);
    ib_model_destroy(m);
    ib_graph_destroy(g);
}

TEST(runtime_partition_unsupported_everywhere_names_op)
{
    reset_testdev();
    th_testdev.refuse[0] = "Relu";
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "4");
    ib_value_id y = IB_BUILD_OP(b, "Relu", "", IB_BUILD_OP(b, "Neg", "", x));
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "4");
    ib_graph *src = th_finish(b), *g;
    ib_err err;
    ASSERT_OK_ERR(ib_compile(src, NULL, &g, NULL, &err), &err); /* shapes for supports_op */
    ib_graph_destroy(src);
    /* two backends that both refuse Relu */
    ib_backend *be[2];
    ASSERT_OK_ERR(ib_backend_create_from_ops(&th_testdev_ops, NULL, &be[0], &err), &err);
    ASSERT_OK_ERR(ib_backend_create_from_ops(&th_testdev_ops, NULL, &be[1], &err), &err);
    enum ib_precision prec[2] = {IB_PRECISION_FP32, IB_PRECISION_FP32};
    ib_partition p;
    ASSERT_STATUS(ib_partition_graph(g, be, prec, 2, &p, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "op Relu (opset 17)");
    ASSERT_STR_CONTAINS(err.msg, "node 'Relu_1'");
    ASSERT_STR_CONTAINS(err.msg, "float32[4]");
    ib_partition_deinit(&p);
    ib_backend_destroy(be[1]);
    ib_graph_destroy(g);

    /* four independent nodes alternating Relu/Neg: testdev takes the Relus,
     * reference the Negs; the schedule groups them into two segments */
    ASSERT_OK(ib_build_create(1, 17, &b));
    x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "4");
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "y%d", i);
        ib_build_output(b, IB_BUILD_OP(b, i % 2 ? "Neg" : "Relu", "", x), name, IB_DTYPE_FLOAT32,
                        "4");
    }
    src = th_finish(b);
    ASSERT_OK_ERR(ib_compile(src, NULL, &g, NULL, &err), &err);
    ib_graph_destroy(src);
    th_testdev.refuse[0] = "Neg";
    ASSERT_OK_ERR(ib_backend_create("reference", NULL, &be[1], &err), &err);
    ASSERT_OK_ERR(ib_partition_graph(g, be, prec, 2, &p, &err), &err);
    ASSERT_UINT_EQ(p.n_order, 4);
    ASSERT_UINT_EQ(p.n_fallback, 2);
    ASSERT_UINT_EQ(p.n_segs, 2);
    ASSERT_STR_CONTAINS(ib_strbuf_cstr(&p.fallbacks), "(Neg) -> reference");
    ib_partition_deinit(&p);
    ib_backend_destroy(be[0]);
    ib_backend_destroy(be[1]);
    ib_graph_destroy(g);
}

/* ---- random graphs ------------------------------------------------------------------- */

static const char *const k_unary[] = {"Relu", "Sigmoid", "Tanh", "Neg", "Abs"};
static const char *const k_binary[] = {"Add", "Mul", "Sub", "Max"};

/* A random DAG over [2, 8] float values: unary and binary elementwise ops,
 * MatMuls by constant [8, 8] weights, a few graph outputs. */
static ib_build *random_graph(uint64_t seed, int nodes)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(seed, 17, &b));
    ib_value_id vals[128];
    int nv = 0;
    vals[nv++] = ib_build_input(b, "x0", IB_DTYPE_FLOAT32, "batch,8");
    vals[nv++] = ib_build_input(b, "x1", IB_DTYPE_FLOAT32, "batch,8");
    uint64_t r = seed * 2654435761u + 1;
    for (int i = 0; i < nodes && nv < 128; i++) {
        int kind = (int)(th_rand(&r) % 8);
        /* prefer recent values so chains (and in-place chances) appear */
        int a = nv - 1 - (int)(th_rand(&r) % (uint64_t)(nv < 4 ? nv : 4));
        int c = (int)(th_rand(&r) % (uint64_t)nv);
        ib_value_id y;
        if (kind < 3)
            y = IB_BUILD_OP(b, k_unary[th_rand(&r) % IB_ARRAY_LEN(k_unary)], "", vals[a]);
        else if (kind < 7)
            y = IB_BUILD_OP(b, k_binary[th_rand(&r) % IB_ARRAY_LEN(k_binary)], "", vals[a],
                            vals[c]);
        else
            y = IB_BUILD_OP(b, "MatMul", "", vals[a],
                            ib_build_weight(b, NULL, IB_DTYPE_FLOAT32, "8,8", ib_fill_xavier()));
        vals[nv++] = y;
    }
    ib_build_output(b, vals[nv - 1], "out_last", IB_DTYPE_FLOAT32, "batch,8");
    int extra = 1 + (int)(th_rand(&r) % 3);
    for (int k = 0; k < extra; k++) {
        int i = 2 + (int)(th_rand(&r) % (uint64_t)(nv - 3));
        char name[32];
        snprintf(name, sizeof name, "out_%d", k);
        ib_build_output(b, IB_BUILD_OP(b, "Identity", "", vals[i]), name, IB_DTYPE_FLOAT32,
                        "batch,8");
    }
    return b;
}

TEST_TIMEOUT(runtime_partition_random_graphs_plan_never_overlaps, 300)
{
    static const char *const refusals[][2] = {{NULL, NULL}, {"Mul", NULL}, {"Relu", "Add"}};
    size_t granted = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        reset_testdev();
        const char *const *rf = refusals[seed % 3];
        th_testdev.refuse[0] = rf[0];
        th_testdev.refuse[1] = rf[1];
        th_testdev.hide_host = seed % 2 == 0;
        ib_graph *g;
        ib_model *m = model_of(random_graph(seed, 10 + (int)(seed % 30)), &g);
        ib_session *s = testdev_session(m, 3, 1, IB_PRECISION_FP32, NULL, 0);
        ib_tensor_desc d[2] = {th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)3, (int64_t)8),
                               th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)3, (int64_t)8)};
        check(s, g, d, seed);
        d[0].dims[0] = d[1].dims[0] = 2;
        check(s, g, d, seed + 100);
        verify_plans(s);
        for (uint32_t b = 0; b < s->n_backends; b++)
            granted += s->primary->plan[b].res.n_inplace;
        ib_session_destroy(s);
        ib_model_destroy(m);
        ib_graph_destroy(g);
    }
    ASSERT_TRUE(granted > 0); /* in-place reuse was exercised */
}

TEST(runtime_partition_inplace_shrinks_the_arena)
{
    /* z lives across an elementwise chain on m: with the chain in place the
     * arena needs two big slots (chain, z), without it three */
    ib_build *b;
    ASSERT_OK(ib_build_create(2, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "4,64");
    ib_value_id m = IB_BUILD_OP(
        b, "MatMul", "", x, ib_build_weight(b, "w", IB_DTYPE_FLOAT32, "64,256", ib_fill_xavier()));
    ib_value_id z = IB_BUILD_OP(
        b, "MatMul", "", x, ib_build_weight(b, "w2", IB_DTYPE_FLOAT32, "64,256", ib_fill_xavier()));
    ib_value_id y = IB_BUILD_OP(b, "Tanh", "", IB_BUILD_OP(b, "Relu", "", m));
    y = IB_BUILD_OP(b, "Neg", "", IB_BUILD_OP(b, "Sigmoid", "", y));
    y = IB_BUILD_OP(b, "Add", "", y, z);
    y = IB_BUILD_OP(b, "MatMul", "", y,
                    ib_build_weight(b, "w3", IB_DTYPE_FLOAT32, "256,64", ib_fill_xavier()));
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "4,64");
    ib_graph *g;
    ib_model *mdl = model_of(b, &g);
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = "reference";
    o.disable_fusion = true;
    ib_session *s;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(mdl, &o, &s, &err), &err);
    const ib_plan_result *with = &s->primary->plan[0].res;
    /* Relu, Tanh, Sigmoid, Neg and the Add take over their input */
    ASSERT_UINT_EQ(with->n_inplace, 5);
    ib_tensor_desc d = th_desc(IB_DTYPE_FLOAT32, 2, (int64_t)4, (int64_t)64);
    check(s, g, &d, 4);
    verify_plans(s);
    /* the same variant planned without in-place reuse */
    s->no_inplace = true;
    ib_variant *v2;
    ASSERT_OK_ERR(ib_variant_build(s, s->primary->shapes, false, &v2, &err), &err);
    ASSERT_UINT_EQ(v2->plan[0].res.n_inplace, 0);
    ASSERT_OK_ERR(ib_plan_verify(v2->plan[0].pv, v2->plan[0].n, IB_BACKEND_ALIGN,
                                 v2->plan[0].res.total_bytes, &err),
                  &err);
    ASSERT_UINT_LE(with->total_bytes + 2048, v2->plan[0].res.total_bytes);
    ib_variant_free(s, v2);
    check(s, g, &d, 5);
    ib_session_destroy(s);
    ib_model_destroy(mdl);
    ib_graph_destroy(g);
}
