/*
 * test_loadgen_rngcompat.c - issue 12: the libstdc++10 (GCC <= 10)
 * uniform_int_distribution, division-based rejection, against values worked
 * by hand from the first outputs of a default-seeded std::mt19937
 * (3499211612, 581869302, 3890346734, ...; the C++ standard's 10000th-output
 * check is in test_loadgen_rng.c).
 */
#include "loadgen/rng.h"
#include "test.h"

TEST(loadgen_rngcompat_division_rejects_and_divides)
{
    /* n = 2^31 + 1: scaling = (2^32-1)/n = 1, past = n. 3499211612 >= past is
     * rejected, 581869302 is kept: 581869302 / 1. Two outputs consumed. */
    ib_lg_rng r;
    ib_lg_rng_seed_default(&r);
    ASSERT_UINT_EQ(ib_lg_rng_uniform(&r, 2147483649u, IB_LG_RNG_LIBSTDCXX10), 581869302u);
    ASSERT_UINT_EQ(ib_lg_rng_next(&r), 3890346734u);
    /* libstdc++11 (Lemire) on the same first output: high word of
     * 3499211612 * (2^31 + 1) = 1749605806, low word 3499211612 >= n: kept. */
    ib_lg_rng_seed_default(&r);
    ASSERT_UINT_EQ(ib_lg_rng_uniform(&r, 2147483649u, IB_LG_RNG_LIBSTDCXX11), 1749605806u);
    ASSERT_UINT_EQ(ib_lg_rng_next(&r), 581869302u);
}

TEST(loadgen_rngcompat_division_small_range)
{
    /* n = 1000: scaling = 4294967, past = 4294967000; 3499211612 / 4294967
     * = 814 (814 * 4294967 = 3496103138 <= 3499211612 < 3500398105). */
    ib_lg_rng r;
    ib_lg_rng_seed_default(&r);
    ASSERT_UINT_EQ(ib_lg_rng_uniform(&r, 1000, IB_LG_RNG_LIBSTDCXX10), 814);
    /* 581869302 / 4294967 = 135 (135 * 4294967 = 579820545). */
    ASSERT_UINT_EQ(ib_lg_rng_uniform(&r, 1000, IB_LG_RNG_LIBSTDCXX10), 135);
    /* Lemire: floor(3499211612 * 1000 / 2^32) = 814 as well; floor(581869302
     * * 1000 / 2^32) = 135: small ranges mostly agree, shuffles do not. */
    ib_lg_rng_seed_default(&r);
    ASSERT_UINT_EQ(ib_lg_rng_uniform(&r, 1000, IB_LG_RNG_LIBSTDCXX11), 814);
}

TEST(loadgen_rngcompat_settings_default_and_names)
{
    ib_lg_settings s;
    ib_lg_settings_defaults(&s);
    ASSERT_INT_EQ(s.rng_compat, IB_LG_RNG_LIBSTDCXX11);
    enum ib_lg_rng_compat c;
    ASSERT_OK(ib_lg_rng_compat_parse("libstdc++10", &c));
    ASSERT_INT_EQ(c, IB_LG_RNG_LIBSTDCXX10);
    ASSERT_STR_EQ(ib_lg_rng_compat_name(c), "libstdc++10");
    ASSERT_STATUS(ib_lg_rng_compat_parse("libc++", &c), IB_EINVAL);
}
