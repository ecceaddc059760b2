/*
 * thread.h - thin pthreads wrappers (libuv style). Init functions return a
 * status; lock/unlock/wait failures abort because they are bugs, not runtime
 * conditions. Debug builds (IB_DEBUG) use error-checking mutexes.
 */
#ifndef IB_BASE_THREAD_H
#define IB_BASE_THREAD_H

#include <pthread.h>
#include <stdint.h>

typedef struct ib_mutex {
    pthread_mutex_t m;
} ib_mutex;
typedef struct ib_cond {
    pthread_cond_t c;
} ib_cond;
typedef struct ib_thread {
    pthread_t t;
} ib_thread;
typedef pthread_once_t ib_once;
#define IB_ONCE_INIT PTHREAD_ONCE_INIT

int ib_mutex_init(ib_mutex *m);
void ib_mutex_destroy(ib_mutex *m);
void ib_mutex_lock(ib_mutex *m);
void ib_mutex_unlock(ib_mutex *m);

/* Condition variables use CLOCK_MONOTONIC for timed waits. */
int ib_cond_init(ib_cond *c);
void ib_cond_destroy(ib_cond *c);
void ib_cond_signal(ib_cond *c);
void ib_cond_broadcast(ib_cond *c);
void ib_cond_wait(ib_cond *c, ib_mutex *m);
/* Wait until monotonic deadline; returns 0 when signalled, IB_ETIMEOUT otherwise. */
int ib_cond_wait_until(ib_cond *c, ib_mutex *m, int64_t deadline_ns);

typedef void *(*ib_thread_fn)(void *arg);
int ib_thread_create(ib_thread *t, ib_thread_fn fn, void *arg);
void ib_thread_join(ib_thread *t);

/* Pin the calling thread to one CPU (index into the affinity mask); best effort. */
int ib_thread_pin_self(int cpu);
/* Number of CPUs in the process affinity mask (>= 1). */
int ib_cpu_count(void);
/* The index-th CPU id in the affinity mask, or -1. */
int ib_cpu_nth(int index);
/* OS thread id of the caller (gettid). */
long ib_thread_os_id(void);

void ib_once_run(ib_once *once, void (*fn)(void));

#endif
