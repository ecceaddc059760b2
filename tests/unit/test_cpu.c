/*
 * test_cpu.c - the backend registry and checked wrappers (NULL optional
 * entries, bad tables, bad arguments, bad bindings), and the CPU backend's
 * contracts: thread pinning that leaves the caller's mask as it was,
 * allocation-free graph_run, clean failures under allocation faults,
 * precision refusals, plan_bytes, in-place elementwise storage, run-time
 * index errors. Op numerics are in tests/conformance/test_backend_ops*.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dnnl.h>
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_impl.h" /* a fake backend of its own */
#include "base/thread.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* The runner leaves with _exit(), which skips LeakSanitizer: check here. */
#define LEAK_CHECK() __lsan_do_leak_check()
#else
#define LEAK_CHECK() ((void)0)
#endif

/* ---- a tiny graph: y = Relu(x) (+ optional z = Neg... ) ----------------------- */

typedef struct tiny {
    ib_graph *g;
    ib_value_id x, y;
    ib_tensor_desc d;
} tiny;

static void tiny_make(tiny *t, const char *op, int64_t n)
{
    ASSERT_OK(ib_graph_create(&t->g));
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 2, {1, n}};
    t->d = d;
    t->x = ib_graph_add_value(t->g, "x", &d);
    t->y = ib_graph_add_value(t->g, "y", &d);
    ASSERT_INT_GE(ib_graph_add_node(t->g, op, "", "n0", &t->x, 1, &t->y, 1, NULL, 0), 0);
    IB_VEC_PUSH(&t->g->inputs, t->x);
    IB_VEC_PUSH(&t->g->outputs, t->y);
    ib_err err;
    ASSERT_OK_ERR(ib_graph_toposort(t->g, &err), &err);
}

/* Bindings of x and y in buf at offsets ox, oy. */
static void tiny_bind(const tiny *t, ib_backend_buffer *buf, size_t ox, size_t oy,
                      ib_backend_binding *bd)
{
    memset(bd, 0, 2 * sizeof *bd);
    size_t n = ib_tensor_desc_nbytes(&t->d);
    bd[0] = (ib_backend_binding){.value = t->x, .desc = t->d, .buffer = buf, .offset = ox,
                                 .nbytes = n, .boundary = true};
    bd[1] = (ib_backend_binding){.value = t->y, .desc = t->d, .buffer = buf, .offset = oy,
                                 .nbytes = n, .boundary = true};
}

/* ---- registry ------------------------------------------------------------------ */

TEST(cpu_registry_lists_backends)
{
    size_t n = ib_backend_count();
    bool cpu = false, ref = false;
    for (size_t i = 0; i < n; i++) {
        cpu |= strcmp(ib_backend_name_at(i), "cpu") == 0;
        ref |= strcmp(ib_backend_name_at(i), "reference") == 0;
    }
    ASSERT_TRUE(cpu && ref);
    ASSERT_NULL(ib_backend_name_at(n));
    ASSERT_NULL(ib_backend_find(NULL));
    ASSERT_NULL(ib_backend_find("no-such"));
    const char *why = NULL;
    ASSERT_TRUE(ib_backend_available("cpu", &why));
    ASSERT_TRUE(ib_backend_available("reference", NULL));
    ASSERT_FALSE(ib_backend_available("no-such", &why));
    ASSERT_STR_CONTAINS(why, "not compiled in");
    ib_backend *b = NULL;
    ib_err err;
    ASSERT_STATUS(ib_backend_create("no-such", NULL, &b, &err), IB_ENOTFOUND);
    ASSERT_NULL(b);
    ASSERT_STR_CONTAINS(err.msg, "no-such");
}

/* ---- a fake backend with only the required entries ------------------------------ */

static int fake_runs;

static int fk_create(const ib_backend_config *cfg, void **ctx, ib_err *err)
{
    IB_UNUSED(cfg);
    IB_UNUSED(err);
    *ctx = &fake_runs;
    return IB_OK;
}

static void fk_destroy(void *ctx)
{
    IB_UNUSED(ctx);
}

static bool fk_supports(void *ctx, const ib_graph *g, const ib_node *n,
                        const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(ctx);
    IB_UNUSED(g);
    IB_UNUSED(in);
    IB_UNUSED(p);
    return strcmp(n->op_type, "Identity") == 0;
}

static int fk_alloc(void *ctx, size_t n, void **impl, void **host, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(err);
    /* 64-byte aligned so the wrappers' alignment rule holds */
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    *impl = *host = p;
    return p ? IB_OK : IB_ENOMEM;
}

static void fk_free(void *ctx, void *impl)
{
    IB_UNUSED(ctx);
    free(impl);
}

/* No graph_compile: run interprets the subgraph (Identity: copy x to y). */
static int fk_run(void *ctx, ib_backend_exec *exec, const ib_backend_subgraph *sg, ib_err *err)
{
    IB_UNUSED(err);
    ASSERT_NULL(exec);
    (*(int *)ctx)++;
    const ib_backend_binding *x = &sg->bindings[0], *y = &sg->bindings[1];
    memcpy((char *)y->buffer->host_ptr + y->offset, (char *)x->buffer->host_ptr + x->offset,
           x->nbytes);
    return IB_OK;
}

static const struct ib_backend_ops fake_ops = {
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "fake",
    .create = fk_create,
    .destroy = fk_destroy,
    .supports_op = fk_supports,
    .buffer_alloc = fk_alloc,
    .buffer_free = fk_free,
    .graph_run = fk_run,
};

TEST(cpu_wrappers_null_optional_entries)
{
    ib_backend *b;
    ib_err err;
    ASSERT_OK_ERR(ib_backend_create_from_ops(&fake_ops, NULL, &b, &err), &err);
    ASSERT_STR_EQ(ib_backend_get_name(b), "fake");
    ASSERT_INT_EQ(ib_backend_get_config(b)->first_cpu, -1);
    tiny t;
    tiny_make(&t, "Identity", 10);
    /* plan_bytes NULL: the plain size */
    ASSERT_UINT_EQ(ib_backend_plan_bytes(b, &t.d), 40);
    ib_backend_buffer *buf;
    ASSERT_OK(ib_backend_buffer_alloc(b, 256, &buf, &err));
    float in[10], out[10];
    for (int i = 0; i < 10; i++)
        in[i] = (float)i * 1.5f;
    /* tensor_set/get NULL on a host buffer: memcpy */
    ASSERT_OK(ib_backend_tensor_set(buf, 0, in, sizeof in, &err));
    ib_backend_binding bd[2];
    tiny_bind(&t, buf, 0, 128, bd);
    ib_node_id nid = 0;
    ib_backend_subgraph sg = {.graph = t.g, .nodes = &nid, .n_nodes = 1, .bindings = bd,
                              .n_bindings = 2};
    ib_backend_graph *gr;
    ASSERT_OK_ERR(ib_backend_graph_compile(b, &sg, &gr, &err), &err);
    memset(bd, 0, sizeof bd); /* the wrapper kept its own copy */
    ASSERT_OK(ib_backend_graph_run(gr, &err));
    ASSERT_OK(ib_backend_synchronize(b, &err)); /* NULL synchronize: synchronous */
    ASSERT_INT_EQ(fake_runs, 1);
    ASSERT_OK(ib_backend_tensor_get(buf, 128, out, sizeof out, &err));
    ASSERT_MEM_EQ(in, out, sizeof in);
    ib_tensor_desc got;
    ASSERT_OK(ib_backend_graph_value_desc(gr, t.y, &got)); /* NULL value_desc: bound desc */
    ASSERT_TRUE(ib_tensor_desc_equal(&got, &t.d));
    ASSERT_STATUS(ib_backend_graph_value_desc(gr, 99, &got), IB_ENOTFOUND);
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    ib_backend_graph_free(NULL);
    ib_backend_buffer_free(NULL);
    ib_backend_destroy(b);
    ib_backend_destroy(NULL);
    ib_graph_destroy(t.g);
    LEAK_CHECK();
}

TEST(cpu_wrappers_reject_bad_tables)
{
    ib_backend *b = NULL;
    ib_err err;
    struct ib_backend_ops ops = fake_ops;
    ops.abi_version = IB_BACKEND_ABI_VERSION + 1;
    ASSERT_STATUS(ib_backend_create_from_ops(&ops, NULL, &b, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "ABI version");
    ops = fake_ops;
    ops.abi_version = 0;
    ASSERT_STATUS(ib_backend_create_from_ops(&ops, NULL, &b, &err), IB_EUNSUPPORTED);
    ops = fake_ops;
    ops.create = NULL;
    ASSERT_STATUS(ib_backend_create_from_ops(&ops, NULL, &b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'create'");
    ops = fake_ops;
    ops.graph_run = NULL;
    ASSERT_STATUS(ib_backend_create_from_ops(&ops, NULL, &b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'graph_run'");
    ops = fake_ops;
    ops.graph_compile = (int (*)(void *, const ib_backend_subgraph *, ib_backend_exec **,
                                 ib_err *))1; /* never called: graph_free is missing */
    ASSERT_STATUS(ib_backend_create_from_ops(&ops, NULL, &b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'graph_free'");
    ASSERT_STATUS(ib_backend_create_from_ops(NULL, NULL, &b, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_create_from_ops(&fake_ops, NULL, NULL, &err), IB_EINVAL);
    ASSERT_NULL(b);
}

/* ABI 6 host memory: a table with host_alloc gets every allocation and free through it
 * (and a NULL or unaligned answer is refused); a table without it, and the cpu and reference
 * backends, get ordinary 64-byte aligned memory from the wrappers. */
static int g_host_allocs, g_host_frees;
static uintptr_t g_host_misalign;

static int fk_host_alloc(void *ctx, size_t n, void **p, ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(err);
    g_host_allocs++;
    unsigned char *a = aligned_alloc(64, (n + 64 + 63) / 64 * 64);
    *p = a ? a + g_host_misalign : NULL;
    return a ? IB_OK : IB_ENOMEM;
}

static void fk_host_free(void *ctx, void *p)
{
    IB_UNUSED(ctx);
    g_host_frees++;
    free((unsigned char *)p - g_host_misalign);
}

TEST(cpu_wrappers_host_memory)
{
    ib_err err;
    struct ib_backend_ops ops = fake_ops;
    ops.host_alloc = fk_host_alloc;
    ops.host_free = fk_host_free;
    ib_backend *b = NULL;
    ASSERT_OK_ERR(ib_backend_create_from_ops(&ops, NULL, &b, &err), &err);
    g_host_allocs = g_host_frees = 0;
    g_host_misalign = 0;
    void *p = NULL;
    ASSERT_OK_ERR(ib_backend_host_alloc(b, 1000, &p, &err), &err);
    ASSERT_INT_EQ(g_host_allocs, 1);
    memset(p, 7, 1000);
    ib_backend_host_free(b, p);
    ASSERT_INT_EQ(g_host_frees, 1);
    g_host_misalign = 8; /* the wrapper checks the 64-byte promise and frees the block */
    ASSERT_STATUS(ib_backend_host_alloc(b, 100, &p, &err), IB_EBACKEND);
    ASSERT_STR_CONTAINS(err.msg, "not 64-byte aligned");
    ASSERT_NULL(p);
    ASSERT_INT_EQ(g_host_frees, 2);
    g_host_misalign = 0;
    ASSERT_STATUS(ib_backend_host_alloc(b, 0, &p, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_host_alloc(b, SIZE_MAX, &p, &err), IB_EINVAL);
    ib_backend_host_free(b, NULL);
    ASSERT_INT_EQ(g_host_frees, 2);
    ib_backend_destroy(b);
    /* one without the other is a bad table */
    ops.host_free = NULL;
    ASSERT_STATUS(ib_backend_create_from_ops(&ops, NULL, &b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'host_free'");
    /* an ABI 5 table's trailing fields are not read */
    ops.abi_version = 5;
    ASSERT_OK_ERR(ib_backend_create_from_ops(&ops, NULL, &b, &err), &err);
    ASSERT_OK_ERR(ib_backend_host_alloc(b, 10, &p, &err), &err);
    ASSERT_INT_EQ(g_host_allocs, 2); /* the one refused above; not this one */
    ASSERT_UINT_EQ((uintptr_t)p & 63, 0);
    ib_backend_host_free(b, p);
    ib_backend_destroy(b);
    static const char *const names[] = {"cpu", "reference"};
    for (int k = 0; k < 2; k++) {
        ASSERT_OK_ERR(ib_backend_create(names[k], NULL, &b, &err), &err);
        for (size_t n = 1; n < (1u << 22); n = n * 7 + 3) {
            unsigned char *q = NULL;
            ASSERT_OK_ERR(ib_backend_host_alloc(b, n, (void **)&q, &err), &err);
            ASSERT_UINT_EQ((uintptr_t)q & 63, 0);
            memset(q, 0xa5, n);
            ib_backend_host_free(b, q);
        }
        ib_backend_destroy(b);
    }
    LEAK_CHECK();
}

TEST(cpu_wrappers_bad_arguments)
{
    ib_backend *b = NULL, *other = NULL;
    ib_err err;
    ib_backend_config cfg;
    ib_backend_config_defaults(&cfg);
    cfg.threads = -1;
    ASSERT_STATUS(ib_backend_create("cpu", &cfg, &b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "threads");
    ib_backend_config_defaults(&cfg);
    cfg.first_cpu = -2;
    ASSERT_STATUS(ib_backend_create("cpu", &cfg, &b, &err), IB_EINVAL);
    ib_backend_config_defaults(&cfg);
    cfg.first_cpu = ib_cpu_count(); /* one past the mask */
    ASSERT_STATUS(ib_backend_create("cpu", &cfg, &b, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "first_cpu");
    ib_backend_config_defaults(&cfg);
    cfg.precision = (enum ib_precision)42;
    ASSERT_STATUS(ib_backend_create("cpu", &cfg, &b, &err), IB_EINVAL);
    ASSERT_NULL(b);

    ASSERT_OK(ib_backend_create("cpu", NULL, &b, &err));
    ASSERT_OK(ib_backend_create("reference", NULL, &other, &err));
    ib_backend_buffer *buf, *obuf;
    ASSERT_STATUS(ib_backend_buffer_alloc(b, 0, &buf, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_buffer_alloc(NULL, 64, &buf, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_buffer_alloc(b, 64, NULL, &err), IB_EINVAL);
    ASSERT_OK(ib_backend_buffer_alloc(b, 1024, &buf, &err));
    ASSERT_OK(ib_backend_buffer_alloc(other, 1024, &obuf, &err));
    ASSERT_UINT_EQ(ib_backend_buffer_size(buf), 1024);
    ASSERT_UINT_EQ((uintptr_t)ib_backend_buffer_host_ptr(buf) % IB_BACKEND_ALIGN, 0);
    char host[64] = {0};
    ASSERT_STATUS(ib_backend_tensor_set(buf, 1000, host, 64, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "exceed");
    ASSERT_STATUS(ib_backend_tensor_get(buf, SIZE_MAX, host, 2, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_tensor_get(buf, 0, NULL, 2, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_tensor_set(NULL, 0, host, 2, &err), IB_EINVAL);
    ASSERT_OK(ib_backend_tensor_set(buf, 960, host, 64, &err));

    tiny t;
    tiny_make(&t, "Relu", 16);
    ASSERT_FALSE(ib_backend_supports_op(b, t.g, NULL, NULL, IB_PRECISION_FP32));
    ASSERT_FALSE(ib_backend_supports_op(NULL, t.g, &t.g->nodes.data[0], NULL, IB_PRECISION_FP32));
    ib_backend_binding bd[2];
    ib_node_id nid = 0;
    ib_backend_subgraph sg = {.graph = t.g, .nodes = &nid, .n_nodes = 1, .bindings = bd,
                              .n_bindings = 2};
    ib_backend_graph *gr = NULL;
    ASSERT_STATUS(ib_backend_graph_compile(b, NULL, &gr, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_graph_compile(NULL, &sg, &gr, &err), IB_EINVAL);
    /* y not bound */
    tiny_bind(&t, buf, 0, 128, bd);
    sg.n_bindings = 1;
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'y' is not bound");
    sg.n_bindings = 2;
    /* misaligned, too small, outside the buffer, another backend's buffer, bound twice */
    tiny_bind(&t, buf, 0, 100, bd);
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "multiple of 64");
    tiny_bind(&t, buf, 0, 128, bd);
    bd[1].nbytes = 8;
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "reserves 8 bytes");
    tiny_bind(&t, buf, 0, 1024, bd);
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "exceeds");
    tiny_bind(&t, obuf, 0, 128, bd);
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "backend 'reference'");
    tiny_bind(&t, buf, 0, 128, bd);
    bd[1].value = t.x;
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "bound twice");
    /* a dynamic desc, a dead node */
    tiny_bind(&t, buf, 0, 128, bd);
    bd[0].desc.dims[1] = IB_DIM_DYNAMIC;
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "non-concrete");
    tiny_bind(&t, buf, 0, 128, bd);
    t.g->nodes.data[0].dead = true;
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EINVAL);
    ASSERT_FALSE(ib_backend_supports_op(b, t.g, &t.g->nodes.data[0], NULL, IB_PRECISION_FP32));
    t.g->nodes.data[0].dead = false;
    ASSERT_NULL(gr);
    ASSERT_STATUS(ib_backend_graph_run(NULL, &err), IB_EINVAL);
    ASSERT_STATUS(ib_backend_synchronize(NULL, &err), IB_EINVAL);
    ib_backend_buffer_free(buf);
    ib_backend_buffer_free(obuf);
    ib_backend_destroy(b);
    ib_backend_destroy(other);
    ib_graph_destroy(t.g);
    LEAK_CHECK();
}

/* ---- CPU backend contracts -------------------------------------------------------- */

/* Compile y = op(x) over n floats on backend name; returns the buffer. */
static ib_backend_graph *compile_tiny(ib_backend *b, tiny *t, const char *op, int64_t n,
                                      ib_backend_buffer **buf, bool inplace)
{
    tiny_make(t, op, n);
    ib_err err;
    ASSERT_OK(ib_backend_buffer_alloc(b, 2 * (size_t)n * 4 + 128, buf, &err));
    ib_backend_binding bd[2];
    tiny_bind(t, *buf, 0, inplace ? 0 : ((size_t)n * 4 + 63) / 64 * 64, bd);
    ib_node_id nid = 0;
    ib_backend_subgraph sg = {.graph = t->g, .nodes = &nid, .n_nodes = 1, .bindings = bd,
                              .n_bindings = 2};
    ib_backend_graph *gr;
    ASSERT_OK_ERR(ib_backend_graph_compile(b, &sg, &gr, &err), &err);
    return gr;
}

/* The CPU of the (single) other thread pinned to exactly one CPU, or -1. */
static int worker_cpu(void)
{
    DIR *d = opendir("/proc/self/task");
    int cpu = -1, self = (int)ib_thread_os_id();
    struct dirent *de;
    while (d && (de = readdir(d))) {
        cpu_set_t s;
        int tid = atoi(de->d_name);
        if (de->d_name[0] == '.' || tid == self)
            continue;
        if (sched_getaffinity(tid, sizeof s, &s) == 0 && CPU_COUNT(&s) == 1)
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &s))
                    cpu = c;
    }
    if (d)
        closedir(d);
    return cpu;
}

/* Threads of this process whose affinity is exactly one CPU. */
static int pinned_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        cpu_set_t s;
        if (sched_getaffinity(atoi(de->d_name), sizeof s, &s) == 0 && CPU_COUNT(&s) == 1)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

TEST(cpu_pins_pool_and_restores_caller_mask)
{
    int ncpu = ib_cpu_count();
    if (ncpu < 2)
        TEST_SKIP("needs at least 2 CPUs in the affinity mask");
    ib_backend_config cfg;
    ib_backend_config_defaults(&cfg);
    cfg.first_cpu = 0;
    cfg.threads = 2;
    ib_backend *b;
    ib_err err;
    ASSERT_OK(ib_backend_create("cpu", &cfg, &b, &err));
    tiny t;
    ib_backend_buffer *buf;
    ib_backend_graph *gr = compile_tiny(b, &t, "Relu", 1 << 16, &buf, false);
    cpu_set_t before, after;
    ASSERT_INT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    ASSERT_OK(ib_backend_graph_run(gr, &err));
    ASSERT_INT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
    ASSERT_TRUE(CPU_EQUAL(&before, &after)); /* the caller is left as it was */
    ASSERT_INT_GE(pinned_threads(), 1);      /* the pool's other thread stays pinned */
    ASSERT_INT_EQ(worker_cpu(), ib_cpu_nth(1));
    /* a second session on this thread with another CPU list moves the worker,
     * and the first one moves it back */
    cfg.first_cpu = 1;
    ib_backend *b2;
    ASSERT_OK(ib_backend_create("cpu", &cfg, &b2, &err));
    tiny t2;
    ib_backend_buffer *buf2;
    ib_backend_graph *gr2 = compile_tiny(b2, &t2, "Relu", 1 << 16, &buf2, false);
    ASSERT_OK(ib_backend_graph_run(gr2, &err));
    ASSERT_INT_EQ(worker_cpu(), ib_cpu_nth(0));
    ASSERT_OK(ib_backend_graph_run(gr, &err));
    ASSERT_INT_EQ(worker_cpu(), ib_cpu_nth(1));
    ib_backend_graph_free(gr2);
    ib_backend_buffer_free(buf2);
    ib_backend_destroy(b2);
    ib_graph_destroy(t2.g);
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    ib_backend_destroy(b);
    ib_graph_destroy(t.g);
    LEAK_CHECK();
}

static size_t g_allocs;
static int g_fail_at; /* fail the g_fail_at-th allocation (0 = never) */

static void *counting_alloc(void *user, void *ptr, size_t old, size_t n)
{
    IB_UNUSED(user);
    IB_UNUSED(old);
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    g_allocs++;
    if (g_fail_at && (int)g_allocs == g_fail_at)
        return NULL;
    return realloc(ptr, n);
}

TEST(cpu_run_allocates_nothing)
{
    ib_backend *b;
    ib_err err;
    ASSERT_OK(ib_backend_create("cpu", NULL, &b, &err));
    tiny t;
    ib_backend_buffer *buf;
    ib_backend_graph *gr = compile_tiny(b, &t, "Softmax", 4096, &buf, false);
    ASSERT_OK(ib_backend_graph_run(gr, &err)); /* warm-up: thread pool, JIT */
    ib_alloc_set(counting_alloc, NULL);
    g_allocs = 0;
    struct mallinfo2 m0 = mallinfo2();
    for (int i = 0; i < 5; i++)
        ASSERT_OK(ib_backend_graph_run(gr, &err));
    struct mallinfo2 m1 = mallinfo2();
    ib_alloc_set(NULL, NULL);
    ASSERT_UINT_EQ(g_allocs, 0);
    /* nothing below us allocates either (oneDNN runs on the user scratchpad) */
    ASSERT_UINT_EQ(m1.uordblks, m0.uordblks);
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    ib_backend_destroy(b);
    ib_graph_destroy(t.g);
    LEAK_CHECK();
}

TEST(cpu_compile_fails_cleanly_out_of_memory)
{
    ib_backend *b;
    ib_err err;
    ASSERT_OK(ib_backend_create("cpu", NULL, &b, &err));
    tiny t;
    tiny_make(&t, "Relu", 64);
    ib_backend_buffer *buf;
    ASSERT_OK(ib_backend_buffer_alloc(b, 1024, &buf, &err));
    ib_backend_binding bd[2];
    tiny_bind(&t, buf, 0, 512, bd);
    ib_node_id nid = 0;
    ib_backend_subgraph sg = {.graph = t.g, .nodes = &nid, .n_nodes = 1, .bindings = bd,
                              .n_bindings = 2};
    int failures = 0;
    for (int k = 1; k < 200; k++) {
        ib_backend_graph *gr = NULL;
        g_allocs = 0;
        g_fail_at = k;
        ib_alloc_set(counting_alloc, NULL);
        int rc = ib_backend_graph_compile(b, &sg, &gr, &err);
        ib_alloc_set(NULL, NULL);
        g_fail_at = 0;
        if (rc == IB_OK) {
            ASSERT_NOT_NULL(gr);
            ASSERT_OK(ib_backend_graph_run(gr, &err));
            ib_backend_graph_free(gr);
            break;
        }
        ASSERT_STATUS(rc, IB_ENOMEM);
        ASSERT_NULL(gr);
        failures++;
    }
    ASSERT_INT_GT(failures, 3); /* compile allocates several times: each failure was clean */
    ib_backend_buffer_free(buf);
    ib_backend_destroy(b);
    ib_graph_destroy(t.g);
    LEAK_CHECK();
}

TEST(cpu_refuses_precisions_it_lacks)
{
    /* before any other oneDNN call in this (forked) process: cap the ISA at AVX2 */
    if (dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2) != dnnl_success)
        TEST_SKIP("oneDNN refused to cap the ISA");
    ib_backend_config cfg;
    ib_backend_config_defaults(&cfg);
    ib_backend *b;
    ib_err err;
    ASSERT_OK(ib_backend_create("cpu", &cfg, &b, &err));
    tiny t;
    tiny_make(&t, "Relu", 32);
    const ib_tensor_desc *in[1] = {&t.d};
    const ib_node *n = &t.g->nodes.data[0];
    ASSERT_TRUE(ib_backend_supports_op(b, t.g, n, in, IB_PRECISION_FP32));
    ASSERT_FALSE(ib_backend_supports_op(b, t.g, n, in, IB_PRECISION_BF16)); /* no AVX-512 */
    ASSERT_FALSE(ib_backend_supports_op(b, t.g, n, in, IB_PRECISION_FP16)); /* never on CPU */
    ASSERT_FALSE(ib_backend_supports_op(b, t.g, n, in, IB_PRECISION_FP8));
    ib_backend_buffer *buf;
    ASSERT_OK(ib_backend_buffer_alloc(b, 1024, &buf, &err));
    ib_backend_binding bd[2];
    tiny_bind(&t, buf, 0, 512, bd);
    ib_node_id nid = 0;
    ib_backend_subgraph sg = {.graph = t.g, .nodes = &nid, .n_nodes = 1, .bindings = bd,
                              .n_bindings = 2, .precision = IB_PRECISION_BF16};
    ib_backend_graph *gr = NULL;
    ASSERT_STATUS(ib_backend_graph_compile(b, &sg, &gr, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "bf16");
    sg.precision = IB_PRECISION_FP32;
    ASSERT_OK_ERR(ib_backend_graph_compile(b, &sg, &gr, &err), &err);
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    ib_backend_destroy(b);
    ib_graph_destroy(t.g);
    LEAK_CHECK();
}

TEST(cpu_supports_op_refusals)
{
    ib_backend *b;
    ib_err err;
    ASSERT_OK(ib_backend_create("cpu", NULL, &b, &err));
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc xd = {IB_DTYPE_FLOAT32, 4, {1, 4, 8, 8}}, wd = {IB_DTYPE_FLOAT32, 4, {8, 4, 3, 3}},
                   yd = {IB_DTYPE_FLOAT32, 4, {1, 8, 6, 6}};
    ib_value_id x = ib_graph_add_value(g, "x", &xd), w = ib_graph_add_value(g, "w", &wd),
                y = ib_graph_add_value(g, "y", &yd), ins[2] = {x, w};
    ib_node_id c = ib_graph_add_node(g, "Conv", "", "conv", ins, 2, &y, 1, NULL, 0);
    const ib_tensor_desc *in[2] = {&xd, &wd};
    /* weights that are not constant: oneDNN cannot pre-reorder them */
    ASSERT_FALSE(ib_backend_supports_op(b, g, &g->nodes.data[c], in, IB_PRECISION_FP32));
    ib_tensor *wt;
    ASSERT_OK(ib_tensor_alloc(&wd, &wt));
    ASSERT_OK(ib_graph_set_constant(g, w, wt));
    ASSERT_TRUE(ib_backend_supports_op(b, g, &g->nodes.data[c], in, IB_PRECISION_FP32));
    /* an output shape that does not follow from the attributes */
    g->values.data[y].desc.dims[2] = 7;
    ASSERT_FALSE(ib_backend_supports_op(b, g, &g->nodes.data[c], in, IB_PRECISION_FP32));
    /* ops nobody registered, and unknown domains */
    ib_node_id u = ib_graph_add_node(g, "NonMaxSuppression", "", "nms", &x, 1, &y, 1, NULL, 0);
    ASSERT_FALSE(ib_backend_supports_op(b, g, &g->nodes.data[u], in, IB_PRECISION_FP32));
    ib_node_id d = ib_graph_add_node(g, "Relu", "com.example", "r", &x, 1, &y, 1, NULL, 0);
    ASSERT_FALSE(ib_backend_supports_op(b, g, &g->nodes.data[d], in, IB_PRECISION_FP32));
    ib_graph_destroy(g);
    ib_backend_destroy(b);
    LEAK_CHECK();
}

TEST(cpu_plan_bytes_pads_channels)
{
    ib_backend *b;
    ASSERT_OK(ib_backend_create("cpu", NULL, &b, NULL));
    ib_tensor_desc d = {IB_DTYPE_FLOAT32, 4, {1, 3, 224, 224}};
    ASSERT_UINT_EQ(ib_backend_plan_bytes(b, &d), (size_t)16 * 224 * 224 * 4); /* nChw16c */
    d.dims[1] = 64;
    ASSERT_UINT_EQ(ib_backend_plan_bytes(b, &d), (size_t)64 * 224 * 224 * 4);
    d.dims[1] = IB_DIM_DYNAMIC;
    ASSERT_UINT_EQ(ib_backend_plan_bytes(b, &d), 0);
    ib_backend_destroy(b);
}

/* The session may give an elementwise node's output its input's bytes. */
TEST(cpu_elementwise_in_place)
{
    ib_backend *b;
    ib_err err;
    ASSERT_OK(ib_backend_create("cpu", NULL, &b, &err));
    tiny t;
    ib_backend_buffer *buf;
    ib_backend_graph *gr = compile_tiny(b, &t, "Relu", 1000, &buf, true);
    float x[1000], y[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = (float)(i % 7) - 3.0f;
    ASSERT_OK(ib_backend_tensor_set(buf, 0, x, sizeof x, &err));
    ASSERT_OK(ib_backend_graph_run(gr, &err));
    ASSERT_OK(ib_backend_tensor_get(buf, 0, y, sizeof y, &err));
    for (int i = 0; i < 1000; i++)
        ASSERT_TRUE(y[i] == (x[i] > 0 ? x[i] : 0.0f));
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    ib_backend_destroy(b);
    ib_graph_destroy(t.g);
    LEAK_CHECK();
}

TEST(cpu_gather_index_out_of_range_fails_the_run)
{
    ib_backend *b;
    ib_err err;
    ASSERT_OK(ib_backend_create("cpu", NULL, &b, &err));
    ib_graph *g;
    ASSERT_OK(ib_graph_create(&g));
    ib_tensor_desc td = {IB_DTYPE_FLOAT32, 2, {10, 4}}, id = {IB_DTYPE_INT64, 1, {3}},
                   yd = {IB_DTYPE_FLOAT32, 2, {3, 4}};
    ib_value_id tv = ib_graph_add_value(g, "table", &td), iv = ib_graph_add_value(g, "idx", &id),
                yv = ib_graph_add_value(g, "y", &yd), ins[2] = {tv, iv};
    ib_graph_add_node(g, "Gather", "", "lookup", ins, 2, &yv, 1, NULL, 0);
    ib_backend_buffer *buf;
    ASSERT_OK(ib_backend_buffer_alloc(b, 1024, &buf, &err));
    ib_backend_binding bd[3] = {
        {.value = tv, .desc = td, .buffer = buf, .offset = 0, .nbytes = 160, .boundary = true},
        {.value = iv, .desc = id, .buffer = buf, .offset = 192, .nbytes = 24, .boundary = true},
        {.value = yv, .desc = yd, .buffer = buf, .offset = 256, .nbytes = 48, .boundary = true}};
    ib_node_id nid = 0;
    ib_backend_subgraph sg = {.graph = g, .nodes = &nid, .n_nodes = 1, .bindings = bd,
                              .n_bindings = 3};
    ib_backend_graph *gr;
    ASSERT_OK_ERR(ib_backend_graph_compile(b, &sg, &gr, &err), &err);
    int64_t idx[3] = {1, -10, 9};
    ASSERT_OK(ib_backend_tensor_set(buf, 192, idx, sizeof idx, &err));
    ASSERT_OK_ERR(ib_backend_graph_run(gr, &err), &err);
    idx[2] = 10;
    ASSERT_OK(ib_backend_tensor_set(buf, 192, idx, sizeof idx, &err));
    ASSERT_STATUS(ib_backend_graph_run(gr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "'lookup'");
    ASSERT_STR_CONTAINS(err.msg, "index 10");
    ib_backend_graph_free(gr);
    ib_backend_buffer_free(buf);
    ib_backend_destroy(b);
    ib_graph_destroy(g);
    LEAK_CHECK();
}
