/*
 * chart_line.c - latency-percentile charts: one line per run over the LoadGen
 * percentiles (50 .. 99.9), x on a -log10(1 - p) scale so the tail is readable,
 * y in milliseconds from 0, and the scenario's latency bound as a dashed line.
 * Labels follow the same no-overlap rule as the bar charts.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "report/chart_priv.h"
#include "report/fmt.h"

#define LINE_DEFAULT_W 960.0
#define LINE_DEFAULT_H 440.0
#define LINE_MIN_PLOT_H 140.0

static double xscale(double p)
{
    double q = 1 - p / 100;
    return q > 1e-9 ? -log10(q) : 9;
}

int ib_chart_line_layout(const ib_chart_line_spec *s, ib_chart_measure *m, ib_chart *out,
                         ib_err *err)
{
    ib_chart_init(out);
    if (!s || !s->n_points || !s->n_series || !s->values || !s->percentiles || !s->series)
        return ib_err_set(err, IB_EINVAL, "line chart: points, series and values are required");
    if (s->n_points > 64 || s->n_series > 256)
        return ib_err_set(err, IB_EINVAL, "line chart: too many points or series");
    ch_lay L = {out, m, IB_OK};
    double W = s->width > 0 ? s->width : LINE_DEFAULT_W;
    double H = s->height > 0 ? s->height : LINE_DEFAULT_H;
    out->width = W;
    out->height = H;
    double vmax = isfinite(s->reference) ? s->reference : 0;
    for (size_t i = 0; i < s->n_points * s->n_series; i++)
        if (isfinite(s->values[i]) && s->values[i] > vmax)
            vmax = s->values[i];
    ch_ticks t;
    ch_nice_ticks(vmax * 1.1, 5, &t);
    double tick_w = 0, asc, desc;
    for (int k = 0; k <= t.n; k++) {
        char lab[32];
        ch_tick_label(&t, k * t.step, lab, sizeof lab);
        tick_w = fmax(tick_w, ch_width(&L, lab, CH_TICK_SIZE, false));
    }
    ch_metrics(&L, CH_CATEGORY_SIZE, &asc, &desc);
    double px0 = CH_MARGIN + (s->y_label ? asc + desc + 8 : 0) + tick_w + 8;
    double px1 = W - CH_MARGIN - 24;
    ch_legend_entry legend[258];
    size_t nl = 0;
    for (size_t i = 0; i < s->n_series; i++)
        legend[nl++] = (ch_legend_entry){s->series[i], ib_chart_palette(i), 1};
    if (isfinite(s->reference) && s->reference_label)
        legend[nl++] = (ch_legend_entry){s->reference_label, 0xC0392Bu, 2};
    double legend_h = ch_legend_height(&L, legend, nl, W);
    double py0 = ch_title(&L, s->title, s->subtitle) + 6;
    double band = asc + desc + 15;
    double need = py0 + LINE_MIN_PLOT_H + band + legend_h + 10 + CH_MARGIN;
    if (H < need)
        out->height = H = need;
    double py1 = H - CH_MARGIN - legend_h - 10 - band;
    double x_lo = xscale(s->percentiles[0]), x_hi = xscale(s->percentiles[s->n_points - 1]);
    if (x_hi <= x_lo)
        x_hi = x_lo + 1;
#define XPOS(p) (px0 + (xscale(p) - x_lo) / (x_hi - x_lo) * (px1 - px0))
#define YPOS(v) (py1 - (v) / t.top * (py1 - py0))
    ib_chart_item it;
    ch_metrics(&L, CH_TICK_SIZE, &asc, &desc);
    for (int k = 0; k <= t.n; k++) {
        double y = YPOS(k * t.step);
        memset(&it, 0, sizeof it);
        it.kind = IB_CHART_LINE;
        it.role = k ? IB_CHART_ROLE_GRID : IB_CHART_ROLE_AXIS;
        it.x0 = px0, it.x1 = px1, it.y0 = it.y1 = y, it.size = 1;
        it.color = k ? CH_GRID_COLOR : 0x333333u;
        it.owner = -1;
        it.box = (ib_chart_rect){px0, y - 0.5, px1 - px0, 1};
        ch_add(&L, &it);
        char lab[32];
        ch_tick_label(&t, k * t.step, lab, sizeof lab);
        double w = ch_width(&L, lab, CH_TICK_SIZE, false);
        ib_chart_rect r = ch_text_box(&L, lab, px0 - 6 - w, y + (asc - desc) / 2, CH_TICK_SIZE,
                                      false, false);
        if (ch_inside(&L, &r) && !ch_collides(&L, &r, false, -1))
            ch_text(&L, lab, r.x, y + (asc - desc) / 2, CH_TICK_SIZE, false, CH_MUTED_COLOR,
                    IB_CHART_ROLE_TICK, false, -1);
    }
    for (size_t p = 0; p < s->n_points; p++) {
        char lab[32];
        snprintf(lab, sizeof lab, "p%g", s->percentiles[p]);
        double x = XPOS(s->percentiles[p]), w = ch_width(&L, lab, CH_TICK_SIZE, false);
        ib_chart_rect r = ch_text_box(&L, lab, x - w / 2, py1 + 9 + asc, CH_TICK_SIZE, false,
                                      false);
        if (ch_inside(&L, &r) && !ch_collides(&L, &r, false, -1))
            ch_text(&L, lab, x - w / 2, py1 + 9 + asc, CH_TICK_SIZE, false, CH_MUTED_COLOR,
                    IB_CHART_ROLE_CATEGORY, false, -1);
        else
            out->dropped_labels++;
    }
    if (s->y_label) {
        double a2, d2;
        ch_metrics(&L, CH_CATEGORY_SIZE, &a2, &d2);
        const char *yl = ch_ellipsize(&L, s->y_label, CH_CATEGORY_SIZE, false, py1 - py0);
        double w = ch_width(&L, yl, CH_CATEGORY_SIZE, false);
        ch_text(&L, yl, CH_MARGIN + a2, (py0 + py1) / 2 + w / 2, CH_CATEGORY_SIZE, false,
                CH_TEXT_COLOR, IB_CHART_ROLE_AXIS_LABEL, true, -1);
    }
    if (isfinite(s->reference)) {
        memset(&it, 0, sizeof it);
        it.kind = IB_CHART_LINE;
        it.role = IB_CHART_ROLE_REFERENCE;
        it.x0 = px0, it.x1 = px1, it.y0 = it.y1 = YPOS(s->reference);
        it.size = 1.5, it.dashed = true, it.color = 0xC0392Bu, it.owner = -1;
        it.box = (ib_chart_rect){px0, it.y0 - 0.75, px1 - px0, 1.5};
        ch_add(&L, &it);
    }
    for (size_t si = 0; si < s->n_series; si++) {
        uint32_t col = ib_chart_palette(si);
        const double *v = s->values + si * s->n_points;
        for (size_t p = 0; p + 1 < s->n_points; p++) {
            if (!isfinite(v[p]) || !isfinite(v[p + 1]))
                continue;
            memset(&it, 0, sizeof it);
            it.kind = IB_CHART_LINE;
            it.role = IB_CHART_ROLE_SERIES_LINE;
            it.x0 = XPOS(s->percentiles[p]), it.y0 = YPOS(v[p]);
            it.x1 = XPOS(s->percentiles[p + 1]), it.y1 = YPOS(v[p + 1]);
            it.size = 2, it.color = col, it.owner = -1;
            it.box = (ib_chart_rect){it.x0, fmin(it.y0, it.y1), it.x1 - it.x0,
                                     fabs(it.y1 - it.y0)};
            ch_add(&L, &it);
        }
        for (size_t p = 0; p < s->n_points; p++) {
            if (!isfinite(v[p]))
                continue;
            memset(&it, 0, sizeof it);
            it.kind = IB_CHART_MARKER;
            it.role = IB_CHART_ROLE_MARKER;
            it.x0 = XPOS(s->percentiles[p]), it.y0 = YPOS(v[p]), it.size = 4;
            it.color = col, it.owner = -1;
            it.box = (ib_chart_rect){it.x0 - 4, it.y0 - 4, 8, 8};
            ch_add(&L, &it);
        }
    }
    /* label each run's highest percentile (the tail the bound is about) */
    ch_metrics(&L, CH_VALUE_SIZE, &asc, &desc);
    for (size_t si = 0; si < s->n_series; si++) {
        size_t p = s->n_points - 1;
        double v = s->values[si * s->n_points + p];
        if (!isfinite(v))
            continue;
        char lab[32];
        ib_rpt_fmt_sig(lab, sizeof lab, v, 3);
        double x = XPOS(s->percentiles[p]), y = YPOS(v), w = ch_width(&L, lab, CH_VALUE_SIZE, true);
        double pos[3][2] = {{x - w - 8, y - 6}, {x - w - 8, y + 6 + asc}, {x - w / 2, y - 8}};
        bool placed = false;
        for (size_t k = 0; k < 3 && !placed; k++) {
            ib_chart_rect r = ch_text_box(&L, lab, pos[k][0], pos[k][1], CH_VALUE_SIZE, true, false);
            if (!ch_inside(&L, &r) || r.y < py0 - 16 || r.y + r.h > py1 ||
                ch_collides(&L, &r, false, -1))
                continue;
            int idx = ch_text(&L, lab, pos[k][0], pos[k][1], CH_VALUE_SIZE, true,
                              ch_darken(ib_chart_palette(si), 0.7), IB_CHART_ROLE_LINE_VALUE,
                              false, -1);
            if (idx >= 0)
                out->items.data[idx].background = true;
            placed = true;
        }
        if (!placed)
            out->dropped_labels++;
    }
#undef XPOS
#undef YPOS
    ch_legend(&L, legend, nl, H - CH_MARGIN - legend_h);
    return L.rc ? ib_err_set(err, L.rc, "line chart layout: out of memory") : IB_OK;
}
