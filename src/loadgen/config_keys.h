/*
 * config_keys.h - the key tables of the config parser (private to
 * src/loadgen/config.c and config_keys.c): the official FromConfig lookups
 * of the current and the r1.1 LoadGen, in order, with their conversions, and
 * the classification of value tokens.
 */
#ifndef IB_LOADGEN_CONFIG_KEYS_H
#define IB_LOADGEN_CONFIG_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "inferbench/loadgen.h"

/* How a looked-up value is converted (the official lookupkv variants). */
enum lg_cfg_kind {
    K_U64,    /* strtoull(v) * umult */
    K_I32,    /* int(strtoull(v)) */
    K_BOOL1,  /* (val == 1) */
    K_BOOLNZ, /* (val != 0) */
    K_MODE,   /* 0..3 -> TestMode */
    K_DBL,    /* strtod(v) * dmult */
};

/* Range check applied at parse time to double values. */
enum lg_cfg_range { R_NONE, R_POS, R_PCT, R_PROB };

enum lg_cfg_flag {
    F_RULES_ONLY = 1, /* current rules: honoured only in the rules file */
    F_TOKEN_GATE = 2, /* only when use_token_latencies is set */
    F_INFER_GATE = 4, /* only when infer_token_latencies is set */
};

/* One official lookup: setting name, fixed scenario (NULL = the run's). */
typedef struct lg_cfg_lookup {
    const char *name;
    const char *scen;
    enum lg_cfg_kind kind;
    uint64_t umult;
    double dmult;
    enum lg_cfg_range range;
    unsigned flags;
    const char *field; /* ib_lg_settings field, for origins */
} lg_cfg_lookup;

/* Current FromConfig, in its order (loadgen.md §1.7). */

typedef struct lg_cfg_table {
    const lg_cfg_lookup *lk;
    size_t n;
} lg_cfg_table;

/* A value token, interpreted the ways a lookup may read it. */
typedef struct lg_cfg_value {
    bool int_ok;         /* a plain integer literal (decimal or 0x hex) */
    uint64_t u;          /* its value when int_ok */
    const char *int_why; /* why it is not an integer (for messages) */
    bool dbl_ok;         /* a finite number strtod reads completely */
    double d;
} lg_cfg_value;

/* Upper bound of the lookups in either table (checked in config_keys.c). */
#define LG_CFG_MAX_LOOKUPS 48

/* The lookups of a rule set, in FromConfig order. */
lg_cfg_table lg_cfg_table_for(enum ib_lg_rules rules);
/* Classify a value token (see config_keys.c). */
void lg_cfg_parse_value(const char *t, lg_cfg_value *v);
/* "*" or an official scenario name (r1.1 also MultiStreamFree). */
bool lg_cfg_known_scenario(const char *s, enum ib_lg_rules rules);
/* A setting name some lookup reads, or one the official files carry unread. */
bool lg_cfg_known_name(const char *name, lg_cfg_table t);
/* The known name closest to `name` (edit distance <= 3), or NULL. */
const char *lg_cfg_closest_name(const char *name, lg_cfg_table t);
/* Could lookup `l` ever read an entry whose scenario part is `scen`? */
bool lg_cfg_reads_scenario(const lg_cfg_lookup *l, const char *scen);
/* Store a looked-up value into the settings field l->field (with units). */
bool lg_cfg_field_set(ib_lg_settings *s, const char *field, const lg_cfg_lookup *l,
                      const lg_cfg_value *v);

#endif
