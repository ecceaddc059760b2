/*
 * run_internal.h - what the parts of ib_harness_run share (run.c: the flow; settings.c:
 * settings adjustments and labels; run_files.c: accuracy.txt and run.json).
 */
#ifndef IB_HARNESS_RUN_INTERNAL_H
#define IB_HARNESS_RUN_INTERNAL_H

#include "harness/devices.h"
#include "harness/harness.h"
#include "harness/qsl.h"
#include "harness/rundir.h"
#include "harness/nsut.h"
#include "harness/sut.h"

typedef struct run_ctx {
    const ib_benchmark *bench;
    ib_harness_result *res;
    char work_dir[4096];     /* the cache folder of generated models and data */
    ib_rundir rd;            /* where this run's files go (staging, then the tree) */
    int64_t t0_ns;           /* when the run started (--quick counts from here) */
    ib_model *models[IB_BENCH_MAX_MODELS];
    size_t n_models;
    ib_bench_io io[IB_BENCH_MAX_MODELS];
    void *state;
    size_t total;
    size_t synth_samples; /* 0 when the data is the user's */
    ib_hqsl *qsl;
    ib_hsut *sut;            /* the in-process SUT, or */
    ib_nsut *nsut;           /* the network SUT (o->n_endpoints > 0) */
    int workers, tpw;
    ib_device_list devices;  /* device backends: the GPUs the workers use (n = 0 on hosts) */
    int64_t batch, max_wait_ns;
    uint64_t sut_timeout_ms; /* the loadgen's no-response limit: the user's, or derived */
    ib_lg_settings settings; /* what the tests run with */
    const char *label_ptrs[IB_HARNESS_MAX_LABELS]; /* res->labels, for the loadgen options */
    char adjustments[2048];  /* "field=value (reason)" lines for run.json */
} run_ctx;

/* A stage message through o->stage (run.c; nothing when o->stage is NULL). */
void ib_harness_stage(const ib_harness_opts *o, const char *fmt, ...) IB_PRINTF(2, 3);

/* The run's SUT, in-process or network (run_sut.c): create (warm-up included), and what
 * run.c, settings.c and run_files.c ask of it. */
int ib_run_sut_create(const ib_harness_opts *o, run_ctx *c, ib_err *err);
void ib_run_sut_destroy(run_ctx *c);
ib_lg_sut ib_run_sut_table(run_ctx *c);
void ib_run_sut_quiesce(run_ctx *c);
int ib_run_sut_take_error(run_ctx *c, ib_err *err);
double ib_run_sut_warmup_rate(const run_ctx *c);
int64_t ib_run_sut_warmup_latency_ns(const run_ctx *c);
const char *ib_run_sut_describe(const run_ctx *c);

/* Server on a device backend without --max-wait-us (issue 24): the batching window that
 * leaves half the latency bound for queueing, i.e. bound / 2 less the time one worker takes
 * for a full batch (batch x workers / the warm-up rate, all workers sharing the devices),
 * at least 0; -1 when bound or rate is unknown. */
int64_t ib_run_server_device_wait_ns(int64_t bound_ns, int64_t batch, int workers, double rate);
/* Seconds one worker takes for a full batch while all workers share the devices (batch x
 * workers / rate); 0 when rate is unknown. */
double ib_run_full_batch_s(int64_t batch, int workers, double rate);
/* Set the in-process SUT's batching window (before the test starts). */
void ib_run_sut_set_max_wait(run_ctx *c, int64_t ns);

/* --quick: the seconds of the budget still free for the test (at least 1). */
double ib_run_quick_left_s(const ib_harness_opts *o, const run_ctx *c);
/* The performance sample count the QSL reports: the entry's official one, or the dataset
 * size when that is smaller. */
size_t ib_run_performance_count(const ib_harness_opts *o, const run_ctx *c);
/* --quick, small datasets and warm-up targets, for fields no user file or flag set. */
int ib_run_adjust_settings(const ib_harness_opts *o, run_ctx *c, ib_err *err);
/* After an Offline performance run that failed only min_duration because our warm-up
 * estimate of the rate was low: raise offline_expected_qps (noted in run.json) and return
 * true, so the caller runs the test again (at most three times). */
bool ib_run_retry_offline(const ib_harness_opts *o, run_ctx *c, const ib_lg_result *r);
/* The labels every output carries (synthetic model/data, quick, reduced counts). */
int ib_run_make_labels(const ib_harness_opts *o, run_ctx *c, ib_err *err);
/* After the tests: the "machine busy" label when other processes took a noticeable share of
 * the CPUs (the loadgen measured it; its result.json already says so). */
void ib_run_label_machine_load(run_ctx *c);
/* accuracy.txt from the accuracy run's mlperf_log_accuracy.json. */
int ib_run_accuracy(const ib_harness_opts *o, run_ctx *c, ib_err *err);
/* run.json into the staging folder (runjson.h has the schema). */
int ib_run_write_json(const ib_harness_opts *o, run_ctx *c, ib_err *err);

#endif
