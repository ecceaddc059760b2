/*
 * test_report_layout.c - chart layout: the rectangles the layout functions return
 * for long system names, many systems and dense categories never overlap (text vs
 * text, value labels vs other bars, bars vs bars), stay on the canvas, and every
 * legend entry is present; wrapping/ellipsizing respect their width; SVG ids are
 * prefixed for inlining and the PNG is a real image.
 */
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/chart.h"
#include "report/chart_priv.h"
#include "test.h"

static ib_chart_measure *measure(void)
{
    ib_chart_measure *m = NULL;
    ib_err err;
    ASSERT_OK(ib_chart_measure_create(&m, &err));
    return m;
}

static bool inside(const ib_chart *c, const ib_chart_rect *r)
{
    return r->x >= -1e-9 && r->y >= -1e-9 && r->x + r->w <= c->width + 1e-9 &&
           r->y + r->h <= c->height + 1e-9;
}

/* The layout invariants; returns the number of text items checked. */
static size_t check_layout(const ib_chart *c)
{
    size_t texts = 0;
    for (size_t i = 0; i < c->items.len; i++) {
        const ib_chart_item *a = &c->items.data[i];
        if (a->kind == IB_CHART_TEXT) {
            texts++;
            if (!inside(c, &a->box))
                ib_test_fail(__FILE__, __LINE__, "text '%s' (%g,%g %gx%g) leaves the %gx%g canvas",
                             a->text, a->box.x, a->box.y, a->box.w, a->box.h, c->width, c->height);
        }
        for (size_t k = i + 1; k < c->items.len; k++) {
            const ib_chart_item *b = &c->items.data[k];
            bool tt = a->kind == IB_CHART_TEXT && b->kind == IB_CHART_TEXT;
            bool bb = a->role == IB_CHART_ROLE_BAR && b->role == IB_CHART_ROLE_BAR;
            bool vb = (a->role == IB_CHART_ROLE_VALUE && b->role == IB_CHART_ROLE_BAR &&
                       a->owner != b->owner) ||
                      (b->role == IB_CHART_ROLE_VALUE && a->role == IB_CHART_ROLE_BAR &&
                       a->owner != b->owner);
            bool lm = (a->role == IB_CHART_ROLE_LINE_VALUE && b->kind == IB_CHART_MARKER) ||
                      (b->role == IB_CHART_ROLE_LINE_VALUE && a->kind == IB_CHART_MARKER);
            if ((tt || bb || vb || lm) && ib_chart_rect_overlap(&a->box, &b->box))
                ib_test_fail(__FILE__, __LINE__, "items overlap: '%s' (role %d) and '%s' (role %d)",
                             a->text ? a->text : "(shape)", a->role, b->text ? b->text : "(shape)",
                             b->role);
        }
    }
    return texts;
}

static size_t count_role(const ib_chart *c, int role, bool vertical_only)
{
    size_t n = 0;
    for (size_t i = 0; i < c->items.len; i++)
        if (c->items.data[i].role == role && (!vertical_only || c->items.data[i].vertical)) n++;
    return n;
}

/* Build a groups x series spec with deterministic values and long names. */
typedef struct fixture {
    char gbuf[64][96];
    char sbuf[32][160];
    const char *groups[64];
    const char *series[32];
    double values[64 * 32];
    double line[64 * 32];
    ib_chart_bar_spec spec;
} fixture;

static void make_fixture(fixture *f, size_t ng, size_t ns, bool long_names, bool overlay)
{
    memset(f, 0, sizeof *f);
    static const char *const bench[] = {"resnet50", "ssd-resnet34", "bert-99", "bert-99.9",
                                        "dlrm-99",  "dlrm-99.9",    "rnnt",    "3d-unet-99.9"};
    for (size_t g = 0; g < ng; g++) {
        snprintf(f->gbuf[g], sizeof f->gbuf[g], "%s %s", bench[g % 8],
                 g % 2 ? "Server" : "Offline");
        f->groups[g] = f->gbuf[g];
    }
    for (size_t s = 0; s < ns; s++) {
        if (long_names)
            snprintf(f->sbuf[s], sizeof f->sbuf[s],
                     "Vendor PowerEdge XE%zu_H100-SXM-80GBx8_TensorRT_MaxQ_custom-build (8x "
                     "NVIDIA H100-SXM-80GB) - unverified",
                     9000 + s);
        else
            snprintf(f->sbuf[s], sizeof f->sbuf[s], "sys%zu", s);
        f->series[s] = f->sbuf[s];
    }
    for (size_t i = 0; i < ng * ns; i++) {
        f->values[i] = 0.5 + fmod((double)(i * 7919 % 1000) / 997.0 * 3.1, 3.2);
        f->line[i] = f->values[i] / (1.0 + (double)(i % 5) * 0.2);
    }
    ib_chart_bar_spec *sp = &f->spec;
    sp->title = "Relative performance and performance per cost vs a baseline with a long name";
    sp->subtitle = "MLPerf® Inference v1.1, closed division. Derived metrics computed by "
                   "inferbench, not MLPerf metrics.";
    sp->y_label = "relative to baseline";
    sp->n_groups = ng;
    sp->n_series = ns;
    sp->groups = f->groups;
    sp->series = f->series;
    sp->values = f->values;
    sp->line_values = overlay ? f->line : NULL;
    sp->line_legend = "relative performance per cost";
    sp->line_skip_series = 0;
    sp->reference = 1.0;
    sp->reference_legend = "baseline = 1.0";
}

TEST(report_layout_long_names_many_systems)
{
    ib_chart_measure *m = measure();
    static fixture f;
    make_fixture(&f, 13, 12, true, true);
    ib_chart ch;
    ib_err err;
    ASSERT_OK(ib_chart_bar_layout(&f.spec, m, &ch, &err));
    ASSERT_TRUE(check_layout(&ch) > 13);
    /* every system is in the legend (ellipsized), plus overlay and reference entries */
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_LEGEND, false), 12 + 2);
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_BAR, false), 13 * 12);
    /* every category is labelled (rotated where needed) */
    ASSERT_TRUE(count_role(&ch, IB_CHART_ROLE_CATEGORY, false) >= 13);
    ib_chart_deinit(&ch);
    ib_chart_measure_destroy(m);
}

TEST(report_layout_dense_drops_instead_of_overlapping)
{
    ib_chart_measure *m = measure();
    static fixture f;
    make_fixture(&f, 64, 32, false, true);
    f.spec.width = 960;
    ib_chart ch;
    ib_err err;
    ASSERT_OK(ib_chart_bar_layout(&f.spec, m, &ch, &err));
    check_layout(&ch);
    ASSERT_TRUE(ch.width <= 4800);
    ASSERT_TRUE(ch.dropped_labels > 0); /* bars of ~2 px cannot carry numbers */
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_LEGEND, false), 32 + 2);
    ib_chart_deinit(&ch);
    ib_chart_measure_destroy(m);
}

TEST(report_layout_long_categories_rotate)
{
    ib_chart_measure *m = measure();
    static fixture f;
    make_fixture(&f, 10, 2, false, false);
    for (size_t g = 0; g < 10; g++)
        snprintf(f.gbuf[g], sizeof f.gbuf[g],
                 "stable-diffusion-xl-with-a-very-long-name-%zu "
                 "SingleStream",
                 g);
    f.spec.width = 700;
    ib_chart ch;
    ib_err err;
    ASSERT_OK(ib_chart_bar_layout(&f.spec, m, &ch, &err));
    check_layout(&ch);
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_CATEGORY, true), 10);
    ASSERT_UINT_EQ(ch.dropped_labels, 0);
    ib_chart_deinit(&ch);
    /* short categories stay horizontal */
    make_fixture(&f, 2, 2, false, false);
    ASSERT_OK(ib_chart_bar_layout(&f.spec, m, &ch, &err));
    check_layout(&ch);
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_CATEGORY, true), 0);
    ASSERT_TRUE(count_role(&ch, IB_CHART_ROLE_CATEGORY, false) >= 2);
    ASSERT_TRUE(count_role(&ch, IB_CHART_ROLE_VALUE, false) == 4);
    ib_chart_deinit(&ch);
    ib_chart_measure_destroy(m);
}

TEST(report_layout_wrap_and_ellipsize)
{
    ib_chart_measure *m = measure();
    ib_chart c;
    ib_chart_init(&c);
    c.width = c.height = 500;
    ch_lay L = {&c, m, IB_OK};
    const char *lines[3];
    const char *name = "R7525_A100-PCIE-40GBx3_TRT Offline";
    size_t n = ch_wrap(&L, name, 12, false, 90, 3, lines);
    ASSERT_TRUE(n >= 2);
    for (size_t i = 0; i < n; i++)
        ASSERT_TRUE(ch_width(&L, lines[i], 12, false) <= 90);
    const char *e = ch_ellipsize(&L, name, 12, false, 100);
    ASSERT_TRUE(ch_width(&L, e, 12, false) <= 100);
    ASSERT_TRUE(strlen(e) < strlen(name));
    ASSERT_STR_CONTAINS(e, "\xE2\x80\xA6");
    ASSERT_PTR_EQ(ch_ellipsize(&L, "short", 12, false, 100), "short");
    /* multi-byte characters are never cut in half */
    const char *u =
        ch_ellipsize(&L, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 12, false, 30);
    for (const unsigned char *p = (const unsigned char *)u; *p; p++)
        if (*p == 0xC3) ASSERT_TRUE(p[1] >= 0x80 && p[1] < 0xC0);
    ch_ticks t;
    ch_nice_ticks(3.46 * 1.12, 5, &t);
    ASSERT_DBL_EQ(t.step, 1.0);
    ASSERT_DBL_EQ(t.top, 4.0);
    ch_nice_ticks(111791, 5, &t);
    ASSERT_DBL_EQ(t.step, 25000.0);
    char lab[32];
    ch_tick_label(&t, 75000, lab, sizeof lab);
    ASSERT_STR_EQ(lab, "75k");
    ch_tick_label(&t, 0, lab, sizeof lab);
    ASSERT_STR_EQ(lab, "0");
    ib_chart_deinit(&c);
    ib_chart_measure_destroy(m);
}

TEST(report_layout_latency_lines)
{
    ib_chart_measure *m = measure();
    static const double pct[6] = {50, 90, 95, 97, 99, 99.9};
    const char *series[10];
    char names[10][64];
    double v[60];
    for (size_t s = 0; s < 10; s++) {
        snprintf(names[s], sizeof names[s], "own-system-with-a-long-name-%zu", s);
        series[s] = names[s];
        for (size_t p = 0; p < 6; p++)
            v[s * 6 + p] = 5 + (double)p * 1.5 + (double)s * 0.05; /* nearly equal lines */
    }
    ib_chart_line_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.title = "resnet50 Server: latency percentiles (unverified)";
    spec.y_label = "latency (ms)";
    spec.n_points = 6;
    spec.percentiles = pct;
    spec.n_series = 10;
    spec.series = series;
    spec.values = v;
    spec.reference = 15;
    spec.reference_label = "latency bound 15 ms";
    ib_chart ch;
    ib_err err;
    ASSERT_OK(ib_chart_line_layout(&spec, m, &ch, &err));
    check_layout(&ch);
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_LEGEND, false), 11);
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_CATEGORY, false), 6); /* p50 .. p99.9 */
    ASSERT_UINT_EQ(count_role(&ch, IB_CHART_ROLE_MARKER, false), 60);
    ASSERT_TRUE(ch.dropped_labels > 0); /* ten p99.9 labels cannot all fit at one spot */
    ib_chart_deinit(&ch);
    ib_chart_measure_destroy(m);
}

TEST(report_layout_render_svg_png)
{
    ib_chart_measure *m = measure();
    static fixture f;
    make_fixture(&f, 3, 2, false, true);
    ib_chart ch;
    ib_err err;
    ASSERT_OK(ib_chart_bar_layout(&f.spec, m, &ch, &err));
    ib_strbuf svg;
    ib_strbuf_init(&svg);
    ASSERT_OK(ib_chart_render_svg(&ch, "c7-", &svg, &err));
    const char *s = ib_strbuf_cstr(&svg);
    ASSERT_TRUE(!strncmp(s, "<svg", 4)); /* no XML declaration inline */
    ASSERT_STR_CONTAINS(s, "id=\"c7-glyph");
    ASSERT_STR_CONTAINS(s, "href=\"#c7-glyph");
    ASSERT_TRUE(strstr(s, "id=\"glyph") == NULL);
    ib_strbuf_deinit(&svg);
    char path[4200];
    snprintf(path, sizeof path, "%s/c.png", ib_test_tmpdir());
    ASSERT_OK(ib_chart_render_png(&ch, path, &err));
    cairo_surface_t *img = cairo_image_surface_create_from_png(path);
    ASSERT_INT_EQ(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
    ASSERT_INT_EQ(cairo_image_surface_get_width(img), (int)ceil(ch.width * 2));
    /* the first bar's colour (Tableau blue 0x4E79A7) is present */
    cairo_surface_flush(img);
    const unsigned char *px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img), h = cairo_image_surface_get_height(img);
    size_t blue = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < cairo_image_surface_get_width(img); x++) {
            uint32_t p = *(const uint32_t *)(const void *)(px + y * stride + x * 4) & 0xFFFFFF;
            blue += p == 0x4E79A7;
        }
    ASSERT_TRUE(blue > 1000);
    cairo_surface_destroy(img);
    ib_chart_deinit(&ch);
    ASSERT_STATUS(ib_chart_render_png(&ch, "/nonexistent/dir/x.png", &err), IB_EIO);
    ib_chart_measure_destroy(m);
}
