/*
 * cmd_accuracy.c - `inferbench accuracy`: score an mlperf_log_accuracy.json written by any
 * SUT (ours, an official harness, another tool) exactly as the benchmark's official accuracy
 * script does (src/harness/accuracy.c, the code `run --mode accuracy` uses), print what the
 * script prints, the target and whether it is met, and optionally write accuracy.txt.
 *
 * When the log sits in one of our results trees, the run.json beside it supplies what the
 * command line leaves out (benchmark, dataset folder, 3d-unet dataset, tiny stand-in) and
 * says whether the model had random weights (the target is then not applicable).
 * Exit: 0 at or above target (or not applicable), 3 below, 2 bad input, 1 runtime error.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/json_writer.h"
#include "base/pyfmt.h"
#include "cli/cli.h"
#include "harness/accuracy.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inferbench accuracy --benchmark ID --log mlperf_log_accuracy.json\n"
            "                           [--data DIR] [--dataset D] [--output-dir D] [--json]\n\n"
            "Score an accuracy log as the benchmark's official accuracy script does and print\n"
            "its lines (what the submission checker parses), the target and pass/fail.\n\n"
            "  --benchmark ID       resnet50, ssd-resnet34, bert-99, bert-99.9, dlrm-99,\n"
            "                       dlrm-99.9, rnnt, 3d-unet-99, 3d-unet-99.9\n"
            "  --log FILE           the mlperf_log_accuracy.json to score\n"
            "  --data DIR           the dataset the log's qsl_idx index, in its official\n"
            "                       layout (ImageNet folder + val_map.txt, COCO, SQuAD\n"
            "                       dev-v1.1.json + vocab.txt, Criteo, LibriSpeech, BraTS,\n"
            "                       KiTS19)\n"
            "  --dataset D          3d-unet: brats19 (default) or kits19\n"
            "  --payload-dtype T    the logged dtype when not the script's default\n"
            "  --tiny               the log comes from the tiny stand-in model (tests)\n"
            "  --output-dir D       also write D/accuracy.txt (the lines + hash=<sha256>)\n"
            "  --json               print the result as JSON\n\n"
            "A log inside an inferbench results tree needs no more than --log: the run.json\n"
            "of its scenario folder gives the benchmark, dataset and model.\n\n"
            "Exit status: 0 at or above target, 3 below target, 2 bad input (missing or\n"
            "malformed log, qsl_idx out of range, wrong payload size), 1 runtime error.\n");
}

/* What a results-tree run.json beside the log says (all optional). */
typedef struct tree_info {
    bool found;
    char path[4096 + 16];
    char benchmark[64], data[4096], variant[64], payload[32];
    bool tiny, synthetic_model, synthetic_data;
} tree_info;

static void copy_str(json_t *o, const char *key, char *out, size_t n)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (v)
        snprintf(out, n, "%s", v);
}

/* <log dir>/../run.json (accuracy/) or <log dir>/../../run.json (performance/run_N/). */
static void find_run_json(const char *log, tree_info *t)
{
    memset(t, 0, sizeof *t);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", log);
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, "%s", up == 0 ? "." : "..");
        if (up == 0)
            continue;
        char p[4096 + 16];
        snprintf(p, sizeof p, "%s/run.json", dir[0] ? dir : "/");
        json_error_t je;
        json_t *j = ib_path_exists(p) ? json_load_file(p, JSON_DECODE_INT_AS_REAL, &je) : NULL;
        if (!j)
            continue;
        t->found = true;
        snprintf(t->path, sizeof t->path, "%s", p);
        copy_str(j, "benchmark", t->benchmark, sizeof t->benchmark);
        copy_str(j, "payload_dtype", t->payload, sizeof t->payload);
        json_t *m = json_object_get(j, "model"), *d = json_object_get(j, "data");
        copy_str(m, "variant", t->variant, sizeof t->variant);
        t->tiny = json_is_true(json_object_get(m, "tiny"));
        t->synthetic_model = json_is_true(json_object_get(m, "synthetic"));
        copy_str(d, "path", t->data, sizeof t->data);
        t->synthetic_data = json_is_true(json_object_get(d, "synthetic"));
        json_decref(j);
        return;
    }
}

static void print_json(const ib_accuracy_opts *o, const ib_accuracy_result *r,
                       const tree_info *t, bool applicable)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_jw jw;
    ib_jw_init(&jw, &sb, true);
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "format");
    ib_jw_string(&jw, "inferbench-accuracy/1");
    ib_jw_key(&jw, "benchmark");
    ib_jw_string(&jw, o->bench->id);
    ib_jw_key(&jw, "log");
    ib_jw_string(&jw, o->log_path);
    ib_jw_key(&jw, "data");
    ib_jw_string(&jw, o->data_dir);
    ib_jw_key(&jw, "entries");
    ib_jw_uint(&jw, r->entries);
    ib_jw_key(&jw, "lines"); /* what the official script prints */
    ib_jw_array_begin(&jw);
    for (const char *l = r->text; *l;) {
        size_t n = strcspn(l, "\n");
        ib_jw_string_n(&jw, l, n);
        l += n + (l[n] == '\n');
    }
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "metric");
    ib_jw_string(&jw, o->bench->accuracy_metric);
    ib_jw_key(&jw, "value");
    ib_jw_double(&jw, r->value);
    ib_jw_key(&jw, "reference");
    ib_jw_double(&jw, r->reference);
    ib_jw_key(&jw, "target_fraction");
    ib_jw_double(&jw, o->bench->accuracy_target_fraction);
    ib_jw_key(&jw, "target");
    ib_jw_double(&jw, r->target);
    ib_jw_key(&jw, "met");
    ib_jw_bool(&jw, r->met);
    ib_jw_key(&jw, "applicable");
    ib_jw_bool(&jw, applicable);
    ib_jw_key(&jw, "labels");
    ib_jw_array_begin(&jw);
    if (t->synthetic_model)
        ib_jw_string(&jw, "synthetic model: random weights, so the target does not apply");
    if (t->synthetic_data)
        ib_jw_string(&jw, "synthetic data");
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "run_json");
    if (t->found)
        ib_jw_string(&jw, t->path);
    else
        ib_jw_null(&jw);
    ib_jw_key(&jw, "accuracy_txt");
    if (r->txt_path[0])
        ib_jw_string(&jw, r->txt_path);
    else
        ib_jw_null(&jw);
    ib_jw_object_end(&jw);
    if (ib_jw_finish(&jw) == IB_OK)
        printf("%s\n", ib_strbuf_cstr(&sb));
    ib_strbuf_deinit(&sb);
}

enum { OPT_BENCH = 256, OPT_LOG, OPT_DATA, OPT_DATASET, OPT_PAYLOAD, OPT_TINY, OPT_OUT, OPT_JSON };

int ib_cmd_accuracy(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"benchmark", required_argument, NULL, OPT_BENCH},
        {"log", required_argument, NULL, OPT_LOG},
        {"data", required_argument, NULL, OPT_DATA},
        {"dataset", required_argument, NULL, OPT_DATASET},
        {"payload-dtype", required_argument, NULL, OPT_PAYLOAD},
        {"tiny", no_argument, NULL, OPT_TINY},
        {"output-dir", required_argument, NULL, OPT_OUT},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "accuracy";
    const char *bench = NULL, *payload = NULL, *dataset = NULL;
    bool json = false, tiny = false;
    ib_accuracy_opts o;
    memset(&o, 0, sizeof o);
    ib_bench_config_defaults(&o.cfg);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_BENCH: bench = optarg; break;
        case OPT_LOG: o.log_path = optarg; break;
        case OPT_DATA: o.data_dir = optarg; break;
        case OPT_DATASET: dataset = optarg; break;
        case OPT_PAYLOAD: payload = optarg; break;
        case OPT_TINY: tiny = true; break;
        case OPT_OUT: o.output_dir = optarg; break;
        case OPT_JSON: json = true; break;
        case 'h': usage(stdout); return IB_EXIT_OK;
        case ':': return ib_cli_usage_error(cmd, "%s needs a value", argv[optind - 1]);
        default: return ib_cli_unknown_option(cmd, argv[optind - 1], longopts);
        }
    }
    if (optind < argc)
        return ib_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!o.log_path)
        return ib_cli_usage_error(cmd, "--log FILE is required (an mlperf_log_accuracy.json)");
    tree_info t;
    find_run_json(o.log_path, &t);
    if (!bench && t.benchmark[0])
        bench = t.benchmark;
    if (!bench)
        return ib_cli_usage_error(cmd, "--benchmark ID is required (no run.json beside %s "
                                       "names it)",
                                  o.log_path);
    o.bench = ib_benchmark_find(bench);
    if (!o.bench) {
        char ids[512];
        ib_benchmark_ids(ids, sizeof ids);
        return ib_cli_usage_error(cmd, "unknown benchmark '%s' (built in: %s)", bench, ids);
    }
    bool same_run = t.found && !strcmp(t.benchmark, o.bench->id);
    if (!o.data_dir && same_run && t.data[0])
        o.data_dir = t.data;
    if (!o.data_dir)
        return ib_cli_usage_error(cmd, "--data DIR is required: the dataset the log's qsl_idx "
                                       "index (%s)",
                                  o.bench->dataset_name);
    o.cfg.variant = dataset ? dataset : same_run && t.variant[0] ? t.variant : NULL;
    o.cfg.tiny = tiny || (same_run && t.tiny);
    if (!payload && same_run && t.payload[0])
        payload = t.payload;
    if (payload && ib_cli_parse_dtype(payload, &o.cfg.payload_dtype) != IB_OK)
        return ib_cli_usage_error(cmd, "--payload-dtype: unknown dtype '%s'", payload);
    ib_err err;
    ib_err_clear(&err);
    ib_accuracy_result r;
    int rc = ib_accuracy_score(&o, &r, &err);
    if (rc) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        return ib_cli_exit_for_status(rc);
    }
    bool applicable = !(same_run && t.synthetic_model);
    if (json) {
        print_json(&o, &r, &t, applicable);
    } else {
        fputs(r.text, stdout);
        char ref[32];
        ib_py_float_repr(r.reference, ref, sizeof ref);
        printf("\nTarget (%s): %s >= %.6g (%s of the FP32 reference %s): %s\n", o.bench->id,
               o.bench->accuracy_metric, r.target,
               o.bench->accuracy_target_fraction > 0.995 ? "99.9 %" : "99 %", ref,
               !applicable ? "not applicable (random weights)" : r.met ? "met" : "NOT met");
        if (!applicable)
            printf("  (%s says the model was built with random weights)\n", t.path);
        if (r.txt_path[0])
            printf("Written: %s\n", r.txt_path);
    }
    ib_free(r.text);
    return !applicable || r.met ? IB_EXIT_OK : IB_EXIT_INVALID;
}
