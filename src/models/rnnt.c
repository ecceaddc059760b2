/*
 * rnnt.c - the RNN-T encoder, prediction and joint graphs (rnnt.h) with seeded random
 * weights: model_separable_rnnt.py's Encoder (pre_rnn, StackTime, post_rnn), Prediction
 * (Embedding + dec_rnn) and Joint (Linear, ReLU, Linear) with rnn.py's LstmDrop (dropout is
 * inactive in eval), in ONNX opset 11.
 *
 * Parameters at the reference sizes: encoder 2 LSTMs (240 -> 1024, 1024 -> 1024) + 3 LSTMs
 * (2048 -> 1024, 2 x 1024 -> 1024), 4 H (I + H) + 8 H each (ONNX keeps both bias vectors);
 * prediction 28 x 320 embedding (+ the zero start row) + 2 x LSTM(320); joint
 * 1344 x 512 + 512 + 512 x 29 + 29.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/rnnt.h"
#include "onnx/build.h"
#include "ir/graph.h"

void ib_models_rnnt_config(bool tiny, ib_rnnt_config *out)
{
    if (tiny)
        *out = (ib_rnnt_config){240, 256, 2, 2, 3, 128, 2, 128, 0.75, 10.0};
    else
        *out = (ib_rnnt_config){240, 1024, 2, 2, 3, 320, 2, 512, 0.75, 10.0};
}

/* The float data of initializer v (to adjust a few drawn values), NULL after an error. */
static float *const_data(ib_build *b, ib_value_id v)
{
    ib_graph *g = ib_build_graph(b);
    if (ib_build_error(b, NULL) || v == IB_VALUE_NONE || !g || (size_t)v >= g->values.len)
        return NULL;
    ib_tensor *t = g->values.data[v].constant;
    return t ? (float *)t->data : NULL;
}

/* The initializer named `name` already in the graph, IB_VALUE_NONE when there is none: the
 * decoder step's unrolled copies (step) read the weights the first copy made. */
static ib_value_id built_weight(ib_build *b, const char *name)
{
    const ib_graph *g = ib_build_graph(b);
    for (size_t v = 0; g && !ib_build_error(b, NULL) && v < g->values.len; v++)
        if (g->values.data[v].constant && g->values.data[v].name &&
            !strcmp(g->values.data[v].name, name))
            return (ib_value_id)v;
    return IB_VALUE_NONE;
}

/* One LSTM layer on x [T, N, in]: returns Y squeezed to [T, N, H]; *yh, *yc = Y_h, Y_c
 * [1, N, H] when non-NULL (then h0, c0 are its initial state). The weights are name's, made
 * on its first use; the node is named `node` (name when NULL). */
static ib_value_id lstm(ib_build *b, const char *name, const char *node, ib_value_id x,
                        int64_t in, int64_t H, ib_value_id h0, ib_value_id c0, ib_value_id *yh,
                        ib_value_id *yc)
{
    char n[160], shape[64];
    double k = 1.0 / sqrt((double)H);
    snprintf(n, sizeof n, "%s.W", name);
    ib_value_id w = built_weight(b, n), r, bias;
    if (w != IB_VALUE_NONE) {
        snprintf(n, sizeof n, "%s.R", name);
        r = built_weight(b, n);
        snprintf(n, sizeof n, "%s.B", name);
        bias = built_weight(b, n);
    } else {
        snprintf(shape, sizeof shape, "1,%lld,%lld", (long long)(4 * H), (long long)in);
        w = ib_build_weight(b, n, IB_DTYPE_FLOAT32, shape, ib_fill_uniform(-k, k));
        snprintf(n, sizeof n, "%s.R", name);
        snprintf(shape, sizeof shape, "1,%lld,%lld", (long long)(4 * H), (long long)H);
        r = ib_build_weight(b, n, IB_DTYPE_FLOAT32, shape, ib_fill_uniform(-k, k));
        /* B = [Wb (i, o, f, c), Rb (i, o, f, c)]: uniform, then the forget-gate part of Wb set
         * to forget_gate_bias 1.0 and of Rb to 0 (rnn.py LstmDrop) */
        snprintf(n, sizeof n, "%s.B", name);
        snprintf(shape, sizeof shape, "1,%lld", (long long)(8 * H));
        bias = ib_build_weight(b, n, IB_DTYPE_FLOAT32, shape, ib_fill_uniform(-k, k));
        float *bv = const_data(b, bias);
        for (int64_t j = 0; bv && j < H; j++) {
            bv[2 * H + j] = 1.0f;     /* Wb forget */
            bv[4 * H + 2 * H + j] = 0; /* Rb forget */
        }
    }
    ib_value_id ins[7] = {x, w, r, bias, IB_VALUE_NONE, h0, c0};
    ib_value_id outs[3] = {IB_VALUE_NONE, IB_VALUE_NONE, IB_VALUE_NONE};
    char attrs[64];
    snprintf(attrs, sizeof attrs, "hidden_size=%lld", (long long)H);
    uint32_t n_in = h0 != IB_VALUE_NONE ? 7 : 4;
    uint32_t n_out = yh ? 3 : 1;
    ib_build_node(b, "LSTM", NULL, node ? node : name, ins, n_in, outs, n_out, NULL, 0, attrs);
    if (yh) {
        *yh = outs[1];
        *yc = outs[2];
    }
    return IB_BUILD_OP(b, "Squeeze", "axes=[1]", outs[0]);
}

static int finish(ib_build *b, ib_build **out, ib_err *err)
{
    int rc = ib_build_error(b, err);
    if (rc) {
        ib_build_destroy(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}

static void encoder(ib_build *b, const ib_rnnt_config *c)
{
    char shape[64], name[64];
    /* batch-major in (the session's batch is dim 0), time-major inside as torch.nn.LSTM */
    snprintf(shape, sizeof shape, "N,T,%lld", (long long)c->in_features);
    ib_value_id x = ib_build_input(b, IB_RNNT_ENC_INPUT, IB_DTYPE_FLOAT32, shape);
    ib_value_id mask = ib_build_input(b, IB_RNNT_ENC_MASK, IB_DTYPE_FLOAT32, "N,T,1");
    x = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", x);
    mask = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", mask);
    int64_t in = c->in_features, H = c->enc_hidden;
    for (int64_t l = 0; l < c->pre_layers; l++) {
        snprintf(name, sizeof name, "encoder.pre_rnn.lstm.l%lld", (long long)l);
        x = lstm(b, name, NULL, x, in, H, IB_VALUE_NONE, IB_VALUE_NONE, NULL, NULL);
        in = H;
    }
    /* StackTime: frames past each utterance's length are zero (the reference pads its one
     * utterance with zeros to a multiple of the factor), then [T, N, H] -> [T/k, N, kH] */
    x = IB_BUILD_OP(b, "Mul", "", x, mask);
    x = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", x);
    int64_t shp[3] = {0, -1, c->stack * H};
    x = IB_BUILD_OP(b, "Reshape", "", x, ib_build_ints(b, "stack_time.shape", shp, 3, NULL));
    x = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", x);
    in = c->stack * H;
    for (int64_t l = 0; l < c->post_layers; l++) {
        snprintf(name, sizeof name, "encoder.post_rnn.lstm.l%lld", (long long)l);
        x = lstm(b, name, NULL, x, in, H, IB_VALUE_NONE, IB_VALUE_NONE, NULL, NULL);
        in = H;
    }
    snprintf(shape, sizeof shape, "T2,N,%lld", (long long)H);
    ib_build_output(b, x, IB_RNNT_ENC_OUTPUT, IB_DTYPE_FLOAT32, shape);
}

/* The prediction net on token [N, 1], h, c [N, L, H] (the LSTMs' own [L, N, H] when
 * layer_major: the decoder step's copies pass it so from one to the next): g [N, H] and the
 * next h, c in the same layout. Weights are seeded by name, so every graph built with it
 * from one seed holds the same ones; copy k of the decoder step (k > 0) reads the first
 * copy's, its LSTM nodes named "...#k". */
static void pred_body(ib_build *b, const ib_rnnt_config *c, int copy, bool layer_major,
                      ib_value_id tok, ib_value_id h, ib_value_id cc, ib_value_id *g_out,
                      ib_value_id *h_out, ib_value_id *c_out)
{
    int64_t H = c->pred_hidden, L = c->pred_layers;
    char shape[64], name[64], node[80];
    if (!layer_major) {
        h = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", h); /* [L, N, H] for the LSTMs */
        cc = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", cc);
    }
    /* torch.nn.Embedding(28, 320) draws N(0, 1); row 28 (start of sequence) is zero */
    ib_value_id emb = built_weight(b, "prediction.embed.weight");
    if (emb == IB_VALUE_NONE) {
        snprintf(shape, sizeof shape, "%d,%lld", IB_RNNT_CLASSES, (long long)H);
        emb = ib_build_weight(b, "prediction.embed.weight", IB_DTYPE_FLOAT32, shape,
                              ib_fill_normal(0, 1));
        float *ev = const_data(b, emb);
        for (int64_t j = 0; ev && j < H; j++)
            ev[IB_RNNT_SOS * H + j] = 0;
    }
    ib_value_id x = IB_BUILD_OP(b, "Gather", "axis=0", emb, tok); /* [N, 1, H] */
    x = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", x);          /* [1, N, H] */
    ib_value_id hs[8], cs[8], yh[8], yc[8];
    char split[64];
    snprintf(split, sizeof split, "axis=0 split=[%s]", L == 2 ? "1,1" : "1");
    if (L > 1) {
        ib_build_op_multi(b, "Split", &h, 1, hs, (uint32_t)L, "%s", split);
        ib_build_op_multi(b, "Split", &cc, 1, cs, (uint32_t)L, "%s", split);
    } else {
        hs[0] = h;
        cs[0] = cc;
    }
    for (int64_t l = 0; l < L; l++) {
        snprintf(name, sizeof name, "prediction.dec_rnn.lstm.l%lld", (long long)l);
        snprintf(node, sizeof node, "%s#%d", name, copy);
        x = lstm(b, name, copy ? node : NULL, x, H, H, hs[l], cs[l], &yh[l], &yc[l]);
    }
    ib_value_id g = IB_BUILD_OP(b, "Squeeze", "axes=[0]", x);
    ib_value_id ho = L > 1 ? ib_build_op(b, "Concat", yh, (uint32_t)L, "axis=0") : yh[0];
    ib_value_id co = L > 1 ? ib_build_op(b, "Concat", yc, (uint32_t)L, "axis=0") : yc[0];
    *h_out = layer_major ? ho : IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", ho); /* [N, L, H] */
    *c_out = layer_major ? co : IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", co);
    *g_out = g;
}

static void prediction(ib_build *b, const ib_rnnt_config *c)
{
    int64_t H = c->pred_hidden, L = c->pred_layers;
    char shape[64];
    ib_value_id tok = ib_build_input(b, IB_RNNT_PRED_TOKEN, IB_DTYPE_INT64, "N,1");
    snprintf(shape, sizeof shape, "N,%lld,%lld", (long long)L, (long long)H);
    ib_value_id h = ib_build_input(b, IB_RNNT_PRED_H_IN, IB_DTYPE_FLOAT32, shape);
    ib_value_id cc = ib_build_input(b, IB_RNNT_PRED_C_IN, IB_DTYPE_FLOAT32, shape);
    ib_value_id g, ho, co;
    pred_body(b, c, 0, false, tok, h, cc, &g, &ho, &co);
    snprintf(shape, sizeof shape, "N,%lld", (long long)H);
    ib_build_output(b, g, IB_RNNT_PRED_G, IB_DTYPE_FLOAT32, shape);
    snprintf(shape, sizeof shape, "N,%lld,%lld", (long long)L, (long long)H);
    ib_build_output(b, ho, IB_RNNT_PRED_H_OUT, IB_DTYPE_FLOAT32, shape);
    ib_build_output(b, co, IB_RNNT_PRED_C_OUT, IB_DTYPE_FLOAT32, shape);
}

/* The joint on f [N, He] and g [N, Hp]: logits [N, 29] (weights made on first use). */
static ib_value_id joint_body(ib_build *b, const ib_rnnt_config *c, ib_value_id f, ib_value_id g)
{
    char shape[64];
    int64_t in = c->enc_hidden + c->pred_hidden, J = c->joint_hidden;
    ib_value_id x = IB_BUILD_OP(b, "Concat", "axis=1", f, g);
    ib_value_id w1 = built_weight(b, "joint.net.0.weight"), b1, w2, bb;
    if (w1 != IB_VALUE_NONE) {
        b1 = built_weight(b, "joint.net.0.bias");
        w2 = built_weight(b, "joint.net.3.weight");
        bb = built_weight(b, "joint.net.3.bias");
    } else {
        snprintf(shape, sizeof shape, "%lld,%lld", (long long)in, (long long)J);
        w1 = ib_build_weight(b, "joint.net.0.weight", IB_DTYPE_FLOAT32, shape, ib_fill_xavier());
        float *wv = const_data(b, w1); /* the encoder rows x enc_gain (see rnnt.h) */
        for (int64_t r = 0; wv && r < c->enc_hidden; r++)
            for (int64_t j = 0; j < J; j++)
                wv[r * J + j] *= (float)c->enc_gain;
        snprintf(shape, sizeof shape, "%lld", (long long)J);
        b1 = ib_build_weight(b, "joint.net.0.bias", IB_DTYPE_FLOAT32, shape,
                             ib_fill_uniform(-0.05, 0.05));
        snprintf(shape, sizeof shape, "%lld,%d", (long long)J, IB_RNNT_CLASSES);
        w2 = ib_build_weight(b, "joint.net.3.weight", IB_DTYPE_FLOAT32, shape, ib_fill_xavier());
        float b2[IB_RNNT_CLASSES] = {0};
        b2[IB_RNNT_BLANK] = (float)c->blank_bias;
        bb = ib_build_floats(b, "joint.net.3.bias", b2, IB_RNNT_CLASSES, NULL);
    }
    x = IB_BUILD_OP(b, "Relu", "", IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "MatMul", "", x, w1), b1));
    return IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "MatMul", "", x, w2), bb);
}

static void joint(ib_build *b, const ib_rnnt_config *c)
{
    char shape[64];
    snprintf(shape, sizeof shape, "N,%lld", (long long)c->enc_hidden);
    ib_value_id f = ib_build_input(b, IB_RNNT_JOINT_F, IB_DTYPE_FLOAT32, shape);
    snprintf(shape, sizeof shape, "N,%lld", (long long)c->pred_hidden);
    ib_value_id g = ib_build_input(b, IB_RNNT_JOINT_G, IB_DTYPE_FLOAT32, shape);
    ib_value_id x = joint_body(b, c, f, g);
    snprintf(shape, sizeof shape, "N,%d", IB_RNNT_CLASSES);
    ib_build_output(b, x, IB_RNNT_JOINT_LOGITS, IB_DTYPE_FLOAT32, shape);
}

/* One greedy step for every row (decoders.py _greedy_decode's loop body, branch-free), each
 * row at its own encoder frame: the row is active while pos < end; its frame is row pos of
 * enc's T/2 * N rows (pos = t * N + row); the prediction net on its last token and state, the
 * joint, the first maximum as the symbol; the state and token taken over where the row is
 * active and the symbol is not blank; the row moves to its next frame (pos + N, count 0) on
 * blank or at the 30th symbol of the frame, else counts the symbol. Inactive rows keep
 * everything. Positions are float32 (exact to 2^24, far above T/2 * N). */
typedef struct step_state {
    ib_value_id tok, h, c, pos, count; /* h, c [L, N, H] between the copies */
} step_state;

typedef struct step_consts {
    ib_value_id enc, end, n_f, zero, one, max_symbols, blank;
} step_consts;

static void step_body(ib_build *b, const ib_rnnt_config *c, const step_consts *k, int copy,
                      step_state *st, ib_value_id *symbol, ib_value_id *emit_out)
{
    ib_value_id active = IB_BUILD_OP(b, "Less", "", st->pos, k->end); /* [N, 1] */
    /* an inactive row reads frame 0 of row 0 (always there); its result is dropped */
    ib_value_id idx =
        IB_BUILD_OP(b, "Cast", "to=7", IB_BUILD_OP(b, "Where", "", active, st->pos, k->zero));
    ib_value_id f = IB_BUILD_OP(b, "Gather", "axis=1", k->enc,
                                IB_BUILD_OP(b, "Squeeze", "axes=[1]", idx)); /* [1, N, He] */
    f = IB_BUILD_OP(b, "Squeeze", "axes=[0]", f);
    ib_value_id g, ho, co;
    pred_body(b, c, copy, true, st->tok, st->h, st->c, &g, &ho, &co);
    ib_value_id logits = joint_body(b, c, f, g);
    ib_value_id sym = IB_BUILD_OP(b, "ArgMax", "axis=1 keepdims=1", logits); /* [N, 1] */
    ib_value_id is_blank = IB_BUILD_OP(b, "Equal", "", sym, k->blank);
    ib_value_id emit = IB_BUILD_OP(b, "And", "", active, IB_BUILD_OP(b, "Not", "", is_blank));
    ib_value_id counted = IB_BUILD_OP(b, "Add", "", st->count, k->one);
    ib_value_id next_frame = IB_BUILD_OP(
        b, "And", "", active,
        IB_BUILD_OP(b, "Or", "", is_blank,
                    IB_BUILD_OP(b, "Not", "", IB_BUILD_OP(b, "Less", "", counted, k->max_symbols))));
    ib_value_id emit3 = IB_BUILD_OP(b, "Unsqueeze", "axes=[0]", emit); /* [1, N, 1] */
    st->h = IB_BUILD_OP(b, "Where", "", emit3, ho, st->h);
    st->c = IB_BUILD_OP(b, "Where", "", emit3, co, st->c);
    st->tok = IB_BUILD_OP(b, "Where", "", emit, sym, st->tok);
    ib_value_id moved = IB_BUILD_OP(b, "Add", "", st->pos, k->n_f);
    st->count = IB_BUILD_OP(b, "Where", "", next_frame, k->zero,
                            IB_BUILD_OP(b, "Where", "", active, counted, st->count));
    st->pos = IB_BUILD_OP(b, "Where", "", next_frame, moved, st->pos);
    *symbol = sym;
    *emit_out = emit;
}

/* IB_RNNT_STEP_UNROLL greedy steps in one graph (step_body, one after the other, the weights
 * shared): symbol and emit [N, K] hold each step's, the state outputs the last step's. A device
 * runs it with enc, end kept and the rest fed back in its own memory (ib_session_run_fed),
 * reading back only the symbols and flags, so rows never wait for each other at a frame and
 * the host synchronises once per K steps. */
static void step(ib_build *b, const ib_rnnt_config *c)
{
    int64_t H = c->pred_hidden, L = c->pred_layers, He = c->enc_hidden;
    char shape[64];
    step_state st;
    step_consts k;
    st.tok = ib_build_input(b, IB_RNNT_STEP_TOKEN, IB_DTYPE_INT64, "N,1");
    snprintf(shape, sizeof shape, "N,%lld,%lld", (long long)L, (long long)H);
    /* the state [L, N, H] from here to the outputs: no transposes between the copies */
    st.h = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]",
                       ib_build_input(b, IB_RNNT_STEP_H, IB_DTYPE_FLOAT32, shape));
    st.c = IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]",
                       ib_build_input(b, IB_RNNT_STEP_C, IB_DTYPE_FLOAT32, shape));
    /* the encoder output ([T/2, N, H] time-major) as rows, with a leading 1 so that the
     * session does not take its row count for a batch; Gather on axis 1 reads the rows
     * without a copy of the whole (a Reshape would copy it every step) */
    snprintf(shape, sizeof shape, "1,R,%lld", (long long)He);
    k.enc = ib_build_input(b, IB_RNNT_STEP_ENC, IB_DTYPE_FLOAT32, shape);
    st.pos = ib_build_input(b, IB_RNNT_STEP_POS, IB_DTYPE_FLOAT32, "N,1");
    k.end = ib_build_input(b, IB_RNNT_STEP_END, IB_DTYPE_FLOAT32, "N,1");
    st.count = ib_build_input(b, IB_RNNT_STEP_COUNT, IB_DTYPE_FLOAT32, "N,1");
    /* N as a float scalar: Shape folds to a constant when the session binds the shapes */
    int64_t zero_i = 0, blank = IB_RNNT_BLANK;
    k.n_f = IB_BUILD_OP(b, "Cast", "to=1",
                        IB_BUILD_OP(b, "Gather", "axis=0", IB_BUILD_OP(b, "Shape", "", st.tok),
                                    ib_build_ints(b, "dim0", &zero_i, 1, "")));
    float consts[3] = {0.0f, 1.0f, (float)IB_RNNT_MAX_SYMBOLS};
    k.zero = ib_build_floats(b, "zero", &consts[0], 1, "");
    k.one = ib_build_floats(b, "one", &consts[1], 1, "");
    k.max_symbols = ib_build_floats(b, "max_symbols", &consts[2], 1, "");
    k.blank = ib_build_ints(b, "blank", &blank, 1, "");
    ib_value_id sym[IB_RNNT_STEP_UNROLL], emit[IB_RNNT_STEP_UNROLL];
    for (int i = 0; i < IB_RNNT_STEP_UNROLL; i++)
        step_body(b, c, &k, i, &st, &sym[i], &emit[i]);
    snprintf(shape, sizeof shape, "N,%d", IB_RNNT_STEP_UNROLL);
    ib_build_output(b, ib_build_op(b, "Concat", sym, IB_RNNT_STEP_UNROLL, "axis=1"),
                    IB_RNNT_STEP_SYMBOL, IB_DTYPE_INT64, shape);
    ib_build_output(b, ib_build_op(b, "Concat", emit, IB_RNNT_STEP_UNROLL, "axis=1"),
                    IB_RNNT_STEP_EMIT, IB_DTYPE_BOOL, shape);
    snprintf(shape, sizeof shape, "N,%lld,%lld", (long long)L, (long long)H);
    ib_build_output(b, IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", st.h), IB_RNNT_STEP_H_NEXT,
                    IB_DTYPE_FLOAT32, shape);
    ib_build_output(b, IB_BUILD_OP(b, "Transpose", "perm=[1,0,2]", st.c), IB_RNNT_STEP_C_NEXT,
                    IB_DTYPE_FLOAT32, shape);
    ib_build_output(b, st.tok, IB_RNNT_STEP_TOKEN_NEXT, IB_DTYPE_INT64, "N,1");
    ib_build_output(b, st.pos, IB_RNNT_STEP_POS_NEXT, IB_DTYPE_FLOAT32, "N,1");
    ib_build_output(b, st.count, IB_RNNT_STEP_COUNT_NEXT, IB_DTYPE_FLOAT32, "N,1");
}

int ib_models_rnnt(const ib_models_opts *o, enum ib_rnnt_part part, ib_build **out, ib_err *err)
{
    *out = NULL;
    ib_build *b = NULL;
    int rc = ib_build_create(o ? o->seed : 1, 11, &b);
    if (rc)
        return ib_err_set(err, rc, "rnnt: cannot create the ONNX builder");
    ib_rnnt_config c;
    ib_models_rnnt_config(o && o->tiny, &c);
    switch (part) {
    case IB_RNNT_ENCODER: encoder(b, &c); break;
    case IB_RNNT_PREDICTION: prediction(b, &c); break;
    case IB_RNNT_JOINT: joint(b, &c); break;
    case IB_RNNT_STEP: step(b, &c); break;
    default:
        ib_build_destroy(b);
        return ib_err_set(err, IB_EINVAL, "rnnt: no model part %d (0 encoder, 1 prediction, "
                                          "2 joint, 3 decoder step)",
                          (int)part);
    }
    return finish(b, out, err);
}
