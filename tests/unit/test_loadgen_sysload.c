/*
 * test_loadgen_sysload.c - the load check (src/loadgen/sysload.c): CPU time other processes
 * take during a test is measured, and above IB_LG_BUSY_PCT a result is labelled "machine
 * busy". Two child processes that spin on every CPU must show up; the label's wording and
 * threshold are checked on results built by hand.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inferbench/loadgen.h"
#include "loadgen/sysload.h"
#include "test.h"

static void spin_for(double s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < s);
}

TEST_TIMEOUT(loadgen_sysload_sees_other_processes, 30)
{
    if (access("/proc/stat", R_OK) != 0)
        TEST_SKIP("no /proc/stat on this system");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    if (ncpu > 8)
        ncpu = 8;
    ib_lg_sysload s;
    ib_lg_sysload_begin(&s);
    ASSERT_TRUE(s.ok);
    pid_t kids[8];
    for (long k = 0; k < ncpu; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            spin_for(0.8);
            _exit(0);
        }
    }
    for (long k = 0; k < ncpu; k++)
        waitpid(kids[k], NULL, 0);
    double pct = ib_lg_sysload_others_pct(&s);
    /* every CPU spun for most of the window: well over the threshold */
    ASSERT_TRUE(pct > 50.0);
    ASSERT_TRUE(pct <= 100.0);
}

TEST(loadgen_sysload_label)
{
    ib_lg_result r;
    memset(&r, 0, sizeof r);
    char buf[200];
    r.others_cpu_pct = -1; /* not measured */
    ASSERT_FALSE(ib_lg_busy_label(&r, buf, sizeof buf));
    r.others_cpu_pct = IB_LG_BUSY_PCT; /* at the threshold: not busy */
    ASSERT_FALSE(ib_lg_busy_label(&r, buf, sizeof buf));
    r.others_cpu_pct = 37.4;
    ASSERT_TRUE(ib_lg_busy_label(&r, buf, sizeof buf));
    ASSERT_STR_EQ(buf, "machine busy: 37 % of the CPUs used by other processes during the test "
                       "(its figures may be low)");
}
