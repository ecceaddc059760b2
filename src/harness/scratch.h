/*
 * scratch.h - the per-worker scratch buffers behind ib_bench_scratch_get (benchmark.h):
 * 16 slots, each grown on demand and kept between batches, 64-byte aligned.
 */
#ifndef IB_HARNESS_SCRATCH_H
#define IB_HARNESS_SCRATCH_H

#include <stddef.h>

#include "harness/benchmark.h"

#define IB_SCRATCH_SLOTS 16

struct ib_bench_scratch {
    void *raw[IB_SCRATCH_SLOTS];
    void *aligned[IB_SCRATCH_SLOTS];
    size_t size[IB_SCRATCH_SLOTS];
};

/* Free every slot and zero the struct (caller storage). */
void ib_bench_scratch_free(ib_bench_scratch *s);

#endif
