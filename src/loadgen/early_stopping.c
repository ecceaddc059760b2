/*
 * early_stopping.c - h(t) and the early-stopping estimates (loadgen.md §2.8).
 *
 * The odds are computed exactly like the official early_stopping.cc (same
 * lgamma-based beta function, same 2F1 series truncated at 2^-33, same
 * operation order), so every h(t) is bit-for-bit the same decision. What
 * differs is how h is searched: the official binary-searches a bracket
 * extrapolated from its cache of previous t, and the SingleStream loop calls
 * it for every t = 2, 3, ... (about 2 s for 3M queries). Here h(t) is found
 * by an exponential bracket from the analytic lower bound t*p/(1-p) plus a
 * bisection, and the SingleStream/MultiStream t is found by bisecting over t
 * (h(t) + t is strictly increasing), so the cost is O(log N) h evaluations,
 * each O(log h) series of O(sqrt(t)) terms.
 */
/* lgamma_r (lgamma writes the global signgam: a data race when two tests
 * post-process at once); same values as lgamma. */
#define _DEFAULT_SOURCE
#include <math.h>

#include "loadgen/early_stopping.h"

/* lbeta(x, y) = lgamma(x) + lgamma(y) - lgamma(x + y), integer arguments. */
static double lbeta(int64_t x, int64_t y)
{
    int sx, sy, sxy;
    return lgamma_r((double)x, &sx) + lgamma_r((double)y, &sy) - lgamma_r((double)(x + y), &sxy);
}

/* 2F1(1, b; c; x) by the series of DLMF 15.2.E1, stopped when a term falls
 * below 2^-33 (the series terminates at i = -b for b <= 0). */
static double hypergeometric_2f1_a1(int64_t b, int64_t c, double x)
{
    const double tol = 1.0 / (double)(1LL << 33);
    double term = 1.0;
    double result = 1.0;
    for (int64_t i = 0; fabs(term) > tol; ++i) {
        term *= (double)(b + i) * x / (double)(c + i);
        result += term;
    }
    return result;
}

/* BetaRegularized[x, a, b] through DLMF 15.8.E1, as the official. */
static double beta_regularized(double x, int64_t a, int64_t b)
{
    return exp((double)a * log(x) + (double)(b - 1) * log(1 - x) - lbeta(a, b)) / (double)a *
           hypergeometric_2f1_a1(1 - b, 1 + a, x / (x - 1));
}

double ib_lg_es_odds(int64_t h, int64_t t, double p, double d)
{
    return beta_regularized(p - d, h, 1 + t);
}

static bool passes(int64_t h, int64_t t, double p, double d, double c)
{
    return ib_lg_es_odds(h, t, p, d) < 1 - c;
}

int64_t ib_lg_es_min_passing(int64_t t, double p, double d, double c)
{
    if (t < 0)
        t = 0;
    /* At least t*q/(1-q) under-latency queries are needed before t failures
     * become unlikely (the expected failure count must exceed t); the odds
     * there are about one half, far above 1 - c. */
    double q = p - d;
    int64_t lo = (int64_t)((double)t * q / (1 - q));
    if (lo < 1)
        lo = 1;
    while (lo > 1 && passes(lo, t, p, d, c))
        lo /= 2;
    if (passes(lo, t, p, d, c))
        return lo;
    /* Invariant: lo fails. Grow an upper bound that passes. */
    int64_t step = 16;
    int64_t hi = lo + step;
    while (!passes(hi, t, p, d, c)) {
        lo = hi;
        step *= 2;
        hi = lo + step;
    }
    /* lo fails, hi passes: bisect to the first passing h. */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (passes(mid, t, p, d, c))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

ib_lg_es_estimate ib_lg_es_estimate_t(int64_t n, double p)
{
    const double c = IB_LG_ES_CONFIDENCE, d = IB_LG_ES_TOLERANCE;
    ib_lg_es_estimate e = {false, 0, 1};
    int64_t h_min = ib_lg_es_min_passing(1, p, d, c);
    e.need = h_min + 1;
    if (n < h_min + 1)
        return e;
    e.enough = true;
    /* The official loop stops at the first i >= 2 with n < h(i) + i and
     * takes t = i - 1. h(i) + i is strictly increasing in i and exceeds n at
     * i = n, so bisect for that first i in [2, n]. */
    int64_t lo = 1, hi = n; /* predicate false at lo (n >= h(1) + 1), true at hi */
    if (hi < 2) {
        e.t = 1;
        return e;
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (n < ib_lg_es_min_passing(mid, p, d, c) + mid)
            hi = mid;
        else
            lo = mid;
    }
    e.t = hi - 1;
    return e;
}

bool ib_lg_es_server_ok(int64_t n, int64_t t, double p, int64_t *need_more)
{
    int64_t h = ib_lg_es_min_passing(t, p, IB_LG_ES_TOLERANCE, IB_LG_ES_CONFIDENCE);
    bool ok = n >= h + t;
    if (need_more)
        *need_more = ok ? 0 : h + t - n;
    return ok;
}
