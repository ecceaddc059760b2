/*
 * test_onnx_load.c - the ONNX loader on models made by the builder and then
 * broken one field at a time: every truncation and many bit flips (clear
 * errors, never a crash), tensors whose data disagree with their dims,
 * negative and overflowing dims, missing and duplicate names, cycles,
 * opsets, domains, attribute kinds, non-tensor types, nesting bombs, a
 * model without a graph, plus subgraph attributes and allocation failures.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "test_onnx_util.h"

TEST(onnx_load_small_model)
{
    void *buf;
    size_t len;
    tiny_mlp_bytes(&buf, &len);
    ib_graph *g;
    ib_err err;
    ASSERT_OK_ERR(ib_onnx_load_graph(buf, len, NULL, NULL, &g, &err), &err);
    ASSERT_INT_EQ(g->opset, 17);
    ASSERT_INT_EQ(g->ir_version, 8);
    ASSERT_STR_EQ(g->producer_name, "inferbench");
    ASSERT_UINT_EQ(g->inputs.len, 1);
    ASSERT_UINT_EQ(g->outputs.len, 1);
    ASSERT_UINT_EQ(g->nodes.len, 3);
    const ib_value *x = &g->values.data[g->inputs.data[0]];
    ASSERT_STR_EQ(x->name, "x");
    ASSERT_TRUE(x->shape_known);
    ASSERT_INT_EQ(x->desc.dims[0], IB_DIM_DYNAMIC);
    ASSERT_STR_EQ(x->dim_param[0], "batch");
    ASSERT_INT_EQ(x->desc.dims[1], 4);
    const ib_value *bv = &g->values.data[ib_graph_find_value(g, "B")];
    ASSERT_TRUE(bv->flags & IB_VALUE_CONST);
    ASSERT_FALSE(bv->flags & IB_VALUE_INPUT);
    const float *bd = bv->constant->data;
    ASSERT_TRUE(bd[0] == 1.0f && bd[1] == 2.0f && bd[2] == 3.0f);
    ASSERT_STR_EQ(g->nodes.data[0].op_type, "MatMul");
    ASSERT_STR_EQ(g->nodes.data[2].op_type, "Relu");
    ASSERT_INT_EQ(g->nodes.data[2].opset, 17);
    const ib_value *z = &g->values.data[g->outputs.data[0]];
    ASSERT_STR_EQ(z->name, "z");
    ASSERT_TRUE(z->flags & IB_VALUE_OUTPUT);
    ASSERT_INT_EQ(z->producer, 2);
    ib_graph_destroy(g);
    /* the same from a file */
    ASSERT_OK_ERR(ib_file_write_all("m.onnx", buf, len, &err), &err);
    ASSERT_OK_ERR(ib_onnx_load_graph_file("m.onnx", NULL, &g, &err), &err);
    ib_graph_destroy(g);
    ASSERT_STATUS(ib_onnx_load_graph_file("missing.onnx", NULL, &g, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "missing.onnx");
    ASSERT_OK_ERR(ib_file_write_all("empty.onnx", "", 0, &err), &err);
    ASSERT_STATUS(ib_onnx_load_graph_file("empty.onnx", NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "empty.onnx: empty");
    ib_free(buf);
}

TEST(onnx_load_rejects_every_truncation)
{
    void *buf;
    size_t len;
    tiny_mlp_bytes(&buf, &len);
    size_t with_offset = 0;
    for (size_t cut = 0; cut < len; cut++) {
        ib_graph *g = NULL;
        ib_err err;
        ib_err_clear(&err);
        int rc = ib_onnx_load_graph(buf, cut, NULL, NULL, &g, &err);
        if (rc == IB_OK)
            ib_test_fail(__FILE__, __LINE__, "a %zu-byte prefix of %zu loaded", cut, len);
        ASSERT_NULL(g);
        ASSERT_STR_CONTAINS(err.msg, "<memory>: ");
        with_offset += strstr(err.msg, "offset ") != NULL;
    }
    /* most cuts land inside a field: those name the offset and field path */
    ASSERT_UINT_GE(with_offset, len * 9 / 10);
    ib_err err;
    ib_graph *g;
    ASSERT_STATUS(ib_onnx_load_graph(buf, len / 2, NULL, NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "in ModelProto: field 'graph' (7) declares");
    ASSERT_STR_CONTAINS(err.msg, "remain");
    /* and says in plain words what that means */
    ASSERT_STR_CONTAINS(err.msg, "(the model file is corrupt or truncated: copy or export it");
    ib_free(buf);
}

TEST(onnx_load_survives_bit_flips)
{
    void *buf;
    size_t len;
    tiny_mlp_bytes(&buf, &len);
    unsigned char *mut = ib_malloc(len);
    size_t ok = 0, failed = 0;
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(mut, buf, len);
            mut[i] ^= (unsigned char)(1u << bit);
            ib_graph *g = NULL;
            ib_err err;
            ib_err_clear(&err);
            int rc = ib_onnx_load_graph(mut, len, NULL, NULL, &g, &err);
            if (rc == IB_OK) {
                ok++;
                ib_graph_destroy(g);
            } else {
                failed++;
                ASSERT_TRUE(err.msg[0] != '\0');
                ASSERT_INT_EQ(err.code, rc);
            }
        }
    }
    printf("# %zu flips loaded (weights, names), %zu were rejected\n", ok, failed);
    ASSERT_UINT_GE(failed, 1);
    ASSERT_UINT_GE(ok, 1);
    ib_free(mut);
    ib_free(buf);
}

static Onnx__ModelProto *tiny_proto(void)
{
    void *buf;
    size_t len;
    tiny_mlp_bytes(&buf, &len);
    Onnx__ModelProto *m = unpack_model(buf, len);
    ib_free(buf);
    return m;
}

static Onnx__TensorProto *init_named(Onnx__ModelProto *m, const char *name)
{
    for (size_t i = 0; i < m->graph->n_initializer; i++)
        if (strcmp(m->graph->initializer[i]->name, name) == 0) return m->graph->initializer[i];
    ib_test_fail(__FILE__, __LINE__, "no initializer %s", name);
}

static void expect(Onnx__ModelProto *m, int code, const char *needle)
{
    ib_err err;
    int rc = pack_and_load(m, NULL, NULL, NULL, &err);
    if (rc != code || !strstr(err.msg, needle))
        ib_test_fail(__FILE__, __LINE__, "expected %s with \"%s\", got %s: %s", ib_err_name(code),
                     needle, ib_err_name(rc), err.msg);
}

TEST(onnx_load_rejects_bad_tensors)
{
    Onnx__ModelProto *m = tiny_proto();
    init_named(m, "W")->dims[0] = 5; /* 5x3 floats need 60 bytes, raw_data has 48 */
    expect(m, IB_EFORMAT, "initializer 'W': raw_data has 48 bytes but float32[5,3] needs 60");

    m = tiny_proto();
    init_named(m, "W")->dims[1] = -3;
    expect(m, IB_EFORMAT, "initializer 'W': dim 1 is -3 (negative)");

    m = tiny_proto();
    init_named(m, "W")->dims[0] = (int64_t)1 << 40;
    init_named(m, "W")->dims[1] = (int64_t)1 << 40;
    expect(m, IB_EFORMAT, "initializer 'W': dims overflow");

    m = tiny_proto();
    init_named(m, "W")->dims[0] = (int64_t)1 << 61;
    expect(m, IB_EFORMAT, "do not fit in memory"); /* 2^61 * 3 elements * 4 bytes */

    m = tiny_proto();
    Onnx__TensorProto *t = init_named(m, "B");
    int64_t *nine = malloc(9 * sizeof *nine);
    for (int i = 0; i < 9; i++)
        nine[i] = 1;
    free(t->dims);
    t->dims = nine;
    t->n_dims = 9;
    expect(m, IB_EUNSUPPORTED, "has 9 dims; at most 8");

    m = tiny_proto();
    init_named(m, "B")->has_data_type = 0;
    expect(m, IB_EFORMAT, "initializer 'B' has no (UNDEFINED) element type");

    m = tiny_proto();
    init_named(m, "B")->data_type = 14;
    expect(m, IB_EUNSUPPORTED, "complex64");

    m = tiny_proto();
    init_named(m, "B")->data_type = 99;
    expect(m, IB_EUNSUPPORTED, "unknown element type 99");

    /* typed fields: count mismatch, other-type fields, out-of-range narrow values */
    m = tiny_proto();
    t = init_named(m, "B");
    free(t->raw_data.data);
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    t->has_raw_data = 0;
    t->float_data = malloc(2 * sizeof(float));
    t->float_data[0] = t->float_data[1] = 1;
    t->n_float_data = 2;
    expect(m, IB_EFORMAT, "float32[3] needs 3 elements; it has 2 in float_data");

    m = tiny_proto();
    t = init_named(m, "B");
    free(t->raw_data.data);
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    t->has_raw_data = 0;
    t->data_type = IB_DTYPE_INT8;
    t->int32_data = malloc(3 * sizeof(int32_t));
    t->int32_data[0] = 1, t->int32_data[1] = -128, t->int32_data[2] = 128;
    t->n_int32_data = 3;
    expect(m, IB_EFORMAT, "int32_data[2] = 128 is out of range for int8");

    m = tiny_proto();
    t = init_named(m, "B");
    t->int64_data = malloc(sizeof(int64_t));
    t->n_int64_data = 1;
    t->int64_data[0] = 0;
    free(t->raw_data.data);
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    expect(m, IB_EFORMAT, "data in fields of other types");

    m = tiny_proto();
    t = init_named(m, "B");
    free(t->raw_data.data);
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    t->has_raw_data = 0;
    expect(m, IB_EFORMAT, "needs 3 elements; it has 0");

    m = tiny_proto();
    t = init_named(m, "B");
    t->segment = malloc(sizeof *t->segment);
    onnx__tensor_proto__segment__init(t->segment);
    expect(m, IB_EUNSUPPORTED, "segmented");
}

/* Find node by op type in the proto. */
static Onnx__NodeProto *node_op(Onnx__ModelProto *m, const char *op)
{
    for (size_t i = 0; i < m->graph->n_node; i++)
        if (strcmp(m->graph->node[i]->op_type, op) == 0) return m->graph->node[i];
    ib_test_fail(__FILE__, __LINE__, "no %s node", op);
}

TEST(onnx_load_rejects_bad_graphs)
{
    Onnx__ModelProto *m = tiny_proto();
    SET_STR(node_op(m, "Add")->input[1], "nowhere");
    expect(m, IB_EFORMAT, "node 'Add_1' (Add): input 1 'nowhere' is not a graph input");

    /* a name declared only in value_info is not a definition */
    m = tiny_proto();
    SET_STR(node_op(m, "Add")->input[1], "typed_only");
    m->graph->value_info = realloc(m->graph->value_info, sizeof *m->graph->value_info);
    m->graph->value_info[0] = malloc(sizeof *m->graph->value_info[0]);
    onnx__value_info_proto__init(m->graph->value_info[0]);
    m->graph->value_info[0]->name = xstrdup("typed_only");
    m->graph->n_value_info = 1;
    expect(m, IB_EFORMAT, "input 1 'typed_only' is not a graph input");

    m = tiny_proto();
    SET_STR(init_named(m, "B")->name, "W");
    expect(m, IB_EFORMAT, "initializer 'W' is defined twice");

    m = tiny_proto();
    SET_STR(node_op(m, "Relu")->output[0], node_op(m, "Add")->output[0]);
    expect(m, IB_EFORMAT, "is produced by node 'Add_1' and again by node 'Relu_2'");

    m = tiny_proto();
    SET_STR(node_op(m, "Relu")->output[0], "x");
    expect(m, IB_EFORMAT, "node 'Relu_2' (Relu) writes 'x', which is also a graph input");

    m = tiny_proto();
    SET_STR(node_op(m, "MatMul")->input[0], "z"); /* MatMul reads Relu's output */
    expect(m, IB_EFORMAT, "cycle");

    m = tiny_proto();
    SET_STR(m->graph->output[0]->name, "ghost");
    expect(m, IB_EFORMAT, "graph output 'ghost' is not produced by any node");

    m = tiny_proto();
    SET_STR(m->graph->output[0]->name, "");
    expect(m, IB_EFORMAT, "graph output 0 has no name");

    m = tiny_proto();
    SET_STR(node_op(m, "Relu")->op_type, "");
    expect(m, IB_EFORMAT, "node 2 ('Relu_2') has no op_type");

    m = tiny_proto();
    SET_STR(node_op(m, "Relu")->domain, "com.example");
    expect(m, IB_EFORMAT, "is in domain 'com.example', which the model does not import");

    m = tiny_proto();
    m->opset_import[0]->version = 18;
    expect(m, IB_EUNSUPPORTED, "opset 18; inferbench supports opsets 7 to 17");

    m = tiny_proto();
    m->opset_import[0]->version = 5;
    ib_onnx_load_opts o;
    ib_onnx_load_opts_defaults(&o);
    o.min_opset = 1;
    ib_err err;
    ib_graph *g;
    ASSERT_OK_ERR(pack_and_load(m, NULL, &o, &g, &err), &err);
    ASSERT_INT_EQ(g->opset, 5);
    ib_graph_destroy(g);

    m = tiny_proto();
    onnx__graph_proto__free_unpacked(m->graph, NULL);
    m->graph = NULL;
    expect(m, IB_EFORMAT, "has no graph");

    /* an initializer listed among the inputs (IR < 4) stays a constant */
    m = tiny_proto();
    Onnx__ValueInfoProto **in = realloc(m->graph->input, 2 * sizeof *in);
    m->graph->input = in;
    in[1] = malloc(sizeof *in[1]);
    onnx__value_info_proto__init(in[1]);
    in[1]->name = xstrdup("W");
    m->graph->n_input = 2;
    ASSERT_OK_ERR(pack_and_load(m, NULL, NULL, &g, &err), &err);
    ASSERT_UINT_EQ(g->inputs.len, 1);
    ASSERT_TRUE(g->values.data[ib_graph_find_value(g, "W")].flags & IB_VALUE_CONST);
    ib_graph_destroy(g);
    /* ... but a graph input listed twice is an error */
    m = tiny_proto();
    in = realloc(m->graph->input, 2 * sizeof *in);
    m->graph->input = in;
    in[1] = malloc(sizeof *in[1]);
    onnx__value_info_proto__init(in[1]);
    in[1]->name = xstrdup("x");
    m->graph->n_input = 2;
    expect(m, IB_EFORMAT, "graph input 'x' is listed twice");

    /* negative dims in a declared shape; a sequence-typed input */
    m = tiny_proto();
    m->graph->input[0]->type->tensor_type->shape->dim[1]->dim_value = -4;
    expect(m, IB_EFORMAT, "graph input 'x': dim 1 is -4 (negative)");
    m = tiny_proto();
    Onnx__TypeProto *tp = m->graph->input[0]->type;
    protobuf_c_message_free_unpacked(&tp->tensor_type->base, NULL);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    tp->sequence_type = malloc(sizeof *tp->sequence_type);
    onnx__type_proto__sequence__init(tp->sequence_type);
    expect(m, IB_EUNSUPPORTED, "graph input 'x' has a sequence type");
}

static Onnx__AttributeProto *add_attr(Onnx__NodeProto *n, const char *name)
{
    n->attribute = realloc(n->attribute, (n->n_attribute + 1) * sizeof *n->attribute);
    Onnx__AttributeProto *a = malloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = xstrdup(name);
    n->attribute[n->n_attribute++] = a;
    return a;
}

TEST(onnx_load_attributes)
{
    /* every supported kind survives load -> write -> load, including IR-1
     * attributes without a type field */
    Onnx__ModelProto *m = tiny_proto();
    Onnx__NodeProto *relu = node_op(m, "Relu");
    Onnx__AttributeProto *a = add_attr(relu, "untyped_int");
    a->has_i = 1, a->i = -7;
    a = add_attr(relu, "f");
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, a->has_f = 1;
    a->f = 0.25f;
    a = add_attr(relu, "s");
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, a->has_s = 1;
    a->s.data = malloc(3);
    memcpy(a->s.data, "a\0b", 3);
    a->s.len = 3;
    ib_graph *g;
    ib_err err;
    ASSERT_OK_ERR(pack_and_load(m, NULL, NULL, &g, &err), &err);
    const ib_node *n = &g->nodes.data[2];
    ASSERT_INT_EQ(ib_node_attr_int(n, "untyped_int", 0), -7);
    ASSERT_TRUE(ib_node_attr_float(n, "f", 0) == 0.25f);
    const ib_attr *s = ib_node_attr(n, "s");
    ASSERT_UINT_EQ(s->s_len, 3);
    ASSERT_MEM_EQ(s->s, "a\0b", 3);
    void *buf;
    size_t len;
    ASSERT_OK_ERR(ib_onnx_write_graph(g, NULL, &buf, &len, &err), &err);
    ib_graph *g2;
    ASSERT_OK_ERR(ib_onnx_load_graph(buf, len, NULL, NULL, &g2, &err), &err);
    ASSERT_OK_ERR(ib_onnx_graph_compare(g, g2, &err), &err);
    ib_graph_destroy(g);
    ib_graph_destroy(g2);
    ib_free(buf);

    m = tiny_proto();
    a = add_attr(node_op(m, "Relu"), "tp");
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
    expect(m, IB_EUNSUPPORTED, "attribute 'tp' has type TYPE_PROTO (13)");
    m = tiny_proto();
    add_attr(node_op(m, "Relu"), "nothing");
    expect(m, IB_EFORMAT, "attribute 'nothing' has no type or value");
    m = tiny_proto();
    a = add_attr(node_op(m, "Relu"), "");
    a->has_i = 1;
    expect(m, IB_EFORMAT, "node 'Relu_2' (Relu): an attribute has no name");
    m = tiny_proto();
    add_attr(node_op(m, "Relu"), "k")->has_i = 1;
    add_attr(node_op(m, "Relu"), "k")->has_i = 1;
    expect(m, IB_EFORMAT, "attribute 'k' is set twice");
    m = tiny_proto();
    a = add_attr(node_op(m, "Relu"), "t");
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    expect(m, IB_EFORMAT, "attribute 't' has type TENSOR but no tensor");
    m = tiny_proto();
    a = add_attr(node_op(m, "Relu"), "t");
    a->t = malloc(sizeof *a->t);
    onnx__tensor_proto__init(a->t);
    a->t->has_data_type = 1, a->t->data_type = 1;
    a->t->dims = malloc(sizeof(int64_t));
    a->t->dims[0] = 4, a->t->n_dims = 1;
    expect(m, IB_EFORMAT, "node 'Relu_2' (Relu) attribute 't': float32[4] needs 4 elements");
}

/* z = If(cond) { then: z = Add(B, W-row...) } - both branches read outer names. */
static ib_graph *branch(const char *outer, const char *op, bool bad)
{
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 1, {3}};
    ib_value_id in = ib_graph_add_value(g, bad ? "not_anywhere" : outer, NULL);
    ib_value_id out = ib_graph_add_value(g, op, &d);
    ib_graph_add_node(g, op, "", NULL, &in, 1, &out, 1, NULL, 0);
    IB_VEC_PUSH(&g->outputs, out);
    g->values.data[out].flags |= IB_VALUE_OUTPUT;
    return g;
}

static void build_if(bool bad, void **buf, size_t *len)
{
    ib_build *b;
    ASSERT_OK(ib_build_create(1, 17, &b));
    ib_value_id c = ib_build_input(b, "cond", IB_DTYPE_BOOL, "");
    ib_value_id bias = ib_build_weight(b, "B", IB_DTYPE_FLOAT32, "3", ib_fill_arange(1, 1));
    ib_graph *then_g = branch("B", "Neg", false), *else_g = branch("B", "Abs", bad);
    ib_attr at[2] = {{.name = "then_branch", .type = IB_ATTR_GRAPH, .g = then_g},
                     {.name = "else_branch", .type = IB_ATTR_GRAPH, .g = else_g}};
    ib_build_adopt_graph(b, then_g);
    ib_build_adopt_graph(b, else_g);
    ib_value_id y;
    ib_build_node(b, "If", NULL, NULL, &c, 1, &y, 1, at, 2, NULL);
    (void)bias;
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "3");
    ib_err err;
    ASSERT_OK_ERR(ib_build_write(b, NULL, buf, len, &err), &err);
    ib_build_destroy(b);
}

TEST(onnx_load_subgraph_attributes)
{
    void *buf;
    size_t len;
    build_if(false, &buf, &len);
    ib_graph *g, *g2;
    ib_err err;
    ASSERT_OK_ERR(ib_onnx_load_graph(buf, len, NULL, NULL, &g, &err), &err);
    const ib_node *n = &g->nodes.data[0];
    ASSERT_STR_EQ(n->op_type, "If");
    const ib_attr *t = ib_node_attr(n, "then_branch");
    ASSERT_INT_EQ(t->type, IB_ATTR_GRAPH);
    ASSERT_NOT_NULL(t->g);
    ASSERT_UINT_EQ(t->g->nodes.len, 1);
    ASSERT_STR_EQ(t->g->nodes.data[0].op_type, "Neg");
    /* 'B' comes from the enclosing graph: a local value with no producer */
    ib_value_id outer = ib_graph_find_value(t->g, "B");
    ASSERT_INT_NE(outer, IB_VALUE_NONE);
    ASSERT_INT_EQ(t->g->values.data[outer].producer, IB_NODE_NONE);
    ASSERT_UINT_EQ(t->g->inputs.len, 0);
    ASSERT_UINT_EQ(g->subgraphs.len, 2);
    void *buf2;
    size_t len2;
    ASSERT_OK_ERR(ib_onnx_write_graph(g, NULL, &buf2, &len2, &err), &err);
    ASSERT_OK_ERR(ib_onnx_load_graph(buf2, len2, NULL, NULL, &g2, &err), &err);
    ASSERT_OK_ERR(ib_onnx_graph_compare(g, g2, &err), &err);
    ib_graph_destroy(g);
    ib_graph_destroy(g2);
    ib_free(buf);
    ib_free(buf2);

    build_if(true, &buf, &len);
    ASSERT_STATUS(ib_onnx_load_graph(buf, len, NULL, NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "subgraph 'else_branch' of node 'If_");
    ASSERT_STR_CONTAINS(err.msg, "'not_anywhere' is not a graph input");
    ib_free(buf);
}

/* If -> then_branch -> If -> ... nested `depth` times, as raw protobuf. */
static uint8_t *nest(int depth, size_t *len)
{
    Onnx__GraphProto *inner = NULL;
    for (int i = 0; i < depth; i++) {
        Onnx__GraphProto *g = malloc(sizeof *g);
        onnx__graph_proto__init(g);
        if (inner) {
            g->node = malloc(sizeof *g->node);
            g->node[0] = malloc(sizeof *g->node[0]);
            onnx__node_proto__init(g->node[0]);
            g->node[0]->op_type = xstrdup("If");
            Onnx__AttributeProto *a = add_attr(g->node[0], "then_branch");
            a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
            a->g = inner;
            g->n_node = 1;
        }
        inner = g;
    }
    Onnx__ModelProto m;
    onnx__model_proto__init(&m);
    m.has_ir_version = 1;
    m.ir_version = 8;
    m.graph = inner;
    *len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*len);
    onnx__model_proto__pack(&m, buf);
    onnx__graph_proto__free_unpacked(inner, NULL);
    return buf;
}

TEST(onnx_load_rejects_nesting_bombs)
{
    size_t len;
    uint8_t *buf = nest(200, &len);
    ib_graph *g;
    ib_err err;
    ASSERT_STATUS(ib_onnx_load_graph(buf, len, NULL, NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "nested deeper than 64 levels");
    ASSERT_STR_CONTAINS(err.msg, "ModelProto.graph.node[0].attribute[0].g.node[0]");
    free(buf);
    /* a few levels are fine (no opset import is needed: "If" has no domain... it
     * does, so it fails on the import, after the pre-scan passed) */
    buf = nest(5, &len);
    ASSERT_STATUS(ib_onnx_load_graph(buf, len, NULL, NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "does not import");
    free(buf);
}

TEST(onnx_load_wire_format_errors)
{
    ib_graph *g;
    ib_err err;
    static const struct {
        const char *bytes;
        size_t len;
        const char *needle;
    } cases[] = {
        {"\x08", 1, "offset 0 in ModelProto: field 'ir_version' (1): truncated varint"},
        {"\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12, "over-long"},
        {"\x3a\x05\x0a", 3, "field 'graph' (7) declares 5 bytes but only 1 remain"},
        {"\x0b", 1, "wire type start-group (3)"},
        {"\x0f", 1, "wire type invalid"},
        {"\x00", 1, "field number 0 is invalid"},
        {"\x0a\x01x", 3,
         "field 'ir_version' (1) has wire type length-delimited (2), expected "
         "varint (0)"},
        {"\x3a\x07\x2a\x05\x0d\x00\x00\x00\x00", 9,
         "offset 4 in ModelProto.graph.initializer[0]: field 'dims' (1) has wire type 32-bit "
         "(5), expected varint (0) or packed (2)"},
        {"\x3a\x06\x2a\x04\x22\x02\x00\x00", 8,
         "packed field 'float_data' (4) has 2 bytes, not "
         "a multiple of 4"},
        {"\x80\x80\x80\x80\x80\x01", 6, "field tag varint longer than 5 bytes"},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        int rc = ib_onnx_load_graph(cases[i].bytes, cases[i].len, NULL, NULL, &g, &err);
        if (rc != IB_EFORMAT || !strstr(err.msg, cases[i].needle))
            ib_test_fail(__FILE__, __LINE__, "case %zu: %s: %s", i, ib_err_name(rc), err.msg);
    }
    /* text saved as .onnx: the wire type it implies is one ONNX never uses, so the message
     * says plainly that this is no ONNX model */
    ASSERT_STATUS(ib_onnx_load_graph("hello world", 11, NULL, NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "wire type end-group (4)");
    ASSERT_STR_CONTAINS(err.msg, "(this is not an ONNX model: check that the file is an .onnx "
                                 "model and was copied whole)");
    /* unknown fields are skipped: a model with only an unknown field has no graph */
    ASSERT_STATUS(ib_onnx_load_graph("\x08\x08\xf8\x07\x01", 5, NULL, NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "has no graph");
    ASSERT_STATUS(ib_onnx_load_graph("\x3a\x00", 2, NULL, NULL, &g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "has no ir_version");
}

/* ---- allocation failures --------------------------------------------------------- */

typedef struct fail_alloc {
    long countdown; /* fail when it reaches 0; negative = never */
    long calls;
} fail_alloc;

static void *failing(void *user, void *ptr, size_t old, size_t n)
{
    (void)old;
    fail_alloc *f = user;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    f->calls++;
    if (f->countdown >= 0 && f->countdown-- == 0) return NULL;
    return realloc(ptr, n);
}

TEST_TIMEOUT(onnx_load_out_of_memory, 300)
{
    void *buf, *out;
    size_t len, out_len;
    build_if(false, &buf, &len);
    fail_alloc f = {-1, 0};
    ib_alloc_set(failing, &f);
    long n;
    for (n = 0;; n++) {
        f.countdown = n;
        ib_graph *g = NULL;
        ib_err err;
        int rc = ib_onnx_load_graph(buf, len, NULL, NULL, &g, &err);
        if (rc == IB_OK) {
            /* the writer too: every failure point reports IB_ENOMEM */
            for (long k = 0;; k++) {
                f.countdown = k;
                rc = ib_onnx_write_graph(g, NULL, &out, &out_len, &err);
                if (rc == IB_OK) break;
                ASSERT_STATUS(rc, IB_ENOMEM);
            }
            f.countdown = -1;
            ib_free(out);
            ib_graph_destroy(g);
            break;
        }
        ASSERT_STATUS(rc, IB_ENOMEM);
        ASSERT_NULL(g);
        ASSERT_STR_CONTAINS(err.msg, "out of memory");
    }
    ib_alloc_set(NULL, NULL);
    printf("# load succeeded after %ld injected allocation failures\n", n);
    ASSERT_INT_GT(n, 20);
    ib_free(buf);
}
