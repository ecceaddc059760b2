/*
 * ssd_post.h - SSD-ResNet34 post-processing as the reference model's Encoder.decode_batch
 * (ref r1.1 vision/classification_and_detection/python/models/ssd_r34.py; benchmarks.md §1.2,
 * timed): box decode with variances 0.1 (centre) / 0.2 (size), softmax over the classes,
 * per class (background 0 skipped) scores > 0.05, the top 200, greedy NMS at IoU 0.5, then the
 * best 200 overall; and the accuracy payload PostProcessCocoPt logs (7 float32 per detection).
 *
 * Pure functions: no I/O, no global state. Thread-safety: reentrant.
 */
#ifndef IB_IR_OPS_SSD_POST_H
#define IB_IR_OPS_SSD_POST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

/* One detection: box normalised ltrb (xmin, ymin, xmax, ymax), label 1..n_class-1. */
typedef struct ib_ssd_det {
    float box[4];
    float score;
    int32_t label;
} ib_ssd_det;

typedef struct ib_ssd_post_params {
    float scale_xy;    /* 0.1: the centre variance */
    float scale_wh;    /* 0.2: the size variance */
    float score_thr;   /* 0.05: kept when score > thr */
    float nms_iou;     /* 0.5: a candidate survives when IoU < this */
    int top_per_class; /* 200: candidates per class before NMS */
    int max_out;       /* 200: detections kept overall */
} ib_ssd_post_params;

/* The reference's values (ssd_r34.py: decode_batch(..., 0.50, 200), max_num 200). */
void ib_ssd_post_params_default(ib_ssd_post_params *p);

/* inferbench.SSDPostprocess's attributes (ir/ops/detect.c) over the defaults; false when
 * top_per_class or max_output is outside [1, IB_SSD_MAX_K]. n NULL: the defaults. */
#define IB_SSD_MAX_K 100000
struct ib_node;
bool ib_ssd_params_of_node(const struct ib_node *n, ib_ssd_post_params *p);

/*
 * ib_ssd_post - one image. loc is the model's box output [4][n_anchor] (dx, dy, dw, dh; the
 * Nx4xA layout of ssd_r34), conf the class logits [n_class][n_anchor], anchors [n_anchor][4]
 * (cx, cy, w, h normalised, the reference's dboxes in xywh). Writes up to p->max_out
 * detections to out (capacity max_out) and their count to *n_out, in the reference's order:
 * ascending score (its final sort keeps the last max_out of an ascending sort); where the
 * max_out cut (or the per-class top cut) falls inside a tie, the lower class, then the earlier
 * pick (then the lower anchor) is kept: torch.sort leaves tie order unspecified.
 * IB_EINVAL for n_class < 2 or bad
 * parameters, IB_ENOMEM.
 */
int ib_ssd_post(const float *loc, const float *conf, const float *anchors, size_t n_anchor,
                size_t n_class, const ib_ssd_post_params *p, ib_ssd_det *out, size_t *n_out,
                ib_err *err);

/* The same with the caller's workspace of ib_ssd_post_ws_bytes(n_anchor, n_class, p) bytes,
 * 64-byte aligned (allocates nothing: the backends' graph_run); 0 bytes for bad parameters. */
size_t ib_ssd_post_ws_bytes(size_t n_anchor, size_t n_class, const ib_ssd_post_params *p);
int ib_ssd_post_ws(const float *loc, const float *conf, const float *anchors, size_t n_anchor,
                   size_t n_class, const ib_ssd_post_params *p, void *ws, ib_ssd_det *out,
                   size_t *n_out, ib_err *err);

/* One image's detections as rows of 6 floats (xmin, ymin, xmax, ymax, score, label), zero
 * past n: inferbench.SSDPostprocess's output rows (max_out of them). */
void ib_ssd_rows(const ib_ssd_det *d, size_t n, size_t max_out, float *rows);
/* One image straight to rows (max_out of them) and its count (NULL: not written): what
 * inferbench.SSDPostprocess outputs. ws holds ib_ssd_post_rows_ws_bytes bytes, 64-byte aligned
 * (the decode's workspace, then the detections). */
size_t ib_ssd_post_rows_ws_bytes(size_t n_anchor, size_t n_class, const ib_ssd_post_params *p);
int ib_ssd_post_rows(const float *loc, const float *conf, const float *anchors, size_t n_anchor,
                     size_t n_class, const ib_ssd_post_params *p, void *ws, float *rows,
                     int64_t *count, ib_err *err);
/* The inverse of ib_ssd_rows: count rows into d (labels from their float). */
void ib_ssd_from_rows(const float *rows, size_t count, ib_ssd_det *d);

/*
 * ib_ssd_payload - the accuracy-log payload of PostProcessCocoPt: per detection the float32s
 * (qsl_idx, ymin, xmin, ymax, xmax, score, label), detections in the order given. out holds
 * 7 * n floats; an image without detections logs an empty payload (n = 0).
 */
void ib_ssd_payload(uint64_t qsl_idx, const ib_ssd_det *dets, size_t n, float *out);

/* IoU of two ltrb boxes as calc_iou_tensor: no +1, negative overlap clamped to 0. */
float ib_ssd_iou(const float a[4], const float b[4]);

/* Anchors of SSD-ResNet34 at 1200x1200 (dboxes_R34_coco). */
enum { IB_SSD_R34_ANCHORS = 15130 };

/*
 * ib_ssd_r34_anchors - ssd_r34.py dboxes_R34_coco(1200) / DefaultBoxes: feature maps 50, 25,
 * 13, 7, 3, 3; steps int(1200 / fs); scales int(s * 1200 / 300) for s in 21 45 99 153 207 261
 * 315; aspect ratios [2], [2,3], [2,3], [2,3], [2], [2]; per map the sizes (sk1, sk1),
 * (sqrt(sk1 sk2), same), then (sk1 sqrt(a), sk1 / sqrt(a)) and its transpose per ratio, each
 * over all positions row by row, centre ((x + .5) / fk, (y + .5) / fk) with fk = 1200 // step,
 * clamped to [0, 1]. Writes IB_SSD_R34_ANCHORS x (cx, cy, w, h) to out; the order is the
 * one the heads' view(N, 4, -1) + cat produces.
 */
void ib_ssd_r34_anchors(float *out);

#endif
