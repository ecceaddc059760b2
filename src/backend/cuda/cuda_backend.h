/*
 * cuda_backend.h - the "cuda" backend table (NVIDIA GPUs through the CUDA
 * runtime, cuBLASLt and cuDNN; docs/cuda_backend.md). Registered by
 * src/backend/backend.c when the build has IB_WITH_CUDA.
 */
#ifndef IB_BACKEND_CUDA_BACKEND_H
#define IB_BACKEND_CUDA_BACKEND_H

#include "backend/backend_impl.h"

extern const struct ib_backend_ops ib_backend_cuda_ops;

#endif
