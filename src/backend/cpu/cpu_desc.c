/*
 * cpu_desc.c - oneDNN data types and memory descriptors for the CPU backend's values (plain,
 * tagged, "any", channels-last), and the error helpers every step builder uses (cpu_fail,
 * cpu_check). No state of its own.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"

/* ---- dtypes and descriptors ---------------------------------------------- */

dnnl_data_type_t cpu_dt(enum ib_dtype t)
{
    switch (t) {
    case IB_DTYPE_FLOAT32: return dnnl_f32;
    case IB_DTYPE_BFLOAT16: return dnnl_bf16;
    case IB_DTYPE_INT8: return dnnl_s8;
    case IB_DTYPE_UINT8: return dnnl_u8;
    case IB_DTYPE_INT32: return dnnl_s32;
    default: return dnnl_data_type_undef;
    }
}

dnnl_data_type_t cpu_act_dt(const cpu_exec *e)
{
    return e->precision == IB_PRECISION_BF16 ? dnnl_bf16 : dnnl_f32;
}

dnnl_data_type_t cpu_keep_dt(const cpu_val *v)
{
    return !v->cdata && v->ready && v->md.data_type == dnnl_bf16 ? dnnl_bf16 : dnnl_f32;
}

int cpu_md_plain(dnnl_memory_desc_t *md, int ndim, const int64_t *dims, dnnl_data_type_t dt)
{
    dnnl_dims_t d;
    int nd = ndim > 0 ? ndim : 1;
    if (nd > DNNL_MAX_NDIMS)
        return IB_EUNSUPPORTED;
    for (int i = 0; i < nd; i++)
        d[i] = ndim > 0 ? dims[i] : 1;
    return dnnl_memory_desc_init_by_strides(md, nd, d, dt, NULL) == dnnl_success ? IB_OK
                                                                                 : IB_EUNSUPPORTED;
}

int cpu_md_tag(dnnl_memory_desc_t *md, int ndim, const int64_t *dims, dnnl_data_type_t dt,
               dnnl_format_tag_t tag)
{
    dnnl_dims_t d;
    int nd = ndim > 0 ? ndim : 1;
    if (nd > DNNL_MAX_NDIMS)
        return IB_EUNSUPPORTED;
    for (int i = 0; i < nd; i++)
        d[i] = ndim > 0 ? dims[i] : 1;
    return dnnl_memory_desc_init_by_tag(md, nd, d, dt, tag) == dnnl_success ? IB_OK
                                                                            : IB_EUNSUPPORTED;
}

int cpu_md_any(dnnl_memory_desc_t *md, int ndim, const int64_t *dims, dnnl_data_type_t dt)
{
    return cpu_md_tag(md, ndim, dims, dt, dnnl_format_tag_any);
}

dnnl_format_tag_t cpu_channels_last_tag(int ndim)
{
    return ndim == 3 ? dnnl_acb : ndim == 4 ? dnnl_acdb : ndim == 5 ? dnnl_acdeb
                                                        : dnnl_format_tag_undef;
}

bool cpu_md_channels_last(const dnnl_memory_desc_t *md, int ndim, const int64_t *dims)
{
    dnnl_format_tag_t tag = cpu_channels_last_tag(ndim);
    dnnl_memory_desc_t cl;
    return tag != dnnl_format_tag_undef && cpu_md_tag(&cl, ndim, dims, md->data_type, tag) == 0 &&
           dnnl_memory_desc_equal(&cl, md);
}

bool cpu_md_is_plain(const dnnl_memory_desc_t *md)
{
    dnnl_memory_desc_t p;
    if (dnnl_memory_desc_init_by_strides(&p, md->ndims, md->dims, md->data_type, NULL))
        return false;
    return dnnl_memory_desc_equal(&p, md) != 0;
}

int cpu_fail(cpu_exec *e, ib_err *err, int code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e && e->cur)
        return ib_err_set(err, code, "cpu backend: node '%s' (%s): %s", e->cur->name,
                          e->cur->op_type, msg);
    return ib_err_set(err, code, "cpu backend: %s", msg);
}

int cpu_check(cpu_exec *e, ib_err *err, dnnl_status_t st, const char *what)
{
    if (st == dnnl_success)
        return IB_OK;
    int code = st == dnnl_out_of_memory ? IB_ENOMEM
               : st == dnnl_unimplemented ? IB_EUNSUPPORTED
                                          : IB_EBACKEND;
    return cpu_fail(e, err, code, "oneDNN %s failed (status %d)%s", what, (int)st,
                    st == dnnl_unimplemented
                        ? ": no implementation for these shapes/types; use the reference backend"
                        : "");
}
