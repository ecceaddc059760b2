/*
 * test_session_profile.c - per-node profiles of a session's runs (ib_session_set_profiling,
 * ib_session_profile, ib_profile_write; issue 30): the cpu backend times every step, the
 * reference backend's subgraph is one entry, the entries fit inside the runs' wall time,
 * and turning profiling off stops and clears the record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inferbench/runtime.h"
#include "onnx/build.h"
#include "test.h"
#include "test_runtime_helpers.h"

typedef struct fixture {
    ib_model *m;
    ib_tensor *in;
    float logits[2 * 10];
} fixture;

static void setup(fixture *f)
{
    memset(f, 0, sizeof *f);
    ib_graph *g = th_finish(th_build_tiny_resnet(3));
    ib_build *b = th_build_tiny_resnet(3);
    void *bytes;
    size_t len;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_build_write(b, NULL, &bytes, &len, &err), &err);
    ib_build_destroy(b);
    ASSERT_OK_ERR(ib_model_load_memory(bytes, len, NULL, &f->m, &err), &err);
    ib_free(bytes);
    ib_tensor_desc d = th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16, (int64_t)16);
    th_random_inputs(g, &d, 5, &f->in);
    ib_graph_destroy(g);
}

static int run(ib_session *s, fixture *f)
{
    ib_tensor_view in = {"image", f->in->desc, f->in->data, f->in->nbytes};
    ib_tensor_view out = {"logits", {0}, f->logits, sizeof f->logits};
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_session_run(s, &in, 1, &out, 1, &err);
    if (rc)
        ib_test_fail(__FILE__, __LINE__, "run: %s", err.msg);
    return rc;
}

static ib_session *session(const fixture *f, const char *backend)
{
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = backend;
    so.threads = 1;
    so.max_batch = 2;
    ib_session *s = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_session_create(f->m, &so, &s, &err), &err);
    return s;
}

TEST(runtime_profile_cpu_times_every_step)
{
    const char *why = NULL;
    if (!ib_backend_available("cpu", &why))
        TEST_SKIP(why);
    fixture f;
    setup(&f);
    ib_session *s = session(&f, "cpu");
    run(s, &f); /* compiled and warm, not profiled */
    ib_profile p;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_session_profile(s, &p, &err), &err);
    ASSERT_INT_EQ(p.runs, 0);
    ASSERT_INT_EQ(p.n, 0);
    ib_profile_free(&p);
    ASSERT_OK(ib_session_set_profiling(s, true));
    for (int i = 0; i < 4; i++)
        run(s, &f);
    ASSERT_OK_ERR(ib_session_profile(s, &p, &err), &err);
    ASSERT_INT_EQ(p.runs, 4);
    ASSERT_TRUE(p.n >= 5);
    int64_t sum = 0;
    int convs = 0, nodes = 0;
    for (size_t i = 0; i < p.n; i++) {
        const ib_profile_entry *e = &p.entries[i];
        ASSERT_INT_EQ(e->runs, 4);
        ASSERT_TRUE(e->ns >= 0);
        ASSERT_STR_EQ(e->backend, "cpu");
        sum += e->ns;
        nodes += e->node != NULL;
        convs += strstr(e->op_type, "Conv") != NULL;
    }
    ASSERT_TRUE(convs >= 2);
    ASSERT_TRUE(nodes >= 3);
    ASSERT_TRUE(sum > 0 && sum <= p.run_ns); /* the steps happen inside the runs */
    FILE *out = fopen("profile.txt", "w");
    ASSERT_NOT_NULL(out);
    ib_profile_write(&p, 5, out);
    fclose(out);
    ib_profile_free(&p);
    char *t = ib_test_slurp("profile.txt");
    printf("%s", t);
    ASSERT_STR_CONTAINS(t, "profile: 4 runs");
    ASSERT_STR_CONTAINS(t, "(session, between steps)");
    ASSERT_STR_CONTAINS(t, "slowest 5 steps:");
    ASSERT_STR_CONTAINS(t, "Conv");
    free(t);
    /* off: nothing more is recorded, and the record is cleared */
    ASSERT_OK(ib_session_set_profiling(s, false));
    run(s, &f);
    ASSERT_OK_ERR(ib_session_profile(s, &p, &err), &err);
    ASSERT_INT_EQ(p.runs, 0);
    ASSERT_INT_EQ(p.n, 0);
    ib_profile_free(&p);
    /* a new shape compiled while profiling is profiled too */
    ASSERT_OK(ib_session_set_profiling(s, true));
    ib_tensor_view in1 = {"image", f.in->desc, f.in->data, f.in->nbytes / 2};
    in1.desc.dims[0] = 1;
    ib_tensor_view out1 = {"logits", {0}, f.logits, sizeof f.logits};
    ASSERT_OK_ERR(ib_session_run(s, &in1, 1, &out1, 1, &err), &err);
    ASSERT_OK_ERR(ib_session_profile(s, &p, &err), &err);
    ASSERT_INT_EQ(p.runs, 1);
    ASSERT_TRUE(p.n >= 5);
    ib_profile_free(&p);
    ib_session_destroy(s);
    ib_tensor_free(f.in);
    ib_model_destroy(f.m);
}

/* A backend without per-step timing: its subgraph is one entry. */
TEST(runtime_profile_reference_is_one_subgraph)
{
    fixture f;
    setup(&f);
    ib_session *s = session(&f, "reference");
    ASSERT_OK(ib_session_set_profiling(s, true));
    run(s, &f);
    run(s, &f);
    ib_profile p;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_session_profile(s, &p, &err), &err);
    ASSERT_INT_EQ(p.runs, 2);
    ASSERT_INT_EQ(p.n, 1);
    ASSERT_STR_EQ(p.entries[0].op_type, "subgraph");
    ASSERT_STR_EQ(p.entries[0].backend, "reference");
    ASSERT_TRUE(p.entries[0].ns > 0 && p.entries[0].ns <= p.run_ns);
    ib_profile_free(&p);
    ASSERT_INT_EQ(ib_session_set_profiling(NULL, true), IB_EINVAL);
    ASSERT_INT_EQ(ib_session_profile(NULL, &p, &err), IB_EINVAL);
    ib_session_destroy(s);
    ib_tensor_free(f.in);
    ib_model_destroy(f.m);
}
