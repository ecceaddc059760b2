/*
 * test_check_parsers.c - the checker's file readers: the detail log (mllog), the accuracy
 * log (acclog, including truncated logs), accuracy.txt metrics (acctxt), SHA-256 and the
 * Python float formatting of the current verify scripts. Bad input: truncated, malformed,
 * oversized values, hostile nesting - each must give IB_EFORMAT with the line, never crash.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/acclog.h"
#include "compliance/acctxt.h"
#include "compliance/mllog.h"
#include "compliance/rules.h"
#include "compliance/sha256.h"
#include "compliance/verify_internal.h"
#include "test.h"

#define REC(key, val)                                                                              \
    ":::MLLOG {\"key\": \"" key "\", \"value\": " val ", \"time_ms\": 0.000001, \"namespace\": "  \
    "\"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", \"metadata\": {\"is_error\": false, " \
    "\"is_warning\": false, \"file\": \"x.cc\", \"line_no\": 1, \"pid\": 1, \"tid\": 1}}\n"
#define ERR_REC(key, val)                                                                          \
    ":::MLLOG {\"key\": \"" key "\", \"value\": " val ", \"time_ms\": 1.0, \"namespace\": "       \
    "\"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", \"metadata\": {\"is_error\": true, "  \
    "\"is_warning\": false, \"file\": \"x.cc\", \"line_no\": 1, \"pid\": 1, \"tid\": 1}}\n"

static ib_mllog *parse_ok(const char *text)
{
    ib_mllog *log = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_mllog_parse(text, strlen(text), "t.txt", &log, &err), &err);
    return log;
}

static void parse_fails(const char *text, const char *needle)
{
    ib_mllog *log = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_STATUS(ib_mllog_parse(text, strlen(text), "t.txt", &log, &err), IB_EFORMAT);
    ASSERT_NULL(log);
    ASSERT_STR_CONTAINS(err.msg, needle);
}

TEST(check_mllog_values_and_big_seeds)
{
    const char *t = REC("loadgen_version", "\"1.1 @ b1452de454\"")
        REC("effective_schedule_rng_seed", "10051496985653635065")
        REC("effective_qsl_rng_seed", "1624344308455410291") REC("result_validity", "\"VALID\"")
        REC("effective_target_qps", "91250") REC("requested_server_target_latency_percentile", "0.99")
        REC("requested_server_coalesce_queries", "true") REC("loaded_qsl_set", "[1,2,3]")
        REC("loadgen_file_sha1", "{\"/a\":\"b\"}") REC("result_validity", "\"INVALID\"");
    ib_mllog *log = parse_ok(t);
    ASSERT_UINT_EQ(ib_mllog_count(log), 10);
    uint64_t u;
    ASSERT_TRUE(ib_mllog_get_u64(log, "effective_schedule_rng_seed", &u));
    ASSERT_UINT_EQ(u, 10051496985653635065ull); /* above INT64_MAX, exact */
    ASSERT_TRUE(ib_mllog_get_u64(log, "effective_qsl_rng_seed", &u));
    ASSERT_UINT_EQ(u, 1624344308455410291ull);
    int64_t i;
    ASSERT_FALSE(ib_mllog_get_i64(log, "effective_schedule_rng_seed", &i));
    double d;
    ASSERT_TRUE(ib_mllog_get_double(log, "requested_server_target_latency_percentile", &d));
    ASSERT_DBL_EQ(d, 0.99);
    bool b;
    ASSERT_TRUE(ib_mllog_get_bool(log, "requested_server_coalesce_queries", &b));
    ASSERT_TRUE(b);
    /* the first record of a key wins, as in the official parser */
    ASSERT_STR_EQ(ib_mllog_get_str(log, "result_validity"), "VALID");
    ASSERT_STR_EQ(ib_mllog_get_str(log, "loadgen_version"), "1.1 @ b1452de454");
    ASSERT_NULL(ib_mllog_get_str(log, "effective_target_qps"));
    ASSERT_INT_EQ(ib_mllog_find(log, "loaded_qsl_set")->kind, IB_MLV_ARRAY);
    ASSERT_UINT_EQ(ib_mllog_find(log, "loaded_qsl_set")->n, 3);
    ASSERT_INT_EQ(ib_mllog_find(log, "loadgen_file_sha1")->kind, IB_MLV_OBJECT);
    ASSERT_UINT_EQ(ib_mllog_find(log, "result_validity")->line, 4);
    ASSERT_UINT_EQ(ib_mllog_num_errors(log), 0);
    ib_mllog_destroy(log);
}

TEST(check_mllog_errors_skipped_lines_and_bigint_in_strings)
{
    const char *t = REC("a", "1") "some compiler noise\n" ERR_REC("error_runtime", "\"boom\"")
        "\n" REC("s", "\"18446744073709551616 stays text\"") REC("neg", "-9223372036854775809")
            REC("max", "18446744073709551615");
    ib_mllog *log = parse_ok(t);
    ASSERT_UINT_EQ(ib_mllog_num_errors(log), 1);
    ASSERT_UINT_EQ(ib_mllog_skipped_lines(log), 2);
    ASSERT_STR_EQ(ib_mllog_get_str(log, "s"), "18446744073709551616 stays text");
    double d;
    ASSERT_TRUE(ib_mllog_get_double(log, "neg", &d)); /* too small for int64: a real */
    ASSERT_DBL_LT(d, -9.2e18);
    uint64_t u;
    ASSERT_TRUE(ib_mllog_get_u64(log, "max", &u));
    ASSERT_UINT_EQ(u, UINT64_MAX);
    char buf[64];
    ib_mllog_value_text(ib_mllog_find(log, "error_runtime"), buf, sizeof buf);
    ASSERT_STR_EQ(buf, "\"boom\"");
    ib_mllog_destroy(log);
}

TEST(check_mllog_bad_input)
{
    parse_fails("", "empty");
    parse_fails("hello\n" REC("a", "1"), "first line");
    /* a line cut in the middle (a truncated file) */
    const char *full = REC("a", "1") REC("b", "2");
    char cut[600];
    size_t n = strlen(REC("a", "1")) + 40;
    memcpy(cut, full, n);
    cut[n] = '\0';
    parse_fails(cut, "t.txt:2: invalid JSON");
    parse_fails(REC("a", "1") ":::MLLOG {\"key\": \"x\", \"value\": 1}\n", "t.txt:2:");
    parse_fails(REC("a", "1") ":::MLLOG [1, 2]\n", "not a JSON object");
    parse_fails(":::MLLOG {\"value\": 1, \"metadata\": {\"is_error\": false, \"is_warning\": false}}",
                "no string \"key\"");
    parse_fails(":::MLLOG {\"key\": \"k\", \"metadata\": {\"is_error\": false, \"is_warning\": false}}",
                "no \"value\"");
    parse_fails(":::MLLOG {\"key\": \"k\", \"value\": 1, \"metadata\": {\"is_error\": 0, "
                "\"is_warning\": false}}",
                "is_error");
    parse_fails(REC("a", "1") ":::MLLOG {\"key\": \"k\", \"value\": 1} trailing\n", "t.txt:2:");
    parse_fails(":::MLLOG {\"key\": \"\xff\xfe\", \"value\": 1}", "UTF-8");
    parse_fails(":::MLLOG {\"key\": \"k\\u0000\", \"value\": 18446744073709551615, \"metadata\": "
                "{\"is_error\": false, \"is_warning\": false}}",
                "\\u0000");
    /* huge integers beyond uint64 become reals instead of failing or wrapping */
    ib_mllog *log = parse_ok(REC("h", "123456789012345678901234567890"));
    uint64_t u;
    double d;
    ASSERT_FALSE(ib_mllog_get_u64(log, "h", &u));
    ASSERT_TRUE(ib_mllog_get_double(log, "h", &d));
    ASSERT_NEAR(d, 1.2345678901234568e29, 1e15);
    ib_mllog_destroy(log);
    /* deep nesting is jansson's problem, it must not crash */
    char deep[5000];
    size_t k = (size_t)snprintf(deep, sizeof deep, ":::MLLOG {\"key\": \"k\", \"value\": ");
    for (int i = 0; i < 2000; i++)
        deep[k++] = '[';
    deep[k] = '\0';
    ib_mllog *d2 = NULL;
    ib_err err;
    ASSERT_STATUS(ib_mllog_parse(deep, k, "deep.txt", &d2, &err), IB_EFORMAT);
}

TEST(check_mllog_official_logs)
{
    char p[4096];
    snprintf(p, sizeof p,
             "%s/data/mlperf-inference-v1.1/closed/Dell/results/R7525_A100-PCIE-40GBx3_TRT/"
             "resnet50/Server/performance/run_1/mlperf_log_detail.txt",
             ib_test_shared_dir());
    if (!ib_path_exists(p))
        TEST_SKIP("../shared/data (Dell v1.1 results) is absent");
    ib_mllog *log;
    ib_err err;
    ASSERT_OK_ERR(ib_mllog_load(p, &log, &err), &err);
    ASSERT_UINT_EQ(ib_mllog_count(log), 89);
    uint64_t u;
    ASSERT_TRUE(ib_mllog_get_u64(log, "effective_schedule_rng_seed", &u));
    ASSERT_UINT_EQ(u, 10051496985653635065ull);
    double d;
    ASSERT_TRUE(ib_mllog_get_double(log, "result_scheduled_samples_per_sec", &d));
    ASSERT_DBL_EQ(d, 91264.2);
    ASSERT_TRUE(ib_mllog_get_u64(log, "result_99.00_percentile_latency_ns", &u));
    ASSERT_UINT_EQ(u, 13110841);
    ib_mllog_destroy(log);
    /* a current-format golden log (early stopping keys, v6.1 seeds) */
    snprintf(p, sizeof p, "%s/golden/03_server_resnet50_v61/mlperf_log_detail.txt",
             ib_test_shared_dir());
    if (!ib_path_exists(p))
        return;
    ASSERT_OK_ERR(ib_mllog_load(p, &log, &err), &err);
    ASSERT_TRUE(ib_mllog_get_u64(log, "effective_schedule_rng_seed", &u));
    ASSERT_UINT_EQ(u, 16159082839903944936ull);
    bool b;
    ASSERT_TRUE(ib_mllog_get_bool(log, "early_stopping_met", &b));
    ib_mllog_destroy(log);
}

/* ---- accuracy log ------------------------------------------------------------------------ */

static ib_acclog *acc_ok(const char *t)
{
    ib_acclog *log = NULL;
    ib_err err;
    ASSERT_OK_ERR(ib_acclog_parse(t, strlen(t), "a.json", &log, &err), &err);
    return log;
}

static void acc_fails(const char *t, const char *needle)
{
    ib_acclog *log = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_STATUS(ib_acclog_parse(t, strlen(t), "a.json", &log, &err), IB_EFORMAT);
    ASSERT_NULL(log);
    ASSERT_STR_CONTAINS(err.msg, needle);
}

TEST(check_acclog_parse)
{
    ib_acclog *log = acc_ok("[\n{ \"seq_id\" : 0, \"qsl_idx\" : 2, \"data\" : \"0A0B0C0D\" },\n"
                            "{ \"seq_id\" : 1, \"qsl_idx\" : 18446744073709551615, \"data\" : \"\", "
                            "\"token_count\" : 3, \"x\" : {\"y\": [1, {\"z\": null}], \"w\": \"}\"} }\n]\n");
    ASSERT_UINT_EQ(ib_acclog_count(log), 2);
    ASSERT_FALSE(ib_acclog_truncated(log));
    const ib_acclog_entry *e = ib_acclog_at(log, 0);
    ASSERT_UINT_EQ(e->qsl_idx, 2);
    ASSERT_UINT_EQ(e->data_len, 8);
    ASSERT_MEM_EQ(e->data, "0A0B0C0D", 8);
    ASSERT_UINT_EQ(e->line, 2);
    e = ib_acclog_at(log, 1);
    ASSERT_UINT_EQ(e->qsl_idx, UINT64_MAX);
    ASSERT_UINT_EQ(e->seq_id, 1);
    ASSERT_UINT_EQ(e->data_len, 0);
    ib_acclog_destroy(log);
    log = acc_ok("[\n]\n"); /* a performance run without sampling: 4 bytes */
    ASSERT_UINT_EQ(ib_acclog_count(log), 0);
    ib_acclog_destroy(log);
}

TEST(check_acclog_bad_input)
{
    acc_fails("", "does not start with '['");
    acc_fails("[\n{ \"qsl_idx\" : 1, \"data\" : \"0A\" },\n", "ends before the closing");
    acc_fails("[{ \"qsl_idx\" : 1, \"data\" : \"0A0\" }]", "odd number");
    acc_fails("[{ \"qsl_idx\" : 1, \"data\" : \"0G\" }]", "not a hex digit");
    acc_fails("[{ \"seq_id\" : 1, \"data\" : \"0A\" }]", "without \"qsl_idx\"");
    acc_fails("[{ \"qsl_idx\" : 1 }]", "without \"data\"");
    acc_fails("[{ \"qsl_idx\" : -1, \"data\" : \"\" }]", "non-negative");
    acc_fails("[{ \"qsl_idx\" : 1.5, \"data\" : \"\" }]", "non-negative");
    acc_fails("[{ \"qsl_idx\" : 18446744073709551616, \"data\" : \"\" }]", "non-negative");
    acc_fails("[{ \"qsl_idx\" : 1, \"data\" : \"\" }] junk", "extra data");
    acc_fails("[{ \"qsl_idx\" : 1, \"data\" : \"\\u0041\" }]", "escape");
    acc_fails("[{ \"qsl_idx\" : 1, \"data\" : \"00\", }]", "expected a string");
    acc_fails("[\n\n{ \"qsl_idx\" : 1, \"data\" : \"00\" \"x\" }]", "a.json:3:");
    /* nesting deeper than the skipper's stack is an error, not a crash */
    char deep[2000];
    size_t k = (size_t)snprintf(deep, sizeof deep, "[{ \"qsl_idx\" : 1, \"data\" : \"\", \"n\" : ");
    for (int i = 0; i < 300; i++)
        deep[k++] = '[';
    deep[k] = '\0';
    acc_fails(deep, "256 levels");
}

TEST(check_acclog_truncated)
{
    /* build a log, truncate it the way truncate_accuracy_log.py does */
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_strbuf_puts(&sb, "[\n");
    for (int i = 0; i < 1000; i++)
        ib_strbuf_printf(&sb, "%s{ \"seq_id\" : %d, \"qsl_idx\" : %d, \"data\" : \"%08X\" }",
                         i ? ",\n" : "", i, (i * 7919) % 1000, i);
    ib_strbuf_puts(&sb, "\n]\n");
    ASSERT_UINT_GE(sb.len, 3 * IB_ACCLOG_VIEWABLE);
    char t[IB_ACCLOG_VIEWABLE * 2 + 16];
    memcpy(t, sb.data, IB_ACCLOG_VIEWABLE);
    memcpy(t + IB_ACCLOG_VIEWABLE, IB_ACCLOG_TRUNC_MARK, 7);
    memcpy(t + IB_ACCLOG_VIEWABLE + 7, sb.data + sb.len - IB_ACCLOG_VIEWABLE, IB_ACCLOG_VIEWABLE);
    size_t tn = 2 * IB_ACCLOG_VIEWABLE + 7;
    ASSERT_TRUE(ib_acclog_text_is_truncated(t, tn));
    ib_acclog *log;
    ib_err err;
    ASSERT_OK_ERR(ib_acclog_parse(t, tn, "trunc.json", &log, &err), &err);
    ASSERT_TRUE(ib_acclog_truncated(log));
    /* every recovered entry is a complete, correct line of the original */
    size_t n = ib_acclog_count(log);
    ASSERT_UINT_GE(n, 100);
    ASSERT_UINT_LE(n, 160);
    for (size_t i = 0; i < n; i++) {
        const ib_acclog_entry *e = ib_acclog_at(log, i);
        ASSERT_UINT_EQ(e->qsl_idx, (e->seq_id * 7919) % 1000);
        char want[9];
        snprintf(want, sizeof want, "%08X", (unsigned)e->seq_id);
        ASSERT_MEM_EQ(e->data, want, 8);
    }
    ASSERT_UINT_EQ(ib_acclog_at(log, 0)->seq_id, 0);
    ASSERT_UINT_EQ(ib_acclog_at(log, 0)->line, 2);
    ASSERT_UINT_EQ(ib_acclog_at(log, 5)->line, 7);
    ASSERT_UINT_EQ(ib_acclog_at(log, n - 1)->seq_id, 999);
    ib_acclog_destroy(log);
    ib_strbuf_deinit(&sb);
    /* the marker in a large file is not a truncated log, just a broken one */
    ASSERT_FALSE(ib_acclog_text_is_truncated("[\n\n...\n\n]", 11000));
}

/* ---- accuracy.txt, sha256, float formatting ---------------------------------------------- */

static ib_acctxt txt(enum ib_check_version v, enum ib_acc_metric m, const char *t)
{
    ib_acctxt out;
    ib_err err;
    ASSERT_OK_ERR(ib_acctxt_parse(t, strlen(t), ib_rules_get(v), m, &out, &err), &err);
    return out;
}

TEST(check_acctxt_metrics)
{
    ib_acctxt a = txt(IB_CHECK_V1_1, IB_ACC_ACC,
                      "accuracy=76.040%, good=38020, total=50000\nhash=af7b309f\n");
    ASSERT_TRUE(a.has_value && a.has_hash);
    ASSERT_STR_EQ(a.value_text, "76.040");
    ASSERT_DBL_EQ(a.value, 76.04);
    ASSERT_STR_EQ(a.hash, "af7b309f");
    a = txt(IB_CHECK_V1_1, IB_ACC_F1,
            "{\"exact_match\": 83.11258278145695, \"f1\": 90.38529083707651}\nReading...\n");
    ASSERT_STR_EQ(a.value_text, "90.38529083707651");
    ASSERT_FALSE(a.has_hash);
    a = txt(IB_CHECK_V1_1, IB_ACC_WER,
            "Dataset loaded\nWord Error Rate: 7.4454891880312974%, accuracy=92.5545108119687%\n");
    ASSERT_STR_EQ(a.value_text, "92.5545108119687");
    a = txt(IB_CHECK_V1_1, IB_ACC_AUC, "AUC=80.185%, accuracy=96.608%, good=8\n");
    ASSERT_STR_EQ(a.value_text, "80.185");
    a = txt(IB_CHECK_V1_1, IB_ACC_MAP, " Average Precision = 0.201\nmAP=20.117%\n");
    ASSERT_STR_EQ(a.value_text, "20.117");
    a = txt(IB_CHECK_V1_1, IB_ACC_DICE,
            "Accuracy: mean = 0.85407, whole tumor = 0.9142, tumor core = 0.8691\n");
    ASSERT_STR_EQ(a.value_text, "0.85407");
    /* re.match anchors at the line start; the v1.1 pattern wants no space after { */
    a = txt(IB_CHECK_V1_1, IB_ACC_ACC, "top-1 accuracy=76.040%\n");
    ASSERT_FALSE(a.has_value);
    a = txt(IB_CHECK_V1_1, IB_ACC_F1, "{'exact_match': 83.1, 'f1': 90.3}\n");
    ASSERT_FALSE(a.has_value);
    a = txt(IB_CHECK_CURRENT, IB_ACC_F1, "{'exact_match': 83.1, 'f1': 90.3}\n");
    ASSERT_STR_EQ(a.value_text, "90.3");
    a = txt(IB_CHECK_CURRENT, IB_ACC_ACC, "{\"accuracy\": 76.1, \"good\": 3}\n");
    ASSERT_STR_EQ(a.value_text, "76.1");
    /* the hash line must be alone on its line; a bad number is flagged, not crashed on */
    a = txt(IB_CHECK_V1_1, IB_ACC_ACC, "accuracy=1.2.3%\nhash=abc def\n");
    ASSERT_TRUE(a.has_value && a.bad_number);
    ASSERT_FALSE(a.has_hash);
    /* the loop stops once value and hash are both seen (official break) */
    a = txt(IB_CHECK_V1_1, IB_ACC_ACC, "accuracy=1%\nhash=h1\naccuracy=2%\n");
    ASSERT_STR_EQ(a.value_text, "1");
    a = txt(IB_CHECK_V1_1, IB_ACC_ACC, "accuracy=1%\naccuracy=2%\nhash=h1\n");
    ASSERT_STR_EQ(a.value_text, "2");
    char nul[] = "accuracy=\0%\nhash=x\n";
    ib_acctxt o;
    ib_err err;
    ASSERT_OK(ib_acctxt_parse(nul, sizeof nul - 1, ib_rules_get(IB_CHECK_V1_1), IB_ACC_ACC, &o,
                              &err));
    ASSERT_FALSE(o.has_value);
    ASSERT_TRUE(o.has_hash);
}

TEST(check_sha256_vectors)
{
    char hex[65];
    ib_sha256_hex("", 0, hex);
    ASSERT_STR_EQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ib_sha256_hex("abc", 3, hex);
    ASSERT_STR_EQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ib_sha256_hex(two, strlen(two), hex);
    ASSERT_STR_EQ(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* one million 'a', fed in odd-sized pieces */
    ib_sha256 s;
    uint8_t d[32], buf[997];
    memset(buf, 'a', sizeof buf);
    ib_sha256_init(&s);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof buf ? left : sizeof buf;
        ib_sha256_update(&s, buf, n);
        left -= n;
    }
    ib_sha256_final(&s, d);
    ASSERT_UINT_EQ(d[0], 0xcd);
    ASSERT_UINT_EQ(d[31], 0xd0);
    /* a file: the hash line of a Dell accuracy.txt is the SHA-256 of the full log, which is
     * not shipped; check the file helper on a file written here instead */
    ASSERT_OK(ib_file_write_all("h.bin", "abc", 3, NULL));
    ib_err err;
    ASSERT_OK_ERR(ib_sha256_file_hex("h.bin", hex, &err), &err);
    ASSERT_STR_EQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ASSERT_STATUS(ib_sha256_file_hex("nope.bin", hex, &err), IB_ENOTFOUND);
}

TEST(check_rules_tables)
{
    const ib_rules *r = ib_rules_get(IB_CHECK_V1_1);
    const char *off;
    const ib_rules_model *m = ib_rules_model_find(r, "resnet50", &off);
    ASSERT_NOT_NULL(m);
    ASSERT_STR_EQ(off, "resnet");
    ASSERT_DBL_EQ(m->acc_target, 76.46 * 0.99);
    ASSERT_UINT_EQ(m->perf_sample_count, 1024);
    ASSERT_UINT_EQ(m->server_latency_ns, 15000000);
    m = ib_rules_model_find(r, "ssd-resnet34", &off);
    ASSERT_STR_EQ(off, "ssd-large");
    ASSERT_UINT_EQ(m->perf_sample_count, 64);
    ASSERT_TRUE(m->tests & IB_CT_TEST04A);
    m = ib_rules_model_find(r, "bert-99.9", &off);
    ASSERT_FALSE(m->tests & IB_CT_TEST04A); /* variable-size inputs: no TEST04 */
    ASSERT_DBL_EQ(ib_rules_fallback_delta(m), 0.1);
    ASSERT_NULL(ib_rules_model_find(r, "gptj-99", &off));
    ASSERT_STR_EQ(ib_rules_seed_round(1624344308455410291ull, 517984244576520566ull,
                                      10051496985653635065ull),
                  "v1.1");
    ASSERT_NULL(ib_rules_seed_round(1, 2, 3));
    enum ib_check_version v;
    ASSERT_OK(ib_check_version_parse("current", &v));
    ASSERT_INT_EQ(v, IB_CHECK_CURRENT);
    ASSERT_OK(ib_check_version_parse("v1.1", &v));
    ASSERT_INT_EQ(v, IB_CHECK_V1_1);
    ASSERT_STATUS(ib_check_version_parse("v0.5", &v), IB_EINVAL);
    r = ib_rules_get(IB_CHECK_CURRENT);
    m = ib_rules_model_find(r, "3d-unet-99", &off);
    ASSERT_UINT_EQ(m->perf_sample_count, 43);
    ASSERT_TRUE(m->equal_issue);
    m = ib_rules_model_find(r, "llama3.1-8b", &off);
    ASSERT_FALSE(m->supported);
}
