/*
 * compliance.h - the MLPerf results checker and the compliance-test verifiers.
 *
 * ib_check_tree validates a results/submission tree (the folder holding closed/ or open/)
 * as the official submission checker does for one rules version, and returns every
 * problem with the file, the rule, what is wrong and a concrete fix. The ib_verify_*
 * functions are the C equivalents of the official compliance run_verification.py scripts
 * (TEST01, TEST04-A/B or TEST04, TEST05): pure functions of the log files that produce the
 * verdict and the text of verify_accuracy.txt / verify_performance.txt in the official
 * format; the *_dir variants also write those files when given an output folder.
 *
 * Nothing here prints or exits. Thread-safety: all functions are reentrant; objects are
 * not shared between threads by the library.
 */
#ifndef INFERBENCH_COMPLIANCE_H
#define INFERBENCH_COMPLIANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "status.h"

IB_EXTERN_C_BEGIN

/* ---- rules versions ---------------------------------------------------------- */

enum ib_check_version {
    IB_CHECK_V1_1 = 0,    /* MLPerf Inference v1.1 (r1.1 submission-checker.py) */
    IB_CHECK_CURRENT = 1, /* the current modular checker (MODEL_CONFIG v6.1) */
};

/* "v1.1", "1.1", "current", "v6.1", "6.1" -> IB_OK; else IB_EINVAL. */
IB_API int ib_check_version_parse(const char *text, enum ib_check_version *out);
/* "v1.1" or "current". Static storage. */
IB_API const char *ib_check_version_name(enum ib_check_version v);

/* ---- the checker -------------------------------------------------------------------- */

enum ib_check_severity {
    IB_CHECK_ERROR = 0,   /* the official checker fails the result, or inferbench knows it
                             is wrong */
    IB_CHECK_WARNING = 1, /* allowed, but worth a look; the reason is in the message */
};

typedef struct ib_check_options {
    enum ib_check_version version; /* IB_CHECK_V1_1 */
    const char *submitter;         /* only this submitter folder; NULL = all */
    bool skip_compliance;          /* do not look at compliance/ (official --skip_compliance) */
    bool recheck_compliance;       /* true: also recompute the verify_*.txt verdicts from the
                                      logs in the tree and report disagreements */
} ib_check_options;

IB_API void ib_check_options_defaults(ib_check_options *o);

typedef struct ib_check_problem {
    enum ib_check_severity severity;
    const char *file;    /* path relative to the tree root */
    const char *rule;    /* stable identifier, e.g. "perf.seeds" (docs/check.md) */
    const char *message; /* what is wrong, with the values found and expected */
    const char *fix;     /* what to do about it */
} ib_check_problem;

/* One result (system, benchmark, scenario) the checker looked at. */
typedef struct ib_check_result {
    const char *division, *submitter, *system, *benchmark, *model, *scenario;
    bool valid;          /* no error was found for it */
    bool has_metric;
    double metric;       /* samples/s (Offline), queries/s (Server), ms (SingleStream...) */
    const char *unit;    /* "Samples/s", "Queries/s", "Latency (ms)", ... */
    bool has_accuracy;
    double accuracy;
    const char *accuracy_metric; /* "acc", "F1", ... */
    bool compliance_ok;  /* compliance folder complete and passing (closed division) */
} ib_check_result;

typedef struct ib_check_report ib_check_report;

/*
 * ib_check_tree - check the tree at `tree` (a folder that holds closed/, open/ or, for the
 * current rules, network/). opts may be NULL (defaults).
 * Returns IB_OK when the check ran (problems, if any, are in the report), IB_EINVAL when
 * `tree` holds no division folder (err says so), IB_EIO/IB_ENOTFOUND when it cannot be read,
 * IB_ENOMEM.
 * Ownership: *out is freed with ib_check_report_destroy.
 */
IB_API int ib_check_tree(const char *tree, const ib_check_options *opts, ib_check_report **out,
                         ib_err *err);
IB_API void ib_check_report_destroy(ib_check_report *r);

IB_API size_t ib_check_report_problem_count(const ib_check_report *r);
/* Borrowed until the report is destroyed; problems are sorted by file, then rule. */
IB_API const ib_check_problem *ib_check_report_problem(const ib_check_report *r, size_t i);
IB_API size_t ib_check_report_error_count(const ib_check_report *r);
IB_API size_t ib_check_report_warning_count(const ib_check_report *r);
IB_API size_t ib_check_report_result_count(const ib_check_report *r);
IB_API const ib_check_result *ib_check_report_result(const ib_check_report *r, size_t i);

/*
 * ib_check_report_json - the report as JSON: version, tree, counts, problems[] and
 * results[]. *out is NUL-terminated and freed with ib_free.
 */
IB_API int ib_check_report_json(const ib_check_report *r, char **out, size_t *len);

/* ---- compliance verification -------------------------------------------------------- */

enum ib_verify_verdict {
    IB_VERIFY_PASS = 0,
    IB_VERIFY_FAIL = 1,
    IB_VERIFY_INCONCLUSIVE = 2, /* e.g. TEST01 on truncated accuracy logs: only a partial
                                   comparison was possible and it found no mismatch */
};

/* How TEST01 compares a sampled response with the accuracy-run response. */
enum ib_verify_compare {
    IB_VERIFY_BYTES = 0,       /* the whole payload, byte for byte (inferbench default) */
    IB_VERIFY_FIRST_BYTE,      /* official --dtype byte: only the first element, as int8 */
    IB_VERIFY_FIRST_FLOAT32,   /* official --dtype float32 */
    IB_VERIFY_FIRST_INT32,     /* official --dtype int32 */
    IB_VERIFY_FIRST_INT64,     /* official --dtype int64 */
};

/* "bytes", "byte", "float32", "int32", "int64" -> IB_OK; else IB_EINVAL. */
IB_API int ib_verify_compare_parse(const char *text, enum ib_verify_compare *out);

typedef struct ib_verify_options {
    enum ib_check_version version;  /* output format and thresholds; IB_CHECK_V1_1 */
    enum ib_verify_compare compare; /* IB_VERIFY_BYTES */
    const char *benchmark;          /* e.g. "bert-99": accuracy metric and allowed delta of
                                       the TEST01 fallback; NULL disables the fallback */
} ib_verify_options;

IB_API void ib_verify_options_defaults(ib_verify_options *o);

/* The counters of the official verify_accuracy.py. */
typedef struct ib_verify_test01_counts {
    size_t acc_log_entries, acc_log_duplicate_keys, acc_log_data_mismatch;
    size_t perf_log_entries, perf_log_qsl_idx_match, perf_log_data_mismatch;
    size_t missing_qsl_idxs;
    bool acc_truncated, perf_truncated; /* the comparison saw only recoverable entries */
} ib_verify_test01_counts;

typedef struct ib_verify_outcome {
    enum ib_verify_verdict verdict;
    char reason[512];       /* why it failed or is inconclusive; "" on a clean pass */
    char *text;             /* verify_*.txt contents (NUL-terminated), owned */
    size_t text_len;
    bool has_scores;        /* performance tests */
    double ref_score, test_score, threshold;
    ib_verify_test01_counts counts; /* TEST01 accuracy */
    bool fallback_used;     /* TEST01: the baseline/compliance accuracy comparison ran */
    enum ib_verify_verdict fallback_verdict;
    double fallback_baseline, fallback_compliance;
} ib_verify_outcome;

IB_API void ib_verify_outcome_init(ib_verify_outcome *o);
IB_API void ib_verify_outcome_deinit(ib_verify_outcome *o);
/* Write o->text to path (atomically). */
IB_API int ib_verify_outcome_write(const ib_verify_outcome *o, const char *path, ib_err *err);

/*
 * ib_verify_test01_accuracy - compare the accuracy log of a TEST01 run (perf_log) with the
 * accuracy-run log (acc_log) per qsl_idx, with the counters and rules of the official
 * verify_accuracy.py (a duplicate in the performance log is compared with the previous
 * performance entry, as upstream). Truncated logs give a partial comparison: FAIL when a
 * mismatch is found, INCONCLUSIVE otherwise.
 * Returns IB_OK with the verdict in *out, or an error when a log cannot be read or parsed.
 */
IB_API int ib_verify_test01_accuracy(const char *acc_log, const char *perf_log,
                                     const ib_verify_options *o, ib_verify_outcome *out,
                                     ib_err *err);

/*
 * ib_verify_accuracy_fallback - the non-determinism fallback of TEST01: compare the metric
 * in baseline_accuracy.txt (the accuracy-run responses restricted to the sampled qsl_idx)
 * with compliance_accuracy.txt; pass within 1 % (99 % targets) or 0.1 % (99.9 %), computed
 * as the round's script does. Appends its lines to out->text and sets out->fallback_*.
 * o->benchmark is required.
 */
IB_API int ib_verify_accuracy_fallback(const char *baseline_txt, const char *compliance_txt,
                                       const ib_verify_options *o, ib_verify_outcome *out,
                                       ib_err *err);

enum ib_verify_test {
    IB_VERIFY_TEST01 = 0, /* performance within +-10 % of the submission */
    IB_VERIFY_TEST05 = 1, /* v1.1: within +-5 % with other seeds */
};

/*
 * ib_verify_performance - TEST01/TEST05 performance delta. v1.1 reads the two
 * mlperf_log_summary.txt files (ref = the submission's performance run); current reads the
 * two mlperf_log_detail.txt files, as the scripts of each round do.
 */
IB_API int ib_verify_performance(const char *ref_log, const char *test_log,
                                 enum ib_verify_test test, const ib_verify_options *o,
                                 ib_verify_outcome *out, ib_err *err);

/*
 * ib_verify_test04 - no result caching. v1.1: a_summary is the TEST04-A run (unique
 * samples), b_summary the TEST04-B run (same sample); B must not be more than 10 % faster
 * than A (20 % for SingleStream <= 200 us). Current: a_summary is the submission's
 * performance run and b_summary the TEST04 run.
 */
IB_API int ib_verify_test04(const char *a_summary, const char *b_summary,
                            const ib_verify_options *o, ib_verify_outcome *out, ib_err *err);

/*
 * Directory-level verification, as run_verification.py: results_dir is
 * results/<system>/<benchmark>/<scenario> (with accuracy/ and performance/run_1/);
 * test_dir holds the compliance run's logs, either flat (as the LoadGen wrote them) or in
 * the compliance layout (performance/run_1/, accuracy/). When out_dir is not NULL the
 * verify_*.txt files are written there. TEST01 applies the fallback when the byte
 * comparison does not pass and test_dir/accuracy holds baseline_accuracy.txt and
 * compliance_accuracy.txt.
 */
IB_API int ib_verify_test01_dir(const char *results_dir, const char *test_dir,
                                const char *out_dir, const ib_verify_options *o,
                                ib_verify_outcome *acc, ib_verify_outcome *perf, ib_err *err);
IB_API int ib_verify_test05_dir(const char *results_dir, const char *test_dir,
                                const char *out_dir, const ib_verify_options *o,
                                ib_verify_outcome *perf, ib_err *err);
/* v1.1: a_dir/b_dir are the TEST04-A/TEST04-B runs (results_dir unused, may be NULL);
 * current: results_dir and a_dir = the TEST04 run (b_dir unused). */
IB_API int ib_verify_test04_dir(const char *results_dir, const char *a_dir, const char *b_dir,
                                const char *out_dir, const ib_verify_options *o,
                                ib_verify_outcome *perf, ib_err *err);

IB_EXTERN_C_END

#endif
