/*
 * html.c - report.html: one self-contained file (inline CSS and SVG, no script,
 * no external URL) with the result table ("unverified" next to each unverified
 * score), the comparison table against the baseline, every chart with a text
 * caption, the system descriptions side by side (differences highlighted) and the
 * MLCommons-required footnotes as text (users.md §3.3).
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "inferbench/version.h"
#include "report/charts.h"
#include "report/fmt.h"
#include "report/notes.h"
#include "report/report_impl.h"
#include "report/rutil.h"

/* HTML-escape text and attribute values. */
static void esc(ib_strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            ib_strbuf_puts(sb, "&lt;");
            break;
        case '>':
            ib_strbuf_puts(sb, "&gt;");
            break;
        case '&':
            ib_strbuf_puts(sb, "&amp;");
            break;
        case '"':
            ib_strbuf_puts(sb, "&quot;");
            break;
        default:
            ib_strbuf_putc(sb, *s);
        }
    }
}

static const char k_css[] =
    "body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;margin:24px auto;max-width:1280px;"
    "padding:0 16px;color:#222;line-height:1.4}"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}"
    ".meta{color:#555;font-size:.9em}"
    "table{border-collapse:collapse;margin:.6em 0;font-size:.88em}"
    "th,td{border:1px solid #ccc;padding:3px 7px;vertical-align:top}"
    "th{background:#f2f2f2;text-align:left}td.num{text-align:right;white-space:nowrap}"
    "tr.invalid td{background:#fdecea}tr.diff td{background:#fff6d6}"
    ".unv{color:#a15c00;font-size:.8em;font-weight:bold;margin-left:.3em}"
    ".bad{color:#b00020;font-weight:bold}"
    "figure.chart{margin:1.2em 0;border:1px solid #e2e2e2;padding:8px;overflow-x:auto}"
    "figure.chart svg{max-width:100%;height:auto;display:block}"
    "figcaption{font-size:.85em;color:#444;margin-top:.4em}"
    "ol.notes li{margin-bottom:.4em;font-size:.88em}"
    ".systems td{max-width:320px;word-break:break-word}"
    "footer{margin-top:2em;font-size:.8em;color:#555}"
    "p.headline{font-size:1.15em;font-weight:bold;margin:.3em 0}"
    "div.labels{border:2px solid #b00020;background:#fff4f4;padding:6px 12px;margin:1em 0}"
    ".lab{color:#b00020;font-size:.8em;display:block}";

/* A right-aligned number cell: kind 0 result, 1 ratio, 2 four significant digits. */
static void num_cell(ib_strbuf *sb, double v, int kind)
{
    char b[64];
    if (kind == 0)
        ib_rpt_fmt_result(b, sizeof b, v);
    else if (kind == 1)
        ib_rpt_fmt_ratio(b, sizeof b, v);
    else
        ib_rpt_fmt_sig(b, sizeof b, v, 4);
    ib_strbuf_printf(sb, "<td class=\"num\">%s</td>", isfinite(v) ? b : "&ndash;");
}

/*
 * The systems table at the top: what MLCommons requires next to every comparison
 * (submitter, version, division, category, chip count) plus status and price.
 */
static void systems_overview(const ib_report *rep, ib_strbuf *sb)
{
    ib_strbuf_puts(sb, "<section id=\"overview\"><h2>Systems</h2>\n<table class=\"overview\">"
                       "<tr><th>System</th><th>Name</th><th>Submitter</th><th>MLPerf version"
                       "</th><th>Division</th><th>Category</th><th>Chips</th><th>Host CPU</th>"
                       "<th>Status</th><th>Price</th></tr>\n");
    for (size_t i = 0; i < rep->systems.len; i++) {
        const ib_report_system *s = &rep->systems.data[i];
        const char *ver = "";
        for (size_t k = 0; k < rep->results.len; k++)
            if (rep->results.data[k].system == i) ver = rep->results.data[k].run.version;
        ib_strbuf_puts(sb, "<tr><td>");
        esc(sb, s->id);
        if (i == rep->baseline) ib_strbuf_puts(sb, " <b>(baseline)</b>");
        ib_strbuf_puts(sb, "</td><td>");
        esc(sb, s->name);
        ib_strbuf_puts(sb, "</td><td>");
        esc(sb, s->submitter[0] ? s->submitter : "\xE2\x80\x93");
        ib_strbuf_puts(sb, "</td><td>");
        esc(sb, ver[0] ? ver : "unknown");
        ib_strbuf_puts(sb, "</td><td>");
        esc(sb, s->division[0] ? s->division : "\xE2\x80\x93");
        ib_strbuf_puts(sb, "</td><td>");
        esc(sb, s->status[0] ? s->status : "\xE2\x80\x93");
        ib_strbuf_puts(sb, "</td><td>");
        if (s->chips > 0) {
            ib_strbuf_printf(sb, "%d x ", s->chips);
            esc(sb, s->chip_kind);
        } else {
            ib_strbuf_puts(sb, "unknown");
        }
        ib_strbuf_puts(sb, "</td><td>");
        esc(sb, s->host_cpu[0] ? s->host_cpu : "\xE2\x80\x93");
        ib_strbuf_puts(sb, "</td><td>");
        if (s->published) {
            ib_strbuf_puts(sb, "published MLPerf result");
            if (s->result_id[0]) {
                ib_strbuf_puts(sb, ", ID ");
                esc(sb, s->result_id);
            }
        } else {
            ib_strbuf_puts(sb, "<span class=\"unv\">unverified</span>");
        }
        ib_strbuf_puts(sb, "</td><td>");
        if (s->has_price) {
            char b[64];
            ib_rpt_fmt_result(b, sizeof b, s->price);
            ib_strbuf_printf(sb, "%s ", b);
            esc(sb, s->currency);
            ib_strbuf_puts(sb, " (");
            esc(sb, s->price_date);
            ib_strbuf_puts(sb, ")");
        } else {
            ib_strbuf_puts(sb, "&ndash;");
        }
        ib_strbuf_puts(sb, "</td></tr>\n");
    }
    ib_strbuf_puts(sb, "</table></section>\n");
}

/* Every result row; unverified scores carry the "unverified" mark next to the number. */
static void results_table(const ib_report *rep, ib_strbuf *sb)
{
    ib_strbuf_puts(sb, "<section id=\"results\"><h2>All results</h2>\n<table class=\"results\">"
                       "<tr><th>Benchmark</th><th>Scenario</th><th>System</th><th>Result</th>"
                       "<th>Unit</th><th>Validity</th><th>Accuracy</th><th>Relative perf.</th>"
                       "<th>Relative perf. per cost</th><th>Cost per 1M inferences</th>"
                       "<th>Perf/W</th></tr>\n");
    for (size_t i = 0; i < rep->results.len; i++) {
        const ib_report_result *r = &rep->results.data[i];
        const ib_report_system *s = &rep->systems.data[r->system];
        bool valid = r->run.validity == IB_REPORT_VALIDITY_VALID;
        ib_strbuf_printf(sb, "<tr%s><td>", valid ? "" : " class=\"invalid\"");
        esc(sb, r->benchmark);
        ib_strbuf_printf(sb, "</td><td>%s</td><td>", ib_report_scenario_name(r->scenario));
        esc(sb, s->id);
        char b[64];
        ib_rpt_fmt_result(b, sizeof b, r->run.metric);
        ib_strbuf_printf(sb, "</td><td class=\"num\">%s%s", b,
                         s->published ? "" : "<span class=\"unv\">unverified</span>");
        for (const char *l = r->labels ? r->labels : ""; *l;) { /* what the run says of itself */
            size_t n = strcspn(l, "\n");
            char one[512];
            snprintf(one, sizeof one, "%.*s", (int)n, l);
            ib_strbuf_puts(sb, "<span class=\"lab\">");
            esc(sb, one);
            ib_strbuf_puts(sb, "</span>");
            l += n + (l[n] == '\n');
        }
        ib_strbuf_puts(sb, "</td><td>");
        esc(sb, r->run.unit);
        ib_strbuf_printf(sb, "</td><td%s>%s", valid ? "" : " class=\"bad\"",
                         ib_report_validity_name(r->run.validity));
        if (!valid && r->run.invalid_reason[0]) {
            ib_strbuf_puts(sb, ": ");
            esc(sb, r->run.invalid_reason);
        }
        ib_strbuf_puts(sb, "</td><td>");
        if (r->accuracy_metric[0]) {
            ib_rpt_fmt_sig(b, sizeof b, r->accuracy, 5);
            esc(sb, r->accuracy_metric);
            ib_strbuf_printf(sb, " %s", b);
        } else {
            ib_strbuf_puts(sb, "&ndash;");
        }
        ib_strbuf_puts(sb, "</td>");
        num_cell(sb, r->relative_performance, 1);
        num_cell(sb, r->relative_perf_per_cost, 1);
        num_cell(sb, r->cost_per_million, 2);
        num_cell(sb, r->perf_per_watt, 2);
        ib_strbuf_puts(sb, "</tr>\n");
    }
    ib_strbuf_puts(sb, "</table></section>\n");
}

/* Baseline pivot: each system's result, then ratios of each other system to the baseline. */
static void comparison_table(const ib_report *rep, ib_strbuf *sb)
{
    size_t base = rep->baseline;
    if (base == IB_RPT_NONE || rep->systems.len < 2) return;
    const ib_report_system *bs = &rep->systems.data[base];
    ib_strbuf_puts(sb, "<section id=\"comparison\"><h2>Comparison with the baseline</h2>\n<p>"
                       "Baseline: <b>");
    esc(sb, bs->id);
    ib_strbuf_puts(sb, "</b>. Ratios are derived metrics (see the notes); invalid results are "
                       "not compared.</p>\n<table class=\"comparison\"><tr><th>Benchmark</th>"
                       "<th>Scenario</th>");
    for (size_t s = 0; s < rep->systems.len; s++) {
        ib_strbuf_puts(sb, "<th>");
        esc(sb, rep->systems.data[s].id);
        ib_strbuf_puts(sb, "</th>");
    }
    for (size_t s = 0; s < rep->systems.len; s++) {
        if (s == base) continue;
        const char *a = rep->systems.data[s].id;
        ib_strbuf_puts(sb, "<th>");
        esc(sb, a);
        ib_strbuf_puts(sb, " / ");
        esc(sb, bs->id);
        ib_strbuf_puts(sb, "</th><th>");
        esc(sb, bs->id);
        ib_strbuf_puts(sb, " / ");
        esc(sb, a);
        ib_strbuf_puts(sb, "</th><th>");
        esc(sb, a);
        ib_strbuf_puts(sb, " perf. per cost vs baseline</th>");
    }
    ib_strbuf_puts(sb, "</tr>\n");
    for (size_t i = 0; i < rep->results.len; i++) {
        const ib_report_result *b = &rep->results.data[i];
        if (b->system != base) continue;
        ib_strbuf_puts(sb, "<tr><td>");
        esc(sb, b->benchmark);
        ib_strbuf_printf(sb, "</td><td>%s</td>", ib_report_scenario_name(b->scenario));
        for (size_t s = 0; s < rep->systems.len; s++) {
            const ib_report_result *r = ib_rpt_find_result(rep, s, b->benchmark, b->scenario);
            num_cell(sb, r ? r->run.metric : IB_RPT_NAN, 0);
        }
        for (size_t s = 0; s < rep->systems.len; s++) {
            if (s == base) continue;
            const ib_report_result *r = ib_rpt_find_result(rep, s, b->benchmark, b->scenario);
            double rel = r ? r->relative_performance : IB_RPT_NAN;
            char pct[48] = "";
            if (isfinite(rel)) snprintf(pct, sizeof pct, " (%+.1f %%)", (rel - 1) * 100);
            char rb[48];
            ib_rpt_fmt_sig(rb, sizeof rb, rel, 4);
            ib_strbuf_printf(sb, "<td class=\"num\">%s%s</td>", isfinite(rel) ? rb : "&ndash;",
                             pct);
            num_cell(sb, isfinite(rel) ? 1 / rel : IB_RPT_NAN, 1);
            num_cell(sb, r ? r->relative_perf_per_cost : IB_RPT_NAN, 1);
        }
        ib_strbuf_puts(sb, "</tr>\n");
    }
    ib_strbuf_puts(sb, "</table></section>\n");
}

/*
 * System descriptions side by side: the union of JSON keys in first-seen order; rows
 * whose values differ between systems are highlighted, all-empty rows are omitted.
 */
static void systems_table(const ib_report *rep, ib_strbuf *sb)
{
    ib_strbuf_puts(sb, "<section id=\"systems\"><h2>System descriptions</h2>\n"
                       "<table class=\"systems\"><tr><th>Field</th>");
    for (size_t s = 0; s < rep->systems.len; s++) {
        ib_strbuf_puts(sb, "<th>");
        esc(sb, rep->systems.data[s].id);
        ib_strbuf_printf(sb, "<br><span class=\"meta\">%s</span></th>",
                         rep->systems.data[s].published ? "published MLPerf result" : "unverified");
    }
    ib_strbuf_puts(sb, "</tr>\n");
    /* the union of description keys, in first-seen order */
    IB_VEC(const char *) keys = {0};
    for (size_t s = 0; s < rep->systems.len; s++) {
        json_t *d = rep->sysdesc.data[s];
        const char *k;
        json_t *v;
        if (!d) continue;
        json_object_foreach(d, k, v)
        {
            (void)v;
            bool seen = false;
            for (size_t i = 0; i < keys.len && !seen; i++)
                seen = !strcmp(keys.data[i], k);
            if (!seen && IB_VEC_PUSH(&keys, k)) break;
        }
    }
    for (size_t i = 0; i < keys.len; i++) {
        char cells[8][512];
        bool differs = false, any = false;
        size_t ns = rep->systems.len < 8 ? rep->systems.len : 8;
        for (size_t s = 0; s < ns; s++) {
            const json_t *v =
                rep->sysdesc.data[s] ? json_object_get(rep->sysdesc.data[s], keys.data[i]) : NULL;
            if (json_is_string(v))
                ib_rpt_strlcpy(cells[s], sizeof cells[s], json_string_value(v), (size_t)-1);
            else if (json_is_integer(v))
                snprintf(cells[s], sizeof cells[s], "%lld", (long long)json_integer_value(v));
            else if (json_is_real(v))
                snprintf(cells[s], sizeof cells[s], "%g", json_real_value(v));
            else if (json_is_boolean(v))
                snprintf(cells[s], sizeof cells[s], "%s", json_is_true(v) ? "true" : "false");
            else
                cells[s][0] = '\0';
            any = any || cells[s][0];
            differs = differs || (s && strcmp(cells[s], cells[0]));
        }
        if (!any) continue; /* all empty: Dell leaves most optional fields blank */
        ib_strbuf_printf(sb, "<tr%s><td>", differs ? " class=\"diff\"" : "");
        esc(sb, keys.data[i]);
        ib_strbuf_puts(sb, "</td>");
        for (size_t s = 0; s < rep->systems.len; s++) {
            ib_strbuf_puts(sb, "<td>");
            esc(sb, s < ns ? cells[s] : "(see summary.json)");
            ib_strbuf_puts(sb, "</td>");
        }
        ib_strbuf_puts(sb, "</tr>\n");
    }
    IB_VEC_FREE(&keys);
    ib_strbuf_puts(sb, "</table><p class=\"meta\">Highlighted rows differ between the systems; "
                       "empty fields are omitted.</p></section>\n");
}

/* Each chart as a figure with its inline SVG and a text caption (footnotes are text). */
static void charts_section(const ib_rpt_chart_list *charts, ib_strbuf *sb)
{
    ib_strbuf_puts(sb, "<section id=\"charts\"><h2>Charts</h2>\n");
    for (size_t i = 0; i < charts->v.len; i++) {
        const ib_rpt_chart_info *c = &charts->v.data[i];
        ib_strbuf_puts(sb, "<figure class=\"chart\" id=\"chart-");
        esc(sb, c->name);
        ib_strbuf_puts(sb, "\" data-chart=\"");
        esc(sb, c->name);
        ib_strbuf_puts(sb, "\" role=\"img\" aria-label=\"");
        esc(sb, c->title);
        ib_strbuf_puts(sb, "\">\n");
        ib_strbuf_puts(sb, c->svg);
        ib_strbuf_puts(sb, "\n<figcaption>");
        esc(sb, c->caption);
        ib_strbuf_puts(sb, " Files: charts/");
        esc(sb, c->name);
        ib_strbuf_puts(sb, ".svg, charts/");
        esc(sb, c->name);
        ib_strbuf_puts(sb, ".png.</figcaption></figure>\n");
    }
    ib_strbuf_puts(sb, "</section>\n");
}

/* The headline (each system against the baseline) and, when any result is one of our own
 * runs, a box with what those runs are (synthetic model or data, --quick...), before any
 * number, so nobody reads a test run beside a published result as a measurement. */
static void headline_and_labels(const ib_report *rep, const ib_rpt_notes *notes, ib_strbuf *sb)
{
    for (size_t i = 0; i < rep->systems.len; i++) {
        char h[512];
        if (!ib_report_headline(rep, i, h, sizeof h)) continue;
        ib_strbuf_puts(sb, "<p class=\"headline\">");
        esc(sb, h);
        ib_strbuf_puts(sb, "</p>\n");
    }
    bool any = false;
    for (size_t i = 0; i < notes->v.len; i++) {
        if (strcmp(notes->v.data[i].kind, "labels")) continue;
        if (!any)
            ib_strbuf_puts(sb, "<div class=\"labels\"><b>Not MLPerf results.</b> These runs "
                               "were made by inferbench and carry labels:<ul>\n");
        any = true;
        ib_strbuf_puts(sb, "<li>");
        esc(sb, notes->v.data[i].text);
        ib_strbuf_puts(sb, "</li>\n");
    }
    if (any) ib_strbuf_puts(sb, "</ul></div>\n");
    for (size_t i = 0; i < rep->warnings.len; i++) {
        if (!i) ib_strbuf_puts(sb, "<div class=\"labels\"><b>Skipped:</b><ul>\n");
        ib_strbuf_puts(sb, "<li>");
        esc(sb, rep->warnings.data[i]);
        ib_strbuf_puts(sb, "</li>\n");
        if (i + 1 == rep->warnings.len) ib_strbuf_puts(sb, "</ul></div>\n");
    }
}

/* Assemble the page: header, systems, comparison, charts, results, descriptions, notes. */
static int write_html(const ib_report *rep, const ib_rpt_chart_list *charts, const char *dir,
                      ib_err *err)
{
    ib_rpt_notes notes;
    if (ib_rpt_notes_build(rep, &notes))
        return ib_err_set(err, IB_ENOMEM, "out of memory building the footnotes");
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    char suite[128], title[512];
    ib_rpt_suite_label(rep, suite, sizeof suite);
    if (rep->opts.title)
        ib_rpt_strlcpy(title, sizeof title, rep->opts.title, (size_t)-1);
    else
        snprintf(title, sizeof title, "%s comparison of %zu system%s", suite, rep->systems.len,
                 rep->systems.len == 1 ? "" : "s");
    ib_strbuf_puts(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
                        "<title>");
    esc(&sb, title);
    ib_strbuf_printf(&sb, "</title><style>%s</style></head><body>\n<header><h1>", k_css);
    esc(&sb, title);
    ib_strbuf_printf(&sb, "</h1><p class=\"meta\">Generated %s by inferbench %s from ",
                     rep->generated, ib_version_string());
    for (size_t i = 0; i < rep->trees.len; i++) {
        ib_strbuf_puts(&sb, i ? ", <code>" : "<code>");
        esc(&sb, rep->trees.data[i]);
        ib_strbuf_puts(&sb, "</code>");
    }
    if (rep->baseline != IB_RPT_NONE) {
        ib_strbuf_puts(&sb, ". Baseline: <b>");
        esc(&sb, rep->systems.data[rep->baseline].id);
        ib_strbuf_puts(&sb, "</b>");
    }
    ib_strbuf_puts(&sb, ". Numbers with <span class=\"unv\">unverified</span> are not verified by "
                        "MLCommons Association (see the notes).</p>\n");
    headline_and_labels(rep, &notes, &sb);
    ib_strbuf_puts(&sb, "</header>\n");
    systems_overview(rep, &sb);
    comparison_table(rep, &sb);
    charts_section(charts, &sb);
    results_table(rep, &sb);
    systems_table(rep, &sb);
    ib_strbuf_puts(&sb, "<section id=\"notes\"><h2>Notes</h2>\n<ol class=\"notes\">\n");
    for (size_t i = 0; i < notes.v.len; i++) {
        ib_strbuf_printf(&sb, "<li data-kind=\"%s\">", notes.v.data[i].kind);
        esc(&sb, notes.v.data[i].text);
        ib_strbuf_puts(&sb, "</li>\n");
    }
    ib_strbuf_puts(&sb, "</ol></section>\n<footer>");
    esc(&sb, ib_rpt_trademark);
    ib_strbuf_puts(&sb, "</footer>\n</body></html>\n");
    ib_rpt_notes_deinit(&notes);
    int rc = IB_OK;
    if (sb.oom) {
        rc = ib_err_set(err, IB_ENOMEM, "out of memory writing report.html");
    } else {
        char path[4200];
        snprintf(path, sizeof path, "%s/report.html", dir);
        rc = ib_file_write_all(path, sb.data, sb.len, err);
    }
    ib_strbuf_deinit(&sb);
    return rc;
}

int ib_rpt_write_charts_and_html(ib_report *rep, const char *dir, ib_err *err)
{
    ib_chart_measure *m = NULL;
    int rc = ib_chart_measure_create(&m, err);
    if (rc) return rc;
    ib_rpt_chart_list charts;
    memset(&charts, 0, sizeof charts);
    ib_rpt_chart_ctx ctx = {rep, dir, m, &charts};
    rc = ib_rpt_build_charts(&ctx, err);
    if (rc == IB_OK) rc = write_html(rep, &charts, dir, err);
    ib_rpt_chart_list_deinit(&charts);
    ib_chart_measure_destroy(m);
    return rc;
}
