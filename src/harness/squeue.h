/*
 * squeue.h - the issued-sample queue both SUTs share (sut.c: in-process workers; nsut.c:
 * network requests): a ring of (sample, arrival time) that grows only when a query larger
 * than any before arrives, so the steady state allocates nothing. Not locked: the SUT
 * holds its own mutex around every call.
 */
#ifndef IB_HARNESS_SQUEUE_H
#define IB_HARNESS_SQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/loadgen.h"

typedef struct ib_squeue_item {
    ib_lg_sample s;
    int64_t t_ns; /* when issue_query queued it */
} ib_squeue_item;

typedef struct ib_squeue {
    ib_squeue_item *ring;
    size_t cap, head, count;
} ib_squeue;

/* Append count samples arrived at now_ns; IB_ENOMEM (nothing queued) when it cannot grow. */
int ib_squeue_push(ib_squeue *q, const ib_lg_sample *samples, size_t count, int64_t now_ns);
/* Move the n oldest samples (n <= count) into out. */
void ib_squeue_take(ib_squeue *q, ib_lg_sample *out, size_t n);
/* Arrival time of the oldest queued sample (count > 0). */
int64_t ib_squeue_oldest_ns(const ib_squeue *q);
/* Free the ring and zero the queue. */
void ib_squeue_free(ib_squeue *q);

#endif
