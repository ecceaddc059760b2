/*
 * benchmark.h - the per-benchmark entry the harness runs (one `ib_benchmark` per MLPerf
 * benchmark id: resnet50, ssd-resnet34, bert-99, bert-99.9, dlrm-99, dlrm-99.9, rnnt,
 * 3d-unet-99, 3d-unet-99.9), and the table that lists them.
 *
 * The harness (qsl.c, sut.c, workers.c, run.c) is generic: it opens the dataset through the
 * entry, loads samples into RAM untimed (QSL), creates one session per model per worker
 * thread, batches the issued samples (Offline: large batches; Server: dynamic batching with
 * a max batch and a max wait; SingleStream: 1; MultiStream: the query), runs them through
 * the entry's timed path, completes the responses with the entry's accuracy payload, then
 * computes accuracy.txt with the entry's metric. Everything benchmark-specific lives behind
 * this table:
 *
 *   model      build_model (seeded random weights, written as a real .onnx file, so the
 *              loader always runs) and bind_model (find and check the input/output names
 *              and shapes of a built or user-supplied model, e.g. the official ONNX files)
 *   dataset    synthesize (a small dataset in the real on-disk format), open (sample order
 *              = the reference's qsl_idx), load_sample (untimed pre-processing to input
 *              tensors; cached in RAM by the QSL), free_sample
 *   timed      collate (samples -> the session's input tensors; timed, so RNN-T feature
 *              extraction belongs here), postprocess (outputs -> the accuracy payload in
 *              the official dtype; SSD box decoding + NMS belong here), or infer (a whole
 *              custom inference loop over several sessions: RNN-T greedy decoding, the
 *              3D U-Net sliding window)
 *   accuracy   accuracy (the official accuracy script's computation and output lines)
 *
 * Rules the entries follow (benchmarks.md §1.0, §1.8, §5; loadgen.md):
 *   - qsl_idx order is exactly the reference's (ImageNet: val_map.txt line order; COCO:
 *     images[] order; SQuAD: feature order after windowing; Criteo: trace order;
 *     LibriSpeech: manifest order after the 15 s filter; BraTS: sorted fold list).
 *   - Only sample-independent pre-processing is untimed (load_sample); what the rules time
 *     (RNN-T features, SSD NMS) runs in collate/postprocess/infer.
 *   - Payload bytes are exactly what the official accuracy script decodes for the logged
 *     dtype (config.payload_dtype; one of the entry's payload_dtypes).
 *   - Nothing here prints or exits; errors return IB_E* with a message naming the file,
 *     line, tensor or sample (and the fix).
 *
 * Thread-safety: an entry is a static const table. synthesize/open/close run on one thread.
 * load_sample and free_sample may be called from several threads at once for different
 * indices (the QSL loads in parallel). collate/postprocess/infer are called concurrently
 * from the worker threads, each with its own batch (and so its own scratch); the dataset
 * state is read-only there. accuracy runs alone after the test.
 *
 * How to add a benchmark: write src/harness/bench_<id>.c defining `const ib_benchmark
 * ib_bench_<id>` (glue over src/models/, src/dataset/, src/metrics/), declare it below and
 * add it to the table in src/harness/benchmarks.c. docs/benchmarks.md describes each
 * hook with the ResNet50 entry as the worked example.
 */
#ifndef IB_HARNESS_BENCHMARK_H
#define IB_HARNESS_BENCHMARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "inferbench/loadgen.h"
#include "inferbench/runtime.h"

#define IB_BENCH_MAX_TENSORS 8 /* inputs or outputs of one model */
#define IB_BENCH_MAX_MODELS 4  /* models of one benchmark (RNN-T: encoder, prediction, joint) */
#define IB_BENCH_NAME_MAX 128  /* graph input/output names ("input_tensor:0") */
/* Version of what build_model and synthesize write: part of the cache key of generated
 * models and data (with the build's git revision). Bump it when a builder or synthesizer
 * changes its output. */
#define IB_GENERATOR_VERSION 1

/* ---- what the user asked for ------------------------------------------------------------- */

typedef struct ib_bench_config {
    bool tiny;                  /* the tiny stand-in (tests): reduced model and data */
    uint64_t seed;              /* weights and synthetic data (default 1) */
    size_t synth_samples;       /* synthetic dataset size; 0 = the entry's default */
    enum ib_precision precision; /* what the sessions run in (informs build/bind only) */
    enum ib_dtype payload_dtype; /* accuracy payload dtype; UNDEFINED = payload_dtypes[0] */
    const char *variant;        /* entry-specific choice (3d-unet: "brats19"|"kits19"); NULL */
} ib_bench_config;

void ib_bench_config_defaults(ib_bench_config *c);

/* ---- model inputs and outputs --------------------------------------------------------- */

/* One model input as the harness feeds it. dims[0] is the batch dimension when
 * `batched` (its value is ignored), and IB_DIM_DYNAMIC marks a per-sample variable dim
 * (BERT without padding, RNN-T audio): such inputs need the entry's collate. */
typedef struct ib_bench_input {
    char name[IB_BENCH_NAME_MAX];
    ib_tensor_desc desc;
    bool batched;
} ib_bench_input;

/* One model output the harness fetches. max_bytes_per_sample bounds the output of one
 * sample (data-dependent outputs such as NMS results give their upper bound). */
typedef struct ib_bench_output {
    char name[IB_BENCH_NAME_MAX];
    enum ib_dtype dtype;
    size_t max_bytes_per_sample;
} ib_bench_output;

/* What bind_model found in one model. */
typedef struct ib_bench_io {
    size_t n_inputs;
    ib_bench_input inputs[IB_BENCH_MAX_TENSORS];
    size_t n_outputs;
    ib_bench_output outputs[IB_BENCH_MAX_TENSORS];
    int64_t max_batch;  /* largest batch the model takes (1 for a fixed batch-1 graph; 0 = any) */
    int64_t params[4];  /* the entry's own findings at bind time, read back by open */
    bool keep_inputs;   /* its session keeps inputs between fed runs (ib_session_options) */
    char note[256];     /* e.g. "official resnet50_v1.onnx layout (input_tensor:0, ArgMax:0)" */
} ib_bench_io;

/* ---- samples (QSL memory) ----------------------------------------------------------------- */

/* One pre-processed sample in RAM. t[k].name is the model input it feeds, t[k].desc its
 * per-sample shape (batch dimension 1 for batched inputs), t[k].data its bytes. The entry
 * decides how the memory is held (one ib_malloc block in mem is the usual way); free_sample
 * releases it. aux is free for the entry (e.g. the pair count of a DLRM sample). */
typedef struct ib_bench_sample {
    size_t n_tensors;
    ib_tensor_view t[IB_BENCH_MAX_TENSORS];
    void *mem;
    uint64_t aux;
} ib_bench_sample;

/* ---- batches (worker memory, timed path) ------------------------------------------------- */

typedef struct ib_bench_scratch ib_bench_scratch; /* per-worker buffers, owned by the harness */

/* A batch of issued samples on one worker. The harness fills count, samples, indices and
 * outputs; collate fills inputs (n_inputs and views, which may point into sample memory or
 * into scratch buffers). */
typedef struct ib_bench_batch {
    size_t count;
    const ib_bench_sample *const *samples; /* loaded samples, read-only */
    const ib_lg_sample_index *indices;     /* their qsl_idx */
    size_t n_inputs;
    ib_tensor_view inputs[IB_BENCH_MAX_TENSORS];
    size_t n_outputs; /* the io's outputs, buffers sized for count samples */
    ib_tensor_view outputs[IB_BENCH_MAX_TENSORS];
    ib_bench_scratch *scratch;
} ib_bench_batch;

/*
 * ib_bench_scratch_get - a worker-owned buffer `slot` (0..15) of at least `bytes`, 64-byte
 * aligned, kept between batches (it only allocates when it has to grow, so the steady
 * state does not allocate). Contents are undefined. NULL when out of memory.
 */
void *ib_bench_scratch_get(ib_bench_scratch *s, unsigned slot, size_t bytes);

/* The accuracy payload of one sample: the entry writes up to cap bytes and sets size. */
typedef struct ib_bench_payload {
    uint8_t *data;
    size_t cap;  /* = the entry's payload_max_bytes result */
    size_t size;
} ib_bench_payload;

/* ---- accuracy ------------------------------------------------------------------------------- */

/* One record of mlperf_log_accuracy.json, hex already decoded, in file order. */
typedef struct ib_bench_acc_entry {
    uint64_t qsl_idx;
    const uint8_t *data;
    size_t size;
} ib_bench_acc_entry;

/* ---- the entry ------------------------------------------------------------------------------ */

struct ib_bench_targets;
struct ib_backend_device_info;

typedef struct ib_benchmark {
    const char *id;         /* results-tree folder and --benchmark value: "resnet50" */
    const char *model_name; /* mlperf.conf/user.conf lookup name: "resnet50", "bert", ... */
    const char *title;      /* "ResNet50-v1.5 on ImageNet 2012 (top-1)" */
    const char *dataset_name; /* "ImageNet 2012 validation (folder of JPEGs + val_map.txt)" */
    unsigned scenarios;     /* 1u << IB_LG_SCENARIO_*: scenarios the rules define for it */
    uint64_t performance_sample_count; /* official minimum QSL size (benchmarks.md §1.7) */
    int64_t server_latency_ns;  /* p99 bound (informative: mlperf.conf sets the real one) */
    const char *accuracy_metric; /* the metric's name in accuracy.txt ("accuracy", "mAP") */
    double accuracy_reference;   /* FP32 reference value, in accuracy.txt's unit (76.46) */
    double accuracy_target_fraction; /* 0.99 or 0.999 of the reference */
    /* Accepted payload dtypes, the official default first, IB_DTYPE_UNDEFINED-terminated. */
    enum ib_dtype payload_dtypes[5];
    /* Batching defaults (--batch overrides): Offline batch; Server max batch and max wait. */
    int64_t batch_offline;
    int64_t batch_server;
    int64_t server_max_wait_us;
    /* Batching on a device backend (issue 25; ib_bench_device_batch): samples per compute
     * unit (SM) for Offline and Server, 0 = the host batch above; and the device bytes one
     * sample may take at that batch (activations at fp16, estimated from the model with
     * margin), which caps the batch at a quarter of the device's memory. */
    double device_batch_per_unit[2];
    size_t device_sample_bytes;
    /* Calibration for --precision int8: how many samples (from the start of the dataset,
     * or the entry's calibration list through calib_index) feed ib_session_options. */
    size_t calib_samples;
    size_t synth_default_samples; /* synthetic dataset size when config.synth_samples == 0 */
    size_t n_models;              /* 1 unless the benchmark has several graphs (the most a
                                   * configuration uses: see models_for) */
    /* Optional: how many of the first models a configuration uses (NULL = n_models): 3d-unet
     * has one for brats19 and adds the window graph for kits19. Read through
     * ib_bench_model_count. */
    size_t (*models_for)(const ib_bench_config *cfg);
    /* Models 1.. are the entry's own graphs with no trained weights (3d-unet's window sums):
     * built even when --model supplies model 0, which --model may then do. */
    bool helper_models;
    /* Rows of the model's batch dimension one sample may take (0 = 1): DLRM feeds one row
     * per user-item pair, so its sessions take max_batch x this rows per run. */
    int64_t rows_per_sample_max;

    /* Write model k (0 <= k < n_models) with seeded random weights to `path` (.onnx). */
    int (*build_model)(const ib_bench_config *cfg, size_t k, const char *path, ib_err *err);
    /* Check model k (built or supplied with --model) and describe its inputs/outputs.
     * Errors name what was expected ("no input of shape [N,3,224,224]"). */
    int (*bind_model)(const ib_bench_config *cfg, size_t k, const ib_model *m, ib_bench_io *io,
                      ib_err *err);

    /* Write a synthetic dataset in the real on-disk format into `dir` (created). */
    int (*synthesize)(const ib_bench_config *cfg, const char *dir, ib_err *err);
    /* Open a dataset folder; *total = samples in qsl_idx order. io[k] is model k's binding,
     * so pre-processing can follow the model's layout. io NULL opens it for scoring only
     * (`inferbench accuracy`: no model, so no load_sample/collate/infer afterwards): what
     * the accuracy needs of the model's shape is then the model the entry builds
     * (cfg->tiny selects the stand-in). */
    int (*open)(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                void **state, size_t *total, ib_err *err);
    void (*close)(void *state);
    /* Pre-process sample `index` into *out (untimed; see thread-safety above). */
    int (*load_sample)(void *state, size_t index, ib_bench_sample *out, ib_err *err);
    /* Release what load_sample put in *s (NULL = ib_free(s->mem)). */
    void (*free_sample)(void *state, ib_bench_sample *s);
    /* Optional: the dataset index of calibration sample i (NULL = i). */
    size_t (*calib_index)(void *state, size_t i);
    /* Optional (NULL = the sample's tensors are model 0's inputs as they are): model 0's
     * calibration inputs made from a loaded calibration sample (untimed), where a sample is
     * not yet what the model takes: RNN-T's waveform becomes the encoder's features and
     * mask, a KiTS19 volume one window. Fills views[0 .. io[0].n_inputs) pointing into
     * memory the entry allocates and returns in *mem (the caller ib_free()s it once the
     * sessions are made). Only model 0 is calibrated: at int8 or fp8 the other models of
     * the configuration run at a float precision (ib_hsut_model_precision). */
    int (*calib_inputs)(void *state, const ib_bench_config *cfg, const ib_bench_sample *smp,
                        ib_tensor_view *views, void **mem, ib_err *err);

    /* Optional (NULL = concatenate every sample tensor along dim 0 into scratch, or point
     * at the sample itself when count == 1). Timed. */
    int (*collate)(void *state, ib_bench_batch *b, ib_err *err);
    /* Upper bound of one sample's payload in bytes for this configuration. */
    size_t (*payload_max_bytes)(void *state, const ib_bench_config *cfg);
    /* Outputs of a batch -> one payload per sample (out[0..count-1]). Timed. */
    int (*postprocess)(void *state, const ib_bench_config *cfg, const ib_bench_batch *b,
                       ib_bench_payload *out, ib_err *err);
    /* Optional: replaces collate + run + postprocess with the entry's own loop over the
     * worker's sessions (one per model). Timed. */
    int (*infer)(void *state, const ib_bench_config *cfg, ib_session *const *sessions,
                 ib_bench_batch *b, ib_bench_payload *out, ib_err *err);

    /* The official accuracy script: entries in log order (duplicates included, as the
     * script de-duplicates by qsl_idx itself). Appends its output lines to `text` (what
     * accuracy.txt holds before the hash= line) and sets *value to the headline metric in
     * the unit of accuracy_reference. */
    int (*accuracy)(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *entries,
                    size_t n, ib_strbuf *text, double *value, ib_err *err);

    /* Optional: a variant's own official figures (3d-unet --dataset kits19 has another
     * reference accuracy, sample count and payload than brats19); t holds the entry's on
     * entry and what the hook leaves alone stays. Read through ib_bench_accuracy_reference,
     * ib_bench_performance_sample_count and ib_benchmark_payload_dtype. */
    void (*variant_targets)(const ib_bench_config *cfg, struct ib_bench_targets *t);
} ib_benchmark;

/* What a benchmark (or its variant) is measured against. */
typedef struct ib_bench_targets {
    double accuracy_reference;         /* FP32 reference, in accuracy.txt's unit */
    uint64_t performance_sample_count; /* official minimum QSL size */
    enum ib_dtype payload_dtype;       /* the accuracy script's default payload dtype */
} ib_bench_targets;

/* The default batch of benchmark b in scenario sc (Offline or Server) on device d: the
 * entry's samples per compute unit times d's units, rounded down to a power of two, capped
 * so batch x device_sample_bytes fits in a quarter of d's memory; at least 1. 0 when the
 * entry has no device default (the host batch applies). why (may be NULL) says how it was
 * chosen, for run.json. */
int64_t ib_bench_device_batch(const ib_benchmark *b, enum ib_lg_scenario sc,
                              const struct ib_backend_device_info *d, char *why, size_t why_cap);

/* Whether session s runs on a device backend (not cpu or reference): the entries' own loops
 * keep their state on the device there (RNN-T's decoder, 3D U-Net's window sums). */
bool ib_bench_session_on_device(const ib_session *s);

/* How many models this configuration of the entry uses (models_for, else n_models). */
size_t ib_bench_model_count(const ib_benchmark *b, const ib_bench_config *cfg);

/* The entry's (or its variant's) FP32 reference accuracy and official sample count. */
double ib_bench_accuracy_reference(const ib_benchmark *b, const ib_bench_config *cfg);
uint64_t ib_bench_performance_sample_count(const ib_benchmark *b, const ib_bench_config *cfg);

/* ---- what the entries share (benchmarks.c) ------------------------------------------------ */

struct ib_build;
/* build_model's tail: rc is the builder's status; on success write its model to path. The
 * builder is freed either way. */
int ib_bench_write_model(int rc, struct ib_build *b, const char *path, ib_err *err);
/* io->inputs[slot] := model input `name` of desc d, fed one sample per batch row (batched,
 * dims[0] = 1); a fixed batch dim of d bounds io->max_batch. IB_EINVAL when the name does
 * not fit IB_BENCH_NAME_MAX. */
int ib_bench_bind_input(ib_bench_io *io, size_t slot, const char *name, const ib_tensor_desc *d,
                        ib_err *err);
/* io->outputs[slot] := model output `name` (dtype, bytes one sample's output may take). */
int ib_bench_bind_output(ib_bench_io *io, size_t slot, const char *name, enum ib_dtype dtype,
                         size_t max_bytes_per_sample, ib_err *err);

/* The collate of entries without their own: every sample tensor concatenated along dim 0
 * (other dims equal) into b->scratch, or the sample's own memory for a single sample and
 * for unbatched inputs. */
int ib_bench_collate_default(const ib_benchmark *bench, const ib_bench_io *io, ib_bench_batch *b,
                             ib_err *err);

/* ---- the table (benchmarks.c) -------------------------------------------------------------- */

extern const ib_benchmark ib_bench_resnet50;
extern const ib_benchmark ib_bench_ssd_resnet34;
extern const ib_benchmark ib_bench_dlrm_99;
extern const ib_benchmark ib_bench_dlrm_99_9;
extern const ib_benchmark ib_bench_bert_99;
extern const ib_benchmark ib_bench_bert_99_9;
extern const ib_benchmark ib_bench_rnnt;
extern const ib_benchmark ib_bench_3d_unet_99;
extern const ib_benchmark ib_bench_3d_unet_99_9;

size_t ib_benchmark_count(void);
const ib_benchmark *ib_benchmark_at(size_t i);
/* By id ("resnet50"), case-sensitive; NULL when unknown. */
const ib_benchmark *ib_benchmark_find(const char *id);
/* Comma-separated list of the ids into buf (n bytes), for messages. */
void ib_benchmark_ids(char *buf, size_t n);
/* True when the entry lists the scenario. */
bool ib_benchmark_has_scenario(const ib_benchmark *b, enum ib_lg_scenario s);
/* The payload dtype a config selects (its own, or the entry's or variant's default) and
 * whether the entry accepts it. */
enum ib_dtype ib_benchmark_payload_dtype(const ib_benchmark *b, const ib_bench_config *c);
bool ib_benchmark_accepts_payload(const ib_benchmark *b, enum ib_dtype t);

#endif
