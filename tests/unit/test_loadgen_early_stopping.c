/*
 * test_loadgen_early_stopping.c - h(t) and the early-stopping estimates
 * against the official test vectors (loadgen.md §2.8), against a literal
 * re-statement of the official cached-bracket search, and against the
 * official O(N) SingleStream loop.
 */
#include <math.h>

#include "loadgen/early_stopping.h"
#include "test.h"

static const double C = 0.99;

TEST(loadgen_es_h_table)
{
    static const double ps[4] = {0.90, 0.97, 0.99, 0.999};
    static const int64_t ts[7] = {0, 1, 2, 5, 10, 100, 1000};
    static const int64_t want[4][7] = {
        {44, 63, 79, 122, 187, 1146, 9722},
        {152, 218, 275, 428, 657, 4082, 34831},
        {459, 661, 836, 1302, 2000, 12471, 106569},
        {4603, 6635, 8401, 13100, 20130, 125726, 1075032},
    };
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 7; j++)
            ASSERT_INT_EQ(ib_lg_es_min_passing(ts[j], ps[i], 0.0, C), want[i][j]);
}

/* The official MinPassingQueriesFinder restated: a binary search on a
 * bracket extrapolated from the two previous cached (t, h) pairs. Called
 * with increasing t, as the SingleStream loop does. */
typedef struct off_cache {
    int64_t t[4096], h[4096];
    int n;
} off_cache;

static int64_t off_bsearch(int64_t min_h, int64_t max_h, int64_t t, double p)
{
    int64_t count = max_h - min_h;
    while (count > 0) {
        int64_t step = count / 2, h = min_h + step;
        if (ib_lg_es_odds(h, t, p, 0.0) < 1 - C) {
            count = step;
        } else {
            min_h = h + 1;
            count -= step + 1;
        }
    }
    return min_h;
}

static int64_t off_find(off_cache *ca, int64_t t, double p)
{
    int64_t x0 = -1, y0 = 0, x1 = 0, y1 = (int64_t)ceil(log(1 - C) / log(p));
    if (ca->n > 0) {
        x1 = ca->t[ca->n - 1];
        y1 = ca->h[ca->n - 1];
    }
    if (ca->n > 1) {
        x0 = ca->t[ca->n - 2];
        y0 = ca->h[ca->n - 2];
    }
    double min_slope = p / (1 - p);
    double max_slope = (double)((y1 - y0) * (x1 - x0));
    int64_t min_h = (int64_t)((double)(t - x1) * min_slope + (double)y1);
    int64_t max_h = (int64_t)((double)(t - x1) * max_slope + (double)y1 + 1);
    int64_t h = off_bsearch(min_h, max_h, t, p);
    ca->t[ca->n] = t;
    ca->h[ca->n] = h;
    ca->n++;
    return h;
}

TEST(loadgen_es_matches_official_search)
{
    static off_cache ca;
    static const double ps[3] = {0.90, 0.97, 0.99};
    for (int i = 0; i < 3; i++) {
        ca.n = 0;
        for (int64_t t = 1; t <= 2000; t++)
            ASSERT_INT_EQ(ib_lg_es_min_passing(t, ps[i], 0.0, C), off_find(&ca, t, ps[i]));
    }
    /* t = 0 first (a fresh finder, as the Server case calls it) */
    ca.n = 0;
    ASSERT_INT_EQ(ib_lg_es_min_passing(0, 0.99, 0.0, C), off_find(&ca, 0, 0.99));
}

/* The official SingleStream loop over i = 2, 3, ... */
static int64_t linear_t(int64_t n, double p)
{
    int64_t t = 1;
    for (int64_t i = 2; i < n + 1; ++i) {
        int64_t h = ib_lg_es_min_passing(i, p, 0.0, C);
        if (n < h + i) {
            t = i - 1;
            break;
        }
    }
    return t;
}

TEST(loadgen_es_estimate_matches_official_loop)
{
    for (int64_t n = 60; n <= 6000; n += 37) {
        ib_lg_es_estimate e = ib_lg_es_estimate_t(n, 0.90);
        ASSERT_INT_EQ(e.need, 64);
        ASSERT_INT_EQ(e.enough, n >= 64);
        if (e.enough)
            ASSERT_INT_EQ(e.t, linear_t(n, 0.90));
    }
    for (int64_t n = 650; n <= 9000; n += 211) {
        ib_lg_es_estimate e = ib_lg_es_estimate_t(n, 0.99);
        ASSERT_INT_EQ(e.need, 662);
        if (e.enough)
            ASSERT_INT_EQ(e.t, linear_t(n, 0.99));
    }
}

TEST(loadgen_es_estimate_golden_cases)
{
    /* golden 05: 2500 queries at p90 discard 214; golden 09: 600 discard 42;
     * golden 06 (MultiStream p99): 700 queries discard 0, need 662 */
    ib_lg_es_estimate e = ib_lg_es_estimate_t(2500, 0.90);
    ASSERT_TRUE(e.enough);
    ASSERT_INT_EQ(e.t - 1, 214);
    ASSERT_INT_EQ(ib_lg_es_estimate_t(600, 0.90).t - 1, 42);
    e = ib_lg_es_estimate_t(700, 0.99);
    ASSERT_INT_EQ(e.need, 662);
    ASSERT_INT_EQ(e.t - 1, 0);
    e = ib_lg_es_estimate_t(600, 0.99);
    ASSERT_FALSE(e.enough);
    ASSERT_INT_EQ(e.need, 662);
}

TEST(loadgen_es_server_rule)
{
    int64_t more = -1;
    /* h(0) = 459 at p99: 459 queries with none over latency pass */
    ASSERT_TRUE(ib_lg_es_server_ok(459, 0, 0.99, &more));
    ASSERT_INT_EQ(more, 0);
    ASSERT_FALSE(ib_lg_es_server_ok(458, 0, 0.99, &more));
    ASSERT_INT_EQ(more, 1);
    /* 10 over latency need h(10) + 10 = 2010 */
    ASSERT_FALSE(ib_lg_es_server_ok(2000, 10, 0.99, &more));
    ASSERT_INT_EQ(more, 10);
    ASSERT_TRUE(ib_lg_es_server_ok(2010, 10, 0.99, NULL));
}

TEST(loadgen_es_large_counts)
{
    /* 3.2M SingleStream queries (the official needs ~2 s here): the
     * estimate must satisfy the defining inequalities exactly. */
    int64_t n = 3200000;
    ib_lg_es_estimate e = ib_lg_es_estimate_t(n, 0.90);
    ASSERT_TRUE(e.enough);
    ASSERT_TRUE(n >= ib_lg_es_min_passing(e.t, 0.90, 0.0, C) + e.t);
    ASSERT_TRUE(n < ib_lg_es_min_passing(e.t + 1, 0.90, 0.0, C) + e.t + 1);
    /* the odds are monotone around h(t) */
    int64_t h = ib_lg_es_min_passing(e.t, 0.90, 0.0, C);
    ASSERT_TRUE(ib_lg_es_odds(h, e.t, 0.90, 0.0) < 1 - C);
    ASSERT_TRUE(ib_lg_es_odds(h - 1, e.t, 0.90, 0.0) >= 1 - C);
}
