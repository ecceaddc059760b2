/*
 * test_sysinfo.c - the system description JSON: every official field name present (and
 * nothing else), values read from a fake /proc, /sys and /etc tree and a fake nvidia-smi,
 * unknown fields left "" instead of guessed, and the real machine's file parsing as JSON;
 * the `inferbench sysinfo` command writes the same to a file.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "harness/sysinfo.h"
#include "test.h"

static const char *const g_official[] = {
    "division", "submitter", "status", "system_name", "system_type", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_processor_frequency", "host_processor_caches", "host_processor_interconnect",
    "host_memory_capacity", "host_memory_configuration", "host_storage_type",
    "host_storage_capacity", "host_networking", "host_networking_topology",
    "accelerators_per_node", "accelerator_model_name", "accelerator_frequency",
    "accelerator_host_interconnect", "accelerator_interconnect",
    "accelerator_interconnect_topology", "accelerator_memory_capacity",
    "accelerator_memory_configuration", "accelerator_on-chip_memories", "cooling", "hw_notes",
    "framework", "other_software_stack", "operating_system", "sw_notes",
};

static void put(const char *path, const char *text)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        ASSERT_OK(ib_mkdirs(dir, NULL));
    }
    ASSERT_OK(ib_file_write_all(path, text, strlen(text), NULL));
}

static json_t *collect(const ib_sysinfo_opts *o)
{
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_err err;
    ASSERT_OK_ERR(ib_sysinfo_json(o, &sb, NULL, &err), &err);
    json_error_t je;
    json_t *j = json_loads(ib_strbuf_cstr(&sb), 0, &je);
    if (!j)
        ib_test_fail(__FILE__, __LINE__, "not JSON: %s", je.text);
    ib_strbuf_deinit(&sb);
    return j;
}

static const char *str(json_t *j, const char *k)
{
    json_t *v = json_object_get(j, k);
    if (!json_is_string(v))
        ib_test_fail(__FILE__, __LINE__, "%s is not a string", k);
    return json_string_value(v);
}

static long long num(json_t *j, const char *k)
{
    json_t *v = json_object_get(j, k);
    if (!json_is_integer(v))
        ib_test_fail(__FILE__, __LINE__, "%s is not an integer", k);
    return json_integer_value(v);
}

TEST(sysinfo_fake_machine_fields)
{
    /* two sockets of 8 cores, 64 GiB, one NVMe and one SATA SSD, two GPUs */
    char cpu[4096] = "";
    for (int i = 0; i < 4; i++) {
        size_t u = strlen(cpu);
        snprintf(cpu + u, sizeof cpu - u,
                 "processor\t: %d\nmodel name\t: AMD EPYC 7763 64-Core Processor\n"
                 "physical id\t: %d\ncpu cores\t: 8\ncore id\t\t: %d\n\n",
                 i, i / 2, i % 2);
    }
    put("root/proc/cpuinfo", cpu);
    put("root/proc/meminfo", "MemTotal:       67108864 kB\nMemFree:        1 kB\n");
    put("root/proc/sys/kernel/osrelease", "6.1.0-test\n");
    put("root/etc/os-release", "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
    put("root/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
    put("root/sys/devices/system/cpu/cpu0/cache/index0/level", "1\n");
    put("root/sys/devices/system/cpu/cpu0/cache/index0/type", "Data\n");
    put("root/sys/devices/system/cpu/cpu0/cache/index0/size", "32K\n");
    put("root/sys/devices/system/cpu/cpu0/cache/index1/level", "2\n");
    put("root/sys/devices/system/cpu/cpu0/cache/index1/type", "Unified\n");
    put("root/sys/devices/system/cpu/cpu0/cache/index1/size", "512K\n");
    put("root/sys/block/nvme0n1/size", "3907029168\n"); /* 2 TB in 512-byte sectors */
    put("root/sys/block/nvme0n1/queue/rotational", "0\n");
    put("root/sys/block/sda/size", "1953525168\n");
    put("root/sys/block/sda/queue/rotational", "0\n");
    put("root/sys/block/loop0/size", "999999999\n"); /* not a disk */
    put("smi.sh", "#!/bin/sh\n"
                  "echo 'NVIDIA A30, 24576, 1440, 4, 16, 470.42.01'\n"
                  "echo 'NVIDIA A30, 24576, 1440, 4, 16, 470.42.01'\n");
    ASSERT_INT_EQ(chmod("smi.sh", 0755), 0);
    char smi[4096];
    snprintf(smi, sizeof smi, "%s/smi.sh", ib_test_tmpdir());
    ib_sysinfo_opts o = {.root = "root", .nvidia_smi = smi, .submitter = "Me",
                         .division = "open"};
    json_t *j = collect(&o);
    for (size_t i = 0; i < sizeof g_official / sizeof g_official[0]; i++)
        if (!json_object_get(j, g_official[i]))
            ib_test_fail(__FILE__, __LINE__, "official field %s missing", g_official[i]);
    ASSERT_STR_EQ(str(j, "host_processor_model_name"), "AMD EPYC 7763 64-Core Processor");
    ASSERT_INT_EQ(num(j, "host_processors_per_node"), 2);
    ASSERT_INT_EQ(num(j, "host_processor_core_count"), 8);
    ASSERT_STR_EQ(str(j, "host_processor_frequency"), "3500 MHz");
    ASSERT_STR_EQ(str(j, "host_processor_caches"), "L1d 32K, L2 512K (per core: cpu0)");
    ASSERT_STR_EQ(str(j, "host_memory_capacity"), "64 GB");
    ASSERT_STR_EQ(str(j, "host_storage_capacity"), "2.73 TB");
    ASSERT_STR_CONTAINS(str(j, "host_storage_type"), "NVMe SSD");
    ASSERT_TRUE(strlen(str(j, "host_storage_type")) == strlen("NVMe SSD, SSD")); /* both kinds */
    ASSERT_STR_EQ(str(j, "operating_system"), "Debian GNU/Linux 12 (bookworm) (Linux 6.1.0-test)");
    ASSERT_INT_EQ(num(j, "accelerators_per_node"), 2);
    ASSERT_STR_EQ(str(j, "accelerator_model_name"), "NVIDIA A30");
    ASSERT_STR_EQ(str(j, "accelerator_memory_capacity"), "24 GB");
    ASSERT_STR_EQ(str(j, "accelerator_frequency"), "1440 MHz");
    ASSERT_STR_EQ(str(j, "accelerator_host_interconnect"), "PCIe Gen4 x16");
    ASSERT_STR_CONTAINS(str(j, "other_software_stack"), "NVIDIA driver 470.42.01");
    ASSERT_STR_CONTAINS(str(j, "other_software_stack"), "oneDNN ");
    ASSERT_STR_CONTAINS(str(j, "framework"), "inferbench ");
    ASSERT_STR_EQ(str(j, "submitter"), "Me");
    ASSERT_STR_EQ(str(j, "division"), "open");
    ASSERT_INT_EQ(num(j, "number_of_nodes"), 1);
    /* nothing on this machine says these: empty, not invented */
    ASSERT_STR_EQ(str(j, "status"), "");
    ASSERT_STR_EQ(str(j, "host_memory_configuration"), "");
    ASSERT_STR_EQ(str(j, "accelerator_memory_configuration"), "");
    ASSERT_STR_EQ(str(j, "cooling"), "");
    ASSERT_STR_EQ(str(j, "host_networking"), "");
    json_decref(j);
}

TEST(sysinfo_empty_machine_and_no_gpu)
{
    ASSERT_OK(ib_mkdirs("bare", NULL));
    ib_sysinfo_opts o = {.root = "bare", .nvidia_smi = "/nonexistent/nvidia-smi"};
    json_t *j = collect(&o);
    ASSERT_INT_EQ(num(j, "accelerators_per_node"), 0);
    ASSERT_STR_EQ(str(j, "accelerator_model_name"), "");
    ASSERT_STR_EQ(str(j, "host_processor_model_name"), "");
    ASSERT_STR_EQ(str(j, "host_memory_capacity"), "");
    ASSERT_STR_EQ(str(j, "operating_system"), "");
    /* counts nobody reported are "" rather than a made-up 1 */
    ASSERT_STR_EQ(str(j, "host_processors_per_node"), "");
    ASSERT_STR_EQ(str(j, "host_processor_core_count"), "");
    json_decref(j);
    /* a program name with shell syntax is never run */
    ib_sysinfo_opts bad = {.root = "bare", .nvidia_smi = "x; touch pwned"};
    j = collect(&bad);
    ASSERT_INT_EQ(num(j, "accelerators_per_node"), 0);
    ASSERT_FALSE(ib_path_exists("pwned"));
    json_decref(j);
}

TEST(sysinfo_this_machine_and_cli)
{
    ib_sysinfo_opts o = {.nvidia_smi = ""};
    json_t *j = collect(&o);
    /* Linux always has /proc/cpuinfo and /proc/meminfo */
    ASSERT_STR_CONTAINS(str(j, "host_memory_capacity"), "B");
    ASSERT_TRUE(json_object_size(j) >= sizeof g_official / sizeof g_official[0]);
    json_decref(j);
    ASSERT_INT_EQ(ib_test_system("IB_NVIDIA_SMI= %s/inferbench sysinfo --output sys.json "
                                 "--submitter X --division closed 2> err.txt",
                                 ib_test_bin_dir()),
                  0);
    json_error_t je;
    j = json_load_file("sys.json", 0, &je);
    ASSERT_NOT_NULL(j);
    ASSERT_STR_EQ(str(j, "submitter"), "X");
    ASSERT_STR_EQ(str(j, "division"), "closed");
    json_decref(j);
    char *e = NULL;
    size_t n = 0;
    ASSERT_OK(ib_file_read_all("err.txt", 0, &e, &n, NULL));
    ASSERT_STR_CONTAINS(e, "left empty");
    ASSERT_STR_CONTAINS(e, "status");
    ib_free(e);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench sysinfo --division middle 2> /dev/null",
                                 ib_test_bin_dir()),
                  2);
}
