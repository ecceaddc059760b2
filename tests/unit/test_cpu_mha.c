/*
 * test_cpu_mha.c - the CPU backend's fused multi-head attention kernel
 * (src/backend/cpu/cpu_kernels_attn.c) alone, against the attention computed in double:
 * query counts around its 64-query blocks and 6-row passes, key counts around its 6-key
 * passes and 64-key output blocks, head widths D and Dv around its 16-float vectors and 64-
 * column blocks, masks broadcast over the queries, varying with them, or absent; one and two
 * threads bit-equal; and a masked key adds exactly nothing (the padded and the cut
 * sequence give the same bits, which `--variant unpadded` relies on). Through the backend it
 * is tests/conformance/test_backend_ops_cases.c's "MultiHeadAttention" cases.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"
#include "test.h"

static float urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 40) / 16777216.0 - 0.5);
}

typedef struct mha_case {
    int64_t N, h, S, Sk, D, Dv;
    int mask; /* 0 none, 1 [N, 1, 1, Sk], 2 [N, h, S, Sk] */
} mha_case;

/* y by the kernel with `threads`; the caller frees */
static float *run_kernel(const mha_case *c, const float *q, const float *k, const float *v,
                         const float *m, float scale, int threads)
{
    size_t ny = (size_t)(c->N * c->S * c->h * c->Dv);
    float *y = malloc(ny * sizeof *y);
    float *scratch = malloc(2 * cpu_mha_scratch_floats(c->D, c->Dv, c->Sk) * sizeof(float));
    if (!y || !scratch)
        return NULL;
    for (size_t i = 0; i < ny; i++)
        y[i] = NAN;
    cpu_mha_ctx x = {.q = q, .k = k, .v = v, .mask = m, .y = y, .N = c->N, .h = c->h,
                     .S = c->S, .Sk = c->Sk, .D = c->D, .Dv = c->Dv, .scale = scale,
                     .max_threads = 2, .scratch = scratch};
    if (c->mask == 1) {
        x.mst[0] = c->Sk;
        x.mst[3] = 1;
    } else if (c->mask == 2) {
        x.mst[0] = c->h * c->S * c->Sk;
        x.mst[1] = c->S * c->Sk;
        x.mst[2] = c->Sk;
        x.mst[3] = 1;
    }
    int rc = cpu_mha_run(&x, threads, NULL);
    free(scratch);
    if (rc) {
        free(y);
        return NULL;
    }
    return y;
}

TEST(cpu_mha_fused_kernel_matches_double)
{
    if (!cpu_mha_fused_ok(64))
        TEST_SKIP("this CPU has no AVX-512F (the fused attention kernel is not used)");
    static const mha_case cases[] = {
        {1, 16, 384, 384, 64, 64, 1}, /* BERT-Large's shapes */
        {2, 3, 1, 1, 1, 1, 0},        {2, 2, 5, 7, 13, 20, 1},     {1, 2, 64, 64, 16, 16, 2},
        {2, 1, 70, 100, 64, 80, 2},   {1, 2, 130, 13, 33, 130, 1}, {3, 4, 12, 20, 8, 4, 0},
        {1, 1, 127, 65, 64, 64, 1},
    };
    uint64_t seed = 11;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const mha_case *c = &cases[ci];
        size_t nq = (size_t)(c->N * c->S * c->h * c->D), nk = (size_t)(c->N * c->Sk * c->h * c->D);
        size_t nv = (size_t)(c->N * c->Sk * c->h * c->Dv);
        size_t nm = c->mask == 2 ? (size_t)(c->N * c->h * c->S * c->Sk) : (size_t)(c->N * c->Sk);
        float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nv * 4), *m = malloc(nm * 4);
        ASSERT_TRUE(q && k && v && m);
        for (size_t i = 0; i < nq; i++)
            q[i] = 4 * urand(&seed);
        for (size_t i = 0; i < nk; i++)
            k[i] = 4 * urand(&seed);
        for (size_t i = 0; i < nv; i++)
            v[i] = urand(&seed);
        for (size_t i = 0; i < nm; i++) /* every fourth key masked out, as BERT's padding */
            m[i] = (i % 4 == 3 && i % c->Sk != 0) ? -10000.0f : urand(&seed);
        const float scale = 1.0f / sqrtf((float)c->D);
        float *y1 = run_kernel(c, q, k, v, c->mask ? m : NULL, scale, 1);
        float *y2 = run_kernel(c, q, k, v, c->mask ? m : NULL, scale, 2);
        ASSERT_TRUE(y1 && y2);
        ASSERT_TRUE(memcmp(y1, y2, (size_t)(c->N * c->S * c->h * c->Dv) * sizeof(float)) == 0);
        double *s = malloc((size_t)c->Sk * sizeof *s), worst = 0;
        ASSERT_TRUE(s);
        const int64_t H = c->h * c->D, Hv = c->h * c->Dv;
        for (int64_t n = 0; n < c->N; n++)
            for (int64_t hh = 0; hh < c->h; hh++)
                for (int64_t i = 0; i < c->S; i++) {
                    double mx = -INFINITY, sum = 0;
                    for (int64_t j = 0; j < c->Sk; j++) {
                        double d = 0;
                        for (int64_t e = 0; e < c->D; e++)
                            d += (double)q[(n * c->S + i) * H + hh * c->D + e] *
                                 (double)k[(n * c->Sk + j) * H + hh * c->D + e];
                        d *= (double)scale;
                        if (c->mask == 1)
                            d += (double)m[n * c->Sk + j];
                        else if (c->mask == 2)
                            d += (double)m[((n * c->h + hh) * c->S + i) * c->Sk + j];
                        s[j] = d;
                        mx = d > mx ? d : mx;
                    }
                    for (int64_t j = 0; j < c->Sk; j++)
                        sum += (s[j] = exp(s[j] - mx));
                    for (int64_t e = 0; e < c->Dv; e++) {
                        double want = 0;
                        for (int64_t j = 0; j < c->Sk; j++)
                            want += s[j] / sum * (double)v[(n * c->Sk + j) * Hv + hh * c->Dv + e];
                        double got = y1[(n * c->S + i) * Hv + hh * c->Dv + e];
                        double err = fabs(got - want);
                        worst = err > worst || isnan(err) ? err : worst;
                    }
                }
        if (!(worst < 2e-5))
            printf("# case %zu (N %lld h %lld S %lld Sk %lld D %lld Dv %lld mask %d): |y - "
                   "y_double| up to %.3g\n",
                   ci, (long long)c->N, (long long)c->h, (long long)c->S, (long long)c->Sk,
                   (long long)c->D, (long long)c->Dv, c->mask, worst);
        ASSERT_TRUE(worst < 2e-5);
        free(s);
        free(y1);
        free(y2);
        free(q);
        free(k);
        free(v);
        free(m);
    }
}

/* Keys masked with -10000 past a real length L give the bits of the sequence cut to L. */
TEST(cpu_mha_masked_keys_add_exactly_nothing)
{
    if (!cpu_mha_fused_ok(64))
        TEST_SKIP("this CPU has no AVX-512F (the fused attention kernel is not used)");
    const int64_t h = 4, S = 70, Sk = 96, L = 41, D = 16, Dv = 16;
    uint64_t seed = 5;
    float *q = malloc((size_t)(S * h * D) * 4), *k = malloc((size_t)(Sk * h * D) * 4),
          *v = malloc((size_t)(Sk * h * Dv) * 4), *m = malloc((size_t)Sk * 4);
    ASSERT_TRUE(q && k && v && m);
    for (int64_t i = 0; i < S * h * D; i++)
        q[i] = 3 * urand(&seed);
    for (int64_t i = 0; i < Sk * h * D; i++)
        k[i] = 3 * urand(&seed);
    for (int64_t i = 0; i < Sk * h * Dv; i++)
        v[i] = urand(&seed);
    for (int64_t j = 0; j < Sk; j++)
        m[j] = j < L ? 0.0f : -10000.0f;
    mha_case full = {1, h, S, Sk, D, Dv, 1}, cut = {1, h, S, L, D, Dv, 1};
    float *yf = run_kernel(&full, q, k, v, m, 0.25f, 2), *yc = run_kernel(&cut, q, k, v, m, 0.25f, 2);
    ASSERT_TRUE(yf && yc);
    ASSERT_TRUE(memcmp(yf, yc, (size_t)(S * h * Dv) * sizeof(float)) == 0);
    free(yf);
    free(yc);
    free(q);
    free(k);
    free(v);
    free(m);
}
