/*
 * charts.h - the set of charts a report draws (per benchmark, perf/$ and latency),
 * each rendered to charts/<name>.{svg,png} and kept as an inline SVG for the HTML.
 * Internal to src/report.
 */
#ifndef IB_REPORT_CHARTS_H
#define IB_REPORT_CHARTS_H

#include "report/chart.h"
#include "report/report_impl.h"

typedef struct ib_rpt_chart_info {
    char *name; /* file stem: charts/<name>.svg */
    char *title;
    char *caption; /* text caption (footnotes are text, never only in the image) */
    char *svg;     /* inline SVG with prefixed ids */
    double width, height;
    size_t dropped_labels;
} ib_rpt_chart_info;

typedef struct ib_rpt_chart_list {
    IB_VEC(ib_rpt_chart_info) v;
} ib_rpt_chart_list;

typedef struct ib_rpt_chart_ctx {
    const ib_report *rep;
    const char *dir;
    ib_chart_measure *measure;
    ib_rpt_chart_list *list;
} ib_rpt_chart_ctx;

int ib_rpt_build_charts(ib_rpt_chart_ctx *ctx, ib_err *err);
void ib_rpt_chart_list_deinit(ib_rpt_chart_list *l);

#endif
