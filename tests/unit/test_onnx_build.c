/*
 * test_onnx_build.c - the graph builder (src/onnx/build.h): a tiny
 * ResNet-style model built in a few lines, written and loaded back equal;
 * deterministic seeded weights (same seed same bytes, values tied to tensor
 * names); fill statistics per kind and dtype; the shape and attribute string
 * languages and their errors; sticky errors.
 */
#include <math.h>
#include <string.h>

#include "onnx/build.h"
#include "test.h"

/* conv-bn-relu, the ResNet unit */
static ib_value_id cbr(ib_build *b, ib_value_id x, int64_t cin, int64_t cout, int64_t k, int64_t s,
                       bool relu)
{
    x = ib_build_conv2d(b, x, cin, cout, k, s, k / 2, 1, false);
    x = ib_build_batchnorm(b, x, cout, 1e-5);
    return relu ? IB_BUILD_OP(b, "Relu", "", x) : x;
}

/* A ResNet basic block: two 3x3 convs plus the (projected) shortcut. */
static ib_value_id basic_block(ib_build *b, ib_value_id x, int64_t cin, int64_t cout, int64_t s)
{
    ib_value_id y = cbr(b, cbr(b, x, cin, cout, 3, s, true), cout, cout, 3, 1, false);
    ib_value_id sc = cin == cout && s == 1 ? x : cbr(b, x, cin, cout, 1, s, false);
    return IB_BUILD_OP(b, "Relu", "", IB_BUILD_OP(b, "Add", "", y, sc));
}

static ib_build *tiny_resnet(uint64_t seed)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(seed, 17, &b));
    ib_value_id x = ib_build_input(b, "image", IB_DTYPE_FLOAT32, "batch,3,32,32");
    x = cbr(b, x, 3, 16, 3, 1, true);
    ib_build_set_prefix(b, "layer1.");
    x = basic_block(b, x, 16, 16, 1);
    ib_build_set_prefix(b, "layer2.");
    x = basic_block(b, x, 16, 32, 2);
    ib_build_set_prefix(b, NULL);
    x = IB_BUILD_OP(b, "GlobalAveragePool", "", x);
    x = IB_BUILD_OP(b, "Flatten", "axis=1", x);
    x = ib_build_linear(b, x, 32, 10, true);
    ib_build_output(b, x, "logits", IB_DTYPE_FLOAT32, "batch,10");
    return b;
}

static size_t count_op(const ib_graph *g, const char *op)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nodes.len; i++)
        n += strcmp(g->nodes.data[i].op_type, op) == 0;
    return n;
}

TEST(onnx_build_resnet_roundtrip)
{
    ib_build *b = tiny_resnet(42);
    ib_err err;
    ASSERT_OK_ERR(ib_build_write_file(b, "tiny_resnet.onnx", NULL, &err), &err);
    ib_graph *built, *loaded;
    ASSERT_OK_ERR(ib_build_finish(b, &built, &err), &err);
    ib_build_destroy(b);
    ASSERT_OK_ERR(ib_onnx_load_graph_file("tiny_resnet.onnx", NULL, &loaded, &err), &err);
    ASSERT_OK_ERR(ib_onnx_graph_compare(built, loaded, &err), &err);

    /* 1 stem + 2 + 2 + 1 projection convs, each with a BatchNormalization */
    ASSERT_UINT_EQ(count_op(loaded, "Conv"), 6);
    ASSERT_UINT_EQ(count_op(loaded, "BatchNormalization"), 6);
    ASSERT_UINT_EQ(count_op(loaded, "Add"), 3); /* 2 residuals + the linear bias */
    ASSERT_UINT_EQ(loaded->inputs.len, 1);
    const ib_value *in = &loaded->values.data[loaded->inputs.data[0]];
    ASSERT_STR_EQ(in->name, "image");
    ASSERT_INT_EQ(in->desc.dims[0], IB_DIM_DYNAMIC);
    ASSERT_STR_EQ(in->dim_param[0], "batch");
    ASSERT_INT_EQ(in->desc.dims[1], 3);
    const ib_value *out = &loaded->values.data[loaded->outputs.data[0]];
    ASSERT_STR_EQ(out->name, "logits");
    ASSERT_INT_EQ(out->desc.dims[1], 10);
    ASSERT_INT_NE(ib_graph_find_value(loaded, "Conv_0.weight"), IB_VALUE_NONE); /* the stem */
    ASSERT_INT_NE(ib_graph_find_value(loaded, "BatchNormalization_1.var"), IB_VALUE_NONE);
    /* the projection conv weight of layer2 is [32, 16, 1, 1] */
    bool found_proj = false;
    for (size_t i = 0; i < loaded->values.len; i++) {
        const ib_value *v = &loaded->values.data[i];
        if (v->constant && v->desc.ndim == 4 && v->desc.dims[2] == 1 && v->desc.dims[1] == 16)
            found_proj = strncmp(v->name, "layer2.", 7) == 0;
    }
    ASSERT_TRUE(found_proj);
    /* Conv attributes came through the attribute string */
    const ib_node *conv = NULL;
    for (size_t i = 0; i < loaded->nodes.len && !conv; i++)
        if (strcmp(loaded->nodes.data[i].op_type, "Conv") == 0) conv = &loaded->nodes.data[i];
    const int64_t *ks;
    ASSERT_UINT_EQ(ib_node_attr_ints(conv, "kernel_shape", &ks), 2);
    ASSERT_INT_EQ(ks[0], 3);
    ASSERT_UINT_EQ(ib_node_attr_ints(conv, "pads", &ks), 4);
    ASSERT_INT_EQ(ib_node_attr_int(conv, "group", 0), 1);
    ib_graph_destroy(built);
    ib_graph_destroy(loaded);
}

TEST(onnx_build_weights_are_deterministic)
{
    void *a, *b2, *c;
    size_t na, nb, nc;
    ib_err err;
    ib_build *b = tiny_resnet(7);
    ASSERT_OK_ERR(ib_build_write(b, NULL, &a, &na, &err), &err);
    ib_build_destroy(b);
    b = tiny_resnet(7);
    ASSERT_OK_ERR(ib_build_write(b, NULL, &b2, &nb, &err), &err);
    ib_build_destroy(b);
    b = tiny_resnet(8);
    ASSERT_OK_ERR(ib_build_write(b, NULL, &c, &nc, &err), &err);
    ib_build_destroy(b);
    ASSERT_UINT_EQ(na, nb);
    ASSERT_MEM_EQ(a, b2, na);
    ASSERT_UINT_EQ(na, nc);
    ASSERT_TRUE(memcmp(a, c, na) != 0);
    ib_free(a);
    ib_free(b2);
    ib_free(c);

    /* a weight's values depend on (seed, name) only, not on what came before */
    ib_build *p, *q;
    ASSERT_OK(ib_build_create(1, 17, &p));
    ASSERT_OK(ib_build_create(1, 17, &q));
    ib_build_weight(q, "other", IB_DTYPE_FLOAT32, "100", ib_fill_normal(0, 1));
    ib_value_id vp = ib_build_weight(p, "w", IB_DTYPE_FLOAT32, "8,8", ib_fill_he());
    ib_value_id vq = ib_build_weight(q, "w", IB_DTYPE_FLOAT32, "8,8", ib_fill_he());
    const ib_tensor *tp = ib_build_graph(p)->values.data[vp].constant;
    const ib_tensor *tq = ib_build_graph(q)->values.data[vq].constant;
    ASSERT_MEM_EQ(tp->data, tq->data, 64 * sizeof(float));
    /* the same fill under another name differs */
    ib_value_id v2 = ib_build_weight(p, "w2", IB_DTYPE_FLOAT32, "8,8", ib_fill_he());
    ASSERT_TRUE(memcmp(ib_build_graph(p)->values.data[v2].constant->data, tp->data, 256) != 0);
    ib_build_destroy(p);
    ib_build_destroy(q);
}

static const ib_tensor *weight(ib_build *b, const char *name, enum ib_dtype dt, const char *shape,
                               ib_fill f)
{
    ib_value_id v = ib_build_weight(b, name, dt, shape, f);
    ib_err err;
    ASSERT_OK_ERR(ib_build_error(b, &err), &err);
    return ib_build_graph(b)->values.data[v].constant;
}

static void moments(const float *x, size_t n, double *mean, double *std, float *lo, float *hi)
{
    double s = 0, s2 = 0;
    *lo = *hi = x[0];
    for (size_t i = 0; i < n; i++) {
        s += (double)x[i];
        s2 += (double)x[i] * (double)x[i];
        *lo = fminf(*lo, x[i]);
        *hi = fmaxf(*hi, x[i]);
    }
    *mean = s / (double)n;
    *std = sqrt(s2 / (double)n - *mean * *mean);
}

TEST(onnx_build_fill_statistics)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 17, &b));
    double mean, std;
    float lo, hi;
    /* He: std sqrt(2 / (64*3*3)) for a [128, 64, 3, 3] conv weight */
    const ib_tensor *t = weight(b, "he", IB_DTYPE_FLOAT32, "128,64,3,3", ib_fill_he());
    size_t n = 128 * 64 * 9;
    moments(t->data, n, &mean, &std, &lo, &hi);
    double want = sqrt(2.0 / 576.0);
    ASSERT_NEAR(mean, 0, 0.02 * want);
    ASSERT_NEAR(std, want, 0.02 * want);
    ASSERT_DBL_LE(hi, 3.47 * want); /* Irwin-Hall n=4 is bounded at sqrt(12) sigma */
    ASSERT_DBL_GE(hi, 2.5 * want);
    /* Xavier: uniform +-sqrt(6 / (256 + 512)) for a [256, 512] MatMul weight */
    t = weight(b, "xavier", IB_DTYPE_FLOAT32, "256,512", ib_fill_xavier());
    moments(t->data, 256 * 512, &mean, &std, &lo, &hi);
    double lim = sqrt(6.0 / 768.0);
    ASSERT_DBL_GE(lo, -lim);
    ASSERT_DBL_LE(hi, lim);
    ASSERT_NEAR(std, lim / sqrt(3.0), 0.01 * lim);
    /* normal(5, 2) */
    t = weight(b, "normal", IB_DTYPE_FLOAT32, "100000", ib_fill_normal(5, 2));
    moments(t->data, 100000, &mean, &std, &lo, &hi);
    ASSERT_NEAR(mean, 5, 0.03);
    ASSERT_NEAR(std, 2, 0.03);
    /* integer uniform: inclusive bounds, every value drawn */
    t = weight(b, "ints", IB_DTYPE_INT64, "10000", ib_fill_uniform(-3, 3));
    int seen[7] = {0};
    for (size_t i = 0; i < 10000; i++) {
        int64_t v = ((const int64_t *)t->data)[i];
        ASSERT_TRUE(v >= -3 && v <= 3);
        seen[v + 3]++;
    }
    for (int i = 0; i < 7; i++)
        ASSERT_INT_GT(seen[i], 1000);
    t = weight(b, "u8", IB_DTYPE_UINT8, "1000", ib_fill_uniform(0, 255));
    bool hit_max = false;
    for (size_t i = 0; i < 1000; i++)
        hit_max |= ((const uint8_t *)t->data)[i] == 255;
    ASSERT_TRUE(hit_max);
    /* arange and const are exact; fp16/bf16 are the rounded float values */
    t = weight(b, "ar", IB_DTYPE_INT32, "2,3", ib_fill_arange(10, -2));
    ASSERT_INT_EQ(((const int32_t *)t->data)[5], 0);
    t = weight(b, "h", IB_DTYPE_FLOAT16, "4", ib_fill_arange(0.5, 0.25));
    ASSERT_UINT_EQ(((const uint16_t *)t->data)[3], ib_f32_to_f16(1.25f));
    t = weight(b, "bf", IB_DTYPE_BFLOAT16, "3", ib_fill_const(-3.0));
    ASSERT_UINT_EQ(((const uint16_t *)t->data)[2], ib_f32_to_bf16(-3.0f));
    const ib_tensor *h16 = weight(b, "hn", IB_DTYPE_FLOAT16, "64", ib_fill_normal(0, 1));
    const ib_tensor *f32 = weight(b, "hn_f32", IB_DTYPE_FLOAT32, "64", ib_fill_normal(0, 1));
    ASSERT_TRUE(memcmp(h16->data, f32->data, 64) != 0); /* different names, different draws */
    t = weight(b, "flag", IB_DTYPE_BOOL, "5", ib_fill_arange(0, 1));
    ASSERT_INT_EQ(((const uint8_t *)t->data)[0], 0);
    ASSERT_INT_EQ(((const uint8_t *)t->data)[4], 1);
    /* He on an integer dtype is a clear error */
    ib_build_weight(b, "bad", IB_DTYPE_INT8, "4", ib_fill_he());
    ib_err err;
    ASSERT_STATUS(ib_build_error(b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "floating-point");
    ib_build_destroy(b);
}

TEST(onnx_build_attribute_and_shape_strings)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(0, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N, ?, 7");
    ib_value_id y = IB_BUILD_OP(b, "Custom",
                                "i=-3 f=2.5 e=1e-5 s='nearest' d=\"a b\" is=[1, 2,3] fs=[1,0.5] "
                                "ss=['x','yz'] empty=[] big=9223372036854775807",
                                x);
    ib_build_output(b, y, "y", IB_DTYPE_UNDEFINED, NULL);
    ib_err err;
    ASSERT_OK_ERR(ib_build_error(b, &err), &err);
    const ib_graph *g = ib_build_graph(b);
    const ib_value *xv = &g->values.data[x];
    ASSERT_INT_EQ(xv->desc.ndim, 3);
    ASSERT_STR_EQ(xv->dim_param[0], "N");
    ASSERT_NULL(xv->dim_param[1]);
    ASSERT_INT_EQ(xv->desc.dims[1], IB_DIM_DYNAMIC);
    ASSERT_INT_EQ(xv->desc.dims[2], 7);
    const ib_node *n = &g->nodes.data[0];
    ASSERT_INT_EQ(ib_node_attr(n, "i")->type, IB_ATTR_INT);
    ASSERT_INT_EQ(ib_node_attr_int(n, "i", 0), -3);
    ASSERT_TRUE(ib_node_attr_float(n, "f", 0) == 2.5f);
    ASSERT_TRUE(ib_node_attr_float(n, "e", 0) == 1e-5f);
    ASSERT_STR_EQ(ib_node_attr_string(n, "s", ""), "nearest");
    ASSERT_STR_EQ(ib_node_attr_string(n, "d", ""), "a b");
    const int64_t *is;
    ASSERT_UINT_EQ(ib_node_attr_ints(n, "is", &is), 3);
    ASSERT_INT_EQ(is[2], 3);
    const ib_attr *fs = ib_node_attr(n, "fs");
    ASSERT_INT_EQ(fs->type, IB_ATTR_FLOATS);
    ASSERT_TRUE(fs->floats[0] == 1.0f && fs->floats[1] == 0.5f);
    const ib_attr *ss = ib_node_attr(n, "ss");
    ASSERT_INT_EQ(ss->type, IB_ATTR_STRINGS);
    ASSERT_STR_EQ(ss->strings[1], "yz");
    ASSERT_INT_EQ(ib_node_attr(n, "empty")->type, IB_ATTR_INTS);
    ASSERT_UINT_EQ(ib_node_attr(n, "empty")->count, 0);
    ASSERT_INT_EQ(ib_node_attr_int(n, "big", 0), INT64_MAX);
    /* the attributes survive a round trip */
    void *buf;
    size_t len;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &buf, &len, &err), &err);
    ib_graph *back;
    ASSERT_OK_ERR(ib_onnx_load_graph(buf, len, NULL, NULL, &back, &err), &err);
    ASSERT_OK_ERR(ib_onnx_graph_compare(g, back, &err), &err);
    ASSERT_INT_EQ(back->opset, 13);
    ASSERT_INT_EQ(back->ir_version, 7);
    ib_graph_destroy(back);
    ib_free(buf);
    ib_build_destroy(b);

    static const char *const bad_attrs[] = {
        "alpha=1.0.0", "x=[1,'a']", "=3",  "a=1 a=2", "s='open",
        "k=[1,2",      "k=",        "k 3", "k=abc",   "k=99999999999999999999"};
    for (size_t i = 0; i < IB_ARRAY_LEN(bad_attrs); i++) {
        ASSERT_OK(ib_build_create(0, 17, &b));
        ib_value_id in = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "1");
        ib_build_op(b, "Relu", &in, 1, "%s", bad_attrs[i]);
        ASSERT_STATUS(ib_build_error(b, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "column");
        ib_build_destroy(b);
    }
    static const char *const bad_shapes[] = {"1,,2", "1;2", "-1", "1,2,3,4,5,6,7,8,9",
                                             "99999999999999999999"};
    for (size_t i = 0; i < IB_ARRAY_LEN(bad_shapes); i++) {
        ASSERT_OK(ib_build_create(0, 17, &b));
        ASSERT_INT_EQ(ib_build_input(b, "x", IB_DTYPE_FLOAT32, bad_shapes[i]), IB_VALUE_NONE);
        ASSERT_STATUS(ib_build_error(b, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "shape");
        ib_build_destroy(b);
    }
}

TEST(onnx_build_errors_are_sticky)
{
    ib_build *b;
    ib_err err;
    ASSERT_STATUS(ib_build_create(0, 6, &b), IB_EINVAL);
    ASSERT_STATUS(ib_build_create(0, 18, &b), IB_EINVAL);
    ASSERT_OK(ib_build_create(0, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2");
    ASSERT_INT_EQ(ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2"), IB_VALUE_NONE); /* duplicate */
    /* later calls do nothing and the first error is kept */
    ASSERT_INT_EQ(IB_BUILD_OP(b, "Relu", "", x), IB_VALUE_NONE);
    ASSERT_INT_EQ(ib_build_weight(b, "w", IB_DTYPE_FLOAT32, "bad shape", ib_fill_he()),
                  IB_VALUE_NONE);
    ib_graph *g;
    ASSERT_STATUS(ib_build_finish(b, &g, &err), IB_EINVAL);
    ASSERT_NULL(g);
    ASSERT_STR_CONTAINS(err.msg, "'x' is already used");
    ASSERT_INT_EQ(ib_build_graph(b)->nodes.len, 0);
    ib_build_destroy(b);

    /* no outputs; weights need fixed dims; unknown inputs */
    ASSERT_OK(ib_build_create(0, 17, &b));
    x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2");
    IB_BUILD_OP(b, "Relu", "", x);
    ASSERT_STATUS(ib_build_finish(b, &g, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "no outputs");
    ib_build_destroy(b);
    ASSERT_OK(ib_build_create(0, 17, &b));
    ib_build_weight(b, "w", IB_DTYPE_FLOAT32, "batch,3", ib_fill_he());
    ASSERT_STATUS(ib_build_error(b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "fixed dims");
    ib_build_destroy(b);
    ASSERT_OK(ib_build_create(0, 17, &b));
    ib_value_id bogus = 12345;
    ib_build_op(b, "Relu", &bogus, 1, NULL);
    ASSERT_STATUS(ib_build_error(b, &err), IB_EINVAL);
    ib_build_destroy(b);
    /* a cycle made through the graph handle is caught when sorting */
    ASSERT_OK(ib_build_create(0, 17, &b));
    x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2");
    ib_value_id y = IB_BUILD_OP(b, "Add", "", x, x);
    ib_value_id z = IB_BUILD_OP(b, "Relu", "", y);
    ib_build_graph(b)->nodes.data[0].inputs[1] = z;
    ib_build_output(b, z, "z", IB_DTYPE_FLOAT32, "2");
    void *buf;
    size_t len;
    ASSERT_STATUS(ib_build_write(b, NULL, &buf, &len, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "cycle");
    ib_build_destroy(b);
}
