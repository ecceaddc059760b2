/*
 * nsut.h - the network SUT (`inferbench run --sut kserve --endpoint URL ...`): the QSL,
 * pre-processing (collate), post-processing and accuracy stay in this process; each
 * issued batch becomes one KServe v2 `POST /v2/models/{name}/infer` (binary tensor data,
 * or JSON with json = true) to the endpoint with the fewest requests outstanding.
 *
 * One thread drives everything: it takes batches from the queue issue_query fills (the
 * same batching rule as the in-process SUT: up to max_batch samples, waiting at most
 * max_wait for more), collates and encodes them into one of `concurrency` request slots,
 * and, inside libcurl's multi loop, decodes each answer, runs the entry's postprocess and
 * completes the samples. No thread per request, nothing allocated per request once the
 * slots have grown.
 *
 * Faults: a refused connection, a timeout, an HTTP error, a malformed or short answer
 * complete the request's samples through ib_lg_samples_fail with the endpoint and the
 * reason, so the test ends INVALID (rule sut_errors) instead of hanging; failures are
 * counted in ib_nsut_stats. Only a local failure (out of memory, the entry's postprocess)
 * aborts the test and is returned by ib_nsut_take_error.
 *
 * The null SUT over the network (bench NULL): each query's indices go as a UINT32 tensor
 * "INDEX" to a `serve --null` (or any echo model), and the echoed index is the payload,
 * as the in-process null SUT answers.
 */
#ifndef IB_HARNESS_NSUT_H
#define IB_HARNESS_NSUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness/benchmark.h"
#include "harness/qsl.h"
#include "inferbench/loadgen.h"

typedef struct ib_nsut ib_nsut;

typedef struct ib_nsut_opts {
    const ib_benchmark *bench; /* NULL: the null SUT */
    const ib_bench_config *cfg;
    void *state;           /* the entry's dataset state */
    const ib_bench_io *io; /* model 0's binding (the served model's inputs and outputs) */
    ib_hqsl *qsl;
    size_t total; /* dataset samples (warm-up picks) */
    const char *const *endpoints;
    size_t n_endpoints;
    const char *model_name;     /* in the URL (NULL = the benchmark id, or "null") */
    int concurrency;            /* requests in flight at most (>= 1) */
    int64_t max_batch;          /* samples per request (>= 1) */
    int64_t max_wait_ns;        /* 0 = send what is queued */
    int64_t request_timeout_ms; /* a request not answered by then fails (0 = none) */
    bool json;                  /* JSON tensors instead of the binary extension */
    const _Atomic int *stop_flag;
} ib_nsut_opts;

/* Check every endpoint (GET /v2/health/ready, then the model metadata against io: names,
 * datatypes, per-sample shapes; errors name the endpoint and the difference), warm up
 * (a few requests at max_batch and at 1) and start the thread. */
int ib_nsut_create(const ib_nsut_opts *o, ib_nsut **out, ib_err *err);
void ib_nsut_destroy(ib_nsut *s);
ib_lg_sut ib_nsut_table(ib_nsut *s);
/* Wait until no request is in flight (before the QSL unloads samples). */
void ib_nsut_quiesce(ib_nsut *s);
/* After a test: wait for the requests in flight, then the first local error (IB_OK if
 * none), cleared. */
int ib_nsut_take_error(ib_nsut *s, ib_err *err);
double ib_nsut_warmup_rate(const ib_nsut *s);
int64_t ib_nsut_warmup_latency_ns(const ib_nsut *s);
const char *ib_nsut_describe(const ib_nsut *s);

typedef struct ib_nsut_stats {
    uint64_t requests, failed_requests, failed_samples;
    uint64_t bytes_sent, bytes_received;
    char first_failure[512]; /* endpoint and reason of the first failed request */
} ib_nsut_stats;
void ib_nsut_get_stats(ib_nsut *s, ib_nsut_stats *st);

#endif
