/*
 * kserve.c - KServe v2 REST message encoding and decoding (kserve.h).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/json_writer.h"
#include "net/kserve.h"

/* The protocol's tensor data types (Open Inference Protocol, "Tensor Data Types"). */
static const struct {
    enum ib_dtype t;
    const char *name;
} g_types[] = {
    {IB_DTYPE_BOOL, "BOOL"},     {IB_DTYPE_UINT8, "UINT8"},   {IB_DTYPE_UINT16, "UINT16"},
    {IB_DTYPE_UINT32, "UINT32"}, {IB_DTYPE_UINT64, "UINT64"}, {IB_DTYPE_INT8, "INT8"},
    {IB_DTYPE_INT16, "INT16"},   {IB_DTYPE_INT32, "INT32"},   {IB_DTYPE_INT64, "INT64"},
    {IB_DTYPE_FLOAT16, "FP16"},  {IB_DTYPE_FLOAT32, "FP32"},  {IB_DTYPE_FLOAT64, "FP64"},
    {IB_DTYPE_BFLOAT16, "BF16"},
};

const char *ib_ks_datatype(enum ib_dtype t)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(g_types); i++)
        if (g_types[i].t == t) return g_types[i].name;
    return NULL;
}

enum ib_dtype ib_ks_dtype(const char *datatype)
{
    for (size_t i = 0; datatype && i < IB_ARRAY_LEN(g_types); i++)
        if (strcmp(g_types[i].name, datatype) == 0) return g_types[i].t;
    return IB_DTYPE_UNDEFINED;
}

static bool json_dtype(enum ib_dtype t)
{
    return t != IB_DTYPE_FLOAT16 && t != IB_DTYPE_BFLOAT16 && ib_ks_datatype(t) != NULL;
}

const ib_ks_tensor *ib_ks_find(const ib_ks_msg *m, const char *name)
{
    for (size_t i = 0; i < m->n_tensors; i++)
        if (strcmp(m->t[i].name, name) == 0) return &m->t[i];
    return NULL;
}

/* ---- encoding ------------------------------------------------------------------------------ */

static int put_json_string(ib_strbuf *sb, const char *s)
{
    int rc = ib_strbuf_putc(sb, '"');
    if (!rc)
        rc = ib_json_escape(sb, s, strlen(s));
    return rc ? rc : ib_strbuf_putc(sb, '"');
}

/* One element as JSON (float32: 9 significant digits round-trip exactly). */
static int put_elem(ib_strbuf *sb, enum ib_dtype t, const uint8_t *p, ib_err *err)
{
    switch (t) {
    case IB_DTYPE_BOOL:
        return ib_strbuf_puts(sb, *p ? "true" : "false");
    case IB_DTYPE_UINT8:
        return ib_strbuf_printf(sb, "%u", (unsigned)*p);
    case IB_DTYPE_INT8:
        return ib_strbuf_printf(sb, "%d", (int)*(const int8_t *)p);
    case IB_DTYPE_UINT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return ib_strbuf_printf(sb, "%u", (unsigned)v);
    }
    case IB_DTYPE_INT16: {
        int16_t v;
        memcpy(&v, p, 2);
        return ib_strbuf_printf(sb, "%d", (int)v);
    }
    case IB_DTYPE_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return ib_strbuf_printf(sb, "%lu", (unsigned long)v);
    }
    case IB_DTYPE_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return ib_strbuf_printf(sb, "%ld", (long)v);
    }
    case IB_DTYPE_UINT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        if (v > (uint64_t)INT64_MAX) /* JSON readers (jansson too) stop at int64 */
            return ib_err_set(err, IB_EUNSUPPORTED,
                              "a UINT64 of %llu, over INT64_MAX, which JSON readers do not take: "
                              "use the binary extension",
                              (unsigned long long)v);
        return ib_strbuf_printf(sb, "%llu", (unsigned long long)v);
    }
    case IB_DTYPE_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        return ib_strbuf_printf(sb, "%lld", (long long)v);
    }
    case IB_DTYPE_FLOAT32: {
        float v;
        memcpy(&v, p, 4);
        if (!isfinite(v))
            return ib_err_set(err, IB_EUNSUPPORTED,
                              "a float is %g, which JSON cannot carry: use the binary extension",
                              (double)v);
        if (v == 0.0f && signbit(v))
            return ib_strbuf_puts(sb, "-0.0"); /* "-0" would read back as the integer 0 */
        return ib_strbuf_printf(sb, "%.9g", (double)v);
    }
    case IB_DTYPE_FLOAT64: {
        double v;
        memcpy(&v, p, 8);
        if (!isfinite(v))
            return ib_err_set(err, IB_EUNSUPPORTED,
                              "a double is %g, which JSON cannot carry: use the binary extension",
                              v);
        if (v == 0.0 && signbit(v))
            return ib_strbuf_puts(sb, "-0.0");
        return ib_strbuf_printf(sb, "%.17g", v);
    }
    default:
        return ib_err_set(err, IB_EUNSUPPORTED, "%s tensors need the binary extension",
                          ib_dtype_name(t));
    }
}

static int put_tensor(ib_strbuf *sb, const ib_ks_tensor *t, bool binary, ib_err *err)
{
    const char *dt = ib_ks_datatype(t->desc.dtype);
    if (!dt)
        return ib_err_set(err, IB_EUNSUPPORTED, "tensor '%s': %s has no KServe v2 datatype",
                          t->name, ib_dtype_name(t->desc.dtype));
    int64_t numel = ib_tensor_desc_numel(&t->desc);
    if (numel < 0 || (uint64_t)numel * ib_dtype_size(t->desc.dtype) != t->nbytes)
        return ib_err_set(err, IB_EINVAL, "tensor '%s': %zu bytes for its shape", t->name,
                          t->nbytes);
    int rc = ib_strbuf_puts(sb, "{\"name\":");
    if (!rc) rc = put_json_string(sb, t->name);
    if (!rc) rc = ib_strbuf_puts(sb, ",\"shape\":[");
    for (int32_t d = 0; !rc && d < t->desc.ndim; d++)
        rc = ib_strbuf_printf(sb, "%s%lld", d ? "," : "", (long long)t->desc.dims[d]);
    if (!rc) rc = ib_strbuf_printf(sb, "],\"datatype\":\"%s\"", dt);
    if (rc) return ib_err_set(err, IB_ENOMEM, "out of memory encoding a message");
    if (binary)
        return ib_strbuf_printf(sb, ",\"parameters\":{\"binary_data_size\":%zu}}", t->nbytes)
                   ? ib_err_set(err, IB_ENOMEM, "out of memory encoding a message")
                   : IB_OK;
    if (!json_dtype(t->desc.dtype))
        return ib_err_set(err, IB_EUNSUPPORTED, "tensor '%s': %s needs the binary extension",
                          t->name, dt);
    rc = ib_strbuf_puts(sb, ",\"data\":[");
    size_t es = ib_dtype_size(t->desc.dtype);
    for (int64_t i = 0; !rc && i < numel; i++) {
        if (i && (rc = ib_strbuf_putc(sb, ','))) break;
        rc = put_elem(sb, t->desc.dtype, (const uint8_t *)t->data + (size_t)i * es, err);
        if (rc && rc != IB_ENOMEM)
            return ib_err_set(err, rc, "tensor '%s': %s", t->name, err ? err->msg : "");
    }
    if (!rc) rc = ib_strbuf_puts(sb, "]}");
    return rc ? ib_err_set(err, IB_ENOMEM, "out of memory encoding a message") : IB_OK;
}

int ib_ks_encode(const ib_ks_msg *m, bool request, bool binary, ib_strbuf *sb, size_t *json_len,
                 ib_err *err)
{
    size_t start = sb->len;
    int rc = ib_strbuf_putc(sb, '{');
    if (!rc && !request) {
        rc = ib_strbuf_puts(sb, "\"model_name\":");
        if (!rc) rc = put_json_string(sb, m->model_name);
        if (!rc) rc = ib_strbuf_puts(sb, ",\"model_version\":\"1\",");
    }
    if (!rc && m->id[0]) {
        rc = ib_strbuf_puts(sb, "\"id\":");
        if (!rc) rc = put_json_string(sb, m->id);
        if (!rc) rc = ib_strbuf_putc(sb, ',');
    }
    if (!rc) rc = ib_strbuf_printf(sb, "\"%s\":[", request ? "inputs" : "outputs");
    if (rc) return ib_err_set(err, IB_ENOMEM, "out of memory encoding a message");
    for (size_t i = 0; i < m->n_tensors; i++) {
        if (i && ib_strbuf_putc(sb, ','))
            return ib_err_set(err, IB_ENOMEM, "out of memory encoding a message");
        if ((rc = put_tensor(sb, &m->t[i], binary, err))) return rc;
    }
    rc = ib_strbuf_putc(sb, ']');
    if (!rc && request && m->n_outputs) {
        rc = ib_strbuf_puts(sb, ",\"outputs\":[");
        for (size_t i = 0; !rc && i < m->n_outputs; i++) {
            rc = ib_strbuf_puts(sb, i ? ",{\"name\":" : "{\"name\":");
            if (!rc) rc = put_json_string(sb, m->outputs[i]);
            if (!rc)
                rc = ib_strbuf_puts(
                    sb, m->binary_outputs ? ",\"parameters\":{\"binary_data\":true}}" : "}");
        }
        if (!rc) rc = ib_strbuf_putc(sb, ']');
    }
    if (!rc && request && m->binary_outputs)
        rc = ib_strbuf_puts(sb, ",\"parameters\":{\"binary_data_output\":true}");
    if (!rc) rc = ib_strbuf_putc(sb, '}');
    if (rc) return ib_err_set(err, IB_ENOMEM, "out of memory encoding a message");
    *json_len = binary ? sb->len - start : 0;
    for (size_t i = 0; binary && i < m->n_tensors; i++)
        if (ib_strbuf_append(sb, m->t[i].data, m->t[i].nbytes))
            return ib_err_set(err, IB_ENOMEM, "out of memory encoding a message");
    return IB_OK;
}

/* ---- decoding ------------------------------------------------------------------------------ */

/* Count the leaves of a (possibly nested) "data" array. */
static int count_leaves(const json_t *a, int depth, size_t *n)
{
    if (depth > IB_MAX_DIMS) return -1;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v)
    {
        if (json_is_array(v)) {
            if (count_leaves(v, depth + 1, n)) return -1;
        } else {
            ++*n;
        }
    }
    return 0;
}

/* Store one JSON leaf as element k of dtype t; -1 when it is not that type's value. */
static int store_leaf(const json_t *v, enum ib_dtype t, uint8_t *out)
{
    if (t == IB_DTYPE_BOOL) {
        if (!json_is_boolean(v)) return -1;
        *out = json_is_true(v) ? 1 : 0;
        return 0;
    }
    if (t == IB_DTYPE_FLOAT32 || t == IB_DTYPE_FLOAT64) {
        if (!json_is_number(v)) return -1;
        double d = json_number_value(v);
        if (t == IB_DTYPE_FLOAT32) {
            float f = (float)d;
            memcpy(out, &f, 4);
        } else {
            memcpy(out, &d, 8);
        }
        return 0;
    }
    if (!json_is_integer(v)) return -1;
    json_int_t i = json_integer_value(v);
    switch (t) {
    case IB_DTYPE_UINT8:
        if (i < 0 || i > 255) return -1;
        *out = (uint8_t)i;
        return 0;
    case IB_DTYPE_INT8:
        if (i < -128 || i > 127) return -1;
        *(int8_t *)out = (int8_t)i;
        return 0;
    case IB_DTYPE_UINT16:
    case IB_DTYPE_INT16: {
        if (t == IB_DTYPE_UINT16 ? (i < 0 || i > 65535) : (i < -32768 || i > 32767)) return -1;
        uint16_t u = (uint16_t)i;
        memcpy(out, &u, 2);
        return 0;
    }
    case IB_DTYPE_UINT32:
    case IB_DTYPE_INT32: {
        if (t == IB_DTYPE_UINT32 ? (i < 0 || i > 4294967295LL)
                                 : (i < -2147483648LL || i > 2147483647LL))
            return -1;
        uint32_t u = (uint32_t)i;
        memcpy(out, &u, 4);
        return 0;
    }
    case IB_DTYPE_UINT64:
    case IB_DTYPE_INT64: {
        if (t == IB_DTYPE_UINT64 && i < 0) return -1;
        int64_t s = (int64_t)i;
        memcpy(out, &s, 8);
        return 0;
    }
    default:
        return -1;
    }
}

static int store_leaves(const json_t *a, enum ib_dtype t, uint8_t *out, size_t es, size_t *k)
{
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v)
    {
        if (json_is_array(v)) {
            if (store_leaves(v, t, out, es, k)) return -1;
        } else if (store_leaf(v, t, out + *k * es)) {
            return -1;
        } else {
            ++*k;
        }
    }
    return 0;
}

/* Total bytes of JSON "data" the message's tensors need (for one allocation). */
static size_t json_data_bytes(const json_t *list)
{
    size_t total = 0, i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        const json_t *data = json_object_get(v, "data");
        size_t n = 0;
        if (json_is_array(data) && count_leaves(data, 1, &n) == 0) total += n * 8 + 64;
    }
    return total;
}

/* One tensor object of "inputs" (request) or "outputs" (response). */
static int decode_tensor(const json_t *o, size_t idx, const char *what, const uint8_t **bin,
                         const uint8_t *bin_end, uint8_t **pool, ib_ks_tensor *t, ib_err *err)
{
    if (!json_is_object(o))
        return ib_err_set(err, IB_EFORMAT, "%s[%zu] is not an object", what, idx);
    const json_t *name = json_object_get(o, "name"), *shape = json_object_get(o, "shape"),
                 *dt = json_object_get(o, "datatype"), *params = json_object_get(o, "parameters"),
                 *data = json_object_get(o, "data");
    if (!json_is_string(name) || json_string_length(name) == 0 ||
        json_string_length(name) >= IB_KS_NAME_MAX)
        return ib_err_set(err, IB_EFORMAT, "%s[%zu]: \"name\" missing, empty or longer than %d",
                          what, idx, IB_KS_NAME_MAX - 1);
    snprintf(t->name, sizeof t->name, "%s", json_string_value(name));
    if (!json_is_string(dt))
        return ib_err_set(err, IB_EFORMAT, "%s '%s': \"datatype\" missing", what, t->name);
    t->desc.dtype = ib_ks_dtype(json_string_value(dt));
    if (t->desc.dtype == IB_DTYPE_UNDEFINED)
        return ib_err_set(err, IB_EUNSUPPORTED, "%s '%s': datatype \"%s\" is not supported", what,
                          t->name, json_string_value(dt));
    if (!json_is_array(shape) || json_array_size(shape) > IB_MAX_DIMS)
        return ib_err_set(err, IB_EFORMAT, "%s '%s': \"shape\" missing or over %d dims", what,
                          t->name, IB_MAX_DIMS);
    t->desc.ndim = (int32_t)json_array_size(shape);
    uint64_t numel = 1;
    for (int32_t d = 0; d < t->desc.ndim; d++) {
        const json_t *v = json_array_get(shape, (size_t)d);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > ((json_int_t)1 << 40))
            return ib_err_set(err, IB_EFORMAT, "%s '%s': shape[%d] is not a size", what, t->name,
                              (int)d);
        t->desc.dims[d] = (int64_t)json_integer_value(v);
        if (t->desc.dims[d] && numel > ((uint64_t)1 << 40) / (uint64_t)t->desc.dims[d])
            return ib_err_set(err, IB_EFORMAT, "%s '%s': shape too large", what, t->name);
        numel *= (uint64_t)t->desc.dims[d];
        if (numel > ((uint64_t)1 << 40))
            return ib_err_set(err, IB_EFORMAT, "%s '%s': shape too large", what, t->name);
    }
    size_t es = ib_dtype_size(t->desc.dtype);
    t->nbytes = (size_t)numel * es;
    const json_t *bsz = json_is_object(params) ? json_object_get(params, "binary_data_size") : NULL;
    if (bsz) {
        if (!json_is_integer(bsz) || json_integer_value(bsz) < 0)
            return ib_err_set(err, IB_EFORMAT, "%s '%s': bad binary_data_size", what, t->name);
        size_t n = (size_t)json_integer_value(bsz);
        if (n != t->nbytes)
            return ib_err_set(err, IB_EFORMAT,
                              "%s '%s': binary_data_size %zu, but shape and datatype make %zu "
                              "bytes",
                              what, t->name, n, t->nbytes);
        if ((size_t)(bin_end - *bin) < n)
            return ib_err_set(err, IB_EFORMAT,
                              "%s '%s': the body ends %zu bytes short of its binary data (a "
                              "truncated message)",
                              what, t->name, n - (size_t)(bin_end - *bin));
        t->data = *bin;
        *bin += n;
        return IB_OK;
    }
    if (!json_is_array(data))
        return ib_err_set(err, IB_EFORMAT, "%s '%s': neither \"data\" nor binary_data_size", what,
                          t->name);
    if (!json_dtype(t->desc.dtype))
        return ib_err_set(err, IB_EUNSUPPORTED, "%s '%s': %s data needs the binary extension", what,
                          t->name, json_string_value(dt));
    size_t leaves = 0;
    if (count_leaves(data, 1, &leaves))
        return ib_err_set(err, IB_EFORMAT, "%s '%s': \"data\" nested deeper than %d", what, t->name,
                          IB_MAX_DIMS);
    if (leaves != numel)
        return ib_err_set(err, IB_EFORMAT, "%s '%s': %zu values in \"data\" for shape of %llu",
                          what, t->name, leaves, (unsigned long long)numel);
    size_t k = 0;
    if (store_leaves(data, t->desc.dtype, *pool, es, &k))
        return ib_err_set(err, IB_EFORMAT, "%s '%s': a value in \"data\" is not %s", what, t->name,
                          json_string_value(dt));
    t->data = *pool;
    *pool += (t->nbytes + 63) & ~(size_t)63;
    return IB_OK;
}

void ib_ks_msg_free(ib_ks_msg *m)
{
    if (m) {
        free(m->owned);
        m->owned = NULL;
    }
}

static int decode_json(const json_t *root, const uint8_t *bin, const uint8_t *bin_end, bool request,
                       ib_ks_msg *m, ib_err *err)
{
    if (!json_is_object(root)) return ib_err_set(err, IB_EFORMAT, "the JSON is not an object");
    const json_t *id = json_object_get(root, "id");
    if (id && json_is_string(id)) snprintf(m->id, sizeof m->id, "%s", json_string_value(id));
    if (!request) {
        const json_t *mn = json_object_get(root, "model_name");
        if (json_is_string(mn))
            snprintf(m->model_name, sizeof m->model_name, "%s", json_string_value(mn));
        const json_t *e = json_object_get(root, "error");
        if (json_is_string(e))
            return ib_err_set(err, IB_EBACKEND, "the server says: %s", json_string_value(e));
    }
    const char *what = request ? "inputs" : "outputs";
    const json_t *list = json_object_get(root, what);
    if (!json_is_array(list)) return ib_err_set(err, IB_EFORMAT, "no \"%s\" array", what);
    if (json_array_size(list) > IB_KS_MAX_TENSORS)
        return ib_err_set(err, IB_EUNSUPPORTED, "%zu %s; at most %d are supported",
                          json_array_size(list), what, IB_KS_MAX_TENSORS);
    size_t pool_bytes = json_data_bytes(list);
    uint8_t *pool = NULL;
    if (pool_bytes && !(pool = m->owned = malloc(pool_bytes)))
        return ib_err_set(err, IB_ENOMEM, "out of memory decoding a message");
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        int rc = decode_tensor(v, i, what, &bin, bin_end, &pool, &m->t[i], err);
        if (rc) return rc;
        for (size_t k = 0; k < i; k++)
            if (strcmp(m->t[k].name, m->t[i].name) == 0)
                return ib_err_set(err, IB_EFORMAT, "%s '%s' appears twice", what, m->t[i].name);
        m->n_tensors = i + 1;
    }
    if (bin != bin_end)
        return ib_err_set(err, IB_EFORMAT,
                          "%zu bytes of binary data follow the tensors the header describes",
                          (size_t)(bin_end - bin));
    if (!request) return IB_OK;
    const json_t *outs = json_object_get(root, "outputs"),
                 *params = json_object_get(root, "parameters");
    const json_t *bo =
        json_is_object(params) ? json_object_get(params, "binary_data_output") : NULL;
    m->binary_outputs = bo && json_is_true(bo);
    if (outs && !json_is_array(outs))
        return ib_err_set(err, IB_EFORMAT, "\"outputs\" is not an array");
    if (json_array_size(outs) > IB_KS_MAX_TENSORS)
        return ib_err_set(err, IB_EUNSUPPORTED, "%zu outputs asked for; at most %d",
                          json_array_size(outs), IB_KS_MAX_TENSORS);
    json_array_foreach(outs, i, v)
    {
        const json_t *name = json_object_get(v, "name");
        if (!json_is_string(name) || json_string_length(name) >= IB_KS_NAME_MAX)
            return ib_err_set(err, IB_EFORMAT, "outputs[%zu]: \"name\" missing or too long", i);
        snprintf(m->outputs[i], sizeof m->outputs[i], "%s", json_string_value(name));
        const json_t *p = json_object_get(v, "parameters");
        const json_t *b = json_is_object(p) ? json_object_get(p, "binary_data") : NULL;
        if (b && json_is_true(b)) m->binary_outputs = true;
        m->n_outputs = i + 1;
    }
    return IB_OK;
}

int ib_ks_decode(const uint8_t *body, size_t len, size_t json_len, bool request, ib_ks_msg *m,
                 ib_err *err)
{
    memset(m, 0, sizeof *m);
    if (json_len > len)
        return ib_err_set(err, IB_EFORMAT,
                          "%s says %zu bytes of JSON, but the body has only %zu (a truncated "
                          "message)",
                          IB_KS_HEADER_LENGTH, json_len, len);
    size_t jl = json_len ? json_len : len;
    json_error_t je;
    json_t *root = json_loadb((const char *)body, jl, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return ib_err_set(err, IB_EFORMAT, "malformed JSON at byte %d: %s", je.position, je.text);
    int rc = decode_json(root, body + jl, body + len, request, m, err);
    json_decref(root);
    if (rc) ib_ks_msg_free(m);
    return rc;
}

void ib_ks_error_message(const uint8_t *body, size_t len, char *msg, size_t n)
{
    json_t *root = body && len ? json_loadb((const char *)body, len, 0, NULL) : NULL;
    const json_t *e = root ? json_object_get(root, "error") : NULL;
    if (json_is_string(e)) {
        snprintf(msg, n, "%s", json_string_value(e));
    } else {
        size_t k = 0;
        for (size_t i = 0; i < len && i < 120 && k + 1 < n; i++)
            msg[k++] = body[i] >= 0x20 && body[i] < 0x7f ? (char)body[i] : '.';
        msg[k] = 0;
        if (!k && n > 12)
            memcpy(msg, "(empty body)", 13);
    }
    json_decref(root);
}
