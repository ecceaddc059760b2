/*
 * chart_bar.c - grouped bar charts (groups x series), optionally with a line
 * overlay per series and a dashed reference line: the per-benchmark figure and
 * the relative performance + normalised perf/$ figure of the report.
 *
 * Order of placement: title, legend and axis (sizes fixed first), bars, bar value
 * labels, overlay labels, category labels. A label is accepted only when its box
 * lies inside the canvas and overlaps no placed text (value labels also no other
 * bar); otherwise the next candidate position or a smaller font is tried, and as a
 * last resort it is dropped (counted in dropped_labels).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "report/chart_priv.h"
#include "report/fmt.h"

#define BAR_MAX_W        56.0
#define BAR_MIN_PLOT_H   140.0
#define BAR_DEFAULT_W    960.0
#define BAR_DEFAULT_H    520.0
#define BAR_MAX_CANVAS_W 4800.0

typedef struct bar_geo {
    double px0, px1, py0, py1, gw, bar_w;
    ch_ticks ticks;
} bar_geo;

/* Value -> pixel row (0 at the axis line py1, ticks.top at py0). */
static double y_of(const bar_geo *g, double v)
{
    return g->py1 - v / g->ticks.top * (g->py1 - g->py0);
}

/* Largest value the axis must show: bars, overlay points and the reference line. */
static double spec_max(const ib_chart_bar_spec *s)
{
    double m = 0;
    size_t n = s->n_groups * s->n_series;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(s->values[i]) && s->values[i] > m) m = s->values[i];
        if (s->line_values && isfinite(s->line_values[i]) && s->line_values[i] > m)
            m = s->line_values[i];
    }
    if (isfinite(s->reference) && s->reference > m) m = s->reference;
    return m;
}

/* Category label plan: horizontal (wrapped, <= 2 lines) or vertical (ellipsized). */
typedef struct cat_plan {
    bool vertical;
    double size;
    size_t stride;
    double band_h;
} cat_plan;

/* True when s fits in at most two lines of max_w without ellipsizing. */
static bool wraps_cleanly(ch_lay *L, const char *s, double size, double max_w, size_t *nlines)
{
    const char *lines[2];
    size_t n = ch_wrap(L, s, size, false, max_w, 2, lines);
    *nlines = n;
    if (!n) return !s[0];
    size_t len = strlen(lines[n - 1]);
    /* ch_wrap ellipsizes with U+2026 when the text does not fit */
    return !(len >= 3 && !memcmp(lines[n - 1] + len - 3, "\xE2\x80\xA6", 3) &&
             !strstr(s, "\xE2\x80\xA6"));
}

/*
 * Decide how category labels fit a group width gw: horizontal and wrapped to two lines
 * when every label fits whole, else rotated 90 degrees with a shrinking font, and when
 * even 8 px text is thicker than a group, only every stride-th group is labelled.
 */
static cat_plan plan_categories(ch_lay *L, const ib_chart_bar_spec *s, double gw, double canvas_h)
{
    cat_plan p = {false, CH_CATEGORY_SIZE, 1, 0};
    double asc, desc;
    ch_metrics(L, p.size, &asc, &desc);
    size_t max_lines = 1;
    bool ok = true;
    for (size_t g = 0; g < s->n_groups && ok; g++) {
        size_t n = 0;
        ok = wraps_cleanly(L, s->groups[g], p.size, gw - 6, &n);
        if (n > max_lines) max_lines = n;
    }
    if (ok) {
        p.band_h = (double)max_lines * (asc + desc + 1) + 8;
        return p;
    }
    p.vertical = true;
    while (p.size > CH_MIN_FONT) {
        ch_metrics(L, p.size, &asc, &desc);
        if (asc + desc <= gw - 2) break;
        p.size -= 1;
    }
    ch_metrics(L, p.size, &asc, &desc);
    double thick = asc + desc + 2;
    p.stride = thick > gw ? (size_t)ceil(thick / gw) : 1;
    double max_len = fmin(200, canvas_h * 0.3), longest = 0;
    for (size_t g = 0; g < s->n_groups; g++) {
        const char *t = ch_ellipsize(L, s->groups[g], p.size, false, max_len);
        longest = fmax(longest, ch_width(L, t, p.size, false));
    }
    p.band_h = longest + 10;
    return p;
}

/* Place the planned category labels below the axis; each is still collision-checked. */
static void emit_categories(ch_lay *L, const ib_chart_bar_spec *s, const bar_geo *g,
                            const cat_plan *p)
{
    double asc, desc;
    ch_metrics(L, p->size, &asc, &desc);
    double max_len = fmin(200, L->c->height * 0.3);
    for (size_t k = 0; k < s->n_groups; k += p->stride) {
        double cx = g->px0 + ((double)k + 0.5) * g->gw;
        if (p->vertical) {
            const char *t = ch_ellipsize(L, s->groups[k], p->size, false, max_len);
            double w = ch_width(L, t, p->size, false);
            double ox = cx + (asc - desc) / 2, oy = g->py1 + 6 + w;
            ib_chart_rect r = ch_text_box(L, t, ox, oy, p->size, false, true);
            if (ch_inside(L, &r) && !ch_collides(L, &r, false, -1))
                ch_text(L, t, ox, oy, p->size, false, CH_TEXT_COLOR, IB_CHART_ROLE_CATEGORY, true,
                        -1);
            else
                L->c->dropped_labels++;
            continue;
        }
        const char *lines[2];
        size_t n = ch_wrap(L, s->groups[k], p->size, false, g->gw - 6, 2, lines);
        for (size_t i = 0; i < n; i++) {
            double w = ch_width(L, lines[i], p->size, false);
            double by = g->py1 + 6 + asc + (double)i * (asc + desc + 1);
            ib_chart_rect r = ch_text_box(L, lines[i], cx - w / 2, by, p->size, false, false);
            if (ch_inside(L, &r) && !ch_collides(L, &r, false, -1))
                ch_text(L, lines[i], cx - w / 2, by, p->size, false, CH_TEXT_COLOR,
                        IB_CHART_ROLE_CATEGORY, false, -1);
            else
                L->c->dropped_labels++;
        }
    }
}

/* Grid lines, y tick labels (dropped when they would collide) and the y-axis title. */
static void emit_axis(ch_lay *L, const ib_chart_bar_spec *s, const bar_geo *g)
{
    double asc, desc;
    ch_metrics(L, CH_TICK_SIZE, &asc, &desc);
    ib_chart_item it;
    for (int k = 0; k <= g->ticks.n; k++) {
        double v = k * g->ticks.step, y = y_of(g, v);
        memset(&it, 0, sizeof it);
        it.kind = IB_CHART_LINE;
        it.role = k ? IB_CHART_ROLE_GRID : IB_CHART_ROLE_AXIS;
        it.x0 = g->px0, it.x1 = g->px1, it.y0 = it.y1 = y;
        it.size = k ? 1 : 1.2;
        it.color = k ? CH_GRID_COLOR : 0x333333u;
        it.owner = -1;
        it.box = (ib_chart_rect){g->px0, y - 0.5, g->px1 - g->px0, 1};
        ch_add(L, &it);
        char lab[32];
        ch_tick_label(&g->ticks, v, lab, sizeof lab);
        double w = ch_width(L, lab, CH_TICK_SIZE, false);
        double ox = g->px0 - 6 - w, oy = y + (asc - desc) / 2;
        ib_chart_rect r = ch_text_box(L, lab, ox, oy, CH_TICK_SIZE, false, false);
        if (ch_inside(L, &r) && !ch_collides(L, &r, false, -1))
            ch_text(L, lab, ox, oy, CH_TICK_SIZE, false, CH_MUTED_COLOR, IB_CHART_ROLE_TICK, false,
                    -1);
    }
    if (s->y_label && s->y_label[0]) {
        ch_metrics(L, CH_CATEGORY_SIZE, &asc, &desc);
        const char *t = ch_ellipsize(L, s->y_label, CH_CATEGORY_SIZE, false, g->py1 - g->py0);
        double w = ch_width(L, t, CH_CATEGORY_SIZE, false);
        ch_text(L, t, CH_MARGIN + asc, (g->py0 + g->py1) / 2 + w / 2, CH_CATEGORY_SIZE, false,
                CH_TEXT_COLOR, IB_CHART_ROLE_AXIS_LABEL, true, -1);
    }
}

/* Try the candidate positions of one bar's value label, at shrinking sizes. */
static void place_value_label(ch_lay *L, const char *t, const ib_chart_rect *bar, int owner)
{
    static const double sizes[] = {CH_VALUE_SIZE, 9.0, CH_MIN_FONT};
    double cx = bar->x + bar->w / 2;
    for (size_t si = 0; si < IB_ARRAY_LEN(sizes); si++) {
        double size = sizes[si], asc, desc;
        ch_metrics(L, size, &asc, &desc);
        double w = ch_width(L, t, size, false);
        struct {
            double x, y;
            bool vertical, inside;
        } cand[4] = {
            {cx - w / 2, bar->y - 4 - desc, false, false},       /* above, horizontal */
            {cx + (asc - desc) / 2, bar->y - 4, true, false},    /* above, vertical */
            {cx + (asc - desc) / 2, bar->y + 4 + w, true, true}, /* inside the top, vertical */
            {cx - w / 2, bar->y + 4 + asc, false, true},         /* inside the top */
        };
        for (size_t k = 0; k < 4; k++) {
            ib_chart_rect r =
                ch_text_box(L, t, cand[k].x, cand[k].y, size, false, cand[k].vertical);
            if (cand[k].inside &&
                (r.x < bar->x || r.x + r.w > bar->x + bar->w || r.y + r.h > bar->y + bar->h))
                continue;
            if (!ch_inside(L, &r) || ch_collides(L, &r, true, owner)) continue;
            int i = ch_text(L, t, cand[k].x, cand[k].y, size, false,
                            cand[k].inside ? 0xFFFFFFu : CH_TEXT_COLOR, IB_CHART_ROLE_VALUE,
                            cand[k].vertical, owner);
            (void)i;
            return;
        }
    }
    L->c->dropped_labels++;
}

/* Overlay labels may sit over bars (white background) but never on text or markers. */
static bool overlay_free(ch_lay *L, const ib_chart_rect *r, const bar_geo *g)
{
    if (r->x < g->px0 || r->x + r->w > g->px1 + CH_MARGIN || r->y < g->py0 - 18 ||
        r->y + r->h > g->py1 || !ch_inside(L, r))
        return false;
    for (size_t i = 0; i < L->c->items.len; i++) {
        const ib_chart_item *it = &L->c->items.data[i];
        if ((it->kind == IB_CHART_TEXT || it->kind == IB_CHART_MARKER) &&
            ib_chart_rect_overlap(r, &it->box))
            return false;
    }
    return true;
}

/*
 * The line overlay: one polyline with diamond markers per series (the skipped series is
 * the reference itself), then the labels of the points, placed above, below, right or
 * left of the marker, on a white box, wherever they touch no text and no marker.
 */
static void emit_overlay(ch_lay *L, const ib_chart_bar_spec *s, const bar_geo *g, const double *cx)
{
    size_t ns = s->n_series;
    for (size_t si = 0; si < ns; si++) {
        if ((int)si == s->line_skip_series)
            continue; /* the baseline's points are 1.0 by definition: the reference line */
        uint32_t col = ch_darken(s->colors ? s->colors[si] : ib_chart_palette(si), 0.55);
        for (size_t gi = 0; gi < s->n_groups; gi++) {
            double v = s->line_values[gi * ns + si];
            double v2 = gi + 1 < s->n_groups ? s->line_values[(gi + 1) * ns + si] : (double)NAN;
            if (!isfinite(v) || !isfinite(v2)) continue;
            ib_chart_item it;
            memset(&it, 0, sizeof it);
            it.kind = IB_CHART_LINE;
            it.role = IB_CHART_ROLE_SERIES_LINE;
            it.x0 = cx[gi * ns + si], it.y0 = y_of(g, v);
            it.x1 = cx[(gi + 1) * ns + si], it.y1 = y_of(g, v2);
            it.size = 2;
            it.color = col;
            it.owner = -1;
            it.box = (ib_chart_rect){fmin(it.x0, it.x1), fmin(it.y0, it.y1), fabs(it.x1 - it.x0),
                                     fabs(it.y1 - it.y0)};
            ch_add(L, &it);
        }
        for (size_t gi = 0; gi < s->n_groups; gi++) {
            double v = s->line_values[gi * ns + si];
            if (!isfinite(v)) continue;
            ib_chart_item mk;
            memset(&mk, 0, sizeof mk);
            mk.kind = IB_CHART_MARKER;
            mk.role = IB_CHART_ROLE_MARKER;
            mk.x0 = cx[gi * ns + si], mk.y0 = y_of(g, v), mk.size = 5;
            mk.color = col;
            mk.owner = -1;
            mk.box = (ib_chart_rect){mk.x0 - 5, mk.y0 - 5, 10, 10};
            ch_add(L, &mk);
        }
    }
    /* labels after every marker exists, so no label covers a marker */
    for (size_t si = 0; si < ns; si++) {
        if ((int)si == s->line_skip_series) continue;
        for (size_t gi = 0; gi < s->n_groups; gi++) {
            size_t i = gi * ns + si;
            double v = s->line_values[i];
            if (!isfinite(v)) continue;
            char buf[32];
            const char *t = s->line_labels && s->line_labels[i] ? s->line_labels[i] : NULL;
            if (!t) {
                ib_rpt_fmt_ratio(buf, sizeof buf, v);
                t = buf;
            }
            double asc, desc, x = cx[i], y = y_of(g, v);
            ch_metrics(L, CH_VALUE_SIZE, &asc, &desc);
            double w = ch_width(L, t, CH_VALUE_SIZE, true);
            double pos[4][2] = {{x - w / 2, y - 8 - desc},
                                {x - w / 2, y + 8 + asc},
                                {x + 8, y + (asc - desc) / 2},
                                {x - 8 - w, y + (asc - desc) / 2}};
            bool placed = false;
            for (size_t k = 0; k < 4 && !placed; k++) {
                ib_chart_rect r =
                    ch_text_box(L, t, pos[k][0], pos[k][1], CH_VALUE_SIZE, true, false);
                if (!overlay_free(L, &r, g)) continue;
                int idx = ch_text(L, t, pos[k][0], pos[k][1], CH_VALUE_SIZE, true,
                                  ch_darken(s->colors ? s->colors[si] : ib_chart_palette(si), 0.55),
                                  IB_CHART_ROLE_LINE_VALUE, false, -1);
                if (idx >= 0) L->c->items.data[idx].background = true;
                placed = true;
            }
            if (!placed) L->c->dropped_labels++;
        }
    }
}

/* Reject specs the layout cannot honour (missing arrays, absurd sizes). */
static int validate(const ib_chart_bar_spec *s, ib_err *err)
{
    if (!s || !s->n_groups || !s->n_series || !s->values || !s->groups || !s->series)
        return ib_err_set(err, IB_EINVAL, "bar chart: groups, series and values are required");
    if (s->n_groups > 4096 || s->n_series > 256)
        return ib_err_set(err, IB_EINVAL, "bar chart: too many groups (%zu) or series (%zu)",
                          s->n_groups, s->n_series);
    return IB_OK;
}

/*
 * Canvas width grows with the number of bars (capped), height grows until the plot
 * keeps BAR_MIN_PLOT_H pixels; see the file comment for the placement order.
 */
int ib_chart_bar_layout(const ib_chart_bar_spec *s, ib_chart_measure *m, ib_chart *out, ib_err *err)
{
    ib_chart_init(out);
    int rc = validate(s, err);
    if (rc) return rc;
    ch_lay L = {out, m, IB_OK};
    size_t nbars = s->n_groups * s->n_series;
    double W = s->width > 0 ? s->width : BAR_DEFAULT_W;
    double H = s->height > 0 ? s->height : BAR_DEFAULT_H;
    W = fmin(BAR_MAX_CANVAS_W,
             fmax(W, 2 * CH_MARGIN + 80 + (double)s->n_groups * ((double)s->n_series * 6 + 10)));
    out->width = W;
    out->height = H;

    bar_geo g;
    ch_nice_ticks(spec_max(s) * 1.12, 5, &g.ticks);
    double tick_w = 0, asc, desc;
    for (int k = 0; k <= g.ticks.n; k++) {
        char lab[32];
        ch_tick_label(&g.ticks, k * g.ticks.step, lab, sizeof lab);
        tick_w = fmax(tick_w, ch_width(&L, lab, CH_TICK_SIZE, false));
    }
    ch_metrics(&L, CH_CATEGORY_SIZE, &asc, &desc);
    g.px0 = CH_MARGIN + (s->y_label && s->y_label[0] ? asc + desc + 8 : 0) + tick_w + 8;
    g.px1 = W - CH_MARGIN;
    g.gw = (g.px1 - g.px0) / (double)s->n_groups;
    g.bar_w = fmin(BAR_MAX_W, g.gw * 0.8 / (double)s->n_series);

    ch_legend_entry legend[260];
    size_t nl = 0;
    for (size_t i = 0; i < s->n_series; i++)
        legend[nl++] =
            (ch_legend_entry){s->series[i], s->colors ? s->colors[i] : ib_chart_palette(i), 0};
    if (s->line_values && s->line_legend)
        legend[nl++] = (ch_legend_entry){s->line_legend, 0x444444u, 1};
    if (isfinite(s->reference) && s->reference_legend)
        legend[nl++] = (ch_legend_entry){s->reference_legend, 0x666666u, 2};
    double legend_h = ch_legend_height(&L, legend, nl, W);

    cat_plan cp = plan_categories(&L, s, g.gw, H);
    g.py0 = ch_title(&L, s->title, s->subtitle) + 6;
    double need = g.py0 + BAR_MIN_PLOT_H + cp.band_h + 10 + legend_h + CH_MARGIN;
    if (H < need) out->height = H = need;
    g.py1 = H - CH_MARGIN - legend_h - 10 - cp.band_h;

    emit_axis(&L, s, &g);
    double *cx = ib_arena_alloc(&out->arena, nbars * sizeof(double));
    if (!cx) return ib_err_set(err, IB_ENOMEM, "out of memory");
    double inner = g.bar_w * (double)s->n_series;
    for (size_t gi = 0; gi < s->n_groups; gi++) {
        for (size_t si = 0; si < s->n_series; si++) {
            size_t i = gi * s->n_series + si;
            double x = g.px0 + (double)gi * g.gw + (g.gw - inner) / 2 + (double)si * g.bar_w;
            cx[i] = x + g.bar_w / 2;
            double v = s->values[i];
            if (!isfinite(v) || v < 0) continue;
            double y = y_of(&g, v);
            ib_chart_item it;
            memset(&it, 0, sizeof it);
            it.kind = IB_CHART_BOX;
            it.role = IB_CHART_ROLE_BAR;
            double gap = g.bar_w >= 4 ? 1 : 0;
            it.box = (ib_chart_rect){x + gap / 2, y, fmax(0.5, g.bar_w - gap), g.py1 - y};
            it.color = s->colors ? s->colors[si] : ib_chart_palette(si);
            it.owner = (int)i;
            ch_add(&L, &it);
        }
    }
    for (size_t i = 0; i < out->items.len && L.rc == IB_OK; i++) {
        const ib_chart_item *it = &out->items.data[i];
        if (it->role != IB_CHART_ROLE_BAR) continue;
        ib_chart_rect bar = it->box;
        int owner = it->owner;
        char buf[32];
        const char *t = s->value_labels ? s->value_labels[owner] : NULL;
        if (!t) {
            ib_rpt_fmt_compact(buf, sizeof buf, s->values[owner]);
            t = buf;
        }
        place_value_label(&L, t, &bar, owner);
    }
    if (isfinite(s->reference)) {
        ib_chart_item it;
        memset(&it, 0, sizeof it);
        it.kind = IB_CHART_LINE;
        it.role = IB_CHART_ROLE_REFERENCE;
        it.x0 = g.px0, it.x1 = g.px1, it.y0 = it.y1 = y_of(&g, s->reference);
        it.size = 1.3;
        it.dashed = true;
        it.color = 0x666666u;
        it.owner = -1;
        it.box = (ib_chart_rect){g.px0, it.y0 - 0.65, g.px1 - g.px0, 1.3};
        ch_add(&L, &it);
    }
    if (s->line_values) emit_overlay(&L, s, &g, cx);
    emit_categories(&L, s, &g, &cp);
    ch_legend(&L, legend, nl, H - CH_MARGIN - legend_h);
    return L.rc ? ib_err_set(err, L.rc, "bar chart layout: out of memory") : IB_OK;
}
