/*
 * test_cuda_devices.c - the --devices list (src/harness/devices.c): "all",
 * explicit lists, every kind of bad entry (exit 2 through the CLI), host
 * backends ignoring the list, and "all" on the cuda backend without a GPU
 * failing with the backend's reason.
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "harness/benchmark.h"
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
    /* the first device describes itself, for the per-device batch defaults */
    ASSERT_TRUE(d.have_info);
    ASSERT_INT_GT(d.info.compute_units, 0);
    ASSERT_TRUE(d.info.memory_bytes > ((size_t)1 << 30));
    ASSERT_TRUE(d.info.name[0] != '\0');
    printf("# device 0: %s, %d SMs, %zu MiB\n", d.info.name, d.info.compute_units,
           d.info.memory_bytes >> 20);
}

/* Host backends describe no device: their batches stay the entries' host defaults. */
TEST(cuda_devices_host_backends_have_no_device_info)
{
    ib_device_list d;
    bool host = false;
    ib_err err;
    ASSERT_OK_ERR(ib_devices_resolve("cpu", NULL, &d, &host, &err), &err);
    ASSERT_TRUE(host);
    ASSERT_FALSE(d.have_info);
    ib_backend *b = NULL;
    ASSERT_OK_ERR(ib_backend_create("reference", NULL, &b, &err), &err);
    ib_backend_device_info info;
    info.compute_units = 7;
    ASSERT_FALSE(ib_backend_device_info_get(b, &info));
    ASSERT_INT_EQ(info.compute_units, 0); /* zeroed */
    ib_backend_destroy(b);
    ASSERT_FALSE(ib_backend_device_info_get(NULL, &info));
}

/* issue 25: device batch defaults from the SM count, capped by memory, per scenario. */
TEST(cuda_devices_batch_defaults_follow_the_device)
{
    const ib_backend_device_info h200 = {"NVIDIA H200", (size_t)141 << 30, 132};
    const ib_backend_device_info a30 = {"NVIDIA A30", (size_t)24 << 30, 56};
    const ib_backend_device_info small = {"tiny", (size_t)512 << 20, 132};
    const ib_benchmark *rn = ib_benchmark_find("resnet50");
    const ib_benchmark *bert = ib_benchmark_find("bert-99");
    const ib_benchmark *ssd = ib_benchmark_find("ssd-resnet34");
    const ib_benchmark *unet = ib_benchmark_find("3d-unet-99");
    char why[256];
    /* 2 per SM: 264 -> 256 on the H200, 112 -> 64 on the A30 */
    ASSERT_INT_EQ(ib_bench_device_batch(rn, IB_LG_SCENARIO_OFFLINE, &h200, why, sizeof why), 256);
    ASSERT_STR_CONTAINS(why, "NVIDIA H200: 2 per SM x 132 SMs");
    ASSERT_NULL(strstr(why, "capped"));
    ASSERT_INT_EQ(ib_bench_device_batch(rn, IB_LG_SCENARIO_OFFLINE, &a30, NULL, 0), 64);
    /* Server takes smaller batches than Offline */
    int64_t srv = ib_bench_device_batch(rn, IB_LG_SCENARIO_SERVER, &h200, NULL, 0);
    ASSERT_INT_GT(srv, 0);
    ASSERT_INT_LT(srv, 256);
    ASSERT_INT_GT(ib_bench_device_batch(bert, IB_LG_SCENARIO_OFFLINE, &h200, NULL, 0), 8);
    /* memory caps it: 128 MiB for ResNet50 at 16 MiB a sample is 8 */
    ASSERT_INT_EQ(ib_bench_device_batch(rn, IB_LG_SCENARIO_OFFLINE, &small, why, sizeof why), 8);
    ASSERT_STR_CONTAINS(why, "capped by a quarter of the device memory");
    ASSERT_INT_EQ(ib_bench_device_batch(ssd, IB_LG_SCENARIO_OFFLINE, &small, NULL, 0), 1);
    /* no device default (3D U-Net), or no SM count: 0, the host default applies */
    ASSERT_INT_EQ(ib_bench_device_batch(unet, IB_LG_SCENARIO_OFFLINE, &h200, why, sizeof why), 0);
    ASSERT_STR_EQ(why, "");
    const ib_backend_device_info none = {"x", (size_t)1 << 30, 0};
    ASSERT_INT_EQ(ib_bench_device_batch(rn, IB_LG_SCENARIO_OFFLINE, &none, NULL, 0), 0);
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
