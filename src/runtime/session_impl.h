/*
 * session_impl.h - the inside of an ib_session, shared by session.c
 * (create, describe, destroy), session_build.c (compile + partition + plan +
 * backend compile of one shape set, a "variant"), session_run.c (the
 * allocation-free run path) and calib.c (INT8 range collection).
 *
 * A session holds one variant per distinct set of input shapes it has seen
 * (the batch, and any other symbolic dim such as BERT's sequence length),
 * built on first use and then reused; all variants share the session's
 * backend instances and its activation arenas (one per backend, grown when a
 * new variant needs more, which recompiles the others against the new
 * buffers); folded weights come from the model's derived-constant cache, so
 * every session on the model shares them.
 */
#ifndef IB_RUNTIME_SESSION_IMPL_H
#define IB_RUNTIME_SESSION_IMPL_H

#include "backend/backend.h"
#include "base/strbuf.h"
#include "inferbench/runtime.h"
#include "runtime/compile.h"
#include "runtime/model.h"
#include "runtime/partition.h"
#include "runtime/plan.h"

#define IB_SESSION_MAX_BACKENDS 2 /* the requested backend, then the reference one */
#define IB_SESSION_MAX_VARIANTS 64

/* A boundary copy: src backend arena -> dst backend arena, before a segment. */
typedef struct ib_copy {
    uint32_t src_b, dst_b;
    size_t src_off, dst_off, nbytes;
} ib_copy;

typedef struct ib_seg_exec {
    uint32_t backend;
    ib_backend_subgraph sg;
    ib_node_id *nodes;
    ib_backend_binding *bindings;
    ib_backend_graph *exec;
    ib_copy *copies; /* done before the segment runs */
    uint32_t n_copies;
    /* profiling (session_profile.c): on for this segment, its backend times each step,
     * and the segment's own time (whole run, and its copies) */
    bool prof_on, prof_steps;
    int64_t prof_ns, prof_copy_ns;
    uint64_t prof_runs;
} ib_seg_exec;

typedef struct ib_feed {
    uint32_t backend;
    size_t offset;
} ib_feed;

typedef struct ib_input_slot {
    ib_value_id value;
    ib_tensor_desc desc; /* the bound shape */
    size_t nbytes;
    ib_feed feeds[IB_SESSION_MAX_BACKENDS];
    uint32_t n_feeds;
} ib_input_slot;

enum ib_output_kind { IB_OUT_ARENA, IB_OUT_CONST, IB_OUT_INPUT };

typedef struct ib_output_slot {
    ib_value_id value;
    ib_tensor_desc desc;
    size_t nbytes;
    enum ib_output_kind kind;
    uint32_t backend;
    size_t offset;
    ib_backend_graph *producer; /* for data-dependent shapes */
    const void *const_data;
    uint32_t input_index; /* IB_OUT_INPUT */
} ib_output_slot;

/* Planned storage of one backend's values in one variant. */
typedef struct ib_arena_plan {
    ib_plan_value *pv;
    ib_value_id *value; /* pv[i] is the slot of value[i] */
    size_t n;
    ib_plan_result res;
} ib_arena_plan;

typedef struct ib_variant {
    ib_tensor_desc *shapes; /* per graph input: the cache key */
    ib_graph *g;
    ib_compile_stats cstats;
    uint32_t n_nodes, n_fallback;
    ib_strbuf fallbacks;
    ib_strbuf fallback_ops; /* "LSTM x2, TopK x1" (partition.h) */
    /* its products and how many compute at the session's precision; the others by op type
     * and precision ("LSTM x5 at fp32"): session_precision.c, after each compile */
    uint32_t n_products, n_at_precision;
    ib_strbuf prec_others;
    ib_seg_exec *segs;
    uint32_t n_segs;
    ib_input_slot *ins;
    ib_output_slot *outs;
    ib_arena_plan plan[IB_SESSION_MAX_BACKENDS];
    uint64_t last_used;
    bool calib; /* no reuse, every value plain: calibration reads them all */
} ib_variant;

struct ib_session {
    const ib_model *model;
    ib_session_options opts;
    char *backend_name;
    ib_backend *backends[IB_SESSION_MAX_BACKENDS];
    enum ib_precision prec[IB_SESSION_MAX_BACKENDS];
    uint32_t n_backends;
    ib_backend_buffer *arena[IB_SESSION_MAX_BACKENDS];
    size_t arena_cap[IB_SESSION_MAX_BACKENDS];
    unsigned char *staging; /* host bounce buffer for copies between device arenas */
    size_t staging_cap;
    ib_compile_cache *cache; /* the model's (borrowed) */
    IB_VEC(ib_variant *) variants;
    ib_variant *primary;             /* compiled at create for max_batch, when possible */
    ib_tensor_desc *key;             /* scratch: the shapes of the current run's inputs */
    const ib_tensor_view **in_views; /* scratch: graph input -> caller view */
    uint64_t clock;
    size_t peak;
    bool no_inplace; /* tests: plan without in-place reuse */
    char *describe;
    IB_VEC(char *) old_describe; /* earlier strings stay valid until destroy */
    /* INT8: calibrated ranges by value name */
    ib_arena names;
    ib_strmap range_index;
    IB_VEC(float) ranges; /* min, max pairs */
    /* ib_session_run_fed: the variant of the last successful run (NULL before, and after a
     * failed one), and a host buffer for fed values that must pass through the host */
    ib_variant *last_run;
    unsigned char *fed_staging;
    size_t fed_staging_cap;
    /* profiling: on, and the runs' wall time (ib_session_run, inputs and outputs included) */
    bool profiling;
    int64_t prof_run_ns;
    uint64_t prof_runs;
    /* where the runs' wall time went (ib_session_times_get), always recorded */
    ib_session_times times;
};

/* session_profile.c: turn a segment's profiling on when the session's is (a variant
 * compiled after ib_session_set_profiling starts here). */
void ib_session_prof_seg(ib_seg_exec *se);

/* session.c: ib_session_create with the main backend given as a vtable
 * instead of a registered name (tests, out-of-tree backends). */
int ib_session_create_with_ops(const ib_model *m, const ib_session_options *opts,
                               const struct ib_backend_ops *ops, ib_session **out, ib_err *err);

/* session_build.c */
int ib_variant_build(ib_session *s, const ib_tensor_desc *shapes, bool calib, ib_variant **out,
                     ib_err *err);
void ib_variant_free(ib_session *s, ib_variant *v);
/* Add up the precisions the backends report for v's product nodes (session_precision.c). */
int ib_variant_precision_use(ib_session *s, ib_variant *v);
/* Find the variant for these shapes, building (and caching) it on a miss. */
int ib_session_variant_for(ib_session *s, const ib_tensor_desc *shapes, ib_variant **out,
                           ib_err *err);

/* session_run.c */
/* Match named views to the graph inputs and check them; fills s->key and
 * s->in_views. */
int ib_session_match_inputs(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                            ib_err *err);
int ib_session_run_variant(ib_session *s, ib_variant *v, const ib_tensor_view *const *in_views,
                           ib_err *err);
/* s->key[i] = the shape of each given input (s->in_views), checked; inputs with skip[i] set
 * (skip may be NULL) come another way (linked). A missing input is IB_EINVAL, its message
 * ending with missing_note. */
int ib_session_key_given(ib_session *s, const bool *skip, const char *missing_note,
                         ib_err *err);
/* One input view against the declared input (dtype, rank, static dims, max_batch; data). */
int ib_session_check_input(const ib_session *s, const ib_value *decl, const ib_tensor_view *view,
                           ib_err *err);
/* The same checks of a shape alone (an input that is fed or linked, not given). */
int ib_session_check_desc(const ib_session *s, const ib_value *decl, const ib_tensor_desc *d,
                          ib_err *err);
/* s->in_views[i] = the caller's view of graph input i, NULL for those not given (unknown or
 * doubly given names are errors). */
int ib_session_place_views(ib_session *s, const ib_tensor_view *inputs, size_t n_inputs,
                           ib_err *err);
/* Run variant v (inputs already matched into s->in_views; fed or linked ones NULL and already
 * in their slots) and fetch the outputs; remembers v as the last successful run. */
int ib_session_run_and_fetch(ib_session *s, ib_variant *v, ib_tensor_view *outputs,
                             size_t n_outputs, ib_err *err);
/* The index of the value named `name` among ids[0..n) of g (n when none or name is NULL). */
size_t ib_session_index_of(const ib_graph *g, const ib_value_id *ids, size_t n,
                           const char *name);
/* The shape of output slot o after its variant's last run: the data-dependent dims its
 * producer reports (the bound shape when that would exceed the slot), else the bound shape. */
ib_tensor_desc ib_session_output_desc(const ib_output_slot *o);
/* s->fed_staging grown to at least n bytes (IB_ENOMEM naming n bytes of `what`). */
int ib_session_fed_staging(ib_session *s, size_t n, const char *what, ib_err *err);
/* Copy one value's bytes of a variant's arena to host memory. */
int ib_session_read_slot(ib_session *s, uint32_t backend, size_t offset, void *dst, size_t n,
                         ib_err *err);

/* session_link.c: one input taking another session's output (ib_session_run_linked, and the
 * feeds of ib_session_run_fed with `from` set) */
typedef struct ib_link_src {
    size_t input;             /* graph input index in the destination session */
    const ib_session *from;
    const ib_output_slot *os; /* the output's slot in from's last run */
    size_t nbytes;
} ib_link_src;
/* The slot of l->output in l->from's last run, and the shape input `input` takes from it:
 * l->desc when ndim > 0 (checked: the same dtype and bytes), else the output's. */
int ib_session_link_source(const ib_session_link *l, const char *input,
                           const ib_output_slot **os, ib_tensor_desc *d, ib_err *err);
/* The source's bytes into every slot of the input (one per backend that reads it): a copy
 * between the backend instances, or through s's host staging. */
int ib_session_link_copy(ib_session *s, const ib_input_slot *in, const ib_link_src *ls,
                         ib_err *err);

/* calib.c */
int ib_session_calibrate(ib_session *s, ib_err *err);
/* The calibrated range of a value name (false when none). */
bool ib_session_range(const ib_session *s, const char *name, float *lo, float *hi);

/* session.c: the describe text of a variant (replaces s->describe). */
int ib_session_update_describe(ib_session *s, const ib_variant *v);

#endif
