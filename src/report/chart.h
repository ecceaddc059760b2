/*
 * chart.h - charts as a list of positioned items (text, boxes, lines, markers),
 * computed by a layout pass that measures text and guarantees that no two labels
 * overlap (long names are wrapped, rotated or abbreviated; labels that cannot be
 * placed are dropped, the numbers stay in the report's tables). One drawing pass
 * (chart_render.c, cairo) turns the same item list into SVG and PNG.
 *
 * Coordinates are pixels, origin top-left, y down. Internal to src/report.
 */
#ifndef IB_REPORT_CHART_H
#define IB_REPORT_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "inferbench/status.h"

typedef struct ib_chart_rect {
    double x, y, w, h;
} ib_chart_rect;

enum ib_chart_kind {
    IB_CHART_TEXT = 1,
    IB_CHART_BOX = 2,    /* filled rectangle: bar, legend swatch */
    IB_CHART_LINE = 3,   /* segment x0,y0 -> x1,y1 */
    IB_CHART_MARKER = 4, /* diamond centred on x0,y0 with radius `size` */
};

enum ib_chart_role {
    IB_CHART_ROLE_TITLE = 1,
    IB_CHART_ROLE_SUBTITLE,
    IB_CHART_ROLE_AXIS_LABEL,
    IB_CHART_ROLE_TICK,
    IB_CHART_ROLE_CATEGORY,
    IB_CHART_ROLE_LEGEND,
    IB_CHART_ROLE_VALUE,      /* number over a bar; owner = bar index */
    IB_CHART_ROLE_LINE_VALUE, /* number next to a line marker */
    IB_CHART_ROLE_BAR,        /* owner = bar index */
    IB_CHART_ROLE_SWATCH,
    IB_CHART_ROLE_GRID,
    IB_CHART_ROLE_AXIS,
    IB_CHART_ROLE_SERIES_LINE,
    IB_CHART_ROLE_MARKER,
    IB_CHART_ROLE_REFERENCE,
};

typedef struct ib_chart_item {
    int kind;
    int role;
    ib_chart_rect box;     /* axis-aligned bounds as drawn */
    double x0, y0, x1, y1; /* line ends; text: baseline origin */
    uint32_t color;        /* 0xRRGGBB */
    double size;           /* font size, line width or marker radius */
    bool bold;
    bool vertical; /* text rotated 90 degrees counter-clockwise */
    bool dashed;
    bool background;  /* text on a white box (line values over bars) */
    const char *text; /* arena string for text items */
    int owner;        /* bar index for bars and their value labels, else -1 */
} ib_chart_item;

typedef struct ib_chart {
    ib_arena arena;
    IB_VEC(ib_chart_item) items;
    double width, height;
    size_t dropped_labels; /* labels that could not be placed without overlap */
} ib_chart;

/* Text measurement: advance width and the font's ascent/descent at `size`. */
typedef struct ib_chart_measure ib_chart_measure;
int ib_chart_measure_create(ib_chart_measure **out, ib_err *err); /* cairo + DejaVu Sans */
void ib_chart_measure_destroy(ib_chart_measure *m);
void ib_chart_measure_text(ib_chart_measure *m, const char *text, double size, bool bold,
                           double *width, double *ascent, double *descent);

void ib_chart_init(ib_chart *c);
void ib_chart_deinit(ib_chart *c);

/* Grouped bars (groups x series) with an optional line overlay per series. */
typedef struct ib_chart_bar_spec {
    const char *title;
    const char *subtitle;
    const char *y_label;
    size_t n_groups, n_series;
    const char *const *groups;       /* n_groups category labels */
    const char *const *series;       /* n_series legend labels */
    const uint32_t *colors;          /* n_series colours, NULL = palette */
    const double *values;            /* [g * n_series + s]; NaN = no bar */
    const char *const *value_labels; /* same shape, NULL entries/array = compact number */
    const double *line_values;       /* optional overlay, same shape; NaN = no point */
    const char *const *line_labels;  /* optional overlay labels */
    const char *line_legend;         /* legend text of the overlay */
    int line_skip_series;            /* series without overlay (it is the reference), -1 */
    double reference;                /* dashed horizontal line, NaN = none */
    const char *reference_legend;    /* legend text of the reference line */
    double width, height;            /* 0 = defaults; the canvas grows to fit */
} ib_chart_bar_spec;

/* Lines over latency percentiles (x on a -log10(1 - p) scale). */
typedef struct ib_chart_line_spec {
    const char *title;
    const char *subtitle;
    const char *y_label;
    size_t n_points, n_series;
    const double *percentiles; /* n_points, e.g. 50 .. 99.9 */
    const char *const *series;
    const double *values; /* [s * n_points + p], NaN = missing */
    double reference;     /* e.g. the latency bound, NaN = none */
    const char *reference_label;
    double width, height;
} ib_chart_line_spec;

int ib_chart_bar_layout(const ib_chart_bar_spec *spec, ib_chart_measure *m, ib_chart *out,
                        ib_err *err);
int ib_chart_line_layout(const ib_chart_line_spec *spec, ib_chart_measure *m, ib_chart *out,
                         ib_err *err);

/* Render through cairo: SVG text into `out` (ids prefixed with id_prefix), or a PNG file. */
int ib_chart_render_svg(const ib_chart *c, const char *id_prefix, ib_strbuf *out, ib_err *err);
int ib_chart_render_png(const ib_chart *c, const char *path, ib_err *err);

/* Geometry helpers (also used by tests). */
bool ib_chart_rect_overlap(const ib_chart_rect *a, const ib_chart_rect *b);
uint32_t ib_chart_palette(size_t i);

#endif
