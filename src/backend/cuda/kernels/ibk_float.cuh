/*
 * ibk_float.cuh - element loads and stores by ibk_float_t (float32, float16, bfloat16) for the
 * kernels whose tensors may be any of them (ib_kernels.cu, ib_attn.cu): arithmetic stays float32.
 */
#ifndef IBK_FLOAT_CUH
#define IBK_FLOAT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda_kernels.h"

__device__ static inline float ldt(const void *p, int t, int64_t i)
{
    return t == IBK_T_F16    ? __half2float(((const __half *)p)[i])
           : t == IBK_T_BF16 ? __bfloat162float(((const __nv_bfloat16 *)p)[i])
                             : ((const float *)p)[i];
}

__device__ static inline void stt(void *p, int t, int64_t i, float v)
{
    if (t == IBK_T_F16)
        ((__half *)p)[i] = __float2half_rn(v);
    else if (t == IBK_T_BF16)
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
    else
        ((float *)p)[i] = v;
}

#endif
