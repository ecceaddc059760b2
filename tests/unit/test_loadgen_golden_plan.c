/*
 * test_loadgen_golden_plan.c - every case of ../shared/golden (recorded runs
 * of the official LoadGen 6.0.17 and 1.1) replayed through the config parser,
 * the effective settings and the plan, compared field by field with the
 * case's expected.json: requested_* / effective_* keys (value and JSON type),
 * every loaded_qsl_set, every generated_* record, the whole issue order,
 * query sizes, the sampled seq_ids, the scheduled samples per second and the
 * summary's "Test Parameters Used" lines. Skips when ../shared is absent.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "inferbench/base.h"
#include "inferbench/loadgen.h"
#include "loadgen/effective.h"
#include "loadgen/plan.h"
#include "test.h"

static const char *const k_cases[] = {
    "01_offline_perf_p1000",
    "02_offline_accuracy_p999",
    "03_server_resnet50_v61",
    "04_server_v11seeds_p777",
    "05_singlestream_minq2500_p1000",
    "06_multistream_spq8",
    "07_server_fisher_yates_p70000",
    "08_server_test01_sampling",
    "09_singlestream_test04_same",
    "10_server_issue_unique",
    "11_server_bert99_model_keys",
    "v11_01_offline_perf_p1000",
    "v11_02_offline_accuracy_p875",
    "v11_03_server_resnet50_v11_official",
    "v11_04_singlestream_minq1500_p1001",
    "v11_05_multistream_v11seeds_spq6",
};

static const char *golden_dir(void)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/golden", ib_test_shared_dir());
    if (!ib_path_is_dir(dir)) TEST_SKIP("../shared/golden is absent: golden vectors not available");
    return dir;
}

/*
 * jansson rejects integers above INT64_MAX (64-bit seeds). Before parsing,
 * such literals outside strings are quoted as "uint64:<digits>", and the
 * comparison below formats our unsigned values the same way.
 */
static json_t *load_json(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    ib_err e;
    ASSERT_OK_ERR(ib_file_read_all(path, 0, &text, &len, &e), &e);
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    bool in_str = false;
    for (size_t i = 0; i < len;) {
        char c = text[i];
        if (in_str) {
            ib_strbuf_putc(&sb, c);
            if (c == '\\' && i + 1 < len)
                ib_strbuf_putc(&sb, text[++i]);
            else if (c == '"')
                in_str = false;
            i++;
            continue;
        }
        if (c == '"') in_str = true;
        if (c >= '0' && c <= '9' && (i == 0 || !strchr("0123456789.-+eE", text[i - 1]))) {
            size_t j = i;
            while (j < len && text[j] >= '0' && text[j] <= '9')
                j++;
            bool plain = j >= len || !strchr(".eE", text[j]);
            if (plain &&
                (j - i > 19 || (j - i == 19 && strncmp(text + i, "9223372036854775807", 19) > 0))) {
                ib_strbuf_printf(&sb, "\"uint64:%.*s\"", (int)(j - i), text + i);
                i = j;
                continue;
            }
            ib_strbuf_append(&sb, text + i, j - i);
            i = j;
            continue;
        }
        ib_strbuf_putc(&sb, c);
        i++;
    }
    ib_free(text);
    json_error_t je;
    json_t *j = json_loads(ib_strbuf_cstr(&sb), 0, &je);
    ib_strbuf_deinit(&sb);
    if (!j) ib_test_fail(__FILE__, __LINE__, "%s:%d: %s", path, je.line, je.text);
    return j;
}

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Apply one config file of the case folder, if the case uses it. */
static void apply_file(ib_lg_settings *s, const char *dir, json_t *cfg, const char *which,
                       const char *model, const char *scenario, enum ib_lg_conf_type type)
{
    const char *name = jstr(cfg, which);
    if (!name) return;
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!ib_path_exists(path)) {
        /* "<name>.ref": one line naming a file under golden/ (README rules/). */
        char ref[4700], *text = NULL;
        size_t len = 0;
        snprintf(ref, sizeof ref, "%s.ref", path);
        ib_err e;
        ASSERT_OK_ERR(ib_file_read_all(ref, 4096, &text, &len, &e), &e);
        while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            text[--len] = 0;
        snprintf(path, sizeof path, "%s/../%s", dir, text);
        if (!ib_path_exists(path)) snprintf(path, sizeof path, "%s/%s", golden_dir(), text);
        ib_free(text);
    }
    ib_err err;
    char warn[4096];
    ASSERT_OK_ERR(ib_lg_settings_apply_conf_file(s, path, model, scenario, type, NULL, warn,
                                                 sizeof warn, &err),
                  &err);
}

/* Compare a kv list with an expected JSON object, in order and by value. */
static void compare_kvs(const char *what, const ib_lg_kv *kv, size_t n, json_t *want)
{
    ASSERT_UINT_EQ(n, json_object_size(want));
    const char *key;
    json_t *val;
    size_t i = 0;
    json_object_foreach(want, key, val)
    {
        if (strcmp(kv[i].key, key) != 0)
            ib_test_fail(__FILE__, __LINE__, "%s key %zu: got %s, expected %s", what, i, kv[i].key,
                         key);
        char text[256], js[300];
        ib_lg_kv_format_value(&kv[i], text, sizeof text);
        if (kv[i].type == IB_LG_KV_STRING)
            snprintf(js, sizeof js, "\"%s\"", text);
        else if (kv[i].type == IB_LG_KV_UINT && kv[i].u > (uint64_t)INT64_MAX)
            snprintf(js, sizeof js, "\"uint64:%s\"", text);
        else
            snprintf(js, sizeof js, "%s", text);
        json_error_t je;
        json_t *got = json_loads(js, JSON_DECODE_ANY, &je);
        ASSERT_NOT_NULL(got);
        if (!json_equal(got, val)) {
            char *w = json_dumps(val, JSON_ENCODE_ANY);
            ib_test_fail(__FILE__, __LINE__, "%s %s: got %s (type %d), expected %s", what, key, js,
                         json_typeof(got), w);
        }
        json_decref(got);
        i++;
    }
}

/* The keys_in_order of the detail log restricted to a prefix must match. */
static void compare_key_order(json_t *keys_in_order, const char *prefix, const ib_lg_kv *kv,
                              size_t n)
{
    size_t k = 0, i;
    json_t *v;
    json_array_foreach(keys_in_order, i, v)
    {
        const char *key = json_string_value(v);
        if (strncmp(key, prefix, strlen(prefix)) != 0) continue;
        ASSERT_UINT_LE(k + 1, n);
        ASSERT_STR_EQ(kv[k].key, key);
        k++;
    }
    ASSERT_UINT_EQ(k, n);
}

static void compare_set(size_t which, const ib_lg_sample_index *got, size_t len, json_t *want)
{
    if (len != json_array_size(want))
        ib_test_fail(__FILE__, __LINE__, "loaded_qsl_set %zu: %zu entries, expected %zu", which,
                     len, json_array_size(want));
    for (size_t i = 0; i < len; i++) {
        json_int_t w = json_integer_value(json_array_get(want, i));
        if ((json_int_t)got[i] != w)
            ib_test_fail(__FILE__, __LINE__,
                         "loaded_qsl_set %zu: first difference at [%zu]: %zu, expected %lld", which,
                         i, got[i], (long long)w);
    }
}

typedef struct issue_state {
    json_t *by_seq;  /* expected qsl_idx per seq_id */
    json_t *rle;     /* [[size, run], ...] */
    size_t rle_i;    /* current run */
    json_int_t left; /* queries left in the current run */
    uint64_t queries, samples;
} issue_state;

static void check_query(issue_state *st, const ib_lg_query *q)
{
    if (st->left == 0) {
        json_t *run = json_array_get(st->rle, st->rle_i++);
        ASSERT_NOT_NULL(run);
        st->left = json_integer_value(json_array_get(run, 1));
    }
    json_t *run = json_array_get(st->rle, st->rle_i - 1);
    json_int_t size = json_integer_value(json_array_get(run, 0));
    if ((json_int_t)q->n_samples != size)
        ib_test_fail(__FILE__, __LINE__, "query %llu: %zu samples, expected %lld",
                     (unsigned long long)st->queries, q->n_samples, (long long)size);
    st->left--;
    for (size_t k = 0; k < q->n_samples; k++) {
        uint64_t seq = q->first_seq_id + k;
        json_t *w = json_array_get(st->by_seq, (size_t)seq);
        if (!w)
            ib_test_fail(__FILE__, __LINE__, "seq_id %llu beyond the expected %zu samples",
                         (unsigned long long)seq, json_array_size(st->by_seq));
        if ((json_int_t)q->qsl_idx[k] != json_integer_value(w))
            ib_test_fail(__FILE__, __LINE__,
                         "issue order: first difference at seq_id %llu: qsl_idx %zu, expected "
                         "%lld",
                         (unsigned long long)seq, q->qsl_idx[k], (long long)json_integer_value(w));
    }
    st->queries++;
    st->samples += q->n_samples;
}

static void check_summary_params(const ib_lg_effective *e, json_t *summary)
{
    json_t *tp = json_object_get(summary, "test_parameters");
    if (!json_is_true(json_object_get(summary, "has_results_section"))) {
        ASSERT_UINT_EQ(json_array_size(tp), 0);
        return;
    }
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ASSERT_OK(ib_lg_test_parameters_text(e, &sb));
    const char *p = ib_strbuf_cstr(&sb);
    size_t i;
    json_t *line;
    json_array_foreach(tp, i, line)
    {
        const char *nl = strchr(p, '\n');
        ASSERT_NOT_NULL(nl);
        char got[512];
        snprintf(got, sizeof got, "%.*s", (int)(nl - p), p);
        ASSERT_STR_EQ(got, json_string_value(line));
        p = nl + 1;
    }
    ASSERT_STR_EQ(p, ""); /* no extra lines */
    ib_strbuf_deinit(&sb);
}

static void run_case(const char *name)
{
    char dir[4600], path[4700];
    snprintf(dir, sizeof dir, "%s/%s", golden_dir(), name);
    snprintf(path, sizeof path, "%s/case.json", dir);
    json_t *cs = load_json(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    json_t *ex = load_json(path);

    const char *model = jstr(cs, "model"), *rules_s = jstr(cs, "rules");
    enum ib_lg_rules rules = IB_LG_RULES_CURRENT;
    if (rules_s) ASSERT_OK(ib_lg_rules_parse(rules_s, &rules));
    ib_lg_settings s;
    ib_lg_settings_defaults_rules(&s, rules);
    ASSERT_OK(ib_lg_scenario_parse(jstr(cs, "scenario"), &s.scenario));
    ASSERT_OK(ib_lg_mode_parse(jstr(cs, "mode"), &s.mode));
    const char *scen = ib_lg_scenario_name(s.scenario);
    json_t *cfg = json_object_get(cs, "config_files");
    apply_file(&s, dir, cfg, "mlperf_conf", model, scen, IB_LG_CONF_RULES);
    apply_file(&s, dir, cfg, "user_conf", model, scen, IB_LG_CONF_USER);
    apply_file(&s, dir, cfg, "audit_config", "*", scen, IB_LG_CONF_AUDIT);

    json_t *qsl = json_object_get(cs, "qsl");
    uint64_t total = (uint64_t)json_integer_value(json_object_get(qsl, "total_sample_count"));
    uint64_t perf = (uint64_t)json_integer_value(json_object_get(qsl, "performance_sample_count"));
    ib_lg_effective e;
    ib_err err;
    ASSERT_OK_ERR(ib_lg_effective_derive(&s, total, perf, &e, &err), &err);

    ib_lg_kv kv[IB_LG_MAX_KVS];
    json_t *order = json_object_get(json_object_get(ex, "detail_log"), "keys_in_order");
    size_t n = ib_lg_requested_kvs(&e, kv, IB_LG_MAX_KVS);
    compare_kvs("requested", kv, n, json_object_get(ex, "requested_settings"));
    compare_key_order(order, "requested_", kv, n);
    n = ib_lg_effective_kvs(&e, kv, IB_LG_MAX_KVS);
    compare_kvs("effective", kv, n, json_object_get(ex, "effective_settings"));
    compare_key_order(order, "effective_", kv, n);
    check_summary_params(&e, json_object_get(ex, "summary"));

    ib_lg_plan *plan;
    ASSERT_OK_ERR(ib_lg_plan_create(&e, &plan, &err), &err);
    json_t *sets = json_object_get(ex, "loaded_qsl_sets");
    json_t *gen = json_object_get(ex, "generated");
    json_t *issued = json_object_get(ex, "issued");
    ASSERT_UINT_EQ(ib_lg_plan_set_count(plan), json_array_size(sets));
    issue_state st = {json_object_get(issued, "qsl_idx_by_seq_id"),
                      json_object_get(issued, "query_sizes_rle"),
                      0,
                      0,
                      0,
                      0};
    size_t nacc = ib_lg_plan_accuracy_set_count(plan);
    int64_t last_sched = 0;
    uint64_t last_count = 0;
    for (size_t i = 0; i < ib_lg_plan_set_count(plan); i++) {
        size_t len, dist_end;
        const ib_lg_sample_index *set = ib_lg_plan_set(plan, i, &len, &dist_end);
        compare_set(i, set, len, json_array_get(sets, i));
        ib_lg_series *ser;
        ASSERT_OK_ERR(ib_lg_series_create(plan, i, i < nacc, 0.0, &ser, &err), &err);
        json_t *g = json_array_get(gen, i);
        ASSERT_NOT_NULL(g);
        ASSERT_UINT_EQ(ib_lg_series_query_count(ser),
                       json_integer_value(json_object_get(g, "query_count")));
        ASSERT_UINT_EQ(ib_lg_series_samples_per_query(ser),
                       json_integer_value(json_object_get(g, "samples_per_query")));
        ASSERT_INT_EQ(ib_lg_series_duration_ns(ser),
                      json_integer_value(json_object_get(g, "query_duration_ns")));
        ib_lg_query q;
        uint64_t nq = 0;
        while (ib_lg_series_next(ser, &q)) {
            check_query(&st, &q);
            nq++;
        }
        ASSERT_UINT_EQ(nq, ib_lg_series_query_count(ser));
        last_sched = ib_lg_series_last_scheduled_ns(ser);
        last_count = nq;
        ib_lg_series_destroy(ser);
    }
    ASSERT_UINT_EQ(ib_lg_plan_set_count(plan), json_array_size(gen));
    ASSERT_UINT_EQ(st.queries, json_integer_value(json_object_get(issued, "query_count")));
    ASSERT_UINT_EQ(st.samples, json_integer_value(json_object_get(issued, "sample_count")));
    ASSERT_UINT_EQ(st.samples, json_array_size(st.by_seq));
    json_t *rqc = json_object_get(ex, "result_query_count");
    if (json_is_integer(rqc)) ASSERT_UINT_EQ(last_count, json_integer_value(rqc));

    /* Accuracy log: complete logs list every seq_id; sampled ones exactly
     * the listed seq_ids (case 08). */
    json_t *acc = json_object_get(ex, "accuracy_log");
    json_t *seq_ids = json_object_get(acc, "seq_ids");
    json_t *acc_idx = json_object_get(acc, "qsl_idx");
    size_t next_listed = 0, logged = 0;
    for (uint64_t id = 0; id < st.samples; id++) {
        bool lg = ib_lg_plan_sample_logged(plan, id);
        logged += lg;
        if (json_is_true(json_object_get(acc, "complete"))) {
            if (!lg)
                ib_test_fail(__FILE__, __LINE__, "seq_id %llu not logged in a complete log",
                             (unsigned long long)id);
            continue;
        }
        json_t *w = json_array_get(seq_ids, next_listed);
        bool listed = w && (uint64_t)json_integer_value(w) == id;
        if (lg != listed)
            ib_test_fail(__FILE__, __LINE__, "accuracy log: seq_id %llu logged=%d, expected %d",
                         (unsigned long long)id, lg, listed);
        if (listed) {
            ASSERT_INT_EQ(json_integer_value(json_array_get(st.by_seq, (size_t)id)),
                          json_integer_value(json_array_get(acc_idx, next_listed)));
            next_listed++;
        }
    }
    ASSERT_UINT_EQ(logged, json_integer_value(json_object_get(acc, "entry_count")));

    /* Server: (N-1) / scheduled time of the last query, as logged. */
    json_t *sched = json_object_get(ex, "result_scheduled_samples_per_sec");
    if (json_is_number(sched)) {
        double v = (double)(st.samples - 1) / ((double)last_sched / 1e9);
        char buf[64];
        ib_lg_format_double(v, buf, sizeof buf);
        ASSERT_DBL_EQ(strtod(buf, NULL), json_number_value(sched));
        snprintf(buf, sizeof buf, "%.2f", v);
        ASSERT_STR_EQ(buf, jstr(json_object_get(ex, "summary"), "Scheduled samples per second"));
    }
    ib_lg_plan_destroy(plan);
    json_decref(cs);
    json_decref(ex);
}

/* Every folder of ../shared/golden with a case.json has a test below. */
TEST(loadgen_golden_all_cases_covered)
{
    DIR *d = opendir(golden_dir());
    ASSERT_NOT_NULL(d);
    struct dirent *de;
    size_t found = 0;
    while ((de = readdir(d))) {
        char path[4600];
        snprintf(path, sizeof path, "%s/%s/case.json", golden_dir(), de->d_name);
        if (!ib_path_exists(path)) continue;
        found++;
        bool known = false;
        for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++)
            known |= strcmp(k_cases[i], de->d_name) == 0;
        if (!known) ib_test_fail(__FILE__, __LINE__, "golden case %s has no test", de->d_name);
    }
    closedir(d);
    ASSERT_UINT_EQ(found, sizeof k_cases / sizeof k_cases[0]);
}

TEST(loadgen_golden_01_offline_perf_p1000)
{
    run_case(k_cases[0]);
}
TEST(loadgen_golden_02_offline_accuracy_p999)
{
    run_case(k_cases[1]);
}
TEST(loadgen_golden_03_server_resnet50_v61)
{
    run_case(k_cases[2]);
}
TEST(loadgen_golden_04_server_v11seeds_p777)
{
    run_case(k_cases[3]);
}
TEST(loadgen_golden_05_singlestream_minq2500_p1000)
{
    run_case(k_cases[4]);
}
TEST(loadgen_golden_06_multistream_spq8)
{
    run_case(k_cases[5]);
}
TEST(loadgen_golden_07_server_fisher_yates_p70000)
{
    run_case(k_cases[6]);
}
TEST(loadgen_golden_08_server_test01_sampling)
{
    run_case(k_cases[7]);
}
TEST(loadgen_golden_09_singlestream_test04_same)
{
    run_case(k_cases[8]);
}
TEST(loadgen_golden_10_server_issue_unique)
{
    run_case(k_cases[9]);
}
TEST(loadgen_golden_11_server_bert99_model_keys)
{
    run_case(k_cases[10]);
}
TEST(loadgen_golden_v11_01_offline_perf_p1000)
{
    run_case(k_cases[11]);
}
TEST(loadgen_golden_v11_02_offline_accuracy_p875)
{
    run_case(k_cases[12]);
}
TEST(loadgen_golden_v11_03_server_resnet50_v11_official)
{
    run_case(k_cases[13]);
}
TEST(loadgen_golden_v11_04_singlestream_minq1500_p1001)
{
    run_case(k_cases[14]);
}
TEST(loadgen_golden_v11_05_multistream_v11seeds_spq6)
{
    run_case(k_cases[15]);
}
