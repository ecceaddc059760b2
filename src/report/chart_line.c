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

#define LINE_DEFAULT_W  960.0
#define LINE_DEFAULT_H  440.0
#define LINE_MIN_PLOT_H 140.0

/* Percentile -> -log10(1 - p): 50 -> 0.30, 90 -> 1, 99 -> 2, 99.9 -> 3. */
static double xscale(double p)
{
    double q = 1 - p / 100;
    return q > 1e-9 ? -log10(q) : 9;
}

typedef struct line_geo {
    double px0, px1, py0, py1, x_lo, x_hi;
    ch_ticks t;
} line_geo;

/* Percentile -> pixel column. */
static double xpos(const line_geo *g, double p)
{
    return g->px0 + (xscale(p) - g->x_lo) / (g->x_hi - g->x_lo) * (g->px1 - g->px0);
}

/* Latency -> pixel row. */
static double ypos(const line_geo *g, double v)
{
    return g->py1 - v / g->t.top * (g->py1 - g->py0);
}

/* A horizontal line across the plot (grid, axis, reference bound). */
static void add_hline(ch_lay *L, const line_geo *g, double y, int role, uint32_t color,
                      double width, bool dashed)
{
    ib_chart_item it;
    memset(&it, 0, sizeof it);
    it.kind = IB_CHART_LINE;
    it.role = role;
    it.x0 = g->px0, it.x1 = g->px1, it.y0 = it.y1 = y;
    it.size = width, it.dashed = dashed, it.color = color, it.owner = -1;
    it.box = (ib_chart_rect){g->px0, y - width / 2, g->px1 - g->px0, width};
    ch_add(L, &it);
}

/* Grid, y tick labels, percentile labels under the axis, the y-axis title. */
static void line_axes(ch_lay *L, const ib_chart_line_spec *s, const line_geo *g)
{
    double asc, desc;
    ch_metrics(L, CH_TICK_SIZE, &asc, &desc);
    for (int k = 0; k <= g->t.n; k++) {
        double y = ypos(g, k * g->t.step);
        add_hline(L, g, y, k ? IB_CHART_ROLE_GRID : IB_CHART_ROLE_AXIS,
                  k ? CH_GRID_COLOR : 0x333333u, 1, false);
        char lab[32];
        ch_tick_label(&g->t, k * g->t.step, lab, sizeof lab);
        double w = ch_width(L, lab, CH_TICK_SIZE, false);
        ib_chart_rect r =
            ch_text_box(L, lab, g->px0 - 6 - w, y + (asc - desc) / 2, CH_TICK_SIZE, false, false);
        if (ch_inside(L, &r) && !ch_collides(L, &r, false, -1))
            ch_text(L, lab, r.x, y + (asc - desc) / 2, CH_TICK_SIZE, false, CH_MUTED_COLOR,
                    IB_CHART_ROLE_TICK, false, -1);
    }
    /* the zero tick label reaches ~asc/2 below the axis: start the band lower */
    for (size_t p = 0; p < s->n_points; p++) {
        char lab[32];
        snprintf(lab, sizeof lab, "p%g", s->percentiles[p]);
        double x = xpos(g, s->percentiles[p]), w = ch_width(L, lab, CH_TICK_SIZE, false);
        double by = g->py1 + 9 + asc;
        ib_chart_rect r = ch_text_box(L, lab, x - w / 2, by, CH_TICK_SIZE, false, false);
        if (ch_inside(L, &r) && !ch_collides(L, &r, false, -1))
            ch_text(L, lab, x - w / 2, by, CH_TICK_SIZE, false, CH_MUTED_COLOR,
                    IB_CHART_ROLE_CATEGORY, false, -1);
        else
            L->c->dropped_labels++;
    }
    if (s->y_label) {
        ch_metrics(L, CH_CATEGORY_SIZE, &asc, &desc);
        const char *yl = ch_ellipsize(L, s->y_label, CH_CATEGORY_SIZE, false, g->py1 - g->py0);
        double w = ch_width(L, yl, CH_CATEGORY_SIZE, false);
        ch_text(L, yl, CH_MARGIN + asc, (g->py0 + g->py1) / 2 + w / 2, CH_CATEGORY_SIZE, false,
                CH_TEXT_COLOR, IB_CHART_ROLE_AXIS_LABEL, true, -1);
    }
    if (isfinite(s->reference))
        add_hline(L, g, ypos(g, s->reference), IB_CHART_ROLE_REFERENCE, 0xC0392Bu, 1.5, true);
}

/* One polyline with diamond markers per series. */
static void line_series(ch_lay *L, const ib_chart_line_spec *s, const line_geo *g)
{
    ib_chart_item it;
    for (size_t si = 0; si < s->n_series; si++) {
        uint32_t col = ib_chart_palette(si);
        const double *v = s->values + si * s->n_points;
        for (size_t p = 0; p + 1 < s->n_points; p++) {
            if (!isfinite(v[p]) || !isfinite(v[p + 1])) continue;
            memset(&it, 0, sizeof it);
            it.kind = IB_CHART_LINE;
            it.role = IB_CHART_ROLE_SERIES_LINE;
            it.x0 = xpos(g, s->percentiles[p]), it.y0 = ypos(g, v[p]);
            it.x1 = xpos(g, s->percentiles[p + 1]), it.y1 = ypos(g, v[p + 1]);
            it.size = 2, it.color = col, it.owner = -1;
            it.box = (ib_chart_rect){it.x0, fmin(it.y0, it.y1), it.x1 - it.x0, fabs(it.y1 - it.y0)};
            ch_add(L, &it);
        }
        for (size_t p = 0; p < s->n_points; p++) {
            if (!isfinite(v[p])) continue;
            memset(&it, 0, sizeof it);
            it.kind = IB_CHART_MARKER;
            it.role = IB_CHART_ROLE_MARKER;
            it.x0 = xpos(g, s->percentiles[p]), it.y0 = ypos(g, v[p]), it.size = 4;
            it.color = col, it.owner = -1;
            it.box = (ib_chart_rect){it.x0 - 4, it.y0 - 4, 8, 8};
            ch_add(L, &it);
        }
    }
}

/* Label each run's highest percentile (the tail the bound is about), never overlapping. */
static void line_tail_labels(ch_lay *L, const ib_chart_line_spec *s, const line_geo *g)
{
    double asc, desc;
    ch_metrics(L, CH_VALUE_SIZE, &asc, &desc);
    for (size_t si = 0; si < s->n_series; si++) {
        size_t p = s->n_points - 1;
        double v = s->values[si * s->n_points + p];
        if (!isfinite(v)) continue;
        char lab[32];
        ib_rpt_fmt_sig(lab, sizeof lab, v, 3);
        double x = xpos(g, s->percentiles[p]), y = ypos(g, v);
        double w = ch_width(L, lab, CH_VALUE_SIZE, true);
        double pos[3][2] = {{x - w - 8, y - 6}, {x - w - 8, y + 6 + asc}, {x - w / 2, y - 8}};
        bool placed = false;
        for (size_t k = 0; k < 3 && !placed; k++) {
            ib_chart_rect r = ch_text_box(L, lab, pos[k][0], pos[k][1], CH_VALUE_SIZE, true, false);
            if (!ch_inside(L, &r) || r.y < g->py0 - 16 || r.y + r.h > g->py1 ||
                ch_collides(L, &r, false, -1))
                continue;
            int idx =
                ch_text(L, lab, pos[k][0], pos[k][1], CH_VALUE_SIZE, true,
                        ch_darken(ib_chart_palette(si), 0.7), IB_CHART_ROLE_LINE_VALUE, false, -1);
            if (idx >= 0) L->c->items.data[idx].background = true;
            placed = true;
        }
        if (!placed) L->c->dropped_labels++;
    }
}

/* Sizes first (ticks, legend, title), then axes, lines, tail labels and the legend. */
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
        if (isfinite(s->values[i]) && s->values[i] > vmax) vmax = s->values[i];
    line_geo g;
    ch_nice_ticks(vmax * 1.1, 5, &g.t);
    double tick_w = 0, asc, desc;
    for (int k = 0; k <= g.t.n; k++) {
        char lab[32];
        ch_tick_label(&g.t, k * g.t.step, lab, sizeof lab);
        tick_w = fmax(tick_w, ch_width(&L, lab, CH_TICK_SIZE, false));
    }
    ch_metrics(&L, CH_CATEGORY_SIZE, &asc, &desc);
    g.px0 = CH_MARGIN + (s->y_label ? asc + desc + 8 : 0) + tick_w + 8;
    g.px1 = W - CH_MARGIN - 24;
    ch_legend_entry legend[258];
    size_t nl = 0;
    for (size_t i = 0; i < s->n_series; i++)
        legend[nl++] = (ch_legend_entry){s->series[i], ib_chart_palette(i), 1};
    if (isfinite(s->reference) && s->reference_label)
        legend[nl++] = (ch_legend_entry){s->reference_label, 0xC0392Bu, 2};
    double legend_h = ch_legend_height(&L, legend, nl, W);
    g.py0 = ch_title(&L, s->title, s->subtitle) + 6;
    double band = asc + desc + 15;
    double need = g.py0 + LINE_MIN_PLOT_H + band + legend_h + 10 + CH_MARGIN;
    if (H < need) out->height = H = need;
    g.py1 = H - CH_MARGIN - legend_h - 10 - band;
    g.x_lo = xscale(s->percentiles[0]);
    g.x_hi = xscale(s->percentiles[s->n_points - 1]);
    if (g.x_hi <= g.x_lo) g.x_hi = g.x_lo + 1;
    line_axes(&L, s, &g);
    line_series(&L, s, &g);
    line_tail_labels(&L, s, &g);
    ch_legend(&L, legend, nl, H - CH_MARGIN - legend_h);
    return L.rc ? ib_err_set(err, L.rc, "line chart layout: out of memory") : IB_OK;
}
