/*
 * cpu_kernels.h - our own OpenMP C kernels (the ops oneDNN lacks or runs
 * poorly): broadcast elementwise arithmetic, comparisons and logic, Where,
 * unary fallbacks, Cast, strided copies (Transpose, Slice, Expand, Concat,
 * Split), Gather, reductions to indices (ArgMax/ArgMin) and instance
 * normalisation.
 *
 * Each kernel is a cpu_kernel_fn over a context struct built at compile time
 * (plain row-major host pointers, shapes, strides); the compile side lives
 * with the op family that uses it.
 */
#ifndef IB_BACKEND_CPU_KERNELS_H
#define IB_BACKEND_CPU_KERNELS_H

#include "backend/cpu/cpu_bcast.h"
#include "backend/cpu/cpu_internal.h"

/* Hot loops that keep up with memory only when vectorised wider than the baseline x86-64
 * (SSE2) the project compiles for (the Makefile sets no -march, so one build runs on any
 * x86-64) are also built for AVX-512 and AVX2; the loader picks the widest this CPU runs
 * (an ifunc). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef CPU_CLONES
#define CPU_CLONES
#endif

/* ---- elementwise (cpu_kernels_ew.c) ----------------------------------------- */

enum cpu_ew_op {
    CPU_EW_ADD, CPU_EW_SUB, CPU_EW_MUL, CPU_EW_DIV, CPU_EW_MAX, CPU_EW_MIN, CPU_EW_POW,
    CPU_EW_MOD, /* fmod semantics (sign of the dividend), integers: C remainder */
    CPU_EW_EQ, CPU_EW_LT, CPU_EW_GT, CPU_EW_LE, CPU_EW_GE,
    CPU_EW_AND, CPU_EW_OR, CPU_EW_XOR,
    CPU_EW_WHERE, /* in[0] bool condition, in[1], in[2] */
    /* unary */
    CPU_EW_NOT, CPU_EW_ERF, CPU_EW_FLOOR, CPU_EW_CEIL, CPU_EW_SIGN, CPU_EW_HARDSIGMOID,
    CPU_EW_CAST,
};

typedef struct cpu_ew_ctx {
    enum cpu_ew_op op;
    enum ib_dtype dt;  /* dtype of the operands (in[1] for Where) */
    enum ib_dtype odt; /* output dtype */
    int n_in;
    const void *in[CPU_BCAST_MAX_IN];
    void *out;
    cpu_bcast b;
    float alpha, beta; /* HardSigmoid */
} cpu_ew_ctx;

/* Ops and dtypes the kernels implement. */
bool cpu_ew_supported(enum cpu_ew_op op, enum ib_dtype dt, enum ib_dtype odt);
int cpu_ew_run(void *kctx, int threads, ib_err *err);

/* ---- data movement (cpu_kernels_copy.c) ------------------------------------- */

/* out[i0..] = in[sum(i_k * st[k])] over dims: transpose, slice, expand. */
typedef struct cpu_copy_ctx {
    int nd;
    int64_t dims[IB_MAX_DIMS];
    int64_t st[IB_MAX_DIMS]; /* source element strides (may be 0 or negative) */
    size_t esize;
    const void *src;         /* the element at index 0 of the view */
    void *dst;               /* dense row-major */
} cpu_copy_ctx;

/* Collapse dims that are contiguous in both views. */
void cpu_copy_collapse(cpu_copy_ctx *c);
int cpu_copy_run(void *kctx, int threads, ib_err *err);

/* Gather along an axis: out[o, j, i] = data[o, idx[j], i]. */
typedef struct cpu_gather_ctx {
    const void *data;
    const void *idx;
    bool idx64;
    int64_t outer, axis_len, n_idx, inner; /* inner in elements */
    size_t esize;
    void *out;
    const char *node; /* for the out-of-range error */
} cpu_gather_ctx;
int cpu_gather_run(void *kctx, int threads, ib_err *err);

/* inferbench.GatherConcat: y[r] = concat over parts of (plain x_p[r] | table_p[idx_p[r]]). */
typedef struct cpu_gc_part {
    const void *src;  /* plain input [rows, width] or table [table_rows, width] */
    const void *idx;  /* NULL for a plain part */
    bool idx64;
    bool bf16;        /* src is a bf16 copy of a float32 table (BF16 precision) */
    bool q8;          /* src rows are uint8 q[width] + float scale + float bias (INT8):
                       * x = q * scale + bias (row-wise asymmetric, as FBGEMM's 8-bit rows) */
    int64_t table_rows;
    size_t bytes;     /* output bytes of a row: width * element size */
    size_t src_bytes; /* bytes of a source row (bytes, or width * 2 for bf16) */
    size_t offset;    /* bytes into an output row */
} cpu_gc_part;
typedef struct cpu_gc_ctx {
    int64_t rows;
    size_t row_bytes; /* output row */
    void *out;
    const char *node;
    uint32_t n_parts;
    cpu_gc_part part[]; /* n_parts */
} cpu_gc_ctx;
int cpu_gather_concat_run(void *kctx, int threads, ib_err *err);

/* Global average pool (cpu_kernels_gap.c): y[n, c] = mean over the S positions of plane
 * (n, c) of x, held plain [N, C, S] or (blocked) nChw16c [N, ceil(C/16), S, 16]. */
typedef struct cpu_gap_ctx {
    const float *x;
    float *y;
    int64_t N, C, S;
    bool blocked;
} cpu_gap_ctx;
int cpu_gap_run(void *kctx, int threads, ib_err *err);
/* The step for x -> y [N, C] (any shape of N x C elements) of float32 x [N, C, S...]:
 * reads x as the convolution before it left it when that is nChw16c (4-D), else plain.
 * IB_EUNSUPPORTED when x is not float32 of rank >= 3. */
int cpu_gap_compile(cpu_exec *e, cpu_val *x, cpu_val *y, ib_err *err);

/* inferbench.DotInteraction (cpu_kernels_dot.c): per row n of x [N, F*D], y[n, k] = the dot
 * of feature vectors a[k] and b[k] (D floats each) of that row. */
typedef struct cpu_dot_ctx {
    const float *x;
    float *y;
    int64_t N, F, D, K;
    int32_t *a, *b; /* K each: feature indices, validated at compile */
    bool generic;   /* tests: the dot-product form even where the Gram-matrix one runs */
} cpu_dot_ctx;
int cpu_dot_interaction_run(void *kctx, int threads, ib_err *err);

/* ArgMax/ArgMin over the middle dim of [outer, len, inner] -> int64. */
typedef struct cpu_arg_ctx {
    const float *x;
    int64_t outer, len, inner;
    bool is_max, last; /* select_last_index */
    int64_t *out;
} cpu_arg_ctx;
int cpu_arg_run(void *kctx, int threads, ib_err *err);

/* ---- InstanceNormalization (cpu_kernels_norm.c) ------------------------------------ */

enum { CPU_INORM_NONE, CPU_INORM_RELU, CPU_INORM_LEAKY };

/* y = act((x - mean) * scale / sqrt(var + eps) + bias) per (n, c) over the S voxels; x and
 * y float32 or (bf16) bfloat16, plain [N, C, S] or (cl) channels-last [N, S, C]. The
 * buffers are private blocks of the exec, sized for max_threads. */
typedef struct cpu_inorm_ctx {
    const void *x;
    void *y;
    bool bf16, cl;
    int64_t N, C, S;
    const float *scale, *bias; /* C each */
    float eps, alpha;          /* alpha: LeakyRelu */
    int act;                   /* CPU_INORM_* */
    int max_threads;
    double *part;              /* cl: max_threads * 2C partial sums */
    float *fpart;              /* cl: max_threads * 2C block sums */
    float *tmp;                /* max_threads * tmp_per_thread staging floats */
    int64_t tmp_per_thread;    /* cpu_inorm_scratch_floats */
    float *mu, *a;             /* cl: N*C mean, scale / sqrt(var + eps) */
} cpu_inorm_ctx;
int cpu_inorm_run(void *kctx, int threads, ib_err *err);
/* Staging floats one thread needs. */
size_t cpu_inorm_scratch_floats(bool cl, int64_t C);

/* ---- LSTM recurrence (cpu_kernels_rnn.c) ------------------------------------------- */

/* One direction of an ONNX LSTM (default activations, no peepholes or clip) from the
 * precomputed input projections G = X W^T + Wb + Rb [T, N, 4H] (gates i, o, f, c):
 * Y [T, 1, N, H], Y_h and Y_c [1, N, H] (each may be NULL). */
typedef struct cpu_lstm_ctx {
    int64_t T, N, H;
    bool reverse;
    const float *G;
    const float *R;        /* [4H, H], ONNX layout */
    const float *Rp;       /* R packed by cpu_lstm_pack (cpu_kernels_rnn512.c), or NULL */
    float *ht;             /* with Rp, private: 2 * ceil(N/16) * 16 * H (h k-major, twice) */
    const float *h0, *c0;  /* [N, H] or NULL (zeros) */
    float *y, *yh, *yc;
    float *h;              /* private: 2 * N * H (h_{t-1}, h_t) */
    float *c;              /* private: N * H */
} cpu_lstm_ctx;
int cpu_lstm_run(void *kctx, int threads, ib_err *err);
/* The packed AVX-512 recurrence (cpu_kernels_rnn512.c), for batches above
 * OWN_LSTM_MAX_BATCH: usable when H is a multiple of 16 and this CPU has AVX-512; Rp is
 * H * 4H floats; a step computes hidden-unit blocks [jb0, jb1) of 16 for every batch row. */
bool cpu_lstm_packed_ok(int64_t H);
void cpu_lstm_pack(const float *R, int64_t H, float *Rp);
/* h [N, H] -> ht [ceil(N/16)][H][16] (rows past N zero): the GEMM's broadcast operand */
void cpu_lstm_pack_h(const float *h, int64_t N, int64_t H, float *ht);
/* One step: h_{t-1} as htp (k-major); writes h_t to hn (row-major) and htn (k-major). */
void cpu_lstm_packed_step(const cpu_lstm_ctx *k, int64_t t, const float *htp, float *hn,
                          float *htn, int64_t jb0, int64_t jb1);

/* ---- fused multi-head attention (cpu_kernels_attn.c) --------------------------------- */

/* inferbench.MultiHeadAttention at float32: q [N, S, h*D], k [N, Sk, h*D], v [N, Sk, h*Dv],
 * mask (or NULL) read at n*mst[0] + h*mst[1] + i*mst[2] + j*mst[3], y [N, S, h*Dv]. */
typedef struct cpu_mha_ctx {
    const float *q, *k, *v, *mask;
    float *y;
    int64_t N, h, S, Sk, D, Dv;
    int64_t mst[4];     /* mask element strides over [N, h, S, Sk], 0 where broadcast */
    float scale;
    int max_threads;
    float *scratch;     /* max_threads * cpu_mha_scratch_floats(D, Dv, Sk) */
} cpu_mha_ctx;
int cpu_mha_run(void *kctx, int threads, ib_err *err);
size_t cpu_mha_scratch_floats(int64_t D, int64_t Dv, int64_t Sk);
/* This CPU runs the fused kernel (AVX-512F), for q's and k's rows ldq = h*D floats apart. */
bool cpu_mha_fused_ok(int64_t ldq);

/* ---- Winograd 3x3x3 convolution (cpu_kernels_wino.c) -------------------------------- */

#define WINO_TB 16 /* tiles (2x2x2 outputs) per block: one row of them, or its part */

/* y = conv3d(x, w) + bias, kernel 3x3x3, stride 1, pads 1, channels-last float32 (or,
 * bf16, bfloat16): x [N, D, H, W, C], y [N, D, H, W, M]; C and M multiples of 16. */
typedef struct cpu_wino_ctx {
    const void *x;
    void *y;
    const void *u;      /* cpu_wino_weights: float [64, C, M]; bf16: cpu_wino_weights_bf16 */
    const float *bias;  /* M, or NULL */
    int64_t N, D, H, W, C, M;
    bool bf16;
    int max_threads;
    float *scratch;     /* max_threads * cpu_wino_scratch_floats(C, M) */
    bool generic;       /* the portable micro-kernels instead of AVX-512's */
} cpu_wino_ctx;
int cpu_wino_run(void *kctx, int threads, ib_err *err);
size_t cpu_wino_scratch_floats(int64_t C, int64_t M);
/* Transformed filters u [64, C, M] of ONNX weights w [M, C, 3, 3, 3]. */
void cpu_wino_weights(const float *w, int64_t M, int64_t C, float *u);
/* The same in bfloat16, packed [64, C / 2, M, 2] (pairs of input channels together). */
void cpu_wino_weights_bf16(const float *w, int64_t M, int64_t C, uint16_t *u);
/* This CPU runs the AVX-512 micro-kernel; ... and the bfloat16 one (AVX512-BF16). */
/* This CPU runs AVX-512F (the Winograd, packed-LSTM and Gram-matrix micro-kernels). */
bool cpu_avx512f(void);
bool cpu_wino_avx512(void);
bool cpu_wino_avx512_bf16(void);

#endif
