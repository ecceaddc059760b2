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
 *
 * Planner rules (what a backend may rely on):
 *  - binding offsets are multiples of IB_BACKEND_ALIGN;
 *  - a non-boundary value gets at least plan_bytes(desc) bytes (the plain
 *    size when plan_bytes is NULL); a boundary value at least its plain size;
 *  - values with disjoint lifetimes may share bytes, so a backend must not keep
 *    pointing at a value's storage after the value's last consumer;
 *  - a node's output shares bytes with one of its inputs only when the
 *    session declared in-place reuse for an elementwise node (same size,
 *    element k read before element k is written); the CPU backend supports
 *    that for its unary and binary elementwise ops (Relu, Add, Clip, Gelu, ...);
 *  - the subgraph and its graph stay valid until graph_free (the wrappers
 *    keep their own copy of the node and binding arrays).
 *
 * Changes made by the first implementer (CPU backend, still ABI version 1):
 *  - buffers: the wrappers own `ib_backend_buffer` (size, host pointer, owner)
 *    and the backend only sees its own handle (`impl`), so bounds checks live
 *    in the wrappers; buffer_alloc returns the host pointer, which replaced
 *    the separate buffer_host_ptr entry; tensor_set/tensor_get are optional
 *    for host-visible buffers (NULL = memcpy);
 *  - graph_run also receives the subgraph, so graph_compile can be NULL
 *    (the backend then interprets the subgraph at run time);
 *  - bindings carry the calibrated range of a value (range_min/range_max)
 *    for INT8 precision; it is shared by every backend's int8 path;
 *  - value_desc (optional, at the end): the actual shape of a data-dependent
 *    output after graph_run (NonMaxSuppression and friends).
 */
#ifndef IB_BACKEND_IMPL_H
#define IB_BACKEND_IMPL_H

#include "backend/backend.h"

/* The table's version (SQLite's iVersion). Each field below says the version that added it;
 * the wrappers read a field only from tables of at least that version, so an older backend
 * keeps working unchanged. 1: the first table; 2: value_desc, residual_in_place; 3: caps;
 * 4: set_profiling, profile_read; 5: device_info; 6: host_alloc, host_free; 7: buffer_copy;
 * 8: buffer_copy_from; 9: replay_status; 10: precision_read. */
#define IB_BACKEND_ABI_VERSION 10

/* A buffer allocated through the wrappers (ib_backend_buffer_alloc). The
 * wrapper owns this struct; `impl` is what the backend's buffer_alloc returned. */
struct ib_backend_buffer {
    struct ib_backend *owner;
    void *impl;     /* backend handle */
    void *host_ptr; /* host address of byte 0 when host-visible (CPU), else NULL */
    size_t size;    /* bytes usable from offset 0 */
};

struct ib_backend_ops {
    uint32_t abi_version;
    const char *name;

    /* Optional: whether the backend can run here (device present, ISA ok);
     * *reason explains when not. NULL = always available. */
    bool (*available)(const char **reason);
    int (*create)(const ib_backend_config *cfg, void **ctx, ib_err *err);
    void (*destroy)(void *ctx);

    /* Can this node run here with these concrete input shapes at this
     * precision? in_descs[i] is NULL for absent optional inputs. */
    bool (*supports_op)(void *ctx, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in_descs, enum ib_precision precision);

    /* nbytes > 0; *impl receives the backend handle, *host_ptr the host
     * address (NULL when the memory is not host-visible). */
    int (*buffer_alloc)(void *ctx, size_t nbytes, void **impl, void **host_ptr, ib_err *err);
    void (*buffer_free)(void *ctx, void *impl);
    /* Optional when buffers are host-visible (NULL = memcpy): copy host ->
     * buffer and buffer -> host, plain layout; the wrappers check bounds. */
    int (*tensor_set)(void *ctx, void *impl, size_t offset, const void *src, size_t nbytes,
                      ib_err *err);
    int (*tensor_get)(void *ctx, void *impl, size_t offset, void *dst, size_t nbytes,
                      ib_err *err);

    /* Optional: bytes a non-boundary value needs in this backend (padded
     * layouts); NULL = plain size. */
    size_t (*plan_bytes)(void *ctx, const ib_tensor_desc *desc);

    /* Optional: compile a subgraph for its bound shapes (weights are
     * imported here); NULL = graph_run interprets the subgraph (exec NULL). */
    int (*graph_compile)(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out,
                         ib_err *err);
    void (*graph_free)(void *ctx, ib_backend_exec *exec); /* required with graph_compile */
    /* Run a compiled subgraph; may return before completion when synchronize is set. */
    int (*graph_run)(void *ctx, ib_backend_exec *exec, const ib_backend_subgraph *sg, ib_err *err);
    /* Optional: wait for outstanding work (NULL = graph_run is synchronous). */
    int (*synchronize)(void *ctx, ib_err *err);

    /* ABI 2. Optional: the actual desc of value v after the last graph_run, for
     * outputs whose shape depends on data; NULL = the bound desc. */
    int (*value_desc)(void *ctx, ib_backend_exec *exec, ib_value_id v, ib_tensor_desc *out);

    /* ABI 2. inferbench.FusedConv may write Y over its residual Z: the session's planner may then
     * give Z's storage to Y when Z is last read there (the CPU backend's sum post-op reads
     * each residual element before writing it). false = Y and Z never share. */
    bool residual_in_place;

    /* ABI 3. IB_BACKEND_CAP_* bits (backend.h): what the runtime may plan for this backend
     * beyond supports_op, e.g. fusing attention into inferbench.MultiHeadAttention. */
    uint32_t caps;

    /* ABI 4. Optional: per-step timing of a compiled subgraph (ib_session_set_profiling).
     * set_profiling(on) zeroes and starts recording the wall time of each step graph_run
     * takes (off stops); profile_read calls fn once per step in order, with the node it
     * runs (NULL for the backend's own steps, e.g. layout conversions at the edges), a
     * short kind ("onednn", "kernel", "reorder"...), the nanoseconds and the runs
     * recorded. NULL = the session times the whole subgraph as one entry. */
    void (*set_profiling)(void *ctx, ib_backend_exec *exec, bool on);
    void (*profile_read)(void *ctx, const ib_backend_exec *exec, ib_backend_prof_fn fn,
                         void *user);

    /* ABI 5. Optional: the device this instance runs on (name, memory, compute units), which
     * the harness sizes its default batches from. NULL = a host backend. */
    int (*device_info)(void *ctx, ib_backend_device_info *out);

    /* ABI 6. Optional (both or neither): host memory that tensor_set/tensor_get move fastest,
     * for the caller's batch buffers (page-locked on cuda: one DMA, no staging copy). *ptr is
     * 64-byte aligned. The caller frees it with host_free before destroying the instance.
     * NULL = ordinary memory (the wrappers' 64-byte aligned allocation). */
    int (*host_alloc)(void *ctx, size_t nbytes, void **ptr, ib_err *err);
    void (*host_free)(void *ctx, void *ptr);

    /* ABI 7. Optional: copy nbytes between two buffers of this instance on the device,
     * ordered with its other work (the regions do not overlap; the wrappers check). NULL:
     * host-visible buffers are copied by the wrappers, others go through the host. */
    int (*buffer_copy)(void *ctx, void *dst_impl, size_t dst_off, const void *src_impl,
                       size_t src_off, size_t nbytes, ib_err *err);

    /* ABI 8. Optional: as buffer_copy, but src_impl is a buffer of another instance of this
     * backend (context src_ctx), whose work on it is done (the caller waited for it): one
     * session's output into another's input (an encoder's into its decoder's) without a
     * host round trip. IB_EUNSUPPORTED when the two cannot reach each other's memory (other
     * devices): the caller goes through the host. NULL: always through the host. */
    int (*buffer_copy_from)(void *ctx, void *dst_impl, size_t dst_off, void *src_ctx,
                            const void *src_impl, size_t src_off, size_t nbytes, ib_err *err);

    /* ABI 9. Optional: whether graph_run replays exec as one recorded launch (cuda: a CUDA
     * Graph captured on the second run), so a session can say when capture was refused
     * (issue 24: a refused capture costs a launch per step). *why (set, never NULL) names the
     * step or call that refused it; "" otherwise. NULL = IB_BACKEND_REPLAY_NONE. */
    enum ib_backend_replay (*replay_status)(void *ctx, const ib_backend_exec *exec,
                                            const char **why);

    /* ABI 10. Optional: the precision each product node of exec computes at (issue 24: a run
     * at int8 or fp8 whose products partly run wider must say so). fn is called for every
     * node whose multiply-adds the backend planned (Conv, ConvTranspose, MatMul, Gemm, LSTM
     * and their fused forms), with the operands' precision: IB_PRECISION_INT8 for int8 x
     * int8, FP8 for e4m3, FP16 / BF16 for 16-bit operands (also when converted inside the
     * library call), FP32 otherwise. A node called twice (several products) counts at its
     * widest. A product node not reported computes at fp32; NULL: all of them. */
    void (*precision_read)(void *ctx, const ib_backend_exec *exec, ib_backend_prec_fn fn,
                           void *user);
};

/* For a backend's create: the context of cfg->peer when it is an instance of the same
 * backend (ops), else NULL. */
void *ib_backend_peer_ctx(const ib_backend_config *cfg, const struct ib_backend_ops *ops);

#endif
