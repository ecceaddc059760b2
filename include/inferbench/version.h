/*
 * version.h - inferbench version numbers, at compile time and at run time.
 */
#ifndef INFERBENCH_VERSION_H
#define INFERBENCH_VERSION_H

#include "export.h"

#define IB_VERSION_MAJOR 0
#define IB_VERSION_MINOR 1
#define IB_VERSION_PATCH 0
#define IB_VERSION_STRING "0.1.0"

/* The LoadGen behaviour this library reproduces (see docs/loadgen.md). */
#define IB_LOADGEN_COMPAT_VERSION "6.0.17"

IB_EXTERN_C_BEGIN

/* ib_version_string - "0.1.0" of the library actually linked. */
IB_API const char *ib_version_string(void);

/* ib_version_git - the git revision the library was built from, or "unknown". */
IB_API const char *ib_version_git(void);

IB_EXTERN_C_END

#endif
