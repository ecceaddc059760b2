/*
 * benchmarks.c - the benchmark table (one line per entry; an entry lives in its own
 * bench_<id>.c), config defaults, payload dtype selection, and the per-worker scratch
 * buffers entries use in their timed path (benchmark.h).
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "backend/backend.h"
#include "harness/benchmark.h"
#include "harness/scratch.h"
#include "onnx/build.h"

/* Add new entries here (and declare them in benchmark.h). */
static const ib_benchmark *const g_table[] = {
    &ib_bench_resnet50,
    &ib_bench_ssd_resnet34,
    &ib_bench_dlrm_99,
    &ib_bench_dlrm_99_9,
    &ib_bench_bert_99,
    &ib_bench_bert_99_9,
    &ib_bench_rnnt,
    &ib_bench_3d_unet_99,
    &ib_bench_3d_unet_99_9,
};

void ib_bench_config_defaults(ib_bench_config *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->precision = IB_PRECISION_FP32;
    c->payload_dtype = IB_DTYPE_UNDEFINED;
}

static ib_bench_targets bench_targets(const ib_benchmark *b, const ib_bench_config *cfg)
{
    ib_bench_targets t = {b->accuracy_reference, b->performance_sample_count,
                          b->payload_dtypes[0]};
    if (b->variant_targets && cfg)
        b->variant_targets(cfg, &t);
    return t;
}

double ib_bench_accuracy_reference(const ib_benchmark *b, const ib_bench_config *cfg)
{
    return bench_targets(b, cfg).accuracy_reference;
}

uint64_t ib_bench_performance_sample_count(const ib_benchmark *b, const ib_bench_config *cfg)
{
    return bench_targets(b, cfg).performance_sample_count;
}

bool ib_bench_session_on_device(const ib_session *s)
{
    ib_session_placement pl;
    ib_session_placement_get(s, &pl);
    return pl.backend && strcmp(pl.backend, "cpu") != 0 && strcmp(pl.backend, "reference") != 0;
}

size_t ib_bench_model_count(const ib_benchmark *b, const ib_bench_config *cfg)
{
    size_t n = b->models_for ? b->models_for(cfg) : b->n_models;
    return n >= 1 && n <= b->n_models ? n : b->n_models;
}

/* The largest power of two <= x, at least 1, at most 2^30. */
static int64_t pow2_floor(double x)
{
    int64_t p = 1;
    while ((double)(p * 2) <= x && p < ((int64_t)1 << 30))
        p *= 2;
    return p;
}

int64_t ib_bench_device_batch(const ib_benchmark *b, enum ib_lg_scenario sc,
                              const ib_backend_device_info *d, char *why, size_t why_cap)
{
    double per = b->device_batch_per_unit[sc == IB_LG_SCENARIO_SERVER ? 1 : 0];
    if (why && why_cap) why[0] = '\0';
    if (per <= 0 || d->compute_units <= 0) return 0;
    int64_t batch = pow2_floor(per * d->compute_units);
    int64_t cap = b->device_sample_bytes && d->memory_bytes
                      ? pow2_floor((double)(d->memory_bytes / 4) / (double)b->device_sample_bytes)
                      : INT64_MAX;
    bool capped = cap < batch;
    if (capped) batch = cap;
    if (why && why_cap)
        snprintf(why, why_cap, "%s: %g per SM x %d SMs, down to a power of two%s (%.0f GiB)",
                 d->name, per, d->compute_units,
                 capped ? ", capped by a quarter of the device memory" : "",
                 (double)d->memory_bytes / (1024.0 * 1024 * 1024));
    return batch;
}

size_t ib_benchmark_count(void)
{
    return IB_ARRAY_LEN(g_table);
}

const ib_benchmark *ib_benchmark_at(size_t i)
{
    return i < IB_ARRAY_LEN(g_table) ? g_table[i] : NULL;
}

const ib_benchmark *ib_benchmark_find(const char *id)
{
    for (size_t i = 0; id && i < IB_ARRAY_LEN(g_table); i++)
        if (strcmp(g_table[i]->id, id) == 0)
            return g_table[i];
    return NULL;
}

void ib_benchmark_ids(char *buf, size_t n)
{
    size_t used = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < IB_ARRAY_LEN(g_table); i++) {
        size_t l = strlen(g_table[i]->id);
        if (used + l + 3 > n)
            break;
        if (i) {
            memcpy(buf + used, ", ", 2);
            used += 2;
        }
        memcpy(buf + used, g_table[i]->id, l + 1);
        used += l;
    }
}

bool ib_benchmark_has_scenario(const ib_benchmark *b, enum ib_lg_scenario s)
{
    return (b->scenarios >> (unsigned)s) & 1u;
}

enum ib_dtype ib_benchmark_payload_dtype(const ib_benchmark *b, const ib_bench_config *c)
{
    return c && c->payload_dtype != IB_DTYPE_UNDEFINED ? c->payload_dtype
                                                        : bench_targets(b, c).payload_dtype;
}

bool ib_benchmark_accepts_payload(const ib_benchmark *b, enum ib_dtype t)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(b->payload_dtypes); i++) {
        if (b->payload_dtypes[i] == IB_DTYPE_UNDEFINED)
            break;
        if (b->payload_dtypes[i] == t)
            return true;
    }
    return false;
}

/* ---- what the entries share ------------------------------------------------------------------ */

int ib_bench_write_model(int rc, ib_build *b, const char *path, ib_err *err)
{
    if (rc == IB_OK)
        rc = ib_build_write_file(b, path, NULL, err);
    ib_build_destroy(b);
    return rc;
}

int ib_bench_bind_input(ib_bench_io *io, size_t slot, const char *name, const ib_tensor_desc *d,
                        ib_err *err)
{
    if (slot >= IB_BENCH_MAX_TENSORS || strlen(name) >= IB_BENCH_NAME_MAX)
        return ib_err_set(err, IB_EINVAL, "model input '%.60s...': name too long", name);
    ib_bench_input *in = &io->inputs[slot];
    snprintf(in->name, IB_BENCH_NAME_MAX, "%s", name);
    in->desc = *d;
    in->desc.dims[0] = 1;
    in->batched = true;
    if (d->dims[0] > 0 && (io->max_batch == 0 || d->dims[0] < io->max_batch))
        io->max_batch = d->dims[0];
    if (slot >= io->n_inputs)
        io->n_inputs = slot + 1;
    return IB_OK;
}

int ib_bench_bind_output(ib_bench_io *io, size_t slot, const char *name, enum ib_dtype dtype,
                         size_t max_bytes_per_sample, ib_err *err)
{
    if (slot >= IB_BENCH_MAX_TENSORS || strlen(name) >= IB_BENCH_NAME_MAX)
        return ib_err_set(err, IB_EINVAL, "model output '%.60s...': name too long", name);
    ib_bench_output *o = &io->outputs[slot];
    snprintf(o->name, IB_BENCH_NAME_MAX, "%s", name);
    o->dtype = dtype;
    o->max_bytes_per_sample = max_bytes_per_sample;
    if (slot >= io->n_outputs)
        io->n_outputs = slot + 1;
    return IB_OK;
}

/* ---- scratch --------------------------------------------------------------------------------- */

static void scratch_drop(ib_bench_scratch *s, unsigned slot)
{
    if (s->raw[slot] && s->hooked[slot])
        s->release(s->user, s->raw[slot]);
    else
        ib_free(s->raw[slot]);
    s->raw[slot] = s->aligned[slot] = NULL;
    s->size[slot] = 0;
    s->hooked[slot] = false;
}

void *ib_bench_scratch_get(ib_bench_scratch *s, unsigned slot, size_t bytes)
{
    if (!s || slot >= IB_SCRATCH_SLOTS)
        return NULL;
    if (bytes == 0)
        bytes = 1;
    if (s->size[slot] >= bytes)
        return s->aligned[slot];
    scratch_drop(s, slot);
    if (bytes > SIZE_MAX - 64)
        return NULL;
    /* the hook's memory when it has some, else ordinary memory (slower copies, same bytes) */
    if (s->alloc && (s->raw[slot] = s->alloc(s->user, bytes))) {
        s->aligned[slot] = s->raw[slot];
        s->hooked[slot] = true;
        s->size[slot] = bytes;
        return s->aligned[slot];
    }
    uint8_t *raw = ib_malloc(bytes + 64);
    if (!raw)
        return NULL;
    s->raw[slot] = raw;
    s->aligned[slot] = raw + (64 - ((uintptr_t)raw & 63));
    s->size[slot] = bytes;
    return s->aligned[slot];
}

void ib_bench_scratch_free(ib_bench_scratch *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < IB_SCRATCH_SLOTS; i++)
        scratch_drop(s, i);
    memset(s, 0, sizeof *s);
}

static size_t sample_bytes(const ib_tensor_desc *d)
{
    int64_t n = ib_tensor_desc_numel(d);
    return n < 0 ? 0 : (size_t)n * ib_dtype_size(d->dtype);
}

/* Concatenate every sample tensor along dim 0 (other dims equal), or use the sample's own
 * memory for a single sample and for unbatched inputs. */
int ib_bench_collate_default(const ib_benchmark *bench, const ib_bench_io *io, ib_bench_batch *b,
                             ib_err *err)
{
    b->n_inputs = io->n_inputs;
    for (size_t k = 0; k < io->n_inputs; k++) {
        const ib_tensor_view *t0 = &b->samples[0]->t[k];
        if (b->samples[0]->n_tensors <= k)
            return ib_err_set(err, IB_EINVAL, "%s: sample %zu has no tensor for input '%s'",
                              bench->id, (size_t)b->indices[0], io->inputs[k].name);
        if (!io->inputs[k].batched || b->count == 1) {
            b->inputs[k] = *t0;
            continue;
        }
        size_t total = 0;
        int64_t rows = 0;
        for (size_t i = 0; i < b->count; i++) {
            const ib_tensor_desc *d = &b->samples[i]->t[k].desc;
            bool same = d->ndim == t0->desc.ndim && d->dtype == t0->desc.dtype;
            for (int32_t j = 1; same && j < d->ndim; j++)
                same = d->dims[j] == t0->desc.dims[j];
            if (!same)
                return ib_err_set(err, IB_EINVAL,
                                  "%s: samples %zu and %zu of input '%s' differ beyond dim 0; "
                                  "this benchmark needs its own collate",
                                  bench->id, (size_t)b->indices[0],
                                  (size_t)b->indices[i], io->inputs[k].name);
            total += sample_bytes(d);
            rows += d->dims[0];
        }
        uint8_t *buf = ib_bench_scratch_get(b->scratch, (unsigned)k, total);
        if (!buf)
            return ib_err_set(err, IB_ENOMEM, "%s: out of memory collating a batch",
                              bench->id);
        size_t off = 0;
        for (size_t i = 0; i < b->count; i++) {
            const ib_tensor_view *t = &b->samples[i]->t[k];
            size_t n = sample_bytes(&t->desc);
            memcpy(buf + off, t->data, n);
            off += n;
        }
        b->inputs[k] = *t0;
        b->inputs[k].desc.dims[0] = rows;
        b->inputs[k].data = buf;
        b->inputs[k].capacity = total;
    }
    return IB_OK;
}
