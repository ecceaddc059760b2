/*
 * test_package.c - `inferbench package`: usage errors; refusal (exit 3, nothing written) of a
 * synthetic --quick run; packaging a fabricated non-synthetic tree (a resnet50 --tiny --quick
 * run and its TEST01 audit whose run.json the test rewrites as real-model/real-data, with an
 * accuracy log padded over 10 KiB) into the official layout with the truncated log and the
 * SHA-256 line, and `inferbench check` on the package reporting only the problems a 1-s run
 * on 64 samples has, none of layout, files, system JSON or hash.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/sha256.h"
#include "test.h"

#define BIN "%s/inferbench "

static void assert_contains_file(const char *path, const char *needle)
{
    char *t = ib_test_read(path);
    ASSERT_NOT_NULL(t);
    ASSERT_STR_CONTAINS(t, needle);
    ib_free(t);
}

/* A tiny quick resnet50 submission run plus its TEST01 audit, into R. */
static void make_run(void)
{
    int rc = ib_test_system(BIN "audit TEST01 --benchmark resnet50 --tiny --quick --quiet "
                                "--system sys1 --output-dir R > a.txt 2> ae.txt",
                            ib_test_bin_dir());
    ASSERT_TRUE(rc == 0 || rc == 3); /* the performance delta is a timing fact */
    /* the audit's reference run is a results tree; put the TEST01 folder next to it */
    ASSERT_INT_EQ(ib_test_system("mkdir -p T && cp -r R/.audit/ref/sys1 T/ && "
                                 "cp -r R/sys1/resnet50/Offline/TEST01 T/sys1/resnet50/Offline/"),
                  0);
}

TEST(package_usage_errors)
{
    const char *b = ib_test_bin_dir();
    ASSERT_INT_EQ(ib_test_system(BIN "package --help > h.txt", b), 0);
    assert_contains_file("h.txt", "--division closed|open");
    ASSERT_INT_EQ(ib_test_system(BIN "package 2> e.txt", b), 2);
    assert_contains_file("e.txt", "RESULTS_DIR is required");
    ASSERT_INT_EQ(ib_test_system(BIN "package . 2> e.txt", b), 2);
    assert_contains_file("e.txt", "--output-dir is required");
    ASSERT_INT_EQ(ib_test_system(BIN "package . --output-dir S --division network 2> e.txt", b), 2);
    assert_contains_file("e.txt", "not closed or open");
    ASSERT_INT_EQ(ib_test_system(BIN "package . --output-dir S --submitter a/b 2> e.txt", b), 2);
    ASSERT_INT_EQ(ib_test_system(BIN "package . --output-dir S --bogus 2> e.txt", b), 2);
    ASSERT_INT_EQ(ib_test_system("mkdir -p empty && " BIN "package empty --output-dir S 2> e.txt",
                                 b),
                  2);
    assert_contains_file("e.txt", "no <system>/<benchmark>/<Scenario> folder");
    ASSERT_INT_EQ(ib_test_system(BIN "package missing_dir --output-dir S 2> e.txt", b), 2);
    /* a scenario folder without run.json cannot be vouched for */
    ASSERT_INT_EQ(ib_test_system("mkdir -p X/s/resnet50/Offline && " BIN "package X "
                                 "--output-dir S 2> e.txt", b),
                  3);
    assert_contains_file("e.txt", "no readable run.json");
    ASSERT_FALSE(ib_path_exists("S"));
    /* a run.json that vouches for a run whose logs are gone: refused, nothing half-written */
    ASSERT_INT_EQ(ib_test_system("mkdir -p Y/s/resnet50/Offline/accuracy && "
                                 "echo '{\"submittable\": true}' > Y/s/resnet50/Offline/run.json && "
                                 BIN "package Y --output-dir S 2> e.txt", b),
                  3);
    assert_contains_file("e.txt", "accuracy/mlperf_log_accuracy.json: missing");
    ASSERT_FALSE(ib_path_exists("S"));
}

TEST_TIMEOUT(package_refuses_synthetic_quick_run, 240)
{
    make_run();
    ASSERT_INT_EQ(ib_test_system(BIN "package T --output-dir S > o.txt 2> e.txt",
                                 ib_test_bin_dir()),
                  3);
    assert_contains_file("e.txt", "refused, nothing was written");
    assert_contains_file("e.txt", "random weights");
    assert_contains_file("e.txt", "synthetic data");
    assert_contains_file("e.txt", "--quick");
    ASSERT_FALSE(ib_path_exists("S"));
}

TEST_TIMEOUT(package_fabricated_tree_and_check, 240)
{
    make_run();
    const char *scen = "T/sys1/resnet50/Offline";
    char p[512];
    /* fabricate: the run.json of a real-model, real-data, full-length run */
    snprintf(p, sizeof p, "%s/run.json", scen);
    static const char runjson[] =
        "{\n  \"benchmark\": \"resnet50\",\n  \"model_name\": \"resnet50\",\n"
        "  \"scenario\": \"Offline\",\n  \"mode\": \"SubmissionRun\",\n"
        "  \"rules\": \"current\",\n  \"system\": \"sys1\",\n  \"submittable\": true,\n"
        "  \"labels\": [],\n"
        "  \"model\": {\n    \"path\": \"/models/resnet50_v1.onnx\",\n    \"synthetic\": false\n  },\n"
        "  \"data\": {\n    \"path\": \"/data/imagenet\",\n    \"synthetic\": false\n  },\n"
        "  \"precision\": \"int8\",\n"
        "  \"settings_changed\": [\n    \"offline_expected_qps=978.343 (twice the warm-up rate)\"\n  ]\n}\n";
    ASSERT_OK(ib_file_write_all(p, runjson, strlen(runjson), NULL));
    /* an accuracy log over the 10 KiB limit: 300 entries */
    char log[32768];
    size_t n = 0;
    n += (size_t)snprintf(log + n, sizeof log - n, "[\n");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(log + n, sizeof log - n,
                              "{ \"seq_id\" : %d, \"qsl_idx\" : %d, \"data\" : \"00000000\" },\n",
                              i, i % 64);
    n -= 2;
    n += (size_t)snprintf(log + n, sizeof log - n, "\n]\n");
    ASSERT_INT_GT((long)n, 10240);
    snprintf(p, sizeof p, "%s/accuracy/mlperf_log_accuracy.json", scen);
    ASSERT_OK(ib_file_write_all(p, log, n, NULL));
    char want[65];
    ib_sha256_hex(log, n, want);

    ASSERT_INT_EQ(ib_test_system(BIN "package T --output-dir S --submitter Acme > o.txt 2> e.txt",
                                 ib_test_bin_dir()),
                  0);
    const char *root = "S/closed/Acme";
    static const char *const files[] = {
        "systems/sys1.json",
        "code/resnet50/inferbench/README.md",
        "measurements/sys1/resnet50/Offline/mlperf.conf",
        "measurements/sys1/resnet50/Offline/user.conf",
        "measurements/sys1/resnet50/Offline/README.md",
        "measurements/sys1/resnet50/Offline/sys1_inferbench_Offline.json",
        "results/sys1/resnet50/Offline/performance/run_1/mlperf_log_summary.txt",
        "results/sys1/resnet50/Offline/performance/run_1/mlperf_log_detail.txt",
        "results/sys1/resnet50/Offline/accuracy/mlperf_log_summary.txt",
        "results/sys1/resnet50/Offline/accuracy/mlperf_log_detail.txt",
        "results/sys1/resnet50/Offline/accuracy/accuracy.txt",
        "results/sys1/resnet50/Offline/accuracy/mlperf_log_accuracy.json",
        "compliance/sys1/resnet50/Offline/TEST01/verify_accuracy.txt",
        "compliance/sys1/resnet50/Offline/TEST01/verify_performance.txt",
        "compliance/sys1/resnet50/Offline/TEST01/accuracy/mlperf_log_accuracy.json",
        "compliance/sys1/resnet50/Offline/TEST01/accuracy/accuracy.txt",
        "compliance/sys1/resnet50/Offline/TEST01/performance/run_1/mlperf_log_detail.txt",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", root, files[i]);
        if (!ib_path_exists(p))
            ib_test_fail(__FILE__, __LINE__, "missing %s", p);
    }
    snprintf(p, sizeof p, "%s/systems/sys1.json", root);
    assert_contains_file(p, "\"submitter\": \"Acme\"");
    assert_contains_file(p, "\"division\": \"closed\"");
    snprintf(p, sizeof p, "%s/measurements/sys1/resnet50/Offline/mlperf.conf", root);
    assert_contains_file(p, "rng_seed");
    snprintf(p, sizeof p, "%s/measurements/sys1/resnet50/Offline/user.conf", root);
    assert_contains_file(p, "resnet50.Offline.offline_expected_qps = 978.343");
    snprintf(p, sizeof p, "%s/measurements/sys1/resnet50/Offline/sys1_inferbench_Offline.json",
             root);
    assert_contains_file(p, "\"starting_weights_filename\": \"resnet50_v1.onnx\"");
    assert_contains_file(p, "\"weight_data_types\": \"int8\"");
    /* truncate_accuracy_log.py: head + "\n\n...\n\n" + tail, hash of the whole log */
    snprintf(p, sizeof p, "%s/results/sys1/resnet50/Offline/accuracy/mlperf_log_accuracy.json",
             root);
    char *tl = ib_test_read(p);
    ASSERT_NOT_NULL(tl);
    ASSERT_INT_LE((long)strlen(tl), 10240);
    ASSERT_INT_EQ((long)strlen(tl), 4096 + 7 + 4096);
    ASSERT_STR_CONTAINS(tl, "\n\n...\n\n");
    ASSERT_MEM_EQ(tl, log, 4096);
    ib_free(tl);
    char line[80];
    snprintf(line, sizeof line, "hash=%s\n", want);
    snprintf(p, sizeof p, "%s/results/sys1/resnet50/Offline/accuracy/accuracy.txt", root);
    char *acc = ib_test_read(p);
    ASSERT_NOT_NULL(acc);
    ASSERT_STR_CONTAINS(acc, line);
    ASSERT_STR_CONTAINS(acc, "accuracy=");
    ASSERT_NULL(strstr(strstr(acc, "hash=") + 5, "hash=")); /* replaced, not repeated */
    ib_free(acc);

    /* the checker on the package: only the problems of a short run on 64 samples with random
     * weights (and its TEST01 alone), nothing about the layout the packager wrote */
    int rc = ib_test_system(BIN "check S --json > c.json 2> ce.txt", ib_test_bin_dir());
    ASSERT_INT_EQ(rc, 3);
    char *cj = ib_test_read("c.json");
    ASSERT_NOT_NULL(cj);
    ASSERT_STR_CONTAINS(cj, "\"rule\": \"perf.min-duration\"");
    ASSERT_STR_CONTAINS(cj, "\"rule\": \"acc.target\"");
    static const char *const never[] = {
        "tree.", "system.missing", "system.json", "system.field-missing", "system.submitter",
        "system.division", "system.status", "system.type", "model.unknown", "measure.",
        "acc.missing", "acc.files", "acc.metric", "acc.hash", "acc.log-size", "acc.log-format",
        "acc.detail", "perf.missing-run", "perf.files", "perf.detail", "perf.key-missing",
        "comp.missing-dir", "comp.verify-missing", "comp.run-missing", "comp.files", "comp.acc-dir",
        "comp.audit-config",
    };
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "\"rule\": \"%s", never[i]);
        if (strstr(cj, pat))
            ib_test_fail(__FILE__, __LINE__, "check reported %s on the package:\n%s", never[i],
                         cj);
    }
    ib_free(cj);
}
