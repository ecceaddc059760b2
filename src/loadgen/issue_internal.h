/*
 * issue_internal.h - what the single-threaded issue loops (issue.c) share
 * with the Server issue threads (issue_threads.c): the per-series context,
 * the adaptive sleep-then-spin wait, marking samples issued, and the stop
 * messages. Internal to src/loadgen.
 */
#ifndef IB_LOADGEN_ISSUE_INTERNAL_H
#define IB_LOADGEN_ISSUE_INTERNAL_H

#include "loadgen/engine_internal.h"

/* Waiting for a scheduled time: sleep (absolute clock_nanosleep) until
 * `margin` before it, then spin. The margin adapts to how late this machine
 * wakes up (virtual machines are often 0.1-2 ms late): doubled after a wake
 * past the deadline, slowly shrunk toward twice the observed lateness. */
#define IB_LG_SPIN_MIN_NS 20000
#define IB_LG_SPIN_MAX_NS 2000000
#define IB_LG_TIMER_SLACK_NS 1000
/* At most this many overdue queries join one coalesced issue_query call (the
 * rest follow in the next call, immediately). */
#define IB_LG_COALESCE_MAX 4096

typedef struct ib_lg_sleeper {
    int64_t margin;
} ib_lg_sleeper;

typedef struct ib_lg_issue_ctx {
    ib_lg_test *t;
    ib_lg_series *series;
    ib_lg_srt *s;
    ib_lg_sample *buf; /* samples of one issue_query call */
    size_t buf_cap;
    bool log_all;      /* accuracy series: every response is logged */
    bool may_log;      /* performance series with a non-zero log probability */
    bool trace;
    bool accuracy;
    ib_lg_sleeper sl;
} ib_lg_issue_ctx;

/* Wait until abs (engine clock); returns the time at or after it. */
int64_t ib_lg_issue_wait_until(ib_lg_clock *clk, ib_lg_sleeper *sl, int64_t abs);
/* Mark q's samples pending (scheduled at sched_rel), decide which are
 * logged, and write them to c->buf[at ...]. Returns the sample count. */
size_t ib_lg_issue_prepare(ib_lg_issue_ctx *c, const ib_lg_query *q, int64_t sched_rel, size_t at);
void ib_lg_issue_log_error(ib_lg_test *t, const char *msg);
void ib_lg_issue_publish(ib_lg_test *t, const ib_lg_issue_out *o);
/* Server with server_num_issue_query_threads > 0 (issue_threads.c). */
int ib_lg_issue_server_threads(ib_lg_issue_ctx *c, bool bound_abort, ib_lg_issue_out *o);

#endif
