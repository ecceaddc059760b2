/*
 * cuda_kernels.h - the extern "C" launchers of src/backend/cuda/kernels/ (.cu files),
 * callable from C11. Every launcher enqueues on `stream`, returns the
 * cudaError_t of the launch as an int (0 = cudaSuccess) and never
 * synchronises. Tensors are float32, plain row-major, unless the name says
 * otherwise; element counts are int64.
 */
#ifndef IB_BACKEND_CUDA_KERNELS_H
#define IB_BACKEND_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *ibk_stream; /* = cudaStream_t */

#define IBK_MAX_DIMS 8

/* A strided view: out index i (row-major over dims) reads element
 * sum(coord[d] * stride[d]) of its source (stride 0 = broadcast). */
typedef struct ibk_view {
    int32_t ndim;
    int64_t dims[IBK_MAX_DIMS];
    int64_t sa[IBK_MAX_DIMS]; /* strides of source a (elements) */
    int64_t sb[IBK_MAX_DIMS]; /* strides of source b (binary ops only) */
} ibk_view;

enum ibk_unary_op {
    IBK_RELU, IBK_LEAKY_RELU, IBK_SIGMOID, IBK_TANH, IBK_EXP, IBK_LOG, IBK_SQRT, IBK_ABS,
    IBK_NEG, IBK_RECIP, IBK_ERF, IBK_GELU_ERF, IBK_GELU_TANH, IBK_CLIP, IBK_COPY, IBK_FLOOR,
    IBK_CEIL, IBK_ELU, IBK_SOFTPLUS, IBK_HARD_SIGMOID, IBK_HARD_SWISH, IBK_POW_SCALAR,
    IBK_UNARY_COUNT
};

enum ibk_binary_op { IBK_ADD, IBK_SUB, IBK_MUL, IBK_DIV, IBK_MAX, IBK_MIN, IBK_POW, IBK_BINARY_COUNT };

enum ibk_reduce_op { IBK_RSUM, IBK_RMEAN, IBK_RMAX, IBK_RMIN, IBK_RSUMSQ, IBK_RL2, IBK_RL1 };

/* Element types of the kernels that take more than float32 (the 16-bit chains). */
enum ibk_float_t { IBK_T_F32, IBK_T_F16, IBK_T_BF16 };

/* y = op(x) elementwise (a, b: LeakyRelu/Elu alpha, Clip min/max, HardSigmoid
 * alpha/beta, Pow exponent). In place (x == y) is allowed. */
int ibk_unary(ibk_stream s, int op, const float *x, float *y, int64_t n, float a, float b);
/* y[i] = op(a[view_a(i)], b[view_b(i)]) over v->dims (numpy broadcasting). */
int ibk_binary(ibk_stream s, int op, const float *a, const float *b, float *y, const ibk_view *v);
/* y[i] = x[view_a(i)] for elements of esize bytes (1, 2, 4 or 8): Transpose,
 * Expand, broadcast fills, Slice with steps. */
int ibk_strided_copy(ibk_stream s, const void *x, void *y, const ibk_view *v, int esize);
/* Row softmax over cols: y = softmax(scale * x + mask) (log-softmax when
 * logsm). mask may be NULL; else its element for (row r, col j) is
 * mask[view_a(r) + j * mask_col_stride] where v->dims are the row dims. */
int ibk_softmax(ibk_stream s, const float *x, float *y, int64_t rows, int64_t cols, float scale,
                const float *mask, const ibk_view *v, int64_t mask_col_stride, int logsm);
/* LayerNorm over the last `cols` values of each row; gamma/beta have cols
 * elements (beta may be NULL). */
int ibk_layernorm(ibk_stream s, const float *x, const float *gamma, const float *beta, float *y,
                  int64_t rows, int64_t cols, float eps);
/* y[o, i] = reduce_r x[o, r, i] for x viewed as [outer, red, inner]. */
int ibk_reduce(ibk_stream s, int op, const float *x, float *y, int64_t outer, int64_t red,
               int64_t inner);
/* y[o, i, :] = data[o, idx[i], :] (negative indices count from the end; an
 * index outside [-axis_n, axis_n) yields zeros). inner_bytes per row. */
int ibk_gather(ibk_stream s, const void *data, const void *idx, int idx_is_64, void *y,
               int64_t outer, int64_t axis_n, int64_t n_idx, int64_t inner_bytes);

/* y[n, c, i] = act(y[n, c, i] + bias[c] + z[n, c, i]) for y viewed as
 * [N, C, inner] (bias, z may be NULL); act is an ibk_unary_op (IBK_COPY =
 * none) with parameters a, b. The convolution epilogue. */
int ibk_bias_act(ibk_stream s, float *y, const float *bias, const float *z, int64_t N, int64_t C,
                 int64_t inner, int act, float a, float b);

/* NHWC float16 conv islands (nhwc_fp16). y16[n, p, c] = half(x[n, c, p]) for x float32
 * [N, C, HW] (also a KCRS filter into KRSC, with N = K). */
int ibk_nchw_to_nhwc_f16(ibk_stream s, const float *x, void *y16, int64_t N, int64_t C, int64_t HW);
/* y16[i] = x[i] as float16 (bf16 0) or bfloat16 (bf16 1), rounded to nearest even, i < n:
 * a matmul's 16-bit operands at fp16/bf16 (cuda_matmul.c) and their weights. */
int ibk_f32_to_16(ibk_stream s, int bf16, const float *x, void *y16, int64_t n);
/* The 16-bit chains (ib_kernels.cu; cuda_half.c): x, y, a, b of the given ibk_float_t each,
 * float32 arithmetic. LayerNorm over the last cols of each row (gamma/beta float32, beta may be
 * NULL); y = a + b elementwise over n; y = act(y) in place for act IBK_RELU, IBK_GELU_ERF or
 * IBK_GELU_TANH. */
int ibk_layernorm_t(ibk_stream s, const void *x, int xt, const float *gamma, const float *beta,
                    void *y, int yt, int64_t rows, int64_t cols, float eps);
int ibk_add_t(ibk_stream s, const void *a, int at, const void *b, int bt, void *y, int yt,
              int64_t n);
int ibk_act_t(ibk_stream s, int op, void *y, int t, int64_t n);
/* 8-bit products (cuda_matmul_q8.c): y8[i] = clamp(rint(x[i] * scale), -127, 127) as int8,
 * or e4m3(x[i] * scale) saturated to +-448 (fp8, one byte each); y [rows, cols] = act(acc *
 * inv_sx * inv_sw[col] + bias[col]) from the products' int32 (acc_f32 0) or float32 (acc_f32
 * 1) accumulators (act an ibk_unary_op, IBK_COPY = none; bias may be NULL); x and y of type
 * xt / yt (ibk_float_t: a 16-bit chain's, cuda_half.c). */
int ibk_to_s8(ibk_stream s, const void *x, int xt, void *y8, float scale, int64_t n);
int ibk_to_e4m3(ibk_stream s, const void *x, int xt, void *y8, float scale, int64_t n);
int ibk_dequant_bias_act(ibk_stream s, const void *acc, int acc_f32, void *y, int yt,
                         const float *inv_sw, float inv_sx, const float *bias, int64_t rows,
                         int64_t cols, int act);
/* int8 convolutions (cuda_conv_i8.c): y8 [N, HW, C] = clamp(rint(x [N, C, HW] * scale), -127,
 * 127); the epilogue v = act(acc [N, HW, C] * inv_sx * inv_sw[c] + bias[c] + z) with z float32
 * [N, C, HW], or (z_q8) int8 [N, HW, C] times inv_sz, written as y float32 [N, C, HW], or
 * (y_q8) int8 [N, HW, C] = clamp(rint(v * sy), -127, 127) (bias, z may be NULL; act an
 * ibk_unary_op with parameters a, b); and y [N, C, HW] = x8 [N, HW, C] * inv_s, an int8 chain's
 * value for a step that reads float32. */
int ibk_nchw_to_nhwc_s8(ibk_stream s, const float *x, void *y8, float scale, int64_t N, int64_t C,
                        int64_t HW);
/* y8[n, p, c] = e4m3(x[n, c, p] * scale) (satfinite, as ibk_to_e4m3): an fp8 convolution's X */
int ibk_nchw_to_nhwc_e4m3(ibk_stream s, const float *x, void *y8, float scale, int64_t N,
                          int64_t C, int64_t HW);
int ibk_epi_i8conv(ibk_stream s, const float *acc, void *y, int y_q8, float sy,
                   const float *inv_sw, float inv_sx, const float *bias, const void *z, int z_q8,
                   float inv_sz, int64_t N, int64_t C, int64_t HW, int act, float a, float b);
int ibk_nhwc_s8_to_nchw(ibk_stream s, const void *x8, float inv_s, float *y, int64_t N, int64_t C,
                        int64_t HW);
/* Comparisons and logic (bool = one byte 0/1), numpy broadcast through v (sa, sb).
 * ibk_compare: y = a OP b for op 0 Equal, 1 Less, 2 Greater, 3 LessOrEqual, 4 GreaterOrEqual
 * over dtype 0 float32, 1 int64, 2 int32 (NaN compares false). ibk_logic: y = a OP b for op
 * 0 And, 1 Or, 2 Xor over bool, and op 3 Not (y = !a; b unused). */
enum { IBK_CMP_EQ, IBK_CMP_LT, IBK_CMP_GT, IBK_CMP_LE, IBK_CMP_GE };
enum { IBK_LOGIC_AND, IBK_LOGIC_OR, IBK_LOGIC_XOR, IBK_LOGIC_NOT };
int ibk_compare(ibk_stream s, int op, int dtype, const void *a, const void *b, uint8_t *y,
                const ibk_view *v);
int ibk_logic(ibk_stream s, int op, const uint8_t *a, const uint8_t *b, uint8_t *y,
              const ibk_view *v);
/* Where: y = c ? x : z, elements of esize bytes (1, 2, 4, 8); c, x, z broadcast with the
 * strides sc, v->sa, v->sb. */
int ibk_where(ibk_stream s, const uint8_t *c, const int64_t *sc, const void *x, const void *z,
              void *y, int esize, const ibk_view *v);

/* inferbench.WindowAccumulate (ir/ops/accum.c): y = acc (copied when y != acc), then for each
 * element p of the r0 x r1 x r2 window at (at[0], at[1], at[2]) of the S0 x S1 x S2 volume
 * y[c, at + p] += win[c, p] * g[p] for c < C and y[C, at + p] += g[p], the product rounded
 * before the sum; at is read on the device, and a window outside the volume adds nothing. */
int ibk_window_acc(ibk_stream s, const float *acc, const float *win, const float *g,
                   const int64_t *at, float *y, int64_t C, const int64_t *S, const int64_t *r);

/* y[j, d] = float(table16[idx[j], d]) for a float16 table [rows, dim] (negative indices
 * from the end; out of range: zeros), the embedding lookup over a table held in float16. */
int ibk_gather_f16_rows(ibk_stream s, const void *table16, const void *idx, int idx_is_64,
                        float *y, int64_t rows, int64_t n_idx, int64_t dim);
/* An int8 session's embedding table: x float32 [rows, width] -> out [rows, width + 8], each
 * row as ib_q8_row (src/backend/backend.h) makes it, the same float operations with explicit
 * roundings, so the same bytes (a warp a row). *bad (device memory, set to 0 here) becomes
 * the first row holding a NaN or an infinity, + 1. */
int ibk_table_q8_rows(ibk_stream s, const float *x, void *out, int64_t rows, int64_t width,
                      long long *bad);
/* y[j, d] = q * scale + bias (the product rounded first) of row idx[j] of a row-wise 8-bit
 * table [rows, dim + 8] (negative indices from the end; out of range: zeros). */
int ibk_gather_q8_rows(ibk_stream s, const void *table, const void *idx, int idx_is_64,
                       float *y, int64_t rows, int64_t n_idx, int64_t dim);
/* The conv epilogue over an NHWC float16 result acc [N, HW, C]: v = acc + bias[c] (bias may
 * be NULL) + z (z_kind 0 none, 1 NHWC float16, 2 NCHW float32), then the activation (as
 * ibk_bias_act), written to out as NHWC float16 (out_f32 0; out may be acc) or NCHW
 * float32 (out_f32 1). */
int ibk_epi_nhwc(ibk_stream s, const void *acc, void *out, int out_f32, const float *bias,
                 const void *z, int z_kind, int64_t N, int64_t C, int64_t HW, int act, float a,
                 float b);

/* y[o, i] = index of the max (first, or last when select_last) over r of
 * x[o, r, i], as int64 (ArgMax; ArgMin when is_min). */
int ibk_argmax(ibk_stream s, const float *x, int64_t *y, int64_t outer, int64_t red, int64_t inner,
               int select_last, int is_min);

/* 2-D pooling over NCHW x [nc planes of h x w] into y [nc, oh, ow]: max, or
 * average counting the padding (count_pad: window cells inside the padded
 * extent, as the reference kernel counts) or not. Pads may differ per side
 * (top/left pt/pl, bottom/right pb/pr); dilations dh/dw. */
typedef struct ibk_pool {
    int64_t nc, h, w, oh, ow;
    int32_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
    int32_t is_max, count_pad;
} ibk_pool;
int ibk_pool2d(ibk_stream s, const float *x, float *y, const ibk_pool *p);

/* InstanceNormalization over planes = N x C planes of S elements of x (plain [N, C, S]):
 * y = act((x - mean) / sqrt(var + eps) * scale[c] + bias[c]) with the plane's mean and
 * (biased) variance accumulated in double; act is IBK_COPY, IBK_RELU or IBK_LEAKY_RELU
 * (alpha). stats: a device block of 2 x planes doubles (zeroed here). In place allowed. */
int ibk_instance_norm(ibk_stream s, const float *x, const float *scale, const float *bias,
                      float *y, double *stats, int64_t planes, int64_t C, int64_t S, float eps,
                      int act, float alpha);

/* One LSTM step over B rows of H units: gates = g + r ([B, 4H] each, ONNX gate order i, o,
 * f, c: the input projection with both biases, and h_prev R^T), c_next = sigmoid(f) *
 * c_prev + sigmoid(i) * tanh(c~), h_next = sigmoid(o) * tanh(c_next), also into y when
 * not NULL. c_prev NULL = zeros; c_prev == c_next allowed. */
int ibk_lstm_cell(ibk_stream s, const float *g, const float *r, const float *c_prev,
                  float *c_next, float *h_next, float *y, int64_t B, int64_t H);

/* inferbench.MultiHeadAttention at fp16/bf16 on the tensor cores (ib_attn.cu). The shapes:
 * q [N, S, h*D], k [N, Sk, h*D], v [N, Sk, h*Dv] float32; Sp, Skp, Dp, Dvp the padded
 * extents (multiples of 16) of the 16-bit copies; the mask's element for (n, head, i, j) is
 * mask[n*ms[0] + head*ms[1] + i*ms[2] + j*ms[3]] (strides 0 where broadcast). */
typedef struct ibk_mha {
    int64_t N, h, S, Sk, D, Dv;
    int64_t Sp, Skp, Dp, Dvp;
    int64_t ms[4];
    float scale;
} ibk_mha;
/* y16 [N*h, Lp, Dp] (float16, or bfloat16 when bf16) = x [N, L, h*D] (ibk_float_t xt) split by
 * head, zero-padded. */
int ibk_mha_pack(ibk_stream s, int bf16, const void *x, int xt, void *y16, int64_t N, int64_t L,
                 int64_t h, int64_t D, int64_t Lp, int64_t Dp);
/* On the current device: how many warps of 16 queries a block holds in shared memory
 * (*warps 0: the shapes do not fit, use another path) and the bytes to launch with; also
 * raises the kernel's dynamic shared memory limit to that. */
int ibk_mha_prepare(const ibk_mha *a, int bf16, int *warps, size_t *smem_bytes);
/* y [N, S, h*Dv] (ibk_float_t yt) = softmax(scale q k^T + mask) v from the packed 16-bit q, k,
 * v. */
int ibk_mha_run(ibk_stream s, int bf16, const void *q16, const void *k16, const void *v16,
                const float *mask, void *y, int yt, const ibk_mha *a, int warps,
                size_t smem_bytes);

/* inferbench.SSDPostprocess (ib_ssd.cu): loc [N, 4, A], conf [N, C, A], anchors [A, 4] ->
 * rows [N, max_out, 6] and count [N] int64, as ir/ops/ssd_post.c. A and (C - 1) * top at
 * most 16384 (the sorts' shared memory). */
typedef struct ibk_ssd {
    int64_t N, C, A, top, max_out;
    float scale_xy, scale_wh, score_thr, nms_iou;
} ibk_ssd;
/* Device scratch bytes for a (256-byte aligned). */
size_t ibk_ssd_scratch_bytes(const ibk_ssd *a);
/* On the current device: *fits 0 when the sorts do not fit in shared memory; else raises the
 * kernels' dynamic shared memory limits. */
int ibk_ssd_prepare(const ibk_ssd *a, int *fits);
int ibk_ssd_run(ibk_stream s, const float *loc, const float *conf, const float *anchors,
                float *rows, int64_t *count, void *scratch, const ibk_ssd *a);

/* Element types of ibk_cast. */
enum ibk_dtype { IBK_F32, IBK_F64, IBK_I64, IBK_I32, IBK_I8, IBK_U8, IBK_BOOL };
/* y = (ydt) x for n elements, by the reference's rules (ops/cast.c): int ->
 * int wraps, float -> int truncates into a saturated int64 (NaN -> 0) and
 * then wraps, anything -> bool is x != 0. */
int ibk_cast(ibk_stream s, const void *x, int xdt, void *y, int ydt, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
