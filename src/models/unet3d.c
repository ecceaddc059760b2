/*
 * unet3d.c - 3D U-Net builders (see unet3d.h for the topology and its sources). Weights
 * are seeded random: He-initialised convolutions, zero conv biases, instance-norm scales
 * U[0.8,1.2) and shifts N(0,0.05); the instance norm after every convolution keeps the
 * activations at unit scale at any depth, so the logits stay finite in fp16.
 */
#include "models/unet3d.h"

#include <stdio.h>
#include <string.h>

#include "onnx/build.h"

void ib_unet3d_cfg_brats(bool tiny, ib_unet3d_cfg *c)
{
    static const int64_t f[IB_UNET3D_LEVELS] = {32, 64, 128, 256, 320, 320};
    memset(c, 0, sizeof *c);
    c->in_channels = 4;
    c->classes = 4;
    c->patch[0] = tiny ? 64 : 224;
    c->patch[1] = tiny ? 64 : 224;
    c->patch[2] = tiny ? 32 : 160;
    for (int l = 0; l < IB_UNET3D_LEVELS; l++)
        c->filters[l] = tiny ? f[l] / 4 : f[l];
    c->leaky = true;
    c->opset = 11;
}

void ib_unet3d_cfg_kits(bool tiny, ib_unet3d_cfg *c)
{
    ib_unet3d_cfg_brats(tiny, c);
    c->in_channels = 1;
    c->classes = 3;
    for (int a = 0; a < 3; a++)
        c->patch[a] = tiny ? 32 : 128;
    c->leaky = false;
    c->opset = 12;
}

static int64_t vox(const ib_unet3d_cfg *c, int level)
{
    int64_t v = 1;
    for (int a = 0; a < 3; a++)
        v *= c->patch[a] >> level;
    return v;
}

double ib_unet3d_macs(const ib_unet3d_cfg *c)
{
    const int64_t *f = c->filters;
    double m = 0;
    for (int l = 0; l < IB_UNET3D_LEVELS; l++) {
        double v = (double)vox(c, l);
        int64_t cin = l == 0 ? c->in_channels : f[l - 1];
        m += v * 27.0 * (double)(cin * f[l] + f[l] * f[l]); /* encoder pair */
        if (l < IB_UNET3D_LEVELS - 1) {
            m += v * (double)(f[l + 1] * f[l]);                      /* convT, per output voxel */
            m += v * 27.0 * (double)(2 * f[l] * f[l] + f[l] * f[l]); /* decoder pair */
        }
    }
    m += (double)vox(c, 0) * (double)(f[0] * c->classes); /* 1x1x1 head */
    return m;
}

int64_t ib_unet3d_params(const ib_unet3d_cfg *c)
{
    const int64_t *f = c->filters;
    int64_t p = 0;
    for (int l = 0; l < IB_UNET3D_LEVELS; l++) {
        int64_t cin = l == 0 ? c->in_channels : f[l - 1];
        p += 27 * cin * f[l] + f[l] + 2 * f[l]; /* conv + bias + norm scale/shift */
        p += 27 * f[l] * f[l] + f[l] + 2 * f[l];
        if (l < IB_UNET3D_LEVELS - 1) {
            p += 8 * f[l + 1] * f[l]; /* convT, no bias */
            p += 27 * 2 * f[l] * f[l] + f[l] + 2 * f[l];
            p += 27 * f[l] * f[l] + f[l] + 2 * f[l];
        }
    }
    return p + f[0] * c->classes;
}

typedef struct u_ctx {
    ib_build *b;
    const ib_unet3d_cfg *c;
} u_ctx;

static ib_value_id weight(u_ctx *u, const char *name, int64_t o, int64_t i, int64_t k,
                          ib_fill fill)
{
    char shape[96];
    snprintf(shape, sizeof shape, "%lld,%lld,%lld,%lld,%lld", (long long)o, (long long)i,
             (long long)k, (long long)k, (long long)k);
    return ib_build_weight(u->b, name, IB_DTYPE_FLOAT32, shape, fill);
}

static ib_value_id vec(u_ctx *u, const char *name, int64_t n, ib_fill fill)
{
    char shape[32];
    snprintf(shape, sizeof shape, "%lld", (long long)n);
    return ib_build_weight(u->b, name, IB_DTYPE_FLOAT32, shape, fill);
}

/* conv 3x3x3 (stride s, pad 1, bias) + InstanceNormalization + LeakyReLU/ReLU */
static ib_value_id block(u_ctx *u, const char *name, ib_value_id x, int64_t cin, int64_t cout,
                         int64_t s)
{
    char wn[128], node[128], attrs[160];
    snprintf(wn, sizeof wn, "%s.conv.weight", name);
    ib_value_id in[3] = {x, weight(u, wn, cout, cin, 3, ib_fill_he()), IB_VALUE_NONE};
    snprintf(wn, sizeof wn, "%s.conv.bias", name);
    in[2] = vec(u, wn, cout, ib_fill_zeros());
    snprintf(node, sizeof node, "%s.conv", name);
    snprintf(attrs, sizeof attrs,
             "kernel_shape=[3,3,3] strides=[%lld,%lld,%lld] pads=[1,1,1,1,1,1] "
             "dilations=[1,1,1] group=1",
             (long long)s, (long long)s, (long long)s);
    ib_value_id y = IB_VALUE_NONE;
    ib_build_node(u->b, "Conv", NULL, node, in, 3, &y, 1, NULL, 0, attrs);
    ib_value_id nin[3] = {y, IB_VALUE_NONE, IB_VALUE_NONE};
    snprintf(wn, sizeof wn, "%s.instnorm.weight", name);
    nin[1] = vec(u, wn, cout, ib_fill_uniform(0.8, 1.2));
    snprintf(wn, sizeof wn, "%s.instnorm.bias", name);
    nin[2] = vec(u, wn, cout, ib_fill_normal(0, 0.05));
    snprintf(node, sizeof node, "%s.instnorm", name);
    ib_build_node(u->b, "InstanceNormalization", NULL, node, nin, 3, &y, 1, NULL, 0,
                  "epsilon=1e-5");
    if (u->c->leaky)
        return IB_BUILD_OP(u->b, "LeakyRelu", "alpha=0.01", y);
    return IB_BUILD_OP(u->b, "Relu", "", y);
}

int ib_models_unet3d(const ib_unet3d_cfg *c, uint64_t seed, ib_build **out, ib_err *err)
{
    *out = NULL;
    for (int a = 0; a < 3; a++)
        if (c->patch[a] <= 0 || c->patch[a] % (1 << (IB_UNET3D_LEVELS - 1)))
            return ib_err_set(err, IB_EINVAL,
                              "unet3d: patch dim %d = %lld is not a positive multiple of 32", a,
                              (long long)c->patch[a]);
    ib_build *b = NULL;
    int rc = ib_build_create(seed, c->opset, &b);
    if (rc)
        return ib_err_set(err, rc, "unet3d: cannot create the ONNX builder");
    u_ctx u = {b, c};
    char shape[128], name[64];
    snprintf(shape, sizeof shape, "N,%lld,%lld,%lld,%lld", (long long)c->in_channels,
             (long long)c->patch[0], (long long)c->patch[1], (long long)c->patch[2]);
    ib_value_id x = ib_build_input(b, IB_UNET3D_INPUT, IB_DTYPE_FLOAT32, shape);
    const int64_t *f = c->filters;
    ib_value_id skip[IB_UNET3D_LEVELS];
    for (int l = 0; l < IB_UNET3D_LEVELS; l++) {
        snprintf(name, sizeof name, "conv_blocks_context.%d.0", l);
        x = block(&u, name, x, l == 0 ? c->in_channels : f[l - 1], f[l], l == 0 ? 1 : 2);
        snprintf(name, sizeof name, "conv_blocks_context.%d.1", l);
        x = block(&u, name, x, f[l], f[l], 1);
        skip[l] = x;
    }
    for (int l = IB_UNET3D_LEVELS - 2; l >= 0; l--) {
        int k = IB_UNET3D_LEVELS - 2 - l; /* decoder stage index */
        char wn[96], node[96];
        snprintf(wn, sizeof wn, "tu.%d.weight", k);
        snprintf(node, sizeof node, "tu.%d", k);
        /* ConvTranspose W: [C_in, C_out, 2, 2, 2] */
        ib_value_id in[2] = {x, weight(&u, wn, f[l + 1], f[l], 2, ib_fill_he())};
        ib_value_id up = IB_VALUE_NONE;
        ib_build_node(b, "ConvTranspose", NULL, node, in, 2, &up, 1, NULL, 0,
                      "kernel_shape=[2,2,2] strides=[2,2,2] pads=[0,0,0,0,0,0] group=1");
        x = IB_BUILD_OP(b, "Concat", "axis=1", up, skip[l]);
        snprintf(name, sizeof name, "conv_blocks_localization.%d.0", k);
        x = block(&u, name, x, 2 * f[l], f[l], 1);
        snprintf(name, sizeof name, "conv_blocks_localization.%d.1", k);
        x = block(&u, name, x, f[l], f[l], 1);
    }
    ib_value_id hin[2] = {x, weight(&u, "seg_outputs.weight", c->classes, f[0], 1, ib_fill_he())};
    ib_value_id y = IB_VALUE_NONE;
    ib_build_node(b, "Conv", NULL, "seg_outputs", hin, 2, &y, 1, NULL, 0,
                  "kernel_shape=[1,1,1] strides=[1,1,1] pads=[0,0,0,0,0,0] group=1");
    snprintf(shape, sizeof shape, "N,%lld,%lld,%lld,%lld", (long long)c->classes,
             (long long)c->patch[0], (long long)c->patch[1], (long long)c->patch[2]);
    ib_build_output(b, y, IB_UNET3D_OUTPUT, IB_DTYPE_FLOAT32, shape);
    rc = ib_build_error(b, err);
    if (rc) {
        ib_build_destroy(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}
