/*
 * test_runtime_helpers.h - what the runtime tests share: terse graph
 * construction (values, constants, nodes with attributes), random tensors,
 * comparison of a compiled/partitioned result against the reference
 * interpreter, a counting allocator, and "testdev", a backend table for
 * session tests that refuses chosen ops (to force fallbacks), can hide its
 * memory from the host (to force staging copies) and records what the
 * session handed it (configs, bindings, ranges).
 */
#ifndef IB_TEST_RUNTIME_HELPERS_H
#define IB_TEST_RUNTIME_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend_impl.h"
#include "inferbench/runtime.h"
#include "ir/graph.h"

/* ---- graph building ------------------------------------------------------- */

ib_tensor_desc th_desc(enum ib_dtype t, int32_t ndim, ...); /* dims as int64_t varargs */
/* A value with a shape (graph input when input is true). */
ib_value_id th_input(ib_graph *g, const char *name, ib_tensor_desc d);
ib_value_id th_value(ib_graph *g, const char *name);
/* A float32 constant with data (copied) or random data in [-scale, scale] (data NULL). */
ib_value_id th_const_f32(ib_graph *g, const char *name, ib_tensor_desc d, const float *data,
                         float scale, uint64_t *seed);
ib_value_id th_const_scalar(ib_graph *g, const char *name, float v);
ib_value_id th_const_i64(ib_graph *g, const char *name, int32_t n, const int64_t *v);
/* Add a node: inputs and outputs end with IB_VALUE_NONE-terminated lists
 * passed as arrays; attributes as an array (may be NULL). */
ib_node_id th_node(ib_graph *g, const char *op, const char *name, const ib_value_id *in,
                   uint32_t n_in, const ib_value_id *out, uint32_t n_out, const ib_attr *attrs,
                   uint32_t n_attrs);
/* One-input-one-output and two-input-one-output shorthands: new output value named `out`. */
ib_value_id th_unary(ib_graph *g, const char *op, ib_value_id x, const char *out);
ib_value_id th_binary(ib_graph *g, const char *op, ib_value_id a, ib_value_id b, const char *out);
void th_output(ib_graph *g, ib_value_id v);
ib_attr th_attr_i(const char *name, int64_t v);
ib_attr th_attr_f(const char *name, float v);
ib_attr th_attr_s(const char *name, const char *v);
ib_attr th_attr_ints(const char *name, const int64_t *v, size_t n);

/* ---- data ------------------------------------------------------------------ */

uint64_t th_rand(uint64_t *s);
float th_randf(uint64_t *s); /* [-1, 1) */
void th_fill(float *x, size_t n, uint64_t *seed, float scale);
/* max |a-b| / (1 + |b|) over n floats */
double th_max_rel_err(const float *a, const float *b, size_t n);

/* Count live nodes of an op (domain "" or "inferbench"). */
int th_count_op(const ib_graph *g, const char *op);

/* Run graph g on the reference interpreter (ops' ref_exec) with inputs
 * in[i] for g->inputs (in order); out[i] receives a new tensor per graph
 * output (ib_tensor_free). Fails the test on error. */
void th_ref_run(const ib_graph *g, ib_tensor *const *in, ib_tensor **out);
/* A random float32 tensor (or int64 mask of ones) for every input of g at
 * these shapes; in[i] freed with ib_tensor_free. */
void th_random_inputs(const ib_graph *g, const ib_tensor_desc *shapes, uint64_t seed,
                      ib_tensor **in);

/* ---- models built with the ONNX builder (src/onnx/build.h) ------------------------ */

struct ib_build;
/* ResNet-style: input "image" [batch,3,16,16] -> conv-bn-relu, maxpool, two
 * basic blocks (the second with a strided 1x1 projection), global average
 * pool, flatten, Gemm (transB) to "logits" [batch,10]. */
struct ib_build *th_build_tiny_resnet(uint64_t seed);
/* BERT-style encoder layer: "input_ids" int64 [batch,seq] -> Gather
 * embedding [vocab 50, hidden 16] + position, LayerNorm (decomposed),
 * 2-head self-attention with the additive mask from "input_mask" int64
 * [batch,seq] (Shape->Gather->Unsqueeze->Concat reshapes), output projection
 * + residual + LayerNorm, FFN 16->32->16 with the erf GELU, residual,
 * LayerNorm -> "hidden" [batch,seq,16]. */
struct ib_build *th_build_tiny_bert(uint64_t seed);
/* Finish b into a graph (fails the test on error) and destroy b. */
ib_graph *th_finish(struct ib_build *b);

/* ---- counting allocator ------------------------------------------------------ */

void th_count_allocs_begin(void);
/* Stops counting; returns allocations (and reallocs) made since begin. */
uint64_t th_count_allocs_end(void);

/* Fail every allocation after the next n (n < 0: never); live blocks are
 * counted so a test can check that failed calls freed everything. The first
 * call installs the allocator for the rest of the test process: call
 * th_fail_after_begin(-1) before the test allocates anything. */
void th_fail_after_begin(int64_t n);
/* Change the budget without a new snapshot (n < 0: stop failing). */
void th_fail_budget(int64_t n);
/* Stops failing; returns the blocks allocated since the last begin and not freed. */
int64_t th_fail_after_end(void);
/* True once an allocation has been refused since begin. */
bool th_fail_after_hit(void);

/* ---- the "testdev" backend ------------------------------------------------------ */

typedef struct th_testdev_state {
    const char *refuse[8]; /* op types supports_op refuses */
    bool hide_host;        /* buffers not host-visible: tensor_set/get only */
    ib_backend_config cfg; /* last config create() saw */
    int creates, compiles, runs;
    int ranged_bindings; /* bindings seen with range_max > range_min */
    int bindings_seen;
    int sets, gets;                            /* tensor_set / tensor_get calls */
    int64_t set_sleep_ns, run_sleep_ns, get_sleep_ns; /* each call sleeps so long */
} th_testdev_state;

extern th_testdev_state th_testdev;
extern const struct ib_backend_ops th_testdev_ops;

#endif
