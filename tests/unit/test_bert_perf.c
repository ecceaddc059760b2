/*
 * test_bert_perf.c - the runtime work BERT's performance needs, each checked against the
 * path without it:
 *   - converted weights stored once per session: a second sequence length (a new compiled
 *     variant) reuses the fp32/bf16 weights converted for the first one; the outputs equal a
 *     fresh session's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "onnx/build.h"
#include "test.h"

enum { K = 512, N = 1024 };

/* x [1, seq, K] -> MatMul(W [K, N]) + bias, seq symbolic. */
static ib_model *matmul_model(void)
{
    ib_build *b = NULL;
    ib_err err;
    ASSERT_OK(ib_build_create(5, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "1,seq,512");
    ib_value_id w = ib_build_weight(b, "w", IB_DTYPE_FLOAT32, "512,1024", ib_fill_normal(0, 0.1));
    ib_value_id bias = ib_build_weight(b, "b", IB_DTYPE_FLOAT32, "1024", ib_fill_normal(0, 0.1));
    ib_value_id y = IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "MatMul", "", x, w), bias);
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, "1,seq,1024");
    char path[512];
    snprintf(path, sizeof path, "%s/mm.onnx", ib_test_tmpdir());
    ASSERT_OK_ERR(ib_build_write_file(b, path, NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file(path, NULL, &m, &err), &err);
    return m;
}

static size_t g_bytes; /* bytes of new allocations while counting */

static void *counting(void *user, void *ptr, size_t old, size_t n)
{
    IB_UNUSED(user);
    IB_UNUSED(old);
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    g_bytes += n;
    return realloc(ptr, n);
}

static ib_session *session(const ib_model *m, enum ib_precision p)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.threads = 1;
    so.precision = p;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &so, &s, &err), &err);
    return s;
}

/* Run at seq; returns the bytes allocated during the run. */
static size_t run_seq(ib_session *s, int64_t seq, const float *x, float *y)
{
    ib_tensor_view in = {.name = "x", .desc = {IB_DTYPE_FLOAT32, 3, {1, seq, K}},
                         .data = (void *)(uintptr_t)x};
    ib_tensor_view out = {.name = "y", .data = y, .capacity = (size_t)seq * N * 4};
    ib_err err;
    g_bytes = 0;
    ib_alloc_set(counting, NULL);
    int rc = ib_session_run(s, &in, 1, &out, 1, &err);
    ib_alloc_set(NULL, NULL);
    ASSERT_OK_ERR(rc, &err);
    return g_bytes;
}

TEST(bert_cpu_weights_converted_once_per_session)
{
    if (!ib_backend_available("cpu", NULL))
        TEST_SKIP("no cpu backend in this build");
    ib_model *m = matmul_model();
    static float x[32 * K], y1[32 * N], y2[32 * N];
    for (int i = 0; i < 32 * K; i++)
        x[i] = sinf(0.37f * (float)i);
    const size_t w_bf16 = (size_t)K * N * 2, w_f32 = (size_t)K * N * 4;
    for (int pi = 0; pi < 2; pi++) {
        enum ib_precision p = pi ? IB_PRECISION_BF16 : IB_PRECISION_FP32;
        ib_session *s = session(m, p);
        /* the longer one first, so the second variant fits the arena (no regrowth) */
        size_t first = run_seq(s, 16, x, y2);
        size_t second = run_seq(s, 8, x, y1);
        printf("# %s: first variant %zu bytes, second %zu bytes (weights %zu f32)\n",
               ib_precision_name(p), first, second, w_f32);
        /* converted once into oneDNN's blocked layout (the [1, seq, K] x [K, N] product runs
         * as one 2-D GEMM) ... */
        ASSERT_UINT_GE(first, p == IB_PRECISION_FP32 ? w_f32 : w_bf16);
        ASSERT_UINT_LE(second, w_bf16 / 2); /* ... and not again for seq 8 */
        ib_session *fresh = session(m, p);
        run_seq(fresh, 8, x, y2);
        ASSERT_INT_EQ(memcmp(y1, y2, (size_t)8 * N * 4), 0);
        ib_session_destroy(fresh);
        ib_session_destroy(s);
    }
    ib_model_destroy(m);
}
