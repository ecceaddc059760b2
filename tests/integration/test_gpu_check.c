/*
 * test_gpu_check.c - tools/gpu-check.sh keeps to its time budget (GPU_CHECK_BUDGET): the
 * device tool ends a call at 8 minutes and drops its output, so a slow step must be cut to
 * what is left and the steps after it named as not run, with the table still printed. Run
 * here with a fake nvidia-smi and a fake build (no GPU is needed: the script only calls them).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/fileio.h"
#include "test.h"

/* a fake nvidia-smi, a test binary that passes at once, and a CLI that sleeps `run_s` */
static void fake_machine(const char *dir, int run_s)
{
    ASSERT_INT_EQ(ib_test_system("mkdir -p '%s/path' '%s/build/bin' '%s/build/tests'", dir, dir,
                                 dir),
                  0);
    ASSERT_INT_EQ(ib_test_system("printf '#!/bin/sh\\ncase \"$1\" in -L) echo \"GPU 0: Fake GPU "
                                 "(UUID: GPU-0)\";; *) echo \"Fake GPU\";; esac\\n' > "
                                 "'%s/path/nvidia-smi' && chmod +x '%s/path/nvidia-smi'",
                                 dir, dir),
                  0);
    ASSERT_INT_EQ(ib_test_system("printf '#!/bin/sh\\necho \"ok 1 - cuda_fake\"\\n' > "
                                 "'%s/build/tests/ib-tests' && chmod +x '%s/build/tests/ib-tests'",
                                 dir, dir),
                  0);
    ASSERT_INT_EQ(ib_test_system("printf '#!/bin/sh\\nsleep %d\\n' > '%s/build/bin/inferbench' && "
                                 "chmod +x '%s/build/bin/inferbench'",
                                 run_s, dir, dir),
                  0);
}

static int gpu_check(const char *dir, int budget, const char *log)
{
    return ib_test_system("PATH='%s/path':$PATH GPU_CHECK_BUILD='%s/build' GPU_CHECK_OUT='%s/out' "
                          "GPU_CHECK_BUDGET=%d PEER= LT_GEMM=0 PROFILE_STEPS=0 NHWC_BENCHMARKS= "
                          "GRAPHPOST_BENCHMARKS= sh '%s/tools/gpu-check.sh' --bundle --benchmarks "
                          "'resnet50 bert-99' > '%s' 2>&1",
                          dir, dir, dir, budget, ib_test_src_dir(), log);
}

static char *read_log(const char *path)
{
    char *s = NULL;
    size_t n = 0;
    ib_err err;
    ASSERT_INT_EQ(ib_file_read_all(path, 1 << 20, &s, &n, &err), 0);
    return s;
}

TEST_TIMEOUT(gpu_check_budget_spent_names_steps_not_run, 60)
{
    char dir[4200], log[4300];
    snprintf(dir, sizeof dir, "%s/gc1", ib_test_tmpdir());
    snprintf(log, sizeof log, "%s/log.txt", dir);
    fake_machine(dir, 0);
    /* 34 s less the 15 s kept for the table: under the 20 s a step needs, so none starts */
    ASSERT_INT_EQ(gpu_check(dir, 34, log), 3);
    char *s = read_log(log);
    ASSERT_TRUE(strstr(s, "== 1 GPU(s): Fake GPU") != NULL);
    ASSERT_TRUE(strstr(s, "GPU-CHECK INCOMPLETE") != NULL);
    ASSERT_TRUE(strstr(s, "the cuda_* tests") != NULL);
    ASSERT_TRUE(strstr(s, "run resnet50 fp16") != NULL && strstr(s, "run bert-99 fp16") != NULL);
    /* the default extra rows: BERT's 16-bit chains at fp16 and at int8, the int8 ones */
    ASSERT_TRUE(strstr(s, "run bert-99 fp16-half") != NULL);
    ASSERT_TRUE(strstr(s, "run bert-99 int8-half") != NULL);
    ASSERT_TRUE(strstr(s, "run resnet50 int8") != NULL);
    ASSERT_TRUE(strstr(s, "run resnet50 int8-half") == NULL);
    ASSERT_TRUE(strstr(s, "run bert-99 fp8-half") != NULL); /* e4m3 products, chains */
    ASSERT_TRUE(strstr(s, "run resnet50 fp8-half") == NULL);
    ASSERT_TRUE(strstr(s, "run resnet50 fp8\n") != NULL); /* e4m3 convolutions (graph API) */
    ASSERT_TRUE(strstr(s, "run bert-99 fp8\n") == NULL);
    /* the uint8-pixel input beside ResNet50's fp16 and int8 rows */
    ASSERT_TRUE(strstr(s, "run resnet50 fp16-u8in") != NULL);
    ASSERT_TRUE(strstr(s, "run resnet50 int8-u8in") != NULL);
    ASSERT_TRUE(strstr(s, "run bert-99 fp16-u8in") == NULL);
    ASSERT_TRUE(strstr(s, "== Offline samples/s") != NULL); /* the table is still printed */
    ASSERT_TRUE(strstr(s, "GPU-CHECK OK") == NULL);
    ib_free(s);
}

TEST_TIMEOUT(gpu_check_cuts_a_slow_run_to_the_budget, 90)
{
    char dir[4200], log[4300];
    snprintf(dir, sizeof dir, "%s/gc2", ib_test_tmpdir());
    snprintf(log, sizeof log, "%s/log.txt", dir);
    fake_machine(dir, 120); /* a run that would take two minutes */
    time_t t0 = time(NULL);
    int rc = gpu_check(dir, 37, log);
    time_t wall = time(NULL) - t0;
    char *s = read_log(log);
    /* the tests ran; resnet50's run was stopped after at most 22 s (37 - 15) and failed; no
     * time was left for bert-99, which is named as not run */
    ASSERT_INT_EQ(rc, 1);
    ASSERT_TRUE(wall < 35);
    ASSERT_TRUE(strstr(s, "ok 1 - cuda_fake") != NULL);
    ASSERT_TRUE(strstr(s, "GPU-CHECK FAILED: run resnet50 fp16 exited 124") != NULL);
    ASSERT_TRUE(strstr(s, "GPU-CHECK INCOMPLETE") != NULL);
    ASSERT_TRUE(strstr(s, "run bert-99 fp16") != NULL);
    ASSERT_TRUE(strstr(s, "time used:") != NULL);
    ib_free(s);
}

/* The rows are read from the CLI's own output (run --json and run.json), not from a fake's:
 * the real CLI stands in, its "--backend cuda" turned into "cpu" (whose --devices list is
 * ignored) on the tiny model. Before the twelfth session perf_of read
 * performance.samples_per_second, which the CLI never wrote, so every row of the first device
 * call would have been "-" and failed. Since the thirteenth, a row named in SERVER_ROWS is
 * followed by a Server run at 0.75 x its Offline figure (issues 24 and 25 set their Server
 * targets as fractions of Offline; before, no device call measured Server at all), whose
 * figure is the run's Server result and whose published columns are the Server ones. */
TEST_TIMEOUT(gpu_check_reads_the_cli_s_own_output, 180)
{
    char dir[4200], log[4300];
    snprintf(dir, sizeof dir, "%s/gc3", ib_test_tmpdir());
    snprintf(log, sizeof log, "%s/log.txt", dir);
    fake_machine(dir, 0);
    ASSERT_INT_EQ(ib_test_system("printf '#!/bin/sh\\nn=$#\\nfor a do [ \"$a\" = cuda ] && "
                                 "a=cpu; set -- \"$@\" \"$a\"; done\\nshift $n\\nexec \"%s/"
                                 "inferbench\" \"$@\" --tiny --threads 1\\n' > "
                                 "'%s/build/bin/inferbench'",
                                 ib_test_bin_dir(), dir),
                  0);
    int rc = ib_test_system(
        "PATH='%s/path':$PATH GPU_CHECK_BUILD='%s/build' GPU_CHECK_OUT='%s/out' "
        "GPU_CHECK_BUDGET=170 PEER= LT_GEMM=0 PROFILE_STEPS=0 NHWC_BENCHMARKS= "
        "GRAPHPOST_BENCHMARKS= KITS_BENCHMARKS= HALF_BENCHMARKS= INT8_BENCHMARKS= "
        "FP8_BENCHMARKS= FP8CONV_BENCHMARKS= SERVER_ROWS=resnet50:fp32 sh "
        "'%s/tools/gpu-check.sh' --bundle --no-tests "
        "--precisions fp32 --benchmarks resnet50 > '%s' 2>&1",
        dir, dir, dir, ib_test_src_dir(), log);
    char *s = read_log(log);
    printf("%s", s);
    ASSERT_INT_EQ(rc, 0);
    ASSERT_TRUE(strstr(s, "== GPU-CHECK OK") != NULL);
    ASSERT_TRUE(strstr(s, "no samples_per_second") == NULL);
    /* the row: a figure in both rate columns, VALID, 0 nodes on the reference kernels */
    const char *row = strstr(s, "\nresnet50      fp32           Offline ");
    ASSERT_NOT_NULL(row);
    double all = 0, per = 0;
    char status[16] = "";
    ASSERT_INT_EQ(sscanf(row, " resnet50 fp32 Offline %lf %lf %15s", &all, &per, status), 3);
    ASSERT_TRUE(all > 0 && per == all);
    ASSERT_STR_EQ(status, "VALID");
    ASSERT_NOT_NULL(strstr(row, " 33272 ")); /* the published Offline figure per A100 */
    /* the worker time and the Offline rate over the warm-up's */
    const char *t = strstr(s, "   time: resnet50 fp32 Offline: offline/warm-up ");
    ASSERT_NOT_NULL(t);
    double ratio = 0;
    ASSERT_INT_EQ(sscanf(t, "   time: resnet50 fp32 Offline: offline/warm-up %lf; compute", &ratio),
                  1);
    ASSERT_TRUE(ratio > 0.2 && ratio < 5);
    ASSERT_TRUE(strstr(t, "% of 1 worker(s) x ") != NULL);
    /* the Server run: asked 0.75 x the Offline figure, its own row with its result (VALID or
     * not: a 2-core machine's latency is noise) beside the published Server figure */
    const char *sv = strstr(s, "   server: resnet50 fp32 at ");
    ASSERT_NOT_NULL(sv);
    double q = 0, off = 0;
    ASSERT_INT_EQ(sscanf(sv, "   server: resnet50 fp32 at %lf samples/s, 0.75 x its Offline %lf",
                         &q, &off),
                  2);
    ASSERT_TRUE(off == all && q > 0.74 * all && q < 0.76 * all);
    const char *srow = strstr(s, "\nresnet50      fp32           Server ");
    ASSERT_NOT_NULL(srow);
    double sall = 0, sper = 0;
    ASSERT_INT_EQ(sscanf(srow, " resnet50 fp32 Server %lf %lf %15s", &sall, &sper, status), 3);
    ASSERT_TRUE(sall > 0 && sper == sall);
    ASSERT_TRUE(!strcmp(status, "VALID") || !strcmp(status, "INVALID"));
    ASSERT_NOT_NULL(strstr(srow, " 30421 ")); /* the published Server figure per A100 */
    ASSERT_NOT_NULL(strstr(s, "   time: resnet50 fp32 Server: server; compute "));
    ib_free(s);
}

/* On a GPU machine only .gpu/ is carried, not ../shared: the published per-GPU figures come
 * from tools/published-v1.1.md, whose every row must be the reference's (section 3.2 of
 * ../shared/reference/benchmarks.md), and published() must find every benchmark id in it,
 * including the rows that serve two ids ("dlrm-99 = dlrm-99.9"). */
TEST(gpu_check_published_copy_matches_reference)
{
    char copy_path[4200], ref_path[4200];
    snprintf(copy_path, sizeof copy_path, "%s/tools/published-v1.1.md", ib_test_src_dir());
    snprintf(ref_path, sizeof ref_path, "%s/reference/benchmarks.md", ib_test_shared_dir());
    char *copy = read_log(copy_path);
    if (!ib_path_exists(ref_path)) {
        ib_free(copy);
        TEST_SKIP("no ../shared/reference/benchmarks.md here");
    }
    char *ref = read_log(ref_path);
    int rows = 0;
    for (char *l = strstr(copy, "\n| "); l; l = strstr(l + 1, "\n| ")) {
        const char *e = strchr(l + 1, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        char line[512];
        ASSERT_TRUE(n < sizeof line);
        memcpy(line, l, n);
        line[n] = '\0';
        if (!strstr(ref, line))
            ib_test_fail(__FILE__, __LINE__, "row not in the reference:%s", line);
        rows++;
    }
    ASSERT_INT_EQ(rows, 14); /* the header and 13 results */
    ib_free(ref);
    ib_free(copy);
    /* published() reads the copy when ../shared is not there */
    char dir[4200], log[4300];
    snprintf(dir, sizeof dir, "%s/gc4", ib_test_tmpdir());
    snprintf(log, sizeof log, "%s/out.txt", dir);
    ASSERT_INT_EQ(ib_test_system("mkdir -p '%s/root/tools' && cp '%s' '%s/root/tools/' && "
                                 "sed -n '/^published() {/,/^}/p' '%s/tools/gpu-check.sh' > "
                                 "'%s/f.sh' && (ROOT='%s/root'; . '%s/f.sh'; for b in resnet50 "
                                 "ssd-resnet34 bert-99 bert-99.9 dlrm-99 dlrm-99.9 rnnt "
                                 "3d-unet-99 3d-unet-99.9 none; do echo \"$b $(published $b 3) "
                                 "$(published $b 4)\"; done; echo \"Server $(published resnet50 "
                                 "3 Server) $(published rnnt 4 Server) $(published 3d-unet-99 3 "
                                 "Server)\") > '%s'",
                                 dir, copy_path, dir, ib_test_src_dir(), dir, dir, dir, log),
                  0);
    char *s = read_log(log);
    printf("%s", s);
    ASSERT_STR_CONTAINS(s, "resnet50 33272 17976\n");
    ASSERT_STR_CONTAINS(s, "ssd-resnet34 817 470\n");
    ASSERT_STR_CONTAINS(s, "bert-99.9 1409 818\n");
    ASSERT_STR_CONTAINS(s, "dlrm-99 256269 133065\ndlrm-99.9 256269 133065\n");
    ASSERT_STR_CONTAINS(s, "rnnt 11857 6581\n");
    ASSERT_STR_CONTAINS(s, "3d-unet-99 51.9 29.7\n3d-unet-99.9 51.9 29.7\n");
    ASSERT_STR_CONTAINS(s, "none  \n");
    /* the Server rows' figures (3D U-Net has no Server scenario) */
    ASSERT_STR_CONTAINS(s, "Server 30421 3631 \n");
    ib_free(s);
}
