/*
 * fuzz_loadgen_config.c - libFuzzer target for the config parser
 * (ib_lg_settings_apply_conf) and what consumes its result: validation,
 * effective settings, the kv lists and, for small tests, the plan.
 *
 * Input: byte 0 selects conf type (b % 3), rule set ((b / 3) % 2), scenario
 * ((b / 6) % 4) and model ((b / 24) % 2: "resnet50" or "*"); byte 1 sizes the
 * QSL; the rest is the config text. Checks: a rejected text leaves the
 * settings untouched and explains itself; nothing crashes or hangs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "inferbench/loadgen.h"
#include "loadgen/effective.h"
#include "loadgen/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise_plan(const ib_lg_effective *e)
{
    /* Keep generation small: the fuzzer explores parsing, not long runs. */
    double expect = e->target_qps * (double)e->target_duration_ms / 1000.0 * 2.0;
    if (e->min_query_count > 20000 || !(expect < 20000.0) || e->samples_per_query > 100000 ||
        e->min_sample_count > 1000000)
        return;
    ib_lg_plan *p = NULL;
    ib_err err;
    if (ib_lg_plan_create(e, &p, &err) != IB_OK) {
        if (!err.msg[0]) abort();
        return;
    }
    for (size_t i = 0; i < ib_lg_plan_set_count(p) && i < 4; i++) {
        ib_lg_series *s = NULL;
        if (ib_lg_series_create(p, i, i < ib_lg_plan_accuracy_set_count(p), 0.0, &s, &err))
            continue;
        ib_lg_query q;
        size_t size = 0, n = 0;
        const ib_lg_sample_index *set = ib_lg_plan_set(p, i, &size, NULL);
        while (n++ < 2000 && ib_lg_series_next(s, &q)) {
            for (size_t k = 0; k < q.n_samples; k++) {
                /* every issued index belongs to the loaded set's QSL range */
                if (q.qsl_idx[k] >= e->qsl_total_count || !set) abort();
            }
            (void)ib_lg_plan_sample_logged(p, q.first_seq_id);
        }
        ib_lg_series_destroy(s);
    }
    ib_lg_plan_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const scen[] = {"SingleStream", "MultiStream", "Server", "Offline"};
    if (size < 2) return 0;
    unsigned sel = data[0];
    enum ib_lg_conf_type type = (enum ib_lg_conf_type)(sel % 3);
    enum ib_lg_rules rules = (enum ib_lg_rules)((sel / 3) % 2);
    int sc = (int)((sel / 6) % 4);
    const char *model = ((sel / 24) % 2) ? "*" : "resnet50";
    uint64_t total = 1 + (uint64_t)data[1] * 16, perf = 1 + (uint64_t)data[1] % 64;

    ib_lg_settings s, before;
    ib_lg_settings_defaults_rules(&s, rules);
    s.scenario = (enum ib_lg_scenario)sc;
    memcpy(&before, &s, sizeof s);
    char warnings[512];
    ib_err err;
    int rc = ib_lg_settings_apply_conf(&s, (const char *)data + 2, size - 2, "fuzz.conf", model,
                                       scen[sc], type, NULL, warnings, sizeof warnings, &err);
    if (rc != IB_OK) {
        if (memcmp(&s, &before, sizeof s) != 0 || !err.msg[0] || strncmp(err.msg, "fuzz.conf", 9))
            abort();
        return 0;
    }
    if (memchr(warnings, 0, sizeof warnings) == NULL) abort();
    ib_lg_effective e;
    if (ib_lg_effective_derive(&s, total, perf, &e, &err) != IB_OK) {
        if (!err.msg[0]) abort();
        return 0;
    }
    ib_lg_kv kv[IB_LG_MAX_KVS];
    char buf[128];
    size_t n = ib_lg_requested_kvs(&e, kv, IB_LG_MAX_KVS);
    for (size_t i = 0; i < n && i < IB_LG_MAX_KVS; i++)
        ib_lg_kv_format_value(&kv[i], buf, sizeof buf);
    n = ib_lg_effective_kvs(&e, kv, IB_LG_MAX_KVS);
    if (n > IB_LG_MAX_KVS) abort();
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_lg_test_parameters_text(&e, &sb);
    ib_strbuf_deinit(&sb);
    exercise_plan(&e);
    return 0;
}
