/*
 * cuda_backend.c - the "cuda" backend table: availability (driver and
 * device discovery with a reason when there is none), the context (device,
 * stream, cuBLASLt/cuDNN handles, pinned staging, weight cache), device
 * buffers, plain-layout tensor_set/get through pinned staging, synchronize,
 * the op registry and supports_op. Compiling and running subgraphs is in
 * cuda_exec.c; the ops are in cuda_ops_*.c, cuda_matmul.c, cuda_conv.c.
 *
 * Every entry makes the context's device current first (cudaSetDevice is
 * per thread), so one process can drive several GPUs from several threads.
 * Errors are returned (IB_ENOMEM for device OOM, IB_EBACKEND otherwise),
 * never printed, and non-sticky CUDA errors are cleared.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_internal.h"

/* ---- errors --------------------------------------------------------------- */

int cu_fail(cu_exec *e, ib_err *err, int code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e && e->cur)
        return ib_err_set(err, code, "cuda backend: node '%s' (%s): %s", e->cur->name,
                          e->cur->op_type, msg);
    return ib_err_set(err, code, "cuda backend: %s", msg);
}

int cu_check_rt(cu_exec *e, ib_err *err, cudaError_t st, const char *what)
{
    if (st == cudaSuccess)
        return IB_OK;
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls work */
    int code = st == cudaErrorMemoryAllocation ? IB_ENOMEM : IB_EBACKEND;
    return cu_fail(e, err, code, "%s failed: %s (%s)%s", what, cudaGetErrorString(st),
                   cudaGetErrorName(st),
                   st == cudaErrorNoKernelImageForDevice
                       ? "; rebuild with CUDA_ARCHS for this GPU (Makefile)"
                       : "");
}

int cu_check_lt(cu_exec *e, ib_err *err, cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return IB_OK;
    int code = st == CUBLAS_STATUS_ALLOC_FAILED      ? IB_ENOMEM
               : st == CUBLAS_STATUS_NOT_SUPPORTED   ? IB_EUNSUPPORTED
               : st == CUBLAS_STATUS_ARCH_MISMATCH   ? IB_EUNSUPPORTED
                                                     : IB_EBACKEND;
    return cu_fail(e, err, code, "cuBLASLt %s failed (status %d)", what, (int)st);
}

int cu_check_dnn(cu_exec *e, ib_err *err, cudnnStatus_t st, const char *what)
{
    if (st == CUDNN_STATUS_SUCCESS)
        return IB_OK;
    int code = st == CUDNN_STATUS_ALLOC_FAILED ? IB_ENOMEM
               : st == CUDNN_STATUS_NOT_SUPPORTED ? IB_EUNSUPPORTED
                                                  : IB_EBACKEND;
    return cu_fail(e, err, code, "cuDNN %s failed: %s", what, cudnnGetErrorString(st));
}

int cu_enter(cu_ctx *c, ib_err *err)
{
    return cu_check_rt(NULL, err, cudaSetDevice(c->device), "cudaSetDevice");
}

/* ---- availability ---------------------------------------------------------- */

/* Why cudaGetDeviceCount failed, as a static sentence (the vtable's reason
 * must outlive the call). */
static const char *count_reason(cudaError_t st)
{
    switch (st) {
    case cudaErrorNoDevice:
        return "no CUDA device: the NVIDIA driver reports no GPU (cudaErrorNoDevice)";
    case cudaErrorInsufficientDriver:
        return "no CUDA device: no NVIDIA driver is loaded, or it is older than the CUDA 13 "
               "runtime this build links (cudaErrorInsufficientDriver)";
    case cudaErrorStubLibrary:
        return "no CUDA device: only the driver stub libcuda.so was found, no NVIDIA driver is "
               "installed (cudaErrorStubLibrary)";
    case cudaErrorSystemDriverMismatch:
        return "no CUDA device: the kernel driver and libcuda versions differ "
               "(cudaErrorSystemDriverMismatch)";
    case cudaErrorInitializationError:
        return "no CUDA device: the CUDA driver failed to initialise "
               "(cudaErrorInitializationError)";
    case cudaErrorDevicesUnavailable:
        return "no CUDA device: every GPU is busy or in exclusive-process mode "
               "(cudaErrorDevicesUnavailable)";
    default:
        return "no CUDA device: cudaGetDeviceCount failed (check the driver with nvidia-smi)";
    }
}

static bool cu_available(const char **reason)
{
    int n = 0;
    cudaError_t st = cudaGetDeviceCount(&n);
    if (st != cudaSuccess) {
        (void)cudaGetLastError();
        *reason = count_reason(st);
        return false;
    }
    if (n <= 0) {
        *reason = "no CUDA device: cudaGetDeviceCount found 0 GPUs";
        return false;
    }
    return true;
}

/* ---- context ----------------------------------------------------------------- */

static void cu_destroy(void *ctx)
{
    cu_ctx *c = ctx;
    if (!c)
        return;
    (void)cudaSetDevice(c->device);
    if (c->stream)
        (void)cudaStreamSynchronize(c->stream);
    for (size_t i = 0; i < c->weights.len; i++)
        (void)cudaFree(c->weights.data[i].dev);
    IB_VEC_FREE(&c->weights);
    if (c->staging)
        (void)cudaFreeHost(c->staging);
    if (c->lt_ws)
        (void)cudaFree(c->lt_ws);
    if (c->dnn)
        (void)cudnnDestroy(c->dnn);
    if (c->lt)
        (void)cublasLtDestroy(c->lt);
    if (c->stream)
        (void)cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    ib_free(c);
}

static int cu_create(const ib_backend_config *cfg, void **out, ib_err *err)
{
    int n = 0;
    cudaError_t st = cudaGetDeviceCount(&n);
    if (st != cudaSuccess || n <= 0) {
        (void)cudaGetLastError();
        return ib_err_set(err, IB_EUNSUPPORTED, "cuda backend: %s", count_reason(st));
    }
    if (cfg->device >= n)
        return ib_err_set(err, IB_ENOTFOUND,
                          "cuda backend: device %d does not exist: this machine has %d CUDA "
                          "device%s (0..%d; see `inferbench sysinfo`)",
                          cfg->device, n, n == 1 ? "" : "s", n - 1);
    cu_ctx *c = ib_calloc(1, sizeof *c);
    if (!c)
        return ib_err_set(err, IB_ENOMEM, "cuda backend: out of memory");
    c->device = cfg->device;
    c->precision = cfg->precision;
    struct cudaDeviceProp prop;
    int rc = cu_check_rt(NULL, err, cudaGetDeviceProperties(&prop, c->device),
                         "cudaGetDeviceProperties");
    if (rc)
        goto fail;
    snprintf(c->name, sizeof c->name, "%s", prop.name);
    c->sm_major = prop.major;
    c->sm_minor = prop.minor;
    c->sm_count = prop.multiProcessorCount;
    c->total_mem = prop.totalGlobalMem;
    /* The Makefile builds SASS for sm_80 and sm_90 only (no PTX): 8.x runs
     * the sm_80 code, 9.0 the sm_90 code, anything else has no kernel image. */
    if (c->sm_major != 8 && c->sm_major != 9) {
        rc = ib_err_set(err, IB_EUNSUPPORTED,
                        "cuda backend: device %d (%s) is sm_%d%d; this build has kernels for "
                        "sm_80 and sm_90 only: rebuild with CUDA_ARCHS='-gencode "
                        "arch=compute_%d%d,code=sm_%d%d'",
                        c->device, c->name, c->sm_major, c->sm_minor, c->sm_major, c->sm_minor,
                        c->sm_major, c->sm_minor);
        goto fail;
    }
    if ((rc = cu_enter(c, err)))
        goto fail;
    if ((rc = cu_check_rt(NULL, err, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking),
                          "cudaStreamCreate")))
        goto fail;
    if ((rc = cu_check_lt(NULL, err, cublasLtCreate(&c->lt), "cublasLtCreate")))
        goto fail;
    if ((rc = cu_check_dnn(NULL, err, cudnnCreate(&c->dnn), "cudnnCreate")))
        goto fail;
    if ((rc = cu_check_dnn(NULL, err, cudnnSetStream(c->dnn, c->stream), "cudnnSetStream")))
        goto fail;
    if ((rc = cu_check_rt(NULL, err, cudaMalloc(&c->lt_ws, CU_LT_WORKSPACE),
                          "cudaMalloc (cuBLASLt workspace)")))
        goto fail;
    /* Pinned staging is an optimisation: without it copies are pageable. */
    if (cudaMallocHost(&c->staging, CU_STAGING_BYTES) != cudaSuccess) {
        (void)cudaGetLastError();
        c->staging = NULL;
    }
    *out = c;
    return IB_OK;
fail:
    cu_destroy(c);
    return rc;
}

/* ---- buffers ------------------------------------------------------------------ */

static int cu_buffer_alloc(void *ctx, size_t nbytes, void **impl, void **host_ptr, ib_err *err)
{
    cu_ctx *c = ctx;
    int rc = cu_enter(c, err);
    if (rc)
        return rc;
    void *p = NULL;
    cudaError_t st = cudaMalloc(&p, nbytes);
    if (st != cudaSuccess) {
        (void)cudaGetLastError();
        size_t fr = 0, tot = 0;
        (void)cudaMemGetInfo(&fr, &tot);
        (void)cudaGetLastError();
        return ib_err_set(err, st == cudaErrorMemoryAllocation ? IB_ENOMEM : IB_EBACKEND,
                          "cuda backend: device %d (%s): cannot allocate %zu bytes (%s); %zu of "
                          "%zu bytes free: use a smaller batch or fewer workers per GPU",
                          c->device, c->name, nbytes, cudaGetErrorString(st), fr, tot);
    }
    *impl = p;
    *host_ptr = NULL; /* device memory: the wrappers go through tensor_set/get */
    return IB_OK;
}

static void cu_buffer_free(void *ctx, void *impl)
{
    cu_ctx *c = ctx;
    if (!impl)
        return;
    (void)cudaSetDevice(c->device);
    (void)cudaStreamSynchronize(c->stream); /* no kernel may still use it */
    (void)cudaFree(impl);
    (void)cudaGetLastError();
}

/* Host <-> device through the pinned staging buffer in chunks (pageable
 * memory when staging is absent). Ordered after earlier work on the stream;
 * returns when the copy is complete. */
static int cu_copy(cu_ctx *c, void *dst, const void *src, size_t n, bool to_dev, ib_err *err)
{
    int rc = cu_enter(c, err);
    if (rc)
        return rc;
    enum cudaMemcpyKind kind = to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    const char *what = to_dev ? "tensor_set (host to device copy)" : "tensor_get (device to host copy)";
    if (!c->staging) {
        if ((rc = cu_check_rt(NULL, err, cudaMemcpyAsync(dst, src, n, kind, c->stream), what)))
            return rc;
        return cu_check_rt(NULL, err, cudaStreamSynchronize(c->stream), what);
    }
    for (size_t done = 0; done < n;) {
        size_t k = n - done < CU_STAGING_BYTES ? n - done : CU_STAGING_BYTES;
        if (to_dev)
            memcpy(c->staging, (const char *)src + done, k);
        const void *s = to_dev ? c->staging : (const char *)src + done;
        void *d = to_dev ? (char *)dst + done : c->staging;
        if ((rc = cu_check_rt(NULL, err, cudaMemcpyAsync(d, s, k, kind, c->stream), what)) ||
            (rc = cu_check_rt(NULL, err, cudaStreamSynchronize(c->stream), what)))
            return rc;
        if (!to_dev)
            memcpy((char *)dst + done, c->staging, k);
        done += k;
    }
    return IB_OK;
}

static int cu_tensor_set(void *ctx, void *impl, size_t offset, const void *src, size_t nbytes,
                         ib_err *err)
{
    return cu_copy(ctx, (char *)impl + offset, src, nbytes, true, err);
}

static int cu_tensor_get(void *ctx, void *impl, size_t offset, void *dst, size_t nbytes,
                         ib_err *err)
{
    return cu_copy(ctx, dst, (const char *)impl + offset, nbytes, false, err);
}

static int cu_synchronize(void *ctx, ib_err *err)
{
    cu_ctx *c = ctx;
    int rc = cu_enter(c, err);
    return rc ? rc : cu_check_rt(NULL, err, cudaStreamSynchronize(c->stream), "synchronize");
}

/* ---- weights ------------------------------------------------------------------- */

int cu_weight_get(cu_ctx *c, const void *host, size_t nbytes, void **dev, ib_err *err)
{
    for (size_t i = 0; i < c->weights.len; i++) {
        cu_weight *w = &c->weights.data[i];
        if (w->host == host && w->nbytes >= nbytes) {
            w->refs++;
            *dev = w->dev;
            return IB_OK;
        }
    }
    void *p = NULL;
    int rc = cu_check_rt(NULL, err, cudaMalloc(&p, nbytes ? nbytes : 1), "cudaMalloc (weights)");
    if (rc)
        return rc;
    if ((rc = cu_copy(c, p, host, nbytes, true, err))) {
        (void)cudaFree(p);
        return rc;
    }
    cu_weight w = {.host = host, .nbytes = nbytes, .dev = p, .refs = 1};
    if (IB_VEC_PUSH(&c->weights, w)) {
        (void)cudaFree(p);
        return ib_err_set(err, IB_ENOMEM, "cuda backend: out of memory");
    }
    *dev = p;
    return IB_OK;
}

void cu_weight_put(cu_ctx *c, const void *host)
{
    for (size_t i = 0; i < c->weights.len; i++) {
        cu_weight *w = &c->weights.data[i];
        if (w->host != host)
            continue;
        if (--w->refs == 0) {
            (void)cudaFree(w->dev);
            c->weights.data[i] = c->weights.data[--c->weights.len];
        }
        return;
    }
}

/* ---- op registry ---------------------------------------------------------------- */

static const cu_op *const g_families[] = {cu_ops_conv, cu_ops_matmul, cu_ops_ew, cu_ops_shape,
                                           cu_ops_rnn};

static bool same_domain(const char *a, const char *b)
{
    if (!a[0] || strcmp(a, "ai.onnx") == 0)
        return !b[0] || strcmp(b, "ai.onnx") == 0;
    return strcmp(a, b) == 0;
}

const cu_op *cu_op_find(const ib_node *n)
{
    for (size_t f = 0; f < IB_ARRAY_LEN(g_families); f++)
        for (const cu_op *op = g_families[f]; op->op_type; op++)
            if (strcmp(op->op_type, n->op_type) == 0 && same_domain(op->domain, n->domain))
                return op;
    return NULL;
}

const cu_op *cu_op_at(size_t i)
{
    for (size_t f = 0; f < IB_ARRAY_LEN(g_families); f++)
        for (const cu_op *op = g_families[f]; op->op_type; op++)
            if (i-- == 0)
                return op;
    return NULL;
}

bool cu_is_const(const ib_graph *g, const ib_node *n, uint32_t i)
{
    const ib_value *v = ib_node_input(g, n, i);
    return v && (v->flags & IB_VALUE_CONST) && v->constant && v->constant->data;
}

bool cu_all_f32(const ib_node *n, const ib_tensor_desc *const *in)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (in[i] && in[i]->dtype != IB_DTYPE_FLOAT32)
            return false;
    return true;
}

const ib_tensor_desc *cu_out_desc(const ib_graph *g, const ib_node *n, uint32_t i)
{
    const ib_value *v = ib_node_output(g, n, i);
    return v && v->shape_known && ib_tensor_desc_numel(&v->desc) >= 0 ? &v->desc : NULL;
}

static bool cu_supports_op(void *ctx, const ib_graph *g, const ib_node *n,
                           const ib_tensor_desc *const *in, enum ib_precision p)
{
    const cu_ctx *c = ctx;
    /* int8 and fp8 are not implemented (docs/cuda_backend.md): the
     * partitioner then keeps such sessions on the reference kernels. */
    if (p != IB_PRECISION_FP32 && p != IB_PRECISION_FP16 && p != IB_PRECISION_BF16)
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (in[i] && (in[i]->ndim > IBK_MAX_DIMS || ib_tensor_desc_numel(in[i]) < 0))
            return false;
    for (uint32_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] != IB_VALUE_NONE && !cu_out_desc(g, n, i))
            return false;
    const cu_op *op = cu_op_find(n);
    return op && op->supports(c, g, n, in, p);
}

static int cu_device_info(void *ctx, ib_backend_device_info *out)
{
    const cu_ctx *c = ctx;
    snprintf(out->name, sizeof out->name, "%s", c->name);
    out->memory_bytes = c->total_mem;
    out->compute_units = c->sm_count;
    return IB_OK;
}

const struct ib_backend_ops ib_backend_cuda_ops = {
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "cuda",
    .available = cu_available,
    .create = cu_create,
    .destroy = cu_destroy,
    .supports_op = cu_supports_op,
    .buffer_alloc = cu_buffer_alloc,
    .buffer_free = cu_buffer_free,
    .tensor_set = cu_tensor_set,
    .tensor_get = cu_tensor_get,
    .plan_bytes = NULL, /* plain layout everywhere */
    .graph_compile = cu_graph_compile,
    .graph_free = cu_graph_free,
    .graph_run = cu_graph_run,
    .synchronize = cu_synchronize,
    .value_desc = NULL,
    .device_info = cu_device_info,
};
