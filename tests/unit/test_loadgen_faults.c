/*
 * test_loadgen_faults.c - deliberately broken SUTs and QSLs: a SUT that
 * never answers (the test ends after sut_timeout_ms, no hang), one lost
 * response, duplicates, unknown ids, a response after its series ended,
 * completions from many threads at once, completions after the run, and
 * invalid settings or a failing QSL that stop the run before it starts.
 */
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

typedef struct fsut {
    int mode;                /* what to break */
    uint64_t calls, samples; /* issue_query calls and samples seen */
    uint64_t drop_at;        /* FS_LOSE_ONE: the sample number to drop */
    ib_lg_response held;     /* FS_LATE: a response completed again later */
    int have_held;
} fsut;

enum { FS_OK, FS_SILENT, FS_LOSE_ONE, FS_DUPLICATE, FS_UNKNOWN, FS_LATE, FS_FAIL };

static void f_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    fsut *f = user;
    f->calls++;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = f->samples++;
        ib_lg_response r = {s[i].id, &s[i].index, sizeof s[i].index, 0};
        switch (f->mode) {
        case FS_SILENT: continue;
        case FS_LOSE_ONE:
            if (k == f->drop_at)
                continue;
            break;
        case FS_DUPLICATE:
            if (k == 3)
                ib_lg_samples_complete(t, &r, 1);
            break;
        case FS_UNKNOWN:
            if (k == 2) {
                ib_lg_response bad[2] = {{0, NULL, 0, 0}, {(ib_lg_response_id)0xdeadbeef, NULL, 0, 0}};
                ib_lg_samples_complete(t, bad, 2);
            }
            break;
        case FS_FAIL:
            if (k >= 5 && k < 8) { /* a network SUT's failed request of three samples */
                ib_lg_samples_fail(t, &r.id, 1, "endpoint http://10.0.0.2:8000: HTTP 500: boom");
                continue;
            }
            break;
        case FS_LATE:
            if (k == 0) {
                f->held = r;
                f->held.data = NULL;
                f->held.size = 0;
                f->have_held = 1;
            }
            break;
        default: break;
        }
        ib_lg_samples_complete(t, &r, 1);
    }
}

static void f_flush(void *user, ib_lg_test *t)
{
    fsut *f = user;
    (void)t;
    (void)f;
}

static int f_load(void *user, const ib_lg_sample_index *idx, size_t n)
{
    (void)user;
    (void)idx;
    (void)n;
    return IB_OK;
}

static int f_load_fail(void *user, const ib_lg_sample_index *idx, size_t n)
{
    (void)user;
    (void)idx;
    (void)n;
    return IB_EIO;
}

static ib_lg_settings server(double qps, uint64_t dur_ms)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.server_target_qps = qps;
    s.server_target_latency_ns = 50000000;
    s.min_duration_ms = dur_ms;
    s.min_query_count = 10;
    return s;
}

static int run(const ib_lg_settings *s, fsut *f, uint64_t timeout_ms, ib_lg_result *res,
               ib_err *err, const char *outdir)
{
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = outdir;
    ib_lg_options o;
    ib_lg_options_defaults(&o);
    o.sut_timeout_ms = timeout_ms;
    ib_lg_sut sut = {f, "FaultySUT", f_issue, f_flush};
    ib_lg_qsl qsl = {NULL, "QSL", 64, 64, f_load, f_load};
    ib_lg_test *t = NULL;
    int rc = ib_lg_test_create(s, &log, &o, &t, err);
    if (rc)
        return rc;
    rc = ib_lg_test_run(t, &sut, &qsl, res, err);
    ib_lg_test_destroy(t);
    return rc;
}

static char *detail(const char *dir)
{
    char path[512], *text = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/mlperf_log_detail.txt", dir);
    if (ib_file_read_all(path, 0, &text, &len, NULL))
        return NULL;
    return text;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TEST_TIMEOUT(loadgen_faults_silent_sut_times_out, 60)
{
    fsut f = {.mode = FS_SILENT};
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s.min_duration_ms = 10000;
    ib_lg_result res;
    ib_err err;
    double t0 = now_s();
    ASSERT_STATUS(run(&s, &f, 300, &res, &err, "silent"), IB_ETIMEOUT);
    /* ended by the timeout, not by the 10 s duration */
    ASSERT_TRUE(now_s() - t0 < 8);
    ASSERT_STR_CONTAINS(err.msg, "SUT timeout");
    ASSERT_INT_EQ(f.calls, 1); /* SingleStream waits for the first query */
    ASSERT_INT_EQ(res.lost_responses, 1);
    ASSERT_FALSE(res.valid);
    ASSERT_TRUE(res.failed_rules & IB_LG_RULE_SUT_ERRORS);
    char *d = detail("silent");
    ASSERT_NOT_NULL(d);
    ASSERT_STR_CONTAINS(d, "\"error_runtime\", \"value\": \"SUT timeout: 1 of 1 issued samples");
    ASSERT_STR_CONTAINS(d, "\"is_error\": true");
    ib_free(d);
    ASSERT_TRUE(ib_path_exists("silent/mlperf_log_summary.txt"));
    ASSERT_TRUE(ib_path_exists("silent/result.json"));
}

TEST_TIMEOUT(loadgen_faults_lose_one_response, 60)
{
    fsut f = {.mode = FS_LOSE_ONE};
    f.drop_at = 40;
    ib_lg_settings s = server(2000, 200);
    ib_lg_result res;
    ib_err err;
    ASSERT_STATUS(run(&s, &f, 300, &res, &err, "lose"), IB_ETIMEOUT);
    ASSERT_INT_EQ(res.lost_responses, 1);
    /* every other issued sample was measured */
    ASSERT_TRUE(res.has_performance);
    ASSERT_FALSE(res.valid);
    ASSERT_INT_EQ(res.sample_count, f.samples);
    char *d = detail("lose");
    ASSERT_STR_CONTAINS(d, "SUT timeout: 1 of ");
    ASSERT_STR_CONTAINS(d, "\"result_validity\", \"value\": \"INVALID\"");
    ib_free(d);
}

TEST_TIMEOUT(loadgen_faults_duplicate_and_unknown_ids, 60)
{
    fsut f = {.mode = FS_DUPLICATE};
    ib_lg_settings s = server(2000, 100);
    ib_lg_result res;
    ib_err err;
    ASSERT_OK_ERR(run(&s, &f, 5000, &res, &err, "dup"), &err);
    ASSERT_INT_EQ(res.duplicate_responses, 1);
    ASSERT_FALSE(res.valid);
    ASSERT_TRUE(res.failed_rules & IB_LG_RULE_SUT_ERRORS);
    char *d = detail("dup");
    ASSERT_STR_CONTAINS(d, "Attempted to complete a sample twice. count: 1; first response ids: 4");
    ib_free(d);

    fsut g = {.mode = FS_UNKNOWN};
    ASSERT_OK_ERR(run(&s, &g, 5000, &res, &err, "unknown"), &err);
    ASSERT_INT_EQ(res.unknown_responses, 2);
    d = detail("unknown");
    ASSERT_STR_CONTAINS(d, "unknown id (never issued in this test). count: 2; first response "
                           "ids: 0 3735928559");
    ib_free(d);
}

/* Samples the SUT completes as failed (ib_lg_samples_fail): the test ends on time, the
 * result is INVALID (sut_errors) with the count and the first reason, in performance and
 * in accuracy mode. */
TEST_TIMEOUT(loadgen_faults_failed_samples_make_the_run_invalid, 60)
{
    fsut f = {.mode = FS_FAIL};
    ib_lg_settings s = server(2000, 100);
    ib_lg_result res;
    ib_err err;
    ASSERT_OK_ERR(run(&s, &f, 5000, &res, &err, "fail"), &err);
    ASSERT_INT_EQ(res.failed_responses, 3);
    ASSERT_INT_EQ(res.lost_responses, 0);
    ASSERT_FALSE(res.valid);
    ASSERT_TRUE(res.failed_rules & IB_LG_RULE_SUT_ERRORS);
    ASSERT_STR_EQ(res.failed_reason, "endpoint http://10.0.0.2:8000: HTTP 500: boom");
    ASSERT_STR_CONTAINS(res.reasons, "SUT errors: 3 samples failed: endpoint http://10.0.0.2");
    char *d = detail("fail");
    ASSERT_STR_CONTAINS(d, "The SUT reported samples as failed. count: 3; first response ids: 6 "
                           "7 8; first reason: endpoint http://10.0.0.2:8000: HTTP 500: boom");
    ib_free(d);
    char *j = ib_test_slurp("fail/result.json");
    ASSERT_STR_CONTAINS(j, "\"failed_responses\": 3");
    free(j);

    fsut g = {.mode = FS_FAIL};
    s.mode = IB_LG_MODE_ACCURACY;
    ASSERT_OK_ERR(run(&s, &g, 5000, &res, &err, "fail_acc"), &err);
    ASSERT_INT_EQ(res.failed_responses, 3);
    ASSERT_FALSE(res.valid);
}

/* A response for an accuracy sample delivered again during the performance
 * series of a SubmissionRun: its series has ended, so it is late. */
typedef struct late_sut {
    fsut base;
    int replayed;
} late_sut;

static void late_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    late_sut *l = user;
    f_issue(&l->base, t, s, n);
    if (l->base.samples > 64 && !l->replayed && l->base.have_held) {
        ib_lg_samples_complete(t, &l->base.held, 1);
        l->replayed = 1;
    }
}

TEST_TIMEOUT(loadgen_faults_response_after_its_series, 60)
{
    late_sut l = {{.mode = FS_LATE}, 0};
    ib_lg_settings s = server(2000, 100);
    s.mode = IB_LG_MODE_SUBMISSION;
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "late";
    ib_lg_sut sut = {&l, "LateSUT", late_issue, NULL};
    ib_lg_qsl qsl = {NULL, "QSL", 64, 64, f_load, f_load};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_lg_result res;
    ASSERT_OK_ERR(ib_lg_test_create(&s, &log, NULL, &t, &err), &err);
    ASSERT_OK_ERR(ib_lg_test_run(t, &sut, &qsl, &res, &err), &err);
    ASSERT_INT_EQ(l.replayed, 1);
    ASSERT_INT_EQ(res.late_responses, 1);
    ASSERT_INT_EQ(res.duplicate_responses, 0);
    ASSERT_FALSE(res.valid);
    /* after the run: counted, never written, no crash (ASan) */
    ib_lg_samples_complete(t, &l.base.held, 1);
    ib_lg_first_token_complete(t, &l.base.held, 1);
    ib_lg_test_destroy(t);
    char *d = detail("late");
    ASSERT_STR_CONTAINS(d, "Received completion for an old sample (its series had already "
                           "ended). count: 1; first response ids: 1");
    ib_free(d);
}

/* ---- many completing threads --------------------------------------------- */

typedef struct mt_sut {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ib_lg_sample *q;
    size_t head, tail, cap;
    int stop;
    ib_lg_test *test;
    pthread_t th[4];
    _Atomic uint64_t done;
} mt_sut;

static void mt_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    mt_sut *m = user;
    pthread_mutex_lock(&m->mu);
    m->test = t;
    for (size_t i = 0; i < n; i++)
        m->q[(m->tail++) % m->cap] = s[i];
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

static void *mt_worker(void *arg)
{
    mt_sut *m = arg;
    ib_lg_response r[16];
    unsigned seed = (unsigned)(uintptr_t)&r;
    for (;;) {
        pthread_mutex_lock(&m->mu);
        while (m->head == m->tail && !m->stop)
            pthread_cond_wait(&m->cv, &m->mu);
        if (m->head == m->tail && m->stop) {
            pthread_mutex_unlock(&m->mu);
            return NULL;
        }
        size_t k = 1 + (size_t)(rand_r(&seed) % 16);
        size_t n = 0;
        while (n < k && m->head != m->tail) {
            ib_lg_sample s = m->q[(m->head++) % m->cap];
            r[n++] = (ib_lg_response){s.id, NULL, 0, 0};
        }
        ib_lg_test *t = m->test;
        pthread_mutex_unlock(&m->mu);
        ib_lg_samples_complete(t, r, n);
        atomic_fetch_add(&m->done, n);
    }
}

TEST_TIMEOUT(loadgen_faults_completions_from_many_threads, 120)
{
    static mt_sut m;
    memset(&m, 0, sizeof m);
    pthread_mutex_init(&m.mu, NULL);
    pthread_cond_init(&m.cv, NULL);
    m.cap = 1 << 20;
    m.q = calloc(m.cap, sizeof *m.q);
    for (int i = 0; i < 4; i++)
        pthread_create(&m.th[i], NULL, mt_worker, &m);
    /* Offline: 50,000 samples in one query, completed in random batches by
     * four threads; then Server with the same SUT */
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_OFFLINE;
    s.min_duration_ms = 0;
    s.min_query_count = 50000;
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "mt";
    ib_lg_sut sut = {&m, "MT", mt_issue, NULL};
    ib_lg_qsl qsl = {NULL, "QSL", 1024, 1024, f_load, f_load};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_lg_result res;
    ASSERT_OK_ERR(ib_lg_test_create(&s, &log, NULL, &t, &err), &err);
    ASSERT_OK_ERR(ib_lg_test_run(t, &sut, &qsl, &res, &err), &err);
    /* a test is destroyed only once every completion call has returned */
    while (atomic_load(&m.done) < 50000)
        sleep_us(100);
    ib_lg_test_destroy(t);
    ASSERT_INT_EQ(res.sample_count, 50000);
    ASSERT_INT_EQ(res.duplicate_responses + res.unknown_responses + res.lost_responses, 0);
    ASSERT_TRUE(res.samples_per_second > 0);

    s = server(5000, 300);
    log.outdir = "mt2";
    ASSERT_OK_ERR(ib_lg_test_create(&s, &log, NULL, &t, &err), &err);
    ASSERT_OK_ERR(ib_lg_test_run(t, &sut, &qsl, &res, &err), &err);
    while (atomic_load(&m.done) < 50000 + res.sample_count)
        sleep_us(100);
    ib_lg_test_destroy(t);
    ASSERT_INT_EQ(res.duplicate_responses + res.unknown_responses + res.lost_responses, 0);
    ASSERT_TRUE(res.sample_count > 1000);

    pthread_mutex_lock(&m.mu);
    m.stop = 1;
    pthread_cond_broadcast(&m.cv);
    pthread_mutex_unlock(&m.mu);
    for (int i = 0; i < 4; i++)
        pthread_join(m.th[i], NULL);
    ASSERT_INT_EQ(atomic_load(&m.done), 50000 + res.sample_count);
    free(m.q);
}

/* ---- stopped before the run -------------------------------------------- */

TEST(loadgen_faults_invalid_settings_stop_before_run)
{
    fsut f = {.mode = FS_OK};
    ib_lg_result res;
    ib_err err;
    /* rejected by create: a percentile outside (0, 1) */
    ib_lg_settings s = server(100, 100);
    s.server_target_latency_percentile = 99;
    ASSERT_STATUS(run(&s, &f, 1000, &res, &err, "bad1"), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "percentile");
    /* rejected once the QSL counts are known: same index past the set */
    s = server(100, 100);
    s.performance_issue_same = true;
    s.performance_issue_same_index = 1000;
    ASSERT_STATUS(run(&s, &f, 1000, &res, &err, "bad2"), IB_EINVAL);
    ASSERT_INT_EQ(f.calls, 0);
    char *d = detail("bad2");
    ASSERT_STR_CONTAINS(d, "\"key\": \"error_invalid_test_settings\"");
    ib_free(d);
    /* token mode is not implemented: said so, not faked */
    s = server(100, 100);
    s.use_token_latencies = true;
    ASSERT_STATUS(run(&s, &f, 1000, &res, &err, "bad3"), IB_EUNSUPPORTED);
    ASSERT_INT_EQ(f.calls, 0);
}

TEST(loadgen_faults_qsl_load_failure)
{
    fsut f = {.mode = FS_OK};
    ib_lg_settings s = server(100, 100);
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "qsl";
    ib_lg_sut sut = {&f, "SUT", f_issue, NULL};
    ib_lg_qsl qsl = {NULL, "QSL", 64, 64, f_load_fail, f_load};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_lg_result res;
    ASSERT_OK(ib_lg_test_create(&s, &log, NULL, &t, &err));
    ASSERT_STATUS(ib_lg_test_run(t, &sut, &qsl, &res, &err), IB_EIO);
    ASSERT_STR_CONTAINS(err.msg, "load_samples failed");
    /* a test runs once */
    ASSERT_STATUS(ib_lg_test_run(t, &sut, &qsl, &res, &err), IB_ESTATE);
    ib_lg_test_destroy(t);
    ASSERT_INT_EQ(f.calls, 0);
}

TEST(loadgen_faults_null_arguments)
{
    ib_err err;
    ib_lg_test *t = NULL;
    ASSERT_STATUS(ib_lg_test_create(NULL, NULL, NULL, &t, &err), IB_EINVAL);
    ib_lg_settings s = server(10, 10);
    ASSERT_OK(ib_lg_test_create(&s, NULL, NULL, &t, &err));
    ib_lg_result res;
    ASSERT_STATUS(ib_lg_test_run(t, NULL, NULL, &res, &err), IB_EINVAL);
    ib_lg_samples_complete(NULL, NULL, 0);
    ib_lg_samples_complete(t, NULL, 3);
    ib_lg_test_abort(NULL);
    ib_lg_test_destroy(t);
    ib_lg_test_destroy(NULL);
}

/* ---- abort ----------------------------------------------------------------- */

static void *aborter(void *arg)
{
    sleep_us(300000);
    ib_lg_test_abort(arg);
    return NULL;
}

TEST_TIMEOUT(loadgen_faults_abort_ends_a_long_run, 60)
{
    fsut f = {.mode = FS_OK};
    ib_lg_settings s = server(1000, 60000); /* a minute */
    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "abort";
    ib_lg_sut sut = {&f, "SUT", f_issue, NULL};
    ib_lg_qsl qsl = {NULL, "QSL", 64, 64, f_load, f_load};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_lg_result res;
    ASSERT_OK(ib_lg_test_create(&s, &log, NULL, &t, &err));
    pthread_t th;
    pthread_create(&th, NULL, aborter, t);
    double t0 = now_s();
    ASSERT_STATUS(ib_lg_test_run(t, &sut, &qsl, &res, &err), IB_ECANCELED);
    ASSERT_TRUE(now_s() - t0 < 20);
    pthread_join(th, NULL);
    ib_lg_test_destroy(t);
    char *d = detail("abort");
    ASSERT_STR_CONTAINS(d, "aborted");
    ib_free(d);
}
