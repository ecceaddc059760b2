/*
 * proto.h - conversions between the protobuf-c ONNX structs and the graph IR
 * shared by the files of src/onnx (not used outside it): TensorProto <->
 * ib_tensor (with external data files), element types, and the error
 * prefixing every message with the input's name.
 */
#ifndef IB_ONNX_PROTO_H
#define IB_ONNX_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "onnx/gen/onnx.pb-c.h"
#include "ir/graph.h"

/* Where external data is read from: the folder plus a one-file cache, since
 * most models keep all weights in one file. Close with ib_onnx_ext_close. */
typedef struct ib_onnx_ext {
    const char *dir; /* NULL: external data is refused */
    int fd;          /* -1 when no file is open */
    uint64_t size;
    char *path; /* ib_malloc'd path of the open file */
} ib_onnx_ext;

void ib_onnx_ext_init(ib_onnx_ext *e, const char *dir);
void ib_onnx_ext_close(ib_onnx_ext *e);

/* ONNX TensorProto.DataType -> ib_dtype: IB_OK, or IB_EUNSUPPORTED for the
 * complex and any unknown types (names the number in err, prefixed by what). */
int ib_onnx_dtype_from_proto(int32_t t, const char *src, const char *what, enum ib_dtype *out,
                             ib_err *err);

/*
 * Turn one TensorProto into a new ib_tensor. The data comes from raw_data,
 * the typed field for its dtype, or the external file; sizes are checked
 * against dims (overflow-checked). raw_data and matching typed arrays are
 * taken over from tp rather than copied (tp's fields are cleared), so tp
 * must have been unpacked with the ib allocator (pb.h). `what` names the
 * tensor in messages ("initializer 'w'"). max_bytes 0 = no limit.
 */
int ib_onnx_tensor_from_proto(Onnx__TensorProto *tp, const char *src, const char *what,
                              ib_onnx_ext *ext, uint64_t max_bytes, ib_tensor **out, ib_err *err);

/* Fill tp (initialised here) from t: dims, data_type and raw_data pointing at
 * t's data (borrowed), or string_data for STRING. Arrays come from arena a. */
int ib_onnx_tensor_to_proto(const ib_tensor *t, const char *name, ib_arena *a,
                            Onnx__TensorProto *tp);

/* Format a message and prefix it with "<src>: " (src may be NULL). */
int ib_onnx_fail(ib_err *err, int code, const char *src, const char *fmt, ...) IB_PRINTF(4, 5);

#endif
