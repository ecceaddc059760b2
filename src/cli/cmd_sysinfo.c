/*
 * cmd_sysinfo.c - `inferbench sysinfo`: the MLPerf system description JSON of this machine
 * (src/harness/sysinfo.h) on stdout or into a file, with the submission metadata the
 * machine cannot know given as options. Fields nothing revealed stay "" and are listed on
 * stderr, since the checker wants several of them filled.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "harness/sysinfo.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: inferbench sysinfo [--output FILE] [--system-name NAME] [--submitter S]\n"
               "                          [--division closed|open] [--status S]\n"
               "                          [--system-type datacenter|edge] [--quiet]\n\n"
               "Write the MLPerf system description JSON (systems/<system>.json) of this\n"
               "machine: CPU (/proc/cpuinfo, sysfs), memory, disks, OS, accelerators\n"
               "(nvidia-smi when present) and the software stack. Fields the machine does not\n"
               "reveal are left \"\" and listed on stderr; fill them by hand.\n\n"
               "  --output FILE      write there (atomically) instead of stdout\n"
               "  --system-name ...  submission metadata the machine cannot know\n"
               "  --quiet, -q        do not list the empty fields\n\n"
               "Environment: IB_NVIDIA_SMI names the nvidia-smi program (\"\" skips it).\n"
               "Exit status: 0 written, 1 runtime error, 2 usage error.\n");
}

int ib_cmd_sysinfo(int argc, char **argv)
{
    enum { OPT_OUT = 256, OPT_NAME, OPT_SUB, OPT_DIV, OPT_STATUS, OPT_TYPE };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, OPT_OUT},
        {"system-name", required_argument, NULL, OPT_NAME},
        {"submitter", required_argument, NULL, OPT_SUB},
        {"division", required_argument, NULL, OPT_DIV},
        {"status", required_argument, NULL, OPT_STATUS},
        {"system-type", required_argument, NULL, OPT_TYPE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "sysinfo", *output = NULL;
    ib_sysinfo_opts o;
    memset(&o, 0, sizeof o);
    o.nvidia_smi = getenv("IB_NVIDIA_SMI");
    o.root = getenv("IB_SYSINFO_ROOT"); /* tests: a fake /proc, /sys, /etc tree */
    bool quiet = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_OUT: output = optarg; break;
        case OPT_NAME: o.system_name = optarg; break;
        case OPT_SUB: o.submitter = optarg; break;
        case OPT_DIV: o.division = optarg; break;
        case OPT_STATUS: o.status = optarg; break;
        case OPT_TYPE: o.system_type = optarg; break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return IB_EXIT_OK;
        case ':': return ib_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return ib_cli_unknown_option(cmd, argv[optind - 1], longopts);
        }
    }
    if (optind < argc)
        return ib_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (o.division && strcmp(o.division, "closed") && strcmp(o.division, "open"))
        return ib_cli_usage_error(cmd, "--division: '%s' is not closed or open", o.division);
    ib_strbuf js, missing;
    ib_strbuf_init(&js);
    ib_strbuf_init(&missing);
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_sysinfo_json(&o, &js, &missing, &err);
    if (rc == IB_OK) {
        if (output)
            rc = ib_file_write_all(output, ib_strbuf_cstr(&js), js.len, &err);
        else if (fwrite(ib_strbuf_cstr(&js), 1, js.len, stdout) != js.len)
            rc = ib_err_set(&err, IB_EIO, "stdout: write failed");
    }
    if (rc)
        ib_cli_error(cmd, "%s", err.msg[0] ? err.msg : ib_strerror(rc));
    else if (!quiet && missing.len)
        fprintf(stderr, "inferbench sysinfo: left empty (not found on this machine): %s\n",
                ib_strbuf_cstr(&missing));
    ib_strbuf_deinit(&js);
    ib_strbuf_deinit(&missing);
    return rc ? IB_EXIT_RUNTIME : IB_EXIT_OK;
}
