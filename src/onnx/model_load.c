/*
 * model_load.c - ib_model_load_file / ib_model_load_memory: the ONNX front door. The
 * loader of this folder produces the graph and the runtime's ib_model_from_graph wraps it,
 * so the arrow points one way, ONNX -> runtime: the runtime knows no file format.
 */
#include "onnx/onnx.h"
#include "runtime/model.h"

static void load_opts(const ib_model_load_options *o, ib_onnx_load_opts *lo)
{
    ib_onnx_load_opts_defaults(lo);
    if (o) {
        lo->external_data_dir = o->external_data_dir;
        lo->max_bytes = o->max_bytes;
    }
}

int ib_model_load_file(const char *path, const ib_model_load_options *opts, ib_model **out,
                       ib_err *err)
{
    if (!out) return ib_err_set(err, IB_EINVAL, "ib_model_load_file: NULL output");
    *out = NULL;
    if (!path) return ib_err_set(err, IB_EINVAL, "ib_model_load_file: NULL path");
    ib_onnx_load_opts lo;
    load_opts(opts, &lo);
    ib_graph *g = NULL;
    int rc = ib_onnx_load_graph_file(path, &lo, &g, err);
    if (rc) return rc;
    return ib_model_from_graph(g, out, err);
}

int ib_model_load_memory(const void *data, size_t size, const ib_model_load_options *opts,
                         ib_model **out, ib_err *err)
{
    if (!out) return ib_err_set(err, IB_EINVAL, "ib_model_load_memory: NULL output");
    *out = NULL;
    if (!data && size) return ib_err_set(err, IB_EINVAL, "ib_model_load_memory: NULL data");
    ib_onnx_load_opts lo;
    load_opts(opts, &lo);
    ib_graph *g = NULL;
    int rc = ib_onnx_load_graph(data, size, opts ? opts->external_data_dir : NULL, &lo, &g, err);
    if (rc) return rc;
    return ib_model_from_graph(g, out, err);
}
