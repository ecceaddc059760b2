/*
 * test_onnx_tensor.c - tensor data through ONNX: external data files (write
 * with a threshold, load beside the model, missing/short files, bad
 * locations, lengths and offsets), float16/bfloat16 bit patterns, every
 * dtype in its typed field, STRING tensors, and the single-TensorProto .pb
 * reader/writer in its internal and public forms.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "inferbench/onnx.h"
#include "test_onnx_util.h"

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* A model whose weights are 64 KiB + 4 KiB + 12 bytes. */
static ib_build *weighty(void)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(5, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "batch,128");
    ib_value_id w1 = ib_build_weight(b, "w1", IB_DTYPE_FLOAT32, "128,128", ib_fill_he());
    ib_value_id w2 = ib_build_weight(b, "w2", IB_DTYPE_FLOAT16, "128,16", ib_fill_he());
    ib_value_id s = ib_build_weight(b, "small", IB_DTYPE_FLOAT32, "3", ib_fill_const(2));
    ib_value_id y = IB_BUILD_OP(b, "MatMul", "", x, w1);
    y = IB_BUILD_OP(b, "Cast", "to=10", y);
    y = IB_BUILD_OP(b, "MatMul", "", y, w2);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT16, "batch,16");
    ib_build_output(b, s, NULL, IB_DTYPE_FLOAT32, "3");
    return b;
}

TEST(onnx_external_data_roundtrip)
{
    ib_build *b = weighty();
    ib_onnx_write_opts wo;
    ib_onnx_write_opts_defaults(&wo);
    wo.external_threshold = 1024;
    ib_err err;
    ASSERT_OK(ib_mkdirs("models", &err));
    ASSERT_OK_ERR(ib_build_write_file(b, "models/w.onnx", &wo, &err), &err);
    ib_graph *built, *loaded;
    ASSERT_OK_ERR(ib_build_finish(b, &built, &err), &err);
    ib_build_destroy(b);
    /* w1 (64 KiB) and w2 (4 KiB) went out, 4 KiB-aligned; the 12-byte one stayed */
    ASSERT_INT_EQ(file_size("models/w.onnx.data"), 65536 + 4096);
    ASSERT_INT_LT(file_size("models/w.onnx"), 2048);
    ASSERT_OK_ERR(ib_onnx_load_graph_file("models/w.onnx", NULL, &loaded, &err), &err);
    ASSERT_OK_ERR(ib_onnx_graph_compare(built, loaded, &err), &err);
    ib_graph_destroy(loaded);
    /* from another working directory: relative to the model, not the CWD */
    ASSERT_INT_EQ(chdir("models"), 0);
    ASSERT_OK_ERR(ib_onnx_load_graph_file("w.onnx", NULL, &loaded, &err), &err);
    ib_graph_destroy(loaded);
    ASSERT_INT_EQ(chdir(".."), 0);

    /* from memory: needs the folder */
    char *bytes;
    size_t len;
    ASSERT_OK(ib_file_read_all("models/w.onnx", 0, &bytes, &len, &err));
    ASSERT_STATUS(ib_onnx_load_graph(bytes, len, NULL, NULL, &loaded, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "initializer 'w1': external data 'w.onnx.data' but no folder");
    ASSERT_OK_ERR(ib_onnx_load_graph(bytes, len, "models", NULL, &loaded, &err), &err);
    ib_graph_destroy(loaded);
    ib_onnx_load_opts lo;
    ib_onnx_load_opts_defaults(&lo);
    lo.external_data_dir = "models";
    ASSERT_OK_ERR(ib_onnx_load_graph(bytes, len, "/nonexistent", &lo, &loaded, &err), &err);
    ib_graph_destroy(loaded);
    /* a tensor over max_bytes is refused before anything is read */
    lo.max_bytes = 60000;
    lo.external_data_dir = NULL;
    ASSERT_STATUS(ib_onnx_load_graph(bytes, len, "models", &lo, &loaded, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "initializer 'w1': float32[128,128] is 65536 bytes, over the "
                                 "60000-byte limit");

    /* the data file too short, then missing */
    ASSERT_INT_EQ(truncate("models/w.onnx.data", 65536 + 100), 0);
    ASSERT_STATUS(ib_onnx_load_graph_file("models/w.onnx", NULL, &loaded, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "initializer 'w2': external file 'models/w.onnx.data' has 65636 "
                                 "bytes, too short for 4096 bytes at offset 65536");
    ASSERT_INT_EQ(unlink("models/w.onnx.data"), 0);
    ASSERT_STATUS(ib_onnx_load_graph_file("models/w.onnx", NULL, &loaded, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "models/w.onnx: initializer 'w1': cannot open external data "
                                 "file 'models/w.onnx.data'");
    ib_free(bytes);
    ib_graph_destroy(built);
}

/* Load models/w.onnx after changing one external_data value of w1. */
static void ext_case(const char *key, const char *value, int code, const char *needle)
{
    char *bytes;
    size_t len;
    ib_err err;
    ASSERT_OK(ib_file_read_all("models/w.onnx", 0, &bytes, &len, &err));
    Onnx__ModelProto *m = unpack_model(bytes, len);
    ib_free(bytes);
    Onnx__TensorProto *t = m->graph->initializer[0];
    ASSERT_STR_EQ(t->name, "w1");
    for (size_t i = 0; i < t->n_external_data; i++)
        if (strcmp(t->external_data[i]->key, key) == 0) SET_STR(t->external_data[i]->value, value);
    int rc = pack_and_load(m, "models", NULL, NULL, &err);
    if (rc != code || !strstr(err.msg, needle))
        ib_test_fail(__FILE__, __LINE__, "%s=%s: expected %s \"%s\", got %s: %s", key, value,
                     ib_err_name(code), needle, ib_err_name(rc), err.msg);
}

TEST(onnx_external_data_rejects_bad_fields)
{
    ib_build *b = weighty();
    ib_onnx_write_opts wo;
    ib_onnx_write_opts_defaults(&wo);
    wo.external_threshold = 1;
    wo.external_file = "weights.bin";
    ib_err err;
    ASSERT_OK(ib_mkdirs("models", &err));
    ASSERT_OK_ERR(ib_build_write_file(b, "models/w.onnx", &wo, &err), &err);
    ib_build_destroy(b);
    ASSERT_INT_GT(file_size("models/weights.bin"), 65536 + 4096);
    ext_case("location", "weights.bin", IB_OK, "");
    ext_case("location", "../weights.bin", IB_EFORMAT, "must be a relative path inside");
    ext_case("location", "/etc/passwd", IB_EFORMAT, "must be a relative path inside");
    ext_case("location", "sub/../../x", IB_EFORMAT, "must be a relative path inside");
    ext_case("location", "nothere.bin", IB_ENOTFOUND, "cannot open external data file");
    ext_case("length", "65535", IB_EFORMAT,
             "external data length 65535 does not match "
             "float32[128,128] (65536 bytes)");
    ext_case("length", "12x", IB_EFORMAT, "length '12x' is not a number");
    ext_case("offset", "-1", IB_EFORMAT, "offset '-1' is not a number");
    ext_case("offset", "99999999999999999999999", IB_EFORMAT, "is not a number");
    ext_case("offset", "18446744073709551615", IB_EFORMAT, "too short");
    ext_case("offset", "8192", IB_EFORMAT, "too short"); /* runs past the file end */
    ext_case("location", "", IB_EFORMAT, "must be a relative path");
    /* an external writer refuses paths outside the folder */
    ASSERT_OK(ib_build_create(0, 17, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "1");
    ib_build_output(b, IB_BUILD_OP(b, "Relu", "", x), "y", IB_DTYPE_FLOAT32, "1");
    wo.external_file = "../up.bin";
    ASSERT_STATUS(ib_build_write_file(b, "models/x.onnx", &wo, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "relative path inside");
    ASSERT_INT_EQ(file_size("models/x.onnx"), -1);
    ib_build_destroy(b);
}

/* ---- dtypes --------------------------------------------------------------------- */

TEST(onnx_float16_bfloat16_bits_survive)
{
    static const uint16_t bits[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00,
                                    0x7e01, 0x0001, 0x03ff, 0x7bff, 0x1234, 0xffff};
    size_t n = IB_ARRAY_LEN(bits);
    char shape[16];
    snprintf(shape, sizeof shape, "%zu", n);
    for (int pass = 0; pass < 2; pass++) {
        enum ib_dtype dt = pass ? IB_DTYPE_BFLOAT16 : IB_DTYPE_FLOAT16;
        ib_build *b;
        ASSERT_OK(ib_build_create(0, 17, &b));
        ib_value_id w = ib_build_weight(b, "h", dt, shape, ib_fill_zeros());
        ib_tensor *t = ib_build_graph(b)->values.data[w].constant;
        memcpy(t->data, bits, sizeof bits);
        ib_build_output(b, w, NULL, dt, shape);
        void *buf;
        size_t len;
        ib_err err;
        ASSERT_OK_ERR(ib_build_write(b, NULL, &buf, &len, &err), &err);
        ib_build_destroy(b);
        /* raw_data as written */
        ib_graph *g;
        ASSERT_OK_ERR(ib_onnx_load_graph(buf, len, NULL, NULL, &g, &err), &err);
        const ib_tensor *lt = g->values.data[ib_graph_find_value(g, "h")].constant;
        ASSERT_INT_EQ(lt->desc.dtype, dt);
        ASSERT_MEM_EQ(lt->data, bits, sizeof bits);
        ib_graph_destroy(g);
        /* the same bits carried in int32_data (one uint16 per int32) */
        Onnx__ModelProto *m = unpack_model(buf, len);
        Onnx__TensorProto *tp = m->graph->initializer[0];
        free(tp->raw_data.data);
        tp->raw_data.data = NULL;
        tp->raw_data.len = 0;
        tp->has_raw_data = 0;
        tp->int32_data = malloc(n * sizeof(int32_t));
        for (size_t i = 0; i < n; i++)
            tp->int32_data[i] = bits[i];
        tp->n_int32_data = n;
        ASSERT_OK_ERR(pack_and_load(m, NULL, NULL, &g, &err), &err);
        lt = g->values.data[ib_graph_find_value(g, "h")].constant;
        ASSERT_MEM_EQ(lt->data, bits, sizeof bits);
        ib_graph_destroy(g);
        /* a value past 16 bits is an error, not a silent truncation */
        m = unpack_model(buf, len);
        tp = m->graph->initializer[0];
        free(tp->raw_data.data);
        tp->raw_data.data = NULL;
        tp->raw_data.len = 0;
        tp->int32_data = calloc(n, sizeof(int32_t));
        tp->int32_data[3] = 65536;
        tp->n_int32_data = n;
        ASSERT_STATUS(pack_and_load(m, NULL, NULL, &g, &err), IB_EFORMAT);
        ASSERT_STR_CONTAINS(err.msg, "int32_data[3] = 65536 is out of range for");
        ib_free(buf);
    }
}

/* One initializer "t" of dtype dt whose data is set by the caller's typed field. */
static Onnx__ModelProto *typed_model(enum ib_dtype dt, size_t n, Onnx__TensorProto **tp)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(0, 17, &b));
    char shape[16];
    snprintf(shape, sizeof shape, "%zu", n);
    ib_value_id w = ib_build_weight(b, "t", IB_DTYPE_INT8, shape, ib_fill_zeros());
    ib_build_output(b, w, NULL, IB_DTYPE_UNDEFINED, NULL);
    void *buf;
    size_t len;
    ib_err err;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &buf, &len, &err), &err);
    ib_build_destroy(b);
    Onnx__ModelProto *m = unpack_model(buf, len);
    ib_free(buf);
    *tp = m->graph->initializer[0];
    (*tp)->data_type = (int32_t)dt;
    free((*tp)->raw_data.data);
    (*tp)->raw_data.data = NULL;
    (*tp)->raw_data.len = 0;
    (*tp)->has_raw_data = 0;
    return m;
}

static const ib_tensor *load_t(Onnx__ModelProto *m, ib_graph **g)
{
    ib_err err;
    ASSERT_OK_ERR(pack_and_load(m, NULL, NULL, g, &err), &err);
    return (*g)->values.data[ib_graph_find_value(*g, "t")].constant;
}

TEST(onnx_typed_fields_every_dtype)
{
    Onnx__TensorProto *tp;
    ib_graph *g;
    const ib_tensor *t;
    /* int32_data carries int8/uint8/int16/uint16/int32/bool */
    static const struct {
        enum ib_dtype dt;
        int32_t v[3];
        const char *bytes;
        size_t nb;
    } narrow[] = {
        {IB_DTYPE_INT8, {-128, 5, 127}, "\x80\x05\x7f", 3},
        {IB_DTYPE_UINT8, {0, 200, 255}, "\x00\xc8\xff", 3},
        {IB_DTYPE_INT16, {-32768, 1, 32767}, "\x00\x80\x01\x00\xff\x7f", 6},
        {IB_DTYPE_UINT16, {65535, 0, 258}, "\xff\xff\x00\x00\x02\x01", 6},
        {IB_DTYPE_INT32,
         {-1, 0, 2147483647},
         "\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\x7f",
         12},
        {IB_DTYPE_BOOL, {0, 1, 7}, "\x00\x01\x01", 3},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(narrow); i++) {
        Onnx__ModelProto *m = typed_model(narrow[i].dt, 3, &tp);
        tp->int32_data = malloc(3 * sizeof(int32_t));
        memcpy(tp->int32_data, narrow[i].v, sizeof narrow[i].v);
        tp->n_int32_data = 3;
        t = load_t(m, &g);
        ASSERT_INT_EQ(t->desc.dtype, narrow[i].dt);
        ASSERT_UINT_EQ(t->nbytes, narrow[i].nb);
        ASSERT_MEM_EQ(t->data, narrow[i].bytes, narrow[i].nb);
        ib_graph_destroy(g);
    }
    Onnx__ModelProto *m = typed_model(IB_DTYPE_INT64, 2, &tp);
    tp->int64_data = malloc(2 * sizeof(int64_t));
    tp->int64_data[0] = INT64_MIN, tp->int64_data[1] = 42;
    tp->n_int64_data = 2;
    t = load_t(m, &g);
    ASSERT_INT_EQ(((const int64_t *)t->data)[0], INT64_MIN);
    ASSERT_INT_EQ(((const int64_t *)t->data)[1], 42);
    ib_graph_destroy(g);
    m = typed_model(IB_DTYPE_FLOAT64, 2, &tp);
    tp->double_data = malloc(2 * sizeof(double));
    tp->double_data[0] = -0.1, tp->double_data[1] = 1e300;
    tp->n_double_data = 2;
    t = load_t(m, &g);
    ASSERT_TRUE(((const double *)t->data)[0] == -0.1 && ((const double *)t->data)[1] == 1e300);
    ib_graph_destroy(g);
    m = typed_model(IB_DTYPE_UINT64, 1, &tp);
    tp->uint64_data = malloc(sizeof(uint64_t));
    tp->uint64_data[0] = UINT64_MAX;
    tp->n_uint64_data = 1;
    t = load_t(m, &g);
    ASSERT_TRUE(((const uint64_t *)t->data)[0] == UINT64_MAX);
    ib_graph_destroy(g);
    m = typed_model(IB_DTYPE_UINT32, 2, &tp);
    tp->uint64_data = malloc(2 * sizeof(uint64_t));
    tp->uint64_data[0] = 4294967295u, tp->uint64_data[1] = 7;
    tp->n_uint64_data = 2;
    t = load_t(m, &g);
    ASSERT_UINT_EQ(((const uint32_t *)t->data)[0], 4294967295u);
    ASSERT_UINT_EQ(t->nbytes, 8);
    ib_graph_destroy(g);
    m = typed_model(IB_DTYPE_UINT32, 1, &tp);
    tp->uint64_data = malloc(sizeof(uint64_t));
    tp->uint64_data[0] = 4294967296ull;
    tp->n_uint64_data = 1;
    ib_err err;
    ASSERT_STATUS(pack_and_load(m, NULL, NULL, NULL, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "out of range for uint32");
    m = typed_model(IB_DTYPE_FLOAT32, 2, &tp);
    tp->float_data = malloc(2 * sizeof(float));
    tp->float_data[0] = -1.5f, tp->float_data[1] = INFINITY;
    tp->n_float_data = 2;
    t = load_t(m, &g);
    ASSERT_TRUE(((const float *)t->data)[0] == -1.5f && isinf(((const float *)t->data)[1]));
    ib_graph_destroy(g);

    /* STRING: string_data; written back and reloaded equal */
    m = typed_model(IB_DTYPE_STRING, 3, &tp);
    tp->string_data = malloc(3 * sizeof *tp->string_data);
    const char *words[3] = {"", "hello", "wörld"};
    for (int i = 0; i < 3; i++) {
        tp->string_data[i].len = strlen(words[i]);
        tp->string_data[i].data = (uint8_t *)xstrdup(words[i]);
    }
    tp->n_string_data = 3;
    t = load_t(m, &g);
    const char *const *sv = t->data;
    ASSERT_STR_EQ(sv[0], "");
    ASSERT_STR_EQ(sv[2], "wörld");
    void *buf;
    size_t len;
    ASSERT_OK_ERR(ib_onnx_write_graph(g, NULL, &buf, &len, &err), &err);
    ib_graph *g2;
    ASSERT_OK_ERR(ib_onnx_load_graph(buf, len, NULL, NULL, &g2, &err), &err);
    ASSERT_OK_ERR(ib_onnx_graph_compare(g, g2, &err), &err);
    ib_graph_destroy(g);
    ib_graph_destroy(g2);
    ib_free(buf);
    m = typed_model(IB_DTYPE_STRING, 2, &tp);
    tp->has_raw_data = 1;
    tp->raw_data.len = 2;
    tp->raw_data.data = (uint8_t *)xstrdup("ab");
    ASSERT_STATUS(pack_and_load(m, NULL, NULL, NULL, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "STRING tensors must use string_data");
}

/* ---- single TensorProto files ------------------------------------------------------ */

TEST(onnx_tensor_pb_roundtrip)
{
    ib_tensor_desc d = {IB_DTYPE_FLOAT16, 3, {2, 1, 3}};
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    uint16_t *h = t->data;
    for (int i = 0; i < 6; i++)
        h[i] = ib_f32_to_f16((float)i - 2.5f);
    ib_err err;
    ASSERT_OK_ERR(ib_onnx_tensor_save_file("t.pb", t, "input_0", &err), &err);
    ib_tensor *back;
    char *name;
    ASSERT_OK_ERR(ib_onnx_tensor_load_file("t.pb", &back, &name, &err), &err);
    ASSERT_STR_EQ(name, "input_0");
    ASSERT_TRUE(ib_tensor_desc_equal(&back->desc, &d));
    ASSERT_MEM_EQ(back->data, t->data, 12);
    ASSERT_INT_EQ((uintptr_t)back->data % 64, 0);
    ib_tensor_free(back);
    ib_free(name);

    /* public API: the same file as an ib_tensor_view */
    ib_tensor_view v;
    ASSERT_OK_ERR(ib_onnx_tensor_read_file("t.pb", &v, &err), &err);
    ASSERT_STR_EQ(v.name, "input_0");
    ASSERT_INT_EQ(v.desc.dtype, IB_DTYPE_FLOAT16);
    ASSERT_INT_EQ(v.desc.dims[2], 3);
    ASSERT_UINT_EQ(v.capacity, 12);
    ASSERT_MEM_EQ(v.data, t->data, 12);
    ASSERT_INT_EQ((uintptr_t)v.data % 64, 0);
    const char *own = v.name;
    v.name = "renamed";
    ASSERT_OK_ERR(ib_onnx_tensor_write_file("v.pb", &v, &err), &err);
    v.name = own; /* release frees the block the name starts */
    ib_onnx_tensor_release(&v);
    ib_tensor_view v2;
    ASSERT_OK_ERR(ib_onnx_tensor_read_file("v.pb", &v2, &err), &err);
    ASSERT_STR_EQ(v2.name, "renamed");
    ASSERT_MEM_EQ(v2.data, t->data, 12);
    ib_onnx_tensor_release(&v2);
    ASSERT_NULL(v2.data);
    ib_onnx_tensor_release(NULL);

    /* memory forms; a scalar; a zero-sized tensor */
    float scalar = 3.25f;
    ib_tensor_view sv = {NULL, {IB_DTYPE_FLOAT32, 0, {0}}, &scalar, sizeof scalar};
    void *buf;
    size_t len;
    ASSERT_OK_ERR(ib_onnx_tensor_write_memory(&sv, &buf, &len, &err), &err);
    ASSERT_OK_ERR(ib_onnx_tensor_read_memory(buf, len, &v2, &err), &err);
    ASSERT_STR_EQ(v2.name, "");
    ASSERT_INT_EQ(v2.desc.ndim, 0);
    ASSERT_TRUE(*(const float *)v2.data == 3.25f);
    ib_onnx_tensor_release(&v2);
    ib_free(buf);
    ib_tensor_view zv = {"z", {IB_DTYPE_INT64, 2, {0, 5}}, NULL, 0};
    ASSERT_OK_ERR(ib_onnx_tensor_write_memory(&zv, &buf, &len, &err), &err);
    ASSERT_OK_ERR(ib_onnx_tensor_read_memory(buf, len, &v2, &err), &err);
    ASSERT_UINT_EQ(v2.capacity, 0);
    ASSERT_INT_EQ(v2.desc.dims[1], 5);
    ib_onnx_tensor_release(&v2);
    ib_free(buf);

    /* writer refusals */
    ib_tensor_view dyn = {"d", {IB_DTYPE_FLOAT32, 1, {IB_DIM_DYNAMIC}}, &scalar, 4};
    ASSERT_STATUS(ib_onnx_tensor_write_file("d.pb", &dyn, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "every dim must be known");
    ib_tensor_view shortv = {"s", {IB_DTYPE_FLOAT32, 1, {4}}, &scalar, 4};
    ASSERT_STATUS(ib_onnx_tensor_write_file("s.pb", &shortv, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "needs 16 bytes; the view has 4");
    ib_tensor_view str = {"s", {IB_DTYPE_STRING, 1, {1}}, &scalar, 4};
    ASSERT_STATUS(ib_onnx_tensor_write_file("s.pb", &str, &err), IB_EINVAL);
    ib_tensor_free(t);
}

TEST(onnx_tensor_pb_rejects_bad_files)
{
    ib_tensor_view v;
    ib_err err;
    ASSERT_STATUS(ib_onnx_tensor_read_file("nope.pb", &v, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "nope.pb");
    float data[4] = {1, 2, 3, 4};
    ib_tensor_view good = {"x", {IB_DTYPE_FLOAT32, 2, {2, 2}}, data, sizeof data};
    void *buf;
    size_t len;
    ASSERT_OK_ERR(ib_onnx_tensor_write_memory(&good, &buf, &len, &err), &err);
    for (size_t cut = 1; cut < len; cut++) {
        int rc = ib_onnx_tensor_read_memory(buf, cut, &v, &err);
        ASSERT_INT_NE(rc, IB_OK);
        ASSERT_NULL(v.data);
    }
    ASSERT_STATUS(ib_onnx_tensor_read_memory(buf, len - 1, &v, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "in TensorProto: field 'raw_data' (9) declares 16 bytes but "
                                 "only 15 remain");
    /* dims that disagree with raw_data */
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
    tp->dims[0] = 3;
    size_t n = onnx__tensor_proto__get_packed_size(tp);
    uint8_t *bad = malloc(n);
    onnx__tensor_proto__pack(tp, bad);
    ASSERT_STATUS(ib_onnx_tensor_read_memory(bad, n, &v, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "tensor 'x': raw_data has 16 bytes but float32[3,2] needs 24");
    free(bad);
    /* external data in a .pb file is refused */
    tp->dims[0] = 2;
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    n = onnx__tensor_proto__get_packed_size(tp);
    bad = malloc(n);
    onnx__tensor_proto__pack(tp, bad);
    ASSERT_STATUS(ib_onnx_tensor_read_memory(bad, n, &v, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "external data");
    free(bad);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    ib_free(buf);
}

/* ib_tensor_desc_is_f32: the backends' LSTM shape checks (cpu dnnl_rnn.c, cuda cuda_rnn.c) */
TEST(tensor_desc_is_f32_dims_rank_dtype)
{
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 3, {1, 8, 4}};
    ASSERT_TRUE(ib_tensor_desc_is_f32(&d, 3, 1, 8, 4));
    ASSERT_TRUE(!ib_tensor_desc_is_f32(&d, 3, 1, 8, 5));
    ASSERT_TRUE(!ib_tensor_desc_is_f32(&d, 2, 1, 8, 0)); /* rank */
    ASSERT_TRUE(!ib_tensor_desc_is_f32(NULL, 3, 1, 8, 4));
    ib_tensor_desc h = {IB_DTYPE_FLOAT32, 2, {1, 16}};
    ASSERT_TRUE(ib_tensor_desc_is_f32(&h, 2, 1, 16, 0)); /* c unused at rank 2 */
    h.dtype = IB_DTYPE_FLOAT16;
    ASSERT_TRUE(!ib_tensor_desc_is_f32(&h, 2, 1, 16, 0));
    ib_tensor_desc r4 = {IB_DTYPE_FLOAT32, 4, {1, 1, 1, 1}};
    ASSERT_TRUE(!ib_tensor_desc_is_f32(&r4, 4, 1, 1, 1)); /* more than three dims: no */
}
