/*
 * coco_acc.c - the decoding half of tools/accuracy-coco.py (benchmarks.md §1.2): accuracy-log
 * records (the PostProcessCocoPt payload) to COCO detections, then COCOeval (coco_map.c) and
 * the "mAP=..%" line.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "metrics/coco_map.h"

static float rd_f32(const uint8_t *p)
{
    uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                 (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &w, 4);
    return f;
}

int ib_coco_accuracy_compute(const ib_metric_record *records, size_t n,
                             const ib_coco_image_info *images, size_t n_images,
                             const ib_coco_gt *gts, size_t n_gt, const int64_t *cat_ids,
                             size_t n_cat, int use_inv_map, ib_coco_accuracy *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        cap += records[i].size / 28;
    uint8_t *seen = ib_calloc(n_images ? n_images : 1, 1);
    uint8_t *has = ib_calloc(n_images ? n_images : 1, 1);
    ib_coco_det *dt = ib_malloc((cap ? cap : 1) * sizeof *dt);
    int64_t *ids = ib_malloc((n_images ? n_images : 1) * sizeof *ids);
    int rc = IB_OK;
    if (!seen || !has || !dt || !ids) {
        rc = ib_err_set(err, IB_ENOMEM, "COCO accuracy: out of memory");
        goto out;
    }
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        const ib_metric_record *r = &records[i];
        if (r->qsl_idx >= n_images) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "accuracy log record %zu: qsl_idx %llu is beyond the %zu images of "
                            "the annotations (wrong instances_val2017.json?)",
                            i, (unsigned long long)r->qsl_idx, n_images);
            goto out;
        }
        if (seen[r->qsl_idx]) { /* de-dupe in case loadgen sends the same image twice */
            out->duplicates++;
            continue;
        }
        seen[r->qsl_idx] = 1;
        out->records++;
        size_t nf = r->size / 4;
        if (r->size % 4 || (nf >= 7 && nf % 7)) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "accuracy log record %zu (qsl_idx %llu): %zu payload bytes are not "
                            "groups of 7 float32 (image_idx, ymin, xmin, ymax, xmax, score, "
                            "label)",
                            i, (unsigned long long)r->qsl_idx, r->size);
            goto out;
        }
        if (nf < 7) {
            /* an image without detections: the script adds its id to image_ids ("we make
             * pycoco aware of the no-result image"), so its ground truth counts as missed */
            has[r->qsl_idx] = 1;
            out->no_detections++;
            continue;
        }
        for (size_t k = 0; k < nf; k += 7) {
            float v[7];
            bool finite = true;
            for (int j = 0; j < 7; j++) {
                v[j] = rd_f32(r->data + 4 * (k + (size_t)j));
                finite = finite && isfinite(v[j]);
            }
            if (!finite) {
                /* an overflowed box (exp of a huge offset; random weights do this): the
                 * script would feed inf/NaN IoUs to COCOeval; it can match nothing, so it
                 * is dropped and counted instead. Its image stays evaluated, as the script
                 * adds every image it reads a box for: its ground truth counts as missed. */
                out->nonfinite++;
                bool idx_ok = isfinite(v[0]) && v[0] >= 0 && v[0] < (float)n_images;
                has[idx_ok ? (size_t)v[0] : r->qsl_idx] = 1;
                continue;
            }
            if (v[0] < 0 || v[0] >= (float)n_images) {
                rc = ib_err_set(err, IB_EFORMAT,
                                "accuracy log record %zu (qsl_idx %llu): image_idx %g is not an "
                                "index into the %zu images",
                                i, (unsigned long long)r->qsl_idx, (double)v[0], n_images);
                goto out;
            }
            size_t im = (size_t)v[0];
            if (im != r->qsl_idx)
                out->idx_mismatches++;
            const ib_coco_image_info *info = &images[im];
            /* ymin *= height ... in float32, as numpy float32 * int */
            float ymin = v[1] * (float)info->height, xmin = v[2] * (float)info->width;
            float ymax = v[3] * (float)info->height, xmax = v[4] * (float)info->width;
            int64_t label = (int64_t)v[6];
            if (use_inv_map) {
                if (label < 0 || (uint64_t)label > n_cat) {
                    rc = ib_err_set(err, IB_EFORMAT,
                                    "accuracy log record %zu (qsl_idx %llu): label %lld is "
                                    "outside inv_map (0..%zu)",
                                    i, (unsigned long long)r->qsl_idx, (long long)label, n_cat);
                    goto out;
                }
                label = label ? cat_ids[label - 1] : 0;
            }
            ib_coco_det *d = &dt[nd++];
            d->image_id = info->id;
            d->category_id = label;
            d->bbox[0] = xmin;
            d->bbox[1] = ymin;
            d->bbox[2] = (double)(xmax - xmin);
            d->bbox[3] = (double)(ymax - ymin);
            d->score = v[5];
            has[im] = 1;
        }
    }
    out->detections = nd;
    size_t ni = 0;
    for (size_t i = 0; i < n_images; i++)
        if (has[i])
            ids[ni++] = images[i].id;
    rc = ib_coco_eval(gts, n_gt, dt, nd, ids, ni, cat_ids, n_cat, out->stats, err);
out:
    ib_free(seen);
    ib_free(has);
    ib_free(dt);
    ib_free(ids);
    return rc;
}

int ib_coco_accuracy_format(const ib_coco_accuracy *r, char *buf, size_t n)
{
    return snprintf(buf, n, "mAP=%.3f%%", 100.0 * r->stats[0]);
}
