/*
 * trace.c - Chrome trace events in the official layout (logging.h
 * ChromeTracer): header {"traceEvents":[, one event per line followed by a
 * comma, a {"name":"LastTrace"} sentinel, then displayTimeUnit and otherData.
 * Timestamps are microseconds with three decimals since the test start.
 */
#include <stdio.h>

#include "base/common.h"
#include "loadgen/engine_internal.h"
#include "loadgen/trace.h"

int ib_lg_trace_begin(FILE *f)
{
    return fputs("{\"traceEvents\":[\n", f) < 0 ? IB_EIO : IB_OK;
}

static double us(int64_t ns)
{
    return (double)ns / 1000.0;
}

int ib_lg_trace_series(FILE *f, const ib_lg_srt *s, enum ib_lg_scenario scenario,
                       int64_t origin_ns)
{
    if (!s->trace_issue)
        return IB_OK;
    int64_t base = s->start_ns - origin_ns;
    int bad = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        int64_t v = atomic_load_explicit(&s->slot[i], memory_order_relaxed);
        if (v >= 0)
            continue; /* not issued or never completed */
        int64_t lat = -(v + 1);
        int64_t sched = s->trace_sched[i], issue = s->trace_issue[i];
        uint64_t seq = s->first_seq + i;
        bad |= fprintf(f,
                       "{\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"b\",\"pid\":0,\"id\":%llu,"
                       "\"ts\":%.3f,\"args\":{\"sample_seq\":%llu,\"sample_idx\":%llu,"
                       "\"issue_start_ns\":%lld,\"complete_ns\":%lld}},\n",
                       (unsigned long long)seq, us(base + sched), (unsigned long long)seq,
                       (unsigned long long)s->trace_qsl[i], (long long)(issue - sched),
                       (long long)lat) < 0;
        bad |= fprintf(f,
                       "{\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"e\", \"pid\":0,"
                       "\"id\":%llu,\"ts\":%.3f},\n",
                       (unsigned long long)seq, us(base + sched + lat)) < 0;
        if (scenario == IB_LG_SCENARIO_SERVER)
            bad |= fprintf(f,
                           "{\"name\":\"Latency\",\"ph\": \"C\",\"pid\":0,\"ts\":%.3f,\"args\":{ "
                           "\"issue_delay\":%lld,\"issue_to_done\":%lld}},\n",
                           us(base + sched), (long long)(issue - sched),
                           (long long)(sched + lat - issue)) < 0;
    }
    return bad ? IB_EIO : IB_OK;
}

int ib_lg_trace_end(FILE *f, int64_t origin_wall_ns)
{
    int r = fprintf(f,
                    "{\"name\":\"LastTrace\"}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\n"
                    "\"ts\":%.3f,\n\"version\":\"inferbench (MLPerf LoadGen trace layout)\"\n}\n}\n",
                    us(origin_wall_ns));
    return r < 0 ? IB_EIO : IB_OK;
}
