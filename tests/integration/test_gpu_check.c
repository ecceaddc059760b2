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
