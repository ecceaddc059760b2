/*
 * runtime.h - the inferbench inference runtime: load a model (ONNX), create a
 * session on a backend (CPU through oneDNN, CUDA, or the plain-C reference),
 * run it with named inputs and outputs.
 *
 * A model is immutable after loading and can be shared by several sessions
 * (they share its weights on the host; each backend keeps one device copy per
 * device). A session owns its compiled graph and one planned activation
 * arena; ib_session_run does not allocate after the first run at a given
 * batch size.
 *
 * The runtime knows no scenario and no benchmark.
 */
#ifndef INFERBENCH_RUNTIME_H
#define INFERBENCH_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "dtype.h"
#include "export.h"
#include "status.h"

IB_EXTERN_C_BEGIN

#define IB_MAX_DIMS 8
/* A dimension not known yet (dynamic, e.g. the batch before binding). */
#define IB_DIM_DYNAMIC (-1)

typedef struct ib_tensor_desc {
    enum ib_dtype dtype;
    int32_t ndim;
    int64_t dims[IB_MAX_DIMS];
} ib_tensor_desc;

/* Number of elements (product of dims; -1 when a dim is dynamic). */
IB_API int64_t ib_tensor_desc_numel(const ib_tensor_desc *d);

/* A named tensor in caller memory, for ib_session_run. */
typedef struct ib_tensor_view {
    const char *name;   /* graph input/output name */
    ib_tensor_desc desc; /* inputs: the actual shape; outputs: filled by run */
    void *data;          /* inputs: read; outputs: written (caller buffer of `capacity`) */
    size_t capacity;     /* outputs: bytes available at data */
} ib_tensor_view;

/* Compute precision a session runs in. INT8 needs calibration data or a
 * model that already carries QuantizeLinear/DequantizeLinear; FP8 needs calibration data
 * (only the cuda backend has fp8 products: on Hopper, docs/cuda_backend.md). */
enum ib_precision {
    IB_PRECISION_FP32 = 0,
    IB_PRECISION_BF16 = 1,
    IB_PRECISION_FP16 = 2,
    IB_PRECISION_INT8 = 3,
    IB_PRECISION_FP8 = 4,
};
IB_API const char *ib_precision_name(enum ib_precision p);
IB_API int ib_precision_parse(const char *text, enum ib_precision *out);
/* Whether sessions at p take activation ranges from calibration (int8, fp8). */
IB_API bool ib_precision_calibrated(enum ib_precision p);

/* ---- models ------------------------------------------------------------- */

typedef struct ib_model ib_model;

typedef struct ib_model_load_options {
    /* Folder for external-data files (default: the model file's folder). */
    const char *external_data_dir;
    /* Refuse files or tensors larger than this (0 = no limit). */
    uint64_t max_bytes;
} ib_model_load_options;

IB_API void ib_model_load_options_defaults(ib_model_load_options *o);

/* Load an ONNX model (opset 7..17). Errors name the node, tensor or offset. */
IB_API int ib_model_load_file(const char *path, const ib_model_load_options *opts,
                              ib_model **out, ib_err *err);
IB_API int ib_model_load_memory(const void *data, size_t size, const ib_model_load_options *opts,
                                ib_model **out, ib_err *err);
IB_API void ib_model_destroy(ib_model *m);

IB_API size_t ib_model_input_count(const ib_model *m);
IB_API size_t ib_model_output_count(const ib_model *m);
/* Name and declared type/shape (IB_DIM_DYNAMIC for symbolic dims). Borrowed. */
IB_API int ib_model_input(const ib_model *m, size_t i, const char **name, ib_tensor_desc *desc);
IB_API int ib_model_output(const ib_model *m, size_t i, const char **name, ib_tensor_desc *desc);

typedef struct ib_model_stats {
    uint64_t node_count;
    uint64_t param_count;  /* elements of all initializers */
    uint64_t param_bytes;
    double flops;          /* 2 x MACs of Conv/MatMul/Gemm/LSTM at batch 1 (est.) */
    int64_t opset;
    const char *producer;  /* borrowed */
} ib_model_stats;
IB_API int ib_model_get_stats(const ib_model *m, ib_model_stats *out);
/* Op histogram: calls fn(user, op_type, count) once per distinct op type. */
IB_API void ib_model_op_histogram(const ib_model *m,
                                  void (*fn)(void *user, const char *op_type, uint64_t count),
                                  void *user);

/* ---- sessions ------------------------------------------------------------- */

typedef struct ib_session ib_session;

typedef struct ib_session_options {
    const char *backend;        /* "cpu" (default), "cuda", "reference" */
    int threads;                /* 0 = one per CPU in the affinity mask */
    int first_cpu;              /* pin threads starting at this affinity index (-1 = no pinning) */
    enum ib_precision precision; /* FP32 */
    int64_t max_batch;          /* the dynamic batch dimension is bound up to this (1) */
    int device;                 /* GPU index for "cuda" (0) */
    /* INT8 calibration: representative inputs, one ib_tensor_view array of
     * `calib_input_count` tensors per batch (NULL = none). */
    const ib_tensor_view *calib_inputs;
    size_t calib_batches;
    size_t calib_input_count;
    bool disable_fusion;        /* for debugging and tests */
    /* CPU: 3x3x3 convolutions run as direct sums (oneDNN) even where the Winograd
     * kernel would take them (A/B runs; the outputs differ by rounding only: float32's
     * at fp32, bfloat16's at bf16) */
    bool direct_conv;
    /* cuda at fp16: the values that 2-D convolutions pass only to each other are held as
     * NHWC float16 (cuDNN's tensor-core layout; no conversion inside cuDNN), converted where
     * such an island starts and ends (issue 24). Off by default: not yet run on a GPU. */
    bool nhwc_fp16;
    /* A session of the same model on the same backend and device to share read-only state
     * with: on cuda one device copy of the weights for both (the harness's two workers per
     * GPU). Read by ib_session_create only; ignored for other backends or devices; either
     * session may be destroyed first. NULL = none. */
    const ib_session *share_with;
    /* cuda at fp16 / bf16: the values that products with constant weights, LayerNorm, Add and
     * the fused attention pass only to each other (BERT's encoder) are held in 16 bits, so
     * no step converts them and the ops between the products move half the bytes (issue
     * 24). Off by default: not yet run on a GPU. */
    bool half_chains;
    /* Graph inputs are never overwritten during a run (their bytes are not reused for other
     * values), so ib_session_run_fed can keep an input from one run to the next without
     * passing it again (a feed with output NULL): a decoder's encoder output uploaded once
     * per batch instead of once per step. Costs the inputs' bytes in the arena. */
    bool keep_inputs;
} ib_session_options;

IB_API void ib_session_options_defaults(ib_session_options *o);

/* Compile the model for a backend. Unsupported ops fall back to the
 * reference kernels (listed in ib_session_describe); an op nobody supports
 * fails with IB_EUNSUPPORTED naming op, node and opset. */
IB_API int ib_session_create(const ib_model *m, const ib_session_options *opts,
                             ib_session **out, ib_err *err);

/* Run one inference. Inputs by name (all graph inputs required); outputs by
 * name (any subset; desc is filled, data must have `capacity` bytes).
 * Thread-safety: one run at a time per session; sessions are independent. */
IB_API int ib_session_run(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                          ib_tensor_view *outputs, size_t n_outputs, ib_err *err);

/* Recurrent state kept where it is computed: ib_session_run_fed runs like ib_session_run,
 * except that each fb[k].input is not passed in `inputs` but takes the value output
 * fb[k].output had after the previous run of this session, copied inside the backend's
 * memory (on cuda device to device: no host round trip for a decoder's state). The other
 * inputs must have the shapes of the previous run (the same compiled variant), and each fed
 * input the dtype and shape of its output. A feed whose output is NULL keeps the input's
 * bytes of the previous run (a session created with keep_inputs only): nothing is copied.
 * IB_ESTATE before any run or after a failed one; IB_EINVAL/IB_ENOTFOUND name the input,
 * output or shape at fault. */
typedef struct ib_session_feed {
    const char *input;  /* a graph input ... */
    const char *output; /* ... takes this graph output of the previous run (NULL: its own) */
    /* NULL: this session. Else another session (as ib_session_run_linked's `from`) whose
     * last run's `output` the input takes, with the input's previous shape (the same dtype
     * and bytes); copied after this session's own feeds. */
    const ib_session *from;
} ib_session_feed;
IB_API int ib_session_run_fed(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                              const ib_session_feed *fb, size_t n_fb, ib_tensor_view *outputs,
                              size_t n_outputs, ib_err *err);

/* One session's result as another's input where both live: ib_session_run_linked runs like
 * ib_session_run, except that each link's input is not passed in `inputs` but takes the value
 * that output links[k].output of session links[k].from had after that session's last
 * successful run (an encoder's output as its decoder's input). With both sessions on one
 * backend that can reach the other's memory (cuda, one device) it is copied device to device;
 * otherwise through the host (host backends: one memcpy). links[k].desc is the shape the
 * input takes: ndim 0 = the output's own; else the same dtype and bytes (a reshape). The
 * variant is chosen from the given inputs' and the links' shapes, as by ib_session_run, and a
 * session created with keep_inputs keeps a linked input for later ib_session_run_fed calls.
 * `from` must be another session that does not run until this call returns. IB_ESTATE when
 * `from` has no successful run; IB_EINVAL/IB_ENOTFOUND name the input, output or shape at
 * fault. */
typedef struct ib_session_link {
    const char *input;        /* a graph input of this session ... */
    const ib_session *from;   /* ... takes from this session's last run ... */
    const char *output;       /* ... this output ... */
    ib_tensor_desc desc;      /* ... with this shape (ndim 0: the output's) */
} ib_session_link;
IB_API int ib_session_run_linked(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                                 const ib_session_link *links, size_t n_links,
                                 ib_tensor_view *outputs, size_t n_outputs, ib_err *err);

/* Host memory the session's backend copies inputs from and outputs to fastest: page-locked
 * on cuda (one DMA per tensor instead of a copy through a staging buffer), ordinary memory
 * on host backends; 64-byte aligned. For the caller's batch buffers. NULL with err set when
 * it cannot be had. Free it with ib_session_host_free before destroying the session. */
IB_API void *ib_session_host_alloc(ib_session *s, size_t nbytes, ib_err *err);
IB_API void ib_session_host_free(ib_session *s, void *p); /* NULL allowed */

/* Peak bytes of the planned activation arena at max_batch. */
IB_API size_t ib_session_peak_activation_bytes(const ib_session *s);
/* Human-readable summary: backend, precision, fused nodes, fallbacks (borrowed). */
IB_API const char *ib_session_describe(const ib_session *s);

/* Where the compiled nodes run: `nodes` in all, `fallback_nodes` of them on the reference
 * kernels on the host (ops nobody else supports at these shapes), the rest on `backend`.
 * Of the session's compiled shape variants, the one with the most fallback nodes, so a
 * fallback is never hidden; nodes = 0 before anything is compiled (symbolic dims other than
 * the batch compile on the first run). Strings are borrowed from the session. */
typedef struct ib_session_placement {
    const char *backend;      /* the session's backend ("cpu", "cuda", ...) */
    const char *fallback;     /* the fallback backend ("reference"), "" when there is none */
    uint32_t nodes;
    uint32_t fallback_nodes;
    const char *fallback_ops; /* "LSTM x2, TopK x1", "" when none */
} ib_session_placement;
IB_API void ib_session_placement_get(const ib_session *s, ib_session_placement *out);

/* Whether the session's compiled subgraphs replay as one recorded launch each (issue 24: on
 * cuda a CUDA Graph, captured on a shape's second run), over every shape compiled so far.
 * subgraphs counts those of backends that record (0 on host backends); the ones neither
 * replayed nor refused have not run twice yet (or ran only while profiling). A refused
 * capture leaves a launch per step, which a GPU figure should not hide: why names the first
 * refusal's node or call ("" when none; borrowed from the session). */
typedef struct ib_session_replay {
    uint32_t subgraphs;
    uint32_t replayed;
    uint32_t refused;
    const char *why;
} ib_session_replay;
IB_API void ib_session_replay_get(const ib_session *s, ib_session_replay *out);

/* How much of the session's math computes at its precision (issue 24): of its `products`
 * (the nodes with a constant weight whose multiply-adds a precision is for: Conv,
 * ConvTranspose, MatMul, Gemm, LSTM, GRU, RNN and the fused forms; not attention's products of
 * two activations), `at_precision` compute at `precision` and the rest wider or otherwise,
 * listed in `others` by op type and precision ("LSTM x5 at fp32, Conv x1 at fp16"; "" when
 * none; borrowed from the session). A backend keeps a product wider when it has no kernel
 * for it at the precision; the reference kernels compute at fp32. Of the compiled shape
 * variants, the one with the most products not at precision; all 0 before anything is
 * compiled. */
typedef struct ib_session_precision_use {
    enum ib_precision precision;
    uint32_t products;
    uint32_t at_precision;
    const char *others;
} ib_session_precision_use;
IB_API void ib_session_precision_use_get(const ib_session *s, ib_session_precision_use *out);

/* Where the session's runs spent their wall time, summed since it was created (issue 24: an
 * Offline run below its own warm-up rate is either starved by its host or waiting on copies;
 * these say which). Always recorded (three clock reads a run). inputs_ns: putting the inputs
 * into the session's buffers (host to device on a GPU), fed and linked values included;
 * compute_ns: from there until every backend has finished (copies between backends
 * included); outputs_ns: reading the outputs back (device to host). runs counts the runs
 * (ib_session_run, _fed, _linked and the calibration's). Subtract two readings for a span. */
typedef struct ib_session_times {
    uint64_t runs;
    int64_t inputs_ns;
    int64_t compute_ns;
    int64_t outputs_ns;
} ib_session_times;
IB_API void ib_session_times_get(const ib_session *s, ib_session_times *out);

IB_API void ib_session_destroy(ib_session *s);

/* ---- profiling -------------------------------------------------------------- */

/* Where a model's time goes: on, the session records the wall time of each node (for
 * backends that time their steps; others as one entry per subgraph), of the copies
 * between backends and of the whole ib_session_run, from zero; off stops. Profiling waits
 * for each subgraph to finish, so asynchronous backends lose their overlap meanwhile. */
IB_API int ib_session_set_profiling(ib_session *s, bool on);

typedef struct ib_profile_entry {
    const char *node;    /* node name (NULL: not a node of the model) */
    const char *op_type; /* its op type, or "reorder" (a layout conversion for the node),
                          * "copy" (the backend's own copies, copies between backends),
                          * "subgraph" (a backend without per-node timing) */
    const char *backend; /* backend that ran it */
    const char *kind;    /* how: "onednn", "onednn-wino" (a Winograd convolution),
                          * "kernel", "copy", "subgraph", ... */
    int64_t ns;          /* summed over the runs */
    uint64_t runs;
    double flops;        /* of one run of the node (2 x multiply-adds; 0 when not counted) */
} ib_profile_entry;

typedef struct ib_profile {
    ib_profile_entry *entries; /* in execution order (all compiled shapes) */
    size_t n;
    int64_t run_ns; /* ib_session_run wall time summed, inputs and outputs included */
    uint64_t runs;
} ib_profile;

/* What was recorded since profiling was turned on (names borrowed from the session; free
 * with ib_profile_free). */
IB_API int ib_session_profile(const ib_session *s, ib_profile *out, ib_err *err);
IB_API void ib_profile_free(ib_profile *p);
/* The profile as text on f: time per run by op type (with the share of the run and what
 * the entries do not account for: the session's work between them), then the `top`
 * slowest nodes. */
IB_API void ib_profile_write(const ib_profile *p, size_t top, FILE *f);

/* ---- backends ------------------------------------------------------------- */

/* Backends compiled in ("reference", "cpu", "cuda", ...). */
IB_API size_t ib_backend_count(void);
IB_API const char *ib_backend_name_at(size_t i);
/* Whether a backend can run here; *reason (borrowed) explains when not
 * ("no CUDA device found"). */
IB_API bool ib_backend_available(const char *name, const char **reason);

IB_EXTERN_C_END

#endif
