/*
 * compile.c - the compiler pipeline (see compile.h for the order of passes
 * and why): clone, bind, infer+fold, dce, fusions, infer again, dce.
 * Each pass lives in its own compile_<pass>.c; this file only sequences
 * them and keeps the graph topologically sorted between them.
 */
#include <string.h>

#include "runtime/compile.h"

void ib_compile_options_defaults(ib_compile_options *o)
{
    memset(o, 0, sizeof *o);
}

typedef int (*pass_fn)(ib_pass_ctx *c);

static int run_fusions(ib_pass_ctx *c)
{
    /* GELU and LayerNorm first: FusedMatMul absorbs a fused Gelu, and the
     * attention pattern must be matched before its MatMuls are rewritten. */
    /* the interaction before fuse_matmul, which would take its MatMul */
    static const pass_fn passes[] = {ib_pass_fuse_dot_interaction, ib_pass_fuse_gelu,
                                     ib_pass_fuse_layernorm,
                                     ib_pass_fuse_attention, ib_pass_fuse_mha,
                                     ib_pass_fuse_matmul,
                                     ib_pass_fuse_conv, ib_pass_fuse_gather_concat,
                                     ib_pass_fuse_instance_norm};
    for (size_t i = 0; i < IB_ARRAY_LEN(passes); i++) {
        int rc = ib_graph_toposort(c->g, c->err);
        if (!rc) rc = passes[i](c);
        if (rc) return rc;
    }
    return ib_graph_toposort(c->g, c->err);
}

int ib_compile(const ib_graph *src, const ib_compile_options *o, ib_graph **out,
               ib_compile_stats *stats, ib_err *err)
{
    ib_compile_stats local;
    ib_compile_options dflt;
    if (!o) {
        ib_compile_options_defaults(&dflt);
        o = &dflt;
    }
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    ib_pass_ctx c;
    memset(&c, 0, sizeof c);
    c.opts = o;
    c.stats = stats;
    c.err = err;
    int rc = ib_graph_clone(src, &c.g);
    if (rc) return ib_err_set(err, rc, "out of memory copying the graph");
    /* the model's own constants are "pure": results derived only from them
     * can be cached across batch sizes */
    for (size_t i = 0; i < c.g->values.len; i++)
        if ((rc = IB_VEC_PUSH(&c.pure, c.g->values.data[i].constant != NULL))) {
            ib_err_set(err, rc, "out of memory");
            goto fail;
        }
    if ((rc = ib_graph_toposort(c.g, err)) || (rc = ib_pass_bind(&c)) ||
        (rc = ib_pass_infer(&c, !o->no_fold)))
        goto fail;
    if (!o->no_dce && ((rc = ib_pass_dce(&c)) || (rc = ib_graph_toposort(c.g, err)))) goto fail;
    if (!o->no_fuse) {
        if ((rc = run_fusions(&c)) || (rc = ib_pass_infer(&c, false))) goto fail;
        if (!o->no_dce && (rc = ib_pass_dce(&c))) goto fail;
    }
    if ((rc = ib_graph_toposort(c.g, err))) goto fail;
    IB_VEC_FREE(&c.pure);
    *out = c.g;
    return IB_OK;
fail:
    IB_VEC_FREE(&c.pure);
    ib_graph_destroy(c.g);
    return rc;
}
