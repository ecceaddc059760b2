/*
 * reference.c - the "reference" backend: runs every op the op registry
 * knows through its plain-C reference kernel (src/ir/ops), on host
 * buffers, in the graph's own dtypes (the session precision is ignored).
 *
 * It is the fallback the partitioner gives every node no other backend
 * takes, and the oracle of the cross-backend op test. graph_compile wraps
 * every bound value in one ib_tensor (so data-dependent output shapes written
 * by a kernel are seen by its consumers) and sizes one scratch area;
 * graph_run calls the kernels in order and allocates nothing.
 */
#include <string.h>

#include "backend/backend_impl.h"
#include "ir/op.h"

typedef struct ref_ctx {
    ib_backend_config cfg;
} ref_ctx;

typedef struct ref_node {
    const ib_node *node;
    const ib_op_def *def;
    const ib_tensor **in; /* per input: the value's tensor, NULL when absent */
    ib_tensor **out;      /* per output: NULL when absent */
} ref_node;

struct ib_backend_exec {
    const ib_graph *graph;
    ref_node *nodes;
    uint32_t n_nodes;
    ib_tensor *tensors;  /* one per binding */
    ib_value_id *values; /* tensors[i] holds values[i] */
    ib_tensor_desc *bound; /* the bound descs (reset before each run) */
    uint32_t n_tensors;
    const ib_tensor **in_slots; /* backing store of every ref_node.in */
    ib_tensor **out_slots;
    void *scratch_raw; /* ib_malloc'd; scratch is its 64-byte aligned start */
    void *scratch;
    size_t scratch_size;
};

static int ref_create(const ib_backend_config *cfg, void **ctx, ib_err *err)
{
    ref_ctx *c = ib_calloc(1, sizeof *c);
    if (!c)
        return ib_err_set(err, IB_ENOMEM, "reference backend: out of memory");
    c->cfg = *cfg;
    *ctx = c;
    return IB_OK;
}

static void ref_destroy(void *ctx)
{
    ib_free(ctx);
}

static bool ref_supports_op(void *ctx, const ib_graph *g, const ib_node *n,
                            const ib_tensor_desc *const *in_descs, enum ib_precision precision)
{
    IB_UNUSED(ctx);
    IB_UNUSED(g);
    IB_UNUSED(precision);
    const ib_op_def *def = ib_op_find(n->domain, n->op_type, n->opset);
    if (!def || !def->kernel)
        return false;
    if (def->dtype_mask && n->n_inputs && in_descs[0] &&
        !(def->dtype_mask & (1u << (unsigned)in_descs[0]->dtype)))
        return false;
    return true;
}

/* Host buffers, IB_BACKEND_ALIGN aligned: the raw block's address is kept
 * just before the aligned start. */
static int ref_buffer_alloc(void *ctx, size_t nbytes, void **impl, void **host_ptr, ib_err *err)
{
    IB_UNUSED(ctx);
    if (nbytes > SIZE_MAX - 2 * IB_BACKEND_ALIGN)
        return ib_err_set(err, IB_ENOMEM, "reference backend: buffer of %zu bytes", nbytes);
    char *raw = ib_malloc(nbytes + 2 * IB_BACKEND_ALIGN);
    if (!raw)
        return ib_err_set(err, IB_ENOMEM, "reference backend: cannot allocate %zu bytes", nbytes);
    uintptr_t a = ((uintptr_t)raw + sizeof(void *) + IB_BACKEND_ALIGN - 1) &
                  ~(uintptr_t)(IB_BACKEND_ALIGN - 1);
    char *p = (char *)a;
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    *impl = p;
    *host_ptr = p;
    return IB_OK;
}

static void ref_buffer_free(void *ctx, void *impl)
{
    IB_UNUSED(ctx);
    if (!impl)
        return;
    void *raw;
    memcpy(&raw, (char *)impl - sizeof(void *), sizeof raw);
    ib_free(raw);
}

static void ref_graph_free(void *ctx, ib_backend_exec *e)
{
    IB_UNUSED(ctx);
    if (!e)
        return;
    ib_free(e->nodes);
    ib_free(e->tensors);
    ib_free(e->values);
    ib_free(e->bound);
    ib_free(e->in_slots);
    ib_free(e->out_slots);
    ib_free(e->scratch_raw);
    ib_free(e);
}

static ib_tensor *tensor_of(ib_backend_exec *e, ib_value_id v)
{
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (e->values[i] == v)
            return &e->tensors[i];
    return NULL;
}

/* Size the scratch for one node with the bound descs. */
static size_t node_scratch(const ib_backend_exec *e, const ref_node *rn)
{
    if (!rn->def->scratch_bytes)
        return 0;
    const ib_node *n = rn->node;
    const ib_tensor_desc *in[64];
    ib_tensor_desc out[16];
    if (n->n_inputs > IB_ARRAY_LEN(in) || n->n_outputs > IB_ARRAY_LEN(out))
        return 0;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        in[i] = rn->in[i] ? &rn->in[i]->desc : NULL;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        if (rn->out[i])
            out[i] = rn->out[i]->desc;
        else
            memset(&out[i], 0, sizeof out[i]);
    }
    ib_op_ctx oc = {.graph = e->graph, .node = n, .scratch = NULL, .scratch_size = 0};
    return rn->def->scratch_bytes(&oc, in, n->n_inputs, out, n->n_outputs);
}

static int ref_graph_compile(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out,
                             ib_err *err)
{
    IB_UNUSED(ctx);
    const ib_graph *g = sg->graph;
    ib_backend_exec *e = ib_calloc(1, sizeof *e);
    if (!e)
        return ib_err_set(err, IB_ENOMEM, "reference backend: out of memory");
    e->graph = g;
    size_t n_in = 0, n_out = 0;
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        n_in += g->nodes.data[sg->nodes[i]].n_inputs;
        n_out += g->nodes.data[sg->nodes[i]].n_outputs;
    }
    uint32_t nb = sg->n_bindings;
    e->nodes = ib_calloc(sg->n_nodes, sizeof *e->nodes);
    e->tensors = ib_calloc(nb ? nb : 1, sizeof *e->tensors);
    e->values = ib_calloc(nb ? nb : 1, sizeof *e->values);
    e->bound = ib_calloc(nb ? nb : 1, sizeof *e->bound);
    e->in_slots = ib_calloc(n_in ? n_in : 1, sizeof *e->in_slots);
    e->out_slots = ib_calloc(n_out ? n_out : 1, sizeof *e->out_slots);
    int rc = IB_ENOMEM;
    if (!e->nodes || !e->tensors || !e->values || !e->bound || !e->in_slots || !e->out_slots)
        goto fail;
    e->n_tensors = nb;
    e->n_nodes = sg->n_nodes;
    for (uint32_t i = 0; i < nb; i++) {
        const ib_backend_binding *bd = &sg->bindings[i];
        ib_tensor *t = &e->tensors[i];
        t->desc = bd->desc;
        t->nbytes = bd->constant ? bd->constant->nbytes : bd->nbytes;
        t->data = bd->constant ? bd->constant->data : (char *)bd->buffer->host_ptr + bd->offset;
        t->owns_data = false;
        e->values[i] = bd->value;
        e->bound[i] = bd->desc;
    }
    size_t si = 0, so = 0;
    for (uint32_t i = 0; i < sg->n_nodes; i++) {
        ref_node *rn = &e->nodes[i];
        const ib_node *n = &g->nodes.data[sg->nodes[i]];
        rn->node = n;
        rn->def = ib_op_find(n->domain, n->op_type, n->opset);
        if (!rn->def || !rn->def->kernel) {
            rc = ib_err_set(err, IB_EUNSUPPORTED,
                            "node '%s' (%s%s%s, opset %lld): no reference kernel", n->name,
                            n->domain, n->domain[0] ? "." : "", n->op_type, (long long)n->opset);
            goto fail;
        }
        rn->in = &e->in_slots[si];
        rn->out = &e->out_slots[so];
        si += n->n_inputs;
        so += n->n_outputs;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            rn->in[k] = n->inputs[k] == IB_VALUE_NONE ? NULL : tensor_of(e, n->inputs[k]);
        for (uint32_t k = 0; k < n->n_outputs; k++)
            rn->out[k] = n->outputs[k] == IB_VALUE_NONE ? NULL : tensor_of(e, n->outputs[k]);
        size_t s = node_scratch(e, rn);
        if (s > e->scratch_size)
            e->scratch_size = s;
    }
    if (e->scratch_size) {
        e->scratch_raw = ib_malloc(e->scratch_size + IB_BACKEND_ALIGN);
        if (!e->scratch_raw)
            goto fail;
        e->scratch = (void *)(((uintptr_t)e->scratch_raw + IB_BACKEND_ALIGN - 1) &
                              ~(uintptr_t)(IB_BACKEND_ALIGN - 1));
    }
    *out = e;
    return IB_OK;
fail:
    if (rc == IB_ENOMEM)
        ib_err_set(err, rc, "reference backend: out of memory compiling the subgraph");
    ref_graph_free(NULL, e);
    return rc;
}

static int ref_graph_run(void *ctx, ib_backend_exec *e, const ib_backend_subgraph *sg,
                         ib_err *err)
{
    IB_UNUSED(ctx);
    IB_UNUSED(sg);
    /* Data-dependent kernels shrink their outputs' desc: start from the bound one. */
    for (uint32_t i = 0; i < e->n_tensors; i++)
        e->tensors[i].desc = e->bound[i];
    for (uint32_t i = 0; i < e->n_nodes; i++) {
        ref_node *rn = &e->nodes[i];
        ib_op_ctx oc = {.graph = e->graph,
                        .node = rn->node,
                        .scratch = e->scratch,
                        .scratch_size = e->scratch_size};
        int rc = rn->def->kernel(&oc, rn->in, rn->node->n_inputs, rn->out, rn->node->n_outputs,
                                 err);
        if (rc)
            return rc;
    }
    return IB_OK;
}

static int ref_value_desc(void *ctx, ib_backend_exec *e, ib_value_id v, ib_tensor_desc *out)
{
    IB_UNUSED(ctx);
    ib_tensor *t = e ? tensor_of(e, v) : NULL;
    if (!t)
        return IB_ENOTFOUND;
    *out = t->desc;
    return IB_OK;
}

const struct ib_backend_ops ib_backend_reference_ops = {
    .abi_version = IB_BACKEND_ABI_VERSION,
    /* runs inferbench.MultiHeadAttention, DotInteraction and GatherConcat */
    .caps = IB_BACKEND_CAP_MHA | IB_BACKEND_CAP_DOT_INTERACTION | IB_BACKEND_CAP_GATHER_CONCAT,
    .name = "reference",
    .available = NULL,
    .create = ref_create,
    .destroy = ref_destroy,
    .supports_op = ref_supports_op,
    .buffer_alloc = ref_buffer_alloc,
    .buffer_free = ref_buffer_free,
    .tensor_set = NULL,
    .tensor_get = NULL,
    .plan_bytes = NULL,
    .graph_compile = ref_graph_compile,
    .graph_free = ref_graph_free,
    .graph_run = ref_graph_run,
    .synchronize = NULL,
    .value_desc = ref_value_desc,
};
