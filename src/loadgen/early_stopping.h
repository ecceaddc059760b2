/*
 * early_stopping.h - the early-stopping statistics of the official LoadGen
 * (early_stopping.cc, results.cc EarlyStopping; loadgen.md §2.8).
 *
 * h(t) is the smallest number of under-latency queries h such that observing
 * at most t over-latency queries among h + t is unlikely (< 1 - c) when each
 * query is over latency with probability 1 - p. The odds are evaluated with
 * the same formula and operation order as the official code (a regularised
 * incomplete beta through a terminating 2F1 series), so h(t) matches it for
 * every t; only the search is different (bracketed bisection per t, and a
 * bisection over t for the SingleStream/MultiStream estimate), which makes
 * post-processing O(log N) evaluations instead of O(N).
 */
#ifndef IB_LOADGEN_EARLY_STOPPING_H
#define IB_LOADGEN_EARLY_STOPPING_H

#include <stdbool.h>
#include <stdint.h>

/* The official constants: confidence 0.99, tolerance 0. */
#define IB_LG_ES_CONFIDENCE 0.99
#define IB_LG_ES_TOLERANCE 0.0

/* The odds of t or fewer over-latency queries in h + t queries
 * (BetaRegularized[p - d, h, 1 + t]), exactly as the official odds(). h >= 1. */
double ib_lg_es_odds(int64_t h, int64_t t, double p, double d);

/* h(t): the minimum h >= 1 with odds(h, t, p, d) < 1 - c. t >= 0, p in (0, 1). */
int64_t ib_lg_es_min_passing(int64_t t, double p, double d, double c);

/* Result of the SingleStream/MultiStream percentile estimate. */
typedef struct ib_lg_es_estimate {
    bool enough;       /* N >= h(1) + 1 */
    int64_t need;      /* h(1) + 1: the minimum query count */
    int64_t t;         /* the estimate is the t-th largest latency (t >= 1) */
} ib_lg_es_estimate;

/* The official SingleStream/MultiStream search for n queries at percentile p:
 * the largest t such that n >= h(t') + t' for every t' <= t (t starts at 1).
 * Pure function of (n, p). */
ib_lg_es_estimate ib_lg_es_estimate_t(int64_t n, double p);

/* Server: VALID iff n >= h(t) + t for t over-latency queries. *need_more
 * (optional) receives h(t) + t - n when it fails, else 0. */
bool ib_lg_es_server_ok(int64_t n, int64_t t, double p, int64_t *need_more);

#endif
