/*
 * charts.c - builds the report's charts from its results: one grouped-bar chart
 * per benchmark (systems x scenarios, absolute values; latency scenarios in their
 * own chart), one relative-performance chart with normalised perf/$ as a line
 * (baseline = 1.0), and latency-percentile charts for inferbench's own runs.
 * Each chart is laid out once and rendered to charts/<name>.svg, charts/<name>.png
 * and an inline SVG for report.html.
 */
#include "report/charts.h"

#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "report/fmt.h"
#include "report/notes.h"
#include "report/rutil.h"

/* Free every chart's strings and the list. */
void ib_rpt_chart_list_deinit(ib_rpt_chart_list *l)
{
    for (size_t i = 0; i < l->v.len; i++) {
        ib_free(l->v.data[i].name);
        ib_free(l->v.data[i].title);
        ib_free(l->v.data[i].caption);
        ib_free(l->v.data[i].svg);
    }
    IB_VEC_FREE(&l->v);
}

/* File-name-safe form of a benchmark name ("bert-99.9" stays as is). */
static void slug(char *out, size_t cap, const char *s)
{
    size_t j = 0;
    for (; *s && j + 1 < cap; s++)
        out[j++] = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                    (*s >= '0' && *s <= '9') || *s == '-' || *s == '.')
                       ? *s
                       : '_';
    out[j] = '\0';
}

/* "MLPerf® Inference v1.1, closed division, Dell": version, division and submitter. */
static void full_label(const ib_report *rep, char *out, size_t cap)
{
    char suite[128], scope[200];
    ib_rpt_suite_label(rep, suite, sizeof suite);
    ib_rpt_scope_label(rep, scope, sizeof scope);
    snprintf(out, cap, "%s%s%s", suite, scope[0] ? ", " : "", scope);
}

/* Legend label of a system: id, chip count, and "unverified" when not published. */
static char *series_label(const ib_report *rep, size_t si)
{
    const ib_report_system *s = &rep->systems.data[si];
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_strbuf_puts(&sb, s->id);
    if (s->chips > 0) ib_strbuf_printf(&sb, " (%dx %s)", s->chips, s->chip_kind);
    if (!s->published) ib_strbuf_puts(&sb, " - unverified");
    return ib_strbuf_detach(&sb);
}

/* Lay out, render to files and to an inline SVG; append to the list. */
static int finish_chart(ib_rpt_chart_ctx *ctx, ib_chart *ch, const char *name, const char *title,
                        const char *caption, ib_err *err)
{
    char path[4200];
    ib_strbuf svg;
    ib_strbuf_init(&svg);
    int rc = ib_chart_render_svg(ch, NULL, &svg, err);
    if (rc == IB_OK) {
        snprintf(path, sizeof path, "%s/charts/%s.svg", ctx->dir, name);
        rc = ib_file_write_all(path, svg.data ? svg.data : "", svg.len, err);
    }
    if (rc == IB_OK) {
        snprintf(path, sizeof path, "%s/charts/%s.png", ctx->dir, name);
        rc = ib_chart_render_png(ch, path, err);
    }
    ib_strbuf_reset(&svg);
    char prefix[96];
    snprintf(prefix, sizeof prefix, "c%zu-", ctx->list->v.len);
    if (rc == IB_OK) rc = ib_chart_render_svg(ch, prefix, &svg, err);
    ib_rpt_chart_info info = {ib_strdup(name),        ib_strdup(title), ib_strdup(caption),
                              ib_strbuf_detach(&svg), ch->width,        ch->height,
                              ch->dropped_labels};
    if (rc == IB_OK && (!info.name || !info.title || !info.caption || !info.svg ||
                        IB_VEC_PUSH(&ctx->list->v, info)))
        rc = ib_err_set(err, IB_ENOMEM, "out of memory");
    if (rc) {
        ib_free(info.name);
        ib_free(info.title);
        ib_free(info.caption);
        ib_free(info.svg);
    }
    ib_strbuf_deinit(&svg);
    return rc;
}

/* Systems with at least one result in the benchmark (in system order). */
static size_t systems_in(const ib_report *rep, const char *bench, size_t *out)
{
    size_t n = 0;
    for (size_t si = 0; si < rep->systems.len; si++)
        for (size_t i = 0; i < rep->results.len; i++) {
            const ib_report_result *r = &rep->results.data[i];
            if (r->system == si && (!bench || !strcmp(r->benchmark, bench))) {
                out[n++] = si;
                break;
            }
        }
    return n;
}

/*
 * The per-benchmark figure: groups are the scenarios present (throughput or latency
 * ones), series the systems with a result, bars the absolute official metric;
 * INVALID results are left out (NaN) and said so in the subtitle.
 */
static int benchmark_chart(ib_rpt_chart_ctx *ctx, const char *bench, bool latency, ib_err *err)
{
    const ib_report *rep = ctx->rep;
    static const int thr[] = {IB_REPORT_SCENARIO_OFFLINE, IB_REPORT_SCENARIO_SERVER};
    static const int lat[] = {IB_REPORT_SCENARIO_SINGLE_STREAM, IB_REPORT_SCENARIO_MULTI_STREAM};
    const int *cand = latency ? lat : thr;
    int scen[2];
    size_t ng = 0;
    for (size_t k = 0; k < 2; k++)
        for (size_t si = 0; si < rep->systems.len; si++)
            if (ib_rpt_find_result(rep, si, bench, cand[k])) {
                scen[ng++] = cand[k];
                break;
            }
    if (!ng) return IB_OK;
    size_t *sys = ib_malloc(rep->systems.len * sizeof(size_t));
    size_t ns = sys ? systems_in(rep, bench, sys) : 0;
    const char **series = ib_calloc(ns + 1, sizeof(char *));
    double *vals = ib_malloc((ng * ns + 1) * sizeof(double));
    uint32_t *colors = ib_malloc((ns + 1) * sizeof(uint32_t));
    const char *groups[2];
    char gl[2][96], units[160] = "";
    int rc = IB_OK;
    if (!sys || !series || !vals || !colors) {
        rc = ib_err_set(err, IB_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t s = 0; s < ns; s++) {
        series[s] = series_label(rep, sys[s]);
        colors[s] = ib_chart_palette(sys[s]);
        if (!series[s]) {
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
            goto out;
        }
    }
    size_t ul = 0;
    for (size_t g = 0; g < ng; g++) {
        const char *unit = "";
        for (size_t s = 0; s < ns; s++) {
            const ib_report_result *r = ib_rpt_find_result(rep, sys[s], bench, scen[g]);
            bool ok = r && r->run.validity == IB_REPORT_VALIDITY_VALID;
            vals[g * ns + s] = ok ? r->run.metric : IB_RPT_NAN;
            if (r) unit = r->run.unit;
        }
        snprintf(gl[g], sizeof gl[g], "%s", ib_report_scenario_name(scen[g]));
        groups[g] = gl[g];
        ul +=
            (size_t)snprintf(units + ul, sizeof units - ul, "%s%s: %s", g ? ", " : "", gl[g], unit);
    }
    char title[256], sub[768], suite[384], name[160], caption[1200];
    full_label(rep, suite, sizeof suite);
    snprintf(title, sizeof title, "%s: %s by scenario", bench, latency ? "latency" : "throughput");
    snprintf(sub, sizeof sub, "%s. %s (%s is better). Invalid results are not drawn.", suite, units,
             latency ? "lower" : "higher");
    char sl[128];
    slug(sl, sizeof sl, bench);
    snprintf(name, sizeof name, "bench-%s%s", sl, latency ? "-latency" : "");
    snprintf(caption, sizeof caption, "%s. %s", title, sub);
    ib_chart_bar_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.title = title;
    spec.subtitle = sub;
    spec.y_label = latency ? "latency (ms)" : "throughput (per second)";
    spec.n_groups = ng;
    spec.n_series = ns;
    spec.groups = groups;
    spec.series = series;
    spec.colors = colors;
    spec.values = vals;
    spec.line_skip_series = -1;
    spec.reference = IB_RPT_NAN;
    ib_chart ch;
    rc = ib_chart_bar_layout(&spec, ctx->measure, &ch, err);
    if (rc == IB_OK) rc = finish_chart(ctx, &ch, name, title, caption, err);
    ib_chart_deinit(&ch);
out:
    for (size_t s = 0; series && s < ns; s++)
        ib_free((char *)(uintptr_t)series[s]);
    ib_free(series);
    ib_free(vals);
    ib_free(colors);
    ib_free(sys);
    return rc;
}

/* Bars: relative performance; line: relative perf per cost; baseline = 1.0. */
static int perf_cost_chart(ib_rpt_chart_ctx *ctx, ib_err *err)
{
    const ib_report *rep = ctx->rep;
    size_t base = rep->baseline;
    if (base == IB_RPT_NONE || rep->systems.len < 2) return IB_OK;
    size_t nr = rep->results.len, ns = rep->systems.len;
    const char **groups = ib_calloc(nr + 1, sizeof(char *));
    const char **series = ib_calloc(ns + 1, sizeof(char *));
    double *vals = ib_malloc((nr * ns + 1) * sizeof(double));
    double *line = ib_malloc((nr * ns + 1) * sizeof(double));
    uint32_t *colors = ib_malloc((ns + 1) * sizeof(uint32_t));
    int rc = IB_OK;
    size_t ng = 0;
    bool any_cost = false;
    if (!groups || !series || !vals || !line || !colors) {
        rc = ib_err_set(err, IB_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t s = 0; s < ns; s++) {
        series[s] = series_label(rep, s);
        colors[s] = ib_chart_palette(s);
        if (!series[s]) {
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
            goto out;
        }
    }
    /* one group per (benchmark, scenario) of the baseline with another system to compare */
    for (size_t i = 0; i < nr; i++) {
        const ib_report_result *b = &rep->results.data[i];
        if (b->system != base || !isfinite(b->relative_performance)) continue;
        bool other = false;
        for (size_t s = 0; s < ns; s++) {
            const ib_report_result *r = ib_rpt_find_result(rep, s, b->benchmark, b->scenario);
            vals[ng * ns + s] = r ? r->relative_performance : IB_RPT_NAN;
            line[ng * ns + s] = r ? r->relative_perf_per_cost : IB_RPT_NAN;
            any_cost = any_cost || (r && isfinite(r->relative_perf_per_cost));
            other = other || (s != base && r && isfinite(r->relative_performance));
        }
        if (!other) continue;
        char g[160];
        snprintf(g, sizeof g, "%s %s", b->benchmark, ib_report_scenario_name(b->scenario));
        groups[ng] = ib_strdup(g);
        if (!groups[ng]) {
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
            goto out;
        }
        ng++;
    }
    if (!ng) goto out;
    const ib_report_system *bs = &rep->systems.data[base];
    char title[256], sub[1400], caption[1800], suite[384];
    full_label(rep, suite, sizeof suite);
    snprintf(title, sizeof title,
             any_cost ? "Relative performance and performance per cost vs %s"
                      : "Relative performance vs %s",
             bs->id);
    snprintf(sub, sizeof sub,
             "%s. Bars: relative performance (baseline = 1.0)%s. Derived metrics computed by "
             "inferbench, not MLPerf metrics%s%s%s.",
             suite,
             any_cost ? "; line: relative performance per cost, normalised to the baseline" : "",
             any_cost ? "; price basis: " : "", any_cost ? bs->currency : "",
             any_cost ? " prices (see notes)" : "");
    snprintf(caption, sizeof caption, "%s. %s", title, sub);
    ib_chart_bar_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.title = title;
    spec.subtitle = sub;
    spec.y_label = "relative to baseline";
    spec.n_groups = ng;
    spec.n_series = ns;
    spec.groups = groups;
    spec.series = series;
    spec.colors = colors;
    spec.values = vals;
    spec.line_values = any_cost ? line : NULL;
    spec.line_legend = "relative performance per cost (diamonds)";
    spec.line_skip_series = (int)base;
    spec.reference = 1.0;
    spec.reference_legend = "baseline = 1.0";
    spec.width = fmax(960, 96.0 * (double)ng + 120);
    ib_chart ch;
    rc = ib_chart_bar_layout(&spec, ctx->measure, &ch, err);
    if (rc == IB_OK) rc = finish_chart(ctx, &ch, "perf-per-cost", title, caption, err);
    ib_chart_deinit(&ch);
out:
    for (size_t s = 0; series && s < ns; s++)
        ib_free((char *)(uintptr_t)series[s]);
    for (size_t g = 0; groups && g < ng; g++)
        ib_free((char *)(uintptr_t)groups[g]);
    ib_free(groups);
    ib_free(series);
    ib_free(vals);
    ib_free(line);
    ib_free(colors);
    return rc;
}

/* Latency percentiles of inferbench's own runs (detail logs in an inferbench tree). */
static int latency_charts(ib_rpt_chart_ctx *ctx, ib_err *err)
{
    const ib_report *rep = ctx->rep;
    int rc = IB_OK;
    for (size_t i = 0; i < rep->results.len && rc == IB_OK; i++) {
        const ib_report_result *first = &rep->results.data[i];
        if (rep->systems.data[first->system].official_layout ||
            first->run.source != IB_REPORT_SOURCE_DETAIL)
            continue;
        /* handle each (benchmark, scenario) once: at its first own run */
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) {
            const ib_report_result *o = &rep->results.data[k];
            seen = !rep->systems.data[o->system].official_layout &&
                   o->run.source == IB_REPORT_SOURCE_DETAIL && o->scenario == first->scenario &&
                   !strcmp(o->benchmark, first->benchmark);
        }
        if (seen) continue;
        const char *series[64];
        double vals[64 * IB_REPORT_NPCT];
        size_t ns = 0;
        double bound = IB_RPT_NAN;
        for (size_t k = i; k < rep->results.len && ns < 64; k++) {
            const ib_report_result *r = &rep->results.data[k];
            if (rep->systems.data[r->system].official_layout ||
                r->run.source != IB_REPORT_SOURCE_DETAIL || r->scenario != first->scenario ||
                strcmp(r->benchmark, first->benchmark))
                continue;
            bool any = false;
            for (int p = 0; p < IB_REPORT_NPCT; p++) {
                vals[ns * IB_REPORT_NPCT + (size_t)p] = r->run.latency_pct_ns[p] / 1e6;
                any = any || isfinite(r->run.latency_pct_ns[p]);
            }
            if (!any) continue;
            series[ns++] = rep->systems.data[r->system].id;
            if (r->scenario == IB_REPORT_SCENARIO_SERVER && r->run.target_latency_ns > 0)
                bound = r->run.target_latency_ns / 1e6;
        }
        if (!ns) continue;
        char title[256], sub[512], caption[900], name[200], sl[128], bl[64];
        snprintf(title, sizeof title, "%s %s: latency percentiles (unverified)", first->benchmark,
                 ib_report_scenario_name(first->scenario));
        snprintf(sub, sizeof sub, "From inferbench's own detail logs; %s latency in ms. %s",
                 first->scenario == IB_REPORT_SCENARIO_MULTI_STREAM ? "per-query" : "per-sample",
                 ib_rpt_unverified_note);
        snprintf(bl, sizeof bl, "latency bound %g ms", bound);
        snprintf(caption, sizeof caption, "%s. %s", title, sub);
        slug(sl, sizeof sl, first->benchmark);
        snprintf(name, sizeof name, "latency-%s-%s", sl, ib_report_scenario_name(first->scenario));
        ib_chart_line_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.title = title;
        spec.subtitle = sub;
        spec.y_label = "latency (ms)";
        spec.n_points = IB_REPORT_NPCT;
        spec.percentiles = ib_report_percentiles;
        spec.n_series = ns;
        spec.series = series;
        spec.values = vals;
        spec.reference = bound;
        spec.reference_label = bl;
        ib_chart ch;
        rc = ib_chart_line_layout(&spec, ctx->measure, &ch, err);
        if (rc == IB_OK) rc = finish_chart(ctx, &ch, name, title, caption, err);
        ib_chart_deinit(&ch);
    }
    return rc;
}

/*
 * Charts in report order: each benchmark once (throughput, then latency scenarios),
 * then relative perf / perf per cost, then latency percentiles of own runs.
 */
int ib_rpt_build_charts(ib_rpt_chart_ctx *ctx, ib_err *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/charts", ctx->dir);
    int rc = ib_mkdirs(path, err);
    const ib_report *rep = ctx->rep;
    /* what the reader came for first: throughput per price, then each benchmark */
    if (rc == IB_OK) rc = perf_cost_chart(ctx, err);
    for (size_t i = 0; i < rep->results.len && rc == IB_OK; i++) {
        const char *b = rep->results.data[i].benchmark;
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(rep->results.data[k].benchmark, b) != 0;
        if (!first) continue;
        rc = benchmark_chart(ctx, b, false, err);
        if (rc == IB_OK) rc = benchmark_chart(ctx, b, true, err);
    }
    if (rc == IB_OK) rc = latency_charts(ctx, err);
    return rc;
}
