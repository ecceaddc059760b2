/*
 * ibk_grid.cuh - the launch shape our grid-stride kernels share (ib_kernels.cu, ib_attn.cu,
 * ib_ssd.cu): IBK_THREADS threads a block and enough blocks for n elements, capped (the loops
 * stride over the rest).
 */
#ifndef IB_BACKEND_CUDA_IBK_GRID_CUH
#define IB_BACKEND_CUDA_IBK_GRID_CUH

#include <stdint.h>

#define IBK_THREADS 256

static inline unsigned grid_for(int64_t n)
{
    int64_t g = (n + IBK_THREADS - 1) / IBK_THREADS;
    if (g > 65535LL * 32)
        g = 65535LL * 32; /* grid-stride loops cover the rest */
    return (unsigned)(g > 0 ? g : 1);
}

#endif
