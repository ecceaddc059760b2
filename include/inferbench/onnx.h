/*
 * onnx.h - ONNX file helpers for users of the inferbench library: read and
 * write one ONNX TensorProto file (`.pb`), the format of the ONNX backend
 * node tests' test_data_set_N/input_0.pb and of the outputs that
 * `inferbench model run --output-dir` writes, so results can be compared
 * with any other framework. Models themselves are loaded with
 * ib_model_load_file (runtime.h).
 */
#ifndef INFERBENCH_ONNX_H
#define INFERBENCH_ONNX_H

#include <stddef.h>

#include "export.h"
#include "runtime.h"
#include "status.h"

IB_EXTERN_C_BEGIN

/*
 * ib_onnx_tensor_read_file - read one TensorProto file into *out.
 *   path  the .pb file
 *   out   OUT: name (the tensor's name, "" when unnamed), desc (all dims
 *         known), data (64-byte aligned, little-endian elements as in ONNX
 *         raw_data) and capacity (the data's size in bytes)
 *   err   optional detail ("file: offset N in TensorProto: ...")
 * Returns IB_OK; IB_ENOTFOUND/IB_EIO for the file; IB_EFORMAT for a corrupt
 * or inconsistent tensor (raw_data size not matching dims, negative dims);
 * IB_EUNSUPPORTED for STRING/complex tensors, external data or rank > 8.
 * Ownership: name and data live in one block owned by *out; release it with
 * ib_onnx_tensor_release. On failure *out is zeroed.
 * Thread-safety: reentrant.
 */
IB_API int ib_onnx_tensor_read_file(const char *path, ib_tensor_view *out, ib_err *err);

/* The same from a serialized TensorProto in memory (not referenced after the call). */
IB_API int ib_onnx_tensor_read_memory(const void *data, size_t len, ib_tensor_view *out,
                                      ib_err *err);

/* Free what ib_onnx_tensor_read_* put in *t and zero it (NULL allowed). */
IB_API void ib_onnx_tensor_release(ib_tensor_view *t);

/*
 * ib_onnx_tensor_write_file - write t as one TensorProto (name, dims,
 * data_type, raw_data) to path, atomically (temporary file + rename).
 * t->desc must have every dim known; t->data holds the elements (t->capacity
 * is ignored when 0, else must cover the tensor). t->name may be NULL.
 * Returns IB_OK, IB_EINVAL (dynamic dims, short buffer, STRING dtype) or IB_EIO.
 * Thread-safety: reentrant.
 */
IB_API int ib_onnx_tensor_write_file(const char *path, const ib_tensor_view *t, ib_err *err);

/* The same into a new buffer (*out, released with ib_free, base.h). */
IB_API int ib_onnx_tensor_write_memory(const ib_tensor_view *t, void **out, size_t *out_len,
                                       ib_err *err);

IB_EXTERN_C_END

#endif
