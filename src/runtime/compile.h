/*
 * compile.h - the graph compiler: turns a loaded model graph into a graph a
 * backend can run at one set of concrete shapes.
 *
 * Pipeline (ib_compile, compile.c), each pass in its own file:
 *   clone (compile_util.c)      share the model's weights, copy the metadata
 *   bind  (compile_infer.c)     fix the dynamic batch and other symbolic dims
 *   infer (compile_infer.c)     shape/type inference through the op registry,
 *                               folding every node whose inputs are constant
 *                               (compile_fold.c) as it goes, so that
 *                               Shape->Gather->Unsqueeze->Concat chains become
 *                               the constants Reshape needs
 *   dce   (compile_dce.c)       drop Identity/Dropout and nodes nobody reads
 *   fuse  (compile_fuse_*.c)    Conv+BN(+Add)(+Relu), MatMul/Gemm+Add(+act),
 *                               LayerNorm, GELU, attention, Gathers + Concat
 *                               -> "inferbench" ops
 *   infer again                 validates the fused nodes
 *   dce, toposort
 * The result is a new graph; the source graph is never modified (models are
 * immutable and shared by sessions).
 */
#ifndef IB_RUNTIME_COMPILE_H
#define IB_RUNTIME_COMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/graph.h"

/* Internal domain of fused ops (docs/ops.md). */
#define IB_DOMAIN_INTERNAL "inferbench"

/* A symbolic dim fixed by name ("seq_len" = 384). */
typedef struct ib_dim_bind {
    const char *name;
    int64_t value;
} ib_dim_bind;

/* Derived constants (folded weights) shared by all graphs compiled from one
 * model, so another batch size or another session does not duplicate
 * BN-folded or transposed weights. Each ib_model owns one; entries are added,
 * never changed or removed, until the cache is destroyed. Thread-safe. */
typedef struct ib_compile_cache ib_compile_cache;
int ib_compile_cache_create(ib_compile_cache **out);
void ib_compile_cache_destroy(ib_compile_cache *c);
/* Total bytes of tensors held. */
size_t ib_compile_cache_bytes(const ib_compile_cache *c);

typedef struct ib_compile_options {
    /* dim 0 of every graph input whose dim 0 is dynamic (0 = leave dynamic) */
    int64_t batch;
    /* symbolic dims by dim_param name */
    const ib_dim_bind *dims;
    size_t n_dims;
    /* optional: the concrete shape of every graph input, in graph->inputs
     * order; overrides batch/dims and must agree with the static dims */
    const ib_tensor_desc *input_shapes;
    bool no_fold; /* skip constant folding (Shape chains stay) */
    bool no_fuse; /* ib_session_options.disable_fusion */
    bool fuse_mha; /* head split/merge + Attention -> inferbench.MultiHeadAttention (only for
                    * backends implementing it: cpu, reference) */
    bool fuse_dot_interaction; /* DLRM's interaction -> inferbench.DotInteraction (backends
                                * with IB_BACKEND_CAP_DOT_INTERACTION: cpu, reference) */
    bool fuse_gather_concat;   /* lookups + Concat -> inferbench.GatherConcat (backends with
                                * IB_BACKEND_CAP_GATHER_CONCAT: cpu, reference) */
    bool no_dce;
    bool allow_dynamic;      /* leave unbound dims dynamic instead of failing (stats) */
    size_t fold_max_bytes;   /* do not fold outputs larger than this (0 = 256 MiB) */
    ib_compile_cache *cache; /* optional */
} ib_compile_options;

void ib_compile_options_defaults(ib_compile_options *o);

typedef struct ib_compile_stats {
    uint32_t folded;       /* nodes replaced by constants */
    uint32_t removed;      /* dead or identity nodes dropped */
    uint32_t fused_conv;   /* FusedConv created */
    uint32_t fused_bn;     /* BatchNormalizations folded into them */
    uint32_t fused_matmul; /* FusedMatMul created */
    uint32_t layernorm;
    uint32_t gelu;
    uint32_t attention;
    uint32_t attention_heads; /* Attentions whose head split/merge became MultiHeadAttention */
    uint32_t gather_concat; /* GatherConcat created (embedding lookups + Concat) */
    uint32_t dot_interaction; /* DotInteraction created (DLRM's T x T^T + Gather) */
    uint32_t instance_norm; /* InstanceNorm created (InstanceNormalization + Relu/LeakyRelu) */
    bool shapes_complete; /* every value has concrete dims */
} ib_compile_stats;

/*
 * ib_compile - run the pipeline on a copy of src. *out is a new graph that
 * borrows src's constant data (src must outlive it). Errors name the node
 * (IB_EUNSUPPORTED for an op nobody implements: op, domain, node, opset;
 * IB_EINVAL for an unbound or mismatching input dim; IB_EFORMAT for an
 * inconsistent graph).
 */
int ib_compile(const ib_graph *src, const ib_compile_options *o, ib_graph **out,
               ib_compile_stats *stats, ib_err *err);

/* ---- shared by the passes (compile_util.c) -------------------------------- */

typedef struct ib_pass_ctx {
    ib_graph *g;
    const ib_compile_options *opts;
    ib_compile_stats *stats;
    ib_err *err;
    /* per value: its data depends only on the model's constants (cacheable);
     * indexed by value id, sized by ib_pass_ctx_grow */
    IB_VEC(bool) pure;
} ib_pass_ctx;

/* Copy a graph: metadata in a new arena, constant data borrowed. */
int ib_graph_clone(const ib_graph *src, ib_graph **out);

/* Number of live readers of v (node inputs of live nodes + graph outputs). */
uint32_t ib_value_uses(const ib_graph *g, ib_value_id v);
/* The only live node reading v, or IB_NODE_NONE (none, several, or v is a
 * graph output). */
ib_node_id ib_value_single_user(const ib_graph *g, ib_value_id v);
bool ib_value_is_output(const ib_graph *g, ib_value_id v);
/* Replace every read of `from` by live nodes (and graph outputs) with `to`. */
void ib_value_replace_uses(ib_graph *g, ib_value_id from, ib_value_id to);

/* The node producing v when it is live and of op_type (domain ""), else NULL. */
ib_node *ib_value_producer_op(ib_graph *g, ib_value_id v, const char *op_type);
/* Constant value as one float (scalar or all-equal elements of a float tensor). */
bool ib_value_const_scalar(const ib_graph *g, ib_value_id v, float *out);
/* A fresh value named "<base><suffix>" (made unique) with desc. */
ib_value_id ib_graph_new_value(ib_graph *g, const char *base, const char *suffix,
                               const ib_tensor_desc *desc);
/* A fresh constant value holding t (ownership moves to the graph). */
ib_value_id ib_graph_new_const(ib_graph *g, const char *base, const char *suffix, ib_tensor *t);

/* Mark the nodes in dead[] removed (their outputs lose their producer) and
 * add one node in their place, producing `outputs`. Returns the new node's id
 * or IB_NODE_NONE on OOM. Node pointers taken before the call are invalid
 * after it (the node array may move). */
ib_node_id ib_graph_replace_nodes(ib_graph *g, const ib_node_id *dead, size_t n_dead,
                                  const char *op_type, const char *domain, const char *name,
                                  const ib_value_id *inputs, uint32_t n_inputs,
                                  const ib_value_id *outputs, uint32_t n_outputs,
                                  const ib_attr *attrs, uint32_t n_attrs, int64_t opset);

/* Derived-constant cache: look up or store a tensor under a key. A
 * successful store takes ownership of t and sets *stored to the entry (t, or
 * an equal tensor another thread stored first, in which case t is freed);
 * on failure t stays the caller's. */
const ib_tensor *ib_compile_cache_get(ib_compile_cache *c, const char *key);
int ib_compile_cache_put(ib_compile_cache *c, const char *key, ib_tensor *t,
                         const ib_tensor **stored);
/* Attach a cached (borrowed) tensor to a value of g (wraps it). */
int ib_graph_set_borrowed_constant(ib_graph *g, ib_value_id v, const ib_tensor *t);

/* ---- passes -------------------------------------------------------------- */
int ib_pass_bind(ib_pass_ctx *c);                              /* compile_infer.c */
int ib_pass_infer(ib_pass_ctx *c, bool fold);                  /* compile_infer.c */
int ib_fold_node(ib_pass_ctx *c, ib_node_id id, bool *folded); /* compile_fold.c */
int ib_pass_dce(ib_pass_ctx *c);                               /* compile_dce.c */
int ib_pass_fuse_conv(ib_pass_ctx *c);                         /* compile_fuse_conv.c */
int ib_pass_fuse_matmul(ib_pass_ctx *c);                       /* compile_fuse_matmul.c */
int ib_pass_fuse_layernorm(ib_pass_ctx *c);                    /* compile_fuse_norm.c */
int ib_pass_fuse_gelu(ib_pass_ctx *c);                         /* compile_fuse_gelu.c */
int ib_pass_fuse_attention(ib_pass_ctx *c);                    /* compile_fuse_attn.c */
int ib_pass_fuse_mha(ib_pass_ctx *c);                          /* compile_fuse_attn.c */
int ib_pass_fuse_gather_concat(ib_pass_ctx *c);                /* compile_fuse_embed.c */
int ib_pass_fuse_dot_interaction(ib_pass_ctx *c);              /* compile_fuse_embed.c */
int ib_pass_fuse_instance_norm(ib_pass_ctx *c);                /* compile_fuse_inorm.c */

#endif
