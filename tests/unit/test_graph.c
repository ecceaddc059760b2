/*
 * test_graph.c - the graph IR: values, nodes, attributes, toposort (including
 * cycle and double-producer errors), tensors and fp16/bf16 conversion.
 */
#include <math.h>
#include <string.h>

#include "ir/graph.h"
#include "test.h"

static ib_tensor_desc f32(int64_t a, int64_t b)
{
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 2, {a, b}};
    return d;
}

TEST(graph_toposort_orders_nodes)
{
    ib_graph *g;
    ib_err err;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc d = f32(2, 3);
    ib_value_id x = ib_graph_add_value(g, "x", &d), y = ib_graph_add_value(g, "y", &d),
                z = ib_graph_add_value(g, "z", &d);
    ASSERT_INT_GE(x, 0);
    /* add z = Relu(y) before y = Neg(x) */
    ib_attr at = {.name = "alpha", .type = IB_ATTR_FLOAT, .f = 0.5f};
    ASSERT_INT_GE(ib_graph_add_node(g, "Relu", "", "second", &y, 1, &z, 1, &at, 1), 0);
    ASSERT_INT_GE(ib_graph_add_node(g, "Neg", "", "first", &x, 1, &y, 1, NULL, 0), 0);
    IB_VEC_PUSH(&g->inputs, x);
    IB_VEC_PUSH(&g->outputs, z);
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    ASSERT_STR_EQ(g->nodes.data[0].name, "first");
    ASSERT_STR_EQ(g->nodes.data[1].name, "second");
    ASSERT_INT_EQ(g->values.data[z].producer, 1);
    ASSERT_INT_EQ(g->values.data[y].consumers, 1);
    ASSERT_INT_EQ(ib_graph_find_value(g, "z"), z);
    ASSERT_INT_EQ(ib_graph_find_value(g, "nope"), IB_VALUE_NONE);
    ASSERT_TRUE(ib_node_attr_float(&g->nodes.data[1], "alpha", 0) == 0.5f);
    ASSERT_INT_EQ(ib_node_attr_int(&g->nodes.data[1], "missing", 7), 7);
    ib_graph_destroy(g);
}

TEST(graph_toposort_rejects_cycle_and_double_producer)
{
    ib_graph *g;
    ib_err err;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc d = f32(1, 1);
    ib_value_id a = ib_graph_add_value(g, "a", &d), b = ib_graph_add_value(g, "b", &d);
    ib_graph_add_node(g, "Neg", "", "n1", &a, 1, &b, 1, NULL, 0);
    ib_graph_add_node(g, "Neg", "", "n2", &b, 1, &a, 1, NULL, 0);
    ASSERT_STATUS(ib_graph_toposort(g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "cycle");
    ib_graph_destroy(g);

    ASSERT_OK(ib_graph_create(&g));
    a = ib_graph_add_value(g, "a", &d);
    b = ib_graph_add_value(g, "b", &d);
    ib_graph_add_node(g, "Neg", "", "p1", &a, 1, &b, 1, NULL, 0);
    ib_graph_add_node(g, "Abs", "", "p2", &a, 1, &b, 1, NULL, 0);
    ASSERT_STATUS(ib_graph_toposort(g, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "produced more than once");
    ib_graph_destroy(g);
}

TEST(tensor_alloc_aligned_and_desc)
{
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 4, {1, 3, 224, 224}};
    ib_tensor *t;
    ASSERT_OK(ib_tensor_alloc(&d, &t));
    ASSERT_UINT_EQ(((uintptr_t)t->data) % 64, 0);
    ASSERT_UINT_EQ(t->nbytes, 3 * 224 * 224 * 4);
    char buf[64];
    ASSERT_STR_EQ(ib_tensor_desc_str(&d, buf, sizeof buf), "float32[1,3,224,224]");
    ib_tensor_free(t);
    d.dims[0] = IB_DIM_DYNAMIC;
    ASSERT_INT_EQ(ib_tensor_desc_numel(&d), -1);
    ASSERT_STATUS(ib_tensor_alloc(&d, &t), IB_EINVAL);
}

TEST(tensor_half_conversions)
{
    ASSERT_UINT_EQ(ib_f32_to_f16(1.0f), 0x3c00);
    ASSERT_UINT_EQ(ib_f32_to_f16(-2.0f), 0xc000);
    ASSERT_UINT_EQ(ib_f32_to_f16(65504.0f), 0x7bff);
    ASSERT_UINT_EQ(ib_f32_to_f16(1e6f), 0x7c00);
    ASSERT_UINT_EQ(ib_f32_to_f16(5.9604645e-08f), 0x0001); /* smallest subnormal */
    ASSERT_UINT_EQ(ib_f32_to_bf16(1.0f), 0x3f80);
    /* every half value round-trips exactly */
    for (uint32_t h = 0; h < 0x7c00; h++)
        ASSERT_UINT_EQ(ib_f32_to_f16(ib_f16_to_f32((uint16_t)h)), h);
    ASSERT_TRUE(isnan(ib_f16_to_f32(ib_f32_to_f16(NAN))));
    /* round to nearest even: 1 + 2^-11 is halfway between 1 and 1+2^-10 */
    ASSERT_UINT_EQ(ib_f32_to_f16(1.0f + 1.0f / 2048.0f), 0x3c00);
    ASSERT_UINT_EQ(ib_f32_to_bf16(ib_bf16_to_f32(0x4049)), 0x4049);
}
