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

/* Drop one context's hold on a store; the last one frees the weights left (compiled
 * subgraphs have returned theirs by now) and the store. */
static void store_put(cu_store *s)
{
    if (!s)
        return;
    ib_mutex_lock(&s->mu);
    bool last = --s->refs == 0;
    ib_mutex_unlock(&s->mu);
    if (!last)
        return;
    (void)cudaSetDevice(s->device);
    for (size_t i = 0; i < s->weights.len; i++)
        (void)cudaFree(s->weights.data[i].dev);
    IB_VEC_FREE(&s->weights);
    ib_mutex_destroy(&s->mu);
    ib_free(s);
}

/* The peer's store when it is a cuda context on the same device, else a new one. */
static int store_get(cu_ctx *c, const ib_backend_config *cfg, ib_err *err)
{
    const cu_ctx *peer = ib_backend_peer_ctx(cfg, &ib_backend_cuda_ops);
    if (peer && peer->store && peer->device == c->device) {
        c->store = peer->store;
        ib_mutex_lock(&c->store->mu);
        c->store->refs++;
        ib_mutex_unlock(&c->store->mu);
        return IB_OK;
    }
    cu_store *s = ib_calloc(1, sizeof *s);
    if (!s || ib_mutex_init(&s->mu)) {
        ib_free(s);
        return ib_err_set(err, IB_ENOMEM, "cuda backend: out of memory");
    }
    s->refs = 1;
    s->device = c->device;
    c->store = s;
    return IB_OK;
}

static void cu_destroy(void *ctx)
{
    cu_ctx *c = ctx;
    if (!c)
        return;
    (void)cudaSetDevice(c->device);
    if (c->stream)
        (void)cudaStreamSynchronize(c->stream);
    store_put(c->store);
    IB_VEC_FREE(&c->algos);
    IB_VEC_FREE(&c->lt_algos);
    if (c->staging)
        (void)cudaFreeHost(c->staging);
    for (int i = 0; i < 2; i++)
        if (c->staged[i])
            (void)cudaEventDestroy(c->staged[i]);
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
    c->nhwc_fp16 = cfg->nhwc_fp16;
    c->half_chains = cfg->half_chains;
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
    if ((rc = store_get(c, cfg, err)))
        goto fail;
    /* Pinned staging (two halves, an event each) is an optimisation: without it copies
     * from pageable memory are the driver's. */
    if (cudaMallocHost(&c->staging, CU_STAGING_BYTES) != cudaSuccess ||
        cudaEventCreateWithFlags(&c->staged[0], cudaEventDisableTiming) != cudaSuccess ||
        cudaEventCreateWithFlags(&c->staged[1], cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        if (c->staging)
            (void)cudaFreeHost(c->staging);
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

/* Whether host address p is page-locked (ours from host_alloc, or registered by anyone):
 * the DMA engine then reads or writes it directly. */
static bool cu_is_pinned(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* older runtimes: "invalid value" for pageable memory */
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

/* Host <-> device, ordered after earlier work on the stream; returns when the copy is
 * complete. Page-locked host memory (ib_backend_host_alloc) goes in one DMA. Pageable memory
 * goes through the two halves of the pinned staging buffer in turn, so the memcpy of one
 * chunk overlaps the DMA of the one before (an event per half says when it is free again);
 * without staging, a pageable cudaMemcpyAsync (the driver stages it). */
static int cu_copy(cu_ctx *c, void *dst, const void *src, size_t n, bool to_dev, ib_err *err)
{
    int rc = cu_enter(c, err);
    if (rc)
        return rc;
    enum cudaMemcpyKind kind = to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    const char *what = to_dev ? "tensor_set (host to device copy)" : "tensor_get (device to host copy)";
    if (!c->staging || n <= CU_STAGING_DIRECT || cu_is_pinned(to_dev ? src : dst)) {
        if ((rc = cu_check_rt(NULL, err, cudaMemcpyAsync(dst, src, n, kind, c->stream), what)))
            return rc;
        return cu_check_rt(NULL, err, cudaStreamSynchronize(c->stream), what);
    }
    const size_t half = CU_STAGING_BYTES / 2;
    unsigned char *buf[2] = {c->staging, (unsigned char *)c->staging + half};
    size_t i = 0, prev_k = 0, prev_at = 0;
    for (size_t done = 0; done < n; i++) {
        size_t k = n - done < half ? n - done : half;
        unsigned char *b = buf[i & 1];
        if (to_dev) {
            /* the DMA that last read this half (chunk i-2) must be over before refilling */
            if (i >= 2 && (rc = cu_check_rt(NULL, err, cudaEventSynchronize(c->staged[i & 1]), what)))
                return rc;
            memcpy(b, (const char *)src + done, k);
            rc = cu_check_rt(NULL, err, cudaMemcpyAsync((char *)dst + done, b, k, kind, c->stream), what);
        } else { /* chunk i-2 was read out of this half in the previous iteration */
            rc = cu_check_rt(NULL, err, cudaMemcpyAsync(b, (const char *)src + done, k, kind, c->stream), what);
        }
        if (!rc)
            rc = cu_check_rt(NULL, err, cudaEventRecord(c->staged[i & 1], c->stream), what);
        if (rc)
            return rc;
        if (!to_dev && i >= 1) { /* while chunk i lands, read chunk i-1 out of the other half */
            if ((rc = cu_check_rt(NULL, err, cudaEventSynchronize(c->staged[(i - 1) & 1]), what)))
                return rc;
            memcpy((char *)dst + prev_at, buf[(i - 1) & 1], prev_k);
        }
        prev_k = k;
        prev_at = done;
        done += k;
    }
    if ((rc = cu_check_rt(NULL, err, cudaStreamSynchronize(c->stream), what)))
        return rc;
    if (!to_dev) /* the last chunk, i-1 */
        memcpy((char *)dst + prev_at, buf[(i - 1) & 1], prev_k);
    return IB_OK;
}

static int cu_buffer_copy(void *ctx, void *dst_impl, size_t dst_off, const void *src_impl,
                          size_t src_off, size_t nbytes, ib_err *err)
{
    cu_ctx *c = ctx;
    int rc = cu_enter(c, err);
    if (rc)
        return rc;
    /* ordered on the stream before the run that reads it: no wait here */
    return cu_check_rt(NULL, err,
                       cudaMemcpyAsync((char *)dst_impl + dst_off, (const char *)src_impl + src_off,
                                       nbytes, cudaMemcpyDeviceToDevice, c->stream),
                       "buffer_copy (device to device)");
}

/* Another context's buffer (ABI 8): device pointers of one device are valid in every context
 * of the process (one primary context per device), and the source's work is done, so the
 * copy is ordered on this stream alone. Other devices go through the host (the caller). */
static int cu_buffer_copy_from(void *ctx, void *dst_impl, size_t dst_off, void *src_ctx,
                               const void *src_impl, size_t src_off, size_t nbytes, ib_err *err)
{
    const cu_ctx *src = src_ctx;
    cu_ctx *c = ctx;
    if (src->device != c->device)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "buffer_copy: from device %d to device %d goes through the host",
                          src->device, c->device);
    return cu_buffer_copy(ctx, dst_impl, dst_off, src_impl, src_off, nbytes, err);
}

static int cu_host_alloc(void *ctx, size_t nbytes, void **ptr, ib_err *err)
{
    cu_ctx *c = ctx;
    int rc = cu_enter(c, err);
    if (rc)
        return rc;
    /* portable: page-locked for every device of the process, so one worker's buffers may
     * feed any GPU; cudaHostAlloc returns page-aligned memory */
    cudaError_t st = cudaHostAlloc(ptr, nbytes, cudaHostAllocPortable);
    if (st != cudaSuccess) {
        (void)cudaGetLastError();
        *ptr = NULL;
        return ib_err_set(err, IB_ENOMEM,
                          "cuda backend: cannot page-lock %zu bytes of host memory (%s); "
                          "lower --batch or raise the locked-memory limit (ulimit -l)",
                          nbytes, cudaGetErrorString(st));
    }
    return IB_OK;
}

static void cu_host_free(void *ctx, void *ptr)
{
    (void)ctx;
    (void)cudaFreeHost(ptr);
    (void)cudaGetLastError();
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

/* The store's entry for (host, fmt) with at least nbytes, its refcount raised; NULL when
 * absent. Under s->mu. */
static cu_weight *store_find(cu_store *s, const void *host, int fmt, size_t nbytes)
{
    for (size_t i = 0; i < s->weights.len; i++) {
        cu_weight *w = &s->weights.data[i];
        if (w->host == host && w->fmt == fmt && w->nbytes >= nbytes) {
            w->refs++;
            return w;
        }
    }
    return NULL;
}

static int store_add(cu_store *s, const void *host, int fmt, size_t nbytes, void *dev, ib_err *err)
{
    cu_weight w = {.host = host, .fmt = fmt, .nbytes = nbytes, .dev = dev, .refs = 1};
    if (IB_VEC_PUSH(&s->weights, w)) {
        (void)cudaFree(dev);
        return ib_err_set(err, IB_ENOMEM, "cuda backend: out of memory");
    }
    return IB_OK;
}

/* Under the store's lock, so the workers of one GPU compiling at once upload each constant
 * once (the second waits for the first's upload, then shares it). */
int cu_weight_get(cu_ctx *c, const void *host, size_t nbytes, void **dev, ib_err *err)
{
    cu_store *s = c->store;
    int rc = IB_OK;
    ib_mutex_lock(&s->mu);
    cu_weight *w = store_find(s, host, CU_W_PLAIN, nbytes);
    if (w) {
        *dev = w->dev;
        goto out;
    }
    void *p = NULL;
    if ((rc = cu_check_rt(NULL, err, cudaMalloc(&p, nbytes ? nbytes : 1), "cudaMalloc (weights)")))
        goto out;
    if ((rc = cu_copy(c, p, host, nbytes, true, err))) {
        (void)cudaFree(p);
        goto out;
    }
    if (!(rc = store_add(s, host, CU_W_PLAIN, nbytes, p, err)))
        *dev = p;
out:
    ib_mutex_unlock(&s->mu);
    return rc;
}

/* Bytes of the device form fmt of a float32 [K, C, RS] constant (weight_on_device). */
static size_t derived_bytes(int fmt, int64_t K, int64_t C, int64_t RS)
{
    if (fmt == CU_W_U8_ROWWISE) /* RS = 1 */
        return (size_t)K * ((size_t)C + IB_Q8_ROW_EXTRA);
    return (size_t)(K * C * RS) * 2;
}

/* fmt from the float32 upload f32 on c's stream, into p; waits for it. */
static int derive(cu_ctx *c, int fmt, const void *f32, void *p, int64_t K, int64_t C,
                  int64_t RS, ib_err *err)
{
    const char *what = fmt == CU_W_U8_ROWWISE ? "table to row-wise 8 bits" : "constant to 16 bits";
    int st;
    if (fmt == CU_W_U8_ROWWISE) {
        /* the first row that is not finite, + 1 (0: none), left on the device by the kernel */
        long long *bad = NULL, first = 0;
        int rc = cu_check_rt(NULL, err, cudaMalloc((void **)&bad, sizeof *bad), what);
        if (rc)
            return rc;
        st = ibk_table_q8_rows(c->stream, f32, p, K, C, bad);
        if (!(rc = cu_check_rt(NULL, err, (cudaError_t)st, what)))
            rc = cu_check_rt(NULL, err, cudaMemcpyAsync(&first, bad, sizeof first,
                                                        cudaMemcpyDeviceToHost, c->stream), what);
        if (!rc)
            rc = cu_check_rt(NULL, err, cudaStreamSynchronize(c->stream), what);
        (void)cudaFree(bad);
        if (!rc && first > 0)
            rc = ib_err_set(err, IB_EINVAL, "cuda backend: an embedding table's row %lld is not "
                            "finite; int8 row-wise tables need finite weights", first - 1);
        return rc;
    }
    st = fmt == CU_W_BF16 ? ibk_f32_to_16(c->stream, 1, f32, p, K * C * RS)
                          : ibk_nchw_to_nhwc_f16(c->stream, f32, p, K, C, RS);
    int rc = cu_check_rt(NULL, err, (cudaError_t)st, what);
    return rc ? rc : cu_check_rt(NULL, err, cudaStreamSynchronize(c->stream), what);
}

/* A device form of a float32 constant, made on the device from the plain upload: fmt
 * CU_W_F16_KRSC (KCRS -> KRSC float16), CU_W_F16 or CU_W_BF16 (RS = 1: the layout kept) or
 * CU_W_U8_ROWWISE (RS = 1). */
static int weight_on_device(cu_ctx *c, const void *host, int64_t K, int64_t C, int64_t RS,
                            int fmt, void **dev, ib_err *err)
{
    cu_store *s = c->store;
    size_t n = (size_t)(K * C * RS), nb = derived_bytes(fmt, K, C, RS);
    int rc = IB_OK;
    ib_mutex_lock(&s->mu);
    cu_weight *w = store_find(s, host, fmt, nb);
    if (w) {
        *dev = w->dev;
        goto out;
    }
    /* the float32 constant (the plain store entry, shared with plain users), then the
     * conversion kernel (for KRSC, the activations' NCHW -> NHWC one with N = K, HW = RS) */
    void *f32 = NULL, *p = NULL;
    ib_mutex_unlock(&s->mu);
    rc = cu_weight_get(c, host, n * 4, &f32, err);
    ib_mutex_lock(&s->mu);
    if (rc)
        goto out;
    if ((w = store_find(s, host, fmt, nb))) { /* another context was faster */
        *dev = w->dev;
        goto drop;
    }
    if ((rc = cu_check_rt(NULL, err, cudaMalloc(&p, nb ? nb : 1), "cudaMalloc (weights)")))
        goto drop;
    if ((rc = derive(c, fmt, f32, p, K, C, RS, err))) {
        (void)cudaFree(p);
        goto drop;
    }
    if (!(rc = store_add(s, host, fmt, nb, p, err)))
        *dev = p;
drop:
    ib_mutex_unlock(&s->mu);
    cu_weight_put(c, host, CU_W_PLAIN); /* the f32 copy goes unless a plain user holds it */
    return rc;
out:
    ib_mutex_unlock(&s->mu);
    return rc;
}

int cu_weight_get_f16_krsc(cu_ctx *c, const void *host, int64_t K, int64_t C, int64_t RS,
                           void **dev, ib_err *err)
{
    return weight_on_device(c, host, K, C, RS, CU_W_F16_KRSC, dev, err);
}

int cu_weight_get_f16(cu_ctx *c, const void *host, int64_t rows, int64_t dim, void **dev,
                      ib_err *err)
{
    return weight_on_device(c, host, rows, dim, 1, CU_W_F16, dev, err);
}

int cu_weight_get_q8_rows(cu_ctx *c, const void *host, int64_t rows, int64_t dim, void **dev,
                          ib_err *err)
{
    return weight_on_device(c, host, rows, dim, 1, CU_W_U8_ROWWISE, dev, err);
}

int cu_weight_get_16(cu_ctx *c, const void *host, int64_t n, bool bf16, void **dev, ib_err *err)
{
    return weight_on_device(c, host, 1, n, 1, bf16 ? CU_W_BF16 : CU_W_F16, dev, err);
}

int cu_weight_get_derived(cu_ctx *c, const void *host, int fmt, size_t nbytes,
                          void (*fill)(void *user, void *dst), void *user, void **dev,
                          ib_err *err)
{
    cu_store *s = c->store;
    int rc = IB_OK;
    void *tmp = NULL, *p = NULL;
    ib_mutex_lock(&s->mu);
    cu_weight *w = store_find(s, host, fmt, nbytes);
    if (w) {
        *dev = w->dev;
        goto out;
    }
    if (!(tmp = ib_malloc(nbytes ? nbytes : 1))) {
        rc = ib_err_set(err, IB_ENOMEM, "cuda backend: out of memory");
        goto out;
    }
    fill(user, tmp);
    if ((rc = cu_check_rt(NULL, err, cudaMalloc(&p, nbytes ? nbytes : 1), "cudaMalloc (weights)")))
        goto out;
    if ((rc = cu_copy(c, p, tmp, nbytes, true, err))) {
        (void)cudaFree(p);
        goto out;
    }
    if (!(rc = store_add(s, host, fmt, nbytes, p, err)))
        *dev = p;
out:
    ib_mutex_unlock(&s->mu);
    ib_free(tmp);
    return rc;
}

void cu_weight_put(cu_ctx *c, const void *host, int fmt)
{
    cu_store *s = c->store;
    ib_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->weights.len; i++) {
        cu_weight *w = &s->weights.data[i];
        if (w->host != host || w->fmt != fmt)
            continue;
        if (--w->refs == 0) {
            (void)cudaFree(w->dev); /* no subgraph of any sharing context uses it any more */
            s->weights.data[i] = s->weights.data[--s->weights.len];
        }
        break;
    }
    ib_mutex_unlock(&s->mu);
}

/* ---- op registry ---------------------------------------------------------------- */

static const cu_op *const g_families[] = {cu_ops_conv, cu_ops_matmul, cu_ops_ew, cu_ops_shape,
                                           cu_ops_rnn, cu_ops_logic, cu_ops_attn, cu_ops_detect,
                                           cu_ops_accum};

static bool same_domain(const char *a, const char *b)
{
    if (!a[0] || strcmp(a, "ai.onnx") == 0)
        return !b[0] || strcmp(b, "ai.onnx") == 0;
    return strcmp(a, b) == 0;
}

bool cu_node_is(const ib_node *n, const char *domain, const char *op_type)
{
    return strcmp(op_type, n->op_type) == 0 && same_domain(domain, n->domain);
}

const cu_op *cu_op_find(const ib_node *n)
{
    for (size_t f = 0; f < IB_ARRAY_LEN(g_families); f++)
        for (const cu_op *op = g_families[f]; op->op_type; op++)
            if (cu_node_is(n, op->domain, op->op_type))
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
    /* int8 and fp8 take what fp16 takes: their products with constant weights go 8-bit where
     * they can, everything else runs as at fp16 (cuda_matmul_q8.c) */
    if (p == IB_PRECISION_INT8 || p == IB_PRECISION_FP8)
        p = IB_PRECISION_FP16;
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
    .set_profiling = cu_set_profiling,
    .profile_read = cu_profile_read,
    .device_info = cu_device_info,
    .host_alloc = cu_host_alloc,
    .host_free = cu_host_free,
    .buffer_copy = cu_buffer_copy,
    .buffer_copy_from = cu_buffer_copy_from,
    .replay_status = cu_replay_status,
    .precision_read = cu_precision_read, /* ABI 10 */
    /* BERT's heads as inferbench.MultiHeadAttention (cuda_attn.c); DotInteraction and
     * GatherConcat are not implemented here */
    .caps = IB_BACKEND_CAP_MHA,
};
