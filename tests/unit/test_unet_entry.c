/*
 * test_unet_entry.c - the 3d-unet entry's BraTS accuracy path (src/harness/bench_unet3d.c)
 * on payloads made from the ground truth: one-hot float16 logits of every case in its
 * padded patch must score DICE 1 in every region (so un-padding, argmax and the crop's
 * place in the whole volume are right); a later duplicate of a case replaces the earlier
 * one as in accuracy-brats.py; a missing case and a wrong payload size are errors.
 */
#include <string.h>

#include "base/strbuf.h"
#include "dataset/brats.h"
#include "harness/benchmark.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "test.h"

typedef struct fixture {
    ib_bench_config cfg;
    ib_model *m;
    ib_bench_io io;
    void *state;
    size_t total;
    uint8_t *pay[3];
    size_t size;
} fixture;

static void setup(fixture *f)
{
    const ib_benchmark *b = &ib_bench_3d_unet_99;
    ib_err err;
    ib_bench_config_defaults(&f->cfg);
    f->cfg.tiny = true;
    f->cfg.synth_samples = 3;
    ASSERT_OK_ERR(b->build_model(&f->cfg, 0, "m.onnx", &err), &err);
    ASSERT_OK_ERR(ib_model_load_file("m.onnx", NULL, &f->m, &err), &err);
    ASSERT_OK_ERR(b->bind_model(&f->cfg, 0, f->m, &f->io, &err), &err);
    ASSERT_OK_ERR(b->synthesize(&f->cfg, "d", &err), &err);
    ASSERT_OK_ERR(b->open(&f->cfg, "d", &f->io, &f->state, &f->total, &err), &err);
    ASSERT_UINT_EQ(f->total, 3);
    const int64_t p[3] = {64, 64, 32};
    size_t pv = 64 * 64 * 32;
    f->size = 4 * pv * 2;
    ASSERT_UINT_EQ(b->payload_max_bytes(f->state, &f->cfg), f->size);
    ib_brats *br = NULL;
    ASSERT_OK_ERR(ib_brats_open("d", p, &br, &err), &err);
    for (size_t q = 0; q < 3; q++) {
        ib_brats_geom g;
        ASSERT_OK_ERR(ib_brats_geometry(br, q, &g, &err), &err);
        uint8_t *gt = NULL;
        size_t n = 0;
        ASSERT_OK_ERR(ib_brats_labels(br, q, &gt, &n, &err), &err);
        uint8_t *d = ib_calloc(f->size, 1);
        /* background logit 1 everywhere (padding included), then the crop's one-hot */
        for (size_t j = 0; j < pv; j++)
            d[2 * j + 1] = 0x3c; /* fp16 1.0 = 0x3c00, little-endian */
        for (int64_t z = g.lo[0]; z < g.hi[0]; z++)
            for (int64_t y = g.lo[1]; y < g.hi[1]; y++)
                for (int64_t x = g.lo[2]; x < g.hi[2]; x++) {
                    uint8_t l = gt[(z * g.shape[1] + y) * g.shape[2] + x];
                    size_t j = (size_t)(((z - g.lo[0] + g.pad[0]) * p[1] + (y - g.lo[1] + g.pad[1])) *
                                            p[2] +
                                        (x - g.lo[2] + g.pad[2]));
                    if (l) {
                        d[2 * j + 1] = 0;
                        d[2 * (l * pv + j) + 1] = 0x3c;
                    }
                }
        f->pay[q] = d;
        ib_free(gt);
    }
    ib_brats_close(br);
}

static void teardown(fixture *f)
{
    ib_bench_3d_unet_99.close(f->state);
    ib_model_destroy(f->m);
    for (int q = 0; q < 3; q++)
        ib_free(f->pay[q]);
}

static int score(fixture *f, const ib_bench_acc_entry *e, size_t n, ib_strbuf *sb, double *v,
                 ib_err *err)
{
    ib_strbuf_reset(sb);
    return ib_bench_3d_unet_99.accuracy(f->state, &f->cfg, e, n, sb, v, err);
}

TEST_TIMEOUT(unet_entry_brats_ground_truth_scores_one, 60)
{
    fixture f = {0};
    setup(&f);
    ib_err err;
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    double v = 0;
    uint8_t *empty = ib_calloc(f.size, 1); /* all logits 0: argmax = background */
    ib_bench_acc_entry e[4] = {{2, f.pay[2], f.size}, {0, f.pay[0], f.size}, {1, f.pay[1], f.size},
                               {0, empty, f.size}};
    /* the stale all-background duplicate first: the later perfect one replaces it */
    ib_bench_acc_entry first[4] = {e[3], e[0], e[1], e[2]};
    ASSERT_OK_ERR(score(&f, first, 4, &sb, &v, &err), &err);
    ASSERT_STR_EQ(sb.data, "Accuracy: mean = 1.00000, whole tumor = 1.0000, tumor core = 1.0000, "
                           "enhancing tumor = 1.0000\n");
    ASSERT_DBL_EQ(v, 1.0);
    /* the duplicate last: case 0 predicts nothing -> 0 in every region, 2/3 on average */
    ASSERT_OK_ERR(score(&f, e, 4, &sb, &v, &err), &err);
    ASSERT_STR_EQ(sb.data, "Accuracy: mean = 0.66670, whole tumor = 0.6667, tumor core = 0.6667, "
                           "enhancing tumor = 0.6667\n");
    /* a case without a prediction, a payload of the wrong size */
    ASSERT_STATUS(score(&f, e, 2, &sb, &v, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "no prediction for case 1");
    ib_bench_acc_entry shortp = {1, f.pay[1], f.size - 2};
    ASSERT_STATUS(score(&f, &shortp, 1, &sb, &v, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "float16");
    ib_free(empty);
    ib_strbuf_deinit(&sb);
    teardown(&f);
}
