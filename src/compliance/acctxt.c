/*
 * acctxt.c - accuracy.txt metric and hash extraction (checker check_accuracy_dir, the
 * ACC_PATTERN table; truncate_accuracy_log.py writes "hash=<sha256>").
 *
 * The Python patterns are translated to POSIX extended regular expressions (regex.h); a
 * line is matched without its '\n', which is what Python's re.match plus '$' sees.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/acctxt.h"

int ib_acctxt_parse(const char *text, size_t len, const ib_rules *r, enum ib_acc_metric m,
                    ib_acctxt *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    int group = 1;
    const char *pat = ib_acc_metric_pattern(r, m, &group);
    regex_t re_val, re_hash;
    bool have_val = false;
    if (pat) {
        if (regcomp(&re_val, pat, REG_EXTENDED) != 0)
            return ib_err_set(err, IB_EINVAL, "internal: bad accuracy pattern %s", pat);
        have_val = true;
    }
    if (regcomp(&re_hash, "^hash=([A-Za-z0-9_]+)$", REG_EXTENDED) != 0) {
        if (have_val)
            regfree(&re_val);
        return ib_err_set(err, IB_EINVAL, "internal: bad hash pattern");
    }
    char *line = ib_malloc(len + 1);
    if (!line) {
        if (have_val)
            regfree(&re_val);
        regfree(&re_hash);
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    size_t pos = 0, lineno = 0;
    while (pos < len) {
        const char *ls = text + pos;
        const char *nl = memchr(ls, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - ls) : len - pos;
        pos += ll + (nl ? 1 : 0);
        lineno++;
        memcpy(line, ls, ll);
        line[ll] = '\0';
        if (strlen(line) != ll)
            continue; /* a NUL byte: no pattern can match this line as text */
        regmatch_t mt[3];
        if (have_val && regexec(&re_val, line, 3, mt, 0) == 0 && mt[group].rm_so >= 0) {
            size_t n = (size_t)(mt[group].rm_eo - mt[group].rm_so);
            if (n >= sizeof out->value_text)
                n = sizeof out->value_text - 1;
            memcpy(out->value_text, line + mt[group].rm_so, n);
            out->value_text[n] = '\0';
            char *end;
            out->value = strtod(out->value_text, &end);
            out->bad_number = *end != '\0' || end == out->value_text;
            out->has_value = true;
            out->value_line = lineno;
        }
        if (regexec(&re_hash, line, 2, mt, 0) == 0) {
            size_t n = (size_t)(mt[1].rm_eo - mt[1].rm_so);
            if (n >= sizeof out->hash)
                n = sizeof out->hash - 1;
            memcpy(out->hash, line + mt[1].rm_so, n);
            out->hash[n] = '\0';
            out->has_hash = true;
            out->hash_line = lineno;
        }
        if (out->has_hash && out->has_value)
            break;
    }
    ib_free(line);
    if (have_val)
        regfree(&re_val);
    regfree(&re_hash);
    return IB_OK;
}

int ib_acctxt_load(const char *path, const ib_rules *r, enum ib_acc_metric m, ib_acctxt *out,
                   ib_err *err)
{
    char *buf;
    size_t n;
    memset(out, 0, sizeof *out);
    int rc = ib_file_read_all(path, (size_t)64 << 20, &buf, &n, err);
    if (rc)
        return rc;
    rc = ib_acctxt_parse(buf, n, r, m, out, err);
    ib_free(buf);
    return rc;
}
