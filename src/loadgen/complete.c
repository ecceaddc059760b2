/*
 * complete.c - ib_lg_samples_complete and the series state it writes.
 *
 * Any thread may complete samples, concurrently, inside or outside
 * issue_query. The path takes one timestamp per call, never locks, never
 * allocates and never dereferences a response id: id - 1 is the sample's
 * sequence id, checked against the running series' range and its slot state
 * (not issued -> unknown, completed -> duplicate, series closed -> late).
 * A completed slot holds the latency from the scheduled time (loadgen.md
 * §2.7); payloads are copied only for logged samples, into an arena reserved
 * when the series opened. The official QuerySamplesComplete dereferences the
 * id as a pointer and records latencies later on its IO thread.
 */
#include <limits.h>
#include <sched.h>
#include <string.h>

#include "base/common.h"
#include "loadgen/os.h"
#include "loadgen/engine_internal.h"

/* Arena for logged payloads: virtual reservation, committed on use. */
#define IB_LG_ARENA_MAX ((uint64_t)16 << 30)
#define IB_LG_ARENA_MIN ((uint64_t)64 << 20)

void ib_lg_hist_add(ib_lg_hist *h, int64_t v)
{
    if (v < 0)
        v = 0;
    uint64_t x = (uint64_t)v;
    size_t idx;
    if (x < 32) {
        idx = (size_t)x;
    } else {
        int e = 63 - __builtin_clzll(x); /* x in [2^e, 2^(e+1)), e >= 5 */
        idx = (size_t)(e - 4) * 32 + (size_t)((x >> (e - 5)) & 31);
    }
    if (idx >= IB_LG_HIST_BUCKETS)
        idx = IB_LG_HIST_BUCKETS - 1;
    h->b[idx]++;
    h->count++;
}

static int64_t hist_bucket_value(size_t idx)
{
    if (idx < 32)
        return (int64_t)idx;
    size_t e = idx / 32 + 4, m = idx % 32;
    return (int64_t)(((uint64_t)32 + m) << (e - 5));
}

int64_t ib_lg_hist_quantile(const ib_lg_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t rank = (uint64_t)((double)h->count * q);
    if (rank >= h->count)
        rank = h->count - 1;
    uint64_t acc = 0;
    for (size_t i = 0; i < IB_LG_HIST_BUCKETS; i++) {
        acc += h->b[i];
        if (acc > rank)
            return hist_bucket_value(i);
    }
    return hist_bucket_value(IB_LG_HIST_BUCKETS - 1);
}

int ib_lg_srt_open(ib_lg_test *t, uint64_t first_seq, uint64_t n, bool logging, bool trace,
                   ib_lg_srt **out)
{
    ib_lg_srt *s = ib_calloc(1, sizeof *s);
    if (!s)
        return IB_ENOMEM;
    s->first_seq = first_seq;
    s->n = n;
    s->latency_bound_ns = INT64_MAX;
    s->slot_bytes = (size_t)(n ? n : 1) * sizeof(int64_t);
    s->slot = ib_lg_vmem_reserve(s->slot_bytes);
    if (!s->slot)
        goto fail;
    ib_lg_vmem_prefault(s->slot, s->slot_bytes); /* no page faults while issuing */
    if (logging) {
        s->rec_cap = n;
        s->recs_bytes = (size_t)(n ? n : 1) * sizeof(ib_lg_acc_rec);
        s->logged_bytes = (size_t)(n ? n : 1) * sizeof(ib_lg_logged);
        s->recs = ib_lg_vmem_reserve(s->recs_bytes);
        s->logged = ib_lg_vmem_reserve(s->logged_bytes);
        for (uint64_t cap = IB_LG_ARENA_MAX; !s->arena && cap >= IB_LG_ARENA_MIN; cap /= 2) {
            s->arena = ib_lg_vmem_reserve((size_t)cap);
            s->arena_cap = s->arena ? cap : 0;
        }
        if (!s->recs || !s->logged || !s->arena)
            goto fail;
    }
    if (trace) {
        s->trace_bytes = (size_t)(n ? n : 1) * sizeof(int64_t);
        s->trace_issue = ib_lg_vmem_reserve(s->trace_bytes);
        s->trace_sched = ib_lg_vmem_reserve(s->trace_bytes);
        s->trace_qsl = ib_lg_vmem_reserve(s->trace_bytes);
        if (!s->trace_issue || !s->trace_sched || !s->trace_qsl)
            goto fail;
    }
    s->older = atomic_load_explicit(&t->head, memory_order_relaxed);
    atomic_store_explicit(&t->head, s, memory_order_release);
    *out = s;
    return IB_OK;
fail:
    ib_lg_vmem_release(s->slot, s->slot_bytes);
    ib_lg_vmem_release(s->recs, s->recs_bytes);
    ib_lg_vmem_release(s->logged, s->logged_bytes);
    ib_lg_vmem_release(s->arena, (size_t)s->arena_cap);
    ib_lg_vmem_release(s->trace_issue, s->trace_bytes);
    ib_lg_vmem_release(s->trace_sched, s->trace_bytes);
    ib_lg_vmem_release(s->trace_qsl, s->trace_bytes);
    ib_free(s);
    return IB_ENOMEM;
}

void ib_lg_srt_close(ib_lg_test *t, ib_lg_srt *s)
{
    atomic_store_explicit(&s->closed, 1, memory_order_seq_cst);
    /* Pending slots become LOST; a completer racing us either won its CAS
     * first (the slot is then completed and counted below) or sees LOST. */
    uint64_t lost = 0, done = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        int64_t v = atomic_load_explicit(&s->slot[i], memory_order_acquire);
        while (v > 0 && !atomic_compare_exchange_weak_explicit(&s->slot[i], &v, IB_LG_SLOT_LOST,
                                                               memory_order_acq_rel,
                                                               memory_order_acquire)) {
        }
        if (v > 0)
            lost++;
        else if (v < 0 && v != IB_LG_SLOT_LOST)
            done++;
    }
    /* every slot winner bumps `completed` after its payload copy */
    while (atomic_load_explicit(&s->completed, memory_order_acquire) < done)
        sched_yield();
    s->lost = lost;
    s->done_slots = done;
    s->close_ns = ib_lg_clock_now(&t->clock);
}

void ib_lg_srt_discard(ib_lg_srt *s)
{
    ib_lg_vmem_discard(s->slot, s->slot_bytes);
    if (s->recs) {
        ib_lg_vmem_discard(s->recs, s->recs_bytes);
        ib_lg_vmem_discard(s->logged, s->logged_bytes);
        uint64_t used = atomic_load(&s->arena_used);
        ib_lg_vmem_discard(s->arena, (size_t)(used < s->arena_cap ? used : s->arena_cap));
    }
    if (s->trace_issue) {
        ib_lg_vmem_discard(s->trace_issue, s->trace_bytes);
        ib_lg_vmem_discard(s->trace_sched, s->trace_bytes);
        ib_lg_vmem_discard(s->trace_qsl, s->trace_bytes);
    }
}

void ib_lg_srt_free_all(ib_lg_test *t)
{
    ib_lg_srt *s = atomic_exchange(&t->head, NULL);
    while (s) {
        ib_lg_srt *o = s->older;
        ib_lg_vmem_release(s->slot, s->slot_bytes);
        ib_lg_vmem_release(s->recs, s->recs_bytes);
        ib_lg_vmem_release(s->logged, s->logged_bytes);
        ib_lg_vmem_release(s->arena, (size_t)s->arena_cap);
        ib_lg_vmem_release(s->trace_issue, s->trace_bytes);
        ib_lg_vmem_release(s->trace_sched, s->trace_bytes);
        ib_lg_vmem_release(s->trace_qsl, s->trace_bytes);
        ib_free(s);
        s = o;
    }
}

static void fault(ib_lg_test *t, ib_lg_fault f, uint64_t seq)
{
    uint64_t k = atomic_fetch_add_explicit(&t->fault[f], 1, memory_order_relaxed);
    if (k < IB_LG_FAULT_KEEP)
        atomic_store_explicit(&t->fault_ids[f][k], seq, memory_order_relaxed);
}

void ib_lg_samples_fail(ib_lg_test *t, const ib_lg_response_id *ids, size_t count,
                        const char *reason)
{
    if (!t || !ids || count == 0)
        return;
    int expect = 0;
    if (atomic_compare_exchange_strong(&t->fail_reason_state, &expect, 1)) {
        size_t n = 0;
        for (const char *p = reason ? reason : "no reason given";
             *p && n + 1 < sizeof t->fail_reason; p++)
            t->fail_reason[n++] = *p == '\n' ? ' ' : *p;
        t->fail_reason[n] = '\0';
        atomic_store_explicit(&t->fail_reason_state, 2, memory_order_release);
    }
    ib_lg_response r[64];
    for (size_t done = 0; done < count;) {
        size_t c = IB_MIN(count - done, IB_ARRAY_LEN(r));
        for (size_t i = 0; i < c; i++) {
            r[i] = (ib_lg_response){ids[done + i], NULL, 0, 0};
            fault(t, IB_LG_FAULT_FAILED, (uint64_t)ids[done + i] - 1);
        }
        ib_lg_samples_complete(t, r, c);
        done += c;
    }
}

/* A sequence id outside the running series: late if an older series had it. */
static void classify_outside(ib_lg_test *t, const ib_lg_srt *s, uint64_t seq)
{
    for (const ib_lg_srt *o = s; o; o = o->older)
        if (seq - o->first_seq < o->n) {
            fault(t, IB_LG_FAULT_LATE, seq);
            return;
        }
    fault(t, IB_LG_FAULT_UNKNOWN, seq);
}

static void copy_payload(ib_lg_test *t, ib_lg_srt *s, uint64_t seq, const ib_lg_response *r)
{
    uint64_t k = atomic_fetch_add_explicit(&s->nrecs, 1, memory_order_relaxed);
    if (k >= s->rec_cap) {
        fault(t, IB_LG_FAULT_DROPPED, seq);
        return;
    }
    ib_lg_acc_rec *rec = &s->recs[k];
    rec->seq = seq;
    rec->size = r->size;
    rec->n_tokens = r->n_tokens;
    rec->off = UINT64_MAX;
    if (r->size == 0) {
        rec->off = 0;
        return;
    }
    uint64_t off = atomic_fetch_add_explicit(&s->arena_used, r->size, memory_order_relaxed);
    if (!r->data || off > s->arena_cap || r->size > s->arena_cap - off) {
        fault(t, IB_LG_FAULT_DROPPED, seq);
        return;
    }
    memcpy(s->arena + off, r->data, r->size);
    rec->off = off;
}

void ib_lg_samples_complete(ib_lg_test *t, const ib_lg_response *responses, size_t count)
{
    if (!t || !responses || count == 0)
        return;
    int64_t now = ib_lg_clock_now(&t->clock); /* one timestamp per call (loadgen.md §1.4) */
    ib_lg_srt *s = atomic_load_explicit(&t->head, memory_order_acquire);
    if (!s) {
        for (size_t i = 0; i < count; i++)
            fault(t, IB_LG_FAULT_UNKNOWN, (uint64_t)responses[i].id - 1);
        return;
    }
    if (atomic_load_explicit(&s->closed, memory_order_relaxed)) {
        for (size_t i = 0; i < count; i++)
            classify_outside(t, s, (uint64_t)responses[i].id - 1);
        return;
    }
    uint64_t done = 0, over = 0;
    int64_t rel_now = now - s->start_ns;
    for (size_t i = 0; i < count; i++) {
        uint64_t seq = (uint64_t)responses[i].id - 1; /* id 0 wraps: unknown */
        uint64_t rel = seq - s->first_seq;
        if (rel >= s->n) {
            classify_outside(t, s->older, seq);
            continue;
        }
        _Atomic int64_t *slot = &s->slot[rel];
        int64_t v = atomic_load_explicit(slot, memory_order_acquire);
        for (;;) {
            if (v <= 0) {
                fault(t,
                      v == 0                   ? IB_LG_FAULT_UNKNOWN
                      : v == IB_LG_SLOT_LOST ? IB_LG_FAULT_LATE
                                               : IB_LG_FAULT_DUPLICATE,
                      seq);
                break;
            }
            int64_t sched = (v & IB_LG_SLOT_SCHED_MASK) - 1;
            int64_t lat = rel_now - sched;
            if (lat < 0)
                lat = 0;
            if (atomic_compare_exchange_weak_explicit(slot, &v, -(lat + 1), memory_order_acq_rel,
                                                      memory_order_acquire)) {
                if (v & IB_LG_SLOT_LOG_BIT)
                    copy_payload(t, s, seq, &responses[i]);
                over += lat > s->latency_bound_ns;
                done++;
                break;
            }
            atomic_fetch_add_explicit(&t->cas_retries, 1, memory_order_relaxed);
        }
    }
    if (over)
        atomic_fetch_add_explicit(&s->over_latency, over, memory_order_relaxed);
    if (done) {
        atomic_fetch_add_explicit(&s->completed, done, memory_order_seq_cst);
        if (atomic_load_explicit(&t->waiters, memory_order_seq_cst)) {
            atomic_fetch_add_explicit(&t->wake_seq, 1, memory_order_seq_cst);
            ib_lg_futex_wake(&t->wake_seq);
        }
    }
}

void ib_lg_first_token_complete(ib_lg_test *t, const ib_lg_response *responses, size_t count)
{
    /* Token latencies are not measured by this engine (settings with
     * use_token_latencies are rejected before the run); ids are still
     * validated so a SUT calling this by mistake is reported. */
    if (!t || !responses)
        return;
    ib_lg_srt *s = atomic_load_explicit(&t->head, memory_order_acquire);
    for (size_t i = 0; i < count; i++) {
        uint64_t seq = (uint64_t)responses[i].id - 1;
        bool known = false;
        for (const ib_lg_srt *o = s; o && !known; o = o->older)
            known = seq - o->first_seq < o->n;
        if (!known)
            fault(t, IB_LG_FAULT_UNKNOWN, seq);
    }
}

/* Time-limited wait on the completion counter (spin, then futex). The
 * timeout counts from the last observed progress (a change of `completed`),
 * at the earliest from since_ns. The waiter also re-anchors the clock. */
static int wait_until_pred(ib_lg_test *t, ib_lg_srt *s, int64_t since_ns,
                           bool (*pred)(ib_lg_srt *, const void *), const void *arg)
{
    for (int spin = 0; spin < 2000; spin++) {
        if (pred(s, arg))
            return IB_OK;
        ib_lg_cpu_relax();
    }
    int64_t timeout = t->opts.sut_timeout_ms ? (int64_t)t->opts.sut_timeout_ms * 1000000 : 0;
    uint64_t seen = atomic_load_explicit(&s->completed, memory_order_relaxed);
    int64_t progress_ns = ib_lg_clock_now(&t->clock);
    if (progress_ns < since_ns)
        progress_ns = since_ns;
    for (;;) {
        atomic_store_explicit(&t->waiters, 1, memory_order_seq_cst);
        uint32_t w = atomic_load_explicit(&t->wake_seq, memory_order_seq_cst);
        if (pred(s, arg)) {
            atomic_store_explicit(&t->waiters, 0, memory_order_relaxed);
            return IB_OK;
        }
        if (atomic_load_explicit(&t->abort, memory_order_relaxed)) {
            atomic_store_explicit(&t->waiters, 0, memory_order_relaxed);
            return IB_ECANCELED;
        }
        ib_lg_clock_refresh(&t->clock);
        int64_t now = ib_lg_clock_now(&t->clock);
        uint64_t c = atomic_load_explicit(&s->completed, memory_order_relaxed);
        if (c != seen) {
            seen = c;
            progress_ns = now;
        }
        if (timeout && now - progress_ns >= timeout) {
            atomic_store_explicit(&t->waiters, 0, memory_order_relaxed);
            return IB_ETIMEOUT;
        }
        ib_lg_futex_wait(&t->wake_seq, w, 1000000); /* re-check at least every ms */
    }
}

static bool pred_count(ib_lg_srt *s, const void *arg)
{
    return atomic_load_explicit(&s->completed, memory_order_seq_cst) >= *(const uint64_t *)arg;
}

int ib_lg_wait_completed(ib_lg_test *t, ib_lg_srt *s, uint64_t target, int64_t since_ns)
{
    if (pred_count(s, &target))
        return IB_OK;
    return wait_until_pred(t, s, since_ns, pred_count, &target);
}

typedef struct slot_range {
    uint64_t first;
    size_t count;
} slot_range;

static bool pred_slots(ib_lg_srt *s, const void *arg)
{
    const slot_range *r = arg;
    for (size_t i = 0; i < r->count; i++)
        if (atomic_load_explicit(&s->slot[r->first + i], memory_order_seq_cst) > 0)
            return false;
    return true;
}

int ib_lg_wait_slots(ib_lg_test *t, ib_lg_srt *s, uint64_t rel_first, size_t count,
                     int64_t since_ns)
{
    slot_range r = {rel_first, count};
    if (pred_slots(s, &r))
        return IB_OK;
    return wait_until_pred(t, s, since_ns, pred_slots, &r);
}
