/*
 * notes.c - builds the report's footnotes from the data, so every table and chart
 * can carry them (users.md §3.3): (a) "unverified" for results not published by
 * MLCommons, (b) result IDs and retrieval of published ones, (c) price basis and
 * date, (d) the derived-metric method, (e) chip counts and scenarios, (f) host,
 * version, division and category differences, (g) power source, (h) trademarks.
 */
#include "report/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/strbuf.h"
#include "report/fmt.h"
#include "report/rutil.h"

const char ib_rpt_trademark[] =
    "The MLPerf name and logo are registered and unregistered trademarks of MLCommons "
    "Association in the United States and other countries. All rights reserved. Unauthorized "
    "use strictly prohibited. See www.mlcommons.org for more information.";

const char ib_rpt_unverified_note[] = "Result not verified by MLCommons Association.";

/* Move the buffer's text into a new note (the buffer is left empty for reuse). */
static int add(ib_rpt_notes *n, const char *kind, ib_strbuf *sb)
{
    if (sb->oom) return IB_ENOMEM;
    ib_rpt_note note = {kind, ib_strbuf_detach(sb)};
    if (!note.text) note.text = ib_strdup("");
    if (!note.text || IB_VEC_PUSH(&n->v, note)) {
        ib_free(note.text);
        return IB_ENOMEM;
    }
    return IB_OK;
}

void ib_rpt_notes_deinit(ib_rpt_notes *n)
{
    for (size_t i = 0; i < n->v.len; i++)
        ib_free(n->v.data[i].text);
    IB_VEC_FREE(&n->v);
}

/* Distinct values of a per-result string, joined with ", " (mlperf_only: of the results
 * that are not our own runs). */
static void join_versions(const ib_report *rep, ib_strbuf *sb, bool mlperf_only)
{
    const char *seen[32];
    size_t n = 0;
    for (size_t i = 0; i < rep->results.len && n < IB_ARRAY_LEN(seen); i++) {
        if (mlperf_only && rep->results.data[i].own_run) continue;
        const char *v = rep->results.data[i].run.version;
        bool dup = false;
        for (size_t k = 0; k < n; k++)
            dup = dup || !strcmp(seen[k], v);
        if (!dup) seen[n++] = v;
    }
    for (size_t k = 0; k < n; k++)
        ib_strbuf_printf(sb, "%s%s", k ? ", " : "", seen[k][0] ? seen[k] : "(version unknown)");
}

void ib_rpt_suite_label(const ib_report *rep, char *out, size_t cap)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    size_t own = 0;
    for (size_t i = 0; i < rep->results.len; i++)
        own += rep->results.data[i].own_run;
    if (own && own == rep->results.len) { /* no MLPerf result at all: do not call it one */
        ib_strbuf_puts(&sb, "inferbench runs (MLPerf\xC2\xAE Inference rules, not MLPerf results)");
        ib_rpt_strlcpy(out, cap, ib_strbuf_cstr(&sb), (size_t)-1);
        ib_strbuf_deinit(&sb);
        return;
    }
    ib_strbuf_puts(&sb, "MLPerf\xC2\xAE Inference ");
    join_versions(rep, &sb, true);
    if (own) ib_strbuf_puts(&sb, " and inferbench runs");
    ib_rpt_strlcpy(out, cap, ib_strbuf_cstr(&sb), (size_t)-1);
    ib_strbuf_deinit(&sb);
}

/* Append the distinct non-empty values of a system string field. */
static size_t join_distinct(const ib_report *rep, ib_strbuf *sb, bool division)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->systems.len; i++) {
        const char *v = division ? rep->systems.data[i].division : rep->systems.data[i].submitter;
        bool dup = !v[0];
        for (size_t k = 0; k < i && !dup; k++)
            dup = !strcmp(v, division ? rep->systems.data[k].division
                                      : rep->systems.data[k].submitter);
        if (!dup) ib_strbuf_printf(sb, "%s%s", n++ ? "/" : "", v);
    }
    return n;
}

void ib_rpt_scope_label(const ib_report *rep, char *out, size_t cap)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    if (join_distinct(rep, &sb, true)) ib_strbuf_puts(&sb, " division");
    size_t mark = sb.len;
    if (mark) ib_strbuf_puts(&sb, ", ");
    if (!join_distinct(rep, &sb, false)) {
        sb.len = mark;
        if (sb.data) sb.data[mark] = '\0';
    }
    ib_rpt_strlcpy(out, cap, ib_strbuf_cstr(&sb), (size_t)-1);
    ib_strbuf_deinit(&sb);
}

/* A description field as text (strings and integers; others as ""). */
static const char *json_field(const json_t *o, const char *key, char *buf, size_t cap)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
        return buf;
    }
    return "";
}

/* Host/software fields whose differences are disclosed (benchmarks.md §0 item 3). */
static const char *const k_host_fields[] = {"host_processor_model_name",
                                            "host_processors_per_node",
                                            "host_processor_core_count",
                                            "host_memory_capacity",
                                            "host_storage_type",
                                            "host_storage_capacity",
                                            "operating_system",
                                            "framework",
                                            "other_software_stack",
                                            "accelerator_model_name",
                                            "accelerators_per_node",
                                            "accelerator_memory_capacity",
                                            "number_of_nodes"};

/* benchmarks.md §0 item 3: list every host/software field that differs, per system. */
static int host_differences(const ib_report *rep, ib_rpt_notes *n)
{
    if (rep->systems.len < 2) return IB_OK;
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    size_t ndiff = 0;
    for (size_t f = 0; f < IB_ARRAY_LEN(k_host_fields); f++) {
        char b0[32];
        const char *v0 = json_field(rep->sysdesc.data[0], k_host_fields[f], b0, sizeof b0);
        bool differs = false;
        for (size_t i = 1; i < rep->systems.len; i++) {
            char bi[32];
            differs = differs ||
                      strcmp(v0, json_field(rep->sysdesc.data[i], k_host_fields[f], bi, sizeof bi));
        }
        if (!differs) continue;
        ib_strbuf_printf(&sb, "%s%s: ", ndiff++ ? "; " : "", k_host_fields[f]);
        for (size_t i = 0; i < rep->systems.len; i++) {
            char bi[32];
            const char *v = json_field(rep->sysdesc.data[i], k_host_fields[f], bi, sizeof bi);
            ib_strbuf_printf(&sb, "%s%s = %s", i ? ", " : "", rep->systems.data[i].id,
                             v[0] ? v : "(not given)");
        }
    }
    if (!ndiff) {
        ib_strbuf_deinit(&sb);
        return IB_OK;
    }
    ib_strbuf s2;
    ib_strbuf_init(&s2);
    ib_strbuf_printf(&s2,
                     "The systems differ in more than the accelerators, so the ratios "
                     "compare whole systems: %s.",
                     ib_strbuf_cstr(&sb));
    ib_strbuf_deinit(&sb);
    return add(n, "host", &s2);
}

/*
 * users.md §3.3 (a) and (f): the unverified footnote (plus the methodology sentence when
 * verified and unverified results are mixed) and, per published system, suite, version,
 * division, submitter, category, result ID and retrieval.
 */
static int verification_notes(const ib_report *rep, ib_rpt_notes *n)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    size_t unverified = 0, published = 0;
    for (size_t i = 0; i < rep->systems.len; i++)
        rep->systems.data[i].published ? published++ : unverified++;
    int rc = IB_OK;
    if (unverified) {
        ib_strbuf_printf(&sb, "%s Results marked \"unverified\" (", ib_rpt_unverified_note);
        for (size_t i = 0, k = 0; i < rep->systems.len; i++)
            if (!rep->systems.data[i].published)
                ib_strbuf_printf(&sb, "%s%s", k++ ? ", " : "", rep->systems.data[i].id);
        ib_strbuf_puts(&sb, ") were measured or packaged outside MLCommons review.");
        if (published)
            ib_strbuf_puts(&sb, " Unverified results may use methodologies inconsistent with the "
                                "MLPerf specification, so their comparison with verified "
                                "results is indicative only.");
        rc = add(n, "verification", &sb);
    }
    for (size_t i = 0; i < rep->systems.len && rc == IB_OK; i++) {
        const ib_report_system *s = &rep->systems.data[i];
        if (!s->published) continue;
        ib_strbuf_printf(&sb, "%s: MLPerf\xC2\xAE Inference ", s->id);
        const char *ver = "";
        for (size_t k = 0; k < rep->results.len; k++)
            if (rep->results.data[k].system == i) ver = rep->results.data[k].run.version;
        ib_strbuf_printf(&sb,
                         "%s, %s division, %s, category %s; result ID %s; retrieved %s "
                         "from %s.",
                         ver[0] ? ver : "(version unknown)",
                         s->division[0] ? s->division : "(division unknown)",
                         s->submitter[0] ? s->submitter : "(submitter unknown)",
                         s->status[0] ? s->status : "(unknown)",
                         s->result_id[0] ? s->result_id
                                         : "not supplied (look it up in the MLCommons results "
                                           "table before publishing)",
                         s->retrieved[0] ? s->retrieved : "(date not supplied)", s->source);
        rc = add(n, "published", &sb);
    }
    ib_strbuf_deinit(&sb);
    return rc;
}

/*
 * users.md §3.3 (b): the price basis and date next to every perf/$ figure, the method,
 * and the cost-per-million assumptions.
 */
static int price_notes(const ib_report *rep, ib_rpt_notes *n)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    const ib_report_system *base =
        rep->baseline != IB_RPT_NONE ? &rep->systems.data[rep->baseline] : NULL;
    int rc = IB_OK;
    bool any = false;
    for (size_t i = 0; i < rep->systems.len; i++)
        any = any || rep->systems.data[i].has_price;
    if (!any) {
        ib_strbuf_puts(&sb, "No prices were given, so no performance-per-cost figures are "
                            "shown.");
        rc = add(n, "price", &sb);
        ib_strbuf_deinit(&sb);
        return rc;
    }
    ib_strbuf_puts(&sb, "Price basis: ");
    for (size_t i = 0, k = 0; i < rep->systems.len; i++) {
        const ib_report_system *s = &rep->systems.data[i];
        if (!s->has_price) continue;
        char p[64];
        ib_rpt_fmt_result(p, sizeof p, s->price);
        ib_strbuf_printf(&sb, "%s%s = %s %s (%s; source: %s)", k++ ? "; " : "", s->id, p,
                         s->currency, s->price_date[0] ? s->price_date : "date not given",
                         s->price_source[0] ? s->price_source : "not given");
    }
    ib_strbuf_puts(&sb, ".");
    if (base && base->has_price) {
        for (size_t i = 0; i < rep->systems.len; i++) {
            const ib_report_system *s = &rep->systems.data[i];
            if (!s->has_price || s == base) continue;
            char r[32];
            ib_rpt_fmt_sig(r, sizeof r, s->price / base->price, 4);
            ib_strbuf_printf(&sb, " %s is priced at %sx %s.", s->id, r, base->id);
        }
    }
    ib_strbuf_printf(&sb,
                     " Relative performance per cost = (T / C) / (T_baseline / "
                     "C_baseline) with the baseline %s at 1.0; a value above 1 means more "
                     "throughput per unit of cost than the baseline. %s",
                     base ? base->id : "(none)",
                     rep->tco.len ? "Cost C is the TCO cost per delivered hour of each system "
                                    "(see the TCO note)."
                                  : "Cost C is the purchase price; for relative units the result "
                                    "is a ratio, not money.");
    if ((rc = add(n, "price", &sb))) goto out;
    if (rep->tco.len) {
        ib_rpt_tco t = ib_rpt_tco_for(rep, NULL);
        ib_strbuf_printf(&sb,
                         "TCO assumptions from %s: amortization %g years, utilization "
                         "%g%%",
                         rep->tco_path, t.amortization_years, t.utilization * 100);
        if (!isnan(t.pue)) ib_strbuf_printf(&sb, ", PUE %g", t.pue);
        if (!isnan(t.energy_cost_per_kwh))
            ib_strbuf_printf(&sb,
                             ", energy %g per kWh (power from MLPerf power logs when "
                             "present, else the measured power_w of the file)",
                             t.energy_cost_per_kwh);
        if (t.annual_opex > 0) ib_strbuf_printf(&sb, ", annual opex %g", t.annual_opex);
        ib_strbuf_puts(&sb, "; per-system sections override these defaults. Cost per million "
                            "inferences = cost per delivered hour / (throughput x 3600) x 10^6.");
    } else if (base && base->has_price && ib_rpt_ieq(base->currency, "relative")) {
        ib_strbuf_puts(&sb, "Cost per million inferences is not shown: the prices are relative "
                            "units, not money.");
    } else {
        ib_strbuf_puts(&sb, "Cost per million inferences assumes the price is amortized over 3 "
                            "years at 100% utilization with no energy or operating cost: price / "
                            "(3 x 8760 h) / (throughput x 3600) x 10^6.");
    }
    rc = add(n, "tco", &sb);
out:
    ib_strbuf_deinit(&sb);
    return rc;
}

/* users.md §3.3 (e): chip counts and the scenarios shown, and the metric of each. */
static int chips_and_scenarios(const ib_report *rep, ib_rpt_notes *n)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_strbuf_puts(&sb, "Chip counts: ");
    for (size_t i = 0; i < rep->systems.len; i++) {
        const ib_report_system *s = &rep->systems.data[i];
        if (s->chips > 0)
            ib_strbuf_printf(&sb, "%s%s = %d x %s", i ? "; " : "", s->id, s->chips,
                             s->chip_kind[0] ? s->chip_kind : "chip");
        else
            ib_strbuf_printf(&sb, "%s%s = unknown (no system description)", i ? "; " : "", s->id);
    }
    ib_strbuf_puts(&sb, ". Scenarios shown: ");
    static const int order[] = {IB_REPORT_SCENARIO_OFFLINE, IB_REPORT_SCENARIO_SERVER,
                                IB_REPORT_SCENARIO_SINGLE_STREAM, IB_REPORT_SCENARIO_MULTI_STREAM};
    size_t k = 0;
    for (size_t o = 0; o < IB_ARRAY_LEN(order); o++) {
        bool has = false;
        for (size_t i = 0; i < rep->results.len; i++)
            has = has || rep->results.data[i].scenario == order[o];
        if (has) ib_strbuf_printf(&sb, "%s%s", k++ ? ", " : "", ib_report_scenario_name(order[o]));
    }
    ib_strbuf_puts(&sb, ". Metrics: Offline samples/s; Server queries/s (scheduled samples/s "
                        "up to v4.0, completed samples/s from v4.1); SingleStream and "
                        "MultiStream latency in ms (v1.x MultiStream: samples per query).");
    int rc = add(n, "chips", &sb);
    ib_strbuf_deinit(&sb);
    return rc;
}

/* Differences in version, division or category; the latency direction; summary use. */
static int version_differences(const ib_report *rep, ib_rpt_notes *n)
{
    const char *v0 = NULL, *d0 = NULL, *c0 = NULL;
    bool dv = false, dd = false, dc = false, latency = false, summary = false;
    for (size_t i = 0; i < rep->results.len; i++) {
        const ib_report_result *r = &rep->results.data[i];
        const ib_report_system *s = &rep->systems.data[r->system];
        if (!v0) v0 = r->run.version, d0 = s->division, c0 = s->status;
        dv = dv || strcmp(v0, r->run.version);
        dd = dd || strcmp(d0, s->division);
        dc = dc || strcmp(c0, s->status);
        latency = latency || !r->run.higher_is_better;
        summary = summary || r->run.source == IB_REPORT_SOURCE_SUMMARY;
    }
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    int rc = IB_OK;
    if (dv || dd || dc) {
        ib_strbuf_printf(&sb,
                         "The compared results differ in%s%s%s; check the MLPerf "
                         "compatibility table before drawing conclusions.",
                         dv ? " MLPerf version" : "", dd ? " division" : "",
                         dc ? " availability category" : "");
        rc = add(n, "versions", &sb);
    }
    if (rc == IB_OK && latency) {
        ib_strbuf_puts(&sb, "For latency metrics (lower is better) relative performance = "
                            "baseline latency / system latency.");
        rc = add(n, "latency", &sb);
    }
    if (rc == IB_OK && summary) {
        ib_strbuf_puts(&sb, "Some results were read from mlperf_log_summary.txt because no "
                            "detail log was present; their rules version is inferred from the "
                            "summary format unless --rules-version is given.");
        rc = add(n, "summary", &sb);
    }
    ib_strbuf_deinit(&sb);
    return rc;
}

/* users.md §3.3 (c), (d): power source, INVALID results, derived metrics, trademarks. */
static int power_and_validity(const ib_report *rep, ib_rpt_notes *n)
{
    bool power = false;
    size_t invalid = 0;
    for (size_t i = 0; i < rep->results.len; i++) {
        power = power || !isnan(rep->results.data[i].avg_power_w);
        invalid += rep->results.data[i].run.validity != IB_REPORT_VALIDITY_VALID;
    }
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    if (power)
        ib_strbuf_puts(&sb, "Performance per watt uses only the average system power of the "
                            "MLPerf power logs (spl.txt over the power_begin-power_end window); "
                            "results without power logs show none. TDP, rated or PSU power is "
                            "never used.");
    else
        ib_strbuf_puts(&sb, "No MLPerf power logs were found, so no performance per watt is "
                            "shown (TDP, rated or PSU power is never used for it).");
    int rc = add(n, "power", &sb);
    if (rc == IB_OK && invalid) {
        ib_strbuf_printf(&sb,
                         "%zu result(s) are not VALID; they are listed but excluded from "
                         "every comparison.",
                         invalid);
        rc = add(n, "invalid", &sb);
    }
    if (rc == IB_OK) {
        ib_strbuf_puts(&sb, "Relative performance, performance per cost, cost per million "
                            "inferences and performance per watt are derived metrics computed "
                            "by inferbench; they are not MLPerf metrics and are not verified by "
                            "MLCommons Association.");
        rc = add(n, "derived", &sb);
    }
    if (rc == IB_OK) {
        ib_strbuf_puts(&sb, ib_rpt_trademark);
        rc = add(n, "trademark", &sb);
    }
    ib_strbuf_deinit(&sb);
    return rc;
}

/* Our own runs are not MLPerf results: each system's labels, said once (users.md §3.3). */
static int own_run_notes(const ib_report *rep, ib_rpt_notes *n)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    for (size_t s = 0; s < rep->systems.len; s++) {
        const char *seen[16];
        size_t ns = 0;
        bool own = false;
        for (size_t i = 0; i < rep->results.len; i++) {
            const ib_report_result *r = &rep->results.data[i];
            if (r->system != s || !r->own_run) continue;
            own = true;
            char lab[2048];
            ib_rpt_labels_joined(r, lab, sizeof lab);
            bool dup = !lab[0];
            for (size_t k = 0; k < ns && !dup; k++)
                dup = !strcmp(seen[k], r->labels);
            if (dup || ns == IB_ARRAY_LEN(seen)) continue;
            seen[ns++] = r->labels;
        }
        if (!own) continue;
        ib_strbuf_printf(&sb, "%s: inferbench runs, not MLPerf submissions", rep->systems.data[s].id);
        for (size_t k = 0; k < ns; k++) {
            ib_report_result tmp;
            memset(&tmp, 0, sizeof tmp);
            tmp.labels = seen[k];
            char lab[2048];
            ib_rpt_labels_joined(&tmp, lab, sizeof lab);
            ib_strbuf_printf(&sb, "%s%s", k ? " | " : " (", lab);
        }
        ib_strbuf_puts(&sb, ns ? ")." : ".");
        int rc = add(n, "labels", &sb);
        if (rc) {
            ib_strbuf_deinit(&sb);
            return rc;
        }
    }
    ib_strbuf_deinit(&sb);
    return IB_OK;
}

int ib_rpt_notes_build(const ib_report *rep, ib_rpt_notes *out)
{
    memset(out, 0, sizeof *out);
    int rc = own_run_notes(rep, out);
    if (rc == IB_OK) rc = verification_notes(rep, out);
    if (rc == IB_OK) rc = price_notes(rep, out);
    if (rc == IB_OK) rc = chips_and_scenarios(rep, out);
    if (rc == IB_OK) rc = host_differences(rep, out);
    if (rc == IB_OK) rc = version_differences(rep, out);
    if (rc == IB_OK) rc = power_and_validity(rep, out);
    if (rc) ib_rpt_notes_deinit(out);
    return rc;
}
