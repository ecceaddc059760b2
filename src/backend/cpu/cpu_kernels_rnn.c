/*
 * cpu_kernels_rnn.c - the recurrence of a one-direction ONNX LSTM over a small batch
 * (dnnl_rnn.c computes the input projections for every step first, as one matmul).
 *
 * Per step t, for every hidden unit j and batch row b, the four gate rows of R
 * (ONNX order i, o, f, c; R is [4H, H] row-major, so a gate row is contiguous) are
 * dotted with h_{t-1}[b], added to the precomputed G[t, b] and turned into c_t and h_t
 * (ONNX's default activations: sigmoid, tanh, tanh). The hidden units are split
 * between the threads, so each thread owns its rows of R, its c values and its part
 * of h_t, and one barrier per step publishes h_t. At batch 1 the step is a GEMV over
 * R (16.8 MB for H = 1024): a layer's steps run back to back, so R stays in this
 * machine's 32 MB L3 and the step runs at L3 bandwidth, where oneDNN 2.6's LSTM
 * primitive ran RNN-T's encoder layers at 16-25 GB/s (docs/rnnt.md).
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"

/* out[g] = dot(r + g * stride, h) for the four gate rows of one hidden unit. */
static CPU_CLONES void dot4(const float *r, int64_t stride, const float *h, int64_t K, float out[4])
{
    const float *r0 = r, *r1 = r + stride, *r2 = r + 2 * stride, *r3 = r + 3 * stride;
    float a0[16] = {0}, a1[16] = {0}, a2[16] = {0}, a3[16] = {0};
    int64_t k = 0;
    for (; k + 16 <= K; k += 16)
#pragma omp simd
        for (int l = 0; l < 16; l++) {
            float hv = h[k + l];
            a0[l] += r0[k + l] * hv;
            a1[l] += r1[k + l] * hv;
            a2[l] += r2[k + l] * hv;
            a3[l] += r3[k + l] * hv;
        }
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; k < K; k++) {
        s0 += r0[k] * h[k];
        s1 += r1[k] * h[k];
        s2 += r2[k] * h[k];
        s3 += r3[k] * h[k];
    }
    for (int l = 0; l < 16; l++) {
        s0 += a0[l];
        s1 += a1[l];
        s2 += a2[l];
        s3 += a3[l];
    }
    out[0] = s0;
    out[1] = s1;
    out[2] = s2;
    out[3] = s3;
}

static inline float sigm(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* One step for hidden units [j0, j1) of every batch row. */
static void step(const cpu_lstm_ctx *k, int64_t t, const float *hp, float *hn, int64_t j0,
                 int64_t j1)
{
    int64_t N = k->N, H = k->H;
    for (int64_t b = 0; b < N; b++) {
        const float *g = k->G + (t * N + b) * 4 * H, *hb = hp + b * H;
        float *c = k->c + b * H, *h = hn + b * H;
        for (int64_t j = j0; j < j1; j++) {
            float a[4];
            dot4(k->R + j * H, H * H, hb, H, a);
            /* ONNX gate order i, o, f, c */
            float i = sigm(g[j] + a[0]), o = sigm(g[H + j] + a[1]);
            float f = sigm(g[2 * H + j] + a[2]), cc = tanhf(g[3 * H + j] + a[3]);
            float cn = f * c[j] + i * cc;
            c[j] = cn;
            h[j] = o * tanhf(cn);
        }
    }
}

int cpu_lstm_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_lstm_ctx *k = kctx;
    int64_t T = k->T, N = k->N, H = k->H, NH = N * H;
    if (k->h0)
        memcpy(k->h, k->h0, (size_t)NH * sizeof *k->h);
    else
        memset(k->h, 0, (size_t)NH * sizeof *k->h);
    if (k->c0)
        memcpy(k->c, k->c0, (size_t)NH * sizeof *k->c);
    else
        memset(k->c, 0, (size_t)NH * sizeof *k->c);
    int64_t HT = (N + 15) / 16 * 16 * H; /* floats of one k-major copy of h */
    if (k->Rp) {
        memset(k->ht, 0, 2 * (size_t)HT * sizeof *k->ht);
        cpu_lstm_pack_h(k->h, N, H, k->ht);
    }
    /* the packed kernel splits blocks of 16 hidden units, this one single units */
    int64_t units = k->Rp ? H / 16 : H, width = k->Rp ? 16 : 1;
    int nt = threads < 1 ? 1 : threads;
    if (nt > units) nt = (int)units;
#pragma omp parallel num_threads(nt)
    {
        int tid = omp_get_thread_num(), tn = omp_get_num_threads();
        int64_t u0 = units * tid / tn, u1 = units * (tid + 1) / tn;
        int64_t j0 = u0 * width, j1 = u1 * width;
        for (int64_t s = 0; s < T; s++) {
            int64_t t = k->reverse ? T - 1 - s : s;
            const float *hp = k->h + (s & 1) * NH;
            float *hn = k->h + ((s + 1) & 1) * NH;
            if (k->Rp)
                cpu_lstm_packed_step(k, t, k->ht + (s & 1) * HT, hn, k->ht + ((s + 1) & 1) * HT,
                                     u0, u1);
            else
                step(k, t, hp, hn, j0, j1);
            if (k->y)
                for (int64_t b = 0; b < N; b++)
                    memcpy(k->y + (t * N + b) * H + j0, hn + b * H + j0,
                           (size_t)(j1 - j0) * sizeof *hn);
#pragma omp barrier
        }
    }
    const float *hl = k->h + (T & 1) * NH; /* h after the last step */
    if (k->yh)
        memcpy(k->yh, hl, (size_t)NH * sizeof *hl);
    if (k->yc)
        memcpy(k->yc, k->c, (size_t)NH * sizeof *k->c);
    return IB_OK;
}
