/*
 * test_squad_synth.c - the synthetic SQuAD generator (src/dataset/synth_squad.c): it loads
 * through the real parsers, its long paragraph is windowed with doc_stride, answers are
 * spans of their contexts at answer_start, WordPiece splits the suffixes, and the same seed
 * gives the same bytes.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/squad.h"
#include "dataset/wordpiece.h"
#include "inferbench/base.h"
#include "test.h"

static void synth(const char *sub, size_t n, uint64_t seed, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/%s", ib_test_tmpdir(), sub);
    ib_err err;
    ASSERT_OK_ERR(ib_squad_synthesize(dir, n, seed, &err), &err);
}

TEST(squad_synthetic_loads_and_windows)
{
    char dir[512], path[600];
    synth("a", 5, 3, dir, sizeof dir);
    ib_err err;
    ib_squad *s = NULL;
    ib_wp_vocab *v = NULL;
    snprintf(path, sizeof path, "%s/dev-v1.1.json", dir);
    ASSERT_OK_ERR(ib_squad_load(path, &s, &err), &err);
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    ASSERT_OK_ERR(ib_wp_vocab_load(path, &v, &err), &err);
    ASSERT_UINT_EQ(ib_squad_questions(s), 5);
    ASSERT_INT_EQ(ib_wp_vocab_id(v, "[CLS]"), 3);
    for (size_t i = 0; i < 5; i++) {
        const ib_squad_question *q = ib_squad_question_at(s, i);
        ASSERT_UINT_EQ(q->n_answers, 1);
        ASSERT_NOT_NULL(strstr(ib_squad_context(s, q->paragraph), q->answers[0]));
        ASSERT_UINT_EQ(q->paragraph, i / 3);
    }
    ib_squad_window w = {IB_SQUAD_MAX_SEQ_LEN, IB_SQUAD_DOC_STRIDE, IB_SQUAD_MAX_QUERY_LEN};
    ib_squad_features f;
    ASSERT_OK_ERR(ib_squad_featurize(s, v, &w, &f, &err), &err);
    /* the three questions on the long paragraph get >= 2 windows each, the others one */
    size_t per_q[5] = {0};
    for (size_t i = 0; i < f.n; i++)
        per_q[f.question[i]]++;
    for (size_t i = 0; i < 3; i++)
        ASSERT_UINT_GE(per_q[i], 2);
    ASSERT_UINT_EQ(per_q[3], 1);
    ASSERT_UINT_EQ(per_q[4], 1);
    ASSERT_UINT_EQ(f.n_tokens[0], 384);
    /* WordPiece pieces and [UNK] occur; every id is in the vocabulary */
    int sub = 0;
    for (size_t i = 0; i < f.n * f.seq_len; i++) {
        ASSERT_INT_LT(f.input_ids[i], (int64_t)ib_wp_vocab_size(v));
        const char *t = ib_wp_vocab_token(v, f.input_ids[i]);
        sub += t[0] == '#';
    }
    ASSERT_INT_GT(sub, 0);
    ib_squad_features_free(&f);
    ib_wp_vocab_free(v);
    ib_squad_free(s);
}

TEST(squad_synthetic_deterministic_and_bad_args)
{
    char a[512], b[512], c[512], p[600];
    synth("s1", 7, 11, a, sizeof a);
    synth("s2", 7, 11, b, sizeof b);
    synth("s3", 7, 12, c, sizeof c);
    char *x, *y, *z;
    size_t nx, ny, nz;
    ib_err err;
    snprintf(p, sizeof p, "%s/dev-v1.1.json", a);
    ASSERT_OK(ib_file_read_all(p, 0, &x, &nx, &err));
    snprintf(p, sizeof p, "%s/dev-v1.1.json", b);
    ASSERT_OK(ib_file_read_all(p, 0, &y, &ny, &err));
    snprintf(p, sizeof p, "%s/dev-v1.1.json", c);
    ASSERT_OK(ib_file_read_all(p, 0, &z, &nz, &err));
    ASSERT_UINT_EQ(nx, ny);
    ASSERT_MEM_EQ(x, y, nx);
    ASSERT_TRUE(nx != nz || memcmp(x, z, nx) != 0);
    ib_free(x);
    ib_free(y);
    ib_free(z);
    ASSERT_STATUS(ib_squad_synthesize(a, 0, 1, &err), IB_EINVAL);
}
