/*
 * test_cli_rnnt.c - `inferbench run --benchmark rnnt` end to end with the tiny RNN-T on a
 * synthetic dev-clean: AccuracyOnly (accuracy.txt recomputed here from
 * mlperf_log_accuracy.json through the metric and the manifest transcripts), PerformanceOnly
 * and Server, an int8 payload, and a dataset with a missing transcript line refused with
 * exit status 2 naming the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/audio.h"
#include "dataset/librispeech.h"
#include "metrics/wer.h"
#include "test.h"

static int run(const char *args)
{
    return ib_test_system("%s/inferbench run --benchmark rnnt --tiny --threads 1 "
                          "--synth-samples 6 --min-duration-ms 300 %s > out.txt 2> err.txt",
                          ib_test_bin_dir(), args);
}

/* The WER line over every record of an accuracy log with w-byte ids. */
static void wer_of_log(const char *log, const ib_librispeech *ds, size_t w, char *line,
                       size_t n, size_t *records)
{
    ib_wer_acc acc = {0};
    *records = 0;
    for (const char *p = strstr(log, "\"qsl_idx\""); p; p = strstr(p + 1, "\"qsl_idx\"")) {
        size_t q = strtoul(strchr(p, ':') + 1, NULL, 10);
        const char *d = strchr(strstr(p, "\"data\""), ':');
        d = strchr(d, '"') + 1;
        const char *end = strchr(d, '"');
        size_t nb = (size_t)(end - d) / 2, m = nb / w;
        int64_t ids[4096];
        ASSERT_TRUE(m < 4096 && q < ds->n);
        for (size_t k = 0; k < m; k++) {
            unsigned v = 0;
            sscanf(d + 2 * k * w, "%2x", &v); /* little-endian: the low byte first */
            ids[k] = (int64_t)v;
        }
        char *hyp = NULL;
        ib_err err;
        ASSERT_OK_ERR(ib_wer_ids_to_text(ids, m, &hyp, &err), &err);
        ASSERT_OK(ib_wer_acc_add(&acc, hyp, ds->utt[q].transcript));
        ib_free(hyp);
        (*records)++;
    }
    ib_wer_line(ib_wer_acc_value(&acc), line, n);
}

TEST_TIMEOUT(cli_rnnt_accuracy_offline, 240)
{
    int rc = run("--quick --scenario Offline --mode AccuracyOnly --system s --cache-dir c "
                 "--output-dir out");
    ASSERT_INT_EQ(rc, 0);
    ASSERT_INT_EQ(ib_test_system("ln -s c/rnnt/gen*/data-tiny-seed1-n6 data"), 0);
    char *acc = ib_test_slurp("out/s/rnnt/Offline/accuracy/accuracy.txt");
    char *log = ib_test_slurp("out/s/rnnt/Offline/accuracy/mlperf_log_accuracy.json");
    ib_librispeech *ds = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_librispeech_open("data", 0, &ds, &err), &err);
    ASSERT_UINT_EQ(ds->n, 6);
    char want[200];
    size_t records = 0;
    wer_of_log(log, ds, 8, want, sizeof want, &records);
    ASSERT_UINT_EQ(records, 6);
    ASSERT_TRUE(strncmp(acc, want, strlen(want)) == 0);
    ASSERT_STR_CONTAINS(acc, "\nhash=");
    /* the random model emits symbols for some utterance (seed 1: one of the six) */
    int nonempty = 0;
    for (const char *p = strstr(log, "\"data\" : \""); p; p = strstr(p + 1, "\"data\" : \""))
        nonempty += p[10] != '"';
    ASSERT_TRUE(nonempty > 0);
    char *rj = ib_test_slurp("out/s/rnnt/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "\"submittable\": false");
    ib_librispeech_free(ds);
    ib_free(acc);
    ib_free(log);
    ib_free(rj);
}

TEST_TIMEOUT(cli_rnnt_performance_offline_and_server, 240)
{
    int rc = run("--quick --scenario Offline --mode PerformanceOnly --system s --output-dir out");
    ASSERT_INT_EQ(rc, 0);
    char *sum = ib_test_slurp("out/s/rnnt/Offline/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Scenario : Offline");
    ASSERT_STR_CONTAINS(sum, "Result is : VALID");
    ib_free(sum);
    /* 100 queries (fewer than early stopping wants: INVALID is accepted, the run and its
     * logs are what is checked) */
    rc = run("--quick --scenario Server --min-query-count 100 --system s --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3);
    sum = ib_test_slurp("out/s/rnnt/Server/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Scenario : Server");
    ib_free(sum);
}

/* --precision int8: the encoder is calibrated on features the entry makes from the
 * waveforms (calib_inputs); the other three models have no calibration set of their own and
 * run at fp32 on the cpu, which run.json and the labels say. Before, the run failed with
 * "calibration sample 0 not loaded". */
TEST_TIMEOUT(cli_rnnt_int8_precision_per_model, 240)
{
    int rc = run("--quick --precision int8 --mode PerformanceOnly --system s --output-dir out");
    ASSERT_INT_EQ(rc, 0);
    char *rj = ib_test_slurp("out/s/rnnt/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "\"precision\": \"int8\"");
    ASSERT_STR_CONTAINS(rj, "\"model_precisions\": [\n    \"int8\",\n    \"fp32\",\n    "
                            "\"fp32\",\n    \"fp32\"\n  ]");
    ASSERT_STR_CONTAINS(rj, "int8 calibrated values: ");
    char *so = ib_test_slurp("out.txt");
    ASSERT_STR_CONTAINS(so, "precision: int8, per model int8, fp32, fp32, fp32 (only model 0 "
                            "is calibrated)");
    /* and that int8 covers none of the encoder's products: its five LSTMs stay at fp32 (the
     * other models' four products are at their own fp32) */
    ASSERT_STR_CONTAINS(rj, "\"precision_use\": {\n    \"products\": 9,\n    \"at_precision\": 4,"
                            "\n    \"others\": \"LSTM x5 at fp32\"\n  }");
    char *se = ib_test_slurp("err.txt"); /* the stage lines */
    ASSERT_STR_CONTAINS(se, "products: 4 of 9 at their model's precision (others: LSTM x5 at "
                            "fp32)");
    /* where the workers' time went, over the entry's four sessions and its decoder loop */
    ASSERT_STR_CONTAINS(se, "worker time: compute ");
    ASSERT_STR_CONTAINS(rj, "\"worker_time\": {\n    \"workers\": ");
    ib_free(se);
    ASSERT_STR_CONTAINS(so, "precision use: 4 of 9 products compute at their model's precision "
                            "(int8, fp32, fp32, fp32); the others: LSTM x5 at fp32");
    ib_free(so);
    ib_free(rj);
    /* fp32: no per-model label, every model at fp32 */
    rc = run("--quick --mode PerformanceOnly --system s --output-dir out2");
    ASSERT_INT_EQ(rc, 0);
    rj = ib_test_slurp("out2/s/rnnt/Offline/run.json");
    ASSERT_STR_CONTAINS(rj, "\"model_precisions\": [\n    \"fp32\",\n    \"fp32\",\n    "
                            "\"fp32\",\n    \"fp32\"\n  ]");
    ASSERT_NULL(strstr(rj, "per model"));
    ASSERT_STR_CONTAINS(rj, "\"products\": 9,\n    \"at_precision\": 9,");
    ASSERT_NULL(strstr(rj, "precision use:"));
    ib_free(rj);
}

TEST_TIMEOUT(cli_rnnt_int8_payload_and_bad_data, 240)
{
    int rc = run("--quick --mode AccuracyOnly --payload-dtype int8 --system s --cache-dir c "
                 "--output-dir out");
    ASSERT_INT_EQ(rc, 0);
    ASSERT_INT_EQ(ib_test_system("ln -s c/rnnt/gen*/data-tiny-seed1-n6 data"), 0);
    char *acc = ib_test_slurp("out/s/rnnt/Offline/accuracy/accuracy.txt");
    char *log = ib_test_slurp("out/s/rnnt/Offline/accuracy/mlperf_log_accuracy.json");
    ib_librispeech *ds = NULL;
    ib_err err;
    ASSERT_OK(ib_librispeech_open("data", 0, &ds, &err));
    char want[200];
    size_t records = 0;
    wer_of_log(log, ds, 1, want, sizeof want, &records);
    ASSERT_UINT_EQ(records, 6);
    ASSERT_TRUE(strncmp(acc, want, strlen(want)) == 0);
    ib_librispeech_free(ds);
    ib_free(acc);
    ib_free(log);
    /* the layout with a .flac that has no transcript line */
    ASSERT_OK(ib_mkdirs("bad/1272/128104", &err));
    int16_t s[8000] = {0};
    ASSERT_OK(ib_audio_write("bad/1272/128104/1272-128104-0000.flac", IB_AUDIO_FLAC, 16000, s,
                             8000, &err));
    ASSERT_OK(ib_audio_write("bad/1272/128104/1272-128104-0001.flac", IB_AUDIO_FLAC, 16000, s,
                             8000, &err));
    ASSERT_OK(ib_file_write_all("bad/1272/128104/1272-128104.trans.txt",
                                "1272-128104-0000 A B\n", 21, &err));
    rc = run("--quick --data bad --output-dir out2");
    ASSERT_INT_EQ(rc, 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "1272-128104.trans.txt");
    ASSERT_STR_CONTAINS(e, "missing transcript line");
    ib_free(e);
}
