/*
 * test_cli_bert.c - `inferbench run --benchmark bert-99|bert-99.9` end to end with the tiny
 * BERT (random weights) on a synthetic SQuAD set: accuracy.txt in evaluate-v1.1.py's
 * json.dumps format, a Server performance run with the official logs, and malformed data
 * (bad JSON, a vocabulary without [CLS]) refused with exit status 2 naming the file.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "test.h"

static int run(const char *args)
{
    return ib_test_system("%s/inferbench run --tiny --threads 1 --synth-samples 6 "
                          "--min-duration-ms 300 %s > out.txt 2> err.txt",
                          ib_test_bin_dir(), args);
}

TEST_TIMEOUT(bert_cli_accuracy_offline, 240)
{
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --mode accuracy --output-dir out"), 0);
    char *acc = ib_test_slurp("out/vm-cpu/bert-99/Offline/accuracy/accuracy.txt");
    double em = -1, f1 = -1;
    ASSERT_INT_EQ(sscanf(acc, "{\"exact_match\": %lf, \"f1\": %lf}\nhash=", &em, &f1), 2);
    ASSERT_TRUE(em >= 0 && em <= f1 && f1 <= 100);
    /* 6 questions, 3 on the > 384-token paragraph: more features than questions */
    char *log = ib_test_slurp("out/vm-cpu/bert-99/Offline/accuracy/mlperf_log_accuracy.json");
    int n = 0;
    for (const char *p = log; (p = strstr(p, "\"qsl_idx\"")); p++)
        n++;
    ASSERT_INT_GT(n, 6);
    /* each payload is float32 [384, 2]: 3072 bytes = 6144 hex digits */
    const char *d = strstr(log, "\"data\"");
    ASSERT_NOT_NULL(d);
    d = strchr(d + 6, '"');
    ASSERT_NOT_NULL(d);
    ASSERT_UINT_EQ(strcspn(d + 1, "\""), 6144);
    ib_free(acc);
    ib_free(log);
}

TEST_TIMEOUT(bert_cli_server_performance, 240)
{
    int rc = run("--benchmark bert-99.9 --quick --scenario Server --output-dir out");
    ASSERT_TRUE(rc == 0 || rc == 3); /* a --quick Server run may be INVALID */
    char *sum = ib_test_slurp("out/vm-cpu/bert-99.9/Server/performance/run_1/mlperf_log_summary.txt");
    ASSERT_STR_CONTAINS(sum, "Scenario : Server");
    ib_free(sum);
}

TEST_TIMEOUT(bert_cli_bad_data, 120)
{
    ib_err err;
    ASSERT_OK(ib_mkdirs("bad", &err));
    const char *vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\n";
    ASSERT_OK(ib_file_write_all("bad/vocab.txt", vocab, strlen(vocab), &err));
    ASSERT_OK(ib_file_write_all("bad/dev-v1.1.json", "{\"data\": [", 10, &err));
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --data bad --output-dir out"), 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "dev-v1.1.json:1:");
    ib_free(e);
    const char *json = "{\"data\":[{\"paragraphs\":[{\"context\":\"a a\",\"qas\":[{\"id\":\"i\","
                       "\"question\":\"a\",\"answers\":[]}]}]}]}";
    ASSERT_OK(ib_file_write_all("bad/dev-v1.1.json", json, strlen(json), &err));
    ASSERT_OK(ib_file_write_all("bad/vocab.txt", "[UNK]\n[SEP]\na\n", 13, &err));
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --data bad --output-dir out"), 2);
    e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "[CLS]");
    ib_free(e);
}

/* --variant unpadded (batches cut to their longest real length, bench_bert.c): the same
 * answers as the padded reference path, payloads still float32 [384, 2], the uncomputed
 * positions written as -10000 (hex 00401CC6, little-endian) - which the padded run never
 * writes, so the test fails when nothing is cut; an unknown variant is exit 2. */
TEST_TIMEOUT(bert_cli_unpadded_same_answers, 240)
{
    /* batch 1: each feature at its own length (133..384 tokens in the synthetic set) */
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --mode accuracy --batch 1 --output-dir pad"),
                  0);
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --mode accuracy --batch 1 --variant unpadded "
                      "--output-dir cut"),
                  0);
    char *a = ib_test_slurp("pad/vm-cpu/bert-99/Offline/accuracy/accuracy.txt");
    char *b = ib_test_slurp("cut/vm-cpu/bert-99/Offline/accuracy/accuracy.txt");
    *strchr(a, '\n') = 0; /* the first line: {"exact_match": .., "f1": ..} (the hash differs) */
    *strchr(b, '\n') = 0;
    ASSERT_STR_EQ(b, a);
    char *la = ib_test_slurp("pad/vm-cpu/bert-99/Offline/accuracy/mlperf_log_accuracy.json");
    char *lb = ib_test_slurp("cut/vm-cpu/bert-99/Offline/accuracy/mlperf_log_accuracy.json");
    int na = 0, nb = 0;
    for (const char *p = la; (p = strstr(p, "\"qsl_idx\"")); p++)
        na++;
    for (const char *p = lb; (p = strstr(p, "\"qsl_idx\"")); p++)
        nb++;
    ASSERT_INT_EQ(nb, na);
    ASSERT_TRUE(strstr(la, "00401CC6") == NULL);
    ASSERT_NOT_NULL(strstr(lb, "00401CC600401CC6"));
    const char *d = strstr(lb, "\"data\"");
    ASSERT_NOT_NULL(d);
    d = strchr(d + 6, '"');
    ASSERT_UINT_EQ(strcspn(d + 1, "\""), 6144);
    ib_free(a);
    ib_free(b);
    ib_free(la);
    ib_free(lb);
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --variant short --output-dir bad"), 2);
    char *e = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "unknown variant 'short'");
    ib_free(e);
}
