/*
 * bench_unet3d_kits.c - the kits19 variant of the 3d-unet entries (benchmarks.md §4.2): the
 * KiTS19 loader and pre-processing (src/dataset/kits.c), sliding-window inference in the
 * entry's infer hook as the reference base_SUT.py infer_single_query does it, and the
 * kidney/tumour DICE of accuracy_kits.py (src/metrics/dice.c).
 *
 * Sliding window (inference_utils.py): ROI r^3 from the model's input, stride r/2 (overlap
 * 0.5), window starts 0, s, 2s, ... while start + r <= size (the pre-processing made every
 * size a multiple of s and >= r); result[c] += logits[c] * g and norm += g with the Gaussian
 * map g (ib_kits_gaussian), all float32 in window order; then result / norm and the argmax
 * over the 3 classes (first maximum wins) as the uint8 payload of the whole pre-processed
 * volume, C order. One window per model run (batch 1), as the reference.
 *
 * Where the sums are made (issue 25): on the cpu in the host loop below, which adds a
 * window's logits where the session wrote them; on a device backend (or with --dataset
 * kits19-device) in the window graph, model 1 (one inferbench.WindowAccumulate node, no
 * weights): its session takes each window's logits from the network's session
 * (ib_session_run_linked / a fed run's link) and its sums from its own previous run, so on a
 * GPU a window's 3 x 128^3 logits never leave the device and only the volume's sums come back,
 * once. Both give the same labels: the op adds in the same order with the same roundings.
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "dataset/kits.h"
#include "harness/bench_unet3d.h"
#include "inferbench/base.h"
#include "ir/ops/accum.h"
#include "metrics/dice.h"
#include "models/unet3d.h"
#include "onnx/build.h"

#define KT_CLASSES 3
/* the window graph's names (model 1) */
#define KT_SUMS "acc"
#define KT_SUMS_OUT "acc_out"
#define KT_WINDOW "window"
#define KT_AT "at"
#define KT_WEIGHT "weight"

typedef struct kt_state {
    ib_kits *data;
    char input[IB_BENCH_NAME_MAX], output[IB_BENCH_NAME_MAX];
    int64_t roi;
    float *gauss; /* roi^3 */
    size_t max_vox;
} kt_state;

int ib_u3_kits_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    size_t n = cfg->synth_samples ? cfg->synth_samples : ib_bench_3d_unet_99.synth_default_samples;
    return ib_kits_synthesize(dir, n, cfg->tiny ? 1 : 0, cfg->seed, err);
}

int ib_u3_kits_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                    void **state, size_t *total, ib_err *err)
{
    *state = NULL;
    *total = 0;
    ib_unet3d_cfg mc; /* io NULL (scoring only): the ROI of the model the entry builds */
    ib_unet3d_cfg_kits(cfg->tiny, &mc);
    if (io && (io[0].params[0] != io[0].params[1] || io[0].params[0] != io[0].params[2] ||
               io[0].params[0] % 2))
        return ib_err_set(err, IB_EINVAL,
                          "3d-unet (kits19): the model's ROI is %lldx%lldx%lld; the reference "
                          "window is a cube of even side (128^3)",
                          (long long)io[0].params[0], (long long)io[0].params[1],
                          (long long)io[0].params[2]);
    kt_state *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
    s->roi = io ? io[0].params[0] : mc.patch[0];
    if (io) {
        snprintf(s->input, sizeof s->input, "%s", io[0].inputs[0].name);
        snprintf(s->output, sizeof s->output, "%s", io[0].outputs[0].name);
    }
    const int64_t roi[3] = {s->roi, s->roi, s->roi};
    size_t rv = (size_t)(s->roi * s->roi * s->roi);
    int rc = IB_OK;
    if (!(s->gauss = ib_malloc(rv * sizeof(float))))
        rc = ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
    if (!rc)
        rc = ib_kits_open(dir, roi, &s->data, err);
    if (rc) {
        ib_free(s->gauss);
        ib_free(s);
        return rc;
    }
    ib_kits_gaussian(s->roi, s->gauss);
    for (size_t i = 0; i < ib_kits_count(s->data); i++) {
        int64_t sh[3];
        ib_kits_shape(s->data, i, sh);
        size_t v = (size_t)(sh[0] * sh[1] * sh[2]);
        s->max_vox = v > s->max_vox ? v : s->max_vox;
    }
    *state = s;
    *total = ib_kits_count(s->data);
    return IB_OK;
}

void ib_u3_kits_close(void *state)
{
    kt_state *s = state;
    if (!s)
        return;
    ib_kits_close(s->data);
    ib_free(s->gauss);
    ib_free(s);
}

int ib_u3_kits_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    kt_state *s = state;
    memset(out, 0, sizeof *out);
    float *img = NULL;
    int rc = ib_kits_load(s->data, index, &img, NULL, err);
    if (rc)
        return rc;
    int64_t sh[3];
    ib_kits_shape(s->data, index, sh);
    out->n_tensors = 1;
    out->mem = img;
    ib_tensor_view *t = &out->t[0];
    t->name = s->input;
    t->data = img;
    t->capacity = (size_t)(sh[0] * sh[1] * sh[2]) * sizeof(float);
    t->desc.dtype = IB_DTYPE_FLOAT32;
    t->desc.ndim = 5;
    int64_t dims[5] = {1, 1, sh[0], sh[1], sh[2]};
    memcpy(t->desc.dims, dims, sizeof dims);
    return IB_OK;
}

size_t ib_u3_kits_payload_max(void *state, const ib_bench_config *cfg)
{
    (void)cfg;
    kt_state *s = state;
    return s->max_vox; /* uint8 labels */
}

/* ---- the window graph (model 1) ---------------------------------------------------------- */

int ib_u3_kits_build_sums(const char *path, ib_err *err)
{
    ib_build *b = NULL;
    int rc = ib_build_create(1, 13, &b);
    if (rc)
        return ib_err_set(err, rc, "3d-unet (kits19): out of memory for the window graph");
    /* every size symbolic: the volume's, the network's classes and ROI (read at run time) */
    ib_value_id in[4] = {ib_build_input(b, KT_SUMS, IB_DTYPE_FLOAT32, "1,K1,D,H,W"),
                         ib_build_input(b, KT_WINDOW, IB_DTYPE_FLOAT32, "1,K,R0,R1,R2"),
                         ib_build_input(b, KT_AT, IB_DTYPE_INT64, "3"),
                         ib_build_input(b, KT_WEIGHT, IB_DTYPE_FLOAT32, "1,1,R0,R1,R2")};
    ib_value_id y;
    ib_build_node(b, "WindowAccumulate", "inferbench", "window_sums", in, 4, &y, 1, NULL, 0, "");
    ib_build_output(b, y, KT_SUMS_OUT, IB_DTYPE_FLOAT32, "1,K1,D,H,W");
    return ib_bench_write_model(ib_build_error(b, err), b, path, err);
}

int ib_u3_kits_bind_sums(const ib_model *m, ib_bench_io *io, ib_err *err)
{
    static const char *const want[4] = {KT_SUMS, KT_WINDOW, KT_AT, KT_WEIGHT};
    memset(io, 0, sizeof *io);
    const char *name = NULL;
    ib_tensor_desc d;
    bool ok = ib_model_input_count(m) == 4 && ib_model_output_count(m) == 1 &&
              !ib_model_output(m, 0, &name, &d) && !strcmp(name, KT_SUMS_OUT);
    for (size_t i = 0; ok && i < 4; i++)
        ok = !ib_model_input(m, i, &name, &d) && !strcmp(name, want[i]);
    if (!ok)
        return ib_err_set(err, IB_EINVAL,
                          "3d-unet (kits19): the window graph (model 1) must take acc, window, at "
                          "and weight and give acc_out (delete the cached file to rebuild it)");
    io->keep_inputs = true; /* the weight stays in the session for a volume's fed runs */
    snprintf(io->note, sizeof io->note, "kits19 window sums: inferbench.WindowAccumulate");
    return IB_OK;
}

/* ---- sliding window ------------------------------------------------------------------------ */

/* window (i, j, k) of the volume img [sh] into win [r^3] */
static void kt_crop(const float *img, const int64_t *sh, int64_t i, int64_t j, int64_t k,
                    int64_t r, float *win)
{
    for (int64_t z = 0; z < r; z++)
        for (int64_t y = 0; y < r; y++)
            memcpy(win + (z * r + y) * r, img + ((i + z) * sh[1] + j + y) * sh[2] + k,
                   (size_t)r * sizeof(float));
}

/* Windows along an axis of `size`: starts 0, r/2, r, ... while start + r <= size
 * (get_slice_for_sliding_window, overlap 0.5) */
static int64_t kt_windows(int64_t size, int64_t r)
{
    return (size - r) / (r / 2) + 1;
}

/* Calibration (benchmark.h calib_inputs): one window of the volume, the middle one of the
 * sliding-window grid (a corner window is mostly the background the pre-processing padded). */
int ib_u3_kits_calib_inputs(void *state, const ib_bench_sample *smp, ib_tensor_view *views,
                            void **mem, ib_err *err)
{
    kt_state *s = state;
    const int64_t *sh = &smp->t[0].desc.dims[2];
    int64_t r = s->roi, st = r / 2, at[3];
    for (int a = 0; a < 3; a++)
        at[a] = kt_windows(sh[a], r) / 2 * st; /* the middle of kt_window_loop's grid */
    size_t rv = (size_t)(r * r * r);
    float *win = ib_malloc(rv * sizeof *win);
    if (!win)
        return ib_err_set(err, IB_ENOMEM, "3d-unet (kits19): out of memory for a window");
    kt_crop(smp->t[0].data, sh, at[0], at[1], at[2], r, win);
    views[0] = (ib_tensor_view){.name = s->input,
                                .desc = {IB_DTYPE_FLOAT32, 5, {1, 1, r, r, r}},
                                .data = win,
                                .capacity = rv * sizeof *win};
    *mem = win;
    return IB_OK;
}

/* finalize: image /= norm_map, argmax over the channel axis; acc holds the class sums, then
 * the weight sums, nv each */
static void kt_labels(const float *acc, size_t nv, uint8_t *labels)
{
    const float *norm = acc + (size_t)KT_CLASSES * nv;
    for (size_t v = 0; v < nv; v++) {
        uint8_t best = 0;
        float bv = acc[v] / norm[v];
        for (int c = 1; c < KT_CLASSES; c++) {
            float x = acc[(size_t)c * nv + v] / norm[v];
            if (x > bv) {
                bv = x;
                best = (uint8_t)c;
            }
        }
        labels[v] = best;
    }
}

/* The window's logits lg [C][r^3] added into acc on the host (the cpu's path), by the op's
 * own arithmetic (ir/ops/accum.h), so both paths give the same bytes. */
static void kt_add_host(const kt_state *s, const float *lg, const int64_t *sh, const int64_t *at,
                        float *acc)
{
    ib_window_acc w = {.acc = acc, .win = lg, .g = s->gauss, .at = at, .y = acc,
                       .C = KT_CLASSES};
    for (int a = 0; a < 3; a++) {
        w.S[a] = sh[a];
        w.r[a] = s->roi;
    }
    ib_window_acc_rows(&w, 0, s->roi);
}

/* One pre-processed volume [D][H][W] -> uint8 labels (see the file comment); sums NULL: on
 * the host, else in that session (the window graph) linked to the network's. */
static int kt_window_loop(kt_state *s, ib_session *sess, ib_session *sums,
                          ib_bench_scratch *scr, const float *img, const int64_t *sh,
                          uint8_t *labels, ib_err *err)
{
    int64_t r = s->roi, st = r / 2;
    size_t nv = (size_t)(sh[0] * sh[1] * sh[2]), rv = (size_t)(r * r * r);
    const size_t acc_bytes = (KT_CLASSES + 1) * nv * sizeof(float);
    float *acc = ib_bench_scratch_get(scr, 0, acc_bytes); /* the class sums, then norm */
    float *win = ib_bench_scratch_get(scr, 2, rv * sizeof(float));
    float *lg = sums ? NULL : ib_bench_scratch_get(scr, 3, KT_CLASSES * rv * sizeof(float));
    if (!acc || !win || (!lg && !sums))
        return ib_err_set(err, IB_ENOMEM, "3d-unet (kits19): out of memory for a %lldx%lldx%lld "
                          "volume", (long long)sh[0], (long long)sh[1], (long long)sh[2]);
    memset(acc, 0, acc_bytes);
    int64_t n[3], at[3];
    for (int a = 0; a < 3; a++)
        n[a] = kt_windows(sh[a], r);
    size_t left = (size_t)(n[0] * n[1] * n[2]);
    bool started = false;
    /* the window graph's first run of a volume gives the zero sums and the weight and links
     * the window; the others feed the sums back, keep the weight, and link the next window */
    const ib_tensor_desc at_d = {IB_DTYPE_INT64, 1, {3}};
    ib_tensor_view first[3] = {
        {KT_SUMS, {IB_DTYPE_FLOAT32, 5, {1, KT_CLASSES + 1, sh[0], sh[1], sh[2]}}, acc, 0},
        {KT_AT, at_d, at, 0},
        {KT_WEIGHT, {IB_DTYPE_FLOAT32, 5, {1, 1, r, r, r}}, s->gauss, 0}};
    const ib_session_link link = {KT_WINDOW, sess, s->output, {0}};
    const ib_session_feed fb[3] = {{KT_SUMS, KT_SUMS_OUT, NULL},
                                   {KT_WEIGHT, NULL, NULL},
                                   {KT_WINDOW, s->output, sess}};
    for (int64_t i = 0; i < n[0] * st; i += st)
        for (int64_t j = 0; j < n[1] * st; j += st)
            for (int64_t k = 0; k < n[2] * st; k += st) {
                kt_crop(img, sh, i, j, k, r, win);
                ib_tensor_view in = {.name = s->input,
                                     .desc = {IB_DTYPE_FLOAT32, 5, {1, 1, r, r, r}},
                                     .data = win,
                                     .capacity = rv * sizeof(float)};
                ib_tensor_view out = {.name = s->output,
                                      .data = lg,
                                      .capacity = KT_CLASSES * rv * sizeof(float)};
                int rc = ib_session_run(sess, &in, 1, &out, sums ? 0 : 1, err);
                if (rc)
                    return rc;
                left--;
                at[0] = i, at[1] = j, at[2] = k;
                if (!sums) {
                    kt_add_host(s, lg, sh, at, acc);
                    continue;
                }
                /* the volume's sums come back with the last window only */
                ib_tensor_view so = {KT_SUMS_OUT, {0}, acc, acc_bytes};
                rc = !started ? ib_session_run_linked(sums, first, 3, &link, 1, &so, !left, err)
                              : ib_session_run_fed(sums, &first[1], 1, fb, 3, &so, !left, err);
                if (rc)
                    return rc;
                started = true;
            }
    kt_labels(acc, nv, labels);
    return IB_OK;
}

int ib_u3_kits_infer(void *state, const ib_bench_config *cfg, ib_session *const *sessions,
                     ib_bench_batch *b, ib_bench_payload *out, ib_err *err)
{
    kt_state *s = state;
    /* the window graph on a device (or when asked for): see the file comment */
    ib_session *sums =
        ib_u3_kits_sums_forced(cfg) || ib_bench_session_on_device(sessions[0]) ? sessions[1]
                                                                                : NULL;
    for (size_t i = 0; i < b->count; i++) {
        const ib_tensor_view *t = &b->samples[i]->t[0];
        const int64_t *sh = &t->desc.dims[2];
        size_t nv = (size_t)(sh[0] * sh[1] * sh[2]);
        if (out[i].cap < nv)
            return ib_err_set(err, IB_EINVAL, "3d-unet (kits19): payload buffer too small");
        int rc = kt_window_loop(s, sessions[0], sums, b->scratch, t->data, sh, out[i].data,
                                err);
        if (rc)
            return rc;
        out[i].size = nv;
    }
    return IB_OK;
}

int ib_u3_kits_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                        size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    (void)cfg;
    kt_state *s = state;
    size_t total = ib_kits_count(s->data);
    const ib_bench_acc_entry **last = ib_calloc(total ? total : 1, sizeof *last);
    double(*dc)[2] = ib_calloc(total ? total : 1, sizeof *dc);
    int rc = IB_OK;
    if (!last || !dc) {
        rc = ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
        goto done;
    }
    /* load_loadgen_log: results[case] = prediction (a later duplicate replaces) */
    for (size_t i = 0; i < n; i++) {
        if (e[i].qsl_idx >= total) {
            rc = ib_err_set(err, IB_EFORMAT, "3d-unet: accuracy log entry %zu: qsl_idx %llu of %zu",
                            i, (unsigned long long)e[i].qsl_idx, total);
            goto done;
        }
        int64_t sh[3];
        ib_kits_shape(s->data, e[i].qsl_idx, sh);
        size_t nv = (size_t)(sh[0] * sh[1] * sh[2]);
        if (e[i].size != nv) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "3d-unet (kits19): accuracy log entry %zu (%s): %zu bytes, expected "
                            "%zu uint8 labels (%lldx%lldx%lld)",
                            i, ib_kits_case(s->data, e[i].qsl_idx), e[i].size, nv,
                            (long long)sh[0], (long long)sh[1], (long long)sh[2]);
            goto done;
        }
        last[e[i].qsl_idx] = &e[i];
    }
    for (size_t q = 0; q < total; q++) {
        if (!last[q]) {
            rc = ib_err_set(err, IB_EFORMAT, "3d-unet (kits19): no prediction for %s (%zu)",
                            ib_kits_case(s->data, q), q);
            goto done;
        }
        float *img = NULL;
        uint8_t *lab = NULL;
        if ((rc = ib_kits_load(s->data, q, &img, &lab, err)))
            goto done;
        ib_dice_kits_case(last[q]->data, lab, last[q]->size, dc[q]);
        ib_free(img);
        ib_free(lab);
    }
    ib_dice_kits_summary sum;
    ib_dice_kits_summarize((const double(*)[2])dc, total, &sum);
    if (ib_dice_kits_format(&sum, text)) {
        rc = ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
        goto done;
    }
    *value = sum.composite;
done:
    ib_free(last);
    ib_free(dc);
    return rc;
}
