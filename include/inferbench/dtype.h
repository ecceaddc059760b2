/*
 * dtype.h - element types (numbered as ONNX TensorProto.DataType), their sizes and names:
 * what the runtime's tensors, the metrics' payload decoding and the harness's payload choice
 * share, in a header of its own so that none of them pulls in the others' API.
 */
#ifndef INFERBENCH_DTYPE_H
#define INFERBENCH_DTYPE_H

#include <stddef.h>

#include "export.h"

IB_EXTERN_C_BEGIN

/* Element types, numbered as ONNX TensorProto.DataType. */
enum ib_dtype {
    IB_DTYPE_UNDEFINED = 0,
    IB_DTYPE_FLOAT32 = 1,
    IB_DTYPE_UINT8 = 2,
    IB_DTYPE_INT8 = 3,
    IB_DTYPE_UINT16 = 4,
    IB_DTYPE_INT16 = 5,
    IB_DTYPE_INT32 = 6,
    IB_DTYPE_INT64 = 7,
    IB_DTYPE_STRING = 8,
    IB_DTYPE_BOOL = 9,
    IB_DTYPE_FLOAT16 = 10,
    IB_DTYPE_FLOAT64 = 11,
    IB_DTYPE_UINT32 = 12,
    IB_DTYPE_UINT64 = 13,
    IB_DTYPE_BFLOAT16 = 16,
};

/* Size of one element in bytes (0 for UNDEFINED/STRING). */
IB_API size_t ib_dtype_size(enum ib_dtype t);
/* "float32", "int64", "bfloat16", ... */
IB_API const char *ib_dtype_name(enum ib_dtype t);

IB_EXTERN_C_END

#endif
