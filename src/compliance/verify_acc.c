/*
 * verify_acc.c - TEST01's accuracy half (benchmarks.md §2.2): the responses a performance
 * run logged for sampled qsl_idx must equal the accuracy run's responses for the same
 * qsl_idx; when they do not (allowed non-determinism), the accuracy measured on the common
 * subset (baseline_accuracy.txt vs compliance_accuracy.txt) must agree within 1 % / 0.1 %.
 *
 * The counters, their quirks and the output lines follow verify_accuracy.py (r1.1 and
 * current, which adds "at least one match" to PASS); the comparison is byte-exact over the
 * whole payload by default, or the official first-element-of-dtype comparison on request.
 * The fallback follows verify_accuracy_baseline.py (v1.1) or the modular checker (current).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/acclog.h"
#include "compliance/acctxt.h"
#include "compliance/rules.h"
#include "compliance/verify_internal.h"

/* ---- a qsl_idx -> payload map (open addressing) ---------------------------------------- */

typedef struct idx_slot {
    uint64_t key;
    const char *data;
    size_t len;
    bool used;
} idx_slot;

typedef struct idx_map {
    idx_slot *slots;
    size_t cap; /* power of two */
    size_t len;
} idx_map;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int map_init(idx_map *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 2)
        m->cap *= 2;
    m->len = 0;
    m->slots = ib_calloc(m->cap, sizeof *m->slots);
    return m->slots ? IB_OK : IB_ENOMEM;
}

static idx_slot *map_slot(idx_map *m, uint64_t key)
{
    size_t i = (size_t)mix(key) & (m->cap - 1);
    while (m->slots[i].used && m->slots[i].key != key)
        i = (i + 1) & (m->cap - 1);
    return &m->slots[i];
}

/* Insert or replace. Grows at 50 % load. */
static int map_put(idx_map *m, uint64_t key, const char *data, size_t len)
{
    if (2 * (m->len + 1) > m->cap) {
        idx_map g;
        g.cap = m->cap * 2;
        g.len = 0;
        g.slots = ib_calloc(g.cap, sizeof *g.slots);
        if (!g.slots)
            return IB_ENOMEM;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].used) {
                *map_slot(&g, m->slots[i].key) = m->slots[i];
                g.len++;
            }
        ib_free(m->slots);
        *m = g;
    }
    idx_slot *s = map_slot(m, key);
    if (!s->used)
        m->len++;
    s->used = true;
    s->key = key;
    s->data = data;
    s->len = len;
    return IB_OK;
}

/* ---- payload comparison ---------------------------------------------------------------- */

static size_t elem_size(enum ib_verify_compare c)
{
    switch (c) {
    case IB_VERIFY_FIRST_BYTE: return 1;
    case IB_VERIFY_FIRST_FLOAT32:
    case IB_VERIFY_FIRST_INT32: return 4;
    case IB_VERIFY_FIRST_INT64: return 8;
    default: return 0;
    }
}

static uint8_t hex_byte(const char *h)
{
    return (uint8_t)(ib_hexval(h[0]) << 4 | ib_hexval(h[1]));
}

/* Official first-element comparison; payload sizes are already known to be multiples. */
static bool first_elem_differs(const char *a, size_t alen, const char *b, size_t blen,
                               enum ib_verify_compare c)
{
    size_t es = elem_size(c);
    size_t na = alen / 2 / es, nb = blen / 2 / es;
    if (na == 0 || nb == 0)
        return na != nb;
    uint8_t x[8], y[8];
    for (size_t i = 0; i < es; i++) {
        x[i] = hex_byte(a + 2 * i);
        y[i] = hex_byte(b + 2 * i);
    }
    switch (c) {
    case IB_VERIFY_FIRST_BYTE: return (int8_t)x[0] != (int8_t)y[0];
    case IB_VERIFY_FIRST_FLOAT32: {
        float fx, fy;
        memcpy(&fx, x, 4); /* little-endian payloads, as numpy reads them on x86/arm */
        memcpy(&fy, y, 4);
        return fx != fy;   /* NaN differs from everything, as in numpy */
    }
    case IB_VERIFY_FIRST_INT32: {
        int32_t ix, iy;
        memcpy(&ix, x, 4);
        memcpy(&iy, y, 4);
        return ix != iy;
    }
    default: {
        int64_t ix, iy;
        memcpy(&ix, x, 8);
        memcpy(&iy, y, 8);
        return ix != iy;
    }
    }
}

static bool bytes_differ(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen)
        return true;
    for (size_t i = 0; i < alen; i++)
        if (ib_hexval(a[i]) != ib_hexval(b[i]))
            return true;
    return false;
}

static int check_multiple(const ib_acclog_entry *e, enum ib_verify_compare c, const char *path,
                          ib_err *err)
{
    size_t es = elem_size(c);
    if (es > 1 && (e->data_len / 2) % es)
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%zu: qsl_idx %llu has %zu payload bytes, not a multiple of %zu "
                          "for the chosen dtype; fix: pick the dtype the SUT returns "
                          "(--dtype), or compare whole payloads",
                          path, e->line, (unsigned long long)e->qsl_idx, e->data_len / 2, es);
    return IB_OK;
}

/* ---- TEST01 accuracy ------------------------------------------------------------------- */

static int compare_logs(const ib_acclog *acc, const ib_acclog *perf, const char *acc_path,
                        const char *perf_path, enum ib_verify_compare cmp,
                        ib_verify_test01_counts *c, ib_err *err)
{
    idx_map m;
    if (map_init(&m, ib_acclog_count(acc) + ib_acclog_count(perf)))
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    int rc = IB_OK;
    c->acc_log_entries = ib_acclog_count(acc);
    c->perf_log_entries = ib_acclog_count(perf);
    for (size_t i = 0; i < ib_acclog_count(acc) && rc == IB_OK; i++) {
        const ib_acclog_entry *e = ib_acclog_at(acc, i);
        idx_slot *s = map_slot(&m, e->qsl_idx);
        if (s->used) {
            c->acc_log_duplicate_keys++;
            /* upstream compares the hex strings themselves */
            if (s->len != e->data_len || memcmp(s->data, e->data, e->data_len))
                c->acc_log_data_mismatch++;
        } else {
            rc = map_put(&m, e->qsl_idx, e->data, e->data_len);
        }
    }
    /* upstream decodes every performance payload before looking it up */
    for (size_t i = 0; i < ib_acclog_count(perf) && rc == IB_OK && elem_size(cmp) > 1; i++)
        rc = check_multiple(ib_acclog_at(perf, i), cmp, perf_path, err);
    for (size_t i = 0; i < ib_acclog_count(perf) && rc == IB_OK; i++) {
        const ib_acclog_entry *e = ib_acclog_at(perf, i);
        idx_slot *s = map_slot(&m, e->qsl_idx);
        if (s->used) {
            c->perf_log_qsl_idx_match++;
            bool differ;
            if (cmp == IB_VERIFY_BYTES) {
                differ = bytes_differ(e->data, e->data_len, s->data, s->len);
            } else {
                ib_acclog_entry tmp = *e;
                tmp.data = s->data;
                tmp.data_len = s->len;
                if ((rc = check_multiple(&tmp, cmp, acc_path, err)))
                    break;
                differ = first_elem_differs(e->data, e->data_len, s->data, s->len, cmp);
            }
            c->perf_log_data_mismatch += differ;
        } else {
            c->missing_qsl_idxs++;
        }
        /* upstream then stores the performance payload under this qsl_idx */
        if (rc == IB_OK)
            rc = map_put(&m, e->qsl_idx, e->data, e->data_len);
        if (rc == IB_ENOMEM)
            ib_err_set(err, rc, "out of memory");
    }
    ib_free(m.slots);
    return rc;
}

int ib_verify_test01_accuracy(const char *acc_log, const char *perf_log,
                              const ib_verify_options *o, ib_verify_outcome *out, ib_err *err)
{
    ib_verify_options def;
    if (!o) {
        ib_verify_options_defaults(&def);
        o = &def;
    }
    ib_verify_outcome_deinit(out);
    ib_verify_outcome_init(out);
    ib_acclog *acc = NULL, *perf = NULL;
    int rc = ib_acclog_load(acc_log, &acc, err);
    if (rc == IB_OK)
        rc = ib_acclog_load(perf_log, &perf, err);
    ib_verify_test01_counts *c = &out->counts;
    if (rc == IB_OK)
        rc = compare_logs(acc, perf, acc_log, perf_log, o->compare, c, err);
    if (rc) {
        ib_acclog_destroy(acc);
        ib_acclog_destroy(perf);
        return rc;
    }
    c->acc_truncated = ib_acclog_truncated(acc);
    c->perf_truncated = ib_acclog_truncated(perf);
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_strbuf_printf(&sb,
                     "Verifying accuracy. This might take a while...\n"
                     "Reading accuracy mode results...\n"
                     "Reading performance mode results...\n"
                     "num_acc_log_entries = %zu\n"
                     "num_acc_log_duplicate_keys = %zu\n"
                     "num_acc_log_data_mismatch = %zu\n"
                     "num_perf_log_entries = %zu\n"
                     "num_perf_log_qsl_idx_match = %zu\n"
                     "num_perf_log_data_mismatch = %zu\n"
                     "num_missing_qsl_idxs = %zu\n",
                     c->acc_log_entries, c->acc_log_duplicate_keys, c->acc_log_data_mismatch,
                     c->perf_log_entries, c->perf_log_qsl_idx_match, c->perf_log_data_mismatch,
                     c->missing_qsl_idxs);
    bool truncated = c->acc_truncated || c->perf_truncated;
    if (c->acc_truncated)
        ib_strbuf_printf(&sb,
                         "WARNING: %s is truncated (truncate_accuracy_log.py); only the %zu "
                         "entries left in it were compared\n",
                         acc_log, c->acc_log_entries);
    if (c->perf_truncated)
        ib_strbuf_printf(&sb,
                         "WARNING: %s is truncated (truncate_accuracy_log.py); only the %zu "
                         "entries left in it were compared\n",
                         perf_log, c->perf_log_entries);
    bool need_match = o->version == IB_CHECK_CURRENT;
    if (c->perf_log_data_mismatch > 0) {
        ib_strbuf_puts(&sb, "TEST FAIL\n\n");
        ib_verify_set_reason(out, IB_VERIFY_FAIL,
                             "%zu of %zu sampled responses differ from the accuracy run",
                             c->perf_log_data_mismatch, c->perf_log_qsl_idx_match);
    } else if (truncated) {
        ib_strbuf_puts(&sb, "TEST INCONCLUSIVE\n\n");
        ib_verify_set_reason(out, IB_VERIFY_INCONCLUSIVE,
                             "truncated accuracy logs: %zu common qsl_idx compared, no mismatch; "
                             "verify with the full logs",
                             c->perf_log_qsl_idx_match);
    } else if (need_match && c->perf_log_qsl_idx_match == 0) {
        ib_strbuf_puts(&sb, "TEST FAIL\n\n");
        ib_verify_set_reason(out, IB_VERIFY_FAIL,
                             "no sampled qsl_idx appears in the accuracy-run log");
    } else {
        ib_strbuf_puts(&sb, "TEST PASS\n\n");
    }
    rc = ib_verify_take_text(out, &sb);
    ib_strbuf_deinit(&sb);
    ib_acclog_destroy(acc);
    ib_acclog_destroy(perf);
    return rc == IB_ENOMEM ? ib_err_set(err, rc, "out of memory") : rc;
}

/* ---- the non-determinism fallback ------------------------------------------------------ */

int ib_verify_accuracy_fallback(const char *baseline_txt, const char *compliance_txt,
                                const ib_verify_options *o, ib_verify_outcome *out, ib_err *err)
{
    if (!o || !o->benchmark)
        return ib_err_set(err, IB_EINVAL,
                          "the accuracy fallback needs the benchmark name (e.g. bert-99)");
    const ib_rules *rules = ib_rules_get(o->version);
    const char *official;
    const ib_rules_model *m = ib_rules_model_find(rules, o->benchmark, &official);
    if (!m || !m->supported || m->metric == IB_ACC_NONE)
        return ib_err_set(err, IB_EINVAL,
                          "benchmark \"%s\" has no accuracy metric in the %s rules; fix: use "
                          "one of the round's benchmark names",
                          o->benchmark, rules->name);
    ib_acctxt b, c;
    int rc = ib_acctxt_load(baseline_txt, rules, m->metric, &b, err);
    if (rc == IB_OK)
        rc = ib_acctxt_load(compliance_txt, rules, m->metric, &c, err);
    if (rc)
        return rc;
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    if (out->text)
        ib_strbuf_append(&sb, out->text, out->text_len);
    ib_strbuf_puts(&sb, "Verifying accuracy via baseline comparison...\n");
    out->fallback_used = true;
    out->fallback_verdict = IB_VERIFY_FAIL;
    double thr_pct = ib_rules_fallback_delta(m); /* 1 or 0.1 */
    const char *mname = ib_acc_metric_name(m->metric);
    if (!b.has_value || b.bad_number || !c.has_value || c.bad_number) {
        ib_strbuf_printf(&sb, "TEST FAIL: no %s value in %s\n", mname,
                         !b.has_value || b.bad_number ? baseline_txt : compliance_txt);
        ib_verify_set_reason(out, IB_VERIFY_FAIL, "no %s value in %s", mname,
                             !b.has_value || b.bad_number ? baseline_txt : compliance_txt);
    } else if (b.value == 0 || c.value == 0) {
        ib_strbuf_puts(&sb, "TEST FAIL: an accuracy value is 0\n");
        ib_verify_set_reason(out, IB_VERIFY_FAIL, "an accuracy value of the fallback is 0");
    } else if (o->version == IB_CHECK_V1_1) {
        /* verify_accuracy_baseline.py: match = 100 (1 - (b - c) / b) >= 99 | 99.9 */
        double match = 100.0 * (1 - (b.value - c.value) / b.value);
        double need = 100.0 - thr_pct;
        char need_txt[32];
        ib_py_float_repr(need, need_txt, sizeof need_txt);
        ib_strbuf_printf(&sb,
                         "baseline accuracy: %s (100.00%%)\ncompliance accuracy: %s (%.2f%%)\n"
                         "threshold accuracy: %s%%\n",
                         b.value_text, c.value_text, match, need_txt);
        out->fallback_verdict = match < need ? IB_VERIFY_FAIL : IB_VERIFY_PASS;
    } else {
        /* modular checker: |1 - baseline / compliance| * 100 <= delta */
        double delta = fabs(1 - b.value / c.value) * 100;
        ib_strbuf_printf(&sb,
                         "baseline accuracy: %s\ncompliance accuracy: %s\n"
                         "delta: %.4f%% (allowed: %g%%)\n",
                         b.value_text, c.value_text, delta, thr_pct);
        out->fallback_verdict = delta <= thr_pct ? IB_VERIFY_PASS : IB_VERIFY_FAIL;
    }
    out->fallback_baseline = b.value;
    out->fallback_compliance = c.value;
    if (b.has_value && c.has_value && !b.bad_number && !c.bad_number && b.value && c.value)
        ib_strbuf_puts(&sb, out->fallback_verdict == IB_VERIFY_PASS ? "TEST PASS\n" : "TEST FAIL\n");
    if (out->fallback_verdict == IB_VERIFY_PASS) {
        out->verdict = IB_VERIFY_PASS; /* the fallback overrules the byte comparison */
    } else if (b.has_value && c.has_value) {
        ib_verify_set_reason(out, IB_VERIFY_FAIL,
                             "baseline %s %s and compliance %s %s differ by more than %g %%",
                             mname, b.value_text, mname, c.value_text, thr_pct);
    }
    rc = ib_verify_take_text(out, &sb);
    ib_strbuf_deinit(&sb);
    return rc == IB_ENOMEM ? ib_err_set(err, rc, "out of memory") : rc;
}
