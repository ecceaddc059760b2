/*
 * cpu_post.h - fused post-operations of inferbench.FusedConv and
 * inferbench.FusedMatMul (docs/ops.md): an optional residual sum and an
 * optional activation, mapped onto oneDNN post-ops (sum, then eltwise), and
 * the activation names shared with the standalone eltwise ops.
 */
#ifndef IB_BACKEND_CPU_POST_H
#define IB_BACKEND_CPU_POST_H

#include "backend/cpu/cpu_internal.h"

typedef struct cpu_post {
    bool has_act;
    dnnl_alg_kind_t alg; /* oneDNN eltwise algorithm of the activation */
    float alpha, beta;   /* its parameters in oneDNN's convention */
    /* int8 residual held in dst in its own quantisation: dst += sum_scale * dst_prev,
     * dst_prev read as sum_dt (set by the op; 0 / undef = 1 and dst's type) */
    float sum_scale;
    dnnl_data_type_t sum_dt;
} cpu_post;

/* Map an ONNX-style activation name with its parameters to oneDNN's eltwise
 * algorithm; false for names oneDNN has not. */
bool cpu_act_lookup(const char *name, float alpha, float beta, dnnl_alg_kind_t *alg, float *a,
                    float *b);
/* Read a fused node's activation attributes; false when unsupported. */
bool cpu_post_parse(const ib_node *n, cpu_post *p);
/* Append the post-ops to attr: sum first when `sum` (the residual is copied
 * into dst before the primitive runs), then the activation. */
int cpu_post_apply(cpu_exec *e, const cpu_post *p, bool sum, dnnl_primitive_attr_t attr,
                   ib_err *err);

#endif
