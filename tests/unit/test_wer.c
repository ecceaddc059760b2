/*
 * test_wer.c - the RNN-T metric (src/metrics/wer.c): normalize_string / english_cleaners of
 * the reference manifest on hand-worked strings, ids -> text with a bad id, metrics.py's
 * word Levenshtein and word_error_rate on hand-counted fixtures, Python float repr and
 * accuracy_eval.py's line.
 */
#include <math.h>
#include <string.h>

#include "inferbench/base.h"
#include "metrics/wer.h"
#include "test.h"

static void norm_is(const char *in, const char *want)
{
    char *got = ib_transcript_normalize(in);
    ASSERT_NOT_NULL(got);
    ASSERT_STR_EQ(got, want);
    ib_free(got);
}

TEST(wer_normalize_librispeech_lines)
{
    /* a dev-clean transcript after preprocessing_utils.py's lower().strip() */
    norm_is("he was in a fevered state of mind owing to the blight his wife's action",
            "he was in a fevered state of mind owing to the blight his wife's action");
    /* raw trans.txt text: upper case, trailing newline, double spaces */
    norm_is("  HE WAS  IN A\tFEVERED STATE\n", "he was in a fevered state");
}

TEST(wer_normalize_cleaners)
{
    /* punctuation -> space, then whitespace collapsed; the apostrophe is a label and stays */
    norm_is("Hello, world! It's \"fine\"-ish.", "hello world it's fine ish");
    /* & and + are not in the table: " and " / " plus " */
    norm_is("salt&pepper 1+1", "salt and pepper  plus ");
    /* abbreviations: \bmr\. -> mister (mrs first), only at a word boundary */
    norm_is("Mr. and Mrs. Smith met Dr. Who on St. James St.",
            "mister and misess smith met doctor who on saint james saint");
    norm_is("first. ft. capt.", "first fort captain");
    /* Latin-1 letters transliterated; curly apostrophe -> '; other code points dropped */
    norm_is("Caf\xc3\xa9 na\xc3\xafve don\xe2\x80\x99t", "cafe naive don't");
    /* digits are dropped (normalize_numbers is not implemented): a double space remains
     * where the reference would have spelt the number, which split() ignores */
    norm_is("room 101 now", "room  now");
    norm_is("", "");
    norm_is("?!.", "");
}

TEST(wer_ids_to_text)
{
    int64_t ids[] = {8, 9, 0, 27, 19};
    char *t = NULL;
    ib_err err;
    ASSERT_OK(ib_wer_ids_to_text(ids, 5, &t, &err));
    ASSERT_STR_EQ(t, "hi 's");
    ib_free(t);
    int64_t bad[] = {1, 28};
    ASSERT_STATUS(ib_wer_ids_to_text(bad, 2, &t, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "token 1 is id 28");
    int64_t neg[] = {-1};
    ASSERT_STATUS(ib_wer_ids_to_text(neg, 1, &t, &err), IB_EFORMAT);
}

static size_t dist(const char *h, const char *r, size_t *words)
{
    size_t d = 0;
    ASSERT_OK(ib_wer_distance(h, r, &d, words));
    return d;
}

TEST(wer_levenshtein_fixtures)
{
    size_t w = 0;
    ASSERT_UINT_EQ(dist("the cat sat", "the cat sat", &w), 0);
    ASSERT_UINT_EQ(w, 3);
    /* one substitution */
    ASSERT_UINT_EQ(dist("the bat sat", "the cat sat", &w), 1);
    /* one deletion, one insertion */
    ASSERT_UINT_EQ(dist("the sat", "the cat sat", &w), 1);
    ASSERT_UINT_EQ(dist("the cat sat down", "the cat sat", &w), 1);
    /* empty hypothesis: every reference word deleted */
    ASSERT_UINT_EQ(dist("", "a b c d", &w), 4);
    ASSERT_UINT_EQ(w, 4);
    ASSERT_UINT_EQ(dist("a b c", "", &w), 3);
    ASSERT_UINT_EQ(w, 0);
    /* kitten/sitting at word level: k i t t e n vs s i t t i n g = 3 */
    ASSERT_UINT_EQ(dist("k i t t e n", "s i t t i n g", &w), 3);
    /* words split on any whitespace run; partial-word matches do not count */
    ASSERT_UINT_EQ(dist("  ab\tc  ", "ab c", &w), 0);
    ASSERT_UINT_EQ(dist("abc", "ab", &w), 1);
    /* a shifted sentence: "b c d e" vs "a b c d": delete a, insert e = 2 */
    ASSERT_UINT_EQ(dist("b c d e", "a b c d", &w), 2);
}

TEST(wer_word_error_rate)
{
    ib_wer_acc a = {0};
    ASSERT_OK(ib_wer_acc_add(&a, "the bat sat", "the cat sat")); /* 1 / 3 */
    ASSERT_OK(ib_wer_acc_add(&a, "hello", "hello world"));      /* 1 / 2 */
    ASSERT_OK(ib_wer_acc_add(&a, "x", "y z a b c"));            /* 5 / 5 */
    ASSERT_UINT_EQ(a.scores, 7);
    ASSERT_UINT_EQ(a.words, 10);
    ASSERT_DBL_EQ(ib_wer_acc_value(&a), 0.7);
    ib_wer_acc z = {0};
    ASSERT_TRUE(isinf(ib_wer_acc_value(&z)));
}

TEST(wer_line)
{
    char line[160];
    /* 7 errors over 10 words: Python prints 70.0 and 30.000000000000004 ((1 - 0.7) * 100) */
    ib_wer_line(0.7, line, sizeof line);
    ASSERT_STR_EQ(line, "Word Error Rate: 70.0%, accuracy=30.000000000000004%\n");
    ib_wer_line(0.0, line, sizeof line);
    ASSERT_STR_EQ(line, "Word Error Rate: 0.0%, accuracy=100.0%\n");
    ib_wer_line(INFINITY, line, sizeof line);
    ASSERT_STR_EQ(line, "Word Error Rate: inf%, accuracy=-inf%\n");
}
