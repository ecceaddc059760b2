/*
 * test_wordpiece.c - BERT's uncased FullTokenizer (src/dataset/wordpiece.c): the examples of
 * google-research/bert tokenization_test.py worked by hand, the Unicode corner cases
 * (control characters, non-ASCII whitespace, CJK, accents, U+0130, final sigma, Hangul),
 * the 100-character word limit, and every vocab.txt error.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/wordpiece.h"
#include "inferbench/base.h"
#include "test.h"

static void basic_is(const char *in, const char *want)
{
    char *out = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_wp_basic_tokenize(in, strlen(in), &out, &err), &err);
    ASSERT_STR_EQ(out, want);
    ib_free(out);
}

static ib_wp_vocab *vocab_of(const char *text)
{
    ib_wp_vocab *v = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_wp_vocab_parse("vocab.txt", text, strlen(text), &v, &err), &err);
    return v;
}

/* Tokenize and render as the tokens joined by single spaces. */
static void full_is(const ib_wp_vocab *v, const char *in, const char *want)
{
    ib_wp_ids ids = {0};
    ib_err err;
    ASSERT_OK_ERR(ib_wp_tokenize(v, in, strlen(in), &ids, &err), &err);
    char got[4096] = "";
    size_t k = 0;
    for (size_t i = 0; i < ids.len; i++) {
        const char *t = ib_wp_vocab_token(v, ids.id[i]);
        ASSERT_NOT_NULL(t);
        k += (size_t)snprintf(got + k, sizeof got - k, "%s%s", i ? " " : "", t);
        ASSERT_UINT_LE(k, sizeof got - 1);
    }
    ASSERT_STR_EQ(got, want);
    ib_wp_ids_free(&ids);
}

TEST(wordpiece_basic_lower_and_punctuation)
{
    /* tokenization_test.py test_basic_tokenizer_lower */
    basic_is(" \tHeLLo!how  \n Are yoU?  ", "hello ! how are you ?");
    basic_is("H\xC3\xA9llo", "hello"); /* é -> e + U+0301 (Mn, dropped) */
    /* ASCII 33-47/58-64/91-96/123-126 are punctuation even when Unicode says S* ($ ^ ` +) */
    basic_is("$5.00 a^b `c` x+y", "$ 5 . 00 a ^ b ` c ` x + y");
    /* Unicode P* outside ASCII: U+2014 EM DASH, U+00BF INVERTED QUESTION MARK */
    basic_is("a\xE2\x80\x94" "b \xC2\xBFqu\xC3\xA9?", "a \xE2\x80\x94 b \xC2\xBF que ?");
    basic_is("", "");
    basic_is(" \t\n ", "");
}

TEST(wordpiece_basic_chinese_and_clean)
{
    /* test_chinese: spaces around each CJK ideograph */
    basic_is("ah\xE5\x8D\x9A\xE6\x8E\xA8zz", "ah \xE5\x8D\x9A \xE6\x8E\xA8 zz");
    /* _clean_text: control characters (U+0001, U+0085 NEL, U+200B is Cf) vanish without
     * splitting; NUL and U+FFFD too; tab/CR/LF and Zs (U+00A0, U+3000) become spaces */
    basic_is("a\x01" "b c\xC2\x85" "d e\xE2\x80\x8B" "f", "ab cd ef");
    basic_is("g\xEF\xBF\xBDh", "gh");
    basic_is("x\xC2\xA0y\xE3\x80\x80z\rw", "x y z w");
    /* U+2028 LINE SEPARATOR: not BERT whitespace (Zl) nor control, but str.split() splits */
    basic_is("p\xE2\x80\xA8q", "p q");
    /* Hiragana is not in _is_chinese_char: no split */
    basic_is("\xE3\x81\x82\xE3\x81\x84", "\xE3\x81\x82\xE3\x81\x84");
}

TEST(wordpiece_basic_unicode_case_and_accents)
{
    /* U+0130 lowers to "i" U+0307 (full mapping); the mark is Mn and is stripped */
    basic_is("\xC4\xB0stanbul", "istanbul");
    /* final sigma: ΟΔΟΣ -> οδος with U+03C2 at the end, U+03C3 inside */
    basic_is("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3", "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82");
    basic_is("\xCE\xA3\xCE\x91", "\xCF\x83\xCE\xB1");
    /* Ångström sign U+212B -> NFD A + ring -> lower first: U+212B lowers to å, NFD a */
    basic_is("\xE2\x84\xAB", "a");
    /* Hangul 한 (U+D55C) decomposes to jamo U+1112 U+1161 U+11AB */
    basic_is("\xED\x95\x9C", "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB");
    /* a lone combining mark leaves an empty token, which is dropped */
    basic_is("a \xCC\x81 b", "a b");
    /* German sharp s stays (no canonical decomposition), capital Ä -> a */
    basic_is("\xC3\x84" "ra Stra\xC3\x9F" "e", "ara stra\xC3\x9F" "e");
}

TEST(wordpiece_greedy_longest_match)
{
    /* tokenization_test.py test_wordpiece_tokenizer */
    ib_wp_vocab *v = vocab_of("[UNK]\n[CLS]\n[SEP]\nwant\n##want\n##ed\nwa\nun\nrunn\n##ing\n,\n");
    ASSERT_UINT_EQ(ib_wp_vocab_size(v), 11);
    ASSERT_INT_EQ(ib_wp_vocab_unk(v), 0);
    ASSERT_INT_EQ(ib_wp_vocab_id(v, "##ing"), 9);
    ASSERT_INT_EQ(ib_wp_vocab_id(v, "ing"), -1);
    ASSERT_NULL(ib_wp_vocab_token(v, 11));
    ASSERT_NULL(ib_wp_vocab_token(v, -1));
    full_is(v, "", "");
    full_is(v, "unwanted running", "un ##want ##ed runn ##ing");
    /* a word with one uncovered position is [UNK] as a whole (pieces found are dropped) */
    full_is(v, "unwantedX running", "[UNK] runn ##ing");
    /* test_full_tokenizer: lower, accent strip, punctuation split, then WordPiece */
    full_is(v, "UNwant\xC3\xA9" "d,running", "un ##want ##ed , runn ##ing");
    /* longest match first: "want" beats "wa" + ... */
    full_is(v, "want wa", "want wa");
    ib_wp_vocab_free(v);
}

TEST(wordpiece_max_chars_per_word)
{
    ib_wp_vocab *v = vocab_of("[UNK]\na\n##a\n\xC3\xA9t\xC3\xA9\n");
    char w[202];
    memset(w, 'A', 100);
    w[100] = '\0';
    ib_wp_ids ids = {0};
    ib_err err;
    ASSERT_OK_ERR(ib_wp_tokenize(v, w, 100, &ids, &err), &err);
    ASSERT_UINT_EQ(ids.len, 100); /* 100 chars: a ##a x 99 */
    ASSERT_INT_EQ(ids.id[0], 1);
    ASSERT_INT_EQ(ids.id[99], 2);
    ids.len = 0;
    memset(w, 'a', 101);
    ASSERT_OK_ERR(ib_wp_tokenize(v, w, 101, &ids, &err), &err);
    ASSERT_UINT_EQ(ids.len, 1); /* 101 chars > max_input_chars_per_word */
    ASSERT_INT_EQ(ids.id[0], 0);
    ib_wp_ids_free(&ids);
    /* the limit counts code points after basic tokenization: 50 x "é" = 100 bytes... */
    char u[256];
    for (int i = 0; i < 100; i++)
        u[2 * i] = '\xC3', u[2 * i + 1] = '\xA9';
    ASSERT_OK_ERR(ib_wp_tokenize(v, u, 200, &ids, &err), &err); /* -> 100 'e': no "e" piece */
    ASSERT_UINT_EQ(ids.len, 1);
    ASSERT_INT_EQ(ids.id[0], 0);
    ib_wp_ids_free(&ids);
    /* non-ASCII vocabulary entries match after stripping: "été" -> "ete" is absent */
    full_is(v, "\xC3\xA9t\xC3\xA9", "[UNK]");
    ib_wp_vocab_free(v);
}

TEST(wordpiece_bad_utf8_text)
{
    ib_wp_vocab *v = vocab_of("[UNK]\n");
    ib_wp_ids ids = {0};
    ib_err err;
    ASSERT_STATUS(ib_wp_tokenize(v, "ab\xC3(", 4, &ids, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "byte offset 2");
    char *s = NULL;
    ASSERT_STATUS(ib_wp_basic_tokenize("\xED\xA0\x80", 3, &s, &err), IB_EFORMAT); /* surrogate */
    ASSERT_NULL(s);
    ASSERT_STATUS(ib_wp_basic_tokenize("\xC0\xAF", 2, &s, &err), IB_EFORMAT); /* overlong */
    ib_wp_ids_free(&ids);
    ib_wp_vocab_free(v);
}

static void vocab_bad(const char *text, size_t len, const char *want)
{
    ib_wp_vocab *v = (ib_wp_vocab *)1;
    ib_err err;
    ASSERT_STATUS(ib_wp_vocab_parse("vocab.txt", text, len, &v, &err), IB_EFORMAT);
    ASSERT_NULL(v);
    ASSERT_STR_CONTAINS(err.msg, want);
}

TEST(wordpiece_vocab_bad_input)
{
    vocab_bad("", 0, "vocab.txt: empty vocabulary");
    vocab_bad("a\nb\n", 4, "no \"[UNK]\"");
    vocab_bad("[UNK]\na\n\nb\n", 11, "vocab.txt:3: empty line");
    vocab_bad("[UNK]\nab\nc\nab\n", 14, "vocab.txt:4: token \"ab\" already listed on line 2");
    vocab_bad("[UNK]\nx\xFFy\n", 10, "vocab.txt:2: invalid UTF-8 at byte 2");
    ib_wp_vocab *v = (ib_wp_vocab *)1;
    ib_err err;
    char path[512];
    snprintf(path, sizeof path, "%s/absent-vocab.txt", ib_test_tmpdir());
    ASSERT_INT_NE(ib_wp_vocab_load(path, &v, &err), IB_OK);
    ASSERT_NULL(v);
    ASSERT_STR_CONTAINS(err.msg, "absent-vocab.txt");
}

TEST(wordpiece_vocab_file_crlf_and_ids)
{
    /* CRLF line ends and a last line without '\n' load (token.strip()); ids = line - 1 */
    char path[512];
    snprintf(path, sizeof path, "%s/vocab.txt", ib_test_tmpdir());
    const char *text = "[PAD]\r\n[UNK]\r\n##s\r\ncat";
    ib_err err;
    ASSERT_OK_ERR(ib_file_write_all(path, text, strlen(text), &err), &err);
    ib_wp_vocab *v = NULL;
    ASSERT_OK_ERR(ib_wp_vocab_load(path, &v, &err), &err);
    ASSERT_UINT_EQ(ib_wp_vocab_size(v), 4);
    ASSERT_INT_EQ(ib_wp_vocab_unk(v), 1);
    ASSERT_INT_EQ(ib_wp_vocab_id(v, "cat"), 3);
    ASSERT_STR_EQ(ib_wp_vocab_token(v, 2), "##s");
    full_is(v, "Cats, CAT", "cat ##s [UNK] cat");
    ib_wp_vocab_free(v);
}
