/*
 * cli.h - what the inferbench subcommands share: exit codes, the command
 * table entry type, option helpers and terminal progress.
 *
 * Only the CLI decides exit codes (users.md §4.1):
 *   0 every requested result VALID, 1 runtime error, 2 usage or config error,
 *   3 completed but at least one result INVALID or a check failed.
 */
#ifndef IB_CLI_H
#define IB_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "inferbench/runtime.h"

enum ib_exit {
    IB_EXIT_OK = 0,
    IB_EXIT_RUNTIME = 1,
    IB_EXIT_USAGE = 2,
    IB_EXIT_INVALID = 3,
    IB_EXIT_INTERRUPTED = 130, /* SIGINT/SIGTERM: the shell's 128 + SIGINT */
};

typedef int (*ib_cmd_fn)(int argc, char **argv);

typedef struct ib_cmd {
    const char *name;
    ib_cmd_fn fn;
    const char *summary;
} ib_cmd;

/* The subcommands (one cmd_<name>.c each). argv[0] is the command name. */
int ib_cmd_run(int argc, char **argv);
int ib_cmd_model(int argc, char **argv);
int ib_cmd_report(int argc, char **argv);
int ib_cmd_compare(int argc, char **argv);
int ib_cmd_check(int argc, char **argv);
int ib_cmd_audit(int argc, char **argv);
int ib_cmd_package(int argc, char **argv);
int ib_cmd_replay(int argc, char **argv);
int ib_cmd_sysinfo(int argc, char **argv);
int ib_cmd_convert(int argc, char **argv);
int ib_cmd_accuracy(int argc, char **argv);
int ib_cmd_serve(int argc, char **argv);

/* Map a library status code to an exit code (config/format errors -> 2, else 1). */
int ib_cli_exit_for_status(int rc);

/* Print "inferbench <cmd>: <message>" to stderr. */
void ib_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Usage error: print message and "Try 'inferbench <cmd> --help'." Returns IB_EXIT_USAGE. */
int ib_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An unknown option: "unknown option '--benchmrk' (did you mean '--benchmark'?)" naming the
 * closest long option of the table, then the --help hint. Returns IB_EXIT_USAGE. */
struct option;
int ib_cli_unknown_option(const char *cmd, const char *arg, const struct option *longopts);

/* The runs a report skipped (unfinished), one "warning:" line each on stderr. */
struct ib_report;
void ib_cli_report_warnings(const char *cmd, const struct ib_report *rep);

/* A dtype name as the options spell it (float32/fp32, float16/fp16, int32, int64, int8,
 * int16, uint8). IB_EINVAL when unknown. */
int ib_cli_parse_dtype(const char *s, enum ib_dtype *out);

/* Parse a non-negative decimal option value into *out; a usage error naming opt otherwise
 * (returns IB_EXIT_USAGE, or IB_EXIT_OK). */
int ib_cli_parse_u64(const char *cmd, const char *opt, const char *v, uint64_t *out);

/* Install the SIGINT/SIGTERM handlers of a long run (signals.c) and return the stop flag
 * they set: pass it to the harness or loadgen. A second signal exits at once with
 * IB_EXIT_INTERRUPTED. */
const _Atomic int *ib_cli_stop_flag_install(void);
/* True once a stop signal arrived. */
bool ib_cli_stop_requested(void);

/* True unless IB_NO_PROGRESS is set (--no-progress and --quiet are the commands' own). */
bool ib_cli_progress_enabled(void);

#endif
