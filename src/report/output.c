/*
 * output.c - summary.csv (the columns of issue 6:
 * system,benchmark,scenario,result,unit,validity,relative_performance,
 * relative_perf_per_cost; relative columns empty where not applicable; then labels,
 * what an inferbench run says of itself: synthetic model or data, --quick...) and
 * summary.json (the same rows with every derived number, the systems, all inputs
 * and the footnotes). Numbers are printed with %.10g; NaN becomes empty / null.
 */
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/json_writer.h"
#include "inferbench/version.h"
#include "report/notes.h"
#include "report/report_impl.h"
#include "report/rutil.h"

/* RFC 4180: quote fields holding a comma, quote or newline. */
static void csv_field(ib_strbuf *sb, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        ib_strbuf_puts(sb, s);
        return;
    }
    ib_strbuf_putc(sb, '"');
    for (; *s; s++) {
        if (*s == '"') ib_strbuf_putc(sb, '"');
        ib_strbuf_putc(sb, *s);
    }
    ib_strbuf_putc(sb, '"');
}

/* Numbers with 10 significant digits; NaN leaves the cell empty. */
static void csv_num(ib_strbuf *sb, double v)
{
    if (isfinite(v)) ib_strbuf_printf(sb, "%.10g", v);
}

int ib_rpt_write_csv(const ib_report *rep, ib_strbuf *out)
{
    ib_strbuf_puts(out, "system,benchmark,scenario,result,unit,validity,relative_performance,"
                        "relative_perf_per_cost,labels\n");
    for (size_t i = 0; i < rep->results.len; i++) {
        const ib_report_result *r = &rep->results.data[i];
        csv_field(out, rep->systems.data[r->system].id);
        ib_strbuf_putc(out, ',');
        csv_field(out, r->benchmark);
        ib_strbuf_printf(out, ",%s,", ib_report_scenario_name(r->scenario));
        csv_num(out, r->run.metric);
        ib_strbuf_putc(out, ',');
        csv_field(out, r->run.unit);
        ib_strbuf_printf(out, ",%s,", ib_report_validity_name(r->run.validity));
        csv_num(out, r->relative_performance);
        ib_strbuf_putc(out, ',');
        csv_num(out, r->relative_perf_per_cost);
        ib_strbuf_putc(out, ',');
        char lab[2048];
        ib_rpt_labels_joined(r, lab, sizeof lab);
        csv_field(out, lab);
        ib_strbuf_putc(out, '\n');
    }
    return out->oom ? IB_ENOMEM : IB_OK;
}

/* Empty strings become null so consumers can tell "not given" apart. */
static void jw_str_or_null(ib_jw *jw, const char *s)
{
    if (s && s[0])
        ib_jw_string(jw, s);
    else
        ib_jw_null(jw);
}

/* Every input the report used, verbatim: trees, prices, TCO sections, published list. */
static void json_inputs(const ib_report *rep, ib_jw *jw)
{
    ib_jw_key(jw, "inputs");
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "trees");
    ib_jw_array_begin(jw);
    for (size_t i = 0; i < rep->trees.len; i++)
        ib_jw_string(jw, rep->trees.data[i]);
    ib_jw_array_end(jw);
    ib_jw_key(jw, "baseline_requested");
    jw_str_or_null(jw, rep->opts.baseline);
    ib_jw_key(jw, "rules_version");
    jw_str_or_null(jw, rep->opts.rules_version);
    ib_jw_key(jw, "prices");
    if (!rep->prices_path) {
        ib_jw_null(jw);
    } else {
        ib_jw_object_begin(jw);
        ib_jw_key(jw, "file");
        ib_jw_string(jw, rep->prices_path);
        ib_jw_key(jw, "rows");
        ib_jw_array_begin(jw);
        for (size_t i = 0; i < rep->prices.len; i++) {
            const ib_rpt_price *p = &rep->prices.data[i];
            ib_jw_object_begin(jw);
            ib_jw_key(jw, "system");
            ib_jw_string(jw, p->system);
            ib_jw_key(jw, "price");
            ib_jw_double(jw, p->price);
            ib_jw_key(jw, "currency");
            ib_jw_string(jw, p->currency);
            ib_jw_key(jw, "date");
            ib_jw_string(jw, p->date);
            ib_jw_key(jw, "source");
            ib_jw_string(jw, p->source);
            ib_jw_object_end(jw);
        }
        ib_jw_array_end(jw);
        ib_jw_object_end(jw);
    }
    ib_jw_key(jw, "tco");
    if (!rep->tco_path) {
        ib_jw_null(jw);
    } else {
        ib_jw_object_begin(jw);
        ib_jw_key(jw, "file");
        ib_jw_string(jw, rep->tco_path);
        ib_jw_key(jw, "sections");
        ib_jw_array_begin(jw);
        for (size_t i = 0; i < rep->tco.len; i++) {
            const ib_rpt_tco_entry *e = &rep->tco.data[i];
            ib_jw_object_begin(jw);
            ib_jw_key(jw, "system");
            jw_str_or_null(jw, e->system);
            ib_jw_key(jw, "amortization_years");
            ib_jw_double(jw, e->tco.amortization_years);
            ib_jw_key(jw, "utilization");
            ib_jw_double(jw, e->tco.utilization);
            ib_jw_key(jw, "pue");
            ib_jw_double(jw, e->tco.pue);
            ib_jw_key(jw, "energy_cost_per_kwh");
            ib_jw_double(jw, e->tco.energy_cost_per_kwh);
            ib_jw_key(jw, "annual_opex");
            ib_jw_double(jw, e->tco.annual_opex);
            ib_jw_key(jw, "hourly_cost");
            ib_jw_double(jw, e->tco.hourly_cost);
            ib_jw_key(jw, "power_w");
            ib_jw_double(jw, e->tco.power_w);
            ib_jw_key(jw, "power_source");
            jw_str_or_null(jw, e->tco.power_source);
            ib_jw_object_end(jw);
        }
        ib_jw_array_end(jw);
        ib_jw_object_end(jw);
    }
    ib_jw_key(jw, "published");
    if (!rep->published_path) {
        ib_jw_null(jw);
    } else {
        ib_jw_object_begin(jw);
        ib_jw_key(jw, "file");
        ib_jw_string(jw, rep->published_path);
        ib_jw_key(jw, "rows");
        ib_jw_array_begin(jw);
        for (size_t i = 0; i < rep->published.len; i++) {
            const ib_rpt_published *p = &rep->published.data[i];
            ib_jw_object_begin(jw);
            ib_jw_key(jw, "system");
            ib_jw_string(jw, p->system);
            ib_jw_key(jw, "result_id");
            ib_jw_string(jw, p->result_id);
            ib_jw_key(jw, "retrieved");
            ib_jw_string(jw, p->retrieved);
            ib_jw_key(jw, "source");
            ib_jw_string(jw, p->source);
            ib_jw_object_end(jw);
        }
        ib_jw_array_end(jw);
        ib_jw_object_end(jw);
    }
    ib_jw_object_end(jw);
}

/* A system with its full description JSON embedded as an object. */
static void json_system(const ib_report *rep, size_t i, ib_jw *jw)
{
    const ib_report_system *s = &rep->systems.data[i];
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "id");
    ib_jw_string(jw, s->id);
    ib_jw_key(jw, "name");
    ib_jw_string(jw, s->name);
    ib_jw_key(jw, "submitter");
    ib_jw_string(jw, s->submitter);
    ib_jw_key(jw, "division");
    ib_jw_string(jw, s->division);
    ib_jw_key(jw, "category");
    ib_jw_string(jw, s->status);
    ib_jw_key(jw, "accelerator");
    ib_jw_string(jw, s->accelerator);
    ib_jw_key(jw, "chips");
    ib_jw_int(jw, s->chips);
    ib_jw_key(jw, "chip_kind");
    ib_jw_string(jw, s->chip_kind);
    ib_jw_key(jw, "host_cpu");
    ib_jw_string(jw, s->host_cpu);
    ib_jw_key(jw, "layout");
    ib_jw_string(jw, s->official_layout ? "submission" : "inferbench");
    ib_jw_key(jw, "verification");
    ib_jw_string(jw, s->published ? "published" : "unverified");
    ib_jw_key(jw, "result_id");
    jw_str_or_null(jw, s->result_id);
    ib_jw_key(jw, "retrieved");
    jw_str_or_null(jw, s->retrieved);
    ib_jw_key(jw, "source");
    jw_str_or_null(jw, s->source);
    ib_jw_key(jw, "price");
    if (s->has_price) {
        ib_jw_object_begin(jw);
        ib_jw_key(jw, "value");
        ib_jw_double(jw, s->price);
        ib_jw_key(jw, "currency");
        ib_jw_string(jw, s->currency);
        ib_jw_key(jw, "date");
        ib_jw_string(jw, s->price_date);
        ib_jw_key(jw, "source");
        ib_jw_string(jw, s->price_source);
        ib_jw_object_end(jw);
    } else {
        ib_jw_null(jw);
    }
    ib_jw_key(jw, "description");
    if (s->desc_json[0])
        ib_jw_raw(jw, s->desc_json);
    else
        ib_jw_null(jw);
    ib_jw_object_end(jw);
}

/* A result row: the CSV columns plus every derived number, accuracy and latencies. */
static void json_result(const ib_report *rep, const ib_report_result *r, ib_jw *jw)
{
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "system");
    ib_jw_string(jw, rep->systems.data[r->system].id);
    ib_jw_key(jw, "benchmark");
    ib_jw_string(jw, r->benchmark);
    ib_jw_key(jw, "scenario");
    ib_jw_string(jw, ib_report_scenario_name(r->scenario));
    ib_jw_key(jw, "result");
    ib_jw_double(jw, r->run.metric);
    ib_jw_key(jw, "unit");
    ib_jw_string(jw, r->run.unit);
    ib_jw_key(jw, "validity");
    ib_jw_string(jw, ib_report_validity_name(r->run.validity));
    ib_jw_key(jw, "relative_performance");
    ib_jw_double(jw, r->relative_performance);
    ib_jw_key(jw, "relative_perf_per_cost");
    ib_jw_double(jw, r->relative_perf_per_cost);
    ib_jw_key(jw, "own_run"); /* an inferbench run, not an MLPerf submission's log */
    ib_jw_bool(jw, r->own_run);
    ib_jw_key(jw, "labels");
    ib_jw_array_begin(jw);
    for (const char *l = r->labels ? r->labels : ""; *l;) {
        size_t n = strcspn(l, "\n");
        ib_jw_string_n(jw, l, n);
        l += n + (l[n] == '\n');
    }
    ib_jw_array_end(jw);
    ib_jw_key(jw, "cost_per_million");
    ib_jw_double(jw, r->cost_per_million);
    ib_jw_key(jw, "avg_power_w");
    ib_jw_double(jw, r->avg_power_w);
    ib_jw_key(jw, "perf_per_watt");
    ib_jw_double(jw, r->perf_per_watt);
    ib_jw_key(jw, "energy_mj_per_query");
    ib_jw_double(jw, r->energy_mj_per_query);
    ib_jw_key(jw, "metric_key");
    ib_jw_string(jw, r->run.metric_key);
    ib_jw_key(jw, "higher_is_better");
    ib_jw_bool(jw, r->run.higher_is_better);
    ib_jw_key(jw, "version");
    jw_str_or_null(jw, r->run.version);
    ib_jw_key(jw, "loadgen_version");
    jw_str_or_null(jw, r->run.loadgen_version);
    ib_jw_key(jw, "log");
    ib_jw_string(jw, r->run.source == IB_REPORT_SOURCE_DETAIL ? "mlperf_log_detail.txt"
                                                              : "mlperf_log_summary.txt");
    ib_jw_key(jw, "run_dir");
    ib_jw_string(jw, r->run_dir);
    ib_jw_key(jw, "accuracy");
    if (r->accuracy_metric[0]) {
        ib_jw_object_begin(jw);
        ib_jw_key(jw, "metric");
        ib_jw_string(jw, r->accuracy_metric);
        ib_jw_key(jw, "value");
        ib_jw_double(jw, r->accuracy);
        ib_jw_object_end(jw);
    } else {
        ib_jw_null(jw);
    }
    ib_jw_key(jw, "latency_ns");
    ib_jw_object_begin(jw);
    static const char *const names[IB_REPORT_NPCT] = {"p50", "p90", "p95", "p97", "p99", "p99.9"};
    for (int k = 0; k < IB_REPORT_NPCT; k++) {
        ib_jw_key(jw, names[k]);
        ib_jw_double(jw, r->run.latency_pct_ns[k]);
    }
    ib_jw_key(jw, "min");
    ib_jw_double(jw, r->run.latency_min_ns);
    ib_jw_key(jw, "max");
    ib_jw_double(jw, r->run.latency_max_ns);
    ib_jw_key(jw, "mean");
    ib_jw_double(jw, r->run.latency_mean_ns);
    ib_jw_key(jw, "target");
    ib_jw_double(jw, r->run.target_latency_ns);
    ib_jw_object_end(jw);
    ib_jw_key(jw, "errors");
    ib_jw_int(jw, r->run.errors);
    ib_jw_key(jw, "warnings");
    ib_jw_int(jw, r->run.warnings);
    ib_jw_key(jw, "invalid_reason");
    jw_str_or_null(jw, r->run.invalid_reason);
    ib_jw_object_end(jw);
}

int ib_rpt_write_json(const ib_report *rep, ib_strbuf *out)
{
    ib_rpt_notes notes;
    if (ib_rpt_notes_build(rep, &notes)) return IB_ENOMEM;
    ib_jw jw;
    ib_jw_init(&jw, out, true);
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "generator");
    ib_jw_object_begin(&jw);
    ib_jw_key(&jw, "name");
    ib_jw_string(&jw, "inferbench report");
    ib_jw_key(&jw, "version");
    ib_jw_string(&jw, ib_version_string());
    ib_jw_object_end(&jw);
    ib_jw_key(&jw, "generated");
    ib_jw_string(&jw, rep->generated);
    json_inputs(rep, &jw);
    ib_jw_key(&jw, "baseline");
    if (rep->baseline != IB_RPT_NONE)
        ib_jw_string(&jw, rep->systems.data[rep->baseline].id);
    else
        ib_jw_null(&jw);
    ib_jw_key(&jw, "cost_basis");
    ib_jw_string(&jw, rep->tco.len ? "tco_hourly_cost" : "price");
    ib_jw_key(&jw, "headline"); /* one sentence per system against the baseline */
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < rep->systems.len; i++) {
        char h[512];
        if (ib_report_headline(rep, i, h, sizeof h)) ib_jw_string(&jw, h);
    }
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "warnings"); /* runs skipped as unfinished */
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < rep->warnings.len; i++)
        ib_jw_string(&jw, rep->warnings.data[i]);
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "systems");
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < rep->systems.len; i++)
        json_system(rep, i, &jw);
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "results");
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < rep->results.len; i++)
        json_result(rep, &rep->results.data[i], &jw);
    ib_jw_array_end(&jw);
    ib_jw_key(&jw, "notes");
    ib_jw_array_begin(&jw);
    for (size_t i = 0; i < notes.v.len; i++) {
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "kind");
        ib_jw_string(&jw, notes.v.data[i].kind);
        ib_jw_key(&jw, "text");
        ib_jw_string(&jw, notes.v.data[i].text);
        ib_jw_object_end(&jw);
    }
    ib_jw_array_end(&jw);
    ib_jw_object_end(&jw);
    ib_rpt_notes_deinit(&notes);
    int rc = ib_jw_finish(&jw);
    if (rc == IB_OK) ib_strbuf_putc(out, '\n');
    return rc ? rc : (out->oom ? IB_ENOMEM : IB_OK);
}
