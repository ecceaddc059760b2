/*
 * cpu_threads.c - the CPU backend's one thread pool: libgomp's, which
 * oneDNN (built with the OpenMP runtime on Debian) and our own kernels share.
 *
 * Sizing: `threads` (0 = every CPU of the affinity mask from first_cpu on).
 * Pinning (first_cpu >= 0): team thread i runs on the i-th CPU of the mask
 * from first_cpu (wrapping). The pool's workers are pinned in one parallel
 * region the first time a thread runs with a given CPU list; the caller
 * itself is pinned for the duration of each run (one sched_setaffinity on
 * itself) and its own mask is restored afterwards, so the caller is left as
 * it was found. libgomp keeps one pool per calling thread; the only state we
 * keep outside the context is one thread-local word mirroring that pool's
 * pinning (which CPU list it was last pinned to), so several sessions
 * driven from one thread with different CPU lists re-pin correctly.
 * Spinning: libgomp's default bounded spin is kept (docs/cpu_backend.md
 * §Threads); nothing here sets OMP_WAIT_POLICY.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "base/thread.h"

int cpu_threads_resolve(const ib_backend_config *cfg, int *threads, int **cpus, ib_err *err)
{
    int ncpu = ib_cpu_count();
    *cpus = NULL;
    if (cfg->first_cpu < 0) {
        *threads = cfg->threads > 0 ? cfg->threads : ncpu;
        return IB_OK;
    }
    if (cfg->first_cpu >= ncpu)
        return ib_err_set(err, IB_EINVAL,
                          "cpu backend: first_cpu=%d but the affinity mask has %d CPUs (use "
                          "0..%d, or -1 for no pinning)",
                          cfg->first_cpu, ncpu, ncpu - 1);
    int n = cfg->threads > 0 ? cfg->threads : ncpu - cfg->first_cpu;
    int *list = ib_malloc((size_t)n * sizeof *list);
    if (!list)
        return ib_err_set(err, IB_ENOMEM, "cpu backend: out of memory");
    for (int i = 0; i < n; i++) {
        list[i] = ib_cpu_nth((cfg->first_cpu + i) % ncpu);
        if (list[i] < 0) {
            ib_free(list);
            return ib_err_set(err, IB_EINVAL, "cpu backend: cannot read the affinity mask");
        }
    }
    *threads = n;
    *cpus = list;
    return IB_OK;
}

_Static_assert(sizeof(cpu_set_t) <= sizeof(((cpu_pin *)0)->mask), "cpu_pin too small");

/* Signature of a CPU list (never 0). */
static uint64_t pin_sig(const cpu_ctx *c)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)c->threads;
    for (int i = 0; i < c->threads; i++)
        h = (h ^ (uint64_t)(unsigned)c->cpus[i]) * 1099511628211ull;
    return h | 1u;
}

/* The CPU list this thread's OpenMP pool was last pinned to (see the header). */
static _Thread_local uint64_t tl_pool_sig;

void cpu_threads_enter(const cpu_ctx *c, cpu_pin *p)
{
    p->saved = 0;
    omp_set_num_threads(c->threads);
    if (!c->cpus)
        return;
    cpu_set_t saved, one;
    if (sched_getaffinity(0, sizeof saved, &saved) != 0)
        return;
    memcpy(p->mask, &saved, sizeof saved);
    p->saved = 1;
    uint64_t sig = pin_sig(c);
    if (tl_pool_sig == sig) { /* workers already in place: pin only ourselves */
        CPU_ZERO(&one);
        CPU_SET(c->cpus[0], &one);
        (void)sched_setaffinity(0, sizeof one, &one);
        return;
    }
    const int *cpus = c->cpus;
#pragma omp parallel num_threads(c->threads)
    {
        cpu_set_t mine;
        CPU_ZERO(&mine);
        CPU_SET(cpus[omp_get_thread_num()], &mine);
        (void)sched_setaffinity(0, sizeof mine, &mine);
    }
    tl_pool_sig = sig;
}

void cpu_threads_leave(const cpu_ctx *c, const cpu_pin *p)
{
    if (!c->cpus || !p->saved)
        return;
    cpu_set_t saved;
    memcpy(&saved, p->mask, sizeof saved);
    (void)sched_setaffinity(0, sizeof saved, &saved);
}
