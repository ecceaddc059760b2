/*
 * status.h - result codes and error details shared by every inferbench library.
 *
 * Fallible functions return int: IB_OK (0) or one negative IB_E* code (libuv
 * style). Parsers and loaders also take an optional `ib_err *` that receives a
 * human-readable "file:offset: what went wrong" message; pass NULL to ignore it.
 */
#ifndef INFERBENCH_STATUS_H
#define INFERBENCH_STATUS_H

#include <stddef.h>

#include "export.h"

IB_EXTERN_C_BEGIN

/* Result codes. Never renumber: they are part of the ABI. */
enum ib_status {
    IB_OK = 0,
    IB_ENOMEM = -1,       /* an allocation failed */
    IB_EINVAL = -2,       /* invalid argument or setting */
    IB_EIO = -3,          /* an I/O call failed (errno-derived) */
    IB_EFORMAT = -4,      /* malformed input file or data */
    IB_EUNSUPPORTED = -5, /* valid input using a feature we do not implement */
    IB_EBACKEND = -6,     /* a compute backend reported an error */
    IB_ECANCELED = -7,    /* the operation was aborted by the caller */
    IB_ETIMEOUT = -8,     /* a deadline passed (e.g. a SUT that never answers) */
    IB_ENOTFOUND = -9,    /* a named file, key, tensor or device does not exist */
    IB_ESTATE = -10,      /* called in the wrong state (e.g. run twice) */
};

/* Error detail buffer filled by parsers/loaders; caller storage. */
typedef struct ib_err {
    int code;       /* the IB_E* code that was returned, or IB_OK */
    char msg[1024]; /* NUL-terminated message, "" when none */
} ib_err;

/*
 * ib_strerror - static English text for a result code ("invalid argument").
 * Thread-safety: safe from any thread.
 */
IB_API const char *ib_strerror(int code);

/* ib_err_name - the code's symbolic name ("IB_EINVAL"). Static storage. */
IB_API const char *ib_err_name(int code);

/* ib_err_clear - reset an error buffer (NULL allowed). */
IB_API void ib_err_clear(ib_err *err);

IB_EXTERN_C_END

#endif
