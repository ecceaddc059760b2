/*
 * op.h - the operator registry: for every supported ONNX op (and every
 * internal fused op), its shape/type inference and its reference kernel.
 *
 * Reference kernels are plain C, single-threaded, straightforward and
 * correct: they are the fallback of every backend and the oracle of the
 * cross-backend conformance tests. They read inputs and write preallocated
 * outputs; they never allocate except through the scratch provided.
 *
 * Ops live in src/ir/ops/<family>.c (elementwise.c, conv.c, matmul.c,
 * pool.c, norm.c, reduce.c, shape.c, gather.c, rnn.c, nms.c, quant.c,
 * resize.c, fused.c, ...); each family file exports one table that
 * src/ir/ops/registry.c lists.
 *
 * Note to the other developers (from "ops"): this header was extended, all
 * original fields kept. ib_op_def gained, at its end, input/output arity
 * (min_inputs..max_inputs, min_outputs..max_outputs), `const_inputs` (bit i:
 * input i must be constant for the output SHAPE to be static: Reshape's
 * shape, Slice's starts, ...; the compiler should fold it or treat the node
 * as data-dependent) and `flags` (IB_OP_F_*). New helpers: ib_op_check_arity,
 * ib_op_infer (find + arity + infer) and ib_op_infer_tensors (infer with every
 * input's data known, as the reference interpreter does). Conventions:
 * kernels receive NULL for absent optional outputs; a data-dependent op's
 * kernel (flags & IB_OP_F_DATA_DEPENDENT) gets outputs allocated at the bound
 * inferred and overwrites out[i]->desc with the actual dims. Attribute
 * semantics of the internal "inferbench" ops are in docs/ops.md.
 */
#ifndef IB_RUNTIME_OP_H
#define IB_RUNTIME_OP_H

#include "ir/graph.h"

/* Context handed to inference and kernels. */
typedef struct ib_op_ctx {
    const ib_graph *graph; /* may be NULL when a kernel is called standalone */
    const ib_node *node;
    /* Scratch memory for kernels that need temporaries (e.g. im2col):
     * at least the bytes returned by the op's scratch_bytes, 64-byte aligned. */
    void *scratch;
    size_t scratch_size;
} ib_op_ctx;

/*
 * Shape and type inference. in[i] is NULL for absent optional inputs.
 * const_in[i] is the input's constant data when known at compile time (e.g.
 * Reshape's shape, Slice's starts), else NULL; ops whose output shape depends
 * on non-constant input data set *data_dependent = true and return an upper
 * bound in out (e.g. NonMaxSuppression: max_output_boxes), the kernel then
 * writes the actual dims into its output tensors' desc.
 * Returns IB_OK, or IB_EFORMAT/IB_EUNSUPPORTED with "node <name> (<op>): ..."
 * in err.
 */
typedef int (*ib_op_infer_fn)(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                              const ib_tensor *const *const_in, uint32_t n_in,
                              ib_tensor_desc *out, uint32_t n_out, bool *data_dependent,
                              ib_err *err);

/* Reference kernel: inputs and outputs have concrete descs and data. */
typedef int (*ib_op_kernel_fn)(const ib_op_ctx *ctx, const ib_tensor *const *in, uint32_t n_in,
                               ib_tensor *const *out, uint32_t n_out, ib_err *err);

/* Scratch bytes the reference kernel needs for these shapes (NULL = none). */
typedef size_t (*ib_op_scratch_fn)(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                                   uint32_t n_in, const ib_tensor_desc *out, uint32_t n_out);

/* FLOPs (2 x MAC convention) for these shapes, for `model info` (NULL = 0). */
typedef double (*ib_op_flops_fn)(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                                 uint32_t n_in, const ib_tensor_desc *out, uint32_t n_out);

typedef struct ib_op_def {
    const char *domain;   /* "" = ai.onnx; "inferbench" for fused ops */
    const char *op_type;
    int64_t since_opset;  /* first opset this definition covers */
    int64_t until_opset;  /* last opset (inclusive) it covers; 0 = open-ended */
    ib_op_infer_fn infer;
    ib_op_kernel_fn kernel;
    ib_op_scratch_fn scratch_bytes;
    ib_op_flops_fn flops;
    /* dtypes the reference kernel accepts for input 0, as IB_DTYPE bit mask
     * (1u << dtype); 0 = any. */
    uint32_t dtype_mask;
    /* ---- added after the first version (see the note at the top) ---- */
    uint8_t min_inputs;   /* inputs 0..min_inputs-1 are required (non-absent) */
    uint8_t max_inputs;   /* IB_OP_VARIADIC = any number */
    uint8_t min_outputs;
    uint8_t max_outputs;
    uint32_t const_inputs; /* bit i: input i's data decides the output shape */
    uint32_t flags;        /* IB_OP_F_* */
} ib_op_def;

#define IB_OP_VARIADIC 255
/* Output shape depends on input data beyond const_inputs (NonMaxSuppression):
 * infer returns an upper bound, the kernel writes the actual dims. */
#define IB_OP_F_DATA_DEPENDENT 0x1u
/* Output 0 may share input 0's buffer (Reshape, Squeeze, Identity, ...). */
#define IB_OP_F_ALIAS 0x2u

/* Find the definition for (domain, op_type) at a given opset; NULL if none. */
const ib_op_def *ib_op_find(const char *domain, const char *op_type, int64_t opset);

/* Iterate all definitions (for coverage listings): returns NULL past the end. */
const ib_op_def *ib_op_at(size_t i);

/* Run a node's reference kernel standalone (allocates scratch itself; for tests).
 * Checks arity and the input-0 dtype (IB_EUNSUPPORTED naming op, node, opset). */
int ib_op_run_reference(const ib_graph *g, const ib_node *n, const ib_tensor *const *in,
                        uint32_t n_in, ib_tensor *const *out, uint32_t n_out, ib_err *err);

/* Check a node's input/output counts (and required inputs present, when
 * `present` is non-NULL: present[i] false = absent) against def.
 * IB_EFORMAT "node 'n' (Op, opset N): expects 2..3 inputs, got 1". */
int ib_op_check_arity(const ib_op_def *def, const ib_node *n, const bool *present, uint32_t n_in,
                      ib_err *err);

/* Look up the node's definition (IB_EUNSUPPORTED naming op, domain, node and
 * opset when there is none), check its arity and run its shape inference. */
int ib_op_infer(const ib_graph *g, const ib_node *n, const ib_tensor_desc *const *in,
                const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                uint32_t n_out, bool *data_dependent, ib_err *err);

/* The same with every input's data known (in[i] NULL = absent): what the
 * reference interpreter and constant folding use. */
int ib_op_infer_tensors(const ib_graph *g, const ib_node *n, const ib_tensor *const *in,
                        uint32_t n_in, ib_tensor_desc *out, uint32_t n_out, bool *data_dependent,
                        ib_err *err);

#endif
