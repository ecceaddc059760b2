/*
 * version.c - run-time version strings. The Makefile generates git_rev.h (IB_GIT_REV, the
 * build's git revision) and rebuilds this file when the revision changes.
 */
#include "inferbench/version.h"

#ifdef IB_HAVE_GIT_REV_H
#include "git_rev.h"
#endif
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
