/*
 * plan_internal.h - the plan's private layout, shared by plan.c (loadable
 * sets, sequence ids, accuracy-log sampling) and series.c (the lazy
 * GenerateQueries). Not for use outside src/loadgen/plan.c and series.c.
 */
#ifndef IB_LOADGEN_PLAN_INTERNAL_H
#define IB_LOADGEN_PLAN_INTERNAL_H

#include "loadgen/plan.h"
#include "loadgen/rng.h"

typedef struct lg_set {
    ib_lg_sample_index *idx; /* len entries, MultiStream padding included */
    size_t len;
    size_t dist_end; /* entries without padding */
} lg_set;

/* Accuracy-log parameters of one created series, for seq ids [first, end). */
typedef struct lg_series_reg {
    uint64_t first, end;
    double prob;
    bool always; /* accuracy series: every response is logged */
} lg_series_reg;

struct ib_lg_plan {
    ib_lg_effective e;
    lg_set *sets;
    size_t nsets;
    size_t nacc;          /* accuracy sets first */
    size_t perf_index;    /* SIZE_MAX when none */
    uint64_t next_seq_id; /* first sequence id of the next series */
    lg_series_reg *reg;
    size_t nreg, capreg;
    /* Accuracy-log stream: default-seeded engine at draw `acc_pos`. */
    ib_lg_rng acc_rng;
    uint64_t acc_pos;
    double acc_offset; /* one canonical draw of mt19937(accuracy_log_rng_seed) */
    size_t last_reg;   /* cache for ib_lg_plan_sample_logged */
};

/* Record a new series' sequence range; IB_OK or IB_ENOMEM. */
int lg_plan_register_series(ib_lg_plan *p, uint64_t first, uint64_t count, double prob,
                            bool always);

#endif
