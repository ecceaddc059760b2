/*
 * ops_util.h - helpers shared by the op families in src/ir/ops/: error
 * messages that name the node, attribute access, axis normalisation,
 * numpy-style broadcasting (with a dim-collapsing iterator), element loads
 * and stores in any dtype, and reading int/float lists out of constant
 * tensors. Internal to the runtime; not part of the public API.
 *
 * Each family file (unary.c, binary.c, conv.c, ...) exports one
 * ib_op_family listed by registry.c.
 */
#ifndef IB_RUNTIME_OPS_UTIL_H
#define IB_RUNTIME_OPS_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/op.h"

/* ---- dtype masks (ib_op_def.dtype_mask) ---------------------------------- */
#define IB_DT(t)     (1u << IB_DTYPE_##t)
#define IB_DT_F32    IB_DT(FLOAT32)
#define IB_DT_FLOATS (IB_DT(FLOAT32) | IB_DT(FLOAT64) | IB_DT(FLOAT16) | IB_DT(BFLOAT16))
#define IB_DT_SINTS  (IB_DT(INT8) | IB_DT(INT16) | IB_DT(INT32) | IB_DT(INT64))
#define IB_DT_UINTS  (IB_DT(UINT8) | IB_DT(UINT16) | IB_DT(UINT32) | IB_DT(UINT64))
#define IB_DT_INTS   (IB_DT_SINTS | IB_DT_UINTS)
#define IB_DT_NUMS   (IB_DT_FLOATS | IB_DT_INTS)
#define IB_DT_ALL    (IB_DT_NUMS | IB_DT(BOOL))

/* double infinity / NaN (math.h's INFINITY and NAN are float) */
#define IB_INF ((double)INFINITY)
#define IB_NAN ((double)NAN)

/* ---- families --------------------------------------------------------------- */
typedef struct ib_op_family {
    const char *name;
    const ib_op_def *defs;
    size_t count;
} ib_op_family;

extern const ib_op_family ib_ops_unary;   /* unary.c */
extern const ib_op_family ib_ops_binary;  /* binary.c */
extern const ib_op_family ib_ops_matmul;  /* matmul.c */
extern const ib_op_family ib_ops_conv;    /* conv.c */
extern const ib_op_family ib_ops_pool;    /* pool.c */
extern const ib_op_family ib_ops_norm;    /* norm.c */
extern const ib_op_family ib_ops_softmax; /* softmax.c */
extern const ib_op_family ib_ops_reduce;  /* reduce.c */
extern const ib_op_family ib_ops_shape;   /* shape.c */
extern const ib_op_family ib_ops_layout;  /* layout.c */
extern const ib_op_family ib_ops_gather;  /* gather.c */
extern const ib_op_family ib_ops_cast;    /* cast.c */
extern const ib_op_family ib_ops_pad;     /* pad.c */
extern const ib_op_family ib_ops_resize;  /* resize.c */
extern const ib_op_family ib_ops_rnn;     /* rnn.c */
extern const ib_op_family ib_ops_nms;     /* nms.c */
extern const ib_op_family ib_ops_quant;   /* quant.c */
extern const ib_op_family ib_ops_fused;   /* fused.c */
extern const ib_op_family ib_ops_mha;     /* fused_mha.c */
extern const ib_op_family ib_ops_index;   /* index.c */
extern const ib_op_family ib_ops_detect;  /* detect.c */
extern const ib_op_family ib_ops_accum;   /* accum.c */

/* ---- errors --------------------------------------------------------------- */

/* Fill err with "node 'name' (Op, opset N): <message>" and return code. */
int ib_op_fail(const ib_op_ctx *ctx, ib_err *err, int code, const char *fmt, ...) IB_PRINTF(4, 5);
#define IB_OP_BAD(ctx, err, ...)   ib_op_fail((ctx), (err), IB_EFORMAT, __VA_ARGS__)
#define IB_OP_UNSUP(ctx, err, ...) ib_op_fail((ctx), (err), IB_EUNSUPPORTED, __VA_ARGS__)

/* ---- attributes (a NULL node gives the defaults) ---------------------------- */
int64_t ib_op_opset(const ib_op_ctx *ctx); /* the node's opset (17 without a node) */
int64_t ib_op_attr_i(const ib_op_ctx *ctx, const char *name, int64_t dflt);
float ib_op_attr_f(const ib_op_ctx *ctx, const char *name, float dflt);
const char *ib_op_attr_s(const ib_op_ctx *ctx, const char *name, const char *dflt);
size_t ib_op_attr_ints(const ib_op_ctx *ctx, const char *name, const int64_t **out);
bool ib_op_has_attr(const ib_op_ctx *ctx, const char *name);
/* Copy an INTS attribute of at most cap values into out (IB_EFORMAT when longer). */
int ib_op_attr_ints_copy(const ib_op_ctx *ctx, ib_err *err, const char *name, int64_t *out,
                         size_t cap, size_t *n);

/* ---- shapes ----------------------------------------------------------------- */

/* Normalise axis in [-rank, rank-1] to [0, rank-1]; IB_EFORMAT otherwise. */
int ib_op_axis(const ib_op_ctx *ctx, ib_err *err, int64_t axis, int32_t rank, int32_t *out);
/* All dims known (>= 0). */
bool ib_op_known(const ib_tensor_desc *d);
/* numpy broadcasting of two shapes (dims only; out->dtype = a->dtype). A
 * dynamic dim against 1 or another dynamic dim stays dynamic. */
int ib_op_broadcast(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *a,
                    const ib_tensor_desc *b, ib_tensor_desc *out);
/* Row-major element strides of d. */
void ib_op_strides(const ib_tensor_desc *d, int64_t *st);
/* Checked dim arithmetic: a dynamic (negative) operand gives IB_DIM_DYNAMIC;
 * an overflow is IB_EUNSUPPORTED ("shape too large") naming the node. */
int ib_op_dim_mul(const ib_op_ctx *ctx, ib_err *err, int64_t a, int64_t b, int64_t *out);
int ib_op_dim_add(const ib_op_ctx *ctx, ib_err *err, int64_t a, int64_t b, int64_t *out);
/* Validate a desc: rank <= IB_MAX_DIMS and no negative known dims. */
int ib_op_check_desc(const ib_op_ctx *ctx, ib_err *err, const ib_tensor_desc *d, const char *what);

/*
 * Broadcast iteration over up to 4 operands (operand 0 is the output). Dims
 * of size 1 are dropped and contiguous runs merged, so the innermost loop is
 * as long as possible:
 *
 *   ib_bcast it; ib_bcast_init(&it, out_desc, ins, n);
 *   for (int64_t o = 0; o < it.outer; o++) {
 *       for (int64_t i = 0; i < it.inner; i++)
 *           y[it.off[0] + i*it.ist[0]] = f(a[it.off[1] + i*it.ist[1]], ...);
 *       ib_bcast_next(&it);
 *   }
 */
typedef struct ib_bcast {
    int nops;
    int32_t nd;                 /* collapsed rank (>= 1) */
    int64_t dims[IB_MAX_DIMS];  /* collapsed dims, innermost last */
    int64_t st[4][IB_MAX_DIMS]; /* element strides per operand (0 = broadcast) */
    int64_t idx[IB_MAX_DIMS];   /* odometer over dims[0..nd-2] */
    int64_t off[4];             /* current base offsets */
    int64_t ist[4];             /* innermost strides */
    int64_t inner, outer;
} ib_bcast;
void ib_bcast_init(ib_bcast *it, const ib_tensor_desc *out, const ib_tensor_desc *const *ins,
                   int n_in);
void ib_bcast_next(ib_bcast *it);
/* y = x broadcast to y's shape (same dtype; any element size). */
void ib_op_bcast_copy(const ib_tensor *x, ib_tensor *y);

/* ---- element access -------------------------------------------------------- */
bool ib_dtype_is_float(enum ib_dtype t);
bool ib_dtype_is_int(enum ib_dtype t); /* signed or unsigned integer (not bool) */
bool ib_dtype_is_unsigned(enum ib_dtype t);
/* Element i as double / int64 (floats truncated toward 0, saturated, NaN -> 0). */
double ib_op_ld(const void *p, enum ib_dtype t, int64_t i);
int64_t ib_op_ldi(const void *p, enum ib_dtype t, int64_t i);
/* Store v into element i: to ints truncated and saturated into int64 first,
 * then wrapped to the width (NaN -> 0); to bool as v != 0. */
void ib_op_st(void *p, enum ib_dtype t, int64_t i, double v);
void ib_op_sti(void *p, enum ib_dtype t, int64_t i, int64_t v);
/* Saturating double -> int64 (NaN -> 0). */
int64_t ib_op_f2i(double v);

/* Read an int32/int64 tensor of at most cap values (what names it in errors). */
int ib_op_read_ints(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *t, const char *what,
                    int64_t *out, size_t cap, size_t *n);
/* Read a float tensor (any float dtype) of at most cap values. */
int ib_op_read_floats(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *t, const char *what,
                      double *out, size_t cap, size_t *n);
/* The single value of a scalar or 1-element tensor as double. */
int ib_op_read_scalar(const ib_op_ctx *ctx, ib_err *err, const ib_tensor *t, const char *what,
                      double *out);

/* Infer: every output has input 0's desc. */
int ib_op_infer_same(const ib_op_ctx *ctx, const ib_tensor_desc *const *in,
                     const ib_tensor *const *const_in, uint32_t n_in, ib_tensor_desc *out,
                     uint32_t n_out, bool *data_dependent, ib_err *err);

/* ---- fused activations (attribute `activation`, docs/ops.md) ----------------- */
enum ib_op_act { IB_EP_NONE, IB_EP_RELU, IB_EP_LEAKY, IB_EP_CLIP, IB_EP_GELU,
                 IB_EP_GELU_TANH /* internal */ };
#define IB_EP_MASK(a) (1u << (a))

typedef struct ib_op_epilogue {
    enum ib_op_act act;
    double alpha, lo, hi;
} ib_op_epilogue;

/* activation: "" | Relu | LeakyRelu (activation_alpha) | Clip (clip_min,
 * clip_max) | Gelu (approximate = none | tanh); `allowed` (IB_EP_MASK bits)
 * masks which the op accepts. */
int ib_op_read_epilogue(const ib_op_ctx *ctx, ib_err *err, unsigned allowed, ib_op_epilogue *e);
/* act(x) in double. */
double ib_op_ep_apply(const ib_op_epilogue *e, double x);

/* Input i's desc, or NULL when absent or out of range. */
static inline const ib_tensor_desc *ib_op_in(const ib_tensor_desc *const *in, uint32_t n_in,
                                             uint32_t i)
{
    return i < n_in ? in[i] : NULL;
}
static inline const ib_tensor *ib_op_cin(const ib_tensor *const *in, uint32_t n_in, uint32_t i)
{
    return in && i < n_in ? in[i] : NULL;
}

#endif
