/*
 * cpu_post.c - activation names -> oneDNN eltwise algorithms, and the fused
 * post-ops (residual sum + activation) of FusedConv/FusedMatMul.
 *
 * Fused attributes (docs/ops.md): activation = "" | Relu | LeakyRelu
 * (activation_alpha) | Clip (clip_min, clip_max) | Gelu (approximate).
 * Semantics follow the ONNX operators of the same name: LeakyRelu
 * (alpha 0.01), Elu (alpha 1), Clip (min, max), Gelu (erf form; "tanh"
 * approximation as GeluTanh), HardSwish, Softplus, Swish(alpha), Neg,
 * Reciprocal, Round (half to even), Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Abs.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_post.h"

bool cpu_act_lookup(const char *name, float alpha, float beta, dnnl_alg_kind_t *alg, float *a,
                    float *b)
{
    static const struct {
        const char *name;
        dnnl_alg_kind_t alg;
        int params; /* 0: none, 1: alpha, 2: alpha and beta as given, 3: fixed a/b */
        float a, b;
    } map[] = {
        {"Relu", dnnl_eltwise_relu, 3, 0, 0},
        {"LeakyRelu", dnnl_eltwise_relu, 1, 0, 0},
        {"Elu", dnnl_eltwise_elu, 1, 0, 0},
        {"Sigmoid", dnnl_eltwise_logistic, 0, 0, 0},
        {"Tanh", dnnl_eltwise_tanh, 0, 0, 0},
        {"Clip", dnnl_eltwise_clip_v2, 2, 0, 0},
        {"Gelu", dnnl_eltwise_gelu_erf, 0, 0, 0},
        {"GeluTanh", dnnl_eltwise_gelu_tanh, 0, 0, 0},
        {"HardSwish", dnnl_eltwise_hardswish, 0, 0, 0},
        {"Softplus", dnnl_eltwise_soft_relu, 0, 0, 0},
        {"Mish", dnnl_eltwise_mish, 0, 0, 0},
        {"Swish", dnnl_eltwise_swish, 1, 0, 0},
        {"Exp", dnnl_eltwise_exp, 0, 0, 0},
        {"Log", dnnl_eltwise_log, 0, 0, 0},
        {"Sqrt", dnnl_eltwise_sqrt, 0, 0, 0},
        {"Abs", dnnl_eltwise_abs, 0, 0, 0},
        {"Neg", dnnl_eltwise_linear, 3, -1.0f, 0},
        {"Reciprocal", dnnl_eltwise_pow, 3, 1.0f, -1.0f},
        {"Round", dnnl_eltwise_round, 0, 0, 0},
        {"Identity", dnnl_eltwise_linear, 3, 1.0f, 0},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(map); i++) {
        if (strcmp(map[i].name, name) != 0)
            continue;
        *alg = map[i].alg;
        switch (map[i].params) {
        case 1: *a = alpha; *b = 0; break;
        case 2: *a = alpha; *b = beta; break;
        case 3: *a = map[i].a; *b = map[i].b; break;
        default: *a = 0; *b = 0; break;
        }
        return true;
    }
    return false;
}

/* Default parameters of the ONNX activations that have some. */
static void act_defaults(const char *act, float *alpha, float *beta)
{
    *alpha = 0;
    *beta = 0;
    if (strcmp(act, "LeakyRelu") == 0)
        *alpha = 0.01f;
    else if (strcmp(act, "Elu") == 0 || strcmp(act, "Swish") == 0)
        *alpha = 1.0f;
    else if (strcmp(act, "Clip") == 0) {
        *alpha = -INFINITY;
        *beta = INFINITY;
    }
}

bool cpu_post_parse(const ib_node *n, cpu_post *p)
{
    memset(p, 0, sizeof *p);
    const char *act = ib_node_attr_string(n, "activation", "");
    if (!act[0])
        return true;
    if (strcmp(act, "Gelu") == 0) {
        const char *ap = ib_node_attr_string(n, "approximate", "none");
        if (strcmp(ap, "tanh") == 0)
            act = "GeluTanh";
        else if (strcmp(ap, "none") != 0)
            return false;
    }
    float alpha, beta;
    act_defaults(act, &alpha, &beta);
    /* docs/ops.md: activation_alpha (LeakyRelu), clip_min / clip_max (Clip) */
    alpha = ib_node_attr_float(n, "activation_alpha", alpha);
    if (strcmp(act, "Clip") == 0) {
        alpha = ib_node_attr_float(n, "clip_min", alpha);
        beta = ib_node_attr_float(n, "clip_max", beta);
    }
    p->has_act = cpu_act_lookup(act, alpha, beta, &p->alg, &p->alpha, &p->beta);
    return p->has_act;
}

int cpu_post_apply(cpu_exec *e, const cpu_post *p, bool sum, dnnl_primitive_attr_t attr,
                   ib_err *err)
{
    if (!sum && !p->has_act)
        return IB_OK;
    dnnl_post_ops_t po;
    int rc = cpu_check(e, err, dnnl_post_ops_create(&po), "post_ops_create");
    if (rc)
        return rc;
    dnnl_status_t st = dnnl_success;
    if (sum)
        st = dnnl_post_ops_append_sum_v2(po, p->sum_scale ? p->sum_scale : 1.0f, p->sum_dt);
    if (!st && p->has_act)
        st = dnnl_post_ops_append_eltwise(po, 1.0f, p->alg, p->alpha, p->beta);
    if (!st)
        st = dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_post_ops_destroy(po);
    return cpu_check(e, err, st, "post-ops");
}
