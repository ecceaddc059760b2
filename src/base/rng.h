/*
 * rng.h - splitmix64 (Steele, Lea, Flood 2014): the seeded generator of the synthetic data
 * generators and the weight fills. Deterministic per seed on every platform; not for
 * anything that needs unpredictability. State is the caller's (no global state).
 */
#ifndef IB_BASE_RNG_H
#define IB_BASE_RNG_H

#include <stdint.h>

/* Advance *state and return the next 64 random bits. */
static inline uint64_t ib_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
