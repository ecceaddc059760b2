/*
 * os.c - mmap-reserved memory, futex wait/wake, timer slack and
 * peak RSS for the loadgen engine (Linux; portable fallbacks otherwise).
 * This file needs _GNU_SOURCE for MAP_ANONYMOUS/MAP_NORESERVE, syscall()
 * and prctl(); nothing else in the loadgen does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
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
#include "loadgen/os.h"

void *ib_lg_vmem_reserve(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
#if defined(MAP_ANONYMOUS) && defined(MAP_NORESERVE)
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    /* large per-sample arrays: 2 MB pages make first-touch faults rare */
    if (bytes >= ((size_t)4 << 20))
        madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
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

void ib_lg_vmem_prefault(void *p, size_t bytes)
{
    if (!p || !bytes)
        return;
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    /* touch one byte per page (the memory is zero and stays zero) */
    volatile unsigned char *c = p;
    long pg = sysconf(_SC_PAGESIZE);
    size_t step = pg > 0 ? (size_t)pg : 4096;
    for (size_t i = 0; i < bytes; i += step)
        c[i] = 0;
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

/* ---- clock --------------------------------------------------------------- */

#if defined(__x86_64__)
static uint64_t rdtsc(void)
{
    unsigned lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#else
static uint64_t rdtsc(void)
{
    return 0;
}
#endif

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

int ib_lg_clock_tsc_usable(void)
{
#if defined(__x86_64__) && defined(__linux__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int constant = 0, nonstop = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
#else
    return 0;
#endif
}

static double as_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static uint64_t as_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* A (tsc, ns) pair read as close together as possible (min of 3 tries). */
static void pair(uint64_t *tsc, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = rdtsc();
        int64_t t = mono_ns();
        uint64_t b = rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = t;
        }
    }
}

static void set_anchor(ib_lg_clock *c, uint64_t tsc, int64_t ns, double rate)
{
    uint32_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);
    atomic_store_explicit(&c->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&c->a_tsc, tsc, memory_order_relaxed);
    atomic_store_explicit(&c->a_ns, ns, memory_order_relaxed);
    atomic_store_explicit(&c->a_rate, as_bits(rate), memory_order_relaxed);
    atomic_store_explicit(&c->seq, s + 2, memory_order_release);
}

void ib_lg_clock_init(ib_lg_clock *c, int use_tsc)
{
    memset(c, 0, sizeof *c);
    c->use_tsc = use_tsc && ib_lg_clock_tsc_usable();
    if (!c->use_tsc)
        return;
    pair(&c->base_tsc, &c->base_ns);
    uint64_t tsc;
    int64_t ns;
    do { /* about 1 ms for a first rate */
        pair(&tsc, &ns);
    } while (ns - c->base_ns < 1000000);
    if (tsc <= c->base_tsc) {
        c->use_tsc = 0;
        return;
    }
    set_anchor(c, tsc, ns, (double)(ns - c->base_ns) / (double)(tsc - c->base_tsc));
}

void ib_lg_clock_refresh(ib_lg_clock *c)
{
    if (!c->use_tsc)
        return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&c->busy, &expected, 1))
        return;
    uint64_t tsc;
    int64_t ns;
    pair(&tsc, &ns);
    if (tsc > c->base_tsc)
        set_anchor(c, tsc, ns, (double)(ns - c->base_ns) / (double)(tsc - c->base_tsc));
    atomic_store(&c->busy, 0);
}

int64_t ib_lg_clock_now(ib_lg_clock *c)
{
    if (!c->use_tsc)
        return mono_ns();
    for (;;) {
        uint32_t s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
        uint64_t at = atomic_load_explicit(&c->a_tsc, memory_order_relaxed);
        int64_t an = atomic_load_explicit(&c->a_ns, memory_order_relaxed);
        uint64_t ar = atomic_load_explicit(&c->a_rate, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if ((s1 & 1) == 0 && atomic_load_explicit(&c->seq, memory_order_relaxed) == s1) {
            uint64_t now = rdtsc();
            double d = (double)(int64_t)(now - at) * as_double(ar);
            return an + (int64_t)d;
        }
    }
}
