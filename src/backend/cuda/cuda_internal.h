/*
 * cuda_internal.h - shared internals of the cuda backend (src/backend/cuda):
 * the context (one device, one stream, the cuBLASLt and cuDNN handles, the
 * pinned staging buffer, the weight cache), the compiled subgraph ("exec":
 * steps enqueued in order on the stream, optionally replayed as one CUDA
 * Graph) and the helpers the op files use. Not a public header.
 *
 * Layout: every value is held in plain row-major layout of its graph dtype
 * (NCHW for convolutions), directly in its planned binding, so boundary
 * values need no conversion and plan_bytes is the plain size. Constants are
 * uploaded once per context (refcounted cache keyed by host address).
 */
#ifndef IB_BACKEND_CUDA_INTERNAL_H
#define IB_BACKEND_CUDA_INTERNAL_H

#include "backend/backend_impl.h"
#include "backend/cuda/cuda_sys.h"
#include "backend/cuda/kernels/cuda_kernels.h"
#include "base/thread.h"
#include "base/vec.h"

#define CU_STAGING_BYTES (8u << 20)    /* pinned host staging for tensor_set/get (two halves) */
#define CU_STAGING_DIRECT (64u << 10)  /* pageable copies up to this size skip the staging */
#define CU_LT_WORKSPACE (32u << 20)    /* cuBLASLt workspace per context */
#define CU_CONV_WS_MAX ((size_t)256 << 20) /* largest cuDNN workspace a convolution may ask */

/* How a constant is held on the device: as on the host, a 2-D conv filter as NHWC float16
 * (KRSC) for the nhwc_fp16 islands, or a float32 tensor as float16 or bfloat16 in its layout
 * (embedding tables at fp16; a matmul's constant operand at fp16 / bf16), an embedding table
 * as row-wise 8-bit rows at int8, or a matmul's constant
 * B quantised per column to int8 for the int8 products (from B [K, N], or [N, K] when
 * transposed: cuda_matmul_q8.c; or to fp8 e4m3 for the fp8 products), or a conv filter as
 * KRSC int8 per output channel (cuda_conv_i8.c) or e4m3 (cuda_conv_f8.c). */
enum cu_wfmt {
    CU_W_PLAIN,
    CU_W_F16_KRSC,
    CU_W_F16,
    CU_W_BF16,
    CU_W_S8_COLS,
    CU_W_S8_ROWS,
    CU_W_S8_KRSC,
    CU_W_E4M3_COLS,
    CU_W_E4M3_ROWS,
    CU_W_E4M3_KRSC,
    CU_W_U8_ROWWISE /* an int8 session's embedding table: [rows, dim + 8] (ib_q8_row) */
};

typedef struct cu_wref {
    const void *host;
    int fmt;
} cu_wref;

typedef struct cu_weight {
    const void *host;  /* key: the constant's host data, and fmt */
    int fmt;
    size_t nbytes;
    void *dev;
    uint32_t refs;     /* compiled subgraphs using it */
} cu_weight;

/* A convolution algorithm cuDNN timed for one geometry (cudnnFindConvolutionForwardAlgorithm),
 * kept per context so every variant and repeated layer reuses it. */
typedef struct cu_algo {
    int key[40];
    int algo;
    int math; /* the cudnnMathType_t it runs with (what its precision is) */
} cu_algo;

/* A cuBLASLt algorithm timed for one matmul description (cuda_matmul.c lt_timed), kept per
 * context like cu_algo. */
typedef struct cu_lt_algo {
    int64_t key[16];
    cublasLtMatmulAlgo_t algo;
} cu_lt_algo;

/* The weights of one device, shared by the contexts created with a peer on that device
 * (ib_backend_config.peer: the harness's workers on one GPU): one upload and one device
 * copy per constant for all of them. Refcounted by the contexts; its lock guards weights. */
typedef struct cu_store {
    ib_mutex mu;
    int refs;
    int device;
    IB_VEC(cu_weight) weights;
} cu_store;

typedef struct cu_ctx {
    int device;
    enum ib_precision precision;
    bool nhwc_fp16;      /* ib_backend_config.nhwc_fp16 */
    bool half_chains;    /* ib_backend_config.half_chains (cuda_half.c) */
    char name[256];
    int sm_major, sm_minor, sm_count;
    size_t total_mem;
    cudaStream_t stream;
    cublasLtHandle_t lt;
    cudnnHandle_t dnn;
    void *lt_ws;         /* CU_LT_WORKSPACE device bytes */
    void *staging;       /* CU_STAGING_BYTES pinned host bytes (NULL: pageable copies) */
    cudaEvent_t staged[2]; /* recorded after the DMA of each staging half */
    cu_store *store;     /* this device's weights (possibly shared with peers) */
    IB_VEC(cu_algo) algos;
    IB_VEC(cu_lt_algo) lt_algos;
} cu_ctx;

typedef struct cu_val {
    ib_value_id id;
    ib_tensor_desc desc;
    bool half;          /* held as NHWC float16 (an nhwc_fp16 island's inner value) */
    bool h16;           /* held as row-major float16 (bfloat16 at bf16): a 16-bit chain's inner
                         * value (cuda_half.c) */
    bool q8;            /* held as int8 NHWC at its range's scale: an int8 chain's value between
                         * convolutions (cuda_conv_i8.c) */
    bool has_range;     /* the int8 calibration's range of the value (binding range_min/max) */
    float rmin, rmax;
    void *dev;          /* device address of the value (binding or uploaded constant) */
    const void *host;   /* constant data on the host, else NULL */
} cu_val;

typedef struct ib_backend_exec cu_exec;

/* A step: enqueue work on e->ctx->stream. kctx is owned by the step and
 * released with kfree (NULL = ib_free). */
typedef int (*cu_step_fn)(cu_exec *e, void *kctx, ib_err *err);

typedef struct cu_step {
    cu_step_fn fn;
    void *kctx;
    void (*kfree)(void *kctx);
    const ib_node *node;
    const char *kind;   /* what the profile calls it ("cublaslt", "cudnn", ...; NULL: "kernel") */
} cu_step;

struct ib_backend_exec {
    cu_ctx *ctx;
    const ib_graph *graph;
    enum ib_precision precision;
    cu_val *vals;
    uint32_t n_vals;
    int32_t *val_of;            /* graph value id -> index in vals, -1 if not bound */
    IB_VEC(cu_step) steps;
    IB_VEC(void *) blocks;      /* private device blocks (cudaFree at the end) */
    IB_VEC(cu_wref) wrefs;      /* weight-store keys this exec holds */
    size_t ws_need;             /* cuDNN workspace bytes the steps need */
    void *ws;                   /* device workspace (ws_need bytes) */
    void *att;                  /* attention scratch shared by the attention nodes (cu_att_block) */
    size_t att_bytes;
    void *cvt;                  /* matmul inputs converted (cu_cvt), shared by the matmuls */
    size_t cvt_bytes;
    int64_t cvt_val;            /* the value the last conversion step wrote (-1: none) ... */
    int cvt_fmt;                /* ... in this format and scale, at cvt_at */
    float cvt_scale;
    void *cvt_at;
    bool int8;                  /* an int8 session: precision is FP16 but for int8 products */
    bool fp8;                   /* an fp8 session: precision is FP16 but for fp8 products */
    void *i32;                  /* int32 or float32 accumulators of the 8-bit matmuls, shared
                                 * (cuda_matmul_q8.c) */
    size_t i32_bytes;
    void *f32;                  /* NHWC float results of the int8 convs, shared (cuda_conv_i8.c) */
    size_t f32_bytes;
    uint32_t runs;              /* graph_run calls so far */
    cudaGraphExec_t gexec;      /* the steps captured as one CUDA Graph */
    bool graph_failed;          /* capture did not work: launch steps directly */
    char graph_why[256];        /* ... and why (cu_replay_status) */
    int64_t *prof_ns;           /* profiling: per-step device time summed (NULL = off) */
    uint64_t prof_runs;
    cudaEvent_t *ev;            /* profiling: steps + 1 events, created on first use */
    const ib_node *cur;         /* node being compiled (errors) */
    /* the precision of the products planned for cur and of every product node so far
     * (backend ABI 10, cu_precision_read) */
    ib_prec_notes precs;
};

/* ---- errors (cuda_backend.c) ---------------------------------------------- */

/* Map a CUDA runtime / cuBLASLt / cuDNN status of `what` to an ib_err naming
 * the node being compiled or run (e may be NULL). OOM becomes IB_ENOMEM. */
int cu_check_rt(cu_exec *e, ib_err *err, cudaError_t st, const char *what);
int cu_check_lt(cu_exec *e, ib_err *err, cublasStatus_t st, const char *what);
int cu_check_dnn(cu_exec *e, ib_err *err, cudnnStatus_t st, const char *what);
int cu_fail(cu_exec *e, ib_err *err, int code, const char *fmt, ...) IB_PRINTF(4, 5);
/* Make the context's device current on the calling thread. */
int cu_enter(cu_ctx *c, ib_err *err);

/* ---- NHWC float16 conv islands (cuda_conv.c) ------------------------------- */

/* With nhwc_fp16 at fp16 (not int8): mark the values held as NHWC float16 (cu_val.half), after
 * the values are bound and before the nodes compile. */
void cu_conv_mark_islands(cu_exec *e, const ib_backend_subgraph *sg);
/* In an int8 session: mark the values held as int8 NHWC between int8 convolutions (cu_val.q8,
 * cuda_conv_i8.c), at the same point. */
void cu_conv_mark_q8(cu_exec *e, const ib_backend_subgraph *sg);
/* Whether n is a Conv or an inferbench.FusedConv (what comp_conv compiles). */
bool cu_is_conv_node(const ib_node *n);
/* What both markings share (cuda_conv.c), per e->vals index: 1 for a value a conv `takes` makes,
 * that only such convs read (as X or as the residual Z) and that neither crosses the
 * subgraph's edge nor is a constant, else 0; an array the caller frees, NULL when out of
 * memory. */
uint8_t *cu_conv_chain_values(cu_exec *e, const ib_backend_subgraph *sg,
                              bool (*takes)(cu_exec *e, const ib_node *n));

/* ---- weights (cuda_backend.c) --------------------------------------------- */

/* Device copy of constant host data (uploaded on first use, refcounted). */
int cu_weight_get(cu_ctx *c, const void *host, size_t nbytes, void **dev, ib_err *err);
/* The float32 KCRS filter at host ([K, C, RS]) as NHWC float16 (KRSC), converted on the
 * device once per store; released with cu_weight_put(c, host, CU_W_F16_KRSC). */
int cu_weight_get_f16_krsc(cu_ctx *c, const void *host, int64_t K, int64_t C, int64_t RS,
                           void **dev, ib_err *err);
/* The float32 [rows, dim] table at host as float16, same layout (CU_W_F16). */
int cu_weight_get_f16(cu_ctx *c, const void *host, int64_t rows, int64_t dim, void **dev,
                      ib_err *err);
/* The float32 [rows, dim] table at host as row-wise 8-bit rows [rows, dim + 8] (CU_W_U8_ROWWISE:
 * the bytes ib_q8_row makes, quantised on the device); a row holding a NaN or an infinity is
 * IB_EINVAL naming it. */
int cu_weight_get_q8_rows(cu_ctx *c, const void *host, int64_t rows, int64_t dim, void **dev,
                          ib_err *err);
/* The float32 constant of n elements at host as float16 (bf16 false, CU_W_F16) or bfloat16
 * (CU_W_BF16), same layout. */
int cu_weight_get_16(cu_ctx *c, const void *host, int64_t n, bool bf16, void **dev, ib_err *err);
/* A device form of the constant at host that fill(user, dst) makes on the host (nbytes), kept
 * in the store under (host, fmt) and uploaded once per device. */
int cu_weight_get_derived(cu_ctx *c, const void *host, int fmt, size_t nbytes,
                          void (*fill)(void *user, void *dst), void *user, void **dev,
                          ib_err *err);
void cu_weight_put(cu_ctx *c, const void *host, int fmt);
/* Hold (host, fmt), which the caller got from the store, in e's list, released at graph_free;
 * on failure the store's reference is given back here. */
int cu_exec_hold_weight(cu_exec *e, const void *host, int fmt, ib_err *err);
/* Give back e's hold on (host, fmt) now (no step of e may use it). */
void cu_exec_release_weight(cu_exec *e, const void *host, int fmt);

/* ---- compile helpers (cuda_exec.c) ---------------------------------------- */

cu_val *cu_in(cu_exec *e, const ib_node *n, uint32_t i);  /* NULL when absent */
cu_val *cu_out(cu_exec *e, const ib_node *n, uint32_t i); /* NULL when absent */
/* A private device block of `bytes` (freed with the exec). */
int cu_alloc(cu_exec *e, size_t bytes, void **out, ib_err *err);
/* A scratch block of at least `bytes` that steps of the exec share (they run one after another
 * on one stream): *blk, of *have bytes; a larger request allocates a new one, and the steps
 * planned before keep the one they were given. cu_att_block: the attention nodes' (e->att). */
int cu_shared_block(cu_exec *e, void **blk, size_t *have, size_t bytes, void **out, ib_err *err);
int cu_att_block(cu_exec *e, size_t bytes, void **out, ib_err *err);
/* Append a step; takes ownership of kctx (also on failure). */
int cu_add_step(cu_exec *e, cu_step_fn fn, void *kctx, void (*kfree)(void *), ib_err *err);
/* Name the last added step's kind for the profile (string literal). */
void cu_step_kind(cu_exec *e, const char *kind);
/* Reserve cuDNN workspace bytes for a step (read e->ws at run time). */
void cu_need_ws(cu_exec *e, size_t bytes);
/* Row-major strides (elements) of d, into st[0..ndim). */
void cu_strides(const ib_tensor_desc *d, int64_t *st);

/* ---- matmuls (cuda_matmul.c) ----------------------------------------------- */

/* Row-major Y = alpha op(A) op(B) [+ beta Y] [+ bias] [relu], batched. */
typedef struct cu_mm_geom {
    int64_t M, N, K, batch;
    bool ta, tb;
    int64_t sa, sb, sy; /* batch strides in elements (0 = broadcast) */
    const float *a, *b, *bias;
    float *y;
    float alpha, beta; /* beta != 0: Y already holds the C term */
    bool relu;
    /* the node's Gelu (IBK_GELU_ERF / IBK_GELU_TANH; 0 none), which Lt's GELU epilogue (the tanh
     * form, issue 24) may take at fp16 / bf16; the exact kernel after it otherwise */
    int gelu;
    /* 16-bit operands (fp16 / bf16 sessions, a constant B): A and B as float16 (bfloat16 when
     * bf16) at a16 / b16, Y float32 (or 16-bit when y16: a 16-bit chain's, with a 16-bit
     * bias), CUBLAS_COMPUTE_32F; NULL: a and b in float32 */
    const void *a16, *b16;
    bool bf16, y16;
    bool must16; /* A or Y is a 16-bit chain's: no float32-operand form may take it */
} cu_mm_geom;

/* Append g as steps: cuBLASLt at the session precision's compute type, the bias/Relu in
 * its epilogue when it has one, else a bias + Relu kernel after. */
int cu_add_gemm(cu_exec *e, const cu_mm_geom *g, ib_err *err);

/* One cuBLASLt call planned for g's shapes (no epilogue; alignment as g's pointers) and
 * run later on other pointers of the same alignment: the recurrence of an LSTM. */
typedef struct cu_lt cu_lt;
int cu_lt_plan(cu_exec *e, const cu_mm_geom *g, cu_lt **out, ib_err *err);
int cu_lt_run(cu_exec *e, cu_lt *k, const float *a, const float *b, float *y, ib_err *err);
void cu_lt_free(void *k);

/* A product's float32 input converted by a step into the block the products share (e->cvt):
 * float16, bfloat16, int8 at a scale (clamp(rint(x * scale), -127, 127)), also from NCHW to
 * NHWC (an int8 convolution's input, [N, C, ...] -> [N, ..., C]), or fp8 e4m3 at a scale
 * (e4m3(x * scale), saturated to +-448), also to NHWC (an fp8 convolution's). cu_cvt_prepare
 * says where (dst) and whether the block already holds it (cached: the last conversion step
 * was of the same value, format and scale, and no step writes a value after its producer);
 * cu_cvt_add appends the step unless cached. */
enum cu_cvt_fmt { CU_CVT_F16, CU_CVT_BF16, CU_CVT_S8, CU_CVT_S8_NHWC, CU_CVT_E4M3,
                  CU_CVT_E4M3_NHWC };
typedef struct cu_cvt {
    const void *src;
    int src_t;     /* ibk_float_t of src: float32, or a 16-bit chain's (CU_CVT_S8, _E4M3) */
    int64_t n, val;
    int64_t c, hw; /* the NHWC forms: channels and spatial size (n = N c hw) */
    int fmt;
    float scale;
    bool cached;
    void *dst;
} cu_cvt;
int cu_cvt_prepare(cu_exec *e, const cu_val *a, int fmt, float scale, cu_cvt *c, ib_err *err);
int cu_cvt_add(cu_exec *e, const cu_cvt *c, ib_err *err);

/* cuBLASLt helpers (cuda_matmul.c): a matrix layout (strided batches when batch > 1); the
 * descriptors' teardown (NULL ones skipped); the heuristic's first `want` algorithms within the
 * context's workspace (align: the minimum alignments of A, B and C/D in bytes, or NULL), its
 * status in *st (the return is the preference's set-up). */
int cu_lt_layout(cu_exec *e, cublasLtMatrixLayout_t *l, cudaDataType_t t, uint64_t rows,
                 uint64_t cols, int64_t ld, int64_t batch, int64_t stride, ib_err *err);
void cu_lt_destroy(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                   cublasLtMatrixLayout_t lc);
int cu_lt_heuristic(cu_exec *e, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
                    cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc, const uint32_t *align,
                    int want, cublasLtMatmulHeuristicResult_t *res, int *found, cublasStatus_t *st,
                    ib_err *err);

/* 8-bit products (cuda_matmul_q8.c): g's product on int8 operands when the session is int8,
 * or on fp8 e4m3 operands when it is fp8, when g's B is a constant [K, N] (or [N, K] when
 * g->tb) not batched, A has a calibrated range, and Lt has an algorithm for it: *done tells.
 * The bias (g->bias, float32) and act (an ibk_unary_op) go in the dequant epilogue, which
 * writes y in its type (float32, or a 16-bit chain's). */
int cu_add_gemm_q8(cu_exec *e, const cu_mm_geom *g, const cu_val *a, const cu_val *b,
                   const cu_val *y, int act, bool *done, ib_err *err);
/* cuDNN helpers of the convolution files (cuda_conv.c): the forward descriptors' teardown
 * (NULL ones skipped), and one call of `call` on the planned buffers at compile with a
 * workspace of ws_bytes of its own (the exec's is allocated after compile): true when cuDNN
 * runs the configuration, else its error is cleared. */
void cu_dnn_destroy_fwd(cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t yd,
                        cudnnFilterDescriptor_t wd, cudnnConvolutionDescriptor_t cd);
bool cu_dnn_probe(cu_exec *e, size_t ws_bytes,
                  cudnnStatus_t (*call)(cu_exec *e, const void *k, void *ws), const void *k);

/* int8 convolutions (cuda_conv_i8.c): a 2-D convolution with one group, x [N, C, H, W] with a
 * calibrated range, a constant w [K, C, R, S], C and K multiples of 4, as cuDNN's int8 NHWC
 * convolution with float output, then one epilogue (per-channel dequantisation, bias, the
 * residual z, the activation) writing y [N, K, P, Q] float32, or int8 NHWC when y is an int8
 * chain's (q8): *done tells. When it is not done, cu_conv_q8_unwrap gives the node's q8 x and z
 * float32 NCHW stand-ins (a dequantising step each) and y a float32 scratch, so another path
 * compiles it, and cu_conv_q8_rewrap puts them back and quantises y from the scratch. */
typedef struct cu_conv2d {
    int N, C, H, W, K, R, S, P, Q;
    int pad[2], stride[2], dil[2];
} cu_conv2d;
int cu_add_conv_i8(cu_exec *e, const ib_node *n, const cu_conv2d *g, bool *done, ib_err *err);
/* What the int8 and fp8 convolutions share (cuda_conv_i8.c): cu_conv8_prepare quantises the
 * filter per output channel into the device store (KRSC int8, or e4m3 when fp8), prepares
 * X's conversion to NHWC at its range's scale (cv: cu_cvt_add it before the convolution's
 * step; none for an int8 chain's X), takes the float NHWC result block and fills in the
 * epilogue's operands; cu_conv8_epilogue is the step's last launch: y = act(acc / (sx sw[k]) +
 * bias + z), float32 NCHW or an int8 chain's NHWC. The caller checked the node (range,
 * constant filter, activation). */
typedef struct cu_conv8 {
    cu_cvt cv;
    const void *x8, *w8;
    float *acc;
    void *y;             /* float32 NCHW, or int8 NHWC when y_q8 */
    const float *inv_sw, *bias;
    const void *z;       /* float32 NCHW, or int8 NHWC when z_q8 */
    float inv_sx, a, b, sy, inv_sz;
    int act;
    bool y_q8, z_q8;
    int64_t N, K, PQ;
} cu_conv8;
int cu_conv8_prepare(cu_exec *e, const ib_node *n, const cu_conv2d *g, bool fp8, cu_conv8 *c,
                     ib_err *err);
int cu_conv8_epilogue(cu_exec *e, const cu_conv8 *c, ib_err *err);
/* One 2-D convolution through cuDNN's backend (graph) API (cuda_dnn_graph.c), for the data
 * types only it takes (e4m3 fp8): X and W of xw_t in NHWC, Y of y_t in NHWC, compute comp_t;
 * in the CU_GCONV_SCALE_K form Y = conv(X, W) * S with S a float vector of K (one per output
 * channel, given at run). cu_gconv_build returns IB_EUNSUPPORTED when no engine runs the form
 * with a workspace of at most CU_CONV_WS_MAX (ws: what the plan needs); cu_gconv_run launches
 * it on the handle's stream (its variant pack remade when a pointer or the workspace
 * changes; s is ignored by the plain form). */
#define CU_GCONV_CFGS 8
typedef enum cu_gconv_form { CU_GCONV_PLAIN, CU_GCONV_SCALE_K } cu_gconv_form;
typedef struct cu_gconv {
    cudnnBackendDescriptor_t x, w, y, t, s, conv, op, pw, pwop, graph, heur, plan, pack;
    cudnnBackendDescriptor_t cfg[CU_GCONV_CFGS];
    int n_cfg;
    cu_gconv_form form;
    size_t ws;
    const void *pack_x, *pack_w, *pack_y, *pack_s, *pack_ws;
} cu_gconv;
int cu_gconv_build(cudnnHandle_t h, const cu_conv2d *g, cudnnDataType_t xw_t, cudnnDataType_t y_t,
                   cudnnDataType_t comp_t, cu_gconv_form form, cu_gconv *c);
cudnnStatus_t cu_gconv_run(cudnnHandle_t h, cu_gconv *c, const void *x, const void *w,
                           const float *s, void *y, void *ws);
void cu_gconv_free(cu_gconv *c);
/* fp8 convolutions (cuda_conv_f8.c): at fp8 on sm_89 and later, a 2-D convolution with one
 * group, x with a calibrated range, a constant w, C and K multiples of 16, as e4m3 NHWC X and
 * W (per output channel scales) through cu_gconv with float Y, then the int8 path's epilogue
 * (dequantisation, bias, z, activation) writing y [N, K, P, Q] float32: *done tells. */
int cu_add_conv_f8(cu_exec *e, const ib_node *n, const cu_conv2d *g, bool *done, ib_err *err);
typedef struct cu_q8_saved {
    cu_val *v[3]; /* x, z, y when q8, else NULL */
    void *dev[3]; /* their int8 storage */
} cu_q8_saved;
int cu_conv_q8_unwrap(cu_exec *e, const ib_node *n, cu_q8_saved *s, ib_err *err);
int cu_conv_q8_rewrap(cu_exec *e, cu_q8_saved *s, ib_err *err);

/* ---- 16-bit chains (cuda_half.c) ------------------------------------------- */

/* With half_chains at fp16/bf16: mark the values held 16-bit (cu_val.h16), after binding and
 * the NHWC islands, before the nodes compile. */
void cu_mark_half_chains(cu_exec *e, const ib_backend_subgraph *sg);
/* A product the chains take (its A may be 16-bit, its Y is written 16-bit when marked). */
bool cu_half_matmul(cu_exec *e, const ib_node *n);
/* The ibk_float_t v is held in: IBK_T_F32, or IBK_T_F16 / IBK_T_BF16 when h16. */
int cu_dtype_of(const cu_exec *e, const cu_val *v);
/* The chain ops' steps: LayerNorm and Add with each tensor of its own dtype, and an activation
 * (IBK_RELU, IBK_GELU_ERF, IBK_GELU_TANH) in place on a 16-bit y. */
int cu_add_ln16(cu_exec *e, const ib_node *n, ib_err *err);
int cu_add_add16(cu_exec *e, const ib_node *n, ib_err *err);
int cu_add_act16(cu_exec *e, const cu_val *y, int op, ib_err *err);
/* Whether the fused attention kernel's shared memory for keys of Sk and values of Dv per head
 * fits every supported device (cuda_attn.c). */
bool cu_mha_fused_fits(int64_t Sk, int64_t Dv);

/* ---- int8 on the host (cuda_quant.c) --------------------------------------- */

/* 127 / amax, or 1 when amax is zero or not finite; of a value's calibrated range, whose
 * amax is max(|rmin|, |rmax|) */
float cu_s8_scale(float amax);
float cu_range_amax(const cu_val *v);
float cu_s8_range_scale(const cu_val *v);
/* Bytes of `channels` float scales rounded up to 256: where an int8 weight's q follows them
 * in its device store entry ([inv_s floats][q]). */
size_t cu_s8_offset(int64_t channels);
/* The int8 copy of a constant B for those products: q [N][K] (B's column n as row n), scaled
 * per column to +-127, and inv_s[n] = max |B[:, n]| / 127 (1 for a zero column). */
void cu_quant_cols_s8(const float *b, int64_t K, int64_t N, bool tb, int8_t *q, float *inv_s);
/* The int8 copy of a conv filter w [K, C, R, S]: q [K][R][S][C] (KRSC), each output channel
 * scaled to +-127, and inv_s[k] = max |w[k]| / 127 (1 for a zero or non-finite channel). */
void cu_quant_filter_s8(const float *w, int64_t K, int64_t C, int64_t RS, int8_t *q, float *inv_s);

/* fp8 e4m3 on the host (cuda_quant.c; cuda_matmul_q8.c's weights): 448 / amax (1 for a zero or
 * non-finite amax); one float to e4m3 (round to nearest even, saturated to +-448, NaN kept) and
 * back; the e4m3 copy of a constant B as cu_quant_cols_s8 does int8, each column scaled so its
 * max |B| is 448, inv_s[n] = max |B[:, n]| / 448. */
#define CU_E4M3_MAX 448.0f
float cu_e4m3_scale(float amax);
uint8_t cu_e4m3_from_f32(float v);
float cu_e4m3_to_f32(uint8_t c);
void cu_quant_cols_e4m3(const float *b, int64_t K, int64_t N, bool tb, uint8_t *q, float *inv_s);
/* The e4m3 copy of a conv filter w [K, C, R, S] as cu_quant_filter_s8 does int8: q [K][R][S][C],
 * each output channel scaled so its max |w| is 448, inv_s[k] = max |w[k]| / 448. */
void cu_quant_filter_e4m3(const float *w, int64_t K, int64_t C, int64_t RS, uint8_t *q,
                          float *inv_s);

/* Attention over contiguous blocks (inferbench.Attention, and MultiHeadAttention's split-heads
 * path): scores = q k' into `scores` [batch, sq, sk] (k [batch, sk, dd] when k_rows, else
 * kt [batch, dd, sk]), softmax(scale scores + mask) in place, y [batch, sq, dv] = scores v. */
typedef struct cu_attn_geom {
    const float *q, *k, *v;
    float *y, *scores;
    bool k_rows;
    int64_t batch, sq, sk, dd, dv;
    float scale;
    const float *mask; /* or NULL */
    ibk_view mv;       /* the mask's strides over the row dims [..., sq] */
    int64_t mcs;       /* and per key */
} cu_attn_geom;
int cu_add_attention(cu_exec *e, const cu_attn_geom *a, ib_err *err);

/* ---- shape steps (cuda_ops_shape.c) ---------------------------------------- */

/* A step copying y[i] = x[view(i)] for elements of esize bytes (Transpose, Expand, fills). */
int cu_add_strided_copy(cu_exec *e, const void *x, void *y, const ibk_view *v, int esize,
                        ib_err *err);

/* ---- op table (cuda_backend.c) -------------------------------------------- */

typedef bool (*cu_supports_fn)(const cu_ctx *c, const ib_graph *g, const ib_node *n,
                               const ib_tensor_desc *const *in, enum ib_precision p);
typedef int (*cu_compile_fn)(cu_exec *e, const ib_node *n, ib_err *err);

typedef struct cu_op {
    const char *domain;
    const char *op_type;
    cu_supports_fn supports;
    cu_compile_fn compile;
} cu_op;

const cu_op *cu_op_find(const ib_node *n);
/* n is op_type of domain ("" and "ai.onnx" are the same domain), as cu_op_find matches. */
bool cu_node_is(const ib_node *n, const char *domain, const char *op_type);
/* The i-th registered op (coverage listings); NULL past the end. */
const cu_op *cu_op_at(size_t i);

/* The view of a (and b, or NULL) broadcast against out, numpy rules (cuda_ops_ew.c). */
void cu_bcast_view(const ib_tensor_desc *a, const ib_tensor_desc *b, const ib_tensor_desc *out,
                   ibk_view *v);
/* A fused op's "activation" attribute (FusedConv, InstanceNorm; none elsewhere) as an
 * ibk_unary_op with its parameters: Relu, LeakyRelu (activation_alpha), Clip (clip_min,
 * clip_max); false for another (cuda_conv.c). */
bool cu_fused_act(const ib_node *n, int *act, float *a, float *b);

/* Helpers for supports functions. */
bool cu_is_const(const ib_graph *g, const ib_node *n, uint32_t i);
bool cu_all_f32(const ib_node *n, const ib_tensor_desc *const *in);
const ib_tensor_desc *cu_out_desc(const ib_graph *g, const ib_node *n, uint32_t i);

/* Families (one file each). */
extern const cu_op cu_ops_ew[];     /* cuda_ops_ew.c: unary, binary, softmax, LayerNorm */
extern const cu_op cu_ops_shape[];  /* cuda_ops_shape.c: reshape family, Transpose, Concat, Gather, reductions */
extern const cu_op cu_ops_matmul[]; /* cuda_matmul.c: MatMul, Gemm, FusedMatMul, Attention */
extern const cu_op cu_ops_rnn[];    /* cuda_rnn.c: LSTM */
extern const cu_op cu_ops_conv[];   /* cuda_conv.c: Conv, FusedConv, pooling */
extern const cu_op cu_ops_logic[];  /* cuda_ops_logic.c: comparisons, And/Or/Xor/Not, Where */
extern const cu_op cu_ops_accum[];  /* cuda_accum.c: inferbench.WindowAccumulate */
extern const cu_op cu_ops_attn[];   /* cuda_attn.c: inferbench.MultiHeadAttention */
extern const cu_op cu_ops_detect[]; /* cuda_detect.c: inferbench.SSDPostprocess */

/* e's precision from the subgraph's p: int8 and fp8 sessions compile as at fp16 with e->int8 /
 * e->fp8 set for their 8-bit products (cuda_matmul_q8.c). */
void cu_exec_set_precision(cu_exec *e, enum ib_precision p);

/* The vtable entries of cuda_exec.c. */
int cu_graph_compile(void *ctx, const ib_backend_subgraph *sg, ib_backend_exec **out,
                     ib_err *err);
void cu_graph_free(void *ctx, ib_backend_exec *e);
int cu_graph_run(void *ctx, ib_backend_exec *e, const ib_backend_subgraph *sg, ib_err *err);
/* ABI 4 profiling: per-step device time from events around each step (the steps are then
 * launched one by one, not replayed as a CUDA Graph, so launch gaps count). */
void cu_set_profiling(void *ctx, ib_backend_exec *e, bool on);
void cu_profile_read(void *ctx, const ib_backend_exec *e, ib_backend_prof_fn fn, void *user);
enum ib_backend_replay cu_replay_status(void *ctx, const ib_backend_exec *e, const char **why);
/* The products' precisions (backend ABI 10): the paths that plan a product note theirs with
 * ib_prec_notes_set(&e->precs, p). */
void cu_precision_read(void *ctx, const ib_backend_exec *e, ib_backend_prec_fn fn, void *user);

#endif
