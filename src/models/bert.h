/*
 * bert.h - the BERT-Large SQuAD builder (bert.c): the graph of the MLPerf reference ONNX
 * (HuggingFace BertForQuestionAnswering exported by the reference's bert_tf_to_pytorch.py at
 * opset 11, benchmarks.md §1.3) with seeded random weights, and its tiny test variant.
 */
#ifndef IB_MODELS_BERT_H
#define IB_MODELS_BERT_H

#include <stdbool.h>
#include <stdint.h>

#include "models/models.h"

/* Tensor names of the reference model.onnx / bert_large_v1_1.onnx (bert_tf_to_pytorch.py):
 * int64 [batch_size, 384] inputs, float32 [batch_size, 384] outputs. */
#define IB_BERT_INPUT_IDS "input_ids"
#define IB_BERT_INPUT_MASK "input_mask"
#define IB_BERT_SEGMENT_IDS "segment_ids"
#define IB_BERT_START_LOGITS "output_start_logits"
#define IB_BERT_END_LOGITS "output_end_logits"
/* The int8 reference file (bert_large_v1_1_fake_quant.onnx) names two inputs like
 * transformers does; binders accept both spellings. */
#define IB_BERT_INPUT_MASK_HF "attention_mask"
#define IB_BERT_SEGMENT_IDS_HF "token_type_ids"

#define IB_BERT_VOCAB 30522
#define IB_BERT_MAX_SEQ 384

/* Dimensions of one configuration (bert_config.json of the reference). */
typedef struct ib_bert_config {
    int64_t layers, hidden, heads, ffn, vocab, max_positions, type_vocab;
} ib_bert_config;

/* BERT-Large (24, 1024, 16, 4096, 30522, 512, 2) or the tiny stand-in (2, 128, 2, 512, same
 * vocabulary and positions; benchmarks.md §5). */
void ib_models_bert_config(bool tiny, ib_bert_config *out);

/*
 * ib_models_bert - BertForQuestionAnswering as the reference exports it: word + position +
 * token-type embeddings (Gather; positions from Range over the sequence length), LayerNorm
 * (decomposed ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, eps 1e-12), per layer the
 * Q/K/V projections (MatMul + Add), Reshape to heads, Transpose, MatMul(q, k^T) / 8, + the
 * mask (1 - mask) * -10000 broadcast over [batch, 1, 1, seq], Softmax, MatMul(., v),
 * Transpose + Reshape, output projection + residual + LayerNorm, FFN with the erf GELU
 * (x * 0.5 * (1 + erf(x / sqrt 2))) + residual + LayerNorm; then the span head MatMul + Add
 * to [batch, seq, 2], Split and Squeeze into output_start_logits / output_end_logits.
 * Opset 11 like the reference file. Inputs are int64 [batch_size, seq_length]: the
 * reference file fixes seq_length to 384, the built model leaves it symbolic so a session
 * can bind shorter (unpadded) lengths. Weights and biases N(0, 0.02) (initializer_range),
 * LayerNorm gamma U[0.9, 1.1) and beta N(0, 0.02) (non-trivial, so a dropped bias or
 * LayerNorm parameter changes the outputs), all seeded.
 * Ownership: *out is the caller's (ib_build_destroy).
 */
int ib_models_bert(const ib_models_opts *o, struct ib_build **out, ib_err *err);

/* The same graph for any configuration (e.g. BERT-Large widths with fewer layers, for a quick
 * benchmark at the real shapes). IB_EINVAL for a size < 1 or hidden not a multiple of heads. */
int ib_models_bert_with(const ib_bert_config *cfg, uint64_t seed, struct ib_build **out,
                        ib_err *err);

#endif
