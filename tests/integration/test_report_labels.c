/*
 * test_report_labels.c - reports keep what a run says of itself. Two of our own runs (the tiny
 * random-weights ResNet50, synthetic data, --quick) in one tree, with prices: every output
 * (HTML, CSV, JSON, the terminal comparison) carries their labels, the title does not call
 * them MLPerf results, a headline sentence opens the page, the throughput-per-price chart
 * comes first, and the run's own system description gives the chips and a readable name.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "test.h"

static const char k_quick[] = "--quick: short run, not submittable";

TEST_TIMEOUT(report_labels_headline_and_order, 240)
{
    const char *b = ib_test_bin_dir();
    for (int i = 0; i < 2; i++)
        ASSERT_INT_EQ(ib_test_system("%s/inferbench run --tiny --quick --threads 1 --synth-samples "
                                     "8 --system %s --output-dir out > run%d.txt 2>&1",
                                     b, i ? "box-b" : "box-a", i),
                      0);
    /* the run wrote its system description: chips, host, a readable name */
    char *sys = ib_test_slurp("out/systems/box-a.json");
    ASSERT_STR_CONTAINS(sys, "\"system_name\": \"box-a (");
    ASSERT_STR_CONTAINS(sys, "cpu backend, inferbench)");
    ASSERT_STR_CONTAINS(sys, "\"host_processors_per_node\": 1");
    ib_free(sys);
    const char *prices = "system,price,currency,date,source\nbox-a,2,relative,2026-12-04,test\n"
                         "box-b,1,relative,2026-12-04,test\n";
    ASSERT_OK(ib_file_write_all("prices.csv", prices, strlen(prices), NULL));
    ASSERT_INT_EQ(ib_test_system("%s/inferbench report out --prices prices.csv --baseline box-b "
                                 "--output rep > rep.txt 2>&1",
                                 b),
                  0);
    char *html = ib_test_slurp("rep/report.html");
    /* the title says what these are */
    ASSERT_STR_CONTAINS(html, "<h1>inferbench runs (MLPerf\xC2\xAE Inference rules, not MLPerf "
                              "results)");
    ASSERT_NULL(strstr(html, "version unknown"));
    /* the headline, before the first table */
    const char *h = strstr(html, "<p class=\"headline\">box-a (");
    ASSERT_NOT_NULL(h);
    ASSERT_STR_CONTAINS(h, "over 1 result; throughput per price ");
    ASSERT_TRUE(h < strstr(html, "<table"));
    /* the labels: a box at the top and on every number */
    ASSERT_STR_CONTAINS(html, "<div class=\"labels\"><b>Not MLPerf results.</b>");
    ASSERT_STR_CONTAINS(html, "<span class=\"lab\">--quick: short run, not submittable</span>");
    ASSERT_STR_CONTAINS(html, "random weights");
    /* throughput per price is the first chart */
    const char *first = strstr(html, "data-chart=\"");
    ASSERT_NOT_NULL(first);
    ASSERT_TRUE(!strncmp(first, "data-chart=\"perf-per-cost\"", 26));
    /* chips from the description, not "unknown" */
    ASSERT_STR_CONTAINS(html, "<td>1 x ");
    ib_free(html);
    char *csv = ib_test_slurp("rep/summary.csv");
    ASSERT_STR_CONTAINS(csv, ",labels\n");
    ASSERT_STR_CONTAINS(csv, k_quick);
    ib_free(csv);
    char *js = ib_test_slurp("rep/summary.json");
    ASSERT_STR_CONTAINS(js, "\"own_run\": true");
    ASSERT_STR_CONTAINS(js, "\"--quick: short run, not submittable\"");
    ASSERT_STR_CONTAINS(js, "\"headline\": [\n    \"box-a (");
    ib_free(js);
    /* the terminal comparison: headline first, then each system with its labels */
    ASSERT_INT_EQ(ib_test_system("%s/inferbench compare out/box-a out/box-b --prices prices.csv "
                                 "> cmp.txt 2>&1",
                                 b),
                  0);
    char *cmp = ib_test_slurp("cmp.txt");
    ASSERT_TRUE(!strncmp(cmp, "box-a (", 7));
    ASSERT_STR_CONTAINS(cmp, "over 1 result; throughput per price");
    ASSERT_STR_CONTAINS(cmp, "inferbench run, not an MLPerf result: synthetic model");
    ASSERT_STR_CONTAINS(cmp, "--quick: short run, not");
    ib_free(cmp);
}
