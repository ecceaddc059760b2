/*
 * rutil.c - string and number helpers for the report modules (see rutil.h).
 * Nothing here allocates; everything is reentrant.
 */
#include "report/rutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inferbench/report.h"

/* Bounded copy that always terminates (n = (size_t)-1 means strlen(src)). */
void ib_rpt_strlcpy(char *dst, size_t cap, const char *src, size_t n)
{
    if (!cap) return;
    if (!src) src = "";
    if (n == (size_t)-1) n = strlen(src);
    if (n > cap - 1) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* ASCII case-insensitive equality (scenario and column names). */
bool ib_rpt_ieq(const char *a, const char *b)
{
    if (!a || !b) return false;
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

/* Trim in place: leading blanks are skipped, trailing ones overwritten. */
char *ib_rpt_trim(char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Whole-string parse: "12.5x" or "" are not numbers; inf/nan and overflow are refused. */
bool ib_rpt_parse_double(const char *s, double *out)
{
    if (!s) return false;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s) return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v)) return false;
    while (isspace((unsigned char)*end))
        end++;
    if (*end) return false;
    *out = v;
    return true;
}

/* Prefix test (NULL-safe). */
bool ib_rpt_starts_with(const char *s, const char *prefix)
{
    return s && prefix && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Accepts "1.1", "v1.1", "1.1 @ b1452de454" (the loadgen_version form), "6.0.17". */
bool ib_rpt_normalize_version(const char *in, char *out, size_t cap)
{
    if (!in) return false;
    while (isspace((unsigned char)*in))
        in++;
    if (*in == 'v' || *in == 'V') in++;
    char *end = NULL;
    long major = strtol(in, &end, 10);
    if (end == in || *end != '.' || major < 0 || major > 99) return false;
    const char *p = end + 1;
    long minor = strtol(p, &end, 10);
    if (end == p || minor < 0 || minor > 99) return false;
    snprintf(out, cap, "v%ld.%ld", major, minor);
    return true;
}

/* users.md/benchmarks.md §4.1: early stopping from v2.0, completed samples/s from v4.1. */
int ib_rpt_era_of_version(const char *version)
{
    char v[16];
    if (!ib_rpt_normalize_version(version, v, sizeof v)) return IB_REPORT_ERA_UNKNOWN;
    int major = 0, minor = 0;
    if (sscanf(v, "v%d.%d", &major, &minor) != 2) return IB_REPORT_ERA_UNKNOWN;
    if (major < 2) return IB_REPORT_ERA_V1;
    if (major < 4 || (major == 4 && minor == 0)) return IB_REPORT_ERA_ES;
    return IB_REPORT_ERA_CURRENT;
}

void ib_rpt_labels_joined(const ib_report_result *r, char *out, size_t cap)
{
    if (!cap) return;
    size_t o = 0;
    for (const char *p = r->labels ? r->labels : ""; *p && o + 3 < cap; p++) {
        if (*p == '\n') {
            out[o++] = ';';
            out[o++] = ' ';
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}
