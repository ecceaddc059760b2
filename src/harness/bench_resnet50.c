/*
 * bench_resnet50.c - the resnet50 entry of the benchmark table (benchmarks.md §1.1): the
 * MLPerf ResNet50-v1.5 builder (src/models/resnet50.c), the ImageNet loader and reference
 * pre-processing (src/dataset/), and top-1 as tools/accuracy-imagenet.py computes it
 * (src/metrics/topk.c).
 *
 * Models accepted (bind): one float32 rank-4 input, NCHW [N,3,224,224] (the MLPerf ONNX,
 * "input_tensor:0") or NHWC [N,224,224,3] (a TF-layout export), or the same as uint8 pixels
 * (--variant u8-input builds one: the model subtracts the means); outputs either an integer
 * class id (the ONNX "ArgMax:0", int64 [N]) or scores [N,1001] / [N,1000] (argmax taken in
 * the SUT). The payload is what the reference's PostProcessCommon(offset=-1) logs: the
 * class id minus 1 for 1001-class models (class 0 is "background"), as float32 by default
 * (the reference), or int32/int64 (NVIDIA/Dell logs), read back by the metric with the
 * same dtype.
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "harness/benchmark.h"
#include "inferbench/dataset.h"
#include "inferbench/metrics.h"
#include "models/models.h"
#include "onnx/build.h"

#define RN_SIZE 224

typedef struct rn_state {
    ib_imagenet *data;
    char input[IB_BENCH_NAME_MAX];
    enum ib_layout layout;
    bool u8;           /* the model takes the uint8 pixels (it subtracts the means) */
    bool class_output; /* the model returns a class id (else scores) */
    enum ib_dtype out_dtype;
    int64_t classes;   /* 1001 or 1000 */
} rn_state;

/* --variant: none (float32 input, as the MLPerf ONNX) or "u8-input": the built-in model takes
 * the reference's uint8 pixels and subtracts the means itself (ib_models_opts.u8_input), so
 * the same values reach the first convolution while a batch moves a quarter of the bytes
 * (collated on the host, copied to a GPU: issue 24). */
static int rn_variant(const ib_bench_config *cfg, bool *u8, ib_err *err)
{
    const char *v = cfg->variant ? cfg->variant : "";
    *u8 = !strcmp(v, "u8-input");
    if (*v && !*u8)
        return ib_err_set(err, IB_EINVAL,
                          "resnet50: unknown variant '%s' (use --variant u8-input: the "
                          "built-in model takes uint8 pixels and subtracts the means itself)",
                          v);
    return IB_OK;
}

static int rn_build(const ib_bench_config *cfg, size_t k, const char *path, ib_err *err)
{
    (void)k;
    ib_models_opts o = {.seed = cfg->seed, .tiny = cfg->tiny};
    int rc = rn_variant(cfg, &o.u8_input, err);
    if (rc)
        return rc;
    ib_build *b = NULL;
    rc = ib_models_resnet50(&o, &b, err);
    return ib_bench_write_model(rc, b, path, err);
}

/* The model's shape for one image: NCHW or NHWC at 224, batch dim free or fixed; float32
 * mean-subtracted values or uint8 pixels. */
static bool rn_input_layout(const ib_tensor_desc *d, enum ib_layout *layout)
{
    if ((d->dtype != IB_DTYPE_FLOAT32 && d->dtype != IB_DTYPE_UINT8) || d->ndim != 4)
        return false;
    if (d->dims[1] == 3 && d->dims[2] == RN_SIZE && d->dims[3] == RN_SIZE) {
        *layout = IB_LAYOUT_NCHW;
        return true;
    }
    if (d->dims[1] == RN_SIZE && d->dims[2] == RN_SIZE && d->dims[3] == 3) {
        *layout = IB_LAYOUT_NHWC;
        return true;
    }
    return false;
}

static int rn_bind(const ib_bench_config *cfg, size_t k, const ib_model *m, ib_bench_io *io,
                   ib_err *err)
{
    (void)k;
    memset(io, 0, sizeof *io);
    bool want_u8;
    int vrc = rn_variant(cfg, &want_u8, err);
    if (vrc)
        return vrc;
    if (ib_model_input_count(m) != 1)
        return ib_err_set(err, IB_EINVAL,
                          "resnet50: the model has %zu inputs; expected one float32 image input "
                          "[N,3,224,224] (MLPerf ONNX: %s) or [N,224,224,3]",
                          ib_model_input_count(m), IB_RESNET50_INPUT);
    const char *name = NULL;
    ib_tensor_desc d;
    enum ib_layout layout;
    if (ib_model_input(m, 0, &name, &d) || !rn_input_layout(&d, &layout))
        return ib_err_set(err, IB_EINVAL,
                          "resnet50: input '%s' is not float32 [N,3,224,224] or [N,224,224,3] "
                          "(mean-subtracted) or uint8 (the pixels)",
                          name ? name : "?");
    if (want_u8 && d.dtype != IB_DTYPE_UINT8)
        return ib_err_set(err, IB_EINVAL,
                          "resnet50: --variant u8-input needs a model whose input '%s' is uint8; "
                          "this one takes float32 (drop --variant, or use the built-in model)",
                          name);
    int rc = ib_bench_bind_input(io, 0, name, &d, err);
    if (rc)
        return rc;

    /* prefer an integer class output; else scores [N,1001|1000] */
    int cls = -1, scores = -1;
    int64_t classes = 0;
    for (size_t i = 0; i < ib_model_output_count(m); i++) {
        const char *on = NULL;
        ib_tensor_desc od;
        if (ib_model_output(m, i, &on, &od))
            continue;
        bool is_int = od.dtype == IB_DTYPE_INT64 || od.dtype == IB_DTYPE_INT32;
        if (is_int && od.ndim == 1 && cls < 0)
            cls = (int)i;
        if (od.dtype == IB_DTYPE_FLOAT32 && od.ndim == 2 &&
            (od.dims[1] == 1001 || od.dims[1] == 1000) && scores < 0) {
            scores = (int)i;
            classes = od.dims[1];
        }
    }
    if (cls < 0 && scores < 0)
        return ib_err_set(err, IB_EINVAL,
                          "resnet50: no class output: expected an int64 [N] class id (MLPerf "
                          "ONNX: %s) or float32 scores [N,1001] / [N,1000]",
                          IB_RESNET50_ARGMAX);
    const char *on = NULL;
    ib_tensor_desc od;
    ib_model_output(m, (size_t)(cls >= 0 ? cls : scores), &on, &od);
    if ((rc = ib_bench_bind_output(io, 0, on, od.dtype,
                                   cls >= 0 ? ib_dtype_size(od.dtype)
                                            : (size_t)classes * sizeof(float),
                                   err)))
        return rc;
    if (classes == 0)
        classes = IB_RESNET50_CLASSES; /* an ArgMax-only graph: the MLPerf 1001-class layout */
    io->params[0] = classes;
    snprintf(io->note, sizeof io->note, "input %s (%s%s), output %s (%s, %lld classes%s)", name,
             layout == IB_LAYOUT_NCHW ? "NCHW" : "NHWC",
             d.dtype == IB_DTYPE_UINT8 ? ", uint8 pixels: the model subtracts the means" : "", on,
             cls >= 0 ? "class id" : "scores, argmax in the SUT", (long long)classes,
             classes == 1001 ? ", payload = class - 1" : "");
    return IB_OK;
}

static int rn_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    size_t n = cfg->synth_samples ? cfg->synth_samples : ib_bench_resnet50.synth_default_samples;
    return ib_imagenet_synthesize(dir, n, cfg->seed, err);
}

static int rn_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                   void **state, size_t *total, ib_err *err)
{
    (void)cfg;
    *state = NULL;
    rn_state *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "resnet50: out of memory");
    int rc = ib_imagenet_open(dir, NULL, &s->data, err);
    if (rc) {
        ib_free(s);
        return rc;
    }
    if (io) {
        snprintf(s->input, sizeof s->input, "%s", io[0].inputs[0].name);
        rn_input_layout(&io[0].inputs[0].desc, &s->layout);
        s->u8 = io[0].inputs[0].desc.dtype == IB_DTYPE_UINT8;
        s->out_dtype = io[0].outputs[0].dtype;
        s->class_output = s->out_dtype != IB_DTYPE_FLOAT32;
        s->classes = io[0].params[0];
    } /* else scoring only (benchmark.h): the accuracy reads the labels alone */
    *state = s;
    *total = ib_imagenet_count(s->data);
    return IB_OK;
}

static void rn_close(void *state)
{
    rn_state *s = state;
    if (!s)
        return;
    ib_imagenet_close(s->data);
    ib_free(s);
}

static int rn_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    rn_state *s = state;
    memset(out, 0, sizeof *out);
    size_t n = 3 * RN_SIZE * RN_SIZE, es = s->u8 ? 1 : sizeof(float);
    void *buf = ib_malloc(n * es);
    if (!buf)
        return ib_err_set(err, IB_ENOMEM, "resnet50: out of memory");
    int rc = s->u8 ? ib_imagenet_load_u8(s->data, index, RN_SIZE, s->layout, buf, err)
                   : ib_imagenet_load(s->data, index, RN_SIZE, s->layout, buf, err);
    if (rc) {
        ib_free(buf);
        return rc;
    }
    out->n_tensors = 1;
    out->mem = buf;
    ib_tensor_view *t = &out->t[0];
    t->name = s->input;
    t->data = buf;
    t->capacity = n * es;
    t->desc.dtype = s->u8 ? IB_DTYPE_UINT8 : IB_DTYPE_FLOAT32;
    t->desc.ndim = 4;
    int64_t nchw[4] = {1, 3, RN_SIZE, RN_SIZE}, nhwc[4] = {1, RN_SIZE, RN_SIZE, 3};
    memcpy(t->desc.dims, s->layout == IB_LAYOUT_NCHW ? nchw : nhwc, sizeof nchw);
    return IB_OK;
}

static size_t rn_payload_max(void *state, const ib_bench_config *cfg)
{
    (void)state;
    return ib_dtype_size(ib_benchmark_payload_dtype(&ib_bench_resnet50, cfg));
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int rn_post(void *state, const ib_bench_config *cfg, const ib_bench_batch *b,
                   ib_bench_payload *out, ib_err *err)
{
    rn_state *s = state;
    enum ib_dtype pd = ib_benchmark_payload_dtype(&ib_bench_resnet50, cfg);
    const ib_tensor_view *o = &b->outputs[0];
    int64_t offset = s->classes == 1001 ? -1 : 0; /* PostProcessCommon(offset=-1) */
    for (size_t i = 0; i < b->count; i++) {
        int64_t cls;
        if (!s->class_output)
            cls = ib_metric_argmax_f32((const float *)o->data + i * (size_t)s->classes,
                                       (size_t)s->classes);
        else if (s->out_dtype == IB_DTYPE_INT64)
            cls = ((const int64_t *)o->data)[i];
        else
            cls = ((const int32_t *)o->data)[i];
        cls += offset;
        if (out[i].cap < ib_dtype_size(pd))
            return ib_err_set(err, IB_EINVAL, "resnet50: payload buffer too small");
        if (pd == IB_DTYPE_FLOAT32) {
            float f = (float)cls;
            uint32_t w;
            memcpy(&w, &f, 4);
            put_le(out[i].data, w, 4);
            out[i].size = 4;
        } else if (pd == IB_DTYPE_INT32) {
            put_le(out[i].data, (uint32_t)(int32_t)cls, 4);
            out[i].size = 4;
        } else {
            put_le(out[i].data, (uint64_t)cls, 8);
            out[i].size = 8;
        }
    }
    return IB_OK;
}

static int rn_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                       size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    rn_state *s = state;
    size_t nl = ib_imagenet_count(s->data);
    int32_t *labels = ib_malloc(sizeof *labels * (nl ? nl : 1));
    ib_metric_record *rec = ib_malloc(sizeof *rec * (n ? n : 1));
    int rc = IB_ENOMEM;
    if (!labels || !rec) {
        rc = ib_err_set(err, rc, "resnet50: out of memory");
        goto done;
    }
    for (size_t i = 0; i < nl; i++)
        labels[i] = ib_imagenet_label(s->data, i);
    for (size_t i = 0; i < n; i++)
        rec[i] = (ib_metric_record){e[i].qsl_idx, e[i].data, e[i].size};
    ib_metric_top1 r;
    rc = ib_metric_top1_compute(rec, n, labels, nl,
                                ib_benchmark_payload_dtype(&ib_bench_resnet50, cfg), &r, err);
    if (rc)
        goto done;
    char line[160];
    ib_metric_top1_format(&r, line, sizeof line);
    if (ib_strbuf_printf(text, "%s\n", line)) {
        rc = ib_err_set(err, IB_ENOMEM, "resnet50: out of memory");
        goto done;
    }
    *value = r.accuracy_pct;
done:
    ib_free(labels);
    ib_free(rec);
    return rc;
}

const ib_benchmark ib_bench_resnet50 = {
    .id = "resnet50",
    .model_name = "resnet50",
    .title = "ResNet50-v1.5, ImageNet 2012 validation, top-1",
    .dataset_name = "ImageNet 2012 validation (folder of JPEGs + val_map.txt)",
    .scenarios = (1u << IB_LG_SCENARIO_SINGLE_STREAM) | (1u << IB_LG_SCENARIO_MULTI_STREAM) |
                 (1u << IB_LG_SCENARIO_SERVER) | (1u << IB_LG_SCENARIO_OFFLINE),
    .performance_sample_count = 1024,
    .server_latency_ns = 15000000,
    .accuracy_metric = "accuracy",
    .accuracy_reference = 76.46,
    .accuracy_target_fraction = 0.99,
    .payload_dtypes = {IB_DTYPE_FLOAT32, IB_DTYPE_INT32, IB_DTYPE_INT64, IB_DTYPE_UNDEFINED},
    .batch_offline = 32,
    .batch_server = 8,
    .server_max_wait_us = 1000,
    .device_batch_per_unit = {2, 0.5},
    .device_sample_bytes = 16u << 20,
    .calib_samples = 32,
    .synth_default_samples = 64,
    .n_models = 1,
    .build_model = rn_build,
    .bind_model = rn_bind,
    .synthesize = rn_synthesize,
    .open = rn_open,
    .close = rn_close,
    .load_sample = rn_load,
    .free_sample = NULL,
    .calib_index = NULL,
    .collate = NULL,
    .payload_max_bytes = rn_payload_max,
    .postprocess = rn_post,
    .infer = NULL,
    .accuracy = rn_accuracy,
};
