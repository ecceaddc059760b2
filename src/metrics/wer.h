/*
 * wer.h - the RNN-T accuracy metric (benchmarks.md §1.5): transcript normalisation to the
 * 28-character alphabet as the reference Manifest does it (parts/manifest.py
 * normalize_string over parts/text/cleaners.py english_cleaners), token ids -> text as
 * helpers.py __rnnt_decoder_predictions_tensor, and the word error rate of metrics.py
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

/* The reference alphabet (rnnt.toml [labels]): id 0 = ' ', 1..26 = 'a'..'z', 27 = '\''; the
 * blank is id 28 (add_blank_label appends it), the joint has 29 outputs. */
#define IB_WER_LABELS " abcdefghijklmnopqrstuvwxyz'"
#define IB_WER_N_LABELS 28
#define IB_WER_BLANK 28

/*
 * ib_wer_normalize - normalize_string(s, labels, table) of manifest.py on UTF-8 text:
 * english_cleaners (ASCII transliteration, lowercase, abbreviation expansion "mr." ->
 * "mister" etc., string.punctuation except + & and the labels' ' to spaces, "&" -> " and ",
 * "+" -> " plus ", whitespace runs -> one space), strip, then every character outside the
 * 28 labels dropped. Limits (documented in docs/rnnt.md): transliteration covers Latin-1
 * letters only (other non-ASCII code points are dropped), and digits are not spelled out as
 * normalize_numbers does (they are dropped); LibriSpeech transcripts contain neither.
 * Returns a new string (ib_free) or NULL on out of memory.
 */
char *ib_wer_normalize(const char *s);

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
