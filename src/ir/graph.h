/*
 * graph.h - the graph IR every part of the runtime shares: values (tensors,
 * with their type, shape and optional constant data), nodes (ONNX-style ops
 * with attributes) and the graph that owns them.
 *
 * The ONNX importer (src/onnx/load.c) produces an ib_graph; the model
 * builders (src/models/) produce one through src/onnx/build.h and write it
 * with the ONNX writer; the compiler (src/runtime/compile*.c) rewrites it
 * (shape inference, folding, fusion); backends read it. Metadata (names,
 * attributes, node arrays) lives in the graph's arena; constant tensor data
 * (weights) lives in ib_tensor buffers owned by the graph.
 *
 * Ids are indices: a value id indexes graph->values, a node id graph->nodes.
 * An absent optional input is IB_VALUE_NONE.
 */
#ifndef IB_RUNTIME_GRAPH_H
#define IB_RUNTIME_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "base/common.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "inferbench/runtime.h"

typedef int32_t ib_value_id;
typedef int32_t ib_node_id;
#define IB_VALUE_NONE ((ib_value_id)-1)
#define IB_NODE_NONE ((ib_node_id)-1)

/* A tensor with data: an initializer, a constant, an attribute tensor, or a
 * runtime buffer handed to a reference kernel. data is 64-byte aligned when
 * allocated by ib_tensor_alloc. */
typedef struct ib_tensor {
    ib_tensor_desc desc;
    void *data;
    size_t nbytes;
    bool owns_data; /* data freed with the tensor (else borrowed, e.g. mmap) */
} ib_tensor;

/* Attribute types, numbered as ONNX AttributeProto.AttributeType. */
enum ib_attr_type {
    IB_ATTR_UNDEFINED = 0,
    IB_ATTR_FLOAT = 1,
    IB_ATTR_INT = 2,
    IB_ATTR_STRING = 3,
    IB_ATTR_TENSOR = 4,
    IB_ATTR_GRAPH = 5,
    IB_ATTR_FLOATS = 6,
    IB_ATTR_INTS = 7,
    IB_ATTR_STRINGS = 8,
};

typedef struct ib_attr {
    const char *name;
    enum ib_attr_type type;
    int64_t i;
    float f;
    const char *s;   /* STRING: bytes (may contain NUL); s_len bytes */
    size_t s_len;
    const int64_t *ints;   /* INTS */
    const float *floats;   /* FLOATS */
    const char *const *strings; /* STRINGS */
    size_t count;          /* elements of ints/floats/strings */
    const ib_tensor *t;    /* TENSOR (owned by the graph) */
    const struct ib_graph *g; /* GRAPH (subgraphs: parsed but not executed; If/Loop unsupported) */
} ib_attr;

/* Value flags */
#define IB_VALUE_INPUT 0x1u    /* graph input (fed at run time) */
#define IB_VALUE_OUTPUT 0x2u   /* graph output */
#define IB_VALUE_CONST 0x4u    /* has constant data (initializer or folded) */

typedef struct ib_value {
    const char *name;
    ib_tensor_desc desc;     /* dims may be IB_DIM_DYNAMIC until bound */
    const char *dim_param[IB_MAX_DIMS]; /* symbolic dim names from ONNX, or NULL */
    bool shape_known;        /* dtype/ndim known (dims may still be dynamic) */
    uint32_t flags;
    ib_tensor *constant;     /* non-NULL iff IB_VALUE_CONST */
    ib_node_id producer;     /* IB_NODE_NONE for inputs and constants */
    uint32_t consumers;      /* number of node inputs (plus graph outputs) reading it */
} ib_value;

typedef struct ib_node {
    const char *op_type;     /* "Conv", or an internal fused op ("ib.FusedConv") */
    const char *domain;      /* "" for ai.onnx, "ai.onnx.ml", "com.microsoft", "inferbench" */
    const char *name;        /* may be "" in ONNX; the importer names it "<op>_<index>" */
    ib_value_id *inputs;
    uint32_t n_inputs;
    ib_value_id *outputs;
    uint32_t n_outputs;
    ib_attr *attrs;
    uint32_t n_attrs;
    int64_t opset;           /* opset of the node's domain */
    bool dead;               /* removed by a pass; skipped everywhere */
} ib_node;

typedef struct ib_graph {
    ib_arena arena;          /* names, attributes, id arrays */
    IB_VEC(ib_value) values;
    IB_VEC(ib_node) nodes;   /* in topological order after ib_graph_toposort */
    IB_VEC(ib_value_id) inputs;  /* runtime inputs only (not initializers) */
    IB_VEC(ib_value_id) outputs;
    IB_VEC(ib_tensor *) tensors; /* every ib_tensor owned by the graph */
    IB_VEC(struct ib_graph *) subgraphs; /* GRAPH attribute bodies owned by the graph */
    ib_strmap value_index;   /* value name -> id */
    int64_t opset;           /* ai.onnx opset */
    int64_t ir_version;
    const char *producer_name;
    const char *graph_name;
    const char *doc;
} ib_graph;

/* ---- graph construction and queries (src/ir/graph.c) --------------- */

int ib_graph_create(ib_graph **out);
void ib_graph_destroy(ib_graph *g);

/* Add a value; returns its id or IB_VALUE_NONE on OOM. name is copied. */
ib_value_id ib_graph_add_value(ib_graph *g, const char *name, const ib_tensor_desc *desc);
/* Find a value by name (linear or hashed; IB_VALUE_NONE when absent). */
ib_value_id ib_graph_find_value(const ib_graph *g, const char *name);
/* Attach constant data (ownership of t moves to the graph). */
int ib_graph_set_constant(ib_graph *g, ib_value_id v, ib_tensor *t);
/* Add a node; inputs/outputs/attrs are copied into the arena. */
ib_node_id ib_graph_add_node(ib_graph *g, const char *op_type, const char *domain,
                             const char *name, const ib_value_id *inputs, uint32_t n_inputs,
                             const ib_value_id *outputs, uint32_t n_outputs, const ib_attr *attrs,
                             uint32_t n_attrs);
/* Recompute producers/consumers; order nodes topologically. IB_EFORMAT with the
 * node name on a cycle or a value produced twice. */
int ib_graph_toposort(ib_graph *g, ib_err *err);

/* Attribute lookup helpers (NULL / default when absent). */
const ib_attr *ib_node_attr(const ib_node *n, const char *name);
int64_t ib_node_attr_int(const ib_node *n, const char *name, int64_t dflt);
float ib_node_attr_float(const ib_node *n, const char *name, float dflt);
const char *ib_node_attr_string(const ib_node *n, const char *name, const char *dflt);
/* INTS attribute: returns count, *out points into the graph (NULL if absent). */
size_t ib_node_attr_ints(const ib_node *n, const char *name, const int64_t **out);

/* The input's value, or NULL for IB_VALUE_NONE / out of range. */
const ib_value *ib_node_input(const ib_graph *g, const ib_node *n, uint32_t i);
const ib_value *ib_node_output(const ib_graph *g, const ib_node *n, uint32_t i);

/* ---- tensors (src/ir/tensor.c) ---------------------------------- */

/* Allocate a tensor with 64-byte aligned zeroed data for desc (all dims known). */
int ib_tensor_alloc(const ib_tensor_desc *desc, ib_tensor **out);
/* Wrap borrowed data. */
int ib_tensor_wrap(const ib_tensor_desc *desc, void *data, size_t nbytes, ib_tensor **out);
void ib_tensor_free(ib_tensor *t);
size_t ib_tensor_desc_nbytes(const ib_tensor_desc *d); /* 0 if dynamic */
/* Element strides of d broadcast onto `rank` dims (d right-aligned; its dims of 1 and the
 * missing leading ones get stride 0), into st[0..rank): an attention mask over [N, h, S, Sk]. */
void ib_tensor_desc_bcast_strides(const ib_tensor_desc *d, int rank, int64_t *st);
/* "float32[1,3,224,224]" into buf. */
const char *ib_tensor_desc_str(const ib_tensor_desc *d, char *buf, size_t n);
bool ib_tensor_desc_equal(const ib_tensor_desc *a, const ib_tensor_desc *b);
/* d is a float32 tensor of rank nd (at most 3) with dims (a, b, c)[0..nd) (d may be NULL):
 * the backends' LSTM weight and state checks. */
bool ib_tensor_desc_is_f32(const ib_tensor_desc *d, int nd, int64_t a, int64_t b, int64_t c);

/* fp16 / bf16 conversions (round to nearest even). The bf16 pair is inline so that
 * kernels converting whole rows (cpu_kernels_norm.c) vectorise it. */
uint16_t ib_f32_to_f16(float f);
float ib_f16_to_f32(uint16_t h);

static inline uint16_t ib_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float ib_bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#endif
