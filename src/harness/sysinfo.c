/*
 * sysinfo.c - the system description JSON (sysinfo.h). Each source is read defensively (a
 * missing or odd file leaves its fields ""), nothing is inferred from a model name, and
 * values keep the units of the official files ("512 GB", "1980 MHz", "PCIe Gen4 x16").
 * nvidia-smi runs through popen with a fixed query (stderr discarded); its absence is the
 * normal CPU-only case (0 accelerators).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <oneapi/dnnl/dnnl.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/json_writer.h"
#include "harness/sysinfo.h"
#include "inferbench/version.h"

#define NFIELDS 52
#define VAL_MAX 512

typedef struct field {
    const char *key;
    bool is_int;
    long long i;
    char s[VAL_MAX];
    bool known; /* for the missing list */
} field;

typedef struct ctx {
    const ib_sysinfo_opts *o;
    field f[NFIELDS];
    int n;
} ctx;

static field *get(ctx *c, const char *key)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->f[i].key, key) == 0)
            return &c->f[i];
    IB_ASSERT(c->n < NFIELDS);
    field *f = &c->f[c->n++];
    memset(f, 0, sizeof *f);
    f->key = key;
    return f;
}

static void set_s(ctx *c, const char *key, const char *fmt, ...) IB_PRINTF(3, 4);

static void set_s(ctx *c, const char *key, const char *fmt, ...)
{
    field *f = get(c, key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->s, sizeof f->s, fmt, ap);
    va_end(ap);
    f->is_int = false;
    f->known = f->s[0] != '\0';
}

static void set_i(ctx *c, const char *key, long long v)
{
    field *f = get(c, key);
    f->is_int = true;
    f->i = v;
    f->known = true;
}

/* Read root+path (at most 1 MiB); NULL when absent. */
static char *slurp(const ctx *c, const char *path)
{
    char full[4096];
    snprintf(full, sizeof full, "%s%s", c->o->root ? c->o->root : "", path);
    char *text = NULL;
    size_t len = 0;
    if (ib_file_read_all(full, (size_t)1 << 20, &text, &len, NULL) != IB_OK)
        return NULL;
    return text;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    size_t k = strspn(s, " \t");
    if (k)
        memmove(s, s + k, n - k + 1);
}

/* The value of "key<spaces>: value" on line `line`, or NULL. */
static const char *kv(const char *line, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    if (strncmp(line, key, kl) != 0)
        return NULL;
    const char *p = line + kl;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    size_t l = strcspn(p, "\n");
    snprintf(out, n, "%.*s", (int)l, p);
    trim(out);
    return out;
}

/* "24 GB", "1 TB" from bytes (binary units, as the official files write them). */
static void fmt_bytes(double bytes, char *out, size_t n)
{
    double gib = bytes / (1024.0 * 1024 * 1024);
    if (gib >= 1024)
        snprintf(out, n, "%.3g TB", gib / 1024);
    else
        snprintf(out, n, "%.0f GB", gib);
}

static void cpu_info(ctx *c)
{
    char *t = slurp(c, "/proc/cpuinfo");
    if (!t)
        return;
    char model[256] = "", val[256];
    long cores = -1;
    long sockets_seen[256];
    int nsock = 0;
    for (char *line = t; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!model[0] && kv(line, "model name", val, sizeof val))
            snprintf(model, sizeof model, "%s", val);
        if (cores < 0 && kv(line, "cpu cores", val, sizeof val))
            cores = strtol(val, NULL, 10);
        if (kv(line, "physical id", val, sizeof val)) {
            long id = strtol(val, NULL, 10);
            bool dup = false;
            for (int i = 0; i < nsock; i++)
                dup |= sockets_seen[i] == id;
            if (!dup && nsock < 256)
                sockets_seen[nsock++] = id;
        }
        line = nl ? nl + 1 : NULL;
    }
    ib_free(t);
    if (model[0])
        set_s(c, "host_processor_model_name", "%s", model);
    if (nsock > 0)
        set_i(c, "host_processors_per_node", nsock);
    if (cores > 0)
        set_i(c, "host_processor_core_count", cores);
}

static void cpu_sysfs(ctx *c)
{
    char *t = slurp(c, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    if (t) {
        long khz = strtol(t, NULL, 10);
        if (khz > 0)
            set_s(c, "host_processor_frequency", "%ld MHz", khz / 1000);
        ib_free(t);
    }
    char caches[VAL_MAX] = "";
    for (int i = 0; i < 8; i++) {
        char p[128];
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        char *lv = slurp(c, p);
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        char *ty = slurp(c, p);
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        char *sz = slurp(c, p);
        if (lv && ty && sz) {
            trim(lv);
            trim(ty);
            trim(sz);
            const char *suffix = strcmp(ty, "Data") == 0          ? "d"
                                 : strcmp(ty, "Instruction") == 0 ? "i"
                                                                  : "";
            size_t used = strlen(caches);
            snprintf(caches + used, sizeof caches - used, "%sL%s%s %s", used ? ", " : "", lv,
                     suffix, sz);
        }
        ib_free(lv);
        ib_free(ty);
        ib_free(sz);
    }
    if (caches[0])
        set_s(c, "host_processor_caches", "%s (per core: cpu0)", caches);
}

static void memory(ctx *c)
{
    char *t = slurp(c, "/proc/meminfo");
    if (!t)
        return;
    char val[128], out[64];
    for (char *line = t; line && *line;) {
        char *nl = strchr(line, '\n');
        if (kv(line, "MemTotal", val, sizeof val)) {
            double kb = strtod(val, NULL);
            if (kb > 0) {
                fmt_bytes(kb * 1024, out, sizeof out);
                set_s(c, "host_memory_capacity", "%s", out);
            }
            break;
        }
        line = nl ? nl + 1 : NULL;
    }
    ib_free(t);
}

static void storage(ctx *c)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/sys/block", c->o->root ? c->o->root : "");
    DIR *d = opendir(dir);
    if (!d)
        return;
    double total = 0;
    char types[256] = "";
    const char *kinds[4];
    int nkinds = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (n[0] == '.' || !strncmp(n, "loop", 4) || !strncmp(n, "ram", 3) ||
            !strncmp(n, "zram", 4) || !strncmp(n, "dm-", 3) || !strncmp(n, "md", 2) ||
            !strncmp(n, "sr", 2) || !strncmp(n, "nbd", 3))
            continue;
        char p[512];
        snprintf(p, sizeof p, "/sys/block/%s/size", n);
        char *sz = slurp(c, p);
        if (!sz)
            continue;
        double sectors = strtod(sz, NULL);
        ib_free(sz);
        if (sectors <= 0)
            continue;
        total += sectors * 512;
        snprintf(p, sizeof p, "/sys/block/%s/queue/rotational", n);
        char *rot = slurp(c, p);
        const char *ty = !strncmp(n, "nvme", 4) ? "NVMe SSD"
                         : rot && rot[0] == '0' ? "SSD"
                         : rot && rot[0] == '1' ? "HDD (rotational)"
                                                : "";
        ib_free(rot);
        bool seen = false; /* whole items: "SSD" is not "NVMe SSD" */
        for (int k = 0; k < nkinds; k++)
            seen |= kinds[k] == ty;
        if (ty[0] && !seen && nkinds < 4) {
            kinds[nkinds++] = ty;
            size_t used = strlen(types);
            snprintf(types + used, sizeof types - used, "%s%s", used ? ", " : "", ty);
        }
    }
    closedir(d);
    if (total > 0) {
        char out[64];
        fmt_bytes(total, out, sizeof out);
        set_s(c, "host_storage_capacity", "%s", out);
    }
    if (types[0])
        set_s(c, "host_storage_type", "%s", types);
}

static void os_info(ctx *c, char *kernel, size_t kn)
{
    kernel[0] = '\0';
    char *k = slurp(c, "/proc/sys/kernel/osrelease");
    if (k) {
        trim(k);
        snprintf(kernel, kn, "%s", k);
        ib_free(k);
    }
    char *t = slurp(c, "/etc/os-release");
    char pretty[256] = "";
    for (char *line = t; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!strncmp(line, "PRETTY_NAME=", 12)) {
            const char *v = line + 12;
            size_t l = nl ? (size_t)(nl - v) : strlen(v);
            if (l >= 2 && v[0] == '"' && v[l - 1] == '"') {
                v++;
                l -= 2;
            }
            snprintf(pretty, sizeof pretty, "%.*s", (int)l, v);
        }
        line = nl ? nl + 1 : NULL;
    }
    ib_free(t);
    if (pretty[0] && kernel[0])
        set_s(c, "operating_system", "%s (Linux %s)", pretty, kernel);
    else if (pretty[0])
        set_s(c, "operating_system", "%s", pretty);
    else if (kernel[0])
        set_s(c, "operating_system", "Linux %s", kernel);
}

/* nvidia-smi: one CSV line per GPU. Returns the driver version into drv. */
static void gpus(ctx *c, char *drv, size_t dn)
{
    drv[0] = '\0';
    const char *smi = c->o->nvidia_smi ? c->o->nvidia_smi : "nvidia-smi";
    set_i(c, "accelerators_per_node", 0);
    if (!smi[0] || strpbrk(smi, "'\"`$\\;&|<>\n"))
        return;
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "'%s' --query-gpu=name,memory.total,clocks.max.sm,pcie.link.gen.max,"
             "pcie.link.width.max,driver_version --format=csv,noheader,nounits 2>/dev/null",
             smi);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char line[1024], name[256] = "";
    int n = 0;
    double mem_mib = 0;
    long mhz = 0, gen = 0, width = 0;
    while (fgets(line, sizeof line, p)) {
        char *fld[6] = {0};
        int nf = 0;
        for (char *s = line; nf < 6;) {
            fld[nf++] = s;
            char *comma = strchr(s, ',');
            if (!comma)
                break;
            *comma = '\0';
            s = comma + 1;
        }
        if (nf < 6)
            continue;
        for (int i = 0; i < 6; i++)
            trim(fld[i]);
        if (n++ == 0) {
            snprintf(name, sizeof name, "%s", fld[0]);
            mem_mib = strtod(fld[1], NULL);
            mhz = strtol(fld[2], NULL, 10);
            gen = strtol(fld[3], NULL, 10);
            width = strtol(fld[4], NULL, 10);
            snprintf(drv, dn, "%s", fld[5]);
        }
    }
    pclose(p);
    set_i(c, "accelerators_per_node", n);
    if (n == 0)
        return;
    set_s(c, "accelerator_model_name", "%s", name);
    if (mem_mib > 0) {
        char out[64];
        fmt_bytes(mem_mib * 1024 * 1024, out, sizeof out);
        set_s(c, "accelerator_memory_capacity", "%s", out);
    }
    if (mhz > 0)
        set_s(c, "accelerator_frequency", "%ld MHz", mhz);
    if (gen > 0 && width > 0)
        set_s(c, "accelerator_host_interconnect", "PCIe Gen%ld x%ld", gen, width);
}

static int cmp_field(const void *a, const void *b)
{
    return strcmp(((const field *)a)->key, ((const field *)b)->key);
}

/* Every key of the v1.1 checker (required + accepted) and the v5.0 additions. */
static const char *const g_keys[] = {
    "division", "submitter", "status", "system_name", "system_type", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_processor_frequency", "host_processor_caches", "host_processor_interconnect",
    "host_memory_capacity", "host_memory_configuration", "host_storage_type",
    "host_storage_capacity", "host_networking", "host_networking_topology",
    "accelerators_per_node", "accelerator_model_name", "accelerator_frequency",
    "accelerator_host_interconnect", "accelerator_interconnect",
    "accelerator_interconnect_topology", "accelerator_memory_capacity",
    "accelerator_memory_configuration", "accelerator_on-chip_memories", "cooling", "hw_notes",
    "framework", "other_software_stack", "operating_system", "sw_notes", "power_management",
    "filesystem", "boot_firmware_version", "management_firmware_version", "other_hardware",
    "number_of_type_nics_installed", "nics_enabled_firmware", "nics_enabled_os",
    "nics_enabled_connected", "network_speed_mbit", "power_supply_quantity_and_rating_watts",
    "power_supply_details", "disk_drives", "disk_controllers", "host_network_card_count",
    "system_type_detail",
};

#define STR_(x) #x
#define STR(x) STR_(x)

int ib_sysinfo_json(const ib_sysinfo_opts *o, ib_strbuf *out, ib_strbuf *missing, ib_err *err)
{
    ctx *c = ib_calloc(1, sizeof *c);
    if (!c)
        return ib_err_set(err, IB_ENOMEM, "sysinfo: out of memory");
    c->o = o;
    for (size_t i = 0; i < IB_ARRAY_LEN(g_keys); i++)
        get(c, g_keys[i]);
    set_s(c, "division", "%s", o->division ? o->division : "");
    set_s(c, "submitter", "%s", o->submitter ? o->submitter : "");
    set_s(c, "status", "%s", o->status ? o->status : "");
    set_s(c, "system_name", "%s", o->system_name ? o->system_name : "");
    set_s(c, "system_type", "%s", o->system_type ? o->system_type : "");
    set_i(c, "number_of_nodes", 1); /* inferbench measures the machine it runs on */
    cpu_info(c);
    cpu_sysfs(c);
    memory(c);
    storage(c);
    char kernel[128], drv[128];
    os_info(c, kernel, sizeof kernel);
    gpus(c, drv, sizeof drv);
    const dnnl_version_t *dv = dnnl_version();
    set_s(c, "framework", "inferbench %s (git %s)", ib_version_string(), ib_version_git());
    set_s(c, "other_software_stack", "oneDNN %d.%d.%d, libjpeg-turbo %s, %s%s%s",
          dv ? dv->major : 0, dv ? dv->minor : 0, dv ? dv->patch : 0,
          STR(LIBJPEG_TURBO_VERSION), "GCC " __VERSION__, drv[0] ? ", NVIDIA driver " : "", drv);
    qsort(c->f, (size_t)c->n, sizeof c->f[0], cmp_field);
    ib_jw jw;
    ib_jw_init(&jw, out, true);
    ib_jw_object_begin(&jw);
    for (int i = 0; i < c->n; i++) {
        ib_jw_key(&jw, c->f[i].key);
        if (c->f[i].is_int)
            ib_jw_int(&jw, c->f[i].i);
        else
            ib_jw_string(&jw, c->f[i].s);
        if (missing && !c->f[i].known)
            ib_strbuf_printf(missing, "%s%s", missing->len ? ", " : "", c->f[i].key);
    }
    ib_jw_object_end(&jw);
    int rc = ib_jw_finish(&jw);
    if (!rc)
        rc = ib_strbuf_putc(out, '\n');
    ib_free(c);
    return rc ? ib_err_set(err, rc, "sysinfo: out of memory") : IB_OK;
}
