/*
 * cmd_run.c - `inferbench run`: option parsing (getopt_long), the settings
 * procedure shared by every back end (rules file, user.conf, audit.config,
 * command-line overrides), progress display and exit codes. The back ends
 * live in their own files: run_null.c for `--sut null`, run_bench.c for
 * `--benchmark ID` (the default: resnet50 when no --sut is given).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inferbench run [--benchmark ID] [--scenario S] [--mode M] [--quick]\n"
            "                      [--backend cpu] [--model FILE.onnx] [--data DIR]\n"
            "                      [--precision fp32|fp16|bf16|int8|fp8] [--threads N] [--batch N]\n"
            "                      [--system NAME] [--json] --output-dir D\n"
            "       inferbench run --sut kserve --endpoint URL [--endpoint URL...] [--benchmark ID]\n"
            "                      ... --output-dir D\n"
            "       inferbench run --sut null --scenario S [--model NAME] ... --output-dir D\n\n"
            "Run an MLPerf benchmark (the runtime as the system under test) or the null SUT\n"
            "under the load generator, and write the MLPerf results tree.\n\n"
            "Benchmark runs (--benchmark, the default when --sut is not given):\n"
            "  --benchmark ID           resnet50 (default); ids as in results trees\n"
            "  --scenario S             Offline (default), Server, SingleStream, MultiStream\n"
            "  --mode M                 performance (default), accuracy, submission\n"
            "                           (accuracy + performance), find-peak\n"
            "  --quick[=SECONDS]        a short run within a time budget (default 60 s wall,\n"
            "                           model build and warm-up included): not submittable\n"
            "  --force                  replace performance/run_1 and accuracy/ (default: a\n"
            "                           new run goes to the next free performance/run_N)\n"
            "  --cache-dir D            generated models and synthetic data, reused across\n"
            "                           runs (default $XDG_CACHE_HOME/inferbench or\n"
            "                           ~/.cache/inferbench)\n"
            "  --backend B              cpu (default), cuda (NVIDIA GPUs; --devices) or\n"
            "                           reference\n"
            "  --model FILE.onnx        the benchmark's model (default: built with seeded\n"
            "                           random weights; resnet50 accepts the MLPerf\n"
            "                           resnet50_v1.onnx: input_tensor:0 -> ArgMax:0)\n"
            "  --data DIR               the dataset in its official layout (default: a\n"
            "                           synthetic one written in that layout)\n"
            "  --precision P            fp32 (default), bf16, int8 (calibrated on the data),\n"
            "                           fp16 (cuda), fp8 (cuda on Hopper: e4m3 products,\n"
            "                           calibrated; not yet run on a GPU)\n"
            "  --threads N              compute threads in all (default: every CPU)\n"
            "  --workers N              worker threads, one session each (default threads/4)\n"
            "  --batch N                max batch per inference (default per benchmark)\n"
            "  --max-wait-us N          Server dynamic batching window\n"
            "  --no-pin                 do not pin worker threads to CPUs\n"
            "  --nhwc-fp16              cuda at fp16/fp8: convolutions pass NHWC float16 to\n"
            "                           each other (not yet run on a GPU; off by default; at\n"
            "                           int8 they always pass int8 NHWC)\n"
            "  --half-chains            cuda at fp16/bf16/int8/fp8: products, LayerNorm, Add\n"
            "                           and the fused attention pass 16-bit values to each\n"
            "                           other (not yet run on a GPU; off by default)\n"
            "  --system NAME            results-tree system folder (default <host>-<backend>)\n"
            "  --tiny                   the tiny stand-in model (tests)\n"
            "  --seed N                 weights and synthetic data seed (default 1)\n"
            "  --synth-samples N        synthetic dataset size\n"
            "  --payload-dtype T        accuracy payload dtype (resnet50: float32, int32,\n");
    fprintf(f,
            "                           int64)\n"
            "  --variant V              entry-specific choice: bert padded|unpadded, rnnt\n"
            "                           device-decoder, ssd-resnet34 host-post|graph-post\n"
            "                           (decode + NMS in the graph, on the backend), resnet50\n"
            "                           u8-input (uint8 pixels in, the means subtracted in\n"
            "                           the graph: a quarter of the bytes); also:\n"
            "  --dataset D              3d-unet: brats19 (v1.1, default) or kits19\n"
            "                           (kits19-device: its window sums in a graph on any\n"
            "                           backend, as on a GPU)\n"
            "  --row-cap N              dlrm: embedding rows per table (ids %% N; default\n"
            "                           100000; the official tables need 40000000)\n"
            "  --devices LIST           accelerator backends: all (default) or 0,1,2\n\n"
            "Network runs (--sut kserve, or --sut null with --endpoint): the load, QSL,\n"
            "pre/post-processing and accuracy here; inference on KServe v2 servers\n"
            "(inferbench serve, Triton, KServe...). The model is still built or read here\n"
            "(--model) for its inputs, outputs and pre-processing; it must be the served one.\n"
            "  --sut kserve             run --benchmark ID (default resnet50) over the network\n"
            "  --endpoint URL           a server, e.g. http://10.0.0.2:8000 (repeat for more;\n"
            "                           each request goes to the least busy one)\n"
            "  --model-name NAME        the served model's name (default: the benchmark id;\n"
            "                           --sut null: null)\n"
            "  --concurrency N          requests in flight (default 2 per endpoint)\n"
            "  --request-timeout-ms N   a request unanswered by then fails (default 60000)\n"
            "  --json-tensors           JSON tensors instead of the binary extension\n"
            "  A refused connection, timeout, HTTP error or malformed answer fails its samples:\n"
            "  the run ends INVALID (exit 3) naming the endpoint and the reason.\n\n"
            "Null SUT runs (--sut null):\n"
            "  --sut null               a SUT that completes every query at once (payload =\n"
            "                           the sample's QSL index as uint32 LE)\n"
            "  --model NAME             model name for config lookups (default nullmodel)\n"
            "  --total-samples N        QSL total sample count (default 1024)\n"
            "  --performance-samples N  QSL performance sample count (default: total)\n"
            "  --record-issued          write sut_issued.txt (one line per issue call)\n"
            "  --system NAME            results-tree system folder (default <host>-null); the\n"
            "                           logs go to <out>/<system>/<model>/<Scenario>/\n"
            "                           performance/run_N (accuracy mode: accuracy/)\n\n"
            "Both:\n"
            "  --mlperf-conf F          rules file (default: the embedded mlperf.conf of --rules)\n"
            "  --user-conf F            user settings\n"
            "  --audit-conf F           audit.config (default: ./audit.config when present)\n"
            "  --no-audit               ignore ./audit.config\n"
            "  --rules current|v1.1     rule set (default current)\n"
            "  --rng-compat C           libstdc++11 (default) or libstdc++10 sample draws\n"
            "  --target-qps Q           Server/Offline target QPS (SingleStream/MultiStream:\n"
            "                           expected latency 1e9/Q ns)\n"
            "  --min-duration-ms N      override min_duration\n"
            "  --max-duration-ms N      override max_duration\n"
            "  --min-query-count N      override min_query_count\n"
            "  --sut-timeout-ms N       end the test when the SUT answers nothing for N ms\n"
            "                           (default 60000, raised from warm-up for slow models;\n"
            "                           0 = wait forever)\n"
            "  --trace                  also write mlperf_log_trace.json\n"
            "  --quiet, -q              no progress line\n"
            "  --no-progress            no progress line\n"
            "  --json                   print run.json (what ran and its results; one schema\n"
            "                           for benchmarks and the null SUT)\n"
            "  --output-dir D           where the results go (created)\n\n"
            "Exit status: 0 VALID, 3 INVALID (or accuracy below target with a real model),\n"
            "2 usage, config or input-data error, 1 runtime error.\n");
}

static int parse_i64(const char *cmd, const char *opt, const char *v, int64_t *out)
{
    uint64_t u = 0;
    int rc = ib_cli_parse_u64(cmd, opt, v, &u);
    if (rc)
        return rc;
    if (u > (uint64_t)INT64_MAX / 1000000)
        return ib_cli_usage_error(cmd, "%s: '%s' is too large", opt, v);
    *out = (int64_t)u;
    return IB_EXIT_OK;
}

enum {
    OPT_SUT = 256, OPT_MODEL, OPT_SCENARIO, OPT_MODE, OPT_MLPERF_CONF, OPT_USER_CONF,
    OPT_AUDIT_CONF, OPT_NO_AUDIT, OPT_TOTAL, OPT_PERF, OPT_RULES, OPT_RNG, OPT_QPS, OPT_MIN_DUR,
    OPT_MAX_DUR, OPT_MIN_Q, OPT_TIMEOUT, OPT_RECORD, OPT_TRACE, OPT_JSON, OPT_NO_PROGRESS,
    OPT_OUT, OPT_BENCH, OPT_BACKEND, OPT_DATA, OPT_PRECISION, OPT_THREADS, OPT_WORKERS,
    OPT_BATCH, OPT_MAX_WAIT, OPT_QUICK, OPT_SYSTEM, OPT_TINY, OPT_SEED, OPT_SYNTH, OPT_PAYLOAD,
    OPT_NO_PIN, OPT_NHWC_FP16, OPT_HALF_CHAINS, OPT_VARIANT, OPT_DATASET, OPT_ROW_CAP, OPT_DEVICES, OPT_FORCE, OPT_CACHE_DIR,
    OPT_ENDPOINT, OPT_MODEL_NAME, OPT_CONCURRENCY, OPT_REQ_TIMEOUT, OPT_JSON_TENSORS,
};

int ib_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"sut", required_argument, NULL, OPT_SUT},
        {"model", required_argument, NULL, OPT_MODEL},
        {"scenario", required_argument, NULL, OPT_SCENARIO},
        {"mode", required_argument, NULL, OPT_MODE},
        {"mlperf-conf", required_argument, NULL, OPT_MLPERF_CONF},
        {"user-conf", required_argument, NULL, OPT_USER_CONF},
        {"audit-conf", required_argument, NULL, OPT_AUDIT_CONF},
        {"no-audit", no_argument, NULL, OPT_NO_AUDIT},
        {"total-samples", required_argument, NULL, OPT_TOTAL},
        {"performance-samples", required_argument, NULL, OPT_PERF},
        {"rules", required_argument, NULL, OPT_RULES},
        {"rng-compat", required_argument, NULL, OPT_RNG},
        {"target-qps", required_argument, NULL, OPT_QPS},
        {"min-duration-ms", required_argument, NULL, OPT_MIN_DUR},
        {"max-duration-ms", required_argument, NULL, OPT_MAX_DUR},
        {"min-query-count", required_argument, NULL, OPT_MIN_Q},
        {"sut-timeout-ms", required_argument, NULL, OPT_TIMEOUT},
        {"record-issued", no_argument, NULL, OPT_RECORD},
        {"trace", no_argument, NULL, OPT_TRACE},
        {"quiet", no_argument, NULL, 'q'},
        {"json", no_argument, NULL, OPT_JSON},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"output-dir", required_argument, NULL, OPT_OUT},
        {"benchmark", required_argument, NULL, OPT_BENCH},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"data", required_argument, NULL, OPT_DATA},
        {"precision", required_argument, NULL, OPT_PRECISION},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"max-wait-us", required_argument, NULL, OPT_MAX_WAIT},
        {"quick", optional_argument, NULL, OPT_QUICK},
        {"force", no_argument, NULL, OPT_FORCE},
        {"cache-dir", required_argument, NULL, OPT_CACHE_DIR},
        {"system", required_argument, NULL, OPT_SYSTEM},
        {"tiny", no_argument, NULL, OPT_TINY},
        {"seed", required_argument, NULL, OPT_SEED},
        {"synth-samples", required_argument, NULL, OPT_SYNTH},
        {"payload-dtype", required_argument, NULL, OPT_PAYLOAD},
        {"no-pin", no_argument, NULL, OPT_NO_PIN},
        {"nhwc-fp16", no_argument, NULL, OPT_NHWC_FP16},
        {"half-chains", no_argument, NULL, OPT_HALF_CHAINS},
        {"variant", required_argument, NULL, OPT_VARIANT},
        {"dataset", required_argument, NULL, OPT_DATASET},
        {"row-cap", required_argument, NULL, OPT_ROW_CAP},
        {"devices", required_argument, NULL, OPT_DEVICES},
        {"endpoint", required_argument, NULL, OPT_ENDPOINT},
        {"model-name", required_argument, NULL, OPT_MODEL_NAME},
        {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
        {"request-timeout-ms", required_argument, NULL, OPT_REQ_TIMEOUT},
        {"json-tensors", no_argument, NULL, OPT_JSON_TENSORS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "run";
    ib_run_opts o;
    memset(&o, 0, sizeof o);
    o.model = "nullmodel";
    o.scenario = IB_LG_SCENARIO_SERVER;
    o.mode = IB_LG_MODE_PERFORMANCE;
    o.min_duration_ms = o.max_duration_ms = o.min_query_count = -1;
    o.max_wait_us = -1;
    o.sut_timeout_ms = -1;
    o.request_timeout_ms = -1;
    o.seed = 1;
    bool have_scenario = false, have_model = false;
    uint64_t u = 0;
    optind = 1;
    opterr = 0;
    int c, rc;
    while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_SUT: o.sut = optarg; break;
        case OPT_MODEL:
            o.model = o.model_file = optarg;
            have_model = true;
            break;
        case OPT_SCENARIO:
            if (ib_lg_scenario_parse(optarg, &o.scenario) != IB_OK)
                return ib_cli_usage_error(cmd, "unknown scenario '%s' (SingleStream, MultiStream, "
                                               "Server, Offline)", optarg);
            have_scenario = true;
            break;
        case OPT_MODE:
            if (ib_lg_mode_parse(optarg, &o.mode) != IB_OK)
                return ib_cli_usage_error(cmd, "unknown mode '%s' (PerformanceOnly, AccuracyOnly, "
                                               "SubmissionRun, FindPeakPerformance)", optarg);
            break;
        case OPT_MLPERF_CONF: o.mlperf_conf = optarg; break;
        case OPT_USER_CONF: o.user_conf = optarg; break;
        case OPT_AUDIT_CONF: o.audit_conf = optarg; break;
        case OPT_NO_AUDIT: o.no_audit = true; break;
        case OPT_TOTAL:
            if ((rc = ib_cli_parse_u64(cmd, "--total-samples", optarg, &o.total_samples)))
                return rc;
            break;
        case OPT_PERF:
            if ((rc = ib_cli_parse_u64(cmd, "--performance-samples", optarg, &o.performance_samples)))
                return rc;
            break;
        case OPT_RULES:
            if (ib_lg_rules_parse(optarg, &o.rules) != IB_OK)
                return ib_cli_usage_error(cmd, "unknown rule set '%s' (current, v1.1)", optarg);
            break;
        case OPT_RNG:
            if (ib_lg_rng_compat_parse(optarg, &o.rng_compat) != IB_OK)
                return ib_cli_usage_error(cmd, "unknown --rng-compat '%s' (libstdc++11, "
                                               "libstdc++10)", optarg);
            break;
        case OPT_QPS: {
            char *end = NULL;
            errno = 0;
            o.target_qps = strtod(optarg, &end);
            if (errno || !end || *end || !isfinite(o.target_qps) || !(o.target_qps > 0))
                return ib_cli_usage_error(cmd, "--target-qps: '%s' is not a positive number",
                                          optarg);
            break;
        }
        case OPT_MIN_DUR:
            if ((rc = parse_i64(cmd, "--min-duration-ms", optarg, &o.min_duration_ms)))
                return rc;
            break;
        case OPT_MAX_DUR:
            if ((rc = parse_i64(cmd, "--max-duration-ms", optarg, &o.max_duration_ms)))
                return rc;
            break;
        case OPT_MIN_Q:
            if ((rc = parse_i64(cmd, "--min-query-count", optarg, &o.min_query_count)))
                return rc;
            break;
        case OPT_TIMEOUT:
            if ((rc = parse_i64(cmd, "--sut-timeout-ms", optarg, &o.sut_timeout_ms)))
                return rc;
            break;
        case OPT_RECORD: o.record_issued = true; break;
        case OPT_TRACE: o.trace = true; break;
        case 'q': o.quiet = true; break;
        case OPT_JSON: o.json = true; break;
        case OPT_NO_PROGRESS: o.no_progress = true; break;
        case OPT_OUT: o.output_dir = optarg; break;
        case OPT_BENCH: o.benchmark = optarg; break;
        case OPT_BACKEND: o.backend = optarg; break;
        case OPT_DATA: o.data_dir = optarg; break;
        case OPT_PRECISION: o.precision = optarg; break;
        case OPT_PAYLOAD: o.payload_dtype = optarg; break;
        case OPT_SYSTEM: o.system = optarg; break;
        case OPT_QUICK:
            o.quick = true;
            o.quick_s = IB_RUN_QUICK_DEFAULT_S;
            if (optarg) {
                char *end = NULL;
                errno = 0;
                double q = strtod(optarg, &end);
                if (errno || !end || *end || !isfinite(q) || q < 5 || q > 86400)
                    return ib_cli_usage_error(cmd, "--quick=%s: the time budget is seconds in "
                                                   "5..86400 (--quick alone: %d)",
                                              optarg, IB_RUN_QUICK_DEFAULT_S);
                o.quick_s = q;
            }
            break;
        case OPT_FORCE: o.force = true; break;
        case OPT_CACHE_DIR: o.cache_dir = optarg; break;
        case OPT_TINY: o.tiny = true; break;
        case OPT_NO_PIN: o.no_pin = true; break;
        case OPT_NHWC_FP16: o.nhwc_fp16 = true; break;
        case OPT_HALF_CHAINS: o.half_chains = true; break;
        case OPT_VARIANT:
        case OPT_DATASET:
        case OPT_ROW_CAP: {
            /* one entry-specific choice; the entry validates it (its errors name the value) */
            const char *flag = c == OPT_VARIANT ? "--variant" : c == OPT_DATASET ? "--dataset"
                                                                                  : "--row-cap";
            if (o.variant)
                return ib_cli_usage_error(cmd, "%s: already given as %s %s", flag,
                                          o.variant_opt, o.variant);
            if (!*optarg)
                return ib_cli_usage_error(cmd, "%s: empty value", flag);
            o.variant = optarg;
            o.variant_opt = flag;
            break;
        }
        case OPT_DEVICES:
            if (!*optarg)
                return ib_cli_usage_error(cmd, "--devices: empty value (all or a list: 0,1,2)");
            o.devices = optarg;
            break;
        case OPT_THREADS:
        case OPT_WORKERS:
            if ((rc = ib_cli_parse_u64(cmd, c == OPT_THREADS ? "--threads" : "--workers", optarg, &u)))
                return rc;
            if (u < 1 || u > 4096)
                return ib_cli_usage_error(cmd, "%s: '%s' is not in 1..4096",
                                          c == OPT_THREADS ? "--threads" : "--workers", optarg);
            *(c == OPT_THREADS ? &o.threads : &o.workers) = (int)u;
            break;
        case OPT_BATCH:
            if ((rc = ib_cli_parse_u64(cmd, "--batch", optarg, &u)))
                return rc;
            if (u < 1 || u > 65536)
                return ib_cli_usage_error(cmd, "--batch: '%s' is not in 1..65536", optarg);
            o.batch = (int64_t)u;
            break;
        case OPT_MAX_WAIT:
            if ((rc = ib_cli_parse_u64(cmd, "--max-wait-us", optarg, &u)))
                return rc;
            if (u > 10000000)
                return ib_cli_usage_error(cmd, "--max-wait-us: '%s' is over 10 s", optarg);
            o.max_wait_us = (int64_t)u;
            break;
        case OPT_SEED:
            if ((rc = ib_cli_parse_u64(cmd, "--seed", optarg, &o.seed)))
                return rc;
            break;
        case OPT_SYNTH:
            if ((rc = ib_cli_parse_u64(cmd, "--synth-samples", optarg, &o.synth_samples)))
                return rc;
            if (o.synth_samples < 1 || o.synth_samples > 10000000)
                return ib_cli_usage_error(cmd, "--synth-samples: '%s' is not in 1..10000000",
                                          optarg);
            break;
        case OPT_ENDPOINT:
            if (o.n_endpoints == sizeof o.endpoints / sizeof o.endpoints[0])
                return ib_cli_usage_error(cmd, "--endpoint: at most %zu", sizeof o.endpoints / sizeof o.endpoints[0]);
            if (strncmp(optarg, "http://", 7) != 0 && strncmp(optarg, "https://", 8) != 0)
                return ib_cli_usage_error(cmd, "--endpoint '%s': give a URL such as "
                                               "http://host:8000", optarg);
            o.endpoints[o.n_endpoints++] = optarg;
            break;
        case OPT_MODEL_NAME:
            if (!*optarg || strchr(optarg, '/'))
                return ib_cli_usage_error(cmd, "--model-name '%s': a name without '/'", optarg);
            o.model_name = optarg;
            break;
        case OPT_CONCURRENCY:
            if ((rc = ib_cli_parse_u64(cmd, "--concurrency", optarg, &u)))
                return rc;
            if (u < 1 || u > 1024)
                return ib_cli_usage_error(cmd, "--concurrency: '%s' is not in 1..1024", optarg);
            o.concurrency = (int)u;
            break;
        case OPT_REQ_TIMEOUT:
            if ((rc = parse_i64(cmd, "--request-timeout-ms", optarg, &o.request_timeout_ms)))
                return rc;
            break;
        case OPT_JSON_TENSORS: o.json_tensors = true; break;
        case 'h': usage(stdout); return IB_EXIT_OK;
        case ':': return ib_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return ib_cli_unknown_option(cmd, argv[optind - 1], longopts);
        }
    }
    if (optind < argc)
        return ib_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    bool kserve = o.sut && strcmp(o.sut, "kserve") == 0;
    if (o.sut && o.benchmark && !kserve)
        return ib_cli_usage_error(cmd, "--sut %s and --benchmark exclude each other (--sut "
                                       "kserve runs a benchmark over the network)",
                                  o.sut);
    if (!o.output_dir)
        return ib_cli_usage_error(cmd, "--output-dir is required");
    bool net_opts = o.model_name || o.concurrency || o.request_timeout_ms >= 0 || o.json_tensors;
    if (kserve && !o.n_endpoints)
        return ib_cli_usage_error(cmd, "--sut kserve needs --endpoint URL (a KServe v2 server, "
                                       "e.g. inferbench serve)");
    if ((o.n_endpoints || net_opts) && !kserve && !(o.sut && strcmp(o.sut, "null") == 0))
        return ib_cli_usage_error(cmd, "--endpoint, --model-name, --concurrency, "
                                       "--request-timeout-ms and --json-tensors need --sut "
                                       "kserve (or --sut null --endpoint URL)");
    if (net_opts && !o.n_endpoints)
        return ib_cli_usage_error(cmd, "--model-name, --concurrency, --request-timeout-ms and "
                                       "--json-tensors need --endpoint URL");
    if (o.request_timeout_ms < 0)
        o.request_timeout_ms = 60000;
    if (!o.sut || kserve) {
        /* the benchmark back end; resnet50 Offline unless told otherwise */
        if (!o.benchmark)
            o.benchmark = "resnet50";
        if (!have_scenario)
            o.scenario = IB_LG_SCENARIO_OFFLINE;
        if (!have_model)
            o.model_file = NULL;
        return ib_run_benchmark(&o);
    }
    if (o.data_dir || o.backend || o.precision || o.quick || o.tiny || o.threads || o.workers ||
        (o.batch && !o.n_endpoints) || o.payload_dtype || o.variant || o.devices || o.cache_dir)
        return ib_cli_usage_error(cmd, "--data, --backend, --precision, --quick, --tiny, "
                                       "--threads, --workers, --batch, --payload-dtype, "
                                       "--variant, --devices and --cache-dir need "
                                       "--benchmark, not --sut");
    if (!have_scenario)
        return ib_cli_usage_error(cmd, "--scenario is required");
    if (strcmp(o.sut, "null") == 0)
        return ib_run_null(&o);
    return ib_cli_usage_error(cmd, "unknown SUT '%s' (null, kserve; use --benchmark for the "
                                   "runtime in this process)",
                              o.sut);
}

int ib_run_build_settings(const ib_run_opts *o, ib_lg_settings *s, ib_lg_settings_origin *origins,
                          const char **audit_used, ib_err *err)
{
    char warnings[4096];
    *audit_used = NULL;
    ib_lg_settings_defaults_rules(s, o->rules);
    s->scenario = o->scenario;
    s->mode = o->mode;
    s->rng_compat = o->rng_compat;
    const char *scen = ib_lg_scenario_name(o->scenario);
    int rc;
    warnings[0] = '\0';
    if (o->mlperf_conf) {
        rc = ib_lg_settings_apply_conf_file(s, o->mlperf_conf, o->model, scen, IB_LG_CONF_RULES,
                                            origins, warnings, sizeof warnings, err);
    } else {
        size_t len = 0;
        const char *text = ib_lg_mlperf_conf_embedded(o->rules, &len);
        rc = ib_lg_settings_apply_conf(s, text, len,
                                       o->rules == IB_LG_RULES_V1_1 ? "mlperf.conf (embedded v1.1)"
                                                                    : "mlperf.conf (embedded v6.1)",
                                       o->model, scen, IB_LG_CONF_RULES, origins, warnings,
                                       sizeof warnings, err);
    }
    if (rc)
        return rc;
    if (warnings[0] && !o->quiet)
        fprintf(stderr, "%s%s", warnings, warnings[strlen(warnings) - 1] == '\n' ? "" : "\n");
    if (o->user_conf) {
        warnings[0] = '\0';
        rc = ib_lg_settings_apply_conf_file(s, o->user_conf, o->model, scen, IB_LG_CONF_USER,
                                            origins, warnings, sizeof warnings, err);
        if (rc)
            return rc;
        if (warnings[0] && !o->quiet)
            fprintf(stderr, "%s%s", warnings, warnings[strlen(warnings) - 1] == '\n' ? "" : "\n");
    }
    const char *audit = o->audit_conf;
    if (!audit && !o->no_audit && access("audit.config", R_OK) == 0) {
        audit = "audit.config";
        fprintf(stderr, "inferbench run: warning: using ./audit.config from the current "
                        "directory (it overrides the settings, as the official LoadGen does; "
                        "--no-audit ignores it)\n");
    }
    if (audit) {
        warnings[0] = '\0';
        /* official: model "*", the scenario name without spaces */
        rc = ib_lg_settings_apply_conf_file(s, audit, "*", scen, IB_LG_CONF_AUDIT, origins,
                                            warnings, sizeof warnings, err);
        if (rc)
            return rc;
        *audit_used = audit;
    }
    /* command-line overrides last */
    if (o->target_qps > 0) {
        const char *field = "server_target_qps";
        switch (o->scenario) {
        case IB_LG_SCENARIO_SERVER: s->server_target_qps = o->target_qps; break;
        case IB_LG_SCENARIO_OFFLINE:
            s->offline_expected_qps = o->target_qps;
            field = "offline_expected_qps";
            break;
        case IB_LG_SCENARIO_SINGLE_STREAM:
            s->single_stream_expected_latency_ns = 1e9 / o->target_qps;
            field = "single_stream_expected_latency_ns";
            break;
        case IB_LG_SCENARIO_MULTI_STREAM:
            if (o->rules == IB_LG_RULES_V1_1) {
                s->multi_stream_target_qps = o->target_qps;
                field = "multi_stream_target_qps";
            } else {
                s->multi_stream_expected_latency_ns = 1e9 / o->target_qps;
                field = "multi_stream_expected_latency_ns";
            }
            break;
        }
        if (origins)
            ib_lg_settings_origin_set(origins, field, "cli --target-qps");
    }
    if (o->min_duration_ms >= 0) {
        s->min_duration_ms = (uint64_t)o->min_duration_ms;
        if (origins)
            ib_lg_settings_origin_set(origins, "min_duration_ms", "cli --min-duration-ms");
    }
    if (o->max_duration_ms >= 0) {
        s->max_duration_ms = (uint64_t)o->max_duration_ms;
        if (origins)
            ib_lg_settings_origin_set(origins, "max_duration_ms", "cli --max-duration-ms");
    }
    if (o->min_query_count >= 0) {
        s->min_query_count = (uint64_t)o->min_query_count;
        if (origins)
            ib_lg_settings_origin_set(origins, "min_query_count", "cli --min-query-count");
    }
    return ib_lg_settings_validate(s, err);
}

int ib_run_exit_code(int rc, const ib_lg_result *res)
{
    if (rc == IB_EINVAL || rc == IB_EFORMAT || rc == IB_ENOTFOUND || rc == IB_EUNSUPPORTED)
        return IB_EXIT_USAGE;
    if (rc != IB_OK)
        return IB_EXIT_RUNTIME;
    return res->valid ? IB_EXIT_OK : IB_EXIT_INVALID;
}
