/*
 * test_onnx_util.h - helpers shared by the tests of src/onnx: a tiny model
 * built with the builder, and "mutate the ModelProto then load it", which
 * unpacks a valid model with protobuf-c, lets a test break one field, packs
 * it again and runs the loader on the result.
 */
#ifndef IB_TEST_ONNX_UTIL_H
#define IB_TEST_ONNX_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "onnx/build.h"
#include "onnx/gen/onnx.pb-c.h"
#include "test.h"

/* z = Relu(MatMul(x[batch,4], W[4,3]) + B[3]); x float32, W He, B arange. */
static inline ib_build *tiny_mlp(void)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "batch,4");
    ib_value_id w = ib_build_weight(b, "W", IB_DTYPE_FLOAT32, "4,3", ib_fill_he());
    ib_value_id bias = ib_build_weight(b, "B", IB_DTYPE_FLOAT32, "3", ib_fill_arange(1, 1));
    ib_value_id y = ib_build_op(b, "MatMul", (ib_value_id[]){x, w}, 2, NULL);
    y = IB_BUILD_OP(b, "Add", "", y, bias);
    y = IB_BUILD_OP(b, "Relu", "", y);
    ib_build_output(b, y, "z", IB_DTYPE_FLOAT32, "batch,3");
    return b;
}

static inline void tiny_mlp_bytes(void **buf, size_t *len)
{
    ib_build *b = tiny_mlp();
    ib_err err;
    ASSERT_OK_ERR(ib_build_write(b, NULL, buf, len, &err), &err);
    ib_build_destroy(b);
}

/* Unpack bytes with protobuf-c's default (malloc) allocator: a test may
 * replace fields with malloc'd data; free with onnx__model_proto__free_unpacked. */
static inline Onnx__ModelProto *unpack_model(const void *buf, size_t len)
{
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    ASSERT_NOT_NULL(m);
    return m;
}

/* Pack m, load it (base_dir/opts may be NULL), free m; returns the loader's code. */
static inline int pack_and_load(Onnx__ModelProto *m, const char *base_dir,
                                const ib_onnx_load_opts *opts, ib_graph **g, ib_err *err)
{
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    ASSERT_NOT_NULL(buf);
    onnx__model_proto__pack(m, buf);
    onnx__model_proto__free_unpacked(m, NULL);
    ib_graph *tmp = NULL;
    ib_err_clear(err);
    int rc = ib_onnx_load_graph(buf, n, base_dir, opts, g ? g : &tmp, err);
    ib_graph_destroy(tmp);
    free(buf);
    return rc;
}

static inline char *xstrdup(const char *s)
{
    char *d = strdup(s);
    ASSERT_NOT_NULL(d);
    return d;
}

/* Replace a protobuf-c string field (malloc'd) */
#define SET_STR(field, value)                                                                      \
    do {                                                                                           \
        char **f_ = &(field), *v_ = xstrdup(value);                                                \
        free(*f_);                                                                                 \
        *f_ = v_;                                                                                  \
    } while (0)

#endif
