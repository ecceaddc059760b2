/*
 * load.h - state shared by the two halves of the ONNX loader (internal to
 * src/onnx): load.c reads the ModelProto (file, opsets, options) and
 * load_graph.c turns each GraphProto, including subgraphs, into an ib_graph.
 */
#ifndef IB_ONNX_LOAD_H
#define IB_ONNX_LOAD_H

#include "onnx/onnx.h"
#include "onnx/proto.h"

typedef struct ib_onnx_loader {
    const char *src; /* path or "<memory>", first word of every message */
    ib_err *err;
    const ib_onnx_load_opts *opts;
    ib_onnx_ext ext;
    const Onnx__ModelProto *model; /* opset imports, local functions */
    int64_t opset;                 /* ai.onnx opset, -1 when not imported */
    ib_arena tmp;                  /* scratch freed when loading ends */
    char where[512];               /* "subgraph 'body' of node 'Loop_3': " while nested */
    size_t where_len;
} ib_onnx_loader;

/* The chain of enclosing graphs, for names a subgraph reads from outside. */
typedef struct ib_onnx_scope {
    const ib_graph *g;
    const struct ib_onnx_scope *parent;
} ib_onnx_scope;

/* Fill g from gp. parent is NULL for the main graph. */
int ib_onnx_load_graph_proto(ib_onnx_loader *L, Onnx__GraphProto *gp, const ib_onnx_scope *parent,
                             ib_graph *g);

/* Message "<src>: <where><what>" into L->err; returns code. */
int ib_onnx_lfail(ib_onnx_loader *L, int code, const char *fmt, ...) IB_PRINTF(3, 4);

/* Version the model imports for domain ("" = ai.onnx); -1 when absent. */
int64_t ib_onnx_domain_opset(const ib_onnx_loader *L, const char *domain);

#endif
