/*
 * loadgen.h - libloadgen: an MLPerf-Inference-compatible load generator in C.
 *
 * It drives a system under test (SUT) with the queries of one MLPerf
 * scenario (SingleStream, MultiStream, Server, Offline) and mode (accuracy,
 * performance, submission, find-peak), measures latencies, decides
 * VALID/INVALID exactly as the official MLCommons LoadGen does, and writes the
 * official log files. The sample order and schedule are identical to the
 * official LoadGen (libstdc++ >= GCC 11 build) for the same seeds and
 * settings; see docs/loadgen.md and ../shared/reference/loadgen.md.
 *
 * This header depends on nothing else in inferbench except status.h and
 * export.h, so a SUT author can take the load generator alone (link
 * libinferbench-loadgen.a: libc + pthreads + libm only).
 *
 * Changes after the first commit (for the engine side, lg2):
 *  - ib_lg_settings gained multi_stream_target_latency_ns (v1.1 logging);
 *    ib_lg_settings_defaults_rules() fills the defaults of a rule set.
 *  - ib_lg_settings_origin keys are ib_lg_settings field names
 *    ("server_target_qps", "min_duration_ms"), not config key names, since
 *    one config key can set different fields (target_qps, target_latency).
 *  - (lg2) ib_lg_test_destroy: only after every thread has returned from
 *    ib_lg_samples_complete for that test; completions after
 *    ib_lg_test_run returned (and before destroy) are counted, never written.
 *    use_token_latencies is rejected with IB_EUNSUPPORTED (no TTFT/TPOT yet).
 *
 * Differences from the C++ API, on purpose:
 *  - no global state: every call takes the ib_lg_test it acts on, so two
 *    tests can run one after another, or at once, in one process;
 *  - the SUT and QSL are C callback tables with a user pointer;
 *  - ib_lg_test_run returns a result struct (validity, every failed rule,
 *    metrics, percentiles) instead of void;
 *  - config files are parsed strictly: what the official silently ignores
 *    or misreads is rejected with file:line (see ib_lg_settings_apply_conf).
 */
#ifndef INFERBENCH_LOADGEN_H
#define INFERBENCH_LOADGEN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "status.h"

IB_EXTERN_C_BEGIN

/* ---- basic types (query_sample.h) ---------------------------------------- */

/* Opaque per-sample response id chosen by the loadgen; 0 is never used. */
typedef uintptr_t ib_lg_response_id;
/* Index into the QSL (the dataset), i.e. the official qsl_idx. */
typedef size_t ib_lg_sample_index;

typedef struct ib_lg_sample {
    ib_lg_response_id id;
    ib_lg_sample_index index;
} ib_lg_sample;

typedef struct ib_lg_response {
    ib_lg_response_id id;
    const void *data; /* payload bytes, owned by the SUT; copied only when logged */
    size_t size;      /* payload size in bytes */
    int64_t n_tokens; /* token count (LLM token mode), else 0 */
} ib_lg_response;

/* ---- enums ------------------------------------------------------------------ */

enum ib_lg_scenario {
    IB_LG_SCENARIO_SINGLE_STREAM = 0,
    IB_LG_SCENARIO_MULTI_STREAM = 1,
    IB_LG_SCENARIO_SERVER = 2,
    IB_LG_SCENARIO_OFFLINE = 3,
};

/* Numbering matches the config key `mode` (0..3) of the official LoadGen. */
enum ib_lg_mode {
    IB_LG_MODE_SUBMISSION = 0,
    IB_LG_MODE_ACCURACY = 1,
    IB_LG_MODE_PERFORMANCE = 2,
    IB_LG_MODE_FIND_PEAK = 3,
};

/* Rule set: the current official LoadGen (default) or the MLPerf v1.1 one
 * (v1.1 seeds in the embedded rules file, fixed minimum query counts, no early
 * stopping, fixed-rate MultiStream, the v1.1 performance-set rule). */
enum ib_lg_rules {
    IB_LG_RULES_CURRENT = 0,
    IB_LG_RULES_V1_1 = 1,
};

/* Which libstdc++ uniform_int_distribution algorithm the sample draws follow:
 * GCC >= 11 (Lemire, every current official build and ../shared/golden) or
 * GCC <= 10 (division-based rejection, the builds of the v1.1 round). */
enum ib_lg_rng_compat {
    IB_LG_RNG_LIBSTDCXX11 = 0,
    IB_LG_RNG_LIBSTDCXX10 = 1,
};

/* Names as the official logs spell them ("SingleStream", "PerformanceOnly"). */
IB_API const char *ib_lg_scenario_name(enum ib_lg_scenario s);
IB_API const char *ib_lg_mode_name(enum ib_lg_mode m);
IB_API const char *ib_lg_rules_name(enum ib_lg_rules r);         /* "current", "v1.1" */
IB_API const char *ib_lg_rng_compat_name(enum ib_lg_rng_compat c); /* "libstdc++11", ... */

/* Parse a scenario ("SingleStream", "singlestream", "single-stream", "Server",
 * "offline", ...) or mode ("PerformanceOnly", "performance", "AccuracyOnly",
 * "accuracy", "SubmissionRun", "submission", "FindPeakPerformance",
 * "find-peak"). Returns IB_OK or IB_EINVAL. */
IB_API int ib_lg_scenario_parse(const char *text, enum ib_lg_scenario *out);
IB_API int ib_lg_mode_parse(const char *text, enum ib_lg_mode *out);
IB_API int ib_lg_rules_parse(const char *text, enum ib_lg_rules *out);
IB_API int ib_lg_rng_compat_parse(const char *text, enum ib_lg_rng_compat *out);

/* ---- settings (test_settings.h: every TestSettings field) ------------------ */

typedef struct ib_lg_settings {
    enum ib_lg_scenario scenario;  /* SingleStream */
    enum ib_lg_mode mode;          /* PerformanceOnly */
    double single_stream_expected_latency_ns;      /* 1,000,000 */
    double single_stream_target_latency_percentile; /* 0.90 */
    double multi_stream_expected_latency_ns;       /* 8,000,000 */
    double multi_stream_target_latency_percentile; /* 0.99 */
    uint64_t multi_stream_samples_per_query;       /* 8 */
    double server_target_qps;                      /* 1 */
    uint64_t server_target_latency_ns;             /* 100,000,000 */
    double server_target_latency_percentile;       /* 0.99 */
    bool server_coalesce_queries;                  /* false */
    int server_find_peak_qps_decimals_of_precision; /* 1 */
    double server_find_peak_qps_boundary_step_size; /* 1 */
    uint64_t server_max_async_queries;             /* 0 = unlimited */
    uint64_t server_num_issue_query_threads;       /* 0 = the calling thread */
    double offline_expected_qps;                   /* 1 */
    bool sample_concatenate_permutation;           /* false */
    uint64_t min_duration_ms;                      /* 10,000 */
    uint64_t max_duration_ms;                      /* 0 = none */
    uint64_t min_query_count;                      /* 100 */
    uint64_t max_query_count;                      /* 0 = none */
    uint64_t qsl_rng_seed;                         /* 0 */
    uint64_t sample_index_rng_seed;                /* 0 */
    uint64_t schedule_rng_seed;                    /* 0 */
    uint64_t accuracy_log_rng_seed;                /* 0 */
    double accuracy_log_probability;               /* 0.0 (fraction, not percent) */
    uint64_t accuracy_log_sampling_target;         /* 0 */
    bool test05;                                   /* false */
    uint64_t test05_qsl_rng_seed;
    uint64_t test05_sample_index_rng_seed;
    uint64_t test05_schedule_rng_seed;
    bool print_timestamps;                         /* false */
    bool performance_issue_unique;                 /* false */
    bool performance_issue_same;                   /* false */
    uint64_t performance_issue_same_index;         /* 0 */
    uint64_t performance_sample_count_override;    /* 0 = QSL value */
    uint64_t accuracy_sample_count_override;       /* 0 = QSL total */
    bool use_token_latencies;                      /* false */
    uint64_t server_ttft_latency;                  /* 100,000,000 ns */
    uint64_t server_tpot_latency;                  /* 100,000,000 ns */
    bool infer_token_latencies;                    /* false */
    uint64_t token_latency_scaling_factor;         /* 0 (uninitialised upstream) */

    /* inferbench additions (not in the official struct) */
    enum ib_lg_rules rules;            /* IB_LG_RULES_CURRENT */
    enum ib_lg_rng_compat rng_compat;  /* IB_LG_RNG_LIBSTDCXX11 */
    /* v1.1 fixed-rate MultiStream (rules = v1.1 only): queries per second and
     * max outstanding queries; from the v1.1 rules file keys (20 and 1 there). */
    double multi_stream_target_qps;              /* 10 (v1.1 TestSettings default) */
    uint64_t multi_stream_max_async_queries;     /* 1 */
    /* v1.1 only: logged as requested_multi_stream_target_latency_ns; not
     * settable from config files (v1.1 MultiStreamFree used it). */
    uint64_t multi_stream_target_latency_ns;     /* 100,000,000 */
} ib_lg_settings;

/* Fill the official defaults of the current LoadGen (values in the comments
 * above; rules = current, rng_compat = libstdc++11). */
IB_API void ib_lg_settings_defaults(ib_lg_settings *s);

/* Fill the TestSettings defaults of a rule set: current as above; v1.1 as the
 * r1.1 LoadGen (multi_stream_samples_per_query 4, MultiStream percentile 0.90,
 * multi_stream_target_qps 10, rules = v1.1). Both set rng_compat libstdc++11. */
IB_API void ib_lg_settings_defaults_rules(ib_lg_settings *s, enum ib_lg_rules rules);

/* Where each setting came from, for result.json and the summary ("default",
 * "mlperf.conf (embedded v6.1)", "user.conf:12", "audit.config:3", "cli"). */
typedef struct ib_lg_settings_origin ib_lg_settings_origin; /* opaque */
IB_API int ib_lg_settings_origin_create(ib_lg_settings_origin **out);
IB_API void ib_lg_settings_origin_destroy(ib_lg_settings_origin *o);
/* Record that field `key` (an ib_lg_settings field name, e.g.
 * "server_target_qps") was set by `where`; a later call replaces it. */
IB_API int ib_lg_settings_origin_set(ib_lg_settings_origin *o, const char *key, const char *where);
/* Borrowed string or NULL when the key kept its default. */
IB_API const char *ib_lg_settings_origin_get(const ib_lg_settings_origin *o, const char *key);
IB_API size_t ib_lg_settings_origin_count(const ib_lg_settings_origin *o);
IB_API int ib_lg_settings_origin_at(const ib_lg_settings_origin *o, size_t i, const char **key,
                                    const char **where);

/* ---- config files (mlperf.conf, user.conf, audit.config) ------------------- */

/* The conf types of TestSettings::FromConfig, as one explicit enum. */
enum ib_lg_conf_type {
    IB_LG_CONF_RULES = 0, /* mlperf.conf: the only file whose seeds and
                             accuracy_log_probability are honoured (current rules) */
    IB_LG_CONF_USER = 1,  /* user.conf */
    IB_LG_CONF_AUDIT = 2, /* audit.config: applied with model "*" */
};

/*
 * ib_lg_settings_apply_conf - apply one config text to `s` for one model and
 * scenario, with the official key syntax, wildcard lookup order
 * (model.scenario.key > *.scenario.key > model.*.key > *.*.key), units
 * (ms, percent) and per-type key restrictions.
 *
 * Strictness: lines the official LoadGen silently ignores or misreads are
 * rejected with IB_EFORMAT and "<origin>:<line>: ..." in err: key=value without
 * spaces, a trailing comment after the value, octal-looking integers (leading
 * 0), a fraction or exponent where an integer is read (1e3), negative or
 * overflowing integers, flags other than 0/1, mode outside 0..3, percentages
 * outside their range, non-finite numbers, unknown settings or scenarios,
 * keys without model.scenario.setting, a key set twice in one file, and the
 * '#' lines the official rejects ("#some words"). Everything the official
 * accepts with a single meaning is accepted with that meaning (0x10 hex,
 * 100.0 as an integer, "#key = 5" as a commented-out line). Keys the
 * official ignores by rule (seeds outside mlperf.conf under the current
 * rules, *.Server.target_duration) are accepted, not applied, and reported
 * through `warnings` (user.conf and audit.config only).
 *
 * text/len: the file contents; origin: the name used in messages and origins
 * (e.g. "user.conf"); model: e.g. "resnet50"; scenario: the official name
 * without spaces ("Server"). origins and warnings (OUT, optional) receive
 * provenance and warning lines (one per '\n').
 * Returns IB_OK, IB_EFORMAT (nothing applied) or IB_ENOMEM.
 * Thread-safety: reentrant; no shared state.
 */
IB_API int ib_lg_settings_apply_conf(ib_lg_settings *s, const char *text, size_t len,
                                     const char *origin, const char *model,
                                     const char *scenario, enum ib_lg_conf_type type,
                                     ib_lg_settings_origin *origins, char *warnings,
                                     size_t warnings_size, ib_err *err);

/* Like ib_lg_settings_apply_conf for a file path (IB_ENOTFOUND when missing). */
IB_API int ib_lg_settings_apply_conf_file(ib_lg_settings *s, const char *path, const char *model,
                                          const char *scenario, enum ib_lg_conf_type type,
                                          ib_lg_settings_origin *origins, char *warnings,
                                          size_t warnings_size, ib_err *err);

/* The embedded official rules file for a rule set (current: the v6.1
 * mlperf.conf; v1.1: the r1.1 mlperf.conf). Static, NUL-terminated. */
IB_API const char *ib_lg_mlperf_conf_embedded(enum ib_lg_rules rules, size_t *len);

/* Check settings before a run (negative qps, zero samples per query, a
 * percentile outside (0,1), ...). IB_EINVAL with the reason in err. */
IB_API int ib_lg_settings_validate(const ib_lg_settings *s, ib_err *err);

/* ---- SUT and QSL ---------------------------------------------------------- */

typedef struct ib_lg_test ib_lg_test; /* one run of the load generator */

/*
 * The system under test. issue_query may complete samples synchronously
 * (inside the call) or later from any thread via ib_lg_samples_complete.
 * `samples` is valid only during the call. flush_queries is called after the
 * last issue_query of each series (optional, may be NULL).
 */
typedef struct ib_lg_sut {
    void *user;
    const char *name;
    void (*issue_query)(void *user, ib_lg_test *test, const ib_lg_sample *samples, size_t count);
    void (*flush_queries)(void *user, ib_lg_test *test);
} ib_lg_sut;

/*
 * The query sample library (the dataset). load/unload are untimed and called
 * from the loadgen's main thread; they return IB_OK or an error that ends the
 * test. In MultiStream a loaded set contains padding, so an index may appear
 * twice in one call.
 */
typedef struct ib_lg_qsl {
    void *user;
    const char *name;
    size_t total_sample_count;
    size_t performance_sample_count;
    int (*load_samples)(void *user, const ib_lg_sample_index *indices, size_t count);
    int (*unload_samples)(void *user, const ib_lg_sample_index *indices, size_t count);
} ib_lg_qsl;

/* ---- log settings --------------------------------------------------------- */

typedef struct ib_lg_log_settings {
    const char *outdir;        /* "." */
    const char *prefix;        /* "mlperf_log_" */
    const char *suffix;        /* "" */
    bool prefix_with_datetime; /* false */
    bool copy_detail_to_stdout;  /* false */
    bool copy_summary_to_stdout; /* false */
    bool enable_trace;         /* false (the official default is true; ours is opt-in) */
    bool write_result_json;    /* true: <outdir>/result.json */
} ib_lg_log_settings;

IB_API void ib_lg_log_settings_defaults(ib_lg_log_settings *l);

/* ---- run options (inferbench additions) ---------------------------------- */

typedef struct ib_lg_progress {
    int64_t elapsed_ns;
    int64_t expected_total_ns; /* estimate for the ETA; 0 when unknown */
    uint64_t issued_queries;
    uint64_t completed_samples;
    uint64_t expected_samples; /* 0 when unknown */
    double current_qps;        /* completed samples/s over the last interval */
    int64_t running_percentile_ns; /* target-percentile latency so far (0 if none) */
    int64_t latency_bound_ns;      /* Server bound, else 0 */
    const char *phase;             /* "accuracy", "performance", "find-peak qps=123.4" */
} ib_lg_progress;

typedef void (*ib_lg_progress_fn)(void *user, const ib_lg_progress *p);

#define IB_LG_DEFAULT_SUT_TIMEOUT_MS 60000
/* Other processes' CPU share (%) above which a result is labelled "machine busy". */
#define IB_LG_BUSY_PCT 10.0

typedef struct ib_lg_options {
    /* Called about every progress_interval_ms from a loadgen thread (never
     * from the issue path). NULL = no progress reports. */
    ib_lg_progress_fn progress;
    void *progress_user;
    uint32_t progress_interval_ms;  /* 500 */
    /* A SUT that has not completed every issued sample this long after the
     * last issue (or the last completion, whichever is later) ends the test
     * with IB_ETIMEOUT and an error in the detail log. 0 = wait forever. */
    uint64_t sut_timeout_ms;        /* IB_LG_DEFAULT_SUT_TIMEOUT_MS (60,000) */
    /* Path of the audit.config that was applied to the settings, if any: it
     * is logged as the official "audit.config found" warning. */
    const char *audit_config_applied;
    /* Provenance of the settings for result.json (optional, borrowed). */
    const ib_lg_settings_origin *origins;
    /* Model name used for the config lookup (logged in result.json). */
    const char *model_name;
    /* Extra labels written into result.json (never into the official files, which keep
     * LoadGen's format exactly), e.g. "synthetic data", "random weights", "--quick: not
     * submittable". */
    const char *const *labels;
    size_t label_count;
    /* Graceful stop (optional, borrowed): once *stop_flag is non-zero the test issues
     * nothing more, waits for what is outstanding (bounded by sut_timeout_ms), writes
     * every log and returns with result->interrupted set and the result INVALID. Meant
     * for SIGINT/SIGTERM: a store to a lock-free atomic int is async-signal-safe. A SUT
     * that sees the same flag can answer its queued samples at once to end sooner. */
    const _Atomic int *stop_flag;
} ib_lg_options;

IB_API void ib_lg_options_defaults(ib_lg_options *o);

struct ib_lg_result;
/* The "machine busy: N % of the CPUs used by other processes..." label of a result whose
 * others_cpu_pct is over IB_LG_BUSY_PCT, into buf; false (nothing written) otherwise. */
IB_API bool ib_lg_busy_label(const struct ib_lg_result *r, char *buf, size_t n);

/* ---- results -------------------------------------------------------------- */

/* Validity rules; a bit is set in ib_lg_result.failed_rules when it failed. */
enum ib_lg_rule {
    IB_LG_RULE_MIN_DURATION = 1u << 0,
    IB_LG_RULE_MIN_QUERIES = 1u << 1,
    IB_LG_RULE_PERF_CONSTRAINTS = 1u << 2, /* Server latency percentile vs bound */
    IB_LG_RULE_EARLY_STOPPING = 1u << 3,
    IB_LG_RULE_TTFT = 1u << 4,
    IB_LG_RULE_TPOT = 1u << 5,
    IB_LG_RULE_INTERVALS = 1u << 6,      /* v1.1 MultiStream: p99 intervals spanned < 2 */
    IB_LG_RULE_SUT_ERRORS = 1u << 7,     /* lost, duplicate or unknown responses */
    IB_LG_RULE_INTERRUPTED = 1u << 8,    /* stopped early through ib_lg_options.stop_flag */
};

#define IB_LG_NUM_PERCENTILES 6 /* 50, 90, 95, 97, 99, 99.9 */

typedef struct ib_lg_result {
    enum ib_lg_scenario scenario;
    enum ib_lg_mode mode;
    bool has_performance;  /* false for AccuracyOnly */
    bool valid;            /* "Result is : VALID" */
    bool interrupted;      /* stopped early by ib_lg_options.stop_flag (never valid) */
    uint32_t failed_rules; /* IB_LG_RULE_* bits */
    /* One line per failed rule and the official recommendations, '\n'-separated. */
    char reasons[2048];
    /* A concrete suggestion computed from the run, e.g. "set target_qps to
     * 1834.2: the largest rate whose measured p99 met the 15 ms bound". */
    char suggestion[1024];

    uint64_t query_count;  /* queries issued (performance run) */
    uint64_t sample_count; /* samples issued */
    /* The rates, each set only in the scenario whose summary prints it (0 elsewhere). */
    double samples_per_second;          /* Offline "Samples per second" */
    double scheduled_samples_per_sec;   /* Server "Scheduled samples per second" */
    double completed_samples_per_sec;   /* Server "Completed samples per second" */
    double qps_with_loadgen_overhead;   /* SingleStream "QPS w/ loadgen overhead" */
    double qps_without_loadgen_overhead;/* SingleStream "QPS w/o loadgen overhead" */
    double samples_per_query;           /* MultiStream (the v1.1 headline) */
    int64_t min_latency_ns, max_latency_ns, mean_latency_ns;
    int64_t percentile_latency_ns[IB_LG_NUM_PERCENTILES];
    double target_latency_percentile;
    int64_t target_percentile_latency_ns;
    bool early_stopping_met;
    int64_t early_stopping_latency_ns; /* SingleStream/MultiStream estimate */
    uint64_t overlatency_query_count;  /* Server */
    double find_peak_qps;              /* FindPeakPerformance: the last passing lower bound */

    /* faults observed */
    uint64_t duplicate_responses;
    uint64_t unknown_responses;
    uint64_t late_responses;   /* completions after the test ended */
    uint64_t lost_responses;   /* never completed (timeout) */
    uint64_t failed_responses; /* completed through ib_lg_samples_fail */
    char failed_reason[256];   /* the first failure's reason ("" when none) */
    uint64_t accuracy_log_entries;
    uint64_t num_errors;       /* error records in the detail log */
    uint64_t num_warnings;

    /* issue delay (scheduled -> issued), an inferbench addition */
    int64_t issue_delay_p50_ns, issue_delay_p99_ns;
    /* CPU time other processes used during the test, in % of the machine's CPUs (steal
     * included); -1 when it could not be measured. Above IB_LG_BUSY_PCT the result carries
     * a "machine busy" label: its figures may be low. */
    double others_cpu_pct;
} ib_lg_result;

/* ---- the test --------------------------------------------------------------- */

/*
 * ib_lg_test_create - prepare one test. Validates the settings (IB_EINVAL with
 * the reason before anything runs), derives the effective settings and opens
 * nothing yet. opts may be NULL (defaults).
 * Ownership: the caller destroys *out with ib_lg_test_destroy. Strings in
 * settings/log/opts are copied.
 */
IB_API int ib_lg_test_create(const ib_lg_settings *settings, const ib_lg_log_settings *log,
                             const ib_lg_options *opts, ib_lg_test **out, ib_err *err);

/*
 * ib_lg_test_run - run the whole test (blocking), like StartTest: opens the
 * log files, loads samples, issues queries, waits for completions, computes
 * the result and writes mlperf_log_summary.txt, mlperf_log_detail.txt,
 * mlperf_log_accuracy.json, optionally mlperf_log_trace.json, and result.json.
 * A test runs once (IB_ESTATE on a second call).
 * Returns IB_OK when the test completed (valid or not: see result->valid),
 * IB_ETIMEOUT when the SUT stopped answering, IB_ECANCELED after
 * ib_lg_test_abort, IB_EIO when a log file cannot be written, or the QSL's
 * error code.
 */
IB_API int ib_lg_test_run(ib_lg_test *test, const ib_lg_sut *sut, const ib_lg_qsl *qsl,
                          ib_lg_result *result, ib_err *err);

/*
 * ib_lg_samples_complete - report finished samples (QuerySamplesComplete).
 * Takes one timestamp for the whole call. Thread-safety: callable from any
 * thread, concurrently; lock-free and never allocates (payloads that must be
 * logged are copied into storage reserved when the test started).
 * Unknown, duplicate and late ids are counted and logged as errors, never
 * dereferenced blindly.
 */
IB_API void ib_lg_samples_complete(ib_lg_test *test, const ib_lg_response *responses,
                                   size_t count);

/*
 * ib_lg_samples_fail - complete samples the SUT could not answer (a network SUT's refused
 * connection, timeout or HTTP error), so the test ends instead of waiting for them, and
 * count them as SUT errors: the result is INVALID (rule sut_errors), failed_responses
 * counts them, and the detail log's error and the result's reasons give the first
 * reason. An inferbench extension: the official LoadGen has no such call (its SUTs must
 * complete every sample, and a lost one hangs the test). Same thread-safety as
 * ib_lg_samples_complete.
 */
IB_API void ib_lg_samples_fail(ib_lg_test *test, const ib_lg_response_id *ids, size_t count,
                               const char *reason);

/* Like ib_lg_samples_complete for the first token of each response (token mode). */
IB_API void ib_lg_first_token_complete(ib_lg_test *test, const ib_lg_response *responses,
                                       size_t count);

/* Ask a running test to stop as soon as possible (from any thread). */
IB_API void ib_lg_test_abort(ib_lg_test *test);

/* The effective settings, after create (borrowed, valid until destroy). */
IB_API const ib_lg_settings *ib_lg_test_settings(const ib_lg_test *test);

/* Free the test (NULL allowed). Call it only after every thread has returned
 * from ib_lg_samples_complete / ib_lg_first_token_complete for this test. */
IB_API void ib_lg_test_destroy(ib_lg_test *test);

IB_EXTERN_C_END

#endif
