/*
 * time.c - monotonic and wall clocks, absolute sleeping (clock_nanosleep with
 * TIMER_ABSTIME, retried on EINTR).
 */
#include <errno.h>
#include <time.h>

#include "base/time.h"

int64_t ib_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

int64_t ib_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

void ib_sleep_until_ns(int64_t deadline_ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000);
    ts.tv_nsec = (long)(deadline_ns % 1000000000);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void ib_sleep_ns(int64_t ns)
{
    if (ns > 0)
        ib_sleep_until_ns(ib_time_ns() + ns);
}
