/*
 * partition.h - assign every live node of a compiled graph to a backend and
 * cut the execution order into contiguous segments (subgraphs), each run by
 * one backend.
 *
 * Backends are tried in preference order (the requested one, then the
 * reference kernels); the first whose supports_op accepts the node at its
 * concrete input shapes takes it. Nodes the requested backend refuses are
 * fallbacks and are listed (never silent). A node no backend takes fails
 * with IB_EUNSUPPORTED naming op, domain, node, opset and input shapes.
 *
 * The execution order is a topological order that, among ready nodes,
 * prefers the backend of the segment being built, so a fallback node in the
 * middle of a chain does not split unrelated work into extra segments.
 */
#ifndef IB_RUNTIME_PARTITION_H
#define IB_RUNTIME_PARTITION_H

#include "backend/backend.h"
#include "base/strbuf.h"
#include "ir/graph.h"

#define IB_PARTITION_MAX_BACKENDS 4

typedef struct ib_segment {
    uint32_t backend; /* index into the backends array */
    uint32_t first;   /* first position in order[] */
    uint32_t count;   /* nodes */
} ib_segment;

typedef struct ib_partition {
    ib_node_id *order; /* live nodes in execution order */
    uint32_t n_order;
    uint32_t *step_of;   /* per node id: its position in order[] (UINT32_MAX when dead) */
    uint8_t *backend_of; /* per node id: backend index (UINT8_MAX when dead) */
    ib_segment *segs;
    uint32_t n_segs;
    uint32_t n_fallback; /* nodes not on backends[0] */
    ib_strbuf fallbacks; /* "node 'x' (Op) -> reference: reason\n" lines */
    ib_strbuf fallback_ops; /* "LSTM x2, TopK x1": the fallback nodes' op types, first seen first */
} ib_partition;

/*
 * ib_partition_graph - partition g over backends[0..n) (n >= 1). prec[i] is
 * the precision asked of backend i. The graph must be toposorted with
 * concrete shapes. Fills *p (release with ib_partition_deinit, also after a
 * failure).
 */
int ib_partition_graph(const ib_graph *g, ib_backend *const *backends,
                       const enum ib_precision *prec, size_t n, ib_partition *p, ib_err *err);
void ib_partition_deinit(ib_partition *p);

#endif
