/*
 * loadgen_overhead.c - how much load the load generator itself sustains
 * (issue 2 "Performance", loadgen.md §5), with a null SUT that completes
 * every query inside issue_query:
 *   - the highest Server target QPS whose run is VALID (10 ms p99 bound) for
 *     each requested duration (default 10 s and 60 s): doubling, then
 *     bisection to --precision;
 *   - Offline samples/s for N samples (default 1M) with one completion call
 *     per sample;
 *   - SingleStream queries/s with loadgen overhead (5 s, informational);
 *   - per run: peak RSS, bytes per query over the idle baseline, median and
 *     p99 issue delay (scheduled -> issued), p50/p99 latency, wall time.
 * Every run is a forked child so peak RSS is per run.
 *
 * --official DIR drives a local build of the official LoadGen side by side:
 * DIR holds its headers (loadgen.h, ...) and libmlperf_loadgen.a (in DIR or
 * DIR/build). A small C++ null-SUT driver is written to a temporary folder
 * and compiled with c++ against it; nothing of it lives in this repository.
 *
 * Figures are printed, never asserted.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inferbench/loadgen.h"

typedef struct run_out {
    int rc;
    int valid;
    double metric; /* completed samples/s (Server), samples/s (Offline), QPS (SingleStream) */
    double p50_us, p99_us;
    double delay_p50_us, delay_p99_us;
    double rss_mb, bytes_per_query, wall_s;
    unsigned long long queries;
} run_out;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---- the null SUT ------------------------------------------------------ */

typedef struct nsut {
    int per_sample; /* one completion call per sample */
} nsut;

static void n_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    nsut *ns = user;
    ib_lg_response r[64];
    if (ns->per_sample || n > 64) {
        for (size_t i = 0; i < n; i++) {
            r[0].id = s[i].id;
            r[0].data = NULL;
            r[0].size = 0;
            r[0].n_tokens = 0;
            ib_lg_samples_complete(t, r, 1);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        r[i].id = s[i].id;
        r[i].data = NULL;
        r[i].size = 0;
        r[i].n_tokens = 0;
    }
    ib_lg_samples_complete(t, r, n);
}

static int n_load(void *user, const ib_lg_sample_index *idx, size_t n)
{
    (void)user;
    (void)idx;
    (void)n;
    return IB_OK;
}

static char g_tmp[256];

static void child_run(const ib_lg_settings *s, int per_sample, int fd)
{
    run_out o;
    memset(&o, 0, sizeof o);
    long base_kb = rss_kb();
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = g_tmp;
    log.write_result_json = false;
    ib_lg_options opts;
    ib_lg_options_defaults(&opts);
    nsut ns = {per_sample};
    ib_lg_sut sut = {&ns, "NullSUT", n_issue, NULL};
    ib_lg_qsl qsl = {NULL, "NullQSL", 1024, 1024, n_load, n_load};
    ib_lg_test *t = NULL;
    ib_lg_result res;
    memset(&res, 0, sizeof res);
    ib_err err;
    double t0 = now_s();
    o.rc = ib_lg_test_create(s, &log, &opts, &t, &err);
    if (o.rc == IB_OK)
        o.rc = ib_lg_test_run(t, &sut, &qsl, &res, &err);
    o.wall_s = now_s() - t0;
    o.valid = res.valid;
    o.metric = s->scenario == IB_LG_SCENARIO_SERVER    ? res.completed_samples_per_sec
               : s->scenario == IB_LG_SCENARIO_OFFLINE ? res.samples_per_second
                                                       : res.qps_with_loadgen_overhead;
    o.p50_us = (double)res.percentile_latency_ns[0] / 1e3;
    o.p99_us = (double)res.percentile_latency_ns[4] / 1e3;
    o.delay_p50_us = (double)res.issue_delay_p50_ns / 1e3;
    o.delay_p99_us = (double)res.issue_delay_p99_ns / 1e3;
    o.queries = (unsigned long long)res.sample_count;
    long peak = rss_kb();
    o.rss_mb = (double)peak / 1024.0;
    o.bytes_per_query = res.sample_count ? (double)(peak - base_kb) * 1024.0 / (double)res.sample_count : 0;
    ib_lg_test_destroy(t);
    if (write(fd, &o, sizeof o) != (ssize_t)sizeof o)
        _exit(1);
    _exit(0);
}

static run_out run_forked(const ib_lg_settings *s, int per_sample)
{
    run_out o;
    memset(&o, 0, sizeof o);
    o.rc = -100;
    int p[2];
    if (pipe(p) != 0)
        return o;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child_run(s, per_sample, p[1]);
    }
    close(p[1]);
    if (pid > 0) {
        if (read(p[0], &o, sizeof o) != (ssize_t)sizeof o)
            o.rc = -101;
        waitpid(pid, NULL, 0);
    }
    close(p[0]);
    return o;
}

static void print_run(const char *what, double target, const run_out *o)
{
    printf("  %-12s target %10.0f  %-7s  rate %12.0f  p50 %8.1f us  p99 %9.1f us  "
           "issue-delay p50 %6.2f us p99 %8.1f us  RSS %7.1f MB  %5.1f B/query  wall %5.1f s\n",
           what, target, o->rc ? "ERROR" : (o->valid ? "VALID" : "INVALID"), o->metric, o->p50_us,
           o->p99_us, o->delay_p50_us, o->delay_p99_us, o->rss_mb, o->bytes_per_query, o->wall_s);
    fflush(stdout);
}

static ib_lg_settings server_settings(double qps, double dur_s)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.mode = IB_LG_MODE_PERFORMANCE;
    s.server_target_qps = qps;
    s.server_target_latency_ns = 10000000;
    s.min_duration_ms = (uint64_t)(dur_s * 1000);
    s.min_query_count = 100;
    return s;
}

/* ---- the official LoadGen (optional) ---------------------------------- */

static const char *k_driver =
    "// null-SUT driver for the official LoadGen, generated by inferbench's\n"
    "// bench/micro/loadgen_overhead (not part of inferbench)\n"
    "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <string>\n"
    "#include <vector>\n#include \"loadgen.h\"\n#include \"query_sample_library.h\"\n"
    "#include \"system_under_test.h\"\n#include \"test_settings.h\"\n"
    "using namespace mlperf;\n"
    "struct S : SystemUnderTest { std::string n{\"NullSUT\"}; bool per;\n"
    "  const std::string& Name() override { return n; }\n"
    "  void IssueQuery(const std::vector<QuerySample>& q) override {\n"
    "    if (per) { for (auto& s : q) { QuerySampleResponse r{s.id, 0, 0};\n"
    "      QuerySamplesComplete(&r, 1); } return; }\n"
    "    std::vector<QuerySampleResponse> r; r.reserve(q.size());\n"
    "    for (auto& s : q) r.push_back({s.id, 0, 0});\n"
    "    QuerySamplesComplete(r.data(), r.size()); }\n"
    "  void FlushQueries() override {} };\n"
    "struct Q : QuerySampleLibrary { std::string n{\"NullQSL\"};\n"
    "  const std::string& Name() override { return n; }\n"
    "  size_t TotalSampleCount() override { return 1024; }\n"
    "  size_t PerformanceSampleCount() override { return 1024; }\n"
    "  void LoadSamplesToRam(const std::vector<QuerySampleIndex>&) override {}\n"
    "  void UnloadSamplesFromRam(const std::vector<QuerySampleIndex>&) override {} };\n"
    "int main(int c, char** v) { if (c < 5) return 2; TestSettings t;\n"
    "  std::string sc = v[1]; double q = atof(v[2]); double d = atof(v[3]);\n"
    "  t.mode = TestMode::PerformanceOnly; t.min_query_count = 100;\n"
    "  t.min_duration_ms = (uint64_t)(d * 1000);\n"
    "  if (sc == \"Server\") { t.scenario = TestScenario::Server; t.server_target_qps = q;\n"
    "    t.server_target_latency_ns = 10000000; }\n"
    "  else { t.scenario = TestScenario::Offline; t.offline_expected_qps = 1;\n"
    "    t.min_query_count = (uint64_t)q; t.min_duration_ms = 0; }\n"
    "  LogSettings l; l.log_output.outdir = v[4]; l.enable_trace = false;\n"
    "  S s; s.per = sc != \"Server\"; Q ql; StartTest(&s, &ql, t, l); return 0; }\n";

static char g_official_bin[512];

static int build_official(const char *dir)
{
    char src[512], lib[600], cmd[4096];
    snprintf(src, sizeof src, "%s/official_driver.cc", g_tmp);
    FILE *f = fopen(src, "w");
    if (!f)
        return -1;
    fputs(k_driver, f);
    fclose(f);
    snprintf(lib, sizeof lib, "%s/libmlperf_loadgen.a", dir);
    if (access(lib, R_OK) != 0)
        snprintf(lib, sizeof lib, "%s/build/libmlperf_loadgen.a", dir);
    snprintf(g_official_bin, sizeof g_official_bin, "%s/official_driver", g_tmp);
    snprintf(cmd, sizeof cmd, "c++ -O2 -std=c++14 -I%s %s %s -lpthread -o %s", dir, src, lib,
             g_official_bin);
    printf("official LoadGen: %s\n", cmd);
    return system(cmd) == 0 ? 0 : -1;
}

/* Parse the official summary: validity, the metric, p50/p99. */
static run_out run_official(const char *scen, double q, double dur)
{
    run_out o;
    memset(&o, 0, sizeof o);
    char dir[512], cmd[4096], path[600], line[512];
    snprintf(dir, sizeof dir, "%s/official_%s", g_tmp, scen);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && /usr/bin/time -f '%%M' -o %s/rss %s %s %.0f %g %s",
             dir, dir, g_official_bin, scen, q, dur, dir);
    double t0 = now_s();
    o.rc = system(cmd) == 0 ? 0 : -1;
    o.wall_s = now_s() - t0;
    snprintf(path, sizeof path, "%s/mlperf_log_summary.txt", dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        double v;
        if (strstr(line, "Result is : VALID"))
            o.valid = 1;
        if (sscanf(line, "Completed samples per second : %lf", &v) == 1 ||
            sscanf(line, "Samples per second: %lf", &v) == 1)
            o.metric = v;
        if (sscanf(line, "50.00 percentile latency (ns) : %lf", &v) == 1)
            o.p50_us = v / 1e3;
        if (sscanf(line, "99.00 percentile latency (ns) : %lf", &v) == 1)
            o.p99_us = v / 1e3;
    }
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "%s/rss", dir);
    f = fopen(path, "r");
    long kb = 0;
    if (f && fscanf(f, "%ld", &kb) == 1)
        o.rss_mb = (double)kb / 1024.0;
    if (f)
        fclose(f);
    return o;
}

/* ---- searches ------------------------------------------------------------ */

typedef run_out (*probe_fn)(double qps, double dur);

static run_out probe_ours(double qps, double dur)
{
    ib_lg_settings s = server_settings(qps, dur);
    return run_forked(&s, 0);
}

static run_out probe_official(double qps, double dur)
{
    return run_official("Server", qps, dur);
}

static double search(const char *who, probe_fn fn, double dur, double start, double max,
                     double precision)
{
    double lo = 0, hi = 0, q = start;
    printf("%s Server, %.0f s, 10 ms p99 bound:\n", who, dur);
    while (q <= max) {
        run_out o = fn(q, dur);
        print_run(who, q, &o);
        if (o.rc == 0 && o.valid) {
            lo = q;
            q *= 2;
        } else {
            hi = q;
            break;
        }
    }
    if (lo == 0 && hi > 0) { /* the start already fails: go down */
        for (q = hi / 2; q >= 1000; q /= 2) {
            run_out o = fn(q, dur);
            print_run(who, q, &o);
            if (o.rc == 0 && o.valid) {
                lo = q;
                break;
            }
            hi = q;
        }
    }
    while (lo > 0 && hi > 0 && hi / lo > 1 + precision) {
        double mid = round((lo + hi) / 2);
        run_out o = fn(mid, dur);
        print_run(who, mid, &o);
        if (o.rc == 0 && o.valid)
            lo = mid;
        else
            hi = mid;
    }
    printf("%s Server %.0f s: highest VALID target QPS %.0f%s\n\n", who, dur, lo,
           hi == 0 ? " (search capped by --qps-max)" : "");
    return lo;
}

static void usage(void)
{
    printf("usage: loadgen_overhead [--durations 10,60] [--qps-start Q] [--qps-max Q]\n"
           "                        [--precision F] [--offline-samples N] [--skip-server]\n"
           "                        [--skip-offline] [--skip-single] [--quick] [--official DIR]\n");
}

int main(int argc, char **argv)
{
    double durs[8] = {10, 60};
    int ndur = 2;
    double qstart = 1000000, qmax = 64e6, precision = 0.05;
    unsigned long long offline_n = 1000000;
    int skip_server = 0, skip_offline = 0, skip_single = 0;
    const char *official = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--durations") && v) {
            ndur = 0;
            for (char *p = argv[++i]; p && *p && ndur < 8;) {
                durs[ndur++] = strtod(p, &p);
                if (*p == ',')
                    p++;
                else
                    break;
            }
        } else if (!strcmp(a, "--qps-start") && v) {
            qstart = strtod(argv[++i], NULL);
        } else if (!strcmp(a, "--qps-max") && v) {
            qmax = strtod(argv[++i], NULL);
        } else if (!strcmp(a, "--precision") && v) {
            precision = strtod(argv[++i], NULL);
        } else if (!strcmp(a, "--offline-samples") && v) {
            offline_n = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--official") && v) {
            official = argv[++i];
        } else if (!strcmp(a, "--skip-server")) {
            skip_server = 1;
        } else if (!strcmp(a, "--skip-offline")) {
            skip_offline = 1;
        } else if (!strcmp(a, "--skip-single")) {
            skip_single = 1;
        } else if (!strcmp(a, "--quick")) {
            durs[0] = 2;
            ndur = 1;
            precision = 0.25;
        } else {
            usage();
            return strcmp(a, "--help") ? 2 : 0;
        }
    }
    snprintf(g_tmp, sizeof g_tmp, "/tmp/ib-loadgen-bench-XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    int have_official = official && build_official(official) == 0;
    if (official && !have_official)
        printf("official LoadGen: could not build the driver against %s; skipped\n", official);
    printf("inferbench loadgen overhead (null SUT, %ld CPUs online)\n\n",
           sysconf(_SC_NPROCESSORS_ONLN));

    if (!skip_offline) {
        ib_lg_settings s;
        ib_lg_settings_defaults(&s);
        s.scenario = IB_LG_SCENARIO_OFFLINE;
        s.min_duration_ms = 0;
        s.min_query_count = offline_n;
        printf("Offline, %llu samples, one completion call per sample:\n", offline_n);
        for (int rep = 0; rep < 3; rep++) {
            run_out o = run_forked(&s, 1);
            print_run("inferbench", (double)offline_n, &o);
        }
        if (have_official) {
            run_out o = run_official("Offline", (double)offline_n, 0);
            print_run("official", (double)offline_n, &o);
        }
        printf("\n");
    }
    if (!skip_single) {
        ib_lg_settings s;
        ib_lg_settings_defaults(&s);
        s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
        s.single_stream_expected_latency_ns = 1000;
        s.min_duration_ms = 5000;
        s.min_query_count = 100;
        printf("SingleStream, 5 s, expected latency 1 us (QPS with loadgen overhead):\n");
        run_out o = run_forked(&s, 0);
        print_run("inferbench", 1e6, &o);
        printf("\n");
    }
    if (!skip_server) {
        for (int d = 0; d < ndur; d++) {
            search("inferbench", probe_ours, durs[d], qstart, qmax, precision);
            if (have_official)
                search("official", probe_official, durs[d], 100000, qmax, precision);
        }
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_tmp);
    return 0;
}
