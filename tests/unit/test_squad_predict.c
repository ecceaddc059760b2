/*
 * test_squad_predict.c - the reference's answer selection (src/metrics/squad_predict.c):
 * get_final_text on its docstring example and on accents / control characters, and
 * write_predictions on hand-set logits (query positions and over-long spans rejected,
 * ties in the reference's enumeration order, WordPiece text mapped back, "empty").
 */
#include <string.h>

#include "dataset/squad.h"
#include "dataset/wordpiece.h"
#include "inferbench/base.h"
#include "dataset/squad_predict.h"
#include "test.h"

static void final_is(const char *pred, const char *orig, const char *want)
{
    char *got = ib_squad_final_text(pred, orig);
    ASSERT_NOT_NULL(got);
    ASSERT_STR_EQ(got, want);
    ib_free(got);
}

TEST(squad_final_text)
{
    final_is("steve smith", "Steve Smith's", "Steve Smith"); /* run_squad.py's example */
    final_is("cafe", "Caf\xC3\xA9!", "Caf\xC3\xA9");          /* accent stripped in tok_text */
    final_is("ab", "a\x01" "b", "a\x01" "b"); /* lengths differ without spaces: orig_text */
    final_is("zzz", "The cat", "The cat");    /* not found: orig_text */
    final_is("", "The cat", "The cat");
    final_is("cat", "The cat.", "cat");
    ASSERT_NULL(ib_squad_final_text("x", "\xFF"));
}

typedef struct fx {
    ib_squad *s;
    ib_wp_vocab *v;
    ib_squad_features f;
    float start[384], end[384];
} fx;

/* [CLS] who ? [SEP] the cat sat on mat ##s . [SEP]: doc tokens at 4..10, words The Cat sat
 * on mats. (4 -> 0, 5 -> 1, 6 -> 2, 7 -> 3, 8..10 -> 4). */
static void setup(fx *x)
{
    const char *json = "{\"data\":[{\"paragraphs\":[{\"context\":\"The Cat sat on mats.\",\"qas\":"
                       "[{\"id\":\"q\",\"question\":\"Who?\",\"answers\":[{\"text\":\"Cat\"}]}]}]}]}";
    const char *vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\ncat\nsat\non\nmat\n##s\n.\nwho\n?\n";
    ib_err err;
    ASSERT_OK_ERR(ib_squad_parse("t.json", json, strlen(json), &x->s, &err), &err);
    ASSERT_OK_ERR(ib_wp_vocab_parse("vocab.txt", vocab, strlen(vocab), &x->v, &err), &err);
    ib_squad_window w = {IB_SQUAD_MAX_SEQ_LEN, IB_SQUAD_DOC_STRIDE, IB_SQUAD_MAX_QUERY_LEN};
    ASSERT_OK_ERR(ib_squad_featurize(x->s, x->v, &w, &x->f, &err), &err);
    ASSERT_UINT_EQ(x->f.n, 1);
    ASSERT_UINT_EQ(x->f.n_tokens[0], 12);
    memset(x->start, 0, sizeof x->start);
    memset(x->end, 0, sizeof x->end);
}

static void teardown(fx *x)
{
    ib_squad_features_free(&x->f);
    ib_wp_vocab_free(x->v);
    ib_squad_free(x->s);
}

static void predict_is(fx *x, size_t n_best, size_t max_len, const char *want)
{
    char *a = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_squad_predict(x->s, x->v, &x->f, 0, 1, NULL, x->start, x->end, n_best, max_len,
                                   &a, &err),
                  &err);
    ASSERT_STR_EQ(a, want);
    ib_free(a);
}

TEST(squad_predict_best_span)
{
    fx x;
    setup(&x);
    /* the query's "who" / "?" score highest but are not doc tokens */
    x.start[1] = 9, x.end[2] = 10;
    x.start[5] = 5, x.end[6] = 4;
    predict_is(&x, 20, 30, "Cat sat");
    /* a WordPiece span: "mat ##s" -> "mats", mapped onto the word "mats." */
    x.start[8] = 7, x.end[9] = 7;
    predict_is(&x, 20, 30, "mats");
    /* end before start is skipped */
    x.start[5] = 0, x.start[8] = 0, x.end[9] = 0, x.start[7] = 20, x.end[6] = 20;
    /* (7, 6) is out; (7, 7) = 20 comes first of the pairs scoring 20 (start 7 ranks first) */
    predict_is(&x, 20, 30, "on");
    teardown(&x);
}

TEST(squad_predict_max_len_ties_and_empty)
{
    fx x;
    setup(&x);
    x.start[4] = 9, x.end[10] = 9; /* "the ... ." is 7 tokens */
    predict_is(&x, 20, 30, "The Cat sat on mats.");
    /* over 3 tokens: the first valid pair in enumeration order among the ties with score 9
     * is (4, 4) (ends in index order after 10) */
    predict_is(&x, 20, 3, "The");
    /* n_best 1: only (start 1, end 2), inside the query -> "empty" */
    memset(x.start, 0, sizeof x.start);
    memset(x.end, 0, sizeof x.end);
    x.start[1] = 9, x.end[2] = 9;
    predict_is(&x, 1, 30, "empty");
    char *a = NULL;
    ib_err err;
    ASSERT_STATUS(ib_squad_predict(x.s, x.v, &x.f, 0, 2, NULL, x.start, x.end, 20, 30, &a, &err),
                  IB_EINVAL);
    teardown(&x);
}
