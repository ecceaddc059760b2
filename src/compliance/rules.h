/*
 * rules.h - the per-round tables the checker and the verifiers apply: models and their
 * accuracy targets, performance sample counts, latency bounds, minimum query counts,
 * required scenarios, compliance tests, seeds and system-description fields.
 *
 * "v1.1" follows MODEL_CONFIG["v1.1"] of the r1.1 submission-checker.py; "current" follows
 * MODEL_CONFIG["v6.1"] of the modular checker (tools/submission/submission_checker) for the
 * models inferbench can check (benchmarks.md §1.7, §2; loadgen.md §6).
 */
#ifndef IB_COMPLIANCE_RULES_H
#define IB_COMPLIANCE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inferbench/compliance.h"

/* Scenario bits. */
enum {
    IB_SCN_SINGLE = 1u << 0,
    IB_SCN_MULTI = 1u << 1,
    IB_SCN_SERVER = 1u << 2,
    IB_SCN_OFFLINE = 1u << 3,
    IB_SCN_INTERACTIVE = 1u << 4,
};

/* Compliance test bits. */
enum {
    IB_CT_TEST01 = 1u << 0,
    IB_CT_TEST04A = 1u << 1,
    IB_CT_TEST04B = 1u << 2,
    IB_CT_TEST05 = 1u << 3,
    IB_CT_TEST04 = 1u << 4, /* the single TEST04 of v2.1+ */
};

/* Accuracy metrics as named by the checkers' ACC_PATTERN tables. */
enum ib_acc_metric {
    IB_ACC_NONE = 0,
    IB_ACC_ACC,      /* accuracy=76.040% */
    IB_ACC_AUC,      /* AUC=80.185% */
    IB_ACC_MAP,      /* mAP=20.117% */
    IB_ACC_BLEU,     /* BLEU: 23.9 */
    IB_ACC_F1,       /* {"exact_match": 83.1, "f1": 90.3} */
    IB_ACC_WER,      /* Word Error Rate: 7.44%, accuracy=92.55% */
    IB_ACC_DICE,     /* Accuracy: mean = 0.85407, ... */
};

typedef struct ib_rules_model {
    const char *name;         /* official model class ("resnet", "ssd-large", "bert-99") */
    bool supported;           /* false: known to the round, not checked by inferbench */
    enum ib_acc_metric metric;
    double acc_target;        /* computed as the checker does, e.g. 76.46 * 0.99 */
    const char *acc_target_expr;
    uint64_t perf_sample_count;
    uint64_t dataset_size;    /* accuracy run must cover it (current rules); 0 = no check */
    uint64_t offline_min_spq;
    uint64_t server_latency_ns;
    uint64_t multi_latency_ns;
    uint64_t minq_single, minq_multi, minq_server, minq_offline;
    unsigned req_dc, opt_dc, req_edge, opt_edge, req_both, opt_both; /* scenario bits */
    unsigned tests;           /* compliance tests (IB_CT_*) */
    bool equal_issue;         /* closed: effective_sample_concatenate_permutation must be true */
    uint64_t test01_sampling; /* the audit.config accuracy_log_sampling_target */
} ib_rules_model;

typedef struct ib_rules {
    enum ib_check_version version;
    const char *name;           /* "v1.1", "v6.1" */
    const ib_rules_model *models;
    size_t n_models;
    uint64_t seeds[3];          /* qsl, sample_index, schedule */
    uint64_t test05_seeds[3];   /* v1.1 TEST05 audit.config; 0 when the round has no TEST05 */
    uint64_t test01_rng_seed;   /* accuracy_log_rng_seed of TEST01's audit.config */
    uint64_t min_duration_ms;
    bool early_stopping;        /* Server/SingleStream/MultiStream use early stopping */
    bool network_division;      /* "network" is a valid division */
    const char *const *measure_files;    /* NULL-terminated */
    const char *const *sys_required;     /* NULL-terminated */
    const char *const *sys_meaningful;   /* must also be non-empty; NULL-terminated or NULL */
    const char *const *sys_known_extra;  /* accepted without warning; NULL-terminated */
} ib_rules;

const ib_rules *ib_rules_get(enum ib_check_version v);

/* Map a benchmark directory name to its model class (official name, model_mapping, then the
 * checker's guesses). Returns NULL when the round does not know it; *official gets the class
 * name either way (the guess, for messages). */
const ib_rules_model *ib_rules_model_find(const ib_rules *r, const char *dir_name,
                                          const char **official);

/* Scenario bit of a directory name (also lower-case spellings), 0 when unknown;
 * *canonical gets "SingleStream", ... */
unsigned ib_rules_scenario_bit(const char *name, const char **canonical);
const char *ib_rules_scenario_name(unsigned bit);

/* The checker's name for a metric ("acc", "F1", ...) and its ERE pattern for accuracy.txt
 * lines (group `*group` holds the number). */
const char *ib_acc_metric_name(enum ib_acc_metric m);
const char *ib_acc_metric_pattern(const ib_rules *r, enum ib_acc_metric m, int *group);

/* Seeds of other rounds, to explain a wrong seed ("these are the v6.1 seeds"). NULL when
 * the triple is not a known round's. */
const char *ib_rules_seed_round(uint64_t qsl, uint64_t sample, uint64_t schedule);

/* Allowed accuracy delta of TEST01's fallback in percent (1 or 0.1). */
double ib_rules_fallback_delta(const ib_rules_model *m);

#endif
