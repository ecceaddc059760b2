/*
 * test_runtime_fed.c - ib_session_run_fed: inputs that take the previous run's output inside
 * the backend's memory (recurrent state; a GPU decoder's h and c stay on the device). An
 * accumulator (y = x + state, state <- y) over several runs; two states swapped through Neg
 * (each destination may be the other source's slot when the planner reuses in place: the
 * values then pass through the host; without in-place reuse they are device copies); the
 * errors (no previous run, unknown or doubly given names, other shapes) and that a rejected
 * call keeps the state.
 */
#include <math.h>
#include <string.h>

#include "onnx/build.h"
#include "runtime/session_impl.h"
#include "test.h"

static ib_model *model_of(ib_build *b)
{
    ib_graph *g = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_build_finish(b, &g, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_from_graph(g, &m, &err), &err);
    return m;
}

static ib_session *session_keeping(const ib_model *m, const char *backend, int64_t max_batch,
                                   bool keep_inputs)
{
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = backend;
    o.threads = 1;
    o.max_batch = max_batch;
    o.keep_inputs = keep_inputs;
    ib_session *s = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_session_create(m, &o, &s, &err), &err);
    return s;
}

static ib_session *session_on(const ib_model *m, const char *backend, int64_t max_batch)
{
    return session_keeping(m, backend, max_batch, false);
}

static ib_tensor_view view(const char *name, float *data, int64_t n, int64_t c)
{
    return (ib_tensor_view){.name = name, .desc = {IB_DTYPE_FLOAT32, 2, {n, c}}, .data = data,
                            .capacity = (size_t)(n * c) * sizeof(float)};
}

TEST(runtime_fed_accumulator_and_errors)
{
    static const char *const backends[] = {"cpu", "reference"};
    for (int k = 0; k < 2; k++) {
        ib_build *b = NULL;
        ASSERT_OK(ib_build_create(1, 13, &b));
        ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N,3");
        ib_value_id st = ib_build_input(b, "state", IB_DTYPE_FLOAT32, "N,3");
        ib_build_output(b, IB_BUILD_OP(b, "Add", "", x, st), "y", IB_DTYPE_FLOAT32, "N,3");
        ib_model *m = model_of(b);
        ib_session *s = session_on(m, backends[k], 4);
        float ones[12], zero[12] = {0}, y[12];
        for (int i = 0; i < 12; i++)
            ones[i] = 1.0f + (float)i;
        ib_tensor_view in[2] = {view("x", ones, 2, 3), view("state", zero, 2, 3)};
        ib_tensor_view out = view("y", y, 2, 3);
        ib_session_feed fb = {"state", "y", NULL};
        ib_err err;
        ib_err_clear(&err);
        /* nothing to take state from yet */
        ASSERT_STATUS(ib_session_run_fed(s, in, 1, &fb, 1, &out, 1, &err), IB_ESTATE);
        ASSERT_OK_ERR(ib_session_run(s, in, 2, &out, 1, &err), &err);
        for (int r = 2; r <= 4; r++) {
            ASSERT_OK_ERR(ib_session_run_fed(s, in, 1, &fb, 1, &out, 1, &err), &err);
            for (int i = 0; i < 6; i++)
                ASSERT_DBL_EQ(y[i], (double)r * (double)ones[i]);
        }
        /* rejected calls name what is wrong and keep the state */
        ib_session_feed bad_in = {"nope", "y", NULL}, bad_out = {"state", "nope", NULL};
        ASSERT_STATUS(ib_session_run_fed(s, in, 1, &bad_in, 1, &out, 1, &err), IB_ENOTFOUND);
        ASSERT_STR_CONTAINS(err.msg, "'nope'");
        ASSERT_STATUS(ib_session_run_fed(s, in, 1, &bad_out, 1, &out, 1, &err), IB_ENOTFOUND);
        ASSERT_STATUS(ib_session_run_fed(s, in, 2, &fb, 1, &out, 1, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "both fed and given");
        ASSERT_STATUS(ib_session_run_fed(s, in, 0, &fb, 1, &out, 1, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "missing input 'x'");
        ib_tensor_view other = view("x", ones, 4, 3);
        ASSERT_STATUS(ib_session_run_fed(s, &other, 1, &fb, 1, &out, 1, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "previous run's shapes");
        ASSERT_OK_ERR(ib_session_run_fed(s, in, 1, &fb, 1, &out, 1, &err), &err);
        ASSERT_DBL_EQ(y[5], 5.0 * (double)ones[5]);
        /* a run at other shapes is the new previous run */
        float y4[12];
        ib_tensor_view in4[2] = {view("x", ones, 4, 3), view("state", zero, 4, 3)};
        ib_tensor_view out4 = view("y", y4, 4, 3);
        ASSERT_OK_ERR(ib_session_run(s, in4, 2, &out4, 1, &err), &err);
        ASSERT_OK_ERR(ib_session_run_fed(s, in4, 1, &fb, 1, &out4, 1, &err), &err);
        ASSERT_DBL_EQ(y4[11], 2.0 * (double)ones[11]);
        ib_session_destroy(s);
        ib_model_destroy(m);
    }
}

/* a2 = -b, b2 = -a, fed a <- a2, b <- b2: after the first run (a0, b0) the fed runs give
 * (a0, b0), (-b0, -a0), ... */
static void swap_case(bool inplace)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id a = ib_build_input(b, "a", IB_DTYPE_FLOAT32, "N,8");
    ib_value_id bb = ib_build_input(b, "b", IB_DTYPE_FLOAT32, "N,8");
    /* three Negs a chain: an input's bytes are free after its chain's first step, so the
     * planner may give them to the other chain's output */
    ib_value_id na = a, nb = bb;
    for (int i = 0; i < 3; i++) {
        nb = IB_BUILD_OP(b, "Neg", "", nb);
        na = IB_BUILD_OP(b, "Neg", "", na);
    }
    ib_build_output(b, nb, "a2", IB_DTYPE_FLOAT32, "N,8");
    ib_build_output(b, na, "b2", IB_DTYPE_FLOAT32, "N,8");
    ib_model *m = model_of(b);
    ib_session *s = session_on(m, "cpu", 4);
    s->no_inplace = !inplace; /* the batch-2 variant below is planned so */
    float a0[16], b0[16], ya[16], yb[16];
    for (int i = 0; i < 16; i++) {
        a0[i] = (float)i + 0.5f;
        b0[i] = -100.0f - (float)i;
    }
    ib_tensor_view in[2] = {view("a", a0, 2, 8), view("b", b0, 2, 8)};
    ib_tensor_view out[2] = {view("a2", ya, 2, 8), view("b2", yb, 2, 8)};
    ib_session_feed fb[2] = {{"a", "a2", NULL}, {"b", "b2", NULL}};
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_session_run(s, in, 2, out, 2, &err), &err);
    for (int r = 1; r <= 3; r++) {
        ASSERT_OK_ERR(ib_session_run_fed(s, NULL, 0, fb, 2, out, 2, &err), &err);
        bool even = r % 2 == 1; /* the fed run after an odd number of swaps */
        for (int i = 0; i < 16; i++) {
            ASSERT_DBL_EQ(ya[i], even ? a0[i] : -b0[i]);
            ASSERT_DBL_EQ(yb[i], even ? b0[i] : -a0[i]);
        }
    }
    ib_session_destroy(s);
    ib_model_destroy(m);
}

TEST(runtime_fed_swapped_states)
{
    swap_case(true);
    swap_case(false);
}

/* keep_inputs: an input kept from run to run (a feed with output NULL) still holds its bytes,
 * though the plan without the option gives them to a later value (checked first, so the test
 * shows what the option changes); y = sigmoid(-x) + state accumulates over the fed runs. */
static ib_session *kept_session(const ib_model *m, const char *backend, bool keep)
{
    ib_session *s = session_keeping(m, backend, 2, keep);
    s->no_inplace = true; /* so Sigmoid's output is a slot of its own, born after x's last read */
    return s;
}

static bool slot_holds(ib_session *s, const float *want, size_t n)
{
    const ib_feed *f = &s->last_run->ins[0].feeds[0]; /* input 0 is x */
    float got[16];
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_session_read_slot(s, f->backend, f->offset, got, n * sizeof(float), &err),
                  &err);
    return memcmp(got, want, n * sizeof(float)) == 0;
}

TEST(runtime_fed_kept_inputs)
{
    static const char *const backends[] = {"cpu", "reference"};
    for (int k = 0; k < 2; k++) {
        ib_build *b = NULL;
        ASSERT_OK(ib_build_create(1, 13, &b));
        ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N,8");
        ib_value_id st = ib_build_input(b, "state", IB_DTYPE_FLOAT32, "N,8");
        ib_value_id n2 = IB_BUILD_OP(b, "Sigmoid", "", IB_BUILD_OP(b, "Neg", "", x));
        ib_build_output(b, IB_BUILD_OP(b, "Add", "", n2, st), "y", IB_DTYPE_FLOAT32, "N,8");
        ib_model *m = model_of(b);
        float x0[16], zero[16] = {0}, y[16];
        for (int i = 0; i < 16; i++)
            x0[i] = 0.25f * (float)i - 2.0f;
        ib_tensor_view in[2] = {view("x", x0, 2, 8), view("state", zero, 2, 8)};
        ib_tensor_view out = view("y", y, 2, 8);
        ib_session_feed fb[2] = {{"x", NULL, NULL}, {"state", "y", NULL}};
        ib_err err;
        ib_err_clear(&err);
        /* without the option x's bytes are another value's by the end of the run */
        ib_session *s = kept_session(m, backends[k], false);
        ASSERT_OK_ERR(ib_session_run(s, in, 2, &out, 1, &err), &err);
        ASSERT_FALSE(slot_holds(s, x0, 16));
        ASSERT_STATUS(ib_session_run_fed(s, NULL, 0, fb, 2, &out, 1, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "keep_inputs");
        ib_session_destroy(s);
        /* with it they stay x's, and the fed runs see x without being given it */
        s = kept_session(m, backends[k], true);
        ASSERT_OK_ERR(ib_session_run(s, in, 2, &out, 1, &err), &err);
        ASSERT_TRUE(slot_holds(s, x0, 16));
        for (int r = 2; r <= 4; r++) {
            ASSERT_OK_ERR(ib_session_run_fed(s, NULL, 0, fb, 2, &out, 1, &err), &err);
            for (int i = 0; i < 16; i++)
                ASSERT_NEAR(y[i], r / (1.0 + exp((double)x0[i])), 1e-6);
        }
        ASSERT_TRUE(slot_holds(s, x0, 16));
        /* a kept input that is also given is refused, as for any feed */
        ASSERT_STATUS(ib_session_run_fed(s, in, 1, fb, 2, &out, 1, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "both fed and given");
        ib_session_destroy(s);
        ib_model_destroy(m);
    }
}
