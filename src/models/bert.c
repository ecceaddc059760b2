/*
 * bert.c - BERT-Large for SQuAD v1.1 with the graph and tensor names of the MLPerf reference
 * ONNX (benchmarks.md §1.3): transformers' BertForQuestionAnswering traced by
 * torch.onnx.export in bert_tf_to_pytorch.py (opset 11), node for node, with seeded random
 * weights. The only intended difference is the symbolic sequence dimension (the reference
 * fixes it to 384), so the runtime can bind unpadded lengths.
 *
 * It trains nothing and claims no accuracy: every output labels a built model "random
 * weights". Sizes: embeddings + 24 layers x (4 H^2 + 2 H F + biases and LayerNorms) + the
 * span head = 334,094,338 weights for BERT-Large (hidden 1024, FFN 4096; no pooler, which
 * the QA graph does not use), 1.34 GB as float32.
 */
#include <stdio.h>
#include <string.h>

#include "models/bert.h"
#include "onnx/build.h"

typedef struct bert_ctx {
    ib_build *b;
    ib_bert_config c;
    ib_value_id ids;     /* input_ids, the reference of the dynamic shapes */
    ib_value_id shape3;  /* [batch, seq, heads, head_dim] for the head split */
    ib_value_id shape_h; /* [batch, seq, hidden] for the head merge */
} bert_ctx;

static ib_value_id scalar(bert_ctx *c, float v)
{
    return ib_build_floats(c->b, NULL, &v, 1, "");
}

static ib_value_id weight(bert_ctx *c, const char *name, int64_t rows, int64_t cols, ib_fill f)
{
    char shape[64];
    if (rows > 0)
        snprintf(shape, sizeof shape, "%lld,%lld", (long long)rows, (long long)cols);
    else
        snprintf(shape, sizeof shape, "%lld", (long long)cols);
    return ib_build_weight(c->b, name, IB_DTYPE_FLOAT32, shape, f);
}

/* torch's Linear on a [N, S, in] tensor: MatMul by the transposed weight [in, out] + bias. */
static ib_value_id linear(bert_ctx *c, ib_value_id x, const char *name, int64_t in, int64_t out)
{
    char wn[160], bn[160];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    ib_value_id w = weight(c, wn, in, out, ib_fill_normal(0, 0.02));
    ib_value_id y = IB_BUILD_OP(c->b, "MatMul", "", x, w);
    return IB_BUILD_OP(c->b, "Add", "", y, weight(c, bn, 0, out, ib_fill_normal(0, 0.02)));
}

/* BertLayerNorm as traced: u = mean(x), s = mean((x - u)^2), (x - u) / sqrt(s + eps) * g + b. */
static ib_value_id layernorm(bert_ctx *c, ib_value_id x, const char *name)
{
    char gn[160], bn[160];
    snprintf(gn, sizeof gn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    ib_build *b = c->b;
    ib_value_id u = IB_BUILD_OP(b, "ReduceMean", "axes=[-1] keepdims=1", x);
    ib_value_id d = IB_BUILD_OP(b, "Sub", "", x, u);
    ib_value_id s = IB_BUILD_OP(b, "ReduceMean", "axes=[-1] keepdims=1",
                                IB_BUILD_OP(b, "Pow", "", d, scalar(c, 2.0f)));
    ib_value_id r = IB_BUILD_OP(b, "Sqrt", "", IB_BUILD_OP(b, "Add", "", s, scalar(c, 1e-12f)));
    ib_value_id y = IB_BUILD_OP(b, "Div", "", d, r);
    y = IB_BUILD_OP(b, "Mul", "", weight(c, gn, 0, c->c.hidden, ib_fill_uniform(0.9, 1.1)), y);
    return IB_BUILD_OP(b, "Add", "", y, weight(c, bn, 0, c->c.hidden, ib_fill_normal(0, 0.02)));
}

/* The erf GELU of transformers 2.x: x * 0.5 * (1 + erf(x / 1.41421)). */
static ib_value_id gelu(bert_ctx *c, ib_value_id x)
{
    ib_build *b = c->b;
    ib_value_id e = IB_BUILD_OP(b, "Erf", "", IB_BUILD_OP(b, "Div", "", x, scalar(c, 1.4142135f)));
    ib_value_id y = IB_BUILD_OP(b, "Mul", "", x, scalar(c, 0.5f));
    return IB_BUILD_OP(b, "Mul", "", y, IB_BUILD_OP(b, "Add", "", e, scalar(c, 1.0f)));
}

/* Dim i of input_ids as a 1-element int64 tensor (Shape -> Gather -> Unsqueeze). */
static ib_value_id dim_of_ids(bert_ctx *c, int64_t i)
{
    ib_build *b = c->b;
    ib_value_id shp = IB_BUILD_OP(b, "Shape", "", c->ids);
    ib_value_id g = IB_BUILD_OP(b, "Gather", "axis=0", shp, ib_build_ints(b, NULL, &i, 1, ""));
    return IB_BUILD_OP(b, "Unsqueeze", "axes=[0]", g);
}

/* x.view(batch, seq, heads, head_dim).permute(0, 2, 1, 3) */
static ib_value_id split_heads(bert_ctx *c, ib_value_id x)
{
    ib_value_id r = IB_BUILD_OP(c->b, "Reshape", "", x, c->shape3);
    return IB_BUILD_OP(c->b, "Transpose", "perm=[0,2,1,3]", r);
}

static ib_value_id encoder_layer(bert_ctx *c, ib_value_id h, ib_value_id mask, int64_t l)
{
    ib_build *b = c->b;
    int64_t H = c->c.hidden;
    char p[128];
    /* names below are relative to the layer prefix (the builder prepends it) */
    snprintf(p, sizeof p, "bert.encoder.layer.%lld.", (long long)l);
    ib_build_set_prefix(b, p);
    ib_value_id q = split_heads(c, linear(c, h, "attention.self.query", H, H));
    ib_value_id k = split_heads(c, linear(c, h, "attention.self.key", H, H));
    ib_value_id v = split_heads(c, linear(c, h, "attention.self.value", H, H));
    /* matmul(q, k.transpose(-1, -2)) / sqrt(head_dim) + mask, softmax(dim=-1), matmul v */
    ib_value_id kt = IB_BUILD_OP(b, "Transpose", "perm=[0,1,3,2]", k);
    float head_dim = (float)(H / c->c.heads);
    float root = 1.0f;
    while (root * root < head_dim)
        root += 1.0f; /* head_dim is a square (64, and 64 for the tiny model): sqrt exactly */
    ib_value_id s = IB_BUILD_OP(b, "Div", "", IB_BUILD_OP(b, "MatMul", "", q, kt), scalar(c, root));
    s = IB_BUILD_OP(b, "Add", "", s, mask);
    ib_value_id pr = IB_BUILD_OP(b, "Softmax", "axis=3", s);
    ib_value_id ctx = IB_BUILD_OP(b, "MatMul", "", pr, v);
    ctx = IB_BUILD_OP(b, "Transpose", "perm=[0,2,1,3]", ctx);
    ctx = IB_BUILD_OP(b, "Reshape", "", ctx, c->shape_h);
    ib_value_id a = linear(c, ctx, "attention.output.dense", H, H);
    ib_value_id h1 = layernorm(c, IB_BUILD_OP(b, "Add", "", a, h), "attention.output.LayerNorm");
    ib_value_id f = gelu(c, linear(c, h1, "intermediate.dense", H, c->c.ffn));
    f = linear(c, f, "output.dense", c->c.ffn, H);
    return layernorm(c, IB_BUILD_OP(b, "Add", "", f, h1), "output.LayerNorm");
}

void ib_models_bert_config(bool tiny, ib_bert_config *out)
{
    if (tiny)
        *out = (ib_bert_config){2, 128, 2, 512, IB_BERT_VOCAB, 512, 2};
    else
        *out = (ib_bert_config){24, 1024, 16, 4096, IB_BERT_VOCAB, 512, 2};
}

/* word + position + token-type embeddings, LayerNorm. */
static ib_value_id embeddings(bert_ctx *c, ib_value_id seg)
{
    ib_build *b = c->b;
    int64_t H = c->c.hidden;
    ib_build_set_prefix(b, "bert.embeddings.");
    ib_value_id we = weight(c, "word_embeddings.weight", c->c.vocab, H, ib_fill_normal(0, 0.02));
    ib_value_id pe =
        weight(c, "position_embeddings.weight", c->c.max_positions, H, ib_fill_normal(0, 0.02));
    ib_value_id te =
        weight(c, "token_type_embeddings.weight", c->c.type_vocab, H, ib_fill_normal(0, 0.02));
    /* position_ids = arange(seq_length).unsqueeze(0) */
    int64_t zero = 0, one = 1;
    ib_value_id len = IB_BUILD_OP(b, "Squeeze", "axes=[0]", dim_of_ids(c, 1));
    ib_value_id pos = IB_BUILD_OP(b, "Range", "", ib_build_ints(b, NULL, &zero, 1, ""), len,
                                  ib_build_ints(b, NULL, &one, 1, ""));
    pos = IB_BUILD_OP(b, "Unsqueeze", "axes=[0]", pos);
    ib_value_id e = IB_BUILD_OP(b, "Gather", "axis=0", we, c->ids);
    e = IB_BUILD_OP(b, "Add", "", e, IB_BUILD_OP(b, "Gather", "axis=0", pe, pos));
    e = IB_BUILD_OP(b, "Add", "", e, IB_BUILD_OP(b, "Gather", "axis=0", te, seg));
    return layernorm(c, e, "LayerNorm");
}

int ib_models_bert(const ib_models_opts *o, ib_build **out, ib_err *err)
{
    ib_bert_config cfg;
    ib_models_bert_config(o && o->tiny, &cfg);
    return ib_models_bert_with(&cfg, o ? o->seed : 1, out, err);
}

int ib_models_bert_with(const ib_bert_config *cfg, uint64_t seed, ib_build **out, ib_err *err)
{
    *out = NULL;
    if (cfg->layers < 1 || cfg->hidden < 1 || cfg->heads < 1 || cfg->hidden % cfg->heads ||
        cfg->ffn < 1 || cfg->vocab < 1 || cfg->max_positions < 1 || cfg->type_vocab < 1)
        return ib_err_set(err, IB_EINVAL,
                          "bert: bad configuration (layers %lld, hidden %lld, heads %lld, ffn "
                          "%lld): every size must be >= 1 and hidden a multiple of heads",
                          (long long)cfg->layers, (long long)cfg->hidden, (long long)cfg->heads,
                          (long long)cfg->ffn);
    ib_build *b = NULL;
    int rc = ib_build_create(seed, 11, &b);
    if (rc)
        return ib_err_set(err, rc, "bert: cannot create the ONNX builder");
    bert_ctx c = {.b = b, .c = *cfg};
    int64_t H = c.c.hidden, heads = c.c.heads;
    c.ids = ib_build_input(b, IB_BERT_INPUT_IDS, IB_DTYPE_INT64, "batch_size,seq_length");
    ib_value_id mask = ib_build_input(b, IB_BERT_INPUT_MASK, IB_DTYPE_INT64, "batch_size,seq_length");
    ib_value_id seg = ib_build_input(b, IB_BERT_SEGMENT_IDS, IB_DTYPE_INT64, "batch_size,seq_length");

    /* view shapes from Shape(input_ids), as the trace writes them */
    ib_value_id bd = dim_of_ids(&c, 0), sd = dim_of_ids(&c, 1);
    int64_t tail[2] = {heads, H / heads};
    c.shape3 = IB_BUILD_OP(b, "Concat", "axis=0", bd, sd, ib_build_ints(b, NULL, tail, 2, NULL));
    c.shape_h = IB_BUILD_OP(b, "Concat", "axis=0", bd, sd, ib_build_ints(b, NULL, &H, 1, NULL));

    /* extended mask: (1 - mask[:, None, None, :].float()) * -10000 */
    ib_value_id m = IB_BUILD_OP(b, "Unsqueeze", "axes=[1]", mask);
    m = IB_BUILD_OP(b, "Unsqueeze", "axes=[2]", m);
    m = IB_BUILD_OP(b, "Cast", "to=1", m);
    m = IB_BUILD_OP(b, "Mul", "", IB_BUILD_OP(b, "Sub", "", scalar(&c, 1.0f), m),
                    scalar(&c, -10000.0f));

    ib_value_id h = embeddings(&c, seg);
    for (int64_t l = 0; l < c.c.layers; l++)
        h = encoder_layer(&c, h, m, l);

    ib_build_set_prefix(b, NULL);
    ib_value_id logits = linear(&c, h, "qa_outputs", H, 2);
    ib_value_id parts[2] = {IB_VALUE_NONE, IB_VALUE_NONE};
    ib_build_op_multi(b, "Split", &logits, 1, parts, 2, "axis=2 split=[1,1]");
    ib_value_id start = IB_BUILD_OP(b, "Squeeze", "axes=[2]", parts[0]);
    ib_value_id end = IB_BUILD_OP(b, "Squeeze", "axes=[2]", parts[1]);
    ib_build_output(b, start, IB_BERT_START_LOGITS, IB_DTYPE_FLOAT32, "batch_size,seq_length");
    ib_build_output(b, end, IB_BERT_END_LOGITS, IB_DTYPE_FLOAT32, "batch_size,seq_length");
    rc = ib_build_error(b, err);
    if (rc) {
        ib_build_destroy(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}
