/*
 * cpu_kernels_rnn512.c - the LSTM recurrence over batches of 5 and more as a packed
 * AVX-512 GEMM with the cell in its epilogue (issue 30: RNN-T's encoder at batch 16).
 *
 * Per step, gates[N, 4H] = h_{t-1}[N, H] x R^T is a small GEMM (RNN-T: 16 x 1024 x 4096,
 * 134 MFLOP over 16.8 MB of R). oneDNN 2.6's LSTM primitive ran it at about 184 GFLOP/s
 * (0.73 ms a step) on this machine's two cores; the dot-product kernel of
 * cpu_kernels_rnn.c is for batches up to 4, where the step is a GEMV bound by R's bytes.
 *
 * R is packed once (shared per context) as Rp[H/16][4][H][16]: for a block of 16 hidden
 * units and each gate (ONNX order i, o, f, c), the gate's 16 columns for every k, read as
 * one contiguous stream. The micro-kernel takes one gate of a block for up to 16 batch rows
 * (16 accumulators) while k runs over H: per k, one load of Rp and one FMA per row whose
 * broadcast operand comes from h held k-major (ht[k][row], written by the previous step's
 * epilogue), so R is read once per step for 16 rows. The four gates of 16 rows go to a 4 KB
 * buffer; the epilogue adds G (the input projection and both biases, computed for every step
 * first), applies sigmoid and tanh with a vectorised exp and writes c_t and h_t (row-major
 * for Y, k-major for the next step). Threads split the blocks; one barrier per step
 * publishes h_t. A first version (6 rows x 4 gates a pass, R re-read from L2 per 6 rows, h
 * row-major) ran at 86 GFLOP/s a core against this one's 118, about what oneDNN did.
 *
 * exp: exp512 (cpu_simd512.h); sigmoid(x) = 1 / (1 + exp(-x)), tanh(x) = 2 sigmoid(2x) - 1.
 */
#include <string.h>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_simd512.h"
#ifdef CPU_SIMD512
#define RNN512 1
#endif

bool cpu_lstm_packed_ok(int64_t H)
{
#ifdef RNN512
    return H % 16 == 0 && cpu_avx512f();
#else
    (void)H;
    return false;
#endif
}

void cpu_lstm_pack_h(const float *h, int64_t N, int64_t H, float *ht)
{
    /* ht[chunk][k][b] = h[chunk*16 + b][k], zero past N */
    int64_t chunks = (N + 15) / 16;
    for (int64_t q = 0; q < chunks; q++)
        for (int64_t kk = 0; kk < H; kk++)
            for (int64_t b = 0; b < 16; b++) {
                int64_t row = q * 16 + b;
                ht[(q * H + kk) * 16 + b] = row < N ? h[row * H + kk] : 0.0f;
            }
}

void cpu_lstm_pack(const float *R, int64_t H, float *Rp)
{
    /* Rp[jb][g][k][l] = R[g*H + jb*16 + l][k] */
    for (int64_t jb = 0; jb < H / 16; jb++)
        for (int64_t g = 0; g < 4; g++)
            for (int64_t l = 0; l < 16; l++) {
                const float *row = R + (g * H + jb * 16 + l) * H;
                float *o = Rp + (jb * 4 + g) * H * 16 + l;
                for (int64_t k = 0; k < H; k++)
                    o[k * 16] = row[k];
            }
}

#ifdef RNN512

static T512 INL __m512 sigm512(__m512 x)
{
    __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

static T512 INL __m512 tanh512(__m512 x)
{
    __m512 s = sigm512(_mm512_add_ps(x, x));
    return _mm512_sub_ps(_mm512_add_ps(s, s), _mm512_set1_ps(1.0f));
}

/* gates[b][g*16 + l] = sum_k h[b][k] R[g*H + jb*16 + l][k] for rows b < NB (NB <= 16, a
 * constant at every call; the loops over it are unrolled, so the accumulators stay in
 * registers), one gate at a time: per k one load of Rp and NB FMAs whose broadcast operand
 * is hT[k][b], at a constant offset from one pointer. With h read row-major (stride H, a
 * run-time value) GCC ran out of registers for the row addresses and folded the Rp load
 * into every FMA instead: twice the loads, 100 instead of 141 GFLOP/s on one core. */
static T512 INL void gemm_rows(const float *rp, const float *ht, int64_t H, float *gates,
                               const int NB)
{
    for (int g = 0; g < 4; g++) {
        const float *r = rp + g * H * 16;
        __m512 acc[16];
#pragma GCC unroll 16
        for (int b = 0; b < NB; b++)
            acc[b] = _mm512_setzero_ps();
        for (int64_t kk = 0; kk < H; kk++) {
            __m512 rv = _mm512_loadu_ps(r + kk * 16);
            const float *hk = ht + kk * 16;
#pragma GCC unroll 16
            for (int b = 0; b < NB; b++)
                acc[b] = _mm512_fmadd_ps(rv, _mm512_set1_ps(hk[b]), acc[b]);
        }
#pragma GCC unroll 16
        for (int b = 0; b < NB; b++)
            _mm512_storeu_ps(gates + b * 64 + g * 16, acc[b]);
    }
}

/* c_t and h_t of hidden units [16 jb, 16 jb + 16) for rows [b0, b0 + nb) from their gates
 * and G (the input projection and both biases); h_t also into htn, k-major for the next
 * step's GEMM. */
static T512 void cell(const cpu_lstm_ctx *k, int64_t t, float *hn, float *htn, int64_t jb,
                      int64_t b0, int64_t nb, const float *gates)
{
    const int64_t H = k->H, N = k->N;
    for (int64_t b = 0; b < nb; b++) {
        int64_t row = b0 + b, j = jb * 16;
        const float *g = k->G + (t * N + row) * 4 * H + j, *a = gates + b * 64;
        float *c = k->c + row * H + j, *h = hn + row * H + j;
        /* ONNX gate order i, o, f, c */
        __m512 i = sigm512(_mm512_add_ps(_mm512_loadu_ps(a), _mm512_loadu_ps(g)));
        __m512 o = sigm512(_mm512_add_ps(_mm512_loadu_ps(a + 16), _mm512_loadu_ps(g + H)));
        __m512 f = sigm512(_mm512_add_ps(_mm512_loadu_ps(a + 32), _mm512_loadu_ps(g + 2 * H)));
        __m512 cc = tanh512(_mm512_add_ps(_mm512_loadu_ps(a + 48), _mm512_loadu_ps(g + 3 * H)));
        __m512 cn = _mm512_fmadd_ps(f, _mm512_loadu_ps(c), _mm512_mul_ps(i, cc));
        __m512 hv = _mm512_mul_ps(o, tanh512(cn));
        _mm512_storeu_ps(c, cn);
        _mm512_storeu_ps(h, hv);
        /* htn[k][b] of this row's 16-row chunk, for k = j..j+15: a stride of 16 floats */
        __m512i at = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5,
                                                         4, 3, 2, 1, 0),
                                        _mm512_set1_epi32(16));
        _mm512_i32scatter_ps(htn + (b0 / 16) * H * 16 + j * 16 + b, at, hv, 4);
    }
}

#define ROWS_CASE(n)                                                                               \
    case n:                                                                                        \
        gemm_rows(rp, ht, H, gates, n);                                                            \
        break

T512 void cpu_lstm_packed_step(const cpu_lstm_ctx *k, int64_t t, const float *htp, float *hn,
                               float *htn, int64_t jb0, int64_t jb1)
{
    const int64_t H = k->H, N = k->N;
    float gates[16 * 64] __attribute__((aligned(64)));
    for (int64_t jb = jb0; jb < jb1; jb++) {
        const float *rp = k->Rp + jb * 4 * H * 16;
        for (int64_t b0 = 0; b0 < N; b0 += 16) {
            int64_t nb = N - b0 < 16 ? N - b0 : 16;
            const float *ht = htp + (b0 / 16) * H * 16;
            switch (nb) {
                ROWS_CASE(16); ROWS_CASE(15); ROWS_CASE(14); ROWS_CASE(13);
                ROWS_CASE(12); ROWS_CASE(11); ROWS_CASE(10); ROWS_CASE(9);
                ROWS_CASE(8); ROWS_CASE(7); ROWS_CASE(6); ROWS_CASE(5);
                ROWS_CASE(4); ROWS_CASE(3); ROWS_CASE(2); ROWS_CASE(1);
            default: break;
            }
            cell(k, t, hn, htn, jb, b0, nb, gates);
        }
    }
}

#else

void cpu_lstm_packed_step(const cpu_lstm_ctx *k, int64_t t, const float *htp, float *hn,
                          float *htn, int64_t jb0, int64_t jb1)
{
    (void)k, (void)t, (void)htp, (void)hn, (void)htn, (void)jb0, (void)jb1; /* never called */
}

#endif
