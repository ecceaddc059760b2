/*
 * test_report_calc.c - the arithmetic of src/report (relative performance, perf per
 * cost, energy and hourly cost, cost per million inferences, rounding) and the
 * inputs it rests on: price CSV, TCO file (TDP refused), published list, MLPerf
 * power logs. Synthetic trees are written into the test's temporary folder.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/report.h"
#include "report/calc.h"
#include "report/csv.h"
#include "report/power.h"
#include "test.h"

/* LeakSanitizer's on-demand check (ASan builds); tests end with _exit, which skips LSan. */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* A minimal v1.1 detail log for one run. */
static void write_run(const char *sys, const char *bench, const char *scen, double metric,
                      const char *validity)
{
    char dir[4096], path[4200], text[2048];
    snprintf(dir, sizeof dir, "%s/tree/%s/%s/%s/performance/run_1", ib_test_tmpdir(), sys, bench,
             scen);
    ib_err err;
    ASSERT_OK(ib_mkdirs(dir, &err));
    const char *key = !strcmp(scen, "Offline")  ? "result_samples_per_second"
                      : !strcmp(scen, "Server") ? "result_scheduled_samples_per_sec"
                                                : "result_90.00_percentile_latency_ns";
    snprintf(text, sizeof text,
             ":::MLLOG {\"key\": \"loadgen_version\", \"value\": \"1.1 @ test\"}\n"
             ":::MLLOG {\"key\": \"effective_scenario\", \"value\": \"%s\"}\n"
             ":::MLLOG {\"key\": \"effective_test_mode\", \"value\": \"PerformanceOnly\"}\n"
             ":::MLLOG {\"key\": \"power_begin\", \"value\": \"01-02-2024 10:00:00.000\"}\n"
             ":::MLLOG {\"key\": \"power_end\", \"value\": \"01-02-2024 10:10:00.000\"}\n"
             ":::MLLOG {\"key\": \"result_validity\", \"value\": \"%s\"}\n"
             ":::MLLOG {\"key\": \"result_query_count\", \"value\": 1000}\n"
             ":::MLLOG {\"key\": \"%s\", \"value\": %.17g}\n",
             scen, validity, key, metric);
    snprintf(path, sizeof path, "%s/mlperf_log_detail.txt", dir);
    ASSERT_OK(ib_file_write_all(path, text, strlen(text), &err));
}

static const char *write_file(const char *name, const char *text)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", ib_test_tmpdir(), name);
    ib_err err;
    ASSERT_OK(ib_file_write_all(path, text, strlen(text), &err));
    return path;
}

static const ib_report_result *find(const ib_report *rep, const char *sys, const char *bench,
                                    int scen)
{
    for (size_t i = 0; i < ib_report_result_count(rep); i++) {
        const ib_report_result *r = ib_report_result_at(rep, i);
        if (!strcmp(ib_report_system_at(rep, r->system)->id, sys) && r->scenario == scen &&
            !strcmp(r->benchmark, bench))
            return r;
    }
    return NULL;
}

static ib_report *load_tree(const char *baseline)
{
    ib_report_options o;
    ib_report_options_defaults(&o);
    o.baseline = baseline;
    o.generated = "2024-01-01";
    ib_report *rep = NULL;
    ib_err err;
    ASSERT_OK(ib_report_create(&o, &rep, &err));
    char tree[4096];
    snprintf(tree, sizeof tree, "%s/tree", ib_test_tmpdir());
    ASSERT_OK_ERR(ib_report_add_tree(rep, tree, &err), &err);
    return rep;
}

TEST(report_calc_formulas)
{
    ASSERT_DBL_EQ(ib_rpt_relative(200, 100, true), 2.0);
    ASSERT_DBL_EQ(ib_rpt_relative(5, 10, false), 2.0); /* half the latency = 2x */
    ASSERT_TRUE(isnan(ib_rpt_relative(0, 10, true)));
    ASSERT_TRUE(isnan(ib_rpt_relative(NAN, 10, true)));
    /* users.md §3.1: (T_A/T_B) x (C_B/C_A); A costs 1.423x B */
    ASSERT_NEAR(ib_rpt_relative_per_cost(1.851, 1.423, 1.0), 1.851 / 1.423, 1e-15);
    ASSERT_TRUE(isnan(ib_rpt_relative_per_cost(2, 0, 1)));
    /* 1 kW x PUE 1.5 x 8760 h x 50 % x 0.10/kWh = 657 */
    ASSERT_NEAR(ib_rpt_annual_energy_cost(1000, 1.5, 0.5, 0.10), 657.0, 1e-9);
    ASSERT_TRUE(isnan(ib_rpt_annual_energy_cost(1000, 0.9, 1, 0.1))); /* PUE < 1 */
    /* (30000/3 + 2000 + 657) / (8760 x 0.5) */
    ASSERT_NEAR(ib_rpt_hourly_cost(30000, 3, 2000, 657, 0.5, NAN), 12657.0 / 4380.0, 1e-12);
    ASSERT_NEAR(ib_rpt_hourly_cost(NAN, 3, 0, 0, 0.5, 4.0), 8.0, 1e-12); /* cloud $/h / util */
    ASSERT_TRUE(isnan(ib_rpt_hourly_cost(100, 3, 0, 0, 1.5, NAN)));
    /* $3.6/h at 1000 inferences/s: 3.6 / 3.6e6 x 1e6 = $1 per million */
    ASSERT_NEAR(ib_rpt_cost_per_million(3.6, 1000), 1.0, 1e-12);
    ASSERT_TRUE(isnan(ib_rpt_cost_per_million(3.6, 0)));
    ASSERT_DBL_EQ(ib_rpt_round_sig(1.850903, 3), 1.85);
    ASSERT_DBL_EQ(ib_rpt_round_sig(2.43160052, 3), 2.43);
    ASSERT_DBL_EQ(ib_rpt_round_sig(99815.7, 3), 99800.0);
    ASSERT_DBL_EQ(ib_rpt_round_sig(0.0012345, 2), 0.0012);
}

TEST(report_calc_relative_and_prices)
{
    write_run("sysA", "resnet50", "Offline", 2000, "VALID");
    write_run("sysB", "resnet50", "Offline", 1000, "VALID");
    write_run("sysA", "resnet50", "Server", 1500, "VALID");
    write_run("sysB", "resnet50", "Server", 1000, "INVALID");
    write_run("sysA", "resnet50", "SingleStream", 4e6, "VALID"); /* 4 ms */
    write_run("sysB", "resnet50", "SingleStream", 8e6, "VALID"); /* 8 ms */
    ib_report *rep = load_tree(NULL);
    ib_err err;
    ASSERT_OK_ERR(
        ib_report_load_prices(rep,
                              write_file("p.csv", "system,price,currency,date,source\n"
                                                  "sysA,30000,USD,2024-01-01,\"quote, A\"\n"
                                                  "sysB,10000,USD,2024-01-01,quote B\n"),
                              &err),
        &err);
    ASSERT_OK_ERR(ib_report_compute(rep, &err), &err);
    /* no --baseline: the cheapest system */
    ASSERT_STR_EQ(ib_report_system_at(rep, ib_report_baseline(rep))->id, "sysB");
    const ib_report_result *a = find(rep, "sysA", "resnet50", IB_REPORT_SCENARIO_OFFLINE);
    ASSERT_DBL_EQ(a->relative_performance, 2.0);
    ASSERT_NEAR(a->relative_perf_per_cost, 2.0 / 3.0, 1e-15);
    /* default cost basis: price / (3 x 8760 h) at 100 % utilization */
    ASSERT_NEAR(a->cost_per_million, 30000.0 / (3 * 8760) / (2000 * 3600.0) * 1e6, 1e-12);
    /* the baseline's Server run is INVALID: nothing is compared */
    const ib_report_result *s = find(rep, "sysA", "resnet50", IB_REPORT_SCENARIO_SERVER);
    ASSERT_TRUE(isnan(s->relative_performance));
    ASSERT_TRUE(isnan(s->relative_perf_per_cost));
    ASSERT_UINT_EQ(ib_report_invalid_count(rep), 1);
    /* latency: half the latency of the baseline = relative performance 2 */
    const ib_report_result *l = find(rep, "sysA", "resnet50", IB_REPORT_SCENARIO_SINGLE_STREAM);
    ASSERT_DBL_EQ(l->run.metric, 4.0);
    ASSERT_DBL_EQ(l->relative_performance, 2.0);
    ASSERT_TRUE(isnan(l->cost_per_million)); /* not a throughput scenario */
    /* the CSV keeps the exact columns and leaves n/a cells empty */
    ASSERT_OK(ib_report_write(rep, ib_test_tmpdir(), &err));
    char *csv = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.csv", ib_test_tmpdir());
    ASSERT_OK(ib_file_read_all(path, 0, &csv, NULL, &err));
    const char *header = "system,benchmark,scenario,result,unit,validity,"
                         "relative_performance,relative_perf_per_cost,labels\n";
    ASSERT_TRUE(!strncmp(csv, header, strlen(header)));
    ASSERT_STR_CONTAINS(csv, "sysA,resnet50,Offline,2000,samples/s,VALID,2,0.6666666667,\n");
    ASSERT_STR_CONTAINS(csv, "sysB,resnet50,Server,1000,queries/s,INVALID,,,\n");
    ib_free(csv);
    /* an explicit baseline overrides the price rule */
    ASSERT_OK(ib_report_set_baseline(rep, "sysA", &err));
    ASSERT_OK(ib_report_compute(rep, &err));
    const ib_report_result *b = find(rep, "sysB", "resnet50", IB_REPORT_SCENARIO_OFFLINE);
    ASSERT_DBL_EQ(b->relative_performance, 0.5);
    ASSERT_NEAR(b->relative_perf_per_cost, 1.5, 1e-15);
    ASSERT_OK(ib_report_set_baseline(rep, "nope", &err));
    ASSERT_STATUS(ib_report_compute(rep, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "sysA, sysB");
    ib_report_destroy(rep);
    /* charts and HTML were written: nothing may be left behind but cairo/fontconfig caches */
    ib_report_shutdown();
    if (__lsan_do_recoverable_leak_check) ASSERT_INT_EQ(__lsan_do_recoverable_leak_check(), 0);
}

TEST(report_calc_tco)
{
    write_run("sysA", "bert-99", "Offline", 100, "VALID");
    write_run("sysB", "bert-99", "Offline", 100, "VALID");
    ib_report *rep = load_tree("sysB");
    ib_err err;
    ASSERT_OK(ib_report_load_prices(rep,
                                    write_file("p.csv", "system,price,currency,date,source\n"
                                                        "sysA,20000,USD,2024-01-01,x\n"
                                                        "sysB,20000,USD,2024-01-01,x\n"),
                                    &err));
    ASSERT_OK_ERR(ib_report_load_tco(rep,
                                     write_file("t.conf", "# defaults\n"
                                                          "amortization_years = 4\n"
                                                          "utilization = 0.5\n"
                                                          "pue = 1.5\n"
                                                          "energy_cost_per_kwh = 0.10\n"
                                                          "[sysA]\n"
                                                          "power_w = 2000   ; measured at the PDU\n"
                                                          "power_source = pdu\n"
                                                          "[sysB]\n"
                                                          "power_w = 1000\n"),
                                     &err),
                  &err);
    ASSERT_OK_ERR(ib_report_compute(rep, &err), &err);
    const ib_report_result *a = find(rep, "sysA", "bert-99", IB_REPORT_SCENARIO_OFFLINE);
    const ib_report_result *b = find(rep, "sysB", "bert-99", IB_REPORT_SCENARIO_OFFLINE);
    double ea = 2.0 * 1.5 * 8760 * 0.5 * 0.10, eb = 1.0 * 1.5 * 8760 * 0.5 * 0.10;
    double ha = (20000.0 / 4 + ea) / (8760 * 0.5), hb = (20000.0 / 4 + eb) / (8760 * 0.5);
    ASSERT_NEAR(a->cost_per_million, ha / (100 * 3600.0) * 1e6, 1e-9);
    ASSERT_NEAR(b->cost_per_million, hb / (100 * 3600.0) * 1e6, 1e-9);
    /* same throughput and price: perf per cost is the ratio of the hourly costs */
    ASSERT_NEAR(a->relative_perf_per_cost, hb / ha, 1e-12);
    ASSERT_TRUE(a->relative_perf_per_cost < 1);
    /* power from TDP / nameplate is refused, naming the line */
    ASSERT_STATUS(ib_report_load_tco(rep,
                                     write_file("bad.conf", "[sysA]\npower_w = 300\n"
                                                            "power_source = TDP\n"),
                                     &err),
                  IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "bad.conf:3: power_source = TDP is refused");
    ASSERT_STATUS(ib_report_load_tco(rep, write_file("bad2.conf", "gpu_tdp_w = 300\n"), &err),
                  IB_EINVAL);
    ASSERT_STATUS(ib_report_load_tco(rep, write_file("bad3.conf", "utilization = 1.5\n"), &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "bad3.conf:1: utilization");
    ASSERT_STATUS(ib_report_load_tco(rep, write_file("bad4.conf", "colour = red\n"), &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "unknown key 'colour'");
    ib_report_destroy(rep);
}

TEST(report_calc_tco_needs_money_prices)
{
    write_run("sysA", "rnnt", "Offline", 100, "VALID");
    write_run("sysB", "rnnt", "Offline", 50, "VALID");
    ib_report *rep = load_tree("sysB");
    ib_err err;
    ASSERT_OK(ib_report_load_prices(rep,
                                    write_file("p.csv", "system,price,currency,date,source\n"
                                                        "sysA,1.423,relative,2021-09-07,blog\n"
                                                        "sysB,1.0,relative,2021-09-07,blog\n"),
                                    &err));
    ASSERT_OK(ib_report_compute(rep, &err));
    const ib_report_result *a = find(rep, "sysA", "rnnt", IB_REPORT_SCENARIO_OFFLINE);
    ASSERT_NEAR(a->relative_perf_per_cost, 2.0 / 1.423, 1e-15);
    ASSERT_TRUE(isnan(a->cost_per_million)); /* relative units are not money */
    ASSERT_OK(ib_report_load_tco(rep, write_file("t.conf", "energy_cost_per_kwh = 0.2\n"), &err));
    ASSERT_STATUS(ib_report_compute(rep, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "relative units");
    ib_report_destroy(rep);
}

TEST(report_calc_price_file_errors)
{
    write_run("sysA", "rnnt", "Offline", 100, "VALID");
    ib_report *rep = load_tree(NULL);
    ib_err err;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"system,price,currency,date\nsysA,1,USD,x\n", "missing column 'source'"},
        {"system,price,currency,date,source\nsysA,-1,USD,x,y\n", ":2: price '-1'"},
        {"system,price,currency,date,source\nsysA,abc,USD,x,y\n", ":2: price 'abc'"},
        {"system,price,currency,date,source\nsysA,1,USD,x,y\nsysB,1,EUR,x,y\n", "currency 'EUR'"},
        {"system,price,currency,date,source\nsysA,1,USD,x,y\nsysA,2,USD,x,y\n", "second price"},
        {"system,price,currency,date,source\nsysA,1,,x,y\n", "empty currency"},
        {"system,price,currency,date,source\nsysA,1,USD,x,\"unterminated\n", "unterminated"},
        {"system,price,currency,date,source\n", "no price rows"},
        {"", "empty file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = ib_report_load_prices(rep, write_file("bad.csv", bad[i].text), &err);
        ASSERT_INT_NE(rc, IB_OK);
        ASSERT_STR_CONTAINS(err.msg, "bad.csv");
        ASSERT_STR_CONTAINS(err.msg, bad[i].msg);
    }
    ASSERT_STATUS(ib_report_load_prices(rep, "/nonexistent/p.csv", &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "/nonexistent/p.csv");
    ib_report_destroy(rep);
}

TEST(report_calc_csv_quoting)
{
    ib_arena a;
    ib_arena_init(&a, 0);
    ib_rpt_csv csv;
    ib_err err;
    const char *t = "a,b\r\n\"x, \"\"y\"\"\",\"multi\nline\"\n# comment\n\n  plain , z \n";
    ASSERT_OK_ERR(ib_rpt_csv_parse(t, strlen(t), "q.csv", &a, &csv, &err), &err);
    ASSERT_UINT_EQ(csv.rows.len, 3);
    ASSERT_STR_EQ(csv.rows.data[1].field[0], "x, \"y\"");
    ASSERT_STR_EQ(csv.rows.data[1].field[1], "multi\nline");
    ASSERT_STR_EQ(csv.rows.data[2].field[0], "plain");
    ASSERT_UINT_EQ(csv.rows.data[2].line, 6);
    ib_rpt_csv_deinit(&csv);
    ASSERT_STATUS(ib_rpt_csv_parse("\"a\"b\n", 5, "q.csv", &a, &csv, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "q.csv:1: text after a closing quote");
    ib_arena_deinit(&a);
}

TEST(report_calc_power_log)
{
    ASSERT_INT_EQ(ib_rpt_power_time_ms("01-01-1970 00:00:01.250"), 1250);
    ASSERT_INT_EQ(ib_rpt_power_time_ms("08-10-2021 23:56:30.302"), 1628639790302LL);
    ASSERT_INT_EQ(ib_rpt_power_time_ms("13-10-2021 23:56:30.302"), -1);
    ASSERT_INT_EQ(ib_rpt_power_time_ms("garbage"), -1);
    const char *spl = "Time,01-02-2024 09:59:59.000,Watts,900.0,Volts,230\n"
                      "Time,01-02-2024 10:00:01.000,Watts,1000.0,Volts,230\n"
                      "Time,01-02-2024 10:05:00.000,Watts,-1.0,Volts,230\n"
                      "Time,01-02-2024 10:09:59.000,Watts,1200.0,Volts,230\n"
                      "Time,01-02-2024 10:10:01.000,Watts,5000.0,Volts,230\n"
                      "not a sample line\n";
    ib_rpt_power pw;
    ib_err err;
    ASSERT_OK_ERR(ib_rpt_power_parse(spl, strlen(spl), "spl.txt", "01-02-2024 10:00:00.000",
                                     "01-02-2024 10:10:00.000", &pw, &err),
                  &err);
    ASSERT_UINT_EQ(pw.samples, 2); /* outside the window and non-positive readings dropped */
    ASSERT_DBL_EQ(pw.avg_w, 1100.0);
    ASSERT_DBL_EQ(pw.duration_s, 600.0);
    ASSERT_STATUS(ib_rpt_power_parse(spl, strlen(spl), "spl.txt", "01-03-2024 10:00:00.000",
                                     "01-03-2024 10:10:00.000", &pw, &err),
                  IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "spl.txt: no power sample");
    ASSERT_STATUS(ib_rpt_power_parse(spl, strlen(spl), "spl.txt", "", "", &pw, &err), IB_EFORMAT);
}

TEST(report_calc_perf_per_watt_from_power_log)
{
    write_run("sysA", "resnet50", "Offline", 11000, "VALID");
    write_run("sysA", "resnet50", "SingleStream", 1e6, "VALID");
    const char *spl = "Time,01-02-2024 10:00:01.000,Watts,1000.0\n"
                      "Time,01-02-2024 10:05:00.000,Watts,1200.0\n";
    char path[4200];
    ib_err err;
    snprintf(path, sizeof path, "%s/tree/sysA/resnet50/Offline/performance/run_1/spl.txt",
             ib_test_tmpdir());
    ASSERT_OK(ib_file_write_all(path, spl, strlen(spl), &err));
    snprintf(path, sizeof path, "%s/tree/sysA/resnet50/SingleStream/performance/run_1/spl.txt",
             ib_test_tmpdir());
    ASSERT_OK(ib_file_write_all(path, spl, strlen(spl), &err));
    ib_report *rep = load_tree(NULL);
    ASSERT_OK(ib_report_compute(rep, &err));
    const ib_report_result *o = find(rep, "sysA", "resnet50", IB_REPORT_SCENARIO_OFFLINE);
    ASSERT_DBL_EQ(o->avg_power_w, 1100.0);
    ASSERT_DBL_EQ(o->perf_per_watt, 10.0);
    const ib_report_result *s = find(rep, "sysA", "resnet50", IB_REPORT_SCENARIO_SINGLE_STREAM);
    /* 1100 W x 600 s x 1000 / 1000 queries = 660000 mJ per query */
    ASSERT_DBL_EQ(s->energy_mj_per_query, 660000.0);
    ASSERT_TRUE(isnan(s->perf_per_watt));
    ib_report_destroy(rep);
}

TEST(report_calc_published_list)
{
    write_run("sysA", "rnnt", "Offline", 100, "VALID");
    write_run("sysB", "rnnt", "Offline", 50, "VALID");
    ib_report *rep = load_tree("sysB");
    ib_err err;
    ASSERT_OK(ib_report_load_published(rep,
                                       write_file("pub.csv", "system,result_id,retrieved,source\n"
                                                             "sysB,1.1-0042,2024-01-01,example\n"),
                                       &err));
    ASSERT_OK(ib_report_compute(rep, &err));
    ASSERT_FALSE(ib_report_system_at(rep, 0)->published);
    ASSERT_TRUE(ib_report_system_at(rep, 1)->published);
    ASSERT_STR_EQ(ib_report_system_at(rep, 1)->result_id, "1.1-0042");
    char *json = NULL;
    ASSERT_OK(ib_report_summary_json(rep, &json, &err));
    ASSERT_STR_CONTAINS(json, "\"verification\": \"unverified\"");
    ASSERT_STR_CONTAINS(json, "\"verification\": \"published\"");
    ASSERT_STR_CONTAINS(json, "Result not verified by MLCommons Association.");
    ASSERT_STR_CONTAINS(json, "may use methodologies inconsistent with the MLPerf specification");
    ib_free(json);
    ASSERT_STATUS(
        ib_report_load_published(rep,
                                 write_file("p2.csv", "system,result_id,retrieved,source\n"
                                                      "sysB,1,2,\n"),
                                 &err),
        IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "p2.csv:2: empty source");
    ib_report_destroy(rep);
}

/* Fail the Nth allocation (N = 0, 1, 2, ...) until the whole pipeline succeeds. */
static long g_fail_after = -1;
static void *failing_alloc(void *user, void *ptr, size_t old, size_t n)
{
    (void)user;
    (void)old;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    if (g_fail_after == 0) return NULL;
    if (g_fail_after > 0) g_fail_after--;
    return realloc(ptr, n);
}

static int pipeline(const char *tree, const char *prices, ib_err *err)
{
    ib_report_options o;
    ib_report_options_defaults(&o);
    o.generated = "2024-01-01";
    ib_report *rep = NULL;
    int rc = ib_report_create(&o, &rep, err);
    if (rc == IB_OK) rc = ib_report_add_tree(rep, tree, err);
    if (rc == IB_OK) rc = ib_report_load_prices(rep, prices, err);
    if (rc == IB_OK) rc = ib_report_compute(rep, err);
    char *text = NULL;
    if (rc == IB_OK) rc = ib_report_summary_json(rep, &text, err);
    ib_free(text);
    text = NULL;
    if (rc == IB_OK) rc = ib_report_compare_table(rep, 0, 1, &text, err);
    ib_free(text);
    ib_report_destroy(rep);
    return rc;
}

TEST_TIMEOUT(report_calc_oom_loop, 300)
{
    write_run("sysA", "resnet50", "Offline", 2000, "VALID");
    write_run("sysB", "resnet50", "Offline", 1000, "VALID");
    write_run("sysA", "resnet50", "Server", 1500, "INVALID");
    const char *prices = write_file("p.csv", "system,price,currency,date,source\n"
                                             "sysA,3,USD,2024-01-01,q\nsysB,1,USD,2024-01-01,q\n");
    char tree[4096];
    snprintf(tree, sizeof tree, "%s/tree", ib_test_tmpdir());
    ib_err err;
    long n = 0;
    for (;; n++) {
        ib_alloc_set(failing_alloc, NULL);
        g_fail_after = n;
        int rc = pipeline(tree, prices, &err);
        g_fail_after = -1;
        ib_alloc_set(NULL, NULL);
        if (rc == IB_OK) break;
        /* every injected failure surfaces as an out-of-memory error with a message */
        if (rc != IB_ENOMEM)
            ib_test_fail(__FILE__, __LINE__, "allocation %ld: %s (%s)", n, ib_err_name(rc),
                         err.msg);
        ASSERT_TRUE(err.msg[0] != '\0');
        ASSERT_TRUE(n < 100000);
    }
    ASSERT_TRUE(n > 20); /* the pipeline allocates; the loop really injected failures */
    if (__lsan_do_recoverable_leak_check)
        ASSERT_INT_EQ(__lsan_do_recoverable_leak_check(), 0); /* no failure path leaked */
}
