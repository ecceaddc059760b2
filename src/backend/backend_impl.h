/*
 * backend_impl.h - the backend vtable (STYLE.md §6). Each backend provides
 * one `static const struct ib_backend_ops` filled with designated
 * initializers and registered in src/backend/backend.c (the only place with
 * #ifdef IB_WITH_CUDA / IB_WITH_DNNL).
 *
 * Callers go through the checked wrappers in backend.h (src/backend/), never
 * through the table directly. Optional entries may be NULL; the wrappers fall
 * back (e.g. no synchronize = synchronous backend) or reject.
 *
 * The table only grows at the end, with a bump of IB_BACKEND_ABI_VERSION, so
 * older backends keep working.
 *
 * Execution model. The session partitions the compiled graph into
 * subgraphs, each owned by one backend (supports_op decides; the reference
 * backend takes what nobody else supports). For every subgraph the session
 * plans value storage in a backend buffer (one arena per session and backend)
 * and calls graph_compile once per bound shape set; graph_run then executes
 * with no allocation. Values crossing subgraph boundaries are copied with
 * tensor_get/tensor_set in plain (ONNX, row-major) layout; inside a subgraph
 * a backend may use any layout it likes (e.g. oneDNN blocked formats), as
 * long as graph inputs/outputs and boundary values are plain.
 */
#ifndef IB_BACKEND_IMPL_H
#define IB_BACKEND_IMPL_H

#include "runtime/graph.h"

#define IB_BACKEND_ABI_VERSION 1

typedef struct ib_backend_buffer ib_backend_buffer; /* backend-defined */
typedef struct ib_backend_exec ib_backend_exec;     /* a compiled subgraph */

typedef struct ib_backend_config {
    int threads;          /* 0 = affinity mask size */
    int first_cpu;        /* -1 = no pinning */
    enum ib_precision precision;
    int device;
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
} ib_backend_binding;

typedef struct ib_backend_subgraph {
    const ib_graph *graph;
    const ib_node_id *nodes;    /* in execution order */
    uint32_t n_nodes;
    const ib_backend_binding *bindings; /* every value the nodes read or write */
    uint32_t n_bindings;
    enum ib_precision precision;
} ib_backend_subgraph;

struct ib_backend_ops {
    uint32_t abi_version;
    const char *name;

    /* Whether the backend can run here (device present, ISA ok); *reason explains. */
    bool (*available)(const char **reason);
    int (*create)(const ib_backend_config *cfg, void **ctx, ib_err *err);
    void (*destroy)(void *ctx);

    /* Can this node run here with these concrete input shapes at this precision? */
    bool (*supports_op)(void *ctx, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in_descs, enum ib_precision precision);

    int (*buffer_alloc)(void *ctx, size_t nbytes, ib_backend_buffer **out, ib_err *err);
    void (*buffer_free)(void *ctx, ib_backend_buffer *buf);
    /* Host pointer of a buffer when the memory is host-visible (CPU), else NULL. */
    void *(*buffer_host_ptr)(void *ctx, ib_backend_buffer *buf);
    /* Copy host -> buffer and buffer -> host (plain layout). */
    int (*tensor_set)(void *ctx, ib_backend_buffer *buf, size_t offset, const void *src,
                      size_t nbytes, ib_err *err);
    int (*tensor_get)(void *ctx, ib_backend_buffer *buf, size_t offset, void *dst, size_t nbytes,
                      ib_err *err);

    /* Optional: bytes a value needs in this backend (padded layouts); NULL = plain size. */
    size_t (*plan_bytes)(void *ctx, const ib_tensor_desc *desc);

    /* Compile a subgraph for its bound shapes (weights are imported here). */
    int (*graph_compile)(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out,
                         ib_err *err);
    void (*graph_free)(void *ctx, ib_backend_exec *exec);
    /* Run a compiled subgraph; may return before completion when synchronize is set. */
    int (*graph_run)(void *ctx, ib_backend_exec *exec, ib_err *err);
    /* Optional: wait for outstanding work (NULL = graph_run is synchronous). */
    int (*synchronize)(void *ctx, ib_err *err);
};

/* Registry (src/backend/backend.c). */
const struct ib_backend_ops *ib_backend_find(const char *name);
const struct ib_backend_ops *ib_backend_at(size_t i);

#endif
