/*
 * load.c - ONNX ModelProto -> ib_graph: the entry points (bytes, or a file
 * mapped with mmap while it is parsed), the wire-format pre-scan and unpack,
 * and the model-level fields: ir_version, producer, opset imports (ai.onnx
 * must be within the accepted range; other domains are kept per node). The
 * graph itself is load_graph.c. Weights are copied once: protobuf-c's copy
 * of raw_data is adopted by the graph's tensors (see load_tensor.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/load.h"
#include "onnx/pb.h"

void ib_onnx_load_opts_defaults(ib_onnx_load_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_opset = 7;
    o->max_opset = 17;
}

static const char *norm_domain(const char *d)
{
    return !d || strcmp(d, "ai.onnx") == 0 ? "" : d;
}

int64_t ib_onnx_domain_opset(const ib_onnx_loader *L, const char *domain)
{
    if (!domain[0]) return L->opset;
    for (size_t i = 0; L->model && i < L->model->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = L->model->opset_import[i];
        if (strcmp(norm_domain(op->domain), domain) == 0) return op->has_version ? op->version : 1;
    }
    return -1;
}

/* Opset imports: each domain once; ai.onnx within [min_opset, max_opset]. */
static int check_opsets(ib_onnx_loader *L, const Onnx__ModelProto *m)
{
    L->opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = m->opset_import[i];
        const char *d = norm_domain(op->domain);
        for (size_t j = 0; j < i; j++)
            if (strcmp(norm_domain(m->opset_import[j]->domain), d) == 0)
                return ib_onnx_lfail(L, IB_EFORMAT, "opset_import lists domain '%s' twice",
                                     d[0] ? d : "ai.onnx");
        if (!d[0]) {
            L->opset = op->has_version ? op->version : 1;
            if (L->opset < L->opts->min_opset || L->opset > L->opts->max_opset)
                return ib_onnx_lfail(L, IB_EUNSUPPORTED,
                                     "model imports ai.onnx opset %lld; inferbench supports "
                                     "opsets %lld to %lld (convert it with onnx.version_converter)",
                                     (long long)L->opset, (long long)L->opts->min_opset,
                                     (long long)L->opts->max_opset);
        }
    }
    return IB_OK;
}

static int load_model(const void *data, size_t len, const char *src, const char *dir,
                      const ib_onnx_load_opts *opts, ib_graph **out, ib_err *err)
{
    *out = NULL;
    ib_onnx_load_opts dflt;
    if (!opts) {
        ib_onnx_load_opts_defaults(&dflt);
        opts = &dflt;
    }
    if (opts->max_bytes && len > opts->max_bytes)
        return ib_onnx_fail(err, IB_EFORMAT, src, "model is %zu bytes, over the %llu-byte limit",
                            len, (unsigned long long)opts->max_bytes);
    if (len == 0) return ib_onnx_fail(err, IB_EFORMAT, src, "empty input: not an ONNX model");
    ProtobufCMessage *msg;
    int rc = ib_onnx_pb_unpack(&onnx__model_proto__descriptor, data, len, src, &msg, err);
    if (rc) return rc;
    Onnx__ModelProto *m = (Onnx__ModelProto *)msg;
    ib_onnx_loader L;
    memset(&L, 0, sizeof L);
    L.src = src;
    L.err = err;
    L.opts = opts;
    L.model = m;
    ib_onnx_ext_init(&L.ext, opts->external_data_dir ? opts->external_data_dir : dir);
    ib_arena_init(&L.tmp, 0);
    ib_graph *g = NULL;
    if ((rc = check_opsets(&L, m))) goto fail;
    if (!m->graph) {
        rc = ib_onnx_lfail(&L, IB_EFORMAT, "the ModelProto has no graph (is this an ONNX model?)");
        goto fail;
    }
    if (!m->has_ir_version || m->ir_version < 1) {
        rc = ib_onnx_lfail(&L, IB_EFORMAT,
                           "the ModelProto has no ir_version (required by the ONNX IR spec; "
                           "a corrupt file?)");
        goto fail;
    }
    if (ib_graph_create(&g)) {
        rc = ib_onnx_lfail(&L, IB_ENOMEM, "out of memory");
        goto fail;
    }
    g->opset = L.opset > 0 ? L.opset : 0;
    g->ir_version = m->ir_version;
    if ((m->producer_name && !(g->producer_name = ib_arena_strdup(&g->arena, m->producer_name))) ||
        (m->doc_string && !(g->doc = ib_arena_strdup(&g->arena, m->doc_string)))) {
        rc = ib_onnx_lfail(&L, IB_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = ib_onnx_load_graph_proto(&L, m->graph, NULL, g))) goto fail;
    *out = g;
    g = NULL;
fail:
    ib_graph_destroy(g);
    ib_onnx_ext_close(&L.ext);
    ib_arena_deinit(&L.tmp);
    ib_onnx_pb_free(msg);
    return rc;
}

int ib_onnx_load_graph(const void *data, size_t len, const char *base_dir,
                       const ib_onnx_load_opts *opts, ib_graph **out, ib_err *err)
{
    if (!out || (!data && len))
        return ib_err_set(err, IB_EINVAL, "ib_onnx_load_graph: NULL argument");
    return load_model(data, len, "<memory>", base_dir, opts, out, err);
}

int ib_onnx_load_graph_file(const char *path, const ib_onnx_load_opts *opts, ib_graph **out,
                            ib_err *err)
{
    if (!path || !out) return ib_err_set(err, IB_EINVAL, "ib_onnx_load_graph_file: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ib_err_set(err, errno == ENOENT ? IB_ENOTFOUND : IB_EIO, "%s: cannot open: %s", path,
                          strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ib_err_set(err, IB_EIO, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    void *map = NULL;
    if (len) {
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return ib_err_set(err, IB_EIO, "%s: mmap failed: %s", path, strerror(e));
        }
    }
    close(fd);
    /* external data lives relative to the model's folder */
    char *dir = ib_strdup(path);
    int rc;
    if (!dir) {
        rc = ib_err_set(err, IB_ENOMEM, "%s: out of memory", path);
    } else {
        char *slash = strrchr(dir, '/');
        if (!slash)
            strcpy(dir, ".");
        else if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
        rc = load_model(map, len, path, dir, opts, out, err);
    }
    ib_free(dir);
    if (map) munmap(map, len);
    return rc;
}
