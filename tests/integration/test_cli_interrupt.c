/*
 * test_cli_interrupt.c - Ctrl-C never destroys results: a real `inferbench run` is interrupted
 * while its test runs, once (it stops issuing, finishes its logs in its staging folder,
 * says INTERRUPTED and exits 130) and twice (it exits at once, 130); each time the earlier
 * run in the same folder is byte for byte what it was, and no run_N is left half made.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "test.h"

#define SCEN "out/s/resnet50/Offline"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* `inferbench run <args>` in the background; the pid is inferbench's own (exec). */
static pid_t spawn(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s/inferbench run --tiny --threads 1 --synth-samples 8 --system s "
             "--output-dir out %s > bg.out 2> bg.err",
             ib_test_bin_dir(), args);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Wait until the run's test has started (its detail log exists in the staging folder). */
static int wait_for_test(pid_t pid)
{
    for (int i = 0; i < 1200; i++) {
        if (ib_test_system("test -f " SCEN "/.partial-*/performance/run_1/mlperf_log_detail.txt") ==
            0)
            return 1;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return 0; /* ended before its test started */
        sleep_ms(100);
    }
    return 0;
}

/* Exit status of pid within limit_s (-1: still running, killed). */
static int wait_exit(pid_t pid, int limit_s)
{
    for (int i = 0; i < limit_s * 10; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        sleep_ms(100);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static const char *const k_files[] = {"performance/run_1/mlperf_log_summary.txt",
                                      "performance/run_1/mlperf_log_detail.txt",
                                      "performance/run_1/mlperf_log_accuracy.json",
                                      "performance/run_1/result.json", "run.json"};
#define N_FILES (sizeof k_files / sizeof k_files[0])

static void snapshot(char **out)
{
    for (size_t i = 0; i < N_FILES; i++) {
        char p[256];
        snprintf(p, sizeof p, SCEN "/%s", k_files[i]);
        out[i] = ib_test_slurp(p);
    }
}

static void same_as(char *const *before)
{
    char *now[N_FILES];
    snapshot(now);
    for (size_t i = 0; i < N_FILES; i++) {
        if (strcmp(before[i], now[i]))
            ib_test_fail(__FILE__, __LINE__, "%s changed under an interrupted run", k_files[i]);
        ib_free(now[i]);
    }
    ASSERT_FALSE(ib_path_exists(SCEN "/performance/run_2")); /* the reservation went away */
}

TEST_TIMEOUT(cli_interrupt_keeps_earlier_run, 300)
{
    /* the earlier run */
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --tiny --threads 1 --synth-samples 8 --quick "
                                 "--system s --output-dir out > first.out 2> first.err",
                                 ib_test_bin_dir()),
                  0);
    char *before[N_FILES];
    snapshot(before);

    /* one SIGINT: a minute-long Offline run stops, finishes its logs, exits 130 */
    pid_t pid = spawn("--min-duration-ms 60000");
    ASSERT_TRUE(pid > 0);
    ASSERT_TRUE(wait_for_test(pid));
    sleep_ms(300);
    time_t t0 = time(NULL);
    kill(pid, SIGINT);
    ASSERT_INT_EQ(wait_exit(pid, 60), 130);
    ASSERT_TRUE(time(NULL) - t0 < 30); /* not the minute the run asked for */
    char *err = ib_test_slurp("bg.err");
    ASSERT_STR_CONTAINS(err, "stopping: finishing the logs");
    ASSERT_STR_CONTAINS(err, "interrupted: nothing earlier in " SCEN " was touched");
    ib_free(err);
    same_as(before);
    /* the interrupted run's own files: complete logs, marked INTERRUPTED */
    ASSERT_INT_EQ(ib_test_system("cp " SCEN "/.partial-*/run.json i_run.json && "
                                 "cp " SCEN "/.partial-*/performance/run_1/result.json i_res.json "
                                 "&& cp " SCEN "/.partial-*/performance/run_1/"
                                 "mlperf_log_summary.txt i_sum.txt"),
                  0);
    ASSERT_STR_CONTAINS(ib_test_slurp("i_run.json"), "\"status\": \"INTERRUPTED\"");
    ASSERT_STR_CONTAINS(ib_test_slurp("i_res.json"), "\"result\": \"INTERRUPTED\"");
    char *sum = ib_test_slurp("i_sum.txt");
    ASSERT_STR_CONTAINS(sum, "Result is : INVALID");
    ASSERT_STR_CONTAINS(sum, "interrupted");
    ASSERT_STR_CONTAINS(sum, "encountered during test.\n"); /* the footer was written */
    ib_free(sum);
    /* a report over the tree sees the earlier run only (the staging folder is hidden) */
    ASSERT_INT_EQ(ib_test_system("%s/inferbench report out --output rep > rep.txt 2>&1",
                                 ib_test_bin_dir()),
                  0);
    ASSERT_STR_CONTAINS(ib_test_slurp("rep.txt"), "1 results of 1 systems");

    /* two SIGINTs: out at once, still 130, the earlier run still intact */
    ASSERT_INT_EQ(ib_test_system("rm -rf " SCEN "/.partial-*"), 0);
    pid = spawn("--min-duration-ms 60000");
    ASSERT_TRUE(pid > 0);
    ASSERT_TRUE(wait_for_test(pid));
    kill(pid, SIGINT);
    sleep_ms(50);
    kill(pid, SIGINT);
    ASSERT_INT_EQ(wait_exit(pid, 10), 130);
    ASSERT_STR_CONTAINS(ib_test_slurp("bg.err"), "stopped at once (second signal)");
    same_as(before);
    for (size_t i = 0; i < N_FILES; i++)
        ib_free(before[i]);
}
