/*
 * squad_predict.h - the answer text of one SQuAD question from the start/end logits of its
 * features, as the reference's accuracy-squad.py (write_predictions of run_squad.py) picks
 * it (benchmarks.md §1.3): the n_best (20) highest start and end logits of each feature,
 * pairs kept when both ends are doc tokens, the start has its max context, end >= start
 * and the span is at most max_answer_len (30) tokens; the best start + end logit sum wins
 * (the first in the reference's enumeration order on ties: nbest[0] of the sorted list);
 * its WordPiece text (" ##" joined) is mapped back onto the original words by
 * get_final_text. "empty" when no pair qualifies, as in the reference.
 * Thread-safety: reentrant.
 */
#ifndef IB_DATASET_SQUAD_PREDICT_H
#define IB_DATASET_SQUAD_PREDICT_H

#include "dataset/squad.h"
#include "dataset/wordpiece.h"

#define IB_SQUAD_N_BEST 20
#define IB_SQUAD_MAX_ANSWER_LEN 30

/*
 * ib_squad_predict - features first..first+count-1 of f (all of one question, in feature
 * order) with their logits start[k * seq_len + t], end[...] (k = feature - first); the
 * answer as a new UTF-8 string (*answer, ib_free). present (NULL = all) marks the features
 * whose logits exist: accuracy-squad.py skips a feature with no result in the log and
 * answers from the others ("empty" when none is left). Errors: features of different
 * questions, IB_ENOMEM.
 */
int ib_squad_predict(const ib_squad *s, const ib_wp_vocab *v, const ib_squad_features *f,
                     size_t first, size_t count, const uint8_t *present, const float *start,
                     const float *end, size_t n_best, size_t max_answer_len, char **answer,
                     ib_err *err);

/* get_final_text(pred_text, orig_text, do_lower_case=True) on UTF-8 strings (ib_free);
 * NULL on invalid UTF-8 or out of memory. */
char *ib_squad_final_text(const char *pred_text, const char *orig_text);

#endif
