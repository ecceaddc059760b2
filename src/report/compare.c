/*
 * compare.c - the terminal table of `inferbench compare A B`: both systems'
 * official metric per benchmark and scenario, A/B and B/A, and A's performance
 * per cost relative to B when both have prices, followed by the same footnotes
 * the HTML report carries (wrapped to 100 columns, plain ASCII table).
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "report/calc.h"
#include "report/fmt.h"
#include "report/notes.h"
#include "report/report_impl.h"
#include "report/rutil.h"

#define CMP_COLS 9

typedef struct cmp_row {
    char cell[CMP_COLS][96];
} cmp_row;

static void wrap_text(ib_strbuf *sb, const char *prefix, const char *text, size_t width);

/* Header line of a compared system: id, name, chips, submitter, version, status. */
static void describe(ib_strbuf *sb, const char *tag, const ib_report *rep, size_t i)
{
    const ib_report_system *s = &rep->systems.data[i];
    const char *ver = "";
    for (size_t k = 0; k < rep->results.len; k++)
        if (rep->results.data[k].system == i) ver = rep->results.data[k].run.version;
    ib_strbuf_printf(sb, "%s: %s", tag, s->id);
    if (strcmp(s->name, s->id)) ib_strbuf_printf(sb, " - %s", s->name);
    ib_strbuf_puts(sb, "\n   ");
    if (s->chips > 0)
        ib_strbuf_printf(sb, "%d x %s", s->chips, s->chip_kind);
    else
        ib_strbuf_puts(sb, "chips unknown");
    ib_strbuf_printf(sb, "; %s%s%s%s%s; %s\n", s->submitter[0] ? s->submitter : "submitter unknown",
                     ver[0] ? ", MLPerf Inference " : "", ver, s->division[0] ? ", " : "",
                     s->division, s->published ? "published MLPerf result" : "unverified");
    /* an inferbench run says what it is: its labels, once per distinct set */
    const char *shown = NULL;
    for (size_t k = 0; k < rep->results.len; k++) {
        const ib_report_result *r = &rep->results.data[k];
        if (r->system != i || !r->own_run || (shown && !strcmp(shown, r->labels))) continue;
        char lab[2048], line[2200];
        ib_rpt_labels_joined(r, lab, sizeof lab);
        snprintf(line, sizeof line, "inferbench run, not an MLPerf result%s%s", lab[0] ? ": " : "",
                 lab);
        wrap_text(sb, "   ", line, 100);
        shown = r->labels;
    }
}

/* Word-wrap a footnote to `width` columns under a hanging prefix. */
static void wrap_text(ib_strbuf *sb, const char *prefix, const char *text, size_t width)
{
    size_t col = 0, plen = strlen(prefix);
    ib_strbuf_puts(sb, prefix);
    col = plen;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        size_t w = (size_t)(e - p);
        if (!w) break;
        if (col > plen && col + 1 + w > width) {
            ib_strbuf_putc(sb, '\n');
            for (size_t i = 0; i < plen; i++)
                ib_strbuf_putc(sb, ' ');
            col = plen;
        } else if (col > plen) {
            ib_strbuf_putc(sb, ' ');
            col++;
        }
        ib_strbuf_append(sb, p, w);
        col += w;
        p = e;
    }
    ib_strbuf_putc(sb, '\n');
}

/*
 * One table row: both results (or "-" / "INVALID"), A/B with the percentage, B/A, and
 * A's performance per cost vs B when both systems have prices.
 */
static void fill_row(const ib_report *rep, size_t a, size_t b, const char *bench, int scen,
                     cmp_row *row)
{
    const ib_report_result *ra = ib_rpt_find_result(rep, a, bench, scen);
    const ib_report_result *rb = ib_rpt_find_result(rep, b, bench, scen);
    const ib_report_system *sa = &rep->systems.data[a], *sb = &rep->systems.data[b];
    memset(row, 0, sizeof *row);
    snprintf(row->cell[0], sizeof row->cell[0], "%s", bench);
    snprintf(row->cell[1], sizeof row->cell[1], "%s", ib_report_scenario_name(scen));
    const ib_report_result *rs[2] = {ra, rb};
    for (int k = 0; k < 2; k++) {
        const ib_report_result *r = rs[k];
        if (!r)
            snprintf(row->cell[2 + k], sizeof row->cell[2 + k], "-");
        else if (r->run.validity != IB_REPORT_VALIDITY_VALID)
            snprintf(row->cell[2 + k], sizeof row->cell[2 + k], "INVALID");
        else
            ib_rpt_fmt_result(row->cell[2 + k], sizeof row->cell[2 + k], r->run.metric);
    }
    snprintf(row->cell[4], sizeof row->cell[4], "%s", ra ? ra->run.unit : rb ? rb->run.unit : "");
    bool ok = ra && rb && ra->run.validity == IB_REPORT_VALIDITY_VALID &&
              rb->run.validity == IB_REPORT_VALIDITY_VALID && !strcmp(ra->run.unit, rb->run.unit);
    double rel =
        ok ? ib_rpt_relative(ra->run.metric, rb->run.metric, ra->run.higher_is_better) : IB_RPT_NAN;
    if (isfinite(rel)) {
        char r4[32];
        ib_rpt_fmt_sig(r4, sizeof r4, rel, 4);
        snprintf(row->cell[5], sizeof row->cell[5], "%s (%+.1f%%)", r4, (rel - 1) * 100);
        ib_rpt_fmt_ratio(row->cell[6], sizeof row->cell[6], 1 / rel);
    } else {
        snprintf(row->cell[5], sizeof row->cell[5], "-");
        snprintf(row->cell[6], sizeof row->cell[6], "-");
    }
    double ppc = (sa->has_price && sb->has_price)
                     ? ib_rpt_relative_per_cost(rel, sa->price, sb->price)
                     : IB_RPT_NAN;
    if (isfinite(ppc))
        ib_rpt_fmt_ratio(row->cell[7], sizeof row->cell[7], ppc);
    else
        snprintf(row->cell[7], sizeof row->cell[7], "-");
}

int ib_report_compare_table(ib_report *rep, size_t a, size_t b, char **out, ib_err *err)
{
    IB_ASSERT(rep && out);
    *out = NULL;
    if (a >= rep->systems.len || b >= rep->systems.len || a == b)
        return ib_err_set(err, IB_EINVAL, "compare: need two different systems");
    if (!rep->computed) {
        int rc = ib_report_compute(rep, err);
        if (rc) return rc;
    }
    IB_VEC(cmp_row) rows = {0};
    cmp_row head;
    memset(&head, 0, sizeof head);
    static const char *const titles[] = {"benchmark", "scenario", "A",   "B",
                                         "unit",      "A/B",      "B/A", "A perf/cost vs B"};
    for (int k = 0; k < 8; k++)
        snprintf(head.cell[k], sizeof head.cell[k], "%s", titles[k]);
    if (IB_VEC_PUSH(&rows, head)) return ib_err_set(err, IB_ENOMEM, "out of memory");
    for (size_t i = 0; i < rep->results.len; i++) {
        const ib_report_result *r = &rep->results.data[i];
        if (r->system != a && r->system != b) continue;
        /* one row per (benchmark, scenario): skip when the other system's row came first */
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++) {
            const ib_report_result *o = &rep->results.data[k];
            dup = (o->system == a || o->system == b) && o->scenario == r->scenario &&
                  !strcmp(o->benchmark, r->benchmark);
        }
        if (dup) continue;
        cmp_row row;
        fill_row(rep, a, b, r->benchmark, r->scenario, &row);
        if (IB_VEC_PUSH(&rows, row)) {
            IB_VEC_FREE(&rows);
            return ib_err_set(err, IB_ENOMEM, "out of memory");
        }
    }
    size_t width[8] = {0};
    for (size_t i = 0; i < rows.len; i++)
        for (int k = 0; k < 8; k++)
            width[k] = IB_MAX(width[k], strlen(rows.data[i].cell[k]));
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    /* the headline first: A against B over every comparable result */
    char h[512];
    if (ib_rpt_headline_vs(rep, a, b, h, sizeof h)) ib_strbuf_printf(&sb, "%s\n\n", h);
    describe(&sb, "A", rep, a);
    describe(&sb, "B", rep, b);
    ib_strbuf_putc(&sb, '\n');
    for (size_t i = 0; i < rows.len; i++) {
        for (int k = 0; k < 8; k++) {
            bool right = k >= 2 && k != 4;
            ib_strbuf_printf(&sb, right ? "%*s" : "%-*s", (int)width[k], rows.data[i].cell[k]);
            ib_strbuf_puts(&sb, k < 7 ? "  " : "\n");
        }
        if (i == 0) {
            size_t total = 0;
            for (int k = 0; k < 8; k++)
                total += width[k] + (k < 7 ? 2 : 0);
            for (size_t c = 0; c < total; c++)
                ib_strbuf_putc(&sb, '-');
            ib_strbuf_putc(&sb, '\n');
        }
    }
    IB_VEC_FREE(&rows);
    ib_rpt_notes notes;
    if (ib_rpt_notes_build(rep, &notes) == IB_OK) {
        ib_strbuf_puts(&sb, "\nNotes:\n");
        for (size_t i = 0; i < notes.v.len; i++) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "%2zu. ", i + 1);
            wrap_text(&sb, prefix, notes.v.data[i].text, 100);
        }
        ib_rpt_notes_deinit(&notes);
    }
    if (sb.oom) {
        ib_strbuf_deinit(&sb);
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    *out = ib_strbuf_detach(&sb);
    return IB_OK;
}
