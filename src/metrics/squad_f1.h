/*
 * squad_f1.h - F1 and exact match of the official SQuAD evaluate-v1.1.py (benchmarks.md
 * §1.3), on UTF-8 strings. Thread-safety: pure functions.
 */
#ifndef IB_METRICS_SQUAD_F1_H
#define IB_METRICS_SQUAD_F1_H

#include "dataset/squad.h"

/* evaluate-v1.1.py: normalize_answer (lower, drop string.punctuation, drop the words
 * a/an/the, collapse whitespace) of the UTF-8 s as a new string (ib_free); NULL on invalid
 * UTF-8 or out of memory. */
char *ib_squad_normalize(const char *s);
/* f1_score and exact_match_score of one prediction against one ground truth (0 on invalid
 * UTF-8). */
double ib_squad_f1(const char *prediction, const char *truth);
int ib_squad_exact(const char *prediction, const char *truth);

/*
 * ib_squad_evaluate - evaluate(): over every question, the max of EM and F1 against its
 * answers, 100 * mean; predictions[i] is question i's answer or NULL (unanswered, scores
 * 0 as in the script).
 */
void ib_squad_evaluate(const ib_squad *s, const char *const *predictions, double *exact_match,
                       double *f1);

#endif
