/*
 * kserve_loopback.c - what the network SUT costs (issue 29 "Targets"): the null model
 * served by `serve` (harness/serve.h, libmicrohttpd) in this process and driven over
 * loopback by the network SUT (harness/nsut.h, libcurl multi), client and server sharing
 * this machine's CPUs, beside the in-process null SUT in the same run (the peer: the
 * same loadgen without the network):
 *   - Server: the target QPS steps (default 10000, 20000, 40000) with a 10 ms p99
 *     bound, --duration seconds each: completed QPS, p99 latency, VALID or not;
 *   - Offline: --samples samples in requests of --batch (default 1024) samples, and in
 *     requests of 1 sample (the per-request cost): samples/s and requests/s.
 * Figures are printed, never asserted.
 *
 *   build/release/bench/micro/kserve_loopback [--duration S] [--samples N] [--batch N]
 *                                             [--concurrency N] [--qps Q,Q,...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/nsut.h"
#include "harness/serve.h"
#include "inferbench/loadgen.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int qsl_load(void *u, const ib_lg_sample_index *i, size_t n)
{
    (void)u;
    (void)i;
    (void)n;
    return IB_OK;
}

/* the peer: completes every sample inside issue_query (payload-free) */
static void local_issue(void *u, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    (void)u;
    ib_lg_response r[256];
    for (size_t done = 0; done < n;) {
        size_t c = n - done < 256 ? n - done : 256;
        for (size_t i = 0; i < c; i++)
            r[i] = (ib_lg_response){s[done + i].id, NULL, 0, 0};
        ib_lg_samples_complete(t, r, c);
        done += c;
    }
}

typedef struct figures {
    int rc;
    bool valid;
    double metric, p99_ms, wall_s;
    uint64_t requests;
} figures;

static figures run(ib_lg_settings *s, const char *endpoint, int64_t batch, int conc)
{
    figures f;
    memset(&f, 0, sizeof f);
    ib_nsut *net = NULL;
    ib_lg_sut sut = {NULL, "LocalNull", local_issue, NULL};
    ib_err err;
    ib_err_clear(&err);
    if (endpoint) {
        const char *eps[1] = {endpoint};
        ib_nsut_opts o = {.endpoints = eps,
                          .n_endpoints = 1,
                          .concurrency = conc,
                          .max_batch = batch,
                          .request_timeout_ms = 60000};
        if ((f.rc = ib_nsut_create(&o, &net, &err))) {
            fprintf(stderr, "kserve_loopback: %s\n", err.msg);
            return f;
        }
        sut = ib_nsut_table(net);
    }
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "/tmp";
    log.prefix = "kserve_loopback_";
    ib_lg_options lo;
    ib_lg_options_defaults(&lo);
    ib_lg_qsl qsl = {NULL, "NullQSL", 1024, 1024, qsl_load, qsl_load};
    ib_lg_test *t = NULL;
    static ib_lg_result res;
    memset(&res, 0, sizeof res);
    double t0 = now_s();
    f.rc = ib_lg_test_create(s, &log, &lo, &t, &err);
    if (!f.rc)
        f.rc = ib_lg_test_run(t, &sut, &qsl, &res, &err);
    if (net) {
        ib_nsut_take_error(net, NULL);
        ib_nsut_stats st;
        ib_nsut_get_stats(net, &st);
        f.requests = st.requests;
        ib_nsut_destroy(net);
    }
    ib_lg_test_destroy(t);
    f.wall_s = now_s() - t0;
    if (f.rc)
        fprintf(stderr, "kserve_loopback: %s\n", err.msg);
    f.valid = res.valid;
    f.metric = s->scenario == IB_LG_SCENARIO_SERVER ? res.completed_samples_per_sec
                                                    : res.samples_per_second;
    f.p99_ms = (double)res.percentile_latency_ns[4] / 1e6;
    return f;
}

int main(int argc, char **argv)
{
    double duration = 10;
    uint64_t samples = 1000000;
    int64_t batch = 1024;
    int conc = 2;
    char qps_list[256] = "10000,20000,40000";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--duration") && i + 1 < argc)
            duration = atof(argv[++i]);
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
            samples = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--concurrency") && i + 1 < argc)
            conc = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--qps") && i + 1 < argc)
            snprintf(qps_list, sizeof qps_list, "%s", argv[++i]);
        else {
            fprintf(stderr,
                    "usage: kserve_loopback [--duration S] [--samples N] [--batch N] "
                    "[--concurrency N] [--qps Q,Q,...]\n");
            return 2;
        }
    }
    ib_serve_opts so;
    ib_serve_opts_defaults(&so);
    so.null_model = true;
    so.host = "127.0.0.1";
    ib_serve *srv = NULL;
    ib_err err;
    ib_err_clear(&err);
    if (ib_serve_start(&so, &srv, &err)) {
        fprintf(stderr, "kserve_loopback: %s\n", err.msg);
        return 1;
    }
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", ib_serve_port(srv));
    printf("null model served at %s (libmicrohttpd, thread per connection); client: libcurl "
           "multi, %d request(s) in flight; both in this process\n\n",
           ep, conc);
    printf("%-9s %-26s %14s %10s %8s %10s\n", "scenario", "SUT", "samples/s", "p99 ms", "result",
           "requests/s");
    char *save = NULL;
    for (char *q = strtok_r(qps_list, ",", &save); q; q = strtok_r(NULL, ",", &save)) {
        for (int net = 1; net >= 0; net--) {
            ib_lg_settings s;
            ib_lg_settings_defaults(&s);
            s.scenario = IB_LG_SCENARIO_SERVER;
            s.server_target_qps = atof(q);
            s.server_target_latency_ns = 10000000;
            s.min_duration_ms = (uint64_t)(duration * 1000);
            s.min_query_count = 100;
            figures f = run(&s, net ? ep : NULL, 16, conc);
            char who[64];
            snprintf(who, sizeof who, "%s @%s QPS", net ? "kserve loopback" : "in-process", q);
            printf("%-9s %-26s %14.0f %10.3f %8s %10.0f\n", "Server", who, f.metric, f.p99_ms,
                   f.rc ? "ERROR" : f.valid ? "VALID" : "INVALID",
                   net ? (double)f.requests / f.wall_s : 0.0);
        }
    }
    int64_t batches[2] = {batch, 1};
    for (int b = 0; b < 2; b++) {
        for (int net = 1; net >= 0; net--) {
            if (!net && b == 1)
                continue;
            ib_lg_settings s;
            ib_lg_settings_defaults(&s);
            s.scenario = IB_LG_SCENARIO_OFFLINE;
            uint64_t n = batches[b] == 1 ? samples / 20 : samples;
            s.offline_expected_qps = (double)n; /* one query of 1.1 n samples (1 s x 1.1) */
            s.min_duration_ms = 1000;
            s.min_query_count = 1;
            figures f = run(&s, net ? ep : NULL, batches[b], conc);
            /* again with the query sized from that rate, so the run lasts min_duration */
            double again = f.metric * 1.3 < 3e7 ? f.metric * 1.3 : 3e7;
            if (!f.rc && !f.valid && again > s.offline_expected_qps) {
                s.offline_expected_qps = again;
                f = run(&s, net ? ep : NULL, batches[b], conc);
            }
            char who[64];
            snprintf(who, sizeof who, "%s, batch %lld", net ? "kserve loopback" : "in-process",
                     (long long)batches[b]);
            printf("%-9s %-26s %14.0f %10.3f %8s %10.0f\n", "Offline", who, f.metric, f.p99_ms,
                   f.rc ? "ERROR" : f.valid ? "VALID" : "INVALID",
                   net ? (double)f.requests / f.wall_s : 0.0);
        }
    }
    ib_serve_stats st;
    ib_serve_get_stats(srv, &st);
    printf("\nserver: %llu infer requests, %llu rows\n", (unsigned long long)st.requests,
           (unsigned long long)st.rows);
    ib_serve_stop(srv);
    return 0;
}
