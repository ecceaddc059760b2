/*
 * ssd_resnet34.c - SSD-ResNet34 builder (benchmarks.md §1.2; ssd_r34.py SSD_R34 and
 * base_model_r34.py ResNet34). Seeded random weights: a model built here is labelled
 * "random weights" by its callers and reaches no accuracy.
 */
#include <stdio.h>

#include "base/common.h"
#include "ir/ops/ssd_post.h"
#include "models/ssd_resnet34.h"
#include "onnx/build.h"

static ib_value_id relu(ib_build *b, ib_value_id x)
{
    return IB_BUILD_OP(b, "Relu", "", x);
}

/* BatchNormalization (eps 1e-5) with random but sane statistics and gamma in [lo, hi): the
 * last one of every block gets a small gamma (the "zero-init residual" idea) so activations
 * stay bounded through 16 residual additions and the random heads give finite box decodes. */
static ib_value_id bn(ib_build *b, ib_value_id x, int64_t ch, double lo, double hi)
{
    static const char *const part[4] = {"scale", "bias", "mean", "var"};
    ib_fill fills[4] = {ib_fill_uniform(lo, hi), ib_fill_normal(0, 0.1), ib_fill_normal(0, 0.1),
                        ib_fill_uniform(0.5, 1.5)};
    char shape[32], wn[64];
    snprintf(shape, sizeof shape, "%lld", (long long)ch);
    ib_value_id in[5] = {x};
    for (int i = 0; i < 4; i++) {
        /* unique per node: the input value id is unique */
        snprintf(wn, sizeof wn, "bn%u.%s", (unsigned)x, part[i]);
        in[i + 1] = ib_build_weight(b, wn, IB_DTYPE_FLOAT32, shape, fills[i]);
    }
    return ib_build_op(b, "BatchNormalization", in, 5, "epsilon=1e-5");
}

/* torchvision BasicBlock: 3x3 (stride s) + BN + ReLU, 3x3 + BN, shortcut (1x1/s + BN when
 * the shape changes), add, ReLU. */
static ib_value_id basic(ib_build *b, ib_value_id x, int64_t cin, int64_t cout, int64_t stride)
{
    ib_value_id sc = x;
    if (stride != 1 || cin != cout)
        sc = bn(b, ib_build_conv2d(b, x, cin, cout, 1, stride, 0, 1, false), cout, 0.5, 1.5);
    ib_value_id y = ib_build_conv2d(b, x, cin, cout, 3, stride, 1, 1, false);
    y = relu(b, bn(b, y, cout, 0.5, 1.5));
    y = bn(b, ib_build_conv2d(b, y, cout, cout, 3, 1, 1, 1, false), cout, 0.1, 0.3);
    return relu(b, IB_BUILD_OP(b, "Add", "", y, sc));
}

int ib_models_ssd_resnet34(const ib_models_opts *o, ib_build **out, ib_err *err)
{
    *out = NULL;
    ib_build *b = NULL;
    int rc = ib_build_create(o ? o->seed : 1, 13, &b);
    if (rc)
        return ib_err_set(err, rc, "ssd-resnet34: cannot create the ONNX builder");
    int64_t div = o && o->tiny ? 4 : 1;
    ib_value_id x = ib_build_input(b, IB_SSD_R34_INPUT, IB_DTYPE_FLOAT32, "N,3,1200,1200");
    /* ResNet34 conv1 7x7/2 + BN + ReLU + maxpool 3/2 pad 1: 1200 -> 600 -> 300 */
    int64_t w = 64 / div;
    x = ib_build_conv2d(b, x, 3, w, 7, 2, 3, 1, false);
    x = relu(b, bn(b, x, w, 0.5, 1.5));
    x = IB_BUILD_OP(b, "MaxPool", "kernel_shape=[3,3] strides=[2,2] pads=[1,1,1,1]", x);
    /* layer1 (3 x 64), layer2 (4 x 128, /2 -> 150), layer3 (6 x 256, stride forced to 1) */
    static const int64_t blocks[3] = {3, 4, 6}, stride[3] = {1, 2, 1};
    int64_t cin = w;
    for (int s = 0; s < 3; s++) {
        int64_t cout = (64 << s) / div;
        for (int64_t i = 0; i < blocks[s]; i++) {
            x = basic(b, x, cin, cout, i == 0 ? stride[s] : 1);
            cin = cout;
        }
    }
    /* out_chan [256, 512, 512, 256, 256, 256]; extra blocks' 1x1 widths and 3x3 strides/pads */
    static const int64_t out_ch[6] = {256, 512, 512, 256, 256, 256};
    static const int64_t mid[5] = {256, 256, 128, 128, 128}, est[5] = {2, 2, 2, 2, 1},
                         epad[5] = {1, 1, 1, 0, 0};
    static const int64_t nd[6] = {4, 6, 6, 6, 4, 4};
    ib_value_id src[6] = {x};
    for (int i = 0; i < 5; i++) {
        ib_value_id y = ib_build_conv2d(b, src[i], out_ch[i] / div, mid[i] / div, 1, 1, 0, 1, true);
        y = ib_build_conv2d(b, relu(b, y), mid[i] / div, out_ch[i + 1] / div, 3, est[i], epad[i],
                            1, true);
        src[i + 1] = relu(b, y);
    }
    /* heads: 3x3 stride 3 pad 1, reshape(N, 4 | 81, -1), cat on axis 2 */
    static const int64_t loc_shape[3] = {0, 4, -1}, conf_shape[3] = {0, IB_SSD_R34_CLASSES, -1};
    ib_value_id ls = ib_build_ints(b, "loc_shape", loc_shape, 3, NULL);
    ib_value_id cs = ib_build_ints(b, "conf_shape", conf_shape, 3, NULL);
    ib_value_id locs[6], confs[6];
    for (int i = 0; i < 6; i++) {
        ib_value_id l = ib_build_conv2d(b, src[i], out_ch[i] / div, nd[i] * 4, 3, 3, 1, 1, true);
        ib_value_id c = ib_build_conv2d(b, src[i], out_ch[i] / div, nd[i] * IB_SSD_R34_CLASSES, 3,
                                        3, 1, 1, true);
        locs[i] = IB_BUILD_OP(b, "Reshape", "", l, ls);
        confs[i] = IB_BUILD_OP(b, "Reshape", "", c, cs);
    }
    ib_value_id loc = ib_build_op(b, "Concat", locs, 6, "axis=2");
    ib_value_id conf = ib_build_op(b, "Concat", confs, 6, "axis=2");
    if (o->with_postprocess) {
        float *an = ib_malloc(4 * (size_t)IB_SSD_R34_ANCHORS * sizeof *an);
        if (!an) {
            ib_build_destroy(b);
            return ib_err_set(err, IB_ENOMEM, "ssd-resnet34: out of memory");
        }
        ib_ssd_r34_anchors(an);
        ib_value_id in[3] = {loc, conf,
                             ib_build_floats(b, "anchors", an, 4 * (size_t)IB_SSD_R34_ANCHORS,
                                             "15130,4")};
        ib_free(an);
        ib_value_id o2[2];
        ib_build_node(b, "SSDPostprocess", "inferbench", "postprocess", in, 3, o2, 2, NULL, 0,
                      "max_output=200 top_per_class=200");
        ib_build_output(b, o2[0], IB_SSD_R34_DETS, IB_DTYPE_FLOAT32, "N,200,6");
        ib_build_output(b, o2[1], IB_SSD_R34_COUNT, IB_DTYPE_INT64, "N");
    } else {
        ib_build_output(b, loc, IB_SSD_R34_LOCS, IB_DTYPE_FLOAT32, "N,4,15130");
        ib_build_output(b, conf, IB_SSD_R34_CONFS, IB_DTYPE_FLOAT32, "N,81,15130");
    }
    rc = ib_build_error(b, err);
    if (rc) {
        ib_build_destroy(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}
