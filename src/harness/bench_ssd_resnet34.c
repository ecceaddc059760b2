/*
 * bench_ssd_resnet34.c - the ssd-resnet34 entry of the benchmark table (benchmarks.md §1.2):
 * the SSD-ResNet34 builder (src/models/ssd_resnet34.c), the COCO loader and
 * pre_process_coco_resnet34 (src/dataset/coco.c), the timed decode + NMS (ssd_r34.py
 * decode_batch, src/ir/ops/ssd_post.c) and mAP as tools/accuracy-coco.py --use-inv-map
 * computes it (src/metrics/coco_acc.c, coco_map.c).
 *
 * Models accepted (bind): one float32 input [N,3,1200,1200] (NCHW) and the raw heads, a
 * float32 [N,4,15130] box output and a float32 [N,81,15130] class-logit output (found by
 * shape). The official ONNX files carry the post-processing inside the graph (boxes,
 * labels, scores); those are not accepted yet (bind says so). The payload is the
 * PostProcessCocoPt layout: float32 groups (qsl_idx, ymin, xmin, ymax, xmax, score, label).
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "dataset/coco.h"
#include "harness/benchmark.h"
#include "metrics/coco_map.h"
#include "ir/ops/ssd_post.h"
#include "models/ssd_resnet34.h"
#include "onnx/build.h"

#define SSD_SIZE 1200
#define SSD_A IB_SSD_R34_ANCHORS
#define SSD_C IB_SSD_R34_CLASSES

typedef struct ssd_state {
    ib_coco *data;
    char input[IB_BENCH_NAME_MAX];
    float *anchors; /* [SSD_A][4] */
    ib_ssd_post_params post;
    bool graph_post; /* the model's outputs are inferbench.SSDPostprocess's rows and counts */
} ssd_state;

/* --variant: "host-post" (default) decodes the raw heads in the SUT after the session;
 * "graph-post" builds the model with inferbench.SSDPostprocess at its end, so the backend
 * runs decode + NMS (on a GPU, where the 4.9 ms an image it takes on one host core would
 * otherwise cap the rate). Both give the same detections on the cpu. */
static int ssd_variant(const ib_bench_config *cfg, bool *graph_post, ib_err *err)
{
    const char *v = cfg->variant && *cfg->variant ? cfg->variant : "host-post";
    *graph_post = strcmp(v, "graph-post") == 0;
    if (!*graph_post && strcmp(v, "host-post") != 0)
        return ib_err_set(err, IB_EINVAL,
                          "ssd-resnet34: unknown variant '%s' (use --variant host-post, decode + "
                          "NMS in the SUT after the session, or graph-post, inside the graph)",
                          v);
    return IB_OK;
}

static int ssd_build(const ib_bench_config *cfg, size_t k, const char *path, ib_err *err)
{
    (void)k;
    ib_models_opts o = {.seed = cfg->seed, .tiny = cfg->tiny};
    int rc = ssd_variant(cfg, &o.with_postprocess, err);
    if (rc)
        return rc;
    ib_build *b = NULL;
    rc = ib_models_ssd_resnet34(&o, &b, err);
    return ib_bench_write_model(rc, b, path, err);
}

/* The graph-post model's outputs: rows [N, 200, 6] float32 and counts [N] int64. */
static int bind_graph_post(const ib_model *m, ib_bench_io *io, const char *in_name, ib_err *err)
{
    int rows = -1, cnt = -1;
    for (size_t i = 0; i < ib_model_output_count(m); i++) {
        const char *on = NULL;
        ib_tensor_desc od;
        if (ib_model_output(m, i, &on, &od) || strlen(on) >= IB_BENCH_NAME_MAX)
            continue;
        if (od.dtype == IB_DTYPE_FLOAT32 && od.ndim == 3 && od.dims[1] == 200 && od.dims[2] == 6)
            rows = (int)i;
        else if (od.dtype == IB_DTYPE_INT64 && od.ndim == 1)
            cnt = (int)i;
    }
    if (rows < 0 || cnt < 0)
        return ib_err_set(err, IB_EINVAL,
                          "ssd-resnet34 (variant graph-post): expected the outputs of "
                          "inferbench.SSDPostprocess, float32 [N,200,6] detections (%s) and "
                          "int64 [N] counts (%s)",
                          IB_SSD_R34_DETS, IB_SSD_R34_COUNT);
    const char *names[2];
    ib_tensor_desc od;
    ib_model_output(m, (size_t)rows, &names[0], &od);
    ib_model_output(m, (size_t)cnt, &names[1], &od);
    int rc = ib_bench_bind_output(io, 0, names[0], IB_DTYPE_FLOAT32, 200 * 6 * sizeof(float), err);
    if (!rc)
        rc = ib_bench_bind_output(io, 1, names[1], IB_DTYPE_INT64, sizeof(int64_t), err);
    if (!rc)
        snprintf(io->note, sizeof io->note,
                 "input %s (NCHW 1200x1200), outputs %s and %s: decode + NMS inside the graph "
                 "(inferbench.SSDPostprocess)",
                 in_name, names[0], names[1]);
    return rc;
}

static int ssd_bind(const ib_bench_config *cfg, size_t k, const ib_model *m, ib_bench_io *io,
                    ib_err *err)
{
    (void)k;
    bool graph_post = false;
    int vrc = ssd_variant(cfg, &graph_post, err);
    if (vrc)
        return vrc;
    memset(io, 0, sizeof *io);
    const char *name = NULL;
    ib_tensor_desc d;
    if (ib_model_input_count(m) != 1 || ib_model_input(m, 0, &name, &d) ||
        d.dtype != IB_DTYPE_FLOAT32 || d.ndim != 4 || d.dims[1] != 3 || d.dims[2] != SSD_SIZE ||
        d.dims[3] != SSD_SIZE)
        return ib_err_set(err, IB_EINVAL,
                          "ssd-resnet34: expected one float32 input [N,3,1200,1200] (NCHW); "
                          "the model has %zu inputs",
                          ib_model_input_count(m));
    int rc = ib_bench_bind_input(io, 0, name, &d, err);
    if (rc)
        return rc;
    if (graph_post)
        return bind_graph_post(m, io, name, err);
    int loc = -1, conf = -1;
    for (size_t i = 0; i < ib_model_output_count(m); i++) {
        const char *on = NULL;
        ib_tensor_desc od;
        if (ib_model_output(m, i, &on, &od) || od.dtype != IB_DTYPE_FLOAT32 || od.ndim != 3 ||
            od.dims[2] != SSD_A || strlen(on) >= IB_BENCH_NAME_MAX)
            continue;
        if (od.dims[1] == 4 && loc < 0)
            loc = (int)i;
        else if (od.dims[1] == SSD_C && conf < 0)
            conf = (int)i;
    }
    if (loc < 0 || conf < 0)
        return ib_err_set(err, IB_EINVAL,
                          "ssd-resnet34: expected the raw heads as outputs, float32 "
                          "[N,4,15130] boxes and [N,81,15130] class logits (as the built "
                          "model's %s and %s); graphs with the post-processing inside (the "
                          "official ONNX files) are not supported yet",
                          IB_SSD_R34_LOCS, IB_SSD_R34_CONFS);
    int idx[2] = {loc, conf};
    size_t per[2] = {4 * SSD_A * sizeof(float), (size_t)SSD_C * SSD_A * sizeof(float)};
    const char *names[2];
    for (int j = 0; j < 2; j++) {
        ib_tensor_desc od;
        ib_model_output(m, (size_t)idx[j], &names[j], &od);
        if ((rc = ib_bench_bind_output(io, (size_t)j, names[j], IB_DTYPE_FLOAT32, per[j], err)))
            return rc;
    }
    snprintf(io->note, sizeof io->note,
             "input %s (NCHW 1200x1200), outputs %s (boxes) and %s (logits), decode + NMS in "
             "the SUT",
             name, names[0], names[1]);
    return IB_OK;
}

static int ssd_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    size_t n =
        cfg->synth_samples ? cfg->synth_samples : ib_bench_ssd_resnet34.synth_default_samples;
    return ib_coco_synthesize(dir, n, cfg->seed, err);
}

static void ssd_close(void *state)
{
    ssd_state *s = state;
    if (!s)
        return;
    ib_coco_close(s->data);
    ib_free(s->anchors);
    ib_free(s);
}

static int ssd_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                    void **state, size_t *total, ib_err *err)
{
    *state = NULL;
    bool graph_post = false;
    int rc = ssd_variant(cfg, &graph_post, err);
    if (rc)
        return rc;
    ssd_state *s = ib_calloc(1, sizeof *s);
    if (!s || !(s->anchors = ib_malloc(4 * SSD_A * sizeof *s->anchors))) {
        ib_free(s);
        return ib_err_set(err, IB_ENOMEM, "ssd-resnet34: out of memory");
    }
    s->graph_post = graph_post;
    rc = ib_coco_open(dir, NULL, &s->data, err);
    if (rc) {
        ssd_close(s);
        return rc;
    }
    if (ib_coco_category_count(s->data) != SSD_C - 1) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: %zu categories; the 81-label model needs the 80 of COCO 2017 "
                        "(label l = categories[l - 1])",
                        dir, ib_coco_category_count(s->data));
        ssd_close(s);
        return rc;
    }
    ib_ssd_r34_anchors(s->anchors);
    ib_ssd_post_params_default(&s->post);
    if (io) /* NULL: scoring only */
        snprintf(s->input, sizeof s->input, "%s", io[0].inputs[0].name);
    *state = s;
    *total = ib_coco_count(s->data);
    return IB_OK;
}

static int ssd_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    ssd_state *s = state;
    memset(out, 0, sizeof *out);
    size_t n = 3 * (size_t)SSD_SIZE * SSD_SIZE;
    float *buf = ib_malloc(n * sizeof *buf);
    if (!buf)
        return ib_err_set(err, IB_ENOMEM, "ssd-resnet34: out of memory");
    int rc = ib_coco_load(s->data, index, SSD_SIZE, IB_LAYOUT_NCHW, buf, err);
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
    t->desc.ndim = 4;
    int64_t dims[4] = {1, 3, SSD_SIZE, SSD_SIZE};
    memcpy(t->desc.dims, dims, sizeof dims);
    return IB_OK;
}

static size_t ssd_payload_max(void *state, const ib_bench_config *cfg)
{
    (void)cfg;
    ssd_state *s = state;
    return (size_t)s->post.max_out * 7 * sizeof(float);
}

static int ssd_post(void *state, const ib_bench_config *cfg, const ib_bench_batch *b,
                    ib_bench_payload *out, ib_err *err)
{
    (void)cfg;
    ssd_state *s = state;
    ib_ssd_det det[200];
    float f[7 * 200];
    for (size_t i = 0; i < b->count; i++) {
        size_t n = 0;
        if (s->graph_post) { /* the graph decoded: its rows and count */
            int64_t c = ((const int64_t *)b->outputs[1].data)[i];
            if (c < 0 || c > s->post.max_out)
                return ib_err_set(err, IB_EFORMAT,
                                  "ssd-resnet34: the model reported %lld detections for one "
                                  "image (0..%d expected)",
                                  (long long)c, s->post.max_out);
            n = (size_t)c;
            ib_ssd_from_rows((const float *)b->outputs[0].data + i * 200 * 6, n, det);
        } else {
            const float *loc = (const float *)b->outputs[0].data + i * 4 * SSD_A;
            const float *conf = (const float *)b->outputs[1].data + i * (size_t)SSD_C * SSD_A;
            int rc = ib_ssd_post(loc, conf, s->anchors, SSD_A, SSD_C, &s->post, det, &n, err);
            if (rc)
                return rc;
        }
        ib_ssd_payload(b->indices[i], det, n, f);
        size_t bytes = n * 7 * sizeof(float);
        if (out[i].cap < bytes)
            return ib_err_set(err, IB_EINVAL, "ssd-resnet34: payload buffer too small");
        for (size_t k = 0; k < 7 * n; k++) { /* little-endian float32, as np.float32 bytes */
            uint32_t w;
            memcpy(&w, &f[k], 4);
            for (int j = 0; j < 4; j++)
                out[i].data[4 * k + (size_t)j] = (uint8_t)(w >> (8 * j));
        }
        out[i].size = bytes;
    }
    return IB_OK;
}

static int ssd_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                        size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    (void)cfg;
    ssd_state *s = state;
    size_t ni = ib_coco_count(s->data), nc = ib_coco_category_count(s->data), ng = 0;
    const ib_coco_gt *gts = ib_coco_annotations(s->data, &ng);
    ib_coco_image_info *info = ib_malloc(ni * sizeof *info);
    int64_t *cats = ib_malloc(nc * sizeof *cats);
    ib_metric_record *rec = ib_malloc((n ? n : 1) * sizeof *rec);
    int rc = IB_OK;
    if (!info || !cats || !rec) {
        rc = ib_err_set(err, IB_ENOMEM, "ssd-resnet34: out of memory");
        goto done;
    }
    for (size_t i = 0; i < ni; i++) {
        const ib_coco_image *im = ib_coco_image_at(s->data, i);
        info[i] = (ib_coco_image_info){im->id, im->width, im->height};
    }
    for (size_t i = 0; i < nc; i++)
        cats[i] = ib_coco_category(s->data, i);
    for (size_t i = 0; i < n; i++)
        rec[i] = (ib_metric_record){e[i].qsl_idx, e[i].data, e[i].size};
    ib_coco_accuracy r;
    rc = ib_coco_accuracy_compute(rec, n, info, ni, gts, ng, cats, nc, 1, &r, err);
    if (rc)
        goto done;
    char line[64];
    ib_coco_accuracy_format(&r, line, sizeof line);
    if (ib_strbuf_printf(text, "%s\n", line)) {
        rc = ib_err_set(err, IB_ENOMEM, "ssd-resnet34: out of memory");
        goto done;
    }
    *value = 100.0 * r.stats[0];
done:
    ib_free(info);
    ib_free(cats);
    ib_free(rec);
    return rc;
}

const ib_benchmark ib_bench_ssd_resnet34 = {
    .id = "ssd-resnet34",
    .model_name = "ssd-resnet34",
    .title = "SSD-ResNet34 (1200x1200), COCO 2017 validation, mAP",
    .dataset_name = "COCO 2017 validation (val2017/*.jpg + annotations/instances_val2017.json)",
    .scenarios = (1u << IB_LG_SCENARIO_SINGLE_STREAM) | (1u << IB_LG_SCENARIO_MULTI_STREAM) |
                 (1u << IB_LG_SCENARIO_SERVER) | (1u << IB_LG_SCENARIO_OFFLINE),
    .performance_sample_count = 64,
    .server_latency_ns = 100000000,
    .accuracy_metric = "mAP",
    .accuracy_reference = 20.0,
    .accuracy_target_fraction = 0.99,
    .payload_dtypes = {IB_DTYPE_FLOAT32, IB_DTYPE_UNDEFINED},
    .batch_offline = 2,
    .batch_server = 1,
    .server_max_wait_us = 1000,
    .device_batch_per_unit = {0.125, 0.0625},
    .device_sample_bytes = 384u << 20,
    .calib_samples = 8,
    .synth_default_samples = 4,
    .n_models = 1,
    .build_model = ssd_build,
    .bind_model = ssd_bind,
    .synthesize = ssd_synthesize,
    .open = ssd_open,
    .close = ssd_close,
    .load_sample = ssd_load,
    .free_sample = NULL,
    .calib_index = NULL,
    .collate = NULL,
    .payload_max_bytes = ssd_payload_max,
    .postprocess = ssd_post,
    .infer = NULL,
    .accuracy = ssd_accuracy,
};
