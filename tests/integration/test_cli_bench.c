/*
 * test_cli_bench.c - `inferbench run --benchmark` end to end with the tiny ResNet50: the
 * results tree and what stdout/stderr say, submission mode (accuracy + performance), --json,
 * a user-supplied model (accepted, or refused with the expected layout named), bad data
 * (val_map line, corrupt JPEG, missing folder) and usage errors with their exit codes, and
 * the null SUT path that shares the command.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "inferbench/dataset.h"
#include "onnx/build.h"
#include "test.h"

/* inferbench run <args> (tiny, one thread, short) with stdout/stderr captured */
static int run(const char *args)
{
    return ib_test_system("%s/inferbench run --tiny --threads 1 --synth-samples 8 "
                          "--min-duration-ms 300 %s > out.txt 2> err.txt",
                          ib_test_bin_dir(), args);
}

static int cli(const char *args)
{
    return ib_test_system("%s/inferbench %s > out.txt 2> err.txt", ib_test_bin_dir(), args);
}

static void expect_files(const char *dir, const char *const *names, size_t n)
{
    char p[4096];
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (!ib_path_exists(p))
            ib_test_fail(__FILE__, __LINE__, "%s is missing", p);
    }
}

TEST_TIMEOUT(cli_bench_offline_quick_tree, 240)
{
    int rc = run("--benchmark resnet50 --quick --system s1 --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3);
    char *o = ib_test_slurp("out.txt"), *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(o, "Scenario : Offline");
    ASSERT_STR_CONTAINS(o, rc == 0 ? "Result is : VALID" : "Result is : INVALID");
    ASSERT_STR_CONTAINS(o, "Results tree: out/s1/resnet50/Offline");
    ASSERT_STR_CONTAINS(o, "Not submittable: --quick synthetic model synthetic data");
    ASSERT_STR_CONTAINS(o, "--quick: short run, not submittable");
    ASSERT_STR_CONTAINS(e, "building the resnet50 (tiny) model with seeded random weights");
    ASSERT_STR_CONTAINS(e, "writing a synthetic resnet50 dataset (8 samples");
    ASSERT_STR_CONTAINS(e, "warm-up:");
    static const char *const perf[] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt",
                                       "mlperf_log_accuracy.json", "result.json"};
    expect_files("out/s1/resnet50/Offline/performance/run_1", perf, 4);
    static const char *const top[] = {"run.json"};
    expect_files("out/s1/resnet50/Offline", top, 1);
    /* the generated model and data live in the cache (XDG_CACHE_HOME/inferbench, which
     * the test runner points into the test's folder), one folder per generator and build */
    ASSERT_INT_EQ(ib_test_system("cp .cache/inferbench/resnet50/gen*/model-tiny-seed1.onnx m.onnx "
                                 "&& test -f .cache/inferbench/resnet50/gen*/"
                                 "data-tiny-seed1-n8/ILSVRC2012_val_00000008.JPEG"),
                  0);
    ASSERT_TRUE(ib_path_exists("m.onnx"));
    ASSERT_NULL(strstr(o, ".partial-")); /* nothing left of the staging folder */
    ASSERT_INT_EQ(ib_test_system("ls -a out/s1/resnet50/Offline | grep -q partial"), 1);
    ib_free(o);
    ib_free(e);
    /* the default benchmark and scenario: resnet50 Offline; the cached model and data are
     * reused, not built again */
    rc = run("--quick --system s2 --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3);
    expect_files("out/s2/resnet50/Offline", top, 1);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "model-tiny-seed1.onnx (cache)");
    ASSERT_NULL(strstr(e, "building the resnet50"));
    ASSERT_NULL(strstr(e, "writing a synthetic"));
    ib_free(e);
    /* a second run into the same folder goes to run_2; run_1 stays as it was */
    char *s1 = ib_test_slurp("out/s1/resnet50/Offline/performance/run_1/mlperf_log_summary.txt");
    rc = run("--quick --system s1 --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3);
    expect_files("out/s1/resnet50/Offline/performance/run_2", perf, 4);
    char *s1b = ib_test_slurp("out/s1/resnet50/Offline/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_EQ(s1, s1b);
    ASSERT_STR_CONTAINS(ib_test_slurp("out.txt"), "performance/run_2/");
    ASSERT_STR_CONTAINS(ib_test_slurp("out/s1/resnet50/Offline/run.json"),
                        "\"run\": \"performance/run_2\"");
    /* --force replaces run_1 (and leaves run_2) */
    rc = run("--quick --force --system s1 --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3);
    ASSERT_FALSE(ib_path_exists("out/s1/resnet50/Offline/performance/run_3"));
    expect_files("out/s1/resnet50/Offline/performance/run_2", perf, 4);
    char *s1c = ib_test_slurp("out/s1/resnet50/Offline/performance/run_1/mlperf_log_summary.txt");
    ASSERT_TRUE(strcmp(s1, s1c) != 0); /* a new run: other timings */
    ib_free(s1);
    ib_free(s1b);
    ib_free(s1c);
}

TEST_TIMEOUT(cli_bench_submission_and_json, 240)
{
    int rc = run("--mode submission --scenario offline --quick --system s --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3);
    char *o = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(o, "Accuracy (resnet50): accuracy=");
    ASSERT_STR_CONTAINS(o, "target 75.695: not applicable (random weights)");
    ib_free(o);
    static const char *const acc[] = {"accuracy.txt", "mlperf_log_summary.txt",
                                      "mlperf_log_detail.txt", "mlperf_log_accuracy.json"};
    expect_files("out/s/resnet50/Offline/accuracy", acc, 4);
    static const char *const perf[] = {"mlperf_log_summary.txt", "mlperf_log_detail.txt"};
    expect_files("out/s/resnet50/Offline/performance/run_1", perf, 2);
    char *a = ib_test_slurp("out/s/resnet50/Offline/accuracy/accuracy.txt");
    ASSERT_TRUE(strncmp(a, "accuracy=", 9) == 0);
    ASSERT_STR_CONTAINS(a, "%, good=");
    ASSERT_STR_CONTAINS(a, ", total=8\nhash=");
    ib_free(a);

    /* --json: run.json on stdout, valid JSON with the run's facts; accuracy mode exits 0
     * with a synthetic model (its accuracy target does not apply) */
    ASSERT_INT_EQ(run("--mode accuracy --json --system j --nhwc-fp16 --half-chains "
                      "--output-dir out"),
                  0);
    json_error_t je;
    json_t *j = json_load_file("out.txt", 0, &je);
    ASSERT_NOT_NULL(j);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "benchmark")), "resnet50");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "scenario")), "Offline");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "mode")), "AccuracyOnly");
    ASSERT_TRUE(json_is_false(json_object_get(j, "submittable")));
    ASSERT_TRUE(json_array_size(json_object_get(j, "labels")) >= 2);
    json_t *acc_obj = json_object_get(j, "accuracy");
    ASSERT_NOT_NULL(acc_obj);
    ASSERT_STR_CONTAINS(json_string_value(json_object_get(acc_obj, "line")), ", total=8");
    ASSERT_INT_EQ(json_integer_value(json_object_get(json_object_get(j, "data"), "samples")), 8);
    ASSERT_TRUE(json_is_true(json_object_get(json_object_get(j, "model"), "synthetic")));
    /* recorded as asked (a cpu run ignores them: the islands and chains are cuda's), and said
     * so */
    ASSERT_TRUE(json_is_true(json_object_get(j, "nhwc_fp16")));
    ASSERT_TRUE(json_is_true(json_object_get(j, "half_chains")));
    json_decref(j);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "--nhwc-fp16 applies to --backend cuda at --precision fp16");
    ASSERT_STR_CONTAINS(e, "--half-chains applies to --backend cuda at --precision fp16, bf16, "
                           "int8 or fp8");
    ib_free(e);
}

TEST_TIMEOUT(cli_bench_user_model_and_data, 240)
{
    /* the tiny model and a dataset written by hand (not synthetic to the harness) */
    ASSERT_INT_EQ(run("--mode accuracy --system a --cache-dir c1 --output-dir first"), 0);
    ASSERT_INT_EQ(ib_test_system("cp c1/resnet50/gen*/model-tiny-seed1.onnx tiny.onnx"), 0);
    ASSERT_OK(ib_imagenet_synthesize("mydata", 4, 11, NULL));
    int rc = run("--model tiny.onnx --data mydata --mode accuracy --system b --output-dir out");
    /* a real model scoring below the target exits 3 */
    ASSERT_INT_EQ(rc, 3);
    char *o = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(o, "Model: tiny.onnx\n");
    ASSERT_STR_CONTAINS(o, "Data:  mydata\n");
    ASSERT_STR_CONTAINS(o, "target 75.695: NOT met");
    ASSERT_STR_CONTAINS(o, ", total=4");
    ib_free(o);
    /* a model of another shape: refused, naming what resnet50 expects */
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "N,4");
    ib_build_output(b, IB_BUILD_OP(b, "Relu", "", x), "y", IB_DTYPE_FLOAT32, "N,4");
    ASSERT_OK(ib_build_write_file(b, "other.onnx", NULL, NULL));
    ib_build_destroy(b);
    ASSERT_INT_EQ(run("--model other.onnx --output-dir out"), 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "input 'x' is not float32 [N,3,224,224]");
    ib_free(e);
    /* --variant u8-input asks the model to take the pixels: a float32 model is refused, and
     * an unknown variant is named */
    ASSERT_INT_EQ(run("--model tiny.onnx --data mydata --variant u8-input --output-dir out"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "--variant u8-input needs a model whose input 'input_tensor:0' is uint8");
    ib_free(e);
    ASSERT_INT_EQ(run("--variant u9 --output-dir out"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "resnet50: unknown variant 'u9'");
    ib_free(e);
    /* not an ONNX file at all */
    ASSERT_OK(ib_file_write_all("junk.onnx", "hello", 5, NULL));
    ASSERT_INT_EQ(run("--model junk.onnx --output-dir out"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "junk.onnx");
    ib_free(e);
}

/* issue 24: --variant u8-input runs the built-in model on the uint8 pixels (a quarter of the
 * bytes a batch collates and copies) with the float model's predictions; run.json and the
 * binding note say so. */
TEST_TIMEOUT(cli_bench_u8_input_variant, 240)
{
    ASSERT_INT_EQ(run("--mode accuracy --system f --cache-dir c --output-dir o"), 0);
    ASSERT_INT_EQ(run("--mode accuracy --variant u8-input --system u --cache-dir c --output-dir o"),
                  0);
    char *rj = ib_test_slurp("o/u/resnet50/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "\"variant\": \"u8-input\"");
    ASSERT_STR_CONTAINS(rj, "uint8 pixels: the model subtracts the means");
    ib_free(rj);
    char *a = ib_test_slurp("o/f/resnet50/Offline/accuracy/mlperf_log_accuracy.json"),
         *b = ib_test_slurp("o/u/resnet50/Offline/accuracy/mlperf_log_accuracy.json");
    ASSERT_TRUE(strlen(a) > 100);
    ASSERT_STR_EQ(a, b); /* the same classes, sample by sample */
    ib_free(a);
    ib_free(b);
}

TEST_TIMEOUT(cli_bench_bad_data, 240)
{
    ASSERT_OK(ib_imagenet_synthesize("d", 3, 2, NULL));
    const char *bad = "ILSVRC2012_val_00000001.JPEG 1\nILSVRC2012_val_00000002.JPEG x\n";
    ASSERT_OK(ib_file_write_all("d/val_map.txt", bad, strlen(bad), NULL));
    ASSERT_INT_EQ(run("--data d --output-dir out"), 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "d/val_map.txt:2: label \"x\" is not an integer in 0..999");
    ib_free(e);
    /* a corrupt JPEG is found when the QSL loads it; the run stops with its name */
    const char *good = "ILSVRC2012_val_00000001.JPEG 1\nILSVRC2012_val_00000002.JPEG 2\n"
                       "ILSVRC2012_val_00000003.JPEG 3\n";
    ASSERT_OK(ib_file_write_all("d/val_map.txt", good, strlen(good), NULL));
    ASSERT_OK(ib_file_write_all("d/ILSVRC2012_val_00000003.JPEG", "\xff\xd8garbage", 9, NULL));
    int rc = run("--data d --mode accuracy --output-dir out");
    ASSERT_INT_EQ(rc, 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "d/ILSVRC2012_val_00000003.JPEG");
    ib_free(e);
    ASSERT_INT_EQ(run("--data nowhere --output-dir out"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "--data nowhere: no such folder");
    ASSERT_NULL(strstr(e, "building")); /* checked before the model is built */
    ib_free(e);
    remove("d/ILSVRC2012_val_00000002.JPEG");
    ASSERT_INT_EQ(run("--data d --output-dir out"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "ILSVRC2012_val_00000002.JPEG: missing (listed at d/val_map.txt:2)");
    ib_free(e);
}

static void usage_error(const char *args, const char *want)
{
    int rc = cli(args);
    if (rc != 2)
        ib_test_fail(__FILE__, __LINE__, "'%s' exited %d, expected 2", args, rc);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, want);
    ib_free(e);
}

TEST(cli_bench_usage_errors)
{
    usage_error("run --benchmark nope --output-dir o", "unknown benchmark 'nope' (built in: "
                                                       "resnet50");
    usage_error("run --benchmark resnet50 --scenario Bogus --output-dir o", "unknown scenario");
    usage_error("run --precision fp64 --output-dir o", "--precision: 'fp64'");
    usage_error("run --payload-dtype float16 --tiny --output-dir o",
                "payload dtype float16 is not one its accuracy script reads");
    usage_error("run --benchmark resnet50", "--output-dir is required");
    usage_error("run --sut null --benchmark resnet50 --output-dir o", "exclude each other");
    usage_error("run --threads 0 --output-dir o", "--threads: '0'");
    usage_error("run --batch abc --output-dir o", "--batch: 'abc'");
    usage_error("run --backend nosuch --output-dir o", "--backend nosuch");
    usage_error("run --system a/b --tiny --output-dir o", "--system 'a/b'");
    usage_error("run --sut null --scenario Offline --quick --output-dir o", "need --benchmark");
    ASSERT_INT_EQ(cli("run --help"), 0);
    char *o = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(o, "--benchmark ID");
    ASSERT_STR_CONTAINS(o, "input_tensor:0 -> ArgMax:0");
    ib_free(o);
}

TEST(cli_bench_null_sut_still_works)
{
    int rc = cli("run --sut null --scenario Offline --min-duration-ms 10 --total-samples 64 "
                 "--system n --output-dir nul");
    ASSERT_TRUE(rc == 0 || rc == 3);
    char *o = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(o, "Scenario : Offline");
    ASSERT_STR_CONTAINS(o, "null SUT");
    ib_free(o);
    /* the results-tree layout, as a benchmark's, with run.json beside */
    ASSERT_TRUE(ib_path_exists("nul/n/nullmodel/Offline/performance/run_1/mlperf_log_detail.txt"));
    ASSERT_TRUE(ib_path_exists("nul/n/nullmodel/Offline/run.json"));
}
