/*
 * plan.h - the activation memory planner: given values with sizes and live
 * intervals (in execution steps), assign byte offsets inside one arena so
 * that no two values that are alive at the same step overlap in memory.
 *
 * The planner is a pure function over an array (no graph, no backend), so it
 * can be tested on random inputs; the session builds the array from the
 * partitioned graph (session_build.c) and calls it once per backend arena.
 *
 * Intervals are inclusive: a value produced by the node at step s and last
 * read at step e occupies [s, e]. Two values conflict when their intervals
 * intersect. In-place reuse is declared with `share_with`: value j may take
 * over the storage of an earlier value i when i is last read by the node
 * that produces j (i.end == j.start), j is not larger than i and nobody else
 * took i over (the session only declares it for elementwise ops, where
 * reading x[k] before writing y[k] makes the aliasing safe).
 */
#ifndef IB_RUNTIME_PLAN_H
#define IB_RUNTIME_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/common.h"

#define IB_PLAN_ALIGN 64

typedef struct ib_plan_value {
    size_t size;        /* bytes (0 = needs no storage; offset is then 0) */
    int32_t start;      /* first step the value must exist */
    int32_t end;        /* last step it is read (inclusive, >= start) */
    int32_t share_with; /* an earlier index whose storage this one may reuse, or -1 */
    size_t offset;      /* OUT: byte offset in the arena (multiple of the alignment) */
    bool shared;        /* OUT: true when the in-place request was granted */
} ib_plan_value;

typedef struct ib_plan_result {
    size_t total_bytes; /* arena size: max(offset + size) */
    size_t sum_bytes;   /* sum of all (aligned) sizes: the size without any reuse */
    size_t live_peak;   /* max over steps of the live bytes: a lower bound of total */
    size_t n_inplace;   /* in-place requests granted */
} ib_plan_result;

/*
 * ib_plan_compute - greedy-by-size placement with interval reuse: groups
 * (values joined by granted in-place requests) are placed largest first at
 * the lowest offset that does not overlap any already-placed group alive at
 * the same time. Sizes are rounded up to `align` (a power of two; 0 means
 * IB_PLAN_ALIGN). no_reuse gives every value its own slot (calibration reads
 * every intermediate value after the run). Fills offsets and *res.
 * Returns IB_OK, IB_EINVAL (bad interval, bad share index, overflow) or
 * IB_ENOMEM.
 */
int ib_plan_compute(ib_plan_value *v, size_t n, size_t align, bool no_reuse, ib_plan_result *res,
                    ib_err *err);

/*
 * ib_plan_verify - check a plan: every value fits in total_bytes, offsets are
 * aligned, and any two values whose intervals intersect have disjoint byte
 * ranges unless one was granted the other's storage in place. Returns IB_OK
 * or IB_EINVAL naming the two values.
 */
int ib_plan_verify(const ib_plan_value *v, size_t n, size_t align, size_t total_bytes, ib_err *err);

#endif
