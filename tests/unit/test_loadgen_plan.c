/*
 * test_loadgen_plan.c - loadable sets and query series beyond the golden
 * cases: both set rules, accuracy partitions and MultiStream padding, the
 * closed-form pre-pass against the official generation loop, equal issue
 * (lazy permutation replay against an eager construction from the same RNG
 * primitives, Server and Offline), unique/same modes, SubmissionRun and
 * FindPeak sequence ids, accuracy-log sampling in any call order, and the
 * settings a series refuses; and vectors recorded from the official LoadGen
 * 6.0.17 for the modes the golden cases do not reach.
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

/*
 * Cross-check vectors from the official LoadGen 6.0.17 (mlcommons/inference
 * b66003e1, loadgen/ built with g++ 12 against libstdc++ 12), driven by a null
 * SUT like ../shared/golden's, with TestSettings set directly (no config
 * file) from the key=value list, trace off. They cover what the golden cases
 * do not: equal issue in every scenario and in accuracy mode, Offline
 * SubmissionRun / unique / equal issue, MultiStream Fisher-Yates, unique and
 * equal issue, SingleStream over-generation, capped accuracy counts, sampled
 * SubmissionRun logs. Hashes are FNV-1a 64 over: every loaded_qsl_set (its
 * length, then its entries); the QSL indices the SUT received in call order
 * (the first `issued` queries: SingleStream/MultiStream stop early); the
 * accuracy log's (seq_id, qsl_idx) pairs sorted by seq_id. Rows starting
 * with rules=1 come from the r1.1 LoadGen (b1452de4, same compiler) and pin
 * the v1.1 rule set: performance_issue_same issuing the set once, the
 * Offline same-index fill, fixed-rate MultiStream accuracy/unique, the set
 * as the first P of a shuffle of all indices, SubmissionRun.
 */
static const struct xcheck {
    const char *name, *args;
    size_t ngen;
    struct {
        uint64_t count, spq;
        int64_t duration;
    } gen[4];
    uint64_t issued, sets_hash, issued_hash, acc_count, acc_hash;
} k_official[] = {
    {"e01_ss_equal",
     "scenario=0 total=300 perf=100 concat=1 min_dur=0 min_q=250 ss_lat=1e6 prob=1 qsl_seed=11 "
     "sample_seed=12 sched_seed=13",
     1,
     {{300, 1, 300000000ll}},
     300,
     13735544398691825745ull,
     15313153185696648595ull,
     300,
     18226878078750933679ull},
    {"e02_server_equal",
     "scenario=2 total=500 perf=50 concat=1 server_qps=2000 min_dur=500 min_q=30 prob=1 "
     "qsl_seed=21 sample_seed=22 sched_seed=23",
     1,
     {{1000, 1, 507923982ll}},
     1000,
     10381088650801545978ull,
     10629839081779659427ull,
     1000,
     6527874397309236899ull},
    {"e03_ms_fy",
     "scenario=1 total=100000 perf=70001 spq=8 ms_lat=1e6 min_dur=0 min_q=300 prob=1 qsl_seed=31 "
     "sample_seed=32 sched_seed=33",
     1,
     {{300, 8, 300000000ll}},
     300,
     13730578224106245537ull,
     2774739166341009357ull,
     2400,
     2064263415681218741ull},
    {"e04_off_unique",
     "scenario=3 total=2000 perf=300 ps_override=500 unique=1 offline_qps=100 min_dur=100 prob=1 "
     "qsl_seed=41 sample_seed=42",
     1,
     {{1, 500, 10000000ll}},
     1,
     11411405364735209183ull,
     7085516510757409333ull,
     500,
     3030775220139689003ull},
    {"e05_off_submission",
     "scenario=3 mode=0 total=2500 perf=1000 offline_qps=500 min_dur=1000 prob=1 qsl_seed=51 "
     "sample_seed=52",
     4,
     {{1, 1000, 2000000ll}, {1, 1000, 2000000ll}, {1, 500, 2000000ll}, {1, 550, 2000000ll}},
     4,
     6735629873883696331ull,
     15629712264725540594ull,
     3050,
     139736590805516853ull},
    {"e06_server_same",
     "scenario=2 same=1 same_index=5 total=1000 perf=100 server_qps=1000 min_dur=300 prob=1 "
     "qsl_seed=61 sample_seed=62 sched_seed=63",
     1,
     {{278, 1, 301371931ll}},
     278,
     5788968862788058057ull,
     17838234720167786483ull,
     278,
     18140342365061200618ull},
    {"e07_ss_acc_equal",
     "scenario=0 mode=1 total=250 perf=100 concat=1 qsl_seed=71 sample_seed=72",
     3,
     {{100, 1, 100000000ll}, {100, 1, 100000000ll}, {50, 1, 50000000ll}},
     250,
     12213232792064423640ull,
     12715595727206242616ull,
     250,
     1496111503264661637ull},
    {"e08_ms_acc",
     "scenario=1 mode=1 total=1000 perf=300 spq=4 qsl_seed=81 sample_seed=82",
     4,
     {{75, 4, 600000000ll}, {75, 4, 600000000ll}, {75, 4, 600000000ll}, {25, 4, 200000000ll}},
     250,
     8370169160670785926ull,
     16401050005813933095ull,
     1000,
     3001752594117943815ull},
    {"e09_off_equal",
     "scenario=3 total=100 perf=30 concat=1 offline_qps=100 min_dur=1000 prob=1 qsl_seed=91 "
     "sample_seed=92",
     1,
     {{1, 120, 10000000ll}},
     1,
     8591874183359988916ull,
     18231725444103349655ull,
     120,
     13803494597333128723ull},
    {"e10_server_acc",
     "scenario=2 mode=1 total=500 perf=200 server_qps=1000 qsl_seed=101 sample_seed=102 "
     "sched_seed=103",
     3,
     {{200, 1, 194366977ll}, {200, 1, 194366977ll}, {100, 1, 99710844ll}},
     500,
     6917686376272751695ull,
     17361295818109259401ull,
     500,
     5503415216379060887ull},
    {"e11_ss_overgen",
     "scenario=0 total=1000 perf=100 ss_lat=1e6 min_dur=100 min_q=10 prob=1 qsl_seed=111 "
     "sample_seed=112",
     1,
     {{201, 1, 201000000ll}},
     201,
     18026952323749546783ull,
     17054662576649690479ull,
     201,
     3641402132213390923ull},
    {"e12_ss_submission_sampled",
     "scenario=0 mode=0 total=300 perf=100 min_dur=0 min_q=200 target=50 "
     "acc_seed=720381539243781796 qsl_seed=121 sample_seed=122",
     4,
     {{100, 1, 100000000ll}, {100, 1, 100000000ll}, {100, 1, 100000000ll}, {200, 1, 200000000ll}},
     500,
     9618067154498007765ull,
     13639269963012400156ull,
     354,
     13197553240823444538ull},
    {"e13_server_submission",
     "scenario=2 mode=0 total=300 perf=128 server_qps=3000 min_dur=200 min_q=50 prob=0.3 "
     "acc_seed=5 qsl_seed=131 sample_seed=132 sched_seed=133",
     4,
     {{128, 1, 40492096ll}, {128, 1, 40492096ll}, {44, 1, 11292269ll}, {617, 1, 200181344ll}},
     917,
     10942549848343565263ull,
     13455332128075021690ull,
     500,
     4715578510984672393ull},
    {"e14_ms_unique",
     "scenario=1 unique=1 total=1000 perf=100 spq=8 ms_lat=1e6 min_dur=0 min_q=5 prob=1 "
     "qsl_seed=141 sample_seed=142",
     1,
     {{13, 8, 13000000ll}},
     5,
     11281423362405033680ull,
     96163056008083577ull,
     40,
     14489411293529158315ull},
    {"e15_acc_override_cap",
     "scenario=0 mode=1 total=400 perf=150 acc_override=1000 qsl_seed=151 sample_seed=152",
     3,
     {{150, 1, 150000000ll}, {150, 1, 150000000ll}, {100, 1, 100000000ll}},
     400,
     16965022797544367633ull,
     11836842620401389689ull,
     400,
     7097217138369244071ull},
    {"e16_server_equal_big",
     "scenario=2 total=100000 perf=70000 concat=1 server_qps=5000 min_dur=200 min_q=100 prob=1 "
     "qsl_seed=161 sample_seed=162 sched_seed=163",
     1,
     {{70000, 1, 13915317828ll}},
     70000,
     768524309397259825ull,
     760539566746666949ull,
     70000,
     492083460717610959ull},
    {"e17_ms_equal",
     "scenario=1 total=1000 perf=100 spq=3 concat=1 ms_lat=1e6 min_dur=0 min_q=150 prob=1 "
     "qsl_seed=171 sample_seed=172",
     1,
     {{204, 3, 204000000ll}},
     150,
     2190146321636121271ull,
     4608423571254951875ull,
     450,
     16239955581804419856ull},
    {"e18_off_acc_equal_same",
     "scenario=3 mode=1 total=300 perf=100 concat=1 qsl_seed=181 sample_seed=182",
     3,
     {{1, 100, 1000000000ll}, {1, 100, 1000000000ll}, {1, 100, 1000000000ll}},
     3,
     13716552885095042599ull,
     2150021074099253783ull,
     300,
     3343682839856211115ull},
    {"x01_ss_same",
     "rules=1 scenario=0 same=1 same_index=7 total=500 perf=120 ss_lat=1000000 min_dur=100 "
     "min_q=50 prob=1 qsl_seed=201 sample_seed=202",
     1,
     {{120, 1, 120000000ll}},
     120,
     6237869525205383592ull,
     18196862860153458523ull,
     120,
     1334744071313566771ull},
    {"x02_off_same",
     "rules=1 scenario=3 same=1 same_index=3 total=300 perf=80 offline_qps=100 min_dur=1000 prob=1 "
     "qsl_seed=211 sample_seed=212",
     1,
     {{1, 80, 10000000ll}},
     1,
     14561228378161980121ull,
     1588425820414273923ull,
     80,
     14560683213001394979ull},
    {"x04_ms_acc",
     "rules=1 scenario=1 mode=1 total=700 perf=200 spq=4 ms_qps=100 qsl_seed=221 sample_seed=222",
     4,
     {{50, 4, 500000000ll}, {50, 4, 500000000ll}, {50, 4, 500000000ll}, {25, 4, 250000000ll}},
     175,
     9803854153650104693ull,
     18089815758998695359ull,
     700,
     3607577447600665323ull},
    {"x05_ms_unique",
     "rules=1 scenario=1 unique=1 total=500 perf=100 spq=6 ms_qps=1000 min_dur=0 min_q=10 prob=1 "
     "qsl_seed=231 sample_seed=232",
     1,
     {{17, 6, 17000000ll}},
     10,
     13484738682548648293ull,
     1047325180036226326ull,
     60,
     11124403901070644802ull},
    {"x06_server_submission",
     "rules=1 scenario=2 mode=0 total=300 perf=128 server_qps=3000 min_dur=200 min_q=50 prob=0.3 "
     "acc_seed=5 qsl_seed=241 sample_seed=242 sched_seed=243",
     4,
     {{128, 1, 43637358ll}, {128, 1, 43637358ll}, {44, 1, 9890355ll}, {590, 1, 201335290ll}},
     890,
     780648282915771190ull,
     5095332166350930846ull,
     494,
     8744192014333018024ull},
    {"x07_ss_submission_sampled",
     "rules=1 scenario=0 mode=0 total=300 perf=100 min_dur=0 min_q=200 target=50 "
     "acc_seed=720381539243781796 qsl_seed=251 sample_seed=252",
     4,
     {{100, 1, 100000000ll}, {100, 1, 100000000ll}, {100, 1, 100000000ll}, {200, 1, 200000000ll}},
     500,
     11150280412654499063ull,
     16425733042085134645ull,
     354,
     16699721485736077316ull},
    {"x08_server_fy_total",
     "rules=1 scenario=2 total=100000 perf=70001 server_qps=2000 min_dur=300 min_q=10 prob=1 "
     "qsl_seed=261 sample_seed=262 sched_seed=263",
     1,
     {{621, 1, 300694305ll}},
     621,
     11362494192446186691ull,
     17575454926789925378ull,
     621,
     9841469821607561778ull},
    {"x09_off_unique",
     "rules=1 scenario=3 unique=1 total=2000 perf=300 offline_qps=100 min_dur=100 prob=1 "
     "qsl_seed=271 sample_seed=272",
     1,
     {{1, 300, 10000000ll}},
     1,
     6594347332315928685ull,
     5215899874776558983ull,
     300,
     899790155748701017ull},
    {"x10_server_same",
     "rules=1 scenario=2 same=1 same_index=5 total=1000 perf=100 server_qps=1000 min_dur=300 "
     "prob=1 qsl_seed=281 sample_seed=282 sched_seed=283",
     1,
     {{100, 1, 100081315ll}},
     100,
     5026580764286500425ull,
     17268164943461254387ull,
     100,
     2930057653203964883ull},
    {"x11_ss_overgen",
     "rules=1 scenario=0 total=1000 perf=100 ss_lat=1000000 min_dur=100 min_q=10 prob=1 "
     "qsl_seed=291 sample_seed=292",
     1,
     {{201, 1, 201000000ll}},
     201,
     1470953312693941285ull,
     14041637880213494344ull,
     201,
     15114594955804820900ull},
    {"x12_ms_perf",
     "rules=1 scenario=1 total=3000 perf=999 spq=8 ms_qps=500 min_dur=0 min_q=300 prob=1 "
     "qsl_seed=301 sample_seed=302",
     1,
     {{300, 8, 600000000ll}},
     300,
     15960896002802507278ull,
     5292783616302419759ull,
     2400,
     9608140809978423149ull},
};

static uint64_t fnv(uint64_t h, uint64_t x)
{
    return (h ^ x) * 1099511628211ull;
}

static void xcheck_settings(const char *args, ib_lg_settings *s, uint64_t *total, uint64_t *perf)
{
    ib_lg_settings_defaults(s);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", args);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        ASSERT_NOT_NULL(eq);
        *eq = 0;
        const char *k = tok, *v = eq + 1;
        uint64_t u = strtoull(v, NULL, 0);
        double d = strtod(v, NULL);
        if (!strcmp(k, "rules")) {
            enum ib_lg_scenario sc = s->scenario;
            ib_lg_settings_defaults_rules(s, (enum ib_lg_rules)u);
            s->scenario = sc;
        } else if (!strcmp(k, "scenario"))
            s->scenario = (enum ib_lg_scenario)u;
        else if (!strcmp(k, "mode"))
            s->mode = (enum ib_lg_mode)u;
        else if (!strcmp(k, "total"))
            *total = u;
        else if (!strcmp(k, "perf"))
            *perf = u;
        else if (!strcmp(k, "ss_lat"))
            s->single_stream_expected_latency_ns = d;
        else if (!strcmp(k, "ms_lat"))
            s->multi_stream_expected_latency_ns = d;
        else if (!strcmp(k, "spq"))
            s->multi_stream_samples_per_query = u;
        else if (!strcmp(k, "server_qps"))
            s->server_target_qps = d;
        else if (!strcmp(k, "offline_qps"))
            s->offline_expected_qps = d;
        else if (!strcmp(k, "concat"))
            s->sample_concatenate_permutation = u != 0;
        else if (!strcmp(k, "min_dur"))
            s->min_duration_ms = u;
        else if (!strcmp(k, "min_q"))
            s->min_query_count = u;
        else if (!strcmp(k, "qsl_seed"))
            s->qsl_rng_seed = u;
        else if (!strcmp(k, "sample_seed"))
            s->sample_index_rng_seed = u;
        else if (!strcmp(k, "sched_seed"))
            s->schedule_rng_seed = u;
        else if (!strcmp(k, "acc_seed"))
            s->accuracy_log_rng_seed = u;
        else if (!strcmp(k, "prob"))
            s->accuracy_log_probability = d;
        else if (!strcmp(k, "target"))
            s->accuracy_log_sampling_target = u;
        else if (!strcmp(k, "unique"))
            s->performance_issue_unique = u != 0;
        else if (!strcmp(k, "same"))
            s->performance_issue_same = u != 0;
        else if (!strcmp(k, "same_index"))
            s->performance_issue_same_index = u;
        else if (!strcmp(k, "ps_override"))
            s->performance_sample_count_override = u;
        else if (!strcmp(k, "acc_override"))
            s->accuracy_sample_count_override = u;
        else if (!strcmp(k, "ms_qps"))
            s->multi_stream_target_qps = d;
        else
            ib_test_fail(__FILE__, __LINE__, "unknown key %s", k);
    }
}

TEST(loadgen_plan_official_loadgen_cross_check)
{
    for (size_t c = 0; c < sizeof k_official / sizeof k_official[0]; c++) {
        const struct xcheck *x = &k_official[c];
        ib_lg_settings s;
        uint64_t total = 1000, perf = 100;
        xcheck_settings(x->args, &s, &total, &perf);
        ib_lg_effective e;
        ib_lg_plan *p;
        make_plan(&s, total, perf, &e, &p);
        ASSERT_UINT_EQ(ib_lg_plan_set_count(p), x->ngen);
        uint64_t hs = 1469598103934665603ull, hi = hs, ha = hs, queries = 0, nacc = 0;
        for (size_t i = 0; i < ib_lg_plan_set_count(p); i++) {
            size_t len;
            const size_t *set = ib_lg_plan_set(p, i, &len, NULL);
            hs = fnv(hs, len);
            for (size_t k = 0; k < len; k++)
                hs = fnv(hs, set[k]);
            ib_lg_series *sr = make_series(p, i, i < ib_lg_plan_accuracy_set_count(p), 0);
            if (ib_lg_series_query_count(sr) != x->gen[i].count ||
                ib_lg_series_samples_per_query(sr) != x->gen[i].spq ||
                ib_lg_series_duration_ns(sr) != x->gen[i].duration)
                ib_test_fail(__FILE__, __LINE__, "%s: series %zu generated %llu/%llu/%lld", x->name,
                             i, (unsigned long long)ib_lg_series_query_count(sr),
                             (unsigned long long)ib_lg_series_samples_per_query(sr),
                             (long long)ib_lg_series_duration_ns(sr));
            ib_lg_query q;
            while (queries < x->issued && ib_lg_series_next(sr, &q)) {
                for (size_t k = 0; k < q.n_samples; k++) {
                    hi = fnv(hi, q.qsl_idx[k]);
                    if (ib_lg_plan_sample_logged(p, q.first_seq_id + k)) {
                        ha = fnv(fnv(ha, q.first_seq_id + k), q.qsl_idx[k]);
                        nacc++;
                    }
                }
                queries++;
            }
            ib_lg_series_destroy(sr);
        }
        if (hs != x->sets_hash) ib_test_fail(__FILE__, __LINE__, "%s: loaded sets differ", x->name);
        if (queries != x->issued || hi != x->issued_hash)
            ib_test_fail(__FILE__, __LINE__, "%s: issue order differs", x->name);
        if (nacc != x->acc_count || ha != x->acc_hash)
            ib_test_fail(__FILE__, __LINE__, "%s: accuracy log differs (%llu entries)", x->name,
                         (unsigned long long)nacc);
        ib_lg_plan_destroy(p);
    }
}
