/*
 * test_runtime_gather_concat.c - embedding lookups + Concat -> inferbench.GatherConcat
 * (compile_fuse_embed.c, the reference kernel in ops/gather.c, the CPU kernel in
 * cpu_gather.c/cpu_kernels_copy.c): the fused session (cpu and reference backends) gives
 * exactly the unfused session's bytes with int32 and int64 ids, negative ids, a plain part
 * between lookups; near misses are left alone (one lookup only, a Gather read twice); an
 * out-of-range id fails the run naming the node; the DLRM builder's graph fuses its 26
 * lookups into one node.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "inferbench/base.h"
#include "inferbench/runtime.h"
#include "models/dlrm.h"
#include "models/models.h"
#include "onnx/build.h"
#include "test.h"

enum { N = 37, D0 = 5, D1 = 8, D2 = 3, R1 = 50, R2 = 7 };

/* y = Concat(x, Gather(T1, i1), Gather(T2, i2)[, Gather(T1, i1) again]) */
static ib_model *graph(bool ids32, bool reuse, bool one_lookup)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(3, 13, &b));
    enum ib_dtype it = ids32 ? IB_DTYPE_INT32 : IB_DTYPE_INT64;
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N,5");
    ib_value_id i1 = ib_build_input(b, "i1", it, "N");
    ib_value_id i2 = ib_build_input(b, "i2", it, "N");
    ib_value_id t1 = ib_build_weight(b, "t1", IB_DTYPE_FLOAT32, "50,8", ib_fill_uniform(-1, 1));
    ib_value_id t2 = ib_build_weight(b, "t2", IB_DTYPE_FLOAT32, "7,3", ib_fill_uniform(-1, 1));
    ib_value_id e1 = IB_BUILD_OP(b, "Gather", "axis=0", t1, i1);
    ib_value_id e2 = IB_BUILD_OP(b, "Gather", "axis=0", t2, i2);
    ib_value_id parts[4] = {e1, x, e2, e1};
    ib_value_id y = one_lookup ? IB_BUILD_OP(b, "Concat", "axis=1", x, e2)
                               : ib_build_op(b, "Concat", parts, reuse ? 4 : 3, "axis=-1");
    ib_build_output(b, y, "y", IB_DTYPE_FLOAT32, NULL);
    ib_err err;
    ASSERT_OK_ERR(ib_build_write_file(b, "g.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("g.onnx", NULL, &m, &err), &err);
    return m;
}

static ib_session *session_p(const ib_model *m, const char *backend, bool fuse,
                             enum ib_precision p)
{
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.precision = p;
    /* INT8 sessions calibrate: one batch of in-range inputs */
    static float cx[N * D0];
    static int64_t c1[N], c2[N];
    static ib_tensor_view cal[3];
    for (int i = 0; i < N; i++)
        c1[i] = i % R1, c2[i] = i % R2;
    cal[0] = (ib_tensor_view){.name = "x", .desc = {IB_DTYPE_FLOAT32, 2, {N, D0}}, .data = cx};
    cal[1] = (ib_tensor_view){.name = "i1", .desc = {IB_DTYPE_INT64, 1, {N}}, .data = c1};
    cal[2] = (ib_tensor_view){.name = "i2", .desc = {IB_DTYPE_INT64, 1, {N}}, .data = c2};
    if (p == IB_PRECISION_INT8) {
        o.calib_inputs = cal;
        o.calib_batches = 1;
        o.calib_input_count = 3;
    }
    o.backend = backend;
    o.threads = 2;
    o.first_cpu = -1;
    o.max_batch = N;
    o.disable_fusion = !fuse;
    ib_session *s = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_session_create(m, &o, &s, &err), &err);
    return s;
}

static ib_session *session(const ib_model *m, const char *backend, bool fuse)
{
    return session_p(m, backend, fuse, IB_PRECISION_FP32);
}

/* float32 -> bf16 -> float32 with round to nearest even (finite inputs). */
static float bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    memcpy(&f, &u, 4);
    return f;
}

static int run(ib_session *s, bool ids32, int64_t *i1, int64_t *i2, float *y,
               size_t cols, ib_err *err)
{
    float x[N * D0];
    int32_t a32[N], b32[N];
    for (int i = 0; i < N * D0; i++)
        x[i] = (float)i * 0.25f;
    for (int i = 0; i < N; i++)
        a32[i] = (int32_t)i1[i], b32[i] = (int32_t)i2[i];
    enum ib_dtype it = ids32 ? IB_DTYPE_INT32 : IB_DTYPE_INT64;
    ib_tensor_view in[3] = {
        {.name = "x", .desc = {IB_DTYPE_FLOAT32, 2, {N, D0}}, .data = x},
        {.name = "i1", .desc = {it, 1, {N}}, .data = ids32 ? (void *)a32 : (void *)i1},
        {.name = "i2", .desc = {it, 1, {N}}, .data = ids32 ? (void *)b32 : (void *)i2}};
    ib_tensor_view out = {.name = "y", .data = y, .capacity = N * cols * sizeof(float)};
    return ib_session_run(s, in, 3, &out, 1, err);
}

TEST(runtime_gather_concat_fuses_and_matches)
{
    int64_t i1[N], i2[N];
    for (int i = 0; i < N; i++) {
        i1[i] = (i * 17) % R1 - (i % 3 == 0 ? R1 : 0); /* some negative (from the end) */
        i2[i] = (i * 5 + 1) % R2;
    }
    for (int v = 0; v < 2; v++) {
        bool ids32 = v == 1;
        ib_model *m = graph(ids32, false, false);
        ib_session *ref = session(m, "cpu", false), *fc = session(m, "cpu", true),
                   *fr = session(m, "reference", true);
        ASSERT_STR_CONTAINS(ib_session_describe(fc), "GatherConcat 1,");
        size_t cols = D1 + D0 + D2;
        float a[N * (D1 + D0 + D2)], b[N * (D1 + D0 + D2)], c[N * (D1 + D0 + D2)];
        ib_err err;
        ASSERT_OK_ERR(run(ref, ids32, i1, i2, a, cols, &err), &err);
        memset(b, 0xff, sizeof b);
        ASSERT_OK_ERR(run(fc, ids32, i1, i2, b, cols, &err), &err);
        ASSERT_OK_ERR(run(fr, ids32, i1, i2, c, cols, &err), &err);
        ASSERT_TRUE(memcmp(a, b, sizeof a) == 0);
        ASSERT_TRUE(memcmp(a, c, sizeof a) == 0);
        /* the plain part sits between the lookups, unchanged */
        ASSERT_DBL_EQ(a[3 * cols + D1 + 2], (3 * D0 + 2) * 0.25);
        /* an id out of range: an error naming the node, not a wild read */
        int64_t bad[N];
        memcpy(bad, i1, sizeof bad);
        bad[20] = R1;
        ASSERT_INT_NE(run(fc, ids32, bad, i2, b, cols, &err), IB_OK);
        ASSERT_STR_CONTAINS(err.msg, "out of range");
        ib_session_destroy(ref);
        ib_session_destroy(fc);
        ib_session_destroy(fr);
        ib_model_destroy(m);
    }
}

/* BF16 precision: the tables are held as bf16 (rounded to nearest even), the plain part is
 * copied exactly. */
TEST(runtime_gather_concat_bf16_tables)
{
    int64_t i1[N], i2[N];
    for (int i = 0; i < N; i++) {
        i1[i] = (i * 13) % R1;
        i2[i] = (i * 3) % R2;
    }
    ib_model *m = graph(false, false, false);
    ib_session *ref = session(m, "cpu", false),
               *h = session_p(m, "cpu", true, IB_PRECISION_BF16);
    ASSERT_STR_CONTAINS(ib_session_describe(h), "GatherConcat 1,");
    size_t cols = D1 + D0 + D2;
    float a[N * (D1 + D0 + D2)], b[N * (D1 + D0 + D2)];
    ib_err err;
    ASSERT_OK_ERR(run(ref, false, i1, i2, a, cols, &err), &err);
    ASSERT_OK_ERR(run(h, false, i1, i2, b, cols, &err), &err);
    int changed = 0;
    for (size_t r = 0; r < N; r++)
        for (size_t c = 0; c < cols; c++) {
            float want = a[r * cols + c];
            bool plain = c >= D1 && c < D1 + D0;
            if (!plain)
                want = bf16_round(want);
            changed += want != a[r * cols + c];
            if (b[r * cols + c] != want)
                ib_test_fail(__FILE__, __LINE__, "row %zu col %zu: %.9g, want %.9g", r, c,
                             (double)b[r * cols + c], (double)want);
        }
    ASSERT_INT_GT(changed, N); /* the rounding did happen: random floats are not bf16 */
    ib_session_destroy(ref);
    ib_session_destroy(h);
    ib_model_destroy(m);
}

/* INT8 precision: row-wise 8-bit tables; each value within half a step (scale / 2) of the
 * fp32 row, the plain part exact, and a row's min and max reproduced (q = 0 and 255). */
TEST(runtime_gather_concat_int8_rowwise_tables)
{
    int64_t i1[N], i2[N];
    for (int i = 0; i < N; i++) {
        i1[i] = (i * 7) % R1;
        i2[i] = i % R2;
    }
    ib_model *m = graph(false, false, false);
    ib_session *ref = session(m, "cpu", false),
               *q = session_p(m, "cpu", true, IB_PRECISION_INT8);
    ASSERT_STR_CONTAINS(ib_session_describe(q), "GatherConcat 1,");
    size_t cols = D1 + D0 + D2;
    float a[N * (D1 + D0 + D2)], b[N * (D1 + D0 + D2)];
    ib_err err;
    ASSERT_OK_ERR(run(ref, false, i1, i2, a, cols, &err), &err);
    ASSERT_OK_ERR(run(q, false, i1, i2, b, cols, &err), &err);
    int inexact = 0;
    for (size_t r = 0; r < N; r++) {
        size_t parts[2][2] = {{0, D1}, {D1 + D0, cols}}; /* the two lookups' columns */
        for (int p = 0; p < 2; p++) {
            float lo = a[r * cols + parts[p][0]], hi = lo;
            for (size_t c = parts[p][0]; c < parts[p][1]; c++) {
                lo = a[r * cols + c] < lo ? a[r * cols + c] : lo;
                hi = a[r * cols + c] > hi ? a[r * cols + c] : hi;
            }
            float step = (hi - lo) / 255.0f;
            for (size_t c = parts[p][0]; c < parts[p][1]; c++) {
                double d = (double)b[r * cols + c] - (double)a[r * cols + c];
                inexact += d != 0;
                if (d > (double)step * 0.5 + 1e-6 || d < -((double)step * 0.5 + 1e-6))
                    ib_test_fail(__FILE__, __LINE__, "row %zu col %zu: %.9g vs %.9g (step %g)",
                                 r, c, (double)b[r * cols + c], (double)a[r * cols + c],
                                 (double)step);
            }
        }
        for (size_t c = D1; c < D1 + D0; c++)
            ASSERT_DBL_EQ(b[r * cols + c], a[r * cols + c]);
    }
    ASSERT_INT_GT(inexact, N); /* quantisation happened */
    ib_session_destroy(ref);
    ib_session_destroy(q);
    ib_model_destroy(m);
}

TEST(runtime_gather_concat_near_misses)
{
    ib_model *m = graph(false, true, false); /* e1 read twice by the Concat */
    ib_session *s = session(m, "cpu", true);
    /* e2 alone is one lookup: nothing to fuse */
    ASSERT_STR_CONTAINS(ib_session_describe(s), "GatherConcat 0,");
    ib_session_destroy(s);
    ib_model_destroy(m);
    m = graph(false, false, true);
    s = session(m, "cpu", true);
    ASSERT_STR_CONTAINS(ib_session_describe(s), "GatherConcat 0,");
    ib_session_destroy(s);
    ib_model_destroy(m);
}

TEST(runtime_gather_concat_dlrm_lookups_fuse)
{
    ib_build *b = NULL;
    ib_models_opts o = {.seed = 1, .tiny = true};
    ib_err err;
    ASSERT_OK_ERR(ib_models_dlrm(&o, 1000, &b, &err), &err);
    ASSERT_OK_ERR(ib_build_write_file(b, "d.onnx", NULL, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_load_file("d.onnx", NULL, &m, &err), &err);
    ib_session *s = session(m, "cpu", true);
    const char *d = ib_session_describe(s);
    ASSERT_STR_CONTAINS(d, "GatherConcat 1,");
    ib_session_destroy(s);
    ib_model_destroy(m);
}

/* The row-wise 8-bit table row (ib_q8_row, shared by the cpu's GatherConcat and the cuda
 * Gather at int8): its bytes, its rounding, a constant row, non-finite rows refused. */
TEST(backend_q8_row_bytes)
{
    const float x[5] = {-1.0f, 0.0f, 0.5f, 3.0f, 2.9f};
    uint8_t o[5 + IB_Q8_ROW_EXTRA];
    ASSERT_TRUE(ib_q8_row(x, 5, o));
    float scale, bias;
    memcpy(&scale, o + 5, 4);
    memcpy(&bias, o + 9, 4);
    ASSERT_DBL_EQ(bias, -1.0f);
    ASSERT_DBL_EQ(scale, 4.0f / 255.0f);
    ASSERT_UINT_EQ(o[0], 0);
    ASSERT_UINT_EQ(o[3], 255); /* 255.5 saturates */
    ASSERT_UINT_EQ(o[1], (uint8_t)(1.0f * (1.0f / scale) + 0.5f));
    for (int w = 0; w < 5; w++) {
        float back = (float)o[w] * scale + bias;
        ASSERT_TRUE(fabsf(back - x[w]) <= scale * 0.5f + 1e-6f);
    }
    const float c[3] = {2.0f, 2.0f, 2.0f};
    ASSERT_TRUE(ib_q8_row(c, 3, o));
    memcpy(&scale, o + 3, 4);
    memcpy(&bias, o + 7, 4);
    ASSERT_DBL_EQ(scale, 0.0f);
    ASSERT_DBL_EQ(bias, 2.0f);
    ASSERT_UINT_EQ(o[0], 0);
    ASSERT_DBL_EQ((float)o[2] * scale + bias, 2.0f);
    float bad[3] = {1.0f, NAN, 2.0f};
    ASSERT_FALSE(ib_q8_row(bad, 3, o));
    bad[1] = INFINITY;
    ASSERT_FALSE(ib_q8_row(bad, 3, o));
    ASSERT_TRUE(ib_q8_row(x, 0, o)); /* an empty row: scale and bias 0 */
    memcpy(&scale, o, 4);
    ASSERT_DBL_EQ(scale, 0.0f);
}
