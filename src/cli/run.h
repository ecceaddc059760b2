/*
 * run.h - what `inferbench run` parsed, shared by cmd_run.c (options) and
 * the SUT back ends (run_null.c: the null SUT; a benchmark back end adds its
 * own file). Also the settings procedure every back end uses: defaults of
 * the rule set, the rules file (embedded or --mlperf-conf), user.conf,
 * audit.config, then command-line overrides, with provenance.
 */
#ifndef IB_CLI_RUN_H
#define IB_CLI_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "inferbench/loadgen.h"

typedef struct ib_run_opts {
    const char *sut;   /* "null" */
    const char *model; /* config lookup name, default "nullmodel" */
    enum ib_lg_scenario scenario;
    enum ib_lg_mode mode;
    enum ib_lg_rules rules;
    enum ib_lg_rng_compat rng_compat;
    const char *mlperf_conf; /* NULL: the embedded rules file */
    const char *user_conf;
    const char *audit_conf; /* NULL: ./audit.config when it exists */
    bool no_audit;
    uint64_t total_samples;       /* 0: back-end default */
    uint64_t performance_samples; /* 0: back-end default */
    double target_qps;            /* 0: from the config files */
    int64_t min_duration_ms;      /* -1: from the config files */
    int64_t max_duration_ms;      /* -1 */
    int64_t min_query_count;      /* -1 */
    int64_t sut_timeout_ms;       /* -1: not given (default); 0: wait forever */
    bool trace;
    bool quiet;
    bool json;
    bool no_progress;
    bool record_issued; /* null SUT: write sut_issued.txt */
    const char *output_dir;
    /* --benchmark back end (run_bench.c); `model` is then the entry's config name */
    const char *benchmark;
    const char *backend;       /* "cpu" */
    const char *model_file;    /* --model FILE.onnx (NULL: build) */
    const char *data_dir;      /* --data DIR (NULL: synthesize) */
    const char *precision;     /* fp32 (default), bf16, int8 */
    const char *payload_dtype; /* NULL: the benchmark's official one */
    const char *system;
    int threads, workers;      /* 0 = auto */
    int64_t batch;             /* 0 = the benchmark's default */
    int64_t max_wait_us;       /* -1 = the benchmark's default */
    uint64_t seed;             /* weights and synthetic data (1) */
    uint64_t synth_samples;    /* 0 = the benchmark's default */
    const char *variant;       /* --variant/--dataset/--row-cap: entry-specific (NULL) */
    const char *variant_opt;   /* which of those flags gave it (for messages) */
    const char *devices;       /* --devices all|0,1,2 (accelerator backends; NULL) */
    bool quick, tiny, no_pin, nhwc_fp16, half_chains;
    double quick_s;            /* --quick[=SECONDS]: the run's wall-clock budget */
    bool force;                /* replace run_1 / accuracy instead of the next run_N */
    const char *cache_dir;     /* --cache-dir (NULL: the XDG default) */
    /* --sut kserve (a benchmark) or --sut null with --endpoint: the network SUT */
    const char *endpoints[64];
    size_t n_endpoints;
    const char *model_name;     /* --model-name (NULL: the benchmark id, or "null") */
    int concurrency;            /* --concurrency (0: 2 per endpoint) */
    int64_t request_timeout_ms; /* --request-timeout-ms (-1: 60000) */
    bool json_tensors;          /* --json-tensors: JSON instead of binary tensor data */
} ib_run_opts;

/* --quick without a value: the budget every benchmark keeps to on a 2-core machine. */
#define IB_RUN_QUICK_DEFAULT_S 60

/*
 * ib_run_build_settings - the settings procedure (loadgen.md §1.7): returns
 * IB_OK or a config error with the message in err. *audit_used receives the
 * audit.config path that was applied (or NULL); origins may be NULL.
 */
int ib_run_build_settings(const ib_run_opts *o, ib_lg_settings *s, ib_lg_settings_origin *origins,
                          const char **audit_used, ib_err *err);

/* Print the loadgen's progress on stderr for runs over ~2 s: \r-updated on a terminal, a
 * line every 10 s otherwise (progress.c). */
void ib_run_progress_print(void *user, const ib_lg_progress *p);
/* End a progress line (newline) if one was printed. */
void ib_run_progress_done(void);
/* A stage message ("inferbench run: <msg>") that the heartbeat then times. */
void ib_run_stage(const char *msg);
/* The heartbeat thread: how long the current stage has run, while the loadgen is silent. */
void ib_run_heartbeat_start(void);
void ib_run_heartbeat_stop(void);

/* Map a finished run to the exit code (users.md §4.1). */
int ib_run_exit_code(int rc, const ib_lg_result *res);

/* $XDG_CACHE_HOME/inferbench, else ~/.cache/inferbench (into buf); NULL without either. */
const char *ib_run_default_cache_dir(char *buf, size_t n);

/* The null-SUT back end. */
int ib_run_null(const ib_run_opts *o);

/* The benchmark back end (`--benchmark ID`): the harness over the runtime. */
int ib_run_benchmark(const ib_run_opts *o);

#endif
