/*
 * test_backend_ops.h - the cross-backend op test harness (ggml's
 * test-backend-ops, STYLE.md §11): build a small graph per case, run it on
 * the backend under test (cpu, cuda: every registered backend but the
 * reference) at every precision it and this machine support and on the
 * reference backend, compare outputs by NMSE with per-precision
 * tolerances, and check the guard bytes around every value's storage.
 *
 * Case builders (test_backend_ops_cases.c) use the bo_* helpers; the
 * runner (test_backend_ops.c) executes them or, for the coverage test, only
 * lists the op types they use.
 */
#ifndef IB_TEST_BACKEND_OPS_H
#define IB_TEST_BACKEND_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/graph.h"

#define BO_MAX_VALUES 64
#define BO_MAX_OUTS 8

/* Case flags */
#define BO_INT8 0x1u    /* an int8 op: INT8 precision must quantise it */
#define BO_BF16 0x2u    /* a compute op: BF16 (and FP16) precision must change the result */
#define BO_CHAIN 0x4u   /* several nodes: looser quantisation tolerance */
#define BO_EXACT 0x8u   /* data movement: float outputs must match bit-exactly at fp32 */

typedef struct bo_fill {
    bool set;
    double lo, hi; /* uniform range (integers: [lo, hi]) */
} bo_fill;

struct ib_backend;
struct bo_dut;

typedef struct bo {
    ib_graph *g;
    const struct bo_dut *dut;          /* the backend under test and its rules */
    struct ib_backend *cached[8];      /* per precision, when the dut is reused across cases */
    uint64_t rng;
    bo_fill fill[BO_MAX_VALUES]; /* per value id: how to fill a runtime input */
    bool list_only;               /* coverage mode: record op types, run nothing */
    int64_t opset;                /* opset of the nodes added next (0 = the graph's) */
    const char *family;
    /* int8 on the CPU backend: exactly these values must be held quantised between
     * their producer and their int8 consumers (cpu_val.qscale; bo_run resets it) */
    bool check_q8;
    ib_value_id q8_held[BO_MAX_OUTS];
    uint32_t n_q8_held;
    /* CPU backend, every precision: when value cl_from[k] is held channels-last, so is
     * cl_to[k] (layouts kept through ConvTranspose and Concat; bo_run resets it) */
    ib_value_id cl_from[BO_MAX_OUTS], cl_to[BO_MAX_OUTS];
    uint32_t n_cl;
    /* CPU backend: at least this many steps must be our C kernels (a route away from a
     * oneDNN reference implementation; bo_run resets it) */
    int min_kernel_steps;
    bool kernel_steps_not_bf16; /* ... except at BF16 precision (oneDNN's bf16 path) */
    bool kernel_steps_not_int8;  /* ... except at INT8 precision (oneDNN's int8 path) */
    int max_kernel_steps;        /* and at most this many (-1: no bound) */
    /* CPU backend created with ib_backend_config.direct_conv (no Winograd; bo_run resets it) */
    bool direct_conv;
    /* CPU backend: at least this many steps must be primitives run several times over
     * moving views (cpu_add_prim_repeat: ConvTranspose 2x2x2 / 2 as matmuls) */
    int min_repeat_steps;
    /* results */
    int cases, failed, skipped; /* skipped: precision lines the dut refused (never the cpu's) */
    char ops[256][40]; /* op types seen (coverage mode) */
    int n_ops;
} bo;

/* Values: runtime inputs (filled with uniform data at run time) and
 * constants (filled now). dims is ndim entries. */
ib_value_id bo_input(bo *b, enum ib_dtype dt, int ndim, const int64_t *dims, double lo, double hi);
ib_value_id bo_const(bo *b, enum ib_dtype dt, int ndim, const int64_t *dims, double lo, double hi);
/* A constant int64 / float tensor with given values. */
ib_value_id bo_const_i64(bo *b, int ndim, const int64_t *dims, const int64_t *vals);
ib_value_id bo_const_f32(bo *b, int ndim, const int64_t *dims, const float *vals);

/* Attributes */
ib_attr bo_ai(const char *name, int64_t v);
ib_attr bo_af(const char *name, float v);
ib_attr bo_as(const char *name, const char *s);
ib_attr bo_aints(const char *name, size_t n, const int64_t *v);

/* Add a node; output descs come from the op registry's shape inference.
 * in may hold IB_VALUE_NONE for absent inputs. Returns output 0 (outs
 * receives all n_out ids when not NULL). */
ib_value_id bo_node(bo *b, const char *op, const char *domain, const ib_value_id *in,
                    uint32_t n_in, const ib_attr *at, uint32_t n_at, uint32_t n_out,
                    ib_value_id *outs);

/* Run the case built so far (outputs = the given values), then start a new graph. */
void bo_run(bo *b, const char *label, unsigned flags, const ib_value_id *outs, uint32_t n_out);

/* Builders by family (test_backend_ops_cases.c). */
void bo_cases_conv(bo *b);
void bo_cases_matmul(bo *b);
void bo_cases_pool_norm(bo *b);
void bo_cases_eltwise(bo *b);
void bo_cases_binary(bo *b);
void bo_cases_shape(bo *b);
void bo_cases_rnn(bo *b);
void bo_cases_chains(bo *b);

/* The i-th op type the cuda backend registers (NULL past the end or without CUDA). */
const char *bo_cuda_op_name(size_t i);

#endif
