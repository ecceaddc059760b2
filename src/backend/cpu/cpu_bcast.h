/*
 * cpu_bcast.h - numpy-style broadcasting for our own elementwise kernels:
 * the output shape, per-input element strides (0 where an input is
 * broadcast) and dimension collapsing, so the innermost loop of a kernel is
 * long and contiguous (or constant) for every operand and vectorises.
 */
#ifndef IB_BACKEND_CPU_BCAST_H
#define IB_BACKEND_CPU_BCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "inferbench/runtime.h"

#define CPU_BCAST_MAX_IN 3

typedef struct cpu_bcast {
    int nd;                                    /* collapsed rank (>= 1) */
    int64_t dims[IB_MAX_DIMS];                 /* collapsed output dims */
    int64_t st[CPU_BCAST_MAX_IN][IB_MAX_DIMS]; /* element strides per input */
    int64_t total;                             /* output elements */
} cpu_bcast;

/* Set up broadcasting of n_in inputs to the output y (rank-aligned on the
 * right). False when a dim neither matches nor is 1. */
bool cpu_bcast_init(cpu_bcast *b, const ib_tensor_desc *const *in, int n_in,
                    const ib_tensor_desc *y);

/* Element offset of every input for flat output index `i` of an outer row:
 * the kernels iterate rows of dims[nd-1] elements. */
static inline void cpu_bcast_row(const cpu_bcast *b, int n_in, int64_t row, int64_t *off)
{
    for (int k = 0; k < n_in; k++)
        off[k] = 0;
    for (int d = b->nd - 2; d >= 0; d--) {
        int64_t idx = row % b->dims[d];
        row /= b->dims[d];
        for (int k = 0; k < n_in; k++)
            off[k] += idx * b->st[k][d];
    }
}

#endif
