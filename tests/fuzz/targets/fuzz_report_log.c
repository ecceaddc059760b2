/*
 * fuzz_report_log.c - libFuzzer target for the report's log parsers: the detail
 * log (JSON lines), the summary fallback, accuracy.txt and the MLPerf power log.
 *
 * Input: byte 0 picks the benchmark name hint (b % 4) and rules-version override
 * ((b / 4) % 3); the rest is parsed by every parser. Checks: a failure always
 * explains itself; a success yields a finite, non-negative metric with a unit and a
 * known scenario; nothing crashes or hangs.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inferbench/report.h"
#include "report/accuracy.h"
#include "report/power.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_run(int rc, const ib_report_run *run, const ib_err *err)
{
    if (rc != IB_OK) {
        if (!err->msg[0]) abort();
        return;
    }
    if (!isfinite(run->metric) || run->metric < 0 || !run->unit[0] ||
        run->scenario == IB_REPORT_SCENARIO_UNKNOWN || !run->metric_key[0])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const bench[] = {NULL, "resnet50", "llama2-70b-99", "3d-unet-99"};
    static const char *const version[] = {NULL, "v1.1", "v4.1"};
    if (size < 1) return 0;
    const char *b = bench[data[0] % 4], *v = version[(data[0] / 4) % 3];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    ib_report_run run;
    ib_err err;
    err.msg[0] = '\0';
    check_run(ib_report_run_parse_detail(text, len, "fuzz_detail", b, v, &run, &err), &run, &err);
    err.msg[0] = '\0';
    check_run(ib_report_run_parse_summary(text, len, "fuzz_summary", b, v, &run, &err), &run, &err);
    ib_rpt_accuracy acc;
    err.msg[0] = '\0';
    if (ib_rpt_accuracy_parse(text, len, b, "fuzz_acc", &acc, &err) != IB_OK && !err.msg[0])
        abort();
    ib_rpt_power pw;
    err.msg[0] = '\0';
    int rc = ib_rpt_power_parse(text, len, "fuzz_spl", "01-01-2021 00:00:00.000",
                                "12-31-2021 23:59:59.999", &pw, &err);
    if (rc != IB_OK && !err.msg[0]) abort();
    if (rc == IB_OK && (!(pw.avg_w > 0) || !pw.samples)) abort();
    return 0;
}
