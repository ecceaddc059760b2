/*
 * wer.h - the RNN-T accuracy metric (benchmarks.md §1.5): token ids -> text as helpers.py
 * __rnnt_decoder_predictions_tensor (the alphabet and the transcript normalisation are in
 * text/transcript.h), and the word error rate of metrics.py
 * (word-level Levenshtein over str.split() words, summed over utterances, divided by the
 * reference word count), plus the line accuracy_eval.py prints.
 *
 * Thread-safety: pure functions; an ib_wer_acc belongs to one thread.
 */
#ifndef IB_METRICS_WER_H
#define IB_METRICS_WER_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"
#include "text/transcript.h"

/* Label ids -> text (the hypothesis string). Ids outside 0..27 are an error (the
 * reference's labels_map raises KeyError): IB_EFORMAT naming the position. *out: ib_free. */
int ib_wer_ids_to_text(const int64_t *ids, size_t n, char **out, ib_err *err);

/*
 * ib_wer_distance - metrics.py __levenshtein over h.split() and r.split() (words separated
 * by runs of ASCII whitespace); *ref_words = len(r.split()). IB_ENOMEM only.
 */
int ib_wer_distance(const char *hyp, const char *ref, size_t *distance, size_t *ref_words);

/* word_error_rate(): sum of distances over sum of reference words (inf when 0 words). */
typedef struct ib_wer_acc {
    uint64_t scores, words, utterances;
} ib_wer_acc;

int ib_wer_acc_add(ib_wer_acc *a, const char *hyp, const char *ref);
double ib_wer_acc_value(const ib_wer_acc *a);

/* accuracy_eval.py's line: "Word Error Rate: {wer*100}%, accuracy={(1-wer)*100}%" + "\n". */
void ib_wer_line(double wer, char *out, size_t n);

#endif
