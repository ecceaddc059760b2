/*
 * scratch.h - the per-worker scratch buffers behind ib_bench_scratch_get (benchmark.h):
 * 16 slots, each grown on demand and kept between batches, 64-byte aligned.
 */
#ifndef IB_HARNESS_SCRATCH_H
#define IB_HARNESS_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "harness/benchmark.h"

#define IB_SCRATCH_SLOTS 16

struct ib_bench_scratch {
    void *raw[IB_SCRATCH_SLOTS];
    void *aligned[IB_SCRATCH_SLOTS];
    size_t size[IB_SCRATCH_SLOTS];
    /* Optional allocator of 64-byte aligned memory (set both or neither, before the first
     * get): the SUT's workers use their session's host memory (page-locked on cuda), so a
     * collated batch goes to the device in one DMA. NULL = ib_malloc. */
    void *(*alloc)(void *user, size_t nbytes);
    void (*release)(void *user, void *p);
    void *user;
    bool hooked[IB_SCRATCH_SLOTS]; /* the slot came from alloc (else ib_malloc: alloc failed) */
};

/* Free every slot and zero the struct (caller storage), the allocator too. */
void ib_bench_scratch_free(ib_bench_scratch *s);

#endif
