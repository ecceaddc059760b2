/*
 * cpu_threads.c - the CPU backend's one thread pool: libgomp's, which
 * oneDNN (built with the OpenMP runtime on Debian) and our own kernels share.
 *
 * Sizing: `threads` (0 = every CPU of the affinity mask from first_cpu on).
 * Pinning (first_cpu >= 0): at the start of every graph_run a parallel
 * region pins team thread i to the i-th CPU of the mask (wrapping), and the
 * caller's own mask is restored when the run ends, so a caller thread is
 * left as it was found. Pinning every run (one region, ~2 syscalls per thread)
 * keeps several sessions driven from one thread correct without any global
 * state. Spinning: libgomp's default bounded spin is kept (see
 * docs/cpu_backend.md §Threads); nothing here sets OMP_WAIT_POLICY.
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

void cpu_threads_enter(const cpu_ctx *c, cpu_pin *p)
{
    p->saved = 0;
    omp_set_num_threads(c->threads);
    if (!c->cpus)
        return;
    cpu_set_t saved;
    if (sched_getaffinity(0, sizeof saved, &saved) != 0)
        return;
    memcpy(p->mask, &saved, sizeof saved);
    p->saved = 1;
    const int *cpus = c->cpus;
#pragma omp parallel num_threads(c->threads)
    {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[omp_get_thread_num()], &one);
        (void)sched_setaffinity(0, sizeof one, &one);
    }
}

void cpu_threads_leave(const cpu_ctx *c, const cpu_pin *p)
{
    if (!c->cpus || !p->saved)
        return;
    cpu_set_t saved;
    memcpy(&saved, p->mask, sizeof saved);
    (void)sched_setaffinity(0, sizeof saved, &saved);
}
