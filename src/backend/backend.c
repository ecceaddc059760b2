/*
 * backend.c - the backend registry and the checked wrappers of backend.h,
 * plus the public ib_backend_count/name_at/available of runtime.h.
 *
 * This is the only file that knows which backends are compiled in
 * (STYLE.md §6: #ifdef IB_WITH_DNNL / IB_WITH_CUDA appear here and nowhere
 * else). Wrappers validate arguments, bounds and subgraph bindings, and stand
 * in for NULL optional vtable entries, so backends can assume sane calls.
 */
#include <math.h>
#include <string.h>

#include "backend/backend_impl.h"
#include "base/log.h"

/* The registered tables, declared here (not through the backends' headers) so that
 * the generic layer includes no backend: docs/DEVELOPING.md, "Layers". */
extern const struct ib_backend_ops ib_backend_reference_ops;
#ifdef IB_WITH_DNNL
extern const struct ib_backend_ops ib_backend_cpu_ops;
#endif
#ifdef IB_WITH_CUDA
extern const struct ib_backend_ops ib_backend_cuda_ops;
#endif

static const struct ib_backend_ops *const g_backends[] = {
#ifdef IB_WITH_DNNL
    &ib_backend_cpu_ops,
#endif
#ifdef IB_WITH_CUDA
    &ib_backend_cuda_ops,
#endif
    &ib_backend_reference_ops,
};

struct ib_backend {
    const struct ib_backend_ops *ops;
    void *ctx;
    ib_backend_config cfg;
    size_t live_buffers; /* buffers and graphs not yet freed (checked at destroy) */
    size_t live_graphs;
};

struct ib_backend_graph {
    ib_backend *b;
    ib_backend_exec *exec; /* NULL when the backend has no graph_compile */
    ib_backend_subgraph sg; /* with copied node and binding arrays */
    ib_node_id *nodes;
    ib_backend_binding *bindings;
};

/* ---- registry ------------------------------------------------------------ */

const struct ib_backend_ops *ib_backend_at(size_t i)
{
    return i < IB_ARRAY_LEN(g_backends) ? g_backends[i] : NULL;
}

const struct ib_backend_ops *ib_backend_find(const char *name)
{
    for (size_t i = 0; name && i < IB_ARRAY_LEN(g_backends); i++)
        if (strcmp(g_backends[i]->name, name) == 0)
            return g_backends[i];
    return NULL;
}

size_t ib_backend_count(void)
{
    return IB_ARRAY_LEN(g_backends);
}

const char *ib_backend_name_at(size_t i)
{
    const struct ib_backend_ops *ops = ib_backend_at(i);
    return ops ? ops->name : NULL;
}

bool ib_backend_available(const char *name, const char **reason)
{
    const char *dummy;
    if (!reason)
        reason = &dummy;
    *reason = NULL;
    const struct ib_backend_ops *ops = ib_backend_find(name);
    if (!ops) {
        *reason = "backend not compiled in (see `inferbench sysinfo` for the list)";
        return false;
    }
    if (!ops->available)
        return true;
    bool ok = ops->available(reason);
    if (!ok && !*reason)
        *reason = "backend reports it is unavailable";
    return ok;
}

/* ---- instances ----------------------------------------------------------- */

void ib_backend_config_defaults(ib_backend_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->threads = 0;
    cfg->first_cpu = -1;
    cfg->precision = IB_PRECISION_FP32;
    cfg->device = 0;
}

/* A table is usable when its version is one we know and the required entries are set. */
static int check_ops(const struct ib_backend_ops *ops, ib_err *err)
{
    if (!ops)
        return ib_err_set(err, IB_EINVAL, "backend: NULL ops table");
    const char *name = ops->name ? ops->name : "(unnamed)";
    if (ops->abi_version < 1 || ops->abi_version > IB_BACKEND_ABI_VERSION)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "backend '%s': ABI version %u, this build supports 1..%d", name,
                          (unsigned)ops->abi_version, IB_BACKEND_ABI_VERSION);
    const char *missing = !ops->name                  ? "name"
                          : !ops->create              ? "create"
                          : !ops->destroy             ? "destroy"
                          : !ops->supports_op         ? "supports_op"
                          : !ops->buffer_alloc        ? "buffer_alloc"
                          : !ops->buffer_free         ? "buffer_free"
                          : !ops->graph_run           ? "graph_run"
                          : ops->graph_compile && !ops->graph_free ? "graph_free"
                          : ops->abi_version >= 6 && !ops->host_alloc != !ops->host_free
                              ? (ops->host_alloc ? "host_free" : "host_alloc")
                              : NULL;
    if (missing)
        return ib_err_set(err, IB_EINVAL, "backend '%s': required entry '%s' is NULL", name,
                          missing);
    return IB_OK;
}

int ib_backend_create_from_ops(const struct ib_backend_ops *ops, const ib_backend_config *cfg,
                               ib_backend **out, ib_err *err)
{
    if (!out)
        return ib_err_set(err, IB_EINVAL, "backend: NULL out pointer");
    *out = NULL;
    int rc = check_ops(ops, err);
    if (rc)
        return rc;
    ib_backend_config c;
    if (cfg)
        c = *cfg;
    else
        ib_backend_config_defaults(&c);
    if (c.threads < 0 || c.threads > 4096)
        return ib_err_set(err, IB_EINVAL, "backend '%s': threads=%d (use 0 for all CPUs)",
                          ops->name, c.threads);
    if (c.first_cpu < -1 || c.device < 0)
        return ib_err_set(err, IB_EINVAL,
                          "backend '%s': first_cpu=%d device=%d (first_cpu -1 = no pinning)",
                          ops->name, c.first_cpu, c.device);
    if ((int)c.precision < IB_PRECISION_FP32 || (int)c.precision > IB_PRECISION_FP8)
        return ib_err_set(err, IB_EINVAL, "backend '%s': unknown precision %d", ops->name,
                          (int)c.precision);
    const char *reason = NULL;
    if (ops->available && !ops->available(&reason))
        return ib_err_set(err, IB_EUNSUPPORTED, "backend '%s' is not available here: %s",
                          ops->name, reason ? reason : "no reason given");
    ib_backend *b = ib_calloc(1, sizeof *b);
    if (!b)
        return ib_err_set(err, IB_ENOMEM, "backend '%s': out of memory", ops->name);
    b->ops = ops;
    b->cfg = c;
    rc = ops->create(&c, &b->ctx, err);
    if (rc) {
        ib_free(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}

int ib_backend_create(const char *name, const ib_backend_config *cfg, ib_backend **out,
                      ib_err *err)
{
    const struct ib_backend_ops *ops = ib_backend_find(name);
    if (!ops) {
        if (out)
            *out = NULL;
        return ib_err_set(err, IB_ENOTFOUND, "backend '%s' is not compiled in",
                          name ? name : "(null)");
    }
    return ib_backend_create_from_ops(ops, cfg, out, err);
}

void ib_backend_destroy(ib_backend *b)
{
    if (!b)
        return;
    /* Freeing the instance under live buffers would leave them dangling. */
    IB_ASSERT(b->live_buffers == 0 && b->live_graphs == 0);
    b->ops->destroy(b->ctx);
    ib_free(b);
}

const char *ib_backend_get_name(const ib_backend *b)
{
    return b ? b->ops->name : NULL;
}

const ib_backend_config *ib_backend_get_config(const ib_backend *b)
{
    return b ? &b->cfg : NULL;
}

bool ib_backend_supports_op(ib_backend *b, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in_descs, enum ib_precision precision)
{
    if (!b || !g || !n || n->dead || (n->n_inputs && !in_descs))
        return false;
    return b->ops->supports_op(b->ctx, g, n, in_descs, precision);
}

size_t ib_backend_plan_bytes(ib_backend *b, const ib_tensor_desc *desc)
{
    if (!b || !desc)
        return 0;
    size_t plain = ib_tensor_desc_nbytes(desc);
    if (ib_tensor_desc_numel(desc) < 0)
        return 0;
    if (!b->ops->plan_bytes)
        return plain;
    size_t n = b->ops->plan_bytes(b->ctx, desc);
    return n > plain ? n : plain;
}

/* ---- buffers ------------------------------------------------------------- */

int ib_backend_buffer_alloc(ib_backend *b, size_t nbytes, ib_backend_buffer **out, ib_err *err)
{
    if (!out)
        return ib_err_set(err, IB_EINVAL, "buffer_alloc: NULL out pointer");
    *out = NULL;
    if (!b || nbytes == 0)
        return ib_err_set(err, IB_EINVAL, "buffer_alloc: %s", b ? "size 0" : "NULL backend");
    ib_backend_buffer *buf = ib_calloc(1, sizeof *buf);
    if (!buf)
        return ib_err_set(err, IB_ENOMEM, "buffer_alloc: out of memory");
    int rc = b->ops->buffer_alloc(b->ctx, nbytes, &buf->impl, &buf->host_ptr, err);
    if (rc) {
        ib_free(buf);
        return rc;
    }
    buf->owner = b;
    buf->size = nbytes;
    b->live_buffers++;
    *out = buf;
    return IB_OK;
}

void ib_backend_buffer_free(ib_backend_buffer *buf)
{
    if (!buf)
        return;
    ib_backend *b = buf->owner;
    b->ops->buffer_free(b->ctx, buf->impl);
    b->live_buffers--;
    ib_free(buf);
}

void *ib_backend_buffer_host_ptr(const ib_backend_buffer *buf)
{
    return buf ? buf->host_ptr : NULL;
}

size_t ib_backend_buffer_size(const ib_backend_buffer *buf)
{
    return buf ? buf->size : 0;
}

static int check_range(const ib_backend_buffer *buf, size_t offset, const void *p, size_t nbytes,
                       const char *what, ib_err *err)
{
    if (!buf || (!p && nbytes))
        return ib_err_set(err, IB_EINVAL, "%s: NULL %s", what, buf ? "host pointer" : "buffer");
    if (offset > buf->size || nbytes > buf->size - offset)
        return ib_err_set(err, IB_EINVAL,
                          "%s: bytes [%zu, %zu) exceed the %zu-byte buffer of backend '%s'", what,
                          offset, offset + nbytes, buf->size, buf->owner->ops->name);
    return IB_OK;
}

int ib_backend_tensor_set(ib_backend_buffer *buf, size_t offset, const void *src, size_t nbytes,
                          ib_err *err)
{
    int rc = check_range(buf, offset, src, nbytes, "tensor_set", err);
    if (rc || nbytes == 0)
        return rc;
    const ib_backend *b = buf->owner;
    if (b->ops->tensor_set)
        return b->ops->tensor_set(b->ctx, buf->impl, offset, src, nbytes, err);
    if (!buf->host_ptr)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "tensor_set: backend '%s' has device memory but no tensor_set",
                          b->ops->name);
    memcpy((char *)buf->host_ptr + offset, src, nbytes);
    return IB_OK;
}

int ib_backend_tensor_get(ib_backend_buffer *buf, size_t offset, void *dst, size_t nbytes,
                          ib_err *err)
{
    int rc = check_range(buf, offset, dst, nbytes, "tensor_get", err);
    if (rc || nbytes == 0)
        return rc;
    const ib_backend *b = buf->owner;
    if (b->ops->tensor_get)
        return b->ops->tensor_get(b->ctx, buf->impl, offset, dst, nbytes, err);
    if (!buf->host_ptr)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "tensor_get: backend '%s' has device memory but no tensor_get",
                          b->ops->name);
    memcpy(dst, (const char *)buf->host_ptr + offset, nbytes);
    return IB_OK;
}

/* ---- compiled subgraphs -------------------------------------------------- */

static const ib_backend_binding *find_binding(const ib_backend_subgraph *sg, ib_value_id v)
{
    for (uint32_t i = 0; i < sg->n_bindings; i++)
        if (sg->bindings[i].value == v)
            return &sg->bindings[i];
    return NULL;
}

/* Check one binding against its value and the backend (see backend.h). */
static int check_binding(ib_backend *b, const ib_backend_subgraph *sg, const ib_backend_binding *bd,
                         ib_err *err)
{
    const ib_graph *g = sg->graph;
    if (bd->value < 0 || (size_t)bd->value >= g->values.len)
        return ib_err_set(err, IB_EINVAL, "graph_compile: binding for value id %d out of range",
                          (int)bd->value);
    const char *vn = g->values.data[bd->value].name;
    char dbuf[96];
    if (ib_tensor_desc_numel(&bd->desc) < 0 || bd->desc.ndim > IB_MAX_DIMS ||
        ib_dtype_size(bd->desc.dtype) == 0)
        return ib_err_set(err, IB_EINVAL,
                          "graph_compile: value '%s' is bound with a non-concrete desc %s", vn,
                          ib_tensor_desc_str(&bd->desc, dbuf, sizeof dbuf));
    size_t plain = ib_tensor_desc_nbytes(&bd->desc);
    if (bd->constant) {
        if (!bd->constant->data && plain)
            return ib_err_set(err, IB_EINVAL, "graph_compile: constant '%s' has no data", vn);
        if (bd->constant->nbytes < plain || bd->constant->desc.dtype != bd->desc.dtype)
            return ib_err_set(err, IB_EINVAL,
                              "graph_compile: constant '%s' holds %zu bytes of %s, bound as %s",
                              vn, bd->constant->nbytes, ib_dtype_name(bd->constant->desc.dtype),
                              ib_tensor_desc_str(&bd->desc, dbuf, sizeof dbuf));
        return IB_OK;
    }
    if (!bd->buffer)
        return ib_err_set(err, IB_EINVAL,
                          "graph_compile: value '%s' has neither a buffer nor constant data", vn);
    if (bd->buffer->owner != b)
        return ib_err_set(err, IB_EINVAL,
                          "graph_compile: value '%s' is bound to a buffer of backend '%s', not "
                          "'%s'",
                          vn, bd->buffer->owner->ops->name, b->ops->name);
    size_t need = bd->boundary ? plain : ib_backend_plan_bytes(b, &bd->desc);
    if (bd->nbytes < need)
        return ib_err_set(err, IB_EINVAL,
                          "graph_compile: value '%s' reserves %zu bytes, backend '%s' needs %zu "
                          "(use ib_backend_plan_bytes)",
                          vn, bd->nbytes, b->ops->name, need);
    if (bd->offset % IB_BACKEND_ALIGN)
        return ib_err_set(err, IB_EINVAL,
                          "graph_compile: value '%s' at offset %zu, not a multiple of %d", vn,
                          bd->offset, IB_BACKEND_ALIGN);
    if (bd->offset > bd->buffer->size || bd->nbytes > bd->buffer->size - bd->offset)
        return ib_err_set(err, IB_EINVAL,
                          "graph_compile: value '%s' [%zu, +%zu) exceeds its %zu-byte buffer", vn,
                          bd->offset, bd->nbytes, bd->buffer->size);
    return IB_OK;
}

static int check_subgraph(ib_backend *b, const ib_backend_subgraph *sg, ib_err *err)
{
    if (!sg || !sg->graph || !sg->nodes || !sg->n_nodes || (sg->n_bindings && !sg->bindings))
        return ib_err_set(err, IB_EINVAL, "graph_compile: empty or NULL subgraph");
    const ib_graph *g = sg->graph;
    for (uint32_t i = 0; i < sg->n_bindings; i++) {
        int rc = check_binding(b, sg, &sg->bindings[i], err);
        if (rc)
            return rc;
        for (uint32_t j = 0; j < i; j++)
            if (sg->bindings[j].value == sg->bindings[i].value)
                return ib_err_set(err, IB_EINVAL, "graph_compile: value '%s' is bound twice",
                                  g->values.data[sg->bindings[i].value].name);
    }
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        ib_node_id id = sg->nodes[i];
        if (id < 0 || (size_t)id >= g->nodes.len || g->nodes.data[id].dead)
            return ib_err_set(err, IB_EINVAL, "graph_compile: node id %d is out of range or dead",
                              (int)id);
        const ib_node *n = &g->nodes.data[id];
        for (uint32_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
            ib_value_id v = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
            if (v == IB_VALUE_NONE)
                continue;
            if (v < 0 || (size_t)v >= g->values.len)
                return ib_err_set(err, IB_EINVAL, "graph_compile: node '%s' (%s): bad value id",
                                  n->name, n->op_type);
            const ib_backend_binding *bd = find_binding(sg, v);
            if (!bd)
                return ib_err_set(err, IB_EINVAL,
                                  "graph_compile: node '%s' (%s): value '%s' is not bound",
                                  n->name, n->op_type, g->values.data[v].name);
            if (k >= n->n_inputs && bd->constant)
                return ib_err_set(err, IB_EINVAL,
                                  "graph_compile: node '%s' (%s) writes constant '%s'", n->name,
                                  n->op_type, g->values.data[v].name);
        }
    }
    return IB_OK;
}

int ib_backend_graph_compile(ib_backend *b, const ib_backend_subgraph *sg, ib_backend_graph **out,
                             ib_err *err)
{
    if (!out)
        return ib_err_set(err, IB_EINVAL, "graph_compile: NULL out pointer");
    *out = NULL;
    if (!b)
        return ib_err_set(err, IB_EINVAL, "graph_compile: NULL backend");
    int rc = check_subgraph(b, sg, err);
    if (rc)
        return rc;
    ib_backend_graph *gr = ib_calloc(1, sizeof *gr);
    if (!gr)
        return ib_err_set(err, IB_ENOMEM, "graph_compile: out of memory");
    gr->nodes = ib_malloc(sg->n_nodes * sizeof *gr->nodes);
    gr->bindings = ib_malloc((sg->n_bindings ? sg->n_bindings : 1) * sizeof *gr->bindings);
    if (!gr->nodes || !gr->bindings) {
        rc = ib_err_set(err, IB_ENOMEM, "graph_compile: out of memory");
        goto fail;
    }
    memcpy(gr->nodes, sg->nodes, sg->n_nodes * sizeof *gr->nodes);
    if (sg->n_bindings)
        memcpy(gr->bindings, sg->bindings, sg->n_bindings * sizeof *gr->bindings);
    gr->sg = *sg;
    gr->sg.nodes = gr->nodes;
    gr->sg.bindings = gr->bindings;
    gr->b = b;
    if (b->ops->graph_compile) {
        rc = b->ops->graph_compile(b->ctx, &gr->sg, &gr->exec, err);
        if (rc)
            goto fail;
    }
    b->live_graphs++;
    *out = gr;
    return IB_OK;
fail:
    ib_free(gr->nodes);
    ib_free(gr->bindings);
    ib_free(gr);
    return rc;
}

int ib_backend_graph_run(ib_backend_graph *gr, ib_err *err)
{
    if (!gr)
        return ib_err_set(err, IB_EINVAL, "graph_run: NULL compiled graph");
    return gr->b->ops->graph_run(gr->b->ctx, gr->exec, &gr->sg, err);
}

bool ib_backend_residual_in_place(const ib_backend *b)
{
    return b && b->ops->abi_version >= 2 && b->ops->residual_in_place;
}

bool ib_backend_has_cap(const ib_backend *b, unsigned cap)
{
    return b && b->ops->abi_version >= 3 && (b->ops->caps & cap) == cap;
}

int ib_backend_buffer_copy(ib_backend_buffer *dst, size_t dst_off, const ib_backend_buffer *src,
                           size_t src_off, size_t nbytes, ib_err *err)
{
    if (!dst || !src)
        return ib_err_set(err, IB_EINVAL, "buffer_copy: NULL buffer");
    if (dst_off > dst->size || nbytes > dst->size - dst_off || src_off > src->size ||
        nbytes > src->size - src_off)
        return ib_err_set(err, IB_EINVAL, "buffer_copy: [%zu, +%zu) -> [%zu, +%zu) exceeds a buffer",
                          src_off, nbytes, dst_off, nbytes);
    if (!nbytes || (dst == src && dst_off == src_off))
        return IB_OK;
    if (dst->impl == src->impl && dst_off < src_off + nbytes && src_off < dst_off + nbytes)
        return ib_err_set(err, IB_EINVAL, "buffer_copy: overlapping regions");
    if (dst->host_ptr && src->host_ptr) {
        memmove((char *)dst->host_ptr + dst_off, (const char *)src->host_ptr + src_off, nbytes);
        return IB_OK;
    }
    const ib_backend *b = dst->owner, *sb = src->owner;
    if (b != sb) { /* another instance's buffer: of the same backend, through ABI 8 */
        if (b->ops == sb->ops && b->ops->abi_version >= 8 && b->ops->buffer_copy_from)
            return b->ops->buffer_copy_from(b->ctx, dst->impl, dst_off, sb->ctx, src->impl,
                                            src_off, nbytes, err);
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "buffer_copy: no device copy between two backend instances ('%s' to "
                          "'%s')", sb->ops->name, b->ops->name);
    }
    if (b->ops->abi_version >= 7 && b->ops->buffer_copy)
        return b->ops->buffer_copy(b->ctx, dst->impl, dst_off, src->impl, src_off, nbytes, err);
    return ib_err_set(err, IB_EUNSUPPORTED, "buffer_copy: backend '%s' has no device copy",
                      b->ops->name);
}

static bool has_host_alloc(const ib_backend *b)
{
    return b->ops->abi_version >= 6 && b->ops->host_alloc && b->ops->host_free;
}

int ib_backend_host_alloc(ib_backend *b, size_t nbytes, void **out, ib_err *err)
{
    *out = NULL;
    if (!b || nbytes == 0 || nbytes > SIZE_MAX - 64 - sizeof(void *))
        return ib_err_set(err, IB_EINVAL, "host_alloc: a backend and 1 or more bytes needed");
    if (has_host_alloc(b)) {
        int rc = b->ops->host_alloc(b->ctx, nbytes, out, err);
        if (!rc && (!*out || ((uintptr_t)*out & 63))) {
            const char *what = *out ? "memory not 64-byte aligned" : "NULL";
            if (*out)
                b->ops->host_free(b->ctx, *out);
            *out = NULL;
            return ib_err_set(err, IB_EBACKEND, "host_alloc: backend '%s' returned %s",
                              b->ops->name, what);
        }
        return rc;
    }
    /* ordinary memory, 64-byte aligned; the raw pointer sits just below the block */
    unsigned char *raw = ib_malloc(nbytes + 64 + sizeof(void *));
    if (!raw)
        return ib_err_set(err, IB_ENOMEM, "out of memory for %zu bytes of host memory", nbytes);
    uintptr_t a = ((uintptr_t)raw + sizeof(void *) + 63) & ~(uintptr_t)63;
    memcpy((void *)(a - sizeof(void *)), &raw, sizeof raw);
    *out = (void *)a;
    return IB_OK;
}

void ib_backend_host_free(ib_backend *b, void *p)
{
    if (!b || !p)
        return;
    if (has_host_alloc(b)) {
        b->ops->host_free(b->ctx, p);
        return;
    }
    void *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
    ib_free(raw);
}

void *ib_backend_peer_ctx(const ib_backend_config *cfg, const struct ib_backend_ops *ops)
{
    return cfg && cfg->peer && cfg->peer->ops == ops ? cfg->peer->ctx : NULL;
}

bool ib_backend_device_info_get(const ib_backend *b, ib_backend_device_info *out)
{
    memset(out, 0, sizeof *out);
    return b && b->ops->abi_version >= 5 && b->ops->device_info &&
           b->ops->device_info(b->ctx, out) == IB_OK;
}

ib_backend_exec *ib_backend_graph_exec(const ib_backend_graph *gr)
{
    return gr ? gr->exec : NULL;
}

void ib_backend_graph_free(ib_backend_graph *gr)
{
    if (!gr)
        return;
    if (gr->exec)
        gr->b->ops->graph_free(gr->b->ctx, gr->exec);
    gr->b->live_graphs--;
    ib_free(gr->nodes);
    ib_free(gr->bindings);
    ib_free(gr);
}

int ib_backend_graph_value_desc(ib_backend_graph *gr, ib_value_id v, ib_tensor_desc *out)
{
    if (!gr || !out)
        return IB_EINVAL;
    const ib_backend_binding *bd = find_binding(&gr->sg, v);
    if (!bd)
        return IB_ENOTFOUND;
    if (gr->b->ops->abi_version >= 2 && gr->b->ops->value_desc)
        return gr->b->ops->value_desc(gr->b->ctx, gr->exec, v, out);
    *out = bd->desc;
    return IB_OK;
}

bool ib_backend_graph_set_profiling(ib_backend_graph *gr, bool on)
{
    if (!gr || gr->b->ops->abi_version < 4 || !gr->b->ops->set_profiling ||
        !gr->b->ops->profile_read || !gr->exec)
        return false;
    gr->b->ops->set_profiling(gr->b->ctx, gr->exec, on);
    return true;
}

void ib_backend_graph_profile(const ib_backend_graph *gr, ib_backend_prof_fn fn, void *user)
{
    if (gr && gr->b->ops->abi_version >= 4 && gr->b->ops->profile_read && gr->exec)
        gr->b->ops->profile_read(gr->b->ctx, gr->exec, fn, user);
}

enum ib_backend_replay ib_backend_graph_replay(const ib_backend_graph *gr, const char **why)
{
    *why = "";
    if (!gr || gr->b->ops->abi_version < 9 || !gr->b->ops->replay_status || !gr->exec)
        return IB_BACKEND_REPLAY_NONE;
    const char *w = NULL;
    enum ib_backend_replay r = gr->b->ops->replay_status(gr->b->ctx, gr->exec, &w);
    *why = w ? w : "";
    return r;
}

bool ib_backend_graph_precisions(const ib_backend_graph *gr, ib_backend_prec_fn fn, void *user)
{
    if (!gr || gr->b->ops->abi_version < 10 || !gr->b->ops->precision_read || !gr->exec)
        return false;
    gr->b->ops->precision_read(gr->b->ctx, gr->exec, fn, user);
    return true;
}

int ib_precision_bits(enum ib_precision p)
{
    switch (p) {
    case IB_PRECISION_INT8:
    case IB_PRECISION_FP8: return 8;
    case IB_PRECISION_FP16:
    case IB_PRECISION_BF16: return 16;
    default: return 32;
    }
}

void ib_precision_widen(int *cur, enum ib_precision p)
{
    if (*cur < 0 || ib_precision_bits(p) > ib_precision_bits((enum ib_precision)*cur))
        *cur = (int)p;
}

void ib_prec_notes_begin(ib_prec_notes *pn)
{
    pn->cur = -1;
}

void ib_prec_notes_set(ib_prec_notes *pn, enum ib_precision p)
{
    ib_precision_widen(&pn->cur, p);
}

int ib_prec_notes_end(ib_prec_notes *pn, const ib_node *n)
{
    if (pn->cur < 0)
        return IB_OK;
    return IB_VEC_PUSH(&pn->notes, ((ib_prec_note){n, (enum ib_precision)pn->cur}));
}

void ib_prec_notes_read(const ib_prec_notes *pn, ib_backend_prec_fn fn, void *user)
{
    for (size_t i = 0; i < pn->notes.len; i++)
        fn(user, pn->notes.data[i].node, pn->notes.data[i].p);
}

void ib_prec_notes_free(ib_prec_notes *pn)
{
    IB_VEC_FREE(&pn->notes);
    pn->cur = -1;
}

int ib_backend_synchronize(ib_backend *b, ib_err *err)
{
    if (!b)
        return ib_err_set(err, IB_EINVAL, "synchronize: NULL backend");
    return b->ops->synchronize ? b->ops->synchronize(b->ctx, err) : IB_OK;
}

bool ib_q8_row(const float *x, int64_t width, uint8_t *o)
{
    float lo = width > 0 ? x[0] : 0.0f, hi = lo;
    bool finite = true;
    for (int64_t w = 0; w < width; w++) {
        lo = x[w] < lo ? x[w] : lo;
        hi = x[w] > hi ? x[w] : hi;
        finite &= isfinite(x[w]) != 0;
    }
    float scale = (hi - lo) / 255.0f, inv = scale > 0 ? 1.0f / scale : 0.0f;
    for (int64_t w = 0; w < width; w++) {
        float q = (x[w] - lo) * inv + 0.5f;
        o[w] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
    memcpy(o + width, &scale, 4);
    memcpy(o + width + 4, &lo, 4);
    return finite;
}
