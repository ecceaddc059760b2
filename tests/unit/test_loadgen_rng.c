/*
 * test_loadgen_rng.c - src/loadgen/rng.c against outputs of real standard
 * libraries: the C++ standard's mt19937 check value, the libstdc++ vectors of
 * loadgen.md §4.4, a stream of libstdc++ 12 results (std::mt19937 with
 * uniform_int_distribution, std::shuffle on both paths, uniform_real and
 * exponential distributions, recorded with g++ 12 as FNV-1a hashes), and the
 * v1.1-era (GCC <= 10) division-based uniform_int through a published Dell
 * v1.1 loaded_qsl_set.
 */
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/base.h"
#include "loadgen/rng.h"
#include "test.h"

#define FNV_OFF 1469598103934665603ull
#define FNV_MUL 1099511628211ull

TEST(loadgen_rng_mt19937_reference)
{
    /* [rand.predef]: the 10000th output of a default-constructed mt19937. */
    ib_lg_rng r;
    ib_lg_rng_seed_default(&r);
    uint32_t v = 0;
    for (int i = 0; i < 10000; i++)
        v = ib_lg_rng_next(&r);
    ASSERT_UINT_EQ(v, 4123659995u);
    /* Seeds are taken modulo 2^32 (§4.1). */
    ib_lg_rng a, b;
    ib_lg_rng_seed(&a, 2085463073848966840ull);
    ib_lg_rng_seed(&b, 3438689976ull);
    for (int i = 0; i < 2000; i++)
        ASSERT_UINT_EQ(ib_lg_rng_next(&a), ib_lg_rng_next(&b));
}

TEST(loadgen_rng_discard_matches_next)
{
    for (uint64_t n = 0; n < 2000; n += 97) {
        ib_lg_rng a, b;
        ib_lg_rng_seed(&a, 42);
        ib_lg_rng_seed(&b, 42);
        ib_lg_rng_next(&a); /* start mid-block */
        ib_lg_rng_next(&b);
        ib_lg_rng_discard(&a, n);
        for (uint64_t i = 0; i < n; i++)
            ib_lg_rng_next(&b);
        ASSERT_UINT_EQ(ib_lg_rng_next(&a), ib_lg_rng_next(&b));
    }
}

TEST(loadgen_rng_shuffle_vector_section_4_4)
{
    /* loadgen.md §4.4: std::shuffle of 0..9 with mt19937(3438689976), then two
     * uniform_int_distribution<int>(0, 1023) draws. The reference lists them
     * as "484, 313"; a g++ 12 program drawing them in sequence gets 313 first,
     * then 484 (the listing came from unspecified argument evaluation order). */
    ib_lg_rng r;
    ib_lg_rng_seed(&r, 3438689976u);
    size_t a[10];
    for (size_t i = 0; i < 10; i++)
        a[i] = i;
    ib_lg_rng_shuffle(&r, a, 10, IB_LG_RNG_LIBSTDCXX11);
    const size_t want[10] = {1, 5, 7, 6, 0, 8, 3, 2, 9, 4};
    for (size_t i = 0; i < 10; i++)
        ASSERT_UINT_EQ(a[i], want[i]);
    ASSERT_UINT_EQ(ib_lg_rng_uniform(&r, 1024, IB_LG_RNG_LIBSTDCXX11), 313);
    ASSERT_UINT_EQ(ib_lg_rng_uniform(&r, 1024, IB_LG_RNG_LIBSTDCXX11), 484);
}

/*
 * The stream recorded from libstdc++ 12 (g++ -O2): with one mt19937(seed),
 * 20000 uniform_int_distribution<int>(0, n-1) draws with n = 1 when k%7 == 0,
 * 2 when k%5 == 0, else (k*2654435761 mod 2^32) % 100000 + 1; then 1000
 * uniform_int_distribution<size_t>(0, 4e9) draws (hash U); then std::shuffle
 * of iota vectors of the sizes below (hash per size, both shuffle paths);
 * then the sum of 1000 uniform_real_distribution<double>(0,1) draws; the sum
 * of 10000 exponential_distribution(2500) draws cast to ns; the next output.
 */
TEST(loadgen_rng_libstdcxx12_stream)
{
    static const struct {
        size_t n;
        uint64_t hash;
    } shuffles[] = {
        {0, 1469598103934665603ull},     {1, 4953163356653287321ull},
        {2, 11125488673309971922ull},    {3, 11570871483800784260ull},
        {10, 7321266190891054460ull},    {11, 16714935618953068266ull},
        {1000, 14974852043046716837ull}, {1001, 16743720404602651169ull},
        {65535, 8139803537195686602ull}, {65536, 4163810502937765745ull},
        {70000, 2766224376745117559ull}, {70001, 2330680749496650859ull},
    };
    ib_lg_rng r;
    ib_lg_rng_seed(&r, 2085463073848966840ull);
    uint64_t h = FNV_OFF;
    for (uint32_t k = 0; k < 20000; k++) {
        uint32_t n = (k % 7 == 0) ? 1 : (k % 5 == 0 ? 2 : (k * 2654435761u) % 100000 + 1);
        h = (h ^ ib_lg_rng_uniform(&r, n, IB_LG_RNG_LIBSTDCXX11)) * FNV_MUL;
    }
    for (int k = 0; k < 1000; k++)
        h = (h ^ ib_lg_rng_uniform(&r, 4000000001u, IB_LG_RNG_LIBSTDCXX11)) * FNV_MUL;
    ASSERT_UINT_EQ(h, 4630605180260916530ull);
    for (size_t i = 0; i < sizeof shuffles / sizeof shuffles[0]; i++) {
        size_t n = shuffles[i].n;
        size_t *a = malloc((n + 1) * sizeof *a);
        ASSERT_NOT_NULL(a);
        for (size_t j = 0; j < n; j++)
            a[j] = j;
        ib_lg_rng_shuffle(&r, a, n, IB_LG_RNG_LIBSTDCXX11);
        uint64_t hh = FNV_OFF;
        for (size_t j = 0; j < n; j++)
            hh = (hh ^ a[j]) * FNV_MUL;
        free(a);
        if (hh != shuffles[i].hash)
            ib_test_fail(__FILE__, __LINE__, "shuffle of %zu differs from libstdc++", n);
    }
    double sum = 0;
    for (int k = 0; k < 1000; k++)
        sum += ib_lg_rng_canonical(&r);
    ASSERT_DBL_EQ(sum, 507.70044601747054);
    int64_t t = 0;
    for (int k = 0; k < 10000; k++)
        t += ib_lg_rng_exponential_ns(&r, 2500.0);
    ASSERT_INT_EQ(t, 3988008585);
    ASSERT_UINT_EQ(ib_lg_rng_next(&r), 4035575949u);
}

TEST(loadgen_rng_uniform_edge_cases)
{
    /* n = 1 still consumes one engine output (libstdc++ does). */
    for (int c = 0; c < 2; c++) {
        enum ib_lg_rng_compat compat = c ? IB_LG_RNG_LIBSTDCXX10 : IB_LG_RNG_LIBSTDCXX11;
        ib_lg_rng a, b;
        ib_lg_rng_seed(&a, 7);
        ib_lg_rng_seed(&b, 7);
        ASSERT_UINT_EQ(ib_lg_rng_uniform(&a, 1, compat), 0);
        ib_lg_rng_next(&b);
        ASSERT_UINT_EQ(ib_lg_rng_next(&a), ib_lg_rng_next(&b));
        for (int i = 0; i < 1000; i++)
            ASSERT_UINT_LE(ib_lg_rng_uniform(&a, 0xfffffffeu, compat), 0xfffffffdu);
    }
    /* GCC <= 10: value / ((2^32-1)/n) of the first output below n*scaling. */
    ib_lg_rng a, b;
    ib_lg_rng_seed(&a, 99);
    ib_lg_rng_seed(&b, 99);
    for (int i = 0; i < 1000; i++) {
        uint32_t n = (uint32_t)(i * 7919 % 100000 + 1);
        uint32_t scaling = 0xffffffffu / n, v;
        do
            v = ib_lg_rng_next(&b);
        while ((uint64_t)v >= (uint64_t)n * scaling);
        ASSERT_UINT_EQ(ib_lg_rng_uniform(&a, n, IB_LG_RNG_LIBSTDCXX10), v / scaling);
    }
    /* Lemire (high word of v*n) and division (v / floor((2^32-1)/n)) agree
     * often for small n but rarely for large ranges such as the shuffle's
     * pair draws: e.g. n = 1e9 gives scaling 4, v/4 versus v*0.2328. */
    ib_lg_rng_seed(&a, 5);
    ib_lg_rng_seed(&b, 5);
    int differ = 0;
    for (int i = 0; i < 100; i++)
        differ += ib_lg_rng_uniform(&a, 1000000000u, IB_LG_RNG_LIBSTDCXX11) !=
                  ib_lg_rng_uniform(&b, 1000000000u, IB_LG_RNG_LIBSTDCXX10);
    ASSERT_INT_GT(differ, 90);
}

/*
 * A v1.1-era build (GCC <= 10 libstdc++): the published Dell R7525 A100
 * resnet50 Server run logged this loaded_qsl_set: the first 2048 entries of
 * std::shuffle(0..49999) with mt19937(qsl seed 1624344308455410291).
 */
TEST(loadgen_rng_libstdcxx10_dell_v11_set)
{
    const size_t want[16] = {1414,  1798,  3993,  28128, 48896, 20302, 16768, 19533,
                             45484, 22914, 27064, 39562, 43387, 29484, 48046, 46192};
    size_t n = 50000;
    size_t *a = malloc(n * sizeof *a);
    ASSERT_NOT_NULL(a);
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    ib_lg_rng r;
    ib_lg_rng_seed(&r, 1624344308455410291ull);
    ib_lg_rng_shuffle(&r, a, n, IB_LG_RNG_LIBSTDCXX10);
    for (size_t i = 0; i < 16; i++)
        ASSERT_UINT_EQ(a[i], want[i]);
    /* The whole logged set, when the shared Dell tree is present. */
    char path[4096];
    snprintf(path, sizeof path,
             "%s/data/mlperf-inference-v1.1/closed/Dell/results/R7525_A100-PCIE-40GBx3_TRT/"
             "resnet50/Server/performance/run_1/mlperf_log_detail.txt",
             ib_test_shared_dir());
    char *text = NULL;
    size_t len;
    ib_err err;
    if (ib_file_read_all(path, 0, &text, &len, &err) == IB_OK) {
        const char *p = strstr(text, "\"loaded_qsl_set\", \"value\": [");
        ASSERT_NOT_NULL(p);
        p = strchr(p, '[') + 1;
        size_t k = 0;
        while (*p && *p != ']') {
            char *end;
            unsigned long long v = strtoull(p, &end, 10);
            ASSERT_UINT_EQ(a[k], v);
            k++;
            p = *end == ',' ? end + 1 : end;
        }
        ASSERT_UINT_EQ(k, 2048);
        ib_free(text);
    }
    free(a);
}
