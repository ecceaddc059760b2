/*
 * session_precision.c - how much of a session's math runs at its precision (issues 24 and 25,
 * eleventh session).
 *
 * A session at int8 or fp8 (or bf16, fp16) does not compute every product at that precision:
 * a backend keeps a product wider when it has no kernel for it (the cpu's LSTMs at int8, a
 * convolution cuDNN has no fp8 engine for, a matmul cuBLASLt only plans in float32), and the
 * reference kernels compute in float32. Until now nothing said so: an RNN-T run at int8 was
 * labelled int8 while its encoder's five LSTMs ran at fp32. Each backend now reports the
 * precision of every product node it planned (backend ABI 10, precision_read); this file adds
 * them up per compiled variant: the products (Conv, ConvTranspose, MatMul, Gemm, LSTM, GRU,
 * RNN and the fused FusedConv, FusedMatMul with a constant weight: the nodes a precision is
 * for; attention's products of two activations are not counted), how many compute at the
 * session's precision, and the rest by op type and precision ("LSTM x5 at fp32", named as the
 * fallback list names ops: "inferbench.FusedConv x2 at fp16").
 */
#include <string.h>

#include "runtime/session_impl.h"

static bool is_product(const ib_graph *g, const ib_node *n)
{
    static const char *const onnx[] = {"Conv", "ConvTranspose", "MatMul", "Gemm",
                                       "LSTM", "GRU",           "RNN"};
    static const char *const ours[] = {"FusedConv", "FusedMatMul"};
    bool op = false;
    if (!n->domain[0] || !strcmp(n->domain, "ai.onnx"))
        for (size_t i = 0; i < IB_ARRAY_LEN(onnx) && !op; i++)
            op = !strcmp(n->op_type, onnx[i]);
    else if (!strcmp(n->domain, "inferbench"))
        for (size_t i = 0; i < IB_ARRAY_LEN(ours) && !op; i++)
            op = !strcmp(n->op_type, ours[i]);
    if (!op || n->n_inputs < 2 || n->inputs[1] == IB_VALUE_NONE)
        return false;
    return g->values.data[n->inputs[1]].constant != NULL; /* the weights */
}

typedef struct prec_acc {
    const ib_graph *g;
    int *np; /* per node: the reported precision, -1 when none */
} prec_acc;

static void on_node(void *user, const ib_node *node, enum ib_precision p)
{
    prec_acc *a = user;
    const ib_node *base = a->g->nodes.data;
    if (node < base || node >= base + a->g->nodes.len)
        return; /* not a node of this variant's graph */
    ib_precision_widen(&a->np[node - base], p);
}

typedef struct tally {
    const ib_node *n; /* the first of its op type */
    enum ib_precision p;
    uint32_t count;
} tally;

int ib_variant_precision_use(ib_session *s, ib_variant *v)
{
    const ib_graph *g = v->g;
    v->n_products = v->n_at_precision = 0;
    ib_strbuf_reset(&v->prec_others);
    if (!g->nodes.len)
        return IB_OK;
    prec_acc a = {g, ib_malloc(g->nodes.len * sizeof(int))};
    tally *t = ib_calloc(g->nodes.len, sizeof *t);
    if (!a.np || !t) {
        ib_free(a.np);
        ib_free(t);
        return IB_ENOMEM;
    }
    for (size_t i = 0; i < g->nodes.len; i++)
        a.np[i] = -1;
    for (uint32_t k = 0; k < v->n_segs; k++)
        (void)ib_backend_graph_precisions(v->segs[k].exec, on_node, &a);
    size_t nt = 0;
    for (size_t i = 0; i < g->nodes.len; i++) {
        const ib_node *n = &g->nodes.data[i];
        if (n->dead || !is_product(g, n))
            continue;
        enum ib_precision p = a.np[i] < 0 ? IB_PRECISION_FP32 : (enum ib_precision)a.np[i];
        v->n_products++;
        if (p == s->prec[0]) {
            v->n_at_precision++;
            continue;
        }
        size_t j = 0;
        while (j < nt && !(t[j].p == p && !strcmp(t[j].n->op_type, n->op_type) &&
                           !strcmp(t[j].n->domain, n->domain)))
            j++;
        if (j == nt)
            t[nt++] = (tally){n, p, 0};
        t[j].count++;
    }
    for (size_t j = 0; j < nt; j++)
        ib_strbuf_printf(&v->prec_others, "%s%s%s%s x%u at %s", j ? ", " : "", t[j].n->domain,
                         t[j].n->domain[0] ? "." : "", t[j].n->op_type, t[j].count,
                         ib_precision_name(t[j].p));
    ib_free(a.np);
    ib_free(t);
    return v->prec_others.oom ? IB_ENOMEM : IB_OK;
}

void ib_session_precision_use_get(const ib_session *s, ib_session_precision_use *out)
{
    memset(out, 0, sizeof *out);
    out->others = "";
    if (!s)
        return;
    out->precision = s->prec[0];
    const ib_variant *worst = NULL; /* the variant with the most products not at precision */
    for (size_t i = 0; i < s->variants.len; i++) {
        const ib_variant *v = s->variants.data[i];
        if (v->calib)
            continue; /* calibration runs at fp32 by design */
        if (!worst || v->n_products - v->n_at_precision >
                          worst->n_products - worst->n_at_precision)
            worst = v;
    }
    if (!worst)
        return;
    out->products = worst->n_products;
    out->at_precision = worst->n_at_precision;
    out->others = ib_strbuf_cstr(&worst->prec_others);
}
