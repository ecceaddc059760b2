/*
 * test_cpu_dot.c - the CPU backend's inferbench.DotInteraction kernel
 * (src/backend/cpu/cpu_kernels_dot.c) alone, both forms: the dot-product one (any F and D,
 * every CPU) and the Gram-matrix one (F <= 32, D <= 256, AVX-512), against the products in
 * double. Feature counts around the kernel's 4-row blocks and its 16-column vectors, a
 * remainder in D, pairs below, above and on the diagonal. Through the backend (shapes,
 * index validation) it is tests/conformance/test_backend_ops_cases.c's "DotInteraction".
 */
#include <math.h>
#include <stdlib.h>

#include "backend/cpu/cpu_kernels.h"
#include "test.h"

static float urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 40) / 16777216.0 - 0.5);
}

TEST(cpu_dot_interaction_both_forms)
{
    static const int64_t Fs[] = {1, 3, 5, 15, 16, 17, 27, 32, 40};
    static const int64_t Ds[] = {1, 13, 128};
    uint64_t seed = 7;
    for (size_t fi = 0; fi < sizeof Fs / sizeof Fs[0]; fi++)
        for (size_t di = 0; di < sizeof Ds / sizeof Ds[0]; di++) {
            int64_t F = Fs[fi], D = Ds[di], N = 5;
            /* every pair (i, j) once: below, on and above the diagonal */
            int64_t K = F * F;
            int32_t *a = malloc((size_t)K * sizeof *a), *b = malloc((size_t)K * sizeof *b);
            float *x = malloc((size_t)(N * F * D) * sizeof *x);
            float *y[2] = {malloc((size_t)(N * K) * sizeof(float)),
                           malloc((size_t)(N * K) * sizeof(float))};
            ASSERT_TRUE(a && b && x && y[0] && y[1]);
            for (int64_t k = 0; k < K; k++) {
                a[k] = (int32_t)(k / F);
                b[k] = (int32_t)((k * 7 + 3) % F);
            }
            for (int64_t i = 0; i < N * F * D; i++)
                x[i] = urand(&seed);
            for (int g = 0; g < 2; g++) {
                cpu_dot_ctx c = {.x = x, .y = y[g], .N = N, .F = F, .D = D, .K = K, .a = a,
                                 .b = b, .generic = g == 0};
                for (int64_t i = 0; i < N * K; i++)
                    y[g][i] = NAN;
                ASSERT_OK(cpu_dot_interaction_run(&c, 2, NULL));
                double worst = 0;
                for (int64_t n = 0; n < N; n++)
                    for (int64_t k = 0; k < K; k++) {
                        double s = 0, m = 0;
                        for (int64_t d = 0; d < D; d++) {
                            double p = (double)x[(n * F + a[k]) * D + d] *
                                       (double)x[(n * F + b[k]) * D + d];
                            s += p;
                            m += fabs(p);
                        }
                        double e = fabs((double)y[g][n * K + k] - s) / (m + 1e-30);
                        worst = e > worst || isnan(e) ? e : worst;
                    }
                if (!(worst < 1e-5))
                    printf("# F %lld D %lld %s form: relative error %.3g\n", (long long)F,
                           (long long)D, g ? "Gram" : "dot", worst);
                ASSERT_TRUE(worst < 1e-5);
            }
            free(a);
            free(b);
            free(x);
            free(y[0]);
            free(y[1]);
        }
}
