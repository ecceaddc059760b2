/*
 * ref_exec.h - the reference interpreter: runs a whole ib_graph with the
 * reference kernels of src/ir/ops, inferring shapes at run time from
 * the actual inputs. Each value gets its own allocation, released after its
 * last consumer (liveness), so peak memory stays near the live set.
 *
 * It is the whole-model oracle of the tests and of the ONNX conformance
 * suite; it is simple, single-threaded and not meant to be fast.
 */
#ifndef IB_RUNTIME_REF_EXEC_H
#define IB_RUNTIME_REF_EXEC_H

#include "ir/op.h"

typedef struct ib_ref_exec_stats {
    size_t peak_bytes;  /* most tensor bytes alive at once (inputs/constants excluded) */
    size_t allocations; /* tensors allocated */
    size_t nodes_run;
} ib_ref_exec_stats;

typedef struct ib_ref_exec_options {
    /* Called after each node with its outputs (NULL entries for absent
     * optional outputs); a non-zero return stops the run with IB_ECANCELED.
     * The tensors are valid only during the call. NULL = no callback. */
    int (*on_node)(void *user, const ib_graph *g, const ib_node *n, const ib_tensor *const *out,
                   uint32_t n_out);
    void *user;
    ib_ref_exec_stats *stats; /* filled when non-NULL */
} ib_ref_exec_options;

void ib_ref_exec_options_defaults(ib_ref_exec_options *o);

/*
 * ib_ref_exec_run - run g once.
 *   inputs[i]   data for g->inputs.data[i]; its desc is the actual shape and
 *               must agree with the declared dtype, rank and static dims.
 *   outputs[i]  OUT: a new tensor for g->outputs.data[i] (n_outputs must equal
 *               the graph's output count); release each with ib_tensor_free.
 * The nodes must be in topological order (ib_graph_toposort); dead nodes are
 * skipped. Errors name the node (unsupported op, bad shapes, kernel errors);
 * on error every outputs[i] is NULL.
 * Ownership: inputs and g are borrowed and not modified.
 * Thread-safety: concurrent runs on the same graph are safe (g is read-only).
 */
int ib_ref_exec_run(const ib_graph *g, const ib_tensor *const *inputs, size_t n_inputs,
                    ib_tensor **outputs, size_t n_outputs, const ib_ref_exec_options *opts,
                    ib_err *err);

#endif
