/*
 * cpu_kernels_ew.c - broadcast elementwise kernels: arithmetic (f32, i32,
 * i64), comparisons (-> bool), logic (bool), Where (any element size),
 * unary fallbacks (Not, Erf, Floor, Ceil, Sign, HardSigmoid) and Cast.
 *
 * Work is split into tiles of at most CPU_EW_TILE output elements along the
 * collapsed innermost dim, shared by the OpenMP team; the inner loops are
 * specialised for contiguous/broadcast operands so GCC vectorises them
 * (`#pragma omp simd`). Integer division by zero yields 0 (ONNX leaves it
 * undefined; we refuse to trap).
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"
#include "ir/graph.h"

#define CPU_EW_TILE 16384

bool cpu_bcast_init(cpu_bcast *b, const ib_tensor_desc *const *in, int n_in,
                    const ib_tensor_desc *y)
{
    memset(b, 0, sizeof *b);
    int nd = y->ndim;
    int64_t dims[IB_MAX_DIMS + 1], st[CPU_BCAST_MAX_IN][IB_MAX_DIMS + 1];
    if (nd == 0) { /* scalars */
        nd = 1;
        dims[0] = 1;
        for (int k = 0; k < n_in; k++)
            st[k][0] = 0;
    } else {
        for (int i = 0; i < nd; i++)
            dims[i] = y->dims[i];
        for (int k = 0; k < n_in; k++) {
            if (in[k]->ndim > nd)
                return false;
            int64_t s = 1;
            for (int i = nd - 1; i >= 0; i--) {
                int j = i - (nd - in[k]->ndim);
                int64_t d = j >= 0 ? in[k]->dims[j] : 1;
                if (d != dims[i] && d != 1)
                    return false;
                st[k][i] = d == 1 ? 0 : s;
                s *= d;
            }
        }
    }
    /* collapse i into i+1 when every input is contiguous across the pair */
    int m = 0;
    int64_t cd[IB_MAX_DIMS], cs[CPU_BCAST_MAX_IN][IB_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        if (dims[i] == 1 && nd > 1)
            continue; /* size-1 dims carry nothing */
        bool merge = m > 0;
        for (int k = 0; k < n_in && merge; k++)
            merge = cs[k][m - 1] == st[k][i] * dims[i];
        if (merge) {
            cd[m - 1] *= dims[i];
            for (int k = 0; k < n_in; k++)
                cs[k][m - 1] = st[k][i];
        } else {
            cd[m] = dims[i];
            for (int k = 0; k < n_in; k++)
                cs[k][m] = st[k][i];
            m++;
        }
    }
    if (m == 0) {
        cd[0] = 1;
        for (int k = 0; k < n_in; k++)
            cs[k][0] = 0;
        m = 1;
    }
    b->nd = m;
    b->total = 1;
    for (int i = 0; i < m; i++) {
        b->dims[i] = cd[i];
        b->total *= cd[i];
        for (int k = 0; k < n_in; k++)
            b->st[k][i] = cs[k][i];
    }
    return true;
}

bool cpu_ew_supported(enum cpu_ew_op op, enum ib_dtype dt, enum ib_dtype odt)
{
    bool num = dt == IB_DTYPE_FLOAT32 || dt == IB_DTYPE_INT32 || dt == IB_DTYPE_INT64;
    switch (op) {
    case CPU_EW_ADD: case CPU_EW_SUB: case CPU_EW_MUL: case CPU_EW_DIV: case CPU_EW_MAX:
    case CPU_EW_MIN: case CPU_EW_MOD:
        return num && odt == dt;
    case CPU_EW_POW: return dt == IB_DTYPE_FLOAT32 && odt == dt;
    case CPU_EW_EQ: case CPU_EW_LT: case CPU_EW_GT: case CPU_EW_LE: case CPU_EW_GE:
        return (num || (op == CPU_EW_EQ && dt == IB_DTYPE_BOOL)) && odt == IB_DTYPE_BOOL;
    case CPU_EW_AND: case CPU_EW_OR: case CPU_EW_XOR: case CPU_EW_NOT:
        return dt == IB_DTYPE_BOOL && odt == IB_DTYPE_BOOL;
    case CPU_EW_WHERE: return ib_dtype_size(dt) > 0 && odt == dt;
    case CPU_EW_ERF: case CPU_EW_FLOOR: case CPU_EW_CEIL: case CPU_EW_HARDSIGMOID:
        return dt == IB_DTYPE_FLOAT32 && odt == dt;
    case CPU_EW_SIGN: return num && odt == dt;
    case CPU_EW_CAST: {
        enum ib_dtype ok[] = {IB_DTYPE_FLOAT32, IB_DTYPE_INT32, IB_DTYPE_INT64, IB_DTYPE_BOOL,
                              IB_DTYPE_UINT8,   IB_DTYPE_INT8,  IB_DTYPE_FLOAT64};
        bool a = false, c = false;
        for (size_t i = 0; i < IB_ARRAY_LEN(ok); i++) {
            a |= ok[i] == dt;
            c |= ok[i] == odt;
        }
        return a && c;
    }
    }
    return false;
}

/* One tile: output elements [j0, j1) of row `row`. The macros expand the
 * operand access patterns; S0/S1 are the innermost strides. */
#define EW_BIN(T, OT, EXPR)                                                                        \
    do {                                                                                           \
        const T *a = (const T *)c->in[0] + off[0], *b = (const T *)c->in[1] + off[1];              \
        OT *o = (OT *)c->out + row * inner;                                                        \
        int64_t sa = c->b.st[0][c->b.nd - 1], sb = c->b.st[1][c->b.nd - 1];                       \
        if (sa == 1 && sb == 1) {                                                                  \
            _Pragma("omp simd") for (int64_t j = j0; j < j1; j++)                                  \
            {                                                                                      \
                T x = a[j], y = b[j];                                                              \
                o[j] = (OT)(EXPR);                                                                 \
            }                                                                                      \
        } else if (sa == 1 && sb == 0) {                                                           \
            T y = b[0];                                                                            \
            _Pragma("omp simd") for (int64_t j = j0; j < j1; j++)                                  \
            {                                                                                      \
                T x = a[j];                                                                        \
                o[j] = (OT)(EXPR);                                                                 \
            }                                                                                      \
        } else if (sa == 0 && sb == 1) {                                                           \
            T x = a[0];                                                                            \
            _Pragma("omp simd") for (int64_t j = j0; j < j1; j++)                                  \
            {                                                                                      \
                T y = b[j];                                                                        \
                o[j] = (OT)(EXPR);                                                                 \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t j = j0; j < j1; j++) {                                                    \
                T x = a[j * sa], y = b[j * sb];                                                    \
                o[j] = (OT)(EXPR);                                                                 \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#define EW_UN(T, OT, EXPR)                                                                         \
    do {                                                                                           \
        const T *a = (const T *)c->in[0] + off[0];                                                 \
        OT *o = (OT *)c->out + row * inner;                                                        \
        int64_t sa = c->b.st[0][c->b.nd - 1];                                                      \
        for (int64_t j = j0; j < j1; j++) {                                                        \
            T x = a[j * sa];                                                                       \
            o[j] = (OT)(EXPR);                                                                     \
        }                                                                                          \
    } while (0)

/* Arithmetic shared by the three numeric types. */
#define EW_ARITH(T, ISF)                                                                           \
    switch (c->op) {                                                                               \
    case CPU_EW_ADD: EW_BIN(T, T, x + y); break;                                                   \
    case CPU_EW_SUB: EW_BIN(T, T, x - y); break;                                                   \
    case CPU_EW_MUL: EW_BIN(T, T, x * y); break;                                                   \
    case CPU_EW_DIV: EW_BIN(T, T, (ISF || y != 0) ? x / (ISF ? y : (y ? y : 1)) : 0); break;       \
    case CPU_EW_MAX: EW_BIN(T, T, x > y ? x : y); break;                                           \
    case CPU_EW_MIN: EW_BIN(T, T, x < y ? x : y); break;                                           \
    case CPU_EW_EQ: EW_BIN(T, uint8_t, x == y); break;                                             \
    case CPU_EW_LT: EW_BIN(T, uint8_t, x < y); break;                                              \
    case CPU_EW_GT: EW_BIN(T, uint8_t, x > y); break;                                              \
    case CPU_EW_LE: EW_BIN(T, uint8_t, x <= y); break;                                             \
    case CPU_EW_GE: EW_BIN(T, uint8_t, x >= y); break;                                             \
    case CPU_EW_SIGN: EW_UN(T, T, (x > 0) - (x < 0)); break;                                       \
    default: break;                                                                                \
    }

static int64_t imod(int64_t x, int64_t y)
{
    return y ? x % y : 0;
}

/* Cast one element through double (exact for every integer type we take
 * up to 2^53; float->int truncates toward zero, saturating). */
static double load_d(const void *p, enum ib_dtype t, int64_t i)
{
    switch (t) {
    case IB_DTYPE_FLOAT32: return ((const float *)p)[i];
    case IB_DTYPE_INT32: return ((const int32_t *)p)[i];
    case IB_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case IB_DTYPE_BOOL:
    case IB_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case IB_DTYPE_INT8: return ((const int8_t *)p)[i];
    case IB_DTYPE_FLOAT64: return ((const double *)p)[i];
    default: return 0;
    }
}

static double clampd(double v, double lo, double hi)
{
    return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

static void store_d(void *p, enum ib_dtype t, int64_t i, double v)
{
    switch (t) {
    case IB_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case IB_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)clampd(v, -2147483648.0, 2147483647.0); break;
    case IB_DTYPE_INT64:
        ((int64_t *)p)[i] = (int64_t)clampd(v, -9223372036854775808.0, 9223372036854774784.0);
        break;
    case IB_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case IB_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)clampd(v, 0, 255); break;
    case IB_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)clampd(v, -128, 127); break;
    case IB_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    default: break;
    }
}

static void ew_tile(const cpu_ew_ctx *c, int64_t row, int64_t j0, int64_t j1)
{
    int64_t inner = c->b.dims[c->b.nd - 1], off[CPU_BCAST_MAX_IN];
    cpu_bcast_row(&c->b, c->n_in, row, off);
    if (c->op == CPU_EW_WHERE) {
        const uint8_t *cond = (const uint8_t *)c->in[0] + off[0];
        size_t es = ib_dtype_size(c->dt);
        const char *x = (const char *)c->in[1] + (size_t)off[1] * es;
        const char *y = (const char *)c->in[2] + (size_t)off[2] * es;
        char *o = (char *)c->out + (size_t)(row * inner) * es;
        int64_t s0 = c->b.st[0][c->b.nd - 1], s1 = c->b.st[1][c->b.nd - 1],
                s2 = c->b.st[2][c->b.nd - 1];
        if (es == 4) {
            for (int64_t j = j0; j < j1; j++)
                ((uint32_t *)o)[j] = cond[j * s0] ? ((const uint32_t *)x)[j * s1]
                                                  : ((const uint32_t *)y)[j * s2];
        } else {
            for (int64_t j = j0; j < j1; j++)
                memcpy(o + (size_t)j * es, cond[j * s0] ? x + (size_t)(j * s1) * es
                                                        : y + (size_t)(j * s2) * es,
                       es);
        }
        return;
    }
    if (c->op == CPU_EW_CAST) {
        const void *a = (const char *)c->in[0] + (size_t)off[0] * ib_dtype_size(c->dt);
        int64_t sa = c->b.st[0][c->b.nd - 1];
        for (int64_t j = j0; j < j1; j++)
            store_d(c->out, c->odt, row * inner + j, load_d(a, c->dt, j * sa));
        return;
    }
    switch (c->dt) {
    case IB_DTYPE_FLOAT32:
        switch (c->op) {
        case CPU_EW_POW: EW_BIN(float, float, powf(x, y)); break;
        case CPU_EW_MOD: EW_BIN(float, float, fmodf(x, y)); break;
        case CPU_EW_ERF: EW_UN(float, float, erff(x)); break;
        case CPU_EW_FLOOR: EW_UN(float, float, floorf(x)); break;
        case CPU_EW_CEIL: EW_UN(float, float, ceilf(x)); break;
        case CPU_EW_HARDSIGMOID:
            EW_UN(float, float, fmaxf(0.0f, fminf(1.0f, c->alpha * x + c->beta)));
            break;
        default: EW_ARITH(float, 1) break;
        }
        break;
    case IB_DTYPE_INT32:
        if (c->op == CPU_EW_MOD)
            EW_BIN(int32_t, int32_t, imod(x, y));
        else
            EW_ARITH(int32_t, 0)
        break;
    case IB_DTYPE_INT64:
        if (c->op == CPU_EW_MOD)
            EW_BIN(int64_t, int64_t, imod(x, y));
        else
            EW_ARITH(int64_t, 0)
        break;
    case IB_DTYPE_BOOL:
        switch (c->op) {
        case CPU_EW_AND: EW_BIN(uint8_t, uint8_t, (x && y)); break;
        case CPU_EW_OR: EW_BIN(uint8_t, uint8_t, (x || y)); break;
        case CPU_EW_XOR: EW_BIN(uint8_t, uint8_t, ((x != 0) != (y != 0))); break;
        case CPU_EW_EQ: EW_BIN(uint8_t, uint8_t, ((x != 0) == (y != 0))); break;
        case CPU_EW_NOT: EW_UN(uint8_t, uint8_t, !x); break;
        default: break;
        }
        break;
    default: break;
    }
}

int cpu_ew_run(void *kctx, int threads, ib_err *err)
{
    IB_UNUSED(err);
    const cpu_ew_ctx *c = kctx;
    int64_t inner = c->b.dims[c->b.nd - 1];
    if (c->b.total == 0 || inner == 0)
        return IB_OK;
    int64_t rows = c->b.total / inner;
    int64_t per_row = (inner + CPU_EW_TILE - 1) / CPU_EW_TILE, tiles = rows * per_row;
    int nt = tiles < threads ? (int)tiles : threads;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t t = 0; t < tiles; t++) {
        int64_t row = t / per_row, j0 = (t % per_row) * CPU_EW_TILE;
        int64_t j1 = j0 + CPU_EW_TILE < inner ? j0 + CPU_EW_TILE : inner;
        ew_tile(c, row, j0, j1);
    }
    return IB_OK;
}
