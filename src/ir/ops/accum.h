/*
 * accum.h - inferbench.WindowAccumulate's arithmetic (ir/ops/accum.c), shared by the
 * reference kernel and the cpu backend so both add in the same order with the same
 * roundings.
 */
#ifndef IB_IR_OPS_ACCUM_H
#define IB_IR_OPS_ACCUM_H

#include "ir/op.h"

typedef struct ib_window_acc {
    const float *acc, *win, *g; /* acc [1, C+1, S], window [1, C, r], weight [1, 1, r] */
    const int64_t *at;          /* the window's start [3] */
    float *y;                   /* out [1, C+1, S] */
    int64_t C, S[3], r[3];
} ib_window_acc;

/* C, S and r from the shapes of acc, window and weight (pointers untouched). */
void ib_window_acc_shape(const ib_tensor_desc *acc, const ib_tensor_desc *win,
                         const ib_tensor_desc *weight, ib_window_acc *w);
/* The op's tensors (inputs acc, window, at, weight; output y) as one description. */
void ib_window_acc_of(const ib_tensor *const *in, ib_tensor *y, ib_window_acc *w);
/* Whether the window lies inside the volume. */
bool ib_window_acc_fits(const ib_window_acc *w);
/* IB_EINVAL naming the window and the volume. */
int ib_window_acc_misfit(const ib_window_acc *w, ib_err *err);
/* Add the window's planes z0 <= z < z1 into y (already a copy of acc, or acc itself). */
void ib_window_acc_rows(const ib_window_acc *w, int64_t z0, int64_t z1);

#endif
