/*
 * accuracy.c - accuracy.txt parsing with POSIX extended regular expressions that
 * mirror the submission checker's ACC_PATTERN table (acc, AUC, mAP, F1, WER, DICE,
 * ROUGE, CLIP/FID, GSM8K, MBXP, BLEU). Only the metric value is extracted; checking
 * it against the accuracy target is the checker's job (src/compliance).
 */
#include "report/accuracy.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "report/rutil.h"

typedef struct acc_pattern {
    const char *metric;
    const char *unit;
    const char *regex; /* group 1 is the value */
} acc_pattern;

/* Order matters for unknown benchmarks: the most specific formats first. */
static const acc_pattern k_patterns[] = {
    {"F1", "",
     "^\\{[\"']exact_match[\"']:[[:space:]]*[0-9.]+,[[:space:]]*[\"']f1[\"']:[[:space:]]*([0-9.]+)"
     "\\}"},
    {"WER-accuracy", "%", "Word Error Rate:.*, accuracy=([0-9.]+)%"},
    {"DICE", "", "Accuracy:[[:space:]]*mean[[:space:]]*=[[:space:]]*([0-9.]+)"},
    {"AUC", "%", "^AUC=([0-9.]+)"},
    {"mAP", "%", "(mAP=|'Total':[[:space:]]*)([0-9.]+)"},
    {"acc", "%", "^(\\{\"accuracy\"[\": ]*|accuracy=)([0-9.]+)"},
    {"ROUGE1", "", "'rouge1':[[:space:]]+'?([0-9.]+)"},
    {"CLIP_SCORE", "", "'CLIP_SCORE':[[:space:]]+'?([0-9.]+)"},
    {"FID_SCORE", "", "'FID_SCORE':[[:space:]]+'?([0-9.]+)"},
    {"gsm8k", "", "'gsm8k':[[:space:]]([0-9.]+)"},
    {"mbxp", "", "'mbxp':[[:space:]]([0-9.]+)"},
    {"BLEU", "", "^BLEU:[[:space:]]*([0-9.]+)"},
};

/* The benchmark's primary metric (benchmarks.md §1, checker accuracy-target). */
static const char *metric_for(const char *b)
{
    if (!b) return NULL;
    if (ib_rpt_starts_with(b, "resnet") || ib_rpt_starts_with(b, "rgat") ||
        ib_rpt_starts_with(b, "mobilenet") || ib_rpt_starts_with(b, "efficientnet"))
        return "acc";
    if (ib_rpt_starts_with(b, "ssd") || ib_rpt_starts_with(b, "retinanet")) return "mAP";
    if (ib_rpt_starts_with(b, "bert")) return "F1";
    if (ib_rpt_starts_with(b, "dlrm")) return "AUC";
    if (ib_rpt_starts_with(b, "rnnt")) return "WER-accuracy";
    if (ib_rpt_starts_with(b, "3d-unet")) return "DICE";
    if (ib_rpt_starts_with(b, "gptj") || ib_rpt_starts_with(b, "llama") ||
        ib_rpt_starts_with(b, "mixtral"))
        return "ROUGE1";
    if (ib_rpt_starts_with(b, "stable-diffusion")) return "CLIP_SCORE";
    return NULL;
}

/* Match one pattern against every line; the last match wins (as the checker's loop). */
static bool match_pattern(const acc_pattern *pt, const char *text, size_t len, double *value)
{
    regex_t re;
    if (regcomp(&re, pt->regex, REG_EXTENDED | REG_NEWLINE) != 0) return false;
    bool found = false;
    char line[4096];
    size_t pos = 0;
    while (pos < len) {
        const char *p = text + pos;
        const char *nl = memchr(p, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - p) : len - pos;
        pos += n + (nl ? 1 : 0);
        ib_rpt_strlcpy(line, sizeof line, p, n);
        regmatch_t m[3];
        if (regexec(&re, line, 3, m, 0) != 0) continue;
        /* the value is the last group that matched */
        int g = (m[2].rm_so >= 0) ? 2 : 1;
        if (m[g].rm_so < 0) continue;
        char num[64];
        ib_rpt_strlcpy(num, sizeof num, line + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
        double v;
        if (ib_rpt_parse_double(num, &v)) {
            *value = v;
            found = true;
        }
    }
    regfree(&re);
    return found;
}

/*
 * The truncate_accuracy_log.py step appends "hash=<sha256 of the full log>"; the checker
 * requires it, so its presence is reported (not enforced here).
 */
static bool has_hash_line(const char *text, size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        const char *p = text + pos;
        const char *nl = memchr(p, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - p) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n > 5 && !memcmp(p, "hash=", 5)) return true;
    }
    return false;
}

/*
 * Only the benchmark's own metric is accepted when the benchmark is known: a line of
 * another format in the same file (e.g. an AUC line in a ResNet file) is ignored.
 */
int ib_rpt_accuracy_parse(const char *text, size_t len, const char *benchmark, const char *name,
                          ib_rpt_accuracy *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    out->value = IB_RPT_NAN;
    if (!name) name = "accuracy.txt";
    if (!text) len = 0;
    const char *want = metric_for(benchmark);
    for (size_t i = 0; i < IB_ARRAY_LEN(k_patterns); i++) {
        const acc_pattern *pt = &k_patterns[i];
        if (want && strcmp(want, pt->metric) != 0) continue;
        double v;
        if (match_pattern(pt, text ? text : "", len, &v)) {
            out->metric = pt->metric;
            out->unit = pt->unit;
            out->value = v;
            out->has_hash = has_hash_line(text, len);
            return IB_OK;
        }
    }
    return ib_err_set(err, IB_ENOTFOUND, "%s: no %s accuracy line found%s%s", name,
                      want ? want : "recognised", benchmark ? " for " : "",
                      benchmark ? benchmark : "");
}

/* The accuracy run sits next to the performance run: <Scenario>/accuracy/accuracy.txt. */
int ib_rpt_accuracy_load(const char *scenario_dir, const char *benchmark, ib_rpt_accuracy *out,
                         ib_err *err)
{
    char path[4096];
    memset(out, 0, sizeof *out);
    out->value = IB_RPT_NAN;
    if (snprintf(path, sizeof path, "%s/accuracy/accuracy.txt", scenario_dir) >= (int)sizeof path)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", scenario_dir);
    if (!ib_path_exists(path)) return ib_err_set(err, IB_ENOTFOUND, "%s: missing", path);
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(path, (size_t)64 << 20, &text, &len, err);
    if (rc) return rc;
    rc = ib_rpt_accuracy_parse(text, len, benchmark, path, out, err);
    ib_free(text);
    return rc;
}
