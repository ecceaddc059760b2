/*
 * version.c - run-time version strings. IB_GIT_REV is passed by the Makefile.
 */
#include "inferbench/version.h"

#ifndef IB_GIT_REV
#define IB_GIT_REV "unknown"
#endif

const char *ib_version_string(void)
{
    return IB_VERSION_STRING;
}

const char *ib_version_git(void)
{
    return IB_GIT_REV;
}
