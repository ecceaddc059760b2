/*
 * report.c - the ib_report object: lifetime, accessors, and ib_report_compute,
 * which picks the baseline and derives relative performance, relative perf per
 * cost, cost per million inferences (users.md §3.1). Invalid results are never
 * compared (their relative columns stay empty). Writing lives in output.c/html.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/common.h"
#include "base/fileio.h"
#include "report/calc.h"
#include "report/fmt.h"
#include "report/report_impl.h"
#include "report/rutil.h"

void ib_report_options_defaults(ib_report_options *opts)
{
    memset(opts, 0, sizeof *opts);
}

/* Options are copied so the caller's strings may go away after create. */
static const char *dup_opt(ib_arena *a, const char *s)
{
    return s ? ib_arena_strdup(a, s) : NULL;
}

int ib_report_create(const ib_report_options *opts, ib_report **out, ib_err *err)
{
    IB_ASSERT(out);
    *out = NULL;
    ib_report *rep = ib_calloc(1, sizeof *rep);
    if (!rep) return ib_err_set(err, IB_ENOMEM, "out of memory");
    ib_arena_init(&rep->arena, 0);
    ib_report_options d;
    ib_report_options_defaults(&d);
    if (!opts) opts = &d;
    rep->opts.baseline = dup_opt(&rep->arena, opts->baseline);
    rep->opts.rules_version = dup_opt(&rep->arena, opts->rules_version);
    rep->opts.title = dup_opt(&rep->arena, opts->title);
    rep->opts.strict = opts->strict;
    rep->baseline = IB_RPT_NONE;
    if (opts->generated) {
        ib_rpt_strlcpy(rep->generated, sizeof rep->generated, opts->generated, (size_t)-1);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(rep->generated, sizeof rep->generated, "%Y-%m-%d", &tm);
    }
    if (opts->rules_version) {
        char v[16];
        if (!ib_rpt_normalize_version(opts->rules_version, v, sizeof v)) {
            ib_report_destroy(rep);
            return ib_err_set(err, IB_EINVAL, "rules version '%s' is not of the form v1.1",
                              opts->rules_version);
        }
    }
    *out = rep;
    return IB_OK;
}

void ib_report_destroy(ib_report *rep)
{
    if (!rep) return;
    for (size_t i = 0; i < rep->sysdesc.len; i++)
        json_decref(rep->sysdesc.data[i]);
    IB_VEC_FREE(&rep->systems);
    IB_VEC_FREE(&rep->sysdesc);
    IB_VEC_FREE(&rep->results);
    IB_VEC_FREE(&rep->trees);
    IB_VEC_FREE(&rep->prices);
    IB_VEC_FREE(&rep->tco);
    IB_VEC_FREE(&rep->published);
    IB_VEC_FREE(&rep->warnings);
    ib_arena_deinit(&rep->arena);
    ib_free(rep);
}

size_t ib_report_system_count(const ib_report *rep)
{
    return rep->systems.len;
}

const ib_report_system *ib_report_system_at(const ib_report *rep, size_t i)
{
    return i < rep->systems.len ? &rep->systems.data[i] : NULL;
}

size_t ib_report_result_count(const ib_report *rep)
{
    return rep->results.len;
}

const ib_report_result *ib_report_result_at(const ib_report *rep, size_t i)
{
    return i < rep->results.len ? &rep->results.data[i] : NULL;
}

size_t ib_report_baseline(const ib_report *rep)
{
    return rep->baseline;
}

size_t ib_report_invalid_count(const ib_report *rep)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->results.len; i++)
        if (rep->results.data[i].run.validity != IB_REPORT_VALIDITY_VALID) n++;
    return n;
}

size_t ib_report_warning_count(const ib_report *rep)
{
    return rep->warnings.len;
}

const char *ib_report_warning_at(const ib_report *rep, size_t i)
{
    return i < rep->warnings.len ? rep->warnings.data[i] : NULL;
}

bool ib_rpt_headline_vs(const ib_report *rep, size_t a, size_t b, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    if (a == b || a >= rep->systems.len || b >= rep->systems.len) return false;
    const ib_report_system *sa = &rep->systems.data[a], *sb = &rep->systems.data[b];
    double lo = INFINITY, hi = -INFINITY, clo = INFINITY, chi = -INFINITY;
    size_t k = 0;
    for (size_t i = 0; i < rep->results.len; i++) {
        const ib_report_result *ra = &rep->results.data[i];
        if (ra->system != a || ra->run.validity != IB_REPORT_VALIDITY_VALID) continue;
        const ib_report_result *rb = ib_rpt_find_result(rep, b, ra->benchmark, ra->scenario);
        if (!rb || rb->run.validity != IB_REPORT_VALIDITY_VALID || strcmp(ra->run.unit, rb->run.unit))
            continue;
        double rel = ib_rpt_relative(ra->run.metric, rb->run.metric, ra->run.higher_is_better);
        if (!isfinite(rel)) continue;
        k++;
        lo = fmin(lo, rel);
        hi = fmax(hi, rel);
        double pc = sa->has_price && sb->has_price
                        ? ib_rpt_relative_per_cost(rel, sa->price, sb->price)
                        : IB_RPT_NAN;
        if (isfinite(pc)) {
            clo = fmin(clo, pc);
            chi = fmax(chi, pc);
        }
    }
    if (!k) return false;
    char x[32], y[32], range[80], crange[96] = "";
    ib_rpt_fmt_ratio(x, sizeof x, lo);
    ib_rpt_fmt_ratio(y, sizeof y, hi);
    snprintf(range, sizeof range, strcmp(x, y) ? "%s-%sx" : "%sx", x, y);
    if (isfinite(clo)) {
        ib_rpt_fmt_ratio(x, sizeof x, clo);
        ib_rpt_fmt_ratio(y, sizeof y, chi);
        snprintf(crange, sizeof crange,
                 strcmp(x, y) ? "; throughput per price %s-%sx" : "; throughput per price %sx", x,
                 y);
    }
    snprintf(buf, n, "%s is %s %s over %zu result%s%s", sa->name, range, sb->name, k,
             k == 1 ? "" : "s", crange);
    return true;
}

bool ib_report_headline(const ib_report *rep, size_t system, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    return rep->baseline != IB_RPT_NONE &&
           ib_rpt_headline_vs(rep, system, rep->baseline, buf, n);
}

size_t ib_rpt_find_system(const ib_report *rep, const char *id)
{
    for (size_t i = 0; i < rep->systems.len; i++)
        if (!strcmp(rep->systems.data[i].id, id)) return i;
    return IB_RPT_NONE;
}

const ib_report_result *ib_rpt_find_result(const ib_report *rep, size_t system,
                                           const char *benchmark, int scenario)
{
    for (size_t i = 0; i < rep->results.len; i++) {
        const ib_report_result *r = &rep->results.data[i];
        if (r->system == system && r->scenario == scenario && !strcmp(r->benchmark, benchmark))
            return r;
    }
    return NULL;
}

bool ib_rpt_is_throughput(const ib_report_result *r)
{
    return r->scenario == IB_REPORT_SCENARIO_OFFLINE || r->scenario == IB_REPORT_SCENARIO_SERVER;
}

int ib_rpt_benchmark_rank(const char *b)
{
    static const char *const order[] = {
        "resnet50",     "resnet",        "ssd-mobilenet",   "ssd-resnet34", "retinanet",
        "bert-99",      "bert-99.9",     "dlrm-99",         "dlrm-99.9",    "dlrm-v2-99",
        "dlrm-v2-99.9", "rnnt",          "3d-unet-99",      "3d-unet-99.9", "gptj-99",
        "gptj-99.9",    "llama2-70b-99", "llama2-70b-99.9", "mixtral-8x7b", "stable-diffusion-xl"};
    for (size_t i = 0; i < IB_ARRAY_LEN(order); i++)
        if (!strcmp(b, order[i])) return (int)i;
    return (int)IB_ARRAY_LEN(order);
}

/* Display order of scenarios: Offline, Server, SingleStream, MultiStream. */
static int scenario_rank(int s)
{
    switch (s) {
    case IB_REPORT_SCENARIO_OFFLINE:
        return 0;
    case IB_REPORT_SCENARIO_SERVER:
        return 1;
    case IB_REPORT_SCENARIO_SINGLE_STREAM:
        return 2;
    case IB_REPORT_SCENARIO_MULTI_STREAM:
        return 3;
    default:
        return 4;
    }
}

/* Results sort by benchmark (v1.1 order), scenario, then system order. */
static int cmp_result(const void *pa, const void *pb)
{
    const ib_report_result *a = pa, *b = pb;
    int ra = ib_rpt_benchmark_rank(a->benchmark), rb = ib_rpt_benchmark_rank(b->benchmark);
    if (ra != rb) return ra < rb ? -1 : 1;
    int c = strcmp(a->benchmark, b->benchmark);
    if (c) return c;
    int sa = scenario_rank(a->scenario), sb = scenario_rank(b->scenario);
    if (sa != sb) return sa < sb ? -1 : 1;
    return a->system < b->system ? -1 : a->system > b->system;
}

int ib_report_set_baseline(ib_report *rep, const char *system, ib_err *err)
{
    IB_ASSERT(rep);
    rep->opts.baseline = dup_opt(&rep->arena, system);
    rep->computed = false;
    if (system && !rep->opts.baseline) return ib_err_set(err, IB_ENOMEM, "out of memory");
    return IB_OK;
}

/* The named system (id or system_name), else the cheapest priced one, else the first. */
static int choose_baseline(ib_report *rep, ib_err *err)
{
    rep->baseline = IB_RPT_NONE;
    if (!rep->systems.len)
        return ib_err_set(err, IB_ENOTFOUND, "no results: add a results tree first");
    if (rep->opts.baseline) {
        for (size_t i = 0; i < rep->systems.len; i++) {
            const ib_report_system *s = &rep->systems.data[i];
            if (!strcmp(s->id, rep->opts.baseline) || !strcmp(s->name, rep->opts.baseline))
                rep->baseline = i;
        }
        if (rep->baseline == IB_RPT_NONE) {
            char list[1024] = "";
            size_t n = 0;
            for (size_t i = 0; i < rep->systems.len && n < sizeof list; i++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                                      rep->systems.data[i].id);
            return ib_err_set(err, IB_ENOTFOUND, "baseline '%s' is not one of the systems (%s)",
                              rep->opts.baseline, list);
        }
        return IB_OK;
    }
    /* users.md §3.1: normalise to the cheaper system; else the first one found */
    double best = 0;
    for (size_t i = 0; i < rep->systems.len; i++) {
        const ib_report_system *s = &rep->systems.data[i];
        if (s->has_price && (rep->baseline == IB_RPT_NONE || s->price < best)) {
            best = s->price;
            rep->baseline = i;
        }
    }
    if (rep->baseline == IB_RPT_NONE) rep->baseline = 0;
    return IB_OK;
}

/* Attach prices and published entries to the systems (by id or system_name). */
static void apply_inputs(ib_report *rep)
{
    for (size_t i = 0; i < rep->systems.len; i++) {
        ib_report_system *s = &rep->systems.data[i];
        s->has_price = false;
        s->published = false;
        for (size_t k = 0; k < rep->prices.len; k++) {
            const ib_rpt_price *p = &rep->prices.data[k];
            if (strcmp(p->system, s->id) && strcmp(p->system, s->name)) continue;
            s->has_price = true;
            s->price = p->price;
            s->currency = p->currency;
            s->price_date = p->date;
            s->price_source = p->source;
        }
        for (size_t k = 0; k < rep->published.len; k++) {
            const ib_rpt_published *p = &rep->published.data[k];
            if (strcmp(p->system, s->id) && strcmp(p->system, s->name)) continue;
            s->published = true;
            s->result_id = p->result_id;
            s->retrieved = p->retrieved;
            s->source = p->source;
        }
    }
}

/* Effective hourly cost of running one result's workload (NaN when no price). */
static double result_hourly_cost(const ib_report *rep, const ib_report_result *r)
{
    const ib_report_system *s = &rep->systems.data[r->system];
    ib_rpt_tco t = ib_rpt_tco_for(rep, s->id);
    if (!s->has_price && isnan(t.hourly_cost)) return IB_RPT_NAN;
    /* energy: MLPerf-measured power of this run first, else the TCO's measured power */
    double power = !isnan(r->avg_power_w) ? r->avg_power_w : t.power_w;
    double energy = IB_RPT_NAN;
    if (!isnan(t.energy_cost_per_kwh) && power > 0)
        energy = ib_rpt_annual_energy_cost(power, isnan(t.pue) ? 1.0 : t.pue, t.utilization,
                                           t.energy_cost_per_kwh);
    return ib_rpt_hourly_cost(s->has_price ? s->price : IB_RPT_NAN, t.amortization_years,
                              t.annual_opex, energy, t.utilization, t.hourly_cost);
}

/* TCO money terms cannot be added to relative price units. */
static int check_tco_currency(const ib_report *rep, ib_err *err)
{
    for (size_t i = 0; i < rep->systems.len; i++) {
        const ib_report_system *s = &rep->systems.data[i];
        ib_rpt_tco t = ib_rpt_tco_for(rep, s->id);
        bool money = !isnan(t.energy_cost_per_kwh) || t.annual_opex > 0 || !isnan(t.hourly_cost);
        if (s->has_price && money && ib_rpt_ieq(s->currency, "relative"))
            return ib_err_set(err, IB_EINVAL,
                              "%s: the TCO file adds energy/opex/hourly costs, but the price of "
                              "%s is in relative units; give prices in a currency",
                              rep->tco_path ? rep->tco_path : "tco", s->id);
        if (s->has_price && t.currency && !ib_rpt_ieq(t.currency, s->currency))
            return ib_err_set(err, IB_EINVAL,
                              "%s: TCO currency %s differs from the price "
                              "currency %s of %s",
                              rep->tco_path ? rep->tco_path : "tco", t.currency, s->currency,
                              s->id);
    }
    return IB_OK;
}

int ib_report_compute(ib_report *rep, ib_err *err)
{
    IB_ASSERT(rep);
    apply_inputs(rep);
    int rc = choose_baseline(rep, err);
    if (rc) return rc;
    rc = check_tco_currency(rep, err);
    if (rc) return rc;
    if (rep->results.len)
        qsort(rep->results.data, rep->results.len, sizeof *rep->results.data, cmp_result);
    bool use_tco = rep->tco.len > 0;
    for (size_t i = 0; i < rep->results.len; i++) {
        ib_report_result *r = &rep->results.data[i];
        const ib_report_system *s = &rep->systems.data[r->system];
        r->relative_performance = r->relative_perf_per_cost = r->cost_per_million = IB_RPT_NAN;
        double hourly = result_hourly_cost(rep, r);
        bool money = !s->has_price || !ib_rpt_ieq(s->currency, "relative");
        if (money && ib_rpt_is_throughput(r) && r->run.validity == IB_REPORT_VALIDITY_VALID)
            r->cost_per_million = ib_rpt_cost_per_million(hourly, r->run.metric);
        const ib_report_result *b =
            ib_rpt_find_result(rep, rep->baseline, r->benchmark, r->scenario);
        if (!b || r->run.validity != IB_REPORT_VALIDITY_VALID ||
            b->run.validity != IB_REPORT_VALIDITY_VALID || strcmp(b->run.unit, r->run.unit))
            continue;
        r->relative_performance =
            ib_rpt_relative(r->run.metric, b->run.metric, r->run.higher_is_better);
        const ib_report_system *bs = &rep->systems.data[rep->baseline];
        double cost = use_tco ? hourly : (s->has_price ? s->price : IB_RPT_NAN);
        double base_cost =
            use_tco ? result_hourly_cost(rep, b) : (bs->has_price ? bs->price : IB_RPT_NAN);
        r->relative_perf_per_cost =
            ib_rpt_relative_per_cost(r->relative_performance, cost, base_cost);
    }
    rep->computed = true;
    return IB_OK;
}

int ib_report_summary_json(ib_report *rep, char **out, ib_err *err)
{
    IB_ASSERT(rep && out);
    *out = NULL;
    if (!rep->computed) {
        int rc = ib_report_compute(rep, err);
        if (rc) return rc;
    }
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    if (ib_rpt_write_json(rep, &sb)) {
        ib_strbuf_deinit(&sb);
        return ib_err_set(err, IB_ENOMEM, "out of memory writing summary.json");
    }
    *out = ib_strbuf_detach(&sb);
    return IB_OK;
}

int ib_report_write(ib_report *rep, const char *dir, ib_err *err)
{
    IB_ASSERT(rep && dir);
    int rc = IB_OK;
    if (!rep->computed && (rc = ib_report_compute(rep, err))) return rc;
    if ((rc = ib_mkdirs(dir, err))) return rc;
    char path[4096];
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    if (ib_rpt_write_csv(rep, &sb)) {
        rc = ib_err_set(err, IB_ENOMEM, "out of memory writing summary.csv");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    if ((rc = ib_file_write_all(path, sb.data ? sb.data : "", sb.len, err))) goto fail;
    ib_strbuf_reset(&sb);
    if (ib_rpt_write_json(rep, &sb)) {
        rc = ib_err_set(err, IB_ENOMEM, "out of memory writing summary.json");
        goto fail;
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if ((rc = ib_file_write_all(path, sb.data ? sb.data : "", sb.len, err))) goto fail;
    rc = ib_rpt_write_charts_and_html(rep, dir, err);
fail:
    ib_strbuf_deinit(&sb);
    return rc;
}
