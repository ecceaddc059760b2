/*
 * op.h - the operator registry: for every supported ONNX op (and every
 * internal fused op), its shape/type inference and its reference kernel.
 *
 * Reference kernels are plain C, single-threaded, straightforward and
 * correct: they are the fallback of every backend and the oracle of the
 * cross-backend conformance tests. They read inputs and write preallocated
 * outputs; they never allocate except through the scratch provided.
 *
 * Ops live in src/runtime/ops/<family>.c (elementwise.c, conv.c, matmul.c,
 * pool.c, norm.c, reduce.c, shape.c, gather.c, rnn.c, nms.c, quant.c,
 * resize.c, fused.c, ...); each family file exports one table that
 * src/runtime/ops/registry.c lists.
 */
#ifndef IB_RUNTIME_OP_H
#define IB_RUNTIME_OP_H

#include "runtime/graph.h"

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
} ib_op_def;

/* Find the definition for (domain, op_type) at a given opset; NULL if none. */
const ib_op_def *ib_op_find(const char *domain, const char *op_type, int64_t opset);

/* Iterate all definitions (for coverage listings): returns NULL past the end. */
const ib_op_def *ib_op_at(size_t i);

/* Run a node's reference kernel standalone (allocates scratch itself; for tests). */
int ib_op_run_reference(const ib_graph *g, const ib_node *n, const ib_tensor *const *in,
                        uint32_t n_in, ib_tensor *const *out, uint32_t n_out, ib_err *err);

#endif
