/*
 * replay.c - replay one published run folder through the query planner
 * (issue 12; loadgen.md §2.3, §2.9, §4): effective settings and seeds from
 * the detail log, the plan under each sampling-compatibility mode, and a
 * comparison with every loaded_qsl_set and accuracy-log (seq_id, qsl_idx).
 *
 * Does not: check timing, latencies or the sampled responses' payloads, nor
 * replay FindPeak runs (their probe QPS values are not all logged).
 */
#include "compliance/replay.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/acclog.h"
#include "compliance/mllog.h"
#include "loadgen/effective.h"
#include "loadgen/plan.h"
#include "loadgen/rng.h"

#define DETAIL   "mlperf_log_detail.txt"
#define ACCURACY "mlperf_log_accuracy.json"

typedef struct logged_set {
    uint64_t *v;
    size_t n;
    size_t line;
} logged_set;

typedef struct pair {
    uint64_t seq, qsl;
    size_t line;
} pair;

typedef struct replay_in {
    const char *detail_path, *acc_path;
    ib_lg_effective e;
    uint64_t gen_queries; /* logged generated_query_count, 0 when absent */
    bool fast;            /* the fast path may be used */
    logged_set *sets;
    size_t nsets;
    pair *pairs;
    size_t npairs;
} replay_in;

/* First occurrence of needle (nlen bytes) in hay[0, n), or NULL. */
static const char *find_bytes(const char *hay, size_t n, const char *needle, size_t nlen)
{
    for (size_t i = 0; i + nlen <= n; i++)
        if (hay[i] == needle[0] && !memcmp(hay + i, needle, nlen)) return hay + i;
    return NULL;
}

/* ---- detail log --------------------------------------------------------- */

static int need_u64(const ib_mllog *log, const char *path, const char *key, uint64_t *out,
                    ib_err *err)
{
    if (ib_mllog_get_u64(log, key, out)) return IB_OK;
    if (ib_mllog_find(log, key))
        return ib_err_set(err, IB_EFORMAT, "%s: key %s is not a non-negative integer", path, key);
    return ib_err_set(err, IB_EFORMAT,
                      "%s: required key %s is missing: the detail log is incomplete (copy the "
                      "whole mlperf_log_detail.txt of the run)",
                      path, key);
}

static int need_dbl(const ib_mllog *log, const char *path, const char *key, double *out,
                    ib_err *err)
{
    if (ib_mllog_get_double(log, key, out)) return IB_OK;
    return ib_err_set(err, IB_EFORMAT, "%s: required numeric key %s is missing or not a number",
                      path, key);
}

static int need_bool(const ib_mllog *log, const char *path, const char *key, bool *out, ib_err *err)
{
    if (ib_mllog_get_bool(log, key, out)) return IB_OK;
    return ib_err_set(err, IB_EFORMAT, "%s: required boolean key %s is missing or not a boolean",
                      path, key);
}

/*
 * Sampling rules from loadgen_version (loadgen.md §2.3, §2.9): "1.1 @ ..." is
 * the v1.1 rule set; 6.0.6 and later the current one (PR #2414). Logs written
 * by inferbench name the LoadGen they are compatible with. Anything else
 * (2.x - 6.0.5: old loadable set but the equal-issue stream) is unsupported.
 */
static int rules_from_version(const char *path, const char *v, enum ib_lg_rules *out, ib_err *err)
{
    const char *lg = v;
    const char *ib = strstr(v, "(LoadGen ");
    if (!strncmp(v, "inferbench ", 11) && ib) lg = ib + 9;
    unsigned a = 0, b = 0, c = 0;
    int n = sscanf(lg, "%u.%u.%u", &a, &b, &c);
    if (n >= 2 && a == 1 && b == 1) {
        *out = IB_LG_RULES_V1_1;
        return IB_OK;
    }
    if (n == 3 && (a > 6 || (a == 6 && (b > 0 || c >= 6)))) {
        *out = IB_LG_RULES_CURRENT;
        return IB_OK;
    }
    return ib_err_set(err, IB_EUNSUPPORTED,
                      "%s: loadgen_version \"%s\": replay implements the sampling of LoadGen 1.1 "
                      "and >= 6.0.6 only (loadgen.md §2.9); this version's order cannot be derived",
                      path, v);
}

/* Every loaded_qsl_set record, from the raw text (the mllog reader keeps only
 * the element count of arrays). */
static int scan_sets(replay_in *in, const char *text, size_t len, ib_err *err)
{
    static const char key[] = "\"key\": \"loaded_qsl_set\"";
    size_t line = 1;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *ls = text + i;
        size_t ll = end - i;
        if (ll > 9 && !strncmp(ls, ":::MLLOG ", 9) && ll > sizeof key &&
            find_bytes(ls, IB_MIN(ll, (size_t)64), key, sizeof key - 1)) {
            const char *p = find_bytes(ls, ll, "\"value\": [", 10);
            if (!p)
                return ib_err_set(err, IB_EFORMAT, "%s:%zu: loaded_qsl_set without a list value",
                                  in->detail_path, line);
            p += 10;
            logged_set s = {NULL, 0, line};
            size_t cap = 0;
            const char *le = ls + ll;
            while (p < le && *p != ']') {
                while (p < le && (*p == ' ' || *p == ','))
                    p++;
                if (p < le && *p == ']') break;
                char *q;
                unsigned long long v = strtoull(p, &q, 10);
                if (q == p || q > le) {
                    ib_free(s.v);
                    return ib_err_set(err, IB_EFORMAT, "%s:%zu: loaded_qsl_set: bad entry",
                                      in->detail_path, line);
                }
                if (s.n == cap) {
                    cap = cap ? cap * 2 : 1024;
                    uint64_t *nv = ib_realloc(s.v, cap * sizeof *nv);
                    if (!nv) {
                        ib_free(s.v);
                        return ib_err_set(err, IB_ENOMEM, "replay: out of memory");
                    }
                    s.v = nv;
                }
                s.v[s.n++] = v;
                p = q;
            }
            logged_set *ns = ib_realloc(in->sets, (in->nsets + 1) * sizeof *ns);
            if (!ns) {
                ib_free(s.v);
                return ib_err_set(err, IB_ENOMEM, "replay: out of memory");
            }
            in->sets = ns;
            in->sets[in->nsets++] = s;
        }
        i = end + 1;
        line++;
    }
    return IB_OK;
}

static int read_effective(replay_in *in, const ib_mllog *log, ib_replay_result *res, ib_err *err)
{
    const char *path = in->detail_path;
    ib_lg_effective *e = &in->e;
    memset(e, 0, sizeof *e);
    const char *v = ib_mllog_get_str(log, "loadgen_version");
    if (!v)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: no loadgen_version record: not a LoadGen detail log", path);
    snprintf(res->loadgen_version, sizeof res->loadgen_version, "%s", v);
    int rc = rules_from_version(path, v, &e->rules, err);
    if (rc) return rc;
    res->rules = e->rules;
    const char *sc = ib_mllog_get_str(log, "effective_scenario");
    const char *md = ib_mllog_get_str(log, "effective_test_mode");
    if (!sc || !md)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: required key %s is missing: the detail log is incomplete", path,
                          sc ? "effective_test_mode" : "effective_scenario");
    snprintf(res->scenario, sizeof res->scenario, "%s", sc);
    snprintf(res->test_mode, sizeof res->test_mode, "%s", md);
    if (ib_lg_scenario_parse(sc, &e->scenario) != IB_OK)
        return ib_err_set(err, IB_EUNSUPPORTED, "%s: effective_scenario \"%s\" is not replayable",
                          path, sc);
    if (ib_lg_mode_parse(md, &e->mode) != IB_OK || e->mode == IB_LG_MODE_FIND_PEAK)
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "%s: effective_test_mode \"%s\" is not replayable (FindPeak probes "
                          "are not logged)",
                          path, md);
    uint64_t u = 0;
    struct {
        const char *key;
        uint64_t *dst;
    } u64s[] = {
        {"qsl_reported_total_count", &e->qsl_total_count},
        {"qsl_reported_performance_count", &e->qsl_performance_count},
        {"effective_samples_per_query", &e->samples_per_query},
        {"effective_min_query_count", &e->min_query_count},
        {"effective_min_sample_count", &e->min_sample_count},
        {"effective_qsl_rng_seed", &e->qsl_rng_seed},
        {"effective_sample_index_rng_seed", &e->sample_index_rng_seed},
        {"effective_schedule_rng_seed", &e->schedule_rng_seed},
        {"effective_accuracy_log_rng_seed", &e->accuracy_log_rng_seed},
        {"effective_accuracy_log_sampling_target", &e->accuracy_log_sampling_target},
        {"effective_performance_issue_same_index", &e->performance_issue_same_index},
        {"effective_performance_sample_count", &e->performance_sample_count},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(u64s); i++)
        if ((rc = need_u64(log, path, u64s[i].key, u64s[i].dst, err))) return rc;
    int64_t i64 = 0;
    if (!ib_mllog_get_i64(log, "effective_target_duration_ms", &e->target_duration_ms) ||
        !ib_mllog_get_i64(log, "effective_min_duration_ms", &e->min_duration_ms))
        return ib_err_set(err, IB_EFORMAT,
                          "%s: required keys effective_target_duration_ms and "
                          "effective_min_duration_ms must be integers",
                          path);
    if (ib_mllog_get_i64(log, "effective_max_duration_ms", &i64)) e->max_duration_ms = i64;
    if (ib_mllog_get_i64(log, "effective_target_latency_ns", &i64)) e->target_latency_ns = i64;
    if (ib_mllog_get_u64(log, "effective_max_query_count", &u)) e->max_query_count = u;
    if (ib_mllog_get_u64(log, "effective_max_async_queries", &u)) e->max_async_queries = u;
    if ((rc = need_dbl(log, path, "effective_target_qps", &e->target_qps, err))) return rc;
    if ((rc = need_dbl(log, path, "effective_accuracy_log_probability",
                       &e->accuracy_log_probability, err)))
        return rc;
    if ((rc = need_bool(log, path, "effective_performance_issue_unique",
                        &e->performance_issue_unique, err)))
        return rc;
    if ((rc = need_bool(log, path, "effective_performance_issue_same", &e->performance_issue_same,
                        err)))
        return rc;
    /* v1.1 logs no accuracy_sample_count: it is the QSL total (§2.9). */
    if (!ib_mllog_get_u64(log, "effective_accuracy_sample_count", &e->accuracy_sample_count))
        e->accuracy_sample_count = e->qsl_total_count;
    bool b = false;
    if (ib_mllog_get_bool(log, "effective_sample_concatenate_permutation", &b))
        e->sample_concatenate_permutation = b;
    if (e->samples_per_query == 0 || e->performance_sample_count == 0 || e->qsl_total_count == 0)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: effective_samples_per_query, effective_performance_sample_count "
                          "and qsl_reported_total_count must be > 0",
                          path);
    res->qsl_total = e->qsl_total_count;
    if (!ib_mllog_get_u64(log, "generated_query_count", &in->gen_queries)) in->gen_queries = 0;
    return IB_OK;
}

/* ---- accuracy log -------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Where the run's accuracy log is: in the run folder; for a compliance run
 * (<TEST>/performance/run_N without one) the submission layout keeps the
 * TEST01 run's log in <TEST>/accuracy/ (submission layout); else there is none
 * and only the loaded sets are compared.
 */
static bool find_acc_log(const char *dir, char *out, size_t n)
{
    if (ib_path_join(out, n, dir, ACCURACY) == IB_OK && ib_path_exists(out)) return true;
    const char *slash = strrchr(dir, '/');
    if (!slash || strncmp(slash + 1, "run_", 4)) return false;
    size_t plen = (size_t)(slash - dir);
    static const char perf[] = "/performance";
    size_t pl = sizeof perf - 1;
    if (plen < pl || strncmp(dir + plen - pl, perf, pl)) return false;
    int w = snprintf(out, n, "%.*s/accuracy/" ACCURACY, (int)(plen - pl), dir);
    if (w < 0 || (size_t)w >= n) return false;
    char det[4096];
    w = snprintf(det, sizeof det, "%.*s/accuracy/" DETAIL, (int)(plen - pl), dir);
    if (w < 0 || (size_t)w >= sizeof det || ib_path_exists(det)) return false; /* its own run */
    return ib_path_exists(out);
}

static int read_pairs(replay_in *in, ib_replay_result *res, ib_err *err)
{
    if (!in->acc_path) return IB_OK;
    ib_acclog *log = NULL;
    int rc = ib_acclog_load(in->acc_path, &log, err);
    if (rc) return rc;
    size_t n = ib_acclog_count(log);
    res->acc_entries = n;
    res->acc_truncated = ib_acclog_truncated(log);
    in->pairs = ib_malloc((n ? n : 1) * sizeof *in->pairs);
    if (!in->pairs) {
        ib_acclog_destroy(log);
        return ib_err_set(err, IB_ENOMEM, "replay: out of memory for %zu entries", n);
    }
    for (size_t i = 0; i < n; i++) {
        const ib_acclog_entry *a = ib_acclog_at(log, i);
        if (!a->has_seq_id) continue; /* nothing to place in the sequence */
        in->pairs[in->npairs++] = (pair){a->seq_id, a->qsl_idx, a->line};
    }
    ib_acclog_destroy(log);
    qsort(in->pairs, in->npairs, sizeof *in->pairs, cmp_pair);
    return IB_OK;
}

/* ---- comparison ------------------------------------------------------------ */

static void note(ib_replay_mode *m, const char *fmt, ...) IB_PRINTF(2, 3);
static void note(ib_replay_mode *m, const char *fmt, ...)
{
    if (m->first_diff[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->first_diff, sizeof m->first_diff, fmt, ap);
    va_end(ap);
}

static void compare_sets(const replay_in *in, const ib_lg_plan *p, ib_replay_mode *m)
{
    size_t np = ib_lg_plan_set_count(p);
    if (in->nsets != np)
        note(m, "%zu loaded_qsl_set records logged, the plan loads %zu sets", in->nsets, np);
    for (size_t s = 0; s < in->nsets && s < np; s++) {
        size_t len = 0;
        const ib_lg_sample_index *idx = ib_lg_plan_set(p, s, &len, NULL);
        const logged_set *ls = &in->sets[s];
        m->sets_compared++;
        if (ls->n != len) {
            m->sets_differ++;
            note(m, "%s:%zu: loaded_qsl_set %zu has %zu entries, the plan %zu", in->detail_path,
                 ls->line, s, ls->n, len);
            continue;
        }
        for (size_t k = 0; k < len; k++)
            if (ls->v[k] != idx[k]) {
                m->sets_differ++;
                note(m, "%s:%zu: loaded_qsl_set %zu entry %zu is %llu, the plan has %llu",
                     in->detail_path, ls->line, s, k, (unsigned long long)ls->v[k],
                     (unsigned long long)idx[k]);
                break;
            }
    }
}

/* Walk the series in run order (accuracy sets, then the performance set)
 * only as far as the logged seq_ids reach. */
static int compare_pairs(const replay_in *in, ib_lg_plan *p, ib_replay_mode *m, ib_err *err)
{
    size_t np = ib_lg_plan_set_count(p), nacc = ib_lg_plan_accuracy_set_count(p);
    size_t k = 0; /* next pair */
    for (size_t s = 0; s < np && k < in->npairs; s++) {
        ib_lg_series *ser = NULL;
        int rc = ib_lg_series_create(p, s, s < nacc, 0.0, &ser, err);
        if (rc) return rc;
        uint64_t first = ib_lg_series_first_seq_id(ser);
        uint64_t end = first + ib_lg_series_sample_count(ser);
        ib_lg_query q;
        while (k < in->npairs && in->pairs[k].seq < end && ib_lg_series_next(ser, &q)) {
            for (size_t j = 0; j < q.n_samples && k < in->npairs; j++) {
                uint64_t seq = q.first_seq_id + j;
                while (k < in->npairs && in->pairs[k].seq < seq) { /* not generated */
                    m->pairs_compared++;
                    m->pairs_differ++;
                    note(m, "%s:%zu: seq_id %llu is not in the plan", in->acc_path,
                         in->pairs[k].line, (unsigned long long)in->pairs[k].seq);
                    k++;
                }
                while (k < in->npairs && in->pairs[k].seq == seq) {
                    const pair *pr = &in->pairs[k++];
                    m->pairs_compared++;
                    if (pr->qsl != q.qsl_idx[j]) {
                        m->pairs_differ++;
                        note(m, "%s:%zu: seq_id %llu has qsl_idx %llu, the plan %llu", in->acc_path,
                             pr->line, (unsigned long long)seq, (unsigned long long)pr->qsl,
                             (unsigned long long)q.qsl_idx[j]);
                    } else if (!ib_lg_plan_sample_logged(p, seq)) {
                        m->pairs_differ++;
                        note(m,
                             "%s:%zu: seq_id %llu is logged but the plan does not sample it "
                             "into the accuracy log",
                             in->acc_path, pr->line, (unsigned long long)seq);
                    }
                }
            }
        }
        ib_lg_series_destroy(ser);
    }
    for (; k < in->npairs; k++) {
        m->pairs_compared++;
        m->pairs_differ++;
        note(m, "%s:%zu: seq_id %llu is beyond the plan's last sample", in->acc_path,
             in->pairs[k].line, (unsigned long long)in->pairs[k].seq);
    }
    return IB_OK;
}

/*
 * Fast path, so that a 600 s Server run replays in seconds: a v1.1
 * PerformanceOnly Server or SingleStream series without unique/same issue
 * draws the sample of seq_id k as the k-th uniform_int(0, set-1) of
 * mt19937(sample_index_rng_seed), after the one construction shuffle of the
 * "unique" list (loadgen.md §2.4; v1.1 has no equal-issue shuffles, §2.9);
 * the schedule stream does not affect it. An Offline v1.1 performance query
 * repeats the loaded set: sample j is set[j mod size] (no draw at all). The
 * series length is the logged generated_query_count (times the samples per
 * query for Offline), so no schedule pre-pass is needed. The accuracy-log decision is §4.3 item 4:
 * the k-th canonical of a default-seeded engine plus the accuracy_log_rng_seed offset, wrapped into
 * [0, 1), <= the probability. Tested against the series path (replay_fast_path_matches_series).
 */
static bool fast_path_applies(const replay_in *in)
{
    const ib_lg_effective *e = &in->e;
    bool off = e->scenario == IB_LG_SCENARIO_OFFLINE;
    return in->fast && in->gen_queries > 0 && e->rules == IB_LG_RULES_V1_1 &&
           e->mode == IB_LG_MODE_PERFORMANCE &&
           (off ? in->gen_queries == 1 : e->samples_per_query == 1) &&
           (off || e->scenario == IB_LG_SCENARIO_SERVER ||
            e->scenario == IB_LG_SCENARIO_SINGLE_STREAM) &&
           !e->performance_issue_unique && !e->performance_issue_same;
}

/* The series' accuracy-log probability (§4.3 item 4, as series.c). */
static double fast_probability(const ib_lg_effective *e)
{
    if (e->accuracy_log_sampling_target == 0) return e->accuracy_log_probability;
    double eq = e->target_qps * (double)e->min_duration_ms / 1000.0;
    uint64_t expected = (eq >= 0.0 && eq < 18446744073709551616.0) ? (uint64_t)eq : UINT64_MAX;
    uint64_t minimum = e->min_query_count * e->samples_per_query;
    if (e->scenario != IB_LG_SCENARIO_OFFLINE)
        expected *= e->samples_per_query;
    else
        minimum = e->min_sample_count;
    if (expected < minimum) expected = minimum;
    return (double)e->accuracy_log_sampling_target / (double)expected;
}

static int fast_pairs(const replay_in *in, const ib_lg_plan *p, ib_replay_mode *m, ib_err *err)
{
    const ib_lg_effective *e = &in->e;
    size_t len = 0, dist_end = 0;
    const ib_lg_sample_index *set =
        ib_lg_plan_set(p, ib_lg_plan_performance_set_index(p), &len, &dist_end);
    if (!set || dist_end == 0 || dist_end > 0x7fffffffu)
        return ib_err_set(err, IB_EINVAL, "replay: bad performance set");
    ib_lg_sample_index *scratch = ib_malloc(dist_end * sizeof *scratch);
    if (!scratch) return ib_err_set(err, IB_ENOMEM, "replay: out of memory");
    for (size_t i = 0; i < dist_end; i++)
        scratch[i] = i;
    ib_lg_rng smp, acc, offr;
    ib_lg_rng_seed(&smp, e->sample_index_rng_seed);
    ib_lg_rng_shuffle(&smp, scratch, dist_end, e->rng_compat); /* the "unique" list */
    ib_free(scratch);
    ib_lg_rng_seed(&offr, e->accuracy_log_rng_seed);
    double offset = ib_lg_rng_canonical(&offr), prob = fast_probability(e);
    ib_lg_rng_seed_default(&acc);
    bool off = e->scenario == IB_LG_SCENARIO_OFFLINE;
    uint64_t end = off ? e->samples_per_query : in->gen_queries, seq = 0, acc_pos = 0, idx = 0;
    size_t k = 0;
    for (; k < in->npairs && in->pairs[k].seq < end; k++) {
        const pair *pr = &in->pairs[k];
        if (off)
            idx = set[pr->seq % dist_end];
        else
            for (; seq <= pr->seq; seq++) /* duplicates of a seq_id reuse idx */
                idx = set[ib_lg_rng_uniform(&smp, (uint32_t)dist_end, e->rng_compat)];
        m->pairs_compared++;
        ib_lg_rng_discard(&acc, 2 * (pr->seq - acc_pos));
        double v = ib_lg_rng_canonical(&acc) + offset;
        acc_pos = pr->seq + 1;
        if (v >= 1.0) v -= 1.0;
        if (pr->qsl != idx) {
            m->pairs_differ++;
            note(m, "%s:%zu: seq_id %llu has qsl_idx %llu, the plan %llu", in->acc_path, pr->line,
                 (unsigned long long)pr->seq, (unsigned long long)pr->qsl, (unsigned long long)idx);
        } else if (!(v <= prob)) {
            m->pairs_differ++;
            note(m,
                 "%s:%zu: seq_id %llu is logged but the plan does not sample it into the "
                 "accuracy log",
                 in->acc_path, pr->line, (unsigned long long)pr->seq);
        }
    }
    for (; k < in->npairs; k++) {
        m->pairs_compared++;
        m->pairs_differ++;
        note(m, "%s:%zu: seq_id %llu is beyond the logged run's last sample %llu", in->acc_path,
             in->pairs[k].line, (unsigned long long)in->pairs[k].seq, (unsigned long long)end);
    }
    return IB_OK;
}

static int replay_mode(replay_in *in, enum ib_lg_rng_compat compat, ib_replay_mode *m, ib_err *err)
{
    memset(m, 0, sizeof *m);
    m->compat = compat;
    in->e.rng_compat = compat;
    ib_lg_plan *p = NULL;
    int rc = ib_lg_plan_create(&in->e, &p, err);
    if (rc) return rc;
    compare_sets(in, p, m);
    rc = fast_path_applies(in) ? fast_pairs(in, p, m, err) : compare_pairs(in, p, m, err);
    ib_lg_plan_destroy(p);
    m->reproduced = !rc && !m->first_diff[0];
    return rc;
}

static void free_in(replay_in *in)
{
    for (size_t i = 0; i < in->nsets; i++)
        ib_free(in->sets[i].v);
    ib_free(in->sets);
    ib_free(in->pairs);
}

int ib_replay_dir(const char *dir, ib_replay_result *out, ib_err *err)
{
    return ib_replay_dir_ex(dir, true, out, err);
}

int ib_replay_dir_ex(const char *dir, bool fast_path, ib_replay_result *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    char dpath[4096], apath[4096];
    if (ib_path_join(dpath, sizeof dpath, dir, DETAIL) != IB_OK)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    replay_in in = {.detail_path = dpath, .acc_path = NULL, .fast = fast_path};
    if (find_acc_log(dir, apath, sizeof apath)) in.acc_path = apath;
    snprintf(out->acc_path, sizeof out->acc_path, "%s", in.acc_path ? apath : "");
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(dpath, 0, &text, &len, err);
    if (rc) return rc;
    ib_mllog *log = NULL;
    rc = ib_mllog_parse(text, len, dpath, &log, err);
    if (!rc) rc = read_effective(&in, log, out, err);
    if (!rc) rc = scan_sets(&in, text, len, err);
    ib_mllog_destroy(log);
    ib_free(text);
    if (!rc) {
        out->sets_logged = in.nsets;
        rc = read_pairs(&in, out, err);
    }
    static const enum ib_lg_rng_compat modes[IB_REPLAY_NMODES] = {IB_LG_RNG_LIBSTDCXX11,
                                                                  IB_LG_RNG_LIBSTDCXX10};
    for (size_t i = 0; !rc && i < IB_REPLAY_NMODES; i++) {
        rc = replay_mode(&in, modes[i], &out->modes[i], err);
        if (!rc && out->modes[i].reproduced) {
            if (!out->reproduced) out->mode = modes[i];
            out->reproduced = true;
            out->nmodes_reproducing++;
        }
    }
    free_in(&in);
    return rc;
}
