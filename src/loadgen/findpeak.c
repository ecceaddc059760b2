/*
 * findpeak.c - FindPeakPerformance (Server only, loadgen.md §2.6; official
 * loadgen.cc FindPeakPerformanceMode / FindBoundaries / binary search):
 * check the user's QPS, widen the upper bound by (1 + step) until a probe
 * fails the latency percentile, then bisect until
 * floor(l * 10^d) + 1 >= floor(u * 10^d), and report the last passing lower
 * bound with its full summary. Pass/fail is the latency percentile only.
 *
 * What differs, keeping the official result: a widening or bisection probe
 * stops issuing as soon as its failure is certain (more samples over the
 * bound than the percentile allows among the probe's fixed timeline, so the
 * percentile element is over the bound whatever the rest does). Passing
 * probes always run their full length, so the reported lower bound and its
 * summary are those of a complete run; only known-failing probes get
 * shorter. There is no pre-flight estimate: any shortcut that changes which
 * QPS values are probed would change the reported peak.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "loadgen/engine_internal.h"

#define IB_LG_FIND_PEAK_MAX_PROBES 64

static void msg_fields(ib_lg_test *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg_fields(ib_lg_test *t, const char *fmt, ...)
{
    char m[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    ib_lg_log_message(t, m);
}

static bool is_finished(const ib_lg_test *t, double l, double u)
{
    uint8_t precision = (uint8_t)t->eff.requested.server_find_peak_qps_decimals_of_precision;
    double p = pow(10, precision);
    return floor(l * p) + 1 >= floor(u * p);
}

static void note_probe(ib_strbuf *b, double qps, bool ok, bool early)
{
    ib_strbuf_printf(b, "%s%.6g %s%s", b->len ? ", " : "", qps, ok ? "met" : "missed",
                     early ? " (stopped early)" : "");
}

int ib_lg_run_find_peak(ib_lg_test *t, ib_lg_result *res)
{
    ib_lg_log_message(t, "Starting FindPeakPerformance mode");
    if (t->eff.scenario != IB_LG_SCENARIO_SERVER) {
        ib_lg_detail_str(&t->detail, IB_LG_REC_ERROR, "error_invalid_config",
                         "Finding peak performance is only supported in Server scenarios.", -1,
                         __FILE__, __LINE__);
        t->status = IB_EUNSUPPORTED;
        return t->status;
    }
    ib_strbuf probes;
    ib_strbuf_init(&probes);
    double base = t->eff.target_qps;
    double step = t->eff.requested.server_find_peak_qps_boundary_step_size;
    msg_fields(t, "FindPeakPerformance: Check validity of the base settings field: %f", base);
    ib_lg_set_phase(t, "find-peak qps=%.6g", base);
    ib_lg_series_result l, u;
    memset(&u, 0, sizeof u);
    int rc = ib_lg_run_perf_series(t, base, false, &l);
    if (rc != IB_OK || t->status != IB_OK) {
        ib_lg_series_result_free(&l);
        ib_strbuf_deinit(&probes);
        return t->status ? t->status : rc;
    }
    note_probe(&probes, base, l.summary.perf_constraints_met, false);
    if (!l.summary.perf_constraints_met) {
        char m[512];
        snprintf(m, sizeof m,
                 "FindPeakPerformance: Initial lower bound does not satisfy performance "
                 "constraints, msg: %s",
                 l.summary.perf_constraints_rec);
        ib_lg_detail_str(&t->detail, IB_LG_REC_ERROR, "error_runtime", m, -1, __FILE__,
                         __LINE__);
        ib_lg_report_perf(t, &l, res);
        ib_lg_series_result_free(&l);
        ib_strbuf_deinit(&probes);
        return t->status;
    }
    /* FindBoundaries: widen until a probe fails */
    int nprobe = 1;
    double lq = base, uq = base;
    for (;;) {
        uq = lq * (1 + step);
        msg_fields(t, "FindBoundaries: Checking fields [%f, %f)", lq, uq);
        ib_lg_set_phase(t, "find-peak qps=%.6g", uq);
        rc = ib_lg_run_perf_series(t, uq, true, &u);
        nprobe++;
        if (rc != IB_OK || t->status != IB_OK || t->interrupted)
            goto done;
        bool ok = u.summary.perf_constraints_met && !u.issue.probe_failed_early;
        note_probe(&probes, uq, ok, u.issue.probe_failed_early);
        if (!ok)
            break;
        ib_lg_series_result_free(&l);
        l = u;
        memset(&u, 0, sizeof u);
        lq = uq;
        if (nprobe >= IB_LG_FIND_PEAK_MAX_PROBES)
            goto done;
    }
    ib_lg_series_result_free(&u);
    msg_fields(t, "FindPeakPerformance: Found boundaries: [%f, %f)", lq, uq);
    /* binary search */
    while (!is_finished(t, lq, uq) && nprobe < IB_LG_FIND_PEAK_MAX_PROBES) {
        double mq = lq + (uq - lq) / 2;
        msg_fields(t, "FindPeakPerformanceBinarySearch: Testing the mid value of bounds [%f, %f): %f",
                   lq, uq, mq);
        ib_lg_set_phase(t, "find-peak qps=%.6g", mq);
        rc = ib_lg_run_perf_series(t, mq, true, &u);
        nprobe++;
        if (rc != IB_OK || t->status != IB_OK || t->interrupted)
            goto done;
        bool ok = u.summary.perf_constraints_met && !u.issue.probe_failed_early;
        note_probe(&probes, mq, ok, u.issue.probe_failed_early);
        if (ok) {
            ib_lg_series_result_free(&l);
            l = u;
            memset(&u, 0, sizeof u);
            lq = mq;
        } else {
            ib_lg_series_result_free(&u);
            uq = mq;
        }
    }
    msg_fields(t, "FindPeakPerformance: Found peak performance field: %f", lq);
done:
    ib_lg_series_result_free(&u);
    if (t->status == IB_OK && l.summarized) {
        ib_lg_report_perf(t, &l, res);
        res->find_peak_qps = lq;
        size_t len = strlen(res->suggestion);
        snprintf(res->suggestion + len, sizeof res->suggestion - len,
                 "the largest target QPS whose measured %.1fth percentile met the %lld ns bound: "
                 "%.6g (probes: %s)\n",
                 t->eff.target_latency_percentile * 100, (long long)t->eff.target_latency_ns, lq,
                 probes.data ? probes.data : "");
    }
    ib_lg_series_result_free(&l);
    ib_strbuf_deinit(&probes);
    return t->status;
}
