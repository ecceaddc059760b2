/*
 * series.c - one GenerateQueries call of the official LoadGen (loadgen.md
 * §2.4, §4.3; r1.1 for the v1.1 rule set) as a streaming iterator.
 *
 * Construction consumes the sample engine exactly as the official
 * distribution objects do (accuracy list shuffle, the always-built unique
 * list shuffle, then ceil(min_queries / set size) equal-issue shuffles under
 * the current rules), and a pre-pass over the schedule stream (closed form
 * for a constant period) yields the query count and duration. Iteration then
 * replays the same streams query by query: the equal-issue permutations are
 * regenerated from a saved engine state instead of being stored, so memory
 * is O(loaded set) per series and O(1) per query.
 */
#include <math.h>
#include <string.h>

#include "base/common.h"
#include "loadgen/plan_internal.h"

/* Refuse series whose pre-pass would not finish in reasonable time. */
#define MAX_SERVER_QUERIES 100000000000ull

struct ib_lg_series {
    ib_lg_plan *plan;
    const ib_lg_sample_index *loaded;
    size_t len, dist_end;
    enum ib_lg_scenario scenario;
    enum ib_lg_rng_compat compat;
    bool accuracy, v11, equal, unique, same;
    uint64_t same_index;
    uint64_t spq;        /* samples per generated query (local, padded) */
    uint64_t logged_spq; /* generated_samples_per_query */
    double target_qps;
    int64_t period_ns; /* non-Server schedule */
    /* totals from the pre-pass */
    uint64_t count;
    int64_t duration_ns, last_sched_ns;
    uint64_t first_seq;
    double prob;
    /* iteration state */
    uint64_t emitted;
    int64_t ts;
    ib_lg_rng sample_rng, schedule_rng;
    size_t *main_list, main_n, main_pos; /* accuracy-mode list */
    size_t *uniq_list, uniq_n, uniq_pos; /* unique list */
    /* equal issue: K permutations regenerated from eq_start */
    ib_lg_rng eq_start, eq_rng;
    size_t *eq_perm;
    uint64_t eq_k, eq_K;
    size_t eq_pos;
    ib_lg_sample_index *buf;
};

/* [0, stride, 2*stride, ... < end) shuffled with the sample engine. */
static int strided_list(ib_lg_series *s, size_t stride, size_t **out, size_t *n)
{
    size_t cnt = (s->dist_end + stride - 1) / stride;
    size_t *a = ib_malloc((cnt ? cnt : 1) * sizeof *a);
    if (!a) return IB_ENOMEM;
    for (size_t i = 0; i < cnt; i++)
        a[i] = i * stride;
    ib_lg_rng_shuffle(&s->sample_rng, a, cnt, s->compat);
    *out = a;
    *n = cnt;
    return IB_OK;
}

static void eq_restart(ib_lg_series *s)
{
    s->eq_rng = s->eq_start;
    for (size_t i = 0; i < s->len; i++)
        s->eq_perm[i] = i;
    ib_lg_rng_shuffle(&s->eq_rng, s->eq_perm, s->len, s->compat);
    s->eq_k = 0;
    s->eq_pos = 0;
}

/* The next index of the concatenated permutations, cyclically. */
static size_t eq_next(ib_lg_series *s)
{
    if (s->eq_pos == s->len) {
        if (++s->eq_k == s->eq_K) {
            eq_restart(s);
        } else {
            ib_lg_rng_shuffle(&s->eq_rng, s->eq_perm, s->len, s->compat);
            s->eq_pos = 0;
        }
    }
    return s->eq_perm[s->eq_pos++];
}

static int64_t next_interval(ib_lg_series *s, ib_lg_rng *sched)
{
    if (s->scenario == IB_LG_SCENARIO_SERVER) return ib_lg_rng_exponential_ns(sched, s->target_qps);
    return s->period_ns;
}

/* Pre-pass: the official `while (prev < gen || n < min_queries)` loop on the
 * schedule stream alone (the count never depends on sample draws). */
static int prepass(ib_lg_series *s, int64_t gen_ns, uint64_t min_queries, ib_err *err)
{
    bool grow = s->equal && s->scenario != IB_LG_SCENARIO_OFFLINE;
    if (s->scenario != IB_LG_SCENARIO_SERVER) {
        int64_t T = s->period_ns;
        uint64_t n_time = 0; /* smallest n with (n-1)*T >= gen */
        if (gen_ns > 0) {
            if (T <= 0)
                return ib_err_set(err, IB_EINVAL,
                                  "plan: the query period rounds to 0 ns (target QPS %g above "
                                  "1e9): the official LoadGen would never stop generating",
                                  s->target_qps);
            n_time = (uint64_t)((gen_ns + T - 1) / T) + 1;
        }
        uint64_t n = min_queries;
        if (n < n_time) {
            if (grow) /* min_queries grows by one set until it reaches n_time */
                n += (n_time - n + s->len - 1) / s->len * s->len;
            else
                n = n_time;
        }
        if (T > 0 && n > (uint64_t)(INT64_MAX / T))
            return ib_err_set(err, IB_EINVAL, "plan: %llu queries overflow the schedule",
                              (unsigned long long)n);
        s->count = n;
        s->last_sched_ns = n ? (int64_t)(n - 1) * T : 0;
        s->duration_ns = (int64_t)n * T;
        return IB_OK;
    }
    double expect = s->target_qps * ((double)gen_ns / 1e9);
    if (!(expect < (double)MAX_SERVER_QUERIES) || min_queries > MAX_SERVER_QUERIES)
        return ib_err_set(err, IB_EINVAL,
                          "plan: about %.3g Server queries: more than this implementation "
                          "generates (%llu)",
                          expect, (unsigned long long)MAX_SERVER_QUERIES);
    ib_lg_rng sched;
    ib_lg_rng_seed(&sched, s->plan->e.schedule_rng_seed);
    uint64_t n = 0;
    int64_t ts = 0, prev = 0;
    while (prev < gen_ns || n < min_queries) {
        n++;
        prev = ts;
        ts += next_interval(s, &sched);
        if (grow && n >= min_queries && prev < gen_ns) min_queries += s->len;
    }
    s->count = n;
    s->last_sched_ns = prev;
    s->duration_ns = ts;
    return IB_OK;
}

/* The accuracy-log probability of a performance series (§4.3 item 4). */
static double log_probability(const ib_lg_effective *e, double target_qps)
{
    if (e->accuracy_log_sampling_target == 0) return e->accuracy_log_probability;
    double eq = target_qps * (double)e->min_duration_ms / 1000.0;
    uint64_t expected = (eq >= 0.0 && eq < 18446744073709551616.0) ? (uint64_t)eq : UINT64_MAX;
    uint64_t minimum = e->min_query_count * e->samples_per_query;
    if (e->scenario != IB_LG_SCENARIO_OFFLINE)
        expected *= e->samples_per_query;
    else
        minimum = e->min_sample_count;
    if (expected < minimum) expected = minimum;
    return (double)e->accuracy_log_sampling_target / (double)expected;
}

/* Build the distributions in the official order; returns min_queries. */
static int build_distributions(ib_lg_series *s, uint64_t min_queries, ib_err *err)
{
    bool ms = s->scenario == IB_LG_SCENARIO_MULTI_STREAM;
    size_t stride = ms ? (size_t)s->spq : 1;
    int rc = IB_OK;
    if (s->accuracy) rc = strided_list(s, stride, &s->main_list, &s->main_n);
    if (!rc) rc = strided_list(s, stride, &s->uniq_list, &s->uniq_n);
    if (rc) return ib_err_set(err, IB_ENOMEM, "plan: out of memory for the sample lists");
    if (s->v11) return IB_OK; /* r1.1 has no equal-issue distribution */
    /* Equal issue: ceil(min_queries / len) shuffles, always drawn. */
    s->eq_perm = ib_malloc(s->len * sizeof *s->eq_perm);
    if (!s->eq_perm)
        return ib_err_set(err, IB_ENOMEM, "plan: out of memory for the equal-issue list");
    s->eq_start = s->sample_rng;
    s->eq_K = (min_queries + s->len - 1) / s->len;
    for (size_t i = 0; i < s->len; i++)
        s->eq_perm[i] = i;
    for (uint64_t k = 0; k < s->eq_K; k++)
        ib_lg_rng_shuffle(&s->sample_rng, s->eq_perm, s->len, s->compat);
    if (s->equal) {
        if (s->eq_K == 0)
            return ib_err_set(err, IB_EINVAL,
                              "plan: equal issue (sample_concatenate_permutation) needs "
                              "min_query_count >= 1");
        eq_restart(s);
    }
    return IB_OK;
}

int ib_lg_series_create(ib_lg_plan *p, size_t set_index, bool accuracy, double target_qps,
                        ib_lg_series **out, ib_err *err)
{
    if (!p || !out || set_index >= p->nsets)
        return ib_err_set(err, IB_EINVAL, "series: bad plan or set index %zu", set_index);
    *out = NULL;
    const ib_lg_effective *e = &p->e;
    ib_lg_series *s = ib_calloc(1, sizeof *s);
    if (!s) return ib_err_set(err, IB_ENOMEM, "series: out of memory");
    s->plan = p;
    s->loaded = p->sets[set_index].idx;
    s->len = p->sets[set_index].len;
    s->dist_end = p->sets[set_index].dist_end;
    s->scenario = e->scenario;
    s->compat = e->rng_compat;
    s->accuracy = accuracy;
    s->v11 = e->rules == IB_LG_RULES_V1_1;
    s->equal = !s->v11 && e->sample_concatenate_permutation;
    s->unique = e->performance_issue_unique;
    s->same = e->performance_issue_same;
    s->same_index = e->performance_issue_same_index;
    s->target_qps = target_qps > 0.0 ? target_qps : e->target_qps;
    bool off = s->scenario == IB_LG_SCENARIO_OFFLINE;
    int rc = IB_OK;

    /* gen_duration: 2x target_duration (Server 1x), 0 when every query must
     * be issued; min_queries then covers the loaded set. */
    int64_t gen_ns =
        (s->scenario == IB_LG_SCENARIO_SERVER ? 1 : 2) * e->target_duration_ms * 1000000;
    uint64_t min_queries = e->min_query_count;
    s->spq = (accuracy && off) ? s->dist_end : e->samples_per_query;
    if (accuracy || s->unique || (s->v11 && s->same)) {
        gen_ns = 0;
        min_queries = s->len / s->spq;
    }
    if ((s->same && s->same_index >= s->dist_end) || (!off && s->dist_end > 0x7fffffffu)) {
        rc = ib_err_set(err, IB_EINVAL,
                        "series: performance_issue_same_index %llu is outside the loaded set "
                        "of %zu, or the set is too large",
                        (unsigned long long)s->same_index, s->dist_end);
        goto fail;
    }
    ib_lg_rng_seed(&s->sample_rng, e->sample_index_rng_seed);
    ib_lg_rng_seed(&s->schedule_rng, e->schedule_rng_seed);
    rc = build_distributions(s, min_queries, err);
    if (rc) goto fail;
    if (!s->v11 && !accuracy && s->equal) {
        /* Pad to whole sets: Offline the query, others the query count. */
        if (off && s->spq % s->len != 0)
            s->spq += s->len - s->spq % s->len;
        else if (!off && min_queries % s->len != 0)
            min_queries += s->len - min_queries % s->len;
    }
    s->logged_spq = s->v11 ? e->samples_per_query : s->spq;
    if (s->scenario != IB_LG_SCENARIO_SERVER) {
        double ns = (1.0 / s->target_qps) * 1e9; /* duration_cast of 1/qps s */
        s->period_ns = ns < 9.2e18 ? (int64_t)ns : INT64_MAX;
    }
    rc = prepass(s, gen_ns, min_queries, err);
    if (rc) goto fail;
    if (s->count == 0) {
        rc = ib_err_set(err, IB_EINVAL, "series: the settings generate no query");
        goto fail;
    }
    if (s->spq > (SIZE_MAX / sizeof *s->buf) || s->count > UINT64_MAX / s->spq) {
        rc = ib_err_set(err, IB_EINVAL, "series: samples per query too large");
        goto fail;
    }
    s->buf = ib_calloc((size_t)s->spq, sizeof *s->buf);
    if (!s->buf) {
        rc = ib_err_set(err, IB_ENOMEM, "series: out of memory for a %llu-sample query",
                        (unsigned long long)s->spq);
        goto fail;
    }
    s->prob = log_probability(e, s->target_qps);
    s->first_seq = p->next_seq_id;
    if (lg_plan_register_series(p, s->first_seq, s->count * s->spq, s->prob, accuracy)) {
        rc = ib_err_set(err, IB_ENOMEM, "series: out of memory");
        goto fail;
    }
    p->next_seq_id += s->count * s->spq;
    *out = s;
    return IB_OK;
fail:
    ib_lg_series_destroy(s);
    return rc;
}

void ib_lg_series_destroy(ib_lg_series *s)
{
    if (!s) return;
    ib_free(s->main_list);
    ib_free(s->uniq_list);
    ib_free(s->eq_perm);
    ib_free(s->buf);
    ib_free(s);
}

uint64_t ib_lg_series_query_count(const ib_lg_series *s)
{
    return s->count;
}
uint64_t ib_lg_series_samples_per_query(const ib_lg_series *s)
{
    return s->logged_spq;
}
int64_t ib_lg_series_duration_ns(const ib_lg_series *s)
{
    return s->duration_ns;
}
uint64_t ib_lg_series_sample_count(const ib_lg_series *s)
{
    return s->count * s->spq;
}
uint64_t ib_lg_series_first_seq_id(const ib_lg_series *s)
{
    return s->first_seq;
}
int64_t ib_lg_series_last_scheduled_ns(const ib_lg_series *s)
{
    return s->last_sched_ns;
}
double ib_lg_series_log_probability(const ib_lg_series *s)
{
    return s->prob;
}

/* The main distribution: accuracy list or uniform over [0, dist_end). */
static size_t main_next(ib_lg_series *s)
{
    if (s->accuracy) return s->main_pos < s->main_n ? s->main_list[s->main_pos++] : 0;
    return ib_lg_rng_uniform(&s->sample_rng, (uint32_t)s->dist_end, s->compat);
}

static size_t uniq_next(ib_lg_series *s)
{
    return s->uniq_pos < s->uniq_n ? s->uniq_list[s->uniq_pos++] : 0;
}

/* The Offline query: the loaded set repeated, plus a remainder (§2.4). */
static void fill_offline(ib_lg_series *s)
{
    size_t n = s->len, spq = (size_t)s->spq;
    if (s->same) {
        /* r1.1 fills only the first n entries (the rest stay as they were). */
        size_t upto = s->v11 ? IB_MIN(n, spq) : spq;
        for (size_t i = 0; i < upto; i++)
            s->buf[i] = s->loaded[s->same_index];
        return;
    }
    size_t full = spq / n, rem = spq % n;
    for (size_t r = 0; r < full; r++) {
        memcpy(s->buf + r * n, s->loaded, n * sizeof *s->buf);
        if (s->equal) ib_lg_rng_shuffle(&s->sample_rng, s->buf + r * n, n, s->compat);
    }
    memcpy(s->buf + full * n, s->loaded, rem * sizeof *s->buf);
}

bool ib_lg_series_next(ib_lg_series *s, ib_lg_query *q)
{
    if (!s || s->emitted >= s->count) return false;
    switch (s->scenario) {
    case IB_LG_SCENARIO_MULTI_STREAM: {
        size_t i = s->unique ? uniq_next(s) : s->same ? (size_t)s->same_index : main_next(s);
        for (size_t k = 0; k < s->spq; k++)
            s->buf[k] = s->loaded[i + k]; /* padding keeps i + spq - 1 in the set */
        break;
    }
    case IB_LG_SCENARIO_OFFLINE:
        fill_offline(s);
        break;
    default:
        for (size_t k = 0; k < s->spq; k++) {
            size_t i = s->unique  ? uniq_next(s)
                       : s->same  ? (size_t)s->same_index
                       : s->equal ? eq_next(s)
                                  : main_next(s);
            s->buf[k] = s->loaded[i];
        }
        break;
    }
    q->index = s->emitted;
    q->scheduled_ns = s->ts;
    q->first_seq_id = s->first_seq + s->emitted * s->spq;
    q->n_samples = (size_t)s->spq;
    q->qsl_idx = s->buf;
    s->ts += next_interval(s, &s->schedule_rng);
    s->emitted++;
    return true;
}
