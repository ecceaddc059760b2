/*
 * resnet50.c - ResNet50-v1.5 builder with the topology and tensor names of the MLPerf
 * resnet50_v1.onnx (benchmarks.md §1.1): the TensorFlow official model converted to ONNX
 * with NCHW input. Weights are seeded random (He for convolutions, Xavier for the
 * classifier); batch-norm statistics are random but sane, and the last batch norm of every
 * bottleneck gets a small scale so activations stay bounded through 16 residual additions
 * (the "zero-init residual" idea), which keeps int8 calibration meaningful.
 *
 * It does not train anything or claim any accuracy: a model built here is labelled
 * "random weights" in every output.
 */
#include <stdio.h>
#include <string.h>

#include "inferbench/dataset.h"
#include "models/models.h"
#include "onnx/build.h"

typedef struct rn_ctx {
    ib_build *b;
    char name[96]; /* current layer prefix, e.g. "layer2.0" */
} rn_ctx;

/* Conv without bias (the TF model has none; BN follows). pads: top, left, bottom, right
 * are all `pad` here; the stride-2 3x3 convs of v1.5 use TF's fixed_padding (1 each side). */
static ib_value_id conv(rn_ctx *c, const char *what, ib_value_id x, int64_t cin, int64_t cout,
                        int64_t k, int64_t stride, int64_t pad)
{
    char wn[160], shape[96], attrs[200], node[160];
    snprintf(wn, sizeof wn, "%s.%s.weight", c->name, what);
    snprintf(node, sizeof node, "%s.%s", c->name, what);
    snprintf(shape, sizeof shape, "%lld,%lld,%lld,%lld", (long long)cout, (long long)cin,
             (long long)k, (long long)k);
    ib_value_id in[2] = {x, ib_build_weight(c->b, wn, IB_DTYPE_FLOAT32, shape, ib_fill_he())};
    snprintf(attrs, sizeof attrs,
             "kernel_shape=[%lld,%lld] strides=[%lld,%lld] pads=[%lld,%lld,%lld,%lld] "
             "dilations=[1,1] group=1",
             (long long)k, (long long)k, (long long)stride, (long long)stride, (long long)pad,
             (long long)pad, (long long)pad, (long long)pad);
    ib_value_id y = IB_VALUE_NONE;
    ib_build_node(c->b, "Conv", NULL, node, in, 2, &y, 1, NULL, 0, attrs);
    return y;
}

/* BatchNormalization (TF epsilon 1.001e-5 as exported; momentum is training-only). */
static ib_value_id bn(rn_ctx *c, const char *what, ib_value_id x, int64_t ch, double scale_lo,
                      double scale_hi)
{
    static const char *const part[4] = {"gamma", "beta", "moving_mean", "moving_variance"};
    ib_fill fills[4] = {ib_fill_uniform(scale_lo, scale_hi), ib_fill_normal(0, 0.1),
                        ib_fill_normal(0, 0.1), ib_fill_uniform(0.5, 1.5)};
    char shape[32], wn[160], node[160];
    snprintf(shape, sizeof shape, "%lld", (long long)ch);
    snprintf(node, sizeof node, "%s.%s", c->name, what);
    ib_value_id in[5] = {x};
    for (int i = 0; i < 4; i++) {
        snprintf(wn, sizeof wn, "%s.%s.%s", c->name, what, part[i]);
        in[i + 1] = ib_build_weight(c->b, wn, IB_DTYPE_FLOAT32, shape, fills[i]);
    }
    ib_value_id y = IB_VALUE_NONE;
    ib_build_node(c->b, "BatchNormalization", NULL, node, in, 5, &y, 1, NULL, 0,
                  "epsilon=1.001e-5");
    return y;
}

static ib_value_id relu(rn_ctx *c, ib_value_id x)
{
    return IB_BUILD_OP(c->b, "Relu", "", x);
}

/* Bottleneck v1.5: 1x1 (stride 1) -> 3x3 (stride s) -> 1x1 (x4 channels); projection
 * shortcut 1x1 stride s when the shape changes; add, ReLU. */
static ib_value_id bottleneck(rn_ctx *c, ib_value_id x, int64_t cin, int64_t mid, int64_t stride,
                              bool project)
{
    int64_t cout = 4 * mid;
    ib_value_id shortcut = x;
    if (project)
        shortcut = bn(c, "downsample.bn", conv(c, "downsample.conv", x, cin, cout, 1, stride, 0),
                      cout, 0.5, 1.5);
    ib_value_id y = relu(c, bn(c, "bn1", conv(c, "conv1", x, cin, mid, 1, 1, 0), mid, 0.5, 1.5));
    y = relu(c, bn(c, "bn2", conv(c, "conv2", y, mid, mid, 3, stride, 1), mid, 0.5, 1.5));
    y = bn(c, "bn3", conv(c, "conv3", y, mid, cout, 1, 1, 0), cout, 0.1, 0.3);
    return relu(c, IB_BUILD_OP(c->b, "Add", "", y, shortcut));
}

int ib_models_resnet50(const ib_models_opts *o, ib_build **out, ib_err *err)
{
    *out = NULL;
    ib_build *b = NULL;
    /* opset 13: ReduceMean keeps its axes attribute, Squeeze takes axes as an input */
    int rc = ib_build_create(o ? o->seed : 1, 13, &b);
    if (rc)
        return ib_err_set(err, rc, "resnet50: cannot create the ONNX builder");
    rn_ctx c = {.b = b};
    int64_t div = o && o->tiny ? 8 : 1;
    ib_value_id x;
    if (o && o->u8_input) { /* (float)pixel - mean[c], as ib_preprocess_imagenet computes it */
        static const float mean[3] = {IB_IMAGENET_MEAN_R, IB_IMAGENET_MEAN_G,
                                      IB_IMAGENET_MEAN_B};
        x = ib_build_input(b, IB_RESNET50_INPUT, IB_DTYPE_UINT8, "N,3,224,224");
        x = IB_BUILD_OP(b, "Cast", "to=1", x); /* TensorProto FLOAT */
        x = IB_BUILD_OP(b, "Sub", "", x, ib_build_floats(b, "input.mean", mean, 3, "1,3,1,1"));
    } else {
        x = ib_build_input(b, IB_RESNET50_INPUT, IB_DTYPE_FLOAT32, "N,3,224,224");
    }

    snprintf(c.name, sizeof c.name, "stem");
    int64_t width = 64 / div;
    x = relu(&c, bn(&c, "bn", conv(&c, "conv", x, 3, width, 7, 2, 3), width, 0.5, 1.5));
    /* TF max_pooling2d(3, 2, 'SAME') on 112x112: padding only at the bottom/right. */
    x = IB_BUILD_OP(b, "MaxPool", "kernel_shape=[3,3] strides=[2,2] pads=[0,0,1,1]", x);

    static const int64_t blocks[4] = {3, 4, 6, 3};
    int64_t cin = width;
    for (int s = 0; s < 4; s++) {
        int64_t mid = (64 << s) / div;
        for (int64_t i = 0; i < blocks[s]; i++) {
            snprintf(c.name, sizeof c.name, "layer%d.%lld", s + 1, (long long)i);
            int64_t stride = (i == 0 && s > 0) ? 2 : 1;
            x = bottleneck(&c, x, cin, mid, stride, i == 0);
            cin = 4 * mid;
        }
    }
    /* reduce_mean(keepdims) + squeeze, as the TF graph writes global average pooling */
    x = IB_BUILD_OP(b, "ReduceMean", "axes=[2,3] keepdims=1", x);
    static const int64_t axes[2] = {2, 3};
    ib_value_id ax = ib_build_ints(b, "squeeze.axes", axes, 2, NULL);
    x = IB_BUILD_OP(b, "Squeeze", "", x, ax);
    char shape[64];
    snprintf(shape, sizeof shape, "%lld,%d", (long long)cin, IB_RESNET50_CLASSES);
    ib_value_id w = ib_build_weight(b, "dense.kernel", IB_DTYPE_FLOAT32, shape, ib_fill_xavier());
    snprintf(shape, sizeof shape, "%d", IB_RESNET50_CLASSES);
    ib_value_id bias = ib_build_weight(b, "dense.bias", IB_DTYPE_FLOAT32, shape,
                                       ib_fill_uniform(-0.01, 0.01));
    ib_value_id logits = IB_BUILD_OP(b, "Add", "", IB_BUILD_OP(b, "MatMul", "", x, w), bias);
    ib_value_id prob = IB_BUILD_OP(b, "Softmax", "axis=1", logits);
    ib_value_id cls = IB_BUILD_OP(b, "ArgMax", "axis=1 keepdims=0", logits);
    snprintf(shape, sizeof shape, "N,%d", IB_RESNET50_CLASSES);
    ib_build_output(b, cls, IB_RESNET50_ARGMAX, IB_DTYPE_INT64, "N");
    ib_build_output(b, prob, IB_RESNET50_SOFTMAX, IB_DTYPE_FLOAT32, shape);
    rc = ib_build_error(b, err);
    if (rc) {
        ib_build_destroy(b);
        return rc;
    }
    *out = b;
    return IB_OK;
}
