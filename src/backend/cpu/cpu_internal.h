/*
 * cpu_internal.h - shared internals of the CPU backend (src/backend/cpu):
 * the backend context, the compiled subgraph ("exec"), the per-value state
 * used while compiling, and the helpers op files call to request inputs in
 * a layout, define outputs and append steps. Not a public header.
 *
 * Compile model. Every value of the subgraph has a cpu_val. A value is held
 * in one memory descriptor (layout + dtype, `md`) chosen by its producer:
 * oneDNN's preferred blocked format for convolutions, plain row-major for
 * our own kernels. A consumer asks for the layout it needs (cpu_use); when it
 * differs, a reorder step converts into a private block ("view") that later
 * consumers share. Constants are converted once, at compile time. Boundary
 * values are written back in plain layout after their producer. The steps
 * (oneDNN primitives or C kernels) are run in order by graph_run, which
 * allocates nothing.
 */
#ifndef IB_BACKEND_CPU_INTERNAL_H
#define IB_BACKEND_CPU_INTERNAL_H

#include <dnnl.h>

#include "backend/backend_impl.h"
#include "base/vec.h"

/* A constant converted once per backend instance and shared by every compiled subgraph
 * (each sequence length or batch size of a session compiles its own subgraph): found by
 * the source bytes (size + 64-bit hash), the source layout and the wanted layout, so a
 * reused address with other contents never matches. */
typedef struct cpu_wconv {
    size_t src_bytes;
    uint64_t hash;
    dnnl_memory_desc_t src, want;
    void *raw;  /* owned (ib_free) */
    void *data; /* aligned inside raw */
} cpu_wconv;

typedef struct cpu_ctx {
    dnnl_engine_t eng;
    IB_VEC(cpu_wconv) wconv; /* shared converted weights (cpu_const_reorder_shared) */
    int threads;   /* OpenMP team size of every step */
    int *cpus;     /* threads entries: the CPU id thread i is pinned to; NULL = no pinning */
    enum ib_precision precision;
    dnnl_cpu_isa_t isa;
    bool bf16_ok;  /* AVX-512 core or better (bf16 convolutions and matmuls) */
    bool int8_ok;  /* AVX2 or better (u8s8 convolutions and matmuls) */
    bool wino_ok;  /* AVX-512F and not ib_backend_config.direct_conv: Winograd 3x3x3 convs */
    bool wino_bf16_ok; /* ... at bf16 too: wino_ok and AVX512-BF16 */
} cpu_ctx;

/* A converted copy of a value made for consumers that need another layout,
 * dtype or int8 scale. */
typedef struct cpu_view {
    dnnl_memory_desc_t md;
    float scale; /* quantisation scale applied by the reorder (1 = none) */
    void *data;
} cpu_view;

typedef struct cpu_val {
    ib_value_id id;
    ib_tensor_desc desc;     /* logical (ONNX) shape and graph dtype */
    const ib_backend_binding *bd;
    void *store;             /* binding storage, NULL for constants */
    size_t store_bytes;
    const void *cdata;       /* constant data (plain layout), NULL otherwise */
    bool boundary;
    bool ready;              /* has md/data: an input, a constant or produced */
    dnnl_memory_desc_t md;   /* how it is held (only for oneDNN dtypes) */
    void *data;              /* where it is held */
    bool has_range;          /* INT8: calibrated range known */
    float rmin, rmax;
    /* INT8: held quantised (cpu_held_q8: md u8/s8) as real * qscale; 1 for real values.
     * A producer may hold v quantised only when every use is a quantising conv
     * (q8_uses == uses), which then reads it without a reorder (cpu_q8_scale). */
    float qscale;
    uint32_t uses, q8_uses;  /* reads of v by nodes of this subgraph; by int8 Conv inputs */
    IB_VEC(cpu_view) views;
} cpu_val;

typedef struct ib_backend_exec cpu_exec;

#define CPU_REP_ARGS 4

/* A C kernel step: fn(kctx, threads). kctx is owned by the exec (ib_free). */
typedef int (*cpu_kernel_fn)(void *kctx, int threads, ib_err *err);

typedef struct cpu_step {
    dnnl_primitive_t prim; /* NULL for a C kernel */
    dnnl_exec_arg_t *args;
    int nargs;
    size_t scratch_bytes;             /* oneDNN user scratchpad this primitive needs */
    const dnnl_memory_desc_t *scratch_md; /* owned by the primitive's pd */
    cpu_kernel_fn fn;
    void *kctx;
    const ib_node *node; /* for error messages (NULL for writebacks) */
    /* a primitive run `reps` times (cpu_add_prim_repeat): run r moves the memory of arg
     * i to rep_base[i] + r * rep_stride[i] bytes (stride 0: fixed) */
    int64_t reps;
    int64_t rep_stride[CPU_REP_ARGS];
    char *rep_base[CPU_REP_ARGS];
} cpu_step;

struct ib_backend_exec {
    cpu_ctx *ctx;
    const ib_graph *graph;
    enum ib_precision precision;
    dnnl_stream_t stream;
    cpu_val *vals;
    uint32_t n_vals;
    int32_t *val_of; /* graph value id -> index in vals, -1 if not bound */
    IB_VEC(cpu_step) steps;
    IB_VEC(void *) blocks;          /* private allocations (ib_free'd at the end) */
    IB_VEC(dnnl_memory_t) mems;     /* memory objects of all steps */
    IB_VEC(dnnl_primitive_desc_t) pds;
    void *scratch;                  /* shared oneDNN scratchpad */
    size_t scratch_bytes;
    const ib_node *cur;             /* node being compiled (errors) */
    /* the precision of the products planned for cur and of every product node so far
     * (backend ABI 10, cpu_precision_read) */
    ib_prec_notes precs;
    /* profiling (ib_session_set_profiling): ns per step, NULL when off */
    int64_t *prof_ns;
    uint64_t prof_runs;
};

/* ---- dtypes and descriptors (cpu_exec.c) ---------------------------------- */

/* oneDNN data type of a graph dtype, dnnl_data_type_undef when none. */
dnnl_data_type_t cpu_dt(enum ib_dtype t);
/* The data type compute-heavy ops (conv, matmul, LSTM, attention) run in at
 * this precision: bf16 for BF16, else f32. */
dnnl_data_type_t cpu_act_dt(const cpu_exec *e);
/* The data type other oneDNN ops keep v in: bf16 when its producer left it
 * bf16, else f32 (no conversion just for them). */
dnnl_data_type_t cpu_keep_dt(const cpu_val *v);
/* Row-major descriptor for dims[0..ndim) (a scalar becomes {1}). */
int cpu_md_plain(dnnl_memory_desc_t *md, int ndim, const int64_t *dims, dnnl_data_type_t dt);
/* The same with format_tag_any (let the primitive choose). */
int cpu_md_any(dnnl_memory_desc_t *md, int ndim, const int64_t *dims, dnnl_data_type_t dt);
bool cpu_md_is_plain(const dnnl_memory_desc_t *md);
/* nwc / nhwc / ndhwc for 3-5 dims, dnnl_format_tag_undef otherwise. */
dnnl_format_tag_t cpu_channels_last_tag(int ndim);
/* Descriptor for dims[0..ndim) in format tag (a scalar becomes {1}); cpu_md_any is
 * this with format_tag_any. */
int cpu_md_tag(dnnl_memory_desc_t *md, int ndim, const int64_t *dims, dnnl_data_type_t dt,
               dnnl_format_tag_t tag);
/* md is the dense channels-last layout of dims. */
bool cpu_md_channels_last(const dnnl_memory_desc_t *md, int ndim, const int64_t *dims);
/* Format an error for the node being compiled and return code. */
int cpu_fail(cpu_exec *e, ib_err *err, int code, const char *fmt, ...) IB_PRINTF(4, 5);
/* Map a oneDNN status of `what` to IB_EBACKEND with the node name. */
int cpu_check(cpu_exec *e, ib_err *err, dnnl_status_t st, const char *what);

/* ---- compile helpers (cpu_exec.c) ----------------------------------------- */

cpu_val *cpu_in(cpu_exec *e, const ib_node *n, uint32_t i);  /* NULL when absent */
cpu_val *cpu_out(cpu_exec *e, const ib_node *n, uint32_t i); /* NULL when absent */
/* Private 64-byte aligned block, zero-filled, freed with the exec. */
void *cpu_alloc(cpu_exec *e, size_t bytes);
/* A memory object over data (kept for the exec's lifetime). */
int cpu_mem(cpu_exec *e, const dnnl_memory_desc_t *md, void *data, dnnl_memory_t *out,
            ib_err *err);

/* Memory holding v in layout `want` (dtype included), multiplied by scale
 * (int8 quantisation; 1 = plain conversion). Reorders at run time for
 * activations and once at compile time for constants. */
int cpu_use(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *want, float scale,
            dnnl_memory_t *mem, ib_err *err);
/* INT8: the quantisation of activation v for an int8 consumer: the one v is held in
 * when its producer quantised it, else u8 with 255 / max for a range >= 0 and s8 with
 * 127 / max|x| otherwise. Returns the scale; *dt gets the data type. */
float cpu_q8_scale(const cpu_val *v, dnnl_data_type_t *dt);
/* A float value its producer holds quantised (u8/s8 with qscale). */
bool cpu_held_q8(const cpu_val *v);
/* Host pointer to v in plain row-major layout of dtype dt (its graph dtype
 * when dt is undef, which also covers dtypes oneDNN has not). */
int cpu_use_plain(cpu_exec *e, cpu_val *v, dnnl_data_type_t dt, const void **ptr, ib_err *err);
/* Append a run-time reorder of v into `dst` (layout md, at data). */
int cpu_copy_into(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, void *data, ib_err *err);
/* The same holding real(v) * scale (int8 quantisation of the copy; 1 = real values). */
int cpu_copy_into_scaled(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, void *data,
                         float scale, ib_err *err);
/* A constant converted at compile time: src (plain md over cdata) reordered
 * into `want` with attr (may be NULL); returns the memory object. */
int cpu_const_reorder(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                      const dnnl_memory_desc_t *want, const_dnnl_primitive_attr_t attr,
                      dnnl_memory_t *mem, ib_err *err);

/* The same for a constant that outlives the exec (a model weight), converted without
 * attributes: the converted copy is kept by the backend context and shared with every
 * other subgraph compiled from the same bytes into the same layout, so a session holding
 * several variants (sequence lengths, batch sizes) stores each converted weight once.
 * A conversion into the source layout itself borrows the source (cpu_const_reorder too). */
int cpu_const_reorder_shared(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                             const dnnl_memory_desc_t *want, dnnl_memory_t *mem, ib_err *err);
/* The same sharing for a derivation oneDNN has no reorder for: `want` describes the derived
 * block (its size and, with src and the source bytes, its identity); fill(user, dst) writes
 * it the first time. *data is the shared block (64-byte aligned, owned by the context). */
int cpu_const_derived_shared(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                             const dnnl_memory_desc_t *want,
                             int (*fill)(void *user, void *dst, ib_err *err), void *user,
                             void **data, ib_err *err);

/* Give output v the layout md: storage is its binding when it fits (and, for
 * boundary values, only when md is plain), else a private block. */
int cpu_def(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, dnnl_memory_t *mem,
            ib_err *err);
/* The same in a private block, never the binding (boundary values are written back). */
int cpu_def_private(cpu_exec *e, cpu_val *v, const dnnl_memory_desc_t *md, dnnl_memory_t *mem,
                    ib_err *err);
/* Output v in plain layout of its graph dtype (C kernels); returns the pointer. */
int cpu_def_plain(cpu_exec *e, cpu_val *v, void **ptr, ib_err *err);

/* Append a primitive step. Takes ownership of pd (also on failure). */
int cpu_add_prim(cpu_exec *e, dnnl_primitive_desc_t pd, const dnnl_exec_arg_t *args, int nargs,
                 ib_err *err);
/* Create a primitive descriptor with the user-scratchpad attr (attr may be
 * NULL; it is not consumed). */
dnnl_status_t cpu_pd_create(cpu_exec *e, dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t op,
                            const_dnnl_primitive_attr_t attr);
/* A matmul primitive descriptor (bias may be NULL) through cpu_pd_create. */
dnnl_status_t cpu_matmul_pd(cpu_exec *e, const dnnl_memory_desc_t *src,
                            const dnnl_memory_desc_t *wei, const dnnl_memory_desc_t *bias,
                            const dnnl_memory_desc_t *dst, const_dnnl_primitive_attr_t attr,
                            dnnl_primitive_desc_t *pd);
/* A fresh attr with scratchpad_mode_user. */
int cpu_attr(cpu_exec *e, dnnl_primitive_attr_t *attr, ib_err *err);
/* The same run reps times; run r offsets the memory of args[i] (i < CPU_REP_ARGS, whose
 * memory objects no other step uses) by r * stride_bytes[i] from where it points now. */
int cpu_add_prim_repeat(cpu_exec *e, dnnl_primitive_desc_t pd, const dnnl_exec_arg_t *args,
                        int nargs, int64_t reps, const int64_t *stride_bytes, ib_err *err);
/* Append a C kernel step; takes ownership of kctx (ib_malloc'd; also on failure). */
int cpu_add_kernel(cpu_exec *e, cpu_kernel_fn fn, void *kctx, ib_err *err);

/* Shared builders (dnnl_eltwise.c): y = eltwise(x) keeping x's layout; a
 * constant scalar input as float. */
int cpu_eltwise_build(cpu_exec *e, cpu_val *x, cpu_val *y, dnnl_alg_kind_t alg, float a, float b,
                      ib_err *err);
bool cpu_const_scalar(const ib_graph *g, const ib_node *n, uint32_t i, float *out);

/* ---- op table (cpu_backend.c) --------------------------------------------- */

typedef bool (*cpu_supports_fn)(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                                const ib_tensor_desc *const *in, enum ib_precision p);
typedef int (*cpu_compile_fn)(cpu_exec *e, const ib_node *n, ib_err *err);

typedef struct cpu_op {
    const char *domain;
    const char *op_type;
    cpu_supports_fn supports;
    cpu_compile_fn compile;
} cpu_op;

const cpu_op *cpu_op_find(const ib_node *n);
/* The i-th registered op (coverage listings); NULL past the end. */
const cpu_op *cpu_op_at(size_t i);

/* Helpers for supports functions. */
bool cpu_is_const(const ib_graph *g, const ib_node *n, uint32_t i);
const ib_tensor *cpu_const_of(const ib_graph *g, const ib_node *n, uint32_t i);
bool cpu_all_dtype(const ib_node *n, const ib_tensor_desc *const *in, enum ib_dtype t);
/* Precision is one this machine runs (fp32 always, bf16/int8 when the ISA has them). */
bool cpu_precision_ok(const cpu_ctx *c, enum ib_precision p);

/* Families (one file each). */
extern const cpu_op cpu_ops_conv[];
extern const cpu_op cpu_ops_matmul[];
extern const cpu_op cpu_ops_pool[];
extern const cpu_op cpu_ops_norm[];
extern const cpu_op cpu_ops_eltwise[];
extern const cpu_op cpu_ops_binary[];
extern const cpu_op cpu_ops_rnn[];
extern const cpu_op cpu_ops_shape[];
extern const cpu_op cpu_ops_gather[];
extern const cpu_op cpu_ops_reduce[];
extern const cpu_op cpu_ops_attn[];
extern const cpu_op cpu_ops_detect[]; /* cpu_detect.c: inferbench.SSDPostprocess */
extern const cpu_op cpu_ops_accum[];  /* cpu_accum.c: inferbench.WindowAccumulate */

/* The vtable entries of cpu_exec.c. */
int cpu_graph_compile(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out,
                      ib_err *err);
void cpu_graph_free(void *ctx, ib_backend_exec *e);
int cpu_graph_run(void *ctx, ib_backend_exec *e, const ib_backend_subgraph *sg, ib_err *err);
void cpu_set_profiling(void *ctx, ib_backend_exec *e, bool on);
void cpu_profile_read(void *ctx, const ib_backend_exec *e, ib_backend_prof_fn fn, void *user);
/* oneDNN's weights data type as a precision (for ib_prec_notes_set). */
enum ib_precision cpu_prec_of(dnnl_data_type_t wdt);
void cpu_precision_read(void *ctx, const ib_backend_exec *e, ib_backend_prec_fn fn, void *user);

/* Threads (cpu_threads.c). enter sets the OpenMP team size of the calling
 * thread and, when pinning, pins its pool (saving the caller's mask in p);
 * leave restores the caller's mask. */
typedef struct cpu_pin {
    uint64_t mask[16]; /* a cpu_set_t */
    int saved;
} cpu_pin;
void cpu_threads_enter(const cpu_ctx *c, cpu_pin *p);
void cpu_threads_leave(const cpu_ctx *c, const cpu_pin *p);
int cpu_threads_resolve(const ib_backend_config *cfg, int *threads, int **cpus, ib_err *err);

#endif
