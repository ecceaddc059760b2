/*
 * test_loadgen_engine.c - the test engine end to end: handles without
 * global state (two tests in a row and two at once), SubmissionRun sequence
 * ids, the stop conditions and their official messages (max_query_count,
 * max_duration, max_async_queries, ran out of generated queries), Server
 * coalescing, asynchronous completion, v1.1 fixed-rate MultiStream tick
 * skipping, FindPeakPerformance, progress reports, the trace file,
 * result.json, log file naming and accuracy-log payloads.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "inferbench/loadgen.h"
#include "test.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

typedef struct esut {
    int delay_us;        /* synchronous delay before completing */
    int block_first_us;  /* delay only in the first call */
    int hold_until_flush;
    int payload_var;     /* payload of qsl_idx % 7 bytes */
    uint64_t calls, samples, max_call;
    ib_lg_sample held[4096];
    size_t nheld;
    int slow_query;      /* v1.1 MS: query number completed late */
    int slow_us;
} esut;

static void e_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    esut *e = user;
    if (e->block_first_us && e->calls == 0)
        sleep_us((long)e->block_first_us);
    if (e->slow_us && (int)e->calls == e->slow_query)
        sleep_us((long)e->slow_us);
    e->calls++;
    if (n > e->max_call)
        e->max_call = n;
    if (e->delay_us)
        sleep_us((long)e->delay_us);
    static uint8_t pay[4096][8];
    for (size_t i = 0; i < n; i++) {
        e->samples++;
        if (e->hold_until_flush && e->nheld < 4096) {
            e->held[e->nheld++] = s[i];
            continue;
        }
        ib_lg_response r = {s[i].id, NULL, 0, 0};
        if (e->payload_var) {
            size_t len = s[i].index % 7;
            for (size_t b = 0; b < len; b++)
                pay[i % 4096][b] = (uint8_t)(s[i].index * 31 + b);
            r.data = pay[i % 4096];
            r.size = len;
        }
        ib_lg_samples_complete(t, &r, 1);
    }
}

static void e_flush(void *user, ib_lg_test *t)
{
    esut *e = user;
    for (size_t i = 0; i < e->nheld; i++) {
        ib_lg_response r = {e->held[i].id, NULL, 0, 0};
        ib_lg_samples_complete(t, &r, 1);
    }
    e->nheld = 0;
}

static int e_load(void *user, const ib_lg_sample_index *idx, size_t n)
{
    (void)user;
    (void)idx;
    (void)n;
    return IB_OK;
}

static ib_lg_settings server(double qps, uint64_t dur_ms)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.server_target_qps = qps;
    s.server_target_latency_ns = 100000000;
    s.min_duration_ms = dur_ms;
    s.min_query_count = 10;
    return s;
}

typedef struct run_cfg {
    const char *outdir;
    ib_lg_progress_fn progress;
    void *progress_user;
    bool trace;
    const char *prefix, *suffix;
    bool datetime;
    size_t total, perf;
} run_cfg;

static int run(const ib_lg_settings *s, esut *e, const run_cfg *c, ib_lg_result *res)
{
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = c->outdir;
    log.enable_trace = c->trace;
    if (c->prefix)
        log.prefix = c->prefix;
    if (c->suffix)
        log.suffix = c->suffix;
    log.prefix_with_datetime = c->datetime;
    ib_lg_options o;
    ib_lg_options_defaults(&o);
    o.sut_timeout_ms = 10000;
    o.progress = c->progress;
    o.progress_user = c->progress_user;
    o.progress_interval_ms = 50;
    static const char *const labels[] = {"synthetic", "unit test"};
    o.labels = labels;
    o.label_count = 2;
    o.model_name = "testmodel";
    ib_lg_sut sut = {e, "EngineSUT", e_issue, e_flush};
    ib_lg_qsl qsl = {NULL, "EngineQSL", c->total ? c->total : 256, c->perf ? c->perf : 256,
                     e_load, e_load};
    ib_lg_test *t = NULL;
    ib_err err;
    int rc = ib_lg_test_create(s, &log, &o, &t, &err);
    if (rc == IB_OK)
        rc = ib_lg_test_run(t, &sut, &qsl, res, &err);
    if (rc)
        fprintf(stderr, "# run: %s\n", err.msg);
    ib_lg_test_destroy(t);
    return rc;
}

static char *file(const char *dir, const char *name)
{
    char path[512], *text = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ib_file_read_all(path, 0, &text, &len, NULL))
        return NULL;
    return text;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

TEST_TIMEOUT(loadgen_engine_two_tests_in_a_row, 60)
{
    esut e = {0};
    ib_lg_result a, b;
    ib_lg_settings s = server(1000, 100);
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "one"}, &a));
    s.scenario = IB_LG_SCENARIO_OFFLINE;
    s.min_duration_ms = 0;
    s.min_query_count = 500;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "two"}, &b));
    ASSERT_INT_EQ(b.sample_count, 500);
    ASSERT_TRUE(a.sample_count >= 50);
    /* each test restarts its sequence ids at 0 */
    char *acc = file("two", "mlperf_log_accuracy.json");
    ASSERT_STR_EQ(acc, "[\n]\n");
    ib_free(acc);
}

typedef struct par_arg {
    const char *dir;
    int rc;
    ib_lg_result res;
} par_arg;

static void *par_run(void *p)
{
    par_arg *a = p;
    esut e = {0};
    ib_lg_settings s = server(2000, 300);
    s.accuracy_log_probability = 1.0; /* exercise the payload path concurrently */
    a->rc = run(&s, &e, &(run_cfg){.outdir = a->dir}, &a->res);
    return NULL;
}

TEST_TIMEOUT(loadgen_engine_two_tests_at_once, 60)
{
    par_arg a = {"par_a", -1, {0}}, b = {"par_b", -1, {0}};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, par_run, &a);
    pthread_create(&tb, NULL, par_run, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ASSERT_OK(a.rc);
    ASSERT_OK(b.rc);
    ASSERT_INT_EQ(a.res.duplicate_responses + a.res.unknown_responses, 0);
    ASSERT_INT_EQ(b.res.duplicate_responses + b.res.unknown_responses, 0);
    /* same seeds, same schedule: identical accuracy logs */
    char *x = file("par_a", "mlperf_log_accuracy.json"), *y = file("par_b", "mlperf_log_accuracy.json");
    ASSERT_NOT_NULL(x);
    ASSERT_NOT_NULL(y);
    ASSERT_STR_EQ(x, y);
    ASSERT_INT_EQ(a.res.accuracy_log_entries, a.res.sample_count);
    ib_free(x);
    ib_free(y);
}

TEST_TIMEOUT(loadgen_engine_submission_run_sequence_ids, 60)
{
    esut e = {0};
    ib_lg_settings s = server(2000, 100);
    s.mode = IB_LG_MODE_SUBMISSION;
    s.accuracy_log_probability = 1.0;
    ib_lg_result r;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "sub", .total = 300, .perf = 128}, &r));
    char *d = file("sub", "mlperf_log_detail.txt");
    /* accuracy sets of 128, 128, 44, then the performance set */
    ASSERT_INT_EQ(count(d, "\"key\": \"loaded_qsl_set\""), 4);
    ASSERT_STR_CONTAINS(d, "Starting accuracy mode");
    ASSERT_STR_CONTAINS(d, "Starting performance mode");
    ib_free(d);
    char *acc = file("sub", "mlperf_log_accuracy.json");
    /* accuracy seq ids 0..299, performance continues at 300 */
    ASSERT_STR_CONTAINS(acc, "{ \"seq_id\" : 299, ");
    ASSERT_STR_CONTAINS(acc, "{ \"seq_id\" : 300, ");
    ASSERT_INT_EQ(count(acc, "\"seq_id\""), 300 + r.sample_count);
    ib_free(acc);
    ASSERT_TRUE(r.has_performance);
}

TEST_TIMEOUT(loadgen_engine_stop_conditions, 60)
{
    esut e = {0};
    ib_lg_result r;
    /* max_query_count */
    ib_lg_settings s = server(5000, 2000);
    s.max_query_count = 50;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "maxq"}, &r));
    ASSERT_INT_EQ(r.query_count, 50);
    char *d = file("maxq", "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "IssueQueryThread 0 Ending early: Max query count reached. query_count 50");
    ib_free(d);
    /* max_duration (SingleStream, 2 ms per query) */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s.min_duration_ms = 10000;
    s.max_duration_ms = 60;
    esut slow = {.delay_us = 2000};
    ASSERT_OK(run(&s, &slow, &(run_cfg){.outdir = "maxd"}, &r));
    d = file("maxd", "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "IssueQueryThread 0 Ending early: Max test duration reached. duration_ns");
    ib_free(d);
    ASSERT_FALSE(r.valid);
    /* max_async_queries: the SUT holds every response until flush */
    s = server(5000, 1000);
    s.server_max_async_queries = 5;
    esut hold = {.hold_until_flush = 1};
    ASSERT_OK(run(&s, &hold, &(run_cfg){.outdir = "async"}, &r));
    ASSERT_INT_EQ(r.query_count, 6);
    d = file("async", "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "IssueQueryThread 0 Ending early: Too many outstanding queries. issued 6 "
                           "outstanding 6");
    ib_free(d);
    /* ran out of generated queries: the SUT is much faster than announced */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s.single_stream_expected_latency_ns = 1e7; /* 10 ms: 201 queries cover 2 x 1 s */
    s.min_duration_ms = 1000;
    s.min_query_count = 10;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "ranout"}, &r));
    d = file("ranout", "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "Ending early: Ran out of generated queries to issue before the minimum "
                           "query count and test duration were reached.");
    ib_free(d);
    ASSERT_INT_EQ(r.query_count, 201); /* timestamps 0, 10 ms, ... 2000 ms */
    ASSERT_FALSE(r.valid);
    ASSERT_TRUE(r.failed_rules & IB_LG_RULE_MIN_DURATION);
    /* the explanation names a concrete expected latency */
    ASSERT_STR_CONTAINS(r.suggestion, "single_stream_expected_latency_ns");
}

TEST_TIMEOUT(loadgen_engine_server_coalescing, 60)
{
    ib_lg_result r;
    ib_lg_settings s = server(20000, 200);
    s.server_coalesce_queries = true;
    esut e = {.block_first_us = 20000}; /* 20 ms: ~400 queries fall due meanwhile */
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "coal", .trace = true}, &r));
    ASSERT_TRUE(e.max_call > 10);
    ASSERT_INT_EQ(r.query_count, r.sample_count); /* queries count one each */
    ASSERT_TRUE(e.calls < r.query_count);
    esut f = {.block_first_us = 20000};
    s.server_coalesce_queries = false;
    ASSERT_OK(run(&s, &f, &(run_cfg){.outdir = "nocoal"}, &r));
    ASSERT_INT_EQ(f.max_call, 1);
    ASSERT_INT_EQ(f.calls, r.query_count);
    /* latency counts from the scheduled time: the first 20 ms show up */
    ASSERT_TRUE(r.max_latency_ns >= 15000000);
}

/* completion from another thread after a fixed delay */
typedef struct async_sut {
    pthread_t th;
    ib_lg_test *t;
    ib_lg_sample s;
    int have;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
} async_sut;

static void *async_worker(void *p)
{
    async_sut *a = p;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->have && !a->stop)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop)
            break;
        ib_lg_sample s = a->s;
        a->have = 0;
        pthread_mutex_unlock(&a->mu);
        sleep_us(1000);
        ib_lg_response r = {s.id, NULL, 0, 0};
        ib_lg_samples_complete(a->t, &r, 1);
        pthread_mutex_lock(&a->mu);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static void async_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    async_sut *a = user;
    (void)n;
    pthread_mutex_lock(&a->mu);
    a->t = t;
    a->s = s[0];
    a->have = 1;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

TEST_TIMEOUT(loadgen_engine_async_single_stream, 60)
{
    static async_sut a;
    memset(&a, 0, sizeof a);
    pthread_mutex_init(&a.mu, NULL);
    pthread_cond_init(&a.cv, NULL);
    pthread_create(&a.th, NULL, async_worker, &a);
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s.min_duration_ms = 150;
    s.min_query_count = 64;
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "async_ss";
    ib_lg_sut sut = {&a, "AsyncSUT", async_issue, NULL};
    ib_lg_qsl qsl = {NULL, "QSL", 64, 64, e_load, e_load};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_lg_result r;
    ASSERT_OK(ib_lg_test_create(&s, &log, NULL, &t, &err));
    ASSERT_OK_ERR(ib_lg_test_run(t, &sut, &qsl, &r, &err), &err);
    ib_lg_test_destroy(t);
    pthread_mutex_lock(&a.mu);
    a.stop = 1;
    pthread_cond_signal(&a.cv);
    pthread_mutex_unlock(&a.mu);
    pthread_join(a.th, NULL);
    ASSERT_TRUE(r.min_latency_ns >= 1000000); /* every sample waited >= 1 ms */
    ASSERT_TRUE(r.query_count >= 64);
    ASSERT_TRUE(r.qps_with_loadgen_overhead < 1000.0);
}

TEST_TIMEOUT(loadgen_engine_v11_multistream_skips_ticks, 60)
{
    ib_lg_settings s;
    ib_lg_settings_defaults_rules(&s, IB_LG_RULES_V1_1);
    s.scenario = IB_LG_SCENARIO_MULTI_STREAM;
    s.multi_stream_target_qps = 100; /* 10 ms ticks */
    s.multi_stream_samples_per_query = 2;
    s.multi_stream_target_latency_percentile = 0.99; /* v1.1 default 0.90 */
    s.min_duration_ms = 0;
    s.min_query_count = 50;
    esut e = {.slow_query = 5, .slow_us = 35000}; /* query 5 spans 4 intervals */
    ib_lg_result r;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "ms11"}, &r));
    ASSERT_INT_EQ(r.query_count, 50);
    ASSERT_FALSE(r.valid);
    ASSERT_TRUE(r.failed_rules & IB_LG_RULE_INTERVALS);
    char *d = file("ms11", "mlperf_log_detail.txt");
    /* p99 of 50 queries is the maximum: the slow query */
    const char *k = strstr(d, "\"result_99.00_percentile_num_intervals_between_queries\", \"value\": ");
    ASSERT_NOT_NULL(k);
    ASSERT_TRUE(atoi(k + strlen("\"result_99.00_percentile_num_intervals_between_queries\", "
                                "\"value\": ")) >= 3);
    ib_free(d);
    char *sm = file("ms11", "mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sm, "Samples per query : 2\n");
    ASSERT_STR_CONTAINS(sm, "Intervals between each IssueQuery:  \"qps\" : 100, \"ms\" : 10\n");
    ib_free(sm);
}

/* FindPeak with a SUT of finite capacity: one worker serving 1 ms per sample */
typedef struct queue_sut {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ib_lg_sample q[1 << 16];
    size_t head, tail;
    ib_lg_test *t;
    int stop;
} queue_sut;

static void q_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    queue_sut *q = user;
    pthread_mutex_lock(&q->mu);
    q->t = t;
    for (size_t i = 0; i < n && q->tail - q->head < (1 << 16); i++)
        q->q[(q->tail++) & 0xffff] = s[i];
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void q_flush(void *user, ib_lg_test *t)
{
    (void)t;
    (void)user;
}

static void *q_worker(void *p)
{
    queue_sut *q = p;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->head == q->tail && !q->stop)
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->stop)
            break;
        ib_lg_sample s = q->q[(q->head++) & 0xffff];
        ib_lg_test *t = q->t;
        pthread_mutex_unlock(&q->mu);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        ib_lg_response r = {s.id, NULL, 0, 0};
        ib_lg_samples_complete(t, &r, 1);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

TEST_TIMEOUT(loadgen_engine_find_peak, 180)
{
    static queue_sut q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv, NULL);
    pthread_t th;
    pthread_create(&th, NULL, q_worker, &q);
    ib_lg_settings s = server(100, 400);
    s.mode = IB_LG_MODE_FIND_PEAK;
    s.server_target_latency_ns = 200000000; /* 200 ms */
    s.server_find_peak_qps_decimals_of_precision = 0;
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "peak";
    ib_lg_options o;
    ib_lg_options_defaults(&o);
    o.sut_timeout_ms = 30000;
    ib_lg_sut sut = {&q, "QueueSUT", q_issue, q_flush};
    ib_lg_qsl qsl = {NULL, "QSL", 64, 64, e_load, e_load};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_lg_result r;
    ASSERT_OK(ib_lg_test_create(&s, &log, &o, &t, &err));
    ASSERT_OK_ERR(ib_lg_test_run(t, &sut, &qsl, &r, &err), &err);
    ib_lg_test_destroy(t);
    pthread_mutex_lock(&q.mu);
    q.stop = 1;
    pthread_cond_signal(&q.cv);
    pthread_mutex_unlock(&q.mu);
    pthread_join(th, NULL);
    /* capacity <= 1000 samples/s: 1600 QPS cannot pass; the base (100) must */
    ASSERT_TRUE(r.find_peak_qps >= 100);
    ASSERT_TRUE(r.find_peak_qps < 1600);
    ASSERT_STR_CONTAINS(r.suggestion, "the largest target QPS whose measured 99.0th percentile met");
    ASSERT_STR_CONTAINS(r.suggestion, " missed");
    char *d = file("peak", "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "Starting FindPeakPerformance mode");
    ASSERT_STR_CONTAINS(d, "FindPeakPerformance: Found boundaries: [");
    ASSERT_STR_CONTAINS(d, "FindPeakPerformance: Found peak performance field: ");
    ib_free(d);
    char *sm = file("peak", "mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sm, "Mode     : FindPeakPerformance");
    ib_free(sm);
}

typedef struct prog_log {
    int calls;
    uint64_t last_issued;
    int monotonic;
    int64_t bound;
    char phase[64];
} prog_log;

static void on_progress(void *user, const ib_lg_progress *p)
{
    prog_log *l = user;
    if (p->issued_queries < l->last_issued)
        l->monotonic = 0;
    l->last_issued = p->issued_queries;
    l->bound = p->latency_bound_ns;
    snprintf(l->phase, sizeof l->phase, "%s", p->phase);
    l->calls++;
}

TEST_TIMEOUT(loadgen_engine_progress_reports, 60)
{
    prog_log pl = {0, 0, 1, 0, ""};
    esut e = {0};
    ib_lg_settings s = server(2000, 600);
    ib_lg_result r;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "prog", .progress = on_progress, .progress_user = &pl},
                  &r));
    ASSERT_TRUE(pl.calls >= 3);
    ASSERT_TRUE(pl.monotonic);
    ASSERT_TRUE(pl.last_issued > 0);
    ASSERT_INT_EQ(pl.bound, 100000000);
    ASSERT_STR_EQ(pl.phase, "performance");
}

TEST_TIMEOUT(loadgen_engine_trace_result_json_and_names, 60)
{
    esut e = {0};
    ib_lg_settings s = server(1000, 100);
    ib_lg_result r;
    ASSERT_OK(run(&s, &e,
                  &(run_cfg){.outdir = "names", .trace = true, .prefix = "pre_", .suffix = "_x"},
                  &r));
    ASSERT_TRUE(ib_path_exists("names/pre_summary_x.txt"));
    ASSERT_TRUE(ib_path_exists("names/pre_detail_x.txt"));
    ASSERT_TRUE(ib_path_exists("names/pre_accuracy_x.json"));
    ASSERT_TRUE(ib_path_exists("names/pre_trace_x.json"));
    /* the trace is one valid JSON document with a begin/end pair per sample */
    json_error_t je;
    json_t *tr = json_load_file("names/pre_trace_x.json", 0, &je);
    ASSERT_NOT_NULL(tr);
    json_t *ev = json_object_get(tr, "traceEvents");
    size_t i, b = 0, en = 0;
    json_t *v;
    json_array_foreach(ev, i, v)
    {
        const char *ph = json_string_value(json_object_get(v, "ph"));
        b += ph && !strcmp(ph, "b");
        en += ph && !strcmp(ph, "e");
    }
    ASSERT_INT_EQ(b, r.sample_count);
    ASSERT_INT_EQ(en, r.sample_count);
    ASSERT_STR_EQ(json_string_value(json_object_get(tr, "displayTimeUnit")), "ns");
    json_decref(tr);
    /* result.json: verdict, rules, settings with origins, labels */
    json_t *rj = json_load_file("names/result.json", 0, &je);
    ASSERT_NOT_NULL(rj);
    ASSERT_STR_EQ(json_string_value(json_object_get(rj, "scenario")), "Server");
    ASSERT_STR_EQ(json_string_value(json_object_get(rj, "model")), "testmodel");
    ASSERT_TRUE(json_is_boolean(json_object_get(rj, "valid")));
    ASSERT_INT_EQ(json_integer_value(json_object_get(json_object_get(rj, "metrics"), "query_count")),
                  r.query_count);
    json_t *req = json_object_get(json_object_get(rj, "settings"), "requested");
    ASSERT_NOT_NULL(json_object_get(req, "server_target_qps"));
    ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(req, "server_target_qps"),
                                                    "origin")),
                  "default");
    ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(rj, "labels"), 0)), "synthetic");
    ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(rj, "labels"), 1)),
                  "unit test");
    /* the load check: measured (a number or null) with its verdict */
    json_t *ml = json_object_get(rj, "machine_load");
    ASSERT_TRUE(json_is_boolean(json_object_get(ml, "busy")));
    ASSERT_TRUE(json_is_number(json_object_get(ml, "others_cpu_pct")) ||
                json_is_null(json_object_get(ml, "others_cpu_pct")));
    json_decref(rj);
    /* the official summary keeps LoadGen's format: it ends with the errors line, labels
     * stay out of it (loadgen.md §3.1 item 9) */
    char *sm = file("names", "pre_summary_x.txt");
    ASSERT_NULL(strstr(sm, "Labels"));
    ASSERT_NULL(strstr(sm, "unit test"));
    size_t sl = strlen(sm);
    static const char tail[] = "encountered during test.\n";
    ASSERT_TRUE(sl > sizeof tail && strcmp(sm + sl - (sizeof tail - 1), tail) == 0);
    ASSERT_TRUE(strstr(sm, "No errors encountered during test.\n") ||
                strstr(sm, "ERROR encountered") || strstr(sm, "ERRORS encountered"));
    ib_free(sm);

    /* prefix_with_datetime: <prefix><ISO time>_summary.txt */
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "dated", .datetime = true}, &r));
    ASSERT_INT_EQ(ib_test_system("ls dated | grep -q '^mlperf_log_20[0-9-]*T[0-9:]*Z_summary.txt$'"), 0);
}

TEST_TIMEOUT(loadgen_engine_accuracy_payloads, 60)
{
    esut e = {.payload_var = 1};
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s.mode = IB_LG_MODE_ACCURACY;
    ib_lg_result r;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "pay", .total = 100, .perf = 40}, &r));
    ASSERT_INT_EQ(r.accuracy_log_entries, 100);
    ASSERT_FALSE(r.has_performance);
    ASSERT_TRUE(r.valid);
    char *acc = file("pay", "mlperf_log_accuracy.json");
    /* every sample once, payload = (idx * 31 + b) for b < idx % 7 */
    for (unsigned idx = 0; idx < 100; idx++) {
        char want[128], hex[32] = "";
        for (unsigned b = 0; b < idx % 7; b++)
            snprintf(hex + 2 * b, sizeof hex - 2 * b, "%02X", (uint8_t)(idx * 31 + b));
        snprintf(want, sizeof want, "\"qsl_idx\" : %u, \"data\" : \"%s\" }", idx, hex);
        ASSERT_STR_CONTAINS(acc, want);
    }
    ib_free(acc);
    char *sm = file("pay", "mlperf_log_summary.txt");
    ASSERT_TRUE(strncmp(sm, "\nNo warnings encountered during test.\n", 38) == 0);
    ib_free(sm);
}

/* issue_query is called from several issue threads at once: thread-safe SUT */
static _Atomic uint64_t g_thr_samples;

static void thr_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    (void)user;
    ib_lg_response r[64];
    for (size_t i = 0; i < n && i < 64; i++)
        r[i] = (ib_lg_response){s[i].id, NULL, 0, 0};
    atomic_fetch_add(&g_thr_samples, n);
    ib_lg_samples_complete(t, r, n < 64 ? n : 64);
}

static int run_thr(const ib_lg_settings *s, const char *dir, ib_lg_result *r)
{
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = dir;
    ib_lg_sut sut = {NULL, "ThreadSafeSUT", thr_issue, NULL};
    ib_lg_qsl qsl = {NULL, "QSL", 256, 256, e_load, e_load};
    ib_lg_test *t = NULL;
    ib_err err;
    int rc = ib_lg_test_create(s, &log, NULL, &t, &err);
    if (rc == IB_OK)
        rc = ib_lg_test_run(t, &sut, &qsl, r, &err);
    ib_lg_test_destroy(t);
    return rc;
}

TEST_TIMEOUT(loadgen_engine_server_issue_threads, 60)
{
    /* k issue threads issue the same queries (same seq -> qsl_idx) as one */
    ib_lg_result r1, r3;
    ib_lg_settings s = server(5000, 300);
    s.accuracy_log_probability = 1.0;
    ASSERT_OK(run_thr(&s, "thr1", &r1));
    atomic_store(&g_thr_samples, 0);
    s.server_num_issue_query_threads = 3;
    ASSERT_OK(run_thr(&s, "thr3", &r3));
    ASSERT_INT_EQ(r3.query_count, r1.query_count);
    ASSERT_INT_EQ(atomic_load(&g_thr_samples), r1.sample_count);
    ASSERT_INT_EQ(r3.duplicate_responses + r3.unknown_responses + r3.lost_responses, 0);
    char *a = file("thr1", "mlperf_log_accuracy.json"), *b = file("thr3", "mlperf_log_accuracy.json");
    ASSERT_STR_EQ(a, b);
    ib_free(a);
    ib_free(b);
    /* a stop condition ends every thread, with the official message */
    s.max_query_count = 40;
    s.accuracy_log_probability = 0;
    ASSERT_OK(run_thr(&s, "thrmax", &r3));
    ASSERT_TRUE(r3.query_count >= 40 && r3.query_count < 40 + 3 * 64);
    ASSERT_INT_EQ(r3.lost_responses, 0);
    char *d = file("thrmax", "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "Ending early: Max query count reached. query_count");
    ib_free(d);
}

/* FindPeak's early abort: a SUT that answers at once below 250 arrivals/s
 * (averaged since the series' first query) and holds every response 300 ms
 * above it. Probes over the rate lose the 200 ms bound for good after a
 * handful of samples and must stop long before their 2 s timeline ends. */
typedef struct rate_sut {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ib_lg_sample held[1 << 14];
    int64_t due[1 << 14];
    size_t head, tail;
    ib_lg_test *t;
    int stop;
    uint64_t arrivals;
    int64_t first_ns;
} rate_sut;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void r_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    rate_sut *q = user;
    int64_t now = mono_ns();
    pthread_mutex_lock(&q->mu);
    q->t = t;
    if (q->arrivals++ == 0)
        q->first_ns = now;
    double rate = now > q->first_ns ? (double)q->arrivals * 1e9 / (double)(now - q->first_ns) : 0;
    bool slow = q->arrivals > 100 && rate > 250;
    for (size_t i = 0; i < n; i++) {
        if (!slow || q->tail - q->head >= (1 << 14)) {
            ib_lg_response r = {s[i].id, NULL, 0, 0};
            pthread_mutex_unlock(&q->mu);
            ib_lg_samples_complete(t, &r, 1);
            pthread_mutex_lock(&q->mu);
            continue;
        }
        q->held[q->tail & 0x3fff] = s[i];
        q->due[q->tail & 0x3fff] = now + 300000000;
        q->tail++;
        pthread_cond_signal(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
}

static void r_flush(void *user, ib_lg_test *t)
{
    rate_sut *q = user;
    (void)t;
    pthread_mutex_lock(&q->mu);
    q->arrivals = 0; /* the next probe measures its own rate */
    pthread_mutex_unlock(&q->mu);
}

static void *r_worker(void *p)
{
    rate_sut *q = p;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->head == q->tail && !q->stop)
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->stop && q->head == q->tail)
            break;
        int64_t wait = q->due[q->head & 0x3fff] - mono_ns();
        if (wait > 0) {
            pthread_mutex_unlock(&q->mu);
            sleep_us(wait / 1000);
            pthread_mutex_lock(&q->mu);
            continue;
        }
        ib_lg_sample s = q->held[(q->head++) & 0x3fff];
        ib_lg_test *t = q->t;
        pthread_mutex_unlock(&q->mu);
        ib_lg_response r = {s.id, NULL, 0, 0};
        ib_lg_samples_complete(t, &r, 1);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

TEST_TIMEOUT(loadgen_engine_find_peak_early_abort, 240)
{
    static rate_sut q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv, NULL);
    pthread_t th;
    pthread_create(&th, NULL, r_worker, &q);
    ib_lg_settings s = server(100, 2000);
    s.mode = IB_LG_MODE_FIND_PEAK;
    s.server_target_latency_ns = 200000000;
    s.server_find_peak_qps_decimals_of_precision = 0;
    s.server_find_peak_qps_boundary_step_size = 3; /* 100, 400, then bisect */
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "peak2";
    ib_lg_sut sut = {&q, "RateSUT", r_issue, r_flush};
    ib_lg_qsl qsl = {NULL, "QSL", 64, 64, e_load, e_load};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_lg_result r;
    ASSERT_OK(ib_lg_test_create(&s, &log, NULL, &t, &err));
    ASSERT_OK_ERR(ib_lg_test_run(t, &sut, &qsl, &r, &err), &err);
    /* the worker may still hold responses of aborted probes: drain, then destroy */
    pthread_mutex_lock(&q.mu);
    q.stop = 1;
    pthread_cond_signal(&q.cv);
    pthread_mutex_unlock(&q.mu);
    pthread_join(th, NULL);
    ib_lg_test_destroy(t);
    ASSERT_TRUE(r.find_peak_qps >= 100 && r.find_peak_qps < 400);
    /* the 400 QPS probe (800 queries scheduled over 2 s) stopped early */
    ASSERT_STR_CONTAINS(r.suggestion, "400 missed (stopped early)");
    char *d = file("peak2", "mlperf_log_detail.txt");
    ASSERT_STR_CONTAINS(d, "FindBoundaries: Checking fields [100.000000, 400.000000)");
    ib_free(d);
}

/* result.json's metrics mean what the summary's lines mean: each scenario carries its own
 * rates, named after its summary lines, and not another scenario's (a SingleStream run once
 * had "samples_per_second" = N / max latency = 1.2M at 1 ms latency; Offline had
 * "qps_with_loadgen_overhead" = 6.3e9 from a query issued at t = 0). */
static json_t *metrics_of(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/result.json", dir);
    json_error_t je;
    json_t *rj = json_load_file(path, 0, &je);
    if (!rj)
        return NULL;
    if (strcmp(json_string_value(json_object_get(rj, "format")), "inferbench-result/2")) {
        json_decref(rj);
        return NULL;
    }
    json_t *m = json_incref(json_object_get(rj, "metrics"));
    json_decref(rj);
    return m;
}

TEST_TIMEOUT(loadgen_engine_result_json_metrics_per_scenario, 60)
{
    esut e;
    ib_lg_result r;
    /* SingleStream: 1 ms per query */
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s.min_duration_ms = 100;
    s.min_query_count = 64;
    memset(&e, 0, sizeof e);
    e.delay_us = 1000;
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "m_ss"}, &r));
    ASSERT_DBL_EQ(r.samples_per_second, 0);
    ASSERT_DBL_EQ(r.completed_samples_per_sec, 0);
    ASSERT_TRUE(r.qps_with_loadgen_overhead > 100 && r.qps_with_loadgen_overhead < 1001);
    json_t *m = metrics_of("m_ss");
    ASSERT_NOT_NULL(m);
    ASSERT_NULL(json_object_get(m, "samples_per_second"));
    ASSERT_NULL(json_object_get(m, "completed_samples_per_second"));
    ASSERT_DBL_EQ(json_number_value(json_object_get(m, "qps_with_loadgen_overhead")),
                  r.qps_with_loadgen_overhead);
    json_t *h = json_object_get(m, "headline");
    ASSERT_STR_EQ(json_string_value(json_object_get(h, "line")), "90.0th percentile latency (ns)");
    ASSERT_DBL_EQ(json_number_value(json_object_get(h, "value")),
                  (double)r.target_percentile_latency_ns);
    ASSERT_TRUE(json_integer_value(json_object_get(m, "early_stopping_latency_ns")) >= 1000000);
    json_decref(m);
    /* the summary's headline holds the same number */
    char *sm = file("m_ss", "mlperf_log_summary.txt");
    char want[96];
    snprintf(want, sizeof want, "90.0th percentile latency (ns) : %lld\n",
             (long long)r.target_percentile_latency_ns);
    ASSERT_STR_CONTAINS(sm, want);
    ib_free(sm);

    /* Offline */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_OFFLINE;
    s.min_duration_ms = 0;
    s.min_query_count = 1;
    s.offline_expected_qps = 2000;
    memset(&e, 0, sizeof e);
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "m_off"}, &r));
    ASSERT_DBL_EQ(r.qps_with_loadgen_overhead, 0);
    ASSERT_DBL_EQ(r.qps_without_loadgen_overhead, 0);
    ASSERT_TRUE(r.samples_per_second > 0);
    m = metrics_of("m_off");
    ASSERT_NOT_NULL(m);
    ASSERT_NULL(json_object_get(m, "qps_with_loadgen_overhead"));
    ASSERT_NULL(json_object_get(m, "target_percentile_latency_ns"));
    ASSERT_NULL(json_object_get(m, "early_stopping_latency_ns"));
    ASSERT_DBL_EQ(json_number_value(json_object_get(m, "samples_per_second")), r.samples_per_second);
    h = json_object_get(m, "headline");
    ASSERT_STR_EQ(json_string_value(json_object_get(h, "line")), "Samples per second");
    ASSERT_STR_EQ(json_string_value(json_object_get(h, "unit")), "samples/s");
    json_decref(m);

    /* Server */
    s = server(1000, 200);
    memset(&e, 0, sizeof e);
    ASSERT_OK(run(&s, &e, &(run_cfg){.outdir = "m_srv"}, &r));
    ASSERT_DBL_EQ(r.samples_per_second, 0);
    ASSERT_DBL_EQ(r.qps_with_loadgen_overhead, 0);
    m = metrics_of("m_srv");
    ASSERT_NOT_NULL(m);
    ASSERT_NULL(json_object_get(m, "samples_per_second"));
    ASSERT_DBL_EQ(json_number_value(json_object_get(m, "completed_samples_per_second")),
                  r.completed_samples_per_sec);
    ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(m, "headline"), "line")),
                  "Completed samples per second");
    json_decref(m);
}
