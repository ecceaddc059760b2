/*
 * rng.h - the random numbers of the official LoadGen, bit for bit
 * (loadgen.md §4): std::mt19937 seeded with the seed modulo 2^32, and the
 * libstdc++ algorithms for uniform_int_distribution (GCC >= 11: Lemire's
 * multiply-and-reject; GCC <= 10: division-based rejection, issue 12),
 * std::shuffle (two swaps per draw for n <= 65,535, one otherwise),
 * generate_canonical<double, 53> and exponential_distribution<double>.
 *
 * The engine lives in caller storage (2.5 KB); no allocation, no globals.
 * Thread-safety: one engine per thread; the functions are reentrant.
 *
 * Header history (for users of this internal header):
 *  - v1: initial API.
 */
#ifndef IB_LOADGEN_RNG_H
#define IB_LOADGEN_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/loadgen.h"

#define IB_LG_MT_N 624

/* std::mt19937 state. */
typedef struct ib_lg_rng {
    uint32_t mt[IB_LG_MT_N];
    uint32_t idx; /* next word to temper; IB_LG_MT_N = twist first */
} ib_lg_rng;

/* Seed like std::mt19937(seed): only the low 32 bits count (§4.1). */
void ib_lg_rng_seed(ib_lg_rng *r, uint64_t seed);
/* A default-constructed std::mt19937 (seed 5489). */
void ib_lg_rng_seed_default(ib_lg_rng *r);
/* Next 32-bit output. */
uint32_t ib_lg_rng_next(ib_lg_rng *r);
/* Skip n outputs (same state as n calls of ib_lg_rng_next). */
void ib_lg_rng_discard(ib_lg_rng *r, uint64_t n);

/*
 * Uniform integer in [0, n-1] as uniform_int_distribution<int or size_t>(0,
 * n-1)(engine) in libstdc++; 1 <= n <= 2^32 - 1 (IB_ASSERT otherwise). Even n = 1
 * consumes one engine output, as libstdc++ does.
 */
uint32_t ib_lg_rng_uniform(ib_lg_rng *r, uint32_t n, enum ib_lg_rng_compat compat);

/* std::shuffle(a, a + n, engine) with libstdc++'s algorithm (n < 2^32). */
void ib_lg_rng_shuffle(ib_lg_rng *r, size_t *a, size_t n, enum ib_lg_rng_compat compat);

/* generate_canonical<double, 53>: two outputs, (g1 + g2 * 2^32) / 2^64 in
 * double, clamped below 1. Also uniform_real_distribution<double>(0, 1). */
double ib_lg_rng_canonical(ib_lg_rng *r);

/* One exponential_distribution<double>(lambda) draw in seconds, converted to
 * integer ns by truncation toward zero (duration_cast), as the Server
 * schedule does (§4.2). */
int64_t ib_lg_rng_exponential_ns(ib_lg_rng *r, double lambda);

#endif
