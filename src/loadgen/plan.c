/*
 * plan.c - the loadable sets of one test (GenerateLoadableSets, loadgen.md
 * §2.3, §2.9) and its global sample sequence: the sequence-id ranges the
 * series take in run order and the accuracy-log sampling decision of every
 * sample (§4.3 item 4). The per-series query generator is in series.c.
 *
 * Current rules (LoadGen >= 6.0.6): the performance set is a shuffle of
 * [0, min(P, total)); accuracy sets cut a shuffle of [0, min(acc, total)) into
 * consecutive sets of P. v1.1: one shuffle of all `total` indices; the
 * performance set is its first P entries, accuracy sets cut the same shuffle.
 * MultiStream sets are padded with a copy of their first spq-1 entries.
 */
#include <stdint.h>
#include <string.h>

#include "base/common.h"
#include "loadgen/plan_internal.h"

/* Shuffled [0, n) with mt19937(qsl_rng_seed). */
static int shuffled_indices(const ib_lg_effective *e, size_t n, ib_lg_sample_index **out,
                            ib_err *err)
{
    if (n >= 0xffffffffu)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "plan: %zu samples: sets of 2^32-1 or more samples are not supported", n);
    ib_lg_sample_index *a = ib_malloc((n ? n : 1) * sizeof *a);
    if (!a) return ib_err_set(err, IB_ENOMEM, "plan: out of memory for %zu sample indices", n);
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    ib_lg_rng rng;
    ib_lg_rng_seed(&rng, e->qsl_rng_seed);
    ib_lg_rng_shuffle(&rng, a, n, e->rng_compat);
    *out = a;
    return IB_OK;
}

/* Append the sets cut from idx[0, n) in chunks of `size` (at most max_sets). */
static int cut_sets(ib_lg_plan *p, const ib_lg_sample_index *idx, size_t n, size_t size,
                    size_t max_sets, ib_err *err)
{
    size_t pad =
        p->e.scenario == IB_LG_SCENARIO_MULTI_STREAM ? (size_t)(p->e.samples_per_query - 1) : 0;
    for (size_t start = 0; start < n && max_sets > 0; start += size, max_sets--) {
        size_t len = IB_MIN(size, n - start);
        lg_set *ns = ib_realloc(p->sets, (p->nsets + 1) * sizeof *ns);
        if (!ns) return ib_err_set(err, IB_ENOMEM, "plan: out of memory");
        p->sets = ns;
        lg_set *s = &p->sets[p->nsets];
        if (pad > SIZE_MAX / sizeof *s->idx - len)
            return ib_err_set(err, IB_EINVAL, "plan: samples_per_query too large");
        s->idx = ib_malloc((len + pad) * sizeof *s->idx);
        if (!s->idx) return ib_err_set(err, IB_ENOMEM, "plan: out of memory for a set of %zu", len);
        memcpy(s->idx, idx + start, len * sizeof *s->idx);
        /* Padding copies the set's start; a set shorter than the padding
         * repeats cyclically (the official appends set[i] while growing). */
        for (size_t i = 0; i < pad; i++)
            s->idx[len + i] = s->idx[i % len];
        s->len = len + pad;
        s->dist_end = len;
        p->nsets++;
    }
    return IB_OK;
}

static int build_sets(ib_lg_plan *p, ib_err *err)
{
    const ib_lg_effective *e = &p->e;
    bool want_acc = e->mode == IB_LG_MODE_ACCURACY || e->mode == IB_LG_MODE_SUBMISSION;
    bool want_perf = e->mode != IB_LG_MODE_ACCURACY;
    uint64_t total = e->qsl_total_count, P = e->performance_sample_count;
    if (P > SIZE_MAX || total > SIZE_MAX)
        return ib_err_set(err, IB_EUNSUPPORTED, "plan: sample counts exceed the address space");
    ib_lg_sample_index *idx = NULL;
    int rc = IB_OK;
    if (e->rules == IB_LG_RULES_V1_1) {
        /* r1.1: one shuffle of every QSL index, cut into sets of P. */
        rc = shuffled_indices(e, (size_t)total, &idx, err);
        if (!rc && want_acc) rc = cut_sets(p, idx, (size_t)total, (size_t)P, SIZE_MAX, err);
        p->nacc = p->nsets;
        if (!rc && want_perf) rc = cut_sets(p, idx, (size_t)total, (size_t)P, 1, err);
        ib_free(idx);
        return rc;
    }
    if (want_acc) {
        size_t n = (size_t)IB_MIN(e->accuracy_sample_count, total);
        rc = shuffled_indices(e, n, &idx, err);
        if (!rc) rc = cut_sets(p, idx, n, (size_t)P, SIZE_MAX, err);
        ib_free(idx);
        idx = NULL;
        if (rc) return rc;
    }
    p->nacc = p->nsets;
    if (want_perf) {
        size_t n = (size_t)IB_MIN(P, total);
        rc = shuffled_indices(e, n, &idx, err);
        if (!rc) rc = cut_sets(p, idx, n, (size_t)P, 1, err);
        ib_free(idx);
    }
    return rc;
}

int ib_lg_plan_create(const ib_lg_effective *e, ib_lg_plan **out, ib_err *err)
{
    if (!e || !out) return ib_err_set(err, IB_EINVAL, "plan: NULL argument");
    *out = NULL;
    if (e->samples_per_query == 0 || e->performance_sample_count == 0 || e->qsl_total_count == 0)
        return ib_err_set(err, IB_EINVAL,
                          "plan: samples per query, performance count and QSL total must be > 0");
    ib_lg_plan *p = ib_calloc(1, sizeof *p);
    if (!p) return ib_err_set(err, IB_ENOMEM, "plan: out of memory");
    p->e = *e;
    p->perf_index = SIZE_MAX;
    int rc = build_sets(p, err);
    if (rc) {
        ib_lg_plan_destroy(p);
        return rc;
    }
    if (e->mode != IB_LG_MODE_ACCURACY) p->perf_index = p->nsets - 1;
    ib_lg_rng off;
    ib_lg_rng_seed(&off, e->accuracy_log_rng_seed);
    p->acc_offset = ib_lg_rng_canonical(&off);
    ib_lg_rng_seed_default(&p->acc_rng);
    p->acc_pos = 0;
    *out = p;
    return IB_OK;
}

void ib_lg_plan_destroy(ib_lg_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nsets; i++)
        ib_free(p->sets[i].idx);
    ib_free(p->sets);
    ib_free(p->reg);
    ib_free(p);
}

const ib_lg_effective *ib_lg_plan_effective(const ib_lg_plan *p)
{
    return &p->e;
}

size_t ib_lg_plan_set_count(const ib_lg_plan *p)
{
    return p->nsets;
}

size_t ib_lg_plan_accuracy_set_count(const ib_lg_plan *p)
{
    return p->nacc;
}

size_t ib_lg_plan_performance_set_index(const ib_lg_plan *p)
{
    return p->perf_index;
}

const ib_lg_sample_index *ib_lg_plan_set(const ib_lg_plan *p, size_t i, size_t *len,
                                         size_t *dist_end)
{
    if (i >= p->nsets) return NULL;
    if (len) *len = p->sets[i].len;
    if (dist_end) *dist_end = p->sets[i].dist_end;
    return p->sets[i].idx;
}

int lg_plan_register_series(ib_lg_plan *p, uint64_t first, uint64_t count, double prob, bool always)
{
    if (p->nreg == p->capreg) {
        size_t cap = p->capreg ? p->capreg * 2 : 8;
        lg_series_reg *r = ib_realloc(p->reg, cap * sizeof *r);
        if (!r) return IB_ENOMEM;
        p->reg = r;
        p->capreg = cap;
    }
    lg_series_reg *r = &p->reg[p->nreg++];
    r->first = first;
    r->end = first + count;
    r->prob = prob;
    r->always = always;
    return IB_OK;
}

bool ib_lg_plan_sample_logged(ib_lg_plan *p, uint64_t seq_id)
{
    /* Which series owns seq_id (ranges are contiguous and increasing). */
    const lg_series_reg *r = NULL;
    if (p->last_reg < p->nreg && seq_id >= p->reg[p->last_reg].first &&
        seq_id < p->reg[p->last_reg].end) {
        r = &p->reg[p->last_reg];
    } else {
        size_t lo = 0, hi = p->nreg;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (p->reg[mid].end <= seq_id)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < p->nreg && seq_id >= p->reg[lo].first && seq_id < p->reg[lo].end) {
            r = &p->reg[lo];
            p->last_reg = lo;
        }
    }
    if (!r) return false;
    /* The default-seeded engine gives one canonical value per generated
     * sample, in sequence-id order across the whole test (SequenceGen). */
    if (seq_id < p->acc_pos) {
        ib_lg_rng_seed_default(&p->acc_rng);
        p->acc_pos = 0;
    }
    ib_lg_rng_discard(&p->acc_rng, 2 * (seq_id - p->acc_pos));
    double v = ib_lg_rng_canonical(&p->acc_rng);
    p->acc_pos = seq_id + 1;
    if (r->always) return true;
    double val = v + p->acc_offset < 1.0 ? v + p->acc_offset : v + p->acc_offset - 1.0;
    return val <= r->prob;
}
