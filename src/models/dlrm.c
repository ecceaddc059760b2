/*
 * dlrm.c - the MLPerf v1.1 DLRM (benchmarks.md §1.4; reference dlrm_s_pytorch.py with
 * arch-mlp-bot 13-512-256-128, arch-mlp-top 1024-1024-512-256-1, arch-sparse-feature-size
 * 128, arch-interaction-op dot, arch-interaction-itself False) as an ONNX graph:
 *
 *   dense_x [N,13] -> (MatMul+Add+Relu) x3 -> x [N,128]
 *   sparse_x [N,26] -> per table t: Gather(sparse_x, t, axis 1) -> Gather(table_t) [N,128]
 *   Concat(x, e_0..e_25) -> Reshape [N,27,128] = T;  Z = T x T^T [N,27,27]
 *   Flatten Z [N,729] -> Gather(flat index i*27+j for i in 1..26, j < i) [N,351]
 *   Concat(x, Zflat) [N,479] -> (MatMul+Add+Relu) x4 -> MatMul+Add -> Sigmoid [N,1]
 *
 * Criteo Terabyte is one-hot (one id per table per pair), so the reference's EmbeddingBag
 * with one index per bag is a Gather. Weights are seeded random: MLPs Xavier-style as the
 * reference initialises them (normal, std sqrt(2/(in+out))), biases normal std sqrt(1/out),
 * tables uniform +-sqrt(1/rows). Nothing here claims accuracy: outputs are labelled random
 * weights.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/dlrm.h"
#include "onnx/build.h"

const uint64_t ib_dlrm_table_rows[IB_DLRM_TABLES] = {
    39884406, 39043, 17289, 7420, 20263, 3,     7120,     1543,     63,     38532951,
    2953546,  403346, 10,  2208, 11938, 155,   4,        976,      14,     39979771,
    25641295, 39664984, 585935, 12972, 108, 36};

uint64_t ib_dlrm_rows(size_t t, uint64_t row_cap, int tiny)
{
    uint64_t r = ib_dlrm_table_rows[t];
    if (tiny && (row_cap == 0 || row_cap > 1000))
        row_cap = 1000;
    return row_cap && r > row_cap ? row_cap : r;
}

static ib_value_id dense(ib_build *b, const char *name, ib_value_id x, int64_t in, int64_t out,
                         int relu)
{
    char wn[64], bn[64], shape[48], bshape[24];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    snprintf(shape, sizeof shape, "%lld,%lld", (long long)in, (long long)out);
    snprintf(bshape, sizeof bshape, "%lld", (long long)out);
    ib_value_id w = ib_build_weight(b, wn, IB_DTYPE_FLOAT32, shape,
                                    ib_fill_normal(0, sqrt(2.0 / (double)(in + out))));
    ib_value_id bias = ib_build_weight(b, bn, IB_DTYPE_FLOAT32, bshape,
                                       ib_fill_normal(0, sqrt(1.0 / (double)out)));
    ib_value_id y = IB_BUILD_OP(b, "MatMul", "", x, w);
    y = IB_BUILD_OP(b, "Add", "", y, bias);
    return relu ? IB_BUILD_OP(b, "Relu", "", y) : y;
}

int ib_models_dlrm(const ib_models_opts *o, uint64_t row_cap, struct ib_build **out, ib_err *err)
{
    *out = NULL;
    ib_build *b = NULL;
    if (ib_build_create(o->seed, 13, &b))
        return ib_err_set(err, IB_ENOMEM, "dlrm: out of memory");
    ib_value_id dx = ib_build_input(b, IB_DLRM_DENSE_INPUT, IB_DTYPE_FLOAT32, "N,13");
    ib_value_id sx = ib_build_input(b, IB_DLRM_SPARSE_INPUT, IB_DTYPE_INT64, "N,26");
    static const int64_t bot[4] = {13, 512, 256, 128};
    static const int64_t top[6] = {479, 1024, 1024, 512, 256, 1};
    char name[64];
    ib_value_id x = dx;
    for (int l = 0; l < 3; l++) {
        snprintf(name, sizeof name, "bot_l.%d", l);
        x = dense(b, name, x, bot[l], bot[l + 1], 1);
    }
    ib_value_id cat[1 + IB_DLRM_TABLES];
    cat[0] = x;
    for (size_t t = 0; t < IB_DLRM_TABLES; t++) {
        uint64_t rows = ib_dlrm_rows(t, row_cap, o->tiny);
        char shape[48];
        snprintf(name, sizeof name, "emb_l.%zu.weight", t);
        snprintf(shape, sizeof shape, "%llu,%d", (unsigned long long)rows, IB_DLRM_EMBED_DIM);
        double a = sqrt(1.0 / (double)rows);
        ib_value_id tab = ib_build_weight(b, name, IB_DTYPE_FLOAT32, shape, ib_fill_uniform(-a, a));
        int64_t ti = (int64_t)t;
        snprintf(name, sizeof name, "sparse_col.%zu", t);
        ib_value_id col = ib_build_ints(b, name, &ti, 1, ""); /* scalar: drops the axis */
        ib_value_id ids = IB_BUILD_OP(b, "Gather", "axis=1", sx, col);
        cat[1 + t] = IB_BUILD_OP(b, "Gather", "axis=0", tab, ids);
    }
    ib_value_id all = ib_build_op(b, "Concat", cat, 1 + IB_DLRM_TABLES, "axis=1");
    static const int64_t t_shape[3] = {-1, 1 + IB_DLRM_TABLES, IB_DLRM_EMBED_DIM};
    ib_value_id T = IB_BUILD_OP(b, "Reshape", "",
                                all, ib_build_ints(b, "interaction.shape", t_shape, 3, NULL));
    ib_value_id Tt = IB_BUILD_OP(b, "Transpose", "perm=[0,2,1]", T);
    ib_value_id Z = IB_BUILD_OP(b, "MatMul", "", T, Tt);
    ib_value_id Zf = IB_BUILD_OP(b, "Flatten", "axis=1", Z);
    /* reference: li = [i for i in range(ni) for j in range(i)], lj = [j ... range(i)] */
    int64_t idx[IB_DLRM_INTERACTIONS];
    size_t k = 0;
    for (int i = 0; i < 1 + IB_DLRM_TABLES; i++)
        for (int j = 0; j < i; j++)
            idx[k++] = (int64_t)i * (1 + IB_DLRM_TABLES) + j;
    ib_value_id zi = ib_build_ints(b, "interaction.tril_indices", idx, k, NULL);
    ib_value_id Zflat = IB_BUILD_OP(b, "Gather", "axis=1", Zf, zi);
    ib_value_id r = IB_BUILD_OP(b, "Concat", "axis=1", x, Zflat);
    for (int l = 0; l < 5; l++) {
        snprintf(name, sizeof name, "top_l.%d", l);
        r = dense(b, name, r, top[l], top[l + 1], l < 4);
    }
    ib_value_id p = IB_BUILD_OP(b, "Sigmoid", "", r);
    ib_build_output(b, p, IB_DLRM_OUTPUT, IB_DTYPE_FLOAT32, "N,1");
    int rc = ib_build_error(b, err);
    if (rc) {
        ib_build_destroy(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}
