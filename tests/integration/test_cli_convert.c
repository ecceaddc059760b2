/*
 * test_cli_convert.c - `inferbench convert criteo-tsv` end to end: a synthetic raw day file
 * with its dictionaries and trace becomes a DLRM dataset folder that `inferbench run
 * --benchmark dlrm-99 --data` accepts (accuracy over every pair); the JSON summary; usage
 * errors and bad data give exit 2 naming the file and line.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/criteo.h"
#include "dataset/criteo_tsv.h"
#include "inferbench/base.h"
#include "test.h"

static int cli(const char *args)
{
    return ib_test_system("%s/inferbench %s > out.txt 2> err.txt", ib_test_bin_dir(), args);
}

TEST_TIMEOUT(cli_convert_criteo_tsv_to_a_dlrm_run, 240)
{
    static const uint64_t rows26[26] = {1000, 1000, 1000, 1000, 1000, 3, 1000, 1000, 63, 1000,
                                        1000, 1000, 10, 1000, 1000, 155, 4, 976, 14, 1000,
                                        1000, 1000, 1000, 1000, 108, 36};
    ib_err err;
    ASSERT_OK_ERR(ib_criteo_tsv_synthesize("syn", 400, rows26, 3, &err), &err);
    ASSERT_INT_EQ(cli("convert criteo-tsv --input syn/" IB_CRITEO_TSV_DAY " --dicts syn "
                      "--trace syn/" IB_CRITEO_TRACE " --output-dir ds --json"),
                  0);
    char *js = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(js, "\"rows\": 400");
    ASSERT_STR_CONTAINS(js, "\"official_ids\": true");
    ASSERT_STR_CONTAINS(js, "\"trace_samples\": ");
    ib_free(js);
    char *a = ib_test_slurp("ds/" IB_CRITEO_BIN), *b = ib_test_slurp("syn/expected.bin");
    ASSERT_TRUE(memcmp(a, b, 400 * 160) == 0);
    ib_free(a);
    ib_free(b);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --benchmark dlrm-99 --tiny --threads 1 "
                                 "--data ds --quick --mode accuracy --system s --output-dir r "
                                 "> out.txt 2> err.txt",
                                 ib_test_bin_dir()),
                  0);
    char *acc = ib_test_slurp("r/s/dlrm-99/Offline/accuracy/accuracy.txt");
    ASSERT_STR_CONTAINS(acc, "AUC=");
    ASSERT_STR_CONTAINS(acc, ", total=400,");
    ib_free(acc);
    /* without dictionaries: converted, and labelled as not the official ids */
    ASSERT_INT_EQ(cli("convert criteo-tsv --input syn/" IB_CRITEO_TSV_DAY " --output-dir d2 "
                      "--rows 10"),
                  0);
    char *o = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(o, "10 pairs (no dictionaries");
    ib_free(o);
}

TEST(cli_convert_bad_input)
{
    ASSERT_INT_EQ(cli("convert criteo-tsv --output-dir d"), 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "--input and --output-dir are required");
    ib_free(e);
    ASSERT_INT_EQ(cli("convert nifti --input x --output-dir d"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "unknown format 'nifti'");
    ib_free(e);
    ASSERT_INT_EQ(cli("convert criteo-tsv --input x --output-dir d --rows -4"), 2);
    ib_err err;
    ASSERT_OK(ib_file_write_all("day", "1\t2\t3\n", 6, &err));
    ASSERT_INT_EQ(cli("convert criteo-tsv --input day --output-dir d"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "day:1: 3 fields");
    ib_free(e);
    ASSERT_FALSE(ib_path_exists("d/" IB_CRITEO_BIN));
    /* a trace that reaches past the rows written */
    char line[512] = "0";
    for (int i = 0; i < 39; i++)
        strcat(line, i < 13 ? "\t1" : "\t0a");
    strcat(line, "\n");
    ASSERT_OK(ib_file_write_all("day1", line, strlen(line), &err));
    ASSERT_OK(ib_file_write_all("trace", "0, 2, 2\n", 8, &err));
    ASSERT_INT_EQ(cli("convert criteo-tsv --input day1 --trace trace --output-dir d3"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "trace");
    ib_free(e);
    ASSERT_INT_EQ(cli("convert --help"), 0);
}
