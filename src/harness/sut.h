/*
 * sut.h - the harness SUT: worker threads, each with one session per model of the benchmark,
 * pulling batches from one queue that issue_query fills.
 *
 * Batching (one rule for every scenario): a worker takes up to max_batch queued samples;
 * when fewer are queued it waits until the oldest has waited max_wait (Server dynamic
 * batching) or takes what is there when max_wait is 0 (Offline: the query is all there;
 * SingleStream: batch 1; MultiStream: the query's samples). A taken batch runs as chunks of
 * the sizes warm-up compiled (max_batch and the powers of two below it), so no session
 * compiles a new shape inside the timed path. Responses are completed from the workers
 * after each chunk with the entry's payload. A failure in a worker aborts the test and is
 * reported by ib_hsut_error.
 */
#ifndef IB_HARNESS_SUT_H
#define IB_HARNESS_SUT_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/benchmark.h"
#include "harness/harness.h"
#include "harness/qsl.h"
#include "inferbench/loadgen.h"

typedef struct ib_hsut ib_hsut;

typedef struct ib_hsut_opts {
    const ib_benchmark *bench;
    const ib_bench_config *cfg;
    void *state;                  /* the entry's dataset state */
    const ib_bench_io *io;        /* one per model */
    const ib_model *const *models;
    size_t n_models;
    ib_hqsl *qsl;
    size_t total;                 /* dataset samples (for warm-up and calibration picks) */
    const char *backend;
    enum ib_precision precision;
    int workers;                  /* >= 1 */
    int threads_per_worker;       /* >= 1 */
    bool pin;                     /* worker w uses CPUs [w*tpw, (w+1)*tpw) of the mask */
    bool nhwc_fp16;               /* ib_session_options.nhwc_fp16 */
    bool half_chains;             /* ib_session_options.half_chains */
    int64_t max_batch;            /* >= 1 */
    int64_t max_wait_ns;          /* 0 = take what is queued */
    size_t calib_samples;         /* int8: samples for calibration (0 = the entry's) */
    const int *devices;           /* device backends: worker w uses devices[w % n_devices] */
    int n_devices;                /* 0 = device 0 (host backends ignore it) */
    /* The run's stop flag (optional): once set, queued samples are answered at once with an
     * empty payload instead of being run, so an interrupted test ends quickly. */
    const _Atomic int *stop_flag;
    /* Wall time the warm-up may take (0 = no limit): --quick keeps to its budget by timing
     * fewer repetitions, and by taking the first (untimed) run as the estimate when that
     * alone used half of it. At least one run of each timed size happens. */
    int64_t warmup_budget_ns;
} ib_hsut_opts;

/* Start the workers: each creates its sessions (calibrating for int8) and runs every chunk
 * size once (warm-up) before this returns. Errors name the worker and the session. */
int ib_hsut_create(const ib_hsut_opts *o, ib_hsut **out, ib_err *err);
/* Stop and join the workers, free everything (NULL allowed). */
void ib_hsut_destroy(ib_hsut *s);

/* The loadgen callback table (valid while s lives). */
ib_lg_sut ib_hsut_table(ib_hsut *s);

/* Change the batching window (before a test; the workers read it under the queue lock). */
void ib_hsut_set_max_wait(ib_hsut *s, int64_t ns);

/* Wait until no worker is processing a batch (an aborted test also drops its queue): the
 * QSL calls this before it unloads samples a worker might still read. */
void ib_hsut_quiesce(ib_hsut *s);

/* After a test: drop what is still queued, wait until no worker touches the test any more
 * (call it before ib_lg_test_destroy), then return the first error a worker hit during the
 * test (IB_OK when none) and clear it. */
int ib_hsut_take_error(ib_hsut *s, ib_err *err);

/* Warm-up figures: samples/s of all workers at max_batch, timed on every worker at once
 * from one common start (workers sharing a device share it as in the test), and the
 * latency of one batch-1 run (the slowest worker's best, each timed after an untimed run). */
double ib_hsut_warmup_rate(const ib_hsut *s);
int64_t ib_hsut_warmup_latency_ns(const ib_hsut *s);
/* The precision model m's sessions run at: the run's, except at int8 or fp8 for models
 * past 0, which have no calibration inputs (fp16 on a device backend, else fp32; an
 * entry's helper graphs fp32 at every precision). */
enum ib_precision ib_hsut_model_precision(const ib_hsut *s, size_t m);
/* The session description of worker 0, model 0 (borrowed; for run.json). */
const char *ib_hsut_describe(const ib_hsut *s);
/* Where worker 0's compiled nodes run, summed over the benchmark's models
 * (ib_session_placement_get); the models' fallback op lists are joined into ops
 * (truncated to ops_cap) and out->fallback_ops points at it. */
void ib_hsut_placement(const ib_hsut *s, ib_session_placement *out, char *ops, size_t ops_cap);
/* Worker 0's recorded-launch replay (ib_session_replay_get) summed over the models; out->why
 * is the first refusal's (borrowed from the session). */
void ib_hsut_replay(const ib_hsut *s, ib_session_replay *out);
/* Worker 0's products and how many compute at their model's precision, over every model
 * (ib_session_precision_use_get; models 1.. may run at another precision on purpose: at int8
 * only model 0 is calibrated); the others' lists are joined into others (others_cap bytes).
 * out->precision is model 0's. */
void ib_hsut_precision_use(const ib_hsut *s, ib_session_precision_use *out, char *others,
                           size_t others_cap);

/* The workers' time (ib_harness_worker_time, harness.h): start counting (before a test,
 * while no worker processes a batch). */
void ib_hsut_times_reset(ib_hsut *s);
/* What was counted since the reset (after ib_hsut_take_error). All 0 when no sample ran. */
void ib_hsut_times_get(const ib_hsut *s, ib_harness_worker_time *out);

#endif
