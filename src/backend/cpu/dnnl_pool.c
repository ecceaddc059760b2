/*
 * dnnl_pool.c - MaxPool, AveragePool (count_include_pad, ceil_mode,
 * dilations, auto_pad), GlobalAveragePool and GlobalMaxPool on oneDNN
 * pooling_v2, 1D to 3D.
 *
 * The source stays in whatever layout its producer chose (blocked formats
 * pass through), the destination takes the same format. ceil_mode windows
 * that run past the right pad become extra right padding, which oneDNN
 * excludes from averages exactly like count_include_pad=0; with
 * count_include_pad=1 that case is refused (the reference kernel takes it).
 */
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

typedef struct pool_geom {
    int nsp;
    dnnl_alg_kind_t alg;
    dnnl_dims_t k, s, d, pl, pr;
} pool_geom;

static bool pool_geometry(const ib_node *n, const ib_tensor_desc *x, const ib_tensor_desc *y,
                          pool_geom *pg)
{
    memset(pg, 0, sizeof *pg);
    if (x->ndim < 3 || x->ndim > 5 || y->ndim != x->ndim || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1])
        return false;
    pg->nsp = x->ndim - 2;
    bool global = strncmp(n->op_type, "Global", 6) == 0;
    bool maxp = strstr(n->op_type, "Max") != NULL;
    bool incl = ib_node_attr_int(n, "count_include_pad", 0) != 0;
    pg->alg = maxp ? dnnl_pooling_max
                   : incl ? dnnl_pooling_avg_include_padding : dnnl_pooling_avg_exclude_padding;
    const int64_t *ks = NULL, *st = NULL, *pd = NULL, *dl = NULL;
    size_t nks = 0, nst = 0, npd = 0, ndl = 0;
    if (!global) {
        nks = ib_node_attr_ints(n, "kernel_shape", &ks);
        nst = ib_node_attr_ints(n, "strides", &st);
        npd = ib_node_attr_ints(n, "pads", &pd);
        ndl = ib_node_attr_ints(n, "dilations", &dl);
        if (nks != (size_t)pg->nsp || (nst && nst != nks) || (npd && npd != 2 * nks) ||
            (ndl && ndl != nks))
            return false;
    }
    const char *ap = ib_node_attr_string(n, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    if (!global && !same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
        return false;
    for (int i = 0; i < pg->nsp; i++) {
        int64_t in = x->dims[2 + i], out = y->dims[2 + i];
        int64_t k = global ? in : ks[i], s = st ? st[i] : 1, d = dl ? dl[i] : 1;
        int64_t l = pd ? pd[i] : 0, r = pd ? pd[pg->nsp + i] : 0;
        if (k < 1 || s < 1 || d < 1)
            return false;
        int64_t ke = (k - 1) * d + 1;
        if (same) {
            int64_t total = (out - 1) * s + ke - in;
            total = total < 0 ? 0 : total;
            l = strcmp(ap, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
            r = total - l;
        } else if (strcmp(ap, "VALID") == 0) {
            l = r = 0;
        }
        if (l < 0 || r < 0 || l >= ke || out < 1)
            return false;
        if ((in + l + r - ke) / s + 1 != out || in + l + r < ke) {
            int64_t need = (out - 1) * s + ke - in - l; /* ceil_mode: extend the right pad */
            if (need < r || (pg->alg == dnnl_pooling_avg_include_padding && need > r))
                return false;
            r = need;
        }
        /* every window must see at least one input element */
        if ((out - 1) * s - l >= in)
            return false;
        pg->k[i] = k;
        pg->s[i] = s;
        pg->d[i] = d - 1;
        pg->pl[i] = l;
        pg->pr[i] = r;
    }
    return true;
}

static bool pool_supports(const cpu_ctx *c, const ib_graph *g, const ib_node *n,
                          const ib_tensor_desc *const *in, enum ib_precision p)
{
    IB_UNUSED(c);
    IB_UNUSED(p);
    if (n->n_inputs != 1 || !in[0] || in[0]->dtype != IB_DTYPE_FLOAT32)
        return false;
    /* MaxPool's Indices output is not produced by oneDNN inference pooling */
    if (n->n_outputs > 1 && n->outputs[1] != IB_VALUE_NONE)
        return false;
    const ib_value *y = ib_node_output(g, n, 0);
    pool_geom pg;
    return y && y->desc.dtype == IB_DTYPE_FLOAT32 && pool_geometry(n, in[0], &y->desc, &pg);
}

static int pool_compile(cpu_exec *e, const ib_node *n, ib_err *err)
{
    cpu_val *x = cpu_in(e, n, 0), *y = cpu_out(e, n, 0);
    pool_geom pg;
    if (!pool_geometry(n, &x->desc, &y->desc, &pg))
        return cpu_fail(e, err, IB_EFORMAT, "inconsistent kernel/strides/pads for the shapes");
    if (!strcmp(n->op_type, "GlobalAveragePool")) { /* cpu_kernels_gap.c */
        int rc = cpu_gap_compile(e, x, y, err);
        if (rc != IB_EUNSUPPORTED)
            return rc;
    }
    /* keep the producer's layout, but compute in the session's activation type; an
     * int8 input to MaxPool stays int8 (only int8 convolutions read the output then:
     * cpu_exec.c count_uses) */
    bool keep_q = cpu_held_q8(x) && pg.alg == dnnl_pooling_max;
    dnnl_memory_desc_t smd = x->md, dmd;
    int rc;
    if (!keep_q && (x->cdata || smd.data_type != cpu_keep_dt(x))) {
        if (cpu_md_plain(&smd, x->desc.ndim, x->desc.dims, cpu_keep_dt(x)))
            return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the input");
    }
    if (cpu_md_any(&dmd, y->desc.ndim, y->desc.dims, smd.data_type))
        return cpu_fail(e, err, IB_EUNSUPPORTED, "cannot describe the output");
    dnnl_pooling_v2_desc_t pdsc;
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, pg.alg,
                                                         &smd, &dmd, pg.s, pg.k, pg.d, pg.pl,
                                                         pg.pr);
    if (!st)
        st = cpu_pd_create(e, &pd, &pdsc, NULL);
    if ((rc = cpu_check(e, err, st, "pooling")))
        return rc;
    dmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_t ms, md;
    if ((rc = cpu_use(e, x, &smd, keep_q ? x->qscale : 1.0f, &ms, err)) ||
        (rc = cpu_def(e, y, &dmd, &md, err))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    if (keep_q)
        y->qscale = x->qscale;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_DST, md}};
    return cpu_add_prim(e, pd, args, 2, err);
}

const cpu_op cpu_ops_pool[] = {
    {"", "MaxPool", pool_supports, pool_compile},
    {"", "AveragePool", pool_supports, pool_compile},
    {"", "GlobalAveragePool", pool_supports, pool_compile},
    {"", "GlobalMaxPool", pool_supports, pool_compile},
    {NULL, NULL, NULL, NULL},
};
