/*
 * cpu_kernels_attn.c - inferbench.MultiHeadAttention at float32 as one fused AVX-512 kernel
 * (issue 30: BERT-Large on the CPU).
 *
 * y[n, i, h, :] = softmax_j(scale * q[n, i, h, :] . k[n, j, h, :] + mask[n, h, i, j]) v[n, j, h, :]
 *
 * The oneDNN path (dnnl_attn.c) runs three primitives: the scores of all heads are written
 * out (BERT-Large: 16 x 384 x 384 floats, 9.4 MB a sample), read and written by the softmax
 * and read again by the second matmul, whose inner dimension is only 64. This kernel takes
 * one (sample, head, block of 64 queries) at a time and keeps its scores in a thread's
 * scratch (Sk x 64 floats, 96 KB at Sk = 384, in L2):
 *
 * 0. The head's k and v rows (4 KB apart in BERT's packed [N, S, 1024], so all on the same
 *    L1 sets) are copied contiguous, v zero-padded to 64 columns, once per thread and head
 *    (a thread's units are consecutive).
 * 1. Q's block is gathered transposed and zero-padded, Qt[d][64].
 * 2. Scores transposed, St[j][i] = scale * k_j . q_i (+ mask): per pass 6 keys x 64 queries
 *    (24 accumulators), per d four loads of Qt and six broadcasts of k; each query's running
 *    max in the epilogue.
 * 3. Softmax per query, vectorised over the 64 queries: p = exp(s - max) in place and its
 *    sum.
 * 4. y rows = (P V) / sum: per pass 6 queries x 64 output columns (24 accumulators), per
 *    key four loads of v and six broadcasts of P, over blocks of 64 keys (partial sums kept
 *    in a 16 KB buffer between blocks).
 *
 * BERT-Large's shapes alone, 2 threads: 3.24 ms a layer for the first version (k and v read
 * in place), 2.4 ms with them packed, 2.1-2.3 ms with v padded (no masked loads), the key
 * blocks and the gather; oneDNN's three primitives took 4.7 ms in the model.
 *
 * The scale is applied after the products and the mask added after it, as the oneDNN path's
 * output scale and post-op do. A mask broadcast over the queries (BERT's [N, 1, 1, Sk]) is
 * added in the scores' epilogue; any other is added by a scalar pass. A position whose
 * shifted score is below -87 contributes exactly 0 (exp512_neg).
 */
#include <math.h>
#include <stdint.h>
#include <omp.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_simd512.h"

#define MHA_QB 64 /* queries per unit: four vectors */
#define MHA_R 6   /* keys (scores) or queries (output) per micro-kernel pass */
#define MHA_JB 64 /* keys per block of the output pass */
#define MHA_DVP(dv) (((dv) + 63) / 64 * 64) /* a packed row of v, zero-padded */

size_t cpu_mha_scratch_floats(int64_t D, int64_t Dv, int64_t Sk)
{
    /* Qt [D][64], St [Sk][64], 1 / sum [64], the output's partial sums [64][64]; the
     * head's k and v packed [Sk][D] and [Sk][Dv] */
    return (size_t)(D + Sk + 1 + MHA_QB) * MHA_QB + (size_t)Sk * (size_t)(D + MHA_DVP(Dv));
}

bool cpu_mha_fused_ok(int64_t ldq)
{
#ifdef CPU_SIMD512
    /* the Q gather's offsets (15 rows of ldq floats) are int32 */
    return ldq > 0 && ldq < INT32_MAX / 16 && cpu_avx512f();
#else
    (void)ldq;
    return false;
#endif
}

#ifdef CPU_SIMD512

/* St[r][0..63] = scale * sum_d k_r[d] Qt[d][..] (+ mrow[r * mstj] when mrow) for NB keys
 * (NB a constant at every call, so the accumulators stay in registers); mx[c] takes the
 * maximum of each query's scores. */
static T512 INL void scores_rows(const float *kr, int64_t ldk, const float *qt, int64_t D,
                                 float scale, const float *mrow, int64_t mstj, float *st,
                                 __m512 *mx, const int NB)
{
    __m512 acc[MHA_R][4];
#pragma GCC unroll 6
    for (int r = 0; r < NB; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++)
            acc[r][c] = _mm512_setzero_ps();
    for (int64_t d = 0; d < D; d++) {
        const float *q = qt + d * MHA_QB;
        __m512 q0 = _mm512_loadu_ps(q), q1 = _mm512_loadu_ps(q + 16),
               q2 = _mm512_loadu_ps(q + 32), q3 = _mm512_loadu_ps(q + 48);
#pragma GCC unroll 6
        for (int r = 0; r < NB; r++) {
            __m512 b = _mm512_set1_ps(kr[r * ldk + d]);
            acc[r][0] = _mm512_fmadd_ps(q0, b, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(q1, b, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(q2, b, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(q3, b, acc[r][3]);
        }
    }
    __m512 sc = _mm512_set1_ps(scale);
#pragma GCC unroll 6
    for (int r = 0; r < NB; r++) {
        __m512 m = mrow ? _mm512_set1_ps(mrow[r * mstj]) : _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            __m512 x = _mm512_fmadd_ps(acc[r][c], sc, m);
            mx[c] = _mm512_max_ps(mx[c], x);
            _mm512_storeu_ps(st + r * MHA_QB + c * 16, x);
        }
    }
}

/* Keys [j0, j0 + nj) of y rows r < NB, columns [0, 64) of the block (vm: the valid ones):
 * acc = sum_j P[j][r] v_j, P = St from column r on; added to o (o's rows 64 floats apart)
 * unless first; when inv, the result is scaled by inv[r] and stored to y instead of o. */
static T512 INL void output_rows(const float *pt, const float *v, int64_t ldv, int64_t nj,
                                 const __mmask16 *vm, float *o, bool first, const float *inv,
                                 float *y, int64_t ldy, const int NB)
{
    __m512 acc[MHA_R][4];
#pragma GCC unroll 6
    for (int r = 0; r < NB; r++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++)
            acc[r][c] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(o + r * MHA_QB + c * 16);
    for (int64_t j = 0; j < nj; j++) {
        const float *vj = v + j * ldv, *p = pt + j * MHA_QB;
        __m512 v0 = _mm512_loadu_ps(vj), v1 = _mm512_loadu_ps(vj + 16),
               v2 = _mm512_loadu_ps(vj + 32), v3 = _mm512_loadu_ps(vj + 48);
#pragma GCC unroll 6
        for (int r = 0; r < NB; r++) {
            __m512 b = _mm512_set1_ps(p[r]);
            acc[r][0] = _mm512_fmadd_ps(v0, b, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(v1, b, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(v2, b, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(v3, b, acc[r][3]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < NB; r++) {
        if (inv) {
            __m512 s = _mm512_set1_ps(inv[r]);
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                _mm512_mask_storeu_ps(y + r * ldy + c * 16, vm[c], _mm512_mul_ps(acc[r][c], s));
        } else {
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                _mm512_storeu_ps(o + r * MHA_QB + c * 16, acc[r][c]);
        }
    }
}

/* A thread's scratch (cpu_mha_scratch_floats) and which head's k and v it holds packed. */
typedef struct mha_tls {
    float *qt, *st, *inv, *o, *kp, *vp;
    int64_t packed; /* n * h + head, -1 none */
} mha_tls;

/* The head's k and v rows, 4 KB apart in BERT's packed [N, S, h*D] (so every row maps to
 * the same L1 sets), copied into contiguous [Sk][D] and [Sk][Dv] once per (n, head): the
 * output pass read v in place at 167 GFLOP/s, from the copy at ... */
static void mha_pack(const cpu_mha_ctx *k, int64_t n, int64_t h, mha_tls *t)
{
    const int64_t Sk = k->Sk, D = k->D, Dv = k->Dv, ldk = k->h * D, ldv = k->h * Dv;
    const int64_t Dvp = MHA_DVP(Dv);
    const float *kr = k->k + n * Sk * ldk + h * D, *vr = k->v + n * Sk * ldv + h * Dv;
    for (int64_t j = 0; j < Sk; j++) {
        memcpy(t->kp + j * D, kr + j * ldk, (size_t)D * sizeof(float));
        memcpy(t->vp + j * Dvp, vr + j * ldv, (size_t)Dv * sizeof(float));
        memset(t->vp + j * Dvp + Dv, 0, (size_t)(Dvp - Dv) * sizeof(float));
    }
    t->packed = n * k->h + h;
}

/* One (n, h, query block): queries [i0, i0 + nq). */
static T512 void mha_unit(const cpu_mha_ctx *k, int64_t n, int64_t h, int64_t i0, int64_t nq,
                          mha_tls *t)
{
    const int64_t S = k->S, Sk = k->Sk, D = k->D, Dv = k->Dv, Dvp = MHA_DVP(Dv);
    const int64_t ldq = k->h * D, ldv = k->h * Dv;
    float *qt = t->qt, *st = t->st, *inv = t->inv;
    if (t->packed != n * k->h + h)
        mha_pack(k, n, h, t);
    /* 1. Qt[d][i] = q[n, i0 + i, h, d], zero past nq */
    const float *q = k->q + (n * S + i0) * ldq + h * D;
    for (int c = 0; c < 4; c++) {
        /* 16 rows' d-th element per gather (the scalar transpose was a few % of the kernel) */
        int64_t left = nq - 16 * c;
        __mmask16 live = left >= 16 ? (__mmask16)0xFFFF
                         : left > 0 ? (__mmask16)((1u << left) - 1) : (__mmask16)0;
        __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
                                                          5, 4, 3, 2, 1, 0),
                                         _mm512_set1_epi32((int)ldq));
        const float *qc = live ? q + 16 * c * ldq : q;
        for (int64_t d = 0; d < D; d++)
            _mm512_storeu_ps(qt + d * MHA_QB + 16 * c,
                             live ? _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, idx,
                                                             qc + d, 4)
                                  : _mm512_setzero_ps());
    }
    /* 2. St[j][i], and each query's maximum */
    const int64_t *ms = k->mst;
    const float *mb = k->mask ? k->mask + n * ms[0] + h * ms[1] : NULL;
    const float *mrow = mb && ms[2] == 0 ? mb : NULL; /* the same mask for every query */
    __m512 mx[4];
    for (int c = 0; c < 4; c++)
        mx[c] = _mm512_set1_ps(-INFINITY);
    for (int64_t j = 0; j < Sk; j += MHA_R) {
        const float *kj = t->kp + j * D, *mj = mrow ? mrow + j * ms[3] : NULL;
        float *sj = st + j * MHA_QB;
        switch (Sk - j < MHA_R ? Sk - j : MHA_R) {
        case 1: scores_rows(kj, D, qt, D, k->scale, mj, ms[3], sj, mx, 1); break;
        case 2: scores_rows(kj, D, qt, D, k->scale, mj, ms[3], sj, mx, 2); break;
        case 3: scores_rows(kj, D, qt, D, k->scale, mj, ms[3], sj, mx, 3); break;
        case 4: scores_rows(kj, D, qt, D, k->scale, mj, ms[3], sj, mx, 4); break;
        case 5: scores_rows(kj, D, qt, D, k->scale, mj, ms[3], sj, mx, 5); break;
        default: scores_rows(kj, D, qt, D, k->scale, mj, ms[3], sj, mx, 6); break;
        }
    }
    if (mb && !mrow) {
        /* a mask that varies with the query: added here, and the maxima taken again */
        for (int c = 0; c < 4; c++)
            mx[c] = _mm512_set1_ps(-INFINITY);
        for (int64_t j = 0; j < Sk; j++) {
            float *sj = st + j * MHA_QB;
            for (int64_t i = 0; i < nq; i++)
                sj[i] += mb[(i0 + i) * ms[2] + j * ms[3]];
            for (int c = 0; c < 4; c++)
                mx[c] = _mm512_max_ps(mx[c], _mm512_loadu_ps(sj + c * 16));
        }
    }
    /* 3. softmax over j, per query (the padded queries' columns are computed and unused) */
    for (int c = 0; c < 4; c++) {
        __m512 sum = _mm512_setzero_ps();
        for (int64_t j = 0; j < Sk; j++) {
            float *p = st + j * MHA_QB + c * 16;
            __m512 e = exp512_neg(_mm512_sub_ps(_mm512_loadu_ps(p), mx[c]));
            _mm512_storeu_ps(p, e);
            sum = _mm512_add_ps(sum, e);
        }
        _mm512_storeu_ps(inv + c * 16, _mm512_div_ps(_mm512_set1_ps(1.0f), sum));
    }
    /* 4. y = P V / sum, 64 columns of Dv at a time */
    float *y = k->y + (n * S + i0) * ldv + h * Dv;
    for (int64_t c0 = 0; c0 < Dv; c0 += 64) {
        __mmask16 vm[4];
        for (int c = 0; c < 4; c++) {
            int64_t left = Dv - c0 - 16 * c;
            vm[c] = left >= 16 ? (__mmask16)0xFFFF
                    : left > 0 ? (__mmask16)((1u << left) - 1) : (__mmask16)0;
        }
        /* keys in blocks of MHA_JB, so a block's P and v rows stay in L1 while every
         * query pass reads them (the whole St and v, 192 KB at Sk = 384, come from L2) */
        for (int64_t j0 = 0; j0 < Sk; j0 += MHA_JB) {
            const int64_t nj = Sk - j0 < MHA_JB ? Sk - j0 : MHA_JB;
            const bool first = j0 == 0, last = j0 + nj == Sk;
            for (int64_t i = 0; i < nq; i += MHA_R) {
                const float *pt = st + j0 * MHA_QB + i, *vc = t->vp + j0 * Dvp + c0;
                const float *iv = last ? inv + i : NULL;
                float *yi = y + i * ldv + c0, *oi = t->o + i * MHA_QB;
                switch (nq - i < MHA_R ? nq - i : MHA_R) {
                case 1: output_rows(pt, vc, Dvp, nj, vm, oi, first, iv, yi, ldv, 1); break;
                case 2: output_rows(pt, vc, Dvp, nj, vm, oi, first, iv, yi, ldv, 2); break;
                case 3: output_rows(pt, vc, Dvp, nj, vm, oi, first, iv, yi, ldv, 3); break;
                case 4: output_rows(pt, vc, Dvp, nj, vm, oi, first, iv, yi, ldv, 4); break;
                case 5: output_rows(pt, vc, Dvp, nj, vm, oi, first, iv, yi, ldv, 5); break;
                default: output_rows(pt, vc, Dvp, nj, vm, oi, first, iv, yi, ldv, 6); break;
                }
            }
        }
    }
}
#endif

int cpu_mha_run(void *kctx, int threads, ib_err *err)
{
    const cpu_mha_ctx *k = kctx;
#ifdef CPU_SIMD512
    const int64_t nqb = (k->S + MHA_QB - 1) / MHA_QB, units = k->N * k->h * nqb;
    const size_t per = cpu_mha_scratch_floats(k->D, k->Dv, k->Sk);
    int nt = threads < 1 ? 1 : threads > k->max_threads ? k->max_threads : threads;
    if (nt > units)
        nt = units > 0 ? (int)units : 1;
#pragma omp parallel num_threads(nt)
    {
        mha_tls t;
        t.qt = k->scratch + (size_t)omp_get_thread_num() * per;
        t.st = t.qt + k->D * MHA_QB;
        t.inv = t.st + k->Sk * MHA_QB;
        t.o = t.inv + MHA_QB;
        t.kp = t.o + MHA_QB * MHA_QB;
        t.vp = t.kp + k->Sk * k->D; /* rows of MHA_DVP(Dv) */
        t.packed = -1;
        /* static: a thread's units are consecutive, so it packs each head once */
#pragma omp for schedule(static)
        for (int64_t u = 0; u < units; u++) {
            int64_t b = u % nqb, nh = u / nqb, i0 = b * MHA_QB;
            mha_unit(k, nh / k->h, nh % k->h, i0, k->S - i0 < MHA_QB ? k->S - i0 : MHA_QB,
                     &t);
        }
    }
    IB_UNUSED(err);
    return IB_OK;
#else
    (void)k;
    (void)threads;
    return ib_err_set(err, IB_EUNSUPPORTED, "the fused attention kernel needs AVX-512");
#endif
}
