/*
 * cpu_const.c - constants (weights) converted at compile time into the layout a primitive
 * wants: borrowed when already in it, reordered into exec-owned memory, or, for weights that
 * sessions of one backend instance share, looked up in (or added to) the instance's cache
 * keyed by the bytes' hash and both descriptors, so every worker of a model holds one copy.
 */
#include <string.h>

#include "backend/cpu/cpu_internal.h"

/* Reorder cdata (layout src) into dst (layout want) now, with attr. */
static int const_reorder_into(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                              const dnnl_memory_desc_t *want, const_dnnl_primitive_attr_t attr,
                              dnnl_memory_t *mem, ib_err *err);

int cpu_const_reorder(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                      const dnnl_memory_desc_t *want, const_dnnl_primitive_attr_t attr,
                      dnnl_memory_t *mem, ib_err *err)
{
    /* already in the wanted layout (oneDNN's f32 brgemm matmul keeps plain weights): the
     * constant outlives the exec, so borrow it instead of copying 1.3 GB for BERT-Large */
    if (!attr && dnnl_memory_desc_equal(src, want))
        return cpu_mem(e, want, (void *)(uintptr_t)cdata, mem, err);
    void *dst = cpu_alloc(e, dnnl_memory_desc_get_size(want));
    if (!dst)
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for converted weights");
    int rc = cpu_mem(e, want, dst, mem, err);
    if (rc)
        return rc;
    return const_reorder_into(e, src, cdata, want, attr, mem, err);
}

/* 64-bit hash of the bytes (8-byte words, multiply-xorshift; the tail byte-wise). */
static uint64_t bytes_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* The shared entry for (src bytes, src md, want md), or a new zeroed one to fill (*fresh). */
static int shared_entry(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                        const dnnl_memory_desc_t *want, void **data, bool *fresh, ib_err *err)
{
    cpu_ctx *c = e->ctx;
    size_t nb = dnnl_memory_desc_get_size(src);
    uint64_t h = bytes_hash(cdata, nb);
    *fresh = false;
    for (size_t i = 0; i < c->wconv.len; i++) {
        cpu_wconv *w = &c->wconv.data[i];
        if (w->src_bytes == nb && w->hash == h && dnnl_memory_desc_equal(&w->src, src) &&
            dnnl_memory_desc_equal(&w->want, want)) {
            *data = w->data;
            return IB_OK;
        }
    }
    size_t bytes = dnnl_memory_desc_get_size(want);
    cpu_wconv w = {nb, h, *src, *want, NULL, NULL};
    if (bytes > SIZE_MAX - IB_BACKEND_ALIGN || !(w.raw = ib_calloc(1, bytes + IB_BACKEND_ALIGN)))
        return cpu_fail(e, err, IB_ENOMEM, "out of memory for converted weights");
    w.data = (void *)(((uintptr_t)w.raw + IB_BACKEND_ALIGN - 1) &
                      ~(uintptr_t)(IB_BACKEND_ALIGN - 1));
    if (IB_VEC_PUSH(&c->wconv, w)) {
        ib_free(w.raw);
        return cpu_fail(e, err, IB_ENOMEM, "out of memory");
    }
    *data = w.data;
    *fresh = true;
    return IB_OK;
}

/* Forget the newest shared entry (its conversion failed). */
static void shared_drop_last(cpu_exec *e)
{
    cpu_ctx *c = e->ctx;
    ib_free(c->wconv.data[c->wconv.len - 1].raw);
    c->wconv.len--;
}

int cpu_const_reorder_shared(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                             const dnnl_memory_desc_t *want, dnnl_memory_t *mem, ib_err *err)
{
    if (dnnl_memory_desc_equal(src, want))
        return cpu_mem(e, want, (void *)(uintptr_t)cdata, mem, err);
    void *data = NULL;
    bool fresh = false;
    int rc = shared_entry(e, src, cdata, want, &data, &fresh, err);
    if (!rc)
        rc = cpu_mem(e, want, data, mem, err);
    if (!rc && fresh)
        rc = const_reorder_into(e, src, cdata, want, NULL, mem, err);
    if (rc && fresh)
        shared_drop_last(e); /* *mem points at it, but the failed compile discards the exec */
    return rc;
}

int cpu_const_derived_shared(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                             const dnnl_memory_desc_t *want,
                             int (*fill)(void *user, void *dst, ib_err *err), void *user,
                             void **data, ib_err *err)
{
    bool fresh = false;
    int rc = shared_entry(e, src, cdata, want, data, &fresh, err);
    if (!rc && fresh && (rc = fill(user, *data, err)))
        shared_drop_last(e);
    return rc;
}

static int const_reorder_into(cpu_exec *e, const dnnl_memory_desc_t *src, const void *cdata,
                              const dnnl_memory_desc_t *want, const_dnnl_primitive_attr_t attr,
                              dnnl_memory_t *mem, ib_err *err)
{
    int rc;
    /* runs once, here: oneDNN manages its own scratchpad (compensation buffers) */
    dnnl_primitive_attr_t a = NULL;
    dnnl_status_t st = attr ? dnnl_primitive_attr_clone(&a, attr) : dnnl_primitive_attr_create(&a);
    if (!st)
        st = dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_library);
    dnnl_primitive_desc_t pd = NULL;
    if (!st)
        st = dnnl_reorder_primitive_desc_create(&pd, src, e->ctx->eng, want, e->ctx->eng, a);
    if (a)
        dnnl_primitive_attr_destroy(a);
    if ((rc = cpu_check(e, err, st, "weights reorder")))
        return rc;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t ms = NULL;
    rc = cpu_check(e, err, dnnl_primitive_create(&prim, pd), "weights reorder");
    if (!rc)
        rc = cpu_check(e, err, dnnl_memory_create(&ms, src, e->ctx->eng, (void *)(uintptr_t)cdata),
                       "memory_create");
    if (!rc) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, ms}, {DNNL_ARG_TO, *mem}};
        rc = cpu_check(e, err, dnnl_primitive_execute(prim, e->stream, 2, args),
                       "weights reorder");
        if (!rc)
            rc = cpu_check(e, err, dnnl_stream_wait(e->stream), "stream_wait");
    }
    if (ms)
        dnnl_memory_destroy(ms);
    if (prim)
        dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}
