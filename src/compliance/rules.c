/*
 * rules.c - per-round rule tables (benchmarks.md §1.7, §2.1, §2.5; loadgen.md §4.6, §6).
 *
 * v1.1 transcribes MODEL_CONFIG["v1.1"] and the constants of the r1.1 submission-checker.py;
 * "current" transcribes MODEL_CONFIG["v6.1"] of the modular checker for its single-metric
 * models. Models of the current round with multi-metric or token-based rules (LLMs, SDXL,
 * DLRMv3, ...) are listed as known but unsupported, so the checker says so instead of
 * passing them unchecked. Accuracy targets are computed with the same double arithmetic
 * the Python tables use (e.g. 76.46 * 0.99), so boundary values compare identically.
 */
#include <string.h>
#include <strings.h>

#include "base/common.h"
#include "compliance/rules.h"

#define SS IB_SCN_SINGLE
#define MS IB_SCN_MULTI
#define SV IB_SCN_SERVER
#define OF IB_SCN_OFFLINE
#define IA IB_SCN_INTERACTIVE
#define T01 IB_CT_TEST01
#define T04AB (IB_CT_TEST04A | IB_CT_TEST04B)
#define T05 IB_CT_TEST05
#define T04 IB_CT_TEST04

/* clang-format off */
static const ib_rules_model g_v11_models[] = {
    /* name, supported, metric, target, expr, psc, dataset, offline spq, server lat, ms lat,
     * minq ss/ms/server/offline, req/opt dc, req/opt edge, req/opt dc+edge, tests,
     * equal issue, TEST01 sampling target */
    {"ssd-small", true, IB_ACC_MAP, 22 * 0.99, "22 * 0.99", 256, 5000, 24576, 0, 50000000,
     1024, 0, 0, 1, 0, 0, SS | OF, 0, SS | OF, 0, T01 | T04AB | T05, false, 1024},
    {"ssd-large", true, IB_ACC_MAP, 20 * 0.99, "20 * 0.99", 64, 5000, 24576, 100000000,
     66000000, 1024, 0, 270336, 1, OF, SV, SS | OF, 0, SS | OF, SV, T01 | T04AB | T05, false,
     256},
    {"resnet", true, IB_ACC_ACC, 76.46 * 0.99, "76.46 * 0.99", 1024, 50000, 24576, 15000000,
     50000000, 1024, 0, 270336, 1, OF, SV, SS | OF, 0, SS | OF, SV, T01 | T04AB | T05, false,
     4096},
    {"rnnt", true, IB_ACC_WER, (100 - 7.452) * 0.99, "(100 - 7.452) * 0.99", 2513, 2513,
     24576, 1000000000, 0, 1024, 0, 270336, 1, OF, SV, SS | OF, 0, SS | OF, SV, T01 | T05,
     false, 4096},
    {"bert-99", true, IB_ACC_F1, 90.874 * 0.99, "90.874 * 0.99", 10833, 10833, 24576,
     130000000, 0, 1024, 0, 270336, 1, OF, SV, SS | OF, 0, SS | OF, SV, T01 | T05, false,
     4096},
    {"bert-99.9", true, IB_ACC_F1, 90.874 * 0.999, "90.874 * 0.999", 10833, 10833, 24576,
     130000000, 0, 1024, 0, 270336, 1, OF, SV, 0, 0, OF, SV, T01 | T05, false, 4096},
    {"dlrm-99", true, IB_ACC_AUC, 80.25 * 0.99, "80.25 * 0.99", 204800, 330067, 24576,
     30000000, 0, 0, 0, 270336, 1, OF, SV, 0, 0, OF, SV, T01 | T05, false, 4096},
    {"dlrm-99.9", true, IB_ACC_AUC, 80.25 * 0.999, "80.25 * 0.999", 204800, 330067, 24576,
     30000000, 0, 0, 0, 270336, 1, OF, SV, 0, 0, OF, SV, T01 | T05, false, 4096},
    {"3d-unet-99", true, IB_ACC_DICE, 0.853 * 0.99, "0.853 * 0.99", 16, 67, 24576, 0, 0,
     1024, 0, 0, 1, OF, 0, SS | OF, 0, SS | OF, 0, T01 | T04AB | T05, false, 64},
    {"3d-unet-99.9", true, IB_ACC_DICE, 0.853 * 0.999, "0.853 * 0.999", 16, 67, 24576, 0, 0,
     1024, 0, 0, 1, OF, 0, SS | OF, 0, SS | OF, 0, T01 | T04AB | T05, false, 64},
};

static const ib_rules_model g_v61_models[] = {
    {"resnet", true, IB_ACC_ACC, 76.46 * 0.99, "76.46 * 0.99", 1024, 50000, 24576, 15000000,
     0, 1024, 270336, 270336, 1, 0, 0, SS | MS | OF, 0, SS | MS | OF | SV, 0, T01 | T04, false,
     4096},
    {"bert-99", true, IB_ACC_F1, 90.874 * 0.99, "90.874 * 0.99", 10833, 10833, 10833, 0, 0,
     1024, 0, 0, 1, 0, 0, SS | OF, 0, SS | OF, 0, T01, false, 4096},
    {"bert-99.9", true, IB_ACC_F1, 90.874 * 0.999, "90.874 * 0.999", 10833, 10833, 10833, 0, 0,
     1024, 0, 0, 1, 0, 0, SS | OF, 0, SS | OF, 0, T01, false, 4096},
    {"3d-unet-99", true, IB_ACC_DICE, 0.86170 * 0.99, "0.86170 * 0.99", 43, 43, 43, 0, 0,
     1024, 0, 0, 1, OF, 0, SS | OF, 0, SS | OF, 0, T01, true, 64},
    {"3d-unet-99.9", true, IB_ACC_DICE, 0.86170 * 0.999, "0.86170 * 0.999", 43, 43, 43, 0, 0,
     1024, 0, 0, 1, OF, 0, SS | OF, 0, SS | OF, 0, T01, true, 64},
    {"rgat", true, IB_ACC_ACC, 0.7286 * 0.99, "0.7286 * 0.99", 788379, 788379, 788379, 0, 0,
     1024, 0, 0, 1, OF, 0, 0, 0, OF, 0, T01, false, 4096},
    {"whisper", true, IB_ACC_WER, (100.0 - 2.0671) * 0.99, "(100.0 - 2.0671) * 0.99", 1633,
     1633, 1633, 0, 0, 1024, 0, 0, 1, OF, 0, OF, 0, OF, 0, T01, false, 4096},
    {"yolo-95", true, IB_ACC_MAP, 53.4 * 0.95, "53.4 * 0.95", 64, 1525, 1525, 0, 0, 1024,
     270336, 0, 1, 0, 0, SS | MS | OF, 0, SS | MS | OF, 0, T01, false, 64},
    {"yolo-99", true, IB_ACC_MAP, 53.4 * 0.99, "53.4 * 0.99", 64, 1525, 1525, 0, 0, 1024,
     270336, 0, 1, 0, 0, SS | MS | OF, 0, SS | MS | OF, 0, T01, false, 64},
    /* known to v6.1, rules not implemented by inferbench (multi-metric or token-based) */
    {"llama3.1-8b", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF, SV | IA, 0, 0,
     OF, SV | IA, 0, false, 0},
    {"llama3.1-8b-edge", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, SS | OF,
     0, SS | OF, 0, 0, false, 0},
    {"llama2-70b-99.9", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF, SV | IA, 0,
     0, OF, SV | IA, 0, false, 0},
    {"stable-diffusion-xl", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
     SS | OF, 0, SS | OF | SV, 0, 0, false, 0},
    {"deepseek-r1", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF, SV | IA, 0, 0,
     OF, SV | IA, 0, false, 0},
    {"gpt-oss-120b", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF, SV | IA, 0, 0,
     OF, SV | IA, 0, false, 0},
    {"wan-2.2-t2v-a14b", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF | SS, 0, 0,
     0, 0, 0, 0, false, 0},
    {"qwen3-vl-235b-a22b", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF, SV | IA,
     0, 0, OF, SV | IA, 0, false, 0},
    {"qwen3.6-27b", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, SS, 0, SS, 0,
     0, false, 0},
    {"dlrm-v3", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, SV | OF, 0, 0, 0,
     OF | SV, 0, 0, false, 0},
    {"e2e-rag-qna", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF, 0, 0, 0, 0, 0,
     0, false, 0},
    {"e2e-rag-db", false, IB_ACC_NONE, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, OF, 0, 0, 0, 0, 0,
     0, false, 0},
};
/* clang-format on */

typedef struct name_map {
    const char *from, *to;
} name_map;

static const name_map g_v11_mapping[] = {
    {"ssd-mobilenet", "ssd-small"},
    {"ssd-resnet34", "ssd-large"},
    {"mobilenet", "resnet"},
    {"resnet50", "resnet"},
};

static const name_map g_v61_mapping[] = {
    {"ssd-resnet34", "retinanet"},
    {"mobilenet", "resnet"},
    {"resnet50", "resnet"},
    {"llama3_1-8b", "llama3.1-8b"},
    {"llama3_1-8b-edge", "llama3.1-8b-edge"},
};

/* SYSTEM_DESC_REQUIRED_FIELDS + SYSTEM_DESC_REQUIED_FIELDS_SINCE_V1 (benchmarks.md §2.5) */
static const char *const g_sys_v11[] = {
    "division", "submitter", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_memory_capacity", "host_storage_capacity", "host_storage_type",
    "accelerators_per_node", "accelerator_model_name", "accelerator_memory_capacity",
    "framework", "operating_system", "system_type", "other_software_stack",
    "host_processor_frequency", "host_processor_caches", "host_memory_configuration",
    "host_processor_interconnect", "host_networking", "host_networking_topology",
    "accelerator_frequency", "accelerator_host_interconnect", "accelerator_interconnect",
    "accelerator_interconnect_topology", "accelerator_memory_configuration",
    "accelerator_on-chip_memories", "cooling", "hw_notes", "sw_notes", NULL};

/* SYSTEM_DESC_REQUIED_FIELDS_POWER (v1.1) */
static const char *const g_sys_power_v11[] = {
    "power_management", "filesystem", "boot_firmware_version", "management_firmware_version",
    "other_hardware", "number_of_type_nics_installed", "nics_enabled_firmware",
    "nics_enabled_os", "nics_enabled_connected", "network_speed_mbit",
    "power_supply_quantity_and_rating_watts", "power_supply_details", "disk_drives",
    "disk_controllers", NULL};

static const char *const g_sys_v61[] = {
    "division", "submitter", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_memory_capacity", "host_storage_capacity", "host_storage_type",
    "accelerators_per_node", "accelerator_model_name", "accelerator_memory_capacity",
    "framework", "operating_system", "system_type", "other_software_stack",
    "host_processor_frequency", "host_processor_caches", "host_memory_configuration",
    "host_processor_interconnect", "host_networking", "host_networking_topology",
    "accelerator_frequency", "accelerator_host_interconnect", "accelerator_interconnect",
    "accelerator_interconnect_topology", "accelerator_memory_configuration",
    "accelerator_on-chip_memories", "cooling", "hw_notes", "sw_notes",
    "host_network_card_count", "system_type_detail", NULL};

static const char *const g_sys_meaningful_v61[] = {
    "division", "submitter", "system_type", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_memory_capacity", "host_memory_configuration", "host_storage_capacity",
    "host_storage_type", "host_networking", "host_network_card_count",
    "host_networking_topology", "accelerators_per_node", "accelerator_model_name",
    "accelerator_memory_capacity", "accelerator_host_interconnect",
    "accelerator_memory_configuration", "accelerator_interconnect", "cooling", "framework",
    "operating_system", "other_software_stack", NULL};

static const char *const g_sys_extra_v61[] = {
    "power_management", "filesystem", "boot_firmware_version", "management_firmware_version",
    "other_hardware", "number_of_type_nics_installed", "nics_enabled_firmware",
    "nics_enabled_os", "nics_enabled_connected", "network_speed_mbit",
    "power_supply_quantity_and_rating_watts", "power_supply_details", "disk_drives",
    "disk_controllers", "system_power_only", "is_network", "network_type", "network_media",
    "network_rate", "nic_loadgen", "number_nic_loadgen", "net_software_stack_loadgen",
    "network_protocol", "number_connections", "nic_sut", "number_nic_sut",
    "net_software_stack_sut", "network_topology", NULL};

static const char *const g_measure_v11[] = {"mlperf.conf", "user.conf", "README.md", NULL};
static const char *const g_measure_v61[] = {"user.conf", "README.md", NULL};

static const ib_rules g_rules[] = {
    {IB_CHECK_V1_1, "v1.1", g_v11_models, IB_ARRAY_LEN(g_v11_models),
     {1624344308455410291ull, 517984244576520566ull, 10051496985653635065ull},
     {313588358309856706ull, 471397156132239067ull, 413914573387865862ull},
     720381539243781796ull, 600000, false, false, g_measure_v11, g_sys_v11, NULL,
     g_sys_power_v11},
    {IB_CHECK_CURRENT, "v6.1", g_v61_models, IB_ARRAY_LEN(g_v61_models),
     {2085463073848966840ull, 2747215439041700203ull, 16159082839903944936ull},
     {0, 0, 0},
     720381539243781796ull, 600000, true, true, g_measure_v61, g_sys_v61, g_sys_meaningful_v61,
     g_sys_extra_v61},
};

/* loadgen.md §4.6: the seeds of every round, to name the round a wrong seed belongs to. */
static const struct {
    const char *round;
    uint64_t s[3];
} g_seed_history[] = {
    {"v0.7", {12786827339337101903ull, 12640797754436136668ull, 3135815929913719677ull}},
    {"v1.0", {7322528924094909334ull, 1570999273408051088ull, 3507442325620259414ull}},
    {"v1.1", {1624344308455410291ull, 517984244576520566ull, 10051496985653635065ull}},
    {"v1.1 TEST05", {313588358309856706ull, 471397156132239067ull, 413914573387865862ull}},
    {"v2.0", {6655344265603136530ull, 15863379492028895792ull, 12662793979680847247ull}},
    {"v2.1", {14284205019438841327ull, 4163916728725999944ull, 299063814864929621ull}},
    {"v3.0", {10003631887983097364ull, 17183018601990103738ull, 12134888396634371638ull}},
    {"v3.1", {148687905518835231ull, 520418551913322573ull, 811580660758947900ull}},
    {"v4.0", {13281865557512327830ull, 198141574272810017ull, 7575108116881280410ull}},
    {"v4.1", {3066443479025735752ull, 10688027786191513374ull, 14962580496156340209ull}},
    {"v5.0", {6023615788873153749ull, 15036839855038426416ull, 9933818062894767841ull}},
    {"v5.1", {1780908523862526354ull, 14771362308971278857ull, 18209322760996052031ull}},
    {"v6.0", {2465351861681999779ull, 14276810075590677512ull, 3936089224930324775ull}},
    {"v6.1", {2085463073848966840ull, 2747215439041700203ull, 16159082839903944936ull}},
};

const ib_rules *ib_rules_get(enum ib_check_version v)
{
    return v == IB_CHECK_CURRENT ? &g_rules[1] : &g_rules[0];
}

static const ib_rules_model *find_exact(const ib_rules *r, const char *name)
{
    for (size_t i = 0; i < r->n_models; i++)
        if (!strcmp(r->models[i].name, name))
            return &r->models[i];
    return NULL;
}

const ib_rules_model *ib_rules_model_find(const ib_rules *r, const char *dir_name,
                                          const char **official)
{
    const name_map *map = r->version == IB_CHECK_V1_1 ? g_v11_mapping : g_v61_mapping;
    size_t nmap = r->version == IB_CHECK_V1_1 ? IB_ARRAY_LEN(g_v11_mapping)
                                              : IB_ARRAY_LEN(g_v61_mapping);
    const char *name = dir_name;
    *official = dir_name;
    const ib_rules_model *m = find_exact(r, name);
    if (m)
        return m;
    for (size_t i = 0; i < nmap; i++)
        if (!strcmp(map[i].from, name)) {
            *official = map[i].to;
            return find_exact(r, map[i].to);
        }
    if (r->version == IB_CHECK_V1_1) {
        /* get_mlperf_model's guesses (they matter for the open division) */
        const char *guess = NULL;
        if (strstr(name, "ssdlite") || strstr(name, "ssd-inception") || strstr(name, "yolo") ||
            strstr(name, "ssd-mobilenet") || strstr(name, "ssd-resnet50") || strstr(name, "rcnn"))
            guess = "ssd-small";
        else if (strstr(name, "mobilenet") || strstr(name, "efficientnet"))
            guess = "resnet";
        if (guess) {
            *official = guess;
            return find_exact(r, guess);
        }
    }
    return NULL;
}

unsigned ib_rules_scenario_bit(const char *name, const char **canonical)
{
    static const struct {
        const char *name;
        unsigned bit;
    } s[] = {{"SingleStream", IB_SCN_SINGLE}, {"MultiStream", IB_SCN_MULTI},
             {"Server", IB_SCN_SERVER},       {"Offline", IB_SCN_OFFLINE},
             {"Interactive", IB_SCN_INTERACTIVE}};
    for (size_t i = 0; i < IB_ARRAY_LEN(s); i++)
        if (!strcasecmp(name, s[i].name)) {
            if (canonical)
                *canonical = s[i].name;
            return s[i].bit;
        }
    if (canonical)
        *canonical = name;
    return 0;
}

const char *ib_rules_scenario_name(unsigned bit)
{
    switch (bit) {
    case IB_SCN_SINGLE: return "SingleStream";
    case IB_SCN_MULTI: return "MultiStream";
    case IB_SCN_SERVER: return "Server";
    case IB_SCN_OFFLINE: return "Offline";
    case IB_SCN_INTERACTIVE: return "Interactive";
    default: return "?";
    }
}

const char *ib_acc_metric_name(enum ib_acc_metric m)
{
    switch (m) {
    case IB_ACC_ACC: return "acc";
    case IB_ACC_AUC: return "AUC";
    case IB_ACC_MAP: return "mAP";
    case IB_ACC_BLEU: return "bleu";
    case IB_ACC_F1: return "F1";
    case IB_ACC_WER: return "WER";
    case IB_ACC_DICE: return "DICE";
    default: return "none";
    }
}

/* The checkers' Python patterns in POSIX ERE (re.match anchors at the line start: '^'). */
const char *ib_acc_metric_pattern(const ib_rules *r, enum ib_acc_metric m, int *group)
{
    bool cur = r->version == IB_CHECK_CURRENT;
    *group = 1;
    switch (m) {
    case IB_ACC_ACC:
        if (cur) {
            *group = 2;
            return "^(\\{\"accuracy|accuracy)[\": ]*=?[[:space:]]*([0-9.]+)";
        }
        return "^accuracy=([0-9.]+)";
    case IB_ACC_AUC: return "^AUC=([0-9.]+)";
    case IB_ACC_MAP:
        if (cur) {
            *group = 2;
            return "^.*(mAP=|'Total':)[[:space:]]*([0-9.]+)";
        }
        return "^mAP=([0-9.]+)";
    case IB_ACC_BLEU: return "^BLEU:[[:space:]]*([0-9.]+)";
    case IB_ACC_F1:
        if (cur)
            return "^\\{[\"']exact_match[\"']:[[:space:]]*[0-9.]+,[[:space:]]*[\"']f1[\"']:"
                   "[[:space:]]*([0-9.]+)\\}";
        return "^\\{\"exact_match\":[[:space:]]*[0-9.]+,[[:space:]]*\"f1\":[[:space:]]*([0-9.]+)"
               "\\}";
    case IB_ACC_WER: return "^Word Error Rate:.*, accuracy=([0-9.]+)%";
    case IB_ACC_DICE: return "^Accuracy:[[:space:]]*mean[[:space:]]*=[[:space:]]*([0-9.]+)";
    default: return NULL;
    }
}

const char *ib_rules_seed_round(uint64_t qsl, uint64_t sample, uint64_t schedule)
{
    for (size_t i = 0; i < IB_ARRAY_LEN(g_seed_history); i++)
        if (g_seed_history[i].s[0] == qsl && g_seed_history[i].s[1] == sample &&
            g_seed_history[i].s[2] == schedule)
            return g_seed_history[i].round;
    return NULL;
}

double ib_rules_fallback_delta(const ib_rules_model *m)
{
    return strstr(m->name, "99.9") ? 0.1 : 1.0;
}

int ib_check_version_parse(const char *text, enum ib_check_version *out)
{
    if (!text)
        return IB_EINVAL;
    if (!strcasecmp(text, "v1.1") || !strcmp(text, "1.1")) {
        *out = IB_CHECK_V1_1;
        return IB_OK;
    }
    if (!strcasecmp(text, "current") || !strcasecmp(text, "v6.1") || !strcmp(text, "6.1")) {
        *out = IB_CHECK_CURRENT;
        return IB_OK;
    }
    return IB_EINVAL;
}

const char *ib_check_version_name(enum ib_check_version v)
{
    return v == IB_CHECK_CURRENT ? "current" : "v1.1";
}
