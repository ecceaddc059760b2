/*
 * signals.c - SIGINT/SIGTERM for long runs: the first one sets the stop flag the harness and
 * the loadgen poll (the run stops issuing, finishes its logs and leaves every earlier run as
 * it was), the second exits at once. The flag is process-wide because signals are; it lives
 * here, in the CLI, never in a library.
 */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static _Atomic int g_stop;

static void on_signal(int sig)
{
    (void)sig;
    if (atomic_exchange(&g_stop, 1)) { /* the second one: no more waiting */
        static const char bye[] = "\ninferbench: stopped at once (second signal)\n";
        ssize_t w = write(2, bye, sizeof bye - 1);
        (void)w;
        _exit(IB_EXIT_INTERRUPTED);
    }
    static const char msg[] = "\ninferbench: stopping: finishing the logs of this run (a "
                              "second Ctrl-C quits at once)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
}

const _Atomic int *ib_cli_stop_flag_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &g_stop;
}

bool ib_cli_stop_requested(void)
{
    return atomic_load(&g_stop) != 0;
}
