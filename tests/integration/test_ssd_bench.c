/*
 * test_ssd_bench.c - inferbench run --benchmark ssd-resnet34 end to end on the tiny model
 * and synthetic COCO: the performance results tree, and accuracy mode through the real
 * decode + NMS + COCOeval (random weights: the mAP value itself means nothing, its line
 * format and the files do).
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/base.h"
#include "test.h"

TEST_TIMEOUT(ssd_bench_cli_tiny_quick_end_to_end, 600)
{
    const char *b = ib_test_bin_dir();
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --benchmark ssd-resnet34 --tiny --quick "
                                 "--system t "
                                 "--mode accuracy --output-dir o > out.txt 2> err.txt",
                                 b),
                  0);
    char *t;
    size_t n;
    ASSERT_OK(ib_file_read_all("o/t/ssd-resnet34/Offline/accuracy/accuracy.txt", 0, &t, &n,
                               NULL));
    ASSERT_TRUE(strncmp(t, "mAP=", 4) == 0);
    ASSERT_STR_CONTAINS(t, "%\nhash=");
    ib_free(t);
    ASSERT_TRUE(ib_path_exists("o/t/ssd-resnet34/Offline/accuracy/mlperf_log_accuracy.json"));
    ASSERT_OK(ib_file_read_all("out.txt", 0, &t, &n, NULL));
    ASSERT_STR_CONTAINS(t, "random weights");
    ib_free(t);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --benchmark ssd-resnet34 --tiny --quick "
                                 "--system t "
                                 "--output-dir p > out2.txt 2> err2.txt",
                                 b),
                  0);
    ASSERT_OK(ib_file_read_all("p/t/ssd-resnet34/Offline/performance/run_1/"
                               "mlperf_log_summary.txt",
                               0, &t, &n, NULL));
    ASSERT_STR_CONTAINS(t, "Scenario : Offline");
    ib_free(t);
    /* a folder that is not COCO: a clear error, not a crash */
    ASSERT_OK(ib_mkdirs("notcoco", NULL));
    ASSERT_INT_NE(ib_test_system("%s/inferbench run --benchmark ssd-resnet34 --tiny --quick "
                                 "--system t "
                                 "--data notcoco --output-dir q > /dev/null 2> err3.txt",
                                 b),
                  0);
    ASSERT_OK(ib_file_read_all("err3.txt", 0, &t, &n, NULL));
    ASSERT_STR_CONTAINS(t, "val2017");
    ib_free(t);
}
