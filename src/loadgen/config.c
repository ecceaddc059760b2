/*
 * config.c - mlperf.conf / user.conf / audit.config, as TestSettings::FromConfig
 * reads them (loadgen.md §1.7; r1.1 FromConfig for the v1.1 rule set), but
 * strict: every line the official parser silently ignores or misreads is
 * rejected with "<origin>:<line>: ..." and nothing is applied.
 *
 * Two phases. parse_text() splits the text into `model.scenario.setting =
 * value` entries, checks the key (known setting, known scenario, no
 * duplicate) and checks the value against every lookup that could read it
 * (an integer where an integer is read, ranges). apply_lookups() then
 * performs the official lookups in the official order with the official
 * wildcard precedence (model.scenario > *.scenario > model.* > *.*) and unit
 * conversions. Keys the rules ignore in this context (seeds outside the rules
 * file, `*.Server.target_duration`, ...) are accepted and reported as warnings.
 * The embedded rules files live in src/loadgen/embed/.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/common.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/strmap.h"
#include "inferbench/loadgen.h"

/* How a looked-up value is converted (the official lookupkv variants). */
enum kind {
    K_U64,    /* strtoull(v) * umult */
    K_I32,    /* int(strtoull(v)) */
    K_BOOL1,  /* (val == 1) */
    K_BOOLNZ, /* (val != 0) */
    K_MODE,   /* 0..3 -> TestMode */
    K_DBL,    /* strtod(v) * dmult */
};

/* Range check applied at parse time to double values. */
enum range { R_NONE, R_POS, R_PCT, R_PROB };

enum flag {
    F_RULES_ONLY = 1, /* current rules: honoured only in the rules file */
    F_TOKEN_GATE = 2, /* only when use_token_latencies is set */
    F_INFER_GATE = 4, /* only when infer_token_latencies is set */
};

/* One official lookup: setting name, fixed scenario (NULL = the run's). */
typedef struct lookup {
    const char *name;
    const char *scen;
    enum kind kind;
    uint64_t umult;
    double dmult;
    enum range range;
    unsigned flags;
    const char *field; /* ib_lg_settings field, for origins */
} lookup;

/* Current FromConfig, in its order (loadgen.md §1.7). */
static const lookup k_current[] = {
    {"mode", NULL, K_MODE, 1, 1, R_NONE, 0, "mode"},
    {"qsl_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "qsl_rng_seed"},
    {"sample_index_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "sample_index_rng_seed"},
    {"schedule_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "schedule_rng_seed"},
    {"accuracy_log_probability", NULL, K_DBL, 1, 0.01, R_PROB, F_RULES_ONLY,
     "accuracy_log_probability"},
    {"test05", NULL, K_BOOL1, 1, 1, R_NONE, F_RULES_ONLY, "test05"},
    {"test05_qsl_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY, "test05_qsl_rng_seed"},
    {"test05_sample_index_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY,
     "test05_sample_index_rng_seed"},
    {"test05_schedule_rng_seed", NULL, K_U64, 1, 1, R_NONE, F_RULES_ONLY,
     "test05_schedule_rng_seed"},
    {"use_token_latencies", NULL, K_BOOL1, 1, 1, R_NONE, 0, "use_token_latencies"},
    {"ttft_latency", "Server", K_U64, 1000000, 1, R_NONE, F_TOKEN_GATE, "server_ttft_latency"},
    {"tpot_latency", "Server", K_U64, 1000000, 1, R_NONE, F_TOKEN_GATE, "server_tpot_latency"},
    {"infer_token_latencies", NULL, K_BOOL1, 1, 1, R_NONE, 0, "infer_token_latencies"},
    {"token_latency_scaling_factor", NULL, K_U64, 1, 1, R_NONE, F_INFER_GATE,
     "token_latency_scaling_factor"},
    {"target_latency_percentile", "SingleStream", K_DBL, 1, 0.01, R_PCT, 0,
     "single_stream_target_latency_percentile"},
    {"target_latency_percentile", "MultiStream", K_DBL, 1, 0.01, R_PCT, 0,
     "multi_stream_target_latency_percentile"},
    {"samples_per_query", "MultiStream", K_U64, 1, 1, R_NONE, 0,
     "multi_stream_samples_per_query"},
    {"target_latency_percentile", "Server", K_DBL, 1, 0.01, R_PCT, 0,
     "server_target_latency_percentile"},
    {"target_latency", "Server", K_U64, 1000000, 1, R_NONE, 0, "server_target_latency_ns"},
    {"performance_issue_unique", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_unique"},
    {"performance_issue_same", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_same"},
    {"performance_issue_same_index", NULL, K_U64, 1, 1, R_NONE, 0,
     "performance_issue_same_index"},
    {"sample_concatenate_permutation", NULL, K_BOOL1, 1, 1, R_NONE, 0,
     "sample_concatenate_permutation"},
    {"coalesce_queries", "Server", K_BOOLNZ, 1, 1, R_NONE, 0, "server_coalesce_queries"},
    {"max_async_queries", "Server", K_I32, 1, 1, R_NONE, 0, "server_max_async_queries"},
    {"min_duration", NULL, K_U64, 1, 1, R_NONE, 0, "min_duration_ms"},
    {"max_duration", NULL, K_U64, 1, 1, R_NONE, 0, "max_duration_ms"},
    {"min_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "min_query_count"},
    {"max_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "max_query_count"},
    {"performance_sample_count_override", NULL, K_U64, 1, 1, R_NONE, 0,
     "performance_sample_count_override"},
    {"accuracy_sample_count_override", NULL, K_U64, 1, 1, R_NONE, 0,
     "accuracy_sample_count_override"},
    {"target_latency", "SingleStream", K_DBL, 1, 1000000.0, R_POS, 0,
     "single_stream_expected_latency_ns"},
    {"target_latency", "MultiStream", K_DBL, 1, 1000000.0, R_POS, 0,
     "multi_stream_expected_latency_ns"},
    {"target_qps", "Server", K_DBL, 1, 1, R_POS, 0, "server_target_qps"},
    {"target_qps", "Offline", K_DBL, 1, 1, R_POS, 0, "offline_expected_qps"},
    {"print_timestamps", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "print_timestamps"},
    {"accuracy_log_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "accuracy_log_rng_seed"},
    {"accuracy_log_sampling_target", NULL, K_U64, 1, 1, R_NONE, 0,
     "accuracy_log_sampling_target"},
};

/* r1.1 FromConfig (every key honoured from every file), in its order. */
static const lookup k_v11[] = {
    {"mode", NULL, K_MODE, 1, 1, R_NONE, 0, "mode"},
    {"min_duration", NULL, K_U64, 1, 1, R_NONE, 0, "min_duration_ms"},
    {"max_duration", NULL, K_U64, 1, 1, R_NONE, 0, "max_duration_ms"},
    {"min_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "min_query_count"},
    {"max_query_count", NULL, K_U64, 1, 1, R_NONE, 0, "max_query_count"},
    {"qsl_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "qsl_rng_seed"},
    {"sample_index_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "sample_index_rng_seed"},
    {"schedule_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "schedule_rng_seed"},
    {"accuracy_log_rng_seed", NULL, K_U64, 1, 1, R_NONE, 0, "accuracy_log_rng_seed"},
    {"accuracy_log_probability", NULL, K_DBL, 1, 0.01, R_PROB, 0, "accuracy_log_probability"},
    {"accuracy_log_sampling_target", NULL, K_U64, 1, 1, R_NONE, 0,
     "accuracy_log_sampling_target"},
    {"print_timestamps", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "print_timestamps"},
    {"performance_issue_unique", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_unique"},
    {"performance_issue_same", NULL, K_BOOLNZ, 1, 1, R_NONE, 0, "performance_issue_same"},
    {"performance_issue_same_index", NULL, K_U64, 1, 1, R_NONE, 0,
     "performance_issue_same_index"},
    {"performance_sample_count_override", NULL, K_U64, 1, 1, R_NONE, 0,
     "performance_sample_count_override"},
    {"target_latency_percentile", "SingleStream", K_DBL, 1, 0.01, R_PCT, 0,
     "single_stream_target_latency_percentile"},
    {"target_latency", "SingleStream", K_U64, 1000000, 1, R_NONE, 0,
     "single_stream_expected_latency_ns"},
    {"target_latency_percentile", "MultiStream", K_DBL, 1, 0.01, R_PCT, 0,
     "multi_stream_target_latency_percentile"},
    {"target_qps", "MultiStream", K_DBL, 1, 1, R_POS, 0, "multi_stream_target_qps"},
    {"samples_per_query", "MultiStream", K_I32, 1, 1, R_NONE, 0,
     "multi_stream_samples_per_query"},
    {"max_async_queries", "MultiStream", K_I32, 1, 1, R_NONE, 0,
     "multi_stream_max_async_queries"},
    {"target_latency_percentile", "Server", K_DBL, 1, 0.01, R_PCT, 0,
     "server_target_latency_percentile"},
    {"target_latency", "Server", K_U64, 1000000, 1, R_NONE, 0, "server_target_latency_ns"},
    {"target_qps", "Server", K_DBL, 1, 1, R_POS, 0, "server_target_qps"},
    {"coalesce_queries", "Server", K_BOOLNZ, 1, 1, R_NONE, 0, "server_coalesce_queries"},
    {"max_async_queries", "Server", K_I32, 1, 1, R_NONE, 0, "server_max_async_queries"},
    {"target_qps", "Offline", K_DBL, 1, 1, R_POS, 0, "offline_expected_qps"},
};

/* Setting names the official files contain but no lookup reads. */
static const char *const k_unread[] = {"target_duration"};

static const char *const k_scenarios[] = {"SingleStream", "MultiStream", "Server", "Offline"};

typedef struct rules_table {
    const lookup *lk;
    size_t n;
} rules_table;

static rules_table table_for(enum ib_lg_rules rules)
{
    rules_table t;
    if (rules == IB_LG_RULES_V1_1) {
        t.lk = k_v11;
        t.n = IB_ARRAY_LEN(k_v11);
    } else {
        t.lk = k_current;
        t.n = IB_ARRAY_LEN(k_current);
    }
    return t;
}

/* ---- values ------------------------------------------------------------------- */

/* A value token, interpreted the ways a lookup may read it. */
typedef struct value {
    bool int_ok;        /* a plain integer literal (decimal or 0x hex) */
    uint64_t u;         /* its value when int_ok */
    const char *int_why; /* why it is not an integer (for messages) */
    bool dbl_ok;        /* a finite number strtod reads completely */
    double d;
} value;

/*
 * Classify a value token. An integer is [+](0 | [1-9][0-9]* | 0x[hex]+),
 * optionally followed by ".0..." (read identically by strtoull). Leading
 * zeros (octal for strtoull), exponents and fractions are reported through
 * int_why because strtoull would read them differently from strtod.
 */
static void parse_value(const char *t, value *v)
{
    memset(v, 0, sizeof *v);
    const char *p = t;
    if (*p == '+')
        p++;
    if (*p == '-') {
        v->int_why = "a negative value (strtoull would wrap it around)";
    } else if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        const char *h = p + 2;
        uint64_t u = 0;
        bool over = false, any = false;
        for (; *h; h++) {
            int dv;
            if (*h >= '0' && *h <= '9')
                dv = *h - '0';
            else if (*h >= 'a' && *h <= 'f')
                dv = *h - 'a' + 10;
            else if (*h >= 'A' && *h <= 'F')
                dv = *h - 'A' + 10;
            else
                break;
            any = true;
            if (u > (UINT64_MAX >> 4))
                over = true;
            u = (u << 4) | (uint64_t)dv;
        }
        if (any && !*h && !over) {
            v->int_ok = true;
            v->u = u;
        } else {
            v->int_why = over ? "an integer above 2^64-1" : "not an integer";
        }
    } else if (*p >= '0' && *p <= '9') {
        const char *q = p;
        uint64_t u = 0;
        bool over = false;
        for (; *q >= '0' && *q <= '9'; q++) {
            uint64_t dv = (uint64_t)(*q - '0');
            if (u > (UINT64_MAX - dv) / 10)
                over = true;
            u = u * 10 + dv;
        }
        bool zero_frac = false;
        if (*q == '.') {
            const char *f = q + 1;
            while (*f == '0')
                f++;
            if (!*f && f > q + 1)
                zero_frac = true;
        }
        if (q - p > 1 && p[0] == '0')
            v->int_why = "an octal-looking number with a leading 0 (strtoull reads 010 as 8)";
        else if (over)
            v->int_why = "an integer above 2^64-1";
        else if (!*q || zero_frac) {
            v->int_ok = true;
            v->u = u;
        } else if (strpbrk(q, "eE"))
            v->int_why = "a number with an exponent where an integer is read (strtoull reads "
                         "1e3 as 1)";
        else if (*q == '.')
            v->int_why = "a fraction where an integer is read (strtoull drops it)";
        else
            v->int_why = "not a number";
    } else {
        v->int_why = "not a number";
    }
    errno = 0;
    char *end = NULL;
    double d = strtod(t, &end);
    if (end && end != t && !*end && isfinite(d)) {
        v->dbl_ok = true;
        v->d = d;
    }
}

/* ---- parsed file --------------------------------------------------------------- */

typedef struct entry {
    const char *full;  /* model.scenario.name, arena */
    const char *model; /* arena */
    const char *scen;  /* arena: "*" or a scenario */
    const char *name;  /* arena */
    const char *text;  /* value token, arena */
    value val;
    int line;
} entry;

typedef struct parsed {
    ib_arena arena;
    ib_strmap map; /* full key -> entry index */
    entry *e;
    size_t n, cap;
} parsed;

static void parsed_free(parsed *p)
{
    ib_strmap_deinit(&p->map);
    ib_free(p->e);
    ib_arena_deinit(&p->arena);
}

/* Message text: up to 60 bytes of `s`, non-printable bytes as '?'. */
static const char *shown(char *buf, size_t n, const char *s, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 4 < n && i < 60; i++)
        buf[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (len > 60 && k + 4 < n) {
        buf[k++] = '.';
        buf[k++] = '.';
        buf[k++] = '.';
    }
    buf[k] = 0;
    return buf;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool known_scenario(const char *s, enum ib_lg_rules rules)
{
    if (strcmp(s, "*") == 0)
        return true;
    for (size_t i = 0; i < IB_ARRAY_LEN(k_scenarios); i++)
        if (strcmp(s, k_scenarios[i]) == 0)
            return true;
    /* r1.1 had an unofficial MultiStreamFree scenario; its keys are legal. */
    return rules == IB_LG_RULES_V1_1 && strcmp(s, "MultiStreamFree") == 0;
}

static bool known_name(const char *name, rules_table t)
{
    for (size_t i = 0; i < t.n; i++)
        if (strcmp(t.lk[i].name, name) == 0)
            return true;
    for (size_t i = 0; i < IB_ARRAY_LEN(k_unread); i++)
        if (strcmp(k_unread[i], name) == 0)
            return true;
    return false;
}

/* Levenshtein distance, capped (names are short). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    size_t prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = IB_MIN(sub, IB_MIN(del, ins));
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}

static const char *closest_name(const char *name, rules_table t)
{
    const char *best = NULL;
    size_t bd = 4;
    for (size_t i = 0; i < t.n; i++) {
        size_t d = edit_distance(name, t.lk[i].name);
        if (d < bd) {
            bd = d;
            best = t.lk[i].name;
        }
    }
    return best;
}

/* Could lookup `l` ever read an entry with scenario `scen`? */
static bool lookup_reads_scen(const lookup *l, const char *scen)
{
    if (strcmp(scen, "*") == 0)
        return true;
    if (l->scen)
        return strcmp(l->scen, scen) == 0;
    return true; /* the run's scenario: any scenario can be the run's */
}

/* Check one entry's value against every lookup that could read it. */
static int check_value(const entry *en, rules_table t, const char *origin, ib_err *err)
{
    char b1[80];
    for (size_t i = 0; i < t.n; i++) {
        const lookup *l = &t.lk[i];
        if (strcmp(l->name, en->name) != 0 || !lookup_reads_scen(l, en->scen))
            continue;
        const value *v = &en->val;
        if (l->kind == K_DBL) {
            if (!v->dbl_ok)
                return ib_err_set(err, IB_EFORMAT, "%s:%d: %s = %s: not a finite number",
                                  origin, en->line, en->full,
                                  shown(b1, sizeof b1, en->text, strlen(en->text)));
            if (l->range == R_POS && !(v->d > 0.0))
                return ib_err_set(err, IB_EFORMAT, "%s:%d: %s must be > 0", origin, en->line,
                                  en->full);
            if (l->range == R_PCT && !(v->d > 0.0 && v->d <= 100.0))
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%d: %s is a percentile in percent: it must be in (0, 100]",
                                  origin, en->line, en->full);
            if (l->range == R_PROB && !(v->d >= 0.0 && v->d <= 100.0))
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%d: %s is a percentage: it must be in [0, 100]", origin,
                                  en->line, en->full);
            continue;
        }
        if (!v->int_ok)
            return ib_err_set(err, IB_EFORMAT,
                              "%s:%d: %s = %s: the official LoadGen reads this setting as an "
                              "integer; this is %s. Write a plain decimal integer",
                              origin, en->line, en->full,
                              shown(b1, sizeof b1, en->text, strlen(en->text)),
                              v->int_why ? v->int_why : "not an integer");
        switch (l->kind) {
        case K_U64:
            if (l->umult > 1 && v->u > UINT64_MAX / l->umult)
                return ib_err_set(err, IB_EFORMAT, "%s:%d: %s = %s overflows once converted",
                                  origin, en->line, en->full, en->text);
            break;
        case K_I32:
            if (v->u > (uint64_t)INT_MAX)
                return ib_err_set(err, IB_EFORMAT, "%s:%d: %s must be at most %d", origin,
                                  en->line, en->full, INT_MAX);
            break;
        case K_BOOL1:
        case K_BOOLNZ:
            if (v->u > 1)
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%d: %s is a flag: write 0 or 1 (the official LoadGen "
                                  "reads other values inconsistently)",
                                  origin, en->line, en->full);
            break;
        case K_MODE:
            if (v->u > 3)
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%d: %s must be 0 (SubmissionRun), 1 (AccuracyOnly), 2 "
                                  "(PerformanceOnly) or 3 (FindPeakPerformance)",
                                  origin, en->line, en->full);
            break;
        case K_DBL:
            break;
        }
    }
    if (!en->val.int_ok && !en->val.dbl_ok)
        return ib_err_set(err, IB_EFORMAT, "%s:%d: %s = %s: the value must be a number", origin,
                          en->line, en->full, shown(b1, sizeof b1, en->text, strlen(en->text)));
    return IB_OK;
}

/* Diagnose a line that is not `key = value` (tok[0..ntok-1]). */
static int bad_shape(const char *origin, int line, const char *const *tok, const size_t *tlen,
                     size_t ntok, ib_err *err)
{
    char b1[80], b2[80];
    const char *k = shown(b1, sizeof b1, tok[0], tlen[0]);
    if (ntok == 1) {
        if (memchr(tok[0], '=', tlen[0]))
            return ib_err_set(err, IB_EFORMAT,
                              "%s:%d: '%s': write 'key = value' with spaces around '=' (the "
                              "official LoadGen silently ignores this line)",
                              origin, line, k);
        return ib_err_set(err, IB_EFORMAT, "%s:%d: '%s' has no '= value'", origin, line, k);
    }
    if (tlen[1] != 1 || tok[1][0] != '=') {
        if (tok[1][0] == '#')
            return ib_err_set(err, IB_EFORMAT,
                              "%s:%d: '%s' is followed by a comment, not by '= value'", origin,
                              line, k);
        if (tok[0][tlen[0] - 1] == '=' || tok[1][0] == '=')
            return ib_err_set(err, IB_EFORMAT,
                              "%s:%d: write 'key = value' with spaces on both sides of '='",
                              origin, line);
        return ib_err_set(err, IB_EFORMAT, "%s:%d: expected '=' after '%s', found '%s'", origin,
                          line, k, shown(b2, sizeof b2, tok[1], tlen[1]));
    }
    if (ntok == 2)
        return ib_err_set(err, IB_EFORMAT, "%s:%d: '%s =' has no value", origin, line, k);
    if (tok[3][0] == '#')
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%d: comment after the value: put comments on their own line (the "
                          "official LoadGen rejects the whole file)",
                          origin, line);
    return ib_err_set(err, IB_EFORMAT,
                      "%s:%d: extra text '%s' after the value (the official LoadGen would take "
                      "the last word as the value)",
                      origin, line, shown(b2, sizeof b2, tok[ntok - 1], tlen[ntok - 1]));
}

/* Split key into model / scenario / name and store the entry. */
static int add_entry(parsed *p, rules_table t, enum ib_lg_rules rules, const char *origin,
                     int line, const char *key, size_t klen, const char *val, size_t vlen,
                     ib_err *err)
{
    char b1[80];
    const char *shown_key = shown(b1, sizeof b1, key, klen);
    const char *d2 = NULL, *d1 = NULL; /* last and second-to-last '.' */
    for (size_t i = 0; i < klen; i++)
        if (key[i] == '.') {
            d1 = d2;
            d2 = key + i;
        }
    if (!d1)
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%d: key '%s' must have the form model.scenario.setting (model and "
                          "scenario may be *)",
                          origin, line, shown_key);
    size_t mlen = (size_t)(d1 - key), slen = (size_t)(d2 - d1 - 1);
    size_t nlen = klen - (size_t)(d2 - key) - 1;
    if (mlen == 0 || slen == 0 || nlen == 0 || memchr(key, '.', mlen) == key ||
        key[mlen - 1] == '.')
        return ib_err_set(err, IB_EFORMAT, "%s:%d: key '%s' has an empty part", origin, line,
                          shown_key);
    entry en;
    memset(&en, 0, sizeof en);
    en.line = line;
    en.full = ib_arena_strndup(&p->arena, key, klen);
    en.model = ib_arena_strndup(&p->arena, key, mlen);
    en.scen = ib_arena_strndup(&p->arena, d1 + 1, slen);
    en.name = ib_arena_strndup(&p->arena, d2 + 1, nlen);
    en.text = ib_arena_strndup(&p->arena, val, vlen);
    if (!en.full || !en.model || !en.scen || !en.name || !en.text)
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
    if (!known_scenario(en.scen, rules))
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%d: key '%s': unknown scenario '%s' (expected SingleStream, "
                          "MultiStream, Server, Offline or *; keys are model.scenario.setting)",
                          origin, line, shown_key, en.scen);
    if (!known_name(en.name, t)) {
        const char *near = closest_name(en.name, t);
        return ib_err_set(err, IB_EFORMAT, "%s:%d: key '%s': unknown setting '%s'%s%s%s%s",
                          origin, line, shown_key, en.name, near ? " (did you mean '" : "",
                          near ? near : "", near ? "'?)" : "",
                          rules == IB_LG_RULES_V1_1 ? " under the v1.1 rules" : "");
    }
    int64_t prev;
    if (ib_strmap_get(&p->map, en.full, &prev))
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%d: key '%s' is already set on line %d (the official LoadGen "
                          "silently keeps the last one)",
                          origin, line, shown_key, p->e[prev].line);
    parse_value(en.text, &en.val);
    int rc = check_value(&en, t, origin, err);
    if (rc)
        return rc;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        entry *ne = ib_realloc(p->e, cap * sizeof *ne);
        if (!ne)
            return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
        p->e = ne;
        p->cap = cap;
    }
    if (ib_strmap_put(&p->map, en.full, (int64_t)p->n))
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
    p->e[p->n++] = en;
    return IB_OK;
}

static int parse_text(parsed *p, const char *text, size_t len, const char *origin,
                      enum ib_lg_rules rules, ib_err *err)
{
    rules_table t = table_for(rules);
    int line = 0;
    size_t pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        line++;
        if (memchr(text + pos, 0, end - pos))
            return ib_err_set(err, IB_EFORMAT, "%s:%d: NUL byte in a text file", origin, line);
        const char *tok[5];
        size_t tlen[5], ntok = 0;
        size_t i = pos;
        while (i < end && ntok < 5) {
            while (i < end && is_ws(text[i]))
                i++;
            if (i >= end)
                break;
            size_t s = i;
            while (i < end && !is_ws(text[i]))
                i++;
            tok[ntok] = text + s;
            tlen[ntok] = i - s;
            ntok++;
        }
        pos = end + 1;
        /* A line whose first word starts with '#' is a comment (the official
         * treats a lone '#' so and never matches "#word" keys). */
        if (ntok == 0 || tok[0][0] == '#')
            continue;
        if (ntok != 3 || tlen[1] != 1 || tok[1][0] != '=')
            return bad_shape(origin, line, tok, tlen, ntok, err);
        int rc = add_entry(p, t, rules, origin, line, tok[0], tlen[0], tok[2], tlen[2], err);
        if (rc)
            return rc;
        if (line == INT_MAX)
            return ib_err_set(err, IB_EFORMAT, "%s: too many lines", origin);
    }
    return IB_OK;
}

/* ---- lookups --------------------------------------------------------------------- */

/* The official 4-step lookup: model.scen.name, *.scen.name, model.*.name, *.*.name. */
static const entry *find(const parsed *p, ib_strbuf *kb, const char *model, const char *scen,
                         const char *name)
{
    const char *ms[4] = {model, "*", model, "*"};
    const char *ss[4] = {scen, scen, "*", "*"};
    for (int i = 0; i < 4; i++) {
        ib_strbuf_reset(kb);
        ib_strbuf_printf(kb, "%s.%s.%s", ms[i], ss[i], name);
        if (kb->oom)
            return NULL;
        int64_t idx;
        if (ib_strmap_get(&p->map, ib_strbuf_cstr(kb), &idx))
            return &p->e[idx];
    }
    return NULL;
}

static bool field_set(ib_lg_settings *s, const char *field, const lookup *l, const value *v)
{
    uint64_t u = v->int_ok ? v->u * l->umult : 0;
    double d = v->d * l->dmult;
#define U64F(f)                                                                                    \
    if (strcmp(field, #f) == 0) {                                                                  \
        s->f = u;                                                                                  \
        return true;                                                                               \
    }
#define DBLF(f)                                                                                    \
    if (strcmp(field, #f) == 0) {                                                                  \
        s->f = (l->kind == K_DBL) ? d : (double)u;                                                 \
        return true;                                                                               \
    }
#define BOOLF(f)                                                                                   \
    if (strcmp(field, #f) == 0) {                                                                  \
        s->f = (l->kind == K_BOOL1) ? (v->u == 1) : (v->u != 0);                                   \
        return true;                                                                               \
    }
    if (strcmp(field, "mode") == 0) {
        s->mode = (enum ib_lg_mode)v->u;
        return true;
    }
    U64F(qsl_rng_seed)
    U64F(sample_index_rng_seed)
    U64F(schedule_rng_seed)
    U64F(test05_qsl_rng_seed)
    U64F(test05_sample_index_rng_seed)
    U64F(test05_schedule_rng_seed)
    U64F(server_ttft_latency)
    U64F(server_tpot_latency)
    U64F(token_latency_scaling_factor)
    U64F(multi_stream_samples_per_query)
    U64F(server_target_latency_ns)
    U64F(performance_issue_same_index)
    U64F(server_max_async_queries)
    U64F(multi_stream_max_async_queries)
    U64F(min_duration_ms)
    U64F(max_duration_ms)
    U64F(min_query_count)
    U64F(max_query_count)
    U64F(performance_sample_count_override)
    U64F(accuracy_sample_count_override)
    U64F(accuracy_log_rng_seed)
    U64F(accuracy_log_sampling_target)
    DBLF(accuracy_log_probability)
    DBLF(single_stream_target_latency_percentile)
    DBLF(multi_stream_target_latency_percentile)
    DBLF(server_target_latency_percentile)
    DBLF(single_stream_expected_latency_ns)
    DBLF(multi_stream_expected_latency_ns)
    DBLF(server_target_qps)
    DBLF(offline_expected_qps)
    DBLF(multi_stream_target_qps)
    BOOLF(test05)
    BOOLF(use_token_latencies)
    BOOLF(infer_token_latencies)
    BOOLF(performance_issue_unique)
    BOOLF(performance_issue_same)
    BOOLF(sample_concatenate_permutation)
    BOOLF(server_coalesce_queries)
    BOOLF(print_timestamps)
#undef U64F
#undef DBLF
#undef BOOLF
    return false;
}

typedef struct applied {
    const char *field;
    int line;
} applied;

/* Append "origin:line: msg\n" to the caller's buffer (truncating safely). */
static void warn(char *buf, size_t size, const char *origin, int line, const char *msg)
{
    if (!buf || size == 0)
        return;
    size_t used = strnlen(buf, size);
    if (used + 2 >= size)
        return;
    int n = snprintf(buf + used, size - used, "%s:%d: %s\n", origin, line, msg);
    if (n < 0 || (size_t)n >= size - used)
        buf[used] = 0; /* drop a line that does not fit whole */
}

/* Warn about entries for this model and scenario that no lookup reads. */
static void warn_unused(const parsed *p, rules_table t, const char *model, const char *scenario,
                        enum ib_lg_conf_type type, bool v11, const char *origin, char *wbuf,
                        size_t wsize)
{
    if (type == IB_LG_CONF_RULES || !wbuf)
        return;
    for (size_t i = 0; i < p->n; i++) {
        const entry *en = &p->e[i];
        if (strcmp(en->model, model) != 0 && strcmp(en->model, "*") != 0)
            continue;
        if (strcmp(en->scen, scenario) != 0 && strcmp(en->scen, "*") != 0)
            continue;
        bool readable = false, rules_only = false;
        for (size_t j = 0; j < t.n && !readable; j++) {
            const lookup *l = &t.lk[j];
            if (strcmp(l->name, en->name) != 0)
                continue;
            if (l->scen && strcmp(en->scen, "*") != 0 && strcmp(l->scen, en->scen) != 0)
                continue;
            if (!v11 && (l->flags & F_RULES_ONLY)) {
                rules_only = true;
                continue;
            }
            readable = true;
        }
        if (readable)
            continue;
        char msg[400];
        if (rules_only)
            snprintf(msg, sizeof msg,
                     "%s is ignored: %s is read only from the rules file (mlperf.conf) under "
                     "the current rules",
                     en->full, en->name);
        else
            snprintf(msg, sizeof msg, "%s is ignored: no setting reads '%s' in %s", en->full,
                     en->name, scenario);
        warn(wbuf, wsize, origin, en->line, msg);
    }
}

/* Run the lookups on a copy of the settings; record what was applied. */
static int apply_lookups(const parsed *p, ib_lg_settings *s, const char *origin,
                         const char *model, const char *scenario, enum ib_lg_conf_type type,
                         applied *out, size_t *nout, ib_err *err)
{
    rules_table t = table_for(s->rules);
    bool v11 = s->rules == IB_LG_RULES_V1_1;
    ib_strbuf kb;
    ib_strbuf_init(&kb);
    *nout = 0;
    for (size_t i = 0; i < t.n; i++) {
        const lookup *l = &t.lk[i];
        if (!v11 && (l->flags & F_RULES_ONLY) && type != IB_LG_CONF_RULES)
            continue;
        if ((l->flags & F_TOKEN_GATE) && !s->use_token_latencies)
            continue;
        if ((l->flags & F_INFER_GATE) && !s->infer_token_latencies)
            continue;
        const entry *en = find(p, &kb, model, l->scen ? l->scen : scenario, l->name);
        if (kb.oom) {
            ib_strbuf_deinit(&kb);
            return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
        }
        if (!en)
            continue;
        if (!field_set(s, l->field, l, &en->val))
            IB_ASSERT(!"config: lookup names an unknown field");
        out[*nout].field = l->field;
        out[*nout].line = en->line;
        (*nout)++;
    }
    ib_strbuf_deinit(&kb);
    return IB_OK;
}

int ib_lg_settings_apply_conf(ib_lg_settings *s, const char *text, size_t len,
                              const char *origin, const char *model, const char *scenario,
                              enum ib_lg_conf_type type, ib_lg_settings_origin *origins,
                              char *warnings, size_t warnings_size, ib_err *err)
{
    if (!s || (!text && len) || !model || !scenario)
        return ib_err_set(err, IB_EINVAL, "apply_conf: NULL argument");
    if (!origin)
        origin = "config";
    if ((unsigned)type > IB_LG_CONF_AUDIT)
        return ib_err_set(err, IB_EINVAL, "apply_conf: invalid conf type %d", (int)type);
    if (!known_scenario(scenario, IB_LG_RULES_CURRENT) || strcmp(scenario, "*") == 0)
        return ib_err_set(err, IB_EINVAL,
                          "apply_conf: scenario '%s' is not SingleStream, MultiStream, Server or "
                          "Offline",
                          scenario);
    if (!*model || strchr(model, ' '))
        return ib_err_set(err, IB_EINVAL, "apply_conf: invalid model name '%s'", model);
    if (warnings && warnings_size)
        warnings[0] = 0;
    parsed p;
    memset(&p, 0, sizeof p);
    ib_arena_init(&p.arena, 0);
    ib_strmap_init(&p.map);
    int rc = parse_text(&p, text ? text : "", len, origin, s->rules, err);
    if (rc) {
        parsed_free(&p);
        return rc;
    }
    rules_table t = table_for(s->rules);
    ib_lg_settings next = *s;
    applied done[IB_ARRAY_LEN(k_current) + IB_ARRAY_LEN(k_v11)];
    size_t ndone = 0;
    rc = apply_lookups(&p, &next, origin, model, scenario, type, done, &ndone, err);
    if (rc) {
        parsed_free(&p);
        return rc;
    }
    if (origins) {
        char where[512];
        for (size_t i = 0; i < ndone; i++) {
            snprintf(where, sizeof where, "%s:%d", origin, done[i].line);
            if (ib_lg_settings_origin_set(origins, done[i].field, where)) {
                parsed_free(&p);
                return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
            }
        }
    }
    warn_unused(&p, t, model, scenario, type, s->rules == IB_LG_RULES_V1_1, origin, warnings,
                warnings_size);
    *s = next;
    parsed_free(&p);
    ib_err_clear(err);
    return IB_OK;
}

int ib_lg_settings_apply_conf_file(ib_lg_settings *s, const char *path, const char *model,
                                   const char *scenario, enum ib_lg_conf_type type,
                                   ib_lg_settings_origin *origins, char *warnings,
                                   size_t warnings_size, ib_err *err)
{
    if (!path)
        return ib_err_set(err, IB_EINVAL, "apply_conf_file: NULL path");
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, 64u << 20, &text, &len, err);
    if (rc)
        return rc;
    rc = ib_lg_settings_apply_conf(s, text, len, path, model, scenario, type, origins, warnings,
                                   warnings_size, err);
    ib_free(text);
    return rc;
}

/* Embedded rules files (tools/embed-file.sh, src/loadgen/embed/). */
extern const unsigned char ib_embed_loadgen_mlperf_v6_1_conf[];
extern const size_t ib_embed_loadgen_mlperf_v6_1_conf_len;
extern const unsigned char ib_embed_loadgen_mlperf_v1_1_conf[];
extern const size_t ib_embed_loadgen_mlperf_v1_1_conf_len;

const char *ib_lg_mlperf_conf_embedded(enum ib_lg_rules rules, size_t *len)
{
    if (rules == IB_LG_RULES_V1_1) {
        if (len)
            *len = ib_embed_loadgen_mlperf_v1_1_conf_len;
        return (const char *)ib_embed_loadgen_mlperf_v1_1_conf;
    }
    if (len)
        *len = ib_embed_loadgen_mlperf_v6_1_conf_len;
    return (const char *)ib_embed_loadgen_mlperf_v6_1_conf;
}
