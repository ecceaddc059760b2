/*
 * cpu_simd512.h - AVX-512 helpers shared by our micro-kernels (the packed LSTM recurrence,
 * the fused attention): function attributes and a vectorised exp.
 *
 * The project compiles for baseline x86-64 (no -march), so each AVX-512 function carries
 * T512 and runs only after cpu_avx512f() said yes.
 */
#ifndef IB_BACKEND_CPU_SIMD512_H
#define IB_BACKEND_CPU_SIMD512_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CPU_SIMD512 1
#define T512 __attribute__((target("avx512f")))
#define INL inline __attribute__((always_inline))

/* Cephes' expf: x = n ln2 + r, |r| <= ln2/2, a degree-6 polynomial, scaled by 2^n with
 * vscalefps; about 2 ulp. x is clamped to [-87, 88], so exp512 never returns 0 or inf. */
static T512 INL __m512 exp512(__m512 x)
{
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

/* exp(x) for x <= 0 that is exactly 0 below -87 (where float32's expf leaves the normal
 * range), as for a masked key's exp(s - 10000): exp512 would give 1.6e-38 there, whose
 * products with v are denormals, which an FMA may take a slow microcode assist for. */
static T512 INL __m512 exp512_neg(__m512 x)
{
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_GE_OQ),
                               exp512(x));
}
#endif

#endif
