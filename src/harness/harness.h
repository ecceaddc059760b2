/*
 * harness.h - run one benchmark (an ib_benchmark entry) in one scenario and mode through the
 * load generator and the runtime, and write the MLPerf results tree:
 *
 *   <output_dir>/<system>/<benchmark>/<Scenario>/performance/run_1/  mlperf_log_{summary,
 *                                                  detail}.txt, mlperf_log_accuracy.json,
 *                                                  result.json
 *   <output_dir>/<system>/<benchmark>/<Scenario>/accuracy/           the same + accuracy.txt
 *   <output_dir>/<system>/<benchmark>/<Scenario>/run.json            what ran, on what, results
 *   <output_dir>/.inferbench/<benchmark>/                            built model, synthetic data
 *
 * The steps (run.c): model (build with seeded random weights and write a real .onnx, or load
 * the user's), bind, dataset (open, or synthesize in the real format and open), QSL (qsl.c),
 * SUT with worker threads (sut.c), warm-up, settings adjustments (--quick, the performance
 * sample count of a small dataset, targets measured in warm-up), then one loadgen test per
 * mode (submission = accuracy + performance), then accuracy.txt with the entry's metric.
 *
 * This is the CLI's back end; it never prints: stage messages go to a callback.
 * Thread-safety: one run at a time per ib_harness_opts; runs share nothing.
 */
#ifndef IB_HARNESS_HARNESS_H
#define IB_HARNESS_HARNESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness/benchmark.h"
#include "inferbench/loadgen.h"

#define IB_HARNESS_MAX_LABELS 12

typedef struct ib_harness_opts {
    const ib_benchmark *bench;
    ib_bench_config cfg;
    enum ib_lg_scenario scenario;
    enum ib_lg_mode mode;
    /* Settings after mlperf.conf/user.conf/audit.config/CLI (the CLI's procedure) and
     * where each came from; the harness adjusts fields whose origin is not user.conf,
     * audit.config or the command line (--quick, small datasets, warm-up targets). */
    ib_lg_settings settings;
    ib_lg_settings_origin *origins; /* borrowed, updated */
    const char *rules_origin;       /* the origin name the rules file was applied under */
    const char *audit_config_applied;
    const char *backend;       /* "cpu" (default), "reference" */
    const char *model_path;    /* NULL: build the entry's model */
    const char *data_dir;      /* NULL: synthesize */
    int threads;               /* compute threads in all (0 = every CPU of the mask) */
    int workers;               /* worker threads, one session each (0 = auto) */
    int64_t batch;             /* max batch per session run (0 = the entry's default) */
    int64_t max_wait_us;       /* Server batching window (-1 = the entry's default) */
    bool pin;                  /* pin each worker's threads to its own CPUs (default true) */
    bool nhwc_fp16;            /* cuda at fp16: NHWC float16 conv islands (ib_session_options) */
    bool half_chains;          /* cuda at fp16/bf16: 16-bit chains (ib_session_options) */
    const char *devices;       /* accelerator devices for the workers: "all" or "0,1,2"
                                * (NULL = all; ignored by host backends) */
    bool quick;                /* short run, labelled not submittable */
    double quick_s;            /* its wall-clock budget in seconds, build and warm-up included */
    const char *system;        /* results-tree system name (NULL: "<host>-<backend>") */
    const char *output_dir;
    bool trace;                /* mlperf_log_trace.json */
    bool force;                /* replace performance/run_1 and accuracy/ (else: next run_N,
                                * and an existing accuracy/ is an error) */
    const char *cache_dir;     /* generated models and data (NULL: <output_dir>/.inferbench) */
    /* Graceful stop (optional): set it (e.g. from a SIGINT handler) and the run stops
     * issuing, finishes its logs in the staging folder, keeps them there and returns
     * IB_ECANCELED with res->interrupted; earlier runs are never touched. */
    const _Atomic int *stop_flag;
    int64_t sut_timeout_ms;    /* -1 = derived (60 s, raised for slow models); 0 = forever */
    /* The network SUT (--sut kserve, harness/nsut.h): with endpoints, the model runs on
     * these KServe v2 servers; it is still built or loaded here, and bound (never
     * compiled), for its inputs, outputs and pre-processing, so both ends use the same. */
    const char *const *endpoints;
    size_t n_endpoints;
    const char *model_name;     /* in the URL (NULL = the benchmark id) */
    int concurrency;            /* requests in flight (0 = 2 per endpoint... see nsut) */
    int64_t request_timeout_ms; /* 0 = none */
    bool json;                  /* JSON tensors instead of the binary extension */
    /* progress of the loadgen (periodic) and stage messages (model built, data loaded...) */
    ib_lg_progress_fn progress;
    void *progress_user;
    void (*stage)(void *user, const char *msg);
    void *stage_user;
} ib_harness_opts;

void ib_harness_opts_defaults(ib_harness_opts *o);

/* Where the workers' time went in one test (issue 24: an Offline run below its warm-up rate
 * is starved by the host, waiting on copies or on the device). Seconds summed over the
 * workers; span_s runs from the first sample issued to the last response, so
 * workers x span_s = compute + inputs + outputs + host + responses + idle. compute, inputs
 * and outputs are the sessions' (ib_session_times: on a GPU, device work with its launches,
 * host to device and device to host copies); host is the rest of a batch's processing
 * (collating the samples, post-processing, an entry's own loop between runs); responses is
 * completing the samples with the loadgen; idle is waiting for samples. */
typedef struct ib_harness_worker_time {
    int workers;
    uint64_t runs;
    double span_s;
    double compute_s, inputs_s, outputs_s, host_s, responses_s, idle_s;
} ib_harness_worker_time;

/* What one run produced. Paths are absolute or relative as output_dir was given. */
typedef struct ib_harness_result {
    bool ran_performance, ran_accuracy;
    ib_lg_result perf;          /* the performance (or find-peak) test */
    ib_lg_result acc;           /* the accuracy test (loadgen side) */
    bool accuracy_valid;        /* metric computed */
    double accuracy;            /* headline value in the entry's unit (76.46 = 76.46 %) */
    bool accuracy_met;          /* >= target (meaningless with random weights: see labels) */
    bool synthetic_model, synthetic_data;
    char accuracy_line[256];    /* first line of accuracy.txt */
    char scenario_dir[4096];    /* <output>/<system>/<benchmark>/<Scenario> */
    char perf_dir[4096], acc_dir[4096];
    char model_path[4096], data_dir[4096];
    char system[128];
    char model_note[256];       /* the bind note */
    double warmup_samples_per_sec;
    int workers, threads_per_worker;
    int64_t batch;
    /* where the defaults of batch and workers came from: "user" (a flag), or the backend's
     * default for this benchmark ("cpu: ...", "cuda: <device>, <SMs>, <memory>") */
    char batch_from[160], workers_from[160];
    char max_wait_from[160]; /* the Server batching window: "user", the entry's, the device rule */
    /* the in-process SUT's compiled nodes (worker 0, every model; ib_session_placement):
     * nodes in all, and those left on the fallback backend's kernels on the host */
    uint32_t nodes, fallback_nodes;
    char fallback_backend[32];
    char fallback_ops[256];
    /* worker 0's subgraphs that replay as one recorded launch after warm-up (a CUDA Graph on
     * cuda; ib_session_replay_get): all 0 on host backends and the network SUT */
    uint32_t replay_subgraphs, replay_on, replay_refused;
    char replay_why[256]; /* the first refusal's node or call */
    /* worker 0's products after warm-up (ib_hsut_precision_use): how many compute at their
     * model's precision, the others by op type and precision ("LSTM x5 at fp32") */
    uint32_t products, products_at_precision;
    char products_others[256];
    /* the last performance test's worker time (ib_hsut_times_get); workers 0 when not
     * measured (the network SUT, no performance test) */
    ib_harness_worker_time worker_time;
    /* the precision of each model's sessions, in model order: at int8 or fp8 only model 0
     * is calibrated (ib_hsut_model_precision); n_model_precisions 0 without an in-process
     * SUT */
    size_t n_model_precisions;
    enum ib_precision model_precisions[IB_BENCH_MAX_MODELS];
    /* What every output says about the run (synthetic model or data, --quick, reduced
     * counts, precision): in result.json, run.json and, through the CLI, the console;
     * never in the official log files. */
    size_t n_labels;
    char labels[IB_HARNESS_MAX_LABELS][512];
    unsigned run_n;             /* the performance/run_N the run went into (0: none) */
    bool interrupted;           /* stopped by stop_flag: nothing was moved into the tree */
    char kept_dir[4096];        /* interrupted: where its partial logs are */
    /* the network SUT (--endpoint): requests sent and failed in the tests, the first
     * failure (endpoint and reason) */
    uint64_t net_requests, net_failed_requests;
    char net_first_failure[512];
} ib_harness_result;

/* The results-tree system folder: `given` checked (letters, digits, '.', '_', '-'), or
 * "<hostname>-<backend>". IB_EINVAL names a bad one. */
int ib_harness_system_name(const char *given, const char *backend, char *out, size_t n,
                           ib_err *err);

/*
 * ib_harness_run - everything described above. Returns IB_OK when every requested test ran
 * to the end (valid or not: see result), or the first error (model, data, settings,
 * runtime, loadgen) with its message in err; a failure inside a worker aborts the test and
 * is returned here.
 */
int ib_harness_run(const ib_harness_opts *o, ib_harness_result *res, ib_err *err);

/* A benchmark's models as a run gets them (o->bench, cfg, model_path, cache_dir or
 * output_dir, stage): the --model file, or built with seeded random weights into the cache
 * and reused from there; loaded and bound. For `serve`. */
typedef struct ib_harness_models {
    ib_model *models[IB_BENCH_MAX_MODELS];
    ib_bench_io io[IB_BENCH_MAX_MODELS];
    size_t n;
    char path[4096]; /* model 0's file */
} ib_harness_models;
int ib_harness_load_models(const ib_harness_opts *o, ib_harness_models *m, ib_err *err);
void ib_harness_models_free(ib_harness_models *m);

#endif
