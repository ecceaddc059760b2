/*
 * pb.h - protobuf helpers shared by the ONNX loader, writer and TensorProto
 * I/O: a protobuf-c allocator over ib_malloc, and a light wire-format
 * pre-scan that finds the byte offset and field of the first defect, because
 * protobuf-c itself only reports "failed".
 */
#ifndef IB_ONNX_PB_H
#define IB_ONNX_PB_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "base/common.h"

/* Deepest message nesting the pre-scan accepts (ModelProto = level 1). Real
 * models with nested If/Loop bodies stay far below; the limit keeps
 * protobuf-c's recursive unpack off a fuzzer's stack overflow. */
#define IB_ONNX_PB_MAX_DEPTH 64

/* Fill *a with an allocator that uses ib_malloc/ib_free, so buffers unpacked
 * by protobuf-c (e.g. raw_data) can be handed to an ib_tensor and released
 * with ib_free. */
void ib_onnx_pb_allocator_init(ProtobufCAllocator *a);

/*
 * Walk the wire format of `data` as a message of type `desc`, recursing into
 * known sub-messages. Checks tags, wire types against the schema, varint and
 * length bounds, packed-array sizes and the nesting depth.
 * On the first defect returns IB_EFORMAT with
 *   "<src>: offset N in ModelProto.graph.node[3]: <what>"
 * in err. `src` names the input (a path, or "<memory>").
 */
int ib_onnx_pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                     const char *src, ib_err *err);

/* ib_onnx_pb_check, then protobuf_c_message_unpack with the ib allocator.
 * *out is freed with ib_onnx_pb_free. */
int ib_onnx_pb_unpack(const ProtobufCMessageDescriptor *desc, const void *data, size_t len,
                      const char *src, ProtobufCMessage **out, ib_err *err);
void ib_onnx_pb_free(ProtobufCMessage *m);

#endif
