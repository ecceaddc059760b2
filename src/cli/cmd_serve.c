/*
 * cmd_serve.c - `inferbench serve`: a benchmark's model (or the null echo model) behind the
 * KServe v2 REST protocol (harness/serve.h), until SIGINT/SIGTERM, then a graceful drain.
 */
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fileio.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "harness/serve.h"
#include "inferbench/runtime.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: inferbench serve [--benchmark ID | --null] [--model FILE.onnx]\n"
               "                        [--backend cpu] [--port 8000] [--host ADDR] ...\n\n"
               "Serve a benchmark's model over the KServe v2 (Open Inference Protocol) REST API,\n"
               "so `inferbench run --sut kserve --endpoint http://HOST:PORT` (or any KServe v2\n"
               "client) measures it over the network. Runs until SIGINT/SIGTERM, then drains:\n"
               "readiness turns 503, queued requests finish, new ones get 503.\n\n"
               "Endpoints: GET /v2/health/live, /v2/health/ready, /v2, /v2/models/NAME,\n"
               "/v2/models/NAME/ready, /metrics (Prometheus); POST /v2/models/NAME/infer (binary\n"
               "tensor data extension or JSON).\n\n"
               "Model:\n"
               "  --benchmark ID           resnet50 (default), ssd-resnet34, bert-99, bert-99.9,\n"
               "                           dlrm-99, dlrm-99.9 (one model run per batch)\n"
               "  --null                   the null model: echoes its inputs (network cost only)\n"
               "  --model FILE.onnx        the model file (default: built with seeded random\n"
               "                           weights, as `run` builds it: same --seed, same model)\n"
               "  --model-name NAME        the name in the URLs (default: the benchmark id, null)\n"
               "  --tiny                   the tiny stand-in model (tests)\n"
               "  --seed N                 weights seed (default 1)\n"
               "  --variant V, --row-cap N entry-specific choice (dlrm: --row-cap)\n"
               "  --cache-dir D            where built models are kept (default as `run`)\n"
               "  --backend B              cpu (default), cuda, reference\n"
               "  --precision P            fp32 (default), bf16, int8, fp16 (cuda)\n"
               "  --threads N              compute threads in all (default: every CPU)\n"
               "  --workers N              model instances, each running one batch at a time\n"
               "                           (default threads/4)\n\n"
               "Batching and limits:\n"
               "  --max-batch N            rows per model run (default: the benchmark's Offline\n"
               "                           batch); concurrent requests of the same shapes are\n"
               "                           run together\n"
               "  --max-delay-us N         wait this long for more requests (default: the\n"
               "                           benchmark's Server window)\n"
               "  --max-queue N            queued requests before answering 429 (default 1024)\n"
               "  --max-body-mb N          request body limit, 413 above (default 256)\n\n"
               "Network:\n"
               "  --port P                 TCP port (default 8000; 0 = any free port)\n"
               "  --host ADDR              address to listen on (default every address)\n"
               "  --port-file F            write the port there once ready (scripts, tests)\n"
               "  --drain-timeout-ms N     longest drain on SIGTERM (default 30000)\n"
               "  --quiet, -q              no start and stop lines\n\n"
               "Exit status: 0 after a drain, 1 runtime error, 2 usage or model error.\n");
}

enum {
    OPT_BENCH = 256,
    OPT_NULL,
    OPT_MODEL,
    OPT_MODEL_NAME,
    OPT_TINY,
    OPT_SEED,
    OPT_VARIANT,
    OPT_CACHE,
    OPT_BACKEND,
    OPT_PRECISION,
    OPT_THREADS,
    OPT_WORKERS,
    OPT_MAX_BATCH,
    OPT_MAX_DELAY,
    OPT_MAX_QUEUE,
    OPT_MAX_BODY,
    OPT_PORT,
    OPT_HOST,
    OPT_PORT_FILE,
    OPT_DRAIN,
};

static void on_stage(void *user, const char *msg)
{
    if (!*(const bool *)user) fprintf(stderr, "inferbench serve: %s\n", msg);
}

static int parse_range(const char *cmd, const char *opt, const char *v, uint64_t lo, uint64_t hi,
                       uint64_t *out)
{
    int rc = ib_cli_parse_u64(cmd, opt, v, out);
    if (rc) return rc;
    if (*out < lo || *out > hi)
        return ib_cli_usage_error(cmd, "%s: '%s' is not in %llu..%llu", opt, v,
                                  (unsigned long long)lo, (unsigned long long)hi);
    return IB_EXIT_OK;
}

int ib_cmd_serve(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"benchmark", required_argument, NULL, OPT_BENCH},
        {"null", no_argument, NULL, OPT_NULL},
        {"model", required_argument, NULL, OPT_MODEL},
        {"model-name", required_argument, NULL, OPT_MODEL_NAME},
        {"tiny", no_argument, NULL, OPT_TINY},
        {"seed", required_argument, NULL, OPT_SEED},
        {"variant", required_argument, NULL, OPT_VARIANT},
        {"row-cap", required_argument, NULL, OPT_VARIANT},
        {"cache-dir", required_argument, NULL, OPT_CACHE},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"precision", required_argument, NULL, OPT_PRECISION},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"max-batch", required_argument, NULL, OPT_MAX_BATCH},
        {"max-delay-us", required_argument, NULL, OPT_MAX_DELAY},
        {"max-queue", required_argument, NULL, OPT_MAX_QUEUE},
        {"max-body-mb", required_argument, NULL, OPT_MAX_BODY},
        {"port", required_argument, NULL, OPT_PORT},
        {"host", required_argument, NULL, OPT_HOST},
        {"port-file", required_argument, NULL, OPT_PORT_FILE},
        {"drain-timeout-ms", required_argument, NULL, OPT_DRAIN},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "serve";
    ib_serve_opts so;
    ib_serve_opts_defaults(&so);
    so.port = 8000;
    const char *bench = NULL, *port_file = NULL, *cache = NULL, *precision = NULL;
    bool quiet = false;
    uint64_t u = 0, drain_ms = 30000;
    optind = 1;
    opterr = 0;
    int c, rc;
    while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_BENCH:
            bench = optarg;
            break;
        case OPT_NULL:
            so.null_model = true;
            break;
        case OPT_MODEL:
            so.h.model_path = optarg;
            break;
        case OPT_MODEL_NAME:
            if (!*optarg || strchr(optarg, '/'))
                return ib_cli_usage_error(cmd, "--model-name '%s': a name without '/'", optarg);
            so.model_name = optarg;
            break;
        case OPT_TINY:
            so.h.cfg.tiny = true;
            break;
        case OPT_SEED:
            if ((rc = ib_cli_parse_u64(cmd, "--seed", optarg, &so.h.cfg.seed))) return rc;
            break;
        case OPT_VARIANT:
            so.h.cfg.variant = optarg;
            break;
        case OPT_CACHE:
            cache = optarg;
            break;
        case OPT_BACKEND:
            so.h.backend = optarg;
            break;
        case OPT_PRECISION:
            precision = optarg;
            break;
        case OPT_THREADS:
        case OPT_WORKERS:
            if ((rc = parse_range(cmd, c == OPT_THREADS ? "--threads" : "--workers", optarg, 1,
                                  4096, &u)))
                return rc;
            *(c == OPT_THREADS ? &so.h.threads : &so.h.workers) = (int)u;
            break;
        case OPT_MAX_BATCH:
            if ((rc = parse_range(cmd, "--max-batch", optarg, 1, 65536, &u))) return rc;
            so.max_batch = (int64_t)u;
            break;
        case OPT_MAX_DELAY:
            if ((rc = parse_range(cmd, "--max-delay-us", optarg, 0, 10000000, &u))) return rc;
            so.max_delay_us = (int64_t)u;
            break;
        case OPT_MAX_QUEUE:
            if ((rc = parse_range(cmd, "--max-queue", optarg, 1, 1000000, &u))) return rc;
            so.max_queue = (size_t)u;
            break;
        case OPT_MAX_BODY:
            if ((rc = parse_range(cmd, "--max-body-mb", optarg, 1, 65536, &u))) return rc;
            so.max_body = (size_t)u << 20;
            break;
        case OPT_PORT:
            if ((rc = parse_range(cmd, "--port", optarg, 0, 65535, &u))) return rc;
            so.port = (int)u;
            break;
        case OPT_HOST:
            so.host = optarg;
            break;
        case OPT_PORT_FILE:
            port_file = optarg;
            break;
        case OPT_DRAIN:
            if ((rc = parse_range(cmd, "--drain-timeout-ms", optarg, 0, 3600000, &drain_ms)))
                return rc;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            usage(stdout);
            return IB_EXIT_OK;
        case ':':
            return ib_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default:
            return ib_cli_unknown_option(cmd, argv[optind - 1], longopts);
        }
    }
    if (optind < argc) return ib_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (so.null_model && (bench || so.h.model_path))
        return ib_cli_usage_error(cmd, "--null serves no model: drop --benchmark and --model");
    if (!so.null_model) {
        so.h.bench = ib_benchmark_find(bench ? bench : "resnet50");
        if (!so.h.bench) {
            char ids[512];
            ib_benchmark_ids(ids, sizeof ids);
            return ib_cli_usage_error(cmd, "unknown benchmark '%s' (built in: %s)", bench, ids);
        }
    }
    if (precision && ib_precision_parse(precision, &so.h.cfg.precision) != IB_OK)
        return ib_cli_usage_error(cmd, "--precision: '%s' is not fp32, fp16, bf16 or int8",
                                  precision);
    const char *why = NULL;
    if (!so.null_model && !ib_backend_available(so.h.backend, &why))
        return ib_cli_usage_error(cmd, "--backend %s: %s", so.h.backend,
                                  why ? why : "not available");
    char cache_buf[4096];
    so.h.cache_dir = cache ? cache : ib_run_default_cache_dir(cache_buf, sizeof cache_buf);
    so.h.output_dir = "."; /* the cache's fallback only */
    so.h.stage = on_stage;
    so.h.stage_user = &quiet;
    const _Atomic int *stop = ib_cli_stop_flag_install();
    ib_err err;
    ib_err_clear(&err);
    ib_serve *srv = NULL;
    if ((rc = ib_serve_start(&so, &srv, &err))) {
        ib_cli_error(cmd, "%s", err.msg);
        return ib_cli_exit_for_status(rc);
    }
    int port = ib_serve_port(srv);
    const char *name = so.model_name ? so.model_name : so.null_model ? "null" : so.h.bench->id;
    if (!quiet)
        fprintf(stderr, "inferbench serve: ready on http://%s:%d/v2/models/%s: %s%s\n",
                so.host ? so.host : "0.0.0.0", port, name, ib_serve_describe(srv),
                so.null_model || so.h.model_path ? "" : " [random weights: not a valid model]");
    if (port_file) {
        char text[32];
        int n = snprintf(text, sizeof text, "%d\n", port);
        if ((rc = ib_file_write_all(port_file, text, (size_t)n, &err))) {
            ib_cli_error(cmd, "--port-file: %s", err.msg);
            ib_serve_stop(srv);
            return IB_EXIT_RUNTIME;
        }
    }
    while (!atomic_load(stop)) {
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    if (!quiet) fprintf(stderr, "inferbench serve: draining (new requests get 503)\n");
    ib_serve_drain(srv, (int64_t)drain_ms);
    ib_serve_stats st;
    ib_serve_get_stats(srv, &st);
    ib_serve_stop(srv);
    if (!quiet)
        fprintf(stderr,
                "inferbench serve: stopped: %llu infer requests (%llu ok, %llu rejected, %llu "
                "failed), %llu rows in %llu batches\n",
                (unsigned long long)st.requests, (unsigned long long)st.ok,
                (unsigned long long)st.rejected, (unsigned long long)st.failed,
                (unsigned long long)st.rows, (unsigned long long)st.batches);
    return IB_EXIT_OK;
}
