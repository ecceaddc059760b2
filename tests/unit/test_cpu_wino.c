/*
 * test_cpu_wino.c - the CPU backend's Winograd F(2x2x2, 3x3x3) convolution kernel
 * (src/backend/cpu/cpu_kernels_wino.c) against the direct sum in double: odd extents
 * (partial tiles and a partial block of tiles), two volumes, with and without bias, both
 * micro-kernels (the portable one always, AVX-512 where the CPU has it), float32 and
 * bfloat16 storage, and the filter transform on a delta filter. Through the backend (layouts, the shape rules, the
 * direct_conv switch) it is tests/conformance/test_backend_ops_cases.c's "Conv3d winograd".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"
#include "ir/graph.h"
#include "test.h"

typedef struct wcase {
    int64_t N, D, H, W, C, M;
    bool bias;
} wcase;

static float urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 40) / 16777216.0 - 0.5);
}

/* y[n, z, y, x, m] by the definition (channels-last, zero padding 1), in double. */
static double direct(const wcase *c, const float *x, const float *w, const float *b, int64_t n,
                     int64_t z, int64_t yy, int64_t xx, int64_t m)
{
    double acc = b ? (double)b[m] : 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int l = 0; l < 3; l++) {
                int64_t zi = z + i - 1, yi = yy + j - 1, xi = xx + l - 1;
                if (zi < 0 || zi >= c->D || yi < 0 || yi >= c->H || xi < 0 || xi >= c->W)
                    continue;
                const float *xv = x + (((n * c->D + zi) * c->H + yi) * c->W + xi) * c->C;
                for (int64_t ci = 0; ci < c->C; ci++)
                    acc += (double)w[((m * c->C + ci) * 3 + i) * 9 + j * 3 + l] * (double)xv[ci];
            }
    return acc;
}

/* Runs the kernel on random data (bf16: x rounded to bfloat16, the kernel's own storage);
 * returns the largest |error| over max |y|. */
static double run_case(const wcase *c, bool generic, bool delta, bool bf16)
{
    int64_t S = c->N * c->D * c->H * c->W;
    float *x = malloc((size_t)(S * c->C) * sizeof *x), *y = malloc((size_t)(S * c->M) * sizeof *y);
    float *w = calloc((size_t)(c->M * c->C * 27), sizeof *w), *b = malloc((size_t)c->M * sizeof *b);
    float *u = malloc((size_t)(64 * c->C * c->M) * sizeof *u);
    float *scratch = malloc(2 * cpu_wino_scratch_floats(c->C, c->M) * sizeof *scratch);
    uint16_t *xh = malloc((size_t)(S * c->C) * 2), *yh = malloc((size_t)(S * c->M) * 2);
    uint16_t *uh = malloc((size_t)(64 * c->C * c->M) * 2);
    ASSERT_TRUE(x && y && w && b && u && scratch && xh && yh && uh);
    uint64_t s = 11;
    for (int64_t i = 0; i < S * c->C; i++) {
        x[i] = urand(&s);
        xh[i] = ib_f32_to_bf16(x[i]);
        if (bf16)
            x[i] = ib_bf16_to_f32(xh[i]);
    }
    for (int64_t i = 0; i < c->M * c->C * 27; i++) /* delta: w[m][m][1][1][1] = 1 */
        w[i] = delta ? (i % 27 == 13 && (i / 27) / c->C == (i / 27) % c->C ? 1.0f : 0.0f)
                     : urand(&s);
    for (int64_t i = 0; i < c->M; i++)
        b[i] = urand(&s);
    for (int64_t i = 0; i < S * c->M; i++) {
        y[i] = NAN; /* every output must be written */
        yh[i] = 0x7fc0;
    }
    cpu_wino_weights(w, c->M, c->C, u);
    cpu_wino_weights_bf16(w, c->M, c->C, uh);
    cpu_wino_ctx k = {.x = bf16 ? (void *)xh : x, .y = bf16 ? (void *)yh : y,
                      .u = bf16 ? (void *)uh : u, .bias = c->bias ? b : NULL, .N = c->N,
                      .D = c->D, .H = c->H, .W = c->W, .C = c->C, .M = c->M, .bf16 = bf16,
                      .max_threads = 2, .scratch = scratch, .generic = generic};
    ib_err err;
    ASSERT_OK(cpu_wino_run(&k, 2, &err));
    for (int64_t i = 0; bf16 && i < S * c->M; i++)
        y[i] = ib_bf16_to_f32(yh[i]);
    double worst = 0, ymax = 0;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t z = 0; z < c->D; z++)
            for (int64_t yy = 0; yy < c->H; yy++)
                for (int64_t xx = 0; xx < c->W; xx++)
                    for (int64_t m = 0; m < c->M; m++) {
                        double want = direct(c, x, w, c->bias ? b : NULL, n, z, yy, xx, m);
                        double got = y[(((n * c->D + z) * c->H + yy) * c->W + xx) * c->M + m];
                        double d = fabs(got - want);
                        if (!(d <= worst)) /* NaN too */
                            worst = d;
                        if (fabs(want) > ymax)
                            ymax = fabs(want);
                    }
    free(x), free(y), free(w), free(b), free(u), free(scratch), free(xh), free(yh), free(uh);
    return worst / (ymax > 0 ? ymax : 1.0);
}

static const wcase cases[] = {
    {2, 3, 5, 9, 16, 48, true},   /* odd extents, two volumes, a 16-wide product tail */
    {1, 2, 2, 34, 32, 32, false}, /* a row of 17 tiles: one full block and a partial one */
    {1, 1, 1, 1, 16, 16, true},   /* one voxel: the tile is all padding but one input */
};

TEST(cpu_wino_portable_kernel_matches_direct_sum)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        double e = run_case(&cases[i], true, false, false);
        printf("# case %zu: relative error %.3g\n", i, e);
        ASSERT_DBL_LT(e, 1e-5);
    }
}

TEST(cpu_wino_avx512_kernel_matches_direct_sum)
{
    if (!cpu_wino_avx512())
        TEST_SKIP("this CPU has no AVX-512F (the backend keeps oneDNN's direct kernel there)");
    for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
        double e = run_case(&cases[i], false, false, false);
        printf("# case %zu: relative error %.3g\n", i, e);
        ASSERT_DBL_LT(e, 1e-5);
    }
}

TEST(cpu_wino_delta_filter_copies_the_input)
{
    /* w = identity at the centre tap: y = x + bias up to the transforms' float rounding */
    wcase c = {1, 4, 3, 6, 16, 16, true};
    ASSERT_DBL_LT(run_case(&c, true, true, false), 1e-6);
}

/* bfloat16 storage: within bfloat16 rounding (8 bits) of the direct sum over the same
 * rounded inputs; the portable kernel everywhere, the vdpbf16ps one where the CPU has it */
TEST(cpu_wino_bf16_kernels_match_direct_sum)
{
    for (int pass = 0; pass < 2; pass++) {
        bool generic = pass == 0;
        if (!generic && !cpu_wino_avx512_bf16()) {
            printf("# no AVX512-BF16 on this CPU: the vdpbf16ps micro-kernel is not run\n");
            break;
        }
        for (size_t i = 0; i < IB_ARRAY_LEN(cases); i++) {
            double e = run_case(&cases[i], generic, false, true);
            printf("# %s case %zu: relative error %.3g\n", generic ? "portable" : "AVX512-BF16",
                   i, e);
            ASSERT_DBL_LT(e, 2e-2);
            ASSERT_DBL_GE(e, 1e-5); /* bfloat16 really ran (float32 stays below 1e-6) */
        }
    }
}
