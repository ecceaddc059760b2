/*
 * results_select.h - order statistics without a full sort.
 *
 * The official LoadGen sorts every latency vector (std::sort) to read seven
 * percentiles and one early-stopping rank. A multi-selection places the
 * requested ranks in O(N log k) instead, in place, without allocating.
 */
#ifndef IB_LOADGEN_RESULTS_SELECT_H
#define IB_LOADGEN_RESULTS_SELECT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Reorder a[0..n) so that a[k] holds the k-th smallest value (0-based) for
 * every k in ranks[0..nranks) (ranks may be unsorted and repeat; out-of-range
 * ranks are ignored). Elements left of each placed rank are <= it and those
 * right of it are >= it. Worst case O(N log N) (introselect falls back to
 * heapsort), typical O(N log k). Never allocates; recursion depth O(log N).
 */
void ib_lg_select_ranks(int64_t *a, size_t n, const size_t *ranks, size_t nranks);

/* The same for unsigned values (v1.1 MultiStream intervals). */
void ib_lg_select_ranks_u64(uint64_t *a, size_t n, const size_t *ranks, size_t nranks);

#endif
