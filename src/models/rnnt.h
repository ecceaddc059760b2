/*
 * rnnt.h - the RNN-T builder (rnnt.c): the MLPerf reference model (speech_recognition/rnnt
 * pytorch/model_separable_rnnt.py with configs/rnnt.toml [rnnt]; benchmarks.md §1.5) as
 * three ONNX graphs with seeded random weights, and its tiny test variant; a fourth graph,
 * the decoder step, joins the prediction net and the joint with the same weights for the
 * device path of the greedy decoder. There is no
 * official ONNX file (the reference ships a PyTorch checkpoint), so the tensor names below
 * are inferbench's own.
 *
 *   encoder     input float32 [N, T, 240] (spliced features) and input_mask float32
 *               [N, T, 1] (1 for t < the utterance's frame count, else 0; T even), both
 *               transposed to time-major [T, N, .] inside -> pre_rnn: 2 x LSTM(1024) -> x mask -> StackTime x2 ([T, N, H] ->
 *               [T/2, N, 2H]: frame j = [h(2j), h(2j+1)], the masked zeros standing in for
 *               the reference's zero padding of an odd length) -> post_rnn: 3 x LSTM(1024)
 *               -> encoder_output [T/2, N, 1024]
 *   prediction  token int64 [N, 1] (label id 0..27, or 28 = start of sequence, whose
 *               embedding row is zero as the reference's prediction(None) feeds zeros),
 *               h_in, c_in float32 [N, 2, 320] -> embedding [29, 320] -> 2 x LSTM(320) ->
 *               g [N, 320], h_out, c_out [N, 2, 320] (batch-major: the session's batch
 *               dimension is dim 0, and one utterance's state is contiguous)
 *   joint       f float32 [N, 1024], g [N, 320] -> concat [f, g] -> Linear(1344, 512) ->
 *               ReLU -> Linear(512, 29) -> logits [N, 29] (id 28 = blank)
 *
 * LSTM weights in ONNX layout (gates i, o, f, c), uniform(-1/sqrt(H), 1/sqrt(H)) as
 * torch.nn.LSTM initialises them, forget-gate input bias 1.0 (forget_gate_bias); Linear
 * weights Xavier. Random weights transcribe nothing: the joint's encoder-side weights are
 * scaled by enc_gain and its blank logit gets blank_bias, so that some utterances decode
 * to nothing and others emit symbols, often up to the 30-per-step cap (random weights give
 * runs of one symbol rather than a trained model's ~1 symbol per step); both paths of the
 * decoder run. A trained model replaces all of it.
 */
#ifndef IB_MODELS_RNNT_H
#define IB_MODELS_RNNT_H

#include <stdbool.h>
#include <stdint.h>

#include "models/models.h"

#define IB_RNNT_ENC_INPUT "input"
#define IB_RNNT_ENC_MASK "input_mask"
#define IB_RNNT_ENC_OUTPUT "encoder_output"
#define IB_RNNT_PRED_TOKEN "token"
#define IB_RNNT_PRED_H_IN "h_in"
#define IB_RNNT_PRED_C_IN "c_in"
#define IB_RNNT_PRED_G "g"
#define IB_RNNT_PRED_H_OUT "h_out"
#define IB_RNNT_PRED_C_OUT "c_out"
#define IB_RNNT_JOINT_F "f"
#define IB_RNNT_JOINT_G "g"
#define IB_RNNT_JOINT_LOGITS "logits"

#define IB_RNNT_CLASSES 29 /* 28 labels + blank */
#define IB_RNNT_BLANK 28
#define IB_RNNT_SOS 28     /* the prediction net's start token (zero embedding) */

/* The decoder step (part 3): prediction + joint + greedy choice in one graph, with the
 * prediction and joint weights of parts 1 and 2 (the same seed gives the same weights), every
 * row at its own encoder frame (rnnt.c, step). */
#define IB_RNNT_STEP_TOKEN "token"
#define IB_RNNT_STEP_H "h_in"
#define IB_RNNT_STEP_C "c_in"
/* float32 [1, T/2 * N, H_enc]: the batch's encoder output (time-major [T/2, N, H_enc]) as
 * rows, row t * N + n the frame t of utterance n */
#define IB_RNNT_STEP_ENC "enc"
#define IB_RNNT_STEP_POS "pos"     /* float32 [N, 1]: t * N + row, the row's frame t */
#define IB_RNNT_STEP_END "end"     /* float32 [N, 1]: frames * N + row (active while pos < end) */
#define IB_RNNT_STEP_COUNT "count" /* float32 [N, 1]: symbols tried at the row's frame */
#define IB_RNNT_STEP_UNROLL 4 /* greedy steps a run of the step graph takes */
#define IB_RNNT_STEP_SYMBOL "symbol" /* int64 [N, K]: each step's first maximum of the logits */
#define IB_RNNT_STEP_EMIT "emit"     /* bool [N, K]: each step's active and symbol != blank */
#define IB_RNNT_STEP_H_NEXT "h_next"         /* after the K steps: h' where emit, else h_in */
#define IB_RNNT_STEP_C_NEXT "c_next"
#define IB_RNNT_STEP_TOKEN_NEXT "token_next" /* symbol where emit, else token */
#define IB_RNNT_STEP_POS_NEXT "pos_next"     /* pos + N on blank or the 30th symbol, else pos */
#define IB_RNNT_STEP_COUNT_NEXT "count_next" /* 0 at a new frame, count + 1 after a symbol */
#define IB_RNNT_MAX_SYMBOLS 30               /* decoders.py max_symbols_per_step */

enum ib_rnnt_part {
    IB_RNNT_ENCODER = 0,
    IB_RNNT_PREDICTION = 1,
    IB_RNNT_JOINT = 2,
    IB_RNNT_STEP = 3
};

typedef struct ib_rnnt_config {
    int64_t in_features;  /* 240 = 80 mels x splice 3 */
    int64_t enc_hidden;   /* 1024 */
    int64_t pre_layers;   /* 2 */
    int64_t stack;        /* 2 (StackTime factor) */
    int64_t post_layers;  /* 3 */
    int64_t pred_hidden;  /* 320 */
    int64_t pred_layers;  /* 2 */
    int64_t joint_hidden; /* 512 */
    double blank_bias;    /* added to the blank logit of the random joint */
    double enc_gain;      /* scale of the joint's encoder-side weights (random LSTM outputs
                           * are small; this lets the audio move the decisions) */
} ib_rnnt_config;

/* The reference sizes, or the tiny stand-in (encoder 256, prediction 128, joint 128, same
 * layer counts; benchmarks.md §5). */
void ib_models_rnnt_config(bool tiny, ib_rnnt_config *out);

/* Build one part. Ownership: *out is the caller's (ib_build_destroy). */
int ib_models_rnnt(const ib_models_opts *o, enum ib_rnnt_part part, struct ib_build **out,
                   ib_err *err);

#endif
