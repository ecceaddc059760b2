/*
 * cmd_convert.c - `inferbench convert criteo-tsv`: a raw Criteo Terabyte day file into the
 * DLRM dataset folder `inferbench run --benchmark dlrm-99 --data DIR` reads
 * (terabyte_processed_test.bin + the aggregation trace), as the reference preprocessing
 * does (src/dataset/criteo_tsv.h; benchmarks.md §1.4). Progress on stderr for long files,
 * a JSON summary with --json.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json_writer.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "dataset/criteo.h"
#include "dataset/criteo_tsv.h"
#include "inferbench/base.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inferbench convert criteo-tsv --input day_23 --output-dir DIR\n"
            "                  [--dicts DIR] [--trace FILE] [--rows N]\n"
            "                  [--max-ind-range N] [--json] [--no-progress]\n\n"
            "Convert a raw Criteo Terabyte day file (tab separated: label, 13 counts, 26\n"
            "hex categoricals) into DIR/terabyte_processed_test.bin (40 int32 per pair), as\n"
            "the DLRM reference preprocessing does: blanks -> 0, negative counts -> 0,\n"
            "categorical = int(hex) %% max-ind-range, then the id from the feature's\n"
            "dictionary day_fea_dict_<j>.npz.\n\n"
            "  --input FILE         the day file (day_23 for MLPerf)\n"
            "  --output-dir DIR     where the binary goes (created)\n"
            "  --dicts DIR          folder of day_fea_dict_0..25.npz from the training\n"
            "                       preprocessing. Without it ids stay hash %% range: NOT\n"
            "                       the official ids (fine for speed, not for accuracy)\n"
            "  --trace FILE         dlrm_trace_of_aggregated_samples.txt to copy into DIR\n"
            "                       (checked against the rows written)\n"
            "  --rows N             stop after N pairs (89137319 = the MLPerf accuracy half)\n"
            "  --max-ind-range N    default 40000000 (the MLPerf model); 0 = none\n"
            "  --json               print a JSON summary on stdout\n"
            "  --no-progress        no progress line\n\n"
            "Exit status: 0 converted, 1 runtime error, 2 usage error or bad input data.\n");
}

typedef struct progress {
    bool on;
    bool printed;
} progress;

static void on_progress(void *user, uint64_t rows, uint64_t bytes, uint64_t total)
{
    progress *p = user;
    if (!p->on)
        return;
    fprintf(stderr, "\rconvert: %" PRIu64 " rows, %.1f of %.1f GB", rows, (double)bytes / 1e9,
            (double)total / 1e9);
    p->printed = true;
}

int ib_cmd_convert(int argc, char **argv)
{
    enum { OPT_IN = 256, OPT_OUT, OPT_DICTS, OPT_TRACE, OPT_ROWS, OPT_RANGE, OPT_JSON, OPT_NP };
    static const struct option longopts[] = {
        {"input", required_argument, NULL, OPT_IN},
        {"output-dir", required_argument, NULL, OPT_OUT},
        {"dicts", required_argument, NULL, OPT_DICTS},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"rows", required_argument, NULL, OPT_ROWS},
        {"max-ind-range", required_argument, NULL, OPT_RANGE},
        {"json", no_argument, NULL, OPT_JSON},
        {"no-progress", no_argument, NULL, OPT_NP},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "convert", *in = NULL, *out = NULL, *dicts = NULL, *trace = NULL;
    uint64_t rows_max = 0, range = IB_CRITEO_MAX_IND_RANGE;
    bool json = false, no_progress = false;
    optind = 1;
    opterr = 0;
    int c, rc;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_IN: in = optarg; break;
        case OPT_OUT: out = optarg; break;
        case OPT_DICTS: dicts = optarg; break;
        case OPT_TRACE: trace = optarg; break;
        case OPT_ROWS:
            if ((rc = ib_cli_parse_u64(cmd, "--rows", optarg, &rows_max)))
                return rc;
            break;
        case OPT_RANGE:
            if ((rc = ib_cli_parse_u64(cmd, "--max-ind-range", optarg, &range)))
                return rc;
            break;
        case OPT_JSON: json = true; break;
        case OPT_NP: no_progress = true; break;
        case 'h': usage(stdout); return IB_EXIT_OK;
        case ':': return ib_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return ib_cli_unknown_option(cmd, argv[optind - 1], longopts);
        }
    }
    if (optind >= argc)
        return ib_cli_usage_error(cmd, "which format? (criteo-tsv)");
    if (strcmp(argv[optind], "criteo-tsv") != 0)
        return ib_cli_usage_error(cmd, "unknown format '%s' (criteo-tsv)", argv[optind]);
    if (optind + 1 < argc)
        return ib_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    if (!in || !out)
        return ib_cli_usage_error(cmd, "--input and --output-dir are required");
    ib_err err;
    ib_err_clear(&err);
    char bin[4096], tr_out[4096];
    if (ib_path_join(bin, sizeof bin, out, IB_CRITEO_BIN) ||
        ib_path_join(tr_out, sizeof tr_out, out, IB_CRITEO_TRACE))
        return ib_cli_usage_error(cmd, "--output-dir: path too long");
    if ((rc = ib_mkdirs(out, &err))) {
        ib_cli_error(cmd, "%s", err.msg);
        return IB_EXIT_RUNTIME;
    }
    progress pr = {isatty(2) && ib_cli_progress_enabled() && !no_progress, false};
    ib_criteo_tsv_opts o = {.tsv = in, .dict_dir = dicts, .max_ind_range = range,
                            .max_rows = rows_max, .out_bin = bin, .progress = on_progress,
                            .progress_user = &pr};
    uint64_t rows = 0;
    rc = ib_criteo_tsv_convert(&o, &rows, &err);
    if (pr.printed)
        fputc('\n', stderr);
    size_t samples = 0;
    if (!rc && trace) {
        char *text = NULL;
        size_t len = 0;
        rc = ib_file_read_all(trace, 64u << 20, &text, &len, &err);
        if (!rc)
            rc = ib_criteo_trace_check(trace, text, len, rows, &samples, &err);
        if (!rc)
            rc = ib_file_write_all(tr_out, text, len, &err);
        ib_free(text);
    }
    if (rc) {
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        return rc == IB_EFORMAT || rc == IB_ENOTFOUND || rc == IB_EINVAL ? IB_EXIT_USAGE
                                                                         : IB_EXIT_RUNTIME;
    }
    if (json) {
        ib_strbuf sb;
        ib_strbuf_init(&sb);
        ib_jw jw;
        ib_jw_init(&jw, &sb, true);
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "input");
        ib_jw_string(&jw, in);
        ib_jw_key(&jw, "output");
        ib_jw_string(&jw, bin);
        ib_jw_key(&jw, "rows");
        ib_jw_uint(&jw, rows);
        ib_jw_key(&jw, "max_ind_range");
        ib_jw_uint(&jw, range);
        ib_jw_key(&jw, "official_ids");
        ib_jw_bool(&jw, dicts != NULL);
        ib_jw_key(&jw, "trace_samples");
        if (trace)
            ib_jw_uint(&jw, samples);
        else
            ib_jw_null(&jw);
        ib_jw_object_end(&jw);
        printf("%s\n", ib_strbuf_cstr(&sb));
        ib_strbuf_deinit(&sb);
    } else {
        printf("%s: %" PRIu64 " pairs%s\n", bin, rows,
               dicts ? "" : " (no dictionaries: ids are hash % range, not the official ids)");
        if (trace)
            printf("%s: %zu samples\n", tr_out, samples);
        else
            printf("next: put %s next to it (--trace), then inferbench run --benchmark "
                   "dlrm-99 --data %s\n", IB_CRITEO_TRACE, out);
    }
    return IB_EXIT_OK;
}
