/*
 * cmd_audit.c - `inferbench audit`: not built yet (see the issue list); it says so
 * and exits with status 1 instead of pretending to work.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int ib_cmd_audit(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: inferbench audit ...\n\nThis command is not implemented yet.\n");
        return IB_EXIT_OK;
    }
    ib_cli_error("audit", "not implemented yet");
    return IB_EXIT_RUNTIME;
}
