/*
 * inputs.c - the report's side inputs: the price file (CSV system,price,currency,
 * date,source), the TCO assumptions (key = value with [system] sections) and the
 * list of published MLCommons results (CSV system,result_id,retrieved,source).
 * Every error names the file and line; nothing is guessed.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "report/csv.h"
#include "report/report_impl.h"
#include "report/rutil.h"

#define INPUT_MAX_BYTES ((size_t)16 << 20)

/* Read and split a CSV input; an empty file is an error (a header is required). */
static int read_csv(ib_report *rep, const char *path, ib_rpt_csv *csv, ib_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, INPUT_MAX_BYTES, &text, &len, err);
    if (rc) return rc;
    rc = ib_rpt_csv_parse(text, len, path, &rep->arena, csv, err);
    ib_free(text);
    if (rc == IB_OK && csv->rows.len == 0) {
        ib_rpt_csv_deinit(csv);
        return ib_err_set(err, IB_EFORMAT, "%s: empty file (expected a header line)", path);
    }
    return rc;
}

/* Map the named header columns; every one is required. */
static int header_columns(const ib_rpt_csv *csv, const char *path, const char *const *names,
                          int *cols, size_t n, ib_err *err)
{
    for (size_t i = 0; i < n; i++) {
        cols[i] = ib_rpt_csv_column(csv, names[i]);
        if (cols[i] < 0)
            return ib_err_set(err, IB_EFORMAT,
                              "%s:1: missing column '%s' (the header must be "
                              "%s,%s,%s,%s%s%s)",
                              path, names[i], names[0], names[1], names[2], names[3],
                              n > 4 ? "," : "", n > 4 ? names[4] : "");
    }
    return IB_OK;
}

/* A field of a row, "" when the row is short. */
static const char *cell(const ib_rpt_csv_row *row, int col)
{
    return col >= 0 && (size_t)col < row->nfield ? row->field[col] : "";
}

int ib_report_load_prices(ib_report *rep, const char *path, ib_err *err)
{
    IB_ASSERT(rep && path);
    ib_rpt_csv csv;
    int rc = read_csv(rep, path, &csv, err);
    if (rc) return rc;
    static const char *const names[] = {"system", "price", "currency", "date", "source"};
    int col[5];
    rc = header_columns(&csv, path, names, col, 5, err);
    const char *currency = NULL;
    for (size_t i = 1; rc == IB_OK && i < csv.rows.len; i++) {
        const ib_rpt_csv_row *row = &csv.rows.data[i];
        ib_rpt_price p = {
            cell(row, col[0]), 0,        cell(row, col[1]), cell(row, col[2]), cell(row, col[3]),
            cell(row, col[4]), row->line};
        if (!p.system[0]) {
            rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: empty system name", path, row->line);
        } else if (!ib_rpt_parse_double(p.price_text, &p.price) || p.price <= 0) {
            rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: price '%s' of %s is not a positive number",
                            path, row->line, p.price_text, p.system);
        } else if (!p.currency[0]) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:%zu: empty currency for %s (use e.g. USD, or "
                            "'relative' for price ratios)",
                            path, row->line, p.system);
        } else if (currency && !ib_rpt_ieq(currency, p.currency)) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:%zu: currency '%s' differs from '%s' above; "
                            "convert all prices to one currency",
                            path, row->line, p.currency, currency);
        } else {
            for (size_t k = 0; k < rep->prices.len; k++)
                if (!strcmp(rep->prices.data[k].system, p.system))
                    rc = ib_err_set(err, IB_EFORMAT,
                                    "%s:%zu: second price for %s (first on "
                                    "line %zu)",
                                    path, row->line, p.system, rep->prices.data[k].line);
            currency = p.currency;
            if (rc == IB_OK && IB_VEC_PUSH(&rep->prices, p))
                rc = ib_err_set(err, IB_ENOMEM, "out of memory");
        }
    }
    if (rc == IB_OK && rep->prices.len == 0)
        rc = ib_err_set(err, IB_EFORMAT, "%s: no price rows after the header", path);
    if (rc == IB_OK)
        rep->prices_path = ib_arena_strdup(&rep->arena, path);
    else
        rep->prices.len = 0;
    ib_rpt_csv_deinit(&csv);
    rep->computed = false;
    return rc;
}

int ib_report_load_published(ib_report *rep, const char *path, ib_err *err)
{
    IB_ASSERT(rep && path);
    ib_rpt_csv csv;
    int rc = read_csv(rep, path, &csv, err);
    if (rc) return rc;
    static const char *const names[] = {"system", "result_id", "retrieved", "source"};
    int col[4];
    rc = header_columns(&csv, path, names, col, 4, err);
    for (size_t i = 1; rc == IB_OK && i < csv.rows.len; i++) {
        const ib_rpt_csv_row *row = &csv.rows.data[i];
        ib_rpt_published p = {cell(row, col[0]), cell(row, col[1]), cell(row, col[2]),
                              cell(row, col[3])};
        if (!p.system[0])
            rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: empty system name", path, row->line);
        else if (!p.source[0])
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:%zu: empty source for %s (say where the "
                            "published results were retrieved from)",
                            path, row->line, p.system);
        else if (IB_VEC_PUSH(&rep->published, p))
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    if (rc == IB_OK)
        rep->published_path = ib_arena_strdup(&rep->arena, path);
    else
        rep->published.len = 0;
    ib_rpt_csv_deinit(&csv);
    rep->computed = false;
    return rc;
}

/* ---- TCO ------------------------------------------------------------------------ */

/* All assumptions unset (NaN): sections only override what they set. */
static void tco_clear(ib_rpt_tco *t)
{
    t->amortization_years = t->utilization = t->pue = t->energy_cost_per_kwh = IB_RPT_NAN;
    t->annual_opex = t->power_w = t->hourly_cost = IB_RPT_NAN;
    t->power_source = NULL;
    t->currency = NULL;
}

/* users.md §3.3: derived metrics must not rest on TDP, rated or PSU power. */
static bool refused_power_source(const char *s)
{
    static const char *const bad[] = {"tdp", "nameplate", "rated", "psu", "spec", "datasheet"};
    for (size_t i = 0; i < IB_ARRAY_LEN(bad); i++)
        if (ib_rpt_ieq(s, bad[i])) return true;
    return false;
}

/* Parse a number in [lo, hi] (lo excluded when lo_open), naming file, line and key. */
static int tco_number(const char *path, size_t line, const char *key, const char *val, double lo,
                      double hi, bool lo_open, double *out, ib_err *err)
{
    double v;
    if (!ib_rpt_parse_double(val, &v) || v < lo || (lo_open && v == lo) || v > hi)
        return ib_err_set(err, IB_EFORMAT, "%s:%zu: %s = '%s' must be a number in %s%g, %g]", path,
                          line, key, val, lo_open ? "(" : "[", lo, hi);
    *out = v;
    return IB_OK;
}

/*
 * One key = value line; unknown keys are errors so a typo never silently falls back
 * to a default.
 */
static int tco_key(ib_report *rep, ib_rpt_tco *t, const char *path, size_t line, const char *key,
                   const char *val, ib_err *err)
{
    if (!strcmp(key, "amortization_years") || !strcmp(key, "amortisation_years"))
        return tco_number(path, line, key, val, 0, 100, true, &t->amortization_years, err);
    if (!strcmp(key, "utilization") || !strcmp(key, "utilisation"))
        return tco_number(path, line, key, val, 0, 1, true, &t->utilization, err);
    if (!strcmp(key, "pue")) return tco_number(path, line, key, val, 1, 10, false, &t->pue, err);
    if (!strcmp(key, "energy_cost_per_kwh"))
        return tco_number(path, line, key, val, 0, 1e6, false, &t->energy_cost_per_kwh, err);
    if (!strcmp(key, "annual_opex"))
        return tco_number(path, line, key, val, 0, 1e15, false, &t->annual_opex, err);
    if (!strcmp(key, "hourly_cost"))
        return tco_number(path, line, key, val, 0, 1e12, true, &t->hourly_cost, err);
    if (!strcmp(key, "power_w"))
        return tco_number(path, line, key, val, 0, 1e9, true, &t->power_w, err);
    if (!strcmp(key, "power_source")) {
        if (refused_power_source(val))
            return ib_err_set(err, IB_EINVAL,
                              "%s:%zu: power_source = %s is refused: MLPerf messaging rules allow "
                              "only measured power (MLPerf power logs, PDU, BMC) for derived "
                              "metrics, never TDP, nameplate, rated or PSU power",
                              path, line, val);
        t->power_source = ib_arena_strdup(&rep->arena, val);
        return t->power_source ? IB_OK : ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    if (!strcmp(key, "currency")) {
        t->currency = ib_arena_strdup(&rep->arena, val);
        return t->currency ? IB_OK : ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    if (strstr(key, "tdp") || strstr(key, "nameplate"))
        return ib_err_set(err, IB_EINVAL,
                          "%s:%zu: %s is refused: TDP or nameplate power must not "
                          "be used for MLPerf-derived metrics (use measured power_w)",
                          path, line, key);
    return ib_err_set(err, IB_EFORMAT,
                      "%s:%zu: unknown key '%s' (known: amortization_years, utilization, pue, "
                      "energy_cost_per_kwh, annual_opex, hourly_cost, power_w, power_source, "
                      "currency)",
                      path, line, key);
}

/* INI-like parsing: [default] (or lines before any section) and [system] sections. */
static int tco_parse(ib_report *rep, const char *text, size_t len, const char *path, ib_err *err)
{
    ib_rpt_tco_entry cur = {NULL, {0}, 0};
    tco_clear(&cur.tco);
    bool have_cur = true; /* the implicit [default] section */
    size_t pos = 0, line = 0;
    char buf[1024];
    int rc = IB_OK;
    while (pos < len && rc == IB_OK) {
        const char *p = text + pos;
        const char *nl = memchr(p, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - p) : len - pos;
        pos += n + (nl ? 1 : 0);
        line++;
        if (n >= sizeof buf)
            return ib_err_set(err, IB_EFORMAT, "%s:%zu: line longer than %zu bytes", path, line,
                              sizeof buf - 1);
        ib_rpt_strlcpy(buf, sizeof buf, p, n);
        char *hash = strpbrk(buf, "#;");
        if (hash) *hash = '\0';
        char *s = ib_rpt_trim(buf);
        if (!*s) continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close || close[1])
                return ib_err_set(err, IB_EFORMAT, "%s:%zu: malformed section header", path, line);
            *close = '\0';
            char *name = ib_rpt_trim(s + 1);
            if (have_cur && IB_VEC_PUSH(&rep->tco, cur))
                return ib_err_set(err, IB_ENOMEM, "out of memory");
            cur.system = (!strcmp(name, "default") || !strcmp(name, "*"))
                             ? NULL
                             : ib_arena_strdup(&rep->arena, name);
            cur.line = line;
            tco_clear(&cur.tco);
            have_cur = true;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) return ib_err_set(err, IB_EFORMAT, "%s:%zu: expected 'key = value'", path, line);
        *eq = '\0';
        rc = tco_key(rep, &cur.tco, path, line, ib_rpt_trim(s), ib_rpt_trim(eq + 1), err);
    }
    if (rc == IB_OK && have_cur && IB_VEC_PUSH(&rep->tco, cur))
        rc = ib_err_set(err, IB_ENOMEM, "out of memory");
    return rc;
}

int ib_report_load_tco(ib_report *rep, const char *path, ib_err *err)
{
    IB_ASSERT(rep && path);
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, INPUT_MAX_BYTES, &text, &len, err);
    if (rc) return rc;
    rep->tco.len = 0;
    rc = tco_parse(rep, text, len, path, err);
    ib_free(text);
    if (rc)
        rep->tco.len = 0;
    else
        rep->tco_path = ib_arena_strdup(&rep->arena, path);
    rep->computed = false;
    return rc;
}

/* Overlay the set fields of src onto dst. */
static void tco_merge(ib_rpt_tco *dst, const ib_rpt_tco *src)
{
#define MERGE(f)                                                                                   \
    if (!isnan(src->f)) dst->f = src->f
    MERGE(amortization_years);
    MERGE(utilization);
    MERGE(pue);
    MERGE(energy_cost_per_kwh);
    MERGE(annual_opex);
    MERGE(power_w);
    MERGE(hourly_cost);
#undef MERGE
    if (src->power_source) dst->power_source = src->power_source;
    if (src->currency) dst->currency = src->currency;
}

ib_rpt_tco ib_rpt_tco_for(const ib_report *rep, const char *system)
{
    ib_rpt_tco t;
    tco_clear(&t);
    for (size_t i = 0; i < rep->tco.len; i++)
        if (!rep->tco.data[i].system) tco_merge(&t, &rep->tco.data[i].tco);
    for (size_t i = 0; i < rep->tco.len; i++)
        if (rep->tco.data[i].system && system && !strcmp(rep->tco.data[i].system, system))
            tco_merge(&t, &rep->tco.data[i].tco);
    /* users.md §3.1 defaults: 3-year amortization, full utilization, no opex */
    if (isnan(t.amortization_years)) t.amortization_years = 3;
    if (isnan(t.utilization)) t.utilization = 1;
    if (isnan(t.annual_opex)) t.annual_opex = 0;
    return t;
}
