/*
 * test_runtime_oom.c - out-of-memory behaviour of the runtime: allocation
 * N = 0, 1, 2, ... fails until the call succeeds; every failure must return
 * a clean error (IB_ENOMEM or an error naming the allocation) and leave no
 * block behind, for model loading, compilation, session creation and the
 * first run at a new shape.
 */
#include <string.h>

#include "onnx/build.h"
#include "runtime/compile.h"
#include "runtime/model.h"
#include "test.h"
#include "test_runtime_helpers.h"

typedef int (*attempt_fn)(void *ctx, ib_err *err);
typedef void (*step_fn)(void *ctx);

/*
 * Run fn with allocation budgets 0, 1, 2, ... until it succeeds. setup (may
 * be NULL) runs before each attempt without a budget and teardown after it
 * (after undo on success), so objects that legitimately keep what an attempt
 * added (a model's derived-constant cache) are freed before the leak count.
 */
static int64_t oom_loop(attempt_fn fn, void *ctx, step_fn undo, bool need_msg, step_fn setup,
                        step_fn teardown)
{
    for (int64_t n = 0; n < 200000; n++) {
        ib_err err;
        memset(&err, 0, sizeof err);
        th_fail_after_begin(-1);
        if (setup) setup(ctx);
        th_fail_budget(n);
        int rc = fn(ctx, &err);
        bool hit = th_fail_after_hit();
        th_fail_budget(-1);
        if (rc == IB_OK) undo(ctx);
        if (teardown) teardown(ctx);
        int64_t leaked = th_fail_after_end();
        if (rc == IB_OK) {
            if (leaked != 0)
                ib_test_fail(__FILE__, __LINE__, "success left %lld blocks", (long long)leaked);
            return n;
        }
        if (!hit)
            ib_test_fail(__FILE__, __LINE__,
                         "budget %lld: failed without an allocation "
                         "failure: %s (%s)",
                         (long long)n, ib_err_name(rc), err.msg);
        if (need_msg && !err.msg[0])
            ib_test_fail(__FILE__, __LINE__, "budget %lld: %s without a message", (long long)n,
                         ib_err_name(rc));
        if (leaked != 0)
            ib_test_fail(__FILE__, __LINE__, "budget %lld: %s left %lld blocks behind (%s)",
                         (long long)n, ib_err_name(rc), (long long)leaked, err.msg);
    }
    ib_test_fail(__FILE__, __LINE__, "never succeeded");
}

typedef struct oom_ctx {
    const ib_graph *src;
    ib_graph *out;
    const void *bytes;
    size_t len;
    ib_model *model;
    const ib_model *m;
    ib_session *s;
    ib_model *owned; /* loaded by setup_model from bytes */
    ib_tensor_view in[2];
    ib_tensor_view outv;
    size_t n_in;
} oom_ctx;

static int do_load(void *p, ib_err *err)
{
    oom_ctx *c = p;
    return ib_model_load_memory(c->bytes, c->len, NULL, &c->model, err);
}

static void undo_load(void *p)
{
    oom_ctx *c = p;
    ib_model_destroy(c->model);
    c->model = NULL;
}

static int do_compile(void *p, ib_err *err)
{
    oom_ctx *c = p;
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.batch = 2;
    ib_dim_bind d = {"seq", 5};
    o.dims = &d;
    o.n_dims = 1;
    return ib_compile(c->src, &o, &c->out, NULL, err);
}

static void undo_compile(void *p)
{
    oom_ctx *c = p;
    ib_graph_destroy(c->out);
    c->out = NULL;
}

/* create a session and run it once (the run builds the variant) */
static int do_session(void *p, ib_err *err)
{
    oom_ctx *c = p;
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = "reference";
    o.max_batch = 2;
    int rc = ib_session_create(c->m, &o, &c->s, err);
    if (!rc) rc = ib_session_run(c->s, c->in, c->n_in, &c->outv, 1, err);
    if (rc) {
        ib_session_destroy(c->s);
        c->s = NULL;
    }
    return rc;
}

static void undo_session(void *p)
{
    oom_ctx *c = p;
    ib_session_destroy(c->s);
    c->s = NULL;
}

/* a fresh model per attempt: its cache keeps what an attempt folded */
static void setup_model(void *p)
{
    oom_ctx *c = p;
    ib_err err;
    if (ib_model_load_memory(c->bytes, c->len, NULL, &c->owned, &err))
        ib_test_fail(__FILE__, __LINE__, "load: %s", err.msg);
    c->m = c->owned;
}

static void teardown_model(void *p)
{
    oom_ctx *c = p;
    ib_model_destroy(c->owned);
    c->owned = NULL;
    c->m = NULL;
}

TEST_TIMEOUT(runtime_oom_load_compile_session, 600)
{
    th_fail_after_begin(-1); /* install before anything is allocated */
    ib_graph *g = th_finish(th_build_tiny_bert(3));
    oom_ctx c;
    memset(&c, 0, sizeof c);
    c.src = g;
    void *bytes;
    size_t len;
    ib_build *b = th_build_tiny_bert(3);
    ib_err err;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &bytes, &len, &err), &err);
    ib_build_destroy(b);
    c.bytes = bytes;
    c.len = len;
    int64_t n_load =
        oom_loop(do_load, &c, undo_load, false /* the loader's messages */, NULL, NULL);
    int64_t n_compile = oom_loop(do_compile, &c, undo_compile, true, NULL, NULL);
    ib_tensor_desc d[2] = {th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)5),
                           th_desc(IB_DTYPE_INT64, 2, (int64_t)2, (int64_t)5)};
    ib_tensor *in[2];
    th_random_inputs(g, d, 1, in);
    c.in[0] = (ib_tensor_view){"input_ids", d[0], in[0]->data, in[0]->nbytes};
    c.in[1] = (ib_tensor_view){"input_mask", d[1], in[1]->data, in[1]->nbytes};
    c.n_in = 2;
    static float out[2 * 5 * 16];
    c.outv = (ib_tensor_view){"hidden", {0}, out, sizeof out};
    int64_t n_session = oom_loop(do_session, &c, undo_session, true, setup_model, teardown_model);
    /* a model with static shapes compiles at create (variant, arenas, graph_compile) */
    ib_graph *rg = th_finish(th_build_tiny_resnet(2));
    b = th_build_tiny_resnet(2);
    void *rbytes;
    size_t rlen;
    ASSERT_OK_ERR(ib_build_write(b, NULL, &rbytes, &rlen, &err), &err);
    ib_build_destroy(b);
    oom_ctx r;
    memset(&r, 0, sizeof r);
    r.bytes = rbytes;
    r.len = rlen;
    ib_tensor_desc rd =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)1, (int64_t)3, (int64_t)16, (int64_t)16);
    ib_tensor *rin;
    th_random_inputs(rg, &rd, 1, &rin);
    r.in[0] = (ib_tensor_view){"image", rd, rin->data, rin->nbytes};
    r.n_in = 1;
    static float logits[10];
    r.outv = (ib_tensor_view){"logits", {0}, logits, sizeof logits};
    int64_t n_resnet = oom_loop(do_session, &r, undo_session, true, setup_model, teardown_model);
    printf("allocations: load %lld, compile %lld, bert session+run %lld, resnet %lld\n",
           (long long)n_load, (long long)n_compile, (long long)n_session, (long long)n_resnet);
    ASSERT_TRUE(n_load > 10 && n_compile > 10 && n_session > 10 && n_resnet > 10);
    ib_tensor_free(rin);
    ib_free(rbytes);
    ib_graph_destroy(rg);
    ib_tensor_free(in[0]);
    ib_tensor_free(in[1]);
    ib_free(bytes);
    ib_graph_destroy(g);
}
