/*
 * load_graph.c - one ONNX GraphProto -> ib_graph: initializers, graph inputs
 * (minus initializers), node outputs, value_info, node inputs, attributes
 * (GRAPH attributes recurse into subgraphs that may read names of the
 * enclosing graphs), graph outputs, then ib_graph_toposort. Every name a node
 * reads must exist; every value has one producer; names of values are unique.
 * Unnamed nodes are called "<op>_<index>" (made unique if needed).
 * It does no shape inference and knows no op semantics.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "onnx/load.h"

int ib_onnx_lfail(ib_onnx_loader *L, int code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ib_err_set(L->err, code, "%s: %s%s", L->src, L->where, msg);
}

static int oom(ib_onnx_loader *L)
{
    return ib_onnx_lfail(L, IB_ENOMEM, "out of memory");
}

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static bool scope_has(const ib_onnx_scope *s, const char *name)
{
    for (; s; s = s->parent)
        if (ib_graph_find_value(s->g, name) != IB_VALUE_NONE) return true;
    return false;
}

/* ---- types ------------------------------------------------------------------ */

static const char *type_kind(Onnx__TypeProto__ValueCase c)
{
    switch (c) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        return "a map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        return "an optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        return "a sparse tensor";
    default:
        return "an unknown";
    }
}

/* Apply a TypeProto to value id: dtype, dims, dim_params. A missing type or
 * shape leaves shape_known false. Non-tensor types are IB_EUNSUPPORTED. */
static int set_type(ib_onnx_loader *L, ib_graph *g, ib_value_id id, const Onnx__TypeProto *tp,
                    const char *what)
{
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return IB_OK;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return ib_onnx_lfail(L, IB_EUNSUPPORTED,
                             "%s '%s' has %s type; inferbench runs tensors only", what,
                             g->values.data[id].name, type_kind(tp->value_case));
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    ib_tensor_desc d;
    memset(&d, 0, sizeof d);
    if (tt && tt->has_elem_type && tt->elem_type != 0) {
        char w[300];
        snprintf(w, sizeof w, "%s '%s'", what, g->values.data[id].name);
        int rc = ib_onnx_dtype_from_proto(tt->elem_type, NULL, w, &d.dtype, L->err);
        if (rc) return ib_onnx_lfail(L, rc, "%s", L->err ? L->err->msg : w);
    }
    const char *params[IB_MAX_DIMS] = {0};
    bool shape = tt && tt->shape;
    if (shape) {
        const Onnx__TensorShapeProto *sp = tt->shape;
        if (sp->n_dim > IB_MAX_DIMS)
            return ib_onnx_lfail(L, IB_EUNSUPPORTED,
                                 "%s '%s' has rank %zu; at most %d is supported", what,
                                 g->values.data[id].name, sp->n_dim, IB_MAX_DIMS);
        d.ndim = (int32_t)sp->n_dim;
        for (size_t i = 0; i < sp->n_dim; i++) {
            const Onnx__TensorShapeProto__Dimension *dm = sp->dim[i];
            d.dims[i] = IB_DIM_DYNAMIC;
            if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
                if (dm->dim_value < 0)
                    return ib_onnx_lfail(L, IB_EFORMAT, "%s '%s': dim %zu is %lld (negative)", what,
                                         g->values.data[id].name, i, (long long)dm->dim_value);
                d.dims[i] = dm->dim_value;
            } else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                       dm->dim_param && dm->dim_param[0]) {
                if (!(params[i] = ib_arena_strdup(&g->arena, dm->dim_param))) return oom(L);
            }
        }
    }
    ib_value *v = &g->values.data[id];
    v->desc = d;
    memcpy(v->dim_param, params, sizeof params);
    v->shape_known = shape && d.dtype != IB_DTYPE_UNDEFINED;
    return IB_OK;
}

/* ---- attributes --------------------------------------------------------------- */

static const char *attr_type_name(int t)
{
    static const char *const names[] = {
        "UNDEFINED",      "FLOAT",      "INT",        "STRING",  "TENSOR", "GRAPH",
        "FLOATS",         "INTS",       "STRINGS",    "TENSORS", "GRAPHS", "SPARSE_TENSOR",
        "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
    return t >= 0 && (size_t)t < IB_ARRAY_LEN(names) ? names[t] : "unknown";
}

/* IR version 1 had no AttributeProto.type: infer it from the field in use. */
static int attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type) return (int)a->type;
    if (a->n_floats) return IB_ATTR_FLOATS;
    if (a->n_ints) return IB_ATTR_INTS;
    if (a->n_strings) return IB_ATTR_STRINGS;
    if (a->t) return IB_ATTR_TENSOR;
    if (a->g) return IB_ATTR_GRAPH;
    if (a->has_s) return IB_ATTR_STRING;
    if (a->has_f) return IB_ATTR_FLOAT;
    if (a->has_i) return IB_ATTR_INT;
    return IB_ATTR_UNDEFINED;
}

static int load_subgraph(ib_onnx_loader *L, ib_graph *g, const ib_onnx_scope *sc,
                         Onnx__GraphProto *gp, const char *node, const char *attr,
                         const ib_graph **out)
{
    ib_graph *sub;
    if (ib_graph_create(&sub)) return oom(L);
    if (IB_VEC_PUSH(&g->subgraphs, sub)) {
        ib_graph_destroy(sub);
        return oom(L);
    }
    sub->opset = g->opset;
    sub->ir_version = g->ir_version;
    size_t saved = L->where_len;
    int w = snprintf(L->where + saved, sizeof L->where - saved,
                     "subgraph '%s' of node '%s': ", attr, node);
    if (w > 0) L->where_len = IB_MIN(sizeof L->where - 1, saved + (size_t)w);
    ib_onnx_scope inner = {g, sc};
    int rc = ib_onnx_load_graph_proto(L, gp, &inner, sub);
    L->where_len = saved;
    L->where[saved] = '\0';
    *out = sub;
    return rc;
}

static int parse_attr(ib_onnx_loader *L, ib_graph *g, const ib_onnx_scope *sc, const char *node,
                      const char *op, Onnx__AttributeProto *a, ib_attr *out)
{
    memset(out, 0, sizeof *out);
    if (!a->name || !a->name[0])
        return ib_onnx_lfail(L, IB_EFORMAT, "node '%s' (%s): an attribute has no name", node, op);
    out->name = a->name;
    if (a->ref_attr_name && a->ref_attr_name[0])
        return ib_onnx_lfail(L, IB_EUNSUPPORTED,
                             "node '%s' (%s): attribute '%s' refers to a function attribute "
                             "('%s'), valid only inside functions",
                             node, op, a->name, a->ref_attr_name);
    int t = attr_type(a);
    out->type = (enum ib_attr_type)t;
    switch (t) {
    case IB_ATTR_FLOAT:
        out->f = a->f;
        return IB_OK;
    case IB_ATTR_INT:
        out->i = a->i;
        return IB_OK;
    case IB_ATTR_STRING:
        out->s = a->s.len ? (const char *)a->s.data : "";
        out->s_len = a->s.len;
        return IB_OK;
    case IB_ATTR_FLOATS:
        out->floats = a->floats;
        out->count = a->n_floats;
        return IB_OK;
    case IB_ATTR_INTS:
        out->ints = a->ints;
        out->count = a->n_ints;
        return IB_OK;
    case IB_ATTR_STRINGS: {
        char **ss = ib_arena_alloc(&L->tmp, (a->n_strings ? a->n_strings : 1) * sizeof(char *));
        if (!ss) return oom(L);
        for (size_t i = 0; i < a->n_strings; i++)
            if (!(ss[i] = ib_arena_strndup(&L->tmp, (const char *)a->strings[i].data,
                                           a->strings[i].len)))
                return oom(L);
        out->strings = (const char *const *)ss;
        out->count = a->n_strings;
        return IB_OK;
    }
    case IB_ATTR_TENSOR: {
        if (!a->t)
            return ib_onnx_lfail(L, IB_EFORMAT,
                                 "node '%s' (%s): attribute '%s' has type TENSOR but no tensor",
                                 node, op, a->name);
        char what[1024];
        snprintf(what, sizeof what, "%snode '%s' (%s) attribute '%s'", L->where, node, op, a->name);
        ib_tensor *ten;
        int rc = ib_onnx_tensor_from_proto(a->t, L->src, what, &L->ext, L->opts->max_bytes, &ten,
                                           L->err);
        if (rc) return rc;
        if (IB_VEC_PUSH(&g->tensors, ten)) {
            ib_tensor_free(ten);
            return oom(L);
        }
        out->t = ten;
        return IB_OK;
    }
    case IB_ATTR_GRAPH:
        if (!a->g)
            return ib_onnx_lfail(L, IB_EFORMAT,
                                 "node '%s' (%s): attribute '%s' has type GRAPH but no graph", node,
                                 op, a->name);
        return load_subgraph(L, g, sc, a->g, node, a->name, &out->g);
    case IB_ATTR_UNDEFINED:
        return ib_onnx_lfail(L, IB_EFORMAT, "node '%s' (%s): attribute '%s' has no type or value",
                             node, op, a->name);
    default:
        return ib_onnx_lfail(L, IB_EUNSUPPORTED,
                             "node '%s' (%s): attribute '%s' has type %s (%d), which inferbench "
                             "does not support",
                             node, op, a->name, attr_type_name(t), t);
    }
}

/* ---- values ------------------------------------------------------------------- */

static int load_initializers(ib_onnx_loader *L, Onnx__GraphProto *gp, ib_graph *g)
{
    if (gp->n_sparse_initializer)
        return ib_onnx_lfail(L, IB_EUNSUPPORTED,
                             "graph has %zu sparse initializers, which inferbench does not support",
                             gp->n_sparse_initializer);
    for (size_t i = 0; i < gp->n_initializer; i++) {
        Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !tp->name[0])
            return ib_onnx_lfail(L, IB_EFORMAT, "initializer %zu has no name", i);
        if (ib_graph_find_value(g, tp->name) != IB_VALUE_NONE)
            return ib_onnx_lfail(L, IB_EFORMAT, "initializer '%s' is defined twice", tp->name);
        char what[1024];
        snprintf(what, sizeof what, "%sinitializer '%s'", L->where, tp->name);
        ib_tensor *t;
        int rc =
            ib_onnx_tensor_from_proto(tp, L->src, what, &L->ext, L->opts->max_bytes, &t, L->err);
        if (rc) return rc;
        ib_value_id id = ib_graph_add_value(g, tp->name, &t->desc);
        if (id == IB_VALUE_NONE || ib_graph_set_constant(g, id, t)) {
            ib_tensor_free(t);
            return oom(L);
        }
    }
    return IB_OK;
}

static int load_inputs(ib_onnx_loader *L, Onnx__GraphProto *gp, ib_graph *g)
{
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !vi->name[0])
            return ib_onnx_lfail(L, IB_EFORMAT, "graph input %zu has no name", i);
        ib_value_id id = ib_graph_find_value(g, vi->name);
        if (id != IB_VALUE_NONE) {
            if (g->values.data[id].flags & IB_VALUE_INPUT)
                return ib_onnx_lfail(L, IB_EFORMAT, "graph input '%s' is listed twice", vi->name);
            continue; /* an initializer listed as input (IR < 4): a constant */
        }
        if ((id = ib_graph_add_value(g, vi->name, NULL)) == IB_VALUE_NONE) return oom(L);
        int rc = set_type(L, g, id, vi->type, "graph input");
        if (rc) return rc;
        g->values.data[id].flags |= IB_VALUE_INPUT;
        if (IB_VEC_PUSH(&g->inputs, id)) return oom(L);
    }
    return IB_OK;
}

/* Final node names: "<op>_<index>" for unnamed nodes, "_<k>" appended on clashes. */
static int name_nodes(ib_onnx_loader *L, const Onnx__GraphProto *gp, const char **names)
{
    ib_strmap seen;
    ib_strmap_init(&seen);
    int rc = IB_OK;
    for (size_t i = 0; i < gp->n_node && rc == IB_OK; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        char buf[300];
        const char *base = np->name;
        if (!base || !base[0]) {
            snprintf(buf, sizeof buf, "%s_%zu", str_or(np->op_type, "node"), i);
            base = buf;
        }
        char *name = ib_arena_strdup(&L->tmp, base);
        for (unsigned k = 1; name && ib_strmap_get(&seen, name, NULL); k++) {
            char b2[320];
            snprintf(b2, sizeof b2, "%s_%u", base, k);
            name = ib_arena_strdup(&L->tmp, b2);
        }
        if (!name || ib_strmap_put(&seen, name, (int64_t)i))
            rc = oom(L);
        else if (np->name && np->name[0] && strcmp(name, np->name) != 0)
            IB_LOG_DEBUG("%s: two nodes are named '%s'; the second is now '%s'", L->src, np->name,
                         name);
        names[i] = name;
    }
    ib_strmap_deinit(&seen);
    return rc;
}

static int load_node_outputs(ib_onnx_loader *L, const Onnx__GraphProto *gp, ib_graph *g,
                             const char **names, ib_value_id **outs)
{
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (!np->op_type || !np->op_type[0])
            return ib_onnx_lfail(L, IB_EFORMAT, "node %zu ('%s') has no op_type", i, names[i]);
        outs[i] = ib_arena_alloc(&L->tmp, (np->n_output ? np->n_output : 1) * sizeof **outs);
        if (!outs[i]) return oom(L);
        for (size_t k = 0; k < np->n_output; k++) {
            const char *o = np->output[k];
            if (!o || !o[0]) {
                outs[i][k] = IB_VALUE_NONE; /* absent optional output */
                continue;
            }
            ib_value_id id = ib_graph_find_value(g, o);
            if (id != IB_VALUE_NONE) {
                const ib_value *v = &g->values.data[id];
                if (v->flags & (IB_VALUE_INPUT | IB_VALUE_CONST))
                    return ib_onnx_lfail(L, IB_EFORMAT,
                                         "node '%s' (%s) writes '%s', which is also a graph %s",
                                         names[i], np->op_type, o,
                                         v->flags & IB_VALUE_CONST ? "initializer" : "input");
                return ib_onnx_lfail(L, IB_EFORMAT,
                                     "value '%s' is produced by node '%s' and again by node '%s' "
                                     "(%s)",
                                     o, names[v->producer], names[i], np->op_type);
            }
            if ((id = ib_graph_add_value(g, o, NULL)) == IB_VALUE_NONE) return oom(L);
            g->values.data[id].producer = (ib_node_id)i;
            outs[i][k] = id;
        }
    }
    return IB_OK;
}

static int load_value_info(ib_onnx_loader *L, const Onnx__GraphProto *gp, ib_graph *g)
{
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        if (!vi->name || !vi->name[0])
            return ib_onnx_lfail(L, IB_EFORMAT, "value_info %zu has no name", i);
        /* last, so that a name known only from value_info cannot satisfy a
         * node input or a graph output */
        const Onnx__TypeProto *tp = vi->type;
        if (tp && tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
            continue; /* a hint about a non-tensor value: the op will be rejected later */
        ib_value_id id = ib_graph_find_value(g, vi->name);
        if (id == IB_VALUE_NONE && (id = ib_graph_add_value(g, vi->name, NULL)) == IB_VALUE_NONE)
            return oom(L);
        const ib_value *v = &g->values.data[id];
        if ((v->flags & (IB_VALUE_CONST | IB_VALUE_INPUT)) || v->desc.dtype != IB_DTYPE_UNDEFINED)
            continue;
        int rc = set_type(L, g, id, tp, "value_info");
        if (rc) return rc;
    }
    return IB_OK;
}

/* A name read inside the graph: local, else from an enclosing graph (a local
 * placeholder value without producer is made for it), else an error. */
static int resolve(ib_onnx_loader *L, ib_graph *g, const ib_onnx_scope *sc, const char *name,
                   ib_value_id *out)
{
    ib_value_id id = ib_graph_find_value(g, name);
    if (id == IB_VALUE_NONE && scope_has(sc, name) &&
        (id = ib_graph_add_value(g, name, NULL)) == IB_VALUE_NONE)
        return oom(L);
    *out = id;
    return IB_OK;
}

static int load_nodes(ib_onnx_loader *L, Onnx__GraphProto *gp, ib_graph *g, const ib_onnx_scope *sc,
                      const char **names, ib_value_id **outs)
{
    for (size_t i = 0; i < gp->n_node; i++) {
        Onnx__NodeProto *np = gp->node[i];
        const char *dom = np->domain && strcmp(np->domain, "ai.onnx") != 0 ? np->domain : "";
        int64_t opset = ib_onnx_domain_opset(L, dom);
        if (opset < 0)
            return ib_onnx_lfail(L, IB_EFORMAT,
                                 "node '%s' (%s) is in domain '%s', which the model does not "
                                 "import (opset_import)",
                                 names[i], np->op_type, dom[0] ? dom : "ai.onnx");
        for (size_t f = 0; L->model && f < L->model->n_functions; f++) {
            const Onnx__FunctionProto *fn = L->model->functions[f];
            if (fn->name && strcmp(fn->name, np->op_type) == 0 &&
                strcmp(str_or(fn->domain, ""), dom) == 0)
                return ib_onnx_lfail(L, IB_EUNSUPPORTED,
                                     "node '%s' calls the model-local function '%s', which "
                                     "inferbench does not inline",
                                     names[i], np->op_type);
        }
        ib_value_id *ins = ib_arena_alloc(&L->tmp, (np->n_input ? np->n_input : 1) * sizeof *ins);
        ib_attr *attrs =
            ib_arena_alloc(&L->tmp, (np->n_attribute ? np->n_attribute : 1) * sizeof *attrs);
        if (!ins || !attrs) return oom(L);
        for (size_t k = 0; k < np->n_input; k++) {
            const char *in = np->input[k];
            ins[k] = IB_VALUE_NONE;
            if (!in || !in[0]) continue; /* absent optional input */
            int rc = resolve(L, g, sc, in, &ins[k]);
            if (rc) return rc;
            if (ins[k] == IB_VALUE_NONE)
                return ib_onnx_lfail(L, IB_EFORMAT,
                                     "node '%s' (%s): input %zu '%s' is not a graph input, an "
                                     "initializer or the output of any node",
                                     names[i], np->op_type, k, in);
        }
        for (size_t k = 0; k < np->n_attribute; k++) {
            int rc = parse_attr(L, g, sc, names[i], np->op_type, np->attribute[k], &attrs[k]);
            if (rc) return rc;
            for (size_t j = 0; j < k; j++)
                if (strcmp(attrs[j].name, attrs[k].name) == 0)
                    return ib_onnx_lfail(L, IB_EFORMAT,
                                         "node '%s' (%s): attribute '%s' is set twice", names[i],
                                         np->op_type, attrs[k].name);
        }
        if (np->n_input > UINT32_MAX || np->n_output > UINT32_MAX || np->n_attribute > UINT32_MAX)
            return ib_onnx_lfail(L, IB_EFORMAT, "node '%s': too many inputs", names[i]);
        ib_node_id id =
            ib_graph_add_node(g, np->op_type, dom, names[i], ins, (uint32_t)np->n_input, outs[i],
                              (uint32_t)np->n_output, attrs, (uint32_t)np->n_attribute);
        if (id == IB_NODE_NONE) return oom(L);
        g->nodes.data[id].opset = opset;
    }
    return IB_OK;
}

static int load_outputs(ib_onnx_loader *L, const Onnx__GraphProto *gp, ib_graph *g,
                        const ib_onnx_scope *sc)
{
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        if (!vi->name || !vi->name[0])
            return ib_onnx_lfail(L, IB_EFORMAT, "graph output %zu has no name", i);
        ib_value_id id;
        int rc = resolve(L, g, sc, vi->name, &id);
        if (rc) return rc;
        if (id == IB_VALUE_NONE)
            return ib_onnx_lfail(L, IB_EFORMAT,
                                 "graph output '%s' is not produced by any node, nor a graph "
                                 "input or initializer",
                                 vi->name);
        if (g->values.data[id].flags & IB_VALUE_OUTPUT)
            return ib_onnx_lfail(L, IB_EFORMAT, "graph output '%s' is listed twice", vi->name);
        if (g->values.data[id].desc.dtype == IB_DTYPE_UNDEFINED &&
            !(g->values.data[id].flags & IB_VALUE_CONST)) {
            if ((rc = set_type(L, g, id, vi->type, "graph output"))) return rc;
        } else if (vi->type && vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                   vi->type->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET) {
            return set_type(L, g, id, vi->type, "graph output"); /* the unsupported error */
        }
        g->values.data[id].flags |= IB_VALUE_OUTPUT;
        if (IB_VEC_PUSH(&g->outputs, id)) return oom(L);
    }
    return IB_OK;
}

int ib_onnx_load_graph_proto(ib_onnx_loader *L, Onnx__GraphProto *gp, const ib_onnx_scope *parent,
                             ib_graph *g)
{
    if (gp->name && !(g->graph_name = ib_arena_strdup(&g->arena, gp->name))) return oom(L);
    if (gp->doc_string && !g->doc && !(g->doc = ib_arena_strdup(&g->arena, gp->doc_string)))
        return oom(L);
    size_t n = gp->n_node ? gp->n_node : 1;
    const char **names = ib_arena_alloc(&L->tmp, n * sizeof *names);
    ib_value_id **outs = ib_arena_alloc(&L->tmp, n * sizeof *outs);
    if (!names || !outs) return oom(L);
    int rc;
    if ((rc = load_initializers(L, gp, g)) || (rc = load_inputs(L, gp, g)) ||
        (rc = name_nodes(L, gp, names)) || (rc = load_node_outputs(L, gp, g, names, outs)) ||
        (rc = load_nodes(L, gp, g, parent, names, outs)) || (rc = load_outputs(L, gp, g, parent)) ||
        (rc = load_value_info(L, gp, g)))
        return rc;
    ib_err e2;
    if ((rc = ib_graph_toposort(g, &e2))) return ib_onnx_lfail(L, rc, "%s", e2.msg);
    return IB_OK;
}
