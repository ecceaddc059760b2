/*
 * kserve.h - the KServe v2 (Open Inference Protocol) REST messages: inference requests and
 * responses as JSON, with the binary tensor data extension (Triton's
 * `Inference-Header-Content-Length`: a JSON header of that many bytes, then the tensors'
 * raw bytes in the order of the tensors that carry `"binary_data_size"`).
 *
 * Reference: kserve.github.io/website (Open Inference Protocol, REST), and Triton's
 * docs/protocol/extension_binary_data.md. What is read and written here:
 *
 *   request   {"id": s?, "inputs": [{"name", "shape": [..], "datatype", "parameters":
 *              {"binary_data_size": n}?, "data": [..]?}], "outputs": [{"name",
 *              "parameters": {"binary_data": true}?}]?, "parameters":
 *              {"binary_data_output": true}?}
 *   response  {"model_name", "model_version"?, "id"?, "outputs": [{"name", "shape",
 *              "datatype", "parameters": {"binary_data_size": n}?, "data": [..]?}]}
 *   error     {"error": "message"} (any non-2xx status)
 *
 * "data" may be flat (row-major) or nested, as the protocol allows; JSON is supported for
 * BOOL, the integer types and FP32/FP64 (FP16/BF16 and BYTES need the binary extension).
 * A decoder never trusts the message: shapes, sizes, counts and the binary length are
 * checked and a bad message is IB_EFORMAT naming what is wrong. No state, no I/O.
 */
#ifndef IB_NET_KSERVE_H
#define IB_NET_KSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "inferbench/runtime.h"

#define IB_KS_MAX_TENSORS 8
#define IB_KS_NAME_MAX    128
#define IB_KS_ID_MAX      64
/* The HTTP header that gives the JSON part's length in a binary message. */
#define IB_KS_HEADER_LENGTH "Inference-Header-Content-Length"

typedef struct ib_ks_tensor {
    char name[IB_KS_NAME_MAX];
    ib_tensor_desc desc; /* dtype and shape */
    const void *data;    /* encode: the caller's bytes; decode: into the body or msg memory */
    size_t nbytes;       /* numel x dtype size */
} ib_ks_tensor;

/* A request (inputs in t, wanted outputs in outputs) or a response (outputs in t). */
typedef struct ib_ks_msg {
    char id[IB_KS_ID_MAX];
    char model_name[IB_KS_NAME_MAX]; /* response */
    size_t n_tensors;
    ib_ks_tensor t[IB_KS_MAX_TENSORS];
    size_t n_outputs; /* request: outputs asked for (0 = all) */
    char outputs[IB_KS_MAX_TENSORS][IB_KS_NAME_MAX];
    bool binary_outputs; /* request: answer with binary data */
    void *owned;         /* decode: memory of tensors that came as JSON "data" */
} ib_ks_msg;

/* "FP32", "INT64", ... for a dtype (NULL when the protocol has no name for it), and back
 * (IB_DTYPE_UNDEFINED when unknown). */
const char *ib_ks_datatype(enum ib_dtype t);
enum ib_dtype ib_ks_dtype(const char *datatype);

/*
 * Encode m as a request (request = true) or response into sb (appended). binary: tensors as
 * raw bytes after the JSON header, whose length goes to *json_len (send it as
 * IB_KS_HEADER_LENGTH); otherwise JSON "data" arrays and *json_len = 0 (the whole body is
 * JSON). IB_EUNSUPPORTED for a dtype JSON cannot carry.
 */
int ib_ks_encode(const ib_ks_msg *m, bool request, bool binary, ib_strbuf *sb, size_t *json_len,
                 ib_err *err);

/*
 * Decode a body of len bytes whose first json_len bytes are the JSON header (json_len 0:
 * all JSON). Binary tensors point into body (keep it alive); JSON tensors are copied into
 * m->owned. Free with ib_ks_msg_free. IB_EFORMAT names the first problem.
 */
int ib_ks_decode(const uint8_t *body, size_t len, size_t json_len, bool request, ib_ks_msg *m,
                 ib_err *err);
void ib_ks_msg_free(ib_ks_msg *m);

/* The message of an error body ({"error": "..."}) into msg, or a quote of the body's start
 * when it is not one. */
void ib_ks_error_message(const uint8_t *body, size_t len, char *msg, size_t n);

/* A tensor by name (NULL when absent). */
const ib_ks_tensor *ib_ks_find(const ib_ks_msg *m, const char *name);

#endif
