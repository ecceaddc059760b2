/*
 * progress.c - what a long `inferbench run` says while it works, on stderr:
 *   - the loadgen's progress (ib_run_progress_print): on a terminal one line updated in
 *     place; off a terminal (a log file, CI) a plain line every 10 s;
 *   - between stage messages (model build, data, warm-up: minutes for the big models) a
 *     heartbeat thread shows how long the current stage has run: updated in place on a
 *     terminal, a line every 10 s otherwise, so no phase is silent.
 * The state is the CLI's own (one run per process); libraries stay free of it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/time.h"
#include "cli/cli.h"
#include "cli/run.h"

#define PLAIN_EVERY_NS 10000000000LL /* off a terminal: one line per 10 s */

static struct {
    pthread_mutex_t mu;
    pthread_t th;
    bool running, stop, tty;
    bool line_open;         /* a \r-line is on screen (terminal) */
    char stage[160];        /* the current stage, for the heartbeat */
    int64_t stage_ns;       /* when it began */
    int64_t last_print_ns;  /* the last plain line (off a terminal) */
    int64_t last_lg_ns;     /* the last loadgen progress report */
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void end_line_locked(void)
{
    if (g.line_open)
        fputc('\n', stderr);
    g.line_open = false;
}

void ib_run_progress_print(void *user, const ib_lg_progress *p)
{
    (void)user;
    if (p->elapsed_ns < 2000000000LL)
        return; /* only runs longer than ~2 s get a progress line */
    char bound[48] = "", eta[32] = "";
    if (p->latency_bound_ns > 0)
        snprintf(bound, sizeof bound, " (bound %.3g ms)", (double)p->latency_bound_ns / 1e6);
    if (p->expected_total_ns > p->elapsed_ns)
        snprintf(eta, sizeof eta, " ETA %.0fs",
                 (double)(p->expected_total_ns - p->elapsed_ns) / 1e9);
    pthread_mutex_lock(&g.mu);
    int64_t now = ib_time_ns();
    g.last_lg_ns = now;
    if (g.tty || now - g.last_print_ns >= PLAIN_EVERY_NS) {
        fprintf(stderr,
                "%s[%s] %.1fs  issued %llu  done %llu  %.0f/s  target-percentile latency %.1f "
                "us%s%s%s",
                g.tty ? "\r" : "", p->phase, (double)p->elapsed_ns / 1e9,
                (unsigned long long)p->issued_queries, (unsigned long long)p->completed_samples,
                p->current_qps, (double)p->running_percentile_ns / 1e3, bound, eta,
                g.tty ? "\033[K" : "\n");
        fflush(stderr);
        g.line_open = g.tty;
        g.last_print_ns = now;
    }
    pthread_mutex_unlock(&g.mu);
}

void ib_run_progress_done(void)
{
    pthread_mutex_lock(&g.mu);
    end_line_locked();
    pthread_mutex_unlock(&g.mu);
}

void ib_run_stage(const char *msg)
{
    pthread_mutex_lock(&g.mu);
    end_line_locked();
    fprintf(stderr, "inferbench run: %s\n", msg);
    snprintf(g.stage, sizeof g.stage, "%.*s", (int)strcspn(msg, ":"), msg);
    g.stage_ns = g.last_print_ns = ib_time_ns();
    pthread_mutex_unlock(&g.mu);
}

static void *heartbeat(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&g.mu);
        if (g.stop) {
            pthread_mutex_unlock(&g.mu);
            return NULL;
        }
        int64_t now = ib_time_ns();
        bool lg_active = now - g.last_lg_ns < 3000000000LL;
        double secs = (double)(now - g.stage_ns) / 1e9;
        if (g.stage[0] && !lg_active && secs >= 3) {
            if (g.tty) {
                fprintf(stderr, "\r  ... %s: %.0f s\033[K", g.stage, secs);
                g.line_open = true;
            } else if (now - g.last_print_ns >= PLAIN_EVERY_NS) {
                fprintf(stderr, "inferbench run:   ... %s: %.0f s\n", g.stage, secs);
                g.last_print_ns = now;
            }
            fflush(stderr);
        }
        pthread_mutex_unlock(&g.mu);
    }
}

void ib_run_heartbeat_start(void)
{
    pthread_mutex_lock(&g.mu);
    g.tty = isatty(2);
    g.stop = false;
    g.stage[0] = '\0';
    g.running = pthread_create(&g.th, NULL, heartbeat, NULL) == 0;
    pthread_mutex_unlock(&g.mu);
}

void ib_run_heartbeat_stop(void)
{
    pthread_mutex_lock(&g.mu);
    bool was = g.running;
    g.stop = true;
    g.running = false;
    pthread_mutex_unlock(&g.mu);
    if (was)
        pthread_join(g.th, NULL);
    ib_run_progress_done();
}
