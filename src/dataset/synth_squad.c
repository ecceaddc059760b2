/*
 * synth_squad.c - a small synthetic SQuAD v1.1 dataset (benchmarks.md §5): dev-v1.1.json
 * with made-up words (two-syllable words, some with "s"/"ed" suffixes that WordPiece splits
 * into "##s"/"##ed", capitalised sentence starts, an out-of-vocabulary word), answers that
 * are spans of their context with the char offset, paragraph 0 longer than 384 tokens so
 * doc_stride windowing happens, and the matching vocab.txt. SYNTHETIC: no real text.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json_writer.h"
#include "base/rng.h"
#include "base/strbuf.h"
#include "dataset/squad.h"

static const char *const k_syl[10] = {"ka", "lo", "mi", "ne", "ru", "so", "ta", "vi", "ze", "po"};

static unsigned pick(uint64_t *s, unsigned n)
{
    return (unsigned)(ib_splitmix64(s) % n);
}

/* One context word into sb: word w (0..99), suffix 0 none / 1 "s" / 2 "ed", capitalised. */
static void put_word(ib_strbuf *sb, unsigned w, unsigned suffix, int cap)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%s%s%s", k_syl[w / 10], k_syl[w % 10],
             suffix == 1 ? "s" : suffix == 2 ? "ed" : "");
    if (cap)
        buf[0] = (char)(buf[0] - 'a' + 'A');
    ib_strbuf_puts(sb, buf);
}

/* A context of n_words words in sentences of 5..12 words; word_at[i] = byte offset of word
 * i, word_end[i] its end (the trailing '.' excluded). */
static void make_context(ib_strbuf *sb, size_t n_words, uint64_t *rng, size_t *word_at,
                         size_t *word_end)
{
    size_t left = 0;
    for (size_t i = 0; i < n_words; i++) {
        int start = left == 0;
        if (start)
            left = 5 + pick(rng, 8);
        if (i)
            ib_strbuf_putc(sb, ' ');
        word_at[i] = sb->len;
        if (pick(rng, 50) == 0) {
            ib_strbuf_puts(sb, start ? "Xyzzyq" : "xyzzyq"); /* -> [UNK] */
        } else {
            unsigned r = pick(rng, 10);
            put_word(sb, pick(rng, 100), r < 7 ? 0 : r < 9 ? 1 : 2, start);
        }
        word_end[i] = sb->len;
        if (--left == 0 || i + 1 == n_words)
            ib_strbuf_putc(sb, '.');
    }
}

int ib_squad_synthesize(const char *dir, size_t n_questions, uint64_t seed, ib_err *err)
{
    if (n_questions == 0)
        return ib_err_set(err, IB_EINVAL, "synthetic squad: ask for at least one question");
    int rc = ib_mkdirs(dir, err);
    if (rc)
        return rc;
    char path[4096];
    /* vocab.txt: BERT's special tokens first, then punctuation, words and suffix pieces */
    ib_strbuf v;
    ib_strbuf_init(&v);
    ib_strbuf_puts(&v, "[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n.\n,\n?\nwhat\nis\nthe\n");
    for (unsigned w = 0; w < 100; w++)
        ib_strbuf_printf(&v, "%s%s\n", k_syl[w / 10], k_syl[w % 10]);
    ib_strbuf_puts(&v, "##s\n##ed\n##d\n");
    if (v.oom) {
        ib_strbuf_deinit(&v);
        return ib_err_set(err, IB_ENOMEM, "synthetic squad: out of memory");
    }
    if ((rc = ib_path_join(path, sizeof path, dir, "vocab.txt")) ||
        (rc = ib_file_write_all(path, v.data, v.len, err))) {
        ib_strbuf_deinit(&v);
        return rc ? ib_err_set(err, rc, "synthetic squad: cannot write %s/vocab.txt", dir) : rc;
    }
    ib_strbuf_deinit(&v);

    uint64_t rng = seed ^ 0x7371756164313131ull; /* "squad111" */
    ib_strbuf out, ctx;
    ib_strbuf_init(&out);
    ib_strbuf_init(&ctx);
    ib_jw jw;
    ib_jw_init(&jw, &out, false);
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "version");
    ib_jw_string(&jw, "1.1");
    ib_jw_key(&jw, "data");
    ib_jw_array_begin(&jw);
    size_t word_at[600], word_end[600], q = 0;
    for (size_t para = 0; q < n_questions; para++) {
        if (para % 2 == 0) {
            if (para) {
                ib_jw_array_end(&jw);
                ib_jw_object_end(&jw);
            }
            char title[32];
            snprintf(title, sizeof title, "Synthetic_%zu", para / 2);
            ib_jw_object_begin(&jw);
            ib_jw_key(&jw, "title");
            ib_jw_string(&jw, title);
            ib_jw_key(&jw, "paragraphs");
            ib_jw_array_begin(&jw);
        }
        /* paragraph 0: 450..599 words (> 384 tokens); the others 30..120 */
        size_t n_words = para == 0 ? 450 + pick(&rng, 150) : 30 + pick(&rng, 91);
        ib_strbuf_reset(&ctx);
        make_context(&ctx, n_words, &rng, word_at, word_end);
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "context");
        ib_jw_string(&jw, ctx.data);
        ib_jw_key(&jw, "qas");
        ib_jw_array_begin(&jw);
        for (unsigned k = 0; k < 3 && q < n_questions; k++, q++) {
            /* question: two consecutive context words; answer: the 1..3 words after them */
            size_t at = pick(&rng, (unsigned)(n_words - 5)), len = 1 + pick(&rng, 3);
            char id[48], question[96];
            snprintf(id, sizeof id, "synth%016llx%04zu", (unsigned long long)seed, q);
            snprintf(question, sizeof question, "What is the %.*s?",
                     (int)(word_end[at + 1] - word_at[at]), ctx.data + word_at[at]);
            ib_jw_object_begin(&jw);
            ib_jw_key(&jw, "id");
            ib_jw_string(&jw, id);
            ib_jw_key(&jw, "question");
            ib_jw_string(&jw, question);
            ib_jw_key(&jw, "answers");
            ib_jw_array_begin(&jw);
            ib_jw_object_begin(&jw);
            ib_jw_key(&jw, "answer_start");
            ib_jw_uint(&jw, word_at[at + 2]); /* bytes = chars: the text is ASCII */
            ib_jw_key(&jw, "text");
            ib_jw_string_n(&jw, ctx.data + word_at[at + 2],
                           word_end[at + 1 + len] - word_at[at + 2]);
            ib_jw_object_end(&jw);
            ib_jw_array_end(&jw);
            ib_jw_object_end(&jw);
        }
        ib_jw_array_end(&jw);
        ib_jw_object_end(&jw);
    }
    ib_jw_array_end(&jw);
    ib_jw_object_end(&jw);
    ib_jw_array_end(&jw);
    ib_jw_object_end(&jw);
    rc = ib_jw_finish(&jw);
    if (rc || ctx.oom)
        rc = ib_err_set(err, IB_ENOMEM, "synthetic squad: out of memory");
    else if ((rc = ib_path_join(path, sizeof path, dir, "dev-v1.1.json")))
        rc = ib_err_set(err, rc, "synthetic squad: path too long: %s", dir);
    else
        rc = ib_file_write_all(path, out.data, out.len, err);
    ib_strbuf_deinit(&out);
    ib_strbuf_deinit(&ctx);
    return rc;
}
