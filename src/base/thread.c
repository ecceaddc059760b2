/*
 * thread.c - pthread wrappers, CPU affinity helpers and OS thread ids.
 * Linux-specific pieces (sched_getaffinity, gettid) are isolated here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/common.h"
#include "base/thread.h"

static void check(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "inferbench: fatal: %s failed: %d\n", what, rc);
        abort();
    }
}

int ib_mutex_init(ib_mutex *m)
{
#ifdef IB_DEBUG
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a))
        return IB_ENOMEM;
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    int rc = pthread_mutex_init(&m->m, &a);
    pthread_mutexattr_destroy(&a);
#else
    int rc = pthread_mutex_init(&m->m, NULL);
#endif
    return rc ? IB_ENOMEM : IB_OK;
}

void ib_mutex_destroy(ib_mutex *m)
{
    check(pthread_mutex_destroy(&m->m), "pthread_mutex_destroy");
}

void ib_mutex_lock(ib_mutex *m)
{
    check(pthread_mutex_lock(&m->m), "pthread_mutex_lock");
}

void ib_mutex_unlock(ib_mutex *m)
{
    check(pthread_mutex_unlock(&m->m), "pthread_mutex_unlock");
}

int ib_cond_init(ib_cond *c)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a))
        return IB_ENOMEM;
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&c->c, &a);
    pthread_condattr_destroy(&a);
    return rc ? IB_ENOMEM : IB_OK;
}

void ib_cond_destroy(ib_cond *c)
{
    check(pthread_cond_destroy(&c->c), "pthread_cond_destroy");
}

void ib_cond_signal(ib_cond *c)
{
    check(pthread_cond_signal(&c->c), "pthread_cond_signal");
}

void ib_cond_broadcast(ib_cond *c)
{
    check(pthread_cond_broadcast(&c->c), "pthread_cond_broadcast");
}

void ib_cond_wait(ib_cond *c, ib_mutex *m)
{
    check(pthread_cond_wait(&c->c, &m->m), "pthread_cond_wait");
}

int ib_cond_wait_until(ib_cond *c, ib_mutex *m, int64_t deadline_ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000);
    ts.tv_nsec = (long)(deadline_ns % 1000000000);
    int rc = pthread_cond_timedwait(&c->c, &m->m, &ts);
    if (rc == ETIMEDOUT)
        return IB_ETIMEOUT;
    check(rc, "pthread_cond_timedwait");
    return IB_OK;
}

int ib_thread_create(ib_thread *t, ib_thread_fn fn, void *arg)
{
    int rc = pthread_create(&t->t, NULL, fn, arg);
    return rc ? (rc == EAGAIN ? IB_ENOMEM : IB_EINVAL) : IB_OK;
}

void ib_thread_join(ib_thread *t)
{
    check(pthread_join(t->t, NULL), "pthread_join");
}

int ib_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

int ib_cpu_nth(int index)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &set)) {
            if (seen == index)
                return cpu;
            seen++;
        }
    }
    return -1;
}

int ib_thread_pin_self(int cpu)
{
    cpu_set_t set;
    if (cpu < 0)
        return IB_EINVAL;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) ? IB_EINVAL : IB_OK;
}

long ib_thread_os_id(void)
{
    return (long)syscall(SYS_gettid);
}

void ib_once_run(ib_once *once, void (*fn)(void))
{
    check(pthread_once(once, fn), "pthread_once");
}
