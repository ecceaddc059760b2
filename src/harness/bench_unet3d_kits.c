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
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "dataset/kits.h"
#include "harness/bench_unet3d.h"
#include "inferbench/base.h"
#include "metrics/dice.h"
#include "models/unet3d.h"

#define KT_CLASSES 3

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

/* One pre-processed volume [D][H][W] -> uint8 labels (see the file comment). */
static int kt_window_loop(kt_state *s, ib_session *sess, ib_bench_scratch *scr, const float *img,
                          const int64_t *sh, uint8_t *labels, ib_err *err)
{
    int64_t r = s->roi, st = r / 2;
    size_t nv = (size_t)(sh[0] * sh[1] * sh[2]), rv = (size_t)(r * r * r);
    float *res = ib_bench_scratch_get(scr, 0, KT_CLASSES * nv * sizeof(float));
    float *norm = ib_bench_scratch_get(scr, 1, nv * sizeof(float));
    float *win = ib_bench_scratch_get(scr, 2, rv * sizeof(float));
    float *lg = ib_bench_scratch_get(scr, 3, KT_CLASSES * rv * sizeof(float));
    if (!res || !norm || !win || !lg)
        return ib_err_set(err, IB_ENOMEM, "3d-unet (kits19): out of memory for a %lldx%lldx%lld "
                          "volume", (long long)sh[0], (long long)sh[1], (long long)sh[2]);
    memset(res, 0, KT_CLASSES * nv * sizeof(float));
    memset(norm, 0, nv * sizeof(float));
    const float *g = s->gauss;
    int64_t n[3];
    for (int a = 0; a < 3; a++)
        n[a] = (sh[a] - r) / st + 1; /* get_slice_for_sliding_window */
    for (int64_t i = 0; i < n[0] * st; i += st)
        for (int64_t j = 0; j < n[1] * st; j += st)
            for (int64_t k = 0; k < n[2] * st; k += st) {
                for (int64_t z = 0; z < r; z++)
                    for (int64_t y = 0; y < r; y++)
                        memcpy(win + (z * r + y) * r, img + ((i + z) * sh[1] + j + y) * sh[2] + k,
                               (size_t)r * sizeof(float));
                ib_tensor_view in = {.name = s->input,
                                     .desc = {IB_DTYPE_FLOAT32, 5, {1, 1, r, r, r}},
                                     .data = win,
                                     .capacity = rv * sizeof(float)};
                ib_tensor_view out = {.name = s->output,
                                      .data = lg,
                                      .capacity = KT_CLASSES * rv * sizeof(float)};
                int rc = ib_session_run(sess, &in, 1, &out, 1, err);
                if (rc)
                    return rc;
                for (int64_t z = 0; z < r; z++)
                    for (int64_t y = 0; y < r; y++) {
                        size_t row = (size_t)(((i + z) * sh[1] + j + y) * sh[2] + k);
                        const float *gr = g + (z * r + y) * r;
                        for (int c = 0; c < KT_CLASSES; c++) {
                            float *dst = res + (size_t)c * nv + row;
                            const float *src = lg + (size_t)c * rv + (size_t)((z * r + y) * r);
                            for (int64_t x = 0; x < r; x++)
                                dst[x] += src[x] * gr[x];
                        }
                        for (int64_t x = 0; x < r; x++)
                            norm[row + (size_t)x] += gr[x];
                    }
            }
    /* finalize: image /= norm_map, argmax over the channel axis */
    for (size_t v = 0; v < nv; v++) {
        uint8_t best = 0;
        float bv = res[v] / norm[v];
        for (int c = 1; c < KT_CLASSES; c++) {
            float x = res[(size_t)c * nv + v] / norm[v];
            if (x > bv) {
                bv = x;
                best = (uint8_t)c;
            }
        }
        labels[v] = best;
    }
    return IB_OK;
}

int ib_u3_kits_infer(void *state, const ib_bench_config *cfg, ib_session *const *sessions,
                     ib_bench_batch *b, ib_bench_payload *out, ib_err *err)
{
    (void)cfg;
    kt_state *s = state;
    for (size_t i = 0; i < b->count; i++) {
        const ib_tensor_view *t = &b->samples[i]->t[0];
        const int64_t *sh = &t->desc.dims[2];
        size_t nv = (size_t)(sh[0] * sh[1] * sh[2]);
        if (out[i].cap < nv)
            return ib_err_set(err, IB_EINVAL, "3d-unet (kits19): payload buffer too small");
        int rc = kt_window_loop(s, sessions[0], b->scratch, t->data, sh, out[i].data, err);
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
