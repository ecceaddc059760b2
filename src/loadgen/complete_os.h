/*
 * complete_os.h - the few OS services the issue and completion paths need:
 * reserved zero-filled memory that is committed only when touched (so a
 * per-sample array costs RAM only for samples actually issued, and is
 * allocated before the timed part), a futex-style wait/wake on a 32-bit
 * word (so the completion path wakes a waiting issuer without a lock), and
 * the calling thread's timer slack (precise absolute sleeps).
 *
 * Linux implementation; other POSIX systems get malloc-backed memory,
 * polling waits and no timer-slack control.
 */
#ifndef IB_LOADGEN_COMPLETE_OS_H
#define IB_LOADGEN_COMPLETE_OS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Reserve `bytes` of zero-filled memory, physically committed on first
 * touch. NULL on failure. Release with ib_lg_vmem_release(p, bytes). */
void *ib_lg_vmem_reserve(size_t bytes);
void ib_lg_vmem_release(void *p, size_t bytes);
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

/* Peak resident set size of the process in bytes (0 when unknown). */
uint64_t ib_lg_peak_rss_bytes(void);

#endif
