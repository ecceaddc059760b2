/*
 * bench_bert.c - the bert-99 / bert-99.9 entries (benchmarks.md §1.3): BERT-Large (or the
 * tiny stand-in) with seeded random weights or a user-supplied reference ONNX, SQuAD v1.1
 * dev-v1.1.json + vocab.txt featurized as the reference (384 / 128 / 64; one QSL sample per
 * feature, in feature order), padded int64 inputs, the payload the reference SUT logs
 * (float32 [384, 2]: start and end logit per token), and accuracy-squad.py's computation
 * (answer choice + get_final_text, then evaluate-v1.1.py) for accuracy.txt.
 *
 * Variant (ib_bench_config.variant, `--variant`): "padded" (default) feeds every sample at
 * 384 tokens as the reference SUT does; "unpadded" cuts a batch to its longest real length
 * (the last input_mask 1), rounded up to a multiple of IB_BERT_LEN_STEP so a session
 * compiles at most 384 / 32 = 12 variants (weights are shared between them). Cutting trailing
 * masked positions leaves the real tokens' logits unchanged: a masked key adds
 * exp(s - 10000) = 0 in float32 to the softmax, and positions are 0..len-1 either way
 * (bert_harness_unpadded_same_answers checks the logits and accuracy.txt). The positions
 * past the cut are not computed: their payload logits are written as -10000, which the
 * accuracy script never reads (only context tokens, all inside the mask, are candidates).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/pyfmt.h"
#include "dataset/squad.h"
#include "dataset/wordpiece.h"
#include "harness/benchmark.h"
#include "metrics/squad_f1.h"
#include "dataset/squad_predict.h"
#include "models/bert.h"
#include "onnx/build.h"

typedef struct bt_state {
    ib_squad *squad;
    ib_wp_vocab *vocab;
    ib_squad_features f;
    char in[3][IB_BENCH_NAME_MAX];
    bool unpadded; /* variant "unpadded": batches cut to their longest real length */
} bt_state;

/* Length granularity of the "unpadded" variant (bounds the compiled variants). */
#define IB_BERT_LEN_STEP 32
/* Payload logit written for positions the "unpadded" variant did not compute. */
#define IB_BERT_UNCOMPUTED_LOGIT (-10000.0f)

static int bt_build(const ib_bench_config *cfg, size_t k, const char *path, ib_err *err)
{
    (void)k;
    ib_models_opts o = {.seed = cfg->seed, .tiny = cfg->tiny};
    ib_build *b = NULL;
    int rc = ib_models_bert(&o, &b, err);
    return ib_bench_write_model(rc, b, path, err);
}

static int find_input(const ib_model *m, const char *a, const char *b)
{
    for (size_t i = 0; i < ib_model_input_count(m); i++) {
        const char *name = NULL;
        ib_tensor_desc d;
        if (ib_model_input(m, i, &name, &d))
            continue;
        if ((strcmp(name, a) == 0 || (b && strcmp(name, b) == 0)) &&
            d.dtype == IB_DTYPE_INT64 && d.ndim == 2 &&
            (d.dims[1] <= 0 || d.dims[1] == IB_SQUAD_MAX_SEQ_LEN))
            return (int)i;
    }
    return -1;
}

static int find_output(const ib_model *m, const char *a)
{
    for (size_t i = 0; i < ib_model_output_count(m); i++) {
        const char *name = NULL;
        ib_tensor_desc d;
        if (!ib_model_output(m, i, &name, &d) && strcmp(name, a) == 0 &&
            d.dtype == IB_DTYPE_FLOAT32)
            return (int)i;
    }
    return -1;
}

static int bt_bind(const ib_bench_config *cfg, size_t k, const ib_model *m, ib_bench_io *io,
                   ib_err *err)
{
    (void)cfg;
    (void)k;
    memset(io, 0, sizeof *io);
    int idx[3] = {find_input(m, IB_BERT_INPUT_IDS, NULL),
                  find_input(m, IB_BERT_INPUT_MASK, IB_BERT_INPUT_MASK_HF),
                  find_input(m, IB_BERT_SEGMENT_IDS, IB_BERT_SEGMENT_IDS_HF)};
    int os = find_output(m, IB_BERT_START_LOGITS), oe = find_output(m, IB_BERT_END_LOGITS);
    if (idx[0] < 0 || idx[1] < 0 || idx[2] < 0 || os < 0 || oe < 0)
        return ib_err_set(err, IB_EINVAL,
                          "bert: expected int64 [N,384] inputs %s, %s (or %s), %s (or %s) and "
                          "float32 outputs %s, %s (the reference ONNX names)",
                          IB_BERT_INPUT_IDS, IB_BERT_INPUT_MASK, IB_BERT_INPUT_MASK_HF,
                          IB_BERT_SEGMENT_IDS, IB_BERT_SEGMENT_IDS_HF, IB_BERT_START_LOGITS,
                          IB_BERT_END_LOGITS);
    io->n_inputs = 3;
    for (int j = 0; j < 3; j++) {
        const char *name = NULL;
        ib_model_input(m, (size_t)idx[j], &name, &io->inputs[j].desc);
        snprintf(io->inputs[j].name, IB_BENCH_NAME_MAX, "%s", name);
        io->inputs[j].desc.dims[0] = 1;
        io->inputs[j].desc.dims[1] = IB_SQUAD_MAX_SEQ_LEN;
        io->inputs[j].batched = true;
    }
    io->n_outputs = 2;
    snprintf(io->outputs[0].name, IB_BENCH_NAME_MAX, "%s", IB_BERT_START_LOGITS);
    snprintf(io->outputs[1].name, IB_BENCH_NAME_MAX, "%s", IB_BERT_END_LOGITS);
    for (int j = 0; j < 2; j++) {
        io->outputs[j].dtype = IB_DTYPE_FLOAT32;
        io->outputs[j].max_bytes_per_sample = IB_SQUAD_MAX_SEQ_LEN * sizeof(float);
    }
    snprintf(io->note, sizeof io->note, "inputs %.40s, %.40s, %.40s int64 [N,384]; outputs %s, %s",
             io->inputs[0].name, io->inputs[1].name, io->inputs[2].name, IB_BERT_START_LOGITS,
             IB_BERT_END_LOGITS);
    return IB_OK;
}

static int bt_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    size_t n = cfg->synth_samples ? cfg->synth_samples : 8; /* questions */
    return ib_squad_synthesize(dir, n, cfg->seed, err);
}

static void bt_close(void *state)
{
    bt_state *s = state;
    if (!s)
        return;
    ib_squad_features_free(&s->f);
    ib_wp_vocab_free(s->vocab);
    ib_squad_free(s->squad);
    ib_free(s);
}

static int bt_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                   void **state, size_t *total, ib_err *err)
{
    *state = NULL;
    const char *var = cfg->variant && *cfg->variant ? cfg->variant : "padded";
    if (strcmp(var, "padded") && strcmp(var, "unpadded"))
        return ib_err_set(err, IB_EINVAL,
                          "bert: unknown variant '%s' (use --variant padded, the reference's "
                          "384 tokens, or unpadded, each batch cut to its longest real length)",
                          var);
    bt_state *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "bert: out of memory");
    s->unpadded = !strcmp(var, "unpadded");
    char path[4096];
    int rc = ib_path_join(path, sizeof path, dir, "dev-v1.1.json");
    if (!rc)
        rc = ib_squad_load(path, &s->squad, err);
    if (!rc && !(rc = ib_path_join(path, sizeof path, dir, "vocab.txt")))
        rc = ib_wp_vocab_load(path, &s->vocab, err);
    ib_squad_window w = {IB_SQUAD_MAX_SEQ_LEN, IB_SQUAD_DOC_STRIDE, IB_SQUAD_MAX_QUERY_LEN};
    if (!rc)
        rc = ib_squad_featurize(s->squad, s->vocab, &w, &s->f, err);
    if (!rc && s->f.n == 0)
        rc = ib_err_set(err, IB_EFORMAT, "bert: %s gives no features (no question has a "
                                         "non-empty context)",
                        dir);
    if (rc) {
        if (rc == IB_EINVAL)
            ib_err_set(err, rc, "bert: path too long or invalid: %s", dir);
        bt_close(s);
        return rc;
    }
    for (int j = 0; io && j < 3; j++) /* io NULL: scoring only */
        snprintf(s->in[j], IB_BENCH_NAME_MAX, "%s", io[0].inputs[j].name);
    *state = s;
    *total = s->f.n;
    return IB_OK;
}

static int bt_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    bt_state *s = state;
    memset(out, 0, sizeof *out);
    size_t L = s->f.seq_len;
    int64_t *mem = ib_malloc(3 * L * sizeof *mem);
    if (!mem)
        return ib_err_set(err, IB_ENOMEM, "bert: out of memory");
    const int32_t *src[3] = {s->f.input_ids + index * L, s->f.input_mask + index * L,
                             s->f.segment_ids + index * L};
    out->mem = mem;
    out->n_tensors = 3;
    for (int j = 0; j < 3; j++) {
        for (size_t t = 0; t < L; t++)
            mem[(size_t)j * L + t] = src[j][t];
        out->t[j] = (ib_tensor_view){.name = s->in[j],
                                     .desc = {IB_DTYPE_INT64, 2, {1, (int64_t)L}},
                                     .data = mem + (size_t)j * L,
                                     .capacity = L * sizeof *mem};
    }
    return IB_OK;
}

/* Real length of a sample: one past its last input_mask 1 (at least 1). */
static size_t real_len(const ib_bench_sample *smp, size_t L)
{
    const int64_t *m = smp->t[1].data;
    size_t n = L;
    while (n > 1 && m[n - 1] == 0)
        n--;
    return n;
}

/* Timed: the batch's int64 [count, len] inputs; len = 384, or for the "unpadded" variant the
 * longest real length of the batch rounded up to IB_BERT_LEN_STEP. */
static int bt_collate(void *state, ib_bench_batch *b, ib_err *err)
{
    bt_state *s = state;
    size_t L = s->f.seq_len, n = b->count, len = L;
    if (s->unpadded) {
        len = 1;
        for (size_t i = 0; i < n; i++) {
            size_t r = real_len(b->samples[i], L);
            len = r > len ? r : len;
        }
        len = (len + IB_BERT_LEN_STEP - 1) / IB_BERT_LEN_STEP * IB_BERT_LEN_STEP;
        len = len < L ? len : L;
    }
    b->n_inputs = 3;
    for (unsigned j = 0; j < 3; j++) {
        int64_t *dst = ib_bench_scratch_get(b->scratch, j, n * len * sizeof *dst);
        if (!dst)
            return ib_err_set(err, IB_ENOMEM, "bert: out of memory collating a batch");
        for (size_t i = 0; i < n; i++)
            memcpy(dst + i * len, b->samples[i]->t[j].data, len * sizeof *dst);
        b->inputs[j] = (ib_tensor_view){.name = s->in[j],
                                        .desc = {IB_DTYPE_INT64, 2, {(int64_t)n, (int64_t)len}},
                                        .data = dst,
                                        .capacity = n * len * sizeof *dst};
    }
    return IB_OK;
}

static size_t bt_payload_max(void *state, const ib_bench_config *cfg)
{
    (void)state;
    (void)cfg;
    return IB_SQUAD_MAX_SEQ_LEN * 2 * sizeof(float);
}

static void put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(u >> (8 * k));
}

static float get_f32(const uint8_t *p)
{
    uint32_t u = 0;
    for (int k = 0; k < 4; k++)
        u |= (uint32_t)p[k] << (8 * k);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Timed: np.stack([start, end], axis=-1) per sample, float32 little-endian. */
static int bt_post(void *state, const ib_bench_config *cfg, const ib_bench_batch *b,
                   ib_bench_payload *out, ib_err *err)
{
    (void)cfg;
    bt_state *s = state;
    size_t L = s->f.seq_len;
    /* the computed length (the batch's inputs: 384, or cut by the unpadded variant) */
    size_t len = b->n_inputs ? (size_t)b->inputs[0].desc.dims[1] : L;
    if (len > L)
        return ib_err_set(err, IB_EINVAL, "bert: outputs longer than %zu tokens", L);
    const float *st = b->outputs[0].data, *en = b->outputs[1].data;
    for (size_t i = 0; i < b->count; i++) {
        if (out[i].cap < L * 8)
            return ib_err_set(err, IB_EINVAL, "bert: payload buffer too small");
        for (size_t t = 0; t < L; t++) {
            put_f32(out[i].data + 8 * t, t < len ? st[i * len + t] : IB_BERT_UNCOMPUTED_LOGIT);
            put_f32(out[i].data + 8 * t + 4, t < len ? en[i * len + t] : IB_BERT_UNCOMPUTED_LOGIT);
        }
        out[i].size = L * 8;
    }
    return IB_OK;
}

static int bt_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                       size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    (void)cfg;
    bt_state *s = state;
    size_t L = s->f.seq_len, nf = s->f.n, nq = ib_squad_questions(s->squad);
    float *sl = ib_malloc(sizeof *sl * nf * L), *el = ib_malloc(sizeof *el * nf * L);
    uint8_t *have = ib_calloc(nf ? nf : 1, 1);
    char **pred = ib_calloc(nq ? nq : 1, sizeof *pred);
    int rc = IB_OK;
    if (!sl || !el || !have || !pred) {
        rc = ib_err_set(err, IB_ENOMEM, "bert: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        size_t q = (size_t)e[i].qsl_idx;
        if (q >= nf || e[i].size != L * 8) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "bert: accuracy log entry %zu: qsl_idx %llu of %zu or %zu bytes "
                            "(expected float32 [384,2] = %zu bytes)",
                            i, (unsigned long long)e[i].qsl_idx, nf, e[i].size, L * 8);
            goto done;
        }
        if (have[q])
            continue; /* duplicates: the first one counts */
        have[q] = 1;
        for (size_t t = 0; t < L; t++) {
            sl[q * L + t] = get_f32(e[i].data + 8 * t);
            el[q * L + t] = get_f32(e[i].data + 8 * t + 4);
        }
    }
    /* features of a question are consecutive. write_predictions answers every question of
     * the dataset from the features the log holds, skipping the missing ones; a question
     * with none of its features logged gets "empty" (its nbest fallback) and scores against
     * its answers like any other. */
    for (size_t f0 = 0; f0 < nf;) {
        size_t f1 = f0, q = s->f.question[f0];
        while (f1 < nf && s->f.question[f1] == q)
            f1++;
        if ((rc = ib_squad_predict(s->squad, s->vocab, &s->f, f0, f1 - f0, have + f0,
                                   sl + f0 * L, el + f0 * L, IB_SQUAD_N_BEST,
                                   IB_SQUAD_MAX_ANSWER_LEN, &pred[q], err)))
            goto done;
        f0 = f1;
    }
    for (size_t q = 0; q < nq; q++) /* a question without features: its nbest is "empty" */
        if (!pred[q] && !(pred[q] = ib_strdup("empty"))) {
            rc = ib_err_set(err, IB_ENOMEM, "bert: out of memory");
            goto done;
        }
    double em, f1v;
    ib_squad_evaluate(s->squad, (const char *const *)pred, &em, &f1v);
    /* evaluate-v1.1.py prints json.dumps({"exact_match": ..., "f1": ...}): ", " and ": "
     * separators, floats as Python's repr */
    char a[40], b[40];
    ib_py_float_repr(em, a, sizeof a);
    ib_py_float_repr(f1v, b, sizeof b);
    if (ib_strbuf_printf(text, "{\"exact_match\": %s, \"f1\": %s}\n", a, b))
        rc = ib_err_set(err, IB_ENOMEM, "bert: out of memory");
    *value = f1v;
done:
    if (pred)
        for (size_t q = 0; q < nq; q++)
            ib_free(pred[q]);
    ib_free(pred);
    ib_free(have);
    ib_free(sl);
    ib_free(el);
    return rc;
}

#define BERT_ENTRY(ID, FRACTION)                                                               \
    {                                                                                          \
        .id = ID, .model_name = "bert",                                                        \
        .title = "BERT-Large on SQuAD v1.1 (F1)",                                              \
        .dataset_name = "SQuAD v1.1 (dev-v1.1.json + vocab.txt)",                              \
        .scenarios = (1u << IB_LG_SCENARIO_SERVER) | (1u << IB_LG_SCENARIO_OFFLINE),           \
        .performance_sample_count = 10833, .server_latency_ns = 130000000,                     \
        .accuracy_metric = "F1", .accuracy_reference = 90.874,                                 \
        .accuracy_target_fraction = FRACTION,                                                  \
        .payload_dtypes = {IB_DTYPE_FLOAT32, IB_DTYPE_UNDEFINED}, .batch_offline = 8,          \
        .batch_server = 8, .server_max_wait_us = 5000, .calib_samples = 8,                     \
        .device_batch_per_unit = {0.5, 0.25}, .device_sample_bytes = 32u << 20,                \
        .synth_default_samples = 8, .n_models = 1, .build_model = bt_build,                    \
        .bind_model = bt_bind, .synthesize = bt_synthesize, .open = bt_open,                   \
        .close = bt_close, .load_sample = bt_load, .collate = bt_collate,                      \
        .payload_max_bytes = bt_payload_max,                                                   \
        .postprocess = bt_post, .accuracy = bt_accuracy,                                       \
    }

const ib_benchmark ib_bench_bert_99 = BERT_ENTRY("bert-99", 0.99);
const ib_benchmark ib_bench_bert_99_9 = BERT_ENTRY("bert-99.9", 0.999);
