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
 * The key tables and value classification are in config_keys.c; the embedded
 * rules files live in src/loadgen/embed/.
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
#include "loadgen/config_keys.h"

/* ---- parsed file --------------------------------------------------------------- */

typedef struct entry {
    const char *full;  /* model.scenario.name, arena */
    const char *model; /* arena */
    const char *scen;  /* arena: "*" or a scenario */
    const char *name;  /* arena */
    const char *text;  /* value token, arena */
    lg_cfg_value val;
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

/* Check one entry's value against every lookup that could read it. */
static int check_value(const entry *en, lg_cfg_table t, const char *origin, ib_err *err)
{
    char b1[80];
    for (size_t i = 0; i < t.n; i++) {
        const lg_cfg_lookup *l = &t.lk[i];
        if (strcmp(l->name, en->name) != 0 || !lg_cfg_reads_scenario(l, en->scen)) continue;
        const lg_cfg_value *v = &en->val;
        if (l->kind == K_DBL) {
            if (!v->dbl_ok)
                return ib_err_set(err, IB_EFORMAT, "%s:%d: %s = %s: not a finite number", origin,
                                  en->line, en->full,
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
                return ib_err_set(err, IB_EFORMAT, "%s:%d: %s must be at most %d", origin, en->line,
                                  en->full, INT_MAX);
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

/* A number as the official parser validates it: strtoul (base 0) or strtod
 * consumes the whole token. */
static bool official_number(const char *t, size_t n)
{
    char buf[128];
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, t, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    (void)strtoul(buf, &end, 0);
    if (*end == 0) return true;
    (void)strtod(buf, &end);
    return *end == 0;
}

/*
 * A line whose first word starts with '#'. The official parser skips a lone
 * "#" and a single "#word", and stores "#key = <numbers>" under a key no
 * lookup ever matches (a commented-out setting); anything else there, such
 * as "#some words", makes it reject the whole file. Accept exactly what it
 * accepts, so a file valid here is valid for the official LoadGen too.
 */
static int check_comment(const char *s, size_t n, const char *origin, int line, ib_err *err)
{
    size_t i = 0, k = 0;
    const char *first = NULL;
    size_t flen = 0;
    while (i < n) {
        while (i < n && is_ws(s[i]))
            i++;
        if (i >= n) break;
        size_t b = i;
        while (i < n && !is_ws(s[i]))
            i++;
        if (k == 0) {
            first = s + b;
            flen = i - b;
            if (flen == 1) return IB_OK; /* "# ..." */
        } else if (k == 1) {
            if (i - b == 1 && s[b] == '#') return IB_OK;
            if (i - b != 1 || s[b] != '=') {
                char b1[80];
                return ib_err_set(err, IB_EFORMAT,
                                  "%s:%d: '%s ...': write '# ' with a space to start a "
                                  "comment (the official LoadGen rejects the whole file)",
                                  origin, line, shown(b1, sizeof b1, first, flen));
            }
        } else if (!official_number(s + b, i - b)) {
            return ib_err_set(err, IB_EFORMAT,
                              "%s:%d: commented-out setting with a non-numeric value: write "
                              "'# ' with a space (the official LoadGen rejects the whole file)",
                              origin, line);
        }
        k++;
    }
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
                              "%s:%d: write 'key = value' with spaces on both sides of '='", origin,
                              line);
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
static int add_entry(parsed *p, lg_cfg_table t, enum ib_lg_rules rules, const char *origin,
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
    if (!lg_cfg_known_scenario(en.scen, rules))
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%d: key '%s': unknown scenario '%s' (expected SingleStream, "
                          "MultiStream, Server, Offline or *; keys are model.scenario.setting)",
                          origin, line, shown_key, en.scen);
    if (!lg_cfg_known_name(en.name, t)) {
        const char *near = lg_cfg_closest_name(en.name, t);
        return ib_err_set(err, IB_EFORMAT, "%s:%d: key '%s': unknown setting '%s'%s%s%s%s", origin,
                          line, shown_key, en.name, near ? " (did you mean '" : "",
                          near ? near : "", near ? "'?)" : "",
                          rules == IB_LG_RULES_V1_1 ? " under the v1.1 rules" : "");
    }
    int64_t prev;
    if (ib_strmap_get(&p->map, en.full, &prev))
        return ib_err_set(err, IB_EFORMAT,
                          "%s:%d: key '%s' is already set on line %d (the official LoadGen "
                          "silently keeps the last one)",
                          origin, line, shown_key, p->e[prev].line);
    lg_cfg_parse_value(en.text, &en.val);
    int rc = check_value(&en, t, origin, err);
    if (rc) return rc;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        entry *ne = ib_realloc(p->e, cap * sizeof *ne);
        if (!ne) return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
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
    lg_cfg_table t = lg_cfg_table_for(rules);
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
            if (i >= end) break;
            size_t s = i;
            while (i < end && !is_ws(text[i]))
                i++;
            tok[ntok] = text + s;
            tlen[ntok] = i - s;
            ntok++;
        }
        const char *lstart = text + pos;
        size_t llen = end - pos;
        pos = end + 1;
        if (ntok == 0) continue;
        if (tok[0][0] == '#') {
            /* A comment line, or a commented-out setting ("#key = 5"). */
            int rc = check_comment(lstart, llen, origin, line, err);
            if (rc) return rc;
            continue;
        }
        if (ntok != 3 || tlen[1] != 1 || tok[1][0] != '=')
            return bad_shape(origin, line, tok, tlen, ntok, err);
        int rc = add_entry(p, t, rules, origin, line, tok[0], tlen[0], tok[2], tlen[2], err);
        if (rc) return rc;
        if (line == INT_MAX) return ib_err_set(err, IB_EFORMAT, "%s: too many lines", origin);
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
        if (kb->oom) return NULL;
        int64_t idx;
        if (ib_strmap_get(&p->map, ib_strbuf_cstr(kb), &idx)) return &p->e[idx];
    }
    return NULL;
}

typedef struct applied {
    const char *field;
    int line;
} applied;

/* Append "origin:line: msg\n" to the caller's buffer (truncating safely). */
static void warn(char *buf, size_t size, const char *origin, int line, const char *msg)
{
    if (!buf || size == 0) return;
    size_t used = strnlen(buf, size);
    if (used + 2 >= size) return;
    int n = snprintf(buf + used, size - used, "%s:%d: %s\n", origin, line, msg);
    if (n < 0 || (size_t)n >= size - used) buf[used] = 0; /* drop a line that does not fit whole */
}

/* Warn about entries for this model and scenario that no lookup reads. */
static void warn_unused(const parsed *p, lg_cfg_table t, const char *model, const char *scenario,
                        enum ib_lg_conf_type type, bool v11, const char *origin, char *wbuf,
                        size_t wsize)
{
    if (type == IB_LG_CONF_RULES || !wbuf) return;
    for (size_t i = 0; i < p->n; i++) {
        const entry *en = &p->e[i];
        if (strcmp(en->model, model) != 0 && strcmp(en->model, "*") != 0) continue;
        if (strcmp(en->scen, scenario) != 0 && strcmp(en->scen, "*") != 0) continue;
        bool readable = false, rules_only = false;
        for (size_t j = 0; j < t.n && !readable; j++) {
            const lg_cfg_lookup *l = &t.lk[j];
            if (strcmp(l->name, en->name) != 0) continue;
            if (l->scen && strcmp(en->scen, "*") != 0 && strcmp(l->scen, en->scen) != 0) continue;
            if (!v11 && (l->flags & F_RULES_ONLY)) {
                rules_only = true;
                continue;
            }
            readable = true;
        }
        if (readable) continue;
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
static int apply_lookups(const parsed *p, ib_lg_settings *s, const char *origin, const char *model,
                         const char *scenario, enum ib_lg_conf_type type, applied *out,
                         size_t *nout, ib_err *err)
{
    lg_cfg_table t = lg_cfg_table_for(s->rules);
    bool v11 = s->rules == IB_LG_RULES_V1_1;
    ib_strbuf kb;
    ib_strbuf_init(&kb);
    *nout = 0;
    for (size_t i = 0; i < t.n; i++) {
        const lg_cfg_lookup *l = &t.lk[i];
        if (!v11 && (l->flags & F_RULES_ONLY) && type != IB_LG_CONF_RULES) continue;
        if ((l->flags & F_TOKEN_GATE) && !s->use_token_latencies) continue;
        if ((l->flags & F_INFER_GATE) && !s->infer_token_latencies) continue;
        const entry *en = find(p, &kb, model, l->scen ? l->scen : scenario, l->name);
        if (kb.oom) {
            ib_strbuf_deinit(&kb);
            return ib_err_set(err, IB_ENOMEM, "%s: out of memory", origin);
        }
        if (!en) continue;
        if (!lg_cfg_field_set(s, l->field, l, &en->val))
            IB_ASSERT(!"config: lookup names an unknown field");
        out[*nout].field = l->field;
        out[*nout].line = en->line;
        (*nout)++;
    }
    ib_strbuf_deinit(&kb);
    return IB_OK;
}

int ib_lg_settings_apply_conf(ib_lg_settings *s, const char *text, size_t len, const char *origin,
                              const char *model, const char *scenario, enum ib_lg_conf_type type,
                              ib_lg_settings_origin *origins, char *warnings, size_t warnings_size,
                              ib_err *err)
{
    if (!s || (!text && len) || !model || !scenario)
        return ib_err_set(err, IB_EINVAL, "apply_conf: NULL argument");
    if (!origin) origin = "config";
    if ((unsigned)type > IB_LG_CONF_AUDIT)
        return ib_err_set(err, IB_EINVAL, "apply_conf: invalid conf type %d", (int)type);
    if (!lg_cfg_known_scenario(scenario, IB_LG_RULES_CURRENT) || strcmp(scenario, "*") == 0)
        return ib_err_set(err, IB_EINVAL,
                          "apply_conf: scenario '%s' is not SingleStream, MultiStream, Server or "
                          "Offline",
                          scenario);
    if (!*model || strchr(model, ' '))
        return ib_err_set(err, IB_EINVAL, "apply_conf: invalid model name '%s'", model);
    if (warnings && warnings_size) warnings[0] = 0;
    parsed p;
    memset(&p, 0, sizeof p);
    ib_arena_init(&p.arena, 0);
    ib_strmap_init(&p.map);
    int rc = parse_text(&p, text ? text : "", len, origin, s->rules, err);
    if (rc) {
        parsed_free(&p);
        return rc;
    }
    lg_cfg_table t = lg_cfg_table_for(s->rules);
    ib_lg_settings next = *s;
    applied done[LG_CFG_MAX_LOOKUPS];
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
    if (!path) return ib_err_set(err, IB_EINVAL, "apply_conf_file: NULL path");
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, 64u << 20, &text, &len, err);
    if (rc) return rc;
    rc = ib_lg_settings_apply_conf(s, text, len, path, model, scenario, type, origins, warnings,
                                   warnings_size, err);
    ib_free(text);
    return rc;
}
