/*
 * devices.c - the --devices list (devices.h): strict parsing with messages
 * that name the bad entry, and "all" resolved by probing the backend.
 */
#include <string.h>

#include "backend/backend.h"
#include "harness/devices.h"

#define USAGE "use all or a comma-separated list of device indices such as 0,1,2"

int ib_devices_parse(const char *spec, ib_device_list *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || strcmp(spec, "all") == 0) {
        out->all = true;
        return IB_OK;
    }
    if (!spec[0])
        return ib_err_set(err, IB_EINVAL, "--devices: empty list; " USAGE);
    const char *p = spec;
    for (int pos = 1;; pos++) {
        if (*p < '0' || *p > '9')
            return ib_err_set(err, IB_EINVAL, "--devices '%s': entry %d is %s; " USAGE, spec, pos,
                              *p == ',' || !*p ? "empty" : "not a device index");
        long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            if (v > 4095)
                return ib_err_set(err, IB_EINVAL,
                                  "--devices '%s': entry %d is larger than 4095; " USAGE, spec,
                                  pos);
        }
        if (*p && *p != ',')
            return ib_err_set(err, IB_EINVAL, "--devices '%s': entry %d is not a device index; " USAGE,
                              spec, pos);
        for (int i = 0; i < out->n; i++)
            if (out->id[i] == (int)v)
                return ib_err_set(err, IB_EINVAL, "--devices '%s': device %ld is listed twice",
                                  spec, v);
        if (out->n == IB_DEVICES_MAX)
            return ib_err_set(err, IB_EINVAL, "--devices '%s': more than %d devices", spec,
                              IB_DEVICES_MAX);
        out->id[out->n++] = (int)v;
        if (!*p)
            return IB_OK;
        p++; /* the comma */
    }
}

/* Create `backend` on `device`; *host: its buffers are host-visible; list (optional) gets
 * the device's description. */
static int probe(const char *backend, int device, bool *host, ib_device_list *list, ib_err *err)
{
    ib_backend_config cfg;
    ib_backend_config_defaults(&cfg);
    cfg.device = device;
    cfg.threads = 1;
    ib_backend *b = NULL;
    int rc = ib_backend_create(backend, &cfg, &b, err);
    if (rc)
        return rc;
    ib_backend_buffer *buf = NULL;
    rc = ib_backend_buffer_alloc(b, IB_BACKEND_ALIGN, &buf, err);
    if (!rc && host)
        *host = ib_backend_buffer_host_ptr(buf) != NULL;
    if (!rc && list)
        list->have_info = ib_backend_device_info_get(b, &list->info);
    ib_backend_buffer_free(buf);
    ib_backend_destroy(b);
    return rc;
}

int ib_devices_resolve(const char *backend, const char *spec, ib_device_list *out, bool *host,
                       ib_err *err)
{
    int rc = ib_devices_parse(spec, out, err);
    if (rc)
        return rc;
    *host = false;
    if ((rc = probe(backend, out->all ? 0 : out->id[0], host, out, err)))
        return rc;
    if (*host) { /* cpu, reference: the list does not apply */
        out->n = 0;
        return IB_OK;
    }
    if (!out->all)
        return IB_OK; /* other entries are checked when each worker creates its session */
    out->id[0] = 0;
    out->n = 1;
    while (out->n < IB_DEVICES_MAX) {
        ib_err e;
        ib_err_clear(&e);
        rc = probe(backend, out->n, NULL, NULL, &e);
        if (rc == IB_ENOTFOUND)
            break;
        if (rc)
            return ib_err_set(err, rc, "--devices all: device %d: %s", out->n, e.msg);
        out->id[out->n] = out->n;
        out->n++;
    }
    return IB_OK;
}
