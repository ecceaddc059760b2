/*
 * effective.h - the effective settings of one test (TestSettingsInternal of
 * the official LoadGen, loadgen.md §2.2; v1.1 differences §2.9) and the
 * typed, ordered key/value lists the detail log and the summary print:
 * every requested_* and effective_* key with the official key set, order and
 * JSON type per scenario and rule set, and the "Test Parameters Used" lines.
 * Writers only format: nothing here does I/O.
 *
 * Thread-safety: pure functions over caller storage.
 *
 * Header history (for users of this internal header):
 *  - v1: initial API.
 */
#ifndef IB_LOADGEN_EFFECTIVE_H
#define IB_LOADGEN_EFFECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "inferbench/loadgen.h"

typedef struct ib_lg_effective {
    /* The settings as logged by requested_*: after every config file, the
     * audit.config and the test05 seed swap (official StartTest order). */
    ib_lg_settings requested;
    uint64_t qsl_total_count;       /* QSL TotalSampleCount() */
    uint64_t qsl_performance_count; /* QSL PerformanceSampleCount() */
    bool test05_applied;            /* requested.test05 was set: seeds swapped */

    enum ib_lg_scenario scenario;
    enum ib_lg_mode mode;
    enum ib_lg_rules rules;
    enum ib_lg_rng_compat rng_compat;

    uint64_t samples_per_query;
    double target_qps;         /* queries/s (Server Poisson rate, else 1e9/expected) */
    int64_t target_latency_ns; /* Server bound; v1.1 MultiStream async/qps; else 0 */
    double target_latency_percentile;
    uint64_t max_async_queries;
    int64_t target_duration_ms; /* min_duration, 0 for Offline */
    int64_t min_duration_ms;
    int64_t max_duration_ms;
    uint64_t min_query_count; /* Offline: 1; equal-issue SingleStream rounding */
    uint64_t max_query_count;
    uint64_t min_sample_count;
    uint64_t qsl_rng_seed;
    uint64_t sample_index_rng_seed;
    uint64_t schedule_rng_seed;
    uint64_t accuracy_log_rng_seed;
    double accuracy_log_probability;
    uint64_t accuracy_log_sampling_target;
    bool print_timestamps;
    bool performance_issue_unique;
    bool performance_issue_same;
    uint64_t performance_issue_same_index;
    uint64_t performance_sample_count; /* override or QSL value (not capped) */
    uint64_t accuracy_sample_count;    /* override or QSL total (v1.1: QSL total) */
    bool sample_concatenate_permutation;
    bool use_token_latencies;
    uint64_t server_ttft_latency;
    uint64_t server_tpot_latency;
    bool infer_token_latencies;
    uint64_t token_latency_scaling_factor;
} ib_lg_effective;

/*
 * ib_lg_effective_derive - derive every effective value from `s` (settings
 * after all config files and audit.config) and the QSL's counts. Applies
 * test05 (mode PerformanceOnly, test05 seeds) first, like StartTest.
 * Settings the official LoadGen only logs as error_invalid_test_settings
 * (negative qps, performance_issue_same_index >= performance count, unique
 * and same together) and settings that would make it divide by zero, loop
 * forever or crash are rejected here: IB_EINVAL with the reason in err.
 * out: caller storage, fully written on IB_OK.
 */
int ib_lg_effective_derive(const ib_lg_settings *s, uint64_t qsl_total, uint64_t qsl_perf,
                           ib_lg_effective *out, ib_err *err);

/* JSON type of a logged value. INT and UINT print as integers, DOUBLE with
 * ib_lg_format_double (C++ default stream), BOOL as true/false. */
typedef enum ib_lg_kv_type {
    IB_LG_KV_STRING,
    IB_LG_KV_INT,
    IB_LG_KV_UINT,
    IB_LG_KV_DOUBLE,
    IB_LG_KV_BOOL,
} ib_lg_kv_type;

typedef struct ib_lg_kv {
    const char *key; /* static string, e.g. "requested_server_target_qps" */
    ib_lg_kv_type type;
    const char *s; /* STRING: static string */
    int64_t i;     /* INT */
    uint64_t u;    /* UINT */
    double d;      /* DOUBLE */
    bool b;        /* BOOL */
} ib_lg_kv;

/* Upper bound of the number of entries either list can have. */
#define IB_LG_MAX_KVS 48

/*
 * ib_lg_requested_kvs / ib_lg_effective_kvs - the requested_* / effective_*
 * detail-log records in the official order for e's scenario and rule set.
 * Writes min(count, cap) entries to out and returns count (like snprintf).
 */
size_t ib_lg_requested_kvs(const ib_lg_effective *e, ib_lg_kv *out, size_t cap);
size_t ib_lg_effective_kvs(const ib_lg_effective *e, ib_lg_kv *out, size_t cap);

/*
 * ib_lg_test_parameters_text - append the "Test Parameters Used" block of
 * the summary (the lines after that banner, each ending in '\n', e.g.
 * "target_qps : 2500\n"), including the equal-issue WARNING when it applies.
 * Returns IB_OK or IB_ENOMEM.
 */
int ib_lg_test_parameters_text(const ib_lg_effective *e, ib_strbuf *out);

/*
 * ib_lg_format_double - print v as a C++ ostream does by default (%g with 6
 * significant digits: 2500, 0.99, 2e+06, 5.95238e+06). Returns the length
 * snprintf would write. Non-finite values print as "inf"/"nan" (as C++ does;
 * JSON writers must handle them).
 */
int ib_lg_format_double(double v, char *buf, size_t n);

/* Format one value (JSON-ready text: strings are NOT quoted or escaped). */
int ib_lg_kv_format_value(const ib_lg_kv *kv, char *buf, size_t n);

#endif
