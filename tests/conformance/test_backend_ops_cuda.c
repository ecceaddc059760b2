/*
 * test_backend_ops_cuda.c - the cuda backend's op registry for the coverage
 * test of test_backend_ops.c, in a file of its own: cuda_internal.h and
 * cpu_internal.h each define their backend's struct ib_backend_exec.
 */
#include <stddef.h>

#include "test_backend_ops.h"
#ifdef IB_WITH_CUDA
#include "backend/cuda/cuda_internal.h"
#endif

const char *bo_cuda_op_name(size_t i)
{
#ifdef IB_WITH_CUDA
    return cu_op_at(i) ? cu_op_at(i)->op_type : NULL;
#else
    (void)i;
    return NULL;
#endif
}
