/*
 * test_attn_mha.c - the head split/merge fusion (compile_fuse_attn.c: Reshape + Transpose
 * -> Attention -> Transpose + Reshape becomes inferbench.MultiHeadAttention) and its kernels:
 * the tiny BERT fuses every layer and loses every Transpose; its logits through the fused
 * CPU kernel, the reference kernel and the unfused graph agree; a head-split value that is
 * also a graph output is not fused.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/bert.h"
#include "onnx/build.h"
#include "runtime/compile.h"
#include "runtime/model.h"
#include "runtime/session_impl.h"
#include "test.h"
#include "test_runtime_helpers.h"

static ib_model *load_build(ib_build *b, const char *file)
{
    ib_err err;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", ib_test_tmpdir(), file);
    ASSERT_OK_ERR(ib_build_write_file(b, path, NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file(path, NULL, &m, &err), &err);
    return m;
}

static ib_model *tiny_bert(void)
{
    ib_models_opts o = {.seed = 3, .tiny = true};
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_bert(&o, &b, &err), &err);
    return load_build(b, "bert.onnx");
}

static size_t count_op(const ib_graph *g, const char *op)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nodes.len; i++)
        n += !g->nodes.data[i].dead && !strcmp(g->nodes.data[i].op_type, op);
    return n;
}

static ib_graph *compiled(const ib_model *m, bool mha, int64_t seq, ib_compile_stats *st)
{
    ib_dim_bind dims[2] = {{"batch_size", 1}, {"seq_length", seq}};
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.dims = dims;
    o.n_dims = 2;
    o.fuse_mha = mha;
    ib_graph *g = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_compile(ib_model_graph(m), &o, &g, st, &err), &err);
    return g;
}

TEST(attn_mha_fuses_bert_heads)
{
    ib_model *m = tiny_bert();
    ib_compile_stats st;
    ib_graph *g = compiled(m, true, 24, &st);
    ASSERT_UINT_EQ(count_op(g, "MultiHeadAttention"), 2); /* one per layer */
    ASSERT_UINT_EQ(count_op(g, "Attention"), 0);
    ASSERT_UINT_EQ(count_op(g, "Transpose"), 0);
    ASSERT_UINT_EQ(st.attention_heads, 2);
    ib_graph_destroy(g);
    g = compiled(m, false, 24, &st); /* backends without the op keep the 4-D form */
    ASSERT_UINT_EQ(count_op(g, "MultiHeadAttention"), 0);
    ASSERT_UINT_EQ(count_op(g, "Attention"), 2);
    ASSERT_UINT_GE(count_op(g, "Transpose"), 8);
    ib_graph_destroy(g);
    ib_model_destroy(m);
}

/* start/end logits of the tiny BERT at seq 24 (18 real tokens) on a backend. */
static void logits(const ib_model *m, const char *backend, bool fuse, enum ib_precision p,
                   float *out)
{
    enum { L = 24 };
    int64_t ids[L], mask[L], seg[L];
    for (int t = 0; t < L; t++) {
        ids[t] = 100 + (t * 7919) % 20000;
        mask[t] = t < 18;
        seg[t] = t >= 9;
    }
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = backend;
    so.threads = 1;
    so.precision = p;
    so.disable_fusion = !fuse;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    ib_tensor_view iv[3] = {
        {.name = IB_BERT_INPUT_IDS, .desc = {IB_DTYPE_INT64, 2, {1, L}}, .data = ids},
        {.name = IB_BERT_INPUT_MASK, .desc = {IB_DTYPE_INT64, 2, {1, L}}, .data = mask},
        {.name = IB_BERT_SEGMENT_IDS, .desc = {IB_DTYPE_INT64, 2, {1, L}}, .data = seg}};
    ib_tensor_view ov[2] = {
        {.name = IB_BERT_START_LOGITS, .data = out, .capacity = L * 4},
        {.name = IB_BERT_END_LOGITS, .data = out + L, .capacity = L * 4}};
    ASSERT_OK_ERR(ib_session_run(s, iv, 3, ov, 2, &err), &err);
    if (fuse && strcmp(backend, "cpu") == 0)
        ASSERT_STR_CONTAINS(ib_session_describe(s), "(MultiHeadAttention 2)");
    if (fuse && strcmp(backend, "cpu") == 0)
        ASSERT_STR_CONTAINS(ib_session_describe(s), "fallbacks: 0");
    ib_session_destroy(s);
}

static double max_diff(const float *a, const float *b, int n)
{
    double d = 0;
    for (int i = 0; i < n; i++)
        d = fmax(d, fabs((double)a[i] - (double)b[i]));
    return d;
}

TEST_TIMEOUT(attn_mha_same_logits_fused_unfused_reference, 120)
{
    ib_model *m = tiny_bert();
    float cpu[48], unf[48], ref[48], bf[48];
    logits(m, "cpu", true, IB_PRECISION_FP32, cpu);
    logits(m, "cpu", false, IB_PRECISION_FP32, unf);
    logits(m, "reference", true, IB_PRECISION_FP32, ref);
    double d1 = max_diff(cpu, unf, 48), d2 = max_diff(cpu, ref, 48);
    printf("# fused cpu vs unfused %.3g, vs reference kernel %.3g\n", d1, d2);
    ASSERT_DBL_LE(d1, 1e-4);
    ASSERT_DBL_LE(d2, 1e-4);
    logits(m, "cpu", true, IB_PRECISION_BF16, bf); /* strided bf16 views */
    double d3 = max_diff(bf, cpu, 48);
    printf("# bf16 vs fp32 %.3g\n", d3);
    ASSERT_DBL_LE(d3, 0.1);
    ASSERT_DBL_GE(d3, 1e-7); /* the bf16 path really ran */
    ib_model_destroy(m);
}

TEST(attn_mha_near_miss_head_value_is_output)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(2, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "1,6,16");
    int64_t s4[4] = {1, 6, 2, 8}, s3[3] = {1, 6, 16};
    ib_value_id r4 = ib_build_ints(b, NULL, s4, 4, "4"), r3 = ib_build_ints(b, NULL, s3, 3, "3");
    ib_value_id h[3];
    for (int i = 0; i < 3; i++) {
        ib_value_id w = ib_build_weight(b, NULL, IB_DTYPE_FLOAT32, "16,16", ib_fill_normal(0, 0.3));
        ib_value_id r = IB_BUILD_OP(b, "Reshape", "", IB_BUILD_OP(b, "MatMul", "", x, w), r4);
        h[i] = IB_BUILD_OP(b, "Transpose", "perm=[0,2,1,3]", r);
    }
    ib_value_id kt = IB_BUILD_OP(b, "Transpose", "perm=[0,1,3,2]", h[1]);
    ib_value_id s = IB_BUILD_OP(b, "Softmax", "axis=-1", IB_BUILD_OP(b, "MatMul", "", h[0], kt));
    ib_value_id y = IB_BUILD_OP(b, "MatMul", "", s, h[2]);
    y = IB_BUILD_OP(b, "Reshape", "", IB_BUILD_OP(b, "Transpose", "perm=[0,2,1,3]", y), r3);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "1,6,16");
    ib_build_output(b, h[0], "q_heads", IB_DTYPE_FLOAT32, "1,2,6,8"); /* read outside */
    ib_model *m = load_build(b, "near.onnx");
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.fuse_mha = true;
    ib_graph *g = NULL;
    ib_compile_stats st;
    ib_err err;
    ASSERT_OK_ERR(ib_compile(ib_model_graph(m), &o, &g, &st, &err), &err);
    ASSERT_UINT_EQ(count_op(g, "Attention"), 1);
    ASSERT_UINT_EQ(count_op(g, "MultiHeadAttention"), 0);
    ib_graph_destroy(g);
    ib_model_destroy(m);
}

/* The session fuses attention for a backend that says it runs the fused op (its caps, asked
 * through ib_backend_has_cap), never because of its name: the same plain-C test backend gets
 * MultiHeadAttention with IB_BACKEND_CAP_MHA and none without it, and a table older than
 * ABI 3 has no caps field to read. */
static const char *session_ops_of(const ib_model *m, const struct ib_backend_ops *ops)
{
    static char desc[4096];
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.threads = 1;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create_with_ops(m, &so, ops, &s, &err), &err);
    enum { L = 8 }; /* compiled on the first run: the sequence length is symbolic */
    int64_t ids[L], mask[L], seg[L];
    float out[2 * L];
    for (int t = 0; t < L; t++)
        ids[t] = 100 + t, mask[t] = 1, seg[t] = t >= 4;
    ib_tensor_view iv[3] = {
        {.name = IB_BERT_INPUT_IDS, .desc = {IB_DTYPE_INT64, 2, {1, L}}, .data = ids},
        {.name = IB_BERT_INPUT_MASK, .desc = {IB_DTYPE_INT64, 2, {1, L}}, .data = mask},
        {.name = IB_BERT_SEGMENT_IDS, .desc = {IB_DTYPE_INT64, 2, {1, L}}, .data = seg}};
    ib_tensor_view ov[2] = {
        {.name = IB_BERT_START_LOGITS, .data = out, .capacity = L * 4},
        {.name = IB_BERT_END_LOGITS, .data = out + L, .capacity = L * 4}};
    ASSERT_OK_ERR(ib_session_run(s, iv, 3, ov, 2, &err), &err);
    snprintf(desc, sizeof desc, "%s", ib_session_describe(s));
    ib_session_destroy(s);
    return desc;
}

TEST(attn_mha_fused_by_capability_not_name)
{
    ib_model *m = tiny_bert();
    struct ib_backend_ops with = th_testdev_ops, old = th_testdev_ops;
    with.caps = IB_BACKEND_CAP_MHA;
    old.caps = IB_BACKEND_CAP_MHA;
    old.abi_version = 2; /* caps did not exist yet: not read */
    ASSERT_STR_CONTAINS(session_ops_of(m, &th_testdev_ops), "(MultiHeadAttention 0)");
    ASSERT_STR_CONTAINS(session_ops_of(m, &with), "(MultiHeadAttention 2)");
    ASSERT_STR_CONTAINS(session_ops_of(m, &old), "(MultiHeadAttention 0)");
    ib_model_destroy(m);
}
