/*
 * model.h - the runtime's view of a loaded model (internal): the graph it
 * wraps, and a constructor for graphs built in memory (the model builders and
 * the tests use it; files go through ib_model_load_file).
 *
 * A model is immutable once created: sessions compile copies of its graph
 * and borrow its weights, so it must outlive every session created from it.
 * The one thing that grows inside is the derived-constant cache, a memo of
 * weights folded by the compiler (BN into conv, constant transposes), filled
 * under its lock so every session of every thread shares one copy.
 */
#ifndef IB_RUNTIME_MODEL_H
#define IB_RUNTIME_MODEL_H

#include "inferbench/runtime.h"
#include "ir/graph.h"

#include "runtime/compile.h"

struct ib_model {
    ib_graph *graph;         /* owned; topologically sorted; never modified */
    ib_compile_cache *cache; /* folded weights shared by every session (thread-safe) */
};

/* Wrap a graph (ownership moves to the model, also on failure). Checks that
 * it sorts topologically and that every input has a declared type. */
int ib_model_from_graph(ib_graph *g, ib_model **out, ib_err *err);

/* The model's graph (borrowed, read-only). */
const ib_graph *ib_model_graph(const ib_model *m);
/* The model's derived-constant cache (borrowed). */
ib_compile_cache *ib_model_cache(const ib_model *m);

#endif
