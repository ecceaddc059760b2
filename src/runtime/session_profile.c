/*
 * session_profile.c - per-node profiles of a session's runs (runtime.h, "profiling"):
 * the backends time their steps (ABI 4, backend_impl.h), the session times each subgraph
 * with the copies before it and each whole run; ib_session_profile gathers them in
 * execution order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "ir/op.h"
#include "runtime/session_impl.h"

void ib_session_prof_seg(ib_seg_exec *se)
{
    if (se->prof_on)
        return;
    se->prof_on = true;
    se->prof_ns = se->prof_copy_ns = 0;
    se->prof_runs = 0;
    se->prof_steps = ib_backend_graph_set_profiling(se->exec, true);
}

int ib_session_set_profiling(ib_session *s, bool on)
{
    if (!s)
        return IB_EINVAL;
    s->profiling = on;
    s->prof_run_ns = 0;
    s->prof_runs = 0;
    for (size_t i = 0; i < s->variants.len; i++) {
        ib_variant *v = s->variants.data[i];
        for (uint32_t k = 0; k < v->n_segs; k++) {
            ib_seg_exec *se = &v->segs[k];
            if (se->prof_on && se->prof_steps)
                ib_backend_graph_set_profiling(se->exec, false);
            se->prof_on = false;
            if (on)
                ib_session_prof_seg(se);
        }
    }
    return IB_OK;
}

typedef struct gather {
    ib_profile *p;
    size_t cap;
    const char *backend;
    const ib_graph *g; /* the variant's graph (concrete shapes) */
    int oom;
} gather;

/* FLOPs of one run of node n at the variant's shapes (0 when its op does not count). */
static double node_flops(const ib_graph *g, const ib_node *n)
{
    const ib_op_def *def = ib_op_find(n->domain, n->op_type, n->opset);
    if (!def || !def->flops || n->n_inputs > 64 || n->n_outputs > 16)
        return 0;
    const ib_tensor_desc *in[64];
    ib_tensor_desc out[16];
    for (uint32_t k = 0; k < n->n_inputs; k++)
        in[k] = n->inputs[k] == IB_VALUE_NONE ? NULL : &g->values.data[n->inputs[k]].desc;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] == IB_VALUE_NONE)
            memset(&out[k], 0, sizeof out[k]);
        else
            out[k] = g->values.data[n->outputs[k]].desc;
    ib_op_ctx ctx = {.graph = g, .node = n};
    double f = def->flops(&ctx, in, n->n_inputs, out, n->n_outputs);
    return f > 0 ? f : 0;
}

static ib_profile_entry *add(gather *g)
{
    if (g->p->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 256;
        ib_profile_entry *e = realloc(g->p->entries, cap * sizeof *e);
        if (!e) {
            g->oom = 1;
            return NULL;
        }
        g->p->entries = e;
        g->cap = cap;
    }
    ib_profile_entry *e = &g->p->entries[g->p->n++];
    memset(e, 0, sizeof *e);
    e->backend = g->backend;
    return e;
}

static void on_step(void *user, const ib_node *node, const char *kind, int64_t ns, uint64_t runs)
{
    gather *g = user;
    ib_profile_entry *e = add(g);
    if (!e)
        return;
    e->node = node ? node->name : NULL;
    /* layout conversions count as what they are, whatever node they serve */
    e->op_type = !node ? "copy" : strcmp(kind, "reorder") == 0 ? "reorder" : node->op_type;
    e->flops = node && strcmp(kind, "reorder") != 0 ? node_flops(g->g, node) : 0;
    e->kind = kind;
    e->ns = ns;
    e->runs = runs;
}

int ib_session_profile(const ib_session *s, ib_profile *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return ib_err_set(err, IB_EINVAL, "ib_session_profile: NULL session");
    gather g = {out, 0, NULL, NULL, 0};
    for (size_t i = 0; i < s->variants.len; i++) {
        const ib_variant *v = s->variants.data[i];
        for (uint32_t k = 0; k < v->n_segs; k++) {
            const ib_seg_exec *se = &v->segs[k];
            if (!se->prof_on || !se->prof_runs)
                continue;
            g.backend = ib_backend_get_name(s->backends[se->backend]);
            g.g = v->g;
            ib_profile_entry *e;
            if (se->n_copies && (e = add(&g))) {
                e->op_type = "copy";
                e->kind = "copy";
                e->ns = se->prof_copy_ns;
                e->runs = se->prof_runs;
            }
            if (se->prof_steps) {
                ib_backend_graph_profile(se->exec, on_step, &g);
            } else if ((e = add(&g))) {
                e->op_type = "subgraph";
                e->kind = "subgraph";
                e->node = se->sg.n_nodes ? v->g->nodes.data[se->sg.nodes[0]].name : NULL;
                e->ns = se->prof_ns;
                e->runs = se->prof_runs;
            }
        }
    }
    out->run_ns = s->prof_run_ns;
    out->runs = s->prof_runs;
    if (g.oom) {
        ib_profile_free(out);
        return ib_err_set(err, IB_ENOMEM, "out of memory gathering the profile");
    }
    return IB_OK;
}

void ib_profile_free(ib_profile *p)
{
    if (p) {
        free(p->entries);
        memset(p, 0, sizeof *p);
    }
}

typedef struct op_sum {
    const char *op;
    int64_t ns;
    int nodes;
    double flops; /* summed over the runs */
} op_sum;

static int by_ns(const void *a, const void *b)
{
    int64_t x = ((const op_sum *)a)->ns, y = ((const op_sum *)b)->ns;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int entry_by_ns(const void *a, const void *b)
{
    int64_t x = (*(const ib_profile_entry *const *)a)->ns,
            y = (*(const ib_profile_entry *const *)b)->ns;
    return x < y ? 1 : x > y ? -1 : 0;
}

void ib_profile_write(const ib_profile *p, size_t top, FILE *f)
{
    if (!p || !p->runs) {
        fprintf(f, "profile: no run recorded\n");
        return;
    }
    double runs = (double)p->runs, run_ms = (double)p->run_ns / 1e6 / runs;
    fprintf(f, "profile: %llu runs, %.3f ms per run (ib_session_run wall time)\n",
            (unsigned long long)p->runs, run_ms);
    op_sum *ops = calloc(p->n + 1, sizeof *ops);
    const ib_profile_entry **sorted = calloc(p->n + 1, sizeof *sorted);
    if (!ops || !sorted) {
        free(ops);
        free(sorted);
        return;
    }
    size_t n_ops = 0;
    int64_t total = 0;
    for (size_t i = 0; i < p->n; i++) {
        const ib_profile_entry *e = &p->entries[i];
        /* summed over the runs of its shape: over all runs, that is what they spent */
        int64_t ns = e->ns;
        total += ns;
        size_t k = 0;
        while (k < n_ops && strcmp(ops[k].op, e->op_type) != 0)
            k++;
        if (k == n_ops)
            ops[n_ops++] = (op_sum){e->op_type, 0, 0, 0};
        ops[k].ns += ns;
        ops[k].flops += e->flops * (double)e->runs;
        ops[k].nodes += e->node != NULL;
        sorted[i] = e;
    }
    qsort(ops, n_ops, sizeof *ops, by_ns);
    fprintf(f, "%-26s %10s %8s %6s %9s\n", "op type", "ms/run", "% run", "nodes", "GFLOP/s");
    for (size_t k = 0; k < n_ops; k++) {
        char gf[32] = "-";
        if (ops[k].flops > 0 && ops[k].ns > 0)
            snprintf(gf, sizeof gf, "%.1f", ops[k].flops / (double)ops[k].ns);
        fprintf(f, "%-26s %10.3f %7.1f%% %6d %9s\n", ops[k].op, (double)ops[k].ns / 1e6 / runs,
                p->run_ns ? 100.0 * (double)ops[k].ns / (double)p->run_ns : 0.0, ops[k].nodes,
                gf);
    }
    int64_t rest = p->run_ns - total;
    fprintf(f, "%-26s %10.3f %7.1f%%\n", "(session, between steps)", (double)rest / 1e6 / runs,
            p->run_ns ? 100.0 * (double)rest / (double)p->run_ns : 0.0);
    qsort(sorted, p->n, sizeof *sorted, entry_by_ns);
    if (top > p->n)
        top = p->n;
    if (top)
        fprintf(f, "slowest %zu steps:\n%-40s %-22s %-10s %-8s %10s %8s %9s\n", top, "node",
                "op type", "backend", "kind", "ms/run", "% run", "GFLOP/s");
    for (size_t i = 0; i < top; i++) {
        const ib_profile_entry *e = sorted[i];
        char gf[32] = "-";
        if (e->flops > 0 && e->ns > 0)
            snprintf(gf, sizeof gf, "%.1f", e->flops * (double)e->runs / (double)e->ns);
        fprintf(f, "%-40.40s %-22.22s %-10s %-8s %10.3f %7.1f%% %9s\n",
                e->node ? e->node : "-", e->op_type, e->backend ? e->backend : "-",
                e->kind ? e->kind : "-", (double)e->ns / 1e6 / runs,
                p->run_ns ? 100.0 * (double)e->ns / (double)p->run_ns : 0.0, gf);
    }
    free(ops);
    free(sorted);
}
