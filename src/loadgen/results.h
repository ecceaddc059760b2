/*
 * results.h - the performance result of one series, as the official
 * PerformanceSummary computes it (results.cc; loadgen.md §2.7-2.8, v1.1
 * rules §2.9): percentiles, metrics, validity, early stopping and the
 * recommendation texts, plus inferbench's concrete suggestion for INVALID
 * runs. Pure computation over arrays the engine fills; no I/O.
 */
#ifndef IB_LOADGEN_RESULTS_H
#define IB_LOADGEN_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inferbench/loadgen.h"

/* The reported percentiles of results.h latency_percentiles. */
extern const double ib_lg_percentiles[IB_LG_NUM_PERCENTILES];

/* The settings a result depends on (from ib_lg_effective). */
typedef struct ib_lg_perf_params {
    enum ib_lg_scenario scenario;
    bool v11; /* rules v1.1: no early stopping, v1.1 MultiStream and texts */
    double target_latency_percentile;
    int64_t target_latency_ns;
    int64_t min_duration_ms;
    uint64_t min_query_count;
    uint64_t min_sample_count;
    uint64_t samples_per_query;
    double target_qps;
    uint64_t max_async_queries;
    uint64_t max_query_count; /* for the suggestion text only */
    int64_t max_duration_ms;  /* idem */
} ib_lg_perf_params;

/*
 * What one performance series measured. The arrays are reordered in place
 * (selection): pass copies if the order matters afterwards.
 * Times are seconds since the series start, as the official doubles.
 */
typedef struct ib_lg_perf_data {
    int64_t *sample_latencies; /* completed samples only */
    size_t sample_count;
    int64_t *query_latencies;  /* MultiStream: one per issued query */
    uint64_t *query_intervals; /* v1.1 MultiStream: one per issued query */
    uint64_t queries_issued;
    double max_latency_s;                /* Offline */
    double final_query_scheduled_s;      /* Server */
    double final_query_issued_s;         /* SingleStream / MultiStream */
    double final_query_all_samples_done_s; /* Server */
    uint64_t sut_errors; /* lost + duplicate + unknown + late responses */
    bool interrupted;    /* issuing was stopped early (ib_lg_options.stop_flag) */
} ib_lg_perf_data;

typedef struct ib_lg_perf_summary {
    size_t sample_count;
    uint64_t query_count;
    uint64_t overlatency_query_count; /* Server: latency > target */
    int64_t min_latency, max_latency, mean_latency, target_latency_value;
    int64_t percentile_latency[IB_LG_NUM_PERCENTILES];
    /* MultiStream per-query statistics */
    int64_t q_min, q_max, q_mean, q_target;
    int64_t q_percentile[IB_LG_NUM_PERCENTILES];
    /* v1.1 MultiStream intervals between queries */
    uint64_t qi_target;
    uint64_t qi_percentile[IB_LG_NUM_PERCENTILES];

    double qps_with_loadgen_overhead, qps_without_loadgen_overhead;
    double scheduled_samples_per_sec, completed_samples_per_sec, samples_per_second;
    int64_t early_stopping_latency_ss, early_stopping_latency_ms;

    bool has_perf_constraints;
    bool min_duration_met, min_queries_met, perf_constraints_met, early_stopping_met;
    bool sut_errors_ok; /* inferbench addition: no lost/duplicate/unknown/late */
    bool interrupted;   /* inferbench addition: stopped early, never valid */
    bool valid;         /* the official verdict AND sut_errors_ok AND not interrupted */
    uint32_t failed_rules;

    char min_duration_rec[160];
    char perf_constraints_rec[160];
    char early_stopping_rec[640]; /* multi-line, as the summary prints it */
    int64_t es_more_queries;      /* Server: queries still needed, else 0 */
    int64_t es_min_queries;       /* SS/MS: h(1) + 1 */
} ib_lg_perf_summary;

/*
 * ib_lg_perf_summarize - compute everything the summary and detail log
 * print. Deterministic function of params and data (data arrays are
 * reordered). out is fully written.
 */
void ib_lg_perf_summarize(const ib_lg_perf_params *params, ib_lg_perf_data *data,
                          ib_lg_perf_summary *out);

/* The detail-log result_invalid_reason text (official wording, newlines
 * replaced by spaces) into buf; "" when valid. */
void ib_lg_perf_invalid_reason(const ib_lg_perf_summary *s, char *buf, size_t n);

/*
 * ib_lg_perf_explain - the inferbench explanation of an INVALID result:
 * `reasons` gets one line per failed rule with the measured value and the
 * bound, then the official recommendations; `suggestion` a concrete change
 * computed from the run (e.g. the target QPS the SUT sustained, the
 * min_duration or query count needed). Both '\n'-separated, "" when valid.
 */
void ib_lg_perf_explain(const ib_lg_perf_params *params, const ib_lg_perf_data *data,
                        const ib_lg_perf_summary *s, char *reasons, size_t reasons_size,
                        char *suggestion, size_t suggestion_size);

/* "50.00", "99.90": the official DoubleToString(p * 100) label. */
void ib_lg_percentile_label(double p, char *buf, size_t n);

#endif
