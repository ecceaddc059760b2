/*
 * backend.h - the checked wrappers every caller (the session, tests, bench)
 * uses to reach a backend: instances, buffers, compiled subgraphs. Argument
 * checks and the handling of optional (NULL) vtable entries live here, in one
 * place, so backends can assume well-formed calls (ggml's ggml_backend_*,
 * Redis' connWrite). Callers include this header only; the vtable is in backend_impl.h,
 * which includes this one and is for backend implementations (ggml-backend-impl.h).
 *
 * Thread-safety: an instance (ib_backend) may be shared by several compiled
 * subgraphs; run one subgraph from one thread at a time. Different instances
 * are independent.
 */
#ifndef IB_BACKEND_BACKEND_H
#define IB_BACKEND_BACKEND_H

#include "ir/graph.h"

typedef struct ib_backend ib_backend;
typedef struct ib_backend_graph ib_backend_graph; /* a compiled subgraph */
struct ib_backend_ops; /* the vtable a backend provides (backend_impl.h) */

/* Alignment (bytes) of buffers and binding offsets. */
#define IB_BACKEND_ALIGN 64

typedef struct ib_backend_exec ib_backend_exec; /* a compiled subgraph (backend-defined) */

/* A buffer allocated through the wrappers (ib_backend_buffer_alloc); its fields are the
 * wrappers' and the backend's (backend_impl.h), callers use the accessors below. */
typedef struct ib_backend_buffer ib_backend_buffer;

typedef struct ib_backend_config {
    int threads;          /* 0 = affinity mask size */
    int first_cpu;        /* -1 = no pinning */
    enum ib_precision precision;
    int device;
    bool direct_conv;     /* CPU: no Winograd convolutions (ib_session_options) */
    bool nhwc_fp16;       /* cuda at fp16: conv islands in NHWC float16 (ib_session_options) */
    bool half_chains;     /* cuda at fp16/bf16: 16-bit chains of products (ib_session_options) */
    /* Another instance of the same backend to share read-only state with (the cuda backend
     * keeps one copy of the weights per device for all instances sharing); NULL = none. A
     * backend ignores a peer of another backend or device. The peer may be destroyed first. */
    const struct ib_backend *peer;
} ib_backend_config;

/* Where one value lives for a compiled subgraph. */
typedef struct ib_backend_binding {
    ib_value_id value;
    ib_tensor_desc desc;        /* concrete shape */
    ib_backend_buffer *buffer;  /* NULL for constants the backend imports itself */
    size_t offset;              /* byte offset inside buffer */
    size_t nbytes;              /* bytes reserved (>= plain size; see plan_bytes) */
    const ib_tensor *constant;  /* host data for weights/constants, else NULL */
    bool boundary;              /* crosses the subgraph edge: plain layout required */
    /* INT8 precision: the calibrated range of this value (from the session's
     * calibration batches); range_max <= range_min means "not calibrated" and
     * an int8 kernel reading this value then runs in fp32. */
    float range_min, range_max;
} ib_backend_binding;

typedef struct ib_backend_subgraph {
    const ib_graph *graph;
    const ib_node_id *nodes;    /* in execution order */
    uint32_t n_nodes;
    const ib_backend_binding *bindings; /* every value the nodes read or write */
    uint32_t n_bindings;
    enum ib_precision precision;
} ib_backend_subgraph;

/* What a backend can do beyond the ops supports_op answers for: the runtime asks these
 * instead of a backend's name. */
enum ib_backend_cap {
    /* Runs inferbench.MultiHeadAttention (the fused attention op): the compiler may then
     * fuse attention blocks for it. */
    IB_BACKEND_CAP_MHA = 1u << 0,
    /* Runs inferbench.DotInteraction (DLRM's pairwise dot products): the compiler may then
     * fuse the interaction's Reshape, Transpose, MatMul, Flatten and Gather for it. */
    IB_BACKEND_CAP_DOT_INTERACTION = 1u << 1,
    /* Runs inferbench.GatherConcat (embedding lookups written straight into their Concat):
     * the compiler may then fuse DLRM's 26 Gathers and their Concat for it. */
    IB_BACKEND_CAP_GATHER_CONCAT = 1u << 2,
};

/* True when backend b declares the capability (tables before ABI version 3: none). */
bool ib_backend_has_cap(const ib_backend *b, unsigned cap);

/* The accelerator an instance runs on (ABI 5), for per-device defaults (batch sizes). */
typedef struct ib_backend_device_info {
    char name[256];       /* "NVIDIA H200" */
    size_t memory_bytes;  /* device memory in all */
    int compute_units;    /* streaming multiprocessors, ... */
} ib_backend_device_info;

/* False (and *out zeroed) for host backends and tables before ABI version 5. */
bool ib_backend_device_info_get(const ib_backend *b, ib_backend_device_info *out);

/* Registry (src/backend/backend.c): a compiled-in backend by name, or by index (NULL past
 * the end). */
const struct ib_backend_ops *ib_backend_find(const char *name);
const struct ib_backend_ops *ib_backend_at(size_t i);

/* The default configuration: all CPUs, no pinning, FP32, device 0. */
void ib_backend_config_defaults(ib_backend_config *cfg);

/*
 * ib_backend_create - instantiate backend `name` ("reference", "cpu", ...).
 * IB_ENOTFOUND when not compiled in, IB_EUNSUPPORTED when not available here
 * (err says why), IB_EINVAL on a bad config. cfg NULL = defaults.
 * Ownership: destroy with ib_backend_destroy.
 */
int ib_backend_create(const char *name, const ib_backend_config *cfg, ib_backend **out,
                      ib_err *err);
/* Same, for a table that need not be registered (tests, out-of-tree
 * backends). The table is validated: ABI version and required entries. */
int ib_backend_create_from_ops(const struct ib_backend_ops *ops, const ib_backend_config *cfg,
                               ib_backend **out, ib_err *err);
/* NULL allowed. Every buffer and compiled graph must be freed first. */
void ib_backend_destroy(ib_backend *b);

const char *ib_backend_get_name(const ib_backend *b);
const ib_backend_config *ib_backend_get_config(const ib_backend *b);

/* False for a NULL node, a dead node, or a node the backend does not take. */
bool ib_backend_supports_op(ib_backend *b, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in_descs, enum ib_precision precision);

/* Bytes a non-boundary value needs (>= plain size); 0 for a dynamic desc. */
size_t ib_backend_plan_bytes(ib_backend *b, const ib_tensor_desc *desc);
/* Whether FusedConv's output may take over its residual's storage (backend_impl.h). */
bool ib_backend_residual_in_place(const ib_backend *b);

/* Buffers: nbytes > 0. host_ptr is NULL when not host-visible. */
int ib_backend_buffer_alloc(ib_backend *b, size_t nbytes, ib_backend_buffer **out, ib_err *err);
void ib_backend_buffer_free(ib_backend_buffer *buf); /* NULL allowed */
void *ib_backend_buffer_host_ptr(const ib_backend_buffer *buf);
size_t ib_backend_buffer_size(const ib_backend_buffer *buf);
/* Copy [src_off, +nbytes) of src into dst at dst_off, the regions not overlapping (else
 * IB_EINVAL): memmove for host-visible buffers; between buffers of one instance on the device
 * when the backend can (ABI 7); between two instances of one backend (src's work on it done)
 * when it can reach the other's memory (ABI 8: on cuda, the same device); IB_EUNSUPPORTED
 * otherwise (the caller goes through the host). */
int ib_backend_buffer_copy(ib_backend_buffer *dst, size_t dst_off, const ib_backend_buffer *src,
                           size_t src_off, size_t nbytes, ib_err *err);

/* Host memory the backend copies to and from fastest (ABI 6: page-locked on cuda), 64-byte
 * aligned, nbytes > 0; ordinary aligned memory for backends without host_alloc. Free it with
 * ib_backend_host_free (NULL allowed) on the same instance, before destroying it. */
int ib_backend_host_alloc(ib_backend *b, size_t nbytes, void **out, ib_err *err);
void ib_backend_host_free(ib_backend *b, void *p);
/* Plain-layout copies; IB_EINVAL when [offset, offset+nbytes) exceeds the buffer. */
int ib_backend_tensor_set(ib_backend_buffer *buf, size_t offset, const void *src, size_t nbytes,
                          ib_err *err);
int ib_backend_tensor_get(ib_backend_buffer *buf, size_t offset, void *dst, size_t nbytes,
                          ib_err *err);

/*
 * ib_backend_graph_compile - check and compile a subgraph. Checks: nodes
 * exist and are live; every value a node reads or writes is bound exactly
 * once with a concrete desc; constants have data; other bindings lie inside a
 * buffer of this backend, reserve enough bytes and are IB_BACKEND_ALIGN
 * aligned. IB_EINVAL (naming the node or value) when a check fails.
 * Ownership: the node and binding arrays are copied; sg->graph must outlive
 * the compiled graph.
 */
int ib_backend_graph_compile(ib_backend *b, const ib_backend_subgraph *sg, ib_backend_graph **out,
                             ib_err *err);
/* Run (possibly asynchronously: call ib_backend_synchronize before reading outputs). */
int ib_backend_graph_run(ib_backend_graph *gr, ib_err *err);
void ib_backend_graph_free(ib_backend_graph *gr); /* NULL allowed */
/* The backend's compiled form (NULL without graph_compile): for a backend's own tests,
 * which know its type. */
ib_backend_exec *ib_backend_graph_exec(const ib_backend_graph *gr);
/* The actual desc of a bound value after a run (data-dependent shapes). */
int ib_backend_graph_value_desc(ib_backend_graph *gr, ib_value_id v, ib_tensor_desc *out);
/* Per-step profiling of a compiled subgraph (ABI 4; see backend_impl.h): false when the
 * backend cannot (its subgraphs are then timed whole by the caller). */
typedef void (*ib_backend_prof_fn)(void *user, const ib_node *node, const char *kind, int64_t ns,
                                   uint64_t runs);
bool ib_backend_graph_set_profiling(ib_backend_graph *gr, bool on);
void ib_backend_graph_profile(const ib_backend_graph *gr, ib_backend_prof_fn fn, void *user);
/* Whether a compiled subgraph's runs replay one recorded launch (a CUDA Graph; ABI 9). */
enum ib_backend_replay {
    IB_BACKEND_REPLAY_NONE,    /* the backend launches step by step (host backends, ABI < 9) */
    IB_BACKEND_REPLAY_NOT_YET, /* not recorded yet (capture comes with the second run, and
                                * never while profiling) */
    IB_BACKEND_REPLAY_ON,      /* recorded: each run is one launch */
    IB_BACKEND_REPLAY_REFUSED, /* recording failed: its steps are launched one by one */
};
/* A compiled subgraph's replay state; *why (never NULL) says why it was refused ("" else). */
enum ib_backend_replay ib_backend_graph_replay(const ib_backend_graph *gr, const char **why);
/* The precision of each product node a compiled subgraph computes (ABI 10; see
 * backend_impl.h): false when the backend does not say (its products run at fp32). */
typedef void (*ib_backend_prec_fn)(void *user, const ib_node *node, enum ib_precision p);
bool ib_backend_graph_precisions(const ib_backend_graph *gr, ib_backend_prec_fn fn, void *user);
/* Bits of a precision's operands: 8 (int8, fp8), 16 (fp16, bf16), 32. */
int ib_precision_bits(enum ib_precision p);
/* *cur (-1: none yet) becomes p when p is wider, so a node with several products counts at
 * its widest. */
void ib_precision_widen(int *cur, enum ib_precision p);
/* What a backend keeps for its precision_read (ABI 10): while a node compiles, the widest
 * precision its products were planned at (ib_prec_notes_set from the paths that plan them);
 * after it compiles, ib_prec_notes_end records that for the node, if any was set. */
typedef struct ib_prec_note {
    const ib_node *node;
    enum ib_precision p;
} ib_prec_note;
typedef struct ib_prec_notes {
    int cur; /* the node being compiled: -1 until a product is planned */
    IB_VEC(ib_prec_note) notes;
} ib_prec_notes;
void ib_prec_notes_begin(ib_prec_notes *pn);
void ib_prec_notes_set(ib_prec_notes *pn, enum ib_precision p);
int ib_prec_notes_end(ib_prec_notes *pn, const ib_node *n); /* IB_OK or IB_ENOMEM */
void ib_prec_notes_read(const ib_prec_notes *pn, ib_backend_prec_fn fn, void *user);
void ib_prec_notes_free(ib_prec_notes *pn);
/* Wait for outstanding work on this instance (no-op for synchronous backends). */
int ib_backend_synchronize(ib_backend *b, ib_err *err);

/* An int8 session's embedding tables, row-wise 8-bit (the cpu's GatherConcat and the cuda
 * Gather hold the same bytes): row x[width] -> o[width + 8] = q[width] (uint8), scale, bias
 * (two floats, unaligned), where bias = min(x), scale = (max - min) / 255 and q = the
 * saturated (x - bias) * (1 / scale) + 0.5 truncated; a constant row has scale 0 (every
 * element is bias). Read back as (float)q * scale + bias, the product rounded before the sum.
 * Each step is one IEEE float operation, so a device kernel doing the same operations with
 * explicit roundings writes the same bytes. false when the row holds a NaN or an infinity. */
#define IB_Q8_ROW_EXTRA 8
bool ib_q8_row(const float *x, int64_t width, uint8_t *o);

#endif
