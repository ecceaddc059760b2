/*
 * test_replay.c - issue 12: `replay` over the shared Dell v1.1 tree (every
 * results and compliance run: libstdc++10 sampling) and the golden cases
 * (official LoadGen built with GCC 12: libstdc++11), the fast path against
 * the full series walk, and bad input (missing key, unknown LoadGen version,
 * truncated detail log, broken accuracy log, a changed loaded_qsl_set).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/replay.h"
#include "inferbench/base.h"
#include "test.h"

#define DELL "data/mlperf-inference-v1.1/closed/Dell"

static const char *shared_path(const char *rel)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", ib_test_shared_dir(), rel);
    if (!ib_path_is_dir(p)) TEST_SKIP("shared data absent");
    return p;
}

typedef struct counts {
    size_t runs, only10, both, failed;
} counts;

static void walk(const char *dir, counts *c, int depth)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/mlperf_log_detail.txt", dir);
    if (ib_path_exists(p)) {
        ib_replay_result r;
        ib_err err;
        ib_err_clear(&err);
        int rc = ib_replay_dir(dir, &r, &err);
        c->runs++;
        if (rc != IB_OK || !r.modes[1].reproduced) {
            c->failed++;
            fprintf(stderr, "not reproduced with libstdc++10: %s: %s %s\n", dir, err.msg,
                    rc ? "" : r.modes[1].first_diff);
            return;
        }
        if (r.modes[0].reproduced)
            c->both++;
        else
            c->only10++;
        return;
    }
    if (depth > 12) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (ib_path_is_dir(p)) walk(p, c, depth + 1);
    }
    closedir(d);
}

TEST_TIMEOUT(replay_dell_tree_libstdcxx10, 300)
{
    char root[4096];
    snprintf(root, sizeof root, "%s", shared_path(DELL));
    counts c = {0};
    char p[4096];
    snprintf(p, sizeof p, "%s/results", root);
    walk(p, &c, 0);
    snprintf(p, sizeof p, "%s/compliance", root);
    walk(p, &c, 0);
    ASSERT_UINT_EQ(c.runs, 152);
    ASSERT_UINT_EQ(c.failed, 0);
    /* Only the tiny 3d-unet QSL (42 samples) cannot tell the two modes apart. */
    ASSERT_UINT_EQ(c.both, 24);
    ASSERT_UINT_EQ(c.only10, 128);
}

TEST(replay_golden_cases_libstdcxx11)
{
    const char *g = shared_path("golden");
    DIR *d = opendir(g);
    ASSERT_NOT_NULL(d);
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d))) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", g, de->d_name);
        char det[4200];
        snprintf(det, sizeof det, "%s/mlperf_log_detail.txt", p);
        if (de->d_name[0] == '.' || !ib_path_exists(det)) continue;
        ib_replay_result r;
        ib_err err;
        ib_err_clear(&err);
        ASSERT_OK_ERR(ib_replay_dir(p, &r, &err), &err);
        if (!r.modes[0].reproduced)
            ib_test_fail(__FILE__, __LINE__, "%s: %s", de->d_name, r.modes[0].first_diff);
        ASSERT_TRUE(r.reproduced);
        ASSERT_INT_EQ(r.mode, IB_LG_RNG_LIBSTDCXX11);
        n++;
    }
    closedir(d);
    ASSERT_UINT_EQ(n, 16);
}

static void fast_vs_series(const char *rel)
{
    const char *dir = shared_path(rel);
    ib_replay_result a, b;
    ib_err err;
    ASSERT_OK_ERR(ib_replay_dir_ex(dir, true, &a, &err), &err);
    ASSERT_OK_ERR(ib_replay_dir_ex(dir, false, &b, &err), &err);
    for (int m = 0; m < IB_REPLAY_NMODES; m++) {
        ASSERT_INT_EQ(a.modes[m].reproduced, b.modes[m].reproduced);
        ASSERT_UINT_EQ(a.modes[m].pairs_compared, b.modes[m].pairs_compared);
        ASSERT_UINT_EQ(a.modes[m].pairs_differ, b.modes[m].pairs_differ);
    }
    ASSERT_TRUE(a.modes[1].reproduced);
    ASSERT_FALSE(a.modes[0].reproduced);
    ASSERT_UINT_GE(a.modes[1].pairs_compared, 1);
}

TEST(replay_fast_path_matches_series)
{
    fast_vs_series(DELL "/compliance/R7525_A30x3_TRT/bert-99.9/Server/TEST01/performance/run_1");
    fast_vs_series(DELL "/compliance/R7525_A30x3_TRT/bert-99/Offline/TEST01/performance/run_1");
}

/* A copy of a real run folder with its detail log edited by `edit`. */
static const char *RUN =
    DELL "/results/R7525_A100-PCIE-40GBx3_TRT/resnet50/Server/performance/run_1";

static char *copy_run(const char *name, char **text, size_t *len)
{
    const char *src = shared_path(RUN);
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", ib_test_tmpdir(), name);
    ib_err err;
    ASSERT_OK_ERR(ib_mkdirs(dir, &err), &err);
    char p[4200];
    snprintf(p, sizeof p, "%s/mlperf_log_detail.txt", src);
    ASSERT_OK_ERR(ib_file_read_all(p, 0, text, len, &err), &err);
    snprintf(p, sizeof p, "%s/mlperf_log_accuracy.json", dir);
    ASSERT_OK_ERR(ib_file_write_all(p, "[\n]\n", 4, &err), &err);
    return dir;
}

static void write_detail(const char *dir, const char *text, size_t len)
{
    char p[4200];
    ib_err err;
    snprintf(p, sizeof p, "%s/mlperf_log_detail.txt", dir);
    ASSERT_OK_ERR(ib_file_write_all(p, text, len, &err), &err);
}

/* Remove the line holding `needle`. */
static size_t drop_line(char *text, size_t len, const char *needle)
{
    char *at = strstr(text, needle);
    ASSERT_NOT_NULL(at);
    char *ls = at;
    while (ls > text && ls[-1] != '\n')
        ls--;
    char *le = strchr(at, '\n');
    ASSERT_NOT_NULL(le);
    le++;
    memmove(ls, le, (size_t)(text + len - le));
    return len - (size_t)(le - ls);
}

TEST(replay_bad_input_missing_key)
{
    char *text;
    size_t len;
    char *dir = copy_run("replay_missing", &text, &len);
    len = drop_line(text, len, "\"key\": \"effective_qsl_rng_seed\"");
    write_detail(dir, text, len);
    ib_free(text);
    ib_replay_result r;
    ib_err err;
    ASSERT_INT_EQ(ib_replay_dir(dir, &r, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "effective_qsl_rng_seed");
    ASSERT_STR_CONTAINS(err.msg, "missing");
}

TEST(replay_bad_input_unknown_version)
{
    char *text;
    size_t len;
    char *dir = copy_run("replay_version", &text, &len);
    char *v = strstr(text, "\"1.1 @ b1452de454\"");
    ASSERT_NOT_NULL(v);
    v[1] = '3'; /* "3.1 @ ..." */
    write_detail(dir, text, len);
    ib_free(text);
    ib_replay_result r;
    ib_err err;
    ASSERT_INT_EQ(ib_replay_dir(dir, &r, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "3.1 @ b1452de454");
}

TEST(replay_bad_input_truncated_detail_log)
{
    char *text;
    size_t len;
    char *dir = copy_run("replay_trunc", &text, &len);
    char *at = strstr(text, "\"key\": \"effective_target_qps\"");
    ASSERT_NOT_NULL(at);
    write_detail(dir, text, (size_t)(at - text) + 10);
    ib_free(text);
    ib_replay_result r;
    ib_err err;
    ASSERT_INT_EQ(ib_replay_dir(dir, &r, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "mlperf_log_detail.txt");
}

TEST(replay_bad_input_broken_accuracy_log)
{
    char *text;
    size_t len;
    char *dir = copy_run("replay_acc", &text, &len);
    write_detail(dir, text, len);
    ib_free(text);
    char p[4200];
    ib_err err;
    snprintf(p, sizeof p, "%s/mlperf_log_accuracy.json", dir);
    const char *bad = "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 1, \"data\" : \"00\" },\n{ \"seq_";
    ASSERT_OK_ERR(ib_file_write_all(p, bad, strlen(bad), &err), &err);
    ib_replay_result r;
    ASSERT_INT_EQ(ib_replay_dir(dir, &r, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "mlperf_log_accuracy.json");
}

TEST(replay_changed_set_not_reproduced)
{
    char *text;
    size_t len;
    char *dir = copy_run("replay_changed", &text, &len);
    char *at = strstr(text, "\"loaded_qsl_set\", \"value\": [1414,");
    ASSERT_NOT_NULL(at);
    at[strlen("\"loaded_qsl_set\", \"value\": [")] = '2'; /* 1414 -> 2414 */
    write_detail(dir, text, len);
    ib_free(text);
    ib_replay_result r;
    ib_err err;
    ASSERT_OK_ERR(ib_replay_dir(dir, &r, &err), &err);
    ASSERT_FALSE(r.reproduced);
    ASSERT_UINT_EQ(r.modes[1].sets_differ, 1);
    ASSERT_STR_CONTAINS(r.modes[1].first_diff, "entry 0 is 2414");
}

/* Our own runs record their sampling mode (detail log, result.json) and
 * replay under it. */
TEST_TIMEOUT(replay_own_run_roundtrip_cli, 120)
{
    static const char *const cases[2][3] = {{"libstdc++10", "v1.1", "own10"},
                                            {"libstdc++11", "current", "own11"}};
    for (int i = 0; i < 2; i++) {
        int rc =
            ib_test_system("%s/inferbench run --sut null --scenario server --mode performance "
                           "--min-duration-ms 200 --min-query-count 700 --target-qps 2000 "
                           "--total-samples 5000 --performance-samples 2000 --rng-compat %s "
                           "--rules %s --quiet --system s --output-dir %s > %s.txt",
                           ib_test_bin_dir(), cases[i][0], cases[i][1], cases[i][2], cases[i][2]);
        ASSERT_TRUE(rc == 0 || rc == 3);
        char p[256];
        snprintf(p, sizeof p, "%s/s/nullmodel/Server/performance/run_1/mlperf_log_detail.txt",
                 cases[i][2]);
        char *t = ib_test_read(p);
        ASSERT_NOT_NULL(t);
        char want[64];
        snprintf(want, sizeof want, "\"rng_compat\":\"%s\"", cases[i][0]);
        ASSERT_STR_CONTAINS(t, want);
        ib_free(t);
        snprintf(p, sizeof p, "%s/s/nullmodel/Server/performance/run_1/result.json",
                 cases[i][2]);
        t = ib_test_read(p);
        ASSERT_NOT_NULL(t);
        ASSERT_STR_CONTAINS(t, cases[i][0]);
        ib_free(t);
        ASSERT_INT_EQ(ib_test_system("%s/inferbench replay --json %s > %s.json", ib_test_bin_dir(),
                                     cases[i][2], cases[i][2]),
                      0);
        snprintf(p, sizeof p, "%s.json", cases[i][2]);
        t = ib_test_read(p);
        ASSERT_NOT_NULL(t);
        snprintf(want, sizeof want, "\"mode\": \"%s\"", cases[i][0]);
        ASSERT_STR_CONTAINS(t, want);
        ASSERT_STR_CONTAINS(t, "\"runs_reproduced\": 1");
        ib_free(t);
    }
}

TEST(replay_cli_exit_codes)
{
    const char *b = ib_test_bin_dir();
    ASSERT_INT_EQ(ib_test_system("%s/inferbench replay 2>/dev/null", b), 2);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench replay no_such_dir 2>/dev/null", b), 2);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench replay --help > /dev/null", b), 0);
    char *text;
    size_t len;
    char *dir = copy_run("replay_cli_changed", &text, &len);
    char *at = strstr(text, "\"loaded_qsl_set\", \"value\": [1414,");
    ASSERT_NOT_NULL(at);
    at[strlen("\"loaded_qsl_set\", \"value\": [")] = '2';
    write_detail(dir, text, len);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench replay %s > changed.txt", b, dir), 3);
    char *out = ib_test_read("changed.txt");
    ASSERT_NOT_NULL(out);
    ASSERT_STR_CONTAINS(out, "NOT reproduced");
    ib_free(out);
    len = drop_line(text, len, "\"key\": \"effective_schedule_rng_seed\"");
    write_detail(dir, text, len);
    ib_free(text);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench replay %s 2> missing.txt", b, dir), 2);
    out = ib_test_read("missing.txt");
    ASSERT_NOT_NULL(out);
    ASSERT_STR_CONTAINS(out, "effective_schedule_rng_seed");
    ib_free(out);
}
