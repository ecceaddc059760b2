/*
 * test_ops_accum.c - inferbench.WindowAccumulate (ir/ops/accum.c) against sums written out
 * here element by element: 2 classes, a 2x3x2 window at (1, 0, 2) of a 3x4x5 volume, on the
 * cpu backend and the reference kernels, then a second window over the first (the overlap
 * adds); the weight plane (channel C) included, which the 3D U-Net labels cannot show (an
 * argmax ignores a common divisor). Errors: a window outside the volume names both at run
 * time; shapes that disagree fail at session creation.
 */
#include <string.h>

#include "onnx/build.h"
#include "runtime/model.h"
#include "test.h"

static ib_model *acc_model(const char *win_shape)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id in[4] = {ib_build_input(b, "acc", IB_DTYPE_FLOAT32, "1,3,3,4,5"),
                         ib_build_input(b, "win", IB_DTYPE_FLOAT32, win_shape),
                         ib_build_input(b, "at", IB_DTYPE_INT64, "3"),
                         ib_build_input(b, "g", IB_DTYPE_FLOAT32, "1,1,2,3,2")};
    ib_value_id y;
    ib_build_node(b, "WindowAccumulate", "inferbench", "acc", in, 4, &y, 1, NULL, 0, "");
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "1,3,3,4,5");
    ib_graph *g = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_build_finish(b, &g, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_from_graph(g, &m, &err), &err);
    return m;
}

TEST(ops_window_accumulate_sums)
{
    static const char *const backends[] = {"cpu", "reference"};
    ib_model *m = acc_model("1,2,2,3,2");
    for (int k = 0; k < 2; k++) {
        ib_session_options o;
        ib_session_options_defaults(&o);
        o.backend = backends[k];
        o.threads = 2;
        ib_session *s = NULL;
        ib_err err;
        ib_err_clear(&err);
        ASSERT_OK_ERR(ib_session_create(m, &o, &s, &err), &err);
        float acc[180], want[180], win[24], g[12], y[180];
        for (int i = 0; i < 180; i++)
            want[i] = acc[i] = 0.5f * (float)(i % 7);
        for (int i = 0; i < 24; i++)
            win[i] = (float)i - 11.0f;
        for (int i = 0; i < 12; i++)
            g[i] = 0.25f * (float)(i + 1);
        const int64_t at[2][3] = {{1, 0, 2}, {1, 1, 3}};
        for (int w = 0; w < 2; w++) {
            for (int z = 0; z < 2; z++) /* the sums, written out */
                for (int v = 0; v < 3; v++)
                    for (int x = 0; x < 2; x++) {
                        int p = (z * 3 + v) * 2 + x;
                        int o3 = ((int)(at[w][0] + z) * 4 + (int)at[w][1] + v) * 5 +
                                 (int)at[w][2] + x;
                        want[o3] += win[p] * g[p];
                        want[60 + o3] += win[12 + p] * g[p];
                        want[120 + o3] += g[p];
                    }
            ib_tensor_view in[4] = {{"acc", {IB_DTYPE_FLOAT32, 5, {1, 3, 3, 4, 5}}, acc, 0},
                                    {"win", {IB_DTYPE_FLOAT32, 5, {1, 2, 2, 3, 2}}, win, 0},
                                    {"at", {IB_DTYPE_INT64, 1, {3}}, (void *)(uintptr_t)at[w], 0},
                                    {"g", {IB_DTYPE_FLOAT32, 5, {1, 1, 2, 3, 2}}, g, 0}};
            ib_tensor_view out = {"y", {0}, y, sizeof y};
            ASSERT_OK_ERR(ib_session_run(s, in, 4, &out, 1, &err), &err);
            for (int i = 0; i < 180; i++)
                ASSERT_DBL_EQ(y[i], want[i]);
            memcpy(acc, y, sizeof acc); /* the next window adds to these sums */
        }
        /* a window that would end past the volume in x (3 + 2 > 5 is fine; 4 + 2 is not) */
        const int64_t bad[3] = {1, 1, 4};
        ib_tensor_view in[4] = {{"acc", {IB_DTYPE_FLOAT32, 5, {1, 3, 3, 4, 5}}, acc, 0},
                                {"win", {IB_DTYPE_FLOAT32, 5, {1, 2, 2, 3, 2}}, win, 0},
                                {"at", {IB_DTYPE_INT64, 1, {3}}, (void *)(uintptr_t)bad, 0},
                                {"g", {IB_DTYPE_FLOAT32, 5, {1, 1, 2, 3, 2}}, g, 0}};
        ib_tensor_view out = {"y", {0}, y, sizeof y};
        ASSERT_STATUS(ib_session_run(s, in, 4, &out, 1, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "(1, 1, 4)");
        ASSERT_STR_CONTAINS(err.msg, "3x4x5 volume");
        ib_session_destroy(s);
    }
    ib_model_destroy(m);
}

TEST(ops_window_accumulate_shape_errors)
{
    /* 3 classes in the window for acc's 2 + 1; a window not the weight's size */
    static const char *const shapes[] = {"1,3,2,3,2", "1,2,2,3,3"};
    for (int k = 0; k < 2; k++) {
        ib_model *m = acc_model(shapes[k]);
        ib_session_options o;
        ib_session_options_defaults(&o);
        ib_session *s = NULL;
        ib_err err;
        ib_err_clear(&err);
        ASSERT_STATUS(ib_session_create(m, &o, &s, &err), IB_EFORMAT);
        ASSERT_STR_CONTAINS(err.msg, "WindowAccumulate");
        ib_model_destroy(m);
    }
}
