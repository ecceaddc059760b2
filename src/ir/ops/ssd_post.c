/*
 * ssd_post.c - SSD-ResNet34 decode + NMS (ssd_r34.py Encoder.scale_back_batch and
 * decode_single, benchmarks.md §1.2 "Postprocessing (timed)") and the PostProcessCocoPt
 * payload (ref r1.1 python/coco.py).
 */
#include <math.h>
#include <string.h>

#include "base/common.h"
#include "ir/ops/ssd_post.h"

void ib_ssd_post_params_default(ib_ssd_post_params *p)
{
    p->scale_xy = 0.1f;
    p->scale_wh = 0.2f;
    p->score_thr = 0.05f;
    p->nms_iou = 0.5f;
    p->top_per_class = 200;
    p->max_out = 200;
}

float ib_ssd_iou(const float a[4], const float b[4])
{
    float iw = fminf(a[2], b[2]) - fmaxf(a[0], b[0]);
    float ih = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
    if (iw < 0)
        iw = 0; /* calc_iou_tensor: (rb - lt).clamp(min=0) */
    if (ih < 0)
        ih = 0;
    float in = iw * ih;
    float aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]);
    float u = aa + ab - in;
    return u > 0 ? in / u : 0.0f;
}

/* Stable merge sort of idx by descending key. */
static void sort_desc(int32_t *idx, size_t n, const float *key, int32_t *tmp)
{
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = IB_MIN(lo + w, n), hi = IB_MIN(lo + 2 * w, n), a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = key[idx[b]] > key[idx[a]] ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[o++] = idx[a++];
            while (b < hi)
                tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
}

#define SSD_CHUNK 256 /* anchors per softmax pass */

/* The workspace's parts, each 64-byte aligned: box [A][4], prob [C][A], idx and tmp [A],
 * cand, cs, ci, ct [(C - 1) * per], alive [per]. */
typedef struct ssd_ws {
    float *box, *prob, *cs;
    int32_t *idx, *tmp, *ci, *ct;
    ib_ssd_det *cand;
    uint8_t *alive;
} ssd_ws;

static size_t ws_layout(size_t n_anchor, size_t n_class, size_t per, char *base, ssd_ws *w)
{
    size_t na = n_anchor ? n_anchor : 1, cap = (n_class - 1) * per, off = 0;
#define WS_PART(field, bytes)                                                                  \
    do {                                                                                       \
        if (w)                                                                                 \
            w->field = (void *)(base + off);                                                   \
        off += ((bytes) + 63) / 64 * 64;                                                       \
    } while (0)
    WS_PART(box, na * 4 * sizeof(float));
    WS_PART(prob, na * n_class * sizeof(float));
    WS_PART(idx, na * sizeof(int32_t));
    WS_PART(tmp, na * sizeof(int32_t));
    WS_PART(cand, cap * sizeof(ib_ssd_det));
    WS_PART(cs, cap * sizeof(float));
    WS_PART(ci, cap * sizeof(int32_t));
    WS_PART(ct, cap * sizeof(int32_t));
    WS_PART(alive, per);
#undef WS_PART
    return off;
}

static int check_params(size_t n_anchor, size_t n_class, const ib_ssd_post_params *p,
                        ib_err *err)
{
    if (n_class < 2 || p->top_per_class <= 0 || p->max_out <= 0 || n_anchor > INT32_MAX)
        return ib_err_set(err, IB_EINVAL,
                          "SSD post-processing: %zu classes (need >= 2 with background 0), "
                          "top_per_class %d and max_out %d (need > 0)",
                          n_class, p->top_per_class, p->max_out);
    return IB_OK;
}

size_t ib_ssd_post_ws_bytes(size_t n_anchor, size_t n_class, const ib_ssd_post_params *p)
{
    if (n_class < 2 || p->top_per_class <= 0)
        return 0;
    return ws_layout(n_anchor, n_class, (size_t)p->top_per_class, NULL, NULL);
}

int ib_ssd_post(const float *loc, const float *conf, const float *anchors, size_t n_anchor,
                size_t n_class, const ib_ssd_post_params *p, ib_ssd_det *out, size_t *n_out,
                ib_err *err)
{
    *n_out = 0;
    int rc = check_params(n_anchor, n_class, p, err);
    if (rc)
        return rc;
    size_t bytes = ib_ssd_post_ws_bytes(n_anchor, n_class, p);
    void *ws = ib_malloc(bytes);
    if (!ws)
        return ib_err_set(err, IB_ENOMEM, "SSD post-processing: out of memory (%zu anchors)",
                          n_anchor);
    rc = ib_ssd_post_ws(loc, conf, anchors, n_anchor, n_class, p, ws, out, n_out, err);
    ib_free(ws);
    return rc;
}

int ib_ssd_post_ws(const float *loc, const float *conf, const float *anchors, size_t n_anchor,
                   size_t n_class, const ib_ssd_post_params *p, void *ws, ib_ssd_det *out,
                   size_t *n_out, ib_err *err)
{
    *n_out = 0;
    int rc = check_params(n_anchor, n_class, p, err);
    if (rc)
        return rc;
    size_t per = (size_t)p->top_per_class;
    ssd_ws wp;
    ws_layout(n_anchor, n_class, per, ws, &wp);
    float *box = wp.box, *prob = wp.prob, *cs = wp.cs;
    int32_t *idx = wp.idx, *tmp = wp.tmp, *ci = wp.ci, *ct = wp.ct;
    ib_ssd_det *cand = wp.cand;
    uint8_t *alive = wp.alive;
    /* scale_back_batch: xy = 0.1 * d * wh_a + xy_a; wh = exp(0.2 * d) * wh_a; xywh -> ltrb */
    for (size_t a = 0; a < n_anchor; a++) {
        const float *an = anchors + 4 * a;
        float cx = p->scale_xy * loc[a] * an[2] + an[0];
        float cy = p->scale_xy * loc[n_anchor + a] * an[3] + an[1];
        float w = expf(p->scale_wh * loc[2 * n_anchor + a]) * an[2];
        float h = expf(p->scale_wh * loc[3 * n_anchor + a]) * an[3];
        box[4 * a + 0] = cx - 0.5f * w;
        box[4 * a + 1] = cy - 0.5f * h;
        box[4 * a + 2] = cx + 0.5f * w;
        box[4 * a + 3] = cy + 0.5f * h;
    }
    /* F.softmax over the classes (max-subtracted), SSD_CHUNK anchors at a time with the
     * anchors innermost: the class rows are n_anchor floats apart, so an anchor at a time
     * read one float per cache line and nothing vectorised (6.3 ms an image at SSD-ResNet34's
     * 15,130 x 81). Each anchor's max, sum (classes in order) and divisions are the same
     * operations as before, so the probabilities are bit-identical. */
    for (size_t a0 = 0; a0 < n_anchor; a0 += SSD_CHUNK) {
        size_t na0 = IB_MIN((size_t)SSD_CHUNK, n_anchor - a0);
        float mx[SSD_CHUNK], sum[SSD_CHUNK];
        memcpy(mx, conf + a0, na0 * sizeof(float));
        for (size_t c = 1; c < n_class; c++) {
            const float *x = conf + c * n_anchor + a0;
            for (size_t i = 0; i < na0; i++)
                mx[i] = x[i] > mx[i] ? x[i] : mx[i]; /* fmaxf but for NaN */
        }
        memset(sum, 0, sizeof sum);
        for (size_t c = 0; c < n_class; c++) {
            const float *x = conf + c * n_anchor + a0;
            float *pr = prob + c * n_anchor + a0;
            for (size_t i = 0; i < na0; i++) {
                float e = expf(x[i] - mx[i]);
                pr[i] = e;
                sum[i] += e;
            }
        }
        for (size_t c = 0; c < n_class; c++) {
            float *pr = prob + c * n_anchor + a0;
            for (size_t i = 0; i < na0; i++)
                pr[i] /= sum[i];
        }
    }
    /* decode_single: per class (0 = background skipped) */
    size_t nc = 0;
    for (size_t c = 1; c < n_class; c++) {
        const float *sc = prob + c * n_anchor;
        size_t m = 0;
        for (size_t a = 0; a < n_anchor; a++)
            if (sc[a] > p->score_thr) /* mask = score > 0.05 */
                idx[m++] = (int32_t)a;
        if (!m)
            continue;
        sort_desc(idx, m, sc, tmp);
        if (m > per)
            m = per; /* score_idx_sorted[-max_num:] */
        memset(alive, 1, m);
        for (size_t i = 0; i < m; i++) {
            if (!alive[i])
                continue;
            const float *bi = box + 4 * (size_t)idx[i];
            ib_ssd_det *d = &cand[nc++];
            memcpy(d->box, bi, sizeof d->box);
            d->score = sc[idx[i]];
            d->label = (int32_t)c;
            /* keep only iou < criteria (the pick itself, IoU 1, goes too) */
            for (size_t j = i + 1; j < m; j++)
                if (alive[j] && !(ib_ssd_iou(box + 4 * (size_t)idx[j], bi) < p->nms_iou))
                    alive[j] = 0;
        }
    }
    /* the best max_out overall, in ascending order as scores_out.sort() then [-max_out:] */
    for (size_t i = 0; i < nc; i++) {
        cs[i] = cand[i].score;
        ci[i] = (int32_t)i;
    }
    sort_desc(ci, nc, cs, ct);
    size_t keep = IB_MIN(nc, (size_t)p->max_out);
    for (size_t i = 0; i < keep; i++)
        out[i] = cand[ci[keep - 1 - i]];
    *n_out = keep;
    return rc;
}

void ib_ssd_payload(uint64_t qsl_idx, const ib_ssd_det *dets, size_t n, float *out)
{
    /* PostProcessCocoPt: [float(id), box[1], box[0], box[3], box[2], score, float(label)] */
    for (size_t i = 0; i < n; i++) {
        const ib_ssd_det *d = &dets[i];
        float *o = out + 7 * i;
        o[0] = (float)qsl_idx;
        o[1] = d->box[1];
        o[2] = d->box[0];
        o[3] = d->box[3];
        o[4] = d->box[2];
        o[5] = d->score;
        o[6] = (float)d->label;
    }
}

void ib_ssd_r34_anchors(float *out)
{
    static const int feat[6] = {50, 25, 13, 7, 3, 3};
    static const int sc[7] = {21, 45, 99, 153, 207, 261, 315};
    static const int nar[6] = {1, 2, 2, 2, 1, 1};
    const int fig = 1200;
    size_t o = 0;
    for (int l = 0; l < 6; l++) {
        int step = fig / feat[l], fk = fig / step;
        double sk1 = (double)(sc[l] * fig / 300) / fig, sk2 = (double)(sc[l + 1] * fig / 300) / fig;
        double sk3 = sqrt(sk1 * sk2);
        double sz[6][2] = {{sk1, sk1}, {sk3, sk3}};
        int ns = 2;
        for (int a = 0; a < nar[l]; a++) {
            double r = sqrt((double)(a + 2)); /* aspect ratios 2, 3 */
            sz[ns][0] = sk1 * r;
            sz[ns++][1] = sk1 / r;
            sz[ns][0] = sk1 / r;
            sz[ns++][1] = sk1 * r;
        }
        for (int s = 0; s < ns; s++)
            for (int i = 0; i < feat[l]; i++)
                for (int j = 0; j < feat[l]; j++) {
                    double v[4] = {(j + 0.5) / fk, (i + 0.5) / fk, sz[s][0], sz[s][1]};
                    for (int k = 0; k < 4; k++) /* dboxes.clamp_(min=0, max=1) */
                        out[4 * o + (size_t)k] = (float)(v[k] < 0 ? 0 : v[k] > 1 ? 1 : v[k]);
                    o++;
                }
    }
    IB_ASSERT(o == IB_SSD_R34_ANCHORS);
}

size_t ib_ssd_post_rows_ws_bytes(size_t n_anchor, size_t n_class, const ib_ssd_post_params *p)
{
    size_t b = ib_ssd_post_ws_bytes(n_anchor, n_class, p);
    return b && p->max_out > 0 ? b + ((size_t)p->max_out * sizeof(ib_ssd_det) + 63) / 64 * 64 : 0;
}

int ib_ssd_post_rows(const float *loc, const float *conf, const float *anchors, size_t n_anchor,
                     size_t n_class, const ib_ssd_post_params *p, void *ws, float *rows,
                     int64_t *count, ib_err *err)
{
    ib_ssd_det *det = (ib_ssd_det *)((char *)ws + ib_ssd_post_ws_bytes(n_anchor, n_class, p));
    size_t k = 0;
    int rc = ib_ssd_post_ws(loc, conf, anchors, n_anchor, n_class, p, ws, det, &k, err);
    ib_ssd_rows(det, k, (size_t)p->max_out, rows); /* k is 0 on an error: zero rows */
    if (count)
        *count = (int64_t)k;
    return rc;
}

void ib_ssd_rows(const ib_ssd_det *d, size_t n, size_t max_out, float *rows)
{
    memset(rows, 0, max_out * 6 * sizeof(float));
    for (size_t i = 0; i < n && i < max_out; i++) {
        memcpy(rows + 6 * i, d[i].box, 4 * sizeof(float));
        rows[6 * i + 4] = d[i].score;
        rows[6 * i + 5] = (float)d[i].label;
    }
}

void ib_ssd_from_rows(const float *rows, size_t count, ib_ssd_det *d)
{
    for (size_t i = 0; i < count; i++) {
        memcpy(d[i].box, rows + 6 * i, 4 * sizeof(float));
        d[i].score = rows[6 * i + 4];
        d[i].label = (int32_t)rows[6 * i + 5];
    }
}
