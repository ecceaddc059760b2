/*
 * sysinfo.h - the MLPerf system description JSON (benchmarks.md §2.5: every field the v1.1
 * checker requires or accepts, plus the two v5.0 adds) of the machine inferbench runs on:
 * CPU from /proc/cpuinfo and the sysfs topology/cache/cpufreq files (what lscpu reads),
 * memory from /proc/meminfo, disks from /sys/block, the OS from /etc/os-release and the
 * kernel release, accelerators from nvidia-smi when it is present, and the software stack
 * inferbench itself was built with. A field nothing on the machine tells is "" (never a
 * guess); submission metadata (submitter, division, status, system type) is whatever the
 * caller passes.
 */
#ifndef IB_HARNESS_SYSINFO_H
#define IB_HARNESS_SYSINFO_H

#include "base/strbuf.h"
#include "inferbench/status.h"

typedef struct ib_sysinfo_opts {
    const char *root;        /* prefix for /proc, /sys and /etc ("" or NULL = the real ones) */
    const char *nvidia_smi;  /* command (NULL = "nvidia-smi" from PATH; "" = do not run) */
    const char *system_name; /* the rest: "" when NULL */
    const char *submitter;
    const char *division;
    const char *status;
    const char *system_type;
} ib_sysinfo_opts;

/* Append the JSON object (pretty, keys sorted as the official files are) to out. Fields the
 * machine did not reveal are listed in `missing` (comma-separated, may be NULL). */
int ib_sysinfo_json(const ib_sysinfo_opts *o, ib_strbuf *out, ib_strbuf *missing, ib_err *err);

#endif
