/*
 * rng.c - std::mt19937 and the libstdc++ distribution algorithms the official
 * LoadGen's sample order depends on (loadgen.md §4.1-4.2, issue 12).
 *
 * Written from the algorithm descriptions (MT19937 reference definition;
 * libstdc++ uniform_int_distribution, shuffle, generate_canonical and
 * exponential_distribution semantics), checked against the libstdc++ test
 * vectors of loadgen.md §4.4 in tests/unit/test_loadgen_rng.c.
 * Does not: provide other engines or distributions, or jump ahead faster
 * than one output per step.
 */
#include "loadgen/rng.h"

#include <math.h>

#include "base/common.h"

#define MT_M      397
#define MT_UPPER  0x80000000u
#define MT_LOWER  0x7fffffffu
#define MT_MATRIX 0x9908b0dfu

void ib_lg_rng_seed(ib_lg_rng *r, uint64_t seed)
{
    /* std::mt19937::seed(value): x0 = value mod 2^32 (§4.1). */
    r->mt[0] = (uint32_t)(seed & 0xffffffffu);
    for (uint32_t i = 1; i < IB_LG_MT_N; i++) {
        uint32_t prev = r->mt[i - 1];
        r->mt[i] = 1812433253u * (prev ^ (prev >> 30)) + i;
    }
    r->idx = IB_LG_MT_N;
}

void ib_lg_rng_seed_default(ib_lg_rng *r)
{
    ib_lg_rng_seed(r, 5489u); /* std::mersenne_twister_engine::default_seed */
}

/* Regenerate all 624 words (the standard "twist"). */
static void mt_twist(ib_lg_rng *r)
{
    /* Three ranges instead of a modulo per word (replaying a 456M-query
     * Server run draws ~10^9 outputs): k + M wraps from k = N - M on, k + 1
     * only at k = N - 1. Same words in the same order. */
    uint32_t *mt = r->mt;
    uint32_t k = 0;
    for (; k < IB_LG_MT_N - MT_M; k++) {
        uint32_t y = (mt[k] & MT_UPPER) | (mt[k + 1] & MT_LOWER);
        mt[k] = mt[k + MT_M] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX : 0u);
    }
    for (; k < IB_LG_MT_N - 1; k++) {
        uint32_t y = (mt[k] & MT_UPPER) | (mt[k + 1] & MT_LOWER);
        mt[k] = mt[k + MT_M - IB_LG_MT_N] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX : 0u);
    }
    uint32_t y = (mt[IB_LG_MT_N - 1] & MT_UPPER) | (mt[0] & MT_LOWER);
    mt[IB_LG_MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX : 0u);
    r->idx = 0;
}

uint32_t ib_lg_rng_next(ib_lg_rng *r)
{
    if (IB_UNLIKELY(r->idx >= IB_LG_MT_N)) mt_twist(r);
    uint32_t y = r->mt[r->idx++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

void ib_lg_rng_discard(ib_lg_rng *r, uint64_t n)
{
    /* Whole blocks only need the twist, not the tempering. */
    while (n > 0) {
        if (r->idx >= IB_LG_MT_N) mt_twist(r);
        uint64_t left = IB_LG_MT_N - r->idx;
        uint64_t take = n < left ? n : left;
        r->idx += (uint32_t)take;
        n -= take;
    }
}

uint32_t ib_lg_rng_uniform(ib_lg_rng *r, uint32_t n, enum ib_lg_rng_compat compat)
{
    IB_ASSERT(n >= 1 && n <= 0xffffffffu);
    if (compat == IB_LG_RNG_LIBSTDCXX10) {
        /* GCC <= 10: scaling = (2^32-1)/n, past = n*scaling; draw until below
         * past, return draw/scaling (issue 12). */
        uint32_t scaling = 0xffffffffu / n;
        uint64_t past = (uint64_t)n * scaling;
        uint32_t v;
        do
            v = ib_lg_rng_next(r);
        while (v >= past);
        return v / scaling;
    }
    /* GCC >= 11: Lemire's nearly-divisionless method (§4.2). */
    uint64_t product = (uint64_t)ib_lg_rng_next(r) * n;
    uint32_t low = (uint32_t)product;
    if (low < n) {
        uint32_t threshold = (uint32_t)(0u - n) % n; /* (2^32 - n) mod n */
        while (low < threshold) {
            product = (uint64_t)ib_lg_rng_next(r) * n;
            low = (uint32_t)product;
        }
    }
    return (uint32_t)(product >> 32);
}

static void swap_idx(size_t *a, size_t i, size_t j)
{
    size_t t = a[i];
    a[i] = a[j];
    a[j] = t;
}

void ib_lg_rng_shuffle(ib_lg_rng *r, size_t *a, size_t n, enum ib_lg_rng_compat compat)
{
    if (n <= 1) return; /* libstdc++ draws nothing for 0 or 1 element */
    IB_ASSERT(n < 0xffffffffu);
    if (0xffffffffu / n >= n) {
        /* "Two swaps per draw" (n <= 65,535): an even n first swaps position
         * 1 with a pick in [0, 1]; then each draw x in [0, r(r+1)-1], r = i+1,
         * places a[i] at x / (r+1) and a[i+1] at x mod (r+1). */
        size_t i = 1;
        if (n % 2 == 0) {
            swap_idx(a, 1, ib_lg_rng_uniform(r, 2, compat));
            i = 2;
        }
        while (i != n) {
            uint64_t b0 = (uint64_t)i + 1, b1 = b0 + 1;
            uint32_t x = ib_lg_rng_uniform(r, (uint32_t)(b0 * b1), compat);
            swap_idx(a, i, (size_t)(x / b1));
            swap_idx(a, i + 1, (size_t)(x % b1));
            i += 2;
        }
        return;
    }
    /* Forward Fisher-Yates, one draw in [0, i] per position. */
    for (size_t i = 1; i < n; i++)
        swap_idx(a, i, ib_lg_rng_uniform(r, (uint32_t)(i + 1), compat));
}

double ib_lg_rng_canonical(ib_lg_rng *r)
{
    /* generate_canonical<double, 53> over a 32-bit engine: k = 2 draws,
     * sum = g1 + g2 * 2^32 accumulated in double, divided by 2^64. */
    double sum = (double)ib_lg_rng_next(r);
    sum += (double)ib_lg_rng_next(r) * 0x1p32;
    double ret = sum / 0x1p64;
    if (IB_UNLIKELY(ret >= 1.0)) ret = nextafter(1.0, 0.0);
    return ret;
}

int64_t ib_lg_rng_exponential_ns(ib_lg_rng *r, double lambda)
{
    /* -log(1 - u) / lambda seconds, duration_cast to ns truncates x * 1e9. */
    double x = -log(1.0 - ib_lg_rng_canonical(r)) / lambda;
    return (int64_t)(x * 1e9);
}
