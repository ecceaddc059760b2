/*
 * build.h - build ONNX graphs in C, with seeded random weights: the API the
 * model builders (src/models/: ResNet50, SSD-ResNet34, BERT, DLRM, RNN-T,
 * 3D U-Net) use, so generated and official models take one path (the
 * ONNX writer, then the loader).
 *
 *   ib_build *b;
 *   ib_build_create(42, 17, &b);
 *   ib_value_id x = ib_build_input(b, "input", IB_DTYPE_FLOAT32, "batch,3,224,224");
 *   ib_value_id w = ib_build_weight(b, "conv1.weight", IB_DTYPE_FLOAT32, "64,3,7,7",
 *                                   ib_fill_he());
 *   ib_value_id y = IB_BUILD_OP(b, "Conv", "kernel_shape=[7,7] strides=[2,2] pads=[3,3,3,3]", x,
 * w); y = IB_BUILD_OP(b, "Relu", "", y); ib_build_output(b, y, "features", IB_DTYPE_FLOAT32,
 * "batch,64,112,112"); rc = ib_build_write_file(b, "model.onnx", NULL, &err);   // or
 * ib_build_finish ib_build_destroy(b);
 *
 * Errors are sticky: a failing call returns IB_VALUE_NONE (or an error
 * code) and records the first error; later calls do nothing, and
 * ib_build_finish / ib_build_write* / ib_build_error return it. So model
 * code checks once at the end.
 *
 * Shapes are strings: "batch,3,224,224" - numbers are fixed dims, names are
 * symbolic dims (ONNX dim_param), "?" is an unnamed dynamic dim, "" is a
 * scalar. Attributes are strings too:
 *   "kernel_shape=[3,3] strides=[1,1] group=1 epsilon=1e-5 mode='nearest'"
 * an integer is INT, a number with '.', 'e', inf or nan is FLOAT, a quoted
 * text is STRING, [..] is INTS, FLOATS (if any element is a float) or
 * STRINGS; so write alpha=1.0, not alpha=1. TENSOR and GRAPH attributes go
 * through ib_build_node's ib_attr array.
 *
 * Weights are drawn per tensor from xoshiro256** seeded by splitmix64 of
 * (builder seed, tensor name), so a tensor's values depend only on the seed
 * and its name, not on what was built before it. Normal fills use the sum of
 * four 16-bit uniforms (Irwin-Hall, bounded at +-3.46 sigma) and only IEEE
 * basic operations, so the same seed gives bit-identical files everywhere.
 *
 * Thread-safety: one builder per thread. Ownership: the graph belongs to the
 * builder until ib_build_finish hands it over.
 */
#ifndef IB_ONNX_BUILD_H
#define IB_ONNX_BUILD_H

#include <stdint.h>

#include "onnx/onnx.h"

typedef struct ib_build ib_build;

/* ---- fills ------------------------------------------------------------------- */

enum ib_fill_kind {
    IB_FILL_ZEROS = 0,
    IB_FILL_CONST,   /* a */
    IB_FILL_UNIFORM, /* [a, b) (integer dtypes: a..b inclusive) */
    IB_FILL_NORMAL,  /* mean a, standard deviation b */
    IB_FILL_HE,      /* normal, std sqrt(2 / fan_in) (Kaiming; for ReLU nets) */
    IB_FILL_XAVIER,  /* uniform +-sqrt(6 / (fan_in + fan_out)) (Glorot) */
    IB_FILL_ARANGE,  /* a, a + b, a + 2b, ... (index-like test data) */
};

/*
 * fan_in/fan_out default (0) from the shape: rank 1 [n]: n, n; rank 2
 * [K, N] (MatMul's B): K, N; rank >= 3 [O, I, k...] (Conv weights):
 * I * prod(k), O * prod(k).
 */
typedef struct ib_fill {
    enum ib_fill_kind kind;
    double a, b;
    int64_t fan_in, fan_out; /* 0 = from the shape */
} ib_fill;

ib_fill ib_fill_zeros(void);
ib_fill ib_fill_const(double v);
ib_fill ib_fill_uniform(double lo, double hi);
ib_fill ib_fill_normal(double mean, double std);
ib_fill ib_fill_he(void);
ib_fill ib_fill_xavier(void);
ib_fill ib_fill_arange(double start, double step);

/* ---- builder ----------------------------------------------------------------- */

/* A new builder for an ai.onnx graph at `opset` (7..17) with weight seed `seed`. */
int ib_build_create(uint64_t seed, int64_t opset, ib_build **out);
void ib_build_destroy(ib_build *b);

/* The first error (IB_OK if none); its message in err (may be NULL). */
int ib_build_error(const ib_build *b, ib_err *err);

/* The graph under construction (borrowed; for tweaks the API lacks). */
ib_graph *ib_build_graph(ib_build *b);

/* Prefix for the names generated and given from now on ("layer1.0."; NULL = none). */
void ib_build_set_prefix(ib_build *b, const char *prefix);

/* A runtime input with a shape string ("batch,3,224,224"). */
ib_value_id ib_build_input(ib_build *b, const char *name, enum ib_dtype dtype, const char *shape);

/* An initializer filled by `fill` (name NULL = "W_<k>"; the prefix applies).
 * dtypes: float32/64, float16, bfloat16, int8/16/32/64, uint8/16/32/64, bool. */
ib_value_id ib_build_weight(ib_build *b, const char *name, enum ib_dtype dtype, const char *shape,
                            ib_fill fill);

/* Initializers from literal values (name NULL = auto): int64 (shapes, axes),
 * float32. shape NULL = 1-D of n elements; "" = scalar (n must be 1). */
ib_value_id ib_build_ints(ib_build *b, const char *name, const int64_t *v, size_t n,
                          const char *shape);
ib_value_id ib_build_floats(ib_build *b, const char *name, const float *v, size_t n,
                            const char *shape);

/* A node with one output (named "<node>_out"); attrs is a printf format for
 * the attribute string ("" or NULL = none). Returns the output. */
ib_value_id ib_build_op(ib_build *b, const char *op, const ib_value_id *in, uint32_t n_in,
                        const char *attrs, ...) IB_PRINTF(5, 6);

/* The same with n_out outputs written to out[] ("<node>_out0", ...). */
int ib_build_op_multi(ib_build *b, const char *op, const ib_value_id *in, uint32_t n_in,
                      ib_value_id *out, uint32_t n_out, const char *attrs, ...) IB_PRINTF(7, 8);

/* Everything at once: domain (NULL = ai.onnx), node name (NULL = auto),
 * attribute string plus ib_attr array (TENSOR/GRAPH attributes; copied, the
 * graph takes ownership of no tensor/graph passed here: use
 * ib_build_adopt_tensor/graph first). Outputs are written to out[]. */
ib_node_id ib_build_node(ib_build *b, const char *op, const char *domain, const char *name,
                         const ib_value_id *in, uint32_t n_in, ib_value_id *out, uint32_t n_out,
                         const ib_attr *attrs, uint32_t n_attrs, const char *attr_str);

/* Hand a tensor / subgraph to the graph (for TENSOR / GRAPH attributes). */
int ib_build_adopt_tensor(ib_build *b, ib_tensor *t);
int ib_build_adopt_graph(ib_build *b, ib_graph *sub);

/* Rename a value (e.g. a node output that is a graph output). */
int ib_build_rename(ib_build *b, ib_value_id v, const char *name);

/* Declare v a graph output named `name` (NULL = keep) with a type and shape
 * string (dtype UNDEFINED = leave untyped). */
int ib_build_output(ib_build *b, ib_value_id v, const char *name, enum ib_dtype dtype,
                    const char *shape);

/* ---- layer helpers (ResNet-style nets in a few lines) ------------------------- */

/* Conv with a He-initialised [c_out, c_in/group, k, k] weight and, when
 * bias, a zero bias; stride, symmetric pad. */
ib_value_id ib_build_conv2d(ib_build *b, ib_value_id x, int64_t c_in, int64_t c_out, int64_t k,
                            int64_t stride, int64_t pad, int64_t group, bool bias);
/* BatchNormalization over c channels with random but sane statistics:
 * scale U[0.5,1.5), bias N(0,0.1), mean N(0,0.1), var U[0.5,1.5). */
ib_value_id ib_build_batchnorm(ib_build *b, ib_value_id x, int64_t c, double eps);
/* MatMul by a Xavier [in, out] weight, plus a zero bias when bias. */
ib_value_id ib_build_linear(ib_build *b, ib_value_id x, int64_t in, int64_t out, bool bias);

/* ---- results ------------------------------------------------------------------- */

/* Sort the graph topologically and hand it over (*out, ib_graph_destroy).
 * The builder keeps only its error state; destroy it afterwards. */
int ib_build_finish(ib_build *b, ib_graph **out, ib_err *err);

/* Sort and serialize (the builder keeps its graph). */
int ib_build_write(ib_build *b, const ib_onnx_write_opts *opts, void **out, size_t *out_len,
                   ib_err *err);
int ib_build_write_file(ib_build *b, const char *path, const ib_onnx_write_opts *opts, ib_err *err);

#define IB_BUILD_NARGS_(...) (uint32_t)(sizeof((ib_value_id[]){__VA_ARGS__}) / sizeof(ib_value_id))
/* y = IB_BUILD_OP(b, "Add", "", x, y): a one-output node, inputs listed inline. */
#define IB_BUILD_OP(b, op, attrs, ...)                                                             \
    ib_build_op((b), (op), (const ib_value_id[]){__VA_ARGS__}, IB_BUILD_NARGS_(__VA_ARGS__), "%s", \
                (attrs))

#endif
