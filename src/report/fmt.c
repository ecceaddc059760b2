/*
 * fmt.c - human-readable numbers (see fmt.h). Fixed-point output with a digit
 * count derived from the magnitude, then thousands separators and trimmed zeros.
 */
#include "report/fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/rutil.h"

/* Insert ',' every three integer digits of a plain "[-]ddd[.ddd]" string. */
static void group_thousands(char *out, size_t cap, const char *plain)
{
    const char *dot = strchr(plain, '.');
    const char *start = plain[0] == '-' ? plain + 1 : plain;
    size_t int_len = (size_t)((dot ? dot : plain + strlen(plain)) - start);
    size_t o = 0;
    if (plain[0] == '-' && o + 1 < cap) out[o++] = '-';
    for (size_t i = 0; i < int_len && o + 1 < cap; i++) {
        if (i && (int_len - i) % 3 == 0 && o + 1 < cap) out[o++] = ',';
        if (o + 1 < cap) out[o++] = start[i];
    }
    if (dot)
        for (const char *p = dot; *p && o + 1 < cap; p++)
            out[o++] = *p;
    out[o < cap ? o : cap - 1] = '\0';
}

/* Drop trailing zeros (and a trailing point) of a fixed-point string. */
static void trim_zeros(char *s)
{
    if (!strchr(s, '.')) return;
    size_t n = strlen(s);
    while (n && s[n - 1] == '0')
        s[--n] = '\0';
    if (n && s[n - 1] == '.') s[--n] = '\0';
}

/* Six significant digits like LoadGen's own output, grouped with commas. */
void ib_rpt_fmt_result(char *out, size_t cap, double v)
{
    if (!isfinite(v)) {
        ib_rpt_strlcpy(out, cap, "n/a", (size_t)-1);
        return;
    }
    int mag = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    int decimals = 5 - mag;
    if (decimals < 0) decimals = 0;
    if (decimals > 9) decimals = 9;
    char plain[64];
    snprintf(plain, sizeof plain, "%.*f", decimals, v);
    trim_zeros(plain);
    group_thousands(out, cap, plain);
}

/* Chart labels: three significant digits with k/M/G/T suffixes. */
void ib_rpt_fmt_compact(char *out, size_t cap, double v)
{
    if (!isfinite(v)) {
        ib_rpt_strlcpy(out, cap, "n/a", (size_t)-1);
        return;
    }
    static const char *const suffix[] = {"", "k", "M", "G", "T"};
    int k = 0;
    double a = fabs(v);
    while (a >= 999.5 && k < 4) {
        a /= 1000;
        v /= 1000;
        k++;
    }
    char num[32];
    if (a >= 99.95 || k == 0)
        snprintf(num, sizeof num, "%.*f", a >= 99.5 ? 0 : a >= 9.995 ? 1 : a >= 1 ? 2 : 3, v);
    else
        snprintf(num, sizeof num, "%.*f", a >= 9.995 ? 1 : 2, v);
    snprintf(out, cap, "%s%s", num, suffix[k]);
}

void ib_rpt_fmt_ratio(char *out, size_t cap, double v)
{
    ib_rpt_fmt_sig(out, cap, v, 3);
}

/* Fixed point with `digits` significant digits (zeros kept: 0.540). */
void ib_rpt_fmt_sig(char *out, size_t cap, double v, int digits)
{
    if (!isfinite(v)) {
        ib_rpt_strlcpy(out, cap, "n/a", (size_t)-1);
        return;
    }
    int mag = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    int decimals = digits - 1 - mag;
    if (decimals < 0) decimals = 0;
    if (decimals > 12) decimals = 12;
    char plain[64];
    snprintf(plain, sizeof plain, "%.*f", decimals, v);
    group_thousands(out, cap, plain);
}
