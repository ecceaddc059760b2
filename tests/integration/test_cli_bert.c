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

static char *slurp(const char *path)
{
    char *s = NULL;
    size_t n = 0;
    ib_err err;
    ASSERT_OK_ERR(ib_file_read_all(path, 0, &s, &n, &err), &err);
    return s;
}

static int run(const char *args)
{
    return ib_test_system("%s/inferbench run --tiny --threads 1 --synth-samples 6 "
                          "--min-duration-ms 300 %s > out.txt 2> err.txt",
                          ib_test_bin_dir(), args);
}

TEST_TIMEOUT(bert_cli_accuracy_offline, 240)
{
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --mode accuracy --output-dir out"), 0);
    char *acc = slurp("out/vm-cpu/bert-99/Offline/accuracy/accuracy.txt");
    double em = -1, f1 = -1;
    ASSERT_INT_EQ(sscanf(acc, "{\"exact_match\": %lf, \"f1\": %lf}\nhash=", &em, &f1), 2);
    ASSERT_TRUE(em >= 0 && em <= f1 && f1 <= 100);
    /* 6 questions, 3 on the > 384-token paragraph: more features than questions */
    char *log = slurp("out/vm-cpu/bert-99/Offline/accuracy/mlperf_log_accuracy.json");
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
    char *sum = slurp("out/vm-cpu/bert-99.9/Server/performance/run_1/mlperf_log_summary.txt");
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
    char *e = slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "dev-v1.1.json:1:");
    ib_free(e);
    const char *json = "{\"data\":[{\"paragraphs\":[{\"context\":\"a a\",\"qas\":[{\"id\":\"i\","
                       "\"question\":\"a\",\"answers\":[]}]}]}]}";
    ASSERT_OK(ib_file_write_all("bad/dev-v1.1.json", json, strlen(json), &err));
    ASSERT_OK(ib_file_write_all("bad/vocab.txt", "[UNK]\n[SEP]\na\n", 13, &err));
    ASSERT_INT_EQ(run("--benchmark bert-99 --quick --data bad --output-dir out"), 2);
    e = slurp("err.txt");
    ASSERT_STR_CONTAINS(e, "[CLS]");
    ib_free(e);
}
