/*
 * registry.c - the operator registry: the list of op families, lookup by
 * (domain, op_type, opset), iteration for coverage listings, arity checks,
 * shape inference wrappers and the standalone reference-kernel runner.
 *
 * Lookup follows ONNX versioning: a node at opset N uses the definition
 * whose [since_opset, until_opset] range contains N. Domain "" and "ai.onnx"
 * are the same domain. No state: the tables are const.
 */
#include <string.h>

#include "ir/ops/ops_util.h"

static const ib_op_family *const families[] = {
    &ib_ops_unary,  &ib_ops_binary,  &ib_ops_matmul, &ib_ops_conv,   &ib_ops_pool,
    &ib_ops_norm,   &ib_ops_softmax, &ib_ops_reduce, &ib_ops_shape,  &ib_ops_layout,
    &ib_ops_gather, &ib_ops_cast,    &ib_ops_pad,    &ib_ops_resize, &ib_ops_rnn,
    &ib_ops_nms,    &ib_ops_quant,   &ib_ops_fused,  &ib_ops_index,  &ib_ops_mha,
    &ib_ops_detect, &ib_ops_accum,
};

static bool same_domain(const char *a, const char *b)
{
    if (!a || strcmp(a, "ai.onnx") == 0) a = "";
    if (!b || strcmp(b, "ai.onnx") == 0) b = "";
    return strcmp(a, b) == 0;
}

const ib_op_def *ib_op_find(const char *domain, const char *op_type, int64_t opset)
{
    if (!op_type) return NULL;
    for (size_t f = 0; f < IB_ARRAY_LEN(families); f++)
        for (size_t i = 0; i < families[f]->count; i++) {
            const ib_op_def *d = &families[f]->defs[i];
            if (strcmp(d->op_type, op_type) == 0 && same_domain(d->domain, domain) &&
                opset >= d->since_opset && (d->until_opset == 0 || opset <= d->until_opset))
                return d;
        }
    return NULL;
}

const ib_op_def *ib_op_at(size_t i)
{
    for (size_t f = 0; f < IB_ARRAY_LEN(families); f++) {
        if (i < families[f]->count) return &families[f]->defs[i];
        i -= families[f]->count;
    }
    return NULL;
}

/* The error for a node no definition covers: distinguish "no such op" from
 * "op exists but not at this opset". */
static int not_found(const ib_node *n, ib_err *err)
{
    int64_t lo = 0, hi = 0;
    bool any = false;
    for (size_t i = 0; ib_op_at(i); i++) {
        const ib_op_def *d = ib_op_at(i);
        if (strcmp(d->op_type, n->op_type) != 0 || !same_domain(d->domain, n->domain)) continue;
        if (!any || d->since_opset < lo) lo = d->since_opset;
        if (!any || hi != 0) hi = d->until_opset == 0 ? 0 : IB_MAX(hi, d->until_opset);
        any = true;
    }
    const char *dom = n->domain && n->domain[0] ? n->domain : "ai.onnx";
    if (any) {
        if (hi)
            return ib_err_set(err, IB_EUNSUPPORTED,
                              "node '%s': op %s (domain %s) is not supported at opset %lld "
                              "(supported: opsets %lld..%lld)",
                              n->name, n->op_type, dom, (long long)n->opset, (long long)lo,
                              (long long)hi);
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "node '%s': op %s (domain %s) is not supported at opset %lld "
                          "(supported from opset %lld)",
                          n->name, n->op_type, dom, (long long)n->opset, (long long)lo);
    }
    return ib_err_set(err, IB_EUNSUPPORTED,
                      "node '%s': unsupported op %s (domain %s, opset %lld): no reference "
                      "kernel",
                      n->name, n->op_type, dom, (long long)n->opset);
}

int ib_op_check_arity(const ib_op_def *def, const ib_node *n, const bool *present, uint32_t n_in,
                      ib_err *err)
{
    ib_op_ctx ctx = {NULL, n, NULL, 0};
    /* trailing absent inputs do not count (ONNX allows "" for them) */
    uint32_t last = n_in;
    while (present && last > 0 && !present[last - 1])
        last--;
    if (last < def->min_inputs || (def->max_inputs != IB_OP_VARIADIC && last > def->max_inputs)) {
        if (def->max_inputs == IB_OP_VARIADIC)
            return IB_OP_BAD(&ctx, err, "expects at least %u inputs, got %u", def->min_inputs,
                             last);
        return IB_OP_BAD(&ctx, err, "expects %u..%u inputs, got %u", def->min_inputs,
                         def->max_inputs, last);
    }
    for (uint32_t i = 0; present && i < def->min_inputs; i++)
        if (!present[i]) return IB_OP_BAD(&ctx, err, "required input %u is missing", i);
    uint32_t outs = n->n_outputs;
    if (outs < def->min_outputs || (def->max_outputs != IB_OP_VARIADIC && outs > def->max_outputs))
        return IB_OP_BAD(&ctx, err, "expects %u..%u outputs, got %u", def->min_outputs,
                         def->max_outputs, outs);
    return IB_OK;
}

int ib_op_infer(const ib_graph *g, const ib_node *n, const ib_tensor_desc *const *in,
                const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                uint32_t n_out, bool *data_dependent, ib_err *err)
{
    const ib_op_def *def = ib_op_find(n->domain, n->op_type, n->opset);
    if (!def) return not_found(n, err);
    bool present[64] = {false};
    if (n_in > IB_ARRAY_LEN(present) && def->max_inputs != IB_OP_VARIADIC)
        return ib_err_set(err, IB_EFORMAT, "node '%s' (%s): %u inputs is too many", n->name,
                          n->op_type, n_in);
    uint32_t np = IB_MIN(n_in, (uint32_t)IB_ARRAY_LEN(present));
    for (uint32_t i = 0; i < np; i++)
        present[i] = in[i] != NULL;
    int rc = ib_op_check_arity(def, n, present, np, err);
    if (rc) return rc;
    ib_op_ctx ctx = {g, n, NULL, 0};
    for (uint32_t i = 0; i < n_in; i++)
        if (in[i] && (rc = ib_op_check_desc(&ctx, err, in[i], "input"))) return rc;
    bool dd = false;
    for (uint32_t i = 0; i < n_out; i++)
        memset(&out[i], 0, sizeof out[i]);
    rc = def->infer(&ctx, in, const_in, n_in, out, n_out, &dd, err);
    if (data_dependent) *data_dependent = dd;
    return rc;
}

int ib_op_infer_tensors(const ib_graph *g, const ib_node *n, const ib_tensor *const *in,
                        uint32_t n_in, ib_tensor_desc *out, uint32_t n_out, bool *data_dependent,
                        ib_err *err)
{
    const ib_tensor_desc *descs[64];
    if (n_in > IB_ARRAY_LEN(descs))
        return ib_err_set(err, IB_EUNSUPPORTED, "node '%s' (%s): more than %zu inputs", n->name,
                          n->op_type, IB_ARRAY_LEN(descs));
    for (uint32_t i = 0; i < n_in; i++)
        descs[i] = in[i] ? &in[i]->desc : NULL;
    return ib_op_infer(g, n, descs, in, n_in, out, n_out, data_dependent, err);
}

int ib_op_run_reference(const ib_graph *g, const ib_node *n, const ib_tensor *const *in,
                        uint32_t n_in, ib_tensor *const *out, uint32_t n_out, ib_err *err)
{
    const ib_op_def *def = ib_op_find(n->domain, n->op_type, n->opset);
    if (!def) return not_found(n, err);
    ib_op_ctx ctx = {g, n, NULL, 0};
    bool present[64] = {false};
    if (n_in > IB_ARRAY_LEN(present))
        return IB_OP_UNSUP(&ctx, err, "more than %zu inputs", IB_ARRAY_LEN(present));
    for (uint32_t i = 0; i < n_in; i++)
        present[i] = in[i] != NULL;
    int rc = ib_op_check_arity(def, n, present, n_in, err);
    if (rc) return rc;
    if (def->dtype_mask && n_in > 0 && in[0] &&
        !(def->dtype_mask & (1u << (unsigned)in[0]->desc.dtype)))
        return IB_OP_UNSUP(&ctx, err, "input dtype %s is not supported by the reference kernel",
                           ib_dtype_name(in[0]->desc.dtype));
    const ib_tensor_desc *descs[64];
    ib_tensor_desc odesc[64];
    if (n_out > IB_ARRAY_LEN(odesc))
        return IB_OP_UNSUP(&ctx, err, "more than %zu outputs", IB_ARRAY_LEN(odesc));
    for (uint32_t i = 0; i < n_in; i++) {
        descs[i] = in[i] ? &in[i]->desc : NULL;
        if (in[i] && (ib_tensor_desc_numel(&in[i]->desc) < 0 ||
                      ib_tensor_desc_nbytes(&in[i]->desc) > in[i]->nbytes ||
                      (in[i]->nbytes && !in[i]->data)))
            return ib_op_fail(&ctx, err, IB_EINVAL, "input %u holds %zu bytes, its shape needs %zu",
                              i, in[i]->nbytes, ib_tensor_desc_nbytes(&in[i]->desc));
    }
    /* The kernels write what shape inference says: check the caller's
     * output buffers against it (a data-dependent op's bound suffices). */
    bool dd = false;
    memset(odesc, 0, sizeof(ib_tensor_desc) * n_out);
    rc = def->infer(&ctx, descs, in, n_in, odesc, n_out, &dd, err);
    if (rc) return rc;
    for (uint32_t i = 0; i < n_out; i++) {
        if (!out[i]) continue;
        size_t need = ib_tensor_desc_nbytes(&odesc[i]);
        bool ok = ib_tensor_desc_numel(&odesc[i]) >= 0 && out[i]->nbytes >= need &&
                  (need == 0 || out[i]->data) && out[i]->desc.dtype == odesc[i].dtype;
        if (ok && !dd) ok = ib_tensor_desc_equal(&out[i]->desc, &odesc[i]);
        if (!ok) {
            char a[160], b[160];
            return ib_op_fail(&ctx, err, IB_EINVAL,
                              "output %u buffer is %s (%zu bytes) but the node produces %s", i,
                              ib_tensor_desc_str(&out[i]->desc, a, sizeof a), out[i]->nbytes,
                              ib_tensor_desc_str(&odesc[i], b, sizeof b));
        }
        odesc[i] = out[i]->desc;
    }
    if (def->scratch_bytes) ctx.scratch_size = def->scratch_bytes(&ctx, descs, n_in, odesc, n_out);
    if (ctx.scratch_size) {
        ctx.scratch = ib_malloc(ctx.scratch_size + 64);
        if (!ctx.scratch)
            return ib_op_fail(&ctx, err, IB_ENOMEM, "out of memory for %zu bytes of scratch",
                              ctx.scratch_size);
    }
    void *raw = ctx.scratch;
    if (raw) ctx.scratch = (void *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    rc = def->kernel(&ctx, in, n_in, out, n_out, err);
    ib_free(raw);
    return rc;
}
