/*
 * session_build.c - building one session variant (one set of input shapes):
 * compile the model graph for those shapes, partition it over the session's
 * backends, compute every value's live interval in each backend's arena,
 * plan the arenas, bind values to (buffer, offset), record the boundary
 * copies and input feeds, and compile each segment on its backend.
 *
 * Live intervals are in execution steps (positions in the partition order).
 * A value lives in its producer's arena from its producing step to its last
 * read there, and until it has been copied to every other backend that reads
 * it; a graph output lives until the end (step N). In a consuming backend's
 * arena it lives from the first step of the first segment there that reads
 * it (the copy happens just before that segment) to its last read. Graph
 * inputs are fed at the start of the run (step 0); with keep_inputs they live to
 * the end, so ib_session_run_fed may keep their bytes for the next run.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/session_impl.h"

typedef struct live_info {
    int32_t *first[IB_SESSION_MAX_BACKENDS];
    int32_t *last[IB_SESSION_MAX_BACKENDS];
    int32_t *slot[IB_SESSION_MAX_BACKENDS]; /* index into the arena plan, -1 = none */
    int32_t *prod_b;                        /* backend of the producer, -1 = none */
    int32_t *prod_seg;
    bool *boundary;
    IB_VEC(ib_copy) pending; /* (seg in src_b, value in dst_off, dst backend) before offsets */
    IB_VEC(uint32_t) copy_seg;
    IB_VEC(ib_value_id) copy_val;
} live_info;

static void live_free(live_info *li)
{
    for (int b = 0; b < IB_SESSION_MAX_BACKENDS; b++) {
        ib_free(li->first[b]);
        ib_free(li->last[b]);
        ib_free(li->slot[b]);
    }
    ib_free(li->prod_b);
    ib_free(li->prod_seg);
    ib_free(li->boundary);
    IB_VEC_FREE(&li->pending);
    IB_VEC_FREE(&li->copy_seg);
    IB_VEC_FREE(&li->copy_val);
}

static int live_alloc(live_info *li, size_t nv, uint32_t nb)
{
    memset(li, 0, sizeof *li);
    for (uint32_t b = 0; b < nb; b++) {
        li->first[b] = ib_malloc((nv + 1) * sizeof(int32_t));
        li->last[b] = ib_malloc((nv + 1) * sizeof(int32_t));
        li->slot[b] = ib_malloc((nv + 1) * sizeof(int32_t));
        if (!li->first[b] || !li->last[b] || !li->slot[b]) return IB_ENOMEM;
        for (size_t v = 0; v <= nv; v++)
            li->first[b][v] = li->last[b][v] = li->slot[b][v] = -1;
    }
    li->prod_b = ib_malloc((nv + 1) * sizeof(int32_t));
    li->prod_seg = ib_malloc((nv + 1) * sizeof(int32_t));
    li->boundary = ib_calloc(nv + 1, sizeof(bool));
    if (!li->prod_b || !li->prod_seg || !li->boundary) return IB_ENOMEM;
    for (size_t v = 0; v <= nv; v++)
        li->prod_b[v] = li->prod_seg[v] = -1;
    return IB_OK;
}

static void extend(int32_t *first, int32_t *last, ib_value_id v, int32_t from, int32_t to)
{
    if (first[v] < 0 || from < first[v]) first[v] = from;
    if (to > last[v]) last[v] = to;
}

static bool is_graph_input(const ib_graph *g, ib_value_id v)
{
    for (size_t i = 0; i < g->inputs.len; i++)
        if (g->inputs.data[i] == v) return true;
    return false;
}

/* One read of value x by the node at step s of segment k on backend b. */
static int note_read(live_info *li, const ib_graph *g, ib_value_id x, uint32_t b, int32_t s,
                     uint32_t k, int32_t seg_first)
{
    if (li->prod_b[x] < 0) { /* a graph input: fed at step 0 */
        extend(li->first[b], li->last[b], x, 0, s);
        li->boundary[x] = true;
        return IB_OK;
    }
    if (li->prod_seg[x] != (int32_t)k) li->boundary[x] = true;
    if ((uint32_t)li->prod_b[x] == b) {
        extend(li->first[b], li->last[b], x, li->first[b][x], s);
        return IB_OK;
    }
    /* another backend's value: copied in before the first segment here that reads it */
    if (li->first[b][x] < 0) {
        uint32_t pb = (uint32_t)li->prod_b[x];
        extend(li->first[pb], li->last[pb], x, li->first[pb][x], seg_first);
        if (IB_VEC_PUSH(&li->copy_seg, k) || IB_VEC_PUSH(&li->copy_val, x)) return IB_ENOMEM;
    }
    extend(li->first[b], li->last[b], x, seg_first, s);
    IB_UNUSED(g);
    return IB_OK;
}

static int compute_liveness(const ib_graph *g, const ib_partition *p, bool keep_inputs,
                            live_info *li)
{
    for (uint32_t k = 0; k < p->n_segs; k++) {
        const ib_segment *sg = &p->segs[k];
        for (uint32_t s = sg->first; s < sg->first + sg->count; s++) {
            const ib_node *n = &g->nodes.data[p->order[s]];
            for (uint32_t i = 0; i < n->n_inputs; i++) {
                ib_value_id x = n->inputs[i];
                if (x == IB_VALUE_NONE || g->values.data[x].constant) continue;
                if (li->prod_b[x] < 0 && !is_graph_input(g, x)) return IB_EFORMAT;
                int rc = note_read(li, g, x, sg->backend, (int32_t)s, k, (int32_t)sg->first);
                if (rc) return rc;
            }
            for (uint32_t o = 0; o < n->n_outputs; o++) {
                ib_value_id y = n->outputs[o];
                if (y == IB_VALUE_NONE) continue;
                li->prod_b[y] = (int32_t)sg->backend;
                li->prod_seg[y] = (int32_t)k;
                extend(li->first[sg->backend], li->last[sg->backend], y, (int32_t)s, (int32_t)s);
            }
        }
    }
    for (size_t i = 0; i < g->outputs.len; i++) {
        ib_value_id y = g->outputs.data[i];
        li->boundary[y] = true;
        if (li->prod_b[y] >= 0)
            li->last[li->prod_b[y]][y] = (int32_t)p->n_order; /* read after the last step */
    }
    /* keep_inputs: an input's bytes stay its own to the end, so the next run may keep them */
    for (size_t i = 0; keep_inputs && i < g->inputs.len; i++)
        for (uint32_t b = 0; b < IB_SESSION_MAX_BACKENDS && li->first[b]; b++)
            if (li->first[b][g->inputs.data[i]] >= 0)
                li->last[b][g->inputs.data[i]] = (int32_t)p->n_order;
    return IB_OK;
}

static size_t slot_bytes(ib_session *s, uint32_t b, const ib_value *val, bool plain)
{
    size_t n = plain ? ib_tensor_desc_nbytes(&val->desc)
                     : ib_backend_plan_bytes(s->backends[b], &val->desc);
    size_t p = ib_tensor_desc_nbytes(&val->desc);
    return n < p ? p : (n ? n : 1); /* empty tensors still get an address */
}

/*
 * Elementwise ops whose reference and CPU kernels read element k before
 * writing element k, so the output may take over an input of the same shape
 * (backend_impl.h, planner rules). Variadic Sum/Max/... are not here: their
 * kernels copy input 0 into the output first.
 */
static bool inplace_op(const ib_node *n)
{
    static const char *const unary[] = {
        "Relu",  "LeakyRelu", "Sigmoid",  "Tanh",        "Exp",        "Log",
        "Sqrt",  "Neg",       "Abs",      "Erf",         "Reciprocal", "Elu",
        "Selu",  "Softplus",  "Softsign", "HardSigmoid", "HardSwish",  "Clip",
        "Floor", "Ceil",      "Round",    "Sin",         "Cos"};
    static const char *const binary[] = {"Add", "Sub", "Mul", "Div", "Pow"};
    /* InstanceNormalization: every backend reads a channel's voxels for its statistics
     * before writing any of them, then writes each voxel after reading it */
    if (!strcmp(n->domain, IB_DOMAIN_INTERNAL))
        return !strcmp(n->op_type, "Gelu") || !strcmp(n->op_type, "InstanceNorm");
    if (n->domain[0]) return false;
    if (!strcmp(n->op_type, "InstanceNormalization")) return true;
    for (size_t i = 0; i < IB_ARRAY_LEN(unary); i++)
        if (!strcmp(n->op_type, unary[i])) return true;
    for (size_t i = 0; i < IB_ARRAY_LEN(binary); i++)
        if (!strcmp(n->op_type, binary[i]) && n->n_inputs == 2) return true;
    return false;
}

/* Ask for in-place reuse where an elementwise node reads an input for the
 * last time and its output has that input's shape, dtype, size and layout
 * class (boundary or not). The planner grants or refuses. */
static void request_inplace(const ib_graph *g, const ib_partition *p, live_info *li, uint32_t b,
                            bool residual, ib_arena_plan *ap)
{
    for (uint32_t st = 0; st < p->n_order; st++) {
        const ib_node *n = &g->nodes.data[p->order[st]];
        /* FusedConv: only the residual Z (input 3), on backends that allow it, and not when
         * Z is also the convolution's source */
        bool fz = residual && !strcmp(n->domain, IB_DOMAIN_INTERNAL) &&
                  !strcmp(n->op_type, "FusedConv") && n->n_inputs > 3 &&
                  n->inputs[3] != IB_VALUE_NONE && n->inputs[3] != n->inputs[0];
        if (p->backend_of[p->order[st]] != b || n->n_outputs < 1 || !(fz || inplace_op(n)))
            continue;
        ib_value_id y = n->outputs[0];
        if (y == IB_VALUE_NONE || li->slot[b][y] < 0) continue;
        ib_plan_value *py = &ap->pv[li->slot[b][y]];
        uint32_t first = fz ? 3 : 0;
        uint32_t cand = fz ? 4 : strcmp(n->op_type, "Clip") != 0 && n->n_inputs == 2 ? 2 : 1;
        for (uint32_t k = first; k < cand && py->share_with < 0; k++) {
            ib_value_id x = n->inputs[k];
            if (x == IB_VALUE_NONE || g->values.data[x].constant || li->slot[b][x] < 0 ||
                is_graph_input(g, x) || li->last[b][x] != (int32_t)st ||
                li->boundary[x] != li->boundary[y] ||
                !ib_tensor_desc_equal(&g->values.data[x].desc, &g->values.data[y].desc))
                continue;
            const ib_plan_value *px = &ap->pv[li->slot[b][x]];
            if (px->size == py->size && li->slot[b][x] < li->slot[b][y])
                py->share_with = li->slot[b][x];
        }
    }
}

typedef struct slot_order {
    int32_t start;
    ib_value_id v;
} slot_order;

static int cmp_slot(const void *pa, const void *pb)
{
    const slot_order *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return (a->v > b->v) - (a->v < b->v);
}

static int plan_arenas(ib_session *s, ib_variant *v, const ib_partition *p, live_info *li,
                       ib_err *err)
{
    const ib_graph *g = v->g;
    for (uint32_t b = 0; b < s->n_backends; b++) {
        ib_arena_plan *ap = &v->plan[b];
        size_t n = 0;
        for (size_t x = 0; x < g->values.len; x++)
            n += li->first[b][x] >= 0;
        ap->pv = ib_calloc(n + 1, sizeof *ap->pv);
        ap->value = ib_calloc(n + 1, sizeof *ap->value);
        slot_order *ord = ib_calloc(n + 1, sizeof *ord);
        if (!ap->pv || !ap->value || !ord) {
            ib_free(ord);
            return ib_err_set(err, IB_ENOMEM, "out of memory planning activations");
        }
        /* slots in order of birth, so an in-place donor precedes its taker */
        size_t k = 0;
        for (size_t x = 0; x < g->values.len; x++)
            if (li->first[b][x] >= 0) ord[k++] = (slot_order){li->first[b][x], (ib_value_id)x};
        qsort(ord, n, sizeof *ord, cmp_slot);
        for (size_t i = 0; i < n; i++) {
            ib_value_id x = ord[i].v;
            ib_plan_value *pv = &ap->pv[ap->n];
            pv->size = slot_bytes(s, b, &g->values.data[x], v->calib || li->boundary[x]);
            pv->start = li->first[b][x];
            pv->end = li->last[b][x] < pv->start ? pv->start : li->last[b][x];
            pv->share_with = -1;
            ap->value[ap->n] = x;
            li->slot[b][x] = (int32_t)ap->n++;
        }
        ib_free(ord);
        if (!v->calib && !s->no_inplace)
            request_inplace(g, p, li, b, ib_backend_residual_in_place(s->backends[b]), ap);
        int rc = ib_plan_compute(ap->pv, ap->n, IB_BACKEND_ALIGN, v->calib, &ap->res, err);
        if (rc) return rc;
    }
    return IB_OK;
}

static void fill_binding(ib_session *s, const ib_variant *v, const live_info *li, uint32_t b,
                         ib_value_id x, ib_backend_binding *bd)
{
    const ib_value *val = &v->g->values.data[x];
    memset(bd, 0, sizeof *bd);
    bd->value = x;
    bd->desc = val->desc;
    if (val->constant) {
        /* weights stay where they are: the model's (or the cache's) host copy,
         * shared by every session; a device backend imports them at compile */
        bd->constant = val->constant;
        bd->nbytes = val->constant->nbytes;
    } else {
        const ib_plan_value *pv = &v->plan[b].pv[li->slot[b][x]];
        bd->buffer = s->arena[b];
        bd->offset = pv->offset;
        bd->nbytes = pv->size;
        bd->boundary = v->calib || li->boundary[x];
    }
    if (!ib_session_range(s, val->name, &bd->range_min, &bd->range_max))
        bd->range_min = bd->range_max = 0;
}

static int build_segments(ib_session *s, ib_variant *v, const ib_partition *p, live_info *li,
                          ib_err *err)
{
    const ib_graph *g = v->g;
    uint32_t *stamp = ib_calloc(g->values.len + 1, sizeof *stamp);
    v->segs = ib_calloc(p->n_segs + 1u, sizeof *v->segs);
    if (!stamp || !v->segs) {
        ib_free(stamp);
        return ib_err_set(err, IB_ENOMEM, "out of memory building segments");
    }
    v->n_segs = p->n_segs;
    int rc = IB_OK;
    for (uint32_t k = 0; k < p->n_segs && !rc; k++) {
        const ib_segment *sg = &p->segs[k];
        ib_seg_exec *se = &v->segs[k];
        se->backend = sg->backend;
        se->nodes = ib_calloc(sg->count + 1u, sizeof *se->nodes);
        size_t nbind = 0;
        for (uint32_t i = 0; i < sg->count; i++) {
            const ib_node *n = &g->nodes.data[p->order[sg->first + i]];
            nbind += n->n_inputs + n->n_outputs;
        }
        se->bindings = ib_calloc(nbind + 1, sizeof *se->bindings);
        if (!se->nodes || !se->bindings) {
            rc = ib_err_set(err, IB_ENOMEM, "out of memory building segments");
            break;
        }
        uint32_t nb = 0;
        for (uint32_t i = 0; i < sg->count; i++) {
            ib_node_id id = p->order[sg->first + i];
            se->nodes[i] = id;
            const ib_node *n = &g->nodes.data[id];
            for (uint32_t t = 0; t < n->n_inputs + n->n_outputs; t++) {
                ib_value_id x = t < n->n_inputs ? n->inputs[t] : n->outputs[t - n->n_inputs];
                if (x == IB_VALUE_NONE || stamp[x] == k + 1) continue;
                stamp[x] = k + 1;
                fill_binding(s, v, li, sg->backend, x, &se->bindings[nb++]);
            }
        }
        se->sg.graph = g;
        se->sg.nodes = se->nodes;
        se->sg.n_nodes = sg->count;
        se->sg.bindings = se->bindings;
        se->sg.n_bindings = nb;
        se->sg.precision = v->calib ? IB_PRECISION_FP32 : s->prec[sg->backend];
    }
    ib_free(stamp);
    return rc;
}

static int build_copies(ib_session *s, ib_variant *v, live_info *li, ib_err *err)
{
    size_t staging = 0;
    for (size_t i = 0; i < li->copy_seg.len; i++) {
        uint32_t k = li->copy_seg.data[i];
        ib_value_id x = li->copy_val.data[i];
        ib_seg_exec *se = &v->segs[k];
        if (!se->copies && !(se->copies = ib_calloc(li->copy_seg.len, sizeof *se->copies)))
            return ib_err_set(err, IB_ENOMEM, "out of memory planning copies");
        uint32_t sb = (uint32_t)li->prod_b[x], db = se->backend;
        ib_copy *c = &se->copies[se->n_copies++];
        c->src_b = sb;
        c->dst_b = db;
        c->src_off = v->plan[sb].pv[li->slot[sb][x]].offset;
        c->dst_off = v->plan[db].pv[li->slot[db][x]].offset;
        c->nbytes = ib_tensor_desc_nbytes(&v->g->values.data[x].desc);
        if (c->nbytes > staging) staging = c->nbytes;
    }
    if (staging > s->staging_cap) {
        unsigned char *p = ib_realloc(s->staging, staging);
        if (!p)
            return ib_err_set(err, IB_ENOMEM, "out of memory for a %zu-byte staging buffer",
                              staging);
        s->staging = p;
        s->staging_cap = staging;
    }
    return IB_OK;
}

static int build_io(ib_session *s, ib_variant *v, const live_info *li, ib_err *err)
{
    const ib_graph *g = v->g;
    v->ins = ib_calloc(g->inputs.len + 1, sizeof *v->ins);
    v->outs = ib_calloc(g->outputs.len + 1, sizeof *v->outs);
    if (!v->ins || !v->outs) return ib_err_set(err, IB_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->inputs.len; i++) {
        ib_input_slot *in = &v->ins[i];
        in->value = g->inputs.data[i];
        in->desc = g->values.data[in->value].desc;
        in->nbytes = ib_tensor_desc_nbytes(&in->desc);
        for (uint32_t b = 0; b < s->n_backends; b++)
            if (li->slot[b][in->value] >= 0)
                in->feeds[in->n_feeds++] =
                    (ib_feed){b, v->plan[b].pv[li->slot[b][in->value]].offset};
    }
    for (size_t i = 0; i < g->outputs.len; i++) {
        ib_output_slot *o = &v->outs[i];
        ib_value_id y = g->outputs.data[i];
        const ib_value *val = &g->values.data[y];
        o->value = y;
        o->desc = val->desc;
        o->nbytes = ib_tensor_desc_nbytes(&val->desc);
        if (val->constant) {
            o->kind = IB_OUT_CONST;
            o->const_data = val->constant->data;
            continue;
        }
        size_t k = 0;
        while (k < g->inputs.len && g->inputs.data[k] != y)
            k++;
        if (k < g->inputs.len) {
            o->kind = IB_OUT_INPUT;
            o->input_index = (uint32_t)k;
            continue;
        }
        if (li->prod_b[y] < 0)
            return ib_err_set(err, IB_EFORMAT, "graph output '%s' is never produced", val->name);
        o->kind = IB_OUT_ARENA;
        o->backend = (uint32_t)li->prod_b[y];
        o->offset = v->plan[o->backend].pv[li->slot[o->backend][y]].offset;
        o->producer = NULL; /* set after the segments are compiled */
    }
    return IB_OK;
}

/* Compile (or recompile) every segment of v against the current arenas. */
static int compile_segments(ib_session *s, ib_variant *v, ib_err *err)
{
    for (uint32_t k = 0; k < v->n_segs; k++) {
        ib_seg_exec *se = &v->segs[k];
        for (uint32_t i = 0; i < se->sg.n_bindings; i++)
            if (!se->bindings[i].constant) se->bindings[i].buffer = s->arena[se->backend];
        ib_backend_graph_free(se->exec);
        se->exec = NULL;
        int rc = ib_backend_graph_compile(s->backends[se->backend], &se->sg, &se->exec, err);
        if (rc) return rc;
    }
    /* data-dependent outputs ask the producing segment for their actual dims */
    for (size_t i = 0; i < v->g->outputs.len; i++) {
        ib_output_slot *o = &v->outs[i];
        if (o->kind != IB_OUT_ARENA) continue;
        ib_node_id pn = v->g->values.data[o->value].producer;
        for (uint32_t k = 0; k < v->n_segs && !o->producer; k++)
            for (uint32_t j = 0; j < v->segs[k].sg.n_nodes; j++)
                if (v->segs[k].nodes[j] == pn) o->producer = v->segs[k].exec;
    }
    if (ib_variant_precision_use(s, v))
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    return IB_OK;
}

/* Make every arena at least the size v needs; growing one recompiles the
 * variants that already exist against the new buffer. */
static int ensure_arenas(ib_session *s, ib_variant *v, ib_err *err)
{
    bool grown = false;
    for (uint32_t b = 0; b < s->n_backends; b++) {
        size_t need = v->plan[b].res.total_bytes;
        if (need <= s->arena_cap[b]) continue;
        for (size_t i = 0; i < s->variants.len; i++)
            for (uint32_t k = 0; k < s->variants.data[i]->n_segs; k++) {
                ib_backend_graph_free(s->variants.data[i]->segs[k].exec);
                s->variants.data[i]->segs[k].exec = NULL;
            }
        ib_backend_buffer_free(s->arena[b]);
        s->arena[b] = NULL;
        s->arena_cap[b] = 0;
        int rc = ib_backend_buffer_alloc(s->backends[b], need, &s->arena[b], err);
        if (rc) return rc;
        s->arena_cap[b] = need;
        grown = true;
    }
    if (!grown) return IB_OK;
    for (size_t i = 0; i < s->variants.len; i++) {
        ib_variant *o = s->variants.data[i];
        for (size_t k = 0; k < o->g->outputs.len; k++)
            o->outs[k].producer = NULL;
        int rc = compile_segments(s, o, err);
        if (rc) return rc;
    }
    return IB_OK;
}

void ib_variant_free(ib_session *s, ib_variant *v)
{
    if (s->last_run == v)
        s->last_run = NULL;
    IB_UNUSED(s);
    if (!v) return;
    for (uint32_t k = 0; v->segs && k < v->n_segs; k++) {
        ib_backend_graph_free(v->segs[k].exec);
        ib_free(v->segs[k].nodes);
        ib_free(v->segs[k].bindings);
        ib_free(v->segs[k].copies);
    }
    ib_free(v->segs);
    for (int b = 0; b < IB_SESSION_MAX_BACKENDS; b++) {
        ib_free(v->plan[b].pv);
        ib_free(v->plan[b].value);
    }
    ib_free(v->ins);
    ib_free(v->outs);
    ib_free(v->shapes);
    ib_strbuf_deinit(&v->fallbacks);
    ib_strbuf_deinit(&v->fallback_ops);
    ib_strbuf_deinit(&v->prec_others);
    ib_graph_destroy(v->g);
    ib_free(v);
}

static int partition_variant(ib_session *s, ib_variant *v, ib_partition *p, ib_err *err)
{
    enum ib_precision prec[IB_SESSION_MAX_BACKENDS];
    for (uint32_t b = 0; b < s->n_backends; b++)
        prec[b] = v->calib ? IB_PRECISION_FP32 : s->prec[b];
    int rc = ib_partition_graph(v->g, s->backends, prec, s->n_backends, p, err);
    if (rc) return rc;
    v->n_nodes = p->n_order;
    v->n_fallback = p->n_fallback;
    if (ib_strbuf_puts(&v->fallbacks, ib_strbuf_cstr(&p->fallbacks)) ||
        ib_strbuf_puts(&v->fallback_ops, ib_strbuf_cstr(&p->fallback_ops)))
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    return IB_OK;
}

int ib_variant_build(ib_session *s, const ib_tensor_desc *shapes, bool calib, ib_variant **out,
                     ib_err *err)
{
    s->last_run = NULL; /* growing an arena moves the previous run's outputs */
    const ib_graph *src = ib_model_graph(s->model);
    ib_variant *v = ib_calloc(1, sizeof *v);
    ib_partition p;
    live_info li;
    memset(&p, 0, sizeof p);
    memset(&li, 0, sizeof li);
    if (!v) return ib_err_set(err, IB_ENOMEM, "out of memory");
    ib_strbuf_init(&v->fallbacks);
    ib_strbuf_init(&v->fallback_ops);
    ib_strbuf_init(&v->prec_others);
    v->calib = calib;
    int rc = IB_ENOMEM;
    v->shapes = ib_calloc(src->inputs.len + 1, sizeof *v->shapes);
    if (!v->shapes) {
        ib_err_set(err, rc, "out of memory");
        goto fail;
    }
    memcpy(v->shapes, shapes, src->inputs.len * sizeof *shapes);
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.input_shapes = v->shapes;
    o.no_fuse = s->opts.disable_fusion;
    /* fused attention only for a backend that runs it (asked, not guessed from a name) */
    o.fuse_mha = ib_backend_has_cap(s->backends[0], IB_BACKEND_CAP_MHA);
    o.fuse_dot_interaction = ib_backend_has_cap(s->backends[0], IB_BACKEND_CAP_DOT_INTERACTION);
    o.fuse_gather_concat = ib_backend_has_cap(s->backends[0], IB_BACKEND_CAP_GATHER_CONCAT);
    o.cache = s->cache;
    if ((rc = ib_compile(src, &o, &v->g, &v->cstats, err)) ||
        (rc = partition_variant(s, v, &p, err)))
        goto fail;
    if ((rc = live_alloc(&li, v->g->values.len, s->n_backends))) {
        ib_err_set(err, rc, "out of memory computing live ranges");
        goto fail;
    }
    if ((rc = compute_liveness(v->g, &p, s->opts.keep_inputs, &li))) {
        ib_err_set(err, rc, "a node reads a value that nothing produces");
        goto fail;
    }
    if ((rc = plan_arenas(s, v, &p, &li, err)) || (rc = build_segments(s, v, &p, &li, err)) ||
        (rc = build_copies(s, v, &li, err)) || (rc = build_io(s, v, &li, err)) ||
        (rc = ensure_arenas(s, v, err)) || (rc = compile_segments(s, v, err)))
        goto fail;
    live_free(&li);
    ib_partition_deinit(&p);
    *out = v;
    return IB_OK;
fail:
    live_free(&li);
    ib_partition_deinit(&p);
    ib_variant_free(s, v);
    return rc;
}

static bool shapes_equal(const ib_tensor_desc *a, const ib_tensor_desc *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!ib_tensor_desc_equal(&a[i], &b[i])) return false;
    return true;
}

int ib_session_variant_for(ib_session *s, const ib_tensor_desc *shapes, ib_variant **out,
                           ib_err *err)
{
    size_t n_in = ib_model_graph(s->model)->inputs.len;
    for (size_t i = 0; i < s->variants.len; i++) {
        ib_variant *v = s->variants.data[i];
        if (shapes_equal(v->shapes, shapes, n_in)) {
            v->last_used = ++s->clock;
            *out = v;
            return IB_OK;
        }
    }
    if (s->variants.len >= IB_SESSION_MAX_VARIANTS) {
        /* evict the least recently used one (never the primary) */
        size_t lru = SIZE_MAX;
        for (size_t i = 0; i < s->variants.len; i++)
            if (s->variants.data[i] != s->primary &&
                (lru == SIZE_MAX ||
                 s->variants.data[i]->last_used < s->variants.data[lru]->last_used))
                lru = i;
        if (lru != SIZE_MAX) {
            ib_variant_free(s, s->variants.data[lru]);
            s->variants.data[lru] = s->variants.data[--s->variants.len];
        }
    }
    if (IB_VEC_RESERVE(&s->variants, s->variants.len + 1))
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    ib_variant *v;
    int rc = ib_variant_build(s, shapes, false, &v, err);
    if (rc) return rc;
    v->last_used = ++s->clock;
    s->variants.data[s->variants.len++] = v;
    if (!s->primary) {
        /* the first variant (max_batch at create, else the first run's shapes)
         * is the one described and never evicted */
        s->primary = v;
        s->peak = 0;
        for (uint32_t b = 0; b < s->n_backends; b++)
            s->peak += v->plan[b].res.total_bytes;
        if ((rc = ib_session_update_describe(s, v))) return ib_err_set(err, rc, "out of memory");
    }
    *out = v;
    return IB_OK;
}
