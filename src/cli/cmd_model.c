/*
 * cmd_model.c - `inferbench model info|run`.
 *
 *   info FILE [--json]   inputs, outputs, op histogram, parameters, FLOPs (batch 1)
 *   run FILE --input NAME=FILE.pb ... [--backend B] [--precision P] [--batch N]
 *       --output-dir D   one inference; each output written as D/<name>.pb
 *                        (ONNX TensorProto, as the ONNX node tests store them)
 *
 * Results go to stdout, diagnostics to stderr; exit 0 on success, 1 on a
 * runtime failure, 2 on a usage, model or input error (users.md §4.1).
 */
#define _GNU_SOURCE /* getopt_long */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json_writer.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "inferbench/onnx.h"
#include "inferbench/runtime.h"
#include "runtime/compile.h"
#include "runtime/model.h"

#define MAX_INPUTS 64

static void usage(FILE *f)
{
    fprintf(f, "usage: inferbench model info FILE.onnx [--json]\n"
               "       inferbench model run FILE.onnx --input NAME=FILE.pb [--input ...]\n"
               "                  [--backend cpu|cuda|reference]\n"
               "                  [--precision fp32|fp16|bf16|int8|fp8]\n"
               "                  [--batch N] [--threads N] [--no-fusion] [--profile[=N]]\n"
               "                  --output-dir DIR\n\n"
               "info  prints the model's inputs and outputs (symbolic dims by name), its op\n"
               "      histogram, parameter count and an estimate of the FLOPs of one sample\n"
               "      (2 x multiply-adds at batch 1); --json prints the same as one JSON object.\n"
               "run   runs one inference on the inputs (ONNX TensorProto files, as in the ONNX\n"
               "      node tests; NAME= may be omitted when the file names its tensor) and\n"
               "      writes every output to DIR/<output name>.pb (characters other than\n"
               "      letters, digits, '.', '-' and '_' in the name become '_').\n"
               "      --batch sets the session's max_batch (default: the inputs' batch);\n"
               "      --precision int8 or fp8 calibrates on the given inputs (fp8: cuda).\n"
               "      --profile[=N] then runs N more times (default 10) and prints where the\n"
               "      time goes: per op type and the slowest nodes, in ms per run and %% of\n"
               "      the run, and what no node accounts for (the session between steps).\n\n"
               "Exit codes: 0 success, 1 runtime error, 2 usage, model or input error.\n");
}

/* ---- info ---------------------------------------------------------------------- */

typedef struct hist_ctx {
    ib_jw *jw; /* JSON mode */
    FILE *out; /* text mode */
} hist_ctx;

static void hist_cb(void *user, const char *op, uint64_t count)
{
    hist_ctx *h = user;
    if (h->jw) {
        ib_jw_key(h->jw, op);
        ib_jw_uint(h->jw, count);
    } else {
        fprintf(h->out, "  %-28s %llu\n", op, (unsigned long long)count);
    }
}

static void shape_text(const ib_graph *g, ib_value_id id, char *buf, size_t n)
{
    const ib_value *v = &g->values.data[id];
    size_t off = (size_t)snprintf(buf, n, "%s[", ib_dtype_name(v->desc.dtype));
    for (int32_t k = 0; k < v->desc.ndim && off < n; k++) {
        const char *sep = k ? "," : "";
        if (v->desc.dims[k] >= 0)
            off += (size_t)snprintf(buf + off, n - off, "%s%lld", sep, (long long)v->desc.dims[k]);
        else
            off += (size_t)snprintf(buf + off, n - off, "%s%s", sep,
                                    v->dim_param[k] && v->dim_param[k][0] ? v->dim_param[k] : "?");
    }
    if (off < n) snprintf(buf + off, n - off, "]");
}

static void json_values(ib_jw *jw, const ib_graph *g, const ib_value_id *ids, size_t n)
{
    ib_jw_array_begin(jw);
    for (size_t i = 0; i < n; i++) {
        const ib_value *v = &g->values.data[ids[i]];
        ib_jw_object_begin(jw);
        ib_jw_key(jw, "name");
        ib_jw_string(jw, v->name);
        ib_jw_key(jw, "dtype");
        ib_jw_string(jw, ib_dtype_name(v->desc.dtype));
        ib_jw_key(jw, "shape"); /* ints; symbolic dims as their name (or null) */
        ib_jw_array_begin(jw);
        for (int32_t k = 0; k < v->desc.ndim; k++) {
            if (v->desc.dims[k] >= 0)
                ib_jw_int(jw, v->desc.dims[k]);
            else if (v->dim_param[k] && v->dim_param[k][0])
                ib_jw_string(jw, v->dim_param[k]);
            else
                ib_jw_null(jw);
        }
        ib_jw_array_end(jw);
        ib_jw_object_end(jw);
    }
    ib_jw_array_end(jw);
}

static int info_json(const char *path, const ib_model *m, const ib_model_stats *st)
{
    const ib_graph *g = ib_model_graph(m);
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_jw jw;
    ib_jw_init(&jw, &sb, true);
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "file");
    ib_jw_string(&jw, path);
    ib_jw_key(&jw, "producer");
    ib_jw_string(&jw, st->producer);
    ib_jw_key(&jw, "opset");
    ib_jw_int(&jw, st->opset);
    ib_jw_key(&jw, "nodes");
    ib_jw_uint(&jw, st->node_count);
    ib_jw_key(&jw, "inputs");
    json_values(&jw, g, g->inputs.data, g->inputs.len);
    ib_jw_key(&jw, "outputs");
    json_values(&jw, g, g->outputs.data, g->outputs.len);
    ib_jw_key(&jw, "params");
    ib_jw_uint(&jw, st->param_count);
    ib_jw_key(&jw, "param_bytes");
    ib_jw_uint(&jw, st->param_bytes);
    ib_jw_key(&jw, "flops_batch1"); /* null when it cannot be estimated */
    ib_jw_double(&jw, st->flops);
    ib_jw_key(&jw, "ops");
    ib_jw_object_begin(&jw);
    hist_ctx h = {&jw, NULL};
    ib_model_op_histogram(m, hist_cb, &h);
    ib_jw_object_end(&jw);
    ib_jw_object_end(&jw);
    int rc = ib_jw_finish(&jw);
    if (!rc) printf("%s\n", ib_strbuf_cstr(&sb));
    ib_strbuf_deinit(&sb);
    return rc ? IB_EXIT_RUNTIME : IB_EXIT_OK;
}

static void info_text(const char *path, const ib_model *m, const ib_model_stats *st)
{
    const ib_graph *g = ib_model_graph(m);
    char buf[512];
    printf("model: %s\nproducer: %s, opset %lld, %llu nodes\n", path,
           st->producer[0] ? st->producer : "(none)", (long long)st->opset,
           (unsigned long long)st->node_count);
    printf("inputs:\n");
    for (size_t i = 0; i < g->inputs.len; i++) {
        shape_text(g, g->inputs.data[i], buf, sizeof buf);
        printf("  %-28s %s\n", g->values.data[g->inputs.data[i]].name, buf);
    }
    printf("outputs:\n");
    for (size_t i = 0; i < g->outputs.len; i++) {
        shape_text(g, g->outputs.data[i], buf, sizeof buf);
        printf("  %-28s %s\n", g->values.data[g->outputs.data[i]].name, buf);
    }
    printf("parameters: %llu (%.2f MB)\n", (unsigned long long)st->param_count,
           (double)st->param_bytes / 1e6);
    if (isnan(st->flops))
        printf("FLOPs per sample: unknown (the shapes are not static at batch 1)\n");
    else
        printf("FLOPs per sample: %.4g GFLOP (2 x MACs, batch 1)\n", st->flops / 1e9);
    printf("ops:\n");
    hist_ctx h = {NULL, stdout};
    ib_model_op_histogram(m, hist_cb, &h);
}

static int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    int c;
    optind = 1;
    opterr = 0; /* our own message, with the nearest option */
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'h') {
            usage(stdout);
            return IB_EXIT_OK;
        } else
            return ib_cli_unknown_option("model info", argv[optind - 1], opts);
    }
    if (optind != argc - 1) return ib_cli_usage_error("model", "'model info' takes one model file");
    const char *path = argv[optind];
    ib_model *m;
    ib_err err;
    int rc = ib_model_load_file(path, NULL, &m, &err);
    if (rc) {
        ib_cli_error("model", "%s", err.msg);
        return ib_cli_exit_for_status(rc);
    }
    ib_model_stats st;
    ib_model_get_stats(m, &st);
    int ex = IB_EXIT_OK;
    if (json)
        ex = info_json(path, m, &st);
    else
        info_text(path, m, &st);
    ib_model_destroy(m);
    return ex;
}

/* ---- run ----------------------------------------------------------------------- */

typedef struct run_args {
    const char *model;
    const char *out_dir;
    const char *backend;
    enum ib_precision precision;
    int64_t batch;
    int threads;
    bool no_fusion;
    int profile; /* --profile[=N]: N more runs profiled (0: none) */
    const char *input_spec[MAX_INPUTS];
    size_t n_inputs;
} run_args;

static int parse_run(int argc, char **argv, run_args *a)
{
    static const struct option opts[] = {{"input", required_argument, NULL, 'i'},
                                         {"output-dir", required_argument, NULL, 'o'},
                                         {"backend", required_argument, NULL, 'b'},
                                         {"precision", required_argument, NULL, 'p'},
                                         {"batch", required_argument, NULL, 'n'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"no-fusion", no_argument, NULL, 'F'},
                                         {"profile", optional_argument, NULL, 'P'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->backend = "cpu";
    int c;
    char *end;
    optind = 1;
    opterr = 0; /* our own message, with the nearest option */
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (a->n_inputs == MAX_INPUTS)
                return ib_cli_usage_error("model", "more than %d --input", MAX_INPUTS);
            a->input_spec[a->n_inputs++] = optarg;
            break;
        case 'o':
            a->out_dir = optarg;
            break;
        case 'b':
            a->backend = optarg;
            break;
        case 'p':
            if (ib_precision_parse(optarg, &a->precision))
                return ib_cli_usage_error("model", "unknown precision '%s'", optarg);
            break;
        case 'n':
            a->batch = strtoll(optarg, &end, 10);
            if (*end || a->batch < 1 || a->batch > (1 << 20))
                return ib_cli_usage_error("model", "--batch needs a positive integer");
            break;
        case 't':
            a->threads = (int)strtol(optarg, &end, 10);
            if (*end || a->threads < 0 || a->threads > 4096)
                return ib_cli_usage_error("model", "--threads needs a number >= 0");
            break;
        case 'F':
            a->no_fusion = true;
            break;
        case 'P': {
            a->profile = 10;
            if (optarg) {
                uint64_t u = 0;
                int rc = ib_cli_parse_u64("model", "--profile", optarg, &u);
                if (rc) return rc;
                if (u < 1 || u > 100000)
                    return ib_cli_usage_error("model", "--profile=%s: runs in 1..100000", optarg);
                a->profile = (int)u;
            }
            break;
        }
        case 'h':
            usage(stdout);
            return -1;
        case ':':
            return ib_cli_usage_error("model run", "option '%s' needs a value", argv[optind - 1]);
        default:
            return ib_cli_unknown_option("model run", argv[optind - 1], opts);
        }
    }
    if (optind != argc - 1) return ib_cli_usage_error("model", "'model run' takes one model file");
    a->model = argv[optind];
    if (!a->out_dir) return ib_cli_usage_error("model", "'model run' needs --output-dir");
    if (!a->n_inputs) return ib_cli_usage_error("model", "'model run' needs at least one --input");
    return IB_EXIT_OK;
}

/* "name=file.pb" or "file.pb" (the tensor's own name). */
static int read_inputs(const run_args *a, ib_tensor_view *in, char **names)
{
    for (size_t i = 0; i < a->n_inputs; i++) {
        const char *spec = a->input_spec[i], *eq = strchr(spec, '=');
        const char *file = eq ? eq + 1 : spec;
        ib_err err;
        int rc = ib_onnx_tensor_read_file(file, &in[i], &err);
        if (rc) {
            ib_cli_error("model", "%s", err.msg);
            return ib_cli_exit_for_status(rc);
        }
        if (eq) {
            /* the view's name is the block ib_onnx_tensor_release frees: keep it */
            char *nm = strndup(spec, (size_t)(eq - spec));
            if (!nm) return IB_EXIT_RUNTIME;
            names[i] = (char *)(uintptr_t)in[i].name;
            in[i].name = nm;
        } else if (!in[i].name || !in[i].name[0]) {
            return ib_cli_usage_error("model", "%s has no tensor name: use --input NAME=%s", file,
                                      file);
        }
    }
    return IB_EXIT_OK;
}

/* Output shapes for these inputs, from the compiler's shape inference. */
static int output_descs(const ib_model *m, const ib_tensor_view *in, size_t n_in,
                        ib_tensor_desc *out, ib_err *err)
{
    const ib_graph *g = ib_model_graph(m);
    ib_tensor_desc shapes[MAX_INPUTS];
    if (g->inputs.len > MAX_INPUTS)
        return ib_err_set(err, IB_EUNSUPPORTED, "more than %d model inputs", MAX_INPUTS);
    for (size_t i = 0; i < g->inputs.len; i++) {
        const ib_value *v = &g->values.data[g->inputs.data[i]];
        size_t j = 0;
        while (j < n_in && strcmp(in[j].name, v->name))
            j++;
        if (j == n_in)
            return ib_err_set(err, IB_EINVAL, "missing input '%s' (give --input %s=FILE.pb)",
                              v->name, v->name);
        shapes[i] = in[j].desc;
    }
    ib_compile_options o;
    ib_compile_options_defaults(&o);
    o.input_shapes = shapes;
    o.no_fuse = true;
    ib_graph *cg;
    int rc = ib_compile(g, &o, &cg, NULL, err);
    if (rc) return rc;
    for (size_t i = 0; i < cg->outputs.len; i++)
        out[i] = cg->values.data[cg->outputs.data[i]].desc;
    ib_graph_destroy(cg);
    return IB_OK;
}

static void safe_name(const char *name, char *buf, size_t n)
{
    size_t k = 0;
    for (; name[k] && k + 1 < n; k++) {
        char ch = name[k];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
        buf[k] = ok ? ch : '_';
    }
    buf[k] = 0;
    if (!k || !strcmp(buf, ".") || !strcmp(buf, ".."))
        snprintf(buf, n, "output_%s", k ? "dot" : "unnamed");
}

static int write_outputs(const run_args *a, const ib_model *m, ib_tensor_view *outs, size_t n)
{
    ib_err err;
    if (ib_mkdirs(a->out_dir, &err)) {
        ib_cli_error("model", "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    for (size_t i = 0; i < n; i++) {
        char fname[512], path[4096];
        safe_name(outs[i].name, fname, sizeof fname - 3);
        strcat(fname, ".pb");
        if (ib_path_join(path, sizeof path, a->out_dir, fname)) {
            ib_cli_error("model", "output path too long");
            return IB_EXIT_USAGE;
        }
        if (ib_onnx_tensor_write_file(path, &outs[i], &err)) {
            ib_cli_error("model", "%s", err.msg);
            return IB_EXIT_RUNTIME;
        }
        char d[160];
        printf("%s %s -> %s\n", outs[i].name, ib_tensor_desc_str(&outs[i].desc, d, sizeof d), path);
    }
    IB_UNUSED(m);
    return IB_EXIT_OK;
}

static int run_session(const run_args *a, const ib_model *m, ib_tensor_view *in,
                       ib_tensor_view *outs, size_t n_out)
{
    ib_err err;
    ib_session_options so;
    ib_session_options_defaults(&so);
    so.backend = a->backend;
    so.precision = a->precision;
    so.threads = a->threads;
    so.disable_fusion = a->no_fusion;
    so.max_batch = a->batch;
    for (size_t i = 0; !a->batch && i < a->n_inputs; i++)
        if (in[i].desc.ndim > 0 && in[i].desc.dims[0] > so.max_batch)
            so.max_batch = in[i].desc.dims[0];
    if (so.max_batch < 1) so.max_batch = 1;
    if (ib_precision_calibrated(a->precision)) {
        so.calib_inputs = in;
        so.calib_batches = 1;
        so.calib_input_count = a->n_inputs;
    }
    ib_session *s;
    int rc = ib_session_create(m, &so, &s, &err);
    if (rc) {
        ib_cli_error("model", "%s", err.msg);
        return ib_cli_exit_for_status(rc);
    }
    rc = ib_session_run(s, in, a->n_inputs, outs, n_out, &err);
    if (rc)
        ib_cli_error("model", "%s", err.msg);
    else
        fprintf(stderr, "%s", ib_session_describe(s));
    if (!rc && a->profile) { /* the first run compiled and warmed up; profile the next ones */
        ib_session_set_profiling(s, true);
        for (int r = 0; r < a->profile && !rc; r++)
            rc = ib_session_run(s, in, a->n_inputs, outs, n_out, &err);
        ib_profile p;
        if (!rc && !(rc = ib_session_profile(s, &p, &err))) {
            ib_profile_write(&p, 20, stdout);
            ib_profile_free(&p);
        }
        if (rc)
            ib_cli_error("model", "%s", err.msg);
    }
    ib_session_destroy(s);
    return rc ? ib_cli_exit_for_status(rc) : IB_EXIT_OK;
}

static int cmd_run(int argc, char **argv)
{
    run_args a;
    int ex = parse_run(argc, argv, &a);
    if (ex) return ex < 0 ? IB_EXIT_OK : ex;
    ib_tensor_view in[MAX_INPUTS];
    char *names[MAX_INPUTS] = {NULL};
    memset(in, 0, sizeof in);
    ib_model *m = NULL;
    ib_tensor_view *outs = NULL;
    ib_tensor_desc *descs = NULL;
    ib_err err;
    size_t n_out = 0;
    if ((ex = read_inputs(&a, in, names))) goto out;
    int rc = ib_model_load_file(a.model, NULL, &m, &err);
    if (rc) {
        ib_cli_error("model", "%s", err.msg);
        ex = ib_cli_exit_for_status(rc);
        goto out;
    }
    n_out = ib_model_output_count(m);
    outs = calloc(n_out + 1, sizeof *outs);
    descs = calloc(n_out + 1, sizeof *descs);
    if (!outs || !descs) {
        ex = IB_EXIT_RUNTIME;
        goto out;
    }
    if ((rc = output_descs(m, in, a.n_inputs, descs, &err))) {
        ib_cli_error("model", "%s", err.msg);
        ex = ib_cli_exit_for_status(rc);
        goto out;
    }
    for (size_t i = 0; i < n_out; i++) {
        ib_model_output(m, i, &outs[i].name, NULL);
        outs[i].capacity = ib_tensor_desc_nbytes(&descs[i]);
        if (!(outs[i].data = calloc(1, outs[i].capacity + 1))) {
            ex = IB_EXIT_RUNTIME;
            goto out;
        }
    }
    if (!(ex = run_session(&a, m, in, outs, n_out))) ex = write_outputs(&a, m, outs, n_out);
out:
    for (size_t i = 0; outs && i < n_out; i++)
        free(outs[i].data);
    free(outs);
    free(descs);
    ib_model_destroy(m);
    for (size_t i = 0; i < a.n_inputs; i++) {
        if (names[i]) { /* NAME= given: in[i].name is ours, names[i] the block */
            free((void *)(uintptr_t)in[i].name);
            in[i].name = names[i];
        }
        ib_onnx_tensor_release(&in[i]);
    }
    return ex;
}

int ib_cmd_model(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return IB_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
        usage(stdout);
        return IB_EXIT_OK;
    }
    if (!strcmp(sub, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(sub, "run")) return cmd_run(argc - 1, argv + 1);
    return ib_cli_usage_error("model", "unknown subcommand '%s' (info, run)", sub);
}
