/*
 * test_report_html.c - report.html rendered by headless Chromium (Debian package
 * `chromium`, installed by `make deps`): the screenshot is not blank and every
 * chart written to charts/ is present in the DOM as an inline <svg> inside its
 * figure. Skips with the reason when /usr/bin/chromium is missing.
 */
#include <cairo.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "test.h"

#define CHROMIUM "/usr/bin/chromium"
#define CHROMIUM_FLAGS                                                                             \
    "--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "        \
    "--disable-component-update --disable-sync"

/* An inferbench tree with two of our own Server runs, so latency charts exist too. */
static void own_tree(const char *tmp)
{
    static const struct {
        const char *sys, *golden;
    } runs[] = {{"ours-a", "03_server_resnet50_v61"}, {"ours-b", "07_server_fisher_yates_p70000"}};
    for (size_t i = 0; i < 2; i++) {
        char d[4200];
        ib_err err;
        snprintf(d, sizeof d, "%s/own/%s/resnet50/Server/performance/run_1", tmp, runs[i].sys);
        ASSERT_OK(ib_mkdirs(d, &err));
        ASSERT_INT_EQ(ib_test_system("cp '%s/golden/%s/mlperf_log_detail.txt' '%s/'",
                                     ib_test_shared_dir(), runs[i].golden, d),
                      0);
    }
}

TEST_TIMEOUT(report_html_renders_in_chromium, 300)
{
    if (access(CHROMIUM, X_OK) != 0)
        TEST_SKIP("/usr/bin/chromium is not installed (make deps installs Debian's chromium)");
    const char *tmp = ib_test_tmpdir();
    char dell[4096];
    snprintf(dell, sizeof dell, "%s/data/mlperf-inference-v1.1/closed/Dell", ib_test_shared_dir());
    if (!ib_path_is_dir(dell)) TEST_SKIP("../shared/data/mlperf-inference-v1.1 not present");
    own_tree(tmp);
    int st = ib_test_system("'%s/inferbench' report '%s' '%s/own' -q --baseline R7525_A30x3_TRT "
                            "--prices '%s/examples/r7525-a100-vs-a30/prices.csv' --output '%s/out'",
                            ib_test_bin_dir(), dell, tmp, ib_test_src_dir(), tmp);
    ASSERT_INT_EQ(st, 0);
    st = ib_test_system("cd '%s' && timeout 120 " CHROMIUM " " CHROMIUM_FLAGS
                        " --user-data-dir='%s/profile1' --window-size=1280,6000"
                        " --screenshot='%s/shot.png' 'file://%s/out/report.html' 2>/dev/null",
                        tmp, tmp, tmp, tmp);
    ASSERT_INT_EQ(st, 0);
    st = ib_test_system("cd '%s' && timeout 120 " CHROMIUM " " CHROMIUM_FLAGS
                        " --user-data-dir='%s/profile2' --dump-dom 'file://%s/out/report.html'"
                        " > '%s/dom.html' 2>/dev/null",
                        tmp, tmp, tmp, tmp);
    ASSERT_INT_EQ(st, 0);

    /* the screenshot is not blank: many non-white pixels and many colours */
    char path[4200];
    snprintf(path, sizeof path, "%s/shot.png", tmp);
    cairo_surface_t *img = cairo_image_surface_create_from_png(path);
    ASSERT_INT_EQ(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
    int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
    int stride = cairo_image_surface_get_stride(img);
    cairo_surface_flush(img);
    const unsigned char *px = cairo_image_surface_get_data(img);
    size_t nonwhite = 0, colours = 0;
    static unsigned char seen[1 << 15];
    memset(seen, 0, sizeof seen);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t p = *(const uint32_t *)(const void *)(px + y * stride + x * 4) & 0xFFFFFF;
            nonwhite += p != 0xFFFFFF;
            uint32_t q = ((p >> 9) & 0x7C00) | ((p >> 6) & 0x3E0) | ((p >> 3) & 0x1F);
            if (!seen[q]) {
                seen[q] = 1;
                colours++;
            }
        }
    cairo_surface_destroy(img);
    ASSERT_INT_EQ(w, 1280);
    ASSERT_TRUE(nonwhite > (size_t)w * (size_t)h / 50);
    ASSERT_TRUE(colours > 20);

    /* every chart file has its figure with an inline svg in the rendered DOM */
    char *dom = NULL;
    ib_err err;
    snprintf(path, sizeof path, "%s/dom.html", tmp);
    ASSERT_OK(ib_file_read_all(path, 0, &dom, NULL, &err));
    ASSERT_STR_CONTAINS(dom, "registered and unregistered trademarks of MLCommons");
    snprintf(path, sizeof path, "%s/out/charts", tmp);
    DIR *d = opendir(path);
    ASSERT_NOT_NULL(d);
    struct dirent *e;
    size_t charts = 0;
    bool latency = false;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".svg")) continue;
        char id[512];
        snprintf(id, sizeof id, "id=\"chart-%.*s\"", (int)(n - 4), e->d_name);
        const char *fig = strstr(dom, id);
        if (!fig) ib_test_fail(__FILE__, __LINE__, "chart %s is missing from the DOM", e->d_name);
        const char *svg = strstr(fig, "<svg"), *end = strstr(fig, "</figure>");
        ASSERT_TRUE(svg && end && svg < end);
        latency = latency || !strncmp(e->d_name, "latency-", 8);
        charts++;
    }
    closedir(d);
    ASSERT_TRUE(latency);
    ASSERT_UINT_EQ(charts, 11); /* 9 benchmarks, perf/$, resnet50 Server latency */
    size_t figures = 0;
    for (const char *p = dom; (p = strstr(p, "<figure class=\"chart\"")); p++)
        figures++;
    ASSERT_UINT_EQ(figures, charts);
    ib_free(dom);
}
