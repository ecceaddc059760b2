/*
 * test_loadgen_plan.c - loadable sets and query series beyond the golden
 * cases: both set rules, accuracy partitions and MultiStream padding, the
 * closed-form pre-pass against the official generation loop, equal issue
 * (lazy permutation replay against an eager construction from the same RNG
 * primitives, Server and Offline), unique/same modes, SubmissionRun and
 * FindPeak sequence ids, accuracy-log sampling in any call order, and the
 * settings a series refuses.
 */
#include <stdlib.h>
#include <string.h>

#include "inferbench/loadgen.h"
#include "loadgen/effective.h"
#include "loadgen/plan.h"
#include "loadgen/rng.h"
#include "test.h"

static void make_plan(ib_lg_settings *s, uint64_t total, uint64_t perf, ib_lg_effective *e,
                      ib_lg_plan **p)
{
    ib_err err;
    ASSERT_OK_ERR(ib_lg_effective_derive(s, total, perf, e, &err), &err);
    ASSERT_OK_ERR(ib_lg_plan_create(e, p, &err), &err);
}

static ib_lg_series *make_series(ib_lg_plan *p, size_t set, bool acc, double qps)
{
    ib_lg_series *sr;
    ib_err err;
    ASSERT_OK_ERR(ib_lg_series_create(p, set, acc, qps, &sr, &err), &err);
    return sr;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

TEST(loadgen_plan_loadable_sets)
{
    ib_lg_settings s;
    ib_lg_effective e;
    ib_lg_plan *p;
    /* current rules: a shuffle of [0, P) */
    ib_lg_settings_defaults(&s);
    s.qsl_rng_seed = 77;
    make_plan(&s, 1000, 300, &e, &p);
    ASSERT_UINT_EQ(ib_lg_plan_set_count(p), 1);
    ASSERT_UINT_EQ(ib_lg_plan_performance_set_index(p), 0);
    size_t len, end;
    const size_t *set = ib_lg_plan_set(p, 0, &len, &end);
    ASSERT_UINT_EQ(len, 300);
    ASSERT_UINT_EQ(end, 300);
    size_t *sorted = malloc(len * sizeof *sorted);
    memcpy(sorted, set, len * sizeof *sorted);
    qsort(sorted, len, sizeof *sorted, cmp_size);
    for (size_t i = 0; i < len; i++)
        ASSERT_UINT_EQ(sorted[i], i);
    free(sorted);
    ASSERT_NULL(ib_lg_plan_set(p, 1, &len, &end));
    ib_lg_plan_destroy(p);

    /* P above the total is capped; v1.1: the first P of a shuffle of all */
    s.performance_sample_count_override = 5000;
    make_plan(&s, 1000, 300, &e, &p);
    ib_lg_plan_set(p, 0, &len, &end);
    ASSERT_UINT_EQ(len, 1000);
    ib_lg_plan_destroy(p);
    s.performance_sample_count_override = 0;
    s.rules = IB_LG_RULES_V1_1;
    make_plan(&s, 1000, 300, &e, &p);
    set = ib_lg_plan_set(p, 0, &len, &end);
    size_t all[1000];
    for (size_t i = 0; i < 1000; i++)
        all[i] = i;
    ib_lg_rng r;
    ib_lg_rng_seed(&r, 77);
    ib_lg_rng_shuffle(&r, all, 1000, IB_LG_RNG_LIBSTDCXX11);
    ASSERT_UINT_EQ(len, 300);
    ASSERT_MEM_EQ(set, all, 300 * sizeof *set);
    ib_lg_plan_destroy(p);

    /* accuracy (SubmissionRun): consecutive sets of P, then the perf set;
     * MultiStream pads each with its first spq-1 entries */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_MULTI_STREAM;
    s.mode = IB_LG_MODE_SUBMISSION;
    s.multi_stream_samples_per_query = 4;
    s.accuracy_sample_count_override = 700;
    make_plan(&s, 1000, 300, &e, &p);
    ASSERT_UINT_EQ(ib_lg_plan_set_count(p), 4);
    ASSERT_UINT_EQ(ib_lg_plan_accuracy_set_count(p), 3);
    ASSERT_UINT_EQ(ib_lg_plan_performance_set_index(p), 3);
    size_t seen[700] = {0}, total = 0;
    for (size_t i = 0; i < 3; i++) {
        set = ib_lg_plan_set(p, i, &len, &end);
        ASSERT_UINT_EQ(end, i < 2 ? 300 : 100);
        ASSERT_UINT_EQ(len, end + 3);
        for (size_t k = 0; k < 3; k++)
            ASSERT_UINT_EQ(set[end + k], set[k]);
        for (size_t k = 0; k < end; k++) {
            ASSERT_UINT_LE(set[k] + 1, 700);
            seen[set[k]]++;
            total++;
        }
    }
    ASSERT_UINT_EQ(total, 700);
    for (size_t i = 0; i < 700; i++)
        ASSERT_UINT_EQ(seen[i], 1);
    ib_lg_plan_destroy(p);
}

/* The official loop `while (prev < gen || n < minq)` with a constant period. */
static uint64_t loop_count(int64_t gen, int64_t T, uint64_t minq, bool grow, uint64_t len)
{
    uint64_t n = 0;
    int64_t ts = 0, prev = 0;
    while (prev < gen || n < minq) {
        n++;
        prev = ts;
        ts += T;
        if (grow && n >= minq && prev < gen) minq += len;
    }
    return n;
}

TEST(loadgen_plan_prepass_matches_generation_loop)
{
    const double lat_ns[] = {1e6, 3e6, 7.5e6, 1234567.0};
    const uint64_t minqs[] = {1, 50, 333, 1000};
    const uint64_t durs[] = {0, 1, 999, 2500};
    for (int eq = 0; eq < 2; eq++)
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 4; b++)
                for (size_t c = 0; c < 4; c++) {
                    ib_lg_settings s;
                    ib_lg_settings_defaults(&s);
                    s.scenario = IB_LG_SCENARIO_MULTI_STREAM; /* no equal-issue rounding */
                    s.multi_stream_samples_per_query = 2;
                    s.multi_stream_expected_latency_ns = lat_ns[a];
                    s.min_query_count = minqs[b];
                    s.min_duration_ms = durs[c];
                    s.sample_concatenate_permutation = eq;
                    ib_lg_effective e;
                    ib_lg_plan *p;
                    make_plan(&s, 500, 37, &e, &p);
                    ib_lg_series *sr = make_series(p, 0, false, 0);
                    int64_t T = (int64_t)((1.0 / e.target_qps) * 1e9);
                    uint64_t len = 37 + 1, minq = minqs[b];
                    if (eq && minq % len) minq += len - minq % len;
                    uint64_t want = loop_count(2 * (int64_t)durs[c] * 1000000, T, minq, eq, len);
                    ASSERT_UINT_EQ(ib_lg_series_query_count(sr), want);
                    ASSERT_INT_EQ(ib_lg_series_duration_ns(sr), (int64_t)want * T);
                    ASSERT_INT_EQ(ib_lg_series_last_scheduled_ns(sr), (int64_t)(want - 1) * T);
                    uint64_t n = 0;
                    ib_lg_query q;
                    while (ib_lg_series_next(sr, &q)) {
                        ASSERT_INT_EQ(q.scheduled_ns, (int64_t)n * T);
                        ASSERT_UINT_EQ(q.index, n);
                        n++;
                    }
                    ASSERT_UINT_EQ(n, want);
                    ib_lg_series_destroy(sr);
                    ib_lg_plan_destroy(p);
                }
}

/*
 * Server equal issue, eagerly: the sample engine shuffles the unique list,
 * then ceil(minq/len) successive shuffles of one identity permutation are
 * concatenated and consumed cyclically (loadgen.md §2.4 item 3).
 */
TEST(loadgen_plan_equal_issue_matches_eager_construction)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.server_target_qps = 1000;
    s.min_duration_ms = 100; /* about 100 queries: wraps the 3 x 7 list */
    s.min_query_count = 20;
    s.sample_concatenate_permutation = true;
    s.sample_index_rng_seed = 1234;
    s.schedule_rng_seed = 99;
    ib_lg_effective e;
    ib_lg_plan *p;
    make_plan(&s, 50, 7, &e, &p);
    size_t len;
    const size_t *loaded = ib_lg_plan_set(p, 0, &len, NULL);
    ASSERT_UINT_EQ(len, 7);
    ib_lg_series *sr = make_series(p, 0, false, 0);

    ib_lg_rng r;
    ib_lg_rng_seed(&r, 1234);
    size_t uniq[7], perm[7], list[21];
    for (size_t i = 0; i < 7; i++)
        uniq[i] = perm[i] = i;
    ib_lg_rng_shuffle(&r, uniq, 7, IB_LG_RNG_LIBSTDCXX11);
    for (size_t k = 0; k < 3; k++) {
        ib_lg_rng_shuffle(&r, perm, 7, IB_LG_RNG_LIBSTDCXX11);
        memcpy(list + 7 * k, perm, sizeof perm);
    }
    /* count: minq 20 -> 21, grown by 7 until the schedule passes 100 ms */
    ib_lg_rng sched;
    ib_lg_rng_seed(&sched, 99);
    uint64_t minq = 21, n = 0;
    int64_t ts = 0, prev = 0;
    while (prev < 100000000 || n < minq) {
        n++;
        prev = ts;
        ts += ib_lg_rng_exponential_ns(&sched, 1000);
        if (n >= minq && prev < 100000000) minq += 7;
    }
    ASSERT_UINT_EQ(ib_lg_series_query_count(sr), n);
    ASSERT_UINT_GE(n, 43); /* wraps the 21-entry list at least twice */
    ASSERT_INT_EQ(ib_lg_series_duration_ns(sr), ts);
    ASSERT_UINT_EQ(n % 7, 0); /* whole sets */
    ib_lg_query q;
    uint64_t i = 0;
    while (ib_lg_series_next(sr, &q)) {
        ASSERT_UINT_EQ(q.qsl_idx[0], loaded[list[i % 21]]);
        i++;
    }
    ASSERT_UINT_EQ(i, n);
    ib_lg_series_destroy(sr);
    ib_lg_plan_destroy(p);
}

TEST(loadgen_plan_offline_equal_issue_and_same)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_OFFLINE;
    s.offline_expected_qps = 100;
    s.min_duration_ms = 1000; /* spq = 110 -> padded to 120 = 4 x 30 */
    s.sample_concatenate_permutation = true;
    ib_lg_effective e;
    ib_lg_plan *p;
    make_plan(&s, 100, 30, &e, &p);
    size_t len;
    const size_t *loaded = ib_lg_plan_set(p, 0, &len, NULL);
    ib_lg_series *sr = make_series(p, 0, false, 0);
    ASSERT_UINT_EQ(ib_lg_series_query_count(sr), 1);
    ASSERT_UINT_EQ(ib_lg_series_samples_per_query(sr), 120);
    ib_lg_query q;
    ASSERT_TRUE(ib_lg_series_next(sr, &q));
    ASSERT_UINT_EQ(q.n_samples, 120);
    bool differs = false;
    for (size_t b = 0; b < 4; b++) {
        size_t blk[30], ref[30];
        memcpy(blk, q.qsl_idx + 30 * b, sizeof blk);
        memcpy(ref, loaded, sizeof ref);
        differs |= memcmp(blk, ref, sizeof blk) != 0;
        qsort(blk, 30, sizeof *blk, cmp_size);
        qsort(ref, 30, sizeof *ref, cmp_size);
        ASSERT_MEM_EQ(blk, ref, sizeof blk); /* each block: the set, reshuffled */
    }
    ASSERT_TRUE(differs);
    ASSERT_FALSE(ib_lg_series_next(sr, &q));
    ib_lg_series_destroy(sr);
    ib_lg_plan_destroy(p);

    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_OFFLINE;
    s.offline_expected_qps = 100;
    s.min_duration_ms = 1000;
    s.performance_issue_same = true;
    s.performance_issue_same_index = 3;
    make_plan(&s, 100, 30, &e, &p);
    loaded = ib_lg_plan_set(p, 0, &len, NULL);
    sr = make_series(p, 0, false, 0);
    ASSERT_TRUE(ib_lg_series_next(sr, &q));
    ASSERT_UINT_EQ(q.n_samples, 110);
    for (size_t k = 0; k < q.n_samples; k++)
        ASSERT_UINT_EQ(q.qsl_idx[k], loaded[3]);
    ib_lg_series_destroy(sr);
    ib_lg_plan_destroy(p);
}

TEST(loadgen_plan_multistream_unique_and_same)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_MULTI_STREAM;
    s.multi_stream_samples_per_query = 8;
    s.performance_issue_unique = true;
    ib_lg_effective e;
    ib_lg_plan *p;
    make_plan(&s, 1000, 100, &e, &p);
    size_t len, end;
    const size_t *loaded = ib_lg_plan_set(p, 0, &len, &end);
    ASSERT_UINT_EQ(len, 107);
    ib_lg_series *sr = make_series(p, 0, false, 0);
    ASSERT_UINT_EQ(ib_lg_series_query_count(sr), 13); /* 107 / 8 = ceil(100 / 8) */
    bool start_seen[13] = {false};
    ib_lg_query q;
    while (ib_lg_series_next(sr, &q)) {
        size_t start = 0;
        while (start < len && loaded[start] != q.qsl_idx[0])
            start++;
        ASSERT_UINT_EQ(start % 8, 0);
        ASSERT_FALSE(start_seen[start / 8]);
        start_seen[start / 8] = true;
        for (size_t k = 0; k < 8; k++)
            ASSERT_UINT_EQ(q.qsl_idx[k], loaded[start + k]);
    }
    ib_lg_series_destroy(sr);
    ib_lg_plan_destroy(p);

    s.performance_issue_unique = false;
    s.performance_issue_same = true;
    s.performance_issue_same_index = 95; /* reads into the padding */
    s.min_duration_ms = 0;
    s.min_query_count = 5;
    make_plan(&s, 1000, 100, &e, &p);
    loaded = ib_lg_plan_set(p, 0, &len, &end);
    sr = make_series(p, 0, false, 0);
    ASSERT_UINT_EQ(ib_lg_series_query_count(sr), 5);
    while (ib_lg_series_next(sr, &q))
        for (size_t k = 0; k < 8; k++)
            ASSERT_UINT_EQ(q.qsl_idx[k], loaded[95 + k]);
    ib_lg_series_destroy(sr);
    ib_lg_plan_destroy(p);
}

TEST(loadgen_plan_submission_and_find_peak_sequence_ids)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    s.mode = IB_LG_MODE_SUBMISSION;
    s.min_duration_ms = 10;
    s.min_query_count = 3;
    s.accuracy_log_probability = 0.5;
    ib_lg_effective e;
    ib_lg_plan *p;
    make_plan(&s, 250, 100, &e, &p);
    ASSERT_UINT_EQ(ib_lg_plan_accuracy_set_count(p), 3);
    uint64_t next = 0;
    for (size_t i = 0; i < ib_lg_plan_set_count(p); i++) {
        bool acc = i < ib_lg_plan_accuracy_set_count(p);
        ib_lg_series *sr = make_series(p, i, acc, 0);
        ASSERT_UINT_EQ(ib_lg_series_first_seq_id(sr), next);
        if (!acc) /* 2 x 10 ms at 1 ms per query: 21 generated queries */
            ASSERT_UINT_EQ(ib_lg_series_query_count(sr), 21);
        next += ib_lg_series_sample_count(sr);
        ib_lg_query q;
        uint64_t logged = 0, n = 0;
        while (ib_lg_series_next(sr, &q)) {
            logged += ib_lg_plan_sample_logged(p, q.first_seq_id);
            n++;
        }
        if (acc) /* accuracy: every index of the set once, all logged */
            ASSERT_UINT_EQ(logged, n);
        else
            ASSERT_UINT_LE(logged, n);
        ib_lg_series_destroy(sr);
    }
    ASSERT_UINT_EQ(next, 250 + 21);
    ib_lg_plan_destroy(p);

    /* FindPeak probes: new series at other QPS; sampling by target uses the
     * probe's QPS (expected = qps * min_duration). */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.mode = IB_LG_MODE_FIND_PEAK;
    s.server_target_qps = 100;
    s.min_duration_ms = 1000;
    s.min_query_count = 10;
    s.accuracy_log_sampling_target = 50;
    make_plan(&s, 1000, 100, &e, &p);
    ib_lg_series *a = make_series(p, 0, false, 0);
    uint64_t na = ib_lg_series_query_count(a);
    ASSERT_DBL_EQ(ib_lg_series_log_probability(a), 50.0 / 100.0);
    ib_lg_series_destroy(a);
    ib_lg_series *b = make_series(p, 0, false, 200);
    ASSERT_UINT_EQ(ib_lg_series_first_seq_id(b), na);
    ASSERT_DBL_EQ(ib_lg_series_log_probability(b), 50.0 / 200.0);
    ASSERT_INT_GT(ib_lg_series_query_count(b), na);
    ib_lg_series_destroy(b);
    ib_lg_plan_destroy(p);
}

TEST(loadgen_plan_sample_logged_any_order)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.server_target_qps = 1000;
    s.min_duration_ms = 2000;
    s.accuracy_log_rng_seed = 720381539243781796ull;
    s.accuracy_log_probability = 0.1;
    ib_lg_effective e;
    ib_lg_plan *p;
    make_plan(&s, 1000, 100, &e, &p);
    ib_lg_series *sr = make_series(p, 0, false, 0);
    uint64_t n = ib_lg_series_sample_count(sr);
    bool *seq = malloc(n);
    size_t logged = 0;
    for (uint64_t i = 0; i < n; i++)
        logged += seq[i] = ib_lg_plan_sample_logged(p, i);
    ASSERT_INT_GT(logged, n / 20);
    ASSERT_UINT_LE(logged, n / 5);
    /* backwards, strided: the same decisions */
    for (uint64_t i = n; i-- > 0;)
        if (i % 97 == 0) ASSERT_INT_EQ(ib_lg_plan_sample_logged(p, i), seq[i]);
    ASSERT_FALSE(ib_lg_plan_sample_logged(p, n)); /* outside every series */
    free(seq);
    ib_lg_series_destroy(sr);
    ib_lg_plan_destroy(p);
}

TEST(loadgen_plan_refused_settings)
{
    ib_lg_settings s;
    ib_lg_effective e;
    ib_lg_plan *p;
    ib_lg_series *sr;
    ib_err err;
    /* same index inside P but outside the capped set */
    ib_lg_settings_defaults(&s);
    s.performance_issue_same = true;
    s.performance_issue_same_index = 150;
    s.performance_sample_count_override = 200;
    make_plan(&s, 100, 50, &e, &p);
    ASSERT_STATUS(ib_lg_series_create(p, 0, false, 0, &sr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "outside the loaded set");
    ASSERT_STATUS(ib_lg_series_create(p, 5, false, 0, &sr, &err), IB_EINVAL);
    ib_lg_plan_destroy(p);
    /* a period that rounds to 0 ns with a duration: would never stop */
    ib_lg_settings_defaults(&s);
    s.single_stream_expected_latency_ns = 1.0;
    s.min_duration_ms = 1;
    make_plan(&s, 100, 50, &e, &p);
    ASSERT_OK(ib_lg_series_create(p, 0, false, 0, &sr, &err)); /* 1 ns period is fine */
    ASSERT_UINT_EQ(ib_lg_series_query_count(sr), 2000001);
    ib_lg_series_destroy(sr);
    ASSERT_STATUS(ib_lg_series_create(p, 0, false, 2e9, &sr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "rounds to 0 ns");
    ib_lg_plan_destroy(p);
    /* equal issue with no minimum query count */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.sample_concatenate_permutation = true;
    s.min_query_count = 0;
    s.min_duration_ms = 10;
    make_plan(&s, 100, 50, &e, &p);
    ASSERT_STATUS(ib_lg_series_create(p, 0, false, 0, &sr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "equal issue");
    ib_lg_plan_destroy(p);
    /* a Server plan far beyond what can be generated */
    ib_lg_settings_defaults(&s);
    s.scenario = IB_LG_SCENARIO_SERVER;
    s.server_target_qps = 1e12;
    s.min_duration_ms = 600000;
    make_plan(&s, 100, 50, &e, &p);
    ASSERT_STATUS(ib_lg_series_create(p, 0, false, 0, &sr, &err), IB_EINVAL);
    ib_lg_plan_destroy(p);
    ib_lg_plan_destroy(NULL);
    ib_lg_series_destroy(NULL);
}
