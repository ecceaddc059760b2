/*
 * test_loadgen_results.c - percentiles (element floor(N*p)), integer mean,
 * per-scenario metrics with the (N-1) numerators, validity rules, early
 * stopping texts, the v1.1 interval rule, the multi-selection, and the
 * INVALID explanation.
 */
#include <stdlib.h>

#include "loadgen/results.h"
#include "loadgen/results_select.h"
#include "test.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

TEST(loadgen_results_select_matches_sort)
{
    srand(7);
    for (int trial = 0; trial < 400; trial++) {
        size_t n = 1 + (size_t)(rand() % 3000);
        int mod = trial % 3 == 0 ? 2 : 1 + rand() % 100000;
        int64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        ASSERT_NOT_NULL(a);
        ASSERT_NOT_NULL(b);
        for (size_t i = 0; i < n; i++) {
            a[i] = trial % 5 == 0 ? (int64_t)(n - i) : rand() % mod; /* descending, dups */
            b[i] = a[i];
        }
        size_t ranks[8] = {0, n / 2, n * 9 / 10, n - 1, n * 99 / 100, n + 5, n / 3, n / 2};
        ib_lg_select_ranks(a, n, ranks, 8);
        qsort(b, n, sizeof *b, cmp_i64);
        for (int k = 0; k < 8; k++)
            if (ranks[k] < n)
                ASSERT_INT_EQ(a[ranks[k]], b[ranks[k]]);
        free(a);
        free(b);
    }
}

static ib_lg_perf_params server_params(void)
{
    ib_lg_perf_params p = {0};
    p.scenario = IB_LG_SCENARIO_SERVER;
    p.target_latency_percentile = 0.99;
    p.target_latency_ns = 1000;
    p.min_duration_ms = 1000;
    p.min_query_count = 100;
    p.min_sample_count = 100;
    p.samples_per_query = 1;
    p.target_qps = 1000;
    return p;
}

TEST(loadgen_results_percentiles_and_mean)
{
    /* 1..1000 shuffled: element floor(N*p) of the sorted order */
    int64_t lat[1000];
    for (int i = 0; i < 1000; i++)
        lat[i] = (int64_t)((i * 617) % 1000) + 1;
    ib_lg_perf_params p = server_params();
    p.target_latency_ns = 2000;
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 1000, .queries_issued = 1000};
    d.final_query_scheduled_s = 1.0;
    d.final_query_all_samples_done_s = 2.0;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_INT_EQ(s.min_latency, 1);
    ASSERT_INT_EQ(s.max_latency, 1000);
    ASSERT_INT_EQ(s.mean_latency, 500); /* 500500 / 1000 = 500 (integer) */
    ASSERT_INT_EQ(s.percentile_latency[0], 501);  /* [500] */
    ASSERT_INT_EQ(s.percentile_latency[1], 901);  /* [900] */
    ASSERT_INT_EQ(s.percentile_latency[4], 991);  /* [990] */
    ASSERT_INT_EQ(s.percentile_latency[5], 1000); /* [999] */
    ASSERT_INT_EQ(s.target_latency_value, 991);
    /* (N-1)/t numerators */
    ASSERT_DBL_EQ(s.scheduled_samples_per_sec, 999.0);
    ASSERT_DBL_EQ(s.completed_samples_per_sec, 499.5);
    ASSERT_TRUE(s.valid);
    ASSERT_STR_EQ(s.early_stopping_rec, " * Run successful.");
    char label[16];
    ib_lg_percentile_label(0.999, label, sizeof label);
    ASSERT_STR_EQ(label, "99.90");
}

TEST(loadgen_results_server_latency_bound_and_es)
{
    /* 1000 samples, 20 over the bound: p99 = element 990 is over -> perf
     * constraints fail; early stopping needs h(20) + 20 > 1000 queries */
    int64_t lat[1000];
    for (int i = 0; i < 1000; i++)
        lat[i] = i < 980 ? 500 : 5000;
    ib_lg_perf_params p = server_params();
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 1000, .queries_issued = 1000};
    d.final_query_scheduled_s = 1.5;
    d.final_query_all_samples_done_s = 1.5;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_INT_EQ(s.overlatency_query_count, 20);
    ASSERT_FALSE(s.perf_constraints_met);
    ASSERT_FALSE(s.early_stopping_met);
    ASSERT_FALSE(s.valid);
    ASSERT_TRUE(s.failed_rules & IB_LG_RULE_PERF_CONSTRAINTS);
    ASSERT_TRUE(s.failed_rules & IB_LG_RULE_EARLY_STOPPING);
    ASSERT_STR_CONTAINS(s.early_stopping_rec, " * Run unsuccessful.\n * Processed 1000 queries.");
    ASSERT_STR_CONTAINS(s.early_stopping_rec, "more queries,\n with the run being successful");
    char reason[512];
    ib_lg_perf_invalid_reason(&s, reason, sizeof reason);
    ASSERT_STR_EQ(reason, "Reduce target QPS to improve latency. ");
    char r[2048], g[1024];
    ib_lg_perf_explain(&p, &d, &s, r, sizeof r, g, sizeof g);
    ASSERT_STR_CONTAINS(r, "99.0th percentile is 5000 ns, above the bound 1000 ns");
    ASSERT_STR_CONTAINS(r, " * Reduce target QPS to improve latency.");
    /* completed 999/1.5 = 666 samples/s of 1000 scheduled: saturated */
    ASSERT_STR_CONTAINS(g, "completed only 666.0 samples/s");
    ASSERT_STR_CONTAINS(g, "target_qps <= 632.6");
    ASSERT_STR_CONTAINS(g, "more queries");
}

/* Every sample over the bound, the fastest too: no target_qps or query count can help, and
 * the advice says so instead of proposing either (a 40 ms model against a 15 ms bound). */
TEST(loadgen_results_server_bound_unreachable)
{
    int64_t lat[1000];
    for (int i = 0; i < 1000; i++)
        lat[i] = 40000000 + i * 1000; /* 40 ms and up */
    ib_lg_perf_params p = server_params();
    p.target_latency_ns = 15000000;
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 1000, .queries_issued = 1000};
    d.final_query_scheduled_s = 1.0;
    d.final_query_all_samples_done_s = 1.05;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_FALSE(s.perf_constraints_met);
    char r[2048], g[1024];
    ib_lg_perf_explain(&p, &d, &s, r, sizeof r, g, sizeof g);
    ASSERT_STR_CONTAINS(g, "the latency bound (15 ms) cannot be met with this model, batch and "
                           "machine: even the fastest sample took 40 ms");
    ASSERT_NULL(strstr(g, "try target_qps"));
    ASSERT_NULL(strstr(g, "more queries (if all under latency)"));
}

TEST(loadgen_results_offline_min_duration)
{
    int64_t lat[2200];
    for (int i = 0; i < 2200; i++)
        lat[i] = 100000 + i;
    ib_lg_perf_params p = {0};
    p.scenario = IB_LG_SCENARIO_OFFLINE;
    p.target_latency_percentile = 0.99;
    p.min_duration_ms = 2000;
    p.min_query_count = 1;
    p.min_sample_count = 2200;
    p.samples_per_query = 2200;
    p.target_qps = 1000;
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 2200, .queries_issued = 1};
    d.max_latency_s = 102199e-9;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_FALSE(s.min_duration_met);
    ASSERT_TRUE(s.min_queries_met);
    ASSERT_TRUE(s.early_stopping_met); /* Offline has none */
    ASSERT_STR_EQ(s.early_stopping_rec, "");
    ASSERT_NEAR(s.samples_per_second, 2200 / 102199e-9, 1e-3);
    char reason[256];
    ib_lg_perf_invalid_reason(&s, reason, sizeof reason);
    /* golden 01's result_invalid_reason, trailing space included */
    ASSERT_STR_EQ(reason,
                  "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query. ");
    char r[2048], g[1024];
    ib_lg_perf_explain(&p, &d, &s, r, sizeof r, g, sizeof g);
    ASSERT_STR_CONTAINS(g, "target_qps (expected QPS) to at least 21526630");
}

TEST(loadgen_results_single_stream_es_text)
{
    /* 2500 queries at p90: discard 214, estimate = sorted[2500 - 215] */
    static int64_t lat[2500];
    for (int i = 0; i < 2500; i++)
        lat[i] = 100 + (int64_t)((i * 7919) % 2500);
    ib_lg_perf_params p = {0};
    p.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    p.target_latency_percentile = 0.90;
    p.min_query_count = 2500;
    p.min_sample_count = 2500;
    p.samples_per_query = 1;
    p.target_qps = 500;
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 2500, .queries_issued = 2500};
    d.final_query_issued_s = 0.5;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_TRUE(s.valid);
    ASSERT_INT_EQ(s.early_stopping_latency_ss, 100 + 2285);
    /* p99 estimate: 2500 queries at p99 discard 12 (t = 13): sorted[2487] */
    ASSERT_INT_EQ(s.early_stopping_latency_ms, 100 + 2487);
    ASSERT_STR_EQ(s.early_stopping_rec,
                  " * Processed at least 64 queries (2500).\n * Would discard 214 highest latency "
                  "queries.\n * Early stopping 90.0th percentile estimate: 2385\n * Early "
                  "stopping 99.0th percentile estimate: 2587");
    ASSERT_DBL_EQ(s.qps_with_loadgen_overhead, 2499 / 0.5);
    /* mean = 100 + 1249 (integer division) */
    ASSERT_INT_EQ(s.mean_latency, 1349);
}

TEST(loadgen_results_single_stream_not_enough)
{
    int64_t lat[50];
    for (int i = 0; i < 50; i++)
        lat[i] = 10;
    ib_lg_perf_params p = {0};
    p.scenario = IB_LG_SCENARIO_SINGLE_STREAM;
    p.target_latency_percentile = 0.90;
    p.min_query_count = 10;
    p.min_sample_count = 10;
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 50, .queries_issued = 50};
    d.final_query_issued_s = 1;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_FALSE(s.early_stopping_met);
    ASSERT_STR_EQ(s.early_stopping_rec, " * Only processed 50 queries.\n * Need to process at "
                                        "least 64 queries for early stopping.");
    char r[2048], g[1024];
    ib_lg_perf_explain(&p, &d, &s, r, sizeof r, g, sizeof g);
    ASSERT_STR_CONTAINS(g, "min_query_count >= 64");
}

TEST(loadgen_results_multi_stream_query_stats)
{
    int64_t lat[800], qlat[100];
    for (int i = 0; i < 800; i++)
        lat[i] = 50 + i % 8;
    for (int i = 0; i < 100; i++)
        qlat[i] = 1000 + 10 * (99 - i);
    ib_lg_perf_params p = {0};
    p.scenario = IB_LG_SCENARIO_MULTI_STREAM;
    p.target_latency_percentile = 0.99;
    p.min_query_count = 100;
    p.min_sample_count = 800;
    p.samples_per_query = 8;
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 800, .query_latencies = qlat,
                         .queries_issued = 100};
    d.final_query_issued_s = 1;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_INT_EQ(s.q_min, 1000);
    ASSERT_INT_EQ(s.q_max, 1990);
    ASSERT_INT_EQ(s.q_target, 1990); /* [99] */
    ASSERT_INT_EQ(s.q_percentile[0], 1500);
    ASSERT_INT_EQ(s.q_mean, 1495);
    ASSERT_FALSE(s.early_stopping_met); /* needs 662 queries */
    ASSERT_FALSE(s.valid);
}

TEST(loadgen_results_v11_multistream_intervals)
{
    int64_t lat[600], qlat[100];
    uint64_t qi[100];
    for (int i = 0; i < 600; i++)
        lat[i] = 100;
    for (int i = 0; i < 100; i++) {
        qlat[i] = 100;
        qi[i] = i < 98 ? 1 : 3; /* element [99] = 3 >= 2: fails */
    }
    ib_lg_perf_params p = {0};
    p.scenario = IB_LG_SCENARIO_MULTI_STREAM;
    p.v11 = true;
    p.target_latency_percentile = 0.99;
    p.min_query_count = 100;
    p.min_sample_count = 600;
    p.samples_per_query = 6;
    p.target_qps = 1000;
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 600, .query_latencies = qlat,
                         .query_intervals = qi, .queries_issued = 100};
    d.final_query_issued_s = 1;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_TRUE(s.has_perf_constraints);
    ASSERT_INT_EQ(s.qi_target, 3);
    ASSERT_INT_EQ(s.qi_percentile[0], 1);
    ASSERT_FALSE(s.perf_constraints_met);
    ASSERT_TRUE(s.early_stopping_met); /* v1.1: no early stopping */
    ASSERT_TRUE(s.failed_rules & IB_LG_RULE_INTERVALS);
    ASSERT_STR_EQ(s.perf_constraints_rec, "Reduce samples per query to improve latency.");
    qi[99] = 1;
    qi[98] = 1;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_TRUE(s.valid);
}

TEST(loadgen_results_sut_errors_invalidate)
{
    int64_t lat[1000];
    for (int i = 0; i < 1000; i++)
        lat[i] = 10;
    ib_lg_perf_params p = server_params();
    ib_lg_perf_data d = {.sample_latencies = lat, .sample_count = 1000, .queries_issued = 1000};
    d.final_query_scheduled_s = 1.0;
    d.final_query_all_samples_done_s = 1.0;
    d.sut_errors = 2;
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_FALSE(s.valid);
    ASSERT_TRUE(s.min_duration_met && s.min_queries_met && s.perf_constraints_met);
    ASSERT_INT_EQ(s.failed_rules, IB_LG_RULE_SUT_ERRORS);
    char reason[256];
    ib_lg_perf_invalid_reason(&s, reason, sizeof reason);
    ASSERT_STR_CONTAINS(reason, "The SUT lost, duplicated");
}

TEST(loadgen_results_empty_is_safe)
{
    ib_lg_perf_params p = server_params();
    ib_lg_perf_data d = {0};
    ib_lg_perf_summary s;
    ib_lg_perf_summarize(&p, &d, &s);
    ASSERT_FALSE(s.valid);
    ASSERT_INT_EQ(s.sample_count, 0);
    ASSERT_INT_EQ(s.max_latency, 0);
}
