/*
 * calc.h - the arithmetic of comparisons and costs (users.md §3.1), as pure
 * functions so tests can check each formula. NaN in -> NaN out.
 */
#ifndef IB_REPORT_CALC_H
#define IB_REPORT_CALC_H

#include <stdbool.h>

/* Relative performance of a vs base: a/base for rates, base/a for latencies. */
double ib_rpt_relative(double a, double base, bool higher_is_better);
/* (T_a/C_a)/(T_b/C_b) = rel_perf x C_b / C_a. */
double ib_rpt_relative_per_cost(double rel_perf, double cost, double base_cost);
/* Annual energy cost = power_kW x PUE x 8760 h x utilization x price per kWh. */
double ib_rpt_annual_energy_cost(double power_w, double pue, double utilization,
                                 double cost_per_kwh);
/*
 * Cost of one delivered hour (the system busy): on-prem (capex / years + annual opex
 * + annual energy) / (8760 x utilization), or a cloud hourly_cost / utilization when
 * hourly_cost is given (not NaN).
 */
double ib_rpt_hourly_cost(double capex, double years, double annual_opex, double annual_energy,
                          double utilization, double hourly_cost);
/* Cost per 10^6 inferences = hourly cost / (throughput per s x 3600) x 10^6. */
double ib_rpt_cost_per_million(double hourly_cost, double throughput_per_s);
/* v rounded to `digits` significant digits (for comparisons with published tables). */
double ib_rpt_round_sig(double v, int digits);

#endif
