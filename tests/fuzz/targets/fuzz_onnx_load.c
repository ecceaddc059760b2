/*
 * fuzz_onnx_load.c - libFuzzer target for the ONNX loader and the
 * TensorProto reader. Any input must either load or fail with a message;
 * whatever loads must write, load again and compare equal (so the writer
 * and the comparison are fuzzed too). `make check` replays the corpus in
 * tests/fuzz/corpus/onnx_load/ with gcc; `make fuzz` builds the real target.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond, const char *what, const ib_err *err)
{
    if (!cond) {
        fprintf(stderr, "fuzz_onnx_load: %s: %s\n", what, err ? err->msg : "");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_onnx_load_opts o;
    ib_onnx_load_opts_defaults(&o);
    o.min_opset = 1; /* reach the graph code for old opsets too */
    o.max_bytes = 64u << 20;
    ib_graph *g = NULL, *g2 = NULL;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_onnx_load_graph(data, size, NULL, &o, &g, &err);
    check(rc == IB_OK ? g != NULL : (g == NULL && err.msg[0] && err.code == rc),
          "load result and error disagree", &err);
    if (rc == IB_OK) {
        void *buf = NULL;
        size_t len = 0;
        rc = ib_onnx_write_graph(g, NULL, &buf, &len, &err);
        check(rc == IB_OK, "a loaded graph does not write", &err);
        rc = ib_onnx_load_graph(buf, len, NULL, &o, &g2, &err);
        check(rc == IB_OK, "a written graph does not load", &err);
        rc = ib_onnx_graph_compare(g, g2, &err);
        check(rc == IB_OK, "round trip differs", &err);
        ib_free(buf);
        ib_graph_destroy(g2);
        ib_graph_destroy(g);
    }
    ib_tensor *t = NULL;
    char *name = NULL;
    rc = ib_onnx_tensor_decode(data, size, NULL, &t, &name, &err);
    if (rc == IB_OK) {
        void *buf = NULL;
        size_t len = 0;
        if (t->desc.dtype != IB_DTYPE_STRING || t->nbytes) {
            rc = ib_onnx_tensor_encode(t, name, &buf, &len, &err);
            check(rc == IB_OK, "a decoded tensor does not encode", &err);
            ib_free(buf);
        }
        ib_tensor_free(t);
        ib_free(name);
    }
    return 0;
}
