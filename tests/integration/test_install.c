/*
 * test_install.c - `make install` into a temporary prefix: the CLI, the libraries, the public
 * headers, the man pages and inferbench.pc land where they should, and a small C program
 * (a SUT author's first program: the load generator driving an in-process SUT) builds with
 * nothing but `pkg-config --cflags --libs inferbench` and runs against the installed library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "test.h"

static const char k_prog[] =
    "#include <inferbench/loadgen.h>\n"
    "#include <inferbench/version.h>\n"
    "#include <stdio.h>\n"
    "static void issue(void *u, ib_lg_test *t, const ib_lg_sample *s, size_t n) {\n"
    "    (void)u;\n"
    "    for (size_t i = 0; i < n; i++) {\n"
    "        ib_lg_response r = {s[i].id, NULL, 0, 0};\n"
    "        ib_lg_samples_complete(t, &r, 1);\n"
    "    }\n"
    "}\n"
    "static int load(void *u, const ib_lg_sample_index *i, size_t n) {\n"
    "    (void)u; (void)i; (void)n; return IB_OK;\n"
    "}\n"
    "int main(void) {\n"
    "    ib_lg_settings s;\n"
    "    ib_lg_settings_defaults(&s);\n"
    "    s.scenario = IB_LG_SCENARIO_OFFLINE;\n"
    "    s.min_duration_ms = 0;\n"
    "    s.min_query_count = 100;\n"
    "    ib_lg_log_settings log;\n"
    "    ib_lg_log_settings_defaults(&log);\n"
    "    log.outdir = \"logs\";\n"
    "    ib_lg_sut sut = {NULL, \"MySUT\", issue, NULL};\n"
    "    ib_lg_qsl qsl = {NULL, \"MyQSL\", 100, 100, load, load};\n"
    "    ib_lg_test *t = NULL;\n"
    "    ib_lg_result r;\n"
    "    ib_err err;\n"
    "    if (ib_lg_test_create(&s, &log, NULL, &t, &err) ||\n"
    "        ib_lg_test_run(t, &sut, &qsl, &r, &err)) {\n"
    "        printf(\"error: %s\\n\", err.msg);\n"
    "        return 1;\n"
    "    }\n"
    "    ib_lg_test_destroy(t);\n"
    "    printf(\"inferbench %s: %llu samples\\n\", ib_version_string(),\n"
    "           (unsigned long long)r.sample_count);\n"
    "    return 0;\n"
    "}\n";

TEST_TIMEOUT(install_prefix_man_pages_and_pkg_config, 300)
{
    const char *args = getenv("IB_BUILD_ARGS");
    if (!args)
        TEST_SKIP("IB_BUILD_ARGS is not set (run through make check)");
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s/prefix", ib_test_tmpdir());
    ASSERT_INT_EQ(ib_test_system("make -s -C '%s' %s install PREFIX='%s' > make.txt 2>&1",
                                 ib_test_src_dir(), args, prefix),
                  0);
    static const char *const files[] = {
        "bin/inferbench",           "lib/libinferbench.so",         "lib/libinferbench.a",
        "lib/pkgconfig/inferbench.pc", "include/inferbench/loadgen.h",
        "share/man/man1/inferbench.1", "share/man/man1/inferbench-run.1",
        "share/man/man1/inferbench-accuracy.1", "share/man/man1/inferbench-report.1"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", prefix, files[i]);
        if (!ib_path_exists(p))
            ib_test_fail(__FILE__, __LINE__, "make install left out %s", files[i]);
    }
    /* the man page carries the command's own options */
    char man[4400];
    snprintf(man, sizeof man, "%s/share/man/man1/inferbench-run.1", prefix);
    char *m = ib_test_slurp(man);
    ASSERT_STR_CONTAINS(m, ".TH \"INFERBENCH-RUN\" 1");
    ASSERT_STR_CONTAINS(m, "\\-\\-benchmark ID");
    ib_free(m);
    /* a program built through pkg-config alone, run against the installed library */
    ASSERT_OK(ib_file_write_all("prog.c", k_prog, sizeof k_prog - 1, NULL));
    ASSERT_INT_EQ(ib_test_system("PKG_CONFIG_PATH='%s/lib/pkgconfig' && export PKG_CONFIG_PATH && "
                                 "cc -std=c11 prog.c $(pkg-config --cflags --libs inferbench) "
                                 "-o prog > cc.txt 2>&1",
                                 prefix),
                  0);
    ASSERT_INT_EQ(ib_test_system("LD_LIBRARY_PATH='%s/lib' ./prog > prog.txt 2>&1", prefix), 0);
    char *out = ib_test_slurp("prog.txt");
    ASSERT_STR_CONTAINS(out, "inferbench 0.");
    ASSERT_STR_CONTAINS(out, ": 100 samples");
    ib_free(out);
    ASSERT_TRUE(ib_path_exists("logs/mlperf_log_summary.txt"));
    /* the installed CLI runs too */
    ASSERT_INT_EQ(ib_test_system("LD_LIBRARY_PATH='%s/lib' '%s/bin/inferbench' --version > v.txt",
                                 prefix, prefix),
                  0);
}
