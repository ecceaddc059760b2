/*
 * wordpiece.h - BERT's uncased FullTokenizer (benchmarks.md §1.3: the reference featurizes
 * SQuAD with google-research/bert tokenization.py, vocab.txt of bert-large-uncased):
 *
 *   - vocabulary: vocab.txt, one token per line, id = line number from 0 (load_vocab);
 *   - BasicTokenizer(do_lower_case=True): _clean_text (drop NUL, U+FFFD and control
 *     characters, BERT whitespace -> ' '), spaces around CJK ideographs, split on Python
 *     whitespace, str.lower() + NFD without Mn (_run_strip_accents), each punctuation
 *     character its own token;
 *   - WordpieceTokenizer: greedy longest match first with "##" continuation pieces, a word
 *     over 100 code points or with no full cover becomes [UNK].
 *
 * The Unicode facts come from text/unicode.h. Thread-safety: a loaded vocabulary is
 * read-only; tokenize may run concurrently on one vocabulary.
 */
#ifndef IB_DATASET_WORDPIECE_H
#define IB_DATASET_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

#define IB_WP_MAX_CHARS_PER_WORD 100 /* WordpieceTokenizer max_input_chars_per_word */

typedef struct ib_wp_vocab ib_wp_vocab;

/* Token ids (ib_wp_ids_free). */
typedef struct ib_wp_ids {
    int32_t *id;
    size_t len, cap;
} ib_wp_ids;

/*
 * Load vocab.txt at path (ib_wp_vocab_parse on its contents). Errors name the file and line:
 * invalid UTF-8, an empty line, a token listed twice, no "[UNK]" line, an empty file,
 * more than INT32_MAX tokens.
 */
int ib_wp_vocab_load(const char *path, ib_wp_vocab **out, ib_err *err);
/* The same on text[0..len) held in memory; `name` is the file name in messages. Each line
 * is stripped of ASCII whitespace (load_vocab's token.strip(); CRLF files load). */
int ib_wp_vocab_parse(const char *name, const char *text, size_t len, ib_wp_vocab **out,
                      ib_err *err);
void ib_wp_vocab_free(ib_wp_vocab *v);

size_t ib_wp_vocab_size(const ib_wp_vocab *v);
/* Id of the NUL-terminated UTF-8 token, or -1 when absent. */
int32_t ib_wp_vocab_id(const ib_wp_vocab *v, const char *token);
/* Token of id (NULL when out of range). */
const char *ib_wp_vocab_token(const ib_wp_vocab *v, int32_t id);
/* Id of "[UNK]" (always present in a loaded vocabulary). */
int32_t ib_wp_vocab_unk(const ib_wp_vocab *v);

/*
 * ib_wp_tokenize - FullTokenizer.tokenize of the UTF-8 text[0..n), token ids appended to
 * out. IB_EFORMAT (with the byte offset) on malformed UTF-8, IB_ENOMEM.
 */
int ib_wp_tokenize(const ib_wp_vocab *v, const char *text, size_t n, ib_wp_ids *out,
                   ib_err *err);

/*
 * ib_wp_basic_tokenize - BasicTokenizer(do_lower_case=True).tokenize of the UTF-8
 * text[0..n) as one new string, the tokens joined by single spaces (ib_free). For tests and
 * the SQuAD answer mapping.
 */
int ib_wp_basic_tokenize(const char *text, size_t n, char **out, ib_err *err);

int ib_wp_ids_push(ib_wp_ids *ids, int32_t id);
void ib_wp_ids_free(ib_wp_ids *ids);

#endif
