/*
 * coco_map.c - COCO bbox evaluation as pycocotools COCOeval computes it (the metric of
 * tools/accuracy-coco.py, benchmarks.md §1.2: mAP@[.5:.95], target 99 % of 20.0 %).
 *
 * evaluate(): per (category, image) the detections are sorted by score (stable), cut to the
 * largest maxDets (100), and greedily matched, per IoU threshold, to the best still-free ground
 * truth; crowd ground truths may match many detections and use IoU = inter / det area;
 * ground truths outside the area range (and crowds) are "ignored", as are unmatched
 * detections whose box area is outside it. accumulate(): per (category, area, maxDets) the
 * detections of all images are merged by score (stable), cumulative TP/FP give recall and
 * precision, precision is made monotone and sampled at 101 recall points by searchsorted
 * (left). summarize(): means over the entries that are not -1.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "metrics/coco_map.h"

enum { T_N = 10, R_N = 101, A_N = 4, M_N = 3, MAXDET = 100 };

static const int k_maxdets[M_N] = {1, 10, 100};
/* Params.areaRng: all, small, medium, large (ignored when area < lo or area > hi). */
static const double k_area[A_N][2] = {
    {0.0, 1e5 * 1e5}, {0.0, 32.0 * 32.0}, {32.0 * 32.0, 96.0 * 96.0}, {96.0 * 96.0, 1e5 * 1e5}};

/* np.linspace(start, stop, num): start + i * step, the last value exactly stop. */
static double linspace(double a, double b, int num, int i)
{
    return i == num - 1 ? b : a + i * ((b - a) / (num - 1));
}

/* maskUtils.iou for boxes (x, y, w, h): no +1; a crowd ground truth's union is the det area. */
static double box_iou(const double d[4], const double g[4], int crowd)
{
    double iw = fmin(d[0] + d[2], g[0] + g[2]) - fmax(d[0], g[0]);
    if (iw <= 0)
        return 0.0;
    double ih = fmin(d[1] + d[3], g[1] + g[3]) - fmax(d[1], g[1]);
    if (ih <= 0)
        return 0.0;
    double in = iw * ih, da = d[2] * d[3];
    double u = crowd ? da : da + g[2] * g[3] - in;
    return in / u;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static long find_i64(const int64_t *v, size_t n, int64_t key)
{
    const int64_t *p = bsearch(&key, v, n, sizeof *v, cmp_i64);
    return p ? (long)(p - v) : -1;
}

/* Stable sort of idx[0..n) by descending key (np.argsort(-key, kind="mergesort")). */
static void sort_desc_stable(size_t *idx, size_t n, const double *key, size_t *tmp)
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

/* evaluateImg's answer for one (category, area, image): up to MAXDET detections in score
 * order with, per IoU threshold, matched / ignored flags, and the non-ignored gt count. */
typedef struct img_eval {
    int present; /* 0 when the image has neither gt nor dt of the category (None) */
    int nd;
    size_t npig;
    double score[MAXDET];
    uint8_t match[T_N][MAXDET];
    uint8_t ignore[T_N][MAXDET];
} img_eval;

typedef struct bucketing {
    size_t *start; /* n_cat * n_img + 1 offsets into order */
    size_t *order;
} bucketing;

static int bucket(size_t n, const void *items, size_t stride, size_t off_img, size_t off_cat,
                  const int64_t *imgs, size_t n_img, const int64_t *cats, size_t n_cat,
                  bucketing *b)
{
    size_t nb = n_cat * n_img;
    b->start = ib_calloc(nb + 2, sizeof *b->start);
    b->order = ib_calloc(n ? n : 1, sizeof *b->order);
    long *key = ib_calloc(n ? n : 1, sizeof *key);
    if (!b->start || !b->order || !key) {
        ib_free(key);
        return IB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const char *it = (const char *)items + i * stride;
        int64_t im, ca;
        memcpy(&im, it + off_img, sizeof im);
        memcpy(&ca, it + off_cat, sizeof ca);
        long ii = find_i64(imgs, n_img, im), ki = find_i64(cats, n_cat, ca);
        key[i] = ii < 0 || ki < 0 ? -1 : ki * (long)n_img + ii;
        if (key[i] >= 0)
            b->start[key[i] + 2]++;
    }
    for (size_t k = 2; k < nb + 2; k++)
        b->start[k] += b->start[k - 1];
    for (size_t i = 0; i < n; i++) /* counting sort keeps file order inside a bucket */
        if (key[i] >= 0)
            b->order[b->start[key[i] + 1]++] = i;
    ib_free(key);
    return IB_OK;
}

static void eval_img(const ib_coco_gt *gts, const size_t *gi, size_t ng, const ib_coco_det *dts,
                     const size_t *di, int nd, const double *ious, const double *thr,
                     img_eval ev[A_N], size_t *gorder, uint8_t *gtm)
{
    for (int a = 0; a < A_N; a++) {
        img_eval *e = &ev[a];
        e->present = 1;
        e->nd = nd;
        /* gt ignore: iscrowd or area outside the range; non-ignored first (stable). */
        size_t o = 0;
        e->npig = 0;
        for (int pass = 0; pass < 2; pass++)
            for (size_t g = 0; g < ng; g++) {
                const ib_coco_gt *t = &gts[gi[g]];
                int ig = t->iscrowd || t->area < k_area[a][0] || t->area > k_area[a][1];
                if (ig == pass)
                    gorder[o++] = g;
                if (!ig && pass == 0)
                    e->npig++;
            }
        for (int d = 0; d < nd; d++)
            e->score[d] = dts[di[d]].score;
        for (int t = 0; t < T_N; t++) {
            memset(gtm, 0, ng);
            for (int d = 0; d < nd; d++) {
                double best = fmin(thr[t], 1 - 1e-10);
                long m = -1;
                for (size_t q = 0; q < ng; q++) {
                    size_t g = gorder[q];
                    int crowd = gts[gi[g]].iscrowd;
                    if (gtm[q] && !crowd)
                        continue; /* already matched, and not a crowd */
                    /* reached the ignored gts after a real match: stop */
                    if (m > -1 && (size_t)m < e->npig && q >= e->npig)
                        break;
                    double iou = ious[(size_t)d * ng + g];
                    if (iou < best)
                        continue;
                    best = iou;
                    m = (long)q;
                }
                if (m == -1) {
                    const double *bb = dts[di[d]].bbox;
                    double ar = bb[2] * bb[3];
                    e->match[t][d] = 0;
                    e->ignore[t][d] = ar < k_area[a][0] || ar > k_area[a][1];
                } else {
                    e->match[t][d] = 1;
                    e->ignore[t][d] = (size_t)m >= e->npig;
                    gtm[m] = 1;
                }
            }
        }
    }
}

static double mean_valid(const double *v, size_t n, size_t stride)
{
    double s = 0;
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i * stride] > -1) {
            s += v[i * stride];
            c++;
        }
    return c ? s / (double)c : -1.0;
}

int ib_coco_eval(const ib_coco_gt *gts, size_t n_gt, const ib_coco_det *dts, size_t n_dt,
                 const int64_t *img_ids, size_t n_img, const int64_t *cat_ids, size_t n_cat,
                 double stats[IB_COCO_NSTATS], ib_err *err)
{
    for (int s = 0; s < IB_COCO_NSTATS; s++)
        stats[s] = -1.0;
    for (size_t i = 0; i < n_dt; i++) {
        const ib_coco_det *d = &dts[i];
        if (!isfinite(d->score) || !isfinite(d->bbox[0]) || !isfinite(d->bbox[1]) ||
            !isfinite(d->bbox[2]) || !isfinite(d->bbox[3]))
            return ib_err_set(err, IB_EINVAL,
                              "COCO eval: detection %zu (image_id %lld) has a non-finite score "
                              "or box",
                              i, (long long)d->image_id);
    }
    int rc = IB_ENOMEM;
    int64_t *imgs = ib_malloc((n_img ? n_img : 1) * sizeof *imgs);
    int64_t *cats = ib_malloc((n_cat ? n_cat : 1) * sizeof *cats);
    bucketing bg = {0}, bd = {0};
    img_eval *ev = NULL;
    double *prec = NULL, *rec = NULL, *ious = NULL, *sc = NULL, *prv = NULL, *rcv = NULL;
    size_t *gorder = NULL, *idx = NULL, *tmp = NULL, *src_img = NULL, *src_pos = NULL;
    uint8_t *gtm = NULL;
    if (!imgs || !cats)
        goto out;
    memcpy(imgs, img_ids, n_img * sizeof *imgs);
    memcpy(cats, cat_ids, n_cat * sizeof *cats);
    qsort(imgs, n_img, sizeof *imgs, cmp_i64);
    qsort(cats, n_cat, sizeof *cats, cmp_i64);
    size_t ni = 0, nk = 0; /* np.unique */
    for (size_t i = 0; i < n_img; i++)
        if (!ni || imgs[ni - 1] != imgs[i])
            imgs[ni++] = imgs[i];
    for (size_t i = 0; i < n_cat; i++)
        if (!nk || cats[nk - 1] != cats[i])
            cats[nk++] = cats[i];
    if (bucket(n_gt, gts, sizeof *gts, offsetof(ib_coco_gt, image_id),
               offsetof(ib_coco_gt, category_id), imgs, ni, cats, nk, &bg) ||
        bucket(n_dt, dts, sizeof *dts, offsetof(ib_coco_det, image_id),
               offsetof(ib_coco_det, category_id), imgs, ni, cats, nk, &bd))
        goto out;
    size_t max_g = 1, max_d = 1;
    for (size_t b = 0; b < nk * ni; b++) {
        max_g = IB_MAX(max_g, bg.start[b + 1] - bg.start[b]);
        max_d = IB_MAX(max_d, bd.start[b + 1] - bd.start[b]);
    }
    size_t nmerge = IB_MAX(ni * MAXDET, max_d);
    ev = ib_calloc(ni ? ni * A_N : 1, sizeof *ev);
    prec = ib_malloc((size_t)T_N * R_N * nk * A_N * M_N * sizeof *prec + 1);
    rec = ib_malloc((size_t)T_N * nk * A_N * M_N * sizeof *rec + 1);
    ious = ib_malloc((size_t)MAXDET * max_g * sizeof *ious);
    gorder = ib_malloc(max_g * sizeof *gorder);
    gtm = ib_malloc(max_g);
    idx = ib_malloc(nmerge * sizeof *idx);
    tmp = ib_malloc(nmerge * sizeof *tmp);
    sc = ib_malloc(nmerge * sizeof *sc);
    src_img = ib_malloc(nmerge * sizeof *src_img);
    src_pos = ib_malloc(nmerge * sizeof *src_pos);
    prv = ib_malloc(nmerge * sizeof *prv);
    rcv = ib_malloc(nmerge * sizeof *rcv);
    if (!prv || !rcv || !ev || !prec || !rec || !ious || !gorder || !gtm || !idx || !tmp || !sc ||
        !src_img ||
        !src_pos)
        goto out;
    double thr[T_N];
    for (int t = 0; t < T_N; t++)
        thr[t] = linspace(0.5, 0.95, T_N, t);
    for (size_t i = 0; i < (size_t)T_N * R_N * nk * A_N * M_N; i++)
        prec[i] = -1.0;
    for (size_t i = 0; i < (size_t)T_N * nk * A_N * M_N; i++)
        rec[i] = -1.0;
    for (size_t k = 0; k < nk; k++) {
        /* evaluate(): every image of category k */
        for (size_t i = 0; i < ni; i++) {
            size_t b = k * ni + i;
            const size_t *gi = bg.order + bg.start[b], *di0 = bd.order + bd.start[b];
            size_t ng = bg.start[b + 1] - bg.start[b], ndall = bd.start[b + 1] - bd.start[b];
            img_eval *e = &ev[i * A_N];
            if (!ng && !ndall) {
                for (int a = 0; a < A_N; a++)
                    e[a].present = 0;
                continue;
            }
            /* computeIoU/evaluateImg: dts by descending score (mergesort), cut to 100 */
            for (size_t d = 0; d < ndall; d++)
                sc[d] = dts[di0[d]].score, src_pos[d] = d;
            sort_desc_stable(src_pos, ndall, sc, tmp);
            int nd = (int)IB_MIN(ndall, (size_t)MAXDET);
            size_t di[MAXDET];
            for (int d = 0; d < nd; d++)
                di[d] = di0[src_pos[d]];
            for (int d = 0; d < nd; d++)
                for (size_t g = 0; g < ng; g++)
                    ious[(size_t)d * ng + g] =
                        box_iou(dts[di[d]].bbox, gts[gi[g]].bbox, gts[gi[g]].iscrowd);
            eval_img(gts, gi, ng, dts, di, nd, ious, thr, e, gorder, gtm);
        }
        /* accumulate() */
        for (int a = 0; a < A_N; a++)
            for (int m = 0; m < M_N; m++) {
                size_t n = 0, npig = 0, present = 0;
                for (size_t i = 0; i < ni; i++) {
                    const img_eval *e = &ev[i * A_N + a];
                    if (!e->present)
                        continue;
                    present++;
                    npig += e->npig;
                    int lim = IB_MIN(e->nd, k_maxdets[m]);
                    for (int d = 0; d < lim; d++) {
                        sc[n] = e->score[d];
                        src_img[n] = i;
                        src_pos[n] = (size_t)d;
                        idx[n] = n;
                        n++;
                    }
                }
                if (!present || !npig)
                    continue;
                sort_desc_stable(idx, n, sc, tmp);
                for (int t = 0; t < T_N; t++) {
                    double tp = 0, fp = 0;
                    for (size_t j = 0; j < n; j++) {
                        const img_eval *e = &ev[src_img[idx[j]] * A_N + a];
                        size_t d = src_pos[idx[j]];
                        int ig = e->ignore[t][d], mt = e->match[t][d];
                        tp += mt && !ig;
                        fp += !mt && !ig;
                        rcv[j] = tp / (double)npig;
                        prv[j] = tp / (fp + tp + 2.220446049250313e-16); /* np.spacing(1) */
                    }
                    size_t ri = ((size_t)t * nk + k) * A_N * M_N + (size_t)a * M_N + (size_t)m;
                    rec[ri] = n ? rcv[n - 1] : 0.0;
                    for (size_t j = n; j-- > 1;)
                        if (prv[j] > prv[j - 1])
                            prv[j - 1] = prv[j];
                    size_t j = 0;
                    for (int r = 0; r < R_N; r++) {
                        double rt = linspace(0.0, 1.0, R_N, r);
                        while (j < n && rcv[j] < rt) /* searchsorted(side="left") */
                            j++;
                        size_t pi = (((size_t)t * R_N + (size_t)r) * nk + k) * A_N * M_N +
                                    (size_t)a * M_N + (size_t)m;
                        prec[pi] = j < n ? prv[j] : 0.0;
                    }
                }
            }
    }
    /* summarize(): precision[T][R][K][A][M], recall[T][K][A][M] */
    {
        size_t per = nk * A_N * M_N;
        double *buf = ib_malloc(((size_t)T_N * R_N * nk + 1) * sizeof *buf);
        if (!buf)
            goto out;
        struct {
            int ap, t, a, m;
        } q[IB_COCO_NSTATS] = {{1, -1, 0, 2}, {1, 0, 0, 2},  {1, 5, 0, 2},  {1, -1, 1, 2},
                               {1, -1, 2, 2}, {1, -1, 3, 2}, {0, -1, 0, 0}, {0, -1, 0, 1},
                               {0, -1, 0, 2}, {0, -1, 1, 2}, {0, -1, 2, 2}, {0, -1, 3, 2}};
        for (int s = 0; s < IB_COCO_NSTATS; s++) {
            size_t c = 0;
            for (int t = 0; t < T_N; t++) {
                if (q[s].t >= 0 && t != q[s].t)
                    continue;
                if (q[s].ap) {
                    for (int r = 0; r < R_N; r++)
                        for (size_t k = 0; k < nk; k++)
                            buf[c++] = prec[((size_t)t * R_N + (size_t)r) * per +
                                            k * A_N * M_N + (size_t)q[s].a * M_N + (size_t)q[s].m];
                } else {
                    for (size_t k = 0; k < nk; k++)
                        buf[c++] = rec[(size_t)t * per + k * A_N * M_N + (size_t)q[s].a * M_N +
                                       (size_t)q[s].m];
                }
            }
            stats[s] = mean_valid(buf, c, 1);
        }
        ib_free(buf);
    }
    rc = IB_OK;
out:
    if (rc == IB_ENOMEM)
        ib_err_set(err, IB_ENOMEM, "COCO eval: out of memory (%zu gts, %zu detections)", n_gt,
                   n_dt);
    ib_free(imgs);
    ib_free(cats);
    ib_free(bg.start);
    ib_free(bg.order);
    ib_free(bd.start);
    ib_free(bd.order);
    ib_free(ev);
    ib_free(prec);
    ib_free(rec);
    ib_free(ious);
    ib_free(gorder);
    ib_free(gtm);
    ib_free(idx);
    ib_free(tmp);
    ib_free(sc);
    ib_free(src_img);
    ib_free(src_pos);
    ib_free(prv);
    ib_free(rcv);
    return rc;
}
