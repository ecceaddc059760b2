/*
 * load_tensor.c - ONNX TensorProto -> ib_tensor: element types, dims
 * (negative, too many and overflowing products are errors), data from
 * raw_data, from the typed repeated fields (with range checks when a narrow
 * type travels in int32_data) or from an external file (data_location
 * EXTERNAL: location/offset/length relative to the model's folder).
 * Large buffers unpacked by protobuf-c are taken over, not copied, so a
 * weight is copied once on its way from the file to the graph.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/proto.h"

int ib_onnx_fail(ib_err *err, int code, const char *src, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (src) return ib_err_set(err, code, "%s: %s", src, msg);
    return ib_err_set(err, code, "%s", msg);
}

void ib_onnx_ext_init(ib_onnx_ext *e, const char *dir)
{
    e->dir = dir;
    e->fd = -1;
    e->size = 0;
    e->path = NULL;
}

void ib_onnx_ext_close(ib_onnx_ext *e)
{
    if (e->fd >= 0) close(e->fd);
    e->fd = -1;
    ib_free(e->path);
    e->path = NULL;
}

int ib_onnx_dtype_from_proto(int32_t t, const char *src, const char *what, enum ib_dtype *out,
                             ib_err *err)
{
    switch (t) {
    case IB_DTYPE_FLOAT32:
    case IB_DTYPE_UINT8:
    case IB_DTYPE_INT8:
    case IB_DTYPE_UINT16:
    case IB_DTYPE_INT16:
    case IB_DTYPE_INT32:
    case IB_DTYPE_INT64:
    case IB_DTYPE_STRING:
    case IB_DTYPE_BOOL:
    case IB_DTYPE_FLOAT16:
    case IB_DTYPE_FLOAT64:
    case IB_DTYPE_UINT32:
    case IB_DTYPE_UINT64:
    case IB_DTYPE_BFLOAT16:
        *out = (enum ib_dtype)t;
        return IB_OK;
    case 14:
    case 15:
        return ib_onnx_fail(err, IB_EUNSUPPORTED, src,
                            "%s has type %s, which inferbench does not support", what,
                            t == 14 ? "complex64" : "complex128");
    default:
        return ib_onnx_fail(err, t == 0 ? IB_EFORMAT : IB_EUNSUPPORTED, src,
                            "%s has %s element type %d", what,
                            t == 0 ? "no (UNDEFINED)" : "unknown", (int)t);
    }
}

/* Strict decimal parse of an external_data value ("offset", "length"). */
static int parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* ONNX external_data locations are relative POSIX paths inside the model's
 * folder: refuse absolute paths and any ".." component. */
static bool location_ok(const char *loc)
{
    if (!loc[0] || loc[0] == '/') return false;
    for (const char *p = loc; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') return false;
        p += n + (e ? 1 : 0);
    }
    return true;
}

static int ext_open(ib_onnx_ext *e, const char *src, const char *what, const char *loc, ib_err *err)
{
    size_t n = strlen(e->dir) + strlen(loc) + 2;
    char *path = ib_malloc(n);
    if (!path) return ib_onnx_fail(err, IB_ENOMEM, src, "out of memory");
    snprintf(path, n, "%s/%s", e->dir, loc);
    if (e->path && strcmp(e->path, path) == 0) {
        ib_free(path);
        return IB_OK;
    }
    ib_onnx_ext_close(e);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int code = errno == ENOENT ? IB_ENOTFOUND : IB_EIO;
        int rc = ib_onnx_fail(err, code, src, "%s: cannot open external data file '%s': %s", what,
                              path, strerror(errno));
        ib_free(path);
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int rc = ib_onnx_fail(err, IB_EIO, src, "%s: external data '%s' is not a readable file",
                              what, path);
        close(fd);
        ib_free(path);
        return rc;
    }
    e->fd = fd;
    e->size = (uint64_t)st.st_size;
    e->path = path;
    return IB_OK;
}

static int read_external(Onnx__TensorProto *tp, const char *src, const char *what, ib_onnx_ext *ext,
                         const ib_tensor_desc *desc, size_t nbytes, ib_tensor **out, ib_err *err)
{
    const char *loc = NULL, *off_s = NULL, *len_s = NULL;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = tp->external_data[i];
        if (!kv->key) continue;
        if (strcmp(kv->key, "location") == 0)
            loc = kv->value ? kv->value : "";
        else if (strcmp(kv->key, "offset") == 0)
            off_s = kv->value;
        else if (strcmp(kv->key, "length") == 0)
            len_s = kv->value;
    }
    if (!loc)
        return ib_onnx_fail(err, IB_EFORMAT, src,
                            "%s: data_location is EXTERNAL but external_data has no 'location'",
                            what);
    if (!location_ok(loc))
        return ib_onnx_fail(err, IB_EFORMAT, src,
                            "%s: external data location '%s' must be a relative path inside "
                            "the model's folder",
                            what, loc);
    if (!ext || !ext->dir)
        return ib_onnx_fail(err, IB_EINVAL, src,
                            "%s: external data '%s' but no folder to find it in (load the model "
                            "from its file, or pass a base folder)",
                            what, loc);
    uint64_t off = 0, len = nbytes;
    if (off_s && parse_u64(off_s, &off))
        return ib_onnx_fail(err, IB_EFORMAT, src, "%s: external data offset '%s' is not a number",
                            what, off_s);
    if (len_s && parse_u64(len_s, &len))
        return ib_onnx_fail(err, IB_EFORMAT, src, "%s: external data length '%s' is not a number",
                            what, len_s);
    char dbuf[160];
    if (len != nbytes)
        return ib_onnx_fail(
            err, IB_EFORMAT, src, "%s: external data length %llu does not match %s (%zu bytes)",
            what, (unsigned long long)len, ib_tensor_desc_str(desc, dbuf, sizeof dbuf), nbytes);
    int rc = ext_open(ext, src, what, loc, err);
    if (rc) return rc;
    if (off > ext->size || ext->size - off < len)
        return ib_onnx_fail(err, IB_EFORMAT, src,
                            "%s: external file '%s' has %llu bytes, too short for %llu bytes at "
                            "offset %llu",
                            what, ext->path, (unsigned long long)ext->size, (unsigned long long)len,
                            (unsigned long long)off);
    ib_tensor *t;
    if ((rc = ib_tensor_alloc(desc, &t)))
        return ib_onnx_fail(err, rc, src, "%s: cannot allocate %zu bytes", what, nbytes);
    size_t done = 0;
    while (done < nbytes) {
        ssize_t r = pread(ext->fd, (char *)t->data + done, nbytes - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            rc = ib_onnx_fail(err, IB_EIO, src, "%s: reading '%s' failed: %s", what, ext->path,
                              r < 0 ? strerror(errno) : "unexpected end of file");
            ib_tensor_free(t);
            return rc;
        }
        done += (size_t)r;
    }
    *out = t;
    return IB_OK;
}

/* Take over a buffer protobuf-c allocated with ib_malloc. */
static int adopt(const ib_tensor_desc *desc, void **data, size_t nbytes, ib_tensor **out)
{
    ib_tensor *t;
    int rc = ib_tensor_wrap(desc, *data, nbytes, &t);
    if (rc) return rc;
    t->owns_data = true;
    *data = NULL;
    *out = t;
    return IB_OK;
}

/* Narrow types (int8 .. bfloat16, bool) stored one per int32_data element. */
static int from_int32(const Onnx__TensorProto *tp, const char *src, const char *what, ib_tensor *t,
                      ib_err *err)
{
    int64_t lo = 0, hi = 0;
    switch (t->desc.dtype) {
    case IB_DTYPE_INT8:
        lo = INT8_MIN, hi = INT8_MAX;
        break;
    case IB_DTYPE_UINT8:
        lo = 0, hi = UINT8_MAX;
        break;
    case IB_DTYPE_INT16:
        lo = INT16_MIN, hi = INT16_MAX;
        break;
    case IB_DTYPE_UINT16:
    case IB_DTYPE_FLOAT16:
    case IB_DTYPE_BFLOAT16:
        lo = 0, hi = UINT16_MAX;
        break;
    case IB_DTYPE_BOOL:
        lo = INT32_MIN, hi = INT32_MAX;
        break;
    default:
        return IB_EINVAL;
    }
    size_t es = ib_dtype_size(t->desc.dtype);
    for (size_t i = 0; i < tp->n_int32_data; i++) {
        int32_t v = tp->int32_data[i];
        if (v < lo || v > hi)
            return ib_onnx_fail(err, IB_EFORMAT, src,
                                "%s: int32_data[%zu] = %d is out of range for %s", what, i, v,
                                ib_dtype_name(t->desc.dtype));
        if (t->desc.dtype == IB_DTYPE_BOOL) v = v != 0;
        if (es == 1) {
            uint8_t b = (uint8_t)(v & 0xff);
            ((uint8_t *)t->data)[i] = b;
        } else {
            uint16_t h = (uint16_t)(v & 0xffff);
            memcpy((char *)t->data + 2 * i, &h, 2);
        }
    }
    return IB_OK;
}

static int from_strings(Onnx__TensorProto *tp, const char *src, const char *what,
                        const ib_tensor_desc *desc, size_t numel, ib_tensor **out, ib_err *err)
{
    if (tp->n_string_data != numel)
        return ib_onnx_fail(err, IB_EFORMAT, src, "%s: has %zu strings for %zu elements", what,
                            tp->n_string_data, numel);
    size_t total = numel * sizeof(char *);
    for (size_t i = 0; i < numel; i++) {
        if (tp->string_data[i].len > SIZE_MAX / 2 - total)
            return ib_onnx_fail(err, IB_EFORMAT, src, "%s: strings too large", what);
        total += tp->string_data[i].len + 1;
    }
    char *block = ib_malloc(total);
    ib_tensor *t;
    if (!block || ib_tensor_wrap(desc, block, total, &t)) {
        ib_free(block);
        return ib_onnx_fail(err, IB_ENOMEM, src, "%s: out of memory", what);
    }
    t->owns_data = true;
    char **ptrs = (char **)(void *)block;
    char *p = block + numel * sizeof(char *);
    for (size_t i = 0; i < numel; i++) {
        ptrs[i] = p;
        if (tp->string_data[i].len) memcpy(p, tp->string_data[i].data, tp->string_data[i].len);
        p[tp->string_data[i].len] = '\0';
        p += tp->string_data[i].len + 1;
    }
    *out = t;
    return IB_OK;
}

/* Element count of the typed field that carries dtype d (and the field's name). */
static size_t typed_count(const Onnx__TensorProto *tp, enum ib_dtype d, const char **field)
{
    switch (d) {
    case IB_DTYPE_FLOAT32:
        *field = "float_data";
        return tp->n_float_data;
    case IB_DTYPE_FLOAT64:
        *field = "double_data";
        return tp->n_double_data;
    case IB_DTYPE_INT64:
        *field = "int64_data";
        return tp->n_int64_data;
    case IB_DTYPE_UINT32:
    case IB_DTYPE_UINT64:
        *field = "uint64_data";
        return tp->n_uint64_data;
    case IB_DTYPE_STRING:
        *field = "string_data";
        return tp->n_string_data;
    default:
        *field = "int32_data";
        return tp->n_int32_data;
    }
}

static size_t other_fields(const Onnx__TensorProto *tp)
{
    return tp->n_float_data + tp->n_double_data + tp->n_int64_data + tp->n_uint64_data +
           tp->n_string_data + tp->n_int32_data;
}

static int from_typed(Onnx__TensorProto *tp, const char *src, const char *what,
                      const ib_tensor_desc *desc, size_t numel, size_t nbytes, ib_tensor **out,
                      ib_err *err)
{
    const char *field;
    size_t count = typed_count(tp, desc->dtype, &field);
    char dbuf[160];
    if (count != numel || other_fields(tp) != count)
        return ib_onnx_fail(err, IB_EFORMAT, src, "%s: %s needs %zu elements; it has %zu in %s%s",
                            what, ib_tensor_desc_str(desc, dbuf, sizeof dbuf), numel, count, field,
                            other_fields(tp) != count ? " and data in fields of other types" : "");
    if (desc->dtype == IB_DTYPE_STRING) return from_strings(tp, src, what, desc, numel, out, err);
    int rc = IB_OK;
    switch (desc->dtype) {
    case IB_DTYPE_FLOAT32:
        rc = adopt(desc, (void **)&tp->float_data, nbytes, out);
        break;
    case IB_DTYPE_FLOAT64:
        rc = adopt(desc, (void **)&tp->double_data, nbytes, out);
        break;
    case IB_DTYPE_INT64:
        rc = adopt(desc, (void **)&tp->int64_data, nbytes, out);
        break;
    case IB_DTYPE_UINT64:
        rc = adopt(desc, (void **)&tp->uint64_data, nbytes, out);
        break;
    case IB_DTYPE_INT32:
        rc = adopt(desc, (void **)&tp->int32_data, nbytes, out);
        break;
    default: {
        ib_tensor *t;
        if ((rc = ib_tensor_alloc(desc, &t))) break;
        if (desc->dtype == IB_DTYPE_UINT32) {
            for (size_t i = 0; i < numel; i++) {
                if (tp->uint64_data[i] > UINT32_MAX) {
                    ib_tensor_free(t);
                    return ib_onnx_fail(err, IB_EFORMAT, src,
                                        "%s: uint64_data[%zu] = %llu is out of range for uint32",
                                        what, i, (unsigned long long)tp->uint64_data[i]);
                }
                uint32_t v = (uint32_t)tp->uint64_data[i];
                memcpy((char *)t->data + 4 * i, &v, 4);
            }
        } else if ((rc = from_int32(tp, src, what, t, err))) {
            ib_tensor_free(t);
            return rc;
        }
        *out = t;
        return IB_OK;
    }
    }
    if (rc) return ib_onnx_fail(err, IB_ENOMEM, src, "%s: out of memory", what);
    /* adopted arrays were cleared in tp; keep its counts consistent */
    if (desc->dtype == IB_DTYPE_FLOAT32)
        tp->n_float_data = 0;
    else if (desc->dtype == IB_DTYPE_FLOAT64)
        tp->n_double_data = 0;
    else if (desc->dtype == IB_DTYPE_INT64)
        tp->n_int64_data = 0;
    else if (desc->dtype == IB_DTYPE_UINT64)
        tp->n_uint64_data = 0;
    else
        tp->n_int32_data = 0;
    return IB_OK;
}

int ib_onnx_tensor_from_proto(Onnx__TensorProto *tp, const char *src, const char *what,
                              ib_onnx_ext *ext, uint64_t max_bytes, ib_tensor **out, ib_err *err)
{
    *out = NULL;
    ib_tensor_desc desc;
    memset(&desc, 0, sizeof desc);
    int rc = ib_onnx_dtype_from_proto(tp->has_data_type ? tp->data_type : 0, src, what, &desc.dtype,
                                      err);
    if (rc) return rc;
    if (tp->segment)
        return ib_onnx_fail(err, IB_EUNSUPPORTED, src,
                            "%s: segmented tensors are not supported (a .pb file that holds a "
                            "SequenceProto or OptionalProto reads like this: only TensorProto "
                            "files are supported)",
                            what);
    if (tp->n_dims > IB_MAX_DIMS)
        return ib_onnx_fail(err, IB_EUNSUPPORTED, src, "%s: has %zu dims; at most %d are supported",
                            what, tp->n_dims, IB_MAX_DIMS);
    desc.ndim = (int32_t)tp->n_dims;
    uint64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        int64_t d = tp->dims[i];
        if (d < 0)
            return ib_onnx_fail(err, IB_EFORMAT, src, "%s: dim %zu is %lld (negative)", what, i,
                                (long long)d);
        if (d && numel > (uint64_t)INT64_MAX / (uint64_t)d)
            return ib_onnx_fail(err, IB_EFORMAT, src,
                                "%s: dims overflow (element count past 2^63 at dim %zu = %lld)",
                                what, i, (long long)d);
        numel *= (uint64_t)d;
        desc.dims[i] = d;
    }
    size_t es = ib_dtype_size(desc.dtype);
    if (numel > SIZE_MAX || (es && numel > SIZE_MAX / es))
        return ib_onnx_fail(err, IB_EFORMAT, src, "%s: %llu elements do not fit in memory", what,
                            (unsigned long long)numel);
    size_t nbytes = (size_t)numel * es;
    char dbuf[160];
    if (max_bytes && nbytes > max_bytes)
        return ib_onnx_fail(err, IB_EFORMAT, src, "%s: %s is %zu bytes, over the %llu-byte limit",
                            what, ib_tensor_desc_str(&desc, dbuf, sizeof dbuf), nbytes,
                            (unsigned long long)max_bytes);
    bool external =
        tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (external) {
        if (desc.dtype == IB_DTYPE_STRING)
            return ib_onnx_fail(err, IB_EFORMAT, src, "%s: STRING tensors cannot be external",
                                what);
        return read_external(tp, src, what, ext, &desc, nbytes, out, err);
    }
    if (tp->has_raw_data && (tp->raw_data.len || !other_fields(tp))) {
        if (desc.dtype == IB_DTYPE_STRING)
            return ib_onnx_fail(err, IB_EFORMAT, src,
                                "%s: STRING tensors must use string_data, not raw_data", what);
        if (tp->raw_data.len != nbytes)
            return ib_onnx_fail(err, IB_EFORMAT, src, "%s: raw_data has %zu bytes but %s needs %zu",
                                what, tp->raw_data.len,
                                ib_tensor_desc_str(&desc, dbuf, sizeof dbuf), nbytes);
        if (nbytes == 0 || !tp->raw_data.data)
            rc = ib_tensor_alloc(&desc, out);
        else if ((rc = adopt(&desc, (void **)&tp->raw_data.data, nbytes, out)) == IB_OK)
            tp->raw_data.len = 0;
        if (rc) return ib_onnx_fail(err, IB_ENOMEM, src, "%s: out of memory", what);
        return IB_OK;
    }
    if (numel == 0 && !other_fields(tp)) {
        if ((rc = ib_tensor_alloc(&desc, out)))
            return ib_onnx_fail(err, IB_ENOMEM, src, "%s: out of memory", what);
        return IB_OK;
    }
    return from_typed(tp, src, what, &desc, (size_t)numel, nbytes, out, err);
}
