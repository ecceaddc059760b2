/*
 * models.h - the model builders of src/models/ (one .c per architecture): the exact
 * topology of each MLPerf reference model with seeded random weights, built through the
 * ONNX builder (src/onnx/build.h), so a benchmark writes a real .onnx file and loads it
 * back through the same loader a user-supplied file takes. Every builder also has a tiny
 * variant with the same layer types and tensor names for tests.
 *
 * Builders never print; errors come back as IB_E* with the builder's message.
 */
#ifndef IB_MODELS_MODELS_H
#define IB_MODELS_MODELS_H

#include <stdbool.h>
#include <stdint.h>

#include "inferbench/status.h"

struct ib_build;

typedef struct ib_models_opts {
    uint64_t seed; /* weight seed (same seed, same bytes) */
    bool tiny;     /* the test stand-in */
    /* SSD-ResNet34: end with inferbench.SSDPostprocess (decode + NMS in the graph, so a GPU
     * runs it), whose detections and counts replace the raw heads as outputs */
    bool with_postprocess;
    /* ResNet50: take the reference's uint8 pixels (IB_RESNET50_INPUT as uint8 [N,3,224,224])
     * and subtract the means in the graph (Cast, Sub): the same values reach the first
     * convolution, and a batch moves a quarter of the bytes (issue 24) */
    bool u8_input;
} ib_models_opts;

/* ---- ResNet50-v1.5 (resnet50.c) ------------------------------------------------------------ */

/* Tensor names of the MLPerf resnet50_v1.onnx (TF model converted with tf2onnx and
 * --inputs-as-nchw): what the builder writes and what a user-supplied file must have. */
#define IB_RESNET50_INPUT "input_tensor:0"    /* float32 [N,3,224,224], NCHW, mean-subtracted */
#define IB_RESNET50_ARGMAX "ArgMax:0"         /* int64 [N]: class in 0..1000 (0 = background) */
#define IB_RESNET50_SOFTMAX "softmax_tensor:0" /* float32 [N,1001] */
#define IB_RESNET50_CLASSES 1001

/*
 * ib_models_resnet50 - ResNet50-v1.5 as in the MLPerf ONNX: stem conv 7x7/2 (pads 3) + BN +
 * ReLU, MaxPool 3x3/2 with TF "SAME" padding (pads 0,0,1,1), bottleneck stages of 3, 4, 6, 3
 * blocks (64/256, 128/512, 256/1024, 512/2048 channels) with the stride on the 3x3 conv
 * (v1.5) and a 1x1 projection shortcut in each stage's first block, ReduceMean over H,W,
 * MatMul + Add to 1001 classes, then Softmax -> softmax_tensor:0 and ArgMax -> ArgMax:0.
 * The batch dimension is symbolic ("N"). tiny: the same graph at 1/8 of every width
 * (8/32 ... 64/256 channels), still 224x224 in and 1001 classes out.
 * Ownership: *out is the caller's (ib_build_destroy). Returns IB_OK or the builder's error.
 */
int ib_models_resnet50(const ib_models_opts *o, struct ib_build **out, ib_err *err);

#endif
