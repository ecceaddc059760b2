/*
 * test_loadgen_logs_golden.c - every ../shared/golden case through the real
 * engine with the harness' null SUT and QSL, and the comparison of the
 * output files with expected.json in every deterministic field (golden
 * README "What must match", items 1-11): requested/effective keys with value
 * and JSON type, identity, loaded_qsl_set records, generated_* records, the
 * issue order (accuracy log and sut_issued.txt), accuracy-log layout and
 * (seq_id, qsl_idx, data) set, result_query_count, Server scheduled
 * samples/s, the deterministic messages in order with no extra error,
 * required keys, deterministic counts, value types, the record field order,
 * and the summary's identity lines, Test Parameters block and footer.
 *
 * golden_compare() is also used by the CLI test (test_cli_run_golden.c).
 */
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/common.h"
#include "base/fileio.h"
#include "inferbench/loadgen.h"
#include "test.h"

int golden_compare(const char *case_dir, const char *out_dir);
int golden_case_dir(const char *name, char *buf, size_t n);

/* ---- helpers -------------------------------------------------------------- */

static int g_bad;

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "# golden mismatch: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    g_bad++;
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = NULL;
    size_t l = 0;
    if (ib_file_read_all(path, 0, &text, &l, NULL) != IB_OK)
        return NULL;
    if (len)
        *len = l;
    return text;
}

/* jansson keeps integers in long long: quote integers of 19+ digits (the
 * 64-bit seeds) so both sides parse and compare as the same string. */
static char *quote_big_ints(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(2 * n + 16);
    size_t k = 0;
    bool in_str = false;
    for (size_t i = 0; i < n;) {
        char c = s[i];
        if (in_str) {
            out[k++] = c;
            if (c == '\\' && i + 1 < n) {
                out[k++] = s[i + 1];
                i += 2;
                continue;
            }
            if (c == '"')
                in_str = false;
            i++;
            continue;
        }
        if (c == '"') {
            in_str = true;
            out[k++] = c;
            i++;
            continue;
        }
        if (isdigit((unsigned char)c) && (i == 0 || !isalnum((unsigned char)s[i - 1]))) {
            size_t j = i;
            while (j < n && isdigit((unsigned char)s[j]))
                j++;
            bool integer = j >= n || (s[j] != '.' && s[j] != 'e' && s[j] != 'E');
            if (integer && j - i >= 19) {
                out[k++] = '"';
                out[k++] = '#';
                memcpy(out + k, s + i, j - i);
                k += j - i;
                out[k++] = '"';
                i = j;
                continue;
            }
            memcpy(out + k, s + i, j - i);
            k += j - i;
            i = j;
            continue;
        }
        out[k++] = c;
        i++;
    }
    out[k] = '\0';
    return out;
}

static json_t *parse(const char *text)
{
    char *q = quote_big_ints(text);
    json_error_t e;
    json_t *j = json_loads(q, 0, &e);
    free(q);
    return j;
}

typedef struct rec {
    char *key;
    json_t *value;
} rec;

typedef struct detail {
    rec *r;
    size_t n;
} detail;

/* Parse every :::MLLOG line; checks the record's field order on the way. */
static void load_detail(const char *out_dir, detail *d)
{
    memset(d, 0, sizeof *d);
    char *text = slurp(out_dir, "mlperf_log_detail.txt", NULL);
    if (!text) {
        bad("no mlperf_log_detail.txt");
        return;
    }
    size_t cap = 256;
    d->r = calloc(cap, sizeof *d->r);
    static const char *const order[] = {"{\"key\": ", ", \"value\": ", ", \"time_ms\": ",
                                        ", \"namespace\": \"mlperf::logging\", ",
                                        "\"event_type\": \"POINT_IN_TIME\", ",
                                        "\"metadata\": {\"is_error\": ", ", \"is_warning\": ",
                                        ", \"file\": ", ", \"line_no\": ", ", \"pid\": ",
                                        ", \"tid\": "};
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, ":::MLLOG {", 10) != 0) {
            bad("detail line without the :::MLLOG prefix: %.60s", line);
        } else {
            const char *p = line + 9;
            for (size_t i = 0; i < IB_ARRAY_LEN(order); i++) {
                const char *q = strstr(p, order[i]);
                if (!q) {
                    bad("record fields out of order (%s): %.80s", order[i], line);
                    break;
                }
                p = q + strlen(order[i]);
            }
            json_t *j = parse(line + 9);
            if (!j || !json_is_object(j)) {
                bad("detail line is not one JSON object: %.80s", line);
            } else {
                json_t *meta = json_object_get(j, "metadata");
                if (!json_is_boolean(json_object_get(meta, "is_error")) ||
                    !json_is_boolean(json_object_get(meta, "is_warning")))
                    bad("is_error/is_warning are not booleans: %.80s", line);
                if (d->n == cap) {
                    cap *= 2;
                    d->r = realloc(d->r, cap * sizeof *d->r);
                }
                d->r[d->n].key = strdup(json_string_value(json_object_get(j, "key")));
                d->r[d->n].value = json_incref(json_object_get(j, "value"));
                d->n++;
                json_decref(j);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    ib_free(text);
}

static void free_detail(detail *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->r[i].key);
        json_decref(d->r[i].value);
    }
    free(d->r);
}

static size_t count_key(const detail *d, const char *key)
{
    size_t c = 0;
    for (size_t i = 0; i < d->n; i++)
        c += strcmp(d->r[i].key, key) == 0;
    return c;
}

static json_t *first_value(const detail *d, const char *key)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->r[i].key, key) == 0)
            return d->r[i].value;
    return NULL;
}

static bool json_num(const json_t *v)
{
    return json_is_integer(v) || json_is_real(v);
}

/* Items 1, 2: requested_* / effective_* (value, type, order) and identity. */
static void cmp_settings(const json_t *exp, const detail *d)
{
    const char *blocks[2] = {"requested_settings", "effective_settings"};
    size_t pos = 0; /* order: the settings records appear in the expected order */
    for (int b = 0; b < 2; b++) {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(exp, blocks[b]), k, v)
        {
            if (count_key(d, k) != 1) {
                bad("%s logged %zu times", k, count_key(d, k));
                continue;
            }
            if (!json_equal(first_value(d, k), v)) {
                char *a = json_dumps(first_value(d, k), JSON_ENCODE_ANY);
                char *e = json_dumps(v, JSON_ENCODE_ANY);
                bad("%s = %s, expected %s (value and JSON type)", k, a, e);
                free(a);
                free(e);
            }
            while (pos < d->n && strcmp(d->r[pos].key, k) != 0)
                pos++;
            if (pos == d->n) {
                bad("%s out of order", k);
                pos = 0;
            }
        }
    }
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(exp, "identity"), k, v)
    {
        if (!first_value(d, k) || !json_equal(first_value(d, k), v))
            bad("identity %s differs", k);
    }
}

/* Items 3, 4, 7: loaded sets, generated records, result_query_count. */
static void cmp_records(const json_t *exp, const detail *d)
{
    json_t *sets = json_object_get(exp, "loaded_qsl_sets");
    size_t si = 0, gi = 0;
    json_t *gen = json_object_get(exp, "generated");
    static const char *const gkeys[3] = {"generated_query_count", "generated_samples_per_query",
                                         "generated_query_duration"};
    static const char *const ekeys[3] = {"query_count", "samples_per_query", "query_duration_ns"};
    size_t gk[3] = {0, 0, 0};
    for (size_t i = 0; i < d->n; i++) {
        if (strcmp(d->r[i].key, "loaded_qsl_set") == 0) {
            if (!json_equal(d->r[i].value, json_array_get(sets, si)))
                bad("loaded_qsl_set #%zu differs (%zu vs %zu entries)", si,
                    json_array_size(d->r[i].value), json_array_size(json_array_get(sets, si)));
            si++;
        }
        for (int k = 0; k < 3; k++)
            if (strcmp(d->r[i].key, gkeys[k]) == 0) {
                json_t *want = json_object_get(json_array_get(gen, gk[k]), ekeys[k]);
                if (!json_equal(d->r[i].value, want))
                    bad("%s #%zu = %lld, expected %lld", gkeys[k], gk[k],
                        (long long)json_integer_value(d->r[i].value),
                        (long long)json_integer_value(want));
                gk[k]++;
            }
    }
    gi = gk[0];
    if (si != json_array_size(sets))
        bad("%zu loaded_qsl_set records, expected %zu", si, json_array_size(sets));
    if (gi != json_array_size(gen))
        bad("%zu generated_* series, expected %zu", gi, json_array_size(gen));
    json_t *rq = json_object_get(exp, "result_query_count");
    json_t *ours = first_value(d, "result_query_count");
    if (json_is_null(rq) ? ours != NULL : !json_equal(ours, rq))
        bad("result_query_count differs");
    json_t *sps = json_object_get(exp, "result_scheduled_samples_per_sec");
    if (sps && !json_is_null(sps) &&
        !json_equal(first_value(d, "result_scheduled_samples_per_sec"), sps))
        bad("result_scheduled_samples_per_sec differs");
}

/* Items 8-9: messages in order, required keys, counts, types, key order. */
static void cmp_keys(const json_t *exp, const detail *d)
{
    json_t *dl = json_object_get(exp, "detail_log");
    json_t *msgs = json_object_get(dl, "messages");
    size_t mi = 0;
    for (size_t i = 0; i < d->n; i++) {
        const char *k = d->r[i].key;
        if (strcmp(k, "generic_message") && strcmp(k, "warning_generic_message") &&
            strncmp(k, "error_", 6))
            continue;
        json_t *m = json_array_get(msgs, mi++);
        if (!m || strcmp(json_string_value(json_array_get(m, 0)), k) ||
            !json_equal(json_array_get(m, 1), d->r[i].value))
            bad("message #%zu: %s \"%s\" not expected here", mi - 1, k,
                json_string_value(d->r[i].value));
    }
    if (mi != json_array_size(msgs))
        bad("%zu messages, expected %zu", mi, json_array_size(msgs));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(dl, "required_keys"), i, v)
    {
        if (!first_value(d, json_string_value(v)))
            bad("required key %s missing", json_string_value(v));
    }
    json_t *counts = json_object_get(dl, "key_counts");
    json_array_foreach(json_object_get(dl, "deterministic_count_keys"), i, v)
    {
        const char *k = json_string_value(v);
        if ((json_int_t)count_key(d, k) != json_integer_value(json_object_get(counts, k)))
            bad("%s logged %zu times, expected %lld", k, count_key(d, k),
                (long long)json_integer_value(json_object_get(counts, k)));
    }
    const char *k;
    json_object_foreach(json_object_get(dl, "value_types"), k, v)
    {
        json_t *ours = first_value(d, k);
        const char *t = json_string_value(v);
        if (!ours)
            continue;
        bool ok = (!strcmp(t, "string") && json_is_string(ours)) ||
                  (!strcmp(t, "bool") && json_is_boolean(ours)) ||
                  (!strcmp(t, "boolean") && json_is_boolean(ours)) ||
                  ((!strcmp(t, "int") || !strcmp(t, "integer") || !strcmp(t, "float") ||
                    !strcmp(t, "double") || !strcmp(t, "number")) &&
                   (json_num(ours) || json_is_string(ours) /* quoted seed */)) ||
                  ((!strcmp(t, "list") || !strcmp(t, "array")) && json_is_array(ours)) ||
                  ((!strcmp(t, "object") || !strcmp(t, "dict")) && json_is_object(ours));
        if (!ok)
            bad("%s has an incompatible JSON type (expected %s)", k, t);
    }
    /* first occurrences of the expected keys come in the expected order, and
     * no key is logged that the official does not log */
    json_t *order = json_object_get(dl, "keys_in_order");
    json_t *optional = json_object_get(dl, "optional_keys");
    size_t oi = 0;
    for (size_t r = 0; r < d->n; r++) {
        const char *key = d->r[r].key;
        bool first = true;
        for (size_t q = 0; q < r && first; q++)
            first = strcmp(d->r[q].key, key) != 0;
        if (!first)
            continue;
        bool known = false, opt = !strcmp(key, "result_invalid_reason");
        json_array_foreach(order, i, v) known |= !strcmp(json_string_value(v), key);
        json_array_foreach(optional, i, v) opt |= !strcmp(json_string_value(v), key);
        if (!known && !opt) {
            bad("key %s is not in the official log", key);
            continue;
        }
        if (opt)
            continue;
        while (oi < json_array_size(order)) {
            const char *want = json_string_value(json_array_get(order, oi));
            bool want_opt = !strcmp(want, "result_invalid_reason");
            json_array_foreach(optional, i, v) want_opt |= !strcmp(json_string_value(v), want);
            if (!want_opt)
                break;
            oi++;
        }
        if (oi >= json_array_size(order) ||
            strcmp(json_string_value(json_array_get(order, oi)), key)) {
            bad("key %s appears out of the official order", key);
            continue;
        }
        oi++;
    }
}

/* Items 5-6: accuracy-log layout and entries, issue order. */
static void cmp_accuracy(const json_t *exp, const char *out_dir)
{
    size_t len = 0;
    char *text = slurp(out_dir, "mlperf_log_accuracy.json", &len);
    if (!text) {
        bad("no mlperf_log_accuracy.json");
        return;
    }
    json_t *acc = json_object_get(exp, "accuracy_log");
    json_t *order = json_object_get(json_object_get(exp, "issued"), "qsl_idx_by_seq_id");
    bool complete = json_is_true(json_object_get(acc, "complete"));
    size_t want = (size_t)json_integer_value(json_object_get(acc, "entry_count"));
    if (len < 4 || strncmp(text, "[\n", 2) != 0 || strcmp(text + len - 3, "\n]\n") != 0)
        bad("accuracy log does not start with \"[\\n\" and end with \"\\n]\\n\"");
    size_t n = 0, nseq = json_array_size(order);
    unsigned char *seen = calloc(nseq + 1, 1);
    json_t *seq_ids = json_object_get(acc, "seq_ids"), *qsls = json_object_get(acc, "qsl_idx");
    char *line = text + 2;
    while (line && line < text + len - 2) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        unsigned long long seq, qsl;
        char hex[64], tail[8];
        int c = sscanf(line, "{ \"seq_id\" : %llu, \"qsl_idx\" : %llu, \"data\" : \"%63[0-9A-F]\" }%7s",
                       &seq, &qsl, hex, tail);
        bool last = !nl || nl + 1 >= text + len - 2;
        if (c < 3 || (c == 4 && strcmp(tail, ",")) || (c == 3) != last)
            bad("accuracy line %zu has the wrong layout: %.80s", n, line);
        else {
            char want_hex[16];
            snprintf(want_hex, sizeof want_hex, "%02X%02X%02X%02X", (unsigned)(qsl & 255),
                     (unsigned)((qsl >> 8) & 255), (unsigned)((qsl >> 16) & 255),
                     (unsigned)((qsl >> 24) & 255));
            if (strcmp(hex, want_hex))
                bad("seq_id %llu: data %s, expected %s", seq, hex, want_hex);
            if (seq >= nseq || seen[seq]++)
                bad("seq_id %llu out of range or logged twice", seq);
            else if ((json_int_t)qsl != json_integer_value(json_array_get(order, (size_t)seq)))
                bad("seq_id %llu: qsl_idx %llu, expected %lld", seq, qsl,
                    (long long)json_integer_value(json_array_get(order, (size_t)seq)));
        }
        n++;
        line = nl ? nl + 1 : NULL;
    }
    if (n != want)
        bad("%zu accuracy entries, expected %zu", n, want);
    if (complete) {
        for (size_t s = 0; s < nseq && s < want; s++)
            if (!seen[s]) {
                bad("seq_id %zu missing from the complete accuracy log", s);
                break;
            }
    } else {
        size_t i;
        json_t *v;
        json_array_foreach(seq_ids, i, v)
        {
            json_int_t s = json_integer_value(v);
            if (s < 0 || (size_t)s >= nseq || !seen[s])
                bad("sampled seq_id %lld not logged", (long long)s);
            else if (!json_equal(json_array_get(qsls, i), json_array_get(order, (size_t)s)))
                bad("sampled seq_id %lld has the wrong qsl_idx", (long long)s);
        }
    }
    free(seen);
    ib_free(text);
}

/* sut_issued.txt vs issued.qsl_idx_by_seq_id and query_sizes_rle. */
static void cmp_issued(const json_t *exp, const char *out_dir)
{
    char *text = slurp(out_dir, "sut_issued.txt", NULL);
    if (!text) {
        bad("no sut_issued.txt");
        return;
    }
    json_t *iss = json_object_get(exp, "issued");
    json_t *order = json_object_get(iss, "qsl_idx_by_seq_id");
    json_t *rle = json_object_get(iss, "query_sizes_rle");
    size_t seq = 0, calls = 0, ri = 0, run = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t size = 0;
        for (char *p = line; *p;) {
            char *end;
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p)
                break;
            if ((json_int_t)v != json_integer_value(json_array_get(order, seq)))
                bad("sut_issued: sample %zu is %llu, expected %lld", seq, v,
                    (long long)json_integer_value(json_array_get(order, seq)));
            seq++;
            size++;
            p = end;
        }
        json_t *pair = json_array_get(rle, ri);
        if (size != (size_t)json_integer_value(json_array_get(pair, 0)))
            bad("sut_issued: call %zu has %zu samples, expected %lld", calls, size,
                (long long)json_integer_value(json_array_get(pair, 0)));
        if (++run == (size_t)json_integer_value(json_array_get(pair, 1))) {
            ri++;
            run = 0;
        }
        calls++;
        line = nl ? nl + 1 : NULL;
    }
    if (seq != json_array_size(order))
        bad("sut_issued: %zu samples, expected %zu", seq, json_array_size(order));
    if ((json_int_t)calls != json_integer_value(json_object_get(iss, "query_count")))
        bad("sut_issued: %zu calls, expected %lld", calls,
            (long long)json_integer_value(json_object_get(iss, "query_count")));
    ib_free(text);
}

/* Item 11: the summary. */
static bool has_line(const char *text, const char *line)
{
    size_t l = strlen(line);
    for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
        if ((p == text || p[-1] == '\n') && (p[l] == '\n' || p[l] == '\0'))
            return true;
    return false;
}

static void cmp_summary(const json_t *exp, const char *out_dir)
{
    char *text = slurp(out_dir, "mlperf_log_summary.txt", NULL);
    if (!text) {
        bad("no mlperf_log_summary.txt");
        return;
    }
    json_t *s = json_object_get(exp, "summary");
    char line[512];
    static const char *const ids[3][2] = {
        {"SUT name", "SUT name : "}, {"Scenario", "Scenario : "}, {"Mode", "Mode     : "}};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(s, ids[i][0]);
        if (!v)
            continue;
        snprintf(line, sizeof line, "%s%s", ids[i][1], json_string_value(v));
        if (!has_line(text, line))
            bad("summary lacks \"%s\"", line);
    }
    json_t *sps = json_object_get(s, "Scheduled samples per second");
    if (sps && json_is_string(sps)) {
        snprintf(line, sizeof line, "Scheduled samples per second : %s", json_string_value(sps));
        if (!has_line(text, line))
            bad("summary lacks \"%s\"", line);
    }
    bool results = json_is_true(json_object_get(s, "has_results_section"));
    if (results != (strstr(text, "MLPerf Results Summary") != NULL))
        bad("summary results section present: %d, expected %d", !results, results);
    const char *tp = strstr(text, "Test Parameters Used\n================================================\n");
    if (results) {
        if (!tp) {
            bad("summary lacks the Test Parameters Used block");
        } else {
            const char *p = tp + strlen("Test Parameters Used\n") + 49;
            size_t i;
            json_t *v;
            json_array_foreach(json_object_get(s, "test_parameters"), i, v)
            {
                const char *want = json_string_value(v);
                size_t wl = strlen(want);
                if (strncmp(p, want, wl) || p[wl] != '\n') {
                    bad("Test Parameters line %zu: expected \"%s\", got \"%.*s\"", i, want,
                        (int)(strchr(p, '\n') ? strchr(p, '\n') - p : 40), p);
                    break;
                }
                p += wl + 1;
            }
            if (*p != '\n')
                bad("Test Parameters block has extra lines: %.40s", p);
        }
    }
    if (!strstr(text, "\nNo warnings encountered during test.\n") &&
        !strstr(text, " warning encountered. See detailed log.\n") &&
        !strstr(text, " warnings encountered. See detailed log.\n"))
        bad("summary footer: no warnings line");
    if (!strstr(text, "\nNo errors encountered during test.\n") &&
        !strstr(text, " ERROR encountered. See detailed log.\n") &&
        !strstr(text, " ERRORS encountered. See detailed log.\n"))
        bad("summary footer: no errors line");
    ib_free(text);
}

int golden_compare(const char *case_dir, const char *out_dir)
{
    g_bad = 0;
    char path[8192];
    snprintf(path, sizeof path, "%s/expected.json", case_dir);
    char *text = slurp(case_dir, "expected.json", NULL);
    if (!text) {
        bad("%s: cannot read", path);
        return g_bad;
    }
    json_t *exp = parse(text);
    ib_free(text);
    if (!exp) {
        bad("%s: not JSON", path);
        return g_bad;
    }
    detail d;
    load_detail(out_dir, &d);
    cmp_settings(exp, &d);
    cmp_records(exp, &d);
    cmp_keys(exp, &d);
    cmp_accuracy(exp, out_dir);
    cmp_issued(exp, out_dir);
    cmp_summary(exp, out_dir);
    free_detail(&d);
    json_decref(exp);
    return g_bad;
}

int golden_case_dir(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/golden/%s", ib_test_shared_dir(), name);
    return ib_path_is_dir(buf) ? IB_OK : IB_ENOTFOUND;
}

/* ---- the harness contract through the library ------------------------------ */

typedef struct gsut {
    FILE *issued;
    ib_lg_response resp[8192];
    uint8_t payload[8192 * 4];
} gsut;

static void g_issue(void *user, ib_lg_test *t, const ib_lg_sample *s, size_t n)
{
    gsut *g = user;
    for (size_t i = 0; i < n; i++)
        fprintf(g->issued, i ? " %zu" : "%zu", s[i].index);
    fputc('\n', g->issued);
    /* one completion call with one response per sample, in query order
     * (chunked only if a query exceeds the buffer: never in the golden cases) */
    for (size_t off = 0; off < n; off += 8192) {
        size_t m = IB_MIN(n - off, (size_t)8192);
        for (size_t i = 0; i < m; i++) {
            uint32_t v = (uint32_t)s[off + i].index;
            memcpy(g->payload + 4 * i, &v, 4); /* x86-64 and aarch64: little endian */
            g->resp[i] = (ib_lg_response){s[off + i].id, g->payload + 4 * i, 4, 0};
        }
        ib_lg_samples_complete(t, g->resp, m);
    }
}

typedef struct gqsl {
    json_t *calls; /* [["load", [indices...]], ...] */
} gqsl;

static int g_record(gqsl *q, const char *what, const ib_lg_sample_index *idx, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)idx[i]));
    json_array_append_new(q->calls, json_pack("[so]", what, a));
    return IB_OK;
}

static int g_load(void *user, const ib_lg_sample_index *idx, size_t n)
{
    return g_record(user, "load", idx, n);
}

static int g_unload(void *user, const ib_lg_sample_index *idx, size_t n)
{
    return g_record(user, "unload", idx, n);
}

static void apply(ib_lg_settings *s, const char *dir, const char *file, const char *model,
                  const char *scen, enum ib_lg_conf_type type)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    ib_err err;
    ib_err_clear(&err);
    char warn[2048];
    ASSERT_OK_ERR(ib_lg_settings_apply_conf_file(s, path, model, scen, type, NULL, warn,
                                                 sizeof warn, &err),
                  &err);
}

static void run_golden_lib(const char *name)
{
    char dir[4096];
    if (golden_case_dir(name, dir, sizeof dir) != IB_OK)
        TEST_SKIP("../shared/golden is not available");
    char *cj = slurp(dir, "case.json", NULL);
    ASSERT_NOT_NULL(cj);
    json_t *c = parse(cj);
    ib_free(cj);
    ASSERT_NOT_NULL(c);
    const char *model = json_string_value(json_object_get(c, "model"));
    enum ib_lg_scenario scen;
    enum ib_lg_mode mode;
    enum ib_lg_rules rules = IB_LG_RULES_CURRENT;
    ASSERT_OK(ib_lg_scenario_parse(json_string_value(json_object_get(c, "scenario")), &scen));
    ASSERT_OK(ib_lg_mode_parse(json_string_value(json_object_get(c, "mode")), &mode));
    if (json_object_get(c, "rules"))
        ASSERT_OK(ib_lg_rules_parse(json_string_value(json_object_get(c, "rules")), &rules));
    json_t *q = json_object_get(c, "qsl");
    size_t total = (size_t)json_integer_value(json_object_get(q, "total_sample_count"));
    size_t perf = (size_t)json_integer_value(json_object_get(q, "performance_sample_count"));

    /* settings procedure of the golden README */
    ib_lg_settings s;
    ib_lg_settings_defaults_rules(&s, rules);
    s.scenario = scen;
    s.mode = mode;
    const char *sname = ib_lg_scenario_name(scen);
    apply(&s, dir, "mlperf.conf", model, sname, IB_LG_CONF_RULES);
    apply(&s, dir, "user.conf", model, sname, IB_LG_CONF_USER);
    char audit[8192];
    snprintf(audit, sizeof audit, "%s/audit.config", dir);
    bool has_audit = ib_path_exists(audit);
    if (has_audit)
        apply(&s, dir, "audit.config", "*", sname, IB_LG_CONF_AUDIT);

    ib_lg_log_settings log;
    ib_lg_log_settings_defaults(&log);
    log.outdir = "out";
    ib_lg_options opts;
    ib_lg_options_defaults(&opts);
    opts.audit_config_applied = has_audit ? audit : NULL;
    opts.sut_timeout_ms = 20000;
    ASSERT_OK(ib_mkdirs("out", NULL));
    static gsut g;
    g.issued = fopen("out/sut_issued.txt", "w");
    ASSERT_NOT_NULL(g.issued);
    gqsl gq = {json_array()};
    ib_lg_sut sut = {&g, "NullSUT", g_issue, NULL};
    ib_lg_qsl qsl = {&gq, "NullQSL", total, perf, g_load, g_unload};
    ib_lg_test *t = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_lg_test_create(&s, &log, &opts, &t, &err), &err);
    ib_lg_result res;
    ASSERT_OK_ERR(ib_lg_test_run(t, &sut, &qsl, &res, &err), &err);
    ib_lg_test_destroy(t);
    fclose(g.issued);

    int n = golden_compare(dir, "out");
    /* the QSL saw the expected load/unload sequence with the logged sets */
    char *et = slurp(dir, "expected.json", NULL);
    json_t *exp = parse(et);
    ib_free(et);
    json_t *calls = json_object_get(exp, "qsl_calls");
    json_t *sets = json_object_get(exp, "loaded_qsl_sets");
    ASSERT_UINT_EQ(json_array_size(gq.calls), json_array_size(calls));
    for (size_t i = 0; i < json_array_size(calls); i++) {
        json_t *want = json_array_get(calls, i), *got = json_array_get(gq.calls, i);
        ASSERT_STR_EQ(json_string_value(json_array_get(got, 0)),
                      json_string_value(json_array_get(want, 0)));
        size_t si = (size_t)json_integer_value(json_array_get(want, 1));
        ASSERT_TRUE(json_equal(json_array_get(got, 1), json_array_get(sets, si)));
    }
    ASSERT_INT_EQ(res.accuracy_log_entries,
                  json_integer_value(json_object_get(json_object_get(exp, "accuracy_log"),
                                                     "entry_count")));
    ASSERT_INT_EQ(res.num_errors, 0);
    json_decref(exp);
    json_decref(gq.calls);
    json_decref(c);
    ASSERT_INT_EQ(n, 0);
}

TEST(loadgen_logs_golden_01_offline_perf_p1000)
{
    run_golden_lib("01_offline_perf_p1000");
}
TEST(loadgen_logs_golden_02_offline_accuracy_p999)
{
    run_golden_lib("02_offline_accuracy_p999");
}
TEST(loadgen_logs_golden_03_server_resnet50_v61)
{
    run_golden_lib("03_server_resnet50_v61");
}
TEST(loadgen_logs_golden_04_server_v11seeds_p777)
{
    run_golden_lib("04_server_v11seeds_p777");
}
TEST(loadgen_logs_golden_05_singlestream_minq2500_p1000)
{
    run_golden_lib("05_singlestream_minq2500_p1000");
}
TEST(loadgen_logs_golden_06_multistream_spq8)
{
    run_golden_lib("06_multistream_spq8");
}
TEST(loadgen_logs_golden_07_server_fisher_yates_p70000)
{
    run_golden_lib("07_server_fisher_yates_p70000");
}
TEST(loadgen_logs_golden_08_server_test01_sampling)
{
    run_golden_lib("08_server_test01_sampling");
}
TEST(loadgen_logs_golden_09_singlestream_test04_same)
{
    run_golden_lib("09_singlestream_test04_same");
}
TEST(loadgen_logs_golden_10_server_issue_unique)
{
    run_golden_lib("10_server_issue_unique");
}
TEST(loadgen_logs_golden_11_server_bert99_model_keys)
{
    run_golden_lib("11_server_bert99_model_keys");
}
TEST(loadgen_logs_golden_v11_01_offline_perf_p1000)
{
    run_golden_lib("v11_01_offline_perf_p1000");
}
TEST(loadgen_logs_golden_v11_02_offline_accuracy_p875)
{
    run_golden_lib("v11_02_offline_accuracy_p875");
}
TEST(loadgen_logs_golden_v11_03_server_resnet50_v11_official)
{
    run_golden_lib("v11_03_server_resnet50_v11_official");
}
TEST(loadgen_logs_golden_v11_04_singlestream_minq1500_p1001)
{
    run_golden_lib("v11_04_singlestream_minq1500_p1001");
}
TEST(loadgen_logs_golden_v11_05_multistream_v11seeds_spq6)
{
    run_golden_lib("v11_05_multistream_v11seeds_spq6");
}

/* The comparator itself must catch a wrong file (a test that cannot fail
 * would prove nothing): corrupt one byte of each kind and count mismatches. */
TEST(loadgen_logs_golden_compare_detects_changes)
{
    run_golden_lib("09_singlestream_test04_same");
    char dir[4096];
    ASSERT_OK(golden_case_dir("09_singlestream_test04_same", dir, sizeof dir));
    ASSERT_INT_EQ(golden_compare(dir, "out"), 0);
    /* a changed sample in sut_issued.txt */
    ASSERT_INT_EQ(ib_test_system("sed -i '1s/^[0-9]*/999999/' out/sut_issued.txt"), 0);
    ASSERT_TRUE(golden_compare(dir, "out") > 0);
    ASSERT_INT_EQ(ib_test_system("sed -i '1s/^999999/1/' out/sut_issued.txt"), 0);
    /* a changed seed value */
    ASSERT_INT_EQ(ib_test_system("sed -i 's/\"requested_qsl_rng_seed\", \"value\": 1/\"requested_qsl_rng_seed\", \"value\": 2/' out/mlperf_log_detail.txt"), 0);
    ASSERT_TRUE(golden_compare(dir, "out") > 0);
}
