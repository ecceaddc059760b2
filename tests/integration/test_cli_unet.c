/*
 * test_cli_unet.c - `inferbench run --benchmark 3d-unet-99|3d-unet-99.9` end to end with the
 * tiny nnU-Net (random weights) on synthetic BraTS volumes: a submission run (accuracy.txt
 * in accuracy-brats.py's format, one float16 logits payload of 4x64x64x32 per case), a
 * performance run, and the usage/data errors (Server refused, unknown --dataset, a missing
 * modality file named) with exit status 2.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "test.h"

static int run(const char *args)
{
    return ib_test_system("%s/inferbench run --tiny --threads 2 --synth-samples 3 %s > out.txt "
                          "2> err.txt",
                          ib_test_bin_dir(), args);
}

TEST_TIMEOUT(cli_unet_submission_offline, 240)
{
    int rc = run("--benchmark 3d-unet-99 --quick --mode submission --system s --output-dir out");
    ASSERT_INT_EQ(rc, 0);
    char *acc = ib_test_slurp("out/s/3d-unet-99/Offline/accuracy/accuracy.txt");
    ASSERT_TRUE(!strncmp(acc, "Accuracy: mean = ", 17));
    ASSERT_STR_CONTAINS(acc, ", whole tumor = ");
    ASSERT_STR_CONTAINS(acc, ", enhancing tumor = ");
    ASSERT_STR_CONTAINS(acc, "\nhash=");
    char *log = ib_test_slurp("out/s/3d-unet-99/Offline/accuracy/mlperf_log_accuracy.json");
    /* 3 cases, each 4 x 64 x 64 x 32 float16 = 1 MiB = 2 Mi hex digits */
    int entries = 0;
    for (char *p = strstr(log, "\"data\" : \""); p; p = strstr(p + 1, "\"data\" : \"")) {
        char *q = strchr(p + 10, '"');
        ASSERT_NOT_NULL(q);
        ASSERT_INT_EQ(q - (p + 10), 2 * 4 * 64 * 64 * 32 * 2);
        entries++;
    }
    ASSERT_INT_EQ(entries, 3);
    char *rj = ib_test_slurp("out/s/3d-unet-99/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "brats19");
    ASSERT_STR_CONTAINS(rj, "\"submittable\": false");
    char *sum = ib_test_slurp("out/s/3d-unet-99/Offline/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Scenario : Offline");
    ASSERT_STR_CONTAINS(sum, "Result is : VALID");
    ib_free(acc);
    ib_free(log);
    ib_free(rj);
    ib_free(sum);
}

TEST_TIMEOUT(cli_unet_performance_and_errors, 240)
{
    int rc = run("--benchmark 3d-unet-99.9 --quick --mode PerformanceOnly --system s "
                 "--output-dir out");
    ASSERT_INT_EQ(rc, 0);
    char *sum = ib_test_slurp("out/s/3d-unet-99.9/Offline/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Samples per second");
    ib_free(sum);
    /* Offline only (benchmarks.md §1.6) */
    rc = run("--benchmark 3d-unet-99 --quick --scenario Server --output-dir o2");
    ASSERT_INT_EQ(rc, 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "Server");
    ib_free(e);
    rc = run("--benchmark 3d-unet-99 --quick --dataset brats2020 --output-dir o3");
    ASSERT_INT_EQ(rc, 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "brats2020");
    ib_free(e);
    /* a case listed without its flair volume */
    ib_err err;
    ASSERT_OK_ERR(ib_mkdirs("bad/HGG/BraTS19_X_1", &err), &err);
    ASSERT_OK(ib_file_write_all("bad/fold1_validation.txt", "HGG__BraTS19_X_1\n", 17, &err));
    static const char *const mods[4] = {"t1", "t1ce", "t2", "seg"};
    for (int m = 0; m < 4; m++) {
        char p[128];
        snprintf(p, sizeof p, "bad/HGG/BraTS19_X_1/BraTS19_X_1_%s.nii.gz", mods[m]);
        ASSERT_OK(ib_file_write_all(p, "x", 1, &err));
    }
    rc = run("--benchmark 3d-unet-99 --quick --data bad --output-dir o4");
    ASSERT_INT_EQ(rc, 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "BraTS19_X_1_flair.nii");
    ib_free(e);
}

TEST_TIMEOUT(cli_unet_kits19_accuracy_and_performance, 240)
{
    int rc = run("--benchmark 3d-unet-99 --dataset kits19 --quick --mode submission --system s "
                 "--output-dir out");
    if (rc != 0) { /* show why before failing */
        char *o = ib_test_read("out.txt"), *e = ib_test_read("err.txt");
        printf("# stdout: %s\n# stderr: %s\n", o ? o : "", e ? e : "");
        ib_free(o);
        ib_free(e);
    }
    ASSERT_INT_EQ(rc, 0);
    char *acc = ib_test_slurp("out/s/3d-unet-99/Offline/accuracy/accuracy.txt");
    ASSERT_TRUE(!strncmp(acc, "Accuracy: mean = ", 17));
    ASSERT_STR_CONTAINS(acc, ", kidney = ");
    ASSERT_STR_CONTAINS(acc, ", tumor = ");
    char *rj = ib_test_slurp("out/s/3d-unet-99/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "kits19");
    ASSERT_STR_CONTAINS(rj, "\"payload_dtype\": \"uint8\""); /* not brats19's float16 */
    /* `inferbench accuracy` on the run's log (run.json gives kits19 and the tiny ROI)
     * prints accuracy.txt's line */
    ASSERT_INT_EQ(ib_test_system("%s/inferbench accuracy --log "
                                 "out/s/3d-unet-99/Offline/accuracy/mlperf_log_accuracy.json "
                                 "> acc_out.txt 2>&1",
                                 ib_test_bin_dir()),
                  0);
    char *ao = ib_test_slurp("acc_out.txt");
    ASSERT_TRUE(!strncmp(ao, acc, strcspn(acc, "\n") + 1));
    ib_free(ao);
    /* kits19's own figures: reference 0.86170 x 0.99, 43 official samples */
    char *so = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(so, "target 0.85308");
    ASSERT_STR_CONTAINS(so, "below the official 43");
    ASSERT_STR_CONTAINS(so, "\nLabels:\n");
    ib_free(so);
    char *sum = ib_test_slurp("out/s/3d-unet-99/Offline/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Result is : VALID");
    ASSERT_NULL(strstr(sum, "Labels")); /* the labels are on the console, not in the file */
    ib_free(acc);
    ib_free(rj);
    ib_free(sum);
    /* int8: calibrated on a window of each volume (calib_inputs; before, the full volume was
     * offered and refused), the window graph at fp32 */
    rc = run("--benchmark 3d-unet-99 --dataset kits19 --quick --mode PerformanceOnly "
             "--precision int8 --system s --output-dir o8");
    ASSERT_INT_EQ(rc, 0);
    rj = ib_test_slurp("o8/s/3d-unet-99/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "\"model_precisions\": [\n    \"int8\",\n    \"fp32\"\n  ]");
    ASSERT_STR_CONTAINS(rj, "int8 calibrated values: ");
    /* the cpu's transposed convolutions have no int8 path: run.json and a label say so */
    ASSERT_STR_CONTAINS(rj, "\"others\": \"ConvTranspose x5 at fp32\"");
    ASSERT_STR_CONTAINS(rj, "the others: ConvTranspose x5 at fp32");
    ib_free(rj);
    /* the kits19 payload is uint8 labels only */
    rc = run("--benchmark 3d-unet-99 --dataset kits19 --quick --payload-dtype float16 "
             "--output-dir o2");
    ASSERT_INT_EQ(rc, 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "uint8");
    ib_free(e);
}
