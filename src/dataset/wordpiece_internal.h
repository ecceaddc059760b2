/*
 * wordpiece_internal.h - pieces of the BERT tokenizers (wordpiece.c) for the SQuAD
 * post-processing (answer text mapping, not written yet) to reuse: a growable code point buffer and
 * BasicTokenizer.tokenize with do_lower_case=True on code points.
 */
#ifndef IB_DATASET_WORDPIECE_INTERNAL_H
#define IB_DATASET_WORDPIECE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct ib_cpbuf {
    uint32_t *cp;
    size_t len, cap;
} ib_cpbuf;

/* Append n code points (IB_OK or IB_ENOMEM). */
int ib_cpbuf_append(ib_cpbuf *b, const uint32_t *cp, size_t n);
void ib_cpbuf_free(ib_cpbuf *b);

/*
 * ib_bert_basic_tokenize_join - " ".join(BasicTokenizer(do_lower_case=True).tokenize(text))
 * of google-research/bert tokenization.py (what accuracy-squad.py's get_final_text runs on
 * the original text): _clean_text, spaces around CJK ideographs, split on whitespace, per
 * token Python's str.lower() (Final_Sigma included) and NFD without Mn, split off each
 * punctuation character, drop empty tokens. Appends to out.
 */
int ib_bert_basic_tokenize_join(const uint32_t *text, size_t n, ib_cpbuf *out);

#endif
