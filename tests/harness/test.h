/*
 * test.h - the inferbench test harness (libuv-shaped).
 *
 *   TEST(name) { ASSERT_EQ(1 + 1, 2); }
 *   TEST_TIMEOUT(slow_name, 300) { ... }      // custom timeout in seconds
 *   TEST_SKIP("no GPU found");                // exits with code 7
 *
 * Every test runs in its own forked process with a timeout, so a crash or a
 * hang fails one test and not the suite. Asserts print both sides and the
 * location, then exit the test process with status 1.
 *
 * The test table is generated at build time by scanning tests/ for TEST(...)
 * and TEST_TIMEOUT(...), so adding a test needs no registration.
 */
#ifndef IB_TEST_H
#define IB_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inferbench/status.h"

#define TEST(name)                                                                                 \
    void ib_test_##name(void);                                                                     \
    void ib_test_##name(void)
#define TEST_TIMEOUT(name, seconds) TEST(name)

#define IB_TEST_EXIT_SKIP 7

void ib_test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
void ib_test_skip(const char *reason) __attribute__((noreturn));

/* Paths the harness exports to tests (set from the environment by the runner). */
const char *ib_test_bin_dir(void);    /* build/<variant>/bin: the CLI lives here */
const char *ib_test_src_dir(void);    /* repository root */
const char *ib_test_shared_dir(void); /* ../shared (golden, data, reference) */
/* A fresh empty directory for this test (removed after the run unless IB_TEST_KEEP=1). */
const char *ib_test_tmpdir(void);
/* Run a shell command, return its exit status (or -1); output goes to the test log. */
int ib_test_system(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The whole file at path (NUL-terminated; free with ib_free), or the test fails naming the
 * path and why; *len (may be NULL) receives its size. */
char *ib__test_slurp(const char *file, int line, const char *path, size_t *len);
#define ib_test_slurp(path) ib__test_slurp(__FILE__, __LINE__, (path), NULL)
#define ib_test_slurp_n(path, len) ib__test_slurp(__FILE__, __LINE__, (path), (len))
/* The same, but NULL when the file cannot be read (for tests of absence). */
char *ib_test_read(const char *path);

#define TEST_SKIP(reason) ib_test_skip(reason)

#define ASSERT_TRUE(c)                                                                             \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ib_test_fail(__FILE__, __LINE__, "ASSERT_TRUE(%s) failed", #c);                        \
    } while (0)
#define ASSERT_FALSE(c)                                                                            \
    do {                                                                                           \
        if (c)                                                                                     \
            ib_test_fail(__FILE__, __LINE__, "ASSERT_FALSE(%s) failed", #c);                       \
    } while (0)

#define IB__ASSERT_CMP(T, fmt, a, op, b)                                                           \
    do {                                                                                           \
        T ib__a = (T)(a);                                                                          \
        T ib__b = (T)(b);                                                                          \
        if (!(ib__a op ib__b))                                                                     \
            ib_test_fail(__FILE__, __LINE__, "%s %s %s: %" fmt " vs %" fmt, #a, #op, #b, ib__a,    \
                         ib__b);                                                                   \
    } while (0)

/* Integer comparisons (signed and unsigned are printed as such). */
#define ASSERT_INT_EQ(a, b) IB__ASSERT_CMP(intmax_t, PRIdMAX, a, ==, b)
#define ASSERT_INT_NE(a, b) IB__ASSERT_CMP(intmax_t, PRIdMAX, a, !=, b)
#define ASSERT_INT_LT(a, b) IB__ASSERT_CMP(intmax_t, PRIdMAX, a, <, b)
#define ASSERT_INT_LE(a, b) IB__ASSERT_CMP(intmax_t, PRIdMAX, a, <=, b)
#define ASSERT_INT_GT(a, b) IB__ASSERT_CMP(intmax_t, PRIdMAX, a, >, b)
#define ASSERT_INT_GE(a, b) IB__ASSERT_CMP(intmax_t, PRIdMAX, a, >=, b)
#define ASSERT_UINT_EQ(a, b) IB__ASSERT_CMP(uintmax_t, PRIuMAX, a, ==, b)
#define ASSERT_UINT_LE(a, b) IB__ASSERT_CMP(uintmax_t, PRIuMAX, a, <=, b)
#define ASSERT_UINT_GE(a, b) IB__ASSERT_CMP(uintmax_t, PRIuMAX, a, >=, b)
#define ASSERT_DBL_EQ(a, b) IB__ASSERT_CMP(double, ".17g", a, ==, b)
#define ASSERT_DBL_LT(a, b) IB__ASSERT_CMP(double, ".17g", a, <, b)
#define ASSERT_DBL_LE(a, b) IB__ASSERT_CMP(double, ".17g", a, <=, b)
#define ASSERT_DBL_GE(a, b) IB__ASSERT_CMP(double, ".17g", a, >=, b)
#define ASSERT_PTR_EQ(a, b) IB__ASSERT_CMP(const void *, "p", a, ==, b)

/* Generic equality, dispatched on the type of the first argument (C11 _Generic). */
#define ASSERT_EQ(a, b)                                                                            \
    _Generic((a), float                                                                            \
             : ib__assert_eq_d, double                                                             \
             : ib__assert_eq_d, char *                                                             \
             : ib__assert_eq_s, const char *                                                       \
             : ib__assert_eq_s, unsigned char                                                      \
             : ib__assert_eq_u, unsigned short                                                     \
             : ib__assert_eq_u, unsigned int                                                       \
             : ib__assert_eq_u, unsigned long                                                      \
             : ib__assert_eq_u, unsigned long long                                                 \
             : ib__assert_eq_u, default                                                            \
             : ib__assert_eq_i)(__FILE__, __LINE__, #a, #b, (a), (b))

void ib__assert_eq_i(const char *f, int l, const char *sa, const char *sb, intmax_t a, intmax_t b);
void ib__assert_eq_u(const char *f, int l, const char *sa, const char *sb, uintmax_t a,
                     uintmax_t b);
void ib__assert_eq_d(const char *f, int l, const char *sa, const char *sb, double a, double b);
void ib__assert_eq_s(const char *f, int l, const char *sa, const char *sb, const char *a,
                     const char *b);

#define ASSERT_STR_EQ(a, b) ib__assert_eq_s(__FILE__, __LINE__, #a, #b, (a), (b))
#define ASSERT_STR_CONTAINS(hay, needle)                                                           \
    do {                                                                                           \
        const char *ib__h = (hay), *ib__n = (needle);                                              \
        if (!ib__h || !strstr(ib__h, ib__n))                                                       \
            ib_test_fail(__FILE__, __LINE__, "%s does not contain \"%s\": \"%s\"", #hay, ib__n,    \
                         ib__h ? ib__h : "(null)");                                                \
    } while (0)

#define ASSERT_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double ib__a = (double)(a), ib__b = (double)(b), ib__t = (double)(tol);                    \
        if (!(fabs(ib__a - ib__b) <= ib__t))                                                       \
            ib_test_fail(__FILE__, __LINE__, "|%s - %s| <= %s: %.9g vs %.9g (diff %.3g)", #a, #b,  \
                         #tol, ib__a, ib__b, fabs(ib__a - ib__b));                                 \
    } while (0)

#define ASSERT_NULL(p) ASSERT_PTR_EQ(p, NULL)
#define ASSERT_NOT_NULL(p)                                                                         \
    do {                                                                                           \
        if ((p) == NULL)                                                                           \
            ib_test_fail(__FILE__, __LINE__, "%s is NULL", #p);                                    \
    } while (0)

/* Status codes print their names: "IB_EINVAL (-2)". */
#define ASSERT_OK(expr) ASSERT_STATUS(expr, IB_OK)
#define ASSERT_STATUS(expr, want)                                                                  \
    do {                                                                                           \
        int ib__rc = (expr), ib__want = (want);                                                    \
        if (ib__rc != ib__want)                                                                    \
            ib_test_fail(__FILE__, __LINE__, "%s returned %s (%d), expected %s (%d)", #expr,       \
                         ib_err_name(ib__rc), ib__rc, ib_err_name(ib__want), ib__want);            \
    } while (0)
/* Like ASSERT_OK but prints the error buffer's message. */
#define ASSERT_OK_ERR(expr, errp)                                                                  \
    do {                                                                                           \
        int ib__rc = (expr);                                                                       \
        if (ib__rc != IB_OK)                                                                       \
            ib_test_fail(__FILE__, __LINE__, "%s returned %s: %s", #expr, ib_err_name(ib__rc),     \
                         (errp)->msg);                                                             \
    } while (0)

#define ASSERT_MEM_EQ(a, b, n)                                                                     \
    do {                                                                                           \
        if (memcmp((a), (b), (n)) != 0)                                                            \
            ib_test_fail(__FILE__, __LINE__, "memory %s != %s over %zu bytes", #a, #b,             \
                         (size_t)(n));                                                             \
    } while (0)

#endif
