/*
 * calc.c - formulas of users.md §3.1: relative performance, relative perf per
 * cost, energy and hourly cost, cost per million inferences, rounding to
 * significant digits. Inputs out of range give NaN instead of a wrong number.
 */
#include "report/calc.h"

#include <math.h>

#define HOURS_PER_YEAR 8760.0

/*
 * Non-positive or non-finite inputs give NaN: a ratio with a missing or zero result
 * would be a silently wrong number.
 */
double ib_rpt_relative(double a, double base, bool higher_is_better)
{
    if (!(a > 0) || !(base > 0) || !isfinite(a) || !isfinite(base)) return (double)NAN;
    return higher_is_better ? a / base : base / a;
}

/* users.md §3.1: (T_a/C_a)/(T_b/C_b) written as rel_perf x C_b/C_a. */
double ib_rpt_relative_per_cost(double rel_perf, double cost, double base_cost)
{
    if (!(rel_perf > 0) || !(cost > 0) || !(base_cost > 0)) return (double)NAN;
    return rel_perf * base_cost / cost;
}

/* Energy scales with utilization: idle power is not modelled (users.md §3.1 formula). */
double ib_rpt_annual_energy_cost(double power_w, double pue, double utilization,
                                 double cost_per_kwh)
{
    if (!(power_w > 0) || !(pue >= 1) || !(utilization > 0) || !(cost_per_kwh >= 0))
        return (double)NAN;
    return power_w / 1000.0 * pue * HOURS_PER_YEAR * utilization * cost_per_kwh;
}

/*
 * Cost of a delivered (busy) hour: the yearly cost spread over the hours the system
 * actually works, so a half-used system costs twice as much per inference.
 */
double ib_rpt_hourly_cost(double capex, double years, double annual_opex, double annual_energy,
                          double utilization, double hourly_cost)
{
    if (!(utilization > 0) || utilization > 1) return (double)NAN;
    if (!isnan(hourly_cost)) return hourly_cost > 0 ? hourly_cost / utilization : (double)NAN;
    if (!(capex > 0) || !(years > 0)) return (double)NAN;
    double annual = capex / years + (annual_opex > 0 ? annual_opex : 0) +
                    (annual_energy > 0 ? annual_energy : 0);
    return annual / (HOURS_PER_YEAR * utilization);
}

/* hourly cost / inferences per hour, scaled to 10^6 inferences. */
double ib_rpt_cost_per_million(double hourly_cost, double throughput_per_s)
{
    if (!(hourly_cost > 0) || !(throughput_per_s > 0) || !isfinite(throughput_per_s))
        return (double)NAN;
    return hourly_cost / (throughput_per_s * 3600.0) * 1e6;
}

/*
 * Round half away from zero at the digit; used to compare with tables printed to 3
 * significant digits.
 */
double ib_rpt_round_sig(double v, int digits)
{
    if (!isfinite(v) || v == 0 || digits <= 0) return v;
    double mag = floor(log10(fabs(v)));
    double scale = pow(10.0, (double)digits - 1 - mag);
    return round(v * scale) / scale;
}
