/*
 * ssd_resnet34.h - the SSD-ResNet34 (SSD-large, 1200x1200) builder (benchmarks.md §1.2; the
 * reference model code ssd_r34.py SSD_R34 with strides [3, 3, 2, 2, 2, 2] and
 * base_model_r34.py ResNet34): seeded random weights, raw head outputs; the decode + NMS run
 * in C afterwards (ir/ops/ssd_post.h), as the reference's Encoder.decode_batch does after
 * the network.
 */
#ifndef IB_MODELS_SSD_RESNET34_H
#define IB_MODELS_SSD_RESNET34_H

#include "models/models.h"

#define IB_SSD_R34_INPUT "image"     /* float32 [N,3,1200,1200], NCHW, mean/std normalised */
#define IB_SSD_R34_LOCS "bboxes"     /* float32 [N,4,15130]: dx, dy, dw, dh per anchor */
#define IB_SSD_R34_CONFS "scores"    /* float32 [N,81,15130]: class logits per anchor */
#define IB_SSD_R34_CLASSES 81
/* with_postprocess: inferbench.SSDPostprocess's outputs */
#define IB_SSD_R34_DETS "detections"  /* float32 [N,200,6]: xmin ymin xmax ymax score label */
#define IB_SSD_R34_COUNT "det_count"  /* int64 [N]: rows of detections in use */

/*
 * ib_models_ssd_resnet34 - torchvision ResNet34 conv1..layer3 with layer3's first block at
 * stride 1 (256 channels at 150x150 for 1200x1200); five extra blocks (1x1 then 3x3 with
 * bias and ReLU: 256->512 /2, 256->512 /2, 128->256 /2, 128->256 /2 pad 0, 128->256 pad 0)
 * giving 150, 75, 38, 19, 9, 7; per map a loc and a conf head, 3x3 stride 3 pad 1
 * (-> 50, 25, 13, 7, 3, 3) with 4, 6, 6, 6, 4, 4 anchors, reshaped to [N,4,-1] /
 * [N,81,-1] and concatenated on axis 2 (15,130 anchors). Tiny: every width / 4, the same
 * input, feature-map sizes and anchors.
 */
int ib_models_ssd_resnet34(const ib_models_opts *o, struct ib_build **out, ib_err *err);

#endif
