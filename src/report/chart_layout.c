/*
 * chart_layout.c - the layout toolkit of the charts (see chart_priv.h): text is
 * measured with cairo's font metrics (DejaVu Sans, Debian fonts-dejavu-core), so
 * the boxes the layout reasons about are the boxes that get drawn. Every label is
 * checked against every label already placed before it is accepted.
 */
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "inferbench/report.h"
#include "report/chart_priv.h"
#include "report/rutil.h"

#define CH_FONT     "DejaVu Sans"
#define CH_ELLIPSIS "\xE2\x80\xA6" /* U+2026 */

struct ib_chart_measure {
    cairo_surface_t *surface;
    cairo_t *cr;
};

/* A 4x4 image surface is enough: only font metrics are asked of it. */
int ib_chart_measure_create(ib_chart_measure **out, ib_err *err)
{
    *out = NULL;
    ib_chart_measure *m = ib_calloc(1, sizeof *m);
    if (!m) return ib_err_set(err, IB_ENOMEM, "out of memory");
    m->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 4, 4);
    m->cr = cairo_create(m->surface);
    if (cairo_status(m->cr) != CAIRO_STATUS_SUCCESS) {
        ib_chart_measure_destroy(m);
        return ib_err_set(err, IB_ENOMEM, "cairo: cannot create a measuring context");
    }
    *out = m;
    return IB_OK;
}

void ib_chart_measure_destroy(ib_chart_measure *m)
{
    if (!m) return;
    if (m->cr) cairo_destroy(m->cr);
    if (m->surface) cairo_surface_destroy(m->surface);
    ib_free(m);
}

/*
 * Width is the advance of the string; height uses the font's ascent and descent (not
 * the ink extents) so every line of a size has the same box.
 */
void ib_chart_measure_text(ib_chart_measure *m, const char *text, double size, bool bold,
                           double *width, double *ascent, double *descent)
{
    cairo_select_font_face(m->cr, CH_FONT, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(m->cr, size);
    cairo_font_extents_t fe;
    cairo_font_extents(m->cr, &fe);
    if (width) {
        cairo_text_extents_t te;
        cairo_text_extents(m->cr, text ? text : "", &te);
        *width = te.x_advance;
    }
    if (ascent) *ascent = fe.ascent;
    if (descent) *descent = fe.descent;
}

void ib_report_shutdown(void)
{
    /* cairo's toy-font cache holds fontconfig patterns; both must go, in this order */
    cairo_debug_reset_static_data();
    FcFini();
}

void ib_chart_init(ib_chart *c)
{
    memset(c, 0, sizeof *c);
    ib_arena_init(&c->arena, 0);
}

void ib_chart_deinit(ib_chart *c)
{
    if (!c) return;
    IB_VEC_FREE(&c->items);
    ib_arena_deinit(&c->arena);
}

/* Strict overlap of two axis-aligned boxes. */
bool ib_chart_rect_overlap(const ib_chart_rect *a, const ib_chart_rect *b)
{
    /* touching edges do not count as overlap */
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* Series colours: Tableau 10, then the same hues darkened for series 10-19, and so on. */
uint32_t ib_chart_palette(size_t i)
{
    /* Tableau 10: distinguishable, print-safe; cycles with darker shades */
    static const uint32_t pal[] = {0x4E79A7, 0xF28E2B, 0x59A14F, 0xE15759, 0x76B7B2,
                                   0xEDC948, 0xB07AA1, 0xFF9DA7, 0x9C755F, 0xBAB0AC};
    uint32_t c = pal[i % IB_ARRAY_LEN(pal)];
    return (i / IB_ARRAY_LEN(pal)) % 2 ? ch_darken(c, 0.7) : c;
}

/* Scale each channel by f (0..1). */
uint32_t ch_darken(uint32_t rgb, double f)
{
    uint32_t r = (uint32_t)(((rgb >> 16) & 0xFF) * f), g = (uint32_t)(((rgb >> 8) & 0xFF) * f),
             b = (uint32_t)((rgb & 0xFF) * f);
    return (r << 16) | (g << 8) | b;
}

double ch_width(ch_lay *L, const char *s, double size, bool bold)
{
    double w = 0;
    ib_chart_measure_text(L->m, s, size, bold, &w, NULL, NULL);
    return w;
}

void ch_metrics(ch_lay *L, double size, double *ascent, double *descent)
{
    ib_chart_measure_text(L->m, "", size, false, NULL, ascent, descent);
}

/* Items are appended in drawing order; later items are drawn on top. */
int ch_add(ch_lay *L, const ib_chart_item *it)
{
    if (L->rc) return -1;
    if (IB_VEC_PUSH(&L->c->items, *it)) {
        L->rc = IB_ENOMEM;
        return -1;
    }
    return (int)L->c->items.len - 1;
}

/*
 * The box a text occupies when drawn at baseline origin (x, y); vertical text is rotated
 * -90 degrees about the origin, so it extends upwards from y and to the left of x.
 */
ib_chart_rect ch_text_box(ch_lay *L, const char *s, double x, double y, double size, bool bold,
                          bool vertical)
{
    double w = 0, asc = 0, desc = 0;
    ib_chart_measure_text(L->m, s, size, bold, &w, &asc, &desc);
    ib_chart_rect r;
    if (vertical) /* rotated -90 degrees about the origin: the text runs upwards */
        r = (ib_chart_rect){x - asc, y - w, asc + desc, w};
    else
        r = (ib_chart_rect){x, y - asc, w, asc + desc};
    return r;
}

/* Add a text item without checking collisions (callers check with ch_collides first). */
int ch_text(ch_lay *L, const char *s, double x, double y, double size, bool bold, uint32_t color,
            int role, bool vertical, int owner)
{
    ib_chart_item it;
    memset(&it, 0, sizeof it);
    it.kind = IB_CHART_TEXT;
    it.role = role;
    it.box = ch_text_box(L, s, x, y, size, bold, vertical);
    it.x0 = x;
    it.y0 = y;
    it.color = color;
    it.size = size;
    it.bold = bold;
    it.vertical = vertical;
    it.owner = owner;
    it.text = ib_arena_strdup(&L->c->arena, s);
    if (!it.text) {
        L->rc = IB_ENOMEM;
        return -1;
    }
    return ch_add(L, &it);
}

/*
 * Collision against every text placed so far and, when asked, every bar except the
 * label's own one.
 */
bool ch_collides(ch_lay *L, const ib_chart_rect *r, bool check_bars, int owner)
{
    for (size_t i = 0; i < L->c->items.len; i++) {
        const ib_chart_item *it = &L->c->items.data[i];
        bool text = it->kind == IB_CHART_TEXT;
        bool bar = check_bars && it->role == IB_CHART_ROLE_BAR && it->owner != owner;
        if ((text || bar) && ib_chart_rect_overlap(r, &it->box)) return true;
    }
    return false;
}

bool ch_inside(ch_lay *L, const ib_chart_rect *r)
{
    return r->x >= 0 && r->y >= 0 && r->x + r->w <= L->c->width && r->y + r->h <= L->c->height;
}

/*
 * Binary search over UTF-8 character boundaries for the longest prefix that fits
 * together with the ellipsis; never splits a multi-byte character.
 */
const char *ch_ellipsize(ch_lay *L, const char *s, double size, bool bold, double max_w)
{
    if (ch_width(L, s, size, bold) <= max_w) return s;
    size_t n = strlen(s);
    char *buf = ib_arena_alloc(&L->c->arena, n + 4);
    size_t *bounds = ib_arena_alloc(&L->c->arena, (n + 1) * sizeof(size_t));
    if (!buf || !bounds) {
        L->rc = IB_ENOMEM;
        return s;
    }
    /* character boundaries of the UTF-8 string: candidate cut points */
    size_t nb = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || ((unsigned char)s[i] & 0xC0) != 0x80) bounds[nb++] = i;
    /* largest k with prefix(bounds[k]) + "..." fitting; k = 0 (just the ellipsis) at least */
    size_t lo = 0, hi = nb - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        memcpy(buf, s, bounds[mid]);
        memcpy(buf + bounds[mid], CH_ELLIPSIS, 4);
        if (ch_width(L, buf, size, bold) <= max_w)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t cut = bounds[lo];
    while (cut && s[cut - 1] == ' ')
        cut--;
    memcpy(buf, s, cut);
    memcpy(buf + cut, CH_ELLIPSIS, 4);
    return buf;
}

/* Characters after which a label may wrap (system ids use _ and -). */
static bool is_break(char c)
{
    return c == ' ' || c == '-' || c == '_' || c == '/' || c == '.' || c == ',';
}

/*
 * Greedy line filling over break points; a chunk longer than max_w, or text left over
 * for the last allowed line, is ellipsized.
 */
size_t ch_wrap(ch_lay *L, const char *s, double size, bool bold, double max_w, size_t max_lines,
               const char **lines)
{
    size_t n = strlen(s), start = 0, count = 0;
    char *buf = ib_arena_alloc(&L->c->arena, n + 1);
    if (!buf || !max_lines) {
        L->rc = buf ? L->rc : IB_ENOMEM;
        return 0;
    }
    while (start < n && count < max_lines) {
        while (start < n && s[start] == ' ')
            start++;
        if (start >= n) break;
        /* the longest run of whole chunks that fits */
        size_t best = 0;
        for (size_t end = start + 1; end <= n; end++) {
            if (end < n && !is_break(s[end - 1])) continue;
            memcpy(buf, s + start, end - start);
            buf[end - start] = '\0';
            size_t t = end - start;
            while (t && buf[t - 1] == ' ')
                buf[--t] = '\0';
            if (ch_width(L, buf, size, bold) <= max_w)
                best = end;
            else
                break;
        }
        bool last = count + 1 == max_lines;
        if (!best || (last && best < n)) {
            /* nothing fits whole, or this is the last line: ellipsize the rest */
            char *rest = ib_arena_strdup(&L->c->arena, s + start);
            if (!rest) {
                L->rc = IB_ENOMEM;
                return count;
            }
            lines[count++] = ch_ellipsize(L, ib_rpt_trim(rest), size, bold, max_w);
            break;
        }
        char *line = ib_arena_strndup(&L->c->arena, s + start, best - start);
        if (!line) {
            L->rc = IB_ENOMEM;
            return count;
        }
        lines[count++] = ib_rpt_trim(line);
        start = best;
    }
    return count;
}

/*
 * Steps of 1, 2, 2.5 or 5 x 10^k; decimals is the smallest count that prints the step
 * exactly; compact (k/M suffixes) from 10000 up.
 */
void ch_nice_ticks(double max, int target, ch_ticks *t)
{
    if (!(max > 0) || !isfinite(max)) max = 1;
    double raw = max / (target > 0 ? target : 5);
    double mag = pow(10, floor(log10(raw)));
    double norm = raw / mag;
    double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
    t->step = step;
    t->n = (int)ceil(max / step - 1e-9);
    if (t->n < 1) t->n = 1;
    t->top = t->n * step;
    t->decimals = 0;
    for (int d = 0; d <= 6; d++) {
        double s = step * pow(10, d);
        if (fabs(s - round(s)) < 1e-6 * s) {
            t->decimals = d;
            break;
        }
        t->decimals = d;
    }
    t->compact = t->top >= 10000;
}

/* Format a tick value with the axis' precision; 0 prints as "0". */
void ch_tick_label(const ch_ticks *t, double v, char *out, size_t cap)
{
    if (v == 0) {
        snprintf(out, cap, "0");
        return;
    }
    if (!t->compact) {
        snprintf(out, cap, "%.*f", t->decimals, v);
        return;
    }
    static const char *const suffix[] = {"", "k", "M", "G", "T"};
    int k = 0;
    double s = t->step;
    while (fabs(t->top) >= 1000 && k < 4 && s >= 1) {
        v /= 1000;
        s /= 1000;
        k++;
        if (t->top / pow(1000, k) < 1000) break;
    }
    int dec = 0;
    while (dec < 3 && fabs(s * pow(10, dec) - round(s * pow(10, dec))) > 1e-6)
        dec++;
    snprintf(out, cap, "%.*f%s", dec, v, suffix[k]);
}

/* Bold title (up to 2 lines) and muted subtitle (up to 3 lines), wrapped to the canvas. */
double ch_title(ch_lay *L, const char *title, const char *subtitle)
{
    double y = CH_MARGIN, asc, desc;
    double max_w = L->c->width - 2 * CH_MARGIN;
    const char *lines[CH_MAX_LINES];
    if (title && title[0]) {
        ch_metrics(L, CH_TITLE_SIZE, &asc, &desc);
        size_t n = ch_wrap(L, title, CH_TITLE_SIZE, true, max_w, 2, lines);
        for (size_t i = 0; i < n; i++) {
            y += asc;
            ch_text(L, lines[i], CH_MARGIN, y, CH_TITLE_SIZE, true, CH_TEXT_COLOR,
                    IB_CHART_ROLE_TITLE, false, -1);
            y += desc + 2;
        }
    }
    if (subtitle && subtitle[0]) {
        ch_metrics(L, CH_SUBTITLE_SIZE, &asc, &desc);
        size_t n = ch_wrap(L, subtitle, CH_SUBTITLE_SIZE, false, max_w, CH_MAX_LINES, lines);
        for (size_t i = 0; i < n; i++) {
            y += asc;
            ch_text(L, lines[i], CH_MARGIN, y, CH_SUBTITLE_SIZE, false, CH_MUTED_COLOR,
                    IB_CHART_ROLE_SUBTITLE, false, -1);
            y += desc + 1;
        }
    }
    return y + 8;
}

#define LEGEND_SWATCH  14.0
#define LEGEND_GAP     6.0
#define LEGEND_SPACING 18.0
#define LEGEND_ROW     20.0

/* Longest legend text before it is ellipsized (full names are in the tables). */
static double legend_text_max(ch_lay *L)
{
    return fmax(80, fmin(640, (L->c->width - 2 * CH_MARGIN) * 0.6));
}

/* Walk the legend rows; emit items when `emit`, return the total height. */
static double legend_flow(ch_lay *L, const ch_legend_entry *e, size_t n, double y, bool emit)
{
    if (!n) return 0;
    double asc, desc;
    ch_metrics(L, CH_LEGEND_SIZE, &asc, &desc);
    double x = CH_MARGIN, right = L->c->width - CH_MARGIN;
    double rows = 1;
    for (size_t i = 0; i < n; i++) {
        const char *t = ch_ellipsize(L, e[i].text, CH_LEGEND_SIZE, false, legend_text_max(L));
        double w = LEGEND_SWATCH + LEGEND_GAP + ch_width(L, t, CH_LEGEND_SIZE, false);
        if (x > CH_MARGIN && x + w > right) {
            x = CH_MARGIN;
            y += LEGEND_ROW;
            rows++;
        }
        if (emit) {
            double cy = y + LEGEND_ROW / 2;
            ib_chart_item it;
            memset(&it, 0, sizeof it);
            it.owner = -1;
            it.color = e[i].color;
            it.role = IB_CHART_ROLE_SWATCH;
            if (e[i].style == 0) {
                it.kind = IB_CHART_BOX;
                it.box = (ib_chart_rect){x, cy - LEGEND_SWATCH / 2, LEGEND_SWATCH, LEGEND_SWATCH};
            } else {
                it.kind = IB_CHART_LINE;
                it.x0 = x, it.x1 = x + LEGEND_SWATCH, it.y0 = it.y1 = cy;
                it.size = 2;
                it.dashed = e[i].style == 2;
                it.box = (ib_chart_rect){x, cy - 1, LEGEND_SWATCH, 2};
            }
            ch_add(L, &it);
            if (e[i].style == 1) {
                ib_chart_item mk = it;
                mk.kind = IB_CHART_MARKER;
                mk.x0 = x + LEGEND_SWATCH / 2, mk.y0 = cy, mk.size = 4;
                mk.box = (ib_chart_rect){mk.x0 - 4, cy - 4, 8, 8};
                ch_add(L, &mk);
            }
            ch_text(L, t, x + LEGEND_SWATCH + LEGEND_GAP, cy + (asc - desc) / 2, CH_LEGEND_SIZE,
                    false, CH_TEXT_COLOR, IB_CHART_ROLE_LEGEND, false, -1);
        }
        x += w + LEGEND_SPACING;
    }
    return rows * LEGEND_ROW;
}

double ch_legend_height(ch_lay *L, const ch_legend_entry *e, size_t n, double w)
{
    double saved = L->c->width;
    L->c->width = w;
    double h = legend_flow(L, e, n, 0, false);
    L->c->width = saved;
    return h;
}

void ch_legend(ch_lay *L, const ch_legend_entry *e, size_t n, double y)
{
    legend_flow(L, e, n, y, true);
}
