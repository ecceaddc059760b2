/*
 * pyfmt.c - Python's float repr (pyfmt.h). The shortest round-trip digits come from the
 * first "%.*e" precision that strtod reads back exactly (glibc rounds correctly, so this
 * is the same digit string as Python's David Gay dtoa in mode 0); the layout then follows
 * float_repr_style "short": positional when the decimal exponent is in [-4, 16).
 */
#include "base/pyfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void ib_py_float_repr(double v, char *buf, size_t n)
{
    if (n == 0)
        return;
    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v < 0 ? "-inf" : "inf");
        return;
    }
    char sci[40];
    for (int p = 0; p < 17; p++) {
        snprintf(sci, sizeof sci, "%.*e", p, v);
        if (strtod(sci, NULL) == v)
            break;
    }
    /* sci = [-]d[.ddd]e[+-]XX */
    const char *s = sci;
    bool neg = *s == '-';
    if (neg)
        s++;
    char digits[24];
    size_t k = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.' && k + 1 < sizeof digits)
            digits[k++] = *s;
    digits[k] = '\0';
    int e = *s == 'e' ? atoi(s + 1) : 0;
    while (k > 1 && digits[k - 1] == '0')
        digits[--k] = '\0';
    char out[64];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    if (e >= -4 && e < 16) {
        if (e >= 0) {
            for (size_t i = 0; i <= (size_t)e; i++)
                out[o++] = i < k ? digits[i] : '0';
            out[o++] = '.';
            if ((size_t)e + 1 < k)
                for (size_t i = (size_t)e + 1; i < k; i++)
                    out[o++] = digits[i];
            else
                out[o++] = '0';
        } else {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = 0; i < -e - 1; i++)
                out[o++] = '0';
            for (size_t i = 0; i < k; i++)
                out[o++] = digits[i];
        }
        out[o] = '\0';
    } else {
        out[o++] = digits[0];
        if (k > 1) {
            out[o++] = '.';
            for (size_t i = 1; i < k; i++)
                out[o++] = digits[i];
        }
        snprintf(out + o, sizeof out - o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    snprintf(buf, n, "%s", out);
}
