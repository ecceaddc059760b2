/*
 * main.c - the inferbench command-line entry point: a table of subcommands
 * (git style), global --help/--version, and `inferbench help <cmd>`.
 * Each subcommand lives in its own cmd_<name>.c and owns its options.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/textdist.h"
#include "cli/cli.h"
#include "inferbench/status.h"
#include "inferbench/version.h"

static const ib_cmd g_cmds[] = {
    {"run", ib_cmd_run, "run a benchmark (or the null SUT) under the load generator"},
    {"model", ib_cmd_model, "inspect or run an ONNX model (info, run)"},
    {"report", ib_cmd_report, "build a comparison report (CSV, JSON, charts, HTML) from results"},
    {"compare", ib_cmd_compare, "compare two results trees in a terminal table"},
    {"check", ib_cmd_check, "check a results/submission tree like the official checker"},
    {"audit", ib_cmd_audit, "run a compliance test (TEST01, TEST04, TEST05) and verify it"},
    {"package", ib_cmd_package, "lay out runs as an MLPerf submission tree"},
    {"replay", ib_cmd_replay, "re-derive the LoadGen sample order of published runs"},
    {"sysinfo", ib_cmd_sysinfo, "write the system description JSON of this machine"},
    {"accuracy", ib_cmd_accuracy, "score an mlperf_log_accuracy.json as the official script does"},
    {"serve", ib_cmd_serve, "serve a benchmark's model over the KServe v2 protocol (HTTP)"},
    {"convert", ib_cmd_convert, "convert a raw dataset into the layout a benchmark reads "
                                "(criteo-tsv)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: inferbench [--version] [--help] <command> [<args>]\n\n"
               "MLPerf Inference datacenter benchmarks, the load generator and reports.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < sizeof g_cmds / sizeof g_cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", g_cmds[i].name, g_cmds[i].summary);
    fprintf(f, "\n'inferbench help <command>' or 'inferbench <command> --help' shows a command's "
               "options.\nExit codes: 0 all results VALID, 1 runtime error, 2 usage or config "
               "error,\n            3 ran but a result is INVALID or a check failed.\n");
}

static const ib_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof g_cmds / sizeof g_cmds[0]; i++)
        if (strcmp(g_cmds[i].name, name) == 0)
            return &g_cmds[i];
    return NULL;
}

int ib_cli_exit_for_status(int rc)
{
    switch (rc) {
    case IB_OK: return IB_EXIT_OK;
    case IB_EINVAL:
    case IB_EFORMAT:
    case IB_ENOTFOUND:
    case IB_EUNSUPPORTED: return IB_EXIT_USAGE;
    default: return IB_EXIT_RUNTIME;
    }
}

void ib_cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "inferbench %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int ib_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "inferbench %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'inferbench %s --help'.\n", cmd);
    return IB_EXIT_USAGE;
}

int ib_cli_parse_u64(const char *cmd, const char *opt, const char *v, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    if (!v || !*v || *v == '-')
        return ib_cli_usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, v ? v : "");
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end)
        return ib_cli_usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, v);
    *out = (uint64_t)x;
    return IB_EXIT_OK;
}

bool ib_cli_progress_enabled(void)
{
    const char *np = getenv("IB_NO_PROGRESS");
    return !(np && *np); /* off a terminal too: progress.c prints plain lines there */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return IB_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        usage(stdout);
        return IB_EXIT_OK;
    }
    if (!strcmp(a, "--version") || !strcmp(a, "version")) {
        printf("inferbench %s (git %s), LoadGen-compatible %s\n", ib_version_string(),
               ib_version_git(), IB_LOADGEN_COMPAT_VERSION);
        return IB_EXIT_OK;
    }
    if (!strcmp(a, "help")) {
        if (argc < 3) {
            usage(stdout);
            return IB_EXIT_OK;
        }
        const ib_cmd *c = find_cmd(argv[2]);
        if (!c)
            return ib_cli_usage_error("help", "unknown command '%s' (see 'inferbench --help')",
                                      argv[2]);
        char help_flag[] = "--help";
        char *hargv[] = {argv[2], help_flag, NULL};
        return c->fn(2, hargv);
    }
    const ib_cmd *c = find_cmd(a);
    if (!c) {
        const char *names[sizeof g_cmds / sizeof g_cmds[0]];
        for (size_t i = 0; i < sizeof g_cmds / sizeof g_cmds[0]; i++)
            names[i] = g_cmds[i].name;
        const char *near = ib_closest(a, names, sizeof names / sizeof names[0], 3);
        if (near)
            fprintf(stderr, "inferbench: '%s' is not a command; did you mean '%s'? See "
                            "'inferbench --help'.\n",
                    a, near);
        else
            fprintf(stderr, "inferbench: '%s' is not a command. See 'inferbench --help'.\n", a);
        return IB_EXIT_USAGE;
    }
    return c->fn(argc - 1, argv + 1);
}
