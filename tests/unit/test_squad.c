/*
 * test_squad.c - SQuAD v1.1 (src/dataset/squad.c, src/metrics/squad_f1.c): a hand-made
 * dev-v1.1-format file parsed, featurized with a small window whose spans, max-context
 * flags and token maps are worked out by hand as convert_examples_to_features computes
 * them, every bad-input error, and evaluate-v1.1.py's normalisation / F1 / EM on fixtures.
 */
#include <stdio.h>
#include <string.h>

#include "dataset/squad.h"
#include "dataset/wordpiece.h"
#include "inferbench/base.h"
#include "metrics/squad_f1.h"
#include "test.h"

/* q0 and q1 share paragraph 0; paragraph 1 has a whitespace-only context (no features, as
 * in the reference); q2's context is one word. "\u202f" is a doc-token separator. */
static const char *k_json =
    "{\"version\": \"1.1\", \"data\": ["
    " {\"title\": \"T1\", \"paragraphs\": ["
    "  {\"context\": \"a b  running\\tc\\u202fd e f\", \"qas\": ["
    "   {\"id\": \"q0\", \"question\": \"X Y!\", \"answers\": [{\"answer_start\": 0, \"text\": "
    "\"a b\"}, {\"answer_start\": 2, \"text\": \"b running\"}]},"
    "   {\"id\": \"q1\", \"question\": \"Y\", \"answers\": [{\"text\": \"f\"}]}]},"
    "  {\"context\": \"  \\n \", \"qas\": ["
    "   {\"id\": \"q2\", \"question\": \"x\", \"answers\": [{\"text\": \"e\"}]}]}]},"
    " {\"title\": \"T2\", \"paragraphs\": ["
    "  {\"context\": \"E\", \"qas\": ["
    "   {\"id\": \"q3\", \"question\": \"x\", \"answers\": [{\"text\": \"the cat sat down\"}]}]}]}"
    "]}";

static const char *k_vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\nb\nc\nd\ne\nf\nrunn\n##ing\nx\ny\n!\n";

static ib_squad *parse_ok(const char *json)
{
    ib_squad *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_squad_parse("dev-v1.1.json", json, strlen(json), &s, &err), &err);
    return s;
}

TEST(squad_parse_examples)
{
    ib_squad *s = parse_ok(k_json);
    ASSERT_UINT_EQ(ib_squad_questions(s), 4);
    const ib_squad_question *q = ib_squad_question_at(s, 0);
    ASSERT_STR_EQ(q->id, "q0");
    ASSERT_STR_EQ(q->question, "X Y!");
    ASSERT_UINT_EQ(q->n_answers, 2);
    ASSERT_STR_EQ(q->answers[1], "b running");
    ASSERT_UINT_EQ(ib_squad_question_at(s, 2)->paragraph, 1);
    ASSERT_UINT_EQ(ib_squad_question_at(s, 3)->paragraph, 2);
    ASSERT_STR_EQ(ib_squad_context(s, 2), "E");
    ASSERT_NULL(ib_squad_context(s, 3));
    ASSERT_NULL(ib_squad_question_at(s, 4));
    ib_squad_free(s);
}

static void ints_are(const int32_t *got, const int32_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ASSERT_INT_EQ(got[i], want[i]);
}

TEST(squad_features_windowing)
{
    ib_squad *s = parse_ok(k_json);
    ib_wp_vocab *v = NULL;
    ib_err err;
    ASSERT_OK(ib_wp_vocab_parse("vocab.txt", k_vocab, strlen(k_vocab), &v, &err));
    /* max_seq 12, stride 2, query 2: "X Y!" -> x y ! cut to x y; doc tokens a b runn ##ing c
     * d e f (words 0 1 2 2 3 4 5 6); room 12 - 2 - 3 = 7 -> spans (0,7), (2,6) */
    ib_squad_window w = {12, 2, 2};
    ib_squad_features f;
    ASSERT_OK_ERR(ib_squad_featurize(s, v, &w, &f, &err), &err);
    /* q0: 2 features, q1: "y" -> room 8 -> (0,8) one feature, q2: none, q3: one */
    ASSERT_UINT_EQ(f.n, 4);
    ASSERT_UINT_EQ(f.seq_len, 12);
    ASSERT_UINT_EQ(f.question[0], 0);
    ASSERT_UINT_EQ(f.question[1], 0);
    ASSERT_UINT_EQ(f.question[2], 1);
    ASSERT_UINT_EQ(f.question[3], 3);
    ASSERT_UINT_EQ(f.span[1], 1);
    ASSERT_UINT_EQ(f.span[3], 0);
    const int32_t ids0[12] = {2, 12, 13, 3, 4, 5, 10, 11, 6, 7, 8, 3};
    const int32_t ids1[12] = {2, 12, 13, 3, 10, 11, 6, 7, 8, 9, 3, 0};
    const int32_t seg0[12] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    const int32_t seg1[12] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0};
    const int32_t mask1[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
    const int32_t orig0[12] = {-1, -1, -1, -1, 0, 1, 2, 2, 3, 4, 5, -1};
    const int32_t orig1[12] = {-1, -1, -1, -1, 2, 2, 3, 4, 5, 6, -1, -1};
    ints_are(f.input_ids, ids0, 12);
    ints_are(f.input_ids + 12, ids1, 12);
    ints_are(f.segment_ids, seg0, 12);
    ints_are(f.segment_ids + 12, seg1, 12);
    ints_are(f.input_mask + 12, mask1, 12);
    ints_are(f.token_to_orig, orig0, 12);
    ints_are(f.token_to_orig + 12, orig1, 12);
    ASSERT_UINT_EQ(f.n_tokens[0], 12);
    ASSERT_UINT_EQ(f.n_tokens[1], 11);
    /* _check_is_max_context: doc positions 2..4 score higher in span 0 (e.g. pos 4: span 0
     * min(4,2)+0.07 = 2.07 > span 1 min(2,3)+0.06 = 2.06), 5..7 in span 1 */
    const uint8_t mc0[12] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0};
    const uint8_t mc1[12] = {0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0};
    for (int i = 0; i < 12; i++) {
        ASSERT_UINT_EQ(f.max_context[i], mc0[i]);
        ASSERT_UINT_EQ(f.max_context[12 + i], mc1[i]);
    }
    /* q1: [CLS] y [SEP] a b runn ##ing c d e f -> 11 tokens + [SEP] = 12 */
    const int32_t ids2[12] = {2, 13, 3, 4, 5, 10, 11, 6, 7, 8, 9, 3};
    ints_are(f.input_ids + 24, ids2, 12);
    /* q3: "E" lower-cased */
    ASSERT_INT_EQ(f.input_ids[3 * 12 + 3], 8);
    ASSERT_UINT_EQ(f.n_tokens[3], 5);
    ib_squad_features_free(&f);

    /* the reference defaults: one window each */
    ib_squad_window def = {IB_SQUAD_MAX_SEQ_LEN, IB_SQUAD_DOC_STRIDE, IB_SQUAD_MAX_QUERY_LEN};
    ASSERT_OK_ERR(ib_squad_featurize(s, v, &def, &f, &err), &err);
    ASSERT_UINT_EQ(f.n, 3);
    ASSERT_UINT_EQ(f.n_tokens[0], 3 + 3 + 8);
    ib_squad_features_free(&f);
    ib_wp_vocab_free(v);
    ib_squad_free(s);
}

TEST(squad_features_long_context_stride)
{
    /* 1000 one-token words, query of 1 token: room 384 - 4 = 380; spans start 0, 128, 256,
     * 384, 512, 640 (640 + 360 = 1000 ends) -> 6 features */
    static char json[8192];
    size_t k = (size_t)snprintf(json, sizeof json, "{\"data\":[{\"paragraphs\":[{\"context\":\"");
    for (int i = 0; i < 1000; i++)
        k += (size_t)snprintf(json + k, sizeof json - k, "a ");
    snprintf(json + k, sizeof json - k,
             "\",\"qas\":[{\"id\":\"l\",\"question\":\"x\",\"answers\":[]}]}]}]}");
    ib_squad *s = parse_ok(json);
    ib_wp_vocab *v = NULL;
    ib_err err;
    ASSERT_OK(ib_wp_vocab_parse("vocab.txt", k_vocab, strlen(k_vocab), &v, &err));
    ib_squad_window def = {IB_SQUAD_MAX_SEQ_LEN, IB_SQUAD_DOC_STRIDE, IB_SQUAD_MAX_QUERY_LEN};
    ib_squad_features f;
    ASSERT_OK_ERR(ib_squad_featurize(s, v, &def, &f, &err), &err);
    ASSERT_UINT_EQ(f.n, 6);
    ASSERT_UINT_EQ(f.n_tokens[0], 384);
    ASSERT_UINT_EQ(f.n_tokens[5], 3 + 1 + 360);
    ASSERT_INT_EQ(f.token_to_orig[5 * 384 + 3], 640);
    ASSERT_INT_EQ(f.token_to_orig[1 * 384 + 3], 128);
    ib_squad_features_free(&f);
    ib_wp_vocab_free(v);
    ib_squad_free(s);
}

static void squad_bad(const char *json, const char *want)
{
    ib_squad *s = (ib_squad *)1;
    ib_err err;
    ASSERT_STATUS(ib_squad_parse("dev-v1.1.json", json, strlen(json), &s, &err), IB_EFORMAT);
    ASSERT_NULL(s);
    ASSERT_STR_CONTAINS(err.msg, want);
}

TEST(squad_bad_input)
{
    squad_bad("{\"data\": [", "dev-v1.1.json:1:");
    squad_bad("{\"version\": \"1.1\"}", "\"data\" is missing");
    squad_bad("{\"data\": {}}", "\"data\" is not an array");
    squad_bad("{\"data\": [{\"paragraphs\": 3}]}", "data[0].paragraphs: not an array");
    squad_bad("{\"data\": [{\"paragraphs\": [{\"qas\": []}]}]}",
              "data[0].paragraphs[0].context: missing");
    squad_bad("{\"data\": [{\"paragraphs\": [{\"context\": \"c\"}]}]}",
              "data[0].paragraphs[0].qas: missing");
    squad_bad("{\"data\": [{\"paragraphs\": [{\"context\": \"c\", \"qas\": [{\"id\": 7, "
              "\"question\": \"q\", \"answers\": []}]}]}]}",
              "qas[0].id: not a string");
    squad_bad("{\"data\": [{\"paragraphs\": [{\"context\": \"c\", \"qas\": [{\"id\": \"i\", "
              "\"question\": \"q\"}]}]}]}",
              "qas[0].answers: missing");
    squad_bad("{\"data\": [{\"paragraphs\": [{\"context\": \"c\", \"qas\": [{\"id\": \"i\", "
              "\"question\": \"q\", \"answers\": [{\"answer_start\": 0}]}]}]}]}",
              "answers[0].text: missing");
    squad_bad("{\"data\": [{\"paragraphs\": [{\"context\": \"\xFF\", \"qas\": []}]}]}",
              "malformed JSON");

    /* a vocabulary without [CLS] / [SEP], an impossible window */
    ib_squad *s = parse_ok(k_json);
    ib_wp_vocab *v = NULL;
    ib_err err;
    ASSERT_OK(ib_wp_vocab_parse("vocab.txt", "[UNK]\n[SEP]\n", 12, &v, &err));
    ib_squad_features f;
    ib_squad_window def = {IB_SQUAD_MAX_SEQ_LEN, IB_SQUAD_DOC_STRIDE, IB_SQUAD_MAX_QUERY_LEN};
    ASSERT_STATUS(ib_squad_featurize(s, v, &def, &f, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "[CLS]");
    ib_wp_vocab_free(v);
    ASSERT_OK(ib_wp_vocab_parse("vocab.txt", k_vocab, strlen(k_vocab), &v, &err));
    ib_squad_window bad = {10, 1, 7};
    ASSERT_STATUS(ib_squad_featurize(s, v, &bad, &f, &err), IB_EINVAL);
    bad = (ib_squad_window){384, 0, 64};
    ASSERT_STATUS(ib_squad_featurize(s, v, &bad, &f, &err), IB_EINVAL);
    ib_wp_vocab_free(v);
    ib_squad_free(s);
    ib_squad *x = (ib_squad *)1;
    ASSERT_INT_NE(ib_squad_load("/nonexistent/dev-v1.1.json", &x, &err), IB_OK);
    ASSERT_NULL(x);
}

static void norm_is(const char *in, const char *want)
{
    char *got = ib_squad_normalize(in);
    ASSERT_NOT_NULL(got);
    ASSERT_STR_EQ(got, want);
    ib_free(got);
}

TEST(squad_normalize_answer)
{
    norm_is("The  Quick, brown fox!", "quick brown fox");
    norm_is("An apple a day", "apple day");
    norm_is("Ana's", "anas");         /* punctuation goes first: no article left */
    norm_is("(the)", "");             /* ... and then "the" is a whole word */
    norm_is("the_end a-n", "theend"); /* '_', '-' are punctuation; "an" is then an article */
    norm_is("\xC3\x89"
            "COLE",
            "\xC3\xA9"
            "cole"); /* lower() but no accent stripping */
    /* re's Unicode \b: "theé" is one word; EM DASH is neither \w nor string.punctuation */
    norm_is("the\xC3\xA9 x", "the\xC3\xA9 x");
    norm_is("the\xE2\x80\x94"
            "end",
            "\xE2\x80\x94"
            "end");
    norm_is("cat\xC2\xA0sat\xE3\x80\x80", "cat sat"); /* str.split(): NBSP, U+3000 */
    ASSERT_NULL(ib_squad_normalize("\xFF"));
}

TEST(squad_f1_exact_match)
{
    ASSERT_NEAR(ib_squad_f1("the cat sat", "a cat sat down"), 0.8, 1e-12);
    ASSERT_NEAR(ib_squad_f1("x x y", "x y y"), 2.0 / 3.0, 1e-12); /* multiset intersection */
    ASSERT_DBL_EQ(ib_squad_f1("dog", "cat"), 0.0);
    ASSERT_DBL_EQ(ib_squad_f1("Paris!", "paris"), 1.0);
    ASSERT_INT_EQ(ib_squad_exact("Paris!", "the paris"), 1);
    ASSERT_INT_EQ(ib_squad_exact("Paris", "Paris France"), 0);
    /* both empty after normalisation: EM 1 ("" == ""), F1 0 (num_same == 0) */
    ASSERT_INT_EQ(ib_squad_exact("", "the"), 1);
    ASSERT_DBL_EQ(ib_squad_f1("", "the"), 0.0);
    ASSERT_DBL_EQ(ib_squad_f1("\xFF", "x"), 0.0);
}

TEST(squad_evaluate_fixture)
{
    ib_squad *s = parse_ok(k_json);
    /* q0 matches its second answer, q1 wrong, q2 unanswered, q3 F1 0.8 */
    const char *pred[4] = {"B running.", "e", NULL, "the cat sat"};
    double em, f1;
    ib_squad_evaluate(s, pred, &em, &f1);
    ASSERT_NEAR(em, 25.0, 1e-12);
    ASSERT_NEAR(f1, 100.0 * (1.0 + 0.8) / 4.0, 1e-12);
    ib_squad_free(s);
}
