/*
 * report_impl.h - the ib_report object shared by the report modules (tree walking,
 * inputs, computation, writers). Internal to src/report; users see report.h only.
 */
#ifndef IB_REPORT_IMPL_H
#define IB_REPORT_IMPL_H

#include <jansson.h>
#include <stdbool.h>

#include "base/arena.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "inferbench/report.h"

#define IB_RPT_NONE ((size_t)-1)

/* TCO assumptions (users.md §3.1); NaN = not given. */
typedef struct ib_rpt_tco {
    double amortization_years;
    double utilization;
    double pue;
    double energy_cost_per_kwh;
    double annual_opex;
    double power_w;     /* measured average power for the energy cost (not for perf/W) */
    double hourly_cost; /* cloud-style price per hour; replaces capex + opex when set */
    const char *power_source;
    const char *currency;
} ib_rpt_tco;

typedef struct ib_rpt_tco_entry {
    const char *system; /* NULL for the [default] section */
    ib_rpt_tco tco;
    size_t line;
} ib_rpt_tco_entry;

typedef struct ib_rpt_price {
    const char *system;
    double price;
    const char *price_text;
    const char *currency;
    const char *date;
    const char *source;
    size_t line;
} ib_rpt_price;

typedef struct ib_rpt_published {
    const char *system;
    const char *result_id;
    const char *retrieved;
    const char *source;
} ib_rpt_published;

struct ib_report {
    ib_arena arena;
    ib_report_options opts; /* strings copied into the arena */
    IB_VEC(ib_report_system) systems;
    IB_VEC(json_t *) sysdesc; /* parallel to systems; NULL when no description */
    IB_VEC(ib_report_result) results;
    IB_VEC(const char *) trees;
    IB_VEC(ib_rpt_price) prices;
    const char *prices_path;
    IB_VEC(ib_rpt_tco_entry) tco;
    const char *tco_path;
    IB_VEC(ib_rpt_published) published;
    IB_VEC(const char *) warnings; /* runs skipped as unfinished (arena strings) */
    const char *published_path;
    size_t baseline;
    bool computed;
    char generated[32];
};

/* Index of the system with this id, or IB_RPT_NONE. */
size_t ib_rpt_find_system(const ib_report *rep, const char *id);
/* The effective TCO of a system: [default] merged with its own section. */
ib_rpt_tco ib_rpt_tco_for(const ib_report *rep, const char *system);
/* The result of (system, benchmark, scenario), or NULL. */
const ib_report_result *ib_rpt_find_result(const ib_report *rep, size_t system,
                                           const char *benchmark, int scenario);
/* "A is 1.69-3.46x B over N results; throughput per price 1.19-2.43x": the range of a/b over
 * the (benchmark, scenario) pairs both have VALID in the same unit; false when none. */
bool ib_rpt_headline_vs(const ib_report *rep, size_t a, size_t b, char *buf, size_t n);
/* True when the result's metric is a rate (Offline/Server throughput). */
bool ib_rpt_is_throughput(const ib_report_result *r);
/* Display order of benchmarks: the v1.1 list first, then alphabetical. */
int ib_rpt_benchmark_rank(const char *benchmark);

/* Writers (output.c, html.c). */
int ib_rpt_write_csv(const ib_report *rep, ib_strbuf *out);
int ib_rpt_write_json(const ib_report *rep, ib_strbuf *out);
int ib_rpt_write_charts_and_html(ib_report *rep, const char *dir, ib_err *err);

#endif
