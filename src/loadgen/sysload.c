/*
 * sysload.c - other processes' share of the CPUs during a test (sysload.h).
 */
#define _DEFAULT_SOURCE /* getrusage's struct rusage fields */
#include "loadgen/sysload.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/time.h"

/* Busy CPU seconds of the whole machine (all but idle and iowait) and the CPU count. */
static bool machine_busy(double *busy_s, int *ncpu)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return false;
    char line[512];
    unsigned long long v[8] = {0};
    bool ok = false;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "cpu ", 4))
            ok = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                        &v[3], &v[4], &v[5], &v[6], &v[7]) >= 4;
        else if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9')
            n++;
    }
    fclose(f);
    long tck = sysconf(_SC_CLK_TCK);
    if (!ok || n <= 0 || tck <= 0)
        return false;
    /* user nice system [idle iowait] irq softirq steal */
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    *busy_s = (double)busy / (double)tck;
    *ncpu = n;
    return true;
}

static double self_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void ib_lg_sysload_begin(ib_lg_sysload *s)
{
    memset(s, 0, sizeof *s);
    s->self_s = self_cpu_s();
    s->wall_ns = ib_time_ns();
    s->ok = s->self_s >= 0 && machine_busy(&s->busy_s, &s->ncpu);
}

double ib_lg_sysload_others_pct(const ib_lg_sysload *s)
{
    double busy = 0, self = self_cpu_s();
    int n = 0;
    if (!s->ok || self < 0 || !machine_busy(&busy, &n))
        return -1;
    double wall = (double)(ib_time_ns() - s->wall_ns) / 1e9;
    if (wall < 0.05)
        return -1; /* too short to say anything (the counters tick at 10 ms) */
    double others = (busy - s->busy_s) - (self - s->self_s);
    double pct = 100 * others / (wall * (double)s->ncpu);
    return pct < 0 ? 0 : pct > 100 ? 100 : pct;
}
