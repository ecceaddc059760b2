/*
 * squeue.c - the issued-sample queue (squeue.h).
 */
#include <string.h>

#include "base/common.h"
#include "harness/squeue.h"

int ib_squeue_push(ib_squeue *q, const ib_lg_sample *samples, size_t count, int64_t now_ns)
{
    if (q->count + count > q->cap) {
        size_t cap = IB_MAX(q->cap * 2, q->count + count);
        ib_squeue_item *r = ib_malloc(sizeof *r * cap);
        if (!r)
            return IB_ENOMEM;
        for (size_t i = 0; i < q->count; i++)
            r[i] = q->ring[(q->head + i) % q->cap];
        ib_free(q->ring);
        q->ring = r;
        q->cap = cap;
        q->head = 0;
    }
    for (size_t i = 0; i < count; i++)
        q->ring[(q->head + q->count + i) % q->cap] = (ib_squeue_item){samples[i], now_ns};
    q->count += count;
    return IB_OK;
}

void ib_squeue_take(ib_squeue *q, ib_lg_sample *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = q->ring[(q->head + i) % q->cap].s;
    q->head = (q->head + n) % q->cap;
    q->count -= n;
}

int64_t ib_squeue_oldest_ns(const ib_squeue *q)
{
    return q->ring[q->head].t_ns;
}

void ib_squeue_free(ib_squeue *q)
{
    ib_free(q->ring);
    memset(q, 0, sizeof *q);
}
