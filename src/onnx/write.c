/*
 * write.c - ib_graph -> ONNX ModelProto: opset imports gathered from the
 * nodes (subgraphs included), graph inputs, initializers (every value with
 * constant data), nodes with their attributes (subgraphs recursively),
 * value_info for typed intermediate values, outputs. The protobuf-c structs
 * are built in an arena and borrow the graph's names and weights, so the
 * only copy of a weight is the one written out. The file writer streams the
 * message to disk and can move large initializers into an external data file
 * beside the model (automatically when the model would pass protobuf's
 * 2 GiB limit). It writes no dead nodes and runs no checks beyond what
 * serializing needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inferbench/version.h"
#include "onnx/onnx.h"
#include "onnx/proto.h"

#define EXT_ALIGN          4096u                /* ONNX: offsets SHOULD be page multiples (mmap) */
#define AUTO_EXT_MIN_BYTES 1024u                /* automatic split: initializers this big go out */
#define AUTO_EXT_MARGIN    ((uint64_t)64 << 20) /* room for the graph itself under 2 GiB */

typedef struct wopset {
    const char *domain;
    int64_t version;
} wopset;

typedef struct wctx {
    ib_arena a;
    ib_err *err;
    IB_VEC(wopset) opsets;
    /* external data (file writer only) */
    uint64_t threshold; /* 0: everything inline */
    const char *ext_loc;
    int ext_fd;
    uint64_t ext_off;
    const char *ext_path;
} wctx;

static char *cs(const char *s)
{
    return (char *)(uintptr_t)s;
}

static char *nz(const char *s)
{
    return s && s[0] ? cs(s) : NULL;
}

static void *wa(wctx *w, size_t n)
{
    return ib_arena_alloc(&w->a, n ? n : 1);
}

static int woom(wctx *w)
{
    return ib_err_set(w->err, IB_ENOMEM, "out of memory writing the ONNX model");
}

/* ---- opsets ------------------------------------------------------------------- */

static int add_opset(wctx *w, const char *domain, int64_t v)
{
    for (size_t i = 0; i < w->opsets.len; i++)
        if (strcmp(w->opsets.data[i].domain, domain) == 0) {
            if (domain[0] && v > w->opsets.data[i].version) w->opsets.data[i].version = v;
            return IB_OK;
        }
    wopset o = {domain, v};
    return IB_VEC_PUSH(&w->opsets, o) ? woom(w) : IB_OK;
}

static int collect_opsets(wctx *w, const ib_graph *g)
{
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        if (n->domain[0] && add_opset(w, n->domain, n->opset > 0 ? n->opset : 1)) return IB_ENOMEM;
        for (uint32_t k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].type == IB_ATTR_GRAPH && n->attrs[k].g &&
                collect_opsets(w, n->attrs[k].g))
                return IB_ENOMEM;
    }
    return IB_OK;
}

/* ---- values and tensors ----------------------------------------------------------- */

static int value_info(wctx *w, const ib_value *v, Onnx__ValueInfoProto **out)
{
    Onnx__ValueInfoProto *vi = wa(w, sizeof *vi);
    if (!vi) return woom(w);
    onnx__value_info_proto__init(vi);
    vi->name = cs(v->name);
    *out = vi;
    if (v->desc.dtype == IB_DTYPE_UNDEFINED) return IB_OK;
    Onnx__TypeProto *tp = wa(w, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = wa(w, sizeof *tt);
    if (!tp || !tt) return woom(w);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)v->desc.dtype;
    vi->type = tp;
    if (!v->shape_known) return IB_OK;
    Onnx__TensorShapeProto *sp = wa(w, sizeof *sp);
    int32_t nd = IB_MAX(0, IB_MIN(v->desc.ndim, IB_MAX_DIMS));
    Onnx__TensorShapeProto__Dimension **dims = wa(w, (size_t)nd * sizeof *dims);
    if (!sp || !dims) return woom(w);
    onnx__tensor_shape_proto__init(sp);
    for (int32_t i = 0; i < nd; i++) {
        Onnx__TensorShapeProto__Dimension *d = wa(w, sizeof *d);
        if (!d) return woom(w);
        onnx__tensor_shape_proto__dimension__init(d);
        if (v->desc.dims[i] >= 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = v->desc.dims[i];
        } else if (v->dim_param[i]) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = cs(v->dim_param[i]);
        }
        dims[i] = d;
    }
    sp->n_dim = (size_t)nd;
    sp->dim = dims;
    tt->shape = sp;
    return IB_OK;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t r = write(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Append t to the external file at the next aligned offset and describe it. */
static int put_external(wctx *w, const ib_tensor *t, const char *name, Onnx__TensorProto *tp)
{
    static const char zeros[EXT_ALIGN];
    uint64_t pad = (EXT_ALIGN - w->ext_off % EXT_ALIGN) % EXT_ALIGN;
    if (write_all(w->ext_fd, zeros, (size_t)pad) || write_all(w->ext_fd, t->data, tp->raw_data.len))
        return ib_err_set(w->err, IB_EIO, "%s: writing initializer '%s' failed: %s", w->ext_path,
                          name, strerror(errno));
    w->ext_off += pad;
    char *off = wa(w, 24), *len = wa(w, 24);
    Onnx__StringStringEntryProto **kv = wa(w, 3 * sizeof *kv);
    if (!off || !len || !kv) return woom(w);
    snprintf(off, 24, "%llu", (unsigned long long)w->ext_off);
    snprintf(len, 24, "%llu", (unsigned long long)tp->raw_data.len);
    const char *keys[3] = {"location", "offset", "length"};
    const char *vals[3] = {w->ext_loc, off, len};
    for (int i = 0; i < 3; i++) {
        if (!(kv[i] = wa(w, sizeof *kv[i]))) return woom(w);
        onnx__string_string_entry_proto__init(kv[i]);
        kv[i]->key = cs(keys[i]);
        kv[i]->value = cs(vals[i]);
    }
    w->ext_off += tp->raw_data.len;
    tp->n_external_data = 3;
    tp->external_data = kv;
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp->has_raw_data = 0;
    tp->raw_data.len = 0;
    tp->raw_data.data = NULL;
    return IB_OK;
}

static int tensor(wctx *w, const ib_tensor *t, const char *name, bool may_go_external,
                  Onnx__TensorProto **out)
{
    Onnx__TensorProto *tp = wa(w, sizeof *tp);
    if (!tp) return woom(w);
    int rc = ib_onnx_tensor_to_proto(t, name, &w->a, tp);
    if (rc) {
        char d[160];
        return ib_err_set(w->err, rc, "tensor '%s' %s: %s", name ? name : "",
                          ib_tensor_desc_str(&t->desc, d, sizeof d),
                          rc == IB_ENOMEM ? "out of memory" : "cannot be serialized");
    }
    if (!name || !name[0]) tp->name = NULL;
    if (may_go_external && w->threshold && tp->has_raw_data && tp->raw_data.len >= w->threshold &&
        (rc = put_external(w, t, name, tp)))
        return rc;
    *out = tp;
    return IB_OK;
}

/* ---- nodes ------------------------------------------------------------------------ */

static int graph_proto(wctx *w, const ib_graph *g, bool top, Onnx__GraphProto **out);

static int attribute(wctx *w, const ib_attr *at, Onnx__AttributeProto **out)
{
    Onnx__AttributeProto *ap = wa(w, sizeof *ap);
    if (!ap) return woom(w);
    onnx__attribute_proto__init(ap);
    ap->name = cs(at->name);
    ap->has_type = 1;
    ap->type = (Onnx__AttributeProto__AttributeType)at->type;
    int rc = IB_OK;
    switch (at->type) {
    case IB_ATTR_FLOAT:
        ap->has_f = 1, ap->f = at->f;
        break;
    case IB_ATTR_INT:
        ap->has_i = 1, ap->i = at->i;
        break;
    case IB_ATTR_STRING:
        ap->has_s = 1;
        ap->s.len = at->s ? at->s_len : 0;
        ap->s.data = (uint8_t *)cs(at->s);
        break;
    case IB_ATTR_FLOATS:
        ap->n_floats = at->floats ? at->count : 0;
        ap->floats = (float *)(uintptr_t)at->floats;
        break;
    case IB_ATTR_INTS:
        ap->n_ints = at->ints ? at->count : 0;
        ap->ints = (int64_t *)(uintptr_t)at->ints;
        break;
    case IB_ATTR_STRINGS: {
        size_t n = at->strings ? at->count : 0;
        ProtobufCBinaryData *ss = wa(w, n * sizeof *ss);
        if (!ss) return woom(w);
        for (size_t i = 0; i < n; i++) {
            ss[i].data = (uint8_t *)cs(at->strings[i]);
            ss[i].len = strlen(at->strings[i]);
        }
        ap->n_strings = n;
        ap->strings = ss;
        break;
    }
    case IB_ATTR_TENSOR:
        if (!at->t)
            return ib_err_set(w->err, IB_EINVAL, "attribute '%s' is a TENSOR without a tensor",
                              at->name);
        rc = tensor(w, at->t, NULL, false, &ap->t);
        break;
    case IB_ATTR_GRAPH:
        if (!at->g)
            return ib_err_set(w->err, IB_EINVAL, "attribute '%s' is a GRAPH without a graph",
                              at->name);
        rc = graph_proto(w, at->g, false, &ap->g);
        break;
    default:
        return ib_err_set(w->err, IB_EINVAL, "attribute '%s' has invalid type %d", at->name,
                          (int)at->type);
    }
    *out = ap;
    return rc;
}

static int names(wctx *w, const ib_graph *g, const ib_value_id *ids, uint32_t n, char ***out)
{
    char **s = wa(w, n * sizeof *s);
    if (!s) return woom(w);
    for (uint32_t i = 0; i < n; i++) {
        ib_value_id id = ids[i];
        if (id != IB_VALUE_NONE && (id < 0 || (size_t)id >= g->values.len))
            return ib_err_set(w->err, IB_EINVAL, "value id %d out of range", (int)id);
        s[i] = cs(id == IB_VALUE_NONE ? "" : g->values.data[id].name);
    }
    *out = s;
    return IB_OK;
}

static int node_proto(wctx *w, const ib_graph *g, const ib_node *n, Onnx__NodeProto **out)
{
    Onnx__NodeProto *np = wa(w, sizeof *np);
    if (!np) return woom(w);
    onnx__node_proto__init(np);
    np->op_type = cs(n->op_type);
    np->domain = nz(n->domain);
    np->name = nz(n->name);
    int rc;
    if ((rc = names(w, g, n->inputs, n->n_inputs, &np->input)) ||
        (rc = names(w, g, n->outputs, n->n_outputs, &np->output)))
        return rc;
    np->n_input = n->n_inputs;
    np->n_output = n->n_outputs;
    np->attribute = wa(w, n->n_attrs * sizeof *np->attribute);
    if (!np->attribute) return woom(w);
    for (uint32_t k = 0; k < n->n_attrs; k++) {
        if ((rc = attribute(w, &n->attrs[k], &np->attribute[k]))) {
            char msg[sizeof w->err->msg];
            snprintf(msg, sizeof msg, "%s", w->err ? w->err->msg : "");
            return ib_err_set(w->err, rc, "node '%s' (%s): %s", n->name, n->op_type, msg);
        }
    }
    np->n_attribute = n->n_attrs;
    *out = np;
    return IB_OK;
}

/* ---- graphs ------------------------------------------------------------------------ */

static int graph_proto(wctx *w, const ib_graph *g, bool top, Onnx__GraphProto **out)
{
    Onnx__GraphProto *gp = wa(w, sizeof *gp);
    size_t nv = g->values.len;
    if (!gp) return woom(w);
    onnx__graph_proto__init(gp);
    gp->name = cs(g->graph_name && g->graph_name[0] ? g->graph_name : top ? "main" : "body");
    if (!top) gp->doc_string = nz(g->doc);
    gp->node = wa(w, g->nodes.len * sizeof *gp->node);
    gp->initializer = wa(w, nv * sizeof *gp->initializer);
    gp->input = wa(w, g->inputs.len * sizeof *gp->input);
    gp->output = wa(w, g->outputs.len * sizeof *gp->output);
    gp->value_info = wa(w, nv * sizeof *gp->value_info);
    if (!gp->node || !gp->initializer || !gp->input || !gp->output || !gp->value_info)
        return woom(w);
    int rc;
    for (size_t i = 0; i < g->inputs.len; i++) {
        ib_value_id id = g->inputs.data[i];
        if (id < 0 || (size_t)id >= nv)
            return ib_err_set(w->err, IB_EINVAL, "graph input id %d out of range", (int)id);
        if ((rc = value_info(w, &g->values.data[id], &gp->input[gp->n_input++]))) return rc;
    }
    for (size_t i = 0; i < g->outputs.len; i++) {
        ib_value_id id = g->outputs.data[i];
        if (id < 0 || (size_t)id >= nv)
            return ib_err_set(w->err, IB_EINVAL, "graph output id %d out of range", (int)id);
        if ((rc = value_info(w, &g->values.data[id], &gp->output[gp->n_output++]))) return rc;
    }
    for (size_t i = 0; i < nv; i++) {
        const ib_value *v = &g->values.data[i];
        if (v->flags & IB_VALUE_CONST) {
            if (!v->constant)
                return ib_err_set(w->err, IB_EINVAL, "value '%s' is CONST without data", v->name);
            if ((rc = tensor(w, v->constant, v->name, top, &gp->initializer[gp->n_initializer++])))
                return rc;
        } else if (!(v->flags & (IB_VALUE_INPUT | IB_VALUE_OUTPUT)) &&
                   v->desc.dtype != IB_DTYPE_UNDEFINED) {
            if ((rc = value_info(w, v, &gp->value_info[gp->n_value_info++]))) return rc;
        }
    }
    for (size_t i = 0; i < g->nodes.len; i++) {
        if (g->nodes.data[i].dead) continue;
        if ((rc = node_proto(w, g, &g->nodes.data[i], &gp->node[gp->n_node++]))) return rc;
    }
    *out = gp;
    return IB_OK;
}

static int model_proto(wctx *w, const ib_graph *g, const ib_onnx_write_opts *o,
                       Onnx__ModelProto **out)
{
    Onnx__ModelProto *m = wa(w, sizeof *m);
    if (!m) return woom(w);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = g->ir_version > 0 ? g->ir_version : 8;
    m->producer_name = cs(o->producer_name   ? o->producer_name
                          : g->producer_name ? g->producer_name
                                             : "inferbench");
    m->producer_version = cs(o->producer_version ? o->producer_version : IB_VERSION_STRING);
    m->doc_string = nz(g->doc);
    int rc;
    if ((g->opset > 0 && (rc = add_opset(w, "", g->opset))) || (rc = collect_opsets(w, g)))
        return rc;
    m->opset_import = wa(w, w->opsets.len * sizeof *m->opset_import);
    if (!m->opset_import) return woom(w);
    for (size_t i = 0; i < w->opsets.len; i++) {
        Onnx__OperatorSetIdProto *op = wa(w, sizeof *op);
        if (!op) return woom(w);
        onnx__operator_set_id_proto__init(op);
        op->domain = cs(w->opsets.data[i].domain);
        op->has_version = 1;
        op->version = w->opsets.data[i].version;
        m->opset_import[m->n_opset_import++] = op;
    }
    if ((rc = graph_proto(w, g, true, &m->graph))) return rc;
    *out = m;
    return IB_OK;
}

void ib_onnx_write_opts_defaults(ib_onnx_write_opts *o)
{
    memset(o, 0, sizeof *o);
}

static void wctx_init(wctx *w, ib_err *err)
{
    memset(w, 0, sizeof *w);
    ib_arena_init(&w->a, 0);
    w->err = err;
    w->ext_fd = -1;
}

static void wctx_deinit(wctx *w)
{
    IB_VEC_FREE(&w->opsets);
    ib_arena_deinit(&w->a);
}

int ib_onnx_write_graph(const ib_graph *g, const ib_onnx_write_opts *opts, void **out,
                        size_t *out_len, ib_err *err)
{
    ib_onnx_write_opts dflt;
    if (!opts) {
        ib_onnx_write_opts_defaults(&dflt);
        opts = &dflt;
    }
    *out = NULL;
    *out_len = 0;
    wctx w;
    wctx_init(&w, err);
    Onnx__ModelProto *m;
    int rc = model_proto(&w, g, opts, &m);
    if (rc == IB_OK) {
        size_t n = onnx__model_proto__get_packed_size(m);
        if (n > IB_ONNX_PROTOBUF_LIMIT) {
            rc = ib_err_set(err, IB_EINVAL,
                            "the model serializes to %zu bytes, over protobuf's 2 GiB limit: "
                            "write it to a file with external data",
                            n);
        } else if (!(*out = ib_malloc(n ? n : 1))) {
            rc = woom(&w);
        } else {
            onnx__model_proto__pack(m, *out);
            *out_len = n;
        }
    }
    wctx_deinit(&w);
    return rc;
}

/* ---- file writer ------------------------------------------------------------------ */

/* A ProtobufCBuffer that streams into a file through a 1 MiB buffer. */
typedef struct fbuf {
    ProtobufCBuffer base;
    int fd;
    int failed;
    size_t len;
    uint8_t data[1 << 20];
} fbuf;

static void fbuf_flush(fbuf *b)
{
    if (!b->failed && b->len && write_all(b->fd, b->data, b->len)) b->failed = errno ? errno : EIO;
    b->len = 0;
}

static void fbuf_append(ProtobufCBuffer *base, size_t len, const uint8_t *data)
{
    fbuf *b = (fbuf *)(void *)base;
    if (len >= sizeof b->data) {
        fbuf_flush(b);
        if (!b->failed && write_all(b->fd, data, len)) b->failed = errno ? errno : EIO;
        return;
    }
    if (b->len + len > sizeof b->data) fbuf_flush(b);
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

/* Bytes of constant data in g and its subgraphs (to decide on external data). */
static uint64_t const_bytes(const ib_graph *g)
{
    uint64_t n = 0;
    for (size_t i = 0; i < g->tensors.len; i++)
        n += g->tensors.data[i]->nbytes;
    for (size_t i = 0; i < g->subgraphs.len; i++)
        n += const_bytes(g->subgraphs.data[i]);
    return n;
}

static int open_tmp(const char *path, char *tmp, size_t n, int *fd, ib_err *err)
{
    if ((size_t)snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid()) >= n)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", path);
    *fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (*fd < 0) return ib_err_set(err, IB_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    return IB_OK;
}

static int finish_file(int fd, const char *tmp, const char *path, ib_err *err)
{
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return ib_err_set(err, IB_EIO, "%s: close failed: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ib_err_set(err, IB_EIO, "%s: rename failed: %s", path, strerror(e));
    }
    return IB_OK;
}

int ib_onnx_write_graph_file(const ib_graph *g, const char *path, const ib_onnx_write_opts *opts,
                             ib_err *err)
{
    ib_onnx_write_opts dflt;
    if (!opts) {
        ib_onnx_write_opts_defaults(&dflt);
        opts = &dflt;
    }
    wctx w;
    wctx_init(&w, err);
    char tmp[4200], ext_tmp[4200], ext_path[4200], loc[1024];
    int rc = IB_OK, fd = -1;
    fbuf *fb = NULL;
    w.threshold = opts->external_threshold;
    if (const_bytes(g) > IB_ONNX_PROTOBUF_LIMIT - AUTO_EXT_MARGIN &&
        (w.threshold == 0 || w.threshold > AUTO_EXT_MIN_BYTES))
        w.threshold = AUTO_EXT_MIN_BYTES;
    if (w.threshold) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *name = opts->external_file ? opts->external_file : base;
        if ((size_t)snprintf(loc, sizeof loc, "%s", name) >= sizeof loc - 6)
            return ib_err_set(err, IB_EINVAL, "%s: external file name too long", path);
        if (!opts->external_file) strcat(loc, ".data");
        if (loc[0] == '/' || strstr(loc, ".."))
            return ib_err_set(err, IB_EINVAL,
                              "external file '%s' must be a relative path inside the model's "
                              "folder",
                              loc);
        size_t dl = (size_t)(base - path);
        if ((size_t)snprintf(ext_path, sizeof ext_path, "%.*s%s", (int)dl, path, loc) >=
            sizeof ext_path)
            return ib_err_set(err, IB_EINVAL, "%s: path too long", path);
        if ((rc = open_tmp(ext_path, ext_tmp, sizeof ext_tmp, &w.ext_fd, err))) goto fail;
        w.ext_loc = loc;
        w.ext_path = ext_path;
    }
    Onnx__ModelProto *m;
    if ((rc = model_proto(&w, g, opts, &m))) goto fail;
    if (onnx__model_proto__get_packed_size(m) > IB_ONNX_PROTOBUF_LIMIT) {
        rc = ib_err_set(err, IB_EINVAL,
                        "%s: the model is over protobuf's 2 GiB limit even with external data",
                        path);
        goto fail;
    }
    if ((rc = open_tmp(path, tmp, sizeof tmp, &fd, err))) goto fail;
    if (!(fb = ib_malloc(sizeof *fb))) {
        rc = woom(&w);
        goto fail;
    }
    fb->base.append = fbuf_append;
    fb->fd = fd;
    fb->failed = 0;
    fb->len = 0;
    onnx__model_proto__pack_to_buffer(m, &fb->base);
    fbuf_flush(fb);
    if (fb->failed) {
        rc = ib_err_set(err, IB_EIO, "%s: write failed: %s", tmp, strerror(fb->failed));
        goto fail;
    }
    if (w.ext_fd >= 0) {
        rc = finish_file(w.ext_fd, ext_tmp, ext_path, err);
        w.ext_fd = -1;
        if (rc) goto fail;
    }
    rc = finish_file(fd, tmp, path, err);
    fd = -1;
fail:
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    if (w.ext_fd >= 0) {
        close(w.ext_fd);
        unlink(ext_tmp);
    }
    ib_free(fb);
    wctx_deinit(&w);
    return rc;
}
