/*
 * cmd_compare.c - `inferbench compare A B`: the comparison of two systems as a
 * terminal table (A/B, B/A and A's performance per cost vs B), with the same
 * disclosures as the HTML report. A and B are results trees or system folders;
 * --system-a/--system-b pick a system when a tree holds several.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "inferbench/base.h"
#include "inferbench/report.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inferbench compare A B [--prices FILE] [--published FILE]\n"
            "                          [--system-a NAME] [--system-b NAME]\n"
            "                          [--rules-version VER] [--json]\n"
            "\n"
            "Compare system A with system B (the reference: ratios are A/B) on every benchmark\n"
            "and scenario both have, in a terminal table. A and B are results trees or system\n"
            "folders (e.g. closed/Dell/results/R7525_A30x3_TRT or an inferbench output folder).\n"
            "\n"
            "Options:\n"
            "  -p, --prices FILE       CSV system,price,currency,date,source: adds A's\n"
            "                          performance per cost relative to B\n"
            "      --published FILE    CSV system,result_id,retrieved,source of published results\n"
            "      --system-a NAME     the system of A when A holds several (also --system-b)\n"
            "      --rules-version VER rules version when the logs do not say it\n"
            "      --json              print the comparison as summary.json on stdout\n"
            "      --strict            an unfinished run is an error (default: skipped with a\n"
            "                          warning; the newest finished run_N is used)\n"
            "  -h, --help              show this help\n"
            "\n"
            "Exit status: 0 every compared result VALID; 1 runtime error; 2 usage or input error;\n"
            "3 a compared result is INVALID.\n");
}

enum { OPT_PUBLISHED = 256, OPT_RULES, OPT_JSON, OPT_SYS_A, OPT_SYS_B, OPT_STRICT };

/* The one system added by a tree, or the named one. */
static int pick(ib_report *rep, size_t from, size_t to, const char *name, const char *tree,
                size_t *out)
{
    if (name) {
        for (size_t i = 0; i < ib_report_system_count(rep); i++)
            if (!strcmp(ib_report_system_at(rep, i)->id, name)) {
                *out = i;
                return IB_EXIT_OK;
            }
        return ib_cli_usage_error("compare", "system '%s' is not in the given trees", name);
    }
    if (to - from == 1) {
        *out = from;
        return IB_EXIT_OK;
    }
    fprintf(stderr, "inferbench compare: %s holds %zu systems; choose one with --system-a/-b:\n",
            tree, to - from);
    for (size_t i = from; i < to; i++)
        fprintf(stderr, "  %s\n", ib_report_system_at(rep, i)->id);
    return IB_EXIT_USAGE;
}

int ib_cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"prices", required_argument, NULL, 'p'},
        {"published", required_argument, NULL, OPT_PUBLISHED},
        {"rules-version", required_argument, NULL, OPT_RULES},
        {"system-a", required_argument, NULL, OPT_SYS_A},
        {"system-b", required_argument, NULL, OPT_SYS_B},
        {"json", no_argument, NULL, OPT_JSON},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *prices = NULL, *published = NULL, *sys_a = NULL, *sys_b = NULL;
    ib_report_options opts;
    ib_report_options_defaults(&opts);
    bool json = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":p:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            prices = optarg;
            break;
        case OPT_PUBLISHED:
            published = optarg;
            break;
        case OPT_RULES:
            opts.rules_version = optarg;
            break;
        case OPT_SYS_A:
            sys_a = optarg;
            break;
        case OPT_SYS_B:
            sys_b = optarg;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_STRICT:
            opts.strict = true;
            break;
        case 'h':
            usage(stdout);
            return IB_EXIT_OK;
        case ':':
            return ib_cli_usage_error("compare", "option '%s' needs a value", argv[optind - 1]);
        default:
            return ib_cli_unknown_option("compare", argv[optind - 1], longopts);
        }
    }
    if (argc - optind != 2)
        return ib_cli_usage_error("compare", "expected two results trees A and B, got %d",
                                  argc - optind);
    const char *ta = argv[optind], *tb = argv[optind + 1];
    ib_err err;
    ib_err_clear(&err);
    ib_report *rep = NULL;
    int rc = ib_report_create(&opts, &rep, &err);
    size_t a0 = 0, a1 = 0, b0 = 0, b1 = 0, a = 0, b = 0;
    if (rc == IB_OK) rc = ib_report_add_tree(rep, ta, &err);
    a1 = rep ? ib_report_system_count(rep) : 0;
    b0 = a1;
    if (rc == IB_OK && strcmp(ta, tb) != 0)
        rc = ib_report_add_tree(rep, tb, &err);
    else
        b0 = a0;
    b1 = rep ? ib_report_system_count(rep) : 0;
    if (rep) ib_cli_report_warnings("compare", rep);
    if (rc == IB_OK && prices) rc = ib_report_load_prices(rep, prices, &err);
    if (rc == IB_OK && published) rc = ib_report_load_published(rep, published, &err);
    if (rc != IB_OK) {
        ib_cli_error("compare", "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        ib_report_destroy(rep);
        ib_report_shutdown();
        return ib_cli_exit_for_status(rc);
    }
    int ex = pick(rep, a0, a1, sys_a, ta, &a);
    if (ex == IB_EXIT_OK) ex = pick(rep, b0, b1, sys_b, tb, &b);
    if (ex == IB_EXIT_OK && a == b)
        ex = ib_cli_usage_error("compare", "A and B are the same system (%s)",
                                ib_report_system_at(rep, a)->id);
    if (ex != IB_EXIT_OK) {
        ib_report_destroy(rep);
        ib_report_shutdown();
        return ex;
    }
    rc = ib_report_set_baseline(rep, ib_report_system_at(rep, b)->id, &err);
    if (rc == IB_OK) rc = ib_report_compute(rep, &err);
    char *text = NULL;
    if (rc == IB_OK)
        rc = json ? ib_report_summary_json(rep, &text, &err)
                  : ib_report_compare_table(rep, a, b, &text, &err);
    if (rc != IB_OK) {
        ib_cli_error("compare", "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        ib_report_destroy(rep);
        ib_report_shutdown();
        return ib_cli_exit_for_status(rc);
    }
    fputs(text, stdout);
    ib_free(text);
    bool invalid = false;
    for (size_t i = 0; i < ib_report_result_count(rep); i++) {
        const ib_report_result *r = ib_report_result_at(rep, i);
        if ((r->system == a || r->system == b) && r->run.validity != IB_REPORT_VALIDITY_VALID)
            invalid = true;
    }
    ib_report_destroy(rep);
    ib_report_shutdown();
    return invalid ? IB_EXIT_INVALID : IB_EXIT_OK;
}
