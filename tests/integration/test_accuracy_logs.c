/*
 * test_accuracy_logs.c - each benchmark's accuracy scored from crafted mlperf_log_accuracy.json
 * files whose answer is known by construction (src/harness/accuracy.c, the code behind
 * `run --mode accuracy` and `inferbench accuracy`): perfect outputs give 100 %, a chosen
 * fraction of correct outputs gives that fraction, and the official scripts' edge rules hold
 * (duplicates, ties in AUC, empty predictions in DICE, images without detections in COCO, a
 * SQuAD feature missing from the log, Python's float text). The datasets are the entries'
 * synthetic ones; the ground truth is read through the dataset loaders, never through the
 * code under test. The CLI's exit codes and bad-input messages are checked at the end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "dataset/brats.h"
#include "dataset/coco.h"
#include "dataset/criteo.h"
#include "dataset/kits.h"
#include "dataset/librispeech.h"
#include "dataset/squad.h"
#include "dataset/wordpiece.h"
#include "harness/accuracy.h"
#include "harness/benchmark.h"
#include "inferbench/dataset.h"
#include "metrics/coco_map.h"
#include "metrics/wer.h"
#include "ir/graph.h"
#include "test.h"

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct entry {
    uint64_t qsl;
    const void *data;
    size_t size;
} entry;

/* The official layout (loadgen.md §3.3): one object per line, upper-case hex. */
static void write_log(const char *path, const entry *e, size_t n)
{
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    fputs("[\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "{ \"seq_id\" : %zu, \"qsl_idx\" : %llu, \"data\" : \"", i,
                (unsigned long long)e[i].qsl);
        const uint8_t *p = e[i].data;
        for (size_t k = 0; k < e[i].size; k++)
            fprintf(f, "%02X", p[k]);
        fprintf(f, "\" }%s\n", i + 1 < n ? "," : "");
    }
    fputs("]\n", f);
    ASSERT_INT_EQ(fclose(f), 0);
}

static void synth(const char *bench, const char *variant, size_t n, const char *dir)
{
    const ib_benchmark *b = ib_benchmark_find(bench);
    ASSERT_NOT_NULL(b);
    ib_bench_config cfg;
    ib_bench_config_defaults(&cfg);
    cfg.tiny = true;
    cfg.synth_samples = n;
    cfg.variant = variant;
    ib_err err;
    ASSERT_OK_ERR(b->synthesize(&cfg, dir, &err), &err);
}

/* Score `log` with the entry's accuracy over `data`; the script's text into *text (owned by
 * the caller) when text is not NULL. */
static double score(const char *bench, const char *variant, const char *data, const char *log,
                    char **text)
{
    ib_accuracy_opts o;
    memset(&o, 0, sizeof o);
    o.bench = ib_benchmark_find(bench);
    ASSERT_NOT_NULL(o.bench);
    ib_bench_config_defaults(&o.cfg);
    o.cfg.tiny = true;
    o.cfg.variant = variant;
    o.log_path = log;
    o.data_dir = data;
    ib_accuracy_result r;
    ib_err err;
    ASSERT_OK_ERR(ib_accuracy_score(&o, &r, &err), &err);
    if (text)
        *text = r.text;
    else
        ib_free(r.text);
    return r.value;
}

static void put_f32(uint8_t *p, float v)
{
    memcpy(p, &v, 4); /* little-endian hosts (x86, arm64) */
}

/* ---- ResNet50: top-1 ---------------------------------------------------------------------- */

TEST_TIMEOUT(accuracy_logs_resnet50, 60)
{
    synth("resnet50", NULL, 8, "in");
    ib_imagenet *d = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_imagenet_open("in", NULL, &d, &err), &err);
    float cls[9];
    entry e[9];
    for (size_t i = 0; i < 8; i++) {
        cls[i] = (float)ib_imagenet_label(d, i);
        e[i] = (entry){i, &cls[i], 4};
    }
    write_log("perfect.json", e, 8);
    char *t = NULL;
    ASSERT_DBL_EQ(score("resnet50", NULL, "in", "perfect.json", &t), 100.0);
    ASSERT_STR_EQ(t, "accuracy=100.000%, good=8, total=8\n");
    ib_free(t);
    /* 6 of 8 right; a duplicate of qsl 0 logged after it does not count (first one wins) */
    cls[2] = (float)((ib_imagenet_label(d, 2) + 1) % 1000);
    cls[5] = (float)((ib_imagenet_label(d, 5) + 1) % 1000);
    cls[8] = (float)((ib_imagenet_label(d, 0) + 1) % 1000);
    e[8] = (entry){0, &cls[8], 4};
    write_log("six.json", e, 9);
    ASSERT_DBL_EQ(score("resnet50", NULL, "in", "six.json", &t), 75.0);
    ASSERT_STR_EQ(t, "accuracy=75.000%, good=6, total=8\n");
    ib_free(t);
    ib_imagenet_close(d);
}

/* ---- SSD-ResNet34: COCO mAP ------------------------------------------------------------------ */

/* A detection payload of image i: its ground-truth boxes, score 1, labels through inv_map. */
static size_t coco_payload(const ib_coco *d, size_t i, float *out)
{
    const ib_coco_image *im = ib_coco_image_at(d, i);
    size_t ng = 0, k = 0;
    const ib_coco_gt *g = ib_coco_annotations(d, &ng);
    for (size_t j = 0; j < ng; j++) {
        if (g[j].image_id != im->id || g[j].iscrowd)
            continue;
        size_t label = 0;
        for (size_t c = 0; c < ib_coco_category_count(d); c++)
            if (ib_coco_category(d, c) == g[j].category_id)
                label = c + 1;
        const double *b = g[j].bbox;
        float v[7] = {(float)i,
                      (float)(b[1] / im->height),
                      (float)(b[0] / im->width),
                      (float)((b[1] + b[3]) / im->height),
                      (float)((b[0] + b[2]) / im->width),
                      1.0f,
                      (float)label};
        memcpy(out + 7 * k++, v, sizeof v);
    }
    return k;
}

TEST_TIMEOUT(accuracy_logs_ssd_resnet34, 60)
{
    synth("ssd-resnet34", NULL, 4, "in");
    ib_coco *d = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_coco_open("in", NULL, &d, &err), &err);
    size_t n = ib_coco_count(d), ng = 0;
    ASSERT_UINT_EQ(n, 4);
    const ib_coco_gt *g = ib_coco_annotations(d, &ng);
    float *p = ib_malloc(n * 7 * (ng + 1) * sizeof *p);
    entry e[4];
    for (size_t i = 0; i < n; i++) {
        size_t k = coco_payload(d, i, p + i * 7 * (ng + 1));
        ASSERT_TRUE(k > 0);
        e[i] = (entry){i, p + i * 7 * (ng + 1), k * 28};
    }
    write_log("perfect.json", e, n);
    char *t = NULL;
    ASSERT_DBL_EQ(score("ssd-resnet34", NULL, "in", "perfect.json", &t), 100.0);
    ASSERT_STR_EQ(t, "mAP=100.000%\n");
    ib_free(t);
    /* image 0 without detections: accuracy-coco.py still evaluates it, so its boxes are
     * misses. Every detection is right, so each category's AP is the share of the 101
     * recall thresholds (numpy linspace: k * 0.01) at or below its recall, and 0 for a
     * category with no detection at all (its precision row stays zeros). */
    e[0].size = 0;
    write_log("no_dets.json", e, n);
    const ib_coco_image *im0 = ib_coco_image_at(d, 0);
    double ap_sum = 0;
    size_t n_cat = 0;
    for (size_t c = 0; c < ib_coco_category_count(d); c++) {
        size_t total = 0, found = 0;
        for (size_t j = 0; j < ng; j++)
            if (g[j].category_id == ib_coco_category(d, c) && !g[j].iscrowd) {
                total++;
                found += g[j].image_id != im0->id;
            }
        if (!total)
            continue;
        double recall = (double)found / (double)total;
        size_t k = 0;
        for (int j = 0; found && j <= 100; j++)
            k += (double)j * 0.01 <= recall;
        ap_sum += (double)k / 101.0;
        n_cat++;
    }
    double want = 100.0 * ap_sum / (double)n_cat;
    ASSERT_TRUE(want < 100.0); /* image 0 holds boxes */
    ASSERT_NEAR(score("ssd-resnet34", NULL, "in", "no_dets.json", NULL), want, 1e-9);
    ib_free(p);
    ib_coco_close(d);
}

/* ---- BERT: SQuAD EM/F1 ---------------------------------------------------------------------- */

/* Logits [384][2] of feature fi that point at question q's first answer when the feature
 * holds it with max context; false when it does not. */
static bool squad_logits(const ib_squad *s, const ib_squad_features *f, size_t fi, float *lg)
{
    const ib_squad_question *q = ib_squad_question_at(s, f->question[fi]);
    const char *ctx = ib_squad_context(s, q->paragraph);
    const char *at = strstr(ctx, q->answers[0]);
    ASSERT_NOT_NULL(at);
    /* word indices (whitespace-split, as the doc tokens) of the answer's first and last char */
    size_t ws = 0, we = 0, word = 0;
    bool in_word = false;
    size_t a0 = (size_t)(at - ctx), a1 = a0 + strlen(q->answers[0]) - 1;
    for (size_t i = 0; ctx[i]; i++) {
        bool space = ctx[i] == ' ';
        if (!space && !in_word && i > 0)
            word += 1;
        if (i == 0 && space)
            word = 0;
        in_word = !space;
        if (i == a0)
            ws = word;
        if (i == a1)
            we = word;
    }
    size_t L = f->seq_len, x = SIZE_MAX, y = SIZE_MAX;
    const int32_t *orig = f->token_to_orig + fi * L;
    for (size_t t = 0; t < f->n_tokens[fi]; t++) {
        if (orig[t] == (int32_t)ws && x == SIZE_MAX)
            x = t;
        if (orig[t] == (int32_t)we)
            y = t;
    }
    if (x == SIZE_MAX || y == SIZE_MAX || !f->max_context[fi * L + x])
        return false;
    for (size_t t = 0; t < L; t++) {
        lg[2 * t] = t == x ? 10.0f : 0.0f;
        lg[2 * t + 1] = t == y ? 10.0f : 0.0f;
    }
    return true;
}

TEST_TIMEOUT(accuracy_logs_bert, 60)
{
    synth("bert-99", NULL, 6, "in");
    ib_squad *s = NULL;
    ib_wp_vocab *v = NULL;
    ib_squad_features f;
    ib_err err;
    ASSERT_OK_ERR(ib_squad_load("in/dev-v1.1.json", &s, &err), &err);
    ASSERT_OK_ERR(ib_wp_vocab_load("in/vocab.txt", &v, &err), &err);
    ib_squad_window w = {IB_SQUAD_MAX_SEQ_LEN, IB_SQUAD_DOC_STRIDE, IB_SQUAD_MAX_QUERY_LEN};
    ASSERT_OK_ERR(ib_squad_featurize(s, v, &w, &f, &err), &err);
    size_t nq = ib_squad_questions(s), nf = f.n, L = f.seq_len;
    ASSERT_UINT_EQ(nq, 6);
    ASSERT_TRUE(nf > nq); /* paragraph 0 is longer than one window */
    float *lg = ib_calloc(nf * L * 2, sizeof *lg);
    entry *e = ib_calloc(nf, sizeof *e);
    bool *answer_at = ib_calloc(nf, sizeof *answer_at);
    for (size_t i = 0; i < nf; i++) {
        answer_at[i] = squad_logits(s, &f, i, lg + i * L * 2);
        e[i] = (entry){i, lg + i * L * 2, L * 8};
    }
    write_log("perfect.json", e, nf);
    char *t = NULL;
    ASSERT_DBL_EQ(score("bert-99", NULL, "in", "perfect.json", &t), 100.0);
    ASSERT_STR_EQ(t, "{\"exact_match\": 100.0, \"f1\": 100.0}\n");
    ib_free(t);
    /* half the questions logged: the others get the "empty" answer and score 0 -> 50.0,
     * printed as Python does (json.dumps), not "5e+01" */
    entry *half = ib_calloc(nf, sizeof *half);
    size_t nh = 0;
    for (size_t i = 0; i < nf; i++)
        if (f.question[i] % 2 == 0)
            half[nh++] = e[i];
    write_log("half.json", half, nh);
    ASSERT_DBL_EQ(score("bert-99", NULL, "in", "half.json", &t), 50.0);
    ASSERT_STR_EQ(t, "{\"exact_match\": 50.0, \"f1\": 50.0}\n");
    ib_free(t);
    /* a multi-feature question with only its answer's feature logged still gets the right
     * answer: the script skips the missing features, it does not drop the question */
    size_t q0 = f.question[0], kept = 0;
    nh = 0;
    for (size_t i = 0; i < nf; i++) {
        bool mine = f.question[i] == q0;
        if (!mine || (answer_at[i] && !kept)) {
            half[nh++] = e[i];
            kept += mine;
        }
    }
    ASSERT_UINT_EQ(kept, 1);
    ASSERT_TRUE(nh < nf); /* a feature of question q0 is missing */
    write_log("missing_feature.json", half, nh);
    ASSERT_DBL_EQ(score("bert-99", NULL, "in", "missing_feature.json", NULL), 100.0);
    ib_free(half);
    ib_free(answer_at);
    ib_free(e);
    ib_free(lg);
    ib_squad_features_free(&f);
    ib_wp_vocab_free(v);
    ib_squad_free(s);
}

/* ---- DLRM: AUC --------------------------------------------------------------------------- */

TEST_TIMEOUT(accuracy_logs_dlrm, 60)
{
    synth("dlrm-99", NULL, 16, "in");
    ib_criteo *c = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_criteo_open("in", 1000, &c, &err), &err);
    size_t n = ib_criteo_samples(c);
    const uint64_t *st = ib_criteo_pair_starts(c);
    size_t pairs = (size_t)st[n];
    float *lab = ib_malloc(pairs * sizeof *lab), *dense = ib_malloc(pairs * 13 * sizeof(float));
    int64_t *sparse = ib_malloc(pairs * 26 * sizeof(int64_t));
    uint8_t *pay = ib_malloc(pairs * 8), *tie = ib_malloc(pairs * 8);
    entry *e = ib_calloc(n, sizeof *e), *et = ib_calloc(n, sizeof *et);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        size_t m = (size_t)(st[i + 1] - st[i]);
        ASSERT_OK_ERR(ib_criteo_load(c, i, dense, sparse, lab + st[i], &err), &err);
        for (size_t k = 0; k < m; k++) {
            float y = lab[st[i] + k];
            pos += y == 1.0f;
            put_f32(pay + 8 * (st[i] + k), y); /* (prediction, label): perfect */
            put_f32(pay + 8 * (st[i] + k) + 4, y);
            put_f32(tie + 8 * (st[i] + k), 0.5f); /* every prediction tied */
            put_f32(tie + 8 * (st[i] + k) + 4, y);
        }
        e[i] = (entry){i, pay + 8 * st[i], 8 * m};
        et[i] = (entry){i, tie + 8 * st[i], 8 * m};
    }
    ASSERT_TRUE(pos > 0 && pos < pairs);
    write_log("perfect.json", e, n);
    write_log("ties.json", et, n);
    char *t = NULL;
    ASSERT_DBL_EQ(score("dlrm-99", NULL, "in", "perfect.json", &t), 100.0);
    ASSERT_TRUE(!strncmp(t, "AUC=100.000%, accuracy=100.000%", 31));
    ib_free(t);
    /* all tied: a tied pair counts half (sklearn's roc_auc_score), AUC exactly 0.5 */
    ASSERT_DBL_EQ(score("dlrm-99", NULL, "in", "ties.json", &t), 50.0);
    ASSERT_TRUE(!strncmp(t, "AUC=50.000%", 11));
    ib_free(t);
    ib_free(e);
    ib_free(et);
    ib_free(pay);
    ib_free(tie);
    ib_free(lab);
    ib_free(dense);
    ib_free(sparse);
    ib_criteo_close(c);
}

/* ---- RNN-T: WER ---------------------------------------------------------------------------- */

TEST_TIMEOUT(accuracy_logs_rnnt, 60)
{
    synth("rnnt", NULL, 4, "in");
    ib_librispeech *d = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_librispeech_open("in", 15.0, &d, &err), &err);
    size_t n = d->n, total_words = 0, dropped_words = 0;
    ASSERT_TRUE(n >= 2);
    int64_t *ids = ib_malloc(n * 4096 * sizeof *ids);
    entry *e = ib_calloc(n, sizeof *e);
    for (size_t i = 0; i < n; i++) {
        const char *tr = d->utt[i].transcript;
        size_t m = strlen(tr), words = 0;
        ASSERT_TRUE(m < 4096);
        for (size_t k = 0; k < m; k++) {
            const char *at = strchr(IB_TRANSCRIPT_LABELS, tr[k]);
            ASSERT_NOT_NULL(at);
            ids[i * 4096 + k] = at - IB_TRANSCRIPT_LABELS;
            words += tr[k] != ' ' && (k == 0 || tr[k - 1] == ' ');
        }
        total_words += words;
        e[i] = (entry){i, ids + i * 4096, m * 8};
    }
    write_log("perfect.json", e, n);
    char *t = NULL;
    ASSERT_DBL_EQ(score("rnnt", NULL, "in", "perfect.json", &t), 100.0);
    ASSERT_STR_EQ(t, "Word Error Rate: 0.0%, accuracy=100.0%\n");
    ib_free(t);
    /* utterance 0 decoded as nothing: its words are deletions */
    for (size_t k = 0; d->utt[0].transcript[k]; k++)
        dropped_words += d->utt[0].transcript[k] != ' ' &&
                         (k == 0 || d->utt[0].transcript[k - 1] == ' ');
    e[0].size = 0;
    write_log("empty0.json", e, n);
    double wer = (double)dropped_words / (double)total_words;
    ASSERT_NEAR(score("rnnt", NULL, "in", "empty0.json", NULL), 100.0 * (1 - wer), 1e-9);
    ib_free(ids);
    ib_free(e);
    ib_librispeech_free(d);
}

/* ---- 3D U-Net: DICE (BraTS and KiTS19) ------------------------------------------------------ */

TEST_TIMEOUT(accuracy_logs_unet3d_brats, 120)
{
    synth("3d-unet-99", NULL, 2, "in");
    static const int64_t patch[3] = {64, 64, 32}; /* the tiny stand-in's */
    ib_brats *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_brats_open("in", patch, &b, &err), &err);
    size_t pv = (size_t)(patch[0] * patch[1] * patch[2]), n = ib_brats_count(b);
    uint16_t *lg = ib_calloc(n * 4 * pv, sizeof *lg), *bg = ib_calloc(n * 4 * pv, sizeof *bg);
    entry *e = ib_calloc(n, sizeof *e), *eb = ib_calloc(n, sizeof *eb);
    const uint16_t one = ib_f32_to_f16(1.0f);
    for (size_t q = 0; q < n; q++) {
        ib_brats_geom g;
        uint8_t *gt = NULL;
        size_t nv = 0;
        ASSERT_OK_ERR(ib_brats_geometry(b, q, &g, &err), &err);
        ASSERT_OK_ERR(ib_brats_labels(b, q, &gt, &nv, &err), &err);
        uint16_t *l = lg + q * 4 * pv, *z = bg + q * 4 * pv;
        for (size_t j = 0; j < pv; j++)
            z[j] = one; /* background everywhere */
        for (int64_t a = g.lo[0]; a < g.hi[0]; a++)
            for (int64_t y = g.lo[1]; y < g.hi[1]; y++)
                for (int64_t x = g.lo[2]; x < g.hi[2]; x++) {
                    size_t j = (size_t)(((a - g.lo[0] + g.pad[0]) * patch[1] + y - g.lo[1] +
                                         g.pad[1]) * patch[2] + x - g.lo[2] + g.pad[2]);
                    uint8_t c = gt[(size_t)((a * g.shape[1] + y) * g.shape[2] + x)];
                    l[(size_t)c * pv + j] = one;
                }
        ib_free(gt);
        e[q] = (entry){q, l, 4 * pv * 2};
        eb[q] = (entry){q, z, 4 * pv * 2};
    }
    write_log("perfect.json", e, n);
    write_log("background.json", eb, n);
    char *t = NULL;
    ASSERT_DBL_EQ(score("3d-unet-99", NULL, "in", "perfect.json", &t), 1.0);
    ASSERT_STR_EQ(t, "Accuracy: mean = 1.00000, whole tumor = 1.0000, tumor core = 1.0000, "
                     "enhancing tumor = 1.0000\n");
    ib_free(t);
    /* an empty prediction: DICE 0 where the case has tumour (medpy), NaN where neither has
     * any (nnU-Net's evaluate_case), and np.nanmean skips those */
    ASSERT_DBL_EQ(score("3d-unet-99", NULL, "in", "background.json", &t), 0.0);
    ASSERT_STR_EQ(t, "Accuracy: mean = 0.00000, whole tumor = 0.0000, tumor core = 0.0000, "
                     "enhancing tumor = 0.0000\n");
    ib_free(t);
    /* a missing case is an error, as the script asserts every result is present */
    write_log("one.json", e, 1);
    ib_accuracy_opts o;
    memset(&o, 0, sizeof o);
    o.bench = ib_benchmark_find("3d-unet-99");
    ib_bench_config_defaults(&o.cfg);
    o.cfg.tiny = true;
    o.log_path = "one.json";
    o.data_dir = "in";
    ib_accuracy_result r;
    ASSERT_STATUS(ib_accuracy_score(&o, &r, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "one.json");
    ASSERT_STR_CONTAINS(err.msg, "no prediction for case 1");
    ib_free(lg);
    ib_free(bg);
    ib_free(e);
    ib_free(eb);
    ib_brats_close(b);
}

TEST_TIMEOUT(accuracy_logs_unet3d_kits, 120)
{
    synth("3d-unet-99", "kits19", 2, "in");
    static const int64_t roi[3] = {32, 32, 32}; /* the tiny stand-in's */
    ib_kits *k = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_kits_open("in", roi, &k, &err), &err);
    size_t n = ib_kits_count(k);
    uint8_t *lab[4] = {0}, *zero[4] = {0};
    entry e[4], ez[4];
    ASSERT_TRUE(n <= 4);
    bool tumour_somewhere = false;
    for (size_t q = 0; q < n; q++) {
        float *img = NULL;
        int64_t sh[3];
        ib_kits_shape(k, q, sh);
        size_t nv = (size_t)(sh[0] * sh[1] * sh[2]);
        ASSERT_OK_ERR(ib_kits_load(k, q, &img, &lab[q], &err), &err);
        ib_free(img);
        zero[q] = ib_calloc(nv, 1);
        for (size_t v = 0; v < nv; v++)
            tumour_somewhere |= lab[q][v] == 2;
        e[q] = (entry){q, lab[q], nv};
        ez[q] = (entry){q, zero[q], nv};
    }
    ASSERT_TRUE(tumour_somewhere);
    write_log("perfect.json", e, n);
    write_log("zero.json", ez, n);
    char *t = NULL;
    ASSERT_DBL_EQ(score("3d-unet-99", "kits19", "in", "perfect.json", &t), 1.0);
    ASSERT_STR_EQ(t, "Accuracy: mean = 1.00000, kidney = 1.0000, tumor = 1.0000\n");
    ib_free(t);
    /* an empty prediction: (0 + 1e-6) / (n_gt + 0 + 1e-6) per class, about 0 where the case
     * has that class and exactly 1 where it has none */
    double want_k = 0, want_t = 0;
    for (size_t q = 0; q < n; q++) {
        int64_t sh[3];
        ib_kits_shape(k, q, sh);
        size_t g1 = 0, g2 = 0, nv = (size_t)(sh[0] * sh[1] * sh[2]);
        for (size_t v = 0; v < nv; v++) {
            g1 += lab[q][v] == 1;
            g2 += lab[q][v] == 2;
        }
        want_k += 1e-6 / ((double)g1 + 1e-6);
        want_t += 1e-6 / ((double)g2 + 1e-6);
    }
    want_k /= (double)n;
    want_t /= (double)n;
    ASSERT_NEAR(score("3d-unet-99", "kits19", "in", "zero.json", NULL), (want_k + want_t) / 2,
                1e-12);
    for (size_t q = 0; q < n; q++) {
        ib_free(lab[q]);
        ib_free(zero[q]);
    }
    ib_kits_close(k);
}

/* ---- the command ------------------------------------------------------------------------------ */

static int cli(const char *args)
{
    return ib_test_system("%s/inferbench accuracy %s > out.txt 2> err.txt", ib_test_bin_dir(),
                          args);
}

TEST_TIMEOUT(accuracy_cli_exit_codes_and_bad_input, 60)
{
    synth("resnet50", NULL, 4, "in");
    ib_imagenet *d = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_imagenet_open("in", NULL, &d, &err), &err);
    float cls[4];
    entry e[4];
    for (size_t i = 0; i < 4; i++) {
        cls[i] = (float)ib_imagenet_label(d, i);
        e[i] = (entry){i, &cls[i], 4};
    }
    write_log("good.json", e, 4);
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log good.json --data in --output-dir o"), 0);
    char *out = ib_test_slurp("out.txt");
    ASSERT_TRUE(!strncmp(out, "accuracy=100.000%, good=4, total=4\n", 35));
    ASSERT_STR_CONTAINS(out, "Target (resnet50): accuracy >= 75.6954 (99 % of the FP32 "
                             "reference 76.46): met");
    char *txt = ib_test_slurp("o/accuracy.txt");
    ASSERT_TRUE(!strncmp(txt, "accuracy=100.000%, good=4, total=4\nhash=", 40));
    ASSERT_UINT_EQ(strlen(txt), 40 + 64 + 1);
    /* 1 of 4 right: below the target -> 3; --json says so */
    cls[1] = cls[2] = cls[3] = (float)((ib_imagenet_label(d, 0) + 1) % 1000);
    for (size_t i = 1; i < 4; i++)
        cls[i] = (float)((ib_imagenet_label(d, i) + 1) % 1000);
    write_log("bad.json", e, 4);
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log bad.json --data in --json"), 3);
    char *js = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(js, "\"value\": 25.0,");
    ASSERT_STR_CONTAINS(js, "\"met\": false,");
    ASSERT_STR_CONTAINS(js, "\"lines\": [\n    \"accuracy=25.000%, good=1, total=4\"\n  ]");
    /* bad input -> 2 with the file and the entry named */
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log missing.json --data in"), 2);
    ASSERT_STR_CONTAINS(ib_test_slurp("err.txt"), "missing.json: no such file");
    ASSERT_OK(ib_file_write_all("broken.json", "[\n{ \"qsl_idx\" : 0, \"data\" : \"0000", 33,
                                NULL));
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log broken.json --data in"), 2);
    ASSERT_STR_CONTAINS(ib_test_slurp("err.txt"), "broken.json");
    e[2].qsl = 9; /* beyond the 4 images */
    write_log("range.json", e, 4);
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log range.json --data in"), 2);
    char *er = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(er, "range.json");
    ASSERT_STR_CONTAINS(er, "record 2: qsl_idx 9");
    e[2].qsl = 2;
    e[2].size = 3; /* not a float32 */
    write_log("size.json", e, 4);
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log size.json --data in"), 2);
    ASSERT_STR_CONTAINS(ib_test_slurp("err.txt"), "record 2 (qsl_idx 2): 3 payload bytes");
    ASSERT_OK(ib_file_write_all("empty.json", "[\n]\n", 4, NULL));
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log empty.json --data in"), 2);
    ASSERT_STR_CONTAINS(ib_test_slurp("err.txt"), "holds no entries");
    ASSERT_INT_EQ(cli("--benchmark resnet51 --log good.json --data in"), 2);
    ASSERT_STR_CONTAINS(ib_test_slurp("err.txt"), "unknown benchmark 'resnet51'");
    ASSERT_INT_EQ(cli("--log good.json --data in"), 2);
    ASSERT_STR_CONTAINS(ib_test_slurp("err.txt"), "--benchmark ID is required");
    ASSERT_INT_EQ(cli("--benchmark resnet50 --log good.json --dat in"), 2);
    ASSERT_STR_CONTAINS(ib_test_slurp("err.txt"), "did you mean '--data'?");
    ib_imagenet_close(d);
}

/* A log inside a results tree: run.json gives the benchmark, the data and "random weights"
 * (target not applicable, exit 0), from any working directory. */
TEST_TIMEOUT(accuracy_cli_reads_run_json, 120)
{
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --benchmark resnet50 --tiny --mode accuracy "
                                 "--synth-samples 8 --system s --output-dir out -q > run.txt "
                                 "2>&1",
                                 ib_test_bin_dir()),
                  0);
    ASSERT_OK(ib_mkdirs("elsewhere", NULL));
    ASSERT_INT_EQ(ib_test_system("cd elsewhere && %s/inferbench accuracy --log "
                                 "../out/s/resnet50/Offline/accuracy/mlperf_log_accuracy.json "
                                 "> ../out.txt 2> ../err.txt",
                                 ib_test_bin_dir()),
                  0);
    char *out = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(out, "not applicable (random weights)");
    /* the same line as the run's own accuracy.txt */
    char *acc = ib_test_slurp("out/s/resnet50/Offline/accuracy/accuracy.txt");
    size_t l1 = strcspn(acc, "\n");
    ASSERT_TRUE(!strncmp(out, acc, l1 + 1));
}
