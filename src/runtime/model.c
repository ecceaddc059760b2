/*
 * model.c - ib_model: an immutable loaded graph with its inputs, outputs,
 * statistics (parameters, FLOPs at batch 1 through the op registry's flops
 * functions) and op histogram. Loading from ONNX is in model_load.c; the
 * model never changes after creation, so any number of sessions and threads
 * may read it at once.
 */
#include <math.h>
#include <string.h>

#include "runtime/compile.h"
#include "runtime/model.h"
#include "ir/op.h"

void ib_model_load_options_defaults(ib_model_load_options *o)
{
    memset(o, 0, sizeof *o);
}

int ib_model_from_graph(ib_graph *g, ib_model **out, ib_err *err)
{
    *out = NULL;
    if (!g) return ib_err_set(err, IB_EINVAL, "model: no graph");
    int rc = ib_graph_toposort(g, err);
    if (rc) {
        ib_graph_destroy(g);
        return rc;
    }
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_value *v = &g->values.data[g->inputs.data[i]];
        if (v->desc.dtype == IB_DTYPE_UNDEFINED) {
            rc = ib_err_set(err, IB_EFORMAT, "model input '%s' has no declared type", v->name);
            ib_graph_destroy(g);
            return rc;
        }
    }
    ib_model *m = ib_calloc(1, sizeof *m);
    if (!m || ib_compile_cache_create(&m->cache)) {
        ib_free(m);
        ib_graph_destroy(g);
        return ib_err_set(err, IB_ENOMEM, "out of memory creating the model");
    }
    m->graph = g;
    *out = m;
    return IB_OK;
}

const ib_graph *ib_model_graph(const ib_model *m)
{
    return m ? m->graph : NULL;
}

ib_compile_cache *ib_model_cache(const ib_model *m)
{
    return m ? m->cache : NULL;
}

void ib_model_destroy(ib_model *m)
{
    if (!m) return;
    ib_compile_cache_destroy(m->cache);
    ib_graph_destroy(m->graph);
    ib_free(m);
}

size_t ib_model_input_count(const ib_model *m)
{
    return m ? m->graph->inputs.len : 0;
}

size_t ib_model_output_count(const ib_model *m)
{
    return m ? m->graph->outputs.len : 0;
}

static int value_info(const ib_graph *g, ib_value_id id, const char **name, ib_tensor_desc *desc)
{
    const ib_value *v = &g->values.data[id];
    if (name) *name = v->name;
    if (desc) *desc = v->desc;
    return IB_OK;
}

int ib_model_input(const ib_model *m, size_t i, const char **name, ib_tensor_desc *desc)
{
    if (!m || i >= m->graph->inputs.len) return IB_EINVAL;
    return value_info(m->graph, m->graph->inputs.data[i], name, desc);
}

int ib_model_output(const ib_model *m, size_t i, const char **name, ib_tensor_desc *desc)
{
    if (!m || i >= m->graph->outputs.len) return IB_EINVAL;
    return value_info(m->graph, m->graph->outputs.data[i], name, desc);
}

/*
 * FLOPs at batch 1: compile a copy with the batch bound to 1 and no fusion
 * (so every node is a standard op with a registry flops function), then sum
 * the flops of the live nodes. NAN when the shapes cannot be made concrete
 * (another symbolic dim, an op without shape inference): an estimate we
 * cannot make is reported as unknown rather than as a wrong number.
 */
static double model_flops(const ib_graph *src)
{
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.batch = 1;
    o.no_fuse = true;
    ib_compile_stats st;
    ib_graph *g = NULL;
    ib_err err;
    if (ib_compile(src, &o, &g, &st, &err) || !st.shapes_complete) {
        ib_graph_destroy(g);
        return (double)NAN;
    }
    double total = 0;
    const ib_tensor_desc *in[64];
    ib_tensor_desc out[16];
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        const ib_op_def *def = ib_op_find(n->domain, n->op_type, n->opset);
        if (!def || !def->flops || n->n_inputs > 64 || n->n_outputs > 16) continue;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            in[k] = n->inputs[k] == IB_VALUE_NONE ? NULL : &g->values.data[n->inputs[k]].desc;
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] == IB_VALUE_NONE)
                memset(&out[k], 0, sizeof out[k]);
            else
                out[k] = g->values.data[n->outputs[k]].desc;
        ib_op_ctx ctx = {.graph = g, .node = n};
        double f = def->flops(&ctx, in, n->n_inputs, out, n->n_outputs);
        if (f > 0) total += f;
    }
    ib_graph_destroy(g);
    return total;
}

int ib_model_get_stats(const ib_model *m, ib_model_stats *out)
{
    if (!m || !out) return IB_EINVAL;
    memset(out, 0, sizeof *out);
    const ib_graph *g = m->graph;
    for (size_t i = 0; i < g->nodes.len; i++)
        out->node_count += !g->nodes.data[i].dead;
    for (size_t i = 0; i < g->values.len; i++) {
        const ib_tensor *t = g->values.data[i].constant;
        if (!t) continue;
        int64_t n = ib_tensor_desc_numel(&t->desc);
        out->param_count += n > 0 ? (uint64_t)n : 0;
        out->param_bytes += t->nbytes;
    }
    out->opset = g->opset;
    out->producer = g->producer_name ? g->producer_name : "";
    out->flops = model_flops(g);
    return IB_OK;
}

void ib_model_op_histogram(const ib_model *m,
                           void (*fn)(void *user, const char *op_type, uint64_t count), void *user)
{
    if (!m || !fn) return;
    const ib_graph *g = m->graph;
    size_t nn = g->nodes.len;
    /* first-appearance order; a node counts for the first node with its op */
    size_t *first = ib_calloc(nn ? nn : 1, sizeof *first);
    uint64_t *count = ib_calloc(nn ? nn : 1, sizeof *count);
    ib_strmap idx;
    ib_strmap_init(&idx);
    size_t nk = 0;
    bool ok = first && count;
    for (size_t i = 0; ok && i < nn; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        int64_t k;
        if (!ib_strmap_get(&idx, n->op_type, &k)) {
            /* the map keys op_type only; ops of other domains rarely collide */
            k = (int64_t)nk;
            first[nk++] = i;
            if (ib_strmap_put(&idx, n->op_type, k)) ok = false;
        }
        count[k]++;
    }
    for (size_t k = 0; ok && k < nk; k++)
        fn(user, g->nodes.data[first[k]].op_type, count[k]);
    ib_strmap_deinit(&idx);
    ib_free(first);
    ib_free(count);
}
