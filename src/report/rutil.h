/*
 * rutil.h - small helpers shared by the report modules: bounded string copy,
 * case-insensitive compare, NaN, number parsing with full-string checks.
 * Internal to src/report.
 */
#ifndef IB_REPORT_RUTIL_H
#define IB_REPORT_RUTIL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#define IB_RPT_NAN ((double)NAN)

/* Copy at most cap-1 bytes of src (n bytes, or strlen when n == (size_t)-1), NUL-terminate. */
void ib_rpt_strlcpy(char *dst, size_t cap, const char *src, size_t n);
/* ASCII case-insensitive equality. */
bool ib_rpt_ieq(const char *a, const char *b);
/* Trim ASCII whitespace in place; returns the start. */
char *ib_rpt_trim(char *s);
/* Parse a finite double occupying the whole of s (after trimming); false otherwise. */
bool ib_rpt_parse_double(const char *s, double *out);
/* True when the string starts with the prefix. */
bool ib_rpt_starts_with(const char *s, const char *prefix);
/* Era of a version string "vA.B" / "A.B" (enum ib_report_era); UNKNOWN when unparsable. */
int ib_rpt_era_of_version(const char *version);
/* Normalise "1.1", "V1.1", "v1.1.0" to "v1.1" into out; false when not a version. */
bool ib_rpt_normalize_version(const char *in, char *out, size_t cap);
/* A result's labels on one line, "; " between them ("" when none). */
struct ib_report_result;
void ib_rpt_labels_joined(const struct ib_report_result *r, char *out, size_t cap);

#endif
