/*
 * plan.c - activation arena planning: greedy by size with interval reuse
 * (the TFLite "greedy by size" strategy) plus in-place chains, and a
 * verifier that checks the no-overlap invariant pairwise.
 *
 * It does not know graphs or backends; the session turns a partitioned graph
 * into ib_plan_value arrays (one per backend arena) and calls it.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"

/* One placement unit: a value, or a chain of values joined in place. */
typedef struct plan_group {
    size_t size;
    int32_t start, end;
    size_t offset;
    size_t first; /* index of the chain's first value (stable tie-break) */
} plan_group;

static int align_up(size_t x, size_t a, size_t *out)
{
    if (x > SIZE_MAX - (a - 1)) return IB_EINVAL;
    *out = (x + a - 1) & ~(a - 1);
    return IB_OK;
}

static int cmp_group_size(const void *pa, const void *pb)
{
    const plan_group *a = *(plan_group *const *)pa, *b = *(plan_group *const *)pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->first < b->first ? -1 : (a->first > b->first);
}

static int cmp_group_offset(const void *pa, const void *pb)
{
    const plan_group *a = *(plan_group *const *)pa, *b = *(plan_group *const *)pb;
    if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
    return 0;
}

static bool intervals_meet(int32_t s1, int32_t e1, int32_t s2, int32_t e2)
{
    return s1 <= e2 && s2 <= e1;
}

typedef struct live_event {
    int64_t t;
    size_t size;
    int add;
} live_event;

static int cmp_event(const void *pa, const void *pb)
{
    const live_event *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->add - b->add; /* removals before additions at the same step */
}

/* Max over steps of the bytes of live groups (a lower bound of any plan). */
static int live_peak(const plan_group *g, size_t ng, size_t *out)
{
    live_event *ev = ib_calloc(ng ? 2 * ng : 1, sizeof *ev);
    if (!ev) return IB_ENOMEM;
    size_t ne = 0;
    for (size_t i = 0; i < ng; i++) {
        if (!g[i].size) continue;
        ev[ne++] = (live_event){g[i].start, g[i].size, 1};
        ev[ne++] = (live_event){(int64_t)g[i].end + 1, g[i].size, 0};
    }
    qsort(ev, ne, sizeof *ev, cmp_event);
    size_t cur = 0, peak = 0;
    for (size_t i = 0; i < ne; i++) {
        if (ev[i].add) {
            cur += ev[i].size;
            if (cur > peak) peak = cur;
        } else {
            cur -= ev[i].size;
        }
    }
    ib_free(ev);
    *out = peak;
    return IB_OK;
}

/* Validate inputs and round sizes; returns the aligned sizes in asz. */
static int check_values(const ib_plan_value *v, size_t n, size_t align, size_t *asz, ib_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].end < v[i].start)
            return ib_err_set(err, IB_EINVAL, "plan: value %zu has end %d before start %d", i,
                              (int)v[i].end, (int)v[i].start);
        if (v[i].share_with < -1 || (v[i].share_with >= 0 && (size_t)v[i].share_with >= n))
            return ib_err_set(err, IB_EINVAL, "plan: value %zu shares with unknown value %d", i,
                              (int)v[i].share_with);
        if (align_up(v[i].size, align, &asz[i]))
            return ib_err_set(err, IB_EINVAL, "plan: value %zu size %zu overflows", i, v[i].size);
    }
    return IB_OK;
}

/*
 * Grant in-place requests and build groups. group_of[i] is the group index
 * of value i. A request j -> i is granted when i dies exactly where j is
 * born, i lives longer than one step (so the chain's intervals stay
 * disjoint), j fits in i, and i has not been given to someone else.
 */
static size_t build_groups(ib_plan_value *v, size_t n, const size_t *asz, bool no_reuse,
                           int32_t *group_of, bool *donated, plan_group *g)
{
    size_t ng = 0;
    for (size_t j = 0; j < n; j++) {
        v[j].shared = false;
        int32_t i = v[j].share_with;
        if (!no_reuse && i >= 0 && (size_t)i != j && group_of[i] >= 0 && !donated[i] &&
            asz[i] > 0 && asz[j] > 0 && v[i].end == v[j].start && v[i].start < v[i].end &&
            asz[j] <= g[group_of[i]].size) {
            donated[i] = true;
            v[j].shared = true;
            group_of[j] = group_of[i];
            plan_group *gr = &g[group_of[i]];
            if (v[j].end > gr->end) gr->end = v[j].end;
            continue;
        }
        group_of[j] = (int32_t)ng;
        g[ng] = (plan_group){asz[j], v[j].start, v[j].end, 0, j};
        ng++;
    }
    return ng;
}

/* Greedy placement of groups; returns IB_EINVAL on address overflow. */
static int place_groups(plan_group *g, size_t ng, size_t align, bool no_reuse, size_t *total)
{
    plan_group **order = ib_calloc(ng ? ng : 1, sizeof *order);
    plan_group **placed = ib_calloc(ng ? ng : 1, sizeof *placed);
    plan_group **near = ib_calloc(ng ? ng : 1, sizeof *near);
    int rc = IB_ENOMEM;
    if (!order || !placed || !near) goto out;
    for (size_t i = 0; i < ng; i++)
        order[i] = &g[i];
    size_t np = 0, top = 0;
    rc = IB_EINVAL;
    if (no_reuse) {
        for (size_t i = 0; i < ng; i++) {
            g[i].offset = top;
            if (g[i].size > SIZE_MAX - top) goto out;
            top += g[i].size;
        }
        *total = top;
        rc = IB_OK;
        goto out;
    }
    qsort(order, ng, sizeof *order, cmp_group_size);
    for (size_t k = 0; k < ng; k++) {
        plan_group *cur = order[k];
        if (!cur->size) {
            cur->offset = 0;
            continue;
        }
        size_t nn = 0;
        for (size_t p = 0; p < np; p++)
            if (intervals_meet(cur->start, cur->end, placed[p]->start, placed[p]->end))
                near[nn++] = placed[p];
        qsort(near, nn, sizeof *near, cmp_group_offset);
        size_t cand = 0;
        for (size_t p = 0; p < nn; p++) {
            if (near[p]->offset >= cand && near[p]->offset - cand >= cur->size)
                break; /* the gap before near[p] fits */
            if (near[p]->size > SIZE_MAX - near[p]->offset) goto out;
            size_t end = near[p]->offset + near[p]->size, aend;
            if (align_up(end, align, &aend)) goto out;
            if (aend > cand) cand = aend;
        }
        if (cur->size > SIZE_MAX - cand) goto out;
        cur->offset = cand;
        if (cand + cur->size > top) top = cand + cur->size;
        placed[np++] = cur;
    }
    *total = top;
    rc = IB_OK;
out:
    ib_free(order);
    ib_free(placed);
    ib_free(near);
    return rc;
}

int ib_plan_compute(ib_plan_value *v, size_t n, size_t align, bool no_reuse, ib_plan_result *res,
                    ib_err *err)
{
    if (!align) align = IB_PLAN_ALIGN;
    if (align & (align - 1))
        return ib_err_set(err, IB_EINVAL, "plan: alignment %zu is not a power of two", align);
    memset(res, 0, sizeof *res);
    size_t *asz = ib_calloc(n ? n : 1, sizeof *asz);
    int32_t *group_of = ib_calloc(n ? n : 1, sizeof *group_of);
    bool *donated = ib_calloc(n ? n : 1, sizeof *donated);
    plan_group *g = ib_calloc(n ? n : 1, sizeof *g);
    int rc = IB_ENOMEM;
    if (!asz || !group_of || !donated || !g) {
        ib_err_set(err, rc, "plan: out of memory for %zu values", n);
        goto out;
    }
    rc = check_values(v, n, align, asz, err);
    if (rc) goto out;
    for (size_t i = 0; i < n; i++)
        group_of[i] = -1;
    /* Requests refer to earlier values: group_of[i] must exist when j asks. */
    size_t ng = build_groups(v, n, asz, no_reuse, group_of, donated, g);
    rc = place_groups(g, ng, align, no_reuse, &res->total_bytes);
    if (rc) {
        ib_err_set(err, rc, "plan: arena size overflows (%zu values)", n);
        goto out;
    }
    rc = live_peak(g, ng, &res->live_peak);
    if (rc) {
        ib_err_set(err, rc, "plan: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        v[i].offset = asz[i] ? g[group_of[i]].offset : 0;
        res->n_inplace += v[i].shared;
        if (res->sum_bytes > SIZE_MAX - asz[i]) {
            rc = ib_err_set(err, IB_EINVAL, "plan: total size overflows");
            goto out;
        }
        res->sum_bytes += asz[i];
    }
out:
    ib_free(asz);
    ib_free(group_of);
    ib_free(donated);
    ib_free(g);
    return rc;
}

int ib_plan_verify(const ib_plan_value *v, size_t n, size_t align, size_t total_bytes, ib_err *err)
{
    if (!align) align = IB_PLAN_ALIGN;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].size) continue;
        if (v[i].offset % align)
            return ib_err_set(err, IB_EINVAL, "plan: value %zu offset %zu is not %zu-aligned", i,
                              v[i].offset, align);
        if (v[i].offset > total_bytes || v[i].size > total_bytes - v[i].offset)
            return ib_err_set(err, IB_EINVAL, "plan: value %zu [%zu,+%zu) exceeds the arena (%zu)",
                              i, v[i].offset, v[i].size, total_bytes);
    }
    for (size_t i = 0; i < n; i++) {
        if (!v[i].size) continue;
        for (size_t j = i + 1; j < n; j++) {
            if (!v[j].size || !intervals_meet(v[i].start, v[i].end, v[j].start, v[j].end)) continue;
            bool mem =
                v[i].offset < v[j].offset + v[j].size && v[j].offset < v[i].offset + v[i].size;
            if (!mem) continue;
            bool ok = (v[j].shared && (size_t)v[j].share_with == i && v[i].end == v[j].start) ||
                      (v[i].shared && (size_t)v[i].share_with == j && v[j].end == v[i].start);
            if (!ok)
                return ib_err_set(err, IB_EINVAL,
                                  "plan: values %zu [steps %d..%d, bytes %zu+%zu) and %zu "
                                  "[steps %d..%d, bytes %zu+%zu) overlap",
                                  i, (int)v[i].start, (int)v[i].end, v[i].offset, v[i].size, j,
                                  (int)v[j].start, (int)v[j].end, v[j].offset, v[j].size);
        }
    }
    return IB_OK;
}
