/*
 * tensor_io.c - one ONNX TensorProto <-> tensor: the .pb files of the ONNX
 * node tests and of `inferbench model run` outputs. Internal form
 * (ib_tensor, src/onnx/onnx.h) and public form (ib_tensor_view,
 * include/inferbench/onnx.h). Reading goes through the same pre-scan and
 * checks as model initializers (load_tensor.c); writing always uses raw_data
 * (string_data for STRING), as onnx.numpy_helper does.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/onnx.h"
#include "onnx/onnx.h"
#include "onnx/pb.h"
#include "onnx/proto.h"

int ib_onnx_tensor_to_proto(const ib_tensor *t, const char *name, ib_arena *a,
                            Onnx__TensorProto *tp)
{
    onnx__tensor_proto__init(tp);
    const ib_tensor_desc *d = &t->desc;
    if (d->ndim < 0 || d->ndim > IB_MAX_DIMS || ib_tensor_desc_numel(d) < 0) return IB_EINVAL;
    tp->n_dims = (size_t)d->ndim;
    if (d->ndim && !(tp->dims = ib_arena_memdup(a, d->dims, (size_t)d->ndim * sizeof(int64_t))))
        return IB_ENOMEM;
    tp->has_data_type = 1;
    tp->data_type = (int32_t)d->dtype;
    tp->name = (char *)(uintptr_t)(name ? name : "");
    if (d->dtype == IB_DTYPE_STRING) {
        size_t n = (size_t)ib_tensor_desc_numel(d);
        if (n > t->nbytes / sizeof(char *)) return IB_EINVAL;
        ProtobufCBinaryData *sd = ib_arena_alloc(a, (n ? n : 1) * sizeof *sd);
        if (!sd) return IB_ENOMEM;
        const char *const *ptrs = t->data;
        for (size_t i = 0; i < n; i++) {
            sd[i].data = (uint8_t *)(uintptr_t)ptrs[i];
            sd[i].len = strlen(ptrs[i]);
        }
        tp->n_string_data = n;
        tp->string_data = sd;
        return IB_OK;
    }
    size_t nbytes = ib_tensor_desc_nbytes(d);
    if (ib_dtype_size(d->dtype) == 0 || nbytes > t->nbytes) return IB_EINVAL;
    tp->has_raw_data = 1;
    tp->raw_data.len = nbytes;
    tp->raw_data.data = (uint8_t *)t->data;
    return IB_OK;
}

/* ---- internal form ------------------------------------------------------------ */

int ib_onnx_tensor_decode(const void *data, size_t len, const char *src, ib_tensor **out,
                          char **name, ib_err *err)
{
    *out = NULL;
    if (name) *name = NULL;
    if (!src) src = "<memory>";
    ProtobufCMessage *msg;
    int rc = ib_onnx_pb_unpack(&onnx__tensor_proto__descriptor, data, len, src, &msg, err);
    if (rc) return rc;
    Onnx__TensorProto *tp = (Onnx__TensorProto *)msg;
    char what[300];
    snprintf(what, sizeof what, "tensor '%s'", tp->name ? tp->name : "");
    ib_tensor *t = NULL;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        rc = ib_onnx_fail(err, IB_EUNSUPPORTED, src,
                          "%s: external data is not supported in a single-tensor file", what);
    else
        rc = ib_onnx_tensor_from_proto(tp, src, what, NULL, 0, &t, err);
    /* adopted buffers are only malloc-aligned: give callers 64-byte alignment */
    if (rc == IB_OK && t->desc.dtype != IB_DTYPE_STRING && ((uintptr_t)t->data & 63u)) {
        ib_tensor *a;
        if (ib_tensor_alloc(&t->desc, &a)) {
            rc = ib_onnx_fail(err, IB_ENOMEM, src, "out of memory");
        } else {
            memcpy(a->data, t->data, t->nbytes);
            ib_tensor_free(t);
            t = a;
        }
    }
    if (rc == IB_OK && name && !(*name = ib_strdup(tp->name ? tp->name : "")))
        rc = ib_onnx_fail(err, IB_ENOMEM, src, "out of memory");
    if (rc) {
        ib_tensor_free(t);
        t = NULL;
    }
    ib_onnx_pb_free(msg);
    *out = t;
    return rc;
}

int ib_onnx_tensor_load_file(const char *path, ib_tensor **out, char **name, ib_err *err)
{
    char *buf;
    size_t len;
    *out = NULL;
    if (name) *name = NULL;
    int rc = ib_file_read_all(path, 0, &buf, &len, err);
    if (rc) return rc;
    rc = ib_onnx_tensor_decode(buf, len, path, out, name, err);
    ib_free(buf);
    return rc;
}

int ib_onnx_tensor_encode(const ib_tensor *t, const char *name, void **out, size_t *out_len,
                          ib_err *err)
{
    *out = NULL;
    *out_len = 0;
    ib_arena a;
    ib_arena_init(&a, 0);
    Onnx__TensorProto tp;
    int rc = ib_onnx_tensor_to_proto(t, name, &a, &tp);
    if (rc) {
        ib_arena_deinit(&a);
        char d[160];
        return ib_err_set(err, rc, "tensor '%s' %s: %s", name ? name : "",
                          ib_tensor_desc_str(&t->desc, d, sizeof d),
                          rc == IB_ENOMEM ? "out of memory"
                                          : "cannot be encoded (dynamic dims or short buffer)");
    }
    size_t n = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = ib_malloc(n ? n : 1);
    if (!buf) {
        ib_arena_deinit(&a);
        return ib_err_set(err, IB_ENOMEM, "out of memory encoding a %zu-byte tensor", n);
    }
    onnx__tensor_proto__pack(&tp, buf);
    ib_arena_deinit(&a);
    *out = buf;
    *out_len = n;
    return IB_OK;
}

int ib_onnx_tensor_save_file(const char *path, const ib_tensor *t, const char *name, ib_err *err)
{
    void *buf;
    size_t len;
    int rc = ib_onnx_tensor_encode(t, name, &buf, &len, err);
    if (rc) return rc;
    rc = ib_file_write_all(path, buf, len, err);
    ib_free(buf);
    return rc;
}

/* ---- public form ------------------------------------------------------------------ */

/* One block: [name NUL][padding][data, 64-byte aligned]. */
static int view_from_tensor(const ib_tensor *t, const char *name, ib_tensor_view *out)
{
    size_t nl = strlen(name) + 1, off = (nl + 63) & ~(size_t)63;
    if (t->nbytes > SIZE_MAX - off - 64) return IB_ENOMEM;
    char *block = ib_malloc(off + t->nbytes + 64);
    if (!block) return IB_ENOMEM;
    memcpy(block, name, nl);
    char *data = block + off;
    uintptr_t p = ((uintptr_t)data + 63) & ~(uintptr_t)63;
    data = block + (p - (uintptr_t)block);
    if (t->nbytes) memcpy(data, t->data, t->nbytes);
    out->name = block;
    out->desc = t->desc;
    out->data = data;
    out->capacity = t->nbytes;
    return IB_OK;
}

int ib_onnx_tensor_read_memory(const void *data, size_t len, ib_tensor_view *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    ib_tensor *t;
    char *name;
    int rc = ib_onnx_tensor_decode(data, len, NULL, &t, &name, err);
    if (rc) return rc;
    if (t->desc.dtype == IB_DTYPE_STRING)
        rc = ib_err_set(err, IB_EUNSUPPORTED,
                        "tensor '%s' is a STRING tensor; only numeric "
                        "tensors can be read into an ib_tensor_view",
                        name);
    else if ((rc = view_from_tensor(t, name, out)))
        ib_err_set(err, rc, "out of memory");
    ib_tensor_free(t);
    ib_free(name);
    return rc;
}

int ib_onnx_tensor_read_file(const char *path, ib_tensor_view *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    ib_tensor *t;
    char *name;
    int rc = ib_onnx_tensor_load_file(path, &t, &name, err);
    if (rc) return rc;
    if (t->desc.dtype == IB_DTYPE_STRING)
        rc = ib_err_set(err, IB_EUNSUPPORTED,
                        "%s: tensor '%s' is a STRING tensor; only numeric tensors can be read "
                        "into an ib_tensor_view",
                        path, name);
    else if ((rc = view_from_tensor(t, name, out)))
        ib_err_set(err, rc, "%s: out of memory", path);
    ib_tensor_free(t);
    ib_free(name);
    return rc;
}

void ib_onnx_tensor_release(ib_tensor_view *t)
{
    if (!t) return;
    ib_free((void *)(uintptr_t)t->name);
    memset(t, 0, sizeof *t);
}

static int view_check(const ib_tensor_view *v, ib_tensor *t, ib_err *err)
{
    char d[160];
    if (v->desc.dtype == IB_DTYPE_STRING || ib_dtype_size(v->desc.dtype) == 0)
        return ib_err_set(err, IB_EINVAL, "tensor '%s': dtype %s cannot be written from a view",
                          v->name ? v->name : "", ib_dtype_name(v->desc.dtype));
    if (v->desc.ndim < 0 || v->desc.ndim > IB_MAX_DIMS || ib_tensor_desc_numel(&v->desc) < 0)
        return ib_err_set(err, IB_EINVAL, "tensor '%s' %s: every dim must be known",
                          v->name ? v->name : "", ib_tensor_desc_str(&v->desc, d, sizeof d));
    size_t nbytes = ib_tensor_desc_nbytes(&v->desc);
    if ((v->capacity && v->capacity < nbytes) || (nbytes && !v->data))
        return ib_err_set(err, IB_EINVAL, "tensor '%s' %s needs %zu bytes; the view has %zu",
                          v->name ? v->name : "", ib_tensor_desc_str(&v->desc, d, sizeof d), nbytes,
                          v->data ? v->capacity : 0);
    t->desc = v->desc;
    t->data = v->data;
    t->nbytes = nbytes;
    t->owns_data = false;
    return IB_OK;
}

int ib_onnx_tensor_write_memory(const ib_tensor_view *t, void **out, size_t *out_len, ib_err *err)
{
    ib_tensor tmp;
    *out = NULL;
    *out_len = 0;
    int rc = view_check(t, &tmp, err);
    return rc ? rc : ib_onnx_tensor_encode(&tmp, t->name, out, out_len, err);
}

int ib_onnx_tensor_write_file(const char *path, const ib_tensor_view *t, ib_err *err)
{
    ib_tensor tmp;
    int rc = view_check(t, &tmp, err);
    return rc ? rc : ib_onnx_tensor_save_file(path, &tmp, t->name, err);
}
