/*
 * status.c - names and messages for result codes, the error buffer helpers and
 * the assertion handler. No state.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/common.h"

const char *ib_strerror(int code)
{
    switch (code) {
    case IB_OK: return "success";
    case IB_ENOMEM: return "out of memory";
    case IB_EINVAL: return "invalid argument";
    case IB_EIO: return "input/output error";
    case IB_EFORMAT: return "malformed input";
    case IB_EUNSUPPORTED: return "unsupported feature";
    case IB_EBACKEND: return "backend error";
    case IB_ECANCELED: return "operation canceled";
    case IB_ETIMEOUT: return "timed out";
    case IB_ENOTFOUND: return "not found";
    case IB_ESTATE: return "invalid state";
    default: return "unknown error";
    }
}

const char *ib_err_name(int code)
{
    switch (code) {
    case IB_OK: return "IB_OK";
    case IB_ENOMEM: return "IB_ENOMEM";
    case IB_EINVAL: return "IB_EINVAL";
    case IB_EIO: return "IB_EIO";
    case IB_EFORMAT: return "IB_EFORMAT";
    case IB_EUNSUPPORTED: return "IB_EUNSUPPORTED";
    case IB_EBACKEND: return "IB_EBACKEND";
    case IB_ECANCELED: return "IB_ECANCELED";
    case IB_ETIMEOUT: return "IB_ETIMEOUT";
    case IB_ENOTFOUND: return "IB_ENOTFOUND";
    case IB_ESTATE: return "IB_ESTATE";
    default: return "IB_E?";
    }
}

void ib_err_clear(ib_err *err)
{
    if (err) {
        err->code = IB_OK;
        err->msg[0] = '\0';
    }
}

int ib_err_set(ib_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void ib__assert_fail(const char *expr, const char *file, int line, const char *func)
{
    fprintf(stderr, "%s:%d: %s: assertion failed: %s\n", file, line, func, expr);
    fflush(stderr);
    abort();
}
