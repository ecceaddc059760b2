/*
 * onnx.h - ONNX import and export for the rest of the runtime (internal; the
 * public surface is include/inferbench/onnx.h).
 *
 *   ModelProto bytes/file  --ib_onnx_load_graph*-->   ib_graph
 *   ib_graph               --ib_onnx_write_graph*-->  ModelProto bytes/file
 *   TensorProto .pb        <--ib_onnx_tensor_*-->     ib_tensor
 *
 * The loader accepts ai.onnx opsets 7..17 (other domains are kept with the
 * version they import), graph inputs that are not initializers, outputs,
 * value_info, symbolic dims (IB_DIM_DYNAMIC + ib_value.dim_param),
 * initializers in raw_data, typed fields or external files, attributes of
 * the types ib_attr has (subgraphs become ib_graphs owned by the parent), and
 * returns the graph in topological order. Every defect of the input is an
 * error naming the file, byte offset, node or tensor; nothing crashes.
 */
#ifndef IB_ONNX_ONNX_H
#define IB_ONNX_ONNX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/graph.h"

/* ---- loading ---------------------------------------------------------------- */

typedef struct ib_onnx_load_opts {
    /* Folder of external-data files; NULL = base_dir (the model's folder). */
    const char *external_data_dir;
    /* Refuse a model file, or one tensor, larger than this (0 = no limit). */
    uint64_t max_bytes;
    /* Accepted ai.onnx opset range (defaults 7 and 17). */
    int64_t min_opset, max_opset;
} ib_onnx_load_opts;

void ib_onnx_load_opts_defaults(ib_onnx_load_opts *o);

/*
 * Parse ModelProto bytes into a new graph. base_dir is the folder relative
 * to which external data is found (NULL: a model with external data fails
 * with IB_EINVAL unless opts->external_data_dir is set). opts may be NULL.
 * `data` is not referenced after the call returns.
 * Returns IB_OK, IB_EFORMAT (malformed: offset/field/node/tensor named),
 * IB_EUNSUPPORTED (valid ONNX we do not handle: opset, type, attribute kind),
 * IB_ENOTFOUND/IB_EIO (external files) or IB_ENOMEM.
 * Ownership: *out is the caller's, freed with ib_graph_destroy.
 */
int ib_onnx_load_graph(const void *data, size_t len, const char *base_dir,
                       const ib_onnx_load_opts *opts, ib_graph **out, ib_err *err);

/* The same from a file (mmap'd while parsing); external data is looked up
 * beside the file. Messages start with the path. */
int ib_onnx_load_graph_file(const char *path, const ib_onnx_load_opts *opts, ib_graph **out,
                            ib_err *err);

/* ---- writing ---------------------------------------------------------------- */

/* Writers split the weights once the file would pass protobuf's 2 GiB limit. */
#define IB_ONNX_PROTOBUF_LIMIT ((uint64_t)2 << 30)

typedef struct ib_onnx_write_opts {
    /* Initializers of at least this many bytes go to the external data
     * file (0 = none, unless the model would exceed IB_ONNX_PROTOBUF_LIMIT:
     * then every initializer of 1 KiB or more does). File writer only. */
    uint64_t external_threshold;
    /* External data file name, relative to the model's folder
     * (NULL = "<model file name>.data"). */
    const char *external_file;
    const char *producer_name;    /* NULL = graph->producer_name or "inferbench" */
    const char *producer_version; /* NULL = the inferbench version */
} ib_onnx_write_opts;

void ib_onnx_write_opts_defaults(ib_onnx_write_opts *o);

/* Serialize g as a ModelProto into a new ib_malloc'd buffer (*out, freed with
 * ib_free). Everything stays inline; IB_EINVAL when that passes 2 GiB (use
 * the file writer). opts may be NULL. */
int ib_onnx_write_graph(const ib_graph *g, const ib_onnx_write_opts *opts, void **out,
                        size_t *out_len, ib_err *err);

/* Write g to `path` (atomically: temporary file + rename), with external
 * data beside it as opts asks. */
int ib_onnx_write_graph_file(const ib_graph *g, const char *path, const ib_onnx_write_opts *opts,
                             ib_err *err);

/* ---- one TensorProto ------------------------------------------------------------- */

/*
 * Decode one serialized TensorProto (the node tests' input_0.pb) into a new
 * tensor with 64-byte aligned data. *name (optional, may be NULL) receives
 * the tensor's name, ib_malloc'd ("" when unnamed). External data is refused.
 * STRING tensors: data is `const char *[numel]` followed by the bytes.
 */
int ib_onnx_tensor_decode(const void *data, size_t len, const char *src, ib_tensor **out,
                          char **name, ib_err *err);
int ib_onnx_tensor_load_file(const char *path, ib_tensor **out, char **name, ib_err *err);

/* Encode t (all dims known) as a TensorProto with raw_data (string_data for
 * STRING) into a new ib_malloc'd buffer. name may be NULL. */
int ib_onnx_tensor_encode(const ib_tensor *t, const char *name, void **out, size_t *out_len,
                          ib_err *err);
int ib_onnx_tensor_save_file(const char *path, const ib_tensor *t, const char *name, ib_err *err);

/* ---- comparison ------------------------------------------------------------------ */

/*
 * Compare two graphs the way a round trip must preserve them: inputs,
 * outputs and every value a node or output references, or that carries a
 * type (by name: dtype, dims, dim_params, flags, constant data bit-exact),
 * nodes in order (op, domain, name, opset, inputs and outputs by name,
 * attributes by value, subgraphs recursively), opset and ir_version.
 * IB_OK when equal; IB_EFORMAT with the first difference in err otherwise.
 */
int ib_onnx_graph_compare(const ib_graph *a, const ib_graph *b, ib_err *err);

#endif
