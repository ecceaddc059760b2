/*
 * cuda_sys.h - the system headers of the cuda backend (CUDA runtime,
 * cuBLASLt, cuDNN), included with the warnings our flags raise on them in C
 * mode silenced (cublasLt.h has an old-style prototype; cuda_fp16.h tests
 * __cplusplus under #if). Include this instead of the headers themselves.
 */
#ifndef IB_BACKEND_CUDA_SYS_H
#define IB_BACKEND_CUDA_SYS_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wundef"
#include <cuda_runtime_api.h>
#include <cublasLt.h>
#include <cudnn.h>
#pragma GCC diagnostic pop

#endif
