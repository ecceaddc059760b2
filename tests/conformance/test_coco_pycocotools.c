/*
 * test_coco_pycocotools.c - ib_coco_eval (src/metrics/coco_map.c) against pycocotools'
 * COCOeval on the same ground truth and detections (issue 4: "checked ... in a conformance
 * test that runs when python3-pycocotools is installed, against pycocotools").
 *
 * Each case writes a seeded random COCO ground truth (boxes of every area range, crowd
 * regions, images without annotations, non-contiguous category ids, one category with no
 * ground truth) and detections (jittered true boxes, duplicates, false positives, tied
 * scores, more than 100 per image so maxDets cuts), evaluates it here, runs pycocotools in
 * /usr/bin/python3 on the two JSON files, and compares the twelve COCOeval.stats to 1e-12.
 *
 * pycocotools is not packaged in Debian 12: the test skips unless `import pycocotools`
 * works, with IB_PYCOCOTOOLS_PATH (prepended to PYTHONPATH) pointing at a local build, e.g.
 * cocoapi/PythonAPI after `python3 setup.py build_ext --inplace` (needs cython3), kept
 * outside this repository. The shims in the script only bridge versions: a stub matplotlib
 * (coco.py imports it for drawing) and np.float (removed in numpy 1.24, used by
 * cocoeval.accumulate).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/coco_map.h"
#include "test.h"

static const char *const script =
    "import json, sys, types\n"
    "import numpy as np\n"
    "if not hasattr(np, 'float'):\n"
    "    np.float = float\n"
    "try:\n"
    "    import matplotlib  # noqa: F401\n"
    "except ImportError:\n"
    "    m = types.ModuleType('matplotlib'); m.use = lambda *a, **k: None\n"
    "    m.pyplot = types.ModuleType('matplotlib.pyplot')\n"
    "    m.collections = types.ModuleType('matplotlib.collections')\n"
    "    m.patches = types.ModuleType('matplotlib.patches')\n"
    "    m.collections.PatchCollection = None; m.patches.Polygon = None\n"
    "    sys.modules.update({'matplotlib': m, 'matplotlib.pyplot': m.pyplot,\n"
    "                        'matplotlib.collections': m.collections,\n"
    "                        'matplotlib.patches': m.patches})\n"
    "import contextlib, io\n"
    "from pycocotools.coco import COCO\n"
    "from pycocotools.cocoeval import COCOeval\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    gt = COCO(sys.argv[1])\n"
    "    dt = gt.loadRes(sys.argv[2])\n"
    "    e = COCOeval(gt, dt, 'bbox')\n"
    "    e.evaluate(); e.accumulate(); e.summarize()\n"
    "print(' '.join('%.17g' % v for v in e.stats))\n";

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_u(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

enum { N_IMG = 24, N_CAT = 5, MAX_GT = 400, MAX_DT = 6000 };
static const int64_t cat_ids[N_CAT] = {1, 3, 18, 44, 90}; /* 90: no ground truth */

typedef struct fixture {
    ib_coco_gt gt[MAX_GT];
    size_t n_gt;
    ib_coco_det dt[MAX_DT];
    size_t n_dt;
    int64_t img[N_IMG];
} fixture;

/* Boxes on a 640x480 canvas; side drawn so all three area ranges occur. */
static void random_box(uint64_t *s, double b[4])
{
    double r = rng_u(s);
    double side = r < 0.35 ? 4 + 24 * rng_u(s) : r < 0.7 ? 34 + 60 * rng_u(s) : 100 + 200 * rng_u(s);
    double asp = 0.5 + rng_u(s);
    b[2] = side * asp;
    b[3] = side / asp;
    b[0] = rng_u(s) * (640 - b[2]);
    b[1] = rng_u(s) * (480 - b[3]);
}

static void make_fixture(uint64_t seed, fixture *f)
{
    uint64_t s = seed;
    memset(f, 0, sizeof *f);
    for (int i = 0; i < N_IMG; i++)
        f->img[i] = 1000 + 7 * i;
    for (int i = 0; i < N_IMG; i++) {
        int n = i % 6 == 5 ? 0 : 1 + (int)(rng_u(&s) * 12); /* some images have none */
        for (int k = 0; k < n && f->n_gt < MAX_GT; k++) {
            ib_coco_gt *g = &f->gt[f->n_gt++];
            g->image_id = f->img[i];
            g->category_id = cat_ids[rng_next(&s) % (N_CAT - 1)];
            random_box(&s, g->bbox);
            /* the segment area differs from w*h, as in real annotations */
            g->area = g->bbox[2] * g->bbox[3] * (0.55 + 0.4 * rng_u(&s));
            g->iscrowd = rng_u(&s) < 0.08;
        }
    }
    for (size_t k = 0; k < f->n_gt; k++) { /* detections near true boxes, some twice */
        int copies = rng_u(&s) < 0.15 ? 0 : rng_u(&s) < 0.25 ? 2 : 1;
        for (int c = 0; c < copies && f->n_dt < MAX_DT; c++) {
            ib_coco_det *d = &f->dt[f->n_dt++];
            d->image_id = f->gt[k].image_id;
            d->category_id = rng_u(&s) < 0.1 ? cat_ids[rng_next(&s) % N_CAT]
                                              : f->gt[k].category_id;
            for (int j = 0; j < 4; j++)
                d->bbox[j] = f->gt[k].bbox[j] + (rng_u(&s) - 0.5) * 0.3 * f->gt[k].bbox[2 + j % 2];
            d->bbox[2] = d->bbox[2] > 1 ? d->bbox[2] : 1;
            d->bbox[3] = d->bbox[3] > 1 ? d->bbox[3] : 1;
            d->score = (double)(int)(rng_u(&s) * 40) / 40; /* ties */
        }
    }
    for (int i = 0; i < N_IMG; i++) { /* false positives; image 0 gets > 100 per category */
        int n = i == 0 ? 130 : (int)(rng_u(&s) * 8);
        for (int k = 0; k < n && f->n_dt < MAX_DT; k++) {
            ib_coco_det *d = &f->dt[f->n_dt++];
            d->image_id = f->img[i];
            d->category_id = i == 0 ? cat_ids[0] : cat_ids[rng_next(&s) % N_CAT];
            random_box(&s, d->bbox);
            d->score = rng_u(&s) * 0.6;
        }
    }
}

static void write_json(const fixture *f, const char *gt_path, const char *dt_path)
{
    FILE *g = fopen(gt_path, "w");
    ASSERT_NOT_NULL(g);
    fprintf(g, "{\"images\": [");
    for (int i = 0; i < N_IMG; i++)
        fprintf(g, "%s{\"id\": %lld, \"width\": 640, \"height\": 480, \"file_name\": \"%lld.jpg\"}",
                i ? ", " : "", (long long)f->img[i], (long long)f->img[i]);
    fprintf(g, "], \"annotations\": [");
    for (size_t k = 0; k < f->n_gt; k++) {
        const ib_coco_gt *a = &f->gt[k];
        fprintf(g, "%s{\"id\": %zu, \"image_id\": %lld, \"category_id\": %lld, \"bbox\": "
                   "[%.17g, %.17g, %.17g, %.17g], \"area\": %.17g, \"iscrowd\": %d}",
                k ? ", " : "", k + 1, (long long)a->image_id, (long long)a->category_id,
                a->bbox[0], a->bbox[1], a->bbox[2], a->bbox[3], a->area, a->iscrowd);
    }
    fprintf(g, "], \"categories\": [");
    for (int c = 0; c < N_CAT; c++)
        fprintf(g, "%s{\"id\": %lld, \"name\": \"c%lld\"}", c ? ", " : "", (long long)cat_ids[c],
                (long long)cat_ids[c]);
    fprintf(g, "]}\n");
    ASSERT_INT_EQ(fclose(g), 0);
    FILE *d = fopen(dt_path, "w");
    ASSERT_NOT_NULL(d);
    fprintf(d, "[");
    for (size_t k = 0; k < f->n_dt; k++) {
        const ib_coco_det *a = &f->dt[k];
        fprintf(d, "%s{\"image_id\": %lld, \"category_id\": %lld, \"bbox\": [%.17g, %.17g, %.17g, "
                   "%.17g], \"score\": %.17g}",
                k ? ", " : "", (long long)a->image_id, (long long)a->category_id, a->bbox[0],
                a->bbox[1], a->bbox[2], a->bbox[3], a->score);
    }
    fprintf(d, "]\n");
    ASSERT_INT_EQ(fclose(d), 0);
}

/* The command prefix that runs python with pycocotools importable, or skip. */
static void python_cmd(char *out, size_t n)
{
    const char *extra = getenv("IB_PYCOCOTOOLS_PATH");
    if (extra && *extra)
        snprintf(out, n, "PYTHONPATH='%s' /usr/bin/python3", extra);
    else
        snprintf(out, n, "/usr/bin/python3");
    if (ib_test_system("%s -c 'import numpy; import pycocotools.cocoeval' 2>/dev/null || "
                       "%s -c 'import sys, types; sys.modules[\"matplotlib\"] = "
                       "types.ModuleType(\"m\"); import numpy; import pycocotools' "
                       ">/dev/null 2>&1",
                       out, out) != 0)
        TEST_SKIP("pycocotools not importable by /usr/bin/python3 (not packaged in Debian 12; "
                  "set IB_PYCOCOTOOLS_PATH to a local cocoapi/PythonAPI build)");
}

TEST_TIMEOUT(coco_map_matches_pycocotools, 120)
{
    char py[4200];
    python_cmd(py, sizeof py);
    FILE *sf = fopen("eval.py", "w");
    ASSERT_NOT_NULL(sf);
    fputs(script, sf);
    ASSERT_INT_EQ(fclose(sf), 0);
    static fixture f;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        make_fixture(seed, &f);
        write_json(&f, "gt.json", "dt.json");
        double ours[IB_COCO_NSTATS];
        ib_err err;
        ASSERT_OK_ERR(ib_coco_eval(f.gt, f.n_gt, f.dt, f.n_dt, f.img, N_IMG, cat_ids, N_CAT, ours,
                                   &err),
                      &err);
        ASSERT_INT_EQ(ib_test_system("%s eval.py gt.json dt.json > stats.txt", py), 0);
        FILE *r = fopen("stats.txt", "r");
        ASSERT_NOT_NULL(r);
        double ref[IB_COCO_NSTATS];
        for (int i = 0; i < IB_COCO_NSTATS; i++)
            ASSERT_INT_EQ(fscanf(r, "%lf", &ref[i]), 1);
        fclose(r);
        for (int i = 0; i < IB_COCO_NSTATS; i++) {
            if (ours[i] < ref[i] - 1e-12 || ours[i] > ref[i] + 1e-12)
                printf("# seed %llu stat %d: ours %.17g pycocotools %.17g\n",
                       (unsigned long long)seed, i, ours[i], ref[i]);
            ASSERT_NEAR(ours[i], ref[i], 1e-12);
        }
        /* the fixture exercises what it claims: not a trivially perfect or empty result */
        ASSERT_TRUE(ref[0] > 0.05 && ref[0] < 0.95);
        ASSERT_TRUE(ref[3] >= 0 && ref[4] >= 0 && ref[5] >= 0);
    }
}
