/*
 * test_bench_bert_args.c - bench/models/bert takes the precisions tools/gpu-check.sh gives it.
 * The third device call of docs/cuda_backend.md section 6 profiles BERT with `bench/models/bert
 * --backend cuda --precisions fp16`; the bench once knew only fp32, bf16 and int8 and would
 * have spent that call's minutes on "unknown precision fp16". Here the reference backend stands
 * in for cuda (no GPU): one layer, seq 8, one short repetition.
 */
#include <stdlib.h>
#include <string.h>

#include "inferbench/base.h"
#include "test.h"

static int bert(const char *args)
{
    const char *bd = getenv("IB_BUILD_DIR");
    if (!bd)
        TEST_SKIP("IB_BUILD_DIR not set (run through make check)");
    return ib_test_system("%s/bench/models/bert %s > out.txt 2> err.txt", bd, args);
}

TEST_TIMEOUT(bench_bert_device_precisions, 120)
{
    /* fp16 as gpu-check's BERT profile asks it, on a device backend */
    ASSERT_INT_EQ(bert("--backend reference --precisions fp16 --batches 1 --reps 1 --seconds 0.1 "
                       "--layers 1 --seq 8 --quiet-wait 0 --profile"),
                  0);
    char *o = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(o, "\nfp16 ");
    ib_free(o);
    /* fp8 calibrates first (ib_session_create refuses it without calibration inputs) */
    ASSERT_INT_EQ(bert("--backend reference --precisions fp8 --batches 1 --reps 1 --seconds 0.1 "
                       "--layers 1 --seq 8 --quiet-wait 0"),
                  0);
    o = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(o, "\nfp8 ");
    ib_free(o);
    /* the cpu has no fp16 kernels: a usage error naming the fix, not a reference-kernel figure */
    ASSERT_INT_EQ(bert("--precisions fp16 --batches 1 --reps 1 --layers 1 --seq 8 --no-torch "
                       "--no-ort"),
                  2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "precision fp16 needs a device backend (--backend cuda)");
    ib_free(e);
    ASSERT_INT_EQ(bert("--backend reference --precisions fp12 --layers 1 --seq 8"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "unknown precision fp12");
    ib_free(e);
}
