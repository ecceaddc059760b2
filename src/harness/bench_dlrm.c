/*
 * bench_dlrm.c - the dlrm-99 and dlrm-99.9 entries of the benchmark table (benchmarks.md
 * §1.4): the MLPerf v1.1 DLRM builder (src/models/dlrm.c) with a row cap, the Criteo
 * Terabyte binary + aggregation-trace loader (src/dataset/criteo.c), and ROC AUC as
 * accuracy-dlrm.py computes it (src/metrics/auc.c).
 *
 * One sample is one user query of 100..700 user-item pairs, and the model's batch
 * dimension is pairs: a batch of k samples runs as one tensor of sum(pairs) rows, padded
 * (timed, in collate) to the next power of two (at least 64) so that the sessions see a
 * handful of shapes, not one per batch; padded rows are zeros / id 0 and their outputs are
 * dropped. Sessions therefore take up to 2 x 700 rows per sample (rows_per_sample_max).
 *
 * The payload is the reference SUT's: float32 (prediction, label) per pair, so the official
 * script reads the labels from the log. Row cap: tables hold min(official rows, cap) rows
 * and ids are taken modulo the cap (the reference's --max-ind-range); default cap 100,000
 * (1,000 with --tiny), stated in the binding note; ib_bench_config.variant = "N" sets
 * another cap (`inferbench run --row-cap N`; the official model needs 40,000,000, ~96 GB).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "dataset/criteo.h"
#include "harness/benchmark.h"
#include "metrics/auc.h"
#include "models/dlrm.h"
#include "onnx/build.h"

#define DL_MAX_PAIRS 700
#define DL_DEFAULT_CAP 100000
#define DL_TINY_CAP 1000
#define DL_MIN_BUCKET 64

typedef struct dl_state {
    ib_criteo *data;
    uint64_t cap;
    char dense[IB_BENCH_NAME_MAX], sparse[IB_BENCH_NAME_MAX];
} dl_state;

/* The row cap: --row-cap N (ib_bench_config.variant), else the default. */
static int dl_cap(const ib_bench_config *cfg, uint64_t *cap, ib_err *err)
{
    *cap = cfg->tiny ? DL_TINY_CAP : DL_DEFAULT_CAP;
    if (!cfg->variant || !*cfg->variant)
        return IB_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(cfg->variant, &end, 10);
    if (errno || !end || *end || v == 0 || cfg->variant[0] == '-')
        return ib_err_set(err, IB_EINVAL, "dlrm: --row-cap '%s' is not a positive integer "
                          "(rows per embedding table, e.g. 40000000 for the official tables)",
                          cfg->variant);
    *cap = v;
    return IB_OK;
}

static int dl_build(const ib_bench_config *cfg, size_t k, const char *path, ib_err *err)
{
    (void)k;
    uint64_t cap = 0;
    int rc0 = dl_cap(cfg, &cap, err);
    if (rc0)
        return rc0;
    ib_models_opts o = {.seed = cfg->seed, .tiny = false};
    ib_build *b = NULL;
    int rc = ib_models_dlrm(&o, cap, &b, err);
    return ib_bench_write_model(rc, b, path, err);
}

static bool is_2d(const ib_tensor_desc *d, enum ib_dtype t, int64_t cols)
{
    return d->dtype == t && d->ndim == 2 && d->dims[1] == cols && d->dims[0] <= 0;
}

static int dl_bind(const ib_bench_config *cfg, size_t k, const ib_model *m, ib_bench_io *io,
                   ib_err *err)
{
    (void)k;
    memset(io, 0, sizeof *io);
    int dense = -1, sparse = -1;
    for (size_t i = 0; i < ib_model_input_count(m); i++) {
        const char *name = NULL;
        ib_tensor_desc d;
        if (ib_model_input(m, i, &name, &d) || strlen(name) >= IB_BENCH_NAME_MAX)
            continue;
        if (dense < 0 && is_2d(&d, IB_DTYPE_FLOAT32, IB_CRITEO_DENSE))
            dense = (int)i;
        else if (sparse < 0 && is_2d(&d, IB_DTYPE_INT64, IB_CRITEO_SPARSE))
            sparse = (int)i;
    }
    if (dense < 0 || sparse < 0 || ib_model_input_count(m) != 2)
        return ib_err_set(err, IB_EINVAL,
                          "dlrm: expected two inputs with a dynamic batch dimension: float32 "
                          "[N,13] dense features (%s) and int64 [N,26] one id per table (%s)",
                          IB_DLRM_DENSE_INPUT, IB_DLRM_SPARSE_INPUT);
    const char *on = NULL;
    ib_tensor_desc od;
    if (ib_model_output_count(m) < 1 || ib_model_output(m, 0, &on, &od) ||
        od.dtype != IB_DTYPE_FLOAT32 || od.ndim < 1 || od.ndim > 2 ||
        (od.ndim == 2 && od.dims[1] != 1) || strlen(on) >= IB_BENCH_NAME_MAX)
        return ib_err_set(err, IB_EINVAL,
                          "dlrm: output 0 must be float32 [N,1] or [N] click probabilities "
                          "(%s)", IB_DLRM_OUTPUT);
    int idx[2] = {dense, sparse};
    io->n_inputs = 2;
    for (int j = 0; j < 2; j++) {
        const char *name = NULL;
        ib_model_input(m, (size_t)idx[j], &name, &io->inputs[j].desc);
        snprintf(io->inputs[j].name, IB_BENCH_NAME_MAX, "%s", name);
        io->inputs[j].desc.dims[0] = 1;
        io->inputs[j].batched = true;
    }
    io->n_outputs = 1;
    snprintf(io->outputs[0].name, IB_BENCH_NAME_MAX, "%s", on);
    io->outputs[0].dtype = IB_DTYPE_FLOAT32;
    io->outputs[0].max_bytes_per_sample = 2 * DL_MAX_PAIRS * sizeof(float); /* padding */
    io->max_batch = 0;
    uint64_t cap = 0;
    int crc = dl_cap(cfg, &cap, err);
    if (crc)
        return crc;
    io->params[0] = (int64_t)cap;
    snprintf(io->note, sizeof io->note,
             "inputs %.40s [N,13] + %.40s [N,26], output %.40s; embedding row cap %lld (ids %% cap, "
             "as --max-ind-range)", io->inputs[0].name, io->inputs[1].name, on,
             (long long)io->params[0]);
    return IB_OK;
}

static int dl_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    size_t n = cfg->synth_samples ? cfg->synth_samples : ib_bench_dlrm_99.synth_default_samples;
    /* --tiny: small queries so tests run fast; else the rules' 100..700 pairs */
    return ib_criteo_synthesize(dir, n, cfg->tiny ? 8 : 100, cfg->tiny ? 40 : DL_MAX_PAIRS,
                                ib_dlrm_table_rows, cfg->seed, err);
}

static int dl_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                   void **state, size_t *total, ib_err *err)
{
    *state = NULL;
    uint64_t cap = 0;
    int rc = io ? IB_OK : dl_cap(cfg, &cap, err); /* io NULL: scoring only */
    if (rc)
        return rc;
    dl_state *s = ib_calloc(1, sizeof *s);
    if (!s)
        return ib_err_set(err, IB_ENOMEM, "dlrm: out of memory");
    s->cap = io ? (uint64_t)io[0].params[0] : cap;
    rc = ib_criteo_open(dir, s->cap, &s->data, err);
    if (rc) {
        ib_free(s);
        return rc;
    }
    if (io) {
        snprintf(s->dense, sizeof s->dense, "%s", io[0].inputs[0].name);
        snprintf(s->sparse, sizeof s->sparse, "%s", io[0].inputs[1].name);
    }
    *state = s;
    *total = ib_criteo_samples(s->data);
    return IB_OK;
}

static void dl_close(void *state)
{
    dl_state *s = state;
    if (!s)
        return;
    ib_criteo_close(s->data);
    ib_free(s);
}

/* Sample memory: dense [m,13] f32 | labels [m] f32 | sparse [m,26] i64 (8-aligned). */
static float *labels_of(const ib_bench_sample *s)
{
    return (float *)((uint8_t *)s->mem + (size_t)s->aux * IB_CRITEO_DENSE * sizeof(float));
}

static int dl_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    dl_state *s = state;
    memset(out, 0, sizeof *out);
    const uint64_t *st = ib_criteo_pair_starts(s->data);
    size_t m = (size_t)(st[index + 1] - st[index]);
    size_t fb = m * (IB_CRITEO_DENSE + 1) * sizeof(float);
    uint8_t *mem = ib_malloc(fb + m * IB_CRITEO_SPARSE * sizeof(int64_t));
    if (!mem)
        return ib_err_set(err, IB_ENOMEM, "dlrm: out of memory");
    float *dense = (float *)mem, *labels = dense + m * IB_CRITEO_DENSE;
    int64_t *sparse = (int64_t *)(mem + fb);
    int rc = ib_criteo_load(s->data, index, dense, sparse, labels, err);
    if (rc) {
        ib_free(mem);
        return rc;
    }
    out->mem = mem;
    out->aux = m;
    out->n_tensors = 2;
    out->t[0] = (ib_tensor_view){.name = s->dense,
                                 .desc = {IB_DTYPE_FLOAT32, 2, {(int64_t)m, IB_CRITEO_DENSE}},
                                 .data = dense,
                                 .capacity = m * IB_CRITEO_DENSE * sizeof(float)};
    out->t[1] = (ib_tensor_view){.name = s->sparse,
                                 .desc = {IB_DTYPE_INT64, 2, {(int64_t)m, IB_CRITEO_SPARSE}},
                                 .data = sparse,
                                 .capacity = m * IB_CRITEO_SPARSE * sizeof(int64_t)};
    return IB_OK;
}

/* Timed: the batch's pairs back to back, padded to a power-of-two row count. */
static int dl_collate(void *state, ib_bench_batch *b, ib_err *err)
{
    dl_state *s = state;
    size_t total = 0;
    for (size_t i = 0; i < b->count; i++)
        total += (size_t)b->samples[i]->aux;
    size_t rows = DL_MIN_BUCKET;
    while (rows < total)
        rows *= 2;
    float *dense = ib_bench_scratch_get(b->scratch, 0, rows * IB_CRITEO_DENSE * sizeof(float));
    int64_t *sparse =
        ib_bench_scratch_get(b->scratch, 1, rows * IB_CRITEO_SPARSE * sizeof(int64_t));
    if (!dense || !sparse)
        return ib_err_set(err, IB_ENOMEM, "dlrm: out of memory collating %zu pairs", total);
    size_t off = 0;
    for (size_t i = 0; i < b->count; i++) {
        const ib_bench_sample *smp = b->samples[i];
        size_t m = (size_t)smp->aux;
        memcpy(dense + off * IB_CRITEO_DENSE, smp->t[0].data, smp->t[0].capacity);
        memcpy(sparse + off * IB_CRITEO_SPARSE, smp->t[1].data, smp->t[1].capacity);
        off += m;
    }
    memset(dense + off * IB_CRITEO_DENSE, 0, (rows - off) * IB_CRITEO_DENSE * sizeof(float));
    memset(sparse + off * IB_CRITEO_SPARSE, 0, (rows - off) * IB_CRITEO_SPARSE * sizeof(int64_t));
    b->n_inputs = 2;
    b->inputs[0] = (ib_tensor_view){.name = s->dense,
                                    .desc = {IB_DTYPE_FLOAT32, 2, {(int64_t)rows, IB_CRITEO_DENSE}},
                                    .data = dense,
                                    .capacity = rows * IB_CRITEO_DENSE * sizeof(float)};
    b->inputs[1] = (ib_tensor_view){.name = s->sparse,
                                    .desc = {IB_DTYPE_INT64, 2, {(int64_t)rows, IB_CRITEO_SPARSE}},
                                    .data = sparse,
                                    .capacity = rows * IB_CRITEO_SPARSE * sizeof(int64_t)};
    return IB_OK;
}

static size_t dl_payload_max(void *state, const ib_bench_config *cfg)
{
    (void)state;
    (void)cfg;
    return DL_MAX_PAIRS * 2 * sizeof(float);
}

static void put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(u >> (8 * k));
}

/* Timed: (prediction, label) float32 per pair, as the reference SUT logs. */
static int dl_post(void *state, const ib_bench_config *cfg, const ib_bench_batch *b,
                   ib_bench_payload *out, ib_err *err)
{
    (void)state;
    (void)cfg;
    const float *pred = b->outputs[0].data;
    size_t off = 0;
    for (size_t i = 0; i < b->count; i++) {
        size_t m = (size_t)b->samples[i]->aux;
        if (out[i].cap < m * 8)
            return ib_err_set(err, IB_EINVAL, "dlrm: payload buffer too small");
        const float *lab = labels_of(b->samples[i]);
        for (size_t k = 0; k < m; k++) {
            put_f32(out[i].data + 8 * k, pred[off + k]);
            put_f32(out[i].data + 8 * k + 4, lab[k]);
        }
        out[i].size = m * 8;
        off += m;
    }
    return IB_OK;
}

static int dl_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                       size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    (void)cfg;
    dl_state *s = state;
    ib_metric_record *rec = ib_malloc(sizeof *rec * (n ? n : 1));
    if (!rec)
        return ib_err_set(err, IB_ENOMEM, "dlrm: out of memory");
    for (size_t i = 0; i < n; i++)
        rec[i] = (ib_metric_record){e[i].qsl_idx, e[i].data, e[i].size};
    ib_auc_samples smp = {ib_criteo_samples(s->data), ib_criteo_pair_starts(s->data), NULL};
    ib_metric_auc r;
    int rc = ib_metric_auc_compute(rec, n, IB_AUC_PAIRS, &smp, &r, err);
    ib_free(rec);
    if (rc)
        return rc;
    char line[200];
    ib_metric_auc_format(&r, line, sizeof line);
    if (ib_strbuf_printf(text, "%s\n", line))
        return ib_err_set(err, IB_ENOMEM, "dlrm: out of memory");
    *value = 100.0 * r.auc;
    return IB_OK;
}

#define DLRM_ENTRY(ID, FRACTION)                                                               \
    {                                                                                          \
        .id = ID, .model_name = "dlrm",                                                        \
        .title = "DLRM (MLPerf v1.1), Criteo Terabyte day_23, ROC AUC",                       \
        .dataset_name = "Criteo Terabyte day_23 (" IB_CRITEO_BIN " + " IB_CRITEO_TRACE ")",   \
        .scenarios = (1u << IB_LG_SCENARIO_SERVER) | (1u << IB_LG_SCENARIO_OFFLINE),           \
        .performance_sample_count = 204800, .server_latency_ns = 30000000,                     \
        .accuracy_metric = "AUC", .accuracy_reference = 80.25,                                 \
        .accuracy_target_fraction = FRACTION,                                                  \
        .payload_dtypes = {IB_DTYPE_FLOAT32, IB_DTYPE_UNDEFINED}, .batch_offline = 8,          \
        .batch_server = 8, .server_max_wait_us = 2000, .calib_samples = 8,                     \
        .device_batch_per_unit = {0.5, 0.125}, .device_sample_bytes = 48u << 20,               \
        .synth_default_samples = 64, .n_models = 1, .rows_per_sample_max = 2 * DL_MAX_PAIRS,   \
        .build_model = dl_build, .bind_model = dl_bind, .synthesize = dl_synthesize,           \
        .open = dl_open, .close = dl_close, .load_sample = dl_load, .collate = dl_collate,     \
        .payload_max_bytes = dl_payload_max, .postprocess = dl_post,                           \
        .accuracy = dl_accuracy,                                                               \
    }

const ib_benchmark ib_bench_dlrm_99 = DLRM_ENTRY("dlrm-99", 0.99);
const ib_benchmark ib_bench_dlrm_99_9 = DLRM_ENTRY("dlrm-99.9", 0.999);
