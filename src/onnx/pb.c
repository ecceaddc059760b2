/*
 * pb.c - protobuf-c glue: an allocator over ib_malloc and a schema-driven
 * wire-format pre-scan. protobuf-c's unpack says only "failed"; the pre-scan
 * walks the same bytes first (guided by the generated descriptors, so it
 * knows every ONNX message) and reports the offset and field path of the
 * first defect: a truncated varint, a length past the end, a wire type the
 * schema does not allow, a bad packed array, or nesting deeper than
 * IB_ONNX_PB_MAX_DEPTH. It allocates nothing and visits each byte once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx/pb.h"

/* ---- allocator ------------------------------------------------------------ */

typedef struct pb_alloc_state {
    int failed; /* set when an allocation failed, to tell OOM from bad input */
} pb_alloc_state;

static void *pb_alloc(void *user, size_t size)
{
    void *p = ib_malloc(size);
    if (!p && user) ((pb_alloc_state *)user)->failed = 1;
    return p;
}

static void pb_dealloc(void *user, void *ptr)
{
    IB_UNUSED(user);
    ib_free(ptr);
}

void ib_onnx_pb_allocator_init(ProtobufCAllocator *a)
{
    a->alloc = pb_alloc;
    a->free = pb_dealloc;
    a->allocator_data = NULL;
}

/* ---- pre-scan ------------------------------------------------------------- */

typedef struct pb_frame {
    const char *field; /* field name that led into this level */
    uint32_t index;    /* occurrence index of that field (for repeated fields) */
    int repeated;
} pb_frame;

typedef struct pb_scan {
    const uint8_t *base;
    const char *src;
    const char *root; /* short name of the top-level message */
    ib_err *err;
    int depth;
    pb_frame stack[IB_ONNX_PB_MAX_DEPTH];
} pb_scan;

static int scan_fail(pb_scan *s, const uint8_t *at, const char *fmt, ...) IB_PRINTF(3, 4);

static int scan_fail(pb_scan *s, const uint8_t *at, const char *fmt, ...)
{
    char what[512], path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t n = (size_t)snprintf(path, sizeof path, "%s", s->root);
    for (int i = 0; i < s->depth && n < sizeof path; i++) {
        const pb_frame *f = &s->stack[i];
        if (f->repeated)
            n += (size_t)snprintf(path + n, sizeof path - n, ".%s[%u]", f->field, f->index);
        else
            n += (size_t)snprintf(path + n, sizeof path - n, ".%s", f->field);
    }
    /* The technical detail, then what it means in plain words: bytes that break the wire
     * format at the top level are no ONNX model at all (a text file, an HTML error page saved
     * as .onnx, another format); anything else is a model that was cut or damaged. */
    const char *plain = s->depth == 0 && (at == s->base || strstr(what, "wire type"))
                            ? "this is not an ONNX model: check that the file is an .onnx "
                              "model and was copied whole"
                            : "the model file is corrupt or truncated: copy or export it again";
    return ib_err_set(s->err, IB_EFORMAT, "%s: offset %zu in %s: %s (%s)", s->src,
                      (size_t)(at - s->base), path, what, plain);
}

/* Decode a varint of at most `max_bytes` bytes. 0 = ok, -1 = truncated,
 * -2 = too long. */
static int read_varint(const uint8_t **pp, const uint8_t *end, int max_bytes, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (p >= end) return -1;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7fu) << (7 * i);
        if (!(b & 0x80u)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -2;
}

static int is_varint_type(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_BOOL:
    case PROTOBUF_C_TYPE_ENUM:
        return 1;
    default:
        return 0;
    }
}

static int is_fixed32_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_SFIXED32 || t == PROTOBUF_C_TYPE_FIXED32 ||
           t == PROTOBUF_C_TYPE_FLOAT;
}

static int is_fixed64_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_SFIXED64 || t == PROTOBUF_C_TYPE_FIXED64 ||
           t == PROTOBUF_C_TYPE_DOUBLE;
}

static const char *wire_name(unsigned wt)
{
    switch (wt) {
    case 0:
        return "varint (0)";
    case 1:
        return "64-bit (1)";
    case 2:
        return "length-delimited (2)";
    case 3:
        return "start-group (3)";
    case 4:
        return "end-group (4)";
    case 5:
        return "32-bit (5)";
    default:
        return "invalid";
    }
}

static const char *expected_wire(const ProtobufCFieldDescriptor *fd)
{
    if (is_varint_type(fd->type))
        return fd->label == PROTOBUF_C_LABEL_REPEATED ? "varint (0) or packed (2)" : "varint (0)";
    if (is_fixed32_type(fd->type))
        return fd->label == PROTOBUF_C_LABEL_REPEATED ? "32-bit (5) or packed (2)" : "32-bit (5)";
    if (is_fixed64_type(fd->type))
        return fd->label == PROTOBUF_C_LABEL_REPEATED ? "64-bit (1) or packed (2)" : "64-bit (1)";
    return "length-delimited (2)";
}

/* A packed repeated scalar: the payload must hold whole elements. */
static int check_packed(pb_scan *s, const ProtobufCFieldDescriptor *fd, const uint8_t *p,
                        const uint8_t *end)
{
    size_t len = (size_t)(end - p);
    if (is_fixed32_type(fd->type) && len % 4)
        return scan_fail(s, p, "packed field '%s' (%u) has %zu bytes, not a multiple of 4",
                         fd->name, fd->id, len);
    if (is_fixed64_type(fd->type) && len % 8)
        return scan_fail(s, p, "packed field '%s' (%u) has %zu bytes, not a multiple of 8",
                         fd->name, fd->id, len);
    if (is_varint_type(fd->type)) {
        while (p < end) {
            uint64_t v;
            const uint8_t *at = p;
            if (read_varint(&p, end, 10, &v))
                return scan_fail(s, at, "packed field '%s' (%u) ends inside a varint", fd->name,
                                 fd->id);
        }
    }
    return IB_OK;
}

static int scan_message(pb_scan *s, const ProtobufCMessageDescriptor *desc, const uint8_t *p,
                        const uint8_t *end);

/* One length-delimited field. */
static int scan_lendelim(pb_scan *s, const ProtobufCFieldDescriptor *fd, uint32_t index,
                         const uint8_t *p, const uint8_t *end)
{
    if (!fd) return IB_OK; /* unknown field: protobuf-c keeps its bytes */
    switch (fd->type) {
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
        return IB_OK;
    case PROTOBUF_C_TYPE_MESSAGE: {
        if (s->depth + 1 >= IB_ONNX_PB_MAX_DEPTH)
            return scan_fail(s, p, "messages nested deeper than %d levels", IB_ONNX_PB_MAX_DEPTH);
        pb_frame *f = &s->stack[s->depth++];
        f->field = fd->name;
        f->index = index;
        f->repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
        int rc = scan_message(s, fd->descriptor, p, end);
        if (rc == IB_OK) s->depth--;
        return rc;
    }
    default:
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) return check_packed(s, fd, p, end);
        return scan_fail(s, p, "field '%s' (%u) has wire type %s, expected %s", fd->name, fd->id,
                         wire_name(2), expected_wire(fd));
    }
}

static int scan_message(pb_scan *s, const ProtobufCMessageDescriptor *desc, const uint8_t *p,
                        const uint8_t *end)
{
    uint32_t counts[64] = {0};
    while (p < end) {
        const uint8_t *at = p;
        uint64_t tag, v;
        int r = read_varint(&p, end, 5, &tag);
        if (r == -1) return scan_fail(s, at, "truncated field tag (the data ends inside a varint)");
        if (r == -2 || tag > UINT32_MAX)
            return scan_fail(s, at, "field tag varint longer than 5 bytes");
        uint32_t num = (uint32_t)(tag >> 3);
        unsigned wt = (unsigned)(tag & 7u);
        if (num == 0) return scan_fail(s, at, "field number 0 is invalid (corrupt data)");
        const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(desc, num);
        uint32_t index = 0;
        if (fd) {
            size_t fi = (size_t)(fd - desc->fields);
            if (fi < IB_ARRAY_LEN(counts)) index = counts[fi]++;
        }
        const char *fname = fd ? fd->name : "?";
        switch (wt) {
        case 0:
            r = read_varint(&p, end, 10, &v);
            if (r)
                return scan_fail(s, at, "field '%s' (%u): %s varint", fname, num,
                                 r == -1 ? "truncated" : "over-long (more than 10 bytes)");
            if (fd && !is_varint_type(fd->type))
                return scan_fail(s, at, "field '%s' (%u) has wire type %s, expected %s", fname, num,
                                 wire_name(wt), expected_wire(fd));
            break;
        case 1:
        case 5: {
            size_t w = wt == 1 ? 8 : 4;
            if ((size_t)(end - p) < w)
                return scan_fail(s, at, "field '%s' (%u): truncated %zu-byte value", fname, num, w);
            if (fd && !(wt == 1 ? is_fixed64_type(fd->type) : is_fixed32_type(fd->type)))
                return scan_fail(s, at, "field '%s' (%u) has wire type %s, expected %s", fname, num,
                                 wire_name(wt), expected_wire(fd));
            p += w;
            break;
        }
        case 2: {
            r = read_varint(&p, end, 10, &v);
            if (r)
                return scan_fail(s, at, "field '%s' (%u): %s length varint", fname, num,
                                 r == -1 ? "truncated" : "over-long");
            size_t left = (size_t)(end - p);
            if (v > left)
                return scan_fail(s, at,
                                 "field '%s' (%u) declares %llu bytes but only %zu remain "
                                 "(truncated or corrupt file)",
                                 fname, num, (unsigned long long)v, left);
            if (v > UINT32_MAX)
                return scan_fail(s, at, "field '%s' (%u) is longer than 4 GiB", fname, num);
            int rc = scan_lendelim(s, fd, index, p, p + v);
            if (rc) return rc;
            p += v;
            break;
        }
        default:
            return scan_fail(s, at, "field '%s' (%u) uses wire type %s, which ONNX never uses",
                             fname, num, wire_name(wt));
        }
    }
    return IB_OK;
}

int ib_onnx_pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                     const char *src, ib_err *err)
{
    pb_scan s;
    s.base = data;
    s.src = src ? src : "<memory>";
    s.root = desc->short_name;
    s.err = err;
    s.depth = 0;
    if (!data && len) return ib_err_set(err, IB_EINVAL, "%s: NULL data", s.src);
    return scan_message(&s, desc, data, data + len);
}

int ib_onnx_pb_unpack(const ProtobufCMessageDescriptor *desc, const void *data, size_t len,
                      const char *src, ProtobufCMessage **out, ib_err *err)
{
    *out = NULL;
    int rc = ib_onnx_pb_check(desc, data, len, src, err);
    if (rc) return rc;
    pb_alloc_state st = {0};
    ProtobufCAllocator a;
    ib_onnx_pb_allocator_init(&a);
    a.allocator_data = &st;
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &a, len, data);
    if (!m) {
        if (st.failed)
            return ib_err_set(err, IB_ENOMEM, "%s: out of memory unpacking a %zu-byte %s",
                              src ? src : "<memory>", len, desc->short_name);
        return ib_err_set(err, IB_EFORMAT,
                          "%s: protobuf-c rejected the %zu-byte %s although its wire format "
                          "scans clean",
                          src ? src : "<memory>", len, desc->short_name);
    }
    *out = m;
    return IB_OK;
}

void ib_onnx_pb_free(ProtobufCMessage *m)
{
    if (!m) return;
    ProtobufCAllocator a;
    ib_onnx_pb_allocator_init(&a);
    protobuf_c_message_free_unpacked(m, &a);
}
