/*
 * common.h - the few macros every module uses: IB_ASSERT for programmer
 * errors, array length, min/max, likely/unlikely, unused. Kept tiny on purpose.
 */
#ifndef IB_BASE_COMMON_H
#define IB_BASE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/base.h"
#include "inferbench/status.h"

#define IB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define IB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define IB_MAX(a, b) ((a) > (b) ? (a) : (b))
#define IB_UNUSED(x) ((void)(x))

#if defined(__GNUC__) || defined(__clang__)
#define IB_LIKELY(x) __builtin_expect(!!(x), 1)
#define IB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define IB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define IB_NORETURN __attribute__((noreturn))
#else
#define IB_LIKELY(x) (x)
#define IB_UNLIKELY(x) (x)
#define IB_PRINTF(f, a)
#define IB_NORETURN
#endif

/* Abort with file:line:func for broken invariants (never for bad input). */
IB_NORETURN void ib__assert_fail(const char *expr, const char *file, int line, const char *func);
#define IB_ASSERT(expr)                                                                            \
    ((expr) ? (void)0 : ib__assert_fail(#expr, __FILE__, __LINE__, __func__))

/* Fill an optional error buffer and return the code (err may be NULL). */
int ib_err_set(ib_err *err, int code, const char *fmt, ...) IB_PRINTF(3, 4);

#endif
