/*
 * os.h - the few OS services the issue and completion paths need:
 * reserved zero-filled memory that is committed only when touched (so a
 * per-sample array costs RAM only for samples actually issued, and is
 * allocated before the timed part), a futex-style wait/wake on a 32-bit
 * word (so the completion path wakes a waiting issuer without a lock), and
 * the calling thread's timer slack (precise absolute sleeps).
 *
 * Linux implementation; other POSIX systems get malloc-backed memory,
 * polling waits and no timer-slack control.
 */
#ifndef IB_LOADGEN_OS_H
#define IB_LOADGEN_OS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Reserve `bytes` of zero-filled memory, physically committed on first
 * touch. NULL on failure. Release with ib_lg_vmem_release(p, bytes). */
void *ib_lg_vmem_reserve(size_t bytes);
void ib_lg_vmem_release(void *p, size_t bytes);
/* Commit the pages of a reserved range now (before a timed section). */
void ib_lg_vmem_prefault(void *p, size_t bytes);
/* Give the physical pages back (the range stays mapped and reads as zero). */
void ib_lg_vmem_discard(void *p, size_t bytes);

/* Sleep while *word == expected, at most timeout_ns (spurious wakeups
 * allowed). */
void ib_lg_futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns);
/* Wake every thread waiting on word. */
void ib_lg_futex_wake(_Atomic uint32_t *word);

/* Timer slack of the calling thread in ns (-1 when unknown) and set it. */
long ib_lg_timerslack_get(void);
void ib_lg_timerslack_set(long ns);

/* A spin-wait hint (PAUSE on x86). */
void ib_lg_cpu_relax(void);

/*
 * The engine's clock: CLOCK_MONOTONIC nanoseconds, read through the
 * invariant TSC where the CPU has one (x86-64 with constant_tsc and
 * nonstop_tsc; ~8 ns instead of ~25-40 ns for clock_gettime on a VM). TSC
 * readings are converted with an anchor (tsc, ns, ns per tick) that
 * ib_lg_clock_refresh re-takes against clock_gettime; the rate is measured
 * over the whole time since init, so the conversion error stays within tens
 * of ns. Readers are lock-free (a sequence counter); refreshes from several
 * threads are serialised by a try-flag (a busy refresh is skipped).
 */
typedef struct ib_lg_clock {
    int use_tsc;
    uint64_t base_tsc;
    int64_t base_ns;
    _Atomic uint32_t seq;
    _Atomic uint64_t a_tsc;
    _Atomic int64_t a_ns;
    _Atomic uint64_t a_rate; /* ns per tick, as double bits */
    _Atomic int busy;
} ib_lg_clock;

/* Calibrate (about 1 ms when the TSC is used). use_tsc = 0 forces
 * clock_gettime. */
void ib_lg_clock_init(ib_lg_clock *c, int use_tsc);
/* Monotonic ns. Thread-safe, lock-free, never allocates. */
int64_t ib_lg_clock_now(ib_lg_clock *c);
/* Re-anchor against clock_gettime (cheap; call every few ms). */
void ib_lg_clock_refresh(ib_lg_clock *c);
/* Whether this machine has an invariant TSC the clock can use. */
int ib_lg_clock_tsc_usable(void);

/* Peak resident set size of the process in bytes (0 when unknown). */
uint64_t ib_lg_peak_rss_bytes(void);

#endif
