/*
 * cmd_report.c - `inferbench report TREE... --output DIR`: read results trees
 * (official MLPerf submission trees or inferbench run folders), relate them to a
 * baseline, prices and TCO inputs, and write summary.csv, summary.json, charts and
 * a self-contained report.html. Exit 3 when the report was written but a result
 * is INVALID (users.md §4.1).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "inferbench/base.h"
#include "inferbench/report.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: inferbench report TREE... --output DIR [--prices FILE] [--baseline SYSTEM]\n"
        "                         [--tco FILE] [--published FILE] [--rules-version VER]\n"
        "                         [--title TEXT] [--date DATE] [--json] [-q]\n"
        "\n"
        "Compare the MLPerf Inference results found in TREE (official submission trees at any\n"
        "level, e.g. closed/<submitter>, or inferbench output folders <out>/<system>/...):\n"
        "relative performance vs a baseline, performance per cost, cost per million\n"
        "inferences and perf/W (MLPerf power logs only), with the MLCommons disclosures.\n"
        "\n"
        "Options:\n"
        "  -o, --output DIR        write summary.csv, summary.json, charts/*.{svg,png} and\n"
        "                          report.html into DIR (required)\n"
        "  -p, --prices FILE       CSV with header system,price,currency,date,source; prices\n"
        "                          may be relative units (currency 'relative', e.g. 1.0, 1.423)\n"
        "  -b, --baseline SYSTEM   system id to normalise to (default: the cheapest priced\n"
        "                          system, else the first system found)\n"
        "  -t, --tco FILE          TCO assumptions, 'key = value' with optional [system]\n"
        "                          sections: amortization_years, utilization, pue,\n"
        "                          energy_cost_per_kwh, annual_opex, hourly_cost, power_w,\n"
        "                          power_source (tdp/nameplate is refused), currency\n"
        "      --published FILE    CSV system,result_id,retrieved,source naming published\n"
        "                          MLCommons results; every other result is 'unverified'\n"
        "      --rules-version VER MLPerf rules version (v1.1, v4.1...) when a log does not\n"
        "                          say it (summary-only trees); overrides the logs\n"
        "      --title TEXT        report title\n"
        "      --date DATE         date printed as the generation date (default: today, UTC)\n"
        "      --json              print summary.json on stdout\n"
        "      --strict            an unfinished run in a tree is an error (default: skipped\n"
        "                          with a warning; the newest finished run_N is used)\n"
        "  -q, --quiet             print nothing on success\n"
        "  -h, --help              show this help\n"
        "\n"
        "Exit status: 0 report written and every result VALID; 1 runtime error; 2 usage or\n"
        "input error (missing file, malformed log or price file); 3 report written but at\n"
        "least one result is INVALID.\n");
}

enum { OPT_PUBLISHED = 256, OPT_RULES, OPT_TITLE, OPT_DATE, OPT_JSON, OPT_STRICT };

int ib_cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"prices", required_argument, NULL, 'p'},
        {"baseline", required_argument, NULL, 'b'},
        {"tco", required_argument, NULL, 't'},
        {"published", required_argument, NULL, OPT_PUBLISHED},
        {"rules-version", required_argument, NULL, OPT_RULES},
        {"title", required_argument, NULL, OPT_TITLE},
        {"date", required_argument, NULL, OPT_DATE},
        {"json", no_argument, NULL, OPT_JSON},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL, *prices = NULL, *tco = NULL, *published = NULL;
    ib_report_options opts;
    ib_report_options_defaults(&opts);
    bool json = false, quiet = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:p:b:t:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'p':
            prices = optarg;
            break;
        case 'b':
            opts.baseline = optarg;
            break;
        case 't':
            tco = optarg;
            break;
        case OPT_PUBLISHED:
            published = optarg;
            break;
        case OPT_RULES:
            opts.rules_version = optarg;
            break;
        case OPT_TITLE:
            opts.title = optarg;
            break;
        case OPT_DATE:
            opts.generated = optarg;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_STRICT:
            opts.strict = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            usage(stdout);
            return IB_EXIT_OK;
        case ':':
            return ib_cli_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
        default:
            return ib_cli_unknown_option("report", argv[optind - 1], longopts);
        }
    }
    if (optind >= argc) return ib_cli_usage_error("report", "no results tree given");
    if (!output) return ib_cli_usage_error("report", "--output DIR is required");
    ib_err err;
    ib_err_clear(&err);
    ib_report *rep = NULL;
    int rc = ib_report_create(&opts, &rep, &err);
    for (int i = optind; rc == IB_OK && i < argc; i++)
        rc = ib_report_add_tree(rep, argv[i], &err);
    if (rep) ib_cli_report_warnings("report", rep);
    if (rc == IB_OK && prices) rc = ib_report_load_prices(rep, prices, &err);
    if (rc == IB_OK && tco) rc = ib_report_load_tco(rep, tco, &err);
    if (rc == IB_OK && published) rc = ib_report_load_published(rep, published, &err);
    if (rc == IB_OK) rc = ib_report_compute(rep, &err);
    if (rc == IB_OK) rc = ib_report_write(rep, output, &err);
    if (rc == IB_OK && json) {
        char *text = NULL;
        rc = ib_report_summary_json(rep, &text, &err);
        if (rc == IB_OK) fputs(text, stdout);
        ib_free(text);
    }
    if (rc != IB_OK) {
        ib_cli_error("report", "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        ib_report_destroy(rep);
        ib_report_shutdown();
        return ib_cli_exit_for_status(rc);
    }
    size_t invalid = ib_report_invalid_count(rep);
    if (!quiet && !json) {
        printf("wrote %s/report.html, summary.csv, summary.json and charts/: %zu results of %zu "
               "systems",
               output, ib_report_result_count(rep), ib_report_system_count(rep));
        size_t b = ib_report_baseline(rep);
        if (b != (size_t)-1) printf(", baseline %s", ib_report_system_at(rep, b)->id);
        printf("\n");
    }
    if (invalid)
        fprintf(stderr, "inferbench report: %zu result(s) are not VALID (listed, not compared)\n",
                invalid);
    ib_report_destroy(rep);
    ib_report_shutdown();
    return invalid ? IB_EXIT_INVALID : IB_EXIT_OK;
}
