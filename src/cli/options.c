/*
 * options.c - option helpers the subcommands share: the unknown-option message with its
 * nearest spelling, and dtype names.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/textdist.h"
#include "cli/cli.h"
#include "inferbench/report.h"

int ib_cli_unknown_option(const char *cmd, const char *arg, const struct option *longopts)
{
    const char *best = NULL;
    if (arg && arg[0] == '-' && arg[1] == '-') {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
        size_t bd = 4;
        for (const struct option *o = longopts; o && o->name; o++) {
            size_t d = ib_edit_distance(name, o->name);
            if (d < bd || (d == bd && !best && strncmp(o->name, name, strlen(name)) == 0)) {
                bd = d;
                best = o->name;
            }
        }
    }
    if (best)
        return ib_cli_usage_error(cmd, "unknown option '%s' (did you mean '--%s'?)", arg, best);
    return ib_cli_usage_error(cmd, "unknown option '%s'", arg ? arg : "");
}

int ib_cli_parse_dtype(const char *s, enum ib_dtype *out)
{
    static const struct {
        const char *name;
        enum ib_dtype t;
    } map[] = {{"float32", IB_DTYPE_FLOAT32}, {"fp32", IB_DTYPE_FLOAT32},
               {"float16", IB_DTYPE_FLOAT16}, {"fp16", IB_DTYPE_FLOAT16},
               {"int32", IB_DTYPE_INT32},     {"int64", IB_DTYPE_INT64},
               {"int8", IB_DTYPE_INT8},       {"int16", IB_DTYPE_INT16},
               {"uint8", IB_DTYPE_UINT8}};
    for (size_t i = 0; s && i < IB_ARRAY_LEN(map); i++)
        if (strcmp(s, map[i].name) == 0) {
            *out = map[i].t;
            return IB_OK;
        }
    return IB_EINVAL;
}

void ib_cli_report_warnings(const char *cmd, const struct ib_report *rep)
{
    for (size_t i = 0; i < ib_report_warning_count(rep); i++)
        fprintf(stderr, "inferbench %s: warning: %s (--strict: an error)\n", cmd,
                ib_report_warning_at(rep, i));
}
