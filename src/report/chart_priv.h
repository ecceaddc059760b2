/*
 * chart_priv.h - layout helpers shared by the bar and line layouts: measured
 * text items, collision tests against every placed label, wrapping and
 * ellipsizing, nice axis ticks, titles and legends. Internal to src/report.
 */
#ifndef IB_REPORT_CHART_PRIV_H
#define IB_REPORT_CHART_PRIV_H

#include "report/chart.h"

#define CH_MARGIN        16.0
#define CH_TITLE_SIZE    16.0
#define CH_SUBTITLE_SIZE 12.0
#define CH_TICK_SIZE     11.0
#define CH_CATEGORY_SIZE 12.0
#define CH_LEGEND_SIZE   12.0
#define CH_VALUE_SIZE    10.5
#define CH_MIN_FONT      8.0
#define CH_TEXT_COLOR    0x222222u
#define CH_MUTED_COLOR   0x555555u
#define CH_GRID_COLOR    0xDDDDDDu
#define CH_MAX_LINES     3

typedef struct ch_lay {
    ib_chart *c;
    ib_chart_measure *m;
    int rc; /* first error (OOM), latched */
} ch_lay;

typedef struct ch_ticks {
    double top; /* axis maximum (a multiple of step) */
    double step;
    int n; /* ticks 0..n, value k * step */
    int decimals;
    bool compact;
} ch_ticks;

/* Width and line height (ascent + descent) of a string. */
double ch_width(ch_lay *L, const char *s, double size, bool bold);
void ch_metrics(ch_lay *L, double size, double *ascent, double *descent);

/* Add a generic item; returns its index or -1 (error latched). */
int ch_add(ch_lay *L, const ib_chart_item *it);
/* Box a text would occupy: horizontal at baseline origin, or vertical (reads upwards). */
ib_chart_rect ch_text_box(ch_lay *L, const char *s, double x, double y, double size, bool bold,
                          bool vertical);
/* Add text at a baseline origin (copied into the arena). Returns the index or -1. */
int ch_text(ch_lay *L, const char *s, double x, double y, double size, bool bold, uint32_t color,
            int role, bool vertical, int owner);
/* True when r overlaps a placed text, or a bar other than `owner` when check_bars. */
bool ch_collides(ch_lay *L, const ib_chart_rect *r, bool check_bars, int owner);
/* True when r lies inside the canvas. */
bool ch_inside(ch_lay *L, const ib_chart_rect *r);

/*
 * Break s into at most max_lines lines no wider than max_w (after spaces, '-', '_',
 * '/', '.'); the last line is ellipsized when the text does not fit. Lines are arena
 * strings. Returns the line count (0 on error).
 */
size_t ch_wrap(ch_lay *L, const char *s, double size, bool bold, double max_w, size_t max_lines,
               const char **lines);
/* s shortened with a trailing "…" to fit max_w (arena string; s itself when it fits). */
const char *ch_ellipsize(ch_lay *L, const char *s, double size, bool bold, double max_w);

/* Ticks from 0 to >= max (about `target` intervals). */
void ch_nice_ticks(double max, int target, ch_ticks *t);
void ch_tick_label(const ch_ticks *t, double v, char *out, size_t cap);

/* Title and subtitle at the top; returns the y below them. */
double ch_title(ch_lay *L, const char *title, const char *subtitle);

/* Legend entries laid out in rows, bottom-aligned above y_bottom. */
typedef struct ch_legend_entry {
    const char *text;
    uint32_t color;
    int style; /* 0 box, 1 line + marker, 2 dashed line */
} ch_legend_entry;
/* Height the legend needs for canvas width w. */
double ch_legend_height(ch_lay *L, const ch_legend_entry *e, size_t n, double w);
/* Emit the legend with its top at y. */
void ch_legend(ch_lay *L, const ch_legend_entry *e, size_t n, double y);

uint32_t ch_darken(uint32_t rgb, double f);

#endif
