/*
 * sysload.h - how busy the rest of the machine was during a test: the CPU time every
 * process used (/proc/stat, steal included: a hypervisor giving our CPUs away is load too)
 * less the CPU time of this process (getrusage), over the CPUs and wall time of the test.
 * A noisy neighbour makes a benchmark figure low; the result then says so. Linux only: on
 * another system (no /proc/stat) the measurement is simply absent.
 */
#ifndef IB_LOADGEN_SYSLOAD_H
#define IB_LOADGEN_SYSLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "inferbench/loadgen.h" /* IB_LG_BUSY_PCT */

typedef struct ib_lg_sysload {
    bool ok;               /* both samples were taken */
    double busy_s, self_s; /* at begin: CPU seconds of the machine and of this process */
    int64_t wall_ns;
    int ncpu;
} ib_lg_sysload;

/* Take the first sample. */
void ib_lg_sysload_begin(ib_lg_sysload *s);

/* The share (0..100) of the machine's CPU time that other processes used since begin, or
 * a negative value when it could not be measured. */
double ib_lg_sysload_others_pct(const ib_lg_sysload *s);

#endif
