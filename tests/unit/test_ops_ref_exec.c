/*
 * test_ops_ref_exec.c - the reference interpreter: a small graph with
 * constants and shape-dependent ops, dynamic input dims resolved at run
 * time, liveness (peak bytes stay near the live set), outputs that are
 * inputs or listed twice, a data-dependent op feeding another, the node
 * callback, and clear errors for bad inputs, unsorted graphs and
 * unsupported ops.
 */
#include "ir/ref_exec.h"
#include "test_ops_util.h"

static ib_value_id add_const(ib_graph *g, const char *name, ib_tensor *t)
{
    ib_value_id v = ib_graph_add_value(g, name, &t->desc);
    ASSERT_OK(ib_graph_set_constant(g, v, t));
    return v;
}

/* x [?, 3] -> Relu -> Add(c) -> Reshape(shape [-1]) -> Shape */
static ib_graph *small_graph(void)
{
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc xd = {IB_DTYPE_FLOAT32, 2, {IB_DIM_DYNAMIC, 3}};
    ib_value_id x = ib_graph_add_value(g, "x", &xd);
    ib_value_id c = add_const(g, "c", T_F32(DIMS(3), 10, 20, 30));
    ib_value_id s = add_const(g, "s", T_I64(DIMS(1), -1));
    ib_value_id r = ib_graph_add_value(g, "r", NULL), a = ib_graph_add_value(g, "a", NULL);
    ib_value_id f = ib_graph_add_value(g, "flat", NULL), sh = ib_graph_add_value(g, "shape", NULL);
    ib_graph_add_node(g, "Relu", "", "relu", &x, 1, &r, 1, NULL, 0);
    ib_value_id ain[2] = {r, c}, rin[2] = {a, s};
    ib_graph_add_node(g, "Add", "", "add", ain, 2, &a, 1, NULL, 0);
    ib_graph_add_node(g, "Reshape", "", "reshape", rin, 2, &f, 1, NULL, 0);
    ib_graph_add_node(g, "Shape", "", "shape_of", &f, 1, &sh, 1, NULL, 0);
    IB_VEC_PUSH(&g->inputs, x);
    IB_VEC_PUSH(&g->outputs, f);
    IB_VEC_PUSH(&g->outputs, sh);
    ib_err err;
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    return g;
}

static int count_nodes(void *user, const ib_graph *g, const ib_node *n, const ib_tensor *const *out,
                       uint32_t n_out)
{
    IB_UNUSED(g);
    IB_UNUSED(n);
    IB_UNUSED(n_out);
    int *c = user;
    ASSERT_NOT_NULL(out[0]);
    return ++*c == 2 && c[1]; /* c[1] set: stop after the second node */
}

TEST(ops_ref_exec_small_graph_dynamic_batch)
{
    ib_err err;
    ib_graph *g = small_graph();
    ib_tensor *x = T_F32(DIMS(2, 3), -1, 2, -3, 4, -5, 6), *out[2];
    const ib_tensor *in[1] = {x};
    int counter[2] = {0, 0};
    ib_ref_exec_options o;
    ib_ref_exec_options_defaults(&o);
    o.on_node = count_nodes;
    o.user = counter;
    ASSERT_OK_ERR(ib_ref_exec_run(g, in, 1, out, 2, &o, &err), &err);
    ASSERT_INT_EQ(counter[0], 4);
    ASSERT_DIMS(out[0], 6);
    ASSERT_F32S(out[0], 0, 10, 22, 30, 14, 20, 36);
    ASSERT_I64S(out[1], 6);
    free_all(out, 2);
    /* another batch size through the same graph */
    ib_tensor *x1 = T_F32(DIMS(1, 3), 1, 1, 1);
    in[0] = x1;
    ASSERT_OK_ERR(ib_ref_exec_run(g, in, 1, out, 2, NULL, &err), &err);
    ASSERT_I64S(out[1], 3);
    free_all(out, 2);
    /* the callback can stop the run */
    counter[0] = 0;
    counter[1] = 1;
    ASSERT_STATUS(ib_ref_exec_run(g, in, 1, out, 2, &o, &err), IB_ECANCELED);
    ASSERT_NULL(out[0]);
    ASSERT_NULL(out[1]);
    free_all((ib_tensor *[]){x, x1}, 2);
    ib_graph_destroy(g);
}

TEST(ops_ref_exec_rejects_bad_inputs)
{
    ib_err err;
    ib_graph *g = small_graph();
    ib_tensor *out[2];
    ib_tensor *wrong = T_F32(DIMS(2, 4), 1, 2, 3, 4, 5, 6, 7, 8);
    const ib_tensor *in[1] = {wrong};
    ASSERT_STATUS(ib_ref_exec_run(g, in, 1, out, 2, NULL, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'x' is declared float32[?,3] but float32[2,4] was given");
    ib_tensor *i64 = T_I64(DIMS(1, 3), 1, 2, 3);
    in[0] = i64;
    ASSERT_STATUS(ib_ref_exec_run(g, in, 1, out, 2, NULL, &err), IB_EINVAL);
    in[0] = NULL;
    ASSERT_STATUS(ib_ref_exec_run(g, in, 1, out, 2, NULL, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "missing");
    ASSERT_STATUS(ib_ref_exec_run(g, in, 0, out, 2, NULL, &err), IB_EINVAL);
    ASSERT_STATUS(ib_ref_exec_run(g, in, 1, out, 1, NULL, &err), IB_EINVAL);
    free_all((ib_tensor *[]){wrong, i64}, 2);
    ib_graph_destroy(g);
}

TEST(ops_ref_exec_unsorted_and_unsupported)
{
    ib_err err;
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 1, {2}};
    ib_value_id x = ib_graph_add_value(g, "x", &d), a = ib_graph_add_value(g, "a", NULL),
                b = ib_graph_add_value(g, "b", NULL);
    /* b = Neg(a) listed before a = Neg(x), and never sorted */
    ib_graph_add_node(g, "Neg", "", "second", &a, 1, &b, 1, NULL, 0);
    ib_graph_add_node(g, "Neg", "", "first", &x, 1, &a, 1, NULL, 0);
    IB_VEC_PUSH(&g->inputs, x);
    IB_VEC_PUSH(&g->outputs, b);
    ib_tensor *t = T_F32(DIMS(2), 1, 2), *out[1];
    const ib_tensor *in[1] = {t};
    ASSERT_STATUS(ib_ref_exec_run(g, in, 1, out, 1, NULL, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "second");
    ASSERT_STR_CONTAINS(err.msg, "topological");
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    ASSERT_OK_ERR(ib_ref_exec_run(g, in, 1, out, 1, NULL, &err), &err);
    ASSERT_F32S(out[0], 0, 1, 2);
    ib_tensor_free(out[0]);
    /* an unsupported op fails naming the node, and nothing leaks */
    g->nodes.data[1].op_type = "Frobnicate";
    ASSERT_STATUS(ib_ref_exec_run(g, in, 1, out, 1, NULL, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "Frobnicate");
    ASSERT_STR_CONTAINS(err.msg, "second");
    ib_tensor_free(t);
    ib_graph_destroy(g);
}

TEST(ops_ref_exec_liveness_bounds_peak_memory)
{
    ib_err err;
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    /* x -> Neg -> Neg -> ... (8 nodes), 1 MiB per value, plus an unused
     * side output on the way (Dropout's mask) that must be freed at once */
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 1, {262144}};
    ib_value_id prev = ib_graph_add_value(g, "x", &d);
    IB_VEC_PUSH(&g->inputs, prev);
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%d", i);
        ib_value_id v = ib_graph_add_value(g, name, NULL);
        if (i == 3) {
            ib_value_id outs[2] = {v, ib_graph_add_value(g, "mask", NULL)};
            ib_graph_add_node(g, "Dropout", "", name, &prev, 1, outs, 2, NULL, 0);
        } else {
            ib_graph_add_node(g, "Neg", "", name, &prev, 1, &v, 1, NULL, 0);
        }
        prev = v;
    }
    IB_VEC_PUSH(&g->outputs, prev);
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    ib_tensor *x = t_rand(DIMS(262144), 3), *out[1];
    const ib_tensor *in[1] = {x};
    ib_ref_exec_stats st;
    ib_ref_exec_options o;
    ib_ref_exec_options_defaults(&o);
    o.stats = &st;
    ASSERT_OK_ERR(ib_ref_exec_run(g, in, 1, out, 1, &o, &err), &err);
    ASSERT_INT_EQ(st.nodes_run, 8);
    ASSERT_INT_EQ(st.allocations, 9);
    /* at most two 1 MiB values (a node's input and output) plus the mask */
    ASSERT_UINT_LE(st.peak_bytes, 2u * 1048576u + 262144u);
    ASSERT_UINT_GE(st.peak_bytes, 2u * 1048576u);
    for (int i = 0; i < 262144; i += 1000) /* seven negations */
        ASSERT_NEAR(F32(out[0])[i], -F32(x)[i], 0);
    ib_tensor_free(out[0]);
    ib_tensor_free(x);
    ib_graph_destroy(g);
}

TEST(ops_ref_exec_outputs_aliasing_inputs_and_duplicates)
{
    ib_err err;
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 1, {2}};
    ib_value_id x = ib_graph_add_value(g, "x", &d), y = ib_graph_add_value(g, "y", NULL);
    ib_value_id k = add_const(g, "k", T_F32(DIMS(1), 5));
    ib_graph_add_node(g, "Abs", "", "abs", &x, 1, &y, 1, NULL, 0);
    IB_VEC_PUSH(&g->inputs, x);
    IB_VEC_PUSH(&g->outputs, x); /* the input itself */
    IB_VEC_PUSH(&g->outputs, y);
    IB_VEC_PUSH(&g->outputs, y); /* twice */
    IB_VEC_PUSH(&g->outputs, k); /* a constant */
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    ib_tensor *t = T_F32(DIMS(2), -1, 2), *out[4];
    const ib_tensor *in[1] = {t};
    ASSERT_OK_ERR(ib_ref_exec_run(g, in, 1, out, 4, NULL, &err), &err);
    ASSERT_TRUE(out[0] != t && out[1] != out[2]);
    ASSERT_F32S(out[0], 0, -1, 2);
    ASSERT_F32S(out[1], 0, 1, 2);
    ASSERT_F32S(out[2], 0, 1, 2);
    ASSERT_F32S(out[3], 0, 5);
    free_all(out, 4);
    ib_tensor_free(t);
    ib_graph_destroy(g);
}

TEST(ops_ref_exec_data_dependent_output_feeds_next_node)
{
    ib_err err;
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc bd = {IB_DTYPE_FLOAT32, 3, {1, 3, 4}}, sd = {IB_DTYPE_FLOAT32, 3, {1, 1, 3}};
    ib_value_id b = ib_graph_add_value(g, "boxes", &bd), s = ib_graph_add_value(g, "scores", &sd);
    ib_value_id mx = add_const(g, "max", T_I64(DIMS(1), 10));
    ib_value_id iou = add_const(g, "iou", T_F32(DIMS(1), 0.5f));
    ib_value_id sel = ib_graph_add_value(g, "sel", NULL), sh = ib_graph_add_value(g, "n", NULL);
    ib_value_id nin[4] = {b, s, mx, iou};
    ib_graph_add_node(g, "NonMaxSuppression", "", "nms", nin, 4, &sel, 1, NULL, 0);
    ib_graph_add_node(g, "Shape", "", "count", &sel, 1, &sh, 1, NULL, 0);
    IB_VEC_PUSH(&g->inputs, b);
    IB_VEC_PUSH(&g->inputs, s);
    IB_VEC_PUSH(&g->outputs, sel);
    IB_VEC_PUSH(&g->outputs, sh);
    ASSERT_OK_ERR(ib_graph_toposort(g, &err), &err);
    /* boxes 0 and 1 overlap (IoU 0.82), box 2 is apart: 2 of the 3 survive */
    ib_tensor *bx = T_F32(DIMS(1, 3, 4), 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 5, 5, 6, 6);
    ib_tensor *sc = T_F32(DIMS(1, 1, 3), 0.9f, 0.8f, 0.7f), *out[2];
    const ib_tensor *in[2] = {bx, sc};
    ASSERT_OK_ERR(ib_ref_exec_run(g, in, 2, out, 2, NULL, &err), &err);
    ASSERT_DIMS(out[0], 2, 3);
    ASSERT_UINT_EQ(out[0]->nbytes, 2 * 3 * sizeof(int64_t));
    ASSERT_I64S(out[0], 0, 0, 0, 0, 0, 2);
    ASSERT_I64S(out[1], 2, 3);
    free_all(out, 2);
    free_all((ib_tensor *[]){bx, sc}, 2);
    ib_graph_destroy(g);
}
