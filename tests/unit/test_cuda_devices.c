/*
 * test_cuda_devices.c - the --devices list (src/harness/devices.c): "all",
 * explicit lists, every kind of bad entry (exit 2 through the CLI), host
 * backends ignoring the list, and "all" on the cuda backend without a GPU
 * failing with the backend's reason.
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "harness/devices.h"
#include "test.h"

TEST(cuda_devices_parse_lists)
{
    ib_device_list d;
    ib_err err;
    ASSERT_OK_ERR(ib_devices_parse("all", &d, &err), &err);
    ASSERT_TRUE(d.all);
    ASSERT_INT_EQ(d.n, 0);
    ASSERT_OK_ERR(ib_devices_parse(NULL, &d, &err), &err);
    ASSERT_TRUE(d.all);
    ASSERT_OK_ERR(ib_devices_parse("0,1,2", &d, &err), &err);
    ASSERT_FALSE(d.all);
    ASSERT_INT_EQ(d.n, 3);
    ASSERT_INT_EQ(d.id[0], 0);
    ASSERT_INT_EQ(d.id[2], 2);
    ASSERT_OK_ERR(ib_devices_parse("7", &d, &err), &err);
    ASSERT_INT_EQ(d.n, 1);
    ASSERT_INT_EQ(d.id[0], 7);
    ASSERT_OK_ERR(ib_devices_parse("3,0,4095", &d, &err), &err);
    ASSERT_INT_EQ(d.id[0], 3);
    ASSERT_INT_EQ(d.id[2], 4095);
}

TEST(cuda_devices_parse_errors)
{
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"", "empty list"},
        {"0,,1", "entry 2 is empty"},
        {"0,1,", "entry 3 is empty"},
        {",0", "entry 1 is empty"},
        {"a", "entry 1 is not a device index"},
        {"0,x", "entry 2 is not a device index"},
        {"1a", "entry 1 is not a device index"},
        {"-1", "entry 1 is not a device index"},
        {" 0", "entry 1 is not a device index"},
        {"0, 1", "entry 2 is not a device index"},
        {"ALL", "entry 1 is not a device index"},
        {"4096", "larger than 4095"},
        {"99999999999999999999", "larger than 4095"},
        {"1,2,1", "device 1 is listed twice"},
    };
    for (size_t i = 0; i < IB_ARRAY_LEN(bad); i++) {
        ib_device_list d;
        ib_err err;
        ib_err_clear(&err);
        ASSERT_STATUS(ib_devices_parse(bad[i].spec, &d, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, bad[i].msg);
    }
    /* more than IB_DEVICES_MAX entries */
    char many[1024] = "";
    for (int i = 0; i <= IB_DEVICES_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i ? "," : "", i);
    ib_device_list d;
    ib_err err;
    ASSERT_STATUS(ib_devices_parse(many, &d, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "more than 64 devices");
}

TEST(cuda_devices_host_backend_ignores_list)
{
    ib_device_list d;
    bool host = false;
    ib_err err;
    ASSERT_OK_ERR(ib_devices_resolve("reference", "0,3", &d, &host, &err), &err);
    ASSERT_TRUE(host);
    ASSERT_INT_EQ(d.n, 0);
    ASSERT_OK_ERR(ib_devices_resolve("reference", "all", &d, &host, &err), &err);
    ASSERT_TRUE(host);
    /* a bad list is an error even where it would be ignored */
    ASSERT_STATUS(ib_devices_resolve("reference", "0,,3", &d, &host, &err), IB_EINVAL);
    ASSERT_STATUS(ib_devices_resolve("nosuch", "all", &d, &host, &err), IB_ENOTFOUND);
}

TEST(cuda_devices_all_on_cuda)
{
    const char *why = NULL;
    if (!ib_backend_find("cuda"))
        TEST_SKIP("built without CUDA");
    ib_device_list d;
    bool host = true;
    ib_err err;
    ib_err_clear(&err);
    if (!ib_backend_available("cuda", &why)) {
        ASSERT_STATUS(ib_devices_resolve("cuda", "all", &d, &host, &err), IB_EUNSUPPORTED);
        ASSERT_STR_CONTAINS(err.msg, "no CUDA device");
        TEST_SKIP(why); /* the error path was checked; the GPU path needs a GPU */
    }
    ASSERT_OK_ERR(ib_devices_resolve("cuda", "all", &d, &host, &err), &err);
    ASSERT_FALSE(host);
    ASSERT_INT_GE(d.n, 1);
    for (int i = 0; i < d.n; i++)
        ASSERT_INT_EQ(d.id[i], i);
    printf("# %d CUDA device(s)\n", d.n);
}

TEST_TIMEOUT(cuda_devices_cli_bad_list_exits_2, 60)
{
    int rc = ib_test_system("%s/inferbench run --benchmark resnet50 --tiny --quick --backend "
                            "reference --devices 0,,1 --output-dir out 2> err.txt",
                            ib_test_bin_dir());
    ASSERT_INT_EQ(rc, 2);
    FILE *f = fopen("err.txt", "r");
    ASSERT_NOT_NULL(f);
    char buf[2048] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    ASSERT_STR_CONTAINS(buf, "--devices '0,,1': entry 2 is empty");
}
