/*
 * test_bert_model.c - the BERT builder (src/models/bert.c), tiny variant (2 layers, hidden
 * 128, 2 heads, FFN 512, vocabulary 30,522): tensor names and dtypes of the reference ONNX,
 * op counts, the parameter count against a hand count, and inference with random weights:
 * finite logits, padded positions (input_mask 0) not influencing the others, and an
 * unpadded shorter sequence giving the same logits as the padded one.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/bert.h"
#include "onnx/build.h"
#include "test.h"
#include "test_op_hist.h"

static ib_model *tiny_bert(void)
{
    ib_models_opts o = {.seed = 7, .tiny = true};
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_bert(&o, &b, &err), &err);
    char path[512];
    snprintf(path, sizeof path, "%s/bert.onnx", ib_test_tmpdir());
    ASSERT_OK_ERR(ib_build_write_file(b, path, NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file(path, NULL, &m, &err), &err);
    return m;
}

/* Weights of a configuration by hand: embeddings (word, position, type, LayerNorm), per
 * layer Q/K/V/output H x H + H, two LayerNorms, FFN H x F + F and F x H + H, span head. */
static uint64_t hand_params(const ib_bert_config *c)
{
    uint64_t H = (uint64_t)c->hidden, F = (uint64_t)c->ffn;
    uint64_t emb = ((uint64_t)c->vocab + (uint64_t)c->max_positions + (uint64_t)c->type_vocab) *
                       H +
                   2 * H;
    uint64_t layer = 4 * (H * H + H) + 4 * H + (H * F + F) + (F * H + H);
    return emb + (uint64_t)c->layers * layer + 2 * H + 2;
}

TEST(bert_model_topology_and_parameter_count)
{
    ib_bert_config big, tiny;
    ib_models_bert_config(false, &big);
    ib_models_bert_config(true, &tiny);
    ASSERT_INT_EQ(big.layers, 24);
    ASSERT_INT_EQ(big.hidden, 1024);
    ASSERT_INT_EQ(big.heads, 16);
    ASSERT_INT_EQ(big.ffn, 4096);
    ASSERT_INT_EQ(big.vocab, 30522);
    /* 334,094,338 for the span model (benchmarks.md §1.3: ~335 M est.). The often-quoted
     * 335,141,888 is BertModel with its pooler (H x H + H) and without the span head
     * (2 H + 2); the exported QA graph has no pooler. */
    ASSERT_UINT_EQ(hand_params(&big), 334094338);
    ASSERT_UINT_EQ(hand_params(&big) + (1024 * 1024 + 1024) - (2 * 1024 + 2), 335141888);
    ib_model *m = tiny_bert();
    const char *name;
    ib_tensor_desc d;
    ASSERT_UINT_EQ(ib_model_input_count(m), 3);
    const char *in_names[3] = {IB_BERT_INPUT_IDS, IB_BERT_INPUT_MASK, IB_BERT_SEGMENT_IDS};
    for (size_t i = 0; i < 3; i++) {
        ASSERT_OK(ib_model_input(m, i, &name, &d));
        ASSERT_STR_EQ(name, in_names[i]);
        ASSERT_INT_EQ(d.dtype, IB_DTYPE_INT64);
        ASSERT_INT_EQ(d.ndim, 2);
    }
    ASSERT_UINT_EQ(ib_model_output_count(m), 2);
    ASSERT_OK(ib_model_output(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_BERT_START_LOGITS);
    ASSERT_OK(ib_model_output(m, 1, &name, &d));
    ASSERT_STR_EQ(name, IB_BERT_END_LOGITS);
    hist h = {0};
    ib_model_op_histogram(m, on_op, &h);
    /* per layer 6 Linear (Q, K, V, attention out, FFN in/out) + QK^T + PV; the span head */
    ASSERT_UINT_EQ(count_of(&h, "MatMul"), 2 * 8 + 1);
    ASSERT_UINT_EQ(count_of(&h, "Softmax"), 2);
    ASSERT_UINT_EQ(count_of(&h, "Erf"), 2);
    ASSERT_UINT_EQ(count_of(&h, "Sqrt"), 1 + 2 * 2); /* one per LayerNorm */
    ASSERT_UINT_EQ(count_of(&h, "Split"), 1);
    ib_model_stats st;
    ASSERT_OK(ib_model_get_stats(m, &st));
    printf("# tiny bert: %llu initializer elements, hand count %llu\n",
           (unsigned long long)st.param_count, (unsigned long long)hand_params(&tiny));
    ASSERT_UINT_GE(st.param_count, hand_params(&tiny));
    ASSERT_UINT_LE(st.param_count, hand_params(&tiny) + 64); /* + scalar/shape constants */
    ib_model_destroy(m);
}

static void run(ib_model *m, int64_t seq, int64_t *ids, int64_t *mask,
                int64_t *seg, float *start, float *end)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.max_batch = 1;
    so.threads = 2;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    ib_tensor_view iv[3] = {
        {.name = IB_BERT_INPUT_IDS, .desc = {IB_DTYPE_INT64, 2, {1, seq}}, .data = ids},
        {.name = IB_BERT_INPUT_MASK, .desc = {IB_DTYPE_INT64, 2, {1, seq}}, .data = mask},
        {.name = IB_BERT_SEGMENT_IDS, .desc = {IB_DTYPE_INT64, 2, {1, seq}}, .data = seg}};
    ib_tensor_view ov[2] = {
        {.name = IB_BERT_START_LOGITS, .data = start, .capacity = (size_t)seq * 4},
        {.name = IB_BERT_END_LOGITS, .data = end, .capacity = (size_t)seq * 4}};
    ASSERT_OK_ERR(ib_session_run(s, iv, 3, ov, 2, &err), &err);
    ASSERT_INT_EQ(ov[0].desc.ndim, 2);
    ASSERT_INT_EQ(ov[0].desc.dims[1], seq);
    ib_session_destroy(s);
}

TEST_TIMEOUT(bert_model_tiny_inference_mask_and_length, 120)
{
    ib_model *m = tiny_bert();
    enum { L = 24, N = 14 }; /* 14 real tokens padded to 24 */
    int64_t ids[L], ids2[L], mask[L], seg[L];
    for (int i = 0; i < L; i++) {
        ids[i] = i < N ? 1000 + 37 * i : 0;
        ids2[i] = i < N ? ids[i] : 20000 + i; /* other ids where the mask is 0 */
        mask[i] = i < N;
        seg[i] = i >= 6 && i < N;
    }
    ids[0] = 101; /* [CLS] */
    ids2[0] = 101;
    float s1[L], e1[L], s2[L], e2[L], s3[N], e3[N];
    run(m, L, ids, mask, seg, s1, e1);
    run(m, L, ids2, mask, seg, s2, e2);
    run(m, N, ids, mask, seg, s3, e3); /* unpadded: the first N tokens only */
    int differ = 0;
    for (int i = 0; i < L; i++) {
        ASSERT_TRUE(isfinite(s1[i]) && isfinite(e1[i]));
        differ += i > 0 && (s1[i] != s1[0]);
    }
    ASSERT_INT_GT(differ, 0); /* random weights still give position-dependent logits */
    for (int i = 0; i < N; i++) {
        ASSERT_NEAR(s1[i], s2[i], 1e-5);
        ASSERT_NEAR(e1[i], e2[i], 1e-5);
        ASSERT_NEAR(s1[i], s3[i], 1e-4);
        ASSERT_NEAR(e1[i], e3[i], 1e-4);
    }
    /* and the mask matters: unmasking the padding changes the real tokens' logits */
    int64_t ones[L];
    for (int i = 0; i < L; i++)
        ones[i] = 1;
    run(m, L, ids2, ones, seg, s2, e2);
    double diff = 0;
    for (int i = 0; i < N; i++)
        diff += fabs((double)s2[i] - (double)s1[i]);
    ASSERT_DBL_GE(diff, 1e-4);
    ib_model_destroy(m);
}

/* ib_models_bert_with (what bench/models/bert --quick builds: BERT-Large widths, fewer
 * layers): the graph follows the configuration, and bad sizes are refused by name. */
TEST(bert_model_custom_config)
{
    ib_bert_config c;
    ib_models_bert_config(true, &c);
    c.layers = 3;
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_bert_with(&c, 3, &b, &err), &err);
    char path[512];
    snprintf(path, sizeof path, "%s/bert3.onnx", ib_test_tmpdir());
    ASSERT_OK_ERR(ib_build_write_file(b, path, NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file(path, NULL, &m, &err), &err);
    hist h = {0};
    ib_model_op_histogram(m, on_op, &h);
    ASSERT_UINT_EQ(count_of(&h, "MatMul"), 3 * 8 + 1);
    ASSERT_UINT_EQ(count_of(&h, "Softmax"), 3);
    ib_model_stats st;
    ASSERT_OK(ib_model_get_stats(m, &st));
    ASSERT_UINT_GE(st.param_count, hand_params(&c));
    ASSERT_UINT_LE(st.param_count, hand_params(&c) + 64);
    ib_model_destroy(m);

    ib_bert_config bad = c;
    bad.heads = 3; /* 128 is not a multiple of 3 */
    b = (ib_build *)&bad;
    ASSERT_STATUS(ib_models_bert_with(&bad, 1, &b, &err), IB_EINVAL);
    ASSERT_NULL(b);
    ASSERT_STR_CONTAINS(err.msg, "multiple of heads");
    bad = c;
    bad.layers = 0;
    ASSERT_STATUS(ib_models_bert_with(&bad, 1, &b, &err), IB_EINVAL);
}
