/*
 * serve.h - `inferbench serve`: a benchmark's model behind the KServe v2 REST protocol
 * (net/kserve.h), so that a LoadGen elsewhere (inferbench run --sut kserve, or any KServe
 * client) can measure it over the network.
 *
 * Endpoints (Open Inference Protocol, REST):
 *   GET  /v2/health/live, /v2/health/ready          200, or 503 while starting or draining
 *   GET  /v2                                        server metadata (binary_tensor_data)
 *   GET  /v2/models/{name}[/versions/1]             model metadata: inputs, outputs, shapes
 *   GET  /v2/models/{name}[/versions/1]/ready
 *   POST /v2/models/{name}[/versions/1]/infer       binary tensor data or JSON
 *   GET  /metrics                                   Prometheus text (requests by code, queue
 *                                                   depth, batch sizes, latency histogram)
 *
 * Requests are checked against the model's bound inputs (names, datatypes, per-sample
 * shape: 400 naming the tensor). Concurrent requests are batched: a worker takes the oldest
 * queued request and every queued one of the same per-sample shapes up to max_batch rows,
 * waiting at most max_delay for more; the outputs are split back by rows. A full queue
 * answers 429 and a body over max_body 413, so memory stays bounded; while draining (after
 * ib_serve_drain) new requests get 503 and queued ones still finish.
 *
 * The null model (null_model) answers every infer request with its inputs as outputs, at
 * once on the connection's thread: the network and protocol cost without inference.
 */
#ifndef IB_HARNESS_SERVE_H
#define IB_HARNESS_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/harness.h"

typedef struct ib_serve ib_serve;

typedef struct ib_serve_opts {
    /* the model: as `run` gets it (h.bench, h.cfg, h.model_path, h.cache_dir or
     * h.output_dir for the cache, h.backend, h.threads, h.workers, h.stage) */
    ib_harness_opts h;
    bool null_model;        /* echo server, no benchmark */
    const char *model_name; /* the name in the URLs (NULL = the benchmark id, or "null") */
    const char *host;       /* NULL = every address */
    int port;               /* 0 = any free port (ib_serve_port) */
    int64_t max_batch;      /* rows per run (0 = the benchmark's Offline batch) */
    int64_t max_delay_us;   /* wait for more requests (-1 = the benchmark's Server window) */
    size_t max_queue;       /* queued requests before 429 (0 = 1024) */
    size_t max_body;        /* bytes (0 = 256 MiB) */
} ib_serve_opts;

void ib_serve_opts_defaults(ib_serve_opts *o);

/* Load or build the model, start the workers (warm-up included) and listen. */
int ib_serve_start(const ib_serve_opts *o, ib_serve **out, ib_err *err);
int ib_serve_port(const ib_serve *s);
/* A one-line description: "resnet50 (tiny, random weights) on cpu, 2 workers, batch 32". */
const char *ib_serve_describe(const ib_serve *s);
/* Graceful drain: readiness goes to 503, new infer requests get 503, and this returns when
 * the queue is empty and no batch runs (or after timeout_ms; 0 = no limit). */
void ib_serve_drain(ib_serve *s, int64_t timeout_ms);
/* Stop listening, stop the workers, free everything (NULL allowed). */
void ib_serve_stop(ib_serve *s);

/* Counters (for tests and the CLI's summary line). */
typedef struct ib_serve_stats {
    uint64_t requests, ok, rejected, failed, batches, rows;
} ib_serve_stats;
void ib_serve_get_stats(const ib_serve *s, ib_serve_stats *st);

#endif
