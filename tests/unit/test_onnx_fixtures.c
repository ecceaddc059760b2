/*
 * test_onnx_fixtures.c - the committed files of tests/data/onnx/ and the
 * seed corpus of tests/fuzz/corpus/onnx_load/: each fixture loads as
 * expected (valid models load, each broken one fails with its message), and
 * the writer still produces them byte for byte (so a change of the output
 * format is noticed). IB_ONNX_REGEN_FIXTURES=1 rewrites them instead:
 *   IB_ONNX_REGEN_FIXTURES=1 make check T='onnx_fixtures_*'
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/onnx.h"
#include "test_onnx_util.h"

static ib_graph *branch(const char *outer, const char *op)
{
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 1, {3}};
    ib_value_id in = ib_graph_add_value(g, outer, NULL);
    ib_value_id out = ib_graph_add_value(g, op, &d);
    ib_graph_add_node(g, op, "", NULL, &in, 1, &out, 1, NULL, 0);
    ASSERT_OK(IB_VEC_PUSH(&g->outputs, out));
    g->values.data[out].flags |= IB_VALUE_OUTPUT;
    return g;
}

static ib_build *tiny_if(void)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 16, &b));
    ib_value_id c = ib_build_input(b, "cond", IB_DTYPE_BOOL, "");
    ib_build_weight(b, "B", IB_DTYPE_FLOAT16, "3", ib_fill_arange(1, 1));
    ib_graph *t = branch("B", "Neg"), *e = branch("B", "Abs");
    ib_attr at[2] = {{.name = "then_branch", .type = IB_ATTR_GRAPH, .g = t},
                     {.name = "else_branch", .type = IB_ATTR_GRAPH, .g = e}};
    ib_build_adopt_graph(b, t);
    ib_build_adopt_graph(b, e);
    ib_value_id y;
    ib_build_node(b, "If", NULL, NULL, &c, 1, &y, 1, at, 2, "note='subgraphs'");
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT16, "3");
    return b;
}

static ib_build *tiny_attrs(void)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(3, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_INT64, "N,2");
    ib_value_id s = ib_build_ints(b, "shape", (int64_t[]){-1}, 1, NULL);
    ib_value_id y = IB_BUILD_OP(b, "Reshape", "", x, s);
    y = IB_BUILD_OP(b, "Cast", "to=1", y);
    y = IB_BUILD_OP(b, "LeakyRelu", "alpha=0.1", y);
    y = IB_BUILD_OP(b, "Resize", "mode='nearest' scales=[1.0,2.0] names=['a','b'] ax=[0,1]", y);
    ib_tensor_desc d = {IB_DTYPE_BFLOAT16, 1, {2}};
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    ((uint16_t *)t->data)[0] = 0x3f80;
    ib_build_adopt_tensor(b, t);
    ib_attr ta = {.name = "value", .type = IB_ATTR_TENSOR, .t = t};
    ib_value_id c;
    ib_build_node(b, "Constant", NULL, "const", NULL, 0, &c, 1, &ta, 1, NULL);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "?");
    ib_build_output(b, c, "c", IB_DTYPE_BFLOAT16, "2");
    return b;
}

static bool regen(void)
{
    const char *e = getenv("IB_ONNX_REGEN_FIXTURES");
    return e && strcmp(e, "1") == 0;
}

/* Compare bytes with the committed file (or write it when regenerating). */
static void fixture(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    ib_err err;
    snprintf(path, sizeof path, "%s/%s/%s", ib_test_src_dir(), dir, name);
    if (regen()) {
        ASSERT_OK_ERR(ib_file_write_all(path, p, n, &err), &err);
        return;
    }
    char *have;
    size_t len;
    ASSERT_OK_ERR(ib_file_read_all(path, 0, &have, &len, &err), &err);
    if (len != n || memcmp(have, p, n) != 0)
        ib_test_fail(
            __FILE__, __LINE__,
            "%s differs from what the writer makes now (%zu vs %zu bytes); if the "
            "change is intended run IB_ONNX_REGEN_FIXTURES=1 make check T='onnx_fixtures_*'",
            path, len, n);
    ib_free(have);
}

static void bytes_of(ib_build *b, void **buf, size_t *len)
{
    ib_err err;
    ASSERT_OK_ERR(ib_build_write(b, NULL, buf, len, &err), &err);
    ib_build_destroy(b);
}

static void mutated(const char *name, const void *src, size_t n, int which)
{
    Onnx__ModelProto *m = unpack_model(src, n);
    switch (which) {
    case 0:
        m->graph->initializer[0]->dims[0] = 5;
        break;
    case 1:
        m->graph->initializer[1]->dims[0] = -3;
        break;
    case 2:
        SET_STR(m->graph->node[0]->input[0], "z");
        break;
    case 3:
        SET_STR(m->graph->node[1]->input[1], "missing_value");
        break;
    default:
        m->opset_import[0]->version = 18;
        break;
    }
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(len);
    onnx__model_proto__pack(m, buf);
    onnx__model_proto__free_unpacked(m, NULL);
    fixture("tests/data/onnx", name, buf, len);
    free(buf);
}

TEST(onnx_fixtures_are_current)
{
    void *mlp, *iff, *att;
    size_t nm, ni, na;
    bytes_of(tiny_mlp(), &mlp, &nm);
    bytes_of(tiny_if(), &iff, &ni);
    bytes_of(tiny_attrs(), &att, &na);
    const char *D = "tests/data/onnx";
    fixture(D, "tiny_mlp.onnx", mlp, nm);
    fixture(D, "tiny_if.onnx", iff, ni);
    fixture(D, "tiny_attrs.onnx", att, na);
    fixture(D, "truncated.onnx", mlp, nm / 2);
    static const char *const broken[] = {"raw_size_mismatch.onnx", "negative_dim.onnx",
                                         "cycle.onnx", "missing_value.onnx", "opset18.onnx"};
    for (int i = 0; i < 5; i++)
        mutated(broken[i], mlp, nm, i);
    /* the external-data pair, written here and compared */
    ib_build *b = tiny_mlp();
    ib_onnx_write_opts wo;
    ib_onnx_write_opts_defaults(&wo);
    wo.external_threshold = 16;
    ib_err err;
    ASSERT_OK_ERR(ib_build_write_file(b, "tiny_ext.onnx", &wo, &err), &err);
    ib_build_destroy(b);
    const char *ext[2] = {"tiny_ext.onnx", "tiny_ext.onnx.data"};
    for (int i = 0; i < 2; i++) {
        char *p;
        size_t n;
        ASSERT_OK_ERR(ib_file_read_all(ext[i], 0, &p, &n, &err), &err);
        fixture(D, ext[i], p, n);
        ib_free(p);
    }
    ib_tensor_desc d = {IB_DTYPE_FLOAT16, 2, {2, 3}};
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    for (int i = 0; i < 6; i++)
        ((uint16_t *)t->data)[i] = ib_f32_to_f16(0.5f * (float)i - 1.0f);
    void *tb;
    size_t tl;
    ASSERT_OK_ERR(ib_onnx_tensor_encode(t, "x", &tb, &tl, &err), &err);
    fixture(D, "input_0.pb", tb, tl);

    /* fuzz seeds: the valid models, cuts, and seeded bit flips */
    const char *C = "tests/fuzz/corpus/onnx_load";
    const void *srcs[3] = {mlp, iff, att};
    size_t lens[3] = {nm, ni, na};
    const char *names[3] = {"mlp", "if", "attrs"};
    uint64_t s = 12345;
    char name[64];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "%s.onnx", names[k]);
        fixture(C, name, srcs[k], lens[k]);
        for (int c = 1; c <= 3; c++) {
            snprintf(name, sizeof name, "%s_cut%d", names[k], c);
            fixture(C, name, srcs[k], lens[k] * (size_t)c / 4);
        }
        uint8_t *mut = malloc(lens[k]);
        for (int f = 0; f < 4; f++) {
            memcpy(mut, srcs[k], lens[k]);
            for (int j = 0; j < 3; j++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                mut[(s >> 33) % lens[k]] ^= (uint8_t)(1u << ((s >> 20) & 7));
            }
            snprintf(name, sizeof name, "%s_flip%d", names[k], f);
            fixture(C, name, mut, lens[k]);
        }
        free(mut);
    }
    fixture(C, "tensor.pb", tb, tl);
    ib_free(tb);
    ib_tensor_free(t);
    ib_free(mlp);
    ib_free(iff);
    ib_free(att);
}

TEST(onnx_fixtures_load_as_expected)
{
    static const struct {
        const char *file;
        int rc;
        const char *needle;
    } cases[] = {
        {"tiny_mlp.onnx", IB_OK, ""},
        {"tiny_if.onnx", IB_OK, ""},
        {"tiny_attrs.onnx", IB_OK, ""},
        {"tiny_ext.onnx", IB_OK, ""},
        {"truncated.onnx", IB_EFORMAT, "offset 21 in ModelProto: field 'graph' (7) declares"},
        {"raw_size_mismatch.onnx", IB_EFORMAT,
         "initializer 'W': raw_data has 48 bytes but "
         "float32[5,3] needs 60"},
        {"negative_dim.onnx", IB_EFORMAT, "initializer 'B': dim 0 is -3 (negative)"},
        {"cycle.onnx", IB_EFORMAT, "graph has a cycle"},
        {"missing_value.onnx", IB_EFORMAT, "input 1 'missing_value' is not a graph input"},
        {"opset18.onnx", IB_EUNSUPPORTED, "opset 18"},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/data/onnx/%s", ib_test_src_dir(), cases[i].file);
        ib_graph *g = NULL;
        ib_err err;
        ib_err_clear(&err);
        int rc = ib_onnx_load_graph_file(path, NULL, &g, &err);
        if (rc != cases[i].rc || !strstr(err.msg, cases[i].needle))
            ib_test_fail(__FILE__, __LINE__, "%s: expected %s \"%s\", got %s: %s", cases[i].file,
                         ib_err_name(cases[i].rc), cases[i].needle, ib_err_name(rc), err.msg);
        if (rc != IB_OK) ASSERT_STR_CONTAINS(err.msg, path);
        ib_graph_destroy(g);
    }
    /* the constant node's bfloat16 tensor and the string attributes came back */
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/onnx/tiny_attrs.onnx", ib_test_src_dir());
    ib_graph *g;
    ib_err err;
    ASSERT_OK_ERR(ib_onnx_load_graph_file(path, NULL, &g, &err), &err);
    const ib_node *c = NULL, *r = NULL;
    for (size_t i = 0; i < g->nodes.len; i++) {
        if (strcmp(g->nodes.data[i].op_type, "Constant") == 0) c = &g->nodes.data[i];
        if (strcmp(g->nodes.data[i].op_type, "Resize") == 0) r = &g->nodes.data[i];
    }
    ASSERT_NOT_NULL(c);
    ASSERT_NOT_NULL(r);
    const ib_attr *v = ib_node_attr(c, "value");
    ASSERT_INT_EQ(v->t->desc.dtype, IB_DTYPE_BFLOAT16);
    ASSERT_UINT_EQ(((const uint16_t *)v->t->data)[0], 0x3f80);
    ASSERT_STR_EQ(ib_node_attr_string(r, "mode", ""), "nearest");
    ASSERT_STR_EQ(ib_node_attr(r, "names")->strings[1], "b");
    ASSERT_INT_EQ(g->opset, 13);
    ib_graph_destroy(g);
    snprintf(path, sizeof path, "%s/tests/data/onnx/input_0.pb", ib_test_src_dir());
    ib_tensor_view tv;
    ASSERT_OK_ERR(ib_onnx_tensor_read_file(path, &tv, &err), &err);
    ASSERT_INT_EQ(tv.desc.dtype, IB_DTYPE_FLOAT16);
    ASSERT_UINT_EQ(((const uint16_t *)tv.data)[5], ib_f32_to_f16(1.5f));
    ib_onnx_tensor_release(&tv);
}
