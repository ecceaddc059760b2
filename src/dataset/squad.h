/*
 * squad.h - SQuAD v1.1 for BERT (benchmarks.md §1.3, §5): dev-v1.1.json read as the
 * reference's read_squad_examples (is_training=False), the features of
 * convert_examples_to_features (create_squad_data.py / run_squad.py: [CLS] query [SEP] doc
 * [SEP], max_seq_length 384, doc_stride 128, max_query_length 64), whose order is the
 * qsl_idx order (the real dev set gives 10,833 features). The metric is in
 * metrics/squad_f1.h.
 *
 * Thread-safety: objects are immutable once built; functions are reentrant.
 */
#ifndef IB_DATASET_SQUAD_H
#define IB_DATASET_SQUAD_H

#include <stddef.h>
#include <stdint.h>

#include "dataset/wordpiece.h"
#include "inferbench/status.h"

#define IB_SQUAD_MAX_SEQ_LEN   384
#define IB_SQUAD_DOC_STRIDE    128
#define IB_SQUAD_MAX_QUERY_LEN 64

/* One question (SquadExample): id, text, its paragraph and the answer texts. */
typedef struct ib_squad_question {
    const char *id, *question;
    size_t paragraph;     /* index into the paragraph contexts */
    const char **answers; /* answers[].text (n_answers of them) */
    size_t n_answers;
} ib_squad_question;

typedef struct ib_squad ib_squad;

/*
 * Parse a SQuAD v1.1 JSON file (ib_squad_parse on its contents). Errors name the file and
 * the JSON path: malformed JSON (with line/column), a missing or mistyped "data",
 * "paragraphs", "context", "qas", "id", "question" or "answers[].text", invalid UTF-8.
 */
int ib_squad_load(const char *path, ib_squad **out, ib_err *err);
int ib_squad_parse(const char *name, const char *json, size_t len, ib_squad **out, ib_err *err);
void ib_squad_free(ib_squad *s);

size_t ib_squad_questions(const ib_squad *s);
const ib_squad_question *ib_squad_question_at(const ib_squad *s, size_t i);
const char *ib_squad_context(const ib_squad *s, size_t paragraph);

/* Windowing parameters (the reference's flags). */
typedef struct ib_squad_window {
    size_t max_seq_len, doc_stride, max_query_len;
} ib_squad_window;

/* All features in reference order; per feature seq_len entries of each array. */
typedef struct ib_squad_features {
    size_t n, seq_len;
    int32_t *input_ids, *input_mask, *segment_ids; /* [n][seq_len], padding 0 */
    int32_t *token_to_orig; /* [n][seq_len]: doc token (word) index, -1 outside the doc */
    uint8_t *max_context;   /* [n][seq_len]: _check_is_max_context for doc positions */
    size_t *question;       /* [n]: question index (example_index) */
    size_t *span;           /* [n]: doc_span_index within its question */
    size_t *n_tokens;       /* [n]: tokens before padding */
} ib_squad_features;

/*
 * ib_squad_featurize - convert_examples_to_features on every question: the question is
 * tokenized and cut to max_query_len (the reference truncates; no error), the context's
 * doc tokens (split on ' ', \t, \r, \n, U+202F) are WordPiece-tokenized, and windows of
 * max_seq_len - len(query) - 3 tokens start every min(length, doc_stride) tokens. Errors:
 * a vocabulary without "[CLS]" or "[SEP]", max_seq_len <= max_query_len + 3 or a zero
 * doc_stride (IB_EINVAL), IB_ENOMEM.
 */
int ib_squad_featurize(const ib_squad *s, const ib_wp_vocab *v, const ib_squad_window *w,
                       ib_squad_features *out, ib_err *err);
void ib_squad_features_free(ib_squad_features *f);

/*
 * ib_squad_synthesize - write dir/dev-v1.1.json (SYNTHETIC text: n_questions questions, 3
 * per paragraph, 2 paragraphs per article, paragraph 0 longer than 384 tokens) and the
 * matching dir/vocab.txt (BERT's special tokens, made-up words, "##s"/"##ed"), from seed.
 * Answers are spans of their context with answer_start. IB_EINVAL for 0 questions.
 */
int ib_squad_synthesize(const char *dir, size_t n_questions, uint64_t seed, ib_err *err);

#endif

