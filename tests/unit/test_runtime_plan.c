/*
 * test_runtime_plan.c - the activation memory planner: reuse of disjoint
 * intervals, in-place chains, the no-overlap invariant on random inputs
 * (checked by the verifier and by an independent byte-level check), and bad
 * input (reversed intervals, bad share index, size overflow).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"
#include "test.h"

static ib_plan_value pv(size_t size, int32_t s, int32_t e, int32_t share)
{
    ib_plan_value v;
    memset(&v, 0, sizeof v);
    v.size = size;
    v.start = s;
    v.end = e;
    v.share_with = share;
    return v;
}

TEST(runtime_plan_reuses_disjoint_intervals)
{
    ib_plan_value v[3] = {pv(1000, 0, 1, -1), pv(1000, 2, 3, -1), pv(1000, 4, 5, -1)};
    ib_plan_result r;
    ib_err err;
    ASSERT_OK_ERR(ib_plan_compute(v, 3, 64, false, &r, &err), &err);
    ASSERT_UINT_EQ(r.total_bytes, 1024);
    ASSERT_UINT_EQ(r.sum_bytes, 3 * 1024);
    ASSERT_UINT_EQ(r.live_peak, 1024);
    ASSERT_OK_ERR(ib_plan_verify(v, 3, 64, r.total_bytes, &err), &err);
    /* touching intervals (end == start) conflict: a node reads its input while writing */
    v[1].start = 1;
    ASSERT_OK_ERR(ib_plan_compute(v, 3, 64, false, &r, &err), &err);
    ASSERT_UINT_EQ(r.total_bytes, 2048);
    ASSERT_OK_ERR(ib_plan_verify(v, 3, 64, r.total_bytes, &err), &err);
    /* no_reuse: every value has its own slot */
    ASSERT_OK_ERR(ib_plan_compute(v, 3, 64, true, &r, &err), &err);
    ASSERT_UINT_EQ(r.total_bytes, 3 * 1024);
    ASSERT_TRUE(v[0].offset != v[2].offset);
}

TEST(runtime_plan_inplace_chain_and_refusals)
{
    /* a -> b -> c in place (elementwise chain), d lives across: needs its own slot */
    ib_plan_value v[5] = {pv(4096, 0, 1, -1), pv(4096, 1, 2, 0), pv(4096, 2, 5, 1),
                          pv(128, 0, 5, -1), pv(8192, 5, 6, 2)};
    ib_plan_result r;
    ib_err err;
    ASSERT_OK_ERR(ib_plan_compute(v, 5, 64, false, &r, &err), &err);
    ASSERT_TRUE(v[1].shared);
    ASSERT_TRUE(v[2].shared);
    ASSERT_FALSE(v[4].shared); /* larger than its donor: refused */
    ASSERT_UINT_EQ(v[0].offset, v[1].offset);
    ASSERT_UINT_EQ(v[1].offset, v[2].offset);
    ASSERT_UINT_EQ(r.n_inplace, 2);
    ASSERT_OK_ERR(ib_plan_verify(v, 5, 64, r.total_bytes, &err), &err);

    /* a request whose donor is still read later is refused */
    ib_plan_value w[2] = {pv(256, 0, 3, -1), pv(256, 2, 4, 0)};
    ASSERT_OK_ERR(ib_plan_compute(w, 2, 64, false, &r, &err), &err);
    ASSERT_FALSE(w[1].shared);
    ASSERT_UINT_EQ(r.total_bytes, 512);
    /* one donor, two takers: only the first gets it */
    ib_plan_value x[3] = {pv(256, 0, 2, -1), pv(256, 2, 3, 0), pv(256, 2, 3, 0)};
    ASSERT_OK_ERR(ib_plan_compute(x, 3, 64, false, &r, &err), &err);
    ASSERT_TRUE(x[1].shared);
    ASSERT_FALSE(x[2].shared);
    ASSERT_OK_ERR(ib_plan_verify(x, 3, 64, r.total_bytes, &err), &err);
}

TEST(runtime_plan_verify_catches_overlap)
{
    ib_plan_value v[2] = {pv(100, 0, 4, -1), pv(100, 3, 6, -1)};
    ib_plan_result r;
    ib_err err;
    ASSERT_OK(ib_plan_compute(v, 2, 64, false, &r, &err));
    ASSERT_OK(ib_plan_verify(v, 2, 64, r.total_bytes, &err));
    v[1].offset = v[0].offset; /* corrupt it */
    ASSERT_STATUS(ib_plan_verify(v, 2, 64, 256, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "overlap");
    v[1].offset = 64; /* partial overlap */
    ASSERT_STATUS(ib_plan_verify(v, 2, 64, 256, &err), IB_EINVAL);
    v[1].offset = 200; /* exceeds the arena */
    ASSERT_STATUS(ib_plan_verify(v, 2, 8, 256, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "exceeds");
}

TEST(runtime_plan_rejects_bad_input)
{
    ib_plan_result r;
    ib_err err;
    ib_plan_value a[1] = {pv(10, 5, 4, -1)};
    ASSERT_STATUS(ib_plan_compute(a, 1, 64, false, &r, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "before start");
    ib_plan_value b[1] = {pv(10, 0, 1, 7)};
    ASSERT_STATUS(ib_plan_compute(b, 1, 64, false, &r, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "unknown value");
    ib_plan_value c[1] = {pv(SIZE_MAX - 3, 0, 1, -1)};
    ASSERT_STATUS(ib_plan_compute(c, 1, 64, false, &r, &err), IB_EINVAL);
    ib_plan_value d[2] = {pv(SIZE_MAX / 2, 0, 1, -1), pv(SIZE_MAX / 2, 0, 1, -1)};
    ASSERT_STATUS(ib_plan_compute(d, 2, 64, false, &r, &err), IB_EINVAL);
    ASSERT_STATUS(ib_plan_compute(d, 2, 48, false, &r, &err), IB_EINVAL); /* not a power of 2 */
    ASSERT_OK(ib_plan_compute(NULL, 0, 64, false, &r, &err));
    ASSERT_UINT_EQ(r.total_bytes, 0);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Independent check: paint each step's bytes and look for double use. */
static void brute_check(const ib_plan_value *v, size_t n, size_t total, int32_t steps)
{
    unsigned char *owner_map = calloc(total ? total : 1, sizeof(int32_t));
    int32_t *owner = (int32_t *)(void *)owner_map;
    for (int32_t t = 0; t < steps; t++) {
        for (size_t b = 0; b < total; b++)
            owner[b] = -1;
        for (size_t i = 0; i < n; i++) {
            if (!v[i].size || t < v[i].start || t > v[i].end) continue;
            for (size_t b = v[i].offset; b < v[i].offset + v[i].size; b++) {
                int32_t o = owner[b];
                if (o >= 0) {
                    /* only a granted in-place pair, at the hand-over step */
                    bool ok =
                        v[i].shared && v[i].share_with == o && v[o].end == t && v[i].start == t;
                    if (!ok)
                        ib_test_fail(__FILE__, __LINE__, "byte %zu step %d used by %d and %zu", b,
                                     (int)t, (int)o, i);
                }
                owner[b] = (int32_t)i;
            }
        }
    }
    free(owner_map);
}

TEST(runtime_plan_random_never_overlaps)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int iter = 0; iter < 300; iter++) {
        size_t n = 1 + (size_t)(rng_next(&seed) % 120);
        int32_t steps = 1 + (int32_t)(rng_next(&seed) % 60);
        ib_plan_value *v = calloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++) {
            int32_t s = (int32_t)(rng_next(&seed) % (uint64_t)steps);
            int32_t len = (int32_t)(rng_next(&seed) % 8);
            int32_t e = s + len < steps ? s + len : steps - 1;
            size_t size = (rng_next(&seed) % 5 == 0) ? 0 : 1 + (size_t)(rng_next(&seed) % 700);
            int32_t share = -1;
            if (i && rng_next(&seed) % 3 == 0) share = (int32_t)(rng_next(&seed) % i);
            v[i] = pv(size, s, e, share);
        }
        ib_plan_result r;
        ib_err err;
        ASSERT_OK_ERR(ib_plan_compute(v, n, 16, false, &r, &err), &err);
        ASSERT_OK_ERR(ib_plan_verify(v, n, 16, r.total_bytes, &err), &err);
        ASSERT_UINT_GE(r.total_bytes, r.live_peak);
        ASSERT_UINT_LE(r.total_bytes, r.sum_bytes);
        brute_check(v, n, r.total_bytes, steps);
        free(v);
    }
}

TEST(runtime_plan_large_is_tight_enough)
{
    /* a long chain of values each alive for two steps: the plan needs only a
     * few slots, not n (greedy by size must reuse). */
    enum { N = 2000 };
    ib_plan_value *v = calloc(N, sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = pv(4096 + (size_t)(i % 7) * 64, i, i + 1, -1);
    ib_plan_result r;
    ib_err err;
    ASSERT_OK_ERR(ib_plan_compute(v, N, 64, false, &r, &err), &err);
    ASSERT_OK_ERR(ib_plan_verify(v, N, 64, r.total_bytes, &err), &err);
    ASSERT_UINT_LE(r.total_bytes, 4 * 4480);
    free(v);
}
