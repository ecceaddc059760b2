/*
 * bench_unet3d.c - the 3d-unet-99 and 3d-unet-99.9 entries (benchmarks.md §1.6, §4.2):
 * variant "brats19" (default; the v1.1 benchmark) and "kits19" (the v2.0+ benchmark; see
 * bench_unet3d_kits.c for its data path and sliding window).
 *
 * BraTS 2019: the nnU-Net model (src/models/unet3d.c, random weights) or a user file with
 * one float32 input [N,4,p0,p1,p2] and one output [N,4,p0,p1,p2]; the BraTS loader and the
 * reference pre-processing (src/dataset/brats.c) padded to the model's patch; the payload is
 * the logits of the whole padded patch as the reference pytorch_SUT.py returns them
 * (float16 by default, --payload-dtype float32 accepted as accuracy-brats.py's
 * --output_dtype is); accuracy as accuracy-brats.py: strip the padding, argmax over the
 * float16 logits (first maximum wins, np.argmax), put the crop back into the whole volume,
 * region DICE against the remapped ground truth (src/metrics/dice.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "dataset/brats.h"
#include "harness/bench_unet3d.h"
#include "harness/benchmark.h"
#include "inferbench/base.h"
#include "metrics/dice.h"
#include "models/unet3d.h"
#include "onnx/build.h"
#include "ir/graph.h"

/* a valid kits19 variant (an unknown one is refused where an error can be returned) */
static bool u3_is_kits(const ib_bench_config *cfg)
{
    bool kits = false;
    ib_err e;
    return !ib_u3_variant(cfg, &kits, &e) && kits;
}

/* kits19 (v2.1+ rules, benchmarks.md §4.2): reference mean DICE 0.86170 (the checker's
 * figure from v2.1), performance sample count = every inference case (43 from v3.0), the
 * payload uint8 labels (accuracy_kits.py's default --output_dtype). An unknown variant keeps
 * brats19's figures (the entry refuses it at build/bind). */
static void u3_targets(const ib_bench_config *cfg, ib_bench_targets *t)
{
    if (u3_is_kits(cfg)) {
        t->accuracy_reference = 0.86170;
        t->performance_sample_count = 43;
        t->payload_dtype = IB_DTYPE_UINT8;
    }
}

/* the variant: "brats19" (default) or "kits19" ("kits19-device": kits19 with its window sums
 * in the window graph on any backend, as on a device); anything else is a usage error */
int ib_u3_variant(const ib_bench_config *cfg, bool *kits, ib_err *err)
{
    *kits = false;
    if (!cfg->variant || !*cfg->variant || !strcmp(cfg->variant, "brats19"))
        return IB_OK;
    if (!strcmp(cfg->variant, "kits19") || ib_u3_kits_sums_forced(cfg)) {
        *kits = true;
        return IB_OK;
    }
    return ib_err_set(err, IB_EINVAL,
                      "3d-unet: --dataset '%s' unknown; use brats19 (v1.1, default) or kits19 "
                      "(v2.0 and later; kits19-device keeps the window sums in a graph on any "
                      "backend)",
                      cfg->variant);
}

bool ib_u3_kits_sums_forced(const ib_bench_config *cfg)
{
    return cfg->variant && !strcmp(cfg->variant, "kits19-device");
}

/* brats19: the network; kits19: the network and the window graph */
static size_t u3_models_for(const ib_bench_config *cfg)
{
    return u3_is_kits(cfg) ? 2 : 1;
}

static int u3_build(const ib_bench_config *cfg, size_t k, const char *path, ib_err *err)
{
    bool kits;
    int rc = ib_u3_variant(cfg, &kits, err);
    if (rc)
        return rc;
    if (k == 1)
        return ib_u3_kits_build_sums(path, err);
    ib_unet3d_cfg mc;
    if (kits)
        ib_unet3d_cfg_kits(cfg->tiny, &mc);
    else
        ib_unet3d_cfg_brats(cfg->tiny, &mc);
    ib_build *b = NULL;
    rc = ib_models_unet3d(&mc, cfg->seed, &b, err);
    return ib_bench_write_model(rc, b, path, err);
}

/* One float32 rank-5 input [N,C,p0,p1,p2] and one float32 output [N,classes,p0,p1,p2]. */
static int u3_bind(const ib_bench_config *cfg, size_t k, const ib_model *m, ib_bench_io *io,
                   ib_err *err)
{
    bool kits;
    int rc = ib_u3_variant(cfg, &kits, err);
    if (rc)
        return rc;
    if (k == 1)
        return ib_u3_kits_bind_sums(m, io, err);
    memset(io, 0, sizeof *io);
    enum ib_dtype pd = cfg->payload_dtype;
    if (!kits && pd == IB_DTYPE_UINT8)
        return ib_err_set(err, IB_EINVAL,
                          "3d-unet (brats19): --payload-dtype uint8 is the kits19 label payload; "
                          "brats19 logs logits as float16 (default) or float32");
    if (kits && pd != IB_DTYPE_UNDEFINED && pd != IB_DTYPE_UINT8)
        return ib_err_set(err, IB_EINVAL,
                          "3d-unet (kits19): the payload is uint8 labels (accuracy_kits.py's "
                          "default --output_dtype); --payload-dtype %s is not accepted",
                          ib_dtype_name(pd));
    int64_t want_c = kits ? 1 : IB_BRATS_CHANNELS, want_k = kits ? 3 : 4;
    const char *name = NULL, *on = NULL;
    ib_tensor_desc d, od;
    if (ib_model_input_count(m) != 1 || ib_model_input(m, 0, &name, &d) ||
        d.dtype != IB_DTYPE_FLOAT32 || d.ndim != 5 || d.dims[1] != want_c || d.dims[2] <= 0 ||
        d.dims[3] <= 0 || d.dims[4] <= 0)
        return ib_err_set(err, IB_EINVAL,
                          "3d-unet (%s): expected one float32 input [N,%lld,D,H,W] with fixed "
                          "D,H,W (reference ONNX: '%s' [N,%lld,%s])",
                          kits ? "kits19" : "brats19", (long long)want_c, IB_UNET3D_INPUT,
                          (long long)want_c, kits ? "128,128,128" : "224,224,160");
    if (ib_model_output_count(m) < 1 || ib_model_output(m, 0, &on, &od) ||
        od.dtype != IB_DTYPE_FLOAT32 || od.ndim != 5 || od.dims[1] != want_k ||
        od.dims[2] != d.dims[2] || od.dims[3] != d.dims[3] || od.dims[4] != d.dims[4])
        return ib_err_set(err, IB_EINVAL,
                          "3d-unet (%s): output 0 must be float32 logits [N,%lld,%lld,%lld,%lld]",
                          kits ? "kits19" : "brats19", (long long)want_k, (long long)d.dims[2],
                          (long long)d.dims[3], (long long)d.dims[4]);
    if ((rc = ib_bench_bind_input(io, 0, name, &d, err)) ||
        (rc = ib_bench_bind_output(io, 0, on, IB_DTYPE_FLOAT32,
                                   (size_t)(want_k * d.dims[2] * d.dims[3] * d.dims[4]) *
                                       sizeof(float),
                                   err)))
        return rc;
    for (int a = 0; a < 3; a++)
        io->params[a] = d.dims[2 + a];
    io->params[3] = want_k;
    snprintf(io->note, sizeof io->note, "%s: input %s [N,%lld,%lld,%lld,%lld], output %s%s",
             kits ? "kits19 (sliding window over the ROI)" : "brats19", name, (long long)want_c,
             (long long)d.dims[2], (long long)d.dims[3], (long long)d.dims[4], on,
             kits ? ", payload uint8 labels" : ", payload logits");
    return IB_OK;
}

/* ---- BraTS ------------------------------------------------------------------------------- */

typedef struct br_state {
    ib_brats *data;
    char input[IB_BENCH_NAME_MAX];
    int64_t patch[3];
    size_t pvox;
} br_state;

static int br_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    size_t n = cfg->synth_samples ? cfg->synth_samples : ib_bench_3d_unet_99.synth_default_samples;
    /* full: the BraTS 240x240x155 volumes; tiny: small enough for the 64x64x32 patch
     * (array axes z, y, x = 30, 56, 28 -> crops fit 64, 64, 32) */
    if (cfg->tiny)
        return ib_brats_synthesize(dir, n, 28, 56, 30, cfg->seed, err);
    return ib_brats_synthesize(dir, n, 240, 240, 155, cfg->seed, err);
}

static int br_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                   void **state, size_t *total, ib_err *err)
{
    *state = NULL;
    br_state *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
    ib_unet3d_cfg mc; /* io NULL (scoring only): the patch of the model the entry builds */
    ib_unet3d_cfg_brats(cfg->tiny, &mc);
    for (int a = 0; a < 3; a++)
        s->patch[a] = io ? io[0].params[a] : mc.patch[a];
    s->pvox = (size_t)(s->patch[0] * s->patch[1] * s->patch[2]);
    if (io)
        snprintf(s->input, sizeof s->input, "%s", io[0].inputs[0].name);
    int rc = ib_brats_open(dir, s->patch, &s->data, err);
    if (rc) {
        ib_free(s);
        return rc;
    }
    *state = s;
    *total = ib_brats_count(s->data);
    return IB_OK;
}

static void br_close(void *state)
{
    br_state *s = state;
    if (!s)
        return;
    ib_brats_close(s->data);
    ib_free(s);
}

static int br_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    br_state *s = state;
    memset(out, 0, sizeof *out);
    size_t n = IB_BRATS_CHANNELS * s->pvox;
    float *buf = ib_malloc(n * sizeof *buf);
    if (!buf)
        return ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory for sample %zu", index);
    ib_brats_geom g;
    int rc = ib_brats_load(s->data, index, buf, &g, err);
    if (rc) {
        ib_free(buf);
        return rc;
    }
    out->n_tensors = 1;
    out->mem = buf;
    ib_tensor_view *t = &out->t[0];
    t->name = s->input;
    t->data = buf;
    t->capacity = n * sizeof *buf;
    t->desc.dtype = IB_DTYPE_FLOAT32;
    t->desc.ndim = 5;
    int64_t dims[5] = {1, IB_BRATS_CHANNELS, s->patch[0], s->patch[1], s->patch[2]};
    memcpy(t->desc.dims, dims, sizeof dims);
    return IB_OK;
}

static enum ib_dtype br_dtype(const ib_bench_config *cfg)
{
    return ib_benchmark_payload_dtype(&ib_bench_3d_unet_99, cfg);
}

static size_t br_payload_max(void *state, const ib_bench_config *cfg)
{
    br_state *s = state;
    return 4 * s->pvox * ib_dtype_size(br_dtype(cfg));
}

/* the reference SUT: output.astype(np.float16).tobytes() (little-endian) */
static int br_post(void *state, const ib_bench_config *cfg, const ib_bench_batch *b,
                   ib_bench_payload *out, ib_err *err)
{
    br_state *s = state;
    enum ib_dtype pd = br_dtype(cfg);
    size_t per = 4 * s->pvox;
    for (size_t i = 0; i < b->count; i++) {
        const float *y = (const float *)b->outputs[0].data + i * per;
        if (out[i].cap < per * ib_dtype_size(pd))
            return ib_err_set(err, IB_EINVAL, "3d-unet: payload buffer too small");
        uint8_t *p = out[i].data;
        if (pd == IB_DTYPE_FLOAT16) {
            for (size_t k = 0; k < per; k++) {
                uint16_t h = ib_f32_to_f16(y[k]);
                p[2 * k] = (uint8_t)h;
                p[2 * k + 1] = (uint8_t)(h >> 8);
            }
        } else {
            memcpy(p, y, per * sizeof(float)); /* little-endian hosts only (x86, arm64) */
        }
        out[i].size = per * ib_dtype_size(pd);
    }
    return IB_OK;
}

static float logit_at(const uint8_t *d, enum ib_dtype pd, size_t k)
{
    if (pd == IB_DTYPE_FLOAT16)
        return ib_f16_to_f32((uint16_t)(d[2 * k] | d[2 * k + 1] << 8));
    float f;
    memcpy(&f, d + 4 * k, 4);
    return (float)ib_f16_to_f32(ib_f32_to_f16(f)); /* .astype(np.float16) */
}

/* One case: crop of the padded argmax put back into the whole volume, region DICE. */
static int br_case(br_state *s, size_t q, const ib_bench_acc_entry *e, enum ib_dtype pd,
                   double dc[3], ib_err *err)
{
    ib_brats_geom g;
    int rc = ib_brats_geometry(s->data, q, &g, err);
    if (rc)
        return rc;
    uint8_t *gt = NULL;
    size_t n = 0;
    if ((rc = ib_brats_labels(s->data, q, &gt, &n, err)))
        return rc;
    uint8_t *pred = ib_calloc(n ? n : 1, 1);
    if (!pred) {
        ib_free(gt);
        return ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
    }
    const int64_t *p = s->patch;
    for (int64_t z = g.lo[0]; z < g.hi[0]; z++)
        for (int64_t y = g.lo[1]; y < g.hi[1]; y++)
            for (int64_t x = g.lo[2]; x < g.hi[2]; x++) {
                int64_t pz = z - g.lo[0] + g.pad[0], py = y - g.lo[1] + g.pad[1],
                        px = x - g.lo[2] + g.pad[2];
                size_t j = (size_t)((pz * p[1] + py) * p[2] + px);
                unsigned best = 0;
                float bv = logit_at(e->data, pd, j);
                for (unsigned c = 1; c < 4; c++) {
                    float v = logit_at(e->data, pd, c * s->pvox + j);
                    if (v > bv) {
                        bv = v;
                        best = c;
                    }
                }
                pred[(size_t)((z * g.shape[1] + y) * g.shape[2] + x)] = (uint8_t)best;
            }
    ib_dice_brats_case(pred, gt, n, dc);
    ib_free(pred);
    ib_free(gt);
    return IB_OK;
}

static int br_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                       size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    br_state *s = state;
    enum ib_dtype pd = br_dtype(cfg);
    size_t total = ib_brats_count(s->data), want = 4 * s->pvox * ib_dtype_size(pd);
    const ib_bench_acc_entry **last = ib_calloc(total ? total : 1, sizeof *last);
    double(*dc)[3] = ib_calloc(total ? total : 1, sizeof *dc);
    int rc = IB_OK;
    if (!last || !dc) {
        rc = ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
        goto done;
    }
    /* load_loadgen_log: results[qsl_idx] = prediction (a later duplicate replaces) */
    for (size_t i = 0; i < n; i++) {
        if (e[i].qsl_idx >= total) {
            rc = ib_err_set(err, IB_EFORMAT, "3d-unet: accuracy log entry %zu: qsl_idx %llu of %zu",
                            i, (unsigned long long)e[i].qsl_idx, total);
            goto done;
        }
        if (e[i].size != want) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "3d-unet: accuracy log entry %zu: %zu bytes, expected %zu (4 x %lld x "
                            "%lld x %lld %s logits)",
                            i, e[i].size, want, (long long)s->patch[0], (long long)s->patch[1],
                            (long long)s->patch[2], ib_dtype_name(pd));
            goto done;
        }
        last[e[i].qsl_idx] = &e[i];
    }
    for (size_t q = 0; q < total; q++) {
        if (!last[q]) {
            /* accuracy-brats.py: assert all results present ("Missing some results!") */
            rc = ib_err_set(err, IB_EFORMAT, "3d-unet: no prediction for case %zu (%s)", q,
                            ib_brats_case(s->data, q));
            goto done;
        }
        if ((rc = br_case(s, q, last[q], pd, dc[q], err)))
            goto done;
    }
    ib_dice_brats_summary sum;
    ib_dice_brats_summarize((const double(*)[3])dc, total, &sum);
    if (ib_dice_brats_format(&sum, text)) {
        rc = ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
        goto done;
    }
    *value = sum.mean;
done:
    ib_free(last);
    ib_free(dc);
    return rc;
}

/* ---- dispatch on the variant ---------------------------------------------------------------- */

typedef struct u3_state {
    bool kits;
    void *inner;
} u3_state;

static int u3_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    bool kits;
    int rc = ib_u3_variant(cfg, &kits, err);
    if (rc)
        return rc;
    return kits ? ib_u3_kits_synthesize(cfg, dir, err) : br_synthesize(cfg, dir, err);
}

static int u3_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                   void **state, size_t *total, ib_err *err)
{
    *state = NULL;
    bool kits;
    int rc = ib_u3_variant(cfg, &kits, err);
    if (rc)
        return rc;
    u3_state *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory");
    s->kits = kits;
    rc = kits ? ib_u3_kits_open(cfg, dir, io, &s->inner, total, err)
              : br_open(cfg, dir, io, &s->inner, total, err);
    if (rc) {
        ib_free(s);
        return rc;
    }
    *state = s;
    return IB_OK;
}

static void u3_close(void *state)
{
    u3_state *s = state;
    if (!s)
        return;
    if (s->kits)
        ib_u3_kits_close(s->inner);
    else
        br_close(s->inner);
    ib_free(s);
}

static int u3_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    u3_state *s = state;
    return s->kits ? ib_u3_kits_load(s->inner, index, out, err) : br_load(s->inner, index, out, err);
}

static size_t u3_payload_max(void *state, const ib_bench_config *cfg)
{
    u3_state *s = state;
    return s->kits ? ib_u3_kits_payload_max(s->inner, cfg) : br_payload_max(s->inner, cfg);
}

static int u3_post(void *state, const ib_bench_config *cfg, const ib_bench_batch *b,
                   ib_bench_payload *out, ib_err *err)
{
    u3_state *s = state;
    if (s->kits)
        return ib_err_set(err, IB_ESTATE, "3d-unet: kits19 runs through the infer hook");
    return br_post(s->inner, cfg, b, out, err);
}

static int u3_infer(void *state, const ib_bench_config *cfg, ib_session *const *sessions,
                    ib_bench_batch *b, ib_bench_payload *out, ib_err *err)
{
    u3_state *s = state;
    if (s->kits)
        return ib_u3_kits_infer(s->inner, cfg, sessions, b, out, err);
    /* BraTS: the whole padded volume is one model input (no window): the default path */
    int rc = IB_OK;
    if (b->count == 1) {
        b->n_inputs = 1;
        b->inputs[0] = b->samples[0]->t[0];
    } else {
        br_state *bs = s->inner;
        size_t per = IB_BRATS_CHANNELS * bs->pvox;
        float *buf = ib_bench_scratch_get(b->scratch, 0, b->count * per * sizeof(float));
        if (!buf)
            return ib_err_set(err, IB_ENOMEM, "3d-unet: out of memory for a batch of %zu",
                              b->count);
        for (size_t i = 0; i < b->count; i++)
            memcpy(buf + i * per, b->samples[i]->t[0].data, per * sizeof(float));
        b->n_inputs = 1;
        b->inputs[0] = b->samples[0]->t[0];
        b->inputs[0].data = buf;
        b->inputs[0].capacity = b->count * per * sizeof(float);
        b->inputs[0].desc.dims[0] = (int64_t)b->count;
    }
    if ((rc = ib_session_run(sessions[0], b->inputs, 1, b->outputs, b->n_outputs, err)))
        return rc;
    return br_post(s->inner, cfg, b, out, err);
}

static int u3_calib_inputs(void *state, const ib_bench_config *cfg, const ib_bench_sample *smp,
                           ib_tensor_view *views, void **mem, ib_err *err)
{
    (void)cfg;
    u3_state *s = state;
    if (s->kits)
        return ib_u3_kits_calib_inputs(s->inner, smp, views, mem, err);
    views[0] = smp->t[0]; /* BraTS: the padded volume is the model's input */
    *mem = NULL;
    return IB_OK;
}

static int u3_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                       size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    u3_state *s = state;
    if (s->kits)
        return ib_u3_kits_accuracy(s->inner, cfg, e, n, text, value, err);
    return br_accuracy(s->inner, cfg, e, n, text, value, err);
}

#define U3_ENTRY(ident, idstr, frac)                                                              \
    const ib_benchmark ident = {                                                                  \
        .id = idstr,                                                                              \
        .model_name = "3d-unet",                                                                  \
        .title = "3D U-Net (nnU-Net), BraTS 2019 fold 1 (v1.1) or KiTS19 (v2.0+), mean DICE",    \
        .dataset_name = "BraTS 2019 training download + fold1_validation.txt (brats19), or "     \
                        "kits19/data/case_*/ (kits19)",                                           \
        .scenarios = 1u << IB_LG_SCENARIO_OFFLINE,                                                \
        .performance_sample_count = 16,                                                           \
        .server_latency_ns = 0,                                                                   \
        .accuracy_metric = "mean DICE",                                                           \
        .accuracy_reference = 0.85300,                                                            \
        .accuracy_target_fraction = frac,                                                         \
        .payload_dtypes = {IB_DTYPE_FLOAT16, IB_DTYPE_FLOAT32, IB_DTYPE_UINT8,                   \
                           IB_DTYPE_UNDEFINED},                                                   \
        .batch_offline = 1,                                                                       \
        .batch_server = 1,                                                                        \
        .server_max_wait_us = 0,                                                                  \
        .calib_samples = 2,                                                                       \
        .synth_default_samples = 4,                                                               \
        .n_models = 2,                                                                            \
        .models_for = u3_models_for,                                                              \
        .helper_models = true,                                                                    \
        .build_model = u3_build,                                                                  \
        .variant_targets = u3_targets,                                                            \
        .bind_model = u3_bind,                                                                    \
        .synthesize = u3_synthesize,                                                              \
        .open = u3_open,                                                                          \
        .close = u3_close,                                                                        \
        .load_sample = u3_load,                                                                   \
        .payload_max_bytes = u3_payload_max,                                                      \
        .postprocess = u3_post,                                                                   \
        .calib_inputs = u3_calib_inputs,                                                          \
        .infer = u3_infer,                                                                        \
        .accuracy = u3_accuracy,                                                                  \
    }

U3_ENTRY(ib_bench_3d_unet_99, "3d-unet-99", 0.99);
U3_ENTRY(ib_bench_3d_unet_99_9, "3d-unet-99.9", 0.999);
