/*
 * power.c - MLPerf power-log averaging (submission checker get_power_metric): the
 * samples of spl.txt whose timestamp lies strictly between the detail log's
 * power_begin and power_end, readings > 0 only, averaged arithmetically.
 */
#include "report/power.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "report/rutil.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Timestamps are UTC (LoadGen power_begin/end and PTDaemon both log UTC since v1.1). */
int64_t ib_rpt_power_time_ms(const char *s)
{
    int mo, d, y, h, mi, sec, n = 0;
    if (!s || sscanf(s, "%2d-%2d-%4d %2d:%2d:%2d%n", &mo, &d, &y, &h, &mi, &sec, &n) != 6)
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970 || y > 9999 || h > 23 || mi > 59 ||
        sec > 60 || h < 0 || mi < 0 || sec < 0)
        return -1;
    int64_t ms = 0;
    const char *p = s + n;
    if (*p == '.') {
        /* fractional seconds: keep milliseconds */
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3) ms = ms * 10 + (*p - '0');
        for (; digits < 3; digits++)
            ms *= 10;
    }
    int64_t days = days_from_civil(y, mo, d);
    return ((days * 24 + h) * 60 + mi) * 60000 + (int64_t)sec * 1000 + ms;
}

int ib_rpt_power_parse(const char *text, size_t len, const char *name, const char *begin,
                       const char *end, ib_rpt_power *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "spl.txt";
    int64_t t0 = ib_rpt_power_time_ms(begin), t1 = ib_rpt_power_time_ms(end);
    if (t0 < 0 || t1 < 0 || t1 <= t0)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: the detail log's power_begin/power_end ('%s', '%s') do not form a "
                          "window",
                          name, begin ? begin : "", end ? end : "");
    double sum = 0;
    size_t count = 0, pos = 0;
    char line[1024];
    while (text && pos < len) {
        const char *p = text + pos;
        const char *nl = memchr(p, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - p) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n < 5 || memcmp(p, "Time,", 5) != 0) continue;
        ib_rpt_strlcpy(line, sizeof line, p, n);
        /* fields: Time,<timestamp>,Watts,<value>,... */
        char *f1 = strchr(line, ',');
        char *f2 = f1 ? strchr(f1 + 1, ',') : NULL;
        char *f3 = f2 ? strchr(f2 + 1, ',') : NULL;
        if (!f3) continue;
        *f2 = '\0';
        char *f4 = strchr(f3 + 1, ',');
        if (f4) *f4 = '\0';
        int64_t t = ib_rpt_power_time_ms(f1 + 1);
        double w;
        if (t < 0 || !ib_rpt_parse_double(f3 + 1, &w)) continue;
        if (t > t0 && t < t1 && w > 0) {
            sum += w;
            count++;
        }
    }
    if (!count)
        return ib_err_set(err, IB_EFORMAT, "%s: no power sample falls inside %s - %s", name, begin,
                          end);
    out->avg_w = sum / (double)count;
    out->samples = count;
    out->duration_s = (double)(t1 - t0) / 1000.0;
    return IB_OK;
}
