/*
 * chart_render.c - the single drawing path of the charts: one function walks the
 * laid-out items and draws them on a cairo context; SVG (cairo's SVG surface,
 * written into memory) and PNG (an image surface at 2x for sharp text) both come
 * from it. Inline SVGs get their ids prefixed so several charts can share one
 * HTML document without glyph or clip-path id clashes.
 */
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <string.h>

#include "base/common.h"
#include "report/chart.h"

#define RENDER_PI 3.14159265358979323846
#define PNG_SCALE 2.0

/* 0xRRGGBB -> cairo source colour. */
static void set_rgb(cairo_t *cr, uint32_t c)
{
    cairo_set_source_rgb(cr, ((c >> 16) & 0xFF) / 255.0, ((c >> 8) & 0xFF) / 255.0,
                         (c & 0xFF) / 255.0);
}

/* Text at its baseline origin; vertical text is drawn in a rotated frame. */
static void draw_text(cairo_t *cr, const ib_chart_item *it)
{
    if (it->background) {
        cairo_set_source_rgba(cr, 1, 1, 1, 0.88);
        cairo_rectangle(cr, it->box.x - 2, it->box.y - 1, it->box.w + 4, it->box.h + 2);
        cairo_fill(cr);
    }
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           it->bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, it->size);
    set_rgb(cr, it->color);
    if (it->vertical) {
        cairo_save(cr);
        cairo_translate(cr, it->x0, it->y0);
        cairo_rotate(cr, -RENDER_PI / 2);
        cairo_move_to(cr, 0, 0);
        cairo_show_text(cr, it->text);
        cairo_restore(cr);
    } else {
        cairo_move_to(cr, it->x0, it->y0);
        cairo_show_text(cr, it->text);
    }
}

/* The one drawing path shared by SVG and PNG: white page, then the items in order. */
static void draw(const ib_chart *c, cairo_t *cr)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, 0, 0, c->width, c->height);
    cairo_fill(cr);
    for (size_t i = 0; i < c->items.len; i++) {
        const ib_chart_item *it = &c->items.data[i];
        switch (it->kind) {
        case IB_CHART_BOX:
            set_rgb(cr, it->color);
            cairo_rectangle(cr, it->box.x, it->box.y, it->box.w, it->box.h);
            cairo_fill(cr);
            break;
        case IB_CHART_LINE: {
            set_rgb(cr, it->color);
            cairo_set_line_width(cr, it->size > 0 ? it->size : 1);
            double dash[] = {5, 4};
            cairo_set_dash(cr, dash, it->dashed ? 2 : 0, 0);
            cairo_move_to(cr, it->x0, it->y0);
            cairo_line_to(cr, it->x1, it->y1);
            cairo_stroke(cr);
            cairo_set_dash(cr, dash, 0, 0);
            break;
        }
        case IB_CHART_MARKER: {
            double r = it->size;
            cairo_move_to(cr, it->x0, it->y0 - r);
            cairo_line_to(cr, it->x0 + r, it->y0);
            cairo_line_to(cr, it->x0, it->y0 + r);
            cairo_line_to(cr, it->x0 - r, it->y0);
            cairo_close_path(cr);
            set_rgb(cr, it->color);
            cairo_fill_preserve(cr);
            cairo_set_source_rgb(cr, 1, 1, 1);
            cairo_set_line_width(cr, 1);
            cairo_stroke(cr);
            break;
        }
        case IB_CHART_TEXT:
            draw_text(cr, it);
            break;
        default:
            break;
        }
    }
}

/* cairo stream callback: collect the SVG in memory. */
static cairo_status_t svg_write(void *closure, const unsigned char *data, unsigned int len)
{
    return ib_strbuf_append(closure, data, len) ? CAIRO_STATUS_NO_MEMORY : CAIRO_STATUS_SUCCESS;
}

/* Copy cairo's SVG, dropping the XML declaration and prefixing every id reference. */
static int prefix_ids(const char *svg, const char *prefix, ib_strbuf *out)
{
    const char *p = svg;
    if (!strncmp(p, "<?xml", 5)) {
        const char *e = strstr(p, "?>");
        p = e ? e + 2 : p;
        while (*p == '\n' || *p == '\r')
            p++;
    }
    static const char *const pats[] = {"id=\"", "href=\"#", "url(#"};
    while (*p) {
        size_t best = (size_t)-1, bi = 0;
        for (size_t k = 0; k < IB_ARRAY_LEN(pats); k++) {
            const char *f = strstr(p, pats[k]);
            if (f && (size_t)(f - p) < best) best = (size_t)(f - p), bi = k;
        }
        if (best == (size_t)-1) {
            ib_strbuf_puts(out, p);
            break;
        }
        size_t pl = strlen(pats[bi]);
        ib_strbuf_append(out, p, best + pl);
        ib_strbuf_puts(out, prefix);
        p += best + pl;
    }
    return out->oom ? IB_ENOMEM : IB_OK;
}

int ib_chart_render_svg(const ib_chart *c, const char *id_prefix, ib_strbuf *out, ib_err *err)
{
    ib_strbuf raw;
    ib_strbuf_init(&raw);
    cairo_surface_t *sf = cairo_svg_surface_create_for_stream(svg_write, &raw, c->width, c->height);
    cairo_svg_surface_set_document_unit(sf, CAIRO_SVG_UNIT_PX);
    cairo_t *cr = cairo_create(sf);
    draw(c, cr);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_finish(sf);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(sf);
    cairo_surface_destroy(sf);
    int rc = IB_OK;
    if (st != CAIRO_STATUS_SUCCESS || raw.oom)
        rc = ib_err_set(err, raw.oom ? IB_ENOMEM : IB_EIO, "cairo SVG rendering failed: %s",
                        cairo_status_to_string(st));
    else if (id_prefix)
        rc = prefix_ids(ib_strbuf_cstr(&raw), id_prefix, out);
    else
        rc = ib_strbuf_append(out, raw.data ? raw.data : "", raw.len);
    if (rc == IB_ENOMEM) ib_err_set(err, rc, "out of memory rendering SVG");
    ib_strbuf_deinit(&raw);
    return rc;
}

int ib_chart_render_png(const ib_chart *c, const char *path, ib_err *err)
{
    int w = (int)ceil(c->width * PNG_SCALE), h = (int)ceil(c->height * PNG_SCALE);
    cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    cairo_t *cr = cairo_create(sf);
    cairo_scale(cr, PNG_SCALE, PNG_SCALE);
    draw(c, cr);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_write_to_png(sf, path);
    cairo_surface_destroy(sf);
    if (st != CAIRO_STATUS_SUCCESS)
        return ib_err_set(err, IB_EIO, "%s: cannot write PNG: %s", path,
                          cairo_status_to_string(st));
    return IB_OK;
}
