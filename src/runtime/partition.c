/*
 * partition.c - node-to-backend assignment through supports_op, fallback
 * bookkeeping, and the segment-aware topological schedule (see partition.h).
 *
 * Scheduling is Kahn's algorithm with one min-heap of ready nodes per
 * backend, keyed by the node's index in the (already topological) graph: with
 * a single backend it reproduces the graph's order exactly, and with several
 * it keeps running the current backend's ready nodes before switching.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/partition.h"

typedef struct node_heap {
    ib_node_id *a;
    uint32_t n;
} node_heap;

static void heap_push(node_heap *h, ib_node_id v)
{
    uint32_t i = h->n++;
    h->a[i] = v;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h->a[p] <= h->a[i]) break;
        ib_node_id t = h->a[p];
        h->a[p] = h->a[i];
        h->a[i] = t;
        i = p;
    }
}

static ib_node_id heap_pop(node_heap *h)
{
    ib_node_id top = h->a[0];
    h->a[0] = h->a[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->a[l] < h->a[m]) m = l;
        if (r < h->n && h->a[r] < h->a[m]) m = r;
        if (m == i) break;
        ib_node_id t = h->a[m];
        h->a[m] = h->a[i];
        h->a[i] = t;
        i = m;
    }
    return top;
}

void ib_partition_deinit(ib_partition *p)
{
    ib_free(p->order);
    ib_free(p->step_of);
    ib_free(p->backend_of);
    ib_free(p->segs);
    ib_strbuf_deinit(&p->fallbacks);
    ib_strbuf_deinit(&p->fallback_ops);
    memset(p, 0, sizeof *p);
}

static int unsupported(const ib_graph *g, const ib_node *n, ib_backend *const *backends, size_t nb,
                       const ib_tensor_desc *const *in, ib_err *err)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    char buf[160];
    for (size_t i = 0; i < nb; i++)
        ib_strbuf_printf(&sb, "%s%s", i ? ", " : "", ib_backend_get_name(backends[i]));
    ib_strbuf_puts(&sb, "; inputs ");
    for (uint32_t k = 0; k < n->n_inputs; k++)
        ib_strbuf_printf(&sb, "%s%s", k ? ", " : "",
                         in[k] ? ib_tensor_desc_str(in[k], buf, sizeof buf) : "(absent)");
    IB_UNUSED(g);
    int rc = ib_err_set(err, IB_EUNSUPPORTED,
                        "op %s%s%s (opset %lld) of node '%s' is not supported by any backend "
                        "(tried %s)",
                        n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type,
                        (long long)n->opset, n->name, ib_strbuf_cstr(&sb));
    ib_strbuf_deinit(&sb);
    return rc;
}

static int assign_backends(const ib_graph *g, ib_backend *const *backends,
                           const enum ib_precision *prec, size_t nb, ib_partition *p, ib_err *err)
{
    IB_VEC(const ib_tensor_desc *) in = {0};
    int rc = IB_OK;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        p->backend_of[i] = UINT8_MAX;
        if (n->dead) continue;
        if (IB_VEC_RESERVE(&in, n->n_inputs + 1u)) {
            rc = ib_err_set(err, IB_ENOMEM, "out of memory partitioning");
            break;
        }
        for (uint32_t k = 0; k < n->n_inputs; k++)
            in.data[k] = n->inputs[k] == IB_VALUE_NONE ? NULL : &g->values.data[n->inputs[k]].desc;
        size_t b = 0;
        while (b < nb && !ib_backend_supports_op(backends[b], g, n, in.data, prec[b]))
            b++;
        if (b == nb) {
            rc = unsupported(g, n, backends, nb, in.data, err);
            break;
        }
        p->backend_of[i] = (uint8_t)b;
        if (b > 0) {
            p->n_fallback++;
            ib_strbuf_printf(&p->fallbacks, "node '%s' (%s%s%s) -> %s\n", n->name, n->domain,
                             n->domain[0] ? "." : "", n->op_type, ib_backend_get_name(backends[b]));
        }
    }
    IB_VEC_FREE(&in);
    if (!rc && p->fallbacks.oom) rc = ib_err_set(err, IB_ENOMEM, "out of memory partitioning");
    return rc;
}

/* "LSTM x2, TopK x1": each op type of a fallback node once, in order of first appearance,
 * with its count (a quadratic scan: fallbacks are few). */
static int summarize_fallback_ops(const ib_graph *g, ib_partition *p)
{
    for (size_t i = 0; i < g->nodes.len; i++) {
        if (p->backend_of[i] == UINT8_MAX || p->backend_of[i] == 0) continue;
        const ib_node *n = &g->nodes.data[i];
        bool seen = false;
        uint32_t count = 0;
        for (size_t j = 0; j < g->nodes.len && !seen; j++) {
            if (p->backend_of[j] == UINT8_MAX || p->backend_of[j] == 0) continue;
            const ib_node *m = &g->nodes.data[j];
            if (strcmp(m->op_type, n->op_type) != 0 || strcmp(m->domain, n->domain) != 0) continue;
            if (j < i) seen = true;
            else count++;
        }
        if (seen) continue;
        ib_strbuf_printf(&p->fallback_ops, "%s%s%s%s x%u", p->fallback_ops.len ? ", " : "",
                         n->domain, n->domain[0] ? "." : "", n->op_type, count);
    }
    return p->fallback_ops.oom ? IB_ENOMEM : IB_OK;
}

/* Consumers of every value as CSR over node ids (live nodes only). */
static int build_consumers(const ib_graph *g, uint32_t **start_out, ib_node_id **list_out,
                           uint32_t *pending)
{
    size_t nv = g->values.len;
    uint32_t *start = ib_calloc(nv + 2, sizeof *start);
    if (!start) return IB_ENOMEM;
    size_t edges = 0;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            ib_value_id v = n->inputs[k];
            if (v == IB_VALUE_NONE) continue;
            start[v + 1]++;
            edges++;
            ib_node_id pr = g->values.data[v].producer;
            if (pr != IB_NODE_NONE && !g->nodes.data[pr].dead) pending[i]++;
        }
    }
    for (size_t v = 0; v < nv; v++)
        start[v + 1] += start[v];
    ib_node_id *list = ib_calloc(edges ? edges : 1, sizeof *list);
    uint32_t *fill = ib_calloc(nv + 1, sizeof *fill);
    if (!list || !fill) {
        ib_free(start);
        ib_free(list);
        ib_free(fill);
        return IB_ENOMEM;
    }
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] != IB_VALUE_NONE)
                list[start[n->inputs[k]] + fill[n->inputs[k]]++] = (ib_node_id)i;
    }
    ib_free(fill);
    *start_out = start;
    *list_out = list;
    return IB_OK;
}

/* Pop the next node: the current backend's first ready node, else the
 * lowest-index ready node of any backend (which starts a new segment). */
static ib_node_id next_node(node_heap *heaps, size_t nb, uint32_t *cur)
{
    if (*cur < nb && heaps[*cur].n) return heap_pop(&heaps[*cur]);
    uint32_t best = UINT32_MAX;
    for (uint32_t b = 0; b < nb; b++)
        if (heaps[b].n && (best == UINT32_MAX || heaps[b].a[0] < heaps[best].a[0])) best = b;
    if (best == UINT32_MAX) return IB_NODE_NONE;
    *cur = best;
    return heap_pop(&heaps[best]);
}

static int schedule(const ib_graph *g, size_t nb, ib_partition *p, ib_err *err)
{
    size_t nn = g->nodes.len;
    uint32_t *pending = ib_calloc(nn + 1, sizeof *pending);
    node_heap heaps[IB_PARTITION_MAX_BACKENDS];
    memset(heaps, 0, sizeof heaps);
    uint32_t *cstart = NULL;
    ib_node_id *clist = NULL;
    int rc = IB_ENOMEM;
    if (!pending || build_consumers(g, &cstart, &clist, pending)) goto out;
    for (size_t b = 0; b < nb; b++)
        if (!(heaps[b].a = ib_calloc(nn + 1, sizeof *heaps[b].a))) goto out;
    uint32_t live = 0;
    for (size_t i = 0; i < nn; i++) {
        p->step_of[i] = UINT32_MAX;
        if (g->nodes.data[i].dead) continue;
        live++;
        if (!pending[i]) heap_push(&heaps[p->backend_of[i]], (ib_node_id)i);
    }
    uint32_t cur = UINT32_MAX;
    ib_node_id id;
    while ((id = next_node(heaps, nb, &cur)) != IB_NODE_NONE) {
        uint32_t step = p->n_order++;
        p->order[step] = id;
        p->step_of[id] = step;
        if (!p->n_segs || p->segs[p->n_segs - 1].backend != cur)
            p->segs[p->n_segs++] = (ib_segment){cur, step, 0};
        p->segs[p->n_segs - 1].count++;
        const ib_node *n = &g->nodes.data[id];
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            ib_value_id v = n->outputs[k];
            if (v == IB_VALUE_NONE) continue;
            for (uint32_t c = cstart[v]; c < cstart[v + 1]; c++)
                if (--pending[clist[c]] == 0) heap_push(&heaps[p->backend_of[clist[c]]], clist[c]);
        }
    }
    rc = p->n_order == live ? IB_OK : IB_EFORMAT;
    if (rc)
        ib_err_set(err, rc, "partition: the graph is not acyclic (%u of %u nodes scheduled)",
                   p->n_order, live);
out:
    if (rc == IB_ENOMEM) ib_err_set(err, rc, "out of memory scheduling the graph");
    ib_free(pending);
    ib_free(cstart);
    ib_free(clist);
    for (size_t b = 0; b < nb; b++)
        ib_free(heaps[b].a);
    return rc;
}

int ib_partition_graph(const ib_graph *g, ib_backend *const *backends,
                       const enum ib_precision *prec, size_t n, ib_partition *p, ib_err *err)
{
    memset(p, 0, sizeof *p);
    ib_strbuf_init(&p->fallbacks);
    ib_strbuf_init(&p->fallback_ops);
    if (n < 1 || n > IB_PARTITION_MAX_BACKENDS)
        return ib_err_set(err, IB_EINVAL, "partition: %zu backends", n);
    size_t nn = g->nodes.len;
    p->order = ib_calloc(nn + 1, sizeof *p->order);
    p->step_of = ib_calloc(nn + 1, sizeof *p->step_of);
    p->backend_of = ib_calloc(nn + 1, sizeof *p->backend_of);
    p->segs = ib_calloc(nn + 1, sizeof *p->segs);
    if (!p->order || !p->step_of || !p->backend_of || !p->segs)
        return ib_err_set(err, IB_ENOMEM, "out of memory partitioning %zu nodes", nn);
    int rc = assign_backends(g, backends, prec, n, p, err);
    if (rc) return rc;
    if (summarize_fallback_ops(g, p)) return ib_err_set(err, IB_ENOMEM, "out of memory partitioning");
    return schedule(g, n, p, err);
}
