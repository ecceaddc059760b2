/*
 * cmd_check.c - `inferbench check TREE`: the results checker (include/inferbench/compliance.h).
 *
 * Prints one line per problem, "file: rule: what is wrong; fix: what to do" (warnings carry
 * "(warning)" after the rule), then a count; --json prints the report as JSON instead.
 * Exit status (users.md §4.1): 0 no errors (warnings allowed), 3 errors found, 2 usage
 * error or not a results tree, 1 runtime error.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "inferbench/base.h"
#include "inferbench/compliance.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inferbench check TREE [--version v1.1|current] [--json] [--submitter NAME]\n"
            "                       [--skip-compliance] [--no-recheck] [--quiet]\n\n"
            "Check a results/submission tree as the official MLPerf submission checker does.\n"
            "TREE is the folder that holds closed/ or open/ (e.g. .../mlperf-inference-v1.1).\n\n"
            "  --version V        rules to apply: v1.1 (default) or current (v6.1)\n"
            "  --json             print the report as JSON on stdout\n"
            "  --submitter NAME   check only this submitter folder\n"
            "  --skip-compliance  do not check the compliance/ folders\n"
            "  --no-recheck       do not recompute the verify_*.txt verdicts from the logs\n"
            "  -q, --quiet        print only errors and the final count\n"
            "  -h, --help         this help\n\n"
            "Each problem is printed as 'file: rule: what is wrong; fix: what to do'.\n"
            "Exit status: 0 no errors (warnings allowed), 3 errors found, 2 usage error,\n"
            "1 runtime error. Rules are listed in docs/check.md.\n");
}

static void print_text(const ib_check_report *r, bool quiet)
{
    size_t n = ib_check_report_problem_count(r);
    for (size_t i = 0; i < n; i++) {
        const ib_check_problem *p = ib_check_report_problem(r, i);
        if (quiet && p->severity != IB_CHECK_ERROR)
            continue;
        printf("%s: %s%s: %s; fix: %s\n", p->file, p->rule,
               p->severity == IB_CHECK_ERROR ? "" : " (warning)", p->message, p->fix);
    }
    size_t nres = ib_check_report_result_count(r), valid = 0;
    for (size_t i = 0; i < nres; i++)
        valid += ib_check_report_result(r, i)->valid;
    size_t ne = ib_check_report_error_count(r), nw = ib_check_report_warning_count(r);
    printf("inferbench check: %zu result%s checked, %zu without errors; %zu error%s, %zu "
           "warning%s\n",
           nres, nres == 1 ? "" : "s", valid, ne, ne == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
    printf("SUMMARY: %s\n", ne ? "submission has errors" : "submission looks OK");
}

int ib_cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"version", required_argument, NULL, 'V'},
        {"json", no_argument, NULL, 'j'},
        {"submitter", required_argument, NULL, 's'},
        {"skip-compliance", no_argument, NULL, 'S'},
        {"no-recheck", no_argument, NULL, 'R'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    ib_check_options opts;
    ib_check_options_defaults(&opts);
    bool json = false, quiet = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'V':
            if (ib_check_version_parse(optarg, &opts.version) != IB_OK)
                return ib_cli_usage_error("check", "unknown --version '%s' (use v1.1 or current)",
                                          optarg);
            break;
        case 'j': json = true; break;
        case 's': opts.submitter = optarg; break;
        case 'S': opts.skip_compliance = true; break;
        case 'R': opts.recheck_compliance = false; break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return IB_EXIT_OK;
        case ':':
            return ib_cli_usage_error("check", "option '%s' needs a value", argv[optind - 1]);
        default:
            return ib_cli_unknown_option("check", argv[optind - 1], longopts);
        }
    }
    if (optind >= argc)
        return ib_cli_usage_error("check", "missing TREE (the folder that holds closed/ or open/)");
    if (optind + 1 < argc)
        return ib_cli_usage_error("check", "one TREE only, got '%s' and '%s'", argv[optind],
                                  argv[optind + 1]);
    const char *tree = argv[optind];
    ib_check_report *rep = NULL;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_check_tree(tree, &opts, &rep, &err);
    if (rc == IB_EINVAL || rc == IB_ENOTFOUND) {
        ib_cli_error("check", "%s", err.msg);
        return IB_EXIT_USAGE;
    }
    if (rc) {
        ib_cli_error("check", "%s", err.msg[0] ? err.msg : ib_strerror(rc));
        return IB_EXIT_RUNTIME;
    }
    if (json) {
        char *text = NULL;
        size_t len = 0;
        if (ib_check_report_json(rep, &text, &len) != IB_OK) {
            ib_check_report_destroy(rep);
            ib_cli_error("check", "out of memory writing the JSON report");
            return IB_EXIT_RUNTIME;
        }
        fwrite(text, 1, len, stdout);
        ib_free(text);
    } else {
        print_text(rep, quiet);
    }
    int code = ib_check_report_error_count(rep) ? IB_EXIT_INVALID : IB_EXIT_OK;
    ib_check_report_destroy(rep);
    if (fflush(stdout) != 0)
        return IB_EXIT_RUNTIME;
    return code;
}
