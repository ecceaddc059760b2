/*
 * cpu_backend.c - the "cpu" backend table: oneDNN (C API, Debian libdnnl,
 * OpenMP runtime) for convolutions, matmuls, pooling, normalisations,
 * eltwise, softmax, LSTM, binary ops and reorders, plus our own OpenMP C
 * kernels for the rest (gather, transpose, shape ops, elementwise fallbacks).
 *
 * This file holds the context (engine, threads, ISA), host buffers, the op
 * registry (one table per family file) and supports_op; compiling and
 * running subgraphs is in cpu_exec.c, threads in cpu_threads.c.
 */
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/cpu_kernels.h"

static bool cpu_available(const char **reason)
{
    if (dnnl_engine_get_count(dnnl_cpu) == 0) {
        *reason = "oneDNN reports no CPU engine";
        return false;
    }
    return true;
}

bool cpu_precision_ok(const cpu_ctx *c, enum ib_precision p)
{
    switch (p) {
    case IB_PRECISION_FP32: return true;
    case IB_PRECISION_BF16: return c->bf16_ok;
    case IB_PRECISION_INT8: return c->int8_ok;
    default: return false; /* fp16/fp8: oneDNN 2.6 has no CPU kernels for them */
    }
}

static int cpu_create(const ib_backend_config *cfg, void **out, ib_err *err)
{
    cpu_ctx *c = ib_calloc(1, sizeof *c);
    if (!c)
        return ib_err_set(err, IB_ENOMEM, "cpu backend: out of memory");
    int rc = cpu_threads_resolve(cfg, &c->threads, &c->cpus, err);
    if (rc) {
        ib_free(c);
        return rc;
    }
    if (dnnl_engine_create(&c->eng, dnnl_cpu, 0) != dnnl_success) {
        ib_free(c->cpus);
        ib_free(c);
        return ib_err_set(err, IB_EBACKEND, "cpu backend: cannot create the oneDNN CPU engine");
    }
    c->precision = cfg->precision;
    c->isa = dnnl_get_effective_cpu_isa();
    unsigned isa = (unsigned)c->isa;
    /* bf16: native on avx512_core_bf16, emulated by oneDNN on avx512_core.
     * int8: VNNI only, where u8s8 dot products cannot saturate. */
    c->bf16_ok = (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    c->int8_ok = (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
                 (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
    c->wino_ok = !cfg->direct_conv && cpu_wino_avx512();
    c->wino_bf16_ok = c->wino_ok && cpu_wino_avx512_bf16();
    *out = c;
    return IB_OK;
}

static void cpu_destroy(void *ctx)
{
    cpu_ctx *c = ctx;
    if (!c)
        return;
    dnnl_engine_destroy(c->eng);
    for (size_t i = 0; i < c->wconv.len; i++)
        ib_free(c->wconv.data[i].raw);
    IB_VEC_FREE(&c->wconv);
    ib_free(c->cpus);
    ib_free(c);
}

/* Host memory aligned to IB_BACKEND_ALIGN; the raw pointer sits just before. */
static int cpu_buffer_alloc(void *ctx, size_t nbytes, void **impl, void **host_ptr, ib_err *err)
{
    IB_UNUSED(ctx);
    if (nbytes > SIZE_MAX - 2 * IB_BACKEND_ALIGN)
        return ib_err_set(err, IB_ENOMEM, "cpu backend: buffer of %zu bytes", nbytes);
    char *raw = ib_malloc(nbytes + 2 * IB_BACKEND_ALIGN);
    if (!raw)
        return ib_err_set(err, IB_ENOMEM, "cpu backend: cannot allocate %zu bytes", nbytes);
    char *p = (char *)(((uintptr_t)raw + sizeof(void *) + IB_BACKEND_ALIGN - 1) &
                       ~(uintptr_t)(IB_BACKEND_ALIGN - 1));
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    *impl = p;
    *host_ptr = p;
    return IB_OK;
}

static void cpu_buffer_free(void *ctx, void *impl)
{
    IB_UNUSED(ctx);
    if (!impl)
        return;
    void *raw;
    memcpy(&raw, (char *)impl - sizeof(void *), sizeof raw);
    ib_free(raw);
}

/* Blocked activation formats (nChw16c and friends) pad the channel dim to 16. */
static size_t cpu_plan_bytes(void *ctx, const ib_tensor_desc *d)
{
    IB_UNUSED(ctx);
    size_t n = 1;
    for (int32_t i = 0; i < d->ndim; i++) {
        size_t k = (size_t)d->dims[i];
        if (i == 1 && d->ndim >= 2)
            k = (k + 15) / 16 * 16;
        if (k && n > SIZE_MAX / k)
            return 0;
        n *= k;
    }
    size_t es = ib_dtype_size(d->dtype);
    return n > SIZE_MAX / es ? 0 : n * es;
}

/* ---- op registry ---------------------------------------------------------- */

static const cpu_op *const g_families[] = {
    cpu_ops_conv, cpu_ops_matmul, cpu_ops_pool,  cpu_ops_norm,   cpu_ops_eltwise,
    cpu_ops_binary, cpu_ops_rnn,  cpu_ops_shape, cpu_ops_gather, cpu_ops_reduce, cpu_ops_attn,
    cpu_ops_detect, cpu_ops_accum,
};

static bool same_domain(const char *a, const char *b)
{
    if (!a[0] || strcmp(a, "ai.onnx") == 0)
        return !b[0] || strcmp(b, "ai.onnx") == 0;
    return strcmp(a, b) == 0;
}

const cpu_op *cpu_op_find(const ib_node *n)
{
    for (size_t f = 0; f < IB_ARRAY_LEN(g_families); f++)
        for (const cpu_op *op = g_families[f]; op->op_type; op++)
            if (strcmp(op->op_type, n->op_type) == 0 && same_domain(op->domain, n->domain))
                return op;
    return NULL;
}

const cpu_op *cpu_op_at(size_t i)
{
    for (size_t f = 0; f < IB_ARRAY_LEN(g_families); f++)
        for (const cpu_op *op = g_families[f]; op->op_type; op++)
            if (i-- == 0)
                return op;
    return NULL;
}

bool cpu_is_const(const ib_graph *g, const ib_node *n, uint32_t i)
{
    const ib_value *v = ib_node_input(g, n, i);
    return v && (v->flags & IB_VALUE_CONST) && v->constant && v->constant->data;
}

const ib_tensor *cpu_const_of(const ib_graph *g, const ib_node *n, uint32_t i)
{
    return cpu_is_const(g, n, i) ? ib_node_input(g, n, i)->constant : NULL;
}

bool cpu_all_dtype(const ib_node *n, const ib_tensor_desc *const *in, enum ib_dtype t)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (in[i] && in[i]->dtype != t)
            return false;
    return true;
}

static bool cpu_supports_op(void *ctx, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in, enum ib_precision p)
{
    const cpu_ctx *c = ctx;
    if (!cpu_precision_ok(c, p))
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (in[i] && (in[i]->ndim > DNNL_MAX_NDIMS || ib_tensor_desc_numel(in[i]) < 0))
            return false;
    const cpu_op *op = cpu_op_find(n);
    return op && op->supports(c, g, n, in, p);
}

const struct ib_backend_ops ib_backend_cpu_ops = {
    .abi_version = IB_BACKEND_ABI_VERSION,
    /* runs inferbench.MultiHeadAttention, DotInteraction and GatherConcat */
    .caps = IB_BACKEND_CAP_MHA | IB_BACKEND_CAP_DOT_INTERACTION | IB_BACKEND_CAP_GATHER_CONCAT,
    .name = "cpu",
    .available = cpu_available,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .supports_op = cpu_supports_op,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .tensor_set = NULL, /* host memory: the wrappers memcpy */
    .tensor_get = NULL,
    .plan_bytes = cpu_plan_bytes,
    .graph_compile = cpu_graph_compile,
    .graph_free = cpu_graph_free,
    .graph_run = cpu_graph_run,
    .set_profiling = cpu_set_profiling,
    .profile_read = cpu_profile_read,
    .precision_read = cpu_precision_read, /* ABI 10 */
    .synchronize = NULL, /* OpenMP runtime: graph_run returns when done */
    .value_desc = NULL,
    .residual_in_place = true, /* dnnl_conv.c: the sum post-op over the residual in dst */
};
