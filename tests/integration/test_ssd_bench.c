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

/* --variant graph-post: decode + NMS as inferbench.SSDPostprocess inside the graph (the cpu
 * backend runs it, image-parallel) logs the same detections byte for byte as the default
 * host-post path; an unknown variant is a usage error. */
TEST_TIMEOUT(ssd_bench_graph_post_same_detections, 600)
{
    const char *b = ib_test_bin_dir();
    const char *v[2] = {"host-post", "graph-post"};
    char *log[2], *acc[2];
    size_t n[2], na[2];
    for (int i = 0; i < 2; i++) {
        ASSERT_INT_EQ(ib_test_system("%s/inferbench run --benchmark ssd-resnet34 --tiny --quick "
                                     "--system t --mode accuracy --variant %s --output-dir %s "
                                     "> out-%s.txt 2>&1",
                                     b, v[i], v[i], v[i]),
                      0);
        char path[256];
        snprintf(path, sizeof path, "%s/t/ssd-resnet34/Offline/accuracy/mlperf_log_accuracy.json",
                 v[i]);
        ASSERT_OK(ib_file_read_all(path, 0, &log[i], &n[i], NULL));
        snprintf(path, sizeof path, "%s/t/ssd-resnet34/Offline/accuracy/accuracy.txt", v[i]);
        ASSERT_OK(ib_file_read_all(path, 0, &acc[i], &na[i], NULL));
    }
    ASSERT_TRUE(n[0] > 1000); /* detections were logged, not an empty list */
    ASSERT_UINT_EQ(n[0], n[1]);
    ASSERT_TRUE(memcmp(log[0], log[1], n[0]) == 0);
    ASSERT_STR_EQ(acc[0], acc[1]);
    char *t;
    size_t tn;
    ASSERT_OK(ib_file_read_all("out-graph-post.txt", 0, &t, &tn, NULL));
    ASSERT_STR_CONTAINS(t, "0 on the reference kernels");
    ib_free(t);
    ASSERT_OK(ib_file_read_all("graph-post/t/ssd-resnet34/Offline/run.json", 0, &t, &tn, NULL));
    ASSERT_STR_CONTAINS(t, "inside the graph (inferbench.SSDPostprocess)");
    ib_free(t);
    for (int i = 0; i < 2; i++) {
        ib_free(log[i]);
        ib_free(acc[i]);
    }
    ASSERT_INT_EQ(ib_test_system("%s/inferbench run --benchmark ssd-resnet34 --tiny --quick "
                                 "--variant bogus --output-dir x > /dev/null 2> err.txt",
                                 b),
                  2);
    ASSERT_OK(ib_file_read_all("err.txt", 0, &t, &tn, NULL));
    ASSERT_STR_CONTAINS(t, "graph-post");
    ib_free(t);
}
