/*
 * report.h - reports over MLPerf Inference results trees: parse the LoadGen logs of
 * official submission trees and of inferbench runs, compare systems, relate
 * throughput to price/TCO and MLPerf-measured power, and write summary.csv,
 * summary.json, charts (SVG + PNG through cairo) and one self-contained report.html.
 *
 * The report library reads files only; it never runs an engine. Two layers:
 *  - ib_report_run_*: one performance run (a run_1 folder) parsed into a plain
 *    struct, the detail log first and the summary only as a fallback;
 *  - ib_report: a set of results trees plus prices, TCO and provenance inputs,
 *    the derived metrics (users.md §3.1) and the output writers.
 *
 * Derived metrics (relative performance, perf/$, cost per million inferences,
 * perf/W) are inferbench calculations, never MLPerf metrics; the writers add the
 * MLCommons-required disclosures (users.md §3.3).
 */
#ifndef INFERBENCH_REPORT_H
#define INFERBENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "status.h"

IB_EXTERN_C_BEGIN

enum ib_report_scenario {
    IB_REPORT_SCENARIO_UNKNOWN = 0,
    IB_REPORT_SCENARIO_SINGLE_STREAM = 1,
    IB_REPORT_SCENARIO_MULTI_STREAM = 2,
    IB_REPORT_SCENARIO_SERVER = 3,
    IB_REPORT_SCENARIO_OFFLINE = 4,
};

enum ib_report_validity {
    IB_REPORT_VALIDITY_UNKNOWN = 0,
    IB_REPORT_VALIDITY_VALID = 1,
    IB_REPORT_VALIDITY_INVALID = 2,
};

/* Where a run's numbers came from. */
enum ib_report_source {
    IB_REPORT_SOURCE_NONE = 0,
    IB_REPORT_SOURCE_DETAIL = 1,  /* mlperf_log_detail.txt (JSON lines) */
    IB_REPORT_SOURCE_SUMMARY = 2, /* mlperf_log_summary.txt (fallback) */
};

/*
 * Rules era, which decides the official metric (submission checker RESULT_FIELD_NEW):
 *  V1       v1.0-v1.1: Server scheduled samples/s, SingleStream p90 latency,
 *           MultiStream samples per query (the fixed-rate "legacy" MultiStream);
 *  ES       v2.0-v4.0: early-stopping latency estimates, Server scheduled samples/s;
 *  CURRENT  v4.1 on:   Server completed samples/s.
 */
enum ib_report_era {
    IB_REPORT_ERA_UNKNOWN = 0,
    IB_REPORT_ERA_V1 = 1,
    IB_REPORT_ERA_ES = 2,
    IB_REPORT_ERA_CURRENT = 3,
};

/* Latency percentiles the LoadGen reports, in this order (loadgen.md §2.7). */
#define IB_REPORT_NPCT 6
IB_API extern const double ib_report_percentiles[IB_REPORT_NPCT]; /* 50 90 95 97 99 99.9 */

/*
 * One parsed performance run. Plain data in caller storage: no heap members, so
 * it needs no deinit. Numbers absent from the log are NaN (counts: -1).
 */
typedef struct ib_report_run {
    int source;               /* enum ib_report_source */
    int era;                  /* enum ib_report_era */
    char version[16];         /* "v1.1" (from loadgen_version or the override), or "" */
    char loadgen_version[64]; /* as logged, e.g. "1.1 @ b1452de454" */
    char sut_name[128];
    char test_datetime[40];
    int scenario;             /* enum ib_report_scenario */
    char mode[32];            /* "PerformanceOnly" */
    int validity;             /* enum ib_report_validity */
    char invalid_reason[256]; /* result_invalid_reason / recommendations, if any */
    /* The official metric, in `unit`. */
    double metric;
    char metric_key[64]; /* detail-log key or summary label it was read from */
    char unit[24];       /* "samples/s", "queries/s", "tokens/s", "ms", "samples/query" */
    bool higher_is_better;
    /* Raw values (NaN when absent). Latencies in ns. */
    double offline_samples_per_sec;
    double server_scheduled_per_sec;
    double server_completed_per_sec;
    double tokens_per_sec;
    double completed_tokens_per_sec;
    double early_stopping_ss_ns;
    double early_stopping_ms_ns;
    double latency_pct_ns[IB_REPORT_NPCT]; /* per sample (per query for MultiStream) */
    double latency_min_ns, latency_max_ns, latency_mean_ns;
    double target_latency_ns; /* 0 when the scenario has no bound */
    double target_qps;
    int64_t samples_per_query;
    int64_t query_count;
    char power_begin[32]; /* "MM-DD-YYYY HH:MM:SS.mmm" UTC, "" when absent */
    char power_end[32];
    int errors; /* records with metadata.is_error (detail) / ERROR lines */
    int warnings;
} ib_report_run;

/*
 * ib_report_run_parse_detail - parse the text of an mlperf_log_detail.txt.
 *   text/len   the whole file (need not be NUL-terminated)
 *   name       the file name for messages ("…/run_1/mlperf_log_detail.txt")
 *   benchmark  results-tree benchmark name (per-benchmark metric overrides); may be NULL
 *   version    rules version override ("v1.1"); NULL = from loadgen_version
 *   out        OUT: the run
 * Returns IB_OK, IB_EFORMAT (not a detail log, invalid JSON line N, truncated: no
 * result records, an AccuracyOnly log, missing metric) with `err` naming file and line.
 * Thread-safety: reentrant.
 */
IB_API int ib_report_run_parse_detail(const char *text, size_t len, const char *name,
                                      const char *benchmark, const char *version,
                                      ib_report_run *out, ib_err *err);

/* ib_report_run_parse_summary - same for mlperf_log_summary.txt (the fallback). */
IB_API int ib_report_run_parse_summary(const char *text, size_t len, const char *name,
                                       const char *benchmark, const char *version,
                                       ib_report_run *out, ib_err *err);

/*
 * ib_report_run_load - parse a run folder (…/performance/run_1): the detail log when
 * present, else the summary. IB_ENOTFOUND when neither file exists.
 */
IB_API int ib_report_run_load(const char *run_dir, const char *benchmark, const char *version,
                              ib_report_run *out, ib_err *err);

/* ib_report_scenario_name - "Offline", "Server", ... ("unknown"). Static storage. */
IB_API const char *ib_report_scenario_name(int scenario);
/* ib_report_scenario_parse - case-insensitive name -> enum (UNKNOWN if not a scenario). */
IB_API int ib_report_scenario_parse(const char *name);
/* ib_report_validity_name - "VALID", "INVALID", "UNKNOWN". */
IB_API const char *ib_report_validity_name(int validity);

/* ---- the report object ------------------------------------------------------ */

typedef struct ib_report ib_report;

typedef struct ib_report_options {
    const char *baseline;      /* system id; NULL = cheapest priced system, else the first */
    const char *rules_version; /* "v1.1": overrides the version found in the logs */
    const char *title;         /* report title; NULL = generated */
    const char *generated;     /* date string for the report; NULL = today (UTC) */
    bool strict;               /* an unfinished run is an error (default: skipped, warned) */
} ib_report_options;

IB_API void ib_report_options_defaults(ib_report_options *opts);

/* A system of the report (borrowed strings, valid until ib_report_destroy). */
typedef struct ib_report_system {
    const char *id;          /* system_desc_id / folder name */
    const char *name;        /* system_name from the JSON, else the id */
    const char *submitter;   /* "" when unknown */
    const char *division;    /* "closed", "open", "" */
    const char *status;      /* category: "available", "preview", "rdi", "" */
    const char *accelerator; /* accelerator_model_name, "" */
    const char *host_cpu;    /* host_processor_model_name */
    int accelerators_per_node;
    int nodes;
    int chips;             /* accelerators x nodes; host CPUs when no accelerator */
    const char *chip_kind; /* the chip counted: accelerator or CPU model */
    bool official_layout;  /* found in a <division>/<submitter>/results tree */
    bool published;        /* listed in the published-results file */
    const char *result_id; /* MLPerf result ID from that file, "" */
    const char *retrieved; /* retrieval date from that file, "" */
    const char *source;    /* where the published results come from, "" */
    bool has_price;
    double price;
    const char *currency;
    const char *price_date;
    const char *price_source;
    const char *desc_json; /* the system description JSON text, "" when none */
} ib_report_system;

/* One result row (benchmark x scenario x system). NaN = not applicable. */
typedef struct ib_report_result {
    size_t system; /* index for ib_report_system_at */
    const char *benchmark;
    int scenario;
    ib_report_run run;
    const char *run_dir;
    const char *accuracy_metric; /* "acc", "mAP", "F1", "AUC", "WER-accuracy", "DICE", ... or "" */
    double accuracy;             /* NaN when no accuracy.txt or no recognised line */
    double relative_performance; /* vs the baseline system, same benchmark+scenario */
    double relative_perf_per_cost; /* (T/C) / (T_base/C_base) */
    double cost_per_million;       /* currency per 1e6 inferences (throughput scenarios) */
    double avg_power_w;            /* MLPerf power log (spl.txt) average, else NaN */
    double perf_per_watt;          /* throughput / avg_power_w (Offline, Server) */
    double energy_mj_per_query;    /* SingleStream / MultiStream */
    /* An inferbench run (its result.json), not an MLPerf submission's log, and the labels
     * it carries, one per line ("synthetic model ...\n--quick: short run, ..."), "" none. */
    bool own_run;
    const char *labels;
} ib_report_result;

/* ib_report_create - an empty report. OUT: *out (ib_report_destroy). */
IB_API int ib_report_create(const ib_report_options *opts, ib_report **out, ib_err *err);
IB_API void ib_report_destroy(ib_report *rep);

/*
 * ib_report_add_tree - add every performance run found under `path`: an official
 * tree at any level (division, submitter, results/, results/<system>) or an
 * inferbench output tree (<out>/<system>/<benchmark>/<Scenario>/performance/run_1).
 * Compliance (TEST0x) and ranging runs are skipped. Errors name the file.
 * IB_ENOTFOUND when the path holds no run.
 */
IB_API int ib_report_add_tree(ib_report *rep, const char *path, ib_err *err);

/*
 * ib_report_load_prices - CSV with header `system,price,currency,date,source`
 * (RFC 4180 quoting). Prices may be relative units (currency "relative").
 */
IB_API int ib_report_load_prices(ib_report *rep, const char *path, ib_err *err);

/*
 * ib_report_load_tco - `key = value` lines, optional `[system]` sections
 * overriding the defaults: amortization_years, utilization (0..1], pue,
 * energy_cost_per_kwh, annual_opex, power_w (+ power_source), hourly_cost.
 * A power_source of tdp/nameplate/rated/psu is refused (users.md §3.3).
 */
IB_API int ib_report_load_tco(ib_report *rep, const char *path, ib_err *err);

/*
 * ib_report_load_published - CSV `system,result_id,retrieved,source` naming the
 * systems whose results are published MLCommons results; all others are
 * reported as "unverified".
 */
IB_API int ib_report_load_published(ib_report *rep, const char *path, ib_err *err);

/* ib_report_set_baseline - normalise to this system id (NULL = automatic choice). */
IB_API int ib_report_set_baseline(ib_report *rep, const char *system, ib_err *err);

/* ib_report_compute - choose the baseline and derive every ratio and cost. */
IB_API int ib_report_compute(ib_report *rep, ib_err *err);

IB_API size_t ib_report_system_count(const ib_report *rep);
IB_API const ib_report_system *ib_report_system_at(const ib_report *rep, size_t i);
IB_API size_t ib_report_result_count(const ib_report *rep);
IB_API const ib_report_result *ib_report_result_at(const ib_report *rep, size_t i);
/* The baseline system index after ib_report_compute ((size_t)-1 when none). */
IB_API size_t ib_report_baseline(const ib_report *rep);
/* Results whose validity is not VALID. */
IB_API size_t ib_report_invalid_count(const ib_report *rep);
/* What add_tree skipped (an unfinished run), one message each (borrowed). */
IB_API size_t ib_report_warning_count(const ib_report *rep);
IB_API const char *ib_report_warning_at(const ib_report *rep, size_t i);

/*
 * ib_report_headline - one sentence per system against the baseline, e.g. "A is 1.69-3.46x
 * B over 6 results; throughput per price 1.19-2.43x" (the range of the valid ratios), into
 * buf. Returns false (buf "") for the baseline itself or a system with no comparable result.
 * Call ib_report_compute first.
 */
IB_API bool ib_report_headline(const ib_report *rep, size_t system, char *buf, size_t n);

/*
 * ib_report_write - write summary.csv, summary.json, charts/<name>.{svg,png} and
 * report.html into `dir` (created). Call ib_report_compute first.
 */
IB_API int ib_report_write(ib_report *rep, const char *dir, ib_err *err);

/* ib_report_summary_json - summary.json's text. OUT: *out (ib_free). */
IB_API int ib_report_summary_json(ib_report *rep, char **out, ib_err *err);

/*
 * ib_report_compare_table - terminal table comparing system a with system b
 * (b is the reference: ratios are a/b). OUT: *out (ib_free).
 */
IB_API int ib_report_compare_table(ib_report *rep, size_t a, size_t b, char **out, ib_err *err);

/*
 * ib_report_shutdown - release the process-wide font caches that cairo and
 * fontconfig keep after charts were drawn (cairo_debug_reset_static_data, FcFini),
 * so leak checkers see a clean exit. Call at most once, at process exit, after every
 * report is destroyed and when no other code in the process uses cairo or
 * fontconfig any more. Optional.
 * Thread-safety: not thread-safe; no other thread may use cairo meanwhile.
 */
IB_API void ib_report_shutdown(void);

IB_EXTERN_C_END

#endif
