/*
 * devices.h - the accelerator device list of a run (`--devices all|0,1,2`,
 * ib_harness_opts.devices): parsing, and resolving "all" against a backend.
 * Worker w of the harness uses device list[w % n] (sut.c).
 */
#ifndef IB_HARNESS_DEVICES_H
#define IB_HARNESS_DEVICES_H

#include <stdbool.h>

#include "backend/backend.h"
#include "base/common.h"

#define IB_DEVICES_MAX 64

typedef struct ib_device_list {
    bool all;              /* "all" (or NULL): every device the backend has */
    int n;                 /* explicit or resolved entries */
    int id[IB_DEVICES_MAX];
    /* after ib_devices_resolve on a device backend: the first listed device, when the
     * backend describes its devices (ib_backend_device_info_get) */
    bool have_info;
    ib_backend_device_info info;
} ib_device_list;

/*
 * ib_devices_parse - "all", NULL (= all) or comma-separated device indices
 * ("0,1,2": decimal, 0..4095, no empty entries, no duplicates, at most
 * IB_DEVICES_MAX). IB_EINVAL with a message naming the entry otherwise.
 */
int ib_devices_parse(const char *spec, ib_device_list *out, ib_err *err);

/*
 * ib_devices_resolve - parse spec and, for a device backend, resolve "all"
 * by creating instances on devices 0, 1, ... until the backend answers
 * IB_ENOTFOUND. A host backend (its buffers are host-visible: cpu,
 * reference) has no devices: *host is set and out->n is 0. Errors: parse
 * errors (IB_EINVAL), the backend's own (no device: IB_EUNSUPPORTED).
 */
int ib_devices_resolve(const char *backend, const char *spec, ib_device_list *out, bool *host,
                       ib_err *err);

#endif
