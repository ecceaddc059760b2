/*
 * test_unet_entry.c - the 3d-unet entry's BraTS accuracy path (src/harness/bench_unet3d.c)
 * on payloads made from the ground truth: one-hot float16 logits of every case in its
 * padded patch must score DICE 1 in every region (so un-padding, argmax and the crop's
 * place in the whole volume are right); a later duplicate of a case replaces the earlier
 * one as in accuracy-brats.py; a missing case and a wrong payload size are errors. kits19:
 * the sliding window with a sign-revealing stand-in model (every voxel covered and averaged
 * back to its own value), the ground-truth labels scoring DICE 1, and the payload checks.
 */
#include <string.h>

#include "base/strbuf.h"
#include "dataset/brats.h"
#include "dataset/kits.h"
#include "harness/benchmark.h"
#include "harness/scratch.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "onnx/build.h"
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

/* ---- kits19 ------------------------------------------------------------------------------- */


/* A stand-in "model" whose logits are (x, 0, -x): after the Gaussian-weighted average of
 * the overlapping windows every voxel must come back as x, so the argmax is 2 where the
 * pre-processed image is negative and 0 elsewhere (the tie at 0 goes to class 0). A voxel
 * no window covered would have norm 0 and come back NaN -> class 0. */
static ib_model *sign_model(void)
{
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK(ib_build_create(1, 12, &b));
    ib_value_id x = ib_build_input(b, "input", IB_DTYPE_FLOAT32, "N,1,32,32,32");
    ib_value_id zero = IB_BUILD_OP(b, "Sub", "", x, x);
    ib_value_id neg = IB_BUILD_OP(b, "Neg", "", x);
    ib_value_id y = IB_BUILD_OP(b, "Concat", "axis=1", x, zero, neg);
    ib_build_output(b, y, "output", IB_DTYPE_FLOAT32, "N,3,32,32,32");
    ASSERT_OK_ERR(ib_build_write_file(b, "sign.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("sign.onnx", NULL, &m, &err), &err);
    return m;
}

/* kits19's window sums on the host (variant kits19 on the cpu) or in the window graph
 * (kits19-device: model 1, its session linked to the network's) */
static void kits_case(const char *variant, const char *sums_backend)
{
    const ib_benchmark *bn = &ib_bench_3d_unet_99;
    ib_err err;
    ib_bench_config cfg;
    ib_bench_config_defaults(&cfg);
    cfg.tiny = true;
    cfg.synth_samples = 2;
    cfg.variant = variant;
    ASSERT_UINT_EQ(ib_bench_model_count(bn, &cfg), 2);
    ib_model *m = sign_model();
    ib_model *mw = NULL;
    ib_session *sessions[2] = {NULL, NULL};
    if (sums_backend) {
        ASSERT_OK_ERR(bn->build_model(&cfg, 1, "sums.onnx", &err), &err);
        ASSERT_OK_ERR(ib_model_load_file("sums.onnx", NULL, &mw, &err), &err);
        ib_bench_io wio;
        ASSERT_OK_ERR(bn->bind_model(&cfg, 1, mw, &wio, &err), &err);
        ASSERT_TRUE(wio.keep_inputs);
        ib_session_options wo;
        ib_session_options_defaults(&wo);
        wo.backend = sums_backend;
        wo.threads = 1;
        wo.keep_inputs = true;
        ASSERT_OK_ERR(ib_session_create(mw, &wo, &sessions[1], &err), &err);
        /* the network's model is not a window graph */
        ASSERT_STATUS(bn->bind_model(&cfg, 1, m, &wio, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "window graph");
    }
    ib_bench_io io;
    ASSERT_OK_ERR(bn->bind_model(&cfg, 0, m, &io, &err), &err);
    ASSERT_OK_ERR(bn->synthesize(&cfg, "k", &err), &err);
    void *st = NULL;
    size_t total = 0;
    ASSERT_OK_ERR(bn->open(&cfg, "k", &io, &st, &total, &err), &err);
    ASSERT_UINT_EQ(total, 2);
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.threads = 1;
    ASSERT_OK_ERR(ib_session_create(m, &so, &sessions[0], &err), &err);
    size_t cap = bn->payload_max_bytes(st, &cfg);
    ib_bench_acc_entry e[2];
    uint8_t *pay[2];
    ib_bench_scratch scr;
    memset(&scr, 0, sizeof scr);
    for (size_t q = 0; q < 2; q++) {
        ib_bench_sample smp;
        ASSERT_OK_ERR(bn->load_sample(st, q, &smp, &err), &err);
        const ib_bench_sample *sp = &smp;
        ib_lg_sample_index idx = q;
        ib_bench_batch b = {.count = 1, .samples = &sp, .indices = &idx, .scratch = &scr};
        pay[q] = ib_malloc(cap);
        ib_bench_payload p = {pay[q], cap, 0};
        ASSERT_OK_ERR(bn->infer(st, &cfg, sessions, &b, &p, &err), &err);
        const int64_t *d = smp.t[0].desc.dims;
        size_t nv = (size_t)(d[2] * d[3] * d[4]);
        ASSERT_UINT_EQ(p.size, nv);
        const float *img = smp.t[0].data;
        size_t neg = 0;
        for (size_t v = 0; v < nv; v++) {
            ASSERT_INT_EQ(pay[q][v], img[v] < 0 ? 2 : 0);
            neg += img[v] < 0;
        }
        ASSERT_INT_GT(neg, 0);
        ASSERT_INT_LT(neg, nv);
        e[q] = (ib_bench_acc_entry){q, pay[q], nv};
        ib_free(smp.mem);
    }
    /* the sign model's labels are not the truth; the truth itself scores 1 */
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    double v = 0;
    ASSERT_OK_ERR(bn->accuracy(st, &cfg, e, 2, &sb, &v, &err), &err);
    ASSERT_TRUE(!strncmp(sb.data, "Accuracy: mean = ", 17));
    ib_kits *k = NULL;
    ASSERT_OK_ERR(ib_kits_open("k", (const int64_t[3]){32, 32, 32}, &k, &err), &err);
    for (size_t q = 0; q < 2; q++) {
        float *img = NULL;
        uint8_t *lab = NULL;
        ASSERT_OK_ERR(ib_kits_load(k, q, &img, &lab, &err), &err);
        memcpy(pay[q], lab, e[q].size);
        ib_free(img);
        ib_free(lab);
    }
    ib_kits_close(k);
    ib_strbuf_reset(&sb);
    ASSERT_OK_ERR(bn->accuracy(st, &cfg, e, 2, &sb, &v, &err), &err);
    ASSERT_STR_EQ(sb.data, "Accuracy: mean = 1.00000, kidney = 1.0000, tumor = 1.0000\n");
    ASSERT_DBL_EQ(v, 1.0);
    /* a wrong-size payload, a missing case */
    e[1].size--;
    ASSERT_STATUS(bn->accuracy(st, &cfg, e, 2, &sb, &v, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "uint8 labels");
    ASSERT_STATUS(bn->accuracy(st, &cfg, e, 1, &sb, &v, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "no prediction for case_00003");
    ib_strbuf_deinit(&sb);
    ib_bench_scratch_free(&scr);
    ib_free(pay[0]);
    ib_free(pay[1]);
    ib_session_destroy(sessions[1]);
    ib_session_destroy(sessions[0]);
    bn->close(st);
    ib_model_destroy(mw);
    ib_model_destroy(m);
}

/* --precision int8 (benchmark.h calib_inputs): a KiTS19 volume is not what the network takes,
 * so calibration gets the middle window of the sliding-window grid; BraTS's padded volume is
 * the input as it is. */
TEST_TIMEOUT(unet_entry_calibration_inputs, 60)
{
    const ib_benchmark *bn = &ib_bench_3d_unet_99;
    ib_err err;
    ib_bench_config cfg;
    ib_bench_config_defaults(&cfg);
    cfg.tiny = true;
    cfg.synth_samples = 1;
    cfg.variant = "kits19";
    ib_model *m = sign_model();
    ib_bench_io io;
    ASSERT_OK_ERR(bn->bind_model(&cfg, 0, m, &io, &err), &err);
    ASSERT_OK_ERR(bn->synthesize(&cfg, "k", &err), &err);
    void *st = NULL;
    size_t total = 0;
    ASSERT_OK_ERR(bn->open(&cfg, "k", &io, &st, &total, &err), &err);
    /* a pre-processed volume of 80 x 48 x 32 (the tiny synthetic cases are all one window,
     * 32^3): 4, 2 and 1 windows a side, each voxel its own index */
    const int64_t dims[5] = {1, 1, 80, 48, 32};
    size_t nvox = 80 * 48 * 32;
    float *vol = ib_malloc(nvox * sizeof *vol);
    for (size_t k = 0; k < nvox; k++)
        vol[k] = (float)k;
    ib_bench_sample smp = {.n_tensors = 1, .mem = vol};
    smp.t[0] = (ib_tensor_view){"input", {IB_DTYPE_FLOAT32, 5, {0}}, vol, nvox * sizeof *vol};
    memcpy(smp.t[0].desc.dims, dims, sizeof dims);
    ib_tensor_view v;
    void *mem = NULL;
    ASSERT_OK_ERR(bn->calib_inputs(st, &cfg, &smp, &v, &mem, &err), &err);
    ASSERT_NOT_NULL(mem);
    const int64_t *sh = &smp.t[0].desc.dims[2], r = 32, st2 = 16;
    ASSERT_STR_EQ(v.name, "input");
    ASSERT_INT_EQ(v.desc.ndim, 5);
    for (int a = 0; a < 5; a++)
        ASSERT_INT_EQ(v.desc.dims[a], a < 2 ? 1 : r);
    int64_t at[3];
    for (int a = 0; a < 3; a++) {
        int64_t windows = (sh[a] - r) / st2 + 1;
        at[a] = windows / 2 * st2;
        ASSERT_TRUE(at[a] + r <= sh[a]);
    }
    ASSERT_INT_EQ(at[0], 32); /* the third of 4 starts on the 80 side, the second of 2 */
    ASSERT_INT_EQ(at[1], 16);
    ASSERT_INT_EQ(at[2], 0);
    const float *img = smp.t[0].data, *win = v.data;
    for (int64_t z = 0; z < r; z += 5)
        for (int64_t y = 0; y < r; y += 3)
            for (int64_t x = 0; x < r; x++)
                ASSERT_DBL_EQ(win[(z * r + y) * r + x],
                              img[((at[0] + z) * sh[1] + at[1] + y) * sh[2] + at[2] + x]);
    /* the sign model at int8, calibrated on it, runs */
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.threads = 1;
    so.precision = IB_PRECISION_INT8;
    so.calib_inputs = &v;
    so.calib_batches = 1;
    so.calib_input_count = 1;
    ib_session *q = NULL;
    ASSERT_OK_ERR(ib_session_create(m, &so, &q, &err), &err);
    ib_session_destroy(q);
    ib_free(mem);
    ib_free(smp.mem);
    bn->close(st);
    /* BraTS: the sample itself, nothing allocated */
    cfg.variant = NULL;
    fixture f;
    setup(&f);
    ib_bench_sample bs;
    ASSERT_OK_ERR(bn->load_sample(f.state, 0, &bs, &err), &err);
    mem = &v;
    ASSERT_OK_ERR(bn->calib_inputs(f.state, &f.cfg, &bs, &v, &mem, &err), &err);
    ASSERT_NULL(mem);
    ASSERT_PTR_EQ(v.data, bs.t[0].data);
    ASSERT_INT_EQ(v.desc.dims[1], bs.t[0].desc.dims[1]);
    ib_free(bs.mem);
    teardown(&f);
    ib_model_destroy(m);
}

TEST_TIMEOUT(unet_entry_kits_sliding_window_and_dice, 60)
{
    kits_case("kits19", NULL);
}

/* the same labels with the sums in the window graph, on the cpu and the reference kernels */
TEST_TIMEOUT(unet_entry_kits_window_graph, 60)
{
    kits_case("kits19-device", "cpu");
    kits_case("kits19-device", "reference");
}
