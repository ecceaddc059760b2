/*
 * test_runtime_model.c - ib_model: loading from a file and from memory,
 * runtime inputs and outputs (initializers are not inputs; symbolic dims
 * are dynamic), statistics against hand-computed figures (parameters,
 * FLOPs at batch 1; unknown when another dim is symbolic), the op
 * histogram, and bad input (missing file, corrupt and truncated bytes).
 */
#include <math.h>
#include <string.h>

#include "onnx/build.h"
#include "runtime/model.h"
#include "test.h"
#include "test_runtime_helpers.h"

static ib_model *load_built(ib_build *b, bool from_file)
{
    ib_err err;
    ib_model *m;
    if (from_file) {
        ASSERT_OK_ERR(ib_build_write_file(b, "m.onnx", NULL, &err), &err);
        ib_build_destroy(b);
        ASSERT_OK_ERR(ib_model_load_file("m.onnx", NULL, &m, &err), &err);
    } else {
        void *bytes;
        size_t n;
        ASSERT_OK_ERR(ib_build_write(b, NULL, &bytes, &n, &err), &err);
        ib_build_destroy(b);
        ASSERT_OK_ERR(ib_model_load_memory(bytes, n, NULL, &m, &err), &err);
        ib_free(bytes);
    }
    return m;
}

typedef struct hist {
    char ops[32][32];
    uint64_t n[32];
    int k;
} hist;

static void hist_cb(void *user, const char *op, uint64_t count)
{
    hist *h = user;
    snprintf(h->ops[h->k], sizeof h->ops[0], "%s", op);
    h->n[h->k++] = count;
}

static uint64_t hist_get(const hist *h, const char *op)
{
    for (int i = 0; i < h->k; i++)
        if (!strcmp(h->ops[i], op)) return h->n[i];
    return 0;
}

TEST(runtime_model_tiny_resnet_io_stats_histogram)
{
    for (int from_file = 0; from_file < 2; from_file++) {
        ib_model *m = load_built(th_build_tiny_resnet(7), from_file);
        ASSERT_UINT_EQ(ib_model_input_count(m), 1); /* initializers are not inputs */
        ASSERT_UINT_EQ(ib_model_output_count(m), 1);
        const char *name;
        ib_tensor_desc d;
        ASSERT_OK(ib_model_input(m, 0, &name, &d));
        ASSERT_STR_EQ(name, "image");
        ASSERT_INT_EQ(d.dtype, IB_DTYPE_FLOAT32);
        ASSERT_INT_EQ(d.ndim, 4);
        ASSERT_INT_EQ(d.dims[0], IB_DIM_DYNAMIC);
        ASSERT_INT_EQ(d.dims[1], 3);
        ASSERT_OK(ib_model_output(m, 0, &name, &d));
        ASSERT_STR_EQ(name, "logits");
        ASSERT_STATUS(ib_model_input(m, 1, &name, &d), IB_EINVAL);
        ASSERT_STATUS(ib_model_output(m, 5, &name, &d), IB_EINVAL);

        ib_model_stats st;
        ASSERT_OK(ib_model_get_stats(m, &st));
        ASSERT_UINT_EQ(st.node_count, 23);
        /* convs 216 + 576 + 576 + 1152 + 2304 + 128, BN 4 x (8+8+8+16+16+16), fc 160 + 10 */
        ASSERT_UINT_EQ(st.param_count, 5410);
        ASSERT_UINT_EQ(st.param_bytes, 5410 * 4);
        /* 2 x MACs: convs 110592 + 2 x 73728 + 36864 + 73728 + 4096, Gemm 320 */
        ASSERT_DBL_EQ(st.flops, 373056.0);
        ASSERT_INT_EQ(st.opset, 17);

        hist h = {.k = 0};
        ib_model_op_histogram(m, hist_cb, &h);
        ASSERT_UINT_EQ(hist_get(&h, "Conv"), 6);
        ASSERT_UINT_EQ(hist_get(&h, "BatchNormalization"), 6);
        ASSERT_UINT_EQ(hist_get(&h, "Relu"), 5);
        ASSERT_UINT_EQ(hist_get(&h, "Add"), 2);
        ASSERT_UINT_EQ(hist_get(&h, "Gemm"), 1);
        ASSERT_UINT_EQ(hist_get(&h, "MaxPool"), 1);
        ASSERT_INT_EQ(h.k, 8);           /* + GlobalAveragePool, Flatten */
        ASSERT_STR_EQ(h.ops[0], "Conv"); /* first-appearance order */
        ib_model_destroy(m);
    }
}

TEST(runtime_model_flops_unknown_with_symbolic_seq)
{
    ib_model *m = load_built(th_build_tiny_bert(3), false);
    ASSERT_UINT_EQ(ib_model_input_count(m), 2);
    ib_model_stats st;
    ASSERT_OK(ib_model_get_stats(m, &st));
    ASSERT_TRUE(isnan(st.flops)); /* seq is symbolic: no silent guess */
    ASSERT_TRUE(st.param_count > 800);
    ib_model_destroy(m);

    /* the same layer with a fixed seq has a FLOPs figure: 6 linears of
     * 16x16 or 16x32 per token, two attention matmuls */
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "batch,5,16");
    ib_value_id y = ib_build_linear(b, x, 16, 32, true);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "batch,5,32");
    m = load_built(b, false);
    ASSERT_OK(ib_model_get_stats(m, &st));
    ASSERT_DBL_EQ(st.flops, 2.0 * 5 * 16 * 32);
    ib_model_destroy(m);
}

TEST(runtime_model_bad_input)
{
    ib_model *m = NULL;
    ib_err err;
    int rc = ib_model_load_file("does-not-exist.onnx", NULL, &m, &err);
    ASSERT_TRUE(rc == IB_ENOTFOUND || rc == IB_EIO);
    ASSERT_STR_CONTAINS(err.msg, "does-not-exist.onnx");
    ASSERT_NULL(m);
    ASSERT_STATUS(ib_model_load_file(NULL, NULL, &m, &err), IB_EINVAL);
    ASSERT_STATUS(ib_model_load_memory(NULL, 10, NULL, &m, &err), IB_EINVAL);
    /* garbage and truncated bytes: a clear error, never a crash */
    static const unsigned char junk[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02};
    rc = ib_model_load_memory(junk, sizeof junk, NULL, &m, &err);
    ASSERT_TRUE(rc == IB_EFORMAT || rc == IB_EUNSUPPORTED);
    ASSERT_TRUE(err.msg[0] != 0);
    ib_build *b = th_build_tiny_resnet(1);
    void *bytes;
    size_t n;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &bytes, &n, &err), &err);
    ib_build_destroy(b);
    for (size_t cut = 1; cut < n; cut += n / 37 + 1) {
        rc = ib_model_load_memory(bytes, cut, NULL, &m, &err);
        if (rc == IB_OK) { /* a prefix can be a valid smaller message; it must still be usable */
            ib_model_stats st;
            ASSERT_OK(ib_model_get_stats(m, &st));
            ib_model_destroy(m);
        } else {
            ASSERT_TRUE(err.msg[0] != 0);
            ASSERT_NULL(m);
        }
    }
    ib_free(bytes);
    /* NULL handles are harmless */
    ib_model_destroy(NULL);
    ASSERT_UINT_EQ(ib_model_input_count(NULL), 0);
    ASSERT_STATUS(ib_model_get_stats(NULL, NULL), IB_EINVAL);
}
