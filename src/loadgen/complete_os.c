/*
 * complete_os.c - mmap-reserved memory, futex wait/wake, timer slack and
 * peak RSS for the loadgen engine (Linux; portable fallbacks otherwise).
 * This file needs _GNU_SOURCE for MAP_ANONYMOUS/MAP_NORESERVE, syscall()
 * and prctl(); nothing else in the loadgen does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "base/common.h"
#include "loadgen/complete_os.h"

void *ib_lg_vmem_reserve(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
#if defined(MAP_ANONYMOUS) && defined(MAP_NORESERVE)
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
#else
    return ib_calloc(1, bytes);
#endif
}

void ib_lg_vmem_release(void *p, size_t bytes)
{
    if (!p)
        return;
#if defined(MAP_ANONYMOUS) && defined(MAP_NORESERVE)
    munmap(p, bytes ? bytes : 1);
#else
    IB_UNUSED(bytes);
    ib_free(p);
#endif
}

void ib_lg_vmem_discard(void *p, size_t bytes)
{
#if defined(MADV_DONTNEED)
    if (p && bytes)
        madvise(p, bytes, MADV_DONTNEED);
#else
    IB_UNUSED(p);
    IB_UNUSED(bytes);
#endif
}

void ib_lg_futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns)
{
    if (timeout_ns <= 0)
        return;
#ifdef __linux__
    struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
    /* FUTEX_WAIT compares the 32-bit word with `expected` atomically. */
    syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
#else
    if (atomic_load(word) == expected) {
        struct timespec ts = {0, timeout_ns < 200000 ? (long)timeout_ns : 200000};
        nanosleep(&ts, NULL);
    }
#endif
}

void ib_lg_futex_wake(_Atomic uint32_t *word)
{
#ifdef __linux__
    syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
#else
    IB_UNUSED(word);
#endif
}

long ib_lg_timerslack_get(void)
{
#if defined(__linux__) && defined(PR_GET_TIMERSLACK)
    return (long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
#else
    return -1;
#endif
}

void ib_lg_timerslack_set(long ns)
{
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    if (ns > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0);
#else
    IB_UNUSED(ns);
#endif
}

void ib_lg_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

uint64_t ib_lg_peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u; /* Linux reports KiB */
}
