/*
 * test_backend_ops_cases.c - the cases of the cross-backend op test: for
 * each op family, shapes that exercise the paths of the CPU backend
 * (blocked and plain layouts, channel counts that are not multiples of 16,
 * groups, dilations, strides, asymmetric pads, broadcasting in every
 * direction, batched and transposed matmuls, every LSTM direction).
 * Values are small enough for the plain-C reference kernels under ASan.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/cpu_kernels.h"
#include "test.h"
#include "test_backend_ops.h"

#define F32 IB_DTYPE_FLOAT32
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) ((int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(b, ...) bo_input(b, F32, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__), -1, 1)
#define CONST(b, ...) bo_const(b, F32, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__), -1, 1)
#define INTS(name, ...) bo_aints(name, (size_t)NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__))
#define NODE(b, op, dom, ins, ats) \
    bo_node(b, op, dom, ins, IB_ARRAY_LEN(ins), ats, IB_ARRAY_LEN(ats), 1, NULL)
#define NODE0(b, op, dom, ins) bo_node(b, op, dom, ins, IB_ARRAY_LEN(ins), NULL, 0, 1, NULL)
#define RUN1(b, label, flags, y)                                                                   \
    do {                                                                                           \
        ib_value_id o_[1] = {y};                                                                   \
        bo_run(b, label, flags, o_, 1);                                                            \
    } while (0)

/* ---- convolutions ---------------------------------------------------------------- */

typedef struct conv_p {
    int nsp;
    int64_t N, C, M, sp, k, stride, pad_l, pad_r, dil, group;
    bool bias;
    const char *auto_pad;
} conv_p;

static ib_value_id conv_node(bo *b, const conv_p *p, const char *op, const char *dom,
                             ib_value_id extra, const char *act, bool transpose)
{
    int64_t xd[5] = {p->N, p->C, p->sp, p->sp, p->sp}, wd[5], ks[3], st[3], pads[6], dl[3];
    if (transpose) {
        wd[0] = p->C;
        wd[1] = p->M / p->group;
    } else {
        wd[0] = p->M;
        wd[1] = p->C / p->group;
    }
    for (int i = 0; i < p->nsp; i++) {
        wd[2 + i] = ks[i] = p->k;
        st[i] = p->stride;
        dl[i] = p->dil;
        pads[i] = p->pad_l;
        pads[p->nsp + i] = p->pad_r;
    }
    ib_value_id in[4] = {bo_input(b, F32, 2 + p->nsp, xd, -1, 1),
                         bo_const(b, F32, 2 + p->nsp, wd, -0.5, 0.5),
                         p->bias ? bo_const(b, F32, 1, &p->M, -0.5, 0.5) : IB_VALUE_NONE, extra};
    ib_attr at[8];
    uint32_t na = 0;
    at[na++] = bo_aints("kernel_shape", (size_t)p->nsp, ks);
    at[na++] = bo_aints("strides", (size_t)p->nsp, st);
    at[na++] = bo_aints("dilations", (size_t)p->nsp, dl);
    at[na++] = bo_ai("group", p->group);
    if (p->auto_pad)
        at[na++] = bo_as("auto_pad", p->auto_pad);
    else
        at[na++] = bo_aints("pads", 2u * (size_t)p->nsp, pads);
    if (act)
        at[na++] = bo_as("activation", act);
    uint32_t nin = extra != IB_VALUE_NONE ? 4 : p->bias ? 3 : 2;
    return bo_node(b, op, dom, in, nin, at, na, 1, NULL);
}

static void conv_case(bo *b, const conv_p *p)
{
    char label[160];
    snprintf(label, sizeof label, "Conv%dd N%lld C%lld->%lld sp%lld k%lld s%lld p%lld/%lld d%lld g%lld%s%s",
             p->nsp, (long long)p->N, (long long)p->C, (long long)p->M, (long long)p->sp,
             (long long)p->k, (long long)p->stride, (long long)p->pad_l, (long long)p->pad_r,
             (long long)p->dil, (long long)p->group, p->bias ? " bias" : "",
             p->auto_pad ? p->auto_pad : "");
    ib_value_id y = conv_node(b, p, "Conv", "", IB_VALUE_NONE, NULL, false);
    RUN1(b, label, BO_INT8 | BO_BF16, y);
}

void bo_cases_conv(bo *b)
{
    static const conv_p convs[] = {
        {2, 1, 16, 32, 14, 3, 1, 1, 1, 1, 1, true, NULL},
        {2, 2, 16, 32, 9, 3, 2, 1, 1, 1, 1, true, NULL},
        {2, 1, 3, 16, 15, 7, 2, 3, 3, 1, 1, true, NULL},   /* stem: C not a multiple of 16 */
        {2, 1, 32, 64, 8, 1, 1, 0, 0, 1, 1, false, NULL},  /* 1x1 */
        {2, 1, 32, 32, 10, 3, 1, 1, 1, 1, 4, true, NULL},  /* groups */
        {2, 1, 32, 32, 10, 3, 1, 1, 1, 1, 32, true, NULL}, /* depthwise */
        {2, 1, 16, 16, 12, 3, 1, 2, 2, 2, 1, true, NULL},  /* dilation */
        {2, 1, 8, 16, 11, 3, 2, 0, 2, 1, 1, true, NULL},   /* asymmetric pads */
        {2, 1, 8, 16, 11, 3, 2, 0, 0, 1, 1, true, "SAME_UPPER"},
        {2, 1, 8, 16, 11, 4, 1, 0, 0, 1, 1, true, "SAME_LOWER"},
        {1, 2, 16, 24, 20, 5, 1, 2, 2, 1, 1, true, NULL},  /* Conv1D */
        {3, 1, 4, 16, 8, 3, 1, 1, 1, 1, 1, true, NULL},    /* Conv3D (3D-UNet) */
        {3, 1, 16, 8, 6, 3, 2, 1, 1, 1, 1, false, NULL},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(convs); i++)
        conv_case(b, &convs[i]);
    /* 3x3x3 / 1, pads 1, rows of >= 32 voxels: Winograd F(2x2x2, 3x3x3) at fp32 on an AVX-512
     * CPU (cpu_kernels_wino.c): odd extents (partial tiles, a partial block of tiles), two
     * volumes, 48 output channels (a 16-wide tail of the 32-wide products), no bias */
    static const int64_t wino[][7] = {
        /* N, C, M, D, H, W, bias */
        {1, 16, 16, 3, 5, 33, 1},
        {2, 32, 48, 4, 2, 40, 0},
        {1, 16, 32, 2, 3, 64, 1},
        {1, 64, 128, 2, 3, 33, 1}, /* C M / (C + M) >= 40: Winograd at bf16 too */
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(wino); i++) {
        const int64_t *q = wino[i];
        ib_value_id in[3] = {IN(b, q[0], q[1], q[3], q[4], q[5]),
                             bo_const(b, F32, 5, DIMS(q[2], q[1], 3, 3, 3), -0.3, 0.3),
                             q[6] ? CONST(b, q[2]) : IB_VALUE_NONE};
        ib_attr at[] = {INTS("kernel_shape", 3, 3, 3), INTS("pads", 1, 1, 1, 1, 1, 1)};
        ib_value_id y = bo_node(b, "Conv", "", in, q[6] ? 3 : 2, at, IB_ARRAY_LEN(at), 1, NULL);
        char label[96];
        snprintf(label, sizeof label, "Conv3d winograd N%lld C%lld->%lld %lldx%lldx%lld%s",
                 (long long)q[0], (long long)q[1], (long long)q[2], (long long)q[3],
                 (long long)q[4], (long long)q[5], q[6] ? " bias" : "");
        b->min_kernel_steps = cpu_wino_avx512() ? 1 : 0;
        b->kernel_steps_not_int8 = true;
        /* bf16: oneDNN's direct kernel below 40 (dnnl_conv.c's wino_shape) */
        b->kernel_steps_not_bf16 = !cpu_wino_avx512_bf16() || q[1] * q[2] < 40 * (q[1] + q[2]);
        RUN1(b, label, BO_INT8 | BO_BF16, y);
    }
    { /* the same shape with ib_backend_config.direct_conv: oneDNN's direct kernel */
        ib_value_id in[3] = {IN(b, 1, 16, 2, 3, 64),
                             bo_const(b, F32, 5, DIMS(32, 16, 3, 3, 3), -0.3, 0.3), CONST(b, 32)};
        ib_attr at[] = {INTS("kernel_shape", 3, 3, 3), INTS("pads", 1, 1, 1, 1, 1, 1)};
        b->direct_conv = true;
        b->max_kernel_steps = 0;
        RUN1(b, "Conv3d direct_conv N1 C16->32 2x3x64 bias", BO_INT8 | BO_BF16,
             NODE(b, "Conv", "", in, at));
    }

    /* ConvTranspose: 2x2 stride 2 (3D-UNet upsampling), 3x3 s2 p1 output_padding 1, grouped */
    static const conv_p deconvs[] = {
        {2, 1, 32, 16, 7, 2, 2, 0, 0, 1, 1, true, NULL},
        {3, 1, 16, 8, 4, 2, 2, 0, 0, 1, 1, true, NULL},
        {2, 2, 16, 16, 5, 3, 2, 1, 1, 1, 2, false, NULL},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(deconvs); i++) {
        char label[96];
        snprintf(label, sizeof label, "ConvTranspose%dd C%lld->%lld k%lld s%lld g%lld",
                 deconvs[i].nsp, (long long)deconvs[i].C, (long long)deconvs[i].M,
                 (long long)deconvs[i].k, (long long)deconvs[i].stride,
                 (long long)deconvs[i].group);
        ib_value_id y = conv_node(b, &deconvs[i], "ConvTranspose", "", IB_VALUE_NONE, NULL, true);
        RUN1(b, label, BO_BF16, y);
    }
    {
        int64_t xd[4] = {1, 8, 5, 5}, wd[4] = {8, 4, 3, 3};
        ib_value_id in[2] = {bo_input(b, F32, 4, xd, -1, 1), bo_const(b, F32, 4, wd, -1, 1)};
        ib_attr at[] = {INTS("strides", 2, 2), INTS("pads", 1, 1, 1, 1),
                        INTS("output_padding", 1, 1)};
        RUN1(b, "ConvTranspose output_padding", BO_BF16, NODE(b, "ConvTranspose", "", in, at));
    }

    /* FusedConv: activation, residual Z + Relu (ResNet), LeakyRelu, Clip (relu6) */
    conv_p p = {2, 1, 16, 32, 10, 3, 1, 1, 1, 1, 1, true, NULL};
    RUN1(b, "FusedConv Relu", BO_INT8 | BO_BF16,
         conv_node(b, &p, "FusedConv", "inferbench", IB_VALUE_NONE, "Relu", false));
    {
        ib_value_id z = IN(b, 1, 32, 10, 10);
        RUN1(b, "FusedConv residual+Relu", BO_INT8 | BO_BF16,
             conv_node(b, &p, "FusedConv", "inferbench", z, "Relu", false));
    }
    {
        conv_p q = {2, 2, 16, 16, 8, 1, 1, 0, 0, 1, 1, false, NULL};
        ib_value_id z = IN(b, 2, 16, 8, 8);
        RUN1(b, "FusedConv residual no bias", BO_INT8 | BO_BF16,
             conv_node(b, &q, "FusedConv", "inferbench", z, NULL, false));
    }
    RUN1(b, "FusedConv LeakyRelu", BO_INT8 | BO_BF16,
         conv_node(b, &p, "FusedConv", "inferbench", IB_VALUE_NONE, "LeakyRelu", false));
    {
        ib_value_id y = conv_node(b, &p, "FusedConv", "inferbench", IB_VALUE_NONE, "Clip", false);
        /* clip_min/clip_max on the node just built */
        ib_node *n = &b->g->nodes.data[b->g->nodes.len - 1];
        ib_attr extra[2] = {bo_af("clip_min", 0.0f), bo_af("clip_max", 0.5f)};
        ib_attr *all = ib_arena_alloc(&b->g->arena, (n->n_attrs + 2) * sizeof *all);
        memcpy(all, n->attrs, n->n_attrs * sizeof *all);
        memcpy(all + n->n_attrs, extra, sizeof extra);
        n->attrs = all;
        n->n_attrs += 2;
        RUN1(b, "FusedConv Clip(0, 0.5)", BO_INT8 | BO_BF16, y);
    }
}

/* ---- matmul family ------------------------------------------------------------- */

void bo_cases_matmul(bo *b)
{
    {
        ib_value_id in[2] = {IN(b, 24, 64), CONST(b, 64, 48)};
        RUN1(b, "MatMul 2D const B", BO_INT8 | BO_BF16, NODE0(b, "MatMul", "", in));
    }
    {
        ib_value_id in[2] = {IN(b, 2, 3, 16, 32), IN(b, 2, 3, 32, 8)};
        RUN1(b, "MatMul 4D runtime B", BO_BF16, NODE0(b, "MatMul", "", in));
    }
    {
        ib_value_id in[2] = {IN(b, 4, 10, 32), CONST(b, 32, 20)};
        RUN1(b, "MatMul 3D x 2D (broadcast B)", BO_INT8 | BO_BF16, NODE0(b, "MatMul", "", in));
    }
    {
        ib_value_id in[2] = {IN(b, 2, 1, 6, 16), IN(b, 3, 16, 5)};
        RUN1(b, "MatMul batch broadcast both", BO_BF16, NODE0(b, "MatMul", "", in));
    }
    {
        ib_value_id in[2] = {IN(b, 32), CONST(b, 32, 16)};
        RUN1(b, "MatMul 1D x 2D", BO_INT8 | BO_BF16, NODE0(b, "MatMul", "", in));
    }
    {
        ib_value_id in[2] = {IN(b, 3, 7, 32), IN(b, 32)};
        RUN1(b, "MatMul 3D x 1D", BO_BF16, NODE0(b, "MatMul", "", in));
    }
    {
        ib_value_id in[3] = {IN(b, 16, 64), CONST(b, 40, 64), CONST(b, 40)};
        ib_attr at[] = {bo_ai("transB", 1)};
        RUN1(b, "Gemm transB bias", BO_INT8 | BO_BF16, NODE(b, "Gemm", "", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 64, 12), CONST(b, 64, 40), CONST(b, 12, 40)};
        ib_attr at[] = {bo_ai("transA", 1), bo_af("alpha", 0.5f), bo_af("beta", 2.0f)};
        RUN1(b, "Gemm transA alpha beta C[M,N]", BO_INT8 | BO_BF16, NODE(b, "Gemm", "", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 8, 32), CONST(b, 32, 24), IN(b, 8, 1)};
        RUN1(b, "Gemm runtime C[M,1]", BO_INT8 | BO_BF16, NODE0(b, "Gemm", "", in));
    }
    {
        ib_value_id in[2] = {IN(b, 8, 32), IN(b, 24, 32)};
        ib_attr at[] = {bo_ai("transB", 1), bo_af("alpha", 0.25f)};
        RUN1(b, "Gemm runtime B no C", BO_BF16, NODE(b, "Gemm", "", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 2, 24, 64), CONST(b, 64, 96), CONST(b, 96)};
        ib_attr at[] = {bo_as("activation", "Gelu")};
        RUN1(b, "FusedMatMul bias Gelu (BERT FFN)", BO_INT8 | BO_BF16,
             NODE(b, "FusedMatMul", "inferbench", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 24, 64), CONST(b, 64, 32), CONST(b, 32)};
        ib_attr at[] = {bo_as("activation", "Relu")};
        RUN1(b, "FusedMatMul bias Relu (DLRM MLP)", BO_INT8 | BO_BF16,
             NODE(b, "FusedMatMul", "inferbench", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 24, 64), CONST(b, 32, 64), IN(b, 24, 32)};
        ib_attr at[] = {bo_ai("transB", 1), bo_af("alpha", 2.0f), bo_as("activation", "Gelu"),
                        bo_as("approximate", "tanh")};
        RUN1(b, "FusedMatMul transB alpha runtime bias GeluTanh", BO_INT8 | BO_BF16,
             NODE(b, "FusedMatMul", "inferbench", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 2, 4, 12, 16), IN(b, 2, 4, 16, 12), IN(b, 2, 4, 12, 16)};
        ib_attr at[] = {bo_af("scale", 0.25f)};
        RUN1(b, "Attention no mask", BO_BF16, NODE(b, "Attention", "inferbench", in, at));
    }
    {
        ib_value_id in[4] = {IN(b, 2, 4, 12, 16), IN(b, 2, 4, 16, 20), IN(b, 2, 4, 20, 8),
                             bo_input(b, F32, 4, DIMS(2, 1, 1, 20), -3, 0)};
        ib_attr at[] = {bo_af("scale", 0.125f)};
        RUN1(b, "Attention with mask [N,1,1,Sk]", BO_BF16,
             NODE(b, "Attention", "inferbench", in, at));
    }
    /* heads packed in the last dim (compile_fuse_attn.c's head split/merge fusion) */
    {
        ib_value_id in[3] = {IN(b, 2, 12, 32), IN(b, 2, 20, 32), IN(b, 2, 20, 16)};
        ib_attr at[] = {bo_af("scale", 0.25f), bo_ai("heads", 4)};
        RUN1(b, "MultiHeadAttention no mask", BO_BF16,
             NODE(b, "MultiHeadAttention", "inferbench", in, at));
    }
    {
        ib_value_id in[4] = {IN(b, 2, 12, 32), IN(b, 2, 20, 32), IN(b, 2, 20, 16),
                             bo_input(b, F32, 4, DIMS(2, 1, 1, 20), -3, 0)};
        ib_attr at[] = {bo_af("scale", 0.125f), bo_ai("heads", 4)};
        RUN1(b, "MultiHeadAttention with mask [N,1,1,Sk]", BO_BF16,
             NODE(b, "MultiHeadAttention", "inferbench", in, at));
    }
    {
        ib_value_id in[4] = {IN(b, 2, 12, 32), IN(b, 2, 20, 32), IN(b, 2, 20, 16),
                             IN(b, 2, 4, 12, 20)};
        ib_attr at[] = {bo_af("scale", 0.5f), bo_ai("heads", 4)};
        RUN1(b, "MultiHeadAttention with mask [N,h,S,Sk]", BO_BF16,
             NODE(b, "MultiHeadAttention", "inferbench", in, at));
    }
}

/* ---- pooling and normalisation ---------------------------------------------------- */

static void pool_case(bo *b, const char *label, const char *op, ib_value_id x, const ib_attr *at,
                      uint32_t na)
{
    ib_value_id in[1] = {x};
    RUN1(b, label, 0, bo_node(b, op, "", in, 1, at, na, 1, NULL));
}

void bo_cases_pool_norm(bo *b)
{
    ib_attr a1[] = {INTS("kernel_shape", 3, 3), INTS("strides", 2, 2), INTS("pads", 1, 1, 1, 1)};
    pool_case(b, "MaxPool 3x3 s2 p1", "MaxPool", IN(b, 2, 16, 13, 13), a1, 3);
    ib_attr a2[] = {INTS("kernel_shape", 2, 2), INTS("strides", 2, 2)};
    pool_case(b, "AveragePool 2x2 s2", "AveragePool", IN(b, 1, 8, 10, 10), a2, 2);
    ib_attr a3[] = {INTS("kernel_shape", 3, 3), INTS("strides", 2, 2), INTS("pads", 1, 1, 1, 1),
                    bo_ai("count_include_pad", 1)};
    pool_case(b, "AveragePool count_include_pad", "AveragePool", IN(b, 1, 8, 9, 9), a3, 4);
    ib_attr a4[] = {INTS("kernel_shape", 3, 3), INTS("strides", 2, 2), bo_ai("ceil_mode", 1)};
    pool_case(b, "MaxPool ceil_mode", "MaxPool", IN(b, 1, 4, 10, 10), a4, 3);
    pool_case(b, "AveragePool ceil_mode", "AveragePool", IN(b, 1, 4, 10, 10), a4, 3);
    ib_attr a5[] = {INTS("kernel_shape", 2, 2, 2), INTS("strides", 2, 2, 2)};
    pool_case(b, "MaxPool 3D", "MaxPool", IN(b, 1, 4, 6, 6, 6), a5, 2);
    ib_attr a6[] = {INTS("kernel_shape", 3, 3), INTS("dilations", 2, 2)};
    pool_case(b, "MaxPool dilated", "MaxPool", IN(b, 1, 4, 11, 11), a6, 2);
    pool_case(b, "GlobalAveragePool", "GlobalAveragePool", IN(b, 2, 24, 7, 7), NULL, 0);
    pool_case(b, "GlobalMaxPool", "GlobalMaxPool", IN(b, 2, 24, 5, 5), NULL, 0);
    ib_attr a7[] = {INTS("kernel_shape", 3), INTS("pads", 1, 1)};
    pool_case(b, "AveragePool 1D", "AveragePool", IN(b, 2, 8, 12), a7, 2);

    for (int nd = 2; nd <= 5; nd++) {
        int64_t xd[5] = {2, 12, 5, 4, 3};
        ib_value_id in[5] = {bo_input(b, F32, nd, xd, -2, 2), CONST(b, 12), CONST(b, 12),
                             CONST(b, 12), bo_const(b, F32, 1, DIMS(12), 0.5, 2)};
        ib_attr at[] = {bo_af("epsilon", 1e-3f)};
        char label[48];
        snprintf(label, sizeof label, "BatchNormalization %dD", nd);
        RUN1(b, label, 0, NODE(b, "BatchNormalization", "", in, at));
    }
    {
        ib_value_id in[3] = {bo_input(b, F32, 5, DIMS(1, 16, 6, 6, 6), -2, 3), CONST(b, 16),
                             CONST(b, 16)};
        RUN1(b, "InstanceNormalization 3D N1", 0, NODE0(b, "InstanceNormalization", "", in));
    }
    {
        ib_value_id in[3] = {bo_input(b, F32, 4, DIMS(3, 5, 7, 6), -2, 3), CONST(b, 5),
                             CONST(b, 5)};
        ib_attr at[] = {bo_af("epsilon", 1e-2f)};
        RUN1(b, "InstanceNormalization 2D N3", 0, NODE(b, "InstanceNormalization", "", in, at));
    }
    /* inferbench.InstanceNorm (compile_fuse_inorm.c): our two-pass kernel with the
     * activation applied in the second pass */
    {
        ib_value_id in[3] = {bo_input(b, F32, 5, DIMS(2, 3, 5, 4, 6), -2, 3), CONST(b, 3),
                             CONST(b, 3)};
        ib_attr at[] = {bo_as("activation", "Relu")};
        b->min_kernel_steps = 1;
        RUN1(b, "InstanceNorm Relu 3D N2", 0, NODE(b, "InstanceNorm", "inferbench", in, at));
    }
    {
        ib_value_id in[3] = {bo_input(b, F32, 4, DIMS(1, 5, 9, 7), -3, 1), CONST(b, 5),
                             CONST(b, 5)};
        ib_attr at[] = {bo_as("activation", "LeakyRelu"), bo_af("activation_alpha", 0.2f),
                        bo_af("epsilon", 1e-3f)};
        b->min_kernel_steps = 1;
        RUN1(b, "InstanceNorm LeakyRelu 2D", 0, NODE(b, "InstanceNorm", "inferbench", in, at));
    }
    {
        /* a mean far from zero next to the spread: E[x^2] - E[x]^2 in float32 would cancel */
        ib_value_id in[3] = {bo_input(b, F32, 5, DIMS(1, 4, 8, 8, 8), 1000, 1001), CONST(b, 4),
                             CONST(b, 4)};
        b->min_kernel_steps = 1;
        RUN1(b, "InstanceNorm large mean", 0, NODE0(b, "InstanceNorm", "inferbench", in));
    }
    {
        ib_value_id in[3] = {IN(b, 2, 24, 64), CONST(b, 64), CONST(b, 64)};
        ib_attr at[] = {bo_ai("axis", -1), bo_af("epsilon", 1e-12f)};
        RUN1(b, "LayerNormalization last axis", 0, NODE(b, "LayerNormalization", "", in, at));
    }
    {
        ib_value_id in[2] = {IN(b, 3, 4, 5, 6), CONST(b, 5, 6)};
        ib_attr at[] = {bo_ai("axis", 2)};
        RUN1(b, "LayerNormalization axis 2 no bias", 0, NODE(b, "LayerNormalization", "", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 16, 48), CONST(b, 48), CONST(b, 48)};
        ib_attr at[] = {bo_ai("axis", -1), bo_af("epsilon", 1e-5f)};
        RUN1(b, "inferbench.LayerNorm", 0, NODE(b, "LayerNorm", "inferbench", in, at));
    }
}

/* ---- unary elementwise and softmax ----------------------------------------------- */

void bo_cases_eltwise(bo *b)
{
    static const struct {
        const char *op;
        double lo, hi;
    } un[] = {
        {"Relu", -2, 2},     {"Sigmoid", -6, 6}, {"Tanh", -4, 4},     {"Exp", -5, 5},
        {"Log", 0.01, 10},   {"Sqrt", 0, 9},     {"Abs", -3, 3},      {"Neg", -3, 3},
        {"Reciprocal", 0.1, 4}, {"Softplus", -5, 5}, {"HardSwish", -5, 5}, {"Round", -5, 5},
        {"Erf", -3, 3},      {"Floor", -5, 5},   {"Ceil", -5, 5},     {"Sign", -2, 2},
        {"Identity", -1, 1},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(un); i++) {
        ib_value_id in[1] = {bo_input(b, F32, 4, DIMS(2, 17, 5, 3), un[i].lo, un[i].hi)};
        RUN1(b, un[i].op, 0, NODE0(b, un[i].op, "", in));
    }
    {
        ib_value_id in[1] = {bo_input(b, F32, 2, DIMS(33, 70), -3, 3)};
        ib_attr at[] = {bo_af("alpha", 0.2f)};
        RUN1(b, "LeakyRelu 0.2", 0, NODE(b, "LeakyRelu", "", in, at));
        in[0] = bo_input(b, F32, 2, DIMS(33, 70), -3, 3);
        RUN1(b, "Elu 0.2", 0, NODE(b, "Elu", "", in, at));
        in[0] = bo_input(b, F32, 2, DIMS(9, 31), -3, 3);
        ib_attr hs[] = {bo_af("alpha", 0.3f), bo_af("beta", 0.4f)};
        RUN1(b, "HardSigmoid", 0, NODE(b, "HardSigmoid", "", in, hs));
    }
    {
        float lo = -0.5f, hi = 0.75f;
        ib_value_id in[3] = {bo_input(b, F32, 3, DIMS(4, 9, 13), -2, 2),
                             bo_const_f32(b, 0, NULL, &lo), bo_const_f32(b, 0, NULL, &hi)};
        RUN1(b, "Clip (inputs)", 0, NODE0(b, "Clip", "", in));
    }
    {
        ib_value_id in[1] = {bo_input(b, F32, 3, DIMS(4, 9, 13), -4, 4)};
        RUN1(b, "inferbench.Gelu", 0, NODE0(b, "Gelu", "inferbench", in));
        in[0] = bo_input(b, F32, 3, DIMS(4, 9, 13), -4, 4);
        ib_attr at[] = {bo_as("approximate", "tanh")};
        RUN1(b, "inferbench.Gelu tanh", 0, NODE(b, "Gelu", "inferbench", in, at));
    }
    {
        float e = 2.0f;
        ib_value_id in[2] = {bo_input(b, F32, 2, DIMS(7, 19), 0.1, 3),
                             bo_const_f32(b, 0, NULL, &e)};
        RUN1(b, "Pow scalar exponent", 0, NODE0(b, "Pow", "", in));
        ib_value_id in2[2] = {bo_input(b, F32, 2, DIMS(7, 19), 0.1, 3),
                              bo_input(b, F32, 1, DIMS(19), -2, 2)};
        RUN1(b, "Pow tensor exponent", 0, NODE0(b, "Pow", "", in2));
    }
    {
        ib_value_id in[1] = {IN(b, 2, 3, 40)};
        RUN1(b, "Dropout (inference)", 0, NODE0(b, "Dropout", "", in));
    }
    /* Softmax family */
    int64_t axes[] = {-1, 1, 0};
    for (size_t i = 0; i < IB_ARRAY_LEN(axes); i++) {
        ib_value_id in[1] = {bo_input(b, F32, 3, DIMS(4, 6, 37), -5, 5)};
        ib_attr at[] = {bo_ai("axis", axes[i])};
        char label[48];
        snprintf(label, sizeof label, "Softmax axis %lld", (long long)axes[i]);
        RUN1(b, label, 0, NODE(b, "Softmax", "", in, at));
        in[0] = bo_input(b, F32, 3, DIMS(4, 6, 37), -5, 5);
        snprintf(label, sizeof label, "LogSoftmax axis %lld", (long long)axes[i]);
        RUN1(b, label, 0, NODE(b, "LogSoftmax", "", in, at));
    }
    {
        b->opset = 11; /* coerced to 2-D at axis */
        ib_value_id in[1] = {bo_input(b, F32, 3, DIMS(4, 6, 7), -5, 5)};
        ib_attr at[] = {bo_ai("axis", 1)};
        RUN1(b, "Softmax opset 11 axis 1", 0, NODE(b, "Softmax", "", in, at));
        b->opset = 0;
    }
}

/* ---- binary, comparison, logic, cast, concat ------------------------------------- */

static void bin_case(bo *b, const char *op, int na, const int64_t *da, int nb, const int64_t *db,
                     enum ib_dtype dt, double lo, double hi, const char *what)
{
    ib_value_id in[2] = {bo_input(b, dt, na, da, lo, hi), bo_input(b, dt, nb, db, lo, hi)};
    char label[96];
    snprintf(label, sizeof label, "%s %s %s", op, ib_dtype_name(dt), what);
    RUN1(b, label, 0, NODE0(b, op, "", in));
}

void bo_cases_binary(bo *b)
{
    static const char *const arith[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    for (size_t i = 0; i < IB_ARRAY_LEN(arith); i++) {
        const char *op = arith[i];
        double lo = !strcmp(op, "Div") ? 0.5 : -2, hi = 2;
        bin_case(b, op, 4, DIMS(2, 16, 5, 5), 4, DIMS(2, 16, 5, 5), F32, lo, hi, "same shape");
        bin_case(b, op, 4, DIMS(2, 16, 5, 5), 4, DIMS(1, 16, 1, 1), F32, lo, hi, "per channel");
        bin_case(b, op, 3, DIMS(3, 4, 20), 1, DIMS(20), F32, lo, hi, "row vector");
        b->min_kernel_steps = 1; /* our kernel, not oneDNN's reference one (dnnl_binary.c) */
        bin_case(b, op, 3, DIMS(3, 4, 20), 3, DIMS(3, 4, 1), F32, lo, hi, "one per row (mask)");
        bin_case(b, op, 0, NULL, 3, DIMS(3, 4, 5), F32, lo, hi, "scalar first (swapped)");
        bin_case(b, op, 2, DIMS(6, 1), 2, DIMS(1, 7), F32, lo, hi, "both broadcast");
        bin_case(b, op, 2, DIMS(6, 9), 2, DIMS(6, 9), IB_DTYPE_INT64, 1, 50, "int64");
    }
    bin_case(b, "Add", 2, DIMS(6, 9), 1, DIMS(9), IB_DTYPE_INT32, -50, 50, "int32 broadcast");
    bin_case(b, "Mod", 2, DIMS(6, 9), 1, DIMS(9), IB_DTYPE_INT64, 1, 20, "int64");
    static const char *const cmp[] = {"Equal", "Less", "Greater", "LessOrEqual",
                                      "GreaterOrEqual"};
    for (size_t i = 0; i < IB_ARRAY_LEN(cmp); i++) {
        bin_case(b, cmp[i], 2, DIMS(5, 8), 1, DIMS(8), IB_DTYPE_INT64, 0, 3, "int64");
        bin_case(b, cmp[i], 2, DIMS(5, 8), 2, DIMS(5, 8), F32, -1, 1, "");
    }
    static const char *const logic[] = {"And", "Or", "Xor"};
    for (size_t i = 0; i < IB_ARRAY_LEN(logic); i++)
        bin_case(b, logic[i], 2, DIMS(4, 9), 2, DIMS(1, 9), IB_DTYPE_BOOL, 0, 1, "");
    {
        ib_value_id in[1] = {bo_input(b, IB_DTYPE_BOOL, 2, DIMS(4, 9), 0, 1)};
        RUN1(b, "Not", 0, NODE0(b, "Not", "", in));
    }
    {
        ib_value_id in[3] = {bo_input(b, IB_DTYPE_BOOL, 3, DIMS(2, 1, 9), 0, 1),
                             IN(b, 2, 5, 9), IN(b, 9)};
        RUN1(b, "Where f32 broadcast", 0, NODE0(b, "Where", "", in));
        ib_value_id in2[3] = {bo_input(b, IB_DTYPE_BOOL, 2, DIMS(3, 4), 0, 1),
                              bo_input(b, IB_DTYPE_INT64, 2, DIMS(3, 4), -9, 9),
                              bo_input(b, IB_DTYPE_INT64, 0, NULL, -9, 9)};
        RUN1(b, "Where int64", 0, NODE0(b, "Where", "", in2));
    }
    static const struct {
        enum ib_dtype from, to;
        double lo, hi;
    } casts[] = {
        {IB_DTYPE_FLOAT32, IB_DTYPE_INT64, -100, 100}, {IB_DTYPE_INT64, IB_DTYPE_FLOAT32, -1e6, 1e6},
        {IB_DTYPE_INT32, IB_DTYPE_INT64, -1e5, 1e5},   {IB_DTYPE_BOOL, IB_DTYPE_FLOAT32, 0, 1},
        {IB_DTYPE_FLOAT32, IB_DTYPE_BOOL, -1, 1},      {IB_DTYPE_INT64, IB_DTYPE_INT32, -1e5, 1e5},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(casts); i++) {
        ib_value_id in[1] = {bo_input(b, casts[i].from, 2, DIMS(7, 11), casts[i].lo, casts[i].hi)};
        ib_attr at[] = {bo_ai("to", casts[i].to)};
        char label[64];
        snprintf(label, sizeof label, "Cast %s->%s", ib_dtype_name(casts[i].from),
                 ib_dtype_name(casts[i].to));
        RUN1(b, label, BO_EXACT, NODE(b, "Cast", "", in, at));
    }
    {
        ib_value_id in[3] = {IN(b, 2, 16, 5, 5), IN(b, 2, 8, 5, 5), IN(b, 2, 3, 5, 5)};
        ib_attr at[] = {bo_ai("axis", 1)};
        RUN1(b, "Concat axis 1", BO_EXACT, NODE(b, "Concat", "", in, at));
        ib_value_id in2[2] = {IN(b, 3, 20), IN(b, 5, 20)};
        ib_attr at0[] = {bo_ai("axis", 0)};
        RUN1(b, "Concat axis 0", BO_EXACT, NODE(b, "Concat", "", in2, at0));
        ib_value_id in3[2] = {IN(b, 4, 2, 7), IN(b, 4, 2, 3)};
        ib_attr atm[] = {bo_ai("axis", -1)};
        RUN1(b, "Concat axis -1", BO_EXACT, NODE(b, "Concat", "", in3, atm));
    }
}

/* ---- shape ops, gather, reductions --------------------------------------------------- */

void bo_cases_shape(bo *b)
{
    {
        ib_value_id in[2] = {IN(b, 2, 12, 5), bo_const_i64(b, 1, DIMS(3), DIMS(4, -1, 3))};
        RUN1(b, "Reshape", BO_EXACT, NODE0(b, "Reshape", "", in));
        ib_value_id in1[1] = {IN(b, 2, 3, 4, 5)};
        ib_attr at[] = {bo_ai("axis", 2)};
        RUN1(b, "Flatten axis 2", BO_EXACT, NODE(b, "Flatten", "", in1, at));
        ib_value_id in2[2] = {IN(b, 3, 1, 5, 1), bo_const_i64(b, 1, DIMS(2), DIMS(1, 3))};
        RUN1(b, "Squeeze", BO_EXACT, NODE0(b, "Squeeze", "", in2));
        ib_value_id in3[2] = {IN(b, 3, 5), bo_const_i64(b, 1, DIMS(2), DIMS(0, 3))};
        RUN1(b, "Unsqueeze", BO_EXACT, NODE0(b, "Unsqueeze", "", in3));
        ib_value_id in4[2] = {bo_input(b, IB_DTYPE_INT64, 2, DIMS(4, 6), -99, 99),
                              bo_const_i64(b, 1, DIMS(2), DIMS(3, 8))};
        RUN1(b, "Reshape int64", BO_EXACT, NODE0(b, "Reshape", "", in4));
    }
    {
        ib_value_id in[1] = {IN(b, 2, 3, 4, 5)};
        ib_attr at[] = {INTS("perm", 0, 2, 1, 3)};
        RUN1(b, "Transpose 0213 (attention heads)", BO_EXACT, NODE(b, "Transpose", "", in, at));
        in[0] = IN(b, 2, 3, 4, 5);
        ib_attr at2[] = {INTS("perm", 3, 0, 2, 1)};
        RUN1(b, "Transpose 3021", BO_EXACT, NODE(b, "Transpose", "", in, at2));
        in[0] = IN(b, 6, 7);
        RUN1(b, "Transpose 2D default perm", BO_EXACT, NODE0(b, "Transpose", "", in));
        in[0] = bo_input(b, IB_DTYPE_INT64, 3, DIMS(2, 3, 4), -9, 9);
        ib_attr at3[] = {INTS("perm", 2, 0, 1)};
        RUN1(b, "Transpose int64", BO_EXACT, NODE(b, "Transpose", "", in, at3));
    }
    {
        ib_value_id in[5] = {IN(b, 4, 10, 12), bo_const_i64(b, 1, DIMS(2), DIMS(1, -2)),
                             bo_const_i64(b, 1, DIMS(2), DIMS(9, 0)),
                             bo_const_i64(b, 1, DIMS(2), DIMS(1, 2)),
                             bo_const_i64(b, 1, DIMS(2), DIMS(2, -3))};
        RUN1(b, "Slice steps 2 and -3", BO_EXACT, NODE0(b, "Slice", "", in));
        ib_value_id in2[3] = {IN(b, 3, 8), bo_const_i64(b, 1, DIMS(1), DIMS(2)),
                              bo_const_i64(b, 1, DIMS(1), DIMS(100))};
        RUN1(b, "Slice clamped end", BO_EXACT, NODE0(b, "Slice", "", in2));
    }
    {
        ib_value_id in[2] = {IN(b, 3, 12, 2), bo_const_i64(b, 1, DIMS(3), DIMS(2, 6, 4))};
        ib_attr at[] = {bo_ai("axis", 1)};
        ib_value_id outs[3];
        bo_node(b, "Split", "", in, 2, at, 1, 3, outs);
        bo_run(b, "Split 2/6/4", BO_EXACT, outs, 3);
    }
    {
        ib_value_id in[2] = {IN(b, 3, 1, 5), bo_const_i64(b, 1, DIMS(4), DIMS(2, 3, 4, 5))};
        RUN1(b, "Expand", BO_EXACT, NODE0(b, "Expand", "", in));
    }
    {
        ib_value_id in[2] = {IN(b, 50, 16), bo_input(b, IB_DTYPE_INT64, 2, DIMS(4, 6), -50, 49)};
        RUN1(b, "Gather axis 0 (embedding rows, negative indices)", BO_EXACT,
             NODE0(b, "Gather", "", in));
        ib_value_id in2[2] = {IN(b, 3, 9, 4), bo_input(b, IB_DTYPE_INT32, 1, DIMS(5), 0, 8)};
        ib_attr at[] = {bo_ai("axis", 1)};
        RUN1(b, "Gather axis 1 int32 indices", BO_EXACT, NODE(b, "Gather", "", in2, at));
        ib_value_id in3[2] = {bo_input(b, IB_DTYPE_INT64, 1, DIMS(10), -9, 9),
                              bo_input(b, IB_DTYPE_INT64, 0, NULL, 0, 9)};
        RUN1(b, "Gather scalar index int64 data", BO_EXACT, NODE0(b, "Gather", "", in3));
        /* inferbench.GatherConcat: lookup, plain part, lookup (int32 ids, negative ids) */
        ib_value_id in4[5] = {IN(b, 40, 16), bo_input(b, IB_DTYPE_INT64, 1, DIMS(9), -40, 39),
                              IN(b, 9, 5), IN(b, 6, 3),
                              bo_input(b, IB_DTYPE_INT32, 1, DIMS(9), 0, 5)};
        ib_attr at4[] = {INTS("parts", 1, 0, 1)};
        RUN1(b, "GatherConcat (2 lookups + a plain part)", BO_EXACT,
             NODE(b, "GatherConcat", "inferbench", in4, at4));
        /* inferbench.DotInteraction: 5 features of 20 (a remainder past 16), 7 pairs (one
         * group of 4 and 3 more), a negative index; then 3-D X with int32 indices */
        ib_value_id in5[2] = {IN(b, 6, 100),
                              bo_const_i64(b, 1, DIMS(7), DIMS(5, 10, 11, -1, 0, 23, 17))};
        ib_attr at5[] = {bo_ai("features", 5)};
        RUN1(b, "DotInteraction 5 features x 20, 7 pairs", 0,
             NODE(b, "DotInteraction", "inferbench", in5, at5));
        ib_value_id in6[2] = {IN(b, 4, 3, 16), bo_const(b, IB_DTYPE_INT32, 1, DIMS(9), 0, 8)};
        ib_attr at6[] = {bo_ai("features", 3)};
        RUN1(b, "DotInteraction 3-D X, int32 indices", 0,
             NODE(b, "DotInteraction", "inferbench", in6, at6));
    }
    {
        /* inferbench.SSDPostprocess: 2 images, 64 anchors, 4 classes (logits in [-2, 2], so
         * many pass 0.05), max_output 100 cuts inside the candidates; rows and counts */
        ib_value_id in[3] = {bo_input(b, F32, 3, DIMS(2, 4, 64), -1, 1),
                             bo_input(b, F32, 3, DIMS(2, 4, 64), -2, 2),
                             bo_const(b, F32, 2, DIMS(64, 4), 0.05, 0.6)};
        ib_attr at[] = {bo_ai("max_output", 100), bo_ai("top_per_class", 40)};
        ib_value_id outs[2];
        bo_node(b, "SSDPostprocess", "inferbench", in, 3, at, 2, 2, outs);
        bo_run(b, "SSDPostprocess 2 x 64 anchors x 4 classes", 0, outs, 2);
    }
    {
        /* inferbench.WindowAccumulate: 2 classes, a 4x3x5 window at (1, 2, 0) of a 6x5x7
         * volume (the window's last row ends at the volume's edge in y) */
        ib_value_id in[4] = {bo_input(b, F32, 5, DIMS(1, 3, 6, 5, 7), -1, 1),
                             bo_input(b, F32, 5, DIMS(1, 2, 4, 3, 5), -3, 3),
                             bo_const_i64(b, 1, DIMS(3), DIMS(1, 2, 0)),
                             bo_input(b, F32, 5, DIMS(1, 1, 4, 3, 5), 0.1, 1)};
        RUN1(b, "WindowAccumulate 2 classes, 4x3x5 window in 6x5x7", 0,
             NODE0(b, "WindowAccumulate", "inferbench", in));
    }
    static const char *const red[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                      "ReduceProd", "ReduceL1",  "ReduceL2", "ReduceSumSquare"};
    for (size_t i = 0; i < IB_ARRAY_LEN(red); i++) {
        bool prod = !strcmp(red[i], "ReduceProd");
        ib_value_id x = bo_input(b, F32, 3, DIMS(4, 6, 8), prod ? 0.8 : -2, prod ? 1.2 : 2);
        ib_value_id axes = bo_const_i64(b, 1, DIMS(1), DIMS(-1));
        char label[64];
        if (!strcmp(red[i], "ReduceSum")) { /* opset 13: axes is an input */
            ib_value_id in[2] = {x, axes};
            ib_attr at[] = {bo_ai("keepdims", 0)};
            snprintf(label, sizeof label, "%s last axis keepdims 0", red[i]);
            RUN1(b, label, 0, NODE(b, red[i], "", in, at));
        } else {
            ib_value_id in[1] = {x};
            ib_attr at[] = {INTS("axes", 0, 2)};
            snprintf(label, sizeof label, "%s axes 0,2", red[i]);
            RUN1(b, label, 0, NODE(b, red[i], "", in, at));
        }
    }
    { /* over the spatial axes: the cpu's global average pool kernel (plain input) */
        ib_value_id in[1] = {IN(b, 2, 40, 5, 3)};
        ib_attr at[] = {INTS("axes", 2, 3)};
        RUN1(b, "ReduceMean spatial axes 2,3 keepdims 1", 0, NODE(b, "ReduceMean", "", in, at));
    }
    {
        ib_value_id in[1] = {IN(b, 5, 7, 3)};
        ib_attr at[] = {bo_ai("axis", 1), bo_ai("keepdims", 0)};
        RUN1(b, "ArgMax axis 1", 0, NODE(b, "ArgMax", "", in, at));
        in[0] = IN(b, 5, 7, 3);
        ib_attr at2[] = {bo_ai("axis", -1), bo_ai("select_last_index", 1)};
        RUN1(b, "ArgMin last axis", 0, NODE(b, "ArgMin", "", in, at2));
    }
}

/* ---- LSTM ------------------------------------------------------------------------ */

static void lstm_case(bo *b, const char *dir, int64_t T, int64_t N, int64_t I, int64_t H,
                      bool init, bool all_outs)
{
    int64_t D = !strcmp(dir, "bidirectional") ? 2 : 1;
    ib_value_id in[7] = {IN(b, T, N, I),
                         bo_const(b, F32, 3, DIMS(D, 4 * H, I), -0.4, 0.4),
                         bo_const(b, F32, 3, DIMS(D, 4 * H, H), -0.4, 0.4),
                         bo_const(b, F32, 2, DIMS(D, 8 * H), -0.2, 0.2),
                         IB_VALUE_NONE,
                         init ? IN(b, D, N, H) : IB_VALUE_NONE,
                         init ? IN(b, D, N, H) : IB_VALUE_NONE};
    ib_attr at[] = {bo_as("direction", dir), bo_ai("hidden_size", H)};
    ib_value_id outs[3];
    bo_node(b, "LSTM", "", in, init ? 7 : 4, at, 2, 3, outs);
    /* one direction, f32: the input projections as a matmul and our recurrence kernel
     * (cpu_kernels_rnn.c at batch <= 4; above, cpu_kernels_rnn512.c when H is a multiple
     * of 16 and the CPU has AVX-512); else oneDNN's LSTM */
    if (D == 1 && (N <= 4 || (H % 16 == 0 && cpu_avx512f()))) {
        b->min_kernel_steps = 1;
        b->kernel_steps_not_bf16 = true;
    }
    char label[96];
    snprintf(label, sizeof label, "LSTM %s T%lld N%lld I%lld H%lld%s", dir, (long long)T,
             (long long)N, (long long)I, (long long)H, init ? " init" : "");
    bo_run(b, label, BO_BF16, outs, all_outs ? 3 : 1);
}

void bo_cases_rnn(bo *b)
{
    lstm_case(b, "forward", 7, 2, 12, 16, false, true);
    lstm_case(b, "forward", 5, 3, 20, 8, true, true);
    lstm_case(b, "reverse", 6, 2, 10, 12, true, true);
    lstm_case(b, "bidirectional", 4, 2, 8, 16, true, true);
    lstm_case(b, "forward", 9, 1, 24, 32, false, false); /* RNN-T: batch 1, Y only */
    /* batches above 4: the packed kernel's row blocks of 6 and their tails, several
     * blocks of 16 hidden units split between threads, both directions */
    lstm_case(b, "forward", 4, 6, 12, 16, true, true);
    lstm_case(b, "forward", 5, 7, 24, 32, true, true);
    lstm_case(b, "reverse", 4, 5, 8, 16, true, true);
    lstm_case(b, "forward", 3, 16, 20, 48, false, true);
    lstm_case(b, "forward", 3, 11, 9, 24, true, true); /* H not a multiple of 16: oneDNN */
    /* no bias, H not a multiple of 16, only Y_h and Y_c */
    {
        ib_value_id in[3] = {IN(b, 3, 1, 20), bo_const(b, F32, 3, DIMS(1, 160, 20), -0.4, 0.4),
                             bo_const(b, F32, 3, DIMS(1, 160, 40), -0.4, 0.4)};
        ib_attr at[] = {bo_ai("hidden_size", 40)};
        ib_value_id outs[3];
        bo_node(b, "LSTM", "", in, 3, at, 1, 3, outs);
        b->min_kernel_steps = 1;
        b->kernel_steps_not_bf16 = true;
        bo_run(b, "LSTM forward T3 N1 H40 no bias, Y_h Y_c", BO_BF16, outs + 1, 2);
    }
}

/* ---- multi-node subgraphs: layouts propagate between oneDNN ops ------------------ */

void bo_cases_chains(bo *b)
{
    /* ResNet-like block: Conv-Relu-MaxPool-FusedConv(residual)-GAP-Flatten-Gemm */
    {
        ib_value_id x = IN(b, 2, 3, 16, 16);
        ib_value_id c1in[3] = {x, bo_const(b, F32, 4, DIMS(16, 3, 3, 3), -0.5, 0.5), CONST(b, 16)};
        ib_attr ca[] = {INTS("kernel_shape", 3, 3), INTS("pads", 1, 1, 1, 1)};
        ib_value_id c1 = NODE(b, "Conv", "", c1in, ca);
        ib_value_id r1[1] = {c1};
        ib_value_id a1 = NODE0(b, "Relu", "", r1);
        ib_value_id p1in[1] = {a1};
        ib_attr pa[] = {INTS("kernel_shape", 2, 2), INTS("strides", 2, 2)};
        ib_value_id p1 = NODE(b, "MaxPool", "", p1in, pa);
        ib_value_id c2in[4] = {p1, bo_const(b, F32, 4, DIMS(16, 16, 3, 3), -0.2, 0.2),
                               CONST(b, 16), p1};
        ib_attr fa[] = {INTS("kernel_shape", 3, 3), INTS("pads", 1, 1, 1, 1),
                        bo_as("activation", "Relu")};
        ib_value_id c2 = NODE(b, "FusedConv", "inferbench", c2in, fa);
        ib_value_id gin[1] = {c2};
        ib_value_id gap = NODE0(b, "GlobalAveragePool", "", gin);
        ib_value_id fin[1] = {gap};
        ib_value_id fl = NODE0(b, "Flatten", "", fin);
        ib_value_id gin2[3] = {fl, CONST(b, 10, 16), CONST(b, 10)};
        ib_attr ga[] = {bo_ai("transB", 1)};
        ib_value_id y = NODE(b, "Gemm", "", gin2, ga);
        ib_value_id outs[2] = {y, c2}; /* c2 is also read inside: a boundary in blocked layout */
        b->check_q8 = true; /* Relu reads c1 and MaxPool pools f32: nothing is held int8 */
        bo_run(b, "chain ResNet block", BO_INT8 | BO_BF16 | BO_CHAIN, outs, 2);
    }
    /* Conv (16 -> 32: nChw16c on AVX-512) - ReduceMean over H, W: the average pool reads
     * the blocked layout */
    {
        ib_value_id cin[3] = {IN(b, 2, 16, 9, 9), bo_const(b, F32, 4, DIMS(32, 16, 3, 3), -0.3, 0.3),
                              CONST(b, 32)};
        ib_attr ca[] = {INTS("kernel_shape", 3, 3), INTS("pads", 1, 1, 1, 1)};
        ib_value_id r[1] = {NODE(b, "Conv", "", cin, ca)};
        ib_attr ra[] = {INTS("axes", 2, 3), bo_ai("keepdims", 0)};
        RUN1(b, "chain Conv-ReduceMean spatial", BO_INT8 | BO_BF16 | BO_CHAIN,
             NODE(b, "ReduceMean", "", r, ra));
    }
    /* int8 held between convolutions (dnnl_conv.c): stem-MaxPool-bottleneck with a
     * projection (s8 residual under a u8 dst) and an identity block whose f32 output
     * (read by GlobalAveragePool) takes a u8 residual */
    {
        ib_value_id x = IN(b, 2, 3, 16, 16);
        ib_attr k3[] = {INTS("kernel_shape", 3, 3), INTS("pads", 1, 1, 1, 1),
                        bo_as("activation", "Relu")};
        ib_attr k1[] = {INTS("kernel_shape", 1, 1), bo_as("activation", "Relu")};
        ib_value_id s_in[3] = {x, bo_const(b, F32, 4, DIMS(8, 3, 3, 3), -0.5, 0.5), CONST(b, 8)};
        ib_value_id stem = NODE(b, "FusedConv", "inferbench", s_in, k3);
        ib_value_id p_in[1] = {stem};
        ib_attr pa[] = {INTS("kernel_shape", 2, 2), INTS("strides", 2, 2)};
        ib_value_id pool = NODE(b, "MaxPool", "", p_in, pa);
        ib_value_id a_in[3] = {pool, bo_const(b, F32, 4, DIMS(8, 8, 3, 3), -0.3, 0.3),
                               CONST(b, 8)};
        ib_value_id a = NODE(b, "FusedConv", "inferbench", a_in, k3);
        ib_value_id j_in[3] = {pool, bo_const(b, F32, 4, DIMS(8, 8, 1, 1), -1, 1),
                               CONST(b, 8)};
        ib_attr ja[] = {INTS("kernel_shape", 1, 1)};
        ib_value_id proj = NODE(b, "FusedConv", "inferbench", j_in, ja); /* no Relu: < 0 */
        /* small weights: the residuals dominate blk and blk2, so a residual read in the
         * wrong scale shows */
        ib_value_id c_in[4] = {a, bo_const(b, F32, 4, DIMS(8, 8, 3, 3), -0.1, 0.1), CONST(b, 8),
                               proj};
        ib_value_id blk = NODE(b, "FusedConv", "inferbench", c_in, k3);
        ib_value_id d_in[4] = {blk, bo_const(b, F32, 4, DIMS(8, 8, 1, 1), -0.2, 0.2),
                               CONST(b, 8), blk};
        ib_value_id blk2 = NODE(b, "FusedConv", "inferbench", d_in, k1);
        ib_value_id g_in[1] = {blk2};
        ib_value_id y = NODE0(b, "GlobalAveragePool", "", g_in);
        b->check_q8 = true;
        ib_value_id held[] = {stem, pool, a, proj, blk};
        memcpy(b->q8_held, held, sizeof held);
        b->n_q8_held = IB_ARRAY_LEN(held);
        ib_value_id outs[2] = {y, blk2};
        bo_run(b, "chain int8 held between convolutions", BO_INT8 | BO_BF16 | BO_CHAIN, outs, 2);
    }
    /* BERT-like layer tail: FusedMatMul-Add-LayerNorm-Gelu-MatMul */
    {
        ib_value_id x = IN(b, 2, 8, 32);
        ib_value_id m1in[3] = {x, CONST(b, 32, 32), CONST(b, 32)};
        ib_value_id m1 = NODE0(b, "FusedMatMul", "inferbench", m1in);
        ib_value_id ain[2] = {m1, x};
        ib_value_id ad = NODE0(b, "Add", "", ain);
        ib_value_id lin[3] = {ad, CONST(b, 32), CONST(b, 32)};
        ib_attr la[] = {bo_ai("axis", -1)};
        ib_value_id ln = NODE(b, "LayerNormalization", "", lin, la);
        ib_value_id gin[1] = {ln};
        ib_value_id ge = NODE0(b, "Gelu", "inferbench", gin);
        ib_value_id m2in[2] = {ge, CONST(b, 32, 16)};
        ib_value_id y = NODE0(b, "MatMul", "", m2in);
        RUN1(b, "chain BERT tail", BO_INT8 | BO_BF16 | BO_CHAIN, y);
    }
    /* 3D-UNet-like: Conv3d-InstanceNorm-LeakyRelu-ConvTranspose-Concat */
    {
        ib_value_id x = IN(b, 1, 4, 6, 6, 6);
        ib_value_id cin[3] = {x, bo_const(b, F32, 5, DIMS(8, 4, 3, 3, 3), -0.3, 0.3),
                              CONST(b, 8)};
        ib_attr ca[] = {INTS("kernel_shape", 3, 3, 3), INTS("pads", 1, 1, 1, 1, 1, 1),
                        INTS("strides", 2, 2, 2)};
        ib_value_id c = NODE(b, "Conv", "", cin, ca);
        ib_value_id iin[3] = {c, CONST(b, 8), CONST(b, 8)};
        ib_value_id in = NODE0(b, "InstanceNormalization", "", iin);
        ib_value_id lin[1] = {in};
        ib_attr la[] = {bo_af("alpha", 0.01f)};
        ib_value_id lr = NODE(b, "LeakyRelu", "", lin, la);
        ib_value_id din[3] = {lr, bo_const(b, F32, 5, DIMS(8, 4, 2, 2, 2), -0.3, 0.3),
                              CONST(b, 4)};
        ib_attr da[] = {INTS("kernel_shape", 2, 2, 2), INTS("strides", 2, 2, 2)};
        ib_value_id up = NODE(b, "ConvTranspose", "", din, da);
        ib_value_id ccin[2] = {up, x};
        ib_attr cca[] = {bo_ai("axis", 1)};
        ib_value_id y = NODE(b, "Concat", "", ccin, cca);
        /* the decoder stays channels-last: no reorders around ConvTranspose and Concat */
        b->cl_from[0] = lr;
        b->cl_to[0] = up;
        b->cl_from[1] = up;
        b->cl_to[1] = y;
        b->n_cl = 2;
        b->min_repeat_steps = 4; /* the ConvTranspose as four (kd, kh) matmuls */
        RUN1(b, "chain 3D-UNet level", BO_INT8 | BO_BF16 | BO_CHAIN, y);
    }
    /* the same level as the compiler fuses it: Conv3d-InstanceNorm(Relu)-ConvTranspose on a
     * channels-last volume (float32 and, at BF16, bfloat16 through the normalisation) */
    {
        ib_value_id x = IN(b, 1, 16, 8, 8, 8);
        ib_value_id cin[3] = {x, bo_const(b, F32, 5, DIMS(32, 16, 3, 3, 3), -0.2, 0.2),
                              CONST(b, 32)};
        ib_attr ca[] = {INTS("kernel_shape", 3, 3, 3), INTS("pads", 1, 1, 1, 1, 1, 1)};
        ib_value_id c = NODE(b, "Conv", "", cin, ca);
        ib_value_id iin[3] = {c, CONST(b, 32), CONST(b, 32)};
        ib_attr ia[] = {bo_as("activation", "Relu")};
        ib_value_id in = NODE(b, "InstanceNorm", "inferbench", iin, ia);
        ib_value_id din[3] = {in, bo_const(b, F32, 5, DIMS(32, 16, 2, 2, 2), -0.3, 0.3),
                              CONST(b, 16)};
        ib_attr da[] = {INTS("kernel_shape", 2, 2, 2), INTS("strides", 2, 2, 2)};
        ib_value_id y = NODE(b, "ConvTranspose", "", din, da);
        b->cl_from[0] = c;
        b->cl_to[0] = in;
        b->n_cl = 1;
        b->min_kernel_steps = 1;
        b->min_repeat_steps = 4;
        RUN1(b, "chain 3D-UNet fused norm", BO_INT8 | BO_BF16 | BO_CHAIN, y);
    }
    /* a full-width level: Conv3d-InstanceNorm(Relu)-Conv3d with rows of 32 voxels, both
     * convolutions Winograd at fp32 on AVX-512, the volume channels-last throughout */
    {
        ib_value_id x = IN(b, 1, 16, 4, 3, 32);
        ib_attr ca[] = {INTS("kernel_shape", 3, 3, 3), INTS("pads", 1, 1, 1, 1, 1, 1)};
        ib_value_id c1in[3] = {x, bo_const(b, F32, 5, DIMS(32, 16, 3, 3, 3), -0.2, 0.2),
                               CONST(b, 32)};
        ib_value_id c1 = NODE(b, "Conv", "", c1in, ca);
        ib_value_id iin[3] = {c1, CONST(b, 32), CONST(b, 32)};
        ib_attr ia[] = {bo_as("activation", "Relu")};
        ib_value_id in = NODE(b, "InstanceNorm", "inferbench", iin, ia);
        ib_value_id c2in[3] = {in, bo_const(b, F32, 5, DIMS(16, 32, 3, 3, 3), -0.2, 0.2),
                               CONST(b, 16)};
        ib_value_id y = NODE(b, "Conv", "", c2in, ca);
        b->cl_from[0] = c1;
        b->cl_to[0] = in;
        b->n_cl = 1;
        b->min_kernel_steps = cpu_wino_avx512() ? 3 : 0; /* two convolutions and the norm */
        b->kernel_steps_not_int8 = true;
        b->kernel_steps_not_bf16 = true; /* too few channels for Winograd at bf16 */
        RUN1(b, "chain 3D-UNet winograd level", BO_INT8 | BO_BF16 | BO_CHAIN, y);
    }
    /* two volumes, no bias: the matmul ConvTranspose walks n and d, and odd extents */
    {
        ib_value_id x = IN(b, 2, 16, 3, 5, 4);
        ib_value_id cin[3] = {x, bo_const(b, F32, 5, DIMS(32, 16, 3, 3, 3), -0.2, 0.2),
                              CONST(b, 32)};
        ib_attr ca[] = {INTS("kernel_shape", 3, 3, 3), INTS("pads", 1, 1, 1, 1, 1, 1)};
        ib_value_id c = NODE(b, "Conv", "", cin, ca);
        ib_value_id din[2] = {c, bo_const(b, F32, 5, DIMS(32, 24, 2, 2, 2), -0.3, 0.3)};
        ib_attr da[] = {INTS("kernel_shape", 2, 2, 2), INTS("strides", 2, 2, 2)};
        ib_value_id y = NODE(b, "ConvTranspose", "", din, da);
        b->min_repeat_steps = 4;
        RUN1(b, "chain ConvTranspose 2x N2 no bias", BO_INT8 | BO_BF16 | BO_CHAIN, y);
    }
    /* attention block: MatMul-Reshape-Transpose-Attention-Transpose-Reshape */
    {
        ib_value_id x = IN(b, 2, 6, 16);
        ib_value_id qin[2] = {x, CONST(b, 16, 16)};
        ib_value_id q = NODE0(b, "MatMul", "", qin);
        ib_value_id rin[2] = {q, bo_const_i64(b, 1, DIMS(4), DIMS(2, 6, 2, 8))};
        ib_value_id r = NODE0(b, "Reshape", "", rin);
        ib_value_id tin[1] = {r};
        ib_attr qp[] = {INTS("perm", 0, 2, 1, 3)}, kp[] = {INTS("perm", 0, 2, 3, 1)};
        ib_value_id qh = NODE(b, "Transpose", "", tin, qp);
        ib_value_id kt = NODE(b, "Transpose", "", tin, kp);
        ib_value_id ain[3] = {qh, kt, qh};
        ib_attr aa[] = {bo_af("scale", 0.35f)};
        ib_value_id at = NODE(b, "Attention", "inferbench", ain, aa);
        ib_value_id t2in[1] = {at};
        ib_value_id t2 = NODE(b, "Transpose", "", t2in, qp);
        ib_value_id r2in[2] = {t2, bo_const_i64(b, 1, DIMS(3), DIMS(2, 6, 16))};
        ib_value_id y = NODE0(b, "Reshape", "", r2in);
        RUN1(b, "chain attention heads", BO_INT8 | BO_BF16 | BO_CHAIN, y);
    }
}
