/*
 * time.h - the one clock of inferbench: CLOCK_MONOTONIC in int64 nanoseconds,
 * plus the wall clock where a file format asks for it, and precise sleeping.
 */
#ifndef IB_BASE_TIME_H
#define IB_BASE_TIME_H

#include <stdint.h>

/* Monotonic time in ns (CLOCK_MONOTONIC). Thread-safe, never allocates. */
int64_t ib_time_ns(void);

/* Wall-clock time in ns since the Unix epoch (CLOCK_REALTIME). */
int64_t ib_wall_ns(void);

/* Sleep until the monotonic time `deadline_ns` (absolute clock_nanosleep). */
void ib_sleep_until_ns(int64_t deadline_ns);

/* Sleep for `ns` nanoseconds (relative). */
void ib_sleep_ns(int64_t ns);

#endif
