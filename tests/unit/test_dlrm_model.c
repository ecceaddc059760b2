/*
 * test_dlrm_model.c - the DLRM builder (src/models/dlrm.c): names, shapes and op counts of
 * the MLPerf v1.1 architecture, the parameter count against a hand count (2,368,897 MLP
 * parameters, tables of min(rows, cap) x 128), the row cap, and inference: probabilities in
 * (0, 1), the CPU backend agreeing with the reference interpreter, and each pair's output
 * independent of the rest of its batch.
 */
#include <math.h>
#include <string.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/dlrm.h"
#include "onnx/build.h"
#include "test.h"
#include "test_op_hist.h"

static ib_model *tiny_dlrm(void)
{
    ib_models_opts o = {.seed = 5, .tiny = true};
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_models_dlrm(&o, 0, &b, &err), &err);
    ASSERT_OK_ERR(ib_build_write_file(b, "dlrm.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("dlrm.onnx", NULL, &m, &err), &err);
    return m;
}

TEST(dlrm_model_topology_and_parameter_count)
{
    ASSERT_UINT_EQ(ib_dlrm_rows(0, 0, 0), 39884406);
    ASSERT_UINT_EQ(ib_dlrm_rows(0, 100000, 0), 100000);
    ASSERT_UINT_EQ(ib_dlrm_rows(5, 100000, 0), 3);
    ASSERT_UINT_EQ(ib_dlrm_rows(9, 0, 1), 1000);
    uint64_t sum = 0;
    for (size_t t = 0; t < IB_DLRM_TABLES; t++)
        sum += ib_dlrm_table_rows[t];
    ASSERT_UINT_EQ(sum, 187767399); /* benchmarks.md §1.4 */
    ib_model *m = tiny_dlrm();
    const char *name;
    ib_tensor_desc d;
    ASSERT_UINT_EQ(ib_model_input_count(m), 2);
    ASSERT_OK(ib_model_input(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_DLRM_DENSE_INPUT);
    ASSERT_INT_EQ(d.dims[1], 13);
    ASSERT_OK(ib_model_input(m, 1, &name, &d));
    ASSERT_STR_EQ(name, IB_DLRM_SPARSE_INPUT);
    ASSERT_INT_EQ(d.dtype, IB_DTYPE_INT64);
    ASSERT_INT_EQ(d.dims[1], 26);
    ASSERT_OK(ib_model_output(m, 0, &name, &d));
    ASSERT_STR_EQ(name, IB_DLRM_OUTPUT);
    hist h = {0};
    ib_model_op_histogram(m, on_op, &h);
    ASSERT_UINT_EQ(count_of(&h, "Gather"), 2 * 26 + 1); /* column, lookup; interaction */
    ASSERT_UINT_EQ(count_of(&h, "MatMul"), 3 + 1 + 5);
    ASSERT_UINT_EQ(count_of(&h, "Relu"), 3 + 4);
    ASSERT_UINT_EQ(count_of(&h, "Concat"), 2);
    ASSERT_UINT_EQ(count_of(&h, "Sigmoid"), 1);
    /* hand count: weights + biases of 13-512-256-128 and 479-1024-1024-512-256-1 */
    uint64_t mlp = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128 + 479 * 1024 + 1024 +
                   1024 * 1024 + 1024 + 1024 * 512 + 512 + 512 * 256 + 256 + 256 + 1;
    ASSERT_UINT_EQ(mlp, 2368897);
    uint64_t rows = 0;
    for (size_t t = 0; t < IB_DLRM_TABLES; t++)
        rows += ib_dlrm_rows(t, 0, 1);
    ASSERT_UINT_EQ(rows, 17 * 1000 + 1369);
    ib_model_stats st;
    ASSERT_OK(ib_model_get_stats(m, &st));
    /* + 26 column scalars, 3 reshape dims, 351 interaction indices */
    ASSERT_UINT_EQ(st.param_count, mlp + rows * 128 + 26 + 3 + 351);
    ib_model_destroy(m);
}

static void run(ib_model *m, const char *backend, const float *dx, const int64_t *sx, int64_t n,
                float *out)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = backend;
    so.max_batch = 8;
    so.threads = 2;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    ib_tensor_view in[2] = {
        {.name = IB_DLRM_DENSE_INPUT, .desc = {IB_DTYPE_FLOAT32, 2, {n, 13}}, .data = (void *)(uintptr_t)dx},
        {.name = IB_DLRM_SPARSE_INPUT, .desc = {IB_DTYPE_INT64, 2, {n, 26}}, .data = (void *)(uintptr_t)sx}};
    ib_tensor_view ov = {.name = IB_DLRM_OUTPUT, .data = out, .capacity = (size_t)n * 4};
    ASSERT_OK_ERR(ib_session_run(s, in, 2, &ov, 1, &err), &err);
    ASSERT_INT_EQ(ov.desc.dims[0], n);
    ib_session_destroy(s);
}

TEST_TIMEOUT(dlrm_model_inference_consistent, 120)
{
    ib_model *m = tiny_dlrm();
    enum { N = 8 };
    float dx[N * 13], p[N], pref[N], p1;
    int64_t sx[N * 26];
    uint64_t x = 9;
    for (int i = 0; i < N * 13; i++) {
        x = x * 6364136223846793005ull + 1;
        dx[i] = (float)log1p((double)(x >> 54));
    }
    for (int i = 0; i < N; i++)
        for (int t = 0; t < 26; t++) {
            x = x * 6364136223846793005ull + 1;
            sx[i * 26 + t] = (int64_t)((x >> 33) % ib_dlrm_rows((size_t)t, 0, 1));
        }
    run(m, "cpu", dx, sx, N, p);
    run(m, "reference", dx, sx, N, pref);
    double spread = 0;
    for (int i = 0; i < N; i++) {
        ASSERT_TRUE(p[i] > 0.0f && p[i] < 1.0f);
        ASSERT_NEAR(p[i], pref[i], 1e-4);
        spread = fmax(spread, fabs((double)p[i] - (double)p[0]));
    }
    ASSERT_TRUE(spread > 1e-6); /* different inputs, different predictions */
    run(m, "cpu", dx + 3 * 13, sx + 3 * 26, 1, &p1);
    ASSERT_NEAR(p1, p[3], 1e-5);
    /* an id out of the (capped) table is an error, not a read past it */
    sx[26 + 9] = 5000;
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.max_batch = 8;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    ib_tensor_view in[2] = {
        {.name = IB_DLRM_DENSE_INPUT, .desc = {IB_DTYPE_FLOAT32, 2, {N, 13}}, .data = dx},
        {.name = IB_DLRM_SPARSE_INPUT, .desc = {IB_DTYPE_INT64, 2, {N, 26}}, .data = sx}};
    ib_tensor_view ov = {.name = IB_DLRM_OUTPUT, .data = p, .capacity = sizeof p};
    ASSERT_TRUE(ib_session_run(s, in, 2, &ov, 1, &err) != IB_OK);
    ib_session_destroy(s);
    ib_model_destroy(m);
}
