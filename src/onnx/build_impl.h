/*
 * build_impl.h - pieces of the graph builder shared between its files
 * (internal to src/onnx): the weight generator (build_fill.c) and the
 * shape/attribute string parsers (build_parse.c). See build.h.
 */
#ifndef IB_ONNX_BUILD_IMPL_H
#define IB_ONNX_BUILD_IMPL_H

#include "base/arena.h"
#include "onnx/build.h"

/* Fill t (all dims known) as f describes, from the stream of (seed, name).
 * IB_EINVAL with a message in msg for fills that make no sense for the
 * dtype (He/Xavier on integers, unknown kinds). */
int ib_build_fill_tensor(ib_tensor *t, const ib_fill *f, uint64_t seed, const char *name, char *msg,
                         size_t msg_size);

/* Parse "batch,3,224,224" into d (dtype untouched) and params[] (arena
 * strings, NULL for fixed or unnamed dims). */
int ib_build_parse_shape(const char *s, ib_tensor_desc *d, const char **params, ib_arena *a,
                         char *msg, size_t msg_size);

/* Parse an attribute string into *out (n_out entries, arrays in arena a). */
int ib_build_parse_attrs(const char *s, ib_arena *a, ib_attr **out, uint32_t *n_out, char *msg,
                         size_t msg_size);

#endif
