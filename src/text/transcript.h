/*
 * transcript.h - the RNN-T alphabet and the transcript normalisation of the reference Manifest
 * (parts/manifest.py normalize_string over parts/text/cleaners.py english_cleaners): text
 * helpers the LibriSpeech loader and the WER metric share (src/text, below both).
 * Thread-safety: pure functions.
 */
#ifndef IB_TEXT_TRANSCRIPT_H
#define IB_TEXT_TRANSCRIPT_H

#include <stdbool.h>

/* The reference alphabet (rnnt.toml [labels]): id 0 = ' ', 1..26 = 'a'..'z', 27 = '\''; the
 * blank is id 28 (add_blank_label appends it), the joint has 29 outputs. */
#define IB_TRANSCRIPT_LABELS " abcdefghijklmnopqrstuvwxyz'"
#define IB_TRANSCRIPT_N_LABELS 28
#define IB_TRANSCRIPT_BLANK 28

/* Python's str whitespace in the ASCII range (str.split(), re's \s): \t\n\v\f\r,
 * \x1c-\x1f and the space. */
static inline bool ib_transcript_py_space(unsigned char c)
{
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
}

/*
 * ib_transcript_normalize - normalize_string(s, labels, table) of manifest.py on UTF-8 text:
 * english_cleaners (ASCII transliteration, lowercase, abbreviation expansion "mr." ->
 * "mister" etc., string.punctuation except + & and the labels' ' to spaces, "&" -> " and ",
 * "+" -> " plus ", whitespace runs -> one space), strip, then every character outside the
 * 28 labels dropped. Limits (documented in docs/rnnt.md): transliteration covers Latin-1
 * letters only (other non-ASCII code points are dropped), and digits are not spelled out as
 * normalize_numbers does (they are dropped); LibriSpeech transcripts contain neither.
 * Returns a new string (ib_free) or NULL on out of memory.
 */
char *ib_transcript_normalize(const char *s);

#endif
